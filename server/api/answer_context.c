// SPDX-License-Identifier: GPL-2.0
/*
 * The kept answers' context (answer_context.h). Before it, every start
 * marked all stored answers out of date, since a start may bring other
 * code, settings, targets or catalog: at 100,000 hosts a plain restart
 * then computed all 46 kept answers again, one after the other, for 19
 * minutes beside the dashboard's reads (bench/README.md, twentieth
 * session). Naming what they depend on lets a plain restart keep them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "api/answer_context.h"
#include "config.h"
#include "readiness/target_dir.h"

/*
 * The settings that cannot change an answer: how the server listens and
 * speaks TLS, its limits, its database link and writer, its webhooks and
 * its kept answers. A new setting counts until it is listed here.
 */
static const char *const no_answer[] = {
	"config",
	"data-dir",
	"listen",
	"web-dir",
	"db",
	"check-db",
	"cert",
	"key",
	"ca",
	"client-ca",
	"require-client-cert",
	"tls-priorities",
	"san",
	"require-cap-drop",
	"max-connections",
	"max-per-ip",
	"limit-loopback",
	"timeout",
	"request-timeout",
	"min-rate",
	"max-body",
	"max-inflated",
	"body-memory",
	"conn-memory",
	"threads",
	"host-rate",
	"host-burst",
	"ip-rate",
	"ip-burst",
	"enroll-rate",
	"enroll-burst",
	"enroll-max-keys",
	"commit-max",
	"commit-delay",
	"queue-max",
	"wal-max",
	"alert-interval",
	"webhook-rate",
	"webhook-retry",
	"webhook-timeout",
	"webhook-ca",
	"slow-answer",
	"slow-answer-max-age",
	"slow-answer-ahead",
};

/* Contract: see answer_context.h. */
bool twl_answer_setting_counts(const char *name)
{
	for (size_t i = 0; i < sizeof(no_answer) / sizeof(no_answer[0]); i++)
		if (!strcmp(no_answer[i], name))
			return false;
	return true;
}

static pthread_once_t exe_once = PTHREAD_ONCE_INIT;
static char exe_hex[65];
static int exe_rc;

/* SHA-256 of this process's executable into exe_hex, once. */
static void exe_hash(void)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	size_t n;

	exe_rc = !f ? -errno : !m ? -ENOMEM : 0;
	if (!exe_rc && !EVP_DigestInit_ex(m, EVP_sha256(), NULL))
		exe_rc = -ENOMEM;
	while (!exe_rc && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (!EVP_DigestUpdate(m, buf, n))
			exe_rc = -ENOMEM;
	if (!exe_rc && ferror(f))
		exe_rc = -EIO;
	if (!exe_rc && !EVP_DigestFinal_ex(m, md, &len))
		exe_rc = -ENOMEM;
	if (!exe_rc)
		twl_hex_encode(md, 32, exe_hex);
	EVP_MD_CTX_free(m);
	if (f)
		fclose(f);
}

/* Add @what, a NUL and @len bytes of @p to @m: 0 or -ENOMEM. */
static int add(EVP_MD_CTX *m, const char *what, const void *p, size_t len)
{
	return EVP_DigestUpdate(m, what, strlen(what) + 1) &&
			       EVP_DigestUpdate(m, p, len) ?
		       0 :
		       -ENOMEM;
}

/* Add @doc (a new reference, taken; NULL: -ENOMEM) as sorted JSON text. */
static int add_json(EVP_MD_CTX *m, const char *what, json_t *doc)
{
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) :
			   NULL;
	int rc = text ? add(m, what, text, strlen(text)) : -ENOMEM;

	free(text);
	json_decref(doc);
	return rc;
}

/* Add the values of @cfg's settings that count, "key = value" lines. */
static int add_settings(EVP_MD_CTX *m, const struct twl_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < twl_server_n_options; i++)
		if (twl_answer_setting_counts(twl_server_options[i].name))
			twl_cfg_print_values(f, &twl_server_options[i], 1, cfg);
	rc = fclose(f) ? -ENOMEM : add(m, "settings", text, len);
	free(text);
	return rc;
}

/* Add the targets of @cfg's data directory and the shipped ones. */
static int add_targets(EVP_MD_CTX *m, const struct twl_config *cfg)
{
	json_t *targets = NULL, *errors = NULL;
	int rc;

	if (!cfg->data_dir[0])
		return add(m, "targets", "", 0);
	rc = twl_targets_load(cfg->data_dir, &targets, &errors);
	if (rc)
		return rc;
	rc = add_json(m, "targets", targets);
	return rc ? (json_decref(errors), rc) : add_json(m, "errors", errors);
}

/* Contract: see answer_context.h. */
int twl_answer_context(const struct twl_config *cfg, char out[65])
{
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	int rc;

	out[0] = '\0';
	pthread_once(&exe_once, exe_hash);
	rc = !m ? -ENOMEM : exe_rc;
	if (!rc && !EVP_DigestInit_ex(m, EVP_sha256(), NULL))
		rc = -ENOMEM;
	if (!rc)
		rc = add(m, "code", exe_hex, 64);
	if (!rc)
		rc = add_settings(m, cfg);
	if (!rc)
		rc = add_json(m, "catalog", twl_catalog_to_json());
	if (!rc)
		rc = add_targets(m, cfg);
	if (!rc && !EVP_DigestFinal_ex(m, md, &len))
		rc = -ENOMEM;
	EVP_MD_CTX_free(m);
	if (rc) {
		twl_log(LOG_WARNING,
			"cannot name what the kept answers depend on: %s; every "
			"stored answer is computed again after this start",
			strerror(-rc));
		return rc;
	}
	twl_hex_encode(md, 32, out);
	return 0;
}
