// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration: the server's option tables (config keys, the command
 * line's own flags, token create's) for the engine in common/, and the
 * checks across options.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "config.h"
#include "readiness/target.h"

#define OPT(f) TWL_CFG_FIELD(struct twl_config, f)
#define PKG_WEB_DIR "/usr/share/twilight/web"
#define DAYS_MAX 36500

const struct twl_cfg_opt twl_server_options[] = {
	{ .name = "data-dir",
	  .type = TWL_CFG_STRING,
	  .def = "/var/lib/twilight",
	  OPT(data_dir),
	  .flags = TWL_CFG_CLI | TWL_CFG_EARLY,
	  .arg = "DIR",
	  .help = "Directory for the database, TLS files and tokens (created "
		  "with mode 0700 if missing)." },
	{ .name = "config",
	  .type = TWL_CFG_STRING,
	  OPT(config_file),
	  .flags = TWL_CFG_CLI | TWL_CFG_EARLY,
	  .arg = "FILE",
	  .help = "Configuration file. Default DATA_DIR/twilight-server.conf if "
		  "present; the packaged unit passes /etc/twilight/server.conf. "
		  "An explicit file must exist." },
	{ .name = "listen",
	  .type = TWL_CFG_STRING,
	  .def = "127.0.0.1:8443",
	  OPT(listen),
	  .arg = "ADDR:PORT",
	  .example = "127.0.0.1:8443",
	  .help = "Address and port agents and browsers connect to, e.g. "
		  "127.0.0.1:8443, 0.0.0.0:8443 or [::1]:8443 (port 0 picks a "
		  "free port). The default keeps the server on loopback; for a "
		  "fleet, listen on a routable address and add the name agents "
		  "use in server-url with san." },
	{ .name = "web-dir",
	  .type = TWL_CFG_STRING,
	  .def = PKG_WEB_DIR,
	  OPT(web_dir),
	  .arg = "DIR",
	  .example = PKG_WEB_DIR,
	  .help = "Directory of dashboard files served at /; the package "
		  "installs them there." },
	{ .name = "db",
	  .type = TWL_CFG_STRING,
	  .flags = TWL_CFG_URI,
	  OPT(db_path),
	  .arg = "FILE",
	  .help = "SQLite database (WAL mode). Default DATA_DIR/twilight.db. "
		  "A postgresql:// URI names a PostgreSQL database instead "
		  "(several servers may share it)." },
	{ .name = "check-db",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(check_db),
	  .help = "Check the database's integrity (SQLite's quick_check, which "
		  "reads the whole file once) before serving, and refuse to "
		  "serve a corrupt one (exit status 1, the problem in the log). "
		  "--no-check-db serves it anyway, e.g. to export what is still "
		  "readable." },
	{ .name = "cert",
	  .type = TWL_CFG_STRING,
	  OPT(cert_file),
	  .arg = "FILE",
	  .help = "Server certificate (PEM); generated on first start if "
		  "missing. Default DATA_DIR/server.pem." },
	{ .name = "key",
	  .type = TWL_CFG_STRING,
	  OPT(key_file),
	  .arg = "FILE",
	  .help = "Server private key (PEM). Default DATA_DIR/server.key." },
	{ .name = "ca",
	  .type = TWL_CFG_STRING,
	  OPT(ca_file),
	  .arg = "FILE",
	  .help = "CA certificate agents trust (PEM); generated with its key "
		  "(FILE with .key for .pem) if missing. Default "
		  "DATA_DIR/ca.pem." },
	{ .name = "client-ca",
	  .type = TWL_CFG_STRING,
	  OPT(client_ca_file),
	  .arg = "FILE",
	  .help = "CA that signs optional agent client certificates; empty (the "
		  "default) switches client certificates off." },
	{ .name = "require-client-cert",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(require_client_cert),
	  .help = "Reject reports from agents that present no client "
		  "certificate valid for client-ca. Needs client-ca." },
	{ .name = "tls-priorities",
	  .type = TWL_CFG_STRING,
	  .def = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-MAC-ALL:+AEAD:-RSA",
	  OPT(tls_priorities),
	  .arg = "STRING",
	  .help = "GnuTLS priority string; the default allows TLS 1.2 and 1.3 "
		  "only, and in TLS 1.2 only AEAD ciphers (AES-GCM, "
		  "ChaCha20-Poly1305, AES-CCM; -MAC-ALL:+AEAD) with an ephemeral "
		  "key exchange: no CBC suites with SHA-1 or SHA-2 MACs, no RSA "
		  "key transport (-RSA)." },
	{ .name = "san",
	  .type = TWL_CFG_LIST,
	  TWL_CFG_LIST_FIELD(struct twl_config, sans, n_sans),
	  .arg = "NAME",
	  .help = "Extra DNS name or IP address for the generated server "
		  "certificate; repeatable or comma-separated (up to 16). "
		  "localhost, 127.0.0.1 and ::1 are always included. Used only "
		  "when the certificate is generated: to add a name later, "
		  "remove server.pem and server.key and restart." },
	{ .name = "require-cap-drop",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(require_cap_drop),
	  .help = "Started with capabilities (by root, say), the server gives "
		  "them all up before it serves, keeping CAP_NET_BIND_SERVICE "
		  "only for a listen port below 1024; when that fails it exits "
		  "1. Turn this off only where a sandbox forbids capset(2) but "
		  "the capabilities are harmless: the server then serves with "
		  "them, and says so." },
	{ .name = "max-connections",
	  .type = TWL_CFG_UINT,
	  .def = "2048",
	  OPT(max_connections),
	  .min = 1,
	  .max = 1000000,
	  .help = "Connections in total." },
	{ .name = "max-per-ip",
	  .type = TWL_CFG_UINT,
	  .def = "16",
	  OPT(max_per_ip),
	  .min = 1,
	  .max = 1000000,
	  .help = "Connections per address (per /64 for IPv6); loopback "
		  "peers are exempt unless limit-loopback." },
	{ .name = "limit-loopback",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(limit_loopback),
	  .help = "Apply the per-address limits (max-per-ip, ip-rate, "
		  "ip-burst) to loopback peers too. Off by default, and the "
		  "server says so at start: tools on the server itself and a "
		  "reverse proxy there connect from loopback, and counting them "
		  "by address would limit everyone behind a proxy as one "
		  "client; such a proxy must limit its clients itself. The other "
		  "limits (request-timeout, min-rate, body-memory, the per-key "
		  "and per-token rates) apply to every peer." },
	{ .name = "timeout",
	  .type = TWL_CFG_SECONDS,
	  .def = "30s",
	  OPT(conn_timeout_s),
	  .min = 1,
	  .max = 86400,
	  .help = "How long an idle or slow connection may take before it is "
		  "closed." },
	{ .name = "request-timeout",
	  .type = TWL_CFG_SECONDS,
	  .def = "60s",
	  OPT(request_timeout_s),
	  .min = 1,
	  .max = 86400,
	  .help = "How long one request may take from the moment its "
		  "connection opened (or its previous answer was sent) until its "
		  "answer is sent, however steadily the client trickles bytes; "
		  "time the server spends on the answer itself (computing it, "
		  "waiting for its database writer) does not count. Past it the "
		  "connection is closed." },
	{ .name = "min-rate",
	  .type = TWL_CFG_SIZE,
	  .def = "1K",
	  OPT(min_rate),
	  .min = 1,
	  .max = 1ULL << 30,
	  .arg = "BYTES",
	  .help = "Bytes per second a request body must arrive at, on average "
		  "from the end of its headers, once that is 5 seconds ago; a "
		  "slower one is closed." },
	{ .name = "max-body",
	  .type = TWL_CFG_SIZE,
	  .def = "4M",
	  OPT(max_body),
	  .min = 1024,
	  .max = 1ULL << 30,
	  .help = "Largest request body as sent." },
	{ .name = "max-inflated",
	  .type = TWL_CFG_SIZE,
	  .def = "16M",
	  OPT(max_inflated),
	  .min = 1024,
	  .max = 1ULL << 30,
	  .help = "Largest request body after gunzip (at least max-body)." },
	{ .name = "body-memory",
	  .type = TWL_CFG_SIZE,
	  .def = "256M",
	  OPT(body_memory),
	  .min = 1ULL << 20,
	  .max = 1ULL << 40,
	  .help = "Request bodies held in memory at once, all connections "
		  "together, as sent; a request whose body would not fit is "
		  "answered 503 with Retry-After before its body is read. Bodies "
		  "are read only for callers whose credentials were accepted." },
	{ .name = "conn-memory",
	  .type = TWL_CFG_SIZE,
	  .def = "16K",
	  OPT(conn_memory),
	  .min = 8192,
	  .max = 16ULL << 20,
	  .help = "Buffer memory per connection: request headers must fit; "
		  "zeroed per request, so larger costs CPU." },
	{ .name = "threads",
	  .type = TWL_CFG_UINT,
	  .def = "2",
	  OPT(threads),
	  .min = 1,
	  .max = 64,
	  .help = "HTTP worker threads." },
	{ .name = "host-rate",
	  .type = TWL_CFG_DOUBLE,
	  .def = "1",
	  OPT(host_rate),
	  .dmin = 0.001,
	  .dmax = 1e9,
	  .arg = "RATE",
	  .help = "Reports per second per host key (token bucket)." },
	{ .name = "host-burst",
	  .type = TWL_CFG_DOUBLE,
	  .def = "30",
	  OPT(host_burst),
	  .dmin = 1,
	  .dmax = 1e9,
	  .help = "Report burst per host key." },
	{ .name = "ip-rate",
	  .type = TWL_CFG_DOUBLE,
	  .def = "20",
	  OPT(ip_rate),
	  .dmin = 0.001,
	  .dmax = 1e9,
	  .arg = "RATE",
	  .help = "Requests per second per address (per /64 for IPv6); "
		  "loopback peers are exempt unless limit-loopback." },
	{ .name = "ip-burst",
	  .type = TWL_CFG_DOUBLE,
	  .def = "100",
	  OPT(ip_burst),
	  .dmin = 1,
	  .dmax = 1e9,
	  .help = "Request burst per address (per /64 for IPv6)." },
	{ .name = "enroll-rate",
	  .type = TWL_CFG_DOUBLE,
	  .def = "10",
	  OPT(enroll_rate),
	  .dmin = 0.001,
	  .dmax = 1e9,
	  .arg = "RATE",
	  .help = "Enrolments per second per enrolment token (token bucket), "
		  "whatever the host ids; more are answered 429 with "
		  "Retry-After and agents retry." },
	{ .name = "enroll-burst",
	  .type = TWL_CFG_DOUBLE,
	  .def = "1000",
	  OPT(enroll_burst),
	  .dmin = 1,
	  .dmax = 1e9,
	  .help = "Enrolment burst per enrolment token: how many hosts may "
		  "enrol at once when a fleet starts." },
	{ .name = "enroll-max-keys",
	  .type = TWL_CFG_UINT,
	  .def = "100000",
	  OPT(enroll_max_keys),
	  .min = 1,
	  .max = 100000000,
	  .help = "Live host keys one enrolment token may have minted; past "
		  "it enrolment with that token is refused (403) until keys are "
		  "revoked. Size it to the fleet the token is for, with room for "
		  "hosts that enrol again." },
	{ .name = "key-cache",
	  .type = TWL_CFG_SECONDS,
	  .def = "10s",
	  OPT(key_cache_s),
	  .min = 0,
	  .max = 300,
	  .help = "How long a host key found live is trusted without a look-up "
		  "in the store (0: look up every request). A key revoked "
		  "through this server is refused at once; one revoked through "
		  "another server process on the same database, once this "
		  "time has passed." },
	{ .name = "batch-days",
	  .type = TWL_CFG_UINT,
	  .def = "35",
	  OPT(batch_days),
	  .min = TWL_WIRE_RESEND_DAYS,
	  .max = DAYS_MAX,
	  .arg = "DAYS",
	  .help = "Days batch ids are kept so that resent batches are stored "
		  "once (at least 35: agents resend batches up to that old, "
		  "their spool-max-age, at most 35d)." },
	{ .name = "data-days",
	  .type = TWL_CFG_UINT,
	  .def = "0",
	  OPT(data_days),
	  .max = DAYS_MAX,
	  .arg = "DAYS",
	  .help = "Days raw rows are kept; 0 keeps them forever." },
	{ .name = "commit-max",
	  .type = TWL_CFG_UINT,
	  .def = "256",
	  OPT(commit_max),
	  .min = 1,
	  .max = 1000000,
	  .help = "Batches sharing one database COMMIT at most." },
	{ .name = "commit-delay",
	  .type = TWL_CFG_MILLIS,
	  .def = "1ms",
	  OPT(commit_delay_ms),
	  .min = 0,
	  .max = 1000,
	  .help = "When fewer than 16 batches wait, the database writer waits "
		  "this long for more to share their COMMIT (a COMMIT costs "
		  "the writer about what two batches do); 0 commits at once." },
	{ .name = "queue-max",
	  .type = TWL_CFG_UINT,
	  .def = "4096",
	  OPT(queue_max),
	  .min = 1,
	  .max = 10000000,
	  .help = "Batches waiting for the database writer before the server "
		  "answers 503 (agents retry later)." },
	/*
	 * Past wal-max the writer stops to checkpoint the WAL itself (every
	 * batch waiting; 11-21 ms on average at 5,000 reports/s, 50-60 ms
	 * with ingest flat out, on the machine of 2026-12-06); 256 MiB makes
	 * that 4 times rarer than 64 MiB did (server/store/sqlite/checkpoint.h,
	 * bench/README.md).
	 */
	{ .name = "wal-max",
	  .type = TWL_CFG_SIZE,
	  .def = "256M",
	  OPT(wal_max),
	  .min = 32ULL << 20,
	  .max = 1ULL << 40,
	  .help = "Size the database's write-ahead log (the DB-wal file) may "
		  "reach under sustained ingest; a thread copies it into the "
		  "database meanwhile. At that size the writer copies the rest "
		  "itself and the log starts again from its beginning, while "
		  "every waiting batch waits (10-20 ms, up to about 60 ms under "
		  "full load). Larger means rarer pauses and more disk; the "
		  "space is given back when the server stops." },
	{ .name = "silent-after",
	  .type = TWL_CFG_SECONDS,
	  .def = "1h",
	  OPT(silent_after_s),
	  .min = 60,
	  .max = 365 * 86400,
	  .help = "How long without a report before an agent counts as silent "
		  "on the dashboard." },
	{ .name = "alert-interval",
	  .type = TWL_CFG_SECONDS,
	  .def = "1m",
	  OPT(alert_interval_s),
	  .min = 0,
	  .max = 86400,
	  .help = "How often the alert detector compares the database with its "
		  "last scan (new uses, silent or lossy agents, readiness of "
		  "upgrade targets) and raises webhook events; 0 turns the "
		  "detector off." },
	{ .name = "alert-new-days",
	  .type = TWL_CFG_UINT,
	  .def = "30",
	  OPT(alert_new_days),
	  .min = 1,
	  .max = DAYS_MAX,
	  .arg = "DAYS",
	  .help = "A feature used on a host or by a process name that was not "
		  "using it for this many days raises a new_use event." },
	{ .name = "webhook-rate",
	  .type = TWL_CFG_DOUBLE,
	  .def = "60",
	  OPT(webhook_rate),
	  .dmin = 0.1,
	  .dmax = 1e6,
	  .arg = "PER_MINUTE",
	  .help = "Deliveries per minute to one webhook at most (as many at "
		  "once); later events wait their turn." },
	{ .name = "webhook-retry",
	  .type = TWL_CFG_SECONDS,
	  .def = "5s",
	  OPT(webhook_retry_s),
	  .min = 1,
	  .max = 3600,
	  .help = "Wait before retrying a failed delivery; each later retry "
		  "waits 4 times longer (at most 1h), 6 attempts in all." },
	{ .name = "webhook-timeout",
	  .type = TWL_CFG_SECONDS,
	  .def = "10s",
	  OPT(webhook_timeout_s),
	  .min = 1,
	  .max = 600,
	  .help = "Deadline of one delivery attempt (connect, send, answer)." },
	{ .name = "webhook-ca",
	  .type = TWL_CFG_STRING,
	  OPT(webhook_ca_file),
	  .arg = "FILE",
	  .help = "CA certificates (PEM) that webhook receivers' certificates "
		  "must chain to; default: the system's." },
	{ .name = "slow-answer",
	  .type = TWL_CFG_MILLIS,
	  .def = "2s",
	  OPT(slow_answer_ms),
	  .min = 0,
	  .max = 3600 * 1000,
	  .help = "A feature's detail or the export's data that took at least "
		  "this long to compute is kept and served again, computed "
		  "again in the background after 20 times what it cost "
		  "(answers carry an Age header); 0 keeps every such answer." },
	{ .name = "slow-answer-max-age",
	  .type = TWL_CFG_SECONDS,
	  .def = "1h",
	  OPT(slow_answer_max_age_s),
	  .min = 0,
	  .max = 86400,
	  .help = "A kept answer older than this is never served: it is "
		  "computed while the client waits; 0 keeps no answer." },
	{ .name = "slow-answer-ahead",
	  .type = TWL_CFG_BOOL,
	  .def = "true",
	  OPT(slow_answer_ahead),
	  .help = "Compute the dashboard's answers (every feature's detail "
		  "and export, the export, each target's readiness) in the "
		  "background ahead of any request, and keep the slow ones "
		  "computed, so that no click waits for one." },
	{ .name = "export-show-hosts",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_hosts),
	  .help = "Name hosts in the linux-mm export (export --show-hosts and "
		  "--hide-hosts override it)." },
	{ .name = "export-show-cgroups",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_cgroups),
	  .help = "Keep full cgroup paths in the linux-mm export (export "
		  "--full-cgroups and --cgroup-kinds override it)." },
	{ .name = "export-show-values",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_values),
	  .help = "Show the values written to the deprecated knobs (limits, "
		  "flags, swappiness) in the linux-mm export; off, the export "
		  "says they were withheld (export --show-values and "
		  "--hide-values override it)." },
	{ .name = "export-show-images",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_images),
	  .help = "Name the writers' container images in the linux-mm export "
		  "(agents send them only where their operator opted in); "
		  "otherwise a row says \"image withheld\"." },
	{ .name = "export-show-labels",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_labels),
	  .help = "Show the hosts' operator labels in the linux-mm export: "
		  "the hosts using each feature by the value of "
		  "export-group-label." },
	{ .name = "export-show-teams",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  OPT(export_show_teams),
	  .help = "Name the teams that own use cases in the linux-mm "
		  "export." },
	{ .name = "export-group-label",
	  .type = TWL_CFG_STRING,
	  OPT(export_group_label),
	  .arg = "KEY",
	  .example = "team",
	  .help = "A host label key (the agents' labels option) to group the "
		  "linux-mm export's hosts by, shown only with "
		  "export-show-labels; empty: no grouping." },
	{ .name = "export-readiness-target",
	  .type = TWL_CFG_STRING,
	  .def = "debian-12-6.12",
	  OPT(export_readiness_target),
	  .arg = "NAME",
	  .help = "The upgrade readiness target (GET /api/v1/targets) whose "
		  "breakage the linux-mm export states, as \"N of our hosts "
		  "will lose this with our distribution's next kernel\"; "
		  "empty: no such line." },
};

const size_t twl_server_n_options =
	sizeof(twl_server_options) / sizeof(twl_server_options[0]);

#define CLI(f) TWL_CFG_FIELD(struct twl_server_cli, f)
#define SWITCH (TWL_CFG_CLI | TWL_CFG_SWITCH)

const struct twl_cfg_opt twl_server_cli_options[] = {
	{ .name = "check-config",
	  .short_name = 'n',
	  .type = TWL_CFG_BOOL,
	  CLI(check_config),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Load the configuration, print every effective option, and "
		  "exit 0 with \"configuration OK\", 1 if the data directory "
		  "exists and is not writable, or 2 listing every bad option. "
		  "It does not open the database or check that the files named "
		  "exist." },
	{ .name = "print-config",
	  .type = TWL_CFG_BOOL,
	  CLI(print_config),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print a commented example configuration file with every "
		  "option and its default, and exit 0. The packaged "
		  "/etc/twilight/server.conf was generated this way." },
	{ .name = "help",
	  .short_name = 'h',
	  .type = TWL_CFG_BOOL,
	  CLI(help),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print the usage and every option, and exit 0." },
	{ .name = "version",
	  .type = TWL_CFG_BOOL,
	  CLI(version),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print the version and exit 0." },
};

const size_t twl_server_cli_n_options =
	sizeof(twl_server_cli_options) / sizeof(twl_server_cli_options[0]);

const struct twl_cfg_opt twl_server_token_options[] = {
	{ .name = "name",
	  .type = TWL_CFG_STRING,
	  CLI(name),
	  .flags = TWL_CFG_CLI,
	  .arg = "NAME",
	  .help = "token create: the new token's name, 1 to 63 bytes." },
	{ .name = "role",
	  .type = TWL_CFG_STRING,
	  CLI(role),
	  .flags = TWL_CFG_CLI,
	  .arg = "ROLE",
	  .help = "token create: admin (read the API, write annotations, "
		  "manage tokens through the API), viewer (read the API and "
		  "dashboard) or agent (an enrolment token: agents exchange it "
		  "for a per-host key)." },
};

const size_t twl_server_token_n_options =
	sizeof(twl_server_token_options) / sizeof(twl_server_token_options[0]);

/* Contract: see config.h. */
void twl_config_defaults(struct twl_config *c)
{
	memset(c, 0, sizeof(*c));
	/* Only ENOMEM could fail, and inline buffers take no memory. */
	twl_cfg_defaults(twl_server_options, twl_server_n_options, c);
#ifdef TWL_DEV_WEB_DIR
	/* Builds that are not packaged serve the staged dashboard. */
	snprintf(c->web_dir, sizeof(c->web_dir), "%s", TWL_DEV_WEB_DIR);
#endif
}

static struct twl_cfg *session(struct twl_config *c)
{
	struct twl_cfg *p = twl_cfg_new("twilight-server");

	if (p && twl_cfg_add(p, twl_server_options, twl_server_n_options, c)) {
		twl_cfg_free(p);
		return NULL;
	}
	return p;
}

/* The messages of @p, one a line, into @err. */
static void messages(const struct twl_cfg *p, char *err, size_t cap)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	err[0] = '\0';
	if (!f)
		return;
	twl_cfg_print_msgs(f, p);
	if (fclose(f) == 0 && text) {
		while (len && text[len - 1] == '\n')
			text[--len] = '\0';
		snprintf(err, cap, "%s", text);
	}
	free(text);
}

/* Contract: see config.h. */
int twl_config_parse_cli(struct twl_config *c, struct twl_cfg *p, int argc,
			 char **argv, char **rest, int *n_rest)
{
	char path[600];
	int ret;

	ret = twl_cfg_add(p, twl_server_options, twl_server_n_options, c);
	if (ret)
		return ret;
	ret = twl_cfg_args(p, argc, argv, TWL_CFG_PASS_EARLY, NULL, NULL);
	if (ret == -ENOMEM)
		return ret;
	if (c->config_file[0])
		ret = twl_cfg_load_file(p, c->config_file, TWL_CONFIG_FILE_MAX,
					true);
	else {
		snprintf(path, sizeof(path), "%s/twilight-server.conf",
			 c->data_dir);
		ret = twl_cfg_load_file(p, path, TWL_CONFIG_FILE_MAX, false);
	}
	if (ret == -ENOMEM)
		return ret;
	ret = twl_cfg_args(p, argc, argv, TWL_CFG_PASS_LATE, rest, n_rest);
	if (ret == -ENOMEM)
		return ret;
	return twl_cfg_failed(p) ? -EINVAL : 0;
}

/* Contract: see config.h. */
int twl_config_load(struct twl_config *c, int argc, char **argv, char **rest,
		    int *n_rest, char *err, size_t err_cap)
{
	struct twl_cfg *p = twl_cfg_new("twilight-server");
	int ret;

	if (!p)
		return -ENOMEM;
	ret = twl_config_parse_cli(c, p, argc, argv, rest, n_rest);
	messages(p, err, err_cap);
	if (!ret && p->n_msgs)
		fprintf(stderr, "%s\n", err); /* deprecation notes */
	twl_cfg_free(p);
	return ret;
}

/* Contract: see config.h. */
int twl_config_set(struct twl_config *c, const char *key, const char *value,
		   char *err, size_t err_cap)
{
	struct twl_cfg *p = session(c);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = twl_cfg_set(p, key, value);
	messages(p, err, err_cap);
	twl_cfg_free(p);
	return ret;
}

static void derive(char *field, size_t cap, const char *dir, const char *name)
{
	if (!field[0])
		snprintf(field, cap, "%.400s/%s", dir, name);
}

/* Contract: see config.h. */
int twl_config_check(struct twl_config *c, struct twl_cfg *p)
{
	size_t before = p->n_errors;
	struct sockaddr_storage ss;

	if (!c->data_dir[0])
		twl_cfg_error(p, "data-dir", "must not be empty");
	derive(c->db_path, sizeof(c->db_path), c->data_dir, "twilight.db");
	derive(c->cert_file, sizeof(c->cert_file), c->data_dir, "server.pem");
	derive(c->key_file, sizeof(c->key_file), c->data_dir, "server.key");
	derive(c->ca_file, sizeof(c->ca_file), c->data_dir, "ca.pem");
	twl_cfg_check(p);
	if (c->max_inflated < c->max_body)
		twl_cfg_error(p, "max-inflated",
			      "must be at least max-body (%zu bytes)",
			      c->max_body);
	if (c->require_client_cert && !c->client_ca_file[0])
		twl_cfg_error(p, "require-client-cert", "needs client-ca");
	if (c->export_group_label[0] &&
	    !twl_wire_label_key_ok(c->export_group_label,
				   strlen(c->export_group_label)))
		twl_cfg_error(
			p, "export-group-label",
			"\"%s\" is not a label key ([a-z0-9][a-z0-9_.-]*, "
			"up to 32 bytes)",
			c->export_group_label);
	if (c->export_readiness_target[0] &&
	    !twl_target_name_ok(c->export_readiness_target))
		twl_cfg_error(p, "export-readiness-target",
			      "\"%s\" is not a target name ([a-z0-9._-], up "
			      "to 64 bytes)",
			      c->export_readiness_target);
	if (twl_parse_addr_port(c->listen, &ss, NULL))
		twl_cfg_error(
			p, "listen",
			"\"%s\" is not ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:8443 or [::1]:8443",
			c->listen);
	return p->n_errors != before ? -EINVAL : 0;
}

/* Contract: see config.h. */
int twl_config_finish(struct twl_config *c, char *err, size_t err_cap)
{
	struct twl_cfg *p = session(c);
	int ret;

	if (!p) {
		snprintf(err, err_cap, "out of memory");
		return -ENOMEM;
	}
	ret = twl_config_check(c, p);
	messages(p, err, err_cap);
	twl_cfg_free(p);
	return ret;
}

/* Contract: see config.h. */
void twl_config_usage(void *f)
{
	twl_cfg_print_flags(f, twl_server_options, twl_server_n_options);
}

/* Contract: see config.h. */
void twl_config_dump(const struct twl_config *c, void *f)
{
	twl_cfg_print_values(f, twl_server_options, twl_server_n_options, c);
}

/* Contract: see config.h. */
void twl_config_print_example(FILE *f)
{
	fprintf(f,
		"# twilight-server configuration (generated by twilight-server --print-config),\n"
		"# installed as /etc/twilight/server.conf. Format: key = value, one a line;\n"
		"# '#' starts a comment. Keys are the long options of twilight-server(8)\n"
		"# without the leading \"--\"; a flag on the command line overrides the same\n"
		"# key here. data-dir and config can only be given on the command line (the\n"
		"# systemd unit passes --data-dir /var/lib/twilight --config\n"
		"# /etc/twilight/server.conf). Durations take s, m, h, d; sizes K, M, G.\n"
		"# Check with: twilight-server --config /etc/twilight/server.conf --check-config\n");
	twl_cfg_print_example(f, twl_server_options, twl_server_n_options);
}

/* Contract: see config.h. */
int twl_config_print_man(FILE *f, const char *block)
{
	if (!strcmp(block, "commands"))
		twl_cfg_print_man(f, twl_server_cli_options,
				  twl_server_cli_n_options, true);
	else if (!strcmp(block, "options"))
		twl_cfg_print_man(f, twl_server_options, twl_server_n_options,
				  true);
	else if (!strcmp(block, "token"))
		twl_cfg_print_man(f, twl_server_token_options,
				  twl_server_token_n_options, true);
	else if (!strcmp(block, "export"))
		twl_cfg_print_man(f, twl_export_cli_options,
				  twl_export_cli_n_options, true);
	else if (!strcmp(block, "migrate-store"))
		twl_cfg_print_man(f, twl_migrate_store_cli_options,
				  twl_migrate_store_cli_n_options, true);
	else
		return -ENOENT;
	return 0;
}
