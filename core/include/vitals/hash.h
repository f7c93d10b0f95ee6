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

/* Kernel addresses on x86-64 lie at or above it; user ones below 2^47. */
#define VITALS_KADDR_MIN 0xffff800000000000ULL

#define VITALS_HASH_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define VITALS_HASH_SIPROUND(v0, v1, v2, v3) \
	do { \
		v0 += v1; \
		v1 = VITALS_HASH_ROTL(v1, 13) ^ v0; \
		v0 = VITALS_HASH_ROTL(v0, 32); \
		v2 += v3; \
		v3 = VITALS_HASH_ROTL(v3, 16) ^ v2; \
		v0 += v3; \
		v3 = VITALS_HASH_ROTL(v3, 21) ^ v0; \
		v2 += v1; \
		v1 = VITALS_HASH_ROTL(v1, 17) ^ v2; \
		v2 = VITALS_HASH_ROTL(v2, 32); \
	} while (0)

/*
 * SipHash-2-4 (Aumasson, Bernstein) of the one 64-bit word x under the
 * 128-bit key (k0, k1), its top bit cleared: a kernel pointer as it may
 * be stored (doc/design.md, "Kernel addresses").  Without the key the
 * value can be neither inverted nor recomputed from a guessed address,
 * and it is never in the kernel's address range.
 */
VITALS_HASH_FN __u64
vitals_hash_keyed(__u64 k0, __u64 k1, __u64 x)
{
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	__u64 b = 8ULL << 56;

	v3 ^= x;
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	v0 ^= x;
	v3 ^= b;
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	VITALS_HASH_SIPROUND(v0, v1, v2, v3);
	return (v0 ^ v1 ^ v2 ^ v3) >> 1;
}

#endif /* VITALS_HASH_H */
