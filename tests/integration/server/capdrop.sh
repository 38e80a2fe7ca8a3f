#!/bin/bash
# Capabilities, with the real twilight-server binary started with all of
# them (as root, or as root of a user namespace when the test is not root):
# it serves with none left (CapEff and CapPrm read from /proc); when the
# drop fails (capset() made to fail by an LD_PRELOAD shim, as a sandbox
# would) it refuses to serve, exit 1 with a line saying why, unless
# require-cap-drop = false, when it serves and says it kept them.
set -euo pipefail
SERVER=$1
SHIM=$2
WORK=$(mktemp -d /tmp/twl-caps-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "capdrop: FAIL: $*" >&2
	exit 1
}
WRAP=()
if [ "$(id -u)" != 0 ]; then
	command -v unshare >/dev/null || fail "not root and no unshare(1) to become root of a user namespace"
	WRAP=(unshare --user --map-root-user)
	"${WRAP[@]}" true || fail "cannot create a user namespace: this test needs root or unprivileged user namespaces"
fi
# an ASan build wants its runtime first; the shim comes after it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

start() { # env-assignments... -- flags...: 0 once listening, 1 if it exited
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "${WRAP[@]}" "$SERVER" --data-dir "$WORK/data" --listen 127.0.0.1:0 "$@" \
		>"$WORK/out" 2>&1 &
	PID=$!
	for _ in $(seq 1 300); do
		grep -q "listening on" "$WORK/out" && return 0
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
cap() { # field -> the server's capability set, hex
	awk -v f="$1:" '$1 == f {print $2}' "/proc/$PID/status"
}

[ "$(awk '$1 == "CapEff:" {print $2}' /proc/self/status)" != 0000000000000000 ] || [ ${#WRAP[@]} -gt 0 ] ||
	fail "this shell holds no capabilities to begin with"
start -- || fail "the server did not start: $(cat "$WORK/out")"
[ "$(cap CapEff)" = 0000000000000000 ] || fail "serving with effective capabilities $(cap CapEff)"
[ "$(cap CapPrm)" = 0000000000000000 ] || fail "serving with permitted capabilities $(cap CapPrm)"
[ "$(cap CapAmb)" = 0000000000000000 ] || fail "serving with ambient capabilities $(cap CapAmb)"
grep -q "capabilities dropped" "$WORK/out" || fail "no line for the drop: $(cat "$WORK/out")"
stop

if start LD_PRELOAD="$SHIM" --; then
	fail "the server serves although it could not drop its capabilities: $(cat "$WORK/out")"
fi
wait "$PID" && status=0 || status=$?
PID=
[ "$status" = 1 ] || fail "exit status $status when the drop failed, want 1"
grep -q "cannot drop capabilities" "$WORK/out" || fail "no line saying why: $(cat "$WORK/out")"
grep -q "require-cap-drop" "$WORK/out" || fail "the line does not say what to do: $(cat "$WORK/out")"

start LD_PRELOAD="$SHIM" -- --no-require-cap-drop || fail "--no-require-cap-drop did not serve: $(cat "$WORK/out")"
grep -q "serving with them" "$WORK/out" || fail "no warning that it kept them: $(cat "$WORK/out")"
[ "$(cap CapEff)" != 0000000000000000 ] || fail "the shim did not keep capset() from working"
stop
echo "capdrop: OK"
