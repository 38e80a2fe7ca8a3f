// SPDX-License-Identifier: GPL-2.0
/* Numeric socket addresses from text (util.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <twilight/config.h>
#include <twilight/util.h>

/* Contract: see util.h. */
int twl_parse_addr_port(const char *s, struct sockaddr_storage *ss,
			socklen_t *len)
{
	char host[128];
	const char *colon;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(rb - s - 1), s + 1);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	}
	if (twl_parse_u64(colon + 1, 65535, &port))
		return -EINVAL;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) ==
	    1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		if (len)
			*len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host,
		      &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		if (len)
			*len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -EINVAL;
}
