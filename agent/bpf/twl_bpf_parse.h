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
 *
 * twl_memparse_pages() is the v1 memory controller's own value parser
 * (mem_cgroup_write: strstrip, then page_counter_memparse(buf, "-1")), for
 * the writes whose value the kernel stores nowhere BPF can read it back (and
 * failed writes). The programs run it in a bpf_loop() callback, one step at
 * a time over a struct the caller keeps (usage.bpf.c, twl_limit_value()).
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

/*
 * Bytes of a written buffer twl_memparse_pages() looks at (incl. the NUL):
 * values of up to TWL_BPF_MEMPARSE_LEN - 2 bytes are judged, longer ones
 * (a read of this many bytes has no NUL before the last) are not.
 */
#define TWL_BPF_MEMPARSE_LEN 48
/* x86-64, the only target the BPF objects are built for (-D__TARGET_ARCH_x86). */
#define TWL_BPF_PAGE_SHIFT 12
/* include/linux/page_counter.h on 64-bit: LONG_MAX / PAGE_SIZE. */
#define TWL_BPF_PAGE_COUNTER_MAX (0x7fffffffffffffffULL >> TWL_BPF_PAGE_SHIFT)
/* Results of twl_memparse_pages() besides 0 (errno values, no errno.h in BPF). */
#define TWL_BPF_MEMPARSE_EINVAL (-22)
#define TWL_BPF_MEMPARSE_E2BIG (-7)

/* States of the memparse scanner. */
enum twl_memparse_state {
	TWL_MP_LEAD = 0, /* leading white space (strstrip) */
	TWL_MP_ZERO, /* after a leading '0': octal, or "0x" */
	TWL_MP_ZERO_X, /* after "0x": hex only if a hex digit follows */
	TWL_MP_DIGITS, /* digits in base, then a suffix or the end */
	TWL_MP_MINUS, /* after '-': only "-1" is accepted */
	TWL_MP_MINUS1, /* after "-1" */
	TWL_MP_TRAIL, /* trailing white space (strstrip) */
};

struct twl_memparse {
	unsigned long long bytes; /* wraps like simple_strtoull's result */
	int state; /* enum twl_memparse_state */
	int base;
	int unlimited; /* the value was "-1" */
};

/* The kernel's isspace() (lib/ctype.c): \t \n \v \f \r, space and 0xa0. */
static __always_inline int twl_kspace(unsigned char c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0xa0;
}

/* memparse()'s suffix @c as a shift (K 10 ... E 60), 0 if none. */
static __always_inline int twl_memparse_shift(char c)
{
	switch (c | 0x20) {
	case 'k':
		return 10;
	case 'm':
		return 20;
	case 'g':
		return 30;
	case 't':
		return 40;
	case 'p':
		return 50;
	case 'e':
		return 60;
	default:
		return 0;
	}
}

/*
 * One byte @c of the buffer: 0 to go on, 1 at the end of a valid value, -1
 * when the kernel would refuse it. The prefix rules are
 * _parse_integer_fixup_radix()'s with base 0 ("0x" counts only before a hex
 * digit, else the '0' is octal and the 'x' is junk); no sign, unlike
 * kstrtoull; digits accumulate without an overflow check, as in
 * simple_strtoull(); one suffix, then only white space.
 */
static __always_inline int twl_memparse_step(struct twl_memparse *p,
					     unsigned char c)
{
	int d;

	switch (p->state) {
	case TWL_MP_LEAD:
		if (twl_kspace(c))
			return 0;
		if (c == '-') {
			p->state = TWL_MP_MINUS;
			return 0;
		}
		if (c == '0') {
			p->base = 8;
			p->state = TWL_MP_ZERO;
			return 0;
		}
		p->state = TWL_MP_DIGITS;
		break;
	case TWL_MP_ZERO:
		if ((c | 0x20) == 'x') {
			p->state = TWL_MP_ZERO_X;
			return 0;
		}
		p->state = TWL_MP_DIGITS;
		break;
	case TWL_MP_ZERO_X:
		if (twl_digit_value(c, 16) < 0)
			return -1;
		p->base = 16;
		p->state = TWL_MP_DIGITS;
		break;
	case TWL_MP_MINUS:
		if (c != '1')
			return -1;
		p->state = TWL_MP_MINUS1;
		return 0;
	case TWL_MP_MINUS1:
		if (c && !twl_kspace(c))
			return -1;
		p->unlimited = 1;
		p->state = TWL_MP_TRAIL;
		return c ? 0 : 1;
	case TWL_MP_TRAIL:
		if (!c)
			return 1;
		return twl_kspace(c) ? 0 : -1;
	default:
		break;
	}
	/* TWL_MP_DIGITS */
	if (!c)
		return 1;
	d = twl_digit_value(c, p->base);
	if (d >= 0) {
		p->bytes = p->bytes * p->base + d;
		return 0;
	}
	d = twl_memparse_shift(c);
	if (d) {
		p->bytes <<= d;
		p->state = TWL_MP_TRAIL;
		return 0;
	}
	if (twl_kspace(c)) {
		p->state = TWL_MP_TRAIL;
		return 0;
	}
	return -1;
}

/*
 * twl_memparse_finish - the result of a scan that twl_memparse_step() left
 * in @p with its last return @r (0: no end seen in the window): writes
 * *@pages and returns as twl_memparse_pages() does.
 */
static __always_inline int twl_memparse_finish(const struct twl_memparse *p,
					       int r, unsigned long long *pages)
{
	unsigned long long n;

	if (!r)
		return TWL_BPF_MEMPARSE_E2BIG;
	if (r < 0)
		return TWL_BPF_MEMPARSE_EINVAL;
	if (p->unlimited) {
		*pages = TWL_BPF_PAGE_COUNTER_MAX;
		return 0;
	}
	n = p->bytes >> TWL_BPF_PAGE_SHIFT;
	*pages = n < TWL_BPF_PAGE_COUNTER_MAX ? n : TWL_BPF_PAGE_COUNTER_MAX;
	return 0;
}

/* The state twl_memparse_step() starts from. */
static __always_inline void twl_memparse_init(struct twl_memparse *p)
{
	p->bytes = 0;
	p->state = TWL_MP_LEAD;
	p->base = 10;
	p->unlimited = 0;
}

/*
 * twl_memparse_pages - what the v1 memory controller makes of buffer @s
 * (NUL-terminated within its TWL_BPF_MEMPARSE_LEN readable bytes) written to
 * a memory v1 limit file: strstrip(), then page_counter_memparse(s, "-1"):
 * "-1" is unlimited (TWL_BPF_PAGE_COUNTER_MAX), else memparse() (decimal,
 * 0x hex, 0 octal, one suffix K M G T P E, any case), in bytes rounded down
 * to pages and capped at TWL_BPF_PAGE_COUNTER_MAX, so "max" is refused as
 * on v1 (an empty value is 0, as the kernel takes it). Writes *@pages and
 * returns 0, TWL_BPF_MEMPARSE_EINVAL where the kernel returns -EINVAL, or
 * TWL_BPF_MEMPARSE_E2BIG for a value too long to judge.
 */
static inline int twl_memparse_pages(const char *s, unsigned long long *pages)
{
	struct twl_memparse p;
	int j, r = 0;

	twl_memparse_init(&p);
	for (j = 0; j < TWL_BPF_MEMPARSE_LEN - 1 && !r; j++)
		r = twl_memparse_step(&p, (unsigned char)s[j]);
	return twl_memparse_finish(&p, r, pages);
}

#endif /* TWILIGHT_BPF_PARSE_H */
