// SPDX-License-Identifier: GPL-2.0
/* Small string helpers shared by agent and server. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

/* Contract: see util.h. */
char *twl_strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Contract: see util.h. */
void twl_uri_redact(const char *uri, char *out, size_t cap)
{
	const char *auth = strstr(uri, "://");
	const char *at, *colon, *pw;
	size_t alen;
	int n;

	auth = auth ? auth + 3 : uri;
	alen = strcspn(auth, "/?");
	at = memrchr(auth, '@', alen);
	colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon)
		n = snprintf(out, cap, "%.*s:***%s", (int)(colon - uri), uri,
			     at);
	else
		n = snprintf(out, cap, "%s", uri);
	/* a password among the parameters: its value cut off */
	pw = strstr(out, "?password=");
	if (!pw)
		pw = strstr(out, "&password=");
	if (n >= 0 && pw && (size_t)(pw - out) + 14 < cap)
		snprintf(out + (pw - out) + 10, cap - (size_t)(pw - out) - 10,
			 "***");
	else if (pw) /* no room for the mark: cut, never a password's start */
		out[pw - out] = '\0';
}
