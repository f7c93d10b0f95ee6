/* SPDX-License-Identifier: MIT */
/*
 * synthetic: a seeded, deterministic generator of events, the ground truth
 * for tests, the demo without root and the input of benchmarks.  Labels are
 * drawn from a Zipf law; a timer emits rate*tick events per vital, and a rate
 * burst or a rogue label can be injected at a chosen epoch.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/hash.h>
#include <vitals/vitals.h>

#define SYNTHETIC_NS 1000000000ULL
#define SYNTHETIC_KBASE 0xffffffff81000000ULL /* fake kernel text */
#define SYNTHETIC_UBASE 0x400000ULL /* fake user text */
#define SYNTHETIC_TICK_MIN 1000000ULL /* 1ms */
#define SYNTHETIC_TICK_MAX (60 * SYNTHETIC_NS)
#define SYNTHETIC_ROGUE "synth-rogue" /* exe /usr/bin/synth-rogue */

struct synthetic_config {
	struct vitals_strlist vitals; /* vitals to generate */
	int64_t rate; /* events per second per vital */
	int64_t labels; /* label population per vital */
	double zipf; /* Zipf exponent s */
	int64_t weight; /* mean weight */
	int64_t exes; /* distinct fake executables */
	int64_t stack_depth; /* frames per event, kernel + user */
	int64_t seed; /* PRNG seed */
	uint64_t tick; /* timer interval, ns */
	int64_t burst_epoch; /* first anomalous epoch, -1 = none */
	int64_t burst_epochs; /* epochs the anomaly lasts */
	char *burst_vital; /* vital of the anomaly, NULL = first */
	double burst_factor; /* rate multiplier */
	int64_t burst_label; /* rogue label value, -1 = rate burst */
};

#define SYNTHETIC_OFF(m) offsetof(struct synthetic_config, m)

/*
 * INT and DOUBLE bounds are checked again in init (the table is the one
 * truth); DURATION bounds are in seconds, as core/runtime/option.c reads them.
 */
/* clang-format off */
static const struct vitals_option synthetic_options[] = {
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = SYNTHETIC_OFF(vitals), .def = "cpu,sched,diskio",
	    .help = "vitals to generate" },
	{ .key = "rate", .type = VITALS_OPT_INT, .offset = SYNTHETIC_OFF(rate),
	    .def = "2000", .help = "events per second per vital",
	    .min = 0, .max = 1e7 },
	{ .key = "labels", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(labels), .def = "500",
	    .help = "distinct labels per vital", .min = 1, .max = 1e6 },
	{ .key = "zipf", .type = VITALS_OPT_DOUBLE,
	    .offset = SYNTHETIC_OFF(zipf), .def = "1.0",
	    .help = "Zipf exponent: rank r is drawn with weight 1/r^s",
	    .min = 0, .max = 4 },
	{ .key = "weight", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(weight), .def = "1",
	    .help = "mean event weight (uniform in 1..2*mean-1)",
	    .min = 1, .max = 1e12 },
	{ .key = "exes", .type = VITALS_OPT_INT, .offset = SYNTHETIC_OFF(exes),
	    .def = "8", .help = "distinct fake executables",
	    .min = 1, .max = 65536 },
	{ .key = "stack_depth", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(stack_depth), .def = "6",
	    .help = "fake frames per event (half kernel, half user)",
	    .min = 0, .max = 2 * VITALS_STACK_MAX },
	{ .key = "seed", .type = VITALS_OPT_INT, .offset = SYNTHETIC_OFF(seed),
	    .def = "1", .help = "seed of the generator" },
	{ .key = "tick", .type = VITALS_OPT_DURATION,
	    .offset = SYNTHETIC_OFF(tick), .def = "10ms",
	    .help = "timer interval", .min = 0.001, .max = 60 },
	{ .key = "burst_epoch", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(burst_epoch), .def = "-1",
	    .help = "0-based epoch where the anomaly starts, -1 = none",
	    .min = -1, .max = 9.2e18 },
	{ .key = "burst_epochs", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(burst_epochs), .def = "1",
	    .help = "epochs the anomaly lasts", .min = 1, .max = 9.2e18 },
	{ .key = "burst_vital", .type = VITALS_OPT_STRING,
	    .offset = SYNTHETIC_OFF(burst_vital), .def = NULL,
	    .help = "vital of the anomaly (default: the first)" },
	{ .key = "burst_factor", .type = VITALS_OPT_DOUBLE,
	    .offset = SYNTHETIC_OFF(burst_factor), .def = "10",
	    .help = "rate multiplier, or rogue/top label event ratio",
	    .min = 0, .max = 1000 },
	{ .key = "burst_label", .type = VITALS_OPT_INT,
	    .offset = SYNTHETIC_OFF(burst_label), .def = "-1",
	    .help = "if >= 0, inject a rogue label with this value instead",
	    .min = -1, .max = 9.2e18 },
	{ .key = NULL }
};
/* clang-format on */

struct synthetic_exe {
	char path[32];
	char comm[VITALS_COMM_LEN];
	uint32_t id; /* FNV-1a of path */
	uint32_t pid;
};

struct synthetic_vital {
	struct vitals_vital *v;
	uint64_t rng; /* this vital's own stream */
	uint64_t carry; /* rate*tick remainder, events*ns */
};

struct synthetic {
	struct vitals_ctx *ctx;
	const struct synthetic_config *cf;
	uint32_t nvitals;
	uint32_t burst; /* index of the burst vital */
	struct synthetic_vital *vitals;
	double *cdf; /* labels entries, last one 1.0 */
	struct synthetic_exe *exes;
	struct synthetic_exe rogue;
	uint64_t rogue_rng;
	double rogue_carry; /* fraction of a rogue event owed */
	uint64_t epoch; /* flush() calls so far */
	uint64_t clock_ns; /* CLOCK_MONOTONIC time the ticks so far stand for */
	struct vitals_timer *timer;
};

/* splitmix64 (Steele, Lea, Flood), whose mixer <vitals/hash.h> has. */
static uint64_t
synthetic_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return vitals_hash_mix64(*state);
}

/* Uniform in [0, 1). */
static double
synthetic_uniform(uint64_t *state)
{
	return (double)(synthetic_next(state) >> 11) * 0x1.0p-53;
}

static uint32_t
synthetic_fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Label address of 0-based rank index i. */
static uint64_t
synthetic_label(uint32_t i)
{
	return SYNTHETIC_UBASE + (uint64_t)(i + 1) * 0x100;
}

/* 0-based rank index: first CDF entry above a uniform draw. */
static uint32_t
synthetic_rank(const struct synthetic *st, uint64_t *rng)
{
	double u = synthetic_uniform(rng);
	uint32_t lo = 0, hi = (uint32_t)st->cf->labels - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static uint64_t
synthetic_weight(const struct synthetic *st, uint64_t *rng)
{
	uint64_t mean = (uint64_t)st->cf->weight;

	if (mean <= 1)
		return 1;
	return 1 + synthetic_next(rng) % (2 * mean - 1);
}

/* Frames depend on the label only, so each label has one stack. */
static void
synthetic_stack(
    uint64_t label, uint32_t nk, uint32_t nu, uint64_t *k, uint64_t *u)
{
	uint32_t j;

	for (j = 0; j < nk; j++)
		k[j] = SYNTHETIC_KBASE +
		    (vitals_hash_mix64(label * 257 + j) & 0xfffff0);
	for (j = 0; j < nu; j++)
		u[j] = SYNTHETIC_UBASE +
		    (vitals_hash_mix64(~label * 263 + j) & 0xffff0);
	if (nu > 0)
		u[0] = label + 0x10; /* innermost: inside the label's block */
}

static void
synthetic_emit(const struct synthetic *st, struct vitals_vital *v,
    uint64_t label, const struct synthetic_exe *x, uint64_t *rng)
{
	uint64_t kstack[VITALS_STACK_MAX], ustack[VITALS_STACK_MAX];
	struct vitals_event ev = { 0 };

	ev.label = label;
	ev.weight = synthetic_weight(st, rng);
	ev.exe_id = x->id;
	ev.uid = 1000;
	ev.pid = ev.tid = x->pid;
	ev.nkstack = (uint32_t)st->cf->stack_depth / 2;
	ev.nustack = (uint32_t)st->cf->stack_depth - ev.nkstack;
	synthetic_stack(label, ev.nkstack, ev.nustack, kstack, ustack);
	ev.kstack = ev.nkstack > 0 ? kstack : NULL;
	ev.ustack = ev.nustack > 0 ? ustack : NULL;
	ev.exe = x->path;
	ev.comm = x->comm;
	ev.args[0] = ev.weight;
	vitals_emit(v, &ev);
}

static int
synthetic_bursting(const struct synthetic *st)
{
	const struct synthetic_config *cf = st->cf;

	return cf->burst_epoch >= 0 && st->epoch >= (uint64_t)cf->burst_epoch &&
	    st->epoch - (uint64_t)cf->burst_epoch < (uint64_t)cf->burst_epochs;
}

/* Events due this tick at `rate`/s; the remainder carries, so no drift. */
static uint64_t
synthetic_due(uint64_t rate, uint64_t tick, uint64_t *carry)
{
	uint64_t part = rate * (tick % SYNTHETIC_NS) + *carry;

	*carry = part % SYNTHETIC_NS;
	return rate * (tick / SYNTHETIC_NS) + part / SYNTHETIC_NS;
}

/* The rogue label gets burst_factor times the top label's expected events. */
static void
synthetic_rogue(struct synthetic *st, uint64_t due)
{
	uint64_t n;

	st->rogue_carry += st->cf->burst_factor * (double)due * st->cdf[0];
	n = (uint64_t)st->rogue_carry;
	st->rogue_carry -= (double)n;
	while (n-- > 0)
		synthetic_emit(st, st->vitals[st->burst].v,
		    (uint64_t)st->cf->burst_label, &st->rogue, &st->rogue_rng);
}

/*
 * Ticks this call stands for: the loop may run a timer late (an epoch
 * being written), and the missed ticks are made up so the rate holds in
 * wall-clock time.  At least one, at most a second's worth.
 */
static uint64_t
synthetic_ticks(struct synthetic *st)
{
	uint64_t now, n, tick = st->cf->tick;

	now = vitals_monotonic_ns(st->ctx);
	if (st->clock_ns == 0 || now < st->clock_ns)
		st->clock_ns = now - tick;
	n = (now - st->clock_ns) / tick;
	if (n == 0)
		n = 1;
	if (n > SYNTHETIC_NS / tick + 1)
		n = SYNTHETIC_NS / tick + 1;
	st->clock_ns += n * tick;
	if (st->clock_ns < now - SYNTHETIC_NS)
		st->clock_ns = now; /* stalled for long: do not replay it */
	return n;
}

static void
synthetic_tick(void *arg)
{
	struct synthetic *st = arg;
	const struct synthetic_config *cf = st->cf;
	struct synthetic_vital *sv;
	uint64_t rate, due, n, ticks = synthetic_ticks(st);
	uint32_t i, r;
	int burst = synthetic_bursting(st);

	for (i = 0; i < st->nvitals; i++) {
		sv = &st->vitals[i];
		rate = (uint64_t)cf->rate;
		if (burst && i == st->burst && cf->burst_label < 0)
			rate =
			    (uint64_t)llround((double)rate * cf->burst_factor);
		due = n = synthetic_due(rate, cf->tick * ticks, &sv->carry);
		while (n-- > 0) {
			r = synthetic_rank(st, &sv->rng);
			synthetic_emit(st, sv->v, synthetic_label(r),
			    &st->exes[r % cf->exes], &sv->rng);
		}
		if (burst && i == st->burst && cf->burst_label >= 0)
			synthetic_rogue(st, due);
	}
}

static int
synthetic_flush(void *state)
{
	struct synthetic *st = state;

	st->epoch++;
	return 0;
}

static const char *
synthetic_unit(const char *vital)
{
	static const char *const units[][2] = {
		{ "cpu", "samples" },
		{ "sched", "ns" },
		{ "blocking", "ns" },
		{ "lock", "ns" },
		{ "diskio", "bytes" },
		{ "socket", "bytes" },
		{ "kmem", "pages" },
		{ "umem", "pages" },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(units[i][0], vital) == 0)
			return units[i][1];
	return "events";
}

/* INT and DOUBLE options against the bounds of the table. */
static int
synthetic_check_bounds(const struct synthetic_config *cf, char *why, size_t len)
{
	const struct vitals_option *o;
	const char *p;
	double x;

	for (o = synthetic_options; o->key != NULL; o++) {
		p = (const char *)cf + o->offset;
		if (o->min >= o->max)
			continue;
		if (o->type == VITALS_OPT_INT)
			x = (double)*(const int64_t *)(const void *)p;
		else if (o->type == VITALS_OPT_DOUBLE)
			x = *(const double *)(const void *)p;
		else
			continue;
		if (!(x >= o->min && x <= o->max)) {
			snprintf(why, len,
			    "option '%s' = %g is outside [%g, %g]", o->key, x,
			    o->min, o->max);
			return -EINVAL;
		}
	}
	return 0;
}

/* Index of vital `name` in the list, or -1. */
static int
synthetic_find(const struct vitals_strlist *l, const char *name, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return (int)i;
	return -1;
}

/* Bounds, a tick, every vital named once, the burst's among them. */
static int
synthetic_check(const void *config, char *why, size_t len)
{
	const struct synthetic_config *cf = config;
	const struct vitals_strlist *l = &cf->vitals;
	uint32_t i;

	if (synthetic_check_bounds(cf, why, len) != 0)
		return -EINVAL;
	if (cf->tick < SYNTHETIC_TICK_MIN || cf->tick > SYNTHETIC_TICK_MAX) {
		snprintf(why, len, "option 'tick' must be between 1ms and 60s");
		return -EINVAL;
	}
	if (l->n == 0) {
		snprintf(why, len, "option 'vitals' names no vital");
		return -EINVAL;
	}
	for (i = 0; i < l->n; i++) {
		if (l->v[i][0] == '\0' || synthetic_find(l, l->v[i], i) >= 0) {
			snprintf(why, len,
			    "option 'vitals': vital '%s' is "
			    "empty or repeated",
			    l->v[i]);
			return -EINVAL;
		}
	}
	if (cf->burst_vital != NULL &&
	    synthetic_find(l, cf->burst_vital, l->n) < 0) {
		snprintf(why, len,
		    "option 'burst_vital': '%s' is not one of "
		    "the generated vitals",
		    cf->burst_vital);
		return -EINVAL;
	}
	return 0;
}

/* cdf[i] = P(rank <= i+1) with P(r) proportional to 1/r^s. */
static double *
synthetic_cdf(uint32_t n, double s)
{
	double *cdf, sum = 0;
	uint32_t i;

	if ((cdf = calloc(n, sizeof(*cdf))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		cdf[i] = sum += pow((double)i + 1, -s);
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	cdf[n - 1] = 1.0;
	return cdf;
}

static void
synthetic_exe(struct synthetic_exe *x, const char *name, uint32_t pid)
{
	snprintf(x->path, sizeof(x->path), "/usr/bin/%.15s", name);
	snprintf(x->comm, sizeof(x->comm), "%.15s", name);
	x->id = synthetic_fnv(x->path);
	x->pid = pid;
}

static int
synthetic_exes(struct synthetic *st)
{
	char name[32];
	uint32_t i, n = (uint32_t)st->cf->exes;

	if ((st->exes = calloc(n, sizeof(*st->exes))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "synth-%u", i);
		synthetic_exe(&st->exes[i], name, 1000 + i);
	}
	synthetic_exe(&st->rogue, SYNTHETIC_ROGUE, 999);
	return 0;
}

static int
synthetic_open(struct synthetic *st)
{
	const struct vitals_strlist *l = &st->cf->vitals;
	uint64_t seed = (uint64_t)st->cf->seed;
	uint32_t i;
	int rc;

	st->vitals = calloc(l->n, sizeof(*st->vitals));
	if (st->vitals == NULL)
		return -ENOMEM;
	st->nvitals = l->n;
	for (i = 0; i < l->n; i++) {
		/* Seeded by name, so adding a vital leaves the others alone. */
		st->vitals[i].rng =
		    vitals_hash_mix64(seed ^ synthetic_fnv(l->v[i]));
		rc = vitals_vital_open(st->ctx, l->v[i],
		    synthetic_unit(l->v[i]), &st->vitals[i].v);
		if (rc != 0) {
			vitals_error(
			    st->ctx, "cannot open vital '%s'", l->v[i]);
			return rc;
		}
	}
	st->rogue_rng =
	    vitals_hash_mix64(seed ^ synthetic_fnv(SYNTHETIC_ROGUE));
	return 0;
}

static void
synthetic_fini(void *state)
{
	struct synthetic *st = state;

	/* The timer is the core's: it frees it when the instance ends. */
	if (st == NULL)
		return;
	free(st->vitals);
	free(st->cdf);
	free(st->exes);
	free(st);
}

static int
synthetic_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct synthetic_config *cf = config;
	struct synthetic *st;
	int rc;

	if ((rc = vitals_init_check(ctx, synthetic_check, config)) != 0)
		return rc;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -ENOMEM;
	st->ctx = ctx;
	st->cf = cf;
	if (cf->burst_vital != NULL)
		st->burst = (uint32_t)synthetic_find(
		    &cf->vitals, cf->burst_vital, cf->vitals.n);
	rc = -ENOMEM;
	st->cdf = synthetic_cdf((uint32_t)cf->labels, cf->zipf);
	if (st->cdf == NULL || synthetic_exes(st) != 0)
		goto fail;
	if ((rc = synthetic_open(st)) != 0)
		goto fail;
	rc = vitals_timer_add(ctx, cf->tick, synthetic_tick, st, &st->timer);
	if (rc != 0)
		goto fail;
	*state = st;
	return 0;
fail:
	synthetic_fini(st);
	return rc;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct synthetic_config),
	.name = "synthetic",
	.version = "0.1.0",
	.description = "deterministic seeded event generator (tests, demo)",
	.options = synthetic_options,
	.available = NULL,
	.init = synthetic_init,
	.fini = synthetic_fini,
	.flush = synthetic_flush,
	.epoch = NULL,
	.write = NULL,
	.check = synthetic_check,
};
