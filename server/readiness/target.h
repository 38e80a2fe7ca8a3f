/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Upgrade targets (schema/targets.md): a kernel release and the Kconfig
 * facts that decide which catalog features it removes, makes a no-op or
 * warns about. target.c is pure (documents in, documents out);
 * target_dir.c loads the shipped targets and an operator's from the data
 * directory, and stores uploaded ones there.
 *
 * A target document: {"name", "title", "kernel", "config": {"CONFIG_X":
 * bool}, "source", "origin"}; origin is "shipped", "file" (dropped into
 * the targets directory) or "uploaded" (POST /api/v1/targets).
 */
#ifndef TWL_SERVER_READINESS_TARGET_H
#define TWL_SERVER_READINESS_TARGET_H

#include <stddef.h>

#include <jansson.h>

/* Longest target name; names are [a-z0-9._-], not starting with '.'. */
#define TWL_TARGET_MAX_NAME 64
/* Most targets an operator may add (files in the targets directory). */
#define TWL_TARGETS_MAX 64
/* Largest target file read from the targets directory. */
#define TWL_TARGET_MAX_FILE (4u << 20)

/* twl_target_name_ok - whether @name is a valid target name. */
int twl_target_name_ok(const char *name);

/*
 * twl_target_check - 0 if @t is a valid target document (name, kernel
 * "M.m" or "M.m.p..." release, config of booleans, title and source
 * strings of at most 1024 bytes, where present), else -EINVAL with @err
 * (@cap bytes) saying which member is wrong.
 */
int twl_target_check(const json_t *t, char *err, size_t cap);

/*
 * twl_target_from_kconfig - a new target named @name from the .config
 * text @text (@len bytes, twl_kconfig_parse()), for kernel @kernel, or
 * (@kernel NULL) the release of the .config's header. -EINVAL (with @err)
 * when the text is not a .config, no release is known or @name is bad;
 * -EFBIG; -ENOMEM. @origin becomes the document's origin.
 */
int twl_target_from_kconfig(const char *name, const char *text, size_t len,
			    const char *kernel, const char *origin,
			    json_t **out, char *err, size_t cap);

/*
 * twl_target_plan - what target @t does to each catalog feature, derived
 * from the feature's catalog entry and @t's config and kernel:
 * {"removed": [{"id", "title", "config"}] (the feature's config symbol is
 * off in @t), "no_op": [{"id", "title", "stopped_working"}] (stopped
 * working at or before @t's release, already on every host that runs a
 * release past it: listed, not counted as breaking), "warns": [{"id",
 * "title", "since"}] (present and warning), "interfaces": {feature id: v1
 * controller} (the removed features that are a controller's whole v1
 * interface, ids ending ".interface"), "unstated": [config symbols the
 * catalog names that @t does not state; their features are taken as
 * present]}. NULL (errno ENOMEM) on failure.
 */
json_t *twl_target_plan(const json_t *t);

/*
 * twl_target_summary - @t for listing: its members but "config", which
 * holds only the symbols the catalog names (null: not stated), and its
 * plan's "removed", "no_op" and "warns" as lists of feature ids. NULL (errno ENOMEM) on failure.
 */
json_t *twl_target_summary(const json_t *t);

/*
 * twl_kernel_version - "v6.12", "6.12" or "6.12.118-amd64" as 6012;
 * -1 when @s is not such a release.
 */
long twl_kernel_version(const char *s);

#endif /* TWL_SERVER_READINESS_TARGET_H */
