/* SPDX-License-Identifier: MIT */
/*
 * Rollups: an accumulator that sums epochs one at a time into the epoch of
 * a longer slot (HCAs folded to a common size, samples bounded), and deep
 * copies of epochs.  The public face is vitals_epoch_rollup() in
 * <vitals/aggregate.h>.
 */
#ifndef VITALS_ROLLUP_H
#define VITALS_ROLLUP_H

#include <stdint.h>

#include <vitals/vitals.h>

/* An open rollup. */
struct rollup;

/*
 * Start a rollup of the slot at start_ns of nominal length timescale_s,
 * keeping at most max_samples samples per vital (0: the largest nsamples
 * of the epochs added).  NULL when out of memory.
 */
struct rollup *rollup_new(
    uint64_t start_ns, uint32_t timescale_s, uint32_t max_samples);

/* Free a rollup; accepts NULL. */
void rollup_free(struct rollup *r);

/*
 * The order in which a rollup keeps samples, best first: larger count,
 * larger weight, then earlier and smaller ids (a total order).  <0, 0, >0.
 */
int rollup_sample_cmp(
    const struct vitals_sample *a, const struct vitals_sample *b);

/*
 * Add epoch e (borrowed; what is kept is copied).  Returns 0 or -ENOMEM
 * (the rollup is then unusable: free it).
 */
int rollup_add(struct rollup *r, const struct vitals_epoch *e);

/* Epochs added so far. */
uint32_t rollup_count(const struct rollup *r);

/* Start of the rollup's slot. */
uint64_t rollup_start(const struct rollup *r);

/*
 * Distinct strings the rollup holds for its kept samples (exes, threads,
 * frame names).  After each rollup_add it is at most about twice what the
 * kept samples name: the pool is rebuilt when dropped samples' strings
 * outnumber them.
 */
uint32_t rollup_strings(const struct rollup *r);

/*
 * Build the rolled-up epoch (see vitals_epoch_rollup for what each field
 * becomes).  The rollup stays as it was.  Returns 0 and sets *out (free
 * with vitals_epoch_free), -EINVAL if nothing was added, or -ENOMEM.
 */
int rollup_finish(const struct rollup *r, struct vitals_epoch **out);

#endif /* VITALS_ROLLUP_H */
