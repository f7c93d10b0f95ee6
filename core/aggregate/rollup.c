/* SPDX-License-Identifier: MIT */
/*
 * Rollups: epochs summed into the epoch of a longer slot.  HCAs built with
 * the same hash add up counter by counter, and a larger HCA folds down to
 * a smaller one exactly; samples are merged keeping the largest counts up
 * to a bound.  Also deep copies of epochs, for queues that outlive them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "codec.h"
#include "epoch.h"
#include "rollup.h"
#include "sketch.h"

#define ROLLUP_NS 1000000000ull

/* One vital being summed. */
struct rollup_vital {
	char *name;
	char *unit;
	uint64_t threshold, floor, events, wsum, unique, dropped;
	uint64_t samples_dropped;
	uint32_t hca_size; /* 0 until an input with counters comes */
	uint64_t *hca;
	uint32_t nsamples; /* kept, best first */
	struct vitals_sample **samples; /* frames and strings in the pool */
	uint32_t max_in; /* largest nsamples of an input */
};

/* A file of the rollup's user frames: inputs' modules united by file. */
struct rollup_module {
	char *path;
	char *build_id;
};

struct rollup {
	char *host; /* NULL until the first epoch; "*" if mixed */
	uint64_t start_ns;
	uint32_t timescale_s;
	uint32_t max_samples; /* 0: max_in of each vital */
	uint32_t nepochs;
	uint32_t partial;
	uint64_t length_ns, dropped, cpu_ns, seq;
	uint32_t nvitals;
	struct rollup_vital *vitals; /* sorted by name */
	uint32_t nmodules; /* a module's id is its index */
	struct rollup_module *modules;
	uint32_t *mhash; /* open addressing: index + 1, or 0 */
	uint32_t mhash_size; /* a power of two, or 0 */
	/*
	 * The kept samples' strings (exes, threads, frame names), frames
	 * and frame names' arrays, each once: a day's rollup keeps
	 * thousands of samples of the same stacks.  Rebuilt when those of
	 * dropped samples pile up (rollup_pool_compact).
	 */
	struct vitals_epoch *pool;
	/* The epoch being added, and its module ids as the rollup's. */
	const struct vitals_epoch *in;
	uint32_t *in_ids; /* parallel to in->modules */
};

uint64_t
vitals_slot_start(uint64_t ts_ns, uint64_t length_ns)
{
	if (length_ns == 0)
		return ts_ns;
	return ts_ns - ts_ns % length_ns;
}

static int
rollup_pow2(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

int
vitals_hca_fold(uint64_t *hca, uint32_t m, uint32_t to)
{
	uint32_t i;

	if (hca == NULL || !rollup_pow2(m) || !rollup_pow2(to) || to > m)
		return -EINVAL;
	for (i = to; i < m; i++)
		hca[i & (to - 1)] += hca[i];
	return 0;
}

/* ---- samples ---- */

static int
rollup_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int
rollup_sample_cmp(const struct vitals_sample *a, const struct vitals_sample *b)
{
	int c;

	if ((c = rollup_cmp_u64(b->count, a->count)) != 0 ||
	    (c = rollup_cmp_u64(b->weight, a->weight)) != 0 ||
	    (c = rollup_cmp_u64(a->ts_ns, b->ts_ns)) != 0 ||
	    (c = rollup_cmp_u64(a->label, b->label)) != 0 ||
	    (c = rollup_cmp_u64(a->slot, b->slot)) != 0 ||
	    (c = rollup_cmp_u64(a->exe_id, b->exe_id)) != 0 ||
	    (c = rollup_cmp_u64(a->pid, b->pid)) != 0 ||
	    (c = rollup_cmp_u64(a->tid, b->tid)) != 0)
		return c;
	return rollup_cmp_u64(a->op, b->op);
}

static int
rollup_sample_pcmp(const void *x, const void *y)
{
	const struct vitals_sample *const *a = x, *const *b = y;

	return rollup_sample_cmp(*a, *b);
}

/*
 * A user frame of r->in as a frame of the rollup: its module id made the
 * rollup's.  A frame naming no module of the input (or one past the ids a
 * frame can hold) keeps only its offset.
 */
static uint64_t
rollup_frame(struct rollup *r, uint64_t v)
{
	const struct vitals_module *m;
	int32_t id = VITALS_UFRAME_MODULE(v);
	uint32_t to;

	if (id < 0)
		return v;
	m = vitals_epoch_module(r->in, (uint32_t)id);
	if (m == NULL || r->in_ids == NULL)
		return VITALS_UFRAME_OFFSET(v);
	to = r->in_ids[m - r->in->modules];
	if (to >= VITALS_UFRAME_MAX_MODULES)
		return VITALS_UFRAME_OFFSET(v);
	return VITALS_UFRAME(to, VITALS_UFRAME_OFFSET(v));
}

/*
 * A kernel frame of r->in as a frame of the rollup: one stored by kernel
 * image (core/kernel/kaddr.h) as rollup_frame makes it; another (an older
 * epoch's raw address, a keyed frame) as it is.
 */
static uint64_t
rollup_kframe(struct rollup *r, uint64_t v)
{
	int32_t id = VITALS_UFRAME_MODULE(v);

	if (id < 0 || vitals_epoch_module(r->in, (uint32_t)id) == NULL)
		return v;
	return rollup_frame(r, v);
}

/*
 * A kept copy of s, its slot masked to m (0: kept): its frames made the
 * rollup's, then interned with their names' array and its strings in r's
 * pool, where the samples of one stack share them (a day's rollup keeps
 * thousands of samples of a few hundred stacks).  NULL on ENOMEM.
 */
static struct vitals_sample *
rollup_sample_dup(struct rollup *r, const struct vitals_sample *s, uint32_t m)
{
	uint64_t buf[2 * VITALS_STACK_MAX], *f = buf;
	uint32_t i, nk = s->nkstack, nf = nk + s->nustack;
	struct vitals_sample t = *s, *k;

	if (r->pool == NULL && (r->pool = epoch_new()) == NULL)
		return NULL;
	if (nf > 2 * VITALS_STACK_MAX && (f = malloc(nf * sizeof(*f))) == NULL)
		return NULL;
	for (i = 0; i < nk; i++)
		f[i] = rollup_kframe(r, s->kstack[i]);
	for (i = nk; i < nf; i++)
		f[i] = rollup_frame(r, s->ustack[i - nk]);
	t.kstack = nk ? f : NULL;
	t.ustack = nf > nk ? f + nk : NULL;
	if ((k = malloc(sizeof(*k))) != NULL &&
	    epoch_copy_sample(r->pool, k, &t) != 0) {
		free(k);
		k = NULL;
	}
	if (f != buf)
		free(f);
	if (k != NULL && m != 0)
		k->slot &= m - 1;
	return k;
}

/* Samples' slots after the HCA they index was folded to m counters. */
static void
rollup_samples_remap(struct rollup_vital *v, uint32_t m)
{
	uint32_t i;

	for (i = 0; i < v->nsamples; i++)
		v->samples[i]->slot &= m - 1;
}

/*
 * Merge e's samples (sorted best first in in[0..n)) with the kept ones,
 * keeping the best `bound`.  New survivors are copied; dropped kept ones
 * freed.  Everything not kept is counted in samples_dropped.
 */
static int
rollup_samples_merge(struct rollup *r, struct rollup_vital *v,
    const struct vitals_sample **in, uint32_t n, uint32_t bound)
{
	struct vitals_sample **out, *k;
	uint32_t i = 0, j = 0, o = 0;

	if ((out = calloc((size_t)bound + 1, sizeof(*out))) == NULL)
		return -ENOMEM;
	while (o < bound && (i < v->nsamples || j < n)) {
		if (j == n ||
		    (i < v->nsamples &&
			rollup_sample_cmp(v->samples[i], in[j]) <= 0)) {
			out[o++] = v->samples[i++];
			continue;
		}
		if ((k = rollup_sample_dup(r, in[j++], v->hca_size)) == NULL)
			goto fail;
		out[o++] = k;
	}
	v->samples_dropped += (v->nsamples - i) + (n - j);
	for (; i < v->nsamples; i++)
		free(v->samples[i]);
	free(v->samples);
	v->samples = out;
	v->nsamples = o;
	return 0;
fail:
	/* The kept list is untouched; free only the copies made here. */
	for (i = 0, j = 0; j < o; j++) {
		if (i < v->nsamples && out[j] == v->samples[i])
			i++;
		else
			free(out[j]);
	}
	free(out);
	return -ENOMEM;
}

static int
rollup_samples_add(struct rollup *r, struct rollup_vital *v,
    const struct vitals_vital_epoch *ve)
{
	const struct vitals_sample **in;
	uint32_t i, bound;
	int rc;

	if (ve->nsamples > v->max_in)
		v->max_in = ve->nsamples;
	/* With no fixed bound, keep everything until finish trims. */
	bound = r->max_samples ? r->max_samples : UINT32_MAX - 1;
	if (ve->nsamples == 0 || ve->samples == NULL)
		return 0;
	if ((in = calloc(ve->nsamples, sizeof(*in))) == NULL)
		return -ENOMEM;
	for (i = 0; i < ve->nsamples; i++)
		in[i] = &ve->samples[i];
	qsort(in, ve->nsamples, sizeof(*in), rollup_sample_pcmp);
	if (bound == UINT32_MAX - 1)
		bound = v->nsamples + ve->nsamples;
	rc = rollup_samples_merge(r, v, in, ve->nsamples, bound);
	free(in);
	return rc;
}

/* ---- counters ---- */

/* Add ve's counters, folding whichever of the two is larger. */
static int
rollup_hca_add(struct rollup_vital *v, const struct vitals_vital_epoch *ve)
{
	uint64_t *tmp;
	uint32_t i, m = ve->hca_size;

	if (m == 0 || ve->hca == NULL)
		return 0;
	if (v->hca_size == 0) {
		if ((v->hca = calloc(m, sizeof(*v->hca))) == NULL)
			return -ENOMEM;
		v->hca_size = m;
	}
	if (m < v->hca_size) {
		vitals_hca_fold(v->hca, v->hca_size, m);
		v->hca_size = m;
		rollup_samples_remap(v, m);
	}
	if (m == v->hca_size) {
		for (i = 0; i < m; i++)
			v->hca[i] += ve->hca[i];
		return 0;
	}
	if ((tmp = malloc(m * sizeof(*tmp))) == NULL)
		return -ENOMEM;
	memcpy(tmp, ve->hca, m * sizeof(*tmp));
	vitals_hca_fold(tmp, m, v->hca_size);
	for (i = 0; i < v->hca_size; i++)
		v->hca[i] += tmp[i];
	free(tmp);
	return 0;
}

/* The vital called name, inserted in name order if new; NULL on ENOMEM. */
static struct rollup_vital *
rollup_vital_get(struct rollup *r, const struct vitals_vital_epoch *ve)
{
	struct rollup_vital *v;
	uint32_t i;
	int c = 1;

	for (i = 0; i < r->nvitals; i++)
		if ((c = strcmp(r->vitals[i].name, ve->name)) >= 0)
			break;
	if (i < r->nvitals && c == 0)
		return &r->vitals[i];
	v = realloc(r->vitals, (r->nvitals + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	r->vitals = v;
	memmove(v + i + 1, v + i, (r->nvitals - i) * sizeof(*v));
	memset(&v[i], 0, sizeof(v[i]));
	r->nvitals++;
	v[i].name = strdup(ve->name);
	v[i].unit = strdup(ve->unit ? ve->unit : "");
	if (v[i].name == NULL || v[i].unit == NULL)
		return NULL;
	return &v[i];
}

static int
rollup_vital_add(struct rollup *r, const struct vitals_vital_epoch *ve)
{
	struct rollup_vital *v;
	int rc;

	if (ve->name == NULL || (v = rollup_vital_get(r, ve)) == NULL)
		return ve->name == NULL ? 0 : -ENOMEM;
	if (ve->threshold > v->threshold)
		v->threshold = ve->threshold;
	if (ve->floor > v->floor)
		v->floor = ve->floor;
	if (ve->unique > v->unique)
		v->unique = ve->unique;
	v->events += ve->events;
	v->wsum += ve->wsum;
	v->dropped += ve->dropped;
	v->samples_dropped += ve->samples_dropped;
	if ((rc = rollup_hca_add(v, ve)) != 0)
		return rc;
	return rollup_samples_add(r, v, ve);
}

/* ---- modules ---- */

/* FNV-1a over path, a NUL, then build_id. */
static uint32_t
rollup_module_hash(const char *path, const char *build_id)
{
	uint32_t h = 2166136261u;
	const char *p;

	for (p = path; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h *= 16777619u;
	for (p = build_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

/* Double the hash of module indexes (or make the first one). */
static int
rollup_mhash_grow(struct rollup *r)
{
	uint32_t size = r->mhash_size ? r->mhash_size * 2 : 64;
	uint32_t *t, i, j;
	const struct rollup_module *m;

	if ((t = calloc(size, sizeof(*t))) == NULL)
		return -ENOMEM;
	for (i = 0; i < r->nmodules; i++) {
		m = &r->modules[i];
		j = rollup_module_hash(m->path, m->build_id) & (size - 1);
		while (t[j] != 0)
			j = (j + 1) & (size - 1);
		t[j] = i + 1;
	}
	free(r->mhash);
	r->mhash = t;
	r->mhash_size = size;
	return 0;
}

/* The rollup's id of the file (path, build_id), added if new; -ENOMEM. */
static int64_t
rollup_module_id(struct rollup *r, const char *path, const char *build_id)
{
	struct rollup_module *m;
	uint32_t j, k;

	path = path ? path : "";
	build_id = build_id ? build_id : "";
	if ((r->nmodules + 1) * 2 > r->mhash_size && rollup_mhash_grow(r) != 0)
		return -ENOMEM;
	j = rollup_module_hash(path, build_id) & (r->mhash_size - 1);
	for (; (k = r->mhash[j]) != 0; j = (j + 1) & (r->mhash_size - 1)) {
		m = &r->modules[k - 1];
		if (strcmp(m->path, path) == 0 &&
		    strcmp(m->build_id, build_id) == 0)
			return k - 1;
	}
	m = realloc(r->modules, (r->nmodules + 1) * sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	r->modules = m;
	m = &r->modules[r->nmodules];
	m->path = strdup(path);
	m->build_id = strdup(build_id);
	if (m->path == NULL || m->build_id == NULL) {
		free(m->path);
		free(m->build_id);
		return -ENOMEM;
	}
	r->mhash[j] = ++r->nmodules;
	return r->nmodules - 1;
}

/* Map e's module ids to the rollup's, for the frames of its samples. */
static int
rollup_modules_map(struct rollup *r, const struct vitals_epoch *e)
{
	uint32_t i;
	int64_t id;

	free(r->in_ids);
	r->in_ids = NULL;
	r->in = e;
	if (e->nmodules == 0 || e->modules == NULL)
		return 0;
	if ((r->in_ids = calloc(e->nmodules, sizeof(*r->in_ids))) == NULL)
		return -ENOMEM;
	for (i = 0; i < e->nmodules; i++) {
		id = rollup_module_id(
		    r, e->modules[i].path, e->modules[i].build_id);
		if (id < 0)
			return (int)id;
		r->in_ids[i] = (uint32_t)id;
	}
	return 0;
}

/* ---- the accumulator ---- */

struct rollup *
rollup_new(uint64_t start_ns, uint32_t timescale_s, uint32_t max_samples)
{
	struct rollup *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->start_ns = start_ns;
	r->timescale_s = timescale_s;
	r->max_samples = max_samples;
	return r;
}

void
rollup_free(struct rollup *r)
{
	uint32_t i, j;

	if (r == NULL)
		return;
	for (i = 0; i < r->nvitals; i++) {
		for (j = 0; j < r->vitals[i].nsamples; j++)
			free(r->vitals[i].samples[j]);
		free(r->vitals[i].samples);
		free(r->vitals[i].hca);
		free(r->vitals[i].name);
		free(r->vitals[i].unit);
	}
	for (i = 0; i < r->nmodules; i++) {
		free(r->modules[i].path);
		free(r->modules[i].build_id);
	}
	free(r->modules);
	free(r->mhash);
	free(r->in_ids);
	free(r->vitals);
	free(r->host);
	epoch_free(r->pool);
	free(r);
}

static int
rollup_host(struct rollup *r, const char *host)
{
	host = host ? host : "";
	if (r->host != NULL && strcmp(r->host, host) == 0)
		return 0;
	free(r->host);
	r->host = strdup(r->nepochs == 0 ? host : "*");
	return r->host != NULL ? 0 : -ENOMEM;
}

/*
 * Strings and arrays the kept samples hold at most: exe, comm, frames,
 * their names' array and one name per frame.
 */
static uint64_t
rollup_names(const struct rollup *r)
{
	const struct vitals_sample *s;
	uint64_t n = 0;
	uint32_t i, j;

	for (i = 0; i < r->nvitals; i++)
		for (j = 0; j < r->vitals[i].nsamples; j++) {
			s = r->vitals[i].samples[j];
			n += 3;
			if (s->ksyms != NULL)
				n += 1 + s->nkstack + s->nustack;
		}
	return n;
}

/*
 * Move the kept samples' frames and strings to a new pool and free the
 * old one, which also holds those of samples since dropped.  Left as it
 * is when memory is short: the samples stay valid either way.
 */
static void
rollup_pool_compact(struct rollup *r)
{
	struct vitals_sample **tmp;
	struct vitals_epoch *p;
	uint32_t i, j, n;

	if ((p = epoch_new()) == NULL)
		return;
	if ((tmp = calloc(r->nvitals, sizeof(*tmp))) == NULL)
		goto fail;
	/* First copy everything: the samples change only if all fit. */
	for (i = 0; i < r->nvitals; i++) {
		n = r->vitals[i].nsamples;
		if (n == 0)
			continue;
		if ((tmp[i] = malloc(n * sizeof(**tmp))) == NULL)
			goto fail;
		for (j = 0; j < n; j++)
			if (epoch_copy_sample(
				p, &tmp[i][j], r->vitals[i].samples[j]) != 0)
				goto fail;
	}
	for (i = 0; i < r->nvitals; i++)
		for (j = 0; j < r->vitals[i].nsamples; j++)
			*r->vitals[i].samples[j] = tmp[i][j];
	epoch_free(r->pool);
	r->pool = p;
	p = NULL;
fail:
	for (i = 0; tmp != NULL && i < r->nvitals; i++)
		free(tmp[i]);
	free(tmp);
	epoch_free(p);
}

uint32_t
rollup_strings(const struct rollup *r)
{
	return r->pool != NULL ? epoch_interned(r->pool) : 0;
}

int
rollup_add(struct rollup *r, const struct vitals_epoch *e)
{
	uint32_t i;
	int rc;

	if ((rc = rollup_host(r, e->host)) != 0)
		return rc;
	if (r->nepochs++ == 0)
		r->seq = e->seq;
	r->length_ns += e->length_ns;
	r->dropped += e->dropped;
	r->cpu_ns += e->cpu_ns;
	r->partial |= e->partial;
	if ((rc = rollup_modules_map(r, e)) != 0)
		return rc;
	for (i = 0; i < e->nvitals; i++)
		if ((rc = rollup_vital_add(r, &e->vitals[i])) != 0)
			break;
	free(r->in_ids);
	r->in_ids = NULL;
	r->in = NULL;
	if (rc == 0 && rollup_strings(r) > 1024 &&
	    rollup_strings(r) > 2 * rollup_names(r))
		rollup_pool_compact(r);
	return rc;
}

uint32_t
rollup_count(const struct rollup *r)
{
	return r->nepochs;
}

uint64_t
rollup_start(const struct rollup *r)
{
	return r->start_ns;
}

/* ---- building epochs in an arena ---- */

/* How many of v's samples the rolled-up epoch keeps. */
static uint32_t
rollup_kept(const struct rollup *r, const struct rollup_vital *v)
{
	uint32_t bound = r->max_samples ? r->max_samples : v->max_in;

	return v->nsamples < bound ? v->nsamples : bound;
}

static int
rollup_finish_vital(const struct rollup *r, const struct rollup_vital *v,
    struct vitals_epoch *e, struct vitals_vital_epoch *d)
{
	const struct vitals_sample **src;
	uint32_t i, n = rollup_kept(r, v);
	uint64_t lc;

	d->name = epoch_intern(e, v->name);
	d->unit = epoch_intern(e, v->unit);
	d->threshold = v->threshold;
	d->floor = v->floor;
	d->events = v->events;
	d->wsum = v->wsum;
	d->dropped = v->dropped;
	d->samples_dropped = v->samples_dropped + (v->nsamples - n);
	lc = v->hca_size ? sketch_unique(v->hca, v->hca_size) : 0;
	d->unique = lc > v->unique ? lc : v->unique;
	if (d->name == NULL || d->unit == NULL ||
	    epoch_copy_hca(e, d, v->hca, v->hca_size) != 0)
		return -ENOMEM;
	if ((src = calloc((size_t)n + 1, sizeof(*src))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		src[i] = v->samples[i];
	d->samples = epoch_copy_samples(e, src, n, 0);
	free(src);
	d->nsamples = n;
	return n > 0 && d->samples == NULL ? -ENOMEM : 0;
}

/*
 * Mark in used[] (nmod entries) the modules the first n kept samples of v
 * have frames in, kernel images too.
 */
static void
rollup_modules_used(
    const struct rollup_vital *v, uint32_t n, uint8_t *used, uint32_t nmod)
{
	const struct vitals_sample *s;
	uint32_t i, j;
	int32_t id;

	for (i = 0; i < n; i++) {
		s = v->samples[i];
		for (j = 0; s->ustack != NULL && j < s->nustack; j++)
			if ((id = VITALS_UFRAME_MODULE(s->ustack[j])) >= 0)
				used[id] = 1;
		/* An older epoch's raw kernel address names no module. */
		for (j = 0; s->kstack != NULL && j < s->nkstack; j++)
			if ((id = VITALS_UFRAME_MODULE(s->kstack[j])) >= 0 &&
			    (uint32_t)id < nmod)
				used[id] = 1;
	}
}

/* The modules the kept samples have frames in, into e's arena. */
static int
rollup_finish_modules(const struct rollup *r, struct vitals_epoch *e)
{
	struct vitals_module *m = NULL;
	uint32_t i, n = 0;
	uint8_t *used;
	int rc = -ENOMEM;

	if (r->nmodules == 0)
		return 0;
	if ((used = calloc(r->nmodules, 1)) == NULL)
		return -ENOMEM;
	for (i = 0; i < r->nvitals; i++)
		rollup_modules_used(&r->vitals[i],
		    rollup_kept(r, &r->vitals[i]), used, r->nmodules);
	for (i = 0; i < r->nmodules; i++)
		n += used[i];
	if (n > 0 && (m = epoch_alloc(e, n * sizeof(*m))) == NULL)
		goto out;
	for (i = 0, n = 0; i < r->nmodules; i++) {
		if (!used[i])
			continue;
		m[n].id = i;
		m[n].path = epoch_intern(e, r->modules[i].path);
		m[n].build_id = epoch_intern(e, r->modules[i].build_id);
		if (m[n].path == NULL || m[n].build_id == NULL)
			goto out;
		n++;
	}
	e->modules = m;
	e->nmodules = n;
	rc = 0;
out:
	free(used);
	return rc;
}

int
rollup_finish(const struct rollup *r, struct vitals_epoch **out)
{
	struct vitals_vital_epoch *vv = NULL;
	struct vitals_epoch *e;
	uint32_t i;
	int rc = -ENOMEM;

	if (r->nepochs == 0)
		return -EINVAL;
	if ((e = epoch_new()) == NULL)
		return -ENOMEM;
	e->host = epoch_intern(e, r->host);
	e->start_ns = r->start_ns;
	e->length_ns = r->length_ns;
	e->timescale_s = r->timescale_s;
	e->partial =
	    r->partial || r->length_ns < (uint64_t)r->timescale_s * ROLLUP_NS;
	e->seq = r->seq;
	e->dropped = r->dropped;
	e->cpu_ns = r->cpu_ns;
	if (r->nvitals > 0 &&
	    (vv = epoch_alloc(e, r->nvitals * sizeof(*vv))) == NULL)
		goto fail;
	for (i = 0; i < r->nvitals; i++)
		if ((rc = rollup_finish_vital(r, &r->vitals[i], e, &vv[i])) !=
		    0)
			goto fail;
	if (e->host == NULL || (rc = rollup_finish_modules(r, e)) != 0)
		goto fail;
	e->vitals = vv;
	e->nvitals = r->nvitals;
	epoch_seal(e);
	*out = e;
	return 0;
fail:
	epoch_free(e);
	return rc;
}

int
vitals_epoch_rollup(const struct vitals_epoch *const *v, size_t n,
    uint64_t start_ns, uint32_t timescale_s, uint32_t max_samples,
    struct vitals_epoch **out)
{
	struct rollup *r;
	size_t i;
	int rc = 0;

	if (n == 0 || v == NULL)
		return -EINVAL;
	if ((r = rollup_new(start_ns, timescale_s, max_samples)) == NULL)
		return -ENOMEM;
	for (i = 0; i < n && rc == 0; i++)
		rc = rollup_add(r, v[i]);
	if (rc == 0)
		rc = rollup_finish(r, out);
	rollup_free(r);
	return rc;
}

/* Whether host is one of hosts[0..n) (n 0: every host). */
static int
rollup_host_wanted(const char *const *hosts, uint32_t n, const char *host)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strcmp(hosts[i], host) == 0)
			return 1;
	return n == 0;
}

int
vitals_range_rollup(const char *data_dir, uint64_t from_ns, uint64_t to_ns,
    const char *const *hosts, uint32_t nhosts, uint32_t max_samples,
    struct vitals_epoch **out, char *err, size_t errlen)
{
	struct vitals_store_list l;
	struct vitals_epoch *e;
	struct rollup *ru;
	char why[1024];
	size_t i;
	int r;

	if (to_ns <= from_ns)
		return -EINVAL;
	if ((r = vitals_store_list(data_dir, &l)) != 0) {
		snprintf(err, errlen, "%s: %s", data_dir,
		    r == -ENOENT ? "no such data directory" : strerror(-r));
		return r;
	}
	ru = rollup_new(from_ns, (uint32_t)((to_ns - from_ns) / 1000000000ull),
	    max_samples);
	for (i = 0, r = 0; ru != NULL && r == 0 && i < l.n; i++) {
		if (l.v[i].start_ns < from_ns || l.v[i].start_ns >= to_ns ||
		    !rollup_host_wanted(hosts, nhosts, l.v[i].host))
			continue;
		if (vitals_epoch_load(l.v[i].path, &e, why, sizeof(why)) != 0)
			continue; /* corrupt files are skipped, as everywhere */
		r = rollup_add(ru, e);
		vitals_epoch_free(e);
	}
	vitals_store_list_free(&l);
	r = ru == NULL || r != 0    ? -ENOMEM
	    : rollup_count(ru) == 0 ? -ENODATA
				    : rollup_finish(ru, out);
	rollup_free(ru);
	if (r == -ENODATA)
		snprintf(err, errlen,
		    "no readable epochs in the range under %s", data_dir);
	else if (r != 0)
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}
