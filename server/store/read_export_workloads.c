// SPDX-License-Identifier: GPL-2.0
/*
 * The export's workloads (twl_export_workloads(), read_export.h): the
 * usage rows of a feature, as either backend gives them
 * (TWL_RQ_EXP_USES), grouped in C by twl_workload_of(), the one
 * definition of a workload (docs/workloads.md), so that no store has to
 * restate the cgroup classifier in its SQL. A workload counts the hosts
 * it ran on once each: the rows come host by host, and a group remembers
 * the last host it counted. Memory grows with the distinct workloads,
 * not with the rows.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/cgroup_class.h>
#include <twilight/wire.h>
#include <twilight/workload.h>

#include "api/export.h"
#include "store/read_answers.h"
#include "store/read_export.h"
#include "store/store_read.h"

/* TWL_RQ_EXP_USES's columns. */
enum { HOST, COMM, WRITER_CGROUP, CONTAINER, TARGET_KIND, CGROUP, IMAGE, USES };

/* One workload and what it did. */
struct group {
	char *comm, *place_name, *image; /* one allocation, comm's */
	enum twl_cgroup_kind place, target;
	bool has_image;
	int64_t hosts, uses;
	size_t host_seen; /* the ordinal of the last host counted */
	uint64_t hash;
};

/* The groups so far: an array, and an open-addressed index into it. */
struct groups {
	struct group *g;
	size_t n, cap;
	size_t *slot; /* index + 1 into g; 0: empty */
	size_t nslot; /* a power of two, at least twice n */
	unsigned allow; /* TWL_WORKLOAD_* */
	char *host; /* the current host's id */
	size_t host_n; /* its ordinal, from 1 */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_of(const struct twl_workload *w)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char kinds[2] = { (unsigned char)w->place_kind,
				   (unsigned char)w->target_kind };

	h = fnv(h, w->comm, strlen(w->comm) + 1);
	h = fnv(h, w->place_name, strlen(w->place_name) + 1);
	h = fnv(h, w->image, strlen(w->image) + 1);
	return fnv(h, kinds, sizeof(kinds));
}

static bool same(const struct group *g, const struct twl_workload *w)
{
	return g->place == w->place_kind && g->target == w->target_kind &&
	       !strcmp(g->comm, w->comm) &&
	       !strcmp(g->place_name, w->place_name) &&
	       !strcmp(g->image, w->image);
}

/* The index twice as large, every group in it again. */
static int grow_index(struct groups *gs)
{
	size_t n = gs->nslot ? 2 * gs->nslot : 64, i, k;
	size_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < gs->n; i++) {
		for (k = gs->g[i].hash & (n - 1); slot[k];
		     k = (k + 1) & (n - 1))
			;
		slot[k] = i + 1;
	}
	free(gs->slot);
	gs->slot = slot;
	gs->nslot = n;
	return 0;
}

/* A new group of @w at index slot @k; NULL: no memory. */
static struct group *add(struct groups *gs, const struct twl_workload *w,
			 uint64_t h, size_t k)
{
	size_t lc = strlen(w->comm) + 1, lp = strlen(w->place_name) + 1,
	       li = strlen(w->image) + 1;
	struct group *g;
	char *s;

	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? 2 * gs->cap : 64;

		g = realloc(gs->g, cap * sizeof(*g));
		if (!g)
			return NULL;
		gs->g = g;
		gs->cap = cap;
	}
	s = malloc(lc + lp + li);
	if (!s)
		return NULL;
	g = &gs->g[gs->n];
	*g = (struct group){ s,
			     s + lc,
			     s + lc + lp,
			     w->place_kind,
			     w->target_kind,
			     false,
			     0,
			     0,
			     0,
			     h };
	memcpy(g->comm, w->comm, lc);
	memcpy(g->place_name, w->place_name, lp);
	memcpy(g->image, w->image, li);
	gs->slot[k] = ++gs->n;
	return g;
}

/* The group of @w, added when new; NULL: no memory. */
static struct group *group_of(struct groups *gs, const struct twl_workload *w)
{
	uint64_t h = hash_of(w);
	size_t k;

	if (2 * (gs->n + 1) > gs->nslot && grow_index(gs))
		return NULL;
	for (k = h & (gs->nslot - 1); gs->slot[k];
	     k = (k + 1) & (gs->nslot - 1)) {
		struct group *g = &gs->g[gs->slot[k] - 1];

		if (g->hash == h && same(g, w))
			return g;
	}
	return add(gs, w, h, k);
}

/* One row of TWL_RQ_EXP_USES into its workload's group. */
static int use_row(void *arg, const struct twl_cells *row)
{
	struct groups *gs = arg;
	struct twl_wire_usage u = { 0 };
	struct twl_workload w;
	struct group *g;
	const char *c[USES];

	for (int i = 0; i < USES; i++) {
		c[i] = row->text(row->src, row->row, i);
		if (!c[i])
			c[i] = "";
	}
	if (!gs->host || strcmp(gs->host, c[HOST])) {
		free(gs->host);
		gs->host = strdup(c[HOST]);
		if (!gs->host)
			return -ENOMEM;
		gs->host_n++;
	}
	u.comm = c[COMM];
	u.writer_cgroup = c[WRITER_CGROUP];
	u.container = c[CONTAINER];
	u.target_kind = c[TARGET_KIND];
	u.cgroup = c[CGROUP];
	u.image = c[IMAGE];
	/* a name too long leaves the name "": the kinds are right */
	twl_workload_of(&u, gs->allow, &w);
	g = group_of(gs, &w);
	if (!g)
		return -ENOMEM;
	if (g->host_seen != gs->host_n) {
		g->host_seen = gs->host_n;
		g->hosts++;
	}
	g->uses += row->i64(row->src, row->row, USES);
	g->has_image |= c[IMAGE][0] != '\0';
	return 0;
}

/* By hosts, then uses (both descending), then the workload's text. */
static int by_rank(const void *x, const void *y)
{
	const struct group *a = x, *b = y;
	int d;

	if (a->hosts != b->hosts)
		return a->hosts > b->hosts ? -1 : 1;
	if (a->uses != b->uses)
		return a->uses > b->uses ? -1 : 1;
	d = strcmp(a->comm, b->comm);
	if (!d)
		d = strcmp(twl_cgroup_kind_name(a->place),
			   twl_cgroup_kind_name(b->place));
	if (!d)
		d = strcmp(a->place_name, b->place_name);
	if (!d)
		d = strcmp(twl_cgroup_kind_name(a->target),
			   twl_cgroup_kind_name(b->target));
	return d ? d : strcmp(a->image, b->image);
}

/* The first TWL_READ_TOP_N groups, ranked, into @arr. */
static int groups_into(struct groups *gs, json_t *arr)
{
	int rc = 0;

	if (gs->n)
		qsort(gs->g, gs->n, sizeof(gs->g[0]), by_rank);
	for (size_t i = 0; !rc && i < gs->n && i < TWL_READ_TOP_N; i++) {
		const struct group *g = &gs->g[i];

		rc = twl_jpush(
			arr,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:I}",
				  "process", g->comm, "place",
				  twl_cgroup_kind_name(g->place), "place_name",
				  g->place_name, "target",
				  twl_cgroup_kind_name(g->target), "image",
				  g->image, "has_image", g->has_image, "hosts",
				  (json_int_t)g->hosts, "uses",
				  (json_int_t)g->uses));
	}
	return rc;
}

static void groups_free(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++)
		free(gs->g[i].comm);
	free(gs->g);
	free(gs->slot);
	free(gs->host);
}

/* Contract: see read_export.h. */
int twl_export_workloads(const struct twl_rq_on *on,
			 const struct twl_feature *f, int64_t since,
			 const struct twl_export_opts *opts, json_t *o)
{
	struct groups gs = { 0 };
	struct twl_rq_args a = { 0 };
	json_t *arr;
	int rc = twl_jset(o, "workloads", arr = json_array());

	if (opts->full_cgroups)
		gs.allow |= TWL_WORKLOAD_PLACE_NAME;
	if (opts->show_images)
		gs.allow |= TWL_WORKLOAD_IMAGE;
	twl_rq_text(&a, f->id);
	twl_rq_i64(&a, since);
	if (!rc)
		rc = on->io->run(on->ctx, TWL_RQ_EXP_USES, &a, use_row, &gs);
	if (!rc)
		rc = groups_into(&gs, arr);
	groups_free(&gs);
	return rc;
}
