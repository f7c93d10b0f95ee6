/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of the emit path: nanoseconds per event of vitals_emit at the
 * default sketch sizes for several label populations, against a baseline
 * loop that builds the same events without counting them, and the bytes
 * of sketch + sample memory.  Prints figures; asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "engine.h"
#include "units.h"

#define BENCH_EVENTS 5000000u
#define BENCH_ROUNDS 5

static volatile uint64_t bench_sink;

static uint64_t
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Labels drawn from a precomputed table so drawing costs the same in both loops. */
static uint32_t *
bench_labels(uint32_t nlabels, double zipf, uint32_t n)
{
	uint32_t *t = malloc(n * sizeof(*t)), i, lo, hi, mid;
	double *cdf = malloc(nlabels * sizeof(*cdf)), sum = 0, u;
	uint64_t x = 88172645463325252ULL;

	for (i = 0; i < nlabels; i++)
		cdf[i] = sum += 1.0 / pow(i + 1, zipf);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		u = (double)(x >> 11) / 9007199254740992.0 * sum;
		for (lo = 0, hi = nlabels - 1; lo < hi;) {
			mid = (lo + hi) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		t[i] = lo;
	}
	free(cdf);
	return t;
}

static double
bench_run(struct vitals_vital *v, const uint32_t *labels, int count)
{
	uint64_t ks[8] = { 0xffffffff81000000ULL, 0xffffffff81000100ULL };
	uint64_t us[8] = { 0x401000, 0x402000 };
	struct vitals_event ev;
	uint64_t t0, acc = 0;
	uint32_t i;

	memset(&ev, 0, sizeof(ev));
	ev.kstack = ks;
	ev.nkstack = 8;
	ev.ustack = us;
	ev.nustack = 8;
	ev.exe = "/usr/bin/bench";
	ev.comm = "bench";
	ev.ts_ns = 1;
	t0 = bench_now();
	for (i = 0; i < BENCH_EVENTS; i++) {
		ev.label = 0x400000 + (uint64_t)labels[i] * 0x100;
		ev.exe_id = 1 + labels[i] % 16;
		ev.weight = 1;
		if (count)
			acc += (uint64_t)vitals_emit(v, &ev);
		else
			acc += ev.label ^ ev.exe_id;
	}
	bench_sink = acc;
	return (double)(bench_now() - t0) / BENCH_EVENTS;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(void)
{
	static const struct {
		uint32_t labels;
		double zipf;
	} pops[] = {
		{ 10, 1.0 },
		{ 1000, 1.0 },
		{ 100000, 0.8 },
	};
	static const char *vitals[] = { "cpu", "sched", "blocking", "diskio",
		"umem", "kmem", "cache", "syscall", "signal", "socket",
		"lock" };
	struct config *c = config_default();
	struct engine *e = engine_new(c, "bench");
	struct vitals_vital *v;
	double base[BENCH_ROUNDS], emit[BENCH_ROUNDS];
	uint32_t *labels, i;
	int r;

	printf(
	    "emit path, %u events per round, median of %d rounds, default sizes\n",
	    BENCH_EVENTS, BENCH_ROUNDS);
	printf("%-26s %10s %10s %10s\n", "labels", "base ns", "emit ns",
	    "added ns");
	for (i = 0; i < sizeof(pops) / sizeof(pops[0]); i++) {
		labels =
		    bench_labels(pops[i].labels, pops[i].zipf, BENCH_EVENTS);
		engine_vital_open(e, "cpu", "samples", &v);
		for (r = 0; r < BENCH_ROUNDS; r++) {
			base[r] = bench_run(v, labels, 0);
			emit[r] = bench_run(v, labels, 1);
			engine_close(e, 2, 0);
		}
		qsort(base, BENCH_ROUNDS, sizeof(double), bench_cmp);
		qsort(emit, BENCH_ROUNDS, sizeof(double), bench_cmp);
		printf("%7u zipf %.1f %12s %10.2f %10.2f %10.2f\n",
		    pops[i].labels, pops[i].zipf, "", base[BENCH_ROUNDS / 2],
		    emit[BENCH_ROUNDS / 2],
		    emit[BENCH_ROUNDS / 2] - base[BENCH_ROUNDS / 2]);
		free(labels);
	}
	for (i = 0; i < sizeof(vitals) / sizeof(vitals[0]); i++)
		engine_vital_open(e, vitals[i], "events", &v);
	printf(
	    "memory: %u vitals, both epoch buffers: %zu bytes (%.1f KiB per vital)\n",
	    engine_nvitals(e), engine_bytes(e),
	    engine_bytes(e) / 1024.0 / engine_nvitals(e));
	/* The kernel probes' counters and filters, both halves, all vitals. */
	printf("kernel sketch maps (one pool for every kernel probe, "
	       "hca_memory %llu): %zu bytes\n",
	    (unsigned long long)c->hca_memory,
	    (size_t)units_pool(c->hca_memory) * UNITS_BYTES);
	engine_free(e);
	/* The bound without sketch.sample_memory: every store full. */
	c->sample_memory = 0;
	e = engine_new(c, "bench");
	for (i = 0; i < sizeof(vitals) / sizeof(vitals[0]); i++)
		engine_vital_open(e, vitals[i], "events", &v);
	printf("memory without sample_memory (stores of max_samples full, "
	       "as allocated up front before): %zu bytes\n",
	    engine_bytes(e));
	engine_free(e);
	config_free(c);
	return 0;
}
