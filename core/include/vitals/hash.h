/* SPDX-License-Identifier: MIT */
/*
 * The label hash every sketch uses, in one place for both sides: the BPF
 * programs (<vitals/sketch.bpf.h>) and user space (the engine, the mock
 * core, plugins) include this, so kernel and user HCAs of one size index
 * the same counters and add up.  Plain C over the kernel's fixed-width
 * types, which compiles for clang's BPF target and for user space alike.
 */
#ifndef VITALS_HASH_H
#define VITALS_HASH_H

#include <linux/types.h>

/* A BPF program has no calls to spare: in line there, as the rest of it. */
#if defined(__bpf__)
#define VITALS_HASH_FN static inline __attribute__((always_inline))
#else
#define VITALS_HASH_FN static inline
#endif

/*
 * splitmix64's finaliser (Steele, Lea, Flood): cheap, and every input bit
 * reaches every output bit.  Also the mixer of splitmix64 generators
 * (state += 0x9e3779b97f4a7c15, then this).
 */
VITALS_HASH_FN __u64
vitals_hash_mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * Hash of an event label with its exe and uid (paper 4.1.2): its low bits
 * pick the HCA counter, its high halves the first-sighting bits.
 */
VITALS_HASH_FN __u64
vitals_hash_label(__u64 label, __u32 exe_id, __u32 uid)
{
	return vitals_hash_mix64(
	    label ^ vitals_hash_mix64(((__u64)exe_id << 32) | uid));
}

#endif /* VITALS_HASH_H */
