/* SPDX-License-Identifier: MIT */
/*
 * The in-memory epoch: the arena an epoch lives in (allocation, interning,
 * sealing, freeing), deep copies into one, and lookups in a read-only
 * epoch.  The decoders, the rollups and the aggregator's queues build
 * their epochs here; unit tests of a filter link this file alone.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "epoch.h"

/*
 * Arena chunk size; requests of EPOCH_OWN or more get a chunk of their
 * own.  Small, as a queue holds a hundred epochs whose last chunk is
 * partly used; the large requests (HCAs, sample arrays) apart, so that a
 * chunk is not left behind part-used for one that does not fit.
 */
#define EPOCH_CHUNK (16 * 1024)
#define EPOCH_OWN (EPOCH_CHUNK / 8)

/* A block of the arena a decoded epoch lives in. */
struct epoch_chunk {
	struct epoch_chunk *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

/*
 * A string or byte array of an arena, in the arena's table of them; len
 * has EPOCH_BYTES set for a byte array, which has no NUL after it.
 */
struct epoch_str {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

#define EPOCH_BYTES 0x80000000u

/* Chunks of memory, and the strings and arrays interned in them. */
struct epoch_arena {
	struct epoch_chunk *chunks;
	/*
	 * The arena's strings and stack arrays, each stored once (open
	 * addressing, size a power of two or 0): a thousand samples name the
	 * same few hundred functions, exes and threads, and many share their
	 * frames or their frames' names.  Freed on sealing.
	 */
	struct epoch_str *strs;
	uint32_t nstrs, strs_size;
};

/*
 * An arena that copies of epochs intern in together (epoch_copy_pooled),
 * freed with the last reference: a queue's epochs name the same
 * functions, exes and threads, and many have the same frames.
 */
struct epoch_pool {
	struct epoch_arena a;
	atomic_uint refs;
};

/*
 * A decoded epoch and everything it points to: the epoch comes first so
 * epoch_free can get back from it to the arena.
 */
struct epoch_owner {
	struct vitals_epoch epoch;
	struct epoch_arena a;
	struct epoch_pool *pool; /* a reference: strings interned there */
};

/* ---- the arena of a decoded epoch ---- */

/* n zeroed bytes owned by arena o; NULL for n == 0 or out of memory. */
static void *
epoch_arena_alloc(struct epoch_arena *o, size_t n)
{
	const size_t align = _Alignof(max_align_t);
	struct epoch_chunk *c = o->chunks;
	size_t size;
	void *p;

	if (n == 0)
		return NULL;
	n = (n + align - 1) / align * align;
	if (n >= EPOCH_OWN || c == NULL || c->size - c->used < n) {
		size = n >= EPOCH_OWN ? n : EPOCH_CHUNK;
		if ((c = malloc(sizeof(*c) + size)) == NULL)
			return NULL;
		c->used = 0;
		c->size = size;
		/* A chunk of its own goes behind the one being filled. */
		if (n >= EPOCH_OWN && o->chunks != NULL) {
			c->next = o->chunks->next;
			o->chunks->next = c;
		} else {
			c->next = o->chunks;
			o->chunks = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return memset(p, 0, n);
}

/* Double o's string table (256 entries first); 0 or -ENOMEM. */
static int
epoch_strs_grow(struct epoch_arena *o)
{
	uint32_t size = o->strs_size ? o->strs_size * 2 : 256, i, j;
	struct epoch_str *v;

	if ((v = calloc(size, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < o->strs_size; i++) {
		if (o->strs[i].s == NULL)
			continue;
		for (j = o->strs[i].hash & (size - 1); v[j].s != NULL;
		     j = (j + 1) & (size - 1))
			;
		v[j] = o->strs[i];
	}
	free(o->strs);
	o->strs = v;
	o->strs_size = size;
	return 0;
}

/*
 * The arena's copy of p[0..n), shared with every equal one stored before:
 * with a NUL after it for a string (bytes 0), without for a byte array
 * (bytes EPOCH_BYTES).  A string with a NUL inside is copied alone.  NULL
 * when out of memory.
 */
static void *
epoch_intern_as(struct epoch_arena *o, const void *p, size_t n, uint32_t bytes)
{
	const unsigned char *b = p;
	uint32_t h = 2166136261u ^ bytes, i, len = (uint32_t)n | bytes;
	char *d;

	if (n >= EPOCH_BYTES || (!bytes && memchr(p, '\0', n) != NULL))
		goto alone;
	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	/* Found, it costs nothing: only a new entry may grow the table. */
	for (i = h & (o->strs_size - 1);
	     o->strs_size > 0 && o->strs[i].s != NULL;
	     i = (i + 1) & (o->strs_size - 1))
		if (o->strs[i].hash == h && o->strs[i].len == len &&
		    memcmp(o->strs[i].s, p, n) == 0)
			return (void *)(uintptr_t)o->strs[i].s;
	if (o->nstrs >= o->strs_size / 2) {
		if (epoch_strs_grow(o) != 0)
			goto alone;
		for (i = h & (o->strs_size - 1); o->strs[i].s != NULL;
		     i = (i + 1) & (o->strs_size - 1))
			;
	}
	if ((d = epoch_arena_alloc(o, n + !bytes)) == NULL)
		return NULL;
	memcpy(d, p, n);
	o->strs[i] = (struct epoch_str){ d, len, h };
	o->nstrs++;
	return d;
alone:
	if ((d = epoch_arena_alloc(o, n + !bytes)) != NULL)
		memcpy(d, p, n);
	return d;
}

/* The arena o interns in: its pool's, if it has one. */
static struct epoch_arena *
epoch_owner_strs(struct epoch_owner *o)
{
	return o->pool != NULL ? &o->pool->a : &o->a;
}

/* epoch_intern_as() of the string s[0..n). */
static const char *
epoch_owner_intern(struct epoch_owner *o, const char *s, size_t n)
{
	return epoch_intern_as(epoch_owner_strs(o), s, n, 0);
}

/* Free arena o's chunks and table (not o itself). */
static void
epoch_arena_free(struct epoch_arena *o)
{
	struct epoch_chunk *c, *next;

	for (c = o->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(o->strs);
}

/* Free o's table: its strings stay, and interning starts a new one. */
static void
epoch_arena_seal(struct epoch_arena *o)
{
	free(o->strs);
	o->strs = NULL;
	o->nstrs = o->strs_size = 0;
}

struct epoch_pool *
epoch_pool_new(void)
{
	struct epoch_pool *p;

	if ((p = calloc(1, sizeof(*p))) != NULL)
		atomic_init(&p->refs, 1);
	return p;
}

void
epoch_pool_seal(struct epoch_pool *p)
{
	if (p != NULL)
		epoch_arena_seal(&p->a);
}

void
epoch_pool_put(struct epoch_pool *p)
{
	if (p == NULL || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	epoch_arena_free(&p->a);
	free(p);
}

/* The owner of an epoch from epoch_new or codec_epoch_from_json. */
static struct epoch_owner *
epoch_owner_of(const struct vitals_epoch *e)
{
	return (struct epoch_owner *)(uintptr_t)((const char *)e -
	    offsetof(struct epoch_owner, epoch));
}

/*
 * Free an epoch made by codec_epoch_from_json, and all it points to, in
 * one go; accepts NULL.  Only for decoded epochs (vitals_epoch_free calls
 * it): the engine's epochs are allocated differently.
 */
void
epoch_free(struct vitals_epoch *e)
{
	struct epoch_owner *o;

	if (e == NULL)
		return;
	o = epoch_owner_of(e);
	epoch_arena_free(&o->a);
	epoch_pool_put(o->pool);
	free(o);
}

/*
 * A new, zeroed epoch in an arena of its own, to be filled with
 * epoch_alloc (rollups and copies are built this way, so that
 * vitals_epoch_free frees them like loaded epochs).  NULL when out of
 * memory.
 */
struct vitals_epoch *
epoch_new(void)
{
	struct epoch_owner *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	return &o->epoch;
}

/*
 * n zeroed bytes owned by e, which came from epoch_new or
 * codec_epoch_from_json; freed with it.  NULL for n == 0 or out of memory.
 */
void *
epoch_alloc(struct vitals_epoch *e, size_t n)
{
	struct epoch_owner *o;

	o = epoch_owner_of(e);
	return epoch_arena_alloc(&o->a, n);
}

/*
 * s (NULL reads as "") in e's arena, stored once however many times it is
 * asked for; e as for epoch_alloc.  NULL when out of memory.
 */
const char *
epoch_intern(struct vitals_epoch *e, const char *s)
{
	struct epoch_owner *o;

	o = epoch_owner_of(e);
	if (s == NULL)
		s = "";
	return epoch_owner_intern(o, s, strlen(s));
}

/*
 * s[0..n) in e's arena, stored once however many times it is asked for;
 * e as for epoch_alloc.  NULL when out of memory.
 */
const char *
epoch_intern_n(struct vitals_epoch *e, const char *s, size_t n)
{
	return epoch_owner_intern(epoch_owner_of(e), s, n);
}

/*
 * p[0..n) (n > 0) in e's arena, stored once however many times it is
 * asked for; e as for epoch_alloc.  NULL when out of memory.
 */
const void *
epoch_intern_bytes(struct vitals_epoch *e, const void *p, size_t n)
{
	struct epoch_owner *o;

	o = epoch_owner_of(e);
	return n > 0 ? epoch_intern_as(epoch_owner_strs(o), p, n, EPOCH_BYTES)
		     : NULL;
}

/* Strings and arrays in e's interning table: 0 once sealed. */
uint32_t
epoch_interned(const struct vitals_epoch *e)
{
	return epoch_owner_of(e)->a.nstrs;
}

/*
 * Free the table that makes e's strings and arrays shared, once e is
 * built: it is as large as a tenth of a queued epoch.  Interning again
 * starts a new one (sharing only from then on).
 */
void
epoch_seal(struct vitals_epoch *e)
{
	struct epoch_owner *o;

	if (e == NULL)
		return;
	o = epoch_owner_of(e);
	epoch_arena_seal(&o->a);
}

/*
 * d's exe and thread, and its frames' names into syms (if s has names),
 * as s's interned in e; d may be s.  0 or -ENOMEM.
 */
int
epoch_intern_names(struct vitals_epoch *e, struct vitals_sample *d,
    const struct vitals_sample *s, const char **syms)
{
	uint32_t i;

	for (i = 0; s->ksyms != NULL && i < s->nkstack + s->nustack; i++)
		if ((syms[i] = epoch_intern(e, s->ksyms[i])) == NULL)
			return -ENOMEM;
	d->exe = epoch_intern(e, s->exe);
	d->comm = epoch_intern(e, s->comm);
	return d->exe != NULL && d->comm != NULL ? 0 : -ENOMEM;
}

/* ---- building epochs in an arena ---- */

int
epoch_copy_sample(struct vitals_epoch *e, struct vitals_sample *d,
    const struct vitals_sample *s)
{
	uint64_t buf[2 * VITALS_STACK_MAX], *f = buf;
	const char *sbuf[2 * VITALS_STACK_MAX], **syms = sbuf;
	const uint64_t *fa = NULL;
	uint32_t nk = s->nkstack, nf = nk + s->nustack;
	/* Deeper than stored stacks (cut on writing): copied, not shared. */
	int deep = nf > 2 * VITALS_STACK_MAX;

	*d = *s;
	if (deep) {
		f = epoch_alloc(e, nf * sizeof(*f));
		if (s->ksyms != NULL)
			syms = epoch_alloc(e, nf * sizeof(*syms));
		if (f == NULL || syms == NULL)
			return -ENOMEM;
	}
	if (nf > 0) {
		/* A side of no frames may have no array: memcpy wants one. */
		if (nk > 0)
			memcpy(f, s->kstack, nk * sizeof(*f));
		if (nf > nk)
			memcpy(f + nk, s->ustack, (nf - nk) * sizeof(*f));
		fa = deep ? f : epoch_intern_bytes(e, f, nf * sizeof(*f));
		if (fa == NULL)
			return -ENOMEM;
	}
	d->kstack = nk ? fa : NULL;
	d->ustack = s->nustack ? fa + nk : NULL;
	d->ksyms = NULL;
	if (epoch_intern_names(e, d, s, syms) != 0)
		return -ENOMEM;
	if (s->ksyms == NULL)
		return 0;
	/* Empty stacks still give a non-NULL array. */
	if (nf == 0)
		d->ksyms = epoch_alloc(e, 1);
	else if (deep)
		d->ksyms = syms;
	else
		d->ksyms = epoch_intern_bytes(e, syms, nf * sizeof(*syms));
	return d->ksyms != NULL ? 0 : -ENOMEM;
}

/* Copy samples src[0..n) into e's arena; their slots masked to m. */
const struct vitals_sample *
epoch_copy_samples(struct vitals_epoch *e,
    const struct vitals_sample *const *src, uint32_t n, uint32_t m)
{
	struct vitals_sample *d;
	uint32_t i;

	if (n == 0)
		return NULL;
	if ((d = epoch_alloc(e, n * sizeof(*d))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (epoch_copy_sample(e, &d[i], src[i]) != 0)
			return NULL;
		if (m != 0)
			d[i].slot &= m - 1;
	}
	return d;
}

/* d's HCA of m counters, a copy of hca (zeros for NULL); 0 or -ENOMEM. */
int
epoch_copy_hca(struct vitals_epoch *e, struct vitals_vital_epoch *d,
    const uint64_t *hca, uint32_t m)
{
	uint64_t *h;

	d->hca_size = m;
	d->hca = NULL;
	if (m == 0)
		return 0;
	if ((h = epoch_alloc(e, m * sizeof(*h))) == NULL)
		return -ENOMEM;
	if (hca != NULL)
		memcpy(h, hca, m * sizeof(*h));
	d->hca = h;
	return 0;
}

/* ---- deep copies ---- */

static int
epoch_u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * d's HCA of only the slots its n samples (copied already) are in, if
 * fewer counters hold them than s's HCA has: the distinct slots in order
 * become 0, 1, ... of an HCA of the least power of two counters that
 * holds them, each with s's counter (0 for a slot past s's HCA, as a
 * reader has it), the samples' slots renumbered to match.  Otherwise a
 * copy of s's HCA.  0 or -ENOMEM.
 */
static int
epoch_copy_hca_of_samples(struct vitals_epoch *e, struct vitals_vital_epoch *d,
    const struct vitals_vital_epoch *s, struct vitals_sample *samples,
    uint32_t n)
{
	uint32_t *slots, i, k, m = 1, lo, hi, mid;

	if (s->hca == NULL || n >= s->hca_size)
		return epoch_copy_hca(e, d, s->hca, s->hca_size);
	if ((slots = malloc((n ? n : 1) * sizeof(*slots))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		slots[i] = samples[i].slot;
	qsort(slots, n, sizeof(*slots), epoch_u32_cmp);
	for (i = 0, k = 0; i < n; i++)
		if (k == 0 || slots[k - 1] != slots[i])
			slots[k++] = slots[i];
	while (m < k)
		m *= 2;
	if (m >= s->hca_size) {
		free(slots);
		return epoch_copy_hca(e, d, s->hca, s->hca_size);
	}
	if (epoch_copy_hca(e, d, NULL, m) != 0) {
		free(slots);
		return -ENOMEM;
	}
	for (i = 0; i < k; i++)
		((uint64_t *)d->hca)[i] =
		    slots[i] < s->hca_size ? s->hca[slots[i]] : 0;
	for (i = 0; i < n; i++) {
		for (lo = 0, hi = k; hi - lo > 1;) {
			mid = lo + (hi - lo) / 2;
			if (slots[mid] <= samples[i].slot)
				lo = mid;
			else
				hi = mid;
		}
		samples[i].slot = lo;
	}
	free(slots);
	return 0;
}

static int
epoch_copy_vital(struct vitals_epoch *e, struct vitals_vital_epoch *d,
    const struct vitals_vital_epoch *s, epoch_pick_fn pick, void *arg)
{
	const struct vitals_sample **src;
	uint32_t i, n;

	*d = *s;
	d->name = epoch_intern(e, s->name);
	d->unit = epoch_intern(e, s->unit);
	if (d->name == NULL || d->unit == NULL)
		return -ENOMEM;
	d->samples = NULL;
	if (s->nsamples == 0 || s->samples == NULL) {
		d->nsamples = 0;
		return pick != NULL
		    ? epoch_copy_hca_of_samples(e, d, s, NULL, 0)
		    : epoch_copy_hca(e, d, s->hca, s->hca_size);
	}
	if ((src = calloc(s->nsamples, sizeof(*src))) == NULL)
		return -ENOMEM;
	n = s->nsamples;
	for (i = 0; i < n; i++)
		src[i] = &s->samples[i];
	if (pick != NULL && pick(s, src, &n, arg) != 0) {
		free(src);
		return -ENOMEM;
	}
	d->nsamples = n;
	d->samples = n > 0 ? epoch_copy_samples(e, src, n, 0) : NULL;
	free(src);
	if (n > 0 && d->samples == NULL)
		return -ENOMEM;
	return pick != NULL ? epoch_copy_hca_of_samples(e, d, s,
				  (struct vitals_sample *)d->samples, n)
			    : epoch_copy_hca(e, d, s->hca, s->hca_size);
}

static int
epoch_copy_finding(struct vitals_epoch *e, struct vitals_finding *d,
    const struct vitals_finding *s)
{
	*d = *s;
	d->filter = epoch_intern(e, s->filter);
	d->vital = s->vital ? epoch_intern(e, s->vital) : NULL;
	d->label = s->label ? epoch_intern(e, s->label) : NULL;
	d->text = epoch_intern(e, s->text);
	if (!d->filter || !d->text || (s->vital && !d->vital) ||
	    (s->label && !d->label))
		return -ENOMEM;
	return 0;
}

/* The named metrics of s into e's arena (the pointers s holds are not e's). */
static int
epoch_copy_metrics(struct vitals_epoch *e, const struct vitals_epoch *s)
{
	struct vitals_metric *m;
	uint32_t i;

	e->metrics = NULL;
	e->nmetrics = 0;
	if (s->nmetrics == 0 || s->metrics == NULL)
		return 0;
	if ((m = epoch_alloc(e, s->nmetrics * sizeof(*m))) == NULL)
		return -ENOMEM;
	for (i = 0; i < s->nmetrics; i++) {
		m[i] = s->metrics[i];
		if ((m[i].name = epoch_intern(e, s->metrics[i].name)) == NULL ||
		    (m[i].unit = epoch_intern(e, s->metrics[i].unit)) == NULL)
			return -ENOMEM;
	}
	e->metrics = m;
	e->nmetrics = s->nmetrics;
	return 0;
}

/* The modules table of s into e's arena. */
static int
epoch_copy_modules(struct vitals_epoch *e, const struct vitals_epoch *s)
{
	struct vitals_module *m;
	uint32_t i;

	e->modules = NULL;
	e->nmodules = 0;
	if (s->nmodules == 0 || s->modules == NULL)
		return 0;
	if ((m = epoch_alloc(e, s->nmodules * sizeof(*m))) == NULL)
		return -ENOMEM;
	for (i = 0; i < s->nmodules; i++) {
		m[i].id = s->modules[i].id;
		if ((m[i].path = epoch_intern(e, s->modules[i].path)) == NULL ||
		    (m[i].build_id = epoch_intern(e, s->modules[i].build_id)) ==
			NULL)
			return -ENOMEM;
	}
	e->modules = m;
	e->nmodules = s->nmodules;
	return 0;
}

/*
 * A deep copy of s (borrowed) in an arena of its own, its strings and
 * frame arrays shared there or in pool, sealed: free with
 * vitals_epoch_free.  NULL when out of memory.
 */
struct vitals_epoch *
epoch_copy_pooled(const struct vitals_epoch *s, epoch_pick_fn pick, void *arg,
    struct epoch_pool *pool)
{
	struct vitals_vital_epoch *vv = NULL;
	struct vitals_finding *ff = NULL;
	struct vitals_epoch *e;
	uint32_t i;

	if ((e = epoch_new()) == NULL)
		return NULL;
	if (pool != NULL) {
		atomic_fetch_add(&pool->refs, 1);
		epoch_owner_of(e)->pool = pool;
	}
	*e = *s;
	e->host = epoch_intern(e, s->host);
	if (s->nvitals > 0 &&
	    (vv = epoch_alloc(e, s->nvitals * sizeof(*vv))) == NULL)
		goto fail;
	if (s->nfindings > 0 &&
	    (ff = epoch_alloc(e, s->nfindings * sizeof(*ff))) == NULL)
		goto fail;
	for (i = 0; i < s->nvitals; i++)
		if (epoch_copy_vital(e, &vv[i], &s->vitals[i], pick, arg) != 0)
			goto fail;
	for (i = 0; i < s->nfindings; i++)
		if (epoch_copy_finding(e, &ff[i], &s->findings[i]) != 0)
			goto fail;
	if (e->host == NULL || epoch_copy_metrics(e, s) != 0 ||
	    epoch_copy_modules(e, s) != 0)
		goto fail;
	e->vitals = vv;
	e->findings = ff;
	epoch_seal(e);
	return e;
fail:
	epoch_free(e);
	return NULL;
}

struct vitals_epoch *
epoch_copy(const struct vitals_epoch *s)
{
	return epoch_copy_pooled(s, NULL, NULL, NULL);
}

/* ---- lookups ---- */

/*
 * The vital called name in e, borrowed from e, or NULL.  A linear search:
 * epochs hold a dozen vitals, and one built by hand may not be sorted.
 */
const struct vitals_vital_epoch *
vitals_epoch_vital(const struct vitals_epoch *e, const char *name)
{
	uint32_t i;

	for (i = 0; e != NULL && name != NULL && i < e->nvitals; i++)
		if (e->vitals[i].name != NULL &&
		    strcmp(e->vitals[i].name, name) == 0)
			return &e->vitals[i];
	return NULL;
}

/*
 * The metric called name in e, borrowed from e, or NULL.  A binary search:
 * an epoch may hold thousands of metrics, and the engine and the decoder
 * both hand them out sorted by name.
 */
const struct vitals_metric *
vitals_epoch_metric(const struct vitals_epoch *e, const char *name)
{
	uint32_t lo = 0, hi, mid;
	int c;

	if (e == NULL || name == NULL || e->metrics == NULL)
		return NULL;
	hi = e->nmetrics;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(e->metrics[mid].name, name)) == 0)
			return &e->metrics[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The module with id in e, borrowed from e, or NULL.  A binary search: the
 * engine and the decoder both hand modules out sorted by id.
 */
const struct vitals_module *
vitals_epoch_module(const struct vitals_epoch *e, uint32_t id)
{
	uint32_t lo = 0, hi, mid;

	if (e == NULL || e->modules == NULL)
		return NULL;
	hi = e->nmodules;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (e->modules[mid].id == id)
			return &e->modules[mid];
		if (e->modules[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
