# texts-check.awk: are the deprecation messages a guest kernel printed all
# in that kernel's texts file (tests/guest/kernels/texts/KERNEL.texts)?
#
#   awk -v texts=texts/KERNEL.texts -f texts-check.awk KMSG_DUMP
#
# KMSG_DUMP is a /dev/kmsg dump ("pri,seq,ts,flags;text" records as
# devkmsg_read() writes them, bytes below 0x20, from 0x7f and the backslash
# as \xNN; continuation lines start with a space). A record of the kernel
# (facility 0) is a deprecation message when its text mentions "deprecat"
# (any case) or "cgroup v2", the rule of tests/guest/kmsg-classify.awk. Each
# must match a line of the texts file: the same level, and the text its C
# string gives once escaped as /dev/kmsg does, %d standing for digits and %s
# for any non-empty text. Prints one line per message that matches none and
# exits 1 if there is one; exits 2 if the texts file cannot be read or has a
# line it does not understand. The texts file format is in
# schema/catalog.md, "Kernel texts".

# The regular expression of C string body @s: escapes turned into the
# kmsg form, metacharacters quoted, %d and %s turned into classes.
function text_regex(s,    out, i, c, n) {
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c == "\\") {
			c = substr(s, ++i, 1)
			if (c == "n")
				out = out "\\\\x0a"
			else if (c == "t")
				out = out "\\\\x09"
			else if (c == "\\")
				out = out "\\\\x5c"
			else if (c == "\"")
				out = out "\""
			else
				return ""
		} else if (c == "%") {
			c = substr(s, ++i, 1)
			if (c == "d")
				out = out "[0-9]+"
			else if (c == "s")
				out = out ".+"
			else if (c == "%")
				out = out "%"
			else
				return ""
		} else if (c == "^")
			out = out "\\^"
		else if (c == "]")
			out = out "[]]"
		else if (index("$.[|()*+?{}", c))
			out = out "[" c "]"
		else
			out = out c
	}
	return "^" out "$"
}

BEGIN {
	if (texts == "") {
		print "texts-check.awk: usage: awk -v texts=FILE -f texts-check.awk KMSG_DUMP" > "/dev/stderr"
		fatal = 1
		exit 2
	}
	n = 0
	while ((r = (getline line < texts)) > 0) {
		lineno++
		if (line ~ /^#/ || line ~ /^[ \t]*$/)
			continue
		if (split(line, f, "\t") != 3 || f[1] !~ /^[0-7]$/ || f[3] !~ /^".*"$/) {
			printf "texts-check.awk: %s:%d: not LEVEL<TAB>FEATURE<TAB>\"C string\"\n", texts, lineno > "/dev/stderr"
			fatal = 1
			exit 2
		}
		re = text_regex(substr(f[3], 2, length(f[3]) - 2))
		if (re == "") {
			printf "texts-check.awk: %s:%d: unknown escape or conversion in %s\n", texts, lineno, f[3] > "/dev/stderr"
			fatal = 1
			exit 2
		}
		n++
		lvl[n] = f[1]
		rx[n] = re
		feat[n] = f[2]
	}
	if (r < 0 || n == 0) {
		printf "texts-check.awk: cannot read texts from %s\n", texts > "/dev/stderr"
		fatal = 1
		exit 2
	}
}

/^ / { next } # continuation (dictionary) line of a record

{
	semi = index($0, ";")
	if (semi == 0)
		next
	split(substr($0, 1, semi - 1), pfx, ",")
	if (int(pfx[1] / 8) != 0)
		next # not the kernel's
	level = pfx[1] % 8
	text = substr($0, semi + 1)
	if (tolower(text) !~ /deprecat/ && text !~ /cgroup v2/)
		next
	seen++
	for (i = 1; i <= n; i++)
		if (lvl[i] == level && text ~ rx[i])
			break
	if (i > n) {
		printf "NOT IN %s: level %d: %s\n", texts, level, text
		missing++
	}
}

END {
	if (fatal)
		exit 2
	if (missing) {
		printf "texts-check.awk: %d of %d deprecation messages are not in %s: add them (and to schema/catalog.json if they are new)\n", missing, seen, texts
		exit 1
	}
	printf "texts-check.awk: all %d deprecation messages are in %s\n", seen, texts
}
