/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test harness for the server: an in-process twilight-server on
 * 127.0.0.1 (ephemeral port) with real TLS (generated CA), a fresh data
 * directory, and libcurl as the client.
 */
#ifndef TWL_TEST_SERVER_HARNESS_H
#define TWL_TEST_SERVER_HARNESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "http/server.h"
#include "store/store.h"

struct fixture {
	char dir[256];
	struct twl_config cfg;
	struct twl_store *store;
	struct twl_server *srv;
	uint16_t port;
	char admin[80], viewer[80], enrol[80];
	char client_cert[300],
		client_key[300]; /* optional TLS client certificate */
};

struct http_result {
	long status;
	char *body;
	size_t len;
	char headers[8192];
	json_t *json; /* parsed body when it is JSON, else NULL */
};

/* Optional tweaks applied to the config before the server starts. */
typedef void (*fixture_tweak_fn)(struct twl_config *cfg);

/* Start a server; fails the test (cmocka) on any error. */
void fixture_start(struct fixture *f, fixture_tweak_fn tweak);
/* The same, serving routes (http.h) instead of the API's. */
void fixture_start_routes(struct fixture *f, fixture_tweak_fn tweak,
			  const struct twl_route *const *routes);
/* Stop the server, close the store, remove the directory. */
void fixture_stop(struct fixture *f);

/*
 * One HTTPS request. token may be NULL (no Authorization header); extra
 * is an optional "Name: value" header. Fails the test on transport errors
 * (use http_try for requests that may legitimately be cut off).
 */
void http(struct fixture *f, const char *method, const char *path,
	  const char *token, const void *body, size_t len, const char *extra,
	  struct http_result *out);
/* Same, returning the CURLcode instead of failing on transport errors. */
int http_try(struct fixture *f, const char *method, const char *path,
	     const char *token, const void *body, size_t len, const char *extra,
	     struct http_result *out);
/*
 * http_try() that gives up and closes the connection (CURLE_ABORTED_BY_CALLBACK)
 * once *quit is nonzero (checked at least about once a second).
 */
int http_try_quit(struct fixture *f, const char *method, const char *path,
		  const char *token, const void *body, size_t len,
		  const char *extra, const atomic_int *quit,
		  struct http_result *out);
void http_result_fini(struct http_result *r);
/* Value of response header name (case-insensitive) into out; false if absent. */
bool http_header(const struct http_result *r, const char *name, char *out,
		 size_t cap);

/* Enrol host_id with the enrolment token; key gets the per-host key. */
void enrol_host(struct fixture *f, const char *host_id, char key[80]);

/* Read schema/examples/name (TWILIGHT_SOURCE_DIR) as JSON. */
json_t *load_example(const char *name);
/* A valid report (from full.json) for host_id with batch_id and seq. */
json_t *make_report(const char *host_id, const char *batch_id, int64_t seq);
/*
 * Times of full.json (its sent_time), and make_report() with every time
 * member ("sent_time", "time", "first_seen", "last_seen", ...) moved by
 * @shift seconds: make_report_shifted(h, b, s, now - FULL_JSON_SENT)
 * reports full.json's events as if sent now.
 */
#define FULL_JSON_SENT 1764735600
json_t *make_report_shifted(const char *host_id, const char *batch_id,
			    int64_t seq, int64_t shift);
/*
 * Enrol @host_id and post @rep (a wire document) as its agent would, with
 * the per-host key; fails the test unless it is stored (200).
 */
void enrol_and_post(struct fixture *f, const char *host_id, const json_t *rep);
/*
 * Enrol @host_id and post full.json for it, its times moved by @shift
 * (make_report_shifted()) under batch id @batch_id; fails the test unless
 * it is stored.
 */
void post_full_report(struct fixture *f, const char *host_id,
		      const char *batch_id, int64_t shift);
/* Serialise a report (compact). Caller frees. */
char *dump(const json_t *j);

/* SELECT count(*) FROM table on a separate connection (committed rows). */
int64_t count_rows(struct fixture *f, const char *table);
/* Sum of row counts of every data table (hosts, warnings, usage, ...). */
int64_t count_data_rows(struct fixture *f);
/* One integer from a SQL query with one optional text parameter. */
int64_t query_int(struct fixture *f, const char *sql, const char *param);

/*
 * Debian's real .config of 6.12 flavour @flavour ("amd64_none_cloud-amd64"),
 * from linux-config-6.12 as `kernel/fetch config-6.12` downloads (apt-get
 * download, never installed) into the kernel cache outside the
 * repository: a new NUL-terminated buffer and its length. Fails the test
 * when it cannot be had.
 */
char *debian_config(const char *flavour, size_t *len);

/* gzip-compress data (for Content-Encoding tests). Caller frees *out. */
void gzip_bytes(const void *data, size_t len, char **out, size_t *out_len);

#endif
