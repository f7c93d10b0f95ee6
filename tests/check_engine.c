/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/engine/engine.c: the epoch swap loses nothing under a
 * continuous stream, the adaptive threshold moves both ways, vitals are
 * shared by name, kernel-kept sketches load, findings are copied, the
 * disk budget bounds the samples, and the HCA follows the labels.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "engine.h"
#include "sketch.h"
#include "testutil.h"

static struct config *cfg;
static struct engine *eng;

static void
setup(void)
{
	cfg = config_default();
	ck_assert_ptr_nonnull(cfg);
	cfg->epoch_ns = 1000000000ULL;
	eng = engine_new(cfg, "h1");
	ck_assert_ptr_nonnull(eng);
	engine_start(eng, 1000);
}

static void
teardown(void)
{
	engine_free(eng);
	config_free(cfg);
}

static void
emit_n(struct vitals_vital *v, uint64_t label0, uint32_t nlabels, uint32_t n)
{
	struct vitals_event ev;
	uint32_t i;

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 5;
	for (i = 0; i < n; i++) {
		ev.label = label0 + (i % nlabels) * 64;
		ev.weight = 1;
		vitals_emit(v, &ev);
	}
}

/* Closes at arbitrary points of a continuous stream: totals add up. */
START_TEST(test_swap_loses_nothing)
{
	static const uint32_t chunks[] = { 1, 999, 5000, 0, 1234, 77, 40000,
		3 };
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	uint64_t emitted = 0, seen = 0, sum;
	uint32_t i, j;

	ck_assert_int_eq(engine_vital_open(eng, "sched", "ns", &v), 0);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		emit_n(v, 0x1000, 50 + i, chunks[i]);
		emitted += chunks[i];
		e = engine_close(eng, 2000 + i, 0);
		ck_assert_uint_eq(e->vitals[0].events, chunks[i]);
		for (j = 0, sum = 0; j < e->vitals[0].hca_size; j++)
			sum += e->vitals[0].hca[j];
		ck_assert_uint_eq(sum, chunks[i]);
		ck_assert_uint_eq(e->seq, i);
		seen += e->vitals[0].events;
	}
	ck_assert_uint_eq(seen, emitted);
}
END_TEST

START_TEST(test_view)
{
	struct vitals_vital *a, *b, *c2;
	const struct vitals_epoch *e;

	ck_assert_int_eq(engine_vital_open(eng, "sched", "ns", &a), 0);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &b), 0);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &c2), 0);
	ck_assert_ptr_eq(b, c2);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "ns", &c2), -EEXIST);
	ck_assert_int_eq(
	    engine_vital_open(eng, "Bad Name", "ns", &c2), -EINVAL);
	emit_n(a, 0x10, 300, 3000);
	e = engine_close(eng, 1000 + 500, 1);
	ck_assert_str_eq(e->host, "h1");
	ck_assert_uint_eq(e->nvitals, 2);
	ck_assert_str_eq(e->vitals[0].name, "cpu"); /* sorted */
	ck_assert_str_eq(e->vitals[1].name, "sched");
	ck_assert_uint_eq(e->vitals[1].wsum, 3000);
	ck_assert_uint_ge(e->vitals[1].unique, 250);
	ck_assert_uint_le(e->vitals[1].unique, 350);
	ck_assert_uint_eq(e->start_ns, 1000);
	ck_assert_uint_eq(e->length_ns, 500);
	ck_assert_uint_eq(e->partial, 1);
	ck_assert_uint_eq(e->timescale_s, 1);
	ck_assert_ptr_eq(vitals_epoch_vital(e, "sched"), &e->vitals[1]);
}
END_TEST

/* Sample memory at the high watermark doubles t within the epoch. */
START_TEST(test_t_doubles_on_sample_memory)
{
	struct vitals_vital *v;
	const struct vitals_epoch *e;

	cfg->sketch.max_samples = 64;
	ck_assert_int_eq(engine_vital_open(eng, "kmem", "pages", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 2);
	emit_n(v, 0x100, 1000, 20000);
	ck_assert_uint_gt(vitals_vital_threshold(v), 2);
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_gt(e->vitals[0].threshold, 2);
	ck_assert_uint_le(e->vitals[0].nsamples, 64);
}
END_TEST

/* A quiet epoch under both low watermarks halves t back, to the floor of t. */
START_TEST(test_t_halves_when_quiet)
{
	struct vitals_vital *v;
	uint64_t t0, t1;

	cfg->sketch.max_samples = 64;
	cfg->cpu_low = 1e12; /* any CPU use is "low", even in 1 us epochs */
	ck_assert_int_eq(engine_vital_open(eng, "kmem", "pages", &v), 0);
	emit_n(v, 0x100, 1000, 20000);
	engine_close(eng, 2000, 0);
	t0 = vitals_vital_threshold(v);
	ck_assert_uint_gt(t0, 2);
	emit_n(v, 0x100, 2, 4); /* quiet */
	engine_close(eng, 3000, 0);
	t1 = vitals_vital_threshold(v);
	ck_assert_uint_eq(t1, t0 / 2);
	while (vitals_vital_threshold(v) > 2)
		engine_close(eng, 4000, 0);
	engine_close(eng, 5000, 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 2);
}
END_TEST

/* The CPU high watermark, checked each second, doubles t. */
START_TEST(test_t_doubles_on_cpu)
{
	struct vitals_vital *v;

	cfg->cpu_high = 1e-9; /* any CPU use reaches it */
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	emit_n(v, 0x100, 10, 200000);
	engine_vital_sampling(v, 1000);
	engine_tick(eng);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
	/* No CPU use at all: a plugin reported none, so no change. */
	cfg->cpu_high = 1e9;
	engine_tick(eng);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
}
END_TEST

/* The named metric of epoch e, or fail. */
static const struct vitals_metric *
metric_of(const struct vitals_epoch *e, const char *name)
{
	uint32_t k;

	for (k = 0; k < e->nmetrics; k++)
		if (strcmp(e->metrics[k].name, name) == 0)
			return &e->metrics[k];
	ck_abort_msg("no metric %s", name);
	return NULL;
}

/* Spend ns of this process's CPU on nothing a sample needs. */
static void
burn_cpu(uint64_t ns)
{
	struct timespec ts;
	uint64_t start = 0, now;
	volatile uint64_t x = 1;

	for (;;) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		now =
		    (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		if (start == 0)
			start = now;
		if (now - start >= ns)
			return;
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1;
	}
}

/*
 * t steers the CPU spent handling samples (engine_vital_sampling), not the
 * daemon's steady work (metrics read each second, timers), which it does
 * not change: 20 ms of such work in a 1 s epoch (2%) neither doubles t at
 * a cpu_high of 1% nor keeps it from halving at a cpu_low of 1%, and the
 * epoch has it as vitals.cpu.other.  Counted as sampling, it held t at its
 * maximum on a quiet machine.
 */
START_TEST(test_t_steers_sampling_only)
{
	const struct vitals_epoch *e;
	struct vitals_vital *v;

	cfg->cpu_high = 0.01;
	cfg->cpu_low = 0.01;
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	engine_start(eng, 1000);
	cfg->cpu_high = 1e-9; /* t to 8: two ticks with sampling */
	engine_vital_sampling(v, 1);
	engine_tick(eng);
	engine_vital_sampling(v, 1);
	engine_tick(eng);
	ck_assert_uint_eq(vitals_vital_threshold(v), 8);
	cfg->cpu_high = 0.01;
	burn_cpu(20000000);
	engine_tick(eng);
	ck_assert_uint_eq(vitals_vital_threshold(v), 8);
	engine_vital_sampling(v, 1000000); /* 1 ms: 0.1% */
	e = engine_close(eng, 1000 + 1000000000ULL, 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
	ck_assert_double_eq_tol(
	    metric_of(e, "vitals.cpu.sampling")->last, 0.001, 1e-6);
	/* The 20 ms less the 1 ms said to be sampling's, within the clock's
	 * microseconds. */
	ck_assert(metric_of(e, "vitals.cpu.other")->last >= 0.018);
	engine_release(eng);
}
END_TEST

/*
 * CPU a probe spends counting in the kernel (engine_cpu_add, from
 * vitals_cpu_add) is in the epoch's collector CPU and has a metric of its
 * own, but t does not double for it: t changes how many events are
 * sampled, not what counting them costs.
 */
START_TEST(test_cpu_parts)
{
	const struct vitals_epoch *e;
	struct vitals_vital *v;

	cfg->cpu_high = 0.5; /* half a second of the 1 s epoch */
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &v), 0);
	engine_start(eng, 1000);
	engine_cpu_add(eng, 10000000000ULL); /* 10 s */
	engine_tick(eng);
	ck_assert_uint_eq(vitals_vital_threshold(v), 2);
	e = engine_close(eng, 1000 + 1000000000ULL, 0);
	ck_assert_uint_ge(e->cpu_ns, 10000000000ULL);
	ck_assert_double_eq(metric_of(e, "vitals.cpu.programs")->last, 10.0);
	ck_assert(metric_of(e, "vitals.cpu.sampling")->last < 0.5);
	ck_assert(metric_of(e, "vitals.cpu.fixed")->last >= 0);
	/* The memory the sketches hold, and the process's resident set. */
	ck_assert_double_eq(metric_of(e, "vitals.memory.sketches")->last,
	    (double)engine_held(eng));
	ck_assert(metric_of(e, "vitals.memory.resident")->last >=
	    metric_of(e, "vitals.memory.sketches")->last);
	ck_assert_uint_eq(vitals_vital_threshold(v), 2);
	engine_release(eng);
}
END_TEST

/*
 * A restart resumes each vital's t from a stored epoch of its host, kept
 * within the configured threshold .. threshold_max, until resuming ends.
 */
START_TEST(test_t_resumes)
{
	struct vitals_vital_epoch ve[4];
	struct vitals_epoch ep;
	struct vitals_vital *v;
	char buf[128];

	memset(&ep, 0, sizeof(ep));
	memset(ve, 0, sizeof(ve));
	ve[0].name = "cpu";
	ve[0].threshold = 4096;
	ve[1].name = "kmem";
	ve[1].threshold = 1ULL << 40; /* above threshold_max */
	ve[2].name = "lock";
	ve[2].threshold = 2;
	ve[3].name = "umem";
	ve[3].threshold = 256;
	ve[0].hca_size = 4096; /* kept */
	ve[1].hca_size = 1u << 20; /* above hca_max: the configured size */
	ve[2].hca_size = 3000; /* not a power of two: the same */
	ep.vitals = ve;
	ep.nvitals = 4;
	cfg->sketch.threshold = 4;
	cfg->sketch.threshold_max = 65536;
	ep.host = "h2";
	ck_assert_int_eq(engine_resume(eng, &ep), -ESRCH);
	ck_assert_int_eq(engine_vital_open(eng, "umem", "pages", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
	ep.host = "h1";
	ck_assert_int_eq(engine_resume(eng, &ep), 0);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4096);
	ck_assert_uint_eq(vitals_vital_hca_size(v), 4096);
	ck_assert_int_eq(engine_vital_open(eng, "kmem", "pages", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 65536);
	ck_assert_uint_eq(vitals_vital_hca_size(v), cfg->sketch.hca_size);
	ck_assert_int_eq(engine_vital_open(eng, "lock", "ns", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4); /* not below */
	ck_assert_uint_eq(vitals_vital_hca_size(v), cfg->sketch.hca_size);
	/* umem was open already: its t stays. */
	ck_assert_int_eq(engine_vital_open(eng, "umem", "pages", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
	ck_assert_uint_eq(engine_resume_end(eng, buf, sizeof(buf)),
	    strlen("cpu 4096, kmem 65536"));
	ck_assert_str_eq(buf, "cpu 4096, kmem 65536");
	ck_assert_uint_eq(engine_resume_end(eng, buf, 8), 0);
	/* Resuming ended: a vital opened now starts at the configured t. */
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &v), 0);
	ck_assert_uint_eq(vitals_vital_threshold(v), 4);
}
END_TEST

START_TEST(test_per_vital_sizes)
{
	struct vitals_vital *v;

	cfg->vital_sketch = calloc(1, sizeof(struct config_sketch));
	cfg->vital_sketch[0] = cfg->sketch;
	cfg->vital_sketch[0].vital = strdup("lock");
	cfg->vital_sketch[0].hca_size = 128;
	cfg->vital_sketch[0].threshold = 8;
	cfg->nvital_sketch = 1;
	ck_assert_int_eq(engine_vital_open(eng, "lock", "ns", &v), 0);
	ck_assert_uint_eq(vitals_vital_hca_size(v), 128);
	ck_assert_uint_eq(vitals_vital_threshold(v), 8);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	ck_assert_uint_eq(vitals_vital_hca_size(v), cfg->sketch.hca_size);
}
END_TEST

/* A probe that keeps its sketch elsewhere hands it over at the boundary. */
START_TEST(test_load_external)
{
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	struct vitals_event ev;
	uint64_t *hca;
	uint32_t m;

	ck_assert_int_eq(engine_vital_open(eng, "syscall", "events", &v), 0);
	m = vitals_vital_hca_size(v);
	hca = calloc(m, sizeof(uint64_t));
	hca[vitals_label_hash(0x77, 3, 0) & (m - 1)] = 40;
	hca[5] += 2;
	ck_assert_int_eq(vitals_vital_load(v, hca, m - 1, 42, 42, 0), -EINVAL);
	ck_assert_int_eq(vitals_vital_load(v, hca, m, 42, 42, 3), 0);
	memset(&ev, 0, sizeof(ev));
	ev.label = 0x77;
	ev.exe_id = 3;
	ev.ts_ns = 9;
	ck_assert_int_eq(vitals_vital_sample(v, &ev, 32), 1);
	e = engine_close(eng, 2000, 0);
	ck_assert_uint_eq(e->vitals[0].events, 42);
	ck_assert_uint_eq(e->vitals[0].dropped, 3);
	ck_assert_uint_eq(e->dropped, 3);
	ck_assert_uint_eq(e->vitals[0].nsamples, 1);
	ck_assert_uint_eq(e->vitals[0].samples[0].count, 32);
	ck_assert_uint_eq(e->vitals[0].hca[e->vitals[0].samples[0].slot], 40);
	free(hca);
}
END_TEST

/* One sample of v named exe path (id id), label label. */
static void
exe_sample(
    struct vitals_vital *v, uint64_t label, uint32_t id, const char *path)
{
	struct vitals_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.label = label;
	ev.exe_id = id;
	ev.exe = path;
	ev.ts_ns = 9;
	ck_assert_int_eq(vitals_vital_sample(v, &ev, 2), 1);
}

/*
 * The vitals of an epoch share its exe paths: a path two vitals' samples
 * name is held once.  The closed epoch's stay while the next epoch's
 * samples come (they go elsewhere), until the epoch after next.
 */
START_TEST(test_exes_shared)
{
	struct vitals_vital *a, *b;
	const struct vitals_epoch *e;
	const char *pa;

	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &a), 0);
	ck_assert_int_eq(engine_vital_open(eng, "umem", "faults", &b), 0);
	exe_sample(a, 1, 7, "/usr/bin/seven");
	exe_sample(b, 2, 7, "/usr/bin/seven");
	exe_sample(b, 3, 8, "/usr/bin/eight");
	e = engine_close(eng, 2000, 0);
	ck_assert_uint_eq(e->vitals[0].nsamples, 1); /* syscall */
	ck_assert_uint_eq(e->vitals[1].nsamples, 2); /* umem */
	pa = e->vitals[0].samples[0].exe;
	ck_assert_str_eq(pa, "/usr/bin/seven");
	/* Held once: the same string, not a copy in each vital's. */
	ck_assert_ptr_eq(e->vitals[1].samples[0].exe, pa);
	ck_assert_str_eq(e->vitals[1].samples[1].exe, "/usr/bin/eight");
	/* The next epoch's samples, as the closed one is read. */
	exe_sample(a, 4, 9, "/usr/bin/nine");
	exe_sample(b, 5, 8, "/usr/bin/eight-moved");
	ck_assert_str_eq(pa, "/usr/bin/seven");
	ck_assert_str_eq(e->vitals[1].samples[1].exe, "/usr/bin/eight");
	engine_release(eng);
	e = engine_close(eng, 3000, 0);
	ck_assert_str_eq(e->vitals[0].samples[0].exe, "/usr/bin/nine");
	ck_assert_str_eq(e->vitals[1].samples[0].exe, "/usr/bin/eight-moved");
	engine_release(eng);
	/* The pool of the first epoch again, emptied. */
	exe_sample(b, 6, 7, "/usr/bin/seven-again");
	e = engine_close(eng, 4000, 0);
	ck_assert_str_eq(e->vitals[1].samples[0].exe, "/usr/bin/seven-again");
}
END_TEST

/*
 * The HCA grows at the boundary after a crowded epoch, to the bound and
 * no further; a label seen once in a crowded epoch has its sample; the
 * HCA shrinks after SKETCH_IDLE_EPOCHS quiet epochs, not before.
 */
START_TEST(test_hca_adapts)
{
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	struct vitals_event ev;
	uint32_t i, j, once, sizes[3];

	cfg->sketch.max_samples = 100000;
	cfg->sketch.hca_size = 128; /* the least, and the start */
	cfg->sample_memory = 0;
	engine_reconfigure(eng, cfg, "h1");
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &v), 0);
	ck_assert_uint_eq(vitals_vital_hca_size(v), 128);
	memset(&ev, 0, sizeof(ev));
	ev.label = 0xdead0001; /* not a multiple of 64: none of emit_n's */
	ev.weight = 1;
	for (i = 0; i < 3; i++) {
		emit_n(v, 0x1000, 5000, 10000);
		vitals_emit(v, &ev);
		emit_n(v, 0x1000, 5000, 10000);
		e = engine_close(eng, 2000 + i * 1000, 0);
		for (j = 0, once = 0; j < e->vitals[0].nsamples; j++)
			once += e->vitals[0].samples[j].label == ev.label;
		ck_assert_uint_eq(once, 1);
		sizes[i] = vitals_vital_hca_size(v);
		ck_assert_uint_eq(
		    e->vitals[0].hca_size, i ? sizes[i - 1] : 128);
	}
	ck_assert_uint_gt(sizes[0], 128);
	ck_assert_uint_gt(sizes[1], sizes[0]);
	ck_assert_uint_eq(sizes[2], cfg->sketch.hca_max);
	/* Quiet: it holds for SKETCH_IDLE_EPOCHS - 1 epochs, then shrinks. */
	for (i = 0; i < SKETCH_IDLE_EPOCHS; i++) {
		ck_assert_uint_eq(
		    vitals_vital_hca_size(v), cfg->sketch.hca_max);
		emit_n(v, 0x1000, 10, 100);
		engine_close(eng, 6000 + i * 1000, 0);
	}
	ck_assert_uint_eq(vitals_vital_hca_size(v), 128);
}
END_TEST

/*
 * sketch.hca_memory bounds the HCAs and filters of all vitals together:
 * the first to grow takes what fits, the next what it left.
 */
START_TEST(test_hca_memory)
{
	struct vitals_vital *a, *b;
	uint32_t i;

	/* Two vitals at 128 counters (9 KiB each of HCA and filter, twice). */
	cfg->hca_memory = 200000;
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &a), 0);
	ck_assert_int_eq(engine_vital_open(eng, "signal", "signals", &b), 0);
	for (i = 0; i < 3; i++) {
		emit_n(a, 0x1000, 5000, 10000);
		engine_close(eng, 2000 + i * 1000, 0);
	}
	/* 2 x 4096 x 16 bytes + 18 KiB fit in 200000, 8192 would not. */
	ck_assert_uint_eq(vitals_vital_hca_size(a), 4096);
	for (i = 0; i < 3; i++) {
		emit_n(a, 0x1000, 5000, 10000);
		emit_n(b, 0x1000, 5000, 10000);
		engine_close(eng, 5000 + i * 1000, 0);
	}
	ck_assert_uint_eq(vitals_vital_hca_size(a), 4096);
	ck_assert_uint_eq(vitals_vital_hca_size(b), 2048);
}
END_TEST

/* A probe sizes the next epoch's HCA; loads must then be of that size. */
START_TEST(test_hca_plan)
{
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	uint64_t *hca = calloc(1024, sizeof(uint64_t));

	cfg->sketch.hca_size = 128; /* the least, and the start */
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "events", &v), 0);
	ck_assert_uint_eq(engine_vital_hca_max(v), cfg->sketch.hca_max);
	ck_assert_int_eq(engine_vital_hca_plan(v, 3000), -EINVAL);
	ck_assert_int_eq(engine_vital_hca_plan(v, 65536), -EINVAL);
	ck_assert_int_eq(engine_vital_hca_plan(v, 1024), 0);
	e = engine_close(eng, 2000, 0);
	ck_assert_uint_eq(e->vitals[0].hca_size, 128);
	ck_assert_uint_eq(vitals_vital_hca_size(v), 1024);
	ck_assert_int_eq(vitals_vital_load(v, hca, 128, 0, 0, 0), -EINVAL);
	hca[1000] = 7;
	ck_assert_int_eq(vitals_vital_load(v, hca, 1024, 7, 7, 0), 0);
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_eq(e->vitals[0].hca_size, 1024);
	ck_assert_uint_eq(e->vitals[0].hca[1000], 7);
	free(hca);
}
END_TEST

/*
 * The disk budget bounds a vital's samples to its share, doubles t for
 * the vital that wanted more, records that it bound, and a label seen
 * once in an epoch crowded by others' crossings still gets its sample.
 */
START_TEST(test_disk_budget)
{
	struct vitals_vital *v, *q;
	const struct vitals_epoch *e;
	const struct vitals_vital_epoch *ve;
	struct vitals_event ev;
	uint64_t t;
	uint32_t i, once = 0, k;

	cfg->disk_budget = 6 * 1024;
	/* The shares below are of what 1024 full counters leave. */
	cfg->sketch.hca_size = cfg->sketch.hca_max = 1024;
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &v), 0);
	ck_assert_int_eq(engine_vital_open(eng, "signal", "signals", &q), 0);
	emit_n(v, 0x1000, 5000, 20000);
	emit_n(q, 0x9000, 3, 3);
	e = engine_close(eng, 2000, 0);
	ck_assert_uint_lt(e->vitals[1].nsamples, 2048);
	t = vitals_vital_threshold(v);
	ck_assert_uint_gt(t, 2); /* it wanted more than its share */
	/* Crowded: 10 labels crossing power after power, then one new one. */
	emit_n(v, 0x1000, 10, 400000);
	memset(&ev, 0, sizeof(ev));
	ev.label = 0xdead0000;
	ev.weight = 1;
	vitals_emit(v, &ev);
	emit_n(q, 0x9000, 3, 3);
	e = engine_close(eng, 3000, 0);
	ve = &e->vitals[1];
	ck_assert_str_eq(ve->name, "syscall");
	ck_assert_uint_lt(ve->nsamples, 200);
	ck_assert_uint_gt(ve->samples_dropped, 0);
	for (i = 0; i < ve->nsamples; i++)
		once += ve->samples[i].label == 0xdead0000;
	ck_assert_uint_eq(once, 1);
	ck_assert_uint_eq(e->vitals[0].nsamples, 3); /* signal: all it had */
	for (k = 0; k < e->nmetrics; k++)
		if (strcmp(e->metrics[k].name, "vitals.disk_budget.samples") ==
		    0)
			break;
	ck_assert_uint_lt(k, e->nmetrics);
	ck_assert(e->metrics[k].last < 200);
}
END_TEST

/*
 * A vital that reached its share with nothing dropped (the kernel, told
 * the share was spent, sent no more) still records that the budget bound.
 */
START_TEST(test_disk_budget_reached)
{
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	uint32_t k, limit;

	cfg->disk_budget = 6 * 1024;
	ck_assert_int_eq(engine_vital_open(eng, "syscall", "calls", &v), 0);
	limit = v->limit;
	ck_assert_uint_lt(limit, cfg->sketch.max_samples);
	emit_n(v, 0x1000, limit, limit);
	e = engine_close(eng, 2000, 0);
	ck_assert_uint_eq(e->vitals[0].nsamples, limit);
	ck_assert_uint_eq(e->vitals[0].samples_dropped, 0);
	for (k = 0; k < e->nmetrics; k++)
		if (strcmp(e->metrics[k].name, "vitals.disk_budget.samples") ==
		    0)
			break;
	ck_assert_uint_lt(k, e->nmetrics);
	ck_assert(e->metrics[k].last == limit);
}
END_TEST

/*
 * First sightings fill a store but do not raise t, which does not change
 * them: epoch after epoch of many labels seen once each (a machine of
 * short-lived processes) leaves t where it was, so a heavy label first
 * seen once the disk budget's share was spent still crosses powers of t
 * and gets its sample in the reserve.  Counted, they raised t to its
 * maximum, and a label seen 300 times crossed none.
 */
START_TEST(test_t_first_sightings)
{
	static const uint64_t heavy = 0x777777;
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	uint32_t i, k;
	int found = 0;

	cfg->disk_budget = 6 * 1024;
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	for (i = 0; i < 8; i++) {
		emit_n(v, 0x1000 + i * 0x100000, 1000, 1000);
		engine_close(eng, 2000 + i, 0);
	}
	ck_assert_uint_eq(vitals_vital_threshold(v), 2);
	emit_n(v, 0x1000, 1000, 1000); /* the share spent first */
	emit_n(v, heavy, 1, 300);
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_gt(e->vitals[0].samples_dropped, 0);
	for (k = 0; k < e->vitals[0].nsamples; k++)
		found |= e->vitals[0].samples[k].label == heavy;
	ck_assert_msg(found, "the heavy label has no sample (t %llu)",
	    (unsigned long long)e->vitals[0].threshold);
}
END_TEST

/*
 * Under the shipped disk budget (4K: a share of 4 samples a vital), a
 * heavy label first seen in each epoch after light ones spent the share
 * (a busy loop among a build's short-lived processes) keeps getting its
 * sample: t stays where a label with 1/64 of the weight crosses it.
 * When a few crossings doubled t in every epoch (the mark was the share),
 * t reached 65536 and the heavy label, 1,157 of 1,957 samples, had none.
 */
START_TEST(test_budget_heavy_late)
{
	static const uint64_t heavy = 0x777777;
	struct vitals_vital *v;
	const struct vitals_epoch *e;
	uint32_t i, k, found;

	cfg->disk_budget = 4096;
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	for (i = 0; i < 16; i++) {
		emit_n(v, 0x1000 + i * 0x100000, 40, 800); /* 20 each */
		emit_n(v, heavy, 1, 1157);
		e = engine_close(eng, 2000 + i, 0);
		if (i < 4)
			continue;
		ck_assert_uint_gt(e->vitals[0].samples_dropped, 0);
		ck_assert_uint_le(e->vitals[0].threshold, 1957 / 64);
		for (k = found = 0; k < e->vitals[0].nsamples; k++)
			found += e->vitals[0].samples[k].label == heavy;
		ck_assert_msg(found == 1,
		    "epoch %u: the heavy label has %u "
		    "samples (t %llu)",
		    i, found, (unsigned long long)e->vitals[0].threshold);
	}
}
END_TEST

START_TEST(test_findings)
{
	struct vitals_finding f;
	const struct vitals_epoch *e;

	e = engine_close(eng, 2000, 0);
	memset(&f, 0, sizeof(f));
	f.vital = "cpu";
	f.text = "cpu is high";
	f.score = 4.5;
	ck_assert_int_eq(engine_finding_add(eng, &f, "ewma"), 0);
	ck_assert_uint_eq(e->nfindings, 1);
	ck_assert_str_eq(e->findings[0].filter, "ewma");
	ck_assert_str_eq(e->findings[0].text, "cpu is high");
	ck_assert_ptr_ne(e->findings[0].text, f.text); /* copied */
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_eq(e->nfindings, 0);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("engine");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_swap_loses_nothing);
	tcase_add_test(tc, test_view);
	tcase_add_test(tc, test_t_doubles_on_sample_memory);
	tcase_add_test(tc, test_t_halves_when_quiet);
	tcase_add_test(tc, test_t_doubles_on_cpu);
	tcase_add_test(tc, test_t_steers_sampling_only);
	tcase_add_test(tc, test_cpu_parts);
	tcase_add_test(tc, test_t_resumes);
	tcase_add_test(tc, test_per_vital_sizes);
	tcase_add_test(tc, test_load_external);
	tcase_add_test(tc, test_exes_shared);
	tcase_add_test(tc, test_disk_budget_reached);
	tcase_add_test(tc, test_budget_heavy_late);
	tcase_add_test(tc, test_t_first_sightings);
	tcase_add_test(tc, test_findings);
	tcase_add_test(tc, test_disk_budget);
	tcase_add_test(tc, test_hca_adapts);
	tcase_add_test(tc, test_hca_plan);
	tcase_add_test(tc, test_hca_memory);
	suite_add_tcase(su, tc);
	return testutil_run(su);
}
