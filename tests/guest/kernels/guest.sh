# Guest script of the per-kernel test (runs as /twilight/script under
# kernel/guest-run; tests/guest/kernels/run.sh checks what it exports).
# Booted with swapaccount=0, so the boot-time swapaccount warning is in
# /dev/kmsg before anything runs.
#
# Starts twilight-agent (kmsg, census, BPF counters; no server is
# reachable, so every report stays in its spool), then runs the workload:
# each knob from its own process name in its own cgroup, N times, with a
# "TWILIGHT-STEP <name>" marker record in /dev/kmsg after each step. Every
# call site that warns once is first used in the ways that must stay silent
# (root cgroup, an unparsable or out-of-range value), then in the way that
# warns: a pr_*_once that already fired would prove nothing by staying
# silent. Then SIGHUP (a census with the knobs set), SIGTERM (the agent
# spools what is pending and exits) and the exports: the spooled batches,
# the agent's log, the workload logs and a dump of /dev/kmsg.
#
# Workload log lines carry cond=all|none: whether the kernel's warning
# condition (the catalog's warn_condition) holds for every use of that run
# or for none (tests/guest/usage-expected.awk turns that into
# condition_met). Runs whose writes reach no memory v1 handler go to
# other.log: BPF must not count them.
. /twilight/lib.sh
. /etc/twilight/kernel.env
N=3
M=/sys/fs/cgroup/memory
U=/sys/fs/cgroup/unified
NAMED=/sys/fs/cgroup/twl-named
LOG=/tmp/workload.log
OTHER=/tmp/other.log
SPOOL=/var/spool/twilight-agent
: >$LOG
: >$OTHER
: >/tmp/steps.txt

fail() {
	echo "GUEST-FAIL: $*"
	echo "--- agent log"
	tail -n 40 /tmp/agent.log 2>&1
	exit 3
}

# run LOGFILE COND NAME [-s] [-c DIR] ACTION ARGS...: run twl-workload N
# times as process twl-NAME, marker "TWILIGHT-STEP NAME" after it. With -s
# (act on DIR without moving into it) the log line gets target=<DIR within
# its hierarchy>.
run() {
	log=$1 cond=$2 name=$3 extra=""
	shift 3
	if [ "$1" = -s ]; then
		mkdir -p "$3"
		extra=" target=${3#$M}"
	fi
	out=$(twl-workload -N "twl-$name" -n $N -m "TWILIGHT-STEP $name" "$@")
	rc=$?
	[ $rc -le 1 ] || fail "twl-workload $* exited $rc: $out"
	line=$(echo "$out" | grep '^workload op=')
	[ -n "$line" ] || fail "twl-workload $* logged nothing"
	echo "$line cond=$cond step=$name$extra" >>"$log"
	echo "$name" >>/tmp/steps.txt
}
step() { run $LOG "$@"; }
other() { run $OTHER none "$@"; }
mark() {
	twl_kmsg_mark "TWILIGHT-STEP $1"
	echo "$1" >>/tmp/steps.txt
}

# remount NAME ok|busy OPTIONS: remount the named v1 hierarchy, which must
# succeed or fail with EBUSY (populated), marker after it.
remount() {
	if mount -o "remount,$3" $NAMED 2>/tmp/remount.err; then
		[ "$2" = ok ] || fail "remount $NAMED with $3 succeeded, want EBUSY"
	else
		[ "$2" = busy ] && grep -q 'busy' /tmp/remount.err ||
			fail "remount $NAMED with $3: $(cat /tmp/remount.err)"
	fi
	mark "$1"
}

mkdir -p $M $U $NAMED $SPOOL /var/lib/twilight-agent
if mount -t cgroup -o memory memory $M 2>/tmp/mount-v1.err; then
	V1=1
	echo "v1-memory=mounted" >/tmp/facts.txt
else
	V1=0
	echo "v1-memory=unavailable $(cat /tmp/mount-v1.err)" >/tmp/facts.txt
	rmdir $M
fi
mount -t cgroup2 none $U || fail "mount cgroup2"
mount -t cgroup -o none,name=twl none $NAMED || fail "mount a named v1 hierarchy"
if [ $V1 = 0 ]; then
	echo "+memory" >$U/cgroup.subtree_control || fail "enable memory in cgroup2"
fi
echo "kernel=$(uname -r)" >>/tmp/facts.txt

twilight-agent -c /etc/twilight/agent.conf --check-config >/tmp/check.log 2>&1 ||
	{ cat /tmp/check.log; fail "agent config rejected"; }
touch /tmp/agent.log
twilight-agent -c /etc/twilight/agent.conf >>/tmp/agent.log 2>&1 &
AGENT=$!
i=0
while ! grep -q ': started: ' /tmp/agent.log; do
	kill -0 $AGENT 2>/dev/null || fail "agent exited at start"
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "agent not started after 600 s"
	sleep 0.5
done
echo "uptime-agent-started=$(cut -d' ' -f1 /proc/uptime)" >>/tmp/facts.txt
mark begin

if [ $V1 = 1 ]; then
	# kmem.tcp.limit_in_bytes: root (-EINVAL before the warning), an
	# unparsable value (page_counter_memparse fails first), then the warning.
	step none tcp_root -c $M write memory.kmem.tcp.limit_in_bytes 104857600
	step none tcp_bad -c $M/tcp write memory.kmem.tcp.limit_in_bytes abc
	step all tcp -c $M/tcp write memory.kmem.tcp.limit_in_bytes 104857600
	# soft_limit_in_bytes: an unparsable value is refused first; the root
	# cgroup warns like any other.
	step none soft_bad -c $M/soft write memory.soft_limit_in_bytes abc
	step all soft_root -c $M write memory.soft_limit_in_bytes 67108864
	step all soft_limit -c $M/soft write memory.soft_limit_in_bytes 67108864
	# swappiness: above 200 (-EINVAL first), the root cgroup (sets
	# vm_swappiness, no message), then a child.
	step none swap_big -c $M/swap write memory.swappiness 201
	step none swap_root -c $M write memory.swappiness 30
	step all swappiness -c $M/swap write memory.swappiness 30
	# oom_control: a value kstrtoull() refuses fails in cgroup_file_write()
	# before the handler; then the eventfd registration (its own once-flag)
	# and an invalid value (2: the write warns first, then -EINVAL), and a
	# valid write after both fired.
	other oom_nonnum -c $M/oom write memory.oom_control abc
	step all oom_event -c $M/oom event memory.oom_control
	step all oom_bad -c $M/oom write memory.oom_control 2
	step all oom_write -c $M/oom write memory.oom_control 0
	step all pressure -c $M/press event memory.pressure_level low
	# Warned about before the series.
	step all kmem_limit -c $M/kmem write memory.kmem.limit_in_bytes 104857600
	step all move_charge -c $M/move write memory.move_charge_at_immigrate 1
	step all use_hier -c $M/hier write memory.use_hierarchy 0
	# Deprecated in the documentation, no warning.
	step none usage_event -c $M/thresh event memory.usage_in_bytes 52428800
	step none memsw_limit -c $M/memsw write memory.memsw.limit_in_bytes -1
	step none force_empty -s -c $M/fe write memory.force_empty 0
	step none kmem_read -c $M/reads read memory.kmem.usage_in_bytes
	step none tcp_read -c $M/reads read memory.kmem.tcp.usage_in_bytes
	step none soft_read -c $M/reads read memory.soft_limit_in_bytes
	# The v1 controller's own files (memcg_v1.interface): counted, never
	# warned about one by one.
	step none limit -c $M/lim write memory.limit_in_bytes 209715200
fi
other v2_depth -c $U/web write cgroup.max.depth 5
if [ $V1 = 0 ]; then
	other v2_max -c $U/web write memory.max 209715200
	other v2_press -c $U/web read memory.pressure
fi
# v1 remount: unchanged options print nothing; a release agent (an option
# change) prints every time, not once, and before the check that refuses a
# populated hierarchy (EBUSY).
remount remount_same ok none,name=twl
remount remount ok none,name=twl,release_agent=/bin/true
remount remount2 ok none,name=twl,release_agent=/bin/true
other named -c $NAMED/n write notify_on_release 1
remount remount_busy busy none,name=twl,release_agent=/bin/true
mark end

# A census with the knobs set, then stop: the agent spools what is pending.
sleep 2
kill -HUP $AGENT
sleep 3
kill -TERM $AGENT
i=0
while kill -0 $AGENT 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "agent did not stop within 300 s of SIGTERM"
	sleep 0.5
done
wait $AGENT
echo "agent-exit=$?" >>/tmp/facts.txt
echo "uptime-agent-stopped=$(cut -d' ' -f1 /proc/uptime)" >>/tmp/facts.txt

twl-workload kmsg-dump >/tmp/kmsg.txt || fail "kmsg dump"
ls $SPOOL >/tmp/spool.txt
for f in $SPOOL/*.batch; do
	[ -f "$f" ] && twl_export "batch-$(basename "$f" .batch)" "$f"
done
for f in workload.log other.log steps.txt facts.txt agent.log kmsg.txt spool.txt; do
	twl_export $f /tmp/$f
done
exit 0
