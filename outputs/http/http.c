/* SPDX-License-Identifier: MIT */
/*
 * The `http` output plugin: from the daemon's own loop, a read-only JSON
 * API over the store (doc/api.md), the page (web_dir), and /metrics for
 * Prometheus, which each closed epoch (write) keeps up to date.  Loopback
 * by default; another address needs a token (or insecure: true).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/store.h>
#include <vitals/vitals.h>

#include "metrics.h"
#include "server.h"

/* The config block the core fills from the YAML. */
struct http_config {
	char *listen; /* HOST:PORT */
	char *token; /* bearer token, or NULL */
	int insecure; /* non-loopback without a token */
	char *web_dir; /* the page's files */
	uint64_t max_range; /* ns */
	uint64_t max_response; /* bytes */
	int64_t max_requests; /* API requests answered at once */
	int64_t max_queued; /* more waiting for a worker */
	int64_t metrics_top; /* exes per vital on /metrics */
};

/* One instance. */
struct http_state {
	struct vitals_ctx *ctx; /* the core's handle, borrowed */
	struct server *srv;
	struct metrics *metrics; /* what /metrics shows */
};

static const struct vitals_option http_options[] = {
	{ .key = "listen",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct http_config, listen),
	    .def = "127.0.0.1:9977",
	    .help = "address and port to serve on: HOST:PORT or [IPV6]:PORT; "
		    "an address other than loopback needs a token" },
	{ .key = "token",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct http_config, token),
	    .def = NULL,
	    .help = "bearer token the API and /metrics require "
		    "(\"Authorization: Bearer TOKEN\"); the page is served "
		    "without it and asks for it (?token=TOKEN)" },
	{ .key = "insecure",
	    .type = VITALS_OPT_BOOL,
	    .offset = offsetof(struct http_config, insecure),
	    .def = "false",
	    .help = "allow a non-loopback listen address without a token" },
	{ .key = "web_dir",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct http_config, web_dir),
	    .def = SERVER_WEB_DIR,
	    .help = "directory of the page's files (only files under it are "
		    "served, never through a symbolic link); by default where "
		    "the page is installed, or $VITALS_WEB_DIR if set" },
	{ .key = "max_range",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct http_config, max_range),
	    .def = "31d",
	    .help = "longest time range a request may ask for (413 beyond)",
	    .min = 1,
	    .max = 3650.0 * 86400 },
	{ .key = "max_response",
	    .type = VITALS_OPT_SIZE,
	    .offset = offsetof(struct http_config, max_response),
	    .def = "64M",
	    .help = "largest answer in bytes (413 beyond)",
	    .min = 1024,
	    .max = 4.0 * (1 << 30) },
	{ .key = "max_requests",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct http_config, max_requests),
	    .def = "4",
	    .help = "API requests answered at once, each in a thread of its "
		    "own, never on the daemon's loop",
	    .min = 1,
	    .max = 64 },
	{ .key = "max_queued",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct http_config, max_queued),
	    .def = "64",
	    .help = "API requests that wait for a worker when max_requests "
		    "are being answered (503 beyond)",
	    .min = 0,
	    .max = 4096 },
	{ .key = "metrics_top",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct http_config, metrics_top),
	    .def = "10",
	    .help = "exes per vital on /metrics, by their share of the weight",
	    .min = 0,
	    .max = 1000 },
	{ .key = NULL }
};

/* The server's configuration from the block and the daemon's settings. */
static void
http_conf(const struct http_config *cfg, struct http_state *st,
    struct server_conf *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->listen = cfg->listen;
	sc->token = cfg->token;
	sc->insecure = cfg->insecure;
	sc->web_dir = cfg->web_dir;
	sc->max_range_ns = cfg->max_range;
	sc->max_response = cfg->max_response;
	sc->max_requests = (uint32_t)cfg->max_requests;
	sc->max_queued = (uint32_t)cfg->max_queued;
	sc->daemon = 1;
	if (st != NULL) {
		sc->settings = vitals_settings(st->ctx);
		sc->log_arg = st;
		sc->metrics_arg = st;
	}
}

static int
http_check(const void *config, char *why, size_t len)
{
	struct server_conf sc;

	http_conf(config, NULL, &sc);
	return server_check(&sc, why, len);
}

static void
http_log(void *arg, int level, const char *msg)
{
	struct http_state *st = arg;

	vitals_log(st->ctx, level, "%s", msg);
}

static uint64_t
http_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
http_metrics(void *arg, char **out, size_t *len)
{
	struct http_state *st = arg;
	struct vitals_node_list l = { 0, NULL };
	char *text = NULL, *p;
	size_t n = 0;
	int r;

	if ((r = metrics_render(st->metrics, out, len)) != 0)
		return r;
	/* On a central, the nodes the remote output pulls from. */
	if (vitals_nodes_load(vitals_settings(st->ctx)->data_dir, &l) != 0 ||
	    l.n == 0 || metrics_nodes(&l, http_now(), &text, &n) != 0 ||
	    (p = realloc(*out, *len + n + 1)) == NULL) {
		vitals_node_list_free(&l);
		free(text);
		return 0;
	}
	memcpy(p + *len, text, n + 1);
	*out = p;
	*len += n;
	free(text);
	vitals_node_list_free(&l);
	return 0;
}

/* /metrics says when the daemon (this instance) started. */
static void
http_started(struct metrics *m)
{
	struct metrics_daemon d = { .have = METRICS_HAVE_START };
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	d.start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	metrics_daemon(m, &d);
}

static void
http_fini(void *arg)
{
	struct http_state *st = arg;

	if (st == NULL)
		return;
	server_free(st->srv);
	metrics_free(st->metrics);
	free(st);
}

static int
http_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct http_config *cfg = config;
	struct event_base *base = vitals_event_base(ctx);
	struct server_conf sc;
	struct http_state *st;
	char err[512];
	int r;

	if ((r = vitals_init_check(ctx, http_check, config)) != 0)
		return r;
	if (base == NULL) {
		vitals_error(ctx, "no event loop to serve from");
		return -ENOTSUP;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->metrics = metrics_new((uint32_t)cfg->metrics_top)) == NULL) {
		http_fini(st);
		return -ENOMEM;
	}
	http_started(st->metrics);
	st->ctx = ctx;
	http_conf(cfg, st, &sc);
	sc.log = http_log;
	sc.metrics = http_metrics;
	if ((r = server_new(base, &sc, &st->srv, err, sizeof(err))) != 0) {
		vitals_error(ctx, "%s", err);
		http_fini(st);
		return r;
	}
	vitals_log(ctx, VITALS_LOG_INFO, "serving on http://%s/", cfg->listen);
	*state = st;
	return 0;
}

/* Each closed epoch goes into /metrics; the API reads the store. */
static int
http_write(void *arg, const struct vitals_epoch *e)
{
	struct http_state *st = arg;

	return metrics_epoch(st->metrics, e);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_OUTPUT,
	.config_size = sizeof(struct http_config),
	.name = "http",
	.version = "1.0",
	.description = "serves the JSON API, the page and /metrics",
	.options = http_options,
	.available = NULL,
	.init = http_init,
	.fini = http_fini,
	.write = http_write,
	.check = http_check,
};
