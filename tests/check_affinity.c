/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the affinity filter against the mock core: a steady mix
 * of exes never flags, an abrupt change flags once at the right epoch
 * naming who entered and left (its end later said once, at info), and
 * every option changes what it should.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "epochs.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define NEXES 10

static void *cfg, *st;
static struct tep_queue *q;

/*
 * Start the filter with defaults overridden by NULL-terminated pairs.  The
 * floors are off (the hand-made weights are small) and persist is 1 (a
 * change is an incident at once) unless kv sets them.
 */
static int
start(const char *const *kv)
{
	static const char *const dflt[] = { "floor", "*=0", "persist", "1",
		NULL };

	cfg = contract_config(&vitals_plugin, dflt, kv);
	return vitals_plugin.init(mock_ctx("affinity"), cfg, &st);
}

static void
setup(void)
{
	cfg = st = NULL;
	q = tep_queue_new(60, 16);
}

static void
teardown(void)
{
	contract_stop(&vitals_plugin, cfg, st);
	tep_queue_free(q);
}

/* One exe's weight in a vital of the next epoch. */
struct part {
	const char *exe;
	uint64_t w;
};

/* Run an epoch whose vital holds the parts (ending with exe NULL). */
static void
run_mix(struct tep_queue *tq, const char *vital, const struct part *p)
{
	struct tep_epoch *e = tep_queue_next(tq);
	uint64_t label = 1;

	for (; p->exe != NULL; p++)
		tep_add(e, vital,
		    &(struct tep_ev){
			.exe = p->exe, .label = label++, .events = p->w });
	ck_assert_int_eq(tep_queue_run(tq, &vitals_plugin, st), 0);
}

static void
run2(const char *a, uint64_t wa, const char *b, uint64_t wb)
{
	struct part p[] = { { a, wa }, { b, wb }, { NULL, 0 } };

	run_mix(q, "cpu", p);
}

/* Findings that report a change (not the end of one). */
static unsigned
changes(void)
{
	unsigned i, n = 0;

	for (i = 0; i < mock_nfindings(); i++)
		n += strstr(mock_finding(i)->text, "is over") == NULL;
	return n;
}

static char steady_names[2 * NEXES][32];

/*
 * Epoch i of a steady Zipf-like mix of ten exes with a deterministic
 * +-25% wobble per exe; `set` 1 uses ten other exes.
 */
static void
run_steady(struct tep_queue *tq, const char *vital, unsigned i, int set)
{
	struct part p[NEXES + 1];
	unsigned j;

	for (j = 0; j < NEXES; j++) {
		snprintf(steady_names[set * NEXES + j], 32, "/usr/bin/%s%u",
		    set ? "new" : "app", j);
		p[j].exe = steady_names[set * NEXES + j];
		p[j].w = (uint64_t)(1000.0 / (j + 1) *
		    (1 + 0.25 * sin(1.3 * i + 2.1 * j)));
	}
	p[NEXES].exe = NULL;
	run_mix(tq, vital, p);
}

/* ---- steady streams: never a finding ---- */

static const char *const steady_cases[][6] = {
	{ NULL },
	{ "alpha", "0.3", NULL },
	{ "by", "label", NULL },
	{ "top", "3", NULL },
	{ "top", "1", NULL },
	{ "warmup", "0", "min_similarity", "0.5", NULL },
};

START_TEST(steady)
{
	unsigned i;

	ck_assert_int_eq(start(steady_cases[_i]), 0);
	for (i = 0; i < 40; i++)
		run_steady(q, "cpu", i, 0);
	ck_assert_msg(mock_nfindings() == 0, "case %d: %u findings: %s", _i,
	    mock_nfindings(), mock_nfindings() ? mock_finding(0)->text : "");
}
END_TEST

/* ---- an abrupt change: one finding, at the change ---- */

static const char *const change_cases[][4] = {
	{ NULL },
	{ "alpha", "0.3", NULL },
	{ "alpha", "1", NULL },
};

START_TEST(abrupt_change)
{
	const struct vitals_finding *f;
	unsigned i;

	ck_assert_int_eq(start(change_cases[_i]), 0);
	for (i = 0; i < 30; i++)
		run_steady(q, "cpu", i, i >= 12);
	ck_assert_uint_eq(changes(), 1);
	f = mock_finding(0);
	ck_assert_str_eq(f->filter, "affinity");
	ck_assert_str_eq(f->vital, "cpu");
	ck_assert_str_eq(f->label, "/usr/bin/new0");
	/* A reshuffle among ten, new0 a third of it: no takeover, info. */
	ck_assert_uint_eq(f->severity, VITALS_SEV_INFO);
	ck_assert_uint_eq(f->start_ns, tep_start_ns(60, 12));
	ck_assert_uint_eq(f->end_ns, tep_start_ns(60, 13));
	ck_assert_uint_eq(f->timescale_s, 60);
	ck_assert_double_eq_tol(f->value, 0, 1e-12);
	ck_assert_double_eq_tol(f->score, 1, 1e-12);
	ck_assert_double_eq_tol(f->expected, 0.3, 1e-12);
	ck_assert_ptr_nonnull(strstr(f->text, "entered: /usr/bin/new0 ("));
	ck_assert_ptr_nonnull(strstr(f->text, "and 7 more; left: "));
}
END_TEST

START_TEST(finding_text)
{
	const struct vitals_finding *f;
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	run2("/usr/bin/x", 70, "/usr/bin/a", 30);
	ck_assert_uint_eq(mock_nfindings(), 1);
	f = mock_finding(0);
	ck_assert_str_eq(f->text,
	    "cpu weight moved to other exes: similarity 0.18 to the mix "
	    "before is below 0.30; entered: /usr/bin/x (70%); left: /usr/bin/b "
	    "(40%)");
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN); /* a takeover */
	ck_assert_double_eq_tol(f->value, 0.3 / 1.7, 1e-9);
	ck_assert_double_eq_tol(f->score, 1 - 0.3 / 1.7, 1e-9);
	ck_assert_str_eq(f->label, "/usr/bin/x");
}
END_TEST

/* The same exes trading places: nobody entered, the gainer is named. */
START_TEST(swap_names_gainer)
{
	const struct vitals_finding *f;
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 90, "/usr/bin/b", 10);
	run2("/usr/bin/a", 10, "/usr/bin/b", 90);
	ck_assert_uint_eq(mock_nfindings(), 1);
	f = mock_finding(0);
	ck_assert_str_eq(f->label, "/usr/bin/b");
	ck_assert_double_eq_tol(f->value, 0.2 / 1.8, 1e-9);
	ck_assert_ptr_nonnull(strstr(f->text, "entered: none; left: none"));
}
END_TEST

/* ---- warmup ---- */

static const struct {
	const char *warmup;
	unsigned at; /* epoch of the change */
	unsigned findings;
} warm_cases[] = {
	{ "3", 1, 0 },
	{ "3", 2, 0 },
	{ "3", 3, 1 },
	{ "0", 1, 1 },
	{ "1", 1, 1 },
	{ "5", 4, 0 },
	{ "5", 5, 1 },
};

START_TEST(warmup)
{
	const char *kv[] = { "warmup", warm_cases[_i].warmup, NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 10; i++)
		run_steady(q, "cpu", i, i >= warm_cases[_i].at);
	ck_assert_uint_eq(changes(), warm_cases[_i].findings);
	if (warm_cases[_i].findings)
		ck_assert_uint_eq(mock_finding(0)->start_ns,
		    tep_start_ns(60, warm_cases[_i].at));
}
END_TEST

/* ---- min_similarity: {a, b} -> {a, c} is 1/3 similar ---- */

static const struct {
	const char *min;
	unsigned findings;
} sim_cases[] = {
	{ "0.3", 0 },
	{ "0.34", 1 },
	{ "0.9", 1 },
	{ "0", 0 },
};

START_TEST(min_similarity)
{
	const char *kv[] = { "min_similarity", sim_cases[_i].min, NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 50, "/usr/bin/b", 50);
	run2("/usr/bin/a", 50, "/usr/bin/c", 50);
	ck_assert_uint_eq(changes(), sim_cases[_i].findings);
	if (sim_cases[_i].findings)
		ck_assert_double_eq_tol(mock_finding(0)->value, 1 / 3.0, 1e-9);
}
END_TEST

/* ---- top: only the heaviest entries form the distribution ---- */

static const struct {
	const char *top;
	unsigned findings;
} top_cases[] = {
	{ "1", 1 }, /* {a} -> {b}: 0 */
	{ "2", 0 }, /* {.6, .4} -> {.4, .6}: 2/3 */
	{ "10", 0 },
};

START_TEST(top)
{
	const char *kv[] = { "top", top_cases[_i].top, NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	run2("/usr/bin/a", 40, "/usr/bin/b", 60);
	ck_assert_uint_eq(changes(), top_cases[_i].findings);
}
END_TEST

/* ---- min_events: thin epochs are neither compared nor learnt ---- */

static const struct {
	const char *min;
	unsigned findings;
} thin_cases[] = {
	{ "50", 0 },
	{ "11", 0 },
	{ "10", 1 }, /* the thin epoch flags; the return to a, b is its end */
	{ "0", 1 },
};

START_TEST(min_events)
{
	const char *kv[] = { "min_events", thin_cases[_i].min, NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	run2("/usr/bin/z", 6, "/usr/bin/y", 4); /* 10 events */
	run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	ck_assert_uint_eq(changes(), thin_cases[_i].findings);
}
END_TEST

/* ---- vitals, and one state per vital ---- */

START_TEST(vitals_option)
{
	const char *kv[] = { "vitals", "cpu", NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 10; i++) {
		run_steady(q, "sched", i, i >= 5);
		ck_assert_uint_eq(mock_nfindings(), 0);
	}
	vitals_plugin.fini(st);
	mock_config_free(&vitals_plugin, cfg);
	st = cfg = NULL;
	ck_assert_int_eq(start(NULL), 0);
	tep_queue_free(q);
	q = tep_queue_new(60, 16);
	for (i = 0; i < 10; i++)
		run_steady(q, "sched", i, i >= 5);
	ck_assert_uint_eq(changes(), 1);
	ck_assert_str_eq(mock_finding(0)->vital, "sched");
}
END_TEST

/* Each timescale keeps its own baseline. */
START_TEST(timescales_separate)
{
	struct tep_queue *q300 = tep_queue_new(300, 16);
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 10; i++) {
		run_steady(q, "cpu", i, 0);
		run_steady(q300, "cpu", i, 1);
	}
	ck_assert_uint_eq(mock_nfindings(), 0);
	run_steady(q300, "cpu", 10, 0);
	ck_assert_uint_eq(changes(), 1);
	ck_assert_uint_eq(mock_finding(0)->timescale_s, 300);
	ck_assert_uint_eq(mock_finding(0)->start_ns, tep_start_ns(300, 10));
	run_steady(q, "cpu", 10, 0);
	ck_assert_uint_eq(changes(), 1);
	tep_queue_free(q300);
}
END_TEST

/*
 * A slow drift from a to b, 10% a step: each epoch is close to the
 * previous one, but far from the EWMA of a small alpha.
 */
static const struct {
	const char *alpha;
	int flags;
} drift_cases[] = {
	{ "0", 0 },
	{ "0.05", 1 },
};

START_TEST(drift)
{
	const char *kv[] = { "alpha", drift_cases[_i].alpha, NULL };
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 100, "/usr/bin/b", 1);
	for (i = 1; i <= 10; i++)
		run2("/usr/bin/a", 101 - 10 * i, "/usr/bin/b", 1 + 10 * i);
	if (drift_cases[_i].flags)
		ck_assert_uint_ge(changes(), 1);
	else
		ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

static const struct {
	const char *key, *value;
} bad_cases[] = {
	{ "top", "0" },
	{ "top", "257" },
	{ "min_similarity", "1.5" },
	{ "warmup", "-1" },
	{ "alpha", "2" },
	{ "min_events", "-1" },
	{ "by", "pid" },
	{ "persist", "0" },
	{ "floor", "=1" },
};

START_TEST(bad_options)
{
	const char *kv[] = { bad_cases[_i].key, bad_cases[_i].value, NULL };
	char quoted[40];
	int rc;

	snprintf(quoted, sizeof(quoted), "option '%s'", bad_cases[_i].key);
	rc = start(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, quoted);
}
END_TEST

/*
 * persist 2: a takeover is info when first seen, a warning when it lasts
 * (2 of 3 epochs, its range from the first), then nothing while it lasts
 * (the mix before stays the baseline), and its end is said once, at info.
 */
START_TEST(persist_takeover)
{
	const char *kv[] = { "persist", "2", NULL };
	const struct vitals_finding *f;
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	run2("/usr/bin/x", 90, "/usr/bin/a", 10);
	ck_assert_uint_eq(mock_nfindings(), 1);
	ck_assert_uint_eq(mock_finding(0)->severity, VITALS_SEV_INFO);
	run2("/usr/bin/x", 90, "/usr/bin/a", 10);
	ck_assert_uint_eq(mock_nfindings(), 2);
	f = mock_finding(1);
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN);
	ck_assert_str_eq(f->label, "/usr/bin/x");
	ck_assert_uint_eq(f->start_ns, tep_start_ns(60, 5));
	run2("/usr/bin/x", 90, "/usr/bin/a", 10);
	ck_assert_uint_eq(mock_nfindings(), 2);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	ck_assert_uint_eq(changes(), 2);
	ck_assert_uint_eq(mock_nfindings(), 3);
	ck_assert_uint_eq(mock_finding(2)->severity, VITALS_SEV_INFO);
}
END_TEST

/* A change that moves less weight per second than the floor is not said. */
START_TEST(floor_option)
{
	const char *kv[] = { "floor", "cpu=2", NULL }; /* 100 per 60 s: 1.7/s */
	unsigned i;

	ck_assert_int_eq(start(kv), 0);
	for (i = 0; i < 5; i++)
		run2("/usr/bin/a", 60, "/usr/bin/b", 40);
	run2("/usr/bin/x", 90, "/usr/bin/a", 10);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "affinity");
}
END_TEST

static Suite *
affinity_suite(void)
{
	Suite *s = suite_create("affinity");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, steady, 0, NCASES(steady_cases));
	tcase_add_loop_test(tc, abrupt_change, 0, NCASES(change_cases));
	tcase_add_test(tc, finding_text);
	tcase_add_test(tc, swap_names_gainer);
	tcase_add_loop_test(tc, warmup, 0, NCASES(warm_cases));
	tcase_add_loop_test(tc, min_similarity, 0, NCASES(sim_cases));
	tcase_add_loop_test(tc, top, 0, NCASES(top_cases));
	tcase_add_loop_test(tc, min_events, 0, NCASES(thin_cases));
	tcase_add_test(tc, vitals_option);
	tcase_add_test(tc, timescales_separate);
	tcase_add_loop_test(tc, drift, 0, NCASES(drift_cases));
	tcase_add_test(tc, persist_takeover);
	tcase_add_test(tc, floor_option);
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(affinity_suite());
}
