/* SPDX-License-Identifier: MIT */
/*
 * The daemon's YAML configuration: global settings, sketch sizes, and the
 * probes/filters/plugins sections whose options are kept, with their YAML
 * positions, until the plugins' option tables can check them.
 */
#ifndef VITALS_CONFIG_H
#define VITALS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <vitals/vitals.h>

/*
 * Longest data_dir accepted: room is left below PATH_MAX for the date
 * dirs, the file names and the cache's entries under it.
 */
#define CONFIG_DATA_DIR_MAX 1024

/* Most rollup timescales (`timescales:`); VITALS_AGG_MAX_TIMESCALES. */
#define CONFIG_MAX_TIMESCALES 8

/* One `key: value` under a plugin, with where it was written. */
struct config_entry {
	char *key; /* the key */
	uint32_t line, col; /* 1-based position of the key */
	uint32_t vline, vcol; /* 1-based position of the value */
	int is_seq; /* value was a YAML sequence */
	char *scalar; /* the scalar (NULL when is_seq or YAML null) */
	uint32_t nitems; /* sequence items (when is_seq) */
	char **items; /* nitems scalars */
};

/* A plugin named in probes:, filters: or plugins:. */
struct config_plugin {
	char *name; /* plugin name (the YAML key) */
	uint32_t kind; /* VITALS_PLUGIN_* from the section it is in */
	uint32_t line, col; /* position of the name */
	int enabled; /* the generic `enable` key, default 1 */
	size_t nentries; /* options other than `enable` */
	struct config_entry *entries;
};

/* Sketch sizes for one vital (or the defaults when vital is NULL). */
struct config_sketch {
	char *vital; /* vital name, NULL for the defaults */
	uint32_t hca_size; /* counters at start and at least, power of two,
			    * 32..65536 (default 128) */
	uint32_t max_samples; /* samples kept per epoch (default 2048) */
	uint32_t
	    stack_depth; /* frames kept per side (default 16, <= VITALS_STACK_MAX) */
	uint32_t
	    seen_bits; /* first-sighting filter bits, power of two (default 65536) */
	uint64_t floor; /* counters below are never sampled (default 1) */
	uint64_t threshold; /* initial t, power of two >= 2 (default 2) */
	uint64_t threshold_max; /* adaptive t never exceeds (default 65536) */
	uint32_t hca_max; /* counters the HCA grows to at most, power of two,
			   * hca_size..65536 (default 16384) */
};

/* The whole configuration file. */
struct config {
	char *file; /* path it was read from */
	char *host; /* `host`, default gethostname() */
	char *data_dir; /* `data_dir`, default /var/lib/vitals */
	uint32_t data_dir_line, data_dir_col; /* where it was set, 0 if not */
	int data_dir_cli; /* set by vitalsd --data-dir: a reload keeps it */
	uint64_t epoch_ns; /* `epoch`, default 60s, >= 100ms */
	uint64_t retention_ns; /* `retention.max_age`, default 30d, 0 = keep */
	uint64_t
	    retention_bytes; /* `retention.max_size`, default 1G, 0 = no limit */
	struct vitals_strlist plugin_path; /* `plugin_path`, may be empty */
	char *log; /* `log`: "stderr" (default) or "syslog" */
	int log_level; /* `log_level`: error|warn|info|debug -> VITALS_LOG_* */
	double cpu_high; /* `sketch.cpu_high`: share of one CPU, default 0.01 */
	double cpu_low; /* `sketch.cpu_low`, default 0.0025 */
	uint64_t
	    disk_budget; /* `sketch.disk_budget`: stored bytes per epoch, default 0 = none */
	uint64_t hca_memory; /* `sketch.hca_memory`: bytes all vitals' HCAs
			      * and first-sighting filters may grow to, both
			      * epochs (default 1M, 0 = hca_max alone) */
	uint64_t sample_memory; /* `sketch.sample_memory`: bytes of all sample
	                            stores, default 768K, 0 = no bound */
	uint32_t
	    queue_len; /* `filter_queue`: epochs a filter sees, default 16 */
	uint32_t
	    queue_samples; /* `filter_queue_samples`: samples per vital kept
	                            in the queued epochs before the newest,
	                            default 256, 0 = all */
	struct config_sketch sketch; /* `sketch:` defaults */
	size_t nvital_sketch; /* per-vital overrides, `sketch.vitals.NAME` */
	struct config_sketch
	    *vital_sketch; /* unset fields inherit the defaults */
	size_t nplugins; /* entries in plugins, in file order */
	struct config_plugin *plugins;
	uint32_t ntimescales; /* `timescales`: rollup lengths in use */
	uint32_t timescales
	    [CONFIG_MAX_TIMESCALES]; /* seconds, ascending; default 5m, 1h, 1d */
};

/*
 * Read and check a configuration file (a regular file of at most 4 MiB:
 * a FIFO or a device is refused, not read).  Returns 0 and sets *out
 * (free with config_free), or a negative errno with "FILE:LINE:COL:
 * message" in err (malformed YAML, unknown key with the valid ones, wrong
 * type, bad value, a host that cannot name files, a data_dir that is not
 * absolute, a plugin named twice).  Plugin options are kept raw for
 * option_fill.
 */
int config_load(
    const char *path, struct config **out, char *err, size_t errlen);

/* A configuration with every default and no plugins (for tools). */
struct config *config_default(void);

/* Free a configuration; accepts NULL and half-built ones. */
void config_free(struct config *c);

/* Sketch sizes for `vital`: its override if any, else the defaults. Borrowed. */
const struct config_sketch *config_sketch_for(
    const struct config *c, const char *vital);

#endif /* VITALS_CONFIG_H */
