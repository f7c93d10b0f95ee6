/* SPDX-License-Identifier: MIT */
/*
 * Who an epoch's weight belongs to, for every filter that asks: HCA
 * counters are anonymous, samples name their label, exe, stack and slot,
 * so a slot's weight is shared among the labels sampled in it and summed
 * per exe, label, site or any key of the caller's.  Also how a sample
 * names its exe and frames, and a string map for such keys.  Compiled
 * into the filters that need it; neither installed nor part of the SDK.
 */
#ifndef VITALS_FILTERS_LABELS_H
#define VITALS_FILTERS_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* Grouping of weight (struct labels_how.by). */
#define LABELS_BY_EXE 0 /* exe path, else comm, else the hex label */
#define LABELS_BY_LABEL 1 /* the hex label ("0x401234") */

/* Room for a group name of labels_name (a hex label), NUL included. */
#define LABELS_NAME_LEN 24
/* Longest frame name labels_frame writes, NUL included. */
#define LABELS_FRAME_LEN 128
/* No such entry (labels_map_find). */
#define LABELS_NONE UINT32_MAX

/* How labels_collect groups and which samples it keeps. */
struct labels_how {
	int by; /* LABELS_BY_* */
	/*
	 * Nominal base epoch length, or 0.  A rollup concatenates the
	 * samples of several base epochs whose counters restarted at each
	 * boundary; samples in different base epochs (ts_ns / base_ns) are
	 * counted as separate runs.
	 */
	uint64_t base_ns;
	/*
	 * Keep only the labels whose heaviest sample matches (e.g. kernel
	 * PCs); NULL keeps all.  The weight shared out in a slot is the
	 * same either way, so a filtered set is a part of the whole.
	 */
	int (*match)(const struct vitals_sample *s, const void *arg);
	const void *arg; /* passed to match */
};

/* One group: an exe (or label) and the weight attributed to it. */
struct labels_entry {
	char *name; /* group name, owned by the set */
	double weight; /* HCA weight attributed, in the vital's unit */
	uint32_t nlabels; /* distinct (label, exe, uid) sampled in it */
	/* Sample of its heaviest label (borrowed from the epoch). */
	const struct vitals_sample *rep;
};

/* The groups of one vital in one epoch, heaviest first. */
struct labels {
	uint32_t n; /* entries in v */
	struct labels_entry *v; /* sorted by weight, descending, then name */
	double total; /* the vital's weighted sum */
	double attributed; /* weight of all sampled slots, before match */
};

/*
 * The one attribution of a vital's HCA weight to its samples, which
 * labels_collect groups and callers may group by keys of their own.
 * Each (slot, label, exe_id, uid) sampled counts its highest `count`,
 * summed over its runs (a rollup's base epochs: a new base epoch of
 * ts_ns / base_ns when base_ns is set, or a count lower than the one
 * before); the slot's counter hca[slot] is shared among them in that
 * proportion (the counts themselves where there is no HCA).  Within one
 * (slot, label, exe_id, uid), each sample is credited with the rise of
 * its count since that key's previous sample in the run, so its samples
 * add up to its share.  w has ve->nsamples entries; *attributed gets the
 * weight of the sampled slots (the sum of w).  Returns 0, or -ENOMEM
 * (w and *attributed untouched).
 */
int labels_weights(const struct vitals_vital_epoch *ve, uint64_t base_ns,
    double *w, double *attributed);

/*
 * Samples enough for labels_weights to credit each key the same weight
 * as of all of them: keep[i] (ve->nsamples entries) is 1 for the last
 * sample of each pid in each run of a key (the run's last holds its
 * highest count; the pids of a key's processes stay), and for the first
 * of a run that starts with a fall of the count (so the runs stay apart),
 * else 0.  Returns 0 or -ENOMEM.
 */
int labels_credited(
    const struct vitals_vital_epoch *ve, uint64_t base_ns, uint8_t *keep);

/*
 * Attribute the vital's HCA weight to groups (labels_weights summed per
 * group).  Fills *out, which the caller frees with labels_free (rep
 * pointers stay borrowed from ve).  Returns 0 or -ENOMEM (then *out is
 * empty).
 */
int labels_collect(const struct vitals_vital_epoch *ve,
    const struct labels_how *how, struct labels *out);

/* Free what labels_collect allocated; the set is left empty.  NULL ok. */
void labels_free(struct labels *l);

/* The entry named `name`, or NULL.  Borrowed from l. */
const struct labels_entry *labels_find(
    const struct labels *l, const char *name);

/*
 * The group name of a sample: for LABELS_BY_EXE its exe path, else its
 * comm, else the label in hex written to buf (LABELS_NAME_LEN bytes are
 * enough); for LABELS_BY_LABEL the hex label.  This is how every filter
 * names a sample's exe.  Returns a string borrowed from s or buf.
 */
const char *labels_name(
    const struct vitals_sample *s, int by, char *buf, size_t len);

/*
 * Whether the samples of group `who` in ve (as labels_name names them by
 * `by`) come from more than two processes: a family (a build's, a
 * script's), no one process.
 */
int labels_family(const struct vitals_vital_epoch *ve, int by, const char *who);

/*
 * How slot `slot` of ve reads in a sentence: "EXE (COMM) slot N" after the
 * label credited most of the slot's counter, as labels_weights credits it
 * (labels of other exes may share a slot; one first seen in a counter
 * others filled stands for its own weight), on a tie the one whose sample
 * saw the counter highest; else "slot N".  exe, unless NULL, gets that
 * label's exe path, else its comm, or "" when no sample names the slot.
 */
void labels_slot_name(const struct vitals_vital_epoch *ve, uint32_t slot,
    char *buf, size_t len, char *exe, size_t elen);

/*
 * A sample's exe as labels_slot_name names it: its path, else its comm
 * ("" when it has neither, where labels_name gives the hex label).
 * Borrowed from s.
 */
const char *labels_sample_exe(const struct vitals_sample *s);

/*
 * The share of slot's counter that exe's labels hold (exe as
 * labels_slot_name names it): each label sampled in the slot takes it in
 * proportion to its credit (labels_weights).  1 when the slot has no
 * sample.
 */
double labels_slot_share(
    const struct vitals_vital_epoch *ve, uint32_t slot, const char *exe);

/*
 * The n largest non-zero slots of ve's HCA into top, largest first.
 * Returns how many (at most n).
 */
uint32_t labels_top_slots(
    const struct vitals_vital_epoch *ve, uint32_t n, uint32_t *top);

/*
 * Name frame i of a sample of epoch e, in its kernel (kernel != 0) or
 * user stack, into buf: the symbol when the sample has one, without its
 * "+0x.." offset unless offsets is set; else for a user frame its
 * module's file name and offset ("busy+0x1344"), the same in every run
 * and process of that file; else the address in hex ("?" past the
 * stack).  Returns buf.
 */
char *labels_frame(const struct vitals_epoch *e, const struct vitals_sample *s,
    int kernel, uint32_t i, int offsets, char *buf, size_t len);

/*
 * The site of a sample of epoch e: its innermost kernel frame, else its
 * innermost user frame (as labels_frame names them, without offsets),
 * else "-".
 */
char *labels_site(const struct vitals_epoch *e, const struct vitals_sample *s,
    char *buf, size_t len);

/*
 * Factor that turns a value of epoch e into a value per nominal base
 * epoch (base_ns / e->length_ns), so rules and thresholds read the same
 * at every timescale and for partial epochs; 1 if either is unknown.
 */
double labels_scale(const struct vitals_epoch *e, uint64_t base_ns);

/*
 * The base_ns to give labels_collect for epoch e: base_ns for a rollup
 * (nominal length above the base epoch), 0 for a base epoch, whose samples
 * all belong to one run whatever their timestamps say.
 */
uint64_t labels_runs(const struct vitals_epoch *e, uint64_t base_ns);

/*
 * Write x in the vital's unit for a sentence: "1.50 s" for ns, "12.0 MiB"
 * for bytes, "340 samples" otherwise.  Returns buf.
 */
const char *labels_fmt(double x, const char *unit, char *buf, size_t len);

/*
 * Parse "by" option text ("exe" or "label", NULL for exe) into *by.
 * Returns 0, or -EINVAL with "option 'by': 'TEXT' is not exe or label"
 * in why (which may be NULL when len is 0).
 */
int labels_by(const char *text, int *by, char *why, size_t len);

/*
 * A map from (scope, string) to dense ids 0, 1, 2... in insertion order,
 * for the keys weight is summed under.  The scope lets one map hold
 * several namespaces (e.g. the children of each tree node).  Strings are
 * copied and owned by the map.
 */
struct labels_map;

/* A new empty map, or NULL if memory runs out.  Free with labels_map_free. */
struct labels_map *labels_map_new(void);

/* Free a map and its strings; accepts NULL. */
void labels_map_free(struct labels_map *m);

/*
 * The id of (scope, key), added if absent.  Returns 1 and sets *id when
 * added, 0 and sets *id when it was there, -ENOMEM.
 */
int labels_map_put(
    struct labels_map *m, uint32_t scope, const char *key, uint32_t *id);

/* The id of (scope, key), or LABELS_NONE. */
uint32_t labels_map_find(
    const struct labels_map *m, uint32_t scope, const char *key);

/* Entries in the map; the key and scope of entry id (borrowed). */
uint32_t labels_map_size(const struct labels_map *m);
const char *labels_map_key(const struct labels_map *m, uint32_t id);
uint32_t labels_map_scope(const struct labels_map *m, uint32_t id);

#endif /* VITALS_FILTERS_LABELS_H */
