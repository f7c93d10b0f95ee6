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

#define SKETCH_EXE_SLOTS 256
#define SKETCH_POOL_BYTES 16384

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

size_t
sketch_bytes(const struct sketch_params *p)
{
	size_t n;

	n = sizeof(struct sketch);
	n += (size_t)p->hca_size * sizeof(uint64_t);
	n += p->seen_bits / 8;
	n += (size_t)p->max_samples * (sizeof(struct vitals_sample) +
	    2 * p->stack_depth * sizeof(uint64_t) + VITALS_COMM_LEN);
	n += SKETCH_EXE_SLOTS * sizeof(struct sketch_exe) + SKETCH_POOL_BYTES;
	return n;
}

struct sketch *
sketch_new(const struct sketch_params *p)
{
	struct sketch *s;
	size_t nframes;

	if (!sketch_pow2(p->hca_size) || !sketch_pow2(p->seen_bits) ||
	    p->seen_bits < 64 || p->max_samples == 0 ||
	    p->stack_depth > VITALS_STACK_MAX || p->floor == 0)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->p = *p;
	s->seen_shift = 64 - sketch_log2(p->seen_bits);
	s->nexes = SKETCH_EXE_SLOTS;
	s->pool_size = SKETCH_POOL_BYTES;
	nframes = (size_t)p->max_samples * 2 * (p->stack_depth ? p->stack_depth : 1);
	s->hca = calloc(p->hca_size, sizeof(uint64_t));
	s->seen = calloc(p->seen_bits / 64, sizeof(uint64_t));
	s->samples = calloc(p->max_samples, sizeof(struct vitals_sample));
	s->frames = calloc(nframes, sizeof(uint64_t));
	s->comms = calloc(p->max_samples, VITALS_COMM_LEN);
	s->exes = calloc(s->nexes, sizeof(struct sketch_exe));
	s->pool = calloc(1, s->pool_size);
	if (!s->hca || !s->seen || !s->samples || !s->frames || !s->comms ||
	    !s->exes || !s->pool) {
		sketch_free(s);
		return NULL;
	}
	sketch_reset(s);
	return s;
}

void
sketch_free(struct sketch *s)
{
	if (s == NULL)
		return;
	free(s->hca);
	free(s->seen);
	free(s->samples);
	free(s->frames);
	free(s->comms);
	free(s->syms);
	free(s->exes);
	free(s->pool);
	free(s);
}

void
sketch_reset(struct sketch *s)
{
	memset(s->hca, 0, s->p.hca_size * sizeof(uint64_t));
	memset(s->seen, 0, s->p.seen_bits / 8);
	memset(s->exes, 0, s->nexes * sizeof(struct sketch_exe));
	s->pool[0] = '\0';
	s->pool_used = 1; /* offset 0 is the empty string */
	s->nsamples = 0;
	s->limit = s->p.max_samples;
	s->events = 0;
	s->wsum = 0;
	s->samples_dropped = 0;
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

/* Offset of the exe path in the pool, interning it; 0 ("") when full. */
static uint32_t
sketch_intern_exe(struct sketch *s, uint32_t id, const char *path)
{
	uint32_t i, n, len;

	if (path == NULL || id == 0)
		return 0;
	for (n = 0, i = id & (s->nexes - 1); n < s->nexes;
	    n++, i = (i + 1) & (s->nexes - 1)) {
		if (s->exes[i].id == id)
			return s->exes[i].off;
		if (s->exes[i].id == 0)
			break;
	}
	len = (uint32_t)strlen(path) + 1;
	if (n == s->nexes || s->pool_used + len > s->pool_size)
		return 0;
	memcpy(s->pool + s->pool_used, path, len);
	s->exes[i].id = id;
	s->exes[i].off = s->pool_used;
	s->pool_used += len;
	return s->exes[i].off;
}

static uint64_t
sketch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint32_t
sketch_copy_stack(uint64_t *dst, const uint64_t *src, uint32_t n,
    uint32_t depth)
{
	if (src == NULL)
		return 0;
	if (n > depth)
		n = depth;
	memcpy(dst, src, n * sizeof(uint64_t));
	return n;
}

int
sketch_keep(struct sketch *s, const struct vitals_event *ev, uint64_t slot,
    uint64_t count)
{
	struct vitals_sample *sm;
	uint64_t *fr;
	char *comm;
	uint32_t i, d;

	if (s->nsamples >= s->limit) {
		s->samples_dropped++;
		return 2;
	}
	i = s->nsamples++;
	sm = &s->samples[i];
	d = s->p.stack_depth;
	fr = s->frames + (size_t)i * 2 * d;
	comm = s->comms + (size_t)i * VITALS_COMM_LEN;
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
	sm->nkstack = sketch_copy_stack(fr, ev->kstack, ev->nkstack, d);
	sm->nustack = sketch_copy_stack(fr + d, ev->ustack, ev->nustack, d);
	sm->kstack = fr;
	sm->ustack = fr + d;
	sm->ksyms = NULL;
	sm->exe = s->pool + sketch_intern_exe(s, ev->exe_id, ev->exe);
	comm[0] = '\0';
	if (ev->comm != NULL) {
		strncpy(comm, ev->comm, VITALS_COMM_LEN - 1);
		comm[VITALS_COMM_LEN - 1] = '\0';
	}
	sm->comm = comm;
	memcpy(sm->args, ev->args, sizeof(sm->args));
	return 1;
}

int
sketch_set_syms(struct sketch *s, uint32_t i, const char *const *names,
    uint32_t nk, uint32_t nu)
{
	struct vitals_sample *sm;
	const char **dst;
	size_t per = 2 * (size_t)(s->p.stack_depth ? s->p.stack_depth : 1);

	if (i >= s->nsamples)
		return -EINVAL;
	if (s->syms == NULL &&
	    (s->syms = calloc(s->p.max_samples * per, sizeof(char *))) == NULL)
		return -ENOMEM;
	sm = &s->samples[i];
	dst = s->syms + i * per;
	nk = nk < sm->nkstack ? nk : sm->nkstack;
	nu = nu < sm->nustack ? nu : sm->nustack;
	memset(dst, 0, per * sizeof(char *));
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
	fresh = sketch_first_sighting(s, h);
	if (fresh)
		return sketch_keep(s, ev, slot, new);
	if (!sketch_crossed(old, new, shift, s->p.floor))
		return 0;
	/*
	 * The last eighth of the store is kept for labels not seen yet: one
	 * more sample of a label already sampled is worth less than the first
	 * sample of another (paper 4.1.3: no repetitive collection).
	 */
	if (s->nsamples >= s->limit - s->limit / 8) {
		s->samples_dropped++;
		return 2;
	}
	return sketch_keep(s, ev, slot, new);
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
