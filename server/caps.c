// SPDX-License-Identifier: GPL-2.0
/* Giving up capabilities at start (caps.h). */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>

#include "caps.h"

/* glibc's wrappers of the system calls; no libc header declares them. */
int capget(cap_user_header_t hdr, cap_user_data_t data);
int capset(cap_user_header_t hdr, const cap_user_data_t data);

static int get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};

	memset(d, 0, 2 * sizeof(*d));
	return capget(&hdr, d) ? -errno : 0;
}

/* Whether @d holds anything beyond @want (effective, permitted, inheritable). */
static bool more_than(const struct __user_cap_data_struct d[2],
		      const struct __user_cap_data_struct want[2])
{
	for (int i = 0; i < 2; i++)
		if ((d[i].effective & ~want[i].effective) ||
		    (d[i].permitted & ~want[i].permitted) || d[i].inheritable)
			return true;
	return false;
}

/* Contract: see caps.h. */
int twl_caps_drop(bool keep_bind)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct want[2] = { { 0 } }, now[2];
	const uint32_t bind = 1u << (CAP_NET_BIND_SERVICE % 32);
	int ret;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	/* EINVAL: a kernel without ambient capabilities has none to clear */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return -errno;
	if (keep_bind) {
		want[CAP_NET_BIND_SERVICE / 32].effective = bind;
		want[CAP_NET_BIND_SERVICE / 32].permitted = bind;
	}
	ret = get(now);
	if (ret)
		return ret;
	if (!more_than(now, want))
		return 1;
	/* nothing can be kept that was not there */
	for (int i = 0; i < 2; i++) {
		want[i].effective &= now[i].permitted;
		want[i].permitted &= now[i].permitted;
	}
	if (capset(&hdr, want))
		return -errno;
	ret = get(now);
	if (!ret && more_than(now, want))
		ret = -EPERM;
	return ret;
}
