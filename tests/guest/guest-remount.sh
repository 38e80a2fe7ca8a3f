# Guest script (boot 2, kernel command line swapaccount=0): the boot-time
# swapaccount warning is already in /dev/kmsg; add a v1 remount that changes
# options (release_agent) on a named hierarchy, with markers around it, and
# export the /dev/kmsg dump.
. /twilight/lib.sh
M=/sys/fs/cgroup/memory
N=/sys/fs/cgroup/twl-named

mkdir -p $M $N
mount -t cgroup -o memory memory $M || { echo "GUEST-FAIL: cannot mount the v1 memory hierarchy"; exit 10; }
mount -t cgroup -o none,name=twl cgroup $N || { echo "GUEST-FAIL: cannot mount a named v1 hierarchy"; exit 10; }
twl_kmsg_mark "TWILIGHT-STEP begin"
mount -o remount,none,name=twl,release_agent=/bin/true $N ||
	{ echo "GUEST-FAIL: remount with release_agent failed"; exit 12; }
twl_kmsg_mark "TWILIGHT-STEP remount"
twl_kmsg_mark "TWILIGHT-STEP end"

twl-workload kmsg-dump >/tmp/kmsg.txt || { echo "GUEST-FAIL: kmsg dump"; exit 11; }
twl_export kmsg.txt /tmp/kmsg.txt
exit 0
