/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twl_bpf: the agent's BPF usage counters (usage.bpf.c) - loading,
 * pinning, reading and health.
 *
 * Counting happens in the kernel; the maps and links are pinned under
 * cfg->pin_dir so uses while the agent is down are still counted and a
 * restart reuses them (counts survive). Counters are cumulative since boot
 * and never deleted during a boot, so a crash at any point loses nothing
 * and counts nothing twice (receivers keep the maximum per key).
 *
 * Nothing here aborts the agent: without BTF, an attach point or
 * privileges, twl_bpf_open() still returns a handle whose health lists
 * every probe as unavailable with the reason. A probe whose function is
 * absent or whose program the verifier refuses is left out on its own;
 * the others are loaded and attached.
 */
#ifndef TWILIGHT_AGENT_BPF_H
#define TWILIGHT_AGENT_BPF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usage_conv.h"

/* Versioned: a change of map layout (twl_bpf_types.h) means a new directory. */
#define TWL_BPF_PIN_DIR "/sys/fs/bpf/twilight/v2"

struct twl_bpf_cfg {
	/*
	 * Load BPF at all. False (the zero value) makes twl_bpf_open() touch
	 * nothing and report every probe "disabled by configuration": tests
	 * that run the agent on a development machine must never load BPF into
	 * its kernel, so loading is an explicit choice.
	 */
	bool enable;
	const char *pin_dir; /* NULL = TWL_BPF_PIN_DIR */
	bool no_pin; /* do not pin (counts then die with the agent) */
	/* each program's verifier statistics (insns processed) to the debug log */
	bool verifier_stats;
	struct twl_bpf_privacy
		privacy; /* applied before anything leaves the host */
	/*
	 * The image name of a writer's container (wire usage[].container,
	 * before privacy) into @out, 0 or -errno (none known); NULL: images
	 * are not sent (the default; the agent's container-images option).
	 */
	int (*image_of)(void *ctx, const char *container, char *out,
			size_t cap);
	void *image_ctx;
};

struct twl_bpf;

/*
 * twl_bpf_open - attach the usage counters, or reuse the pinned ones.
 * For every program: a pinned link in the pin directory is reused; else the
 * program is loaded (autoload off for functions this kernel's BTF lacks,
 * and for a program that fails to load on its own), attached and its link
 * pinned. Which controllers' v1 interfaces are built is decided from the
 * kernel's BTF here. Maps are reused from the pin directory when
 * present. Returns a handle (also when nothing could be attached: see
 * twl_bpf_health()), or NULL with errno ENOMEM. Logs one line per
 * degradation. Free with twl_bpf_free().
 */
struct twl_bpf *twl_bpf_open(const struct twl_bpf_cfg *cfg);

/* twl_bpf_free - release the handle (NULL-safe); pinned maps and links stay. */
void twl_bpf_free(struct twl_bpf *b);

/* twl_bpf_active - true when at least one probe is attached. */
bool twl_bpf_active(const struct twl_bpf *b);

/*
 * twl_bpf_nothing_to_count - true when this kernel's BTF shows the memory
 * controller's v1 interface is not built (e.g. 6.12 without
 * CONFIG_MEMCG_V1): no probe is loaded, as there is no file to count, and
 * health.controllers says so.
 */
bool twl_bpf_nothing_to_count(const struct twl_bpf *b);

/* Flags of twl_bpf_collect(). */
#define TWL_BPF_COLLECT_CHANGED \
	0x1 /* only keys changed since the last collect */

/*
 * twl_bpf_collect - append one wire usage entry (schema/wire-format.md) per
 * counter key to @usage_array, cumulative since boot, with privacy settings
 * applied. With TWL_BPF_COLLECT_CHANGED only keys whose counts changed
 * since the previous collect through this handle are appended (the first
 * collect of a handle appends all). Keys whose file maps to no catalog
 * feature are skipped. Appends at most TWL_BPF_USAGE_ENTRIES entries: the
 * caller splits them into batches of TWL_WIRE_MAX_USAGE. Returns the number
 * of entries appended, or a negative errno (-ENODEV when no map is open).
 */
int twl_bpf_collect(struct twl_bpf *b, json_t *usage_array, const char *boot_id,
		    unsigned flags);

/*
 * twl_bpf_health - set "probes" (array of {name, state, reason}; state
 * not_built for a memory v1 function absent because that code is not
 * built), "controllers" (wire health.controllers: memory, cpuset, freezer,
 * blkio, cgroup, each attached, unavailable or not_built as the kernel's
 * BTF says, see twl_bpf_decide.h) and "map_overflows" (sum over CPUs of
 * failed map inserts) in the health object @health. Returns 0 or -ENOMEM.
 */
int twl_bpf_health(struct twl_bpf *b, json_t *health);

/*
 * twl_bpf_counted - true when the counters hold at least one use of catalog
 * feature @feature_id (any op, any cgroup) in this boot.
 */
bool twl_bpf_counted(struct twl_bpf *b, const char *feature_id);

/*
 * twl_bpf_covers - true when an attached probe would count uses of
 * @feature_id (its files or event files are counted and the probes for
 * them are attached). Features the probes cannot see (boot options,
 * remounts, other controllers) are not covered.
 */
bool twl_bpf_covers(struct twl_bpf *b, const char *feature_id);

/*
 * twl_bpf_probe_missing - the kmsg/BPF cross-check: true when kmsg saw a
 * warning for @feature_id at kernel time @warn_mono_us (µs since boot),
 * after the probes were first attached, the feature is covered, and yet
 * nothing was counted. The agent lists such features in
 * health.probe_missing: missing data must never read as "no usage".
 */
bool twl_bpf_probe_missing(struct twl_bpf *b, const char *feature_id,
			   uint64_t warn_mono_us);

#endif /* TWILIGHT_AGENT_BPF_H */
