// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's evidence (export_evidence.h): which features BPF
 * measures, and the provenance of kernel warnings, for every backend.
 */
#include <errno.h>
#include <string.h>

#include "readiness/target.h"
#include "store/export_evidence.h"

/* Contract: see export_evidence.h. */
bool twl_export_bpf_measurable(const struct twl_feature *f)
{
	/* usage.bpf.c hooks the memory controller's file handlers only */
	if (!f || !f->subsystem || strcmp(f->subsystem, "memory"))
		return false;
	return (f->files && f->files[0]) ||
	       (f->event_files && f->event_files[0]);
}

/* Contract: see export_evidence.h. */
const char *twl_export_warning_origin(const struct twl_feature *f,
				      const char *kernel)
{
	long since = twl_kernel_version(f ? f->kernel_version : NULL);
	long v = twl_kernel_version(kernel);

	if (since < 0 || v < 0)
		return "unknown";
	return v >= since ? "upstream" : "backport";
}

/* Contract: see export_evidence.h. */
int twl_export_warning_origins(const struct twl_feature *f, json_t *kernels)
{
	json_t *k;
	size_t i;

	json_array_foreach(kernels, i, k)
	{
		const char *origin = twl_export_warning_origin(
			f, json_string_value(json_object_get(k, "kernel")));

		if (json_object_set_new(k, "origin", json_string(origin)))
			return -ENOMEM;
	}
	return 0;
}
