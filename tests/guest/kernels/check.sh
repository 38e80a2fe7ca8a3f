#!/bin/bash
# tests/guest/kernels/check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR BTF_FUNCS
#
# Checks what tests/guest/kernels/guest.sh exported to DIR for KERNEL:
#   - each workload run succeeded, or failed with the errno the kernel's
#     source says;
#   - /dev/kmsg lost no record (sequence numbers 0, 1, 2, ... and no EPIPE)
#     and every step marker arrived, in order;
#   - the deprecation messages the kernel printed, by exact text, step and
#     level, equal EXPECT_DIR/KERNEL.kmsg (read from the kernel's source),
#     and each one's text and level is in texts/KERNEL.texts
#     (texts-check.awk);
#   - the agent reported each of them as a warning with its catalog id
#     (same kmsg sequence number and level) and nothing as unknown: a text
#     the catalog lacks fails here;
#   - BPF counted exactly what the workload log says (count, failed,
#     condition_met per key) and nothing for other.log; where the agent is
#     known to count otherwise today, EXPECT_DIR/agent-gaps names the entry,
#     what it reports instead and why: such a line is printed as a KNOWN GAP
#     and must match exactly (any other value, the right one included,
#     fails, so that the list is kept true);
#   - health: no record lost, no map overflow, probe states as in
#     EXPECT_DIR/KERNEL.probes, controller states (built or not, decided
#     from the kernel's BTF) as in EXPECT_DIR/KERNEL.controllers; the BTF
#     functions of BTF_FUNCS (found by run.sh in the kernel's vmlinux) as in
#     EXPECT_DIR/KERNEL.btf;
#   - census: hierarchies and knobs, whether the v1 memory controller
#     mounted and the host's cgroup_mode, as in EXPECT_DIR/KERNEL.census.
# Writes what it saw next to DIR (DIR.*) for the report.
set -uo pipefail

KERNEL=${1:?usage: check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR}
D=${2:?usage: check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR}
CAT=${3:?usage: check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR}
EXP=${4:?usage: check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR BTF_FUNCS}
BTF=${5:?usage: check.sh KERNEL DIR CATALOG_JSON EXPECT_DIR BTF_FUNCS}
HERE=$(cd "$(dirname "$0")" && pwd)
errors=0

bad() {
	echo "CHECK FAILED: $KERNEL: $*" >&2
	errors=$((errors + 1))
}
ok() {
	echo "ok: $KERNEL: $*"
}
# same WHAT EXPECTED-FILE ACTUAL-FILE: compare two sorted lists.
same() {
	if diff -u "$2" "$3" >"$3.diff"; then
		ok "$1 as expected ($(wc -l <"$3") lines)"
	else
		bad "$1 differ (- expected $2, + seen $3):"
		cat "$3.diff" >&2
	fi
}

for f in workload.log other.log steps.txt facts.txt agent.log kmsg.txt spool.txt; do
	[ -f "$D/$f" ] || { echo "FAIL: $KERNEL: the guest did not export $f" >&2; exit 1; }
done
for f in kmsg probes btf census; do
	[ -f "$EXP/$KERNEL.$f" ] || { echo "FAIL: $KERNEL: $EXP/$KERNEL.$f missing" >&2; exit 1; }
done
grep -qx 'agent-exit=0' "$D/facts.txt" || bad "the agent did not exit 0 on SIGTERM: $(grep agent-exit "$D/facts.txt")"

# --- the workload: every run as the kernel answers it ---------------------------
# Runs that must fail, with the errno the kernel returns (read from its
# source); every other run must succeed N times.
if grep -qx 'v1-memory=mounted' "$D/facts.txt"; then
	want_runs="23 3"
else
	want_runs="0 4"
fi
runs="$(grep -c '^workload ' "$D/workload.log") $(grep -c '^workload ' "$D/other.log")"
[ "$runs" = "$want_runs" ] && ok "workload: $runs runs (counted, must-not-count)" ||
	bad "workload: $runs runs (counted, must-not-count), want $want_runs"
wrong=$(awk -v fails="tcp_root=EINVAL tcp_bad=EINVAL soft_bad=EINVAL swap_big=EINVAL oom_nonnum=EINVAL oom_bad=EINVAL use_hier=EINVAL" '
	BEGIN { n = split(fails, f, " "); for (i = 1; i <= n; i++) { split(f[i], fe, "="); E[fe[1]] = fe[2] } }
	/^workload / {
		delete kv
		for (i = 2; i <= NF; i++) { p = index($i, "="); kv[substr($i, 1, p - 1)] = substr($i, p + 1) }
		s = kv["step"]
		if (s in E) { if (kv["ok"] != 0 || kv["errno"] != E[s]) print s ": want every run to fail with " E[s] ": " $0 }
		else if (kv["failed"] != 0 || kv["ok"] != kv["n"]) print s ": want every run to succeed: " $0
	}' "$D/workload.log" "$D/other.log") ||
	wrong="the check itself failed (awk exit $?): ${wrong:-no output}"
[ -z "$wrong" ] && ok "workload: each run succeeded or failed as the kernel must answer it" || bad "workload: $wrong"

# --- the agent's batches: 32-byte spool header, then the JSON document ------
W=$D.work
rm -rf "$W"
mkdir -p "$W"
nb=0
for b in "$D"/batch-*; do
	[ -f "$b" ] || continue
	[ "$(head -c 4 "$b")" = TWSP ] || { bad "$(basename "$b") has no spool header"; continue; }
	tail -c +33 "$b" >"$W/$(basename "$b").json"
	jq -e . "$W/$(basename "$b").json" >/dev/null || bad "$(basename "$b") is not JSON"
	nb=$((nb + 1))
done
[ $nb -gt 0 ] || { echo "FAIL: $KERNEL: the agent spooled no batch ($(cat "$D/spool.txt"))" >&2; exit 1; }
jq -s . "$W"/batch-*.json >"$W/all.json"
ok "$nb batches from the agent's spool"

# --- /dev/kmsg: nothing lost, markers in order ------------------------------
if grep -q 'lost-records' "$D/kmsg.txt"; then
	bad "the kmsg dump hit EPIPE: records were overwritten before they were read"
fi
gap=$(awk '/^ / { next } { split($0, a, ","); s = a[2] + 0
	if (NR == 1 && s != 0) { print "first record is " s; exit }
	if (NR > 1 && s != prev + 1) { print "after " prev " comes " s; exit }
	prev = s }' "$D/kmsg.txt")
[ -z "$gap" ] && ok "kmsg dump lost no record ($(grep -vc '^ ' "$D/kmsg.txt") records from 0)" ||
	bad "kmsg dump is not contiguous: $gap"
jq -e '[.[] | .health.records_lost // 0] | max == 0' "$W/all.json" >/dev/null ||
	bad "the agent reports lost kmsg records: $(jq -c '[.[] | .health.records_lost]' "$W/all.json")"
seen=$(sed -n 's/^[0-9]*,[0-9]*,[0-9]*,[^;]*;TWILIGHT-STEP \(.*\)$/\1/p' "$D/kmsg.txt" | tr '\n' ' ')
want=$(tr '\n' ' ' <"$D/steps.txt")
[ "$seen" = "$want" ] && ok "all $(wc -l <"$D/steps.txt") step markers in order" ||
	bad "markers in kmsg are '$seen', the guest wrote '$want'"

# --- what the kernel printed ------------------------------------------------
awk -v with_seq=1 -f "$HERE/../kmsg-classify.awk" "$D/kmsg.txt" >"$W/classified"
awk '{ print $1, $2, $3 }' "$W/classified" | sort >"$D.kmsg"
grep -v '^#' "$EXP/$KERNEL.kmsg" | sed '/^$/d' | sort >"$W/kmsg.expected"
same "deprecation messages (step, id, level)" "$W/kmsg.expected" "$D.kmsg"
# Each one's exact text and level is one this kernel's texts file lists.
if awk -v texts="$HERE/texts/$KERNEL.texts" -f "$HERE/texts-check.awk" "$D/kmsg.txt" >"$D.texts" 2>&1; then
	ok "every deprecation message is in texts/$KERNEL.texts"
else
	bad "messages not in texts/$KERNEL.texts: $(cat "$D.texts")"
fi

# --- what the agent made of it ----------------------------------------------
# The test's short ids and the catalog's.
awk 'BEGIN {
	m["tcp"] = "memcg_v1.kmem_tcp_limit"; m["soft_limit"] = "memcg_v1.soft_limit"
	m["oom_control"] = "memcg_v1.oom_control"; m["pressure_level"] = "memcg_v1.pressure_level"
	m["swappiness"] = "memcg_v1.swappiness"; m["kmem_limit"] = "memcg_v1.kmem_limit"
	m["move_charge"] = "memcg_v1.move_charge"; m["non_hierarchical"] = "memcg_v1.non_hierarchical"
	m["swapaccount"] = "memcg_v1.swapaccount"; m["remount"] = "cgroup_v1.remount" }
	{ print $4, ($2 in m ? m[$2] : $2), $3 }' "$W/classified" | sort -n >"$W/warnings.expected"
jq -r '[.[] | .warnings[]] | unique_by(.kmsg_seq)[] | "\(.kmsg_seq) \(.feature) \(.level)"' \
	"$W/all.json" | sort -n >"$D.warnings"
same "agent warnings (kmsg seq, catalog id, level)" "$W/warnings.expected" "$D.warnings"
jq -r '[.[] | .unknown[]] | .[] | "\(.count)x \(.text)"' "$W/all.json" >"$D.unknown"
[ ! -s "$D.unknown" ] && ok "the agent reported no unknown deprecation" ||
	bad "the agent reported texts the catalog lacks: $(cat "$D.unknown")"

# --- BPF counters -------------------------------------------------------------
jq -r '.features[] | .id as $id | ((.files // [])[] | "F \(.) \($id)"), ((.event_files // [])[] | "E \(.) \($id)")' \
	"$CAT" >"$W/maps" || { echo "FAIL: cannot read $CAT" >&2; exit 1; }
awk -v maps="$W/maps" -f "$HERE/../usage-expected.awk" "$D/workload.log" | sort >"$W/usage.expected" ||
	bad "the workload log has runs the test cannot map to the catalog"
# Counters are cumulative since boot: the largest value per key is the last.
jq -r '[.[] | .usage[]] | group_by([.op, .file, .cgroup, .comm, .writer_cgroup, .feature, .uid])[] |
	max_by(.count) | "\(.op)|\(.file)|\(.cgroup)|\(.comm)|\(.writer_cgroup)|\(.feature)|\(.uid) \(.count) \(.failed) \(.condition_met)"' \
	"$W/all.json" | sort >"$D.usage"
# Known gaps of the agent: "KERNEL-REGEX<tab>WANT-LINE<tab>AGENT-LINE<tab>WHY"
# (AGENT-LINE "-": the agent counts nothing for it).
cp "$D.usage" "$W/usage.workload"
while IFS=$'\t' read -r kre want got why; do
	case "$kre" in '' | '#'*) continue ;; esac
	[[ $KERNEL =~ ^($kre)$ ]] || continue
	grep -qxF "$want" "$W/usage.expected" || continue
	if [ "$got" = - ] && ! grep -qxF "$want" "$W/usage.workload"; then
		echo "KNOWN GAP (agent): $KERNEL: want '$want', the agent counts nothing: $why"
		echo "$want" >>"$W/usage.workload"
	elif grep -qxF "$got" "$W/usage.workload"; then
		echo "KNOWN GAP (agent): $KERNEL: want '$want', the agent reports '$got': $why"
		awk -v got="$got" -v want="$want" '$0 == got { $0 = want } { print }' "$W/usage.workload" >"$W/usage.tmp"
		mv "$W/usage.tmp" "$W/usage.workload"
	fi
done <"$EXP/agent-gaps"
sort -o "$W/usage.workload" "$W/usage.workload"
same "BPF usage entries against the workload log" "$W/usage.expected" "$W/usage.workload"
for comm in $(sed -n 's/.* comm=\([^ ]*\).*/\1/p' "$D/other.log" | sort -u); do
	grep -q "|$comm|" "$D.usage" && bad "BPF counted $comm, which must not count (v2, core, non-catalog file or refused value)"
done
ok "nothing counted for the $(grep -c '^workload ' "$D/other.log") must-not-count runs"

# --- health, BTF, census --------------------------------------------------------
jq -e '[.[] | .health.map_overflows // 0] | max == 0' "$W/all.json" >/dev/null || bad "BPF map overflows reported"
jq -r 'last(.[] | .health | select(.probes)) | .probes[] | "\(.name) \(.state)"' "$W/all.json" | sort >"$D.probes"
jq -r 'last(.[] | .health | select(.probes)) | .probes[] | "\(.name) \(.state) \(.reason // "")"' "$W/all.json" >"$D.probe-reasons"
grep -v '^#' "$EXP/$KERNEL.probes" | sed '/^$/d' | sort >"$W/probes.expected"
same "probe states" "$W/probes.expected" "$D.probes"
jq -r 'last(.[] | .health | select(.controllers)) | .controllers[] | "\(.name) \(.state)"' "$W/all.json" | sort >"$D.controllers"
grep -v '^#' "$EXP/$KERNEL.controllers" | sed '/^$/d' | sort >"$W/controllers.expected"
same "controller states (from the kernel's BTF)" "$W/controllers.expected" "$D.controllers"
grep -v '^#' "$EXP/$KERNEL.btf" | sed '/^$/d' | sort >"$W/btf.expected"
sort "$BTF" >"$D.btf"
same "BTF functions the probes need" "$W/btf.expected" "$D.btf"
jq -r 'last(.[] | .census | select(. != null)) |
	(.hierarchies[] | "hierarchy \(.kind) \(.mount) \(.controllers | if length == 0 then "-" else join(",") end)"),
	(.knobs[] | "knob \(.feature) \(.file) \(.cgroup) \(.value)"),
	"truncated \(.truncated)"' "$W/all.json" >"$W/census"
{
	cat "$W/census"
	sed -n 's/^v1-memory=\([a-z]*\).*/v1-memory \1/p' "$D/facts.txt"
	jq -r 'last(.[] | .host) | "cgroup_mode \(.cgroup_mode)"' "$W/all.json"
} | sort >"$D.census"
grep -v '^#' "$EXP/$KERNEL.census" | sed '/^$/d' | sort >"$W/census.expected"
same "census (hierarchies, knobs, v1 memory, cgroup mode)" "$W/census.expected" "$D.census"

if [ $errors != 0 ]; then
	echo "FAIL: $KERNEL: $errors check(s) failed (seen: $D.*)" >&2
	exit 1
fi
echo "PASS: $KERNEL: kernel messages, agent reports, BPF counts, census and health as expected"
