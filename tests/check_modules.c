/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for user frames stored as (module, offset): the VITALS_UFRAME
 * macros, the epoch's modules table as the engine builds it (exactly the
 * modules its samples refer to), its JSON round trip through the codec,
 * and vitals_epoch_module.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vitals/store.h>

#include "codec.h"
#include "epoch_json.h"
#include "config.h"
#include "engine.h"
#include "module.h"
#include "testutil.h"

/* ---- the encoding ---- */

static const struct {
	uint32_t id;
	uint64_t off;
} frame_cases[] = {
	{ 0, 0 },
	{ 0, 0x1189 },
	{ 1, 0x7fffffffffffULL },
	{ 4242, 0x123456789aULL },
	{ VITALS_UFRAME_MAX_MODULES - 1, VITALS_UFRAME_OFF_MASK },
};

START_TEST(test_uframe_roundtrip)
{
	uint64_t v = VITALS_UFRAME(frame_cases[_i].id, frame_cases[_i].off);

	ck_assert_int_eq(VITALS_UFRAME_MODULE(v), (int32_t)frame_cases[_i].id);
	ck_assert_uint_eq(VITALS_UFRAME_OFFSET(v), frame_cases[_i].off);
	/* Never mistaken for a raw user address (< 2^47). */
	ck_assert_uint_ge(v, 1ULL << 48);
}
END_TEST

/* Raw user addresses read as "no module", their offset the address. */
static const uint64_t raw_cases[] = { 0, 1, 0x401000, 0x7f12345678ULL,
	0x7fffffffefffULL, 0xffffffffffffULL };

START_TEST(test_uframe_raw)
{
	ck_assert_int_eq(VITALS_UFRAME_MODULE(raw_cases[_i]), -1);
	ck_assert_uint_eq(VITALS_UFRAME_OFFSET(raw_cases[_i]), raw_cases[_i]);
}
END_TEST

/* ---- the engine's table ---- */

static struct config *cfg;
static struct engine *eng;

static void
engine_setup(void)
{
	ck_assert_ptr_nonnull(cfg = config_default());
	cfg->epoch_ns = 1000000000ULL;
	ck_assert_ptr_nonnull(eng = engine_new(cfg, "h1"));
	engine_start(eng, 1000);
}

static void
engine_teardown(void)
{
	engine_free(eng);
	config_free(cfg);
}

static uint32_t
module_at(const char *path, uint64_t ino)
{
	uint32_t id;

	ck_assert_int_eq(module_get(path, 0, ino, 0, &id), 0);
	return id;
}

/* A sample of exe (exe id 0: none) with user frames ustack[0..n). */
static void
emit(struct vitals_vital *v, uint64_t label, uint32_t exe_id, const char *exe,
    const uint64_t *ustack, uint32_t n)
{
	struct vitals_event ev = { .ts_ns = 5,
		.label = label,
		.weight = 1,
		.exe_id = exe_id,
		.pid = 1,
		.nustack = n,
		.ustack = ustack,
		.exe = exe };

	/* Each label's first sighting is sampled. */
	ck_assert_int_eq(vitals_emit(v, &ev), 1);
}

/* Exactly the referenced modules, by id, with path and build-id. */
START_TEST(test_engine_table)
{
	char known[PATH_MAX];
	const char *top = getenv("top_builddir");
	uint32_t lib, unused, bar, exe;
	const struct vitals_epoch *e;
	struct vitals_vital *v;
	struct stat st;
	uint64_t s1[3], s2[2];

	snprintf(
	    known, sizeof(known), "%s/tests/buildid_known", top ? top : ".");
	ck_assert_int_eq(stat(known, &st), 0);
	lib = module_at("/nonexistent/libfoo.so", 11);
	unused = module_at("/nonexistent/libunused.so", 12);
	bar = module_at("/nonexistent/libbar.so", 13);
	ck_assert_int_eq(engine_vital_open(eng, "cpu", "samples", &v), 0);
	s1[0] = VITALS_UFRAME(lib, 0x1000);
	s1[1] = 0x7f0000001000ULL; /* raw: JIT code, no module */
	s1[2] = VITALS_UFRAME(bar, 0x20);
	s2[0] = VITALS_UFRAME(lib, 0x2000);
	s2[1] = VITALS_UFRAME(VITALS_UFRAME_MAX_MODULES - 1, 4); /* unknown */
	emit(v, 0x100, 7, known, s1, 3);
	emit(v, 0x200, 0, NULL, s2, 2);
	e = engine_close(eng, 2000, 0);
	ck_assert_int_eq(module_by_path(known, &exe), 0);
	ck_assert_uint_eq(e->nmodules, 3);
	ck_assert_uint_eq(e->modules[0].id, lib);
	ck_assert_str_eq(e->modules[0].path, "/nonexistent/libfoo.so");
	ck_assert_str_eq(e->modules[0].build_id, "");
	ck_assert_uint_eq(e->modules[1].id, bar);
	ck_assert_uint_eq(e->modules[2].id, exe);
	ck_assert_str_eq(e->modules[2].path, known);
	ck_assert_str_eq(
	    e->modules[2].build_id, "0123456789abcdeffedcba9876543210deadbeef");
	ck_assert_ptr_null(vitals_epoch_module(e, unused));
	ck_assert_ptr_eq(vitals_epoch_module(e, bar), &e->modules[1]);
	/* The next epoch has no samples: no modules. */
	e = engine_close(eng, 3000, 0);
	ck_assert_uint_eq(e->nmodules, 0);
}
END_TEST

/* ---- the codec ---- */

static const uint64_t fx_ust[] = { VITALS_UFRAME(3, 0x1189), 0x7f00001234ULL,
	VITALS_UFRAME(0, 0x42) };
static const struct vitals_module fx_modules[] = {
	{ 0, "/usr/lib/x86_64-linux-gnu/libc.so.6",
	    "c83d5b9ef6e2f0b1e3a58c7d9ae8e6d0c3b1d1aa" },
	{ 3, "/usr/bin/busy", "" },
	{ VITALS_UFRAME_MAX_MODULES - 1, "/opt/x", "00ff" },
};

static struct vitals_epoch *
fx_roundtrip(const struct vitals_epoch *in)
{
	struct vitals_epoch *out = NULL;
	char err[256] = "";
	json_t *j;

	ck_assert_ptr_nonnull(j = epoch_json(in));
	ck_assert_msg(codec_epoch_from_json(j, &out, err, sizeof(err)) == 0,
	    "decode: %s", err);
	json_decref(j);
	return out;
}

START_TEST(test_codec_roundtrip)
{
	struct vitals_sample s = {
		.nustack = 3, .ustack = fx_ust, .exe = "", .comm = ""
	};
	struct vitals_vital_epoch ve = {
		.name = "cpu", .unit = "samples", .nsamples = 1, .samples = &s
	};
	struct vitals_epoch in = { .host = "h",
		.nvitals = 1,
		.vitals = &ve,
		.nmodules = 3,
		.modules = fx_modules };
	struct vitals_epoch *out = fx_roundtrip(&in);
	const struct vitals_module *m;
	uint32_t i;

	ck_assert_uint_eq(out->nmodules, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(out->modules[i].id, fx_modules[i].id);
		ck_assert_str_eq(out->modules[i].path, fx_modules[i].path);
		ck_assert_str_eq(
		    out->modules[i].build_id, fx_modules[i].build_id);
	}
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(
		    out->vitals[0].samples[0].ustack[i], fx_ust[i]);
	m = vitals_epoch_module(out, VITALS_UFRAME_MODULE(fx_ust[0]));
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->path, "/usr/bin/busy");
	ck_assert_ptr_null(vitals_epoch_module(out, 1));
	vitals_epoch_free(out);
}
END_TEST

/* An epoch without modules writes [] and reads back none. */
START_TEST(test_codec_none)
{
	struct vitals_epoch in = { .host = "h" }, *out = fx_roundtrip(&in);

	ck_assert_uint_eq(out->nmodules, 0);
	ck_assert_ptr_null(vitals_epoch_module(out, 0));
	vitals_epoch_free(out);
}
END_TEST

/* Decode a document built from text; returns the codec's result. */
static int
decode_modules(
    const char *modules, struct vitals_epoch **out, char *err, size_t len)
{
	char doc[1024];
	json_error_t je;
	json_t *j;
	int r;

	snprintf(doc, sizeof(doc),
	    "{\"format\": 1, \"host\": \"h\", "
	    "\"start_ns\": 0, \"length_ns\": 0, \"timescale_s\": 60, "
	    "\"partial\": 0, \"seq\": 0, \"dropped\": 0, \"cpu_ns\": 0, "
	    "\"vitals\": [], \"findings\": []%s%s}",
	    modules ? ", " : "", modules ? modules : "");
	ck_assert_ptr_nonnull(j = json_loads(doc, 0, &je));
	r = codec_epoch_from_json(j, out, err, len);
	json_decref(j);
	return r;
}

/* Files written before modules existed, and modules out of order. */
START_TEST(test_codec_absent_and_sorted)
{
	struct vitals_epoch *e = NULL;
	char err[256] = "";

	ck_assert_int_eq(decode_modules(NULL, &e, err, sizeof(err)), 0);
	ck_assert_uint_eq(e->nmodules, 0);
	vitals_epoch_free(e);
	ck_assert_int_eq(
	    decode_modules(
		"\"modules\": ["
		"{\"id\": 9, \"path\": \"/b\", \"build_id\": \"\"}, "
		"{\"id\": 2, \"path\": \"/a\", \"build_id\": \"ab\"}]",
		&e, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(e->nmodules, 2);
	ck_assert_uint_eq(e->modules[0].id, 2);
	ck_assert_str_eq(e->modules[0].build_id, "ab");
	ck_assert_str_eq(vitals_epoch_module(e, 9)->path, "/b");
	vitals_epoch_free(e);
}
END_TEST

static const struct {
	const char *modules;
	const char *err;
} bad_cases[] = {
	{ "\"modules\": {}", "modules: expected an array" },
	{ "\"modules\": [1]", "modules[0]: expected an object" },
	{ "\"modules\": [{\"id\": 1, \"build_id\": \"\"}]",
	    "modules[0].path: missing" },
	{ "\"modules\": [{\"id\": 1, \"path\": \"/a\"}]",
	    "modules[0].build_id: missing" },
	{ "\"modules\": [{\"id\": 65535, \"path\": \"/a\", \"build_id\": "
	  "\"\"}]",
	    "modules[0].id: 65535 out of range (at most 65534)" },
	{ "\"modules\": [{\"id\": 1, \"path\": \"/a\", \"build_id\": \"\"}, "
	  "{\"id\": 1, \"path\": \"/b\", \"build_id\": \"\"}]",
	    "modules: module 1 appears twice" },
};

START_TEST(test_codec_bad)
{
	struct vitals_epoch *e = NULL;
	char err[256] = "";

	ck_assert_int_eq(
	    decode_modules(bad_cases[_i].modules, &e, err, sizeof(err)),
	    -EBADMSG);
	ck_assert_str_eq(err, bad_cases[_i].err);
	ck_assert_ptr_null(e);
}
END_TEST

static Suite *
modules_suite(void)
{
	Suite *s = suite_create("modules");
	TCase *f = tcase_create("uframe"), *g = tcase_create("engine");
	TCase *c = tcase_create("codec");

	tcase_add_loop_test(f, test_uframe_roundtrip, 0, NCASES(frame_cases));
	tcase_add_loop_test(f, test_uframe_raw, 0, NCASES(raw_cases));
	suite_add_tcase(s, f);
	tcase_add_checked_fixture(g, engine_setup, engine_teardown);
	tcase_add_test(g, test_engine_table);
	suite_add_tcase(s, g);
	tcase_add_test(c, test_codec_roundtrip);
	tcase_add_test(c, test_codec_none);
	tcase_add_test(c, test_codec_absent_and_sorted);
	tcase_add_loop_test(c, test_codec_bad, 0, NCASES(bad_cases));
	suite_add_tcase(s, c);
	return s;
}

int
main(void)
{
	return testutil_run(modules_suite());
}
