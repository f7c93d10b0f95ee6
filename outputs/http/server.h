/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server of the http plugin and of `vitals serve`: evhttp bound
 * to a loop it does not run, the bearer token, the limits, the page's
 * static files, /metrics, and the worker threads that answer the API
 * (api.h) off the loop, handing each answer back to the loop to send.
 */
#ifndef VITALS_HTTP_SERVER_H
#define VITALS_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

struct event_base;
struct server;

/* Longest host part of a listen address, NUL included. */
#define SERVER_HOST_LEN 256
/*
 * Where the page is installed: web_dir's default, which
 * $VITALS_WEB_DIR replaces (a build tree's page).
 */
#ifndef DATADIR
#define DATADIR "/usr/local/share"
#endif
#define SERVER_WEB_DIR DATADIR "/vitals/web"

/* What a server is made of; borrowed by server_new for its life. */
struct server_conf {
	const char *listen; /* "HOST:PORT", "[V6]:PORT" */
	const char *token; /* bearer token, NULL or "" for none */
	int insecure; /* a non-loopback address without a token */
	const char *web_dir; /* the page's files, or NULL */
	uint64_t max_range_ns; /* longest range a request may ask for */
	uint64_t max_response; /* largest answer, bytes */
	uint32_t max_requests; /* API requests in the workers at once */
	uint32_t max_queued; /* more waiting for a worker (503 beyond) */
	/*
	 * The settings the API answers with (store, configuration,
	 * timescales), read on the loop's thread at each request.
	 */
	const struct vitals_settings *settings;
	int daemon; /* settings->host is this daemon's ("local") */
	int cli; /* messages name the command's flags (--listen),
				 not the plugin's options (listen) */
	/*
	 * /metrics: Prometheus text as a malloc'd buffer (the caller's).
	 * Runs on the loop.  Returns 0 or a negative errno; NULL: no
	 * /metrics (404).
	 */
	int (*metrics)(void *arg, char **out, size_t *len);
	void *metrics_arg;
	/* Say something (VITALS_LOG_*); on the loop's thread only. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

/*
 * Split a listen address into its host (brackets removed, "" kept) and
 * port (1 to 65535).  Returns 0, or -EINVAL with the reason in why,
 * which names the address `what` ("option 'listen'", "--listen").
 */
int server_listen_parse(const char *listen, const char *what, char *host,
    size_t hostlen, uint16_t *port, char *why, size_t len);

/*
 * Check c's listen address, and that a non-loopback one has a token or
 * insecure set; no socket is opened.  Returns 0, or -EINVAL with the
 * reason in why.
 */
int server_check(const struct server_conf *c, char *why, size_t len);

/*
 * Listen as c says on base (borrowed: the server adds events to it and
 * never runs it), start the workers.  Returns 0 and sets *out (free with
 * server_free on base's thread), or a negative errno with the reason in
 * err.
 */
int server_new(struct event_base *base, const struct server_conf *c,
    struct server **out, char *err, size_t errlen);

/*
 * Stop listening, drop the connections, wait for the requests the workers
 * are answering (a range query runs to its end) and free it all.  Accepts
 * NULL.
 */
void server_free(struct server *s);

#endif /* VITALS_HTTP_SERVER_H */
