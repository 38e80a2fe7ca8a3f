// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sqlite3.h>
#include <zlib.h>

#include <twilight/util.h>

#include "http/auth.h"
#include "harness.h"
#include "http/tls.h"

void fixture_start(struct fixture *f, fixture_tweak_fn tweak)
{
	fixture_start_routes(f, tweak, NULL);
}

void fixture_start_routes(struct fixture *f, fixture_tweak_fn tweak,
			  const struct twl_route *const *routes)
{
	char err[512];
	int64_t id;
	int ret;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/twl-srv-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	twl_config_defaults(&f->cfg);
	snprintf(f->cfg.data_dir, sizeof(f->cfg.data_dir), "%s", f->dir);
	snprintf(f->cfg.listen, sizeof(f->cfg.listen), "127.0.0.1:0");
	snprintf(f->cfg.web_dir, sizeof(f->cfg.web_dir), "%s/web", f->dir);
	f->cfg.host_rate = 1000;
	f->cfg.host_burst = 1000;
	if (tweak)
		tweak(&f->cfg);
	ret = twl_config_finish(&f->cfg, err, sizeof(err));
	if (ret)
		fail_msg("config: %s", err);
	ret = twl_store_open(f->cfg.db_path, &f->store);
	assert_int_equal(ret, 0);
	ret = twl_tls_ensure(f->cfg.ca_file, f->cfg.cert_file, f->cfg.key_file,
			     (const char(*)[128])f->cfg.sans, f->cfg.n_sans,
			     err, sizeof(err));
	if (ret < 0)
		fail_msg("tls: %s", err);
	assert_int_equal(twl_auth_token_create(f->store, "t-admin", "admin",
					       time(NULL), f->admin, &id),
			 0);
	assert_int_equal(twl_auth_token_create(f->store, "t-viewer", "viewer",
					       time(NULL), f->viewer, &id),
			 0);
	assert_int_equal(twl_auth_token_create(f->store, "t-enrol", "agent",
					       time(NULL), f->enrol, &id),
			 0);
	f->srv = routes ? twl_server_new_routes(&f->cfg, f->store, routes) :
			  twl_server_new(&f->cfg, f->store);
	assert_non_null(f->srv);
	f->port = twl_server_port(f->srv);
	assert_true(f->port > 0);
}

void fixture_stop(struct fixture *f)
{
	char cmd[300];

	twl_server_free(f->srv);
	twl_store_close(f->store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
}

struct sink {
	struct http_result *r;
	size_t hlen;
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct http_result *r = arg;
	char *nb = realloc(r->body, r->len + sz * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + r->len, p, sz * n);
	r->body = nb;
	r->len += sz * n;
	r->body[r->len] = 0;
	return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t room = sizeof(s->r->headers) - s->hlen - 1;
	size_t take = sz * n < room ? sz * n : room;

	memcpy(s->r->headers + s->hlen, p, take);
	s->hlen += take;
	s->r->headers[s->hlen] = 0;
	return sz * n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	const atomic_int *quit = arg;

	return atomic_load(quit);
}

int http_try(struct fixture *f, const char *method, const char *path,
	     const char *token, const void *body, size_t len, const char *extra,
	     struct http_result *out)
{
	return http_try_quit(f, method, path, token, body, len, extra, NULL,
			     out);
}

int http_try_quit(struct fixture *f, const char *method, const char *path,
		  const char *token, const void *body, size_t len,
		  const char *extra, const atomic_int *quit,
		  struct http_result *out)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct sink s = { out, 0 };
	char url[512], auth[128], ca[600];
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	assert_non_null(c);
	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", f->port, path);
	snprintf(ca, sizeof(ca), "%s", f->cfg.ca_file);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	/*
	 * With "Expect: 100-continue" wait for the server's verdict before
	 * sending a body (curl's default gives up after 1 s and sends it
	 * anyway, which on a loaded machine races the server's early 413 and
	 * close: the client then sees a reset instead of the answer).
	 */
	curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 30000L);
	if (f->client_cert[0]) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, f->client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, f->client_key);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
	if (quit) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)quit);
	}
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	if (extra)
		h = curl_slist_append(h, extra);
	h = curl_slist_append(h, "Expect:");
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)len);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (out->body)
		out->json = json_loadb(out->body, out->len, 0, NULL);
	return (int)rc;
}

void http(struct fixture *f, const char *method, const char *path,
	  const char *token, const void *body, size_t len, const char *extra,
	  struct http_result *out)
{
	int rc = http_try(f, method, path, token, body, len, extra, out);

	if (rc != CURLE_OK)
		fail_msg("%s %s: curl error %d (%s)", method, path, rc,
			 curl_easy_strerror(rc));
}

void http_result_fini(struct http_result *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

bool http_header(const struct http_result *r, const char *name, char *out,
		 size_t cap)
{
	const char *p = r->headers;
	size_t n = strlen(name);

	while (p && *p) {
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1, *e;

			while (*v == ' ')
				v++;
			e = strpbrk(v, "\r\n");
			snprintf(out, cap, "%.*s",
				 (int)(e ? e - v : (long)strlen(v)), v);
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

void enrol_host(struct fixture *f, const char *host_id, char key[80])
{
	struct http_result r;
	char body[200];

	snprintf(body, sizeof(body), "{\"host_id\":\"%s\"}", host_id);
	http(f, "POST", "/api/v1/enroll", f->enrol, body, strlen(body), NULL,
	     &r);
	assert_int_equal(r.status, 200);
	assert_non_null(r.json);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "host_id")), host_id);
	snprintf(key, 80, "%s",
		 json_string_value(json_object_get(r.json, "key")));
	assert_int_equal(strlen(key), 69);
	http_result_fini(&r);
}

json_t *load_example(const char *name)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char path[512];
	json_error_t e;
	json_t *j;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/schema/examples/%s", src, name);
	j = json_load_file(path, 0, &e);
	if (!j)
		fail_msg("%s: %s", path, e.text);
	return j;
}

json_t *make_report(const char *host_id, const char *batch_id, int64_t seq)
{
	json_t *r = load_example("full.json");

	json_object_set_new(json_object_get(r, "host"), "host_id",
			    json_string(host_id));
	json_object_set_new(r, "batch_id", json_string(batch_id));
	json_object_set_new(r, "seq", json_integer(seq));
	return r;
}

/* Move every time member below @j by @shift. */
static void shift_times(json_t *j, int64_t shift)
{
	static const char *const keys[] = { "sent_time",  "time",
					    "first_seen", "last_seen",
					    "first_time", "last_time" };
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v) shift_times(v, shift);
		return;
	}
	json_object_foreach(j, k, v)
	{
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i]) && json_is_integer(v))
				json_integer_set(v,
						 json_integer_value(v) + shift);
		if (json_is_object(v) || json_is_array(v))
			shift_times(v, shift);
	}
}

json_t *make_report_shifted(const char *host_id, const char *batch_id,
			    int64_t seq, int64_t shift)
{
	json_t *r = make_report(host_id, batch_id, seq);

	shift_times(r, shift);
	return r;
}

void enrol_and_post(struct fixture *f, const char *host_id, const json_t *rep)
{
	char key[80], *body = dump(rep);
	struct http_result r;

	enrol_host(f, host_id, key);
	http(f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &r);
	if (r.status != 200)
		fail_msg("report of %s refused (%ld): %.*s", host_id, r.status,
			 (int)r.len, r.body);
	http_result_fini(&r);
	free(body);
}

void post_full_report(struct fixture *f, const char *host_id,
		      const char *batch_id, int64_t shift)
{
	json_t *rep = make_report_shifted(host_id, batch_id, 1, shift);

	enrol_and_post(f, host_id, rep);
	json_decref(rep);
}

char *dump(const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	assert_non_null(s);
	return s;
}

int64_t query_int(struct fixture *f, const char *sql, const char *param)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(f->cfg.db_path, &db,
					 SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (param)
		sqlite3_bind_text(st, 1, param, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

int64_t count_rows(struct fixture *f, const char *table)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	return query_int(f, sql, NULL);
}

int64_t count_data_rows(struct fixture *f)
{
	static const char *const t[] = { "hosts",	"batches",
					 "warnings",	"unknown_deprecations",
					 "usage",	"census_knobs",
					 "feature_host" };
	int64_t n = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		n += count_rows(f, t[i]);
	return n;
}

void gzip_bytes(const void *data, size_t len, char **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound(len) + 64;

	*out = malloc(cap);
	assert_non_null(*out);
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9,
				      Z_DEFAULT_STRATEGY),
			 Z_OK);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)*out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
}

char *debian_config(const char *flavour, size_t *len)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char cmd[1024], line[1024], path[1400], *dir = NULL, *text;
	FILE *p;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run under ctest)");
	snprintf(cmd, sizeof(cmd), "'%s/kernel/fetch' config-6.12", src);
	p = popen(cmd, "r");
	if (!p)
		fail_msg("cannot run %s", cmd);
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "config-6.12.configs=", 20)) {
			line[strcspn(line, "\n")] = '\0';
			free(dir);
			dir = strdup(line + 20);
		}
	if (pclose(p) || !dir)
		fail_msg("kernel/fetch config-6.12 failed: Debian's "
			 "linux-config-6.12 is needed (apt-get download)");
	snprintf(path, sizeof(path), "%s/config.%s", dir, flavour);
	free(dir);
	if (twl_read_file(path, 4u << 20, &text, len))
		fail_msg("cannot read %s", path);
	return text;
}
