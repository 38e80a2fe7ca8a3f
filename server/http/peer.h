/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who is connecting, as the per-address limits count it: an IPv4 address
 * (also when mapped into IPv6) on its own, an IPv6 address by its /64,
 * which one host or one customer of a provider usually owns whole (an
 * attacker gets 2^64 addresses from one prefix). Pure.
 */
#ifndef TWL_SERVER_PEER_H
#define TWL_SERVER_PEER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>

/* Longest key: "xxxx:xxxx:xxxx:xxxx::/64" and its NUL. */
#define TWL_PEER_KEY_MAX 28

struct twl_peer {
	char text[INET6_ADDRSTRLEN]; /* the address, for logs ("?" if none) */
	char key[TWL_PEER_KEY_MAX]; /* what the limits count by */
	bool loopback; /* 127.0.0.0/8, ::1, or 127/8 mapped into IPv6 */
};

/*
 * twl_peer_of - fill @p for the address @sa (may be NULL). 0, or
 * -EAFNOSUPPORT for a family other than IPv4 and IPv6 (@p then says "?"
 * and has the key "?").
 */
int twl_peer_of(const struct sockaddr *sa, struct twl_peer *p);

#endif /* TWL_SERVER_PEER_H */
