# kmsg-classify.awk: read a /dev/kmsg dump ("pri,seq,ts,flags;text" records,
# continuation lines start with a space) and print one line per deprecation
# message:  <step> <id> <level>
# where <step> is the name of the next "TWILIGHT-STEP <name>" marker record
# (markers are written after each step, so a message belongs to the step
# whose marker follows it; "after-end" if no marker follows), <id> the
# catalog id of the exact message text (upstream text, byte for byte, as
# /dev/kmsg escapes it) and <level> the syslog level (4 warn, 6 info).
# A line mentioning "deprecat" (any case) or "cgroup v2" that matches no
# known text is printed as id "UNKNOWN:<text>" so that a wrong or partial
# backport fails the comparison instead of passing unnoticed.
# With -v with_seq=1 each line ends in the record's sequence number.
BEGIN {
	# memcg v1 deprecation series (final texts, after the two text fixes)
	known["kmem.tcp.limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "tcp"
	known["soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "soft_limit"
	# 6.12 stable ("memcg: make the v1 soft limit knob inert", in Debian's
	# 6.12.111-1): the write is accepted and ignored
	known["soft_limit_in_bytes is deprecated and will be removed. Writing any value to this file has no effect. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "soft_limit"
	known["oom_control is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "oom_control"
	known["pressure_level is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "pressure_level"
	# printk keeps the embedded newline ("\n "), /dev/kmsg shows it escaped
	known["Per memcg swappiness does not exist in cgroup v2. See memory.reclaim or memory.swap.max there\\x0a "] = "swappiness"
	# already in Debian 6.1.192
	known["kmem.limit_in_bytes is deprecated and will be removed. Writing any value to this file has no effect. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "kmem_limit"
	known["Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "move_charge"
	known["Non-hierarchical mode is deprecated. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "non_hierarchical"
	known["The swapaccount=0 commandline option is deprecated in favor of configuring swap control via cgroupfs. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."] = "swapaccount"
	npending = 0
}

/^ / { next } # record dictionary continuation

{
	semi = index($0, ";")
	if (semi == 0)
		next
	split(substr($0, 1, semi - 1), pfx, ",")
	level = pfx[1] % 8
	seq = with_seq ? " " pfx[2] : ""
	text = substr($0, semi + 1)

	if (text ~ /^TWILIGHT-STEP [A-Za-z0-9_-]+$/) {
		step = substr(text, 15)
		for (i = 0; i < npending; i++)
			print step, pending[i]
		npending = 0
		next
	}
	if (text in known)
		id = known[text]
	else if (text ~ /^option changes via remount are deprecated \(pid=[0-9]+ comm=mount\)$/)
		id = "remount"
	else if (tolower(text) ~ /deprecat/ || text ~ /cgroup v2/) {
		id = "UNKNOWN:" text
		gsub(/ /, "_", id)
	} else
		next
	pending[npending++] = id " " level seq
}

END {
	for (i = 0; i < npending; i++)
		print "after-end", pending[i]
}
