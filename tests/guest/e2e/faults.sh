#!/bin/bash
# tests/guest/e2e/faults.sh OUTDIR: fault tests of the fleet, in
# one run of two guests with short agent backoff (base 0.2 s, cap 2 s):
#   fault-a  containers workload; its agent is killed -9 after phase 1,
#            phase 2 runs with no agent, the agent is started and killed
#            -9 again during its start-up, then restarted
#   fault-b  OOM-notifier workload; the host applies one fault per phase,
#            starting it when the guest announces the phase (the guest waits
#            PHASE_DELAY s before its workload, and the host checks that the
#            fault was in place before the workload ran):
#     1  server killed -9 right after the workload, while agents send, and
#        restarted
#     2  server down during the phase and 8 s more (agents spool, retry),
#        then restarted: the warning made while it was down arrives
#     3  fault-b's link cut (QMP set_link off) during the phase, restored
#        8 s later: nothing of the phase arrives while cut, all of it after
#     4  the server's data directory (a 16 MiB tmpfs) filled up: 5xx
#        answers, nothing of the phase stored, the server stays up; space
#        freed: delivered, SQLite integrity_check ok
#     census  fault-b's host key revoked: the agent keeps its batch, enrols
#        again, delivers; the host then has 2 keys, 1 revoked
# Ends with the exact checks of the end-to-end test: every host's features
# and warning counts equal its workload log, fleet totals match, 2 hosts.
set -uo pipefail
OUT=${1:?usage: faults.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../fleet/fleet.sh"
. "$HERE/../../fleet/check.sh"
T_ALL=$(date +%s)
DATA=$OUT/data
MOUNTED=0
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
cleanup() {
	fleet_stop_all
	[ $MOUNTED = 0 ] || umount "$DATA" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# not_yet NAME REGEX: the guest has not printed REGEX yet (the fault was in
# place before the guest's workload).
not_yet() {
	! fleet_console_has "$1" "$2" ||
		fail "harness too slow: '$2' was printed before the fault was in place (raise PHASE_DELAY)"
}
# warnings_of FEATURE: kernel warnings stored for FEATURE (fleet-wide; the
# two guests' workloads warn about different features).
warnings_of() {
	fleet_api "/api/v1/features/$1" | jq -r .warnings.count
}
# uses_by FEATURE PROCESS: BPF uses stored for FEATURE by PROCESS ("" if none).
uses_by() {
	fleet_api "/api/v1/features/$1" | jq -r --arg p "$2" '.processes[] | select(.process == $p) | .uses'
}
# reads_by FEATURE PROCESS: BPF reads stored for FEATURE by PROCESS, apart
# from its uses ("" if none).
reads_by() {
	fleet_api "/api/v1/features/$1" | jq -r --arg p "$2" '.processes[] | select(.process == $p) | .reads'
}
metric_5xx() {
	fleet_api /metrics | sed -n 's/^twilight_http_responses_total{code="5xx"} //p'
}

[ "$(id -u)" = 0 ] || fail "needs root (mounts a tmpfs for the server's data directory)"
rm -rf "$OUT/guests" "$OUT/server.log"
mountpoint -q "$DATA" && umount "$DATA"
rm -rf "$DATA"
mkdir -p "$DATA"
mount -t tmpfs -o size=16m,mode=0700 twilight-fault-data "$DATA" || fail "cannot mount a tmpfs on $DATA"
MOUNTED=1
fleet_init "$OUT" || fail "setup"
fleet_build "${FLEET_BUILD:-${TWILIGHT_BINARY_DIR:-$OUT}/fleet-rel}" || fail "build"
fleet_kernel || fail "kernel"
fleet_initramfs || fail "initramfs"
fleet_server_start "$DATA" "$FLEET_SERVER" || fail "server"
echo "server on 127.0.0.1:$FLEET_PORT, data on a 16 MiB tmpfs $DATA"

BACKOFF=("backoff-base = 200ms" "backoff-cap = 2s")
# fault-a's agent logs at debug level: a failure shows each send's
# schedule and back-off beside the threads' stacks (tests/fleet/guest.sh,
# fail()). Its restart once "hung" for 600 s: the guest's wait counted the
# "started:" lines since boot, and the start killed before its own never
# wrote one; the wait now counts this start's (kill_at_start checks it).
fleet_guest_start fault-a containers N=5 AGENT_KILL=1 PHASE_DELAY=4 -- "${BACKOFF[@]}" "log-level = debug"
fleet_guest_start fault-b oomd N=5 PHASE_DELAY=4 -- "${BACKOFF[@]}"
echo "=== boot to first report (s)"
fleet_wait_hosts 600 fault-a fault-b || fail "not every guest reported"

echo "=== fault 1: server killed -9 while the agents report"
fleet_wait_console fault-b '^FLEET-PHASE 1 end' 600 || fail "fault-b phase 1"
fleet_server_kill9
sleep 1
fleet_server_restart || fail "server restart after kill -9"
fleet_wait_console fault-b '^FLEET-PHASE 1 delivered' 300 || fail "fault-b phase 1 not delivered after the restart"
[ "$(warnings_of memcg_v1.oom_control)" = 1 ] || fail "fault 1: oom_control warnings: '$(warnings_of memcg_v1.oom_control)', want 1"
[ "$(uses_by memcg_v1.oom_control oom-notifier)" = 5 ] ||
	fail "fault 1: oom_control uses by oom-notifier '$(uses_by memcg_v1.oom_control oom-notifier)', want 5 (5 registrations)"
[ "$(reads_by memcg_v1.oom_control oom-notifier)" = 5 ] ||
	fail "fault 1: oom_control reads by oom-notifier '$(reads_by memcg_v1.oom_control oom-notifier)', want 5 (5 opens to register, reads apart from uses)"
echo "fault 1: ok (phase 1 warning stored exactly once, its uses exactly)"

echo "=== fault 2: server down for a while"
fleet_wait_console fault-b '^FLEET-PHASE 2 begin' 300 || fail "fault-b phase 2"
fleet_server_stop
not_yet fault-b '^FLEET-PHASE 2 end'
fleet_wait_console fault-b '^FLEET-PHASE 2 end' 120 || fail "fault-b phase 2 end"
sleep 8
t_up=$(date +%s)
fleet_server_restart || fail "server restart"
fleet_wait_console fault-b '^FLEET-PHASE 2 delivered' 300 || fail "fault-b phase 2 not delivered after the server came back"
first=$(fleet_api "/api/v1/hosts/$(fleet_host_id fault-b)" | jq -r '.features[] | select(.id == "memcg_v1.pressure_level") | .first_used')
[ -n "$first" ] && [ "$first" -le "$t_up" ] ||
	fail "fault 2: pressure_level first_used '$first' is not before the restart ($t_up)"
echo "fault 2: ok (warning made at $first while the server was down, delivered after it came back at $t_up)"

echo "=== fault 3: fault-b's link cut and restored (QMP set_link)"
fleet_wait_console fault-b '^FLEET-PHASE 3 begin' 300 || fail "fault-b phase 3"
fleet_qmp fault-b set_link '{"name":"n0","up":false}' >/dev/null || fail "QMP set_link off"
not_yet fault-b '^FLEET-PHASE 3 end'
fleet_wait_console fault-b '^FLEET-PHASE 3 end' 120 || fail "fault-b phase 3 end"
sleep 8
[ "$(warnings_of memcg_v1.oom_control)" = 1 ] && [ -z "$(uses_by memcg_v1.oom_control oom-tuner)" ] ||
	fail "fault 3: with the link cut the server already has phase 3's data"
fleet_qmp fault-b set_link '{"name":"n0","up":true}' >/dev/null || fail "QMP set_link on"
fleet_wait_console fault-b '^FLEET-PHASE 3 delivered' 300 || fail "fault-b phase 3 not delivered after the link came back"
[ "$(warnings_of memcg_v1.oom_control)" = 2 ] || fail "fault 3: oom_control warnings '$(warnings_of memcg_v1.oom_control)', want 2"
[ "$(uses_by memcg_v1.oom_control oom-tuner)" = 5 ] || fail "fault 3: oom_control uses by oom-tuner '$(uses_by memcg_v1.oom_control oom-tuner)', want 5"
echo "fault 3: ok (nothing arrived while cut, the phase's warning after)"

echo "=== fault 4: the server's data directory fills up"
fleet_wait_console fault-b '^FLEET-PHASE 4 begin' 300 || fail "fault-b phase 4"
e0=$(metric_5xx)
dd if=/dev/zero of="$DATA/filler" bs=64k 2>/dev/null
[ "$(df --output=avail -k "$DATA" | tail -n 1 | tr -d ' ')" -lt 64 ] || fail "the tmpfs did not fill"
not_yet fault-b '^FLEET-PHASE 4 end'
fleet_wait_console fault-b '^FLEET-PHASE 4 end' 120 || fail "fault-b phase 4 end"
sleep 8
curl -s --max-time 5 --cacert "$DATA/ca.pem" "https://127.0.0.1:$FLEET_PORT/healthz" >/dev/null ||
	fail "fault 4: the server does not answer with its disk full"
[ "$(warnings_of memcg_v1.non_hierarchical)" = 0 ] && [ -z "$(uses_by memcg_v1.non_hierarchical flat-batch)" ] ||
	fail "fault 4: phase 4's data was stored with the disk full"
e1=$(metric_5xx)
[ -n "$e0" ] && [ -n "$e1" ] && [ "$e1" -gt "$e0" ] || fail "fault 4: no 5xx answers while the disk was full (5xx before $e0, after $e1)"
rm -f "$DATA/filler"
fleet_wait_console fault-b '^FLEET-PHASE 4 delivered' 300 || fail "fault-b phase 4 not delivered after space returned"
[ "$(warnings_of memcg_v1.non_hierarchical)" = 1 ] || fail "fault 4: non_hierarchical warnings '$(warnings_of memcg_v1.non_hierarchical)', want 1"
[ "$(uses_by memcg_v1.non_hierarchical flat-batch)" = 5 ] || fail "fault 4: non_hierarchical uses by flat-batch '$(uses_by memcg_v1.non_hierarchical flat-batch)', want 5"
ic=$(sqlite3 "$DATA/twilight.db" 'PRAGMA integrity_check' 2>&1)
[ "$ic" = ok ] || fail "fault 4: integrity_check says: $ic"
echo "fault 4: ok ($((e1 - e0)) 5xx answers while full, delivered once space returned, integrity_check ok)"

echo "=== fault 5: fault-b's host key revoked, agent enrols again"
fleet_wait_console fault-b '^FLEET-PHASE census begin' 300 || fail "fault-b census phase"
hid=$(fleet_host_id fault-b) || fail "host id"
seq0=$(fleet_api "/api/v1/hosts/$hid" | jq -r .last_seq)
fleet_api "/api/v1/host-keys/$hid" -X DELETE >/dev/null || fail "revoking fault-b's key"
not_yet fault-b '^FLEET-PHASE census end'
fleet_wait_console fault-b '^FLEET-DONE' 300 || fail "fault-b did not deliver after its key was revoked"
doc=$(fleet_api "/api/v1/hosts/$hid")
[ "$(echo "$doc" | jq -c '[.keys.total, .keys.revoked]')" = "[2,1]" ] ||
	fail "fault 5: host keys $(echo "$doc" | jq -c .keys), want total 2, revoked 1"
seq1=$(echo "$doc" | jq -r .last_seq)
[ "$seq1" -gt "$seq0" ] || fail "fault 5: no batch made after the revocation arrived (last_seq $seq0 -> $seq1)"
echo "fault 5: ok (batch kept, new key issued, batches $((seq0 + 1))..$seq1 delivered with it)"

echo "=== agent kill -9 in fault-a"
fleet_wait_console fault-a '^FLEET-DONE' 600 || fail "fault-a did not finish"
fleet_console_has fault-a '^FLEET-AGENT-KILLED' || fail "fault-a's agent was not killed"
fleet_console_has fault-a '^FLEET-AGENT-KILLED-AT-START' || fail "fault-a's agent was not killed during its start-up"
fleet_console_has fault-a '^FLEET-AGENT-START 3 ' || fail "fault-a's agent was not restarted"
echo "fault-a: agent killed -9 after phase 1, phase 2 ran without it, killed again during its start-up, restarted"

echo "=== exact counts"
fleet_check_host fault-a v1 || fail "fault-a"
fleet_check_host fault-b v1 || fail "fault-b"
fleet_check_fleet fault-a fault-b || fail "fleet totals"
fleet_stop_all
ic=$(sqlite3 "$DATA/twilight.db" 'PRAGMA integrity_check' 2>&1)
[ "$ic" = ok ] || fail "integrity_check after the run says: $ic"
echo "PASS: fleet fault tests in $(($(date +%s) - T_ALL)) s"
