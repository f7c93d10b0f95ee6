/* SPDX-License-Identifier: MIT */
/*
 * A mock core for unit-testing one plugin alone (collectd's plugin_mock.c):
 * tests/mock_host.c implements the SDK services of <vitals/vitals.h> with
 * simple recording behaviour, and these accessors let a test fill a config
 * block, fire timers by hand and inspect events, findings and errors.
 */
#ifndef VITALS_MOCK_HOST_H
#define VITALS_MOCK_HOST_H

#include <stdint.h>
#include <vitals/vitals.h>

/* Most distinct labels the mock counts per vital; more are "overflow". */
#define MOCK_LABELS 8192

/* What the mock recorded about one label of one vital. */
struct mock_label {
	uint64_t label; /* the event label */
	uint64_t events; /* events seen with it */
	uint64_t wsum; /* sum of their weights */
	uint64_t wmin, wmax; /* smallest and largest weight */
	uint32_t exe_id; /* of the first event */
	uint32_t uid, pid, tid; /* of the first event */
	uint32_t nkstack; /* frames of the first event */
	uint32_t nustack;
	uint64_t stack_hash; /* hash of the first event's frames */
	uint64_t stack_changes; /* later events whose frames differed */
	uint64_t kstack0; /* innermost frames of the first event */
	uint64_t ustack0;
	char exe[64]; /* of the first event, "" if NULL */
	char comm[VITALS_COMM_LEN];
};

/*
 * The plugin context handed to init; `name` (copied) is the plugin name
 * used to fill vitals_finding.filter.  The same context until mock_reset.
 */
struct vitals_ctx *mock_ctx(const char *name);

/* Forget everything recorded (vitals, timers, findings, errors, logs). */
void mock_reset(void);

/*
 * Config blocks, filled by the core's own option.c: a calloc'd block of
 * p->config_size bytes with every option's default applied, as the core
 * does before reading YAML.
 * Returns NULL if memory runs out or a default does not parse.  The
 * caller owns it and frees it with mock_config_free.
 */
void *mock_config_new(const struct vitals_plugin *p);

/*
 * Set option `key` from its YAML scalar text (lists comma separated), as
 * option.c parses it.  Bounds are not checked, so a test can hand the
 * plugin values the core would refuse.  Returns 0, -EINVAL for an
 * unknown key or bad text, or -ENOMEM.
 */
int mock_config_set(const struct vitals_plugin *p, void *block, const char *key,
    const char *value);

/*
 * Set list option `key` to items[0..n), as the core reads a YAML sequence
 * (empty items kept).  Returns 0, -EINVAL for an unknown key or one that
 * is not a list, or -ENOMEM.
 */
int mock_config_set_list(const struct vitals_plugin *p, void *block,
    const char *key, char *const *items, uint32_t n);

/* Free a block from mock_config_new and the strings in it; NULL is fine. */
void mock_config_free(const struct vitals_plugin *p, void *block);

/* Last message given to vitals_error, "" if none; number of such calls. */
const char *mock_last_error(void);
unsigned mock_nerrors(void);

/*
 * Run p's check callback on a config block as vitalsd --check-config
 * does (0 when it has none); mock_check_why() is the reason it gave, ""
 * if none, until the next call or mock_reset.
 */
int mock_check(const struct vitals_plugin *p, const void *block);
const char *mock_check_why(void);
/* Number of vitals_log calls, and the last message ("" if none). */
unsigned mock_nlogs(void);
const char *mock_last_log(void);

/* Vitals opened with vitals_vital_open, in order of first opening. */
unsigned mock_nvitals(void);
const char *mock_vital_name(unsigned i);
/* Unit the vital was opened with, NULL if no such vital. */
const char *mock_vital_unit(const char *vital);
/* Events and weight sum emitted (or loaded) into the vital; 0 if absent. */
uint64_t mock_vital_events(const char *vital);
uint64_t mock_vital_wsum(const char *vital);
/* Order-sensitive hash of every field of every event emitted. */
uint64_t mock_vital_digest(const char *vital);
/* Events that broke the vitals_event contract (weight 0, bad stacks...). */
uint64_t mock_vital_bad(const char *vital);
/* Distinct labels counted, and labels that did not fit in the table. */
unsigned mock_vital_nlabels(const char *vital);
uint64_t mock_vital_overflow(const char *vital);
/* A label's record, or NULL if the vital never saw it.  Borrowed. */
const struct mock_label *mock_label(const char *vital, uint64_t label);

/* Timers added and not deleted, in order of addition. */
unsigned mock_ntimers(void);
uint64_t mock_timer_interval(unsigned i);
/* Run live timer i's callback `times` times; returns -1 if no such timer. */
int mock_timer_fire(unsigned i, unsigned times);
/* Move the mock monotonic clock forward without firing anything. */
void mock_clock_advance(uint64_t ns);
/* Watches added and not deleted. */
unsigned mock_nwatches(void);

/* Findings emitted through vitals_finding_emit, copied; borrowed. */
unsigned mock_nfindings(void);
const struct vitals_finding *mock_finding(unsigned i);
void mock_findings_clear(void);

/*
 * Points given to vitals_series_emit, in order: mock_series returns the
 * name (borrowed; NULL past the end) and writes the time and value.
 */
unsigned mock_nseries(void);
const char *mock_series(unsigned i, uint64_t *ts_ns, double *value);
void mock_series_clear(void);

/* Nanoseconds given to vitals_cpu_add. */
uint64_t mock_cpu_ns(void);

/* Most metric names the mock records, as the core (-ENOSPC beyond). */
#define MOCK_METRICS 4096

/* What the mock recorded about one metric (vitals_metric_put). */
struct mock_metric {
	char name[128]; /* the name given */
	char unit[32]; /* the unit of the first observation */
	uint64_t n; /* observations accepted */
	double sum, min, max; /* of the values accepted */
	double last; /* the latest value accepted */
};

/* Metrics observed, in order of first observation; NULL past the end. */
unsigned mock_nmetrics(void);
const struct mock_metric *mock_metric_at(unsigned i);
/* A metric's record, or NULL if it was never observed.  Borrowed. */
const struct mock_metric *mock_metric(const char *name);
/* vitals_metric_put calls refused (bad name, unit or value; full). */
unsigned mock_metric_refused(void);
/* Forget the metrics (mock_reset does it too), e.g. between two ticks. */
void mock_metrics_clear(void);

#endif /* VITALS_MOCK_HOST_H */
