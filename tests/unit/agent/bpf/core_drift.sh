#!/bin/bash
# core_drift.sh BPF_OBJECT [BTF]
#
# Offline CO-RE check of agent/bpf/usage.bpf.o against a kernel's BTF
# (default: this machine's /sys/kernel/btf/vmlinux). `bpftool gen
# min_core_btf` runs libbpf's relocation logic and writes the BTF subset the
# object needs; it only reads BTF and loads nothing into any kernel. Checks
# that every field the programs read resolves, that kernfs_node's parent is
# found under the name this kernel uses (parent before v6.15, __parent since
# 633488947ef6), and that enum cgroup_subsys_id has memory_cgrp_id.
set -uo pipefail

OBJ=${1:?usage: core_drift.sh BPF_OBJECT [BTF]}
BTF=${2:-/sys/kernel/btf/vmlinux}
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[ -x "$BPFTOOL" ] || fail "bpftool not found: install it (scripts/install-deps)"
[ -f "$OBJ" ] || fail "$OBJ missing: build target twl_agent_bpf"
[ -r "$BTF" ] || fail "$BTF not readable: this check needs a kernel with CONFIG_DEBUG_INFO_BTF"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BPFTOOL" gen min_core_btf "$BTF" "$work/min.btf" "$OBJ" >"$work/out" 2>&1 ||
	{ cat "$work/out" >&2; fail "bpftool gen min_core_btf failed"; }
"$BPFTOOL" btf dump file "$work/min.btf" >"$work/min.txt" || fail "cannot dump the minimal BTF"
"$BPFTOOL" btf dump file "$BTF" >"$work/full.txt" || fail "cannot dump $BTF"

# members STRUCT FILE: member names of STRUCT in a `bpftool btf dump` listing
members() {
	awk -v s="STRUCT '$1'" '$0 ~ "^\\[" { inside = index($0, s) > 0; next }
		inside { gsub(/'\''/, "", $1); print $1 }' "$2"
}

errors=0
need() {
	local st=$1 field=$2
	if ! members "$st" "$work/min.txt" | grep -x -- "$field" >/dev/null; then
		echo "CHECK FAILED: $st.$field does not resolve against $BTF" >&2
		errors=$((errors + 1))
	fi
}
for sf in task_struct.cgroups css_set.subsys mem_cgroup.css file.f_mode \
	cgroup.kn cgroup.root kernfs_node.name kernfs_node.id kernfs_node.priv \
	kernfs_open_file.kn kernfs_open_file.file cgroup_subsys_state.cgroup \
	cgroup_subsys.id cgroup_root.hierarchy_id cftype.ss cftype.flags; do
	need "${sf%%.*}" "${sf#*.}"
done

# The parent pointer: whichever name this kernel has must be the one used.
if members kernfs_node "$work/full.txt" | grep -x __parent >/dev/null; then
	want=__parent other=parent
else
	want=parent other=__parent
fi
need kernfs_node "$want"
if members kernfs_node "$work/min.txt" | grep -x -- "$other" >/dev/null; then
	echo "CHECK FAILED: kernfs_node.$other resolved too, on a kernel that has $want" >&2
	errors=$((errors + 1))
fi
grep -q "'memory_cgrp_id' val=" "$work/min.txt" ||
	{ echo "CHECK FAILED: enum cgroup_subsys_id has no memory_cgrp_id" >&2; errors=$((errors + 1)); }

[ $errors = 0 ] || fail "$errors CO-RE relocation check(s) failed against $BTF"
echo "ok: usage.bpf.o relocates against $BTF (kernfs_node.$want, memory_cgrp_id=$(sed -n "s/.*'memory_cgrp_id' val=\([0-9]*\).*/\1/p" "$work/min.txt"))"
