// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the parts of agent/bpf that turn kernel-captured
 * bytes into wire text: cgroup paths captured leaf first (any bytes, any
 * length), container identity from the result, comm sanitizing, and the
 * use_hierarchy value parser the BPF program runs. Every output must be
 * valid UTF-8 without NUL, as the wire format requires.
 */
#include <linux/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "twl_bpf_parse.h"
#include "twl_bpf_types.h"
#include "usage_conv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[1100], cont[200], comm[17], val[TWL_BPF_VALUE_LEN] = { 0 };
	size_t n = size < TWL_BPF_PATH_LEN ? size : TWL_BPF_PATH_LEN;

	if (!twl_cgroup_path_from_raw((const char *)data, n, size & 1, path,
				      sizeof(path))) {
		if (!twl_utf8_valid(path, strlen(path)) || path[0] != '/')
			abort();
		if (!twl_container_from_cgroup(path, cont, sizeof(cont)) &&
		    !twl_utf8_valid(cont, strlen(cont)))
			abort();
	}
	twl_comm_sanitize((const char *)data, size < 16 ? size : 16, comm);
	if (strlen(comm) > 16 || !twl_utf8_valid(comm, strlen(comm)))
		abort();
	memcpy(val, data, size < sizeof(val) - 1 ? size : sizeof(val) - 1);
	(void)twl_value_not_1(val);
	return 0;
}
