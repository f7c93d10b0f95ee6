/* SPDX-License-Identifier: MIT */
/*
 * mkstore: write a store of simulated epochs without waiting for them.  A
 * seeded Zipf event stream per host and vital goes through the real sketch
 * engine (core/engine.h) at simulated times, each epoch is closed at its
 * simulated end and saved with vitals_epoch_save, and anomalies are
 * injected at known times, listed in a JSON manifest.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/store.h>

#include "config.h"
#include "engine.h"
#include "option.h"

#define MK_NS 1000000000ull
#define MK_MAX_VITALS 16
#define MK_MAX_HOSTS 64
#define MK_EXES 8
#define MK_ROGUE_EXE "/usr/bin/cryptominer"
#define MK_ROGUE_LABEL 0x7f3a0000ull /* searched from here: see mk_free_label */
#define MK_NEW_LABEL 0x66a00000ull
#define MK_NEW_EXE 2 /* exe index owning the new dominating label */
#define MK_VANISH_EXE 1 /* exe index that vanishes */
#define MK_UBASE 0x400000ull
#define MK_KBASE 0xffffffff81000000ull

/* Kinds of anomaly, in the order they are placed along the store. */
enum { MK_CPU_BURST, MK_RATE_X8, MK_NEW_LABEL_K, MK_VANISH, MK_NKINDS };

static const char *const mk_kind_names[MK_NKINDS] = { "cpu_burst", "rate_x8",
	"new_label", "vanishing_exe" };
/* Where each starts, as a share of the store's epochs. */
static const double mk_kind_at[MK_NKINDS] = { 0.25, 0.5, 0.65, 0.8 };

struct mk_opts {
	const char *out;
	const char *manifest;
	uint64_t span_ns; /* --days / --span */
	uint64_t epoch_ns;
	uint64_t start_ns; /* 0 = end at the last boundary before now */
	uint32_t nhosts;
	char *hosts[MK_MAX_HOSTS];
	uint32_t nvitals;
	char *vitals[MK_MAX_VITALS];
	uint64_t seed;
	uint64_t rate; /* events per second per vital */
	uint32_t labels;
	double zipf;
	uint32_t max_samples;
	int clean; /* no anomalies */
	int quiet;
};

/* One injected anomaly. */
struct mk_anomaly {
	int kind;
	int vital; /* index in opts vitals, -1 = all */
	uint64_t first, n; /* epochs [first, first + n) */
	double factor;
};

struct mk_exe {
	char path[32];
	char comm[16];
	uint32_t id;
};

struct mk {
	struct mk_opts o;
	uint64_t nepochs;
	double *cdf;
	struct mk_exe exes[MK_EXES], rogue;
	struct mk_anomaly an[MK_NKINDS];
	int nan;
	uint64_t rogue_label; /* the cpu burst's label */
	uint64_t new_label; /* the new dominating label */
	struct config *cfg;
};

static uint64_t
mk_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
mk_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mk_mix(*s);
}

static double
mk_uniform(uint64_t *s)
{
	return (double)(mk_next(s) >> 11) * 0x1.0p-53;
}

static uint32_t
mk_fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static uint32_t
mk_rank(const struct mk *m, uint64_t *rng)
{
	double u = mk_uniform(rng);
	uint32_t lo = 0, hi = m->o.labels - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Weight of one event by vital: samples, ns of delay, bytes. */
static uint64_t
mk_weight(const char *vital, uint64_t *rng)
{
	if (strcmp(vital, "sched") == 0 || strcmp(vital, "blocking") == 0 ||
	    strcmp(vital, "lock") == 0)
		return 1000 + mk_next(rng) % 40000;
	if (strcmp(vital, "diskio") == 0 || strcmp(vital, "socket") == 0)
		return 4096 * (1 + mk_next(rng) % 16);
	return 1;
}

static const char *
mk_unit(const char *vital)
{
	if (strcmp(vital, "sched") == 0 || strcmp(vital, "blocking") == 0 ||
	    strcmp(vital, "lock") == 0)
		return "ns";
	if (strcmp(vital, "diskio") == 0 || strcmp(vital, "socket") == 0)
		return "bytes";
	if (strcmp(vital, "cpu") == 0 || strcmp(vital, "cache") == 0)
		return "samples";
	return "events";
}

static void
mk_emit(struct vitals_vital *v, const char *vital, uint64_t label,
    const struct mk_exe *x, uint64_t ts, uint64_t *rng)
{
	uint64_t k[2], u[2];
	struct vitals_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.label = label;
	ev.weight = mk_weight(vital, rng);
	ev.exe_id = x->id;
	ev.uid = 1000;
	ev.pid = ev.tid = 1000 + (x->id % 30000);
	k[0] = MK_KBASE + (mk_mix(label) & 0xfffff0);
	k[1] = MK_KBASE + (mk_mix(label + 1) & 0xfffff0);
	u[0] = label + 0x10;
	u[1] = MK_UBASE + (mk_mix(~label) & 0xffff0);
	ev.nkstack = 2;
	ev.nustack = 2;
	ev.kstack = k;
	ev.ustack = u;
	ev.exe = x->path;
	ev.comm = x->comm;
	ev.args[0] = ev.weight;
	vitals_emit(v, &ev);
}

/* The anomaly of kind active at epoch i on host 0, or NULL. */
static const struct mk_anomaly *
mk_active(const struct mk *m, int kind, uint64_t i, uint32_t host)
{
	const struct mk_anomaly *a;
	int k;

	for (k = 0; k < m->nan; k++) {
		a = &m->an[k];
		if (a->kind == kind && host == 0 && i >= a->first &&
		    (kind == MK_VANISH || i < a->first + a->n))
			return a;
	}
	return NULL;
}

/*
 * One vital's events of epoch i on host h, from start over len: the Zipf
 * stream, and a rogue exe's or a new label's events (burst_factor times
 * the top label's) interleaved with it, as a probe would see them.
 */
static void
mk_vital_epoch(const struct mk *m, struct vitals_vital *v, int vi, uint32_t h,
    uint64_t i, uint64_t start, uint64_t *rng)
{
	const struct mk_anomaly *a, *rogue, *fresh;
	const char *name = m->o.vitals[vi];
	uint64_t n, k, extra = 0, done = 0, len = m->o.epoch_ns, ts;
	int vanish = mk_active(m, MK_VANISH, i, h) != NULL;
	uint32_t r;

	n = m->o.rate * len / MK_NS;
	if ((a = mk_active(m, MK_RATE_X8, i, h)) != NULL && a->vital == vi)
		n = (uint64_t)((double)n * a->factor);
	rogue = mk_active(m, MK_CPU_BURST, i, h);
	fresh = mk_active(m, MK_NEW_LABEL_K, i, h);
	a = rogue != NULL && rogue->vital == vi	  ? rogue
	    : fresh != NULL && fresh->vital == vi ? fresh
						  : NULL;
	if (a != NULL)
		extra = (uint64_t)(a->factor * (double)n * m->cdf[0]);
	for (k = 0; k < n; k++) {
		ts = start + k * len / n;
		for (; done < extra && done * n <= k * extra; done++)
			mk_emit(v, name,
			    a == rogue ? m->rogue_label : m->new_label,
			    a == rogue ? &m->rogue : &m->exes[MK_NEW_EXE], ts,
			    rng);
		r = mk_rank(m, rng);
		if (vanish && r % MK_EXES == MK_VANISH_EXE)
			continue;
		mk_emit(v, name, MK_UBASE + (uint64_t)(r + 1) * 0x100,
		    &m->exes[r % MK_EXES], ts, rng);
	}
	for (; done < extra; done++)
		mk_emit(v, name, a == rogue ? m->rogue_label : m->new_label,
		    a == rogue ? &m->rogue : &m->exes[MK_NEW_EXE],
		    start + len - 1, rng);
}

/* All epochs of host h. */
static int
mk_host(struct mk *m, uint32_t h)
{
	struct vitals_vital *v[MK_MAX_VITALS];
	uint64_t rng[MK_MAX_VITALS], i, start;
	const struct vitals_epoch *e;
	char err[1024];
	struct engine *eng;
	uint32_t k;
	int r = 0;

	if ((eng = engine_new(m->cfg, m->o.hosts[h])) == NULL)
		return -ENOMEM;
	for (k = 0; k < m->o.nvitals && r == 0; k++) {
		r = engine_vital_open(
		    eng, m->o.vitals[k], mk_unit(m->o.vitals[k]), &v[k]);
		rng[k] = mk_mix(m->o.seed ^ mk_fnv(m->o.hosts[h]) ^
		    ((uint64_t)mk_fnv(m->o.vitals[k]) << 32));
	}
	engine_start(eng, m->o.start_ns);
	for (i = 0; i < m->nepochs && r == 0; i++) {
		start = m->o.start_ns + i * m->o.epoch_ns;
		for (k = 0; k < m->o.nvitals; k++)
			mk_vital_epoch(m, v[k], (int)k, h, i, start, &rng[k]);
		e = engine_close(eng, start + m->o.epoch_ns, 0);
		if ((r = vitals_epoch_save(
			 e, m->o.out, NULL, 0, err, sizeof(err))) != 0)
			fprintf(stderr, "mkstore: %s\n", err);
		if (!m->o.quiet && i % 500 == 499)
			fprintf(stderr, "mkstore: %s: %llu/%llu epochs\n",
			    m->o.hosts[h], (unsigned long long)i + 1,
			    (unsigned long long)m->nepochs);
	}
	engine_free(eng);
	return r;
}

/* ---- anomalies and manifest ---- */

static int
mk_vital_index(const struct mk *m, const char *name, int fallback)
{
	uint32_t k;

	for (k = 0; k < m->o.nvitals; k++)
		if (strcmp(m->o.vitals[k], name) == 0)
			return (int)k;
	return fallback < (int)m->o.nvitals ? fallback : 0;
}

static void
mk_plan(struct mk *m)
{
	static const char *const vital[MK_NKINDS] = { "cpu", "diskio", "sched",
		NULL };
	static const double factor[MK_NKINDS] = { 3, 8, 2, 0 };
	uint64_t len = m->nepochs / 50;
	int k;

	len = len < 3 ? 3 : len > 10 ? 10 : len;
	if (m->o.clean)
		return;
	for (k = 0; k < MK_NKINDS; k++) {
		m->an[k].kind = k;
		m->an[k].vital = vital[k] ? mk_vital_index(m, vital[k], k) : -1;
		m->an[k].first = (uint64_t)(mk_kind_at[k] * (double)m->nepochs);
		m->an[k].n = k == MK_VANISH ? m->nepochs - m->an[k].first : len;
		m->an[k].factor = factor[k];
	}
	m->nan = MK_NKINDS;
}

static json_t *
mk_anomaly_json(const struct mk *m, const struct mk_anomaly *a)
{
	const struct mk_exe *x = a->kind == MK_CPU_BURST ? &m->rogue
	    : a->kind == MK_NEW_LABEL_K			 ? &m->exes[MK_NEW_EXE]
	    : a->kind == MK_VANISH ? &m->exes[MK_VANISH_EXE]
				   : NULL;
	uint64_t start = m->o.start_ns + a->first * m->o.epoch_ns;
	char label[32];
	json_t *o;

	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f}", "kind",
	    mk_kind_names[a->kind], "host", m->o.hosts[0], "start_ns",
	    (json_int_t)start, "end_ns",
	    (json_int_t)(start + a->n * m->o.epoch_ns), "first_epoch",
	    (json_int_t)a->first, "epochs", (json_int_t)a->n, "factor",
	    a->factor);
	if (o == NULL)
		return NULL;
	if (a->vital >= 0)
		json_object_set_new(
		    o, "vital", json_string(m->o.vitals[a->vital]));
	if (x != NULL) {
		json_object_set_new(o, "exe", json_string(x->path));
		json_object_set_new(o, "comm", json_string(x->comm));
	}
	if (a->kind == MK_CPU_BURST || a->kind == MK_NEW_LABEL_K) {
		snprintf(label, sizeof(label), "0x%llx",
		    (unsigned long long)(a->kind == MK_CPU_BURST
			    ? m->rogue_label
			    : m->new_label));
		json_object_set_new(o, "label", json_string(label));
	}
	return o;
}

static int
mk_manifest(const struct mk *m)
{
	char path[4096];
	json_t *j, *hosts, *vitals, *an;
	uint32_t k;
	int r;

	if (m->o.manifest != NULL)
		snprintf(path, sizeof(path), "%s", m->o.manifest);
	else
		snprintf(path, sizeof(path), "%s/manifest.json", m->o.out);
	j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:f, s:[], s:[],"
		      " s:[]}",
	    "seed", (json_int_t)m->o.seed, "start_ns",
	    (json_int_t)m->o.start_ns, "end_ns",
	    (json_int_t)(m->o.start_ns + m->nepochs * m->o.epoch_ns),
	    "epoch_ns", (json_int_t)m->o.epoch_ns, "epochs",
	    (json_int_t)m->nepochs, "rate", (json_int_t)m->o.rate, "labels",
	    (int)m->o.labels, "zipf", m->o.zipf, "hosts", "vitals",
	    "anomalies");
	if (j == NULL)
		return -ENOMEM;
	hosts = json_object_get(j, "hosts");
	vitals = json_object_get(j, "vitals");
	an = json_object_get(j, "anomalies");
	for (k = 0; k < m->o.nhosts; k++)
		json_array_append_new(hosts, json_string(m->o.hosts[k]));
	for (k = 0; k < m->o.nvitals; k++)
		json_array_append_new(vitals, json_string(m->o.vitals[k]));
	for (k = 0; k < (uint32_t)m->nan; k++)
		json_array_append_new(an, mk_anomaly_json(m, &m->an[k]));
	r = json_dump_file(j, path, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	if (r != 0)
		fprintf(stderr, "mkstore: cannot write %s\n", path);
	json_decref(j);
	return r;
}

/* ---- setup ---- */

/*
 * The first label from `from` on (in steps of 0x100) of exe x whose HCA
 * slot no regular label shares, so that an injected label stands alone
 * in its counter and its samples name it.
 */
static uint64_t
mk_free_label(const struct mk *m, uint64_t from, const struct mk_exe *x)
{
	uint32_t mask = m->cfg->sketch.hca_size - 1, r, slot;
	uint64_t label;

	for (label = from;; label += 0x100) {
		slot = (uint32_t)(vitals_label_hash(label, x->id, 1000) & mask);
		for (r = 0; r < m->o.labels; r++)
			if ((vitals_label_hash(
				 MK_UBASE + (uint64_t)(r + 1) * 0x100,
				 m->exes[r % MK_EXES].id, 1000) &
				mask) == slot)
				break;
		if (r == m->o.labels || label - from > 0x100 * 4096ull)
			return label;
	}
}

static void
mk_exe(struct mk_exe *x, const char *path)
{
	const char *base = strrchr(path, '/');

	snprintf(x->path, sizeof(x->path), "%s", path);
	snprintf(x->comm, sizeof(x->comm), "%.15s", base ? base + 1 : path);
	x->id = mk_fnv(path);
}

static int
mk_setup(struct mk *m)
{
	char path[32];
	double sum = 0;
	uint32_t i;

	if ((m->cdf = calloc(m->o.labels, sizeof(*m->cdf))) == NULL ||
	    (m->cfg = config_default()) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->o.labels; i++)
		m->cdf[i] = sum += pow((double)i + 1, -m->o.zipf);
	for (i = 0; i < m->o.labels; i++)
		m->cdf[i] /= sum;
	m->cdf[m->o.labels - 1] = 1.0;
	for (i = 0; i < MK_EXES; i++) {
		snprintf(path, sizeof(path), "/usr/bin/synth-%u", i);
		mk_exe(&m->exes[i], path);
	}
	mk_exe(&m->rogue, MK_ROGUE_EXE);
	m->rogue_label = mk_free_label(m, MK_ROGUE_LABEL, &m->rogue);
	m->new_label = mk_free_label(m, MK_NEW_LABEL, &m->exes[MK_NEW_EXE]);
	m->cfg->epoch_ns = m->o.epoch_ns;
	m->cfg->sketch.max_samples = m->o.max_samples;
	m->cfg->sketch.stack_depth = 4;
	m->nepochs = m->o.span_ns / m->o.epoch_ns;
	if (m->o.start_ns == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		m->o.start_ns = ((uint64_t)ts.tv_sec * MK_NS) / m->o.epoch_ns *
			m->o.epoch_ns -
		    m->nepochs * m->o.epoch_ns;
	}
	m->o.start_ns -= m->o.start_ns % m->o.epoch_ns;
	mk_plan(m);
	return 0;
}

static void
mk_usage(FILE *f)
{
	fprintf(f,
	    "usage: mkstore --out DIR [--days N | --span DURATION] [--epoch "
	    "60s]\n"
	    "               [--hosts N | --host NAME,...] [--start "
	    "UNIXSECONDS]\n"
	    "               [--vitals cpu,sched,diskio] [--rate R] [--labels "
	    "N]\n"
	    "               [--zipf S] [--seed S] [--max-samples N] [--clean]\n"
	    "               [--manifest FILE] [--quiet]\n"
	    "\n"
	    "Writes simulated epochs (default 1 day of 60s epochs, one host\n"
	    "'node-1', cpu/sched/diskio at 200 events/s each over 200 Zipf\n"
	    "labels) ending at the last epoch boundary before now, with a cpu\n"
	    "burst of a rogue exe, a rate x8, a new dominating label and a\n"
	    "vanishing exe on the first host (none with --clean), and\n"
	    "DIR/manifest.json saying where they are.\n");
}

/* Split a comma list into v (strdup'd), at most max items. */
static int
mk_list(const char *s, char **v, uint32_t *n, uint32_t max)
{
	char *copy = strdup(s), *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && *n < max;
	     tok = strtok_r(NULL, ",", &save))
		v[(*n)++] = strdup(tok);
	free(copy);
	return *n > 0 ? 0 : -EINVAL;
}

static int
mk_number(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || !(*out >= min && *out <= max)) {
		fprintf(stderr,
		    "mkstore: %s: expected a number from %g to %g, "
		    "got \"%s\"\n",
		    opt, min, max, s);
		return -EINVAL;
	}
	return 0;
}

static int
mk_duration(const char *opt, const char *s, uint64_t *out)
{
	if (option_parse_duration(s, out) != 0 || *out == 0) {
		fprintf(stderr,
		    "mkstore: %s: expected a duration, got \"%s\"\n", opt, s);
		return -EINVAL;
	}
	return 0;
}

static int
mk_opt(struct mk_opts *o, int c, const char *arg)
{
	char name[32];
	double d;

	switch (c) {
	case 'o':
		o->out = arg;
		return 0;
	case 'm':
		o->manifest = arg;
		return 0;
	case 'C':
		o->clean = 1;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case 'd':
		if (mk_number("--days", arg, 0.0001, 3650, &d) != 0)
			return -EINVAL;
		o->span_ns = (uint64_t)(d * 86400.0 * (double)MK_NS);
		return 0;
	case 'S':
		return mk_duration("--span", arg, &o->span_ns);
	case 'e':
		return mk_duration("--epoch", arg, &o->epoch_ns);
	case 'H':
		if (mk_number("--hosts", arg, 1, MK_MAX_HOSTS, &d) != 0)
			return -EINVAL;
		for (o->nhosts = 0; o->nhosts < (uint32_t)d; o->nhosts++) {
			snprintf(name, sizeof(name), "node-%u", o->nhosts + 1);
			o->hosts[o->nhosts] = strdup(name);
		}
		return 0;
	case 'h':
		return mk_list(arg, o->hosts, &o->nhosts, MK_MAX_HOSTS);
	case 'v':
		return mk_list(arg, o->vitals, &o->nvitals, MK_MAX_VITALS);
	case 't':
		if (mk_number("--start", arg, 1, 4e9, &d) != 0)
			return -EINVAL;
		o->start_ns = (uint64_t)d * MK_NS;
		return 0;
	case 's':
		if (mk_number("--seed", arg, 0, 1e18, &d) != 0)
			return -EINVAL;
		o->seed = (uint64_t)d;
		return 0;
	case 'r':
		if (mk_number("--rate", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->rate = (uint64_t)d;
		return 0;
	case 'l':
		if (mk_number("--labels", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->labels = (uint32_t)d;
		return 0;
	case 'z':
		return mk_number("--zipf", arg, 0, 4, &o->zipf);
	case 'M':
		if (mk_number("--max-samples", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->max_samples = (uint32_t)d;
		return 0;
	}
	mk_usage(stderr);
	return -EINVAL;
}

static int
mk_args(int argc, char **argv, struct mk_opts *o)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "days", required_argument, NULL, 'd' },
		{ "span", required_argument, NULL, 'S' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "host", required_argument, NULL, 'h' },
		{ "vitals", required_argument, NULL, 'v' },
		{ "start", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "labels", required_argument, NULL, 'l' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "max-samples", required_argument, NULL, 'M' },
		{ "clean", no_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, '?' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1)
		if (mk_opt(o, c, optarg) != 0)
			return 2;
	if (o->out == NULL || optind != argc) {
		mk_usage(stderr);
		return 2;
	}
	if (o->nhosts == 0)
		o->hosts[o->nhosts++] = strdup("node-1");
	if (o->nvitals == 0)
		mk_list(
		    "cpu,sched,diskio", o->vitals, &o->nvitals, MK_MAX_VITALS);
	if (o->span_ns < o->epoch_ns) {
		fprintf(
		    stderr, "mkstore: the span is shorter than one epoch\n");
		return 2;
	}
	return 0;
}

/* Write the store and its manifest; exit 0, 1 (failure) or 2 (usage). */
int
main(int argc, char **argv)
{
	struct mk m;
	char err[1024];
	uint32_t h;
	int r;

	memset(&m, 0, sizeof(m));
	m.o.span_ns = 86400 * MK_NS;
	m.o.epoch_ns = 60 * MK_NS;
	m.o.seed = 1;
	m.o.rate = 200;
	m.o.labels = 200;
	m.o.zipf = 1.0;
	m.o.max_samples = 128;
	if ((r = mk_args(argc, argv, &m.o)) != 0)
		return r;
	if (vitals_store_prepare(m.o.out, err, sizeof(err)) != 0) {
		fprintf(stderr, "mkstore: %s\n", err);
		return 1;
	}
	if (mk_setup(&m) != 0) {
		fprintf(stderr, "mkstore: out of memory\n");
		return 1;
	}
	for (h = 0, r = 0; h < m.o.nhosts && r == 0; h++)
		r = mk_host(&m, h);
	if (r == 0)
		r = mk_manifest(&m);
	if (r == 0 && !m.o.quiet)
		fprintf(stderr, "mkstore: %llu epochs x %u hosts under %s\n",
		    (unsigned long long)m.nepochs, m.o.nhosts, m.o.out);
	config_free(m.cfg);
	free(m.cdf);
	for (h = 0; h < m.o.nhosts; h++)
		free(m.o.hosts[h]);
	for (h = 0; h < m.o.nvitals; h++)
		free(m.o.vitals[h]);
	return r == 0 ? 0 : 1;
}
