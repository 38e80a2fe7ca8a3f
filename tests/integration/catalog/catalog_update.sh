#!/bin/bash
# A catalog update pushed through the server reaches a running agent:
#  1. `twilight-server catalog check` accepts the shipped catalog, refuses a
#     broken one (exit 1, naming the record and field) and a missing file.
#  2. A server with the compiled-in catalog and an agent reading a FIFO (in
#     /dev/kmsg record format, not this machine's /dev/kmsg): a kernel
#     record (facility 0) with a text the catalog lacks arrives as an
#     unknown text.
#  3. The server restarts with a newer data-directory catalog.json that
#     lists the text: it serves it (version, ETag, 304), re-matches the
#     stored unknown text, and the agent -- the same process -- fetches it,
#     keeps it in its state directory and reports the same text from the
#     kernel as a warning of the feature, with the new catalog_version.
#     The same text written from user space (facility 1) stays ignored.
#  4. `twilight-server export` loads the same catalog.json: a feature only
#     it lists is accepted by --feature and named in the export.
#  5. `twilight-server export` on the data directory reads the catalog the
#     server serves (the newer one renames a feature): its text equals
#     GET /api/v1/export/linux-mm's.
#  6. SIGHUP reloads catalog.json in the running server: broken or older
#     files keep the current catalog, a valid newer one is served, re-matches
#     a stored unknown text, marks the kept answers (computed with the
#     former catalog) and reaches the agent.
set -euo pipefail
SERVER=$1
AGENT=$2
SRC=$3
WORK=$(mktemp -d /tmp/twl-catalog-XXXXXX)
SPID= APID=
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null && wait "$APID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	exec 3>&- 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "catalog_update: FAIL: $*" >&2
	for f in server.out agent.out; do
		[ -f "$WORK/$f" ] && { echo "--- $f" >&2; tail -n 30 "$WORK/$f" >&2; }
	done
	exit 1
}
D=$WORK/data
TEXT="twilight-test: memory.twl_probe is deprecated and will be removed"
TEXT2="twilight-test: memory.twl_probe2 is deprecated and will be removed"
NEWID=memcg_v1.twl_probe2 # a feature only the newer catalog has
SHIPPED=$(jq .version "$SRC/schema/catalog.json")
NEWER=$((SHIPPED + 1))

# 1. catalog check
"$SERVER" catalog check "$SRC/schema/catalog.json" >"$WORK/check" 2>&1 ||
	fail "the shipped catalog is refused: $(cat "$WORK/check")"
grep -q "valid catalog version $SHIPPED" "$WORK/check" || fail "check output: $(cat "$WORK/check")"
jq '(.features[] | select(.id == "memcg_v1.soft_limit") | .messages[0].level) = 9' \
	"$SRC/schema/catalog.json" >"$WORK/bad.json"
rc=0
"$SERVER" catalog check "$WORK/bad.json" >"$WORK/check" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a broken catalog: exit $rc, want 1"
grep -q "memcg_v1.soft_limit.*messages\[0\].level" "$WORK/check" ||
	fail "the error does not name the record and field: $(cat "$WORK/check")"
rc=0
"$SERVER" catalog check "$WORK/absent.json" >"$WORK/check" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a missing file: exit $rc, want 1"

TITLE="Soft limit, as catalog $NEWER names it"
jq --arg t "$TEXT" --arg t2 "$TEXT2" --arg id "$NEWID" --argjson v "$NEWER" --arg title "$TITLE" '.version = $v |
	(.features[] | select(.id == "memcg_v1.soft_limit") | .messages) +=
	[{"text": $t, "match": "exact", "level": 4}] |
	.features += [.features[] | select(.id == "memcg_v1.soft_limit") |
		.id = $id | .title = "Probe knob (memory.twl_probe2)" |
		.files = ["memory.twl_probe2"] | .value_name = "twl_probe2" |
		.messages = [{"text": $t2, "match": "exact", "level": 4}]] |
	(.features[] | select(.id == "memcg_v1.soft_limit") | .title) = $title' \
	"$SRC/schema/catalog.json" >"$WORK/newer.json"
"$SERVER" catalog check "$WORK/newer.json" >/dev/null 2>&1 || fail "the newer catalog is refused"

start_server() { # listen address
	"$SERVER" --data-dir "$D" --listen "$1" >>"$WORK/server.out" 2>&1 &
	SPID=$!
	local n
	n=$(grep -c "listening on" "$WORK/server.out" || true)
	for _ in $(seq 1 300); do
		[ "$(grep -c "listening on" "$WORK/server.out" || true)" -gt "$n" ] && break
		kill -0 "$SPID" 2>/dev/null || fail "server exited"
		sleep 0.1
	done
	PORT=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$WORK/server.out" | tail -n 1)
	[ -n "$PORT" ] || fail "server did not start"
}
get() { # path token [extra curl args] -> HTTP status; body in $WORK/body
	local p=$1 t=$2
	shift 2
	curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' --cacert "$D/ca.pem" \
		-H "Authorization: Bearer $t" "$@" "https://localhost:$PORT$p"
}
sql() { sqlite3 -cmd ".timeout 5000" "$D/twilight.db" "$1"; }
wait_for() { # what command...
	local what=$1
	shift
	for _ in $(seq 1 300); do
		"$@" && return 0
		kill -0 "$APID" 2>/dev/null || fail "the agent exited while waiting for $what"
		sleep 0.1
	done
	fail "timed out waiting for $what"
}

# 2. the compiled-in catalog on both sides
start_server 127.0.0.1:0
ADMIN=$(cat "$D/admin.token")
[ "$(get /api/v1/catalog "$ADMIN")" = 200 ] || fail "GET /api/v1/catalog"
[ "$(jq .version "$WORK/body")" = "$SHIPPED" ] || fail "served version $(jq .version "$WORK/body")"
[ "$(get "/api/v1/agent/catalog?have=$SHIPPED" "$(cat "$D/agent.token")")" = 204 ] ||
	fail "an agent with the server's version is not told 204"
[ "$(get /api/v1/agent/catalog "$ADMIN")" = 403 ] || fail "the agent route admits an admin"

mkfifo "$WORK/kmsg"
exec 3<>"$WORK/kmsg" # held open: the agent never sees the end of it
mkdir -p "$WORK/state"
cat >"$WORK/agent.conf" <<CONF
server-url = https://localhost:$PORT
ca-file = $D/ca.pem
enroll-token-file = $D/agent.token
state-dir = $WORK/state
spool-dir = $WORK/state/spool
kmsg-path = $WORK/kmsg
journal = false
bpf = false
batch-interval = 1s
catalog-interval = 1s
log-level = debug
CONF
"$AGENT" -c "$WORK/agent.conf" >"$WORK/agent.out" 2>&1 &
APID=$!
ts=$(($(date +%s) * 1000000))
printf '4,1000,%s,-;%s\n' "$ts" "$TEXT" >&3
unknown_stored() { [ "$(sql "SELECT count(*) FROM unknown_deprecations WHERE text = '$TEXT'")" = 1 ]; }
wait_for "the unknown text at the server" unknown_stored
[ "$(sql "SELECT count(*) FROM warnings WHERE feature_id = 'memcg_v1.soft_limit'")" = 0 ] ||
	fail "a warning before the catalog knew the text"

# 3. the newer catalog in the server's data directory; the agent keeps running
kill -TERM "$SPID"
wait "$SPID" || fail "server did not exit 0 on SIGTERM"
SPID=
cp "$WORK/newer.json" "$D/catalog.json"
start_server "127.0.0.1:$PORT"
grep -q "catalog version $NEWER from $D/catalog.json" "$WORK/server.out" ||
	fail "the server does not say it uses its data directory catalog"
[ "$(sql "SELECT matched_feature_id FROM unknown_deprecations WHERE text = '$TEXT'")" = memcg_v1.soft_limit ] ||
	fail "the stored unknown text was not re-matched"
[ "$(get /api/v1/catalog "$ADMIN")" = 200 ] || fail "GET /api/v1/catalog after the update"
[ "$(jq .version "$WORK/body")" = "$NEWER" ] || fail "served version after the update"
jq -e --arg t "$TEXT" '[.features[].messages[].text] | index($t)' "$WORK/body" >/dev/null ||
	fail "the served catalog lacks the new text"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\(.*\)\r$/\1/p' "$WORK/headers")
[ -n "$etag" ] || fail "no ETag"
[ "$(get /api/v1/catalog "$ADMIN" -H "If-None-Match: $etag")" = 304 ] || fail "If-None-Match: not 304"

kept() { [ -f "$WORK/state/catalog.json" ] && [ "$(jq .version "$WORK/state/catalog.json")" = "$NEWER" ]; }
wait_for "the agent to keep the newer catalog" kept
grep -q "catalog updated from the server: version $SHIPPED -> $NEWER" "$WORK/agent.out" ||
	fail "the agent did not log the update"
# the same text from user space (facility 1), then from the kernel
ts=$(($(date +%s) * 1000000))
printf '12,1001,%s,-;%s\n4,1002,%s,-;%s\n' "$ts" "$TEXT" "$ts" "$TEXT" >&3
warned() { [ "$(sql "SELECT count(*) FROM warnings WHERE feature_id = 'memcg_v1.soft_limit' AND kmsg_seq = 1002")" = 1 ]; }
wait_for "the warning of the new text" warned
[ "$(sql "SELECT count(*) FROM warnings WHERE kmsg_seq = 1001")" = 0 ] ||
	fail "the user-space record counted"
[ "$(sql "SELECT sum(count) FROM unknown_deprecations WHERE text = '$TEXT'")" = 1 ] ||
	fail "the text was reported as unknown again"
[ "$(sql "SELECT catalog_version FROM hosts")" = "$NEWER" ] ||
	fail "host.catalog_version is $(sql "SELECT catalog_version FROM hosts")"
# 4. "twilight-server export" reads the same data-directory catalog: it
#    accepts the new feature's id and names the feature in its export.
ts=$(($(date +%s) * 1000000))
printf '4,1003,%s,-;%s\n' "$ts" "$TEXT2" >&3
warned2() { [ "$(sql "SELECT count(*) FROM warnings WHERE feature_id = '$NEWID'")" = 1 ]; }
wait_for "the warning of the new feature" warned2
"$SERVER" export --data-dir "$D" --feature "$NEWID" --format json >"$WORK/export.json" 2>"$WORK/export.err" ||
	fail "export --feature $NEWID: $(cat "$WORK/export.err")"
jq -e --arg id "$NEWID" '[.. | objects | select(.id? == $id or .feature_id? == $id)] | length > 0' \
	"$WORK/export.json" >/dev/null || fail "the export does not name $NEWID: $(head -c 2000 "$WORK/export.json")"
"$SERVER" export --data-dir "$D" >"$WORK/export.txt" 2>"$WORK/export.err" ||
	fail "export: $(cat "$WORK/export.err")"
grep -q "Probe knob (memory.twl_probe2)" "$WORK/export.txt" ||
	fail "the text export does not name the new feature: $(head -c 2000 "$WORK/export.txt")"
kill -0 "$APID" || fail "the agent is gone"

# 5. the export command and the API export: one catalog, one text
"$SERVER" export --data-dir "$D" >"$WORK/export.txt" 2>"$WORK/export.err" ||
	fail "twilight-server export: $(cat "$WORK/export.err")"
[ "$(get /api/v1/export/linux-mm "$ADMIN")" = 200 ] || fail "GET /api/v1/export/linux-mm"
grep -qF "memcg_v1.soft_limit: $TITLE" "$WORK/export.txt" ||
	fail "twilight-server export does not use catalog $NEWER (no '$TITLE')"
cmp -s "$WORK/body" "$WORK/export.txt" ||
	fail "twilight-server export and GET /api/v1/export/linux-mm differ: $(diff "$WORK/body" "$WORK/export.txt" | head -n 10)"

# 6. SIGHUP re-reads catalog.json in the running server: a broken file and
#    an older one keep the current catalog (and say why); a valid newer one
#    is served at once, re-matches the stored unknown text it lists and
#    reaches the agent, neither process restarted.
TEXT3="twilight-test: memory.twl_probe_three is deprecated and will be removed"
NEWEST=$((NEWER + 1))
ts=$(($(date +%s) * 1000000))
printf '4,1004,%s,-;%s\n' "$ts" "$TEXT3" >&3
unknown3() { [ "$(sql "SELECT count(*) FROM unknown_deprecations WHERE text = '$TEXT3' AND matched_feature_id IS NULL")" = 1 ]; }
wait_for "the third text as unknown" unknown3
hup() { # expected log line (grep -E)
	local n
	n=$(grep -cE "$1" "$WORK/server.out" || true)
	kill -HUP "$SPID"
	for _ in $(seq 1 300); do
		[ "$(grep -cE "$1" "$WORK/server.out" || true)" -gt "$n" ] && return 0
		kill -0 "$SPID" 2>/dev/null || fail "SIGHUP ended the server"
		sleep 0.1
	done
	fail "no log line /$1/ after SIGHUP"
}
served() { get /api/v1/catalog "$ADMIN" >/dev/null && jq .version "$WORK/body"; }
jq --argjson v "$NEWEST" '.version = $v |
	(.features[] | select(.id == "memcg_v1.soft_limit") | .messages[0].level) = 9' \
	"$WORK/newer.json" >"$D/catalog.json"
hup "SIGHUP: catalog version $NEWER stays: $D/catalog.json is invalid: .*messages\[0\]\.level"
[ "$(served)" = "$NEWER" ] || fail "a broken catalog.json replaced the catalog: $(served)"
jq --argjson v "$SHIPPED" '.version = $v' "$WORK/newer.json" >"$D/catalog.json"
hup "SIGHUP: catalog version $NEWER stays: $D/catalog.json has version $SHIPPED, older"
[ "$(served)" = "$NEWER" ] || fail "an older catalog.json replaced the catalog: $(served)"
# a stored kept answer (computed with the former catalog) is marked by it
sql "INSERT INTO kept_answers (key, computed, cost, body) VALUES ('ctx-test', 1, 1, '{}')"
jq --arg t "$TEXT3" --argjson v "$NEWEST" '.version = $v |
	(.features[] | select(.id == "memcg_v1.soft_limit") | .messages) +=
	[{"text": $t, "match": "exact", "level": 4}]' "$WORK/newer.json" >"$D/catalog.json"
hup "SIGHUP: catalog version $NEWER -> $NEWEST from $D/catalog.json: [0-9]+ features; 1 unknown deprecation texts matched"
[ "$(served)" = "$NEWEST" ] || fail "served version after SIGHUP: $(served)"
[ "$(sql "SELECT touched > 0 FROM kept_answers WHERE key = 'ctx-test'")" = 1 ] ||
	fail "SIGHUP's new catalog did not mark the kept answers computed with the former one"
[ "$(sql "SELECT matched_feature_id FROM unknown_deprecations WHERE text = '$TEXT3'")" = memcg_v1.soft_limit ] ||
	fail "SIGHUP did not re-match the stored unknown text"
sql "SELECT value FROM server_meta WHERE key = 'catalog_rematched'" | grep -q "^$NEWEST:" ||
	fail "server_meta does not note catalog $NEWEST"
kept3() { [ "$(jq .version "$WORK/state/catalog.json")" = "$NEWEST" ]; }
wait_for "the agent to keep the catalog loaded on SIGHUP" kept3
echo "catalog_update: ok (server and agent moved from catalog $SHIPPED to $NEWER, then $NEWEST on SIGHUP; agent pid $APID never restarted)"
