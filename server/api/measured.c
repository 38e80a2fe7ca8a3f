// SPDX-License-Identifier: GPL-2.0
/*
 * "Not seen" or "not measured" (measured.h). The agent's BPF counters
 * count memory controller files only (agent/bpf/twl_bpf.h), so a zero for
 * any other feature says nothing unless a kernel warning of it was seen,
 * and a zero for a memory feature says nothing when no host counts by BPF.
 */
#include <errno.h>

#include "api/measured.h"
#include "store/export_evidence.h"

/* Contract: see measured.h. */
bool twl_feature_measured(const struct twl_feature *f, bool seen,
			  json_int_t bpf_memory)
{
	return seen || (bpf_memory > 0 && twl_export_bpf_measurable(f));
}

/* Contract: see measured.h. */
int twl_summary_measured(json_t *doc)
{
	json_t *feats = json_object_get(doc, "features");
	json_t *cov = json_object_get(doc, "coverage"), *o;
	json_int_t hosts, bpf, blind, log;
	size_t i;

	if (!json_is_array(feats))
		return -EINVAL;
	hosts = json_integer_value(json_object_get(cov, "hosts"));
	bpf = json_integer_value(json_object_get(cov, "bpf_memory"));
	blind = json_integer_value(json_object_get(cov, "unmeasured"));
	log = hosts - bpf - blind; /* the export's "kernel log only" */
	if (json_is_object(cov) &&
	    json_object_set_new(cov, "kmsg_only",
				json_integer(log > 0 ? log : 0)))
		return -ENOMEM;
	json_array_foreach(feats, i, o)
	{
		const char *id = json_string_value(json_object_get(o, "id"));
		json_t *first = json_object_get(o, "first_seen");
		bool seen = first && !json_is_null(first);

		if (json_object_set_new(
			    o, "measured",
			    json_boolean(twl_feature_measured(
				    twl_catalog_find(id), seen, bpf))))
			return -ENOMEM;
	}
	return 0;
}
