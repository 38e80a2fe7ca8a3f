#!/bin/bash
# tests/guest/memcg-v1-deprecation.sh WORKLOAD OUTDIR
#
# Guest test for the memcg v1 deprecation backport. Builds (or
# reuses) the patched and unpatched kernels with kernel/build, boots each in
# QEMU (TCG) twice:
#   boot 1 (guest-knobs.sh): every knob of the series and every
#          pre-existing warning, several times, marker after each step;
#   boot 2 (guest-remount.sh, swapaccount=0): boot-time swapaccount warning
#          and a v1 remount that changes options;
# and checks the guest's /dev/kmsg dump on the host: each warning call site
# printed exactly once, in the step that triggers it, with the exact upstream
# text and level; knobs without a warning printed none; the unpatched kernel
# lacks exactly tcp, soft_limit, both oom_control sites, pressure_level and
# swappiness. Also checks the workload log (each step ran N times in its own
# cgroup under its own name, with the expected result) and that the quilt
# export matches the series. Fails loudly if anything needed is missing.
set -uo pipefail

WORKLOAD=${1:?usage: memcg-v1-deprecation.sh WORKLOAD OUTDIR}
OUT=${2:?usage: memcg-v1-deprecation.sh WORKLOAD OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
N=3

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v qemu-system-x86_64 >/dev/null ||
	fail "qemu-system-x86_64 not found: install qemu-system-x86 (scripts/install-deps)"
[ -x "$WORKLOAD" ] || fail "workload helper '$WORKLOAD' missing: build target twl-workload"
file -L "$WORKLOAD" | grep -q 'statically linked' ||
	fail "$WORKLOAD is not statically linked (the guest has no libc)"
rm -rf "$OUT"
mkdir -p "$OUT"

# --- the quilt export must be the same series ----------------------------------
QUILT="$SRC/kernel/debian/patches"
QDIR="features/all/memcg-v1-deprecation"
[ -f "$QUILT/series" ] || fail "$QUILT/series missing (run kernel/export-quilt)"
diff <(grep -v '^#' "$SRC/kernel/patches/series" | sed "s|^|$QDIR/|") \
	<(grep -v '^#' "$QUILT/series") >/dev/null ||
	fail "kernel/debian/patches/series does not list kernel/patches/series (run kernel/export-quilt)"
for p in $(grep -v '^#' "$SRC/kernel/patches/series"); do
	cmp -s "$SRC/kernel/patches/$p" "$QUILT/$QDIR/$p" ||
		fail "$QUILT/$QDIR/$p differs from kernel/patches/$p (run kernel/export-quilt)"
done

# --- kernels and initramfs -------------------------------------------------------
echo "=== kernel/build"
t0=$(date +%s)
"$SRC/kernel/build" | tee "$OUT/kernel-build.out"
[ "${PIPESTATUS[0]}" = 0 ] || fail "kernel/build failed (see its output above)"
echo "kernel/build took $(($(date +%s) - t0)) s"
patched=$(sed -n 's/^patched=//p' "$OUT/kernel-build.out")
unpatched=$(sed -n 's/^unpatched=//p' "$OUT/kernel-build.out")
[ -f "$patched" ] && [ -f "$unpatched" ] || fail "kernel/build printed no kernel paths"

"$SRC/kernel/mkinitramfs" -o "$OUT/initrd.cpio.gz" --bin "$WORKLOAD" ||
	fail "kernel/mkinitramfs failed"

# boot NAME KERNEL SCRIPT [APPEND]: run one guest, keep its files in
# $OUT/NAME/ and its console in $OUT/NAME.serial.
boot() {
	local name=$1 kernel=$2 script=$3 append=${4:-} rc t
	echo "=== boot $name: $(basename "$kernel") $(basename "$script") $append"
	t=$(date +%s)
	"$SRC/kernel/guest-run" --kernel "$kernel" --initrd "$OUT/initrd.cpio.gz" \
		--script "$script" --timeout 900 --out "$OUT/$name" \
		--serial-log "$OUT/$name.serial" \
		--append "printk.devkmsg=on $append" >"$OUT/$name.console" 2>&1
	rc=$?
	t=$(($(date +%s) - t))
	grep -a -e '^workload ' -e 'GUEST-FAIL' -e '^kernel/guest-run' "$OUT/$name.console" | tr -d '\r'
	[ $rc = 0 ] || fail "guest $name exited $rc; console: $OUT/$name.serial"
	[ -s "$OUT/$name/kmsg.txt" ] || fail "guest $name exported no kmsg dump; console: $OUT/$name.serial"
	echo "boot $name: boot to result in $t s"
	echo "$name $t" >>"$OUT/timings"
}

# check_kmsg NAME EXPECTED: compare "<step> <id> <level>" lines (any order,
# with multiplicity) found in NAME's kmsg dump with EXPECTED.
check_kmsg() {
	local name=$1 expected=$2
	awk -f "$HERE/kmsg-classify.awk" "$OUT/$name/kmsg.txt" | sort >"$OUT/$name.actual"
	printf '%s\n' "$expected" | sed '/^$/d' | sort >"$OUT/$name.expected"
	if ! diff -u "$OUT/$name.expected" "$OUT/$name.actual"; then
		fail "$name: deprecation messages differ from expected (- expected, + seen); kmsg dump: $OUT/$name/kmsg.txt"
	fi
	echo "$name: deprecation messages as expected: $(awk '{print $1 "=" $2}' "$OUT/$name.actual" | tr '\n' ' ')"
}

# check_markers NAME STEP...: every marker written, in order (none dropped by
# the /dev/kmsg rate limit, none lost).
check_markers() {
	local name=$1
	shift
	local seen
	seen=$(sed -n 's/^[0-9]*,[0-9]*,[0-9]*,[^;]*;TWILIGHT-STEP \(.*\)$/\1/p' "$OUT/$name/kmsg.txt" | tr '\n' ' ')
	[ "$seen" = "$* " ] || fail "$name: markers in kmsg are '$seen', expected '$* '"
}

# check_workload NAME: every twl-workload run did what it was asked to.
check_workload() {
	local name=$1 log errors
	log="$OUT/$name/workload.log"
	[ -s "$log" ] || fail "$name: no workload log exported"
	errors=$(awk -v n=$N '
		$1 != "workload" { next }
		{
			delete a
			for (i = 2; i <= NF; i++) {
				eq = index($i, "=")
				a[substr($i, 1, eq - 1)] = substr($i, eq + 1)
			}
			cg = a["dir"]
			sub(/.*\//, "", cg)
			want_cg = cg == "force_empty" ? "/" : "/" cg
			want_comm = substr("twl-" cg, 1, 15)
			if (a["n"] != n) print "line " NR ": n=" a["n"] ", want " n
			if (a["cgroup"] != want_cg) print "line " NR ": cgroup=" a["cgroup"] ", want " want_cg
			if (a["comm"] != want_comm) print "line " NR ": comm=" a["comm"] ", want " want_comm
			if (cg == "use_hier") {
				if (a["failed"] != n || a["errno"] != "EINVAL")
					print "line " NR ": use_hierarchy=0 should fail with EINVAL every time: " $0
			} else if (a["failed"] != 0 || a["ok"] != n)
				print "line " NR ": failed: " $0
			count++
		}
		END { if (count != 36) print count " workload runs logged, want 36" }' "$log")
	[ -z "$errors" ] || fail "$name: workload log: $errors"
	echo "$name: 36 workload runs as expected ($N repetitions each)"
}

BOOT1_STEPS="begin tcp soft_limit oom_event oom_write pressure swappiness kmem_limit move_charge use_hier usage_event memsw_event memsw_limit force_empty reads limit tcp2 soft_limit2 oom_event2 oom_write2 pressure2 swappiness2 end"
BOOT2_STEPS="begin remount end"
PRE_EXISTING="kmem_limit kmem_limit 4
move_charge move_charge 4
use_hier non_hierarchical 4"
SERIES="tcp tcp 4
soft_limit soft_limit 4
oom_event oom_control 4
oom_write oom_control 4
pressure pressure_level 4
swappiness swappiness 6"
BOOT2="begin swapaccount 4
remount remount 4"

boot patched-knobs "$patched" "$HERE/guest-knobs.sh"
check_markers patched-knobs $BOOT1_STEPS
check_workload patched-knobs
check_kmsg patched-knobs "$SERIES
$PRE_EXISTING"

boot patched-remount "$patched" "$HERE/guest-remount.sh" "swapaccount=0"
check_markers patched-remount $BOOT2_STEPS
check_kmsg patched-remount "$BOOT2"

boot unpatched-knobs "$unpatched" "$HERE/guest-knobs.sh"
check_markers unpatched-knobs $BOOT1_STEPS
check_workload unpatched-knobs
check_kmsg unpatched-knobs "$PRE_EXISTING"

boot unpatched-remount "$unpatched" "$HERE/guest-remount.sh" "swapaccount=0"
check_markers unpatched-remount $BOOT2_STEPS
check_kmsg unpatched-remount "$BOOT2"

# The contrast, stated once more from the two actual results.
missing=$(comm -23 "$OUT/patched-knobs.actual" "$OUT/unpatched-knobs.actual" | awk '{print $2}' | sort | tr '\n' ' ')
[ "$missing" = "oom_control oom_control pressure_level soft_limit swappiness tcp " ] ||
	fail "unpatched kernel lacks '$missing', expected exactly tcp soft_limit oom_control(x2) pressure_level swappiness"
echo "contrast: the unpatched kernel lacks exactly: $missing"
echo "PASS: memcg v1 deprecation backport verified in 4 guest boots ($(tr '\n' ' ' <"$OUT/timings"))"
