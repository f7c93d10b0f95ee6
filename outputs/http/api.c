/* SPDX-License-Identifier: MIT */
/*
 * The JSON API (api.h, doc/api.md): the routes, their parameters and one
 * handler per endpoint.  A handler checks its parameters, calls the same
 * library functions the CLI calls (the store's listing and reader, the
 * range query with its cache, rollups, the labels' attribution) and
 * writes JSON; anything wrong with a parameter is a 400 naming it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/profile.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "api.h"
#include "labels.h"

#define API_NS 1000000000ull
/* Most parameters in one request, and items in one comma list. */
#define API_MAX_PARAMS 16
#define API_MAX_LIST 32
/* Longest query string and parameter name read. */
#define API_QUERY_MAX 8192
#define API_NAME_MAX 32
/* Longest name of a vital or host. */
#define API_WORD_MAX 255
/* The range when from and to are not given: the last hour. */
#define API_DEFAULT_SPAN (3600 * API_NS)

/* A parameter of the request, decoded. */
struct api_param {
	const char *name;
	const char *value;
};

/* One request being answered. */
struct api_call {
	const struct api_env *env;
	uint64_t now; /* when it came */
	const char *arg; /* the path after a route's "NAME/" */
	size_t np;
	struct api_param p[API_MAX_PARAMS];
	struct api_answer *ans; /* errors are written here */
};

/* A comma list (host=a,b): n words in a copy owned by buf. */
struct api_list {
	uint32_t n;
	const char *v[API_MAX_LIST];
	char *buf;
};

/* An endpoint: its name, handler and the parameters it takes. */
struct api_route {
	const char *name; /* "hosts"; "epoch/" takes the rest as arg */
	int (*fn)(struct api_call *c, json_t **out);
	const char *params[8]; /* NULL-terminated */
	const char *size_param; /* what narrows an answer that is too large */
};

static int api_fail(struct api_call *c, int status, const char *param,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- answers ---- */

void
api_answer_free(struct api_answer *a)
{
	if (a == NULL)
		return;
	free(a->body);
	a->body = NULL;
	a->len = 0;
}

void
api_env_free(struct api_env *env)
{
	if (env == NULL)
		return;
	free(env->data_dir);
	free(env->config);
	free(env->local);
	memset(env, 0, sizeof(*env));
}

/* Set *out to j's compact text (j is consumed). */
static void
api_json(struct api_answer *out, int status, json_t *j)
{
	out->status = status;
	out->type = "application/json";
	out->body = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	out->len = out->body != NULL ? strlen(out->body) : 0;
	json_decref(j);
}

void
api_error(
    struct api_answer *out, int status, const char *param, const char *msg)
{
	json_t *j = json_pack("{s:s}", "error", msg);

	if (j != NULL && param != NULL)
		json_object_set_new(j, "param", json_string(param));
	api_json(out, status, j);
}

/* Write an error of status about param (or none) and return -1. */
static int
api_fail(
    struct api_call *c, int status, const char *param, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_error(c->ans, status, param, msg);
	return -1;
}

/* 413 for a limit (ns of a range, bytes of an answer) and return -1. */
static int
api_too_large(
    struct api_answer *out, const char *param, uint64_t limit, const char *msg)
{
	json_t *j =
	    json_pack("{s:s, s:I}", "error", msg, "limit", (json_int_t)limit);

	if (j != NULL && param != NULL)
		json_object_set_new(j, "param", json_string(param));
	api_json(out, 413, j);
	return -1;
}

/*
 * User text for a message: printable ASCII, at most 64 bytes, so that an
 * error never echoes bytes JSON cannot hold.  Returns buf.
 */
static const char *
api_clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < len && i < 64; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* ---- parameters ---- */

static int
api_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode a form-encoded component in place ('+' is a space).  Returns
 * 0, or -EINVAL for a bad escape, a NUL, a control character or bytes
 * that are not UTF-8.
 */
static int
api_unescape(char *s)
{
	char *start = s, *w = s;
	json_t *t;
	int hi, lo;

	for (; *s != '\0'; s++) {
		if (*s == '+')
			*w++ = ' ';
		else if (*s != '%')
			*w++ = *s;
		else if ((hi = api_hexval(s[1])) < 0 ||
		    (lo = api_hexval(s[2])) < 0)
			return -EINVAL;
		else {
			*w++ = (char)(hi << 4 | lo);
			s += 2;
		}
		if ((unsigned char)w[-1] < 0x20 || w[-1] == 0x7f)
			return -EINVAL;
	}
	*w = '\0';
	/* jansson refuses what is not UTF-8. */
	if ((t = json_string(start)) == NULL)
		return -EINVAL;
	json_decref(t);
	return 0;
}

/* Whether route rt takes parameter name. */
static int
api_takes(const struct api_route *rt, const char *name)
{
	size_t i;

	for (i = 0; rt->params[i] != NULL; i++)
		if (strcmp(rt->params[i], name) == 0)
			return 1;
	return 0;
}

/* "from, to, host": the parameters rt takes, for a message. */
static const char *
api_takes_list(const struct api_route *rt, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; rt->params[i] != NULL && n < len; i++)
		n += (size_t)snprintf(
		    buf + n, len - n, "%s%s", i ? ", " : "", rt->params[i]);
	return i == 0 ? "none" : buf;
}

/* One name=value of the query (both decoded in place) into c. */
static int
api_param_add(
    struct api_call *c, const struct api_route *rt, char *name, char *value)
{
	char clean[80], takes[256];
	int known = 0;
	size_t i;

	/* An error names it as sent when it does not decode. */
	api_clean(name, clean, sizeof(clean));
	if (strlen(name) < API_NAME_MAX && api_unescape(name) == 0) {
		api_clean(name, clean, sizeof(clean));
		known = api_takes(rt, name);
	}
	if (!known)
		return api_fail(c, 400, clean,
		    "unknown parameter '%s' (%s "
		    "takes %s)",
		    clean, rt->name, api_takes_list(rt, takes, sizeof(takes)));
	if (api_unescape(value) != 0)
		return api_fail(c, 400, name,
		    "bad value of %s: not UTF-8 "
		    "text with %%XX escapes",
		    name);
	for (i = 0; i < c->np; i++)
		if (strcmp(c->p[i].name, name) == 0)
			return api_fail(c, 400, name,
			    "parameter %s given twice "
			    "(a list is one comma-separated value)",
			    name);
	if (c->np == API_MAX_PARAMS)
		return api_fail(c, 400, name, "too many parameters");
	c->p[c->np].name = name;
	c->p[c->np++].value = value;
	return 0;
}

/* Parse the query string into c; its text is kept in *keep (the caller's). */
static int
api_params(struct api_call *c, const struct api_route *rt, const char *query,
    char **keep)
{
	char *q, *tok, *next, *eq;

	*keep = NULL;
	if (query == NULL)
		return 0;
	if (strlen(query) > API_QUERY_MAX)
		return api_fail(c, 400, NULL, "query string too long");
	if ((q = *keep = strdup(query)) == NULL)
		return api_fail(c, 500, NULL, "out of memory");
	for (tok = q; tok != NULL; tok = next) {
		if ((next = strchr(tok, '&')) != NULL)
			*next++ = '\0';
		if (*tok == '\0')
			continue;
		if ((eq = strchr(tok, '=')) != NULL)
			*eq++ = '\0';
		if (api_param_add(
			c, rt, tok, eq != NULL ? eq : tok + strlen(tok)))
			return -1;
	}
	return 0;
}

/* The value of parameter name, or NULL when absent or empty. */
static const char *
api_get(const struct api_call *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->np; i++)
		if (strcmp(c->p[i].name, name) == 0)
			return c->p[i].value[0] != '\0' ? c->p[i].value : NULL;
	return NULL;
}

/* Parameter name as an integer in [min, max], def when absent. */
static int
api_count(struct api_call *c, const char *name, uint64_t def, uint64_t min,
    uint64_t max, uint64_t *out)
{
	const char *s = api_get(c, name);
	unsigned long long v;
	char *end;

	if (s == NULL) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		return api_fail(c, 400, name,
		    "%s: expected a whole number from "
		    "%" PRIu64 " to %" PRIu64,
		    name, min, max);
	*out = v;
	return 0;
}

/* Whether s is a name of a vital or host: no commas, slashes or spaces. */
static int
api_word(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= API_WORD_MAX && strcspn(s, ",/ \\") == n;
}

/* Parameter name as a comma list of words (l->n == 0 when absent). */
static int
api_list(struct api_call *c, const char *name, struct api_list *l)
{
	const char *s = api_get(c, name);
	char *tok, *save = NULL;

	memset(l, 0, sizeof(*l));
	if (s == NULL)
		return 0;
	if ((l->buf = strdup(s)) == NULL)
		return api_fail(c, 500, NULL, "out of memory");
	for (tok = strtok_r(l->buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (l->n == API_MAX_LIST || !api_word(tok))
			return api_fail(c, 400, name,
			    "%s: expected at most %d "
			    "names, comma-separated",
			    name, API_MAX_LIST);
		l->v[l->n++] = tok;
	}
	return 0;
}

/* Whether l is empty or holds s. */
static int
api_in(const struct api_list *l, const char *s)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return l->n == 0;
}

/* A time as the CLI reads it (vitals_time_parse). */
static int
api_time(struct api_call *c, const char *name, const char *s, uint64_t *out)
{
	char clean[80];
	int r;

	if ((r = vitals_time_parse(s, c->now, out)) == 0)
		return 0;
	api_clean(s, clean, sizeof(clean));
	if (r == -ERANGE)
		return api_fail(
		    c, 400, name, "%s: time '%s' is out of range", name, clean);
	return api_fail(c, 400, name,
	    "%s: bad time '%s': expected "
	    "2026-11-22T10:00 (local, or with Z or +01:00), a date, now, "
	    "-30m, -2h, -1d, @UNIXSECONDS or nanoseconds since the epoch",
	    name, clean);
}

/*
 * The range [from, to) must end after it starts (else a 400 about
 * p_empty) and be no longer than max_range (else a 413 about p_long).
 */
static int
api_span(struct api_call *c, const char *p_empty, const char *p_long,
    uint64_t from, uint64_t to)
{
	char msg[256];

	if (to <= from)
		return api_fail(c, 400, p_empty,
		    "%s: the range ends before it "
		    "starts",
		    p_empty);
	if (to - from <= c->env->max_range_ns)
		return 0;
	snprintf(msg, sizeof(msg),
	    "the range is longer than max_range "
	    "(%" PRIu64 " s)",
	    (uint64_t)(c->env->max_range_ns / API_NS));
	return api_too_large(c->ans, p_long, c->env->max_range_ns, msg);
}

/* from and to, by default the last hour. */
static int
api_range(struct api_call *c, uint64_t *from, uint64_t *to)
{
	const char *f = api_get(c, "from"), *t = api_get(c, "to");

	*to = c->now;
	if (t != NULL && api_time(c, "to", t, to) != 0)
		return -1;
	*from = *to > API_DEFAULT_SPAN ? *to - API_DEFAULT_SPAN : 0;
	if (f != NULL && api_time(c, "from", f, from) != 0)
		return -1;
	return api_span(c, "to", "from", *from, *to);
}

/* "5m", "1h", "90s": whole seconds, 0 if s is not such a duration. */
static uint64_t
api_duration(const char *s)
{
	static const struct {
		char unit;
		uint64_t sec;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
		{ 'w', 604800 } };
	unsigned long long v;
	char *end;
	size_t i;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (end[0] == units[i].unit && end[1] == '\0' && errno == 0 &&
		    v < UINT32_MAX / units[i].sec)
			return v * units[i].sec;
	return 0;
}

/* "5m": a timescale for messages. */
static const char *
api_ts_name(uint32_t ts, char *buf, size_t len)
{
	if (ts % 86400 == 0)
		snprintf(buf, len, "%ud", ts / 86400);
	else if (ts % 3600 == 0)
		snprintf(buf, len, "%uh", ts / 3600);
	else if (ts % 60 == 0)
		snprintf(buf, len, "%um", ts / 60);
	else
		snprintf(buf, len, "%us", ts);
	return buf;
}

/* timescale: base (0), or a configured timescale in seconds. */
static int
api_timescale(struct api_call *c, uint32_t *ts)
{
	const char *s = api_get(c, "timescale");
	char list[256], one[16], clean[80];
	uint64_t v;
	uint32_t i;
	size_t n;

	*ts = 0;
	if (s == NULL || strcmp(s, "base") == 0)
		return 0;
	v = api_duration(s);
	for (i = 0; v != 0 && i < c->env->ntimescales; i++)
		if (c->env->timescales[i] == v) {
			*ts = (uint32_t)v;
			return 0;
		}
	n = (size_t)snprintf(list, sizeof(list), "base");
	for (i = 0; i < c->env->ntimescales && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, ", %s",
		    api_ts_name(c->env->timescales[i], one, sizeof(one)));
	return api_fail(c, 400, "timescale",
	    "timescale '%s' is not "
	    "configured (configured: %s)",
	    api_clean(s, clean, sizeof(clean)), list);
}

/* severity: info (default), warn or crit. */
static int
api_severity(struct api_call *c, uint32_t *sev)
{
	static const char *const names[] = { "info", "warn", "crit" };
	const char *s = api_get(c, "severity");
	uint32_t i;

	*sev = VITALS_SEV_INFO;
	for (i = 0; s != NULL && i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*sev = VITALS_SEV_INFO + i;
			return 0;
		}
	if (s == NULL)
		return 0;
	return api_fail(c, 400, "severity",
	    "severity: expected info, warn or "
	    "crit");
}

static const char *
api_severity_name(uint32_t s)
{
	return s == VITALS_SEV_CRIT ? "crit"
	    : s == VITALS_SEV_WARN  ? "warn"
				    : "info";
}

/* ---- the store ---- */

/* t to the millisecond the store's file names hold. */
static uint64_t
api_ms(uint64_t t)
{
	return t - t % 1000000;
}

/* The store's files from since on; a store not made yet is empty. */
static int
api_listing(struct api_call *c, uint64_t since, struct vitals_store_list *l)
{
	int r = since == 0
	    ? vitals_store_list(c->env->data_dir, l)
	    : vitals_store_list_since(c->env->data_dir, since, l);

	if (r == -ENOENT || r == -ENOTDIR) {
		memset(l, 0, sizeof(*l));
		return 0;
	}
	if (r != 0)
		return api_fail(c, 500, NULL, "cannot list %s: %s",
		    c->env->data_dir, strerror(-r));
	return 0;
}

/* Load a listed file; a corrupt one is passed over (NULL). */
static struct vitals_epoch *
api_load(const struct vitals_store_entry *se)
{
	struct vitals_epoch *e;
	char err[512];

	return vitals_epoch_load(se->path, &e, err, sizeof(err)) == 0 ? e
								      : NULL;
}

/*
 * Index of the first entry of l that may start at start or later: file
 * names hold the start in milliseconds, so the entries of start's
 * millisecond are kept.
 */
static size_t
api_lower(const struct vitals_store_list *l, uint64_t start)
{
	size_t lo = 0, hi = l->n, mid;

	start -= start % 1000000;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l->v[mid].start_ns < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Loaded epochs, freed together. */
struct api_epochs {
	size_t n;
	struct vitals_epoch **v;
};

static void
api_epochs_free(struct api_epochs *es)
{
	while (es->n > 0)
		vitals_epoch_free(es->v[--es->n]);
	free(es->v);
	es->v = NULL;
}

/* The readable epochs of host (NULL: any) starting in [start, end). */
static int
api_window(const struct vitals_store_list *l, const char *host, uint64_t start,
    uint64_t end, struct api_epochs *out)
{
	size_t i, cap = 0;
	struct vitals_epoch *e, **v;

	memset(out, 0, sizeof(*out));
	for (i = api_lower(l, start); i < l->n && l->v[i].start_ns < end; i++) {
		if (host != NULL && strcmp(l->v[i].host, host) != 0)
			continue;
		if ((e = api_load(&l->v[i])) == NULL)
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 4;
			if ((v = realloc(out->v, cap * sizeof(*v))) == NULL) {
				vitals_epoch_free(e);
				api_epochs_free(out);
				return -ENOMEM;
			}
			out->v = v;
		}
		out->v[out->n++] = e;
	}
	return 0;
}

/*
 * A range query over [from, to) at one timescale (0: the base), through
 * the aggregator and its cache as `vitals query` runs it.
 */
static int
api_query(struct api_call *c, uint64_t from, uint64_t to, uint32_t ts,
    const struct api_list *hosts, struct vitals_agg_result **out)
{
	struct vitals_agg_params p;
	char err[1024] = "";
	int r;

	memset(&p, 0, sizeof(p));
	p.data_dir = c->env->data_dir;
	p.config = c->env->config;
	p.from_ns = from;
	p.to_ns = to;
	p.ntimescales = 1;
	p.timescales = &ts;
	p.nhosts = hosts->n;
	p.hosts = hosts->v;
	if ((r = vitals_agg_query(&p, out, err, sizeof(err))) == 0)
		return 0;
	if (r == -ENOENT)
		return api_fail(
		    c, 404, NULL, "no store at %s", c->env->data_dir);
	return api_fail(
	    c, 500, NULL, "range query: %s", err[0] ? err : strerror(-r));
}

/* ---- vitals and their units ---- */

/* The vitals of a range: names and units. */
struct api_vitals {
	uint32_t n;
	struct {
		const char *name; /* borrowed from the query's result */
		char unit[32];
	} v[64];
};

/* Add the names of r's slots to vs (sorted by name, once each). */
static void
api_vitals_names(const struct vitals_agg_result *r, struct api_vitals *vs)
{
	const struct vitals_agg_slot *s;
	size_t i;
	uint32_t j, k;

	vs->n = 0;
	for (i = 0; i < r->nslots; i++) {
		s = &r->slots[i];
		for (j = 0; j < s->nvitals; j++) {
			for (k = 0; k < vs->n; k++)
				if (strcmp(vs->v[k].name, s->vitals[j].name) >=
				    0)
					break;
			if ((k < vs->n &&
				strcmp(vs->v[k].name, s->vitals[j].name) ==
				    0) ||
			    vs->n == sizeof(vs->v) / sizeof(vs->v[0]))
				continue;
			memmove(&vs->v[k + 1], &vs->v[k],
			    (vs->n - k) * sizeof(vs->v[0]));
			vs->v[k].name = s->vitals[j].name;
			vs->v[k].unit[0] = '\0';
			vs->n++;
		}
	}
}

/* Take the units vs lacks from epoch e. */
static void
api_vitals_units(struct api_vitals *vs, const struct vitals_epoch *e)
{
	const struct vitals_vital_epoch *ve;
	uint32_t k;

	for (k = 0; k < vs->n; k++)
		if (vs->v[k].unit[0] == '\0' &&
		    (ve = vitals_epoch_vital(e, vs->v[k].name)) != NULL)
			snprintf(vs->v[k].unit, sizeof(vs->v[k].unit), "%s",
			    ve->unit ? ve->unit : "");
}

/* Whether the slot has a vital whose unit vs lacks. */
static int
api_slot_lacks(const struct vitals_agg_slot *s, const struct api_vitals *vs)
{
	uint32_t j, k;

	for (j = 0; j < s->nvitals; j++)
		for (k = 0; k < vs->n; k++)
			if (vs->v[k].unit[0] == '\0' &&
			    strcmp(vs->v[k].name, s->vitals[j].name) == 0)
				return 1;
	return 0;
}

/*
 * The units of the vitals of r: a vital's unit is in every stored epoch
 * that has it, so the first epoch of a slot that names one is read.
 */
static void
api_units(const struct vitals_agg_result *r, const struct vitals_store_list *l,
    struct api_vitals *vs)
{
	const struct vitals_agg_slot *s;
	struct vitals_epoch *e;
	size_t i, k;

	for (i = 0; i < r->nslots; i++) {
		s = &r->slots[i];
		if (!api_slot_lacks(s, vs))
			continue;
		for (k = api_lower(l, s->start_ns); k < l->n &&
		     l->v[k].start_ns < s->start_ns + s->timescale_s * API_NS;
		     k++)
			if (strcmp(l->v[k].host, s->host) == 0 &&
			    (e = api_load(&l->v[k])) != NULL) {
				api_vitals_units(vs, e);
				vitals_epoch_free(e);
				break;
			}
	}
}

/* Every vital of wanted must be among vs (when vs has any). */
static int
api_vitals_check(struct api_call *c, const struct api_list *wanted,
    const struct api_vitals *vs)
{
	char clean[80], have[512];
	uint32_t i, k;
	size_t n = 0;

	have[0] = '\0';
	for (k = 0; k < vs->n && n < sizeof(have); k++)
		n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s",
		    k ? ", " : "", vs->v[k].name);
	for (i = 0; vs->n > 0 && i < wanted->n; i++) {
		for (k = 0; k < vs->n; k++)
			if (strcmp(vs->v[k].name, wanted->v[i]) == 0)
				break;
		if (k == vs->n)
			return api_fail(c, 400, "vital",
			    "no vital '%s' in the "
			    "range (it has %s)",
			    api_clean(wanted->v[i], clean, sizeof(clean)),
			    have);
	}
	return 0;
}

/* [{"name", "unit"}] of the wanted vitals of vs. */
static json_t *
api_vitals_json(const struct api_vitals *vs, const struct api_list *wanted)
{
	json_t *a = json_array();
	uint32_t k;

	for (k = 0; a != NULL && k < vs->n; k++)
		if (api_in(wanted, vs->v[k].name))
			json_array_append_new(a,
			    json_pack("{s:s, s:s}", "name", vs->v[k].name,
				"unit", vs->v[k].unit));
	return a;
}

/* ---- endpoints ---- */

/* GET /api/v1/hosts */
static int
api_ep_hosts(struct api_call *c, json_t **out)
{
	struct vitals_store_list l;
	const struct vitals_store_entry *se;
	json_t *hosts, *h;
	size_t i, k;

	if (api_listing(c, 0, &l) != 0)
		return -1;
	*out = json_pack("{s:[]}", "hosts");
	hosts = json_object_get(*out, "hosts");
	for (i = 0; hosts != NULL && i < l.n; i++) {
		se = &l.v[i];
		for (k = 0; (h = json_array_get(hosts, k)) != NULL; k++)
			if (strcmp(
				json_string_value(json_object_get(h, "host")),
				se->host) == 0)
				break;
		if (h == NULL)
			json_array_append_new(hosts,
			    h = json_pack("{s:s, s:I, "
					  "s:I, s:I}",
				"host", se->host, "epochs", (json_int_t)0,
				"first_ns", (json_int_t)se->start_ns, "last_ns",
				(json_int_t)se->start_ns));
		json_object_set_new(h, "epochs",
		    json_integer(
			1 + json_integer_value(json_object_get(h, "epochs"))));
		json_object_set_new(
		    h, "last_ns", json_integer((json_int_t)se->start_ns));
	}
	vitals_store_list_free(&l);
	if (*out != NULL && c->env->local != NULL)
		json_object_set_new(*out, "local", json_string(c->env->local));
	return 0;
}

/*
 * The vitals of [from, to) for hosts (a base range query) and their
 * units.  l gets the listing the units were read from.
 */
static int
api_range_vitals(struct api_call *c, uint64_t from, uint64_t to, uint32_t ts,
    const struct api_list *hosts, struct vitals_agg_result **r,
    struct vitals_store_list *l, struct api_vitals *vs)
{
	if (api_query(c, from, to, ts, hosts, r) != 0)
		return -1;
	if (api_listing(
		c, (*r)->nslots ? api_ms((*r)->slots[0].start_ns) : to, l)) {
		vitals_agg_result_free(*r);
		*r = NULL;
		return -1;
	}
	api_vitals_names(*r, vs);
	api_units(*r, l, vs);
	return 0;
}

/* GET /api/v1/vitals?from=&to=&host= */
static int
api_ep_vitals(struct api_call *c, json_t **out)
{
	struct vitals_agg_result *r;
	struct vitals_store_list l;
	struct api_list hosts, all = { 0 };
	struct api_vitals vs;
	uint64_t from, to;
	int rc = -1;

	if (api_list(c, "host", &hosts) == 0 && api_range(c, &from, &to) == 0 &&
	    api_range_vitals(c, from, to, 0, &hosts, &r, &l, &vs) == 0) {
		*out = json_pack("{s:o}", "vitals", api_vitals_json(&vs, &all));
		vitals_agg_result_free(r);
		vitals_store_list_free(&l);
		rc = 0;
	}
	free(hosts.buf);
	return rc;
}

/* One epoch's line in /epochs. */
static json_t *
api_epoch_line(const struct vitals_epoch *e)
{
	char id[24];
	json_t *o, *v;
	uint32_t i;

	snprintf(id, sizeof(id), "%" PRIu64, e->start_ns);
	o = json_pack("{s:s, s:s, s:I, s:I, s:b, s:I, s:{}}", "id", id, "host",
	    e->host, "start_ns", (json_int_t)e->start_ns, "length_ns",
	    (json_int_t)e->length_ns, "partial", (int)e->partial, "findings",
	    (json_int_t)e->nfindings, "vitals");
	v = json_object_get(o, "vitals");
	for (i = 0; v != NULL && i < e->nvitals; i++)
		json_object_set_new(v, e->vitals[i].name,
		    json_pack("{s:I, s:I}", "events",
			(json_int_t)e->vitals[i].events, "wsum",
			(json_int_t)e->vitals[i].wsum));
	return o;
}

/* GET /api/v1/epochs?from=&to=&host=&limit= */
static int
api_ep_epochs(struct api_call *c, json_t **out)
{
	struct vitals_store_list l;
	struct api_list hosts;
	struct vitals_epoch *e;
	uint64_t from, to, limit;
	json_t *a;
	size_t i, first, n = 0;

	if (api_list(c, "host", &hosts) != 0 || api_range(c, &from, &to) != 0 ||
	    api_count(c, "limit", 10000, 1, 1000000, &limit) != 0 ||
	    api_listing(c, api_ms(from), &l) != 0) {
		free(hosts.buf);
		return -1;
	}
	/* The newest `limit` of the range. */
	for (i = first = api_lower(&l, from); i < l.n && l.v[i].start_ns < to;
	     i++)
		n += api_in(&hosts, l.v[i].host);
	*out = json_pack("{s:I, s:I, s:[]}", "from_ns", (json_int_t)from,
	    "to_ns", (json_int_t)to, "epochs");
	a = json_object_get(*out, "epochs");
	for (i = first; a != NULL && i < l.n && l.v[i].start_ns < to; i++) {
		if (!api_in(&hosts, l.v[i].host) || n-- > limit)
			continue;
		if ((e = api_load(&l.v[i])) == NULL)
			continue;
		json_array_append_new(a, api_epoch_line(e));
		vitals_epoch_free(e);
	}
	vitals_store_list_free(&l);
	free(hosts.buf);
	return 0;
}

/* An epoch ID: its start in ns, decimal. */
static int
api_epoch_id(struct api_call *c, const char *param, const char *s, uint64_t *id)
{
	size_t n = s != NULL ? strlen(s) : 0;
	char clean[80];

	if (n > 0 && n <= 19 && strspn(s, "0123456789") == n) {
		*id = strtoull(s, NULL, 10);
		return 0;
	}
	if (s == NULL)
		return api_fail(
		    c, 400, param, "%s: an epoch id is needed", param);
	return api_fail(c, 400, param,
	    "%s: bad epoch id '%s': expected its "
	    "start in nanoseconds",
	    param, api_clean(s, clean, sizeof(clean)));
}

/*
 * The stored epoch starting at id (of host, when given).  File names
 * hold the start in milliseconds: the candidates are read to compare
 * the start exactly.  404 when there is none, 400 (host) when several
 * hosts have one.
 */
static int
api_find_epoch(struct api_call *c, uint64_t id, const char *host,
    struct vitals_epoch **out)
{
	struct vitals_store_list l;
	struct api_epochs es;
	uint64_t ms = api_ms(id);
	size_t i, n = 0;
	int r;

	if (api_listing(c, ms, &l) != 0)
		return -1;
	r = api_window(&l, host, ms, ms + 1, &es);
	vitals_store_list_free(&l);
	if (r != 0)
		return api_fail(c, 500, NULL, "out of memory");
	*out = NULL;
	for (i = 0; i < es.n; i++) {
		if (es.v[i]->start_ns != id)
			continue;
		n++;
		if (*out == NULL) {
			*out = es.v[i];
			es.v[i] = NULL;
		}
	}
	for (i = 0; i < es.n; i++)
		vitals_epoch_free(es.v[i]);
	free(es.v);
	if (n == 1)
		return 0;
	vitals_epoch_free(*out);
	if (n > 1)
		return api_fail(c, 400, "host",
		    "several hosts have an epoch "
		    "starting at %" PRIu64 ": give host",
		    id);
	return api_fail(c, 404, NULL,
	    "no stored epoch starts at %" PRIu64 "%s%s", id,
	    host ? " for host " : "", host ? host : "");
}

/* GET /api/v1/epoch/ID?host= : the stored form, as `vitals show --json`. */
static int
api_ep_epoch(struct api_call *c, json_t **out)
{
	struct vitals_epoch *e;
	const char *host = api_get(c, "host");
	uint64_t id;
	char *text;
	size_t len;
	int r;

	(void)out;
	if (host != NULL && !api_word(host))
		return api_fail(c, 400, "host", "host: one host name");
	if (api_epoch_id(c, "id", c->arg, &id) != 0 ||
	    api_find_epoch(c, id, host, &e) != 0)
		return -1;
	r = vitals_epoch_json(e, &text, &len);
	vitals_epoch_free(e);
	if (r != 0)
		return api_fail(c, 500, NULL, "out of memory");
	c->ans->status = 200;
	c->ans->type = "application/json";
	c->ans->body = text;
	c->ans->len = len;
	return 1;
}

/* The `top` exes of one vital of e, by the labels' attribution. */
static json_t *
api_top_exes(const struct vitals_epoch *e, const struct vitals_vital_epoch *ve,
    uint64_t base_ns, uint64_t top)
{
	struct labels_how how = { .by = LABELS_BY_EXE };
	struct labels l;
	json_t *a = json_array();
	uint32_t i;

	how.base_ns = labels_runs(e, base_ns);
	if (a == NULL || top == 0 || labels_collect(ve, &how, &l) != 0)
		return a;
	for (i = 0; i < l.n && i < top; i++)
		json_array_append_new(a,
		    json_pack("{s:s, s:f}", "exe", l.v[i].name, "share",
			l.total > 0 ? l.v[i].weight / l.total : 0.0));
	labels_free(&l);
	return a;
}

/*
 * The epoch a slot stands for: its stored epoch, or the rollup of the
 * epochs that start in it.  *owned says whether to free it.
 */
static int
api_slot_epoch(const struct api_env *env, const struct vitals_store_list *l,
    const struct vitals_agg_slot *s, struct api_epochs *es,
    struct vitals_epoch **e)
{
	*e = NULL;
	if (api_window(l, s->host, s->start_ns,
		s->start_ns + (uint64_t)s->timescale_s * API_NS, es) != 0)
		return -ENOMEM;
	if (es->n == 0 || (s->base && es->n == 1))
		return 0;
	return vitals_epoch_rollup((const struct vitals_epoch *const *)es->v,
	    es->n, s->start_ns, s->timescale_s, env->max_samples, e);
}

/* One slot of /series: totals and top exes of the wanted vitals. */
static json_t *
api_series_slot(struct api_call *c, const struct vitals_store_list *l,
    const struct vitals_agg_slot *s, const struct api_list *wanted,
    uint64_t top)
{
	struct api_epochs es = { 0, NULL };
	struct vitals_epoch *roll = NULL;
	const struct vitals_epoch *e;
	const struct vitals_vital_epoch *ve;
	uint64_t base_ns;
	json_t *o, *v, *t;
	uint32_t i;

	if (top > 0 && api_slot_epoch(c->env, l, s, &es, &roll) != 0)
		top = 0;
	e = roll != NULL ? roll : es.n > 0 ? es.v[0] : NULL;
	/* A rollup's samples restart at each of its base epochs. */
	base_ns = es.n > 0 ? es.v[0]->timescale_s * API_NS : c->env->epoch_ns;
	o = json_pack("{s:s, s:I, s:I, s:i, s:{}}", "host", s->host, "start_ns",
	    (json_int_t)s->start_ns, "length_ns", (json_int_t)s->length_ns,
	    "epochs", (int)s->nepochs, "vitals");
	v = json_object_get(o, "vitals");
	for (i = 0; v != NULL && i < s->nvitals; i++) {
		if (!api_in(wanted, s->vitals[i].name))
			continue;
		ve =
		    e != NULL ? vitals_epoch_vital(e, s->vitals[i].name) : NULL;
		t = ve != NULL ? api_top_exes(e, ve, base_ns, top)
			       : json_array();
		json_object_set_new(v, s->vitals[i].name,
		    json_pack("{s:I, s:I, "
			      "s:o}",
			"events", (json_int_t)s->vitals[i].events, "wsum",
			(json_int_t)s->vitals[i].wsum, "top", t));
	}
	vitals_epoch_free(roll);
	api_epochs_free(&es);
	return o;
}

/* GET /api/v1/series?vital=&from=&to=&timescale=&host=&top= */
static int
api_ep_series(struct api_call *c, json_t **out)
{
	struct vitals_agg_result *r = NULL;
	struct vitals_store_list l = { 0, NULL };
	struct api_list hosts = { 0 }, wanted = { 0 };
	struct api_vitals vs;
	uint64_t from, to, top;
	uint32_t ts;
	json_t *slots;
	size_t i;
	int rc = -1;

	if (api_list(c, "host", &hosts) != 0 || api_list(c, "vital", &wanted) ||
	    api_range(c, &from, &to) != 0 || api_timescale(c, &ts) != 0 ||
	    api_count(c, "top", 5, 0, 100, &top) != 0 ||
	    api_range_vitals(c, from, to, ts, &hosts, &r, &l, &vs) != 0)
		goto out;
	if (api_vitals_check(c, &wanted, &vs) != 0)
		goto out;
	*out = json_pack("{s:I, s:I, s:I, s:o, s:[]}", "from_ns",
	    (json_int_t)from, "to_ns", (json_int_t)to, "timescale_s",
	    (json_int_t)(ts ? ts : c->env->epoch_ns / API_NS), "vitals",
	    api_vitals_json(&vs, &wanted), "slots");
	if (ts == 0 && r->nslots > 0)
		json_object_set_new(
		    *out, "timescale_s", json_integer(r->slots[0].timescale_s));
	slots = json_object_get(*out, "slots");
	for (i = 0; slots != NULL && i < r->nslots; i++)
		json_array_append_new(
		    slots, api_series_slot(c, &l, &r->slots[i], &wanted, top));
	rc = 0;
out:
	vitals_agg_result_free(r);
	vitals_store_list_free(&l);
	free(hosts.buf);
	free(wanted.buf);
	return rc;
}

/* ---- the fleet: one vital of every host, slot by slot ---- */

/* The entry of host in hosts, found by name in idx; added when new. */
static json_t *
api_fleet_host(json_t *hosts, json_t *idx, const char *host)
{
	json_t *h = json_object_get(idx, host);

	if (h != NULL)
		return h;
	if ((h = json_pack("{s:s, s:[], s:[]}", "host", host, "start_ns",
		 "wsum")) == NULL)
		return NULL;
	if (json_object_set(idx, host, h) != 0) {
		json_decref(h);
		return NULL;
	}
	return json_array_append_new(hosts, h) == 0 ? h : NULL;
}

/* The weighted sum of vital in slot s (0 when the slot lacks it). */
static uint64_t
api_fleet_wsum(const struct vitals_agg_slot *s, const char *vital)
{
	uint32_t i;

	for (i = 0; i < s->nvitals; i++)
		if (strcmp(s->vitals[i].name, vital) == 0)
			return s->vitals[i].wsum;
	return 0;
}

/* Per host of r, its slots' starts and vital's sums, in r's order. */
static json_t *
api_fleet_hosts(const struct vitals_agg_result *r, const char *vital)
{
	json_t *hosts = json_array(), *idx = json_object(), *h;
	const struct vitals_agg_slot *s;
	size_t i;

	for (i = 0; hosts != NULL && idx != NULL && i < r->nslots; i++) {
		s = &r->slots[i];
		if ((h = api_fleet_host(hosts, idx, s->host)) == NULL)
			break;
		json_array_append_new(json_object_get(h, "start_ns"),
		    json_integer((json_int_t)s->start_ns));
		json_array_append_new(json_object_get(h, "wsum"),
		    json_integer((json_int_t)api_fleet_wsum(s, vital)));
	}
	json_decref(idx);
	return hosts;
}

/* GET /api/v1/fleet?vital=&from=&to=&timescale=&host= */
static int
api_ep_fleet(struct api_call *c, json_t **out)
{
	struct vitals_agg_result *r = NULL;
	struct vitals_store_list l = { 0, NULL };
	struct api_list hosts = { 0 }, wanted = { 0 };
	struct api_vitals vs;
	const char *vital, *unit = "";
	uint64_t from, to;
	uint32_t ts, k;
	int rc = -1;

	if (api_list(c, "host", &hosts) != 0 || api_list(c, "vital", &wanted) ||
	    api_range(c, &from, &to) != 0 || api_timescale(c, &ts) != 0)
		goto out;
	if (wanted.n > 1) {
		api_fail(c, 400, "vital", "vital: one vital name");
		goto out;
	}
	vital = wanted.n ? wanted.v[0] : "cpu";
	wanted.v[0] = vital;
	wanted.n = 1;
	if (api_range_vitals(c, from, to, ts, &hosts, &r, &l, &vs) != 0 ||
	    api_vitals_check(c, &wanted, &vs) != 0)
		goto out;
	for (k = 0; k < vs.n; k++)
		if (strcmp(vs.v[k].name, vital) == 0)
			unit = vs.v[k].unit;
	/* base: the slots' own length, as series says it */
	if (ts == 0)
		ts = r->nslots ? r->slots[0].timescale_s
			       : (uint32_t)(c->env->epoch_ns / API_NS);
	*out = json_pack("{s:I, s:I, s:I, s:s, s:s, s:o}", "from_ns",
	    (json_int_t)from, "to_ns", (json_int_t)to, "timescale_s",
	    (json_int_t)ts, "vital", vital, "unit", unit, "hosts",
	    api_fleet_hosts(r, vital));
	rc = 0;
out:
	vitals_agg_result_free(r);
	vitals_store_list_free(&l);
	free(hosts.buf);
	free(wanted.buf);
	return rc;
}

/* Sites (innermost symbolized frame) of one vital, by attributed weight. */
struct api_site {
	uint32_t id;
	double w;
};

static int
api_site_cmp(const void *x, const void *y)
{
	const struct api_site *a = x, *b = y;

	if (a->w != b->w)
		return a->w < b->w ? 1 : -1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The k sites of ve with the largest weight, as [{"site", ...}]. */
static json_t *
api_top_sites(const struct vitals_epoch *e, const struct vitals_vital_epoch *ve,
    uint64_t base_ns, uint64_t k)
{
	char site[LABELS_FRAME_LEN];
	struct labels_map *m = labels_map_new();
	struct api_site *v = calloc(ve->nsamples + 1, sizeof(*v));
	double *w = calloc(ve->nsamples + 1, sizeof(*w)), attributed;
	json_t *a = json_array();
	uint32_t i, id, n = 0;
	int r;

	if (m == NULL || v == NULL || w == NULL || a == NULL ||
	    labels_weights(ve, labels_runs(e, base_ns), w, &attributed) != 0)
		goto out;
	for (i = 0; i < ve->nsamples; i++) {
		if (!(w[i] > 0) ||
		    (r = labels_map_put(m, 0,
			 labels_site(e, &ve->samples[i], site, sizeof(site)),
			 &id)) < 0)
			continue;
		if (r == 1)
			v[n++].id = id;
		v[id].w += w[i];
	}
	qsort(v, n, sizeof(*v), api_site_cmp);
	for (i = 0; i < n && i < k; i++)
		json_array_append_new(a,
		    json_pack("{s:s, s:f, s:f}", "site",
			labels_map_key(m, v[i].id), "weight", v[i].w, "share",
			ve->wsum ? v[i].w / (double)ve->wsum : 0.0));
out:
	labels_map_free(m);
	free(v);
	free(w);
	return a;
}

/* The k exes of ve with the largest weight, with a comm each. */
static json_t *
api_top_exes_full(const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve, uint64_t base_ns, uint64_t k)
{
	struct labels_how how = { .by = LABELS_BY_EXE };
	struct labels l;
	json_t *a = json_array();
	uint32_t i;

	how.base_ns = labels_runs(e, base_ns);
	if (a == NULL || labels_collect(ve, &how, &l) != 0)
		return a;
	for (i = 0; i < l.n && i < k; i++)
		json_array_append_new(a,
		    json_pack("{s:s, s:s, s:f, s:f}", "exe", l.v[i].name,
			"comm", l.v[i].rep ? l.v[i].rep->comm : "", "weight",
			l.v[i].weight, "share",
			l.total > 0 ? l.v[i].weight / l.total : 0.0));
	labels_free(&l);
	return a;
}

/* GET /api/v1/top?vital=&from=&to=&host=&k= */
static int
api_ep_top(struct api_call *c, json_t **out)
{
	struct api_list hosts = { 0 }, wanted = { 0 };
	struct vitals_epoch *e = NULL;
	const struct vitals_vital_epoch *ve;
	uint64_t from, to, k;
	char err[1024] = "", clean[80];
	json_t *a;
	uint32_t i;
	int r, rc = -1;

	if (api_list(c, "host", &hosts) != 0 || api_list(c, "vital", &wanted) ||
	    api_range(c, &from, &to) != 0 ||
	    api_count(c, "k", 10, 1, 1000, &k) != 0)
		goto out;
	r = vitals_range_rollup(c->env->data_dir, from, to, hosts.v, hosts.n,
	    c->env->max_samples, &e, err, sizeof(err));
	if (r == -ENOENT) {
		api_fail(c, 404, NULL, "no store at %s", c->env->data_dir);
		goto out;
	}
	if (r != 0 && r != -ENODATA) {
		api_fail(c, 500, NULL, "%s", err[0] ? err : strerror(-r));
		goto out;
	}
	for (i = 0; e != NULL && i < wanted.n; i++)
		if (vitals_epoch_vital(e, wanted.v[i]) == NULL) {
			api_fail(c, 400, "vital", "no vital '%s' in the range",
			    api_clean(wanted.v[i], clean, sizeof(clean)));
			goto out;
		}
	*out = json_pack("{s:I, s:I, s:[]}", "from_ns", (json_int_t)from,
	    "to_ns", (json_int_t)to, "vitals");
	a = json_object_get(*out, "vitals");
	for (i = 0; a != NULL && e != NULL && i < e->nvitals; i++) {
		ve = &e->vitals[i];
		if (api_in(&wanted, ve->name))
			json_array_append_new(a,
			    json_pack("{s:s, s:s, s:I, s:o, "
				      "s:o}",
				"name", ve->name, "unit", ve->unit, "wsum",
				(json_int_t)ve->wsum, "exes",
				api_top_exes_full(e, ve, c->env->epoch_ns, k),
				"sites",
				api_top_sites(e, ve, c->env->epoch_ns, k)));
	}
	rc = 0;
out:
	vitals_epoch_free(e);
	free(hosts.buf);
	free(wanted.buf);
	return rc;
}

/* A user frame as `vitals show` writes it: "name (file+0xOFF)", "file+0xOFF". */
static json_t *
api_uframe(const struct vitals_epoch *e, uint64_t v, const char *name)
{
	int32_t id = VITALS_UFRAME_MODULE(v);
	const struct vitals_module *m;
	const char *base;
	char where[320], text[640];

	if (name != NULL && *name == '\0')
		name = NULL;
	if (id < 0) {
		snprintf(text, sizeof(text), "0x%" PRIx64 "%s%s", v,
		    name ? " " : "", name ? name : "");
		return json_string(text);
	}
	if ((m = vitals_epoch_module(e, (uint32_t)id)) != NULL) {
		base = strrchr(m->path, '/');
		snprintf(where, sizeof(where), "%s+0x%" PRIx64,
		    base != NULL ? base + 1 : m->path, VITALS_UFRAME_OFFSET(v));
	} else
		snprintf(where, sizeof(where),
		    "[module %" PRId32 "]+0x%" PRIx64, id,
		    VITALS_UFRAME_OFFSET(v));
	if (name == NULL)
		return json_string(where);
	snprintf(text, sizeof(text), "%s (%s)", name, where);
	return json_string(text);
}

/* A sample's kernel or user stack, innermost frame first. */
static json_t *
api_stack(
    const struct vitals_epoch *e, const struct vitals_sample *s, int kernel)
{
	json_t *a = json_array();
	const char *name;
	char hex[24];
	uint32_t i, n = kernel ? s->nkstack : s->nustack;

	for (i = 0; a != NULL && i < n; i++) {
		name = s->ksyms ? s->ksyms[kernel ? i : s->nkstack + i] : NULL;
		if (!kernel) {
			json_array_append_new(
			    a, api_uframe(e, s->ustack[i], name));
			continue;
		}
		/* Unnamed: by image and offset ("[kernel]+0x..", kaddr.h). */
		if ((name == NULL || *name == '\0') &&
		    VITALS_UFRAME_MODULE(s->kstack[i]) >= 0 &&
		    vitals_epoch_module(e,
			(uint32_t)VITALS_UFRAME_MODULE(s->kstack[i])) != NULL) {
			json_array_append_new(
			    a, api_uframe(e, s->kstack[i], NULL));
			continue;
		}
		if (name == NULL || *name == '\0') {
			snprintf(
			    hex, sizeof(hex), "0x%016" PRIx64, s->kstack[i]);
			name = hex;
		}
		json_array_append_new(a, json_string(name));
	}
	return a;
}

static json_t *
api_sample(const struct vitals_epoch *e, const char *vital,
    const struct vitals_sample *s)
{
	char label[24];

	snprintf(label, sizeof(label), "0x%" PRIx64, s->label);
	return json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:s, s:I, s:I, "
			 "s:I, s:I, s:o, s:o}",
	    "vital", vital, "ts_ns", (json_int_t)s->ts_ns, "exe",
	    s->exe ? s->exe : "", "comm", s->comm ? s->comm : "", "pid",
	    (json_int_t)s->pid, "tid", (json_int_t)s->tid, "uid",
	    (json_int_t)s->uid, "label", label, "slot", (json_int_t)s->slot,
	    "count", (json_int_t)s->count, "weight", (json_int_t)s->weight,
	    "op", (json_int_t)s->op, "kstack", api_stack(e, s, 1), "ustack",
	    api_stack(e, s, 0));
}

/* GET /api/v1/samples?epoch=ID&vital=&host=&slot=&limit= */
static int
api_ep_samples(struct api_call *c, json_t **out)
{
	const char *vital = api_get(c, "vital"), *host = api_get(c, "host");
	const struct vitals_vital_epoch *ve;
	struct vitals_epoch *e;
	uint64_t id, slot, limit, n = 0;
	char idtext[24], clean[80];
	json_t *a;
	uint32_t i, j;

	if ((host != NULL && !api_word(host)) ||
	    (vital != NULL && !api_word(vital)))
		return api_fail(c, 400,
		    host && !api_word(host) ? "host" : "vital",
		    "one name is expected");
	if (api_epoch_id(c, "epoch", api_get(c, "epoch"), &id) != 0 ||
	    api_count(c, "slot", UINT64_MAX, 0, UINT32_MAX, &slot) != 0 ||
	    api_count(c, "limit", 500, 1, 100000, &limit) != 0 ||
	    api_find_epoch(c, id, host, &e) != 0)
		return -1;
	if (vital != NULL && vitals_epoch_vital(e, vital) == NULL) {
		vitals_epoch_free(e);
		return api_fail(c, 400, "vital",
		    "no vital '%s' in epoch %" PRIu64,
		    api_clean(vital, clean, sizeof(clean)), id);
	}
	snprintf(idtext, sizeof(idtext), "%" PRIu64, id);
	*out = json_pack(
	    "{s:s, s:s, s:[]}", "epoch", idtext, "host", e->host, "samples");
	a = json_object_get(*out, "samples");
	for (i = 0; a != NULL && i < e->nvitals; i++) {
		ve = &e->vitals[i];
		if (vital != NULL && strcmp(vital, ve->name) != 0)
			continue;
		for (j = 0; j < ve->nsamples && n < limit; j++)
			if (slot == UINT64_MAX || ve->samples[j].slot == slot) {
				json_array_append_new(a,
				    api_sample(e, ve->name, &ve->samples[j]));
				n++;
			}
	}
	vitals_epoch_free(e);
	return 0;
}

static json_t *
api_num(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

/* A finding in the answer's form. */
static json_t *
api_finding(const struct vitals_finding *f, const char *host)
{
	return json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:I, s:I, s:i, s:o, "
			 "s:o, s:o, s:s}",
	    "filter", f->filter ? f->filter : "", "severity",
	    api_severity_name(f->severity), "vital", f->vital, "label",
	    f->label, "host", host, "start_ns", (json_int_t)f->start_ns,
	    "end_ns", (json_int_t)f->end_ns, "timescale_s", (int)f->timescale_s,
	    "score", api_num(f->score), "value", api_num(f->value), "expected",
	    api_num(f->expected), "text", f->text ? f->text : "");
}

/* GET /api/v1/findings?from=&to=&severity=&host=&timescale= */
static int
api_ep_findings(struct api_call *c, json_t **out)
{
	struct vitals_agg_result *r;
	struct api_list hosts;
	uint64_t from, to;
	uint32_t ts, sev;
	json_t *a;
	size_t i;

	if (api_list(c, "host", &hosts) != 0 || api_range(c, &from, &to) != 0 ||
	    api_timescale(c, &ts) != 0 || api_severity(c, &sev) != 0 ||
	    api_query(c, from, to, ts, &hosts, &r) != 0) {
		free(hosts.buf);
		return -1;
	}
	*out = json_pack("{s:[]}", "findings");
	a = json_object_get(*out, "findings");
	for (i = 0; a != NULL && i < r->nfindings; i++)
		if (r->findings[i].f.severity >= sev)
			json_array_append_new(a,
			    api_finding(
				&r->findings[i].f, r->findings[i].host));
	vitals_agg_result_free(r);
	free(hosts.buf);
	return 0;
}

/* GET /api/v1/time?t= */
static int
api_ep_time(struct api_call *c, json_t **out)
{
	const char *t = api_get(c, "t");
	uint64_t ns;

	if (t == NULL)
		return api_fail(c, 400, "t", "t: a time is needed");
	if (api_time(c, "t", t, &ns) != 0)
		return -1;
	*out = json_pack("{s:s, s:I}", "t", t, "ns", (json_int_t)ns);
	return 0;
}

/* ---- profiles: flame, diff, pprof ---- */

/*
 * The profile of one vital (param vital, default cpu) over [from, to) of
 * the hosts, of the exe given (NULL: all), into *out.  0, or -1 with the
 * error answer written.
 */
static int
api_profile(struct api_call *c, const char *vital, uint64_t from, uint64_t to,
    const struct api_list *hosts, const char *exe, struct vitals_profile **out)
{
	struct vitals_profile *p;
	char err[1024] = "";
	int r;

	if ((p = vitals_profile_new(vital, exe)) == NULL)
		return api_fail(c, 500, NULL, "out of memory");
	r = vitals_profile_range(p, c->env->data_dir, from, to, hosts->v,
	    hosts->n, err, sizeof(err));
	if (r == -ENOENT) {
		vitals_profile_free(p);
		return api_fail(
		    c, 404, NULL, "no store at %s", c->env->data_dir);
	}
	if (r != 0 && r != -ENODATA) {
		vitals_profile_free(p);
		return api_fail(
		    c, 500, NULL, "%s", err[0] ? err : strerror(-r));
	}
	*out = p;
	return 0;
}

/* The vital parameter (one name, default cpu) into *v; 0 or -1. */
static int
api_one_vital(struct api_call *c, const char **v)
{
	*v = api_get(c, "vital");
	if (*v == NULL)
		*v = "cpu";
	if (!api_word(*v))
		return api_fail(
		    c, 400, "vital", "vital: one vital name expected");
	return 0;
}

/* The tree of p (against base, or NULL) as JSON; NULL out of memory. */
static json_t *
api_tree(const struct vitals_profile *p, const struct vitals_profile *base)
{
	json_t *t = NULL;
	char *text;
	size_t len;

	if (vitals_profile_json(p, base, &text, &len) != 0)
		return NULL;
	t = json_loadb(text, len, 0, NULL);
	free(text);
	return t;
}

/* GET /api/v1/flame?vital=&from=&to=&host=&exe= */
static int
api_ep_flame(struct api_call *c, json_t **out)
{
	struct api_list hosts = { 0 };
	struct vitals_profile *p = NULL;
	const struct vitals_profile_stats *st;
	const char *vital, *exe = api_get(c, "exe");
	uint64_t from, to;
	json_t *tree;
	int rc = -1;

	if (api_list(c, "host", &hosts) != 0 || api_one_vital(c, &vital) != 0 ||
	    api_range(c, &from, &to) != 0 ||
	    api_profile(c, vital, from, to, &hosts, exe, &p) != 0)
		goto out;
	st = vitals_profile_stats(p);
	if ((tree = api_tree(p, NULL)) == NULL) {
		rc = api_fail(c, 500, NULL, "out of memory");
		goto out;
	}
	*out = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "vital", vital,
	    "unit", st->unit, "from_ns", (json_int_t)from, "to_ns",
	    (json_int_t)to, "samples", (json_int_t)st->samples, "tree", tree);
	rc = *out == NULL ? api_fail(c, 500, NULL, "out of memory") : 0;
out:
	vitals_profile_free(p);
	free(hosts.buf);
	return rc;
}

/* A diff filter's finding, appended to the JSON array arg. */
static void
api_diff_finding(void *arg, const struct vitals_finding *f, const char *host)
{
	json_array_append_new(arg, api_finding(f, host));
}

/* Asked for, a comparison explains every change over min_change. */
static const char *const api_diff_keys[] = { "min_info" };
static const char *const api_diff_values[] = { "0" };

/*
 * The diff filter's findings on {A, B} rolled up, into the array a: none
 * when a range has no epoch or the filter is not installed (said in
 * *note).
 */
static void
api_diff_findings(struct api_call *c, const uint64_t r[4],
    const struct api_list *hosts, json_t *a, const char **note)
{
	struct vitals_filter_sink sink = { api_diff_finding, NULL, a };
	struct vitals_epoch *ea = NULL, *eb = NULL;
	const struct vitals_epoch *q[2];
	char err[1024];

	if (vitals_range_rollup(c->env->data_dir, r[0], r[1], hosts->v,
		hosts->n, c->env->max_samples, &ea, err, sizeof(err)) != 0 ||
	    vitals_range_rollup(c->env->data_dir, r[2], r[3], hosts->v,
		hosts->n, c->env->max_samples, &eb, err, sizeof(err)) != 0) {
		*note = "a range has no epoch";
		goto out;
	}
	q[0] = ea;
	q[1] = eb;
	if (vitals_filter_once(c->env->config, c->env->data_dir, "diff",
		api_diff_keys, api_diff_values, 1, q, 2, &sink, err,
		sizeof(err)) != 0)
		*note = "the diff filter did not run (is it installed?)";
out:
	vitals_epoch_free(ea);
	vitals_epoch_free(eb);
}

/* Range parameter name (a or b) into r[0..1]; 0 or -1. */
static int
api_ab(struct api_call *c, const char *name, uint64_t *r)
{
	const char *s = api_get(c, name);
	char clean[80];
	int e;

	if (s == NULL)
		return api_fail(
		    c, 400, name, "%s: a range FROM..TO is needed", name);
	if ((e = vitals_range_parse(s, c->now, &r[0], &r[1])) != 0)
		return api_fail(c, 400, name, "%s: bad range '%s': %s", name,
		    api_clean(s, clean, sizeof(clean)),
		    e == -EDOM ? "it ends before it starts"
			       : "expected FROM..TO (-2h..-1h, "
				 "2026-11-22T10:00..2026-11-22T11:00)");
	return api_span(c, name, name, r[0], r[1]);
}

/* GET /api/v1/diff?a=FROM..TO&b=FROM..TO&vital=&host= */
static int
api_ep_diff(struct api_call *c, json_t **out)
{
	struct api_list hosts = { 0 };
	struct vitals_profile *pa = NULL, *pb = NULL;
	const char *vital, *note = NULL;
	uint64_t r[4];
	json_t *tree, *fs;
	int rc = -1;

	if (api_list(c, "host", &hosts) != 0 || api_one_vital(c, &vital) != 0 ||
	    api_ab(c, "a", r) != 0 || api_ab(c, "b", r + 2) != 0 ||
	    api_profile(c, vital, r[0], r[1], &hosts, NULL, &pa) != 0 ||
	    api_profile(c, vital, r[2], r[3], &hosts, NULL, &pb) != 0)
		goto out;
	if ((fs = json_array()) == NULL || (tree = api_tree(pb, pa)) == NULL) {
		json_decref(fs);
		rc = api_fail(c, 500, NULL, "out of memory");
		goto out;
	}
	api_diff_findings(c, r, &hosts, fs, &note);
	*out = json_pack("{s:{s:I, s:I}, s:{s:I, s:I}, s:s, s:s, s:o, s:o}",
	    "a", "from_ns", (json_int_t)r[0], "to_ns", (json_int_t)r[1], "b",
	    "from_ns", (json_int_t)r[2], "to_ns", (json_int_t)r[3], "vital",
	    vital, "unit", vitals_profile_stats(pb)->unit, "findings", fs,
	    "tree", tree);
	if (*out != NULL && note != NULL)
		json_object_set_new(*out, "note", json_string(note));
	rc = *out == NULL ? api_fail(c, 500, NULL, "out of memory") : 0;
out:
	vitals_profile_free(pa);
	vitals_profile_free(pb);
	free(hosts.buf);
	return rc;
}

/* GET /api/v1/pprof?vital=&from=&to=&host=&exe= (a gzip'd profile.proto) */
static int
api_ep_pprof(struct api_call *c, json_t **out)
{
	struct api_list hosts = { 0 };
	struct vitals_profile *p = NULL;
	const char *vital;
	uint64_t from, to;
	int rc = -1;

	(void)out;
	if (api_list(c, "host", &hosts) != 0 || api_one_vital(c, &vital) != 0 ||
	    api_range(c, &from, &to) != 0 ||
	    api_profile(c, vital, from, to, &hosts, api_get(c, "exe"), &p) != 0)
		goto out;
	if (vitals_profile_pprof(p, &c->ans->body, &c->ans->len) != 0) {
		rc = api_fail(c, 500, NULL, "the profile could not be written");
		goto out;
	}
	c->ans->status = 200;
	c->ans->type = "application/octet-stream";
	rc = 1;
out:
	vitals_profile_free(p);
	free(hosts.buf);
	return rc;
}

/* ---- central collection: the files a central pulls (doc/fleet.md) ---- */

/* Files in one /files answer, by default and at most. */
#define API_FILES_DEFAULT 100
#define API_FILES_MAX 1000
/*
 * A file changed this recently is not listed yet (nor any after it):
 * vitalsd rewrites an epoch's file once its filters added findings, just
 * after the epoch closed, and a central should take the final one.
 */
#define API_FILES_SETTLE_NS (2 * API_NS)

/* Whether the file at path is settled (stat fails: it is listed anyway). */
static int
api_settled(const char *path, uint64_t now, uint64_t *bytes)
{
	struct stat st;
	uint64_t m;

	*bytes = 0;
	if (stat(path, &st) != 0)
		return 1;
	*bytes = (uint64_t)st.st_size;
	m = (uint64_t)st.st_mtim.tv_sec * API_NS + (uint64_t)st.st_mtim.tv_nsec;
	return m + API_FILES_SETTLE_NS <= now;
}

/* GET /api/v1/files?since=CURSOR&host=&limit= */
static int
api_ep_files(struct api_call *c, json_t **out)
{
	const char *since = api_get(c, "since"), *host = api_get(c, "host");
	struct vitals_store_list l;
	const char *name;
	json_t *files;
	uint64_t limit, bytes;
	size_t i;
	int r, more = 0;

	if (host != NULL && !api_word(host))
		return api_fail(c, 400, "host", "host: one host name");
	if (since != NULL && vitals_store_name_parse(since, NULL) != 0)
		return api_fail(c, 400, "since",
		    "since: expected the name of "
		    "an epoch file, as a listing gives it");
	if (api_count(
		c, "limit", API_FILES_DEFAULT, 1, API_FILES_MAX, &limit) != 0)
		return -1;
	/* One more than asked says whether more follow. */
	r = vitals_store_list_after(
	    c->env->data_dir, since, host, (size_t)limit + 1, &l);
	if (r == -ENOENT || r == -ENOTDIR)
		memset(&l, 0, sizeof(l));
	else if (r != 0)
		return api_fail(c, 500, NULL, "cannot list %s: %s",
		    c->env->data_dir, strerror(-r));
	if ((*out = json_pack("{s:[]}", "files")) == NULL) {
		vitals_store_list_free(&l);
		return api_fail(c, 500, NULL, "out of memory");
	}
	files = json_object_get(*out, "files");
	for (i = 0; i < l.n; i++) {
		/*
		 * more: files listable now follow (the limit cut the answer).
		 * A file still settling is not: said so, a central would ask
		 * again at once, over and over until it settles.
		 */
		if (i == limit) {
			more = 1;
			break;
		}
		if (!api_settled(l.v[i].path, c->now, &bytes))
			break;
		name = strrchr(l.v[i].path, '/') + 1;
		json_array_append_new(files,
		    json_pack("{s:s, s:s, s:I, s:I}", "name", name, "host",
			l.v[i].host, "start_ns", (json_int_t)l.v[i].start_ns,
			"bytes", (json_int_t)bytes));
	}
	json_object_set_new(*out, "more", json_boolean(more));
	vitals_store_list_free(&l);
	return 0;
}

/* GET /api/v1/file/NAME: the epoch file's bytes as stored (gzip'd JSON). */
static int
api_ep_file(struct api_call *c, json_t **out)
{
	struct vitals_store_list l;
	struct vitals_epoch_file f;
	const char *path = NULL;
	char err[512];
	uint64_t start;
	size_t i;
	int r;

	(void)out;
	if (vitals_store_name_parse(c->arg, &start) != 0)
		return api_fail(c, 400, "name",
		    "name: expected the name of an "
		    "epoch file, as /api/v1/files lists it");
	/* The file opened is one the store lists, never the request's path. */
	r = vitals_store_list_since(c->env->data_dir, start, &l);
	if (r != 0 && r != -ENOENT && r != -ENOTDIR)
		return api_fail(c, 500, NULL, "cannot list %s: %s",
		    c->env->data_dir, strerror(-r));
	for (i = 0; r == 0 && i < l.n && path == NULL; i++)
		if (strcmp(strrchr(l.v[i].path, '/') + 1, c->arg) == 0)
			path = l.v[i].path;
	if (path == NULL) {
		vitals_store_list_free(&l);
		return api_fail(c, 404, NULL, "no such epoch file");
	}
	r = vitals_epoch_file_load(
	    path, c->env->max_response, &f, err, sizeof(err));
	vitals_store_list_free(&l);
	if (r == -EFBIG)
		return api_too_large(c->ans, NULL, c->env->max_response,
		    "the file is larger than max_response");
	if (r != 0)
		return api_fail(c, r == -ENOENT ? 404 : 500, NULL,
		    "the epoch file cannot be read");
	c->ans->status = 200;
	c->ans->type = "application/gzip";
	c->ans->body = (char *)f.data;
	c->ans->len = f.len;
	f.data = NULL;
	vitals_epoch_file_free(&f);
	return 1;
}

/* GET /api/v1/nodes: the nodes a central pulls from (the remote output). */
static int
api_ep_nodes(struct api_call *c, json_t **out)
{
	struct vitals_node_list l;
	const struct vitals_node *n;
	json_t *a, *o;
	size_t i;

	if (vitals_nodes_load(c->env->data_dir, &l) != 0)
		return api_fail(c, 500, NULL, "cannot read the nodes' state");
	if ((*out = json_pack("{s:[]}", "nodes")) == NULL) {
		vitals_node_list_free(&l);
		return api_fail(c, 500, NULL, "out of memory");
	}
	a = json_object_get(*out, "nodes");
	for (i = 0; i < l.n; i++) {
		n = &l.v[i];
		o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "key",
		    n->key, "url", n->url, "last_start_ns",
		    (json_int_t)n->last_start_ns, "last_end_ns",
		    (json_int_t)n->last_end_ns, "last_ok_ns",
		    (json_int_t)n->last_ok_ns, "pulled", (json_int_t)n->pulled,
		    "errors", (json_int_t)n->errors, "refused",
		    (json_int_t)n->refused);
		if (o == NULL)
			continue;
		json_object_set_new(o, "host",
		    n->host != NULL ? json_string(n->host) : json_null());
		json_object_set_new(o, "cursor",
		    n->cursor != NULL ? json_string(n->cursor) : json_null());
		if (n->last_end_ns != 0)
			json_object_set_new(o, "lag_s",
			    json_real(c->now > n->last_end_ns
				    ? (double)(c->now - n->last_end_ns) / API_NS
				    : 0.0));
		if (n->last_error != NULL) {
			json_object_set_new(
			    o, "last_error", json_string(n->last_error));
			json_object_set_new(o, "last_error_ns",
			    json_integer((json_int_t)n->last_error_ns));
		}
		json_array_append_new(a, o);
	}
	vitals_node_list_free(&l);
	return 0;
}

/* ---- routing ---- */

static const struct api_route api_routes[] = {
	{ "hosts", api_ep_hosts, { NULL }, NULL },
	{ "vitals", api_ep_vitals, { "from", "to", "host", NULL }, "from" },
	{ "epochs", api_ep_epochs, { "from", "to", "host", "limit", NULL },
	    "limit" },
	{ "epoch/", api_ep_epoch, { "host", NULL }, NULL },
	{ "series", api_ep_series,
	    { "vital", "from", "to", "timescale", "host", "top", NULL },
	    "from" },
	{ "top", api_ep_top, { "vital", "from", "to", "host", "k", NULL },
	    "k" },
	{ "fleet", api_ep_fleet,
	    { "vital", "from", "to", "timescale", "host", NULL }, "from" },
	{ "samples", api_ep_samples,
	    { "epoch", "vital", "host", "slot", "limit", NULL }, "limit" },
	{ "findings", api_ep_findings,
	    { "from", "to", "severity", "host", "timescale", NULL }, "from" },
	{ "time", api_ep_time, { "t", NULL }, NULL },
	{ "flame", api_ep_flame, { "vital", "from", "to", "host", "exe", NULL },
	    "from" },
	{ "diff", api_ep_diff, { "a", "b", "vital", "host", NULL }, "a" },
	{ "pprof", api_ep_pprof, { "vital", "from", "to", "host", "exe", NULL },
	    "from" },
	{ "files", api_ep_files, { "since", "host", "limit", NULL }, "limit" },
	{ "file/", api_ep_file, { NULL }, NULL },
	{ "nodes", api_ep_nodes, { NULL }, NULL },
};

#define API_PREFIX "/api/v1/"

int
api_is_api(const char *path)
{
	return strncmp(path, "/api/", 5) == 0 || strcmp(path, "/api") == 0;
}

int
api_is_quick(const char *path)
{
	return strcmp(path, API_PREFIX "time") == 0;
}

/* The route of path (after the prefix), and the rest of it in *arg. */
static const struct api_route *
api_route(const char *name, const char **arg)
{
	size_t i, n;

	for (i = 0; i < sizeof(api_routes) / sizeof(api_routes[0]); i++) {
		n = strlen(api_routes[i].name);
		if (api_routes[i].name[n - 1] == '/'
			? strncmp(name, api_routes[i].name, n) == 0
			: strcmp(name, api_routes[i].name) == 0) {
			*arg = name + n;
			return &api_routes[i];
		}
	}
	return NULL;
}

/* A 413 instead of an answer larger than max_response. */
static void
api_limit(struct api_call *c, const struct api_route *rt)
{
	char msg[128];

	if (c->ans->len <= c->env->max_response)
		return;
	api_answer_free(c->ans);
	snprintf(msg, sizeof(msg),
	    "the answer is larger than max_response "
	    "(%" PRIu64 " bytes): ask for less",
	    c->env->max_response);
	api_too_large(c->ans, rt->size_param, c->env->max_response, msg);
}

/* The handler's JSON (consumed) as the answer, unless it is too large. */
static void
api_finish(struct api_call *c, const struct api_route *rt, json_t *j)
{
	api_json(c->ans, 200, j);
	if (c->ans->body == NULL) {
		api_error(c->ans, 500, NULL, "out of memory");
		return;
	}
	api_limit(c, rt);
}

void
api_answer(const struct api_env *env, const char *path, const char *query,
    uint64_t now_ns, struct api_answer *out)
{
	struct api_call c;
	const struct api_route *rt;
	json_t *j = NULL;
	char *keep = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.env = env;
	c.now = now_ns;
	c.ans = out;
	if (strncmp(path, API_PREFIX, strlen(API_PREFIX)) != 0 ||
	    (rt = api_route(path + strlen(API_PREFIX), &c.arg)) == NULL) {
		api_error(out, 404, NULL, "no such endpoint (see doc/api.md)");
		return;
	}
	if (api_params(&c, rt, query, &keep) == 0) {
		/* 0: its JSON in j; 1: it wrote the answer; -1: an error. */
		if ((r = rt->fn(&c, &j)) == 0)
			api_finish(&c, rt, j);
		else if (r > 0)
			api_limit(&c, rt);
	}
	free(keep);
}
