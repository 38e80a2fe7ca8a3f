// SPDX-License-Identifier: GPL-2.0
/*
 * The export's kinds of use and kernel warnings (export_kinds.h): a
 * maintainer reads "in use" as "something configures or listens to it";
 * a monitoring daemon reading a file, or a feature BPF cannot see, must
 * not look like either a use or a proof of no use. Pure: no I/O.
 */
#include <errno.h>
#include <string.h>

#include "api/export_json.h"
#include "api/export.h"
#include "api/export_kinds.h"
#include "api/export_where.h"

static const char *plural(json_int_t n)
{
	return n == 1 ? "" : "s";
}

/* Contract: see export_kinds.h. */
bool twl_export_feature_used(const json_t *f)
{
	return int_of(f, "hosts_using") > 0 || int_of(f, "uses") > 0;
}

/* Contract: see export_kinds.h. */
int twl_export_readers_into(struct twl_buf *out, const json_t *readers)
{
	const json_t *r;
	size_t i;
	int rc = 0;

	json_array_foreach(readers, i, r)
	{
		rc = twl_buf_printf(out,
				    "%s%s on %" JSON_INTEGER_FORMAT " host%s",
				    i ? ", " : "", str_or(r, "process", "?"),
				    int_of(r, "hosts"),
				    plural(int_of(r, "hosts")));
		if (rc)
			break;
	}
	return rc;
}

/* Contract: see export_kinds.h. */
int twl_export_warning_kernels_into(struct twl_buf *out, const json_t *kernels)
{
	const json_t *k;
	size_t i;
	int rc = 0;

	json_array_foreach(kernels, i, k)
	{
		const char *origin = str_or(k, "origin", "unknown");
		const char *kernel = str_or(k, "kernel", "");

		rc = twl_buf_printf(
			out, "%s%s%s: %" JSON_INTEGER_FORMAT " host%s",
			i ? "; " : "",
			!strcmp(origin, "upstream") ? "upstream " :
			!strcmp(origin, "backport") ? "backport on " :
						      "kernel ",
			kernel[0] ? kernel : "unknown", int_of(k, "hosts"),
			plural(int_of(k, "hosts")));
		if (rc)
			break;
	}
	return rc;
}

/* The kernel warnings line, when any was seen. */
static int text_warnings(struct twl_buf *b, const json_t *f)
{
	const json_t *kw = json_object_get(f, "kernel_warnings");
	json_int_t hosts = int_of(kw, "hosts"), n = int_of(kw, "warnings");
	struct twl_buf list;
	int rc = 0;

	if (!hosts)
		return 0;
	twl_buf_init(&list, 64 * 1024);
	TRY(twl_buf_printf(&list,
			   "Kernel warnings: %" JSON_INTEGER_FORMAT
			   " host%s, %" JSON_INTEGER_FORMAT " warning%s (",
			   hosts, plural(hosts), n, plural(n)));
	TRY(twl_export_warning_kernels_into(&list,
					    json_object_get(kw, "kernels")));
	TRY(twl_buf_append(&list, ")", 1));
	TRY(twl_export_wrap(b, list.data, "  ", "    ", TWL_EXPORT_WIDTH));
out:
	twl_buf_fini(&list);
	return rc;
}

/* Contract: see export_kinds.h. */
int twl_export_text_kinds(struct twl_buf *b, const json_t *f)
{
	json_int_t conf = int_of(f, "hosts_configuring"),
		   listen = int_of(f, "hosts_listening"),
		   ro = int_of(f, "hosts_reading_only");
	const json_t *readers = json_object_get(f, "readers");
	struct twl_buf list;
	int rc = 0;

	twl_buf_init(&list, 64 * 1024);
	if (conf || listen || ro)
		TRY(twl_export_wrapf(
			b, "  ", "    ",
			"Configured on %" JSON_INTEGER_FORMAT
			" host%s, listened to on %" JSON_INTEGER_FORMAT
			"; read and nothing else on %" JSON_INTEGER_FORMAT,
			conf, plural(conf), listen, ro));
	if (json_array_size(readers)) {
		TRY(twl_buf_printf(&list, "Read only (monitoring), by: "));
		TRY(twl_export_readers_into(&list, readers));
		TRY(twl_export_wrap(b, list.data, "  ", "    ",
				    TWL_EXPORT_WIDTH));
	}
	TRY(text_warnings(b, f));
	if (json_is_false(json_object_get(f, "bpf_measured")))
		TRY(twl_export_wrapf(b, "  ", "    ",
				     "Not counted by BPF (it counts memory "
				     "controller files only): seen through "
				     "kernel warnings alone"));
out:
	twl_buf_fini(&list);
	return rc;
}

/* Which closing paragraph an unused feature @f belongs to. */
enum unused_kind { UNUSED_READ, UNUSED_SILENT, UNUSED_NOT_MEASURED };

static enum unused_kind unused_kind(const json_t *f, bool bpf_fleet)
{
	if (int_of(f, "hosts_reading_only") > 0 ||
	    json_array_size(json_object_get(f, "readers")))
		return UNUSED_READ;
	if (bpf_fleet && !json_is_false(json_object_get(f, "bpf_measured")))
		return UNUSED_SILENT;
	return UNUSED_NOT_MEASURED;
}

/* One paragraph "@lead: id, id." of the unused features of @kind. */
static int text_unused_kind(struct twl_buf *b, const json_t *data,
			    const char *list, enum unused_kind kind,
			    bool (*on_list)(const json_t *f, const char *list))
{
	static const char *const leads[] = {
		"Read but not configured (only read, by monitoring)",
		"Not seen in use in this period",
		("Not measured (no BPF count of them on this fleet, no "
		 "kernel warning of them seen)"),
	};
	const json_t *cov =
		json_object_get(json_object_get(data, "fleet"), "coverage");
	const json_t *f;
	struct twl_buf names;
	size_t i, n = 0;
	int rc = 0;

	twl_buf_init(&names, 64 * 1024);
	TRY(twl_buf_printf(&names, "%s: ", leads[kind]));
	json_array_foreach(json_object_get(data, "features"), i, f)
	{
		json_int_t ro = int_of(f, "hosts_reading_only");

		if (twl_export_feature_used(f) || !on_list(f, list) ||
		    unused_kind(f, int_of(cov, "bpf_memory") > 0) != kind)
			continue;
		TRY(twl_buf_printf(&names, "%s%s", n++ ? ", " : "",
				   str_or(f, "id", "?")));
		if (kind == UNUSED_READ)
			TRY(twl_buf_printf(&names,
					   " (%" JSON_INTEGER_FORMAT " host%s)",
					   ro, plural(ro)));
	}
	if (!n)
		goto out;
	TRY(twl_buf_append(&names, ".", 1));
	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_wrap(b, names.data, "", "", TWL_EXPORT_WIDTH));
out:
	twl_buf_fini(&names);
	return rc;
}

/* Contract: see export_kinds.h. */
int twl_export_text_unused(struct twl_buf *b, const json_t *data,
			   const char *list,
			   bool (*on_list)(const json_t *f, const char *list))
{
	int rc = 0;

	TRY(text_unused_kind(b, data, list, UNUSED_READ, on_list));
	TRY(text_unused_kind(b, data, list, UNUSED_SILENT, on_list));
	TRY(text_unused_kind(b, data, list, UNUSED_NOT_MEASURED, on_list));
out:
	return rc;
}
