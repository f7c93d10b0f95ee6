/* SPDX-License-Identifier: MIT */
/*
 * The `remote` output plugin: on a central vitalsd, pulls the epoch files
 * each node's http output serves (/api/v1/files, /api/v1/file/NAME) into
 * the central store under the nodes' own host names, oldest first and a
 * bounded batch per round, resuming from a cursor kept per node in
 * DATA_DIR/nodes/ (doc/fleet.md).  Every request is evhttp's, on the
 * core's loop, with a deadline: a slow or dead node holds only itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "verify.h"

#define REMOTE_NS 1000000000ull
/* Most nodes one instance pulls from, and lines read from nodes_file. */
#define REMOTE_MAX_NODES 4096
/* A node's repeated error is logged again after this long. */
#define REMOTE_LOG_EVERY_NS (60 * REMOTE_NS)
/* Largest answer but a file (/hosts, /files of a batch). */
#define REMOTE_MAX_LISTING (4u << 20)

/* The config block the core fills from the YAML. */
struct remote_config {
	struct vitals_strlist nodes; /* "URL" or "NAME=URL" */
	char *nodes_file; /* more of them, one a line; re-read on SIGHUP */
	char *token; /* bearer token the nodes want, or NULL */
	uint64_t interval; /* ns between two rounds of a node */
	uint64_t timeout; /* ns a request may take, all of it */
	uint64_t backoff_max; /* ns, longest wait after failures */
	uint64_t max_file; /* bytes, largest epoch file taken */
	uint64_t max_skew; /* ns an epoch may end past the central's now */
	int64_t max_concurrency; /* nodes pulled from at once */
	int64_t batch; /* files per round of a node */
};

/* What a node's round is waiting for. */
enum remote_phase { REMOTE_IDLE, REMOTE_HOSTS, REMOTE_LIST, REMOTE_FILE };

/* One node pulled from. */
struct remote_node {
	struct remote *rm; /* the instance, borrowed */
	char *line; /* the node as configured */
	struct remote_spec spec;
	struct vitals_node st; /* kept in DATA_DIR/nodes/KEY.json */
	struct evhttp_connection *conn;
	struct evhttp_request *req; /* in flight, or NULL */
	struct event *deadline; /* req's deadline */
	enum remote_phase phase;
	int req_err; /* evhttp's reason for a failed req */
	int checked; /* its host name checked since the last failure */
	uint64_t next_ns; /* monotonic: no round before */
	uint64_t started_ns; /* monotonic: when the last round began */
	uint64_t backoff_ns; /* wait after the last failure */
	struct remote_file *files; /* this round's listing */
	size_t nfiles, ifile;
	int more; /* the node has more after them */
	char logged[512]; /* the error logged last */
	uint64_t logged_ns;
};

/* One instance. */
struct remote {
	struct vitals_ctx *ctx; /* the core's handle, borrowed */
	const struct remote_config *cfg; /* owned by the core */
	struct event_base *base; /* the core's loop, borrowed */
	struct evdns_base *dns; /* names of nodes, resolved on it */
	struct vitals_timer *timer;
	struct event *hup;
	struct remote_node **v;
	size_t n;
	uint32_t active; /* rounds under way */
};

static const struct vitals_option remote_options[] = {
	{ .key = "nodes",
	    .type = VITALS_OPT_STRLIST,
	    .offset = offsetof(struct remote_config, nodes),
	    .help =
		"nodes to pull epochs from: http://ADDR:PORT of their "
		"http output, or NAME=http://ADDR:PORT to require host "
		"NAME (else the name a node has at first contact is kept)" },
	{ .key = "nodes_file",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct remote_config, nodes_file),
	    .help = "a file of more nodes, one a line as in nodes ('#' "
		    "starts a comment); read again on SIGHUP" },
	{ .key = "token",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct remote_config, token),
	    .help = "bearer token of the nodes' http output" },
	{ .key = "interval",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct remote_config, interval),
	    .def = "10s",
	    .help = "time between two rounds of a node that is caught up",
	    .min = 0.05,
	    .max = 86400 },
	{ .key = "timeout",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct remote_config, timeout),
	    .def = "10s",
	    .help = "longest a request to a node may take, connection "
		    "included, before the round fails",
	    .min = 0.1,
	    .max = 3600 },
	{ .key = "backoff_max",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct remote_config, backoff_max),
	    .def = "5m",
	    .help = "longest wait before trying a failing node again (the "
		    "wait doubles from interval at each failure)",
	    .min = 0.05,
	    .max = 86400 },
	{ .key = "max_file",
	    .type = VITALS_OPT_SIZE,
	    .offset = offsetof(struct remote_config, max_file),
	    .def = "64M",
	    .help = "largest epoch file taken from a node (refused beyond)",
	    .min = 1024,
	    .max = 256.0 * (1 << 20) },
	{ .key = "max_skew",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct remote_config, max_skew),
	    .def = "5m",
	    .help = "how far past the central's clock an epoch from a node "
		    "may end (refused beyond)",
	    .min = 0,
	    .max = 86400 },
	{ .key = "max_concurrency",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct remote_config, max_concurrency),
	    .def = "8",
	    .help = "nodes pulled from at once",
	    .min = 1,
	    .max = 1024 },
	{ .key = "batch",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct remote_config, batch),
	    .def = "100",
	    .help = "epoch files taken from a node in one round, oldest "
		    "first (a node behind is caught up in rounds of these)",
	    .min = 1,
	    .max = 1000 },
	{ .key = NULL }
};

static void remote_schedule(struct remote *rm);
static void remote_next(struct remote_node *nd);

static uint64_t
remote_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * REMOTE_NS + (uint64_t)ts.tv_nsec;
}

/* ---- configuration ---- */

static int
remote_check(const void *config, char *why, size_t len)
{
	const struct remote_config *cfg = config;
	struct remote_spec sp;
	uint32_t i;
	int r;

	for (i = 0; i < cfg->nodes.n; i++)
		if ((r = remote_spec_parse(cfg->nodes.v[i], &sp, why, len)) !=
		    0)
			return r;
	if (cfg->nodes.n == 0 && cfg->nodes_file == NULL) {
		snprintf(why, len, "no nodes: set nodes or nodes_file");
		return -EINVAL;
	}
	return 0;
}

/* Append a copy of s to the list *v of *n; 0 or -ENOMEM/-E2BIG. */
static int
remote_lines_add(char ***v, size_t *n, const char *s)
{
	char **p;

	if (*n == REMOTE_MAX_NODES)
		return -E2BIG;
	if ((p = realloc(*v, (*n + 1) * sizeof(*p))) == NULL)
		return -ENOMEM;
	*v = p;
	if ((p[*n] = strdup(s)) == NULL)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static void
remote_lines_free(char **v, size_t n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

/* The nodes of the options and of nodes_file, each checked. */
static int
remote_lines(struct remote *rm, char ***out, size_t *nout)
{
	const struct remote_config *cfg = rm->cfg;
	struct remote_spec sp;
	char **v = NULL, buf[2048], why[512], *s, *e;
	size_t n = 0, k;
	uint32_t i;
	FILE *f;
	int r = 0;

	for (i = 0; r == 0 && i < cfg->nodes.n; i++)
		r = remote_lines_add(&v, &n, cfg->nodes.v[i]);
	if (r == 0 && cfg->nodes_file != NULL) {
		if ((f = fopen(cfg->nodes_file, "re")) == NULL) {
			r = -errno;
			vitals_error(rm->ctx, "nodes_file %s: %s",
			    cfg->nodes_file, strerror(errno));
		}
		while (
		    r == 0 && f != NULL && fgets(buf, sizeof(buf), f) != NULL) {
			if ((e = strchr(buf, '#')) != NULL)
				*e = '\0';
			for (s = buf; *s == ' ' || *s == '\t'; s++)
				;
			k = strlen(s);
			while (k > 0 && strchr(" \t\r\n", s[k - 1]) != NULL)
				s[--k] = '\0';
			if (k == 0)
				continue;
			if (remote_spec_parse(s, &sp, why, sizeof(why)) != 0) {
				vitals_log(rm->ctx, VITALS_LOG_WARN,
				    "%s: %s "
				    "(skipped)",
				    cfg->nodes_file, why);
				continue;
			}
			r = remote_lines_add(&v, &n, s);
		}
		if (f != NULL)
			fclose(f);
	}
	if (r != 0) {
		remote_lines_free(v, n);
		return r;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* ---- nodes ---- */

static void
remote_node_free(struct remote_node *nd)
{
	if (nd == NULL)
		return;
	if (nd->req != NULL)
		evhttp_cancel_request(nd->req);
	if (nd->conn != NULL)
		evhttp_connection_free(nd->conn);
	if (nd->deadline != NULL)
		event_free(nd->deadline);
	if (nd->phase != REMOTE_IDLE)
		nd->rm->active--;
	free(nd->files);
	free(nd->line);
	vitals_node_clear(&nd->st);
	free(nd);
}

static void remote_on_deadline(evutil_socket_t fd, short what, void *arg);

/* The state kept for nd's key, if any (taken from l). */
static void
remote_node_state(struct remote_node *nd, struct vitals_node_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, nd->st.key) == 0 &&
		    strcmp(l->v[i].url, nd->spec.url) == 0) {
			free(nd->st.key);
			nd->st = l->v[i];
			memset(&l->v[i], 0, sizeof(l->v[i]));
			l->v[i].key = strdup("");
			l->v[i].url = strdup("");
			return;
		}
}

/* A node for configured line s, its state read from l. */
static struct remote_node *
remote_node_new(struct remote *rm, const char *s, struct vitals_node_list *l)
{
	struct remote_node *nd;
	char why[512], key[128];

	if ((nd = calloc(1, sizeof(*nd))) == NULL)
		return NULL;
	nd->rm = rm;
	if ((nd->line = strdup(s)) == NULL ||
	    remote_spec_parse(s, &nd->spec, why, sizeof(why)) != 0 ||
	    vitals_node_key(nd->spec.url, key, sizeof(key)) != 0 ||
	    (nd->st.key = strdup(key)) == NULL)
		goto fail;
	remote_node_state(nd, l);
	free(nd->st.url);
	if ((nd->st.url = strdup(nd->spec.url)) == NULL)
		goto fail;
	if (nd->spec.name[0] != '\0' &&
	    (nd->st.host == NULL || strcmp(nd->st.host, nd->spec.name) != 0)) {
		free(nd->st.host);
		if ((nd->st.host = strdup(nd->spec.name)) == NULL)
			goto fail;
	}
	nd->conn = evhttp_connection_base_new(
	    rm->base, rm->dns, nd->spec.addr, nd->spec.port);
	nd->deadline = evtimer_new(rm->base, remote_on_deadline, nd);
	if (nd->conn == NULL || nd->deadline == NULL)
		goto fail;
	/* evhttp's own timeout is a backstop: the deadline comes first. */
	evhttp_connection_set_timeout(nd->conn,
	    (int)((rm->cfg->timeout + REMOTE_NS - 1) / REMOTE_NS) + 1);
	return nd;
fail:
	remote_node_free(nd);
	return NULL;
}

/*
 * Whether the URL of line s is already one of v[0..n) (listed twice,
 * perhaps once with a NAME=): the first is kept, logged once per reload.
 */
static int
remote_dup(struct remote_node **v, size_t n, const char *s)
{
	struct remote_spec sp;
	char why[512];
	size_t i;

	if (remote_spec_parse(s, &sp, why, sizeof(why)) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] != NULL && strcmp(v[i]->spec.url, sp.url) == 0) {
			vitals_log(v[i]->rm->ctx, VITALS_LOG_WARN,
			    "node %s listed twice: the first is kept", sp.url);
			return 1;
		}
	return 0;
}

/*
 * Make the nodes those of the configuration now: the ones still there
 * keep their connection and round, the others go, new ones come with the
 * state kept for them.
 */
static int
remote_nodes_set(struct remote *rm)
{
	struct vitals_node_list l = { 0, NULL };
	struct remote_node **v = NULL;
	char **lines = NULL;
	size_t n = 0, i, k;
	int r;

	if ((r = remote_lines(rm, &lines, &n)) != 0)
		return r;
	if (n > 0 && (v = calloc(n, sizeof(*v))) == NULL) {
		remote_lines_free(lines, n);
		return -ENOMEM;
	}
	vitals_nodes_load(vitals_settings(rm->ctx)->data_dir, &l);
	for (i = 0; i < n; i++) {
		for (k = 0; k < rm->n; k++)
			if (rm->v[k] != NULL &&
			    strcmp(rm->v[k]->line, lines[i]) == 0) {
				v[i] = rm->v[k];
				rm->v[k] = NULL;
				break;
			}
		if (v[i] == NULL && remote_dup(v, i, lines[i]))
			continue;
		if (v[i] == NULL &&
		    (v[i] = remote_node_new(rm, lines[i], &l)) == NULL)
			r = -ENOMEM;
	}
	vitals_node_list_free(&l);
	remote_lines_free(lines, n);
	for (k = 0; k < rm->n; k++)
		remote_node_free(rm->v[k]);
	free(rm->v);
	/* Nodes that failed to start are dropped (said once). */
	for (i = k = 0; i < n; i++)
		if (v[i] != NULL)
			v[k++] = v[i];
	rm->v = v;
	rm->n = k;
	if (r != 0)
		vitals_log(rm->ctx, VITALS_LOG_ERR,
		    "out of memory: some "
		    "nodes are not pulled from");
	return 0;
}

/* ---- a node's round ---- */

/* Keep nd's state on disk; a failure is logged (the epoch is stored). */
static void
remote_save(struct remote_node *nd)
{
	char err[512];

	if (vitals_node_save(vitals_settings(nd->rm->ctx)->data_dir, &nd->st,
		err, sizeof(err)) != 0)
		vitals_log(nd->rm->ctx, VITALS_LOG_ERR,
		    "node %s: state not "
		    "kept: %s",
		    nd->spec.url, err);
}

/* End nd's round; the next is due after wait_ns. */
static void
remote_end(struct remote_node *nd, uint64_t wait_ns)
{
	struct remote *rm = nd->rm;

	nd->phase = REMOTE_IDLE;
	nd->next_ns = vitals_monotonic_ns(rm->ctx) + wait_ns;
	free(nd->files);
	nd->files = NULL;
	nd->nfiles = nd->ifile = 0;
	rm->active--;
	remote_schedule(rm);
}

/*
 * The round failed (refused: what the node sent was refused): counted,
 * kept, logged unless the same was logged lately, and the node waits
 * twice as long as last time.
 */
static void remote_fail(struct remote_node *nd, int refused, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
remote_fail(struct remote_node *nd, int refused, const char *fmt, ...)
{
	const struct remote_config *cfg = nd->rm->cfg;
	uint64_t now = vitals_monotonic_ns(nd->rm->ctx);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (refused)
		nd->st.refused++;
	else
		nd->st.errors++;
	free(nd->st.last_error);
	nd->st.last_error = strdup(msg);
	nd->st.last_error_ns = remote_now();
	remote_save(nd);
	if (strcmp(msg, nd->logged) != 0 ||
	    now - nd->logged_ns >= REMOTE_LOG_EVERY_NS) {
		vitals_log(nd->rm->ctx,
		    refused ? VITALS_LOG_ERR : VITALS_LOG_WARN, "node %s: %s%s",
		    nd->spec.url, refused ? "refused: " : "", msg);
		snprintf(nd->logged, sizeof(nd->logged), "%s", msg);
		nd->logged_ns = now;
	}
	nd->backoff_ns =
	    nd->backoff_ns == 0 ? cfg->interval : nd->backoff_ns * 2;
	if (nd->backoff_ns > cfg->backoff_max)
		nd->backoff_ns = cfg->backoff_max;
	nd->checked = 0;
	remote_end(nd, nd->backoff_ns);
}

static void remote_on_answer(struct evhttp_request *req, void *arg);

static void
remote_on_error(enum evhttp_request_error err, void *arg)
{
	struct remote_node *nd = arg;

	nd->req_err = (int)err;
}

/* GET the node's prefix + path for phase; 0, or the round has failed. */
static int
remote_get(struct remote_node *nd, enum remote_phase phase, const char *path)
{
	const struct remote_config *cfg = nd->rm->cfg;
	struct evhttp_request *req;
	struct evkeyvalq *h;
	struct timeval tv;
	char uri[2048], auth[1024];

	nd->phase = phase;
	nd->req_err = 0;
	snprintf(uri, sizeof(uri), "%s%s", nd->spec.prefix, path);
	if ((req = evhttp_request_new(remote_on_answer, nd)) == NULL) {
		remote_fail(nd, 0, "out of memory");
		return -1;
	}
	evhttp_request_set_error_cb(req, remote_on_error);
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", nd->spec.addr);
	/*
	 * A new connection per request: on a kept-alive one each answer of
	 * the http output waited ~40 ms (delayed ACKs), a new one on a LAN
	 * costs well under 1 ms.
	 */
	evhttp_add_header(h, "Connection", "close");
	if (cfg->token != NULL && cfg->token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Bearer %s", cfg->token);
		evhttp_add_header(h, "Authorization", auth);
	}
	/* One request at a time on the connection: its bound is this one's. */
	evhttp_connection_set_max_body_size(nd->conn,
	    (ev_ssize_t)(phase == REMOTE_FILE ? cfg->max_file
					      : REMOTE_MAX_LISTING));
	if (evhttp_make_request(nd->conn, req, EVHTTP_REQ_GET, uri) != 0) {
		remote_fail(nd, 0, "cannot send a request");
		return -1;
	}
	nd->req = req;
	tv.tv_sec = (time_t)(cfg->timeout / REMOTE_NS);
	tv.tv_usec = (suseconds_t)(cfg->timeout % REMOTE_NS / 1000);
	evtimer_add(nd->deadline, &tv);
	return 0;
}

/* The request took too long altogether (a node that trickles or hangs). */
static void
remote_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct remote_node *nd = arg;

	(void)fd;
	(void)what;
	if (nd->req == NULL)
		return;
	evhttp_cancel_request(nd->req);
	nd->req = NULL;
	remote_fail(nd, 0, "no answer within %.1f s",
	    (double)nd->rm->cfg->timeout / REMOTE_NS);
}

/* List the files after the cursor. */
static void
remote_list(struct remote_node *nd)
{
	char path[1024], *h;

	if ((h = evhttp_encode_uri(nd->st.host)) == NULL) {
		remote_fail(nd, 0, "out of memory");
		return;
	}
	snprintf(path, sizeof(path),
	    "/api/v1/files?host=%s&limit=%" PRId64 "%s%s", h,
	    nd->rm->cfg->batch, nd->st.cursor != NULL ? "&since=" : "",
	    nd->st.cursor != NULL ? nd->st.cursor : "");
	free(h);
	remote_get(nd, REMOTE_LIST, path);
}

/* The node says which host it is: it must be the one it was. */
static void
remote_on_hosts(struct remote_node *nd, const char *body, size_t len)
{
	const char *self = vitals_settings(nd->rm->ctx)->host;
	char host[256], why[512];

	if (remote_local_parse(
		body, len, host, sizeof(host), why, sizeof(why)) != 0) {
		/*
		 * `vitals serve` has no host of its own: a node configured
		 * as NAME=URL is taken to be NAME (each file is checked).
		 */
		if (nd->spec.name[0] == '\0') {
			remote_fail(nd, 1, "%s", why);
			return;
		}
		snprintf(host, sizeof(host), "%s", nd->spec.name);
	}
	if (nd->st.host != NULL && strcmp(host, nd->st.host) != 0) {
		remote_fail(nd, 1, "it says it is host '%s', not '%s'", host,
		    nd->st.host);
		return;
	}
	if (self != NULL && strcmp(host, self) == 0) {
		remote_fail(
		    nd, 1, "it has this central's host name '%s'", host);
		return;
	}
	if (nd->st.host == NULL) {
		if ((nd->st.host = strdup(host)) == NULL) {
			remote_fail(nd, 0, "out of memory");
			return;
		}
		vitals_log(nd->rm->ctx, VITALS_LOG_INFO, "node %s is host '%s'",
		    nd->spec.url, host);
		remote_save(nd);
	}
	nd->checked = 1;
	remote_list(nd);
}

static void
remote_on_list(struct remote_node *nd, const char *body, size_t len)
{
	char why[512];
	int r;

	free(nd->files);
	nd->files = NULL;
	r = remote_listing_parse(body, len, nd->st.host, nd->st.cursor,
	    (size_t)nd->rm->cfg->batch, nd->rm->cfg->max_file, &nd->files,
	    &nd->nfiles, &nd->more, why, sizeof(why));
	if (r != 0) {
		remote_fail(nd, r != -ENOMEM, "%s", why);
		return;
	}
	nd->ifile = 0;
	remote_next(nd);
}

/* Verify the file the node sent and store it; then the next. */
static void
remote_on_file(struct remote_node *nd, const char *body, size_t len)
{
	const struct remote_file *rf = &nd->files[nd->ifile];
	struct remote_limits lim;
	struct vitals_epoch_file f = { 0 };
	struct vitals_epoch *e = NULL;
	char why[1024], rel[VITALS_CURSOR_MAX + 16], *cur;
	int r;

	lim.now_ns = remote_now();
	lim.max_future_ns = nd->rm->cfg->max_skew;
	lim.max_length_ns = 86400ull * REMOTE_NS;
	lim.max_file = nd->rm->cfg->max_file;
	if ((r = remote_verify(nd->st.host, rf->name, body, len, &lim, &e, why,
		 sizeof(why))) != 0) {
		remote_fail(nd, r != -ENOMEM, "%s", why);
		return;
	}
	vitals_epoch_relpath(e->start_ns, e->host, rel, sizeof(rel));
	f.start_ns = e->start_ns;
	f.rel = rel;
	f.data = (unsigned char *)(uintptr_t)body;
	f.len = len;
	r = vitals_epoch_put(&f, vitals_settings(nd->rm->ctx)->data_dir, NULL,
	    0, why, sizeof(why));
	if (r != 0 || (cur = strdup(rf->name)) == NULL) {
		vitals_epoch_free(e);
		remote_fail(nd, 0, "%s", r != 0 ? why : "out of memory");
		return;
	}
	free(nd->st.cursor);
	nd->st.cursor = cur;
	nd->st.last_start_ns = e->start_ns;
	nd->st.last_end_ns = e->start_ns + e->length_ns;
	nd->st.pulled++;
	vitals_epoch_free(e);
	/*
	 * The cursor is kept at the round's end (or its failure), not after
	 * each file: a crash in between pulls those files again, which
	 * replaces them by the same names (no duplicate), and a round costs
	 * one state write, not one per file.
	 */
	nd->ifile++;
	remote_next(nd);
}

/* The next file of the listing, or the round's end. */
static void
remote_next(struct remote_node *nd)
{
	char path[VITALS_CURSOR_MAX + 32];

	if (nd->ifile < nd->nfiles) {
		snprintf(path, sizeof(path), "/api/v1/file/%s",
		    nd->files[nd->ifile].name);
		remote_get(nd, REMOTE_FILE, path);
		return;
	}
	nd->st.last_ok_ns = remote_now();
	/*
	 * Kept when it moved (or the node recovers): a round that found
	 * nothing new costs no write, however many nodes there are.
	 */
	if (nd->nfiles > 0 || nd->backoff_ns != 0 || nd->st.pulled == 0)
		remote_save(nd);
	nd->backoff_ns = 0;
	/*
	 * A node behind goes on at once, a batch at a time; one that says
	 * more but gave nothing (an older node whose newest file is still
	 * settling) waits, or the next round would ask again at once.
	 */
	remote_end(nd, nd->more && nd->nfiles > 0 ? 0 : nd->rm->cfg->interval);
}

/* What evhttp says of a failed request, for the log. */
static const char *
remote_req_error(int err)
{
	switch (err) {
	case EVREQ_HTTP_TIMEOUT:
		return "timed out";
	case EVREQ_HTTP_EOF:
		return "connection closed";
	case EVREQ_HTTP_INVALID_HEADER:
		return "bad HTTP answer";
	case EVREQ_HTTP_BUFFER_ERROR:
		return "connection failed";
	case EVREQ_HTTP_DATA_TOO_LONG:
		return "answer larger than max_file (or, for a listing, 4 MiB)";
	default:
		return "cannot connect";
	}
}

static void
remote_on_answer(struct evhttp_request *req, void *arg)
{
	struct remote_node *nd = arg;
	struct evbuffer *in;
	const char *body;
	size_t len;
	int code = req != NULL ? evhttp_request_get_response_code(req) : 0;

	evtimer_del(nd->deadline);
	nd->req = NULL;
	if (code == 0) {
		remote_fail(nd, nd->req_err == EVREQ_HTTP_DATA_TOO_LONG, "%s",
		    remote_req_error(nd->req_err));
		return;
	}
	if (code != 200) {
		remote_fail(nd, 0, "HTTP %d%s", code,
		    code == 401 ? " (is token right?)" : "");
		return;
	}
	in = evhttp_request_get_input_buffer(req);
	len = evbuffer_get_length(in);
	body = len > 0 ? (const char *)evbuffer_pullup(in, -1) : "";
	if (body == NULL) {
		remote_fail(nd, 0, "out of memory");
		return;
	}
	if (nd->phase == REMOTE_HOSTS)
		remote_on_hosts(nd, body, len);
	else if (nd->phase == REMOTE_LIST)
		remote_on_list(nd, body, len);
	else
		remote_on_file(nd, body, len);
}

/* Start nd's round: who it is (once), then what it has. */
static void
remote_start(struct remote_node *nd)
{
	nd->rm->active++;
	nd->started_ns = vitals_monotonic_ns(nd->rm->ctx);
	if (!nd->checked || nd->st.host == NULL)
		remote_get(nd, REMOTE_HOSTS, "/api/v1/hosts");
	else
		remote_list(nd);
}

/*
 * Start rounds for the nodes that are due, the one that waited longest
 * first, while fewer than max_concurrency are under way.
 */
static void
remote_schedule(struct remote *rm)
{
	uint64_t now = vitals_monotonic_ns(rm->ctx);
	struct remote_node *best;
	size_t i;

	while (rm->active < (uint32_t)rm->cfg->max_concurrency) {
		best = NULL;
		for (i = 0; i < rm->n; i++)
			if (rm->v[i]->phase == REMOTE_IDLE &&
			    rm->v[i]->next_ns <= now &&
			    (best == NULL ||
				rm->v[i]->started_ns < best->started_ns))
				best = rm->v[i];
		if (best == NULL)
			return;
		remote_start(best);
	}
}

static void
remote_on_tick(void *arg)
{
	remote_schedule(arg);
}

/* SIGHUP: nodes_file again (the core reloads the rest). */
static void
remote_on_hup(evutil_socket_t fd, short what, void *arg)
{
	struct remote *rm = arg;

	(void)fd;
	(void)what;
	if (remote_nodes_set(rm) == 0)
		vitals_log(rm->ctx, VITALS_LOG_INFO, "%zu nodes", rm->n);
	else
		vitals_log(rm->ctx, VITALS_LOG_WARN,
		    "nodes_file %s cannot be read: keeping the %zu nodes",
		    rm->cfg->nodes_file, rm->n);
	remote_schedule(rm);
}

/* ---- the plugin ---- */

static void
remote_fini(void *arg)
{
	struct remote *rm = arg;
	size_t i;

	if (rm == NULL)
		return;
	if (rm->timer != NULL)
		vitals_timer_del(rm->timer);
	if (rm->hup != NULL)
		event_free(rm->hup);
	for (i = 0; i < rm->n; i++)
		remote_node_free(rm->v[i]);
	free(rm->v);
	if (rm->dns != NULL)
		evdns_base_free(rm->dns, 0);
	free(rm);
}

static int
remote_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct remote_config *cfg = config;
	struct remote *rm;
	int r;

	if ((r = vitals_init_check(ctx, remote_check, config)) != 0)
		return r;
	if ((rm = calloc(1, sizeof(*rm))) == NULL)
		return -ENOMEM;
	rm->ctx = ctx;
	rm->cfg = cfg;
	if ((rm->base = vitals_event_base(ctx)) == NULL) {
		vitals_error(ctx, "no event loop to pull from");
		free(rm);
		return -ENOTSUP;
	}
	vitals_nodes_recover(vitals_settings(ctx)->data_dir);
	/* Names of nodes resolve on the loop; addresses need no resolver. */
	rm->dns = evdns_base_new(rm->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
	if ((r = remote_nodes_set(rm)) != 0)
		goto fail;
	rm->hup = evsignal_new(rm->base, SIGHUP, remote_on_hup, rm);
	if (rm->hup == NULL || evsignal_add(rm->hup, NULL) != 0 ||
	    (r = vitals_timer_add(ctx,
		 cfg->interval < REMOTE_NS ? cfg->interval : REMOTE_NS,
		 remote_on_tick, rm, &rm->timer)) != 0) {
		r = r != 0 ? r : -ENOMEM;
		goto fail;
	}
	vitals_log(ctx, VITALS_LOG_INFO, "pulling from %zu nodes", rm->n);
	remote_schedule(rm);
	*state = rm;
	return 0;
fail:
	remote_fini(rm);
	return r;
}

/* The central's own epochs are the store output's: nothing to do here. */
static int
remote_write(void *arg, const struct vitals_epoch *e)
{
	(void)arg;
	(void)e;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_OUTPUT,
	.config_size = sizeof(struct remote_config),
	.name = "remote",
	.version = "1.0",
	.description = "pulls nodes' epochs into this store (central "
		       "collection)",
	.options = remote_options,
	.available = NULL,
	.init = remote_init,
	.fini = remote_fini,
	.write = remote_write,
	.check = remote_check,
};
