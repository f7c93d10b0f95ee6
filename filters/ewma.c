/* SPDX-License-Identifier: MIT */
/*
 * ewma: the Chopstix EWMA anomaly detector.  Per timescale and per vital it
 * keeps an exponentially weighted mean and variance of the epoch's weighted
 * sum and of its largest HCA slots.  A value above mean + k*sd (once
 * `warmup` values have been seen), by at least the vital's floor, is a rise
 * charged to the exe that made most of it; one exe's rise in `persist` of
 * the last 2*persist-1 epochs is an incident (warn, doc/findings.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "incident.h"
#include "labels.h"

#define EWMA_TOP_MAX 16 /* most slots checked per vital and epoch */
#define EWMA_LABELS 64 /* slots tracked per vital; least recent evicted */
#define EWMA_WHO 160 /* "exe (comm) slot N" of a slot */
#define EWMA_NAME 128 /* the exe (or comm) a slot's samples name */
#define EWMA_TEXT 768
/* Processes an exe's rise may come from and still be one culprit's. */
#define EWMA_PIDS 2

struct ewma_config {
	double alpha; /* weight of the newest value */
	double k; /* band half-width in sd */
	int64_t warmup; /* values learnt before testing */
	int64_t top; /* largest slots checked per epoch */
	struct vitals_strlist vitals; /* vitals checked; empty = all */
	int64_t persist; /* a rise warns when seen in persist of 2*persist-1 */
	struct vitals_strlist floor; /* least rise per second, VITAL=VALUE */
	double min_share; /* least share of the vital the rising exe holds */
};

#define EWMA_OFF(m) offsetof(struct ewma_config, m)

/* clang-format off */
static const struct vitals_option ewma_options[] = {
	{ .key = "alpha", .type = VITALS_OPT_DOUBLE, .offset = EWMA_OFF(alpha),
	    .def = "0.3", .help = "EWMA weight of the newest epoch",
	    .min = 0, .max = 1 },
	{ .key = "k", .type = VITALS_OPT_DOUBLE, .offset = EWMA_OFF(k),
	    .def = "3", .help = "values beyond mean +- k sd are outliers",
	    .min = 0, .max = 1000 },
	{ .key = "warmup", .type = VITALS_OPT_INT, .offset = EWMA_OFF(warmup),
	    .def = "5", .help = "epochs learnt before reporting; also the "
	    "epochs an outlier level lasts before it is learnt as the norm",
	    .min = 0, .max = 1e9 },
	{ .key = "top", .type = VITALS_OPT_INT, .offset = EWMA_OFF(top),
	    .def = "3", .help = "largest HCA slots tracked per epoch",
	    .min = 0, .max = EWMA_TOP_MAX },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = EWMA_OFF(vitals), .def = NULL,
	    .help = "vitals to check (default: all)" },
	{ .key = "persist", .type = VITALS_OPT_INT,
	    .offset = EWMA_OFF(persist), .def = "2",
	    .help = "a rise is a warning when one exe makes it in persist "
	    "of the last 2*persist-1 epochs (else info)",
	    .min = 1, .max = INCIDENT_K_MAX },
	{ .key = "floor", .type = VITALS_OPT_STRLIST,
	    .offset = EWMA_OFF(floor), .def = NULL,
	    .help = "least rise per second worth a warning, VITAL=VALUE "
	    "(with K/M/G or ns/us/ms/s); vitals not listed: "
	    INCIDENT_FLOORS_HELP "; 0 for none" },
	{ .key = "min_share", .type = VITALS_OPT_DOUBLE,
	    .offset = EWMA_OFF(min_share), .def = "0.25",
	    .help = "a rise is said only when the exe that made it holds at "
	    "least this share of the vital in the slots that rose (a victim "
	    "among many is not the culprit)", .min = 0, .max = 1 },
	{ .key = NULL }
};
/* clang-format on */

struct ewma_stat {
	double mean;
	double var;
	uint64_t n; /* values learnt */
	uint64_t out; /* outliers in a row not learnt */
};

struct ewma_label {
	uint32_t slot;
	uint64_t seen; /* epoch it was last among the top; 0 = free */
	struct ewma_stat st;
	char who[EWMA_WHO]; /* its text when last among the top */
	char exe[EWMA_NAME]; /* its exe (or comm) when last named */
};

/* The exe that moved a weighted sum most, named in its finding. */
struct ewma_mover {
	const char
	    *who; /* "exe (comm) slot N" of its largest slot; NULL: none */
	const char *exe; /* its exe; NULL when no exe made most of the change */
	double now, was; /* that slot's value and its EWMA (0 if untracked) */
	uint32_t slot; /* that slot */
};

/* One vital at one timescale. */
struct ewma_vital {
	struct vitals_keyed key; /* timescale and vital name */
	uint32_t hca_size; /* slots mean nothing across sizes */
	uint64_t epochs; /* epochs seen, the clock of labels[].seen */
	double low_top; /* smallest value in the top, last epoch; 0: not full */
	struct ewma_stat total;
	struct ewma_label labels[EWMA_LABELS];
};

/* A rise seen at this epoch, by the exe (key) it is charged to. */
struct ewma_rise {
	char exe[EWMA_NAME]; /* "" for a rise no exe made most of */
	double rise; /* above the EWMA, in the vital's unit per epoch */
	double weight; /* its weight in the slots that rose */
	double mover; /* the weight of the mover's slot, for the sum's rise */
	double total; /* the vital's weighted sum */
	uint32_t pid[EWMA_PIDS], npids; /* processes sampled in those slots */
	double score, value, expected; /* of the finding that says it */
	char text[EWMA_TEXT];
};

/* One vital of one epoch being looked at, and the rises found in it. */
struct ewma_pass {
	struct ewma *e;
	const struct vitals_queue *q;
	struct ewma_vital *v;
	const struct vitals_vital_epoch *ve;
	double scale; /* to the nominal epoch length */
	double floor; /* the least rise per epoch worth a warning */
	struct ewma_rise r[EWMA_TOP_MAX + 1];
	uint32_t nr;
};

struct ewma {
	struct vitals_ctx *ctx;
	const struct ewma_config *cf;
	const struct vitals_queue *q; /* being looked at, for ewma_end */
	uint32_t nvitals;
	struct ewma_vital *vitals;
	struct incidents inc;
};

/* Incremental EWMA of mean and variance (Finch 2009). */
static void
ewma_learn(const struct ewma *e, struct ewma_stat *s, double x)
{
	double diff = x - s->mean, incr = e->cf->alpha * diff;

	s->out = 0;
	if (s->n++ == 0) {
		s->mean = x;
		return;
	}
	s->mean += incr;
	s->var = (1 - e->cf->alpha) * (s->var + diff * incr);
}

/*
 * Learn x unless it is an outlier: the baseline of an anomaly is what
 * came before it, so that it stays an anomaly while it lasts and its end
 * is no new one.  A level that stays out of the band long enough
 * (incident_adapt) is learnt: it has become the norm.
 */
static void
ewma_offer(const struct ewma *e, struct ewma_stat *s, double x, int outlier)
{
	uint64_t adapt = incident_adapt(&e->inc, e->cf->warmup);

	if (outlier && s->n > 0 && ++s->out < adapt)
		return;
	ewma_learn(e, s, x);
}

/* The sd a value is measured in: floored at 5% of the mean and at 1. */
static double
ewma_sd(const struct ewma_stat *s)
{
	return fmax(fmax(sqrt(s->var), 0.05 * fabs(s->mean)), 1.0);
}

/* Whether s is warm and x is out of its band: the score, else 0. */
static double
ewma_score(const struct ewma *e, const struct ewma_stat *s, double x)
{
	if (s->n == 0 || s->n < (uint64_t)e->cf->warmup)
		return 0;
	return fabs(x - s->mean) / ewma_sd(s);
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

static int
ewma_in_top(const uint32_t *top, uint32_t ntop, uint32_t slot)
{
	uint32_t i;

	for (i = 0; i < ntop; i++)
		if (top[i] == slot)
			return 1;
	return 0;
}

/* One slot's move, for the mover. */
struct ewma_move {
	char who[EWMA_WHO], exe[EWMA_NAME];
	double now, was, d;
	uint32_t slot;
};

/* The slots the mover is chosen among: the top now and the tracked. */
static uint32_t
ewma_moves(struct ewma_vital *v, const struct vitals_vital_epoch *ve,
    const uint32_t *top, uint32_t ntop, double scale, double delta,
    struct ewma_move *mv)
{
	struct ewma_label *l;
	uint32_t i, n = 0, slot;

	for (i = 0; i < ntop + EWMA_LABELS; i++) {
		l = i < ntop ? ewma_tracked(v, top[i]) : &v->labels[i - ntop];
		if (i >= ntop &&
		    (l->seen == 0 || l->slot >= ve->hca_size ||
			ewma_in_top(top, ntop, l->slot)))
			continue;
		slot = i < ntop ? top[i] : l->slot;
		mv[n].slot = slot;
		mv[n].now = scale * (double)ve->hca[slot];
		mv[n].was = l != NULL ? l->st.mean : 0;
		mv[n].d =
		    delta > 0 ? mv[n].now - mv[n].was : mv[n].was - mv[n].now;
		if (i < ntop || l->who[0] == '\0')
			labels_slot_name(ve, slot, mv[n].who, sizeof(mv[n].who),
			    mv[n].exe, sizeof(mv[n].exe));
		else {
			snprintf(mv[n].who, sizeof(mv[n].who), "%s", l->who);
			snprintf(mv[n].exe, sizeof(mv[n].exe), "%s", l->exe);
		}
		n++;
	}
	return n;
}

/*
 * The slot that moved the weighted sum most in the direction it moved (by
 * `delta` from its EWMA): among the slots in the top now (an untracked
 * one counted from 0) and the tracked ones (one that left the top named
 * as it was last seen).  Named only when it made at least half of the
 * change, with its exe: a change spread over many sites (a build's many
 * processes and functions) has no mover.
 */
static void
ewma_find_mover(struct ewma_vital *v, const struct vitals_vital_epoch *ve,
    const uint32_t *top, uint32_t ntop, double scale, double delta,
    struct ewma_move *mv, struct ewma_mover *out)
{
	uint32_t n = ewma_moves(v, ve, top, ntop, scale, delta, mv), i;
	double best = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (mv[i].d <= best || mv[i].d < 0.5 * fabs(delta))
			continue;
		best = mv[i].d;
		out->who = mv[i].who;
		/* A slot no sample names stands for itself, as in ewma_slots. */
		out->exe = mv[i].exe[0] != '\0' ? mv[i].exe : mv[i].who;
		out->now = mv[i].now;
		out->was = mv[i].was;
		out->slot = mv[i].slot;
	}
}

/*
 * Mark the n largest non-zero slots as seen now (top[0..ntop)), tracking
 * new ones, and note how each is named.  A slot new to the top was at most
 * the smallest of the last epoch's top: once the vital is warm it starts
 * from that, as if learnt, so that a slot rising from nothing is a rise.
 */
static void
ewma_mark_top(const struct ewma *e, struct ewma_vital *v,
    const struct vitals_vital_epoch *ve, const uint32_t *top, uint32_t ntop,
    uint64_t now)
{
	struct ewma_label *l, *lru;
	char who[EWMA_WHO], exe[EWMA_NAME];
	uint32_t i;

	for (i = 0; i < ntop; i++) {
		for (lru = l = v->labels; l < v->labels + EWMA_LABELS; l++) {
			if (l->seen != 0 && l->slot == top[i])
				break;
			if (l->seen < lru->seen)
				lru = l;
		}
		if (l == v->labels + EWMA_LABELS) {
			*(l = lru) = (struct ewma_label){ .slot = top[i] };
			if (v->total.n >= (uint64_t)e->cf->warmup &&
			    v->total.n > 0)
				l->st = (struct ewma_stat){ .mean = v->low_top,
					.n = (uint64_t)e->cf->warmup };
		}
		l->seen = now;
		labels_slot_name(
		    ve, top[i], who, sizeof(who), exe, sizeof(exe));
		/* Keep the exe it was last seen with when no sample names it. */
		if (l->who[0] == '\0' || strncmp(who, "slot ", 5) != 0) {
			snprintf(l->who, sizeof(l->who), "%s", who);
			snprintf(l->exe, sizeof(l->exe), "%s", exe);
		}
	}
}

/*
 * Note the processes of r's exe sampled in slot as r's, counting at most
 * one past EWMA_PIDS: more are a family of processes (a build's, a
 * script's).  Other exes' labels sharing the slot are not r's processes.
 */
static void
ewma_pids(
    const struct vitals_vital_epoch *ve, uint32_t slot, struct ewma_rise *r)
{
	const struct vitals_sample *s;
	uint32_t i, j;

	for (i = 0; i < ve->nsamples && r->npids <= EWMA_PIDS; i++) {
		s = &ve->samples[i];
		if (s->slot != slot ||
		    (r->exe[0] != '\0' &&
			strcmp(labels_sample_exe(s), r->exe) != 0))
			continue;
		for (j = 0;
		     j < r->npids && j < EWMA_PIDS && r->pid[j] != s->pid; j++)
			;
		if (j == r->npids && j < EWMA_PIDS)
			r->pid[r->npids++] = s->pid;
		else if (j == EWMA_PIDS)
			r->npids = EWMA_PIDS + 1;
	}
}

/* The rise charged to exe ("" for none) this epoch, added if new. */
static struct ewma_rise *
ewma_rise_get(struct ewma_rise *r, uint32_t *n, uint32_t max, const char *exe)
{
	uint32_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(r[i].exe, exe) == 0)
			return &r[i];
	if (*n == max)
		return NULL;
	memset(&r[*n], 0, sizeof(r[*n]));
	snprintf(r[*n].exe, sizeof(r[*n].exe), "%s", exe);
	return &r[(*n)++];
}

/*
 * "cpu weighted sum 812 is 6.2 sd above its EWMA 120 (alpha 0.3, k 3)";
 * from an EWMA of 0 a count of sds says nothing (the sd is floored at 1):
 * "socket weighted sum 2999 rose from an EWMA of 0 (alpha 0.3, k 3)".
 */
static void
ewma_text(const struct ewma *e, const char *vital, const char *who, double x,
    double score, double mean, char *buf, size_t len)
{
	if (fabs(mean) < 0.5 && x > mean) {
		snprintf(buf, len,
		    "%s %s%s%.0f rose from an EWMA of 0 (alpha %g, k %g)",
		    vital, who ? who : "weighted sum", who ? " count " : " ", x,
		    e->cf->alpha, e->cf->k);
		return;
	}
	snprintf(buf, len,
	    "%s %s%s%.0f is %.1f sd %s its EWMA %.0f (alpha %g, k %g)", vital,
	    who ? who : "weighted sum", who ? " count " : " ", x, score,
	    x > mean ? "above" : "below", mean, e->cf->alpha, e->cf->k);
}

/* A finding of the newest epoch (or of [start_ns, its end]). */
static int
ewma_emit(struct ewma *e, const struct vitals_queue *q, const char *vital,
    const char *label, uint32_t sev, uint64_t start_ns, double score,
    double value, double expected, const char *text)
{
	struct vitals_finding f = { .severity = sev,
		.score = score,
		.value = value,
		.expected = expected,
		.vital = vital,
		.label = label,
		.text = text };

	f.start_ns =
	    start_ns != 0 ? start_ns : vitals_queue_newest(q)->start_ns;
	return vitals_queue_emit(e->ctx, q, &f);
}

/* What is said of a rise, by what its incident step decided. */
static int
ewma_report(struct ewma *e, const struct vitals_queue *q,
    const struct ewma_vital *v, const struct ewma_rise *r,
    const struct incident_out *o)
{
	char text[EWMA_TEXT + 256], tail[160];
	const char *label = r->exe[0] != '\0' ? r->exe : NULL;
	struct incident_out said = *o;

	if (o->what == INCIDENT_QUIET || o->what == INCIDENT_ON)
		return 0;
	/* An end stepped here (a rise below the floor) is said as going on. */
	if (said.what == INCIDENT_END)
		said.what = INCIDENT_UPDATE;
	if (o->what == INCIDENT_START && o->severity <= VITALS_SEV_INFO)
		snprintf(text, sizeof(text), "%s; %s", r->text,
		    label == NULL ? "spread over many sites, no exe made most "
				    "of it"
			: strncmp(label, "slot ", 5) == 0
			? "no sample of the epoch names the process that made it"
			: !incident_process(label)
			? "a kernel thread's, working for others"
			: r->npids > EWMA_PIDS
			? "a family of processes made it (a build, a script), "
			  "no one process"
			: "its exe holds too little of the vital to be the "
			  "culprit");
	else
		snprintf(text, sizeof(text), "%s%s", r->text,
		    incident_tail(&e->inc, &said, 1, tail, sizeof(tail)));
	return ewma_emit(e, q, v->key.name, label, o->severity,
	    o->what == INCIDENT_NOTE ? 0 : o->start_ns, r->score, r->value,
	    r->expected, text);
}

/* An incident that is over: its end, at info. */
static int
ewma_end(void *arg, const struct incident *in, const struct incident_out *o)
{
	struct ewma *e = arg;
	char text[512], t[16];

	snprintf(text, sizeof(text),
	    "%s%s%s: back within its band, the incident since %s is over "
	    "after %u epochs (largest %s %.0f)",
	    in->vital ? in->vital : "", in->label ? " of " : "",
	    in->label ? in->label : "",
	    incident_time(o->start_ns, t, sizeof(t)), o->epochs,
	    strncmp(in->key, "-\t", 2) == 0 ? "fall" : "rise", o->peak);
	return incident_end_emit(e->ctx, e->q, in, o, text);
}

/*
 * A fall of the weighted sum, not the end of a rise: info, one incident
 * while it lasts (keyed "-\tVITAL", apart from the rises' "VITAL\t").
 */
static int
ewma_fall(struct ewma *e, const struct vitals_queue *q,
    const struct ewma_vital *v, double score, double x, double mean,
    const char *text)
{
	struct incident_out o;
	char key[80];

	snprintf(key, sizeof(key), "-\t%.63s", v->key.name);
	if (incident_step(&e->inc, q, key, v->key.name, NULL, 1, mean - x,
		VITALS_SEV_INFO, 1, &o) != 0)
		return -ENOMEM;
	if (o.what != INCIDENT_START)
		return 0;
	return ewma_emit(e, q, v->key.name, NULL, VITALS_SEV_INFO, o.start_ns,
	    score, x, mean, text);
}

/* The incident key of a rise: the vital and the exe it is charged to. */
static void
ewma_key(const char *vital, const char *exe, char *buf, size_t len)
{
	snprintf(buf, len, "%.63s\t%.127s", vital, exe);
}

/* Step the incidents of this epoch's rises and say what they decide. */
static int
ewma_rises(struct ewma_pass *p)
{
	struct ewma *e = p->e;
	struct ewma_rise *r;
	struct incident_out o;
	char key[EWMA_NAME + 64];
	uint32_t sev;
	int rc = 0;

	for (r = p->r; r < p->r + p->nr; r++) {
		ewma_key(p->v->key.name, r->exe, key, sizeof(key));
		/* A warning is one process's (or two: a restart) that holds
		 * min_share of the vital; a rise spread over many sites, of
		 * a small part, of a family of processes or of a kernel
		 * thread is info. */
		sev = incident_process(r->exe) &&
			r->weight >= e->cf->min_share * r->total &&
			r->npids <= EWMA_PIDS
		    ? incident_cap(p->v->key.name, VITALS_SEV_WARN)
		    : VITALS_SEV_INFO;
		if (incident_step(&e->inc, p->q, key, p->v->key.name,
			r->exe[0] != '\0' ? r->exe : NULL, r->rise >= p->floor,
			r->rise, sev,
			sev > VITALS_SEV_INFO ? (uint32_t)e->cf->persist : 1,
			&o) != 0 ||
		    ewma_report(e, p->q, p->v, r, &o) != 0)
			rc = -ENOMEM;
	}
	return rc;
}

/*
 * The weighted sum: a rise is charged to the exe of the slot that moved
 * it most (or to none), a fall is info unless the vital is in an
 * incident (then it is its end).  Learnt unless an outlier.
 */
static int
ewma_sum(struct ewma_pass *p, const uint32_t *top, uint32_t ntop)
{
	struct ewma_vital *v = p->v;
	struct ewma_move mv[EWMA_TOP_MAX + EWMA_LABELS];
	double x = p->scale * (double)p->ve->wsum, mean = v->total.mean;
	double sc = ewma_score(p->e, &v->total, x);
	char text[EWMA_TEXT], prefix[80];
	struct ewma_mover mover;
	struct ewma_rise *ri;
	int rc = 0;

	ewma_find_mover(v, p->ve, top, ntop, p->scale, x - mean, mv, &mover);
	ewma_offer(p->e, &v->total, x, sc > p->e->cf->k);
	if (sc <= p->e->cf->k)
		return 0;
	ewma_text(p->e, v->key.name, NULL, x, sc, mean, text, sizeof(text));
	if (mover.who != NULL)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		    "; most of the change in %s (count %.0f, EWMA %.0f)",
		    mover.who, mover.now, mover.was);
	snprintf(prefix, sizeof(prefix), "%.63s\t", v->key.name);
	if (x > mean &&
	    (ri = ewma_rise_get(p->r, &p->nr, EWMA_TOP_MAX + 1,
		 mover.exe ? mover.exe : "")) != NULL) {
		*ri = (struct ewma_rise){ .rise = x - mean,
			.mover = mover.now,
			.score = sc,
			.value = x,
			.expected = mean };
		snprintf(
		    ri->exe, sizeof(ri->exe), "%s", mover.exe ? mover.exe : "");
		snprintf(ri->text, sizeof(ri->text), "%s", text);
		if (mover.who != NULL)
			ewma_pids(p->ve, mover.slot, ri);
	} else if (x < mean && mean - x >= p->floor &&
	    !incident_recent(&p->e->inc, p->q->timescale_s, prefix))
		rc = ewma_fall(p->e, p->q, v, sc, x, mean, text);
	return rc;
}

/*
 * The tracked slots: each learns (unless an outlier); one in the top now
 * that rose is charged to its exe (a slot no sample names is its own
 * culprit), the exe's rising slots adding up.
 */
static void
ewma_slots(struct ewma_pass *p, uint64_t now)
{
	const struct vitals_vital_epoch *ve = p->ve;
	char who[EWMA_WHO], exe[EWMA_NAME];
	struct ewma_rise *ri;
	struct ewma_label *l;
	double x, sc;

	for (l = p->v->labels; l < p->v->labels + EWMA_LABELS; l++) {
		if (l->seen == 0 || ve->hca == NULL || l->slot >= ve->hca_size)
			continue;
		x = p->scale * (double)ve->hca[l->slot];
		sc = ewma_score(p->e, &l->st, x);
		if (l->seen == now && sc > p->e->cf->k && x > l->st.mean) {
			labels_slot_name(
			    ve, l->slot, who, sizeof(who), exe, sizeof(exe));
			if (exe[0] == '\0')
				snprintf(exe, sizeof(exe), "%.127s", who);
			ri = ewma_rise_get(p->r, &p->nr, EWMA_TOP_MAX + 1, exe);
			if (ri != NULL) {
				ri->weight +=
				    x * labels_slot_share(ve, l->slot, exe);
				ewma_pids(ve, l->slot, ri);
			}
			if (ri != NULL && x - l->st.mean > ri->rise) {
				ri->rise = x - l->st.mean;
				ri->score = sc;
				ri->value = x;
				ri->expected = l->st.mean;
				ewma_text(p->e, p->v->key.name, who, x, sc,
				    l->st.mean, ri->text, sizeof(ri->text));
			}
		}
		ewma_offer(p->e, &l->st, x, sc > p->e->cf->k);
	}
}

/*
 * Every tracked slot is tested and learns; the weighted sum too.  A rise
 * of at least the vital's floor is charged to the exe that made most of
 * it (or to none, when it is spread over many sites) and stepped as an
 * incident; a fall is info, unless the vital is in an incident (its end).
 */
static int
ewma_vital(struct ewma *e, const struct vitals_queue *q, struct ewma_vital *v,
    const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct ewma_pass p = { .e = e, .q = q, .v = v, .ve = ve };
	uint32_t top[EWMA_TOP_MAX], ntop, i;
	uint64_t now = ++v->epochs;
	int rc;

	/* Values are scaled to the nominal epoch length: the first epoch
	 * after a start and the last before a stop are shorter or longer
	 * than the rest, and must not look like a change in rate. */
	p.scale = labels_scale(ep, (uint64_t)ep->timescale_s * 1000000000u);
	p.floor = incident_floor(&e->cf->floor, v->key.name) *
	    (q->timescale_s > 0 ? q->timescale_s : 1);
	if (v->hca_size != ve->hca_size) {
		memset(v->labels, 0, sizeof(v->labels));
		v->hca_size = ve->hca_size;
	}
	ntop = labels_top_slots(ve, (uint32_t)e->cf->top, top);
	rc = ewma_sum(&p, top, ntop);
	ewma_mark_top(e, v, ve, top, ntop, now);
	ewma_slots(&p, now);
	v->low_top = ntop == (uint32_t)e->cf->top && ntop > 0
	    ? p.scale * (double)ve->hca[top[ntop - 1]]
	    : 0;
	for (i = 0; i < p.nr; i++) {
		p.r[i].total = p.scale * (double)ve->wsum;
		p.r[i].weight = fmax(p.r[i].weight, p.r[i].mover);
	}
	return ewma_rises(&p) != 0 ? -ENOMEM : rc;
}

/* Only the newest epoch of the queue is new; the state holds the past. */
static int
ewma_epoch(void *state, const struct vitals_queue *q)
{
	struct ewma *e = state;
	const struct vitals_vital_epoch *ve = NULL;
	struct ewma_vital *v;
	int rc = 0;

	e->q = q;
	while ((ve = vitals_queue_next_vital(q, &e->cf->vitals, ve)) != NULL) {
		v = vitals_keyed_get(&e->vitals, &e->nvitals,
		    sizeof(*e->vitals), q->timescale_s, ve->name);
		if (v == NULL || ewma_vital(e, q, v, ve) != 0)
			rc = -ENOMEM;
	}
	if (incident_sweep(&e->inc, q, ewma_end, e) != 0)
		rc = -ENOMEM;
	return rc;
}

static void
ewma_fini(void *state)
{
	struct ewma *e = state;

	if (e == NULL)
		return;
	vitals_keyed_free(e->vitals, e->nvitals, sizeof(*e->vitals));
	incident_free(&e->inc);
	free(e);
}

/* The table's bounds (a test or embedder may skip them), the floors. */
static int
ewma_check(const void *config, char *why, size_t len)
{
	const struct ewma_config *cf = config;

	if (vitals_options_check(ewma_options, config, why, len) != 0)
		return -EINVAL;
	return incident_floors_check(&cf->floor, why, len);
}

static int
ewma_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct ewma_config *cf = config;
	struct ewma *e;
	int r;

	e = vitals_init_state(ctx, ewma_check, config, sizeof(*e), &r);
	if (e == NULL)
		return r;
	e->ctx = ctx;
	e->cf = cf;
	e->inc.k = (uint32_t)cf->persist;
	*state = e;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct ewma_config),
	.name = "ewma",
	.version = "0.1.0",
	.description = "EWMA anomaly detector on weighted sums and top labels: "
		       "a rise one exe makes, lasting, is an incident",
	.options = ewma_options,
	.init = ewma_init,
	.fini = ewma_fini,
	.epoch = ewma_epoch,
	.check = ewma_check,
};
