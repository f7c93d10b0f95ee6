/* SPDX-License-Identifier: MIT */
/*
 * One incident, one warning, whatever the number of filters that see it
 * (doc/findings.md): once a warning names an exe, later warnings of other
 * filters naming the same exe at the same timescale, while it is still
 * being reported on, are grouped with it: lowered to info and marked
 * "[grouped with FILTER VITAL since TIME]".  vitalsd applies it to the
 * findings it stores, the range queries to the findings they compute.
 */
#ifndef VITALS_CORE_GROUP_H
#define VITALS_CORE_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* Epochs without a finding naming the exe after which its group closes. */
#define GROUP_QUIET 3

struct group;

/* A new empty grouping, or NULL if memory runs out.  Free with group_free. */
struct group *group_new(void);

/* Free a grouping; accepts NULL. */
void group_free(struct group *g);

/*
 * Look at finding f of filter `filter` made on host (findings in the order
 * they were made: by end_ns, then group_rank within an epoch).  Returns 1
 * and writes "FILTER VITAL since HH:MM:SS" to with when f is a warning (or
 * crit) that repeats an exe another filter's warning reported first, 0
 * when it leads or stands alone, -ENOMEM.
 */
int group_note(struct group *g, const char *host, const char *filter,
    const struct vitals_finding *f, char *with, size_t len);

/*
 * Where findings of one epoch go in group_note's order: the filters that
 * name a cause first (rules, threshold), then the detectors (ewma,
 * callmodel), then those that explain (diff, affinity), then the others.
 */
int group_rank(const char *filter);

/* The suffix added to a grouped finding's text, with `with` filled in. */
#define GROUP_TEXT " [grouped with %s]"

#endif /* VITALS_CORE_GROUP_H */
