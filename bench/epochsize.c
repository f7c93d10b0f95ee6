/* SPDX-License-Identifier: MIT */
/*
 * epochsize: what the epochs of a store cost on disk, written in the old
 * format (1) and the compact one (2), part by part: each part's bytes are
 * what leaving it out saves, as text and gzip'd as the store writes it,
 * and the totals per epoch and per day; then the same of the steady
 * epochs alone (whole, and not the first of a run, which starts before
 * the first boundary sets the disk budget's shares), as a daemon running
 * all day has them.  Prints; asserts nothing.
 *
 *   bench/epochsize DATA_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <vitals/store.h>

#include "codec.h"
#include "epoch.h"

/* What leaving a part out of an epoch means, applied to a copy. */
enum {
	ES_ALL, /* nothing left out: the whole file */
	ES_SAMPLES, /* every vital's samples */
	ES_STACKS, /* the samples' frames and their names */
	ES_NAMES, /* the frames' names alone */
	ES_HCA, /* the counters */
	ES_METRICS, /* the named metrics */
	ES_NPARTS
};

static const char *const es_part[ES_NPARTS] = { "whole file", "samples",
	"  stacks+names", "    names", "hca", "metrics" };

/* Bytes of one form: text and gzip'd, per part, over every epoch. */
struct es_sum {
	double raw[ES_NPARTS], gz[ES_NPARTS];
};

/* Most vitals reported one by one. */
#define ES_VITALS 64

struct es_totals {
	struct es_sum form[2];
	double vital_gz[2]
		       [ES_VITALS]; /* saved leaving out one vital's samples */
	const char *vital[ES_VITALS];
	uint32_t nvitals;
	double seconds, samples, epochs;
	/* The steady ones: whole (not partial), not a run's first (seq 0,
	 * collected before the first boundary's limits). */
	double steady_gz[2], steady_seconds, steady_epochs;
};

/* Bytes of text gzip'd as vitals_epoch_encode does (level 6). */
static size_t
es_gzip(const char *text, size_t len)
{
	unsigned char out[65536];
	z_stream z;
	size_t n = 0;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return 0;
	z.next_in = (unsigned char *)(uintptr_t)text;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		r = deflate(&z, Z_FINISH);
		n += sizeof(out) - z.avail_out;
	} while (r == Z_OK);
	deflateEnd(&z);
	return n;
}

/* e's size in form f (0: format 1, 1: compact): text into *raw, gzip'd. */
static size_t
es_size(const struct vitals_epoch *e, int f, size_t *raw)
{
	char *text;
	size_t len, gz;
	int r;

	r = f == 0 ? codec_text_encode(e, &text, &len)
		   : codec_compact_encode(e, &text, &len);
	if (r != 0) {
		fprintf(stderr, "epochsize: encoding: %s\n", strerror(-r));
		exit(1);
	}
	gz = es_gzip(text, len);
	free(text);
	*raw = len;
	return gz;
}

/* e with part p left out (or only vital w's samples, w >= 0). */
static struct vitals_epoch *
es_without(const struct vitals_epoch *e, int p, int w)
{
	struct vitals_epoch *c = epoch_copy(e);
	struct vitals_vital_epoch *v;
	struct vitals_sample *s;
	uint32_t i, j;

	if (c == NULL) {
		fprintf(stderr, "epochsize: out of memory\n");
		exit(1);
	}
	if (p == ES_METRICS)
		c->nmetrics = 0;
	for (i = 0; i < c->nvitals; i++) {
		v = (struct vitals_vital_epoch *)&c->vitals[i];
		if (p == ES_HCA)
			v->hca = NULL;
		if (p == ES_SAMPLES || (int)i == w)
			v->nsamples = 0;
		for (j = 0; j < v->nsamples; j++) {
			s = (struct vitals_sample *)&v->samples[j];
			if (p == ES_STACKS)
				s->nkstack = s->nustack = 0;
			if (p == ES_STACKS || p == ES_NAMES)
				s->ksyms = NULL;
		}
	}
	return c;
}

static int
es_vital_slot(struct es_totals *t, const char *name)
{
	uint32_t i;

	for (i = 0; i < t->nvitals; i++)
		if (strcmp(t->vital[i], name) == 0)
			return (int)i;
	if (t->nvitals == ES_VITALS || (t->vital[i] = strdup(name)) == NULL)
		return -1;
	return (int)t->nvitals++;
}

static void
es_add(struct es_totals *t, const struct vitals_epoch *e)
{
	struct vitals_epoch *c;
	size_t whole[2], wraw, raw, gz;
	uint32_t i;
	int f, p, k;

	t->epochs++;
	t->seconds += (double)e->length_ns / 1e9;
	for (i = 0; i < e->nvitals; i++)
		t->samples += e->vitals[i].nsamples;
	if (!e->partial && e->seq > 0) {
		t->steady_epochs++;
		t->steady_seconds += (double)e->length_ns / 1e9;
	}
	for (f = 0; f < 2; f++) {
		whole[f] = es_size(e, f, &wraw);
		if (!e->partial && e->seq > 0)
			t->steady_gz[f] += (double)whole[f];
		t->form[f].gz[ES_ALL] += (double)whole[f];
		t->form[f].raw[ES_ALL] += (double)wraw;
		for (p = 1; p < ES_NPARTS; p++) {
			c = es_without(e, p, -1);
			gz = es_size(c, f, &raw);
			t->form[f].gz[p] += (double)whole[f] - (double)gz;
			t->form[f].raw[p] += (double)wraw - (double)raw;
			epoch_free(c);
		}
		for (i = 0; i < e->nvitals; i++) {
			if ((k = es_vital_slot(t, e->vitals[i].name)) < 0)
				continue;
			c = es_without(e, -1, (int)i);
			gz = es_size(c, f, &raw);
			t->vital_gz[f][k] += (double)whole[f] - (double)gz;
			epoch_free(c);
		}
	}
}

static void
es_print(const struct es_totals *t)
{
	const double n = t->epochs, day = 86400.0 / (t->seconds / n);
	int p;
	uint32_t i;

	printf("%.0f epochs, %.0f s each on average, %.0f samples per epoch\n",
	    n, t->seconds / n, t->samples / n);
	printf("%-18s %12s %12s %12s %12s\n", "bytes per epoch", "old text",
	    "old gzip", "new text", "new gzip");
	for (p = 0; p < ES_NPARTS; p++)
		printf("%-18s %12.0f %12.0f %12.0f %12.0f\n", es_part[p],
		    t->form[0].raw[p] / n, t->form[0].gz[p] / n,
		    t->form[1].raw[p] / n, t->form[1].gz[p] / n);
	for (i = 0; i < t->nvitals; i++)
		printf("  samples of %-7s %12s %12.0f %12s %12.0f\n",
		    t->vital[i], "", t->vital_gz[0][i] / n, "",
		    t->vital_gz[1][i] / n);
	printf("MB/day (gzip'd)    old %.2f, new %.2f (%.1fx smaller)\n",
	    t->form[0].gz[ES_ALL] / n * day / 1e6,
	    t->form[1].gz[ES_ALL] / n * day / 1e6,
	    t->form[0].gz[ES_ALL] / t->form[1].gz[ES_ALL]);
	if (t->steady_epochs > 0 && t->steady_seconds > 0)
		printf(
		    "steady, %.0f whole epochs after the first: new gzip %.0f "
		    "bytes each, %.2f MB/day (old %.2f)\n",
		    t->steady_epochs, t->steady_gz[1] / t->steady_epochs,
		    t->steady_gz[1] / t->steady_seconds * 86400 / 1e6,
		    t->steady_gz[0] / t->steady_seconds * 86400 / 1e6);
}

int
main(int argc, char **argv)
{
	struct vitals_store_list l;
	struct vitals_epoch *e;
	struct es_totals t;
	char err[512];
	size_t i;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: epochsize DATA_DIR\n");
		return 2;
	}
	if ((r = vitals_store_list(argv[1], &l)) != 0) {
		fprintf(stderr, "epochsize: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	memset(&t, 0, sizeof(t));
	for (i = 0; i < l.n; i++) {
		if (vitals_epoch_load(l.v[i].path, &e, err, sizeof(err)) != 0) {
			fprintf(stderr, "epochsize: skipping %s\n", err);
			continue;
		}
		es_add(&t, e);
		vitals_epoch_free(e);
	}
	vitals_store_list_free(&l);
	if (t.epochs == 0) {
		fprintf(stderr, "epochsize: %s: no epochs\n", argv[1]);
		return 1;
	}
	es_print(&t);
	return 0;
}
