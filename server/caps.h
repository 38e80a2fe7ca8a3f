/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server needs no capability to serve: it listens on an unprivileged
 * port and writes only its data directory. Started with capabilities (by
 * root, or a unit that grants some), it gives them all up before its
 * first thread starts, keeping CAP_NET_BIND_SERVICE only for a listen
 * port below 1024. A drop that fails is fatal unless require-cap-drop is
 * off (main.c).
 */
#ifndef TWL_SERVER_CAPS_H
#define TWL_SERVER_CAPS_H

#include <stdbool.h>

/*
 * twl_caps_drop - clear the ambient set, then the effective, permitted and
 * inheritable sets (but CAP_NET_BIND_SERVICE when @keep_bind), and set
 * no_new_privs. Capabilities belong to threads: call it before any
 * thread starts. 1 when there was nothing to drop, 0 when the
 * capabilities were dropped (checked by reading them back), or a
 * negative errno when some are still held.
 */
int twl_caps_drop(bool keep_bind);

#endif /* TWL_SERVER_CAPS_H */
