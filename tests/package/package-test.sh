#!/bin/bash
# Package test: builds both Debian packages with CPack from a Release build
# of SOURCE_DIR, unpacks them into a scratch root (dpkg -x: nothing is
# installed on this machine, no maintainer script runs as itself) and checks:
#   - file lists (binaries, units, configs, manual pages, docs, web files),
#     nothing unexpected (the server's list exact, its dashboard exactly
#     TWL_WEB_FILES), no file in both packages;
#   - every file under /etc is a conffile and every conffile is shipped;
#   - maintainer scripts: present, executable, valid sh; the agent's postinst
#     never enables or starts the agent on a fresh install (run against
#     stubs of deb-systemd-helper/deb-systemd-invoke/systemctl);
#   - Depends covers the package of every shared library each binary links;
#     binaries stripped; the agent links libbpf and embeds its BPF object;
#   - the unpacked binaries run --help, --version and --check-config; the
#     shipped agent.conf is refused until its CA, token and state directory
#     exist, the shipped server.conf is accepted and names the packaged web
#     root; the unpacked server serves its packaged dashboard over TLS;
#   - --help and the manual pages agree both ways (options, config keys),
#     and each page has FILES, SIGNALS and EXIT STATUS and renders cleanly;
#   - systemd-analyze verify on both units; their Documentation= targets
#     are shipped; the operator's guide names the agent's user as its unit
#     does and justifies the server's MemoryMax=;
#   - lintian: every finding is fixed or explained in
#     packaging/lintian-explained.txt, and no explanation is stale.
# Usage: package-test.sh SOURCE_DIR   (env TWL_PACKAGE_BUILD_DIR: see below)
# Every missing tool is a failure, not a skip.
set -euo pipefail
SRC=$1
WORK=$(mktemp -d /tmp/twl-package.XXXXXX)
SERVER_PID=
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo -e "package-test: FAIL: $*" >&2
	exit 1
}
for tool in cmake cpack dpkg dpkg-deb dpkg-shlibdeps objdump ldconfig lintian man groff \
	systemd-analyze curl gzip readelf openssl col; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps installs it)"
done

# TWL_PACKAGE_BUILD_DIR reuses a build directory between runs (it is
# reconfigured as Release without sanitizers); default: a scratch one.
BUILD=${TWL_PACKAGE_BUILD_DIR:-$WORK/build}
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTWILIGHT_PACKAGE=ON -DTWILIGHT_SANITIZE=OFF -DTWILIGHT_FUZZ=OFF \
	>"$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; fail "configure failed"; }
cmake --build "$BUILD" -j2 --target twilight-agent twilight-server twl_web twl_package_files \
	>"$WORK/build.log" 2>&1 || { tail -50 "$WORK/build.log"; fail "build failed"; }
(cd "$BUILD" && cpack -G DEB -B "$WORK/out" >"$WORK/cpack.log" 2>&1) ||
	{ cat "$WORK/cpack.log"; fail "cpack failed"; }
agent_deb=$(ls "$WORK"/out/twilight-agent_*.deb 2>/dev/null | head -1)
server_deb=$(ls "$WORK"/out/twilight-server_*.deb 2>/dev/null | head -1)
[ -n "$agent_deb" ] || fail "no twilight-agent .deb in $(ls "$WORK/out")"
[ -n "$server_deb" ] || fail "no twilight-server .deb in $(ls "$WORK/out")"
[ "$(ls "$WORK"/out/*.deb | wc -l)" = 2 ] || fail "cpack made other packages: $(ls "$WORK/out")"
echo "built: $(basename "$agent_deb") $(basename "$server_deb")"

deb_of() { [ "$1" = twilight-agent ] && echo "$agent_deb" || echo "$server_deb"; }
list_of() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's#^\./#/#; s#/$##'; }

# --- file lists -------------------------------------------------------------
check_files() { # deb expected-path...
	local deb=$1 list
	shift
	list=$(list_of "$deb")
	for f in "$@"; do
		grep -qxF "$f" <<<"$list" || fail "$(basename "$deb") lacks $f; it has:\n$list"
	done
}
check_files "$agent_deb" /usr/sbin/twilight-agent /lib/systemd/system/twilight-agent.service \
	/etc/twilight/agent.conf /usr/share/man/man8/twilight-agent.8.gz \
	/usr/share/doc/twilight-agent/copyright /usr/share/doc/twilight-agent/changelog.Debian.gz \
	/usr/share/doc/twilight-agent/twilight-agent.conf.example
check_files "$server_deb" /usr/sbin/twilight-server /lib/systemd/system/twilight-server.service \
	/etc/twilight/server.conf /usr/share/man/man8/twilight-server.8.gz \
	/usr/share/doc/twilight-server/copyright /usr/share/doc/twilight-server/changelog.Debian.gz \
	/usr/share/doc/twilight-server/operators-guide.md \
	/usr/share/twilight/web/index.html /usr/share/twilight/web/app.js \
	/usr/share/twilight/web/style.css /usr/share/twilight/web/vendor/uPlot.iife.min.js
# ... and nothing else (e.g. a component-less install() rule's /usr/bin copy).
extra=$(dpkg-deb -c "$agent_deb" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#' |
	grep -vxE '/usr/sbin/twilight-agent|/lib/systemd/system/twilight-agent\.service|/etc/twilight/agent\.conf|/usr/share/man/man8/twilight-agent\.8\.gz|/usr/share/doc/twilight-agent/.*' || true)
[ -z "$extra" ] || fail "twilight-agent ships unexpected files:\n$extra"
# The server's files exactly: its own, and the dashboard's list
# (TWL_WEB_FILES in web/CMakeLists.txt, written to the build's web-files.txt),
# which the install rule and the server's allow-list of served files share.
[ -s "$BUILD/web-files.txt" ] || fail "$BUILD/web-files.txt (TWL_WEB_FILES) is missing"
{
	printf '%s\n' /usr/sbin/twilight-server /lib/systemd/system/twilight-server.service \
		/etc/twilight/server.conf /usr/share/man/man8/twilight-server.8.gz \
		/usr/share/doc/twilight-server/copyright /usr/share/doc/twilight-server/changelog.Debian.gz \
		/usr/share/doc/twilight-server/operators-guide.md
	sed 's#^#/usr/share/twilight/web/#' "$BUILD/web-files.txt"
} | sort >"$WORK/server.want"
dpkg-deb -c "$server_deb" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#' | sort >"$WORK/server.have"
cmp -s "$WORK/server.want" "$WORK/server.have" ||
	fail "twilight-server's files differ from the expected list (< expected, > shipped):\n$(diff "$WORK/server.want" "$WORK/server.have" || true)"
# The two packages must not both ship a file (dpkg would refuse the second).
files_of() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#' | sort; }
both=$(comm -12 <(files_of "$agent_deb") <(files_of "$server_deb"))
[ -z "$both" ] || fail "both packages ship: $both"

# --- control data: conffiles, maintainer scripts ----------------------------
for deb in "$agent_deb" "$server_deb"; do
	name=$(dpkg-deb -f "$deb" Package)
	mkdir -p "$WORK/ctl-$name"
	dpkg-deb -e "$deb" "$WORK/ctl-$name"
	[ -f "$WORK/ctl-$name/conffiles" ] || fail "$name: no conffiles"
	etc=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#' | grep '^/etc/' | sort)
	[ -n "$etc" ] || fail "$name ships no configuration under /etc"
	[ "$etc" = "$(sort "$WORK/ctl-$name/conffiles")" ] ||
		fail "$name: files under /etc and conffiles differ:\n$etc\n--\n$(cat "$WORK/ctl-$name/conffiles")"
	for s in postinst prerm postrm; do
		[ -x "$WORK/ctl-$name/$s" ] || fail "$name: $s missing or not executable"
		sh -n "$WORK/ctl-$name/$s" || fail "$name: $s has a syntax error"
	done
	echo "$name Depends: $(dpkg-deb -f "$deb" Depends)"
done

# The agent's postinst against stubs: a fresh install records the unit's
# state but enables and starts nothing; an upgrade may only try-restart.
STUBS=$WORK/stubs
mkdir -p "$STUBS"
for t in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$t" "$WORK/calls" >"$STUBS/$t"
	chmod +x "$STUBS/$t"
done
: >"$WORK/calls"
PATH="$STUBS:$PATH" "$WORK/ctl-twilight-agent/postinst" configure >"$WORK/postinst.out" 2>&1 ||
	fail "agent postinst configure failed: $(cat "$WORK/postinst.out")"
grep -q 'deb-systemd-helper update-state twilight-agent.service' "$WORK/calls" ||
	fail "agent postinst did not record the unit state; calls:\n$(cat "$WORK/calls")"
if grep -Eq 'enable|[^-]start|restart' "$WORK/calls"; then
	fail "agent postinst enables or starts an unconfigured agent on install:\n$(cat "$WORK/calls")"
fi
grep -q 'agent.conf' "$WORK/postinst.out" ||
	fail "agent postinst does not tell the operator what to configure: $(cat "$WORK/postinst.out")"
: >"$WORK/calls"
PATH="$STUBS:$PATH" "$WORK/ctl-twilight-agent/postinst" configure 0.0.1-1 >/dev/null 2>&1 ||
	fail "agent postinst configure (upgrade) failed"
if grep -Eq 'enable|invoke (start|restart)' "$WORK/calls"; then
	fail "agent postinst upgrade enables or force-starts the agent:\n$(cat "$WORK/calls")"
fi

# --- unpack into a scratch root ---------------------------------------------
ROOT=$WORK/root
dpkg -x "$agent_deb" "$ROOT"
dpkg -x "$server_deb" "$ROOT"
dep_has() { # depends-line package
	echo "$1" | tr ',|' '\n\n' | sed 's/(.*)//; s/:any//; s/[[:space:]]//g' | grep -xF "$2" >/dev/null
}
for name in twilight-agent twilight-server; do
	deb=$(deb_of $name)
	deps=$(dpkg-deb -f "$deb" Depends)
	bin=$ROOT/usr/sbin/$name
	# Every shared library the binary links must come from a package in Depends.
	for lib in $(objdump -p "$bin" | awk '/NEEDED/{print $2}'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|64bit/ && !p {print $NF; p = 1}')
		[ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !p {print $NF; p = 1}')
		[ -n "$path" ] || fail "$name needs $lib, not found on this machine"
		owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null || true)
		pkg=$(echo "$owner" | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || fail "$name needs $lib ($path) from no known package"
		dep_has "$deps" "$pkg" || fail "$name links $lib from $pkg, which Depends lacks: $deps"
	done
	if readelf -S "$bin" | grep '\.symtab' >/dev/null; then
		fail "$name is not stripped"
	fi
	"$bin" --help >"$WORK/$name.help" 2>&1 || fail "$name --help failed: $(cat "$WORK/$name.help")"
	grep -qi usage "$WORK/$name.help" || fail "$name --help prints no usage"
	"$bin" --version >"$WORK/$name.version" 2>&1 || fail "$name --version failed"
	grep -qF "$(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//')" "$WORK/$name.version" ||
		fail "$name --version ($(cat "$WORK/$name.version")) is not the package version $(dpkg-deb -f "$deb" Version)"
done

# The agent carries its BPF counters: libbpf linked, the object embedded by
# the bpftool skeleton (agent/bpf/CMakeLists.txt: "name twl_usage_bpf").
objdump -p "$ROOT/usr/sbin/twilight-agent" | grep 'NEEDED *libbpf\.so' >/dev/null ||
	fail "twilight-agent does not link libbpf: the BPF counters are missing"
grep -a twl_usage_bpf "$ROOT/usr/sbin/twilight-agent" >/dev/null ||
	fail "twilight-agent does not embed the BPF object (skeleton twl_usage_bpf)"
# Package documentation points at files the packages ship.
for u in twilight-agent twilight-server; do
	for doc in $(sed -n 's/^Documentation=//p' "$ROOT/lib/systemd/system/$u.service"); do
		case "$doc" in
		file:*) [ -f "$ROOT${doc#file:}" ] || fail "$u.service: Documentation=$doc is not in the packages" ;;
		man:*) page=${doc#man:}; page=${page%%(*}
			[ -f "$ROOT/usr/share/man/man8/$page.8.gz" ] || fail "$u.service: Documentation=$doc is not in the packages" ;;
		esac
	done
done

# --- manual pages agree with --help -----------------------------------------
"$ROOT/usr/sbin/twilight-server" export --help >"$WORK/twilight-server.export-help" 2>&1 ||
	fail "twilight-server export --help failed"
"$ROOT/usr/sbin/twilight-server" migrate-store --help >"$WORK/twilight-server.migrate-help" 2>&1 ||
	fail "twilight-server migrate-store --help failed"
man_text() { # name: the page rendered as plain text, '-' hyphens
	zcat "$ROOT/usr/share/man/man8/$1.8.gz" >"$WORK/$1.8"
	LC_ALL=C.UTF-8 MANWIDTH=200 man -E ascii -l "$WORK/$1.8" 2>/dev/null | col -b
}
for name in twilight-agent twilight-server; do
	man_text $name >"$WORK/$name.man.txt"
	[ -s "$WORK/$name.man.txt" ] || fail "$name(8) renders to nothing"
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$WORK/$name.8" 2>&1 >/dev/null || true)
	[ -z "$warn" ] || fail "$name(8) has roff warnings:\n$warn"
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS FILES SIGNALS 'EXIT STATUS'; do
		grep -q "^$sec\$" "$WORK/$name.man.txt" || fail "$name(8) lacks a $sec section"
	done
	helps=$WORK/$name.help
	[ $name = twilight-server ] &&
		helps="$helps $WORK/twilight-server.export-help $WORK/twilight-server.migrate-help"
	# every option in --help is documented ...
	for opt in $(cat $helps | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
		grep -qE -- "(^|[^a-z-])$opt([^a-z0-9-]|\$)" "$WORK/$name.man.txt" ||
			fail "$name: option $opt is in --help but not in $name(8)"
	done
	# ... and every option the page's OPTIONS section documents exists.
	awk '/^[A-Z][A-Z ]+$/ {in_opts = ($0 == "OPTIONS")} in_opts' "$WORK/$name.man.txt" >"$WORK/$name.opts.txt"
	for opt in $(grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]+' "$WORK/$name.opts.txt" | sed 's/^[ ,]*//' | sort -u); do
		grep -qE -- "$opt([^a-z0-9-]|\$)" $helps ||
			fail "$name(8) documents $opt, which --help does not know"
	done
done
# The agent's config keys: the help table and the page's CONFIGURATION list agree.
help_keys=$(sed -n '/^Configuration options/,$p' "$WORK/twilight-agent.help" |
	awk '/^  [a-z][a-z0-9-]* +[a-z]+ +default/ {print $1}' | sort)
[ "$(echo "$help_keys" | wc -l)" -ge 10 ] || fail "cannot read the config keys from twilight-agent --help"
man_keys=$(sed -n '/^CONFIGURATION$/,/^FILES$/p' "$WORK/twilight-agent.man.txt" |
	awk '/^       [a-z][a-z0-9-]* [a-z]+$/ {print $1}' | sort)
[ "$help_keys" = "$man_keys" ] ||
	fail "config keys differ between twilight-agent --help (<) and twilight-agent(8) (>):\n$(diff <(echo "$help_keys") <(echo "$man_keys") || true)"

# --- configuration ----------------------------------------------------------
AGENT=$ROOT/usr/sbin/twilight-agent
SERVER=$ROOT/usr/sbin/twilight-server
cmp -s "$ROOT/etc/twilight/agent.conf" <("$AGENT" --print-config) ||
	fail "the shipped agent.conf is not what twilight-agent --print-config prints (regenerate agent/twilight-agent.conf.example)"
cmp -s "$ROOT/etc/twilight/server.conf" <("$SERVER" --print-config) ||
	fail "the shipped server.conf is not what twilight-server --print-config prints (regenerate server/twilight-server.conf.example)"
# Unconfigured: the shipped agent.conf names a CA and token that do not exist yet.
conf_paths() { sed -n "s#^$1 = ##p" "$ROOT/etc/twilight/agent.conf"; }
ca_path=$(conf_paths ca-file)
[ -n "$ca_path" ] || fail "the shipped agent.conf sets no ca-file"
if [ ! -e "$ca_path" ]; then
	if "$AGENT" --config "$ROOT/etc/twilight/agent.conf" --check-config >"$WORK/unconf.out" 2>&1; then
		fail "twilight-agent --check-config accepts the shipped agent.conf although $ca_path is missing"
	fi
	grep -q ca-file "$WORK/unconf.out" || fail "--check-config does not name the missing ca-file: $(cat "$WORK/unconf.out")"
fi
# Configured: the same file with its CA, token and state directory in place passes.
mkdir -p "$WORK/agent/state"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/agent/ca.key" \
	-out "$WORK/agent/ca.pem" -days 1 -subj /CN=package-test >/dev/null 2>&1 || fail "openssl req failed"
echo "package-test-token" >"$WORK/agent/token"
sed -e "s#^ca-file = .*#ca-file = $WORK/agent/ca.pem#" \
	-e "s#^enroll-token-file = .*#enroll-token-file = $WORK/agent/token#" \
	-e "s#^\#state-dir = .*#state-dir = $WORK/agent/state#" \
	-e "s#^\#spool-dir = .*#spool-dir = $WORK/agent/state/spool#" \
	"$ROOT/etc/twilight/agent.conf" >"$WORK/agent.conf"
"$AGENT" --config "$WORK/agent.conf" --check-config >"$WORK/conf.out" 2>&1 ||
	fail "twilight-agent --check-config rejects the shipped agent.conf with its files in place:\n$(cat "$WORK/conf.out")"
# ... and a bad value is named.
printf 'no-such-option = 1\n' >"$WORK/bad.conf"
if "$AGENT" --config "$WORK/bad.conf" --check-config >"$WORK/bad.out" 2>&1; then
	fail "twilight-agent --check-config accepted an unknown option"
fi
grep -q no-such-option "$WORK/bad.out" || fail "twilight-agent --check-config did not name the bad option"
# An agent.conf of an earlier version (snake_case keys) still passes, with
# a note naming each new spelling.
awk -F' = ' '/^[a-z]/ {gsub("-", "_", $1); print $1 " = " $2; next} {print}' \
	"$WORK/agent.conf" >"$WORK/old.conf"
grep -q '^server_url = ' "$WORK/old.conf" || fail "could not write an old-style agent.conf"
"$AGENT" --config "$WORK/old.conf" --check-config >"$WORK/old.out" 2>&1 ||
	fail "twilight-agent --check-config rejects an agent.conf in the old spelling:\n$(cat "$WORK/old.out")"
grep -q 'note: server_url: deprecated spelling: write server-url' "$WORK/old.out" ||
	fail "no deprecation note for server_url: $(cat "$WORK/old.out")"
# A dry run over a saved log works from the unpacked binary.
printf '4,1,100,-;soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality.\n' >"$WORK/kmsg.dump"
"$AGENT" --kmsg-file "$WORK/kmsg.dump" --dry-run >"$WORK/dry.json" 2>"$WORK/dry.err" ||
	fail "twilight-agent --dry-run failed: $(cat "$WORK/dry.err")"
grep -q '"memcg_v1\.' "$WORK/dry.json" || fail "the dry run did not report the deprecation: $(cat "$WORK/dry.json")"

mkdir -p "$WORK/server"
"$SERVER" --data-dir "$WORK/server" --config "$ROOT/etc/twilight/server.conf" --check-config \
	>"$WORK/sconf.out" 2>&1 ||
	fail "twilight-server --check-config rejects the shipped /etc/twilight/server.conf:\n$(cat "$WORK/sconf.out")"
grep -qx 'web-dir = /usr/share/twilight/web' "$WORK/sconf.out" ||
	fail "with the shipped server.conf the web root is not /usr/share/twilight/web:\n$(cat "$WORK/sconf.out")"
# Without a config file the binary must not point into the build machine's tree.
"$SERVER" --data-dir "$WORK/server" --check-config >"$WORK/sdef.out" 2>&1 || fail "twilight-server --check-config failed"
grep -qx 'web-dir = /usr/share/twilight/web' "$WORK/sdef.out" ||
	fail "the packaged twilight-server's default web root is not /usr/share/twilight/web: $(grep web-dir "$WORK/sdef.out")"
printf 'no-such-option = 1\n' >"$WORK/sbad.conf"
if "$SERVER" --data-dir "$WORK/server" --config "$WORK/sbad.conf" --check-config >"$WORK/sbad.out" 2>&1; then
	fail "twilight-server --check-config accepted an unknown option"
fi
grep -q no-such-option "$WORK/sbad.out" || fail "twilight-server --check-config did not name the bad option"

# The unpacked server starts on a free loopback port and serves the packaged dashboard.
"$SERVER" serve --data-dir "$WORK/server" --config "$ROOT/etc/twilight/server.conf" \
	--listen 127.0.0.1:0 --web-dir "$ROOT/usr/share/twilight/web" >"$WORK/server.out" 2>&1 &
SERVER_PID=$!
port=
for _ in $(seq 1 100); do
	port=$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$WORK/server.out")
	[ -n "$port" ] && break
	kill -0 "$SERVER_PID" 2>/dev/null || fail "the unpacked server exited: $(cat "$WORK/server.out")"
	sleep 0.1
done
[ -n "$port" ] || fail "the unpacked server did not start: $(cat "$WORK/server.out")"
curl -sS --fail --max-time 10 --cacert "$WORK/server/ca.pem" "https://localhost:$port/" \
	-o "$WORK/index.html" || fail "GET / from the unpacked server failed"
cmp -s "$WORK/index.html" "$ROOT/usr/share/twilight/web/index.html" ||
	fail "the server did not serve the packaged index.html"
curl -sS --fail --max-time 10 --cacert "$WORK/server/ca.pem" "https://localhost:$port/healthz" \
	>/dev/null || fail "GET /healthz from the unpacked server failed"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "the server did not exit 0 on SIGTERM"
SERVER_PID=

# --- systemd units ----------------------------------------------------------
for u in twilight-agent twilight-server; do
	unit=$ROOT/lib/systemd/system/$u.service
	grep -q "^ExecStart=/usr/sbin/$u " "$unit" || fail "$u.service does not start /usr/sbin/$u"
	# verify needs the ExecStart binary at its real path: point it at the scratch root
	sed "s#/usr/sbin/#$ROOT/usr/sbin/#g" "$unit" >"$WORK/$u.service"
	systemd-analyze verify --man=no "$WORK/$u.service" >"$WORK/$u.verify" 2>&1 || true
	cat "$WORK/$u.verify"
	# Tolerated: this machine's own units and missing dependencies of the
	# unit (network-online.target's wants) when systemd is not PID 1.
	if grep -v -e '^/lib/systemd/system/[^t]' -e '^/etc/systemd/' "$WORK/$u.verify" |
		grep -iE "$u|unknown|error|invalid|failed|ignoring" >/dev/null; then
		fail "systemd-analyze verify $u.service reported problems"
	fi
done
grep -q '^User=twilight$' "$ROOT/lib/systemd/system/twilight-server.service" ||
	fail "twilight-server.service does not run as the package's user twilight"
grep -q '^StateDirectory=twilight$' "$ROOT/lib/systemd/system/twilight-server.service" ||
	fail "twilight-server.service has no StateDirectory=twilight"
grep -q -- '--data-dir /var/lib/twilight' "$ROOT/lib/systemd/system/twilight-server.service" ||
	fail "twilight-server.service does not use /var/lib/twilight"
grep -q '^StateDirectory=twilight-agent$' "$ROOT/lib/systemd/system/twilight-agent.service" ||
	fail "twilight-agent.service has no StateDirectory=twilight-agent (the agent's state_dir)"

# The operator's guide says what the units do: the agent's user (a dynamic
# one only if its unit says DynamicUser=yes) and the server's memory cap.
GUIDE=$ROOT/usr/share/doc/twilight-server/operators-guide.md
agent_unit=$ROOT/lib/systemd/system/twilight-agent.service
server_unit=$ROOT/lib/systemd/system/twilight-server.service
agent_user=$(sed -n 's/^User=//p' "$agent_unit")
if grep -q '^DynamicUser=yes' "$agent_unit"; then
	grep -qi 'dynamic user' "$GUIDE" || fail "twilight-agent.service has DynamicUser=yes; the guide does not say so"
else
	if grep -qi 'dynamic user' "$GUIDE"; then
		fail "the guide says the agent runs as a dynamic user; its unit has User=$agent_user"
	fi
	grep -qF "\`$agent_user\`" "$GUIDE" || fail "the guide does not name the agent's user $agent_user"
fi
mem=$(sed -n 's/^MemoryMax=//p' "$server_unit")
[ -n "$mem" ] || fail "twilight-server.service has no MemoryMax="
grep -qF "MemoryMax=$mem" "$GUIDE" || fail "the guide does not justify the server's MemoryMax=$mem"

# --- lintian: every finding fixed or explained, no stale explanation --------
EXPLAINED=$SRC/packaging/lintian-explained.txt
[ -f "$EXPLAINED" ] || fail "$EXPLAINED is missing"
: >"$WORK/lintian.tags"
for deb in "$agent_deb" "$server_deb"; do
	lintian --tag-display-limit 0 "$deb" >"$WORK/lintian.out" 2>&1 || true
	cat "$WORK/lintian.out"
	if grep -qE '^(E: (lintian|Unknown)|internal error|Cannot)' "$WORK/lintian.out"; then
		fail "lintian itself failed on $(basename "$deb")"
	fi
	while read -r line; do
		tag=$(echo "$line" | awk '{print $3}')
		[ -n "$tag" ] || continue
		echo "$tag" >>"$WORK/lintian.tags"
		grep -q "^$tag " "$EXPLAINED" ||
			fail "lintian tag $tag is neither fixed nor explained in packaging/lintian-explained.txt: $line"
	done < <(grep -E '^[EW]: ' "$WORK/lintian.out")
done
while read -r tag explanation; do
	case "$tag" in '' | '#'*) continue ;; esac
	[ -n "$explanation" ] || fail "lintian-explained.txt: $tag has no explanation"
	grep -qxF "$tag" "$WORK/lintian.tags" ||
		fail "lintian-explained.txt explains $tag, which lintian no longer reports: remove it"
done <"$EXPLAINED"
echo "package-test: ok"
