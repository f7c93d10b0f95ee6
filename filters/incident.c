/* SPDX-License-Identifier: MIT */
/*
 * The severity policy every filter follows (incident.h, doc/findings.md):
 * persistence over k of 2k-1 epochs, one incident per condition from its
 * start to its end, and the least change of each vital worth a warning.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "incident.h"

/* Incidents kept beyond which quiet ones are forgotten first. */
#define INCIDENT_MAX 4096

/* Epochs of the window: 2k - 1. */
static uint32_t
incident_window(const struct incidents *s)
{
	uint32_t k = s->k < 1	    ? 1
	    : s->k > INCIDENT_K_MAX ? INCIDENT_K_MAX
				    : s->k;

	return 2 * k - 1;
}

static uint64_t
incident_mask(const struct incidents *s)
{
	return (UINT64_C(1) << incident_window(s)) - 1;
}

static unsigned
incident_count(uint64_t bits)
{
	unsigned n = 0;

	for (; bits != 0; bits &= bits - 1)
		n++;
	return n;
}

static void
incident_clear(struct incident *in)
{
	free(in->key);
	free(in->vital);
	free(in->label);
}

const struct incident *
incident_find(const struct incidents *s, uint32_t ts, const char *key)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].timescale_s == ts && strcmp(s->v[i].key, key) == 0)
			return &s->v[i];
	return NULL;
}

void
incident_started(
    struct incidents *s, uint32_t ts, const char *key, uint64_t start_ns)
{
	struct incident *in = (struct incident *)incident_find(s, ts, key);

	if (in != NULL && in->severity != 0 && start_ns < in->start_ns)
		in->start_ns = start_ns;
}

int
incident_recent(const struct incidents *s, uint32_t ts, const char *prefix)
{
	size_t len = strlen(prefix);
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].timescale_s == ts && s->v[i].severity != 0 &&
		    strncmp(s->v[i].key, prefix, len) == 0)
			return 1;
	return 0;
}

/* Forget quiet entries (nothing held in the window, no incident). */
static void
incident_compact(struct incidents *s)
{
	uint64_t mask = incident_mask(s);
	uint32_t i, n = 0;

	for (i = 0; i < s->n; i++) {
		if (s->v[i].severity == 0 && (s->v[i].hist & mask) == 0 &&
		    s->v[i].tick != 0)
			incident_clear(&s->v[i]);
		else
			s->v[n++] = s->v[i];
	}
	s->n = n;
}

/* The entry of key at ts, added (not held yet) if absent; NULL: no memory. */
static struct incident *
incident_get(struct incidents *s, uint32_t ts, const char *key,
    const char *vital, const char *label)
{
	struct incident *in = (struct incident *)incident_find(s, ts, key);
	struct incident *v;
	uint32_t cap;

	if (in != NULL)
		return in;
	if (s->n >= INCIDENT_MAX)
		incident_compact(s);
	if (s->n == s->cap) {
		cap = s->cap ? 2 * s->cap : 32;
		if ((v = realloc(s->v, cap * sizeof(*v))) == NULL)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	in = &s->v[s->n];
	memset(in, 0, sizeof(*in));
	in->timescale_s = ts;
	if ((in->key = strdup(key)) == NULL ||
	    (vital != NULL && (in->vital = strdup(vital)) == NULL) ||
	    (label != NULL && (in->label = strdup(label)) == NULL)) {
		incident_clear(in);
		return NULL;
	}
	s->n++;
	return in;
}

/*
 * One epoch of one entry: shift the sighting in, then decide.  An
 * incident opens when the condition held now and in need of the window's
 * epochs, and ends once it held in none of them (2k-1 quiet epochs), so
 * an intermittent fault stays one incident.
 */
static void
incident_advance(const struct incidents *s, struct incident *in,
    uint64_t now_ns, int held, double mag, uint32_t sev, uint32_t need,
    struct incident_out *out)
{
	uint64_t mask = incident_mask(s);
	uint32_t n;

	memset(out, 0, sizeof(*out));
	if (held && (in->hist & mask) == 0)
		in->first_ns = now_ns;
	in->hist = (in->hist << 1 | (held != 0)) & mask;
	in->tick = now_ns;
	n = incident_count(in->hist);
	if (held)
		in->last = mag;
	if (in->severity == 0) {
		if (!held)
			return;
		if (n >= (need < 1 ? 1 : need)) {
			in->severity = sev;
			in->start_ns = in->first_ns;
			in->epochs = n;
			in->peak = mag;
			*out = (struct incident_out){ INCIDENT_START, sev,
				in->start_ns, n, mag };
		} else if (n == 1)
			*out = (struct incident_out){ INCIDENT_NOTE,
				VITALS_SEV_INFO, now_ns, 1, mag };
		return;
	}
	if (held) {
		in->epochs++;
		out->what = INCIDENT_ON;
		if (sev > in->severity && n < (need < 1 ? 1 : need))
			sev = in->severity; /* not lasted enough to escalate */
		if (sev > in->severity || mag >= 2 * in->peak) {
			out->what = INCIDENT_UPDATE;
			out->severity =
			    sev > in->severity ? sev : VITALS_SEV_INFO;
			in->severity = sev > in->severity ? sev : in->severity;
			in->peak = fmax(in->peak, mag);
		}
	} else if (in->hist == 0) {
		/* Only an incident that was an alarm is closed aloud. */
		out->what = in->severity >= VITALS_SEV_WARN ? INCIDENT_END
							    : INCIDENT_QUIET;
		out->severity = VITALS_SEV_INFO;
		in->severity = 0;
	} else
		out->what = INCIDENT_ON;
	out->start_ns = in->start_ns;
	out->epochs = in->epochs;
	out->peak = in->peak;
}

int
incident_step(struct incidents *s, const struct vitals_queue *q,
    const char *key, const char *vital, const char *label, int held,
    double magnitude, uint32_t sev, uint32_t need, struct incident_out *out)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct incident *in;

	memset(out, 0, sizeof(*out));
	if ((in = (struct incident *)incident_find(s, q->timescale_s, key)) ==
	    NULL) {
		if (!held)
			return 0;
		if ((in = incident_get(s, q->timescale_s, key, vital, label)) ==
		    NULL)
			return -ENOMEM;
	}
	if (in->tick == ep->start_ns && in->tick != 0)
		return 0; /* stepped already at this epoch */
	incident_advance(s, in, ep->start_ns, held, magnitude, sev, need, out);
	return 0;
}

int
incident_sweep(struct incidents *s, const struct vitals_queue *q,
    int (*end)(
	void *arg, const struct incident *in, const struct incident_out *out),
    void *arg)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct incident_out out;
	uint32_t i;
	int rc = 0, r;

	for (i = 0; i < s->n; i++) {
		if (s->v[i].timescale_s != q->timescale_s ||
		    s->v[i].tick == ep->start_ns)
			continue;
		incident_advance(
		    s, &s->v[i], ep->start_ns, 0, 0, VITALS_SEV_INFO, 1, &out);
		if (out.what == INCIDENT_END && end != NULL &&
		    (r = end(arg, &s->v[i], &out)) != 0 && rc == 0)
			rc = r;
	}
	incident_compact(s);
	return rc;
}

int
incident_end_emit(struct vitals_ctx *ctx, const struct vitals_queue *q,
    const struct incident *in, const struct incident_out *out, const char *text)
{
	struct vitals_finding f = { .start_ns = out->start_ns,
		.severity = VITALS_SEV_INFO,
		.text = text };

	f.vital = in->vital != NULL && in->vital[0] != '\0' ? in->vital : NULL;
	f.label = in->label != NULL && in->label[0] != '\0' ? in->label : NULL;
	return vitals_queue_emit(ctx, q, &f);
}

int
incident_process(const char *name)
{
	return name != NULL && name[0] == '/';
}

uint64_t
incident_adapt(const struct incidents *s, int64_t warmup)
{
	uint64_t w = 2 * (uint64_t)incident_window(s);

	return warmup > 0 && (uint64_t)warmup > w ? (uint64_t)warmup : w;
}

void
incident_free(struct incidents *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		incident_clear(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* ---- floors ---- */

/*
 * The built-in floors, per second, calibrated on a 2-CPU machine shared
 * with builds (doc/findings.md): about a fifth of a CPU, a fifth of a
 * task's time waiting, and rates a build or an interactive command does
 * not reach from one site.
 */
static const struct {
	const char *vital;
	double floor;
} incident_floors[] = {
	{ "cpu", 20 },
	{ "cache", 20 },
	{ "sched", 200e6 },
	{ "blocking", 200e6 },
	{ "wait", 2e9 },
	{ "lock", 20e6 },
	{ "diskio", 16 * 1048576.0 },
	{ "socket", 4 * 1048576.0 },
	{ "umem", 50000 },
	{ "kmem", 50000 },
	{ "kmem_free", 50000 },
	{ "syscall", 200000 },
	{ "signal", 500 },
};

/*
 * Vitals whose rise is never harm by itself, so never more than info:
 * idle waits (wait) and pages given back (kmem_free).
 */
static const char *const incident_calm[] = { "wait", "kmem_free" };

uint32_t
incident_cap(const char *vital, uint32_t severity)
{
	size_t i;

	for (i = 0; vital != NULL &&
	     i < sizeof(incident_calm) / sizeof(incident_calm[0]);
	     i++)
		if (strcmp(vital, incident_calm[i]) == 0)
			return VITALS_SEV_INFO;
	return severity;
}

/* VALUE: a number with an optional size (x1024^n) or time (ns) suffix. */
static int
incident_value(const char *tok, double *out)
{
	static const char *const suf[] = { "", "K", "k", "M", "G", "ns", "us",
		"ms", "s" };
	static const double mul[] = { 1, 1024.0, 1024.0, 1048576.0,
		1073741824.0, 1, 1e3, 1e6, 1e9 };
	char *end;
	double v;
	size_t i;

	v = strtod(tok, &end);
	if (end == tok || !(v >= 0) || isinf(v))
		return -EINVAL;
	for (i = 0; i < sizeof(suf) / sizeof(suf[0]); i++)
		if (strcmp(end, suf[i]) == 0) {
			*out = v * mul[i];
			return 0;
		}
	return -EINVAL;
}

/* Entry e as VITAL and VALUE; 0 or -EINVAL. */
static int
incident_entry(const char *e, char *vital, size_t len, double *value)
{
	const char *eq = strchr(e, '=');

	if (eq == NULL || eq == e || (size_t)(eq - e) >= len)
		return -EINVAL;
	memcpy(vital, e, (size_t)(eq - e));
	vital[eq - e] = '\0';
	return incident_value(eq + 1, value);
}

double
incident_floor(const struct vitals_strlist *floors, const char *vital)
{
	char name[64];
	double v, all = -1;
	size_t i;

	for (i = 0; floors != NULL && i < floors->n; i++) {
		if (incident_entry(floors->v[i], name, sizeof(name), &v) != 0)
			continue;
		if (strcmp(name, vital) == 0)
			return v;
		if (strcmp(name, "*") == 0)
			all = v;
	}
	if (all >= 0)
		return all;
	for (i = 0; i < sizeof(incident_floors) / sizeof(incident_floors[0]);
	     i++)
		if (strcmp(incident_floors[i].vital, vital) == 0)
			return incident_floors[i].floor;
	return 0;
}

int
incident_floors_check(
    const struct vitals_strlist *floors, char *why, size_t len)
{
	char name[64];
	double v;
	uint32_t i;

	for (i = 0; floors != NULL && i < floors->n; i++) {
		if (incident_entry(floors->v[i], name, sizeof(name), &v) != 0) {
			snprintf(why, len,
			    "option 'floor': '%s' is not VITAL=VALUE (a "
			    "number >= 0 with an optional K/M/G or "
			    "ns/us/ms/s suffix)",
			    floors->v[i]);
			return -EINVAL;
		}
	}
	return 0;
}

const char *
incident_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "@%lld", (long long)t);
	return buf;
}

const char *
incident_tail(const struct incidents *s, const struct incident_out *o,
    int window, char *buf, size_t len)
{
	char tm[16];

	buf[0] = '\0';
	if (o->what == INCIDENT_NOTE)
		snprintf(buf, len, "; seen once: a warning if it lasts");
	else if (o->what == INCIDENT_START && window)
		snprintf(buf, len,
		    "; in %u of the last %u epochs: an incident since %s",
		    o->epochs, 2 * s->k - 1,
		    incident_time(o->start_ns, tm, sizeof(tm)));
	else if (o->what == INCIDENT_UPDATE)
		snprintf(buf, len,
		    "; the incident since %s goes on (%u epochs)",
		    incident_time(o->start_ns, tm, sizeof(tm)), o->epochs);
	return buf;
}
