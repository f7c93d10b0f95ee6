/* SPDX-License-Identifier: MIT */
/*
 * The vitals plugin SDK: the one contract between vitalsd and its probe,
 * filter and output plugins.  A plugin includes this header (and, if it
 * reads stored epochs, <vitals/store.h>), links -lvitals and exports one
 * `const struct vitals_plugin vitals_plugin`.
 */
#ifndef VITALS_VITALS_H
#define VITALS_VITALS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ABI version.  The major changes when a struct below changes layout; the
 * minor when fields are appended.  The loader refuses a plugin whose major
 * differs, or whose minor is newer than the core's.
 * Minor 1: named metrics (struct vitals_metric, vitals_metric_put, the
 * nmetrics/metrics members appended to struct vitals_epoch).
 * Minor 2: user frames as (module, offset) (VITALS_UFRAME and struct
 * vitals_module, the nmodules/modules members appended to struct
 * vitals_epoch, vitals_epoch_module).
 * Minor 3: value checks without side effects (the check member appended
 * to struct vitals_plugin, vitals_init_check), run by vitalsd
 * --check-config.
 * Minor 4: the core's event loop (vitals_event_base); the configuration
 * file, timescales and sample bound appended to struct vitals_settings;
 * files written and read safely (vitals_file_write, vitals_file_check,
 * vitals_file_read); an output
 * built at minor 4 or later gets each closed epoch as soon as it closes,
 * before the filters run, and again once with their findings if they
 * made any (see struct vitals_plugin's write); an output's write that
 * fails loses the epoch and fails vitalsd's exit status.
 * Minor 5: a filter's scope (the scope member appended to struct
 * vitals_plugin): by default every host gets its own instance.
 * Minor 6: vitals_options_check, the option table's bounds checked on a
 * filled config block.
 */
#define VITALS_ABI_MAJOR 1
#define VITALS_ABI_MINOR 7

/*
 * A filter's scope (struct vitals_plugin.scope, ABI minor 5).  HOST: the
 * core gives each host its own instance, so what a filter keeps from
 * epoch to epoch is one host's history (filters built before minor 5
 * are this).  FLEET: one instance sees every host, called for each host
 * of a slot with that host's queue and the others' epochs as peers, for
 * methods that compare hosts (peer); its state must be keyed by host.
 */
#define VITALS_SCOPE_HOST 0u
#define VITALS_SCOPE_FLEET 1u

/* Plugin kinds (struct vitals_plugin.kind). */
#define VITALS_PLUGIN_PROBE 1u /* emits events into sketches */
#define VITALS_PLUGIN_FILTER 2u /* turns closed epochs into findings */
#define VITALS_PLUGIN_OUTPUT 3u /* consumes closed epochs (store, http) */

/* Option value types (struct vitals_option.type) and their C storage. */
#define VITALS_OPT_BOOL 1u /* int: 0 or 1; YAML true/false/yes/no */
#define VITALS_OPT_INT 2u /* int64_t, within [min, max] when min < max */
#define VITALS_OPT_DOUBLE 3u /* double, within [min, max] when min < max */
#define VITALS_OPT_STRING 4u /* char *, owned by the core, NULL if unset */
#define VITALS_OPT_DURATION \
	5u /* uint64_t nanoseconds; "250ms", "5s", "2m", "1h", "30d" */
#define VITALS_OPT_SIZE 6u /* uint64_t bytes; "512", "64K", "16M", "1G" */
#define VITALS_OPT_STRLIST \
	7u /* struct vitals_strlist; YAML sequence or comma list */

/* Finding severities (struct vitals_finding.severity). */
#define VITALS_SEV_INFO 1u
#define VITALS_SEV_WARN 2u
#define VITALS_SEV_CRIT 3u

/* Log levels for vitals_log(). */
#define VITALS_LOG_ERR 3
#define VITALS_LOG_WARN 4
#define VITALS_LOG_INFO 6
#define VITALS_LOG_DEBUG 7

/* Most frames kept per side (kernel, user) of a sample's stack. */
#define VITALS_STACK_MAX 64
/* Event-specific argument slots carried in events and samples. */
#define VITALS_NARGS 4
/* Length of a comm, as in the kernel (TASK_COMM_LEN). */
#define VITALS_COMM_LEN 16

/*
 * User frames (struct vitals_sample.ustack) that fall in a file mapping
 * are stored module-relative: the module's id + 1 in the top 16 bits and
 * the address's offset in that file below, so they still mean something
 * once the process is gone (ASLR).  A frame outside any file mapping (JIT
 * code, anonymous memory) stays the raw address, which is below 2^47 on
 * x86-64 and so has 0 in the top bits.  Module ids index the epoch's
 * modules table (struct vitals_module).  Kernel frames (kstack) that
 * vitalsd stores are coded alike: the module is the kernel's text,
 * "[kernel]", or a kernel module's, "[kernel:NAME]", and the offset is
 * from its start; a kernel frame in neither is a keyed hash below 2^48.
 * No raw kernel address is stored (doc/design.md, "Kernel addresses").
 */
#define VITALS_UFRAME_SHIFT 48
#define VITALS_UFRAME_OFF_MASK ((UINT64_C(1) << VITALS_UFRAME_SHIFT) - 1)
/* Most modules ids can name (ids 0 to VITALS_UFRAME_MAX_MODULES - 1). */
#define VITALS_UFRAME_MAX_MODULES 65535u
/* The frame at file offset off (< 2^48) of module id. */
#define VITALS_UFRAME(id, off) \
	(((uint64_t)(id) + 1) << VITALS_UFRAME_SHIFT | \
	    (VITALS_UFRAME_OFF_MASK & (uint64_t)(off)))
/* A frame's module id (int32_t), or -1 for a raw address. */
#define VITALS_UFRAME_MODULE(v) \
	((int32_t)((uint64_t)(v) >> VITALS_UFRAME_SHIFT) - 1)
/* A frame's offset in its module (a raw address is returned as is). */
#define VITALS_UFRAME_OFFSET(v) (VITALS_UFRAME_OFF_MASK & (uint64_t)(v))

/* A list of strings filled from a YAML sequence; owned by the core. */
struct vitals_strlist {
	uint32_t n; /* number of strings */
	char **v; /* n strings, NUL-terminated */
};

/*
 * Whether list l selects s: it holds s, or it is empty (a plugin's
 * `vitals: [...]` option, where no list means every vital).
 */
static inline int
vitals_strlist_selects(const struct vitals_strlist *l, const char *s)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return l->n == 0;
}

/*
 * One configurable option.  Tables end with an entry whose key is NULL.
 * The core fills the plugin's config block (config_size bytes) with the
 * default, then with the YAML value, and reports bad values with the YAML
 * file:line:column.  Plugins never parse YAML.
 */
struct vitals_option {
	const char *key; /* YAML key, lower_snake_case */
	uint32_t type; /* VITALS_OPT_* */
	uint32_t offset; /* offsetof(config struct, member) */
	const char *def; /* default as YAML scalar text; NULL = zero/unset */
	const char *help; /* one line, shown by vitalsd --list-plugins -v */
	double min; /* inclusive bounds: INT/DOUBLE as is, DURATION in */
	double max; /* seconds, SIZE in bytes; ignored when min >= max */
};

/*
 * An event, as a probe hands it to vitals_emit().  Borrowed for the call:
 * the core copies what it keeps.  label, exe_id and uid are hashed into the
 * vital's sketch; the rest is kept only if the event is sampled.
 */
struct vitals_event {
	uint64_t ts_ns; /* CLOCK_REALTIME nanoseconds; 0 = now */
	uint64_t label; /* vital-specific label address (e.g. PC >> 8) */
	uint64_t weight; /* added to the label's counter (>= 1) */
	uint32_t exe_id; /* stable id of the executable (e.g. hash of path) */
	uint32_t uid; /* user id */
	uint32_t pid; /* process id */
	uint32_t tid; /* thread id */
	uint32_t op; /* vital-specific operation code */
	uint32_t nkstack; /* frames in kstack, <= VITALS_STACK_MAX */
	uint32_t nustack; /* frames in ustack, <= VITALS_STACK_MAX */
	uint32_t pad; /* zero */
	/*
	 * Kernel frames, innermost first, or NULL.  The BPF layer stores a
	 * BPF probe's by kernel image (VITALS_UFRAME); a probe that emits
	 * its own has them stored as given, so it gives no raw address.
	 */
	const uint64_t *kstack;
	const uint64_t *ustack; /* user frames, innermost first, or NULL */
	const char *exe; /* executable path, or NULL; read only if sampled */
	const char *comm; /* thread name, or NULL; read only if sampled */
	uint64_t
	    args[VITALS_NARGS]; /* event-specific details (bytes, latency...) */
};

/*
 * A sample as stored in a closed epoch.  Strings and stacks point into
 * memory owned by the epoch.
 */
struct vitals_sample {
	uint64_t ts_ns; /* when the event happened */
	uint64_t label; /* the event's label */
	uint64_t weight; /* the event's weight */
	uint64_t count; /* the HCA counter after this event */
	uint32_t slot; /* HCA index the label hashed to */
	uint32_t exe_id; /* as in the event */
	uint32_t uid; /* as in the event */
	uint32_t pid; /* as in the event */
	uint32_t tid; /* as in the event */
	uint32_t op; /* as in the event */
	uint32_t nkstack; /* frames in kstack */
	uint32_t nustack; /* frames in ustack */
	const uint64_t *kstack; /* kernel frames, innermost first, as
				 * VITALS_UFRAME of a kernel image */
	const uint64_t *ustack; /* user frames, innermost first */
	const char *const *ksyms; /* nkstack + nustack function names, kernel
				   * frames first, NULL where unknown; or NULL */
	const char *exe; /* executable path, "" if unknown */
	const char *comm; /* thread name, "" if unknown */
	uint64_t args[VITALS_NARGS]; /* event-specific details */
};

/* One vital sign's part of a closed epoch. */
struct vitals_vital_epoch {
	const char *name; /* "cpu", "sched", ... */
	const char *unit; /* unit of the weight: "samples", "ns", "bytes" */
	uint64_t threshold; /* sampling threshold t in force at the close */
	uint64_t floor; /* counters below this are never sampled */
	uint64_t events; /* events counted */
	uint64_t wsum; /* sum of weights */
	uint64_t unique; /* distinct labels, linear-counting estimate */
	uint64_t dropped; /* events lost before the sketch */
	uint64_t samples_dropped; /* sampled events not kept (memory bound) */
	uint32_t hca_size; /* counters in hca, a power of two */
	uint32_t nsamples; /* samples kept */
	const uint64_t *hca; /* hca_size counters */
	const struct vitals_sample *samples; /* nsamples, in arrival order */
};

/* A finding a filter emits; the core copies it. */
struct vitals_finding {
	uint64_t start_ns; /* start of the range it concerns */
	uint64_t end_ns; /* end of that range */
	uint32_t
	    timescale_s; /* the timescale it was found at (base epoch = its length) */
	uint32_t severity; /* VITALS_SEV_* */
	double score; /* filter-specific magnitude, larger = stronger */
	double value; /* the observed value */
	double expected; /* what the filter expected */
	const char *filter; /* filter name (set by the core) */
	const char *vital; /* vital concerned, or NULL */
	const char *label; /* label, exe or host concerned, or NULL */
	const char *text; /* one readable sentence */
};

/*
 * A named metric's part of a closed epoch: the summary of the values a
 * plugin observed with vitals_metric_put() during the epoch (a /proc rate,
 * a gauge), as opposed to the events counted in a vital's sketch.
 */
struct vitals_metric {
	const char *name; /* dotted name, e.g. "proc.disk.sda.await_ms" */
	const char *unit; /* unit of the values: "%", "bytes", "ms", "1/s" */
	double mean; /* arithmetic mean of the n observations */
	double min; /* smallest observation */
	double max; /* largest observation */
	double last; /* the observation made last in the epoch */
	uint64_t n; /* observations in the epoch (>= 1) */
};

/*
 * A file the samples of an epoch refer to: a module of a user frame
 * (VITALS_UFRAME_MODULE) or a sample's executable.  Ids are the
 * collector's and only mean something within the epoch that lists them.
 */
struct vitals_module {
	uint32_t id; /* as in VITALS_UFRAME */
	const char *path; /* file path as the process saw it */
	const char *build_id; /* lowercase hex, "" if the file has none */
};

/* A closed epoch (or a rollup of several), read-only for plugins. */
struct vitals_epoch {
	const char *host; /* host name */
	uint64_t start_ns; /* CLOCK_REALTIME start */
	uint64_t length_ns; /* actual length */
	uint32_t timescale_s; /* nominal length in seconds */
	uint32_t partial; /* 1 if closed early (shutdown) */
	uint64_t seq; /* epoch number since vitalsd started */
	uint64_t dropped; /* events lost in all vitals */
	uint64_t
	    cpu_ns; /* collector CPU time in this epoch (user+sys+probes) */
	uint32_t nvitals; /* entries in vitals */
	uint32_t nfindings; /* entries in findings */
	const struct vitals_vital_epoch *vitals; /* sorted by name */
	const struct vitals_finding *findings;
	/* ABI minor 1: */
	uint32_t nmetrics; /* entries in metrics */
	const struct vitals_metric *metrics; /* sorted by name (strcmp) */
	/* ABI minor 2: */
	uint32_t nmodules; /* entries in modules */
	const struct vitals_module *modules; /* sorted by id, each id once */
};

/*
 * What a filter sees at each epoch of a timescale: the recent epochs of
 * that timescale on this host, oldest first, the newest last, and the
 * epochs of other hosts for the newest slot (empty on a single node).
 */
struct vitals_queue {
	uint32_t timescale_s; /* length of these epochs */
	uint32_t n; /* entries in epochs (>= 1) */
	const struct vitals_epoch *const *epochs; /* n epochs, oldest first */
	uint32_t npeers; /* entries in peers */
	const struct vitals_epoch *const *peers; /* other hosts, same slot */
};

/* The newest epoch of a queue, the one a filter's epoch call is about. */
static inline const struct vitals_epoch *
vitals_queue_newest(const struct vitals_queue *q)
{
	return q->epochs[q->n - 1];
}

/*
 * The vital after ve (NULL: the first) of q's newest epoch that list
 * selects (vitals_strlist_selects: every vital when it is empty), or
 * NULL: a filter's walk over the vitals its `vitals` option names.
 */
static inline const struct vitals_vital_epoch *
vitals_queue_next_vital(const struct vitals_queue *q,
    const struct vitals_strlist *list, const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	uint32_t i = ve == NULL ? 0 : (uint32_t)(ve - ep->vitals) + 1;

	for (; i < ep->nvitals; i++)
		if (vitals_strlist_selects(list, ep->vitals[i].name))
			return &ep->vitals[i];
	return NULL;
}

/*
 * The key of a filter's state for one vital at one timescale, first in
 * each record of an array that vitals_keyed_get() grows (see ewma).
 */
struct vitals_keyed {
	uint32_t timescale_s;
	char *name; /* owned: free it with the array */
};

/*
 * The record keyed (ts, name) in the array whose pointer, of any type, is
 * at arrayp (&state->vitals; a void ** as well) of *n records of size
 * bytes, each starting with struct vitals_keyed, appended zeroed on first
 * sight.  Records move when the array grows: keep
 * indexes, not pointers, across calls.  NULL when out of memory.
 */
static inline void *
vitals_keyed_get(
    void *arrayp, uint32_t *n, size_t size, uint32_t ts, const char *name)
{
	struct vitals_keyed *k;
	char *v, *p;
	uint32_t i;

	/* The array's pointer, whatever its type, is read and written as
	 * bytes. */
	memcpy(&v, arrayp, sizeof(v));
	for (i = 0; i < *n; i++) {
		k = (struct vitals_keyed *)(v + i * size);
		if (k->timescale_s == ts && strcmp(k->name, name) == 0)
			return k;
	}
	if ((p = realloc(v, (i + 1) * size)) == NULL)
		return NULL;
	memcpy(arrayp, &p, sizeof(p));
	k = memset(p + i * size, 0, size);
	k->timescale_s = ts;
	if ((k->name = strdup(name)) == NULL)
		return NULL;
	(*n)++;
	return k;
}

/*
 * Free the n records of size bytes at v that vitals_keyed_get() grew: each
 * one's name, then the array.  What else a record owns is freed first.
 */
static inline void
vitals_keyed_free(void *v, uint32_t n, size_t size)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		free(((struct vitals_keyed *)((char *)v + i * size))->name);
	free(v);
}

/* Opaque handles owned by the core. */
struct event_base; /* libevent's loop (vitals_event_base) */
struct vitals_ctx; /* a plugin instance's handle to the core */
struct vitals_vital; /* a vital sign's live sketch */
struct vitals_timer; /* a periodic timer */
struct vitals_watch; /* a watched file descriptor */

/*
 * The descriptor every plugin exports as `vitals_plugin`.  abi_major and
 * abi_minor must stay first; fields are only ever appended.  Callbacks
 * that do not apply to the kind are NULL.
 */
struct vitals_plugin {
	uint32_t abi_major; /* VITALS_ABI_MAJOR the plugin was built with */
	uint32_t abi_minor; /* VITALS_ABI_MINOR the plugin was built with */
	uint32_t kind; /* VITALS_PLUGIN_* */
	uint32_t config_size; /* bytes of the config block, 0 if none */
	const char *name; /* unique name, as used in the YAML */
	const char *version; /* plugin version string */
	const char *description; /* one line */
	const struct vitals_option
	    *options; /* table ending in {NULL}, or NULL */

	/*
	 * Whether the plugin can run here.  Returns 0, or a negative errno
	 * with a reason written to why (e.g. "tracepoint sched:sched_switch
	 * missing").  NULL means always available.
	 */
	int (*available)(char *why, size_t len);

	/*
	 * Start an instance with the filled config block (owned by the
	 * core, valid until fini).  Returns 0 and sets *state, or a negative
	 * errno, after vitals_error() to say why.
	 */
	int (*init)(struct vitals_ctx *ctx, const void *config, void **state);

	/*
	 * Stop an instance; must accept the state init left, even NULL.
	 * A plugin that saves state here (a trained model) and fails says
	 * why with vitals_error() before returning: the core logs it and
	 * the command that stopped the plugin (vitalsd, vitals train)
	 * exits non-zero.
	 */
	void (*fini)(void *state);

	/*
	 * Probe: called just before the epoch closes.  A probe that keeps its
	 * sketch elsewhere (in the kernel) hands it over here with
	 * vitals_vital_load() and vitals_vital_sample(); others may leave it
	 * NULL.  Returns 0 or a negative errno.
	 */
	int (*flush)(void *state);

	/*
	 * Filter: called for each closed epoch (and each completed rollup)
	 * with the queue of that timescale.  Findings go out through
	 * vitals_finding_emit().  Returns 0 or a negative errno.
	 */
	int (*epoch)(void *state, const struct vitals_queue *q);

	/*
	 * Output: called with each closed epoch, findings included.  The
	 * epoch is borrowed for the call.  From ABI minor 4, write is called
	 * as soon as the epoch closes, before the filters run on it (so that
	 * a crash while they run loses nothing), and called again with the
	 * same epoch (same seq and start_ns) once the filters added findings
	 * to it, if they did: the second call replaces what the first
	 * stored.  An output built before minor 4 is called once, after the
	 * filters.  Returns 0 when the epoch is stored or will be (an output
	 * may hold it to retry), or a negative errno, after vitals_error(),
	 * when it is lost: vitalsd logs it and exits non-zero when it stops.
	 */
	int (*write)(void *state, const struct vitals_epoch *e);

	/* ABI minor 3: */
	/*
	 * Check the values of a filled config block that the option table
	 * cannot bound (names in a list, a rule's text, one option against
	 * another), from the block alone: no file opened, no BPF, no state
	 * kept, so that `vitalsd --check-config` can run it for every
	 * configured plugin, enabled or not.  What depends on the machine
	 * (a file to read, a kernel feature) is left to init.  init runs
	 * the same checks with vitals_init_check().  Returns 0, or a
	 * negative errno with the reason written to why.  NULL: nothing
	 * beyond the table's bounds.
	 */
	int (*check)(const void *config, char *why, size_t len);

	/* ABI minor 5: */
	uint32_t scope; /* a filter's VITALS_SCOPE_*; 0 (HOST) otherwise */
};

/*
 * The first members of a descriptor: the ABI the plugin is built with, its
 * kind (VITALS_PLUGIN_*) and its config block's type, so that the rest of
 * the descriptor, from .name on, is the plugin's own:
 *
 *	const struct vitals_plugin vitals_plugin = {
 *		VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct ewma_config),
 *		.name = "ewma",
 *		...
 */
#define VITALS_PLUGIN_HEAD(kind_, config_type) \
	.abi_major = VITALS_ABI_MAJOR, .abi_minor = VITALS_ABI_MINOR, \
	.kind = (kind_), .config_size = sizeof(config_type)

/* Global settings, read-only, as the core parsed them. */
struct vitals_settings {
	const char *host; /* host name written into epochs */
	const char *data_dir; /* where epochs are stored */
	uint64_t epoch_ns; /* nominal epoch length */
	uint64_t retention_ns; /* delete epochs older than this; 0 = keep */
	uint64_t
	    retention_bytes; /* keep the store under this size; 0 = no limit */
	/* ABI minor 4: */
	const char *config; /* the configuration file read, or NULL */
	uint32_t ntimescales; /* entries in timescales */
	const uint32_t *timescales; /* rollup lengths in seconds, ascending */
	uint32_t max_samples; /* samples an epoch keeps per vital (the
				     bound a rollup keeps too) */
	/* ABI minor 7: */
	uint64_t disk_budget; /* sketch.disk_budget: stored bytes an epoch
				 may take; 0: none */
};

/* ---- services the core gives plugins (exported by libvitals) ---- */

/*
 * Global settings in force; borrowed, valid until the instance ends.  A
 * reload (SIGHUP) updates them in place between two callbacks: read them
 * on the loop's thread and copy what another thread needs.
 */
const struct vitals_settings *vitals_settings(const struct vitals_ctx *ctx);

/*
 * Log a message prefixed with the plugin's name.  Errors and warnings are
 * rate-limited per plugin instance (a burst, then a count of the rest).
 */
void vitals_log(struct vitals_ctx *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record why init or a callback failed; the core logs it once. */
void vitals_error(struct vitals_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * For init: run the plugin's check callback on config and, if it fails,
 * record its reason with vitals_error(), so that the daemon refuses what
 * --check-config refuses, with the same message.  Returns 0 or check's
 * negative errno.
 */
static inline int
vitals_init_check(struct vitals_ctx *ctx,
    int (*check)(const void *config, char *why, size_t len), const void *config)
{
	char why[512] = "";
	int r;

	if ((r = check(config, why, sizeof(why))) != 0)
		vitals_error(ctx, "%s", why[0] != '\0' ? why : strerror(-r));
	return r;
}

/*
 * ABI minor 6.  For a plugin's check: whether every INT, DOUBLE, DURATION
 * and SIZE option of table that has bounds (min < max) is within them in
 * the config block, in table order, as the core checks a value it reads
 * from YAML; a test or an embedder may fill the block without the table.
 * Returns 0, or -EINVAL with "option 'KEY' is out of range" in why.
 */
int vitals_options_check(const struct vitals_option *table, const void *config,
    char *why, size_t len);

/*
 * For init: vitals_init_check(), then a zeroed state of size bytes, the
 * plugin's (its fini frees it).  Returns the state, or NULL with *rc set
 * to check's negative errno or -ENOMEM.
 */
static inline void *
vitals_init_state(struct vitals_ctx *ctx,
    int (*check)(const void *config, char *why, size_t len), const void *config,
    size_t size, int *rc)
{
	void *state;

	if ((*rc = vitals_init_check(ctx, check, config)) != 0)
		return NULL;
	if ((state = calloc(1, size)) == NULL)
		*rc = -ENOMEM;
	return state;
}

/*
 * Probe: open (or share) the sketch for vital `name` with weight unit
 * `unit`.  Sizes come from the sketch configuration.  Returns 0 and sets
 * *out (owned by the core, valid until fini), or a negative errno.
 */
int vitals_vital_open(struct vitals_ctx *ctx, const char *name,
    const char *unit, struct vitals_vital **out);

/*
 * Probe: count an event in the vital's sketch and keep it as a sample if
 * its counter crossed a power of the threshold (or its label is new this
 * epoch).  Never allocates or blocks.  Returns 1 if sampled, else 0.
 */
int vitals_emit(struct vitals_vital *v, const struct vitals_event *ev);

/* Sampling parameters in force for the current epoch. */
uint64_t vitals_vital_threshold(const struct vitals_vital *v);
uint64_t vitals_vital_floor(const struct vitals_vital *v);
uint32_t vitals_vital_hca_size(const struct vitals_vital *v);

/*
 * Probe with its own sketch (in flush): add the counters it kept for the
 * closing epoch.  hca must have vitals_vital_hca_size() entries and have
 * been indexed with vitals_label_hash().  Returns 0 or -EINVAL.
 */
int vitals_vital_load(struct vitals_vital *v, const uint64_t *hca, uint32_t m,
    uint64_t events, uint64_t wsum, uint64_t dropped);

/*
 * Probe with its own sketch: keep an event that was sampled elsewhere,
 * with the counter value it saw.  Returns 1 if kept, 0 if the sample
 * memory is full.
 */
int vitals_vital_sample(
    struct vitals_vital *v, const struct vitals_event *ev, uint64_t count);

/*
 * The hash every sketch uses to place (label, exe_id, uid):
 * vitals_hash_label() of <vitals/hash.h>, which the BPF side includes too.
 */
uint64_t vitals_label_hash(uint64_t label, uint32_t exe_id, uint32_t uid);

/*
 * The core's monotonic clock (CLOCK_MONOTONIC) in nanoseconds.  Plugins
 * measure elapsed time with it rather than the system clock, so a mock
 * core can drive time in unit tests.
 */
uint64_t vitals_monotonic_ns(const struct vitals_ctx *ctx);

/*
 * Add CPU time the probe spent outside this process (e.g. BPF run time):
 * in the epoch's collector CPU, not in what t steers (doc/design.md).
 */
void vitals_cpu_add(struct vitals_ctx *ctx, uint64_t ns);

/*
 * Run cb(arg) every `interval_ns` on the core's loop, at multiples of it
 * on the monotonic clock (the first run comes within one interval), so
 * that timers of one interval wake the daemon together.  Returns 0 and
 * sets *out (owned by the core; freed at fini or by vitals_timer_del), or
 * a negative errno.
 */
int vitals_timer_add(struct vitals_ctx *ctx, uint64_t interval_ns,
    void (*cb)(void *arg), void *arg, struct vitals_timer **out);
void vitals_timer_del(struct vitals_timer *t);

/*
 * The core's libevent loop, for a plugin that binds libevent objects of
 * its own to it (an evhttp server, a bufferevent).  The plugin may add and
 * remove events on it, from the loop's thread only, and must free them in
 * fini; it never runs, exits or frees the loop.  Borrowed; NULL where no
 * loop runs the instance (filters run by a range query).
 */
struct event_base *vitals_event_base(struct vitals_ctx *ctx);

/* Call cb(fd, arg) when fd is readable; same ownership as timers. */
int vitals_watch_add(struct vitals_ctx *ctx, int fd,
    void (*cb)(int fd, void *arg), void *arg, struct vitals_watch **out);
void vitals_watch_del(struct vitals_watch *w);

/*
 * Record one observation of the named metric in the current epoch; the
 * closed epoch carries its mean, min, max, last value and count.  name is
 * 1 to 127 characters of [A-Za-z0-9_.-], dotted from the plugin down
 * ("proc.net.eth0.rxbyt_s"); unit is under 32 bytes and must stay the
 * same for a name.  Both are copied.  The core keeps a name while it is
 * observed in every epoch, and forgets it after an epoch without any;
 * observing a kept name never allocates.  Returns 0; -EINVAL for a bad
 * name or unit or a value that is not finite; -EEXIST if the name is kept
 * with another unit; -ENOSPC (the observation is counted as dropped) when
 * the core already keeps its most names (4096).
 */
int vitals_metric_put(
    struct vitals_ctx *ctx, const char *name, const char *unit, double value);

/*
 * Filter: emit a finding; the core copies it.  A finding whose timescale_s
 * is 0, or whose start_ns and end_ns are both 0, gets those of the newest
 * epoch of the queue being looked at.  Returns 0 or -ENOMEM.
 */
int vitals_finding_emit(struct vitals_ctx *ctx, const struct vitals_finding *f);

/*
 * Filter: emit finding f as one of q: at q's timescale, ending where q's
 * newest epoch ends, from f's start_ns as the caller set it (the newest
 * epoch's start, or an incident's).  f is copied.  Returns 0 or -ENOMEM.
 */
static inline int
vitals_queue_emit(struct vitals_ctx *ctx, const struct vitals_queue *q,
    const struct vitals_finding *f)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct vitals_finding g = *f;

	g.end_ns = ep->start_ns + ep->length_ns;
	g.timescale_s = q->timescale_s;
	return vitals_finding_emit(ctx, &g);
}

/*
 * Filter: emit one point of a derived series, such as a score the filter
 * computes at each epoch.  `name` is the series' name within the filter
 * (the core keys it by filter, host and timescale too); ts_ns is the time
 * the value stands for, usually the start of the newest epoch.  The core
 * copies the name.  `vitals query` prints and exports series; the daemon
 * does not keep them.  Returns 0, -EINVAL for an empty name, or -ENOMEM.
 */
int vitals_series_emit(
    struct vitals_ctx *ctx, const char *name, uint64_t ts_ns, double value);

/*
 * ABI minor 4.  Replace the file at path with len bytes of data (a
 * model, a state file) so that a crash leaves the old file or the whole
 * new one: written to a new temporary file with an unpredictable name in
 * path's directory (created O_EXCL | O_NOFOLLOW, never through a
 * symbolic link), fsync'd, renamed over path and the directory fsync'd.
 * The file gets mode 0640.  When vitalsd runs as root, a directory on the
 * way that a user other than root owns, or that group or others may
 * write without the sticky bit, is refused.  Returns 0, or a negative
 * errno with "PATH: reason" in err.
 */
int vitals_file_write(
    const char *path, const void *data, size_t len, char *err, size_t errlen);

/*
 * ABI minor 4.  Whether vitals_file_write(path) can succeed now (its
 * directory is there, trusted and writable), for init to fail early;
 * nothing is left behind.  Returns 0 or a negative errno with "PATH:
 * reason" in err.
 */
int vitals_file_check(const char *path, char *err, size_t errlen);

/*
 * ABI minor 4.  Read all of the regular file at path (a model, a state
 * file) when it holds at most max bytes, without blocking on a FIFO or
 * reading a device: 0 with *out (malloc'd, NUL-terminated, the caller's)
 * and its length in *len, or a negative errno (-EFBIG beyond max, -EINVAL
 * for what is not a regular file) with the reason in err.
 */
int vitals_file_read(const char *path, uint64_t max, char **out, size_t *len,
    char *err, size_t errlen);

/* Look up a vital by name in an epoch; NULL if absent.  Borrowed. */
const struct vitals_vital_epoch *vitals_epoch_vital(
    const struct vitals_epoch *e, const char *name);

/*
 * Look up a metric by name in an epoch (its metrics sorted by name, as
 * every epoch the core or the store hands out is); NULL if absent.
 * Borrowed.
 */
const struct vitals_metric *vitals_epoch_metric(
    const struct vitals_epoch *e, const char *name);

/*
 * Look up a module by id in an epoch (its modules sorted by id, as every
 * epoch the core or the store hands out is); NULL if absent.  Borrowed.
 */
const struct vitals_module *vitals_epoch_module(
    const struct vitals_epoch *e, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* VITALS_VITALS_H */
