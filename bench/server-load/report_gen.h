/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic agent reports for the server load benchmark. One generator
 * feeds both the HTTPS load generator (as wire-format JSON) and the raw
 * SQLite ceiling (as bound values), so both store exactly the same rows.
 * Everything is a pure function of (run nonce, agent, seq, entry).
 */
#ifndef TWL_BENCH_REPORT_GEN_H
#define TWL_BENCH_REPORT_GEN_H

#include <stddef.h>
#include <stdint.h>

/* One usage[] entry; strings point into the struct or at constants. */
struct gen_usage {
	const char *feature;
	const char *file;
	const char *op;
	char cgroup[96];
	const char *comm;
	unsigned uid;
	const char *writer_cgroup;
	char container[48];
	unsigned last_pid;
	int64_t count, failed, condition_met;
	int64_t first_seen, last_seen;
};

/*
 * gen_init - pick the catalog features with control files. Returns 0, or
 * -ENOENT when the catalog has none (the benchmark cannot run).
 */
int gen_init(void);

/* Host id (64 hex + NUL) and boot id (36-char UUID + NUL) of an agent. */
void gen_host_id(uint32_t nonce, unsigned agent, char out[65]);
void gen_boot_id(uint32_t nonce, unsigned agent, char out[37]);

/*
 * gen_entry - entry j of report seq (1, 2, ...) of an agent: entries
 * 5i..5i+4 belong to one feature (a 20-entry report covers 4), each entry
 * its own cgroup. The key depends on (agent, j) only, counters grow with
 * seq, so every report
 * after the first of an agent updates the same rows (as real cumulative
 * BPF counters do). t0 is the run's base Unix time.
 */
void gen_entry(unsigned agent, uint64_t seq, unsigned j, int64_t t0,
	       struct gen_usage *u);

/*
 * gen_report_json - the whole wire-format v1 report into out (cap bytes):
 * n_entries usage entries, empty warnings, health {}. Returns its length,
 * or -ENOSPC when cap is too small.
 */
int gen_report_json(uint32_t nonce, unsigned agent, uint64_t seq,
		    unsigned n_entries, int64_t t0, char *out, size_t cap);

#endif /* TWL_BENCH_REPORT_GEN_H */
