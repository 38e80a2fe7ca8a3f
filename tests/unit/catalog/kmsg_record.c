// SPDX-License-Identifier: GPL-2.0
/* Catalog tests: kernel texts written as /dev/kmsg records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "kmsg_record.h"

/* Contract: see kmsg_record.h. */
size_t kmsg_record(char *out, size_t cap, int prefix, unsigned long long seq,
		   const char *caller, const char *text)
{
	int n = snprintf(out, cap, "%d,%llu,%llu,-%s%s;", prefix, seq,
			 seq * 1000 + 17, caller ? ",caller=" : "",
			 caller ? caller : "");

	assert_true(n > 0 && (size_t)n < cap);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		assert_true((size_t)n + 5 < cap);
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			n += snprintf(out + n, cap - (size_t)n, "\\x%02x", *p);
		else
			out[n++] = (char)*p;
	}
	out[n++] = '\n';
	return (size_t)n;
}
