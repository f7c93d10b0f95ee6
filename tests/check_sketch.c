/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/engine/sketch.c: the sampling function, HCA arithmetic with
 * weights, the floor, first sightings, the sample bound, linear counting and
 * the HCA's sizing.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/hash.h>

#include "sketch.h"
#include "testutil.h"

static const struct sketch_params small = {
	.hca_size = 64,
	.seen_bits = 1024,
	.max_samples = 8,
	.stack_depth = 4,
	.floor = 1,
};

static struct vitals_event
ev_of(uint64_t label, uint64_t weight)
{
	struct vitals_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.label = label;
	ev.weight = weight;
	ev.exe_id = 7;
	ev.uid = 1000;
	ev.ts_ns = 1;
	return ev;
}

static const struct {
	uint64_t old, new;
	uint32_t shift;
	uint64_t floor;
	int crossed;
} cross_cases[] = {
	{ 0, 1, 1, 1, 1 }, /* 1 = 2^0 */
	{ 1, 2, 1, 1, 1 }, /* 2 */
	{ 2, 3, 1, 1, 0 },
	{ 3, 4, 1, 1, 1 }, /* 4 */
	{ 4, 7, 1, 1, 0 },
	{ 5, 9, 1, 1, 1 }, /* weight 4 jumps over 8 */
	{ 1000, 1023, 1, 1, 0 },
	{ 1000, 1024, 1, 1, 1 },
	{ 1, 2, 2, 1, 0 }, /* t = 4: powers 1, 4, 16 */
	{ 3, 4, 2, 1, 1 },
	{ 4, 15, 2, 1, 0 },
	{ 15, 16, 2, 1, 1 },
	{ 0, 1, 1, 4, 0 }, /* floor 4: 1 and 2 are below */
	{ 1, 2, 1, 4, 0 },
	{ 3, 4, 1, 4, 1 },
	{ 3, 5, 2, 5, 0 }, /* crossed 4 but the floor is 5 */
	{ 10, 10, 1, 1, 0 }, /* no change */
	{ 1ULL << 62, (1ULL << 63) + 5, 1, 1, 1 },
};

START_TEST(test_crossed_table)
{
	int i = _i;

	ck_assert_int_eq(sketch_crossed(cross_cases[i].old, cross_cases[i].new,
			     cross_cases[i].shift, cross_cases[i].floor),
	    cross_cases[i].crossed);
}
END_TEST

/* One label: samples at counts 1, 2, 4, 8, ... (log2 N + 1 of them). */
START_TEST(test_log_samples)
{
	struct sketch_params p = small;
	struct vitals_event ev = ev_of(0x1234, 1);
	struct sketch *s;
	int i, kept = 0;

	p.max_samples = 64;
	s = sketch_new(&p, NULL);
	ck_assert_ptr_nonnull(s);
	for (i = 1; i <= 1000; i++)
		kept += sketch_add(s, &ev, 1) == 1;
	ck_assert_int_eq(kept, 10); /* 1..512 */
	ck_assert_uint_eq(s->events, 1000);
	ck_assert_uint_eq(s->wsum, 1000);
	ck_assert_uint_eq(s->samples[3].count, 8);
	sketch_free(s);
}
END_TEST

START_TEST(test_weights_and_slot)
{
	struct vitals_event ev = ev_of(0xabc, 300);
	struct sketch *s = sketch_new(&small, NULL);
	uint64_t slot =
	    vitals_hash_label(0xabc, 7, 1000) & (small.hca_size - 1);

	sketch_add(s, &ev, 1);
	ev.weight = 200;
	sketch_add(s, &ev, 1);
	ck_assert_uint_eq(s->hca[slot], 500);
	ck_assert_uint_eq(s->wsum, 500);
	ck_assert_uint_eq(s->events, 2);
	ck_assert_uint_eq(s->samples[0].slot, slot);
	/* 300 -> 500 crossed no power of 2 (256 was crossed by the first). */
	ck_assert_uint_eq(s->nsamples, 1);
	sketch_free(s);
}
END_TEST

START_TEST(test_floor)
{
	struct sketch_params p = small;
	struct vitals_event ev = ev_of(0x55, 1);
	struct sketch *s;
	int i;

	p.floor = 16;
	s = sketch_new(&p, NULL);
	for (i = 1; i < 16; i++)
		ck_assert_int_eq(sketch_add(s, &ev, 1), 0);
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1); /* 16 */
	ck_assert_uint_eq(s->samples[0].count, 16);
	sketch_free(s);
}
END_TEST

/* A label sharing a counter with a heavy one still gets a sample. */
START_TEST(test_first_sighting_on_collision)
{
	struct sketch_params p = small;
	struct vitals_event heavy = ev_of(1, 1), light;
	struct sketch *s;
	uint64_t target, l;
	int i, kept;

	p.hca_size = 32;
	p.max_samples = 64;
	s = sketch_new(&p, NULL);
	target = vitals_hash_label(1, 7, 1000) & 31;
	for (l = 2; (vitals_hash_label(l, 7, 1000) & 31) != target; l++)
		;
	for (i = 0; i < 1000; i++)
		sketch_add(s, &heavy, 1);
	light = ev_of(l, 1);
	kept = sketch_add(s, &light, 1); /* counter 1000 -> 1001: no power */
	ck_assert_int_eq(kept, 1);
	ck_assert_uint_eq(s->samples[s->nsamples - 1].label, l);
	ck_assert_int_eq(sketch_add(s, &light, 1), 0); /* seen now */
	sketch_free(s);
}
END_TEST

START_TEST(test_sample_bound_and_reset)
{
	struct sketch *s = sketch_new(&small, NULL);
	struct vitals_event ev;
	int i, r, full = 0;

	for (i = 0; i < 20; i++) {
		ev = ev_of(0x1000 + (uint64_t)i * 977, 1);
		r = sketch_add(s, &ev, 1);
		full += r == 2;
	}
	ck_assert_uint_eq(s->nsamples, small.max_samples);
	ck_assert_uint_eq(s->samples_dropped, (uint64_t)full);
	ck_assert_int_ge(full, 1);
	sketch_reset(s);
	ck_assert_uint_eq(s->nsamples, 0);
	ck_assert_uint_eq(s->events, 0);
	for (i = 0; i < (int)small.hca_size; i++)
		ck_assert_uint_eq(s->hca[i], 0);
	ev = ev_of(0x1000, 1);
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1); /* fresh again */
	sketch_free(s);
}
END_TEST

/*
 * The disk budget's limit spent by first sightings, a heavy label seen
 * only then still gets its sample at a crossing of a power of t (a leak
 * that starts mid-epoch), while another light label does not.
 */
START_TEST(test_limit_spent_heavy_label)
{
	struct sketch_params p = small;
	struct vitals_event ev;
	struct sketch *s;
	uint32_t i, j, heavy = 0;
	int r;

	p.max_samples = 64;
	s = sketch_new(&p, NULL);
	ck_assert_ptr_nonnull(s);
	s->limit = 4;
	for (i = 0; i < 4; i++) {
		ev = ev_of(0x1000 + (uint64_t)i * 977, 1);
		ck_assert_int_eq(sketch_add(s, &ev, 1), 1);
	}
	ev = ev_of(0x9999, 1); /* light: its first sighting finds no room */
	ck_assert_int_eq(sketch_add(s, &ev, 4), 2);
	/* heavy: t = 16, its first sighting dropped, then 1000 events */
	ev = ev_of(0x7777, 1);
	for (i = 0; i < 1000; i++) {
		r = sketch_add(s, &ev, 4);
		heavy += r == 1;
	}
	/* One sample past the limit: its first crossing (16 of 16, 64, 256). */
	ck_assert_uint_eq(heavy, 1);
	ck_assert_uint_eq(s->nsamples, 4 + 1);
	for (i = 0, r = 0; i < s->nsamples; i++)
		r |= s->samples[i].label == 0x7777;
	ck_assert_int_eq(r, 1);
	/* Labels sampled already get no more past the limit, heavy or not. */
	for (i = 0; i < 1000; i++) {
		ev = ev_of(0x1000, 1);
		ck_assert_int_ne(sketch_add(s, &ev, 4), 1);
	}
	ck_assert_uint_eq(s->nsamples, 4 + 1);
	/* A crowd of heavy labels seen late: one each within the reserve. */
	for (j = 0; j < 20; j++) {
		ev = ev_of(0x20000 + (uint64_t)j * 7919, 1);
		for (i = 0; i < 1000; i++)
			sketch_add(s, &ev, 4);
	}
	ck_assert_uint_eq(s->nsamples, 4 + SKETCH_RESERVE_MIN);
	/* The reserve full, a heavier one takes the lightest one's place. */
	ev = ev_of(0x55555, 1);
	for (i = 0; i < 5000; i++)
		sketch_add(s, &ev, 4);
	ck_assert_uint_eq(s->nsamples, 4 + SKETCH_RESERVE_MIN);
	for (i = 0, r = 0; i < s->nsamples; i++)
		r |= s->samples[i].label == 0x55555;
	ck_assert_int_eq(r, 1);
	ck_assert_uint_eq(s->samples[s->last].label, 0x55555);
	/* The first ones, in the limit, are never replaced. */
	ck_assert_uint_eq(s->samples[0].label, 0x1000);
	sketch_free(s);
}
END_TEST

START_TEST(test_sample_context)
{
	uint64_t ks[6] = { 1, 2, 3, 4, 5, 6 }, us[2] = { 0x400000, 0x400100 };
	struct vitals_event ev = ev_of(0x77, 3);
	struct sketch *s = sketch_new(&small, NULL);
	const struct vitals_sample *sm;

	ev.kstack = ks;
	ev.nkstack = 6;
	ev.ustack = us;
	ev.nustack = 2;
	ev.exe = "/usr/bin/thing";
	ev.comm = "a-very-long-thread-name";
	ev.pid = 42;
	ev.args[1] = 99;
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1);
	sm = &s->samples[0];
	ck_assert_uint_eq(sm->nkstack, small.stack_depth); /* truncated */
	ck_assert_uint_eq(sm->kstack[3], 4);
	ck_assert_uint_eq(sm->nustack, 2);
	ck_assert_uint_eq(sm->ustack[1], 0x400100);
	ck_assert_str_eq(sm->exe, "/usr/bin/thing");
	ck_assert_str_eq(sm->comm, "a-very-long-thr");
	ck_assert_uint_eq(sm->pid, 42);
	ck_assert_uint_eq(sm->args[1], 99);
	ck_assert_uint_eq(sm->weight, 3);
	/* The same exe id is interned once. */
	ev.label = 0x99;
	sketch_add(s, &ev, 1);
	ck_assert_ptr_eq(s->samples[1].exe, sm->exe);
	sketch_free(s);
}
END_TEST

/*
 * Two sketches sharing a budget: each grows its store within it (its
 * first SKETCH_FIRST samples whatever the budget, kept for it while it
 * has none, so that the stores never pass the limit), frames and names
 * stay right as the store moves, a full budget drops samples, and a
 * trimmed sketch gives its store back for the other to use.
 */
START_TEST(test_budget)
{
	struct sketch_params p = small;
	struct sketch_budget b = { 0, 0 };
	uint64_t ks[3] = { 11, 12, 13 }, us[2] = { 21, 22 };
	const char *names[5] = { "k0", "k1", "k2", "u0", "u1" };
	struct sketch *s, *t;
	struct vitals_event ev;
	uint32_t i, kept;

	p.max_samples = 1000;
	b.limit = 40 * sketch_sample_bytes(&p);
	s = sketch_new(&p, &b);
	t = sketch_new(&p, &b);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(b.used, 0); /* nothing until a sample comes */
	ck_assert_uint_eq(b.kept, 2 * SKETCH_FIRST * sketch_sample_bytes(&p));
	for (i = 0, kept = 0; i < 300; i++) {
		ev = ev_of(0x1000 + (uint64_t)i * 977, 1);
		ev.kstack = ks;
		ev.nkstack = 3;
		ev.ustack = us;
		ev.nustack = 2;
		if (sketch_add(s, &ev, 1) == 1) {
			kept++;
			ck_assert_int_eq(
			    sketch_set_syms(s, s->nsamples - 1, names, 3, 2),
			    0);
		}
	}
	ck_assert_uint_eq(kept, s->nsamples);
	ck_assert_uint_lt(s->nsamples, 300);
	ck_assert_uint_gt(s->samples_dropped, 0);
	/* t's first samples are kept for it: s had the rest. */
	ck_assert_uint_eq(b.kept, SKETCH_FIRST * sketch_sample_bytes(&p));
	ck_assert_uint_le(b.used + b.kept, b.limit);
	ck_assert_uint_gt(b.used + b.kept + sketch_sample_bytes(&p), b.limit);
	ck_assert_int_eq(sketch_would_keep(s, 1, 0x77, 1, 5), 0);
	for (i = 0; i < s->nsamples; i++) {
		ck_assert_uint_eq(s->samples[i].nkstack, 3);
		ck_assert_uint_eq(s->samples[i].kstack[2], 13);
		ck_assert_uint_eq(s->samples[i].ustack[1], 22);
		ck_assert_str_eq(s->samples[i].ksyms[4], "u1");
	}
	/* t has its first samples, no more. */
	for (i = 0; i < 100; i++) {
		ev = ev_of(0x5000 + (uint64_t)i * 977, 1);
		sketch_add(t, &ev, 1);
	}
	ck_assert_uint_eq(t->nsamples, SKETCH_FIRST);
	ck_assert_uint_eq(b.kept, 0);
	ck_assert_uint_le(b.used, b.limit);
	sketch_trim(s);
	ck_assert_uint_eq(s->nsamples, 0);
	sketch_reset(t);
	for (i = 0; i < 100; i++) {
		ev = ev_of(0x9000 + (uint64_t)i * 977, 1);
		sketch_add(t, &ev, 1);
	}
	ck_assert_uint_gt(t->nsamples, SKETCH_FIRST);
	sketch_free(s);
	sketch_free(t);
	ck_assert_uint_eq(b.used, 0);
}
END_TEST

/*
 * sketch_would_keep, the test before a kernel record is made into an
 * event, never refuses a sample sketch_keep would keep, and refuses
 * what does not fit.  Stacks of every depth, within a budget that
 * runs out.
 */
START_TEST(test_would_keep)
{
	struct sketch_params p = small;
	struct sketch_budget b = { 0, 0 };
	uint64_t ks[4] = { 1, 2, 3, 4 }, us[4] = { 5, 6, 7, 8 };
	struct vitals_event ev;
	struct sketch *s;
	uint32_t i, nk, nu, refused = 0;
	int would, r;

	p.max_samples = 1000;
	b.limit = 50 * sketch_sample_bytes(&p) + 7;
	s = sketch_new(&p, &b);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < 400; i++) {
		ev = ev_of(0x2000 + (uint64_t)i * 977, 1);
		nk = i % 5;
		nu = (i / 5) % 5;
		ev.kstack = ks;
		ev.nkstack = nk;
		ev.ustack = us;
		ev.nustack = nu;
		would = sketch_would_keep(s, 1, 0, 1, nk + nu);
		r = sketch_keep(s, &ev, 0, 1);
		if (!would) {
			ck_assert_int_eq(r, 2);
			refused++;
		}
	}
	ck_assert_uint_gt(refused, 0);
	ck_assert_int_eq(sketch_full(s), 1);
	ck_assert_int_eq(sketch_would_keep(s, 1, 0, 1, 8), 0);
	sketch_free(s);

	/*
	 * Frames run out while the samples' array has room: a deep sample
	 * is refused before it is made, a sample with no frames is not, and
	 * the store is not full (first sightings of shallow stacks still
	 * fit).
	 */
	b.used = 0;
	b.limit = 32 * (sketch_sample_bytes(&p) - 8 * 16) + 200 * 16 + 50;
	s = sketch_new(&p, &b);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < 20; i++) {
		ev = ev_of(0x3000 + (uint64_t)i * 977, 1);
		ck_assert_int_eq(sketch_keep(s, &ev, 0, 1), 1);
	}
	for (i = 0; sketch_would_keep(s, 1, 0, 1, 8); i++) {
		ck_assert_uint_lt(i, 100);
		ev = ev_of(0x4000 + (uint64_t)i * 977, 1);
		ev.kstack = ks;
		ev.nkstack = 4;
		ev.ustack = us;
		ev.nustack = 4;
		ck_assert_int_eq(sketch_keep(s, &ev, 0, 1), 1);
	}
	ck_assert_uint_lt(s->nsamples, s->cap);
	ck_assert_int_eq(sketch_would_keep(s, 1, 0, 1, 8), 0);
	ck_assert_int_eq(sketch_full(s), 0);
	ck_assert_int_eq(sketch_would_keep(s, 1, 0, 1, 0), 1);
	sketch_free(s);
}
END_TEST

START_TEST(test_unique_estimate)
{
	struct sketch_params p = small;
	struct vitals_event ev;
	struct sketch *s;
	uint64_t i, est;

	p.hca_size = 1024;
	s = sketch_new(&p, NULL);
	ck_assert_uint_eq(sketch_unique(s->hca, 1024), 0);
	for (i = 0; i < 300; i++) {
		ev = ev_of(i * 4096 + 17, 1 + i % 5);
		sketch_add(s, &ev, 1);
	}
	est = sketch_unique(s->hca, 1024);
	ck_assert_msg(est >= 280 && est <= 320, "estimate %llu for 300",
	    (unsigned long long)est);
	sketch_free(s);
}
END_TEST

/* sketch_hca_next: grow at once past half full, shrink only when idle. */
static const struct {
	uint32_t m; /* size now */
	uint64_t unique; /* labels the epoch counted */
	uint32_t idle; /* idle epochs before */
	uint32_t next, idle_after;
} next_cases[] = {
	{ 128, 10, 0, 128, 0 }, /* at the least: never idle */
	{ 128, 64, 0, 128, 0 }, /* half full: stays */
	{ 128, 65, 0, 256, 0 }, /* past half: grows */
	{ 128, 621, 0, 2048, 0 }, /* saturated (m ln m): 16 times */
	{ 128, 100000, 0, 16384, 0 }, /* bounded by the most */
	{ 16384, 100000, 0, 16384, 0 },
	{ 4096, 600, 0, 4096, 0 }, /* 0.15 full: holds */
	{ 4096, 400, 0, 4096, 1 }, /* under 1/8 full: idle epoch 1 */
	{ 4096, 400, 2, 4096, 3 },
	{ 4096, 400, 3, 1024, 0 }, /* the 4th: to what keeps it half full */
	{ 4096, 10, 3, 128, 0 }, /* not below the least */
	{ 4096, 1500, 3, 4096, 0 }, /* over 1/8 again: idle count restarts */
	{ 32768, 10, 0, 16384, 1 }, /* past a lowered most: down to it */
};

START_TEST(test_hca_next)
{
	uint32_t idle = next_cases[_i].idle;

	ck_assert_uint_eq(sketch_hca_next(next_cases[_i].m,
			      next_cases[_i].unique, 128, 16384, &idle),
	    next_cases[_i].next);
	ck_assert_uint_eq(idle, next_cases[_i].idle_after);
}
END_TEST

/* A resized sketch counts in its new size with a filter that follows it. */
START_TEST(test_resize_hca)
{
	struct sketch_params p = small;
	struct sketch *s;
	struct vitals_event ev = ev_of(0xabc, 1);

	p.hca_max = 4096;
	s = sketch_new(&p, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->p.seen_bits, 64 * 64);
	ck_assert_int_eq(sketch_resize_hca(s, 8192), -EINVAL);
	ck_assert_int_eq(sketch_resize_hca(s, 3000), -EINVAL);
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1);
	ck_assert_int_eq(sketch_resize_hca(s, 1024), -EBUSY);
	sketch_reset(s);
	ck_assert_int_eq(sketch_resize_hca(s, 1024), 0);
	ck_assert_uint_eq(s->p.hca_size, 1024);
	ck_assert_uint_eq(s->p.seen_bits, 64 * 1024);
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1);
	ck_assert_uint_eq(s->hca[vitals_hash_label(0xabc, 7, 1000) & 1023], 1);
	ck_assert_int_eq(sketch_add(s, &ev, 1), 1); /* 2 crosses */
	ck_assert_int_eq(sketch_add(s, &ev, 1), 0); /* 3: seen, no crossing */
	/* The bound covers the sketch at its most. */
	ck_assert_uint_ge(sketch_bytes(&p), 4096 * 8 + 4096 * 8);
	sketch_reset(s);
	ck_assert_int_eq(sketch_resize_hca(s, 64), 0);
	ck_assert_uint_eq(s->p.seen_bits, 64 * 64); /* back to the least */
	sketch_free(s);
}
END_TEST

START_TEST(test_bad_params)
{
	struct sketch_params p = small;

	p.hca_size = 100;
	ck_assert_ptr_null(sketch_new(&p, NULL));
	p = small;
	p.seen_bits = 1000;
	ck_assert_ptr_null(sketch_new(&p, NULL));
	p = small;
	p.floor = 0;
	ck_assert_ptr_null(sketch_new(&p, NULL));
	p = small;
	p.stack_depth = VITALS_STACK_MAX + 1;
	ck_assert_ptr_null(sketch_new(&p, NULL));
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("sketch");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_crossed_table, 0, NCASES(cross_cases));
	tcase_add_test(tc, test_log_samples);
	tcase_add_test(tc, test_weights_and_slot);
	tcase_add_test(tc, test_floor);
	tcase_add_test(tc, test_first_sighting_on_collision);
	tcase_add_test(tc, test_sample_bound_and_reset);
	tcase_add_test(tc, test_limit_spent_heavy_label);
	tcase_add_test(tc, test_sample_context);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_would_keep);
	tcase_add_test(tc, test_unique_estimate);
	tcase_add_test(tc, test_bad_params);
	tcase_add_loop_test(tc, test_hca_next, 0, NCASES(next_cases));
	tcase_add_test(tc, test_resize_hca);
	suite_add_tcase(su, tc);
	return testutil_run(su);
}
