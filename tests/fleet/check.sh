# tests/fleet/check.sh: assertions on what the server holds, against the
# workloads' own logs (sourced after fleet.sh). Each function prints what it
# checked and returns non-zero with a reason on the first difference.

FLEET_EXPECT_AWK=$FLEET_SRC/tests/fleet/expect.awk

# The agent's own census reads of v1 knob files are not usage: its BPF
# collector leaves them out (agent/bpf/twl_bpf_read.c, is_own_read), so any
# count under the agent's process name ("twilight-agent") is a failure.

# fleet_maps: control file -> feature maps from the server's catalog.
fleet_maps() {
	local m=$FLEET_OUT/catalog-maps
	if [ ! -s "$m" ]; then
		fleet_api /api/v1/catalog | jq -r '.features[] | .id as $id |
			((.files // [])[] | "F \(.) \($id)"), ((.event_files // [])[] | "E \(.) \($id)")' >"$m" ||
			{ fleet_die "cannot read the catalog from the server"; return 1; }
	fi
	echo "$m"
}

# fleet_expected NAME: "W feature sites", "U feature process uses" and
# "R feature process reads" lines for guest NAME, from its workload log
# (kept in guests/NAME/workload.log).
fleet_expected() {
	local wl=$FLEET_OUT/guests/$1/workload.log maps
	maps=$(fleet_maps) || return 1
	fleet_workload_log "$1" >"$wl"
	[ -s "$wl" ] || { fleet_die "guest $1 logged no workload"; return 1; }
	awk -v maps="$maps" -f "$FLEET_EXPECT_AWK" "$wl" | sort
	[ "${PIPESTATUS[0]}" = 0 ] || { fleet_die "guest $1: workload log not understood"; return 1; }
}

# fleet_expected_uses NAME: "feature uses" per feature the server must list
# for the host: the workload's uses counted by BPF (writes and
# registrations) only; a feature it only warned about or only read is
# listed with 0 uses (warnings and reads are kept apart from uses, never
# credited: schema/migrations/015_use_kinds.sql).
fleet_expected_uses() {
	fleet_expected "$1" | awk '$1 == "W" || $1 == "R" { seen[$2] = 1 } $1 == "U" { u[$2] += $4 }
		END { for (f in seen) if (!(f in u)) print f, 0; for (f in u) print f, u[f] }' | sort
}

# fleet_expected_kinds NAME: "feature using|reads" per feature for guest
# NAME: "using" when its workload configured, listened or warned, "reads"
# when it only read the feature.
fleet_expected_kinds() {
	fleet_expected "$1" | awk '$1 == "W" || $1 == "U" { using[$2] = 1 } $1 == "R" { r[$2] = 1 }
		END { for (f in using) print f, "using"; for (f in r) if (!(f in using)) print f, "reads" }' | sort
}

# fleet_expected_flags NAME: "feature configures listens reads_only warned"
# (true/false, as GET /api/v1/hosts/{id} lists them) per feature guest NAME's
# workload touched: it configures a feature it wrote, listens to one it
# registered an eventfd for, warned when the kernel warned, and only reads
# one it did nothing else with. (The census sees only values these writes
# set, so it adds no other configuring.)
fleet_expected_flags() {
	fleet_expected "$1" | awk '$1 == "K" { k[$2 " " $4] = 1; f[$2] = 1 } $1 == "W" { w[$2] = 1; f[$2] = 1 }
		function b(x) { return x ? "true" : "false" }
		END { for (x in f) { c = (x " configures") in k; l = (x " listens") in k
			print x, b(c), b(l), b(!c && !l && !(x in w)), b(x in w) } }' | sort
}

# fleet_check_kinds NAME: the kinds of use the server holds for host NAME,
# per feature, equal the workload's (fleet_expected_flags), no feature more
# or less.
fleet_check_kinds() {
	local id exp act
	exp=$(fleet_expected_flags "$1") || return 1
	id=$(fleet_host_id "$1") || return 1
	act=$(fleet_api "/api/v1/hosts/$id" |
		jq -r '.features[] | "\(.id) \(.configures) \(.listens) \(.reads_only) \(.warned)"' | sort) || return 1
	[ "$act" = "$exp" ] || {
		echo "host $1: feature configures listens reads_only warned, from the workload log:" >&2
		echo "${exp:-<none>}" | sed 's/^/    /' >&2
		echo "host $1: the server holds:" >&2
		echo "${act:-<none>}" | sed 's/^/    /' >&2
		fleet_die "host $1: kinds of use differ"
		return 1
	}
	echo "host $1: kinds of use (configures listens reads_only warned): $(echo "${exp:-nothing}" | tr '\n' ';')"
}

# fleet_check_host_lists FEATURE NAME...: of guests NAME..., the hosts the
# server lists as using FEATURE (GET /api/v1/hosts?feature=) and as only
# reading it (&use=reads) are exactly those whose workloads used it or only
# read it (fleet_expected_kinds).
fleet_check_host_lists() {
	local f=$1 g use want got k
	shift
	for use in using reads; do
		want=$(for g in "$@"; do
			k=$(fleet_expected_kinds "$g") || exit 1
			! grep -qx "$f $use" <<<"$k" || echo "$g"
		done | sort | tr '\n' ' ') || return 1
		got=$(fleet_api "/api/v1/hosts?feature=$f&use=$use&limit=500" | jq -r '.hosts[].hostname' | sort | tr '\n' ' ')
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: hosts listed as $use: '$got', want '$want'"; return 1; }
		echo "feature $f: hosts $use: ${want:-none}"
	done
}

# fleet_actual NAME: "<feature> <uses>" per feature the server lists for
# the host named NAME.
fleet_actual() {
	local id
	id=$(fleet_host_id "$1") || return 1
	fleet_api "/api/v1/hosts/$id" | jq -r '.features[] | "\(.id) \(.uses)"' | sort
	[ "${PIPESTATUS[0]}" = 0 ] || fleet_die "GET /api/v1/hosts/$id failed"
}

# fleet_check_host NAME MODE: the server's view of host NAME against its
# workload log: exactly the features the workload used, each with exactly
# its uses (fleet_expected_uses); a host whose workload used nothing deprecated has no
# feature at all. cgroup mode MODE, a 6.1 kernel.
fleet_check_host() {
	local name=$1 mode=$2 id doc exp act bad
	exp=$(fleet_expected_uses "$name") || return 1
	act=$(fleet_actual "$name") || return 1
	if [ -z "$exp" ]; then
		[ -z "$act" ] || { fleet_die "host $name: the workload used nothing deprecated, the server lists: $(echo "$act" | tr '\n' ' ')"; return 1; }
	else
		bad=$(join -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(echo "$exp") <(echo "$act") | awk '$3 != $2 { print $1 ": want " $2 " (workload), server has " $3 }')
		[ -z "$bad" ] || { fleet_die "host $name: $bad"; return 1; }
	fi
	id=$(fleet_host_id "$name") || return 1
	doc=$(fleet_api "/api/v1/hosts/$id") || return 1
	[ "$(echo "$doc" | jq -r .cgroup_mode)" = "$mode" ] ||
		{ fleet_die "host $name: cgroup_mode $(echo "$doc" | jq -r .cgroup_mode), want $mode"; return 1; }
	echo "$doc" | jq -r .kernel | grep -q '^6\.1\.' ||
		{ fleet_die "host $name: kernel $(echo "$doc" | jq -r .kernel), want 6.1.x"; return 1; }
	echo "host $name ($mode, $(echo "$doc" | jq -r .kernel)): workload expects $(echo "${exp:-nothing}" | tr '\n' ' ')"
	echo "    server: $(echo "${act:-nothing}" | tr '\n' ' ')"
}

# fleet_check_fleet NAME...: exactly these hosts, each a distinct host id;
# per catalog feature: the warning count equals the workloads' call sites,
# every workload process has exactly its uses and reads (on one host) and
# its kind ("use": configures if it wrote, else listens if it registered,
# else reads), the hosts configuring and listening are exactly the guests
# whose workloads wrote or registered (fleet_expected_flags), no
# other process is counted (the agent's own reads included), the hosts'
# uses add up exactly to the workloads' (fleet_expected_uses), and the
# hosts using it and the read-only hosts are exactly the guests whose
# workloads used it or only read it (fleet_expected_kinds).
fleet_check_fleet() {
	local hosts n ids f want got exp expuses expkinds expflags doc procs hostsum
	hosts=$(fleet_api "/api/v1/hosts?limit=500") || return 1
	n=$(echo "$hosts" | jq '.hosts | length')
	[ "$n" = $# ] || { fleet_die "the server lists $n hosts, want $#: $(echo "$hosts" | jq -c '[.hosts[].hostname]')"; return 1; }
	ids=$(echo "$hosts" | jq -r '.hosts[].host_id' | sort -u | wc -l)
	[ "$ids" = $# ] || { fleet_die "$# guests but $ids distinct host ids"; return 1; }
	exp=$(for g in "$@"; do fleet_expected "$g" || exit 1; done) || return 1
	expuses=$(for g in "$@"; do fleet_expected_uses "$g" || exit 1; done) || return 1
	hostsum=$(for g in "$@"; do fleet_actual "$g" || exit 1; done) || return 1
	expkinds=$(for g in "$@"; do fleet_expected_kinds "$g" || exit 1; done) || return 1
	expflags=$(for g in "$@"; do fleet_expected_flags "$g" || exit 1; done) || return 1
	for f in $(fleet_api /api/v1/catalog | jq -r '.features[].id'); do
		doc=$(fleet_api "/api/v1/features/$f") || return 1
		want=$(echo "$exp" | awk -v f="$f" '$1 == "W" && $2 == f { s += $3 } END { print s + 0 }')
		got=$(echo "$doc" | jq -r .warnings.count)
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: the server holds $got warnings, the workloads caused $want"; return 1; }
		procs=$(echo "$doc" | jq -r '.processes[] | "\(.process) \(.hosts) \(.uses) \(.reads) \(.use)"' | sort)
		want=$(echo "$exp" | awk -v f="$f" '$2 == f && $1 == "U" { u[$3] += $4; p[$3] = 1 }
			$2 == f && $1 == "R" { r[$3] += $4; p[$3] = 1 }
			$2 == f && $1 == "K" { k[$3 " " $4] = 1 }
			function kind(c) { return (c " configures") in k ? "configures" : (c " listens") in k ? "listens" : "reads" }
			END { for (c in p) print c, 1, u[c] + 0, r[c] + 0, kind(c) }' | sort)
		[ "$procs" = "$want" ] || {
			echo "feature $f: per process (name hosts uses reads use), from the workload logs:" >&2
			echo "${want:-<none>}" | sed 's/^/    /' >&2
			echo "feature $f: the server holds:" >&2
			echo "${procs:-<none>}" | sed 's/^/    /' >&2
			fleet_die "feature $f: per-workload uses differ"
			return 1
		}
		want=$(echo "$expuses" | awk -v f="$f" '$1 == f { s += $2 } END { print s + 0 }')
		got=$(echo "$hostsum" | awk -v f="$f" '$1 == f { s += $2 } END { print s + 0 }')
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: hosts' uses add up to $got, want $want (the workloads' uses)"; return 1; }
		want=$(echo "$expkinds" | awk -v f="$f" '$1 == f && $2 == "using"' | wc -l)
		got=$(echo "$doc" | jq -r .hosts)
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: the server counts $got hosts using it, want $want (guests whose workloads configured, listened or warned)"; return 1; }
		want=$(echo "$expkinds" | awk -v f="$f" '$1 == f && $2 == "reads"' | wc -l)
		got=$(echo "$doc" | jq -r .hosts_reading_only)
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: the server counts $got read-only hosts, want $want"; return 1; }
		want=$(echo "$expflags" | awk -v f="$f" '$1 == f { c += $2 == "true"; l += $3 == "true" } END { print c + 0, l + 0 }')
		got=$(echo "$doc" | jq -r '"\(.hosts_configuring) \(.hosts_listening)"')
		[ "$got" = "$want" ] ||
			{ fleet_die "feature $f: the server counts (configuring listening) hosts $got, want $want"; return 1; }
	done
	echo "fleet: $# distinct hosts; per feature: warnings, per-workload uses, reads and kind, host totals, hosts using it, configuring, listening and read-only hosts exact"
}

# fleet_wait_hosts TIMEOUT NAME...: wait until every NAME is a host on the
# server; prints "NAME <seconds from launch to first report>" lines.
fleet_wait_hosts() {
	local timeout=$1 t0 g now
	shift
	local -A seen=()
	t0=$(date +%s)
	while :; do
		local names
		names=$(fleet_api "/api/v1/hosts?limit=500" 2>/dev/null | jq -r '.hosts[].hostname' 2>/dev/null)
		now=$(date +%s.%N)
		for g in "$@"; do
			if [ -z "${seen[$g]:-}" ] && echo "$names" | grep -qx "$g"; then
				seen[$g]=1
				echo "$g $(echo "$now ${FLEET_GT0[$g]}" | awk '{ printf "%.1f", $1 - $2 }')"
			fi
		done
		[ "${#seen[@]}" = $# ] && return 0
		if [ $(($(date +%s) - t0)) -ge "$timeout" ]; then
			fleet_die "hosts not reporting after $timeout s: $(for g in "$@"; do [ -n "${seen[$g]:-}" ] || echo -n "$g "; done)"
			return 1
		fi
		for g in "$@"; do
			if fleet_console_has "$g" '^FLEET-FAIL'; then
				fleet_console "$g" | sed -n '/^FLEET-FAIL/,$p' | head -n 200 >&2
				fleet_die "guest $g failed"
				return 1
			fi
		done
		sleep 0.5
	done
}
