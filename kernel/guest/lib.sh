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
