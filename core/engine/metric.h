/* SPDX-License-Identifier: MIT */
/*
 * The metric table: named time series (a /proc rate, a gauge) summarised
 * per epoch as mean/min/max/last/count, double-buffered like the sketches
 * so an epoch closes without pausing collection.
 */
#ifndef VITALS_METRIC_H
#define VITALS_METRIC_H

#include <stdint.h>
#include <vitals/vitals.h>

/* Most metric names one engine keeps (the SDK documents this bound). */
#define METRIC_MAX_NAMES 4096
/* Longest name and unit, with their NUL. */
#define METRIC_NAME_MAX 128
#define METRIC_UNIT_MAX 32

struct metric_table;

/*
 * A table keeping at most max_names names.  Returns NULL only when memory
 * runs out.
 */
struct metric_table *metric_table_new(uint32_t max_names);

/* Free the table, its names and its closed view; accepts NULL. */
void metric_table_free(struct metric_table *t);

/*
 * Record an observation of name (unit) in the current epoch.  Allocates
 * only for a name not kept yet.  Returns 0, -EINVAL (bad name or unit,
 * value not finite), -EEXIST (kept with another unit), -ENOSPC (table
 * full; counted as dropped) or -ENOMEM.
 */
int metric_put(
    struct metric_table *t, const char *name, const char *unit, double value);

/*
 * Close the epoch: the observations made so far become the closed view,
 * the next epoch starts empty, and names without an observation in the
 * closed epoch are forgotten.  Sets *out to the view (sorted by name,
 * owned by the table, valid until the next close) and returns its length.
 */
uint32_t metric_close(struct metric_table *t, const struct vitals_metric **out);

/* Names kept now. */
uint32_t metric_count(const struct metric_table *t);

/* Observations refused with -ENOSPC since the table was made. */
uint64_t metric_dropped(const struct metric_table *t);

#endif /* VITALS_METRIC_H */
