/* SPDX-License-Identifier: MIT */
/*
 * Plugin instances (the SDK's struct vitals_ctx): made from a configured
 * plugin and its options, started, stopped, and given the services that
 * need no event loop (settings, logging, errors, findings and series),
 * whose findings and series go to a sink chosen by the owner: the daemon's
 * engine, or the aggregator of a range query.
 */
#ifndef VITALS_INSTANCE_H
#define VITALS_INSTANCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <vitals/vitals.h>

#include "config.h"
#include "log.h"

struct host;
struct vitals_timer;
struct vitals_watch;

/*
 * Where an instance's findings and series go.  Either callback may be
 * NULL (the item is then dropped with 0).  The finding and the name are
 * borrowed for the call.
 */
struct instance_sink {
	int (*finding)(
	    void *arg, struct vitals_ctx *ctx, const struct vitals_finding *f);
	int (*series)(void *arg, struct vitals_ctx *ctx, const char *name,
	    uint64_t ts_ns, double value);
	void *arg;
};

/*
 * What a filter instance is looking at during an epoch() call: findings
 * emitted without a range or timescale get these, and sinks read the host.
 */
struct instance_run {
	const char *host; /* host of the newest epoch, or NULL */
	uint32_t timescale_s; /* timescale of the queue */
	uint64_t start_ns; /* range of the newest epoch */
	uint64_t end_ns;
};

/* A running plugin instance: the SDK's struct vitals_ctx. */
struct vitals_ctx {
	TAILQ_ENTRY(vitals_ctx) link; /* in its owner's list */
	struct host *host; /* daemon host, NULL elsewhere */
	const struct vitals_settings *settings; /* borrowed from the owner */
	const struct vitals_plugin *desc; /* borrowed from the loader */
	char *name; /* plugin name */
	char *optkey; /* options as written (reload) */
	void *config; /* filled config block */
	void *state; /* the plugin's state from init */
	char err[512]; /* last vitals_error() */
	uint64_t gen; /* owner generation that made it */
	struct log_limit lim; /* rate limit of its errors */
	LIST_HEAD(, vitals_timer) timers; /* owned, freed at stop */
	LIST_HEAD(, vitals_watch) watches; /* owned, freed at stop */
	struct instance_sink sink; /* findings and series */
	struct instance_run run; /* set around filter calls */
	uint64_t cpu_ns; /* its programs' CPU this epoch (vitals_cpu_add) */
};
TAILQ_HEAD(instance_list, vitals_ctx);

/*
 * The options of cp as written, one string, to tell a changed instance
 * on reload and to key cached results.  Caller frees; NULL if out of
 * memory.
 */
char *instance_optkey(const struct config_plugin *cp);

/*
 * Make an instance of plugin d configured by cp (options checked against
 * d's table; messages name `file`), not yet started.  settings and host
 * are borrowed and must outlive it.  Returns 0 and sets *out, -EINVAL
 * with "FILE:LINE:COL: ..." in err, or -ENOMEM.
 */
int instance_new(const struct vitals_plugin *d, const struct config_plugin *cp,
    const char *file, const struct vitals_settings *settings, struct host *h,
    struct vitals_ctx **out, char *err, size_t errlen);

/*
 * Run the plugin's init.  Returns 0, or its negative errno with
 * "plugin 'NAME': init failed: why" in err.
 */
int instance_init(struct vitals_ctx *ctx, char *err, size_t errlen);

/*
 * Run fini and delete its timers and watches; it may be started again.
 * A failure fini reports with vitals_error() (state it could not save,
 * such as a trained model) is logged as an error naming the plugin,
 * counted (instance_stop_failures) and kept in ctx->err.  Returns 0, or
 * -EIO after such a failure.
 */
int instance_stop(struct vitals_ctx *ctx);

/*
 * How many instance_stop calls in this process found fini failing, so a
 * command that stops its plugins at exit (vitalsd, vitals train) can exit
 * non-zero.
 */
unsigned instance_stop_failures(void);

/* Free a stopped instance; accepts NULL and half-built ones. */
void instance_free(struct vitals_ctx *ctx);

/* Log (rate-limited) that callback `what` failed with r, and why. */
void instance_complain(struct vitals_ctx *ctx, const char *what, int r);

/*
 * Call a filter's epoch() with queue q, the newest epoch being of `host`.
 * Failures are logged with instance_complain.  Returns the callback's
 * result (0 when the plugin has none).
 */
int instance_filter(
    struct vitals_ctx *ctx, const struct vitals_queue *q, const char *host);

/*
 * Hand closed epoch e (borrowed) to an output's write().  A failure (the
 * epoch is lost) is logged with instance_complain and counted
 * (instance_write_failures).  Returns the callback's result (0 when the
 * plugin has none).
 */
int instance_write(struct vitals_ctx *ctx, const struct vitals_epoch *e);

/*
 * How many output writes failed in this process, so that vitalsd exits
 * non-zero when epochs were lost.
 */
unsigned instance_write_failures(void);

#endif /* VITALS_INSTANCE_H */
