/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The read API on PostgreSQL: the answers both backends compose
 * (store/read_answers.h) run here through read contexts on the store's
 * read connection (store_pg_rctx.c) over queries in PostgreSQL's dialect,
 * one table of them per file: store_pg_read.c (summary, host lists, one
 * host), store_pg_values.c (the values of a feature's files),
 * store_pg_health.c, store_pg_unknown.c, store_pg_feature.c (feature
 * detail, the alert detector's page), store_pg_readiness.c (upgrade
 * readiness), store_pg_export.c (the linux-mm export's data).
 */
#ifndef TWL_SERVER_STORE_PG_READ_H
#define TWL_SERVER_STORE_PG_READ_H

#include <stdint.h>

#include <jansson.h>

struct twl_store;
struct twl_read_filter;
struct twl_rq_io;

/*
 * A read's label filter: rows whose host @col carries host label $20
 * with the value $21; every row while $20 is NULL. The runner passes
 * both on every query (twl_pg_rq_io), so one query text serves the
 * filtered and the whole fleet. Every parameter is sent as text: the
 * queries cast the numbers ($2::bigint), and leave unused ones unused.
 */
#define TWL_PG_LABELED(col)                                          \
	" AND ($20::text IS NULL OR " col " IN (SELECT host_id FROM" \
	" host_labels WHERE key = $20 AND value = $21))"

/*
 * Text order as SQLite's (bytes), whatever the database's collation: the
 * two stores list and page alike.
 */
#define TWL_PG_C " COLLATE \"C\""

/* The runner of the shared answers on PostgreSQL (store_pg_rctx.c). */
extern const struct twl_rq_io twl_pg_rq_io;

/* Each file's queries by enum twl_rq_id (NULL: another file's). */
extern const char *const twl_pg_readiness_sql[];
extern const char *const twl_pg_read_sql[];
extern const char *const twl_pg_values_sql[];
extern const char *const twl_pg_health_sql[];
extern const char *const twl_pg_unknown_sql[];
extern const char *const twl_pg_feature_sql[];

/* The read functions of store_read.h on PostgreSQL, with its contracts. */
int twl_pg_read_summary(struct twl_store *s, int64_t now, json_t **out);
int twl_pg_read_hosts(struct twl_store *s, const struct twl_read_filter *f,
		      json_t **out);
int twl_pg_read_host(struct twl_store *s, const char *host_id, json_t **out);
int twl_pg_read_health(struct twl_store *s, int64_t now, int64_t silent_after,
		       const struct twl_read_filter *f, json_t **out);
int twl_pg_read_unknown(struct twl_store *s, const struct twl_read_filter *f,
			json_t **out);
int twl_pg_read_feature(struct twl_store *s, const char *id,
			const struct twl_read_filter *f, json_t **out);
/* twl_read_readiness() (store_pg_readiness.c) */
struct twl_readiness_query;
int twl_pg_read_readiness(struct twl_store *s,
			  const struct twl_readiness_query *q, json_t **out);
/* twl_read_alert_uses() of store_alerts.h */
struct twl_alert_page;
int twl_pg_read_alert_uses(struct twl_store *s, const struct twl_alert_page *p,
			   json_t **out);

/* The linux-mm export's data (store_pg_export.c), as twl_read_export_data(). */
extern const char *const twl_pg_export_sql[];
struct twl_export_opts;
int twl_pg_read_export_data(struct twl_store *s, int64_t now,
			    unsigned window_days, const char *feature,
			    const struct twl_export_opts *opts, json_t **out);

#endif /* TWL_SERVER_STORE_PG_READ_H */
