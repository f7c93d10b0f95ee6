/* SPDX-License-Identifier: MIT */
/*
 * bench/peer: central analysis of a multi-host store (bench/mkstore
 * --hosts N --proc) slot by slot, as the aggregator does it: the epochs of
 * a slot read and decoded (ingest), then fed to the peer filter once per
 * host with the others as peers.  Prints ingest in epochs per second, the
 * filter's time per slot (mean, and the largest: a slot ending a window),
 * the same loop with the filter left out as the baseline, and the peak
 * resident memory before and after the filter ran.  Measures, never
 * asserts.
 */
#include <sys/resource.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "config.h"
#include "handrun.h"

/* What the filter said: findings by host and vital. */
#define BENCH_SAID 8
struct bench_said {
	unsigned findings;
	unsigned n; /* entries used below */
	char who[BENCH_SAID][96]; /* "host (vital)" */
	unsigned count[BENCH_SAID];
	uint64_t first[BENCH_SAID]; /* slot start of the first, s */
};

static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident memory so far, in MB. */
static double
bench_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static void
bench_finding(void *arg, const struct vitals_finding *f, const char *host)
{
	struct bench_said *s = arg;
	char who[96];
	unsigned i;

	s->findings++;
	snprintf(who, sizeof(who), "%s (%s)", host, f->vital ? f->vital : "-");
	for (i = 0; i < s->n && strcmp(s->who[i], who) != 0; i++)
		;
	if (i == s->n && s->n < BENCH_SAID) {
		snprintf(s->who[s->n], sizeof(s->who[0]), "%s", who);
		s->first[s->n++] = f->start_ns / 1000000000ull;
	}
	if (i < s->n)
		s->count[i]++;
}

/* Feed every epoch of the slot v[0..n) with the others as peers. */
static void
bench_feed(struct handrun *h, struct vitals_epoch **v, size_t n,
    const struct vitals_epoch **peers)
{
	size_t i, j, np;

	for (i = 0; i < n; i++) {
		for (np = 0, j = 0; j < n; j++)
			if (j != i)
				peers[np++] = v[j];
		handrun_feed(h,
		    &(struct vitals_queue){ .timescale_s = v[i]->timescale_s,
			.n = 1,
			.epochs = (const struct vitals_epoch *const *)&v[i],
			.npeers = (uint32_t)np,
			.peers = peers },
		    v[i]->host);
	}
}

int
main(int argc, char **argv)
{
	struct vitals_filter_sink sink;
	struct vitals_store_list l;
	struct vitals_epoch **v = NULL;
	const struct vitals_epoch **peers = NULL;
	struct config_entry extra[1];
	struct handrun *h = NULL;
	struct bench_said said = { 0 };
	struct config *cfg;
	double t, t_read = 0, t_filter = 0, worst = 0, rss0;
	size_t i, n = 0, cap = 0, nslots = 0, nepochs = 0;
	char err[1024];
	int use_filter;

	if (argc < 3) {
		fprintf(stderr,
		    "usage: bench/peer STORE on|off [KEY=VALUE] (the peer "
		    "filter, or the baseline)\n");
		return 2;
	}
	use_filter = strcmp(argv[2], "on") == 0;
	if (vitals_store_list(argv[1], &l) != 0 || l.n == 0) {
		fprintf(stderr, "bench/peer: no store at %s\n", argv[1]);
		return 1;
	}
	if ((cfg = config_default()) == NULL)
		return 1;
	memset(&sink, 0, sizeof(sink));
	sink.finding = bench_finding;
	sink.arg = &said;
	memset(extra, 0, sizeof(extra));
	if (argc > 3 && strchr(argv[3], '=') != NULL) {
		extra[0].key = strndup(argv[3], strcspn(argv[3], "="));
		extra[0].scalar = strchr(argv[3], '=') + 1;
	}
	rss0 = bench_rss_mb();
	if (use_filter &&
	    handrun_start(cfg, NULL, argv[1], "peer", extra,
		extra[0].key ? 1 : 0, &sink, &h, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench/peer: %s\n", err);
		return 1;
	}
	for (i = 0; i <= l.n; i++) {
		if (i == l.n || (n > 0 && l.v[i].start_ns != v[0]->start_ns)) {
			t = bench_now();
			if (use_filter)
				bench_feed(h, v, n, peers);
			t = bench_now() - t;
			t_filter += t;
			worst = t > worst ? t : worst;
			nslots++;
			while (n > 0)
				vitals_epoch_free(v[--n]);
		}
		if (i == l.n)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			peers = realloc(peers, cap * sizeof(*peers));
			if (v == NULL || peers == NULL)
				return 1;
		}
		t = bench_now();
		if (vitals_epoch_load(l.v[i].path, &v[n], err, sizeof(err)) !=
		    0)
			continue;
		t_read += bench_now() - t;
		n++;
		nepochs++;
	}
	handrun_stop(h);
	printf("%s: %zu epochs in %zu slots (%.0f hosts), filter %s\n", argv[1],
	    nepochs, nslots, nslots ? (double)nepochs / nslots : 0.0,
	    use_filter ? "peer" : "off (baseline)");
	printf("  ingest %.0f epochs/s (%.1f ms per slot)\n",
	    t_read > 0 ? nepochs / t_read : 0, 1e3 * t_read / nslots);
	printf("  filter %.3f ms per slot (largest %.1f ms), %.1f%% of "
	       "ingest\n",
	    1e3 * t_filter / nslots, 1e3 * worst,
	    t_read > 0 ? 100 * t_filter / t_read : 0);
	printf("  peak RSS %.1f MB (%.1f MB at start)\n", bench_rss_mb(), rss0);
	if (use_filter)
		printf("  findings %u\n", said.findings);
	for (i = 0; i < said.n; i++)
		printf("    %s x%u, first at @%llu\n", said.who[i],
		    said.count[i], (unsigned long long)said.first[i]);
	free(v);
	free(peers);
	free(extra[0].key);
	vitals_store_list_free(&l);
	config_free(cfg);
	return 0;
}
