// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration: one declarative option table (name, type, offset, help)
 * drives defaults, the config file, flags, --help and --check-config.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "config.h"

enum opt_type { T_STR, T_BOOL, T_UINT, T_SIZE, T_DOUBLE, T_SAN };

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	size_t size; /* T_STR: buffer size */
	const char *help;
};

#define O(n, t, f, h)                                      \
	{                                                  \
		n, t, offsetof(struct twl_config, f), 0, h \
	}

static const struct opt opts[] = {
	{ "data-dir", T_STR, offsetof(struct twl_config, data_dir), 512,
	  "directory for the database, TLS files and tokens (created if missing)" },
	{ "config", T_STR, offsetof(struct twl_config, config_file), 512,
	  "config file (default DATA_DIR/twilight-server.conf if present)" },
	{ "listen", T_STR, offsetof(struct twl_config, listen), 128,
	  "address:port to listen on, e.g. 127.0.0.1:8443 or [::1]:8443" },
	{ "web-dir", T_STR, offsetof(struct twl_config, web_dir), 512,
	  "directory of dashboard files served at /" },
	{ "db", T_STR, offsetof(struct twl_config, db_path), 512,
	  "SQLite database path" },
	{ "cert", T_STR, offsetof(struct twl_config, cert_file), 512,
	  "server certificate (PEM)" },
	{ "key", T_STR, offsetof(struct twl_config, key_file), 512,
	  "server private key (PEM)" },
	{ "ca", T_STR, offsetof(struct twl_config, ca_file), 512,
	  "CA certificate agents trust (PEM; generated with its key if missing)" },
	{ "client-ca", T_STR, offsetof(struct twl_config, client_ca_file), 512,
	  "CA for optional agent client certificates (empty = off)" },
	O("require-client-cert", T_BOOL, require_client_cert,
	  "reject agent requests without a valid client certificate"),
	{ "tls-priorities", T_STR, offsetof(struct twl_config, tls_priorities),
	  256, "GnuTLS priority string (TLS 1.2 minimum by default)" },
	O("san", T_SAN, sans, "extra certificate name or address (repeatable)"),
	O("max-connections", T_UINT, max_connections, "connections in total"),
	O("max-per-ip", T_UINT, max_per_ip, "connections per non-loopback IP"),
	O("limit-loopback", T_BOOL, limit_loopback,
	  "apply per-IP limits to loopback peers too"),
	O("timeout", T_UINT, conn_timeout_s,
	  "seconds before an idle or slow connection is closed"),
	O("max-body", T_SIZE, max_body, "bytes of request body as sent"),
	O("max-inflated", T_SIZE, max_inflated,
	  "bytes of request body after gunzip"),
	O("conn-memory", T_SIZE, conn_memory,
	  "bytes of libmicrohttpd buffer per connection (headers must fit)"),
	O("threads", T_UINT, threads, "HTTP worker threads"),
	O("host-rate", T_DOUBLE, host_rate, "reports per second per host key"),
	O("host-burst", T_DOUBLE, host_burst, "report burst per host key"),
	O("ip-rate", T_DOUBLE, ip_rate,
	  "requests per second per non-loopback IP"),
	O("ip-burst", T_DOUBLE, ip_burst, "request burst per non-loopback IP"),
	O("batch-days", T_UINT, batch_days,
	  "days batch ids are kept for idempotency (>= 35)"),
	O("data-days", T_UINT, data_days,
	  "days raw rows are kept (0 = forever)"),
	O("commit-max", T_UINT, commit_max,
	  "batches sharing one COMMIT at most"),
	O("queue-max", T_UINT, queue_max,
	  "batches waiting for the writer before 503"),
	O("wal-max", T_SIZE, wal_max,
	  "bytes the WAL may grow to under load before the writer checkpoints it itself (>= 32M)"),
	O("silent-after", T_UINT, silent_after_s,
	  "seconds after which an agent counts as silent"),
	O("export-show-hosts", T_BOOL, export_show_hosts,
	  "name hosts in the linux-mm export"),
	O("export-show-cgroups", T_BOOL, export_show_cgroups,
	  "keep full cgroup paths in the linux-mm export"),
};

/* Contract: see config.h. */
void twl_config_defaults(struct twl_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->data_dir, sizeof(c->data_dir), "/var/lib/twilight");
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:8443");
#ifdef TWL_DEV_WEB_DIR
	snprintf(c->web_dir, sizeof(c->web_dir), "%s", TWL_DEV_WEB_DIR);
#else
	snprintf(c->web_dir, sizeof(c->web_dir), "/usr/share/twilight/web");
#endif
	snprintf(
		c->tls_priorities, sizeof(c->tls_priorities),
		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%%SERVER_PRECEDENCE");
	c->max_connections = 2048;
	c->max_per_ip = 16;
	c->conn_timeout_s = 30;
	c->max_body = 4u << 20;
	c->max_inflated = 16u << 20;
	/*
	 * libmicrohttpd zeroes a connection's whole buffer before each
	 * request: at 64 KiB that was about 10 us of an ingest request's
	 * ~110 us of HTTP-thread CPU (bench/README.md). 16 KiB holds the
	 * headers of any client here; bodies stream through it in chunks.
	 */
	c->conn_memory = 16u << 10;
	c->threads = 2;
	c->host_rate = 1.0;
	c->host_burst = 30;
	c->ip_rate = 20;
	c->ip_burst = 100;
	c->batch_days = 35;
	c->data_days = 0;
	c->commit_max = 256;
	c->queue_max = 4096;
	/*
	 * Past wal-max the writer stops to checkpoint the WAL itself (every
	 * batch waiting; 3-7 ms median at 5,000 reports/s, ~20 ms with full
	 * group commits); 256 MiB makes that 4 times rarer than 64 MiB did
	 * (server/store/sqlite/checkpoint.h, bench/README.md). The disk it takes is given
	 * back when the server stops.
	 */
	c->wal_max = 256u << 20;
	c->silent_after_s = 3600;
}

static const struct opt *find_opt(const char *key)
{
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(opts[i].name, key))
			return &opts[i];
	return NULL;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") ||
	    !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") ||
		 !strcmp(v, "off"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_u64(const char *v, unsigned long long max,
		     unsigned long long *out, bool suffixes)
{
	char *end;
	unsigned long long n;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	if (suffixes && (*end == 'k' || *end == 'K'))
		n <<= 10, end++;
	else if (suffixes && (*end == 'm' || *end == 'M'))
		n <<= 20, end++;
	else if (suffixes && (*end == 'g' || *end == 'G'))
		n <<= 30, end++;
	if (*end || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

/* Contract: see config.h. */
int twl_config_set(struct twl_config *c, const char *key, const char *value,
		   char *err, size_t err_cap)
{
	const struct opt *o = find_opt(key);
	char *field = (char *)c + (o ? o->off : 0);
	unsigned long long n;
	double d;
	char *end;

	if (!o) {
		snprintf(err, err_cap, "unknown option '%s' (see --help)", key);
		return -ENOENT;
	}
	switch (o->type) {
	case T_STR:
		if (strlen(value) >= o->size)
			goto bad;
		snprintf(field, o->size, "%s", value);
		return 0;
	case T_BOOL:
		if (parse_bool(value, (bool *)field))
			goto bad;
		return 0;
	case T_UINT:
		if (parse_u64(value, 1000000000ULL, &n, false))
			goto bad;
		*(unsigned *)field = (unsigned)n;
		return 0;
	case T_SIZE:
		if (parse_u64(value, 1ULL << 40, &n, true))
			goto bad;
		*(size_t *)field = (size_t)n;
		return 0;
	case T_DOUBLE:
		errno = 0;
		d = strtod(value, &end);
		if (errno || *end || end == value || !(d > 0) || d > 1e9)
			goto bad;
		*(double *)field = d;
		return 0;
	case T_SAN:
		if (c->n_sans >= TWL_CONFIG_MAX_SANS || !value[0] ||
		    strlen(value) >= sizeof(c->sans[0]) ||
		    strpbrk(value, ",\"\n"))
			goto bad;
		snprintf(c->sans[c->n_sans++], sizeof(c->sans[0]), "%s", value);
		return 0;
	}
bad:
	snprintf(err, err_cap, "bad value '%.64s' for option '%s' (%s)", value,
		 key, o->help);
	return -EINVAL;
}

static int load_file(struct twl_config *c, const char *path, bool must_exist,
		     char *err, size_t err_cap)
{
	char *buf = NULL, *line, *save = NULL;
	int ret, lineno = 0;

	ret = twl_read_file(path, 1 << 20, &buf, NULL);
	if (ret == -ENOENT && !must_exist)
		return 0;
	if (ret) {
		snprintf(err, err_cap, "cannot read config file %s: %s", path,
			 strerror(-ret));
		return -EINVAL;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq, *k, *v, e2[256];

		lineno++;
		k = twl_strip(line);
		if (!*k || *k == '#')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			snprintf(err, err_cap, "%s:%d: expected 'key = value'",
				 path, lineno);
			ret = -EINVAL;
			break;
		}
		*eq = 0;
		k = twl_strip(k);
		v = twl_strip(eq + 1);
		if (!strcmp(k, "config") || !strcmp(k, "data-dir")) {
			snprintf(
				err, err_cap,
				"%s:%d: '%s' can only be given on the command line",
				path, lineno, k);
			ret = -EINVAL;
			break;
		}
		ret = twl_config_set(c, k, v, e2, sizeof(e2));
		if (ret) {
			snprintf(err, err_cap, "%s:%d: %s", path, lineno, e2);
			ret = -EINVAL;
			break;
		}
	}
	free(buf);
	return ret;
}

struct kv {
	const char *k;
	const char *v;
};

/* Contract: see config.h. */
int twl_config_load(struct twl_config *c, int argc, char **argv, char **rest,
		    int *n_rest, char *err, size_t err_cap)
{
	struct kv *flags = calloc(argc + 1, sizeof(*flags));
	int nf = 0, nr = 0, ret = 0;
	char cfg[512];

	if (!flags)
		return -ENOMEM;
	/* Pass 1: collect flags; data-dir and config apply first. */
	for (int i = 0; i < argc; i++) {
		char *a = argv[i];
		const char *k, *v;
		static char keybuf[64];
		const struct opt *o;

		if (strncmp(a, "--", 2) || !a[2]) {
			rest[nr++] = a;
			continue;
		}
		k = a + 2;
		v = strchr(k, '=');
		if (v) {
			size_t kl = (size_t)(v - k);

			if (kl >= sizeof(keybuf)) {
				snprintf(err, err_cap, "unknown option '%.40s'",
					 a);
				ret = -EINVAL;
				goto out;
			}
			/* keep a private copy of the key: argv stays untouched */
			k = strndup(k, kl);
			v++;
		} else {
			o = find_opt(k);
			if (o && o->type == T_BOOL &&
			    (i + 1 >= argc ||
			     parse_bool(argv[i + 1], &(bool){ 0 }))) {
				v = "true";
			} else if (i + 1 < argc) {
				v = argv[++i];
			} else {
				snprintf(err, err_cap,
					 "option '%s' needs a value", a);
				ret = -EINVAL;
				goto out;
			}
			k = strdup(k);
		}
		if (!k) {
			ret = -ENOMEM;
			goto out;
		}
		flags[nf].k = k;
		flags[nf++].v = v;
	}
	for (int i = 0; i < nf; i++) {
		if (!strcmp(flags[i].k, "data-dir") ||
		    !strcmp(flags[i].k, "config")) {
			ret = twl_config_set(c, flags[i].k, flags[i].v, err,
					     err_cap);
			if (ret)
				goto out;
		}
	}
	if (c->config_file[0]) {
		ret = load_file(c, c->config_file, true, err, err_cap);
	} else {
		snprintf(cfg, sizeof(cfg), "%.480s/twilight-server.conf",
			 c->data_dir);
		ret = load_file(c, cfg, false, err, err_cap);
	}
	if (ret)
		goto out;
	for (int i = 0; i < nf; i++) {
		if (!strcmp(flags[i].k, "data-dir") ||
		    !strcmp(flags[i].k, "config"))
			continue;
		ret = twl_config_set(c, flags[i].k, flags[i].v, err, err_cap);
		if (ret) {
			ret = -EINVAL;
			goto out;
		}
	}
	*n_rest = nr;
out:
	for (int i = 0; i < nf; i++)
		free((char *)flags[i].k);
	free(flags);
	return ret;
}

static void derive(char *field, size_t cap, const char *dir, const char *name)
{
	if (!field[0])
		snprintf(field, cap, "%.400s/%s", dir, name);
}

/* Contract: see config.h. */
int twl_config_finish(struct twl_config *c, char *err, size_t err_cap)
{
	if (!c->data_dir[0]) {
		snprintf(err, err_cap, "--data-dir is empty");
		return -EINVAL;
	}
	derive(c->db_path, sizeof(c->db_path), c->data_dir, "twilight.db");
	derive(c->cert_file, sizeof(c->cert_file), c->data_dir, "server.pem");
	derive(c->key_file, sizeof(c->key_file), c->data_dir, "server.key");
	derive(c->ca_file, sizeof(c->ca_file), c->data_dir, "ca.pem");
	if (c->batch_days < 35) {
		snprintf(
			err, err_cap,
			"batch-days %u is below 35: agents may resend batches that old; raise it",
			c->batch_days);
		return -EINVAL;
	}
	if (c->max_body < 1024 || c->max_inflated < c->max_body) {
		snprintf(
			err, err_cap,
			"max-body must be >= 1024 and max-inflated >= max-body");
		return -EINVAL;
	}
	if (!c->max_connections || !c->max_per_ip || !c->conn_timeout_s ||
	    !c->threads || c->threads > 64 || !c->commit_max || !c->queue_max) {
		snprintf(
			err, err_cap,
			"max-connections, max-per-ip, timeout, threads (<= 64), commit-max and queue-max must be positive");
		return -EINVAL;
	}
	if (c->wal_max < (32u << 20)) {
		snprintf(err, err_cap, "wal-max must be at least 32M");
		return -EINVAL;
	}
	if (c->conn_memory < 8192) {
		snprintf(err, err_cap, "conn-memory must be at least 8k");
		return -EINVAL;
	}
	if (c->require_client_cert && !c->client_ca_file[0]) {
		snprintf(err, err_cap, "require-client-cert needs client-ca");
		return -EINVAL;
	}
	return 0;
}

/* Contract: see config.h. */
void twl_config_usage(void *fp)
{
	FILE *f = fp;

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		fprintf(f, "  --%-22s %s\n", opts[i].name, opts[i].help);
}

/* Contract: see config.h. */
void twl_config_dump(const struct twl_config *c, void *fp)
{
	FILE *f = fp;

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct opt *o = &opts[i];
		const char *field = (const char *)c + o->off;

		fprintf(f, "%s = ", o->name);
		switch (o->type) {
		case T_STR:
			fprintf(f, "%s\n", field);
			break;
		case T_BOOL:
			fprintf(f, "%s\n",
				*(const bool *)field ? "true" : "false");
			break;
		case T_UINT:
			fprintf(f, "%u\n", *(const unsigned *)field);
			break;
		case T_SIZE:
			fprintf(f, "%zu\n", *(const size_t *)field);
			break;
		case T_DOUBLE:
			fprintf(f, "%g\n", *(const double *)field);
			break;
		case T_SAN:
			for (size_t j = 0; j < c->n_sans; j++)
				fprintf(f, "%s%s", j ? "," : "", c->sans[j]);
			fprintf(f, "\n");
			break;
		}
	}
}
