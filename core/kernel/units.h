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

#endif /* VITALS_UNITS_H */
