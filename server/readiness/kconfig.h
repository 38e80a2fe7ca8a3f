/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel .config, parsed: which bool and tristate symbols are set. Pure:
 * no I/O, thread-safe.
 */
#ifndef TWL_SERVER_READINESS_KCONFIG_H
#define TWL_SERVER_READINESS_KCONFIG_H

#include <stddef.h>

#include <jansson.h>

/* Largest .config accepted (Debian's 6.12 amd64 one is 283 KB). */
#define TWL_KCONFIG_MAX_BYTES (2u << 20)
/* Longest line, and most symbols, of one .config. */
#define TWL_KCONFIG_MAX_LINE 4096
#define TWL_KCONFIG_MAX_SYMBOLS 40000
/* Longest kernel release taken from the header. */
#define TWL_KCONFIG_MAX_RELEASE 64

/*
 * twl_kconfig_parse - parse the .config text @text (@len bytes) into
 * *@symbols, a new object {"CONFIG_X": true|false}: "=y" and "=m" are
 * true, "# CONFIG_X is not set" and "=n" false; string and number values
 * are skipped. @release (@rcap bytes) gets the release of the header line
 * "# Linux/<arch> <release> Kernel Configuration", or "" when there is
 * none. Other comment lines and blank lines are skipped.
 * Returns 0; -EFBIG over TWL_KCONFIG_MAX_BYTES; -EINVAL for anything
 * else that is not a .config (a NUL byte, a line over
 * TWL_KCONFIG_MAX_LINE, a line neither blank, comment nor CONFIG_X=value,
 * a bad symbol name or value, no symbol at all, too many), with @err
 * (@ecap bytes) naming the line and what was wrong; -ENOMEM. *@symbols is
 * NULL on error.
 */
int twl_kconfig_parse(const char *text, size_t len, json_t **symbols,
		      char *release, size_t rcap, char *err, size_t ecap);

#endif /* TWL_SERVER_READINESS_KCONFIG_H */
