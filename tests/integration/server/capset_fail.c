// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for capdrop.sh: capset() always fails with EPERM, as it
 * does under a sandbox that forbids the call (systemd's
 * SystemCallFilter=~@privileged). Nothing else changes.
 */
#include <errno.h>
#include <linux/capability.h>

int capset(cap_user_header_t hdr, const cap_user_data_t data);

int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	(void)hdr;
	(void)data;
	errno = EPERM;
	return -1;
}
