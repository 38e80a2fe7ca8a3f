// SPDX-License-Identifier: GPL-2.0
/*
 * Usage rows of the ingest write path on PostgreSQL (store_pg_ingest.h),
 * with SQLite's rules (store/sqlite/store_sqlite_ingest.c): cumulative
 * counters keep their maximum per key, so replays and resends change
 * nothing; a row is addressed by the hash of its key (ingest.h,
 * twl_usage_key_hash()) and checked by its key_check; value summaries
 * are merged (min of mins, max of maxes, OR of unlimited) even when the
 * counter did not grow. What a counter grew by goes to the rollups.
 *
 * On the report's pipe (store_pg_ingest.h): every entry's common update
 * (u_bump) goes with the report's first round trip; the entries it did
 * not find are looked up by key together (one round trip), then grown,
 * merged or inserted together (inserts: one more; an id taken near the
 * hash: one more). Entries are independent rows unless two share an id
 * (the same key twice in a report, or a hash collision): then each is
 * done alone, in order, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	 * replaced (count_prev, set from the row as it was: migration 008);
	 * no row when none matched.
	 */
	{ "u_bump",
	  "UPDATE usage SET count_prev = count, " NEW_VALUES "," VALUE_GREW(
		  "$11", "$12", "$13", "$14", "$15", "$16",
		  "$17") " WHERE id = $8::bigint AND key_check = $9::bigint"
			 " AND count < $3::bigint AND host_id = $10"
			 " RETURNING count_prev" },
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

/* An entry's state between round trips (twl_pg_report's step). */
enum {
	U_BUMPED, /* u_bump sent */
	U_FIND, /* u_find sent */
	U_SAME, /* found, its counter did not grow: merged */
	U_GREW, /* its counter grew: *old replaced */
	U_INSERT, /* u_ins sent */
	U_PROBE, /* u_ins_probe sent */
};

/* Send entry @i's @name: u_bump, u_find, u_ins or u_ins_probe. */
static int entry_send(struct twl_pg_report *r, size_t i, const char *name)
{
	const struct twl_wire_usage *u = &r->in->usage[i];
	struct twl_pg_args a = { 0 };
	bool bump = !strcmp(name, "u_bump");

	if (!bump)
		arg_key(&a, r->host_id, u);
	if (strcmp(name, "u_find")) {
		arg_new(&a, u);
		twl_pg_arg_i64(&a, r->in->usage_id[i]);
		twl_pg_arg_i64(&a, r->in->usage_check[i]);
		twl_pg_arg_text(&a, bump ? r->host_id : u->target_kind);
		arg_value(&a, u);
	}
	PQclear(r->use[i]);
	return twl_pg_pipe_send(&r->pipe, name, &a, &r->use[i]);
}

/* A row found by its key: grown (u_upd) or its value merged (u_merge). */
static int update_send(struct twl_pg_report *r, size_t i, int64_t id)
{
	const struct twl_wire_usage *u = &r->in->usage[i];
	struct twl_pg_args a = { 0 };

	if (u->count <= r->old[i]) { /* cumulative counter: no new use */
		if (!has_value(u))
			return 0;
		twl_pg_arg_i64(&a, u->count);
		twl_pg_arg_i64(&a, u->last_seen);
		twl_pg_arg_i64(&a, id);
		arg_value(&a, u);
		return twl_pg_pipe_send(&r->pipe, "u_merge", &a, NULL);
	}
	arg_new(&a, u);
	twl_pg_arg_i64(&a, id);
	twl_pg_arg_i64(&a, r->in->usage_check[i]);
	arg_value(&a, u);
	return twl_pg_pipe_send(&r->pipe, "u_upd", &a, NULL);
}

/* Whether entry @i's last statement answered a row (u_bump, u_find). */
static bool found(const struct twl_pg_report *r, size_t i)
{
	return PQntuples(r->use[i]) > 0;
}

/* A send's outcome for entry_step(): 1 when sent, else its -errno. */
static int sent(int ret)
{
	return ret ? ret : 1;
}

/* Whether an entry waits for an answer (its statement was sent). */
static bool waits(unsigned char step)
{
	return step != U_SAME && step != U_GREW;
}

/*
 * Entry @i's answer of the round trip just ended, and what it sends
 * next: 1 when it sent a statement whose answer decides more (u_find,
 * u_ins, u_ins_probe), 0 when it is done, or -errno.
 */
static int entry_step(struct twl_pg_report *r, size_t i)
{
	unsigned char *st = &r->step[i];

	switch (*st) {
	case U_BUMPED:
		if (found(r, i)) {
			r->old[i] = twl_pg_int(r->use[i], 0, 0);
			*st = U_GREW;
			return 0;
		}
		*st = U_FIND;
		return sent(entry_send(r, i, "u_find"));
	case U_FIND:
		if (!found(r, i)) { /* a new row is evidence, even at 0 */
			*st = U_INSERT;
			return sent(entry_send(r, i, "u_ins"));
		}
		r->old[i] = twl_pg_int(r->use[i], 0, 1);
		*st = r->in->usage[i].count > r->old[i] ? U_GREW : U_SAME;
		return update_send(r, i, twl_pg_int(r->use[i], 0, 0));
	case U_INSERT:
		if (twl_pg_changed(r->use[i])) {
			*st = U_GREW; /* *old is 0 */
			return 0;
		}
		*st = U_PROBE; /* the hash taken by another key */
		return sent(entry_send(r, i, "u_ins_probe"));
	case U_PROBE:
		*st = U_GREW;
		return twl_pg_changed(r->use[i]) ? 0 : -ENOSPC; /* 4096 taken */
	}
	return 0;
}

/*
 * Step entries [@from, @to) until each is done: each round trip steps
 * every entry still waiting for an answer. 0 or -errno.
 */
static int entries_settle(struct twl_pg_report *r, size_t from, size_t to)
{
	size_t waiting;
	int ret;

	do {
		waiting = 0;
		for (size_t i = from; i < to; i++) {
			if (!waits(r->step[i]))
				continue;
			ret = entry_step(r, i);
			if (ret < 0)
				return ret;
			waiting += ret;
		}
		ret = waiting ? twl_pg_pipe_sync(&r->pipe) : 0;
	} while (waiting && !ret);
	return ret;
}

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Whether two entries share an id; @scratch: n_usage ids, left zeroed. */
static bool ids_repeat(const struct twl_ingest *in, int64_t *scratch)
{
	size_t n = in->n_usage;
	bool repeat = false;

	memcpy(scratch, in->usage_id, n * sizeof(*scratch));
	qsort(scratch, n, sizeof(*scratch), id_cmp);
	for (size_t i = 1; !repeat && i < n; i++)
		repeat = scratch[i] == scratch[i - 1];
	memset(scratch, 0, n * sizeof(*scratch));
	return repeat;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_usage_send(struct twl_pg_report *r)
{
	int ret = 0;

	r->use_serial = r->in->n_usage > 1 && ids_repeat(r->in, r->old);
	for (size_t i = 0; !r->use_serial && !ret && i < r->in->n_usage; i++) {
		r->step[i] = U_BUMPED;
		ret = entry_send(r, i, "u_bump");
	}
	return ret;
}

/* Entry @i alone, from its u_bump on, as it was before pipelines. */
static int entry_alone(struct twl_pg_report *r, size_t i)
{
	int ret;

	r->step[i] = U_BUMPED;
	ret = entry_send(r, i, "u_bump");
	if (!ret)
		ret = twl_pg_pipe_sync(&r->pipe);
	return ret ? ret : entries_settle(r, i, i + 1);
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_usage_finish(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	int ret = 0;

	if (!r->use_serial)
		ret = entries_settle(r, 0, in->n_usage);
	for (size_t i = 0; !ret && i < in->n_usage; i++) {
		const struct twl_wire_usage *u = &in->usage[i];

		if (r->use_serial)
			ret = entry_alone(r, i);
		if (ret || r->step[i] != U_GREW)
			continue;
		ret = twl_pg_rollup(r, u->feature, u->first_seen, u->last_seen,
				    twl_kind_of_op(u->op),
				    u->count - r->old[i]);
	}
	return ret;
}
