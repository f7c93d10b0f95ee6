/* SPDX-License-Identifier: MIT */
/*
 * One epoch's sketch of one vital: the hashed counter array (HCA), the
 * first-sighting filter, and the bounded sample store.  Everything is
 * allocated up front; sketch_add never allocates.
 */
#ifndef VITALS_SKETCH_H
#define VITALS_SKETCH_H

#include <stdint.h>
#include <stddef.h>
#include <vitals/vitals.h>

/* Sizes of one sketch; all validated by sketch_new. */
struct sketch_params {
	uint32_t hca_size;    /* counters, a power of two */
	uint32_t seen_bits;   /* first-sighting filter bits, a power of two */
	uint32_t max_samples; /* samples kept */
	uint32_t stack_depth; /* frames kept per side */
	uint64_t floor;       /* counters below it are never sampled */
};

/* Interned executable path, so each sample need not copy it. */
struct sketch_exe {
	uint32_t id;   /* exe_id, 0 = free slot */
	uint32_t off;  /* offset of the path in the string pool */
};

/* One buffer.  Read the members; change them only through sketch_*. */
struct sketch {
	struct sketch_params p;
	uint32_t seen_shift;    /* 64 - log2(seen_bits) */
	uint32_t nsamples;      /* samples kept */
	uint32_t limit;         /* samples kept at most this epoch, <= p.max_samples
				 * (the engine's disk budget lowers it) */
	uint64_t events;        /* events counted */
	uint64_t wsum;          /* sum of weights */
	uint64_t samples_dropped; /* sampled but not kept: memory full */
	uint64_t *hca;          /* p.hca_size counters */
	uint64_t *seen;         /* p.seen_bits / 64 words */
	struct vitals_sample *samples; /* p.max_samples */
	uint64_t *frames;       /* 2 * stack_depth per sample */
	char *comms;            /* VITALS_COMM_LEN per sample */
	const char **syms;      /* 2 * stack_depth names per sample, or NULL */
	struct sketch_exe *exes;/* open-addressed, nexes slots */
	uint32_t nexes;         /* slots in exes, a power of two */
	uint32_t pool_used;     /* bytes used in pool */
	uint32_t pool_size;     /* bytes in pool */
	char *pool;             /* exe paths, NUL-terminated */
};

/*
 * Allocate a sketch.  Returns NULL if a size is invalid (not a power of
 * two, zero) or memory runs out.  Free with sketch_free.
 */
struct sketch *sketch_new(const struct sketch_params *p);

/* Free a sketch; accepts NULL. */
void sketch_free(struct sketch *s);

/* Clear counters, filter and samples for a new epoch. */
void sketch_reset(struct sketch *s);

/* Bytes allocated for the sketch (counters, filter, samples, pools). */
size_t sketch_bytes(const struct sketch_params *p);

/*
 * Count an event: add its weight to the counter its label hashes to, then
 * decide whether to sample it: yes when the counter crossed a power of
 * 2^shift that is >= floor, or when the counter is >= floor and the label
 * has not been seen (at or above the floor) this epoch.  The last eighth
 * of the sample store (up to limit) only takes such first sightings.  Returns 1 if the
 * event was kept as a sample, 2 if it should have been but the sample
 * store is full, 0 if it was only counted.
 */
int sketch_add(struct sketch *s, const struct vitals_event *ev,
    uint32_t shift);

/*
 * Keep an event as a sample without counting it, with the counter value
 * `count` (used when the sketch lives in the kernel).  Returns 1 if kept,
 * 2 if the store is full.
 */
int sketch_keep(struct sketch *s, const struct vitals_event *ev,
    uint64_t slot, uint64_t count);

/*
 * Attach frame names to sample i: nk kernel names then nu user names
 * (borrowed: they must outlive the epoch, as symbol.c's do).  The name
 * array is allocated on first use.  Returns 0 or -ENOMEM.
 */
int sketch_set_syms(struct sketch *s, uint32_t i, const char *const *names,
    uint32_t nk, uint32_t nu);

/*
 * Whether a counter moving from old to new crossed an integral power of
 * t = 2^shift that is at least floor.  Exposed for tests and the kernel
 * side, which must decide identically.
 */
int sketch_crossed(uint64_t old, uint64_t new, uint32_t shift,
    uint64_t floor);

/* Distinct labels estimated from the zero counters (linear counting). */
uint64_t sketch_unique(const uint64_t *hca, uint32_t m);

#endif /* VITALS_SKETCH_H */
