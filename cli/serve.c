/* SPDX-License-Identifier: MIT */
/*
 * `vitals serve`: the same API, page and /metrics as the http output
 * plugin, over any store and without a daemon: an event loop of its own
 * runs the plugin's server (outputs/http/server.c) until SIGINT or
 * SIGTERM.  /metrics shows the newest stored epoch.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "args.h"
#include "cli.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "server.h"

static const char serve_usage[] =
    "  serve [--listen ADDR] [--token T] [--insecure] [--web-dir DIR]\n"
    "      the JSON API, the page and /metrics over the store, as the\n"
    "      http plugin serves them from vitalsd (default 127.0.0.1:9977;\n"
    "      another address needs --token, or --insecure)\n";

/* What the command was given, and what it resolved. */
struct serve {
	struct cli *cli; /* -d, -c, the store and configuration */
	struct server_conf conf;
	struct vitals_settings settings;
	struct metrics *metrics;
};

static void serve_msg(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
serve_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: serve: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The server's messages, to stderr. */
static void
serve_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	serve_msg("%s", msg);
}

static int
serve_metrics(void *arg, char **out, size_t *len)
{
	struct serve *sv = arg;

	return metrics_render(sv->metrics, out, len);
}

/* Apply option id with value val; *done after an option that printed. */
static int
serve_apply(struct serve *sv, int id, const char *val, int *done)
{
	switch (id) {
	case CLI_POS:
		return cli_usage_error(sv->cli,
		    "serve: unexpected argument "
		    "'%s'",
		    val);
	case CO_LISTEN:
		sv->conf.listen = val;
		break;
	case CO_TOKEN:
		sv->conf.token = val;
		break;
	case CO_INSECURE:
		sv->conf.insecure = 1;
		break;
	case CO_WEB_DIR:
		sv->conf.web_dir = val;
		break;
	default:
		return cli_opt(sv->cli, id, val, done);
	}
	return CLI_EXIT_OK;
}

/* Parse the arguments from where a is; CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int
serve_args(struct serve *sv, const struct cli_args *a, int *done)
{
	struct cli_args w;
	const char *val;
	int id, rc;

	cli_args_init(&w, a->argc, a->argv, a->i, a->cmd);
	while (!*done && (id = cli_next(&w, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return cli_usage_error(sv->cli, "serve: %s", w.err);
		if ((rc = serve_apply(sv, id, val, done)) != CLI_EXIT_OK)
			return rc;
	}
	return CLI_EXIT_OK;
}

/*
 * The settings the API answers with: the configuration and the store as
 * the range commands find them (cli_config).
 */
static int
serve_setup(struct serve *sv)
{
	struct vitals_settings *st = &sv->settings;
	const struct config *c;
	struct stat sb;
	int rc;

	if ((rc = cli_config(sv->cli)) != CLI_EXIT_OK)
		return rc;
	c = sv->cli->config;
	st->config = sv->cli->config_path;
	st->data_dir = sv->cli->data_dir;
	st->epoch_ns = c->epoch_ns;
	st->ntimescales = c->ntimescales;
	st->timescales = c->timescales;
	st->max_samples = c->sketch.max_samples;
	if (stat(st->data_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		serve_msg(
		    "no store at %s (give it with --data-dir)", st->data_dir);
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

/*
 * /metrics of a daemon-less store: its newest readable epoch.  An
 * accumulator sums the epochs it is given, so it is given one host's
 * (doc/metrics.md, "Hosts"): the host of that epoch.
 */
static void
serve_feed_metrics(struct serve *sv)
{
	struct vitals_store_list l;
	struct vitals_epoch *e;
	char err[512];
	size_t i, k;

	if (vitals_store_list(sv->settings.data_dir, &l) != 0)
		return;
	for (i = l.n; i-- > 0;)
		if (vitals_epoch_load(l.v[i].path, &e, err, sizeof(err)) == 0)
			break;
	if (i < l.n) {
		metrics_epoch(sv->metrics, e);
		for (k = 0; k < l.n && strcmp(l.v[k].host, l.v[i].host) == 0;
		     k++)
			;
		if (k < l.n)
			serve_msg("/metrics shows the newest epoch of host %s "
				  "(the store holds other hosts too)",
			    e->host);
		vitals_epoch_free(e);
	}
	vitals_store_list_free(&l);
}

static void
serve_on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	serve_msg("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	event_base_loopbreak(arg);
}

/* Serve on a loop of our own until a signal. */
static int
serve_loop(struct serve *sv)
{
	struct event_base *base = event_base_new();
	struct event *sig[2] = { NULL, NULL };
	struct server *srv = NULL;
	char err[512];
	int i, rc = CLI_EXIT_RUNTIME;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; base != NULL && i < 2; i++)
		if ((sig[i] = evsignal_new(base, i ? SIGTERM : SIGINT,
			 serve_on_signal, base)) == NULL ||
		    evsignal_add(sig[i], NULL) != 0)
			goto out;
	if (base == NULL)
		goto out;
	if (server_new(base, &sv->conf, &srv, err, sizeof(err)) != 0) {
		serve_msg("%s", err);
		goto out;
	}
	serve_msg(
	    "serving %s on http://%s/", sv->settings.data_dir, sv->conf.listen);
	rc = event_base_dispatch(base) < 0 ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
out:
	server_free(srv);
	for (i = 0; i < 2; i++)
		if (sig[i] != NULL)
			event_free(sig[i]);
	if (base != NULL)
		event_base_free(base);
	return rc;
}

/*
 * `vitals serve`.  Returns the exit code: 0 after SIGINT or SIGTERM, 1
 * without a store or when the address cannot be bound, 2 for bad
 * arguments or configuration.
 */
static int
serve_run(struct cli *cli, struct cli_args *a)
{
	struct serve sv;
	char why[512];
	int done = 0, rc;

	memset(&sv, 0, sizeof(sv));
	sv.cli = cli;
	sv.conf.listen = "127.0.0.1:9977";
	sv.conf.web_dir = SERVER_WEB_DIR;
	sv.conf.max_range_ns = 31ull * 86400 * 1000000000ull;
	sv.conf.max_response = 64ull << 20;
	sv.conf.max_requests = 4;
	sv.conf.max_queued = 64;
	sv.conf.settings = &sv.settings;
	sv.conf.cli = 1;
	sv.conf.log = serve_log;
	sv.conf.metrics = serve_metrics;
	sv.conf.metrics_arg = &sv;
	log_setup(LOG_TO_STDERR, VITALS_LOG_WARN, "vitals");
	if ((rc = serve_args(&sv, a, &done)) != CLI_EXIT_OK || done)
		return rc;
	if (server_check(&sv.conf, why, sizeof(why)) != 0) {
		serve_msg("%s", why);
		return CLI_EXIT_USAGE;
	}
	if ((rc = serve_setup(&sv)) == CLI_EXIT_OK) {
		if ((sv.metrics = metrics_new(10)) == NULL) {
			serve_msg("out of memory");
			rc = CLI_EXIT_RUNTIME;
		} else {
			serve_feed_metrics(&sv);
			rc = serve_loop(&sv);
		}
	}
	metrics_free(sv.metrics);
	return rc;
}

const struct cli_cmd serve_cmd = {
	.name = "serve",
	.usage = serve_usage,
	.flag = CLI_SERVE,
	.run = serve_run,
};
