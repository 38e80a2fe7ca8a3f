// SPDX-License-Identifier: GPL-2.0
/* Logging to stderr: one line per event, program name and level first. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

static char log_prog[32] = "twilight";
static int log_max_prio = LOG_INFO;

static const char *prio_name(int prio)
{
	static const char *const names[] = { "emerg", "alert",	 "crit",
					     "error", "warning", "notice",
					     "info",  "debug" };

	if (prio < 0 || prio > LOG_DEBUG)
		return "log";
	return names[prio];
}

void twl_log_init(const char *prog, int max_prio)
{
	if (prog && *prog)
		snprintf(log_prog, sizeof(log_prog), "%s", prog);
	if (max_prio < LOG_EMERG)
		max_prio = LOG_EMERG;
	if (max_prio > LOG_DEBUG)
		max_prio = LOG_DEBUG;
	log_max_prio = max_prio;
}

void twl_log(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t n;

	if (prio > log_max_prio)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	/* One fprintf so concurrent writers do not interleave inside a line. */
	fprintf(stderr, "%s: %s: %s\n", log_prog, prio_name(prio), line);
}
