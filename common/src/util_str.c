// SPDX-License-Identifier: GPL-2.0
/* Small string helpers shared by agent and server. */
#include <ctype.h>
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
