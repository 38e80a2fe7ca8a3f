#!/bin/bash
# tests/guest/e2e/soak-faults.sh RUNS OUTDIR: the fleet fault test
# (faults.sh) RUNS times in a row, each in OUTDIR/run-K, stopping at the
# first failure (its directory kept, with the failing guest's description:
# the agent's threads' kernel stacks, spool, state and log, from
# tests/fleet/guest.sh's fail()), under the "soak" label that
# ./scripts/test does not run. It was made to look for a restart "hang"
# (once in four runs, fault-a's restarted agent did not report started
# for 600 s). That was the guest's wait, not the agent: it counted every
# "started:" line since boot, and the start killed before writing its own
# left the count one short for ever. The wait now counts this start's line,
# and faults.sh kills one start during its start-up on every run.
set -uo pipefail
RUNS=${1:?usage: soak-faults.sh RUNS OUTDIR}
OUT=${2:?usage: soak-faults.sh RUNS OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
for k in $(seq 1 "$RUNS"); do
	t0=$(date +%s)
	if ! "$HERE/faults.sh" "$OUT/run-$k" >"$OUT/run-$k.log" 2>&1; then
		tail -n 250 "$OUT/run-$k.log"
		echo "FAIL: run $k of $RUNS failed after $(($(date +%s) - t0)) s (all of it: $OUT/run-$k.log)" >&2
		exit 1
	fi
	echo "run $k of $RUNS: passed in $(($(date +%s) - t0)) s"
	[ "$k" = "$RUNS" ] || rm -rf "$OUT/run-$k"
done
echo "all $RUNS runs passed"
