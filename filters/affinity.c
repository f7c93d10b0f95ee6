/* SPDX-License-Identifier: MIT */
/*
 * affinity: flags an abrupt change in who a vital's weight belongs to.
 * Per timescale and vital, each epoch's top exes (or labels) form a
 * normalised weight vector compared with the previous epoch's (or an EWMA
 * of past ones) by weighted Jaccard similarity, sum(min) / sum(max).  A
 * change that moves at least the vital's floor of weight per second, in
 * `persist` of the last 2*persist-1 epochs, is an incident (warn,
 * doc/findings.md); while it lasts the mix before it stays the baseline.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "incident.h"
#include "labels.h"

#define AFFINITY_TOP_MAX 256
#define AFFINITY_KEEP 4 /* EWMA keeps up to this many times top entries */
#define AFFINITY_EPS 1e-4 /* EWMA entries below this are forgotten */
#define AFFINITY_NAMED 3 /* entering/leaving entries named in a finding */

struct affinity_config {
	int64_t top; /* entries of the distribution */
	double min_similarity; /* flag below this */
	int64_t warmup; /* epochs learnt before flagging */
	double alpha; /* 0: previous epoch; else EWMA weight of the newest */
	int64_t min_events; /* epochs with fewer events are skipped */
	struct vitals_strlist vitals; /* empty = all */
	char *by; /* "exe" or "label" */
	int64_t
	    persist; /* a change warns when seen in persist of 2*persist-1 */
	struct vitals_strlist floor; /* least weight moved per second */
};

#define AFFINITY_OFF(m) offsetof(struct affinity_config, m)

/* clang-format off */
static const struct vitals_option affinity_options[] = {
	{ .key = "top", .type = VITALS_OPT_INT, .offset = AFFINITY_OFF(top),
	    .def = "10", .help = "heaviest exes (or labels) in a distribution",
	    .min = 1, .max = AFFINITY_TOP_MAX },
	{ .key = "min_similarity", .type = VITALS_OPT_DOUBLE,
	    .offset = AFFINITY_OFF(min_similarity), .def = "0.3",
	    .help = "flag when the weighted Jaccard similarity drops below",
	    .min = 0, .max = 1 },
	{ .key = "warmup", .type = VITALS_OPT_INT,
	    .offset = AFFINITY_OFF(warmup), .def = "3",
	    .help = "epochs learnt per vital and timescale before flagging",
	    .min = 0, .max = 1e9 },
	{ .key = "alpha", .type = VITALS_OPT_DOUBLE,
	    .offset = AFFINITY_OFF(alpha), .def = "0",
	    .help = "0: compare with the previous epoch; else with an EWMA "
	    "of past distributions, the newest weighing alpha",
	    .min = 0, .max = 1 },
	{ .key = "min_events", .type = VITALS_OPT_INT,
	    .offset = AFFINITY_OFF(min_events), .def = "50",
	    .help = "epochs where the vital has fewer events are skipped",
	    .min = 0, .max = 1e18 },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = AFFINITY_OFF(vitals), .def = NULL,
	    .help = "vitals to watch (default: all)" },
	{ .key = "by", .type = VITALS_OPT_STRING, .offset = AFFINITY_OFF(by),
	    .def = "exe", .help = "distribution over 'exe' or 'label'" },
	{ .key = "persist", .type = VITALS_OPT_INT,
	    .offset = AFFINITY_OFF(persist), .def = "2",
	    .help = "a change is a warning when it lasts persist of the last "
	    "2*persist-1 epochs (else info)", .min = 1,
	    .max = INCIDENT_K_MAX },
	{ .key = "floor", .type = VITALS_OPT_STRLIST,
	    .offset = AFFINITY_OFF(floor), .def = NULL,
	    .help = "least weight per second a change must move to be "
	    "reported, VITAL=VALUE (with K/M/G or ns/us/ms/s); vitals not "
	    "listed: " INCIDENT_FLOORS_HELP "; 0 for none" },
	{ .key = NULL }
};
/* clang-format on */

struct affinity_item {
	char *name; /* owned */
	double p; /* share, the items of a distribution sum to 1 */
};

/* A distribution, sorted by name. */
struct affinity_dist {
	uint32_t n;
	struct affinity_item *v;
};

/* One vital at one timescale. */
struct affinity_vital {
	struct vitals_keyed key; /* timescale and vital name */
	uint64_t learnt; /* epochs learnt */
	uint64_t out; /* changed epochs in a row, not learnt */
	struct affinity_dist base; /* previous epoch or EWMA */
};

struct affinity {
	struct vitals_ctx *ctx;
	const struct affinity_config *cf;
	int by;
	uint64_t base_ns;
	uint32_t nvitals;
	struct affinity_vital *vitals;
	struct incidents inc;
	const struct vitals_queue *q; /* the queue being looked at */
};

static void
affinity_dist_free(struct affinity_dist *d)
{
	uint32_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	d->n = 0;
	d->v = NULL;
}

static int
affinity_item_cmp(const void *a, const void *b)
{
	const struct affinity_item *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The top entries of l as a distribution (empty if they weigh nothing). */
static int
affinity_dist_make(
    const struct labels *l, uint32_t top, struct affinity_dist *d)
{
	double sum = 0;
	uint32_t i, n = l->n < top ? l->n : top;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		sum += l->v[i].weight;
	if (sum <= 0)
		return 0;
	if ((d->v = calloc(n, sizeof(*d->v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++, d->n++) {
		if ((d->v[i].name = strdup(l->v[i].name)) == NULL) {
			affinity_dist_free(d);
			return -ENOMEM;
		}
		d->v[i].p = l->v[i].weight / sum;
	}
	qsort(d->v, d->n, sizeof(*d->v), affinity_item_cmp);
	return 0;
}

/* Share of `name` in d (sorted by name); 0 if absent. */
static double
affinity_p(const struct affinity_dist *d, const char *name)
{
	struct affinity_item key = { (char *)name, 0 }, *it;

	it = bsearch(&key, d->v, d->n, sizeof(*d->v), affinity_item_cmp);
	return it != NULL ? it->p : 0;
}

/* Weighted Jaccard similarity: sum of minima over sum of maxima. */
static double
affinity_similarity(
    const struct affinity_dist *a, const struct affinity_dist *b)
{
	double lo = 0, hi = 0, pa, pb;
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		pa = a->v[i].p;
		pb = affinity_p(b, a->v[i].name);
		lo += fmin(pa, pb);
		hi += fmax(pa, pb);
	}
	for (i = 0; i < b->n; i++)
		if (affinity_p(a, b->v[i].name) == 0)
			hi += b->v[i].p;
	return hi > 0 ? lo / hi : 1;
}

static int
affinity_p_desc(const void *a, const void *b)
{
	const struct affinity_item *x = *(const struct affinity_item *const *)a;
	const struct affinity_item *y = *(const struct affinity_item *const *)b;

	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Items of `from` absent from `other`, heaviest first, as
 * "NAME (12%), ..." into buf; returns the heaviest or NULL.
 */
static const char *
affinity_diff(const struct affinity_dist *from,
    const struct affinity_dist *other, char *buf, size_t len)
{
	const struct affinity_item **v;
	const char *first = NULL;
	uint32_t i, n = 0;
	size_t used = 0;

	buf[0] = '\0';
	if ((v = calloc(from->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < from->n; i++)
		if (affinity_p(other, from->v[i].name) == 0)
			v[n++] = &from->v[i];
	qsort(v, n, sizeof(*v), affinity_p_desc);
	for (i = 0; i < n && i < AFFINITY_NAMED && used < len; i++) {
		snprintf(buf + used, len - used, "%s%s (%.0f%%)", i ? ", " : "",
		    v[i]->name, 100 * v[i]->p);
		used = strlen(buf);
	}
	if (n > AFFINITY_NAMED && used < len)
		snprintf(
		    buf + used, len - used, " and %u more", n - AFFINITY_NAMED);
	first = n > 0 ? v[0]->name : NULL;
	free(v);
	return first;
}

/* The name whose share grew most, for a change with nobody new. */
static const char *
affinity_gainer(
    const struct affinity_dist *cur, const struct affinity_dist *base)
{
	const char *best = NULL;
	double gain, most = -2;
	uint32_t i;

	for (i = 0; i < cur->n; i++) {
		gain = cur->v[i].p - affinity_p(base, cur->v[i].name);
		if (gain > most) {
			most = gain;
			best = cur->v[i].name;
		}
	}
	return best;
}

/* Who a change is charged to: the heaviest that entered, else the gainer. */
static const char *
affinity_who(const struct affinity_dist *cur, const struct affinity_dist *base)
{
	char buf[8];
	const char *who = affinity_diff(cur, base, buf, sizeof(buf));

	return who != NULL ? who : affinity_gainer(cur, base);
}

/* Half the L1 distance: the share of the weight that moved, 0..1. */
static double
affinity_moved(const struct affinity_dist *a, const struct affinity_dist *b)
{
	double sum = 0;
	uint32_t i;

	for (i = 0; i < a->n; i++)
		sum += fabs(a->v[i].p - affinity_p(b, a->v[i].name));
	for (i = 0; i < b->n; i++)
		if (affinity_p(a, b->v[i].name) == 0)
			sum += b->v[i].p;
	return sum / 2;
}

/* Report a change as its incident step decided. */
static int
affinity_flag(struct affinity *a, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, const struct affinity_dist *cur,
    const struct affinity_dist *base, double sim, const struct incident_out *o)
{
	char in[512], out[512], text[1600], tail[160];
	const char *entered = affinity_diff(cur, base, in, sizeof(in));

	affinity_diff(base, cur, out, sizeof(out));
	snprintf(text, sizeof(text),
	    "%s weight moved to other %ss: similarity %.2f to %s is below "
	    "%.2f; entered: %s; left: %s%s",
	    ve->name, a->by == LABELS_BY_EXE ? "exe" : "label", sim,
	    a->cf->alpha > 0 ? "the recent mix" : "the mix before",
	    a->cf->min_similarity, in[0] ? in : "none", out[0] ? out : "none",
	    incident_tail(&a->inc, o, a->inc.k > 1, tail, sizeof(tail)));
	return vitals_queue_emit(a->ctx, q,
	    &(struct vitals_finding){ .start_ns = o->start_ns,
		.severity = o->severity,
		.score = 1 - sim,
		.value = sim,
		.expected = a->cf->min_similarity,
		.vital = ve->name,
		.label = entered != NULL ? entered : affinity_gainer(cur, base),
		.text = text });
}

/* An incident that is over: its end, at info. */
static int
affinity_end(void *arg, const struct incident *in, const struct incident_out *o)
{
	struct affinity *a = arg;
	char text[768], tm[16];

	snprintf(text, sizeof(text),
	    "%s: the change of mix to %s, an incident since %s, is over after "
	    "%u epochs",
	    in->vital ? in->vital : "", in->label ? in->label : "",
	    incident_time(o->start_ns, tm, sizeof(tm)), o->epochs);
	return incident_end_emit(a->ctx, a->q, in, o, text);
}

static int
affinity_item_p_desc(const void *a, const void *b)
{
	const struct affinity_item *x = a, *y = b;

	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Keep the heaviest entries, drop the negligible, renormalise. */
static void
affinity_prune(struct affinity_dist *d, uint32_t keep)
{
	double sum = 0;
	uint32_t i;

	qsort(d->v, d->n, sizeof(*d->v), affinity_item_p_desc);
	while (d->n > 0 && (d->n > keep || d->v[d->n - 1].p < AFFINITY_EPS))
		free(d->v[--d->n].name);
	for (i = 0; i < d->n; i++)
		sum += d->v[i].p;
	for (i = 0; i < d->n && sum > 0; i++)
		d->v[i].p /= sum;
	qsort(d->v, d->n, sizeof(*d->v), affinity_item_cmp);
}

/* base = alpha * cur + (1 - alpha) * base, over the union of names. */
static int
affinity_blend(struct affinity *a, struct affinity_dist *base,
    const struct affinity_dist *cur)
{
	struct affinity_dist old = *base;
	double alpha = a->cf->alpha;
	struct affinity_item *v;
	uint32_t i, n = 0;
	int rc = 0;

	if ((v = calloc(old.n + cur->n + 1, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < old.n; i++, n++) {
		v[n].name = old.v[i].name; /* moved */
		v[n].p = (1 - alpha) * old.v[i].p +
		    alpha * affinity_p(cur, old.v[i].name);
	}
	for (i = 0; i < cur->n && rc == 0; i++) {
		if (affinity_p(&old, cur->v[i].name) > 0)
			continue;
		if ((v[n].name = strdup(cur->v[i].name)) == NULL)
			rc = -ENOMEM;
		else
			v[n++].p = alpha * cur->v[i].p;
	}
	free(old.v);
	base->v = v;
	base->n = n;
	affinity_prune(base, AFFINITY_KEEP * (uint32_t)a->cf->top);
	return rc;
}

/*
 * Compare, then learn.  A change that moves at least the floor is stepped
 * as the incident of whoever entered (or gained most), a warning if that
 * one holds most of the weight now (a takeover); while the mix
 * stays changed the mix before it stays the baseline, so the change is
 * one incident, and after incident_adapt() changed epochs in a row the
 * new mix is learnt: it has become the norm.  A change too small to move the floor
 * is learnt at once and not reported.
 */
static int
affinity_step(struct affinity *a, const struct vitals_queue *q,
    struct affinity_vital *v, const struct vitals_vital_epoch *ve,
    struct affinity_dist *cur, double rate)
{
	uint64_t warm = a->cf->warmup > 1 ? (uint64_t)a->cf->warmup : 1;
	double sim, floor = incident_floor(&a->cf->floor, ve->name);
	struct incident_out o;
	const char *who;
	char key[512];
	uint32_t sev;
	int rc = 0, changed = 0;

	if (v->learnt >= warm && v->base.n > 0) {
		sim = affinity_similarity(cur, &v->base);
		if (sim < a->cf->min_similarity &&
		    affinity_moved(cur, &v->base) * rate >= floor) {
			changed = 1;
			who = affinity_who(cur, &v->base);
			/* A takeover (who holds most now, one process) can
			 * warn; a reshuffle among many, a family of processes
			 * taking over (a build's steps) or kernel threads
			 * taking turns (kworkers) is info. */
			sev = affinity_p(cur, who) >= 0.5 &&
				(a->by != LABELS_BY_EXE ||
				    incident_process(who)) &&
				!labels_family(ve, a->by, who)
			    ? incident_cap(ve->name, VITALS_SEV_WARN)
			    : VITALS_SEV_INFO;
			snprintf(
			    key, sizeof(key), "%.63s\t%.400s", ve->name, who);
			if (incident_step(&a->inc, q, key, ve->name, who, 1,
				affinity_moved(cur, &v->base) * rate, sev,
				sev > VITALS_SEV_INFO ? (uint32_t)a->cf->persist
						      : 1,
				&o) != 0)
				return -ENOMEM;
			if (o.what == INCIDENT_NOTE ||
			    o.what == INCIDENT_START ||
			    o.what == INCIDENT_UPDATE)
				rc = affinity_flag(
				    a, q, ve, cur, &v->base, sim, &o);
		}
	}
	v->learnt++;
	if (changed && ++v->out < incident_adapt(&a->inc, a->cf->warmup))
		return rc;
	v->out = 0;
	if (a->cf->alpha > 0 && !changed && v->base.n > 0)
		return affinity_blend(a, &v->base, cur) != 0 ? -ENOMEM : rc;
	affinity_dist_free(&v->base);
	v->base = *cur;
	memset(cur, 0, sizeof(*cur));
	return rc;
}

static int
affinity_vital(struct affinity *a, const struct vitals_queue *q,
    struct affinity_vital *v, const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	double secs = ep->length_ns > 0 ? (double)ep->length_ns / 1e9
					: (double)q->timescale_s;
	struct labels_how how = { a->by, labels_runs(ep, a->base_ns), NULL,
		NULL };
	struct affinity_dist cur;
	struct labels l;
	int rc;

	if (ve->events < (uint64_t)a->cf->min_events)
		return 0;
	if ((rc = labels_collect(ve, &how, &l)) != 0)
		return rc;
	rc = affinity_dist_make(&l, (uint32_t)a->cf->top, &cur);
	labels_free(&l);
	if (rc != 0 || cur.n == 0)
		return rc;
	rc = affinity_step(
	    a, q, v, ve, &cur, secs > 0 ? (double)ve->wsum / secs : 0);
	affinity_dist_free(&cur);
	return rc;
}

/* Only the newest epoch of the queue is new; the state holds the past. */
static int
affinity_epoch(void *state, const struct vitals_queue *q)
{
	struct affinity *a = state;
	const struct vitals_vital_epoch *ve = NULL;
	struct affinity_vital *v;
	int rc = 0;

	a->q = q;
	while ((ve = vitals_queue_next_vital(q, &a->cf->vitals, ve)) != NULL) {
		v = vitals_keyed_get(&a->vitals, &a->nvitals,
		    sizeof(*a->vitals), q->timescale_s, ve->name);
		if (v == NULL || affinity_vital(a, q, v, ve) != 0)
			rc = -ENOMEM;
	}
	if (incident_sweep(&a->inc, q, affinity_end, a) != 0)
		rc = -ENOMEM;
	return rc;
}

static void
affinity_fini(void *state)
{
	struct affinity *a = state;
	uint32_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nvitals; i++)
		affinity_dist_free(&a->vitals[i].base);
	vitals_keyed_free(a->vitals, a->nvitals, sizeof(*a->vitals));
	incident_free(&a->inc);
	free(a);
}

/* The table's bounds (a mock core may skip them), `by`, the floors. */
static int
affinity_check(const void *config, char *why, size_t len)
{
	const struct affinity_config *cf = config;
	int by;

	if (vitals_options_check(affinity_options, config, why, len) != 0 ||
	    labels_by(cf->by, &by, why, len) != 0)
		return -EINVAL;
	return incident_floors_check(&cf->floor, why, len);
}

static int
affinity_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct affinity_config *cf = config;
	struct affinity *a;
	int r;

	a = vitals_init_state(ctx, affinity_check, config, sizeof(*a), &r);
	if (a == NULL)
		return r;
	a->ctx = ctx;
	a->cf = cf;
	labels_by(cf->by, &a->by, NULL, 0);
	a->base_ns = vitals_settings(ctx)->epoch_ns;
	a->inc.k = (uint32_t)cf->persist;
	*state = a;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct affinity_config),
	.name = "affinity",
	.version = "0.1.0",
	.description = "abrupt changes in which exes or labels a vital's "
		       "weight belongs to",
	.options = affinity_options,
	.init = affinity_init,
	.fini = affinity_fini,
	.epoch = affinity_epoch,
	.check = affinity_check,
};
