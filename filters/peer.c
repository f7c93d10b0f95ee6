/* SPDX-License-Identifier: MIT */
/*
 * peer: peer comparison across the hosts of a slot (Kasick et al.,
 * FAST'10).  Per host and black-box metric of the proc probe, a histogram
 * over a sliding window of samples; per pair of hosts of a peer group the
 * symmetric KL divergence; a host whose divergence from more than half of
 * its peers exceeds the metric's threshold in k of the last 2k - 1
 * windows is indicted, with the class of the paper's root-cause
 * checklist.  White-box too: a host whose share of a vital by exe
 * diverges from its peers'.  Needs 3 hosts in a group; says nothing with
 * fewer.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <vitals/vitals.h>

#include "peer.h"

#define PEER_BINS_MAX 256
#define PEER_K_MAX 15 /* 2k - 1 windows fit in 32 bits */
#define PEER_WIN_MAX 4096
#define PEER_EXES 16 /* exes kept per host and vital (the rest: "other") */
#define PEER_EXE_LEN 64
#define PEER_NWB 4 /* white-box vitals at most */
#define PEER_MODEL_VERSION 1

struct peer_config {
	int64_t win_size; /* samples per window */
	int64_t win_shift; /* samples between two windows */
	int64_t k; /* indicted in k of the last 2k - 1 windows */
	int64_t bins; /* histogram bins; 0 = sqrt(win_size) */
	int64_t smooth; /* moving-average points before the histogram */
	double threshold; /* untrained KL threshold */
	double min_spread; /* histogram range >= this share of the median */
	int64_t max_peers; /* peers compared per host; 0 = all */
	struct vitals_strlist groups; /* "name=pattern,..." */
	struct vitals_strlist vitals; /* white-box vitals */
	double wb_threshold; /* white-box KL threshold */
	char *mode; /* "detect" or "train" */
	char *model; /* model file */
	double train_scale; /* trained threshold = largest seen times this */
	int64_t max_hosts; /* hosts tracked at most */
};

#define PEER_OFF(m) offsetof(struct peer_config, m)

/* clang-format off */
static const struct vitals_option peer_options[] = {
	{ .key = "win_size", .type = VITALS_OPT_INT,
	    .offset = PEER_OFF(win_size), .def = "64",
	    .help = "samples per histogram window: epochs of the finest "
		    "timescale seen (the base)", .min = 4,
	    .max = PEER_WIN_MAX },
	{ .key = "win_shift", .type = VITALS_OPT_INT,
	    .offset = PEER_OFF(win_shift), .def = "32",
	    .help = "samples between the starts of two windows",
	    .min = 1, .max = PEER_WIN_MAX },
	{ .key = "k", .type = VITALS_OPT_INT, .offset = PEER_OFF(k),
	    .def = "3",
	    .help = "indict a host anomalous in k of the last 2k-1 windows",
	    .min = 1, .max = PEER_K_MAX },
	{ .key = "bins", .type = VITALS_OPT_INT, .offset = PEER_OFF(bins),
	    .def = "0",
	    .help = "histogram bins over the group's range (0: the square "
		    "root of win_size, 8 for 64)",
	    .min = 0, .max = PEER_BINS_MAX },
	{ .key = "smooth", .type = VITALS_OPT_INT, .offset = PEER_OFF(smooth),
	    .def = "1",
	    .help = "moving-average points before the histogram (the paper's "
		    "5 for 1 s samples; an epoch is already a mean)",
	    .min = 1, .max = 64 },
	{ .key = "threshold", .type = VITALS_OPT_DOUBLE,
	    .offset = PEER_OFF(threshold), .def = "1.5",
	    .help = "KL threshold of a metric the model does not train",
	    .min = 0, .max = 1e6 },
	{ .key = "min_spread", .type = VITALS_OPT_DOUBLE,
	    .offset = PEER_OFF(min_spread), .def = "0.25",
	    .help = "histogram range at least this share of the group's "
		    "median (smaller differences are not divergence)",
	    .min = 0, .max = 100 },
	{ .key = "max_peers", .type = VITALS_OPT_INT,
	    .offset = PEER_OFF(max_peers), .def = "0",
	    .help = "peers each host is compared with, spread over its group "
		    "(0: all, the paper's pairwise comparison)",
	    .min = 0, .max = 1e6 },
	{ .key = "groups", .type = VITALS_OPT_STRLIST,
	    .offset = PEER_OFF(groups), .def = NULL,
	    .help = "peer groups, \"NAME=PATTERN PATTERN...\" (fnmatch on "
		    "host names); other hosts are one group (default: all)" },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = PEER_OFF(vitals), .def = "blocking,lock,sched,diskio",
	    .help = "vitals whose share by exe is compared (white-box; at "
		    "most 4)" },
	{ .key = "wb_threshold", .type = VITALS_OPT_DOUBLE,
	    .offset = PEER_OFF(wb_threshold), .def = "1",
	    .help = "KL threshold of a share by exe the model does not train",
	    .min = 0, .max = 1e6 },
	{ .key = "mode", .type = VITALS_OPT_STRING, .offset = PEER_OFF(mode),
	    .def = "detect",
	    .help = "detect (indict hosts) or train (learn the thresholds "
		    "from fault-free epochs, written to model)" },
	{ .key = "model", .type = VITALS_OPT_STRING,
	    .offset = PEER_OFF(model), .def = NULL,
	    .help = "thresholds file: written in train mode, read in detect "
		    "mode if set" },
	{ .key = "train_scale", .type = VITALS_OPT_DOUBLE,
	    .offset = PEER_OFF(train_scale), .def = "2",
	    .help = "trained threshold: the least that indicts no one in "
		    "training, times this (the paper's 2)",
	    .min = 1, .max = 100 },
	{ .key = "max_hosts", .type = VITALS_OPT_INT,
	    .offset = PEER_OFF(max_hosts), .def = "10000",
	    .help = "hosts tracked at most (more are ignored)",
	    .min = 3, .max = 1e6 },
	{ .key = NULL }
};
/* clang-format on */

/* How a metric sums over devices. */
enum { PEER_SUM, PEER_MAX };

/* Classes of the root-cause checklist, in the order it tries them. */
enum { PEER_STORAGE, PEER_NETWORK, PEER_CPU };
static const char *const peer_class_names[] = { "storage", "network", "cpu" };

/* A black-box metric: proc metrics PREFIX*.FIELD (or NAME exactly). */
static const struct peer_metric {
	const char *name; /* as in findings and the model */
	const char *prefix; /* proc metric name prefix */
	const char *field, *field2; /* last component(s) summed, or NULL */
	int agg; /* PEER_SUM or PEER_MAX over devices */
	int cls; /* PEER_* */
	int latency; /* checked first: a storage latency symptom */
	double floor; /* histogram range at least this (unit of the metric) */
} peer_metrics[] = {
	{ "disk.rd_sec", "proc.disk.", "rd_sec_s", NULL, PEER_SUM, PEER_STORAGE,
	    0, 64 },
	{ "disk.wr_sec", "proc.disk.", "wr_sec_s", NULL, PEER_SUM, PEER_STORAGE,
	    0, 64 },
	{ "disk.await", "proc.disk.", "await_ms", NULL, PEER_MAX, PEER_STORAGE,
	    1, 2 },
	{ "disk.avgqu_sz", "proc.disk.", "avgqu_sz", NULL, PEER_SUM,
	    PEER_STORAGE, 1, 0.5 },
	{ "disk.util", "proc.disk.", "util_pct", NULL, PEER_MAX, PEER_STORAGE,
	    1, 5 },
	{ "net.rxbyt", "proc.net.", "rxbyt_s", NULL, PEER_SUM, PEER_NETWORK, 0,
	    4096 },
	{ "net.txbyt", "proc.net.", "txbyt_s", NULL, PEER_SUM, PEER_NETWORK, 0,
	    4096 },
	{ "net.errors", "proc.net.", "rxerr_s", "txerr_s", PEER_SUM,
	    PEER_NETWORK, 0, 1 },
	{ "net.drops", "proc.net.", "rxdrop_s", "txdrop_s", PEER_SUM,
	    PEER_NETWORK, 0, 1 },
	{ "tcp.retrans", "proc.tcp.retrans_s", NULL, NULL, PEER_SUM,
	    PEER_NETWORK, 0, 1 },
	{ "cpu.user", "proc.cpu.user_pct", NULL, NULL, PEER_SUM, PEER_CPU, 0,
	    5 },
	{ "cpu.system", "proc.cpu.system_pct", NULL, NULL, PEER_SUM, PEER_CPU,
	    0, 5 },
	/* time waiting for I/O: a storage symptom in the checklist */
	{ "cpu.iowait", "proc.cpu.iowait_pct", NULL, NULL, PEER_SUM,
	    PEER_STORAGE, 0, 5 },
};
#define PEER_NM (sizeof(peer_metrics) / sizeof(peer_metrics[0]))

/* One host's share of a white-box vital by exe in the newest slot. */
struct peer_share {
	uint32_t n; /* exes, <= PEER_EXES */
	char exe[PEER_EXES][PEER_EXE_LEN];
	double share[PEER_EXES]; /* of the vital's weight; sum <= 1 */
};

/*
 * One host: its last win_size samples (a ring by slot number), window
 * history per metric and what its newest window found.  About
 * win_size * (8 + 8 * PEER_NM) bytes plus 4 KB of white-box state.
 */
struct peer_host {
	char *name;
	uint32_t group;
	uint64_t last; /* slot number of its newest sample; 0 = none */
	uint64_t *at; /* win_size slot numbers */
	double *v; /* win_size x PEER_NM samples, NAN where absent */
	uint32_t hist[PEER_NM]; /* anomalous windows, bit 0 the newest */
	double div[PEER_NM]; /* its majority divergence in the newest window */
	double mean[PEER_NM]; /* its mean over the newest window */
	uint32_t npeers; /* peers compared in the newest window */
	uint64_t found; /* slot number it was last indicted at */
	/* white-box */
	struct peer_share sh[PEER_NWB];
	uint64_t sh_at[PEER_NWB]; /* slot number of sh; 0 = none */
	uint32_t wbhist[PEER_NWB];
	double wbdiv[PEER_NWB];
	char wbexe[PEER_NWB][PEER_EXE_LEN]; /* exe whose share moved most */
	double wbmine[PEER_NWB], wbtheirs[PEER_NWB];
	uint64_t wbfound;
};

/* A peer group of the groups option. */
struct peer_group {
	char *name;
	uint32_t npat;
	char **pat;
};

/* Analysis scratch, sized for the group being analysed. */
struct peer_scratch {
	uint32_t cap; /* hosts */
	uint32_t *who; /* host indexes of the group */
	double *x; /* cap x win_size samples of one metric */
	uint32_t *nx; /* samples per host */
	double *p, *logp; /* cap x bins */
	float *d; /* divergences of one host */
	double *med; /* cap values for medians */
};

struct peer {
	struct vitals_ctx *ctx;
	const struct peer_config *cf;
	int train;
	uint32_t ts; /* the timescale analysed (the smallest seen) */
	uint64_t slot_start; /* start of the current slot */
	uint64_t slot; /* slot number, 1, 2, ... */
	uint32_t ngroups; /* configured groups; group ngroups = the rest */
	struct peer_group *groups;
	uint32_t nhosts, cap;
	struct peer_host *hosts;
	uint32_t *index; /* open addressing on name: host index + 1 */
	uint32_t index_cap;
	uint32_t bins; /* histogram bins in force */
	struct peer_scratch s;
	double thr[PEER_NM]; /* thresholds in force */
	double wbthr[PEER_NWB];
	double trained[PEER_NM]; /* train mode: largest majority divergence */
	double wbtrained[PEER_NWB];
	uint64_t ntrained[PEER_NM], nwbtrained[PEER_NWB]; /* values seen */
	uint64_t windows; /* windows analysed */
};

/* ---- the arithmetic (peer.h) ---- */

void
peer_hist(const double *x, uint32_t n, double lo, double hi, uint32_t nbins,
    double *p, double *logp)
{
	double w = (hi - lo) / nbins, tot, alpha = PEER_PSEUDO / nbins;
	uint32_t i;
	long b;

	for (i = 0; i < nbins; i++)
		p[i] = alpha;
	for (i = 0; i < n; i++) {
		b = w > 0 ? (long)floor((x[i] - lo) / w) : 0;
		b = b < 0 ? 0 : b >= (long)nbins ? (long)nbins - 1 : b;
		p[b] += 1;
	}
	tot = n + PEER_PSEUDO;
	for (i = 0; i < nbins; i++) {
		p[i] /= tot;
		logp[i] = log(p[i]);
	}
}

double
peer_skl(const double *p, const double *logp, const double *q,
    const double *logq, uint32_t nbins)
{
	double s = 0;
	uint32_t i;

	for (i = 0; i < nbins; i++)
		s += (p[i] - q[i]) * (logp[i] - logq[i]);
	return s / 2;
}

/*
 * Quickselect with a three-way partition (many divergences are equal when
 * hosts are alike): the element of rank r (0 = largest) of d[0..n).
 */
static float
peer_select(float *d, uint32_t n, uint32_t r)
{
	int64_t lo = 0, hi = (int64_t)n - 1, lt, i, gt;
	float piv, t;

	while (lo < hi) {
		piv = d[lo + (hi - lo) / 2];
		lt = i = lo;
		gt = hi;
		while (i <= gt) {
			if (d[i] > piv) {
				t = d[lt];
				d[lt++] = d[i];
				d[i++] = t;
			} else if (d[i] < piv) {
				t = d[gt];
				d[gt--] = d[i];
				d[i] = t;
			} else
				i++;
		}
		if ((int64_t)r < lt)
			hi = lt - 1;
		else if ((int64_t)r > gt)
			lo = gt + 1;
		else
			return piv;
	}
	return d[r];
}

double
peer_majority(float *d, uint32_t n)
{
	if (n == 0)
		return 0;
	return peer_select(d, n, n / 2);
}

uint32_t
peer_push(uint32_t h, int anomalous, uint32_t k)
{
	uint32_t keep = 2 * k - 1;

	h = h << 1 | (anomalous != 0);
	return keep >= 32 ? h : h & ((1u << keep) - 1);
}

int
peer_kofn(uint32_t h, uint32_t k)
{
	return (uint32_t)__builtin_popcount(h) >= k;
}

void
peer_smooth(double *x, uint32_t n, uint32_t width)
{
	double sum = 0, *orig;
	uint32_t i;

	if (width <= 1 || n == 0 || (orig = malloc(n * sizeof(*x))) == NULL)
		return;
	memcpy(orig, x, n * sizeof(*x));
	for (i = 0; i < n; i++) {
		sum += orig[i];
		if (i >= width)
			sum -= orig[i - width];
		x[i] = sum / (i + 1 < width ? i + 1 : width);
	}
	free(orig);
}

/* ---- hosts and groups ---- */

static uint32_t
peer_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Rebuild the name index at twice the hosts' capacity. */
static int
peer_reindex(struct peer *p)
{
	uint32_t cap = 64, i, j;

	while (cap < 2 * p->cap)
		cap *= 2;
	free(p->index);
	if ((p->index = calloc(cap, sizeof(*p->index))) == NULL)
		return -ENOMEM;
	p->index_cap = cap;
	for (i = 0; i < p->nhosts; i++) {
		j = peer_hash(p->hosts[i].name) & (cap - 1);
		while (p->index[j] != 0)
			j = (j + 1) & (cap - 1);
		p->index[j] = i + 1;
	}
	return 0;
}

/* The group of host name: the first whose pattern matches, else the rest. */
static uint32_t
peer_group_of(const struct peer *p, const char *name)
{
	uint32_t g, i;

	for (g = 0; g < p->ngroups; g++)
		for (i = 0; i < p->groups[g].npat; i++)
			if (fnmatch(p->groups[g].pat[i], name, 0) == 0)
				return g;
	return p->ngroups;
}

/* Host `name`, added on first sight; NULL past max_hosts or out of memory. */
static struct peer_host *
peer_host_get(struct peer *p, const char *name)
{
	uint32_t j, w = (uint32_t)p->cf->win_size;
	struct peer_host *h, *v;

	j = p->index_cap ? peer_hash(name) & (p->index_cap - 1) : 0;
	while (p->index_cap && p->index[j] != 0) {
		if (strcmp(p->hosts[p->index[j] - 1].name, name) == 0)
			return &p->hosts[p->index[j] - 1];
		j = (j + 1) & (p->index_cap - 1);
	}
	if (p->nhosts >= (uint32_t)p->cf->max_hosts)
		return NULL;
	if (p->nhosts == p->cap) {
		v = realloc(p->hosts, (p->cap ? 2 * p->cap : 16) * sizeof(*v));
		if (v == NULL)
			return NULL;
		p->hosts = v;
		p->cap = p->cap ? 2 * p->cap : 16;
	}
	h = memset(&p->hosts[p->nhosts], 0, sizeof(*h));
	h->name = strdup(name);
	h->at = calloc(w, sizeof(*h->at));
	h->v = malloc((size_t)w * PEER_NM * sizeof(*h->v));
	if (h->name == NULL || h->at == NULL || h->v == NULL) {
		free(h->name);
		free(h->at);
		free(h->v);
		return NULL;
	}
	h->group = peer_group_of(p, name);
	p->nhosts++;
	if (peer_reindex(p) != 0)
		return NULL;
	return h;
}

/* ---- samples ---- */

/* Whether proc metric name is m's, on a device or not. */
static int
peer_metric_is(const struct peer_metric *m, const char *name)
{
	size_t lp = strlen(m->prefix);
	const char *dot;

	if (m->field == NULL)
		return strcmp(name, m->prefix) == 0;
	if (strncmp(name, m->prefix, lp) != 0 ||
	    (dot = strrchr(name + lp, '.')) == NULL)
		return 0;
	return strcmp(dot + 1, m->field) == 0 ||
	    (m->field2 != NULL && strcmp(dot + 1, m->field2) == 0);
}

/* The black-box metrics of e into row[PEER_NM], NAN where absent. */
static void
peer_sample(const struct vitals_epoch *e, double *row)
{
	const struct vitals_metric *mt;
	uint32_t i, k;

	for (k = 0; k < PEER_NM; k++)
		row[k] = NAN;
	for (i = 0; i < e->nmetrics; i++) {
		mt = &e->metrics[i];
		if (strncmp(mt->name, "proc.", 5) != 0 || !isfinite(mt->mean))
			continue;
		for (k = 0; k < PEER_NM; k++) {
			if (!peer_metric_is(&peer_metrics[k], mt->name))
				continue;
			if (isnan(row[k]))
				row[k] = mt->mean;
			else if (peer_metrics[k].agg == PEER_SUM)
				row[k] += mt->mean;
			else if (mt->mean > row[k])
				row[k] = mt->mean;
		}
	}
}

/* ---- white-box: share of a vital by exe ---- */

/* Add weight w to exe in s, the smallest share making way when full. */
static void
peer_share_add(struct peer_share *s, const char *exe, double w)
{
	uint32_t i, min = 0;

	for (i = 0; i < s->n; i++)
		if (strncmp(s->exe[i], exe, PEER_EXE_LEN - 1) == 0) {
			s->share[i] += w;
			return;
		}
	if (s->n < PEER_EXES)
		i = s->n++;
	else {
		for (i = 1; i < s->n; i++)
			if (s->share[i] < s->share[min])
				min = i;
		if (s->share[min] >= w)
			return;
		i = min;
	}
	snprintf(s->exe[i], PEER_EXE_LEN, "%s", exe);
	s->share[i] = w;
}

/* Samples by slot and exe, the largest count first. */
static int
peer_cmp_sample(const void *a, const void *b)
{
	const struct vitals_sample *x = *(const struct vitals_sample *const *)a;
	const struct vitals_sample *y = *(const struct vitals_sample *const *)b;
	int c;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if ((c = strcmp(x->exe, y->exe)) != 0)
		return c;
	return x->count > y->count ? -1 : x->count < y->count;
}

/*
 * The share of vital ve's weight by exe, from its samples: a sample's
 * count is its HCA counter at that moment, so the largest count of an
 * exe's samples in a slot is what that exe put there.  Returns 1, or 0
 * when there is nothing to share (or no memory).
 */
static int
peer_share(const struct vitals_vital_epoch *ve, struct peer_share *s)
{
	const struct vitals_sample **v, *a;
	double tot = 0;
	uint32_t i;

	memset(s, 0, sizeof(*s));
	if (ve->nsamples == 0 ||
	    (v = malloc(ve->nsamples * sizeof(*v))) == NULL)
		return 0;
	for (i = 0; i < ve->nsamples; i++)
		v[i] = &ve->samples[i];
	qsort(v, ve->nsamples, sizeof(*v), peer_cmp_sample);
	for (i = 0; i < ve->nsamples; i++) {
		a = v[i];
		if (i > 0 && v[i - 1]->slot == a->slot &&
		    strcmp(v[i - 1]->exe, a->exe) == 0)
			continue;
		peer_share_add(s, a->exe[0] ? a->exe : "?", (double)a->count);
		tot += (double)a->count;
	}
	free(v);
	if (tot <= 0)
		return 0;
	for (i = 0; i < s->n; i++)
		s->share[i] /= tot;
	return 1;
}

/* ---- one slot ---- */

/* Record the samples of epoch e (one host's in the slot). */
static void
peer_ingest(struct peer *p, const struct vitals_epoch *e)
{
	uint32_t w = (uint32_t)p->cf->win_size, pos, i;
	const struct vitals_vital_epoch *ve;
	struct peer_host *h;

	if ((h = peer_host_get(p, e->host)) == NULL || h->last == p->slot)
		return;
	pos = (uint32_t)(p->slot % w);
	h->at[pos] = p->slot;
	h->last = p->slot;
	peer_sample(e, &h->v[(size_t)pos * PEER_NM]);
	for (i = 0; i < p->cf->vitals.n && i < PEER_NWB; i++) {
		ve = vitals_epoch_vital(e, p->cf->vitals.v[i]);
		if (ve != NULL && peer_share(ve, &h->sh[i]))
			h->sh_at[i] = p->slot;
	}
}

static int
peer_scratch_size(struct peer *p, uint32_t n)
{
	struct peer_scratch *s = &p->s;
	size_t w = (size_t)p->cf->win_size, b = p->bins;

	if (n <= s->cap)
		return 0;
	free(s->who);
	free(s->x);
	free(s->nx);
	free(s->p);
	free(s->logp);
	free(s->d);
	free(s->med);
	s->cap = n;
	s->who = calloc(n, sizeof(*s->who));
	s->x = calloc(n * w, sizeof(*s->x));
	s->nx = calloc(n, sizeof(*s->nx));
	s->p = calloc(n * b, sizeof(*s->p));
	s->logp = calloc(n * b, sizeof(*s->logp));
	s->d = calloc(n, sizeof(*s->d));
	s->med = calloc(n, sizeof(*s->med));
	if (s->who == NULL || s->x == NULL || s->nx == NULL || s->p == NULL ||
	    s->logp == NULL || s->d == NULL || s->med == NULL) {
		s->cap = 0;
		return -ENOMEM;
	}
	return 0;
}

static int
peer_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
peer_median(double *v, uint32_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), peer_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The peers of the i-th of n hosts: all others, or max_peers of them
 * spread evenly around the group (j-th: i + 1 + j * n / max_peers).
 */
static uint32_t
peer_peer_of(const struct peer *p, uint32_t i, uint32_t j, uint32_t n)
{
	uint32_t m = (uint32_t)p->cf->max_peers;

	if (m == 0 || m >= n - 1)
		return (i + 1 + j) % n;
	return (uint32_t)((i + 1 + (uint64_t)j * (n - 1) / m) % n);
}

/*
 * Metric k over the window ending at the current slot, for the group's
 * n hosts in s->who: the samples, a common range, the histograms, each
 * host's majority divergence and its history bit.
 */
static void
peer_metric_window(struct peer *p, uint32_t k, uint32_t n)
{
	const struct peer_config *cf = p->cf;
	struct peer_scratch *s = &p->s;
	uint32_t w = (uint32_t)cf->win_size, b = p->bins;
	uint32_t i, j, t, np, nin = 0, npeers;
	double lo = INFINITY, hi = -INFINITY, med, spread, x, *xi;
	struct peer_host *h;

	for (i = 0; i < n; i++) {
		h = &p->hosts[s->who[i]];
		xi = &s->x[(size_t)i * w];
		for (s->nx[i] = 0, t = 0; t < w; t++) {
			/* ring position of slot (slot - w + 1 + t) */
			uint64_t at = p->slot + 1 - w + t;
			x = h->at[at % w] == at ? h->v[(at % w) * PEER_NM + k]
						: NAN;
			if (!isnan(x))
				xi[s->nx[i]++] = x;
		}
		if (s->nx[i] < w / 2) {
			s->nx[i] = 0; /* too few samples: not compared */
			continue;
		}
		peer_smooth(xi, s->nx[i], (uint32_t)cf->smooth);
		for (t = 0, h->mean[k] = 0; t < s->nx[i]; t++) {
			lo = fmin(lo, xi[t]);
			hi = fmax(hi, xi[t]);
			h->mean[k] += xi[t] / s->nx[i];
		}
		s->med[nin++] = h->mean[k];
	}
	if (nin < 3) {
		for (i = 0; i < n; i++)
			p->hosts[s->who[i]].hist[k] = peer_push(
			    p->hosts[s->who[i]].hist[k], 0, (uint32_t)cf->k);
		return;
	}
	med = peer_median(s->med, nin);
	spread = fmax(peer_metrics[k].floor, cf->min_spread * fabs(med));
	if (hi - lo < spread) {
		lo = (lo + hi) / 2 - spread / 2;
		hi = lo + spread;
	}
	for (i = 0; i < n; i++)
		if (s->nx[i] > 0)
			peer_hist(&s->x[(size_t)i * w], s->nx[i], lo, hi, b,
			    &s->p[(size_t)i * b], &s->logp[(size_t)i * b]);
	for (i = 0; i < n; i++) {
		h = &p->hosts[s->who[i]];
		npeers = cf->max_peers > 0 && (uint32_t)cf->max_peers < n - 1
		    ? (uint32_t)cf->max_peers
		    : n - 1;
		for (np = 0, j = 0; s->nx[i] > 0 && j < npeers; j++) {
			t = peer_peer_of(p, i, j, n);
			if (s->nx[t] == 0)
				continue;
			s->d[np++] = (float)peer_skl(&s->p[(size_t)i * b],
			    &s->logp[(size_t)i * b], &s->p[(size_t)t * b],
			    &s->logp[(size_t)t * b], b);
		}
		h->npeers = np;
		h->div[k] = np >= 2 ? peer_majority(s->d, np) : 0;
		h->hist[k] = peer_push(h->hist[k],
		    np >= 2 && h->div[k] > p->thr[k], (uint32_t)cf->k);
		if (p->train && np >= 2) {
			p->ntrained[k]++;
			p->trained[k] = fmax(p->trained[k], h->div[k]);
		}
	}
}

/* Analyse the window ending now for group g. */
static int
peer_window(struct peer *p, uint32_t g)
{
	uint32_t i, k, n = 0, ind;
	struct peer_host *h;

	for (i = 0; i < p->nhosts; i++)
		n += p->hosts[i].group == g;
	if (n < 3)
		return 0;
	if (peer_scratch_size(p, n) != 0)
		return -ENOMEM;
	for (n = 0, i = 0; i < p->nhosts; i++)
		if (p->hosts[i].group == g)
			p->s.who[n++] = i;
	for (k = 0; k < PEER_NM; k++)
		peer_metric_window(p, k, n);
	for (i = 0; i < n; i++) {
		h = &p->hosts[p->s.who[i]];
		for (ind = 0, k = 0; k < PEER_NM; k++)
			ind |= peer_kofn(h->hist[k], (uint32_t)p->cf->k);
		if (ind && !p->train)
			h->found = p->slot;
	}
	return 0;
}

/* Sym. KL of a share against the mean share of the others (pseudo 1e-3). */
static double
peer_share_div(const struct peer_share *mine, const struct peer_share *all,
    const double *sum, uint32_t nothers, char *exe, double *m, double *o)
{
	double d = 0, best = -1, a, b, eps = 1e-3;
	uint32_t i, j;

	for (i = 0; i < all->n; i++) {
		for (a = 0, j = 0; j < mine->n; j++)
			if (strcmp(mine->exe[j], all->exe[i]) == 0)
				a = mine->share[j];
		b = (sum[i] - a) / nothers;
		b = b < 0 ? 0 : b;
		d += ((a + eps) - (b + eps)) * (log(a + eps) - log(b + eps));
		if (fabs(a - b) > best) {
			best = fabs(a - b);
			snprintf(exe, PEER_EXE_LEN, "%s", all->exe[i]);
			*m = a;
			*o = b;
		}
	}
	return d / 2;
}

/*
 * White-box vital v for group g at this slot: each host's share by exe
 * against the mean share of the others in the group.
 */
static void
peer_wb_slot(struct peer *p, uint32_t g, uint32_t v)
{
	struct peer_share all = { 0 };
	double sum[PEER_EXES] = { 0 };
	uint32_t i, j, n = 0, x;
	struct peer_host *h;
	int an;

	for (i = 0; i < p->nhosts; i++) {
		h = &p->hosts[i];
		if (h->group != g || h->sh_at[v] != p->slot)
			continue;
		n++;
		for (j = 0; j < h->sh[v].n; j++)
			peer_share_add(&all, h->sh[v].exe[j], 0);
	}
	if (n < 3)
		return;
	for (i = 0; i < p->nhosts; i++) {
		h = &p->hosts[i];
		if (h->group != g || h->sh_at[v] != p->slot)
			continue;
		for (j = 0; j < h->sh[v].n; j++)
			for (x = 0; x < all.n; x++)
				if (strcmp(all.exe[x], h->sh[v].exe[j]) == 0)
					sum[x] += h->sh[v].share[j];
	}
	for (i = 0; i < p->nhosts; i++) {
		h = &p->hosts[i];
		if (h->group != g)
			continue;
		an = 0;
		if (h->sh_at[v] == p->slot) {
			h->wbdiv[v] = peer_share_div(&h->sh[v], &all, sum,
			    n - 1, h->wbexe[v], &h->wbmine[v], &h->wbtheirs[v]);
			an = h->wbdiv[v] > p->wbthr[v];
			if (p->train) {
				p->nwbtrained[v]++;
				p->wbtrained[v] =
				    fmax(p->wbtrained[v], h->wbdiv[v]);
			}
		}
		h->wbhist[v] = peer_push(h->wbhist[v], an, (uint32_t)p->cf->k);
		if (!p->train && peer_kofn(h->wbhist[v], (uint32_t)p->cf->k))
			h->wbfound = p->slot;
	}
}

/* A new slot: ingest every host's epoch, analyse when a window ends. */
static int
peer_slot(struct peer *p, const struct vitals_queue *q)
{
	uint32_t i, g, w = (uint32_t)p->cf->win_size;
	int r = 0;

	p->slot++;
	peer_ingest(p, vitals_queue_newest(q));
	for (i = 0; i < q->npeers; i++)
		peer_ingest(p, q->peers[i]);
	for (g = 0; g <= p->ngroups; g++)
		for (i = 0; i < p->cf->vitals.n && i < PEER_NWB; i++)
			peer_wb_slot(p, g, i);
	if (p->slot < w || (p->slot - w) % (uint64_t)p->cf->win_shift != 0)
		return 0;
	p->windows++;
	for (g = 0; g <= p->ngroups && r == 0; g++)
		r = peer_window(p, g);
	return r;
}

/* ---- findings ---- */

/*
 * The class of the paper's root-cause checklist: storage when a latency
 * symptom (await, queue, %util) diverges, else network when throughput,
 * retransmits, errors or drops do, else storage when its throughput or
 * the time waiting for it (iowait) does, else cpu.
 */
static int
peer_class(const struct peer_host *h, uint32_t k)
{
	uint32_t m;

	for (m = 0; m < PEER_NM; m++)
		if (peer_metrics[m].latency && peer_kofn(h->hist[m], k))
			return PEER_STORAGE;
	for (m = 0; m < PEER_NM; m++)
		if (peer_metrics[m].cls == PEER_NETWORK &&
		    peer_kofn(h->hist[m], k))
			return PEER_NETWORK;
	for (m = 0; m < PEER_NM; m++)
		if (peer_metrics[m].cls == PEER_STORAGE &&
		    peer_kofn(h->hist[m], k))
			return PEER_STORAGE;
	return PEER_CPU;
}

/* Peers' median of metric m's window means, in h's group. */
static double
peer_group_median(struct peer *p, const struct peer_host *h, uint32_t m)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->nhosts && n < p->s.cap; i++)
		if (p->hosts[i].group == h->group && &p->hosts[i] != h &&
		    p->hosts[i].last + (uint64_t)p->cf->win_size > p->slot)
			p->s.med[n++] = p->hosts[i].mean[m];
	return peer_median(p->s.med, n);
}

static int
peer_emit_bb(struct peer *p, const struct vitals_queue *q, struct peer_host *h)
{
	uint32_t k = (uint32_t)p->cf->k, m, cls = (uint32_t)peer_class(h, k);
	struct vitals_finding f = { 0 };
	char text[1024], *t = text;
	size_t left = sizeof(text);
	int len, first = 1;

	len =
	    snprintf(t, left, "host %s diverges from its peers (%s): ", h->name,
		peer_class_names[cls]);
	for (m = 0; m < PEER_NM && len > 0 && (size_t)len < left; m++) {
		if (!peer_kofn(h->hist[m], k))
			continue;
		t += len;
		left -= (size_t)len;
		len = snprintf(t, left,
		    "%s%s %.3g vs peers' median %.3g (KL %.2f, threshold %.2f)",
		    first ? "" : ", ", peer_metrics[m].name, h->mean[m],
		    peer_group_median(p, h, m), h->div[m], p->thr[m]);
		first = 0;
		if (p->thr[m] > 0 && h->div[m] / p->thr[m] > f.score) {
			f.score = h->div[m] / p->thr[m];
			f.value = h->div[m];
			f.expected = p->thr[m];
		}
	}
	if (len > 0 && (size_t)len < left)
		snprintf(t + len, left - (size_t)len,
		    "; with more than half of %u peers in %u of the last %u "
		    "windows of %lld samples",
		    h->npeers, k, 2 * k - 1, (long long)p->cf->win_size);
	f.start_ns = vitals_queue_newest(q)->start_ns;
	f.severity = VITALS_SEV_WARN;
	f.vital = peer_class_names[cls];
	f.label = h->name;
	f.text = text;
	return vitals_queue_emit(p->ctx, q, &f);
}

static int
peer_emit_wb(struct peer *p, const struct vitals_queue *q, struct peer_host *h)
{
	struct vitals_finding f = { 0 };
	uint32_t v, k = (uint32_t)p->cf->k;
	char text[512];
	int r = 0;

	for (v = 0; v < p->cf->vitals.n && v < PEER_NWB; v++) {
		if (!peer_kofn(h->wbhist[v], k) || h->sh_at[v] != p->slot)
			continue;
		snprintf(text, sizeof(text),
		    "host %s: its %s by exe diverges from its peers' (KL "
		    "%.2f > %.2f in %u of the last %u epochs); %s has %.0f%% "
		    "of it there, %.0f%% on its peers",
		    h->name, p->cf->vitals.v[v], h->wbdiv[v], p->wbthr[v], k,
		    2 * k - 1, h->wbexe[v], 100 * h->wbmine[v],
		    100 * h->wbtheirs[v]);
		f = (struct vitals_finding){
			.start_ns = vitals_queue_newest(q)->start_ns,
			.severity = VITALS_SEV_WARN,
			.score =
			    p->wbthr[v] > 0 ? h->wbdiv[v] / p->wbthr[v] : 0,
			.value = h->wbdiv[v],
			.expected = p->wbthr[v],
			.vital = p->cf->vitals.v[v],
			.label = h->name,
			.text = text
		};
		if (vitals_queue_emit(p->ctx, q, &f) != 0)
			r = -ENOMEM;
	}
	return r;
}

/*
 * The aggregator calls once per host of a slot, each time with the others
 * as peers: the first call of a slot does the work for all, every call
 * reports its own host.
 */
static int
peer_epoch(void *state, const struct vitals_queue *q)
{
	struct peer *p = state;
	const struct vitals_epoch *e = vitals_queue_newest(q);
	struct peer_host *h;
	int r = 0;

	if (p->ts == 0 || q->timescale_s < p->ts) {
		p->ts = q->timescale_s; /* analyse the finest timescale */
		p->slot_start = 0;
	}
	if (q->timescale_s != p->ts || q->npeers + 1 < 3)
		return 0;
	if (e->start_ns != p->slot_start || p->slot == 0) {
		p->slot_start = e->start_ns;
		if ((r = peer_slot(p, q)) != 0)
			return r;
	}
	if (p->train || (h = peer_host_get(p, e->host)) == NULL)
		return 0;
	if (h->found == p->slot && (r = peer_emit_bb(p, q, h)) != 0)
		return r;
	if (h->wbfound == p->slot)
		r = peer_emit_wb(p, q, h);
	return r;
}

/* ---- the model ---- */

/* Round the least threshold up to 0.1 (the paper's steps), then scale. */
static double
peer_trained(const struct peer *p, double largest)
{
	double t = ceil(largest * 10 + 1e-9) / 10;

	return (t < 0.1 ? 0.1 : t) * p->cf->train_scale;
}

static int
peer_model_write(struct peer *p, char *err, size_t errlen)
{
	json_t *j, *bb, *wb;
	char *text;
	uint32_t k;
	int r;

	j = json_pack("{s:s, s:i, s:I, s:I, s:I, s:f, s:I}", "filter", "peer",
	    "version", PEER_MODEL_VERSION, "win_size",
	    (json_int_t)p->cf->win_size, "bins", (json_int_t)p->bins, "windows",
	    (json_int_t)p->windows, "train_scale", p->cf->train_scale, "hosts",
	    (json_int_t)p->nhosts);
	bb = json_object();
	wb = json_object();
	if (j == NULL || bb == NULL || wb == NULL) {
		json_decref(j);
		json_decref(bb);
		json_decref(wb);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* What training never saw keeps the untrained default. */
	for (k = 0; k < PEER_NM; k++)
		if (p->ntrained[k] > 0)
			json_object_set_new(bb, peer_metrics[k].name,
			    json_real(peer_trained(p, p->trained[k])));
	for (k = 0; k < p->cf->vitals.n && k < PEER_NWB; k++)
		if (p->nwbtrained[k] > 0)
			json_object_set_new(wb, p->cf->vitals.v[k],
			    json_real(peer_trained(p, p->wbtrained[k])));
	json_object_set_new(j, "thresholds", bb);
	json_object_set_new(j, "wb_thresholds", wb);
	text = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(j);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = vitals_file_write(p->cf->model, text, strlen(text), err, errlen);
	free(text);
	return r;
}

/* Thresholds from the model file; those it lacks keep their default. */
static int
peer_model_read(struct peer *p, char *err, size_t errlen)
{
	json_t *j, *bb, *wb, *v;
	json_error_t je;
	uint32_t k;

	if ((j = json_load_file(p->cf->model, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errlen, "%s: %s", p->cf->model, je.text);
		return access(p->cf->model, R_OK) != 0 ? -ENOENT : -EINVAL;
	}
	bb = json_object_get(j, "thresholds");
	wb = json_object_get(j, "wb_thresholds");
	v = json_object_get(j, "filter");
	if (!json_is_object(bb) || !json_is_string(v) ||
	    strcmp(json_string_value(v), "peer") != 0) {
		snprintf(err, errlen, "%s: not a peer model", p->cf->model);
		json_decref(j);
		return -EINVAL;
	}
	for (k = 0; k < PEER_NM; k++)
		if (json_is_number(
			v = json_object_get(bb, peer_metrics[k].name)))
			p->thr[k] = json_number_value(v);
	for (k = 0; k < p->cf->vitals.n && k < PEER_NWB; k++)
		if (json_is_number(v = json_object_get(wb, p->cf->vitals.v[k])))
			p->wbthr[k] = json_number_value(v);
	json_decref(j);
	return 0;
}

/* ---- life ---- */

static void
peer_free(struct peer *p)
{
	uint32_t i, j;

	for (i = 0; i < p->nhosts; i++) {
		free(p->hosts[i].name);
		free(p->hosts[i].at);
		free(p->hosts[i].v);
	}
	free(p->hosts);
	free(p->index);
	for (i = 0; i < p->ngroups; i++) {
		for (j = 0; j < p->groups[i].npat; j++)
			free(p->groups[i].pat[j]);
		free(p->groups[i].pat);
		free(p->groups[i].name);
	}
	free(p->groups);
	free(p->s.who);
	free(p->s.x);
	free(p->s.nx);
	free(p->s.p);
	free(p->s.logp);
	free(p->s.d);
	free(p->s.med);
	free(p);
}

static void
peer_fini(void *state)
{
	struct peer *p = state;
	char err[1024];

	if (p == NULL)
		return;
	if (p->train && peer_model_write(p, err, sizeof(err)) != 0)
		vitals_error(p->ctx, "model %s", err);
	peer_free(p);
}

/* Parse "NAME=PAT PAT" (or commas) into g; -EINVAL without a name or a pattern. */
static int
peer_group_parse(const char *s, struct peer_group *g)
{
	const char *eq = strchr(s, '='), *c;
	char *dup, *tok, *save = NULL;

	memset(g, 0, sizeof(*g));
	if (eq == NULL || eq == s || eq[1] == '\0')
		return -EINVAL;
	for (c = eq + 1; *c != '\0'; c++)
		g->npat += *c == ',' || *c == ' ';
	if ((g->name = strndup(s, (size_t)(eq - s))) == NULL ||
	    (g->pat = calloc(g->npat + 1, sizeof(*g->pat))) == NULL ||
	    (dup = strdup(eq + 1)) == NULL)
		return -ENOMEM;
	g->npat = 0;
	for (tok = strtok_r(dup, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save))
		if ((g->pat[g->npat] = strdup(tok)) != NULL)
			g->npat++;
	free(dup);
	return g->npat > 0 ? 0 : -EINVAL;
}

static int
peer_check(const void *config, char *why, size_t len)
{
	const struct peer_config *cf = config;
	struct peer_group g;
	uint32_t i, j;
	int r;

	if (cf->win_size < 4 || cf->win_size > PEER_WIN_MAX ||
	    cf->win_shift < 1 || cf->win_shift > cf->win_size) {
		snprintf(why, len, "win_shift must be 1 to win_size (%lld)",
		    (long long)cf->win_size);
		return -EINVAL;
	}
	if (cf->k < 1 || cf->k > PEER_K_MAX || cf->bins < 0 || cf->bins == 1 ||
	    cf->bins > PEER_BINS_MAX || cf->smooth < 1 || cf->max_peers < 0 ||
	    cf->max_hosts < 3 || !(cf->threshold >= 0) ||
	    !(cf->wb_threshold >= 0) || !(cf->min_spread >= 0) ||
	    !(cf->train_scale >= 1)) {
		snprintf(why, len, "an option is out of range");
		return -EINVAL;
	}
	if (cf->mode == NULL ||
	    (strcmp(cf->mode, "detect") != 0 &&
		strcmp(cf->mode, "train") != 0)) {
		snprintf(why, len, "mode must be detect or train");
		return -EINVAL;
	}
	if (strcmp(cf->mode, "train") == 0 && cf->model == NULL) {
		snprintf(why, len, "train mode needs a model file");
		return -EINVAL;
	}
	if (cf->vitals.n > PEER_NWB) {
		snprintf(why, len, "vitals: at most %d", PEER_NWB);
		return -EINVAL;
	}
	for (i = 0; i < cf->groups.n; i++) {
		r = peer_group_parse(cf->groups.v[i], &g);
		for (j = 0; j < g.npat; j++)
			free(g.pat[j]);
		free(g.pat);
		free(g.name);
		if (r != 0) {
			snprintf(why, len,
			    "groups: '%s' is not NAME=PATTERN PATTERN...",
			    cf->groups.v[i]);
			return r;
		}
	}
	return 0;
}

static int
peer_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct peer_config *cf = config;
	char err[1024];
	struct peer *p;
	uint32_t i;
	int r;

	p = vitals_init_state(ctx, peer_check, config, sizeof(*p), &r);
	if (p == NULL)
		return r;
	p->ctx = ctx;
	p->cf = cf;
	p->train = strcmp(cf->mode, "train") == 0;
	p->bins = cf->bins > 0 ? (uint32_t)cf->bins
			       : (uint32_t)lround(sqrt((double)cf->win_size));
	for (i = 0; i < PEER_NM; i++)
		p->thr[i] = cf->threshold;
	for (i = 0; i < PEER_NWB; i++)
		p->wbthr[i] = cf->wb_threshold;
	if (cf->groups.n > 0 &&
	    (p->groups = calloc(cf->groups.n, sizeof(*p->groups))) == NULL)
		r = -ENOMEM;
	/* ngroups counts a half-parsed group too, for peer_free */
	for (i = 0; i < cf->groups.n && r == 0; i++, p->ngroups++)
		r = peer_group_parse(cf->groups.v[i], &p->groups[i]);
	if (r == 0 && p->train)
		r = vitals_file_check(cf->model, err, sizeof(err));
	else if (r == 0 && cf->model != NULL)
		r = peer_model_read(p, err, sizeof(err));
	if (r != 0) {
		if (r != -ENOMEM)
			vitals_error(ctx, "model %s", err);
		peer_free(p);
		return r;
	}
	*state = p;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct peer_config),
	.name = "peer",
	.version = "0.1.0",
	.description = "peer comparison across hosts (Kasick FAST'10): "
		       "indicts the host whose metrics diverge from its "
		       "peers'; silent with fewer than 3 hosts in a group",
	.options = peer_options,
	.init = peer_init,
	.fini = peer_fini,
	.epoch = peer_epoch,
	.check = peer_check,
	.scope = VITALS_SCOPE_FLEET,
};
