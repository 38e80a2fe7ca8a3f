#!/bin/bash
# Two twilight-server processes on one PostgreSQL database under the load
# of pg_fault_client (agents that resend every batch not acknowledged,
# under its batch id, to the other server), through three faults:
#   a. kill -9 of one server mid-load: the agents go on with the other;
#   b. PostgreSQL restarted with a fast shutdown mid-load;
#   c. the disk of the database's tablespace full mid-load, then freed.
# After each: the database holds exactly what the agents were told was
# acknowledged (batches, warnings, usage rows and counts, the rollups'
# sums), acknowledged batches resent are duplicates, and after b and c
# both servers ingest again without a restart (their writer reconnects).
#
# A private PostgreSQL (the fixture's start and stop scripts, its own
# directory and socket) runs in a private mount namespace (unshare -m, as
# root), where its tablespace is a 48 MB tmpfs seen by nothing else on
# the machine; it is stopped at the end, which ends the namespace.
set -euo pipefail
SERVER=$1
CLIENT=$2
FIXTURE=$3 # the directory of pg-fixture-start.sh and pg-fixture-stop.sh
AGENTS=8
W=$(mktemp -d /tmp/twl-pgf-XXXXXX)
chmod 711 "$W" # PostgreSQL runs as nobody
PG=$W/pg
TS=$W/ts
P1= P2= PID1= PID2= CPID=
fail() {
	echo "pg_faults: FAIL: $*" >&2
	for f in "$W"/s1.log "$W"/s2.log "$W"/client.err; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
	done
	exit 1
}
cleanup() {
	set +e
	for p in $CPID $PID1 $PID2; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -d "$PG" ] && sh "$FIXTURE/pg-fixture-stop.sh" "$PG"
	rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || fail "needs root: a private mount namespace for the tmpfs"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
in_ns() { nsenter -t "$(head -n 1 "$PG/data/pg/postmaster.pid")" -m -- "$@"; }
pg_in_ns() { in_ns setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# --- the private PostgreSQL, its tablespace on a tmpfs in its namespace
mkdir -p "$TS"
unshare -m --propagation private sh -c "
	mount -t tmpfs -o size=48m,mode=0700,uid=$(id -u nobody),gid=$(id -g nobody) twl-pgf '$TS' &&
	exec sh '$FIXTURE/pg-fixture-start.sh' '$PG'" >/dev/null ||
	fail "no private PostgreSQL on a tmpfs (unshare -m, mount -t tmpfs)"
mountpoint -q "$TS" && fail "the tmpfs is visible outside the namespace"
in_ns mountpoint -q "$TS" || fail "no tmpfs in PostgreSQL's namespace"
BASE=$(cat "$PG/uri")
URI=${BASE/\/postgres\?//twl?}
sql() { psql -X -q -tA -v ON_ERROR_STOP=1 "$@"; }
sql "$BASE" -c "CREATE TABLESPACE small LOCATION '$TS'"
sql "$BASE" -c "CREATE DATABASE twl TABLESPACE small"

cat >"$W/conf" <<CONF
host-rate = 1000000
host-burst = 1000000
enroll-rate = 1000000
enroll-burst = 1000000
threads = 2
CONF
start_server() { # N -> sets PIDN, PN
	local n=$1 pid port=
	"$SERVER" --data-dir "$W/s$n" \
		--config "$W/conf" --listen 127.0.0.1:0 --db "$URI" \
		>"$W/s$n.out" 2>>"$W/s$n.log" &
	pid=$!
	for _ in $(seq 1 300); do
		port=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$W/s$n.out")
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || fail "server $n exited: $(cat "$W/s$n.out")"
		sleep 0.1
	done
	[ -n "$port" ] || fail "server $n did not start"
	eval "PID$n=$pid P$n=$port"
}
start_server 1
start_server 2

acked() { sed -n 's/^acked \([0-9]*\) .*/\1/p' "$W/progress" 2>/dev/null || true; }
wait_for() { # WHAT N: until acked() (or enospc()) >= N, at most 60 s
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		[ "$($1)" -ge "$2" ] 2>/dev/null && return 0
		kill -0 "$CPID" 2>/dev/null || fail "the client exited: $(cat "$W/client.err")"
		sleep 0.1
	done
	fail "$1 did not reach $2 in 60 s (now $($1))"
}

ACKED=0 SUM=0
# The database against the acknowledged batches of every phase so far.
check_totals() { # PHASE
	local got want
	got=$(sql "$URI" -F ' ' -c "SELECT
		(SELECT count(*) FROM batches),
		(SELECT count(*) FROM warnings),
		(SELECT count(*) FROM usage),
		(SELECT coalesce(sum(count), 0) FROM usage),
		(SELECT coalesce(sum(uses), 0) FROM feature_host),
		(SELECT coalesce(sum(warnings), 0) FROM feature_host),
		(SELECT coalesce(sum(uses), 0) FROM feature_day),
		(SELECT coalesce(sum(warnings), 0) FROM feature_day)")
	want="$ACKED $((2 * ACKED)) $((4 * ACKED)) $((4 * SUM)) $((4 * SUM)) $((2 * ACKED)) $((4 * SUM)) $((2 * ACKED))"
	[ "$got" = "$want" ] || fail "$1: the database holds (batches warnings usage-rows usage-sum" \
		"feature_host.uses .warnings feature_day.uses .warnings) $got, the acknowledged batches make $want"
	echo "pg_faults: $1: exact: $got"
}

# PHASE NAME FAULT: load, the fault once 100 batches are acknowledged,
# 100 more acknowledged after it, then drain and compare.
phase() {
	local n=$1 name=$2 fault=$3 res a rc
	"$CLIENT" "$n" "$AGENTS" "$W/s1/agent.token" "$W/progress" \
		"https://127.0.0.1:$P1" "$W/s1/ca.pem" "https://127.0.0.1:$P2" "$W/s2/ca.pem" \
		>"$W/client.out" 2>"$W/client.err" &
	CPID=$!
	wait_for acked 100
	$fault
	wait_for acked $(($(acked) + 100))
	kill -TERM "$CPID"
	rc=0
	wait "$CPID" || rc=$?
	CPID=
	res=$(grep '^RESULT' "$W/client.out") || fail "$name: the client exited $rc: $(cat "$W/client.err")"
	echo "pg_faults: $name: ${res#RESULT }"
	a=$(echo "$res" | sed 's/.* acked=\([0-9]*\) .*/\1/')
	ACKED=$((ACKED + a))
	SUM=$((SUM + $(echo "$res" | sed 's/.* seq_sum=\([0-9]*\) .*/\1/')))
	check_totals "$name"
	[ "$rc" = 0 ] || fail "$name: the client failed: $(cat "$W/client.err")"
	[ "$(echo "$res" | sed 's/.* failed=\([0-9]*\) .*/\1/')" -gt 0 ] ||
		fail "$name: no request failed: the fault missed the load"
	rm -f "$W/progress"
}

fault_kill() { # the client killed server 1 right after its 50th ack
	wait "$PID1" 2>/dev/null && fail "server 1 was not killed"
	PID1=
}
KILL=$PID1:50 phase 1 "a. kill -9 of one server" fault_kill
kill -0 "$PID2" || fail "server 2 died"
start_server 1

fault_restart() {
	pg_in_ns "$bin/pg_ctl" -D "$PG/data/pg" -l "$PG/data/log" -m fast -w -t 60 restart \
		>/dev/null || fail "pg_ctl restart"
}
phase 2 "b. PostgreSQL restarted (fast)" fault_restart
kill -0 "$PID1" && kill -0 "$PID2" || fail "a server exited when PostgreSQL restarted"
for n in 1 2; do
	grep -q "connected again" "$W/s$n.log" || fail "server $n: no reconnection logged"
done

enospc() { grep -c "No space left on device" "$PG/data/log" || true; }
fault_full() { # full until PostgreSQL failed 20 times for want of space
	local e0
	e0=$(enospc)
	in_ns dd if=/dev/zero of="$TS/filler" bs=1M 2>/dev/null && fail "the tmpfs did not fill"
	wait_for enospc $((e0 + 20))
	in_ns rm "$TS/filler"
}
phase 3 "c. tablespace disk full" fault_full
kill -0 "$PID1" && kill -0 "$PID2" || fail "a server exited when the disk was full"
kill -TERM "$PID1" "$PID2"
wait "$PID1" || fail "server 1 did not exit 0 on SIGTERM"
wait "$PID2" || fail "server 2 did not exit 0 on SIGTERM"
PID1= PID2=
echo "pg_faults: ok"
