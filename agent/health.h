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

struct twl_health {
	uint64_t records_lost; /* kmsg records overwritten before read, this boot */
	uint64_t parse_failures; /* records that could not be parsed */
	bool have_sender; /* the spool/send members below are known */
	uint64_t spool_bytes, spool_files, spool_dropped;
	uint64_t send_failures;
	bool key_rejected;
	char last_error[256];
};

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
 * memory and CPU time (members that could not be measured are omitted).
 * Strings are made valid UTF-8 and capped. NULL on ENOMEM.
 */
json_t *twl_health_to_json(const struct twl_health *h);

#endif /* TWL_AGENT_HEALTH_H */
