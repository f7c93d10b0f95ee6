/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's engine room: bounded queues of recent epochs per host
 * and timescale, filter runs over them with peers (the other hosts' epochs
 * of the same slot), in the caller or on lanes (a worker thread per
 * plugin, for range queries), and the daemon's live rollups, finished when
 * a base epoch reaches the end of their slot.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "aggregate.h"
#include "codec.h"
#include "epoch.h"
#include "instance.h"
#include "labels.h"
#include "log.h"
#include "rollup.h"

#define AGGREGATE_NS 1000000000ull
/* Most filter runs handed to lanes and not done before aggregate_run waits. */
#define AGGREGATE_AHEAD 64

/* The recent epochs of one host at one timescale, oldest first. */
struct aggregate_queue {
	char *host;
	uint32_t ts; /* 0 = base */
	uint32_t n;
	struct vitals_epoch **v; /* queue_len slots, n used */
	struct codec_packed *pk; /* queue_len slots: v[i] packed where
	                            v[i] is NULL (aggregate_params.park) */
	/*
	 * What the compact copies intern in, a new one after every queue_len
	 * copies: a pool outlives the last copy made in it by queue_len
	 * pushes at most, so two at most hold the queue's strings.
	 */
	struct epoch_pool *pool;
	uint32_t pooled; /* copies made in pool */
	int whole; /* the newest is whole (aggregate_queue_settle) */
};

/* The open rollup of one host at one timescale (live). */
struct aggregate_open {
	char *host;
	uint32_t ts;
	struct rollup *r;
};

/*
 * What one aggregate_run call hands to the lanes: per epoch of the slot,
 * its host and the queue (a copy of the epochs it held then) and peers
 * the filters see.  Freed by the last lane done with it.
 */
struct aggregate_work {
	uint64_t seq; /* 1, 2, ... in the order of the calls */
	uint32_t ts;
	size_t n;
	unsigned pending; /* lanes not done with it */
	const char **hosts; /* borrowed from the queues */
	struct vitals_queue *q;
	size_t nown;
	struct vitals_epoch **own; /* the queues' packed epochs unpacked */
};

/* A lane's waiting work, oldest first. */
struct aggregate_job {
	struct aggregate_job *next;
	struct aggregate_work *w;
};

/* A worker thread running the filters of some plugins, in order. */
struct aggregate_lane {
	struct aggregate *a;
	pthread_t thread;
	pthread_cond_t cv; /* work for it, or stop */
	struct aggregate_job *head, *tail;
	int sleeping; /* waiting on cv */
	uint64_t busy; /* seq of the work it runs or waits for; 0 idle */
};

/* An epoch out of its queue, freed once no run before stamp is pending. */
struct aggregate_retired {
	struct vitals_epoch *e;
	uint64_t stamp;
};

struct aggregate {
	struct aggregate_params p;
	size_t nfilters;
	struct aggregate_filter *filters;
	unsigned *lane_of; /* per filter, with lanes */
	size_t nqueues;
	struct aggregate_queue **queues; /* each its own allocation */
	size_t nopen;
	struct aggregate_open *open;
	/* lanes: all below under mu */
	unsigned nlanes;
	struct aggregate_lane *lanes;
	pthread_mutex_t mu;
	pthread_cond_t done; /* a lane finished some work */
	int stop; /* lanes leave, dropping what waits */
	int err; /* -ENOMEM from a lane */
	uint64_t seq; /* of the last work handed out */
	uint64_t wait_for; /* the caller waits until all before it is done */
	size_t nretired, capretired;
	struct aggregate_retired *retired; /* by stamp */
};

static void aggregate_lanes_stop(struct aggregate *a);
static int aggregate_lanes_start(struct aggregate *a);

/* Let the caller tend to other work between two steps of a run. */
static void
aggregate_between(const struct aggregate *a)
{
	if (a->p.between != NULL)
		a->p.between(a->p.between_arg);
}

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
	aggregate_lanes_stop(a);
	for (i = 0; i < a->nqueues; i++) {
		for (j = 0; j < a->queues[i]->n; j++) {
			vitals_epoch_free(a->queues[i]->v[j]);
			codec_packed_free(&a->queues[i]->pk[j]);
		}
		epoch_pool_put(a->queues[i]->pool);
		free(a->queues[i]->v);
		free(a->queues[i]->pk);
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
	free(a->lane_of);
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
	unsigned *lane_of = NULL;

	if (n > 0) {
		copy = calloc(n, sizeof(*copy));
		lane_of = calloc(n, sizeof(*lane_of));
		if (copy == NULL || lane_of == NULL) {
			free(copy);
			free(lane_of);
			return -ENOMEM;
		}
		memcpy(copy, f, n * sizeof(*copy));
	}
	/* The lanes run the old list until they are stopped. */
	aggregate_drain(a);
	aggregate_lanes_stop(a);
	free(a->filters);
	free(a->lane_of);
	a->filters = copy;
	a->lane_of = lane_of;
	a->nfilters = n;
	/* Without lanes the caller's thread runs the filters. */
	if (a->p.lanes > 0 && n > 0 && aggregate_lanes_start(a) != 0)
		aggregate_lanes_stop(a);
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
	q->pk = calloc(a->p.queue_len, sizeof(*q->pk));
	if (q->host == NULL || q->v == NULL || q->pk == NULL) {
		free(q->host);
		free(q->v);
		free(q->pk);
		free(q);
		return NULL;
	}
	a->queues[a->nqueues++] = q;
	return q;
}

/*
 * Keep e, which left a queue, until the lanes are done with the work
 * handed out so far.  Returns 0 or -ENOMEM (e is then freed at once,
 * after waiting for the lanes).
 */
static int
aggregate_retire(struct aggregate *a, struct vitals_epoch *e)
{
	struct aggregate_retired *v;
	size_t cap;

	if (a->nretired == a->capretired) {
		cap = a->capretired ? 2 * a->capretired : 64;
		if ((v = realloc(a->retired, cap * sizeof(*v))) == NULL) {
			aggregate_drain(a);
			vitals_epoch_free(e);
			return -ENOMEM;
		}
		a->retired = v;
		a->capretired = cap;
	}
	a->retired[a->nretired++] = (struct aggregate_retired){ e, a->seq };
	return 0;
}

/* What aggregate_pick keeps of the samples of an epoch's vitals. */
struct aggregate_keep {
	uint64_t runs_ns; /* labels_runs() of the epoch */
	uint32_t max; /* queue_samples */
};

static int
aggregate_best_cmp(const void *x, const void *y)
{
	return rollup_sample_cmp(*(const struct vitals_sample *const *)x,
	    *(const struct vitals_sample *const *)y);
}

/* Samples are in their array in the order they came. */
static int
aggregate_arrival_cmp(const void *x, const void *y)
{
	const struct vitals_sample *a = *(const struct vitals_sample *const *)x;
	const struct vitals_sample *b = *(const struct vitals_sample *const *)y;

	return a < b ? -1 : a > b;
}

/*
 * Of the samples src[0..m), best first, the max to keep into src[0..max):
 * the best of each exe first (an exe and one of its processes stay where
 * they were seen, as filters look for them), then the best of the rest.
 * 0 or -ENOMEM.
 */
struct aggregate_exe_rank {
	uint32_t exe_id, rank;
};

static int
aggregate_exe_rank_cmp(const void *x, const void *y)
{
	const struct aggregate_exe_rank *a = x, *b = y;

	if (a->exe_id != b->exe_id)
		return a->exe_id < b->exe_id ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int
aggregate_bound(const struct vitals_sample **src, uint32_t m, uint32_t max)
{
	const struct vitals_sample **out;
	struct aggregate_exe_rank *r;
	uint8_t *took;
	uint32_t i, n = 0;

	out = malloc(max * sizeof(*out));
	took = calloc(m, 1);
	r = malloc(m * sizeof(*r));
	if (out == NULL || took == NULL || r == NULL) {
		free(out);
		free(took);
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < m; i++)
		r[i] = (struct aggregate_exe_rank){ src[i]->exe_id, i };
	qsort(r, m, sizeof(*r), aggregate_exe_rank_cmp);
	for (i = 0; i < m; i++)
		took[r[i].rank] = i == 0 || r[i].exe_id != r[i - 1].exe_id;
	for (i = 0; i < m && n < max; i++)
		if (took[i])
			out[n++] = src[i];
	for (i = 0; i < m && n < max; i++)
		if (!took[i])
			out[n++] = src[i];
	memcpy(src, out, n * sizeof(*out));
	free(out);
	free(took);
	free(r);
	return 0;
}

/*
 * An epoch_pick_fn: the samples the attribution of weight credits
 * (labels_credited), and of those at most max (aggregate_bound, in the
 * order a rollup keeps them), in arrival order.
 */
static int
aggregate_pick(const struct vitals_vital_epoch *ve,
    const struct vitals_sample **src, uint32_t *n, void *arg)
{
	const struct aggregate_keep *k = arg;
	uint8_t *keep;
	uint32_t i, m = 0;

	if (*n == 0)
		return 0;
	if ((keep = malloc(*n)) == NULL ||
	    labels_credited(ve, k->runs_ns, keep) != 0) {
		free(keep);
		return -ENOMEM;
	}
	for (i = 0; i < *n; i++)
		if (keep[i])
			src[m++] = &ve->samples[i];
	free(keep);
	if (k->max != 0 && m > k->max) {
		qsort(src, m, sizeof(*src), aggregate_best_cmp);
		if (aggregate_bound(src, m, k->max) != 0)
			return -ENOMEM;
		m = k->max;
		qsort(src, m, sizeof(*src), aggregate_arrival_cmp);
	}
	*n = m;
	return 0;
}

struct vitals_epoch *
aggregate_compact(const struct vitals_epoch *e, uint64_t base_ns, uint32_t max,
    struct epoch_pool *pool)
{
	struct aggregate_keep k = { labels_runs(e, base_ns), max };

	return epoch_copy_pooled(e, aggregate_pick, &k, pool);
}

/* q's pool for its next copy, a new one every queue_len copies; or NULL. */
static struct epoch_pool *
aggregate_queue_pool(struct aggregate *a, struct aggregate_queue *q)
{
	struct epoch_pool *p;

	if (q->pool != NULL && q->pooled < a->p.queue_len)
		return q->pool;
	if ((p = epoch_pool_new()) == NULL)
		return q->pool;
	epoch_pool_seal(q->pool);
	epoch_pool_put(q->pool);
	q->pool = p;
	q->pooled = 0;
	return p;
}

/* Let e go from a queue: freed, or retired while lanes may hold it. */
static int
aggregate_let_go(struct aggregate *a, struct vitals_epoch *e)
{
	if (a->nlanes > 0)
		return aggregate_retire(a, e);
	vitals_epoch_free(e);
	return 0;
}

/*
 * Replace q's newest epoch, if whole, by its compact copy, once the
 * filters have been given it: they see the newest epoch whole, and of
 * the ones before (which they look back on for the weight of exes and
 * labels) the samples that carry that weight, at most queue_samples per
 * vital (aggregate_compact), so a queue of epochs or rollups full of
 * samples holds a fraction of their memory, and the copies' names and
 * frames once between them (q's pool).  A day's rollup is not held whole
 * for a day for the next run to compact it: lanes still running on it
 * hold it until they are done (aggregate_let_go).
 */
static int
aggregate_queue_settle(struct aggregate *a, struct aggregate_queue *q)
{
	int park = a->p.park && q->ts != 0;
	struct vitals_epoch *c;
	int r = 0;

	if (!q->whole || q->n == 0)
		return 0;
	if ((c = aggregate_compact(q->v[q->n - 1], a->p.base_ns,
		 a->p.queue_samples,
		 park ? NULL : aggregate_queue_pool(a, q))) == NULL)
		return -ENOMEM;
	if (aggregate_let_go(a, q->v[q->n - 1]) != 0)
		r = -ENOMEM;
	/* Packed, a queued rollup takes about 30 bytes a sample. */
	if (park && codec_pack(c, &q->pk[q->n - 1]) == 0) {
		vitals_epoch_free(c);
		c = NULL;
		aggregate_between(a);
	}
	q->v[q->n - 1] = c;
	q->pooled += !park;
	q->whole = 0;
	return r;
}

/* Append e (owned, whole) to q, letting the oldest go when full. */
static int
aggregate_queue_push(
    struct aggregate *a, struct aggregate_queue *q, struct vitals_epoch *e)
{
	int r;

	/*
	 * The newest is still whole if its settling ran out of memory, or
	 * if a run brings two epochs of one queue: compact before it is an
	 * older one.
	 */
	r = aggregate_queue_settle(a, q);
	if (q->n == a->p.queue_len) {
		if (q->v[0] != NULL && aggregate_let_go(a, q->v[0]) != 0)
			r = -ENOMEM;
		codec_packed_free(&q->pk[0]);
		memmove(q->v, q->v + 1, (q->n - 1) * sizeof(*q->v));
		memmove(q->pk, q->pk + 1, (q->n - 1) * sizeof(*q->pk));
		q->pk[q->n - 1] = (struct codec_packed){ NULL, 0, 0 };
		q->n--;
	}
	q->v[q->n++] = e;
	q->whole = 1;
	return r;
}

/*
 * The epochs of q a run gives the filters, oldest first, into out[]:
 * those held packed are unpacked into own[*nown...] (the run's, to free
 * when it is done).  Returns how many; one that cannot be unpacked is
 * left out (logged; out of memory: *rc is -ENOMEM).
 */
static uint32_t
aggregate_queue_view(const struct aggregate *a, const struct aggregate_queue *q,
    const struct vitals_epoch **out, struct vitals_epoch **own, size_t *nown,
    int *rc)
{
	char err[256];
	uint32_t i, n = 0;
	int r;

	for (i = 0; i < q->n; i++) {
		if (q->v[i] != NULL) {
			out[n++] = q->v[i];
			continue;
		}
		if ((r = codec_unpack(
			 &q->pk[i], &own[*nown], err, sizeof(err))) != 0) {
			if (r == -ENOMEM)
				*rc = r;
			else
				log_msg(VITALS_LOG_ERR, "core",
				    "a queued %us epoch of %s left out: %s",
				    q->ts, q->host, err);
			continue;
		}
		out[n++] = own[(*nown)++];
		aggregate_between(a);
	}
	return n;
}

size_t
aggregate_packed(const struct aggregate *a)
{
	size_t i, n = 0;
	uint32_t j;

	for (i = 0; i < a->nqueues; i++)
		for (j = 0; j < a->queues[i]->n; j++)
			n += a->queues[i]->v[j] == NULL;
	return n;
}

/* ---- lanes: filter runs on worker threads ---- */

static int
aggregate_wants(const struct aggregate_filter *f, uint32_t ts)
{
	return f->timescale_s == AGGREGATE_ALL || f->timescale_s == ts;
}

/* Whether f runs for host's epochs: its own host's, or every host's. */
static int
aggregate_for(const struct aggregate_filter *f, const char *host)
{
	return f->host == NULL || strcmp(f->host, host) == 0;
}

/* The last work every lane is done with (under mu). */
static uint64_t
aggregate_safe(const struct aggregate *a)
{
	uint64_t safe = a->seq;
	unsigned i;

	for (i = 0; i < a->nlanes; i++)
		if (a->lanes[i].busy != 0 && a->lanes[i].busy - 1 < safe)
			safe = a->lanes[i].busy - 1;
	return safe;
}

/* Free the retired epochs no pending work holds (under mu). */
static void
aggregate_reap(struct aggregate *a)
{
	uint64_t safe = aggregate_safe(a);
	size_t i = 0;

	while (i < a->nretired && a->retired[i].stamp <= safe)
		vitals_epoch_free(a->retired[i++].e);
	if (i == 0)
		return;
	memmove(a->retired, a->retired + i,
	    (a->nretired - i) * sizeof(*a->retired));
	a->nretired -= i;
}

/* Run the filters of lane l on work w: each epoch of the slot in turn. */
static int
aggregate_lane_run(
    struct aggregate *a, unsigned l, const struct aggregate_work *w)
{
	int rc = 0, r;
	size_t i, k;

	for (i = 0; i < w->n; i++)
		for (k = 0; k < a->nfilters; k++) {
			if (a->lane_of[k] != l ||
			    !aggregate_wants(&a->filters[k], w->ts) ||
			    !aggregate_for(&a->filters[k], w->hosts[i]))
				continue;
			r = instance_filter(
			    a->filters[k].ctx, &w->q[i], w->hosts[i]);
			if (r == -ENOMEM && rc == 0)
				rc = r;
		}
	return rc;
}

/* A lane's work w is done (under mu): free it if it was the last. */
static void
aggregate_work_done(struct aggregate_work *w)
{
	size_t i;

	if (--w->pending != 0)
		return;
	for (i = 0; i < w->nown; i++)
		vitals_epoch_free(w->own[i]);
	free(w);
}

static void *
aggregate_lane_main(void *arg)
{
	struct aggregate_lane *l = arg;
	struct aggregate *a = l->a;
	struct aggregate_job *j;
	int r;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (l->head == NULL && !a->stop) {
			l->sleeping = 1;
			pthread_cond_wait(&l->cv, &a->mu);
			l->sleeping = 0;
		}
		if (a->stop)
			break;
		j = l->head;
		l->busy = j->w->seq;
		pthread_mutex_unlock(&a->mu);
		r = aggregate_lane_run(a, (unsigned)(l - a->lanes), j->w);
		pthread_mutex_lock(&a->mu);
		if (r != 0 && a->err == 0)
			a->err = r;
		if ((l->head = j->next) == NULL)
			l->tail = NULL;
		l->busy = l->head != NULL ? l->head->w->seq : 0;
		aggregate_work_done(j->w);
		free(j);
		if (a->wait_for != 0 && aggregate_safe(a) + 1 >= a->wait_for)
			pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/*
 * The lanes: one per plugin among the filters (instances of one plugin
 * never run at the same time, so a plugin need not be thread-safe), at
 * most p.lanes, shared round robin beyond.  0, or -ENOMEM / -EAGAIN
 * (then stop what started).
 */
static int
aggregate_lanes_start(struct aggregate *a)
{
	size_t i, k;
	unsigned n = 0;

	for (i = 0; i < a->nfilters; i++) {
		for (k = 0; k < i; k++)
			if (a->filters[k].ctx->desc == a->filters[i].ctx->desc)
				break;
		a->lane_of[i] = k < i ? a->lane_of[k] : n++ % a->p.lanes;
	}
	n = n < a->p.lanes ? n : a->p.lanes;
	if ((a->lanes = calloc(n, sizeof(*a->lanes))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->done, NULL);
	a->stop = 0;
	for (a->nlanes = 0; a->nlanes < n; a->nlanes++) {
		a->lanes[a->nlanes].a = a;
		pthread_cond_init(&a->lanes[a->nlanes].cv, NULL);
		if (pthread_create(&a->lanes[a->nlanes].thread, NULL,
			aggregate_lane_main, &a->lanes[a->nlanes]) != 0) {
			pthread_cond_destroy(&a->lanes[a->nlanes].cv);
			return -EAGAIN;
		}
	}
	return 0;
}

/* Stop the lanes, dropping waiting work, and free the retired epochs. */
static void
aggregate_lanes_stop(struct aggregate *a)
{
	struct aggregate_job *j;
	unsigned i;

	if (a->lanes == NULL)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	for (i = 0; i < a->nlanes; i++)
		pthread_cond_signal(&a->lanes[i].cv);
	pthread_mutex_unlock(&a->mu);
	for (i = 0; i < a->nlanes; i++) {
		pthread_join(a->lanes[i].thread, NULL);
		pthread_cond_destroy(&a->lanes[i].cv);
		while ((j = a->lanes[i].head) != NULL) {
			a->lanes[i].head = j->next;
			aggregate_work_done(j->w);
			free(j);
		}
		a->lanes[i].tail = NULL;
		a->lanes[i].busy = 0;
	}
	aggregate_reap(a);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->mu);
	free(a->lanes);
	free(a->retired);
	a->lanes = NULL;
	a->nlanes = 0;
	a->retired = NULL;
	a->nretired = a->capretired = 0;
}

/* Wait until the work before seq `until` is done (under mu). */
static void
aggregate_wait(struct aggregate *a, uint64_t until)
{
	if (aggregate_safe(a) + 1 >= until)
		return;
	a->wait_for = until;
	while (aggregate_safe(a) + 1 < until)
		pthread_cond_wait(&a->done, &a->mu);
	a->wait_for = 0;
}

int
aggregate_drain(struct aggregate *a)
{
	int r;

	if (a->nlanes == 0)
		return 0;
	pthread_mutex_lock(&a->mu);
	aggregate_wait(a, a->seq + 1);
	aggregate_reap(a);
	r = a->err;
	pthread_mutex_unlock(&a->mu);
	return r;
}

/* ---- filter runs ---- */

/* Run the filters of ts on queue qu, the peers being v[] but v[self]. */
static int
aggregate_filters_run(struct aggregate *a, uint32_t ts,
    const struct aggregate_queue *qu, struct vitals_epoch **v, size_t n,
    size_t self, const struct vitals_epoch **peers)
{
	const struct vitals_epoch **ev;
	struct vitals_epoch **own;
	struct vitals_queue q;
	size_t i, np = 0, nown = 0;
	int rc = 0, r;

	ev = malloc(qu->n * sizeof(*ev));
	own = malloc(qu->n * sizeof(*own));
	if (ev == NULL || own == NULL) {
		free(ev);
		free(own);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (i != self)
			peers[np++] = v[i];
	memset(&q, 0, sizeof(q));
	q.timescale_s = ts ? ts : v[self]->timescale_s;
	q.n = aggregate_queue_view(a, qu, ev, own, &nown, &rc);
	q.epochs = ev;
	q.npeers = (uint32_t)np;
	q.peers = np ? (const struct vitals_epoch *const *)peers : NULL;
	for (i = 0; i < a->nfilters; i++) {
		if (!aggregate_wants(&a->filters[i], ts) ||
		    !aggregate_for(&a->filters[i], qu->host))
			continue;
		r = instance_filter(a->filters[i].ctx, &q, qu->host);
		if (r != 0 && rc == 0)
			rc = r;
		aggregate_between(a);
	}
	for (i = 0; i < nown; i++)
		vitals_epoch_free(own[i]);
	free(own);
	free(ev);
	return rc;
}

/*
 * The work of one slot: per epoch a copy of its queue (what is packed
 * unpacked, the work's own) and its peers, in one allocation.  NULL when
 * out of memory.
 */
static struct aggregate_work *
aggregate_work_new(struct aggregate *a, uint32_t ts,
    struct aggregate_queue **qs, struct vitals_epoch **v, size_t n)
{
	struct aggregate_work *w;
	const struct vitals_epoch **p;
	size_t i, k, np, size;
	int rc = 0;

	size = sizeof(*w) + n * (sizeof(*w->q) + sizeof(*w->hosts)) +
	    n * a->p.queue_len * sizeof(*w->own) +
	    n * (a->p.queue_len + n) * sizeof(*p);
	if ((w = calloc(1, size)) == NULL)
		return NULL;
	w->ts = ts;
	w->n = n;
	w->q = (struct vitals_queue *)(void *)(w + 1);
	w->hosts = (const char **)(void *)(w->q + n);
	w->own = (struct vitals_epoch **)(void *)(w->hosts + n);
	p = (const struct vitals_epoch **)(void *)(w->own + n * a->p.queue_len);
	for (i = 0; i < n; i++) {
		w->hosts[i] = qs[i]->host;
		w->q[i].timescale_s = ts ? ts : v[i]->timescale_s;
		w->q[i].n =
		    aggregate_queue_view(a, qs[i], p, w->own, &w->nown, &rc);
		w->q[i].epochs = p;
		p += qs[i]->n;
		for (k = 0, np = 0; k < n; k++)
			if (k != i)
				p[np++] = v[k];
		w->q[i].npeers = (uint32_t)np;
		w->q[i].peers = np ? p : NULL;
		p += np;
	}
	if (rc != 0) {
		w->pending = 1;
		aggregate_work_done(w);
		return NULL;
	}
	return w;
}

/* Queue job w for lane l (under mu); -ENOMEM. */
static int
aggregate_lane_add(struct aggregate_lane *l, struct aggregate_work *w)
{
	struct aggregate_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->w = w;
	if (l->tail != NULL)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	if (l->busy == 0)
		l->busy = w->seq;
	w->pending++;
	/* Waking a lane costs less than leaving the slowest one idle. */
	if (l->sleeping)
		pthread_cond_signal(&l->cv);
	return 0;
}

/*
 * Hand the filter runs of a slot to the lanes whose filters want ts,
 * then free what no pending run holds, waiting while too much is ahead.
 */
static int
aggregate_hand_out(struct aggregate *a, uint32_t ts,
    struct aggregate_queue **qs, struct vitals_epoch **v, size_t n)
{
	struct aggregate_work *w;
	unsigned l, want;
	size_t k;
	int rc = 0;

	if ((w = aggregate_work_new(a, ts, qs, v, n)) == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&a->mu);
	w->seq = ++a->seq;
	w->pending = 1; /* ours until it is handed out */
	for (l = 0; l < a->nlanes && rc == 0; l++) {
		for (k = 0, want = 0; k < a->nfilters && !want; k++)
			want = a->lane_of[k] == l &&
			    aggregate_wants(&a->filters[k], ts);
		if (want)
			rc = aggregate_lane_add(&a->lanes[l], w);
	}
	aggregate_work_done(w);
	/* Too far ahead: let the slowest lane catch up half the way. */
	if (a->seq - aggregate_safe(a) > AGGREGATE_AHEAD)
		aggregate_wait(a, a->seq - AGGREGATE_AHEAD / 2);
	aggregate_reap(a);
	if (rc == 0)
		rc = a->err;
	pthread_mutex_unlock(&a->mu);
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
	rc = 0;
	for (pushed = 0; pushed < n; pushed++)
		if (aggregate_queue_push(a, qs[pushed], v[pushed]) != 0)
			rc = -ENOMEM;
	if (a->nlanes > 0) {
		if ((r = aggregate_hand_out(a, ts, qs, v, n)) != 0)
			rc = r;
	} else {
		for (i = 0; i < n; i++) {
			r = aggregate_filters_run(a, ts, qs[i], v, n, i, peers);
			if (r != 0 && rc == 0)
				rc = r;
		}
	}
	/* Peers too are the slot's epochs: all are given before any settles. */
	for (i = 0; i < pushed; i++)
		if (aggregate_queue_settle(a, qs[i]) != 0 && rc == 0)
			rc = -ENOMEM;
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
	if ((copy = epoch_copy(e)) == NULL)
		return -ENOMEM;
	if ((r = aggregate_run(a, 0, &copy, 1)) != 0 && rc == 0)
		rc = r;
	for (i = 0; i < a->p.ntimescales; i++) {
		aggregate_between(a);
		if ((r = aggregate_live_add(a, e, a->p.timescales[i])) != 0 &&
		    rc == 0)
			rc = r;
	}
	return rc;
}
