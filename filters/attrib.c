/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the callmodel and diff filters: naming a sample's exe,
 * frames and site, a (scope, string) -> id map, and the split of each HCA
 * counter among the samples of its slot.  See attrib.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"

struct attrib_entry {
	char *key;
	uint32_t scope;
	uint64_t hash;
};

struct attrib_map {
	uint32_t n; /* entries */
	uint32_t cap; /* room in entries */
	uint32_t mask; /* table size - 1; the table is a power of two */
	struct attrib_entry *entries;
	uint32_t *table; /* entry id + 1, 0 = empty; linear probing */
};

const char *
attrib_exe(const struct vitals_sample *s)
{
	if (s->exe != NULL && s->exe[0] != '\0')
		return s->exe;
	if (s->comm != NULL && s->comm[0] != '\0')
		return s->comm;
	return "[unknown]";
}

char *
attrib_frame(const struct vitals_sample *s, int kernel, uint32_t i, int offsets,
    char *buf, size_t len)
{
	const uint64_t *stack;
	const char *sym = NULL;
	size_t n;

	if (kernel && s->ksyms != NULL && i < s->nkstack)
		sym = s->ksyms[i];
	if (sym != NULL && sym[0] != '\0') {
		n = offsets ? strlen(sym) : strcspn(sym, "+");
		snprintf(buf, len, "%.*s", (int)n, sym);
		return buf;
	}
	stack = kernel ? s->kstack : s->ustack;
	if (stack == NULL || i >= (kernel ? s->nkstack : s->nustack))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "0x%" PRIx64, stack[i]);
	return buf;
}

char *
attrib_site(const struct vitals_sample *s, char *buf, size_t len)
{
	if (s->nkstack > 0 && s->kstack != NULL)
		return attrib_frame(s, 1, 0, 0, buf, len);
	if (s->nustack > 0 && s->ustack != NULL)
		return attrib_frame(s, 0, 0, 0, buf, len);
	snprintf(buf, len, "-");
	return buf;
}

/* ---- the map ---- */

/* FNV-1a of the key, mixed with the scope (splitmix64 finaliser). */
static uint64_t
attrib_hash(uint32_t scope, const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ scope;

	while (*key != '\0')
		h = (h ^ (unsigned char)*key++) * 0x100000001b3ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

struct attrib_map *
attrib_map_new(void)
{
	return calloc(1, sizeof(struct attrib_map));
}

void
attrib_map_free(struct attrib_map *m)
{
	uint32_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->entries[i].key);
	free(m->entries);
	free(m->table);
	free(m);
}

/* Table slot holding (scope, key), or the empty slot where it would go. */
static uint32_t
attrib_map_slot(
    const struct attrib_map *m, uint32_t scope, const char *key, uint64_t h)
{
	const struct attrib_entry *e;
	uint32_t i = (uint32_t)h & m->mask;

	for (; m->table[i] != 0; i = (i + 1) & m->mask) {
		e = &m->entries[m->table[i] - 1];
		if (e->hash == h && e->scope == scope &&
		    strcmp(e->key, key) == 0)
			break;
	}
	return i;
}

/* Double the table (kept at most half full) and re-place every entry. */
static int
attrib_map_grow(struct attrib_map *m)
{
	uint32_t size = m->table == NULL ? 64 : 2 * (m->mask + 1), i, j;
	uint32_t *t;

	if ((t = calloc(size, sizeof(*t))) == NULL)
		return -ENOMEM;
	free(m->table);
	m->table = t;
	m->mask = size - 1;
	for (i = 0; i < m->n; i++) {
		j = (uint32_t)m->entries[i].hash & m->mask;
		while (t[j] != 0)
			j = (j + 1) & m->mask;
		t[j] = i + 1;
	}
	return 0;
}

int
attrib_map_put(
    struct attrib_map *m, uint32_t scope, const char *key, uint32_t *id)
{
	uint64_t h = attrib_hash(scope, key);
	struct attrib_entry *e;
	uint32_t slot;
	char *copy;

	if ((m->table == NULL || 2 * (m->n + 1) > m->mask + 1) &&
	    attrib_map_grow(m) != 0)
		return -ENOMEM;
	slot = attrib_map_slot(m, scope, key, h);
	if (m->table[slot] != 0) {
		*id = m->table[slot] - 1;
		return 0;
	}
	if (m->n == m->cap) {
		e = realloc(
		    m->entries, (m->cap ? 2 * m->cap : 64) * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		m->entries = e;
		m->cap = m->cap ? 2 * m->cap : 64;
	}
	if ((copy = strdup(key)) == NULL)
		return -ENOMEM;
	m->entries[m->n] = (struct attrib_entry){ copy, scope, h };
	m->table[slot] = ++m->n;
	*id = m->n - 1;
	return 1;
}

uint32_t
attrib_map_find(const struct attrib_map *m, uint32_t scope, const char *key)
{
	uint32_t slot;

	if (m->table == NULL)
		return ATTRIB_NONE;
	slot = attrib_map_slot(m, scope, key, attrib_hash(scope, key));
	return m->table[slot] != 0 ? m->table[slot] - 1 : ATTRIB_NONE;
}

uint32_t
attrib_map_size(const struct attrib_map *m)
{
	return m->n;
}

const char *
attrib_map_key(const struct attrib_map *m, uint32_t id)
{
	return id < m->n ? m->entries[id].key : NULL;
}

uint32_t
attrib_map_scope(const struct attrib_map *m, uint32_t id)
{
	return id < m->n ? m->entries[id].scope : ATTRIB_NONE;
}

/* ---- attribution of HCA counters ---- */

struct attrib_ref {
	uint32_t slot;
	uint32_t idx; /* sample index */
};

static int
attrib_ref_cmp(const void *a, const void *b)
{
	const struct attrib_ref *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One slot's samples r[0..n), in arrival order; returns its counter. */
static double
attrib_slot(const struct vitals_vital_epoch *ve, const struct attrib_ref *r,
    uint32_t n, double *w)
{
	const struct vitals_sample *s = ve->samples;
	uint64_t prev = 0, top = 0, c;
	double counter, sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		c = s[r[i].idx].count;
		w[r[i].idx] = (double)(c >= prev ? c - prev : c);
		sum += w[r[i].idx];
		top = c > top ? c : top;
		prev = c;
	}
	counter = (double)top;
	if (ve->hca != NULL && r[0].slot < ve->hca_size)
		counter = (double)ve->hca[r[0].slot];
	for (i = 0; i < n; i++)
		w[r[i].idx] =
		    sum > 0 ? w[r[i].idx] * counter / sum : counter / n;
	return counter;
}

int
attrib_weights(const struct vitals_vital_epoch *ve, double *w, double *total)
{
	struct attrib_ref *r;
	uint32_t i, j;
	double sum = 0;

	if (ve->nsamples == 0) {
		*total = 0;
		return 0;
	}
	if ((r = calloc(ve->nsamples, sizeof(*r))) == NULL)
		return -ENOMEM;
	for (i = 0; i < ve->nsamples; i++)
		r[i] = (struct attrib_ref){ ve->samples[i].slot, i };
	qsort(r, ve->nsamples, sizeof(*r), attrib_ref_cmp);
	for (i = 0; i < ve->nsamples; i = j) {
		for (j = i + 1; j < ve->nsamples && r[j].slot == r[i].slot; j++)
			;
		sum += attrib_slot(ve, r + i, j - i, w);
	}
	free(r);
	*total = sum;
	return 0;
}
