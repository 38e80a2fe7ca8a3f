// SPDX-License-Identifier: GPL-2.0
/* The monotonic clock in milliseconds. */
#include <time.h>

#include <twilight/util.h>

/* Contract: see util.h. */
uint64_t twl_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
