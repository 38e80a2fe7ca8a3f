/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The export's evidence apart from uses (export_kinds.c), private to the
 * export: per feature the hosts that configure, listen or only read it
 * and its kernel warnings with their provenance; at the end, the features
 * without a use, told apart by why (read only, measured and silent, not
 * measured at all).
 */
#ifndef TWL_SERVER_API_EXPORT_KINDS_H
#define TWL_SERVER_API_EXPORT_KINDS_H

#include <stdbool.h>

#include <jansson.h>

#include <twilight/util.h>

/*
 * twl_export_feature_used - whether feature @f of the export data is in
 * use: a host configured or listened to it (or a kernel warning or the
 * census says so), or BPF counted a write or registration. Reads alone
 * never make a feature used.
 */
bool twl_export_feature_used(const json_t *f);

/*
 * twl_export_text_kinds - append feature @f's kinds of use: "Configured
 * on N hosts, listened to on M", the processes that only read it, and its
 * kernel warnings by kernel and provenance. 0 or a negative errno.
 */
int twl_export_text_kinds(struct twl_buf *b, const json_t *f);

/*
 * twl_export_readers_into - append feature @f's "readers" to @out as
 * "runc on 812 hosts, node_exporter on 3 hosts". 0 or a negative errno.
 */
int twl_export_readers_into(struct twl_buf *out, const json_t *readers);

/*
 * twl_export_warning_kernels_into - append kernel_warnings.kernels to
 * @out as "upstream 6.12.9: 1 host; backport on 6.1.0-28: 1 host".
 * 0 or a negative errno.
 */
int twl_export_warning_kernels_into(struct twl_buf *out, const json_t *kernels);

/*
 * twl_export_text_unused - append the closing paragraphs of the features
 * of @feats not in use, those of @list only (NULL: all; @on_list decides):
 * read but not configured; not seen in use (measured: BPF counts the
 * feature and @data's fleet had BPF on the memory controller of a host);
 * not measured (no BPF count of them on this fleet, no kernel warning of
 * them seen). 0 or a negative errno.
 */
int twl_export_text_unused(struct twl_buf *b, const json_t *data,
			   const char *list,
			   bool (*on_list)(const json_t *f, const char *list));

#endif /* TWL_SERVER_API_EXPORT_KINDS_H */
