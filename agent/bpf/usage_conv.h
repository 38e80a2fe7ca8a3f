/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usage_conv: pure conversions from BPF counter keys to wire usage entries
 * (schema/wire-format.md usage[]): cgroup paths captured leaf first,
 * container identity from a cgroup path, privacy (hash or drop) of cgroup
 * paths and process names. No I/O; table-tested in
 * tests/unit/agent/bpf/.
 */
#ifndef TWILIGHT_AGENT_BPF_USAGE_CONV_H
#define TWILIGHT_AGENT_BPF_USAGE_CONV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What to do with a value before it leaves the host. */
enum twl_privacy_mode {
	TWL_PRIVACY_KEEP = 0,
	TWL_PRIVACY_HASH = 1, /* "h:" + hex of SHA-256(key, 0, value) */
	TWL_PRIVACY_DROP = 2, /* "" */
};

struct twl_bpf_privacy {
	enum twl_privacy_mode
		cgroup; /* target and writer cgroup paths, container */
	enum twl_privacy_mode comm; /* process names */
	const char *key; /* secret mixed into hashes; NULL = none */
};

/*
 * twl_privacy_parse - "keep", "hash" or "drop" into *@out. Returns 0 or
 * -EINVAL.
 */
int twl_privacy_parse(const char *s, enum twl_privacy_mode *out);

/*
 * twl_privacy_apply - write @in, its hash or "" (per @mode) into @out
 * (@cap bytes, NUL-terminated). A hash is "h:" followed by @hexlen (2..64)
 * hex digits of SHA-256(@key, NUL, @in), so equal inputs stay equal and
 * different hosts with different keys do not match. Returns 0, -EINVAL,
 * or -ENOSPC when @out is too small.
 */
int twl_privacy_apply(enum twl_privacy_mode mode, const char *key,
		      const char *in, size_t hexlen, char *out, size_t cap);

/*
 * twl_cgroup_path_from_raw - turn a path captured in BPF, leaf first
 * ("leaf/parent/top/", @len bytes, each name NUL- or '/'-terminated), into
 * "/top/parent/leaf" ("/" for the root). @truncated (the BPF depth or length
 * bound was hit) prefixes "/..." to say the top is missing. Bytes that are
 * not printable UTF-8 become '?', so the result is valid wire text.
 * Returns 0, -EINVAL (malformed input), or -ENOSPC.
 */
int twl_cgroup_path_from_raw(const char *raw, size_t len, bool truncated,
			     char *out, size_t cap);

/*
 * twl_container_from_cgroup - the container identity (the writer's place,
 * wire usage[].container) of a process in cgroup @path, written to @out:
 * the place of twl_cgroup_classify() (common/include/twilight/
 * cgroup_class.h): "docker:<id>", "cri-containerd:<id>", "crio:<id>",
 * "podman:<id>", "lxc:<name>", "systemd:<unit>" or "". Returns 0 or
 * -ENOSPC (@out too small, or a name over 255 bytes).
 */
int twl_container_from_cgroup(const char *path, char *out, size_t cap);

/*
 * twl_comm_sanitize - copy a task comm (up to 16 bytes, maybe not
 * NUL-terminated) into @out[17], replacing bytes that are not printable
 * ASCII by '?' (comm is arbitrary bytes; the wire needs UTF-8 text).
 */
void twl_comm_sanitize(const char *comm, size_t n, char out[17]);

/* One usage counter with every name already resolved. */
struct twl_usage_entry {
	const char *boot_id;
	const char *feature; /* catalog id */
	const char *file; /* control file (kernfs name) */
	unsigned op; /* enum twl_bpf_op */
	const char *cgroup; /* target path, "" for reads */
	const char *comm; /* sanitized, not yet privacy-filtered */
	uint32_t uid;
	const char *writer_cgroup; /* not yet privacy-filtered */
	uint32_t last_pid;
	uint64_t count, failed, condition_met;
	uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC */
	/* the value summary as the usage map holds it (twl_bpf_types.h) */
	uint32_t val_flags; /* TWL_BPF_VAL_* */
	uint64_t val_last, val_min, val_max;
	/* the writer's container image, opted in; NULL or "": not known */
	const char *image;
};

/* twl_bpf_op_name - "read", "write", "register_event", or NULL. */
const char *twl_bpf_op_name(unsigned op);

/*
 * twl_usage_entry_to_json - the wire usage object (version 2) for @e: use
 * from the op, target_kind and container by twl_cgroup_classify() of the
 * target and writer cgroups, then privacy applied to cgroup paths,
 * container and comm; monotonic times turned into Unix seconds with @boot_realtime_ns
 * (CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns); failed and condition_met
 * capped at count (they are read without a lock while the kernel adds).
 * A write whose value summary holds a value, to a file with a value unit
 * (twl_file_value_unit()), gets "value": last (-1 unlimited), min and max
 * of the finite values, capped at TWL_WIRE_MAX_INT (bytes: its page
 * multiple below) and repaired into min <= last <= max where the summary
 * was read mid-update, unlimited, unit, and source "parsed" when any value
 * was parsed from a buffer, else "stored". Never for reads or registrations.
 * "image" when @e->image is not empty (the operator opted in).
 * Returns a new object or NULL (errno EINVAL for an unknown op, ENOMEM).
 */
json_t *twl_usage_entry_to_json(const struct twl_usage_entry *e,
				int64_t boot_realtime_ns,
				const struct twl_bpf_privacy *priv);

/*
 * twl_file_cond - the BPF condition kind (enum twl_bpf_cond) for a control
 * file of a catalog feature: non-warning features never meet one;
 * memory.use_hierarchy needs a value other than 1; swappiness and the kmem
 * and tcp limits need a non-root cgroup; everything else always meets it.
 */
unsigned twl_file_cond(const char *file, bool warns);

/*
 * twl_file_value_flags - where the value a write to control @file set is
 * found (the TWL_BPF_FILE_PAGES..TWL_BPF_FILE_U64 flags of the files map):
 * the memory limits are parsed like page_counter_memparse() and, but for
 * kmem.limit_in_bytes (which stores nothing), stored in mem_cgroup; the
 * write_u64 files pass the parsed value. 0 for files with no value
 * (force_empty, the reset files) or NULL.
 */
unsigned twl_file_value_flags(const char *file);

/*
 * twl_file_value_unit - the wire value unit of control @file: "bytes",
 * "number" or "bitmask" (move_charge_at_immigrate); NULL when its writes
 * carry no value.
 */
const char *twl_file_value_unit(const char *file);

#endif /* TWILIGHT_AGENT_BPF_USAGE_CONV_H */
