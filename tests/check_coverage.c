/* SPDX-License-Identifier: MIT */
/*
 * The paper's coverage claim (section 5.3) on streams with known truth:
 * of the labels whose true count reaches the floor, at least 99.9% get
 * at least one sample, at the default sketch sizes.  Prints the figures.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "testutil.h"
#include "zipf.h"

struct stream {
	const char *name;
	uint32_t labels; /* distinct labels */
	uint32_t events; /* events in the epoch */
	double zipf; /* exponent */
	uint32_t wmax; /* weights uniform in 1..wmax */
	uint64_t floor; /* sampling floor (0 = default) */
};

static const struct stream streams[] = {
	{ "zipf1.0 1000 labels", 1000, 200000, 1.0, 1, 0 },
	{ "zipf1.2 500 labels weighted", 500, 100000, 1.2, 100, 0 },
	{ "zipf0.8 1000 labels floor 64", 1000, 300000, 0.8, 1, 64 },
	{ "uniform 800 labels", 800, 80000, 0.0, 1, 0 },
};

/* Run one stream through a fresh engine; return qualifying and covered. */
static void
run_stream(
    const struct stream *st, uint64_t seed, uint32_t *qual, uint32_t *covered)
{
	struct config *c = config_default();
	struct engine *e;
	struct vitals_vital *v;
	const struct vitals_epoch *ep;
	uint64_t *truth = calloc(st->labels, sizeof(uint64_t));
	uint8_t *hit = calloc(st->labels, 1);
	double *cdf = zipf_cdf(st->labels, st->zipf);
	struct vitals_event ev;
	uint64_t rng;
	uint32_t i, l;

	ck_assert_ptr_nonnull(c);
	if (st->floor)
		c->sketch.floor = st->floor;
	e = engine_new(c, "test");
	ck_assert_int_eq(engine_vital_open(e, "cpu", "samples", &v), 0);
	engine_start(e, 1);
	rng = seed;
	memset(&ev, 0, sizeof(ev));
	for (i = 0; i < st->events; i++) {
		l = zipf_draw(cdf, st->labels, &rng);
		ev.label = 0x400000 + (uint64_t)l * 0x100;
		ev.exe_id = 1 + l % 8;
		ev.weight = 1 + zipf_rng(&rng) % st->wmax;
		ev.ts_ns = 1;
		truth[l] += ev.weight;
		vitals_emit(v, &ev);
	}
	ep = engine_close(e, 2, 0);
	printf("  seed %llu: %u samples kept, %llu dropped, t %llu\n",
	    (unsigned long long)seed, ep->vitals[0].nsamples,
	    (unsigned long long)ep->vitals[0].samples_dropped,
	    (unsigned long long)ep->vitals[0].threshold);
	for (i = 0; i < ep->vitals[0].nsamples; i++) {
		l = (uint32_t)((ep->vitals[0].samples[i].label - 0x400000) /
		    0x100);
		hit[l] = 1;
	}
	for (i = 0, *qual = *covered = 0; i < st->labels; i++) {
		if (truth[i] < c->sketch.floor)
			continue;
		(*qual)++;
		*covered += hit[i];
	}
	engine_free(e);
	config_free(c);
	free(truth);
	free(hit);
	free(cdf);
}

START_TEST(test_coverage)
{
	const struct stream *st = &streams[_i];
	uint32_t q, cv, tq = 0, tc = 0;
	uint64_t seed;

	for (seed = 1; seed <= 5; seed++) {
		run_stream(st, seed, &q, &cv);
		tq += q;
		tc += cv;
	}
	printf("coverage %-32s %u of %u labels >= floor sampled: %.4f%%\n",
	    st->name, tc, tq, 100.0 * tc / tq);
	ck_assert_uint_gt(tq, 0);
	ck_assert_msg((double)tc / tq >= 0.999, "%s: coverage %.4f < 99.9%%",
	    st->name, (double)tc / tq);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("coverage");
	TCase *tc = tcase_create("zipf");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_coverage, 0, NCASES(streams));
	suite_add_tcase(su, tc);
	return testutil_run(su);
}
