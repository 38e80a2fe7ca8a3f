#!/bin/sh
# pg-fixture-stop.sh DIR: stop the server pg-fixture-start.sh started in
# DIR and remove DIR (ctest fixture "postgresql", FIXTURES_CLEANUP: ctest
# runs it also when tests failed). Fails when a server was running and
# does not stop.
set -eu

dir=${1:?usage: pg-fixture-stop.sh DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

status=0
# pg_ctl status: 0 running, 3 not running (a stale pid file too)
if [ -d "$dir/data/pg" ] && as_owner "$bin/pg_ctl" -D "$dir/data/pg" status >/dev/null 2>&1; then
	as_owner "$bin/pg_ctl" -D "$dir/data/pg" -m fast -w -t 60 stop \
		>/dev/null || status=1
fi
if [ "$status" != 0 ]; then
	echo "pg-fixture-stop: the server in $dir/data did not stop" >&2
	exit 1
fi
if [ -f "$dir/sockdir.tmp" ]; then
	rm -rf "$(cat "$dir/sockdir.tmp")"
fi
rm -rf "$dir"
