# Helpers for guest scripts (installed as /twilight/lib.sh). Use:
#   . /twilight/lib.sh
# twl_export NAME FILE: print FILE to the serial console between markers,
# base64-encoded; kernel/guest-run --out DIR writes it to DIR/NAME.
twl_export() {
	echo "TWILIGHT-FILE-BEGIN $1"
	base64 <"$2"
	echo "TWILIGHT-FILE-END $1"
}

# twl_kmsg_mark TEXT: write a marker record to the guest's /dev/kmsg.
twl_kmsg_mark() {
	echo "$*" >/dev/kmsg
}

# twl_kmsg_dump FILE: copy every record now in /dev/kmsg to FILE
# (non-blocking read; one record per line, as the kernel formats them).
twl_kmsg_dump() {
	dd if=/dev/kmsg iflag=nonblock bs=8192 2>/dev/null >"$1" || true
}

# twl_describe PID LOG [DIR...]: what a process that seems to hang is
# doing, on the console: its state and signal masks, every thread's wchan,
# syscall and kernel stack, a listing of each DIR (its pins, spool or
# state) and the last 60 lines of LOG.
twl_describe() {
	pid=$1
	log=$2
	shift 2
	echo "--- process $pid ($(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null))"
	grep -E '^(State|Threads|SigPnd|ShdPnd|SigBlk)' /proc/$pid/status 2>&1
	for t in /proc/$pid/task/*; do
		echo "--- thread ${t##*/}: wchan $(cat $t/wchan 2>&1), syscall $(cat $t/syscall 2>&1)"
		cat $t/stack 2>&1
	done
	for d in "$@"; do
		echo "--- $d"
		ls -la "$d" 2>&1
	done
	echo "--- $log (last 60 lines)"
	tail -n 60 "$log" 2>&1
}
