/* SPDX-License-Identifier: MIT */
/*
 * A third-party filter built out of the tree against the installed SDK
 * (tests/sdk.sh): flags any vital whose events exceed a limit.  Its check
 * callback refuses a limit below 1, for vitalsd --check-config and init.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <vitals/vitals.h>

struct myfilter_config {
	int64_t limit;
};

struct myfilter {
	struct vitals_ctx *ctx;
	const struct myfilter_config *cfg;
};

static const struct vitals_option myfilter_options[] = {
	{ "limit", VITALS_OPT_INT, offsetof(struct myfilter_config, limit),
	    "1000", "events per epoch above which a vital is flagged", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 },
};

/* Values the option table does not bound; no side effects. */
static int
myfilter_check(const void *config, char *why, size_t len)
{
	const struct myfilter_config *cfg = config;

	if (cfg->limit < 1) {
		snprintf(why, len,
		    "option 'limit' must be at least 1, "
		    "not %lld",
		    (long long)cfg->limit);
		return -EINVAL;
	}
	return 0;
}

static int
myfilter_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	struct myfilter *m;
	int r;

	m = vitals_init_state(ctx, myfilter_check, config, sizeof(*m), &r);
	if (m == NULL)
		return r;
	m->ctx = ctx;
	m->cfg = config;
	*state = m;
	return 0;
}

static void
myfilter_fini(void *state)
{
	free(state);
}

static int
myfilter_epoch(void *state, const struct vitals_queue *q)
{
	struct myfilter *m = state;
	const struct vitals_epoch *e = vitals_queue_newest(q);
	struct vitals_finding f = { 0 };
	char text[160];
	uint32_t i;

	for (i = 0; i < e->nvitals; i++) {
		if (e->vitals[i].events <= (uint64_t)m->cfg->limit)
			continue;
		snprintf(text, sizeof(text),
		    "%s: %llu events over the limit %lld", e->vitals[i].name,
		    (unsigned long long)e->vitals[i].events,
		    (long long)m->cfg->limit);
		f.start_ns = e->start_ns;
		f.severity = VITALS_SEV_INFO;
		f.value = (double)e->vitals[i].events;
		f.expected = (double)m->cfg->limit;
		f.score = f.value / f.expected;
		f.vital = e->vitals[i].name;
		f.text = text;
		vitals_queue_emit(m->ctx, q, &f);
	}
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct myfilter_config),
	.name = "myfilter",
	.version = "0.1",
	.description = "third-party example: flags vitals over an event limit",
	.options = myfilter_options,
	.init = myfilter_init,
	.fini = myfilter_fini,
	.epoch = myfilter_epoch,
	.check = myfilter_check,
};
