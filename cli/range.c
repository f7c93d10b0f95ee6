/* SPDX-License-Identifier: MIT */
/*
 * What the `vitals` commands over time ranges share (cli/range.h): their
 * options, times and ranges, a progress bar, the store's epochs in a
 * range, the cached aggregator, and filters run by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "args.h"
#include "cli.h"
#include "config.h"
#include "handrun.h"
#include "instance.h"
#include "loader.h"
#include "log.h"
#include "option.h"
#include "range.h"

/* Epochs to read before a progress bar is worth showing. */
#define RANGE_PROGRESS_MIN 50

const char range_usage_times[] =
    "  Times: 2026-11-22T10:00[:SS][Z|+01:00], 2026-11-22, now, -30m, -2h,\n"
    "  -1d, @UNIXSECONDS; local time unless a zone is given.  RANGE is\n"
    "  FROM..TO.  Timescales: base, or a duration (5m, 1h, 1d).\n";

/* ---- times ---- */

/* Now, in ns since the Unix epoch. */
static uint64_t
range_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * CLI_NS + (uint64_t)ts.tv_nsec;
}

/* Say that s, given as what, is no time; returns CLI_EXIT_USAGE. */
static int
range_bad_time(const char *what, const char *s)
{
	cli_msg(
	    "%s: bad time '%s': expected ISO-8601 (2026-11-22T10:00, "
	    "optionally with seconds and Z or +01:00), a date (2026-11-22), "
	    "now, a time before now (-30m, -2h, -1d) or @UNIXSECONDS, "
	    "between 1970 and 2554",
	    what, s);
	return CLI_EXIT_USAGE;
}

int
range_parse(const char *s, uint64_t now, uint64_t *from, uint64_t *to)
{
	const char *dots = strstr(s, "..");
	char a[128];

	if (dots == NULL || (size_t)(dots - s) >= sizeof(a)) {
		cli_msg("bad range '%s': expected FROM..TO (e.g. "
			"2026-11-22T10:00..2026-11-22T11:00 or -2h..-1h)",
		    s);
		return CLI_EXIT_USAGE;
	}
	memcpy(a, s, (size_t)(dots - s));
	a[dots - s] = '\0';
	if (vitals_time_parse(a, now, from) != 0)
		return range_bad_time("range start", a);
	if (vitals_time_parse(dots + 2, now, to) != 0)
		return range_bad_time("range end", dots + 2);
	if (*to <= *from) {
		cli_msg("bad range '%s': it ends before it starts", s);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int
range_window(struct range *c, uint64_t span)
{
	c->to = c->now;
	if (c->to_s != NULL && vitals_time_parse(c->to_s, c->now, &c->to) != 0)
		return range_bad_time("--to", c->to_s);
	c->from = c->to > span ? c->to - span : 0;
	if (c->from_s != NULL &&
	    vitals_time_parse(c->from_s, c->now, &c->from) != 0)
		return range_bad_time("--from", c->from_s);
	if (c->to <= c->from) {
		cli_msg("empty range: --to (%s) is not after --from (%s)",
		    c->to_s ? c->to_s : "now",
		    c->from_s ? c->from_s : "default");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/* ---- arguments ---- */

/* A timescale argument: "base", or durations like 5m (comma lists too). */
static int
range_timescales(struct range *c, const char *arg)
{
	char buf[256], *tok, *save = NULL;
	uint64_t ns;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->nts == RANGE_MAX_LIST)
			return cli_usage_error(c->cli, "too many timescales");
		if (strcmp(tok, "base") == 0) {
			c->ts[c->nts++] = 0;
			continue;
		}
		if (option_parse_duration(tok, &ns) != 0 || ns < CLI_NS ||
		    ns % CLI_NS != 0 || ns / CLI_NS > UINT32_MAX)
			return cli_usage_error(c->cli,
			    "bad timescale '%s': expected "
			    "base or whole seconds (5m, 1h, 1d)",
			    tok);
		c->ts[c->nts++] = (uint32_t)(ns / CLI_NS);
	}
	return CLI_EXIT_OK;
}

/* A count of option opt, from 1 to 100000. */
static int
range_count(struct range *c, const char *opt, const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v == 0 ||
	    v > 100000)
		return cli_usage_error(c->cli,
		    "%s: expected a count from 1 to 100000, "
		    "got '%s'",
		    opt, s);
	*out = (size_t)v;
	return CLI_EXIT_OK;
}

/* --severity: info, warn(ing) or crit(ical). */
static int
range_severity(struct range *c, const char *s)
{
	if (strcmp(s, "info") == 0)
		c->severity = VITALS_SEV_INFO;
	else if (strcmp(s, "warn") == 0 || strcmp(s, "warning") == 0)
		c->severity = VITALS_SEV_WARN;
	else if (strcmp(s, "crit") == 0 || strcmp(s, "critical") == 0)
		c->severity = VITALS_SEV_CRIT;
	else
		return cli_usage_error(c->cli,
		    "--severity: expected info, warn or "
		    "crit, got '%s'",
		    s);
	return CLI_EXIT_OK;
}

/* Append s to the list v[0..*n), one of what. */
static int
range_push(struct range *c, const char **v, uint32_t *n, const char *s,
    const char *what)
{
	if (*n == RANGE_MAX_LIST)
		return cli_usage_error(c->cli, "too many %s", what);
	v[(*n)++] = s;
	return CLI_EXIT_OK;
}

/* Apply option id with value val; *done once an option printed. */
static int
range_apply(struct range *c, int id, const char *val, int *done)
{
	switch (id) {
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
		return range_push(c, c->filters, &c->nfilters, val, "filters");
	case CO_HOST:
		return range_push(c, c->hosts, &c->nhosts, val, "hosts");
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
		return range_count(c, cli_opt_name(id), val, &c->k);
	case CO_NO_FILTER:
		c->direct = 1;
		break;
	case CO_NORMAL:
		c->normal = val;
		break;
	case CO_MODEL:
		c->model = val;
		break;
	case CO_EXE:
		c->exe = val;
		break;
	case CO_OUTPUT:
		c->output = val;
		break;
	case CO_FOLDED:
		c->folded = 1;
		break;
	default:
		return cli_opt(c->cli, id, val, done);
	}
	return CLI_EXIT_OK;
}

/* A word that is not an option: a relative time like -2h..-1h is one. */
static int
range_positional(struct range *c, const char *s)
{
	if (c->npos == 2 || (c->cli->cmd->flag & (CLI_DIFF | CLI_TRAIN)) == 0)
		return cli_usage_error(c->cli, "%s: unexpected argument '%s'",
		    c->cli->cmd->name, s);
	c->pos[c->npos++] = s;
	return CLI_EXIT_OK;
}

/*
 * Parse the arguments from where a is, in a walk of their own (a "--"
 * before the command name does not reach them).  CLI_EXIT_OK, with *done
 * set if an option printed, or CLI_EXIT_USAGE.
 */
static int
range_args(struct range *c, const struct cli_args *a, int *done)
{
	struct cli_args w;
	const char *val;
	int id, rc;

	cli_args_init(&w, a->argc, a->argv, a->i, a->cmd);
	while (!*done && (id = cli_next(&w, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return cli_usage_error(
			    c->cli, "%s: %s", c->cli->cmd->name, w.err);
		rc = id == CLI_POS ? range_positional(c, val)
				   : range_apply(c, id, val, done);
		if (rc != CLI_EXIT_OK)
			return rc;
	}
	return CLI_EXIT_OK;
}

int
range_run(struct cli *cli, struct cli_args *a, int (*fn)(struct range *c))
{
	struct range c;
	int done = 0, rc;

	memset(&c, 0, sizeof(c));
	c.cli = cli;
	c.now = range_now();
	log_setup(LOG_TO_STDERR, VITALS_LOG_WARN, "vitals");
	if ((rc = range_args(&c, a, &done)) != CLI_EXIT_OK || done)
		return rc;
	if ((rc = cli_config(cli)) == CLI_EXIT_OK)
		rc = fn(&c);
	/* A filter that could not save its state (a model) failed. */
	return rc == CLI_EXIT_OK && instance_stop_failures() > 0
	    ? CLI_EXIT_RUNTIME
	    : rc;
}

/* ---- the store's epochs in a range ---- */

/* Show done of total epochs read, on a terminal, once there are enough. */
static void
range_progress(void *arg, uint64_t done, uint64_t total)
{
	struct range *c = arg;
	unsigned pct, i, width = 30;

	if (total < RANGE_PROGRESS_MIN || !isatty(STDERR_FILENO))
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

/* Clear the progress bar, if one is on screen. */
static void
range_progress_end(struct range *c)
{
	if (c->bar)
		fputs("\r\033[K", stderr);
	c->bar = 0;
}

/* Whether the epochs of host are asked for (by --host, or all). */
static int
range_host_wanted(const struct range *c, const char *host)
{
	uint32_t i;

	for (i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i], host) == 0)
			return 1;
	return c->nhosts == 0;
}

int
range_vital_wanted(const struct range *c, const char *name)
{
	return c->vital == NULL || strcmp(c->vital, name) == 0;
}

int
range_list(struct range *c, struct vitals_store_list *l)
{
	const char *dir = c->cli->data_dir;
	int r;

	if ((r = vitals_store_list(dir, l)) != 0) {
		cli_msg("%s: %s", dir,
		    r == -ENOENT ? "no such data directory" : strerror(-r));
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

/* Whether entry i of l starts in [from, to). */
static int
range_in(
    const struct vitals_store_list *l, size_t i, uint64_t from, uint64_t to)
{
	return l->v[i].start_ns >= from && l->v[i].start_ns < to;
}

void
range_each(struct range *c, const struct vitals_store_list *l, uint64_t from,
    uint64_t to, int bar,
    void (*fn)(
	struct range *c, const struct vitals_store_entry *entry, void *arg),
    void *arg)
{
	size_t i, total = 0, done = 0;

	for (i = 0; i < l->n; i++)
		total += range_in(l, i, from, to);
	for (i = 0; i < l->n; i++) {
		if (!range_in(l, i, from, to))
			continue;
		if (bar)
			range_progress(c, ++done, total);
		if (range_host_wanted(c, l->v[i].host))
			fn(c, &l->v[i], arg);
	}
	range_progress_end(c);
}

int
range_load(const struct vitals_store_entry *entry, struct vitals_epoch **out)
{
	char err[1024];

	if (vitals_epoch_load(entry->path, out, err, sizeof(err)) != 0) {
		cli_msg("skipping %s", err);
		return -1;
	}
	return 0;
}

/* ---- the aggregator, and one epoch for a range ---- */

/* No epoch in the range: say so, as `vitals epochs` does. */
static int
range_empty(const struct range *c, const struct vitals_agg_result *r)
{
	char a[64], b[64];

	if (r->nslots > 0)
		return 0;
	cli_fmt_time(c->from, 0, a, sizeof(a));
	cli_fmt_time(c->to, 0, b, sizeof(b));
	cli_msg("no epochs from %s to %s under %s", a, b, c->cli->data_dir);
	return 1;
}

int
range_aggregate(struct range *c, struct vitals_agg_result **res)
{
	struct vitals_agg_params p;
	char err[2048];
	int r;

	memset(&p, 0, sizeof(p));
	p.data_dir = c->cli->data_dir;
	p.config = c->cli->config_path;
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
	if (r != 0) {
		cli_msg("%s", err[0] ? err : strerror(-r));
		return r == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_RUNTIME;
	}
	if (range_empty(c, *res)) {
		vitals_agg_result_free(*res);
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

int
range_rollup(
    struct range *c, uint64_t from, uint64_t to, struct vitals_epoch **out)
{
	char err[1024];

	if (vitals_range_rollup(c->cli->data_dir, from, to, c->hosts, c->nhosts,
		c->cli->config->sketch.max_samples, out, err,
		sizeof(err)) != 0) {
		cli_msg("%s", err);
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

/* ---- findings and JSON ---- */

json_t *
range_jnum(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

json_t *
range_finding_json(const struct vitals_finding *f, const char *host, int base)
{
	char when[64];

	cli_fmt_time(f->start_ns, 0, when, sizeof(when));
	return json_pack("{s:s, s:I, s:I, s:s, s:i, s:b, s:s, s:s, s:s?, s:s?,"
			 " s:o, s:o, s:o, s:s}",
	    "start", when, "start_ns", (json_int_t)f->start_ns, "end_ns",
	    (json_int_t)f->end_ns, "filter", cli_dash(f->filter), "timescale_s",
	    (int)f->timescale_s, "base", base, "severity",
	    cli_severity_name(f->severity), "host", host ? host : "", "vital",
	    f->vital, "label", f->label, "score", range_jnum(f->score), "value",
	    range_jnum(f->value), "expected", range_jnum(f->expected), "text",
	    f->text ? f->text : "");
}

int
range_dump(json_t *j)
{
	int r;

	if (j == NULL) {
		cli_msg("out of memory");
		return CLI_EXIT_RUNTIME;
	}
	r = cli_print_json(j);
	json_decref(j);
	return r == 0 ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- filters run by hand (top, diff, train) ---- */

/* A finding the filter emitted, into the sink. */
static void
range_on_finding(void *arg, const struct vitals_finding *f, const char *host)
{
	struct range_sink *s = arg;

	json_array_append_new(s->findings, range_finding_json(f, host, 0));
}

/* A point of a series the filter emitted, into the sink. */
static void
range_on_series(void *arg, const char *filter, const char *name, uint64_t ts_ns,
    double value)
{
	struct range_sink *s = arg;

	json_array_append_new(s->points,
	    json_pack("{s:s, s:s, s:I, s:o}", "filter", filter, "name", name,
		"ts_ns", (json_int_t)ts_ns, "value", range_jnum(value)));
}

int
range_filter_start(struct range *c, const char *name,
    const struct config_entry *extra, size_t nextra, struct range_sink *sink,
    struct handrun **out)
{
	struct vitals_filter_sink fs = { range_on_finding, range_on_series,
		sink };
	char err[1024];
	int r;

	r = handrun_start(c->cli->config, c->cli->config_path, c->cli->data_dir,
	    name, extra, nextra, &fs, out, err, sizeof(err));
	if (r == 0)
		return CLI_EXIT_OK;
	cli_msg("%s", err);
	return r == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_RUNTIME;
}

/* A string member of a JSON object, or NULL. */
static const char *
range_jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The findings of the sink (those about --vital, if given) as text. */
static void
range_sink_findings(const struct range *c, const struct range_sink *s)
{
	const json_t *o;
	const char *vital;
	size_t i, shown = 0;

	json_array_foreach(s->findings, i, o)
	{
		vital = range_jstr(o, "vital");
		if (c->vital != NULL &&
		    (vital == NULL || strcmp(c->vital, vital) != 0))
			continue;
		printf("  [%s] %s  vital %s  label %s  score %.3g  value %.6g"
		       " vs %.6g\n      %s\n",
		    range_jstr(o, "severity"), range_jstr(o, "filter"),
		    cli_dash(vital), cli_dash(range_jstr(o, "label")),
		    json_number_value(json_object_get(o, "score")),
		    json_number_value(json_object_get(o, "value")),
		    json_number_value(json_object_get(o, "expected")),
		    cli_dash(range_jstr(o, "text")));
		shown++;
	}
	if (shown == 0)
		printf("  (no findings)\n");
}

/* Print what a hand-run filter emitted. */
static int
range_sink_print(
    const struct range *c, const struct range_sink *s, const char *title)
{
	const json_t *o;
	size_t i;

	if (c->json)
		return range_dump(json_pack("{s:O, s:O}", "findings",
		    s->findings, "series", s->points));
	printf("%s\n", title);
	range_sink_findings(c, s);
	json_array_foreach(s->points, i, o)
	{
		printf("  series %s/%s %.6g\n", range_jstr(o, "filter"),
		    range_jstr(o, "name"),
		    json_number_value(json_object_get(o, "value")));
	}
	return CLI_EXIT_OK;
}

int
range_filter_once(struct range *c, const char *name,
    const struct config_entry *extra, size_t nextra,
    const struct vitals_epoch *const *v, uint32_t n, const char *title)
{
	struct range_sink sink = { json_array(), json_array() };
	struct vitals_queue q;
	struct handrun *h = NULL;
	int rc;

	rc = range_filter_start(c, name, extra, nextra, &sink, &h);
	if (rc == CLI_EXIT_OK) {
		memset(&q, 0, sizeof(q));
		q.timescale_s = v[n - 1]->timescale_s;
		q.n = n;
		q.epochs = v;
		if (handrun_feed(h, &q, v[n - 1]->host) != 0)
			rc = CLI_EXIT_RUNTIME;
	}
	handrun_stop(h);
	if (rc == CLI_EXIT_OK)
		rc = range_sink_print(c, &sink, title);
	json_decref(sink.findings);
	json_decref(sink.points);
	return rc;
}

/*
 * Whether filter `name` is on the search path: 0 if not, 1 if it is, 2 if
 * it also has an option called `key`.
 */
int
range_installed(const struct range *c, const char *name, const char *key)
{
	const struct config *cfg = c->cli->config;
	const struct vitals_option *o;
	const struct loader_plugin *lp;
	struct loader *l;
	char err[512];
	int r = 0;

	l = loader_new(
	    (const char *const *)cfg->plugin_path.v, cfg->plugin_path.n);
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
