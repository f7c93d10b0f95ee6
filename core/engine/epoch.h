/* SPDX-License-Identifier: MIT */
/*
 * The in-memory epoch (core/engine/epoch.c): an epoch in an arena of its
 * own, its strings and frame arrays interned there, deep copies into one.
 * Internal to libvitals; the lookups are public (<vitals/vitals.h>).
 */
#ifndef VITALS_EPOCH_H
#define VITALS_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/*
 * Free an epoch made by epoch_new, epoch_copy or a decoder (one arena
 * holds it and all it points to); accepts NULL.  vitals_epoch_free is
 * this.
 */
void epoch_free(struct vitals_epoch *e);

/*
 * A new zeroed epoch in its own arena (free with epoch_free), and
 * zeroed memory in the arena of such an epoch or of a decoded one.  Both
 * return NULL when out of memory (epoch_alloc also for n == 0).
 */
struct vitals_epoch *epoch_new(void);
void *epoch_alloc(struct vitals_epoch *e, size_t n);

/*
 * s (NULL reads as "") in the arena of such an epoch, stored once however
 * often it is asked for: the strings of its samples (symbols, exes,
 * threads) repeat.  NULL when out of memory.
 */
const char *epoch_intern(struct vitals_epoch *e, const char *s);

/*
 * p[0..n) in the arena likewise (samples share frame arrays and their
 * names' arrays), aligned as epoch_alloc's; NULL for n == 0 or out
 * of memory.  Not to be written through.
 */
const void *epoch_intern_bytes(struct vitals_epoch *e, const void *p, size_t n);

/*
 * Free what interning keeps once the epoch is built (its table); the
 * epoch is untouched and may still intern.  Accepts NULL.
 */
void epoch_seal(struct vitals_epoch *e);

/* How many distinct strings and arrays e's table holds (0 once sealed). */
uint32_t epoch_interned(const struct vitals_epoch *e);

/*
 * s[0..n) (a string that need not end there) in e's arena, as
 * epoch_intern stores it.  NULL when out of memory.
 */
const char *epoch_intern_n(struct vitals_epoch *e, const char *s, size_t n);

/*
 * d's exe and thread, and its frames' names into syms (if s has names),
 * as s's interned in e; d may be s.  0 or -ENOMEM.
 */
int epoch_intern_names(struct vitals_epoch *e, struct vitals_sample *d,
    const struct vitals_sample *s, const char **syms);

/*
 * Copy s into d (not s), its frames, symbol pointers and strings into e's
 * arena, each stored once there: samples of one site share their frames,
 * and samples of one function their frames' names.  0 or -ENOMEM.
 */
int epoch_copy_sample(struct vitals_epoch *e, struct vitals_sample *d,
    const struct vitals_sample *s);

/*
 * Copies of samples src[0..n) (borrowed) in e's arena, their frames and
 * strings interned there, their slots masked to m (m 0: kept).  NULL for
 * n == 0 or out of memory.
 */
const struct vitals_sample *epoch_copy_samples(struct vitals_epoch *e,
    const struct vitals_sample *const *src, uint32_t n, uint32_t m);

/*
 * d's HCA of m counters in e's arena, a copy of hca[0..m) (zeros for
 * NULL); d->hca NULL for m 0.  0 or -ENOMEM.
 */
int epoch_copy_hca(struct vitals_epoch *e, struct vitals_vital_epoch *d,
    const uint64_t *hca, uint32_t m);

/*
 * A deep copy of e (borrowed) with its vitals, samples and findings, in
 * one arena: free with vitals_epoch_free.  NULL when out of memory.
 */
struct vitals_epoch *epoch_copy(const struct vitals_epoch *e);

/*
 * Which samples of ve a copy keeps: src holds pointers to all *n of them
 * in order; the picker leaves the ones to keep in src[0..*n) and sets
 * *n.  Returns 0 or -ENOMEM.
 */
typedef int (*epoch_pick_fn)(const struct vitals_vital_epoch *ve,
    const struct vitals_sample **src, uint32_t *n, void *arg);

/*
 * An arena several epochs intern their strings and frame arrays in: a
 * queue's epochs name the same functions, exes and threads, and many
 * have the same frames, which the copies then hold once between them.
 * epoch_pool_new gives one reference, and each copy made into it
 * holds one; the last put frees it.  epoch_pool_seal frees its table
 * (the strings stay, later ones are not shared with them); for the one
 * thread that copies into it, while copies may be freed anywhere.
 */
struct epoch_pool;
struct epoch_pool *epoch_pool_new(void);
void epoch_pool_seal(struct epoch_pool *p);
void epoch_pool_put(struct epoch_pool *p); /* accepts NULL */

/*
 * A deep copy of e (borrowed) as epoch_copy's, keeping of each vital's
 * samples those pick (NULL: all) chooses, its strings and frame arrays
 * interned in pool (a reference to it held until the copy is freed;
 * NULL: in its own arena).  With a picker, a vital's HCA keeps only the
 * counters of the slots its kept samples are in, when that is smaller:
 * the slots renumbered in their order (0, 1, ...), the samples' slots
 * with them, so what each slot's samples credit is the same (labels.h).
 * NULL when out of memory.
 */
struct vitals_epoch *epoch_copy_pooled(const struct vitals_epoch *e,
    epoch_pick_fn pick, void *arg, struct epoch_pool *pool);

#endif /* VITALS_EPOCH_H */
