/* SPDX-License-Identifier: MIT */
/*
 * diff: a differential summary in the spirit of X-ray (Attariyan et al.).
 * For each vital it compares the newest epoch's rate with a baseline made
 * of the previous epochs of the queue and ranks the exes (or sites) of the
 * samples by their share of the difference.  A rise of at least the
 * vital's floor that one contributor makes most of, in `persist` of the
 * last 2*persist-1 epochs, is an incident (warn, doc/findings.md); the
 * epochs of a change are left out of later baselines.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "incident.h"
#include "labels.h"

#define DIFF_UNATTRIBUTED "(unattributed)"

struct diff_config {
	int64_t baseline; /* previous epochs forming the baseline */
	int64_t top; /* most contributors reported per vital */
	double min_share; /* smallest share of the difference reported */
	double min_change; /* smallest relative change of a vital reported */
	double min_rate; /* vitals slower than this on both sides are ignored */
	double min_info; /* least change explained, a fraction of the floor */
	char *by; /* "exe" or "site" */
	struct vitals_strlist vitals; /* vitals compared; empty = all */
	int64_t persist; /* a rise warns when seen in persist of 2*persist-1 */
	struct vitals_strlist floor; /* least change per second, VITAL=VALUE */
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
	{ .key = "min_info", .type = VITALS_OPT_DOUBLE,
	    .offset = DIFF_OFF(min_info), .def = "0.1",
	    .help = "explain a change only when it is at least this fraction "
		    "of the vital's floor per second (0: every change over "
		    "min_change; vitals diff uses 0)", .min = 0, .max = 1 },
	{ .key = "by", .type = VITALS_OPT_STRING, .offset = DIFF_OFF(by),
	    .def = "exe",
	    .help = "contributors are exes (text names their main site) or "
		    "sites (top kernel, else user frame; text names the exe)" },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = DIFF_OFF(vitals), .def = NULL,
	    .help = "vitals compared (default: all)" },
	{ .key = "persist", .type = VITALS_OPT_INT,
	    .offset = DIFF_OFF(persist), .def = "2",
	    .help = "a rise is a warning when one contributor makes most of "
	    "it in persist of the last 2*persist-1 epochs (else info); "
	    "vitals diff compares with 1", .min = 1, .max = INCIDENT_K_MAX },
	{ .key = "floor", .type = VITALS_OPT_STRLIST,
	    .offset = DIFF_OFF(floor), .def = NULL,
	    .help = "least change of a vital's rate per second worth a "
	    "warning, VITAL=VALUE (with K/M/G or ns/us/ms/s); vitals not "
	    "listed: " INCIDENT_FLOORS_HELP "; 0 for none" },
	{ .key = NULL }
};
/* clang-format on */

/*
 * One credit of an epoch's attribution: a sample's weight (or the weight
 * no sample was kept for) given to a contributor and its secondary key,
 * both ids of strings in the instance's key map.
 */
struct diff_item {
	uint32_t who, sub;
	double w;
};

/*
 * The attribution of one vital of one epoch, made once and replayed for
 * as long as the epoch stays among the baselines.  The epoch is known by
 * its address and contents (copied, as the epoch may be gone when the
 * entry is next compared).
 */
struct diff_attr {
	const struct vitals_epoch *e;
	const struct vitals_sample *samples;
	char *host, *vital;
	uint64_t start_ns, length_ns, wsum;
	uint32_t timescale_s, nsamples;
	uint32_t n; /* entries in items */
	struct diff_item *items; /* in sample order, unsampled rest last */
};

/* Epochs of a change remembered per vital, left out of baselines. */
#define DIFF_CHANGED 64

/* One vital at one timescale: the epochs whose rate was a change. */
struct diff_vital {
	struct vitals_keyed key; /* timescale and vital name */
	uint64_t changed[DIFF_CHANGED]; /* start_ns, a ring */
	uint32_t next; /* where the next goes */
};

/* Cached attributions beyond which the cache starts over. */
#define DIFF_CACHE_MAX 4096
/* Keys in the key map beyond which the cache starts over. */
#define DIFF_KEYS_MAX (1u << 20)

struct diff {
	struct vitals_ctx *ctx;
	const struct diff_config *cf;
	int by_site;
	uint64_t base_ns; /* nominal base epoch: runs of a rollup's samples */
	struct labels_map *keys; /* contributor and secondary key strings */
	struct diff_attr **attr; /* the cache: nattr entries, cap attr_cap */
	uint32_t nattr, attr_cap;
	/* Per key id: its index in the table being summed, valid when its
	 * stamp is the current tick. */
	uint32_t *local, *stamp, nslots, tick;
	struct incidents inc;
	uint32_t nvitals;
	struct diff_vital *vitals;
	const struct vitals_queue *q; /* the queue being looked at */
};

/* Weight per key of one vital on both sides of the comparison. */
struct diff_acc {
	double wnew; /* weight in the newest epoch */
	double wbase; /* weight summed over the baseline epochs */
};

/*
 * The contributors of one vital, in the order they first appear in the
 * newest epoch then the kept baseline epochs: key[i] is the key id of
 * contributor i, acc[i] its weights.  side[0] is the newest epoch's
 * attribution, side[1..nside) the kept baseline epochs'.
 */
struct diff_table {
	struct diff_acc *acc;
	uint32_t *key;
	uint32_t n, cap;
	double new_s; /* length of the newest epoch, seconds */
	double base_s; /* length of the baseline epochs with the vital */
	double wsum_new, wsum_base;
	const struct diff_attr *side[1025];
	uint32_t nside;
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

static int
diff_streq(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void
diff_attr_free(struct diff_attr *a)
{
	if (a == NULL)
		return;
	free(a->host);
	free(a->vital);
	free(a->items);
	free(a);
}

/* Drop every cached attribution and key. */
static void
diff_cache_clear(struct diff *d)
{
	uint32_t i;

	for (i = 0; i < d->nattr; i++)
		diff_attr_free(d->attr[i]);
	d->nattr = 0;
	labels_map_free(d->keys);
	d->keys = NULL;
}

/* Append a credit of w to (first, second) to a's items. */
static int
diff_item_add(struct diff *d, struct diff_attr *a, const char *first,
    const char *second, double w)
{
	struct diff_item *it = &a->items[a->n];
	int r;

	if ((r = labels_map_put(d->keys, 0, first, &it->who)) < 0 ||
	    (r = labels_map_put(d->keys, 0, second, &it->sub)) < 0)
		return r;
	it->w = w;
	a->n++;
	return 0;
}

/* Attribute one epoch's weight of the vital to its contributors. */
static int
diff_attribute(struct diff *d, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve, struct diff_attr *a)
{
	char site[LABELS_FRAME_LEN], name[LABELS_NAME_LEN];
	const struct vitals_sample *s;
	struct diff_item *items;
	double *w, total = 0;
	const char *exe;
	uint32_t j;
	int r = -ENOMEM;

	if ((w = calloc(ve->nsamples + 1, sizeof(*w))) == NULL ||
	    (a->items = calloc(ve->nsamples + 1, sizeof(*a->items))) == NULL ||
	    labels_weights(ve, labels_runs(e, d->base_ns), w, &total) != 0)
		goto out;
	r = 0;
	for (j = 0; j < ve->nsamples && r == 0; j++) {
		s = &ve->samples[j];
		if (!(w[j] > 0))
			continue;
		exe = labels_name(s, LABELS_BY_EXE, name, sizeof(name));
		labels_site(e, s, site, sizeof(site));
		r = diff_item_add(d, a, d->by_site ? site : exe,
		    d->by_site ? exe : site, w[j]);
	}
	/* Weight of slots no sample was kept for (beyond rounding). */
	if (r == 0 && (double)ve->wsum > total * (1 + 1e-9))
		r = diff_item_add(
		    d, a, DIFF_UNATTRIBUTED, "-", (double)ve->wsum - total);
	/* Room was made for every sample; the credited ones are kept. */
	if (r == 0 && a->n > 0 &&
	    (items = realloc(a->items, a->n * sizeof(*items))) != NULL)
		a->items = items;
out:
	free(w);
	return r;
}

/* Whether cached a is the attribution of ve in epoch e. */
static int
diff_attr_is(const struct diff_attr *a, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve)
{
	return a->e == e && a->start_ns == e->start_ns &&
	    a->samples == ve->samples && a->nsamples == ve->nsamples &&
	    a->wsum == ve->wsum && a->length_ns == e->length_ns &&
	    a->timescale_s == e->timescale_s &&
	    diff_streq(a->vital, ve->name) && diff_streq(a->host, e->host);
}

/* A new attribution of ve in e, or NULL if memory runs out. */
static struct diff_attr *
diff_attr_new(struct diff *d, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve)
{
	struct diff_attr *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	*a = (struct diff_attr){ .e = e,
		.samples = ve->samples,
		.start_ns = e->start_ns,
		.length_ns = e->length_ns,
		.wsum = ve->wsum,
		.timescale_s = e->timescale_s,
		.nsamples = ve->nsamples };
	if ((e->host != NULL && (a->host = strdup(e->host)) == NULL) ||
	    (ve->name != NULL && (a->vital = strdup(ve->name)) == NULL) ||
	    diff_attribute(d, e, ve, a) != 0) {
		diff_attr_free(a);
		return NULL;
	}
	return a;
}

/* The attribution of ve in e, from the cache or made and cached. */
static const struct diff_attr *
diff_attr_get(struct diff *d, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve)
{
	struct diff_attr *a, **v;
	uint32_t i, cap;

	for (i = d->nattr; i-- > 0;)
		if (diff_attr_is(d->attr[i], e, ve))
			return d->attr[i];
	if (d->nattr == d->attr_cap) {
		cap = d->attr_cap ? 2 * d->attr_cap : 64;
		if ((v = realloc(d->attr, cap * sizeof(*v))) == NULL)
			return NULL;
		d->attr = v;
		d->attr_cap = cap;
	}
	if (d->keys == NULL && (d->keys = labels_map_new()) == NULL)
		return NULL;
	if ((a = diff_attr_new(d, e, ve)) == NULL)
		return NULL;
	d->attr[d->nattr++] = a;
	return a;
}

/* Whether e is one of q->epochs[first..n). */
static int
diff_in_queue(
    const struct vitals_queue *q, uint32_t first, const struct vitals_epoch *e)
{
	uint32_t i;

	for (i = first; i < q->n; i++)
		if (q->epochs[i] == e)
			return 1;
	return 0;
}

/*
 * Items of the cached attributions: every key they hold is one of
 * 2 * that.  Once the key map holds more than DIFF_KEYS_SLACK over twice
 * that, it is rebuilt with the held keys alone, so that the keys of
 * epochs gone (under churn, a new exe or site every few samples) do not
 * pile up: the map stays within a few times what the cache uses.
 */
#define DIFF_KEYS_SLACK 4096

/* Make a new key map of the keys the cached attributions hold. */
static int
diff_keys_compact(struct diff *d)
{
	struct labels_map *m;
	struct diff_item *it;
	uint64_t items = 0;
	uint32_t i, j;

	for (i = 0; i < d->nattr; i++)
		items += d->attr[i]->n;
	if (d->keys == NULL ||
	    labels_map_size(d->keys) <= DIFF_KEYS_SLACK + 4 * items)
		return 0;
	if ((m = labels_map_new()) == NULL)
		return -ENOMEM;
	for (i = 0; i < d->nattr; i++)
		for (j = 0; j < d->attr[i]->n; j++) {
			it = &d->attr[i]->items[j];
			if (labels_map_put(m, 0,
				labels_map_key(d->keys, it->who),
				&it->who) < 0 ||
			    labels_map_put(m, 0,
				labels_map_key(d->keys, it->sub),
				&it->sub) < 0) {
				labels_map_free(m);
				return -ENOMEM;
			}
		}
	labels_map_free(d->keys);
	d->keys = m;
	/* Sized to the old map: made again at the next tally. */
	free(d->local);
	free(d->stamp);
	d->local = d->stamp = NULL;
	d->nslots = 0;
	return 0;
}

/*
 * Forget the attributions of the queue's host and timescale but those of
 * q->epochs[first..n) (the epochs a later call on it can look at: one
 * that left the queue, or was replaced by its compact copy, is never
 * asked for again), and all of them when the cache or its key map grew
 * too large (other hosts gone).  Then drop the keys no attribution holds.
 * An item whose remap fails (ENOMEM) leaves the cache cleared.
 */
static void
diff_cache_trim(struct diff *d, const struct vitals_queue *q, uint32_t first)
{
	const struct vitals_epoch *from = q->epochs[first];
	const struct diff_attr *a;
	uint32_t i, n = 0;

	if (d->nattr > DIFF_CACHE_MAX ||
	    (d->keys != NULL && labels_map_size(d->keys) > DIFF_KEYS_MAX)) {
		diff_cache_clear(d);
		return;
	}
	for (i = 0; i < d->nattr; i++) {
		a = d->attr[i];
		if (a->timescale_s == from->timescale_s &&
		    diff_streq(a->host, from->host) &&
		    !diff_in_queue(q, first, a->e))
			diff_attr_free(d->attr[i]);
		else
			d->attr[n++] = d->attr[i];
	}
	d->nattr = n;
	if (diff_keys_compact(d) != 0)
		diff_cache_clear(d);
}

/* Make room for every key id in local/stamp; start a new tick. */
static int
diff_tick(struct diff *d)
{
	uint32_t n = labels_map_size(d->keys), *l, *s;

	if (n > d->nslots) {
		if ((l = realloc(d->local, n * sizeof(*l))) == NULL)
			return -ENOMEM;
		d->local = l;
		if ((s = realloc(d->stamp, n * sizeof(*s))) == NULL)
			return -ENOMEM;
		memset(s + d->nslots, 0, (n - d->nslots) * sizeof(*s));
		d->stamp = s;
		d->nslots = n;
	}
	if (++d->tick == 0) {
		memset(d->stamp, 0, d->nslots * sizeof(*d->stamp));
		d->tick = 1;
	}
	return 0;
}

/* Index of key id k in the tally of this tick, added to acc if new. */
static int
diff_slot(struct diff *d, uint32_t k, struct diff_acc **acc, uint32_t **key,
    uint32_t *n, uint32_t *cap)
{
	struct diff_acc *a;
	uint32_t *kv, c;

	if (d->stamp[k] == d->tick)
		return 0;
	if (*n == *cap) {
		c = *cap ? 2 * *cap : 64;
		if ((a = realloc(*acc, c * sizeof(*a))) == NULL)
			return -ENOMEM;
		*acc = a;
		if ((kv = realloc(*key, c * sizeof(*kv))) == NULL)
			return -ENOMEM;
		*key = kv;
		*cap = c;
	}
	(*acc)[*n] = (struct diff_acc){ 0, 0 };
	(*key)[*n] = k;
	d->stamp[k] = d->tick;
	d->local[k] = (*n)++;
	return 0;
}

/*
 * Sum the contributors' weights over the sides, in the order the samples
 * were credited (so the sums are the same to the last bit whatever was
 * cached).
 */
static int
diff_tally(struct diff *d, struct diff_table *t)
{
	const struct diff_item *it;
	struct diff_acc *a;
	uint32_t k, j;
	int r;

	if ((r = diff_tick(d)) != 0)
		return r;
	for (k = 0; k < t->nside; k++)
		for (j = 0; j < t->side[k]->n; j++) {
			it = &t->side[k]->items[j];
			if ((r = diff_slot(d, it->who, &t->acc, &t->key, &t->n,
				 &t->cap)) != 0)
				return r;
			a = &t->acc[d->local[it->who]];
			if (k > 0)
				a->wbase += it->w;
			else
				a->wnew += it->w;
		}
	return 0;
}

static double
diff_rate(double w, double s)
{
	return s > 0 ? w / s : 0;
}

/* Change in rate of weights a: new minus baseline, per second. */
static double
diff_delta(const struct diff_table *t, const struct diff_acc *a)
{
	return diff_rate(a->wnew, t->new_s) - diff_rate(a->wbase, t->base_s);
}

static int
diff_rank_cmp(const void *a, const void *b)
{
	const struct diff_rank *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The secondary key (borrowed from the key map) of the contributor with
 * key id who that has the largest share, the first to appear on a tie;
 * NULL if none, or -ENOMEM.
 */
static int
diff_main_sub(struct diff *d, const struct diff_table *t, uint32_t who,
    double total, const char **out)
{
	struct diff_acc *acc = NULL;
	const struct diff_item *it;
	uint32_t *key = NULL, n = 0, cap = 0, k, j, best = LABELS_NONE;
	int r;

	if ((r = diff_tick(d)) != 0)
		return r;
	for (k = 0; k < t->nside && r == 0; k++)
		for (j = 0; j < t->side[k]->n && r == 0; j++) {
			it = &t->side[k]->items[j];
			if (it->who != who ||
			    (r = diff_slot(d, it->sub, &acc, &key, &n, &cap)) !=
				0)
				continue;
			if (k > 0)
				acc[d->local[it->sub]].wbase += it->w;
			else
				acc[d->local[it->sub]].wnew += it->w;
		}
	for (j = 0; j < n && r == 0; j++)
		if (best == LABELS_NONE ||
		    diff_delta(t, &acc[j]) / total >
			diff_delta(t, &acc[best]) / total)
			best = j;
	if (r == 0)
		*out = best != LABELS_NONE ? labels_map_key(d->keys, key[best])
					   : NULL;
	free(acc);
	free(key);
	return r;
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

/* How one contributor is reported: severity, range start, what is added. */
struct diff_say {
	uint32_t severity;
	uint64_t start_ns; /* 0: the newest epoch's */
	char tail[160]; /* appended to the sentence */
};

static int
diff_emit(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, const struct diff_table *t,
    const struct diff_rank *rk, double total, const struct diff_say *say)
{
	const char *who = labels_map_key(d->keys, t->key[rk->id]), *sub;
	char change[160], extra[512] = "", text[1200];
	int r;

	if ((r = diff_main_sub(d, t, t->key[rk->id], total, &sub)) != 0)
		return r;
	if (sub != NULL && strcmp(who, DIFF_UNATTRIBUTED) != 0)
		snprintf(extra, sizeof(extra), " (%s %s)",
		    d->by_site ? "exe" : "site", sub);
	diff_change_text(
	    t, ve->unit ? ve->unit : "weight", change, sizeof(change));
	snprintf(text, sizeof(text),
	    "%s %s: %s accounts for %.0f%% of the %s%s%s", ve->name, change,
	    who, 100 * rk->share, total > 0 ? "increase" : "decrease", extra,
	    say->tail);
	return vitals_queue_emit(d->ctx, q,
	    &(struct vitals_finding){ .start_ns = say->start_ns != 0
		    ? say->start_ns
		    : vitals_queue_newest(q)->start_ns,
		.severity = say->severity,
		.score = rk->share,
		.value = diff_rate(t->acc[rk->id].wnew, t->new_s),
		.expected = diff_rate(t->acc[rk->id].wbase, t->base_s),
		.vital = ve->name,
		.label = who,
		.text = text });
}

/*
 * How the heaviest contributor's step is said: NULL for nothing at all (an
 * incident going on, or a change back while one is open), else at which
 * severity, from when and with what added.
 */
static int
diff_step(struct diff *d, const struct vitals_queue *q, const char *vital,
    const char *who, int held, double rise, struct diff_say *say)
{
	struct incident_out o;
	char key[512], prefix[80];
	uint32_t k = (uint32_t)d->cf->persist;

	memset(say, 0, sizeof(*say));
	say->severity = VITALS_SEV_INFO;
	snprintf(key, sizeof(key), "%.63s\t%.400s", vital, who);
	if (incident_step(&d->inc, q, key, vital, who, held, rise,
		incident_cap(vital, VITALS_SEV_WARN), k, &o) != 0)
		return -ENOMEM;
	snprintf(prefix, sizeof(prefix), "%.63s\t", vital);
	switch (o.what) {
	case INCIDENT_START:
	case INCIDENT_UPDATE:
		say->severity = o.severity;
		say->start_ns = o.start_ns;
		/* FALLTHROUGH */
	case INCIDENT_NOTE:
		incident_tail(&d->inc, &o, k > 1, say->tail, sizeof(say->tail));
		return 1;
	case INCIDENT_ON:
		return 0;
	}
	return incident_recent(&d->inc, q->timescale_s, prefix) ? 0 : 1;
}

/*
 * Rank the contributors by share of the total change and report the top.
 * A rise of at least the floor that the heaviest makes most of, one
 * process (or two), is stepped as its incident; the others explain, at
 * info.
 */
static int
diff_report(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, struct diff_table *t, double floor)
{
	double total = diff_rate(t->wsum_new, t->new_s) -
	    diff_rate(t->wsum_base, t->base_s);
	uint32_t id, n = t->n;
	struct diff_rank *rk;
	struct diff_say say, info = { VITALS_SEV_INFO, 0, "" };
	const char *who;
	int rc = 0, r = 1, held;

	if ((rk = calloc(n + 1, sizeof(*rk))) == NULL)
		return -ENOMEM;
	for (id = 0; id < n; id++)
		rk[id] = (struct diff_rank){ id,
			diff_delta(t, &t->acc[id]) / total };
	qsort(rk, n, sizeof(*rk), diff_rank_cmp);
	if (n > 0) {
		who = labels_map_key(d->keys, t->key[rk[0].id]);
		held = total > 0 && total >= floor && rk[0].share >= 0.5 &&
		    strcmp(who, DIFF_UNATTRIBUTED) != 0 &&
		    (d->by_site ||
			(incident_process(who) &&
			    !labels_family(ve, LABELS_BY_EXE, who)));
		if ((r = diff_step(d, q, ve->name, who, held, total, &say)) < 0)
			rc = r;
	}
	for (id = 0; r > 0 && id < n && id < (uint32_t)d->cf->top; id++)
		if (rk[id].share >= d->cf->min_share && rk[id].share > 0 &&
		    diff_emit(d, q, ve, t, &rk[id], total,
			id == 0 ? &say : &info) != 0)
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

/* Whether the epoch starting at start_ns was a change of vital v. */
static int
diff_was_changed(const struct diff_vital *v, uint64_t start_ns)
{
	uint32_t i;

	for (i = 0; v != NULL && i < DIFF_CHANGED; i++)
		if (v->changed[i] == start_ns && start_ns != 0)
			return 1;
	return 0;
}

/*
 * Which of the n baseline epochs from q->epochs[first] make the norm
 * (keep[j] = 1): those that were not a change of the vital themselves (an
 * incident, a burst now over), and whose rate of the vital is within
 * min_change of the median rate of those, so that the return to normal is
 * not reported as a change for as long as the burst stays in the
 * baseline.  When that leaves none, every epoch with the vital is kept.
 */
static void
diff_norm(const struct diff *d, const struct vitals_queue *q, uint32_t first,
    uint32_t n, const char *name, const struct diff_vital *v, int *keep)
{
	double rate[1024], sorted[1024], med;
	uint32_t i, m = 0, kept = 0;

	for (i = 0; i < n; i++)
		if ((rate[i] = diff_epoch_rate(q->epochs[first + i], name)) >=
			0 &&
		    !diff_was_changed(v, q->epochs[first + i]->start_ns))
			sorted[m++] = rate[i];
	if (m == 0)
		return;
	qsort(sorted, m, sizeof(*sorted), diff_double_cmp);
	med = m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
	for (i = 0; i < n; i++) {
		keep[i] = rate[i] >= 0 &&
		    !diff_was_changed(v, q->epochs[first + i]->start_ns) &&
		    fabs(rate[i] - med) <= d->cf->min_change * med;
		kept += (uint32_t)keep[i];
	}
	for (i = 0; i < n && kept == 0; i++)
		keep[i] = rate[i] >= 0;
}

/*
 * The attributions of the sides: the newest epoch's and the kept baseline
 * epochs', oldest first, each made once while its epoch stays around.
 */
static int
diff_sides(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve, uint32_t first, const int *keep,
    struct diff_table *t)
{
	const struct vitals_epoch *e;
	uint32_t i;

	if ((t->side[0] = diff_attr_get(d, vitals_queue_newest(q), ve)) == NULL)
		return -ENOMEM;
	t->nside = 1;
	for (i = first; i < q->n - 1; i++) {
		if (!keep[i - first])
			continue;
		e = q->epochs[i];
		t->side[t->nside] =
		    diff_attr_get(d, e, vitals_epoch_vital(e, ve->name));
		if (t->side[t->nside++] == NULL)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Compare one vital of the newest epoch with the baseline epochs; the
 * samples are attributed only when the vital changed enough.  An epoch
 * whose rate changed by at least the floor is remembered as a change.
 */
static int
diff_vital(struct diff *d, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct diff_table t = { .new_s = diff_seconds(ep) };
	struct diff_vital *v = vitals_keyed_get(&d->vitals, &d->nvitals,
	    sizeof(*d->vitals), q->timescale_s, ve->name);
	double floor = incident_floor(&d->cf->floor, ve->name), change;
	uint32_t nb = q->n - 1, i, first;
	int keep[1024] = { 0 }, r;

	if (v == NULL)
		return -ENOMEM;
	if (nb > (uint32_t)d->cf->baseline)
		nb = (uint32_t)d->cf->baseline;
	if (t.new_s <= 0)
		return 0;
	first = q->n - 1 - nb;
	diff_norm(d, q, first, nb, ve->name, v, keep);
	t.wsum_new = (double)ve->wsum;
	for (i = first; i < q->n - 1; i++) {
		if (!keep[i - first])
			continue;
		t.base_s += diff_seconds(q->epochs[i]);
		t.wsum_base +=
		    (double)vitals_epoch_vital(q->epochs[i], ve->name)->wsum;
	}
	if (!diff_changed(d, &t))
		return 0;
	change = fabs(
	    diff_rate(t.wsum_new, t.new_s) - diff_rate(t.wsum_base, t.base_s));
	if (change >= floor) {
		v->changed[v->next] = ep->start_ns;
		v->next = (v->next + 1) % DIFF_CHANGED;
	}
	/* A quiet machine's rates move by half and more all the time. */
	if (change < d->cf->min_info * floor)
		return 0;
	if ((r = diff_sides(d, q, ve, first, keep, &t)) == 0 &&
	    (r = diff_tally(d, &t)) == 0)
		r = diff_report(d, q, ve, &t, floor);
	free(t.acc);
	free(t.key);
	return r;
}

/* An incident that is over: its end, at info. */
static int
diff_end(void *arg, const struct incident *in, const struct incident_out *o)
{
	struct diff *d = arg;
	char text[768], tm[16];

	snprintf(text, sizeof(text),
	    "%s: the rise %s made, an incident since %s, is over after %u "
	    "epochs",
	    in->vital ? in->vital : "", in->label ? in->label : "",
	    incident_time(o->start_ns, tm, sizeof(tm)), o->epochs);
	return incident_end_emit(d->ctx, d->q, in, o, text);
}

/*
 * The newest epoch against the ones before it.  A vital absent from the
 * newest epoch was not collected there and is not compared.
 */
static int
diff_epoch(void *state, const struct vitals_queue *q)
{
	struct diff *d = state;
	const struct vitals_vital_epoch *ve = NULL;
	uint32_t nb;
	int rc = 0;

	d->q = q;
	if (q->n < 2)
		return incident_sweep(&d->inc, q, diff_end, d);
	while ((ve = vitals_queue_next_vital(q, &d->cf->vitals, ve)) != NULL)
		if (diff_vital(d, q, ve) != 0)
			rc = -ENOMEM;
	nb = q->n - 1 < (uint32_t)d->cf->baseline ? q->n - 1
						  : (uint32_t)d->cf->baseline;
	/* The next epoch's baseline starts after this one's. */
	diff_cache_trim(d, q, q->n - 1 - nb);
	if (incident_sweep(&d->inc, q, diff_end, d) != 0)
		rc = -ENOMEM;
	return rc;
}

static void
diff_fini(void *state)
{
	struct diff *d = state;

	if (d == NULL)
		return;
	diff_cache_clear(d);
	free(d->attr);
	free(d->local);
	free(d->stamp);
	vitals_keyed_free(d->vitals, d->nvitals, sizeof(*d->vitals));
	incident_free(&d->inc);
	free(d);
}

/* The table's bounds (a test or embedder may skip them), `by`, floors. */
static int
diff_check(const void *config, char *why, size_t len)
{
	const struct diff_config *cf = config;

	if (vitals_options_check(diff_options, config, why, len) != 0)
		return -EINVAL;
	if (cf->by == NULL ||
	    (strcmp(cf->by, "exe") != 0 && strcmp(cf->by, "site") != 0)) {
		snprintf(why, len, "option 'by' must be exe or site, not '%s'",
		    cf->by != NULL ? cf->by : "");
		return -EINVAL;
	}
	return incident_floors_check(&cf->floor, why, len);
}

static int
diff_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct diff_config *cf = config;
	struct diff *d;
	int r;

	d = vitals_init_state(ctx, diff_check, config, sizeof(*d), &r);
	if (d == NULL)
		return r;
	d->ctx = ctx;
	d->cf = cf;
	d->by_site = strcmp(cf->by, "site") == 0;
	d->inc.k = (uint32_t)cf->persist;
	d->base_ns = vitals_settings(ctx)->epoch_ns;
	*state = d;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct diff_config),
	.name = "diff",
	.version = "0.1.0",
	.description = "differential summary: which exes or sites account "
		       "for a vital's change against the previous epochs",
	.options = diff_options,
	.init = diff_init,
	.fini = diff_fini,
	.epoch = diff_epoch,
	.check = diff_check,
};
