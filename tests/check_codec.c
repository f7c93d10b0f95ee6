/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/store/codec.c: epochs to JSON and back (every field, u64
 * values above 2^63, the sparse HCA), the errors a broken document gives
 * with its JSON path, and the store's file names.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "codec.h"
#include "epoch_json.h"
#include "testutil.h"

#define NS 1000000000ull

/* ---- a hand-built epoch: blocking, cpu, syscall; two findings ---- */

static uint64_t fx_deep[VITALS_STACK_MAX];
static const uint64_t fx_kst[] = { 0xffffffff81000010ull, 1ull << 63,
	UINT64_MAX };
/* nkstack + nustack names (3 kernel frames, then 2 user frames). */
static const char *const fx_ksyms[] = { "do_syscall_64+0x10",
	"entry_SYSCALL_64+0x7c", "", "main", "" };
static const uint64_t fx_ust[] = { 0x7f0000001234ull, 0x401000ull };
static uint64_t fx_hca_blocking[32];
static uint64_t fx_hca_cpu[64];
static struct vitals_sample fx_blocking_samples[1];
static struct vitals_sample fx_cpu_samples[2];
static struct vitals_vital_epoch fx_vitals[3];
static struct vitals_finding fx_findings[2];
static struct vitals_metric fx_metrics[3];
static struct vitals_epoch fx_epoch;

static void
fx_samples(void)
{
	size_t i;

	for (i = 0; i < VITALS_STACK_MAX; i++)
		fx_deep[i] = 0xffffffff80000000ull + i * 16;
	fx_blocking_samples[0] = (struct vitals_sample){ .ts_ns = 5 * NS,
		.label = 0x1234,
		.weight = 250000,
		.count = 250000,
		.slot = 31,
		.exe_id = 7,
		.uid = 0,
		.pid = 1,
		.tid = 1,
		.op = 1,
		.nkstack = VITALS_STACK_MAX,
		.kstack = fx_deep,
		.exe = "/sbin/init",
		.comm = "systemd",
		.args = { 2, 0, 0, 0 } };
	fx_cpu_samples[0] = (struct vitals_sample){ .ts_ns = 1700000000 * NS,
		.label = 0x8000000000000001ull,
		.weight = 1,
		.count = 2,
		.slot = 5,
		.exe_id = 0xdeadbeef,
		.uid = 1000,
		.pid = 42,
		.tid = 43,
		.op = UINT32_MAX,
		.nkstack = 3,
		.nustack = 2,
		.kstack = fx_kst,
		.ustack = fx_ust,
		.ksyms = fx_ksyms,
		.exe = "/usr/bin/ssh",
		.comm = "ssh",
		.args = { 1, UINT64_MAX, 1ull << 63, 0 } };
	fx_cpu_samples[1] = (struct vitals_sample){ .ts_ns = 1700000001 * NS,
		.label = 9,
		.weight = 1,
		.count = 4,
		.slot = 63,
		.exe = "",
		.comm = "" };
}

static void
fx_vital_set(void)
{
	memset(fx_hca_blocking, 0, sizeof(fx_hca_blocking));
	memset(fx_hca_cpu, 0, sizeof(fx_hca_cpu));
	fx_hca_blocking[31] = 250000;
	fx_hca_cpu[0] = 1;
	fx_hca_cpu[5] = 1ull << 63;
	fx_hca_cpu[63] = UINT64_MAX;
	fx_vitals[0] = (struct vitals_vital_epoch){ .name = "blocking",
		.unit = "ns",
		.threshold = 2,
		.floor = 1000,
		.events = 3,
		.wsum = 250000,
		.unique = 1,
		.hca_size = 32,
		.hca = fx_hca_blocking,
		.nsamples = 1,
		.samples = fx_blocking_samples };
	fx_vitals[1] = (struct vitals_vital_epoch){ .name = "cpu",
		.unit = "samples",
		.threshold = 1ull << 40,
		.floor = 1,
		.events = UINT64_MAX,
		.wsum = (1ull << 63) + 5,
		.unique = 3,
		.dropped = 17,
		.samples_dropped = 4,
		.hca_size = 64,
		.hca = fx_hca_cpu,
		.nsamples = 2,
		.samples = fx_cpu_samples };
	fx_vitals[2] = (struct vitals_vital_epoch){
		.name = "syscall", .unit = "samples", .threshold = 2, .floor = 1
	};
}

/* Metrics, sorted by name; "uptime_s" has no dot so a path can reach it. */
static void
fx_metric_set(void)
{
	fx_metrics[0] = (struct vitals_metric){ .name = "proc.cpu.idle_pct",
		.unit = "%",
		.mean = 55.5,
		.min = 10,
		.max = 99.25,
		.last = 60,
		.n = 60 };
	fx_metrics[1] = (struct vitals_metric){
		.name = "proc.disk.sda.await_ms",
		.unit = "ms",
		.mean = 1e-300,
		.min = -0.5,
		.max = 1e300,
		.last = NAN,
		.n = (1ull << 63) + 1,
	};
	fx_metrics[2] = (struct vitals_metric){ .name = "uptime_s",
		.unit = "s",
		.mean = 3,
		.min = 3,
		.max = 3,
		.last = 3,
		.n = 1 };
}

static struct vitals_epoch *
fx_build(void)
{
	fx_samples();
	fx_vital_set();
	fx_metric_set();
	fx_findings[0] = (struct vitals_finding){ .start_ns = 1700000000 * NS,
		.end_ns = 1700000060 * NS,
		.timescale_s = 60,
		.severity = VITALS_SEV_WARN,
		.score = 3.25,
		.value = 1e-300,
		.expected = 0.1,
		.filter = "ewma",
		.vital = "cpu",
		.label = "ssh",
		.text = "cpu of ssh 3.25 sigma above \"normal\"" };
	fx_findings[1] = (struct vitals_finding){ .start_ns = 1,
		.end_ns = 2,
		.timescale_s = 3600,
		.severity = VITALS_SEV_INFO,
		.score = 0,
		.value = -1.5,
		.expected = NAN,
		.filter = "rules",
		.text = "h\xc3\xa9 \xe2\x9c\x93" };
	fx_epoch = (struct vitals_epoch){ .host = "web-1.example.com",
		.start_ns = 1700000000123456789ull,
		.length_ns = 60 * NS + 3,
		.timescale_s = 60,
		.partial = 1,
		.seq = UINT64_MAX - 1,
		.dropped = 1ull << 63,
		.cpu_ns = 12345678,
		.nvitals = 3,
		.nfindings = 2,
		.vitals = fx_vitals,
		.findings = fx_findings,
		.nmetrics = 3,
		.metrics = fx_metrics };
	return &fx_epoch;
}

/* ---- comparing epochs field by field ---- */

static void
check_str(const char *what, const char *a, const char *b)
{
	ck_assert_msg((a == NULL) == (b == NULL), "%s: NULL mismatch", what);
	if (a != NULL)
		ck_assert_msg(
		    strcmp(a, b) == 0, "%s: '%s' != '%s'", what, a, b);
}

static void
check_double(const char *what, double a, double b)
{
	ck_assert_msg(
	    (isnan(a) && isnan(b)) || a == b, "%s: %.17g != %.17g", what, a, b);
}

static void
check_u64s(const char *what, const uint64_t *a, const uint64_t *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(a[i] == b[i], "%s[%u]: %llx != %llx", what, i,
		    (unsigned long long)a[i], (unsigned long long)b[i]);
}

static void
check_sample(const struct vitals_sample *a, const struct vitals_sample *b)
{
	uint32_t i;

	ck_assert_uint_eq(a->ts_ns, b->ts_ns);
	ck_assert_uint_eq(a->label, b->label);
	ck_assert_uint_eq(a->weight, b->weight);
	ck_assert_uint_eq(a->count, b->count);
	ck_assert_uint_eq(a->slot, b->slot);
	ck_assert_uint_eq(a->exe_id, b->exe_id);
	ck_assert_uint_eq(a->uid, b->uid);
	ck_assert_uint_eq(a->pid, b->pid);
	ck_assert_uint_eq(a->tid, b->tid);
	ck_assert_uint_eq(a->op, b->op);
	ck_assert_uint_eq(a->nkstack, b->nkstack);
	ck_assert_uint_eq(a->nustack, b->nustack);
	check_u64s("kstack", a->kstack, b->kstack, a->nkstack);
	check_u64s("ustack", a->ustack, b->ustack, a->nustack);
	check_u64s("args", a->args, b->args, VITALS_NARGS);
	ck_assert((a->ksyms == NULL) == (b->ksyms == NULL));
	for (i = 0; a->ksyms != NULL && i < a->nkstack; i++)
		check_str("ksyms", a->ksyms[i], b->ksyms[i]);
	check_str("exe", a->exe, b->exe);
	check_str("comm", a->comm, b->comm);
}

static void
check_vital(
    const struct vitals_vital_epoch *a, const struct vitals_vital_epoch *b)
{
	uint32_t i;

	check_str("name", a->name, b->name);
	check_str("unit", a->unit, b->unit);
	ck_assert_uint_eq(a->threshold, b->threshold);
	ck_assert_uint_eq(a->floor, b->floor);
	ck_assert_uint_eq(a->events, b->events);
	ck_assert_uint_eq(a->wsum, b->wsum);
	ck_assert_uint_eq(a->unique, b->unique);
	ck_assert_uint_eq(a->dropped, b->dropped);
	ck_assert_uint_eq(a->samples_dropped, b->samples_dropped);
	ck_assert_uint_eq(a->hca_size, b->hca_size);
	check_u64s("hca", a->hca, b->hca, a->hca_size);
	ck_assert_uint_eq(a->nsamples, b->nsamples);
	for (i = 0; i < a->nsamples; i++)
		check_sample(&a->samples[i], &b->samples[i]);
}

static void
check_finding(const struct vitals_finding *a, const struct vitals_finding *b)
{
	ck_assert_uint_eq(a->start_ns, b->start_ns);
	ck_assert_uint_eq(a->end_ns, b->end_ns);
	ck_assert_uint_eq(a->timescale_s, b->timescale_s);
	ck_assert_uint_eq(a->severity, b->severity);
	check_double("score", a->score, b->score);
	check_double("value", a->value, b->value);
	check_double("expected", a->expected, b->expected);
	check_str("filter", a->filter, b->filter);
	check_str("vital", a->vital, b->vital);
	check_str("label", a->label, b->label);
	check_str("text", a->text, b->text);
}

static void
check_metric(const struct vitals_metric *a, const struct vitals_metric *b)
{
	check_str("metric name", a->name, b->name);
	check_str("metric unit", a->unit, b->unit);
	check_double("mean", a->mean, b->mean);
	check_double("min", a->min, b->min);
	check_double("max", a->max, b->max);
	check_double("last", a->last, b->last);
	ck_assert_uint_eq(a->n, b->n);
}

static void
check_epoch(const struct vitals_epoch *a, const struct vitals_epoch *b)
{
	uint32_t i;

	check_str("host", a->host, b->host);
	ck_assert_uint_eq(a->start_ns, b->start_ns);
	ck_assert_uint_eq(a->length_ns, b->length_ns);
	ck_assert_uint_eq(a->timescale_s, b->timescale_s);
	ck_assert_uint_eq(a->partial, b->partial);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->dropped, b->dropped);
	ck_assert_uint_eq(a->cpu_ns, b->cpu_ns);
	ck_assert_uint_eq(a->nvitals, b->nvitals);
	ck_assert_uint_eq(a->nfindings, b->nfindings);
	for (i = 0; i < a->nvitals; i++)
		check_vital(&a->vitals[i], &b->vitals[i]);
	for (i = 0; i < a->nfindings; i++)
		check_finding(&a->findings[i], &b->findings[i]);
	ck_assert_uint_eq(a->nmetrics, b->nmetrics);
	for (i = 0; i < a->nmetrics; i++)
		check_metric(&a->metrics[i], &b->metrics[i]);
}

/* Encode e, print it as text, parse and decode it back. */
static struct vitals_epoch *
roundtrip(const struct vitals_epoch *e)
{
	struct vitals_epoch *out = NULL;
	json_error_t je;
	char err[256] = "";
	json_t *j;
	char *s;
	int r;

	j = epoch_json(e);
	ck_assert_ptr_nonnull(j);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	ck_assert_ptr_nonnull(s);
	j = json_loads(s, 0, &je);
	free(s);
	ck_assert_msg(j != NULL, "reparse: %s", je.text);
	r = codec_epoch_from_json(j, &out, err, sizeof(err));
	json_decref(j);
	ck_assert_msg(r == 0, "decode: %d %s", r, err);
	return out;
}

START_TEST(test_roundtrip)
{
	struct vitals_epoch *e = fx_build(), *d = roundtrip(e);

	check_epoch(e, d);
	ck_assert_ptr_null(d->vitals[2].hca);
	ck_assert_ptr_null(d->findings[1].vital);
	/* Equal strings are stored once: cpu's ksyms[2] and [4] are "". */
	ck_assert_str_eq(d->vitals[1].name, "cpu");
	ck_assert_ptr_eq(
	    d->vitals[1].samples[0].ksyms[2], d->vitals[1].samples[0].ksyms[4]);
	ck_assert_ptr_eq(
	    d->vitals[1].samples[1].exe, d->vitals[1].samples[1].comm);
	ck_assert_ptr_ne(
	    d->vitals[1].samples[0].exe, d->vitals[1].samples[0].comm);
	vitals_epoch_free(d);
}
END_TEST

START_TEST(test_intern)
{
	struct vitals_epoch *e = epoch_new();
	const char *a, *first[600];
	char buf[32];
	int i;

	ck_assert_ptr_nonnull(e);
	a = epoch_intern(e, "do_syscall_64+0x10");
	ck_assert_str_eq(a, "do_syscall_64+0x10");
	ck_assert_ptr_eq(epoch_intern(e, "do_syscall_64+0x10"), a);
	ck_assert_ptr_ne(epoch_intern(e, "do_syscall_64+0x1"), a);
	ck_assert_str_eq(epoch_intern(e, NULL), "");
	ck_assert_ptr_eq(epoch_intern(e, NULL), epoch_intern(e, ""));
	/* Past the table's first size: it grows and still finds them all. */
	for (i = 0; i < 600; i++) {
		snprintf(buf, sizeof(buf), "f%d", i);
		first[i] = epoch_intern(e, buf);
	}
	for (i = 0; i < 600; i++) {
		snprintf(buf, sizeof(buf), "f%d", i);
		ck_assert_ptr_eq(epoch_intern(e, buf), first[i]);
	}
	ck_assert_ptr_eq(epoch_intern(e, "do_syscall_64+0x10"), a);
	vitals_epoch_free(e);
}
END_TEST

/* Byte arrays are stored once too, apart from strings; sealing keeps them. */
START_TEST(test_intern_bytes)
{
	struct vitals_epoch *e = epoch_new();
	const uint64_t f[3] = { 1, 2, 0xffffffff81000000ull },
		       g[3] = { 1, 2, 3 };
	const uint64_t *a, *b;
	const char *s;

	ck_assert_ptr_nonnull(e);
	a = epoch_intern_bytes(e, f, sizeof(f));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_ne(a, f);
	ck_assert_mem_eq(a, f, sizeof(f));
	ck_assert_ptr_eq(epoch_intern_bytes(e, f, sizeof(f)), a);
	b = epoch_intern_bytes(e, g, sizeof(g));
	ck_assert_ptr_ne(b, a);
	ck_assert_mem_eq(b, g, sizeof(g));
	/* A prefix is another array. */
	ck_assert_ptr_ne(epoch_intern_bytes(e, f, 2 * sizeof(*f)), a);
	ck_assert_ptr_null(epoch_intern_bytes(e, f, 0));
	/* The bytes "ab" and the string "ab" are kept apart. */
	s = epoch_intern(e, "ab");
	ck_assert_ptr_ne(epoch_intern_bytes(e, "ab", 2), s);
	epoch_seal(e);
	epoch_seal(e);
	ck_assert_mem_eq(a, f, sizeof(f));
	ck_assert_str_eq(s, "ab");
	/* Sealed, it still interns, into a new table. */
	ck_assert_str_eq(epoch_intern(e, "ab"), "ab");
	ck_assert_ptr_eq(epoch_intern(e, "cd"), epoch_intern(e, "cd"));
	ck_assert_mem_eq(epoch_intern_bytes(e, f, sizeof(f)), f, sizeof(f));
	epoch_seal(NULL);
	vitals_epoch_free(e);
}
END_TEST

START_TEST(test_u64_bit_pattern)
{
	struct vitals_epoch *e = fx_build();
	json_t *j = epoch_json(e);

	/* Stored as the int64 with the same bits: 2^63 reads as INT64_MIN. */
	ck_assert_int_eq(
	    json_integer_value(json_object_get(j, "dropped")), INT64_MIN);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "seq")), -2);
	json_decref(j);
}
END_TEST

START_TEST(test_hca_sparse)
{
	struct vitals_epoch *e = fx_build(), *d;
	json_t *j = epoch_json(e), *hca, *nz;

	hca = json_object_get(
	    json_array_get(json_object_get(j, "vitals"), 1), "hca");
	ck_assert_int_eq(json_integer_value(json_object_get(hca, "n")), 64);
	nz = json_object_get(hca, "nz");
	ck_assert_uint_eq(json_array_size(nz), 3);
	ck_assert_int_eq(
	    json_integer_value(json_array_get(json_array_get(nz, 2), 0)), 63);
	ck_assert_int_eq(
	    json_integer_value(json_array_get(json_array_get(nz, 2), 1)), -1);
	json_decref(j);
	d = roundtrip(e);
	check_u64s("hca", fx_hca_cpu, d->vitals[1].hca, 64);
	ck_assert_uint_eq(d->vitals[0].hca[31], 250000);
	ck_assert_uint_eq(d->vitals[0].hca[0], 0);
	vitals_epoch_free(d);
}
END_TEST

START_TEST(test_vitals_sorted)
{
	struct vitals_epoch *e = fx_build(), *d;
	struct vitals_vital_epoch rev[3] = { fx_vitals[2], fx_vitals[0],
		fx_vitals[1] };
	uint32_t i;

	e->vitals = rev;
	d = roundtrip(e);
	for (i = 0; i < 3; i++)
		check_vital(&fx_vitals[i], &d->vitals[i]);
	ck_assert_ptr_eq(vitals_epoch_vital(d, "cpu"), &d->vitals[1]);
	ck_assert_ptr_eq(vitals_epoch_vital(e, "cpu"), &rev[2]);
	ck_assert_ptr_null(vitals_epoch_vital(d, "lock"));
	vitals_epoch_free(d);
}
END_TEST

START_TEST(test_encode_defensive)
{
	struct vitals_epoch *e = fx_build(), *d;
	uint64_t deep[VITALS_STACK_MAX + 6] = { 0 };

	/* Deeper stacks are cut, odd bytes become '?': what is written reads. */
	fx_blocking_samples[0].kstack = deep;
	fx_blocking_samples[0].nkstack = VITALS_STACK_MAX + 6;
	fx_blocking_samples[0].comm = "a\xff\xfe";
	fx_blocking_samples[0].exe = NULL;
	e->host = NULL;
	d = roundtrip(e);
	ck_assert_uint_eq(d->vitals[0].samples[0].nkstack, VITALS_STACK_MAX);
	ck_assert_str_eq(d->vitals[0].samples[0].comm, "a??");
	ck_assert_str_eq(d->vitals[0].samples[0].exe, "");
	ck_assert_str_eq(d->host, "");
	vitals_epoch_free(d);
}
END_TEST

/* Files written before metrics existed load, with none. */
START_TEST(test_metrics_absent)
{
	struct vitals_epoch *e = fx_build(), *d = NULL;
	json_t *j = epoch_json(e);
	char err[256] = "";

	ck_assert(json_is_object(json_object_get(j, "metrics")));
	ck_assert_int_eq(json_object_del(j, "metrics"), 0);
	ck_assert_int_eq(codec_epoch_from_json(j, &d, err, sizeof(err)), 0);
	json_decref(j);
	ck_assert_uint_eq(d->nmetrics, 0);
	ck_assert_ptr_null(d->metrics);
	ck_assert_ptr_null(vitals_epoch_metric(d, "uptime_s"));
	e->nmetrics = 0;
	check_epoch(e, d);
	vitals_epoch_free(d);
}
END_TEST

/* Whatever order the object's members come in, the epoch is sorted. */
START_TEST(test_metrics_sorted)
{
	struct vitals_epoch *e = fx_build(), *d = NULL;
	json_t *j = epoch_json(e), *m, *rev;
	char err[256] = "";
	int i;

	m = json_object_get(j, "metrics");
	ck_assert_uint_eq(json_object_size(m), 3);
	rev = json_object();
	for (i = 2; i >= 0; i--)
		json_object_set(rev, fx_metrics[i].name,
		    json_object_get(m, fx_metrics[i].name));
	json_object_set_new(j, "metrics", rev);
	ck_assert_int_eq(codec_epoch_from_json(j, &d, err, sizeof(err)), 0);
	json_decref(j);
	check_epoch(e, d);
	ck_assert_ptr_eq(vitals_epoch_metric(d, "uptime_s"), &d->metrics[2]);
	ck_assert_ptr_eq(
	    vitals_epoch_metric(d, "proc.cpu.idle_pct"), &d->metrics[0]);
	ck_assert_ptr_null(vitals_epoch_metric(d, "proc.cpu"));
	vitals_epoch_free(d);
}
END_TEST

/* A metric without a name is left out; odd bytes of a name become '?'. */
START_TEST(test_metrics_defensive)
{
	struct vitals_epoch *e = fx_build(), *d;

	fx_metrics[0].name = NULL;
	fx_metrics[1].name = "caf\xc3";
	fx_metrics[2].unit = NULL;
	d = roundtrip(e);
	ck_assert_uint_eq(d->nmetrics, 2);
	ck_assert_str_eq(d->metrics[0].name, "caf?");
	ck_assert_str_eq(d->metrics[1].name, "uptime_s");
	ck_assert_str_eq(d->metrics[1].unit, "");
	vitals_epoch_free(d);
}
END_TEST

/* ---- broken documents: a valid one with one member changed ---- */

struct bad_case {
	const char *where; /* container, as "vitals.1.samples.0" ("" = root) */
	const char *key; /* member or index to change there */
	const char *value; /* JSON text to put there, NULL to remove it */
	const char *want; /* the start of the expected error */
};

static const struct bad_case bad_cases[] = {
	{ "", "format", NULL, "format: missing" },
	{ "", "format", "3", "format: unsupported" },
	{ "", "host", "5", "host: expected a string" },
	{ "", "start_ns", "\"x\"", "start_ns: expected an integer" },
	{ "", "length_ns", "1.5", "length_ns: expected an integer" },
	{ "", "timescale_s", "-1", "timescale_s: -1 out of range" },
	{ "", "partial", "4294967296", "partial: 4294967296 out of range" },
	{ "", "vitals", "{}", "vitals: expected an array" },
	{ "", "vitals", NULL, "vitals: missing" },
	{ "", "findings", NULL, "findings: missing" },
	{ "vitals", "1", "3", "vitals[1]: expected an object" },
	{ "vitals.0", "name", "\"\"", "vitals[0].name: empty" },
	{ "vitals.0", "unit", "null", "vitals[0].unit: expected a string" },
	{ "vitals.0", "hca_size", "48",
	    "vitals[0].hca_size: 48 is not a power of two" },
	{ "vitals.0", "hca_size", "2147483648",
	    "vitals[0].hca_size: 2147483648 is more than" },
	{ "vitals.0", "hca", NULL, "vitals[0].hca: missing" },
	{ "vitals.0", "hca", "[]", "vitals[0].hca: expected an object" },
	{ "vitals.0.hca", "n", "64",
	    "vitals[0].hca.n: expected hca_size (32)" },
	{ "vitals.0.hca", "nz", "5", "vitals[0].hca.nz: expected an array" },
	{ "vitals.0.hca", "nz", "[[32, 1]]",
	    "vitals[0].hca.nz[0]: index 32 out of range (n = 32)" },
	{ "vitals.0.hca", "nz", "[[-1, 1]]",
	    "vitals[0].hca.nz[0]: index -1 out of range" },
	{ "vitals.0.hca", "nz", "[[1, 1], [1, 2]]",
	    "vitals[0].hca.nz[1]: index 1 not after 1" },
	{ "vitals.0.hca", "nz", "[[1]]",
	    "vitals[0].hca.nz[0]: expected [index, value]" },
	{ "vitals.0.hca", "nz", "[[1, 2], [3, \"x\"]]",
	    "vitals[0].hca.nz[1]: expected [index, value]" },
	{ "vitals.1", "samples", "{}", "vitals[1].samples: expected an array" },
	{ "vitals.1.samples", "1", "[]",
	    "vitals[1].samples[1]: expected an object" },
	{ "vitals.1.samples.1", "pid", NULL,
	    "vitals[1].samples[1].pid: missing" },
	{ "vitals.1.samples.0", "slot", "64",
	    "vitals[1].samples[0].slot: 64 out of range (hca_size 64)" },
	{ "vitals.1.samples.0", "kstack", "\"x\"",
	    "vitals[1].samples[0].kstack: expected an array" },
	{ "vitals.1.samples.0.kstack", "1", "\"x\"",
	    "vitals[1].samples[0].kstack[1]: expected an integer" },
	{ "vitals.1.samples.0", "ustack", NULL,
	    "vitals[1].samples[0].ustack: missing" },
	{ "vitals.1.samples.0", "ksyms", "[\"a\"]",
	    "vitals[1].samples[0].ksyms: expected 3 names" },
	{ "vitals.1.samples.0", "ksyms", "{}",
	    "vitals[1].samples[0].ksyms: expected an array" },
	{ "vitals.1.samples.0.ksyms", "2", "7",
	    "vitals[1].samples[0].ksyms[2]: expected a string" },
	{ "vitals.1.samples.0", "args", "[1, 2, 3]",
	    "vitals[1].samples[0].args: expected 4 numbers" },
	{ "vitals.1.samples.0.args", "3", "true",
	    "vitals[1].samples[0].args[3]: expected an integer" },
	{ "vitals.1.samples.0", "comm", "null",
	    "vitals[1].samples[0].comm: expected a string" },
	{ "vitals.2", "name", "\"cpu\"", "vitals: vital 'cpu' appears twice" },
	{ "findings", "0", "\"f\"", "findings[0]: expected an object" },
	{ "findings.0", "text", "1", "findings[0].text: expected a string" },
	{ "findings.1", "vital", "1",
	    "findings[1].vital: expected a string or null" },
	{ "findings.0", "score", "\"high\"",
	    "findings[0].score: expected a number" },
	{ "findings.0", "severity", "-2", "findings[0].severity: -2 out of" },
	{ "", "metrics", "[]", "metrics: expected an object" },
	{ "metrics", "uptime_s", "3", "metrics.uptime_s: expected an object" },
	{ "metrics", "",
	    "{\"unit\": \"s\", \"mean\": 1, \"min\": 1, \"max\": 1, "
	    "\"last\": 1, \"n\": 1}",
	    "metrics: a metric has an empty name" },
	{ "metrics.uptime_s", "n", NULL, "metrics.uptime_s.n: missing" },
	{ "metrics.uptime_s", "n", "0", "metrics.uptime_s.n: no observations" },
	{ "metrics.uptime_s", "n", "1.5",
	    "metrics.uptime_s.n: expected an integer" },
	{ "metrics.uptime_s", "mean", "\"x\"",
	    "metrics.uptime_s.mean: expected a number" },
	{ "metrics.uptime_s", "unit", NULL, "metrics.uptime_s.unit: missing" },
};

/* The member at a dotted path; numbers index arrays. */
static json_t *
json_at(json_t *j, const char *where)
{
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", where);
	for (tok = strtok_r(buf, ".", &save); tok != NULL && j != NULL;
	     tok = strtok_r(NULL, ".", &save)) {
		if (tok[0] >= '0' && tok[0] <= '9')
			j = json_array_get(j, strtoul(tok, NULL, 10));
		else
			j = json_object_get(j, tok);
	}
	return j;
}

static void
json_change(json_t *c, const char *key, const char *value)
{
	json_t *v = NULL;
	size_t i = strtoul(key, NULL, 10);

	if (value != NULL)
		ck_assert_ptr_nonnull(
		    v = json_loads(value, JSON_DECODE_ANY, NULL));
	if (json_is_array(c))
		ck_assert_int_eq(
		    v ? json_array_set_new(c, i, v) : json_array_remove(c, i),
		    0);
	else
		ck_assert_int_eq(v ? json_object_set_new(c, key, v)
				   : json_object_del(c, key),
		    0);
}

START_TEST(test_bad_document)
{
	const struct bad_case *c = &bad_cases[_i];
	struct vitals_epoch *out = NULL;
	json_t *j = epoch_json(fx_build()), *at;
	char err[256] = "";
	int r;

	at = json_at(j, c->where);
	ck_assert_msg(at != NULL, "case %d: no %s", _i, c->where);
	json_change(at, c->key, c->value);
	r = codec_epoch_from_json(j, &out, err, sizeof(err));
	json_decref(j);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_ptr_null(out);
	ck_assert_msg(strncmp(err, c->want, strlen(c->want)) == 0,
	    "case %d: got '%s', want '%s...'", _i, err, c->want);
}
END_TEST

START_TEST(test_bad_root)
{
	struct vitals_epoch *out = NULL;
	json_t *j = json_array();
	char err[128];

	ck_assert_int_eq(
	    codec_epoch_from_json(j, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "(root): expected an object");
	json_decref(j);
}
END_TEST

START_TEST(test_too_many_frames)
{
	struct vitals_epoch *out = NULL;
	json_t *j = epoch_json(fx_build()), *k;
	char err[256] = "";

	k = json_at(j, "vitals.0.samples.0.kstack");
	ck_assert_uint_eq(json_array_size(k), VITALS_STACK_MAX);
	json_array_append_new(k, json_integer(1));
	ck_assert_int_eq(
	    codec_epoch_from_json(j, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err,
	    "vitals[0].samples[0].kstack: more than 64 "
	    "frames");
	json_decref(j);
}
END_TEST

/* ---- file names ---- */

struct name_case {
	uint64_t start_ns;
	const char *host;
	const char *relpath;
	const char *parsed_host;
};

static const struct name_case name_cases[] = {
	{ 0, "h", "1970-01-01/19700101T000000.000Z_h.json.gz", "h" },
	{ 1700000000123456789ull, "web-1.example.com",
	    "2023-11-14/20231114T221320.123Z_web-1.example.com.json.gz",
	    "web-1.example.com" },
	{ 951782400000000000ull, "my host/../evil",
	    "2000-02-29/20000229T000000.000Z_my_host_.._evil.json.gz",
	    "my_host_.._evil" },
	{ 951782400999999999ull, "h\xc3\xa9_x",
	    "2000-02-29/20000229T000000.999Z_h___x.json.gz", "h___x" },
	{ 86399999000000ull, "", "1970-01-01/19700101T235959.999Z__.json.gz",
	    "_" },
	{ 86400000000000ull, NULL, "1970-01-02/19700102T000000.000Z__.json.gz",
	    "_" },
	{ UINT64_MAX, "h", "2554-07-21/25540721T233433.709Z_h.json.gz", "h" },
};

START_TEST(test_name_roundtrip)
{
	const struct name_case *c = &name_cases[_i];
	char buf[256], host[64];
	uint64_t start = 1;
	int n;

	n = codec_epoch_relpath(c->start_ns, c->host, buf, sizeof(buf));
	ck_assert_int_eq(n, (int)strlen(c->relpath));
	ck_assert_str_eq(buf, c->relpath);
	ck_assert_int_eq(
	    codec_parse_name(strchr(buf, '/') + 1, &start, host, sizeof(host)),
	    0);
	ck_assert_uint_eq(start, c->start_ns / 1000000 * 1000000);
	ck_assert_str_eq(host, c->parsed_host);
}
END_TEST

static const char *const bad_names[] = {
	"",
	"x",
	"20231114T221320.123Z_h.json",
	"20231114T221320.123Z_h.json.gz.tmp",
	"20231114T221320.123Z_.json.gz",
	"20231114T221320.123Z_h!x.json.gz",
	"20231114T221320.123Z_h/x.json.gz",
	"20231314T221320.123Z_h.json.gz",
	"20231100T221320.123Z_h.json.gz",
	"20230230T000000.000Z_h.json.gz",
	"20231114T241320.123Z_h.json.gz",
	"20231114T226020.123Z_h.json.gz",
	"20231114T221360.123Z_h.json.gz",
	"20231114X221320.123Z_h.json.gz",
	"20231114T221320.12aZ_h.json.gz",
	"2023111T221320.123Z_h.json.gz",
	".20231114T221320.123Z_h.json.gz.tmp.42",
	"19691231T235959.999Z_h.json.gz",
	"25540721T233434.000Z_h.json.gz",
	"99991231T235959.999Z_h.json.gz",
	"a20231114T221320.123Z_h.json.gz",
};

START_TEST(test_name_reject)
{
	char host[64] = "unchanged";
	uint64_t start = 7;

	ck_assert_msg(codec_parse_name(
			  bad_names[_i], &start, host, sizeof(host)) == -EINVAL,
	    "accepted '%s'", bad_names[_i]);
	ck_assert_uint_eq(start, 7);
	ck_assert_str_eq(host, "unchanged");
}
END_TEST

START_TEST(test_name_limits)
{
	char buf[256], host[4], longhost[300];
	uint64_t start;

	ck_assert_int_eq(codec_epoch_relpath(0, "h", buf, 20), -ENAMETOOLONG);
	memset(longhost, 'a', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	ck_assert_int_eq(
	    codec_epoch_relpath(0, longhost, buf, sizeof(buf)), -ENAMETOOLONG);
	ck_assert_int_eq(codec_parse_name("19700101T000000.000Z_abcd.json.gz",
			     &start, host, sizeof(host)),
	    -EINVAL);
	ck_assert_int_eq(codec_parse_name("19700101T000000.000Z_abc.json.gz",
			     &start, host, sizeof(host)),
	    0);
	ck_assert_str_eq(host, "abc");
}
END_TEST

static Suite *
codec_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *t = tcase_create("json");
	TCase *n = tcase_create("names");

	tcase_add_test(t, test_roundtrip);
	tcase_add_test(t, test_intern);
	tcase_add_test(t, test_intern_bytes);
	tcase_add_test(t, test_u64_bit_pattern);
	tcase_add_test(t, test_hca_sparse);
	tcase_add_test(t, test_vitals_sorted);
	tcase_add_test(t, test_encode_defensive);
	tcase_add_test(t, test_metrics_absent);
	tcase_add_test(t, test_metrics_sorted);
	tcase_add_test(t, test_metrics_defensive);
	tcase_add_loop_test(t, test_bad_document, 0, NCASES(bad_cases));
	tcase_add_test(t, test_bad_root);
	tcase_add_test(t, test_too_many_frames);
	suite_add_tcase(s, t);
	tcase_add_loop_test(n, test_name_roundtrip, 0, NCASES(name_cases));
	tcase_add_loop_test(n, test_name_reject, 0, NCASES(bad_names));
	tcase_add_test(n, test_name_limits);
	suite_add_tcase(s, n);
	return s;
}

int
main(void)
{
	return testutil_run(codec_suite());
}
