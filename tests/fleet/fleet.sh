# tests/fleet/fleet.sh: orchestration of a QEMU fleet reporting to a
# twilight server on 127.0.0.1. Sourced (bash) by scripts/demo and the guest
# end-to-end and fault tests (tests/guest/e2e/).
#
#   fleet_init OUTDIR              work directory, traps nothing (caller does)
#   fleet_build BUILDDIR           Release build (no sanitizers) of
#                                  twilight-agent, twl-workload, twilight-server
#   fleet_kernel                   kernel/build (cached); sets FLEET_KERNEL
#                                  (TWILIGHT_FLEET_KERNEL=bzImage overrides)
#   fleet_initramfs                base initramfs: agent + workload + libraries
#   fleet_server_start DATADIR SERVER [ARGS...]
#                                  start (or restart on FLEET_PORT) the server
#   fleet_server_kill9 / fleet_server_stop
#   fleet_guest_start NAME ROLE [VAR=VALUE...] [-- CONF-LINE...]
#                                  boot one guest (tests/fleet/guest.sh)
#   fleet_wait_console NAME REGEX TIMEOUT   wait for a console line
#   fleet_qmp NAME JSON-COMMAND    one QMP command (e.g. set_link)
#   fleet_guest_quit NAME          QMP quit, wait for QEMU
#   fleet_stop_all                 quit every guest, stop the server
#   fleet_api PATH                 GET PATH with the admin token (stdout JSON)
#   fleet_workload_log NAME        the workload's own log lines from the console
#
# Guests reach the server through QEMU user networking (restrict=on) with
# guestfwd 10.0.2.100:80 -> one tests/fleet/relay.pl per connection ->
# 127.0.0.1:FLEET_PORT; the server certificate names 10.0.2.100 (--san).
# Every process started here is remembered by pid and ended by pid.

FLEET_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLEET_GUESTS=()
declare -A FLEET_GPID FLEET_GT0
FLEET_SERVER_PID=""
FLEET_PORT=""
FLEET_TIMEOUT=${FLEET_TIMEOUT:-3600}

fleet_log() {
	echo "fleet: $*" >&2
}

fleet_die() {
	echo "fleet: error: $*" >&2
	return 1
}

# fleet_init OUTDIR: where builds, logs and guest files go.
fleet_init() {
	FLEET_OUT=$1
	mkdir -p "$FLEET_OUT/guests" || return 1
	# QMP sockets need a short path (108 bytes).
	FLEET_SOCKS=$(mktemp -d /tmp/twl-fleet.XXXXXX) || return 1
	local tool
	for tool in qemu-system-x86_64 cmake curl jq perl cpio gzip; do
		command -v $tool >/dev/null ||
			fleet_die "$tool not found: run scripts/install-deps" || return 1
	done
}

# fleet_build BUILDDIR: the guest programs must run without ASan (the guest
# has no libasan), so they get their own Release build.
fleet_build() {
	local dir=$1
	fleet_log "building agent, workload and server without sanitizers in $dir (log $dir.log)"
	{ cmake -S "$FLEET_SRC" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTWILIGHT_SANITIZE=OFF &&
		cmake --build "$dir" -j "${JOBS:-2}" --target twilight-agent twl-workload twilight-server twl_web; } \
		>"$dir.log" 2>&1 ||
		{ tail -n 30 "$dir.log" >&2; fleet_die "build failed (log $dir.log)"; return 1; }
	FLEET_AGENT=$dir/agent/twilight-agent
	FLEET_WORKLOAD=$dir/tests/guest/twl-workload
	FLEET_SERVER=$dir/server/twilight-server
	FLEET_WEB=$dir/web
	file -L "$FLEET_WORKLOAD" | grep -q 'statically linked' ||
		fleet_die "$FLEET_WORKLOAD is not static" || return 1
}

# fleet_kernel: the patched guest kernel from kernel/build's cache.
fleet_kernel() {
	if [ -n "${TWILIGHT_FLEET_KERNEL:-}" ]; then # a kernel under test, by hand
		FLEET_KERNEL=$TWILIGHT_FLEET_KERNEL
		fleet_log "using TWILIGHT_FLEET_KERNEL=$FLEET_KERNEL"
		return 0
	fi
	"$FLEET_SRC/kernel/build" >"$FLEET_OUT/kernel-build.out" 2>&1 ||
		{ tail -n 30 "$FLEET_OUT/kernel-build.out" >&2; fleet_die "kernel/build failed"; return 1; }
	FLEET_KERNEL=$(sed -n 's/^patched=//p' "$FLEET_OUT/kernel-build.out")
	[ -f "$FLEET_KERNEL" ] || fleet_die "kernel/build printed no patched kernel" || return 1
}

# fleet_initramfs: one base initramfs for all guests.
fleet_initramfs() {
	"$FLEET_SRC/kernel/mkinitramfs" -o "$FLEET_OUT/base.cpio.gz" \
		--bin "$FLEET_AGENT" --bin "$FLEET_WORKLOAD" 2>"$FLEET_OUT/mkinitramfs.log" ||
		{ cat "$FLEET_OUT/mkinitramfs.log" >&2; fleet_die "kernel/mkinitramfs failed"; return 1; }
}

# fleet_server_start DATADIR SERVER [ARGS...]: start the server; the first
# start picks a free port, later starts (restarts) reuse FLEET_PORT since the
# guests' relays point at it.
fleet_server_start() {
	local data=$1 server=$2
	shift 2
	local try port i
	FLEET_DATA=$data
	FLEET_SERVER_BIN=$server
	FLEET_SERVER_ARGS=("$@")
	for try in 1 2 3 4 5 6 7 8; do
		port=${FLEET_PORT:-$((20000 + RANDOM % 40000))}
		# Own session: a Ctrl-C at the terminal reaches the caller, which
		# stops guests and server in order.
		setsid "$server" --data-dir "$data" --listen "127.0.0.1:$port" --san 10.0.2.100 "$@" \
			>>"$FLEET_OUT/server.log" 2>&1 </dev/null &
		FLEET_SERVER_PID=$!
		for i in $(seq 1 100); do
			if ! kill -0 "$FLEET_SERVER_PID" 2>/dev/null; then
				wait "$FLEET_SERVER_PID" 2>/dev/null
				FLEET_SERVER_PID=""
				break
			fi
			if [ -s "$data/ca.pem" ] &&
				curl -s --max-time 2 --cacert "$data/ca.pem" "https://127.0.0.1:$port/healthz" >/dev/null; then
				FLEET_PORT=$port
				return 0
			fi
			sleep 0.1
		done
		if [ -n "$FLEET_SERVER_PID" ]; then
			kill "$FLEET_SERVER_PID" 2>/dev/null
			wait "$FLEET_SERVER_PID" 2>/dev/null
			FLEET_SERVER_PID=""
		fi
		if [ -n "$FLEET_PORT" ]; then
			sleep 1 # a restart on the guests' port: wait for it
		fi
	done
	tail -n 20 "$FLEET_OUT/server.log" >&2
	fleet_die "the server did not start (log $FLEET_OUT/server.log)"
}

fleet_server_restart() {
	fleet_server_start "$FLEET_DATA" "$FLEET_SERVER_BIN" "${FLEET_SERVER_ARGS[@]}"
}

fleet_server_kill9() {
	[ -n "$FLEET_SERVER_PID" ] || return 0
	kill -9 "$FLEET_SERVER_PID" 2>/dev/null
	wait "$FLEET_SERVER_PID" 2>/dev/null
	FLEET_SERVER_PID=""
}

fleet_server_stop() {
	[ -n "$FLEET_SERVER_PID" ] || return 0
	kill -TERM "$FLEET_SERVER_PID" 2>/dev/null
	local i
	for i in $(seq 1 100); do
		kill -0 "$FLEET_SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$FLEET_SERVER_PID" 2>/dev/null; then
		fleet_log "the server did not stop within 10 s of SIGTERM; killing it (log $FLEET_OUT/server.log)"
		kill -9 "$FLEET_SERVER_PID" 2>/dev/null
	fi
	wait "$FLEET_SERVER_PID" 2>/dev/null
	FLEET_SERVER_PID=""
}

# fleet_admin_token: the server's admin token.
fleet_admin_token() {
	tr -d '\n' <"$FLEET_DATA/admin.token"
}

# fleet_api PATH [CURL-ARGS...]: a request with the admin token; JSON on
# stdout, non-zero on HTTP errors.
fleet_api() {
	local path=$1
	shift
	curl -sS --fail-with-body --max-time 20 --cacert "$FLEET_DATA/ca.pem" \
		-H "Authorization: Bearer $(fleet_admin_token)" "$@" \
		"https://127.0.0.1:$FLEET_PORT$path"
}

# fleet_guest_start NAME ROLE [VAR=VALUE...] [-- CONF-LINE...]: boot a
# guest in the background. VAR=VALUE go to /etc/twilight/guest.env, CONF
# lines are appended to its agent.conf (e.g. "backoff-base = 200ms";
# "log-level = debug" replaces the default info).
fleet_guest_start() {
	local name=$1 role=$2
	shift 2
	local dir=$FLEET_OUT/guests/$name root
	root=$dir/root
	rm -rf "$dir"
	mkdir -p "$root/etc/twilight" || return 1
	{
		echo "NAME=$name"
		echo "ROLE=$role"
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			echo "$1"
			shift
		done
	} >"$root/etc/twilight/guest.env"
	[ "${1:-}" != -- ] || shift
	cp "$FLEET_DATA/ca.pem" "$root/etc/twilight/ca.pem"
	cp "$FLEET_DATA/agent.token" "$root/etc/twilight/enroll.token"
	{
		echo "server-url = https://10.0.2.100:80"
		echo "ca-file = /etc/twilight/ca.pem"
		echo "enroll-token-file = /etc/twilight/enroll.token"
		echo "state-dir = /var/lib/twilight-agent"
		echo "spool-dir = /var/spool/twilight-agent"
		echo "batch-interval = 1s"
		echo "bpf = true"
		# a CONF line "log-level = ..." replaces the default (a key
		# given twice is a configuration error)
		case " $* " in *" log-level = "*) ;; *) echo "log-level = info" ;; esac
		for line in "$@"; do
			echo "$line"
		done
	} >"$root/etc/twilight/agent.conf"
	(cd "$root" && find . | cpio -o -H newc --owner=0:0 --quiet) | gzip -n >"$dir/own.cpio.gz"
	cat "$FLEET_OUT/base.cpio.gz" "$dir/own.cpio.gz" >"$dir/initrd.cpio.gz"
	rm -f "$FLEET_SOCKS/$name.qmp"
	FLEET_GT0[$name]=$(date +%s.%N)
	setsid "$FLEET_SRC/kernel/guest-run" --kernel "$FLEET_KERNEL" --initrd "$dir/initrd.cpio.gz" \
		--script "$FLEET_SRC/tests/fleet/guest.sh" --timeout "$FLEET_TIMEOUT" \
		--fwd-cmd "perl $FLEET_SRC/tests/fleet/relay.pl $FLEET_PORT" \
		--qmp "$FLEET_SOCKS/$name.qmp" --serial-log "$dir/serial.log" \
		--append "printk.devkmsg=on" >"$dir/console.txt" 2>&1 </dev/null &
	FLEET_GPID[$name]=$!
	FLEET_GUESTS+=("$name")
	fleet_log "guest $name ($role) booting, console $dir/serial.log"
}

# fleet_console NAME: the console so far, without carriage returns.
fleet_console() {
	tr -d '\r' <"$FLEET_OUT/guests/$1/serial.log" 2>/dev/null
}

# fleet_console_has NAME REGEX: the console so far has a line matching
# REGEX (grep -E). Not "| grep -q": under pipefail, grep -q's exit at the
# first match can kill tr with SIGPIPE before its last write, and the
# pipeline then fails although the line is there (15 in 1,000 on a 12 KB
# console; a soak run failed "agent was not killed" on it).
fleet_console_has() {
	fleet_console "$1" | grep -E "$2" >/dev/null
}

# fleet_wait_console NAME REGEX TIMEOUT: wait for a console line matching
# REGEX (grep -E); fails at once on FLEET-FAIL or when QEMU ended.
fleet_wait_console() {
	local name=$1 re=$2 timeout=$3 t0
	t0=$(date +%s)
	while :; do
		if fleet_console_has "$name" "$re"; then
			return 0
		fi
		if fleet_console_has "$name" '^FLEET-FAIL'; then
			fleet_console "$name" | sed -n '/^FLEET-FAIL/,$p' | head -n 200 >&2
			fleet_die "guest $name failed"
			return 1
		fi
		if ! kill -0 "${FLEET_GPID[$name]}" 2>/dev/null; then
			fleet_console "$name" | tail -n 30 >&2
			fleet_die "guest $name ended before printing '$re'"
			return 1
		fi
		if [ $(($(date +%s) - t0)) -ge "$timeout" ]; then
			fleet_console "$name" | tail -n 30 >&2
			fleet_die "guest $name: no '$re' within $timeout s"
			return 1
		fi
		sleep 0.2
	done
}

# fleet_qmp NAME COMMAND [ARGUMENTS-JSON]: run one QMP command, print the
# answer; non-zero unless QEMU answered "return".
fleet_qmp() {
	perl -MIO::Socket::UNIX -e '
		my ($path, $cmd, $args) = @ARGV;
		my $s = IO::Socket::UNIX->new(Peer => $path) or die "connect $path: $!\n";
		sub answer { while (my $l = <$s>) { return $l if $l =~ /"(return|error)"/; } die "QMP closed\n"; }
		<$s>; # greeting
		print $s "{\"execute\":\"qmp_capabilities\"}\n"; answer();
		print $s "{\"execute\":\"$cmd\"" . ($args ? ",\"arguments\":$args" : "") . "}\n";
		exit 0 if $cmd eq "quit"; # QEMU may close before it answers
		my $a = answer();
		print $a; exit($a =~ /"return"/ ? 0 : 1);' "$FLEET_SOCKS/$1.qmp" "$2" "${3:-}"
}

# fleet_guest_quit NAME: end QEMU through QMP (the guest idles after its
# workload), or kill its process group if QMP does not answer.
fleet_guest_quit() {
	local name=$1 pid=${FLEET_GPID[$1]:-} i
	[ -n "$pid" ] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		fleet_qmp "$name" quit >/dev/null 2>&1
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			# guest-run runs QEMU under timeout(1), which has its own
			# process group: end that group, then guest-run.
			local c
			for c in $(pgrep -P "$pid"); do
				kill -TERM -- "-$c" 2>/dev/null || kill -TERM "$c" 2>/dev/null
			done
			kill -TERM "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
	unset "FLEET_GPID[$name]"
}

fleet_stop_all() {
	local g
	for g in "${FLEET_GUESTS[@]}"; do
		fleet_guest_quit "$g"
	done
	FLEET_GUESTS=()
	fleet_server_stop
	[ -z "${FLEET_SOCKS:-}" ] || rm -rf "$FLEET_SOCKS"
}

# fleet_workload_log NAME: the workload's own log lines (ground truth).
fleet_workload_log() {
	fleet_console "$1" | sed -n 's/^FLEET-WORKLOAD //p'
}

# fleet_host_id NAME: the host id the server knows for hostname NAME
# (exactly one host must carry it).
fleet_host_id() {
	local ids
	ids=$(fleet_api "/api/v1/hosts?limit=500" | jq -r --arg n "$1" '.hosts[] | select(.hostname == $n) | .host_id')
	[ "$(echo "$ids" | grep -c .)" = 1 ] || { fleet_die "hostname $1: host ids '$ids' (want exactly one)"; return 1; }
	echo "$ids"
}
