/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's engine room, shared by the daemon (live) and range
 * queries: per host and timescale a bounded queue of recent epochs, the
 * filter runs over them with the other hosts' epochs of the same slot as
 * peers (in the caller's thread, or for range queries on worker threads,
 * one per plugin), and (live) the rollups of the slots being filled.
 */
#ifndef VITALS_AGGREGATE_INTERNAL_H
#define VITALS_AGGREGATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/aggregate.h>
#include <vitals/vitals.h>

/* A filter timescale matching every timescale, base included. */
#define AGGREGATE_ALL UINT32_MAX

/* How an aggregator rolls up and queues. */
struct aggregate_params {
	uint32_t ntimescales; /* rollup timescales in use */
	uint32_t timescales[VITALS_AGG_MAX_TIMESCALES]; /* seconds, ascending */
	uint32_t queue_len; /* epochs per queue, >= 1 */
	uint64_t base_ns; /* the base epoch's length: the epochs of a
	                          queue but the newest are kept compact
	                          (aggregate_compact) with its runs */
	uint32_t queue_samples; /* and with at most this many samples per
	                          vital; 0: no bound */
	uint32_t max_samples; /* samples kept per vital in a rollup */
	uint32_t lanes; /* 0: filters run in aggregate_run's caller;
	                          else on up to this many worker threads
	                          ("lanes"), see aggregate_run */
	uint32_t park; /* 1: the queues of rollups hold their older
	                          epochs packed (codec_pack), unpacked for
	                          each run: what vitalsd keeps for a day is
	                          read once an hour or a day */
	void (*between)(void *arg); /* if not NULL, called on the caller's
	                          thread between the steps of a run (each
	                          filter's, each epoch packed or unpacked,
	                          each rollup added to), so that it can
	                          tend to other work: vitalsd drains its
	                          probes' rings, which fill fastest just
	                          after a boundary */
	void *between_arg;
};

/* A filter instance, the timescale it runs at, and the host it is for. */
struct aggregate_filter {
	struct vitals_ctx *ctx; /* borrowed; its sink gets the findings */
	uint32_t timescale_s; /* 0 = base only, AGGREGATE_ALL, or one */
	const char *host; /* runs for this host's epochs only (one
				    instance per host: VITALS_SCOPE_HOST),
				    borrowed; NULL: every host's */
};

struct aggregate;

/* How many queued epochs a is holding packed (aggregate_params.park). */
size_t aggregate_packed(const struct aggregate *a);

/*
 * A compact deep copy of e (borrowed; free with vitals_epoch_free), for
 * the place in a queue filters look back on: of the samples of one HCA
 * key (slot, label, exe, uid), those that hold each run's highest count
 * (a run: the key's samples in one base epoch of base_ns, until its count
 * falls: labels_credited), so the weight labels.c attributes to each key,
 * and so to each exe, stays the same with fewer samples; of those at most
 * max per vital (0: all), the ones a rollup would keep first; its
 * strings and frames interned in pool (NULL: its own arena).  NULL when
 * out of memory.
 */
struct epoch_pool;
struct vitals_epoch *aggregate_compact(const struct vitals_epoch *e,
    uint64_t base_ns, uint32_t max, struct epoch_pool *pool);

/* A new aggregator; NULL when out of memory. */
struct aggregate *aggregate_new(const struct aggregate_params *p);

/*
 * Free it with its queues and open rollups, stopping its lanes (runs not
 * started yet are dropped: call aggregate_drain first to have them);
 * accepts NULL.
 */
void aggregate_free(struct aggregate *a);

/* The parameters it was made with. */
const struct aggregate_params *aggregate_params(const struct aggregate *a);

/*
 * Use filters f[0..n) (copied; the instances stay the caller's) from now
 * on; with lanes, after the runs handed out so far are done, and the
 * lanes' threads are started here (if none can be, filters run in the
 * caller).  Returns 0 or -ENOMEM (the previous list is then kept).
 */
int aggregate_filters(
    struct aggregate *a, const struct aggregate_filter *f, size_t n);

/*
 * One slot of timescale ts (0 = base): epochs v[0..n), normally one per
 * host, whose ownership passes to the aggregator (even on failure).  Each
 * joins the queue of its host and timescale (the oldest beyond queue_len
 * is freed); then the filters of ts run once per epoch, with that queue
 * and the others as peers.  Returns 0, or the first error a filter
 * returned (the others still run), or -ENOMEM.
 *
 * With lanes, the filter runs are handed to the lanes and this returns
 * at once (or when too many runs wait): the filters of one plugin run on
 * one lane, in the order of the calls, each seeing what it would have
 * seen here, so findings are the same; epochs leaving a queue are freed
 * once no waiting run holds them.  It then returns 0, or -ENOMEM from
 * itself or from a filter run of an earlier call (other filter errors are
 * logged by the instance, not returned).
 */
int aggregate_run(
    struct aggregate *a, uint32_t ts, struct vitals_epoch **v, size_t n);

/*
 * Wait until every filter run handed to the lanes is done (a no-op
 * without lanes).  Returns 0, or -ENOMEM if a run failed for memory.
 */
int aggregate_drain(struct aggregate *a);

/*
 * The daemon: a closed base epoch e (borrowed).  It is added to the open
 * rollup of each timescale; a rollup whose slot e reaches the end of (or
 * that e has moved past) is finished and run at its timescale, after the
 * base filters ran on e.  Returns 0 or the first error.
 */
int aggregate_live(struct aggregate *a, const struct vitals_epoch *e);

#endif /* VITALS_AGGREGATE_INTERNAL_H */
