/* SPDX-License-Identifier: MIT */
/*
 * Timescales and range queries over the epoch store: slot alignment, HCA
 * folding, rollups of several epochs into one, and the aggregator that
 * rolls a time range up to the configured timescales and runs the
 * configured filters over it, with an on-disk cache of the results.
 */
#ifndef VITALS_AGGREGATE_H
#define VITALS_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most timescales above the base an aggregator rolls up to. */
#define VITALS_AGG_MAX_TIMESCALES 8

/* Flags of struct vitals_agg_params. */
#define VITALS_AGG_NO_CACHE 0x1u /* neither read nor write the cache */

/*
 * Start of the slot of length length_ns holding ts_ns: slots are aligned
 * to multiples of their length since the Unix epoch (UTC), like base
 * epochs, so 1h slots start on the hour and 1d slots at 00:00 UTC.
 * Returns ts_ns itself when length_ns is 0.
 */
uint64_t vitals_slot_start(uint64_t ts_ns, uint64_t length_ns);

/*
 * Fold an HCA of m counters down to `to` counters in place: counter i of
 * the result is the sum of the counters j with j & (to - 1) == i.  This is
 * exact because a label's index is its hash & (m - 1).  m and to must be
 * powers of two with 0 < to <= m.  Returns 0 or -EINVAL.
 */
int vitals_hca_fold(uint64_t *hca, uint32_t m, uint32_t to);

/*
 * Roll epochs v[0..n) (borrowed, any order, normally one host) up into one
 * epoch starting at start_ns with nominal length timescale_s:
 * per vital the HCAs are summed (an HCA larger than the smallest one is
 * folded down to it first), and so are events, weighted sums, dropped
 * counts and collector CPU; the threshold and floor are the largest; the
 * unique-label estimate is linear counting over the summed HCA (at least
 * the largest input's); the samples kept are the max_samples with the
 * largest counts (ties broken by weight, time, label, slot, exe, pid, tid,
 * op: deterministic), and those left out are added to samples_dropped;
 * max_samples 0 means the largest nsamples among the inputs.  The length
 * is the sum of the inputs' lengths, partial is set when that is short of
 * the nominal length or an input is partial, seq is the first input's,
 * and the host is the inputs' host, or "*" when they differ.  The inputs'
 * module tables are united by file (path and build-id) and renumbered,
 * the kept samples' user frames rewritten to match, and the result lists
 * the modules those frames name.  Findings and metrics are not carried
 * over.  Returns 0 and sets *out (free with
 * vitals_epoch_free), -EINVAL when n is 0, or -ENOMEM.
 */
int vitals_epoch_rollup(const struct vitals_epoch *const *v, size_t n,
    uint64_t start_ns, uint32_t timescale_s, uint32_t max_samples,
    struct vitals_epoch **out);

/* One vital's totals in a slot. */
struct vitals_agg_vital {
	const char *name; /* vital name */
	uint64_t events; /* events counted */
	uint64_t wsum; /* sum of weights */
};

/* One slot of one host at one timescale: a stored epoch or a rollup. */
struct vitals_agg_slot {
	const char *host; /* host name */
	uint32_t timescale_s; /* nominal length in seconds */
	uint32_t base; /* 1 for a stored epoch, 0 for a rollup */
	uint64_t start_ns; /* slot (or epoch) start */
	uint64_t length_ns; /* time covered by epochs */
	uint32_t nepochs; /* stored epochs in it */
	uint32_t nvitals; /* entries in vitals */
	const struct vitals_agg_vital *vitals; /* sorted by name */
};

/* A finding with the host of the epoch it was found in. */
struct vitals_agg_finding {
	struct vitals_finding f; /* filter, timescale and range filled in */
	const char *host; /* host name */
	uint32_t base; /* 1 if found at the base timescale */
};

/* One point of a derived series emitted by a filter. */
struct vitals_agg_point {
	const char *filter; /* filter that emitted it */
	const char *name; /* series name within the filter */
	const char *host; /* host of the epoch being looked at */
	uint32_t timescale_s; /* timescale of that epoch */
	uint32_t base; /* 1 at the base timescale */
	uint64_t ts_ns; /* time the value stands for */
	double value; /* the value */
};

/* What to query. */
struct vitals_agg_params {
	const char *data_dir; /* the store (required) */
	const char *config; /* vitalsd YAML: filters, timescales,
	                           filter_queue, plugin_path, sketch
	                           max_samples; NULL = defaults, no filters */
	uint64_t from_ns; /* range [from_ns, to_ns) */
	uint64_t to_ns;
	uint32_t ntimescales; /* entries in timescales; 0 = the base and
	                           every configured timescale no longer than
	                           the range */
	const uint32_t *timescales; /* seconds; 0 stands for the base */
	uint32_t nfilters; /* entries in filters; 0 = all configured */
	const char *const *filters; /* names; one not configured runs with
	                           its default options */
	uint32_t nhosts; /* entries in hosts; 0 = every host */
	const char *const *hosts;
	uint32_t flags; /* VITALS_AGG_* */
	const char *cache_dir; /* NULL = DATA_DIR/cache (see vitals(1)) */
	/* Called as epochs are read (done of total); may be NULL. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* What a query found.  Everything is owned by the result. */
struct vitals_agg_result {
	uint64_t from_ns; /* the range queried */
	uint64_t to_ns;
	uint32_t ntimescales; /* timescales computed, ascending */
	const uint32_t *timescales; /* seconds; 0 = the base */
	size_t nslots; /* per-slot totals, by timescale, start, host */
	const struct vitals_agg_slot *slots;
	size_t nfindings; /* findings, by start, timescale, filter */
	const struct vitals_agg_finding *findings;
	size_t npoints; /* series points, by filter, name, host,
	                           timescale, time */
	const struct vitals_agg_point *points;
	uint64_t epochs_read; /* stored epochs read from disk */
	uint64_t cache_hits; /* cached results used (per timescale for
	                           the slot totals, per filter and timescale) */
	uint64_t cache_misses; /* results computed */
	uint64_t rollup_hits; /* cached rollups used */
	uint64_t rollup_misses; /* rollups built from stored epochs */
	const char *cache_dir; /* cache used, NULL when none */
};

/*
 * Run a range query: read the stored epochs of [from_ns, to_ns) in
 * chronological order, roll them up to the timescales asked (slots
 * that intersect the range, whole), run the filters at each timescale
 * over the queue of that timescale's recent slots (filter_queue long) with
 * the other hosts' epochs of the same slot as peers, and collect totals,
 * findings and series.  Results and rollups are cached (unless
 * VITALS_AGG_NO_CACHE) and reused while the epoch files, the filter set,
 * options and plugin files are unchanged.  Corrupt epoch files are
 * skipped.  Returns 0 and sets *out (free with vitals_agg_result_free);
 * -EINVAL for bad parameters, -ENOENT for a missing store, or another
 * negative errno, with a message in err.
 */
int vitals_agg_query(const struct vitals_agg_params *p,
    struct vitals_agg_result **out, char *err, size_t errlen);

/* Free a query result; accepts NULL. */
void vitals_agg_result_free(struct vitals_agg_result *r);

/*
 * Parse a time as every command and the HTTP API take it, into ns since
 * the Unix epoch: ISO-8601 "2026-11-22T10:00[:30[.5]]" (or with ' ' for
 * 'T'), with a zone "Z", "+01:00", "-0500" or without (local time); a
 * date "2026-11-22" (its local midnight); "now"; a time before now_ns
 * "-30s", "-2h", "-1d12h", "-1w"; "@UNIXSECONDS"; or 13 or more digits of
 * nanoseconds.  Returns 0 and sets *out; -EINVAL for a bad form; -ERANGE
 * for a time before 1970 or past what 64-bit nanoseconds hold (2554).
 */
int vitals_time_parse(const char *s, uint64_t now_ns, uint64_t *out);

/*
 * Parse "FROM..TO" (each as vitals_time_parse) into the half-open range
 * [*from_ns, *to_ns).  Returns 0; -EINVAL or -ERANGE as vitals_time_parse
 * (or -EINVAL without ".."); -EDOM when TO is not after FROM.
 */
int vitals_range_parse(
    const char *s, uint64_t now_ns, uint64_t *from_ns, uint64_t *to_ns);

/*
 * Roll every stored epoch of data_dir starting in [from_ns, to_ns), of
 * the hosts hosts[0..nhosts) (nhosts 0: every host), into one epoch of
 * nominal length to - from (vitals_epoch_rollup's rules, keeping
 * max_samples samples per vital; 0 = as many as the largest input).
 * Unreadable files are skipped.  Returns 0 and sets *out (free with
 * vitals_epoch_free); -ENOENT without the store, -ENODATA without a
 * readable epoch in the range, -ENOMEM; err says why.
 */
int vitals_range_rollup(const char *data_dir, uint64_t from_ns, uint64_t to_ns,
    const char *const *hosts, uint32_t nhosts, uint32_t max_samples,
    struct vitals_epoch **out, char *err, size_t errlen);

/*
 * What a filter run by vitals_filter_once emitted: each finding (borrowed
 * for the call; f->filter names the filter) and each series point.
 * Either callback may be NULL.
 */
struct vitals_filter_sink {
	void (*finding)(
	    void *arg, const struct vitals_finding *f, const char *host);
	void (*series)(void *arg, const char *filter, const char *name,
	    uint64_t ts_ns, double value);
	void *arg;
};

/*
 * Load filter `name` with its options from the vitalsd configuration
 * `config` (NULL: the installed one if it exists, else defaults), the
 * keys[i]: values[i] overrides replacing or adding options, and run it
 * once on the queue v[0..n) (oldest first, the one looked at last; all
 * of one timescale), then stop it.  `vitals diff` runs `diff` this way
 * on {A, B}.  data_dir is what the filter sees as the data directory.
 * Returns 0; -ENOENT when the filter is not installed; -EINVAL for an
 * option it refuses; another negative errno; err says why.
 */
int vitals_filter_once(const char *config, const char *data_dir,
    const char *name, const char *const *keys, const char *const *values,
    size_t noverrides, const struct vitals_epoch *const *v, uint32_t n,
    const struct vitals_filter_sink *sink, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* VITALS_AGGREGATE_H */
