/* SPDX-License-Identifier: MIT */
/*
 * The grouping of warnings several filters make about one exe (group.h):
 * per host, timescale and exe, the warning that came first and when the
 * exe was last named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "group.h"

/* One exe being reported on, led by the first warning about it. */
struct group_entry {
	char *host, *label, *filter, *vital;
	uint32_t timescale_s;
	uint64_t start_ns; /* the lead's range start */
	uint64_t last_ns; /* end of the newest finding naming the exe */
};

struct group {
	size_t n, cap;
	struct group_entry *v;
};

struct group *
group_new(void)
{
	return calloc(1, sizeof(struct group));
}

static void
group_entry_free(struct group_entry *e)
{
	free(e->host);
	free(e->label);
	free(e->filter);
	free(e->vital);
}

void
group_free(struct group *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->n; i++)
		group_entry_free(&g->v[i]);
	free(g->v);
	free(g);
}

int
group_rank(const char *filter)
{
	static const char *const order[] = { "rules", "threshold", "ewma",
		"callmodel", "diff", "affinity" };
	size_t i;

	for (i = 0; filter != NULL && i < sizeof(order) / sizeof(order[0]); i++)
		if (strcmp(filter, order[i]) == 0)
			return (int)i;
	return (int)(sizeof(order) / sizeof(order[0]));
}

/* Forget groups quiet for GROUP_QUIET epochs of their timescale by now. */
static void
group_expire(struct group *g, uint64_t now_ns)
{
	size_t i, n = 0;
	uint64_t span;

	for (i = 0; i < g->n; i++) {
		span =
		    (uint64_t)GROUP_QUIET * g->v[i].timescale_s * 1000000000u;
		if (g->v[i].last_ns + span < now_ns)
			group_entry_free(&g->v[i]);
		else
			g->v[n++] = g->v[i];
	}
	g->n = n;
}

static int
group_streq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static struct group_entry *
group_find(struct group *g, const char *host, const struct vitals_finding *f)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].timescale_s == f->timescale_s &&
		    group_streq(g->v[i].host, host) &&
		    strcmp(g->v[i].label, f->label) == 0)
			return &g->v[i];
	return NULL;
}

static char *
group_dup(const char *s)
{
	return strdup(s != NULL ? s : "");
}

/* A new group led by f; -ENOMEM. */
static int
group_add(struct group *g, const char *host, const char *filter,
    const struct vitals_finding *f)
{
	struct group_entry *e, *v;
	size_t cap;

	if (g->n == g->cap) {
		cap = g->cap ? 2 * g->cap : 16;
		if ((v = realloc(g->v, cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	e = &g->v[g->n];
	memset(e, 0, sizeof(*e));
	e->timescale_s = f->timescale_s;
	e->start_ns = f->start_ns;
	e->last_ns = f->end_ns;
	if ((e->host = group_dup(host)) == NULL ||
	    (e->label = group_dup(f->label)) == NULL ||
	    (e->filter = group_dup(filter)) == NULL ||
	    (e->vital = group_dup(f->vital)) == NULL) {
		group_entry_free(e);
		return -ENOMEM;
	}
	g->n++;
	return 0;
}

int
group_note(struct group *g, const char *host, const char *filter,
    const struct vitals_finding *f, char *with, size_t len)
{
	struct group_entry *e;
	char tm[16];
	time_t t;
	struct tm lt;

	if (f->label == NULL || f->label[0] == '\0' || f->timescale_s == 0)
		return 0;
	group_expire(g, f->end_ns);
	e = group_find(g, host, f);
	if (e == NULL)
		return f->severity >= VITALS_SEV_WARN
		    ? group_add(g, host, filter, f)
		    : 0;
	if (f->end_ns > e->last_ns)
		e->last_ns = f->end_ns;
	if (f->severity < VITALS_SEV_WARN || group_streq(e->filter, filter))
		return 0;
	t = (time_t)(e->start_ns / 1000000000u);
	if (localtime_r(&t, &lt) == NULL ||
	    strftime(tm, sizeof(tm), "%H:%M:%S", &lt) == 0)
		snprintf(tm, sizeof(tm), "@%lld", (long long)t);
	snprintf(with, len, "%s%s%s since %s", e->filter,
	    e->vital[0] != '\0' ? " " : "", e->vital, tm);
	return 1;
}
