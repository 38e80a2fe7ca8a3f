#!/bin/bash
# The real twilight-server binary on a postgresql:// db (the fixture
# "postgresql"'s server, tests/unit/server/store/postgresql/), as an
# operator runs it: it migrates, stores its bootstrap tokens there (the
# admin token lists them), answers /healthz with the schema version; a host
# enrols and reports, and the summary, a feature, readiness and the
# linux-mm export (the API's and `twilight-server export`'s) answer from
# PostgreSQL; no SQLite file is made; it exits 0 on SIGTERM.
set -euo pipefail
SERVER=$1
SRC=${2:?source directory}
URI_FILE=${TWILIGHT_BINARY_DIR:?run with ctest}/postgresql-fixture/uri
[ -f "$URI_FILE" ] || { echo "postgresql: FAIL: no fixture ($URI_FILE)" >&2; exit 1; }
BASE=$(cat "$URI_FILE")
DB=twl_server_$$
URI=${BASE/\/postgres\?//$DB?}
WORK=$(mktemp -d /tmp/twl-pgserver-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	psql -q "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "postgresql: FAIL: $*" >&2
	exit 1
}
D=$WORK/data
psql -q "$BASE" -c "CREATE DATABASE $DB" >/dev/null

"$SERVER" --data-dir "$D" \
	--listen 127.0.0.1:0 --db "$URI" >"$WORK/out" 2>&1 &
PID=$!
PORT=
for _ in $(seq 1 300); do
	PORT=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$WORK/out")
	[ -n "$PORT" ] && break
	kill -0 "$PID" 2>/dev/null || fail "server exited: $(cat "$WORK/out")"
	sleep 0.1
done
[ -n "$PORT" ] || fail "server did not start: $(cat "$WORK/out")"
get() { # path token -> prints HTTP status
	curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$D/ca.pem" \
		${2:+-H "Authorization: Bearer $2"} "https://localhost:$PORT$1"
}
code=$(get /healthz)
[ "$code" = 200 ] || fail "/healthz: $code $(cat "$WORK/body")"
want=$(psql -tA "$URI" -c "SELECT max(version) FROM schema_version")
[ "$(jq -r .schema "$WORK/body")" = "$want" ] || fail "/healthz schema: $(cat "$WORK/body"), want $want"
[ "$(psql -tA "$URI" -c "SELECT count(*) FROM tokens WHERE revoked IS NULL")" = 2 ] ||
	fail "the bootstrap tokens are not in PostgreSQL"
code=$(get /api/v1/tokens "$(cat "$D/admin.token")")
[ "$code" = 200 ] || fail "token list: $code $(cat "$WORK/body")"
[ "$(jq '.tokens | length' "$WORK/body")" = 2 ] || fail "token list: $(cat "$WORK/body")"

# A host enrols and reports (the example report, its times moved to now).
req() { # method path token body -> HTTP status
	curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$D/ca.pem" -X "$1" \
		-H "Authorization: Bearer $3" -H 'Content-Type: application/json' \
		--data-binary "$4" "https://localhost:$PORT$2"
}
HOST=$(jq -r .host.host_id "$SRC/schema/examples/full-v2.json")
[ "$(req POST /api/v1/enroll "$(cat "$D/agent.token")" "{\"host_id\":\"$HOST\"}")" = 200 ] ||
	fail "enrol: $(cat "$WORK/body")"
KEY=$(jq -r .key "$WORK/body")
body=$(jq -c --argjson now "$(date +%s)" '(.sent_time) as $t | walk(if type == "object" then
	with_entries(if (.key | test("^(sent_time|time|first_seen|last_seen)$")) and (.value | type) == "number"
	then .value += ($now - $t) else . end) else . end)' "$SRC/schema/examples/full-v2.json")
code=$(req POST /api/v1/reports "$KEY" "$body")
[ "$code" = 200 ] || [ "$code" = 202 ] || fail "report: $code $(cat "$WORK/body")"

VIEW=$(cat "$D/admin.token")
code=$(get /api/v1/summary "$VIEW")
[ "$code" = 200 ] || fail "summary: $code $(cat "$WORK/body")"
[ "$(jq .hosts.total "$WORK/body")" = 1 ] || fail "summary hosts: $(jq -c .hosts "$WORK/body")"
[ "$(jq '.features[] | select(.id == "memcg_v1.soft_limit") | .hosts_30d' "$WORK/body")" = 1 ] ||
	fail "summary: soft_limit not on the host: $(cat "$WORK/body")"
code=$(get /api/v1/features/memcg_v1.soft_limit "$VIEW")
[ "$code" = 200 ] || fail "feature: $code $(cat "$WORK/body")"
code=$(get "/api/v1/readiness?target=debian-12-6.12" "$VIEW")
[ "$code" = 200 ] || fail "readiness: $code $(cat "$WORK/body")"
[ "$(jq .breaks.count "$WORK/body")" = 1 ] || fail "readiness: the 6.1 host does not break: $(cat "$WORK/body")"
code=$(get "/api/v1/export/linux-mm?format=json" "$VIEW")
[ "$code" = 200 ] || fail "export: $code $(cat "$WORK/body")"
[ "$(jq .fleet.hosts "$WORK/body")" = 1 ] || fail "export fleet: $(jq -c .fleet "$WORK/body")"
cp "$WORK/body" "$WORK/api-export.json"
"$SERVER" export --data-dir "$D" --db "$URI" --format json --output "$WORK/cli-export.json" 2>"$WORK/cli.err" ||
	fail "twilight-server export on PostgreSQL: $(cat "$WORK/cli.err")"
[ "$(jq -S 'del(.generated)' "$WORK/cli-export.json")" = "$(jq -S 'del(.generated)' "$WORK/api-export.json")" ] ||
	fail "the export command and the API differ: $(diff <(jq -S . "$WORK/cli-export.json") <(jq -S . "$WORK/api-export.json"))"
[ -e "$D/twilight.db" ] && fail "an SQLite file was made beside the PostgreSQL store"
kill -TERM "$PID"
wait "$PID" || fail "server did not exit 0 on SIGTERM: $(cat "$WORK/out")"
PID=
echo "postgresql: ok"
