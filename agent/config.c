// SPDX-License-Identifier: GPL-2.0
/* Declarative configuration table, parser and validator (see config.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <twilight/util.h>

#define OFF(f) offsetof(struct twl_config, f)
#define DAY (24u * 3600u)

const struct twl_opt twl_config_options[] = {
	{ "server_url", TWL_OPT_URL, NULL, OFF(server_url), 0, 0, true,
	  "Base URL of the twilight server, https only (e.g. https://twilight.example:8443).",
	  NULL },
	{ "ca_file", TWL_OPT_PATH, NULL, OFF(ca_file), 0, 0, true,
	  "PEM file with the CA certificate(s) the server's certificate must chain to. "
	  "Verification cannot be switched off.",
	  NULL },
	{ "client_cert", TWL_OPT_PATH, NULL, OFF(client_cert), 0, 0, false,
	  "Optional PEM client certificate presented to the server (needs client_key).",
	  NULL },
	{ "client_key", TWL_OPT_PATH, NULL, OFF(client_key), 0, 0, false,
	  "PEM private key for client_cert.", NULL },
	{ "enroll_token_file", TWL_OPT_PATH, NULL, OFF(enroll_token_file), 0, 0,
	  false,
	  "File holding the enrolment token, used on first contact to obtain the per-host key.",
	  NULL },
	{ "state_dir", TWL_OPT_PATH, "/var/lib/twilight-agent", OFF(state_dir),
	  0, 0, true,
	  "Directory for the agent's state: last kmsg sequence per boot, batch sequence, host id, host key.",
	  NULL },
	{ "spool_dir", TWL_OPT_PATH, "/var/lib/twilight-agent/spool",
	  OFF(spool_dir), 0, 0, true,
	  "Directory where batches wait until the server accepted them (created if missing; "
	  "inside state_dir by default so that systemd's StateDirectory= covers it).",
	  NULL },
	{ "spool_max_bytes", TWL_OPT_SIZE, "64M", OFF(spool_max_bytes),
	  64 * 1024, 1ULL << 40, false,
	  "Spool size cap; the oldest batches are dropped (and counted) beyond it.",
	  NULL },
	{ "spool_max_age", TWL_OPT_SECONDS, "30d", OFF(spool_max_age_s), 3600,
	  365 * DAY, false,
	  "Batches older than this are dropped from the spool (and counted).",
	  NULL },
	{ "batch_interval", TWL_OPT_SECONDS, "30s", OFF(batch_interval_s), 1,
	  3600, false,
	  "How long records are collected before a batch is spooled.", NULL },
	{ "heartbeat_interval", TWL_OPT_SECONDS, "1h",
	  OFF(heartbeat_interval_s), 60, 7 * DAY, false,
	  "A batch with only health is sent when nothing else was sent for this long.",
	  NULL },
	{ "census_interval", TWL_OPT_SECONDS, "24h", OFF(census_interval_s),
	  300, 30 * DAY, false,
	  "How often the static cgroup census is taken (also at start and on SIGHUP).",
	  NULL },
	{ "census_max_cgroups", TWL_OPT_UINT, "10000", OFF(census_max_cgroups),
	  1, 1000000, false,
	  "The census examines at most this many memory cgroups.", NULL },
	{ "census_max_time", TWL_OPT_MILLIS, "2s", OFF(census_max_ms), 10,
	  60000, false, "The census stops walking cgroups after this long.",
	  NULL },
	{ "backoff_base", TWL_OPT_MILLIS, "1s", OFF(backoff_base_ms), 100,
	  3600000, false,
	  "First retry delay after a failed delivery (doubles, with full jitter).",
	  NULL },
	{ "backoff_cap", TWL_OPT_MILLIS, "15m", OFF(backoff_cap_ms), 1000,
	  86400000, false,
	  "Longest retry delay (Retry-After from the server may ask for more).",
	  NULL },
	{ "connect_timeout", TWL_OPT_MILLIS, "10s", OFF(connect_timeout_ms),
	  100, 600000, false, "TCP+TLS connect timeout.", NULL },
	{ "timeout", TWL_OPT_MILLIS, "30s", OFF(timeout_ms), 1000, 3600000,
	  false, "Whole-request timeout.", NULL },
	{ "kmsg_path", TWL_OPT_PATH, "/dev/kmsg", OFF(kmsg_path), 0, 0, false,
	  "Kernel log device (a dump file or FIFO also works; see --kmsg-file).",
	  NULL },
	{ "cgroup_root", TWL_OPT_PATH, "/sys/fs/cgroup", OFF(cgroup_root), 0, 0,
	  false,
	  "Only cgroup mounts at or below this path are taken into the census.",
	  NULL },
	{ "mountinfo", TWL_OPT_PATH, "/proc/self/mountinfo", OFF(mountinfo), 0,
	  0, false, "Mount table the census reads to find cgroup hierarchies.",
	  NULL },
	{ "boot_id_path", TWL_OPT_PATH, "/proc/sys/kernel/random/boot_id",
	  OFF(boot_id_path), 0, 0, false,
	  "File holding this boot's id (kmsg sequence numbers restart each boot).",
	  NULL },
	{ "machine_id_path", TWL_OPT_PATH, "/etc/machine-id",
	  OFF(machine_id_path), 0, 0, false,
	  "Machine id hashed into the host id; when missing or empty a random id is kept in state_dir.",
	  NULL },
	{ "host_id_key", TWL_OPT_STRING, "twilight-agent", OFF(host_id_key), 0,
	  0, false,
	  "Application key hashed with the machine id, so the host id reveals nothing else.",
	  NULL },
	{ "send_hostname", TWL_OPT_BOOL, "true", OFF(send_hostname), 0, 0,
	  false,
	  "Send the host name; false sends \"\" (the host id still tells hosts apart).",
	  NULL },
	{ "log_level", TWL_OPT_LOGLEVEL, "info", OFF(log_level), 0, 0, false,
	  "Least important messages logged: err, warning, notice, info or debug.",
	  NULL },
	{ "bpf", TWL_OPT_BOOL, "false", OFF(bpf), 0, 0, false,
	  "Load the BPF usage counters (needs CAP_BPF and CAP_PERFMON). Off unless set, so "
	  "that a test run never loads BPF by accident; set it to true on hosts.",
	  NULL },
	{ "privacy_cgroup", TWL_OPT_CHOICE, "keep", OFF(privacy_cgroup), 0, 0,
	  false,
	  "Cgroup paths and container ids in usage: keep, hash (with privacy_key) or drop.",
	  "keep|hash|drop" },
	{ "privacy_comm", TWL_OPT_CHOICE, "keep", OFF(privacy_comm), 0, 0,
	  false,
	  "Process names in usage: keep, hash (with privacy_key) or drop.",
	  "keep|hash|drop" },
	{ "privacy_key", TWL_OPT_STRING, NULL, OFF(privacy_key), 0, 0, false,
	  "Secret mixed into hashed names, so that they cannot be guessed back.",
	  NULL },
};

const size_t twl_config_n_options =
	sizeof(twl_config_options) / sizeof(twl_config_options[0]);

static const char *const level_names[] = {
	[LOG_ERR] = "err",   [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

const char *twl_config_loglevel_name(int prio)
{
	if (prio < LOG_ERR || prio > LOG_DEBUG || !level_names[prio])
		return "?";
	return level_names[prio];
}

static void add_err(struct twl_config_errors *errs, unsigned line,
		    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_err(struct twl_config_errors *errs, unsigned line,
		    const char *key, const char *fmt, ...)
{
	struct twl_config_error *e;
	va_list ap;

	if (!errs)
		return;
	if (errs->n >= TWL_CONFIG_MAX_ERRORS) {
		errs->dropped++;
		return;
	}
	e = &errs->e[errs->n++];
	e->line = line;
	snprintf(e->key, sizeof(e->key), "%s", key ? key : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static const char *type_name(enum twl_opt_type t)
{
	switch (t) {
	case TWL_OPT_STRING:
		return "string";
	case TWL_OPT_PATH:
		return "path";
	case TWL_OPT_URL:
		return "url";
	case TWL_OPT_BOOL:
		return "bool";
	case TWL_OPT_UINT:
		return "integer";
	case TWL_OPT_SECONDS:
	case TWL_OPT_MILLIS:
		return "duration";
	case TWL_OPT_SIZE:
		return "size";
	case TWL_OPT_LOGLEVEL:
		return "level";
	case TWL_OPT_CHOICE:
		return "choice";
	}
	return "?";
}

/* Parse an unsigned number with an optional unit suffix from @units. */
struct unit {
	const char *suffix;
	uint64_t mult;
};

static int parse_scaled(const char *v, const struct unit *units, uint64_t *out,
			const char **why)
{
	char *end;
	unsigned long long n;

	if (*v < '0' || *v > '9') {
		*why = "expected a non-negative number";
		return -EINVAL;
	}
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno) {
		*why = "number out of range";
		return -ERANGE;
	}
	for (; units->suffix; units++) {
		if (!strcasecmp(end, units->suffix)) {
			if (units->mult && n > UINT64_MAX / units->mult) {
				*why = "number out of range";
				return -ERANGE;
			}
			*out = n * units->mult;
			return 0;
		}
	}
	*why = "unknown unit";
	return -EINVAL;
}

static const struct unit sec_units[] = {
	{ "", 1 },     { "s", 1 },     { "m", 60 },
	{ "h", 3600 }, { "d", 86400 }, { NULL, 0 },
};
static const struct unit ms_units[] = {
	{ "", 1000 },	  { "ms", 1 },		{ "s", 1000 }, { "m", 60000 },
	{ "h", 3600000 }, { "d", 86400000ULL }, { NULL, 0 },
};
static const struct unit size_units[] = {
	{ "", 1 },	     { "b", 1 },
	{ "k", 1024 },	     { "kib", 1024 },
	{ "m", 1 << 20 },    { "mib", 1 << 20 },
	{ "g", 1ULL << 30 }, { "gib", 1ULL << 30 },
	{ NULL, 0 },
};

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Set option @o of @c from text @v; on error fill *@why. */
static int set_option(struct twl_config *c, const struct twl_opt *o,
		      const char *v, const char **why, char *whybuf,
		      size_t whycap)
{
	void *field = (char *)c + o->off;
	const struct unit *units = NULL;
	uint64_t n = 0;
	int ret, p;
	bool b;
	char *dup;

	if (!*v && (o->type == TWL_OPT_PATH || o->type == TWL_OPT_URL)) {
		*why = "must not be empty";
		return -EINVAL;
	}
	switch (o->type) {
	case TWL_OPT_URL:
		if (strncmp(v, "https://", 8) || !v[8]) {
			*why = "must be an https:// URL (TLS is required; plain http is refused)";
			return -EINVAL;
		}
		goto string;
	case TWL_OPT_PATH:
		if (v[0] != '/') {
			*why = "must be an absolute path";
			return -EINVAL;
		}
		goto string;
	case TWL_OPT_STRING:
string:
		if (strlen(v) > 4095) {
			*why = "longer than 4095 bytes";
			return -EINVAL;
		}
		dup = strdup(v);
		if (!dup)
			return -ENOMEM;
		free(*(char **)field);
		*(char **)field = dup;
		return 0;
	case TWL_OPT_BOOL:
		if (parse_bool(v, &b)) {
			*why = "must be true or false";
			return -EINVAL;
		}
		*(bool *)field = b;
		return 0;
	case TWL_OPT_CHOICE: {
		const char *ch = o->choices;
		size_t vlen = strlen(v);

		while (ch && *ch) {
			size_t k = strcspn(ch, "|");

			if (k == vlen && !strncmp(ch, v, vlen))
				goto string;
			ch += k + (ch[k] == '|');
		}
		snprintf(whybuf, whycap, "must be one of %s", o->choices);
		*why = whybuf;
		return -EINVAL;
	}
	case TWL_OPT_LOGLEVEL:
		for (p = LOG_ERR; p <= LOG_DEBUG; p++) {
			if (level_names[p] && !strcasecmp(v, level_names[p])) {
				*(int *)field = p;
				return 0;
			}
		}
		*why = "must be one of err, warning, notice, info, debug";
		return -EINVAL;
	case TWL_OPT_UINT:
		units = sec_units; /* bare number only: first entry */
		if (parse_scaled(v, units, &n, why) || strpbrk(v, "smhdSMHD")) {
			*why = "must be a non-negative integer";
			return -EINVAL;
		}
		break;
	case TWL_OPT_SECONDS:
		units = sec_units;
		break;
	case TWL_OPT_MILLIS:
		units = ms_units;
		break;
	case TWL_OPT_SIZE:
		units = size_units;
		break;
	}
	if (o->type != TWL_OPT_UINT) {
		ret = parse_scaled(v, units, &n, why);
		if (ret)
			return ret;
	}
	if (n < o->min || n > o->max) {
		snprintf(whybuf, whycap,
			 "%llu is outside the allowed range %llu..%llu%s",
			 (unsigned long long)n, (unsigned long long)o->min,
			 (unsigned long long)o->max,
			 o->type == TWL_OPT_SECONDS ? " seconds" :
			 o->type == TWL_OPT_MILLIS  ? " ms" :
			 o->type == TWL_OPT_SIZE    ? " bytes" :
						      "");
		*why = whybuf;
		return -ERANGE;
	}
	if (o->type == TWL_OPT_SIZE)
		*(uint64_t *)field = n;
	else
		*(unsigned *)field = (unsigned)n;
	return 0;
}

/* Options stored as a malloc'd char *. */
static bool is_string_type(enum twl_opt_type t)
{
	return t == TWL_OPT_STRING || t == TWL_OPT_PATH || t == TWL_OPT_URL ||
	       t == TWL_OPT_CHOICE;
}

int twl_config_init(struct twl_config *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < twl_config_n_options; i++) {
		const struct twl_opt *o = &twl_config_options[i];
		const char *why = NULL;
		char whybuf[128];

		if (!o->def)
			continue;
		if (set_option(c, o, o->def, &why, whybuf, sizeof(whybuf))) {
			twl_config_fini(c);
			return -ENOMEM; /* defaults are valid: only ENOMEM */
		}
	}
	return 0;
}

void twl_config_fini(struct twl_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < twl_config_n_options; i++) {
		const struct twl_opt *o = &twl_config_options[i];

		if (is_string_type(o->type)) {
			char **f = (char **)((char *)c + o->off);

			free(*f);
			*f = NULL;
		}
	}
}

static const struct twl_opt *find_option(const char *name, size_t *idx)
{
	size_t i;

	for (i = 0; i < twl_config_n_options; i++) {
		if (!strcmp(twl_config_options[i].name, name)) {
			*idx = i;
			return &twl_config_options[i];
		}
	}
	return NULL;
}

int twl_config_parse(struct twl_config *c, const char *text, size_t len,
		     struct twl_config_errors *errs)
{
	unsigned seen[64] = { 0 }; /* line where each option was set */
	size_t before = errs ? errs->n + errs->dropped : 0, pos = 0;
	unsigned lineno = 0;
	char line[4096 + 128];
	int ret = 0;

	_Static_assert(sizeof(twl_config_options) /
				       sizeof(twl_config_options[0]) <=
			       64,
		       "seen[] too small");
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const struct twl_opt *o;
		char *key, *val, *eq;
		const char *why = NULL;
		char whybuf[160];
		size_t idx;

		lineno++;
		if (n >= sizeof(line)) {
			add_err(errs, lineno, "", "line longer than %zu bytes",
				sizeof(line) - 1);
			pos += n + 1;
			continue;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (memchr(line, '\0', n)) {
			add_err(errs, lineno, "", "line contains a NUL byte");
			continue;
		}
		key = twl_strip(line);
		if (!*key || *key == '#' || *key == ';')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			add_err(errs, lineno, "",
				"expected \"key = value\", got \"%.60s\"", key);
			continue;
		}
		*eq = '\0';
		key = twl_strip(key);
		val = twl_strip(eq + 1);
		if (val[0] == '"') {
			size_t vl = strlen(val);

			if (vl < 2 || val[vl - 1] != '"') {
				add_err(errs, lineno, key,
					"unterminated quoted value");
				continue;
			}
			val[vl - 1] = '\0';
			val++;
		}
		o = find_option(key, &idx);
		if (!o) {
			add_err(errs, lineno, key,
				"unknown option (see twilight-agent --help)");
			continue;
		}
		if (seen[idx]) {
			add_err(errs, lineno, key,
				"set twice (first on line %u)", seen[idx]);
			continue;
		}
		seen[idx] = lineno;
		ret = set_option(c, o, val, &why, whybuf, sizeof(whybuf));
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			add_err(errs, lineno, key, "bad %s \"%.80s\": %s",
				type_name(o->type), val, why);
	}
	if (errs && errs->n + errs->dropped != before)
		return -EINVAL;
	return 0;
}

int twl_config_load(struct twl_config *c, const char *path,
		    struct twl_config_errors *errs)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = twl_config_init(c);
	if (ret)
		return ret;
	ret = twl_read_file(path, 64 * 1024, &text, &len);
	if (ret) {
		add_err(errs, 0, "", "cannot read the config file: %s%s",
			strerror(-ret),
			ret == -EFBIG ? " (larger than 64 KiB)" : "");
		return ret;
	}
	ret = twl_config_parse(c, text, len, errs);
	free(text);
	return ret;
}

static void check_file(const char *key, const char *path, bool want_dir,
		       struct twl_config_errors *errs)
{
	struct stat st;

	if (!path)
		return;
	if (stat(path, &st) < 0) {
		add_err(errs, 0, key, "%s: %s", path, strerror(errno));
		return;
	}
	if (want_dir && !S_ISDIR(st.st_mode)) {
		add_err(errs, 0, key, "%s is not a directory", path);
		return;
	}
	if (!want_dir && S_ISDIR(st.st_mode)) {
		add_err(errs, 0, key, "%s is a directory, expected a file",
			path);
		return;
	}
	if (access(path, want_dir ? (R_OK | W_OK | X_OK) : R_OK) < 0)
		add_err(errs, 0, key, "%s: %s for this user", path,
			strerror(errno));
}

/* The spool dir is created by the agent: it, or else its parent, must be usable. */
static void check_spool_dir(const char *path, struct twl_config_errors *errs)
{
	char parent[4096], *slash;

	if (!path)
		return;
	if (access(path, F_OK) == 0) {
		check_file("spool_dir", path, true, errs);
		return;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), "/");
	if (access(parent, W_OK | X_OK) < 0)
		add_err(errs, 0, "spool_dir",
			"%s does not exist and cannot be created in %s: %s",
			path, parent, strerror(errno));
}

int twl_config_validate(const struct twl_config *c, bool check_files,
			struct twl_config_errors *errs)
{
	size_t before = errs ? errs->n + errs->dropped : 0, i;

	for (i = 0; i < twl_config_n_options; i++) {
		const struct twl_opt *o = &twl_config_options[i];

		if (o->required && is_string_type(o->type) &&
		    !*(char **)((char *)c + o->off))
			add_err(errs, 0, o->name, "required but not set");
	}
	if (!!c->client_cert != !!c->client_key)
		add_err(errs, 0, c->client_cert ? "client_key" : "client_cert",
			"client_cert and client_key must be set together");
	if (c->backoff_base_ms > c->backoff_cap_ms)
		add_err(errs, 0, "backoff_base",
			"%u ms is larger than backoff_cap (%u ms)",
			c->backoff_base_ms, c->backoff_cap_ms);
	if (((c->privacy_cgroup && !strcmp(c->privacy_cgroup, "hash")) ||
	     (c->privacy_comm && !strcmp(c->privacy_comm, "hash"))) &&
	    (!c->privacy_key || !*c->privacy_key))
		add_err(errs, 0, "privacy_key",
			"required when privacy_cgroup or privacy_comm is hash (an unkeyed hash "
			"of a name is easy to reverse)");
	if (c->state_dir && c->spool_dir && !strcmp(c->state_dir, c->spool_dir))
		add_err(errs, 0, "spool_dir", "must differ from state_dir");
	if (check_files) {
		check_file("ca_file", c->ca_file, false, errs);
		check_file("client_cert", c->client_cert, false, errs);
		check_file("client_key", c->client_key, false, errs);
		check_file("enroll_token_file", c->enroll_token_file, false,
			   errs);
		check_file("state_dir", c->state_dir, true, errs);
		check_spool_dir(c->spool_dir, errs);
	}
	if (errs && errs->n + errs->dropped != before)
		return -EINVAL;
	return 0;
}

void twl_config_print_errors(FILE *f, const char *path,
			     const struct twl_config_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n; i++) {
		const struct twl_config_error *e = &errs->e[i];

		if (e->line)
			fprintf(f, "%s:%u: ", path, e->line);
		else
			fprintf(f, "%s: ", path);
		if (e->key[0])
			fprintf(f, "%s: ", e->key);
		fprintf(f, "%s\n", e->msg);
	}
	if (errs->dropped)
		fprintf(f, "%s: %zu more errors not shown\n", path,
			errs->dropped);
}

void twl_config_print_help(FILE *f)
{
	size_t i;

	fprintf(f, "Configuration options (key = value in the config file):\n");
	for (i = 0; i < twl_config_n_options; i++) {
		const struct twl_opt *o = &twl_config_options[i];

		fprintf(f, "  %-20s %-8s default %s%s\n      %s\n", o->name,
			type_name(o->type), o->def ? o->def : "(none)",
			o->required ? ", required" : "", o->desc);
	}
}

void twl_config_print_example(FILE *f)
{
	size_t i;

	fprintf(f,
		"# twilight-agent configuration (generated by twilight-agent --print-config).\n"
		"# Format: key = value; '#' starts a comment. Durations take s, m, h, d\n"
		"# (and ms); sizes take K, M, G. Check with: twilight-agent --check-config\n");
	for (i = 0; i < twl_config_n_options; i++) {
		const struct twl_opt *o = &twl_config_options[i];

		fprintf(f, "\n# %s (%s%s)\n", o->desc, type_name(o->type),
			o->required ? ", required" : "");
		if (!strcmp(o->name, "server_url"))
			fprintf(f,
				"server_url = https://twilight.example.org:8443\n");
		else if (!strcmp(o->name, "ca_file"))
			fprintf(f, "ca_file = /etc/twilight/ca.pem\n");
		else if (!strcmp(o->name, "enroll_token_file"))
			fprintf(f,
				"enroll_token_file = /etc/twilight/enroll.token\n");
		else if (o->def)
			fprintf(f, "#%s = %s\n", o->name, o->def);
		else
			fprintf(f, "#%s =\n", o->name);
	}
}
