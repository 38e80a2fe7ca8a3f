/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Upgrade readiness composed once for both backends (read_readiness.c)
 * from the queries TWL_RQ_READY_* of read_answers.h, which each backend
 * writes in its dialect (store/sqlite/store_sqlite_readiness.c,
 * store/postgresql/store_pg_readiness.c).
 */
#ifndef TWL_SERVER_STORE_READ_READINESS_H
#define TWL_SERVER_STORE_READ_READINESS_H

#include <jansson.h>

struct twl_store;
struct twl_rq_io;
struct twl_readiness_query;

/*
 * twl_answer_readiness - twl_read_readiness() (store_read.h, with its
 * contract) on backend @io: one snapshot on a read context of its own.
 */
int twl_answer_readiness(const struct twl_rq_io *io, struct twl_store *s,
			 const struct twl_readiness_query *q, json_t **out);

#endif /* TWL_SERVER_STORE_READ_READINESS_H */
