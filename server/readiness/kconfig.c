// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel .config parser (kconfig.h). The format is what scripts/kconfig
 * writes: "CONFIG_X=value" lines, "# CONFIG_X is not set" for a bool or
 * tristate that is off, and comments.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "readiness/kconfig.h"

#define NOT_SET " is not set"

/* A symbol name: CONFIG_ then [A-Za-z0-9_]+, @n bytes, at most 128. */
static bool ok_symbol(const char *s, size_t n)
{
	size_t i;

	if (n <= 7 || n > 128 || strncmp(s, "CONFIG_", 7))
		return false;
	for (i = 7; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* A value that is not a bool: a quoted string or a (hex) number. */
static bool ok_other_value(const char *v, size_t n)
{
	const char *digits = "0123456789";
	size_t i = 0;

	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		return true;
	if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		digits = "0123456789abcdefABCDEF";
		i = 2;
	} else if (n > 1 && v[0] == '-') {
		i = 1;
	}
	if (i == n)
		return false;
	for (; i < n; i++)
		if (!strchr(digits, v[i]))
			return false;
	return true;
}

/* "# Linux/x86 6.12.118 Kernel Configuration": copy the release. */
static void header_release(const char *l, size_t n, char *release, size_t cap)
{
	static const char tail[] = " Kernel Configuration";
	const char *sp;
	size_t tl = sizeof(tail) - 1, rl;

	if (n < 9 + tl || strncmp(l, "# Linux/", 8) ||
	    memcmp(l + n - tl, tail, tl) || release[0])
		return;
	sp = memchr(l + 8, ' ', n - 8 - tl);
	if (!sp)
		return;
	rl = (size_t)(l + n - tl - sp - 1);
	if (rl == 0 || rl >= cap || memchr(sp + 1, ' ', rl))
		return;
	memcpy(release, sp + 1, rl);
	release[rl] = '\0';
}

/* One line (without its newline): 0, or -EINVAL with why in @err. */
static int parse_line(const char *l, size_t n, json_t *obj, char *release,
		      size_t rcap, const char **why)
{
	const char *eq;
	char name[129];
	size_t nl, vl;

	while (n && (l[n - 1] == '\r' || l[n - 1] == ' '))
		n--;
	if (!n)
		return 0;
	if (l[0] == '#') {
		nl = sizeof(NOT_SET) - 1;
		if (n > 2 + nl && l[1] == ' ' && ok_symbol(l + 2, n - 2 - nl) &&
		    !memcmp(l + n - nl, NOT_SET, nl)) {
			memcpy(name, l + 2, n - 2 - nl);
			name[n - 2 - nl] = '\0';
			return json_object_set_new(obj, name, json_false()) ?
				       -ENOMEM :
				       0;
		}
		header_release(l, n, release, rcap);
		return 0;
	}
	eq = memchr(l, '=', n);
	nl = eq ? (size_t)(eq - l) : n;
	if (!eq || !ok_symbol(l, nl)) {
		*why = "expected CONFIG_<NAME>=<value>, a comment or a blank line";
		return -EINVAL;
	}
	vl = n - nl - 1;
	memcpy(name, l, nl);
	name[nl] = '\0';
	if (vl == 1 && (eq[1] == 'y' || eq[1] == 'm' || eq[1] == 'n'))
		return json_object_set_new(obj, name,
					   json_boolean(eq[1] != 'n')) ?
			       -ENOMEM :
			       0;
	if (!ok_other_value(eq + 1, vl)) {
		*why = "the value is not y, m, n, a quoted string or a number";
		return -EINVAL;
	}
	return 0;
}

/* Contract: see kconfig.h. */
int twl_kconfig_parse(const char *text, size_t len, json_t **symbols,
		      char *release, size_t rcap, char *err, size_t ecap)
{
	const char *p = text, *end = text + len, *nl, *why = NULL;
	json_t *obj = NULL;
	size_t line = 0;
	int rc = -EINVAL;

	*symbols = NULL;
	release[0] = '\0';
	err[0] = '\0';
	if (len > TWL_KCONFIG_MAX_BYTES) {
		snprintf(err, ecap, "a .config is at most %u bytes",
			 TWL_KCONFIG_MAX_BYTES);
		return -EFBIG;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, ecap, "the text holds a NUL byte");
		return -EINVAL;
	}
	obj = json_object();
	if (!obj)
		return -ENOMEM;
	for (; p < end; p = nl + 1) {
		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl - p > TWL_KCONFIG_MAX_LINE)
			why = "the line is longer than 4096 bytes";
		else
			rc = parse_line(p, (size_t)(nl - p), obj, release, rcap,
					&why);
		if (why || rc == -ENOMEM)
			goto out;
		if (json_object_size(obj) > TWL_KCONFIG_MAX_SYMBOLS) {
			why = "more than 40000 symbols";
			goto out;
		}
	}
	line = 0;
	if (!json_object_size(obj)) {
		why = "no CONFIG_ symbol set or unset";
		goto out;
	}
	*symbols = obj;
	return 0;
out:
	json_decref(obj);
	if (rc == -ENOMEM && !why)
		return -ENOMEM;
	if (line)
		snprintf(err, ecap, "line %zu: %s", line, why);
	else
		snprintf(err, ecap, "%s", why);
	return -EINVAL;
}
