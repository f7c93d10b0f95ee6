/* SPDX-License-Identifier: MIT */
/*
 * `vitals findings`: the findings of a range (the last 24 hours by
 * default), as the configured filters find them through the cached
 * aggregator, or with --stored as vitalsd wrote them into the epochs.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <vitals/aggregate.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "cli.h"
#include "findings.h"
#include "range.h"

/* What --stored gathers: the findings as JSON (NULL: as text), a count. */
struct findings_stored {
	json_t *a;
	size_t n;
};

/* Whether finding f passes --severity and --vital. */
static int
findings_wanted(const struct range *c, const struct vitals_finding *f)
{
	if (f->severity < c->severity)
		return 0;
	return c->vital == NULL ||
	    (f->vital && strcmp(f->vital, c->vital) == 0);
}

/* A finding's two lines: when, timescale, severity, what; its text. */
static void
findings_line(const struct vitals_finding *f, const char *host, int base)
{
	char when[64], ts[32];

	cli_fmt_time(f->start_ns, 0, when, sizeof(when));
	cli_fmt_timescale(f->timescale_s, base, ts, sizeof(ts));
	printf("  %s  %-4s  [%s] %s  host %s  vital %s  label %s  score %.3g"
	       "  value %.6g vs expected %.6g\n",
	    when, ts, cli_severity_name(f->severity), cli_dash(f->filter),
	    cli_dash(host), cli_dash(f->vital), cli_dash(f->label), f->score,
	    f->value, f->expected);
	printf("      %s\n", cli_dash(f->text));
}

void
findings_text(const struct range *c, const struct vitals_agg_result *r)
{
	size_t i, n = 0;

	printf("FINDINGS\n");
	for (i = 0; i < r->nfindings; i++) {
		if (!findings_wanted(c, &r->findings[i].f))
			continue;
		findings_line(&r->findings[i].f, r->findings[i].host,
		    (int)r->findings[i].base);
		n++;
	}
	if (n == 0)
		printf("  (none)\n");
}

json_t *
findings_json(const struct range *c, const struct vitals_agg_result *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < r->nfindings; i++)
		if (findings_wanted(c, &r->findings[i].f))
			json_array_append_new(a,
			    range_finding_json(&r->findings[i].f,
				r->findings[i].host, (int)r->findings[i].base));
	return a;
}

/* The findings vitalsd stored in the epoch of entry that c asks for. */
static void
findings_stored_one(
    struct range *c, const struct vitals_store_entry *entry, void *arg)
{
	struct findings_stored *st = arg;
	const struct vitals_finding *f;
	struct vitals_epoch *e;
	uint32_t k;
	int base;

	if (range_load(entry, &e) != 0)
		return;
	for (k = 0; k < e->nfindings; k++) {
		f = &e->findings[k];
		if (!findings_wanted(c, f))
			continue;
		base = f->timescale_s == e->timescale_s;
		if (st->a != NULL)
			json_array_append_new(
			    st->a, range_finding_json(f, e->host, base));
		else
			findings_line(f, e->host, base);
		st->n++;
	}
	vitals_epoch_free(e);
}

/* The findings vitalsd stored in the epochs of the range. */
static int
findings_stored(struct range *c)
{
	struct findings_stored st = { c->json ? json_array() : NULL, 0 };
	struct vitals_store_list l;

	if (range_list(c, &l) != CLI_EXIT_OK) {
		json_decref(st.a);
		return CLI_EXIT_RUNTIME;
	}
	if (!c->json)
		printf("FINDINGS\n");
	range_each(c, &l, c->from, c->to, 0, findings_stored_one, &st);
	vitals_store_list_free(&l);
	if (!c->json && st.n == 0)
		printf("  (none)\n");
	return c->json ? range_dump(st.a) : CLI_EXIT_OK;
}

/* The findings of the range, found now or (--stored) as stored. */
static int
findings_report(struct range *c)
{
	struct vitals_agg_result *r;
	int rc;

	if ((rc = range_window(c, 86400 * CLI_NS)) != CLI_EXIT_OK)
		return rc;
	if (c->stored)
		return findings_stored(c);
	cli_no_filters_note(c->cli);
	if ((rc = range_aggregate(c, &r)) != CLI_EXIT_OK)
		return rc;
	if (c->json)
		rc = range_dump(findings_json(c, r));
	else
		findings_text(c, r);
	vitals_agg_result_free(r);
	return rc;
}

/* `vitals findings`. */
static int
findings_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, findings_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd findings_cmd = {
	.name = "findings",
	.usage = "  findings [--from T] [--to T] [--severity info|warn|crit] "
		 "[--stored]\n"
		 "      findings of the range (default: the last 24 hours); "
		 "--stored:\n"
		 "      those vitalsd wrote into the epochs\n",
	.flag = CLI_FINDINGS,
	.run = findings_run,
};
