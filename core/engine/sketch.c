/* SPDX-License-Identifier: MIT */
/*
 * The sketch of one vital for one epoch (paper 4.1.2-4.1.4): a hashed
 * counter array incremented by event weights, logarithmic sampling when a
 * counter crosses a power of t, and a first-sighting filter so a label
 * that collides with a heavier one in the HCA still gets its first sample.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/hash.h>

#include "sketch.h"

static int
sketch_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static uint32_t
sketch_log2(uint64_t x)
{
	return 63 - (uint32_t)__builtin_clzll(x);
}

/* Frame slots a sample may take: stack_depth per side, at least one. */
static size_t
sketch_depth2(const struct sketch_params *p)
{
	return 2 * (size_t)(p->stack_depth ? p->stack_depth : 1);
}

/* Bytes of a sample in the store besides its frames; of one frame. */
#define SKETCH_SAMPLE_FIXED \
	(sizeof(struct vitals_sample) + VITALS_COMM_LEN + sizeof(uint32_t))
#define SKETCH_FRAME_BYTES (sizeof(uint64_t) + sizeof(char *))

size_t
sketch_sample_bytes(const struct sketch_params *p)
{
	return SKETCH_SAMPLE_FIXED + sketch_depth2(p) * SKETCH_FRAME_BYTES;
}

uint32_t
sketch_seen_bits(const struct sketch_params *p, uint32_t m)
{
	uint64_t b = (uint64_t)m * SKETCH_SEEN_PER_COUNTER;

	return b > p->seen_bits ? (uint32_t)b : p->seen_bits;
}

/* The most counters the sketch may have. */
static uint32_t
sketch_max(const struct sketch_params *p)
{
	return p->hca_max > p->hca_size ? p->hca_max : p->hca_size;
}

size_t
sketch_bytes(const struct sketch_params *p)
{
	size_t n;

	n = sizeof(struct sketch);
	n += (size_t)sketch_max(p) * sizeof(uint64_t);
	n += sketch_seen_bits(p, sketch_max(p)) / 8;
	n += (size_t)p->max_samples * sketch_sample_bytes(p);
	n += sketch_exes_bytes(SKETCH_EXE_SLOTS, SKETCH_POOL_BYTES);
	return n;
}

size_t
sketch_exes_bytes(uint32_t nslots, uint32_t size)
{
	return (size_t)nslots * sizeof(struct sketch_exe) + size;
}

void
sketch_exes_reset(struct sketch_exes *x)
{
	if (x->slot == NULL)
		return;
	memset(x->slot, 0, x->nslots * sizeof(*x->slot));
	x->pool[0] = '\0';
	x->used = 1; /* offset 0 is the empty string */
}

void
sketch_exes_free(struct sketch_exes *x)
{
	free(x->slot);
	free(x->pool);
	x->slot = NULL;
	x->pool = NULL;
}

/* Bytes of the first SKETCH_FIRST samples' store. */
static size_t
sketch_first_bytes(const struct sketch_params *p)
{
	return SKETCH_FIRST * sketch_sample_bytes(p);
}

/* Bytes of the sample store: samples and frames it has room for. */
static size_t
sketch_store_bytes(const struct sketch *s)
{
	return (size_t)s->cap * SKETCH_SAMPLE_FIXED +
	    (size_t)s->fcap * SKETCH_FRAME_BYTES;
}

size_t
sketch_held(const struct sketch *s)
{
	size_t n = sizeof(*s) + (size_t)s->p.hca_size * sizeof(uint64_t);

	if (s->seen != NULL)
		n += s->p.seen_bits / 8;
	if (s->own.slot != NULL)
		n += sketch_exes_bytes(s->own.nslots, s->own.size);
	return n + sketch_store_bytes(s);
}

struct sketch *
sketch_new(const struct sketch_params *p, struct sketch_budget *b)
{
	struct sketch *s;

	if (!sketch_pow2(p->hca_size) || !sketch_pow2(p->seen_bits) ||
	    (p->hca_max != 0 && !sketch_pow2(p->hca_max)) ||
	    p->seen_bits < 64 || p->max_samples == 0 ||
	    p->stack_depth > VITALS_STACK_MAX || p->floor == 0)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->p = *p;
	s->p.hca_max = sketch_max(p);
	s->p.seen_bits = sketch_seen_bits(p, p->hca_size);
	s->seen_min = p->seen_bits;
	s->budget = b;
	s->seen_shift = 64 - sketch_log2(s->p.seen_bits);
	s->own.nslots = SKETCH_EXE_SLOTS;
	s->own.size = SKETCH_POOL_BYTES;
	s->exes = &s->own;
	if (b != NULL)
		b->kept += sketch_first_bytes(&s->p);
	if ((s->hca = calloc(p->hca_size, sizeof(uint64_t))) == NULL) {
		sketch_free(s);
		return NULL;
	}
	sketch_reset(s);
	return s;
}

/* Point the samples at their frames, thread and names after a move. */
static void
sketch_rebase(struct sketch *s)
{
	struct vitals_sample *sm;
	uint32_t i;

	for (i = 0; i < s->nsamples; i++) {
		sm = &s->samples[i];
		sm->kstack = s->frames + s->foff[i];
		sm->ustack = sm->kstack + sm->nkstack;
		sm->comm = s->comms + (size_t)i * VITALS_COMM_LEN;
		if (sm->ksyms != NULL)
			sm->ksyms = s->syms + s->foff[i];
	}
}

/* *p resized to n elements of size each (at least one); 0 or -ENOMEM. */
static int
sketch_realloc(void *p, size_t n, size_t size)
{
	void *v;

	if ((v = realloc(*(void **)p, (n ? n : 1) * size)) == NULL)
		return -ENOMEM;
	*(void **)p = v;
	return 0;
}

/*
 * Room for cap samples and fcap frames, keeping what the store holds;
 * 0 or -ENOMEM, with the store as it was (arrays that moved are followed,
 * arrays grown beyond their room are harmless).  The budget is charged
 * or credited the difference.
 */
static int
sketch_resize(struct sketch *s, uint32_t cap, uint32_t fcap)
{
	size_t was = sketch_store_bytes(s);
	int r = 0;

	if (cap != s->cap &&
	    (sketch_realloc(&s->samples, cap, sizeof(*s->samples)) != 0 ||
		sketch_realloc(&s->comms, cap, VITALS_COMM_LEN) != 0 ||
		sketch_realloc(&s->foff, cap, sizeof(*s->foff)) != 0))
		r = -ENOMEM;
	if (r == 0 && fcap != s->fcap &&
	    (sketch_realloc(&s->frames, fcap, sizeof(*s->frames)) != 0 ||
		(s->syms != NULL &&
		    sketch_realloc(&s->syms, fcap, sizeof(*s->syms)) != 0)))
		r = -ENOMEM;
	sketch_rebase(s);
	if (r != 0)
		return r;
	/* Its first store: what was kept for it is now used. */
	if (s->budget != NULL && s->cap == 0 && cap > 0)
		s->budget->kept -= sketch_first_bytes(&s->p);
	s->cap = cap;
	s->fcap = fcap;
	if (s->budget != NULL) {
		s->budget->used -= was;
		s->budget->used += sketch_store_bytes(s);
	}
	return 0;
}

/* Bytes the budget has room for. */
static size_t
sketch_room(const struct sketch *s)
{
	const struct sketch_budget *b = s->budget;

	if (b == NULL || b->limit == 0)
		return SIZE_MAX;
	return b->used + b->kept < b->limit ? b->limit - b->used - b->kept : 0;
}

/*
 * Room for one more sample of nf frames: the samples or the frames
 * doubled (the first SKETCH_FIRST samples' worth whatever the budget),
 * within max_samples and what the budget has.  0, -ENOSPC or -ENOMEM.
 */
static int
sketch_grow(struct sketch *s, uint32_t nf)
{
	size_t room = sketch_room(s),
	       first = SKETCH_FIRST * sketch_depth2(&s->p);
	uint32_t cap = s->cap, fcap = s->fcap;

	if (s->nsamples == cap) {
		cap = cap ? 2 * cap : SKETCH_FIRST;
		if (cap > s->p.max_samples)
			cap = s->p.max_samples;
		if (s->cap > 0 &&
		    (size_t)(cap - s->cap) * SKETCH_SAMPLE_FIXED > room)
			cap = s->cap + (uint32_t)(room / SKETCH_SAMPLE_FIXED);
		if (cap <= s->nsamples)
			return -ENOSPC;
		room -= s->cap > 0 ? (cap - s->cap) * SKETCH_SAMPLE_FIXED : 0;
	}
	if (s->nframes + nf > fcap || fcap == 0) {
		fcap = fcap ? 2 * fcap : (uint32_t)first;
		if (fcap < s->nframes + nf)
			fcap = s->nframes + nf;
		if (s->fcap > 0 &&
		    (size_t)(fcap - s->fcap) * SKETCH_FRAME_BYTES > room)
			fcap = s->fcap + (uint32_t)(room / SKETCH_FRAME_BYTES);
		if (fcap < s->nframes + nf)
			return -ENOSPC;
	}
	return sketch_resize(s, cap, fcap);
}

/*
 * Whether one more sample of nf frames fits: under bound samples, and in
 * the arrays or in what the budget leaves them to grow by.  (sketch_grow
 * may still fail where the room is split between the two.)
 */
static int
sketch_fits(const struct sketch *s, uint32_t nf, uint32_t bound)
{
	size_t need = 0;

	if (s->nsamples >= bound)
		return 0;
	if (s->cap > 0 && s->nsamples == s->cap)
		need += SKETCH_SAMPLE_FIXED;
	if (s->fcap > 0 && s->nframes + nf > s->fcap)
		need +=
		    (size_t)(s->nframes + nf - s->fcap) * SKETCH_FRAME_BYTES;
	return need <= sketch_room(s);
}

int
sketch_full(const struct sketch *s)
{
	/*
	 * Not "no room for a sample of the deepest stacks": the kernel then
	 * stops sending first sightings while shallower ones still fit, and
	 * a fault's first epoch lost its sample (tests/calm.sh's leak).
	 * Records that do not fit are dropped before they are made
	 * (sketch_would_keep).
	 */
	return s->nsamples >= s->limit || !sketch_fits(s, 0, s->limit);
}

/* The two bits of label hash h in the filter of sampled labels. */
static void
sketch_sampled_bits(uint64_t h, uint32_t *b1, uint32_t *b2)
{
	*b1 = (uint32_t)(h >> 17) & (SKETCH_SAMPLED_BITS - 1);
	*b2 = (uint32_t)(h >> 49) & (SKETCH_SAMPLED_BITS - 1);
}

/* Whether label hash h has a sample this epoch (or shares its bits). */
static int
sketch_label_sampled(const struct sketch *s, uint64_t h)
{
	uint32_t b1, b2;

	if (s->sampled == NULL)
		return 0;
	sketch_sampled_bits(h, &b1, &b2);
	return (s->sampled[b1 / 64] >> (b1 % 64)) & 1 &&
	    (s->sampled[b2 / 64] >> (b2 % 64)) & 1;
}

/* Mark label hash h as sampled (lost quietly if out of memory). */
static void
sketch_mark_sampled(struct sketch *s, uint64_t h)
{
	uint32_t b1, b2;

	if (s->sampled == NULL &&
	    (s->sampled = calloc(SKETCH_SAMPLED_BITS / 64, sizeof(uint64_t))) ==
		NULL)
		return;
	sketch_sampled_bits(h, &b1, &b2);
	s->sampled[b1 / 64] |= 1ULL << (b1 % 64);
	s->sampled[b2 / 64] |= 1ULL << (b2 % 64);
}

/*
 * sketch_keep_crossing's test before its copy: a crossing is not kept in
 * the last eighth of the limit, of max_samples, or of the sample memory
 * (held for labels not seen yet), nor past the limit where its label,
 * hash h, has a sample, or past the reserve beyond it (a quarter of the
 * limit, at least SKETCH_RESERVE_MIN): a few heavy labels first seen
 * late each get one; a crowd of them does not undo the limit.
 */
static uint32_t
sketch_reserve(const struct sketch *s)
{
	return s->limit / 4 > SKETCH_RESERVE_MIN ? s->limit / 4
						 : SKETCH_RESERVE_MIN;
}

/* The reserve's sample (past the limit) of least count; nsamples if none. */
static uint32_t
sketch_reserve_least(const struct sketch *s)
{
	uint32_t i, j = s->nsamples;

	for (i = s->limit; i < s->nsamples; i++)
		if (j == s->nsamples ||
		    s->samples[i].count < s->samples[j].count)
			j = i;
	return j;
}

/*
 * Whether a crossing at count replaces the reserve's sample of least
 * count (the reserve full): the index to replace, or nsamples.
 */
static uint32_t
sketch_reserve_victim(const struct sketch *s, uint64_t count)
{
	uint32_t j;

	if (s->limit >= s->p.max_samples ||
	    s->nsamples < s->limit + sketch_reserve(s))
		return s->nsamples;
	j = sketch_reserve_least(s);
	return j < s->nsamples && count > s->samples[j].count ? j : s->nsamples;
}

static int
sketch_crossing_fits(
    const struct sketch *s, uint64_t h, uint64_t count, uint32_t nf)
{
	if (s->nsamples >= s->limit && !sketch_label_sampled(s, h) &&
	    sketch_reserve_victim(s, count) < s->nsamples)
		return 1; /* in place of a lighter one */
	if ((s->nsamples >= s->limit - s->limit / 8 &&
		s->nsamples < s->limit) ||
	    (s->nsamples >= s->limit &&
		(sketch_label_sampled(s, h) ||
		    s->nsamples >= s->limit + sketch_reserve(s))) ||
	    s->nsamples >= s->p.max_samples - s->p.max_samples / 8 ||
	    (s->nsamples == s->cap && s->budget != NULL &&
		sketch_room(s) <= s->budget->limit / 8))
		return 0;
	return sketch_fits(s, nf, s->p.max_samples);
}

int
sketch_would_keep(
    const struct sketch *s, int fresh, uint64_t h, uint64_t count, uint32_t nf)
{
	uint32_t d = s->p.stack_depth;

	nf = nf < 2 * d ? nf : 2 * d;
	return fresh ? sketch_fits(s, nf, s->limit)
		     : sketch_crossing_fits(s, h, count, nf);
}

void
sketch_free(struct sketch *s)
{
	if (s == NULL)
		return;
	if (s->budget != NULL) {
		s->budget->used -= sketch_store_bytes(s);
		if (s->cap == 0)
			s->budget->kept -= sketch_first_bytes(&s->p);
	}
	free(s->hca);
	free(s->seen);
	free(s->sampled);
	free(s->samples);
	free(s->foff);
	free(s->frames);
	free(s->comms);
	free(s->syms);
	sketch_exes_free(&s->own);
	free(s);
}

/* Cut the sample store (holding none) down to cap samples' worth. */
static void
sketch_shrink(struct sketch *s, uint32_t cap, uint32_t fcap)
{
	uint32_t first = SKETCH_FIRST * (uint32_t)sketch_depth2(&s->p);

	if (cap < SKETCH_FIRST)
		cap = SKETCH_FIRST;
	if (fcap < first)
		fcap = first;
	s->nsamples = 0;
	s->nframes = 0;
	if (s->cap > cap || s->fcap > fcap)
		sketch_resize(s, s->cap > cap ? cap : s->cap,
		    s->fcap > fcap ? fcap : s->fcap);
}

void
sketch_reset(struct sketch *s)
{
	/* Memory follows use: half back when under a quarter was used. */
	sketch_shrink(s, s->nsamples < s->cap / 4 ? s->cap / 2 : s->cap,
	    s->nframes < s->fcap / 4 ? s->fcap / 2 : s->fcap);
	memset(s->hca, 0, s->p.hca_size * sizeof(uint64_t));
	if (s->seen != NULL)
		memset(s->seen, 0, s->p.seen_bits / 8);
	if (s->sampled != NULL)
		memset(s->sampled, 0, SKETCH_SAMPLED_BITS / 8);
	sketch_exes_reset(&s->own);
	s->nsamples = 0;
	s->limit = s->p.max_samples;
	s->nframes = 0;
	s->events = 0;
	s->wsum = 0;
	s->samples_dropped = 0;
	s->crossings = 0;
}

void
sketch_trim(struct sketch *s)
{
	sketch_shrink(s, SKETCH_FIRST, 0);
	sketch_reset(s);
}

int
sketch_crossed(uint64_t old, uint64_t new, uint32_t shift, uint64_t floor)
{
	uint32_t lnew, top;

	if (new <= old || new < floor)
		return 0;
	lnew = sketch_log2(new) / shift;
	if (old != 0 && sketch_log2(old) / shift == lnew)
		return 0;
	/* t^lnew is the highest power in (old, new]; it must reach the floor. */
	top = lnew * shift;
	return top >= 64 || (1ULL << top) >= floor;
}

/* Test-and-set the label's two filter bits; 1 if it was not there yet. */
static int
sketch_first_sighting(struct sketch *s, uint64_t h)
{
	uint64_t g, b1, b2, m1, m2;
	int fresh;

	g = vitals_hash_mix64(h ^ 0x6a09e667f3bcc909ULL);
	b1 = g >> s->seen_shift;
	b2 = (g << 32 | g >> 32) >> s->seen_shift;
	m1 = 1ULL << (b1 & 63);
	m2 = 1ULL << (b2 & 63);
	fresh = !(s->seen[b1 >> 6] & m1) || !(s->seen[b2 >> 6] & m2);
	s->seen[b1 >> 6] |= m1;
	s->seen[b2 >> 6] |= m2;
	return fresh;
}

/* The exe path interned in x; "" when x is full or out of memory. */
static const char *
sketch_intern_exe(struct sketch_exes *x, uint32_t id, const char *path)
{
	uint32_t i, n, len;

	if (path == NULL || id == 0)
		return "";
	if (x->slot == NULL) {
		x->slot = calloc(x->nslots, sizeof(*x->slot));
		x->pool = malloc(x->size);
		if (x->slot == NULL || x->pool == NULL) {
			sketch_exes_free(x);
			return "";
		}
		x->pool[0] = '\0';
		x->used = 1; /* offset 0 is the empty string */
	}
	for (n = 0, i = id & (x->nslots - 1); n < x->nslots;
	     n++, i = (i + 1) & (x->nslots - 1)) {
		if (x->slot[i].id == id)
			return x->pool + x->slot[i].off;
		if (x->slot[i].id == 0)
			break;
	}
	len = (uint32_t)strlen(path) + 1;
	if (n == x->nslots || x->used + len > x->size)
		return "";
	memcpy(x->pool + x->used, path, len);
	x->slot[i].id = id;
	x->slot[i].off = x->used;
	x->used += len;
	return x->pool + x->slot[i].off;
}

void
sketch_share_exes(struct sketch *s, struct sketch_exes *x)
{
	s->exes = x != NULL ? x : &s->own;
}

static uint64_t
sketch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint32_t
sketch_copy_stack(
    uint64_t *dst, const uint64_t *src, uint32_t n, uint32_t depth)
{
	if (src == NULL)
		return 0;
	if (n > depth)
		n = depth;
	memcpy(dst, src, n * sizeof(uint64_t));
	return n;
}

/*
 * Write ev as sample i, its nk + nu frames where foff[i] says (room made
 * by the caller), and mark its label sampled.
 */
static void
sketch_fill(struct sketch *s, uint32_t i, const struct vitals_event *ev,
    uint64_t slot, uint64_t count, uint32_t nk, uint32_t nu)
{
	struct vitals_sample *sm = &s->samples[i];
	uint32_t d = s->p.stack_depth;
	uint64_t *fr = s->frames + s->foff[i];
	char *comm = s->comms + (size_t)i * VITALS_COMM_LEN;

	sm->ts_ns = ev->ts_ns ? ev->ts_ns : sketch_now_ns();
	sm->label = ev->label;
	sm->weight = ev->weight;
	sm->count = count;
	sm->slot = (uint32_t)slot;
	sm->exe_id = ev->exe_id;
	sm->uid = ev->uid;
	sm->pid = ev->pid;
	sm->tid = ev->tid;
	sm->op = ev->op;
	sm->nkstack = sketch_copy_stack(fr, ev->kstack, nk, d);
	sm->nustack = sketch_copy_stack(fr + nk, ev->ustack, nu, d);
	sm->kstack = fr;
	sm->ustack = fr + nk;
	sm->ksyms = NULL;
	sm->exe = sketch_intern_exe(s->exes, ev->exe_id, ev->exe);
	comm[0] = '\0';
	if (ev->comm != NULL) {
		strncpy(comm, ev->comm, VITALS_COMM_LEN - 1);
		comm[VITALS_COMM_LEN - 1] = '\0';
	}
	sm->comm = comm;
	memcpy(sm->args, ev->args, sizeof(sm->args));
	sketch_mark_sampled(
	    s, vitals_hash_label(ev->label, ev->exe_id, ev->uid));
	s->last = i;
}

/* sketch_keep, keeping at most bound samples (the limit, or max_samples). */
static int
sketch_keep_within(struct sketch *s, const struct vitals_event *ev,
    uint64_t slot, uint64_t count, uint32_t bound)
{
	uint32_t i, d = s->p.stack_depth, nk, nu;

	nk = ev->kstack == NULL ? 0 : ev->nkstack < d ? ev->nkstack : d;
	nu = ev->ustack == NULL ? 0 : ev->nustack < d ? ev->nustack : d;
	if (s->nsamples >= bound ||
	    ((s->nsamples == s->cap || s->nframes + nk + nu > s->fcap) &&
		sketch_grow(s, nk + nu) != 0)) {
		s->samples_dropped++;
		return 2;
	}
	i = s->nsamples++;
	s->foff[i] = s->nframes;
	s->nframes += nk + nu;
	sketch_fill(s, i, ev, slot, count, nk, nu);
	return 1;
}

/*
 * Put ev in place of sample j (the one it outweighs counts as dropped):
 * in its frames if they are room enough, else in new ones at the end.
 */
static int
sketch_replace(struct sketch *s, uint32_t j, const struct vitals_event *ev,
    uint64_t slot, uint64_t count)
{
	const struct vitals_sample *sm = &s->samples[j];
	uint32_t d = s->p.stack_depth, nk, nu;

	nk = ev->kstack == NULL ? 0 : ev->nkstack < d ? ev->nkstack : d;
	nu = ev->ustack == NULL ? 0 : ev->nustack < d ? ev->nustack : d;
	if (nk + nu > sm->nkstack + sm->nustack) {
		if (s->nframes + nk + nu > s->fcap &&
		    sketch_grow(s, nk + nu) != 0) {
			s->samples_dropped++;
			return 2;
		}
		s->foff[j] = s->nframes;
		s->nframes += nk + nu;
	}
	sketch_fill(s, j, ev, slot, count, nk, nu);
	s->samples_dropped++;
	return 1;
}

int
sketch_keep(struct sketch *s, const struct vitals_event *ev, uint64_t slot,
    uint64_t count)
{
	return sketch_keep_within(s, ev, slot, count, s->limit);
}

int
sketch_set_syms(struct sketch *s, uint32_t i, const char *const *names,
    uint32_t nk, uint32_t nu)
{
	struct vitals_sample *sm;
	const char **dst;

	if (i >= s->nsamples)
		return -EINVAL;
	if (s->syms == NULL &&
	    (s->syms = calloc(s->fcap ? s->fcap : 1, sizeof(char *))) == NULL)
		return -ENOMEM;
	sm = &s->samples[i];
	dst = s->syms + s->foff[i];
	nk = nk < sm->nkstack ? nk : sm->nkstack;
	nu = nu < sm->nustack ? nu : sm->nustack;
	memset(dst, 0, (sm->nkstack + sm->nustack) * sizeof(char *));
	memcpy(dst, names, nk * sizeof(char *));
	memcpy(dst + sm->nkstack, names + nk, nu * sizeof(char *));
	sm->ksyms = dst;
	return 0;
}

int
sketch_add(struct sketch *s, const struct vitals_event *ev, uint32_t shift)
{
	uint64_t h, slot, old, new, w;
	int fresh;

	w = ev->weight ? ev->weight : 1;
	h = vitals_hash_label(ev->label, ev->exe_id, ev->uid);
	slot = h & (s->p.hca_size - 1);
	old = s->hca[slot];
	new = old + w;
	s->hca[slot] = new;
	s->events++;
	s->wsum += w;
	if (new < s->p.floor)
		return 0;
	if (s->seen == NULL &&
	    (s->seen = calloc(s->p.seen_bits / 64, sizeof(uint64_t))) == NULL)
		return 0;
	fresh = sketch_first_sighting(s, h);
	if (fresh)
		return sketch_keep(s, ev, slot, new);
	if (!sketch_crossed(old, new, shift, s->p.floor))
		return 0;
	return sketch_keep_crossing(s, ev, slot, new);
}

int
sketch_keep_crossing(struct sketch *s, const struct vitals_event *ev,
    uint64_t slot, uint64_t count)
{
	/*
	 * The last eighth of the epoch's limit is kept for labels not seen
	 * yet: one more sample of a label already sampled is worth less than
	 * the first sample of another (paper 4.1.3: no repetitive collection).
	 * Past the limit (the disk budget's share), only crossings of a power
	 * of t are kept, within max_samples and sample_memory: they are the
	 * sampling's own measure of weight, rare by design (t doubles as they
	 * come), and so a heavy label first seen once the share was spent (a
	 * leak that starts mid-epoch) still gets its sample.  The kernel
	 * probes' sketch sends only crossings once a vital's share is spent
	 * (its full bit), and they come here too.
	 */
	uint64_t h = vitals_hash_label(ev->label, ev->exe_id, ev->uid);
	uint32_t j;

	s->crossings++;
	if (!sketch_crossing_fits(s, h, count, 0)) {
		s->samples_dropped++;
		return 2;
	}
	if (s->nsamples >= s->limit &&
	    (j = sketch_reserve_victim(s, count)) < s->nsamples)
		return sketch_replace(s, j, ev, slot, count);
	return sketch_keep_within(s, ev, slot, count, s->p.max_samples);
}

int
sketch_resize_hca(struct sketch *s, uint32_t m)
{
	struct sketch_params p = s->p;
	uint64_t *hca;

	if (!sketch_pow2(m) || m > s->p.hca_max)
		return -EINVAL;
	if (s->nsamples > 0)
		return -EBUSY;
	if (m == s->p.hca_size)
		return 0;
	if ((hca = calloc(m, sizeof(uint64_t))) == NULL)
		return -ENOMEM;
	free(s->hca);
	s->hca = hca;
	/* The filter comes back at its new size with the next sighting. */
	free(s->seen);
	s->seen = NULL;
	p.seen_bits = s->seen_min;
	s->p.hca_size = m;
	s->p.seen_bits = sketch_seen_bits(&p, m);
	s->seen_shift = 64 - sketch_log2(s->p.seen_bits);
	return 0;
}

/* The least power of two >= x (x <= 2^31). */
static uint32_t
sketch_pow2_up(uint64_t x)
{
	return x <= 1 ? 1 : 1U << (sketch_log2(x - 1) + 1);
}

uint32_t
sketch_hca_next(
    uint32_t m, uint64_t unique, uint32_t min, uint32_t max, uint32_t *idle)
{
	uint32_t want;

	/* Saturated, the estimate is m ln m: growth is then 8 to 16 times. */
	want = sketch_pow2_up(unique < (1ULL << 30) ? 2 * unique : 1ULL << 31);
	want = want < min ? min : want > max ? max : want;
	if (want > m) {
		*idle = 0;
		return want;
	}
	if (want > m / 4) {
		*idle = 0;
		return m < min ? min : m > max ? max : m;
	}
	if (++*idle < SKETCH_IDLE_EPOCHS)
		return m > max ? max : m;
	*idle = 0;
	return want;
}

uint64_t
sketch_unique(const uint64_t *hca, uint32_t m)
{
	uint32_t i, zeros;

	for (i = 0, zeros = 0; i < m; i++)
		zeros += hca[i] == 0;
	if (zeros == m)
		return 0;
	/* Saturated: linear counting has no answer; report m ln m as a floor. */
	if (zeros == 0)
		return (uint64_t)llround(m * log((double)m));
	return (uint64_t)llround(m * log((double)m / zeros));
}
