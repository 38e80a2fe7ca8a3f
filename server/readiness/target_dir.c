// SPDX-License-Identifier: GPL-2.0
/*
 * The shipped targets and the targets directory (target_dir.h): the I/O
 * around target.c's documents.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <twilight/util.h>

#include "readiness/target.h"
#include "readiness/target_dir.h"

/* schema/targets.json (embed_targets.cmake) */
extern const char twl_targets_shipped_json[];

/* Contract: see target_dir.h. */
json_t *twl_targets_shipped(void)
{
	json_t *doc = json_loads(twl_targets_shipped_json,
				 JSON_REJECT_DUPLICATES, NULL);
	json_t *t;
	char err[160];
	size_t i;

	if (!doc) {
		errno = EINVAL;
		return NULL;
	}
	json_array_foreach(json_object_get(doc, "targets"), i, t)
	{
		if (json_object_set_new(t, "origin", json_string("shipped")) ||
		    twl_target_check(t, err, sizeof(err))) {
			json_decref(doc);
			errno = EINVAL;
			return NULL;
		}
	}
	return doc;
}

/* Whether @arr holds a target named @name. */
static int has_name(const json_t *arr, const char *name)
{
	const json_t *t;
	size_t i;

	json_array_foreach(arr, i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")),
			    name))
			return 1;
	}
	return 0;
}

/* The target in file @file of @dir (NAME.json or NAME.config), or NULL
 * with @err telling why. */
static json_t *load_file(const char *dir, const char *file, char *err,
			 size_t cap)
{
	const char *dot = strrchr(file, '.');
	char path[PATH_MAX], name[TWL_TARGET_MAX_NAME + 1];
	json_t *t = NULL;
	char *text;
	size_t len;
	int rc;

	if (dot - file > TWL_TARGET_MAX_NAME) {
		snprintf(err, cap, "its name is longer than %d bytes",
			 TWL_TARGET_MAX_NAME);
		return NULL;
	}
	memcpy(name, file, (size_t)(dot - file));
	name[dot - file] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		snprintf(err, cap, "its path is too long");
		return NULL;
	}
	rc = twl_read_file(path, TWL_TARGET_MAX_FILE, &text, &len);
	if (rc) {
		snprintf(err, cap, "cannot read: %s", strerror(-rc));
		return NULL;
	}
	if (!strcmp(dot, ".config")) {
		rc = twl_target_from_kconfig(name, text, len, NULL, "file", &t,
					     err, cap);
	} else {
		t = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
		rc = twl_target_check(t, err, cap);
		if (!rc && strcmp(json_string_value(json_object_get(t, "name")),
				  name)) {
			snprintf(err, cap, "its name is not the file's");
			rc = -EINVAL;
		}
		if (!rc && !json_object_get(t, "origin"))
			json_object_set_new(t, "origin", json_string("file"));
	}
	free(text);
	if (rc) {
		json_decref(t);
		return NULL;
	}
	return t;
}

/* The target files of @dir: names NAME.json / NAME.config, sorted. */
static int dir_files(const char *dir, json_t *files)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		size_t n = dot ? (size_t)(dot - de->d_name) : 0;
		char name[TWL_TARGET_MAX_NAME + 1];

		if (!dot || (strcmp(dot, ".json") && strcmp(dot, ".config")) ||
		    !n || n > TWL_TARGET_MAX_NAME)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, de->d_name);
		if (!twl_target_name_ok(name))
			continue;
		if (json_array_append_new(files, json_string(de->d_name))) {
			rc = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Add the targets of @dir's files to @out, the rejects to @errors. */
static int load_dir(const char *dir, json_t *out, json_t *errors)
{
	json_t *files = json_array(), *t;
	const char *names[TWL_TARGETS_MAX * 2];
	size_t i, n = 0, loaded = 0;
	char err[256];
	int rc;

	rc = files ? dir_files(dir, files) : -ENOMEM;
	for (i = 0;
	     !rc && i < json_array_size(files) && n < TWL_TARGETS_MAX * 2; i++)
		names[n++] = json_string_value(json_array_get(files, i));
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; !rc && i < n; i++) {
		t = loaded < TWL_TARGETS_MAX ?
			    load_file(dir, names[i], err, sizeof(err)) :
			    NULL;
		if (loaded >= TWL_TARGETS_MAX)
			snprintf(err, sizeof(err), "more than %d targets",
				 TWL_TARGETS_MAX);
		else if (t && has_name(out, json_string_value(json_object_get(
						    t, "name")))) {
			snprintf(err, sizeof(err),
				 "a target of this name exists");
			json_decref(t);
			t = NULL;
		}
		if (t)
			loaded++;
		rc = t ? json_array_append_new(out, t) :
			 json_array_append_new(
				 errors, json_pack("{s:s, s:s}", "file",
						   names[i], "reason", err));
		rc = rc ? -ENOMEM : 0;
	}
	json_decref(files);
	return rc;
}

/* Contract: see target_dir.h. */
int twl_targets_load(const char *data_dir, json_t **targets, json_t **errors)
{
	json_t *shipped = twl_targets_shipped();
	char dir[PATH_MAX];
	int rc = -ENOMEM;

	*targets = NULL;
	*errors = json_array();
	if (!shipped || !*errors)
		goto out;
	*targets = json_incref(json_object_get(shipped, "targets"));
	snprintf(dir, sizeof(dir), "%s/%s", data_dir, TWL_TARGETS_DIR);
	rc = load_dir(dir, *targets, *errors);
out:
	json_decref(shipped);
	if (rc) {
		json_decref(*targets);
		json_decref(*errors);
		*targets = *errors = NULL;
	}
	return rc;
}

/* Contract: see target_dir.h. */
int twl_targets_find(const char *data_dir, const char *name, json_t **out)
{
	json_t *all, *errors, *t;
	size_t i;
	int rc = twl_targets_load(data_dir, &all, &errors);

	*out = NULL;
	if (rc)
		return rc;
	json_array_foreach(all, i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")),
			    name)) {
			*out = json_incref(t);
			break;
		}
	}
	json_decref(all);
	json_decref(errors);
	return *out ? 0 : -ENOENT;
}

/* Contract: see target_dir.h. */
int twl_targets_save(const char *data_dir, const json_t *t)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	json_t *shipped, *files = NULL;
	char dir[PATH_MAX / 2], path[PATH_MAX], other[PATH_MAX], err[160];
	char *text = NULL;
	struct stat st;
	int rc;

	if (twl_target_check(t, err, sizeof(err)))
		return -EINVAL;
	shipped = twl_targets_shipped();
	if (!shipped)
		return -errno;
	snprintf(dir, sizeof(dir), "%s/%s", data_dir, TWL_TARGETS_DIR);
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	snprintf(other, sizeof(other), "%s/%s.config", dir, name);
	/* a shipped target, or an operator's .config, keeps its name */
	rc = has_name(json_object_get(shipped, "targets"), name) ||
			     !stat(other, &st) ?
		     -EEXIST :
		     0;
	files = json_array();
	if (!rc)
		rc = files ? dir_files(dir, files) : -ENOMEM;
	if (!rc && json_array_size(files) >= TWL_TARGETS_MAX && stat(path, &st))
		rc = -EDQUOT;
	if (!rc && mkdir(dir, 0750) && errno != EEXIST)
		rc = -errno;
	text = rc ? NULL : json_dumps(t, JSON_COMPACT);
	if (!rc && !text)
		rc = -ENOMEM;
	if (!rc)
		rc = twl_write_file_atomic(path, text, strlen(text), 0640);
	free(text);
	json_decref(files);
	json_decref(shipped);
	return rc;
}
