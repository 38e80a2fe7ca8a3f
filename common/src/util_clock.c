// SPDX-License-Identifier: GPL-2.0
/* The monotonic clock, and the boot time that maps it to wall-clock time. */
#include <time.h>

#include <twilight/util.h>

/* Contract: see util.h. */
uint64_t twl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Contract: see util.h. */
uint64_t twl_mono_ms(void)
{
	return twl_mono_ns() / 1000000;
}

/* Contract: see util.h. */
int64_t twl_boot_time_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000LL +
	       ((int64_t)rt.tv_nsec - mono.tv_nsec);
}
