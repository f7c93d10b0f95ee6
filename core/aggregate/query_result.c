/* SPDX-License-Identifier: MIT */
/*
 * The result of a range query: slot totals, findings and series turned
 * from the JSON they are computed and cached as into the structs of
 * <vitals/aggregate.h>, sorted, their strings pointing into that JSON;
 * warnings of several filters about one exe grouped as vitalsd does.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/aggregate.h>

#include "group.h"
#include "query.h"

static uint64_t
query_u64(json_t *o, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(o, key));
}

static double
query_dbl(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *
query_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A result and the memory behind it. */
struct query_result {
	struct vitals_agg_result pub;
	json_t *hold; /* the JSON its strings point into */
	uint32_t ts[1 + VITALS_AGG_MAX_TIMESCALES];
	struct vitals_agg_slot *slots;
	struct vitals_agg_vital *vitals;
	struct vitals_agg_finding *findings;
	struct vitals_agg_point *points;
	char *cache_dir;
};

static int
query_vital_cmp(const void *x, const void *y)
{
	const struct vitals_agg_vital *a = x, *b = y;

	return strcmp(a->name, b->name);
}

/* Slot o (a totals object) into s, its vitals at *vv (advanced). */
static void
query_slot_from(
    json_t *o, struct vitals_agg_slot *s, struct vitals_agg_vital **vv)
{
	json_t *vit = json_object_get(o, "vitals"), *pair;
	const char *name;

	s->host = query_str(o, "host");
	s->timescale_s = (uint32_t)query_u64(o, "timescale_s");
	s->base = json_is_true(json_object_get(o, "base"));
	s->start_ns = query_u64(o, "start_ns");
	s->length_ns = query_u64(o, "length_ns");
	s->nepochs = (uint32_t)query_u64(o, "nepochs");
	s->vitals = *vv;
	json_object_foreach(vit, name, pair)
	{
		(*vv)->name = name;
		(*vv)->events =
		    (uint64_t)json_integer_value(json_array_get(pair, 0));
		(*vv)->wsum =
		    (uint64_t)json_integer_value(json_array_get(pair, 1));
		(*vv)++;
		s->nvitals++;
	}
	qsort(
	    (void *)s->vitals, s->nvitals, sizeof(*s->vitals), query_vital_cmp);
}

static int
query_result_slots(struct query *q, struct query_result *res)
{
	struct vitals_agg_vital *vv;
	size_t i, j, n = 0, nv = 0;
	json_t *o;

	for (i = 0; i < q->nts; i++) {
		n += json_array_size(q->ts[i].sums);
		json_array_foreach(q->ts[i].sums, j, o) nv +=
		    json_object_size(json_object_get(o, "vitals"));
		json_array_append(res->hold, q->ts[i].sums);
	}
	res->slots = calloc(n + 1, sizeof(*res->slots));
	res->vitals = calloc(nv + 1, sizeof(*res->vitals));
	if (res->slots == NULL || res->vitals == NULL)
		return -ENOMEM;
	vv = res->vitals;
	for (i = 0, n = 0; i < q->nts; i++)
		json_array_foreach(q->ts[i].sums, j, o)
		    query_slot_from(o, &res->slots[n++], &vv);
	res->pub.slots = res->slots;
	res->pub.nslots = n;
	return 0;
}

static int
query_finding_cmp(const void *x, const void *y)
{
	const struct vitals_agg_finding *a = x, *b = y;
	int c;

	if (a->f.start_ns != b->f.start_ns)
		return a->f.start_ns < b->f.start_ns ? -1 : 1;
	if (a->base != b->base)
		return a->base ? -1 : 1;
	if (a->f.timescale_s != b->f.timescale_s)
		return a->f.timescale_s < b->f.timescale_s ? -1 : 1;
	if ((c = strcmp(a->f.filter, b->f.filter)) != 0 ||
	    (c = strcmp(a->host, b->host)) != 0)
		return c;
	if ((c = strcmp(a->f.vital ? a->f.vital : "",
		 b->f.vital ? b->f.vital : "")) != 0 ||
	    (c = strcmp(a->f.label ? a->f.label : "",
		 b->f.label ? b->f.label : "")) != 0)
		return c;
	return strcmp(a->f.text, b->f.text);
}

static void
query_finding_from(json_t *o, struct vitals_agg_finding *d)
{
	d->f.start_ns = query_u64(o, "start_ns");
	d->f.end_ns = query_u64(o, "end_ns");
	d->f.timescale_s = (uint32_t)query_u64(o, "timescale_s");
	d->f.severity = (uint32_t)query_u64(o, "severity");
	d->f.score = query_dbl(o, "score");
	d->f.value = query_dbl(o, "value");
	d->f.expected = query_dbl(o, "expected");
	d->f.filter = query_str(o, "filter");
	d->f.vital = query_str(o, "vital");
	d->f.label = query_str(o, "label");
	d->f.text = query_str(o, "text");
	d->host = query_str(o, "host");
	d->base = json_is_true(json_object_get(o, "base"));
	if (d->f.filter == NULL)
		d->f.filter = "";
	if (d->f.text == NULL)
		d->f.text = "";
	if (d->host == NULL)
		d->host = "";
}

static int
query_point_cmp(const void *x, const void *y)
{
	const struct vitals_agg_point *a = x, *b = y;
	int c;

	if ((c = strcmp(a->filter, b->filter)) != 0 ||
	    (c = strcmp(a->name, b->name)) != 0 ||
	    (c = strcmp(a->host, b->host)) != 0)
		return c;
	if (a->base != b->base)
		return a->base ? -1 : 1;
	if (a->timescale_s != b->timescale_s)
		return a->timescale_s < b->timescale_s ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return 0;
}

static void
query_point_from(json_t *o, struct vitals_agg_point *d)
{
	d->filter = query_str(o, "filter");
	d->name = query_str(o, "name");
	d->host = query_str(o, "host");
	d->timescale_s = (uint32_t)query_u64(o, "timescale_s");
	d->base = json_is_true(json_object_get(o, "base"));
	d->ts_ns = query_u64(o, "ts_ns");
	d->value = query_dbl(o, "value");
	if (d->filter == NULL)
		d->filter = "";
	if (d->name == NULL)
		d->name = "";
	if (d->host == NULL)
		d->host = "";
}

/* The findings in the order they were made, for group_note. */
static const struct vitals_agg_finding *query_order_base;

static int
query_order_cmp(const void *x, const void *y)
{
	const struct vitals_agg_finding *a =
	    &query_order_base[*(const size_t *)x];
	const struct vitals_agg_finding *b =
	    &query_order_base[*(const size_t *)y];
	int ra = group_rank(a->f.filter), rb = group_rank(b->f.filter);

	if (a->f.end_ns != b->f.end_ns)
		return a->f.end_ns < b->f.end_ns ? -1 : 1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/*
 * Group warnings of several filters about one exe (group.h), as vitalsd
 * does with the findings it stores: a repeat is lowered to info (a crit
 * stays) and its text marked; the new text is held with the result.
 */
static int
query_result_group(struct query_result *res, size_t n)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct vitals_agg_finding *f;
	struct group *g;
	char with[320], *text;
	size_t *idx, i;
	json_t *js;
	int r = 0;

	if (n == 0)
		return 0;
	if ((idx = malloc(n * sizeof(*idx))) == NULL ||
	    (g = group_new()) == NULL) {
		free(idx);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	pthread_mutex_lock(&lock);
	query_order_base = res->findings;
	qsort(idx, n, sizeof(*idx), query_order_cmp);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n && r >= 0; i++) {
		f = &res->findings[idx[i]];
		if ((r = group_note(g, f->host, f->f.filter, &f->f, with,
			 sizeof(with))) != 1)
			continue;
		if ((text = malloc(strlen(f->f.text) + sizeof(with) + 32)) ==
		    NULL) {
			r = -ENOMEM;
			break;
		}
		sprintf(text, "%s" GROUP_TEXT, f->f.text, with);
		js = json_string(text);
		free(text);
		if (js == NULL || json_array_append_new(res->hold, js) != 0) {
			r = -ENOMEM;
			break;
		}
		f->f.text = json_string_value(js);
		if (f->f.severity < VITALS_SEV_CRIT)
			f->f.severity = VITALS_SEV_INFO;
	}
	group_free(g);
	free(idx);
	return r < 0 ? r : 0;
}

static int
query_result_items(struct query *q, struct query_result *res)
{
	size_t i, j, nf = 0, np = 0;
	json_t *o;

	for (i = 0; i < q->ninsts; i++) {
		nf += json_array_size(q->insts[i].findings);
		np += json_array_size(q->insts[i].points);
		json_array_append(res->hold, q->insts[i].findings);
		json_array_append(res->hold, q->insts[i].points);
	}
	res->findings = calloc(nf + 1, sizeof(*res->findings));
	res->points = calloc(np + 1, sizeof(*res->points));
	if (res->findings == NULL || res->points == NULL)
		return -ENOMEM;
	for (i = 0, nf = 0, np = 0; i < q->ninsts; i++) {
		json_array_foreach(q->insts[i].findings, j, o)
		    query_finding_from(o, &res->findings[nf++]);
		json_array_foreach(q->insts[i].points, j, o)
		    query_point_from(o, &res->points[np++]);
	}
	if (query_result_group(res, nf) != 0)
		return -ENOMEM;
	qsort(res->findings, nf, sizeof(*res->findings), query_finding_cmp);
	qsort(res->points, np, sizeof(*res->points), query_point_cmp);
	res->pub.findings = res->findings;
	res->pub.nfindings = nf;
	res->pub.points = res->points;
	res->pub.npoints = np;
	return 0;
}

/* Build the caller's result from what q computed or found cached. */
int
query_result(struct query *q, struct vitals_agg_result **out)
{
	struct query_result *res;
	size_t i;
	int r;

	if ((res = calloc(1, sizeof(*res))) == NULL ||
	    (res->hold = json_array()) == NULL) {
		free(res);
		return query_fail(q, -ENOMEM, "out of memory");
	}
	for (i = 0; i < q->nts; i++)
		res->ts[i] = q->ts[i].ts;
	res->pub.from_ns = q->p->from_ns;
	res->pub.to_ns = q->p->to_ns;
	res->pub.ntimescales = (uint32_t)q->nts;
	res->pub.timescales = res->ts;
	res->pub.epochs_read = q->epochs_read;
	res->pub.cache_hits = q->hits;
	res->pub.cache_misses = q->misses;
	res->pub.rollup_hits = q->rhits;
	res->pub.rollup_misses = q->rmisses;
	if (q->cache != NULL &&
	    (res->cache_dir = strdup(cache_dir(q->cache))) == NULL) {
		vitals_agg_result_free(&res->pub);
		return query_fail(q, -ENOMEM, "out of memory");
	}
	res->pub.cache_dir = res->cache_dir;
	if ((r = query_result_slots(q, res)) != 0 ||
	    (r = query_result_items(q, res)) != 0) {
		vitals_agg_result_free(&res->pub);
		return query_fail(q, r, "out of memory");
	}
	*out = &res->pub;
	return 0;
}

void
vitals_agg_result_free(struct vitals_agg_result *r)
{
	struct query_result *res = (struct query_result *)r;

	if (res == NULL)
		return;
	json_decref(res->hold);
	free(res->slots);
	free(res->vitals);
	free(res->findings);
	free(res->points);
	free(res->cache_dir);
	free(res);
}
