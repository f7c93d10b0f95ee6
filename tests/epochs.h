/* SPDX-License-Identifier: MIT */
/*
 * Hand-made epochs for filter unit tests: build epochs label by label the
 * way the sketch would (HCA slot += weight, a sample carrying the slot's
 * count), keep them in a queue of one timescale and hand the queue to a
 * filter's epoch callback.
 */
#ifndef VITALS_TESTS_EPOCHS_H
#define VITALS_TESTS_EPOCHS_H

#include <stdint.h>
#include <vitals/vitals.h>

/* Counters per HCA in built epochs. */
#define TEP_HCA 256
/* Start of epoch 0: a multiple of 1 day, so every timescale aligns. */
#define TEP_BASE_NS 1699920000000000000ULL
/* Base epoch length the mock core reports (vitals_settings epoch_ns). */
#define TEP_EPOCH_S 60

struct tep_epoch; /* an epoch being built, owning its memory */

/* Events of one label to add to a vital; unset fields are 0 or "". */
struct tep_ev {
	const char *exe; /* executable path (also hashed into exe_id) */
	const char *comm; /* thread name */
	const char *ksym; /* innermost kernel frame's symbol, or NULL */
	uint64_t label; /* the vital's label */
	uint64_t weight; /* total weight of these events (default events) */
	uint64_t events; /* how many events (default 1) */
	uint32_t pid, uid, op;
	uint64_t args[VITALS_NARGS]; /* of the sample */
	/* 1: use slot; 0: the label's hash, moved to a free slot if taken */
	int fixed_slot;
	uint32_t slot;
};

/* A new empty epoch number seq of a timescale (start aligned).  Owned by
 * the caller (tep_epoch_free) unless handed to a queue. */
struct tep_epoch *tep_epoch_new(uint32_t timescale_s, uint64_t seq);
void tep_epoch_free(struct tep_epoch *e);

/*
 * Make the vital present (empty if nothing was added), with its contract
 * unit ("samples", "ns", "bytes", ...).  Returns 0.
 */
int tep_vital(struct tep_epoch *e, const char *vital);

/*
 * Count ev's events in the vital (created if needed) and keep one
 * sample of them with the slot's counter after the last event.
 * Returns the sample's slot.
 */
uint32_t tep_add(
    struct tep_epoch *e, const char *vital, const struct tep_ev *ev);

/*
 * Add src's vitals into dst, as a rollup does (HCAs summed, samples
 * appended).  The samples point into src, which must outlive dst.
 */
void tep_merge(struct tep_epoch *dst, const struct tep_epoch *src);

/*
 * Give the epoch one named metric, name (a static string), observed once
 * as value, in place of any it had.
 */
void tep_metric(struct tep_epoch *e, const char *name, double value);

/* Mark the epoch partial and shorten it to length_s seconds. */
void tep_partial(struct tep_epoch *e, double length_s);

/* The finished epoch (vitals sorted by name); borrowed from e. */
const struct vitals_epoch *tep_epoch_view(struct tep_epoch *e);

/* ---- queues: the recent epochs of one timescale ---- */

struct tep_queue;

/* A queue of at most max epochs of a timescale (as filter_queue). */
struct tep_queue *tep_queue_new(uint32_t timescale_s, uint32_t max);
void tep_queue_free(struct tep_queue *q);

/* A new epoch, next in sequence, owned by the queue. */
struct tep_epoch *tep_queue_next(struct tep_queue *q);

/* The newest epoch of the queue (NULL if none); borrowed. */
const struct vitals_epoch *tep_queue_newest(struct tep_queue *q);

/* Epoch i (0 = first ever made) start time in ns. */
uint64_t tep_start_ns(uint32_t timescale_s, uint64_t seq);

/*
 * Run the filter's epoch callback with the queue as it stands (the last
 * max epochs, oldest first).  Returns what the callback returned.
 */
int tep_queue_run(
    struct tep_queue *q, const struct vitals_plugin *p, void *state);

#endif /* VITALS_TESTS_EPOCHS_H */
