#!/bin/bash
# tests/guest/bpf/run.sh OUTDIR
#
# Guest test of the BPF usage counters. Builds the guest programs
# without sanitizers (tests/guest/bpf/standalone), and the loader of the
# previous map layout from a commit of the history (the upgrade phase), takes the patched kernel
# from kernel/build (cached), packs an initramfs with kernel/mkinitramfs,
# boots it once with kernel/guest-run (TCG) running guest.sh, and checks the
# exported reports against the workload's own log with check.sh. Nothing
# here loads BPF on this machine: twl-bpf-dump runs only inside the guest.
set -uo pipefail

OUT=${1:?usage: run.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

for tool in qemu-system-x86_64 jq cmake clang bpftool git; do
	command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] ||
		fail "$tool not found: run scripts/install-deps"
done
rm -rf "$OUT/guest" "$OUT/initrd.cpio.gz"
mkdir -p "$OUT"

echo "=== build guest programs (no sanitizers)"
cmake -S "$HERE/standalone" -B "$OUT/build" -DTWILIGHT_SRC="$SRC" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log" >&2; fail "configuring the guest build failed (log $OUT/build.log)"; }
cmake --build "$OUT/build" -j2 --target twl-bpf-dump twl-workload >>"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log" >&2; fail "building the guest programs failed (log $OUT/build.log)"; }

# The agent before the value summary (map layout v1, pinned under
# /sys/fs/bpf/twilight/v1): guest.sh starts with it and upgrades to this
# tree's loader mid-boot. A commit of this repository's history, so a
# clone has it; its twl-bpf-dump is built from its own sources.
OLD_REV=a4a21c83f02e3202877b7c2a937738e63d647759
echo "=== build the previous loader (layout v1, ${OLD_REV:0:12})"
# A shallow clone lacks it: deepen it from its origin when that is a
# repository on this machine (a path or file:// URL; never the network).
if ! git -C "$SRC" cat-file -e "$OLD_REV^{commit}" 2>/dev/null &&
	[ "$(git -C "$SRC" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
	origin=$(git -C "$SRC" remote get-url origin 2>/dev/null || true)
	case "$origin" in
	/* | file://*)
		echo "shallow clone: fetching the history from $origin"
		git -C "$SRC" fetch -q --unshallow origin || true
		;;
	esac
fi
git -C "$SRC" cat-file -e "$OLD_REV^{commit}" 2>/dev/null ||
	fail "commit $OLD_REV (the previous loader) is not in $SRC: the upgrade test needs the repository's history (a full clone, or a shallow one whose origin is a local repository)"
rm -rf "$OUT/old-src" && mkdir -p "$OUT/old-src" &&
	git -C "$SRC" archive "$OLD_REV" | tar -x -C "$OUT/old-src" ||
	fail "cannot extract $OLD_REV"
cmake -S "$OUT/old-src/tests/guest/bpf/standalone" -B "$OUT/old-build" -DTWILIGHT_SRC="$OUT/old-src" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/old-build.log" 2>&1 &&
	cmake --build "$OUT/old-build" -j2 --target twl-bpf-dump >>"$OUT/old-build.log" 2>&1 ||
	{ tail -20 "$OUT/old-build.log" >&2; fail "building the previous loader failed (log $OUT/old-build.log)"; }
cp "$OUT/old-build/twl-bpf-dump" "$OUT/twl-bpf-dump-v1" || fail "no previous twl-bpf-dump"

echo "=== kernel/build"
"$SRC/kernel/build" >"$OUT/kernel-build.out" || fail "kernel/build failed"
kernel=$(sed -n 's/^patched=//p' "$OUT/kernel-build.out")
[ -f "$kernel" ] || fail "kernel/build printed no patched kernel"

echo "=== initramfs"
"$SRC/kernel/mkinitramfs" -o "$OUT/initrd.cpio.gz" \
	--bin "$OUT/build/twl-bpf-dump" --bin "$OUT/build/twl-workload" \
	--bin "$OUT/twl-bpf-dump-v1" ||
	fail "kernel/mkinitramfs failed"

echo "=== guest run"
"$SRC/kernel/guest-run" --kernel "$kernel" --initrd "$OUT/initrd.cpio.gz" \
	--script "$HERE/guest.sh" --out "$OUT/guest" --serial-log "$OUT/serial.log" \
	--timeout 1200 >"$OUT/console.txt"
rc=$?
if [ $rc != 0 ]; then
	grep -E 'GUEST-FAIL|twl-bpf-dump|^---' "$OUT/console.txt" | tail -40 >&2
	fail "guest script failed (exit $rc); serial log $OUT/serial.log"
fi

echo "=== check"
"$HERE/check.sh" "$OUT/guest" "$SRC/schema/catalog.json"
