/* SPDX-License-Identifier: MIT */
/*
 * ewma: the Chopstix EWMA anomaly detector.  Per timescale and per vital it
 * keeps an exponentially weighted mean and variance of the epoch's weighted
 * sum and of its largest HCA slots, and reports a value that leaves
 * mean +- k*sd once `warmup` values have been seen.  A weighted sum that
 * leaves its band names in its text the slot that moved it most.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#define EWMA_TOP_MAX 16 /* most slots checked per vital and epoch */
#define EWMA_LABELS 64 /* slots tracked per vital; least recent evicted */
#define EWMA_WHO 160 /* "exe (comm) slot N" of a slot */

struct ewma_config {
	double alpha; /* weight of the newest value */
	double k; /* band half-width in sd */
	int64_t warmup; /* values learnt before testing */
	int64_t top; /* largest slots checked per epoch */
	struct vitals_strlist vitals; /* vitals checked; empty = all */
};

#define EWMA_OFF(m) offsetof(struct ewma_config, m)

/* clang-format off */
static const struct vitals_option ewma_options[] = {
	{ .key = "alpha", .type = VITALS_OPT_DOUBLE, .offset = EWMA_OFF(alpha),
	    .def = "0.3", .help = "EWMA weight of the newest epoch",
	    .min = 0, .max = 1 },
	{ .key = "k", .type = VITALS_OPT_DOUBLE, .offset = EWMA_OFF(k),
	    .def = "3", .help = "report values beyond mean +- k sd",
	    .min = 0, .max = 1000 },
	{ .key = "warmup", .type = VITALS_OPT_INT, .offset = EWMA_OFF(warmup),
	    .def = "5", .help = "epochs learnt before reporting",
	    .min = 0, .max = 1e9 },
	{ .key = "top", .type = VITALS_OPT_INT, .offset = EWMA_OFF(top),
	    .def = "3", .help = "largest HCA slots tracked per epoch",
	    .min = 0, .max = EWMA_TOP_MAX },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = EWMA_OFF(vitals), .def = NULL,
	    .help = "vitals to check (default: all)" },
	{ .key = NULL }
};
/* clang-format on */

struct ewma_stat {
	double mean;
	double var;
	uint64_t n; /* values learnt */
};

struct ewma_label {
	uint32_t slot;
	uint64_t seen; /* epoch it was last among the top; 0 = free */
	struct ewma_stat st;
	char who[EWMA_WHO]; /* its text when last among the top */
};

/* The slot that moved a weighted sum most, named in its finding. */
struct ewma_mover {
	const char *who; /* NULL: no slot made most of the change */
	double now, was; /* its value and its EWMA (0 if untracked) */
};

/* One vital at one timescale. */
struct ewma_vital {
	struct vitals_keyed key; /* timescale and vital name */
	uint32_t hca_size; /* slots mean nothing across sizes */
	uint64_t epochs; /* epochs seen, the clock of labels[].seen */
	struct ewma_stat total;
	struct ewma_label labels[EWMA_LABELS];
};

struct ewma {
	struct vitals_ctx *ctx;
	const struct ewma_config *cf;
	uint32_t nvitals;
	struct ewma_vital *vitals;
};

/* Incremental EWMA of mean and variance (Finch 2009). */
static void
ewma_learn(const struct ewma *e, struct ewma_stat *s, double x)
{
	double diff = x - s->mean, incr = e->cf->alpha * diff;

	if (s->n++ == 0) {
		s->mean = x;
		return;
	}
	s->mean += incr;
	s->var = (1 - e->cf->alpha) * (s->var + diff * incr);
}

/*
 * Test x against the band, then learn it, so an outlier moves the baseline
 * by alpha only.  The sd is floored at 5% of the mean and at 1 so that a
 * perfectly steady stream does not flag tiny noise.  Reports when the
 * value is more than k sd away once `warmup` values have been learnt.
 */
static int
ewma_test(struct ewma *e, const struct vitals_queue *q, const char *vital,
    const char *label, struct ewma_stat *s, double x,
    const struct ewma_mover *mv)
{
	const struct vitals_epoch *ep = q->epochs[q->n - 1];
	struct vitals_finding f = { 0 };
	double sd = fmax(fmax(sqrt(s->var), 0.05 * fabs(s->mean)), 1.0);
	char text[512];
	size_t used;

	if (s->n > 0 && s->n >= (uint64_t)e->cf->warmup)
		f.score = fabs(x - s->mean) / sd;
	f.expected = s->mean;
	ewma_learn(e, s, x);
	if (f.score <= e->cf->k)
		return 0;
	snprintf(text, sizeof(text),
	    "%s %s%s%.0f is %.1f sd %s its EWMA %.0f "
	    "(alpha %g, k %g)",
	    vital, label ? label : "weighted sum", label ? " count " : " ", x,
	    f.score, x > f.expected ? "above" : "below", f.expected,
	    e->cf->alpha, e->cf->k);
	if (mv != NULL && mv->who != NULL) {
		used = strlen(text);
		snprintf(text + used, sizeof(text) - used,
		    "; most of the change in %s (count %.0f, EWMA %.0f)",
		    mv->who, mv->now, mv->was);
	}
	f.start_ns = ep->start_ns;
	f.end_ns = ep->start_ns + ep->length_ns;
	f.timescale_s = q->timescale_s;
	f.severity = f.score > 2 * e->cf->k ? VITALS_SEV_CRIT : VITALS_SEV_WARN;
	f.value = x;
	f.vital = vital;
	f.label = label;
	f.text = text;
	return vitals_finding_emit(e->ctx, &f);
}

/* "exe (comm) slot N" from a sample that hashed to the slot, if any. */
static void
ewma_label_text(
    const struct vitals_vital_epoch *ve, uint32_t slot, char *buf, size_t len)
{
	const struct vitals_sample *s;
	uint32_t i;

	for (i = 0; i < ve->nsamples; i++) {
		s = &ve->samples[i];
		if (s->slot == slot &&
		    (s->exe[0] != '\0' || s->comm[0] != '\0')) {
			snprintf(
			    buf, len, "%s (%s) slot %u", s->exe, s->comm, slot);
			return;
		}
	}
	snprintf(buf, len, "slot %u", slot);
}

/* The n largest non-zero slots, largest first; returns how many. */
static uint32_t
ewma_find_top(const struct vitals_vital_epoch *ve, uint32_t n, uint32_t *top)
{
	uint32_t ntop = 0, i, j;

	for (i = 0; i < ve->hca_size && ve->hca != NULL; i++) {
		for (j = ntop; j > 0 && ve->hca[top[j - 1]] < ve->hca[i]; j--)
			if (j < n)
				top[j] = top[j - 1];
		if (j < n && ve->hca[i] > 0) {
			top[j] = i;
			ntop += ntop < n;
		}
	}
	return ntop;
}

/* The tracked state of slot, or NULL. */
static struct ewma_label *
ewma_tracked(struct ewma_vital *v, uint32_t slot)
{
	struct ewma_label *l;

	for (l = v->labels; l < v->labels + EWMA_LABELS; l++)
		if (l->seen != 0 && l->slot == slot)
			return l;
	return NULL;
}

/*
 * The slot that moved the weighted sum most in the direction it moved
 * (by `delta` from its EWMA): among the slots in the top now (an untracked
 * one was below the top: counted from 0) and the tracked ones (one that
 * left the top is named as it was last seen).  Named only when it made at
 * least half of the change; a change spread over many labels has no mover.
 */
static void
ewma_find_mover(struct ewma_vital *v, const struct vitals_vital_epoch *ve,
    const uint32_t *top, uint32_t ntop, double scale, double delta, char *buf,
    size_t len, struct ewma_mover *mv)
{
	struct ewma_label *l;
	double best = 0, now, was, d;
	uint32_t i;

	memset(mv, 0, sizeof(*mv));
	for (i = 0; i < ntop + EWMA_LABELS; i++) {
		l = i < ntop ? ewma_tracked(v, top[i]) : &v->labels[i - ntop];
		if (i >= ntop && (l->seen == 0 || l->slot >= ve->hca_size))
			continue;
		now = scale * (double)ve->hca[i < ntop ? top[i] : l->slot];
		was = l != NULL ? l->st.mean : 0;
		d = delta > 0 ? now - was : was - now;
		if (d <= best || d < 0.5 * fabs(delta))
			continue;
		best = d;
		mv->now = now;
		mv->was = was;
		if (i < ntop || l->who[0] == '\0')
			ewma_label_text(
			    ve, i < ntop ? top[i] : l->slot, buf, len);
		else
			snprintf(buf, len, "%s", l->who);
		mv->who = buf;
	}
}

/*
 * Mark the n largest non-zero slots as seen now (top[0..ntop)), tracking
 * new ones, and note how each is named.
 */
static void
ewma_mark_top(struct ewma_vital *v, const struct vitals_vital_epoch *ve,
    const uint32_t *top, uint32_t ntop, uint64_t now)
{
	struct ewma_label *l, *lru;
	char who[EWMA_WHO];
	uint32_t i;

	for (i = 0; i < ntop; i++) {
		for (lru = l = v->labels; l < v->labels + EWMA_LABELS; l++) {
			if (l->seen != 0 && l->slot == top[i])
				break;
			if (l->seen < lru->seen)
				lru = l;
		}
		if (l == v->labels + EWMA_LABELS)
			*(l = lru) = (struct ewma_label){ .slot = top[i] };
		l->seen = now;
		ewma_label_text(ve, top[i], who, sizeof(who));
		/* Keep the exe it was last seen with when no sample names it. */
		if (l->who[0] == '\0' || strncmp(who, "slot ", 5) != 0)
			snprintf(l->who, sizeof(l->who), "%s", who);
	}
}

/*
 * Values are scaled to the nominal epoch length: the first epoch after a
 * start and the last before a stop are shorter or longer than the rest,
 * and must not look like a change in rate.
 */
static double
ewma_scale(const struct vitals_epoch *ep)
{
	double nominal = (double)ep->timescale_s * 1e9;

	if (ep->length_ns == 0 || nominal == 0)
		return 1.0;
	return nominal / (double)ep->length_ns;
}

/* Every tracked slot learns; only those in the top now are tested. */
static int
ewma_vital(struct ewma *e, const struct vitals_queue *q, struct ewma_vital *v,
    const struct vitals_vital_epoch *ve)
{
	double scale = ewma_scale(q->epochs[q->n - 1]);
	uint64_t now = ++v->epochs;
	uint32_t top[EWMA_TOP_MAX], ntop;
	struct ewma_mover mv;
	struct ewma_label *l;
	char label[EWMA_WHO], moved[EWMA_WHO];
	double x;
	int rc = 0;

	if (v->hca_size != ve->hca_size) {
		memset(v->labels, 0, sizeof(v->labels));
		v->hca_size = ve->hca_size;
	}
	ntop = ewma_find_top(ve, (uint32_t)e->cf->top, top);
	x = scale * (double)ve->wsum;
	ewma_find_mover(v, ve, top, ntop, scale, x - v->total.mean, moved,
	    sizeof(moved), &mv);
	if (ewma_test(e, q, v->key.name, NULL, &v->total, x, &mv) != 0)
		rc = -ENOMEM;
	ewma_mark_top(v, ve, top, ntop, now);
	for (l = v->labels; l < v->labels + EWMA_LABELS; l++) {
		if (l->seen == 0 || ve->hca == NULL || l->slot >= ve->hca_size)
			continue;
		x = scale * (double)ve->hca[l->slot];
		if (l->seen != now) {
			ewma_learn(e, &l->st, x);
			continue;
		}
		ewma_label_text(ve, l->slot, label, sizeof(label));
		if (ewma_test(e, q, v->key.name, label, &l->st, x, NULL) != 0)
			rc = -ENOMEM;
	}
	return rc;
}

/* State of vital `name` at timescale ts, created on first sight. */
static struct ewma_vital *
ewma_vital_get(struct ewma *e, uint32_t ts, const char *name)
{
	void *v = e->vitals, *r;

	r = vitals_keyed_get(&v, &e->nvitals, sizeof(*e->vitals), ts, name);
	e->vitals = v;
	return r;
}

/* Only the newest epoch of the queue is new; the state holds the past. */
static int
ewma_epoch(void *state, const struct vitals_queue *q)
{
	struct ewma *e = state;
	const struct vitals_epoch *ep = q->epochs[q->n - 1];
	const struct vitals_vital_epoch *ve;
	struct ewma_vital *v;
	int rc = 0;

	for (ve = ep->vitals; ve < ep->vitals + ep->nvitals; ve++) {
		if (!vitals_strlist_selects(&e->cf->vitals, ve->name))
			continue;
		v = ewma_vital_get(e, q->timescale_s, ve->name);
		if (v == NULL || ewma_vital(e, q, v, ve) != 0)
			rc = -ENOMEM;
	}
	return rc;
}

static void
ewma_fini(void *state)
{
	struct ewma *e = state;
	uint32_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->nvitals; i++)
		free(e->vitals[i].key.name);
	free(e->vitals);
	free(e);
}

/* The core checks the table's bounds; a test or embedder may not. */
static int
ewma_check(const void *config, char *why, size_t len)
{
	const struct ewma_config *cf = config;
	const char *bad = NULL;

	if (!(cf->alpha >= 0 && cf->alpha <= 1))
		bad = "alpha";
	else if (!(cf->k >= 0))
		bad = "k";
	else if (cf->warmup < 0)
		bad = "warmup";
	else if (cf->top < 0 || cf->top > EWMA_TOP_MAX)
		bad = "top";
	if (bad != NULL) {
		snprintf(why, len, "option '%s' is out of range", bad);
		return -EINVAL;
	}
	return 0;
}

static int
ewma_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct ewma_config *cf = config;
	struct ewma *e;
	int r;

	if ((r = vitals_init_check(ctx, ewma_check, config)) != 0)
		return r;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -ENOMEM;
	e->ctx = ctx;
	e->cf = cf;
	*state = e;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.config_size = sizeof(struct ewma_config),
	.name = "ewma",
	.version = "0.1.0",
	.description = "EWMA anomaly detector on weighted sums and top labels",
	.options = ewma_options,
	.available = NULL,
	.init = ewma_init,
	.fini = ewma_fini,
	.epoch = ewma_epoch,
	.check = ewma_check,
};
