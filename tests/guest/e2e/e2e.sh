#!/bin/bash
# tests/guest/e2e/e2e.sh OUTDIR: the fleet end to end, headless.
#
# Builds the guest programs without sanitizers (FLEET_BUILD, default
# $TWILIGHT_BINARY_DIR/fleet-rel, shared with faults.sh), takes the
# patched kernel from kernel/build's cache, starts twilight-server on a
# fresh data directory (127.0.0.1, zero configuration plus --san 10.0.2.100
# for the guests) and boots three guests, each running twilight-agent over
# TLS through guestfwd:
#   fleet-containers  v1 memory, docker/containerd-style cgroups: tcp and
#                     soft limits, kmem limit, move_charge
#   fleet-oomd        v1 memory, an OOM-notifier daemon: oom_control and
#                     pressure_level eventfds, a direct oom_control write,
#                     use_hierarchy=0; a monitoring daemon that only reads
#                     the kmem.tcp and soft limit files of every cgroup;
#                     and the catalog probe (catalog-probe.sh)
#   fleet-v2          pure cgroup v2, no deprecated use
# Then asserts through the API, with the admin token, that every host's
# features and warning counts equal what its workload did (from the
# workload's own log lines on the serial console, never from the agent),
# that the fleet-wide warning total per feature matches, that each guest is
# a distinct host and that the v2 guest reports nothing deprecated; that
# each host's kinds of use (configures, listens, reads only, warned) are
# its workload's: the monitoring guest is listed as only reading the
# features it read and never among their users, oom_control's writes and
# registrations are configuring and listening apart; then that a catalog
# pushed through the server makes the running fleet-oomd agent recognise
# a kernel text it reported as unknown before (catalog-probe.sh); then
# that the linux-mm export of the run's database equals the golden file
# export.golden (check_export); then that a version 1 report, beside the
# guests' version 2, is still stored.
# Prints boot-to-first-report per guest and the whole time.
set -uo pipefail
OUT=${1:?usage: e2e.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../fleet/fleet.sh"
. "$HERE/../../fleet/check.sh"
. "$HERE/catalog-probe.sh"
T_ALL=$(date +%s)
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# replay_v1: an agent of the previous wire version, beside the guests'
# version 2 reports: schema/examples/full.json (v1, catalog version 1)
# under a fresh host id, enrolled and posted through the real API, must be
# stored with its counts. Run after the fleet totals: its warnings would
# change them.
replay_v1() {
	local hid=00000000000000000000000000000000000000000000000000000000000000f1
	local base="https://127.0.0.1:$FLEET_PORT" key doc got
	key=$(curl -sS --fail-with-body --max-time 20 --cacert "$FLEET_DATA/ca.pem" \
		-H "Authorization: Bearer $(tr -d '\n' <"$FLEET_DATA/agent.token")" \
		-H 'Content-Type: application/json' \
		-d "{\"host_id\": \"$hid\", \"hostname\": \"replayed-v1\"}" \
		"$base/api/v1/enroll" | jq -r .key) || return 1
	[ -n "$key" ] && [ "$key" != null ] || { echo "replay_v1: no key from enrol" >&2; return 1; }
	doc=$(jq -c --arg h "$hid" 'if .v != 1 then error("not a v1 example") else . end
		| .host.host_id = $h | .host.hostname = "replayed-v1"' "$HERE/../../../schema/examples/full.json") || return 1
	curl -sS --fail-with-body --max-time 20 --cacert "$FLEET_DATA/ca.pem" \
		-H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
		-d "$doc" "$base/api/v1/reports" >/dev/null || return 1
	got=$(fleet_api "/api/v1/hosts/$hid" | jq -c '[.catalog_version,
		([.features[] | select(.id == "memcg_v1.soft_limit" or .id == "memcg_v1.oom_control")
		  | [.id, .uses]] | sort)]') || return 1
	echo "v1 replay: $got"
	[ "$got" = '[1,[["memcg_v1.oom_control",4],["memcg_v1.soft_limit",12]]]' ] ||
		{ echo "replay_v1: expected catalog 1, oom_control 4 and soft_limit 12 uses" >&2; return 1; }
}
# check_export: `twilight-server export` (the linux-mm text, host names and
# values shown) of this run's database, with every date made YYYY-MM-DD
# (the only part that changes from run to run: the counts are the
# workloads', host ids are not printed), equals export.golden. After the
# catalog update (the test feature is in it), before the v1 replay (its
# fixed times would leave the 30-day window as the years pass).
# TWILIGHT_REGENERATE=1 rewrites export.golden from this run; review its
# diff before committing it.
check_export() {
	local got=$OUT/export.txt golden=$HERE/export.golden
	"$FLEET_SERVER_BIN" export --data-dir "$FLEET_DATA" --show-hosts --show-values 2>"$OUT/export.err" |
		sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}/YYYY-MM-DD/g' >"$got"
	[ "${PIPESTATUS[0]}" = 0 ] || { cat "$OUT/export.err" >&2; return 1; }
	if [ -n "${TWILIGHT_REGENERATE:-}" ]; then
		cp "$got" "$golden" || return 1
		echo "export: rewrote $golden (TWILIGHT_REGENERATE)"
		return 0
	fi
	diff -u "$golden" "$got" >&2 ||
		{ echo "check_export: the export differs from $golden (TWILIGHT_REGENERATE=1 rewrites it)" >&2; return 1; }
	echo "export: equals $(basename "$golden") ($(wc -l <"$got") lines)"
}
# check_monitor NAME: the workload of guest NAME must have configured and
# listened to oom_control and only read the kmem.tcp and soft limit
# features (else the checks below would prove nothing); the server lists it
# as reading those, not using them, and every host list per feature is the
# workloads'.
check_monitor() {
	local name=$1 flags f
	shift
	flags=$(fleet_expected_flags "$name") || return 1
	grep -qx 'memcg_v1.oom_control true true false true' <<<"$flags" ||
		{ echo "check_monitor: $name did not both configure and listen to oom_control" >&2; return 1; }
	for f in memcg_v1.kmem_tcp_limit memcg_v1.kmem_tcp_usage memcg_v1.soft_limit; do
		grep -qx "$f false false true false" <<<"$flags" ||
			{ echo "check_monitor: $name did not only read $f" >&2; return 1; }
		fleet_check_host_lists $f "$@" || return 1
	done
	fleet_check_host_lists memcg_v1.oom_control "$@"
}
trap 'fleet_stop_all' EXIT
trap 'exit 130' INT TERM

rm -rf "$OUT/data" "$OUT/guests" "$OUT/server.log"
mkdir -p "$OUT"
fleet_init "$OUT" || fail "setup"
fleet_build "${FLEET_BUILD:-${TWILIGHT_BINARY_DIR:-$OUT}/fleet-rel}" || fail "build"
fleet_kernel || fail "kernel"
fleet_initramfs || fail "initramfs"
fleet_server_start "$OUT/data" "$FLEET_SERVER" || fail "server"
echo "server on 127.0.0.1:$FLEET_PORT, data $OUT/data"

GUESTS="fleet-containers fleet-oomd fleet-v2"
T_BOOT=$(date +%s)
fleet_guest_start fleet-containers containers N=5
fleet_guest_start fleet-oomd oomd N=5 MONITOR=1 CATALOG_PROBE=1 -- "catalog-interval = 2s"
fleet_guest_start fleet-v2 v2 N=5
echo "=== boot to first report (s, from QEMU start to the host appearing in the API)"
fleet_wait_hosts 600 $GUESTS | tee "$OUT/first-report.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail "not every guest reported"
for g in fleet-containers fleet-v2; do
	fleet_wait_console $g '^FLEET-DONE' 900 || fail "guest $g did not finish its workload"
done
fleet_wait_console fleet-oomd '^FLEET-CATALOG-WAIT' 900 || fail "fleet-oomd did not finish its workload and probe-1"
echo "all guests done $(($(date +%s) - T_BOOT)) s after boot"

echo "=== checks"
fleet_check_host fleet-containers v1 || fail "fleet-containers"
fleet_check_host fleet-oomd v1 || fail "fleet-oomd"
fleet_check_host fleet-v2 v2 || fail "fleet-v2"
[ -z "$(fleet_expected fleet-v2)" ] || fail "the v2 workload was expected to cause warnings"
fleet_check_fleet $GUESTS || fail "fleet totals"
for g in $GUESTS; do
	fleet_check_kinds $g || fail "$g: kinds of use"
done
check_monitor fleet-oomd $GUESTS || fail "the monitoring daemon's reads and oom_control's kinds"
echo "=== catalog update"
probe_check_before fleet-oomd || fail "the probe text before the catalog update"
NEWER=$(probe_catalog "$HERE/../../../schema/catalog.json" "$OUT/catalog-newer.json") || fail "the newer catalog"
probe_push "$OUT/catalog-newer.json" || fail "reloading catalog $NEWER into the running server by SIGHUP"
fleet_wait_console fleet-oomd '^FLEET-DONE' 900 || fail "fleet-oomd did not finish probe-2"
probe_check_after fleet-oomd "$NEWER" || fail "the probe text after the catalog update"
check_export || fail "the linux-mm export"
replay_v1 || fail "a version 1 report beside the guests' version 2 reports"
fleet_stop_all
trap - EXIT
echo "PASS: fleet end to end in $(($(date +%s) - T_ALL)) s (boot to first report: $(tr '\n' ' ' <"$OUT/first-report.txt"))"
