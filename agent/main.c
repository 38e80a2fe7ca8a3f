// SPDX-License-Identifier: GPL-2.0
/*
 * twilight-agent: reads kernel deprecation warnings from /dev/kmsg, takes
 * a cgroup census, and ships both to the twilight server through a
 * durable spool. See agent/twilight-agent.conf.example and --help.
 *
 * The main loop sleeps in poll() on the kmsg fd, a signalfd and one
 * timeout (next batch, next heartbeat/census, or the sender's back-off):
 * no busy polling, at most one wake-up per batch interval when idle.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "bpf/twl_bpf.h"
#include "census.h"
#include "config.h"
#include "identity.h"
#include "kmsg_source.h"
#include "pump.h"
#include "report.h"
#include "sender.h"
#include "state.h"

struct opts {
	const char *config;
	bool config_given;
	const char *kmsg_file;
	bool dry_run, check_config;
	/* The arguments after the program name: their keys override the file. */
	int argc;
	char **argv;
};

struct agent {
	struct opts o;
	struct twl_config cfg;
	struct twl_identity id;
	struct twl_sender *sender;
	struct twl_pump *pump;
	struct twl_kmsg_source *src;
	struct twl_bpf *bpf;
	/* Features the kernel warned about that BPF never counted (this boot). */
	size_t n_missing;
	const char *missing[64];
	int sfd;
	bool src_eof;
	uint64_t logged_lost, logged_parse, logged_state_fail;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int64_t wall_s(void)
{
	return (int64_t)time(NULL);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: twilight-agent [options] [--KEY VALUE]...\n"
		"Reports kernel deprecation warnings (cgroup v1 memory controller first)\n"
		"to a twilight server.\n\n");
	twl_config_print_help(f);
	fprintf(f,
		"\nA boolean key alone means true, --no-KEY false. Signals: SIGHUP reloads\n"
		"the config and retakes the census; SIGTERM spools what is pending and\n"
		"exits 0.\n");
}

/* --help, --version, --print-config: print and return 1; else 0. */
static int print_action(const struct twl_agent_cli *cli)
{
	if (cli->help)
		usage(stdout);
	else if (cli->version)
		printf("twilight-agent %s (wire format v%d)\n",
		       TWL_AGENT_VERSION, TWL_WIRE_VERSION);
	else if (cli->print_config)
		twl_config_print_example(stdout);
	else
		return 0;
	return 1;
}

/*
 * Parse the command line into @o. Its configuration keys are checked
 * against a scratch config now, so that a bad one is a usage error before
 * anything starts; load_config() applies them after the file. Returns 0,
 * 1 when an action (--help ...) is done, -EINVAL or -ENOMEM.
 */
static int parse_args(int argc, char **argv, struct opts *o)
{
	struct twl_agent_cli cli;
	struct twl_config scratch;
	struct twl_cfg *p = NULL;
	int ret = -ENOMEM;

	memset(&cli, 0, sizeof(cli));
	if (twl_config_init(&scratch))
		return -ENOMEM;
	if (twl_cfg_defaults(twl_agent_cli_options, twl_agent_cli_n_options,
			     &cli))
		goto out;
	p = twl_config_session(&scratch, &cli);
	if (!p)
		goto out;
	ret = twl_cfg_args(p, argc - 1, argv + 1, TWL_CFG_PASS_ALL, NULL, NULL);
	if (ret == -ENOMEM)
		goto out;
	if (print_action(&cli)) {
		ret = 1;
		goto out;
	}
	if (ret) {
		twl_cfg_print_msgs(stderr, p);
		fprintf(stderr, "Try twilight-agent --help.\n");
		goto out;
	}
	o->config = cli.config;
	o->config_given = twl_cfg_given(p, "config");
	o->kmsg_file = cli.kmsg_file;
	o->dry_run = cli.dry_run;
	o->check_config = cli.check_config;
	o->argc = argc - 1;
	o->argv = argv + 1;
out:
	twl_cfg_free(p);
	twl_config_fini(&scratch);
	return ret;
}

/*
 * Load the config into @cfg: the file (for the daemon, or when -c names
 * one), then the keys given on the command line; the daemon's is also
 * validated. Every error and deprecation note goes to stderr. 0, -EINVAL
 * or -ENOMEM; on error @cfg is left empty.
 */
static int load_config(const struct opts *o, struct twl_config *cfg,
		       bool daemon)
{
	struct twl_agent_cli cli; /* parse_args() took these flags */
	struct twl_cfg *p;
	int ret;

	ret = twl_config_init(cfg);
	if (ret)
		return ret;
	memset(&cli, 0, sizeof(cli));
	p = twl_config_session(cfg, &cli);
	if (!p) {
		twl_config_fini(cfg);
		return -ENOMEM;
	}
	if (daemon || o->config_given)
		ret = twl_cfg_load_file(p, o->config, TWL_AGENT_CONFIG_MAX,
					true);
	if (ret != -ENOMEM)
		ret = twl_cfg_args(p, o->argc, o->argv, TWL_CFG_PASS_LATE, NULL,
				   NULL);
	if (ret != -ENOMEM && daemon && !twl_cfg_failed(p))
		twl_config_validate(cfg, true, p);
	twl_cfg_print_msgs(stderr, p);
	if (ret != -ENOMEM)
		ret = twl_cfg_failed(p) ? -EINVAL : 0;
	if (ret)
		twl_config_fini(cfg);
	twl_cfg_free(p);
	return ret;
}

static void identity_cfg(const struct twl_config *cfg, bool read_only,
			 struct twl_identity_cfg *ic)
{
	memset(ic, 0, sizeof(*ic));
	ic->machine_id_path = cfg->machine_id_path;
	ic->boot_id_path = cfg->boot_id_path;
	ic->host_id_key = cfg->host_id_key;
	ic->state_dir = cfg->state_dir;
	ic->read_only = read_only;
	ic->mountinfo = cfg->mountinfo;
	ic->cgroup_root = cfg->cgroup_root;
	ic->send_hostname = cfg->send_hostname;
}

static json_t *take_census(const struct twl_config *cfg)
{
	struct twl_census_cfg cc = {
		.cgroup_root = cfg->cgroup_root,
		.mountinfo = cfg->mountinfo,
		.max_cgroups = cfg->census_max_cgroups,
		.max_ms = cfg->census_max_ms,
	};
	json_t *c;
	int err = 0;

	c = twl_census_take(&cc, wall_s(), &err);
	if (!c)
		twl_log(LOG_WARNING,
			"census: cannot read the mount table %s: %s; the batch goes without a "
			"census (check the mountinfo option)",
			cfg->mountinfo, strerror(-err));
	else if (json_is_true(json_object_get(c, "truncated")))
		twl_log(LOG_NOTICE,
			"census: stopped after %lld cgroups (census-max-cgroups %u, "
			"census-max-time %u ms); raise them for a complete census",
			(long long)json_integer_value(
				json_object_get(c, "cgroups_walked")),
			cfg->census_max_cgroups, cfg->census_max_ms);
	return c;
}

static int open_source(const char *path, struct twl_kmsg_source **out)
{
	*out = twl_kmsg_source_open(path);
	if (*out)
		return 0;
	twl_log(LOG_ERR, "cannot open kernel log %s: %s; %s", path,
		strerror(errno),
		errno == EACCES || errno == EPERM ?
			"run as root or with CAP_SYSLOG (see twilight-agent.service)" :
			"check kmsg-path / --kmsg-file");
	return -errno;
}

/* ---- dry run ------------------------------------------------------------ */

static int print_sink(void *ctx, const char *json, size_t len)
{
	/* Never called: dry run builds its one document directly. */
	return -EPERM;
}

static int dry_run(struct opts *o)
{
	struct twl_identity_cfg ic;
	struct twl_pump_cfg pc;
	struct twl_state st;
	struct twl_verr verr;
	struct twl_pump_stats ps;
	json_t *doc = NULL;
	char *text = NULL;
	int ret, rc = 1;
	struct agent a;

	memset(&a, 0, sizeof(a));
	if (load_config(o, &a.cfg, false))
		return 1;
	identity_cfg(&a.cfg, true, &ic);
	ret = twl_identity_load(&ic, &a.id);
	if (ret) {
		twl_log(LOG_ERR,
			"cannot determine the host identity: %s (boot id from %s)",
			strerror(-ret), a.cfg.boot_id_path);
		goto out;
	}
	memset(&st, 0, sizeof(st));
	memset(&pc, 0, sizeof(pc));
	pc.id = &a.id;
	pc.sink = print_sink;
	pc.single_batch = true;
	a.pump = twl_pump_new(&pc, &st);
	if (!a.pump)
		goto out;
	if (open_source(o->kmsg_file ? o->kmsg_file : a.cfg.kmsg_path, &a.src))
		goto out;
	twl_pump_set_source(a.pump, a.src);
	/* The census describes this machine: leave it out for an archived dump. */
	if (!o->kmsg_file)
		twl_pump_set_census(a.pump, take_census(&a.cfg));
	for (;;) {
		struct pollfd pfd = { .fd = twl_kmsg_source_fd(a.src),
				      .events = POLLIN };

		ret = twl_pump_drain(a.pump);
		if (ret == -ENODATA || ret == -ENOSPC)
			break;
		if (ret < 0) {
			twl_log(LOG_ERR, "reading the kernel log failed: %s",
				strerror(-ret));
			goto out;
		}
		/* /dev/kmsg: what is there now; a FIFO: wait for its writer to finish. */
		if (!o->kmsg_file || pfd.fd < 0)
			break;
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			goto out;
	}
	if (ret == -ENOSPC)
		twl_log(LOG_WARNING,
			"dry run: the input holds more than one batch; only the "
			"first is printed");
	doc = twl_pump_document(a.pump);
	if (!doc)
		goto out;
	if (twl_report_validate(doc, &verr)) {
		twl_log(LOG_ERR,
			"bug: the report fails validation: %s at %s: %s",
			verr.code, verr.field, verr.reason);
		goto out;
	}
	text = json_dumps(doc, JSON_INDENT(2));
	if (!text)
		goto out;
	printf("%s\n", text);
	if (fflush(stdout))
		goto out;
	twl_pump_stats(a.pump, &ps);
	twl_log(LOG_INFO,
		"dry run: %llu warnings, %llu unknown deprecations, %llu parse failures, "
		"%llu records lost; nothing was sent or written",
		(unsigned long long)ps.warnings, (unsigned long long)ps.unknown,
		(unsigned long long)ps.parse_failures,
		(unsigned long long)ps.records_lost);
	rc = 0;
out:
	free(text);
	json_decref(doc);
	twl_pump_free(a.pump);
	twl_kmsg_source_free(a.src);
	twl_config_fini(&a.cfg);
	return rc;
}

/* ---- daemon ------------------------------------------------------------- */

/* Callbacks get the agent, so a reload can replace the sender under them. */
static int sender_sink(void *ctx, const char *json, size_t len)
{
	struct agent *a = ctx;

	return twl_sender_submit(a->sender, json, len);
}

static void sender_health(void *ctx, struct twl_health *h)
{
	struct agent *a = ctx;
	struct twl_sender_stats st;

	twl_sender_stats(a->sender, &st);
	h->have_sender = true;
	h->spool_bytes = st.spool_bytes;
	h->spool_files = st.spool_files;
	h->spool_dropped = st.spool_dropped;
	h->send_failures = st.send_failures;
	h->key_rejected = st.key_rejected;
	snprintf(h->last_error, sizeof(h->last_error), "%s", st.last_error);
}

static struct twl_sender *make_sender(const struct twl_config *cfg,
				      const struct twl_identity *id)
{
	struct twl_sender_cfg sc;
	struct twl_sender *s;

	memset(&sc, 0, sizeof(sc));
	sc.server_url = cfg->server_url;
	sc.ca_file = cfg->ca_file;
	sc.client_cert = cfg->client_cert;
	sc.client_key = cfg->client_key;
	sc.enroll_token_file = cfg->enroll_token_file;
	sc.state_dir = cfg->state_dir;
	sc.spool_dir = cfg->spool_dir;
	sc.spool_max_bytes = cfg->spool_max_bytes;
	sc.spool_max_age_s = cfg->spool_max_age_s;
	sc.backoff_base_ms = cfg->backoff_base_ms;
	sc.backoff_cap_ms = cfg->backoff_cap_ms;
	sc.connect_timeout_ms = cfg->connect_timeout_ms;
	sc.timeout_ms = cfg->timeout_ms;
	sc.host_id = id->host_id;
	sc.hostname = cfg->send_hostname ? id->hostname : "";
	s = twl_sender_new(&sc);
	if (!s)
		twl_log(LOG_ERR,
			"cannot set up delivery to %s: %s; check the config with "
			"--check-config",
			cfg->server_url, strerror(errno));
	return s;
}

/* ---- BPF usage counters (agent/bpf) ----------------------------------- */

static int bpf_collect(void *ctx, json_t *usage)
{
	struct agent *a = ctx;
	int ret = twl_bpf_collect(a->bpf, usage, a->id.boot_id,
				  TWL_BPF_COLLECT_CHANGED);

	return ret == -ENODEV ? 0 : ret; /* no map open: nothing to collect */
}

static void bpf_health(void *ctx, json_t *health)
{
	struct agent *a = ctx;
	json_t *missing = json_array();
	size_t i;

	if (twl_bpf_health(a->bpf, health))
		twl_log(LOG_WARNING,
			"bpf: cannot add probe health (out of memory)");
	if (!missing)
		return;
	for (i = 0; i < a->n_missing; i++)
		json_array_append_new(missing, json_string(a->missing[i]));
	json_object_set_new(health, "probe_missing", missing);
}

static void bpf_warning(void *ctx, const char *feature, uint64_t mono_us)
{
	struct agent *a = ctx;
	size_t i;

	if (!twl_bpf_probe_missing(a->bpf, feature, mono_us))
		return;
	for (i = 0; i < a->n_missing; i++)
		if (!strcmp(a->missing[i], feature))
			return;
	if (a->n_missing < sizeof(a->missing) / sizeof(a->missing[0])) {
		/* Catalog ids are static strings: keep the pointer. */
		a->missing[a->n_missing++] =
			twl_catalog_find(feature) ?
				twl_catalog_find(feature)->id :
				"";
		twl_log(LOG_WARNING,
			"bpf: the kernel warned about %s but the probes counted no use of it; "
			"usage for it is incomplete (see health.probe_missing)",
			feature);
	}
}

static struct twl_bpf *open_bpf(const struct twl_config *cfg)
{
	struct twl_bpf_cfg bc;
	struct twl_bpf *b;

	memset(&bc, 0, sizeof(bc));
	bc.enable = cfg->bpf;
	if (twl_privacy_parse(cfg->privacy_cgroup, &bc.privacy.cgroup) ||
	    twl_privacy_parse(cfg->privacy_comm, &bc.privacy.comm)) {
		twl_log(LOG_ERR,
			"bad privacy-cgroup/privacy-comm (check with --check-config)");
		return NULL;
	}
	bc.privacy.key = cfg->privacy_key;
	b = twl_bpf_open(&bc);
	if (!b)
		twl_log(LOG_ERR, "bpf: cannot set up usage counters: %s",
			strerror(errno));
	else if (cfg->bpf && !twl_bpf_active(b))
		twl_log(LOG_WARNING,
			"bpf: no probe could be attached; usage is not counted "
			"(health.probes says why), warnings are still reported");
	return b;
}

/* Log news about data loss once per change. */
static void log_news(struct agent *a)
{
	struct twl_pump_stats ps;

	twl_pump_stats(a->pump, &ps);
	if (ps.records_lost > a->logged_lost) {
		twl_log(LOG_WARNING,
			"%llu kernel log records were overwritten before the agent read them "
			"(%llu in total, reported in health.records_lost); a larger log_buf_len= "
			"or a less loaded host avoids this",
			(unsigned long long)(ps.records_lost - a->logged_lost),
			(unsigned long long)ps.records_lost);
		a->logged_lost = ps.records_lost;
	}
	if (ps.parse_failures > a->logged_parse) {
		twl_log(LOG_WARNING,
			"%llu kernel log records could not be parsed (%llu in total); if the input "
			"is a file, check its format (/dev/kmsg records or dmesg output)",
			(unsigned long long)(ps.parse_failures -
					     a->logged_parse),
			(unsigned long long)ps.parse_failures);
		a->logged_parse = ps.parse_failures;
	}
	if (ps.state_save_failures > a->logged_state_fail) {
		twl_log(LOG_ERR,
			"cannot save the agent state in %s: %s; after a restart some records may "
			"be sent twice: check that the directory is writable and not full",
			a->cfg.state_dir, strerror(-ps.last_state_error));
		a->logged_state_fail = ps.state_save_failures;
	}
}

static int flush(struct agent *a, bool force)
{
	int ret = twl_pump_flush(a->pump, force);

	if (ret < 0)
		twl_log(LOG_ERR,
			"cannot store a batch in the spool %s: %s; the records stay unread and "
			"are retried (check free space and permissions)",
			a->cfg.spool_dir, strerror(-ret));
	log_news(a);
	return ret;
}

/* Run the sender; returns ms until it wants to run again. */
static uint64_t run_sender(struct agent *a, int budget_ms)
{
	int i, ret = 0;

	for (i = 0; i < 8; i++) {
		ret = twl_sender_run_once(a->sender, budget_ms);
		if (ret != 0)
			break;
	}
	if (ret < 0) {
		twl_log(LOG_ERR,
			"spool %s: %s; check the directory (retrying in 60 s)",
			a->cfg.spool_dir, strerror(-ret));
		return 60000;
	}
	return ret ? (uint64_t)ret : 1000;
}

static int reload(struct agent *a)
{
	struct twl_config next;
	struct twl_sender *s;

	if (load_config(&a->o, &next, true)) {
		twl_log(LOG_ERR,
			"reload: %s has errors (listed above); keeping the running "
			"config",
			a->o.config);
		twl_config_fini(&next);
		return -EINVAL;
	}
	if (strcmp(next.kmsg_path, a->cfg.kmsg_path) ||
	    strcmp(next.state_dir, a->cfg.state_dir))
		twl_log(LOG_NOTICE,
			"reload: kmsg-path and state-dir changes take effect only "
			"after a restart");
	s = make_sender(&next, &a->id);
	if (!s) {
		twl_config_fini(&next);
		return -EINVAL;
	}
	twl_sender_free(a->sender);
	a->sender = s;
	/* Keep the paths in use; take everything else. */
	free(next.kmsg_path);
	next.kmsg_path = a->cfg.kmsg_path;
	a->cfg.kmsg_path = NULL;
	free(next.state_dir);
	next.state_dir = a->cfg.state_dir;
	a->cfg.state_dir = NULL;
	twl_config_fini(&a->cfg);
	a->cfg = next;
	twl_log_init("twilight-agent", a->cfg.log_level);
	twl_log(LOG_INFO, "reloaded %s", a->o.config);
	return 0;
}

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/*
 * Drop capabilities once the privileged work is done: /dev/kmsg is open
 * and the BPF programs are attached. Only CAP_BPF is kept, and only while
 * BPF is in use: with unprivileged BPF disabled (Debian's default) every
 * bpf() call, map reads through an open fd included, needs it. Nothing
 * else later (reload, delivery, census, state) needs a capability, so the
 * network-facing part runs without them. Failure is logged, not fatal.
 */
static void drop_capabilities(bool keep_bpf)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (keep_bpf) {
		data[CAP_BPF / 32].effective = 1u << (CAP_BPF % 32);
		data[CAP_BPF / 32].permitted = 1u << (CAP_BPF % 32);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		twl_log(LOG_WARNING, "cannot clear ambient capabilities: %s",
			strerror(errno));
	if (syscall(SYS_capset, &hdr, data) < 0)
		twl_log(LOG_WARNING,
			"cannot drop capabilities: %s; continuing with them",
			strerror(errno));
	else
		twl_log(LOG_DEBUG, "capabilities dropped%s",
			keep_bpf ? " except CAP_BPF" : "");
}

static int setup_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int daemon_main(struct opts *o)
{
	struct twl_identity_cfg ic;
	struct twl_pump_cfg pc;
	struct twl_state st;
	uint64_t now, next_batch, next_send, next_census, last_batch;
	uint64_t sent_lost = 0, src_retry_at = 0;
	struct agent a;
	int ret, rc = 1;
	bool stop = false;

	memset(&a, 0, sizeof(a));
	a.o = *o;
	/*
	 * Block SIGTERM/SIGINT/SIGHUP first thing: a signal that arrives while
	 * the agent is still starting (identity, state and BPF setup can take
	 * seconds on a slow host) waits in the signalfd instead of killing it
	 * silently with the default action.
	 */
	a.sfd = setup_signals();
	if (a.sfd < 0) {
		twl_log(LOG_ERR, "cannot set up signal handling: %s",
			strerror(errno));
		return 1;
	}
	if (load_config(o, &a.cfg, true)) {
		close(a.sfd);
		return 1;
	}
	twl_log_init("twilight-agent", a.cfg.log_level);
	identity_cfg(&a.cfg, false, &ic);
	ret = twl_identity_load(&ic, &a.id);
	if (ret) {
		twl_log(LOG_ERR,
			"cannot determine the host identity: %s (boot id %s, state "
			"dir %s)",
			strerror(-ret), a.cfg.boot_id_path, a.cfg.state_dir);
		goto out;
	}
	ret = twl_state_load(a.cfg.state_dir, &st);
	if (ret) {
		twl_log(LOG_ERR,
			"state file %s/%s unreadable (%s); starting afresh: this boot's "
			"warnings may be sent again",
			a.cfg.state_dir, TWL_STATE_FILE, strerror(-ret));
		memset(&st, 0, sizeof(st));
	}
	if (o->kmsg_file) {
		/*
		 * A dump file's sequence numbers belong to the boot it was saved
		 * on, not this one: resume per file (keyed by its real path), so
		 * that neither position is applied to the other's records.
		 */
		char real[PATH_MAX], key[PATH_MAX + 16], hex[65];

		if (!realpath(o->kmsg_file, real))
			snprintf(real, sizeof(real), "%s", o->kmsg_file);
		snprintf(key, sizeof(key), "kmsg-file\n%s", real);
		twl_sha256_hex(key, strlen(key), hex);
		twl_state_for_boot(&st, hex);
	} else {
		twl_state_for_boot(&st, a.id.boot_id);
	}
	if (open_source(o->kmsg_file ? o->kmsg_file : a.cfg.kmsg_path, &a.src))
		goto out;
	/* BPF before the network: privileged setup first (loads only if bpf = true). */
	a.bpf = open_bpf(&a.cfg);
	if (!a.bpf)
		goto out;
	drop_capabilities(a.cfg.bpf && twl_bpf_active(a.bpf));
	a.sender = make_sender(&a.cfg, &a.id);
	if (!a.sender)
		goto out;
	memset(&pc, 0, sizeof(pc));
	pc.id = &a.id;
	pc.state_dir = a.cfg.state_dir;
	pc.sink = sender_sink;
	pc.sink_ctx = &a;
	pc.sender_health = sender_health;
	pc.sender_ctx = &a;
	pc.collect_usage = bpf_collect;
	pc.health_extra = bpf_health;
	pc.on_warning = bpf_warning;
	pc.hook_ctx = &a;
	a.pump = twl_pump_new(&pc, &st);
	if (!a.pump)
		goto out;
	twl_pump_set_source(a.pump, a.src);
	twl_log(LOG_INFO,
		"started: host %s, boot %s, cgroup mode %s, resuming %s",
		a.id.host_id, a.id.boot_id, a.id.cgroup_mode,
		st.have_last_seq ? "after the saved kmsg position" :
				   "from the oldest record");

	if (!o->kmsg_file)
		twl_pump_set_census(a.pump, take_census(&a.cfg));
	now = mono_ms();
	last_batch = now;
	next_batch = now; /* first batch (census) right away */
	next_send = now;
	next_census = now + (uint64_t)a.cfg.census_interval_s * 1000;

	while (!stop) {
		struct pollfd pfd[2] = {
			{ .fd = a.sfd, .events = POLLIN },
			{ .fd = a.src_eof || mono_ms() < src_retry_at ?
					-1 :
					twl_kmsg_source_fd(a.src),
			  .events = POLLIN },
		};
		uint64_t wake = next_batch < next_send ? next_batch : next_send;
		int timeout;

		now = mono_ms();
		timeout = wake <= now ?
				  0 :
				  (wake - now > INT_MAX ? INT_MAX :
							  (int)(wake - now));
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			twl_log(LOG_ERR, "poll: %s", strerror(errno));
			goto out;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(a.sfd, &si, sizeof(si)) ==
			       (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					if (!reload(&a)) {
						if (!o->kmsg_file)
							twl_pump_set_census(
								a.pump,
								take_census(
									&a.cfg));
						next_batch = mono_ms();
					}
				} else {
					stop = true;
				}
			}
		}
		if (!a.src_eof && (pfd[1].revents || stop)) {
			ret = twl_pump_drain(a.pump);
			if (ret == -ENODATA) {
				a.src_eof = true;
				stop = true; /* a dump file or FIFO was read through */
			} else if (ret < 0) {
				/* Do not spin on an fd that keeps failing. */
				src_retry_at =
					mono_ms() +
					(uint64_t)a.cfg.batch_interval_s * 1000;
				twl_log(LOG_ERR,
					"reading %s failed: %s; retrying at the next batch",
					o->kmsg_file ? o->kmsg_file :
						       a.cfg.kmsg_path,
					strerror(-ret));
			}
			log_news(&a);
		}
		now = mono_ms();
		if (now >= next_census) {
			twl_pump_set_census(a.pump, take_census(&a.cfg));
			next_census =
				now + (uint64_t)a.cfg.census_interval_s * 1000;
		}
		if (now >= next_batch || stop) {
			struct twl_pump_stats ps;
			bool force;

			/*
			 * Heartbeat due, or records lost that the server has not
			 * heard of (parse failures wait for the next batch).
			 */
			twl_pump_stats(a.pump, &ps);
			force = now - last_batch >=
					(uint64_t)a.cfg.heartbeat_interval_s *
						1000 ||
				ps.records_lost != sent_lost;
			ret = flush(&a, force);
			if (ret > 0) {
				last_batch = now;
				next_send = now;
				sent_lost = ps.records_lost;
			}
			next_batch =
				now + (uint64_t)a.cfg.batch_interval_s * 1000;
		}
		if (now >= next_send || stop) {
			next_send =
				mono_ms() + run_sender(&a, stop ? 2000 : 10000);
		}
	}
	twl_log(LOG_INFO, "stopping: pending records are in the spool %s",
		a.cfg.spool_dir);
	rc = 0;
out:
	twl_pump_free(a.pump);
	twl_bpf_free(a.bpf);
	twl_sender_free(a.sender);
	twl_kmsg_source_free(a.src);
	if (a.sfd >= 0)
		close(a.sfd);
	twl_config_fini(&a.cfg);
	return rc;
}

static int check_config(struct opts *o)
{
	struct twl_config cfg;
	int ret;

	ret = load_config(o, &cfg, true);
	twl_config_fini(&cfg);
	if (ret) {
		fprintf(stderr, "%s: configuration has errors (listed above)\n",
			o->config);
		return 1;
	}
	printf("%s: configuration OK\n", o->config);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	twl_log_init("twilight-agent", LOG_INFO);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 2 : 0;
	if (o.check_config)
		return check_config(&o);
	if (o.dry_run)
		return dry_run(&o);
	return daemon_main(&o);
}
