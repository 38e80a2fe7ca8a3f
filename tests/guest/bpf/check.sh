#!/bin/bash
# tests/guest/bpf/check.sh DIR CATALOG_JSON
#
# Checks what tests/guest/bpf/guest.sh exported to DIR against the
# workload's own logs: every report has exactly the expected usage entries
# (count, failed and condition_met per (op, file, cgroup, comm, writer
# cgroup, feature)), nothing for activity that must not count, the restart
# after kill -9 lost nothing, probes attached and reused, no overflow, and
# the privacy run hides paths and names.
set -uo pipefail

D=${1:?usage: check.sh DIR CATALOG_JSON}
HERE=$(cd "$(dirname "$0")" && pwd)
CAT=${2:?usage: check.sh DIR CATALOG_JSON}
errors=0

bad() {
	echo "CHECK FAILED: $*" >&2
	errors=$((errors + 1))
}

for f in workload0.log workload1.log workload.log other.log pins-top.txt report0.json report1.json report2.json \
	report3.json dump1.err dump2.err pins.txt; do
	[ -f "$D/$f" ] || { echo "FAIL: guest did not export $f" >&2; exit 1; }
done
for r in report0 report1 report2 report3; do
	jq -e . "$D/$r.json" >/dev/null || { echo "FAIL: $r.json is not JSON" >&2; exit 1; }
done

maps=$(mktemp)
trap 'rm -f "$maps"' EXIT
jq -r '.features[] | .id as $id | ((.files // [])[] | "F \(.) \($id)"), ((.event_files // [])[] | "E \(.) \($id)")' \
	"$CAT" >"$maps" || { echo "FAIL: cannot read $CAT" >&2; exit 1; }

# expected LOG: the usage entries the workload runs in LOG must produce,
# one line "op|file|cgroup|comm|writer|feature|uid count failed condition_met".
expected() {
	awk -v maps="$maps" -f "$HERE/../usage-expected.awk" "$1" | sort
}

actual() {
	jq -r '.usage[] | "\(.op)|\(.file)|\(.cgroup)|\(.comm)|\(.writer_cgroup)|\(.feature)|\(.uid) \(.count) \(.failed) \(.condition_met)"' \
		"$1" | sort
}

compare() {
	local name=$1 log=$2 report=$3 exp act
	exp=$(expected "$log") || bad "$name: the workload log has runs the test cannot map"
	act=$(actual "$report")
	[ -n "$exp" ] || bad "$name: nothing expected (empty workload log?)"
	if [ "$exp" != "$act" ]; then
		bad "$name: usage entries differ from the workload log (< expected, > reported):"
		diff <(echo "$exp") <(echo "$act") >&2
	else
		echo "ok: $name: $(echo "$act" | wc -l) usage entries exactly as the workload log says"
	fi
}

# Upgrade: the loader of this tree found the previous layout's pins (v1),
# carried its counts over (report0, at attach, holds exactly phase 0, run
# under the previous loader and its pinned links) and removed them, so the
# old programs count nothing twice.
compare "report0 (upgrade from layout v1: its counts carried over)" "$D/workload0.log" "$D/report0.json"
grep -q 'carried [1-9][0-9]* counters over from the previous agent' "$D/dump0.err" ||
	bad "the upgraded loader did not say it carried the v1 counters over"
[ "$(tr '\n' ' ' <"$D/pins-top.txt")" = "v2 " ] ||
	bad "after the upgrade /sys/fs/bpf/twilight holds '$(tr '\n' ' ' <"$D/pins-top.txt")', want only v2"

# Restart after kill -9: everything from phases A (agent up) and B (agent down).
compare "report1 (restart after kill -9; phase B ran with no agent)" "$D/workload1.log" "$D/report1.json"
# Final: all counted runs, and nothing for the runs in other.log.
compare "report2 (final)" "$D/workload.log" "$D/report2.json"
grep -q '^workload ' "$D/other.log" || bad "other.log is empty: the must-not-count runs did not run"
for comm in $(sed -n 's/.* comm=\([^ ]*\).*/\1/p' "$D/other.log" | sort -u); do
	if jq -e --arg c "$comm" '[.usage[] | select(.comm == $c)] | length > 0' "$D/report2.json" >/dev/null; then
		bad "report2 counts activity of $comm, which must not count (v2, core or non-catalog file)"
	fi
done
echo "ok: nothing counted for $(grep -c '^workload ' "$D/other.log") runs on v2, v1 core and non-catalog files"

# Attribution details (uid is part of the compared key above; the uid 1000
# runs must be there).
jq -e '[.usage[] | select(.last_pid <= 0 or .first_seen > .last_seen or .first_seen < 1000000000)] | length == 0' \
	"$D/report2.json" >/dev/null || bad "report2 has entries with wrong last_pid or times"
jq -e '[.usage[] | select(.uid == 1000)] | length == 2' "$D/report2.json" >/dev/null ||
	bad "report2 lacks the write and the read by uid 1000: $(jq -c '[.usage[] | select(.uid != 0)]' "$D/report2.json")"
# Container identity from the writer cgroup; none for plain cgroups.
cid=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
jq -e --arg c "docker:$cid" '[.usage[] | select(.comm == "twl-docker")] | length == 1 and all(.container == $c)' \
	"$D/report2.json" >/dev/null || bad "the docker scope writer is not attributed to docker:$cid"
jq -e '[.usage[] | select(.comm != "twl-docker" and .container != "")] | length == 0' \
	"$D/report2.json" >/dev/null || bad "plain cgroups were given a container identity"
# A removed cgroup keeps the name captured at first use.
jq -e '[.usage[] | select(.comm == "twl-deep" and .cgroup == "/p/q/r" and .writer_cgroup == "/p/q/r")] | length == 1' \
	"$D/report2.json" >/dev/null || bad "the removed nested cgroup /p/q/r lost its name"

# Probes: all attached; after the restart all reused from the pins.
for r in report1 report2; do
	# 12 probes: seven write handlers (mem_cgroup_write, _reset,
	# _force_empty_write, _hierarchy_write, _swappiness_write,
	# _move_charge_write, _oom_control_write; they replaced the one probe on
	# cgroup_file_write), cgroup_file_open and four registrations.
	jq -e '.health.probes | length == 12 and all(.state == "attached")' "$D/$r.json" >/dev/null ||
		bad "$r: not every probe attached: $(jq -c .health.probes "$D/$r.json")"
	jq -e '.health.map_overflows == 0' "$D/$r.json" >/dev/null || bad "$r: map overflows reported"
done
jq -e '.health.probes | all(.reason | test("reused"))' "$D/report1.json" >/dev/null ||
	bad "report1: the restarted loader did not reuse the pinned links: $(jq -c .health.probes "$D/report1.json")"
for p in twl_usage twl_paths twl_files twl_mem_write twl_mem_reset twl_force_empty twl_hier_write \
	twl_swap_write twl_move_write twl_oomc_write twl_open_exit; do
	grep -qx "$p" "$D/pins.txt" || bad "$p was not pinned under /sys/fs/bpf/twilight/v2"
done

# Values written: the summary per key exactly (comm last min max unlimited
# unit source; "-" for none). Limits: read back after success (stored),
# parsed from the buffer when the write failed or the file stores nothing
# (kmem.limit_in_bytes); "max" is refused on v1 and leaves none; phase 0's
# writes (the previous loader) carry no value.
value_of() {
	jq -r --arg c "$2" '[.usage[] | select(.comm == $c and .op == "write")] |
		if length != 1 then "entries=\(length)" else .[0] |
		if has("value") | not then "-" else .value |
		"\(.last) \(.min // "-") \(.max // "-") \(.unlimited) \(.unit) \(.source)" end end' "$1"
}
check_value() {
	local r=$1 comm=$2 want=$3 got
	got=$(value_of "$D/$r.json" "$comm")
	[ "$got" = "$want" ] && echo "ok: $r: $comm value $got" ||
		bad "$r: $comm value is '$got', want '$want'"
}
check_value report2 twl-hier0 "0 0 0 false number parsed"
check_value report2 twl-swap "30 30 30 false number parsed"
check_value report2 twl-move "0 0 0 false bitmask parsed"
check_value report2 twl-oomw "0 0 0 false number parsed"
check_value report2 twl-swaproot "60 60 60 false number parsed"
check_value report2 twl-sv256 "-1 268435456 268435456 true bytes stored"
check_value report2 twl-svmax "-"
check_value report2 twl-kmemv "0 0 268435456 false bytes parsed"
check_value report2 twl-kmem "104857600 104857600 104857600 false bytes parsed"
check_value report2 twl-tcp "104857600 104857600 104857600 false bytes stored"
check_value report2 twl-limit "209715200 209715200 209715200 false bytes stored"
check_value report2 twl-oldonly "-"
for r in report1 report2; do
	check_value $r twl-soft "33554432 33554432 67108864 false bytes stored"
done
jq -e '[.usage[] | select(.op != "write" and has("value"))] | length == 0' "$D/report2.json" >/dev/null ||
	bad "report2 has a value on a read or a registration"

# Cross-check support: covered and counted as the kernel saw it.
# (missing_if_warned_now: the health.probe_missing answer had kmsg warned now.)
grep -q 'feature memcg_v1.soft_limit covered=1 counted=1 missing_if_warned_now=0' "$D/dump2.err" ||
	bad "soft_limit not covered+counted, or reported missing"
grep -q 'feature memcg_v1.force_empty covered=1 counted=0 missing_if_warned_now=1' "$D/dump2.err" ||
	bad "force_empty (covered, never used) would not be reported as a missing probe"
grep -q 'feature memcg_v1.swapaccount covered=0 counted=0 missing_if_warned_now=0' "$D/dump2.err" ||
	bad "swapaccount (a boot option no probe can see) claimed covered or missing"
grep -q 'feature memcg_v1.memsw covered=1 counted=1' "$D/dump2.err" || bad "memsw not covered+counted"
grep -q 'changed since the first collect: 0$' "$D/dump2.err" || bad "a changed-only collect right after a full one was not empty"

# Privacy: paths hashed, names dropped, counts unchanged.
jq -e '.usage | length > 0 and all((.cgroup == "" or (.cgroup | startswith("h:"))) and (.writer_cgroup | startswith("h:")) and .comm == "")' \
	"$D/report3.json" >/dev/null || bad "report3 (privacy hash/drop) leaks a path or a process name"
[ "$(jq -c '[.usage[] | [.op, .file, .count, .failed]] | sort' "$D/report2.json")" = \
  "$(jq -c '[.usage[] | [.op, .file, .count, .failed]] | sort' "$D/report3.json")" ] ||
	bad "report3 counts differ from report2"

# Instructions the verifier processed per program (the upgraded loader ran
# with --verbose: BPF_LOG_STATS); twl_mem_write must be among them (loaded).
awk '/BEGIN PROG LOAD LOG/ { match($0, /prog .[a-z_0-9]+./); p = substr($0, RSTART + 6, RLENGTH - 7) }
	/processed [0-9]+ insns/ && p != "" { sub(/.*processed/, "processed"); print "verifier: " p ": " $0; p = "" }' \
	"$D/dump0.err" >"$D/verifier.txt"
cat "$D/verifier.txt"
grep -q '^verifier: twl_mem_write: processed ' "$D/verifier.txt" ||
	bad "no verifier statistics for twl_mem_write in dump0.err"

if [ $errors != 0 ]; then
	echo "FAIL: $errors check(s) failed" >&2
	exit 1
fi
echo "PASS: BPF usage counters exact against the workload log"
