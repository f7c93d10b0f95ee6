/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/store/codec_text.c: the writer gives the bytes the
 * jansson tree writer it replaced gave (fixtures), the reader the epoch
 * jansson and codec_epoch_from_json give or declines, and codec_epoch_parse
 * answers mutated and broken documents exactly as they do; the compact
 * form reads back as format 1 does, and old files roll up with new ones.
 */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>
#include <zlib.h>

#include "codec.h"
#include "epoch_json.h"
#include "testutil.h"

#define NS 1000000000ull
/* Random epochs in the fixtures. */
#define NRANDOM 64

/* ---- random epochs ---- */

static uint64_t rnd_state;

static uint64_t
rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A number of the kinds the files hold: small, huge, >= 2^63. */
static uint64_t
rnd_u64(void)
{
	switch (rnd() % 4) {
	case 0:
		return rnd() % 10;
	case 1:
		return rnd() % 100000;
	case 2:
		return rnd() | (1ull << 63);
	default:
		return rnd();
	}
}

static double
rnd_double(void)
{
	static const double special[] = { 0.0, -0.0, 1.0, 0.1, 1e-5, 1e20,
		1.5e300, 5e-324, -2.5e-7, 123456789012345678.0, 1e100, 0.5,
		100.0, 1e17, 1e16, NAN, INFINITY };

	if (rnd() % 2)
		return special[rnd() % (sizeof(special) / sizeof(*special))];
	return (double)(int64_t)rnd() / (double)(rnd() % 1000000 + 1);
}

static const char *const strs[] = { "", "/usr/bin/ssh", "a\"b\\c/d",
	"tab\there\nnew\rline\bback\fform", "ctl\001\037end", "kworker/0:1",
	"x" };

static const char *
rnd_str(int nullable)
{
	if (nullable && rnd() % 4 == 0)
		return NULL;
	return strs[rnd() % (sizeof(strs) / sizeof(*strs))];
}

static void
rnd_sample(struct vitals_epoch *e, struct vitals_sample *s, uint32_t m)
{
	uint64_t *st;
	const char **names;
	uint32_t i, n;

	s->ts_ns = rnd_u64();
	s->label = rnd_u64();
	s->weight = rnd_u64();
	s->count = rnd_u64();
	s->slot = m ? (uint32_t)(rnd() % m) : (uint32_t)rnd();
	s->exe_id = (uint32_t)rnd();
	s->uid = (uint32_t)rnd();
	s->pid = (uint32_t)rnd();
	s->tid = (uint32_t)rnd();
	s->op = (uint32_t)rnd();
	s->exe = rnd_str(0);
	s->comm = rnd_str(0);
	for (i = 0; i < VITALS_NARGS; i++)
		s->args[i] = rnd_u64();
	s->nkstack = (uint32_t)(rnd() % 4 == 0 ? 0 : rnd() % VITALS_STACK_MAX);
	s->nustack = (uint32_t)(rnd() % 3 == 0 ? 0 : rnd() % 8);
	n = s->nkstack + s->nustack;
	st = epoch_alloc(e, (n + 1) * sizeof(*st));
	for (i = 0; i < n; i++)
		st[i] = rnd_u64();
	s->kstack = s->nkstack ? st : NULL;
	s->ustack = s->nustack ? st + s->nkstack : NULL;
	if (rnd() % 2 == 0)
		return;
	names = epoch_alloc(e, (n + 1) * sizeof(*names));
	for (i = 0; i < n; i++)
		names[i] = rnd_str(0);
	s->ksyms = names;
}

static void
rnd_vital(struct vitals_epoch *e, struct vitals_vital_epoch *v, uint32_t k)
{
	static const char *const names[] = { "cpu", "sched", "diskio", "kmem",
		"lock", "syscall" };
	struct vitals_sample *s;
	uint64_t *hca;
	uint32_t i;

	v->name = names[k];
	v->unit = rnd_str(0);
	v->threshold = rnd_u64();
	v->floor = rnd_u64();
	v->events = rnd_u64();
	v->wsum = rnd_u64();
	v->unique = rnd_u64();
	v->dropped = rnd_u64();
	v->samples_dropped = rnd_u64();
	v->hca_size = rnd() % 5 == 0 ? 0 : 32u << (rnd() % 4);
	if (v->hca_size > 0) {
		hca = epoch_alloc(e, v->hca_size * sizeof(*hca));
		for (i = 0; i < v->hca_size; i++)
			hca[i] = rnd() % 3 == 0 ? rnd_u64() : 0;
		v->hca = hca;
	}
	v->nsamples = (uint32_t)(rnd() % 12);
	s = epoch_alloc(e, (v->nsamples + 1) * sizeof(*s));
	for (i = 0; i < v->nsamples; i++)
		rnd_sample(e, &s[i], v->hca_size);
	v->samples = v->nsamples ? s : NULL;
}

static void
rnd_findings(struct vitals_epoch *e)
{
	struct vitals_finding *f;
	uint32_t i;

	e->nfindings = (uint32_t)(rnd() % 4);
	f = epoch_alloc(e, (e->nfindings + 1) * sizeof(*f));
	for (i = 0; i < e->nfindings; i++) {
		f[i].start_ns = rnd_u64();
		f[i].end_ns = rnd_u64();
		f[i].timescale_s = (uint32_t)rnd();
		f[i].severity = (uint32_t)(rnd() % 4);
		f[i].score = rnd_double();
		f[i].value = rnd_double();
		f[i].expected = rnd_double();
		f[i].filter = rnd_str(0);
		f[i].vital = rnd_str(1);
		f[i].label = rnd_str(1);
		f[i].text = rnd_str(0);
	}
	e->findings = e->nfindings ? f : NULL;
}

static void
rnd_metrics(struct vitals_epoch *e)
{
	static const char *const names[] = { "a", "proc.cpu.idle_pct",
		"proc.mem.free", "z_last" };
	struct vitals_metric *m;
	uint32_t i, n = 0;

	m = epoch_alloc(e, 5 * sizeof(*m));
	for (i = 0; i < 4; i++) {
		if (rnd() % 2)
			continue;
		m[n].name = names[i];
		m[n].unit = rnd_str(0);
		m[n].mean = rnd_double();
		m[n].min = rnd_double();
		m[n].max = rnd_double();
		m[n].last = rnd_double();
		m[n].n = rnd_u64() | 1;
		n++;
	}
	e->metrics = n ? m : NULL;
	e->nmetrics = n;
}

/* Up to three modules, ids ascending with gaps, as the engine writes them. */
static void
rnd_modules(struct vitals_epoch *e)
{
	struct vitals_module *m;
	uint32_t i, n = (uint32_t)(rnd() % 4), id = 0;

	m = epoch_alloc(e, 4 * sizeof(*m));
	for (i = 0; i < n; i++) {
		id += 1 + (uint32_t)(rnd() % 1000);
		m[i].id = id;
		m[i].path = rnd_str(0);
		m[i].build_id = rnd() % 2 ? "0123456789abcdef" : "";
	}
	e->modules = n ? m : NULL;
	e->nmodules = n;
}

/* A random epoch (in an arena: free with vitals_epoch_free). */
static struct vitals_epoch *
rnd_epoch(uint64_t seed)
{
	struct vitals_epoch *e = epoch_new();
	struct vitals_vital_epoch *v;
	uint32_t i;

	rnd_state = seed * 2654435761u + 1;
	e->host = rnd_str(0);
	e->start_ns = rnd_u64();
	e->length_ns = rnd_u64();
	e->timescale_s = (uint32_t)rnd();
	e->partial = (uint32_t)(rnd() % 2);
	e->seq = rnd_u64();
	e->dropped = rnd_u64();
	e->cpu_ns = rnd_u64();
	e->nvitals = (uint32_t)(rnd() % 7);
	v = epoch_alloc(e, (e->nvitals + 1) * sizeof(*v));
	for (i = 0; i < e->nvitals; i++)
		rnd_vital(e, &v[i], i);
	e->vitals = e->nvitals ? v : NULL;
	rnd_findings(e);
	rnd_metrics(e);
	rnd_modules(e);
	return e;
}

/* ---- epochs of every shape the writers meet ---- */

/*
 * Strings of every kind a comm, an exe path or a symbol may hold: escapes,
 * valid UTF-8, and byte runs that are not UTF-8 (which jansson refuses and
 * the writer turns into '?').
 */
static const char *const shape_strs[] = { "", "plain", "a\"b\\c/d",
	"tab\there\nnew\rline\bback\fform", "ctl\001\037\177end", "caf\xc3\xa9",
	"\xe2\x82\xac euro", "\xf0\x9f\x98\x80 smile", "\xef\xbf\xbf",
	"\xf4\x8f\xbf\xbf", "lone \x80", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x80\x80\x80",
	"\xf5\x80\x80\x80", "cut \xe2\x82", "\xe2\x82(", "\xff\xfe",
	"ok\xc3\xa9 then \xff", "\xc3\xa9\xe2" };
#define NSHAPE_STRS (sizeof(shape_strs) / sizeof(*shape_strs))

static const double shape_reals[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1e-5, 1e20,
	1e21, 1.5e300, 5e-324, -2.5e-7, 1e100, 1e-100, 123456.5, 1.0 / 3, 2e15,
	1e16, 1e17, 4.35e-07, NAN, INFINITY, -INFINITY, DBL_MAX, DBL_MIN };
#define NSHAPE_REALS (sizeof(shape_reals) / sizeof(*shape_reals))

/* Zeroed n * size bytes in e's arena. */
static void *
shape_alloc(struct vitals_epoch *e, size_t n, size_t size)
{
	void *p = epoch_alloc(e, n * size + 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* A sample with stacks of nk and nu frames, named when names. */
static void
shape_sample(struct vitals_epoch *e, struct vitals_sample *s, uint32_t nk,
    uint32_t nu, int names, const char *str)
{
	uint64_t *st = shape_alloc(e, nk + nu, sizeof(*st));
	const char **sy = shape_alloc(e, nk + nu, sizeof(*sy));
	uint32_t i;

	for (i = 0; i < nk + nu; i++) {
		st[i] = i < nk ? 0xffffffff81000000ull + i : 0x400000 + i;
		sy[i] = i % 3 == 2 ? NULL : str;
	}
	s->ts_ns = 1700000000123456789ull;
	s->label = 0x8000000000000001ull;
	s->weight = UINT64_MAX;
	s->count = 7;
	s->slot = UINT32_MAX;
	s->exe_id = s->uid = s->pid = s->tid = s->op = 1u << 31;
	s->nkstack = nk;
	s->nustack = nu;
	s->kstack = nk ? st : NULL;
	s->ustack = nu ? st + nk : NULL;
	s->ksyms = names ? sy : NULL;
	s->exe = str;
	s->comm = str;
	for (i = 0; i < VITALS_NARGS; i++)
		s->args[i] = (uint64_t)-1 - i;
}

/* Vitals: HCAs absent, empty, sparse and large; samples of every kind. */
static void
shape_vitals(struct vitals_epoch *e)
{
	struct vitals_vital_epoch *v = shape_alloc(e, 4, sizeof(*v));
	struct vitals_sample *s;
	uint64_t *hca;
	uint32_t i;

	v[0].name = "cpu";
	v[0].unit = NULL;
	v[0].hca_size = 64; /* no counters, no samples array */
	v[0].nsamples = 3;
	v[1].name = "diskio";
	v[1].unit = "bytes";
	v[1].threshold = 1ull << 63;
	v[1].events = v[1].wsum = v[1].unique = UINT64_MAX;
	v[1].hca_size = 32;
	v[1].hca = shape_alloc(e, 32, sizeof(uint64_t)); /* all zero */
	v[2].name = "sched";
	v[2].unit = "ns";
	v[2].hca_size = 65536;
	v[2].hca = hca = shape_alloc(e, 65536, sizeof(uint64_t));
	for (i = 0; i < 65536; i += 4099)
		hca[i] = i % 2 ? (uint64_t)i << 40 : UINT64_MAX - i;
	hca[65535] = 1;
	v[2].nsamples = NSHAPE_STRS + 4;
	v[2].samples = s = shape_alloc(e, v[2].nsamples, sizeof(*s));
	for (i = 0; i < NSHAPE_STRS; i++)
		shape_sample(e, &s[i], i % 5, i % 4, i % 2 == 0, shape_strs[i]);
	shape_sample(e, &s[i++], VITALS_STACK_MAX + 9, 0, 1, "deep");
	shape_sample(e, &s[i++], 2, VITALS_STACK_MAX + 3, 1, "deep user");
	shape_sample(e, &s[i++], VITALS_STACK_MAX, VITALS_STACK_MAX, 0, NULL);
	shape_sample(e, &s[i], 0, 0, 1, "no frames");
	s[i].kstack = s[i].ustack = NULL;
	s[i].nkstack = 4; /* counts without arrays */
	s[i].nustack = 2;
	s[i].ksyms = NULL;
	v[3].name = "z\xc3\xa9\xff";
	v[3].unit = "\xe2\x82";
	e->vitals = v;
	e->nvitals = 4;
}

/* Findings with every real, NaN and infinities, NULL vital and label. */
static void
shape_findings(struct vitals_epoch *e)
{
	struct vitals_finding *f;
	uint32_t i, n = NSHAPE_REALS + NSHAPE_STRS;

	f = shape_alloc(e, n, sizeof(*f));
	for (i = 0; i < n; i++) {
		f[i].start_ns = (uint64_t)i << 60;
		f[i].end_ns = UINT64_MAX - i;
		f[i].timescale_s = 60u << (i % 8);
		f[i].severity = i % 4;
		f[i].score = shape_reals[i % NSHAPE_REALS];
		f[i].value = -shape_reals[(i + 1) % NSHAPE_REALS];
		f[i].expected = shape_reals[(i + 2) % NSHAPE_REALS] * 7;
		f[i].filter = i % 5 == 0 ? NULL : shape_strs[i % NSHAPE_STRS];
		f[i].vital =
		    i % 3 == 0 ? NULL : shape_strs[(i + 1) % NSHAPE_STRS];
		f[i].label =
		    i % 4 == 0 ? NULL : shape_strs[(i + 2) % NSHAPE_STRS];
		f[i].text = shape_strs[(i + 3) % NSHAPE_STRS];
	}
	e->findings = f;
	e->nfindings = n;
}

/* Metrics named in order, out of order, twice, not in ASCII, not at all. */
static void
shape_metrics(struct vitals_epoch *e, int k)
{
	static const char *const sets[][8] = {
		{ "a", "proc.cpu.idle_pct", "z" },
		{ "z", "b", "a", "m" },
		{ "a", "b", "a", "c", "b" },
		{ "caf\xc3\xa9", "x\xff", "caf??", "", NULL, "plain" },
		{ "\xc3\xa9", "?\xff", "??", "a\"b", "t\tab", "\x01" },
	};
	struct vitals_metric *m = shape_alloc(e, 8, sizeof(*m));
	uint32_t i, n = 0;

	for (i = 0; i < 8 && (sets[k][i] != NULL || (k == 3 && i == 4)); i++) {
		m[n].name = sets[k][i];
		m[n].unit = shape_strs[(i + k) % NSHAPE_STRS];
		m[n].mean = shape_reals[(i + k) % NSHAPE_REALS];
		m[n].min = shape_reals[(i + k + 1) % NSHAPE_REALS];
		m[n].max = shape_reals[(i + k + 2) % NSHAPE_REALS];
		m[n].last = shape_reals[(i + k + 3) % NSHAPE_REALS];
		m[n].n = (uint64_t)i << 62 | (uint64_t)k;
		n++;
	}
	e->metrics = m;
	e->nmetrics = n;
}

/* Modules with odd paths and build ids. */
static void
shape_modules(struct vitals_epoch *e)
{
	struct vitals_module *m = shape_alloc(e, NSHAPE_STRS, sizeof(*m));
	uint32_t i;

	for (i = 0; i < NSHAPE_STRS; i++) {
		m[i].id = i == 0 ? 0 : UINT32_MAX - (uint32_t)(NSHAPE_STRS - i);
		m[i].path = shape_strs[i];
		m[i].build_id = i % 2 ? shape_strs[NSHAPE_STRS - 1 - i] : NULL;
	}
	e->modules = m;
	e->nmodules = NSHAPE_STRS;
}

/* The shapes: 0 empty, 1 all NULL but counts, 2.. the parts above. */
#define NSHAPES 11

static struct vitals_epoch *
shape_epoch(int k)
{
	struct vitals_epoch *e = epoch_new();

	ck_assert_ptr_nonnull(e);
	if (k == 0)
		return e; /* every member zero or NULL */
	e->host = k == 1 ? NULL : shape_strs[(k * 7) % NSHAPE_STRS];
	e->start_ns = 1700000000000000000ull + (uint64_t)k;
	e->length_ns = 60000000000ull;
	e->timescale_s = k == 1 ? UINT32_MAX : 60;
	e->partial = (uint32_t)k % 2;
	e->seq = (uint64_t)-k;
	e->dropped = 1ull << 63;
	e->cpu_ns = 12345;
	if (k == 1) { /* counts without arrays */
		e->nvitals = e->nfindings = e->nmetrics = e->nmodules = 2;
		return e;
	}
	if (k == 2 || k == 10)
		shape_vitals(e);
	if (k == 3 || k == 10)
		shape_findings(e);
	if (k >= 4 && k <= 8)
		shape_metrics(e, k - 4);
	if (k == 9 || k == 10)
		shape_modules(e);
	return e;
}

/* ---- comparing epochs: every member, NULL pointers included ---- */

static int
same_str(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static int
same_dbl(double a, double b)
{
	return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof(a)) == 0;
}

static int
same_u64s(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	if ((a == NULL) != (b == NULL))
		return 0;
	return a == NULL || memcmp(a, b, n * sizeof(*a)) == 0;
}

static void
check_sample(const struct vitals_sample *a, const struct vitals_sample *b)
{
	uint32_t i, n = a->nkstack + a->nustack;

	ck_assert(a->ts_ns == b->ts_ns && a->label == b->label &&
	    a->weight == b->weight && a->count == b->count);
	ck_assert(a->slot == b->slot && a->exe_id == b->exe_id &&
	    a->uid == b->uid && a->pid == b->pid && a->tid == b->tid &&
	    a->op == b->op);
	ck_assert(a->nkstack == b->nkstack && a->nustack == b->nustack);
	ck_assert(same_u64s(a->kstack, b->kstack, a->nkstack));
	ck_assert(same_u64s(a->ustack, b->ustack, a->nustack));
	ck_assert((a->ksyms == NULL) == (b->ksyms == NULL));
	for (i = 0; a->ksyms != NULL && i < n; i++)
		ck_assert(same_str(a->ksyms[i], b->ksyms[i]));
	ck_assert(same_str(a->exe, b->exe) && same_str(a->comm, b->comm));
	ck_assert(memcmp(a->args, b->args, sizeof(a->args)) == 0);
}

static void
check_vital(
    const struct vitals_vital_epoch *a, const struct vitals_vital_epoch *b)
{
	uint32_t i;

	ck_assert_str_eq(a->name, b->name);
	ck_assert(same_str(a->unit, b->unit));
	ck_assert(a->threshold == b->threshold && a->floor == b->floor &&
	    a->events == b->events && a->wsum == b->wsum &&
	    a->unique == b->unique && a->dropped == b->dropped &&
	    a->samples_dropped == b->samples_dropped);
	ck_assert_uint_eq(a->hca_size, b->hca_size);
	ck_assert(same_u64s(a->hca, b->hca, a->hca_size));
	ck_assert_uint_eq(a->nsamples, b->nsamples);
	ck_assert((a->samples == NULL) == (b->samples == NULL));
	for (i = 0; i < a->nsamples; i++)
		check_sample(&a->samples[i], &b->samples[i]);
}

static void
check_finding(const struct vitals_finding *a, const struct vitals_finding *b)
{
	ck_assert(a->start_ns == b->start_ns && a->end_ns == b->end_ns &&
	    a->timescale_s == b->timescale_s && a->severity == b->severity);
	ck_assert(same_dbl(a->score, b->score) &&
	    same_dbl(a->value, b->value) && same_dbl(a->expected, b->expected));
	ck_assert(same_str(a->filter, b->filter) &&
	    same_str(a->vital, b->vital) && same_str(a->label, b->label) &&
	    same_str(a->text, b->text));
}

static void
check_metric(const struct vitals_metric *a, const struct vitals_metric *b)
{
	ck_assert(same_str(a->name, b->name) && same_str(a->unit, b->unit));
	ck_assert(same_dbl(a->mean, b->mean) && same_dbl(a->min, b->min) &&
	    same_dbl(a->max, b->max) && same_dbl(a->last, b->last));
	ck_assert(a->n == b->n);
}

/* a and b (two decodings) hold the same, NULL pointers included. */
static void
check_epoch(const struct vitals_epoch *a, const struct vitals_epoch *b)
{
	uint32_t i;

	ck_assert(same_str(a->host, b->host));
	ck_assert(a->start_ns == b->start_ns && a->length_ns == b->length_ns &&
	    a->timescale_s == b->timescale_s && a->partial == b->partial &&
	    a->seq == b->seq && a->dropped == b->dropped &&
	    a->cpu_ns == b->cpu_ns);
	ck_assert_uint_eq(a->nvitals, b->nvitals);
	ck_assert((a->vitals == NULL) == (b->vitals == NULL));
	for (i = 0; i < a->nvitals; i++)
		check_vital(&a->vitals[i], &b->vitals[i]);
	ck_assert_uint_eq(a->nfindings, b->nfindings);
	ck_assert((a->findings == NULL) == (b->findings == NULL));
	for (i = 0; i < a->nfindings; i++)
		check_finding(&a->findings[i], &b->findings[i]);
	ck_assert_uint_eq(a->nmetrics, b->nmetrics);
	ck_assert((a->metrics == NULL) == (b->metrics == NULL));
	for (i = 0; i < a->nmetrics; i++)
		check_metric(&a->metrics[i], &b->metrics[i]);
	ck_assert_uint_eq(a->nmodules, b->nmodules);
	for (i = 0; i < a->nmodules; i++) {
		ck_assert_uint_eq(a->modules[i].id, b->modules[i].id);
		ck_assert_str_eq(a->modules[i].path, b->modules[i].path);
		ck_assert_str_eq(
		    a->modules[i].build_id, b->modules[i].build_id);
	}
}

/* ---- the reference: jansson ---- */

/* The writer's text for e, as jansson writes it with flags (malloc'd). */
static char *
ref_text(const struct vitals_epoch *e, size_t flags)
{
	json_t *j = epoch_json(e);
	char *s;

	ck_assert_ptr_nonnull(j);
	s = json_dumps(j, flags);
	json_decref(j);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* jansson's and codec_epoch_from_json's answer for text. */
static int
ref_parse(const char *text, size_t len, struct vitals_epoch **out, char *err,
    size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	int r;

	if (j == NULL) {
		snprintf(err, errlen, "line %d column %d: %s", je.line,
		    je.column, je.text);
		return -EBADMSG;
	}
	r = codec_epoch_from_json(j, out, err, errlen);
	json_decref(j);
	return r;
}

/*
 * codec_epoch_parse answers text as the reference does: the same code,
 * the same message, the same epoch.  Returns whether the fast reader took
 * it.
 */
static int
check_parse(const char *text, size_t len)
{
	struct vitals_epoch *a = NULL, *b = NULL, *c = NULL;
	char ea[512] = "", eb[512] = "";
	int ra, rb, rc;

	ra = codec_epoch_parse(text, len, &a, ea, sizeof(ea));
	rb = ref_parse(text, len, &b, eb, sizeof(eb));
	ck_assert_int_eq(ra, rb);
	if (ra != 0)
		ck_assert_str_eq(ea, eb);
	else
		check_epoch(a, b);
	rc = codec_text_decode(text, len, &c);
	ck_assert(rc == 0 || rc == -ENOTSUP);
	if (rc == 0) {
		ck_assert_int_eq(rb, 0); /* it never takes a bad document */
		check_epoch(c, b);
	}
	vitals_epoch_free(a);
	vitals_epoch_free(b);
	vitals_epoch_free(c);
	return rc == 0;
}

/* ---- fixtures: what the jansson tree writer wrote ---- */

/*
 * tests/fixtures/codec/NAME holds one epoch text a line: line k of
 * shapes.jsonl is shape_epoch(k), of random.jsonl.gz rnd_epoch(k), written
 * by the jansson tree writer (json_dumps(codec_epoch_to_json(e),
 * JSON_COMPACT)) that the streaming writer replaced, at commit 018ab69.
 * Line k, malloc'd, without its newline.
 */
static char *
fixture_line(const char *name, int k, size_t *len)
{
	const size_t cap = 1 << 20;
	const char *src = getenv("top_srcdir");
	char path[512], *line = malloc(cap);
	size_t n;
	gzFile f;

	snprintf(path, sizeof(path), "%s/tests/fixtures/codec/%s",
	    src != NULL ? src : ".", name);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg((f = gzopen(path, "r")) != NULL, "%s: cannot open", path);
	while (k-- >= 0)
		ck_assert_msg(gzgets(f, line, (int)cap) != NULL,
		    "%s: too few lines", path);
	gzclose(f);
	n = strlen(line);
	ck_assert(n > 0 && line[n - 1] == '\n');
	line[--n] = '\0';
	*len = n;
	return line;
}

/* text[0..len) is the fixture's line k, byte for byte. */
static void
check_fixture(const char *name, int k, const char *text, size_t len)
{
	size_t n, at;
	char *want = fixture_line(name, k, &n);

	for (at = 0; at < len && at < n && text[at] == want[at]; at++)
		;
	ck_assert_msg(at == len && at == n,
	    "%s line %d differs at byte %zu: "
	    "...%.40s",
	    name, k + 1, at, want + (at > 20 ? at - 20 : 0));
	free(want);
}

/* ---- the writer ---- */

/* A codec_sink_fn gathering the chunks into a struct text. */
struct text {
	char *p;
	size_t n, chunks;
};

static int
text_sink(const char *buf, size_t n, void *arg)
{
	struct text *t = arg;

	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, 64 * 1024);
	ck_assert_ptr_nonnull(t->p = realloc(t->p, t->n + n));
	memcpy(t->p + t->n, buf, n);
	t->n += n;
	t->chunks++;
	return 0;
}

/* e written both ways, in one piece and streamed, is the fixture's line k. */
static void
check_writes(const struct vitals_epoch *e, const char *name, int k)
{
	struct text t = { NULL, 0, 0 };
	char *text = NULL;
	size_t len = 0;

	ck_assert_int_eq(codec_text_encode(e, &text, &len), 0);
	ck_assert_uint_eq(len, strlen(text));
	check_fixture(name, k, text, len);
	ck_assert_int_eq(codec_text_write(e, text_sink, &t), 0);
	ck_assert_uint_eq(t.chunks, (len + 64 * 1024 - 1) / (64 * 1024));
	check_fixture(name, k, t.p, t.n);
	free(t.p);
	free(text);
}

/* Epochs of every shape: the bytes of the tree writer. */
START_TEST(encode_shapes)
{
	struct vitals_epoch *e = shape_epoch(_i);

	check_writes(e, "shapes.jsonl", _i);
	vitals_epoch_free(e);
}
END_TEST

/* Random epochs: the bytes of the tree writer. */
START_TEST(encode_random)
{
	struct vitals_epoch *e = rnd_epoch((uint64_t)_i);

	check_writes(e, "random.jsonl.gz", _i);
	vitals_epoch_free(e);
}
END_TEST

/* A sink's error stops the writing and is the answer. */
static int
fail_sink(const char *buf, size_t n, void *arg)
{
	(void)buf;
	(void)n;
	++*(int *)arg;
	return -ENOSPC;
}

START_TEST(encode_sink_fails)
{
	struct vitals_epoch *e = shape_epoch(10);
	int calls = 0;

	ck_assert_int_eq(codec_text_write(e, fail_sink, &calls), -ENOSPC);
	ck_assert_int_eq(calls, 1);
	vitals_epoch_free(e);
}
END_TEST

/* Reals print as jansson prints them, exponents and all. */
START_TEST(encode_reals)
{
	static const double v[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1e-5, 1e20, 1e21,
		1.5e300, 5e-324, -2.5e-7, 1e100, 1e-100, 123456.5, 1.0 / 3,
		2e15, 1e16, 1e17, 4.35e-07 };
	struct vitals_finding f[sizeof(v) / sizeof(*v)];
	struct vitals_epoch e;
	char *ref, *text;
	size_t i, len;

	memset(&e, 0, sizeof(e));
	memset(f, 0, sizeof(f));
	for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
		f[i].score = v[i];
		f[i].value = -v[i];
		f[i].expected = v[i] * 7;
		f[i].filter = "x";
		f[i].text = "t";
	}
	e.findings = f;
	e.nfindings = (uint32_t)(sizeof(v) / sizeof(*v));
	ref = ref_text(&e, JSON_COMPACT); /* read back, written by jansson */
	ck_assert_int_eq(codec_text_encode(&e, &text, &len), 0);
	ck_assert_str_eq(text, ref); /* short: a message shows both */
	/* ... and read back to the same bits. */
	ck_assert(check_parse(text, len));
	free(text);
	free(ref);
}
END_TEST

/* ---- the reader ---- */

/* What the writers write is read fast, to the same epoch. */
START_TEST(decode_same_epoch)
{
	struct vitals_epoch *e = rnd_epoch((uint64_t)_i + 1000);
	char *compact = ref_text(e, JSON_COMPACT);
	char *pretty = ref_text(e, JSON_INDENT(2));

	/* Strings with control characters are written as \u00XX, which
	 * the reader leaves to jansson; the others are its own. */
	check_parse(compact, strlen(compact));
	check_parse(pretty, strlen(pretty));
	free(compact);
	free(pretty);
	vitals_epoch_free(e);
}
END_TEST

/* A random epoch whose strings need no \u escape, as the store has. */
static struct vitals_epoch *
plain_epoch(uint64_t seed)
{
	static const char *const plain[] = { "/usr/bin/a", "x", "" };
	struct vitals_epoch *e = rnd_epoch(seed);
	struct vitals_vital_epoch *v;
	struct vitals_finding *f;
	struct vitals_sample *s;
	uint32_t i, k, n;

	e->host = "node-1";
	for (i = 0; i < e->nvitals; i++) {
		v = (struct vitals_vital_epoch *)&e->vitals[i];
		v->unit = "ns";
		for (k = 0; k < v->nsamples; k++) {
			s = (struct vitals_sample *)&v->samples[k];
			s->exe = plain[k % 3];
			s->comm = plain[(k + 1) % 3];
			for (n = 0;
			     s->ksyms != NULL && n < s->nkstack + s->nustack;
			     n++)
				((const char **)s->ksyms)[n] = plain[n % 3];
		}
	}
	for (i = 0; i < e->nfindings; i++) {
		f = (struct vitals_finding *)&e->findings[i];
		f->filter = "ewma";
		f->text = "a \"b\" c/d";
		f->vital = f->vital != NULL ? "cpu" : NULL;
		f->label = f->label != NULL ? "/usr/bin/b" : NULL;
	}
	for (i = 0; i < e->nmetrics; i++)
		((struct vitals_metric *)e->metrics)[i].unit = "%";
	for (i = 0; i < e->nmodules; i++)
		((struct vitals_module *)e->modules)[i].path = plain[i % 3];
	return e;
}

/* Such an epoch is never declined. */
START_TEST(decode_takes_plain)
{
	struct vitals_epoch *e = plain_epoch((uint64_t)_i + 5000);
	char *text = ref_text(e, JSON_COMPACT);

	ck_assert(check_parse(text, strlen(text)));
	free(text);
	vitals_epoch_free(e);
}
END_TEST

/* Documents the reader declines, and jansson answers (either way). */
static const char *const declined[] = {
	/* errors */
	"",
	"[]",
	"{\"format\":2}",
	"{\"format\":1}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[]} x",
	"{\"format\":1,\"format\":1}",
	"{\"format\":1.0}",
	"{\"format\":true}",
	"{\"format\":01}",
	"{\"format\":99999999999999999999}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":-1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[]}",
	"{\"format\":1,\"host\":null,\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[]}",
	/* valid, but outside the fast form */
	"{\"format\":1,\"host\":\"h\\u0041\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\xc3\xa9\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[],\"extra\":1}",
	/* hca before hca_size, and samples before it */
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"hca\":{\"n\":32,\"nz\":[[1,2]]},\"name\":\"cpu\","
	"\"unit\":\"\",\"threshold\":1,\"floor\":1,\"events\":1,\"wsum\":1,"
	"\"unique\":1,\"dropped\":0,\"samples_dropped\":0,\"hca_size\":32,"
	"\"samples\":[]}],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"samples\":[],\"name\":\"cpu\","
	"\"unit\":\"\",\"threshold\":1,\"floor\":1,\"events\":1,\"wsum\":1,"
	"\"unique\":1,\"dropped\":0,\"samples_dropped\":0,\"hca_size\":32,"
	"\"hca\":{\"n\":32,\"nz\":[]}}],\"findings\":[]}",
	/* a bad HCA: index out of range, not ascending, n wrong, size */
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"cpu\",\"unit\":\"\",\"threshold\":1,\"floor\":"
	"1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":32,\"hca\":{\"n\":32,"
	"\"nz\":[[32,2]]},\"samples\":[]}],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"cpu\",\"unit\":\"\",\"threshold\":1,\"floor\":"
	"1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":32,\"hca\":{\"n\":32,"
	"\"nz\":[[3,2],[3,4]]},\"samples\":[]}],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"cpu\",\"unit\":\"\",\"threshold\":1,\"floor\":"
	"1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":32,\"hca\":{\"n\":64,"
	"\"nz\":[]},\"samples\":[]}],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"cpu\",\"unit\":\"\",\"threshold\":1,\"floor\":"
	"1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":48,\"hca\":{\"n\":48,"
	"\"nz\":[]},\"samples\":[]}],\"findings\":[]}",
	/* a vital twice, an empty name */
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"cpu\",\"unit\":\"\",\"threshold\":1,\"floor\":"
	"1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":0,\"hca\":{\"n\":0,"
	"\"nz\":[]},\"samples\":[]},{\"name\":\"cpu\",\"unit\":\"\","
	"\"threshold\":1,\"floor\":1,\"events\":1,\"wsum\":1,\"unique\":1,"
	"\"dropped\":0,\"samples_dropped\":0,\"hca_size\":0,\"hca\":{\"n\":0,"
	"\"nz\":[]},\"samples\":[]}],\"findings\":[]}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[{\"name\":\"\",\"unit\":\"\",\"threshold\":1,\"floor\":1,"
	"\"events\":1,\"wsum\":1,\"unique\":1,\"dropped\":0,"
	"\"samples_dropped\":0,\"hca_size\":0,\"hca\":{\"n\":0,"
	"\"nz\":[]},\"samples\":[]}],\"findings\":[]}",
	/* metrics: no observations, an empty name */
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[],\"metrics\":{\"m\":{\"unit\":\"\","
	"\"mean\":1,\"min\":1,\"max\":1,\"last\":1,\"n\":0}}}",
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[],\"metrics\":{\"\":{\"unit\":\"\","
	"\"mean\":1,\"min\":1,\"max\":1,\"last\":1,\"n\":1}}}",
	/* a real too large */
	"{\"format\":1,\"host\":\"h\",\"start_ns\":1,\"length_ns\":1,"
	"\"timescale_s\":1,\"partial\":0,\"seq\":0,\"dropped\":0,\"cpu_ns\":0,"
	"\"vitals\":[],\"findings\":[],\"metrics\":{\"m\":{\"unit\":\"\","
	"\"mean\":1e999,\"min\":1,\"max\":1,\"last\":1,\"n\":1}}}",
};

START_TEST(decode_declines)
{
	struct vitals_epoch *e = NULL;

	ck_assert_int_eq(
	    codec_text_decode(declined[_i], strlen(declined[_i]), &e),
	    -ENOTSUP);
	ck_assert_ptr_null(e);
	ck_assert(!check_parse(declined[_i], strlen(declined[_i])));
}
END_TEST

/* Members in another order, where none needs another first: read fast. */
START_TEST(decode_any_order)
{
	static const char text[] =
	    "{\"vitals\":[{\"unit\":\"ns\",\"name\":\"cpu\",\"threshold\":2,"
	    "\"floor\":1,\"events\":3,\"wsum\":9,\"unique\":1,\"dropped\":0,"
	    "\"samples_dropped\":0,\"hca_size\":32,"
	    "\"samples\":[{\"args\":[1,2,3,4],\"ustack\":[],\"kstack\":[5,6],"
	    "\"usyms\":[],\"ksyms\":[\"f\",\"g\"],\"comm\":\"c\",\"exe\":\"/"
	    "e\","
	    "\"op\":0,\"tid\":1,\"pid\":1,\"uid\":0,\"exe_id\":3,\"slot\":7,"
	    "\"count\":9,\"weight\":3,\"label\":17,\"ts_ns\":100}],"
	    "\"hca\":{\"nz\":[[7,9]],\"n\":32}}],"
	    "\"findings\":[{\"text\":\"t\",\"label\":null,\"filter\":\"f\","
	    "\"expected\":null,\"value\":2,\"score\":0.5,\"severity\":1,"
	    "\"timescale_s\":60,\"end_ns\":2,\"start_ns\":1}],"
	    "\"metrics\":{\"z\":{\"n\":1,\"last\":1,\"max\":1,\"min\":1,"
	    "\"mean\":1,\"unit\":\"\"},\"a\":{\"unit\":\"%\",\"mean\":2,"
	    "\"min\":2,\"max\":2,\"last\":2,\"n\":3}},"
	    "\"cpu_ns\":0,\"dropped\":0,\"seq\":0,\"partial\":0,"
	    "\"timescale_s\":60,\"length_ns\":60,\"start_ns\":0,\"host\":\"h\","
	    "\"format\":1}";
	struct vitals_epoch *e;

	ck_assert(check_parse(text, sizeof(text) - 1));
	ck_assert_int_eq(codec_text_decode(text, sizeof(text) - 1, &e), 0);
	ck_assert_str_eq(e->metrics[0].name, "a"); /* sorted */
	ck_assert_str_eq(e->vitals[0].samples[0].ksyms[1], "g");
	ck_assert_uint_eq(e->vitals[0].hca[7], 9);
	ck_assert_ptr_null(e->vitals[0].samples[0].ustack);
	ck_assert_ptr_null(e->findings[0].vital);
	ck_assert(isnan(e->findings[0].expected));
	vitals_epoch_free(e);
}
END_TEST

/*
 * Mutated documents (a byte changed, dropped or doubled): whatever each
 * becomes, codec_epoch_parse answers as jansson does.
 */
START_TEST(decode_mutations)
{
	static const char alphabet[] = "{}[]\",:0123456789-.eEnul \\x";
	struct vitals_epoch *e = plain_epoch((uint64_t)_i + 9000);
	char *text = ref_text(e, JSON_COMPACT), *m;
	size_t len = strlen(text), n, at;
	unsigned k, taken = 0;

	m = malloc(len + 2);
	ck_assert_ptr_nonnull(m);
	for (k = 0; k < 300; k++) {
		at = (size_t)(rnd() % len);
		memcpy(m, text, at);
		switch (rnd() % 3) {
		case 0: /* changed */
			m[at] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			memcpy(m + at + 1, text + at + 1, len - at - 1);
			n = len;
			break;
		case 1: /* dropped */
			memcpy(m + at, text + at + 1, len - at - 1);
			n = len - 1;
			break;
		default: /* doubled */
			m[at] = text[at];
			memcpy(m + at + 1, text + at, len - at);
			n = len + 1;
		}
		taken += (unsigned)check_parse(m, n);
	}
	/* Changed digits keep a valid epoch the fast reader takes. */
	ck_assert_uint_gt(taken, 0);
	free(m);
	free(text);
	vitals_epoch_free(e);
}
END_TEST

/*
 * Encode, then decode: the epoch comes back (as jansson reads it), and
 * re-encoded it gives the same bytes.
 */
START_TEST(round_trip)
{
	struct vitals_epoch *e = rnd_epoch((uint64_t)_i + 20000), *b = NULL;
	char *text = NULL, *again = NULL;
	size_t len = 0, n = 0;

	ck_assert_int_eq(codec_text_encode(e, &text, &len), 0);
	if (!check_parse(text, len)) {
		/* Only \u00XX escapes of control bytes are left to jansson. */
		ck_assert_ptr_nonnull(strstr(text, "\\u00"));
	} else {
		ck_assert_int_eq(codec_text_decode(text, len, &b), 0);
		ck_assert_int_eq(codec_text_encode(b, &again, &n), 0);
		ck_assert_uint_eq(n, len);
		ck_assert(memcmp(again, text, n) == 0);
	}
	free(again);
	free(text);
	vitals_epoch_free(b);
	vitals_epoch_free(e);
}
END_TEST

/* ---- the compact form ---- */

/*
 * e written in the compact form reads back, by both readers, as its
 * format 1 text does, and the fast reader takes it whenever it takes that
 * text (*fast: whether it did).  Returns the epoch read back (the
 * caller's); *flen, *clen: the lengths of the two texts.
 */
static struct vitals_epoch *
compact_back(
    const struct vitals_epoch *e, size_t *flen, size_t *clen, int *fast)
{
	struct vitals_epoch *a = NULL, *b = NULL;
	char *full = NULL, *compact = NULL, err[256];

	ck_assert_int_eq(codec_text_encode(e, &full, flen), 0);
	ck_assert_int_eq(codec_compact_encode(e, &compact, clen), 0);
	ck_assert(strncmp(compact, "{\"format\":2,", 12) == 0);
	*fast = check_parse(full, *flen);
	ck_assert_int_eq(check_parse(compact, *clen), *fast);
	ck_assert_int_eq(
	    codec_epoch_parse(full, *flen, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    codec_epoch_parse(compact, *clen, &b, err, sizeof(err)), 0);
	check_epoch(a, b);
	free(full);
	free(compact);
	vitals_epoch_free(a);
	return b;
}

START_TEST(compact_round_trip)
{
	struct vitals_epoch *e = rnd_epoch((uint64_t)_i + 30000);
	size_t flen, clen;
	int fast;

	vitals_epoch_free(compact_back(e, &flen, &clen, &fast));
	vitals_epoch_free(e);
}
END_TEST

/* Fixture epochs: the shapes, then this many of the random ones. */
#define NSTORED (NSHAPES + 8)

/* Fixture epoch k's text (format 1), malloc'd. */
static char *
stored_text(int k, size_t *len)
{
	return k < NSHAPES ? fixture_line("shapes.jsonl", k, len)
			   : fixture_line("random.jsonl.gz", k - NSHAPES, len);
}

/* Write data[0..len) to path, gzip'd first if gz. */
static void
write_file(const char *path, const void *data, size_t len, int gz)
{
	gzFile z;
	FILE *f;

	if (gz) {
		ck_assert_ptr_nonnull(z = gzopen(path, "wb"));
		ck_assert_int_eq(gzwrite(z, data, (unsigned)len), (int)len);
		ck_assert_int_eq(gzclose(z), Z_OK);
		return;
	}
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * Fixture epoch k as the file an older vitalsd left (its format 1 text,
 * gzip'd: old) or as the store writes it now (vitals_epoch_encode's
 * bytes of the same epoch, the compact form), read back with
 * vitals_epoch_load; NULL for a fixture that is not a good epoch.
 */
static struct vitals_epoch *
stored_load(const char *dir, int k, int old)
{
	struct vitals_epoch_file f;
	struct vitals_epoch *e;
	char path[512], err[256], *text, head[12];
	size_t len;
	gzFile z;

	text = stored_text(k, &len);
	/* Some fixtures are not epochs a reader takes (the writer's cases). */
	if (codec_epoch_parse(text, len, &e, err, sizeof(err)) != 0) {
		free(text);
		return NULL;
	}
	vitals_epoch_free(e);
	snprintf(path, sizeof(path), "%s/%s-%d.json.gz", dir,
	    old ? "old" : "new", k);
	if (old) {
		write_file(path, text, len, 1);
	} else {
		ck_assert_int_eq(
		    codec_epoch_parse(text, len, &e, err, sizeof(err)), 0);
		ck_assert_int_eq(
		    vitals_epoch_encode(e, &f, err, sizeof(err)), 0);
		write_file(path, f.data, f.len, 0);
		vitals_epoch_file_free(&f);
		vitals_epoch_free(e);
	}
	free(text);
	ck_assert_ptr_nonnull(z = gzopen(path, "rb"));
	ck_assert_int_eq(gzread(z, head, sizeof(head)), (int)sizeof(head));
	gzclose(z);
	ck_assert(memcmp(head, old ? "{\"format\":1," : "{\"format\":2,",
		      sizeof(head)) == 0);
	ck_assert_msg(
	    vitals_epoch_load(path, &e, err, sizeof(err)) == 0, "%s", err);
	return e;
}

/* The rollup of v[0..n) as format 1 text, malloc'd. */
static char *
rollup_text(struct vitals_epoch *const *v, size_t n, size_t *len)
{
	struct vitals_epoch *r;
	char *text;

	ck_assert_int_eq(
	    vitals_epoch_rollup(
		(const struct vitals_epoch *const *)v, n, 0, 600, 0, &r),
	    0);
	ck_assert_int_eq(codec_text_encode(r, &text, len), 0);
	vitals_epoch_free(r);
	return text;
}

/*
 * Old files (the fixtures' format 1) load and roll up with new ones: the
 * rollup of the epochs read from old files, from new files, and from a
 * mix of both is the same epoch, every total and counter alike.
 */
START_TEST(compact_rolls_up_with_old)
{
	struct vitals_epoch *old[NSTORED], *new[NSTORED], *mix[NSTORED];
	char dir[] = "/tmp/check_codec_text.XXXXXX", cmd[600];
	char *a, *b, *c;
	size_t la, lb, lc;
	uint32_t i, j;
	int k, n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (k = 0; k < NSTORED; k++) {
		if ((old[n] = stored_load(dir, k, 1)) == NULL)
			continue;
		new[n] = stored_load(dir, k, 0);
		mix[n] = n % 2 ? old[n] : new[n];
		check_epoch(old[n], new[n]);
		n++;
	}
	ck_assert_int_ge(n, NSTORED / 2);
	a = rollup_text(old, (size_t)n, &la);
	b = rollup_text(new, (size_t)n, &lb);
	c = rollup_text(mix, (size_t)n, &lc);
	ck_assert(la == lb && memcmp(a, b, la) == 0);
	ck_assert(la == lc && memcmp(a, c, la) == 0);
	/* The totals, said plainly: every vital's events and weights. */
	for (k = 0; k < n; k++)
		for (i = 0; i < old[k]->nvitals; i++) {
			ck_assert(old[k]->vitals[i].events ==
			    new[k]->vitals[i].events);
			ck_assert(
			    old[k]->vitals[i].wsum == new[k]->vitals[i].wsum);
			for (j = 0; j < old[k]->vitals[i].hca_size; j++)
				ck_assert(old[k]->vitals[i].hca[j] ==
				    new[k]->vitals[i].hca[j]);
		}
	for (k = 0; k < n; k++) {
		vitals_epoch_free(old[k]);
		vitals_epoch_free(new[k]);
	}
	free(a);
	free(b);
	free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * A crowded epoch: a few labels crossing power after power on one path
 * (short rows in the compact form) and, among them, a label seen once on
 * the same path, and one seen once elsewhere; every sample reads back.
 */
START_TEST(compact_keeps_label_seen_once)
{
	static const uint64_t frames[] = { 0xffffffff81000010ull,
		0xffffffff81000200ull, VITALS_UFRAME(3, 0x1234) };
	static const char *const names[] = { "do_syscall_64", "entry", "main" };
	struct vitals_epoch *e = epoch_new(), *b;
	struct vitals_vital_epoch *v;
	struct vitals_sample *s;
	size_t flen, clen;
	uint32_t i, n = 3000, once = 0, other = 0;
	int fast;
	uint64_t *hca;

	ck_assert_ptr_nonnull(e);
	e->host = "h";
	e->start_ns = 1000;
	e->length_ns = 60;
	e->nvitals = 1;
	e->vitals = v = epoch_alloc(e, sizeof(*v));
	v->name = "syscall";
	v->unit = "calls";
	v->hca_size = 64;
	v->hca = hca = epoch_alloc(e, 64 * sizeof(*hca));
	v->nsamples = n;
	v->samples = s = epoch_alloc(e, n * sizeof(*s));
	for (i = 0; i < n; i++) {
		s[i].ts_ns = 1000 + i * 7;
		s[i].label = i == 1777 ? 0xdead : i == 2222 ? 0xbeef : i % 4;
		s[i].weight = 1;
		s[i].count = (uint64_t)1 << (i / 4 % 40);
		s[i].slot = (uint32_t)(s[i].label % 64);
		s[i].pid = s[i].tid = 42;
		s[i].exe = "/bin/x";
		s[i].comm = "x";
		s[i].kstack = frames;
		s[i].nkstack = i == 2222 ? 1 : 2;
		s[i].ustack = frames + 2;
		s[i].nustack = 1;
		s[i].ksyms = i == 2222 ? NULL : names;
		hca[s[i].slot] += s[i].weight;
	}
	b = compact_back(e, &flen, &clen, &fast);
	ck_assert(fast);
	ck_assert_uint_lt(clen * 4, flen); /* the repeats are short rows */
	ck_assert_uint_eq(b->vitals[0].nsamples, n);
	for (i = 0; i < n; i++) {
		s = (struct vitals_sample *)&b->vitals[0].samples[i];
		once += s->label == 0xdead && s->nkstack == 2 &&
		    strcmp(s->ksyms[2], "main") == 0;
		other += s->label == 0xbeef && s->nkstack == 1 &&
		    s->ksyms == NULL && s->ts_ns == 1000 + 2222 * 7;
	}
	ck_assert_uint_eq(once, 1);
	ck_assert_uint_eq(other, 1);
	vitals_epoch_free(b);
	vitals_epoch_free(e);
}
END_TEST

static Suite *
codec_text_suite(void)
{
	Suite *s = suite_create("codec_text");
	TCase *w = tcase_create("write"), *r = tcase_create("read");

	tcase_add_loop_test(w, encode_shapes, 0, NSHAPES);
	tcase_add_loop_test(w, encode_random, 0, NRANDOM);
	tcase_add_test(w, encode_reals);
	tcase_add_test(w, encode_sink_fails);
	tcase_add_loop_test(r, decode_same_epoch, 0, 100);
	tcase_add_loop_test(r, decode_takes_plain, 0, 100);
	tcase_add_loop_test(r, decode_declines, 0, NCASES(declined));
	tcase_add_test(r, decode_any_order);
	tcase_add_loop_test(r, decode_mutations, 0, 20);
	tcase_add_loop_test(r, round_trip, 0, 100);
	tcase_add_loop_test(r, compact_round_trip, 0, 100);
	tcase_add_test(r, compact_rolls_up_with_old);
	tcase_add_test(r, compact_keeps_label_seen_once);
	/*
	 * Check's timeout is of wall time: a mutation run's 300 parses took
	 * more than its default 4 s on a loaded machine (2 CPUs, load 20).
	 */
	tcase_set_timeout(w, 60);
	tcase_set_timeout(r, 60);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	return s;
}

int
main(void)
{
	return testutil_run(codec_text_suite());
}
