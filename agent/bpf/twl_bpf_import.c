// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrading from the previous map layout: the counts an agent of the "v1"
 * layout pinned (usage value without the value summary) are carried into
 * this run's maps, then its links and maps are unpinned, so that a
 * receiver's cumulative counts for the boot neither stall (a fresh map
 * starts from zero, and receivers keep the maximum per key) nor double
 * (the old links would keep counting next to the new ones).
 *
 * Order, each step safe to repeat after a crash: the old links are unpinned
 * first (their programs stop, the old maps hold their final counts), the
 * counts are written into the new maps with BPF_ANY (set, not add: a second
 * run writes the same numbers), then the old maps are unpinned, and only
 * then are the new probes attached (twl_bpf_attach_all()). Uses between the
 * first and the last step, a moment, are not counted. When the new
 * directory already has links pinned, they counted all along and the old
 * pins are the leftovers of a downgrade: they are removed, not imported.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <twilight/util.h>

#include "twl_bpf_internal.h"

/* The directory name of the previous layout, beside the current one. */
#define OLD_PIN_NAME "v1"

/* The usage value of the v1 layout. */
struct usage_val_v1 {
	__u64 count, failed, condition_met, first_ns, last_ns;
	__u32 last_pid, pad;
};

/* The maps an agent of the v1 layout pinned (the rest are links). */
static const char *const old_maps[] = {
	"twl_usage",	"twl_paths", "twl_files",   "twl_cft",
	"twl_overflow", "twl_meta",  "twl_scratch",
};

struct old_pins {
	char dir[PATH_MAX];
	int usage, paths, files, overflow, meta;
};

static bool is_old_map(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(old_maps) / sizeof(old_maps[0]); i++)
		if (!strcmp(name, old_maps[i]))
			return true;
	return false;
}

/* The old directory beside b->pin_dir into @out; false when there is none. */
static bool old_dir(const struct twl_bpf *b, char *out, size_t cap)
{
	const char *slash = strrchr(b->pin_dir, '/');
	int n;

	if (!slash || !strcmp(slash + 1, OLD_PIN_NAME))
		return false;
	n = snprintf(out, cap, "%.*s/%s", (int)(slash - b->pin_dir), b->pin_dir,
		     OLD_PIN_NAME);
	return n > 0 && (size_t)n < cap && !access(out, F_OK);
}

/* Unlink every pin in @dir that is a link (@links) or a map (!@links). */
static void unpin_old(const char *dir, bool links)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || is_old_map(de->d_name) == links)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (unlink(path))
			twl_log(LOG_WARNING,
				"bpf: cannot unpin %s of the previous agent: %s; remove it by hand",
				path, strerror(errno));
	}
	closedir(d);
}

/* The fd of old map @name when its key and value sizes are @ks and @vs. */
static int open_old_map(const char *dir, const char *name, __u32 ks, __u32 vs)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.key_size != ks ||
	    info.value_size != vs) {
		twl_log(LOG_WARNING,
			"bpf: %s has an unknown layout (key %u, value %u bytes); its counts are not carried over",
			path, info.key_size, info.value_size);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Old file ids are below this (ids are handed out from 1, one per entry of
 * a files map of TWL_BPF_FILE_ENTRIES).
 */
#define OLD_IDS (TWL_BPF_FILE_ENTRIES + 1)

/*
 * ids[old id] = this run's id of the same file (by name), 0 when the file
 * is no longer in the catalog (nothing of it would be sent).
 */
static void map_file_ids(const struct twl_bpf *b, int old_files, __u32 *ids)
{
	struct twl_bpf_file_key fk, *prev = NULL;
	struct twl_bpf_file_val fv, nv;

	memset(ids, 0, OLD_IDS * sizeof(*ids));
	while (!bpf_map_get_next_key(old_files, prev, &fk)) {
		prev = &fk;
		if (!bpf_map_lookup_elem(old_files, &fk, &fv) &&
		    fv.id < OLD_IDS &&
		    !bpf_map_lookup_elem(b->files_fd, &fk, &nv))
			ids[fv.id] = nv.id;
	}
}

/* Every old usage entry into the new map; the number carried over. */
static size_t import_usage(const struct twl_bpf *b, const struct old_pins *o)
{
	struct twl_bpf_usage_key k, *prev = NULL;
	struct twl_bpf_usage_val v;
	struct usage_val_v1 ov;
	__u32 ids[OLD_IDS];
	size_t n = 0, failed = 0;
	int err = 0;

	map_file_ids(b, o->files, ids);
	while (!bpf_map_get_next_key(o->usage, prev, &k)) {
		struct twl_bpf_usage_key nk = k;

		prev = &k;
		if (bpf_map_lookup_elem(o->usage, &k, &ov) ||
		    k.file_id >= OLD_IDS || !ids[k.file_id])
			continue;
		nk.file_id = ids[k.file_id];
		v = (struct twl_bpf_usage_val){
			.count = ov.count,
			.failed = ov.failed,
			.condition_met = ov.condition_met,
			.first_ns = ov.first_ns,
			.last_ns = ov.last_ns,
			.last_pid = ov.last_pid,
		};
		if (bpf_map_update_elem(b->usage_fd, &nk, &v, BPF_ANY)) {
			err = -errno;
			failed++;
		} else {
			n++;
		}
	}
	if (failed)
		twl_log(LOG_WARNING,
			"bpf: %zu counters of the previous agent could not be carried over: %s",
			failed, strerror(-err));
	return n;
}

/* Paths (same layout), the first attach time and the overflow counts. */
static void import_rest(const struct twl_bpf *b, const struct old_pins *o)
{
	struct twl_bpf_path_key pk, *prev = NULL;
	struct twl_bpf_path_val pv;
	__u32 idx = TWL_BPF_META_ATTACH_NS;
	int ncpu = libbpf_num_possible_cpus();
	__u64 t = 0, *per_cpu;

	while (o->paths >= 0 && !bpf_map_get_next_key(o->paths, prev, &pk)) {
		prev = &pk;
		if (!bpf_map_lookup_elem(o->paths, &pk, &pv))
			bpf_map_update_elem(b->paths_fd, &pk, &pv, BPF_ANY);
	}
	if (o->meta >= 0 && !bpf_map_lookup_elem(o->meta, &idx, &t) && t)
		bpf_map_update_elem(b->meta_fd, &idx, &t, BPF_ANY);
	if (o->overflow < 0 || ncpu <= 0)
		return;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	for (idx = 0; per_cpu && idx < TWL_BPF_OVF_NR; idx++)
		if (!bpf_map_lookup_elem(o->overflow, &idx, per_cpu))
			bpf_map_update_elem(b->overflow_fd, &idx, per_cpu,
					    BPF_ANY);
	free(per_cpu);
}

static void close_old(struct old_pins *o)
{
	int *fds[] = { &o->usage, &o->paths, &o->files, &o->overflow,
		       &o->meta };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
}

/* Open the old maps; false when the usage or files map is unreadable. */
static bool open_old(struct old_pins *o)
{
	o->usage = open_old_map(o->dir, "twl_usage",
				sizeof(struct twl_bpf_usage_key),
				sizeof(struct usage_val_v1));
	o->files = open_old_map(o->dir, "twl_files",
				sizeof(struct twl_bpf_file_key),
				sizeof(struct twl_bpf_file_val));
	o->paths = open_old_map(o->dir, "twl_paths",
				sizeof(struct twl_bpf_path_key),
				sizeof(struct twl_bpf_path_val));
	o->meta =
		open_old_map(o->dir, "twl_meta", sizeof(__u32), sizeof(__u64));
	o->overflow = open_old_map(o->dir, "twl_overflow", sizeof(__u32),
				   sizeof(__u64));
	return o->usage >= 0 && o->files >= 0;
}

/* Contract: see twl_bpf_internal.h. */
void twl_bpf_import_old(struct twl_bpf *b)
{
	struct old_pins o = { .usage = -1,
			      .paths = -1,
			      .files = -1,
			      .overflow = -1,
			      .meta = -1 };
	bool downgraded = twl_bpf_active(b);

	if (!b->pinning || b->usage_fd < 0 || !old_dir(b, o.dir, sizeof(o.dir)))
		return;
	if (!downgraded && !open_old(&o)) {
		twl_log(LOG_WARNING,
			"bpf: cannot read the counts of the previous agent in %s; left there, its links still counting, and not carried over",
			o.dir);
		goto out;
	}
	unpin_old(o.dir, true); /* its programs stop: final counts */
	if (downgraded) {
		twl_log(LOG_NOTICE,
			"bpf: %s has links pinned, so %s is left over from an older agent run after this one: removed, not carried over",
			b->pin_dir, o.dir);
	} else {
		import_rest(b, &o);
		twl_log(LOG_NOTICE,
			"bpf: carried %zu counters over from the previous agent's %s",
			import_usage(b, &o), o.dir);
	}
	unpin_old(o.dir, false);
	if (rmdir(o.dir))
		twl_log(LOG_WARNING, "bpf: cannot remove %s: %s", o.dir,
			strerror(errno));
out:
	close_old(&o);
}
