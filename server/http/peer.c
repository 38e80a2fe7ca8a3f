// SPDX-License-Identifier: GPL-2.0
/* Peer addresses and the keys the limits count them by (peer.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "http/peer.h"

static void v4(const uint8_t a[4], struct twl_peer *p)
{
	snprintf(p->text, sizeof(p->text), "%u.%u.%u.%u", a[0], a[1], a[2],
		 a[3]);
	snprintf(p->key, sizeof(p->key), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	p->loopback = a[0] == 127;
}

static void v6(const struct in6_addr *a, struct twl_peer *p)
{
	const uint8_t *b = a->s6_addr;

	inet_ntop(AF_INET6, a, p->text, sizeof(p->text));
	snprintf(p->key, sizeof(p->key), "%x:%x:%x:%x::/64", b[0] << 8 | b[1],
		 b[2] << 8 | b[3], b[4] << 8 | b[5], b[6] << 8 | b[7]);
	p->loopback = IN6_IS_ADDR_LOOPBACK(a);
}

/* Contract: see peer.h. */
int twl_peer_of(const struct sockaddr *sa, struct twl_peer *p)
{
	memset(p, 0, sizeof(*p));
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		v4((const uint8_t *)&in->sin_addr.s_addr, p);
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			v4(in6->sin6_addr.s6_addr + 12, p);
		else
			v6(&in6->sin6_addr, p);
		return 0;
	}
	snprintf(p->text, sizeof(p->text), "?");
	snprintf(p->key, sizeof(p->key), "?");
	return -EAFNOSUPPORT;
}
