/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/engine/metric.c and its place in the engine: summaries per
 * epoch, the swap at close, names sorted and forgotten when idle, the
 * bound on names, refusals, and vitals_epoch_metric on a closed epoch.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "config.h"
#include "engine.h"
#include "metric.h"
#include "testutil.h"

static struct metric_table *tab;

static void
setup(void)
{
	tab = metric_table_new(METRIC_MAX_NAMES);
	ck_assert_ptr_nonnull(tab);
}

static void
teardown(void)
{
	metric_table_free(tab);
	tab = NULL;
}

static void
put(const char *name, const char *unit, double v)
{
	ck_assert_int_eq(metric_put(tab, name, unit, v), 0);
}

START_TEST(test_summary)
{
	static const double xs[] = { 3, -1.5, 10, 0.5 };
	const struct vitals_metric *v;
	uint32_t i, n;

	for (i = 0; i < 4; i++)
		put("proc.disk.sda.await_ms", "ms", xs[i]);
	put("proc.cpu.idle_pct", "%", 42);
	n = metric_close(tab, &v);
	ck_assert_uint_eq(n, 2);
	/* sorted by name, whatever the order of first observation */
	ck_assert_str_eq(v[0].name, "proc.cpu.idle_pct");
	ck_assert_str_eq(v[1].name, "proc.disk.sda.await_ms");
	ck_assert_str_eq(v[1].unit, "ms");
	ck_assert_uint_eq(v[1].n, 4);
	ck_assert(v[1].mean == 3.0);
	ck_assert(v[1].min == -1.5);
	ck_assert(v[1].max == 10);
	ck_assert(v[1].last == 0.5);
	ck_assert(v[0].mean == 42 && v[0].min == 42 && v[0].max == 42);
	ck_assert_uint_eq(v[0].n, 1);
}
END_TEST

/* What is put after a close belongs to the next epoch only. */
START_TEST(test_swap)
{
	const struct vitals_metric *v;

	put("a.x", "1/s", 1);
	put("a.x", "1/s", 3);
	ck_assert_uint_eq(metric_close(tab, &v), 1);
	ck_assert(v[0].mean == 2);
	put("a.x", "1/s", 7);
	/* the closed view does not move while the next epoch fills */
	ck_assert(v[0].mean == 2 && v[0].last == 3);
	ck_assert_uint_eq(metric_close(tab, &v), 1);
	ck_assert_uint_eq(v[0].n, 1);
	ck_assert(v[0].mean == 7 && v[0].min == 7 && v[0].last == 7);
	ck_assert_uint_eq(metric_close(tab, &v), 0);
	ck_assert_ptr_null(v);
}
END_TEST

/* A name without an observation for a whole epoch is forgotten. */
START_TEST(test_idle_forgotten)
{
	const struct vitals_metric *v;

	put("b", "u", 1);
	put("a", "u", 1);
	put("c", "u", 1);
	ck_assert_uint_eq(metric_close(tab, &v), 3);
	ck_assert_uint_eq(metric_count(tab), 3);
	put("b", "u", 2);
	ck_assert_uint_eq(metric_close(tab, &v), 1);
	ck_assert_str_eq(v[0].name, "b");
	ck_assert_uint_eq(metric_count(tab), 1);
	/* forgotten, so another unit is fine now */
	ck_assert_int_eq(metric_put(tab, "a", "v", 1), 0);
	ck_assert_int_eq(metric_put(tab, "b", "v", 1), -EEXIST);
}
END_TEST

/* New names arriving after a close leave the closed view intact. */
START_TEST(test_view_stable)
{
	const struct vitals_metric *v;
	char name[32];
	int i;

	put("m.keep", "u", 5);
	ck_assert_uint_eq(metric_close(tab, &v), 1);
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "m.n%03d", i);
		put(name, "u", i);
	}
	ck_assert_str_eq(v[0].name, "m.keep");
	ck_assert(v[0].last == 5);
	ck_assert_uint_eq(metric_close(tab, &v), 500);
	ck_assert_str_eq(v[0].name, "m.n000");
	ck_assert_str_eq(v[499].name, "m.n499");
	ck_assert(v[499].mean == 499);
}
END_TEST

static const struct {
	const char *name, *unit;
	double value;
} refused[] = {
	{ "", "u", 1 },
	{ NULL, "u", 1 },
	{ ".a", "u", 1 },
	{ "a.", "u", 1 },
	{ "a..b", "u", 1 },
	{ "a b", "u", 1 },
	{ "a/b", "u", 1 },
	{ "caf\xc3\xa9", "u", 1 },
	{ "ok", NULL, 1 },
	{ "ok", "0123456789012345678901234567890123", 1 },
	{ "ok", "u", NAN },
	{ "ok", "u", INFINITY },
	{ "ok", "u", -INFINITY },
};

START_TEST(test_refused)
{
	const struct vitals_metric *v;

	ck_assert_int_eq(metric_put(tab, refused[_i].name, refused[_i].unit,
			     refused[_i].value),
	    -EINVAL);
	ck_assert_uint_eq(metric_close(tab, &v), 0);
	ck_assert_uint_eq(metric_dropped(tab), 0);
}
END_TEST

START_TEST(test_name_limits)
{
	char name[METRIC_NAME_MAX + 1];

	memset(name, 'x', sizeof(name));
	name[METRIC_NAME_MAX - 1] = '\0';
	ck_assert_int_eq(metric_put(tab, name, "u", 1), 0);
	name[METRIC_NAME_MAX - 1] = 'x';
	name[METRIC_NAME_MAX] = '\0';
	ck_assert_int_eq(metric_put(tab, name, "u", 1), -EINVAL);
	ck_assert_int_eq(metric_put(tab, "A-b_9.c-D", "u", 1), 0);
}
END_TEST

/* Beyond the most names: -ENOSPC, counted; kept names still work. */
START_TEST(test_full)
{
	const struct vitals_metric *v;
	struct metric_table *t = metric_table_new(3);

	ck_assert_int_eq(metric_put(t, "a", "u", 1), 0);
	ck_assert_int_eq(metric_put(t, "b", "u", 1), 0);
	ck_assert_int_eq(metric_put(t, "c", "u", 1), 0);
	ck_assert_int_eq(metric_put(t, "d", "u", 1), -ENOSPC);
	ck_assert_int_eq(metric_put(t, "e", "u", 1), -ENOSPC);
	ck_assert_int_eq(metric_put(t, "a", "u", 2), 0);
	ck_assert_uint_eq(metric_dropped(t), 2);
	ck_assert_uint_eq(metric_close(t, &v), 3);
	/* a and b go idle for an epoch: room for d */
	ck_assert_int_eq(metric_put(t, "c", "u", 1), 0);
	metric_close(t, &v);
	ck_assert_int_eq(metric_put(t, "d", "u", 1), 0);
	ck_assert_uint_eq(metric_count(t), 2);
	metric_table_free(t);
}
END_TEST

/* Through the engine: the closed epoch carries the metrics. */
START_TEST(test_engine)
{
	struct config *c = config_default();
	const struct vitals_epoch *e;
	const struct vitals_metric *m;
	struct engine *eng;
	char name[32];
	int i;

	ck_assert_ptr_nonnull(c);
	c->epoch_ns = 1000000000ULL;
	ck_assert_ptr_nonnull(eng = engine_new(c, "h"));
	engine_start(eng, 1000);
	for (i = 99; i >= 0; i--) {
		snprintf(name, sizeof(name), "t.m%02d", i);
		ck_assert_int_eq(engine_metric_put(eng, name, "u", i), 0);
		ck_assert_int_eq(engine_metric_put(eng, name, "u", 2 * i), 0);
	}
	ck_assert_int_eq(engine_metric_put(eng, "t.m05", "x", 1), -EEXIST);
	e = engine_close(eng, 2000, 0);
	/* And the engine's own: the collector's CPU in four parts, its
	 * sketches' memory and its resident set. */
	ck_assert_uint_eq(e->nmetrics, 100 + 6);
	ck_assert_ptr_nonnull(vitals_epoch_metric(e, "vitals.cpu.sampling"));
	ck_assert_ptr_nonnull(vitals_epoch_metric(e, "vitals.memory.sketches"));
	ck_assert_ptr_nonnull(m = vitals_epoch_metric(e, "t.m37"));
	ck_assert(m->mean == 1.5 * 37 && m->max == 74 && m->last == 74);
	ck_assert_ptr_eq(vitals_epoch_metric(e, "t.m00"), &e->metrics[0]);
	ck_assert_ptr_eq(vitals_epoch_metric(e, "t.m99"), &e->metrics[99]);
	ck_assert_ptr_null(vitals_epoch_metric(e, "t.m100"));
	ck_assert_ptr_null(vitals_epoch_metric(e, "t"));
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_eq(e->nmetrics, 6); /* the engine's own, no t.* */
	ck_assert_ptr_null(vitals_epoch_metric(e, "t.m37"));
	engine_free(eng);
	config_free(c);
}
END_TEST

static Suite *
metric_suite(void)
{
	Suite *s = suite_create("metric");
	TCase *t = tcase_create("table");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_summary);
	tcase_add_test(t, test_swap);
	tcase_add_test(t, test_idle_forgotten);
	tcase_add_test(t, test_view_stable);
	tcase_add_loop_test(t, test_refused, 0, NCASES(refused));
	tcase_add_test(t, test_name_limits);
	tcase_add_test(t, test_full);
	tcase_add_test(t, test_engine);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return testutil_run(metric_suite());
}
