// SPDX-License-Identifier: GPL-2.0
/*
 * A catalog loaded at runtime: the data file checked by the generator's own
 * parser (catgen_*.c), then laid out as the same structures the generator
 * writes into the compiled-in table, so every lookup and the matcher work
 * on either. Strings point into the parsed JSON document, which the loaded
 * catalog keeps; the installed ones are never freed (see catalog.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>

#include "catgen.h"

struct loaded {
	struct twl_catalog pub; /* first: twl_catalog_free() casts back */
	struct catalog parsed;
	struct twl_feature *feats;
	struct twl_catalog_route *routes;
	struct twl_catalog_message *msgs;
	const char **pool; /* every NULL-terminated list, back to back */
	size_t pool_used, pool_cap;
	char *seed;
};

static _Atomic(const struct twl_catalog *) current = &twl_catalog_compiled;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every catalog installed so far: kept, and reachable, until exit. */
static struct twl_catalog *installed[TWL_CATALOG_MAX_INSTALLS];
static size_t n_installed;

/* Contract: see catalog.h. */
const struct twl_catalog *twl_catalog_current(void)
{
	return atomic_load_explicit(&current, memory_order_acquire);
}

/* A NULL-terminated copy of JSON string array @arr (NULL: empty) in the pool. */
static const char *const *pool_list(struct loaded *l, json_t *arr)
{
	const char **list = l->pool + l->pool_used;
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) list[i] = json_string_value(v);
	list[json_array_size(arr)] = NULL;
	l->pool_used += json_array_size(arr) + 1;
	return list;
}

/* Room for every list of every feature and route. */
static int pool_alloc(struct loaded *l)
{
	const struct catalog *c = &l->parsed;
	size_t n = 0;

	for (size_t i = 0; i < c->n_feats; i++)
		n += json_array_size(c->feats[i].files) +
		     json_array_size(c->feats[i].event_files) +
		     json_array_size(c->feats[i].references) + 3;
	for (size_t i = 0; i < c->n_routes; i++)
		n += json_array_size(c->routes[i].result) +
		     json_array_size(c->routes[i].to) +
		     json_array_size(c->routes[i].cc) + 3;
	l->pool = calloc(n, sizeof(*l->pool));
	l->pool_cap = n;
	return l->pool ? 0 : -ENOMEM;
}

static void lay_out_routes(struct loaded *l)
{
	for (size_t i = 0; i < l->parsed.n_routes; i++) {
		const struct groute *g = &l->parsed.routes[i];
		struct twl_catalog_route *r = &l->routes[i];

		r->id = g->id;
		r->file = g->file;
		r->command = g->command;
		r->tree = g->tree;
		r->result = pool_list(l, g->result);
		r->to = pool_list(l, g->to);
		r->cc = pool_list(l, g->cc);
	}
}

static void lay_out_message(struct twl_catalog_message *m, const struct gmsg *g)
{
	m->text = g->text;
	m->match = g->exact ? TWL_MATCH_EXACT : TWL_MATCH_PREFIX;
	m->level = g->level;
	m->note = g->note;
	m->n_fields = g->n_fields;
	m->literals = (const char *const *)g->lits;
	m->literal_lens = g->lit_lens;
	m->field_names = g->n_fields ? (const char *const *)g->names : NULL;
	m->specificity = g->specificity;
}

static void lay_out_feature(struct loaded *l, struct twl_feature *f,
			    const struct gfeat *g,
			    struct twl_catalog_message *msgs)
{
	*f = (struct twl_feature){
		.id = g->id,
		.subsystem = g->subsystem,
		.title = g->title,
		.status = g->status,
		.warns = g->warns,
		.kernel_version = g->kernel_version,
		.commit = g->commit,
		.commit_note = g->commit_note,
		.config = g->config,
		.stopped_working = g->stopped_working,
		.stopped_note = g->stopped_note,
		.replacement = g->replacement,
		.replacement_note = g->replacement_note,
		.route = &l->routes[g->route_idx],
		.in_reply_to = g->in_reply_to,
		.warn_condition = g->warn_condition,
		.value_kind = g->value_kind,
		.value_name = g->value_name,
		.messages = g->n_msgs ? msgs : NULL,
		.n_messages = g->n_msgs,
	};
	f->references = pool_list(l, g->references);
	f->files = pool_list(l, g->files);
	f->event_files = pool_list(l, g->event_files);
	for (size_t j = 0; j < g->n_msgs; j++)
		lay_out_message(&msgs[j], &g->msgs[j]);
}

/* The SQL seed of the parsed catalog, as the generator writes it. */
static int make_seed(struct loaded *l)
{
	size_t len;
	FILE *o = open_memstream(&l->seed, &len);

	if (!o)
		return -ENOMEM;
	gen_write_sql(o, &l->parsed);
	if (ferror(o) | fclose(o))
		return -ENOMEM;
	return 0;
}

/* Everything the public structures need, from the parsed catalog. */
static int lay_out(struct loaded *l)
{
	const struct catalog *c = &l->parsed;
	size_t n_msgs = 0, m = 0;

	for (size_t i = 0; i < c->n_feats; i++)
		n_msgs += c->feats[i].n_msgs;
	l->feats = calloc(c->n_feats ? c->n_feats : 1, sizeof(*l->feats));
	l->routes = calloc(c->n_routes ? c->n_routes : 1, sizeof(*l->routes));
	l->msgs = calloc(n_msgs ? n_msgs : 1, sizeof(*l->msgs));
	if (!l->feats || !l->routes || !l->msgs || pool_alloc(l) ||
	    make_seed(l))
		return -ENOMEM;
	lay_out_routes(l);
	for (size_t i = 0; i < c->n_feats; i++) {
		lay_out_feature(l, &l->feats[i], &c->feats[i], &l->msgs[m]);
		m += c->feats[i].n_msgs;
	}
	l->pub = (struct twl_catalog){ .version = (unsigned)c->version,
				       .features = l->feats,
				       .n_features = c->n_feats,
				       .routes = l->routes,
				       .n_routes = c->n_routes,
				       .seed_sql = l->seed };
	return 0;
}

/* Contract: see catalog.h. */
void twl_catalog_free(struct twl_catalog *c)
{
	struct loaded *l = (struct loaded *)c;

	if (!l)
		return;
	twl_match_index_free(l->pub.index);
	gen_catalog_fini(&l->parsed);
	free(l->feats);
	free(l->routes);
	free(l->msgs);
	free(l->pool);
	free(l->seed);
	free(l);
}

/* Contract: see catalog.h. */
struct twl_catalog *twl_catalog_load(const char *buf, size_t len,
				     const char *name, char *err,
				     size_t err_cap)
{
	struct loaded *l;
	int ret;

	if (err_cap)
		err[0] = '\0';
	if (len > TWL_CATALOG_MAX_BYTES) {
		if (err_cap)
			snprintf(err, err_cap, "%s: larger than %d bytes", name,
				 TWL_CATALOG_MAX_BYTES);
		errno = EFBIG;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	gen_in_path = name;
	gen_err[0] = '\0';
	ret = gen_parse_buffer(&l->parsed, buf, len);
	if (!ret)
		ret = lay_out(l);
	if (ret && err_cap)
		snprintf(err, err_cap, "%s",
			 ret == -EINVAL ? gen_err : "out of memory");
	gen_in_path = "catalog.json";
	if (ret) {
		twl_catalog_free(&l->pub);
		errno = -ret;
		return NULL;
	}
	return &l->pub;
}

/* Contract: see catalog.h. */
struct twl_catalog *twl_catalog_load_file(const char *path, char *err,
					  size_t err_cap)
{
	struct twl_catalog *c;
	char *buf;
	size_t len;
	int ret = twl_read_file(path, TWL_CATALOG_MAX_BYTES, &buf, &len);

	if (ret) {
		if (err_cap)
			snprintf(err, err_cap, "%s: %s", path,
				 ret == -EFBIG ? "larger than 1 MiB" :
						 strerror(-ret));
		errno = -ret;
		return NULL;
	}
	c = twl_catalog_load(buf, len, path, err, err_cap);
	ret = errno;
	free(buf);
	errno = ret;
	return c;
}

/* Contract: see catalog.h. */
int twl_catalog_install(struct twl_catalog *c)
{
	int ret = 0;

	pthread_mutex_lock(&install_lock);
	if (n_installed >= TWL_CATALOG_MAX_INSTALLS)
		ret = -ENOSPC;
	if (!ret && !c->index) {
		c->index = twl_match_index_new(c);
		if (!c->index)
			ret = -ENOMEM;
	}
	if (!ret) {
		installed[n_installed++] = c;
		atomic_store_explicit(&current, c, memory_order_release);
	}
	pthread_mutex_unlock(&install_lock);
	return ret;
}
