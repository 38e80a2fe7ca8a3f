// SPDX-License-Identifier: GPL-2.0
/*
 * Usage rows of the ingest write path on PostgreSQL (store_pg_ingest.h),
 * with SQLite's rules (store/sqlite/store_sqlite_ingest.c): cumulative
 * counters keep their maximum per key, so replays and resends change
 * nothing; a row is addressed by the hash of its key (ingest.h,
 * twl_usage_key_hash()) and checked by its key_check; value summaries
 * are merged (min of mins, max of maxes, OR of unlimited) even when the
 * counter did not grow. What a counter grew by goes to the rollups.
 */
#include <errno.h>

#include "store/ingest.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/rollup_sum.h"

/* A key's value summary merged with an entry's (NULLs: it has none). */
#define VALUE_RANGE(MIN, MAX, UNL)                           \
	" value_min = least(value_min, " MIN "::bigint),"    \
	" value_max = greatest(value_max, " MAX "::bigint)," \
	" value_unlimited = greatest(value_unlimited, " UNL "::bigint)"
/* The merge when the entry's count grew: its last is the last. */
#define VALUE_GREW(LAST, MIN, MAX, UNL, UNIT, SRC, IMG)                      \
	" value_last = coalesce(" LAST "::bigint, value_last)," VALUE_RANGE( \
		MIN, MAX, UNL) ", value_unit = coalesce(" UNIT               \
			       ", value_unit), value_source = coalesce(" SRC \
			       ", value_source),"                            \
			       " image = coalesce(" IMG ", image)"
/* $1 .. $7: the entry's new values, for a count that grew */
#define NEW_VALUES                                                   \
	"container = $1, last_pid = $2::bigint, count = $3::bigint," \
	" failed = greatest(failed, $4::bigint),"                    \
	" condition_met = greatest(condition_met, $5::bigint),"      \
	" first_seen = least(first_seen, $6::bigint),"               \
	" last_seen = greatest(last_seen, $7::bigint)"

static const struct twl_pg_stmt usql[] = {
	/*
	 * The common case: the row at the key's hash id is the key's (its
	 * key_check and host) and its counter grew. Answers the count it
	 * replaced; no row when none matched.
	 */
	{ "u_bump",
	  "UPDATE usage SET " NEW_VALUES "," VALUE_GREW(
		  "$11", "$12", "$13", "$14", "$15", "$16",
		  "$17") " FROM (SELECT id AS old_id, count AS old_count FROM usage"
			 " WHERE id = $8::bigint) o WHERE usage.id = o.old_id"
			 " AND key_check = $9::bigint AND count < $3::bigint"
			 " AND host_id = $10 RETURNING o.old_count" },
	/* The row of a key, wherever it is stored (unique index). */
	{ "u_find",
	  "SELECT id, count FROM usage WHERE host_id = $1 AND boot_id = $2"
	  " AND feature_id = $3 AND file = $4 AND op = $5 AND cgroup = $6"
	  " AND comm = $7 AND uid = $8::bigint AND writer_cgroup = $9" },
	/* A row found by its key whose counter grew; $9 sets its check. */
	{ "u_upd",
	  "UPDATE usage SET " NEW_VALUES ", key_check = $9::bigint," VALUE_GREW(
		  "$10", "$11", "$12", "$13", "$14", "$15",
		  "$16") " WHERE id = $8::bigint" },
	/*
	 * An entry whose counter did not grow still merges its value
	 * summary; last stays the stored one's unless the counts are equal
	 * and this one was seen later.
	 */
	{ "u_merge",
	  "UPDATE usage SET value_last = CASE WHEN value_last IS NULL OR"
	  " ($1::bigint = count AND $2::bigint > last_seen)"
	  " THEN coalesce($4::bigint, value_last) ELSE value_last END," VALUE_RANGE(
		  "$5", "$6",
		  "$7") ", value_unit = coalesce(value_unit, $8),"
			" value_source = coalesce(value_source, $9),"
			" image = coalesce(image, $10) WHERE id = $3::bigint" },
	/* A new row under its key's hash, unless another row holds it. */
	{ "u_ins",
	  "INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
	  " comm, uid, writer_cgroup, container, last_pid, count, failed,"
	  " condition_met, first_seen, last_seen, id, key_check, target_kind,"
	  " value_last, value_min, value_max, value_unlimited, value_unit,"
	  " value_source, image)"
	  " VALUES($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9, $10,"
	  " $11::bigint, $12::bigint, $13::bigint, $14::bigint, $15::bigint,"
	  " $16::bigint, $17::bigint, $18::bigint, $19, $20::bigint,"
	  " $21::bigint, $22::bigint, $23::bigint, $24, $25, $26)"
	  " ON CONFLICT (id) DO NOTHING" },
	/*
	 * The hash taken by another key (its low 24 bits are the key's
	 * check: a host with thousands of keys): the first free id that
	 * differs from it in the low 12 bits, still among the host's ids.
	 */
	{ "u_ins_probe",
	  "INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
	  " comm, uid, writer_cgroup, container, last_pid, count, failed,"
	  " condition_met, first_seen, last_seen, id, key_check, target_kind,"
	  " value_last, value_min, value_max, value_unlimited, value_unit,"
	  " value_source, image)"
	  " SELECT $1, $2, $3, $4, $5, $6, $7, $8::bigint, $9, $10,"
	  " $11::bigint, $12::bigint, $13::bigint, $14::bigint, $15::bigint,"
	  " $16::bigint, c, $18::bigint, $19, $20::bigint,"
	  " $21::bigint, $22::bigint, $23::bigint, $24, $25, $26"
	  " FROM (SELECT $17::bigint # g AS c FROM generate_series(1, 4095) g"
	  " WHERE NOT EXISTS (SELECT 1 FROM usage"
	  " WHERE id = $17::bigint # g) ORDER BY g LIMIT 1) slot" },
};

/* Contract: see store_pg_internal.h. */
int twl_pg_usage_prepare(struct twl_pg *p)
{
	return twl_pg_prepare(p->wconn, p->where, usql,
			      sizeof(usql) / sizeof(*usql));
}

/* Whether u carries a value summary or an image. */
static bool has_value(const struct twl_wire_usage *u)
{
	return u->value.present || u->image[0];
}

/* u's value summary (last, min, max, unlimited, unit, source) and image. */
static void arg_value(struct twl_pg_args *a, const struct twl_wire_usage *u)
{
	const struct twl_wire_value *v = &u->value;

	if (v->present) {
		twl_pg_arg_i64(a, v->last);
		if (v->has_min)
			twl_pg_arg_i64(a, v->min);
		else
			twl_pg_arg_text(a, NULL);
		if (v->has_max)
			twl_pg_arg_i64(a, v->max);
		else
			twl_pg_arg_text(a, NULL);
		twl_pg_arg_i64(a, v->unlimited);
		twl_pg_arg_text(a, v->unit);
		twl_pg_arg_text(a, v->source);
	} else {
		for (int i = 0; i < 6; i++)
			twl_pg_arg_text(a, NULL);
	}
	twl_pg_arg_text(a, u->image[0] ? u->image : NULL);
}

/* (host_id, u's nine-field key). */
static void arg_key(struct twl_pg_args *a, const char *host_id,
		    const struct twl_wire_usage *u)
{
	twl_pg_arg_text(a, host_id);
	twl_pg_arg_text(a, u->boot_id);
	twl_pg_arg_text(a, u->feature);
	twl_pg_arg_text(a, u->file);
	twl_pg_arg_text(a, u->op);
	twl_pg_arg_text(a, u->cgroup);
	twl_pg_arg_text(a, u->comm);
	twl_pg_arg_i64(a, u->uid);
	twl_pg_arg_text(a, u->writer_cgroup);
}

/* u's new values: container .. last_seen. */
static void arg_new(struct twl_pg_args *a, const struct twl_wire_usage *u)
{
	twl_pg_arg_text(a, u->container);
	twl_pg_arg_i64(a, u->last_pid);
	twl_pg_arg_i64(a, u->count);
	twl_pg_arg_i64(a, u->failed);
	twl_pg_arg_i64(a, u->condition_met);
	twl_pg_arg_i64(a, u->first_seen);
	twl_pg_arg_i64(a, u->last_seen);
}

/*
 * Run @name: 1 with the first row's first two cells in *@c0 (and *@c1
 * when not NULL) when it answered a row, 0 when none, or -errno.
 */
static int one_row(struct twl_pg *p, const char *name,
		   const struct twl_pg_args *a, int64_t *c0, int64_t *c1)
{
	PGresult *r;
	int ret = twl_pg_run(p->wconn, name, a, &r);

	if (ret)
		return ret;
	ret = PQntuples(r) > 0;
	if (ret)
		*c0 = twl_pg_int(r, 0, 0);
	if (ret && c1)
		*c1 = twl_pg_int(r, 0, 1);
	PQclear(r);
	return ret;
}

/* u_bump: 1 with *old set when the row at its hash grew, 0, or -errno. */
static int usage_bump(struct twl_pg *p, const char *host_id,
		      const struct twl_wire_usage *u, int64_t id, int64_t check,
		      int64_t *old)
{
	struct twl_pg_args a = { 0 };

	arg_new(&a, u);
	twl_pg_arg_i64(&a, id);
	twl_pg_arg_i64(&a, check);
	twl_pg_arg_text(&a, host_id);
	arg_value(&a, u);
	return one_row(p, "u_bump", &a, old, NULL);
}

/* A new row of u: under id @hash, or the first free id near it. */
static int usage_insert(struct twl_pg *p, const char *host_id,
			const struct twl_wire_usage *u, int64_t hash,
			int64_t check)
{
	struct twl_pg_args a = { 0 };
	PGresult *r;
	int64_t n;
	int ret;

	arg_key(&a, host_id, u);
	arg_new(&a, u);
	twl_pg_arg_i64(&a, hash);
	twl_pg_arg_i64(&a, check);
	twl_pg_arg_text(&a, u->target_kind);
	arg_value(&a, u);
	ret = twl_pg_run(p->wconn, "u_ins", &a, &r);
	if (ret)
		return ret;
	n = twl_pg_changed(r);
	PQclear(r);
	if (n)
		return 0;
	ret = twl_pg_run(p->wconn, "u_ins_probe", &a, &r);
	if (ret)
		return ret;
	n = twl_pg_changed(r);
	PQclear(r);
	return n ? 0 : -ENOSPC; /* 4096 of the host's ids taken near it */
}

/* A row found by its key: grown (u_upd) or its value merged (u_merge). */
static int usage_update(struct twl_pg *p, const struct twl_wire_usage *u,
			int64_t id, int64_t check, int64_t old)
{
	struct twl_pg_args a = { 0 };

	if (u->count <= old) { /* cumulative counter: no new use */
		if (!has_value(u))
			return 0;
		twl_pg_arg_i64(&a, u->count);
		twl_pg_arg_i64(&a, u->last_seen);
		twl_pg_arg_i64(&a, id);
		arg_value(&a, u);
		return twl_pg_run(p->wconn, "u_merge", &a, NULL);
	}
	arg_new(&a, u);
	twl_pg_arg_i64(&a, id);
	twl_pg_arg_i64(&a, check);
	arg_value(&a, u);
	return twl_pg_run(p->wconn, "u_upd", &a, NULL);
}

/*
 * The path for an entry u_bump did not match: find the row by its key
 * and update it, or insert it. 1 with *old set (0 for a new row) when
 * a row was written, 0 when its counter did not grow, or -errno.
 */
static int usage_store(struct twl_pg *p, const char *host_id,
		       const struct twl_wire_usage *u, int64_t hash,
		       int64_t check, int64_t *old)
{
	struct twl_pg_args a = { 0 };
	int64_t id = 0;
	int ret;

	*old = 0;
	arg_key(&a, host_id, u);
	ret = one_row(p, "u_find", &a, &id, old);
	if (ret < 0)
		return ret;
	if (ret == 0) /* a new row is evidence, even with a count of 0 */
		ret = usage_insert(p, host_id, u, hash, check);
	else if (u->count > *old)
		ret = usage_update(p, u, id, check, *old);
	else
		return usage_update(p, u, id, check, *old);
	return ret ? ret : 1;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_ingest_usage(struct twl_pg *p, const char *host_id,
			const struct twl_ingest *in, struct twl_rollup *ru)
{
	int ret;

	for (size_t i = 0; i < in->n_usage; i++) {
		const struct twl_wire_usage *u = &in->usage[i];
		int64_t old = 0;

		ret = usage_bump(p, host_id, u, in->usage_id[i],
				 in->usage_check[i], &old);
		if (ret == 0)
			ret = usage_store(p, host_id, u, in->usage_id[i],
					  in->usage_check[i], &old);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		ret = twl_pg_rollup(p, u->feature, host_id, u->first_seen,
				    u->last_seen, twl_kind_of_op(u->op),
				    u->count - old, ru);
		if (ret)
			return ret;
	}
	return 0;
}
