/* SPDX-License-Identifier: MIT */
/*
 * Builder of hand-made epochs and queues for filter tests (epochs.h).
 * Aborts on out-of-memory: it only ever runs inside a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epochs.h"

#define TEP_VITALS 24
#define TEP_KFRAME 0xffffffff81000000ULL

/* One vital being built. */
struct tep_vital {
	struct vitals_vital_epoch v;
	uint64_t hca[TEP_HCA];
	uint64_t
	    owner[TEP_HCA]; /* key hash of the label in each slot, 0 free */
	struct vitals_sample *s;
	uint32_t cap;
};

struct tep_epoch {
	struct vitals_epoch e;
	struct tep_vital *tv[TEP_VITALS];
	struct vitals_vital_epoch view[TEP_VITALS];
	uint32_t nv;
	void **owned; /* strings and frames the samples point to */
	uint32_t nowned;
	struct vitals_metric metric; /* tep_metric's */
};

struct tep_queue {
	uint32_t ts, max, n;
	uint64_t seq;
	struct tep_epoch **e;
	const struct vitals_epoch **p;
};

static const struct {
	const char *name, *unit;
} tep_units[] = {
	{ "cpu", "samples" },
	{ "cache", "samples" },
	{ "sched", "ns" },
	{ "blocking", "ns" },
	{ "diskio", "bytes" },
	{ "umem", "faults" },
	{ "kmem", "pages" },
	{ "kmem_free", "pages" },
	{ "syscall", "calls" },
	{ "signal", "signals" },
	{ "socket", "bytes" },
	{ "lock", "ns" },
};

static void *
tep_alloc(void *p, size_t n)
{
	if ((p = realloc(p, n ? n : 1)) == NULL) {
		fprintf(stderr, "epochs: out of memory\n");
		abort();
	}
	return p;
}

static void *
tep_own(struct tep_epoch *e, void *p)
{
	e->owned = tep_alloc(e->owned, (e->nowned + 1) * sizeof(*e->owned));
	e->owned[e->nowned++] = p;
	return p;
}

static const char *
tep_str(struct tep_epoch *e, const char *s)
{
	size_t n = strlen(s != NULL ? s : "") + 1;

	return memcpy(tep_own(e, tep_alloc(NULL, n)), s ? s : "", n);
}

static uint64_t
tep_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint32_t
tep_exe_id(const char *exe)
{
	uint64_t h = 1469598103934665603ULL;

	for (; exe != NULL && *exe != '\0'; exe++)
		h = (h ^ (unsigned char)*exe) * 1099511628211ULL;
	return (uint32_t)(h ^ h >> 32);
}

uint64_t
tep_start_ns(uint32_t timescale_s, uint64_t seq)
{
	return TEP_BASE_NS + seq * timescale_s * 1000000000ULL;
}

struct tep_epoch *
tep_epoch_new(uint32_t timescale_s, uint64_t seq)
{
	struct tep_epoch *e = tep_alloc(NULL, sizeof(*e));

	memset(e, 0, sizeof(*e));
	e->e.host = "mockhost";
	e->e.timescale_s = timescale_s;
	e->e.seq = seq;
	e->e.start_ns = tep_start_ns(timescale_s, seq);
	e->e.length_ns = timescale_s * 1000000000ULL;
	return e;
}

void
tep_epoch_free(struct tep_epoch *e)
{
	uint32_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->nv; i++) {
		free(e->tv[i]->s);
		free(e->tv[i]);
	}
	for (i = 0; i < e->nowned; i++)
		free(e->owned[i]);
	free(e->owned);
	free(e);
}

static struct tep_vital *
tep_vital_get(struct tep_epoch *e, const char *vital)
{
	struct tep_vital *tv;
	uint32_t i;

	for (i = 0; i < e->nv; i++)
		if (strcmp(e->tv[i]->v.name, vital) == 0)
			return e->tv[i];
	if (e->nv == TEP_VITALS)
		abort();
	tv = e->tv[e->nv++] = tep_alloc(NULL, sizeof(*tv));
	memset(tv, 0, sizeof(*tv));
	tv->v.name = tep_str(e, vital);
	tv->v.unit = "events";
	for (i = 0; i < sizeof(tep_units) / sizeof(tep_units[0]); i++)
		if (strcmp(tep_units[i].name, vital) == 0)
			tv->v.unit = tep_units[i].unit;
	tv->v.threshold = 2;
	tv->v.floor = 1;
	tv->v.hca_size = TEP_HCA;
	return tv;
}

int
tep_vital(struct tep_epoch *e, const char *vital)
{
	tep_vital_get(e, vital);
	return 0;
}

static struct vitals_sample *
tep_sample_new(struct tep_vital *tv)
{
	if (tv->v.nsamples == tv->cap) {
		tv->cap = tv->cap ? 2 * tv->cap : 16;
		tv->s = tep_alloc(tv->s, tv->cap * sizeof(*tv->s));
	}
	return memset(&tv->s[tv->v.nsamples++], 0, sizeof(*tv->s));
}

/* Give the sample one kernel frame named ksym. */
static void
tep_ksym(struct tep_epoch *e, struct vitals_sample *s, const char *ksym)
{
	uint64_t *frame = tep_own(e, tep_alloc(NULL, sizeof(*frame)));
	const char **names = tep_own(e, tep_alloc(NULL, sizeof(*names)));

	*frame = TEP_KFRAME;
	names[0] = tep_str(e, ksym);
	s->nkstack = 1;
	s->kstack = frame;
	s->ksyms = names;
}

/*
 * The label's slot: its hash, moved on to the next free slot if another
 * label holds it, so tests see no collision unless they ask for one.
 */
static uint32_t
tep_slot(struct tep_vital *tv, const struct tep_ev *ev, uint32_t exe_id)
{
	uint64_t key =
	    tep_mix(ev->label ^ tep_mix((uint64_t)exe_id << 32 | ev->uid)) | 1;
	uint32_t slot = (uint32_t)(key % TEP_HCA), i;

	if (ev->fixed_slot)
		return ev->slot % TEP_HCA;
	for (i = 0; i < TEP_HCA; i++, slot = (slot + 1) % TEP_HCA) {
		if (tv->owner[slot] == key || tv->owner[slot] == 0) {
			tv->owner[slot] = key;
			return slot;
		}
	}
	return slot;
}

uint32_t
tep_add(struct tep_epoch *e, const char *vital, const struct tep_ev *ev)
{
	struct tep_vital *tv = tep_vital_get(e, vital);
	uint64_t events = ev->events ? ev->events : 1;
	uint64_t weight = ev->weight ? ev->weight : events;
	struct vitals_sample *s;
	uint32_t exe_id = tep_exe_id(ev->exe), slot;

	slot = tep_slot(tv, ev, exe_id);
	tv->hca[slot] += weight;
	tv->v.wsum += weight;
	tv->v.events += events;
	s = tep_sample_new(tv);
	s->ts_ns = e->e.start_ns + (uint64_t)tv->v.nsamples * 1000000ULL;
	s->label = ev->label;
	s->weight = weight / events;
	s->count = tv->hca[slot];
	s->slot = slot;
	s->exe_id = exe_id;
	s->uid = ev->uid;
	s->pid = s->tid = ev->pid;
	s->op = ev->op;
	s->exe = tep_str(e, ev->exe);
	s->comm = tep_str(e, ev->comm);
	memcpy(s->args, ev->args, sizeof(s->args));
	if (ev->ksym != NULL)
		tep_ksym(e, s, ev->ksym);
	return slot;
}

void
tep_merge(struct tep_epoch *dst, const struct tep_epoch *src)
{
	const struct tep_vital *sv;
	struct tep_vital *dv;
	uint32_t i, j;

	for (i = 0; i < src->nv; i++) {
		sv = src->tv[i];
		dv = tep_vital_get(dst, sv->v.name);
		for (j = 0; j < TEP_HCA; j++)
			dv->hca[j] += sv->hca[j];
		dv->v.wsum += sv->v.wsum;
		dv->v.events += sv->v.events;
		for (j = 0; j < sv->v.nsamples; j++)
			*tep_sample_new(dv) = sv->s[j];
	}
}

void
tep_partial(struct tep_epoch *e, double length_s)
{
	e->e.partial = 1;
	e->e.length_ns = (uint64_t)(length_s * 1e9);
}

/* See epochs.h. */
void
tep_metric(struct tep_epoch *e, const char *name, double value)
{
	e->metric = (struct vitals_metric){ .name = name,
		.unit = "%",
		.mean = value,
		.min = value,
		.max = value,
		.last = value,
		.n = 1 };
	e->e.nmetrics = 1;
	e->e.metrics = &e->metric;
}

static int
tep_view_cmp(const void *a, const void *b)
{
	const struct vitals_vital_epoch *x = a, *y = b;

	return strcmp(x->name, y->name);
}

const struct vitals_epoch *
tep_epoch_view(struct tep_epoch *e)
{
	uint32_t i;

	for (i = 0; i < e->nv; i++) {
		e->view[i] = e->tv[i]->v;
		e->view[i].hca = e->tv[i]->hca;
		e->view[i].samples = e->tv[i]->s;
		e->view[i].unique = e->tv[i]->v.nsamples;
	}
	qsort(e->view, e->nv, sizeof(e->view[0]), tep_view_cmp);
	e->e.nvitals = e->nv;
	e->e.vitals = e->view;
	return &e->e;
}

struct tep_queue *
tep_queue_new(uint32_t timescale_s, uint32_t max)
{
	struct tep_queue *q = tep_alloc(NULL, sizeof(*q));

	memset(q, 0, sizeof(*q));
	q->ts = timescale_s;
	q->max = max;
	q->e = tep_alloc(NULL, max * sizeof(*q->e));
	q->p = tep_alloc(NULL, max * sizeof(*q->p));
	return q;
}

void
tep_queue_free(struct tep_queue *q)
{
	uint32_t i;

	if (q == NULL)
		return;
	for (i = 0; i < q->n; i++)
		tep_epoch_free(q->e[i]);
	free(q->e);
	free(q->p);
	free(q);
}

struct tep_epoch *
tep_queue_next(struct tep_queue *q)
{
	if (q->n == q->max) {
		tep_epoch_free(q->e[0]);
		memmove(q->e, q->e + 1, (q->max - 1) * sizeof(*q->e));
		q->n--;
	}
	return q->e[q->n++] = tep_epoch_new(q->ts, q->seq++);
}

const struct vitals_epoch *
tep_queue_newest(struct tep_queue *q)
{
	return q->n > 0 ? tep_epoch_view(q->e[q->n - 1]) : NULL;
}

int
tep_queue_run(struct tep_queue *q, const struct vitals_plugin *p, void *state)
{
	struct vitals_queue vq = { .timescale_s = q->ts };
	uint32_t i;

	for (i = 0; i < q->n; i++)
		q->p[i] = tep_epoch_view(q->e[i]);
	vq.n = q->n;
	vq.epochs = q->p;
	return p->epoch(state, &vq);
}
