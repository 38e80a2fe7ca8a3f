// SPDX-License-Identifier: GPL-2.0
/*
 * Loading the BPF usage counters and the handle's life.
 *
 * Order (as libbpf-tools do): reuse pinned links -> decide from the
 * kernel's BTF which controllers' v1 interfaces are built and which
 * programs to load (not those of reused links, nor those whose function
 * this BTF lacks) -> open the skeleton, point every map at its pin path
 * (libbpf reuses a pinned map or pins the new one) and load; when that
 * fails, each program alone, then the set without those that failed alone
 * (twl_bpf_decide.c) -> fill the files map from the catalog -> carry the
 * counts of the previous map layout over (twl_bpf_import.c) -> attach and
 * pin the remaining links (twl_bpf_attach.c).
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "twl_bpf_internal.h"
#include "usage.skel.h"

/* Maps shared between programs and agent runs: all pinned. */
static const char *const pinned_maps[] = {
	"twl_usage",	"twl_paths", "twl_files",   "twl_cft",
	"twl_overflow", "twl_meta",  "twl_scratch",
};

__attribute__((format(printf, 2, 0))) static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL, *line, *save = NULL;

	/*
	 * libbpf's own chatter (verifier logs included) only at debug level,
	 * one log line per line of it.
	 */
	if (vasprintf(&text, fmt, ap) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		twl_log(LOG_DEBUG, "libbpf: %s", line);
	free(text);
	return 0;
}

/*
 * Give every probe not attached (but those whose controller is not built)
 * and every controller not decided from BTF the same @reason.
 */
static void set_reason_all(struct twl_bpf *b, const char *reason)
{
	size_t i;

	for (i = 0; i < P_NR; i++)
		if (!b->probes[i].attached && !b->probes[i].not_built)
			snprintf(b->probes[i].reason,
				 sizeof(b->probes[i].reason), "%s", reason);
	for (i = 0; i < TWL_CTL_NR; i++)
		if (!b->ctl[i].decided)
			snprintf(b->ctl[i].reason, sizeof(b->ctl[i].reason),
				 "%s", reason);
}

/* Contract: see twl_bpf_internal.h. */
int twl_bpf_pin_path(const struct twl_bpf *b, const char *name, char *out,
		     size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", b->pin_dir, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Decide whether maps and links can be pinned; say why not when not. */
static void setup_pinning(struct twl_bpf *b, const struct twl_bpf_cfg *cfg)
{
	struct statfs st;
	int err;

	snprintf(b->pin_dir, sizeof(b->pin_dir), "%s",
		 cfg && cfg->pin_dir ? cfg->pin_dir : TWL_BPF_PIN_DIR);
	if (cfg && cfg->no_pin)
		return;
	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		twl_log(LOG_WARNING,
			"bpf: /sys/fs/bpf is not a BPF filesystem: counts will not survive an agent restart; mount bpffs there");
		return;
	}
	err = twl_mkdir_p(b->pin_dir, 0700);
	if (err) {
		twl_log(LOG_WARNING,
			"bpf: cannot create pin directory %s: %s; counts will not survive an agent restart",
			b->pin_dir, strerror(-err));
		return;
	}
	b->pinning = true;
}

/*
 * Links pinned by an earlier run count into the pinned maps; without the
 * usage map they count into a map nobody can read, so drop them.
 */
static void drop_orphan_links(struct twl_bpf *b)
{
	char path[PATH_MAX];
	size_t i;

	if (twl_bpf_pin_path(b, "twl_usage", path, sizeof(path)) ||
	    !access(path, F_OK))
		return;
	for (i = 0; i < P_NR; i++)
		if (!twl_bpf_pin_path(b, twl_bpf_probe_def[i].prog, path,
				      sizeof(path)) &&
		    !access(path, F_OK)) {
			twl_log(LOG_WARNING,
				"bpf: removing link %s pinned without its maps",
				path);
			unlink(path);
		}
}

static int open_pinned_map(struct twl_bpf *b, const char *name)
{
	char path[PATH_MAX];

	if (twl_bpf_pin_path(b, name, path, sizeof(path)))
		return -1;
	return bpf_obj_get(path);
}

/*
 * Put control file @name into the files map with @flag (a direct or an
 * event file of a feature that @warns or not): a new entry gets the next
 * id, an existing one keeps its id and gains the flag; a direct file also
 * gets its value flags (twl_file_value_flags()). 0 or -errno.
 */
static int put_file(struct twl_bpf *b, const char *name, __u32 flag, bool warns,
		    __u32 *next_id)
{
	struct twl_bpf_file_key fk;
	struct twl_bpf_file_val fv;

	if (strlen(name) >= TWL_BPF_FILE_NAME_LEN)
		return 0;
	memset(&fk, 0, sizeof(fk));
	strcpy(fk.name, name);
	if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv)) {
		if (fv.flags & flag)
			return 0;
		fv.flags |= flag;
		if (flag == TWL_BPF_FILE_DIRECT)
			fv.cond = twl_file_cond(name, warns);
	} else {
		fv = (struct twl_bpf_file_val){
			.id = (*next_id)++,
			.cond = twl_file_cond(name, warns),
			.flags = flag,
		};
	}
	if (flag == TWL_BPF_FILE_DIRECT)
		fv.flags |= twl_file_value_flags(name);
	return bpf_map_update_elem(b->files_fd, &fk, &fv, BPF_ANY) ? -errno : 0;
}

/* Put every catalog control file into the files map (existing ids stay). */
static int fill_files(struct twl_bpf *b)
{
	struct twl_bpf_file_key fk, *prev = NULL;
	struct twl_bpf_file_val fv;
	__u32 next_id = 1;
	size_t i, j;
	int ret = 0, err;

	while (!bpf_map_get_next_key(b->files_fd, prev, &fk)) {
		if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv) &&
		    fv.id >= next_id)
			next_id = fv.id + 1;
		prev = &fk;
	}
	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		for (j = 0; f->files && f->files[j]; j++) {
			/* the probes count the memory controller only */
			if (strncmp(f->files[j], "memory.", 7))
				continue;
			err = put_file(b, f->files[j], TWL_BPF_FILE_DIRECT,
				       f->warns, &next_id);
			if (err)
				ret = err;
		}
		for (j = 0; f->event_files && f->event_files[j]; j++) {
			err = put_file(b, f->event_files[j], TWL_BPF_FILE_EVENT,
				       f->warns, &next_id);
			if (err)
				ret = err;
		}
	}
	return ret;
}

/* Delete every entry of hash map @fd (a cache: nothing counted lives there). */
static void clear_map(int fd)
{
	__u64 key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			break;
}

/* A handle with every probe "not loaded", or NULL (ENOMEM). */
static struct twl_bpf *bpf_new(const struct twl_bpf_cfg *cfg)
{
	struct twl_bpf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->usage_fd = b->paths_fd = b->files_fd = b->overflow_fd = b->meta_fd =
		-1;
	if (cfg) {
		b->privacy = cfg->privacy;
		b->image_of = cfg->image_of;
		b->image_ctx = cfg->image_ctx;
		if (cfg->privacy.key) {
			b->privacy_key = strdup(cfg->privacy.key);
			if (!b->privacy_key) {
				free(b);
				errno = ENOMEM;
				return NULL;
			}
		}
		b->privacy.key = b->privacy_key;
	}
	set_reason_all(b, "not loaded");
	return b;
}

/*
 * Open a fresh skeleton (dropping one opened before) and point its shared
 * maps at their pins. 0 or a negative errno.
 */
static int open_object(struct twl_bpf *b)
{
	char path[PATH_MAX];
	struct bpf_map *map;
	size_t i;

	twl_usage_bpf__destroy(b->skel);
	b->skel = twl_usage_bpf__open();
	if (!b->skel)
		return errno ? -errno : -ENOMEM;
	for (i = 0;
	     b->pinning && i < sizeof(pinned_maps) / sizeof(pinned_maps[0]);
	     i++) {
		map = bpf_object__find_map_by_name(b->skel->obj,
						   pinned_maps[i]);
		if (map &&
		    !twl_bpf_pin_path(b, pinned_maps[i], path, sizeof(path)))
			bpf_map__set_pin_path(map, path);
	}
	return 0;
}

/* Reuse the link an earlier run pinned for probe @i, if there is one. */
static void reuse_link(struct twl_bpf *b, enum probe_kind i)
{
	struct probe *p = &b->probes[i];
	char path[PATH_MAX];

	if (!b->pinning ||
	    twl_bpf_pin_path(b, twl_bpf_probe_def[i].prog, path,
			     sizeof(path)) ||
	    access(path, F_OK))
		return;
	p->link = bpf_link__open(path);
	if (p->link) {
		p->attached = true;
		snprintf(p->reason, sizeof(p->reason),
			 "reused link pinned by an earlier run");
		return;
	}
	twl_log(LOG_WARNING,
		"bpf: cannot reuse pinned link %s (%s); replacing it", path,
		strerror(errno));
	unlink(path);
}

/*
 * Whether probe @i's program is to be loaded: not when a reused link
 * already counts, nor when this kernel's BTF lacks its function, nor when
 * memory v1 is not built (every probe counts memory v1 files only, so
 * the read and vmpressure probes, whose functions stay, would count
 * nothing and cost every cgroup file open a program run).
 */
static bool want_probe(struct twl_bpf *b, enum probe_kind i,
		       const struct btf *vmlinux)
{
	const struct probe_def *d = &twl_bpf_probe_def[i];
	const struct ctl_state *mem = &b->ctl[TWL_CTL_MEMORY];
	struct probe *p = &b->probes[i];
	bool has = twl_btf_has_func(vmlinux, d->func);

	if (p->attached)
		return false;
	if (mem->decided && !mem->built) {
		p->not_built = true;
		snprintf(
			p->reason, sizeof(p->reason), "%s: %.85s",
			has ? "not loaded, it counts memory v1 files only and memory v1 is not built" :
			      "memory v1 not built",
			mem->reason);
		return false;
	}
	if (has)
		return true;
	snprintf(p->reason, sizeof(p->reason),
		 "function %s not in this kernel's BTF (inlined or renamed)",
		 d->func);
	return false;
}

/* twl_load_fn over the skeleton: a fresh object with programs @on. */
static int load_selected(void *ctx, const bool *on, size_t n)
{
	struct twl_bpf *b = ctx;
	struct bpf_program *prog;
	size_t i;
	int err;

	err = open_object(b);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		prog = bpf_object__find_program_by_name(
			b->skel->obj, twl_bpf_probe_def[i].prog);
		if (prog)
			bpf_program__set_autoload(prog, on[i]);
		/* BPF_LOG_STATS: libbpf logs "processed N insns" per program */
		if (prog && b->verifier_stats)
			bpf_program__set_log_level(prog, 4);
	}
	return twl_usage_bpf__load(b->skel);
}

/*
 * Load the programs of the probes this kernel can take; one that fails
 * alone (the verifier refusing it) is left out and says why, the others
 * load without it. 0 or the final load's negative errno.
 */
static int load_probes(struct twl_bpf *b, const bool *want)
{
	int errs[P_NR], err;
	size_t i;

	err = twl_bpf_load_degrading(P_NR, want, load_selected, b, errs);
	for (i = 0; i < P_NR; i++) {
		if (!errs[i])
			continue;
		snprintf(
			b->probes[i].reason, sizeof(b->probes[i].reason),
			"loading its program failed: %s (log level debug shows the verifier log); the other probes load without it",
			strerror(-errs[i]));
		twl_log(LOG_WARNING, "bpf: probe %s: %s",
			twl_bpf_probe_def[i].label, b->probes[i].reason);
	}
	return err;
}

/* Contract: see twl_bpf_internal.h. */
void twl_bpf_plan(struct twl_bpf *b, const struct btf *vmlinux, bool *want)
{
	size_t i;

	for (i = 0; i < TWL_CTL_NR; i++) {
		b->ctl[i].decided = true;
		b->ctl[i].built = twl_ctl_v1_built((enum twl_ctl)i,
						   twl_btf_has_func, vmlinux,
						   b->ctl[i].reason,
						   sizeof(b->ctl[i].reason));
	}
	for (i = 0; i < P_NR; i++)
		want[i] = want_probe(b, (enum probe_kind)i, vmlinux);
}

/*
 * Loading failed with @err: every probe not reused says why, and the
 * pinned maps are opened anyway, as reused links still count into them.
 */
static void load_failed(struct twl_bpf *b, int err)
{
	char msg[160];

	/* EACCES is the verifier refusing a program; EPERM is privilege. */
	if (err == -EPERM) {
		set_reason_all(
			b,
			"no privilege to load BPF: needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
	} else {
		snprintf(
			msg, sizeof(msg),
			"loading BPF failed: %s (log level debug shows the verifier log)",
			strerror(-err));
		set_reason_all(b, msg);
	}
	twl_log(LOG_WARNING,
		"bpf: loading the usage counters failed: %s; kmsg and census continue",
		strerror(-err));
	/* a failed object holds no fds worth keeping: the pins do */
	twl_usage_bpf__destroy(b->skel);
	b->skel = NULL;
	if (b->pinning) {
		b->usage_fd = open_pinned_map(b, "twl_usage");
		b->paths_fd = open_pinned_map(b, "twl_paths");
		b->files_fd = open_pinned_map(b, "twl_files");
		b->overflow_fd = open_pinned_map(b, "twl_overflow");
		b->meta_fd = open_pinned_map(b, "twl_meta");
	}
}

/* The loaded object's maps: keep their fds, fill the files map. */
static void use_maps(struct twl_bpf *b)
{
	int err;

	b->usage_fd = bpf_map__fd(b->skel->maps.twl_usage);
	b->paths_fd = bpf_map__fd(b->skel->maps.twl_paths);
	b->files_fd = bpf_map__fd(b->skel->maps.twl_files);
	b->overflow_fd = bpf_map__fd(b->skel->maps.twl_overflow);
	b->meta_fd = bpf_map__fd(b->skel->maps.twl_meta);
	err = fill_files(b);
	clear_map(bpf_map__fd(
		b->skel->maps.twl_cft)); /* cached answers may be stale */
	if (err)
		twl_log(LOG_WARNING,
			"bpf: filling the control-file table failed: %s; some files are not counted",
			strerror(-err));
}

/* Contract: see twl_bpf.h. */
struct twl_bpf *twl_bpf_open(const struct twl_bpf_cfg *cfg)
{
	struct btf *vmlinux = NULL;
	bool want[P_NR];
	struct twl_bpf *b;
	size_t i;
	int err;

	b = bpf_new(cfg);
	if (!b)
		return NULL;
	if (!cfg || !cfg->enable) {
		set_reason_all(b, "disabled by configuration");
		return b;
	}
	libbpf_set_print(libbpf_print);

	b->verifier_stats = cfg->verifier_stats;
	setup_pinning(b, cfg);
	if (b->pinning)
		drop_orphan_links(b);

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		set_reason_all(
			b,
			"kernel has no BTF (/sys/kernel/btf/vmlinux): needs CONFIG_DEBUG_INFO_BTF=y");
		twl_log(LOG_WARNING,
			"bpf: kernel has no BTF; usage counters off, kmsg and census continue");
		goto out;
	}
	for (i = 0; i < P_NR; i++)
		reuse_link(b, (enum probe_kind)i);
	twl_bpf_plan(b, vmlinux, want);
	if (twl_bpf_nothing_to_count(b))
		twl_log(LOG_NOTICE,
			"bpf: memory v1 is not built into this kernel (%s): no probe loaded, nothing to count",
			b->ctl[TWL_CTL_MEMORY].reason);
	err = load_probes(b, want);
	if (err) {
		load_failed(b, err);
		goto out;
	}
	use_maps(b);
	twl_bpf_import_old(b);
	twl_bpf_attach_all(b);
out:
	btf__free(vmlinux);
	return b;
}

/* Contract: see twl_bpf.h. */
void twl_bpf_free(struct twl_bpf *b)
{
	size_t i;

	if (!b)
		return;
	/* Destroying a pinned link object detaches nothing: the pin holds it. */
	for (i = 0; i < P_NR; i++)
		bpf_link__destroy(b->probes[i].link);
	if (b->skel)
		twl_usage_bpf__destroy(b->skel);
	else {
		int *fds[] = { &b->usage_fd, &b->paths_fd, &b->files_fd,
			       &b->overflow_fd, &b->meta_fd };

		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	free(b->last);
	free(b->privacy_key);
	free(b);
}

/* Contract: see twl_bpf.h. */
bool twl_bpf_nothing_to_count(const struct twl_bpf *b)
{
	return b && b->ctl[TWL_CTL_MEMORY].decided &&
	       !b->ctl[TWL_CTL_MEMORY].built;
}

/* Contract: see twl_bpf.h. */
bool twl_bpf_active(const struct twl_bpf *b)
{
	size_t i;

	for (i = 0; b && i < P_NR; i++)
		if (b->probes[i].attached)
			return true;
	return false;
}
