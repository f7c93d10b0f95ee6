/* SPDX-License-Identifier: MIT */
/*
 * Plugin instances: made from a configured plugin, started and stopped,
 * and the SDK services that need no event loop.  The daemon's host and the
 * range-query aggregator both run filters through these, each with its
 * own sink for findings and series.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"
#include "option.h"

char *
instance_optkey(const struct config_plugin *cp)
{
	size_t i, j, len = 1;
	char *k;

	for (i = 0; i < cp->nentries; i++) {
		len += strlen(cp->entries[i].key) + 2;
		if (cp->entries[i].scalar)
			len += strlen(cp->entries[i].scalar);
		for (j = 0; j < cp->entries[i].nitems; j++)
			len += strlen(cp->entries[i].items[j]) + 1;
	}
	if ((k = calloc(1, len)) == NULL)
		return NULL;
	for (i = 0; i < cp->nentries; i++) {
		strcat(k, cp->entries[i].key);
		strcat(k, "\x1f");
		if (cp->entries[i].scalar)
			strcat(k, cp->entries[i].scalar);
		for (j = 0; j < cp->entries[i].nitems; j++) {
			strcat(k, cp->entries[i].items[j]);
			strcat(k, "\x1d");
		}
		strcat(k, "\x1e");
	}
	return k;
}

void
instance_free(struct vitals_ctx *ctx)
{
	if (ctx == NULL)
		return;
	while (!LIST_EMPTY(&ctx->timers))
		vitals_timer_del(LIST_FIRST(&ctx->timers));
	while (!LIST_EMPTY(&ctx->watches))
		vitals_watch_del(LIST_FIRST(&ctx->watches));
	if (ctx->config != NULL) {
		option_free(ctx->desc->options, ctx->config);
		free(ctx->config);
	}
	free(ctx->optkey);
	free(ctx->name);
	free(ctx);
}

int
instance_new(const struct vitals_plugin *d, const struct config_plugin *cp,
    const char *file, const struct vitals_settings *settings, struct host *h,
    struct vitals_ctx **out, char *err, size_t errlen)
{
	struct vitals_ctx *ctx;

	if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
		return -ENOMEM;
	ctx->host = h;
	ctx->settings = settings;
	ctx->desc = d;
	ctx->lim = (struct log_limit)LOG_LIMIT_INIT;
	LIST_INIT(&ctx->timers);
	LIST_INIT(&ctx->watches);
	ctx->name = strdup(cp->name);
	ctx->optkey = instance_optkey(cp);
	ctx->config = calloc(1, d->config_size ? d->config_size : 1);
	if (!ctx->name || !ctx->optkey || !ctx->config) {
		instance_free(ctx);
		return -ENOMEM;
	}
	if (option_fill(d->options, ctx->config, cp->entries, cp->nentries,
		file, err, errlen) != 0) {
		instance_free(ctx);
		return -EINVAL;
	}
	*out = ctx;
	return 0;
}

int
instance_init(struct vitals_ctx *ctx, char *err, size_t errlen)
{
	int r;

	if (ctx->desc->init == NULL)
		return 0;
	if ((r = ctx->desc->init(ctx, ctx->config, &ctx->state)) != 0) {
		snprintf(err, errlen, "plugin '%s': init failed: %s", ctx->name,
		    ctx->err[0] ? ctx->err : strerror(r < 0 ? -r : r));
		return r < 0 ? r : -EIO;
	}
	return 0;
}

/* Instances whose fini reported a failure, in this process. */
static unsigned instance_failed_stops;

int
instance_stop(struct vitals_ctx *ctx)
{
	int r = 0;

	/* fini first: a plugin may delete its own timers and watches there. */
	ctx->err[0] = '\0';
	if (ctx->desc->fini != NULL)
		ctx->desc->fini(ctx->state);
	ctx->state = NULL;
	while (!LIST_EMPTY(&ctx->timers))
		vitals_timer_del(LIST_FIRST(&ctx->timers));
	while (!LIST_EMPTY(&ctx->watches))
		vitals_watch_del(LIST_FIRST(&ctx->watches));
	/* What fini could not save (a trained model) is said and counted. */
	if (ctx->err[0] != '\0') {
		log_msg(VITALS_LOG_ERR, ctx->name, "%s", ctx->err);
		instance_failed_stops++;
		r = -EIO;
	}
	return r;
}

unsigned
instance_stop_failures(void)
{
	return instance_failed_stops;
}

void
instance_complain(struct vitals_ctx *ctx, const char *what, int r)
{
	log_limited(&ctx->lim, VITALS_LOG_ERR, ctx->name, "%s failed: %s", what,
	    ctx->err[0] ? ctx->err : strerror(r < 0 ? -r : r));
	ctx->err[0] = '\0';
}

int
instance_filter(
    struct vitals_ctx *ctx, const struct vitals_queue *q, const char *host)
{
	const struct vitals_epoch *e = q->epochs[q->n - 1];
	int r;

	if (ctx->desc->epoch == NULL)
		return 0;
	ctx->run.host = host;
	ctx->run.timescale_s = q->timescale_s;
	ctx->run.start_ns = e->start_ns;
	ctx->run.end_ns = e->start_ns + e->length_ns;
	if ((r = ctx->desc->epoch(ctx->state, q)) != 0)
		instance_complain(ctx, "epoch", r);
	memset(&ctx->run, 0, sizeof(ctx->run));
	return r;
}

/* Output writes that failed (epochs lost), in this process. */
static unsigned instance_failed_writes;

int
instance_write(struct vitals_ctx *ctx, const struct vitals_epoch *e)
{
	int r;

	if (ctx->desc->write == NULL)
		return 0;
	if ((r = ctx->desc->write(ctx->state, e)) != 0) {
		instance_complain(ctx, "write", r);
		instance_failed_writes++;
	}
	return r;
}

unsigned
instance_write_failures(void)
{
	return instance_failed_writes;
}

/* ---- the SDK's services that need no loop ---- */

const struct vitals_settings *
vitals_settings(const struct vitals_ctx *ctx)
{
	return ctx->settings;
}

void
vitals_log(struct vitals_ctx *ctx, int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (level <= VITALS_LOG_WARN)
		log_limited(&ctx->lim, level, ctx->name, "%s", buf);
	else
		log_msg(level, ctx->name, "%s", buf);
}

void
vitals_error(struct vitals_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
}

/*
 * A finding without a timescale or a range gets those of the epoch being
 * looked at, so that every stored finding says where it was found.
 */
int
vitals_finding_emit(struct vitals_ctx *ctx, const struct vitals_finding *f)
{
	struct vitals_finding g = *f;

	if (g.timescale_s == 0)
		g.timescale_s = ctx->run.timescale_s;
	if (g.start_ns == 0 && g.end_ns == 0) {
		g.start_ns = ctx->run.start_ns;
		g.end_ns = ctx->run.end_ns;
	}
	if (ctx->sink.finding == NULL)
		return 0;
	return ctx->sink.finding(ctx->sink.arg, ctx, &g);
}

int
vitals_series_emit(
    struct vitals_ctx *ctx, const char *name, uint64_t ts_ns, double value)
{
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	if (ctx->sink.series == NULL)
		return 0;
	return ctx->sink.series(ctx->sink.arg, ctx, name, ts_ns, value);
}
