/* SPDX-License-Identifier: MIT */
/* Regions of a run of units: see units.h. */
#include <string.h>

#include "units.h"

int64_t
units_take(uint8_t *used, uint32_t units, uint32_t n)
{
	uint32_t u, k;

	if (n == 0 || (n & (n - 1)) != 0)
		return -1;
	for (u = 0; n <= units && u <= units - n; u += n) {
		for (k = 0; k < n && !used[u + k]; k++)
			;
		if (k == n) {
			memset(used + u, 1, n);
			return u;
		}
	}
	return -1;
}

void
units_give(uint8_t *used, uint32_t at, uint32_t n)
{
	memset(used + at, 0, n);
}

uint32_t
units_pool(uint64_t memory)
{
	uint64_t n = (memory + UNITS_BYTES - 1) / UNITS_BYTES + 32;

	return n > UNITS_MAX ? UNITS_MAX : (uint32_t)n;
}
