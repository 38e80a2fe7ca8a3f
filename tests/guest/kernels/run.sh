#!/bin/bash
# tests/guest/kernels/run.sh KERNEL OUTDIR
#
# One guest boot of KERNEL (a name kernel/kernels knows: patched-6.1,
# unpatched-6.1, debian-6.1, debian-6.12, upstream-6.12) running
# twilight-agent with BPF next to the workload (guest.sh), then the checks
# (check.sh): what the kernel printed, what the agent made of it, what BPF
# counted, what the census and health say. The guest programs come from a
# Release build without sanitizers (the guest has no libasan), shared with
# the fleet tests: $FLEET_BUILD or $TWILIGHT_BINARY_DIR/fleet-rel.
set -uo pipefail

KERNEL=${1:?usage: run.sh KERNEL OUTDIR}
OUT=${2:?usage: run.sh KERNEL OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
# shellcheck source=tests/guest/offline-agent.sh
. "$HERE/../offline-agent.sh"
BUILD=${FLEET_BUILD:-${TWILIGHT_BINARY_DIR:-$OUT}/fleet-rel}
# The functions the agent's probes attach to, the handler 6.12 stable gave
# soft_limit_in_bytes, and the v1 event and write entry points: which of
# them the kernel's BTF has (read here from its vmlinux, loading nothing).
BTF_FUNCS="mem_cgroup_write|mem_cgroup_reset|mem_cgroup_force_empty_write|mem_cgroup_hierarchy_write|mem_cgroup_swappiness_write|mem_cgroup_move_charge_write|mem_cgroup_oom_control_write|mem_cgroup_soft_limit_write|memcg_write_event_control|cgroup_file_open|cgroup_file_write|mem_cgroup_oom_register_event|vmpressure_register_event|mem_cgroup_usage_register_event|memsw_cgroup_usage_register_event"

fail() {
	echo "FAIL: $KERNEL: $*" >&2
	exit 1
}

for tool in qemu-system-x86_64 cmake jq openssl bpftool; do
	command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] ||
		fail "$tool not found: run scripts/install-deps"
done
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
rm -rf "$OUT"
mkdir -p "$OUT/etc"

echo "=== $KERNEL: guest programs (Release, no sanitizers) in $BUILD"
{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTWILIGHT_SANITIZE=OFF &&
	cmake --build "$BUILD" -j "${JOBS:-2}" --target twilight-agent twl-workload; } \
	>"$OUT/build.log" 2>&1 ||
	{ tail -n 30 "$OUT/build.log" >&2; fail "building the guest programs failed (log $OUT/build.log)"; }
AGENT=$BUILD/agent/twilight-agent
WORKLOAD=$BUILD/tests/guest/twl-workload
file -L "$WORKLOAD" | grep -q 'statically linked' || fail "$WORKLOAD is not static"

echo "=== $KERNEL: kernel/kernels"
"$SRC/kernel/kernels" "$KERNEL" >"$OUT/kernel.txt" || fail "kernel/kernels $KERNEL failed"
read -r name kernel modules vmlinux <"$OUT/kernel.txt"
[ "$name" = "$KERNEL" ] && [ -f "$kernel" ] && [ -f "$vmlinux" ] ||
	fail "kernel/kernels printed '$(cat "$OUT/kernel.txt")'"
mkdir -p "$OUT/guest"
"$BPFTOOL" btf dump file "$vmlinux" >"$OUT/btf.txt" 2>"$OUT/btf.err" ||
	fail "bpftool btf dump file $vmlinux failed: $(cat "$OUT/btf.err")"
sed -n "s/^\[[0-9]*\] FUNC '\([a-z_0-9]*\)' .*/\1/p" "$OUT/btf.txt" | grep -x -E "$BTF_FUNCS" |
	sort -u >"$OUT/guest.btf-funcs"
rm -f "$OUT/btf.txt"

# The agent's files (offline-agent.sh): no server answers, every batch
# stays in the spool.
offline_agent_etc "$OUT/etc" info || fail "agent files"
printf 'KERNEL=%s\n' "$KERNEL" >"$OUT/etc/kernel.env"

mods=()
[ "$modules" = - ] || mods=(--modules "$modules")
"$SRC/kernel/mkinitramfs" -o "$OUT/initrd.cpio.gz" "${mods[@]}" \
	--bin "$AGENT" --bin "$WORKLOAD" \
	--file "$OUT/etc/agent.conf:/etc/twilight/agent.conf" \
	--file "$OUT/etc/ca.pem:/etc/twilight/ca.pem" \
	--file "$OUT/etc/enroll.token:/etc/twilight/enroll.token" \
	--file "$OUT/etc/kernel.env:/etc/twilight/kernel.env" 2>"$OUT/mkinitramfs.log" ||
	{ cat "$OUT/mkinitramfs.log" >&2; fail "kernel/mkinitramfs failed"; }

echo "=== $KERNEL: guest run ($(basename "$kernel"))"
t0=$(date +%s)
"$SRC/kernel/guest-run" --kernel "$kernel" --initrd "$OUT/initrd.cpio.gz" \
	--script "$HERE/guest.sh" --out "$OUT/guest" --serial-log "$OUT/serial.log" \
	--append "printk.devkmsg=on swapaccount=0" --timeout 1500 >"$OUT/console.txt" 2>&1
rc=$?
echo "$KERNEL: boot to result in $(($(date +%s) - t0)) s"
if [ $rc != 0 ]; then
	grep -a -E 'GUEST-FAIL|GUEST-ERROR|twilight-agent|^kernel/guest-run' "$OUT/console.txt" | tr -d '\r' | tail -40 >&2
	fail "guest exited $rc; serial log $OUT/serial.log"
fi

echo "=== $KERNEL: checks"
"$HERE/check.sh" "$KERNEL" "$OUT/guest" "$SRC/schema/catalog.json" "$HERE/expect" "$OUT/guest.btf-funcs"
