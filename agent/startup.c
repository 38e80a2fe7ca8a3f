// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up shared by the daemon and the dry run (startup.h): privileged
 * work first (kernel log, BPF), then capabilities are dropped before
 * anything talks to the network.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "catalog_update.h"
#include "census.h"
#include "container_image.h"
#include "hooks.h"
#include "startup.h"
#include "state.h"

/* Contract: see startup.h. */
const char *twl_agent_kmsg_path(const struct twl_agent *a)
{
	return a->o->kmsg_file ? a->o->kmsg_file : a->cfg.kmsg_path;
}

/* Contract: see startup.h. */
json_t *twl_agent_census(const struct twl_config *cfg)
{
	struct twl_census_cfg cc = {
		.cgroup_root = cfg->cgroup_root,
		.mountinfo = cfg->mountinfo,
		.max_cgroups = cfg->census_max_cgroups,
		.max_ms = cfg->census_max_ms,
	};
	json_t *c;
	int err = 0;

	c = twl_census_take(&cc, (int64_t)time(NULL), &err);
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

/* Contract: see startup.h. */
struct twl_sender *twl_agent_sender(const struct twl_config *cfg,
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

/* The host identity; a dry run creates nothing (read-only). */
static int load_identity(struct twl_agent *a, bool dry_run)
{
	const struct twl_config *cfg = &a->cfg;
	struct twl_identity_cfg ic = {
		.machine_id_path = cfg->machine_id_path,
		.boot_id_path = cfg->boot_id_path,
		.host_id_key = cfg->host_id_key,
		.state_dir = cfg->state_dir,
		.read_only = dry_run,
		.mountinfo = cfg->mountinfo,
		.cgroup_root = cfg->cgroup_root,
		.send_hostname = cfg->send_hostname,
		.labels = &cfg->labels,
	};
	int ret = twl_identity_load(&ic, &a->id);

	if (!ret)
		return 0;
	if (dry_run)
		twl_log(LOG_ERR,
			"cannot determine the host identity: %s (boot id from %s)",
			strerror(-ret), cfg->boot_id_path);
	else
		twl_log(LOG_ERR,
			"cannot determine the host identity: %s (boot id %s, state "
			"dir %s)",
			strerror(-ret), cfg->boot_id_path, cfg->state_dir);
	return -1;
}

/*
 * The saved state, adapted to what is read: this boot's kernel log, or a
 * dump file. A dump file's sequence numbers belong to the boot it was
 * saved on, not this one: resume per file (keyed by its real path), so
 * that neither position is applied to the other's records.
 */
static void load_state(struct twl_agent *a, struct twl_state *st)
{
	char real[PATH_MAX], key[PATH_MAX + 16], hex[65];
	const char *file = a->o->kmsg_file;
	int ret = twl_state_load(a->cfg.state_dir, st);

	if (ret) {
		twl_log(LOG_ERR,
			"state file %s/%s unreadable (%s); starting afresh: this boot's "
			"warnings may be sent again",
			a->cfg.state_dir, TWL_STATE_FILE, strerror(-ret));
		memset(st, 0, sizeof(*st));
	}
	if (!file) {
		twl_state_for_boot(st, a->id.boot_id);
		return;
	}
	if (!realpath(file, real))
		snprintf(real, sizeof(real), "%s", file);
	snprintf(key, sizeof(key), "kmsg-file\n%s", real);
	twl_sha256_hex(key, strlen(key), hex);
	twl_state_for_boot(st, hex);
}

static int open_source(struct twl_agent *a)
{
	const char *path = twl_agent_kmsg_path(a);

	a->src = twl_kmsg_source_open(path);
	if (a->src)
		return 0;
	twl_log(LOG_ERR, "cannot open kernel log %s: %s; %s", path,
		strerror(errno),
		errno == EACCES || errno == EPERM ?
			"run as root or with CAP_SYSLOG (see twilight-agent.service)" :
			"check kmsg-path / --kmsg-file");
	return -1;
}

/* twl_bpf_cfg's image_of: from the agent's cache of runtime state. */
static int image_of(void *ctx, const char *container, char *out, size_t cap)
{
	return twl_image_lookup(ctx, container, out, cap);
}

static int open_bpf(struct twl_agent *a)
{
	const struct twl_config *cfg = &a->cfg;
	struct twl_bpf_cfg bc;

	memset(&bc, 0, sizeof(bc));
	bc.enable = cfg->bpf;
	if (twl_privacy_parse(cfg->privacy_cgroup, &bc.privacy.cgroup) ||
	    twl_privacy_parse(cfg->privacy_comm, &bc.privacy.comm)) {
		twl_log(LOG_ERR,
			"bad privacy-cgroup/privacy-comm (check with --check-config)");
		return -1;
	}
	bc.privacy.key = cfg->privacy_key;
	if (cfg->container_images) {
		a->images = twl_image_cache_new(NULL);
		if (!a->images) {
			twl_log(LOG_ERR, "container-images: out of memory");
			return -1;
		}
		bc.image_of = image_of;
		bc.image_ctx = a->images;
	}
	a->bpf = twl_bpf_open(&bc);
	if (!a->bpf) {
		twl_log(LOG_ERR, "bpf: cannot set up usage counters: %s",
			strerror(errno));
		return -1;
	}
	if (cfg->bpf && !twl_bpf_active(a->bpf) &&
	    !twl_bpf_nothing_to_count(a->bpf))
		twl_log(LOG_WARNING,
			"bpf: no probe could be attached; usage is not counted "
			"(health.probes says why), warnings are still reported");
	return 0;
}

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* glibc's wrappers of the system calls; no libc header declares them. */
int capget(cap_user_header_t hdr, cap_user_data_t data);
int capset(cap_user_header_t hdr, const cap_user_data_t data);

/* Whether @d holds a capability outside @keep (or any inheritable one). */
static bool caps_beyond(const struct __user_cap_data_struct d[2],
			const struct __user_cap_data_struct keep[2])
{
	for (int i = 0; i < 2; i++)
		if ((d[i].effective & ~keep[i].effective) ||
		    (d[i].permitted & ~keep[i].permitted) || d[i].inheritable)
			return true;
	return false;
}

/*
 * Drop capabilities once the privileged work is done: /dev/kmsg is open
 * and the BPF programs are attached. Only CAP_BPF is kept, and only while
 * BPF is in use (@keep_bpf): with unprivileged BPF disabled (Debian's
 * default) every bpf() call, map reads through an open fd included, needs
 * it. Nothing else later (reload, delivery, census, state) needs a
 * capability, so the network-facing part runs without them. Read back
 * after capset(), since a sandbox may pretend. 0 when dropped, 1 when
 * nothing beyond the kept set was held, or -errno with them still held.
 */
static int drop_capabilities(bool keep_bpf)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct keep[2], now[2];

	memset(keep, 0, sizeof(keep));
	memset(now, 0, sizeof(now));
	if (keep_bpf) {
		keep[CAP_BPF / 32].effective = 1u << (CAP_BPF % 32);
		keep[CAP_BPF / 32].permitted = 1u << (CAP_BPF % 32);
	}
	/* EINVAL: a kernel without ambient capabilities has none to clear */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	if (capget(&hdr, now))
		return -errno;
	if (!caps_beyond(now, keep))
		return 1;
	for (int i = 0; i < 2;
	     i++) { /* nothing can be kept that was not there */
		keep[i].effective &= now[i].permitted;
		keep[i].permitted &= now[i].permitted;
	}
	if (capset(&hdr, keep) || capget(&hdr, now))
		return -errno;
	return caps_beyond(now, keep) ? -EPERM : 0;
}

/*
 * Give up the capabilities (drop_capabilities()); when that fails, go on
 * only if require-cap-drop = false allows it. 0 or -1 (logged).
 */
static int give_up_capabilities(const struct twl_agent *a)
{
	bool keep_bpf = a->cfg.bpf && twl_bpf_active(a->bpf);
	int ret = drop_capabilities(keep_bpf);

	if (!ret)
		twl_log(LOG_DEBUG, "capabilities dropped%s",
			keep_bpf ? " except CAP_BPF" : "");
	if (ret >= 0)
		return 0;
	if (!a->cfg.require_cap_drop) {
		twl_log(LOG_WARNING,
			"cannot drop capabilities (%s): running with them, as require-cap-drop = false allows",
			strerror(-ret));
		return 0;
	}
	twl_log(LOG_ERR,
		"cannot drop capabilities (%s): not running with them. Run the agent where capset(2) is allowed (the packaged unit does), or set require-cap-drop = false",
		strerror(-ret));
	return -1;
}

/* The daemon's privileged set-up, then delivery without capabilities. */
static int start_delivery(struct twl_agent *a)
{
	/* BPF before the network: privileged setup first (loads only if bpf = true). */
	if (open_bpf(a) || give_up_capabilities(a))
		return -1;
	a->sender = twl_agent_sender(&a->cfg, &a->id);
	return a->sender ? 0 : -1;
}

/*
 * The journal source, for the daemon on the live kernel log: records of
 * this boot and earlier ones the journal kept. journal.json is per host,
 * like state.json; a dump file given with --kmsg-file is another host's
 * or another time's, so the journal is not read with it.
 */
static int open_journal(struct twl_agent *a, struct twl_pump_cfg *pc)
{
	const struct twl_config *cfg = &a->cfg;
	struct twl_jsource_cfg jc = {
		.state_dir = cfg->state_dir,
		.dir = cfg->journal_dir,
		.machine_id_path = cfg->machine_id_path,
		.boot_id = a->id.boot_id,
		.max_earlier_boots = cfg->journal_boots,
		.step = TWL_AGENT_JOURNAL_STEP,
	};
	struct twl_jsource_stats st;

	if (!cfg->journal || a->o->kmsg_file)
		return 0;
	a->journal = twl_jsource_new(&jc);
	if (!a->journal) {
		twl_log(LOG_ERR, "cannot set up the journal source: %s",
			strerror(errno));
		return -1;
	}
	twl_jsource_stats(a->journal, &st);
	if (st.state_load_error)
		twl_log(LOG_ERR,
			"journal state %s/%s unreadable (%s); reading the journal "
			"afresh: records of it may be sent again",
			cfg->state_dir, TWL_JOURNAL_STATE_FILE,
			strerror(-st.state_load_error));
	pc->on_spooled = twl_jsource_spooled;
	pc->source_health = twl_jsource_health;
	pc->source_ctx = a->journal;
	return 0;
}

/* The catalog kept in the state directory, if newer than the compiled-in one. */
static void load_catalog(struct twl_agent *a)
{
	char err[1200];
	int ret = twl_agent_catalog_load(a->cfg.state_dir, err, sizeof(err));

	if (ret < 0)
		twl_log(LOG_WARNING,
			"not using the kept catalog: %s; matching with catalog version %u until the server sends a newer one",
			err, twl_catalog_version());
	else if (ret == 1)
		twl_log(LOG_INFO, "catalog version %u from %s/%s",
			twl_catalog_version(), a->cfg.state_dir,
			TWL_AGENT_CATALOG_FILE);
}

static int print_sink(void *ctx, const char *json, size_t len)
{
	/* Never called: dry run builds its one document directly. */
	return -EPERM;
}

/* Contract: see startup.h. */
int twl_agent_start(struct twl_agent *a, bool dry_run)
{
	struct twl_pump_cfg pc;
	struct twl_state st;

	memset(&st, 0, sizeof(st));
	memset(&pc, 0, sizeof(pc));
	if (load_identity(a, dry_run))
		return -1;
	if (!dry_run)
		load_state(a, &st);
	load_catalog(a);
	if (open_source(a))
		return -1;
	if (!dry_run && start_delivery(a))
		return -1;
	pc.id = &a->id;
	pc.live = !a->o->kmsg_file;
	if (dry_run) {
		pc.sink = print_sink;
		pc.single_batch = true;
	} else {
		pc.state_dir = a->cfg.state_dir;
		twl_agent_hooks(a, &pc);
		if (open_journal(a, &pc))
			return -1;
	}
	a->pump = twl_pump_new(&pc, &st);
	if (!a->pump) {
		twl_log(LOG_ERR, "cannot set up the record pump: %s",
			strerror(errno));
		return -1;
	}
	twl_pump_set_source(a->pump, a->src);
	if (!dry_run)
		twl_log(LOG_INFO,
			"started: host %s, boot %s, cgroup mode %s, resuming %s",
			a->id.host_id, a->id.boot_id, a->id.cgroup_mode,
			st.have_last_seq ? "after the saved kmsg position" :
					   "from the oldest record");
	/* The census describes this machine: leave it out for an archived dump. */
	if (!a->o->kmsg_file)
		twl_pump_set_census(a->pump, twl_agent_census(&a->cfg));
	return 0;
}

/* Contract: see startup.h. */
void twl_agent_stop(struct twl_agent *a)
{
	twl_pump_free(a->pump);
	twl_jsource_free(a->journal);
	a->journal = NULL;
	twl_bpf_free(a->bpf);
	twl_image_cache_free(a->images);
	a->images = NULL;
	twl_sender_free(a->sender);
	twl_kmsg_source_free(a->src);
	twl_config_fini(&a->cfg);
	a->pump = NULL;
	a->bpf = NULL;
	a->sender = NULL;
	a->src = NULL;
}
