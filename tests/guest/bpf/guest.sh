#!/bin/sh
# Guest script of the BPF usage test (runs as /twilight/script under
# kernel/guest-run; tests/guest/bpf/run.sh checks what it exports).
#
# Phase 0: the previous loader (twl-bpf-dump-v1, map layout v1 pinned under
#          /sys/fs/bpf/twilight/v1) attaches, counts, is killed with -9, and
#          its pinned links count on with no agent.
# Phase A: twl-bpf-dump --hold, this tree's loader (the upgraded "agent"),
#          carries the v1 counts over and unpins v1 (report0 must hold
#          exactly phase 0), then attaches and pins the counters;
#          the workload writes knobs N times from named processes in named
#          cgroups (some keys of phase 0 again); then the dumper is killed
#          with -9.
# Phase B: with no agent running, more writes, reads and eventfd
#          registrations (the pinned links must keep counting).
# Phase C: a new dumper reuses the pinned links and maps (report1 must hold
#          exactly 0 + A + B), more knobs, plus activity that must not count
#          (cgroup v2 files, v1 core files, memory files not in the catalog),
#          final report2 and a privacy run (report3).
# Every counted workload run is logged with the condition the kernel's
# warning has ("all": every use meets it, "none": no use does).
. /twilight/lib.sh
N=5
CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
M=/sys/fs/cgroup/memory
U=/sys/fs/cgroup/unified
NAMED=/sys/fs/cgroup/named
LOG=/tmp/workload.log
OTHER=/tmp/other.log
: >$LOG
: >$OTHER

fail() {
	echo "GUEST-FAIL: $*"
	for f in /tmp/dump*.err; do
		[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 3
}

# run LOGFILE COND WORKLOAD-ARGS...: run the workload once, log its line.
run() {
	log=$1
	cond=$2
	shift 2
	out=$(twl-workload "$@")
	rc=$?
	[ $rc -le 1 ] || fail "twl-workload $* exited $rc"
	line=$(echo "$out" | grep '^workload op=')
	[ -n "$line" ] || fail "twl-workload $* logged nothing"
	echo "$line cond=$cond" >>"$log"
}
step() { run $LOG "$@"; }
other() { run $OTHER none "$@"; }

[ -e /sys/kernel/btf/vmlinux ] || fail "kernel has no /sys/kernel/btf/vmlinux"
if ! grep -q ' /sys/fs/bpf bpf ' /proc/mounts; then
	mount -t bpf bpf /sys/fs/bpf || fail "cannot mount bpffs on /sys/fs/bpf ($(ls -ld /sys/fs/bpf 2>&1))"
fi
mkdir -p $M $U $NAMED
mount -t cgroup -o memory memory $M || fail "mount v1 memory"
mount -t cgroup2 none $U || fail "mount cgroup2"
mount -t cgroup -o none,name=twl none $NAMED || fail "mount v1 named hierarchy"

# --- phase 0: the previous agent (layout v1) ---------------------------------
twl-bpf-dump-v1 --hold >/tmp/reportv1.json 2>/tmp/dumpv1.err &
DUMP=$!
i=0
while [ ! -s /tmp/reportv1.json ] && [ $i -lt 300 ]; do
	kill -0 $DUMP 2>/dev/null || fail "twl-bpf-dump-v1 --hold exited early"
	sleep 1
	i=$((i + 1))
done
[ -s /tmp/reportv1.json ] || fail "twl-bpf-dump-v1 did not report within 300 s"
[ -e /sys/fs/bpf/twilight/v1/twl_usage ] || fail "the previous loader pinned nothing under /sys/fs/bpf/twilight/v1"
step all -c $M/a -n $N -N twl-soft write memory.soft_limit_in_bytes 134217728
step all -c $M/b -n $N -N twl-hier0 write memory.use_hierarchy 0
kill -9 $DUMP
wait $DUMP 2>/dev/null
step none -c $M/a -n $N -N twl-read read memory.soft_limit_in_bytes
step all -c $M/o -n $N -N twl-oldonly write memory.soft_limit_in_bytes 1048576
cp $LOG /tmp/workload0.log

# --- phase A: agent running (upgraded: imports v1) ----------------------------
twl-bpf-dump --hold --verbose >/tmp/report0.json 2>/tmp/dump0.err &
DUMP=$!
i=0
while [ ! -s /tmp/report0.json ] && [ $i -lt 300 ]; do
	kill -0 $DUMP 2>/dev/null || fail "twl-bpf-dump --hold exited early"
	sleep 1
	i=$((i + 1))
done
[ -s /tmp/report0.json ] || fail "twl-bpf-dump did not report within 300 s"
ls /sys/fs/bpf/twilight >/tmp/pins-top.txt
step all -c $M/a -n $N -N twl-soft write memory.soft_limit_in_bytes 67108864
step all -c $M/b -n $N -N twl-hier0 write memory.use_hierarchy 0
step none -c $M/b2 -n $N -N twl-hier1 write memory.use_hierarchy 1
step all -c $M/c -n $N -N twl-swap write memory.swappiness 30
kill -9 $DUMP
wait $DUMP 2>/dev/null
kill -0 $DUMP 2>/dev/null && fail "dumper survived kill -9"
ls /sys/fs/bpf/twilight/v2 >/tmp/pins.txt

# --- phase B: no agent -------------------------------------------------------
step all -c $M/d -n $N -N twl-tcp write memory.kmem.tcp.limit_in_bytes 104857600
step all -c $M/a -n $N -N twl-soft write memory.soft_limit_in_bytes 33554432
step all -c $M/e -n $N -N twl-oom event memory.oom_control
step all -c $M/e -n $N -N twl-press event memory.pressure_level medium
step none -c $M/a -n $N -N twl-read read memory.soft_limit_in_bytes

# --- phase C: restarted agent --------------------------------------------------
twl-bpf-dump >/tmp/report1.json 2>/tmp/dump1.err || fail "twl-bpf-dump after restart failed"
cp $LOG /tmp/workload1.log
step all -c $M/f -n $N -N twl-kmem write memory.kmem.limit_in_bytes 104857600
step all -c $M/g -n $N -N twl-move write memory.move_charge_at_immigrate 0
step all -c $M/h -n $N -N twl-oomw write memory.oom_control 0
step none -c $M/e -n $N -N twl-thresh event memory.usage_in_bytes 1048576
step none -c $M -n $N -N twl-swaproot write memory.swappiness 60
# Nested cgroups, one of them removed before the report: the path captured
# at first use must survive the cgroup. And a docker-style systemd scope.
mkdir -p $M/p/q/r $M/system.slice || fail "mkdir nested cgroups"
step all -c $M/p/q/r -n $N -N twl-deep write memory.soft_limit_in_bytes 16777216
rmdir $M/p/q/r || fail "rmdir $M/p/q/r"
step all -c $M/system.slice/docker-$CID.scope -n $N -N twl-docker write memory.soft_limit_in_bytes 8388608
# uid attribution: a delegated knob (chowned to uid 1000) written and read
# by a process that dropped to uid 1000 after moving into the cgroup.
mkdir -p $M/u || fail "mkdir $M/u"
chown 1000 $M/u/memory.soft_limit_in_bytes || fail "chown $M/u/memory.soft_limit_in_bytes"
step all -c $M/u -u 1000 -n $N -N twl-uid write memory.soft_limit_in_bytes 4194304
step none -c $M/u -u 1000 -n $N -N twl-uidr read memory.soft_limit_in_bytes
grep -q 'comm=twl-uid .*uid=1000 cond=' $LOG || fail "the uid 1000 writer did not run as uid 1000"
if [ -e $M/memory.memsw.usage_in_bytes ]; then
	step none -c $M/i -n $N -N twl-memsw read memory.memsw.usage_in_bytes
fi
# Values written (the usage value summary, checked exactly by check.sh):
# one key gets "  256M\n" (stored: 256 MiB) then -1 (unlimited); "max", the
# v2 spelling, fails on v1 and leaves no value; kmem.limit_in_bytes stores
# nothing, so its values are parsed: 0x10000000 (256 MiB), then 1000 (0
# pages).
step all -c $M/sv -N twl-sv256 -e write memory.soft_limit_in_bytes '\x20\x20256M\n'
step all -c $M/sv -N twl-sv256 write memory.soft_limit_in_bytes -1
step all -c $M/sx -N twl-svmax write memory.soft_limit_in_bytes max
grep -q 'failed=1 errno=EINVAL comm=twl-svmax ' $LOG || fail "writing max to a v1 soft limit did not fail with EINVAL"
step all -c $M/f2 -N twl-kmemv write memory.kmem.limit_in_bytes 0x10000000
step all -c $M/f2 -N twl-kmemv write memory.kmem.limit_in_bytes 1000
# The v1 controller's own files (memcg_v1.interface) count; they never warn.
step none -c $M/j -n $N -N twl-limit write memory.limit_in_bytes 209715200
step none -c $M/j -n $N -N twl-limitr read memory.limit_in_bytes
# Must not count: v1 core files, files of a named hierarchy, v2 files.
other -c $M/k -n $N -N twl-core write notify_on_release 1
other -c $NAMED/l -n $N -N twl-named write notify_on_release 1
other -c $U/v -n $N -N twl-v2 write cgroup.max.depth 5
# Documented semantic change (agent/bpf/README.md): writes are counted on
# the memory controller's handlers, and a write_u64 value that kstrtoull()
# refuses fails in cgroup_file_write() before any handler runs (the kernel
# prints no warning for it either), so it is not counted. It used to be
# counted, as failed, by the probe on cgroup_file_write.
other -c $M/b -n $N -N twl-hierbad write memory.use_hierarchy abc
other -c $U/v -n $N -N twl-v2r read cgroup.procs

twl-bpf-dump >/tmp/report2.json 2>/tmp/dump2.err || fail "final twl-bpf-dump failed"
twl-bpf-dump --privacy-cgroup hash --privacy-comm drop --key guest-secret \
	>/tmp/report3.json 2>/tmp/dump3.err || fail "privacy twl-bpf-dump failed"

for f in workload0.log workload1.log workload.log other.log pins-top.txt dumpv1.err report0.json report1.json report2.json \
	report3.json dump0.err dump1.err dump2.err pins.txt; do
	twl_export $f /tmp/$f
done
exit 0
