// SPDX-License-Identifier: GPL-2.0
/* Synthetic agent reports (report_gen.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>

#include "report_gen.h"

#define MAX_FEATURES 64

static const struct twl_feature *features[MAX_FEATURES];
static size_t n_features;

static const char *const comms[] = { "java",	 "dockerd", "kubelet",
				     "postgres", "mysqld",  "containerd-shim",
				     "python3",	 "nginx" };

/* Contract: see report_gen.h. */
int gen_init(void)
{
	n_features = 0;
	for (size_t i = 0; i < twl_catalog_count() && n_features < MAX_FEATURES;
	     i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		if (f->files && f->files[0])
			features[n_features++] = f;
	}
	return n_features ? 0 : -ENOENT;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* Contract: see report_gen.h. */
void gen_host_id(uint32_t nonce, unsigned agent, char out[65])
{
	uint64_t a = mix(((uint64_t)nonce << 32) | agent);

	snprintf(out, 65,
		 "%08" PRIx32 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%08x",
		 nonce, a, mix(a), mix(a + 1), agent);
}

/* Contract: see report_gen.h. */
void gen_boot_id(uint32_t nonce, unsigned agent, char out[37])
{
	uint64_t a = mix(((uint64_t)agent << 32) | nonce), b = mix(a);

	snprintf(out, 37,
		 "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-8%03" PRIx64
		 "-%012" PRIx64,
		 a & 0xffffffff, (a >> 32) & 0xffff, (a >> 48) & 0xfff,
		 b & 0xfff, (b >> 16) & (uint64_t)0xffffffffffff);
}

/* Contract: see report_gen.h. */
void gen_entry(unsigned agent, uint64_t seq, unsigned j, int64_t t0,
	       struct gen_usage *u)
{
	/* 4 features per report (5 entries each), varying by agent */
	const struct twl_feature *f = features[(agent + j / 5) % n_features];

	memset(u, 0, sizeof(*u));
	u->feature = f->id;
	u->file = f->files[0];
	u->op = "write";
	snprintf(u->cgroup, sizeof(u->cgroup),
		 "/kubepods/burstable/pod%08x/ctr%02u",
		 (unsigned)mix(agent) & 0xffffffff, j);
	u->comm = comms[(agent + j) % (sizeof(comms) / sizeof(comms[0]))];
	u->uid = 1000 + j % 3;
	u->writer_cgroup = "/system.slice/containerd.service";
	snprintf(u->container, sizeof(u->container),
		 "cri-containerd:%012" PRIx64,
		 mix(((uint64_t)agent << 8) | j) & (uint64_t)0xffffffffffff);
	u->last_pid = 1000 + agent % 30000 + j;
	u->count = (int64_t)seq * (j + 1);
	u->failed = (int64_t)seq / 10;
	u->condition_met = (int64_t)seq;
	u->first_seen = t0;
	u->last_seen = t0 + (int64_t)seq;
}

/* Contract: see report_gen.h. */
int gen_report_json(uint32_t nonce, unsigned agent, uint64_t seq,
		    unsigned n_entries, int64_t t0, char *out, size_t cap)
{
	char host_id[65], boot_id[37];
	struct gen_usage u;
	size_t o = 0;
	int n;

#define PUT(...)                                             \
	do {                                                 \
		n = snprintf(out + o, cap - o, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= cap - o)           \
			return -ENOSPC;                      \
		o += (size_t)n;                              \
	} while (0)

	gen_host_id(nonce, agent, host_id);
	gen_boot_id(nonce, agent, boot_id);
	PUT("{\"v\":1,\"batch_id\":\"%08" PRIx32 "%08x%016" PRIx64
	    "\",\"seq\":%" PRIu64 ",\"sent_time\":%" PRId64
	    ",\"host\":{\"host_id\":\"%s\",\"hostname\":\"bench-%u\","
	    "\"boot_id\":\"%s\",\"kernel\":\"6.1.0-28-amd64\",\"cgroup_mode\":\"%s\","
	    "\"agent_version\":\"0.1.0\",\"catalog_version\":%u},\"warnings\":[],\"usage\":[",
	    nonce, agent, seq, seq, t0 + (int64_t)seq, host_id, agent, boot_id,
	    agent % 10 < 7 ? "v1" :
	    agent % 10 < 8 ? "hybrid" :
			     "v2",
	    twl_catalog_version());
	for (unsigned j = 0; j < n_entries; j++) {
		gen_entry(agent, seq, j, t0, &u);
		PUT("%s{\"boot_id\":\"%s\",\"feature\":\"%s\",\"file\":\"%s\",\"op\":\"%s\","
		    "\"cgroup\":\"%s\",\"comm\":\"%s\",\"uid\":%u,\"writer_cgroup\":\"%s\","
		    "\"container\":\"%s\",\"last_pid\":%u,\"count\":%" PRId64
		    ",\"failed\":%" PRId64 ",\"condition_met\":%" PRId64
		    ",\"first_seen\":%" PRId64 ",\"last_seen\":%" PRId64 "}",
		    j ? "," : "", boot_id, u.feature, u.file, u.op, u.cgroup,
		    u.comm, u.uid, u.writer_cgroup, u.container, u.last_pid,
		    u.count, u.failed, u.condition_met, u.first_seen,
		    u.last_seen);
	}
	PUT("],\"health\":{\"records_lost\":0,\"spool_bytes\":0,\"send_failures\":0}}");
#undef PUT
	return (int)o;
}
