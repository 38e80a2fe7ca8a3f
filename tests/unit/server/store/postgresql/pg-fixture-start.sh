#!/bin/sh
# pg-fixture-start.sh DIR: the PostgreSQL server the store tests run against
# (ctest fixture "postgresql", FIXTURES_SETUP). initdb into DIR/data, start
# postgres listening on a Unix socket only (listen_addresses = ''), and
# write the connection URI of its maintenance database to DIR/uri (mode
# 0600), which the tests read (pg_fixture.h). As root (tests run as root),
# the server runs as nobody (setpriv): postgres refuses to run as root.
# The socket is open to every local user (a server that dropped its
# capabilities must reach it), so the superuser has a random password,
# kept only in DIR/uri. Whatever this
# started is stopped again when it fails; pg-fixture-stop.sh stops it at
# the end. Needs Debian's postgresql package (scripts/install-deps).
set -eu

dir=${1:?usage: pg-fixture-start.sh DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
	echo "pg-fixture-start: no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb): run scripts/install-deps" >&2
	exit 1
fi

# A server left by an earlier run that was killed before its cleanup.
if [ -f "$dir/data/pg/postmaster.pid" ]; then
	sh "$(dirname "$0")/pg-fixture-stop.sh" "$dir"
fi
rm -rf "$dir"
mkdir -p "$dir/data"
# The socket's path must fit in sun_path (107 bytes): a short directory
# of its own when the build directory's is too long.
sock="$dir/sock"
if [ ${#sock} -gt 80 ]; then
	sock=$(mktemp -d /tmp/twl-pg.XXXXXX)
	echo "$sock" >"$dir/sockdir.tmp"
else
	mkdir -p "$sock"
fi

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

if [ "$(id -u)" = 0 ]; then
	chown nobody:nogroup "$dir/data" "$sock"
fi
chmod 700 "$dir/data"
chmod 711 "$sock"
pass=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
pwfile="$dir/data/pwfile"
(umask 077 && echo "$pass" >"$pwfile")
[ "$(id -u)" = 0 ] && chown nobody:nogroup "$pwfile"

fail() {
	echo "pg-fixture-start: $1" >&2
	[ -f "$dir/data/log" ] && tail -n 20 "$dir/data/log" >&2
	sh "$(dirname "$0")/pg-fixture-stop.sh" "$dir" || true
	exit 1
}

# initdb wants an empty directory: the data in a subdirectory of it
as_owner "$bin/initdb" -D "$dir/data/pg" -U twilight --pwfile="$pwfile" \
	--auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 --no-sync \
	>"$dir/initdb.log" 2>&1 ||
	fail "initdb failed: $(tail -n 5 "$dir/initdb.log")"
rm -f "$pwfile"
cat >>"$dir/data/pg/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$sock'
unix_socket_permissions = 0777
fsync = off
max_connections = 100
CONF
as_owner "$bin/pg_ctl" -D "$dir/data/pg" -l "$dir/data/log" -w -t 60 start \
	>/dev/null || fail "the server did not start"
as_owner "$bin/pg_isready" -h "$sock" -U twilight -d postgres -q ||
	fail "the server does not answer on $sock"
(umask 077 && echo "postgresql://twilight:$pass@/postgres?host=$sock" >"$dir/uri")
echo "pg-fixture-start: PostgreSQL running on $sock (data $dir/data)"
