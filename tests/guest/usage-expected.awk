# usage-expected.awk: the BPF usage entries a workload log must produce.
# Run: awk -v maps=FILE -f usage-expected.awk WORKLOAD_LOG
# maps: lines "F <file> <feature>" and "E <event file> <feature>" from the
# catalog (control files and eventfd target files). Input: twl-workload
# log lines with cond=all|none appended (whether the kernel's warning
# condition held for every use of the run or for none). Output, one line
# per usage key:
#   op|file|cgroup|comm|writer|feature|uid count failed condition_met
# Writes are keyed by their target cgroup (the writer's own, or target= when
# the run acted on a cgroup it was not in), reads without one; an eventfd
# registration counts as register_event on the target file and, since the
# workload opens that file for reading to register, as a read of it when it
# is a catalog file. Exit status 1 if a run names a file the catalog lacks.
BEGIN {
	while ((getline l < maps) > 0) {
		split(l, a, " ")
		if (a[1] == "F")
			F[a[2]] = a[3]
		else
			E[a[2]] = a[3]
	}
}

function add(o, f, t, cm, w, feat, n, fl, c,   k) {
	if (feat == "") {
		print "no catalog feature for " o " " f > "/dev/stderr"
		bad = 1
	}
	k = o "|" f "|" t "|" cm "|" w "|" feat "|" uid
	N[k] += n
	FL[k] += fl
	C[k] += c
}

/^workload / {
	delete kv
	for (i = 2; i <= NF; i++) {
		p = index($i, "=")
		kv[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
	op = kv["op"]; file = kv["file"]; cg = kv["cgroup"]; comm = kv["comm"]
	n = kv["n"] + 0; failed = kv["failed"] + 0; uid = kv["uid"]
	c = kv["cond"] == "all" ? n : 0
	tgt = "target" in kv ? kv["target"] : cg
	if (op == "write")
		add("write", file, tgt, comm, cg, F[file], n, failed, c)
	else if (op == "read")
		add("read", file, "", comm, cg, F[file], n, failed, 0)
	else if (op == "event") {
		if (failed) {
			print "registration failed in workload: " $0 > "/dev/stderr"
			bad = 1
		}
		add("register_event", file, cg, comm, cg, E[file], n, failed, c)
		if (file in F)
			add("read", file, "", comm, cg, F[file], n, 0, 0)
	}
}

END {
	for (k in N)
		print k, N[k], FL[k], C[k]
	exit bad
}
