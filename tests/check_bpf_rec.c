/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the ring buffer record's version (<vitals/bpf_shared.h>):
 * user space keeps only whole records of its own layout, and a record of
 * a layout from before the version field, which starts with a time, is
 * not taken for one.
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vitals/bpf_shared.h>

#include "testutil.h"

static struct vitals_bpf_rec rec;

static void
setup(void)
{
	memset(&rec, 0, sizeof(rec));
	rec.version = VITALS_BPF_REC_VERSION;
}

START_TEST(test_whole_record)
{
	ck_assert_int_eq(offsetof(struct vitals_bpf_rec, version), 0);
	ck_assert_int_eq(sizeof(rec) % 8, 0);
	ck_assert(vitals_bpf_rec_valid(&rec, sizeof(rec)));
	/* A longer record (a later layout's) must say so by its version. */
	ck_assert(vitals_bpf_rec_valid(&rec, sizeof(rec) + 8));
}
END_TEST

START_TEST(test_short_record)
{
	ck_assert(!vitals_bpf_rec_valid(&rec, sizeof(rec) - 8));
	ck_assert(!vitals_bpf_rec_valid(&rec, sizeof(uint32_t)));
	ck_assert(!vitals_bpf_rec_valid(&rec, 0));
}
END_TEST

/* Other layouts' first words: other versions, and times (layouts 1-3). */
static const uint64_t other_words[] = {
	0x76720003U,
	0x76720005U,
	0,
	4,
	0x00001234deadbeefULL,
	(uint64_t)VITALS_BPF_REC_VERSION << 32,
};

START_TEST(test_other_layout)
{
	memcpy(&rec, &other_words[_i], sizeof(other_words[_i]));
	ck_assert(!vitals_bpf_rec_valid(&rec, sizeof(rec)));
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("bpf_rec");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_whole_record);
	tcase_add_test(tc, test_short_record);
	tcase_add_loop_test(tc, test_other_layout, 0, NCASES(other_words));
	suite_add_tcase(su, tc);
	return testutil_run(su);
}
