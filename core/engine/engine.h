/* SPDX-License-Identifier: MIT */
/*
 * The sketch engine: one live vital per name, each with two sketch buffers
 * swapped at the epoch boundary (paper 4.1.5), the adaptive threshold, and
 * the closed-epoch view handed to filters and outputs.
 */
#ifndef VITALS_ENGINE_H
#define VITALS_ENGINE_H

#include <stdint.h>
#include <vitals/vitals.h>

#include "config.h"
#include "sketch.h"

/* Most vitals one engine holds. */
#define ENGINE_MAX_VITALS 64

/* A live vital (the SDK's opaque struct vitals_vital). */
struct vitals_vital {
	char name[32]; /* vital name */
	char unit[16]; /* unit of the weight */
	struct engine *eng; /* owner */
	struct sketch *buf[2]; /* the two epoch buffers */
	unsigned cur; /* buffer collecting now */
	uint32_t shift; /* t = 2^shift */
	uint32_t shift_min; /* configured initial t */
	uint32_t shift_max; /* adaptive t never exceeds 2^shift_max */
	uint32_t high_samples; /* sample count at which t doubles */
	uint32_t limit; /* samples this epoch may keep (disk budget) */
	uint64_t
	    hca_bytes; /* stored bytes its counters took last epoch (estimate) */
	uint32_t high_held; /* and with the budget 3/4 spent */
	uint64_t dropped; /* events lost before the sketch, this epoch */
	uint64_t closed_dropped; /* the same, for the closed epoch */
	uint32_t hca_min; /* its HCA's size at start and at least */
	uint32_t hca_idle; /* idle epochs in a row (sketch_hca_next) */
	uint32_t hca_plan; /* next epoch's HCA size a probe set; 0: none */
	size_t hca_held; /* bytes its two HCAs and filters take (hca_memory) */
};

/*
 * vitals_vital_sample for a sketch in the kernel, which says whether the
 * event was sampled as a first sighting (fresh) or as its counter's
 * crossing of a power of t, which is kept past the store's limit (see
 * sketch_keep_crossing).  Returns 1 if kept.
 */
int engine_vital_keep(struct vitals_vital *v, const struct vitals_event *ev,
    uint64_t count, int fresh);

/*
 * 0 if engine_vital_keep would surely drop the sample (of nf frames,
 * its label's hash h, its counter at count) now; it is then counted as dropped.  For the layer that takes records
 * from the kernel, before it makes the event (the exe's path, stacks).
 */
int engine_vital_room(
    struct vitals_vital *v, int fresh, uint64_t h, uint64_t count, uint32_t nf);

/*
 * Name the frames of the sample kept last (by vitals_vital_sample): nk
 * kernel names then nu user names, NULL where unknown, borrowed for the
 * life of the epoch.  Returns 0, -ENOENT (no sample) or -ENOMEM.
 */
int engine_vital_name_last(
    struct vitals_vital *v, const char *const *names, uint32_t nk, uint32_t nu);

/*
 * Count n sampled events lost before reaching the store (ring buffer
 * full): in the vital's samples_dropped and, summed over the vitals, in
 * the epoch's metric vitals.rings.lost (once any vital was told one).
 */
void engine_vital_samples_lost(struct vitals_vital *v, uint64_t n);

/*
 * The HCA size the next epoch of v should have, by sketch_hca_next(),
 * had its epoch so far counted into the m counters hca (borrowed), within
 * what sketch.hca_memory leaves (the size is taken from it): for a probe
 * that counts into its own HCA and sizes it at the boundary.  Call it
 * once per boundary (it keeps v's idle count).
 */
uint32_t engine_vital_hca_want(
    struct vitals_vital *v, const uint64_t *hca, uint32_t m);

/*
 * Make the next epoch's HCA of v m counters (a power of two, at most the
 * vital's hca_max): what a probe counting for it uses then.  Returns 0 or
 * -EINVAL.
 */
int engine_vital_hca_plan(struct vitals_vital *v, uint32_t m);

/* The most counters v's HCA may have (the configuration's hca_max). */
uint32_t engine_vital_hca_max(const struct vitals_vital *v);

/* The bytes all vitals' HCAs may take (sketch.hca_memory; 0: no bound). */
uint64_t engine_vital_hca_memory(const struct vitals_vital *v);

/*
 * 1 if the vital's current sample store is full: first sightings would be
 * dropped (crossings may still be kept).
 */
int engine_vital_full(const struct vitals_vital *v);

/* The engine; see engine.c. */
struct engine;

/*
 * Create an engine for host `host` with sizes and watermarks from c (which
 * must outlive it, or be replaced with engine_reconfigure).  Returns NULL
 * only when memory runs out.
 */
struct engine *engine_new(const struct config *c, const char *host);

/* Free the engine, its vitals and the closed view; accepts NULL. */
void engine_free(struct engine *e);

/* Use new sizes for vitals opened from now on, and new watermarks. */
void engine_reconfigure(
    struct engine *e, const struct config *c, const char *host);

/*
 * Open the vital `name`, or return the existing one if its unit matches.
 * Returns 0 and sets *out (owned by the engine), -EEXIST for a unit
 * mismatch, -EINVAL for a bad name or sizes, -ENOSPC when full, -ENOMEM.
 */
int engine_vital_open(struct engine *e, const char *name, const char *unit,
    struct vitals_vital **out);

/*
 * A restart's t: vitals opened from now until engine_resume_end start at
 * the t they had in the stored epoch ep (kept within their configured
 * threshold .. threshold_max), as if the daemon had not stopped, and at
 * the HCA size they had (within hca_size .. hca_max and hca_memory).  Returns
 * 0, or -ESRCH (nothing kept) if ep is another host's.
 */
int engine_resume(struct engine *e, const struct vitals_epoch *ep);

/*
 * Stop resuming; write "NAME T, ..." for the vitals that took a t above
 * their configured one into buf (NUL-terminated, truncated to len) and
 * return its length (0: none did).
 */
size_t engine_resume_end(struct engine *e, char *buf, size_t len);

/* Start the first epoch at start_ns (CLOCK_REALTIME). */
void engine_start(struct engine *e, uint64_t start_ns);

/*
 * Close the current epoch at now_ns and start the next: swap every
 * vital's buffers, adapt t, and build the closed view.  The view and its
 * findings are owned by the engine and valid until the next close.
 */
const struct vitals_epoch *engine_close(
    struct engine *e, uint64_t now_ns, int partial);

/* Copy a finding into the closed epoch.  Returns 0 or -ENOMEM. */
int engine_finding_add(
    struct engine *e, const struct vitals_finding *f, const char *filter);

/*
 * Set the severity of the closed epoch's finding i and append suffix to
 * its text (a warning grouped with another filter's).  Returns 0,
 * -EINVAL for no such finding, or -ENOMEM (the finding unchanged).
 */
int engine_finding_regroup(
    struct engine *e, uint32_t i, uint32_t severity, const char *suffix);

/*
 * Record an observation of a named metric in the current epoch (the SDK's
 * vitals_metric_put, see core/engine/metric.h).  Returns 0 or a negative errno.
 */
int engine_metric_put(
    struct engine *e, const char *name, const char *unit, double value);

/* Add CPU time spent for the collector outside this process. */
void engine_cpu_add(struct engine *e, uint64_t ns);

/*
 * Mid-epoch check of the CPU watermark: if the collector has already used
 * its whole budget for this epoch, double t once more.  Called each second.
 */
void engine_tick(struct engine *e);

/*
 * Bytes of sketch and sample memory (both buffers) for all vitals: at
 * most (engine_bytes, with the sample stores full to what sample_memory
 * lets them hold), and now (engine_held).
 */
size_t engine_bytes(const struct engine *e);
size_t engine_held(const struct engine *e);

/*
 * The closed epoch was read (outputs and filters are done with it): its
 * sketches give their sample stores back to the budget for the epoch
 * being collected, and the view of engine_close is no longer valid.
 */
void engine_release(struct engine *e);

/*
 * The daemon's CPU between these is fixed work (start-up, a reload), less
 * what handled samples in between (engine_vital_sampling): begin returns
 * the mark that end takes, within one epoch.  The boundary's work is
 * counted so by engine_release.
 */
uint64_t engine_fixed_begin(const struct engine *e);
void engine_fixed_end(struct engine *e, uint64_t begin);

/*
 * The daemon spent ns of its CPU handling samples a probe sent (of v or
 * any other vital): the CPU t steers, against cpu_high and cpu_low.
 */
void engine_vital_sampling(struct vitals_vital *v, uint64_t ns);

/* Number of vitals open. */
uint32_t engine_nvitals(const struct engine *e);

#endif /* VITALS_ENGINE_H */
