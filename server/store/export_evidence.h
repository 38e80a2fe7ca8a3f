/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The linux-mm export's evidence, the same for every backend
 * (export_evidence.c): whether BPF can count a feature at all, and where
 * the kernel warnings of a feature came from. Pure: no store, no I/O.
 */
#ifndef TWL_SERVER_STORE_EXPORT_EVIDENCE_H
#define TWL_SERVER_STORE_EXPORT_EVIDENCE_H

#include <stdbool.h>

#include <jansson.h>

#include <twilight/catalog.h>

/*
 * twl_export_bpf_measurable - whether the agent's BPF counters can see a
 * use of @f: a memory controller feature with a control or event file.
 * Every other feature (cpuset, freezer, blkio, cgroup core, boot
 * parameters such as swapaccount) is seen through kernel warnings alone.
 */
bool twl_export_bpf_measurable(const struct twl_feature *f);

/*
 * twl_export_warning_origin - "upstream" when @kernel (a release such as
 * "6.12.9-amd64") is at or after @f's kernel_version, the release whose
 * mainline kernel prints the warning; "backport" when older (only a
 * kernel carrying the project's backport series prints it there);
 * "unknown" when either version is missing or not a release.
 */
const char *twl_export_warning_origin(const struct twl_feature *f,
				      const char *kernel);

/*
 * twl_export_warning_origins - give each of @kernels (the export's
 * kernel_warnings.kernels: objects with a "kernel" release) its "origin",
 * twl_export_warning_origin() of @f. 0 or -ENOMEM.
 */
int twl_export_warning_origins(const struct twl_feature *f, json_t *kernels);

#endif /* TWL_SERVER_STORE_EXPORT_EVIDENCE_H */
