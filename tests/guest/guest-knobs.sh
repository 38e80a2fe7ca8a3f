# Guest script (boot 1): mount the cgroup v1 memory hierarchy and use every
# knob of the memcg v1 deprecation series and every pre-existing warning,
# each several times, from a named process in its own cgroup, with a
# "TWILIGHT-STEP <name>" marker record in /dev/kmsg after each step. Then
# export the workload log and a dump of /dev/kmsg; the host checks them
# (tests/guest/memcg-v1-deprecation.sh).
. /twilight/lib.sh
N=3
M=/sys/fs/cgroup/memory
LOG=/tmp/workload.log

mkdir -p $M
mount -t cgroup -o memory memory $M || { echo "GUEST-FAIL: cannot mount the v1 memory hierarchy"; exit 10; }
twl_kmsg_mark "TWILIGHT-STEP begin"

# step NAME ACTION FILE [ARG]: run twl-workload N times in cgroup NAME as
# process twl-NAME, marker after it. Its exit status is checked on the host
# from the log (use_hierarchy=0 fails by design).
step() {
	name=$1
	shift
	twl-workload -c "$M/$name" -N "twl-$name" -n $N -m "TWILIGHT-STEP $name" "$@" | tee -a $LOG
}
# quiet NAME ACTION FILE [ARG]: like step, without its own marker (several
# of these share the next marker).
quiet() {
	name=$1
	shift
	twl-workload -c "$M/$name" -N "twl-$name" -n $N "$@" | tee -a $LOG
}

# Knobs the series adds a warning to.
step tcp write memory.kmem.tcp.limit_in_bytes 104857600
step soft_limit write memory.soft_limit_in_bytes 67108864
step oom_event event memory.oom_control
step oom_write write memory.oom_control 0
step pressure event memory.pressure_level low
step swappiness write memory.swappiness 30
# Knobs warned about before the series (in 6.1.192 already).
step kmem_limit write memory.kmem.limit_in_bytes 104857600
step move_charge write memory.move_charge_at_immigrate 1
step use_hier write memory.use_hierarchy 0
# Deprecated in the documentation, but no warning upstream: must print none.
step usage_event event memory.usage_in_bytes 52428800
step memsw_event event memory.memsw.usage_in_bytes 52428800
step memsw_limit write memory.memsw.limit_in_bytes -1
# force_empty on a cgroup the writer is not in (-s), else it reclaims itself.
mkdir -p $M/force_empty
twl-workload -s -c "$M/force_empty" -N twl-force_empty -n $N \
	-m "TWILIGHT-STEP force_empty" write memory.force_empty 0 | tee -a $LOG
for f in memory.kmem.tcp.usage_in_bytes memory.kmem.tcp.failcnt \
	memory.kmem.tcp.max_usage_in_bytes memory.kmem.usage_in_bytes \
	memory.kmem.failcnt memory.kmem.max_usage_in_bytes memory.kmem.slabinfo \
	memory.memsw.usage_in_bytes memory.memsw.failcnt \
	memory.memsw.max_usage_in_bytes memory.oom_control \
	memory.soft_limit_in_bytes memory.swappiness memory.use_hierarchy \
	memory.move_charge_at_immigrate memory.kmem.tcp.limit_in_bytes; do
	quiet reads read $f
done
twl_kmsg_mark "TWILIGHT-STEP reads"
# The v1 controller's own knob (memcg_v1.interface, counted but never
# warned about), for contrast: no warning.
step limit write memory.limit_in_bytes 209715200
# Second round of the warned knobs: pr_*_once, so nothing new may appear.
step tcp2 write memory.kmem.tcp.limit_in_bytes 104857600
step soft_limit2 write memory.soft_limit_in_bytes 67108864
step oom_event2 event memory.oom_control
step oom_write2 write memory.oom_control 0
step pressure2 event memory.pressure_level medium
step swappiness2 write memory.swappiness 40
twl_kmsg_mark "TWILIGHT-STEP end"

twl-workload kmsg-dump >/tmp/kmsg.txt || { echo "GUEST-FAIL: kmsg dump"; exit 11; }
twl_export workload.log $LOG
twl_export kmsg.txt /tmp/kmsg.txt
exit 0
