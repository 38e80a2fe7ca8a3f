// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's main loop (daemon.h): signals and kernel records wake it
 * through poll(); everything periodic is a job in a small timer table
 * (census, journal backfill, batch, send, catalog updates).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "daemon.h"

struct daemon;

/*
 * A periodic job of the main loop. When it is due (or, with at_stop, once
 * more as the agent stops) run() does the job and says when it is due
 * next: a CLOCK_MONOTONIC time in ms, or 0 for *interval_s seconds after
 * @now. interval_s points into the running config, so a reload's new
 * interval applies from the job's next run.
 */
struct timer {
	const char *name;
	const unsigned *interval_s; /* NULL: run() always says when */
	uint64_t due; /* CLOCK_MONOTONIC ms */
	uint64_t (*run)(struct daemon *d, uint64_t now);
	bool at_stop;
};

enum { T_CENSUS, T_JOURNAL, T_BATCH, T_SEND, T_CATALOG, T_NR };

struct daemon {
	struct twl_agent a;
	int sfd;
	bool stop, src_eof;
	uint64_t src_retry_at; /* no reads from a failing source before this */
	uint64_t last_batch; /* when a batch last went to the spool */
	uint64_t sent_lost; /* records_lost as the server last heard it */
	uint64_t logged_lost, logged_parse, logged_state_fail;
	size_t logged_fail_lines; /* source failures logged with their line */
	uint64_t logged_journal_state_fail;
	int logged_journal_error; /* the journal job's last error, logged once */
	bool coverage_logged;
	struct timer timers[T_NR];
};

/* The lines of a saved log that could not be placed, each once (the first few). */
static void log_failure_lines(struct daemon *d)
{
	const struct twl_kmsg_failure *f;
	size_t n = twl_kmsg_source_failures(d->a.src, &f);

	for (; d->logged_fail_lines < n; d->logged_fail_lines++) {
		const struct twl_kmsg_failure *x = &f[d->logged_fail_lines];

		twl_log(LOG_WARNING, "%s line %lu: %s",
			twl_agent_kmsg_path(&d->a), x->line, x->why);
	}
}

/* Log news about data loss once per change. */
static void log_news(struct daemon *d)
{
	struct twl_pump_stats ps;

	twl_pump_stats(d->a.pump, &ps);
	if (ps.records_lost > d->logged_lost) {
		twl_log(LOG_WARNING,
			"%llu kernel log records were overwritten before the agent read them "
			"(%llu in total, reported in health.records_lost); a larger log_buf_len= "
			"or a less loaded host avoids this",
			(unsigned long long)(ps.records_lost - d->logged_lost),
			(unsigned long long)ps.records_lost);
		d->logged_lost = ps.records_lost;
	}
	if (ps.parse_failures > d->logged_parse) {
		twl_log(LOG_WARNING,
			"%llu kernel log records could not be parsed (%llu in total); if the input "
			"is a file, check its format (see --kmsg-file in --help)",
			(unsigned long long)(ps.parse_failures -
					     d->logged_parse),
			(unsigned long long)ps.parse_failures);
		d->logged_parse = ps.parse_failures;
	}
	log_failure_lines(d);
	if (ps.state_save_failures > d->logged_state_fail) {
		twl_log(LOG_ERR,
			"cannot save the agent state in %s: %s; after a restart some records may "
			"be sent twice: check that the directory is writable and not full",
			d->a.cfg.state_dir, strerror(-ps.last_state_error));
		d->logged_state_fail = ps.state_save_failures;
	}
}

/* ---- the periodic jobs ---- */

static uint64_t census_job(struct daemon *d, uint64_t now)
{
	twl_pump_set_census(d->a.pump, twl_agent_census(&d->a.cfg));
	return 0;
}

/* The journal job's news: an error when it changes, a failed save once per failure. */
static void log_journal(struct daemon *d, int ret,
			const struct twl_jsource_stats *st)
{
	if (ret < 0 && ret != d->logged_journal_error && st->open_error)
		twl_log(LOG_WARNING,
			"journal: cannot read %s: %s; retrying every journal-interval "
			"(check journal-dir, machine-id-path and that the agent may "
			"read the journal: group systemd-journal)",
			d->a.cfg.journal_dir ?
				d->a.cfg.journal_dir :
				"/var/log/journal and /run/log/journal",
			strerror(-ret));
	else if (ret < 0 && ret != d->logged_journal_error)
		twl_log(LOG_WARNING,
			"journal: a batch could not be spooled (%s); the journal is "
			"read again from the last saved cursor after journal-interval",
			strerror(-ret));
	if (ret <= 0)
		d->logged_journal_error = ret;
	if (st->state_save_failures > d->logged_journal_state_fail) {
		twl_log(LOG_ERR,
			"cannot save %s/%s: %s; after a restart some journal records may "
			"be sent twice: check that the directory is writable and not full",
			d->a.cfg.state_dir, TWL_JOURNAL_STATE_FILE,
			strerror(-st->last_state_error));
		d->logged_journal_state_fail = st->state_save_failures;
	}
}

/*
 * One step of the journal backfill: due again at once while a pass goes
 * on (the loop reads /dev/kmsg and signals in between), else after
 * journal-interval.
 */
static uint64_t journal_job(struct daemon *d, uint64_t now)
{
	struct twl_jsource_stats st;
	int ret = twl_jsource_step(d->a.journal, d->a.pump);

	twl_jsource_stats(d->a.journal, &st);
	log_journal(d, ret, &st);
	return ret > 0 ? now : 0;
}

/* How one boot's start is seen, in words: "its start is covered (...)". */
static void log_boot(const struct twl_health_boot *b, bool current)
{
	char kmsg[160] = "", jour[128] = "";

	if (b->have_kmsg_seq && b->first_kmsg_seq)
		snprintf(
			kmsg, sizeof(kmsg),
			"; /dev/kmsg from record %llu (the %llu before it were "
			"overwritten before the agent first read this boot)",
			(unsigned long long)b->first_kmsg_seq,
			(unsigned long long)b->first_kmsg_seq);
	else if (b->have_kmsg_seq)
		snprintf(kmsg, sizeof(kmsg),
			 "; /dev/kmsg from its first record");
	if (b->have_journal_us)
		snprintf(jour, sizeof(jour),
			 "; the journal from %llu.%06llu s after boot",
			 (unsigned long long)(b->first_journal_us / 1000000),
			 (unsigned long long)(b->first_journal_us % 1000000));
	else if (current)
		snprintf(jour, sizeof(jour), "; no journal records of it");
	twl_log(b->start_covered ? LOG_INFO : LOG_NOTICE,
		"%s boot %s (kernel %s): its start is %s%s%s%s",
		current ? "this" : "earlier", b->boot_id,
		b->kernel[0] ? b->kernel : "unknown",
		b->start_covered ? "covered" : "NOT covered", kmsg, jour,
		b->start_covered ?
			"" :
			"; warnings printed before then are not seen");
}

/* Once, after the first read of each source: where the agent's view of each boot starts. */
static void log_coverage(struct daemon *d)
{
	struct twl_health *h = calloc(1, sizeof(*h));
	size_t i;

	d->coverage_logged = true;
	if (!h)
		return;
	twl_pump_health(d->a.pump, h);
	for (i = 0; i < h->n_boots; i++)
		log_boot(&h->boots[i], !i && !d->a.o->kmsg_file);
	free(h);
}

/*
 * Finish the batch. Sent even when empty if the heartbeat is due, or
 * records were lost that the server has not heard of (parse failures
 * wait for the next batch); a batch that went to the spool makes the
 * send job due at once.
 */
static uint64_t batch_job(struct daemon *d, uint64_t now)
{
	struct twl_pump_stats ps;
	bool force;
	int ret;

	if (!d->coverage_logged)
		log_coverage(d);
	twl_pump_stats(d->a.pump, &ps);
	force = now - d->last_batch >=
			(uint64_t)d->a.cfg.heartbeat_interval_s * 1000 ||
		ps.records_lost != d->sent_lost;
	ret = twl_pump_flush(d->a.pump, force);
	if (ret < 0)
		twl_log(LOG_ERR,
			"cannot store a batch in the spool %s: %s; the records stay unread and "
			"are retried (check free space and permissions)",
			d->a.cfg.spool_dir, strerror(-ret));
	log_news(d);
	if (ret > 0) {
		d->last_batch = now;
		d->timers[T_SEND].due = now;
		d->sent_lost = ps.records_lost;
	}
	return 0;
}

/*
 * Deliver what the spool holds, for up to 10 s (2 s when stopping); due
 * again when the sender wants to run (its back-off), or in 60 s after a
 * spool failure.
 */
static uint64_t send_job(struct daemon *d, uint64_t now)
{
	uint64_t wait = 1000;
	int i, ret = 0;

	for (i = 0; i < 8; i++) {
		ret = twl_sender_run_once(d->a.sender, d->stop ? 2000 : 10000);
		if (ret != 0)
			break;
	}
	if (ret < 0) {
		twl_log(LOG_ERR,
			"spool %s: %s; check the directory (retrying in 60 s)",
			d->a.cfg.spool_dir, strerror(-ret));
		wait = 60000;
	} else if (ret) {
		wait = (uint64_t)ret;
	}
	return twl_mono_ms() + wait;
}

/*
 * Ask the server for a newer catalog; due again after catalog_interval_s,
 * or in 10 s while the agent has not enrolled yet (the send job enrols).
 */
static uint64_t catalog_job(struct daemon *d, uint64_t now)
{
	unsigned before = twl_catalog_version();
	char err[1200];
	int ret = twl_sender_fetch_catalog(d->a.sender, err, sizeof(err));

	if (ret == -EAGAIN)
		return now + 10000;
	if (ret < 0)
		twl_log(LOG_WARNING,
			"cannot update the catalog from %s: %s (version %u stays; retrying in %u s)",
			d->a.cfg.server_url, err, before,
			d->a.cfg.catalog_interval_s);
	else if (ret == 1)
		twl_log(LOG_NOTICE,
			"catalog updated from the server: version %u -> %u%s%s",
			before, twl_catalog_version(), err[0] ? "; " : "", err);
	return 0;
}

/* The table, in the order due jobs run; the first batch goes out at once. */
static void init_timers(struct daemon *d, uint64_t now)
{
	const struct twl_config *cfg = &d->a.cfg;
	bool journal = d->a.journal != NULL;
	const struct timer table[T_NR] = {
		[T_CENSUS] = { "census", &cfg->census_interval_s,
			       now + (uint64_t)cfg->census_interval_s * 1000,
			       census_job, false },
		/* At start, and once more at the stop: the batch job spools it. */
		[T_JOURNAL] = { "journal", &cfg->journal_interval_s,
				journal ? now : UINT64_MAX, journal_job,
				journal },
		[T_BATCH] = { "batch", &cfg->batch_interval_s, now, batch_job,
			      true },
		[T_SEND] = { "send", NULL, now, send_job, true },
		[T_CATALOG] = { "catalog", &cfg->catalog_interval_s, now,
				catalog_job, false },
	};

	memcpy(d->timers, table, sizeof(table));
	d->last_batch = now;
}

/* Run every job that is due (all at_stop ones when stopping), in order. */
static void run_due(struct daemon *d)
{
	uint64_t now = twl_mono_ms(), next;

	for (size_t i = 0; i < T_NR; i++) {
		struct timer *t = &d->timers[i];

		if (now < t->due && !(d->stop && t->at_stop))
			continue;
		next = t->run(d, now);
		if (!next)
			next = now + (t->interval_s ?
					      (uint64_t)*t->interval_s * 1000 :
					      1000);
		t->due = next;
		twl_log(LOG_DEBUG, "%s: next in %llu ms", t->name,
			(unsigned long long)(next > now ? next - now : 0));
	}
}

/* poll()'s timeout until the earliest due job. */
static int next_timeout(const struct daemon *d)
{
	uint64_t wake = UINT64_MAX, now = twl_mono_ms();

	for (size_t i = 0; i < T_NR; i++)
		if (d->timers[i].due < wake)
			wake = d->timers[i].due;
	if (wake <= now)
		return 0;
	return wake - now > INT_MAX ? INT_MAX : (int)(wake - now);
}

/* ---- signals and records ---- */

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

/*
 * SIGHUP: take a new config; the kernel log and the state directory in
 * use stay until a restart. A config with errors changes nothing.
 */
static int reload(struct daemon *d)
{
	struct twl_agent *a = &d->a;
	struct twl_config next;
	struct twl_sender *s;

	memset(&next, 0, sizeof(next));
	if (a->o->load_config(a->o->load_ctx, &next, true)) {
		twl_log(LOG_ERR,
			"reload: %s has errors (listed above); keeping the running "
			"config",
			a->o->config_path);
		twl_config_fini(&next);
		return -EINVAL;
	}
	if (strcmp(next.kmsg_path, a->cfg.kmsg_path) ||
	    strcmp(next.state_dir, a->cfg.state_dir) ||
	    next.journal != a->cfg.journal ||
	    next.journal_boots != a->cfg.journal_boots ||
	    !!next.journal_dir != !!a->cfg.journal_dir ||
	    (next.journal_dir && strcmp(next.journal_dir, a->cfg.journal_dir)))
		twl_log(LOG_NOTICE,
			"reload: kmsg-path, state-dir, journal, journal-boots and "
			"journal-dir changes take effect only after a restart");
	s = twl_agent_sender(&next, &a->id);
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
	twl_log(LOG_INFO, "reloaded %s", a->o->config_path);
	return 0;
}

/* SIGHUP reloads (a new census, the batch due now); the others stop. */
static void read_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGHUP) {
			d->stop = true;
			continue;
		}
		if (reload(d))
			continue;
		if (!d->a.o->kmsg_file)
			twl_pump_set_census(d->a.pump,
					    twl_agent_census(&d->a.cfg));
		d->timers[T_BATCH].due = twl_mono_ms();
	}
}

static void drain(struct daemon *d)
{
	int ret = twl_pump_drain(d->a.pump);

	if (ret == -ENODATA) {
		d->src_eof = true;
		d->stop = true; /* a dump file or FIFO was read through */
	} else if (ret < 0) {
		/* Do not spin on an fd that keeps failing. */
		d->src_retry_at = twl_mono_ms() +
				  (uint64_t)d->a.cfg.batch_interval_s * 1000;
		twl_log(LOG_ERR,
			"reading %s failed: %s; retrying at the next batch",
			twl_agent_kmsg_path(&d->a), strerror(-ret));
	}
	log_news(d);
}

/* Sleep until a signal, a record or a due job; take signals and records. */
static int wait_and_read(struct daemon *d)
{
	struct pollfd pfd[2] = {
		{ .fd = d->sfd, .events = POLLIN },
		{ .fd = d->src_eof || twl_mono_ms() < d->src_retry_at ?
				-1 :
				twl_kmsg_source_fd(d->a.src),
		  .events = POLLIN },
	};

	if (poll(pfd, 2, next_timeout(d)) < 0 && errno != EINTR) {
		twl_log(LOG_ERR, "poll: %s", strerror(errno));
		return -1;
	}
	if (pfd[0].revents & POLLIN)
		read_signals(d);
	/* A saved log has no fd to poll: it is read through at once. */
	if (!d->src_eof &&
	    (pfd[1].revents || d->stop || twl_kmsg_source_fd(d->a.src) < 0))
		drain(d);
	return 0;
}

/* Contract: see daemon.h. */
int twl_daemon_main(const struct twl_run_opts *o)
{
	struct daemon d;
	int rc = 1;

	memset(&d, 0, sizeof(d));
	d.a.o = o;
	/*
	 * Block SIGTERM/SIGINT/SIGHUP first thing: a signal that arrives while
	 * the agent is still starting (identity, state and BPF setup can take
	 * seconds on a slow host) waits in the signalfd instead of killing it
	 * silently with the default action.
	 */
	d.sfd = setup_signals();
	if (d.sfd < 0) {
		twl_log(LOG_ERR, "cannot set up signal handling: %s",
			strerror(errno));
		return 1;
	}
	if (o->load_config(o->load_ctx, &d.a.cfg, true))
		goto out;
	twl_log_init("twilight-agent", d.a.cfg.log_level);
	if (twl_agent_start(&d.a, false))
		goto out;
	init_timers(&d, twl_mono_ms());
	while (!d.stop) {
		if (wait_and_read(&d))
			goto out;
		run_due(&d);
	}
	twl_log(LOG_INFO, "stopping: pending records are in the spool %s",
		d.a.cfg.spool_dir);
	rc = 0;
out:
	twl_agent_stop(&d.a);
	close(d.sfd);
	return rc;
}
