/* SPDX-License-Identifier: MIT */
/*
 * Filters run by hand, outside vitalsd: load one filter with its
 * configured options (and overrides), feed it queues, stop it.  `vitals
 * top`, `diff` and `train`, and the HTTP API's diff, run filters this way.
 */
#ifndef VITALS_HANDRUN_H
#define VITALS_HANDRUN_H

#include <stddef.h>

#include <vitals/aggregate.h>

#include "config.h"

struct handrun;

/*
 * Load and start filter `name` with its entries in cfg (borrowed; its
 * plugin_path, host and epoch are used too), extra[0..nextra) replacing
 * or adding options; what it emits goes to sink (copied).  config_path
 * names the file in messages (NULL: "(options)").  Returns 0 and sets
 * *out; -ENOENT when the filter is not installed (or is not a filter),
 * -EINVAL for an option it refuses, another negative errno; err says why.
 */
int handrun_start(const struct config *cfg, const char *config_path,
    const char *data_dir, const char *name, const struct config_entry *extra,
    size_t nextra, const struct vitals_filter_sink *sink, struct handrun **out,
    char *err, size_t errlen);

/* Give the filter queue q of host's epochs.  0 or its negative errno. */
int handrun_feed(
    struct handrun *h, const struct vitals_queue *q, const char *host);

/*
 * Stop the filter (a training filter writes its model then) and free h;
 * accepts NULL.  Returns 0, or the filter's error from stopping.
 */
int handrun_stop(struct handrun *h);

#endif /* VITALS_HANDRUN_H */
