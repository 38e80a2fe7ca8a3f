/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mixed fleet of the upgrade readiness tests, as validated wire
 * documents (version 2), and the answer the Debian 6.12 target must give
 * for it: seeded once through the store's ingest function, once through
 * the HTTP API of a test server, the same answer both ways.
 */
#ifndef TWL_TEST_SERVER_READINESS_FLEET_H
#define TWL_TEST_SERVER_READINESS_FLEET_H

#include <stdint.h>

#include <jansson.h>

#define FLEET_SOFT "memcg_v1.soft_limit"
#define FLEET_OOM "memcg_v1.oom_control"
#define FLEET_IFACE "memcg_v1.interface"
#define FLEET_CPUSET_IFACE "cpuset_v1.interface"

/* Takes @report (a valid wire document of host @host_id) and stores it;
 * fails the test if it cannot. */
typedef void (*fleet_ingest_fn)(const char *host_id, json_t *report, void *ctx);

/*
 * Hand the fleet's nine reports, every time in them near @now, to
 * @ingest (the hosts' ids are "%064x" of 1..8 and 13):
 *   1 web-1  v1  6.1  BPF: soft_limit written (java); census: memory on v1
 *   2 db-2   v1  6.1  BPF: oom_control event registered (oomd)
 *   3 lim-3  v1  6.1  BPF: memory.limit_in_bytes written, nothing else;
 *                     census: memory on v1, systemd and docker
 *   4 lim-4  v1  6.1  census only: memory on v1 (sets limits, no knob)
 *   5 new-5  v2  6.12 census: nothing on v1
 *   6 kmsg-6 v1  6.1  no BPF, no census: not measured
 *   7 kmsg-7 v1  6.1  no BPF, no census, a soft_limit kernel warning
 *   8 cpu-8  v1  6.1  census: only cpu on v1; BPF attached (probes)
 *  13 cset-13 v1 6.1  census: only cpuset on v1 (CONFIG_CPUSETS_V1)
 */
void fleet_seed(int64_t now, fleet_ingest_fn ingest, void *ctx);

/* Fail the test unless @doc (GET /api/v1/readiness's answer) is the
 * fleet's on the Debian 6.12 target (every host listed). */
void fleet_check_debian_612(const json_t *doc);

/* The feature @id among @doc's breaking features, or NULL. */
json_t *fleet_feature(const json_t *doc, const char *id);
/* @o.@a.@b, failing the test unless it is an integer. */
int64_t fleet_num(const json_t *o, const char *a, const char *b);
/* Host names in @arr, in order, joined by ' ', into @out (@cap bytes). */
void fleet_names(const json_t *arr, char *out, size_t cap);

#endif
