/* SPDX-License-Identifier: MIT */
/*
 * The host that runs plugin instances on one libevent loop: the SDK's
 * loop services (timers, watches, sketches), the epoch boundary (probes
 * flush, the aggregator runs the filters on the epoch and on the rollups
 * it completes, outputs write), signals, and configuration reload.
 */
#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <vitals/store.h>

#include "aggregate.h"
#include "codec.h"
#include "engine.h"
#include "group.h"
#include "host.h"
#include "instance.h"
#include "kaddr.h"
#include "log.h"
#include "metric.h"
#include "notify.h"
#include "option.h"
#include "safefile.h"
#include "symbol.h"

/*
 * Outputs built at this ABI minor or later take each epoch before the
 * filters run, and again with their findings (see vitals.h).
 */
#define HOST_MINOR_EARLY_WRITE 4

struct vitals_timer {
	LIST_ENTRY(vitals_timer) link;
	struct vitals_ctx *ctx;
	struct event *ev;
	struct timeval interval;
	int periodic; /* past the first, aligning run: EV_PERSIST */
	void (*cb)(void *arg);
	void *arg;
};

struct vitals_watch {
	LIST_ENTRY(vitals_watch) link;
	struct vitals_ctx *ctx;
	struct event *ev;
	void (*cb)(int fd, void *arg);
	void *arg;
};

struct host {
	struct config *cfg;
	struct loader *ldr;
	struct engine *eng;
	struct event_base *base;
	struct event *epoch_ev, *tick_ev, *sig_ev[3];
	struct vitals_settings settings;
	struct instance_list insts;
	struct aggregate *agg; /* filter queues and live rollups */
	struct group *grp; /* warnings of several filters, grouped */
	uint64_t next_ns; /* next epoch boundary */
	uint64_t closed, max_epochs;
	uint64_t gen; /* bumped at each (re)configuration */
	uint64_t cpu_warned_ns; /* when the programs' CPU was last warned of */
	double cpu_warned; /* the share of a CPU it was then */
	struct log_limit lim;
};

static uint64_t
host_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
host_settings_update(struct host *h)
{
	h->settings.host = h->cfg->host;
	h->settings.data_dir = h->cfg->data_dir;
	h->settings.epoch_ns = h->cfg->epoch_ns;
	h->settings.retention_ns = h->cfg->retention_ns;
	h->settings.retention_bytes = h->cfg->retention_bytes;
	h->settings.config = h->cfg->file;
	h->settings.ntimescales = h->cfg->ntimescales;
	h->settings.timescales = h->cfg->timescales;
	h->settings.max_samples = h->cfg->sketch.max_samples;
	h->settings.disk_budget = h->cfg->disk_budget;
}

struct host *
host_new(struct config *c, struct loader *l)
{
	struct host *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		goto fail;
	h->cfg = c;
	h->ldr = l;
	TAILQ_INIT(&h->insts);
	h->lim = (struct log_limit)LOG_LIMIT_INIT;
	host_settings_update(h);
	if ((h->base = event_base_new()) == NULL ||
	    (h->eng = engine_new(c, c->host)) == NULL ||
	    (h->grp = group_new()) == NULL)
		goto fail;
	return h;
fail:
	if (h != NULL) {
		h->cfg = NULL;
		host_free(h);
	}
	config_free(c);
	return NULL;
}

/* ---- plugin instances ---- */

static const char *
host_kind_name(uint32_t kind)
{
	switch (kind) {
	case VITALS_PLUGIN_PROBE:
		return "probe";
	case VITALS_PLUGIN_FILTER:
		return "filter";
	case VITALS_PLUGIN_OUTPUT:
		return "output";
	}
	return "unknown";
}

static const char *
host_section_name(uint32_t kind)
{
	switch (kind) {
	case VITALS_PLUGIN_PROBE:
		return "probes";
	case VITALS_PLUGIN_FILTER:
		return "filters";
	}
	return "plugins";
}

/*
 * Resolve a configured plugin to its descriptor, checking the section.
 * Returns 0 and sets *out, or -EINVAL with "FILE:LINE:COL: ..." in err.
 */
static int
host_resolve(const struct config *c, struct loader *l,
    const struct config_plugin *cp, const struct vitals_plugin **out, char *err,
    size_t errlen)
{
	const struct loader_plugin *lp;
	char why[512];
	int r;

	if ((r = loader_open(l, cp->name, &lp, why, sizeof(why))) != 0) {
		snprintf(err, errlen, "%s:%u:%u: %s '%s': %s", c->file,
		    cp->line, cp->col, host_kind_name(cp->kind), cp->name, why);
		return -EINVAL;
	}
	if (lp->desc->kind != cp->kind) {
		snprintf(err, errlen,
		    "%s:%u:%u: plugin '%s' is a %s, not a %s: move it under %s:",
		    c->file, cp->line, cp->col, cp->name,
		    host_kind_name(lp->desc->kind), host_kind_name(cp->kind),
		    host_section_name(lp->desc->kind));
		return -EINVAL;
	}
	*out = lp->desc;
	return 0;
}

/* Whether a probe can run here; logs why not.  1 = run it. */
static int
host_probe_available(const struct vitals_plugin *d, const char *name)
{
	char why[512] = "";

	if (d->kind != VITALS_PLUGIN_PROBE || d->available == NULL)
		return 1;
	if (d->available(why, sizeof(why)) == 0)
		return 1;
	log_msg(VITALS_LOG_WARN, "core",
	    "probe '%s' unavailable here: %s; starting without it", name,
	    why[0] ? why : "no reason given");
	return 0;
}

/* Findings of every instance go into the epoch being closed. */
static int
host_on_finding(
    void *arg, struct vitals_ctx *ctx, const struct vitals_finding *f)
{
	struct host *h = arg;

	return engine_finding_add(h->eng, f, ctx->name);
}

/* The daemon keeps no series: `vitals query` computes them. */
static int
host_on_series(void *arg, struct vitals_ctx *ctx, const char *name,
    uint64_t ts_ns, double value)
{
	(void)arg;
	log_msg(VITALS_LOG_DEBUG, ctx->name, "series %s %llu %g", name,
	    (unsigned long long)ts_ns, value);
	return 0;
}

/* Make an instance of cp owned by h, its findings going to h's engine. */
static int
host_ctx_new(struct host *h, const struct config *c,
    const struct config_plugin *cp, const struct vitals_plugin *d,
    struct vitals_ctx **out, char *err, size_t errlen)
{
	int r;

	r = instance_new(d, cp, c->file, &h->settings, h, out, err, errlen);
	if (r != 0)
		return r;
	(*out)->gen = h->gen;
	(*out)->sink.finding = host_on_finding;
	(*out)->sink.series = host_on_series;
	(*out)->sink.arg = h;
	return 0;
}

/*
 * Build and start the instances of configuration c into list `out`,
 * reusing unchanged instances from `old` (moved, not restarted).  On
 * failure the instances started here are stopped and the reused ones go
 * back to `old`, so the running set is untouched.
 */
static int
host_instantiate(struct host *h, const struct config *c,
    struct instance_list *old, struct instance_list *out, char *err,
    size_t errlen)
{
	const struct vitals_plugin *d;
	struct vitals_ctx *ctx, *o;
	size_t i;
	char *key;
	int r;

	h->gen++;
	for (i = 0; i < c->nplugins; i++) {
		const struct config_plugin *cp = &c->plugins[i];

		if (!cp->enabled)
			continue;
		if ((r = host_resolve(c, h->ldr, cp, &d, err, errlen)) != 0)
			goto fail;
		if ((key = instance_optkey(cp)) == NULL) {
			r = -ENOMEM;
			goto fail;
		}
		TAILQ_FOREACH(o, old, link)
		if (o->desc == d && strcmp(o->optkey, key) == 0)
			break;
		free(key);
		if (o != NULL) {
			TAILQ_REMOVE(old, o, link);
			TAILQ_INSERT_TAIL(out, o, link);
			continue;
		}
		if ((r = host_ctx_new(h, c, cp, d, &ctx, err, errlen)) != 0)
			goto fail;
		if (!host_probe_available(d, cp->name)) {
			instance_free(ctx);
			continue;
		}
		if ((r = instance_init(ctx, err, errlen)) != 0) {
			instance_stop(ctx);
			instance_free(ctx);
			goto fail;
		}
		TAILQ_INSERT_TAIL(out, ctx, link);
	}
	return 0;
fail:
	/* Give reused instances back to `old`; stop the ones started here. */
	while ((ctx = TAILQ_FIRST(out)) != NULL) {
		TAILQ_REMOVE(out, ctx, link);
		if (ctx->gen == h->gen) {
			instance_stop(ctx);
			instance_free(ctx);
		} else
			TAILQ_INSERT_TAIL(old, ctx, link);
	}
	return r;
}

/*
 * Say so when nothing is collected or nothing stored (probes and outputs
 * that run, or for --check-config that are enabled): a file without a
 * probes: or plugins: section runs none, as an empty one does.
 */
static void
host_warn_idle(const char *file, int probes, int outputs)
{
	if (probes == 0)
		log_msg(VITALS_LOG_WARN, "core",
		    "%s: no probe runs: "
		    "epochs hold no vitals (enable some under probes:)",
		    file);
	if (outputs == 0)
		log_msg(VITALS_LOG_WARN, "core",
		    "%s: no output runs: "
		    "epochs are not stored (plugins: {store: {}} stores them "
		    "in data_dir)",
		    file);
}

/* host_warn_idle() of the running instances. */
static void
host_warn_idle_insts(const struct host *h)
{
	const struct vitals_ctx *ctx;
	int probes = 0, outputs = 0;

	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		probes += ctx->desc->kind == VITALS_PLUGIN_PROBE;
		outputs += ctx->desc->kind == VITALS_PLUGIN_OUTPUT;
	}
	host_warn_idle(h->cfg->file, probes, outputs);
}

/*
 * The plugin's own checks of the values in its filled block, which the
 * option table cannot express; a failure is reported at the plugin's
 * entry, as its values may span several lines.
 */
static int
host_check_values(const struct config *c, const struct config_plugin *cp,
    const struct vitals_plugin *d, const void *block, char *err, size_t errlen)
{
	char why[512] = "";
	int r;

	if ((r = loader_check_config(d, block, why, sizeof(why))) != 0)
		snprintf(err, errlen, "%s:%u:%u: plugin '%s': %s", c->file,
		    cp->line, cp->col, cp->name, why[0] ? why : strerror(-r));
	return r;
}

/*
 * Whether epochs can be stored in c's data_dir: it exists or can be made,
 * is writable and, as root, trusted (safefile_dir_check), without making
 * anything.  A directory only this user cannot write is a warning when
 * not root: the daemon is usually run as root, where a check by hand is
 * not.  Returns 0 or -EINVAL with "FILE:LINE:COL: data_dir ..." in err.
 */
static int
host_check_data_dir(const struct config *c, char *err, size_t errlen)
{
	char why[PATH_MAX + 256], at[PATH_MAX + 32];
	int r;

	if (c->data_dir == NULL ||
	    (r = safefile_dir_check(c->data_dir, why, sizeof(why))) == 0)
		return 0;
	if (c->data_dir_line > 0)
		snprintf(at, sizeof(at), "%s:%u:%u", c->file, c->data_dir_line,
		    c->data_dir_col);
	else
		snprintf(
		    at, sizeof(at), "%s", c->file ? c->file : "(defaults)");
	if ((r == -EACCES || r == -EROFS) && geteuid() != 0) {
		log_msg(VITALS_LOG_WARN, "core",
		    "%s: data_dir %s (vitalsd "
		    "must run as a user who can write it)",
		    at, why);
		return 0;
	}
	snprintf(err, errlen, "%s: data_dir %s", at, why);
	return -EINVAL;
}

/*
 * Disabled plugins are checked too: the file is checked as a whole, so
 * that `enable: true` later cannot reveal an error it already held.
 */
int
host_check(const struct config *c, struct loader *l, int quiet, char *err,
    size_t errlen)
{
	const struct vitals_plugin *d;
	int probes = 0, outputs = 0;
	void *block;
	size_t i;
	int r;

	for (i = 0; i < c->nplugins; i++) {
		const struct config_plugin *cp = &c->plugins[i];

		if ((r = host_resolve(c, l, cp, &d, err, errlen)) != 0) {
			if (cp->enabled)
				return r;
			/* A disabled plugin need not be installed. */
			log_msg(VITALS_LOG_WARN, "core",
			    "%s (disabled: its "
			    "options are not checked)",
			    err);
			err[0] = '\0';
			continue;
		}
		if ((block = calloc(1, d->config_size ? d->config_size : 1)) ==
		    NULL)
			return -ENOMEM;
		r = option_fill(d->options, block, cp->entries, cp->nentries,
		    c->file, err, errlen);
		if (r == 0)
			r = host_check_values(c, cp, d, block, err, errlen);
		option_free(d->options, block);
		free(block);
		if (r != 0)
			return -EINVAL;
		if (!quiet && cp->enabled &&
		    host_probe_available(d, cp->name)) {
			probes += d->kind == VITALS_PLUGIN_PROBE;
			outputs += d->kind == VITALS_PLUGIN_OUTPUT;
		}
	}
	if ((r = host_check_data_dir(c, err, errlen)) != 0)
		return r;
	if (!quiet)
		host_warn_idle(c->file, probes, outputs);
	return 0;
}

/* ---- the epoch boundary ---- */

/*
 * Between the steps of a boundary's work (writing, each filter run, each
 * rollup), run the probes' watches that are ready: a BPF probe's ring
 * wakes its watch when it is half full, and the samples of an epoch's
 * first moments (every label a first sighting again) come while the last
 * epoch is being written and filtered, which took long enough for a ring
 * to overflow.  The CPU the samples take is sampling's, not the
 * boundary's (engine_vital_sampling, engine_fixed_end).  A watch's
 * callback may delete its own watch, as in the event loop.
 */
static void
host_drain(void *arg)
{
	struct host *h = arg;
	struct vitals_watch *w, *next;
	struct vitals_ctx *ctx;
	struct pollfd pfd;

	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		if (ctx->desc->kind != VITALS_PLUGIN_PROBE)
			continue;
		for (w = LIST_FIRST(&ctx->watches); w != NULL; w = next) {
			next = LIST_NEXT(w, link);
			pfd.fd = event_get_fd(w->ev);
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN))
				w->cb(pfd.fd, w->arg);
		}
	}
}

/* The aggregator's parameters from configuration c. */
static void
host_agg_params(
    struct host *h, const struct config *c, struct aggregate_params *p)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->ntimescales = c->ntimescales;
	for (i = 0; i < c->ntimescales; i++)
		p->timescales[i] = c->timescales[i];
	p->queue_len = c->queue_len;
	p->base_ns = c->epoch_ns;
	p->queue_samples = c->queue_samples;
	p->max_samples = c->sketch.max_samples;
	/* An hour's and a day's queues are read once an hour or a day. */
	p->park = 1;
	p->between = host_drain;
	p->between_arg = h;
}

/*
 * Hand the running filters to the aggregator, each at every timescale,
 * remaking it first if c changed the timescales, the queue length or the
 * sample bound (the queues and open rollups then start afresh).
 */
static int
host_agg_update(struct host *h, const struct config *c)
{
	struct aggregate_filter *f;
	struct aggregate_params p;
	struct aggregate *a;
	struct vitals_ctx *ctx;
	size_t n = 0;
	int r;

	/* Never leave it pointing at instances a reload has freed. */
	if (h->agg != NULL)
		aggregate_filters(h->agg, NULL, 0);
	host_agg_params(h, c, &p);
	if (h->agg == NULL || memcmp(&p, aggregate_params(h->agg), sizeof(p))) {
		if ((a = aggregate_new(&p)) == NULL)
			return -ENOMEM;
		aggregate_free(h->agg);
		h->agg = a;
	}
	TAILQ_FOREACH(ctx, &h->insts, link)
	n++;
	if ((f = calloc(n + 1, sizeof(*f))) == NULL)
		return -ENOMEM;
	n = 0;
	TAILQ_FOREACH(ctx, &h->insts, link)
	if (ctx->desc->kind == VITALS_PLUGIN_FILTER)
		f[n++] = (struct aggregate_filter){ ctx, AGGREGATE_ALL, NULL };
	r = aggregate_filters(h->agg, f, n);
	free(f);
	return r;
}

/* Every probe flushes what it kept elsewhere into the closing epoch. */
static void
host_flush(struct host *h)
{
	struct vitals_ctx *ctx;
	int r;

	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		if (ctx->desc->kind != VITALS_PLUGIN_PROBE ||
		    ctx->desc->flush == NULL)
			continue;
		if ((r = ctx->desc->flush(ctx->state)) != 0)
			instance_complain(ctx, "flush", r);
	}
}

/* host_write()'s moments: before the filters ran, or after. */
#define HOST_BEFORE_FILTERS 0
#define HOST_AFTER_FILTERS 1

/*
 * Hand e to the outputs: before the filters, those that take it then (ABI
 * minor HOST_MINOR_EARLY_WRITE and later); after them, the older ones,
 * and the others again when the filters added findings.
 */
static void
host_write(struct host *h, const struct vitals_epoch *e, int when, int findings)
{
	struct vitals_ctx *ctx;
	int early;

	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		if (ctx->desc->kind != VITALS_PLUGIN_OUTPUT)
			continue;
		early = ctx->desc->abi_minor >= HOST_MINOR_EARLY_WRITE;
		if (when == HOST_BEFORE_FILTERS ? early : !early || findings)
			instance_write(ctx, e);
	}
}

/* Whether the epoch's finding a is made before b, for group_note. */
static int
host_group_before(const struct vitals_finding *a, uint32_t ia,
    const struct vitals_finding *b, uint32_t ib)
{
	int ra = group_rank(a->filter), rb = group_rank(b->filter);

	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns;
	if (ra != rb)
		return ra < rb;
	return ia < ib;
}

/*
 * One warning per incident, whatever the filters that see it: the
 * epoch's findings in the order group_note wants, a repeat lowered and
 * marked (group.h).
 */
static void
host_group(struct host *h, const struct vitals_epoch *e)
{
	const struct vitals_finding *f = e->findings;
	char with[320], suffix[360];
	uint32_t *idx, n = e->nfindings, i, j, x;

	if (n == 0 || (idx = malloc(n * sizeof(*idx))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		x = i;
		for (j = i; j > 0 &&
		     host_group_before(&f[x], x, &f[idx[j - 1]], idx[j - 1]);
		     j--)
			idx[j] = idx[j - 1];
		idx[j] = x;
	}
	for (i = 0; i < n; i++) {
		x = idx[i];
		if (group_note(h->grp, e->host, f[x].filter, &f[x], with,
			sizeof(with)) != 1)
			continue;
		snprintf(suffix, sizeof(suffix), GROUP_TEXT, with);
		if (engine_finding_regroup(h->eng, x,
			f[x].severity >= VITALS_SEV_CRIT ? VITALS_SEV_CRIT
							 : VITALS_SEV_INFO,
			suffix) != 0)
			log_limited(&h->lim, VITALS_LOG_ERR, "core",
			    "out of memory grouping findings");
	}
	free(idx);
}

/*
 * A warning that the programs' CPU is over cpu_high, at most this often,
 * unless it grew HOST_CPU_WARN_GROWTH times since.
 */
#define HOST_CPU_WARN_NS (3600 * 1000000000ULL)
#define HOST_CPU_WARN_GROWTH 4
#define HOST_CPU_WARN_PROBES 6 /* probes named in it, the costliest */

/*
 * Warn when the probes' programs, counting each event in the kernel, took
 * more of a CPU in epoch e than cpu_high allows: the watermarks steer the
 * samples (t), which cannot lower that part, so a daemon over its budget
 * says why and which probes cost what.  Once, then at most hourly while
 * it lasts, or sooner for a share HOST_CPU_WARN_GROWTH times the last one
 * said (a workload that makes the probes' events many times as often);
 * never with cpu_high 0, which turns the watermark off.  Each probe's
 * count restarts with the next epoch.
 */
static void
host_cpu_check(struct host *h, const struct vitals_epoch *e, uint64_t at_ns)
{
	struct vitals_ctx *ctx, *top[HOST_CPU_WARN_PROBES];
	uint64_t total = 0;
	double share;
	char list[256];
	size_t off = 0;
	int n = 0, k = 0, i, j;

	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		if (ctx->cpu_ns == 0)
			continue;
		total += ctx->cpu_ns;
		k++;
		for (i = n; i > 0 && top[i - 1]->cpu_ns < ctx->cpu_ns; i--)
			if (i < HOST_CPU_WARN_PROBES)
				top[i] = top[i - 1];
		if (i < HOST_CPU_WARN_PROBES) {
			top[i] = ctx;
			n += n < HOST_CPU_WARN_PROBES;
		}
	}
	share = e->length_ns > 0 ? (double)total / (double)e->length_ns : 0;
	if (e->length_ns > 0 && h->cfg->cpu_high > 0 &&
	    share > h->cfg->cpu_high &&
	    (h->cpu_warned_ns == 0 ||
		at_ns - h->cpu_warned_ns >= HOST_CPU_WARN_NS ||
		share >= HOST_CPU_WARN_GROWTH * h->cpu_warned)) {
		h->cpu_warned_ns = at_ns;
		h->cpu_warned = share;
		list[0] = '\0';
		for (j = 0; j < n && off < sizeof(list); j++)
			off += (size_t)snprintf(list + off, sizeof(list) - off,
			    "%s%s %.2f%%", j ? ", " : "", top[j]->name,
			    100.0 * (double)top[j]->cpu_ns /
				(double)e->length_ns);
		log_msg(VITALS_LOG_WARN, "core",
		    "the probes' programs took %.2f%% of a CPU counting events "
		    "in the last epoch, above sketch.cpu_high (%g%%): %s%s. "
		    "Sampling less (t) does not lower that; leaving a probe out "
		    "of %s saves its share. Said again in an hour if it lasts, "
		    "or sooner if it grows fourfold",
		    100.0 * share, 100.0 * h->cfg->cpu_high, list,
		    k > n ? " and others" : "",
		    h->cfg->file != NULL ? h->cfg->file : "the configuration");
	}
	TAILQ_FOREACH(ctx, &h->insts, link)
	{
		ctx->cpu_ns = 0;
	}
}

/*
 * Close the current epoch at at_ns: probes flush, outputs write it, the
 * aggregator runs the filters on it and on every rollup it completes
 * (their findings land in this epoch, warnings about one exe grouped),
 * and outputs write it again if findings came.  Writing first means a
 * crash while the filters run (a model scoring can take tens of ms) loses
 * the findings, not the epoch.
 */
static void
host_close_epoch(struct host *h, uint64_t at_ns, int partial)
{
	const struct vitals_epoch *e;
	uint32_t nfindings;

	host_flush(h);
	e = engine_close(h->eng, at_ns, partial);
	host_cpu_check(h, e, at_ns);
	host_write(h, e, HOST_BEFORE_FILTERS, 0);
	host_drain(h);
	nfindings = e->nfindings;
	if (aggregate_live(h->agg, e) == -ENOMEM)
		log_limited(&h->lim, VITALS_LOG_ERR, "core",
		    "out of memory keeping the filter queues");
	host_drain(h);
	host_group(h, e);
	host_write(h, e, HOST_AFTER_FILTERS, e->nfindings != nfindings);
	host_drain(h);
	h->closed++;
	log_msg(VITALS_LOG_DEBUG, "core",
	    "epoch %llu closed: %u vitals, %u findings%s",
	    (unsigned long long)e->seq, e->nvitals, e->nfindings,
	    partial ? " (partial)" : "");
	/* Read by all: its samples' memory goes to the next epoch's. */
	engine_release(h->eng);
	/* No sample holds a file's symbol names now: the unused ones go. */
	sym_files_trim();
#ifdef __GLIBC__
	/*
	 * The epoch's copies, attributions and merges are freed now, the
	 * most of the heap that is free at any time: under churn 3 MB of
	 * whole free pages between the blocks the queues keep, which glibc
	 * gives back only at the top of the heap unless asked.
	 */
	malloc_trim(0);
#endif
}

/*
 * Boundaries fall on multiples of the epoch length in wall-clock time, so
 * epochs of several hosts line up and roll up into 5m/1h/1d slots.  A
 * first epoch shorter than half a length is merged into the next one.
 */
static uint64_t
host_next_boundary(uint64_t now, uint64_t len, int first)
{
	uint64_t next = (now / len + 1) * len;

	if (first && next - now < len / 2)
		next += len;
	return next;
}

static void
host_arm_epoch(struct host *h, int first)
{
	struct timeval tv;
	uint64_t now = host_now_ns(), d;

	h->next_ns = host_next_boundary(now, h->cfg->epoch_ns, first);
	d = h->next_ns - now;
	tv.tv_sec = (time_t)(d / 1000000000ULL);
	tv.tv_usec = (suseconds_t)(d % 1000000000ULL / 1000);
	evtimer_add(h->epoch_ev, &tv);
}

static void
host_on_epoch(evutil_socket_t fd, short what, void *arg)
{
	struct host *h = arg;
	uint64_t now = host_now_ns(), d;
	struct timeval tv;

	(void)fd;
	(void)what;
	/*
	 * The timer may fire a little early; never close before the boundary.
	 * One reading of the clock: read twice, a thread preempted between
	 * the two (a loaded machine) could pass the boundary in between and
	 * arm the timer for centuries.
	 */
	if (now + 1000000 < h->next_ns) {
		d = h->next_ns - now;
		tv.tv_sec = (time_t)(d / 1000000000ULL);
		tv.tv_usec = (suseconds_t)(d % 1000000000ULL / 1000);
		evtimer_add(h->epoch_ev, &tv);
		return;
	}
	/* Stamp the nominal boundary, so epochs of every host line up exactly. */
	host_close_epoch(h, h->next_ns, 0);
	if (h->max_epochs && h->closed >= h->max_epochs) {
		event_base_loopbreak(h->base);
		return;
	}
	host_arm_epoch(h, 0);
}

static void
host_on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct host *h = arg;

	(void)fd;
	(void)what;
	engine_tick(h->eng);
}

static void
host_on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct host *h = arg;

	(void)what;
	if (sig == SIGHUP) {
		log_msg(VITALS_LOG_INFO, "core", "SIGHUP: reloading %s",
		    h->cfg->file ? h->cfg->file : "(no file)");
		(void)notify_send("RELOADING=1");
		host_reload(h);
		(void)notify_send("READY=1");
		return;
	}
	(void)notify_send("STOPPING=1");
	log_msg(VITALS_LOG_INFO, "core", "%s: writing the partial epoch",
	    sig == SIGTERM ? "SIGTERM" : "SIGINT");
	host_close_epoch(h, host_now_ns(), 1);
	event_base_loopbreak(h->base);
}

/* A stored epoch older than this many epoch lengths gives no t to resume. */
#define HOST_RESUME_EPOCHS 10

/*
 * The host part of the names this host's epochs are stored under (host
 * names are made safe for a file name), or "" if it cannot be made.
 */
static void
host_file_name(const struct host *h, char *out, size_t len)
{
	char rel[512];
	const char *base;
	uint64_t start;

	out[0] = '\0';
	if (h->cfg->host == NULL ||
	    codec_epoch_relpath(0, h->cfg->host, rel, sizeof(rel)) < 0 ||
	    (base = strrchr(rel, '/')) == NULL ||
	    codec_parse_name(base + 1, &start, out, len) < 0)
		out[0] = '\0';
}

/*
 * A restart starts each vital at the t this host's newest epoch in
 * data_dir ended with, if it ended within HOST_RESUME_EPOCHS epochs: t
 * was raised to keep the collector under its CPU and sample marks, and a
 * daemon restarted at the configured t would sample the labels it already
 * sampled at every power of 2 again.  A file that does not load is
 * passed over; nothing here stops a start.
 */
static void
host_resume(struct host *h, uint64_t now)
{
	struct vitals_store_list l = { 0, NULL };
	struct vitals_epoch *ep;
	uint64_t window, end;
	char why[256], mine[256];
	size_t i;

	window = HOST_RESUME_EPOCHS * h->cfg->epoch_ns;
	host_file_name(h, mine, sizeof(mine));
	if (h->cfg->data_dir == NULL || now < window ||
	    vitals_store_list_since(h->cfg->data_dir, now - window, &l) < 0)
		return;
	/* Newest first; the listing holds only starts within the window. */
	for (i = l.n; i-- > 0;) {
		/* A store shared by peers: load only files named like ours. */
		if (mine[0] != '\0' && strcmp(l.v[i].host, mine) != 0)
			continue;
		if (vitals_epoch_load(l.v[i].path, &ep, why, sizeof(why)) < 0) {
			log_msg(VITALS_LOG_DEBUG, "core", "resume: %s", why);
			continue;
		}
		end = ep->start_ns + ep->length_ns;
		if (end <= now && now - end < window &&
		    engine_resume(h->eng, ep) == 0) {
			log_msg(VITALS_LOG_DEBUG, "core", "resuming t from %s",
			    l.v[i].path);
			vitals_epoch_free(ep);
			break;
		}
		vitals_epoch_free(ep);
	}
	vitals_store_list_free(&l);
}

int
host_start(struct host *h, char *err, size_t errlen)
{
	struct instance_list none;
	char ts[512];
	uint64_t now, fixed;
	int r;

	TAILQ_INIT(&none);
	now = host_now_ns();
	/* Before the probes: their labels are keyed with it. */
	if (kaddr_init(h->cfg->data_dir, ts, sizeof(ts)) < 0)
		log_msg(VITALS_LOG_WARN, "core",
		    "kernel address key: %s; keyed kernel pointers change at "
		    "each start",
		    ts);
	host_resume(h, now);
	engine_start(h->eng, now);
	fixed = engine_fixed_begin(h->eng);
	r = host_instantiate(h, h->cfg, &none, &h->insts, err, errlen);
	engine_fixed_end(h->eng, fixed);
	if (engine_resume_end(h->eng, ts, sizeof(ts)) > 0)
		log_msg(VITALS_LOG_INFO, "core",
		    "t resumed from the last "
		    "stored epoch: %s",
		    ts);
	if (r != 0)
		return r;
	host_warn_idle_insts(h);
	if ((r = host_agg_update(h, h->cfg)) != 0)
		snprintf(err, errlen, "out of memory");
	return r;
}

static int
host_events_add(struct host *h)
{
	static const int sigs[3] = { SIGTERM, SIGINT, SIGHUP };
	struct timeval sec = { 1, 0 };
	int i;

	h->epoch_ev = evtimer_new(h->base, host_on_epoch, h);
	h->tick_ev = event_new(h->base, -1, EV_PERSIST, host_on_tick, h);
	if (h->epoch_ev == NULL || h->tick_ev == NULL)
		return -ENOMEM;
	for (i = 0; i < 3; i++) {
		h->sig_ev[i] =
		    evsignal_new(h->base, sigs[i], host_on_signal, h);
		if (h->sig_ev[i] == NULL ||
		    evsignal_add(h->sig_ev[i], NULL) != 0)
			return -ENOMEM;
	}
	signal(SIGPIPE, SIG_IGN);
	evtimer_add(h->tick_ev, &sec);
	return 0;
}

int
host_run(struct host *h, uint64_t max_epochs)
{
	int r;

	h->max_epochs = max_epochs;
	if ((r = host_events_add(h)) != 0)
		return r;
	host_arm_epoch(h, 1);
	/* The probes are attached and the loop is about to run. */
	if ((r = notify_send("READY=1")) < 0)
		log_msg(
		    VITALS_LOG_WARN, "core", "NOTIFY_SOCKET: %s", strerror(-r));
	if (event_base_dispatch(h->base) < 0)
		return -EIO;
	return 0;
}

/*
 * What vitalsd's command line set outlives the file's value: a reload of
 * a daemon started with --data-dir stores where it did.  0, or -ENOMEM
 * (said).
 */
static int
host_keep_cli(const struct host *h, struct config *c)
{
	char *dir;

	if (!h->cfg->data_dir_cli)
		return 0;
	if ((dir = strdup(h->cfg->data_dir)) == NULL) {
		log_msg(VITALS_LOG_ERR, "core",
		    "reload refused, keeping the running configuration: "
		    "out of memory");
		return -ENOMEM;
	}
	if (c->data_dir != NULL && strcmp(c->data_dir, dir) != 0)
		log_msg(VITALS_LOG_INFO, "core",
		    "data_dir stays %s (--data-dir), not the file's %s", dir,
		    c->data_dir);
	free(c->data_dir);
	c->data_dir = dir;
	c->data_dir_line = c->data_dir_col = 0;
	c->data_dir_cli = 1;
	return 0;
}

int
host_reload(struct host *h)
{
	struct instance_list next;
	struct vitals_ctx *ctx;
	struct config *c;
	char err[1024];
	uint64_t fixed;
	int r;

	if ((r = config_load(h->cfg->file, &c, err, sizeof(err))) != 0) {
		log_msg(VITALS_LOG_ERR, "core",
		    "reload refused, keeping the running configuration: %s",
		    err);
		return r;
	}
	if ((r = host_keep_cli(h, c)) != 0) {
		config_free(c);
		return r;
	}
	TAILQ_INIT(&next);
	fixed = engine_fixed_begin(h->eng);
	r = host_check(c, h->ldr, 1, err, sizeof(err));
	if (r == 0)
		r = host_instantiate(h, c, &h->insts, &next, err, sizeof(err));
	engine_fixed_end(h->eng, fixed);
	if (r != 0) {
		log_msg(VITALS_LOG_ERR, "core",
		    "reload refused, keeping the running configuration: %s",
		    err);
		config_free(c);
		return r;
	}
	/* What is left in insts was removed or re-optioned: stop it. */
	while ((ctx = TAILQ_FIRST(&h->insts)) != NULL) {
		TAILQ_REMOVE(&h->insts, ctx, link);
		log_msg(VITALS_LOG_INFO, "core", "stopping '%s'", ctx->name);
		instance_stop(ctx);
		instance_free(ctx);
	}
	TAILQ_CONCAT(&h->insts, &next, link);
	if (c->data_dir && h->cfg->data_dir &&
	    strcmp(c->data_dir, h->cfg->data_dir))
		log_msg(
		    VITALS_LOG_INFO, "core", "data_dir now %s", c->data_dir);
	engine_reconfigure(h->eng, c, c->host);
	if (host_agg_update(h, c) != 0)
		log_msg(VITALS_LOG_ERR, "core",
		    "out of memory: filters keep their previous timescales");
	config_free(h->cfg);
	h->cfg = c;
	host_settings_update(h);
	log_msg(VITALS_LOG_INFO, "core", "configuration reloaded");
	host_warn_idle_insts(h);
	return 0;
}

void
host_free(struct host *h)
{
	struct vitals_ctx *ctx;
	int i;

	if (h == NULL)
		return;
	while ((ctx = TAILQ_FIRST(&h->insts)) != NULL) {
		TAILQ_REMOVE(&h->insts, ctx, link);
		instance_stop(ctx);
		instance_free(ctx);
	}
	aggregate_free(h->agg);
	group_free(h->grp);
	if (h->epoch_ev)
		event_free(h->epoch_ev);
	if (h->tick_ev)
		event_free(h->tick_ev);
	for (i = 0; i < 3; i++)
		if (h->sig_ev[i])
			event_free(h->sig_ev[i]);
	engine_free(h->eng);
	if (h->base)
		event_base_free(h->base);
	config_free(h->cfg);
	free(h);
}

/* ---- the SDK's services ---- */

int
vitals_vital_open(struct vitals_ctx *ctx, const char *name, const char *unit,
    struct vitals_vital **out)
{
	int r;

	r = engine_vital_open(ctx->host->eng, name, unit, out);
	if (r == -EEXIST)
		vitals_error(
		    ctx, "vital '%s' is already open with another unit", name);
	else if (r != 0)
		vitals_error(
		    ctx, "cannot open vital '%s': %s", name, strerror(-r));
	return r;
}

uint64_t
vitals_monotonic_ns(const struct vitals_ctx *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
vitals_cpu_add(struct vitals_ctx *ctx, uint64_t ns)
{
	ctx->cpu_ns += ns;
	engine_cpu_add(ctx->host->eng, ns);
}

int
vitals_metric_put(
    struct vitals_ctx *ctx, const char *name, const char *unit, double value)
{
	int r;

	/* Range queries run filters with no engine behind them. */
	if (ctx->host == NULL)
		return -ENOTSUP;
	r = engine_metric_put(ctx->host->eng, name, unit, value);
	if (r == -ENOSPC)
		log_limited(&ctx->lim, VITALS_LOG_WARN, ctx->name,
		    "metric '%s' dropped: %u metric names kept already", name,
		    METRIC_MAX_NAMES);
	return r;
}

struct event_base *
vitals_event_base(struct vitals_ctx *ctx)
{
	return ctx->host != NULL ? ctx->host->base : NULL;
}

static void
host_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct vitals_timer *t = arg;

	(void)fd;
	(void)what;
	/*
	 * The first run was at a multiple of the interval; from it, the
	 * loop's cached time, every timer of that interval re-arms to the
	 * same deadlines (libevent keeps a persistent timer's phase).
	 */
	if (!t->periodic) {
		event_assign(t->ev, t->ctx->host->base, -1, EV_PERSIST,
		    host_on_timer, t);
		evtimer_add(t->ev, &t->interval);
		t->periodic = 1;
	}
	t->cb(t->arg);
}

int
vitals_timer_add(struct vitals_ctx *ctx, uint64_t interval_ns,
    void (*cb)(void *arg), void *arg, struct vitals_timer **out)
{
	struct vitals_timer *t;
	struct timeval tv;
	uint64_t first;

	if (cb == NULL || interval_ns == 0)
		return -EINVAL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -ENOMEM;
	t->ctx = ctx;
	t->cb = cb;
	t->arg = arg;
	t->ev = event_new(ctx->host->base, -1, 0, host_on_timer, t);
	if (t->ev == NULL) {
		free(t);
		return -ENOMEM;
	}
	t->interval.tv_sec = (time_t)(interval_ns / 1000000000ULL);
	t->interval.tv_usec = (suseconds_t)(interval_ns % 1000000000ULL / 1000);
	/*
	 * First at the next multiple of the interval on the monotonic
	 * clock, so that timers of one interval (every BPF probe's drain)
	 * wake the daemon once between them, not once each.
	 */
	first = interval_ns - vitals_monotonic_ns(ctx) % interval_ns;
	tv.tv_sec = (time_t)(first / 1000000000ULL);
	tv.tv_usec = (suseconds_t)(first % 1000000000ULL / 1000);
	evtimer_add(t->ev, &tv);
	LIST_INSERT_HEAD(&ctx->timers, t, link);
	if (out != NULL)
		*out = t;
	return 0;
}

void
vitals_timer_del(struct vitals_timer *t)
{
	if (t == NULL)
		return;
	LIST_REMOVE(t, link);
	event_free(t->ev);
	free(t);
}

static void
host_on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct vitals_watch *w = arg;

	(void)what;
	w->cb(fd, w->arg);
}

int
vitals_watch_add(struct vitals_ctx *ctx, int fd, void (*cb)(int fd, void *arg),
    void *arg, struct vitals_watch **out)
{
	struct vitals_watch *w;

	if (cb == NULL || fd < 0)
		return -EINVAL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->ctx = ctx;
	w->cb = cb;
	w->arg = arg;
	w->ev = event_new(
	    ctx->host->base, fd, EV_READ | EV_PERSIST, host_on_watch, w);
	if (w->ev == NULL || event_add(w->ev, NULL) != 0) {
		if (w->ev)
			event_free(w->ev);
		free(w);
		return -ENOMEM;
	}
	LIST_INSERT_HEAD(&ctx->watches, w, link);
	if (out != NULL)
		*out = w;
	return 0;
}

void
vitals_watch_del(struct vitals_watch *w)
{
	if (w == NULL)
		return;
	LIST_REMOVE(w, link);
	event_free(w->ev);
	free(w);
}
