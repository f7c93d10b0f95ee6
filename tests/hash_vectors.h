/* SPDX-License-Identifier: MIT */
/*
 * Known values of <vitals/hash.h>, which both the user-space engine
 * (tests/check_hash.c) and the BPF programs (tests/check_hash_bpf.c, the
 * header compiled for the BPF target) must give: the hash indexes the HCA
 * on both sides and in every stored epoch, so it never changes.  Plain C
 * over the kernel's fixed-width types, included by both sides.
 */
#ifndef VITALS_TESTS_HASH_VECTORS_H
#define VITALS_TESTS_HASH_VECTORS_H

#include <linux/types.h>

struct hash_mix_vec {
	__u64 in, out; /* vitals_hash_mix64(in) == out */
};

struct hash_label_vec {
	__u64 label;
	__u32 exe_id, uid;
	__u64 out; /* vitals_hash_label(label, exe_id, uid) == out */
};

/* 0x9e37...15 -> 0xe220...af is splitmix64's first output from seed 0. */
static const struct hash_mix_vec hash_mix_vecs[] = {
	{ 0x0000000000000000ULL, 0x0000000000000000ULL },
	{ 0x0000000000000001ULL, 0x5692161d100b05e5ULL },
	{ 0x9e3779b97f4a7c15ULL, 0xe220a8397b1dcdafULL },
	{ 0xffffffffffffffffULL, 0xb4d055fcf2cbbd7bULL },
	{ 0x0123456789abcdefULL, 0xb2c058e4ebb5112cULL },
};

static const struct hash_label_vec hash_label_vecs[] = {
	{ 0x0ULL, 0x0U, 0, 0x0000000000000000ULL },
	{ 0x1ULL, 0x0U, 0, 0x5692161d100b05e5ULL },
	{ 0xabcULL, 0x7U, 1000, 0xd807783a802900bcULL },
	{ 0x77ULL, 0x3U, 0, 0xad545d4bb57d97dfULL },
	{ 0xffffffffffffffffULL, 0xffffffffU, 0xffffffffU,
	    0xd6bdf7544574c9cbULL },
	{ 0x7f12345670ULL, 0x9e3779b9U, 65534, 0xcdbb1df62b7cc53aULL },
};

#define HASH_NMIX (sizeof(hash_mix_vecs) / sizeof(hash_mix_vecs[0]))
#define HASH_NLABEL (sizeof(hash_label_vecs) / sizeof(hash_label_vecs[0]))

#endif /* VITALS_TESTS_HASH_VECTORS_H */
