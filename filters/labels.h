/* SPDX-License-Identifier: MIT */
/*
 * Who an epoch's weight belongs to.  HCA counters are anonymous; samples
 * name their label, exe and slot, so a slot's weight is shared among the
 * labels sampled in it and summed per exe (or per label).  Compiled into
 * the filters that need it; neither installed nor part of the SDK.
 */
#ifndef VITALS_FILTERS_LABELS_H
#define VITALS_FILTERS_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* Grouping of weight (struct labels_how.by). */
#define LABELS_BY_EXE 0 /* exe path, else comm, else the hex label */
#define LABELS_BY_LABEL 1 /* the hex label ("0x401234") */

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
 * Attribute the vital's HCA weight to groups: each (slot, label, exe_id,
 * uid) sampled gets its highest `count` (summed over base epochs in a
 * rollup), and the slot's counter hca[slot] is shared among them in that
 * proportion (the counts themselves where there is no HCA).  Fills *out,
 * which the caller frees with labels_free (rep pointers stay borrowed
 * from ve).  Returns 0 or -ENOMEM (then *out is empty).
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
 * comm, else the label in hex written to buf; for LABELS_BY_LABEL the
 * hex label.  Returns a string borrowed from s or buf.
 */
const char *labels_name(
    const struct vitals_sample *s, int by, char *buf, size_t len);

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

/* Parse "by" option text ("exe" or "label"); -EINVAL if neither. */
int labels_by(const char *text, int *by);

#endif /* VITALS_FILTERS_LABELS_H */
