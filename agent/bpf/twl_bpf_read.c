// SPDX-License-Identifier: GPL-2.0
/*
 * Draining the BPF maps: the usage map snapshot, converted into wire
 * usage[] entries (paths, comm, privacy: usage_conv.c) and only the keys
 * that changed since the previous collect; probe health and overflows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "twl_bpf_internal.h"

/* Read the files map into @names (id -> name); returns the count. */
static size_t read_files(struct twl_bpf *b, struct file_name *names, size_t cap)
{
	struct twl_bpf_file_key fk, *prev = NULL;
	struct twl_bpf_file_val fv;
	size_t n = 0;

	while (n < cap && !bpf_map_get_next_key(b->files_fd, prev, &fk)) {
		if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv)) {
			names[n].id = fv.id;
			memcpy(names[n].name, fk.name, sizeof(fk.name));
			names[n].name[sizeof(names[n].name) - 1] = '\0';
			n++;
		}
		prev = &fk;
	}
	return n;
}

static const char *file_name_of(const struct file_name *names, size_t n,
				__u32 id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i].id == id)
			return names[i].name;
	return NULL;
}

static const struct twl_feature *feature_of(const char *file, unsigned op)
{
	if (!file)
		return NULL;
	return op == TWL_BPF_OP_REGISTER ? twl_catalog_find_event_file(file) :
					   twl_catalog_find_file(file);
}

static int cmp_snap(const void *a, const void *b)
{
	return memcmp(&((const struct snap *)a)->key,
		      &((const struct snap *)b)->key,
		      sizeof(struct twl_bpf_usage_key));
}

/*
 * Snapshot the usage map: keys sorted and unique (a hash map walked while
 * the kernel inserts may, in theory, yield a key twice). *@out is malloc'd.
 */
static int read_usage(struct twl_bpf *b, struct snap **out, size_t *n_out)
{
	struct twl_bpf_usage_key k, *prev = NULL;
	struct snap *s;
	size_t n = 0, i, w;

	s = calloc(TWL_BPF_USAGE_ENTRIES, sizeof(*s));
	if (!s)
		return -ENOMEM;
	while (n < TWL_BPF_USAGE_ENTRIES &&
	       !bpf_map_get_next_key(b->usage_fd, prev, &k)) {
		s[n].key = k;
		prev = &s[n].key;
		n++;
	}
	qsort(s, n, sizeof(*s), cmp_snap);
	for (i = 0, w = 0; i < n; i++) {
		if (w && !cmp_snap(&s[w - 1], &s[i]))
			continue;
		if (bpf_map_lookup_elem(b->usage_fd, &s[i].key, &s[w].val))
			continue;
		if (w != i)
			s[w].key = s[i].key;
		w++;
	}
	*out = s;
	*n_out = w;
	return 0;
}

static void path_of(struct twl_bpf *b, __u64 cgid, __u32 hier, char *out,
		    size_t cap)
{
	struct twl_bpf_path_key pk = { .cgid = cgid, .hier = hier };
	struct twl_bpf_path_val pv;

	if (!cgid) {
		snprintf(out, cap, "%s", "");
		return;
	}
	if (!bpf_map_lookup_elem(b->paths_fd, &pk, &pv) &&
	    !twl_cgroup_path_from_raw(
		    pv.path,
		    pv.len < sizeof(pv.path) ? pv.len : sizeof(pv.path),
		    pv.truncated, out, cap))
		return;
	/* Path map full when first seen: say so rather than guess a name. */
	snprintf(out, cap, "(unknown cgroup %u:%llu)", hier,
		 (unsigned long long)cgid);
}

static bool changed_since(const struct twl_bpf *b, const struct snap *s)
{
	const struct snap *old;

	if (!b->collected)
		return true;
	old = bsearch(s, b->last, b->n_last, sizeof(*s), cmp_snap);
	return !old || old->val.count != s->val.count ||
	       old->val.failed != s->val.failed ||
	       old->val.condition_met != s->val.condition_met;
}

/*
 * is_own_read - true for a read counter that the agent itself made: its
 * census reads v1 memory knobs, and those reads are the agent's, not the
 * fleet's usage (they would otherwise reach the linux-mm export as a
 * "twilight-agent" workload). Matched on the process name and uid, which
 * survive an agent restart (the pinned programs outlive the pid); a
 * different program that names itself like the agent and runs as its uid
 * would be skipped too, which the README states.
 */
static bool is_own_read(const struct twl_bpf_usage_key *k)
{
	char self[17] = "";

	if (k->op != TWL_BPF_OP_READ || k->uid != (__u32)getuid())
		return false;
	if (prctl(PR_GET_NAME, self, 0, 0, 0))
		return false;
	return !strncmp(self, (const char *)k->comm, sizeof(k->comm));
}

/*
 * Counter @s of @file (feature @f) as a wire usage[] entry, privacy
 * applied; @boot_rt is the boot's realtime in ns. NULL on ENOMEM.
 */
static json_t *usage_json(struct twl_bpf *b, const struct snap *s,
			  const char *file, const struct twl_feature *f,
			  const char *boot_id, int64_t boot_rt)
{
	const struct twl_bpf_usage_key *k = &s->key;
	const struct twl_bpf_usage_val *v = &s->val;
	char cg[1024], wcg[1024], comm[17], place[160], image[260] = "";
	struct twl_usage_entry e;

	path_of(b, k->target_cgid, k->target_hier, cg, sizeof(cg));
	path_of(b, k->writer_cgid, k->writer_hier, wcg, sizeof(wcg));
	twl_comm_sanitize(k->comm, sizeof(k->comm), comm);
	/* The image by the container's own id, before privacy hashes it. */
	if (b->image_of &&
	    !twl_container_from_cgroup(wcg, place, sizeof(place)) &&
	    b->image_of(b->image_ctx, place, image, sizeof(image)))
		image[0] = '\0';
	e = (struct twl_usage_entry){
		.boot_id = boot_id,
		.feature = f->id,
		.file = file,
		.op = k->op,
		.cgroup = cg,
		.comm = comm,
		.uid = k->uid,
		.writer_cgroup = wcg,
		.last_pid = v->last_pid,
		.count = v->count,
		.failed = v->failed,
		.condition_met = v->condition_met,
		.first_ns = v->first_ns,
		.last_ns = v->last_ns,
		.val_flags = v->val_flags,
		.val_last = v->val_last,
		.val_min = v->val_min,
		.val_max = v->val_max,
		.image = image,
	};
	return twl_usage_entry_to_json(&e, boot_rt, &b->privacy);
}

/* Contract: see twl_bpf.h. */
int twl_bpf_collect(struct twl_bpf *b, json_t *usage_array, const char *boot_id,
		    unsigned flags)
{
	struct file_name names[TWL_BPF_FILE_ENTRIES];
	int64_t boot_rt;
	struct snap *s = NULL;
	size_t n_names, n = 0, i;
	int appended = 0, err;

	if (!b || b->usage_fd < 0 || b->files_fd < 0)
		return -ENODEV;
	if (!usage_array || !boot_id)
		return -EINVAL;
	boot_rt = twl_boot_time_ns();
	n_names = read_files(b, names, TWL_BPF_FILE_ENTRIES);
	err = read_usage(b, &s, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const struct twl_bpf_usage_key *k = &s[i].key;
		const char *file = file_name_of(names, n_names, k->file_id);
		const struct twl_feature *f = feature_of(file, k->op);
		json_t *o;

		if (!f || !s[i].val.count || is_own_read(k))
			continue;
		if ((flags & TWL_BPF_COLLECT_CHANGED) &&
		    !changed_since(b, &s[i]))
			continue;
		o = usage_json(b, &s[i], file, f, boot_id, boot_rt);
		if (!o || json_array_append_new(usage_array, o)) {
			err = -ENOMEM;
			goto out;
		}
		appended++;
	}
	free(b->last);
	b->last = s;
	b->n_last = n;
	b->collected = true;
	s = NULL;
	err = appended;
out:
	free(s);
	return err;
}

static uint64_t overflows(struct twl_bpf *b)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;
	__u64 *vals;
	__u32 idx;
	int c;

	if (b->overflow_fd < 0 || ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	for (idx = 0; idx < TWL_BPF_OVF_NR; idx++)
		if (!bpf_map_lookup_elem(b->overflow_fd, &idx, vals))
			for (c = 0; c < ncpu; c++)
				sum += vals[c];
	free(vals);
	return sum;
}

/* One wire health.probes entry for probe @i. NULL on ENOMEM. */
static json_t *probe_json(const struct twl_bpf *b, size_t i)
{
	const struct probe *p = &b->probes[i];

	return json_pack("{s:s, s:s, s:s}", "name", twl_bpf_probe_def[i].label,
			 "state",
			 p->attached  ? "attached" :
			 p->not_built ? "not_built" :
					"unavailable",
			 "reason", p->reason);
}

/*
 * The memory controller, built: attached when any probe of its v1 code
 * is, the reason naming the first of them that is not.
 */
static json_t *memory_json(const struct twl_bpf *b)
{
	size_t i, n = 0, up = 0, first_down = P_NR;
	char reason[320];

	for (i = 0; i < P_NR; i++) {
		if (!twl_bpf_probe_def[i].memory_v1)
			continue;
		n++;
		if (b->probes[i].attached)
			up++;
		else if (first_down == P_NR)
			first_down = i;
	}
	if (!up)
		snprintf(reason, sizeof(reason), "%s",
			 b->probes[P_W_MEM].reason);
	else if (up == n)
		snprintf(reason, sizeof(reason),
			 "all %zu probes of the v1 code attached", n);
	else
		snprintf(reason, sizeof(reason),
			 "%zu of %zu probes attached; %s: %s", up, n,
			 twl_bpf_probe_def[first_down].label,
			 b->probes[first_down].reason);
	return json_pack("{s:s, s:s, s:s}", "name", "memory", "state",
			 up ? "attached" : "unavailable", "reason", reason);
}

/* One wire health.controllers entry for controller @c. NULL on ENOMEM. */
static json_t *controller_json(const struct twl_bpf *b, enum twl_ctl c)
{
	const struct ctl_state *s = &b->ctl[c];
	char reason[320];

	if (s->decided && !s->built)
		return json_pack("{s:s, s:s, s:s}", "name", twl_ctl_name(c),
				 "state", "not_built", "reason", s->reason);
	if (s->decided && c == TWL_CTL_MEMORY)
		return memory_json(b);
	if (s->decided)
		snprintf(
			reason, sizeof(reason),
			"v1 interface built (%s); the probes count memory v1 files only, kmsg and census see this controller",
			s->reason);
	else
		snprintf(reason, sizeof(reason), "%s", s->reason);
	return json_pack("{s:s, s:s, s:s}", "name", twl_ctl_name(c), "state",
			 "unavailable", "reason", reason);
}

/* Append @o to @arr; false (and @o released) on ENOMEM. */
static bool append(json_t *arr, json_t *o)
{
	return o && !json_array_append_new(arr, o);
}

/* Contract: see twl_bpf.h. */
int twl_bpf_health(struct twl_bpf *b, json_t *health)
{
	json_t *probes, *ctls;
	size_t i;
	bool ok = true;
	int err;

	if (!b || !health)
		return -EINVAL;
	probes = json_array();
	ctls = json_array();
	for (i = 0; ok && probes && i < P_NR; i++)
		ok = append(probes, probe_json(b, i));
	for (i = 0; ok && ctls && i < TWL_CTL_NR; i++)
		ok = append(ctls, controller_json(b, (enum twl_ctl)i));
	if (!ok || !probes || !ctls) {
		json_decref(probes);
		json_decref(ctls);
		return -ENOMEM;
	}
	/* each set_new takes its value, also when it fails */
	err = json_object_set_new(health, "probes", probes);
	err |= json_object_set_new(health, "controllers", ctls);
	err |= json_object_set_new(health, "map_overflows",
				   json_integer((json_int_t)overflows(b)));
	return err ? -ENOMEM : 0;
}

/* Contract: see twl_bpf.h. */
bool twl_bpf_counted(struct twl_bpf *b, const char *feature_id)
{
	struct file_name names[TWL_BPF_FILE_ENTRIES];
	struct snap *s = NULL;
	size_t n_names, n = 0, i;
	bool found = false;

	if (!b || !feature_id || b->usage_fd < 0 || b->files_fd < 0)
		return false;
	n_names = read_files(b, names, TWL_BPF_FILE_ENTRIES);
	if (read_usage(b, &s, &n))
		return false;
	for (i = 0; i < n && !found; i++) {
		const struct twl_feature *f = feature_of(
			file_name_of(names, n_names, s[i].key.file_id),
			s[i].key.op);

		found = f && s[i].val.count && !strcmp(f->id, feature_id);
	}
	free(s);
	return found;
}
