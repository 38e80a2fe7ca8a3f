/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health: the agent's own state, sent in every batch so that a silent
 * agent or lost data never reads as "no usage".
 */
#ifndef TWL_AGENT_HEALTH_H
#define TWL_AGENT_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Boots health.boots holds at most (the wire's cap). */
#define TWL_HEALTH_MAX_BOOTS 16

/* Where the agent's view of one boot starts (wire health.boots[]). */
struct twl_health_boot {
	char boot_id[65];
	char kernel[65]; /* "" when not known */
	bool have_kmsg_seq, have_journal_us;
	uint64_t first_kmsg_seq; /* the first /dev/kmsg record seen on the boot */
	uint64_t first_journal_us; /* kernel stamp of the journal's first entry */
	bool start_covered; /* either source holds the boot's first record */
};

struct twl_health {
	uint64_t records_lost; /* kmsg records overwritten before read, this boot */
	uint64_t parse_failures; /* records that could not be parsed */
	size_t n_boots;
	struct twl_health_boot boots[TWL_HEALTH_MAX_BOOTS];
	bool have_journal; /* the journal members below are known */
	uint64_t journal_missed, journal_errors;
	bool have_sender; /* the spool/send members below are known */
	uint64_t spool_bytes, spool_files, spool_dropped;
	uint64_t send_failures;
	bool key_rejected;
	char last_error[256];
};

/*
 * twl_health_boot - the entry of @boot_id in @h->boots (boot ids compared
 * without dashes and case), added empty when new; NULL when all
 * TWL_HEALTH_MAX_BOOTS are taken.
 */
struct twl_health_boot *twl_health_boot(struct twl_health *h,
					const char *boot_id);

/*
 * twl_health_parse_status - VmRSS and RssAnon in kB from /proc/PID/status
 * text (@len bytes). Returns 0 with both set (a missing line gives -1 for
 * that value), -ENODATA when neither is present.
 */
int twl_health_parse_status(const char *text, size_t len, long *rss_kb,
			    long *rss_anon_kb);

/*
 * twl_health_self - this process's RSS, anonymous RSS (kB, from
 * @status_path, normally /proc/self/status) and CPU time in ms (user +
 * system). Returns 0 or -errno; values that could not be read are -1.
 */
int twl_health_self(const char *status_path, long *rss_kb, long *rss_anon_kb,
		    long *cpu_ms);

/*
 * twl_health_to_json - the wire "health" object for @h plus this process's
 * memory and CPU time (members that could not be measured are omitted):
 * boots[] when @h has any, journal_missed and journal_errors when
 * have_journal.
 * Strings are made valid UTF-8 and capped. NULL on ENOMEM.
 */
json_t *twl_health_to_json(const struct twl_health *h);

#endif /* TWL_AGENT_HEALTH_H */
