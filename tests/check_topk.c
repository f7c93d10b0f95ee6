/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the topk filter against the mock core: ranking, shares,
 * options, the exe/comm/hex label fallback, slot sharing, rollups, the
 * timescales ranked (min_timescale) and the stable finding fields that
 * `vitals top` reads.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "epochs.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

static void *cfg, *st;
static struct tep_queue *q;

/*
 * Start topk with options kv (key, value, ..., NULL).  Every epoch is
 * ranked unless kv sets min_timescale: most cases use 60 s epochs.
 */
static int
start(const char *const *kv)
{
	static const char *const dflt[] = { "min_timescale", "0", NULL };

	cfg = contract_config(&vitals_plugin, dflt, kv);
	return vitals_plugin.init(mock_ctx("topk"), cfg, &st);
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

static const char *const exes[] = { "/usr/bin/a", "/usr/bin/b", "/usr/bin/c",
	"/usr/bin/d", "/usr/bin/e", "/usr/bin/f" };
static const uint64_t cpu_w[] = { 500, 300, 100, 60, 30, 10 };

/* cpu: six exes weighing 500..10 (total 1000); sched: two exes. */
static void
fill(struct tep_epoch *e)
{
	unsigned i;

	for (i = 0; i < 6; i++)
		tep_add(e, "cpu",
		    &(struct tep_ev){
			.exe = exes[i], .label = i + 1, .events = cpu_w[i] });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/bin/f",
		.label = 7,
		.weight = 3000000,
		.events = 3 });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/bin/a",
		.label = 8,
		.weight = 1000000,
		.events = 2 });
}

static void
run_one(void)
{
	fill(tep_queue_next(q));
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
}

/* Findings of vital `name`, in emission order, into out; returns count. */
static unsigned
of_vital(const char *name, const struct vitals_finding **out, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < mock_nfindings(); i++)
		if (strcmp(mock_finding(i)->vital, name) == 0 && n < max)
			out[n++] = mock_finding(i);
	return n;
}

START_TEST(ranking)
{
	const struct vitals_finding *f[16];
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	run_one();
	ck_assert_uint_eq(of_vital("cpu", f, 16), 5);
	for (i = 0; i < 5; i++) {
		ck_assert_str_eq(f[i]->filter, "topk");
		ck_assert_str_eq(f[i]->label, exes[i]);
		ck_assert_uint_eq(f[i]->severity, VITALS_SEV_INFO);
		ck_assert_double_eq_tol(f[i]->value, cpu_w[i], 1e-9);
		ck_assert_double_eq_tol(f[i]->expected, 1000, 1e-9);
		ck_assert_double_eq_tol(f[i]->score, cpu_w[i] / 1000.0, 1e-12);
		ck_assert_uint_eq(f[i]->timescale_s, 60);
		ck_assert_uint_eq(f[i]->start_ns, tep_start_ns(60, 0));
		ck_assert_uint_eq(f[i]->end_ns, tep_start_ns(60, 1));
	}
	ck_assert_uint_eq(of_vital("sched", f, 16), 2);
	ck_assert_str_eq(f[0]->label, "/usr/bin/f");
	ck_assert_double_eq_tol(f[0]->score, 0.75, 1e-12);
}
END_TEST

START_TEST(finding_text)
{
	const struct vitals_finding *f[16];
	struct tep_epoch *e;

	ck_assert_int_eq(start(NULL), 0);
	e = tep_queue_next(q);
	fill(e);
	tep_add(e, "diskio",
	    &(struct tep_ev){ .exe = "/usr/bin/dd",
		.label = 9,
		.weight = 12 * 1048576ULL,
		.events = 3 });
	tep_add(e, "diskio",
	    &(struct tep_ev){ .exe = "/usr/bin/cp",
		.label = 10,
		.weight = 4 * 1048576ULL,
		.events = 1 });
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(of_vital("cpu", f, 16), 5);
	ck_assert_str_eq(f[0]->text,
	    "cpu #1: /usr/bin/a had 50.0% of the weight "
	    "(500 samples of 1000 samples)");
	ck_assert_uint_eq(of_vital("diskio", f, 16), 2);
	ck_assert_str_eq(f[1]->text,
	    "diskio #2: /usr/bin/cp had 25.0% of the weight "
	    "(4.0 MiB of 16.0 MiB)");
	ck_assert_uint_eq(of_vital("sched", f, 16), 2);
	ck_assert_str_eq(f[0]->text,
	    "sched #1: /usr/bin/f had 75.0% of the weight "
	    "(3.0 ms of 4.0 ms)");
}
END_TEST

/* ---- options ---- */

static const struct {
	const char *k, *vitals, *min_share;
	unsigned cpu, sched; /* findings expected */
} opt_cases[] = {
	{ "5", "", "0", 5, 2 },
	{ "1", "", "0", 1, 1 },
	{ "2", "", "0", 2, 2 },
	{ "10", "", "0", 6, 2 },
	{ "5", "sched", "0", 0, 2 },
	{ "5", "cpu", "0", 5, 0 },
	{ "5", "cpu, sched", "0", 5, 2 },
	{ "5", "lock", "0", 0, 0 },
	{ "5", "", "0.2", 2, 2 },
	{ "5", "", "0.31", 1, 1 },
	{ "5", "", "0.05", 4, 2 },
	{ "5", "", "0.8", 0, 0 },
};

START_TEST(options)
{
	const char *kv[] = { "k", opt_cases[_i].k, "vitals",
		opt_cases[_i].vitals, "min_share", opt_cases[_i].min_share,
		NULL };
	const struct vitals_finding *f[16];

	ck_assert_int_eq(start(kv), 0);
	run_one();
	ck_assert_uint_eq(of_vital("cpu", f, 16), opt_cases[_i].cpu);
	ck_assert_uint_eq(of_vital("sched", f, 16), opt_cases[_i].sched);
	ck_assert_uint_eq(
	    mock_nfindings(), opt_cases[_i].cpu + opt_cases[_i].sched);
}
END_TEST

/* Several labels of one exe add up; by=label keeps them apart. */
START_TEST(by_exe_and_label)
{
	const char *kv[] = { "by", "label", NULL };
	const struct vitals_finding *f[16];
	struct tep_epoch *e;
	unsigned by;

	for (by = 0; by < 2; by++) {
		ck_assert_int_eq(start(by ? kv : NULL), 0);
		e = tep_queue_next(q);
		tep_add(e, "cpu",
		    &(struct tep_ev){
			.exe = "/usr/bin/x", .label = 0x401, .events = 30 });
		tep_add(e, "cpu",
		    &(struct tep_ev){
			.exe = "/usr/bin/x", .label = 0x402, .events = 30 });
		tep_add(e, "cpu",
		    &(struct tep_ev){
			.exe = "/usr/bin/y", .label = 0x403, .events = 40 });
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
		if (by == 0) {
			ck_assert_uint_eq(of_vital("cpu", f, 16), 2);
			ck_assert_str_eq(f[0]->label, "/usr/bin/x");
			ck_assert_double_eq_tol(f[0]->value, 60, 1e-9);
		} else {
			ck_assert_uint_eq(of_vital("cpu", f, 16), 3);
			ck_assert_str_eq(f[0]->label, "0x403");
			ck_assert_str_eq(f[1]->label, "0x401");
			ck_assert_str_eq(f[2]->label, "0x402");
			ck_assert_ptr_nonnull(strstr(f[0]->text,
			    "had 40.0% of the weight (40 samples of 100 "
			    "samples) in /usr/bin/y"));
		}
		vitals_plugin.fini(st);
		mock_config_free(&vitals_plugin, cfg);
		st = cfg = NULL;
		mock_findings_clear();
	}
}
END_TEST

/* Kernel threads have no exe: comm, else the hex label, names them. */
START_TEST(name_fallback)
{
	const struct vitals_finding *f[16];
	struct tep_epoch *e;

	ck_assert_int_eq(start(NULL), 0);
	e = tep_queue_next(q);
	tep_add(e, "cpu",
	    &(struct tep_ev){
		.comm = "kworker/0:1", .label = 5, .events = 70 });
	tep_add(e, "cpu", &(struct tep_ev){ .label = 0x2a, .events = 20 });
	tep_add(e, "cpu",
	    &(struct tep_ev){
		.exe = "/bin/sh", .comm = "sh", .label = 6, .events = 10 });
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(of_vital("cpu", f, 16), 3);
	ck_assert_str_eq(f[0]->label, "kworker/0:1");
	ck_assert_str_eq(f[1]->label, "0x2a");
	ck_assert_str_eq(f[2]->label, "/bin/sh");
}
END_TEST

/*
 * Two labels in one slot share its counter by their credits: A's highest
 * count, and B's weight, its only sample being a first sighting (no power
 * of two in (399, 400]) in the counter A had filled to 300.  Credited the
 * counter, B (a process seen once in a fault's counter) would rank first.
 */
START_TEST(shared_slot)
{
	const struct vitals_finding *f[16];
	struct tep_epoch *e;

	ck_assert_int_eq(start(NULL), 0);
	e = tep_queue_next(q);
	/* Counts seen: A 300, then B 400 (the slot's counter after it). */
	tep_add(e, "cpu",
	    &(struct tep_ev){ .exe = "/usr/bin/A",
		.label = 1,
		.events = 300,
		.fixed_slot = 1,
		.slot = 3 });
	tep_add(e, "cpu",
	    &(struct tep_ev){ .exe = "/usr/bin/B",
		.label = 2,
		.events = 100,
		.fixed_slot = 1,
		.slot = 3 });
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(of_vital("cpu", f, 16), 2);
	ck_assert_str_eq(f[0]->label, "/usr/bin/A");
	ck_assert_double_eq_tol(f[0]->value, 400.0 * 300 / 301, 1e-9);
	ck_assert_double_eq_tol(f[1]->value, 400.0 * 1 / 301, 1e-9);
	ck_assert_double_eq_tol(f[0]->value + f[1]->value, 400, 1e-9);
}
END_TEST

/*
 * A rollup concatenates the samples of base epochs whose counters
 * restarted: B's counts 10 and 10 in two base epochs make 20.
 */
START_TEST(rollup)
{
	struct tep_queue *q300 = tep_queue_new(300, 4);
	const struct vitals_finding *f[16];
	struct tep_epoch *base[3], *roll;
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 3; i++)
		base[i] = tep_epoch_new(60, i);
	tep_add(base[0], "cpu",
	    &(struct tep_ev){ .exe = "/usr/bin/A",
		.label = 1,
		.events = 100,
		.fixed_slot = 1,
		.slot = 9 });
	for (i = 1; i < 3; i++)
		tep_add(base[i], "cpu",
		    &(struct tep_ev){ .exe = "/usr/bin/B",
			.label = 2,
			.events = 10,
			.fixed_slot = 1,
			.slot = 9 });
	roll = tep_queue_next(q300);
	for (i = 0; i < 3; i++)
		tep_merge(roll, base[i]);
	ck_assert_int_eq(tep_queue_run(q300, &vitals_plugin, st), 0);
	ck_assert_uint_eq(of_vital("cpu", f, 16), 2);
	ck_assert_str_eq(f[0]->label, "/usr/bin/A");
	ck_assert_double_eq_tol(f[0]->value, 100, 1e-9);
	ck_assert_double_eq_tol(f[1]->value, 20, 1e-9);
	ck_assert_double_eq_tol(f[1]->expected, 120, 1e-9);
	ck_assert_uint_eq(f[1]->timescale_s, 300);
	ck_assert_uint_eq(f[1]->end_ns, tep_start_ns(300, 1));
	tep_queue_free(q300);
	for (i = 0; i < 3; i++)
		tep_epoch_free(base[i]);
}
END_TEST

/* Only the newest epoch of the queue is ranked, once. */
START_TEST(newest_only)
{
	const struct vitals_finding *f[16];

	ck_assert_int_eq(start(NULL), 0);
	run_one();
	run_one();
	run_one();
	ck_assert_uint_eq(mock_nfindings(), 3 * 7);
	ck_assert_uint_eq(of_vital("cpu", f, 16), 15);
	ck_assert_uint_eq(f[10]->start_ns, tep_start_ns(60, 2));
}
END_TEST

START_TEST(empty_vitals)
{
	struct tep_epoch *e;

	ck_assert_int_eq(start(NULL), 0);
	e = tep_queue_next(q);
	tep_vital(e, "lock");
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/* ---- which timescales are ranked ---- */

static const struct {
	const char *min_timescale; /* NULL: the default */
	uint32_t timescale_s;
	unsigned findings; /* cpu 5 + sched 2 when ranked */
} ts_cases[] = {
	{ NULL, 60, 0 },
	{ NULL, 300, 0 },
	{ NULL, 3599, 0 },
	{ NULL, 3600, 7 },
	{ NULL, 86400, 7 },
	{ "5m", 60, 0 },
	{ "5m", 300, 7 },
	{ "0", 60, 7 },
	{ "1s", 1, 7 },
	{ "2s", 1, 0 },
};

START_TEST(timescales)
{
	const char *kv[] = { "min_timescale", ts_cases[_i].min_timescale,
		NULL };
	struct tep_queue *tq = tep_queue_new(ts_cases[_i].timescale_s, 4);
	const struct vitals_finding *f[16];

	cfg = mock_config_new(&vitals_plugin);
	ck_assert_ptr_nonnull(cfg);
	if (ts_cases[_i].min_timescale != NULL)
		ck_assert_int_eq(
		    mock_config_set(&vitals_plugin, cfg, kv[0], kv[1]), 0);
	ck_assert_int_eq(vitals_plugin.init(mock_ctx("topk"), cfg, &st), 0);
	fill(tep_queue_next(tq));
	ck_assert_int_eq(tep_queue_run(tq, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), ts_cases[_i].findings);
	if (ts_cases[_i].findings > 0) {
		ck_assert_uint_eq(of_vital("cpu", f, 16), 5);
		ck_assert_uint_eq(f[0]->timescale_s, ts_cases[_i].timescale_s);
		ck_assert_str_eq(f[0]->label, exes[0]);
	}
	tep_queue_free(tq);
}
END_TEST

static const struct {
	const char *key, *value, *message;
} bad_cases[] = {
	{ "k", "0", "option 'k'" },
	{ "k", "101", "option 'k'" },
	{ "by", "pid", "option 'by': 'pid'" },
	{ "min_share", "1.5", "option 'min_share'" },
	{ "min_share", "-0.1", "option 'min_share'" },
};

START_TEST(bad_options)
{
	const char *kv[] = { bad_cases[_i].key, bad_cases[_i].value, NULL };
	int rc;

	rc = start(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, bad_cases[_i].message);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "topk");
}
END_TEST

static Suite *
topk_suite(void)
{
	Suite *s = suite_create("topk");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ranking);
	tcase_add_test(tc, finding_text);
	tcase_add_loop_test(tc, options, 0, NCASES(opt_cases));
	tcase_add_test(tc, by_exe_and_label);
	tcase_add_test(tc, name_fallback);
	tcase_add_test(tc, shared_slot);
	tcase_add_test(tc, rollup);
	tcase_add_test(tc, newest_only);
	tcase_add_test(tc, empty_vitals);
	tcase_add_loop_test(tc, timescales, 0, NCASES(ts_cases));
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(topk_suite());
}
