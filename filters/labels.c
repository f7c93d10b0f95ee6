/* SPDX-License-Identifier: MIT */
/*
 * Attribution of anonymous HCA weight to the exes and labels sampled in
 * each slot, shared by the threshold, topk, affinity and rules filters
 * (see labels.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"

/* One sample, reduced to the key it counts under. */
struct labels_key {
	uint32_t slot, exe_id, uid, idx; /* idx: arrival order */
	uint64_t label;
};

/* One (slot, label, exe_id, uid) and its weight. */
struct labels_part {
	uint32_t slot;
	double count; /* summed run maxima of its samples' counts */
	double weight; /* share of the slot's counter */
	const struct vitals_sample *rep; /* sample with the highest count */
	const char *name; /* group name, in names[] or in the sample */
};

static int
labels_key_cmp(const void *a, const void *b)
{
	const struct labels_key *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	if (x->exe_id != y->exe_id)
		return x->exe_id < y->exe_id ? -1 : 1;
	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
labels_same(const struct labels_key *x, const struct labels_key *y)
{
	return x->slot == y->slot && x->label == y->label &&
	    x->exe_id == y->exe_id && x->uid == y->uid;
}

/*
 * Sum of the highest count of each run: a counter restarts at every base
 * epoch boundary, which shows as a new base epoch or a smaller count.
 */
static void
labels_run(const struct vitals_vital_epoch *ve, const struct labels_key *k,
    size_t n, uint64_t base_ns, struct labels_part *p)
{
	const struct vitals_sample *s, *prev = NULL;
	double runmax = 0;
	size_t i;

	p->slot = k[0].slot;
	p->count = 0;
	p->rep = &ve->samples[k[0].idx];
	for (i = 0; i < n; i++) {
		s = &ve->samples[k[i].idx];
		if (prev != NULL &&
		    (s->count < prev->count ||
			(base_ns != 0 &&
			    s->ts_ns / base_ns != prev->ts_ns / base_ns))) {
			p->count += runmax;
			runmax = 0;
		}
		if ((double)s->count > runmax)
			runmax = (double)s->count;
		if (s->count >= p->rep->count)
			p->rep = s;
		prev = s;
	}
	p->count += runmax;
}

/* Share each slot's counter among its parts, by their counts. */
static double
labels_share_slots(
    const struct vitals_vital_epoch *ve, struct labels_part *p, size_t n)
{
	double sum, w, all = 0;
	size_t i, j, k;

	for (i = 0; i < n; i = j) {
		sum = 0;
		for (j = i; j < n && p[j].slot == p[i].slot; j++)
			sum += p[j].count;
		w = sum;
		if (ve->hca != NULL && p[i].slot < ve->hca_size &&
		    ve->hca[p[i].slot] > 0)
			w = (double)ve->hca[p[i].slot];
		for (k = i; k < j; k++)
			p[k].weight = sum > 0 ? w * p[k].count / sum : 0;
		all += sum > 0 ? w : 0;
	}
	return all;
}

/* The parts of a vital: one per sampled (slot, label, exe_id, uid). */
static int
labels_parts(const struct vitals_vital_epoch *ve, uint64_t base_ns,
    struct labels_part **out, size_t *nout)
{
	struct labels_key *k;
	struct labels_part *p;
	size_t i, j, n = 0;

	*out = NULL;
	*nout = 0;
	if (ve->nsamples == 0 || ve->samples == NULL)
		return 0;
	k = malloc(ve->nsamples * sizeof(*k));
	p = malloc(ve->nsamples * sizeof(*p));
	if (k == NULL || p == NULL) {
		free(k);
		free(p);
		return -ENOMEM;
	}
	for (i = 0; i < ve->nsamples; i++)
		k[i] = (struct labels_key){ ve->samples[i].slot,
			ve->samples[i].exe_id, ve->samples[i].uid, (uint32_t)i,
			ve->samples[i].label };
	qsort(k, ve->nsamples, sizeof(*k), labels_key_cmp);
	for (i = 0; i < ve->nsamples; i = j) {
		for (j = i + 1; j < ve->nsamples && labels_same(&k[i], &k[j]);)
			j++;
		labels_run(ve, k + i, j - i, base_ns, &p[n++]);
	}
	free(k);
	*out = p;
	*nout = n;
	return 0;
}

/* By name, the heaviest part of each name first. */
static int
labels_part_name_cmp(const void *a, const void *b)
{
	const struct labels_part *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return 0;
}

static int
labels_entry_cmp(const void *a, const void *b)
{
	const struct labels_entry *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Merge parts with the same name (sorted by name) into entries. */
static int
labels_group(const struct labels_part *p, size_t n, struct labels *out)
{
	struct labels_entry *e = NULL;
	size_t i;

	if (n == 0)
		return 0;
	if ((out->v = calloc(n, sizeof(*out->v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (e == NULL || strcmp(p[i].name, e->name) != 0) {
			e = &out->v[out->n++];
			if ((e->name = strdup(p[i].name)) == NULL)
				return -ENOMEM;
			e->rep = p[i].rep; /* the heaviest part comes first */
		}
		e->weight += p[i].weight;
		e->nlabels++;
	}
	qsort(out->v, out->n, sizeof(*out->v), labels_entry_cmp);
	return 0;
}

/* Name the parts the match keeps and drop the others. */
static int
labels_name_parts(struct labels_part *p, size_t *n,
    const struct labels_how *how, char (**names)[24])
{
	size_t i, kept = 0;

	if ((*names = malloc((*n ? *n : 1) * sizeof(**names))) == NULL)
		return -ENOMEM;
	for (i = 0; i < *n; i++) {
		if (how->match != NULL && !how->match(p[i].rep, how->arg))
			continue;
		p[kept] = p[i];
		p[kept].name = labels_name(
		    p[i].rep, how->by, (*names)[kept], sizeof((*names)[kept]));
		kept++;
	}
	*n = kept;
	return 0;
}

int
labels_collect(const struct vitals_vital_epoch *ve,
    const struct labels_how *how, struct labels *out)
{
	struct labels_part *p = NULL;
	char(*names)[24] = NULL;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->total = (double)ve->wsum;
	if ((rc = labels_parts(ve, how->base_ns, &p, &n)) != 0)
		goto fail;
	out->attributed = labels_share_slots(ve, p, n);
	if ((rc = labels_name_parts(p, &n, how, &names)) != 0)
		goto fail;
	qsort(p, n, sizeof(*p), labels_part_name_cmp);
	if ((rc = labels_group(p, n, out)) != 0)
		goto fail;
	free(names);
	free(p);
	return 0;
fail:
	free(names);
	free(p);
	labels_free(out);
	return rc;
}

void
labels_free(struct labels *l)
{
	uint32_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct labels_entry *
labels_find(const struct labels *l, const char *name)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

const char *
labels_name(const struct vitals_sample *s, int by, char *buf, size_t len)
{
	if (by == LABELS_BY_EXE && s->exe != NULL && s->exe[0] != '\0')
		return s->exe;
	if (by == LABELS_BY_EXE && s->comm != NULL && s->comm[0] != '\0')
		return s->comm;
	snprintf(buf, len, "0x%" PRIx64, s->label);
	return buf;
}

double
labels_scale(const struct vitals_epoch *e, uint64_t base_ns)
{
	if (e->length_ns == 0 || base_ns == 0)
		return 1.0;
	return (double)base_ns / (double)e->length_ns;
}

uint64_t
labels_runs(const struct vitals_epoch *e, uint64_t base_ns)
{
	return (uint64_t)e->timescale_s * 1000000000ULL > base_ns ? base_ns : 0;
}

const char *
labels_fmt(double x, const char *unit, char *buf, size_t len)
{
	static const char *const bytes[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned i = 0;

	if (unit != NULL && strcmp(unit, "ns") == 0) {
		if (fabs(x) >= 1e9)
			snprintf(buf, len, "%.2f s", x / 1e9);
		else if (fabs(x) >= 1e6)
			snprintf(buf, len, "%.1f ms", x / 1e6);
		else if (fabs(x) >= 1e3)
			snprintf(buf, len, "%.1f us", x / 1e3);
		else
			snprintf(buf, len, "%.0f ns", x);
	} else if (unit != NULL && strcmp(unit, "bytes") == 0) {
		while (fabs(x) >= 1024 && i < 4) {
			x /= 1024;
			i++;
		}
		snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", x, bytes[i]);
	} else {
		snprintf(buf, len, "%.0f %s", x, unit != NULL ? unit : "");
	}
	return buf;
}

int
labels_by(const char *text, int *by)
{
	if (text == NULL || strcmp(text, "exe") == 0)
		*by = LABELS_BY_EXE;
	else if (strcmp(text, "label") == 0)
		*by = LABELS_BY_LABEL;
	else
		return -EINVAL;
	return 0;
}
