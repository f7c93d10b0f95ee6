/* SPDX-License-Identifier: MIT */
/*
 * The label hash every sketch uses.  It must stay identical wherever an
 * HCA is indexed (user space, and later the BPF programs), because HCAs of
 * the same size and hash are summed into longer timescales.
 */
#ifndef VITALS_HASH_H
#define VITALS_HASH_H

#include <stdint.h>

/* splitmix64's finalizer: cheap, and every input bit reaches every output bit. */
static inline uint64_t
hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Hash of an event label with its exe and uid (paper 4.1.2). */
static inline uint64_t
hash_label(uint64_t label, uint32_t exe_id, uint32_t uid)
{
	return hash_mix64(label ^ hash_mix64(((uint64_t)exe_id << 32) | uid));
}

#endif /* VITALS_HASH_H */
