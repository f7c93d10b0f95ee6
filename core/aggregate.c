/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's engine room: bounded queues of recent epochs per host
 * and timescale, filter runs over them with peers (the other hosts' epochs
 * of the same slot), and the daemon's live rollups, finished when a base
 * epoch reaches the end of their slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "aggregate.h"
#include "instance.h"
#include "log.h"
#include "rollup.h"

#define AGGREGATE_NS 1000000000ull

/* The recent epochs of one host at one timescale, oldest first. */
struct aggregate_queue {
	char *host;
	uint32_t ts; /* 0 = base */
	uint32_t n;
	struct vitals_epoch **v; /* queue_len slots, n used */
};

/* The open rollup of one host at one timescale (live). */
struct aggregate_open {
	char *host;
	uint32_t ts;
	struct rollup *r;
};

struct aggregate {
	struct aggregate_params p;
	size_t nfilters;
	struct aggregate_filter *filters;
	size_t nqueues;
	struct aggregate_queue **queues; /* each its own allocation */
	size_t nopen;
	struct aggregate_open *open;
};

struct aggregate *
aggregate_new(const struct aggregate_params *p)
{
	struct aggregate *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->p = *p;
	if (a->p.queue_len == 0)
		a->p.queue_len = 1;
	if (a->p.ntimescales > VITALS_AGG_MAX_TIMESCALES)
		a->p.ntimescales = VITALS_AGG_MAX_TIMESCALES;
	return a;
}

void
aggregate_free(struct aggregate *a)
{
	size_t i;
	uint32_t j;

	if (a == NULL)
		return;
	for (i = 0; i < a->nqueues; i++) {
		for (j = 0; j < a->queues[i]->n; j++)
			vitals_epoch_free(a->queues[i]->v[j]);
		free(a->queues[i]->v);
		free(a->queues[i]->host);
		free(a->queues[i]);
	}
	for (i = 0; i < a->nopen; i++) {
		rollup_free(a->open[i].r);
		free(a->open[i].host);
	}
	free(a->queues);
	free(a->open);
	free(a->filters);
	free(a);
}

const struct aggregate_params *
aggregate_params(const struct aggregate *a)
{
	return &a->p;
}

int
aggregate_filters(
    struct aggregate *a, const struct aggregate_filter *f, size_t n)
{
	struct aggregate_filter *copy = NULL;

	if (n > 0) {
		if ((copy = calloc(n, sizeof(*copy))) == NULL)
			return -ENOMEM;
		memcpy(copy, f, n * sizeof(*copy));
	}
	free(a->filters);
	a->filters = copy;
	a->nfilters = n;
	return 0;
}

/* ---- queues ---- */

static const char *
aggregate_host(const struct vitals_epoch *e)
{
	return e->host != NULL ? e->host : "";
}

/*
 * The queue of host at ts, created empty if new; NULL on ENOMEM.  Queues
 * are allocated one by one: callers hold several pointers at a time.
 */
static struct aggregate_queue *
aggregate_queue(struct aggregate *a, const char *host, uint32_t ts)
{
	struct aggregate_queue *q, **v;
	size_t i;

	for (i = 0; i < a->nqueues; i++)
		if (a->queues[i]->ts == ts &&
		    strcmp(a->queues[i]->host, host) == 0)
			return a->queues[i];
	v = realloc(a->queues, (a->nqueues + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	a->queues = v;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->ts = ts;
	q->host = strdup(host);
	q->v = calloc(a->p.queue_len, sizeof(*q->v));
	if (q->host == NULL || q->v == NULL) {
		free(q->host);
		free(q->v);
		free(q);
		return NULL;
	}
	a->queues[a->nqueues++] = q;
	return q;
}

/* Append e (owned) to q, freeing the oldest when full. */
static void
aggregate_queue_push(
    struct aggregate *a, struct aggregate_queue *q, struct vitals_epoch *e)
{
	if (q->n == a->p.queue_len) {
		vitals_epoch_free(q->v[0]);
		memmove(q->v, q->v + 1, (q->n - 1) * sizeof(*q->v));
		q->n--;
	}
	q->v[q->n++] = e;
}

/* ---- filter runs ---- */

static int
aggregate_wants(const struct aggregate_filter *f, uint32_t ts)
{
	return f->timescale_s == AGGREGATE_ALL || f->timescale_s == ts;
}

/* Run the filters of ts on queue qu, the peers being v[] but v[self]. */
static int
aggregate_filters_run(struct aggregate *a, uint32_t ts,
    const struct aggregate_queue *qu, struct vitals_epoch **v, size_t n,
    size_t self, const struct vitals_epoch **peers)
{
	struct vitals_queue q;
	size_t i, np = 0;
	int rc = 0, r;

	for (i = 0; i < n; i++)
		if (i != self)
			peers[np++] = v[i];
	memset(&q, 0, sizeof(q));
	q.timescale_s = ts ? ts : v[self]->timescale_s;
	q.n = qu->n;
	q.epochs = (const struct vitals_epoch *const *)qu->v;
	q.npeers = (uint32_t)np;
	q.peers = np ? (const struct vitals_epoch *const *)peers : NULL;
	for (i = 0; i < a->nfilters; i++) {
		if (!aggregate_wants(&a->filters[i], ts))
			continue;
		r = instance_filter(a->filters[i].ctx, &q, qu->host);
		if (r != 0 && rc == 0)
			rc = r;
	}
	return rc;
}

int
aggregate_run(
    struct aggregate *a, uint32_t ts, struct vitals_epoch **v, size_t n)
{
	struct aggregate_queue **qs = NULL;
	const struct vitals_epoch **peers = NULL;
	size_t i, pushed = 0;
	int rc = -ENOMEM, r;

	if (n == 0)
		return 0;
	qs = calloc(n, sizeof(*qs));
	peers = calloc(n, sizeof(*peers));
	if (qs == NULL || peers == NULL)
		goto out;
	/* Every epoch of the slot joins its queue before any filter runs. */
	for (i = 0; i < n; i++)
		if ((qs[i] = aggregate_queue(a, aggregate_host(v[i]), ts)) ==
		    NULL)
			goto out;
	for (pushed = 0; pushed < n; pushed++)
		aggregate_queue_push(a, qs[pushed], v[pushed]);
	rc = 0;
	for (i = 0; i < n; i++) {
		r = aggregate_filters_run(a, ts, qs[i], v, n, i, peers);
		if (r != 0 && rc == 0)
			rc = r;
	}
out:
	for (i = pushed; i < n; i++)
		vitals_epoch_free(v[i]);
	free(qs);
	free(peers);
	return rc;
}

/* ---- live rollups ---- */

static struct aggregate_open *
aggregate_open_find(struct aggregate *a, const char *host, uint32_t ts)
{
	size_t i;

	for (i = 0; i < a->nopen; i++)
		if (a->open[i].ts == ts && strcmp(a->open[i].host, host) == 0)
			return &a->open[i];
	return NULL;
}

/* Finish the open rollup o, run it at its timescale, and close o. */
static int
aggregate_open_close(struct aggregate *a, struct aggregate_open *o)
{
	struct vitals_epoch *e = NULL;
	int rc;

	rc = rollup_finish(o->r, &e);
	rollup_free(o->r);
	free(o->host);
	*o = a->open[--a->nopen];
	if (rc != 0)
		return rc;
	log_msg(VITALS_LOG_DEBUG, "core", "rollup %us of %s: %u s covered",
	    e->timescale_s, e->host, (unsigned)(e->length_ns / AGGREGATE_NS));
	return aggregate_run(a, e->timescale_s, &e, 1);
}

/* The open rollup of e's host at ts for slot, made if missing. */
static struct aggregate_open *
aggregate_open_get(
    struct aggregate *a, const char *host, uint32_t ts, uint64_t slot)
{
	struct aggregate_open *o;

	if ((o = aggregate_open_find(a, host, ts)) != NULL)
		return o;
	o = realloc(a->open, (a->nopen + 1) * sizeof(*o));
	if (o == NULL)
		return NULL;
	a->open = o;
	o = &o[a->nopen];
	o->ts = ts;
	o->host = strdup(host);
	o->r = rollup_new(slot, ts, a->p.max_samples);
	if (o->host == NULL || o->r == NULL) {
		free(o->host);
		rollup_free(o->r);
		return NULL;
	}
	a->nopen++;
	return o;
}

/* Add e to the rollup of ts; finish it when e reaches the slot's end. */
static int
aggregate_live_add(
    struct aggregate *a, const struct vitals_epoch *e, uint32_t ts)
{
	uint64_t len = (uint64_t)ts * AGGREGATE_NS;
	uint64_t slot = vitals_slot_start(e->start_ns, len);
	struct aggregate_open *o;
	int rc;

	if ((o = aggregate_open_get(a, aggregate_host(e), ts, slot)) == NULL)
		return -ENOMEM;
	if ((rc = rollup_add(o->r, e)) != 0) {
		rollup_free(o->r);
		free(o->host);
		*o = a->open[--a->nopen];
		return rc;
	}
	if (e->start_ns + e->length_ns >= slot + len)
		return aggregate_open_close(a, o);
	return 0;
}

int
aggregate_live(struct aggregate *a, const struct vitals_epoch *e)
{
	struct aggregate_open *o;
	struct vitals_epoch *copy;
	uint64_t slot;
	uint32_t i, ts;
	int rc = 0, r;

	/* A slot left behind (a gap in the epochs) closes as it is. */
	for (i = 0; i < a->p.ntimescales; i++) {
		ts = a->p.timescales[i];
		slot =
		    vitals_slot_start(e->start_ns, (uint64_t)ts * AGGREGATE_NS);
		o = aggregate_open_find(a, aggregate_host(e), ts);
		if (o != NULL && rollup_start(o->r) != slot &&
		    (r = aggregate_open_close(a, o)) != 0 && rc == 0)
			rc = r;
	}
	if ((copy = rollup_copy(e)) == NULL)
		return -ENOMEM;
	if ((r = aggregate_run(a, 0, &copy, 1)) != 0 && rc == 0)
		rc = r;
	for (i = 0; i < a->p.ntimescales; i++)
		if ((r = aggregate_live_add(a, e, a->p.timescales[i])) != 0 &&
		    rc == 0)
			rc = r;
	return rc;
}
