/* SPDX-License-Identifier: MIT */
/*
 * The metric table: one entry per name, kept sorted so lookups are a
 * binary search and the closed view comes out sorted; two accumulators per
 * entry, swapped at the epoch boundary like the sketch buffers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

/* Capacity of the first name array. */
#define METRIC_CAP0 64

/* The observations of one name in one epoch. */
struct metric_acc {
	double sum, min, max, last;
	uint64_t n;
};

/* One name; allocated once with its name inline. */
struct metric {
	struct metric_acc acc[2]; /* indexed by the table's cur and cur ^ 1 */
	char unit[METRIC_UNIT_MAX];
	char name[];
};

struct metric_table {
	uint32_t max; /* most names */
	uint32_t n, cap; /* names kept, room in v */
	unsigned cur; /* accumulator collecting now */
	struct metric **v; /* n names, sorted by strcmp */
	struct vitals_metric *view; /* the closed epoch, view_cap entries */
	uint32_t view_cap;
	uint64_t dropped;
};

struct metric_table *
metric_table_new(uint32_t max_names)
{
	struct metric_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->max = max_names;
	return t;
}

void
metric_table_free(struct metric_table *t)
{
	uint32_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->view);
	free(t);
}

/* Names are dotted paths of [A-Za-z0-9_-] parts, no empty part. */
static int
metric_name_ok(const char *name)
{
	size_t i, n;
	char c;

	if (name == NULL || (n = strlen(name)) == 0 || n >= METRIC_NAME_MAX)
		return 0;
	if (name[0] == '.' || name[n - 1] == '.' || strstr(name, "..") != NULL)
		return 0;
	for (i = 0; i < n; i++) {
		c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '-' ||
			c == '.'))
			return 0;
	}
	return 1;
}

/* Index of name in t->v, or -(insertion point + 1) if absent. */
static int64_t
metric_find(const struct metric_table *t, const char *name)
{
	uint32_t lo = 0, hi = t->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(t->v[mid]->name, name);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(int64_t)lo - 1;
}

/* Insert a new name at position pos; -ENOMEM leaves the table as it was. */
static int
metric_insert(struct metric_table *t, uint32_t pos, const char *name,
    const char *unit, struct metric **out)
{
	size_t len = strlen(name) + 1;
	struct metric **v, *m;
	uint32_t cap;

	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : METRIC_CAP0;
		if ((v = realloc(t->v, cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	if ((m = calloc(1, sizeof(*m) + len)) == NULL)
		return -ENOMEM;
	memcpy(m->name, name, len);
	strcpy(m->unit, unit);
	memmove(&t->v[pos + 1], &t->v[pos], (t->n - pos) * sizeof(*t->v));
	t->v[pos] = m;
	t->n++;
	*out = m;
	return 0;
}

static void
metric_observe(struct metric_acc *a, double value)
{
	if (a->n == 0) {
		a->min = a->max = value;
		a->sum = 0;
	} else if (value < a->min)
		a->min = value;
	else if (value > a->max)
		a->max = value;
	a->sum += value;
	a->last = value;
	a->n++;
}

int
metric_put(
    struct metric_table *t, const char *name, const char *unit, double value)
{
	struct metric *m;
	int64_t i;
	int r;

	if (!metric_name_ok(name) || unit == NULL ||
	    strlen(unit) >= METRIC_UNIT_MAX || !isfinite(value))
		return -EINVAL;
	if ((i = metric_find(t, name)) >= 0) {
		m = t->v[i];
		if (strcmp(m->unit, unit) != 0)
			return -EEXIST;
	} else if (t->n >= t->max) {
		t->dropped++;
		return -ENOSPC;
	} else {
		r = metric_insert(t, (uint32_t)(-i - 1), name, unit, &m);
		if (r != 0)
			return r;
	}
	metric_observe(&m->acc[t->cur], value);
	return 0;
}

/* Room for n entries in the view; on failure the view keeps its size. */
static void
metric_view_reserve(struct metric_table *t, uint32_t n)
{
	struct vitals_metric *v;

	if (n <= t->view_cap)
		return;
	if ((v = realloc(t->view, n * sizeof(*v))) == NULL)
		return;
	t->view = v;
	t->view_cap = n;
}

uint32_t
metric_close(struct metric_table *t, const struct vitals_metric **out)
{
	const struct metric_acc *a;
	struct metric *m;
	uint32_t i, kept = 0, nview = 0;

	/*
	 * The accumulator that held the epoch before last was summarised at
	 * the previous close: clear it and collect into it from now on.
	 */
	for (i = 0; i < t->n; i++)
		memset(&t->v[i]->acc[t->cur ^ 1], 0, sizeof(struct metric_acc));
	t->cur ^= 1;
	/* The view is only resized here, so puts never move a closed view. */
	metric_view_reserve(t, t->n);
	for (i = 0; i < t->n; i++) {
		m = t->v[i];
		a = &m->acc[t->cur ^ 1];
		if (a->n == 0) {
			free(m); /* a whole epoch without it: forget it */
			continue;
		}
		t->v[kept++] = m;
		if (nview == t->view_cap)
			continue; /* out of memory for the view: drop the rest */
		t->view[nview++] = (struct vitals_metric){ .name = m->name,
			.unit = m->unit,
			.mean = a->sum / (double)a->n,
			.min = a->min,
			.max = a->max,
			.last = a->last,
			.n = a->n };
	}
	t->n = kept;
	*out = nview > 0 ? t->view : NULL;
	return nview;
}

uint32_t
metric_count(const struct metric_table *t)
{
	return t->n;
}

uint64_t
metric_dropped(const struct metric_table *t)
{
	return t->dropped;
}
