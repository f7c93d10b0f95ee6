/* SPDX-License-Identifier: MIT */
/*
 * The `vitals` commands over time ranges: query (per-slot totals, findings
 * and series at each timescale, through the cached aggregator), findings,
 * top (heaviest labels and exes), diff (two ranges through the diff
 * filter) and train (a filter's model from a normal range).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "args.h"
#include "config.h"
#include "loader.h"
#include "log.h"
#include "option.h"
#include "handrun.h"
#include "range.h"
#include "rollup.h"

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define QCLI_DATA_DIR LOCALSTATEDIR "/lib/vitals"
#define QCLI_CONFIG SYSCONFDIR "/vitals/vitals.yaml"

#define QCLI_OK 0
#define QCLI_RUNTIME 1
#define QCLI_USAGE 2
#define QCLI_NS 1000000000ull
#define QCLI_MAX_LIST 32
/* Epochs to read before a progress bar is worth showing. */
#define QCLI_PROGRESS_MIN 50

const char range_usage[] =
    "  query [--from T] [--to T] [--timescale TS]... [--vital V]\n"
    "        [--filter NAME]... [--host H]... [--json] [--no-cache]\n"
    "      per-slot totals (events, weighted sum per vital), findings and\n"
    "      series of the configured filters at each timescale (default:\n"
    "      the last hour, the base and every timescale no longer than it)\n"
    "  findings [--from T] [--to T] [--severity info|warn|crit] [--stored]\n"
    "      findings of the range (default: the last 24 hours); --stored:\n"
    "      those vitalsd wrote into the epochs\n"
    "  top [--vital V] [--from T] [--to T] [-k N] [--no-filter] [--json]\n"
    "      heaviest labels and exes of the range (the topk filter if\n"
    "      installed, else from the samples; default the last hour)\n"
    "  diff RANGE_A RANGE_B [--json]\n"
    "      what changed from A to B, through the diff filter\n"
    "  train NAME --normal RANGE --model PATH\n"
    "      train filter NAME (e.g. callmodel) on RANGE, writing PATH\n"
    "  Times: 2026-11-22T10:00[:SS][Z|+01:00], 2026-11-22, now, -30m, -2h,\n"
    "  -1d, @UNIXSECONDS; local time unless a zone is given.  RANGE is\n"
    "  FROM..TO.  Timescales: base, or a duration (5m, 1h, 1d).\n";

/* Everything a command was given, and what it resolved. */
struct qcli {
	unsigned cmd; /* CLI_* (cli/args.h) */
	const char *cmdname;
	const char *data_dir_opt;
	const char *config_opt;
	const char *data_dir; /* resolved */
	const char *config; /* config file used, or NULL */
	struct config *cfg; /* loaded from config, or defaults */
	int json, no_cache, stored, direct;
	const char *from_s, *to_s;
	uint64_t from, to, now;
	const char *vital;
	uint32_t nts;
	uint32_t ts[QCLI_MAX_LIST];
	uint32_t nfilters;
	const char *filters[QCLI_MAX_LIST];
	uint32_t nhosts;
	const char *hosts[QCLI_MAX_LIST];
	uint32_t severity;
	size_t k;
	int npos;
	const char *pos[2];
	const char *normal, *model, *cache_dir;
	int bar; /* a progress bar is on screen */
	unsigned bar_last; /* its last percentage */
};

static void range_msg(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int range_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
range_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A bad argument: the message and the usage; returns QCLI_USAGE. */
static int
range_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr,
	    "usage: vitals [--data-dir DIR] [-c CONFIG] COMMAND\n%s",
	    range_usage);
	return QCLI_USAGE;
}

/* ---- times ---- */

static uint64_t
range_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * QCLI_NS + (uint64_t)ts.tv_nsec;
}

static int
range_bad_time(const char *what, const char *s)
{
	range_msg(
	    "%s: bad time '%s': expected ISO-8601 (2026-11-22T10:00, "
	    "optionally with seconds and Z or +01:00), a date (2026-11-22), "
	    "now, a time before now (-30m, -2h, -1d) or @UNIXSECONDS, "
	    "between 1970 and 2554",
	    what, s);
	return QCLI_USAGE;
}

/* "FROM..TO" into [*from, *to). */
static int
range_range(const char *s, uint64_t now, uint64_t *from, uint64_t *to)
{
	const char *dots = strstr(s, "..");
	char a[128];

	if (dots == NULL || (size_t)(dots - s) >= sizeof(a)) {
		range_msg("bad range '%s': expected FROM..TO (e.g. "
			 "2026-11-22T10:00..2026-11-22T11:00 or -2h..-1h)",
		    s);
		return QCLI_USAGE;
	}
	memcpy(a, s, (size_t)(dots - s));
	a[dots - s] = '\0';
	if (vitals_time_parse(a, now, from) != 0)
		return range_bad_time("range start", a);
	if (vitals_time_parse(dots + 2, now, to) != 0)
		return range_bad_time("range end", dots + 2);
	if (*to <= *from) {
		range_msg("bad range '%s': it ends before it starts", s);
		return QCLI_USAGE;
	}
	return QCLI_OK;
}

/* A timescale argument: "base", or durations like 5m (comma lists too). */
static int
range_timescales(struct qcli *c, const char *arg)
{
	char buf[256], *tok, *save = NULL;
	uint64_t ns;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->nts == QCLI_MAX_LIST)
			return range_usage_error("too many timescales");
		if (strcmp(tok, "base") == 0) {
			c->ts[c->nts++] = 0;
			continue;
		}
		if (option_parse_duration(tok, &ns) != 0 || ns < QCLI_NS ||
		    ns % QCLI_NS != 0 || ns / QCLI_NS > UINT32_MAX)
			return range_usage_error(
			    "bad timescale '%s': expected "
			    "base or whole seconds (5m, 1h, 1d)",
			    tok);
		c->ts[c->nts++] = (uint32_t)(ns / QCLI_NS);
	}
	return QCLI_OK;
}

/* ---- formatting ---- */

static void
range_fmt_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / QCLI_NS);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "@%" PRIu64, (uint64_t)(ns / QCLI_NS));
}

/* "base", "5m", "1h", "1d", "90s". */
static void
range_fmt_ts(uint32_t ts, int base, char *buf, size_t len)
{
	if (base)
		snprintf(buf, len, "base");
	else if (ts % 86400 == 0)
		snprintf(buf, len, "%ud", ts / 86400);
	else if (ts % 3600 == 0)
		snprintf(buf, len, "%uh", ts / 3600);
	else if (ts % 60 == 0)
		snprintf(buf, len, "%um", ts / 60);
	else
		snprintf(buf, len, "%us", ts);
}

static const char *
range_severity_name(uint32_t s)
{
	return s == VITALS_SEV_CRIT ? "crit"
	    : s == VITALS_SEV_WARN  ? "warn"
	    : s == VITALS_SEV_INFO  ? "info"
				    : "?";
}

static const char *
range_dash(const char *s)
{
	return s != NULL && *s != '\0' ? s : "-";
}

static json_t *
range_jnum(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

/* ---- arguments ---- */

static int
range_count(const char *opt, const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v == 0 ||
	    v > 100000)
		return range_usage_error(
		    "%s: expected a count from 1 to 100000, "
		    "got '%s'",
		    opt, s);
	*out = (size_t)v;
	return QCLI_OK;
}

static int
range_severity(struct qcli *c, const char *s)
{
	if (strcmp(s, "info") == 0)
		c->severity = VITALS_SEV_INFO;
	else if (strcmp(s, "warn") == 0 || strcmp(s, "warning") == 0)
		c->severity = VITALS_SEV_WARN;
	else if (strcmp(s, "crit") == 0 || strcmp(s, "critical") == 0)
		c->severity = VITALS_SEV_CRIT;
	else
		return range_usage_error("--severity: expected info, warn or "
					"crit, got '%s'",
		    s);
	return QCLI_OK;
}

static int
range_push(const char **v, uint32_t *n, const char *s, const char *what)
{
	if (*n == QCLI_MAX_LIST)
		return range_usage_error("too many %s", what);
	v[(*n)++] = s;
	return QCLI_OK;
}

/* Apply option id with value val. */
static int
range_apply(struct qcli *c, int id, const char *val)
{
	switch (id) {
	case CO_DATA_DIR:
		c->data_dir_opt = val;
		break;
	case CO_CONFIG:
		c->config_opt = val;
		break;
	case CO_JSON:
		c->json = 1;
		break;
	case CO_FROM:
		c->from_s = val;
		break;
	case CO_TO:
		c->to_s = val;
		break;
	case CO_TIMESCALE:
		return range_timescales(c, val);
	case CO_VITAL:
		c->vital = val;
		break;
	case CO_FILTER:
		return range_push(c->filters, &c->nfilters, val, "filters");
	case CO_HOST:
		return range_push(c->hosts, &c->nhosts, val, "hosts");
	case CO_NO_CACHE:
		c->no_cache = 1;
		break;
	case CO_CACHE_DIR:
		c->cache_dir = val;
		break;
	case CO_SEVERITY:
		return range_severity(c, val);
	case CO_STORED:
		c->stored = 1;
		break;
	case CO_K:
		return range_count(cli_opt_name(id), val, &c->k);
	case CO_NO_FILTER:
		c->direct = 1;
		break;
	case CO_NORMAL:
		c->normal = val;
		break;
	case CO_MODEL:
		c->model = val;
		break;
	}
	return QCLI_OK;
}

/* A word that is not an option: a relative time like -2h..-1h is one. */
static int
range_positional(struct qcli *c, const char *s)
{
	if (c->npos == 2 || (c->cmd & (CLI_DIFF | CLI_TRAIN)) == 0)
		return range_usage_error(
		    "%s: unexpected argument '%s'", c->cmdname, s);
	c->pos[c->npos++] = s;
	return QCLI_OK;
}

/* Parse argv; QCLI_OK, QCLI_USAGE, or -1 after printing the help. */
static int
range_args(struct qcli *c, int argc, char **argv)
{
	struct cli_args a;
	const char *val;
	int id, rc;

	cli_args_init(&a, argc, argv, 0, c->cmd);
	while ((id = cli_next(&a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return range_usage_error("%s: %s", c->cmdname, a.err);
		if (id == CO_HELP) {
			printf("usage: vitals [--data-dir DIR] [-c CONFIG] "
			       "COMMAND\n%s",
			    range_usage);
			return -1;
		}
		rc = id == CLI_POS ? range_positional(c, val) :
		    range_apply(c, id, val);
		if (rc != QCLI_OK)
			return rc;
	}
	return QCLI_OK;
}

/* --from/--to, defaulting to the last `span` before now. */
static int
range_window(struct qcli *c, uint64_t span)
{
	c->to = c->now;
	if (c->to_s != NULL && vitals_time_parse(c->to_s, c->now, &c->to) != 0)
		return range_bad_time("--to", c->to_s);
	c->from = c->to > span ? c->to - span : 0;
	if (c->from_s != NULL && vitals_time_parse(c->from_s, c->now, &c->from) != 0)
		return range_bad_time("--from", c->from_s);
	if (c->to <= c->from) {
		range_msg("empty range: --to (%s) is not after --from (%s)",
		    c->to_s ? c->to_s : "now",
		    c->from_s ? c->from_s : "default");
		return QCLI_USAGE;
	}
	return QCLI_OK;
}

/*
 * The configuration (-c, else the installed one if present, else
 * defaults) and the store: --data-dir, -c's data_dir, $VITALS_DATA_DIR,
 * the installed configuration's data_dir, then the built-in default.
 */
static int
range_setup(struct qcli *c)
{
	const char *env = getenv("VITALS_DATA_DIR");
	struct stat st;
	char err[1024];
	int r;

	c->config = c->config_opt;
	if (c->config == NULL && stat(QCLI_CONFIG, &st) == 0)
		c->config = QCLI_CONFIG;
	if (c->config != NULL) {
		if ((r = config_load(c->config, &c->cfg, err, sizeof(err))) !=
		    0) {
			range_msg("%s", err);
			return r == -ENOENT ? QCLI_RUNTIME : QCLI_USAGE;
		}
	} else if ((c->cfg = config_default()) == NULL) {
		range_msg("out of memory");
		return QCLI_RUNTIME;
	}
	if (c->data_dir_opt != NULL)
		c->data_dir = c->data_dir_opt;
	else if (c->config_opt != NULL || env == NULL || *env == '\0')
		c->data_dir =
		    c->config != NULL ? c->cfg->data_dir : QCLI_DATA_DIR;
	else
		c->data_dir = env;
	return QCLI_OK;
}

/* ---- progress ---- */

static void
range_progress(void *arg, uint64_t done, uint64_t total)
{
	struct qcli *c = arg;
	unsigned pct, i, width = 30;

	if (total < QCLI_PROGRESS_MIN || !isatty(STDERR_FILENO))
		return;
	pct = (unsigned)(100 * done / total);
	if (c->bar && pct == c->bar_last && done < total)
		return;
	c->bar = 1;
	c->bar_last = pct;
	fputs("\rvitals: reading epochs [", stderr);
	for (i = 0; i < width; i++)
		fputc(i < width * done / total ? '#' : '.', stderr);
	fprintf(stderr, "] %3u%% %" PRIu64 "/%" PRIu64, pct, done, total);
	fflush(stderr);
}

static void
range_progress_end(struct qcli *c)
{
	if (c->bar)
		fputs("\r\033[K", stderr);
	c->bar = 0;
}

/* ---- query and findings ---- */

static int
range_aggregate(struct qcli *c, struct vitals_agg_result **res)
{
	struct vitals_agg_params p;
	char err[2048];
	int r;

	memset(&p, 0, sizeof(p));
	p.data_dir = c->data_dir;
	p.config = c->config;
	p.from_ns = c->from;
	p.to_ns = c->to;
	p.ntimescales = c->nts;
	p.timescales = c->ts;
	p.nfilters = c->nfilters;
	p.filters = c->filters;
	p.nhosts = c->nhosts;
	p.hosts = c->hosts;
	p.flags = c->no_cache ? VITALS_AGG_NO_CACHE : 0;
	p.cache_dir = c->cache_dir;
	p.progress = range_progress;
	p.progress_arg = c;
	err[0] = '\0';
	r = vitals_agg_query(&p, res, err, sizeof(err));
	range_progress_end(c);
	if (r == 0)
		return QCLI_OK;
	range_msg("%s", err[0] ? err : strerror(-r));
	return r == -EINVAL ? QCLI_USAGE : QCLI_RUNTIME;
}

static int
range_finding_wanted(const struct qcli *c, const struct vitals_finding *f)
{
	if (f->severity < c->severity)
		return 0;
	return c->vital == NULL ||
	    (f->vital && strcmp(f->vital, c->vital) == 0);
}

static void
range_finding_text(const struct vitals_finding *f, const char *host, int base)
{
	char when[64], ts[32];

	range_fmt_time(f->start_ns, when, sizeof(when));
	range_fmt_ts(f->timescale_s, base, ts, sizeof(ts));
	printf("  %s  %-4s  [%s] %s  host %s  vital %s  label %s  score %.3g"
	       "  value %.6g vs expected %.6g\n",
	    when, ts, range_severity_name(f->severity), range_dash(f->filter),
	    range_dash(host), range_dash(f->vital), range_dash(f->label), f->score,
	    f->value, f->expected);
	printf("      %s\n", range_dash(f->text));
}

static json_t *
range_finding_json(const struct vitals_finding *f, const char *host, int base)
{
	char when[64];

	range_fmt_time(f->start_ns, when, sizeof(when));
	return json_pack("{s:s, s:I, s:I, s:s, s:i, s:b, s:s, s:s, s:s?, s:s?,"
			 " s:o, s:o, s:o, s:s}",
	    "start", when, "start_ns", (json_int_t)f->start_ns, "end_ns",
	    (json_int_t)f->end_ns, "filter", range_dash(f->filter),
	    "timescale_s", (int)f->timescale_s, "base", base, "severity",
	    range_severity_name(f->severity), "host", host ? host : "", "vital",
	    f->vital, "label", f->label, "score", range_jnum(f->score), "value",
	    range_jnum(f->value), "expected", range_jnum(f->expected), "text",
	    f->text ? f->text : "");
}

static void
range_findings_text(const struct qcli *c, const struct vitals_agg_result *r)
{
	size_t i, n = 0;

	printf("FINDINGS\n");
	for (i = 0; i < r->nfindings; i++) {
		if (!range_finding_wanted(c, &r->findings[i].f))
			continue;
		range_finding_text(&r->findings[i].f, r->findings[i].host,
		    (int)r->findings[i].base);
		n++;
	}
	if (n == 0)
		printf("  (none)\n");
}

static json_t *
range_findings_json(const struct qcli *c, const struct vitals_agg_result *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < r->nfindings; i++)
		if (range_finding_wanted(c, &r->findings[i].f))
			json_array_append_new(a,
			    range_finding_json(&r->findings[i].f,
				r->findings[i].host, (int)r->findings[i].base));
	return a;
}

static int
range_host_wanted(const struct qcli *c, const char *host)
{
	uint32_t i;

	for (i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i], host) == 0)
			return 1;
	return c->nhosts == 0;
}

static int
range_vital_wanted(const struct qcli *c, const char *name)
{
	return c->vital == NULL || strcmp(c->vital, name) == 0;
}

static void
range_slot_text(const struct qcli *c, const struct vitals_agg_slot *s)
{
	char when[64], ts[32];
	uint32_t i;

	range_fmt_time(s->start_ns, when, sizeof(when));
	range_fmt_ts(s->timescale_s, (int)s->base, ts, sizeof(ts));
	printf("  %s  %-4s  %-12s %4u", when, ts, s->host, s->nepochs);
	for (i = 0; i < s->nvitals; i++)
		if (range_vital_wanted(c, s->vitals[i].name))
			printf("  %s %" PRIu64 "/%" PRIu64, s->vitals[i].name,
			    s->vitals[i].events, s->vitals[i].wsum);
	printf("\n");
}

static void
range_query_text(const struct qcli *c, const struct vitals_agg_result *r)
{
	char from[64], to[64], ts[32];
	const struct vitals_agg_point *p;
	size_t i;

	range_fmt_time(r->from_ns, from, sizeof(from));
	range_fmt_time(r->to_ns, to, sizeof(to));
	printf("QUERY %s .. %s  (%s)\n  timescales", from, to, c->data_dir);
	for (i = 0; i < r->ntimescales; i++) {
		range_fmt_ts(
		    r->timescales[i], r->timescales[i] == 0, ts, sizeof(ts));
		printf(" %s", ts);
	}
	printf("; %" PRIu64 " epochs read; cache %" PRIu64 " hits, %" PRIu64
	       " misses, rollups %" PRIu64 " cached, %" PRIu64 " built\n",
	    r->epochs_read, r->cache_hits, r->cache_misses, r->rollup_hits,
	    r->rollup_misses);
	printf("\nSERIES (start, timescale, host, epochs, vital "
	       "events/weighted sum)\n");
	for (i = 0; i < r->nslots; i++)
		range_slot_text(c, &r->slots[i]);
	if (r->nslots == 0)
		printf("  (no epochs in the range)\n");
	printf("\n");
	range_findings_text(c, r);
	if (r->npoints > 0)
		printf("\nFILTER SERIES (filter/name, host, timescale, time, "
		       "value)\n");
	for (i = 0; i < r->npoints; i++) {
		p = &r->points[i];
		range_fmt_time(p->ts_ns, from, sizeof(from));
		range_fmt_ts(p->timescale_s, (int)p->base, ts, sizeof(ts));
		printf("  %s/%s  %s  %s  %s  %.6g\n", p->filter, p->name,
		    range_dash(p->host), ts, from, p->value);
	}
}

static json_t *
range_slot_json(const struct qcli *c, const struct vitals_agg_slot *s)
{
	char when[64];
	json_t *o, *v;
	uint32_t i;

	range_fmt_time(s->start_ns, when, sizeof(when));
	o = json_pack("{s:s, s:I, s:I, s:i, s:b, s:s, s:i, s:{}}", "start",
	    when, "start_ns", (json_int_t)s->start_ns, "length_ns",
	    (json_int_t)s->length_ns, "timescale_s", (int)s->timescale_s,
	    "base", (int)s->base, "host", s->host, "nepochs", (int)s->nepochs,
	    "vitals");
	v = json_object_get(o, "vitals");
	for (i = 0; v != NULL && i < s->nvitals; i++)
		if (range_vital_wanted(c, s->vitals[i].name))
			json_object_set_new(v, s->vitals[i].name,
			    json_pack("{s:I, s:I}", "events",
				(json_int_t)s->vitals[i].events, "wsum",
				(json_int_t)s->vitals[i].wsum));
	return o;
}

static json_t *
range_points_json(const struct vitals_agg_result *r)
{
	const struct vitals_agg_point *p;
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < r->npoints; i++) {
		p = &r->points[i];
		json_array_append_new(a,
		    json_pack("{s:s, s:s, s:s, s:i, s:b,"
			      " s:I, s:o}",
			"filter", p->filter, "name", p->name, "host", p->host,
			"timescale_s", (int)p->timescale_s, "base",
			(int)p->base, "ts_ns", (json_int_t)p->ts_ns, "value",
			range_jnum(p->value)));
	}
	return a;
}

static json_t *
range_query_json(const struct qcli *c, const struct vitals_agg_result *r)
{
	json_t *o, *ts, *slots;
	char from[64], to[64], buf[32];
	size_t i;

	range_fmt_time(r->from_ns, from, sizeof(from));
	range_fmt_time(r->to_ns, to, sizeof(to));
	o = json_pack("{s:s, s:s, s:I, s:I, s:[], s:[], s:o, s:o, s:I,"
		      " s:{s:s?, s:I, s:I, s:I, s:I}}",
	    "from", from, "to", to, "from_ns", (json_int_t)r->from_ns, "to_ns",
	    (json_int_t)r->to_ns, "timescales", "slots", "findings",
	    range_findings_json(c, r), "series", range_points_json(r),
	    "epochs_read", (json_int_t)r->epochs_read, "cache", "dir",
	    r->cache_dir, "hits", (json_int_t)r->cache_hits, "misses",
	    (json_int_t)r->cache_misses, "rollup_hits",
	    (json_int_t)r->rollup_hits, "rollup_misses",
	    (json_int_t)r->rollup_misses);
	ts = json_object_get(o, "timescales");
	slots = json_object_get(o, "slots");
	for (i = 0; o != NULL && i < r->ntimescales; i++) {
		range_fmt_ts(
		    r->timescales[i], r->timescales[i] == 0, buf, sizeof(buf));
		json_array_append_new(ts, json_string(buf));
	}
	for (i = 0; o != NULL && i < r->nslots; i++)
		json_array_append_new(slots, range_slot_json(c, &r->slots[i]));
	return o;
}

static int
range_dump(json_t *j)
{
	int r;

	if (j == NULL) {
		range_msg("out of memory");
		return QCLI_RUNTIME;
	}
	r = json_dumpf(j, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(j);
	return r == 0 ? QCLI_OK : QCLI_RUNTIME;
}

/* No epoch in the range: say so, exit 1 as `vitals epochs` does. */
static int
range_empty(const struct qcli *c, struct vitals_agg_result *r)
{
	char a[64], b[64];

	if (r->nslots > 0)
		return 0;
	range_fmt_time(c->from, a, sizeof(a));
	range_fmt_time(c->to, b, sizeof(b));
	range_msg("no epochs from %s to %s under %s", a, b, c->data_dir);
	vitals_agg_result_free(r);
	return 1;
}

static int
range_query(struct qcli *c)
{
	struct vitals_agg_result *r;
	int rc;

	if ((rc = range_window(c, 3600 * QCLI_NS)) != QCLI_OK ||
	    (rc = range_aggregate(c, &r)) != QCLI_OK)
		return rc;
	if (range_empty(c, r))
		return QCLI_RUNTIME;
	if (c->json)
		rc = range_dump(range_query_json(c, r));
	else
		range_query_text(c, r);
	vitals_agg_result_free(r);
	return rc;
}

/* The findings vitalsd stored in the epochs of the range. */
static int
range_stored(struct qcli *c)
{
	struct vitals_store_list l;
	struct vitals_epoch *e;
	json_t *a = c->json ? json_array() : NULL;
	char err[1024];
	size_t i, n = 0;
	uint32_t k;
	int r;

	if ((r = vitals_store_list(c->data_dir, &l)) != 0) {
		range_msg("%s: %s", c->data_dir,
		    r == -ENOENT ? "no such data directory" : strerror(-r));
		json_decref(a);
		return QCLI_RUNTIME;
	}
	if (!c->json)
		printf("FINDINGS\n");
	for (i = 0; i < l.n; i++) {
		if (l.v[i].start_ns < c->from || l.v[i].start_ns >= c->to ||
		    !range_host_wanted(c, l.v[i].host))
			continue;
		if (vitals_epoch_load(l.v[i].path, &e, err, sizeof(err)) != 0) {
			range_msg("skipping %s", err);
			continue;
		}
		for (k = 0; k < e->nfindings; k++) {
			if (!range_finding_wanted(c, &e->findings[k]))
				continue;
			if (a != NULL)
				json_array_append_new(a,
				    range_finding_json(&e->findings[k], e->host,
					e->findings[k].timescale_s ==
					    e->timescale_s));
			else
				range_finding_text(&e->findings[k], e->host,
				    e->findings[k].timescale_s ==
					e->timescale_s);
			n++;
		}
		vitals_epoch_free(e);
	}
	vitals_store_list_free(&l);
	if (!c->json && n == 0)
		printf("  (none)\n");
	return c->json ? range_dump(a) : QCLI_OK;
}

static int
range_findings(struct qcli *c)
{
	struct vitals_agg_result *r;
	int rc;

	if ((rc = range_window(c, 86400 * QCLI_NS)) != QCLI_OK)
		return rc;
	if (c->stored)
		return range_stored(c);
	if ((rc = range_aggregate(c, &r)) != QCLI_OK)
		return rc;
	if (range_empty(c, r))
		return QCLI_RUNTIME;
	if (c->json)
		rc = range_dump(range_findings_json(c, r));
	else
		range_findings_text(c, r);
	vitals_agg_result_free(r);
	return rc;
}

/* ---- ranges rolled into one epoch (top, diff) ---- */

/*
 * The epochs of [from, to) (of the hosts asked) rolled up into one
 * epoch.  QCLI_OK with *out, or QCLI_RUNTIME after saying why.
 */
static int
range_range_epoch(
    struct qcli *c, uint64_t from, uint64_t to, struct vitals_epoch **out)
{
	char err[1024];

	if (vitals_range_rollup(c->data_dir, from, to, c->hosts, c->nhosts,
		c->cfg->sketch.max_samples, out, err, sizeof(err)) != 0) {
		range_msg("%s", err);
		return QCLI_RUNTIME;
	}
	return QCLI_OK;
}

/* ---- filters run by hand (top, diff, train) ---- */

/* What a hand-run filter emitted. */
struct range_sink {
	json_t *findings;
	json_t *points;
};

static void
range_on_finding(void *arg, const struct vitals_finding *f, const char *host)
{
	struct range_sink *s = arg;

	json_array_append_new(s->findings, range_finding_json(f, host, 0));
}

static void
range_on_series(void *arg, const char *filter, const char *name,
    uint64_t ts_ns, double value)
{
	struct range_sink *s = arg;

	json_array_append_new(s->points,
	    json_pack("{s:s, s:s, s:I, s:o}", "filter", filter, "name", name,
		"ts_ns", (json_int_t)ts_ns, "value", range_jnum(value)));
}

/*
 * Load and start filter `name` with the configured options and the
 * overrides, its findings and series going to sink.  QCLI_OK with *out,
 * or an exit status after saying why.
 */
static int
range_filter_start(struct qcli *c, const char *name,
    const struct config_entry *extra, size_t nextra, struct range_sink *sink,
    struct handrun **out)
{
	struct vitals_filter_sink fs = { range_on_finding, range_on_series,
		sink };
	char err[1024];
	int r;

	r = handrun_start(c->cfg, c->config, c->data_dir, name, extra, nextra,
	    &fs, out, err, sizeof(err));
	if (r != 0)
		range_msg("%s", err);
	return r == 0 ? QCLI_OK : r == -EINVAL ? QCLI_USAGE : QCLI_RUNTIME;
}

/* Print what a hand-run filter emitted. */
static int
range_sink_print(const struct qcli *c, struct range_sink *s, const char *title)
{
	json_t *o;
	size_t i, shown = 0;

	if (c->json) {
		o = json_pack(
		    "{s:O, s:O}", "findings", s->findings, "series", s->points);
		return range_dump(o);
	}
	printf("%s\n", title);
	json_array_foreach(s->findings, i, o)
	{
		if (c->vital != NULL &&
		    (json_string_value(json_object_get(o, "vital")) == NULL ||
			strcmp(c->vital,
			    json_string_value(json_object_get(o, "vital"))) !=
			    0))
			continue;
		printf("  [%s] %s  vital %s  label %s  score %.3g  value %.6g"
		       " vs %.6g\n      %s\n",
		    json_string_value(json_object_get(o, "severity")),
		    json_string_value(json_object_get(o, "filter")),
		    range_dash(json_string_value(json_object_get(o, "vital"))),
		    range_dash(json_string_value(json_object_get(o, "label"))),
		    json_number_value(json_object_get(o, "score")),
		    json_number_value(json_object_get(o, "value")),
		    json_number_value(json_object_get(o, "expected")),
		    range_dash(json_string_value(json_object_get(o, "text"))));
		shown++;
	}
	if (shown == 0)
		printf("  (no findings)\n");
	json_array_foreach(s->points, i, o) printf("  series %s/%s %.6g\n",
	    json_string_value(json_object_get(o, "filter")),
	    json_string_value(json_object_get(o, "name")),
	    json_number_value(json_object_get(o, "value")));
	return QCLI_OK;
}

/* Run filter `name` once on queue v[0..n) and print what it said. */
static int
range_filter_once(struct qcli *c, const char *name,
    const struct config_entry *extra, size_t nextra,
    const struct vitals_epoch *const *v, uint32_t n, const char *title)
{
	struct range_sink sink = { json_array(), json_array() };
	struct vitals_queue q;
	struct handrun *h = NULL;
	int rc;

	rc = range_filter_start(c, name, extra, nextra, &sink, &h);
	if (rc == QCLI_OK) {
		memset(&q, 0, sizeof(q));
		q.timescale_s = v[n - 1]->timescale_s;
		q.n = n;
		q.epochs = v;
		if (handrun_feed(h, &q, v[n - 1]->host) != 0)
			rc = QCLI_RUNTIME;
	}
	handrun_stop(h);
	if (rc == QCLI_OK)
		rc = range_sink_print(c, &sink, title);
	json_decref(sink.findings);
	json_decref(sink.points);
	return rc;
}

/*
 * Whether filter `name` is on the search path: 0 if not, 1 if it is, 2 if
 * it also has an option called `key`.
 */
static int
range_installed(const struct qcli *c, const char *name, const char *key)
{
	const struct vitals_option *o;
	const struct loader_plugin *lp;
	struct loader *l;
	char err[512];
	int r = 0;

	l = loader_new(
	    (const char *const *)c->cfg->plugin_path.v, c->cfg->plugin_path.n);
	if (l != NULL && loader_open(l, name, &lp, err, sizeof(err)) == 0 &&
	    lp->desc->kind == VITALS_PLUGIN_FILTER) {
		r = 1;
		for (o = lp->desc->options; o != NULL && o->key != NULL; o++)
			if (strcmp(o->key, key) == 0)
				r = 2;
	}
	loader_free(l);
	return r;
}

/* ---- top ---- */

/* A label (HCA slot) or an exe and its weight. */
struct range_item {
	uint64_t count;
	uint32_t slot;
	const struct vitals_sample *s; /* the sample standing for it */
	const char *exe;
};

static int
range_item_cmp(const void *x, const void *y)
{
	const struct range_item *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->exe != NULL && b->exe != NULL)
		return strcmp(a->exe, b->exe);
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The sample of slot i with the largest count, or NULL. */
static const struct vitals_sample *
range_slot_sample(const struct vitals_vital_epoch *v, uint32_t slot)
{
	const struct vitals_sample *best = NULL;
	uint32_t i;

	for (i = 0; i < v->nsamples; i++)
		if (v->samples[i].slot == slot &&
		    (best == NULL || v->samples[i].count > best->count))
			best = &v->samples[i];
	return best;
}

/* Slots by count (largest first); *n of them; NULL when out of memory. */
static struct range_item *
range_top_slots(const struct vitals_vital_epoch *v, size_t *n)
{
	struct range_item *it;
	uint32_t i;

	*n = 0;
	if ((it = calloc(v->hca_size + 1, sizeof(*it))) == NULL)
		return NULL;
	for (i = 0; v->hca != NULL && i < v->hca_size; i++) {
		if (v->hca[i] == 0)
			continue;
		it[*n].count = v->hca[i];
		it[*n].slot = i;
		it[*n].s = range_slot_sample(v, i);
		(*n)++;
	}
	qsort(it, *n, sizeof(*it), range_item_cmp);
	return it;
}

/* Exes by the counts of the slots their samples stand for. */
static struct range_item *
range_top_exes(const struct range_item *slots, size_t ns, size_t *n)
{
	struct range_item *ex;
	size_t i, j;

	*n = 0;
	if ((ex = calloc(ns + 1, sizeof(*ex))) == NULL)
		return NULL;
	for (i = 0; i < ns; i++) {
		if (slots[i].s == NULL)
			continue;
		for (j = 0; j < *n && strcmp(ex[j].exe, slots[i].s->exe); j++)
			;
		if (j == *n) {
			ex[j].exe = slots[i].s->exe;
			ex[j].s = slots[i].s;
			(*n)++;
		}
		ex[j].count += slots[i].count;
	}
	qsort(ex, *n, sizeof(*ex), range_item_cmp);
	return ex;
}

static json_t *
range_item_json(const struct range_item *it, uint64_t wsum, int is_exe)
{
	char label[32];

	if (is_exe)
		return json_pack("{s:s, s:s, s:I, s:f}", "exe", it->exe, "comm",
		    it->s ? it->s->comm : "", "count", (json_int_t)it->count,
		    "share", wsum ? (double)it->count / (double)wsum : 0.0);
	snprintf(label, sizeof(label), "0x%" PRIx64, it->s ? it->s->label : 0);
	return json_pack("{s:i, s:I, s:f, s:s?, s:s?, s:s?}", "slot",
	    (int)it->slot, "count", (json_int_t)it->count, "share",
	    wsum ? (double)it->count / (double)wsum : 0.0, "exe",
	    it->s ? it->s->exe : NULL, "comm", it->s ? it->s->comm : NULL,
	    "label", it->s ? label : NULL);
}

static void
range_item_text(
    const struct range_item *it, size_t rank, uint64_t wsum, int is_exe)
{
	double share = wsum ? 100.0 * (double)it->count / (double)wsum : 0;

	if (is_exe) {
		printf("    %3zu %14" PRIu64 " %6.2f%%  %s (%s)\n", rank,
		    it->count, share, it->exe, it->s ? it->s->comm : "-");
		return;
	}
	printf("    %3zu %14" PRIu64 " %6.2f%%  slot %-5u ", rank, it->count,
	    share, it->slot);
	if (it->s != NULL)
		printf("%s (%s) label 0x%" PRIx64 "\n", range_dash(it->s->exe),
		    range_dash(it->s->comm), it->s->label);
	else
		printf("(no sample)\n");
}

/* One vital's top labels and exes, as text or into obj. */
static int
range_top_vital(
    const struct qcli *c, const struct vitals_vital_epoch *v, json_t *obj)
{
	struct range_item *sl, *ex = NULL;
	size_t ns, nx = 0, i;
	json_t *o = NULL, *a, *b;

	if ((sl = range_top_slots(v, &ns)) == NULL ||
	    (ex = range_top_exes(sl, ns, &nx)) == NULL) {
		free(sl);
		return -ENOMEM;
	}
	if (obj != NULL) {
		o = json_pack("{s:s, s:I, s:I, s:[], s:[]}", "unit", v->unit,
		    "events", (json_int_t)v->events, "wsum",
		    (json_int_t)v->wsum, "labels", "exes");
		a = json_object_get(o, "labels");
		b = json_object_get(o, "exes");
		for (i = 0; o != NULL && i < ns && i < c->k; i++)
			json_array_append_new(
			    a, range_item_json(&sl[i], v->wsum, 0));
		for (i = 0; o != NULL && i < nx && i < c->k; i++)
			json_array_append_new(
			    b, range_item_json(&ex[i], v->wsum, 1));
		json_object_set_new(obj, v->name, o);
	} else {
		printf("\n%s (unit %s): %" PRIu64
		       " events, weighted sum %" PRIu64 "\n  TOP LABELS\n",
		    v->name, range_dash(v->unit), v->events, v->wsum);
		for (i = 0; i < ns && i < c->k; i++)
			range_item_text(&sl[i], i + 1, v->wsum, 0);
		printf("  TOP EXES\n");
		for (i = 0; i < nx && i < c->k; i++)
			range_item_text(&ex[i], i + 1, v->wsum, 1);
	}
	free(sl);
	free(ex);
	return 0;
}

/* Top labels and exes computed from the rollup's HCA and samples. */
static int
range_top_direct(const struct qcli *c, const struct vitals_epoch *e)
{
	json_t *o = c->json ? json_object() : NULL, *j;
	char a[64], b[64];
	uint32_t i;
	int r = 0;

	range_fmt_time(e->start_ns, a, sizeof(a));
	range_fmt_time(
	    e->start_ns + (uint64_t)e->timescale_s * QCLI_NS, b, sizeof(b));
	if (!c->json)
		printf("TOP %s .. %s  host %s\n", a, b, e->host);
	for (i = 0; i < e->nvitals && r == 0; i++)
		if (range_vital_wanted(c, e->vitals[i].name))
			r = range_top_vital(c, &e->vitals[i], o);
	if (!c->json)
		return r == 0 ? QCLI_OK : QCLI_RUNTIME;
	j = json_pack("{s:s, s:s, s:s, s:s, s:o}", "from", a, "to", b, "host",
	    e->host, "source", "samples", "vitals", o);
	return range_dump(j);
}

static int
range_top(struct qcli *c)
{
	struct config_entry k[2];
	struct vitals_epoch *e;
	const struct vitals_epoch *v[1];
	char kbuf[32];
	size_t nk = 0;
	int rc, topk;

	if (c->k == 0)
		c->k = 10;
	if ((rc = range_window(c, 3600 * QCLI_NS)) != QCLI_OK ||
	    (rc = range_range_epoch(c, c->from, c->to, &e)) != QCLI_OK)
		return rc;
	if (c->vital != NULL && vitals_epoch_vital(e, c->vital) == NULL) {
		range_msg("no vital %s in the range", c->vital);
		vitals_epoch_free(e);
		return QCLI_RUNTIME;
	}
	if (c->direct || (topk = range_installed(c, "topk", "k")) == 0) {
		rc = range_top_direct(c, e);
	} else {
		/* -k N becomes the filter's own k, if it has one. */
		memset(k, 0, sizeof(k));
		snprintf(kbuf, sizeof(kbuf), "%zu", c->k);
		if (topk == 2)
			k[nk++] =
			    (struct config_entry){ .key = "k", .scalar = kbuf };
		/* The range is one epoch of its own length: rank it whatever
		 * that length. */
		if (range_installed(c, "topk", "min_timescale") == 2)
			k[nk++] = (struct config_entry){ .key = "min_timescale",
				.scalar = "0" };
		v[0] = e;
		rc = range_filter_once(
		    c, "topk", k, nk, v, 1, "TOP (topk filter)");
	}
	vitals_epoch_free(e);
	return rc;
}

/* ---- diff ---- */

static int
range_diff(struct qcli *c)
{
	uint64_t af, at, bf, bt;
	struct vitals_epoch *a = NULL, *b = NULL;
	const struct vitals_epoch *v[2];
	struct config_entry once[1] = { { .key = "persist", .scalar = "1" } };
	int rc;

	if (c->npos != 2)
		return range_usage_error("diff: expected two ranges, RANGE_A "
					"RANGE_B (FROM..TO each)");
	if ((rc = range_range(c->pos[0], c->now, &af, &at)) != QCLI_OK ||
	    (rc = range_range(c->pos[1], c->now, &bf, &bt)) != QCLI_OK)
		return rc;
	if ((rc = range_range_epoch(c, af, at, &a)) == QCLI_OK &&
	    (rc = range_range_epoch(c, bf, bt, &b)) == QCLI_OK) {
		v[0] = a;
		v[1] = b;
		/* Two ranges compared once: a change is said at once, not
		 * after it persists (persist, if the filter has it). */
		rc = range_filter_once(c, "diff", once,
		    range_installed(c, "diff", "persist") == 2 ? 1 : 0, v, 2,
		    "DIFF (diff filter, A then B)");
	}
	vitals_epoch_free(a);
	vitals_epoch_free(b);
	return rc;
}

/* ---- train ---- */

/* Feed the stored epochs of [from, to) to h in order, host by host. */
static int
range_feed(struct qcli *c, struct handrun *h, uint64_t from, uint64_t to,
    size_t *fed)
{
	struct vitals_store_list l;
	struct vitals_epoch **q;
	char err[1024];
	size_t i, total = 0, done = 0;
	uint32_t n = 0, cap = c->cfg->queue_len;
	int r;

	if ((r = vitals_store_list(c->data_dir, &l)) != 0) {
		range_msg("%s: %s", c->data_dir,
		    r == -ENOENT ? "no such data directory" : strerror(-r));
		return QCLI_RUNTIME;
	}
	q = calloc(cap, sizeof(*q));
	for (i = 0; i < l.n; i++)
		total += l.v[i].start_ns >= from && l.v[i].start_ns < to;
	for (i = 0; q != NULL && i < l.n; i++) {
		if (l.v[i].start_ns < from || l.v[i].start_ns >= to)
			continue;
		range_progress(c, ++done, total);
		if (!range_host_wanted(c, l.v[i].host))
			continue;
		if (n == cap) {
			vitals_epoch_free(q[0]);
			memmove(q, q + 1, (cap - 1) * sizeof(*q));
			n--;
		}
		if (vitals_epoch_load(l.v[i].path, &q[n], err, sizeof(err)) !=
		    0) {
			range_msg("skipping %s", err);
			continue;
		}
		n++;
		(*fed)++;
		handrun_feed(h,
		    &(struct vitals_queue){
			.timescale_s = q[n - 1]->timescale_s,
			.n = n,
			.epochs = (const struct vitals_epoch *const *)q },
		    q[n - 1]->host);
	}
	range_progress_end(c);
	while (q != NULL && n > 0)
		vitals_epoch_free(q[--n]);
	free(q);
	vitals_store_list_free(&l);
	return QCLI_OK;
}

static int
range_train(struct qcli *c)
{
	struct range_sink sink = { json_array(), json_array() };
	struct config_entry extra[2];
	struct handrun *h = NULL;
	uint64_t from, to;
	struct stat sb;
	size_t fed = 0;
	int rc;

	if (c->npos != 1 || c->normal == NULL || c->model == NULL)
		return range_usage_error("train: expected NAME --normal RANGE "
					"--model PATH");
	if ((rc = range_range(c->normal, c->now, &from, &to)) != QCLI_OK)
		return rc;
	memset(extra, 0, sizeof(extra));
	extra[0].key = "mode";
	extra[0].scalar = "train";
	extra[1].key = "model";
	extra[1].scalar = (char *)c->model;
	rc = range_filter_start(c, c->pos[0], extra, 2, &sink, &h);
	if (rc == QCLI_OK)
		rc = range_feed(c, h, from, to, &fed);
	/* fini writes the model; a failed write was reported there. */
	if (handrun_stop(h) != 0 && rc == QCLI_OK)
		rc = QCLI_RUNTIME;
	json_decref(sink.findings);
	json_decref(sink.points);
	if (rc != QCLI_OK)
		return rc;
	if (fed == 0) {
		range_msg("no readable epochs in %s under %s", c->normal,
		    c->data_dir);
		return QCLI_RUNTIME;
	}
	printf("trained %s on %zu epochs of %s: model %s", c->pos[0], fed,
	    c->normal, c->model);
	if (stat(c->model, &sb) == 0)
		printf(" (%lld bytes)\n", (long long)sb.st_size);
	else
		printf(" (not written)\n");
	return QCLI_OK;
}

/* ---- entry ---- */

static const struct {
	const char *name;
	unsigned bit;
	int (*fn)(struct qcli *c);
} range_cmds[] = {
	{ "query", CLI_QUERY, range_query },
	{ "findings", CLI_FINDINGS, range_findings },
	{ "top", CLI_TOP, range_top },
	{ "diff", CLI_DIFF, range_diff },
	{ "train", CLI_TRAIN, range_train },
};
#define QCLI_NCMDS (sizeof(range_cmds) / sizeof(range_cmds[0]))

int
range_is_command(const char *cmd)
{
	size_t i;

	for (i = 0; i < QCLI_NCMDS; i++)
		if (strcmp(range_cmds[i].name, cmd) == 0)
			return 1;
	return 0;
}

int
range_run(const char *cmd, const char *data_dir, const char *config, int argc,
    char **argv)
{
	struct qcli c;
	size_t i;
	int rc;

	for (i = 0; i < QCLI_NCMDS && strcmp(range_cmds[i].name, cmd); i++)
		;
	if (i == QCLI_NCMDS)
		return range_usage_error("unknown command '%s'", cmd);
	memset(&c, 0, sizeof(c));
	c.cmd = range_cmds[i].bit;
	c.cmdname = cmd;
	c.data_dir_opt = data_dir;
	c.config_opt = config;
	c.now = range_now();
	log_setup(LOG_TO_STDERR, VITALS_LOG_WARN, "vitals");
	if ((rc = range_args(&c, argc, argv)) != QCLI_OK)
		return rc < 0 ? QCLI_OK : rc;
	if ((rc = range_setup(&c)) == QCLI_OK)
		rc = range_cmds[i].fn(&c);
	config_free(c.cfg);
	return rc;
}
