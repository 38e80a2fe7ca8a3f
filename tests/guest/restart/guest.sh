# Guest script of the agent restart test (runs as /twilight/script under
# kernel/guest-run, busybox sh; tests/guest/restart/run.sh checks what it
# prints and exports).
#
# Kills twilight-agent (BPF on, its pins in bpffs kept across runs, as on
# a host) with SIGKILL at points of its start-up and requires the next
# start to log "started:" within DEADLINE seconds. One round, from no pins
# at all:
#   loading    the maps are pinned, no link yet (programs being verified)
#   attaching  this start pinned some links but not all (the count moves
#              with the round; twl-killat kills at once, as a shell
#              polls too slowly to land between two links)
#   running    after "started:" (as the fleet fault test kills it), twice
#   early      0 to 0.9 s after exec (moving with the round): in the
#              identity, state, kernel log or BTF steps, or, with every
#              link pinned and reused, already past them
# then a last start that must report: started, a batch spooled, exit 0 on
# SIGTERM, and BPF health with every probe attached. Each start waits for
# the point the next kill needs, so a start that hangs fails the wait it
# is in. A start that misses its deadline is left running and described:
# its /proc stack and wchan (every thread), state, the last lines of its
# log (debug level: libbpf's steps) and the pin directory; then the test
# fails.
#
# /etc/twilight/restart.env: ROUNDS, DEADLINE (seconds; a hang detector,
# far above a start on a loaded host).
# Console lines: RESTART-ROUND <r> begin|ok, RESTART-KILL <point> <what
# was pinned>, RESTART-START <n> <seconds>, RESTART-FAIL <reason>,
# RESTART-DONE.
. /twilight/lib.sh
. /etc/twilight/restart.env
: "${ROUNDS:=3}" "${DEADLINE:=300}"
PIN=/sys/fs/bpf/twilight/v2
MAPS=" twl_usage twl_paths twl_files twl_cft twl_overflow twl_meta twl_scratch "
LOG=/tmp/agent.log
SPOOL=/var/spool/twilight-agent
M=/sys/fs/cgroup/memory
AGENT=""
STARTS=0
BEFORE=0

fail() {
	echo "RESTART-FAIL $*"
	[ -z "$AGENT" ] || ! alive || twl_describe "$AGENT" $LOG $PIN
	twl_export agent.log $LOG
	exit 3
}

# links: how many links are pinned.
links() {
	n=0
	for f in $(ls $PIN 2>/dev/null); do
		case "$MAPS" in *" $f "*) ;; *) n=$((n + 1)) ;; esac
	done
	echo $n
}

# started: this start logged "started:" (killed starts log none, so
# count past the lines there were when it began).
started() {
	[ "$(grep -c ': started: ' $LOG)" -gt "$BEFORE" ]
}

# alive: the current start still runs (a child that exited stays a zombie
# until waited for, and kill -0 still reaches a zombie).
alive() {
	[ -e /proc/$AGENT/status ] && ! grep -q '^State:.*Z' /proc/$AGENT/status
}

start() {
	BEFORE=$(grep -c ': started: ' $LOG)
	echo "=== start $((STARTS + 1))" >>$LOG # where describe's log tail begins
	twilight-agent -c /etc/twilight/agent.conf >>$LOG 2>&1 &
	AGENT=$!
	STARTS=$((STARTS + 1))
	T0=$(cut -d' ' -f1 /proc/uptime)
}

# wait_for WHAT CONDITION...: poll CONDITION until it holds; the agent
# must stay alive and get there within DEADLINE.
wait_for() {
	what=$1
	shift
	i=0
	while ! "$@"; do
		alive || fail "start $STARTS exited before '$what' (status: see the log)"
		i=$((i + 1))
		[ $i -le $((DEADLINE * 10)) ] || fail "start $STARTS did not reach '$what' within $DEADLINE s"
		usleep 100000
	done
}

kill9() {
	kill -9 "$AGENT"
	wait "$AGENT" 2>/dev/null
	echo "RESTART-KILL $1 start=$STARTS links=$(links) maps=$([ -e $PIN/twl_usage ] && echo pinned || echo none) after=$(awk -v t="$T0" '{ printf "%.1f", $1 - t }' /proc/uptime)s"
	AGENT=""
}

report_start() {
	echo "RESTART-START $STARTS $(awk -v t="$T0" '{ printf "%.1f", $1 - t }' /proc/uptime)"
}

loading() { [ -e $PIN/twl_usage ] && [ "$(links)" = 0 ]; }
never() { false; }

mkdir -p $M $SPOOL /var/lib/twilight-agent
mount -t cgroup -o memory memory $M || fail "mount the v1 memory controller"
twilight-agent -c /etc/twilight/agent.conf --check-config >/tmp/check.log 2>&1 ||
	{ cat /tmp/check.log; fail "agent config rejected"; }
touch $LOG
r=1
while [ $r -le "$ROUNDS" ]; do
	echo "RESTART-ROUND $r begin"
	rm -rf $PIN # no pins: the links go with them
	start
	wait_for loading loading
	kill9 loading
	# 1..10 of the 12 links, moving with the round: the kill may land
	# one link late, and must still leave one of the 12 unpinned
	WANT_LINKS=$(((r * 3) % 10 + 1))
	start
	twl-killat "$AGENT" $PIN "$WANT_LINKS" "$DEADLINE" $MAPS >/tmp/killat.out
	case $? in
	0) ;;
	2) fail "start $STARTS did not pin $WANT_LINKS links within $DEADLINE s" ;;
	3) fail "start $STARTS exited before pinning $WANT_LINKS links (status: see the log)" ;;
	*) fail "twl-killat failed" ;;
	esac
	kill9 attaching
	start
	wait_for started started
	report_start
	kill9 running
	start
	wait_for started started
	report_start
	kill9 running
	start
	usleep $(((r * 3) % 10 * 100000))
	kill9 early
	start
	wait_for started started
	report_start
	echo "RESTART-ROUND $r ok"
	r=$((r + 1))
	[ $r -gt "$ROUNDS" ] || kill9 running
done

# The last start reports like any other: a batch in the spool, health
# with every probe attached, exit 0 on SIGTERM.
kill -HUP "$AGENT" # a census, and a batch with it
i=0
while [ -z "$(ls $SPOOL/*.batch 2>/dev/null)" ]; do
	i=$((i + 1))
	[ $i -le $((DEADLINE * 10)) ] || fail "no batch spooled within $DEADLINE s of the last start"
	usleep 100000
done
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?
AGENT=""
[ $rc = 0 ] || fail "the last agent exited $rc on SIGTERM"
for f in $SPOOL/*.batch; do
	twl_export "batch-$(basename "$f" .batch)" "$f"
done
twl_export agent.log $LOG
echo "RESTART-DONE starts=$STARTS"
exit 0
