// SPDX-License-Identifier: GPL-2.0
/* Static cgroup census (see census.h). */
#include "census.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h> /* the __u32 of twl_bpf_types.h */

#include <twilight/catalog.h>
#include <twilight/cgroup_class.h>
#include <twilight/config.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "bpf/twl_bpf_types.h"
#include "bpf/usage_conv.h"

#define MAX_DEPTH 64
/* A path as wire_path() writes it: "/..." and TWL_BPF_PATH_LEN bytes. */
#define WIRE_PATH_MAX (TWL_BPF_PATH_LEN + 8)

/* Paths sent otherwise than they are (wire_path()), for one log line. */
struct renames {
	unsigned n;
	char first[160]; /* the first, printable */
};
#define KNOB_READ_MAX 512

/* Split the next space-separated field of @line; NULL when none left. */
static char *next_field(char **line)
{
	char *s = *line, *e;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*line = e + 1;
	} else {
		*line = s + strlen(s);
	}
	return s;
}

/* Decode mountinfo's octal escapes (\040 for space) into @out. */
static int unescape_octal(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	while (*in) {
		char c = *in;

		if (c == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' &&
		    in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
			c = (char)((in[1] - '0') << 6 | (in[2] - '0') << 3 |
				   (in[3] - '0'));
			in += 4;
		} else {
			in++;
		}
		if (!c || o + 1 >= cap)
			return -EINVAL;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

/*
 * @len bytes of @path (top first, "" or "/" for the root) into @out as the
 * BPF programs capture a cgroup path and usage_conv.c converts it, so
 * knobs[] and usage[] name a cgroup alike and the wire can carry it: the
 * names from the leaf up, at most TWL_BPF_PATH_DEPTH, none starting past
 * TWL_BPF_PATH_OFF_MAX bytes of the capture, each at most
 * TWL_BPF_COMP_LEN - 1 bytes; "/..." in front when the top was cut; bytes
 * that are not printable UTF-8 as '?'. @out holds WIRE_PATH_MAX bytes.
 * A path sent otherwise than it is is counted in @r.
 */
static void wire_path(const char *path, size_t len, char *out,
		      struct renames *r)
{
	char raw[TWL_BPF_PATH_LEN] = "";
	size_t off = 0, end = len, depth = 0, start, n;
	bool cut = false;

	while (end > 0 && !cut) {
		for (start = end; start > 0 && path[start - 1] != '/'; start--)
			;
		n = end - start;
		end = start ? start - 1 : 0;
		if (!n)
			continue;
		if (depth == TWL_BPF_PATH_DEPTH || off > TWL_BPF_PATH_OFF_MAX) {
			cut = true;
			break;
		}
		if (n > TWL_BPF_COMP_LEN - 1) {
			n = TWL_BPF_COMP_LEN - 1;
			cut = true;
		}
		memcpy(raw + off, path + start, n);
		off += n;
		raw[off++] = '/';
		depth++;
	}
	if (twl_cgroup_path_from_raw(raw, off, cut, out, WIRE_PATH_MAX))
		snprintf(out, WIRE_PATH_MAX, "/..."); /* cannot happen: sized */
	if (!len || (strlen(out) == len && !memcmp(out, path, len)))
		return;
	if (!r->n++)
		twl_printable_copy(path, len, r->first, sizeof(r->first));
}

static bool under_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1)
		return true; /* root "/" */
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/');
}

/* Controllers from v1 super options: drop rw/ro and the non-controller flags. */
static void v1_controllers(const char *opts, struct twl_cgroup_mount *m)
{
	static const char *const skip[] = { "rw",
					    "ro",
					    "xattr",
					    "noprefix",
					    "clone_children",
					    "cpuset_v2_mode",
					    "favordynmods",
					    "nofavordynmods" };
	char buf[512], *save = NULL, *tok;
	size_t o = 0, i;

	snprintf(buf, sizeof(buf), "%s", opts);
	m->controllers[0] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		bool drop = !strncmp(tok, "name=", 5) ||
			    !strncmp(tok, "release_agent=", 14);
		size_t n = strlen(tok);

		for (i = 0; i < sizeof(skip) / sizeof(skip[0]) && !drop; i++)
			drop = !strcmp(tok, skip[i]);
		if (drop)
			continue;
		if (!strcmp(tok, "memory"))
			m->memory = true;
		if (o + n + 2 > sizeof(m->controllers))
			break;
		if (o)
			m->controllers[o++] = ',';
		memcpy(m->controllers + o, tok, n + 1);
		o += n;
	}
}

int twl_census_parse_mountinfo(const char *text, size_t len, const char *root,
			       struct twl_cgroup_mounts *out)
{
	size_t pos = 0;
	char line[4096];

	memset(out, 0, sizeof(*out));
	if (!root || root[0] != '/')
		return -EINVAL;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *p = line, *f, *mnt = NULL, *fstype = NULL, *sopts = NULL;
		struct twl_cgroup_mount m;
		int idx = 0;
		size_t i;

		if (n >= sizeof(line)) {
			pos += n + 1;
			continue;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		/* id parent dev root mountpoint opts [optional...] - fstype source superopts */
		while ((f = next_field(&p))) {
			if (idx == 4)
				mnt = f;
			if (idx >= 6 && !strcmp(f, "-")) {
				fstype = next_field(&p);
				next_field(&p); /* source */
				sopts = next_field(&p);
				break;
			}
			idx++;
		}
		if (!mnt || !fstype || !sopts)
			continue;
		memset(&m, 0, sizeof(m));
		if (!strcmp(fstype, "cgroup"))
			m.kind = 1;
		else if (!strcmp(fstype, "cgroup2"))
			m.kind = 2;
		else
			continue;
		if (unescape_octal(mnt, m.mount, sizeof(m.mount)) ||
		    !under_root(m.mount, root))
			continue;
		if (m.kind == 1)
			v1_controllers(sopts, &m);
		for (i = 0; i < out->n; i++)
			if (!strcmp(out->m[i].mount, m.mount))
				break;
		if (i == out->n) {
			if (out->n == TWL_CENSUS_MAX_MOUNTS) {
				out->truncated = true;
				continue;
			}
			out->n++;
		}
		out->m[i] = m;
	}
	return 0;
}

const char *twl_census_cgroup_mode(const struct twl_cgroup_mounts *m)
{
	bool v1 = false, v2 = false;
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (m->m[i].kind == 1)
			v1 = true;
		else
			v2 = true;
	}
	if (v1 && v2)
		return "hybrid";
	return v1 ? "v1" : "v2";
}

static int read_mounts(const char *mountinfo, const char *root,
		       struct twl_cgroup_mounts *out)
{
	char *text = NULL;
	size_t len;
	int ret;

	ret = twl_read_file(mountinfo, 4 << 20, &text, &len);
	if (ret)
		return ret;
	ret = twl_census_parse_mountinfo(text, len, root, out);
	free(text);
	return ret;
}

int twl_census_mode_from(const char *mountinfo, const char *root, char *mode,
			 size_t cap)
{
	struct twl_cgroup_mounts *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	ret = read_mounts(mountinfo, root, m);
	if (!ret)
		snprintf(mode, cap, "%s", twl_census_cgroup_mode(m));
	free(m);
	return ret;
}

/* Kinds of knob and what their default looks like. */
enum knob_kind {
	KNOB_LIMIT, /* default: unlimited (PAGE_COUNTER_MAX pages) */
	KNOB_ZERO, /* default 0 */
	KNOB_ONE, /* default 1 */
	KNOB_OOM, /* memory.oom_control: "oom_kill_disable 0" */
	KNOB_SWAPPINESS, /* default: the root's value (60 if unreadable) */
};

static const struct {
	const char *file;
	enum knob_kind kind;
} knobs[] = {
	{ "memory.soft_limit_in_bytes", KNOB_LIMIT },
	{ "memory.kmem.tcp.limit_in_bytes", KNOB_LIMIT },
	{ "memory.memsw.limit_in_bytes", KNOB_LIMIT },
	{ "memory.oom_control", KNOB_OOM },
	{ "memory.swappiness", KNOB_SWAPPINESS },
	{ "memory.move_charge_at_immigrate", KNOB_ZERO },
	{ "memory.use_hierarchy", KNOB_ONE },
};

#define N_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

struct walk {
	const struct twl_census_cfg *cfg;
	struct timespec deadline;
	json_t *knobs;
	const struct twl_feature *feature[N_KNOBS];
	unsigned long root_swappiness;
	unsigned walked;
	bool truncated;
	struct renames renames;
};

/* Read a small control file relative to @dfd; strips the trailing newline. */
static int read_knob(int dfd, const char *name, char *buf, size_t cap)
{
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static bool parse_ulong(const char *s, unsigned long long *v)
{
	uint64_t n;

	if (twl_parse_u64(s, UINT64_MAX, &n))
		return false;
	*v = n;
	return true;
}

/*
 * Is @val a non-default value for @kind? For the oom_control file @val is
 * rewritten to the oom_kill_disable value.
 */
static bool non_default(enum knob_kind kind, char *val, bool is_root,
			unsigned long root_swp)
{
	/* Unlimited prints as PAGE_COUNTER_MAX * PAGE_SIZE: LONG_MAX rounded down to a page. */
	const unsigned long long unlimited_min =
		(unsigned long long)LLONG_MAX - 65535;
	unsigned long long v;
	const char *p;

	switch (kind) {
	case KNOB_LIMIT:
		return parse_ulong(val, &v) && v < unlimited_min;
	case KNOB_ZERO:
		return parse_ulong(val, &v) && v != 0;
	case KNOB_ONE:
		return parse_ulong(val, &v) && v != 1;
	case KNOB_OOM:
		p = strstr(val, "oom_kill_disable ");
		if (!p)
			return false;
		p += strlen("oom_kill_disable ");
		if (*p != '1')
			return false;
		snprintf(val, 4, "1");
		return true;
	case KNOB_SWAPPINESS:
		return !is_root && parse_ulong(val, &v) && v != root_swp;
	}
	return false;
}

static bool past_deadline(const struct walk *w)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > w->deadline.tv_sec ||
	       (now.tv_sec == w->deadline.tv_sec &&
		now.tv_nsec >= w->deadline.tv_nsec);
}

/* Knob @k of cgroup @cg (@cglen bytes, "" for the root) set to @val. */
static int add_knob(struct walk *w, size_t k, const char *cg, size_t cglen,
		    const char *val)
{
	struct twl_cgroup_class cls;
	char path[WIRE_PATH_MAX];
	json_t *o;

	if (json_array_size(w->knobs) >= TWL_WIRE_MAX_KNOBS) {
		w->truncated = true;
		return 0;
	}
	/* The kind of the whole path, before wire_path() may cut it. */
	twl_cgroup_classify(cg, &cls);
	wire_path(cg, cglen, path, &w->renames);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "feature", w->feature[k]->id,
		      "file", knobs[k].file, "cgroup", path, "value", val,
		      "target_kind", twl_cgroup_kind_name(cls.kind));
	if (!o || json_array_append_new(w->knobs, o))
		return -ENOMEM;
	return 0;
}

/* Examine the cgroup open at @dfd (path @cg in its hierarchy), then its children. */
static int walk_cgroup(struct walk *w, int dfd, char *cg, size_t cglen,
		       unsigned depth)
{
	DIR *d = NULL;
	struct dirent *de;
	size_t k;
	int ret = 0;

	if (w->walked >= w->cfg->max_cgroups || past_deadline(w)) {
		w->truncated = true;
		close(dfd);
		return 0;
	}
	w->walked++;
	for (k = 0; k < N_KNOBS; k++) {
		char val[KNOB_READ_MAX];

		if (!w->feature[k] ||
		    read_knob(dfd, knobs[k].file, val, sizeof(val)))
			continue;
		if (!twl_utf8_valid(val, strlen(val)))
			continue;
		if (non_default(knobs[k].kind, val, depth == 0,
				w->root_swappiness)) {
			ret = add_knob(w, k, cg, cglen, val);
			if (ret)
				goto out;
		}
	}
	if (depth >= MAX_DEPTH) {
		w->truncated = true;
		goto out;
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int cfd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (cglen + 1 + n >= PATH_MAX) {
			w->truncated = true;
			continue;
		}
		cfd = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		cg[cglen] = '/';
		memcpy(cg + cglen + 1, de->d_name, n + 1);
		ret = walk_cgroup(w, cfd, cg, cglen + 1 + n, depth + 1);
		cg[cglen] = '\0';
		if (ret || w->truncated)
			break;
	}
	closedir(d);
	return ret;
out:
	close(dfd);
	return ret;
}

static json_t *hierarchy_json(const struct twl_cgroup_mount *m,
			      struct renames *r)
{
	char buf[1024], *save = NULL, *tok, mount[WIRE_PATH_MAX];
	json_t *ctl = json_array(), *o;
	int fd;

	if (!ctl)
		return NULL;
	if (m->kind == 1) {
		snprintf(buf, sizeof(buf), "%s", m->controllers);
	} else {
		/* cgroup2 lists its controllers in the root's cgroup.controllers. */
		buf[0] = '\0';
		fd = open(m->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			if (read_knob(fd, "cgroup.controllers", buf,
				      sizeof(buf)))
				buf[0] = '\0';
			close(fd);
		}
	}
	for (tok = strtok_r(buf, m->kind == 1 ? "," : " ", &save); tok;
	     tok = strtok_r(NULL, m->kind == 1 ? "," : " ", &save)) {
		if (json_array_size(ctl) >= TWL_WIRE_MAX_CONTROLLERS ||
		    strlen(tok) > TWL_WIRE_MAX_SHORT ||
		    !twl_utf8_valid(tok, strlen(tok)))
			continue;
		json_array_append_new(ctl, json_string(tok));
	}
	wire_path(m->mount, strlen(m->mount), mount, r);
	o = json_pack("{s:s, s:s, s:o}", "kind", m->kind == 1 ? "v1" : "v2",
		      "mount", mount, "controllers", ctl);
	return o;
}

/* The walk ends @max_ms from now. */
static void set_deadline(struct walk *w, unsigned max_ms)
{
	clock_gettime(CLOCK_MONOTONIC, &w->deadline);
	w->deadline.tv_sec += max_ms / 1000;
	w->deadline.tv_nsec += (long)(max_ms % 1000) * 1000000L;
	if (w->deadline.tv_nsec >= 1000000000L) {
		w->deadline.tv_sec++;
		w->deadline.tv_nsec -= 1000000000L;
	}
}

/*
 * Each mount of @mounts into @hier, and the knobs of each v1 memory
 * hierarchy into w->knobs (@cg: PATH_MAX bytes of scratch). 0 or -ENOMEM.
 */
static int walk_mounts(struct walk *w, const struct twl_cgroup_mounts *mounts,
		       json_t *hier, char *cg)
{
	size_t i;
	int ret;

	for (i = 0; i < mounts->n; i++) {
		const struct twl_cgroup_mount *m = &mounts->m[i];
		json_t *h = hierarchy_json(m, &w->renames);
		char val[KNOB_READ_MAX];
		unsigned long long swp;
		int dfd;

		if (!h || json_array_append_new(hier, h))
			return -ENOMEM;
		if (m->kind != 1 || !m->memory || w->truncated)
			continue;
		dfd = open(m->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		w->root_swappiness = 60;
		if (!read_knob(dfd, "memory.swappiness", val, sizeof(val)) &&
		    parse_ulong(val, &swp))
			w->root_swappiness = (unsigned long)swp;
		cg[0] = '\0';
		ret = walk_cgroup(w, dfd, cg, 0, 0);
		if (ret)
			return ret;
	}
	return 0;
}

json_t *twl_census_take(const struct twl_census_cfg *cfg, int64_t now, int *err)
{
	struct twl_cgroup_mounts *mounts;
	json_t *census = NULL, *hier = NULL, *runtimes = NULL;
	struct walk w;
	char *cg = NULL;
	size_t k;
	int ret;

	memset(&w, 0, sizeof(w));
	w.cfg = cfg;
	mounts = malloc(sizeof(*mounts));
	cg = malloc(PATH_MAX);
	hier = json_array();
	w.knobs = json_array();
	if (!mounts || !cg || !hier || !w.knobs) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_mounts(cfg->mountinfo, cfg->cgroup_root, mounts);
	if (ret)
		goto out;
	for (k = 0; k < N_KNOBS; k++)
		w.feature[k] = twl_catalog_find_file(knobs[k].file);
	set_deadline(&w, cfg->max_ms);
	ret = walk_mounts(&w, mounts, hier, cg);
	if (ret)
		goto out;
	runtimes = twl_census_runtimes(cfg->runtime_root);
	if (!runtimes) {
		ret = -ENOMEM;
		goto out;
	}
	census = json_pack("{s:I, s:O, s:O, s:I, s:b, s:O}", "time",
			   (json_int_t)now, "hierarchies", hier, "knobs",
			   w.knobs, "cgroups_walked", (json_int_t)w.walked,
			   "truncated", w.truncated || mounts->truncated,
			   "runtimes", runtimes);
	if (!census)
		ret = -ENOMEM;
	/* Not an error: said once per census, so a renamed path is explained. */
	if (census && w.renames.n)
		twl_log(LOG_NOTICE,
			"census: %u cgroup or mount paths are not UTF-8 text, hold control "
			"characters or are longer than BPF keeps of a path; sent as BPF paths "
			"are (such bytes as '?', the top of a long path as \"/...\"), the "
			"first: %s",
			w.renames.n, w.renames.first);
out:
	json_decref(hier);
	json_decref(w.knobs);
	json_decref(runtimes);
	free(mounts);
	free(cg);
	if (err)
		*err = ret;
	return census;
}
