/* SPDX-License-Identifier: GPL-2.0 */
/*
 * identity: who this host is, for the report's "host" object.
 *
 * host_id = sha256(machine id + application key) in hex, so the id is
 * stable per host but reveals nothing about /etc/machine-id. Without a
 * machine id (missing or empty file, common in small guests) a random id
 * is created once and kept in STATE_DIR/host-id, so such hosts still
 * differ.
 */
#ifndef TWL_AGENT_IDENTITY_H
#define TWL_AGENT_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "labels.h"

#define TWL_HOST_ID_FILE "host-id"

struct twl_identity {
	char host_id[65];
	char hostname[256];
	char boot_id[65];
	char kernel[65];
	char cgroup_mode[8];
	bool host_id_ephemeral; /* random and not saved (no state dir) */
	/*
	 * The running config's labels (NULL: none); it points into the
	 * config so that a reload's labels are sent from then on.
	 */
	const struct twl_labels *labels;
};

struct twl_identity_cfg {
	const char *machine_id_path; /* /etc/machine-id */
	const char *boot_id_path; /* /proc/sys/kernel/random/boot_id */
	const char *host_id_key; /* application key */
	const char *state_dir; /* where host-id lives; NULL = none */
	bool read_only; /* never create host-id (dry run): ephemeral id instead */
	const char *mountinfo, *cgroup_root; /* for cgroup_mode */
	bool send_hostname;
	const struct twl_labels *labels; /* kept in twl_identity.labels */
};

/*
 * twl_host_id_from_machine_id - the host id for machine id text @mid
 * (surrounding whitespace ignored) and key @key into @out. Returns 0 or
 * -ENODATA when @mid is empty.
 */
int twl_host_id_from_machine_id(const char *mid, const char *key, char out[65]);

/*
 * twl_identity_load - fill @id. host id: from the machine id; else from
 * state_dir/host-id, created (0600, atomically) if absent; with no
 * state_dir, or read_only and no host-id file, an ephemeral random id. boot id: read from boot_id_path
 * (lowercased, validated). cgroup mode from the mount table ("v2" if that
 * cannot be read). Returns 0 or -errno (boot id unreadable or malformed:
 * -EINVAL; host-id file corrupt: -EINVAL; write failure).
 */
int twl_identity_load(const struct twl_identity_cfg *cfg,
		      struct twl_identity *id);

#endif /* TWL_AGENT_IDENTITY_H */
