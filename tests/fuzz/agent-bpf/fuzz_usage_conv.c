// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the parts of agent/bpf that turn kernel-captured
 * bytes into wire text: cgroup paths captured leaf first (any bytes, any
 * length), their classification (common/'s twl_cgroup_classify(): kind,
 * name, and the place usage_conv's container identity is), comm
 * sanitizing, and the use_hierarchy value parser the BPF program runs.
 * Every output must be valid UTF-8 without NUL, as the wire format
 * requires, and the usage entry made of them a valid entry of the wire
 * version the agent sends.
 */
#include <linux/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/cgroup_class.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "twl_bpf_parse.h"
#include "twl_bpf_types.h"
#include "usage_conv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The classification of @path agrees with itself and with usage_conv. */
static void check_class(const char *path)
{
	struct twl_cgroup_class cls;
	char cont[sizeof(cls.place)];

	if (twl_cgroup_classify(path, &cls))
		return;
	if ((unsigned)cls.kind >= TWL_CGROUP_N_KINDS ||
	    !twl_utf8_valid(cls.name, strlen(cls.name)) ||
	    !twl_utf8_valid(cls.place, strlen(cls.place)) ||
	    (cls.place[0] && !strchr(cls.place, ':')) ||
	    (cls.kind == TWL_CGROUP_ROOT && (cls.name[0] || cls.place[0])))
		abort();
	if (twl_container_from_cgroup(path, cont, sizeof(cont)) ||
	    strcmp(cont, cls.place))
		abort();
}

/* A usage entry of @path (target and writer) and @comm is valid. */
static void check_entry(const char *path, const char *comm, unsigned op)
{
	struct twl_usage_entry e = {
		.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
		.feature = "memcg_v1.soft_limit",
		.file = "memory.soft_limit_in_bytes",
		.op = op,
		.cgroup = path,
		.comm = comm,
		.writer_cgroup = path,
		.count = 1,
	};
	json_t *o = twl_usage_entry_to_json(&e, 0, NULL), *doc;

	if (!o)
		abort();
	doc = json_pack(
		"{s:i, s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:{}, s:[o]}",
		"v", TWL_WIRE_VERSION, "batch_id", "0123abcd", "seq", 1,
		"sent_time", 0, "host", "host_id", "abcd", "hostname", "h",
		"boot_id", e.boot_id, "kernel", "6.1.0", "cgroup_mode", "v1",
		"agent_version", "0.2.0", "catalog_version", 1, "health",
		"usage", o);
	if (!doc || twl_report_validate(doc, NULL))
		abort();
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[1100], cont[200], comm[17], val[TWL_BPF_VALUE_LEN] = { 0 };
	char lim[TWL_BPF_MEMPARSE_LEN] = { 0 };
	unsigned long long pages;
	size_t n = size < TWL_BPF_PATH_LEN ? size : TWL_BPF_PATH_LEN;

	twl_comm_sanitize((const char *)data, size < 16 ? size : 16, comm);
	if (strlen(comm) > 16 || !twl_utf8_valid(comm, strlen(comm)))
		abort();
	if (!twl_cgroup_path_from_raw((const char *)data, n, size & 1, path,
				      sizeof(path))) {
		if (!twl_utf8_valid(path, strlen(path)) || path[0] != '/')
			abort();
		if (!twl_container_from_cgroup(path, cont, sizeof(cont)) &&
		    !twl_utf8_valid(cont, strlen(cont)))
			abort();
		check_class(path);
		if (strlen(path) <= TWL_WIRE_MAX_STR)
			check_entry(path, comm, (unsigned)(size % 3));
	}
	memcpy(val, data, size < sizeof(val) - 1 ? size : sizeof(val) - 1);
	(void)twl_value_not_1(val);
	memcpy(lim, data, size < sizeof(lim) - 1 ? size : sizeof(lim) - 1);
	if (!twl_memparse_pages(lim, &pages) &&
	    pages > TWL_BPF_PAGE_COUNTER_MAX)
		abort();
	return 0;
}
