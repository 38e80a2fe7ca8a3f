// SPDX-License-Identifier: GPL-2.0
/*
 * usage_conv.c - pure conversions from BPF usage counters to wire entries.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/cgroup_class.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "twl_bpf_parse.h"
#include "twl_bpf_types.h"
#include "usage_conv.h"

int twl_privacy_parse(const char *s, enum twl_privacy_mode *out)
{
	if (!s || !out)
		return -EINVAL;
	if (!strcmp(s, "keep"))
		*out = TWL_PRIVACY_KEEP;
	else if (!strcmp(s, "hash"))
		*out = TWL_PRIVACY_HASH;
	else if (!strcmp(s, "drop"))
		*out = TWL_PRIVACY_DROP;
	else
		return -EINVAL;
	return 0;
}

static int copy_str(const char *in, char *out, size_t cap)
{
	size_t n = strlen(in);

	if (n + 1 > cap)
		return -ENOSPC;
	memcpy(out, in, n + 1);
	return 0;
}

int twl_privacy_apply(enum twl_privacy_mode mode, const char *key,
		      const char *in, size_t hexlen, char *out, size_t cap)
{
	char hex[65];
	char *buf;
	size_t klen, ilen;

	if (!in || !out || !cap)
		return -EINVAL;
	switch (mode) {
	case TWL_PRIVACY_KEEP:
		return copy_str(in, out, cap);
	case TWL_PRIVACY_DROP:
		out[0] = '\0';
		return 0;
	case TWL_PRIVACY_HASH:
		break;
	default:
		return -EINVAL;
	}
	if (hexlen < 2 || hexlen > 64)
		return -EINVAL;
	if (!in[0]) {
		out[0] =
			'\0'; /* nothing to hide; "" stays "" (e.g. no container) */
		return 0;
	}
	if (hexlen + 3 > cap)
		return -ENOSPC;
	klen = key ? strlen(key) : 0;
	ilen = strlen(in);
	buf = malloc(klen + 1 + ilen);
	if (!buf)
		return -ENOMEM;
	if (klen)
		memcpy(buf, key, klen);
	buf[klen] = '\0';
	memcpy(buf + klen + 1, in, ilen);
	twl_sha256_hex(buf, klen + 1 + ilen, hex);
	free(buf);
	out[0] = 'h';
	out[1] = ':';
	memcpy(out + 2, hex, hexlen);
	out[2 + hexlen] = '\0';
	return 0;
}

/* Replace bytes that would make @s[0..n) invalid wire text by '?'. */
static void sanitize_text(char *s, size_t n)
{
	size_t i;

	if (twl_utf8_valid(s, n)) {
		for (i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				s[i] = '?';
		return;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			s[i] = '?';
}

int twl_cgroup_path_from_raw(const char *raw, size_t len, bool truncated,
			     char *out, size_t cap)
{
	size_t starts[TWL_BPF_PATH_DEPTH + 1], lens[TWL_BPF_PATH_DEPTH + 1];
	size_t n = 0, i = 0, o = 0, j;

	if (!raw || !out || !cap || len > TWL_BPF_PATH_LEN)
		return -EINVAL;
	/* Split into names; each ends at '/' or NUL (the BPF side writes '/'). */
	while (i < len) {
		size_t s = i;

		while (i < len && raw[i] != '/' && raw[i] != '\0')
			i++;
		if (i > s) {
			if (n == TWL_BPF_PATH_DEPTH + 1)
				return -EINVAL;
			starts[n] = s;
			lens[n] = i - s;
			n++;
		}
		i++;
	}
	if (truncated) {
		if (o + 4 > cap)
			return -ENOSPC;
		memcpy(out, "/...", 4);
		o = 4;
	}
	for (j = n; j-- > 0;) {
		if (o + 1 + lens[j] + 1 > cap)
			return -ENOSPC;
		out[o++] = '/';
		memcpy(out + o, raw + starts[j], lens[j]);
		o += lens[j];
	}
	if (o == 0) {
		if (cap < 2)
			return -ENOSPC;
		out[o++] = '/';
	}
	out[o] = '\0';
	sanitize_text(out, o);
	return 0;
}

/* Contract: see usage_conv.h. */
int twl_container_from_cgroup(const char *path, char *out, size_t cap)
{
	struct twl_cgroup_class cls;
	size_t n;

	if (!out || !cap)
		return -ENOSPC;
	out[0] = '\0';
	if (twl_cgroup_classify(path, &cls))
		return -ENOSPC;
	n = strlen(cls.place);
	if (n >= cap)
		return -ENOSPC;
	memcpy(out, cls.place, n + 1);
	return 0;
}

void twl_comm_sanitize(const char *comm, size_t n, char out[17])
{
	size_t i;

	if (n > 16)
		n = 16;
	for (i = 0; i < n && comm[i]; i++)
		out[i] = ((unsigned char)comm[i] < 0x20 ||
			  (unsigned char)comm[i] >= 0x7f) ?
				 '?' :
				 comm[i];
	out[i] = '\0';
}

const char *twl_bpf_op_name(unsigned op)
{
	switch (op) {
	case TWL_BPF_OP_READ:
		return "read";
	case TWL_BPF_OP_WRITE:
		return "write";
	case TWL_BPF_OP_REGISTER:
		return "register_event";
	default:
		return NULL;
	}
}

static int64_t unix_seconds(uint64_t mono_ns, int64_t boot_realtime_ns)
{
	int64_t t = ((int64_t)mono_ns + boot_realtime_ns) / 1000000000LL;

	return t < 0 ? 0 : t;
}

static int set_str(json_t *o, const char *k, const char *v)
{
	return json_object_set_new(o, k, json_string(v));
}

static int set_int(json_t *o, const char *k, json_int_t v)
{
	return json_object_set_new(o, k, json_integer(v));
}

/*
 * The kind of @e's target, from its path before privacy hashes it; a
 * read's target is "" on the wire, so its kind is that of "".
 */
static const char *target_kind(const struct twl_usage_entry *e)
{
	struct twl_cgroup_class cls;

	twl_cgroup_classify(e->op == TWL_BPF_OP_READ ? "" : e->cgroup, &cls);
	return twl_cgroup_kind_name(cls.kind);
}

/* @v as a wire value: -1 for unlimited, else capped at TWL_WIRE_MAX_INT. */
static json_int_t wire_value(uint64_t v, bool bytes)
{
	uint64_t cap = TWL_WIRE_MAX_INT;

	if (v == TWL_BPF_VAL_INF)
		return -1;
	if (bytes) /* keep the page multiple the kernel stores */
		cap &= ~((1ULL << TWL_BPF_PAGE_SHIFT) - 1);
	return (json_int_t)(v < cap ? v : cap);
}

/*
 * Set "value" on @o from @e's summary when it has one (see
 * twl_usage_entry_to_json()). 0, or -ENOMEM.
 */
static int set_value(json_t *o, const struct twl_usage_entry *e)
{
	const char *unit = twl_file_value_unit(e->file);
	bool bytes = unit && !strcmp(unit, "bytes");
	json_int_t last = wire_value(e->val_last, bytes), lo, hi;
	bool finite = e->val_flags & TWL_BPF_VAL_FINITE;
	json_t *v;
	int err = 0;

	if (e->op != TWL_BPF_OP_WRITE || !unit ||
	    !(e->val_flags & TWL_BPF_VAL_SEEN) || (last >= 0 && !finite))
		return 0; /* none, or a finite last whose min/max are not in yet */
	v = json_object();
	if (!v)
		return -ENOMEM;
	err |= set_int(v, "last", last);
	if (finite) {
		lo = wire_value(e->val_min, bytes);
		hi = wire_value(e->val_max, bytes);
		/* read while a write updated them: widen to hold last */
		if (last >= 0 && last < lo)
			lo = last;
		if (last > hi)
			hi = last;
		err |= set_int(v, "min", lo < hi ? lo : hi);
		err |= set_int(v, "max", hi);
	}
	err |= json_object_set_new(
		v, "unlimited",
		json_boolean((e->val_flags & TWL_BPF_VAL_UNLIMITED) ||
			     last < 0));
	err |= set_str(v, "unit", unit);
	err |= set_str(v, "source",
		       e->val_flags & TWL_BPF_VAL_PARSED ? "parsed" : "stored");
	err |= json_object_set_new(o, "value", v);
	return err ? -ENOMEM : 0;
}

json_t *twl_usage_entry_to_json(const struct twl_usage_entry *e,
				int64_t boot_realtime_ns,
				const struct twl_bpf_privacy *priv)
{
	static const struct twl_bpf_privacy keep = { 0 };
	char container[160], cont_out[160], cg[1100], wcg[1100], comm[17];
	const char *op = e ? twl_bpf_op_name(e->op) : NULL;
	uint64_t failed, met;
	json_t *o;
	int err = 0;

	if (!op || !e->boot_id || !e->feature || !e->file || !e->cgroup ||
	    !e->comm || !e->writer_cgroup) {
		errno = EINVAL;
		return NULL;
	}
	if (!priv)
		priv = &keep;
	if (twl_container_from_cgroup(e->writer_cgroup, container,
				      sizeof(container)))
		container[0] = '\0';
	/* Hash the id part only, so the kind stays readable ("docker:h:..."). */
	if (priv->cgroup == TWL_PRIVACY_HASH && container[0]) {
		char *colon = strchr(container, ':');
		size_t kl = colon - container + 1;

		memcpy(cont_out, container, kl);
		err |= twl_privacy_apply(priv->cgroup, priv->key, colon + 1, 32,
					 cont_out + kl, sizeof(cont_out) - kl);
	} else {
		err |= twl_privacy_apply(priv->cgroup, priv->key, container, 32,
					 cont_out, sizeof(cont_out));
	}
	err |= twl_privacy_apply(priv->cgroup, priv->key, e->cgroup, 32, cg,
				 sizeof(cg));
	err |= twl_privacy_apply(priv->cgroup, priv->key, e->writer_cgroup, 32,
				 wcg, sizeof(wcg));
	err |= twl_privacy_apply(priv->comm, priv->key, e->comm, 14, comm,
				 sizeof(comm));
	if (err) {
		errno = EINVAL;
		return NULL;
	}
	failed = e->failed > e->count ? e->count : e->failed;
	met = e->condition_met > e->count ? e->count : e->condition_met;
	o = json_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	err |= set_str(o, "boot_id", e->boot_id);
	err |= set_str(o, "feature", e->feature);
	err |= set_str(o, "file", e->file);
	err |= set_str(o, "op", op);
	err |= set_str(o, "use", twl_wire_use_of_op(op));
	/* Reads are keyed without target; the wire says "" for them. */
	err |= set_str(o, "cgroup", e->op == TWL_BPF_OP_READ ? "" : cg);
	err |= set_str(o, "target_kind", target_kind(e));
	err |= set_str(o, "comm", comm);
	err |= set_int(o, "uid", e->uid);
	err |= set_str(o, "writer_cgroup", wcg);
	err |= set_str(o, "container", cont_out);
	err |= set_int(o, "last_pid", e->last_pid);
	err |= set_int(o, "count", (json_int_t)e->count);
	err |= set_int(o, "failed", (json_int_t)failed);
	err |= set_int(o, "condition_met", (json_int_t)met);
	err |= set_int(o, "first_seen",
		       unix_seconds(e->first_ns, boot_realtime_ns));
	err |= set_int(o, "last_seen",
		       unix_seconds(e->last_ns > e->first_ns ? e->last_ns :
							       e->first_ns,
				    boot_realtime_ns));
	if (e->image && e->image[0])
		err |= set_str(o, "image", e->image);
	err |= set_value(o, e);
	if (err) {
		json_decref(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

unsigned twl_file_cond(const char *file, bool warns)
{
	static const char *const non_root[] = {
		"memory.swappiness",
		"memory.kmem.limit_in_bytes",
		"memory.kmem.tcp.limit_in_bytes",
	};
	size_t i;

	if (!warns || !file)
		return TWL_BPF_COND_NEVER;
	if (!strcmp(file, "memory.use_hierarchy"))
		return TWL_BPF_COND_VALUE_NOT_1;
	for (i = 0; i < sizeof(non_root) / sizeof(non_root[0]); i++)
		if (!strcmp(file, non_root[i]))
			return TWL_BPF_COND_NON_ROOT;
	return TWL_BPF_COND_ALWAYS;
}

/* The control files whose writes carry a value, and where it is found. */
static const struct {
	const char *file;
	unsigned flags;
	const char *unit;
} value_files[] = {
	{ "memory.soft_limit_in_bytes", TWL_BPF_FILE_PAGES | TWL_BPF_FILE_SOFT,
	  "bytes" },
	{ "memory.kmem.limit_in_bytes", TWL_BPF_FILE_PAGES, "bytes" },
	{ "memory.kmem.tcp.limit_in_bytes",
	  TWL_BPF_FILE_PAGES | TWL_BPF_FILE_TCP, "bytes" },
	{ "memory.limit_in_bytes", TWL_BPF_FILE_PAGES | TWL_BPF_FILE_MEM,
	  "bytes" },
	{ "memory.memsw.limit_in_bytes",
	  TWL_BPF_FILE_PAGES | TWL_BPF_FILE_MEMSW, "bytes" },
	{ "memory.use_hierarchy", TWL_BPF_FILE_U64, "number" },
	{ "memory.swappiness", TWL_BPF_FILE_U64, "number" },
	{ "memory.oom_control", TWL_BPF_FILE_U64, "number" },
	{ "memory.move_charge_at_immigrate", TWL_BPF_FILE_U64, "bitmask" },
};

static int value_file(const char *file)
{
	size_t i;

	for (i = 0; file && i < sizeof(value_files) / sizeof(value_files[0]);
	     i++)
		if (!strcmp(file, value_files[i].file))
			return (int)i;
	return -1;
}

unsigned twl_file_value_flags(const char *file)
{
	int i = value_file(file);

	return i < 0 ? 0 : value_files[i].flags;
}

const char *twl_file_value_unit(const char *file)
{
	int i = value_file(file);

	return i < 0 ? NULL : value_files[i].unit;
}
