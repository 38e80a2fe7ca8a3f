#!/bin/bash
# A corrupt database, with the real twilight-server binary: at start the
# server checks the database (PRAGMA quick_check), refuses to serve a
# corrupt one with a log line of its own and exit status 1; with
# --no-check-db it serves it, and /healthz turns 503 once report after
# report fails to be stored (it said 200 while every ingest failed).
set -euo pipefail
SERVER=$1
SRC=$2
WORK=$(mktemp -d /tmp/twl-corrupt-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "corrupt_db: FAIL: $*" >&2
	exit 1
}
D=$WORK/data

start() { # extra flags...
	"$SERVER" --data-dir "$D" --listen 127.0.0.1:0 "$@" >"$WORK/out" 2>&1 &
	PID=$!
	PORT=
	for _ in $(seq 1 300); do
		PORT=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$WORK/out")
		[ -n "$PORT" ] && return 0
		kill -0 "$PID" 2>/dev/null || return 1
		sleep 0.1
	done
	fail "server neither started nor exited: $(cat "$WORK/out")"
}
stop() {
	kill -TERM "$PID"
	wait "$PID" || fail "server did not exit 0 on SIGTERM"
	PID=
}
req() { # method path token [body] -> HTTP status
	curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$D/ca.pem" -X "$1" \
		${3:+-H "Authorization: Bearer $3"} ${4:+-H 'Content-Type: application/json' --data-binary "$4"} \
		"https://localhost:$PORT$2"
}

# a sound database first: it starts, says so, and serves
start || fail "a fresh server did not start: $(cat "$WORK/out")"
grep -q "database check: ok" "$WORK/out" || fail "no line for the start-up check: $(cat "$WORK/out")"
[ "$(req GET /healthz "")" = 200 ] || fail "healthz of a sound database"
stop

# corrupt the root page of the (empty) hosts table: opening and the schema
# are fine, every report's first write there fails
root=$(sqlite3 "$D/twilight.db" "SELECT rootpage FROM sqlite_master WHERE name = 'hosts'")
psize=$(sqlite3 "$D/twilight.db" "PRAGMA page_size")
[ -n "$root" ] && [ "$root" -gt 1 ] || fail "no root page for hosts"
head -c "$psize" /dev/urandom | dd of="$D/twilight.db" bs="$psize" seek=$((root - 1)) conv=notrunc status=none

if start; then
	fail "the server serves a corrupt database: $(cat "$WORK/out")"
fi
wait "$PID" && status=0 || status=$?
PID=
[ "$status" = 1 ] || fail "exit status $status for a corrupt database, want 1"
grep -q "failed its integrity check" "$WORK/out" || fail "no log line naming the corruption: $(cat "$WORK/out")"
grep -q "Backup and restore" "$WORK/out" || fail "the log does not say what to do: $(cat "$WORK/out")"

# served anyway: every report fails, and /healthz says so after a few
start --no-check-db || fail "--no-check-db did not start: $(cat "$WORK/out")"
[ "$(req GET /healthz "")" = 200 ] || fail "healthz before any failure"
AGENT=$(cat "$D/agent.token")
HOST=9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7
[ "$(req POST /api/v1/enroll "$AGENT" "{\"host_id\":\"$HOST\"}")" = 200 ] || fail "enrol: $(cat "$WORK/body")"
KEY=$(jq -r .key "$WORK/body")
for i in $(seq 1 8); do
	body=$(jq -c --arg b "$(printf 'dead%028d' "$i")" '.batch_id = $b' "$SRC/schema/examples/full.json")
	st=$(req POST /api/v1/reports "$KEY" "$body")
	[ "$st" = 500 ] || fail "report $i on a corrupt database: $st $(cat "$WORK/body")"
done
[ "$(req GET /healthz "")" = 503 ] || fail "healthz after 8 failed reports: $(cat "$WORK/body")"
grep -q "could not be stored" "$WORK/body" || fail "healthz does not say why: $(cat "$WORK/body")"
stop
echo "corrupt_db: OK"
