/* SPDX-License-Identifier: MIT */
/*
 * diff: a differential summary in the spirit of X-ray (Attariyan et al.).
 * For each vital it compares the newest epoch's rate with a baseline made
 * of the previous epochs of the queue and ranks the exes (or sites) of the
 * samples by their share of the difference.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "labels.h"

#define DIFF_UNATTRIBUTED "(unattributed)"

struct diff_config {
	int64_t baseline; /* previous epochs forming the baseline */
	int64_t top; /* most contributors reported per vital */
	double min_share; /* smallest share of the difference reported */
	double min_change; /* smallest relative change of a vital reported */
	double min_rate; /* vitals slower than this on both sides are ignored */
	char *by; /* "exe" or "site" */
	struct vitals_strlist vitals; /* vitals compared; empty = all */
};

#define DIFF_OFF(m) offsetof(struct diff_config, m)

/* clang-format off */
static const struct vitals_option diff_options[] = {
	{ .key = "baseline", .type = VITALS_OPT_INT,
	    .offset = DIFF_OFF(baseline), .def = "12",
	    .help = "previous epochs of the queue averaged into the baseline",
	    .min = 1, .max = 1024 },
	{ .key = "top", .type = VITALS_OPT_INT, .offset = DIFF_OFF(top),
	    .def = "5", .help = "most contributors reported per vital",
	    .min = 1, .max = 1000 },
	{ .key = "min_share", .type = VITALS_OPT_DOUBLE,
	    .offset = DIFF_OFF(min_share), .def = "0.1",
	    .help = "report contributors accounting for at least this share "
		    "of the vital's change", .min = 0, .max = 1 },
	{ .key = "min_change", .type = VITALS_OPT_DOUBLE,
	    .offset = DIFF_OFF(min_change), .def = "0.5",
	    .help = "compare vitals whose rate changed by more than this "
		    "fraction of the baseline (0.5 = 50%)",
	    .min = 0, .max = 1e9 },
	{ .key = "min_rate", .type = VITALS_OPT_DOUBLE,
	    .offset = DIFF_OFF(min_rate), .def = "0",
	    .help = "ignore vitals whose new and baseline rates (weight per "
		    "second) are both below this", .min = 0, .max = 1e18 },
	{ .key = "by", .type = VITALS_OPT_STRING, .offset = DIFF_OFF(by),
	    .def = "exe",
	    .help = "contributors are exes (text names their main site) or "
		    "sites (top kernel, else user frame; text names the exe)" },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = DIFF_OFF(vitals), .def = NULL,
	    .help = "vitals compared (default: all)" },
	{ .key = NULL }
};
/* clang-format on */

struct diff {
	struct vitals_ctx *ctx;
	const struct diff_config *cf;
	int by_site;
	uint64_t base_ns; /* nominal base epoch: runs of a rollup's samples */
};

/* Weight per key of one vital on both sides of the comparison. */
struct diff_acc {
	double wnew; /* weight in the newest epoch */
	double wbase; /* weight summed over the baseline epochs */
};

/*
 * The contributors of one vital: map entries of scope 0 are contributors
 * (exes or sites), of scope c + 1 the secondary keys (sites or exes) of
 * contributor c; acc is indexed by entry id.
 */
struct diff_table {
	struct labels_map *map;
	struct diff_acc *acc;
	uint32_t cap;
	double new_s; /* length of the newest epoch, seconds */
	double base_s; /* length of the baseline epochs with the vital */
	double wsum_new, wsum_base;
};

/* A contributor ranked by its share of the difference. */
struct diff_rank {
	uint32_t id;
	double share;
};

/* An epoch's length in seconds; 0 if it has none. */
static double
diff_seconds(const struct vitals_epoch *e)
{
	if (e->length_ns > 0)
		return (double)e->length_ns / 1e9;
	return (double)e->timescale_s;
}

/* Add w to (scope, key) on the new or the baseline side. */
static int
diff_credit(struct diff_table *t, uint32_t scope, const char *key, int base,
    double w, uint32_t *id)
{
	struct diff_acc *a;
	uint32_t cap;
	int r;

	if ((r = labels_map_put(t->map, scope, key, id)) < 0)
		return r;
	if (*id >= t->cap) {
		cap = t->cap ? 2 * t->cap : 256;
		if ((a = realloc(t->acc, cap * sizeof(*a))) == NULL)
			return -ENOMEM;
		memset(a + t->cap, 0, (cap - t->cap) * sizeof(*a));
		t->acc = a;
		t->cap = cap;
	}
	if (base)
		t->acc[*id].wbase += w;
	else
		t->acc[*id].wnew += w;
	return 0;
}

/* Credit one contributor and its secondary key. */
static int
diff_credit2(struct diff_table *t, const char *first, const char *second,
    int base, double w)
{
	uint32_t id, sub;
	int r;

	if ((r = diff_credit(t, 0, first, base, w, &id)) != 0)
		return r;
	return diff_credit(t, id + 1, second, base, w, &sub);
}

/* Attribute one epoch's weight of the vital to its contributors. */
static int
diff_add(struct diff *d, struct diff_table *t, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve, int base)
{
	char site[LABELS_FRAME_LEN], name[LABELS_NAME_LEN];
	const struct vitals_sample *s;
	double *w, total = 0;
	const char *exe;
	uint32_t j;
	int r = 0;

	if ((w = calloc(ve->nsamples + 1, sizeof(*w))) == NULL)
		return -ENOMEM;
	if (labels_weights(ve, labels_runs(e, d->base_ns), w, &total) != 0) {
		free(w);
		return -ENOMEM;
	}
	for (j = 0; j < ve->nsamples && r == 0; j++) {
		s = &ve->samples[j];
		exe = labels_name(s, LABELS_BY_EXE, name, sizeof(name));
		labels_site(s, site, sizeof(site));
		if (w[j] > 0)
			r = diff_credit2(t, d->by_site ? site : exe,
			    d->by_site ? exe : site, base, w[j]);
	}
	/* Weight of slots no sample was kept for (beyond rounding). */
	if (r == 0 && (double)ve->wsum > total * (1 + 1e-9))
		r = diff_credit2(
		    t, DIFF_UNATTRIBUTED, "-", base, (double)ve->wsum - total);
	free(w);
	return r;
}

static double
diff_rate(double w, double s)
{
	return s > 0 ? w / s : 0;
}

/* Change in rate of entry id: new minus baseline, per second. */
static double
diff_delta(const struct diff_table *t, uint32_t id)
{
	return diff_rate(t->acc[id].wnew, t->new_s) -
	    diff_rate(t->acc[id].wbase, t->base_s);
}

static int
diff_rank_cmp(const void *a, const void *b)
{
	const struct diff_rank *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The secondary key of contributor c with the largest share, or NULL. */
static const char *
diff_main_sub(const struct diff_table *t, uint32_t c, double total)
{
	uint32_t id, n = labels_map_size(t->map), best = LABELS_NONE;

	for (id = 0; id < n; id++)
		if (labels_map_scope(t->map, id) == c + 1 &&
		    (best == LABELS_NONE ||
			diff_delta(t, id) / total >
			    diff_delta(t, best) / total))
			best = id;
	return best != LABELS_NONE ? labels_map_key(t->map, best) : NULL;
}

/* A rate in at most 3 significant digits with a k/M/G/T suffix. */
static char *
diff_num(double v, char *buf, size_t len)
{
	static const char suffix[] = "kMGT";
	int i = -1;

	while (fabs(v) >= 999.5 && i < 3) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.3g%.1s", v, i >= 0 ? &suffix[i] : "");
	return buf;
}

/* "+340% vs baseline (1.2M -> 5.28M bytes/s)" */
static void
diff_change_text(
    const struct diff_table *t, const char *unit, char *buf, size_t len)
{
	double rn = diff_rate(t->wsum_new, t->new_s);
	double rb = diff_rate(t->wsum_base, t->base_s);
	char a[16], b[16];

	if (rb > 0)
		snprintf(buf, len, "%+.0f%% vs baseline (%s -> %s %s/s)",
		    100 * (rn - rb) / rb, diff_num(rb, a, sizeof(a)),
		    diff_num(rn, b, sizeof(b)), unit);
	else
		snprintf(buf, len,
		    "appeared: none in the baseline, now %s "
		    "%s/s",
		    diff_num(rn, b, sizeof(b)), unit);
}

static int
diff_emit(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, const struct diff_table *t,
    const struct diff_rank *rk, double total)
{
	const struct vitals_epoch *ep = q->epochs[q->n - 1];
	const char *who = labels_map_key(t->map, rk->id);
	const char *sub = diff_main_sub(t, rk->id, total);
	struct vitals_finding f = { 0 };
	char change[160], extra[512] = "", text[1024];

	if (sub != NULL && strcmp(who, DIFF_UNATTRIBUTED) != 0)
		snprintf(extra, sizeof(extra), " (%s %s)",
		    d->by_site ? "exe" : "site", sub);
	diff_change_text(
	    t, ve->unit ? ve->unit : "weight", change, sizeof(change));
	snprintf(text, sizeof(text),
	    "%s %s: %s accounts for %.0f%% of the %s%s", ve->name, change, who,
	    100 * rk->share, total > 0 ? "increase" : "decrease", extra);
	f.start_ns = ep->start_ns;
	f.end_ns = ep->start_ns + ep->length_ns;
	f.timescale_s = q->timescale_s;
	f.severity = rk->share >= 0.5 ? VITALS_SEV_WARN : VITALS_SEV_INFO;
	f.score = rk->share;
	f.value = diff_rate(t->acc[rk->id].wnew, t->new_s);
	f.expected = diff_rate(t->acc[rk->id].wbase, t->base_s);
	f.vital = ve->name;
	f.label = who;
	f.text = text;
	return vitals_finding_emit(d->ctx, &f);
}

/* Rank the contributors by share of the total change; report the top. */
static int
diff_report(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, const struct diff_table *t)
{
	double total = diff_rate(t->wsum_new, t->new_s) -
	    diff_rate(t->wsum_base, t->base_s);
	uint32_t id, n = 0, size = labels_map_size(t->map);
	struct diff_rank *rk;
	int rc = 0;

	if ((rk = calloc(size + 1, sizeof(*rk))) == NULL)
		return -ENOMEM;
	for (id = 0; id < size; id++)
		if (labels_map_scope(t->map, id) == 0)
			rk[n++] =
			    (struct diff_rank){ id, diff_delta(t, id) / total };
	qsort(rk, n, sizeof(*rk), diff_rank_cmp);
	for (id = 0; id < n && id < (uint32_t)d->cf->top; id++)
		if (rk[id].share >= d->cf->min_share && rk[id].share > 0 &&
		    diff_emit(d, q, ve, t, &rk[id], total) != 0)
			rc = -ENOMEM;
	free(rk);
	return rc;
}

/* Whether the vital's change is large enough to be explained. */
static int
diff_changed(const struct diff *d, const struct diff_table *t)
{
	double rn = diff_rate(t->wsum_new, t->new_s);
	double rb = diff_rate(t->wsum_base, t->base_s);

	if (rn == rb || fmax(rn, rb) < d->cf->min_rate)
		return 0;
	return rb == 0 || fabs(rn - rb) / rb > d->cf->min_change;
}

/* The rate of vital `name` in epoch e; -1 if absent or of no length. */
static double
diff_epoch_rate(const struct vitals_epoch *e, const char *name)
{
	const struct vitals_vital_epoch *v = vitals_epoch_vital(e, name);

	if (v == NULL || diff_seconds(e) <= 0)
		return -1; /* not collected then: no evidence */
	return (double)v->wsum / diff_seconds(e);
}

static int
diff_double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Which of the n baseline epochs from q->epochs[first] make the norm
 * (keep[j] = 1): those whose rate of the vital is within min_change of
 * the baseline epochs' median rate.  An epoch that was itself a change
 * (a burst now over) is left out, so that the return to normal is not
 * reported as a change for as long as the burst stays in the baseline.
 * When that leaves none, every epoch with the vital is kept.
 */
static void
diff_norm(const struct diff *d, const struct vitals_queue *q, uint32_t first,
    uint32_t n, const char *name, int *keep)
{
	double rate[1024], sorted[1024], med;
	uint32_t i, m = 0, kept = 0;

	for (i = 0; i < n; i++)
		if ((rate[i] = diff_epoch_rate(q->epochs[first + i], name)) >=
		    0)
			sorted[m++] = rate[i];
	if (m == 0)
		return;
	qsort(sorted, m, sizeof(*sorted), diff_double_cmp);
	med = m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
	for (i = 0; i < n; i++) {
		keep[i] = rate[i] >= 0 &&
		    fabs(rate[i] - med) <= d->cf->min_change * med;
		kept += (uint32_t)keep[i];
	}
	for (i = 0; i < n && kept == 0; i++)
		keep[i] = rate[i] >= 0;
}

/* Compare one vital of the newest epoch with the baseline epochs. */
static int
diff_vital(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = q->epochs[q->n - 1];
	const struct vitals_vital_epoch *vb;
	struct diff_table t = { .new_s = diff_seconds(ep) };
	uint32_t nb = q->n - 1, i, first;
	int keep[1024] = { 0 }, r = -ENOMEM;

	if (nb > (uint32_t)d->cf->baseline)
		nb = (uint32_t)d->cf->baseline;
	if (t.new_s <= 0)
		return 0;
	first = q->n - 1 - nb;
	diff_norm(d, q, first, nb, ve->name, keep);
	if ((t.map = labels_map_new()) == NULL ||
	    (r = diff_add(d, &t, ep, ve, 0)) != 0)
		goto out;
	t.wsum_new = (double)ve->wsum;
	for (i = first; i < q->n - 1; i++) {
		vb = vitals_epoch_vital(q->epochs[i], ve->name);
		if (!keep[i - first])
			continue;
		t.base_s += diff_seconds(q->epochs[i]);
		t.wsum_base += (double)vb->wsum;
		if ((r = diff_add(d, &t, q->epochs[i], vb, 1)) != 0)
			goto out;
	}
	r = diff_changed(d, &t) ? diff_report(d, q, ve, &t) : 0;
out:
	labels_map_free(t.map);
	free(t.acc);
	return r;
}

static int
diff_wanted(const struct diff_config *cf, const char *name)
{
	uint32_t i;

	for (i = 0; i < cf->vitals.n; i++)
		if (strcmp(cf->vitals.v[i], name) == 0)
			return 1;
	return cf->vitals.n == 0;
}

/*
 * The newest epoch against the ones before it.  A vital absent from the
 * newest epoch was not collected there and is not compared.
 */
static int
diff_epoch(void *state, const struct vitals_queue *q)
{
	struct diff *d = state;
	const struct vitals_epoch *ep;
	uint32_t i;
	int rc = 0;

	if (q->n < 2)
		return 0;
	ep = q->epochs[q->n - 1];
	for (i = 0; i < ep->nvitals; i++)
		if (diff_wanted(d->cf, ep->vitals[i].name) &&
		    diff_vital(d, q, &ep->vitals[i]) != 0)
			rc = -ENOMEM;
	return rc;
}

static void
diff_fini(void *state)
{
	free(state);
}

static int
diff_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct diff_config *cf = config;
	const char *bad = NULL;
	struct diff *d;

	/* The core checks the table's bounds; a test or embedder may not. */
	if (cf->baseline < 1)
		bad = "baseline";
	else if (cf->top < 1)
		bad = "top";
	else if (!(cf->min_share >= 0 && cf->min_share <= 1))
		bad = "min_share";
	else if (!(cf->min_change >= 0))
		bad = "min_change";
	else if (!(cf->min_rate >= 0))
		bad = "min_rate";
	if (bad != NULL) {
		vitals_error(ctx, "option '%s' is out of range", bad);
		return -EINVAL;
	}
	if (cf->by == NULL ||
	    (strcmp(cf->by, "exe") != 0 && strcmp(cf->by, "site") != 0)) {
		vitals_error(ctx, "option 'by' must be exe or site, not '%s'",
		    cf->by != NULL ? cf->by : "");
		return -EINVAL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->ctx = ctx;
	d->cf = cf;
	d->by_site = strcmp(cf->by, "site") == 0;
	d->base_ns = vitals_settings(ctx)->epoch_ns;
	*state = d;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.config_size = sizeof(struct diff_config),
	.name = "diff",
	.version = "0.1.0",
	.description = "differential summary: which exes or sites account "
		       "for a vital's change against the previous epochs",
	.options = diff_options,
	.available = NULL,
	.init = diff_init,
	.fini = diff_fini,
	.epoch = diff_epoch,
};
