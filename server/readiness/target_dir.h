/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where targets come from (target.h): the shipped ones (schema/
 * targets.json, compiled in) and the files of the targets directory,
 * "<data_dir>/targets": NAME.json (a target document) or NAME.config (a
 * kernel .config, its release from the header), dropped by an operator or
 * written by POST /api/v1/targets. Files are read at every call, so a
 * dropped file counts at once; any thread may call these.
 */
#ifndef TWL_SERVER_READINESS_TARGET_DIR_H
#define TWL_SERVER_READINESS_TARGET_DIR_H

#include <jansson.h>

#define TWL_TARGETS_DIR "targets"

/*
 * twl_targets_shipped - schema/targets.json as compiled in: {"version",
 * "targets": [...], "deadlines": [...]}, each target with origin
 * "shipped". A new reference, or NULL with errno (ENOMEM, or EINVAL if
 * the compiled-in text is not valid, which the unit tests rule out).
 */
json_t *twl_targets_shipped(void);

/*
 * twl_targets_load - every target: the shipped ones, then those of
 * @data_dir's targets directory by file name (at most TWL_TARGETS_MAX;
 * a missing directory holds none). A file that is not a valid target, or
 * names a target already loaded, is left out and described in *@errors
 * ([{"file", "reason"}]). 0 with two new arrays, or a negative errno.
 */
int twl_targets_load(const char *data_dir, json_t **targets, json_t **errors);

/*
 * twl_targets_find - the target named @name (new reference in *@out), or
 * -ENOENT; other negative errnos as twl_targets_load().
 */
int twl_targets_find(const char *data_dir, const char *name, json_t **out);

/*
 * twl_targets_save - store valid target @t as "<name>.json" in the
 * targets directory (created 0750 when missing), atomically, replacing a
 * file of that name. -EEXIST when a shipped target has the name, -EDQUOT
 * when the directory already holds TWL_TARGETS_MAX targets and none of
 * this name, -EINVAL if @t is not valid, or another negative errno.
 */
int twl_targets_save(const char *data_dir, const json_t *t);

#endif /* TWL_SERVER_READINESS_TARGET_DIR_H */
