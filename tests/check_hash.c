/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for <vitals/hash.h> in user space: the label hash and its
 * mixer give the known values (tests/hash_vectors.h) that the BPF side is
 * tested against too (tests/check_hash_bpf.c), and libvitals' exported
 * vitals_label_hash() is the same function.
 */
#include <check.h>
#include <stdint.h>

#include <vitals/hash.h>
#include <vitals/vitals.h>

#include "hash_vectors.h"
#include "testutil.h"

START_TEST(test_mix)
{
	const struct hash_mix_vec *v = &hash_mix_vecs[_i];

	ck_assert_uint_eq(vitals_hash_mix64(v->in), v->out);
}
END_TEST

START_TEST(test_label)
{
	const struct hash_label_vec *v = &hash_label_vecs[_i];

	ck_assert_uint_eq(
	    vitals_hash_label(v->label, v->exe_id, v->uid), v->out);
	ck_assert_uint_eq(
	    vitals_label_hash(v->label, v->exe_id, v->uid), v->out);
}
END_TEST

/* The label hash is the mixer applied twice, as the BPF side inlines it. */
START_TEST(test_label_of_mix)
{
	uint64_t l = 0x123456789ULL;
	uint32_t exe = 0xdeadbeefU, uid = 1000;

	ck_assert_uint_eq(vitals_hash_label(l, exe, uid),
	    vitals_hash_mix64(
		l ^ vitals_hash_mix64((uint64_t)exe << 32 | uid)));
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("hash");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_mix, 0, HASH_NMIX);
	tcase_add_loop_test(tc, test_label, 0, HASH_NLABEL);
	tcase_add_test(tc, test_label_of_mix);
	suite_add_tcase(su, tc);
	return testutil_run(su);
}
