/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/kernel/units.c: regions of a pool of units placed
 * first-fit at multiples of their size, given back and placed again.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "units.h"

/* Regions land at the first free multiple of their size. */
START_TEST(test_aligned_first_fit)
{
	uint8_t used[16] = { 0 };

	ck_assert_int_eq(units_take(used, 16, 1), 0);
	ck_assert_int_eq(units_take(used, 16, 1), 1);
	ck_assert_int_eq(units_take(used, 16, 2), 2);
	/* 4..7 free: a region of 4 goes there, not at 3 */
	ck_assert_int_eq(units_take(used, 16, 4), 4);
	ck_assert_int_eq(units_take(used, 16, 8), 8);
	ck_assert_int_eq(units_take(used, 16, 1), -1);
	/* every unit in one region */
	ck_assert_int_eq(used[0] + used[1] + used[2] + used[3], 4);
}
END_TEST

/* Room counts only where a region fits whole, at its own multiple. */
START_TEST(test_fragmented)
{
	uint8_t used[16] = { 0 };
	int64_t a, b;

	/* one unit in each half: 14 free, no aligned 8 */
	ck_assert_int_eq(units_take(used, 16, 1), 0);
	ck_assert_int_eq(units_take(used, 16, 1), 1);
	units_give(used, 1, 1);
	memset(used + 8, 1, 1);
	ck_assert_int_eq(units_take(used, 16, 8), -1);
	ck_assert_int_eq(units_take(used, 16, 4), 4);
	a = units_take(used, 16, 4);
	ck_assert_int_eq(a, 12);
	/* given back, a region's units take one of any smaller size */
	units_give(used, (uint32_t)a, 4);
	b = units_take(used, 16, 2);
	ck_assert_int_eq(b, 2);
	ck_assert_int_eq(units_take(used, 16, 2), 10);
	ck_assert_int_eq(units_take(used, 16, 2), 12);
}
END_TEST

/* Sizes that are not powers of two, or larger than the pool, never fit. */
START_TEST(test_bad_sizes)
{
	uint8_t used[6] = { 0 };

	ck_assert_int_eq(units_take(used, 6, 0), -1);
	ck_assert_int_eq(units_take(used, 6, 3), -1);
	ck_assert_int_eq(units_take(used, 6, 8), -1);
	/* a pool not a power of two: 4 fits at 0, not at 4 (only 2 left) */
	ck_assert_int_eq(units_take(used, 6, 4), 0);
	ck_assert_int_eq(units_take(used, 6, 4), -1);
	ck_assert_int_eq(units_take(used, 6, 2), 4);
	ck_assert_int_eq(units_take(used, 6, 1), -1);
}
END_TEST

static Suite *
units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_aligned_first_fit);
	tcase_add_test(tc, test_fragmented);
	tcase_add_test(tc, test_bad_sizes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(units_suite());
}
