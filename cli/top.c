/* SPDX-License-Identifier: MIT */
/*
 * `vitals top`: the heaviest labels and exes of a range, ranked by the
 * topk filter if it is installed, else from the HCA and samples of the
 * range rolled into one epoch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "cli.h"
#include "config.h"
#include "range.h"

/* A label (HCA slot) or an exe and its weight. */
struct top_item {
	uint64_t count;
	uint32_t slot;
	const struct vitals_sample *s; /* the sample standing for it */
	const char *exe;
};

/* Order items by count, largest first, then by exe or slot. */
static int
top_item_cmp(const void *x, const void *y)
{
	const struct top_item *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->exe != NULL && b->exe != NULL)
		return strcmp(a->exe, b->exe);
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The sample of slot i with the largest count, or NULL. */
static const struct vitals_sample *
top_slot_sample(const struct vitals_vital_epoch *v, uint32_t slot)
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
static struct top_item *
top_slots(const struct vitals_vital_epoch *v, size_t *n)
{
	struct top_item *it;
	uint32_t i;

	*n = 0;
	if ((it = calloc(v->hca_size + 1, sizeof(*it))) == NULL)
		return NULL;
	for (i = 0; v->hca != NULL && i < v->hca_size; i++) {
		if (v->hca[i] == 0)
			continue;
		it[*n].count = v->hca[i];
		it[*n].slot = i;
		it[*n].s = top_slot_sample(v, i);
		(*n)++;
	}
	qsort(it, *n, sizeof(*it), top_item_cmp);
	return it;
}

/* Exes by the counts of the slots their samples stand for. */
static struct top_item *
top_exes(const struct top_item *slots, size_t ns, size_t *n)
{
	struct top_item *ex;
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
	qsort(ex, *n, sizeof(*ex), top_item_cmp);
	return ex;
}

/* An item as a JSON object (new, or NULL); wsum is its vital's. */
static json_t *
top_item_json(const struct top_item *it, uint64_t wsum, int is_exe)
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

/* An item's line, ranked rank; wsum is its vital's. */
static void
top_item_text(const struct top_item *it, size_t rank, uint64_t wsum, int is_exe)
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
		printf("%s (%s) label 0x%" PRIx64 "\n", cli_dash(it->s->exe),
		    cli_dash(it->s->comm), it->s->label);
	else
		printf("(no sample)\n");
}

/* One vital's top labels and exes, as text or into obj. */
static int
top_vital(
    const struct range *c, const struct vitals_vital_epoch *v, json_t *obj)
{
	struct top_item *sl, *ex = NULL;
	size_t ns, nx = 0, i;
	json_t *o = NULL, *a, *b;

	if ((sl = top_slots(v, &ns)) == NULL ||
	    (ex = top_exes(sl, ns, &nx)) == NULL) {
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
			    a, top_item_json(&sl[i], v->wsum, 0));
		for (i = 0; o != NULL && i < nx && i < c->k; i++)
			json_array_append_new(
			    b, top_item_json(&ex[i], v->wsum, 1));
		json_object_set_new(obj, v->name, o);
	} else {
		printf("\n%s (unit %s): %" PRIu64
		       " events, weighted sum %" PRIu64 "\n  TOP LABELS\n",
		    v->name, cli_dash(v->unit), v->events, v->wsum);
		for (i = 0; i < ns && i < c->k; i++)
			top_item_text(&sl[i], i + 1, v->wsum, 0);
		printf("  TOP EXES\n");
		for (i = 0; i < nx && i < c->k; i++)
			top_item_text(&ex[i], i + 1, v->wsum, 1);
	}
	free(sl);
	free(ex);
	return 0;
}

/* Top labels and exes computed from the rollup's HCA and samples. */
static int
top_direct(const struct range *c, const struct vitals_epoch *e)
{
	json_t *o = c->json ? json_object() : NULL, *j;
	char a[64], b[64];
	uint32_t i;
	int r = 0;

	cli_fmt_time(e->start_ns, 0, a, sizeof(a));
	cli_fmt_time(
	    e->start_ns + (uint64_t)e->timescale_s * CLI_NS, 0, b, sizeof(b));
	if (!c->json)
		printf("TOP %s .. %s  host %s\n", a, b, e->host);
	for (i = 0; i < e->nvitals && r == 0; i++)
		if (range_vital_wanted(c, e->vitals[i].name))
			r = top_vital(c, &e->vitals[i], o);
	if (!c->json)
		return r == 0 ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
	j = json_pack("{s:s, s:s, s:s, s:s, s:o}", "from", a, "to", b, "host",
	    e->host, "source", "samples", "vitals", o);
	return range_dump(j);
}

/* Rank the range rolled into e with the topk filter; has_k: it takes k. */
static int
top_filter(struct range *c, const struct vitals_epoch *e, int has_k)
{
	struct config_entry k[2];
	char kbuf[32];
	size_t nk = 0;

	/* -k N becomes the filter's own k, if it has one. */
	memset(k, 0, sizeof(k));
	snprintf(kbuf, sizeof(kbuf), "%zu", c->k);
	if (has_k)
		k[nk++] = (struct config_entry){ .key = "k", .scalar = kbuf };
	/* The range is one epoch of its own length: rank it whatever that
	 * length. */
	if (range_installed(c, "topk", "min_timescale") == 2)
		k[nk++] = (struct config_entry){ .key = "min_timescale",
			.scalar = "0" };
	return range_filter_once(c, "topk", k, nk, &e, 1, "TOP (topk filter)");
}

/* The heaviest labels and exes of the range (the last hour by default). */
static int
top_report(struct range *c)
{
	struct vitals_epoch *e;
	int rc, topk;

	if (c->k == 0)
		c->k = 10;
	if ((rc = range_window(c, 3600 * CLI_NS)) != CLI_EXIT_OK ||
	    (rc = range_rollup(c, c->from, c->to, &e)) != CLI_EXIT_OK)
		return rc;
	if (c->vital != NULL && vitals_epoch_vital(e, c->vital) == NULL) {
		cli_msg("no vital %s in the range", c->vital);
		vitals_epoch_free(e);
		return CLI_EXIT_RUNTIME;
	}
	if (c->direct || (topk = range_installed(c, "topk", "k")) == 0)
		rc = top_direct(c, e);
	else
		rc = top_filter(c, e, topk == 2);
	vitals_epoch_free(e);
	return rc;
}

/* `vitals top`. */
static int
top_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, top_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd top_cmd = {
	.name = "top",
	.usage = "  top [--vital V] [--from T] [--to T] [-k N] [--no-filter] "
		 "[--json]\n"
		 "      heaviest labels and exes of the range (the topk filter "
		 "if\n"
		 "      installed, else from the samples; default the last "
		 "hour)\n",
	.flag = CLI_TOP,
	.run = top_run,
};
