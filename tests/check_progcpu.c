/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/kernel/progcpu.c: the probes' programs' CPU
 * reckoned from the run-time statistics of short windows.  The figures
 * are those of a daemon started on a quiet machine before a workload
 * that contends for a lock: its first window counted one lock wait in a
 * hundred contentions.
 */
#include <check.h>
#include <stdint.h>

#include "progcpu.h"
#include "testutil.h"

#define SEC 1000000000ULL

/* Before any window, nothing is reckoned. */
START_TEST(test_none)
{
	struct progcpu pc = { 0 };

	ck_assert_uint_eq(progcpu_est(&pc, 1000000, 60 * SEC), 0);
	progcpu_window(&pc, 0, 5000, SEC); /* counted nothing */
	progcpu_window(&pc, 10, 0, SEC); /* took no time */
	progcpu_window(&pc, 10, 5000, 0); /* lasted no time */
	ck_assert_uint_eq(pc.events, 0);
	ck_assert_uint_eq(progcpu_est(&pc, 1000000, 60 * SEC), 0);
}
END_TEST

/*
 * A window of one event, 483.5 us of programs in a second, then 57,143
 * events in 37 s: by the rate, 17.9 ms, not 27.6 s (the cost "per
 * event" times the events).
 */
START_TEST(test_few_events_by_rate)
{
	struct progcpu pc = { 0 };
	uint64_t est;

	progcpu_window(&pc, 1, 483497, SEC);
	est = progcpu_est(&pc, 57143, 37 * SEC);
	ck_assert_uint_eq(est, 17889389);
	ck_assert_uint_lt(est, 483497ULL * 57143 / 1000);
	/* the rate is of time, not of events */
	ck_assert_uint_eq(progcpu_est(&pc, 0, 37 * SEC), est);
	ck_assert_uint_eq(progcpu_est(&pc, 1, 2 * SEC), 966994);
}
END_TEST

/* A window of enough events measures a cost per event, used by events. */
START_TEST(test_per_event)
{
	struct progcpu pc = { 0 };

	progcpu_window(&pc, 1, 483497, SEC);
	progcpu_window(&pc, 20000, 3000000, SEC / 10); /* 150 ns an event */
	ck_assert_uint_eq(pc.events, 20000);
	ck_assert_uint_eq(progcpu_est(&pc, 1000000, 60 * SEC), 150000000);
	ck_assert_uint_eq(progcpu_est(&pc, 0, 60 * SEC), 0);
}
END_TEST

/*
 * A quiet window does not overwrite a cost per event; a window of few
 * events replaces another such (the newer rate), and one of enough
 * events replaces a cost per event.
 */
START_TEST(test_replacing)
{
	struct progcpu pc = { 0 };

	progcpu_window(&pc, 20000, 3000000, SEC);
	progcpu_window(&pc, 3, 900000, SEC);
	ck_assert_uint_eq(pc.events, 20000);
	ck_assert_uint_eq(progcpu_est(&pc, 10, 60 * SEC), 1500);
	progcpu_window(&pc, PROGCPU_EVENTS, 2000000, SEC); /* 200 ns */
	ck_assert_uint_eq(progcpu_est(&pc, 10, 60 * SEC), 2000);

	pc = (struct progcpu){ 0 };
	progcpu_window(&pc, 5, 1000000, SEC);
	progcpu_window(&pc, 2, 500000, SEC);
	ck_assert_uint_eq(pc.events, 2);
	ck_assert_uint_eq(progcpu_est(&pc, 0, 10 * SEC), 5000000);
	progcpu_window(&pc, PROGCPU_EVENTS - 1, 400000, SEC);
	ck_assert_uint_eq(progcpu_est(&pc, 0, 10 * SEC), 4000000);
}
END_TEST

static Suite *
progcpu_suite(void)
{
	Suite *s = suite_create("progcpu");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_none);
	tcase_add_test(tc, test_few_events_by_rate);
	tcase_add_test(tc, test_per_event);
	tcase_add_test(tc, test_replacing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(progcpu_suite());
}
