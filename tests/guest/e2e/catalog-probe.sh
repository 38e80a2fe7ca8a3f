# tests/guest/e2e/catalog-probe.sh: a catalog update pushed through the
# server reaches a running guest agent (sourced by e2e.sh after
# tests/fleet/fleet.sh and check.sh).
#
# The guest (CATALOG_PROBE=1, tests/fleet/guest.sh) makes its kernel print
# "cgroup: Unknown subsys name 'twl_deprecated_probe'" (facility 0, once per
# failed mount), a deprecation text the compiled-in catalog lacks, and
# writes the same text to /dev/kmsg from user space (facility 1), in phase
# probe-1. The server then reloads, on SIGHUP, a newer DATA_DIR/catalog.json
# that adds PROBE_FEATURE with that text; the agent, never restarted, fetches
# it (catalog-interval) and the guest repeats the phase as probe-2.
# Expected counts come from the guest's own lines (twl-workload's mount line:
# failed=N errno=EINVAL is N kernel messages; FLEET-KMSG-USER), never from
# the agent.

PROBE_FEATURE=test_e2e.cgroup_probe
PROBE_TEXT="cgroup: Unknown subsys name 'twl_deprecated_probe'"

# probe_kernel_count NAME PHASE: the kernel messages guest NAME's workload
# caused in phase PHASE (probe-1, probe-2): its failed mounts, each EINVAL.
probe_kernel_count() {
	fleet_console "$1" | sed -n "/^FLEET-PHASE $2 begin/,/^FLEET-PHASE $2 end/p" |
		sed -n 's/^FLEET-WORKLOAD //p' | awk '
		{ delete a; for (i = 2; i <= NF; i++) { e = index($i, "="); a[substr($i, 1, e - 1)] = substr($i, e + 1) } }
		a["op"] != "mount" { print "not a probe line: " $0 > "/dev/stderr"; bad = 1; next }
		a["ok"] != "0" || a["errno"] != "EINVAL" || a["failed"] != a["n"] {
			print "the probe mount did not fail with EINVAL every time: " $0 > "/dev/stderr"; bad = 1; next }
		{ n += a["failed"]; lines++ }
		END { if (!lines) { print "no probe line" > "/dev/stderr"; bad = 1 } print n + 0; exit bad }'
}

# probe_user_count NAME PHASE: records of the text written from user space.
probe_user_count() {
	fleet_console "$1" | sed -n "s/^FLEET-KMSG-USER phase=$2 n=\([0-9]*\)$/\1/p" | grep . ||
		fleet_die "guest $1 logged no FLEET-KMSG-USER for $2"
}

# probe_catalog SRC OUT: the shipped catalog with its version raised by one
# and PROBE_FEATURE added, its one message PROBE_TEXT (level 3: KERN_ERR);
# checked by the server's own `catalog check`. Prints the new version.
probe_catalog() {
	local src=$1 out=$2 v
	v=$(($(jq .version "$src") + 1))
	jq --argjson v "$v" --arg id "$PROBE_FEATURE" --arg t "$PROBE_TEXT" '.version = $v |
		.features += [.features[] | select(.id == "memcg_v1.swapaccount") |
			.id = $id | .title = "e2e test: a cgroup v1 mount naming an unknown controller" |
			.status = "warns" | .stopped_working = null | .commit = null |
			.commit_note = "none: the e2e test made this feature up" |
			.replacement = "none (a feature only the e2e test has)" |
			.replacement_note = "the guest makes the kernel print its message on purpose" |
			.messages = [{"match": "exact", "level": 3, "note": "tests/guest/e2e", "text": $t}]]' \
		"$src" >"$out" || return 1
	"$FLEET_SERVER_BIN" catalog check "$out" >"$out.check" 2>&1 ||
		{ cat "$out.check" >&2; fleet_die "the newer catalog is refused"; return 1; }
	echo "$v"
}

# probe_unknown NAME COUNT MATCHED: host NAME lists PROBE_TEXT exactly once
# among its unknown texts, with COUNT occurrences, matched to MATCHED
# (null: none); the fleet-wide list agrees and no other host sent it.
probe_unknown() {
	local id got
	id=$(fleet_host_id "$1") || return 1
	got=$(fleet_api "/api/v1/hosts/$id" | jq -c --arg t "$PROBE_TEXT" \
		'[.unknown_deprecations[] | select(.text == $t) | [.count, .matched_feature]]') || return 1
	[ "$got" = "[[$2,$3]]" ] ||
		{ fleet_die "host $1: unknown text '$PROBE_TEXT' as [count, matched]: $got, want [[$2,$3]]"; return 1; }
	got=$(fleet_api "/api/v1/unknown?limit=1000" | jq -c --arg t "$PROBE_TEXT" \
		'[.texts[] | select(.text == $t) | [.hosts, .count, .matched_feature]]') || return 1
	[ "$got" = "[[1,$2,$3]]" ] ||
		{ fleet_die "GET /api/v1/unknown: '$PROBE_TEXT' as [hosts, count, matched]: $got, want [[1,$2,$3]]"; return 1; }
	echo "unknown text on $1: count $2, matched $3 (host and fleet-wide)"
}

# probe_check_before NAME: after probe-1, the server (compiled-in catalog)
# holds the kernel's messages as one unknown text with their exact count;
# the user-space records are not in it.
probe_check_before() {
	local k u
	k=$(probe_kernel_count "$1" probe-1) || return 1
	u=$(probe_user_count "$1" probe-1) || return 1
	echo "probe-1 on $1: $k kernel messages, $u user-space records of the text"
	probe_unknown "$1" "$k" null
}

# probe_push NEWER: replace DATA_DIR/catalog.json with NEWER (renamed into
# place, as an operator's package would) and send SIGHUP to the running
# server, as `systemctl reload` does (packaging's ExecReload). The same
# server process (same pid, still running) must log the reload from the
# version it served to NEWER's, re-match the probe-1 unknown text to the
# new feature (at least one text matched) and serve NEWER's version.
probe_push() {
	local v old pid line matched i
	v=$(jq .version "$1") || return 1
	pid=$FLEET_SERVER_PID
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null ||
		{ fleet_die "no running server to send SIGHUP to"; return 1; }
	old=$(fleet_api /api/v1/catalog | jq .version) || return 1
	[ "$old" -lt "$v" ] ||
		{ fleet_die "the server serves catalog version $old already, not older than $v"; return 1; }
	cp "$1" "$FLEET_DATA/catalog.json.tmp" &&
		mv -f "$FLEET_DATA/catalog.json.tmp" "$FLEET_DATA/catalog.json" || return 1
	kill -HUP "$pid" || { fleet_die "kill -HUP $pid failed"; return 1; }
	# The reload runs in the server's main loop after the signal: wait for
	# its log line (a deadline for a hung server, not a timing check).
	for i in $(seq 1 300); do
		line=$(grep -F "SIGHUP: catalog version " "$FLEET_OUT/server.log" | tail -n 1)
		[ -n "$line" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && [ "$FLEET_SERVER_PID" = "$pid" ] ||
		{ fleet_die "the server (pid $pid) did not survive SIGHUP (log $FLEET_OUT/server.log)"; return 1; }
	case $line in
	*"SIGHUP: catalog version $old -> $v from $FLEET_DATA/catalog.json: "*) ;;
	*)
		fleet_die "the server did not reload catalog $old -> $v on SIGHUP; its line: '${line:-none}'"
		return 1
		;;
	esac
	matched=$(sed -n 's/.*; \([0-9]*\) unknown deprecation texts matched.*/\1/p' <<<"$line")
	[ "${matched:-0}" -ge 1 ] ||
		{ fleet_die "the reload matched ${matched:-no} unknown texts, want the probe-1 text at least: '$line'"; return 1; }
	[ "$(fleet_api /api/v1/catalog | jq .version)" = "$v" ] ||
		{ fleet_die "the server does not serve catalog version $v after SIGHUP"; return 1; }
	echo "catalog pushed by SIGHUP: version $old -> $v, server pid $pid unchanged, $matched unknown texts re-matched"
}

# probe_check_after NAME VERSION: after probe-2, by the same agent process
# (one FLEET-AGENT-START, the agent's own update line): the host reports
# catalog VERSION; PROBE_FEATURE's warnings are exactly probe-2's kernel
# messages, from this host only; the host's own figure adds the probe-1
# unknown texts the server re-matched (warnings, never uses); the unknown
# text keeps probe-1's count, matched to PROBE_FEATURE. Any user-space
# record counted would raise one of these counts.
probe_check_after() {
	local k1 k2 id doc got want starts
	k1=$(probe_kernel_count "$1" probe-1) || return 1
	k2=$(probe_kernel_count "$1" probe-2) || return 1
	starts=$(fleet_console "$1" | grep -c '^FLEET-AGENT-START ')
	[ "$starts" = 1 ] || { fleet_die "guest $1: the agent started $starts times, want once"; return 1; }
	grep -q "^FLEET-CATALOG-UPDATED .*catalog updated from the server: version [0-9]* -> $2\b" <<<"$(fleet_console "$1")" ||
		{ fleet_die "guest $1: the agent did not log its update to catalog $2"; return 1; }
	id=$(fleet_host_id "$1") || return 1
	doc=$(fleet_api "/api/v1/hosts/$id") || return 1
	[ "$(echo "$doc" | jq .catalog_version)" = "$2" ] ||
		{ fleet_die "host $1: catalog_version $(echo "$doc" | jq .catalog_version), want $2"; return 1; }
	got=$(echo "$doc" | jq -c --arg f "$PROBE_FEATURE" '[.features[] | select(.id == $f) |
		[.warnings, .uses, .reads, .warned, .configures, .listens, .reads_only]]')
	want="[[$((k1 + k2)),0,0,true,false,false,false]]"
	[ "$got" = "$want" ] ||
		{ fleet_die "host $1: $PROBE_FEATURE [warnings, uses, reads, warned, configures, listens, reads_only] $got, want $want"; return 1; }
	doc=$(fleet_api "/api/v1/features/$PROBE_FEATURE") ||
		{ fleet_die "GET /api/v1/features/$PROBE_FEATURE failed: the server does not know the feature"; return 1; }
	got=$(echo "$doc" | jq -c '[.warnings.count, .warnings.hosts, .hosts, .uses, .hosts_reading_only]')
	want="[$k2,1,1,0,0]"
	[ "$got" = "$want" ] ||
		{ fleet_die "feature $PROBE_FEATURE [warnings, warning hosts, hosts, uses, read-only hosts] $got, want $want"; return 1; }
	got=$(fleet_api "/api/v1/hosts?feature=$PROBE_FEATURE&limit=500" | jq -c '[.hosts[].hostname]')
	[ "$got" = "[\"$1\"]" ] || { fleet_die "hosts using $PROBE_FEATURE: $got, want [\"$1\"]"; return 1; }
	echo "probe-2 on $1: $k2 kernel messages, $(probe_user_count "$1" probe-2) user-space records; $PROBE_FEATURE: $k2 warnings (host figure $((k1 + k2)) with the re-matched probe-1 texts)"
	probe_unknown "$1" "$k1" "\"$PROBE_FEATURE\""
}
