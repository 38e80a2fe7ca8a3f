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

/*
 * Appenders for gen_report_json's per-entry part, which snprintf made a
 * fifth of the load generator's CPU: each writes at out[*o] while it fits
 * in cap - 1 (so that the final NUL fits too) and sets *o past cap when it
 * does not, which gen_report_json turns into -ENOSPC.
 */
static void put_str(char *out, size_t cap, size_t *o, const char *s)
{
	size_t n = strlen(s);

	if (*o + n < cap)
		memcpy(out + *o, s, n);
	*o += n;
}

static void put_u64(char *out, size_t cap, size_t *o, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	if (*o + n < cap)
		for (size_t i = 0; i < n; i++)
			out[*o + i] = tmp[n - 1 - i];
	*o += n;
}

static void put_i64(char *out, size_t cap, size_t *o, int64_t v)
{
	if (v < 0) {
		put_str(out, cap, o, "-");
		put_u64(out, cap, o, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(out, cap, o, (uint64_t)v);
	}
}

/* v's low digits*4 bits as lower-case hex, zero-padded, into s (NUL too). */
static void hex(char *s, uint64_t v, unsigned digits)
{
	for (unsigned i = digits; i-- > 0; v >>= 4)
		s[i] = "0123456789abcdef"[v & 15];
	s[digits] = 0;
}

/* Contract: see report_gen.h. */
void gen_entry(unsigned agent, uint64_t seq, unsigned j, int64_t t0,
	       struct gen_usage *u)
{
	/* 4 features per report (5 entries each), varying by agent */
	const struct twl_feature *f = features[(agent + j / 5) % n_features];
	size_t o;

	memset(u, 0, sizeof(*u));
	u->feature = f->id;
	u->file = f->files[0];
	u->op = "write";
	/* "/kubepods/burstable/pod%08x/ctr%02u" */
	memcpy(u->cgroup, "/kubepods/burstable/pod", 23);
	hex(u->cgroup + 23, mix(agent) & 0xffffffff, 8);
	memcpy(u->cgroup + 31, "/ctr", 4);
	o = 35;
	if (j < 10)
		u->cgroup[o++] = '0';
	put_u64(u->cgroup, sizeof(u->cgroup), &o, j);
	u->cgroup[o] = 0;
	u->comm = comms[(agent + j) % (sizeof(comms) / sizeof(comms[0]))];
	u->uid = 1000 + j % 3;
	u->writer_cgroup = "/system.slice/containerd.service";
	memcpy(u->container, "cri-containerd:", 15);
	hex(u->container + 15, mix(((uint64_t)agent << 8) | j), 12);
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
		put_str(out, cap, &o,
			j ? ",{\"boot_id\":\"" : "{\"boot_id\":\"");
		put_str(out, cap, &o, boot_id);
		put_str(out, cap, &o, "\",\"feature\":\"");
		put_str(out, cap, &o, u.feature);
		put_str(out, cap, &o, "\",\"file\":\"");
		put_str(out, cap, &o, u.file);
		put_str(out, cap, &o, "\",\"op\":\"");
		put_str(out, cap, &o, u.op);
		put_str(out, cap, &o, "\",\"cgroup\":\"");
		put_str(out, cap, &o, u.cgroup);
		put_str(out, cap, &o, "\",\"comm\":\"");
		put_str(out, cap, &o, u.comm);
		put_str(out, cap, &o, "\",\"uid\":");
		put_u64(out, cap, &o, u.uid);
		put_str(out, cap, &o, ",\"writer_cgroup\":\"");
		put_str(out, cap, &o, u.writer_cgroup);
		put_str(out, cap, &o, "\",\"container\":\"");
		put_str(out, cap, &o, u.container);
		put_str(out, cap, &o, "\",\"last_pid\":");
		put_u64(out, cap, &o, u.last_pid);
		put_str(out, cap, &o, ",\"count\":");
		put_i64(out, cap, &o, u.count);
		put_str(out, cap, &o, ",\"failed\":");
		put_i64(out, cap, &o, u.failed);
		put_str(out, cap, &o, ",\"condition_met\":");
		put_i64(out, cap, &o, u.condition_met);
		put_str(out, cap, &o, ",\"first_seen\":");
		put_i64(out, cap, &o, u.first_seen);
		put_str(out, cap, &o, ",\"last_seen\":");
		put_i64(out, cap, &o, u.last_seen);
		put_str(out, cap, &o, "}");
		if (o >= cap)
			return -ENOSPC;
	}
	PUT("],\"health\":{\"records_lost\":0,\"spool_bytes\":0,\"send_failures\":0}}");
#undef PUT
	return (int)o;
}
