/* SPDX-License-Identifier: MIT */
/*
 * Regions of a run of units (the kernel sketch maps' pool, see bpf.c):
 * each a power of two of units, placed first-fit at a multiple of its
 * size, so that a region given back leaves room for any region no larger
 * where it was.  used[] holds 1 for a unit in a region, 0 for a free one.
 */
#ifndef VITALS_UNITS_H
#define VITALS_UNITS_H

#include <stdint.h>

/* Place a region of n units (a power of two): its first unit, or -1. */
int64_t units_take(uint8_t *used, uint32_t units, uint32_t n);

/* Give back the region of n units from unit at. */
void units_give(uint8_t *used, uint32_t at, uint32_t n);

/* Entries of each sketch map in a unit (cfg's hca_off counts units). */
#define UNITS_ENTRIES 1024U
/* Bytes of a unit: a counter and a word of first-sighting bits an entry. */
#define UNITS_BYTES (UNITS_ENTRIES * 2 * sizeof(uint64_t))
/* Most units of a pool: what hca_off can name. */
#define UNITS_MAX 65535U

/*
 * Units of the pool every kernel probe shares under sketch.hca_memory
 * (memory bytes, not 0): as many as it holds, and 32 more, since the
 * engine reckons an HCA under 1024 counters at its size and the maps at
 * a unit (room for 16 such vitals in both halves); at most UNITS_MAX.
 */
uint32_t units_pool(uint64_t memory);

#endif /* VITALS_UNITS_H */
