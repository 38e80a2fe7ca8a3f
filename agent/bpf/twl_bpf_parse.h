/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure parsing shared by the BPF programs and the unit tests (so what runs
 * in the kernel is tested in user space). No helpers, no maps.
 *
 * Since writes are counted on the memory controller's handlers, the
 * write_u64 file memory.use_hierarchy is judged on the value the kernel
 * parsed (mem_cgroup_hierarchy_write's argument), not with this parser; it
 * remains for a value condition on the buffer of a kernfs-style handler
 * (cond_met() in usage.bpf.c), which no 6.1 catalog file has.
 */
#ifndef TWILIGHT_BPF_PARSE_H
#define TWILIGHT_BPF_PARSE_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Bytes of a written value twl_value_not_1() looks at (incl. the NUL). */
#define TWL_BPF_VALUE_LEN 32

static __always_inline int twl_digit_value(char c, int base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		d = (c | 0x20) - 'a' + 10;
	else
		return -1;
	return d < base ? d : -1;
}

/*
 * twl_value_not_1 - true when the kernel parses @s (the NUL-terminated
 * start of a written buffer, TWL_BPF_VALUE_LEN bytes readable) as a number
 * other than 1, the condition of the non_hierarchical warning. The rules
 * are kstrtoull's with base 0 (lib/kstrtox.c, used by cgroup_file_write for
 * write_u64 files): optional '+', "0x" + hex digit = hex, leading '0' =
 * octal, one optional trailing newline, nothing else. A string the kernel
 * rejects meets no condition (the write fails before the handler, nothing
 * is printed). Values longer than 31 bytes are judged from their first 31
 * bytes, and overflow (ERANGE) is not detected.
 */
static __always_inline int twl_value_not_1(const char *s)
{
	/* 0 start, 1 number start, 2 after a leading 0, 6 after "0x", 3 digits, 4 after '\n' */
	int state = 0, base = 10, ndig = 0, sig = 0, first = 0, d, j;
	char c;

	/*
	 * Fully unrolled so every s[j] has a constant offset: the verifier
	 * refuses the pointer arithmetic clang emits for a variable index.
	 */
#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (j = 0; j < TWL_BPF_VALUE_LEN - 1; j++) {
		c = s[j];
		if (state == 0) {
			state = 1;
			if (c == '+')
				continue;
		}
		if (state == 1) {
			if (c == '0') {
				base = 8;
				ndig = 1;
				state = 2;
				continue;
			}
			state = 3;
		} else if (state == 2) {
			if ((c | 0x20) == 'x') {
				state = 6;
				continue;
			}
			state = 3;
		} else if (state == 6) {
			if (twl_digit_value(c, 16) < 0)
				return 0; /* "0x" without a hex digit: octal 0, then junk */
			base = 16;
			state = 3;
		} else if (state == 4) {
			if (c)
				return 0;
			break;
		}
		if (!c)
			break;
		if (c == '\n') {
			state = 4;
			continue;
		}
		d = twl_digit_value(c, base);
		if (d < 0)
			return 0;
		ndig++;
		if (sig || d) {
			if (!sig)
				first = d;
			sig++;
		}
	}
	if (!ndig || !(state == 2 || state == 3 || state == 4))
		return 0;
	return !(sig == 1 && first == 1);
}

#endif /* TWILIGHT_BPF_PARSE_H */
