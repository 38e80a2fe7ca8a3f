#!/bin/sh
# In-guest part of bench/agent-bpf/run: cgroup write cost with the usage
# counters attached and detached, alternating, ROUNDS rounds of COUNT writes
# per file; prints one "run" line per measurement and the loader's memory.
. /twilight/lib.sh
COUNT=${COUNT:-100000}
ROUNDS=${ROUNDS:-5}
M=/sys/fs/cgroup/memory
U=/sys/fs/cgroup/unified
P=/sys/fs/bpf/twilight/v2

fail() {
	echo "BENCH-FAIL: $*"
	exit 3
}

grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf || fail "mount bpffs"
mkdir -p $M $U
mount -t cgroup -o memory memory $M || fail "mount v1 memory"
mount -t cgroup2 none $U || fail "mount cgroup2"
mkdir -p $M/bench $U/bench || fail "mkdir bench cgroups"

# The loader attaches and pins everything once (its RssAnon is the figure
# for the 8 MiB target); killed, it leaves the links pinned, and
# twl-bpf-bench-toggle takes them over: it detaches them and re-attaches
# their programs around each "on" run (one syscall, see bench_toggle.c).
twl-bpf-dump --hold >/tmp/attach.json 2>/tmp/attach.err &
HOLD=$!
i=0
while [ ! -s /tmp/attach.json ] && [ $i -lt 300 ]; do
	kill -0 $HOLD 2>/dev/null || fail "loader exited: $(cat /tmp/attach.err)"
	sleep 1
	i=$((i + 1))
done
grep -q '"state":"unavailable"' /tmp/attach.json && fail "a probe is unavailable: $(cat /tmp/attach.json)"
RSS=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$HOLD/status)
echo "rss_anon_kb=$RSS vm_rss_kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$HOLD/status)"
kill -9 $HOLD
wait $HOLD 2>/dev/null

# Every pin that is not a map is a link (whatever this build's programs are).
LINKS=""
for l in $P/twl_*; do
	case ${l##*/} in
	twl_usage | twl_paths | twl_files | twl_cft | twl_overflow | twl_meta | twl_scratch) ;;
	*) LINKS="$LINKS${LINKS:+,}${l##*/}" ;;
	esac
done
[ -n "$LINKS" ] || fail "no link pinned under $P"
echo "links=$LINKS"

# fentry/fexit programs need the JIT (trampolines are JIT code); say so, so
# the figures are known to measure JIT code, not the interpreter.
jit=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null) || fail "no /proc/sys/net/core/bpf_jit_enable"
echo "bpf_jit_enable=$jit"
echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
[ "$jit" != 0 ] || fail "the guest kernel runs BPF in the interpreter (bpf_jit_enable=0)"
echo "=== emulated guest (QEMU TCG): $ROUNDS rounds of $COUNT writes per file and mode"
twl-bpf-bench-toggle $P "$LINKS" "$ROUNDS" "$COUNT" \
	v1_knob=$M/bench/memory.soft_limit_in_bytes=67108864 \
	v1_core=$M/bench/notify_on_release=0 \
	v2_file=$U/bench/cgroup.max.depth=5 || fail "twl-bpf-bench-toggle failed"
exit 0
