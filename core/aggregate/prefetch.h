/* SPDX-License-Identifier: MIT */
/*
 * Reading stored epochs ahead: worker threads load a known list of epoch
 * files, in order and a bounded distance ahead, while the caller rolls
 * up and filters the ones before.  Decoding dominates a range query.
 */
#ifndef VITALS_PREFETCH_H
#define VITALS_PREFETCH_H

#include <stddef.h>

#include <vitals/vitals.h>

struct prefetch;

/*
 * Start loading paths[0..n) (borrowed; they must outlive the prefetcher)
 * with up to `threads` workers (0: one per online CPU, at most 4), at most
 * `ahead` files before the caller.  Returns NULL only when memory runs out
 * (the caller may then load the files itself).
 */
struct prefetch *prefetch_start(
    const char *const *paths, size_t n, unsigned threads, size_t ahead);

/*
 * The epoch of paths[i], where i is the next index not taken yet: files
 * are taken in order, each once.  Waits for it if needed.  Returns 0 and
 * sets *out (the caller's, free with vitals_epoch_free), or the load's
 * negative errno with its reason in err.
 */
int prefetch_take(struct prefetch *p, size_t i, struct vitals_epoch **out,
    char *err, size_t errlen);

/* Stop the workers, free what was loaded and not taken; accepts NULL. */
void prefetch_stop(struct prefetch *p);

#endif /* VITALS_PREFETCH_H */
