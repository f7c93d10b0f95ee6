/* SPDX-License-Identifier: MIT */
/*
 * topk: what dominated.  For each vital of each epoch at least
 * min_timescale long (by default the hourly and longer rollups, so that a
 * range query is not flooded with per-minute rankings) it emits one INFO
 * finding per top-k exe (or label) with its share of the vital's weight,
 * attributed from the samples in each HCA slot.  The finding fields are
 * stable: `vitals top` reads them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "labels.h"

#define TOPK_MAX 100

struct topk_config {
	int64_t k; /* findings per vital and epoch */
	struct vitals_strlist vitals; /* empty = all */
	char *by; /* "exe" or "label" */
	double min_share; /* smaller shares are not reported */
	uint64_t min_timescale; /* ns; shorter epochs are not ranked */
};

#define TOPK_OFF(m) offsetof(struct topk_config, m)

/* clang-format off */
static const struct vitals_option topk_options[] = {
	{ .key = "k", .type = VITALS_OPT_INT, .offset = TOPK_OFF(k),
	    .def = "5", .help = "exes (or labels) reported per vital and epoch",
	    .min = 1, .max = TOPK_MAX },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = TOPK_OFF(vitals), .def = NULL,
	    .help = "vitals to rank (default: all)" },
	{ .key = "by", .type = VITALS_OPT_STRING, .offset = TOPK_OFF(by),
	    .def = "exe",
	    .help = "rank by 'exe' (exe path, else comm, else hex label) or "
	    "by 'label' (hex label)" },
	{ .key = "min_share", .type = VITALS_OPT_DOUBLE,
	    .offset = TOPK_OFF(min_share), .def = "0",
	    .help = "leave out entries with a smaller share (0..1)",
	    .min = 0, .max = 1 },
	{ .key = "min_timescale", .type = VITALS_OPT_DURATION,
	    .offset = TOPK_OFF(min_timescale), .def = "1h",
	    .help = "rank only epochs of this timescale or longer (base "
	    "epochs count as their length; 0 = every epoch)" },
	{ .key = NULL }
};
/* clang-format on */

struct topk {
	struct vitals_ctx *ctx;
	const struct topk_config *cf;
	int by; /* LABELS_BY_* */
	uint64_t base_ns;
};

/*
 * "cpu #1: /usr/bin/ssh had 42.1% of the weight (1234 samples of 2931
 * samples)", and for labels the exe they belong to.
 */
static void
topk_text(const struct topk *t, const struct vitals_vital_epoch *ve,
    const struct labels *l, uint32_t rank, char *text, size_t len)
{
	const struct labels_entry *e = &l->v[rank];
	char w[48], total[48];

	snprintf(text, len, "%s #%u: %s had %.1f%% of the weight (%s of %s)",
	    ve->name, rank + 1, e->name, 100 * e->weight / l->total,
	    labels_fmt(e->weight, ve->unit, w, sizeof(w)),
	    labels_fmt(l->total, ve->unit, total, sizeof(total)));
	if (t->by == LABELS_BY_LABEL && e->rep->exe != NULL &&
	    e->rep->exe[0] != '\0')
		snprintf(text + strlen(text), len - strlen(text), " in %s",
		    e->rep->exe);
}

static int
topk_vital(struct topk *t, const struct vitals_queue *q,
    const struct vitals_vital_epoch *ve)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct labels_how how = { t->by, labels_runs(ep, t->base_ns), NULL,
		NULL };
	struct vitals_finding f = { 0 };
	struct labels l;
	char text[1024];
	uint32_t i;
	int rc;

	if (ve->wsum == 0)
		return 0;
	if ((rc = labels_collect(ve, &how, &l)) != 0)
		return rc;
	f.start_ns = ep->start_ns;
	f.severity = VITALS_SEV_INFO;
	f.expected = l.total;
	f.vital = ve->name;
	f.text = text;
	for (i = 0; i < l.n && i < (uint32_t)t->cf->k && rc == 0; i++) {
		f.score = l.v[i].weight / l.total;
		if (f.score < t->cf->min_share || l.v[i].weight <= 0)
			break;
		f.value = l.v[i].weight;
		f.label = l.v[i].name;
		topk_text(t, ve, &l, i, text, sizeof(text));
		rc = vitals_queue_emit(t->ctx, q, &f);
	}
	labels_free(&l);
	return rc;
}

/*
 * Stateless: the newest epoch of the queue is ranked on its own, when its
 * timescale is long enough.
 */
static int
topk_epoch(void *state, const struct vitals_queue *q)
{
	struct topk *t = state;
	const struct vitals_vital_epoch *ve = NULL;
	int rc = 0;

	if ((uint64_t)q->timescale_s * 1000000000ull < t->cf->min_timescale)
		return 0;
	while ((ve = vitals_queue_next_vital(q, &t->cf->vitals, ve)) != NULL)
		if (topk_vital(t, q, ve) != 0)
			rc = -ENOMEM;
	return rc;
}

static void
topk_fini(void *state)
{
	free(state);
}

/* The bounds again (a mock core may skip the table's), and `by`. */
static int
topk_check(const void *config, char *why, size_t len)
{
	const struct topk_config *cf = config;
	int by;

	if (cf->k < 1 || cf->k > TOPK_MAX) {
		snprintf(
		    why, len, "option 'k' is out of range (1..%d)", TOPK_MAX);
		return -EINVAL;
	}
	if (!(cf->min_share >= 0 && cf->min_share <= 1)) {
		snprintf(why, len, "option 'min_share' is out of range (0..1)");
		return -EINVAL;
	}
	return labels_by(cf->by, &by, why, len);
}

static int
topk_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct topk_config *cf = config;
	struct topk *t;
	int r;

	t = vitals_init_state(ctx, topk_check, config, sizeof(*t), &r);
	if (t == NULL)
		return r;
	t->ctx = ctx;
	t->cf = cf;
	labels_by(cf->by, &t->by, NULL, 0);
	t->base_ns = vitals_settings(ctx)->epoch_ns;
	*state = t;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct topk_config),
	.name = "topk",
	.version = "0.2.0",
	.description = "top exes or labels of each vital with their share",
	.options = topk_options,
	.init = topk_init,
	.fini = topk_fini,
	.epoch = topk_epoch,
	.check = topk_check,
};
