// SPDX-License-Identifier: GPL-2.0
/* The agent's option tables and its checks across options (see config.h). */
#include "config.h"
#include "journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <twilight/wire.h>

#define DAY (24u * 3600u)
#define OPT(f) TWL_CFG_FIELD(struct twl_config, f)
#define CLI(f) TWL_CFG_FIELD(struct twl_agent_cli, f)
#define PRIVACY "keep|hash|drop"

const struct twl_cfg_opt twl_config_options[] = {
	{ .name = "server-url",
	  .alias = "server_url",
	  .type = TWL_CFG_URL,
	  OPT(server_url),
	  .flags = TWL_CFG_REQUIRED,
	  .example = "https://twilight.example.org:8443",
	  .help = "Base URL of the twilight server, https only, e.g. "
		  "https://twilight.example.org:8443." },
	{ .name = "ca-file",
	  .alias = "ca_file",
	  .type = TWL_CFG_PATH,
	  OPT(ca_file),
	  .flags = TWL_CFG_REQUIRED,
	  .example = "/etc/twilight/ca.pem",
	  .help = "PEM file with the CA certificate(s) the server's certificate "
		  "must chain to; for a server with its generated CA, a copy of "
		  "its /var/lib/twilight/ca.pem. Verification cannot be switched "
		  "off." },
	{ .name = "client-cert",
	  .alias = "client_cert",
	  .type = TWL_CFG_PATH,
	  OPT(client_cert),
	  .help = "Optional PEM client certificate presented to the server "
		  "(needs client-key); for a server that sets client-ca." },
	{ .name = "client-key",
	  .alias = "client_key",
	  .type = TWL_CFG_PATH,
	  OPT(client_key),
	  .help = "PEM private key for client-cert." },
	{ .name = "enroll-token-file",
	  .alias = "enroll_token_file",
	  .type = TWL_CFG_PATH,
	  OPT(enroll_token_file),
	  .example = "/etc/twilight/enroll.token",
	  .help = "File holding the fleet's enrolment token (an agent token of "
		  "the server), used on first contact to obtain the per-host "
		  "key; not needed once the host key exists." },
	{ .name = "state-dir",
	  .alias = "state_dir",
	  .type = TWL_CFG_PATH,
	  .def = "/var/lib/twilight-agent",
	  OPT(state_dir),
	  .flags = TWL_CFG_REQUIRED,
	  .help = "Directory for the agent's state: kernel log position per "
		  "boot, batch sequence, host id, host key." },
	{ .name = "spool-dir",
	  .alias = "spool_dir",
	  .type = TWL_CFG_PATH,
	  .def = "/var/lib/twilight-agent/spool",
	  OPT(spool_dir),
	  .flags = TWL_CFG_REQUIRED,
	  .help = "Directory where batches wait until the server accepted them "
		  "(created if missing; inside state-dir by default so that "
		  "systemd's StateDirectory= covers it)." },
	{ .name = "spool-max-bytes",
	  .alias = "spool_max_bytes",
	  .type = TWL_CFG_SIZE,
	  .def = "64M",
	  OPT(spool_max_bytes),
	  .min = 64 * 1024,
	  .max = 1ULL << 40,
	  .help = "Spool size cap; beyond it the oldest batches are dropped and "
		  "counted." },
	{ .name = "spool-max-age",
	  .alias = "spool_max_age",
	  .type = TWL_CFG_SECONDS,
	  .def = "30d",
	  OPT(spool_max_age_s),
	  .min = 3600,
	  .max = TWL_WIRE_RESEND_DAYS * DAY,
	  .help = "Batches older than this are dropped from the spool and "
		  "counted. At most 35d: the server keeps batch ids that long "
		  "(its batch-days, at least 35), so every resend is known as "
		  "one." },
	{ .name = "batch-interval",
	  .alias = "batch_interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "30s",
	  OPT(batch_interval_s),
	  .min = 1,
	  .max = 3600,
	  .help = "How long records are collected before a batch is spooled." },
	{ .name = "heartbeat-interval",
	  .alias = "heartbeat_interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "1h",
	  OPT(heartbeat_interval_s),
	  .min = 60,
	  .max = 7 * DAY,
	  .help = "A batch with only health information is sent when nothing "
		  "else was sent for this long." },
	{ .name = "census-interval",
	  .alias = "census_interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "24h",
	  OPT(census_interval_s),
	  .min = 300,
	  .max = 30 * DAY,
	  .help = "How often the cgroup census is taken (also at start and on "
		  "SIGHUP)." },
	{ .name = "catalog-interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "1h",
	  OPT(catalog_interval_s),
	  .min = 1,
	  .max = 7 * DAY,
	  .help = "How often the agent asks the server for a newer deprecation "
		  "catalog (also at start). A newer one is checked, kept in "
		  "state-dir as catalog.json and used at once, without a "
		  "restart." },
	{ .name = "census-max-cgroups",
	  .alias = "census_max_cgroups",
	  .type = TWL_CFG_UINT,
	  .def = "10000",
	  OPT(census_max_cgroups),
	  .min = 1,
	  .max = 1000000,
	  .help = "The census examines at most this many memory cgroups." },
	{ .name = "census-max-time",
	  .alias = "census_max_time",
	  .type = TWL_CFG_MILLIS,
	  .def = "2s",
	  OPT(census_max_ms),
	  .min = 10,
	  .max = 60000,
	  .help = "The census stops walking cgroups after this long." },
	{ .name = "backoff-base",
	  .alias = "backoff_base",
	  .type = TWL_CFG_MILLIS,
	  .def = "1s",
	  OPT(backoff_base_ms),
	  .min = 100,
	  .max = 3600000,
	  .help = "First retry delay after a failed delivery; it doubles, with "
		  "full jitter." },
	{ .name = "backoff-cap",
	  .alias = "backoff_cap",
	  .type = TWL_CFG_MILLIS,
	  .def = "15m",
	  OPT(backoff_cap_ms),
	  .min = 1000,
	  .max = 86400000,
	  .help = "Longest retry delay (a server's Retry-After may ask for "
		  "more)." },
	{ .name = "connect-timeout",
	  .alias = "connect_timeout",
	  .type = TWL_CFG_MILLIS,
	  .def = "10s",
	  OPT(connect_timeout_ms),
	  .min = 100,
	  .max = 600000,
	  .help = "TCP and TLS connect timeout." },
	{ .name = "timeout",
	  .type = TWL_CFG_MILLIS,
	  .def = "30s",
	  OPT(timeout_ms),
	  .min = 1000,
	  .max = 3600000,
	  .help = "Whole-request timeout." },
	{ .name = "kmsg-path",
	  .alias = "kmsg_path",
	  .type = TWL_CFG_PATH,
	  .def = "/dev/kmsg",
	  OPT(kmsg_path),
	  .help = "Kernel log device (a dump file or FIFO also works; see "
		  "--kmsg-file)." },
	{ .name = "journal",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(journal),
	  .help = "Also read the kernel's records from the systemd journal, "
		  "where they stay after /dev/kmsg overwrote them: this boot's "
		  "on start and every journal-interval, and once the earlier "
		  "boots the journal still holds (journal-boots). Needs read "
		  "access to the journal (the unit adds the systemd-journal "
		  "group); a host without journal files simply has nothing to "
		  "read. The live source stays /dev/kmsg; a warning seen by "
		  "both is sent once. Not used with --kmsg-file." },
	{ .name = "journal-boots",
	  .type = TWL_CFG_UINT,
	  .def = "8",
	  OPT(journal_boots),
	  .min = 0,
	  .max = TWL_JOURNAL_MAX_BOOTS - 1,
	  .help = "Earlier boots read from the journal once, newest first, the "
		  "first time the agent reads it (0: this boot only)." },
	{ .name = "journal-interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "15m",
	  OPT(journal_interval_s),
	  .min = 10,
	  .max = DAY,
	  .help = "How often the journal is read again for this boot's records "
		  "that /dev/kmsg lost (overwritten before they were read); "
		  "each read starts where the last one stopped." },
	{ .name = "journal-dir",
	  .type = TWL_CFG_PATH,
	  OPT(journal_dir),
	  .help = "Directory holding the journal, as <machine-id>/system*.journal "
		  "files; unset: /var/log/journal and /run/log/journal. Only "
		  "this machine's directory is read (not remote/ or containers')." },
	{ .name = "cgroup-root",
	  .alias = "cgroup_root",
	  .type = TWL_CFG_PATH,
	  .def = "/sys/fs/cgroup",
	  OPT(cgroup_root),
	  .help = "Only cgroup mounts at or below this path are taken into the "
		  "census." },
	{ .name = "mountinfo",
	  .type = TWL_CFG_PATH,
	  .def = "/proc/self/mountinfo",
	  OPT(mountinfo),
	  .help = "Mount table the census reads to find cgroup hierarchies." },
	{ .name = "boot-id-path",
	  .alias = "boot_id_path",
	  .type = TWL_CFG_PATH,
	  .def = "/proc/sys/kernel/random/boot_id",
	  OPT(boot_id_path),
	  .help = "File holding this boot's id (kernel log sequence numbers "
		  "restart each boot)." },
	{ .name = "machine-id-path",
	  .alias = "machine_id_path",
	  .type = TWL_CFG_PATH,
	  .def = "/etc/machine-id",
	  OPT(machine_id_path),
	  .help = "Machine id hashed into the host id; when missing or empty a "
		  "random id is kept in state-dir." },
	{ .name = "host-id-key",
	  .alias = "host_id_key",
	  .type = TWL_CFG_STRING,
	  .def = "twilight-agent",
	  OPT(host_id_key),
	  .help = "Application key hashed with the machine id, so the host id "
		  "reveals nothing else about the machine." },
	{ .name = "send-hostname",
	  .alias = "send_hostname",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(send_hostname),
	  .help = "Send the host name; false sends an empty name (the host id "
		  "still tells hosts apart)." },
	{ .name = "labels",
	  .type = TWL_CFG_LIST,
	  TWL_CFG_LIST_FIELD(struct twl_config, labels.item, labels.n),
	  .flags = TWL_CFG_KV,
	  .arg = "NAME=VALUE",
	  .help = "Labels of this host, sent with every report (host.labels) "
		  "so that the server can group and filter hosts by them: "
		  "name=value items, comma-separated or one per repeated key, "
		  "at most 16, e.g. team=payments,env=prod. A name is 1 to 32 "
		  "bytes, a lowercase letter or digit, then lowercase letters, "
		  "digits, '_', '.' or '-'; a value is 1 to 64 bytes of letters, "
		  "digits and _ . : / @ + -; each name once." },
	{ .name = "log-level",
	  .alias = "log_level",
	  .type = TWL_CFG_CHOICE,
	  .def = "info",
	  OPT(log_level),
	  .min = LOG_ERR,
	  .choices = "err|warning|notice|info|debug",
	  .help = "Least important messages logged: err, warning, notice, info "
		  "or debug." },
	{ .name = "bpf",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(bpf),
	  .help = "Load the BPF usage counters, which count every use of a "
		  "deprecated knob with the process, user and cgroups that made "
		  "it (needs CAP_BPF and CAP_PERFMON, which the unit grants, and a "
		  "kernel with BTF). Off unless set, in the package too: nothing "
		  "loads BPF by accident or on install; without it features "
		  "that never warn are not measured. Turn it on for a canary "
		  "group, then fleet-wide (operator's guide)." },
	{ .name = "require-cap-drop",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(require_cap_drop),
	  .help = "Started with capabilities (by root, say), the agent gives "
		  "them all up once the kernel log is open and BPF is set up, "
		  "keeping CAP_BPF only while BPF probes are attached; when that "
		  "fails it exits 1. Turn this off only where a sandbox forbids "
		  "capset(2) but the capabilities are harmless: the agent then "
		  "runs with them, and says so." },
	{ .name = "container-images",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(container_images),
	  .help = "Name the image of a writer's container in the BPF usage "
		  "records, read from the runtime's own state where the agent "
		  "may read it (Docker's containers/ID/config.v2.json, the CRI "
		  "annotations in containerd's and CRI-O's OCI bundles). Off "
		  "unless set: image names say much about a site (the server's "
		  "export withholds them unless export-show-images). Read at "
		  "start." },
	{ .name = "privacy-cgroup",
	  .alias = "privacy_cgroup",
	  .type = TWL_CFG_CHOICE,
	  .def = "keep",
	  OPT(privacy_cgroup),
	  .choices = PRIVACY,
	  .help = "Cgroup paths and container ids in the BPF usage records: "
		  "keep, hash (keyed with privacy-key) or drop." },
	{ .name = "privacy-comm",
	  .alias = "privacy_comm",
	  .type = TWL_CFG_CHOICE,
	  .def = "keep",
	  OPT(privacy_comm),
	  .choices = PRIVACY,
	  .help = "Process names in the BPF usage records: keep, hash (keyed "
		  "with privacy-key) or drop." },
	{ .name = "privacy-key",
	  .alias = "privacy_key",
	  .type = TWL_CFG_STRING,
	  OPT(privacy_key),
	  .flags = TWL_CFG_SECRET,
	  .help = "Secret mixed into hashed names so that they cannot be "
		  "guessed back; required when privacy-cgroup or privacy-comm is "
		  "hash. Keep it the same on all hosts to compare hashed names "
		  "across the fleet." },
};

const size_t twl_config_n_options =
	sizeof(twl_config_options) / sizeof(twl_config_options[0]);

#define CLI_ONLY (TWL_CFG_CLI | TWL_CFG_EARLY)
#define SWITCH (CLI_ONLY | TWL_CFG_SWITCH)

const struct twl_cfg_opt twl_agent_cli_options[] = {
	{ .name = "config",
	  .short_name = 'c',
	  .type = TWL_CFG_STRING,
	  .def = TWL_AGENT_DEFAULT_CONFIG,
	  CLI(config),
	  .flags = CLI_ONLY,
	  .arg = "FILE",
	  .help = "Read the configuration from FILE." },
	{ .name = "check-config",
	  .type = TWL_CFG_BOOL,
	  CLI(check_config),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Check the configuration, name every bad value, check that "
		  "the files and directories it names exist (the spool "
		  "directory may be missing if it can be created), print "
		  "\"FILE: configuration OK\" and exit 0, or list the errors and "
		  "exit 1." },
	{ .name = "dry-run",
	  .type = TWL_CFG_BOOL,
	  CLI(dry_run),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Read what the kernel log holds now (or the file given with "
		  "--kmsg-file), build the one report that would be sent, "
		  "validate it against the wire format and print it as "
		  "indented JSON on standard output; a summary line goes to "
		  "standard error. Nothing is sent and nothing is written. Needs "
		  "no configuration file, server, token or root privileges "
		  "(reading /dev/kmsg needs CAP_SYSLOG when "
		  "kernel.dmesg_restrict is 1); without -c the built-in defaults "
		  "are used. The census is left out when reading a dump file, "
		  "since it would describe this machine rather than the dump's. "
		  "If the input holds more than one batch, only the first is "
		  "printed." },
	{ .name = "kmsg-file",
	  .type = TWL_CFG_STRING,
	  CLI(kmsg_file),
	  .flags = CLI_ONLY,
	  .arg = "FILE",
	  .help = "Read FILE instead of /dev/kmsg: a saved kernel log in any "
		  "of these forms, detected from its first lines: a dump of "
		  "/dev/kmsg records; dmesg, dmesg -t, -r or -x output; "
		  "journalctl -k output (short, short-iso, short-precise, "
		  "short-monotonic, -o json, -o export); an RFC 3164 or RFC "
		  "5424 syslog file such as kern.log (gzip-compressed rotated "
		  "files too). Only the kernel's own lines count; a line that "
		  "cannot be placed is a parse failure, named with its line "
		  "number. Records of other boots (journal JSON and export name "
		  "theirs) are reported with their own boot and kernel. A FIFO "
		  "carries /dev/kmsg records or dmesg lines. Without --dry-run, "
		  "the agent spools and delivers what the file holds and exits "
		  "when it is read through." },
	{ .name = "print-config",
	  .type = TWL_CFG_BOOL,
	  CLI(print_config),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print a commented example configuration with every key and "
		  "its default on standard output and exit 0. The packaged "
		  "/etc/twilight/agent.conf was generated this way." },
	{ .name = "help",
	  .short_name = 'h',
	  .type = TWL_CFG_BOOL,
	  CLI(help),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print the options and every configuration key with its type, "
		  "default and meaning, and exit 0." },
	{ .name = "version",
	  .type = TWL_CFG_BOOL,
	  CLI(version),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print the version and the wire format version, and exit 0." },
};

const size_t twl_agent_cli_n_options =
	sizeof(twl_agent_cli_options) / sizeof(twl_agent_cli_options[0]);

/* Contract: see config.h. */
int twl_config_init(struct twl_config *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	ret = twl_cfg_defaults(twl_config_options, twl_config_n_options, c);
	if (ret)
		twl_config_fini(c);
	return ret ? -ENOMEM : 0; /* the defaults are valid: only ENOMEM */
}

/* Contract: see config.h. */
void twl_config_fini(struct twl_config *c)
{
	twl_cfg_free_fields(twl_config_options, twl_config_n_options, c);
}

/* Contract: see config.h. */
struct twl_cfg *twl_config_session(struct twl_config *c,
				   struct twl_agent_cli *cli)
{
	struct twl_cfg *p = twl_cfg_new("twilight-agent");

	if (!p)
		return NULL;
	if (twl_cfg_add(p, twl_agent_cli_options, twl_agent_cli_n_options,
			cli) ||
	    twl_cfg_add(p, twl_config_options, twl_config_n_options, c)) {
		twl_cfg_free(p);
		errno = E2BIG;
		return NULL;
	}
	return p;
}

static void check_file(struct twl_cfg *p, const char *key, const char *path,
		       bool want_dir)
{
	struct stat st;

	if (!path)
		return;
	if (stat(path, &st) < 0)
		twl_cfg_error(p, key, "%s: %s", path, strerror(errno));
	else if (want_dir && !S_ISDIR(st.st_mode))
		twl_cfg_error(p, key, "%s is not a directory", path);
	else if (!want_dir && S_ISDIR(st.st_mode))
		twl_cfg_error(p, key, "%s is a directory, expected a file",
			      path);
	else if (access(path, want_dir ? (R_OK | W_OK | X_OK) : R_OK) < 0)
		twl_cfg_error(p, key, "%s: %s for this user", path,
			      strerror(errno));
}

/* The spool dir is created by the agent: it, or else its parent, must be usable. */
static void check_spool_dir(struct twl_cfg *p, const char *path)
{
	char parent[4096], *slash;

	if (!path)
		return;
	if (access(path, F_OK) == 0) {
		check_file(p, "spool-dir", path, true);
		return;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), "/");
	if (access(parent, W_OK | X_OK) < 0)
		twl_cfg_error(
			p, "spool-dir",
			"%s does not exist and cannot be created in %s: %s",
			path, parent, strerror(errno));
}

static bool hashes(const char *privacy)
{
	return privacy && !strcmp(privacy, "hash");
}

/* Contract: see config.h. */
int twl_config_validate(const struct twl_config *c, bool check_files,
			struct twl_cfg *p)
{
	size_t before = p->n_errors;
	char why[256];

	twl_cfg_check(p);
	if (!!c->client_cert != !!c->client_key)
		twl_cfg_error(
			p, c->client_cert ? "client-key" : "client-cert",
			"client-cert and client-key must be set together");
	if (c->backoff_base_ms > c->backoff_cap_ms)
		twl_cfg_error(p, "backoff-base",
			      "%u ms is larger than backoff-cap (%u ms)",
			      c->backoff_base_ms, c->backoff_cap_ms);
	if ((hashes(c->privacy_cgroup) || hashes(c->privacy_comm)) &&
	    (!c->privacy_key || !*c->privacy_key))
		twl_cfg_error(
			p, "privacy-key",
			"required when privacy-cgroup or privacy-comm is hash "
			"(an unkeyed hash of a name is easy to reverse)");
	if (c->state_dir && c->spool_dir && !strcmp(c->state_dir, c->spool_dir))
		twl_cfg_error(p, "spool-dir", "must differ from state-dir");
	if (twl_labels_check(&c->labels, why, sizeof(why)) >= 0)
		twl_cfg_error(p, "labels", "%s", why);
	if (check_files) {
		check_file(p, "ca-file", c->ca_file, false);
		check_file(p, "client-cert", c->client_cert, false);
		check_file(p, "client-key", c->client_key, false);
		check_file(p, "enroll-token-file", c->enroll_token_file, false);
		check_file(p, "state-dir", c->state_dir, true);
		check_spool_dir(p, c->spool_dir);
	}
	return p->n_errors != before ? -EINVAL : 0;
}

/* Contract: see config.h. */
void twl_config_print_help(FILE *f)
{
	fprintf(f, "Options:\n");
	twl_cfg_print_flags(f, twl_agent_cli_options, twl_agent_cli_n_options);
	fprintf(f,
		"\nConfiguration options (key = value in the config file; each also as\n"
		"--key value on the command line, which overrides the file):\n");
	twl_cfg_print_keys(f, twl_config_options, twl_config_n_options);
}

/* Contract: see config.h. */
void twl_config_print_example(FILE *f)
{
	fprintf(f,
		"# twilight-agent configuration (generated by twilight-agent --print-config).\n"
		"# Format: key = value; '#' starts a comment. Durations take s, m, h, d\n"
		"# (and ms); sizes take K, M, G. Check with: twilight-agent --check-config\n");
	twl_cfg_print_example(f, twl_config_options, twl_config_n_options);
}

/* Contract: see config.h. */
void twl_config_print_man(FILE *f, bool flags)
{
	if (flags)
		twl_cfg_print_man(f, twl_agent_cli_options,
				  twl_agent_cli_n_options, true);
	else
		twl_cfg_print_man(f, twl_config_options, twl_config_n_options,
				  false);
}
