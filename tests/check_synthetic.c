/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the synthetic probe, linked in directly with the mock core:
 * the test fires the probe's timer and calls flush by hand, and checks the
 * events the mock counted per vital and per label.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define LABEL(rank) (0x400000ULL + (uint64_t)(rank)*0x100) /* rank >= 1 */

static void *cfg, *st;

static void
setup(void)
{
	cfg = st = NULL;
}

static void
stop(void)
{
	if (st != NULL)
		vitals_plugin.fini(st);
	mock_config_free(&vitals_plugin, cfg);
	cfg = st = NULL;
}

static void
teardown(void)
{
	stop();
	mock_reset();
}

static void
start(const char *const *kv)
{
	cfg = contract_config(&vitals_plugin, NULL, kv);
	ck_assert_int_eq(
	    vitals_plugin.init(mock_ctx("synthetic"), cfg, &st), 0);
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_eq(mock_ntimers(), 1);
}

static void
fire(unsigned times)
{
	ck_assert_int_eq(mock_timer_fire(0, times), 0);
}

static uint32_t
fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* ---- the descriptor and the defaults ---- */

/* A timer run late (the loop was busy) makes up the ticks it missed. */
START_TEST(late_timer_catches_up)
{
	start(NULL);
	fire(1);
	ck_assert_uint_eq(mock_vital_events("cpu"), 20);
	mock_clock_advance(40000000); /* 4 ticks missed */
	fire(1);
	ck_assert_uint_eq(mock_vital_events("cpu"), 20 + 5 * 20);
	mock_clock_advance(3600000000000ULL); /* an hour: not replayed */
	fire(1);
	ck_assert_uint_le(
	    mock_vital_events("cpu"), 120 + 101 * 20); /* <= 1 s */
}
END_TEST

START_TEST(defaults)
{
	static const char *const names[] = { "cpu", "sched", "diskio" };
	unsigned i;

	start(NULL);
	ck_assert_uint_eq(mock_nvitals(), 3);
	for (i = 0; i < 3; i++)
		ck_assert_str_eq(mock_vital_name(i), names[i]);
	ck_assert_uint_eq(mock_timer_interval(0), 10000000);
	fire(100); /* 1s at 2000/s */
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(mock_vital_events(names[i]), 2000);
		ck_assert_uint_eq(mock_vital_wsum(names[i]), 2000);
		ck_assert_uint_eq(mock_vital_bad(names[i]), 0);
		ck_assert_uint_le(mock_vital_nlabels(names[i]), 500);
	}
	ck_assert_int_eq(vitals_plugin.flush(st), 0);
	ck_assert_uint_eq(vitals_plugin.kind, VITALS_PLUGIN_PROBE);
	ck_assert_str_eq(vitals_plugin.name, "synthetic");
	ck_assert_ptr_null(vitals_plugin.epoch);
	vitals_plugin.fini(NULL);
}
END_TEST

static const struct {
	const char *vital, *unit;
} unit_cases[] = {
	{ "cpu", "samples" },
	{ "sched", "ns" },
	{ "blocking", "ns" },
	{ "lock", "ns" },
	{ "diskio", "bytes" },
	{ "socket", "bytes" },
	{ "kmem", "pages" },
	{ "umem", "pages" },
	{ "syscall", "events" },
	{ "signal", "events" },
};

START_TEST(units)
{
	const char *kv[] = { "vitals", unit_cases[_i].vital, NULL };

	start(kv);
	ck_assert_str_eq(
	    mock_vital_unit(unit_cases[_i].vital), unit_cases[_i].unit);
}
END_TEST

/* ---- determinism ---- */

/* Digest of `vital` after 50 ticks with the given vitals and seed. */
static uint64_t
digest(const char *vitals, const char *seed, const char *vital)
{
	const char *kv[] = { "vitals", vitals, "seed", seed, "weight", "7",
		NULL };
	uint64_t d;

	start(kv);
	fire(50);
	d = mock_vital_digest(vital);
	ck_assert_uint_eq(mock_vital_events(vital), 1000);
	stop();
	mock_reset();
	return d;
}

START_TEST(same_seed_same_stream)
{
	uint64_t a = digest("cpu,sched", "1", "cpu");

	ck_assert_uint_eq(digest("cpu,sched", "1", "cpu"), a);
	ck_assert_uint_ne(digest("cpu,sched", "2", "cpu"), a);
	ck_assert_uint_ne(digest("cpu,sched", "1", "sched"), a);
	/* Each vital has its own stream: others do not disturb it. */
	ck_assert_uint_eq(digest("kmem,cpu", "1", "cpu"), a);
	ck_assert_uint_eq(digest("cpu", "1", "cpu"), a);
}
END_TEST

/* ---- labels: Zipf ranks, exes, stacks, weights ---- */

static const struct {
	const char *s;
	double ratio; /* P(rank 1) / P(rank 2) = 2^s */
} zipf_cases[] = {
	{ "0", 1 },
	{ "0.5", 1.41421356 },
	{ "1.0", 2 },
	{ "1.5", 2.8284271 },
	{ "2", 4 },
	{ "3", 8 },
};

START_TEST(zipf_ratio)
{
	const char *kv[] = { "vitals", "cpu", "labels", "50", "rate", "200000",
		"tick", "1s", "zipf", zipf_cases[_i].s, NULL };
	const struct mock_label *r1, *r2;
	double s = atof(zipf_cases[_i].s), h = 0, ratio, tol;
	unsigned r;

	start(kv);
	fire(1);
	ck_assert_uint_eq(mock_vital_events("cpu"), 200000);
	r1 = mock_label("cpu", LABEL(1));
	r2 = mock_label("cpu", LABEL(2));
	ck_assert_ptr_nonnull(r1);
	ck_assert_ptr_nonnull(r2);
	ratio = (double)r1->events / (double)r2->events;
	/* Four standard deviations of the ratio of two Poisson counts. */
	tol = 4 * sqrt(1.0 / r1->events + 1.0 / r2->events);
	ck_assert_msg(fabs(ratio / zipf_cases[_i].ratio - 1) < tol,
	    "s=%g: rank1/rank2 = %g, want %g", s, ratio, zipf_cases[_i].ratio);
	for (r = 1; r <= 50; r++)
		h += pow(r, -s);
	ck_assert_double_eq_tol(
	    r1->events / 200000.0, 1 / h, 4 * sqrt(r1->events) / 200000.0);
	ck_assert_ptr_null(mock_label("cpu", LABEL(51)));
	ck_assert_uint_eq(mock_vital_overflow("cpu"), 0);
}
END_TEST

START_TEST(exes_and_stacks)
{
	const char *kv[] = { "vitals", "cpu", "labels", "40", "zipf", "0",
		"rate", "100000", "tick", "100ms", NULL };
	const struct mock_label *l, *prev = NULL;
	char path[64];
	unsigned r;

	start(kv);
	fire(10);
	for (r = 1; r <= 40; r++) {
		l = mock_label("cpu", LABEL(r));
		ck_assert_ptr_nonnull(l);
		snprintf(path, sizeof(path), "/usr/bin/synth-%u", (r - 1) % 8);
		ck_assert_str_eq(l->exe, path);
		ck_assert_str_eq(l->comm, path + 9);
		ck_assert_uint_eq(l->exe_id, fnv(path));
		ck_assert_uint_eq(l->nkstack, 3);
		ck_assert_uint_eq(l->nustack, 3);
		ck_assert_uint_eq(l->stack_changes, 0);
		ck_assert_uint_ge(l->kstack0, 0xffffffff81000000ULL);
		ck_assert_uint_ge(l->ustack0, 0x400000);
		ck_assert_uint_lt(l->ustack0, 0x500000);
		ck_assert_uint_eq(l->wmin, 1);
		ck_assert_uint_eq(l->wmax, 1);
		if (prev != NULL)
			ck_assert_uint_ne(l->stack_hash, prev->stack_hash);
		prev = l;
	}
}
END_TEST

static const struct {
	const char *depth;
	uint32_t nk, nu;
} depth_cases[] = {
	{ "0", 0, 0 },
	{ "1", 0, 1 },
	{ "7", 3, 4 },
	{ "128", 64, 64 },
};

START_TEST(stack_depth)
{
	const char *kv[] = { "vitals", "cpu", "stack_depth",
		depth_cases[_i].depth, NULL };
	const struct mock_label *l;

	start(kv);
	fire(10);
	ck_assert_uint_eq(mock_vital_bad("cpu"), 0);
	l = mock_label("cpu", LABEL(1));
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->nkstack, depth_cases[_i].nk);
	ck_assert_uint_eq(l->nustack, depth_cases[_i].nu);
	ck_assert_uint_eq(l->stack_changes, 0);
}
END_TEST

START_TEST(weights)
{
	const char *kv[] = { "vitals", "sched", "weight", "100", "rate",
		"100000", "tick", "1s", NULL };
	const struct mock_label *l = NULL;
	double mean;

	start(kv);
	fire(1);
	mean = (double)mock_vital_wsum("sched") / 100000.0;
	ck_assert_double_eq_tol(mean, 100, 1.5);
	l = mock_label("sched", LABEL(1));
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_ge(l->wmin, 1);
	ck_assert_uint_le(l->wmax, 199);
	ck_assert_uint_lt(l->wmin, 10);
	ck_assert_uint_gt(l->wmax, 190);
}
END_TEST

/* ---- the timer: rate * tick events per vital, fractions carried ---- */

static const struct {
	const char *rate, *tick;
	unsigned fires;
	uint64_t events;
} rate_cases[] = {
	{ "2000", "10ms", 1, 20 },
	{ "2000", "10ms", 100, 2000 },
	{ "3", "10ms", 100, 3 },
	{ "3", "10ms", 99, 2 },
	{ "7", "300ms", 10, 21 },
	{ "333", "7ms", 1000, 2331 },
	{ "1000000", "1ms", 10, 10000 },
	{ "0", "10ms", 50, 0 },
	{ "10", "1500ms", 3, 45 },
};

START_TEST(timer_rate)
{
	const char *kv[] = { "rate", rate_cases[_i].rate, "tick",
		rate_cases[_i].tick, NULL };

	start(kv);
	fire(rate_cases[_i].fires);
	ck_assert_uint_eq(mock_vital_events("cpu"), rate_cases[_i].events);
	ck_assert_uint_eq(mock_vital_events("sched"), rate_cases[_i].events);
	ck_assert_uint_eq(mock_vital_events("diskio"), rate_cases[_i].events);
}
END_TEST

/* ---- anomaly injection ---- */

#define NEPOCHS 5

static const struct {
	const char *vital, *epoch, *epochs, *factor;
	uint64_t cpu[NEPOCHS], sched[NEPOCHS];
} burst_cases[] = {
	{ NULL, "2", "1", "10", { 1000, 1000, 10000, 1000, 1000 },
	    { 1000, 1000, 1000, 1000, 1000 } },
	{ "sched", "0", "2", "3", { 1000, 1000, 1000, 1000, 1000 },
	    { 3000, 3000, 1000, 1000, 1000 } },
	{ "cpu", "4", "9", "0.5", { 1000, 1000, 1000, 1000, 500 },
	    { 1000, 1000, 1000, 1000, 1000 } },
	{ NULL, "-1", "1", "10", { 1000, 1000, 1000, 1000, 1000 },
	    { 1000, 1000, 1000, 1000, 1000 } },
};

START_TEST(burst_epoch)
{
	const char *kv[] = { "vitals", "cpu,sched", "rate", "1000", "tick",
		"100ms", "burst_epoch", burst_cases[_i].epoch, "burst_epochs",
		burst_cases[_i].epochs, "burst_factor", burst_cases[_i].factor,
		burst_cases[_i].vital ? "burst_vital" : NULL,
		burst_cases[_i].vital, NULL };
	uint64_t cpu = 0, sched = 0;
	unsigned e;

	start(kv);
	for (e = 0; e < NEPOCHS; e++) {
		fire(10); /* one second per epoch */
		ck_assert_uint_eq(
		    mock_vital_events("cpu") - cpu, burst_cases[_i].cpu[e]);
		ck_assert_uint_eq(mock_vital_events("sched") - sched,
		    burst_cases[_i].sched[e]);
		cpu = mock_vital_events("cpu");
		sched = mock_vital_events("sched");
		ck_assert_int_eq(vitals_plugin.flush(st), 0);
	}
}
END_TEST

static const struct {
	const char *epochs;
	int rogue[NEPOCHS]; /* the rogue label gets events in that epoch */
} rogue_cases[] = {
	{ "1", { 0, 1, 0, 0, 0 } },
	{ "3", { 0, 1, 1, 1, 0 } },
};

START_TEST(burst_label)
{
	const char *kv[] = { "vitals", "cpu,sched", "labels", "50", "rate",
		"10000", "tick", "100ms", "burst_epoch", "1", "burst_label",
		"30583", "burst_factor", "5", "burst_epochs",
		rogue_cases[_i].epochs, NULL };
	const struct mock_label *rogue, *top;
	uint64_t was = 0, top_was = 0, events = 0, now;
	double h = 0, want;
	unsigned e, r;

	for (r = 1; r <= 50; r++)
		h += 1.0 / r;
	want = 5 * 10000 / h; /* 5 x the top label's expected 10000/H(50) */
	start(kv);
	for (e = 0; e < NEPOCHS; e++) {
		fire(10);
		rogue = mock_label("cpu", 30583);
		top = mock_label("cpu", LABEL(1));
		now = rogue != NULL ? rogue->events : 0;
		/* The normal stream goes on unchanged. */
		ck_assert_uint_eq(
		    mock_vital_events("cpu") - events - (now - was), 10000);
		if (rogue_cases[_i].rogue[e]) {
			ck_assert_ptr_nonnull(rogue);
			ck_assert_str_eq(rogue->exe, "/usr/bin/synth-rogue");
			ck_assert_str_eq(rogue->comm, "synth-rogue");
			ck_assert_double_eq_tol((double)(now - was), want, 1);
			ck_assert_double_eq_tol((double)(now - was) /
				(double)(top->events - top_was),
			    5, 0.5);
		} else {
			ck_assert_uint_eq(now - was, 0);
		}
		ck_assert_ptr_null(mock_label("sched", 30583));
		was = now;
		top_was = top->events;
		events = mock_vital_events("cpu");
		ck_assert_int_eq(vitals_plugin.flush(st), 0);
	}
}
END_TEST

/* ---- bad options ---- */

static const struct {
	const char *key, *value;
} bad_cases[] = {
	{ "labels", "0" },
	{ "burst_vital", "nosuch" },
	{ "vitals", "" },
	{ "vitals", "cpu,sched,cpu" },
	{ "tick", "0" },
	{ "tick", "2m" },
	{ "rate", "-1" },
	{ "rate", "20000000" },
	{ "zipf", "4.5" },
	{ "weight", "0" },
	{ "exes", "0" },
	{ "stack_depth", "129" },
	{ "burst_factor", "-1" },
	{ "burst_epochs", "0" },
	{ "burst_epoch", "-2" },
	{ "burst_label", "-5" },
};

/* A number that is not finite never reaches the plugin: the core refuses it. */
START_TEST(nan_refused)
{
	void *c = mock_config_new(&vitals_plugin);

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(
	    mock_config_set(&vitals_plugin, c, "zipf", "nan"), -EINVAL);
	mock_config_free(&vitals_plugin, c);
}
END_TEST

START_TEST(bad_options)
{
	const char *kv[] = { bad_cases[_i].key, bad_cases[_i].value, NULL };
	char quoted[32];
	void *s = NULL;
	int rc;

	cfg = contract_config(&vitals_plugin, NULL, kv);
	rc = vitals_plugin.init(mock_ctx("synthetic"), cfg, &s);
	snprintf(quoted, sizeof(quoted), "'%s'", bad_cases[_i].key);
	ck_assert_uint_eq(mock_nvitals(), 0);
	ck_assert_uint_eq(mock_ntimers(), 0);
	contract_refused(&vitals_plugin, cfg, rc, s, quoted);
}
END_TEST

static Suite *
synthetic_suite(void)
{
	Suite *s = suite_create("synthetic");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, late_timer_catches_up);
	tcase_add_loop_test(tc, units, 0, NCASES(unit_cases));
	tcase_add_test(tc, same_seed_same_stream);
	tcase_add_loop_test(tc, zipf_ratio, 0, NCASES(zipf_cases));
	tcase_add_test(tc, exes_and_stacks);
	tcase_add_loop_test(tc, stack_depth, 0, NCASES(depth_cases));
	tcase_add_test(tc, weights);
	tcase_add_loop_test(tc, timer_rate, 0, NCASES(rate_cases));
	tcase_add_loop_test(tc, burst_epoch, 0, NCASES(burst_cases));
	tcase_add_loop_test(tc, burst_label, 0, NCASES(rogue_cases));
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, nan_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(synthetic_suite());
}
