#!/bin/bash
# The real twilight-server binary on a postgresql:// db (the fixture
# "postgresql"'s server, tests/unit/server/store/postgresql/): it refuses to
# start, in one line naming the incomplete store, and leaves the database
# untouched; export refuses it too. With the test-only override it starts:
# migrates, stores its bootstrap tokens there (the admin token lists them),
# answers /healthz with the schema version, and exits 0 on SIGTERM.
set -euo pipefail
SERVER=$1
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

# Refused: exit 1, the one line, nothing created in the database.
set +e
timeout 60 "$SERVER" --data-dir "$D" --listen 127.0.0.1:0 --db "$URI" >"$WORK/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "exit $rc on a postgresql:// db, want 1: $(cat "$WORK/out")"
grep -q "the PostgreSQL store is incomplete in this build: " "$WORK/out" ||
	fail "no clear refusal: $(cat "$WORK/out")"
[ "$(grep -c . "$WORK/out")" = 1 ] || fail "more than one line: $(cat "$WORK/out")"
[ "$(psql -tA "$URI" -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 0 ] ||
	fail "the refused start touched the database"
set +e
timeout 60 "$SERVER" export --db "$URI" >"$WORK/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "PostgreSQL store is incomplete" "$WORK/out" ||
	fail "export on a postgresql:// db: exit $rc: $(cat "$WORK/out")"

# Allowed by the test-only override.
TWILIGHT_TEST_INCOMPLETE_POSTGRESQL=1 "$SERVER" --data-dir "$D" \
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
[ -e "$D/twilight.db" ] && fail "an SQLite file was made beside the PostgreSQL store"
kill -TERM "$PID"
wait "$PID" || fail "server did not exit 0 on SIGTERM: $(cat "$WORK/out")"
PID=
echo "postgresql: ok"
