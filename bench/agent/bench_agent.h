/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the twl_bench_agent sources (bench_agent.c, bench_text.c). */
#ifndef TWL_BENCH_AGENT_H
#define TWL_BENCH_AGENT_H

#include <stddef.h>
#include <stdio.h>

#include <twilight/catalog.h>

/* Kernel lines that are not deprecations, NULL-terminated; BENCH_NOISE of them. */
extern const char *const bench_noise[];
#define BENCH_NOISE 8

/* Every catalog message (at most @cap) into @msgs; how many. */
size_t bench_messages(const struct twl_catalog_message **msgs, size_t cap);

/* Catalog message @m as a kernel would print it (sample template fields). */
void bench_render(const struct twl_catalog_message *m, char *out, size_t cap);

/* @t with /dev/kmsg's "\xNN" escapes. */
void bench_escape(const char *t, FILE *f);

/* gen-text / parse-text (bench_text.c). 0 or 1 (reported on stderr). */
int bench_gen_text(const char *format, const char *path, unsigned long n,
		   unsigned permille);
int bench_parse_text(const char *path);

#endif /* TWL_BENCH_AGENT_H */
