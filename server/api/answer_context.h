/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kept answers depend on beside the data and their parameters
 * (answer_context.c, for api_app.c and answer_keep.c): the server's code,
 * the settings that can change an answer, the catalog and the readiness
 * targets, hashed into one name that every stored answer's key includes.
 * A server restarted with all of them unchanged serves the stored
 * answers and computes them again at their usual times; one with any of
 * them changed finds none of them and computes its own.
 */
#ifndef TWL_SERVER_API_ANSWER_CONTEXT_H
#define TWL_SERVER_API_ANSWER_CONTEXT_H

#include <stdbool.h>

struct twl_config;

/*
 * twl_answer_setting_counts - whether the file setting @name can change
 * a kept answer. Those of the listener, TLS, limits, the database link
 * and writer, webhooks and the kept answers themselves cannot (and may
 * differ between the servers of one cluster); every other can, including
 * any setting added later.
 */
bool twl_answer_setting_counts(const char *name);

/*
 * twl_answer_context - the context of the answers of a server configured
 * by @cfg, as 64 hex digits into @out: SHA-256 of the server's executable
 * (read once per process), the values of the settings that count (above),
 * the current catalog and @cfg's targets (none without a data directory).
 * 0, or a negative errno (logged; @out is then "").
 */
int twl_answer_context(const struct twl_config *cfg, char out[65]);

#endif /* TWL_SERVER_API_ANSWER_CONTEXT_H */
