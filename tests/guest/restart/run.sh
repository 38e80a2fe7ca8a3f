#!/bin/bash
# tests/guest/restart/run.sh ROUNDS OUTDIR
#
# The agent killed with SIGKILL at points of its own start-up (BPF maps
# pinned, some links pinned, after "started:", right after exec) and
# started again, ROUNDS rounds in one boot of the patched 6.1 kernel
# (guest.sh says what a round is): every start after a kill must log
# "started:" within the deadline, and the last one must spool a batch
# whose health has every probe attached and exit 0 on SIGTERM. A start
# that misses the deadline is described from inside the guest (/proc
# stack and wchan of each thread, its log, the pins) on the console and in
# OUTDIR/serial.log.
#
# The guest programs come from a Release build without sanitizers (the
# guest has no libasan), shared with the other guest tests: $FLEET_BUILD or
# $TWILIGHT_BINARY_DIR/fleet-rel. TWILIGHT_RESTART_KERNEL=bzImage boots
# another kernel (by hand; the test's kernel is kernel/kernels patched-6.1).
set -uo pipefail

ROUNDS=${1:?usage: run.sh ROUNDS OUTDIR}
OUT=${2:?usage: run.sh ROUNDS OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
# shellcheck source=tests/guest/offline-agent.sh
. "$HERE/../offline-agent.sh"
BUILD=${FLEET_BUILD:-${TWILIGHT_BINARY_DIR:-$OUT}/fleet-rel}
# Seconds a start may take before it counts as hung: far above a cold start
# (12 programs verified and attached) under TCG on a loaded host.
DEADLINE=${TWILIGHT_RESTART_DEADLINE:-300}

fail() {
	echo "FAIL: agent restart: $*" >&2
	exit 1
}

[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || fail "ROUNDS must be a positive number, got '$ROUNDS'"
for tool in qemu-system-x86_64 cmake jq openssl; do
	command -v $tool >/dev/null || fail "$tool not found: run scripts/install-deps"
done
rm -rf "$OUT"
mkdir -p "$OUT/etc" "$OUT/guest"

echo "=== guest programs (Release, no sanitizers) in $BUILD"
{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTWILIGHT_SANITIZE=OFF &&
	cmake --build "$BUILD" -j "${JOBS:-2}" --target twilight-agent twl-killat; } \
	>"$OUT/build.log" 2>&1 ||
	{ tail -n 30 "$OUT/build.log" >&2; fail "building the agent failed (log $OUT/build.log)"; }

if [ -n "${TWILIGHT_RESTART_KERNEL:-}" ]; then
	kernel=$TWILIGHT_RESTART_KERNEL
	echo "=== kernel: TWILIGHT_RESTART_KERNEL=$kernel"
else
	"$SRC/kernel/kernels" patched-6.1 >"$OUT/kernel.txt" || fail "kernel/kernels patched-6.1 failed"
	read -r _ kernel _ _ <"$OUT/kernel.txt"
fi
[ -f "$kernel" ] || fail "no kernel at '$kernel'"

# The agent's files (offline-agent.sh): no server answers, every batch
# stays in the spool.
offline_agent_etc "$OUT/etc" debug || fail "agent files"
printf 'ROUNDS=%s\nDEADLINE=%s\n' "$ROUNDS" "$DEADLINE" >"$OUT/etc/restart.env"
"$SRC/kernel/mkinitramfs" -o "$OUT/initrd.cpio.gz" --bin "$BUILD/agent/twilight-agent" \
	--bin "$BUILD/tests/guest/restart/twl-killat" \
	--file "$OUT/etc/agent.conf:/etc/twilight/agent.conf" \
	--file "$OUT/etc/ca.pem:/etc/twilight/ca.pem" \
	--file "$OUT/etc/enroll.token:/etc/twilight/enroll.token" \
	--file "$OUT/etc/restart.env:/etc/twilight/restart.env" 2>"$OUT/mkinitramfs.log" ||
	{ cat "$OUT/mkinitramfs.log" >&2; fail "kernel/mkinitramfs failed"; }

# Per round at most 6 starts, each within DEADLINE; and the boot.
timeout=$((ROUNDS * 6 * DEADLINE + 600))
echo "=== $ROUNDS round(s) in one boot of $(basename "$kernel") (deadline $DEADLINE s per start)"
t0=$(date +%s)
"${GUEST_RUN:-$SRC/kernel/guest-run}" --kernel "$kernel" --initrd "$OUT/initrd.cpio.gz" \
	--script "$HERE/guest.sh" --out "$OUT/guest" --serial-log "$OUT/serial.log" \
	--append "printk.devkmsg=on" --timeout "$timeout" >"$OUT/console.txt" 2>&1
rc=$?
tr -d '\r' <"$OUT/serial.log" | grep -E '^RESTART-(ROUND|KILL|START|DONE)' >"$OUT/restart.txt"
cat "$OUT/restart.txt"
echo "boot to result in $(($(date +%s) - t0)) s"
if [ $rc != 0 ]; then
	tr -d '\r' <"$OUT/serial.log" | sed -n '/^RESTART-FAIL/,/^TWILIGHT-FILE-BEGIN/p' | grep -v '^TWILIGHT-FILE' | head -n 150 >&2
	fail "guest exited $rc; serial log $OUT/serial.log, agent log $OUT/guest/agent.log"
fi

# --- checks ---------------------------------------------------------------
errors=0
bad() {
	echo "CHECK FAILED: agent restart: $*" >&2
	errors=$((errors + 1))
}
[ "$(grep -c '^RESTART-ROUND [0-9]* ok$' "$OUT/restart.txt")" = "$ROUNDS" ] || bad "not every round ended ok"
[ "$(grep -c '^RESTART-START ' "$OUT/restart.txt")" = $((ROUNDS * 3)) ] ||
	bad "$(grep -c '^RESTART-START ' "$OUT/restart.txt") checked starts, want $((ROUNDS * 3))"
for p in loading attaching running early; do
	n=$(grep -c "^RESTART-KILL $p " "$OUT/restart.txt")
	want=$ROUNDS
	[ $p != running ] || want=$((ROUNDS * 3 - 1))
	[ "$n" = "$want" ] || bad "$n kills at '$p', want $want"
done
# the kills landed where they were meant to
grep '^RESTART-KILL loading ' "$OUT/restart.txt" | grep -qv ' links=0 maps=pinned ' &&
	bad "a 'loading' kill found links pinned or no maps"
grep '^RESTART-KILL attaching ' "$OUT/restart.txt" | grep -q ' links=12 ' &&
	bad "an 'attaching' kill came after every link was pinned"
batches=("$OUT"/guest/batch-*)
[ -f "${batches[0]}" ] || bad "the last start spooled no batch"
if [ -f "${batches[0]}" ]; then
	# a 32-byte spool header, then the JSON document
	for b in "${batches[@]}"; do
		[ "$(head -c 4 "$b")" = TWSP ] || bad "$(basename "$b") has no spool header"
		tail -c +33 "$b"
	done | jq -s '.' >"$OUT/batches.json" 2>"$OUT/jq.err" || bad "batches are not JSON: $(cat "$OUT/jq.err")"
	probes=$(jq -r 'last(.[] | .health | select(.probes)) | .probes[] | "\(.name) \(.state)"' "$OUT/batches.json")
	[ "$(echo "$probes" | grep -c ' attached$')" = 12 ] ||
		bad "the last start's probes are not all attached: $(echo "$probes" | tr '\n' ';')"
	jq -e '[.[] | .health.map_overflows // 0] | max == 0' "$OUT/batches.json" >/dev/null ||
		bad "BPF map overflows reported"
fi
grep -q 'cannot drop capabilities' "$OUT/guest/agent.log" && bad "an agent could not drop its capabilities"
[ $errors = 0 ] || fail "$errors check(s) failed (output in $OUT)"
echo "PASS: agent restart: $ROUNDS round(s), $(grep -c '^RESTART-KILL ' "$OUT/restart.txt") kills, every start after one reported within $DEADLINE s"
