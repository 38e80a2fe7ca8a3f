# Shared by kernel/build and kernel/build-6.12 (sourced, bash). The caller
# sets KB_NAME (prefix of messages) and LOG (its build log) first. Part of
# both scripts' cache keys.

die() {
	echo "$KB_NAME: $*" >&2
	exit 1
}

# run_logged MSG CMD...: run CMD with output to the build log; on failure
# print the log's tail and exit.
run_logged() {
	local msg=$1
	shift
	echo "### $(date +%T) $msg: $*" >>"$LOG"
	if ! "$@" >>"$LOG" 2>&1; then
		echo "$KB_NAME: $msg failed; last lines of $LOG:" >&2
		tail -n 40 "$LOG" >&2
		exit 1
	fi
}

# configure DIR FRAGMENT...: tinyconfig + the fragments + olddefconfig.
# Every CONFIG_X=y of a fragment must survive and every "# CONFIG_X is not
# set" must stay unset (Kconfig silently drops a symbol with an unmet
# dependency). KB_MAY_LACK lists symbols (without CONFIG_) this tree may
# not define at all (removed upstream): those are named on stderr and
# skipped; any other undefined one is an error like a dropped one.
configure() {
	local dir=$1 s f missing="" absent=""
	shift
	run_logged "make tinyconfig" make -C "$dir" -s tinyconfig
	run_logged "merge $*" env -C "$dir" ./scripts/kconfig/merge_config.sh -m .config "$@"
	run_logged "make olddefconfig" make -C "$dir" -s olddefconfig
	for f in "$@"; do
		while read -r s; do
			if [[ " ${KB_MAY_LACK:-} " == *" ${s#CONFIG_} "* ]] &&
				! grep -rqsE "^(menu)?config ${s#CONFIG_}\$" --include='Kconfig*' "$dir"; then
				absent="$absent ${s#CONFIG_}"
			elif ! grep -qx "$s=y" "$dir/.config"; then
				missing="$missing $s"
			fi
		done < <(sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p' "$f")
		while read -r s; do
			grep -q "^$s=" "$dir/.config" && missing="$missing !$s"
		done < <(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$f")
	done
	[ -z "$absent" ] || echo "$KB_NAME: not defined in this kernel, skipped:$absent" >&2
	[ -z "$missing" ] || die "config symbols not as requested by $*:$missing (unmet dependencies?)"
}

# publish CACHE LINK OUT: point CACHE/LINK at OUT (a directory in CACHE)
# atomically, and drop the other outputs in OUT's parent (each holds a
# ~100 MB vmlinux).
publish() {
	local cache=$1 link=$2 out=$3 d rel
	rel=${out#"$cache"/}
	ln -sfn "$rel" "$cache/$link.tmp"
	mv -T "$cache/$link.tmp" "$cache/$link"
	for d in "$(dirname "$out")"/*; do
		[ "$d" = "$out" ] || rm -rf "$d"
	done
}
