/* SPDX-License-Identifier: MIT */
/*
 * The pass of a range query over the stored epochs: which files to read
 * (those of the base range, and of rollup slots the cache lacks), reading
 * them ahead in worker threads, summing them into the slots of each
 * timescale, and running the filters on each epoch and completed slot.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "aggregate.h"
#include "cache.h"
#include "codec.h"
#include "log.h"
#include "prefetch.h"
#include "query.h"
#include "rollup.h"

/* Record the totals of e (a stored epoch, or the rollup of slot). */
static int
query_sums_add(struct query_ts *t, const struct vitals_epoch *e,
    const char *host, uint64_t slot, uint32_t nents)
{
	json_t *o, *v;
	uint32_t i;

	if (t->sums_cached)
		return 0;
	o = json_pack("{s:s, s:i, s:b, s:I, s:I, s:i, s:{}}", "host", host,
	    "timescale_s", (int)(t->ts ? t->ts : e->timescale_s), "base",
	    t->ts == 0, "start_ns", (json_int_t)(t->ts ? slot : e->start_ns),
	    "length_ns", (json_int_t)e->length_ns, "nepochs", (int)nents,
	    "vitals");
	if (o == NULL)
		return -ENOMEM;
	v = json_object_get(o, "vitals");
	for (i = 0; i < e->nvitals; i++)
		json_object_set_new(v, e->vitals[i].name,
		    json_pack("[I, I]", (json_int_t)e->vitals[i].events,
			(json_int_t)e->vitals[i].wsum));
	return json_array_append_new(t->sums, o) == 0 ? 0 : -ENOMEM;
}

static void
query_progress(struct query *q, uint64_t add)
{
	q->done += add;
	if (q->p->progress != NULL && add > 0)
		q->p->progress(q->p->progress_arg, q->done, q->total);
}

/*
 * The cache entry of a rollup: its slot, host and key in the name
 * ("rollup/300/2026-11-22/20261122T100500.000Z_web-1.KEY.json.gz"), so a
 * stat tells whether it is there.  *stem gets the part before the key.
 */
static int
query_rollup_name(const struct query_ts *t, const struct query_slot *sl,
    const struct query_part *pa, char *buf, size_t len, size_t *stem)
{
	char rel[PATH_MAX], hex[33];
	size_t n;

	if (codec_epoch_relpath(sl->start, pa->host, rel, sizeof(rel)) < 0 ||
	    (n = strlen(rel)) < 8)
		return -ENAMETOOLONG;
	rel[n - 8] = '\0'; /* ".json.gz" */
	cache_key_hex(&pa->key, hex);
	n = (size_t)snprintf(buf, len, "rollup/%u/%s.", t->ts, rel);
	*stem = n;
	if (n >= len ||
	    snprintf(buf + n, len - n, "%s.json.gz", hex) >= (int)(len - n))
		return -ENAMETOOLONG;
	return 0;
}

/* A part's rollup rebuilt from its files, read here and now. */
static struct vitals_epoch *
query_part_rebuild(struct query *q, const struct query_ts *t,
    const struct query_slot *sl, const struct query_part *pa)
{
	struct vitals_epoch *e = NULL, *x;
	struct rollup *r;
	char err[1024];
	size_t k;

	if ((r = rollup_new(sl->start, t->ts, q->cfg->sketch.max_samples)) ==
	    NULL)
		return NULL;
	for (k = sl->first; k < sl->last; k++) {
		if (strcmp(q->ents[k].se->host, pa->host) != 0)
			continue;
		if (vitals_epoch_load(
			q->ents[k].se->path, &x, err, sizeof(err)) != 0) {
			log_msg(VITALS_LOG_WARN, NULL, "skipping %s", err);
			continue;
		}
		q->epochs_read++;
		rollup_add(r, x);
		vitals_epoch_free(x);
	}
	if (rollup_count(r) > 0 && rollup_finish(r, &e) != 0)
		e = NULL;
	rollup_free(r);
	return e;
}

/* The cached rollup of pa, or NULL if it does not read back. */
static struct vitals_epoch *
query_part_cached(struct query *q, const struct query_ts *t,
    const struct query_slot *sl, const struct query_part *pa)
{
	struct vitals_epoch *e = NULL;
	char name[PATH_MAX], err[256], *buf;
	const char *text;
	size_t stem, len;

	if (query_rollup_name(t, sl, pa, name, sizeof(name), &stem) != 0 ||
	    cache_get_text(q->cache, name, &pa->key, &buf, &text, &len) != 0)
		return NULL;
	if (codec_epoch_parse(text, len, &e, err, sizeof(err)) != 0)
		e = NULL;
	free(buf);
	return e;
}

/* The JSON text of a rollup, in the compact form the store writes. */
static int
query_epoch_encode(void *e, char **text, size_t *len)
{
	return codec_compact_encode(e, text, len);
}

static void
query_epoch_release(void *e)
{
	vitals_epoch_free(e);
}

/* Store a built rollup, replacing the slot's older entries. */
static void
query_part_store(struct query *q, const struct query_ts *t,
    const struct query_slot *sl, const struct query_part *pa,
    const struct vitals_epoch *e)
{
	struct vitals_epoch *copy;
	char name[PATH_MAX];
	size_t stem;

	if (q->cache == NULL ||
	    query_rollup_name(t, sl, pa, name, sizeof(name), &stem) != 0 ||
	    (copy = epoch_copy(e)) == NULL)
		return;
	/* Encoding and compressing is slow: a thread does it on a copy. */
	cache_put_async(q->cache, name, &pa->key, stem, copy,
	    query_epoch_encode, query_epoch_release);
}

/* The rollup of part pa: cached, summed during the pass, or rebuilt. */
static struct vitals_epoch *
query_part_epoch(struct query *q, const struct query_ts *t,
    const struct query_slot *sl, struct query_part *pa)
{
	struct vitals_epoch *e = NULL;

	if (pa->cached != NULL) {
		q->rhits++;
		e = pa->cached;
		pa->cached = NULL;
		return e;
	}
	if (pa->have)
		e = query_part_rebuild(q, t, sl, pa);
	else if (pa->r != NULL && rollup_count(pa->r) > 0 &&
	    rollup_finish(pa->r, &e) != 0)
		e = NULL;
	if (e != NULL) {
		q->rmisses++;
		query_part_store(q, t, sl, pa, e);
	}
	return e;
}

/* Close t's open slot: its rollups, their totals, the filters of t. */
static int
query_slot_close(struct query *q, struct query_ts *t)
{
	struct query_slot *sl = &t->slots[t->cur];
	struct vitals_epoch **v;
	size_t i, n = 0;
	int rc = 0;

	t->open = 0;
	t->cur++;
	if ((v = calloc(sl->nparts + 1, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; rc == 0 && i < sl->nparts; i++) {
		v[n] = query_part_epoch(q, t, sl, &sl->parts[i]);
		rollup_free(sl->parts[i].r);
		sl->parts[i].r = NULL;
		if (v[n] == NULL)
			continue;
		rc = query_sums_add(
		    t, v[n], sl->parts[i].host, sl->start, sl->parts[i].nents);
		n++;
	}
	if (rc == 0 && aggregate_run(q->agg, t->ts, v, n) == -ENOMEM)
		rc = -ENOMEM;
	else if (rc != 0)
		for (i = 0; i < n; i++)
			vitals_epoch_free(v[i]);
	free(v);
	return rc;
}

/* Whether every file of pa is read during the pass. */
static int
query_part_read(const struct query *q, const struct query_slot *sl,
    const struct query_part *pa)
{
	size_t k;

	for (k = sl->first; k < sl->last; k++)
		if (!q->wanted[k] && strcmp(q->ents[k].se->host, pa->host) == 0)
			return 0;
	return 1;
}

/*
 * Open t's current slot: cached rollups are read now, so that one that
 * does not read back is summed from the files the pass reads anyway (or
 * rebuilt at the close when the pass does not read them).
 */
static int
query_slot_open(struct query *q, struct query_ts *t)
{
	struct query_slot *sl = &t->slots[t->cur];
	struct query_part *pa;
	size_t i;

	t->open = 1;
	for (i = 0; i < sl->nparts; i++) {
		pa = &sl->parts[i];
		if (pa->have &&
		    (pa->cached = query_part_cached(q, t, sl, pa)) == NULL &&
		    query_part_read(q, sl, pa))
			pa->have = 0;
		if (!pa->have &&
		    (pa->r = rollup_new(
			 sl->start, t->ts, q->cfg->sketch.max_samples)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Close the slots a group starting at `start` is past, open its own. */
static int
query_slots(struct query *q, uint64_t start)
{
	struct query_ts *t;
	uint64_t len;
	size_t k;
	int r;

	for (k = 0; k < q->nts; k++) {
		t = &q->ts[k];
		len = (uint64_t)t->ts * QUERY_NS;
		if (t->ts == 0 || !t->need || start < t->lo || start >= t->hi)
			continue;
		while (
		    t->cur < t->nslots && t->slots[t->cur].start + len <= start)
			if (t->open) {
				if ((r = query_slot_close(q, t)) != 0)
					return r;
			} else
				t->cur++;
		if (!t->open && t->cur < t->nslots &&
		    t->slots[t->cur].start <= start &&
		    (r = query_slot_open(q, t)) != 0)
			return r;
	}
	return 0;
}

static struct query_part *
query_part_find(struct query_slot *sl, const char *host)
{
	size_t i;

	for (i = 0; i < sl->nparts; i++)
		if (strcmp(sl->parts[i].host, host) == 0)
			return &sl->parts[i];
	return NULL;
}

/* Feed e (of file ents[i]) to the open rollups of its host. */
static int
query_accumulate(struct query *q, size_t i, const struct vitals_epoch *e)
{
	struct query_part *pa;
	size_t k;
	int r;

	for (k = 0; k < q->nts; k++) {
		if (!q->ts[k].open)
			continue;
		pa = query_part_find(
		    &q->ts[k].slots[q->ts[k].cur], q->ents[i].se->host);
		if (pa != NULL && pa->r != NULL &&
		    (r = rollup_add(pa->r, e)) != 0)
			return r;
	}
	return 0;
}

/* The epoch of file ents[i], from the prefetcher; NULL if unreadable. */
static struct vitals_epoch *
query_take(struct query *q, size_t i)
{
	struct vitals_epoch *e = NULL;
	char err[1024];
	int r;

	if (q->pf != NULL)
		r = prefetch_take(q->pf, q->ntake++, &e, err, sizeof(err));
	else
		r = vitals_epoch_load(
		    q->ents[i].se->path, &e, err, sizeof(err));
	query_progress(q, 1);
	if (r != 0) {
		log_msg(VITALS_LOG_WARN, NULL, "skipping %s", err);
		return NULL;
	}
	q->epochs_read++;
	return e;
}

/* The files ents[i..j), which start at the same time (one per host). */
static int
query_group(struct query *q, size_t i, size_t j)
{
	uint64_t start = q->ents[i].se->start_ns;
	struct query_ts *b = q->base;
	struct vitals_epoch **v;
	int base_in, r = 0;
	size_t k, n = 0;

	base_in = b != NULL && b->need && start >= b->lo && start < b->hi;
	if ((r = query_slots(q, start)) != 0)
		return r;
	if ((v = calloc(j - i + 1, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (k = i; k < j; k++) {
		if (!q->wanted[k] || (v[n] = query_take(q, k)) == NULL)
			continue;
		if (r == 0)
			r = query_accumulate(q, k, v[n]);
		if (r == 0 && base_in)
			r = query_sums_add(b, v[n], q->ents[k].se->host, 0, 1);
		n++;
	}
	if (r == 0 && base_in) {
		if (aggregate_run(q->agg, 0, v, n) == -ENOMEM)
			r = -ENOMEM;
	} else
		for (k = 0; k < n; k++)
			vitals_epoch_free(v[k]);
	free(v);
	return r;
}

/* ---- planning the pass ---- */

/* A new part of slot sl for the host of file k; its key is fed later. */
static struct query_part *
query_part_add(
    struct query *q, struct query_ts *t, struct query_slot *sl, size_t k)
{
	struct query_part *pa = &sl->parts[sl->nparts++];

	pa->host = q->ents[k].se->host;
	cache_key_init(&pa->key, "rollup");
	cache_key_str(&pa->key, q->version);
	cache_key_str(&pa->key, q->data_dir);
	cache_key_u64(&pa->key, t->ts);
	cache_key_u64(&pa->key, sl->start);
	cache_key_str(&pa->key, pa->host);
	cache_key_u64(&pa->key, q->cfg->sketch.max_samples);
	return pa;
}

/* Whether the cache holds the rollup of pa. */
static int
query_part_have(struct query *q, const struct query_ts *t,
    const struct query_slot *sl, const struct query_part *pa)
{
	char name[PATH_MAX];
	size_t stem;

	if (q->cache == NULL ||
	    query_rollup_name(t, sl, pa, name, sizeof(name), &stem) != 0)
		return 0;
	return cache_has(q->cache, name);
}

/* The slot of t starting at ents[i], with one part per host. */
static int
query_slot_plan(
    struct query *q, struct query_ts *t, struct query_slot *sl, size_t i)
{
	uint64_t len = (uint64_t)t->ts * QUERY_NS;
	struct query_part *pa;
	size_t k;

	sl->start = vitals_slot_start(q->ents[i].se->start_ns, len);
	sl->first = i;
	for (k = i; k < t->last && q->ents[k].se->start_ns < sl->start + len;
	     k++)
		;
	sl->last = k;
	if ((sl->parts = calloc(k - i + 1, sizeof(*sl->parts))) == NULL)
		return -ENOMEM;
	for (k = i; k < sl->last; k++) {
		if ((pa = query_part_find(sl, q->ents[k].se->host)) == NULL)
			pa = query_part_add(q, t, sl, k);
		pa->nents++;
		cache_key_key(&pa->key, &q->ents[k].fp);
	}
	for (k = 0; k < sl->nparts; k++) {
		sl->parts[k].have = query_part_have(q, t, sl, &sl->parts[k]);
		if (sl->parts[k].have)
			continue;
		for (i = sl->first; i < sl->last; i++)
			if (strcmp(q->ents[i].se->host, sl->parts[k].host) == 0)
				q->wanted[i] = 1;
	}
	return 0;
}

/* Slots of every rollup timescale to compute, and the files to read. */
static int
query_plan(struct query *q)
{
	struct query_ts *t;
	size_t k, i;
	int r;

	if ((q->wanted = calloc(q->nents + 1, 1)) == NULL)
		return -ENOMEM;
	for (k = 0; k < q->nts; k++) {
		t = &q->ts[k];
		if (!t->need)
			continue;
		if (t->ts == 0) {
			memset(q->wanted + t->first, 1, t->last - t->first);
			continue;
		}
		t->slots = calloc(t->last - t->first + 1, sizeof(*t->slots));
		if (t->slots == NULL)
			return -ENOMEM;
		for (i = t->first; i < t->last; i = t->slots[t->nslots++].last)
			if ((r = query_slot_plan(
				 q, t, &t->slots[t->nslots], i)) != 0)
				return r;
	}
	return 0;
}

/* Start reading the wanted files ahead. */
static int
query_prefetch(struct query *q, size_t first, size_t last)
{
	const char **paths;
	size_t i, n = 0;

	if ((paths = calloc(last - first + 1, sizeof(*paths))) == NULL)
		return -ENOMEM;
	for (i = first; i < last; i++)
		if (q->wanted[i])
			paths[n++] = q->ents[i].se->path;
	q->total = n;
	/* Without threads the files are read in turn: slower, still right. */
	if (n > 0 && (q->pf = prefetch_start(paths, n, 0, 32)) == NULL)
		free(paths);
	else
		q->pf_paths = paths;
	return 0;
}

int
query_pass(struct query *q)
{
	size_t i, j, first = q->nents, last = 0, k;
	int r;

	for (k = 0; k < q->nts; k++) {
		if (!q->ts[k].need)
			continue;
		first = q->ts[k].first < first ? q->ts[k].first : first;
		last = q->ts[k].last > last ? q->ts[k].last : last;
	}
	if (first >= last)
		return 0;
	if ((r = query_plan(q)) != 0 ||
	    (r = query_prefetch(q, first, last)) != 0)
		return query_fail(q, r, "%s", strerror(-r));
	for (i = first; i < last && r == 0; i = j) {
		for (j = i; j < last &&
		     q->ents[j].se->start_ns == q->ents[i].se->start_ns;
		     j++)
			;
		r = query_group(q, i, j);
	}
	for (k = 0; k < q->nts && r == 0; k++)
		while (q->ts[k].ts != 0 && q->ts[k].cur < q->ts[k].nslots &&
		    r == 0)
			r = q->ts[k].open ? query_slot_close(q, &q->ts[k])
					  : query_slot_open(q, &q->ts[k]);
	/* The filters may still be running on the aggregator's lanes. */
	if (r == 0)
		r = aggregate_drain(q->agg);
	return r == 0 ? 0 : query_fail(q, r, "%s", strerror(-r));
}

void
query_slots_free(struct query_ts *t)
{
	size_t i, k;

	for (i = 0; i < t->nslots; i++) {
		for (k = 0; k < t->slots[i].nparts; k++) {
			rollup_free(t->slots[i].parts[k].r);
			vitals_epoch_free(t->slots[i].parts[k].cached);
		}
		free(t->slots[i].parts);
	}
	free(t->slots);
}
