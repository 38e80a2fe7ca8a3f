# tests/fleet/expect.awk -v maps=FILE: from a workload's own log
# (twl-workload lines), what must have reached the server for that host:
#   W <feature> <warning call sites hit>
#   U <feature> <process> <uses counted by BPF: writes, registrations>
#   R <feature> <process> <reads counted by BPF>
#   K <feature> <process> configures|listens|reads   the kinds of its use:
#     a write configures, an eventfd registration listens, a read reads
# FILE maps control files to catalog features ("F file feature" for files,
# "E file feature" for eventfd targets), made from GET /api/v1/catalog.
#
# Uses (BPF, agent/bpf): every write attempt, failed or not, counts once
# for the file's feature; an eventfd registration counts once for the
# target's event feature, plus once as a read of the target file (the
# workload opens it for reading to register it), which the server keeps
# apart from uses (a read is no use); cgroup v2 files count nothing.
#
# Warnings: each call site warns once per boot (pr_warn_once), so a
# feature's count is the number of its distinct call sites the workload
# reached, not the number of uses. The rules are the 6.1 backport's
# (kernel/README.md):
#   memory.kmem.tcp.limit_in_bytes write, non-root cgroup -> kmem_tcp_limit
#   memory.soft_limit_in_bytes write                       -> soft_limit
#   memory.oom_control eventfd registration                -> oom_control (site 1)
#   memory.oom_control direct write                        -> oom_control (site 2)
#   memory.pressure_level eventfd registration             -> pressure_level
#   memory.kmem.limit_in_bytes write (warns, then fails)   -> kmem_limit
#   memory.move_charge_at_immigrate write                  -> move_charge
#   memory.use_hierarchy write of 0 (warns, then EINVAL)   -> non_hierarchical
# Any other line (cgroup v2 files, reads) warns nothing. A read of a v1
# file is one BPF read per repetition (once per open), never a use; every
# read must have succeeded (a failed open never reaches the probe). A mount
# (the catalog probe's) touches no control file: its kernel message is
# checked by tests/guest/e2e/catalog-probe.sh, not here. A line the rules
# do not know is an error: the test must not silently expect nothing.
BEGIN {
	while ((getline l < maps) > 0) {
		split(l, m, " ")
		if (m[1] == "F") F[m[2]] = m[3]; else E[m[2]] = m[3]
	}
}
$1 != "workload" { next }
{
	delete a
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		a[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	if (a["n"] + 0 < 1) { print "bad workload line: " $0 > "/dev/stderr"; bad = 1; next }
	op = a["op"]; f = a["file"]; v1 = a["dir"] ~ /^\/sys\/fs\/cgroup\/memory(\/|$)/
	site = ""
	if (op == "mount")
		next
	if (!v1) {
		if (a["dir"] !~ /^\/sys\/fs\/cgroup\/unified(\/|$)/) {
			print "workload line outside the known hierarchies: " $0 > "/dev/stderr"; bad = 1
		}
		next
	}
	if (op == "write" && f == "memory.kmem.tcp.limit_in_bytes") {
		if (a["cgroup"] != "/") site = "memcg_v1.kmem_tcp_limit tcp"
	} else if (op == "write" && f == "memory.soft_limit_in_bytes") {
		site = "memcg_v1.soft_limit soft"
	} else if (op == "event" && f == "memory.oom_control") {
		site = "memcg_v1.oom_control register"
	} else if (op == "write" && f == "memory.oom_control") {
		site = "memcg_v1.oom_control write"
	} else if (op == "event" && f == "memory.pressure_level") {
		site = "memcg_v1.pressure_level register"
	} else if (op == "write" && f == "memory.kmem.limit_in_bytes") {
		site = "memcg_v1.kmem_limit write"
	} else if (op == "write" && f == "memory.move_charge_at_immigrate") {
		site = "memcg_v1.move_charge write"
	} else if (op == "write" && f == "memory.use_hierarchy") {
		if (a["value"] == "0") site = "memcg_v1.non_hierarchical write"
	} else if (op == "read") {
		if (a["failed"] != "0") { print "a read failed: " $0 > "/dev/stderr"; bad = 1; next }
	} else {
		print "no rule for workload line: " $0 > "/dev/stderr"; bad = 1
		next
	}
	if (op == "read") {
		reads(F[f], a["comm"], a["n"])
	} else if (op == "write") {
		use(F[f], a["comm"], a["n"], "configures")
	} else if (op == "event") {
		use(E[f], a["comm"], a["n"], "listens")
		if (f in F) reads(F[f], a["comm"], a["n"])
	}
	if (site != "" && !(site in seen)) {
		seen[site] = 1
		split(site, p, " ")
		n[p[1]]++
	}
}
function use(feature, comm, count, kind) {
	if (feature == "") { print "no catalog feature for: " $0 > "/dev/stderr"; bad = 1; return }
	u[feature " " comm] += count
	k[feature " " comm " " kind] = 1
}
function reads(feature, comm, count) {
	if (feature == "") { print "no catalog feature for: " $0 > "/dev/stderr"; bad = 1; return }
	r[feature " " comm] += count
	k[feature " " comm " reads"] = 1
}
END {
	for (x in n)
		print "W", x, n[x]
	for (x in u)
		print "U", x, u[x]
	for (x in r)
		print "R", x, r[x]
	for (x in k)
		print "K", x
	exit bad
}
