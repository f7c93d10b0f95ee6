/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the diff filter, linked in directly with the mock core:
 * table-driven baseline and new epochs written as short specs go through
 * vitals_plugin.epoch as one queue, and the findings are checked.
 */
#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define HCA 16
#define MAXS 16
#define NFAKE 24
#define BASE_NS 1700000000000000000ULL

static const char *const vital_names[] = { "cpu", "diskio", "sched" };
static const char *const vital_units[] = { "samples", "bytes", "ns" };
#define NV 3

/* One hand-made epoch; only the vitals its spec names are present. */
struct fake {
	struct vitals_epoch e;
	struct vitals_vital_epoch v[NV];
	uint64_t hca[NV][HCA];
	struct vitals_sample s[NV][MAXS];
	uint64_t k[NV][MAXS];
	const char *ksyms[NV][MAXS];
	char exe[NV][MAXS][32], site[NV][MAXS][48];
	uint32_t ns[NV]; /* samples per vital */
	uint32_t base; /* base epoch of the samples being added ("base=") */
	int roll; /* a rollup ("roll") */
	uint64_t wsum[NV], events[NV];
	int present[NV];
};

static struct fake fakes[NFAKE];
static const struct vitals_epoch *queue[NFAKE];
static void *cfg, *st;

static uint32_t
fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int
vital_index(const char *name, size_t len)
{
	int i;

	for (i = 0; i < NV; i++)
		if (strlen(vital_names[i]) == len &&
		    strncmp(vital_names[i], name, len) == 0)
			return i;
	ck_abort_msg("unknown vital %.*s", (int)len, name);
	return -1;
}

/*
 * One token of a spec: "len=S" (epoch length in seconds, default 60),
 * "roll" (a rollup of 60 s base epochs: its timescale is its length),
 * "base=N" (later samples are in base epoch N of the rollup), "vital"
 * (present, empty), "vital:#SLOT=W" (weight no sample was kept for), or
 * "vital:EXE@SITE#SLOT=W[^COUNT]": W added to the slot and one sample
 * whose count is the counter after it (or COUNT); a SITE of "0x..." has
 * no symbol, "-" means no stack.  A sample's label is a hash of its
 * site, its exe_id a hash of its exe, as a probe would set them.
 */
static void
token(struct fake *f, const char *tok)
{
	const char *colon = strchr(tok, ':'), *at, *hash, *eq, *caret;
	struct vitals_sample *s;
	uint32_t slot, n;
	uint64_t w;
	int v;

	if (strncmp(tok, "len=", 4) == 0) {
		f->e.length_ns = strtoull(tok + 4, NULL, 10) * 1000000000ULL;
		return;
	}
	if (strcmp(tok, "roll") == 0) {
		f->roll = 1;
		return;
	}
	if (strncmp(tok, "base=", 5) == 0) {
		f->base = (uint32_t)strtoul(tok + 5, NULL, 10);
		return;
	}
	v = vital_index(tok, colon ? (size_t)(colon - tok) : strlen(tok));
	f->present[v] = 1;
	if (colon == NULL)
		return;
	hash = strchr(colon, '#');
	eq = strchr(colon, '=');
	ck_assert(hash != NULL && eq != NULL);
	slot = (uint32_t)strtoul(hash + 1, NULL, 10);
	w = strtoull(eq + 1, NULL, 10);
	f->hca[v][slot] += w;
	f->wsum[v] += w;
	f->events[v]++;
	if (hash == colon + 1)
		return;
	ck_assert_uint_lt(n = f->ns[v]++, MAXS);
	s = &f->s[v][n];
	at = strchr(colon, '@');
	snprintf(f->exe[v][n], sizeof(f->exe[v][n]), "%.*s",
	    (int)(at - colon - 1), colon + 1);
	snprintf(f->site[v][n], sizeof(f->site[v][n]), "%.*s",
	    (int)(hash - at - 1), at + 1);
	s->exe = f->exe[v][n];
	s->comm = "";
	s->exe_id = fnv(f->exe[v][n]);
	s->label = fnv(f->site[v][n]);
	s->ts_ns = f->base * 60000000000ULL + n; /* from the epoch's start */
	s->slot = slot;
	s->weight = w;
	caret = strchr(eq, '^');
	s->count = caret ? strtoull(caret + 1, NULL, 10) : f->hca[v][slot];
	if (strcmp(f->site[v][n], "-") != 0) {
		s->nkstack = 1;
		s->kstack = &f->k[v][n];
		s->ksyms = &f->ksyms[v][n];
		f->k[v][n] = strncmp(f->site[v][n], "0x", 2) == 0
		    ? strtoull(f->site[v][n], NULL, 16)
		    : 0xffffffff81000000ULL + n;
		f->ksyms[v][n] =
		    strncmp(f->site[v][n], "0x", 2) == 0 ? "" : f->site[v][n];
	}
}

/* Epoch i of the queue from a spec of space-separated tokens. */
static const struct vitals_epoch *
make(unsigned i, const char *spec)
{
	struct fake *f = &fakes[i];
	char buf[512], *tok, *save = NULL;
	uint64_t start = BASE_NS;
	uint32_t n;
	int v;

	ck_assert_uint_lt(i, NFAKE);
	memset(f, 0, sizeof(*f));
	f->e.host = "mockhost";
	f->e.timescale_s = 60;
	f->e.length_ns = 60000000000ULL;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save))
		token(f, tok);
	for (v = 0; v < NV; v++) {
		if (!f->present[v])
			continue;
		f->v[f->e.nvitals++] =
		    (struct vitals_vital_epoch){ .name = vital_names[v],
			    .unit = vital_units[v],
			    .hca_size = HCA,
			    .hca = f->hca[v],
			    .wsum = f->wsum[v],
			    .events = f->events[v],
			    .nsamples = f->ns[v],
			    .samples = f->s[v] };
	}
	f->e.vitals = f->v;
	if (i > 0)
		start = fakes[i - 1].e.start_ns + fakes[i - 1].e.length_ns;
	f->e.start_ns = start;
	f->e.seq = i;
	if (f->roll)
		f->e.timescale_s = (uint32_t)(f->e.length_ns / 1000000000ULL);
	for (v = 0; v < NV; v++)
		for (n = 0; n < f->ns[v]; n++)
			f->s[v][n].ts_ns += start;
	return &f->e;
}

/*
 * Start the filter with defaults overridden by NULL-terminated pairs.  The
 * floors are off (the hand-made rates are small) and persist is 1, as
 * `vitals diff` compares two ranges, unless kv sets them.
 */
static void
start(const char *const *kv)
{
	static const char *const dflt[] = { "floor", "*=0", "persist", "1",
		NULL };

	cfg = contract_config(&vitals_plugin, dflt, kv);
	ck_assert_int_eq(vitals_plugin.init(mock_ctx("diff"), cfg, &st), 0);
}

static void
setup(void)
{
	cfg = st = NULL;
}

static void
teardown(void)
{
	contract_stop(&vitals_plugin, cfg, st);
}

struct want {
	const char *vital, *label;
	double share, value, expected; /* rates per second */
	const char *text; /* in the finding's text */
};

#define A2 "cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=600"

static const struct {
	const char *name;
	const char *base[7]; /* baseline epochs, oldest first, NULL-ended */
	const char *news; /* the newest epoch */
	const char *opts[5]; /* option pairs */
	unsigned n; /* findings */
	struct want w[2]; /* the first ones, in order */
} cases[] = {
	{ "unchanged", { A2, A2, A2 }, A2, { NULL }, 0, { { NULL } } },
	{ "no baseline", { NULL }, A2, { NULL }, 0, { { NULL } } },
	{ "one exe grows", { A2, A2 },
	    "cpu:/bin/a@foo#1=1200 cpu:/bin/b@bar#2=3000", { NULL }, 2,
	    { { "cpu", "/bin/b", 0.8, 50, 10,
		  "cpu +250% vs baseline (20 -> 70 samples/s): /bin/b "
		  "accounts for 80% of the increase (site bar)" },
		{ "cpu", "/bin/a", 0.2, 20, 10,
		    "/bin/a accounts for 20% of "
		    "the increase (site foo)" } } },
	{ "top 1", { A2 }, "cpu:/bin/a@foo#1=1200 cpu:/bin/b@bar#2=3000",
	    { "top", "1" }, 1, { { "cpu", "/bin/b", 0.8, 50, 10, NULL } } },
	{ "min_share 0.5", { A2 },
	    "cpu:/bin/a@foo#1=1200 cpu:/bin/b@bar#2=3000",
	    { "min_share", "0.5" }, 1,
	    { { "cpu", "/bin/b", 0.8, 50, 10, NULL } } },
	{ "decrease", { "cpu:/bin/a@foo#1=6000 cpu:/bin/b@bar#2=600" }, A2,
	    { NULL }, 1,
	    { { "cpu", "/bin/a", 1.0, 10, 100,
		"cpu -82% vs baseline (110 -> 20 samples/s): /bin/a accounts "
		"for 100% of the decrease (site foo)" } } },
	{ "vital only in the new epoch", { "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600 "
	    "diskio:/usr/bin/fio@blk_mq_submit_bio+0x1a#3=60000",
	    { NULL }, 1,
	    { { "diskio", "/usr/bin/fio", 1.0, 1000, 0,
		"diskio appeared: none in the baseline, now 1k bytes/s: "
		"/usr/bin/fio accounts for 100% of the increase (site "
		"blk_mq_submit_bio)" } } },
	{ "vital only in the baseline", { A2 " diskio:/usr/bin/fio@x#3=600" },
	    A2, { NULL }, 0, { { NULL } } },
	{ "vitals option", { "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600 diskio:/usr/bin/fio@x#3=60000",
	    { "vitals", "cpu,sched" }, 0, { { NULL } } },
	{ "lengths differ, same rate",
	    { "len=60 cpu:/bin/a@foo#1=600", "len=30 cpu:/bin/a@foo#1=300" },
	    "len=120 cpu:/bin/a@foo#1=1200", { NULL }, 0, { { NULL } } },
	{ "lengths differ, rate doubled", { "len=60 cpu:/bin/a@foo#1=600" },
	    "len=30 cpu:/bin/a@foo#1=600", { NULL }, 1,
	    { { "cpu", "/bin/a", 1.0, 20, 10, "cpu +100% vs baseline" } } },
	{ "under min_change", { "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=840", { NULL }, 0, { { NULL } } },
	{ "min_change 0.3", { "cpu:/bin/a@foo#1=600" }, "cpu:/bin/a@foo#1=840",
	    { "min_change", "0.3" }, 1,
	    { { "cpu", "/bin/a", 1.0, 14, 10, "+40%" } } },
	{ "min_rate", { "cpu:/bin/a@foo#1=60" }, "cpu:/bin/a@foo#1=600",
	    { "min_rate", "20" }, 0, { { NULL } } },
	/*
	 * With a floor of 100/s, a change is explained from a tenth of it
	 * (min_info 0.1): +9/s is not, +11/s is; min_info 0 explains all.
	 */
	{ "under min_info", { "cpu:/bin/a@foo#1=600" }, "cpu:/bin/a@foo#1=1140",
	    { "floor", "cpu=100" }, 0, { { NULL } } },
	{ "min_info 0", { "cpu:/bin/a@foo#1=600" }, "cpu:/bin/a@foo#1=1140",
	    { "floor", "cpu=100", "min_info", "0" }, 1,
	    { { "cpu", "/bin/a", 1.0, 19, 10, "+90%" } } },
	{ "over min_info", { "cpu:/bin/a@foo#1=600" }, "cpu:/bin/a@foo#1=1260",
	    { "floor", "cpu=100" }, 1,
	    { { "cpu", "/bin/a", 1.0, 21, 10, "+110%" } } },
	/*
	 * c collides with a in slot 1: they share its 3000 by their highest
	 * counts, 600 and 3000, so a 500 and c 2500 (+2500 of a +2400 rise).
	 */
	{ "collision", { A2 },
	    "cpu:/bin/a@foo#1=600 cpu:/bin/c@baz#1=2400 cpu:/bin/b@bar#2=600",
	    { NULL }, 1,
	    { { "cpu", "/bin/c", 2500.0 / 2400, 2500.0 / 60, 0,
		"(site baz)" } } },
	/*
	 * Two base epochs rolled up: the counts of slot 1 restart, so a
	 * counts 600 + 1200 and c 3000 + 600 (3600) of the 4800: a 1600,
	 * c 3200 (a change of +30/s, c's +26.7/s; a's +3.3/s, +33%, is the
	 * second finding).  c's sample in the
	 * second is a first sighting after a's 1200 (no power of two in
	 * (1200, 1800]): it stands for its weight, 600, not the count.
	 */
	{ "rollup", { "len=120 roll cpu:/bin/a@foo#1=1200^1200" },
	    "len=120 roll cpu:/bin/a@foo#1=600^600 cpu:/bin/c@baz#1=2400^3000 "
	    "base=1 cpu:/bin/a@foo#1=1200^1200 cpu:/bin/c@baz#1=600^1800",
	    { NULL }, 2,
	    { { "cpu", "/bin/c", 4800.0 * 3600 / 5400 / 120 / 30,
		4800.0 * 3600 / 5400 / 120, 0, NULL } } },
	{ "unsampled weight", { "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600 cpu:#7=1800", { NULL }, 1,
	    { { "cpu", "(unattributed)", 1.0, 30, 0,
		"(unattributed) accounts for 100% of the increase" } } },
	{ "one exe, two sites", { "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600 cpu:/bin/a@bar#2=1800", { NULL }, 1,
	    { { "cpu", "/bin/a", 1.0, 40, 10, "(site bar)" } } },
	{ "by site", { A2 }, A2 " cpu:/bin/b@qux#3=2400", { "by", "site" }, 1,
	    { { "cpu", "qux", 1.0, 40, 0,
		"qux accounts for 100% of the "
		"increase (exe /bin/b)" } } },
	{ "unsymbolized site", { "sched:/bin/b@-#1=5" },
	    "sched:/bin/b@-#1=5 sched:/bin/b@0xffffffff81abcdef#2=600",
	    { NULL }, 1,
	    { { "sched", "/bin/b", 1.0, 605.0 / 60, 5.0 / 60,
		"(site 0xffffffff81abcdef)" } } },
	{ "baseline all", { "cpu:/bin/a@foo#1=6000", "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600", { NULL }, 1,
	    { { "cpu", "/bin/a", 1.0, 10, 55, "-82%" } } },
	/*
	 * A burst of b that is over: its epochs are off the baseline's
	 * median rate (10/s) by more than min_change and left out, so the
	 * return to normal is no change.  While it lasts it is reported.
	 */
	{ "burst over",
	    { "cpu:/bin/a@foo#1=600", "cpu:/bin/a@foo#1=600",
		"cpu:/bin/a@foo#1=600", "cpu:/bin/a@foo#1=600",
		"cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=6000",
		"cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=6000" },
	    "cpu:/bin/a@foo#1=600", { NULL }, 0, { { NULL } } },
	{ "burst going on",
	    { "cpu:/bin/a@foo#1=600", "cpu:/bin/a@foo#1=600",
		"cpu:/bin/a@foo#1=600", "cpu:/bin/a@foo#1=600",
		"cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=6000" },
	    "cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=6000", { NULL }, 1,
	    { { "cpu", "/bin/b", 1.0, 100, 0, "cpu +1000% vs baseline" } } },
	{ "baseline 1", { "cpu:/bin/a@foo#1=6000", "cpu:/bin/a@foo#1=600" },
	    "cpu:/bin/a@foo#1=600", { "baseline", "1" }, 0, { { NULL } } },
	{ "two vitals change", { A2 " diskio:/usr/bin/fio@x#3=6000" },
	    A2 " cpu:/bin/b@bar#2=1800 diskio:/usr/bin/fio@x#3=600", { NULL },
	    2,
	    { { "cpu", "/bin/b", 1.0, 40, 10, "increase" },
		{ "diskio", "/usr/bin/fio", 1.0, 10, 100, "decrease" } } },
};

START_TEST(table)
{
	const struct vitals_finding *f;
	struct vitals_queue q = { .timescale_s = 60, .epochs = queue };
	const struct want *w;
	unsigned i;
	int floored = 0; /* the cases that set a floor rise under it */

	for (i = 0; cases[_i].opts[i] != NULL; i += 2)
		floored |= strcmp(cases[_i].opts[i], "floor") == 0;
	start(cases[_i].opts);
	for (i = 0; cases[_i].base[i] != NULL; i++)
		queue[i] = make(i, cases[_i].base[i]);
	queue[i] = make(i, cases[_i].news);
	q.n = i + 1;
	ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
	ck_assert_msg(mock_nfindings() == cases[_i].n,
	    "%s: %u findings, first: %s", cases[_i].name, mock_nfindings(),
	    mock_nfindings() ? mock_finding(0)->text : "");
	for (i = 0; i < cases[_i].n && i < 2; i++) {
		w = &cases[_i].w[i];
		if (w->vital == NULL)
			break;
		f = mock_finding(i);
		ck_assert_str_eq(f->filter, "diff");
		ck_assert_str_eq(f->vital, w->vital);
		ck_assert_str_eq(f->label, w->label);
		ck_assert_msg(fabs(f->score - w->share) < 1e-9,
		    "%s: share %g, expected %g", cases[_i].name, f->score,
		    w->share);
		ck_assert_double_eq_tol(f->value, w->value, 1e-9);
		ck_assert_double_eq_tol(f->expected, w->expected, 1e-9);
		ck_assert_uint_eq(f->start_ns, queue[q.n - 1]->start_ns);
		ck_assert_uint_eq(f->end_ns,
		    queue[q.n - 1]->start_ns + queue[q.n - 1]->length_ns);
		ck_assert_uint_eq(f->timescale_s, 60);
		/* A warning: the one that makes most of a rise (a fall, or
		 * weight no sample names, is info). */
		ck_assert_uint_eq(f->severity,
		    !floored && i == 0 && w->share >= 0.5 &&
			    strstr(f->text, "of the increase") != NULL &&
			    strcmp(w->label, "(unattributed)") != 0
			? VITALS_SEV_WARN
			: VITALS_SEV_INFO);
		if (w->text != NULL)
			ck_assert_msg(strstr(f->text, w->text) != NULL,
			    "%s: text '%s' lacks '%s'", cases[_i].name, f->text,
			    w->text);
	}
}
END_TEST

/*
 * Several contributors move both ways, over baseline epochs of different
 * lengths: the ranking follows the shares, shrinking ones are left out.
 * By hand: baseline 2600 over 90 s (a 1200, b 1000, c 300, unsampled
 * 100), new 10800 over 60 s (b 9000, unsampled 1000, and a 100 and d 700
 * sharing a's slot, whose 800 they split by their counts 100 and 800).
 */
START_TEST(mixed_changes)
{
	const char *kv[] = { "min_share", "0", "top", "100", NULL };
	struct vitals_queue q = { .timescale_s = 60, .epochs = queue, .n = 3 };
	double total = 10800.0 / 60 - 2600.0 / 90;
	const char *labels[] = { "/bin/b", "(unattributed)", "/bin/d" };
	double shares[] = { (9000.0 / 60 - 1000.0 / 90) / total,
		(1000.0 / 60 - 100.0 / 90) / total,
		(800.0 * 800 / 900 / 60) / total };
	unsigned i;

	start(kv);
	queue[0] = make(0,
	    "cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=900 "
	    "cpu:/bin/c@baz#3=300 cpu:#4=100");
	queue[1] = make(1, "len=30 cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=100");
	queue[2] = make(2,
	    "cpu:/bin/a@foo#1=100 cpu:/bin/b@bar#2=9000 "
	    "cpu:/bin/d@qux#1=700 cpu:#5=1000");
	ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
	ck_assert_uint_eq(mock_nfindings(), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(mock_finding(i)->label, labels[i]);
		ck_assert_double_eq_tol(
		    mock_finding(i)->score, shares[i], 1e-9);
	}
	ck_assert_ptr_nonnull(strstr(mock_finding(0)->text, "cpu +523%"));
}
END_TEST

/*
 * Spec of epoch k of a varied run: a and b steady with some noise, c
 * bursting in a's slot (a collision, so shares are not round), sched
 * and diskio coming and going, weight without samples now and then.
 */
static void
run_spec(unsigned k, char *buf, size_t len)
{
	int burst = k == 6 || k == 7 || k == 13;

	snprintf(buf, len, "%s cpu:/bin/a@foo#1=%u cpu:/bin/b@bar#2=%u%s%s%s%s",
	    k == 9 ? "len=30" : "len=60", 600 + 37 * (k % 5),
	    500 + 91 * (k % 3),
	    burst ? " cpu:/bin/c@baz#1=4100 cpu:/bin/c@qux#3=900" : "",
	    k % 4 == 1 ? " cpu:#5=777" : "",
	    k % 3 ? " sched:/bin/d@-#1=5000 sched:/bin/a@0x1234#2=700" : "",
	    k >= 10 ? (k == 15 ? " diskio:/usr/bin/fio@x#3=90000"
			       : " diskio:/usr/bin/fio@x#3=9000")
		    : "");
}

/* The queue of epoch k of a sliding run: up to 6 epochs ending at k. */
static void
slide(struct vitals_queue *q, const struct vitals_epoch **run, unsigned k)
{
	q->n = k < 6 ? k + 1 : 6;
	q->epochs = &run[k + 1 - q->n];
}

/*
 * One instance fed a sliding queue, as the daemon does, reports exactly
 * what a new instance, fed the same queues from the start, reports at the
 * last: the attributions it keeps between epochs change nothing, over
 * bursts, baselines leaving epochs out and vitals coming and going.
 */
START_TEST(sliding_queue)
{
	const char *kv[] = { "min_share", "0", "top", "100", "baseline", "4",
		NULL };
	struct vitals_queue q = { .timescale_s = 60 };
	const struct vitals_epoch *run[20];
	const struct vitals_finding *a, *b;
	unsigned k, i, j, n, m0, total = 0;
	char spec[512];
	void *fresh;

	start(kv);
	for (k = 0; k < 20; k++) {
		run_spec(k, spec, sizeof(spec));
		run[k] = make(k, spec);
	}
	for (k = 1; k < 20; k++) {
		slide(&q, run, k);
		ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
		n = mock_nfindings();
		ck_assert_int_eq(
		    vitals_plugin.init(mock_ctx("diff"), cfg, &fresh), 0);
		for (j = 0; j < k; j++) {
			slide(&q, run, j);
			ck_assert_int_eq(vitals_plugin.epoch(fresh, &q), 0);
		}
		m0 = mock_nfindings();
		slide(&q, run, k);
		ck_assert_int_eq(vitals_plugin.epoch(fresh, &q), 0);
		vitals_plugin.fini(fresh);
		ck_assert_uint_eq(mock_nfindings() - m0, n);
		for (i = 0; i < n; i++) {
			a = mock_finding(i);
			b = mock_finding(m0 + i);
			ck_assert_str_eq(a->text, b->text);
			ck_assert_str_eq(a->label, b->label);
			ck_assert_str_eq(a->vital, b->vital);
			ck_assert(a->score == b->score);
			ck_assert(a->value == b->value);
			ck_assert(a->expected == b->expected);
			ck_assert_uint_eq(a->start_ns, b->start_ns);
		}
		total += n;
		mock_findings_clear();
	}
	/* The run has changes to explain, and more than one per burst. */
	ck_assert_uint_ge(total, 10);
}
END_TEST

/* Feed spec[0..n) one by one as a sliding queue of up to 13 epochs. */
static void
feed_specs(const char *const *spec, unsigned n, unsigned *nfound)
{
	struct vitals_queue q = { .timescale_s = 60, .epochs = queue };
	unsigned k, first;

	for (k = 0; k < n; k++) {
		queue[k] = make(k, spec[k]);
		first = k >= 12 ? k - 12 : 0;
		q.epochs = &queue[first];
		q.n = k - first + 1;
		ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
		nfound[k] = mock_nfindings();
	}
}

#define CALM "cpu:/bin/a@foo#1=600"
#define BURST "cpu:/bin/a@foo#1=600 cpu:/bin/b@bar#2=6000"

/*
 * A rise that lasts, live: once it is info, in 2 of 3 epochs a warning
 * (its range from its first epoch), then nothing while it lasts; its end
 * is no new change (the baseline leaves the burst's epochs out) and is
 * said once, at info.
 */
START_TEST(incident)
{
	const char *kv[] = { "persist", "2", "baseline", "12", NULL };
	const char *spec[] = { CALM, CALM, CALM, CALM, BURST, BURST, BURST,
		BURST, BURST, BURST, BURST, CALM, CALM, CALM, CALM, CALM };
	unsigned n[16], i, warn = 0, over = 0;
	const struct vitals_finding *f;

	start(kv);
	feed_specs(spec, 16, n);
	ck_assert_uint_eq(n[3], 0);
	ck_assert_uint_eq(n[4], 1);
	ck_assert_uint_eq(mock_finding(0)->severity, VITALS_SEV_INFO);
	ck_assert_ptr_nonnull(strstr(mock_finding(0)->text, "seen once"));
	ck_assert_uint_eq(n[5], 2);
	f = mock_finding(1);
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN);
	ck_assert_str_eq(f->label, "/bin/b");
	ck_assert_uint_eq(f->start_ns, queue[4]->start_ns);
	ck_assert_ptr_nonnull(strstr(f->text, "an incident since"));
	/* While it lasts, nothing; the burst's epochs stay out of the
	 * baseline, so it is still a change after 7 epochs. */
	ck_assert_uint_eq(n[10], 2);
	for (i = 0; i < mock_nfindings(); i++) {
		f = mock_finding(i);
		warn += f->severity >= VITALS_SEV_WARN;
		over += strstr(f->text, "is over") != NULL;
		ck_assert_ptr_null(strstr(f->text, "decrease"));
	}
	ck_assert_uint_eq(warn, 1);
	ck_assert_uint_eq(over, 1);
}
END_TEST

/*
 * A short command on an idle machine: a big rise in rate (+1000%) but
 * under the vital's floor is explained at info, never a warning, even
 * compared at once (persist 1).
 */
START_TEST(under_floor)
{
	const char *kv[] = { "floor", "cpu=20", NULL };
	const char *spec[] = { "cpu:/bin/a@foo#1=60", "cpu:/bin/a@foo#1=60",
		"cpu:/bin/a@foo#1=60 cpu:/bin/sh@bar#2=600" };
	unsigned n[3];

	start(kv);
	feed_specs(spec, 3, n);
	ck_assert_uint_eq(n[2], 1);
	ck_assert_uint_eq(mock_finding(0)->severity, VITALS_SEV_INFO);
	ck_assert_str_eq(mock_finding(0)->label, "/bin/sh");
}
END_TEST

/* Epoch k of a long run, built in slot k % NFAKE, k epochs after the first. */
static const struct vitals_epoch *
make_nth(uint64_t k, const char *spec)
{
	struct fake *f = &fakes[k % NFAKE];
	uint64_t start = BASE_NS + k * 60000000000ULL;
	uint32_t v, n;

	make((unsigned)(k % NFAKE), spec);
	for (v = 0; v < NV; v++)
		for (n = 0; n < f->ns[v]; n++)
			f->s[v][n].ts_ns =
			    f->s[v][n].ts_ns - f->e.start_ns + start;
	f->e.start_ns = start;
	f->e.seq = k;
	return &f->e;
}

/* Bytes the process has allocated and not freed. */
static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * A daemon's diff sees new exes and sites every epoch under churn: the
 * keys of epochs gone from the queue, and the attributions of epochs
 * replaced by their compact copies, are let go.  2500 epochs of 16 new
 * keys each would hold ~3 MB more if they were not; the heap in use after
 * them is within 1 MB of what it was after 500.
 */
START_TEST(cache_bounded)
{
	const char *kv[] = { "min_share", "0", "top", "1", NULL };
	const struct vitals_epoch *ring[13];
	struct vitals_queue q = { .timescale_s = 60, .epochs = ring };
	size_t early = 0, late;
	char spec[512];
	unsigned k, j, found = 0;
	int len;

	start(kv);
	for (k = 0; k < 3000; k++) {
		/* Every epoch a change (the baseline alternates): attributed. */
		len = snprintf(spec, sizeof(spec), "cpu:/bin/b@bar#2=%u",
		    k % 2 ? 600 : 6000);
		for (j = 0; j < 8; j++)
			len += snprintf(spec + len, sizeof(spec) - (size_t)len,
			    " cpu:/bin/x%u@s%u_%u#%u=60", k, k, j, 3 + j);
		if (k >= 13)
			memmove(ring, ring + 1, 12 * sizeof(*ring));
		q.n = k < 13 ? k + 1 : 13;
		ring[q.n - 1] = make_nth(k, spec);
		ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
		found += mock_nfindings();
		mock_findings_clear();
		if (k == 499)
			early = heap_in_use();
	}
	late = heap_in_use();
	/* Every other epoch's change is explained (a rise, then a fall). */
	ck_assert_uint_ge(found, 1000);
	ck_assert_msg(late < early + (1u << 20),
	    "diff holds %zu bytes more after 3000 epochs than after 500",
	    late - early);
}
END_TEST

static const struct {
	const char *key, *value;
} bad_cases[] = {
	{ "by", "label" },
	{ "baseline", "0" },
	{ "top", "0" },
	{ "min_share", "2" },
	{ "min_change", "-1" },
	{ "min_rate", "-1" },
	{ "min_info", "1.5" },
	{ "persist", "0" },
	{ "floor", "cpu=x" },
};

START_TEST(bad_options)
{
	contract_bad_option(&vitals_plugin, "diff", bad_cases[_i].key,
	    bad_cases[_i].value, NULL);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "diff");
}
END_TEST

static Suite *
diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, table, 0, NCASES(cases));
	tcase_add_test(tc, mixed_changes);
	tcase_add_test(tc, sliding_queue);
	tcase_add_test(tc, incident);
	tcase_add_test(tc, under_floor);
	tcase_add_test(tc, cache_bounded);
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(diff_suite());
}
