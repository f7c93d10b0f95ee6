/* SPDX-License-Identifier: MIT */
/*
 * vitals_time_parse and vitals_range_parse: every form the commands and
 * the HTTP API take, and the times they must refuse instead of wrapping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>
#include <vitals/aggregate.h>

#include "testutil.h"

#define NS 1000000000ull
/* 2026-11-22T10:00:00Z */
#define T0 1795341600ull
#define NOW (T0 * NS)

static const struct {
	const char *s;
	int r;
	uint64_t ns;
} cases[] = {
	{ "now", 0, NOW },
	{ "2026-11-22T10:00Z", 0, NOW },
	{ "2026-11-22T10:00:30Z", 0, NOW + 30 * NS },
	{ "2026-11-22T10:00:30.5Z", 0, NOW + 30 * NS + NS / 2 },
	{ "2026-11-22 11:00+01:00", 0, NOW },
	{ "2026-11-22T05:00-0500", 0, NOW },
	{ "-2h", 0, NOW - 7200 * NS },
	{ "-1d12h", 0, NOW - 129600 * NS },
	{ "-1w", 0, NOW - 604800 * NS },
	{ "@1795341600", 0, NOW },
	{ "1795341600000000000", 0, NOW },
	{ "", -EINVAL, 0 },
	{ "yesterday", -EINVAL, 0 },
	{ "2026-02-30", -EINVAL, 0 },
	{ "2026-11-22T25:00Z", -EINVAL, 0 },
	{ "-2x", -EINVAL, 0 },
	{ "-", 0, NOW },
	{ "@12ab", -EINVAL, 0 },
	/* Past 64-bit nanoseconds (2554) and before 1970: refused, not wrapped. */
	{ "2600-01-01", -ERANGE, 0 },
	{ "1969-12-31T00:00Z", -ERANGE, 0 },
	{ "-30501w", -ERANGE, 0 },
	{ "-99999999999999999999s", -ERANGE, 0 },
	{ "-60y", -EINVAL, 0 },
	{ "-3000w", -ERANGE, 0 }, /* before 1970 */
	{ "@99999999999", -ERANGE, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
};

START_TEST(test_time_forms)
{
	uint64_t ns = 12345;
	int r;

	setenv("TZ", "UTC", 1);
	r = vitals_time_parse(cases[_i].s, NOW, &ns);
	ck_assert_msg(
	    r == cases[_i].r, "'%s': %d, want %d", cases[_i].s, r, cases[_i].r);
	if (r == 0)
		ck_assert_msg(ns == cases[_i].ns, "'%s': %llu, want %llu",
		    cases[_i].s, (unsigned long long)ns,
		    (unsigned long long)cases[_i].ns);
	else
		ck_assert_msg(
		    ns == 12345, "'%s' wrote its output", cases[_i].s);
}
END_TEST

START_TEST(test_ranges)
{
	uint64_t from = 1, to = 2;

	ck_assert_int_eq(vitals_range_parse("-2h..-1h", NOW, &from, &to), 0);
	ck_assert_uint_eq(from, NOW - 7200 * NS);
	ck_assert_uint_eq(to, NOW - 3600 * NS);
	ck_assert_int_eq(
	    vitals_range_parse("-1h..-2h", NOW, &from, &to), -EDOM);
	ck_assert_int_eq(vitals_range_parse("-1h", NOW, &from, &to), -EINVAL);
	ck_assert_int_eq(
	    vitals_range_parse("-1h..2600-01-01", NOW, &from, &to), -ERANGE);
	ck_assert_uint_eq(to, NOW - 3600 * NS); /* untouched */
}
END_TEST

static Suite *
times_suite(void)
{
	Suite *s = suite_create("times");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_time_forms, 0, NCASES(cases));
	tcase_add_test(tc, test_ranges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(times_suite());
}
