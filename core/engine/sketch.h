/* SPDX-License-Identifier: MIT */
/*
 * One epoch's sketch of one vital: the hashed counter array (HCA), the
 * first-sighting filter, and the bounded sample store.  The HCA is
 * allocated up front; the filter on the first event counted here (vitals
 * counted in the kernel have their own), and the sample store grows with
 * the samples kept, by doubling, within max_samples and a byte budget the
 * sketches of an engine share, and shrinks back at resets: sketch_add
 * allocates only when a sample is kept and the store is full.
 */
#ifndef VITALS_SKETCH_H
#define VITALS_SKETCH_H

#include <stdint.h>
#include <stddef.h>
#include <vitals/vitals.h>

/* Sizes of one sketch; all validated by sketch_new. */
struct sketch_params {
	uint32_t hca_size; /* counters, a power of two */
	uint32_t seen_bits; /* first-sighting filter bits, a power of two:
			     * SKETCH_SEEN_PER_COUNTER per counter if more */
	uint32_t hca_max; /* hca_size may grow to (sketch_resize_hca); 0:
			   * hca_size */
	uint32_t max_samples; /* samples kept */
	uint32_t stack_depth; /* frames kept per side */
	uint64_t floor; /* counters below it are never sampled */
};

/*
 * Bytes of sample stores that the sketches sharing it may hold at once
 * (the engine's sketch.sample_memory).  Each sketch may take its first
 * SKETCH_FIRST samples' worth whatever the budget, and until it has, that
 * much is kept for it: the stores hold at most the limit (or their first
 * samples' worth, if more), but for sketches made once it was spent.
 */
struct sketch_budget {
	size_t limit; /* 0: no bound but max_samples */
	size_t used; /* held now */
	size_t kept; /* for the first samples of sketches with no store */
};

/*
 * First-sighting bits per HCA counter, at least: an HCA at most half full
 * (sketch_hca_next) leaves 128 bits to a label, and the filter's two bits
 * then collide for under 0.1% of the labels.
 */
#define SKETCH_SEEN_PER_COUNTER 64

/* Epochs a sketch stays idle (under 1/8 full) before its HCA shrinks. */
#define SKETCH_IDLE_EPOCHS 4

/* Samples a sample store starts with, and keeps at least once it grew. */
#define SKETCH_FIRST 16
/*
 * Samples past the limit for heavy labels first seen late, at least (a
 * quarter of the limit above 8).
 */
#define SKETCH_RESERVE_MIN 2
/* Bits of the filter of sampled labels: 2048 samples in it, 1.4% false. */
#define SKETCH_SAMPLED_BITS 32768

/* Interned executable path, so each sample need not copy it. */
struct sketch_exe {
	uint32_t id; /* exe_id, 0 = free slot */
	uint32_t off; /* offset of the path in the string pool */
};

/*
 * The exe paths the samples of one epoch name, interned: a sketch's own,
 * or one that the sketches of an engine collecting the same epoch share
 * (sketch_share_exes).  Allocated when the first path comes; full, a
 * path not in it is named "".
 */
struct sketch_exes {
	struct sketch_exe *slot; /* open-addressed, nslots; NULL until used */
	uint32_t nslots; /* a power of two */
	uint32_t used; /* bytes used in pool */
	uint32_t size; /* bytes in pool */
	char *pool; /* exe paths, NUL-terminated */
};

/* The sizes of a sketch's own exe paths. */
#define SKETCH_EXE_SLOTS 256
#define SKETCH_POOL_BYTES 16384

/* Bytes exes of nslots and size take once used. */
size_t sketch_exes_bytes(uint32_t nslots, uint32_t size);

/* Forget every path (none may be named by a sample any longer). */
void sketch_exes_reset(struct sketch_exes *x);

/* Free what x holds (not x). */
void sketch_exes_free(struct sketch_exes *x);

/* One buffer.  Read the members; change them only through sketch_*. */
struct sketch {
	struct sketch_params p;
	uint32_t seen_shift; /* 64 - log2(seen_bits) */
	uint32_t seen_min; /* the seen_bits asked for: the filter's least */
	uint32_t nsamples; /* samples kept */
	uint32_t last; /* the sample kept (or replaced) last */
	uint32_t limit; /* samples kept at most this epoch, <= p.max_samples
				 * (the engine's disk budget lowers it) */
	uint64_t events; /* events counted */
	uint64_t wsum; /* sum of weights */
	uint64_t samples_dropped; /* sampled but not kept: memory full */
	uint64_t crossings; /* crossings of a power of t that reached the
			       store this epoch, kept or not: what t steers
			       (first sightings do not depend on it) */
	uint64_t *hca; /* p.hca_size counters */
	uint64_t *seen; /* p.seen_bits / 64 words, or NULL until used */
	uint64_t *sampled; /* SKETCH_SAMPLED_BITS: the labels (hashes) with a
			      sample this epoch, a Bloom filter of two bits
			      each; or NULL until one is kept */
	uint32_t cap; /* samples the arrays below have room for */
	uint32_t nframes, fcap; /* frames held, and room for */
	struct sketch_budget *budget; /* shared bound, borrowed; or NULL */
	struct vitals_sample *samples; /* cap */
	uint32_t *foff; /* cap: where each sample's frames start */
	uint64_t *frames; /* fcap: each sample's kernel then user frames */
	char *comms; /* VITALS_COMM_LEN per sample */
	const char **syms; /* fcap names, as frames; or NULL */
	struct sketch_exes *exes; /* the samples' exe paths: &own, or shared */
	struct sketch_exes own;
};

/*
 * Allocate a sketch whose sample store draws on budget b (borrowed; it
 * must outlive the sketch; NULL: bounded by max_samples alone).  Returns
 * NULL if a size is invalid (not a power of two, zero) or memory runs
 * out.  Free with sketch_free.
 */
struct sketch *sketch_new(
    const struct sketch_params *p, struct sketch_budget *b);

/* Free a sketch, giving its sample store back to its budget; accepts NULL. */
void sketch_free(struct sketch *s);

/*
 * From now on intern the exe paths of the samples kept in x (borrowed,
 * outliving them), which the owner resets when no sample names its paths
 * any longer; NULL: in the sketch's own again.  Samples kept before name
 * paths where they were interned.
 */
void sketch_share_exes(struct sketch *s, struct sketch_exes *x);

/*
 * Clear counters, filter and samples (and its own exe paths, not shared
 * ones) for a new epoch; a sample store that held under a quarter of its
 * room gives half of it back.
 */
void sketch_reset(struct sketch *s);

/*
 * Clear it as sketch_reset does, and give all of the sample store back
 * but its first SKETCH_FIRST samples: for a closed epoch's sketch once it
 * was read, so the budget goes to the one collecting.
 */
void sketch_trim(struct sketch *s);

/*
 * Bytes the sketch may hold at most without a budget (counters, filter,
 * a full sample store, pools), and what one sample takes in its store.
 */
size_t sketch_bytes(const struct sketch_params *p);
size_t sketch_sample_bytes(const struct sketch_params *p);

/* Bytes the sketch holds now. */
size_t sketch_held(const struct sketch *s);

/*
 * 1 if no first sighting can be kept: the limit reached, or no room left
 * for a sample of no frames.
 */
int sketch_full(const struct sketch *s);

/*
 * Count an event: add its weight to the counter its label hashes to, then
 * decide whether to sample it: yes when the counter crossed a power of
 * 2^shift that is >= floor, or when the counter is >= floor and the label
 * has not been seen (at or above the floor) this epoch.  The last eighth
 * of the sample store (up to limit) only takes such first sightings.  Returns 1 if the
 * event was kept as a sample, 2 if it should have been but the sample
 * store is full, 0 if it was only counted.
 */
int sketch_add(struct sketch *s, const struct vitals_event *ev, uint32_t shift);

/*
 * Keep an event as a sample without counting it, with the counter value
 * `count` (used when the sketch lives in the kernel).  Returns 1 if kept,
 * 2 if the store is full.
 */
int sketch_keep(struct sketch *s, const struct vitals_event *ev, uint64_t slot,
    uint64_t count);

/*
 * sketch_keep for an event whose counter crossed a power of t (not a
 * first sighting), within max_samples and the sample memory, but not in
 * the last eighth of either, which is held for labels not seen yet; past
 * the limit only if its label has no sample yet this epoch (a heavy label
 * first seen once the limit was spent: a leak that starts then), as a
 * later sample of a label adds little to its first, and within a reserve
 * of a quarter of the limit (at least SKETCH_RESERVE_MIN); with the
 * reserve full, in place of its sample of least count if count is more
 * (the heaviest of the labels seen late keep theirs).  Returns 1 if kept,
 * 2 if not.
 */
int sketch_keep_crossing(struct sketch *s, const struct vitals_event *ev,
    uint64_t slot, uint64_t count);

/*
 * 0 if sketch_keep (fresh) or sketch_keep_crossing would surely drop a
 * sample of nf frames, of label hash h (vitals_hash_label), its counter
 * at count, now: a test before the work of making the event
 * (its exe's path, its stacks).
 */
int sketch_would_keep(
    const struct sketch *s, int fresh, uint64_t h, uint64_t count, uint32_t nf);

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
int sketch_crossed(uint64_t old, uint64_t new, uint32_t shift, uint64_t floor);

/* Distinct labels estimated from the zero counters (linear counting). */
uint64_t sketch_unique(const uint64_t *hca, uint32_t m);

/*
 * The HCA size for the next epoch of a sketch of m counters whose epoch
 * counted about `unique` labels: the power of two that keeps it at most
 * half full, within [min, max], at once when it is more than m; when it
 * is m/4 or less (under 1/8 full) only after SKETCH_IDLE_EPOCHS such
 * epochs in a row, which *idle counts (the caller keeps it, 0 at first).
 */
uint32_t sketch_hca_next(
    uint32_t m, uint64_t unique, uint32_t min, uint32_t max, uint32_t *idle);

/*
 * Give an emptied sketch (sketch_reset, no samples) an HCA of m counters
 * (a power of two, at most p.hca_max) and the filter that goes with it.
 * Returns 0, -EINVAL, -EBUSY (it holds samples) or -ENOMEM (the sketch
 * kept its size).
 */
int sketch_resize_hca(struct sketch *s, uint32_t m);

/* First-sighting bits of a sketch of m counters with parameters p. */
uint32_t sketch_seen_bits(const struct sketch_params *p, uint32_t m);

#endif /* VITALS_SKETCH_H */
