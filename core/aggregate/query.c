/* SPDX-License-Identifier: MIT */
/*
 * Range queries (vitals_agg_query): the stored epochs of a time range are
 * read once, in order, rolled up to each timescale asked, and the
 * configured filters run at each timescale through the aggregator.  Slot
 * totals, each filter's findings and series, and each slot's rollup are
 * cached, keyed by the epoch files and by the filter's options and file.
 * This part sets a query up (configuration, timescales, files, filter
 * instances, cache keys) and stores what it computed.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "aggregate.h"
#include "cache.h"
#include "config.h"
#include "instance.h"
#include "loader.h"
#include "log.h"
#include "prefetch.h"
#include "query.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif
#define QUERY_VERSION PACKAGE_VERSION "/1"
/* Most threads running filters (one per plugin): see query_aggregate. */
#define QUERY_LANES 8

/* Write the reason for failing with r to q->err; returns r. */
int
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
	/* A new version may roll up or key differently: start afresh. */
	cache_key_str(&t->key, q->version);
	cache_key_str(&t->key, q->data_dir);
	cache_key_u64(&t->key, t->ts);
	cache_key_u64(&t->key, t->lo);
	cache_key_u64(&t->key, t->hi);
	for (i = t->first; i < t->last; i++)
		cache_key_key(&t->key, &q->ents[i].fp);
}

/* Note host among the range's hosts (q->hosts has room for all). */
static void
query_host_add(struct query *q, const char *host)
{
	size_t i;

	for (i = q->nhosts; i-- > 0;)
		if (strcmp(q->hosts[i], host) == 0)
			return;
	q->hosts[q->nhosts++] = host;
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
	if ((q->ents = calloc(q->list.n + 1, sizeof(*q->ents))) == NULL ||
	    (q->hosts = calloc(q->list.n + 1, sizeof(*q->hosts))) == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	for (i = 0; i < q->list.n; i++) {
		se = &q->list.v[i];
		if (se->start_ns < lo || se->start_ns >= hi ||
		    !query_host_wanted(q->p, se->host))
			continue;
		q->ents[q->nents].se = se;
		/* A file pruned meanwhile is no longer part of the range. */
		if (query_fingerprint(se, &q->ents[q->nents].fp) != 0)
			continue;
		q->nents++;
		query_host_add(q, se->host);
	}
	for (i = 0; i < q->nts; i++)
		query_ts_key(q, &q->ts[i]);
	return 0;
}

/* ---- the cache ---- */

/*
 * Open dir as the cache; false if it cannot be.  A directory refused
 * because others could write it (as root) is said: an unwritable one is
 * the normal case of a store read by someone else.
 */
static int
query_cache_try(struct query *q, const char *dir)
{
	char err[PATH_MAX + 256];

	if (cache_open(dir, &q->cache, err, sizeof(err)) == 0)
		return 1;
	q->cache = NULL;
	if (strstr(err, "refused as vitals runs as root") != NULL)
		log_msg(VITALS_LOG_WARN, NULL, "cache not used: %s", err);
	return 0;
}

/* DATA_DIR/cache, else ~/.cache/vitals/... when the store is read-only. */
static void
query_cache_open(struct query *q)
{
	char dir[PATH_MAX], *s;
	const char *base;

	if (q->p->flags & VITALS_AGG_NO_CACHE)
		return;
	if (q->p->cache_dir != NULL) {
		query_cache_try(q, q->p->cache_dir);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/cache", q->data_dir);
	if (query_cache_try(q, dir))
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
	query_cache_try(q, dir);
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
	/* Queued epochs before the newest are compact (aggregate_compact). */
	cache_key_str(&qi->key, "queue:compact");
	cache_key_u64(&qi->key, q->cfg->epoch_ns);
	cache_key_u64(&qi->key, q->cfg->queue_samples);
	cache_key_u64(&qi->key, q->cfg->sketch.max_samples);
	cache_key_str(&qi->key, qi->host != NULL ? qi->host : "*");
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

/*
 * An instance of cp at timescale t for host (NULL: every host): from the
 * cache, or started.
 */
static int
query_inst_add(struct query *q, const struct config_plugin *cp,
    const struct loader_plugin *lp, struct query_ts *t, const char *host)
{
	struct query_inst *qi = &q->insts[q->ninsts];
	char err[1024];
	int r;

	memset(qi, 0, sizeof(*qi));
	qi->ts = t->ts;
	qi->host = host;
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

/*
 * Instances of one filter at every timescale: one for every host, or, for
 * a filter that compares hosts (VITALS_SCOPE_FLEET), one for all.
 */
static int
query_filter(struct query *q, const struct config_plugin *cp)
{
	const struct loader_plugin *lp;
	char why[1024];
	size_t i, h;
	int r;

	if ((r = loader_open(q->ldr, cp->name, &lp, why, sizeof(why))) != 0)
		return query_fail(q, -EINVAL, "filter '%s': %s", cp->name, why);
	if (lp->desc->kind != VITALS_PLUGIN_FILTER)
		return query_fail(
		    q, -EINVAL, "plugin '%s' is not a filter", cp->name);
	for (i = 0; i < q->nts; i++) {
		if (loader_scope(lp->desc) == VITALS_SCOPE_FLEET ||
		    q->nhosts <= 1) {
			if ((r = query_inst_add(q, cp, lp, &q->ts[i], NULL)) !=
			    0)
				return r;
			continue;
		}
		for (h = 0; h < q->nhosts; h++)
			if ((r = query_inst_add(
				 q, cp, lp, &q->ts[i], q->hosts[h])) != 0)
				return r;
	}
	return 0;
}

static int
query_filters(struct query *q)
{
	const struct config *c = q->cfg;
	struct config_plugin tmp;
	size_t i, n = q->p->nfilters ? q->p->nfilters : c->nplugins;
	int r;

	q->insts = calloc(n * q->nts * (q->nhosts > 1 ? q->nhosts : 1) + 1,
	    sizeof(*q->insts));
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

static int
query_aggregate(struct query *q)
{
	struct aggregate_filter *f;
	struct aggregate_params ap;
	size_t i, n = 0;
	int r;

	memset(&ap, 0, sizeof(ap));
	ap.queue_len = q->cfg->queue_len;
	ap.base_ns = q->cfg->epoch_ns;
	ap.queue_samples = q->cfg->queue_samples;
	ap.max_samples = q->cfg->sketch.max_samples;
	/*
	 * Filters dominate once decoding is fast: with more than one CPU
	 * each plugin runs on a thread of its own, overlapping the others,
	 * the reading of the files and the rollups.
	 */
	ap.lanes = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? QUERY_LANES : 0;
	/* The lanes make JSON objects (findings): seed jansson's hash first
	 * (a no-op once seeded). */
	json_object_seed(0);
	if ((q->agg = aggregate_new(&ap)) == NULL ||
	    (f = calloc(q->ninsts + 1, sizeof(*f))) == NULL)
		return query_fail(q, -ENOMEM, "out of memory");
	for (i = 0; i < q->ninsts; i++)
		if (q->insts[i].started)
			f[n++] = (struct aggregate_filter){ q->insts[i].ctx,
				q->insts[i].ts, q->insts[i].host };
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

/* Stop the instances: fini may write files (a trained model). */
static void
query_free(struct query *q)
{
	size_t i;

	/* First the lanes: they may be running the instances. */
	aggregate_free(q->agg);
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
	cache_close(q->cache);
	free(q->ents);
	free(q->hosts);
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
	q.version = QUERY_VERSION;
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
