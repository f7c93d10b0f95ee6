/* SPDX-License-Identifier: MIT */
/*
 * Profiles of a range: one vital's samples over stored epochs, their
 * stacks merged and weighted by the HCA weight each sample stands for, as
 * a flame tree (d3-flame-graph JSON, differential against another range),
 * folded stacks (flamegraph.pl, speedscope) or a gzip'd pprof profile.
 */
#ifndef VITALS_PROFILE_H
#define VITALS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One vital's samples' stacks merged into a weighted tree; opaque. */
struct vitals_profile;

/* What a profile holds so far (vitals_profile_stats). */
struct vitals_profile_stats {
	const char *vital; /* the vital profiled */
	const char *exe; /* the exe filter, or NULL for all */
	const char *unit; /* the vital's unit ("samples", "ns", "bytes",
				  "pages", ...), "" until an epoch has it */
	double total; /* weight in the tree: what the samples kept
				  stand for, in unit */
	double wsum; /* the vital's weighted sum over the epochs,
				  sampled or not and whatever their exe */
	uint64_t samples; /* vitals samples in the tree */
	uint64_t stacks; /* distinct stacks (exe and frames) */
	uint64_t epochs; /* epochs added */
	uint64_t vital_epochs; /* of them, those that hold the vital */
	uint64_t skipped; /* epoch files vitals_profile_range skipped as
				  unreadable */
	uint64_t covered_ns; /* sum of the epochs' lengths */
	uint64_t start_ns; /* earliest epoch start (0 with no epoch) */
	uint64_t end_ns; /* latest epoch end */
	uint64_t threshold; /* largest sampling threshold t seen */
};

/*
 * A new empty profile of vital `vital`, keeping only the samples whose exe
 * is `exe`: a path (containing '/') compared with the sample's exe path,
 * else a name compared with the base name of that path and with the comm;
 * NULL keeps every sample.  Both strings are copied.  Free it with
 * vitals_profile_free.  NULL only when memory runs out.
 */
struct vitals_profile *vitals_profile_new(const char *vital, const char *exe);

/* Free a profile and all it holds; accepts NULL. */
void vitals_profile_free(struct vitals_profile *p);

/*
 * The nominal length of a base epoch, for rollups added later: a
 * rollup's samples restart their counts at each base epoch boundary,
 * which the attribution must know.  0, the default, treats every epoch
 * added as one base epoch, as stored epochs are.
 */
void vitals_profile_set_base(struct vitals_profile *p, uint64_t base_ns);

/*
 * Add epoch e (borrowed for the call; what is kept is copied): each of
 * the vital's samples that passes the exe filter adds its stack with the
 * weight the HCA attribution gives it (labels_weights(): the sample's
 * share of its slot's counter), so the tree's total is the weight of
 * the sampled slots.  An epoch without the vital adds only its length to
 * the covered time.  Returns 0, or -ENOMEM (e may then be part added).
 */
int vitals_profile_add(struct vitals_profile *p, const struct vitals_epoch *e);

/*
 * Load and add every epoch of the store data_dir starting in [from_ns,
 * to_ns) of hosts[0..nhosts) (nhosts 0: every host), in time order.  A
 * file that does not load is skipped and counted (stats: skipped); the
 * reason of the first one is then left in err even on success.  Returns
 * 0; -ENOENT when data_dir does not exist; -ENODATA when no epoch of the
 * range loads; -ENOMEM; or another negative errno listing the store; with
 * a message in err on failure.  err may be NULL when errlen is 0.
 */
int vitals_profile_range(struct vitals_profile *p, const char *data_dir,
    uint64_t from_ns, uint64_t to_ns, const char *const *hosts, uint32_t nhosts,
    char *err, size_t errlen);

/* What the profile holds; borrowed, valid until the next change or free. */
const struct vitals_profile_stats *vitals_profile_stats(
    const struct vitals_profile *p);

/*
 * The tree as JSON text for d3-flame-graph: {"name":"all","value":W,
 * "unit":U,"total":W,"samples":N,"covered_ns":C,"children":[...]}, each
 * node {"name","value"[,"children"]}, children sorted by name.  The root's
 * children are the exes (path, else comm, else the hex label), then come
 * the user frames outermost first, then the kernel frames outermost
 * first, named as labels_frame() names them without "+0x.." offsets (a
 * symbol, else FILE+0xOFF for a user frame of a module, else the hex
 * address), so that the same function merges.  With base (the same vital
 * over another range) every node also gets "delta": its rate in p minus
 * its rate in base, in p's weight (value - base value * p covered_ns /
 * base covered_ns; base's rate is 0 when it covers no time), the form
 * d3-flame-graph's .differential(true) reads; nodes only in base come
 * with value 0 and a negative delta, and the root gets "base_total" and
 * "base_covered_ns".  *out is malloc'd, NUL-terminated, the caller's to
 * free; *len is its length without the NUL.  Returns 0 or -ENOMEM
 * (*out and *len untouched).
 */
int vitals_profile_json(const struct vitals_profile *p,
    const struct vitals_profile *base, char **out, size_t *len);

/*
 * The folded stacks: one line "EXE;OUTER;...;INNER WEIGHT\n" per
 * distinct stack of names (as in the tree; ';' in a name becomes ':'),
 * WEIGHT a whole number in the vital's unit, rounded so that the lines
 * add up to the rounded total (a line that rounds to 0 is left out), for
 * flamegraph.pl and speedscope.  Ownership and returns as
 * vitals_profile_json.
 */
int vitals_profile_folded(
    const struct vitals_profile *p, char **out, size_t *len);

/*
 * The profile as a gzip'd pprof profile.proto (go tool pprof, speedscope,
 * Grafana Pyroscope...).  Sample types: [VITAL, UNIT] (the weight; UNIT
 * "nanoseconds" for ns, "bytes" for bytes, else "count"), the default,
 * then ["samples", "count"] (the vitals samples).  One Sample per
 * distinct stack, its locations innermost first, with a label "exe";
 * one Location per frame, with one Line whose Function is the frame's
 * name as in the tree; a Mapping per user module (file name and
 * build-id; addresses are the frame's file offset plus the mapping's
 * start, so pprof can symbolize a mapping not fully named from the
 * file itself) and "[kernel]" for kernel frames.  time_nanos and
 * duration_nanos span the epochs added; the period is the largest
 * threshold.  Ownership as vitals_profile_json.  Returns 0, -ENOMEM, or
 * -EIO when compression fails.
 */
int vitals_profile_pprof(
    const struct vitals_profile *p, char **out, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* VITALS_PROFILE_H */
