/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/profile (<vitals/profile.h>): hand-made epochs whose
 * weights are known become trees whose totals are the attributed weight,
 * stacks merge by name across addresses, modules and epochs, the exe
 * filter keeps what it should, differential deltas, folded lines, a pprof
 * profile decoded back with the generated protobuf-c code, and ranges
 * read from a store.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include <vitals/profile.h>
#include <vitals/store.h>

#include "labels.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define NS 1000000000ull
/* 2023-11-14T00:00:00Z */
#define T0 (1699920000ull * NS)
#define FX_MAX 16 /* samples per fixture epoch */
#define FX_FRAMES 8 /* frames per side */
#define FX_HCA 64 /* HCA counters */
#define FX_MODS 4
#define KBASE 0xffffffff81000000ull
#define UBASE 0x400000ull

/* ---- fixtures: epochs of one vital, samples written as stacks ---- */

/*
 * One sample: its exe, comm, slot, label, count and stack.  The stack is
 * written outermost first, ';' between frames: "k:NAME" a kernel frame
 * (the symbol as given, "+0x.." included), "m:ID+0xOFF" a frame at file
 * offset OFF of module ID ("m:ID+0xOFF=NAME" with a symbol), "0xADDR" a
 * raw user address without symbol, anything else a user symbol; user
 * frames come before kernel frames.
 */
struct fx_sample {
	const char *exe;
	const char *comm;
	uint32_t slot;
	uint64_t label;
	uint64_t count;
	const char *stack;
};

/* A hand-made epoch with one vital; everything it points to is in it. */
struct fx {
	struct vitals_epoch e;
	struct vitals_vital_epoch ve;
	struct vitals_sample s[FX_MAX];
	uint64_t hca[FX_HCA];
	uint64_t kst[FX_MAX][FX_FRAMES], ust[FX_MAX][FX_FRAMES];
	const char *syms[FX_MAX][2 * FX_FRAMES];
	char *copies[FX_MAX];
	struct vitals_module mods[FX_MODS];
};

static uint64_t
fx_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* One user token of a stack: its frame value and symbol (or NULL). */
static uint64_t
fx_uframe(char *tok, const char **sym)
{
	unsigned id;
	unsigned long long off;
	char *eq;

	*sym = NULL;
	if (strncmp(tok, "m:", 2) == 0) {
		ck_assert_int_eq(sscanf(tok + 2, "%u+0x%llx", &id, &off), 2);
		if ((eq = strchr(tok, '=')) != NULL)
			*sym = eq + 1;
		return VITALS_UFRAME(id, off);
	}
	if (strncmp(tok, "0x", 2) == 0)
		return strtoull(tok, NULL, 16);
	*sym = tok;
	return UBASE + (fx_hash(tok) & 0xffff0);
}

/* Fill sample i's stacks and symbols from its written stack. */
static void
fx_stack(struct fx *f, uint32_t i, const char *stack)
{
	const char *ksym[FX_FRAMES], *usym[FX_FRAMES];
	uint64_t k[FX_FRAMES], u[FX_FRAMES];
	struct vitals_sample *s = &f->s[i];
	uint32_t nk = 0, nu = 0, j;
	char *tok, *save = NULL;

	f->copies[i] = strdup(stack);
	for (tok = strtok_r(f->copies[i], ";", &save); tok != NULL;
	     tok = strtok_r(NULL, ";", &save)) {
		if (strncmp(tok, "k:", 2) == 0) {
			ksym[nk] = tok + 2;
			k[nk++] = KBASE + (fx_hash(tok) & 0xfffff0);
		} else {
			u[nu] = fx_uframe(tok, &usym[nu]);
			nu++;
		}
	}
	for (j = 0; j < nk; j++) { /* innermost first */
		f->kst[i][j] = k[nk - 1 - j];
		f->syms[i][j] = ksym[nk - 1 - j];
	}
	for (j = 0; j < nu; j++) {
		f->ust[i][j] = u[nu - 1 - j];
		f->syms[i][nk + j] = usym[nu - 1 - j];
	}
	*s = (struct vitals_sample){ .nkstack = nk,
		.nustack = nu,
		.kstack = f->kst[i],
		.ustack = f->ust[i],
		.ksyms = f->syms[i] };
}

/*
 * An epoch of vital (unit) starting at start, len_s seconds long, with
 * samples v[0..n); each slot's counter is the sum of the largest counts
 * of its labels unless the test sets f->hca.  Free with fx_free.
 */
static struct fx *
fx_new(const char *vital, const char *unit, uint64_t start, uint32_t len_s,
    const struct fx_sample *v, size_t n)
{
	struct fx *f = calloc(1, sizeof(*f));
	uint32_t i, j;
	int top;

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_le(n, FX_MAX);
	for (i = 0; i < n; i++) {
		fx_stack(f, i, v[i].stack);
		f->s[i].exe = v[i].exe != NULL ? v[i].exe : "";
		f->s[i].comm = v[i].comm != NULL ? v[i].comm : "";
		f->s[i].slot = v[i].slot;
		f->s[i].label = v[i].label;
		f->s[i].count = v[i].count;
		f->s[i].weight = 1;
		f->s[i].ts_ns = start;
		for (top = 1, j = 0; j < n; j++)
			if (j != i && v[j].slot == v[i].slot &&
			    v[j].label == v[i].label &&
			    (v[j].count > v[i].count ||
				(v[j].count == v[i].count && j > i)))
				top = 0;
		if (top)
			f->hca[v[i].slot] += v[i].count;
	}
	f->ve = (struct vitals_vital_epoch){ .name = vital,
		.unit = unit,
		.threshold = 4,
		.floor = 1,
		.events = 100,
		.wsum = 100,
		.hca_size = FX_HCA,
		.hca = f->hca,
		.nsamples = (uint32_t)n,
		.samples = f->s };
	f->e = (struct vitals_epoch){ .host = "h1",
		.start_ns = start,
		.length_ns = (uint64_t)len_s * NS,
		.timescale_s = len_s,
		.nvitals = 1,
		.vitals = &f->ve,
		.modules = f->mods };
	return f;
}

/* Add module id (path, build_id); modules are added in id order. */
static void
fx_module(struct fx *f, uint32_t id, const char *path, const char *build_id)
{
	ck_assert_uint_lt(f->e.nmodules, FX_MODS);
	f->mods[f->e.nmodules++] = (struct vitals_module){ id, path, build_id };
}

static void
fx_free(struct fx *f)
{
	uint32_t i;

	for (i = 0; i < FX_MAX; i++)
		free(f->copies[i]);
	free(f);
}

/* A profile of vital over the fixtures' epochs. */
static struct vitals_profile *
profile_of(const char *vital, const char *exe, struct fx *const *v, size_t n)
{
	struct vitals_profile *p = vitals_profile_new(vital, exe);
	size_t i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(vitals_profile_add(p, &v[i]->e), 0);
	return p;
}

static char *
folded_of(const struct vitals_profile *p)
{
	char *out = NULL;
	size_t len = 0;

	ck_assert_int_eq(vitals_profile_folded(p, &out, &len), 0);
	ck_assert_uint_eq(len, strlen(out));
	return out;
}

static json_t *
json_of(const struct vitals_profile *p, const struct vitals_profile *base)
{
	json_error_t jerr;
	char *out = NULL;
	size_t len = 0;
	json_t *j;

	ck_assert_int_eq(vitals_profile_json(p, base, &out, &len), 0);
	ck_assert_uint_eq(len, strlen(out));
	j = json_loads(out, 0, &jerr);
	ck_assert_msg(j != NULL, "bad JSON: %s: %s", jerr.text, out);
	free(out);
	return j;
}

/* The node of tree j at path "a;b;c" (names below the root), or NULL. */
static json_t *
node_at(json_t *j, const char *path)
{
	char *copy = strdup(path), *tok, *save = NULL;
	json_t *kids, *found;
	size_t i;

	for (tok = strtok_r(copy, ";", &save); j != NULL && tok != NULL;
	     tok = strtok_r(NULL, ";", &save)) {
		kids = json_object_get(j, "children");
		for (found = NULL, i = 0; i < json_array_size(kids); i++)
			if (strcmp(json_string_value(json_object_get(
				       json_array_get(kids, i), "name")),
				tok) == 0)
				found = json_array_get(kids, i);
		j = found;
	}
	free(copy);
	return j;
}

static double
num(json_t *node, const char *key)
{
	ck_assert_ptr_nonnull(node);
	ck_assert_msg(
	    json_is_number(json_object_get(node, key)), "no number %s", key);
	return json_number_value(json_object_get(node, key));
}

/* ---- totals: the attributed weight ---- */

/* A case: samples, counters set by hand, the weight they stand for. */
static const struct {
	const char *what;
	struct fx_sample s[4];
	size_t n;
	uint64_t hca[2][2]; /* (slot, value), value 0 = unset */
	double total;
} totals[] = {
	{ "one sample, its slot's counter",
	    { { "/usr/bin/app", "app", 1, 0x10, 5, "main;k:f" } }, 1,
	    { { 1, 5 } }, 5 },
	{ "a slot shared by two labels, counter above their counts",
	    { { "/usr/bin/app", "app", 2, 0x10, 4, "main;k:f" },
		{ "/usr/bin/app", "app", 2, 0x20, 2, "main;k:g" } },
	    2, { { 2, 12 } }, 12 },
	{ "one label sampled twice: the rises add up to its counter",
	    { { "/usr/bin/app", "app", 3, 0x10, 2, "main;k:f" },
		{ "/usr/bin/app", "app", 3, 0x10, 8, "main;k:g" } },
	    2, { { 3, 8 } }, 8 },
	{ "two slots",
	    { { "/usr/bin/app", "app", 1, 0x10, 3, "main;k:f" },
		{ "/bin/sh", "sh", 7, 0x30, 10, "0x401000" } },
	    2, { { 1, 3 }, { 7, 40 } }, 43 },
	{ "samples without stacks",
	    { { "/usr/bin/app", "app", 4, 0x10, 6, "" },
		{ NULL, "kworker", 5, 0x11, 1, "" } },
	    2, { { 4, 6 } }, 7 },
};

START_TEST(test_totals)
{
	struct fx *f =
	    fx_new("cpu", "samples", T0, 60, totals[_i].s, totals[_i].n);
	const struct vitals_profile_stats *st;
	struct vitals_profile *p;
	double w[4], attributed;
	char *folded, *line, *save = NULL;
	long long sum = 0;
	json_t *j;
	size_t k;

	for (k = 0; k < 2; k++)
		if (totals[_i].hca[k][1] != 0)
			f->hca[totals[_i].hca[k][0]] = totals[_i].hca[k][1];
	ck_assert_int_eq(labels_weights(&f->ve, 0, w, &attributed), 0);
	p = profile_of("cpu", NULL, &f, 1);
	st = vitals_profile_stats(p);
	ck_assert_msg(fabs(st->total - totals[_i].total) < 1e-9,
	    "%s: total %g, expected %g", totals[_i].what, st->total,
	    totals[_i].total);
	ck_assert_double_eq_tol(st->total, attributed, 1e-9);
	ck_assert_uint_eq(st->samples, totals[_i].n);
	ck_assert_str_eq(st->unit, "samples");
	j = json_of(p, NULL);
	ck_assert_double_eq_tol(num(j, "value"), totals[_i].total, 1e-9);
	ck_assert_double_eq_tol(num(j, "total"), totals[_i].total, 1e-9);
	ck_assert_str_eq(
	    json_string_value(json_object_get(j, "unit")), "samples");
	folded = folded_of(p);
	for (line = strtok_r(folded, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		sum += atoll(strrchr(line, ' ') + 1);
	ck_assert_int_eq(sum, llround(totals[_i].total));
	free(folded);
	json_decref(j);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* ---- stacks merge by name ---- */

START_TEST(test_merge)
{
	static const struct fx_sample a[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 3,
		    "m:3+0x1234;main;k:sys_read;k:vfs_read+0x1a" },
	};
	static const struct fx_sample b[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 2,
		    "m:7+0x1234;main;k:sys_read;k:vfs_read+0x2b" },
	};
	struct fx *f[2] = { fx_new("cpu", "samples", T0, 60, a, 1),
		fx_new("cpu", "samples", T0 + 60 * NS, 60, b, 1) };
	struct vitals_profile *p;
	char *folded;
	json_t *j;

	/* The same file under another id in another epoch (another run). */
	fx_module(f[0], 3, "/usr/bin/app", "aabb");
	fx_module(f[1], 2, "/lib/libc.so.6", "ccdd");
	fx_module(f[1], 7, "/usr/bin/app", "aabb");
	p = profile_of("cpu", NULL, f, 2);
	folded = folded_of(p);
	ck_assert_str_eq(
	    folded, "/usr/bin/app;app+0x1234;main;sys_read;vfs_read 5\n");
	ck_assert_uint_eq(vitals_profile_stats(p)->stacks, 2);
	ck_assert_uint_eq(vitals_profile_stats(p)->epochs, 2);
	ck_assert_uint_eq(vitals_profile_stats(p)->covered_ns, 120 * NS);
	j = json_of(p, NULL);
	ck_assert_double_eq_tol(
	    num(node_at(j, "/usr/bin/app;app+0x1234;main;sys_read;vfs_read"),
		"value"),
	    5, 1e-9);
	ck_assert_uint_eq(
	    json_array_size(json_object_get(
		node_at(j, "/usr/bin/app;app+0x1234;main"), "children")),
	    1);
	json_decref(j);
	free(folded);
	vitals_profile_free(p);
	fx_free(f[0]);
	fx_free(f[1]);
}
END_TEST

/* ---- the exe filter ---- */

static const struct {
	const char *exe;
	double total;
} exes[] = {
	{ NULL, 10 },
	{ "/usr/bin/app", 5 },
	{ "app", 5 },
	{ "worker", 3 }, /* the path's base name */
	{ "wrk", 3 }, /* the comm */
	{ "kworker", 2 }, /* a sample without exe path */
	{ "/usr/bin/worker", 0 },
	{ "nope", 0 },
};

START_TEST(test_exe_filter)
{
	static const struct fx_sample v[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 5, "main;k:f" },
		{ "/opt/x/worker", "wrk", 2, 0x20, 3, "run;k:f" },
		{ NULL, "kworker", 3, 0x30, 2, "k:worker_thread" },
	};
	struct fx *f = fx_new("cpu", "samples", T0, 60, v, 3);
	struct vitals_profile *p = profile_of("cpu", exes[_i].exe, &f, 1);

	ck_assert_msg(
	    fabs(vitals_profile_stats(p)->total - exes[_i].total) < 1e-9,
	    "exe %s: total %g, expected %g", exes[_i].exe,
	    vitals_profile_stats(p)->total, exes[_i].total);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* ---- the tree's shape and names ---- */

START_TEST(test_tree_order)
{
	static const struct fx_sample v[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 6,
		    "_start;main;k:entry_SYSCALL_64;k:do_syscall_64+0x5c" },
		{ "/usr/bin/app", "app", 2, 0x20, 2, "_start;main" },
		{ NULL, "kworker/0:1", 3, 0x30, 1, "k:worker_thread" },
	};
	struct fx *f = fx_new("cpu", "samples", T0, 60, v, 3);
	struct vitals_profile *p = profile_of("cpu", NULL, &f, 1);
	json_t *j = json_of(p, NULL), *kids;
	char *folded = folded_of(p);

	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "all");
	kids = json_object_get(j, "children");
	ck_assert_uint_eq(json_array_size(kids), 2);
	/* Sorted by name: "/usr/bin/app" before "kworker/0:1". */
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(kids, 0), "name")),
	    "/usr/bin/app");
	ck_assert_double_eq_tol(
	    num(node_at(j, "/usr/bin/app;_start;main"), "value"), 8, 1e-9);
	ck_assert_double_eq_tol(
	    num(node_at(j,
		    "/usr/bin/app;_start;main;entry_SYSCALL_64;do_syscall_64"),
		"value"),
	    6, 1e-9);
	ck_assert_ptr_null(json_object_get(
	    node_at(j, "kworker/0:1;worker_thread"), "children"));
	ck_assert_ptr_null(json_object_get(j, "delta"));
	ck_assert_str_eq(folded,
	    "/usr/bin/app;_start;main 2\n"
	    "/usr/bin/app;_start;main;entry_SYSCALL_64;do_syscall_64 6\n"
	    "kworker/0:1;worker_thread 1\n");
	free(folded);
	json_decref(j);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* Weights that are not whole: lines add up to the rounded total. */
START_TEST(test_folded_rounding)
{
	static const struct fx_sample v[] = {
		{ "/a", "a", 1, 0x10, 1, "f" },
		{ "/a", "a", 1, 0x20, 1, "g" },
		{ "/a", "a", 1, 0x30, 1, "h" },
		{ "/a", "a", 2, 0x40, 1, "i;j" },
		{ "/a", "a", 2, 0x50, 1, "i;k" },
	};
	struct fx *f = fx_new("cpu", "samples", T0, 60, v, 5);
	struct vitals_profile *p;
	char *folded;

	f->hca[1] = 2; /* 2/3 each */
	f->hca[2] = 3; /* 3/2 each */
	p = profile_of("cpu", NULL, &f, 1);
	ck_assert_double_eq_tol(vitals_profile_stats(p)->total, 5, 1e-9);
	folded = folded_of(p);
	/* Running sums 0.67 1.33 2 3.5 5 round to 1 1 2 4 5. */
	ck_assert_str_eq(folded, "/a;f 1\n/a;h 1\n/a;i;j 2\n/a;i;k 1\n");
	free(folded);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* A separator in a name does not split the line. */
START_TEST(test_folded_names)
{
	static const struct fx_sample v[] = {
		{ "/opt/my app", "a", 1, 0x10, 4, "ns;Class;method;k:f" },
	};
	struct fx *f = fx_new("cpu", "samples", T0, 60, v, 1);
	struct vitals_profile *p;
	char *folded;

	f->syms[0][1] = "a;b"; /* the innermost user frame */
	p = profile_of("cpu", NULL, &f, 1);
	folded = folded_of(p);
	ck_assert_str_eq(folded, "/opt/my app;ns;Class;a:b;f 4\n");
	free(folded);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* ---- differential ---- */

START_TEST(test_diff)
{
	static const struct fx_sample a[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 10, "main;k:x" },
		{ "/usr/bin/app", "app", 2, 0x20, 5, "main;k:y" },
	};
	static const struct fx_sample b[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 10, "main;k:x" },
		{ "/usr/bin/app", "app", 3, 0x30, 4, "other" },
	};
	/* A covers 60 s, B 120 s: B's weight counts half at A's length. */
	struct fx *fa = fx_new("cpu", "samples", T0, 60, a, 2);
	struct fx *fb = fx_new("cpu", "samples", T0 + 600 * NS, 120, b, 2);
	struct vitals_profile *pa = profile_of("cpu", NULL, &fa, 1);
	struct vitals_profile *pb = profile_of("cpu", NULL, &fb, 1);
	static const struct {
		const char *path;
		double value, delta;
	} want[] = {
		{ "", 15, 15 - 14 * 0.5 }, { "/usr/bin/app", 15, 8 },
		{ "/usr/bin/app;main", 15, 15 - 10 * 0.5 },
		{ "/usr/bin/app;main;x", 10, 5 }, /* in both, rate halved */
		{ "/usr/bin/app;main;y", 5, 5 }, /* only in A */
		{ "/usr/bin/app;other", 0, -2 }, /* only in B */
	};
	json_t *j = json_of(pa, pb), *n;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		n = want[i].path[0] != '\0' ? node_at(j, want[i].path) : j;
		ck_assert_msg(n != NULL, "no node %s", want[i].path);
		ck_assert_msg(fabs(num(n, "value") - want[i].value) < 1e-9 &&
			fabs(num(n, "delta") - want[i].delta) < 1e-9,
		    "%s: value %g delta %g, expected %g %g", want[i].path,
		    num(n, "value"), num(n, "delta"), want[i].value,
		    want[i].delta);
	}
	/* B-only children come in name order with A's. */
	n = json_array_get(
	    json_object_get(node_at(j, "/usr/bin/app"), "children"), 1);
	ck_assert_str_eq(
	    json_string_value(json_object_get(n, "name")), "other");
	ck_assert_double_eq_tol(num(j, "base_total"), 14, 1e-9);
	ck_assert_double_eq_tol(num(j, "base_covered_ns"), 120.0 * NS, 1);
	json_decref(j);
	vitals_profile_free(pa);
	vitals_profile_free(pb);
	fx_free(fa);
	fx_free(fb);
}
END_TEST

/* ---- epochs: without the vital, rollups ---- */

START_TEST(test_no_vital)
{
	static const struct fx_sample v[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 5, "main" },
	};
	struct fx *f = fx_new("sched", "ns", T0, 60, v, 1);
	struct vitals_profile *p = profile_of("cpu", NULL, &f, 1);
	const struct vitals_profile_stats *st = vitals_profile_stats(p);
	char *folded = folded_of(p), *out = NULL;
	size_t len = 0;
	json_t *j = json_of(p, NULL);

	ck_assert_uint_eq(st->epochs, 1);
	ck_assert_uint_eq(st->vital_epochs, 0);
	ck_assert_uint_eq(st->covered_ns, 60 * NS);
	ck_assert_uint_eq(st->samples, 0);
	ck_assert_str_eq(st->unit, "");
	ck_assert_str_eq(folded, "");
	ck_assert_double_eq(num(j, "value"), 0);
	ck_assert_ptr_null(json_object_get(j, "children"));
	ck_assert_int_eq(vitals_profile_pprof(p, &out, &len), 0);
	ck_assert_uint_gt(len, 10);
	free(out);
	json_decref(j);
	free(folded);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/*
 * A rollup of two 60 s base epochs: label A counted 2 in the first and
 * 5 in the second, B 6 in the second; the slot's counter is 13.  As runs
 * A stands for 7 and B for 6; as one run A's rise would be 2 + 3.
 */
START_TEST(test_rollup_runs)
{
	static const struct fx_sample v[] = {
		{ "/a", "a", 1, 0xa, 2, "fa" },
		{ "/a", "a", 1, 0xa, 5, "fa" },
		{ "/a", "a", 1, 0xb, 6, "fb" },
	};
	struct fx *f = fx_new("cpu", "samples", T0, 120, v, 3);
	struct vitals_profile *p = vitals_profile_new("cpu", NULL);
	json_t *j;

	f->s[0].ts_ns = T0 + 10 * NS;
	f->s[1].ts_ns = T0 + 70 * NS;
	f->s[2].ts_ns = T0 + 80 * NS;
	f->s[2].weight = 6; /* not a first sighting in A's count */
	f->hca[1] = 13;
	vitals_profile_set_base(p, 60 * NS);
	ck_assert_int_eq(vitals_profile_add(p, &f->e), 0);
	j = json_of(p, NULL);
	ck_assert_double_eq_tol(num(node_at(j, "/a;fa"), "value"), 7, 1e-9);
	ck_assert_double_eq_tol(num(node_at(j, "/a;fb"), "value"), 6, 1e-9);
	json_decref(j);
	vitals_profile_free(p);
	p = profile_of("cpu", NULL, &f, 1);
	j = json_of(p, NULL);
	ck_assert_double_eq_tol(
	    num(node_at(j, "/a;fa"), "value"), 13.0 * 5 / 11, 1e-9);
	json_decref(j);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* ---- pprof ---- */

/* gunzip buf[0..len) into a malloc'd *out. */
static size_t
gunzip(const char *buf, size_t len, uint8_t **out)
{
	size_t cap = 1 << 20;
	z_stream z;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 15 + 32), Z_OK);
	*out = malloc(cap);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
	return z.total_out;
}

/* The profile p as pprof, decoded back. */
static Perftools__Profiles__Profile *
pprof_of(const struct vitals_profile *p)
{
	Perftools__Profiles__Profile *pr;
	uint8_t *raw;
	char *out = NULL;
	size_t len = 0, n;

	ck_assert_int_eq(vitals_profile_pprof(p, &out, &len), 0);
	ck_assert_uint_gt(len, 2);
	ck_assert(out[0] == '\x1f' && out[1] == '\x8b'); /* gzip */
	n = gunzip(out, len, &raw);
	pr = perftools__profiles__profile__unpack(NULL, n, raw);
	ck_assert_ptr_nonnull(pr);
	free(raw);
	free(out);
	return pr;
}

static const char *
pstr(const Perftools__Profiles__Profile *pr, int64_t i)
{
	ck_assert(i >= 0 && (size_t)i < pr->n_string_table);
	return pr->string_table[i];
}

static const Perftools__Profiles__Location *
ploc(const Perftools__Profiles__Profile *pr, uint64_t id)
{
	size_t i;

	for (i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == id)
			return pr->location[i];
	ck_abort_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Mapping *
pmap(const Perftools__Profiles__Profile *pr, uint64_t id)
{
	size_t i;

	for (i = 0; i < pr->n_mapping; i++)
		if (pr->mapping[i]->id == id)
			return pr->mapping[i];
	return NULL;
}

/* The name of location id's function. */
static const char *
pfunc(const Perftools__Profiles__Profile *pr, uint64_t id)
{
	const Perftools__Profiles__Location *l = ploc(pr, id);
	size_t i;

	ck_assert_uint_eq(l->n_line, 1);
	for (i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == l->line[0]->function_id)
			return pstr(pr, pr->function[i]->name);
	ck_abort_msg(
	    "no function %llu", (unsigned long long)l->line[0]->function_id);
	return NULL;
}

/* The sample whose label exe is exe. */
static const Perftools__Profiles__Sample *
psample(const Perftools__Profiles__Profile *pr, const char *exe)
{
	const Perftools__Profiles__Sample *s;
	size_t i;

	for (i = 0; i < pr->n_sample; i++) {
		s = pr->sample[i];
		ck_assert_uint_eq(s->n_label, 1);
		ck_assert_str_eq(pstr(pr, s->label[0]->key), "exe");
		if (strcmp(pstr(pr, s->label[0]->str), exe) == 0)
			return s;
	}
	ck_abort_msg("no sample of %s", exe);
	return NULL;
}

/* Sample, locations, functions and mappings of a known profile. */
START_TEST(test_pprof)
{
	static const struct fx_sample v[] = {
		{ "/usr/bin/app", "app", 1, 0x10, 6,
		    "m:3+0x1234;m:4+0x99=memcpy;k:sys_read;k:vfs_read+0x1a" },
		{ "/usr/bin/tool", "tool", 2, 0x20, 3,
		    "0x7f0012345678;k:vfs_read+0x2b" },
		{ "/usr/bin/tool", "tool", 5, 0x21, 1,
		    "0x7f0012345678;k:vfs_read+0x2b" },
	};
	struct fx *f = fx_new("sched", "ns", T0, 60, v, 3);
	const Perftools__Profiles__Mapping *app, *libc, *kern;
	const Perftools__Profiles__Sample *s;
	const Perftools__Profiles__Location *l;
	Perftools__Profiles__Profile *pr;
	struct vitals_profile *p;
	int64_t w = 0, n = 0;
	size_t i;

	fx_module(f, 3, "/usr/bin/app", "aabbccdd");
	fx_module(f, 4, "/lib/x86_64-linux-gnu/libc.so.6", "eeff");
	p = profile_of("sched", NULL, &f, 1);
	pr = pprof_of(p);
	ck_assert_str_eq(pstr(pr, 0), "");
	ck_assert_uint_eq(pr->n_sample_type, 2);
	ck_assert_str_eq(pstr(pr, pr->sample_type[0]->type), "sched");
	ck_assert_str_eq(pstr(pr, pr->sample_type[0]->unit), "nanoseconds");
	ck_assert_str_eq(pstr(pr, pr->sample_type[1]->type), "samples");
	ck_assert_str_eq(pstr(pr, pr->sample_type[1]->unit), "count");
	ck_assert_str_eq(pstr(pr, pr->default_sample_type), "sched");
	ck_assert_ptr_nonnull(pr->period_type);
	ck_assert_str_eq(pstr(pr, pr->period_type->type), "sched");
	/* Values are whole counts, not samples of one every t (4 here). */
	ck_assert_int_eq(pr->period, 1);
	ck_assert_int_eq(pr->time_nanos, (int64_t)T0);
	ck_assert_int_eq(pr->duration_nanos, (int64_t)(60 * NS));
	/* One sample per distinct stack: tool's two samples share one. */
	ck_assert_uint_eq(pr->n_sample, 2);
	for (i = 0; i < pr->n_sample; i++) {
		ck_assert_uint_eq(pr->sample[i]->n_value, 2);
		w += pr->sample[i]->value[0];
		n += pr->sample[i]->value[1];
	}
	ck_assert_int_eq(w, 10);
	ck_assert_int_eq(n, 3);
	s = psample(pr, "/usr/bin/tool");
	ck_assert_int_eq(s->value[0], 4);
	ck_assert_int_eq(s->value[1], 2);
	/* Locations innermost first, named as the tree names frames. */
	s = psample(pr, "/usr/bin/app");
	ck_assert_uint_eq(s->n_location_id, 4);
	ck_assert_str_eq(pfunc(pr, s->location_id[0]), "vfs_read");
	ck_assert_str_eq(pfunc(pr, s->location_id[1]), "sys_read");
	ck_assert_str_eq(pfunc(pr, s->location_id[2]), "memcpy");
	ck_assert_str_eq(pfunc(pr, s->location_id[3]), "app+0x1234");
	/* Mappings: the modules with their build-ids, and the kernel. */
	ck_assert_uint_eq(pr->n_mapping, 3);
	l = ploc(pr, s->location_id[3]);
	ck_assert_ptr_nonnull(app = pmap(pr, l->mapping_id));
	ck_assert_str_eq(pstr(pr, app->filename), "/usr/bin/app");
	ck_assert_str_eq(pstr(pr, app->build_id), "aabbccdd");
	ck_assert_uint_eq(l->address, app->memory_start + 0x1234);
	ck_assert_uint_lt(l->address, app->memory_limit);
	ck_assert(!app->has_functions); /* pprof may symbolize it */
	l = ploc(pr, s->location_id[2]);
	ck_assert_ptr_nonnull(libc = pmap(pr, l->mapping_id));
	ck_assert_str_eq(pstr(pr, libc->build_id), "eeff");
	ck_assert_uint_eq(l->address, libc->memory_start + 0x99);
	ck_assert(libc->has_functions);
	ck_assert(libc->memory_start >= app->memory_limit ||
	    app->memory_start >= libc->memory_limit);
	l = ploc(pr, s->location_id[0]);
	ck_assert_ptr_nonnull(kern = pmap(pr, l->mapping_id));
	ck_assert_str_eq(pstr(pr, kern->filename), "[kernel]");
	ck_assert(kern->has_functions);
	ck_assert(l->address >= kern->memory_start &&
	    l->address < kern->memory_limit);
	/* vfs_read at two addresses: two locations, one function. */
	s = psample(pr, "/usr/bin/tool");
	ck_assert_uint_ne(
	    s->location_id[0], psample(pr, "/usr/bin/app")->location_id[0]);
	ck_assert_str_eq(pfunc(pr, s->location_id[0]), "vfs_read");
	ck_assert_uint_eq(ploc(pr, s->location_id[1])->mapping_id, 0); /* raw */
	ck_assert_str_eq(pfunc(pr, s->location_id[1]), "0x7f0012345678");
	ck_assert_uint_eq(pr->n_function, 5);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* The pprof unit of each vital unit. */
static const struct {
	const char *unit, *pprof;
} units[] = {
	{ "samples", "count" },
	{ "ns", "nanoseconds" },
	{ "bytes", "bytes" },
	{ "pages", "count" },
	{ "calls", "count" },
};

START_TEST(test_pprof_units)
{
	static const struct fx_sample v[] = {
		{ "/a", "a", 1, 0x10, 5, "main" },
	};
	struct fx *f = fx_new("v", units[_i].unit, T0, 60, v, 1);
	struct vitals_profile *p = profile_of("v", NULL, &f, 1);
	Perftools__Profiles__Profile *pr = pprof_of(p);

	ck_assert_str_eq(pstr(pr, pr->sample_type[0]->unit), units[_i].pprof);
	ck_assert_int_eq(pr->sample[0]->value[0], 5);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	vitals_profile_free(p);
	fx_free(f);
}
END_TEST

/* ---- ranges of a store ---- */

/* Save an epoch of host starting at T0 + min minutes, of weight w. */
static void
save(const char *host, unsigned min, uint64_t w)
{
	struct fx_sample v[] = { { "/usr/bin/app", "app", 1, 0x10, w,
	    "m:1+0x40;main;k:f" } };
	struct fx *f = fx_new("cpu", "samples", T0 + min * 60 * NS, 60, v, 1);
	char err[512] = "";

	fx_module(f, 1, "/usr/bin/app", "abcd");
	f->e.host = host;
	ck_assert_msg(vitals_epoch_save(
			  &f->e, testutil_dir, NULL, 0, err, sizeof(err)) == 0,
	    "save: %s", err);
	fx_free(f);
}

/* A range of the store: hosts, corrupt files, no data, no store. */
START_TEST(test_range)
{
	const char *const h2[] = { "h2" };
	struct vitals_profile *p;
	char err[512], path[1024], *folded;
	FILE *fp;
	int r;

	save("h1", 0, 3);
	save("h1", 1, 4);
	save("h2", 1, 10);
	save("h1", 5, 100); /* after the range */
	snprintf(path, sizeof(path),
	    "%s/2023-11-14/20231114T000200.000Z_h1.json.gz", testutil_dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs("not gzip", fp);
	fclose(fp);

	p = vitals_profile_new("cpu", NULL);
	r = vitals_profile_range(
	    p, testutil_dir, T0, T0 + 5 * 60 * NS, NULL, 0, err, sizeof(err));
	ck_assert_msg(r == 0, "range: %d %s", r, err);
	ck_assert_uint_eq(vitals_profile_stats(p)->epochs, 3);
	ck_assert_uint_eq(vitals_profile_stats(p)->skipped, 1);
	ck_assert_msg(strstr(err, "20231114T000200.000Z_h1") != NULL,
	    "skip reason: %s", err);
	ck_assert_double_eq_tol(vitals_profile_stats(p)->total, 17, 1e-9);
	folded = folded_of(p);
	ck_assert_str_eq(folded, "/usr/bin/app;app+0x40;main;f 17\n");
	free(folded);
	vitals_profile_free(p);

	p = vitals_profile_new("cpu", NULL);
	ck_assert_int_eq(vitals_profile_range(p, testutil_dir, T0,
			     T0 + 5 * 60 * NS, h2, 1, err, sizeof(err)),
	    0);
	ck_assert_double_eq_tol(vitals_profile_stats(p)->total, 10, 1e-9);
	ck_assert_uint_eq(vitals_profile_stats(p)->skipped, 0);
	ck_assert_str_eq(err, "");
	vitals_profile_free(p);

	p = vitals_profile_new("cpu", NULL);
	ck_assert_int_eq(vitals_profile_range(p, testutil_dir, T0 + 3600 * NS,
			     T0 + 7200 * NS, NULL, 0, err, sizeof(err)),
	    -ENODATA);
	ck_assert_msg(strstr(err, "no epoch") != NULL, "%s", err);
	snprintf(path, sizeof(path), "%s/nowhere", testutil_dir);
	ck_assert_int_eq(vitals_profile_range(p, path, T0, T0 + 60 * NS, NULL,
			     0, err, sizeof(err)),
	    -ENOENT);
	ck_assert_msg(strstr(err, "nowhere") != NULL, "%s", err);
	vitals_profile_free(p);
}
END_TEST

static Suite *
profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *t = tcase_create("tree");
	TCase *pp = tcase_create("pprof");
	TCase *st = tcase_create("store");

	tcase_add_loop_test(t, test_totals, 0, NCASES(totals));
	tcase_add_test(t, test_merge);
	tcase_add_loop_test(t, test_exe_filter, 0, NCASES(exes));
	tcase_add_test(t, test_tree_order);
	tcase_add_test(t, test_folded_rounding);
	tcase_add_test(t, test_folded_names);
	tcase_add_test(t, test_diff);
	tcase_add_test(t, test_no_vital);
	tcase_add_test(t, test_rollup_runs);
	suite_add_tcase(s, t);
	tcase_add_test(pp, test_pprof);
	tcase_add_loop_test(pp, test_pprof_units, 0, NCASES(units));
	suite_add_tcase(s, pp);
	tcase_add_checked_fixture(
	    st, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(st, test_range);
	suite_add_tcase(s, st);
	return s;
}

int
main(void)
{
	return testutil_run(profile_suite());
}
