/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Open connections per peer key (peer.h), counted exactly: keys are
 * compared whole, so one address never counts against another (a 12-bit
 * hash of the text once let 127.0.0.144 lock out 127.0.0.1). The table
 * has a fixed size: a key takes a slot only while it has a connection,
 * so room for as many keys as connections is room enough. Its hash is
 * keyed with a random seed, so nobody can choose addresses that pile up
 * in one probe chain. Thread-safe.
 */
#ifndef TWL_SERVER_CONNTRACK_H
#define TWL_SERVER_CONNTRACK_H

struct twl_conntrack;

/* Room for @keys keys at once (>= 1). NULL with errno on failure. */
struct twl_conntrack *twl_conntrack_new(unsigned keys);

/* NULL-safe. */
void twl_conntrack_free(struct twl_conntrack *ct);

/* Connections @key has now. */
unsigned twl_conntrack_count(struct twl_conntrack *ct, const char *key);

/*
 * twl_conntrack_add - count one more connection for @key if it has fewer
 * than @max: 0, -EUSERS (it has @max already; nothing counted) or
 * -ENOSPC (the table is full; nothing counted).
 */
int twl_conntrack_add(struct twl_conntrack *ct, const char *key, unsigned max);

/* One connection of @key fewer (a key not counted is ignored). */
void twl_conntrack_del(struct twl_conntrack *ct, const char *key);

#endif /* TWL_SERVER_CONNTRACK_H */
