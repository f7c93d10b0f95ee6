/* SPDX-License-Identifier: MIT */
/*
 * Coverage of the sketch against exact counts at 1k, 10k and 100k labels
 * per epoch (Zipf-skewed synthetic streams through the engine's sketch),
 * a fixed 1024-counter HCA against the adaptive one in the same run: of
 * the labels whose true count reaches the floor, the share with at least
 * one sample, first epoch and steady state; the HCA's size, its bound in
 * memory, and the bytes its counters take in the store.  Prints figures;
 * asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "config.h"
#include "engine.h"
#include "sketch.h"
#include "../tests/zipf.h"

#define COV_EPOCHS 6
#define COV_LABEL0 0x400000ULL

struct cov_stream {
	const char *name;
	uint32_t labels; /* distinct labels per epoch */
	uint32_t per_label; /* events per epoch, per label */
	double zipf; /* skew of the label draw */
	uint64_t floor;
};

static const struct cov_stream cov_streams[] = {
	{ "50 labels (quiet)", 50, 20, 1.0, 1 },
	{ "1k labels", 1000, 20, 1.0, 1 },
	{ "10k labels", 10000, 20, 1.0, 1 },
	{ "100k labels", 100000, 10, 1.0, 1 },
	{ "100k labels, floor 16", 100000, 10, 0.8, 16 },
};

/* A sizing to compare: HCA counters at start and at most, and the bound. */
struct cov_sizing {
	const char *name;
	uint32_t hca_size, hca_max;
	uint64_t hca_memory;
};

static const struct cov_sizing cov_sizings[] = {
	{ "fixed 1024", 1024, 1024, 0 },
	{ "adaptive (default)", 128, 16384, 1 << 20 },
	{ "adaptive, max 65536", 128, 65536, 0 },
};

/* Bytes the store's compact format gives v's counters (with, less without). */
static size_t
cov_counter_bytes(const struct vitals_epoch *e)
{
	struct vitals_epoch c = *e;
	struct vitals_vital_epoch v = e->vitals[0];
	size_t with = 0, without = 0;
	char *out = NULL;

	c.vitals = &v;
	c.nvitals = 1;
	v.nsamples = 0;
	v.samples = NULL;
	if (codec_compact_encode(&c, &out, &with) != 0)
		return 0;
	free(out);
	v.hca = NULL;
	v.hca_size = 0;
	if (codec_compact_encode(&c, &out, &without) != 0)
		return 0;
	free(out);
	return with > without ? with - without : 0;
}

struct cov_result {
	uint32_t qual[COV_EPOCHS], covered[COV_EPOCHS];
	uint32_t size[COV_EPOCHS];
	size_t bytes[COV_EPOCHS];
};

/* One epoch of the stream into v, closed; its coverage into r at k. */
static void
cov_epoch(struct engine *eng, struct vitals_vital *v,
    const struct cov_stream *st, const double *cdf, uint64_t *rng, uint32_t k,
    struct cov_result *r, uint64_t *truth, uint8_t *hit)
{
	const struct vitals_epoch *e;
	const struct vitals_vital_epoch *ve;
	struct vitals_event ev;
	uint64_t n = (uint64_t)st->labels * st->per_label, i;
	uint32_t l;

	memset(truth, 0, st->labels * sizeof(*truth));
	memset(hit, 0, st->labels);
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 1;
	ev.weight = 1;
	for (i = 0; i < n; i++) {
		/* Every label at least once, the rest by the skew. */
		l = i < st->labels ? (uint32_t)i
				   : zipf_draw(cdf, st->labels, rng);
		ev.label = COV_LABEL0 + (uint64_t)l * 0x40;
		ev.exe_id = 1 + l % 8;
		truth[l]++;
		vitals_emit(v, &ev);
	}
	e = engine_close(eng, 1000 + k, 0);
	ve = &e->vitals[0];
	for (i = 0; i < ve->nsamples; i++) {
		l = (uint32_t)((ve->samples[i].label - COV_LABEL0) / 0x40);
		if (l < st->labels)
			hit[l] = 1;
	}
	r->qual[k] = r->covered[k] = 0;
	for (l = 0; l < st->labels; l++) {
		if (truth[l] < st->floor)
			continue;
		r->qual[k]++;
		r->covered[k] += hit[l];
	}
	r->size[k] = ve->hca_size;
	r->bytes[k] = cov_counter_bytes(e);
	engine_release(eng);
}

/* COV_EPOCHS epochs of the stream under one sizing. */
static int
cov_run(const struct cov_stream *st, const struct cov_sizing *sz,
    struct cov_result *r)
{
	struct config *c = config_default();
	double *cdf = zipf_cdf(st->labels, st->zipf);
	uint64_t *truth = calloc(st->labels, sizeof(uint64_t));
	uint8_t *hit = calloc(st->labels, 1);
	struct engine *eng = NULL;
	struct vitals_vital *v;
	uint64_t rng = 42;
	uint32_t k;
	int ret = -1;

	if (c == NULL || cdf == NULL || truth == NULL || hit == NULL)
		goto out;
	c->sketch.hca_size = sz->hca_size;
	c->sketch.hca_max = sz->hca_max;
	c->hca_memory = sz->hca_memory;
	c->sketch.floor = st->floor;
	/* Room for a sample of every label: the sketch is what is measured. */
	c->sketch.max_samples = 1000000;
	c->sample_memory = 0;
	if ((eng = engine_new(c, "bench")) == NULL ||
	    engine_vital_open(eng, "syscall", "calls", &v) != 0)
		goto out;
	engine_start(eng, 1);
	for (k = 0; k < COV_EPOCHS; k++)
		cov_epoch(eng, v, st, cdf, &rng, k, r, truth, hit);
	ret = 0;
out:
	engine_free(eng);
	config_free(c);
	free(cdf);
	free(truth);
	free(hit);
	return ret;
}

/* Bytes of counters and filter one vital may hold at most, both epochs. */
static size_t
cov_bound(const struct cov_sizing *sz)
{
	struct sketch_params p = { .hca_size = sz->hca_size,
		.hca_max = sz->hca_max,
		.seen_bits = 65536 };
	size_t n = 2 *
	    ((size_t)sz->hca_max * sizeof(uint64_t) +
		sketch_seen_bits(&p, sz->hca_max) / 8);

	return sz->hca_memory != 0 && sz->hca_memory < n ? sz->hca_memory : n;
}

static double
cov_pct(uint32_t covered, uint32_t qual)
{
	return qual ? 100.0 * covered / qual : 100.0;
}

int
main(void)
{
	struct cov_result r;
	uint32_t i, j, last = COV_EPOCHS - 1;

	printf("coverage: labels >= floor with >= 1 sample, %d epochs of each "
	       "stream (Zipf draws after one event of every label), "
	       "max_samples 1000000, no sample_memory bound\n",
	    COV_EPOCHS);
	printf("%-22s %-20s %9s %9s %8s %8s %10s %10s\n", "stream", "sizing",
	    "epoch 1", "steady", "hca 1", "hca last", "bytes 1", "bytes last");
	for (i = 0; i < sizeof(cov_streams) / sizeof(cov_streams[0]); i++) {
		for (j = 0; j < sizeof(cov_sizings) / sizeof(cov_sizings[0]);
		     j++) {
			memset(&r, 0, sizeof(r));
			if (cov_run(&cov_streams[i], &cov_sizings[j], &r) !=
			    0) {
				fprintf(
				    stderr, "bench/coverage: out of memory\n");
				return 1;
			}
			printf("%-22s %-20s %8.3f%% %8.3f%% %8u %8u %10zu "
			       "%10zu\n",
			    cov_streams[i].name, cov_sizings[j].name,
			    cov_pct(r.covered[0], r.qual[0]),
			    cov_pct(r.covered[last], r.qual[last]), r.size[0],
			    r.size[last], r.bytes[0], r.bytes[last]);
		}
	}
	for (j = 0; j < sizeof(cov_sizings) / sizeof(cov_sizings[0]); j++)
		printf("memory bound %-20s %zu bytes of one vital's counters "
		       "and filter (both epochs; hca_memory %llu)\n",
		    cov_sizings[j].name, cov_bound(&cov_sizings[j]),
		    (unsigned long long)cov_sizings[j].hca_memory);
	return 0;
}
