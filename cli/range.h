/* SPDX-License-Identifier: MIT */
/*
 * What the commands over time ranges (query, findings, top, diff, train,
 * pprof)
 * share: their options and the walk over them, times and ranges, the
 * store's epochs read in a range, the cached aggregator, and filters run
 * by hand with what they emit.
 */
#ifndef VITALS_CLI_RANGE_H
#define VITALS_CLI_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "cli.h"
#include "config.h"
#include "handrun.h"

/* Timescales, filters or hosts given at the most. */
#define RANGE_MAX_LIST 32

/* A range command: what it was given, and what it resolved. */
struct range {
	struct cli *cli; /* the store and the configuration */
	int json; /* --json */
	int no_cache; /* --no-cache */
	int stored; /* findings --stored */
	int direct; /* top --no-filter */
	const char *from_s, *to_s; /* --from, --to, or NULL */
	uint64_t from, to; /* the window, once resolved */
	uint64_t now; /* when the command started, ns */
	const char *vital; /* --vital, or NULL */
	uint32_t nts; /* --timescale: ts[0..nts), 0 = base */
	uint32_t ts[RANGE_MAX_LIST];
	uint32_t nfilters; /* --filter: filters[0..nfilters) */
	const char *filters[RANGE_MAX_LIST];
	uint32_t nhosts; /* --host: hosts[0..nhosts), 0 = all */
	const char *hosts[RANGE_MAX_LIST];
	uint32_t severity; /* --severity, VITALS_SEV_* */
	size_t k; /* top -k, 0 if not given */
	int npos; /* positional arguments: pos[0..npos) */
	const char *pos[2];
	const char *normal; /* train --normal */
	const char *model; /* train --model */
	const char *cache_dir; /* --cache-dir, or NULL */
	const char *exe; /* pprof --exe, or NULL */
	const char *output; /* pprof -o, or NULL for stdout */
	int folded; /* pprof --folded */
	int bar; /* a progress bar is on screen */
	unsigned bar_last; /* its last percentage */
};

/* What a filter run by hand emitted, as JSON arrays. */
struct range_sink {
	json_t *findings;
	json_t *points;
};

/* How times and ranges are written, closing the usage of the commands. */
extern const char range_usage_times[];

/*
 * Run range command cli->cmd: parse a's arguments into a struct range,
 * resolve the configuration and the store, then call fn with it.
 * Returns the exit code: fn's, or an error's on the way.
 */
int range_run(struct cli *cli, struct cli_args *a, int (*fn)(struct range *c));

/*
 * Resolve --from/--to into c->from and c->to, defaulting to the last
 * span ns before now.  Returns CLI_EXIT_OK or CLI_EXIT_USAGE after saying
 * why.
 */
int range_window(struct range *c, uint64_t span);

/*
 * Parse "FROM..TO" into [*from, *to).  Returns CLI_EXIT_OK, or
 * CLI_EXIT_USAGE after saying why.
 */
int range_parse(const char *s, uint64_t now, uint64_t *from, uint64_t *to);

/* Whether the vital called name is asked for (by --vital, or all). */
int range_vital_wanted(const struct range *c, const char *name);

/*
 * List the store into *l (free with vitals_store_list_free).  Returns
 * CLI_EXIT_OK, or CLI_EXIT_RUNTIME after saying why.
 */
int range_list(struct range *c, struct vitals_store_list *l);

/*
 * Call fn on each entry of l starting in [from, to), of the hosts asked,
 * oldest first.  With bar, a progress bar counts the entries of the range
 * (on a terminal).
 */
void range_each(struct range *c, const struct vitals_store_list *l,
    uint64_t from, uint64_t to, int bar,
    void (*fn)(
	struct range *c, const struct vitals_store_entry *entry, void *arg),
    void *arg);

/*
 * Load the epoch of a store entry into *out (free with vitals_epoch_free).
 * Returns 0, or -1 after saying that the file is skipped.
 */
int range_load(
    const struct vitals_store_entry *entry, struct vitals_epoch **out);

/*
 * Query the cached aggregator for the window and the options.  Returns
 * CLI_EXIT_OK with *res (free with vitals_agg_result_free), or an exit
 * code after saying why.  An empty result is CLI_EXIT_RUNTIME, after
 * saying that the window holds no epochs.
 */
int range_aggregate(struct range *c, struct vitals_agg_result **res);

/*
 * Roll the epochs of [from, to) of the hosts asked into one epoch.
 * Returns CLI_EXIT_OK with *out (free with vitals_epoch_free), or
 * CLI_EXIT_RUNTIME after saying why.
 */
int range_rollup(
    struct range *c, uint64_t from, uint64_t to, struct vitals_epoch **out);

/* A finding as one JSON object (new, or NULL); host and base as stored. */
json_t *range_finding_json(
    const struct vitals_finding *f, const char *host, int base);

/* A number as JSON: a real, or null when it is not finite (new). */
json_t *range_jnum(double d);

/*
 * Print j (which this takes; NULL means no memory) to stdout.  Returns
 * CLI_EXIT_OK, or CLI_EXIT_RUNTIME.
 */
int range_dump(json_t *j);

/*
 * Load and start filter name with the configured options and the
 * overrides extra[0..nextra), its findings and series going to sink
 * (borrowed until handrun_stop).  Returns CLI_EXIT_OK with *out, or an
 * exit code after saying why.
 */
int range_filter_start(struct range *c, const char *name,
    const struct config_entry *extra, size_t nextra, struct range_sink *sink,
    struct handrun **out);

/*
 * Run filter name once on the queue v[0..n), with the overrides
 * extra[0..nextra), and print what it emitted under title (or as JSON).
 * Returns the exit code.
 */
int range_filter_once(struct range *c, const char *name,
    const struct config_entry *extra, size_t nextra,
    const struct vitals_epoch *const *v, uint32_t n, const char *title);

/*
 * Whether filter `name` is on the search path: 0 if not, 1 if it is, 2 if
 * it also has an option called `key` (so a caller sets only options the
 * installed filter knows).
 */
int range_installed(const struct range *c, const char *name, const char *key);

#endif /* VITALS_CLI_RANGE_H */
