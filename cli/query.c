/* SPDX-License-Identifier: MIT */
/*
 * `vitals query`: a range through the cached aggregator, per-slot totals
 * (events, weighted sum per vital), the findings and the series of the
 * configured filters, at each timescale.
 */
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>
#include <vitals/aggregate.h>

#include "cli.h"
#include "findings.h"
#include "range.h"

/* One slot: start, timescale, host, epochs, each vital's totals. */
static void
query_slot_text(const struct range *c, const struct vitals_agg_slot *s)
{
	char when[64], ts[32];
	uint32_t i;

	cli_fmt_time(s->start_ns, 0, when, sizeof(when));
	cli_fmt_timescale(s->timescale_s, (int)s->base, ts, sizeof(ts));
	printf("  %s  %-4s  %-12s %4u", when, ts, s->host, s->nepochs);
	for (i = 0; i < s->nvitals; i++)
		if (range_vital_wanted(c, s->vitals[i].name))
			printf("  %s %" PRIu64 "/%" PRIu64, s->vitals[i].name,
			    s->vitals[i].events, s->vitals[i].wsum);
	printf("\n");
}

/* The filters' series points. */
static void
query_points_text(const struct vitals_agg_result *r)
{
	const struct vitals_agg_point *p;
	char when[64], ts[32];
	size_t i;

	if (r->npoints > 0)
		printf("\nFILTER SERIES (filter/name, host, timescale, time, "
		       "value)\n");
	for (i = 0; i < r->npoints; i++) {
		p = &r->points[i];
		cli_fmt_time(p->ts_ns, 0, when, sizeof(when));
		cli_fmt_timescale(p->timescale_s, (int)p->base, ts, sizeof(ts));
		printf("  %s/%s  %s  %s  %s  %.6g\n", p->filter, p->name,
		    cli_dash(p->host), ts, when, p->value);
	}
}

/* The report as text: the query, series, findings, filter series. */
static void
query_text(const struct range *c, const struct vitals_agg_result *r)
{
	char from[64], to[64], ts[32];
	size_t i;

	cli_fmt_time(r->from_ns, 0, from, sizeof(from));
	cli_fmt_time(r->to_ns, 0, to, sizeof(to));
	printf(
	    "QUERY %s .. %s  (%s)\n  timescales", from, to, c->cli->data_dir);
	for (i = 0; i < r->ntimescales; i++) {
		cli_fmt_timescale(
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
		query_slot_text(c, &r->slots[i]);
	if (r->nslots == 0)
		printf("  (no epochs in the range)\n");
	printf("\n");
	findings_text(c, r);
	query_points_text(r);
}

/* One slot as a JSON object (new, or NULL). */
static json_t *
query_slot_json(const struct range *c, const struct vitals_agg_slot *s)
{
	char when[64];
	json_t *o, *v;
	uint32_t i;

	cli_fmt_time(s->start_ns, 0, when, sizeof(when));
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

/* The filters' series points as a JSON array (new, or NULL). */
static json_t *
query_points_json(const struct vitals_agg_result *r)
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

/* The report as a JSON object (new, or NULL). */
static json_t *
query_json(const struct range *c, const struct vitals_agg_result *r)
{
	json_t *o, *ts, *slots;
	char from[64], to[64], buf[32];
	size_t i;

	cli_fmt_time(r->from_ns, 0, from, sizeof(from));
	cli_fmt_time(r->to_ns, 0, to, sizeof(to));
	o = json_pack("{s:s, s:s, s:I, s:I, s:[], s:[], s:o, s:o, s:I,"
		      " s:{s:s?, s:I, s:I, s:I, s:I}}",
	    "from", from, "to", to, "from_ns", (json_int_t)r->from_ns, "to_ns",
	    (json_int_t)r->to_ns, "timescales", "slots", "findings",
	    findings_json(c, r), "series", query_points_json(r), "epochs_read",
	    (json_int_t)r->epochs_read, "cache", "dir", r->cache_dir, "hits",
	    (json_int_t)r->cache_hits, "misses", (json_int_t)r->cache_misses,
	    "rollup_hits", (json_int_t)r->rollup_hits, "rollup_misses",
	    (json_int_t)r->rollup_misses);
	ts = json_object_get(o, "timescales");
	slots = json_object_get(o, "slots");
	for (i = 0; o != NULL && i < r->ntimescales; i++) {
		cli_fmt_timescale(
		    r->timescales[i], r->timescales[i] == 0, buf, sizeof(buf));
		json_array_append_new(ts, json_string(buf));
	}
	for (i = 0; o != NULL && i < r->nslots; i++)
		json_array_append_new(slots, query_slot_json(c, &r->slots[i]));
	return o;
}

/* The report of the range (the last hour by default). */
static int
query_report(struct range *c)
{
	struct vitals_agg_result *r;
	int rc;

	if ((rc = range_window(c, 3600 * CLI_NS)) != CLI_EXIT_OK)
		return rc;
	cli_no_filters_note(c->cli);
	if ((rc = range_aggregate(c, &r)) != CLI_EXIT_OK)
		return rc;
	if (c->json)
		rc = range_dump(query_json(c, r));
	else
		query_text(c, r);
	vitals_agg_result_free(r);
	return rc;
}

/* `vitals query`. */
static int
query_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, query_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd query_cmd = {
	.name = "query",
	.usage = "  query [--from T] [--to T] [--timescale TS]... [--vital V]\n"
		 "        [--filter NAME]... [--host H]... [--json] "
		 "[--no-cache]\n"
		 "      per-slot totals (events, weighted sum per vital), "
		 "findings and\n"
		 "      series of the configured filters at each timescale "
		 "(default:\n"
		 "      the last hour, the base and every timescale no longer "
		 "than it)\n",
	.flag = CLI_QUERY,
	.run = query_run,
};
