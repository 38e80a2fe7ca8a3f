/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF usage counters (usage.bpf.c) and their loader
 * (twl_bpf_*.c). Included from BPF code (after vmlinux.h) and from user
 * space (after <linux/types.h>), so only __u32/__u64/char here.
 *
 * The maps are pinned under /sys/fs/bpf/twilight/v2/ and outlive the agent:
 * any change to these layouts must bump the "v2" in the pin directory
 * (TWL_BPF_PIN_DIR in twl_bpf.h), never reuse maps of another layout
 * (v1: the usage value without the value summary).
 */
#ifndef TWILIGHT_BPF_TYPES_H
#define TWILIGHT_BPF_TYPES_H

#define TWL_BPF_COMM_LEN 16
/* kernfs names of control files are "memory." + cftype name (< 64 bytes). */
#define TWL_BPF_FILE_NAME_LEN 64
/*
 * Cgroup paths are captured leaf first: component, '/', component, '/', ...
 * up to TWL_BPF_PATH_DEPTH components; each component read is at most
 * TWL_BPF_COMP_LEN bytes and starts below TWL_BPF_PATH_OFF_MAX, so the
 * buffer never overflows (the verifier checks this too).
 */
#define TWL_BPF_PATH_LEN 512
#define TWL_BPF_COMP_LEN 256
#define TWL_BPF_PATH_OFF_MAX 255
#define TWL_BPF_PATH_DEPTH 16

/* Map sizes: generous, because nothing is deleted during a boot. */
#define TWL_BPF_USAGE_ENTRIES 16384
#define TWL_BPF_PATH_ENTRIES 8192
#define TWL_BPF_FILE_ENTRIES 256
#define TWL_BPF_CFT_ENTRIES 512

/* Operation in a usage key. */
enum twl_bpf_op {
	TWL_BPF_OP_READ = 0,
	TWL_BPF_OP_WRITE = 1,
	TWL_BPF_OP_REGISTER = 2,
};

/* The kernel warning's condition for a file (files map value .cond). */
enum twl_bpf_cond {
	TWL_BPF_COND_NEVER = 0, /* the kernel prints nothing for it */
	TWL_BPF_COND_ALWAYS = 1, /* every use meets it */
	TWL_BPF_COND_NON_ROOT = 2, /* only on a non-root cgroup */
	TWL_BPF_COND_VALUE_NOT_1 = 3, /* a written value other than 1 */
};

/* files map value .flags: which uses of the file are counted. */
#define TWL_BPF_FILE_DIRECT 0x1 /* reads and writes of the file */
#define TWL_BPF_FILE_EVENT 0x2 /* eventfd registrations on it */
/*
 * files map value .flags: where the value a write set is found. A stored
 * value is read back after a successful write; otherwise a TWL_BPF_FILE_PAGES
 * buffer is parsed as the kernel does (twl_memparse_pages()).
 */
#define TWL_BPF_FILE_PAGES 0x4 /* buffer: page_counter_memparse(buf, "-1") */
#define TWL_BPF_FILE_SOFT 0x8 /* stored: mem_cgroup::soft_limit */
#define TWL_BPF_FILE_TCP 0x10 /* stored: mem_cgroup::tcpmem.max */
#define TWL_BPF_FILE_MEM 0x20 /* stored: mem_cgroup::memory.max */
#define TWL_BPF_FILE_MEMSW 0x40 /* stored: mem_cgroup::memsw.max */
#define TWL_BPF_FILE_U64 0x80 /* the write_u64 handler's parsed argument */

/* Index into the per-CPU overflow counter array. */
enum twl_bpf_overflow {
	TWL_BPF_OVF_USAGE = 0, /* usage map full */
	TWL_BPF_OVF_PATH = 1, /* path map full */
	TWL_BPF_OVF_NR = 2,
};

/* Index into the meta array. */
enum twl_bpf_meta {
	TWL_BPF_META_ATTACH_NS = 0, /* CLOCK_MONOTONIC ns of first attach */
	TWL_BPF_META_NR = 4,
};

/* Key of the files map, filled by user space from the catalog. */
struct twl_bpf_file_key {
	char name[TWL_BPF_FILE_NAME_LEN]; /* NUL-padded kernfs name */
};

struct twl_bpf_file_val {
	__u32 id; /* stable for the boot: used in usage keys */
	__u16 cond; /* enum twl_bpf_cond */
	__u16 flags; /* TWL_BPF_FILE_* */
};

/*
 * Key of the usage map. Reads carry target_cgid 0 (keyed without target, so
 * a daemon polling every cgroup does not fill the map). Cgroup ids are
 * kernfs node ids, unique only within one hierarchy, hence the hierarchy id.
 */
struct twl_bpf_usage_key {
	__u64 target_cgid;
	__u64 writer_cgid; /* writer's memory-controller cgroup */
	__u32 file_id;
	__u32 op; /* enum twl_bpf_op */
	__u32 target_hier;
	__u32 writer_hier;
	__u32 uid;
	__u32 pad;
	char comm[TWL_BPF_COMM_LEN];
};

/* usage map value .val_flags */
#define TWL_BPF_VAL_SEEN 0x1 /* val_last holds a value */
#define TWL_BPF_VAL_FINITE 0x2 /* val_min and val_max hold values */
#define TWL_BPF_VAL_UNLIMITED 0x4 /* unlimited was written at least once */
#define TWL_BPF_VAL_STORED 0x8 /* a value was read from the kernel's state */
#define TWL_BPF_VAL_PARSED 0x10 /* a value was parsed from a written buffer */
/* val_last of an unlimited value (PAGE_COUNTER_MAX, or "-1" written). */
#define TWL_BPF_VAL_INF (~0ULL)

/*
 * Value of the usage map. The value summary (val_*) covers the writes whose
 * value is known: the number a write_u64 file was given, or the limit set
 * through mem_cgroup_write, in bytes rounded down to pages. It is updated
 * without a lock: two CPUs writing the same key at the same instant may lose
 * one update of val_min or val_max.
 */
struct twl_bpf_usage_val {
	__u64 count; /* attempts (each counted once, when it returns) */
	__u64 failed; /* attempts that returned an error */
	__u64 condition_met; /* attempts for which the warning condition held */
	__u64 first_ns; /* CLOCK_MONOTONIC */
	__u64 last_ns;
	__u32 last_pid; /* tgid */
	__u32 val_flags; /* TWL_BPF_VAL_* */
	__u64 val_last; /* TWL_BPF_VAL_INF: unlimited */
	__u64 val_min, val_max; /* finite values only */
};

/* Key and value of the path map: where a cgroup id first seen lives. */
struct twl_bpf_path_key {
	__u64 cgid;
	__u32 hier;
	__u32 pad;
};

struct twl_bpf_path_val {
	__u32 len; /* bytes used in path[] */
	__u32 truncated; /* depth or length bound hit */
	char path[TWL_BPF_PATH_LEN]; /* leaf first, '/'-terminated names */
};

#endif /* TWILIGHT_BPF_TYPES_H */
