#!/bin/bash
# Zero-configuration start of the real twilight-server binary: an empty data
# directory gets a database, a CA and server certificate (with the default
# names plus --san), admin and enrolment tokens (0600, stored hashed); it
# says that loopback peers are exempt from per-address limits; the server
# answers over TLS >= 1.2 only; `token create|list|revoke` work
# against the running server's database; a restart keeps everything;
# --check-config names a bad option; SIGHUP keeps the catalog and says so; SIGTERM
# exits 0.
set -euo pipefail
SERVER=$1
WORK=$(mktemp -d /tmp/twl-zeroconf-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "zero_config: FAIL: $*" >&2
	exit 1
}
D=$WORK/data

start() {
	"$SERVER" --data-dir "$D" --listen 127.0.0.1:0 --san guest.example --san 10.0.2.2 \
		>"$WORK/out" 2>&1 &
	PID=$!
	PORT=
	for _ in $(seq 1 200); do
		PORT=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$WORK/out")
		[ -n "$PORT" ] && break
		kill -0 "$PID" 2>/dev/null || fail "server exited: $(cat "$WORK/out")"
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "server did not start: $(cat "$WORK/out")"
}
stop() {
	kill -TERM "$PID"
	wait "$PID" || fail "server did not exit 0 on SIGTERM"
	PID=
}
get() { # path token -> prints HTTP status
	curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$D/ca.pem" \
		${2:+-H "Authorization: Bearer $2"} "https://localhost:$PORT$1"
}

start
grep -q "admin token written to $D/admin.token" "$WORK/out" || fail "admin token path not printed: $(cat "$WORK/out")"
grep -q "agent token written to $D/agent.token" "$WORK/out" || fail "agent token path not printed"
grep -q "$D/ca.pem" "$WORK/out" || fail "CA path not printed"
# the loopback exemption from per-address limits is said, with its setting
grep -q "loopback peers are exempt from the per-address limits.*limit-loopback = false" "$WORK/out" ||
	fail "the loopback exemption is not announced: $(cat "$WORK/out")"
for f in twilight.db ca.pem server.pem server.key admin.token agent.token; do
	[ -f "$D/$f" ] || fail "$f was not created"
done
for f in admin.token agent.token server.key ca.key; do
	[ "$(stat -c %a "$D/$f")" = 600 ] || fail "$f has mode $(stat -c %a "$D/$f"), want 600"
done
[ "$(sqlite3 "$D/twilight.db" 'PRAGMA journal_mode')" = wal ] || fail "database is not in WAL mode"
ADMIN=$(cat "$D/admin.token")
AGENT=$(cat "$D/agent.token")
# stored hashed: neither secret appears in the database
sqlite3 "$D/twilight.db" .dump | grep -F "$ADMIN" >/dev/null && fail "admin token stored in clear"
[ "$(sqlite3 "$D/twilight.db" "SELECT count(*) FROM tokens WHERE role IN ('admin','agent')")" = 2 ] ||
	fail "bootstrap tokens missing from the database"

openssl verify -CAfile "$D/ca.pem" "$D/server.pem" >/dev/null || fail "server.pem is not signed by ca.pem"
san=$(openssl x509 -in "$D/server.pem" -noout -ext subjectAltName)
for n in DNS:localhost "IP Address:127.0.0.1" "IP Address:0:0:0:0:0:0:0:1" DNS:guest.example "IP Address:10.0.2.2"; do
	echo "$san" | grep -qF "$n" || fail "certificate lacks $n: $san"
done

[ "$(get /healthz)" = 200 ] || fail "healthz over TLS failed"
curl -s -o /dev/null --tlsv1.1 --tls-max 1.1 --cacert "$D/ca.pem" "https://localhost:$PORT/healthz" &&
	fail "TLS 1.1 was accepted"
[ "$(get /metrics)" = 401 ] || fail "metrics without token not 401"
[ "$(get /metrics "$ADMIN")" = 200 ] || fail "metrics with the admin token not 200"
[ "$(get /metrics "$AGENT")" = 403 ] || fail "the enrolment token may read metrics"

# token CLI against the running server's database
TOK=$("$SERVER" token create --name ci-viewer --role viewer --data-dir "$D" 2>/dev/null)
[ ${#TOK} = 69 ] || fail "token create printed '$TOK'"
[ "$(get /metrics "$TOK")" = 200 ] || fail "a token made by the CLI is not accepted"
"$SERVER" token list --data-dir "$D" | grep -q "viewer *ci-viewer" || fail "token list lacks ci-viewer"
ID=$("$SERVER" token list --data-dir "$D" | awk '$3 == "ci-viewer" {print $1}')
"$SERVER" token revoke "$ID" --data-dir "$D" >/dev/null || fail "token revoke failed"
[ "$(get /metrics "$TOK")" = 401 ] || fail "a revoked token is still accepted"
"$SERVER" token create --name x --role root --data-dir "$D" >/dev/null 2>&1 && fail "role root accepted"

# restart: nothing regenerated, tokens still valid
sum_before=$(md5sum "$D/ca.pem" "$D/server.pem" "$D/admin.token")
stop
start
[ "$(md5sum "$D/ca.pem" "$D/server.pem" "$D/admin.token")" = "$sum_before" ] || fail "restart regenerated files"
grep -q "token written" "$WORK/out" && fail "restart wrote new tokens"
[ "$(get /metrics "$ADMIN")" = 200 ] || fail "admin token invalid after restart"
# SIGHUP does not end the server; without a catalog.json it says the
# catalog stays
HUPLINE="SIGHUP: catalog version [0-9]+ stays: .*/catalog.json does not exist"
kill -HUP "$PID"
for _ in $(seq 1 50); do grep -qE "$HUPLINE" "$WORK/out" && break; sleep 0.1; done
grep -qE "$HUPLINE" "$WORK/out" || fail "no log line for SIGHUP: $(cat "$WORK/out")"
kill -0 "$PID" 2>/dev/null || fail "SIGHUP ended the server"
[ "$(get /metrics "$ADMIN")" = 200 ] || fail "no answer after SIGHUP"
stop

# --check-config
"$SERVER" --data-dir "$D" --check-config | grep -qx "listen = 127.0.0.1:8443" || fail "--check-config output"
echo "max-body = huge" >"$WORK/bad.conf"
if "$SERVER" --data-dir "$D" --config "$WORK/bad.conf" --check-config >"$WORK/bad.out" 2>&1; then
	fail "--check-config accepted max-body = huge"
fi
grep -q "max-body" "$WORK/bad.out" || fail "--check-config did not name max-body: $(cat "$WORK/bad.out")"
"$SERVER" --data-dir "$D" --batch-days 10 --check-config >/dev/null 2>&1 && fail "batch-days 10 accepted"

# A PostgreSQL URI's password is never printed: not by --check-config, nor
# by a start that cannot reach the database (nothing listens on port 1).
PGURI='postgresql://twl:hunter2@127.0.0.1:1/twl?connect_timeout=5'
"$SERVER" --data-dir "$D" --db "$PGURI" --check-config >"$WORK/pg.out" 2>&1 ||
	fail "--check-config refused a postgresql:// db: $(cat "$WORK/pg.out")"
grep -qx 'db = postgresql://twl:\*\*\*@127.0.0.1:1/twl?connect_timeout=5' "$WORK/pg.out" ||
	fail "--check-config did not show the URI redacted: $(cat "$WORK/pg.out")"
if "$SERVER" --data-dir "$D" --db "$PGURI" \
	>"$WORK/pg-start.out" 2>&1; then
	fail "started without its database"
fi
grep -q 'cannot open database postgresql://twl:\*\*\*@127.0.0.1:1/' "$WORK/pg-start.out" ||
	fail "the failed start did not name the database: $(cat "$WORK/pg-start.out")"
if grep -q hunter2 "$WORK/pg.out" "$WORK/pg-start.out"; then
	fail "a password printed: $(grep -h hunter2 "$WORK/pg.out" "$WORK/pg-start.out")"
fi
echo "zero_config: OK"
