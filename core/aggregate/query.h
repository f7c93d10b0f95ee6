/* SPDX-License-Identifier: MIT */
/*
 * The state of one range query (vitals_agg_query), shared by its three
 * parts: query.c (setup, filters, cache keys), query_pass.c (the pass over
 * the epochs and the rollups) and query_result.c (the caller's result).
 */
#ifndef VITALS_QUERY_H
#define VITALS_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "cache.h"
#include "config.h"

struct aggregate;
struct loader;
struct prefetch;
struct rollup;

#define QUERY_NS 1000000000ull
/* Entries the cache keeps: results (per range, timescale, filter), rollups. */
#define QUERY_RESULT_FILES 4096
#define QUERY_ROLLUP_FILES 200000

/* A stored epoch file of the range. */
struct query_ent {
	const struct vitals_store_entry *se; /* borrowed from the listing */
	struct cache_key fp; /* its name, size, mtime, inode */
};

/* One host's part of a rollup slot. */
struct query_part {
	const char *host; /* from the listing */
	uint32_t nents; /* its files in the slot */
	struct cache_key key; /* the rollup's cache key */
	int have; /* the cache holds a file for the key */
	struct vitals_epoch *cached; /* read from it when the slot opened */
	struct rollup *r; /* being summed while the slot is open */
};

/* A slot of a rollup timescale, with the files that start in it. */
struct query_slot {
	uint64_t start;
	size_t first, last; /* its files: ents[first..last) */
	size_t nparts;
	struct query_part *parts;
};

/* A timescale being computed. */
struct query_ts {
	uint32_t ts; /* seconds; 0 = the base */
	uint64_t lo, hi; /* epochs starting in [lo, hi) */
	size_t first, last; /* their indexes in ents */
	struct cache_key key; /* digest of those files */
	int need; /* something to compute */
	int sums_cached; /* totals came from the cache */
	json_t *sums; /* slot totals */
	size_t nslots; /* rollup slots that hold files */
	struct query_slot *slots;
	size_t cur; /* slots before it are closed */
	int open; /* slots[cur] is open */
};

/* A filter instance at one timescale. */
struct query_inst {
	struct vitals_ctx *ctx;
	uint32_t ts;
	const char *host; /* its host (borrowed from list), or NULL: all */
	int started; /* init ran */
	int cached; /* results came from the cache */
	struct cache_key key;
	json_t *findings;
	json_t *points;
};

struct query {
	const struct vitals_agg_params *p;
	char *err;
	size_t errlen;
	char *data_dir; /* absolute */
	const char *version; /* of the keys: libvitals' and their format's */
	struct config *cfg;
	struct loader *ldr;
	struct vitals_settings settings;
	struct vitals_store_list list;
	size_t nents;
	struct query_ent *ents;
	const char **hosts; /* the files' hosts, once each (borrowed) */
	size_t nhosts;
	size_t nts;
	struct query_ts ts[1 + VITALS_AGG_MAX_TIMESCALES];
	struct query_ts *base; /* ts[0] when the base is asked */
	size_t ninsts;
	struct query_inst *insts;
	struct aggregate *agg;
	struct cache *cache;
	char *wanted; /* per file: it must be read */
	struct prefetch *pf; /* reads them ahead */
	const char **pf_paths; /* the files it reads */
	size_t ntake; /* files taken from pf so far */
	uint64_t done, total;
	uint64_t epochs_read, hits, misses, rhits, rmisses;
};

/* Write the reason for failing with r into the query's err; returns r. */
int query_fail(struct query *q, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Read the files of the timescales that need work, in order, roll them up
 * and run the filters (query_pass.c).  0, or a negative errno after
 * query_fail.
 */
int query_pass(struct query *q);

/* Free a timescale's planned slots and their open rollups. */
void query_slots_free(struct query_ts *t);

/*
 * The caller's result from what q computed or found cached
 * (query_result.c).  0 and *out, or -ENOMEM after query_fail.
 */
int query_result(struct query *q, struct vitals_agg_result **out);

#endif /* VITALS_QUERY_H */
