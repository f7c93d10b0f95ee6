/* SPDX-License-Identifier: MIT */
/*
 * The coarse monotonic clock the identity caches (exe paths, process
 * maps, module misses) age their entries by: a few ms of resolution is
 * plenty for that, and a read costs no more than a vDSO load.
 */
#ifndef VITALS_CLOCK_H
#define VITALS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC_COARSE in ns. */
static inline uint64_t
clock_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* VITALS_CLOCK_H */
