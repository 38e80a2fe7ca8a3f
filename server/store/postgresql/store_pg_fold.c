// SPDX-License-Identifier: GPL-2.0
/*
 * A group commit's feature sums kept until its end (store_pg_fold.h).
 * Why in memory and not in a statement per report: bench/README.md,
 * "server-load on PostgreSQL: the group's rollups at its end".
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgresql/store_pg_fold.h"

/* Grow *@p (of *@cap items of @size) to hold @n: 0 or -ENOMEM. */
static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? *cap : 64;
	void *q;

	if (n <= *cap)
		return 0;
	while (want < n)
		want *= 2;
	q = realloc(*p, want * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = want;
	return 0;
}

/* Contract: see store_pg_fold.h. */
int twl_pg_fold_begin(struct twl_pg_fold *f, int *result, const char *host,
		      const struct twl_ingest *in, int64_t now)
{
	if (grow((void **)&f->r, &f->rcap, f->nr + 1, sizeof(*f->r)))
		return -ENOMEM;
	f->r[f->nr] = (struct twl_pg_fold_report){
		.result = result, .host = host, .in = in, .now = now
	};
	f->nr++;
	return 0;
}

/* Contract: see store_pg_fold.h. */
int twl_pg_fold_add(struct twl_pg_fold *f, const char *host,
		    const struct twl_rollup_entry *e)
{
	struct twl_pg_fold_entry *x;
	size_t len = strlen(host);

	if (!f->nr || len >= sizeof(x->host))
		return -EINVAL;
	if (grow((void **)&f->e, &f->cap, f->n + 1, sizeof(*f->e)))
		return -ENOMEM;
	x = &f->e[f->n++];
	x->e = *e;
	memcpy(x->host, host, len + 1);
	x->report = f->nr - 1;
	x->round = 0;
	return 0;
}

/* Whether entry @x's report succeeded (every result final). */
static bool kept(const struct twl_pg_fold *f, const struct twl_pg_fold_entry *x)
{
	const struct twl_pg_fold_report *r = &f->r[x->report];

	return !r->result || *r->result >= 0;
}

/* A kept entry's row and place, sorted by row, then place. */
struct key {
	const char *host, *feature;
	size_t i;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (!c)
		c = strcmp(x->feature, y->feature);
	if (!c)
		c = x->i < y->i ? -1 : x->i > y->i;
	return c;
}

/* Contract: see store_pg_fold.h. */
unsigned twl_pg_fold_rounds(struct twl_pg_fold *f)
{
	struct key *k = malloc((f->n ? f->n : 1) * sizeof(*k));
	size_t nk = 0;
	unsigned rounds = 0;

	if (!k)
		return UINT_MAX;
	for (size_t i = 0; i < f->n; i++) {
		f->e[i].round = UINT_MAX;
		if (kept(f, &f->e[i]))
			k[nk++] = (struct key){ f->e[i].host, f->e[i].e.feature,
						i };
	}
	qsort(k, nk, sizeof(*k), key_cmp);
	for (size_t j = 0; j < nk; j++) {
		struct twl_pg_fold_entry *x = &f->e[k[j].i];
		bool same = j && !strcmp(k[j].host, k[j - 1].host) &&
			    !strcmp(k[j].feature, k[j - 1].feature);

		x->round = same ? f->e[k[j - 1].i].round + 1 : 0;
		if (x->round + 1 > rounds)
			rounds = x->round + 1;
	}
	free(k);
	return rounds;
}

/* Contract: see store_pg_fold.h. */
bool twl_pg_fold_full(const struct twl_pg_fold *f)
{
	return f->n >= TWL_PG_FOLD_MAX;
}

/* Contract: see store_pg_fold.h. */
void twl_pg_fold_written(struct twl_pg_fold *f)
{
	f->n = 0;
}

/* Contract: see store_pg_fold.h. */
void twl_pg_fold_empty(struct twl_pg_fold *f)
{
	f->n = 0;
	f->nr = 0;
}

/* Contract: see store_pg_fold.h. */
void twl_pg_fold_free(struct twl_pg_fold *f)
{
	free(f->e);
	free(f->r);
	memset(f, 0, sizeof(*f));
}
