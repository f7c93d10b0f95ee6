/* SPDX-License-Identifier: MIT */
/*
 * Zipf-skewed draws of label indexes, for the coverage test and bench: a
 * splitmix64 generator and a cumulative table searched by bisection, so a
 * seed gives the same stream everywhere.
 */
#ifndef VITALS_TESTS_ZIPF_H
#define VITALS_TESTS_ZIPF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* The next 64 random bits of the stream *state holds. */
static inline uint64_t
zipf_rng(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The cumulative distribution of n labels, label i weighing 1/(i+1)^s
 * (s 0: uniform); the caller frees it.  NULL when memory runs out.
 */
static inline double *
zipf_cdf(uint32_t n, double s)
{
	double *cdf = calloc(n, sizeof(double)), sum = 0;
	uint32_t i;

	if (cdf == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		cdf[i] = sum += 1.0 / pow(i + 1, s);
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

/* A label index in [0, n) drawn by cdf (zipf_cdf) from *state. */
static inline uint32_t
zipf_draw(const double *cdf, uint32_t n, uint64_t *state)
{
	double u = (double)(zipf_rng(state) >> 11) / 9007199254740992.0;
	uint32_t lo = 0, hi = n - 1, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
