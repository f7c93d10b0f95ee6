/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server (server.h): evhttp on a loop it is given, routing, the
 * bearer token, limits, static files from web_dir, and a pool of worker
 * threads for the API.  evhttp is not thread-safe: a worker only turns a
 * request (path, query, settings copied on the loop) into an answer, and
 * hands the finished job back through a pipe the loop watches; the loop
 * sends it, or drops it if the client went away meanwhile.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "api.h"
#include "server.h"

/* Longest decoded path served, bytes. */
#define SERVER_PATH_MAX 1024
/* Largest request head (request line and headers) and body, bytes. */
#define SERVER_MAX_HEADERS 8192
#define SERVER_MAX_BODY 4096
/* Seconds a connection may sit idle or half-sent. */
#define SERVER_TIMEOUT_S 60
/* Most worker threads (max_requests). */
#define SERVER_MAX_WORKERS 64

/* One API request on its way through a worker. */
struct server_job {
	TAILQ_ENTRY(server_job) link;
	struct server *srv;
	/* The request; NULL once its connection is gone (it was freed). */
	struct evhttp_request *req;
	char *path; /* decoded */
	char *query; /* as sent, or NULL */
	uint64_t now_ns; /* when it came */
	struct api_env env; /* settings copied when it came */
	struct api_answer ans; /* filled by the worker */
};
TAILQ_HEAD(server_jobs, server_job);

struct server {
	LIST_ENTRY(server) link; /* in server_live */
	struct server_conf conf;
	struct event_base *base; /* borrowed */
	struct evhttp *http;
	int lfd; /* the listening socket (evhttp's), or -1 */
	int webfd; /* web_dir, or -1 */
	int pipe[2]; /* finished jobs: worker -> loop */
	struct event *done_ev; /* pipe[0] readable */
	pthread_mutex_t mu; /* queue and stop */
	pthread_cond_t cv; /* work queued, or stop */
	struct server_jobs queue; /* waiting for a worker */
	int stop;
	uint32_t nthreads;
	pthread_t threads[SERVER_MAX_WORKERS];
	uint32_t inflight; /* jobs queued or running, loop's count */
};

/*
 * The servers of this process, made and freed on the loop's thread.  A
 * reload that changes the plugin's options starts its new instance
 * before it stops the old one: the new server takes a copy of the old
 * one's listening socket rather than fail to bind the same address.
 */
static LIST_HEAD(, server) server_live = LIST_HEAD_INITIALIZER(server_live);

static void server_say(const struct server *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
server_say(const struct server *s, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (s->conf.log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->conf.log(s->conf.log_arg, level, msg);
}

static uint64_t
server_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the listen address ---- */

int
server_listen_parse(const char *listen, const char *what, char *host,
    size_t hostlen, uint16_t *port, char *why, size_t len)
{
	const char *p, *colon;
	char *end;
	unsigned long v;
	size_t n;

	if (listen == NULL || *listen == '\0')
		return snprintf(why, len, "%s is empty", what), -EINVAL;
	if (listen[0] == '[') {
		if ((p = strchr(listen, ']')) == NULL || p[1] != ':')
			goto bad;
		n = (size_t)(p - listen - 1);
		listen++;
		colon = p + 1;
	} else {
		if ((colon = strrchr(listen, ':')) == NULL ||
		    memchr(listen, ':', (size_t)(colon - listen)) != NULL)
			goto bad;
		n = (size_t)(colon - listen);
	}
	if (n >= hostlen)
		goto bad;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    v < 1 || v > 65535)
		goto bad;
	memcpy(host, listen, n);
	host[n] = '\0';
	*port = (uint16_t)v;
	return 0;
bad:
	snprintf(why, len,
	    "%s: '%s' is not HOST:PORT or [IPV6]:PORT with a "
	    "port from 1 to 65535",
	    what, listen);
	return -EINVAL;
}

/* Whether host names only this machine: 127/8, ::1 or localhost. */
static int
server_loopback(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		    (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return 0;
}

int
server_check(const struct server_conf *c, char *why, size_t len)
{
	char host[SERVER_HOST_LEN];
	uint16_t port;
	int r;

	if ((r = server_listen_parse(c->listen,
		 c->cli ? "--listen" : "option 'listen'", host, sizeof(host),
		 &port, why, len)) != 0)
		return r;
	if (server_loopback(host) || c->insecure ||
	    (c->token != NULL && c->token[0] != '\0'))
		return 0;
	if (c->cli)
		snprintf(why, len,
		    "--listen %s is not a loopback address: give "
		    "--token TOKEN (clients then send \"Authorization: Bearer "
		    "TOKEN\"), or --insecure to serve the store to anyone who "
		    "can reach it",
		    c->listen);
	else
		snprintf(why, len,
		    "option 'listen': %s is not a loopback "
		    "address: set option 'token' (clients then send "
		    "\"Authorization: Bearer TOKEN\"), or 'insecure: true' to "
		    "serve the store to anyone who can reach it",
		    c->listen);
	return -EINVAL;
}

/* ---- answers ---- */

/* Free a body evbuffer_add_reference was given. */
static void
server_body_free(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

/*
 * Send status with body (taken over; may be NULL) of content type: an
 * answer of the API or /metrics, or an error, never to be cached.
 */
static void
server_send(struct evhttp_request *req, int status, const char *type,
    char *body, size_t len)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *b = evbuffer_new();

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Cache-Control", "no-store");
	if (b != NULL && body != NULL && len > 0 &&
	    evbuffer_add_reference(b, body, len, server_body_free, NULL) == 0)
		body = NULL;
	free(body);
	evhttp_send_reply(req, status, NULL, b);
	if (b != NULL)
		evbuffer_free(b);
}

/* An error in the API's form, sent at once. */
static void
server_fail(struct evhttp_request *req, int status, const char *msg)
{
	struct api_answer a;

	api_error(&a, status, NULL, msg);
	server_send(req, a.status, a.type, a.body, a.len);
}

/* ---- the workers ---- */

/* Free a job (its request is not touched: evhttp owns it). */
static void
server_job_free(struct server_job *j)
{
	if (j == NULL)
		return;
	api_answer_free(&j->ans);
	api_env_free(&j->env);
	free(j->path);
	free(j->query);
	free(j);
}

static void *
server_worker(void *arg)
{
	struct server *s = arg;
	struct server_job *j;
	ssize_t n;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (!s->stop && TAILQ_EMPTY(&s->queue))
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->stop) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		j = TAILQ_FIRST(&s->queue);
		TAILQ_REMOVE(&s->queue, j, link);
		pthread_mutex_unlock(&s->mu);
		api_answer(&j->env, j->path, j->query, j->now_ns, &j->ans);
		/* A pointer is less than PIPE_BUF: written whole, or not. */
		do
			n = write(s->pipe[1], &j, sizeof(j));
		while (n < 0 && errno == EINTR);
	}
}

/* The connection of a job's request is going away, and the request maybe. */
static void
server_on_close(struct evhttp_connection *evcon, void *arg)
{
	struct server_job *j = arg;

	/*
	 * A request still on the connection is freed with it.  One that
	 * evhttp already took off (the client closed) is left to whoever
	 * answers it: evhttp_send_reply frees it then.
	 */
	if (j->req != NULL && evhttp_request_get_connection(j->req) == evcon)
		j->req = NULL;
}

/* Send a finished job's answer (if its client is still there) and free it. */
static void
server_finish(struct server *s, struct server_job *j)
{
	struct evhttp_connection *evcon;

	s->inflight--;
	if (j->req != NULL) {
		if ((evcon = evhttp_request_get_connection(j->req)) != NULL)
			evhttp_connection_set_closecb(evcon, NULL, NULL);
		if (j->ans.status >= 500)
			server_say(s, VITALS_LOG_WARN, "%s: %d %.*s", j->path,
			    j->ans.status,
			    (int)(j->ans.len < 200 ? j->ans.len : 200),
			    j->ans.body ? j->ans.body : "");
		server_send(j->req, j->ans.status, j->ans.type, j->ans.body,
		    j->ans.len);
		j->ans.body = NULL;
	}
	server_job_free(j);
}

/* The pipe holds finished jobs. */
static void
server_on_done(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;
	struct server_job *j;

	(void)what;
	while (read(fd, &j, sizeof(j)) == (ssize_t)sizeof(j))
		server_finish(s, j);
}

/* Copy what a worker reads of the settings, on the loop's thread. */
static int
server_env(const struct server *s, struct api_env *env)
{
	const struct vitals_settings *st = s->conf.settings;
	uint32_t i;

	memset(env, 0, sizeof(*env));
	env->data_dir = strdup(st->data_dir != NULL ? st->data_dir : "");
	env->config = st->config != NULL ? strdup(st->config) : NULL;
	env->local =
	    s->conf.daemon && st->host != NULL ? strdup(st->host) : NULL;
	if (env->data_dir == NULL || (st->config != NULL && !env->config) ||
	    (env->local == NULL && s->conf.daemon && st->host != NULL))
		return -ENOMEM;
	env->epoch_ns = st->epoch_ns;
	for (i = 0; i < st->ntimescales && i < VITALS_AGG_MAX_TIMESCALES; i++)
		env->timescales[i] = st->timescales[i];
	env->ntimescales = i;
	env->max_samples = st->max_samples;
	env->max_range_ns = s->conf.max_range_ns;
	env->max_response = s->conf.max_response;
	return 0;
}

/* Answer an API request that reads nothing at once, on the loop. */
static void
server_quick(struct server *s, struct evhttp_request *req, const char *path)
{
	const char *q =
	    evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	struct api_answer a;
	struct api_env env;

	if (server_env(s, &env) != 0) {
		api_env_free(&env);
		server_fail(req, 500, "out of memory");
		return;
	}
	api_answer(&env, path, q, server_now(), &a);
	api_env_free(&env);
	server_send(req, a.status, a.type, a.body, a.len);
}

/*
 * Queue an API request for the workers, or say 503 when max_queued wait
 * already.  A page asks for several things at once (a browser keeps six
 * connections to a server), so a few waiting is the normal case.
 */
static void
server_submit(struct server *s, struct evhttp_request *req, const char *path)
{
	const char *q =
	    evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	struct evhttp_connection *evcon;
	struct server_job *j;

	if (s->inflight >= s->nthreads + s->conf.max_queued) {
		evhttp_add_header(
		    evhttp_request_get_output_headers(req), "Retry-After", "1");
		server_fail(req, 503,
		    "busy: max_requests requests are being "
		    "answered and max_queued wait; try again");
		return;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->path = strdup(path)) == NULL ||
	    (q != NULL && (j->query = strdup(q)) == NULL) ||
	    server_env(s, &j->env) != 0) {
		server_job_free(j);
		server_fail(req, 500, "out of memory");
		return;
	}
	j->srv = s;
	j->req = req;
	j->now_ns = server_now();
	evcon = evhttp_request_get_connection(req);
	evhttp_connection_set_closecb(evcon, server_on_close, j);
	s->inflight++;
	pthread_mutex_lock(&s->mu);
	TAILQ_INSERT_TAIL(&s->queue, j, link);
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* ---- static files ---- */

/* Content type of a file by its extension (static strings). */
static const char *
server_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".json", "application/json" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	for (i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/*
 * Open rel (a '/'-separated path) under directory fd, refusing any
 * component that is empty, hidden (".", "..", ".git") or a symbolic
 * link, so nothing outside web_dir can be reached.  rel is cut up on
 * the way.  Returns an fd open for reading, or a negative errno.
 */
static int
server_open_under(int dirfd, char *rel)
{
	char *comp = rel, *slash;
	int fd = dirfd, next;

	for (;;) {
		slash = strchr(comp, '/');
		if (slash != NULL)
			*slash = '\0';
		if (comp[0] == '\0' || comp[0] == '.' ||
		    strlen(comp) > NAME_MAX) {
			next = -ENOENT;
		} else {
			next = openat(fd, comp,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
				(slash ? O_DIRECTORY : 0));
			if (next < 0)
				next = -errno;
		}
		if (fd != dirfd)
			close(fd);
		if (next < 0 || slash == NULL)
			return next;
		fd = next;
		comp = slash + 1;
	}
}

/* Serve path (decoded, from '/') from web_dir; '/' is index.html. */
static void
server_static(struct server *s, struct evhttp_request *req, const char *path)
{
	char rel[SERVER_PATH_MAX + 16];
	const char *type;
	struct evbuffer *b;
	struct stat st;
	int fd;

	if (s->webfd < 0) {
		server_fail(req, 404,
		    "not found (the page is not installed: "
		    "no web_dir)");
		return;
	}
	snprintf(rel, sizeof(rel), "%s%s", path + 1,
	    path[strlen(path) - 1] == '/' ? "index.html" : "");
	type = server_type(rel);
	if ((fd = server_open_under(s->webfd, rel)) < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		server_fail(req, 404, "not found");
		return;
	}
	evhttp_add_header(
	    evhttp_request_get_output_headers(req), "Content-Type", type);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "X-Content-Type-Options", "nosniff");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Cache-Control", "no-cache");
	if ((b = evbuffer_new()) == NULL ||
	    (st.st_size > 0 && evbuffer_add_file(b, fd, 0, st.st_size) != 0)) {
		if (b != NULL)
			evbuffer_free(b);
		close(fd);
		server_fail(req, 500, "cannot read the file");
		return;
	}
	if (st.st_size == 0)
		close(fd);
	evhttp_send_reply(req, 200, NULL, b);
	evbuffer_free(b);
}

/* ---- requests ---- */

/* Hex digit value, or -1. */
static int
server_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode a path into out; -EINVAL for a bad escape, NUL or length. */
static int
server_unescape(const char *in, char *out, size_t len)
{
	size_t n = 0;
	int hi, lo;

	for (; *in != '\0'; in++) {
		if (n + 1 >= len)
			return -EINVAL;
		if (*in != '%') {
			out[n++] = *in;
			continue;
		}
		if ((hi = server_hex(in[1])) < 0 ||
		    (lo = server_hex(in[2])) < 0 || (hi == 0 && lo == 0))
			return -EINVAL;
		out[n++] = (char)(hi << 4 | lo);
		in += 2;
	}
	out[n] = '\0';
	return 0;
}

/* Whether the request carries the token; compared in constant time. */
static int
server_authorized(const struct server *s, struct evhttp_request *req)
{
	const char *want = s->conf.token, *got;
	size_t i, n, m;
	unsigned char d;

	if (want == NULL || want[0] == '\0')
		return 1;
	got = evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Authorization");
	if (got == NULL || strncasecmp(got, "Bearer ", 7) != 0)
		return 0;
	for (got += 7; *got == ' '; got++)
		;
	n = strlen(want);
	m = strlen(got);
	d = n != m;
	for (i = 0; i < n; i++)
		d |= (unsigned char)(want[i] ^ (i < m ? got[i] : 0));
	return d == 0;
}

/* /metrics, rendered on the loop. */
static void
server_metrics(struct server *s, struct evhttp_request *req)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	if (s->conf.metrics == NULL) {
		server_fail(req, 404, "no /metrics here");
		return;
	}
	if ((r = s->conf.metrics(s->conf.metrics_arg, &text, &len)) != 0) {
		server_fail(req, r == -ENOSYS ? 404 : 500,
		    r == -ENOSYS ? "no /metrics in this build" : strerror(-r));
		return;
	}
	server_send(
	    req, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

static void
server_on_request(struct evhttp_request *req, void *arg)
{
	struct server *s = arg;
	const char *raw;
	char path[SERVER_PATH_MAX];
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		server_fail(req, 405,
		    "method not allowed: the API is "
		    "read-only (GET, HEAD)");
		return;
	}
	raw = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (raw == NULL || raw[0] != '/' ||
	    server_unescape(raw, path, sizeof(path)) != 0) {
		server_fail(req, 400, "bad path");
		return;
	}
	if (api_is_api(path) || strcmp(path, "/metrics") == 0) {
		if (!server_authorized(s, req)) {
			evhttp_add_header(
			    evhttp_request_get_output_headers(req),
			    "WWW-Authenticate", "Bearer realm=\"vitals\"");
			server_fail(req, 401,
			    "unauthorized: send "
			    "\"Authorization: Bearer TOKEN\"");
		} else if (strcmp(path, "/metrics") == 0)
			server_metrics(s, req);
		else if (api_is_quick(path))
			server_quick(s, req, path);
		else
			server_submit(s, req, path);
		return;
	}
	server_static(s, req, path);
}

/* ---- life ---- */

/* Start the workers with every signal blocked: the loop's thread takes them. */
static int
server_workers(struct server *s, uint32_t n)
{
	sigset_t all, old;
	int r = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (s->nthreads = 0; s->nthreads < n; s->nthreads++)
		if ((r = pthread_create(&s->threads[s->nthreads], NULL,
			 server_worker, s)) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}

/*
 * Open web_dir, or say why the page will not be served.  The built-in
 * one, where the page is installed, gives way to $VITALS_WEB_DIR: a
 * daemon run from a build tree (scripts/quickstart.sh) serves the
 * tree's page without a web_dir in its configuration.
 */
static void
server_web(struct server *s)
{
	const char *dir = s->conf.web_dir, *env = getenv("VITALS_WEB_DIR");

	if (dir != NULL && strcmp(dir, SERVER_WEB_DIR) == 0 && env != NULL &&
	    env[0] != '\0')
		dir = env;
	s->webfd = -1;
	if (dir == NULL || dir[0] == '\0')
		return;
	s->webfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->webfd < 0)
		server_say(s, VITALS_LOG_WARN,
		    "web_dir %s: %s: the page is not "
		    "served, the API is",
		    dir, strerror(errno));
}

/*
 * A listening socket on host:port: a copy of the one a live server of
 * this process listens on at that address, else a new one.  Returns the
 * socket, or a negative errno.
 */
static int
server_socket(const char *addr, const char *host, uint16_t port)
{
	struct addrinfo hints, *ai = NULL;
	char serv[8];
	struct server *o;
	int fd, one = 1, r;

	LIST_FOREACH(o, &server_live, link)
	if (o->lfd >= 0 && strcmp(o->conf.listen, addr) == 0)
		return (fd = fcntl(o->lfd, F_DUPFD_CLOEXEC, 0)) < 0 ? -errno
								    : fd;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", port);
	if ((r = getaddrinfo(host[0] ? host : NULL, serv, &hints, &ai)) != 0)
		return r == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
	fd = socket(ai->ai_family,
	    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, 128) != 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		fd = r;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Bind evhttp to the listen address. */
static int
server_bind(struct server *s, char *err, size_t errlen)
{
	char host[SERVER_HOST_LEN];
	uint16_t port;
	int fd, r;

	if ((r = server_listen_parse(s->conf.listen, "listen", host,
		 sizeof(host), &port, err, errlen)) != 0)
		return r;
	s->http = evhttp_new(s->base);
	if (s->http == NULL)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	evhttp_set_max_headers_size(s->http, SERVER_MAX_HEADERS);
	evhttp_set_max_body_size(s->http, SERVER_MAX_BODY);
	evhttp_set_timeout(s->http, SERVER_TIMEOUT_S);
	/* Every method reaches server_on_request, which says 405. */
	evhttp_set_allowed_methods(s->http,
	    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
		EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
		EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(s->http, server_on_request, s);
	if ((fd = server_socket(s->conf.listen, host, port)) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", s->conf.listen,
		    strerror(-fd));
		return fd;
	}
	/* evhttp closes it when freed. */
	if (evhttp_accept_socket_with_handle(s->http, fd) == NULL) {
		close(fd);
		snprintf(err, errlen, "cannot listen on %s: out of memory",
		    s->conf.listen);
		return -ENOMEM;
	}
	s->lfd = fd;
	return 0;
}

int
server_new(struct event_base *base, const struct server_conf *c,
    struct server **out, char *err, size_t errlen)
{
	struct server *s;
	int r;

	if ((r = server_check(c, err, errlen)) != 0)
		return r;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	s->conf = *c;
	s->base = base;
	s->lfd = -1;
	s->pipe[0] = s->pipe[1] = -1;
	LIST_INSERT_HEAD(&server_live, s, link);
	TAILQ_INIT(&s->queue);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	server_web(s);
	if ((r = server_bind(s, err, errlen)) != 0)
		goto fail;
	if (pipe2(s->pipe, O_CLOEXEC) != 0 ||
	    fcntl(s->pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
	    (s->done_ev = event_new(base, s->pipe[0], EV_READ | EV_PERSIST,
		 server_on_done, s)) == NULL ||
	    event_add(s->done_ev, NULL) != 0) {
		r = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "worker pipe: %s", strerror(-r));
		goto fail;
	}
	if ((r = server_workers(s,
		 c->max_requests < 1 ? 1
		     : c->max_requests > SERVER_MAX_WORKERS
		     ? SERVER_MAX_WORKERS
		     : c->max_requests)) != 0) {
		snprintf(err, errlen, "worker threads: %s", strerror(-r));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	server_free(s);
	return r;
}

void
server_free(struct server *s)
{
	struct server_job *j;
	uint32_t i;

	if (s == NULL)
		return;
	LIST_REMOVE(s, link);
	/* Connections go first: their pending jobs lose their requests. */
	if (s->http != NULL)
		evhttp_free(s->http);
	if (s->inflight > 0)
		server_say(s, VITALS_LOG_INFO,
		    "waiting for %u request%s to "
		    "finish",
		    s->inflight, s->inflight == 1 ? "" : "s");
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (i = 0; i < s->nthreads; i++)
		pthread_join(s->threads[i], NULL);
	if (s->pipe[0] >= 0)
		server_on_done(s->pipe[0], EV_READ, s);
	while ((j = TAILQ_FIRST(&s->queue)) != NULL) {
		TAILQ_REMOVE(&s->queue, j, link);
		server_job_free(j);
	}
	if (s->done_ev != NULL)
		event_free(s->done_ev);
	for (i = 0; i < 2; i++)
		if (s->pipe[i] >= 0)
			close(s->pipe[i]);
	if (s->webfd >= 0)
		close(s->webfd);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
