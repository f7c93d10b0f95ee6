/* SPDX-License-Identifier: MIT */
/*
 * Filters run by hand: one filter instance with its own loader, its
 * findings and series passed to the caller's sink, and
 * vitals_filter_once() for the SDK.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/aggregate.h>

#include "config.h"
#include "handrun.h"
#include "instance.h"
#include "loader.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define HANDRUN_CONFIG SYSCONFDIR "/vitals/vitals.yaml"

struct handrun {
	struct loader *ldr;
	struct vitals_ctx *ctx;
	struct vitals_filter_sink sink;
	struct vitals_settings st;
};

static int
handrun_on_finding(
    void *arg, struct vitals_ctx *ctx, const struct vitals_finding *f)
{
	struct handrun *h = arg;
	struct vitals_finding g = *f;

	g.filter = ctx->name;
	if (h->sink.finding != NULL)
		h->sink.finding(h->sink.arg, &g, ctx->run.host);
	return 0;
}

static int
handrun_on_series(void *arg, struct vitals_ctx *ctx, const char *name,
    uint64_t ts_ns, double value)
{
	struct handrun *h = arg;

	if (h->sink.series != NULL)
		h->sink.series(h->sink.arg, ctx->name, name, ts_ns, value);
	return 0;
}

/* The entries of filter `name` in cfg, with extra replacing or adding. */
static int
handrun_conf(const struct config *cfg, const char *name,
    const struct config_entry *extra, size_t nextra, struct config_plugin *cp)
{
	const struct config_plugin *src = NULL;
	size_t i, j;

	for (i = 0; i < cfg->nplugins; i++)
		if (cfg->plugins[i].kind == VITALS_PLUGIN_FILTER &&
		    strcmp(cfg->plugins[i].name, name) == 0)
			src = &cfg->plugins[i];
	memset(cp, 0, sizeof(*cp));
	cp->name = (char *)name;
	cp->kind = VITALS_PLUGIN_FILTER;
	cp->enabled = 1;
	cp->entries = calloc(
	    (src ? src->nentries : 0) + nextra + 1, sizeof(*cp->entries));
	if (cp->entries == NULL)
		return -ENOMEM;
	for (i = 0; src != NULL && i < src->nentries; i++) {
		for (j = 0; j < nextra; j++)
			if (strcmp(src->entries[i].key, extra[j].key) == 0)
				break;
		if (j == nextra)
			cp->entries[cp->nentries++] = src->entries[i];
	}
	for (j = 0; j < nextra; j++)
		cp->entries[cp->nentries++] = extra[j];
	return 0;
}

/* Open filter `name` on h's loader into *lp; 0 or -ENOENT with err. */
static int
handrun_open(struct handrun *h, const char *name,
    const struct loader_plugin **lp, char *err, size_t errlen)
{
	char why[1024];
	int r;

	if ((r = loader_open(h->ldr, name, lp, why, sizeof(why))) != 0) {
		snprintf(err, errlen, "filter '%s' %s: %s", name,
		    r == -ENOENT ? "is not installed" : "cannot be used", why);
		return r == -ENOMEM ? r : -ENOENT;
	}
	if ((*lp)->desc->kind != VITALS_PLUGIN_FILTER) {
		snprintf(err, errlen, "'%s' is not a filter", name);
		return -ENOENT;
	}
	return 0;
}

int
handrun_start(const struct config *cfg, const char *config_path,
    const char *data_dir, const char *name, const struct config_entry *extra,
    size_t nextra, const struct vitals_filter_sink *sink, struct handrun **out,
    char *err, size_t errlen)
{
	const struct loader_plugin *lp;
	struct config_plugin cp = { 0 };
	struct handrun *h;
	int r = -ENOMEM;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		goto fail;
	h->sink = *sink;
	h->ldr = loader_new(
	    (const char *const *)cfg->plugin_path.v, cfg->plugin_path.n);
	if (h->ldr == NULL || handrun_conf(cfg, name, extra, nextra, &cp) != 0)
		goto fail;
	if ((r = handrun_open(h, name, &lp, err, errlen)) != 0)
		goto fail;
	h->st.host = cfg->host;
	h->st.data_dir = data_dir;
	h->st.epoch_ns = cfg->epoch_ns;
	r = instance_new(lp->desc, &cp, config_path ? config_path : "(options)",
	    &h->st, NULL, &h->ctx, err, errlen);
	if (r != 0)
		goto fail;
	h->ctx->sink =
	    (struct instance_sink){ handrun_on_finding, handrun_on_series, h };
	if ((r = instance_init(h->ctx, err, errlen)) != 0) {
		instance_free(h->ctx);
		h->ctx = NULL;
		goto fail;
	}
	free(cp.entries);
	*out = h;
	return 0;
fail:
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(cp.entries);
	handrun_stop(h);
	return r;
}

int
handrun_feed(struct handrun *h, const struct vitals_queue *q, const char *host)
{
	return instance_filter(h->ctx, q, host);
}

int
handrun_stop(struct handrun *h)
{
	int r = 0;

	if (h == NULL)
		return 0;
	if (h->ctx != NULL) {
		r = instance_stop(h->ctx);
		instance_free(h->ctx);
	}
	loader_free(h->ldr);
	free(h);
	return r;
}

/* The configuration vitals_filter_once reads into *out. */
static int
handrun_config(
    const char *config, struct config **out, char *err, size_t errlen)
{
	FILE *f;

	if (config == NULL && (f = fopen(HANDRUN_CONFIG, "r")) != NULL) {
		fclose(f);
		config = HANDRUN_CONFIG;
	}
	if (config != NULL)
		return config_load(config, out, err, errlen);
	if ((*out = config_default()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int
vitals_filter_once(const char *config, const char *data_dir, const char *name,
    const char *const *keys, const char *const *values, size_t noverrides,
    const struct vitals_epoch *const *v, uint32_t n,
    const struct vitals_filter_sink *sink, char *err, size_t errlen)
{
	struct config_entry *extra;
	struct vitals_queue q;
	struct config *cfg = NULL;
	struct handrun *h = NULL;
	size_t i;
	int r;

	if (n == 0)
		return -EINVAL;
	if ((extra = calloc(noverrides + 1, sizeof(*extra))) == NULL)
		return -ENOMEM;
	for (i = 0; i < noverrides; i++) {
		extra[i].key = (char *)keys[i];
		extra[i].scalar = (char *)values[i];
	}
	if ((r = handrun_config(config, &cfg, err, errlen)) == 0 &&
	    (r = handrun_start(cfg, config, data_dir, name, extra, noverrides,
		 sink, &h, err, errlen)) == 0) {
		memset(&q, 0, sizeof(q));
		q.timescale_s = v[n - 1]->timescale_s;
		q.n = n;
		q.epochs = v;
		if ((r = handrun_feed(h, &q, v[n - 1]->host)) != 0)
			snprintf(
			    err, errlen, "filter '%s': %s", name, strerror(-r));
	}
	if (handrun_stop(h) != 0 && r == 0) {
		r = -EIO;
		snprintf(err, errlen, "filter '%s' failed as it stopped", name);
	}
	config_free(cfg);
	free(extra);
	return r;
}
