/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the aggregator: slot alignment, HCA folding, rollups
 * (exact sums, folding of mixed sizes, the sample bound), queues and
 * peers seen by filters, live rollups, the `timescales` setting, the
 * cache, and range queries whose cached results follow filter options
 * and epoch files.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vitals/aggregate.h>
#include <vitals/store.h>

#include "aggregate.h"
#include "cache.h"
#include "codec.h"
#include "epoch_json.h"
#include "config.h"
#include "epoch.h"
#include "instance.h"
#include "labels.h"
#include "rollup.h"
#include "testutil.h"

#define NS 1000000000ull
#define FX_VITALS 3
#define FX_HCA 1024
#define FX_SAMPLES 16
/* 2026-11-22T10:00:00Z, a multiple of one day plus 10 hours. */
#define T0 (1795341600ull * NS)

static const char *const fx_names[FX_VITALS] = { "cpu", "diskio", "sched" };

/* A hand-made epoch and the memory it points to. */
struct fx {
	struct vitals_epoch e;
	struct vitals_vital_epoch v[FX_VITALS];
	uint64_t hca[FX_VITALS][FX_HCA];
	struct vitals_sample s[FX_VITALS][FX_SAMPLES];
	uint64_t frames[FX_VITALS][FX_SAMPLES][2];
	char host[32];
};

static uint64_t
rnd(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * An epoch of host at start, len seconds long, vitals with m counters and
 * ns samples each, filled from seed.
 */
static struct fx *
fx_new(const char *host, uint64_t start, uint32_t len, uint32_t m, uint32_t ns,
    uint64_t seed)
{
	struct fx *f = calloc(1, sizeof(*f));
	uint32_t i, j;

	ck_assert_ptr_nonnull(f);
	snprintf(f->host, sizeof(f->host), "%s", host);
	for (i = 0; i < FX_VITALS; i++) {
		for (j = 0; j < m; j++)
			f->hca[i][j] =
			    rnd(&seed) % 4 == 0 ? rnd(&seed) % 1000 : 0;
		for (j = 0; j < m; j++) {
			f->v[i].events += f->hca[i][j] > 0;
			f->v[i].wsum += f->hca[i][j];
		}
		for (j = 0; j < ns; j++) {
			f->frames[i][j][0] = rnd(&seed);
			f->frames[i][j][1] = rnd(&seed);
			f->s[i][j] = (struct vitals_sample){ .ts_ns = start + j,
				.label = rnd(&seed) % 64,
				.weight = 1 + j % 3,
				.count = rnd(&seed) % 10000,
				.slot = (uint32_t)(rnd(&seed) % m),
				.exe_id = 7,
				.pid = 100 + j,
				.tid = 100 + j,
				.nkstack = 1,
				.nustack = 1,
				.kstack = &f->frames[i][j][0],
				.ustack = &f->frames[i][j][1],
				.exe = "/usr/bin/x",
				.comm = "x" };
		}
		f->v[i].name = fx_names[i];
		f->v[i].unit = "samples";
		f->v[i].threshold = 2u << (seed % 4);
		f->v[i].floor = 1;
		f->v[i].unique = 10 + seed % 7;
		f->v[i].dropped = seed % 5;
		f->v[i].samples_dropped = seed % 3;
		f->v[i].hca_size = m;
		f->v[i].hca = f->hca[i];
		f->v[i].nsamples = ns;
		f->v[i].samples = f->s[i];
	}
	f->e = (struct vitals_epoch){ .host = f->host,
		.start_ns = start,
		.length_ns = (uint64_t)len * NS,
		.timescale_s = len,
		.seq = seed,
		.dropped = seed % 11,
		.cpu_ns = 1000 + seed,
		.nvitals = FX_VITALS,
		.vitals = f->v };
	return f;
}

/* ---- slots and folding ---- */

static const struct {
	uint64_t ts, len, want;
} slot_cases[] = {
	{ T0 + 7 * 60 * NS + 5, 300 * NS, T0 + 5 * 60 * NS },
	{ T0 + 59 * 60 * NS, 3600 * NS, T0 },
	{ T0 + 13 * 3600 * NS, 86400 * NS, T0 - 10 * 3600 * NS },
	{ T0, 300 * NS, T0 },
	{ T0 + 1, 0, T0 + 1 },
	{ 59 * NS, 60 * NS, 0 },
};

START_TEST(test_slot_start)
{
	ck_assert_uint_eq(
	    vitals_slot_start(slot_cases[_i].ts, slot_cases[_i].len),
	    slot_cases[_i].want);
}
END_TEST

START_TEST(test_fold)
{
	uint64_t hca[FX_HCA], orig[FX_HCA], seed = 42, want;
	uint32_t i, j;

	for (i = 0; i < FX_HCA; i++)
		orig[i] = hca[i] = rnd(&seed) % 100000;
	ck_assert_int_eq(vitals_hca_fold(hca, FX_HCA, 64), 0);
	for (i = 0; i < 64; i++) {
		for (want = 0, j = i; j < FX_HCA; j += 64)
			want += orig[j];
		ck_assert_uint_eq(hca[i], want);
	}
	ck_assert_int_eq(vitals_hca_fold(hca, FX_HCA, 48), -EINVAL);
	ck_assert_int_eq(vitals_hca_fold(hca, 64, 128), -EINVAL);
	ck_assert_int_eq(vitals_hca_fold(hca, 100, 4), -EINVAL);
	ck_assert_int_eq(vitals_hca_fold(NULL, 64, 4), -EINVAL);
}
END_TEST

/* ---- rollups ---- */

START_TEST(test_rollup_sums)
{
	const struct vitals_epoch *v[5];
	struct vitals_epoch *r;
	struct fx *f[5];
	uint64_t sum, len = 0, cpu = 0, dropped = 0, thr;
	uint32_t i, k, j;

	for (i = 0; i < 5; i++) {
		f[i] = fx_new("h1", T0 + i * 60 * NS, 60, FX_HCA, 4, 100 + i);
		v[i] = &f[i]->e;
		len += v[i]->length_ns;
		cpu += v[i]->cpu_ns;
		dropped += v[i]->dropped;
	}
	ck_assert_int_eq(vitals_epoch_rollup(v, 5, T0, 300, 0, &r), 0);
	ck_assert_str_eq(r->host, "h1");
	ck_assert_uint_eq(r->start_ns, T0);
	ck_assert_uint_eq(r->timescale_s, 300);
	ck_assert_uint_eq(r->length_ns, len);
	ck_assert_uint_eq(r->partial, 0);
	ck_assert_uint_eq(r->cpu_ns, cpu);
	ck_assert_uint_eq(r->dropped, dropped);
	ck_assert_uint_eq(r->nfindings, 0);
	ck_assert_uint_eq(r->nvitals, FX_VITALS);
	for (k = 0; k < FX_VITALS; k++) {
		ck_assert_str_eq(r->vitals[k].name, fx_names[k]);
		ck_assert_uint_eq(r->vitals[k].hca_size, FX_HCA);
		for (j = 0; j < FX_HCA; j++) {
			for (sum = 0, i = 0; i < 5; i++)
				sum += f[i]->hca[k][j];
			ck_assert_uint_eq(r->vitals[k].hca[j], sum);
		}
		for (sum = 0, thr = 0, i = 0; i < 5; i++) {
			sum += f[i]->v[k].wsum;
			thr = f[i]->v[k].threshold > thr ? f[i]->v[k].threshold
							 : thr;
		}
		ck_assert_uint_eq(r->vitals[k].wsum, sum);
		ck_assert_uint_eq(r->vitals[k].threshold, thr);
		for (sum = 0, i = 0; i < 5; i++)
			sum += f[i]->v[k].events;
		ck_assert_uint_eq(r->vitals[k].events, sum);
		/* Linear counting over the sum: at least each input's. */
		for (i = 0; i < 5; i++)
			ck_assert_uint_ge(
			    r->vitals[k].unique, f[i]->v[k].unique);
	}
	vitals_epoch_free(r);
	/* Four of five minutes: the rollup is short of its slot. */
	ck_assert_int_eq(vitals_epoch_rollup(v, 4, T0, 300, 0, &r), 0);
	ck_assert_uint_eq(r->partial, 1);
	vitals_epoch_free(r);
	ck_assert_int_eq(vitals_epoch_rollup(v, 0, T0, 300, 0, &r), -EINVAL);
	for (i = 0; i < 5; i++)
		free(f[i]);
}
END_TEST

/* Vital k of rollup r has 128 counters, want's, and slots within them. */
static void
fold_check(const struct vitals_epoch *r, uint32_t k, const uint64_t *want)
{
	uint32_t i;

	ck_assert_uint_eq(r->vitals[k].hca_size, 128);
	for (i = 0; i < 128; i++)
		ck_assert_uint_eq(r->vitals[k].hca[i], want[i]);
	for (i = 0; i < r->vitals[k].nsamples; i++)
		ck_assert_uint_lt(r->vitals[k].samples[i].slot, 128);
}

/*
 * Sizes as an adaptive HCA leaves them (512, then 1024, then 128): the
 * sum folded to the smallest, whatever the order.
 */
START_TEST(test_rollup_fold_three)
{
	struct fx *f[3] = { fx_new("h", T0, 60, 512, 8, 3),
		fx_new("h", T0 + 60 * NS, 60, FX_HCA, 8, 4),
		fx_new("h", T0 + 120 * NS, 60, 128, 8, 5) };
	const struct vitals_epoch *v[3] = { &f[0]->e, &f[1]->e, &f[2]->e };
	struct vitals_epoch *r;
	uint64_t want[128];
	uint32_t i, j, k;

	ck_assert_int_eq(vitals_epoch_rollup(v, 3, T0, 300, 0, &r), 0);
	for (k = 0; k < FX_VITALS; k++) {
		memset(want, 0, sizeof(want));
		for (j = 0; j < 3; j++)
			for (i = 0; i < f[j]->v[k].hca_size; i++)
				want[i & 127] += f[j]->hca[k][i];
		fold_check(r, k, want);
	}
	vitals_epoch_free(r);
	for (j = 0; j < 3; j++)
		free(f[j]);
}
END_TEST

/* Sizes 1024 and 128: the result is the 128-counter fold of the sum. */
START_TEST(test_rollup_fold_mixed)
{
	struct fx *a = fx_new("h", T0, 60, FX_HCA, 8, 1);
	struct fx *b = fx_new("h", T0 + 60 * NS, 60, 128, 8, 2);
	const struct vitals_epoch *v[2] = { &a->e, &b->e };
	struct vitals_epoch *r;
	uint64_t want[FX_HCA];
	uint32_t i, k;

	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 0, &r), 0);
	for (k = 0; k < FX_VITALS; k++) {
		memcpy(want, a->hca[k], sizeof(want));
		vitals_hca_fold(want, FX_HCA, 128);
		for (i = 0; i < 128; i++)
			want[i] += b->hca[k][i];
		fold_check(r, k, want);
	}
	vitals_epoch_free(r);
	/* The same the other way round. */
	v[0] = &b->e;
	v[1] = &a->e;
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 0, &r), 0);
	ck_assert_uint_eq(r->vitals[0].hca_size, 128);
	vitals_epoch_free(r);
	free(a);
	free(b);
}
END_TEST

static int
count_cmp(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return *a < *b ? 1 : *a > *b ? -1 : 0;
}

/* The kept samples are the `bound` largest counts, whatever the order. */
START_TEST(test_rollup_sample_bound)
{
	const uint32_t bound = 5;
	struct fx *f[4];
	const struct vitals_epoch *v[4], *w[4];
	struct vitals_epoch *r1, *r2, *r0;
	uint64_t counts[4 * FX_SAMPLES], dropped = 0;
	uint32_t i, j, n = 0;

	for (i = 0; i < 4; i++) {
		f[i] =
		    fx_new("h", T0 + i * 60 * NS, 60, 256, FX_SAMPLES, 7 + i);
		v[i] = &f[i]->e;
		w[3 - i] = &f[i]->e;
		for (j = 0; j < FX_SAMPLES; j++)
			counts[n++] = f[i]->s[0][j].count;
		dropped += f[i]->v[0].samples_dropped;
	}
	qsort(counts, n, sizeof(counts[0]), count_cmp);
	ck_assert_int_eq(vitals_epoch_rollup(v, 4, T0, 300, bound, &r1), 0);
	ck_assert_int_eq(vitals_epoch_rollup(w, 4, T0, 300, bound, &r2), 0);
	ck_assert_uint_eq(r1->vitals[0].nsamples, bound);
	for (j = 0; j < bound; j++) {
		ck_assert_uint_eq(r1->vitals[0].samples[j].count, counts[j]);
		ck_assert_uint_eq(r2->vitals[0].samples[j].count, counts[j]);
		ck_assert_uint_eq(r1->vitals[0].samples[j].label,
		    r2->vitals[0].samples[j].label);
		ck_assert_str_eq(r1->vitals[0].samples[j].exe, "/usr/bin/x");
		ck_assert_uint_eq(r1->vitals[0].samples[j].nkstack, 1);
	}
	ck_assert_uint_eq(r1->vitals[0].samples_dropped, dropped + n - bound);
	/* No bound given: the largest nsamples of the inputs. */
	ck_assert_int_eq(vitals_epoch_rollup(v, 4, T0, 300, 0, &r0), 0);
	ck_assert_uint_eq(r0->vitals[0].nsamples, FX_SAMPLES);
	ck_assert_uint_eq(r0->vitals[0].samples[FX_SAMPLES - 1].count,
	    counts[FX_SAMPLES - 1]);
	vitals_epoch_free(r0);
	vitals_epoch_free(r1);
	vitals_epoch_free(r2);
	for (i = 0; i < 4; i++)
		free(f[i]);
}
END_TEST

/* Vitals missing from some epochs, hosts that differ. */
START_TEST(test_rollup_union)
{
	struct fx *a = fx_new("a", T0, 60, 64, 2, 1);
	struct fx *b = fx_new("b", T0 + 60 * NS, 60, 64, 2, 2);
	const struct vitals_epoch *v[2] = { &a->e, &b->e };
	struct vitals_epoch *r;

	a->e.nvitals = 1; /* cpu only */
	b->e.vitals = &b->v[1]; /* diskio, sched */
	b->e.nvitals = 2;
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 0, &r), 0);
	ck_assert_str_eq(r->host, "*");
	ck_assert_uint_eq(r->nvitals, 3);
	ck_assert_str_eq(r->vitals[0].name, "cpu");
	ck_assert_str_eq(r->vitals[1].name, "diskio");
	ck_assert_str_eq(r->vitals[2].name, "sched");
	ck_assert_uint_eq(r->vitals[0].wsum, a->v[0].wsum);
	ck_assert_uint_eq(r->vitals[2].wsum, b->v[2].wsum);
	vitals_epoch_free(r);
	free(a);
	free(b);
}
END_TEST

/* The user frame of kept sample i of r's first vital as "path+0xoff". */
static void
frame_name(const struct vitals_epoch *r, uint32_t i, char *buf, size_t len)
{
	const struct vitals_sample *s = &r->vitals[0].samples[i];
	const struct vitals_module *m;

	ck_assert_uint_eq(s->nustack, 1);
	m = vitals_epoch_module(
	    r, (uint32_t)VITALS_UFRAME_MODULE(s->ustack[0]));
	snprintf(buf, len, "%s@%s+0x%llx", m ? m->path : "?",
	    m ? m->build_id : "?",
	    (unsigned long long)VITALS_UFRAME_OFFSET(s->ustack[0]));
}

/*
 * Module ids are each collector's own: two runs give the same file
 * different ids and one id to different files.  A rollup unites their
 * tables by file and keeps the modules its samples refer to, and its
 * samples keep their user symbols.
 */
START_TEST(test_rollup_modules)
{
	struct fx *a = fx_new("a", T0, 60, 64, 1, 1);
	struct fx *b = fx_new("a", T0 + 60 * NS, 60, 64, 2, 2);
	const struct vitals_epoch *v[2] = { &a->e, &b->e };
	const struct vitals_module ma[] = { { 0, "/bin/x", "aa" },
		{ 1, "/lib/libc.so.6", "cc" } };
	const struct vitals_module mb[] = { { 0, "/lib/libc.so.6", "cc" },
		{ 1, "/bin/x", "bb" }, { 5, "/bin/unused", "" } };
	const char *syms[2][2] = { { "k_a", "u_a" }, { "k_b0", "u_b0" } };
	struct vitals_epoch *r;
	char got[3][64];
	uint32_t i;

	a->e.nvitals = b->e.nvitals = 1;
	a->e.modules = ma;
	a->e.nmodules = 2;
	b->e.modules = mb;
	b->e.nmodules = 3;
	/* a: /bin/x (aa) +0x10; b: libc +0x20, then /bin/x (bb) +0x30. */
	a->frames[0][0][1] = VITALS_UFRAME(0, 0x10);
	b->frames[0][0][1] = VITALS_UFRAME(0, 0x20);
	b->frames[0][1][1] = VITALS_UFRAME(1, 0x30);
	a->s[0][0].count = 300;
	b->s[0][0].count = 200;
	b->s[0][1].count = 100;
	a->s[0][0].ksyms = syms[0];
	b->s[0][0].ksyms = syms[1];
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 0, &r), 0);
	ck_assert_uint_eq(r->vitals[0].nsamples, 2); /* the bound: 2 */
	for (i = 0; i < 2; i++)
		frame_name(r, i, got[i], sizeof(got[i]));
	ck_assert_str_eq(got[0], "/bin/x@aa+0x10");
	ck_assert_str_eq(got[1], "/lib/libc.so.6@cc+0x20");
	ck_assert_str_eq(r->vitals[0].samples[0].ksyms[1], "u_a");
	ck_assert_str_eq(r->vitals[0].samples[1].ksyms[1], "u_b0");
	/* Only the modules of kept samples: /bin/x (aa) and libc. */
	ck_assert_uint_eq(r->nmodules, 2);
	vitals_epoch_free(r);

	/* Kept all: the same path with another build-id is another file. */
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 3, &r), 0);
	ck_assert_uint_eq(r->vitals[0].nsamples, 3);
	frame_name(r, 2, got[2], sizeof(got[2]));
	ck_assert_str_eq(got[2], "/bin/x@bb+0x30");
	ck_assert_uint_eq(r->nmodules, 3);
	for (i = 1; i < r->nmodules; i++)
		ck_assert_uint_lt(r->modules[i - 1].id, r->modules[i].id);
	vitals_epoch_free(r);
	free(a);
	free(b);
}
END_TEST

/*
 * Kernel frames stored by image ("[kernel]", core/kernel/kaddr.h) are
 * united by image as user frames are, whatever id each run gave it; an
 * older epoch's raw kernel address stays as it is; an unnamed frame
 * reads "[kernel]+0xOFF" in the rollup as in its epoch.
 */
START_TEST(test_rollup_kernel_frames)
{
	struct fx *a = fx_new("a", T0, 60, 64, 1, 1);
	struct fx *b = fx_new("a", T0 + 60 * NS, 60, 64, 1, 2);
	const struct vitals_epoch *v[2] = { &a->e, &b->e };
	const struct vitals_module ma[] = { { 0, "[kernel]", "" },
		{ 1, "/bin/x", "aa" } };
	const struct vitals_module mb[] = { { 3, "/bin/x", "aa" },
		{ 4, "[kernel:ext4]", "" }, { 9, "[kernel]", "" } };
	const struct vitals_sample *s;
	const struct vitals_module *m;
	struct vitals_epoch *r;
	char buf[LABELS_FRAME_LEN];
	uint32_t i, seen = 0;

	a->e.nvitals = b->e.nvitals = 1;
	a->e.modules = ma;
	a->e.nmodules = 2;
	b->e.modules = mb;
	b->e.nmodules = 3;
	a->frames[0][0][0] = VITALS_UFRAME(0, 0x1234);
	a->frames[0][0][1] = VITALS_UFRAME(1, 0x10);
	b->frames[0][0][0] = VITALS_UFRAME(9, 0x5678);
	b->frames[0][0][1] = VITALS_UFRAME(3, 0x20);
	ck_assert_str_eq(
	    labels_frame(&b->e, &b->s[0][0], 1, 0, 0, buf, sizeof(buf)),
	    "[kernel]+0x5678");
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 3, &r), 0);
	ck_assert_uint_eq(r->vitals[0].nsamples, 2);
	for (i = 0; i < 2; i++) {
		s = &r->vitals[0].samples[i];
		m = vitals_epoch_module(
		    r, (uint32_t)VITALS_UFRAME_MODULE(s->kstack[0]));
		ck_assert_ptr_nonnull(m);
		ck_assert_str_eq(m->path, "[kernel]");
		labels_frame(r, s, 1, 0, 0, buf, sizeof(buf));
		seen |= strcmp(buf, "[kernel]+0x1234") == 0 ? 1
		    : strcmp(buf, "[kernel]+0x5678") == 0   ? 2
							    : 4;
	}
	ck_assert_uint_eq(seen, 3);
	/* One image for both runs, and ext4 (no frame) left out. */
	ck_assert_uint_eq(r->nmodules, 2);
	vitals_epoch_free(r);

	/* A raw address of an older epoch names no module: kept as it is. */
	a->frames[0][0][0] = 0xffffffff81234567ULL;
	ck_assert_int_eq(vitals_epoch_rollup(v, 2, T0, 300, 3, &r), 0);
	for (i = 0; i < 2; i++)
		if (r->vitals[0].samples[i].kstack[0] == 0xffffffff81234567ULL)
			seen |= 8;
	ck_assert_uint_eq(seen, 11);
	vitals_epoch_free(r);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_copy)
{
	struct fx *a = fx_new("a", T0, 60, 64, 3, 9);
	struct vitals_finding fi = { .start_ns = T0,
		.end_ns = T0 + 60 * NS,
		.severity = VITALS_SEV_WARN,
		.filter = "x",
		.vital = "cpu",
		.text = "t" };
	struct vitals_metric me = { .name = NULL,
		.unit = "%",
		.mean = 2,
		.min = 1,
		.max = 3,
		.last = 2,
		.n = 4 };
	struct vitals_module mo = { .id = 7, .path = NULL, .build_id = "ab" };
	struct vitals_epoch *c;
	json_t *ja, *jc;

	a->e.findings = &fi;
	a->e.nfindings = 1;
	me.name = strdup("proc.cpu.user_pct");
	mo.path = strdup("/usr/lib/libc.so.6");
	a->e.metrics = &me;
	a->e.nmetrics = 1;
	a->e.modules = &mo;
	a->e.nmodules = 1;
	ck_assert_ptr_nonnull(c = epoch_copy(&a->e));
	free(a); /* the copy owns all it points to */
	free((char *)me.name);
	free((char *)mo.path);
	memset(&me, 0, sizeof(me));
	memset(&mo, 0, sizeof(mo));
	ck_assert_uint_eq(c->nmetrics, 1);
	ck_assert_str_eq(c->metrics[0].name, "proc.cpu.user_pct");
	ck_assert_uint_eq(c->nmodules, 1);
	ck_assert_uint_eq(c->modules[0].id, 7);
	ck_assert_str_eq(c->modules[0].path, "/usr/lib/libc.so.6");
	c->metrics = NULL; /* compared below without them */
	c->nmetrics = 0;
	c->modules = NULL;
	c->nmodules = 0;
	a = fx_new("a", T0, 60, 64, 3, 9);
	a->e.findings = &fi;
	a->e.nfindings = 1;
	ja = epoch_json(&a->e);
	jc = epoch_json(c);
	ck_assert(json_equal(ja, jc));
	json_decref(ja);
	json_decref(jc);
	vitals_epoch_free(c);
	free(a);
}
END_TEST

/*
 * The weight labels.c attributes to each label of vital v (below 64; each
 * case's labels are each in one slot), summed into w[label].
 */
static void
compact_weights(const struct vitals_vital_epoch *v, uint64_t base_ns, double *w)
{
	double per[FX_SAMPLES], all;
	uint32_t i;

	memset(w, 0, 64 * sizeof(*w));
	ck_assert_int_eq(labels_weights(v, base_ns, per, &all), 0);
	for (i = 0; i < v->nsamples; i++)
		w[v->samples[i].label] += per[i];
}

/*
 * A compact copy keeps, per key and run, the samples the attribution
 * credits, so each key's weight is the same; in a rollup (the case with
 * 300 s and base epochs of 60 s), runs split at base epochs even where
 * the count goes on rising.
 */
static const struct {
	uint32_t len; /* timescale, s */
	uint32_t n, kept;
	struct {
		uint32_t slot, label;
		uint64_t count, ts_s, pid;
	} s[8];
} compact_cases[] = {
	/* one key rising: its last sample; a lone key kept */
	{ 60, 5, 2,
	    { { 1, 5, 1, 0 }, { 1, 5, 2, 1 }, { 1, 5, 4, 2 }, { 1, 5, 8, 3 },
		{ 2, 3, 10, 4 } } },
	/* a count that falls (another CPU's sample late) starts a run */
	{ 60, 5, 4,
	    { { 1, 6, 3, 0 }, { 1, 6, 1, 1 }, { 1, 6, 4, 2 }, { 1, 6, 6, 3 },
		{ 2, 5, 9, 4 } } },
	/*
	 * a first sighting (weight 1) in a counter key 6 filled: credited
	 * its weight against key 6's samples, so all its slot's stay
	 */
	{ 60, 4, 4,
	    { { 1, 6, 4, 0 }, { 1, 6, 8, 1 }, { 1, 6, 16, 2 },
		{ 1, 5, 12, 3 } } },
	/* a rollup: base epochs 0 and 1, the second's counts higher */
	{ 300, 4, 2,
	    { { 3, 1, 4, 0 }, { 3, 1, 8, 10 }, { 3, 1, 16, 70 },
		{ 3, 1, 32, 80 } } },
	/* two processes of one key: the last of each stays */
	{ 60, 4, 2,
	    { { 1, 5, 1, 0, 7 }, { 1, 5, 2, 1, 8 }, { 1, 5, 3, 2, 7 },
		{ 1, 5, 4, 3, 8 } } },
};

START_TEST(test_compact)
{
	struct fx *a = fx_new("a", T0, compact_cases[_i].len, 8, 0, 3);
	struct vitals_epoch *c;
	double wa[64], wc[64];
	uint32_t j;

	for (j = 0; j < compact_cases[_i].n; j++) {
		a->s[0][j] = (struct vitals_sample){ .ts_ns = T0 +
			    compact_cases[_i].s[j].ts_s * NS,
			.label = compact_cases[_i].s[j].label,
			.count = compact_cases[_i].s[j].count,
			.slot = compact_cases[_i].s[j].slot,
			.weight = 1,
			.exe_id = 7,
			.pid = compact_cases[_i].s[j].pid
			    ? compact_cases[_i].s[j].pid
			    : 100,
			.exe = "/usr/bin/x",
			.comm = "x" };
		a->hca[0][a->s[0][j].slot] += a->s[0][j].count;
	}
	a->v[0].nsamples = compact_cases[_i].n;
	ck_assert_ptr_nonnull(c = aggregate_compact(&a->e, 60 * NS, 0, NULL));
	ck_assert_uint_eq(c->vitals[0].nsamples, compact_cases[_i].kept);
	compact_weights(&a->v[0], 60 * NS, wa);
	compact_weights(&c->vitals[0], 60 * NS, wc);
	for (j = 0; j < 64; j++)
		ck_assert_double_eq_tol(wa[j], wc[j], 1e-9);
	/* Kept in arrival order, and the rest of the epoch as it was. */
	for (j = 1; j < c->vitals[0].nsamples; j++)
		ck_assert_uint_lt(c->vitals[0].samples[j - 1].ts_ns,
		    c->vitals[0].samples[j].ts_ns);
	ck_assert_uint_eq(c->vitals[0].wsum, a->v[0].wsum);
	ck_assert_uint_eq(c->nvitals, a->e.nvitals);
	/*
	 * Its HCA only the counters of the kept samples' slots (one or two
	 * here), renumbered: each kept sample's counter is its slot's in the
	 * whole epoch (samples are told apart by their times).
	 */
	ck_assert_uint_lt(c->vitals[0].hca_size, a->v[0].hca_size);
	for (j = 0; j < c->vitals[0].nsamples; j++) {
		const struct vitals_sample *cs = &c->vitals[0].samples[j];
		uint32_t k = 0;

		while (a->s[0][k].ts_ns != cs->ts_ns)
			k++;
		ck_assert_uint_lt(cs->slot, c->vitals[0].hca_size);
		ck_assert_uint_eq(
		    c->vitals[0].hca[cs->slot], a->hca[0][a->s[0][k].slot]);
	}
	vitals_epoch_free(c);
	free(a);
}
END_TEST

/*
 * A label first seen in a counter a heavy label filled (a fault's slot)
 * stands for its own weight, not the counter: key 6 rises to 1 << 30 in
 * crossings, key 5 comes once at 900000000 with weight 3 (no power of two
 * in between: a first sighting).  Crediting it the count would give it
 * 900000000 of the slot; it gets 3.  Where a power of two lies in
 * (count - weight, count] the sample may be a crossing: its count is
 * credited as before.
 */
START_TEST(test_first_sighting_credit)
{
	static const uint64_t heavy[] = { 1ULL << 10, 1ULL << 20, 1ULL << 30 };
	struct fx *a = fx_new("a", T0, 60, 8, 0, 3);
	double w[64];
	uint32_t j;

	for (j = 0; j < 4; j++)
		a->s[0][j] = (struct vitals_sample){ .ts_ns = T0 + j * NS,
			.label = j < 3 ? 6 : 5,
			.count = j < 3 ? heavy[j] : 900000000,
			.slot = 1,
			.weight = j < 3 ? 1 : 3,
			.exe_id = 7,
			.pid = 100,
			.exe = "/usr/bin/x",
			.comm = "x" };
	/* key 5 arrives after key 6's 1 << 20, before its 1 << 30 */
	a->s[0][3].ts_ns = T0 + 1 * NS + NS / 2;
	a->hca[0][1] = (1ULL << 30) + 3;
	a->v[0].nsamples = 4;
	compact_weights(&a->v[0], 60 * NS, w);
	ck_assert_double_eq_tol(w[5], 3, 1e-6);
	ck_assert_double_eq_tol(w[6], 1ULL << 30, 1e-6);
	/* 1 << 29 lies in (count - weight, count]: maybe a crossing */
	a->s[0][3].count = (1ULL << 29) + 1;
	compact_weights(&a->v[0], 60 * NS, w);
	ck_assert_double_gt(w[5], 1 << 28);
	free(a);
}
END_TEST

/* With a bound, the samples of largest count, in arrival order. */
START_TEST(test_compact_bound)
{
	static const uint64_t counts[5] = { 5, 1, 4, 2, 3 };
	struct fx *a = fx_new("a", T0, 60, 8, 5, 4);
	struct vitals_epoch *c;
	uint32_t j;

	for (j = 0; j < 5; j++) {
		a->s[0][j].slot = j;
		a->s[0][j].count = counts[j];
	}
	ck_assert_ptr_nonnull(c = aggregate_compact(&a->e, 60 * NS, 2, NULL));
	ck_assert_uint_eq(c->vitals[0].nsamples, 2);
	ck_assert_uint_eq(c->vitals[0].samples[0].count, 5);
	ck_assert_uint_eq(c->vitals[0].samples[1].count, 4);
	ck_assert_uint_eq(c->vitals[0].samples[1].ts_ns, a->s[0][2].ts_ns);
	vitals_epoch_free(c);
	free(a);
}
END_TEST

/*
 * Compact copies made in one pool share their names and frames across
 * epochs, and each holds what it points to until it is freed, whatever
 * order the pool and the other copies go in.
 */
START_TEST(test_compact_pooled)
{
	struct fx *a = fx_new("a", T0, 60, 8, 4, 4);
	struct fx *b = fx_new("a", T0 + 60 * NS, 60, 8, 4, 5);
	const char *names[2] = { "do_sys_poll", "main" };
	struct vitals_epoch *ca, *cb;
	struct epoch_pool *p = epoch_pool_new();
	const struct vitals_sample *sa, *sb;
	uint32_t i, j, shared = 0;

	ck_assert_ptr_nonnull(p);
	for (j = 0; j < 4; j++) {
		b->frames[0][j][0] = a->frames[0][j][0];
		b->frames[0][j][1] = a->frames[0][j][1];
		a->s[0][j].ksyms = b->s[0][j].ksyms = names;
	}
	ck_assert_ptr_nonnull(ca = aggregate_compact(&a->e, 60 * NS, 0, p));
	ck_assert_ptr_nonnull(cb = aggregate_compact(&b->e, 60 * NS, 0, p));
	sa = ca->vitals[0].samples;
	sb = cb->vitals[0].samples;
	ck_assert_uint_gt(ca->vitals[0].nsamples, 0);
	ck_assert_uint_gt(cb->vitals[0].nsamples, 0);
	/* One copy of the host, the exe, the names and the same frames. */
	ck_assert_ptr_eq(ca->host, cb->host);
	ck_assert_ptr_eq(sa[0].exe, sb[0].exe);
	ck_assert_ptr_eq(sa[0].ksyms[0], sb[0].ksyms[0]);
	for (i = 0; i < ca->vitals[0].nsamples; i++)
		for (j = 0; j < cb->vitals[0].nsamples; j++)
			if (sa[i].pid == sb[j].pid) {
				ck_assert_ptr_eq(sa[i].kstack, sb[j].kstack);
				shared++;
			}
	ck_assert_uint_gt(shared, 0);
	/* The pool and the other copy gone, a copy still has all it names. */
	epoch_pool_seal(p);
	epoch_pool_put(p);
	memset(a, 0xa5, sizeof(*a));
	vitals_epoch_free(ca);
	ck_assert_str_eq(cb->host, "a");
	ck_assert_str_eq(sb[0].exe, "/usr/bin/x");
	ck_assert_str_eq(sb[0].ksyms[1], "main");
	ck_assert_uint_eq(sb[0].ustack[0], b->frames[0][sb[0].pid - 100][1]);
	vitals_epoch_free(cb);
	free(a);
	free(b);
}
END_TEST

/*
 * A copy stores equal stacks and equal frame-name arrays once: samples of
 * one site share them, other sites keep their own, and a stack deeper
 * than any stored one is copied whole.
 */
START_TEST(test_copy_shares_stacks)
{
	struct fx *a = fx_new("a", T0, 60, 64, 4, 5);
	const char *names[2] = { "do_sys_poll", "main" };
	const char *other[2] = { "do_sys_poll", "loop" };
	uint64_t deep[300];
	const char *deepsyms[300];
	const struct vitals_sample *c0;
	struct vitals_epoch *c;
	uint32_t i;

	for (i = 0; i < 300; i++) {
		deep[i] = 0x1000 + i;
		deepsyms[i] = i % 2 ? "f_odd" : "f_even";
	}
	/* Samples 0 and 1 have the same frames and names, 2 other names. */
	a->frames[0][1][0] = a->frames[0][0][0];
	a->frames[0][1][1] = a->frames[0][0][1];
	a->frames[0][2][0] = a->frames[0][0][0];
	a->frames[0][2][1] = a->frames[0][0][1];
	a->s[0][0].ksyms = names;
	a->s[0][1].ksyms = names;
	a->s[0][2].ksyms = other;
	/* Sample 3: 150 kernel and 150 user frames; sample 0 of vital 1 none. */
	a->s[0][3].kstack = deep;
	a->s[0][3].nkstack = 150;
	a->s[0][3].ustack = deep + 150;
	a->s[0][3].nustack = 150;
	a->s[0][3].ksyms = deepsyms;
	a->s[1][0].nkstack = a->s[1][0].nustack = 0;
	a->s[1][0].ksyms = names;
	ck_assert_ptr_nonnull(c = epoch_copy(&a->e));
	c0 = c->vitals[0].samples;
	ck_assert_ptr_eq(c0[1].kstack, c0[0].kstack);
	ck_assert_ptr_eq(c0[1].ustack, c0[0].ustack);
	ck_assert_ptr_eq(c0[1].ksyms, c0[0].ksyms);
	ck_assert_ptr_eq(c0[2].kstack, c0[0].kstack);
	ck_assert_ptr_ne(c0[2].ksyms, c0[0].ksyms);
	ck_assert_ptr_eq(c0[2].ksyms[0], c0[0].ksyms[0]);
	ck_assert_str_eq(c0[2].ksyms[1], "loop");
	ck_assert_ptr_ne(c0[0].kstack, a->s[0][0].kstack);
	ck_assert_uint_eq(c0[0].ustack[0], a->frames[0][0][1]);
	ck_assert_ptr_ne(
	    c->vitals[0].samples[0].kstack, c->vitals[1].samples[1].kstack);
	ck_assert_uint_eq(c0[3].nkstack, 150);
	ck_assert_uint_eq(c0[3].nustack, 150);
	for (i = 0; i < 150; i++) {
		ck_assert_uint_eq(c0[3].kstack[i], 0x1000 + i);
		ck_assert_uint_eq(c0[3].ustack[i], 0x1000 + 150 + i);
	}
	ck_assert_str_eq(c0[3].ksyms[299], "f_odd");
	ck_assert_ptr_null(c->vitals[1].samples[0].kstack);
	ck_assert_ptr_nonnull(c->vitals[1].samples[0].ksyms);
	/* The copy owns all of it. */
	memset(a, 0xa5, sizeof(*a));
	memset(deep, 0, sizeof(deep));
	ck_assert_uint_eq(c0[3].ustack[149], 0x1000 + 299);
	ck_assert_str_eq(c0[1].ksyms[1], "main");
	vitals_epoch_free(c);
	free(a);
}
END_TEST

/*
 * A day's rollup sees thousands of exes and threads come and go: the
 * strings of samples it dropped are let go, not kept until the day ends,
 * and the kept samples still name theirs.
 */
START_TEST(test_rollup_strings_bounded)
{
	static char names[FX_VITALS][FX_SAMPLES][3][32];
	const char *syms[FX_VITALS][FX_SAMPLES][2];
	struct rollup *r = rollup_new(T0, 86400, 2);
	struct vitals_epoch *out;
	struct fx *f;
	uint32_t e, i, j, most = 0;
	char want[32];

	ck_assert_ptr_nonnull(r);
	for (e = 0; e < 200; e++) {
		f = fx_new("h", T0 + e * 60 * NS, 60, 64, FX_SAMPLES, e);
		for (i = 0; i < FX_VITALS; i++)
			for (j = 0; j < FX_SAMPLES; j++) {
				/* Reused each epoch: the rollup keeps copies. */
				snprintf(names[i][j][0], 32, "/tmp/t%u/v%u/p%u",
				    e, i, j);
				snprintf(
				    names[i][j][1], 32, "c%u.%u.%u", e, i, j);
				snprintf(
				    names[i][j][2], 32, "f%u_%u_%u", e, i, j);
				syms[i][j][0] = "k_common";
				syms[i][j][1] = names[i][j][2];
				f->s[i][j].exe = names[i][j][0];
				f->s[i][j].comm = names[i][j][1];
				f->s[i][j].ksyms = syms[i][j];
				/* Later epochs' samples outrank earlier ones. */
				f->s[i][j].count = 1000 * (e + 1) + j;
			}
		ck_assert_int_eq(rollup_add(r, &f->e), 0);
		free(f);
		if (rollup_strings(r) > most)
			most = rollup_strings(r);
	}
	/*
	 * 200 epochs each put their 2 best samples per vital in place of
	 * the last: 3 new strings each, 3600 in all.  The dropped ones pile
	 * up to the rebuild threshold, then go.
	 */
	ck_assert_uint_le(most, 1024);
	ck_assert_uint_gt(most, 900);
	ck_assert_uint_lt(rollup_strings(r), 1024);
	ck_assert_int_eq(rollup_finish(r, &out), 0);
	memset(names, 0, sizeof(names));
	for (i = 0; i < FX_VITALS; i++) {
		ck_assert_uint_eq(out->vitals[i].nsamples, 2);
		/* The best: the last epoch's highest counts, samples 15, 14. */
		for (j = 0; j < 2; j++) {
			snprintf(
			    want, sizeof(want), "/tmp/t199/v%u/p%u", i, 15 - j);
			ck_assert_str_eq(out->vitals[i].samples[j].exe, want);
			snprintf(want, sizeof(want), "c199.%u.%u", i, 15 - j);
			ck_assert_str_eq(out->vitals[i].samples[j].comm, want);
			snprintf(want, sizeof(want), "f199_%u_%u", i, 15 - j);
			ck_assert_str_eq(
			    out->vitals[i].samples[j].ksyms[1], want);
			ck_assert_str_eq(
			    out->vitals[i].samples[j].ksyms[0], "k_common");
		}
	}
	vitals_epoch_free(out);
	rollup_free(r);
}
END_TEST

/* ---- queues, peers and live rollups through a filter ---- */

/* What the recording filter saw at one call. */
struct seen {
	uint32_t ts, n, npeers;
	uint64_t starts[8];
	char host[32];
	char peers[4][32];
	uint64_t wsum; /* of the newest epoch's first vital */
	uint32_t nsamples[8], peer_nsamples[4]; /* of the first vital */
};

static struct seen seen[64];
static unsigned nseen;

static int
rec_epoch(void *state, const struct vitals_queue *q)
{
	struct seen *s = &seen[nseen < 64 ? nseen++ : 63];
	uint32_t i;

	(void)state;
	memset(s, 0, sizeof(*s));
	s->ts = q->timescale_s;
	s->n = q->n;
	s->npeers = q->npeers;
	for (i = 0; i < q->n && i < 8; i++) {
		s->starts[i] = q->epochs[i]->start_ns;
		if (q->epochs[i]->nvitals > 0)
			s->nsamples[i] = q->epochs[i]->vitals[0].nsamples;
	}
	snprintf(s->host, sizeof(s->host), "%s", q->epochs[q->n - 1]->host);
	for (i = 0; i < q->npeers && i < 4; i++) {
		snprintf(
		    s->peers[i], sizeof(s->peers[i]), "%s", q->peers[i]->host);
		if (q->peers[i]->nvitals > 0)
			s->peer_nsamples[i] = q->peers[i]->vitals[0].nsamples;
	}
	if (q->epochs[q->n - 1]->nvitals > 0)
		s->wsum = q->epochs[q->n - 1]->vitals[0].wsum;
	return 0;
}

static const struct vitals_plugin rec_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = "rec",
	.description = "records what it is given",
	.epoch = rec_epoch,
};

static struct vitals_ctx *
rec_ctx(void)
{
	struct config_plugin cp = {
		.name = "rec", .kind = VITALS_PLUGIN_FILTER, .enabled = 1
	};
	static struct vitals_settings st;
	struct vitals_ctx *ctx = NULL;
	char err[256];

	nseen = 0;
	ck_assert_int_eq(instance_new(&rec_plugin, &cp, "test", &st, NULL, &ctx,
			     err, sizeof(err)),
	    0);
	return ctx;
}

START_TEST(test_queue_order)
{
	struct aggregate_params p = { .queue_len = 4 };
	struct aggregate_filter f = { NULL, 0, NULL };
	struct aggregate *a;
	struct vitals_epoch *e;
	struct fx *x;
	uint32_t i, j;

	f.ctx = rec_ctx();
	f.timescale_s = 0;
	ck_assert_ptr_nonnull(a = aggregate_new(&p));
	ck_assert_int_eq(aggregate_filters(a, &f, 1), 0);
	for (i = 0; i < 10; i++) {
		x = fx_new("h", T0 + i * 60 * NS, 60, 64, 1, i);
		e = epoch_copy(&x->e);
		free(x);
		ck_assert_int_eq(aggregate_run(a, 0, &e, 1), 0);
	}
	/* A filter of another timescale does not run at the base. */
	f.timescale_s = 300;
	aggregate_filters(a, &f, 1);
	x = fx_new("h", T0 + 10 * 60 * NS, 60, 64, 1, 10);
	e = epoch_copy(&x->e);
	free(x);
	aggregate_run(a, 0, &e, 1);
	ck_assert_uint_eq(nseen, 10);
	for (i = 0; i < 10; i++) {
		ck_assert_uint_eq(seen[i].ts, 60);
		ck_assert_uint_eq(seen[i].n, i + 1 < 4 ? i + 1 : 4);
		/* Oldest first, the newest last. */
		for (j = 0; j < seen[i].n; j++)
			ck_assert_uint_eq(seen[i].starts[j],
			    T0 + (i + 1 - seen[i].n + j) * 60 * NS);
		ck_assert_uint_eq(seen[i].npeers, 0);
	}
	aggregate_free(a);
	instance_free(f.ctx);
}
END_TEST

/*
 * A filter sees the newest epoch of its queue whole, and its peers (the
 * slot's other epochs) whole; the epochs before the newest compact, at
 * most queue_samples a vital: with and without lanes, the newest made
 * compact only once every run has been given it.
 */
START_TEST(test_queue_newest_whole)
{
	struct aggregate_params p = { .queue_len = 4,
		.base_ns = 60 * NS,
		.queue_samples = 1,
		.lanes = (unsigned)_i };
	struct aggregate_filter f = { NULL, 0, NULL };
	struct vitals_epoch *v[2];
	struct aggregate *a;
	struct fx *x;
	uint32_t i, j;

	f.ctx = rec_ctx();
	ck_assert_ptr_nonnull(a = aggregate_new(&p));
	ck_assert_int_eq(aggregate_filters(a, &f, 1), 0);
	for (i = 0; i < 6; i++) {
		for (j = 0; j < 2; j++) {
			x = fx_new(j ? "b" : "a", T0 + i * 60 * NS, 60, 64, 6,
			    10 * i + j);
			v[j] = epoch_copy(&x->e);
			free(x);
		}
		ck_assert_int_eq(aggregate_run(a, 0, v, 2), 0);
	}
	ck_assert_int_eq(aggregate_drain(a), 0);
	ck_assert_uint_eq(nseen, 12);
	for (i = 0; i < 12; i++) {
		ck_assert_uint_eq(seen[i].npeers, 1);
		ck_assert_uint_eq(seen[i].peer_nsamples[0], 6);
		ck_assert_uint_eq(seen[i].nsamples[seen[i].n - 1], 6);
		for (j = 0; j + 1 < seen[i].n; j++)
			ck_assert_uint_le(seen[i].nsamples[j], 1);
	}
	aggregate_free(a);
	instance_free(f.ctx);
}
END_TEST

START_TEST(test_peers)
{
	static const char *const hosts[3] = { "a", "b", "c" };
	struct aggregate_params p = { .queue_len = 8 };
	struct aggregate_filter f = { rec_ctx(), AGGREGATE_ALL, NULL };
	struct vitals_epoch *v[3];
	struct aggregate *a;
	struct fx *x;
	uint32_t i, slot;

	a = aggregate_new(&p);
	aggregate_filters(a, &f, 1);
	for (slot = 0; slot < 2; slot++) {
		for (i = 0; i < 3; i++) {
			x = fx_new(hosts[i], T0 + slot * 60 * NS, 60, 64, 1, i);
			v[i] = epoch_copy(&x->e);
			free(x);
		}
		ck_assert_int_eq(aggregate_run(a, 0, v, 3), 0);
	}
	ck_assert_uint_eq(nseen, 6);
	for (i = 0; i < 6; i++) {
		/* Each host its own queue; the others of the slot are peers. */
		ck_assert_str_eq(seen[i].host, hosts[i % 3]);
		ck_assert_uint_eq(seen[i].n, i / 3 + 1);
		ck_assert_uint_eq(
		    seen[i].starts[seen[i].n - 1], T0 + (i / 3) * 60 * NS);
		ck_assert_uint_eq(seen[i].npeers, 2);
		ck_assert_str_ne(seen[i].peers[0], hosts[i % 3]);
		ck_assert_str_ne(seen[i].peers[1], hosts[i % 3]);
		ck_assert_str_ne(seen[i].peers[0], seen[i].peers[1]);
	}
	aggregate_free(a);
	instance_free(f.ctx);
}
END_TEST

/* What one instance of hrec saw: the hosts it was called for, in order. */
struct hrec {
	char hosts[8][32];
	uint32_t n, npeers;
};

static int
hrec_epoch(void *state, const struct vitals_queue *q)
{
	struct hrec *r = state;

	if (r->n < 8)
		snprintf(r->hosts[r->n++], sizeof(r->hosts[0]), "%s",
		    q->epochs[q->n - 1]->host);
	r->npeers += q->npeers;
	return 0;
}

static const struct vitals_plugin hrec_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = "hrec",
	.description = "records the hosts it is called for",
	.epoch = hrec_epoch,
};

/*
 * An instance for one host runs for that host's epochs only (with the
 * others still as peers); one for every host (NULL) runs for each.
 * Without lanes, and on 1 and 2 lanes.
 */
START_TEST(test_host_instances)
{
	static const char *const hosts[3] = { "a", "b", "c" };
	static const char *const for_host[3] = { "a", "b", NULL };
	struct config_plugin cp = {
		.name = "hrec", .kind = VITALS_PLUGIN_FILTER, .enabled = 1
	};
	struct aggregate_params p = { .queue_len = 4, .lanes = (uint32_t)_i };
	struct aggregate_filter f[3];
	static struct vitals_settings st;
	struct vitals_epoch *v[3];
	struct hrec out[3];
	struct aggregate *a;
	struct fx *x;
	char err[256];
	uint32_t i, k;

	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(instance_new(&hrec_plugin, &cp, "test", &st,
				     NULL, &f[i].ctx, err, sizeof(err)),
		    0);
		memset(&out[i], 0, sizeof(out[i]));
		f[i].ctx->state = &out[i];
		f[i].timescale_s = AGGREGATE_ALL;
		f[i].host = for_host[i];
	}
	ck_assert_ptr_nonnull(a = aggregate_new(&p));
	ck_assert_int_eq(aggregate_filters(a, f, 3), 0);
	for (i = 0; i < 3; i++) {
		x = fx_new(hosts[i], T0, 60, 64, 1, i);
		v[i] = epoch_copy(&x->e);
		free(x);
	}
	ck_assert_int_eq(aggregate_run(a, 0, v, 3), 0);
	ck_assert_int_eq(aggregate_drain(a), 0);
	for (k = 0; k < 2; k++) {
		ck_assert_uint_eq(out[k].n, 1);
		ck_assert_str_eq(out[k].hosts[0], hosts[k]);
		ck_assert_uint_eq(out[k].npeers, 2);
	}
	ck_assert_uint_eq(out[2].n, 3);
	for (k = 0; k < 3; k++)
		ck_assert_str_eq(out[2].hosts[k], hosts[k]);
	aggregate_free(a);
	for (i = 0; i < 3; i++)
		instance_free(f[i].ctx);
}
END_TEST

/* ---- lanes: filters on worker threads see what they would in line ---- */

/* One call to a lane-recording filter: enough to tell two apart. */
struct lrec_call {
	uint32_t ts, n, npeers;
	uint64_t sum; /* of every start and wsum in the queue and the peers */
	char host[16];
};

/* What one instance saw, in order (its state). */
struct lrec {
	unsigned n;
	struct lrec_call v[512];
	uint64_t between[512]; /* lrec_nbetween at each call */
};

/* Calls of aggregate_params.between so far (lrec_scenario's). */
static uint64_t lrec_nbetween;

static void
lrec_between(void *arg)
{
	ck_assert_ptr_eq(arg, &lrec_nbetween);
	__atomic_add_fetch(&lrec_nbetween, 1, __ATOMIC_RELAXED);
}

/* FNV-1a of buf[0..len). */
static uint64_t
lrec_fnv(const char *buf, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	return h;
}

static int
lrec_epoch(void *state, const struct vitals_queue *q)
{
	struct lrec *r = state;
	struct lrec_call *c = &r->v[r->n < 512 ? r->n : 511];
	const struct vitals_epoch *e;
	uint32_t i, k;
	size_t len;
	char *text;

	r->between[r->n < 512 ? r->n++ : 511] =
	    __atomic_load_n(&lrec_nbetween, __ATOMIC_RELAXED);
	memset(c, 0, sizeof(*c));
	c->ts = q->timescale_s;
	c->n = q->n;
	c->npeers = q->npeers;
	/*
	 * Touch every epoch (one freed too early would show), and hash all
	 * it holds, as the store writes it (one unpacked differently would).
	 */
	for (i = 0; i < q->n + q->npeers; i++) {
		e = i < q->n ? q->epochs[i] : q->peers[i - q->n];
		c->sum = c->sum * 31 + e->start_ns + e->seq;
		for (k = 0; k < e->nvitals; k++)
			c->sum = c->sum * 31 + e->vitals[k].wsum;
		ck_assert_int_eq(codec_text_encode(e, &text, &len), 0);
		c->sum = c->sum * 31 + lrec_fnv(text, len);
		free(text);
	}
	snprintf(c->host, sizeof(c->host), "%s", q->epochs[q->n - 1]->host);
	return 0;
}

/* Two plugins (two lanes), the same callback. */
static const struct vitals_plugin lrec_a = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = "lreca",
	.description = "records what it is given",
	.epoch = lrec_epoch,
};
static const struct vitals_plugin lrec_b = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = "lrecb",
	.description = "records what it is given",
	.epoch = lrec_epoch,
};

#define LREC_INSTS 3

/*
 * Three hosts, 150 one-minute slots and their 5-minute rollups through
 * instances of two plugins (one at every timescale, one at the base, one
 * at 5m) with `lanes` lanes and the rollups' queues packed or not,
 * calling lrec_between between steps if between; what each saw goes to
 * out[]; returns how many epochs were packed at the end.
 */
static size_t
lrec_scenario(uint32_t lanes, uint32_t park, int between, struct lrec *out)
{
	static const char *const hosts[3] = { "a", "b", "c" };
	static const struct vitals_plugin *const plug[LREC_INSTS] = { &lrec_a,
		&lrec_b, &lrec_a };
	static const uint32_t at[LREC_INSTS] = { AGGREGATE_ALL, 0, 300 };
	struct aggregate_params p = { .queue_len = 5,
		.lanes = lanes,
		.park = park,
		.between = between ? lrec_between : NULL,
		.between_arg = &lrec_nbetween };
	struct config_plugin cp = { .kind = VITALS_PLUGIN_FILTER,
		.enabled = 1 };
	struct aggregate_filter f[LREC_INSTS];
	static struct vitals_settings st;
	struct vitals_epoch *v[3];
	struct aggregate *a;
	struct fx *x;
	char err[256];
	uint32_t i, slot;
	size_t packed;

	for (i = 0; i < LREC_INSTS; i++) {
		cp.name = (char *)plug[i]->name;
		ck_assert_int_eq(instance_new(plug[i], &cp, "test", &st, NULL,
				     &f[i].ctx, err, sizeof(err)),
		    0);
		memset(&out[i], 0, sizeof(out[i]));
		f[i].ctx->state = &out[i];
		f[i].timescale_s = at[i];
		f[i].host = NULL;
	}
	ck_assert_ptr_nonnull(a = aggregate_new(&p));
	ck_assert_int_eq(aggregate_filters(a, f, LREC_INSTS), 0);
	for (slot = 0; slot < 150; slot++) {
		for (i = 0; i < 3; i++) {
			x = fx_new(hosts[i], T0 + slot * 60 * NS, 60, 32, 2,
			    slot * 3 + i);
			v[i] = epoch_copy(&x->e);
			free(x);
		}
		/* Host c misses every seventh slot: fewer peers there. */
		ck_assert_int_eq(aggregate_run(a, 0, v, slot % 7 ? 3 : 2), 0);
		if (slot % 7 == 0)
			vitals_epoch_free(v[2]);
		if (slot % 5 != 4)
			continue;
		for (i = 0; i < 2; i++) {
			x = fx_new(hosts[i], T0 + (slot - 4) * 60 * NS, 300, 32,
			    2, 1000 + slot * 3 + i);
			v[i] = epoch_copy(&x->e);
			free(x);
		}
		ck_assert_int_eq(aggregate_run(a, 300, v, 2), 0);
	}
	ck_assert_int_eq(aggregate_drain(a), 0);
	packed = aggregate_packed(a);
	aggregate_free(a);
	for (i = 0; i < LREC_INSTS; i++)
		instance_free(f[i].ctx);
	return packed;
}

/* Two runs' records are the same, call by call. */
static void
lrec_same(const struct lrec *x, const struct lrec *y, const char *what)
{
	uint32_t i, k;

	for (i = 0; i < LREC_INSTS; i++) {
		ck_assert_uint_eq(y[i].n, x[i].n);
		for (k = 0; k < x[i].n; k++)
			ck_assert_msg(memcmp(&y[i].v[k], &x[i].v[k],
					  sizeof(x[i].v[k])) == 0,
			    "instance %u call %u differs %s", i, k, what);
	}
}

START_TEST(test_lanes_same)
{
	static struct lrec inline_[LREC_INSTS], laned[LREC_INSTS];
	uint32_t lanes = (uint32_t)_i + 1;

	ck_assert_uint_eq(lrec_scenario(0, 0, 0, inline_), 0);
	ck_assert_uint_eq(lrec_scenario(lanes, 0, 0, laned), 0);
	/* 150 base slots of 3 hosts but every 7th; 30 rollups of 2. */
	ck_assert_uint_eq(inline_[0].n, 150 * 3 - 22 + 30 * 2);
	ck_assert_uint_eq(inline_[1].n, 150 * 3 - 22);
	ck_assert_uint_eq(inline_[2].n, 30 * 2);
	lrec_same(inline_, laned, "with lanes");
	/* The base queue fills up to its length, peers come and go. */
	ck_assert_uint_eq(inline_[1].v[0].n, 1);
	ck_assert_uint_eq(inline_[1].v[20].n, 5);
	ck_assert_uint_eq(inline_[1].v[0].npeers, 1);
	ck_assert_uint_eq(inline_[1].v[3].npeers, 2);
	ck_assert_uint_eq(inline_[2].v[0].ts, 300);
}
END_TEST

/*
 * The rollups' queues held packed: the filters see every queued epoch as
 * they would unpacked, in line and on lanes; the base queue is not packed.
 */
START_TEST(test_park_same)
{
	static struct lrec plain[LREC_INSTS], parked[LREC_INSTS];
	uint32_t lanes = (uint32_t)_i;

	ck_assert_uint_eq(lrec_scenario(lanes, 0, 0, plain), 0);
	/* Two hosts' 5-minute queues of 5, all packed once given. */
	ck_assert_uint_eq(lrec_scenario(lanes, 1, 0, parked), 2 * 5);
	lrec_same(plain, parked, "packed");
	ck_assert_uint_eq(parked[2].v[29].n, 5);
}
END_TEST

static int
lrec_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * vitalsd tends to its rings between the steps of a run: after every
 * filter's call (so before the next), every epoch packed and every one
 * unpacked; what the filters see does not change.
 */
START_TEST(test_between)
{
	static struct lrec plain[LREC_INSTS], rec[LREC_INSTS],
	    parked[LREC_INSTS];
	static uint64_t at[LREC_INSTS * 512];
	uint64_t calls, plain_calls;
	uint32_t i, k, n;

	lrec_nbetween = 0;
	ck_assert_uint_eq(lrec_scenario(0, 0, 0, plain), 0);
	ck_assert_uint_eq(lrec_nbetween, 0);
	ck_assert_uint_eq(lrec_scenario(0, 0, 1, rec), 0);
	lrec_same(plain, rec, "with between");
	plain_calls = lrec_nbetween;
	/*
	 * In line the calls are serial: two with no step between would have
	 * seen the same count.
	 */
	for (i = 0, n = 0; i < LREC_INSTS; i++)
		for (k = 0; k < rec[i].n; k++)
			at[n++] = rec[i].between[k];
	qsort(at, n, sizeof(*at), lrec_cmp);
	for (k = 1; k < n; k++)
		ck_assert_msg(at[k] != at[k - 1],
		    "two filter calls with no step between (count %llu)",
		    (unsigned long long)at[k]);
	/* One call after each filter's. */
	ck_assert_uint_eq(plain_calls, n);
	lrec_nbetween = 0;
	ck_assert_uint_eq(lrec_scenario(0, 1, 1, parked), 2 * 5);
	lrec_same(plain, parked, "packed, with between");
	calls = lrec_nbetween;
	/*
	 * And one for each of the 60 rollups packed, and each packed epoch
	 * unpacked for a run: a host's k-th rollup run has min(k - 1, 4).
	 */
	ck_assert_uint_eq(
	    calls, plain_calls + 2 * 30 + 2 * (0 + 1 + 2 + 3 + 4 * 26));
}
END_TEST

/* Freed with work waiting: what waits is dropped, nothing leaks or hangs. */
START_TEST(test_lanes_free_busy)
{
	struct lrec rec[LREC_INSTS];
	struct aggregate_params p = { .queue_len = 2, .lanes = 2 };
	struct config_plugin cp = {
		.name = "lreca", .kind = VITALS_PLUGIN_FILTER, .enabled = 1
	};
	static struct vitals_settings st;
	struct aggregate_filter f = { NULL, AGGREGATE_ALL };
	struct vitals_epoch *e;
	struct aggregate *a;
	struct fx *x;
	char err[256];
	uint32_t i;

	ck_assert_int_eq(instance_new(&lrec_a, &cp, "test", &st, NULL, &f.ctx,
			     err, sizeof(err)),
	    0);
	memset(rec, 0, sizeof(rec));
	f.ctx->state = &rec[0];
	a = aggregate_new(&p);
	ck_assert_int_eq(aggregate_filters(a, &f, 1), 0);
	for (i = 0; i < 100; i++) {
		x = fx_new("h", T0 + i * 60 * NS, 60, 32, 2, i);
		e = epoch_copy(&x->e);
		free(x);
		ck_assert_int_eq(aggregate_run(a, 0, &e, 1), 0);
	}
	aggregate_free(a);
	ck_assert_uint_le(rec[0].n, 100);
	instance_free(f.ctx);
}
END_TEST

/* 10 s epochs, 60 s rollups: each completes with the epoch ending it. */
START_TEST(test_live)
{
	struct aggregate_params p = { .ntimescales = 1,
		.timescales = { 60 },
		.queue_len = 4,
		.max_samples = 8 };
	struct aggregate_filter f = { rec_ctx(), AGGREGATE_ALL };
	uint64_t want = 0, start;
	struct aggregate *a;
	struct fx *x[14];
	uint32_t i, rollups = 0;

	a = aggregate_new(&p);
	aggregate_filters(a, &f, 1);
	for (i = 0; i < 14; i++) {
		/* Epoch 8 is missing: the second slot closes with a gap. */
		start = T0 + (i + (i >= 8)) * 10 * NS;
		x[i] = fx_new("h", start, 10, 64, 2, i);
		if (i < 6)
			want += x[i]->v[0].wsum;
		nseen = 0;
		ck_assert_int_eq(aggregate_live(a, &x[i]->e), 0);
		ck_assert_uint_ge(nseen, 1);
		ck_assert_uint_eq(seen[0].ts, 10);
		if (nseen == 2) {
			ck_assert_uint_eq(seen[1].ts, 60);
			rollups++;
			if (rollups == 1) {
				ck_assert_uint_eq(i, 5);
				ck_assert_uint_eq(seen[1].wsum, want);
			}
		}
	}
	/* Slot 1 lacks an epoch, yet closes with the epoch that ends it. */
	ck_assert_uint_eq(rollups, 2);
	aggregate_free(a);
	instance_free(f.ctx);
	for (i = 0; i < 14; i++)
		free(x[i]);
}
END_TEST

/* ---- the timescales setting ---- */

static const char *
write_yaml(const char *name, const char *text)
{
	const char *path = testutil_path(testutil_dir, name);

	testutil_write_file(path, text);
	return path;
}

static const struct {
	const char *yaml;
	uint32_t n;
	uint32_t ts[3];
	const char *err; /* expected after "FILE:" */
} ts_cases[] = {
	{ "epoch: 60s\n", 3, { 300, 3600, 86400 }, NULL },
	{ "timescales: [1h, 5m]\n", 2, { 300, 3600 }, NULL },
	{ "timescales: 10m, 2h\n", 2, { 600, 7200 }, NULL },
	{ "timescales: []\n", 0, { 0 }, NULL },
	{ "epoch: 7s\n", 0, { 0 }, NULL },
	{ "epoch: 1s\ntimescales: [2s]\n", 1, { 2 }, NULL },
	{ "timescales: [5m, 90s]\n", 0, { 0 },
	    "1:18: setting 'timescales': 90s is not a multiple of the epoch" },
	{ "timescales:\n  - 5m\n  - soon\n", 0, { 0 },
	    "3:5: setting 'timescales': expected a duration" },
	{ "timescales: [5m, 5m]\n", 0, { 0 },
	    "1:18: setting 'timescales': 5m is given twice" },
	{ "timescales: [1500ms]\nepoch: 500ms\n", 0, { 0 },
	    "1:14: setting 'timescales': expected a duration in whole "
	    "seconds" },
	{ "timescales: {a: 1}\n", 0, { 0 }, "1:13: setting 'timescales'" },
};

START_TEST(test_config_timescales)
{
	const char *path = write_yaml("t.yaml", ts_cases[_i].yaml);
	struct config *c = NULL;
	char err[1024] = "", want[1024];
	uint32_t i;
	int r;

	r = config_load(path, &c, err, sizeof(err));
	if (ts_cases[_i].err != NULL) {
		ck_assert_int_eq(r, -EINVAL);
		snprintf(want, sizeof(want), "%s:%s", path, ts_cases[_i].err);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
		    "got '%s', want '%s...'", err, want);
		return;
	}
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_uint_eq(c->ntimescales, ts_cases[_i].n);
	for (i = 0; i < c->ntimescales; i++)
		ck_assert_uint_eq(c->timescales[i], ts_cases[_i].ts[i]);
	config_free(c);
}
END_TEST

/* ---- the cache ---- */

START_TEST(test_cache)
{
	struct cache_key k1, k2, k3;
	struct cache *c;
	char dir[600], path[700], hex1[33], hex2[33], err[1024];
	json_t *v = json_pack("{s:i}", "x", 42), *got = NULL;
	FILE *f;

	cache_key_init(&k1, "t");
	cache_key_str(&k1, "ab");
	cache_key_str(&k1, "c");
	cache_key_init(&k2, "t");
	cache_key_str(&k2, "a");
	cache_key_str(&k2, "bc");
	cache_key_init(&k3, "t");
	cache_key_str(&k3, "ab");
	cache_key_str(&k3, "c");
	cache_key_hex(&k1, hex1);
	cache_key_hex(&k2, hex2);
	ck_assert_str_ne(hex1, hex2);
	ck_assert(memcmp(&k1, &k3, sizeof(k1)) == 0);
	snprintf(dir, sizeof(dir), "%s/cache", testutil_dir);
	ck_assert_int_eq(cache_open(dir, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k1, &got), -ENOENT);
	ck_assert_int_eq(cache_put(c, "r/e.json.gz", &k1, v), 0);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k1, &got), 0);
	ck_assert(json_equal(got, v));
	json_decref(got);
	/* Another key: stale. */
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k2, &got), -ENOENT);
	/* A corrupt entry is a miss, not an error. */
	snprintf(path, sizeof(path), "%s/r/e.json.gz", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("garbage", f);
	fclose(f);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k1, &got), -ENOENT);
	/* Older versions of a keyed name go when a new one is stored. */
	ck_assert_int_eq(cache_put(c, "r/s.1.json.gz", &k1, v), 0);
	ck_assert_int_eq(cache_put(c, "r/s.2.json.gz", &k2, v), 0);
	cache_remove_stale(c, "r/s.2.json.gz", strlen("r/s."));
	ck_assert_int_eq(cache_get(c, "r/s.1.json.gz", &k1, &got), -ENOENT);
	ck_assert_int_eq(cache_get(c, "r/s.2.json.gz", &k2, &got), 0);
	json_decref(got);
	ck_assert_int_eq(cache_prune(c, "r", 1), 1);
	cache_close(c);
	json_decref(v);
}
END_TEST

/*
 * The key of an entry is public (a hash of file names and sizes): only
 * what this user wrote under that very name is trusted, and no link
 * planted in the cache is followed, to read or to write.
 */
START_TEST(test_cache_trust)
{
	char dir[600], path[700], other[700], victim[700], err[1024];
	struct cache_key k;
	struct cache *c;
	json_t *v = json_pack("{s:i}", "x", 42), *got = NULL;
	FILE *f;

	cache_key_init(&k, "t");
	snprintf(dir, sizeof(dir), "%s/cache", testutil_dir);
	snprintf(victim, sizeof(victim), "%s/victim", testutil_dir);
	ck_assert_ptr_nonnull(f = fopen(victim, "w"));
	fputs("precious", f);
	fclose(f);
	ck_assert_int_eq(cache_open(dir, &c, err, sizeof(err)), 0);
	/* Written by this user, readable by others, writable by no one else. */
	ck_assert_int_eq(cache_put(c, "r/e.json.gz", &k, v), 0);
	snprintf(path, sizeof(path), "%s/r/e.json.gz", dir);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k, &got), 0);
	json_decref(got);
	/* The same entry under another name does not stand for it. */
	snprintf(other, sizeof(other), "%s/r/f.json.gz", dir);
	ck_assert_int_eq(link(path, other), 0);
	ck_assert_int_eq(cache_get(c, "r/f.json.gz", &k, &got), -ENOENT);
	/* One others may write is not trusted. */
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k, &got), -ENOENT);
	ck_assert_int_eq(chmod(path, 0644), 0);
	/* Nor one another user wrote (forged with the right key). */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		ck_assert_int_eq(
		    cache_get(c, "r/e.json.gz", &k, &got), -ENOENT);
	}
	/* A link at the entry's name: not read, and replaced, not followed. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k, &got), -ENOENT);
	ck_assert_int_eq(cache_put(c, "r/e.json.gz", &k, v), 0);
	ck_assert_str_eq(testutil_read_text(victim), "precious");
	ck_assert_int_eq(cache_get(c, "r/e.json.gz", &k, &got), 0);
	json_decref(got);
	/* The old, predictable temporary name as a link: left alone. */
	snprintf(other, sizeof(other), "%s/r/e.json.gz.tmp.%ld", dir,
	    (long)getpid());
	ck_assert_int_eq(symlink(victim, other), 0);
	ck_assert_int_eq(cache_put(c, "r/e.json.gz", &k, v), 0);
	ck_assert_str_eq(testutil_read_text(victim), "precious");
	/* A link for a directory of the cache: nothing goes through it. */
	snprintf(other, sizeof(other), "%s/elsewhere", testutil_dir);
	ck_assert_int_eq(mkdir(other, 0755), 0);
	snprintf(path, sizeof(path), "%s/s", dir);
	ck_assert_int_eq(symlink(other, path), 0);
	ck_assert_int_lt(cache_put(c, "s/e.json.gz", &k, v), 0);
	ck_assert_int_eq(cache_get(c, "s/e.json.gz", &k, &got), -ENOENT);
	snprintf(path, sizeof(path), "%s/elsewhere/e.json.gz", testutil_dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* Pruning removes entries, not what a link in the cache points to. */
	ck_assert_int_eq(cache_prune(c, "r", 0), 2); /* e and f; not the link */
	ck_assert_str_eq(testutil_read_text(victim), "precious");
	cache_close(c);
	json_decref(v);
}
END_TEST

/* As root, a cache directory others may write is refused, by name. */
START_TEST(test_cache_refused)
{
	char dir[600], err[1024];
	struct cache *c = NULL;

	if (geteuid() != 0)
		return;
	snprintf(dir, sizeof(dir), "%s/open", testutil_dir);
	ck_assert_int_eq(mkdir(dir, 0777), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);
	strcat(dir, "/cache");
	ck_assert_int_eq(cache_open(dir, &c, err, sizeof(err)), -EPERM);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "writable by group or others"));
	ck_assert_ptr_nonnull(strstr(err, dir));
	ck_assert_int_ne(access(dir, F_OK), 0);
}
END_TEST

/* ---- range queries and their cache ---- */

/*
 * A store of 20 one-minute epochs whose cpu weighted sum is 1000 each,
 * but 10000 in epoch 12.
 */
static void
make_store(void)
{
	char err[512];
	struct fx *x;
	uint32_t i, j;

	for (i = 0; i < 20; i++) {
		x = fx_new("h", T0 + i * 60 * NS, 60, 64, 2, 5);
		memset(x->hca[0], 0, sizeof(x->hca[0]));
		x->hca[0][3] = i == 12 ? 10000 : 1000;
		x->v[0].wsum = x->v[0].events = x->hca[0][3];
		for (j = 0; j < 2; j++)
			x->s[0][j].slot = 3;
		ck_assert_int_eq(vitals_epoch_save(&x->e, testutil_dir, NULL, 0,
				     err, sizeof(err)),
		    0);
		free(x);
	}
}

static struct vitals_agg_result *
run_query(const char *config, uint32_t ts)
{
	static const char *const filters[] = { "ewma" };
	struct vitals_agg_params p = { .data_dir = testutil_dir,
		.config = config,
		.from_ns = T0,
		.to_ns = T0 + 20 * 60 * NS,
		.ntimescales = 1,
		.timescales = &ts,
		.nfilters = 1,
		.filters = filters };
	struct vitals_agg_result *r = NULL;
	char err[1024] = "";

	ck_assert_msg(
	    vitals_agg_query(&p, &r, err, sizeof(err)) == 0, "%s", err);
	return r;
}

static size_t
cpu_findings(const struct vitals_agg_result *r, uint64_t at)
{
	size_t i, n = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].f.vital &&
		    !strcmp(r->findings[i].f.vital, "cpu") &&
		    r->findings[i].f.start_ns == at)
			n++;
	return n;
}

START_TEST(test_query_cache)
{
	struct vitals_agg_result *r;
	char a[600], b[600], file[800];
	struct vitals_store_list l;
	struct timespec ts[2];

	if (getenv("VITALS_PLUGIN_PATH") == NULL)
		return; /* run through make check */
	make_store();
	snprintf(a, sizeof(a), "%s",
	    write_yaml("a.yaml", "filters:\n  ewma: { warmup: 3 }\n"));
	snprintf(b, sizeof(b), "%s",
	    write_yaml("b.yaml", "filters:\n  ewma: { warmup: 3, k: 1000 }\n"));
	r = run_query(a, 0);
	ck_assert_uint_eq(r->epochs_read, 20);
	ck_assert_uint_eq(r->cache_hits, 0);
	ck_assert_uint_eq(r->cache_misses, 2); /* the totals, ewma */
	ck_assert_uint_eq(r->nslots, 20);
	ck_assert_uint_eq(cpu_findings(r, T0 + 12 * 60 * NS), 1);
	vitals_agg_result_free(r);
	/* Unchanged: everything from the cache, no epoch read. */
	r = run_query(a, 0);
	ck_assert_uint_eq(r->epochs_read, 0);
	ck_assert_uint_eq(r->cache_hits, 2);
	ck_assert_uint_eq(r->cache_misses, 0);
	ck_assert_uint_eq(cpu_findings(r, T0 + 12 * 60 * NS), 1);
	ck_assert_uint_eq(r->nslots, 20);
	vitals_agg_result_free(r);
	/* Another option: ewma alone is recomputed, and finds nothing now. */
	r = run_query(b, 0);
	ck_assert_uint_eq(r->cache_hits, 1);
	ck_assert_uint_eq(r->cache_misses, 1);
	ck_assert_uint_eq(r->epochs_read, 20);
	ck_assert_uint_eq(cpu_findings(r, T0 + 12 * 60 * NS), 0);
	vitals_agg_result_free(r);
	/* A rewritten epoch file invalidates the results of its range. */
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	snprintf(file, sizeof(file), "%s", l.v[4].path);
	vitals_store_list_free(&l);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec += 10;
	ts[1] = ts[0];
	ck_assert_int_eq(utimensat(0, file, ts, 0), 0);
	r = run_query(b, 0);
	ck_assert_uint_eq(r->cache_hits, 0);
	ck_assert_uint_eq(r->cache_misses, 2);
	vitals_agg_result_free(r);
	/* 5m rollups: built once... */
	r = run_query(b, 300);
	ck_assert_uint_eq(r->rollup_misses, 4);
	ck_assert_uint_eq(r->nslots, 4);
	ck_assert_uint_eq(r->slots[2].start_ns, T0 + 600 * NS);
	ck_assert_uint_eq(r->slots[2].nepochs, 5);
	ck_assert_str_eq(r->slots[2].vitals[0].name, "cpu");
	ck_assert_uint_eq(r->slots[2].vitals[0].wsum, 4 * 1000 + 10000);
	vitals_agg_result_free(r);
	/* ...then read from the cache when a filter needs them again. */
	r = run_query(a, 300);
	ck_assert_uint_eq(r->rollup_hits, 4);
	ck_assert_uint_eq(r->rollup_misses, 0);
	ck_assert_uint_eq(r->epochs_read, 0);
	ck_assert_uint_eq(r->cache_hits, 1);
	ck_assert_uint_eq(r->cache_misses, 1);
	vitals_agg_result_free(r);
}
END_TEST

static Suite *
aggregate_suite(void)
{
	Suite *s = suite_create("aggregate");
	TCase *ro = tcase_create("rollup");
	TCase *ag = tcase_create("aggregate");
	TCase *io = tcase_create("io");

	tcase_add_loop_test(ro, test_slot_start, 0, NCASES(slot_cases));
	tcase_add_test(ro, test_fold);
	tcase_add_test(ro, test_rollup_sums);
	tcase_add_test(ro, test_rollup_fold_mixed);
	tcase_add_test(ro, test_rollup_fold_three);
	tcase_add_test(ro, test_rollup_sample_bound);
	tcase_add_test(ro, test_rollup_union);
	tcase_add_test(ro, test_rollup_modules);
	tcase_add_test(ro, test_rollup_kernel_frames);
	tcase_add_test(ro, test_copy);
	tcase_add_test(ro, test_copy_shares_stacks);
	tcase_add_loop_test(ro, test_compact, 0,
	    sizeof(compact_cases) / sizeof(compact_cases[0]));
	tcase_add_test(ro, test_compact_bound);
	tcase_add_test(ro, test_compact_pooled);
	tcase_add_test(ro, test_first_sighting_credit);
	tcase_add_test(ro, test_rollup_strings_bounded);
	suite_add_tcase(s, ro);
	tcase_add_test(ag, test_queue_order);
	tcase_add_loop_test(ag, test_queue_newest_whole, 0, 2);
	tcase_add_test(ag, test_peers);
	tcase_add_loop_test(ag, test_host_instances, 0, 3);
	tcase_add_test(ag, test_live);
	tcase_add_loop_test(ag, test_lanes_same, 0, 3);
	tcase_add_loop_test(ag, test_park_same, 0, 3);
	tcase_add_test(ag, test_between);
	tcase_add_test(ag, test_lanes_free_busy);
	suite_add_tcase(s, ag);
	tcase_add_checked_fixture(
	    io, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_loop_test(io, test_config_timescales, 0, NCASES(ts_cases));
	tcase_add_test(io, test_cache);
	tcase_add_test(io, test_cache_trust);
	tcase_add_test(io, test_cache_refused);
	tcase_add_test(io, test_query_cache);
	tcase_set_timeout(io, 60);
	suite_add_tcase(s, io);
	return s;
}

int
main(void)
{
	return testutil_run(aggregate_suite());
}
