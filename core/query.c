/* SPDX-License-Identifier: MIT */
/*
 * Range queries (vitals_agg_query): the stored epochs of a time range are
 * read once, in order, rolled up to each timescale asked, and the
 * configured filters run at each timescale through the aggregator.  Slot
 * totals, each filter's findings and series, and each slot's rollup are
 * cached, keyed by the epoch files and by the filter's options and file.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "aggregate.h"
#include "cache.h"
#include "codec.h"
#include "config.h"
#include "instance.h"
#include "loader.h"
#include "log.h"
#include "prefetch.h"
#include "rollup.h"

#define QUERY_NS 1000000000ull
/* Entries the cache keeps: results (one per range, timescale, filter) and rollups. */
#define QUERY_RESULT_FILES 4096
#define QUERY_ROLLUP_FILES 200000

/* A stored epoch file of the range. */
struct query_ent {
	const struct vitals_store_entry *se; /* borrowed from the listing */
	struct cache_key fp; /* its name, size, mtime, inode */
};

/* One host's part of a rollup slot. */
struct query_part {
	const char *host; /* from the listing */
	uint32_t nents; /* its files in the slot */
	struct cache_key key; /* the rollup's cache key */
	int have; /* the cache holds a file for the key */
	struct vitals_epoch *cached; /* read from it when the slot opened */
	struct rollup *r; /* being summed while the slot is open */
};

/* A slot of a rollup timescale, with the files that start in it. */
struct query_slot {
	uint64_t start;
	size_t first, last; /* its files: ents[first..last) */
	size_t nparts;
	struct query_part *parts;
};

/* A timescale being computed. */
struct query_ts {
	uint32_t ts; /* seconds; 0 = the base */
	uint64_t lo, hi; /* epochs starting in [lo, hi) */
	size_t first, last; /* their indexes in ents */
	struct cache_key key; /* digest of those files */
	int need; /* something to compute */
	int sums_cached; /* totals came from the cache */
	json_t *sums; /* slot totals */
	size_t nslots; /* rollup slots that hold files */
	struct query_slot *slots;
	size_t cur; /* slots before it are closed */
	int open; /* slots[cur] is open */
};

/* A filter instance at one timescale. */
struct query_inst {
	struct vitals_ctx *ctx;
	uint32_t ts;
	int started; /* init ran */
	int cached; /* results came from the cache */
	struct cache_key key;
	json_t *findings;
	json_t *points;
};

struct query {
	const struct vitals_agg_params *p;
	char *err;
	size_t errlen;
	char *data_dir; /* absolute */
	struct config *cfg;
	struct loader *ldr;
	struct vitals_settings settings;
	struct vitals_store_list list;
	size_t nents;
	struct query_ent *ents;
	size_t nts;
	struct query_ts ts[1 + VITALS_AGG_MAX_TIMESCALES];
	struct query_ts *base; /* ts[0] when the base is asked */
	size_t ninsts;
	struct query_inst *insts;
	struct aggregate *agg;
	struct cache *cache;
	char *wanted; /* per file: it must be read */
	struct prefetch *pf; /* reads them ahead */
	const char **pf_paths; /* the files it reads */
	size_t ntake; /* files taken from pf so far */
	uint64_t done, total;
	uint64_t epochs_read, hits, misses, rhits, rmisses;
};

static int query_fail(struct query *q, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write the reason for failing with r to q->err; returns r. */
static int
query_fail(struct query *q, int r, const char *fmt, ...)
{
	va_list ap;

	if (q->err != NULL && q->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(q->err, q->errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* ---- JSON helpers ---- */

static json_t *
query_num(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

static uint64_t
query_u64(json_t *o, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(o, key));
}

static double
query_dbl(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *
query_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---- configuration and timescales ---- */

static int
query_config(struct query *q)
{
	const struct vitals_agg_params *p = q->p;
	char err[1024];
	int r;

	if (p->config != NULL) {
		if ((r = config_load(p->config, &q->cfg, err, sizeof(err))) !=
		    0)
			return query_fail(
			    q, r == -ENOENT ? -ENOENT : -EINVAL, "%s", err);
	} else if ((q->cfg = config_default()) == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	q->ldr = loader_new(
	    (const char *const *)q->cfg->plugin_path.v, q->cfg->plugin_path.n);
	if (q->ldr == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	q->settings.host = q->cfg->host;
	q->settings.data_dir = q->data_dir;
	q->settings.epoch_ns = q->cfg->epoch_ns;
	q->settings.retention_ns = q->cfg->retention_ns;
	q->settings.retention_bytes = q->cfg->retention_bytes;
	return 0;
}

static int
query_ts_add(struct query *q, uint32_t ts)
{
	size_t i;

	for (i = 0; i < q->nts; i++)
		if (q->ts[i].ts == ts)
			return 0;
	if (q->nts == 1 + VITALS_AGG_MAX_TIMESCALES)
		return query_fail(q, -EINVAL, "more than %d timescales",
		    1 + VITALS_AGG_MAX_TIMESCALES);
	for (i = q->nts; i > 0 && q->ts[i - 1].ts > ts; i--)
		q->ts[i] = q->ts[i - 1];
	memset(&q->ts[i], 0, sizeof(q->ts[i]));
	q->ts[i].ts = ts;
	q->nts++;
	return 0;
}

/* The timescales asked, or the base and those no longer than the range. */
static int
query_timescales(struct query *q)
{
	const struct vitals_agg_params *p = q->p;
	uint64_t span = p->to_ns - p->from_ns, len;
	uint32_t i;
	int r;

	for (i = 0; i < p->ntimescales; i++)
		if ((r = query_ts_add(q, p->timescales[i])) != 0)
			return r;
	if (p->ntimescales == 0) {
		query_ts_add(q, 0);
		for (i = 0; i < q->cfg->ntimescales; i++)
			if ((uint64_t)q->cfg->timescales[i] * QUERY_NS <= span)
				query_ts_add(q, q->cfg->timescales[i]);
	}
	for (i = 0; i < q->nts; i++) {
		len = (uint64_t)q->ts[i].ts * QUERY_NS;
		q->ts[i].lo = vitals_slot_start(p->from_ns, len);
		q->ts[i].hi =
		    len ? vitals_slot_start(p->to_ns - 1, len) + len : p->to_ns;
		if ((q->ts[i].sums = json_array()) == NULL)
			return query_fail(q, -ENOMEM, "out of memory");
	}
	q->base = q->ts[0].ts == 0 ? &q->ts[0] : NULL;
	return 0;
}

/* ---- the files of the range ---- */

static int
query_host_wanted(const struct vitals_agg_params *p, const char *host)
{
	uint32_t i;

	for (i = 0; i < p->nhosts; i++)
		if (strcmp(p->hosts[i], host) == 0)
			return 1;
	return p->nhosts == 0;
}

/* The key of a file: its name and what changes when it is rewritten. */
static int
query_fingerprint(const struct vitals_store_entry *se, struct cache_key *k)
{
	const char *name = strrchr(se->path, '/');
	struct stat st;

	if (stat(se->path, &st) != 0)
		return -errno;
	cache_key_init(k, "file");
	cache_key_str(k, name != NULL ? name + 1 : se->path);
	cache_key_u64(k, (uint64_t)st.st_size);
	cache_key_u64(k, (uint64_t)st.st_mtim.tv_sec);
	cache_key_u64(k, (uint64_t)st.st_mtim.tv_nsec);
	cache_key_u64(k, (uint64_t)st.st_ino);
	return 0;
}

/* Index of the first entry starting at or after t. */
static size_t
query_lower(const struct query *q, uint64_t t)
{
	size_t lo = 0, hi = q->nents, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (q->ents[mid].se->start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
query_ts_key(struct query *q, struct query_ts *t)
{
	size_t i;

	t->first = query_lower(q, t->lo);
	t->last = query_lower(q, t->hi);
	cache_key_init(&t->key, "range");
	cache_key_str(&t->key, q->data_dir);
	cache_key_u64(&t->key, t->ts);
	cache_key_u64(&t->key, t->lo);
	cache_key_u64(&t->key, t->hi);
	for (i = t->first; i < t->last; i++)
		cache_key_key(&t->key, &q->ents[i].fp);
}

static int
query_select(struct query *q)
{
	const struct vitals_store_entry *se;
	uint64_t lo = q->ts[0].lo, hi = 0;
	size_t i;
	int r;

	for (i = 0; i < q->nts; i++) {
		lo = q->ts[i].lo < lo ? q->ts[i].lo : lo;
		hi = q->ts[i].hi > hi ? q->ts[i].hi : hi;
	}
	if ((r = vitals_store_list(q->data_dir, &q->list)) != 0)
		return query_fail(q, r, "%s: %s", q->data_dir,
		    r == -ENOENT ? "no such data directory" : strerror(-r));
	if ((q->ents = calloc(q->list.n + 1, sizeof(*q->ents))) == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	for (i = 0; i < q->list.n; i++) {
		se = &q->list.v[i];
		if (se->start_ns < lo || se->start_ns >= hi ||
		    !query_host_wanted(q->p, se->host))
			continue;
		q->ents[q->nents].se = se;
		/* A file pruned meanwhile is no longer part of the range. */
		if (query_fingerprint(se, &q->ents[q->nents].fp) == 0)
			q->nents++;
	}
	for (i = 0; i < q->nts; i++)
		query_ts_key(q, &q->ts[i]);
	return 0;
}

/* ---- the cache ---- */

/* DATA_DIR/cache, else ~/.cache/vitals/... when the store is read-only. */
static void
query_cache_open(struct query *q)
{
	char dir[PATH_MAX], *s;
	const char *base;

	if (q->p->flags & VITALS_AGG_NO_CACHE)
		return;
	if (q->p->cache_dir != NULL) {
		cache_open(q->p->cache_dir, &q->cache);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/cache", q->data_dir);
	if (cache_open(dir, &q->cache) == 0)
		return;
	if ((base = getenv("XDG_CACHE_HOME")) != NULL && base[0] == '/')
		snprintf(dir, sizeof(dir), "%s/vitals", base);
	else if ((base = getenv("HOME")) != NULL && base[0] == '/')
		snprintf(dir, sizeof(dir), "%s/.cache/vitals", base);
	else
		return;
	/* One directory per store: its path with '/' as '_'. */
	s = dir + strlen(dir);
	snprintf(s, sizeof(dir) - (size_t)(s - dir), "/%s", q->data_dir);
	for (s++; *s != '\0'; s++)
		if (*s == '/')
			*s = '_';
	cache_open(dir, &q->cache);
}

/* "result/HEX.json.gz" for key k. */
static void
query_result_name(const struct cache_key *k, char *buf, size_t len)
{
	char hex[33];

	cache_key_hex(k, hex);
	snprintf(buf, len, "result/%s.json.gz", hex);
}

/* A cached JSON value for key k, or NULL on a miss. */
static json_t *
query_cache_get(struct query *q, const struct cache_key *k)
{
	char name[64];
	json_t *v = NULL;

	if (q->cache == NULL)
		return NULL;
	query_result_name(k, name, sizeof(name));
	if (cache_get(q->cache, name, k, &v) != 0)
		return NULL;
	return v;
}

static void
query_cache_put(struct query *q, const struct cache_key *k, json_t *v)
{
	char name[64];

	if (q->cache == NULL)
		return;
	query_result_name(k, name, sizeof(name));
	cache_put(q->cache, name, k, v);
}

/* ---- filter instances ---- */

static int
query_on_finding(
    void *arg, struct vitals_ctx *ctx, const struct vitals_finding *f)
{
	struct query_inst *qi = arg;
	json_t *o;

	o = json_pack("{s:I, s:I, s:i, s:i, s:o, s:o, s:o, s:s, s:s?, s:s?,"
		      " s:s, s:s, s:b}",
	    "start_ns", (json_int_t)f->start_ns, "end_ns",
	    (json_int_t)f->end_ns, "timescale_s", (int)f->timescale_s,
	    "severity", (int)f->severity, "score", query_num(f->score), "value",
	    query_num(f->value), "expected", query_num(f->expected), "filter",
	    ctx->name, "vital", f->vital, "label", f->label, "text",
	    f->text ? f->text : "", "host", ctx->run.host ? ctx->run.host : "",
	    "base", qi->ts == 0);
	if (o == NULL || json_array_append_new(qi->findings, o) != 0)
		return -ENOMEM;
	return 0;
}

static int
query_on_series(void *arg, struct vitals_ctx *ctx, const char *name,
    uint64_t ts_ns, double value)
{
	struct query_inst *qi = arg;
	json_t *o;

	o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:I, s:o}", "filter",
	    ctx->name, "name", name, "host", ctx->run.host ? ctx->run.host : "",
	    "timescale_s", (int)ctx->run.timescale_s, "base", qi->ts == 0,
	    "ts_ns", (json_int_t)ts_ns, "value", query_num(value));
	if (o == NULL || json_array_append_new(qi->points, o) != 0)
		return -ENOMEM;
	return 0;
}

/* The effective options of a filled config block, one string. */
static void
query_options_key(
    struct cache_key *k, const struct vitals_plugin *d, const void *block)
{
	const struct vitals_option *o;
	const char *p;
	char buf[64];
	uint32_t i;

	for (o = d->options; o != NULL && o->key != NULL; o++) {
		p = (const char *)block + o->offset;
		cache_key_str(k, o->key);
		cache_key_u64(k, o->type);
		switch (o->type) {
		case VITALS_OPT_BOOL:
			cache_key_u64(
			    k, (uint64_t) * (const int *)(const void *)p);
			break;
		case VITALS_OPT_DOUBLE:
			snprintf(buf, sizeof(buf), "%.17g",
			    *(const double *)(const void *)p);
			cache_key_str(k, buf);
			break;
		case VITALS_OPT_STRING:
			cache_key_str(k, *(char *const *)(const void *)p);
			break;
		case VITALS_OPT_STRLIST:
			for (i = 0; i <
			     ((const struct vitals_strlist *)(const void *)p)
				 ->n;
			     i++)
				cache_key_str(k,
				    ((const struct vitals_strlist *)(const void
					     *)p)
					->v[i]);
			break;
		default: /* INT, DURATION, SIZE: 64 bits */
			cache_key_u64(k, *(const uint64_t *)(const void *)p);
		}
	}
}

/* What a filter's results at t depend on besides the epochs. */
static int
query_inst_key(struct query *q, struct query_inst *qi,
    const struct loader_plugin *lp, const struct query_ts *t)
{
	char id[PATH_MAX + 128];
	int r;

	if ((r = loader_file_id(lp, id, sizeof(id))) != 0)
		return query_fail(q, r, "plugin '%s': %s: %s", lp->name,
		    lp->path, strerror(-r));
	cache_key_init(&qi->key, "filter");
	cache_key_str(&qi->key, lp->name);
	cache_key_str(&qi->key, id);
	cache_key_str(&qi->key, lp->desc->version);
	query_options_key(&qi->key, lp->desc, qi->ctx->config);
	cache_key_u64(&qi->key, q->cfg->queue_len);
	cache_key_u64(&qi->key, q->cfg->sketch.max_samples);
	cache_key_key(&qi->key, &t->key);
	return 0;
}

/* Results of qi from the cache: {"findings": [...], "series": [...]}. */
static void
query_inst_cached(struct query *q, struct query_inst *qi)
{
	json_t *v = query_cache_get(q, &qi->key), *f, *s;

	f = json_object_get(v, "findings");
	s = json_object_get(v, "series");
	if (json_is_array(f) && json_is_array(s)) {
		json_decref(qi->findings);
		json_decref(qi->points);
		qi->findings = json_incref(f);
		qi->points = json_incref(s);
		qi->cached = 1;
	}
	json_decref(v);
}

/* An instance of cp at timescale t: from the cache, or started. */
static int
query_inst_add(struct query *q, const struct config_plugin *cp,
    const struct loader_plugin *lp, struct query_ts *t)
{
	struct query_inst *qi = &q->insts[q->ninsts];
	char err[1024];
	int r;

	memset(qi, 0, sizeof(*qi));
	qi->ts = t->ts;
	qi->findings = json_array();
	qi->points = json_array();
	r = instance_new(lp->desc, cp,
	    q->cfg->file ? q->cfg->file : "(defaults)", &q->settings, NULL,
	    &qi->ctx, err, sizeof(err));
	if (r != 0)
		return query_fail(q, r == -ENOMEM ? r : -EINVAL, "%s", err);
	q->ninsts++;
	if (qi->findings == NULL || qi->points == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	qi->ctx->sink.finding = query_on_finding;
	qi->ctx->sink.series = query_on_series;
	qi->ctx->sink.arg = qi;
	if ((r = query_inst_key(q, qi, lp, t)) != 0)
		return r;
	query_inst_cached(q, qi);
	if (qi->cached) {
		q->hits++;
		return 0;
	}
	q->misses++;
	t->need = 1;
	if ((r = instance_init(qi->ctx, err, sizeof(err))) != 0)
		return query_fail(q, r, "%s", err);
	qi->started = 1;
	return 0;
}

/* The configured filter called name, or a stand-in with default options. */
static const struct config_plugin *
query_filter_conf(
    const struct config *c, const char *name, struct config_plugin *tmp)
{
	size_t i;

	for (i = 0; i < c->nplugins; i++)
		if (c->plugins[i].kind == VITALS_PLUGIN_FILTER &&
		    strcmp(c->plugins[i].name, name) == 0)
			return &c->plugins[i];
	memset(tmp, 0, sizeof(*tmp));
	tmp->name = (char *)name;
	tmp->kind = VITALS_PLUGIN_FILTER;
	tmp->enabled = 1;
	return tmp;
}

/* Instances of one filter at every timescale. */
static int
query_filter(struct query *q, const struct config_plugin *cp)
{
	const struct loader_plugin *lp;
	char why[1024];
	size_t i;
	int r;

	if ((r = loader_open(q->ldr, cp->name, &lp, why, sizeof(why))) != 0)
		return query_fail(q, -EINVAL, "filter '%s': %s", cp->name, why);
	if (lp->desc->kind != VITALS_PLUGIN_FILTER)
		return query_fail(
		    q, -EINVAL, "plugin '%s' is not a filter", cp->name);
	for (i = 0; i < q->nts; i++)
		if ((r = query_inst_add(q, cp, lp, &q->ts[i])) != 0)
			return r;
	return 0;
}

static int
query_filters(struct query *q)
{
	const struct config *c = q->cfg;
	struct config_plugin tmp;
	size_t i, n = q->p->nfilters ? q->p->nfilters : c->nplugins;
	int r;

	q->insts = calloc(n * q->nts + 1, sizeof(*q->insts));
	if (q->insts == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	for (i = 0; i < q->p->nfilters; i++)
		if ((r = query_filter(
			 q, query_filter_conf(c, q->p->filters[i], &tmp))) != 0)
			return r;
	for (i = 0; q->p->nfilters == 0 && i < c->nplugins; i++)
		if (c->plugins[i].kind == VITALS_PLUGIN_FILTER &&
		    c->plugins[i].enabled &&
		    (r = query_filter(q, &c->plugins[i])) != 0)
			return r;
	return 0;
}

/* Slot totals from the cache where the inputs are unchanged. */
static void
query_sums_cached(struct query *q)
{
	struct cache_key k;
	json_t *v;
	size_t i;

	for (i = 0; i < q->nts; i++) {
		cache_key_init(&k, "sums");
		cache_key_key(&k, &q->ts[i].key);
		if ((v = query_cache_get(q, &k)) != NULL && json_is_array(v)) {
			json_decref(q->ts[i].sums);
			q->ts[i].sums = v;
			q->ts[i].sums_cached = 1;
			q->hits++;
			continue;
		}
		json_decref(v);
		q->ts[i].need = 1;
		q->misses++;
	}
}

/* ---- the pass over the epochs ---- */

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
	char name[PATH_MAX], err[256];
	json_t *j = NULL;
	size_t stem;

	if (query_rollup_name(t, sl, pa, name, sizeof(name), &stem) != 0 ||
	    cache_get(q->cache, name, &pa->key, &j) != 0)
		return NULL;
	if (codec_epoch_from_json(j, &e, err, sizeof(err)) != 0)
		e = NULL;
	json_decref(j);
	return e;
}

static json_t *
query_epoch_encode(void *e)
{
	return codec_epoch_to_json(e);
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
	    (copy = rollup_copy(e)) == NULL)
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
	char name[PATH_MAX], path[PATH_MAX + 8];
	struct stat st;
	size_t stem;

	if (q->cache == NULL ||
	    query_rollup_name(t, sl, pa, name, sizeof(name), &stem) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", cache_dir(q->cache), name);
	return stat(path, &st) == 0;
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

static int
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
	return r == 0 ? 0 : query_fail(q, r, "%s", strerror(-r));
}

static int
query_aggregate(struct query *q)
{
	struct aggregate_filter *f;
	struct aggregate_params ap;
	size_t i, n = 0;
	int r;

	memset(&ap, 0, sizeof(ap));
	ap.queue_len = q->cfg->queue_len;
	ap.max_samples = q->cfg->sketch.max_samples;
	if ((q->agg = aggregate_new(&ap)) == NULL ||
	    (f = calloc(q->ninsts + 1, sizeof(*f))) == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	for (i = 0; i < q->ninsts; i++)
		if (q->insts[i].started)
			f[n++] = (struct aggregate_filter){ q->insts[i].ctx,
				q->insts[i].ts };
	r = aggregate_filters(q->agg, f, n);
	free(f);
	return r == 0 ? 0 : query_fail(q, r, "out of memory");
}

/* Cache what was computed, and keep the cache bounded. */
static void
query_store(struct query *q)
{
	struct cache_key k;
	json_t *v;
	size_t i;

	if (q->cache == NULL)
		return;
	for (i = 0; i < q->nts; i++) {
		if (q->ts[i].sums_cached)
			continue;
		cache_key_init(&k, "sums");
		cache_key_key(&k, &q->ts[i].key);
		query_cache_put(q, &k, q->ts[i].sums);
	}
	for (i = 0; i < q->ninsts; i++) {
		if (q->insts[i].cached)
			continue;
		v = json_pack("{s:O, s:O}", "findings", q->insts[i].findings,
		    "series", q->insts[i].points);
		if (v != NULL)
			query_cache_put(q, &q->insts[i].key, v);
		json_decref(v);
	}
	cache_prune(q->cache, "result", QUERY_RESULT_FILES);
	if (q->rmisses > 0)
		cache_prune(q->cache, "rollup", QUERY_ROLLUP_FILES);
}

/* ---- the result ---- */

/* A result and the memory behind it. */
struct query_result {
	struct vitals_agg_result pub;
	json_t *hold; /* the JSON its strings point into */
	uint32_t ts[1 + VITALS_AGG_MAX_TIMESCALES];
	struct vitals_agg_slot *slots;
	struct vitals_agg_vital *vitals;
	struct vitals_agg_finding *findings;
	struct vitals_agg_point *points;
	char *cache_dir;
};

static int
query_vital_cmp(const void *x, const void *y)
{
	const struct vitals_agg_vital *a = x, *b = y;

	return strcmp(a->name, b->name);
}

/* Slot o (a totals object) into s, its vitals at *vv (advanced). */
static void
query_slot_from(
    json_t *o, struct vitals_agg_slot *s, struct vitals_agg_vital **vv)
{
	json_t *vit = json_object_get(o, "vitals"), *pair;
	const char *name;

	s->host = query_str(o, "host");
	s->timescale_s = (uint32_t)query_u64(o, "timescale_s");
	s->base = json_is_true(json_object_get(o, "base"));
	s->start_ns = query_u64(o, "start_ns");
	s->length_ns = query_u64(o, "length_ns");
	s->nepochs = (uint32_t)query_u64(o, "nepochs");
	s->vitals = *vv;
	json_object_foreach(vit, name, pair)
	{
		(*vv)->name = name;
		(*vv)->events =
		    (uint64_t)json_integer_value(json_array_get(pair, 0));
		(*vv)->wsum =
		    (uint64_t)json_integer_value(json_array_get(pair, 1));
		(*vv)++;
		s->nvitals++;
	}
	qsort(
	    (void *)s->vitals, s->nvitals, sizeof(*s->vitals), query_vital_cmp);
}

static int
query_result_slots(struct query *q, struct query_result *res)
{
	struct vitals_agg_vital *vv;
	size_t i, j, n = 0, nv = 0;
	json_t *o;

	for (i = 0; i < q->nts; i++) {
		n += json_array_size(q->ts[i].sums);
		json_array_foreach(q->ts[i].sums, j, o) nv +=
		    json_object_size(json_object_get(o, "vitals"));
		json_array_append(res->hold, q->ts[i].sums);
	}
	res->slots = calloc(n + 1, sizeof(*res->slots));
	res->vitals = calloc(nv + 1, sizeof(*res->vitals));
	if (res->slots == NULL || res->vitals == NULL)
		return -ENOMEM;
	vv = res->vitals;
	for (i = 0, n = 0; i < q->nts; i++)
		json_array_foreach(q->ts[i].sums, j, o)
		    query_slot_from(o, &res->slots[n++], &vv);
	res->pub.slots = res->slots;
	res->pub.nslots = n;
	return 0;
}

static int
query_finding_cmp(const void *x, const void *y)
{
	const struct vitals_agg_finding *a = x, *b = y;
	int c;

	if (a->f.start_ns != b->f.start_ns)
		return a->f.start_ns < b->f.start_ns ? -1 : 1;
	if (a->base != b->base)
		return a->base ? -1 : 1;
	if (a->f.timescale_s != b->f.timescale_s)
		return a->f.timescale_s < b->f.timescale_s ? -1 : 1;
	if ((c = strcmp(a->f.filter, b->f.filter)) != 0 ||
	    (c = strcmp(a->host, b->host)) != 0)
		return c;
	if ((c = strcmp(a->f.vital ? a->f.vital : "",
		 b->f.vital ? b->f.vital : "")) != 0 ||
	    (c = strcmp(a->f.label ? a->f.label : "",
		 b->f.label ? b->f.label : "")) != 0)
		return c;
	return strcmp(a->f.text, b->f.text);
}

static void
query_finding_from(json_t *o, struct vitals_agg_finding *d)
{
	d->f.start_ns = query_u64(o, "start_ns");
	d->f.end_ns = query_u64(o, "end_ns");
	d->f.timescale_s = (uint32_t)query_u64(o, "timescale_s");
	d->f.severity = (uint32_t)query_u64(o, "severity");
	d->f.score = query_dbl(o, "score");
	d->f.value = query_dbl(o, "value");
	d->f.expected = query_dbl(o, "expected");
	d->f.filter = query_str(o, "filter");
	d->f.vital = query_str(o, "vital");
	d->f.label = query_str(o, "label");
	d->f.text = query_str(o, "text");
	d->host = query_str(o, "host");
	d->base = json_is_true(json_object_get(o, "base"));
	if (d->f.filter == NULL)
		d->f.filter = "";
	if (d->f.text == NULL)
		d->f.text = "";
	if (d->host == NULL)
		d->host = "";
}

static int
query_point_cmp(const void *x, const void *y)
{
	const struct vitals_agg_point *a = x, *b = y;
	int c;

	if ((c = strcmp(a->filter, b->filter)) != 0 ||
	    (c = strcmp(a->name, b->name)) != 0 ||
	    (c = strcmp(a->host, b->host)) != 0)
		return c;
	if (a->base != b->base)
		return a->base ? -1 : 1;
	if (a->timescale_s != b->timescale_s)
		return a->timescale_s < b->timescale_s ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return 0;
}

static void
query_point_from(json_t *o, struct vitals_agg_point *d)
{
	d->filter = query_str(o, "filter");
	d->name = query_str(o, "name");
	d->host = query_str(o, "host");
	d->timescale_s = (uint32_t)query_u64(o, "timescale_s");
	d->base = json_is_true(json_object_get(o, "base"));
	d->ts_ns = query_u64(o, "ts_ns");
	d->value = query_dbl(o, "value");
	if (d->filter == NULL)
		d->filter = "";
	if (d->name == NULL)
		d->name = "";
	if (d->host == NULL)
		d->host = "";
}

static int
query_result_items(struct query *q, struct query_result *res)
{
	size_t i, j, nf = 0, np = 0;
	json_t *o;

	for (i = 0; i < q->ninsts; i++) {
		nf += json_array_size(q->insts[i].findings);
		np += json_array_size(q->insts[i].points);
		json_array_append(res->hold, q->insts[i].findings);
		json_array_append(res->hold, q->insts[i].points);
	}
	res->findings = calloc(nf + 1, sizeof(*res->findings));
	res->points = calloc(np + 1, sizeof(*res->points));
	if (res->findings == NULL || res->points == NULL)
		return -ENOMEM;
	for (i = 0, nf = 0, np = 0; i < q->ninsts; i++) {
		json_array_foreach(q->insts[i].findings, j, o)
		    query_finding_from(o, &res->findings[nf++]);
		json_array_foreach(q->insts[i].points, j, o)
		    query_point_from(o, &res->points[np++]);
	}
	qsort(res->findings, nf, sizeof(*res->findings), query_finding_cmp);
	qsort(res->points, np, sizeof(*res->points), query_point_cmp);
	res->pub.findings = res->findings;
	res->pub.nfindings = nf;
	res->pub.points = res->points;
	res->pub.npoints = np;
	return 0;
}

/* Build the caller's result from what q computed or found cached. */
static int
query_result(struct query *q, struct vitals_agg_result **out)
{
	struct query_result *res;
	size_t i;
	int r;

	if ((res = calloc(1, sizeof(*res))) == NULL ||
	    (res->hold = json_array()) == NULL) {
		free(res);
		return query_fail(q, -ENOMEM, "out of memory");
	}
	for (i = 0; i < q->nts; i++)
		res->ts[i] = q->ts[i].ts;
	res->pub.from_ns = q->p->from_ns;
	res->pub.to_ns = q->p->to_ns;
	res->pub.ntimescales = (uint32_t)q->nts;
	res->pub.timescales = res->ts;
	res->pub.epochs_read = q->epochs_read;
	res->pub.cache_hits = q->hits;
	res->pub.cache_misses = q->misses;
	res->pub.rollup_hits = q->rhits;
	res->pub.rollup_misses = q->rmisses;
	if (q->cache != NULL &&
	    (res->cache_dir = strdup(cache_dir(q->cache))) == NULL) {
		vitals_agg_result_free(&res->pub);
		return query_fail(q, -ENOMEM, "out of memory");
	}
	res->pub.cache_dir = res->cache_dir;
	if ((r = query_result_slots(q, res)) != 0 ||
	    (r = query_result_items(q, res)) != 0) {
		vitals_agg_result_free(&res->pub);
		return query_fail(q, r, "out of memory");
	}
	*out = &res->pub;
	return 0;
}

void
vitals_agg_result_free(struct vitals_agg_result *r)
{
	struct query_result *res = (struct query_result *)r;

	if (res == NULL)
		return;
	json_decref(res->hold);
	free(res->slots);
	free(res->vitals);
	free(res->findings);
	free(res->points);
	free(res->cache_dir);
	free(res);
}

static void
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

/* Stop the instances: fini may write files (a trained model). */
static void
query_free(struct query *q)
{
	size_t i;

	for (i = 0; i < q->ninsts; i++) {
		if (q->insts[i].started)
			instance_stop(q->insts[i].ctx);
		instance_free(q->insts[i].ctx);
		json_decref(q->insts[i].findings);
		json_decref(q->insts[i].points);
	}
	free(q->insts);
	prefetch_stop(q->pf);
	free(q->pf_paths);
	free(q->wanted);
	for (i = 0; i < q->nts; i++) {
		query_slots_free(&q->ts[i]);
		json_decref(q->ts[i].sums);
	}
	aggregate_free(q->agg);
	cache_close(q->cache);
	free(q->ents);
	vitals_store_list_free(&q->list);
	loader_free(q->ldr);
	config_free(q->cfg);
	free(q->data_dir);
}

static int
query_check(struct query *q)
{
	const struct vitals_agg_params *p = q->p;

	if (p->data_dir == NULL || p->data_dir[0] == '\0')
		return query_fail(q, -EINVAL, "no data directory");
	if (p->to_ns <= p->from_ns)
		return query_fail(q, -EINVAL, "empty time range");
	if ((q->data_dir = realpath(p->data_dir, NULL)) == NULL)
		return query_fail(q, -errno, "%s: %s", p->data_dir,
		    errno == ENOENT ? "no such data directory"
				    : strerror(errno));
	return 0;
}

int
vitals_agg_query(const struct vitals_agg_params *p,
    struct vitals_agg_result **out, char *err, size_t errlen)
{
	struct query q;
	int r;

	memset(&q, 0, sizeof(q));
	q.p = p;
	q.err = err;
	q.errlen = errlen;
	if ((r = query_check(&q)) != 0 || (r = query_config(&q)) != 0 ||
	    (r = query_timescales(&q)) != 0 || (r = query_select(&q)) != 0)
		goto out;
	query_cache_open(&q);
	query_sums_cached(&q);
	if ((r = query_filters(&q)) != 0 || (r = query_aggregate(&q)) != 0 ||
	    (r = query_pass(&q)) != 0)
		goto out;
	query_store(&q);
	r = query_result(&q, out);
out:
	query_free(&q);
	return r;
}
