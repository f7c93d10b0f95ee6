/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/store/store.c, the epoch store: save and load back, list
 * in order across date dirs and hosts, report corrupt files without
 * hiding good ones, and prune by age, size and stale temporary files;
 * never follow a link planted in the data dir, refuse FIFOs, devices and
 * gzip bombs, and recover the temporary files a killed writer left.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <vitals/store.h>

#include "codec.h"
#include "epoch_json.h"
#include "testutil.h"

#define NS 1000000000ull
#define HOUR (3600 * NS)
/* 2023-11-14T00:00:00Z */
#define DAY0 (1699920000ull * NS)
#define DAY (24 * HOUR)

/* {"format": 1, oops  (gzip -n) */
static const unsigned char gz_bad_json[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0xcb, 0x2f, 0xca, 0x4d, 0x2c,
	0x51, 0xb2, 0x52, 0x30, 0xd4, 0x51, 0xc8, 0xcf, 0x2f, 0x28, 0x06, 0x00,
	0xf5, 0xa9, 0x08, 0x1a, 0x12, 0x00, 0x00, 0x00 };
/* {"format":1,"host":"h","start_ns":"soon"}  (gzip -n) */
static const unsigned char gz_bad_epoch[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0xcb, 0x2f, 0xca, 0x4d,
	0x2c, 0x51, 0xb2, 0x32, 0xd4, 0x51, 0xca, 0xc8, 0x2f, 0x06, 0x32, 0x94,
	0x32, 0x94, 0x74, 0x94, 0x8a, 0x4b, 0x12, 0x8b, 0x4a, 0xe2, 0xf3, 0x8a,
	0x81, 0xdc, 0xe2, 0xfc, 0xfc, 0x3c, 0xa5, 0x5a, 0x00, 0x19, 0xfd, 0x47,
	0xaa, 0x29, 0x00, 0x00, 0x00 };

/* ---- a small epoch ---- */

static uint64_t fx_hca[32];
static const uint64_t fx_kst[] = { 0xffffffff81000000ull, 1ull << 63 };
static const char *const fx_ksyms[] = { "do_sys_poll+0x1f", "?" };
static struct vitals_sample fx_sample;
static struct vitals_vital_epoch fx_vital;
static struct vitals_finding fx_finding;
static const struct vitals_metric fx_metrics[] = {
	{ "proc.disk.sda.util_pct", "%", 12.5, 0, 100, 3.25, 60 },
	{ "proc.mem.free_bytes", "bytes", 1e9, 9e8, 1.1e9, 1e9, 60 },
};
static struct vitals_epoch fx_epoch;

static struct vitals_epoch *
fx(const char *host, uint64_t start_ns)
{
	memset(fx_hca, 0, sizeof(fx_hca));
	fx_hca[3] = 7;
	fx_hca[17] = UINT64_MAX;
	fx_sample = (struct vitals_sample){ .ts_ns = start_ns + 1,
		.label = 5,
		.weight = 1,
		.count = 4,
		.slot = 3,
		.pid = 10,
		.tid = 11,
		.nkstack = 2,
		.kstack = fx_kst,
		.ksyms = fx_ksyms,
		.exe = "/usr/sbin/sshd",
		.comm = "sshd",
		.args = { 1, 2, 3, UINT64_MAX } };
	fx_vital = (struct vitals_vital_epoch){ .name = "cpu",
		.unit = "samples",
		.threshold = 4,
		.floor = 1,
		.events = 9,
		.wsum = 9,
		.unique = 2,
		.hca_size = 32,
		.hca = fx_hca,
		.nsamples = 1,
		.samples = &fx_sample };
	fx_finding = (struct vitals_finding){ .start_ns = start_ns,
		.end_ns = start_ns + 60 * NS,
		.timescale_s = 60,
		.severity = VITALS_SEV_CRIT,
		.score = 9.5,
		.value = 100,
		.expected = 10,
		.filter = "threshold",
		.text = "too much" };
	fx_epoch = (struct vitals_epoch){ .host = host,
		.start_ns = start_ns,
		.length_ns = 60 * NS,
		.timescale_s = 60,
		.seq = 3,
		.cpu_ns = 1000,
		.nvitals = 1,
		.nfindings = 1,
		.vitals = &fx_vital,
		.findings = &fx_finding,
		.nmetrics = 2,
		.metrics = fx_metrics };
	return &fx_epoch;
}

/* ---- helpers ---- */

static void
save(const char *host, uint64_t start_ns, char *path, size_t len)
{
	char err[512] = "";
	int r;

	r = vitals_epoch_save(
	    fx(host, start_ns), testutil_dir, path, len, err, sizeof(err));
	ck_assert_msg(r == 0, "save: %d %s", r, err);
}

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* rel in this test's directory (see testutil_path). */
#define tpath(rel) testutil_path(testutil_dir, rel)

/* Both epochs encode to the same JSON: every field is equal. */
static void
check_same(const struct vitals_epoch *a, const struct vitals_epoch *b)
{
	json_t *ja = epoch_json(a), *jb = epoch_json(b);

	ck_assert(json_equal(ja, jb));
	json_decref(ja);
	json_decref(jb);
}

/* Number of entries in dir whose names start with '.' (not . and ..). */
static int
count_dotfiles(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* ---- save, load, list ---- */

START_TEST(test_save_load)
{
	struct vitals_store_list l = { 0, NULL };
	struct vitals_epoch *e = NULL;
	char path[512], err[512] = "";
	struct stat st;
	mode_t old = umask(077);

	save("web-1", DAY0 + 80000123456789ull, path, sizeof(path));
	umask(old);
	ck_assert_str_eq(
	    path, tpath("2023-11-14/20231114T221320.123Z_web-1.json.gz"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(count_dotfiles(tpath("2023-11-14")), 0);
	ck_assert_int_eq(vitals_epoch_load(path, &e, err, sizeof(err)), 0);
	check_same(fx("web-1", DAY0 + 80000123456789ull), e);
	ck_assert_uint_eq(e->nmetrics, 2);
	ck_assert(vitals_epoch_metric(e, "proc.mem.free_bytes")->min == 9e8);
	vitals_epoch_free(e);
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.v[0].path, path);
	ck_assert_str_eq(l.v[0].host, "web-1");
	ck_assert_uint_eq(l.v[0].start_ns, DAY0 + 80000123000000ull);
	vitals_store_list_free(&l);
	ck_assert_ptr_null(l.v);
	vitals_store_list_free(&l);
}
END_TEST

/* vitals_epoch_json: the file's JSON text, which reads back to the epoch. */
START_TEST(test_epoch_json)
{
	const struct vitals_epoch *e = fx("web-1", DAY0 + 5 * NS);
	struct vitals_epoch *back = NULL;
	char *text = NULL, *ref, err[512] = "";
	json_t *j;
	size_t len = 0;

	ck_assert_int_eq(vitals_epoch_json(e, &text, &len), 0);
	ck_assert_uint_eq(len, strlen(text));
	ck_assert_ptr_nonnull(j = epoch_json(e));
	ck_assert_ptr_nonnull(ref = json_dumps(j, JSON_COMPACT));
	ck_assert_str_eq(text, ref);
	ck_assert_int_eq(
	    codec_epoch_parse(text, len, &back, err, sizeof(err)), 0);
	check_same(e, back);
	vitals_epoch_free(back);
	json_decref(j);
	free(ref);
	free(text);
}
END_TEST

START_TEST(test_encode_put)
{
	struct vitals_epoch_file f;
	struct vitals_epoch *e = NULL;
	char path[512], err[512] = "";
	unsigned char magic[2];
	FILE *fp;

	ck_assert_int_eq(vitals_epoch_encode(fx("web-1", DAY0 + 5000000000ull),
			     &f, err, sizeof(err)),
	    0);
	ck_assert_str_eq(
	    f.rel, "2023-11-14/20231114T000005.000Z_web-1.json.gz");
	ck_assert_uint_eq(f.start_ns, DAY0 + 5000000000ull);
	ck_assert_uint_gt(f.len, 20);
	/* Written later, to a dir that did not exist when it was encoded. */
	ck_assert_int_eq(vitals_epoch_put(&f, tpath("later"), path,
			     sizeof(path), err, sizeof(err)),
	    0);
	ck_assert_str_eq(
	    path, tpath("later/2023-11-14/20231114T000005.000Z_web-1.json.gz"));
	ck_assert_ptr_nonnull(fp = fopen(path, "rb"));
	ck_assert_uint_eq(fread(magic, 1, 2, fp), 2);
	fclose(fp);
	ck_assert(magic[0] == 0x1f && magic[1] == 0x8b); /* gzip */
	ck_assert_int_eq(vitals_epoch_load(path, &e, err, sizeof(err)), 0);
	check_same(fx("web-1", DAY0 + 5000000000ull), e);
	vitals_epoch_free(e);
	/* A failed put leaves f whole for the next try. */
	testutil_write_bytes(tpath("file"), "x", 1);
	ck_assert_int_eq(
	    vitals_epoch_put(&f, tpath("file"), NULL, 0, err, sizeof(err)),
	    -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, tpath("file")));
	ck_assert_int_eq(
	    vitals_epoch_put(&f, testutil_dir, NULL, 0, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
	ck_assert_ptr_null(f.data);
	/* A freed (or never encoded) one is refused, not dereferenced. */
	ck_assert_int_eq(
	    vitals_epoch_put(&f, testutil_dir, NULL, 0, err, sizeof(err)),
	    -EINVAL);
	vitals_epoch_file_free(&f);
	vitals_epoch_file_free(NULL);
}
END_TEST

/*
 * Counters past the bytes allowed are folded on encoding: the largest
 * HCA halves until they fit (not below VITALS_FOLD_MIN), every counter
 * lands in its low bits' slot, samples' slots with it, and nothing else
 * of the epoch changes; an allowance they fit, or 0, folds nothing.
 */
START_TEST(test_encode_fold)
{
	static uint64_t hca[1024], small[32];
	static struct vitals_sample sm[3];
	struct vitals_vital_epoch vs[2];
	struct vitals_epoch e = *fx("h", DAY0), *d;
	struct vitals_epoch_file f;
	uint64_t sum = 0, got, want, allowed;
	char err[256];
	uint32_t i, j, m;

	for (i = 0; i < 1024; i++)
		sum += hca[i] = (i % 3 == 0) ? 0 : 1000 + i;
	small[5] = 77;
	for (i = 0; i < 3; i++) {
		sm[i] = fx_sample;
		sm[i].slot = 1000 - 300 * i;
		sm[i].label = 100 + i;
	}
	vs[0] = fx_vital;
	vs[0].hca_size = 1024;
	vs[0].hca = hca;
	vs[0].nsamples = 3;
	vs[0].samples = sm;
	vs[1] = fx_vital;
	vs[1].name = "sched";
	vs[1].hca_size = 32;
	vs[1].hca = small;
	vs[1].nsamples = 0;
	vs[1].samples = NULL;
	e.vitals = vs;
	e.nvitals = 2;
	/* Room for what 256 counters of the big vital take, and the small. */
	allowed =
	    codec_hca_bytes(hca, 1024, 256) + codec_hca_bytes(small, 32, 32);
	ck_assert_int_eq(
	    vitals_epoch_encode_within(&e, allowed, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    vitals_epoch_decode(f.data, f.len, &d, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
	ck_assert_uint_eq(d->nvitals, 2);
	m = d->vitals[0].hca_size;
	ck_assert_uint_eq(m, 256);
	for (i = 0, got = 0; i < m; i++) {
		for (j = i, want = 0; j < 1024; j += m)
			want += hca[j];
		ck_assert_uint_eq(d->vitals[0].hca[i], want);
		got += d->vitals[0].hca[i];
	}
	ck_assert_uint_eq(got, sum);
	ck_assert_uint_eq(d->vitals[0].nsamples, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(
		    d->vitals[0].samples[i].slot, sm[i].slot & (m - 1));
		ck_assert_uint_eq(d->vitals[0].samples[i].label, sm[i].label);
	}
	ck_assert_uint_eq(d->vitals[0].events, fx_vital.events);
	ck_assert_uint_eq(d->vitals[1].hca_size, 32); /* the small one kept */
	ck_assert_uint_eq(d->vitals[1].hca[5], 77);
	vitals_epoch_free(d);
	/* The input is untouched. */
	ck_assert_uint_eq(sm[0].slot, 1000);
	/* Too little room: not below the minimum. */
	ck_assert_int_eq(
	    vitals_epoch_encode_within(&e, 1, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    vitals_epoch_decode(f.data, f.len, &d, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
	ck_assert_uint_eq(d->vitals[0].hca_size, VITALS_FOLD_MIN);
	ck_assert_uint_eq(d->vitals[1].hca_size, 32);
	vitals_epoch_free(d);
	/* 0, or room enough: as it was. */
	ck_assert_int_eq(
	    vitals_epoch_encode_within(&e, 0, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    vitals_epoch_decode(f.data, f.len, &d, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
	ck_assert_uint_eq(d->vitals[0].hca_size, 1024);
	ck_assert_uint_eq(d->vitals[0].samples[0].slot, 1000);
	vitals_epoch_free(d);
	ck_assert_int_eq(
	    vitals_epoch_encode_within(&e, 1u << 30, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    vitals_epoch_decode(f.data, f.len, &d, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
	ck_assert_uint_eq(d->vitals[0].hca_size, 1024);
	vitals_epoch_free(d);
}
END_TEST

/*
 * Listing from a time on: only files starting then or later, sorted, from
 * date dirs of that day on (a file misplaced in an earlier day's dir is
 * not seen), and listings longer than the first allocation.
 */
START_TEST(test_list_since)
{
	struct vitals_store_list l;
	char rel[128];
	uint64_t t, since = DAY0 + 86400 * NS + 3600 * NS;
	size_t i, want = 0;

	/* Three days, one file every 30 minutes, two hosts: 288 files. */
	for (i = 0; i < 144; i++) {
		t = DAY0 + i * 1800 * NS;
		ck_assert_int_gt(
		    codec_epoch_relpath(t, "b", rel, sizeof(rel)), 0);
		*strchr(rel, '/') = '\0';
		mkdir(tpath(rel), 0755);
		rel[strlen(rel)] = '/';
		testutil_write_bytes(tpath(rel), "x", 1);
		ck_assert_int_gt(
		    codec_epoch_relpath(t, "a", rel, sizeof(rel)), 0);
		testutil_write_bytes(tpath(rel), "x", 1);
		want += t >= since ? 2 : 0;
	}
	/* In the first day's dir but named for the last: not read. */
	testutil_write_bytes(
	    tpath("2023-11-14/20231116T000000.000Z_z.json.gz"), "x", 1);
	testutil_write_bytes(tpath("2023-11-16/.tmp.junk"), "x", 1);
	ck_assert_int_eq(vitals_store_list_since(testutil_dir, since, &l), 0);
	ck_assert_uint_eq(l.n, want);
	ck_assert_uint_eq(l.v[0].start_ns, since);
	ck_assert_str_eq(l.v[0].host, "a");
	ck_assert_str_eq(l.v[1].host, "b");
	for (i = 1; i < l.n; i++)
		ck_assert(l.v[i - 1].start_ns < l.v[i].start_ns ||
		    (l.v[i - 1].start_ns == l.v[i].start_ns &&
			strcmp(l.v[i - 1].host, l.v[i].host) < 0));
	vitals_store_list_free(&l);
	/* From 0, and by vitals_store_list(), every file. */
	ck_assert_int_eq(vitals_store_list_since(testutil_dir, 0, &l), 0);
	ck_assert_uint_eq(l.n, 289);
	vitals_store_list_free(&l);
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 289);
	vitals_store_list_free(&l);
	/* From after the last file, none; a missing store, -ENOENT. */
	ck_assert_int_eq(
	    vitals_store_list_since(testutil_dir, DAY0 + 4 * 86400 * NS, &l),
	    0);
	ck_assert_uint_eq(l.n, 0);
	vitals_store_list_free(&l);
	ck_assert_int_eq(
	    vitals_store_list_since(tpath("none"), since, &l), -ENOENT);
}
END_TEST

START_TEST(test_save_no_path)
{
	struct vitals_store_list l;

	save("h", DAY0, NULL, 0);
	save("h", DAY0, NULL, 0); /* the same epoch again replaces it */
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	vitals_store_list_free(&l);
}
END_TEST

START_TEST(test_list_order)
{
	static const struct {
		const char *host;
		uint64_t start;
	} in[] = {
		{ "b", DAY0 + DAY },
		{ "a", DAY0 + DAY - NS / 2 },
		{ "b", DAY0 + DAY - NS / 2 },
		{ "a", DAY0 + DAY },
		{ "a", DAY0 + 5 },
	}, want[] = {
		{ "a", DAY0 },
		{ "a", DAY0 + DAY - NS / 2 },
		{ "b", DAY0 + DAY - NS / 2 },
		{ "a", DAY0 + DAY },
		{ "b", DAY0 + DAY },
	};
	struct vitals_store_list l;
	size_t i;

	for (i = 0; i < 5; i++)
		save(in[i].host, in[i].start, NULL, 0);
	/* Junk the listing must skip. */
	testutil_write_bytes(tpath("README"), "x", 1);
	testutil_write_bytes(tpath("2023-11-14/notes.txt"), "x", 1);
	testutil_write_bytes(
	    tpath("2023-11-14/.20231114T000000.000Z_a.json.gz.tmp.9"), "x", 1);
	ck_assert_int_eq(mkdir(tpath("lost+found"), 0700), 0);
	testutil_write_bytes(
	    tpath("lost+found/20231114T000000.000Z_z.json.gz"), "x", 1);
	testutil_write_bytes(tpath("2023-11-16"), "not a dir", 9);
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_str_eq(l.v[i].host, want[i].host);
		ck_assert_uint_eq(l.v[i].start_ns, want[i].start);
	}
	ck_assert_ptr_nonnull(strstr(l.v[0].path, "/2023-11-14/"));
	ck_assert_ptr_nonnull(strstr(l.v[4].path, "/2023-11-15/"));
	vitals_store_list_free(&l);
}
END_TEST

START_TEST(test_list_missing)
{
	struct vitals_store_list l = { 42, NULL };

	ck_assert_int_eq(vitals_store_list(tpath("nope"), &l), -ENOENT);
	ck_assert_uint_eq(l.n, 42);
}
END_TEST

/* ---- corrupt files ---- */

enum { BAD_TRUNCATED, BAD_GARBAGE, BAD_JSON, BAD_EPOCH, BAD_EMPTY };

static const struct {
	int kind;
	const char *why; /* expected in err after "PATH: " */
} bad_files[] = {
	{ BAD_TRUNCATED, "gzip: " },
	{ BAD_GARBAGE, "not a gzip file" },
	{ BAD_JSON, "line 1 column" },
	{ BAD_EPOCH, "start_ns: expected an integer" },
	{ BAD_EMPTY, "not a gzip file" },
};

static void
make_bad(int kind, const char *path)
{
	unsigned char junk[300];
	struct stat st;
	size_t i;

	switch (kind) {
	case BAD_TRUNCATED:
		save("bad", DAY0 + HOUR, NULL, 0);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
		break;
	case BAD_GARBAGE:
		for (i = 0; i < sizeof(junk); i++)
			junk[i] = (unsigned char)(i * 7 + 3);
		testutil_write_bytes(path, junk, sizeof(junk));
		break;
	case BAD_JSON:
		testutil_write_bytes(path, gz_bad_json, sizeof(gz_bad_json));
		break;
	case BAD_EPOCH:
		testutil_write_bytes(path, gz_bad_epoch, sizeof(gz_bad_epoch));
		break;
	default:
		testutil_write_bytes(path, "", 0);
	}
}

START_TEST(test_corrupt)
{
	const char *bad = tpath("2023-11-14/20231114T010000.000Z_bad.json.gz");
	struct vitals_store_list l;
	struct vitals_epoch *e = NULL;
	char good[512], err[1024] = "", want[1024];

	save("good", DAY0, good, sizeof(good));
	make_bad(bad_files[_i].kind, bad);
	ck_assert_int_eq(
	    vitals_epoch_load(bad, &e, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_null(e);
	snprintf(want, sizeof(want), "%s: ", bad);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "err '%s'", err);
	ck_assert_msg(strstr(err, bad_files[_i].why) != NULL, "err '%s'", err);
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(l.v[0].path, good);
	ck_assert_int_eq(
	    vitals_epoch_load(l.v[0].path, &e, err, sizeof(err)), 0);
	check_same(fx("good", DAY0), e);
	vitals_epoch_free(e);
	vitals_store_list_free(&l);
}
END_TEST

/*
 * Gzip files in the forms a reader meets beyond one member of the right
 * size: made by hand with stored (uncompressed) deflate blocks.
 */
static uint32_t
gz_crc(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void
gz_le32(FILE *f, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		fputc((int)(v >> (8 * i)) & 0xff, f);
}

/* One gzip member of p[0..n) (n < 65536) with the CRC and size given. */
static void
gz_member(FILE *f, const char *p, size_t n, uint32_t crc, uint32_t size)
{
	static const unsigned char head[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0,
		3 };

	fwrite(head, 1, sizeof(head), f);
	fputc(1, f); /* BFINAL, stored */
	fputc((int)(n & 0xff), f);
	fputc((int)(n >> 8), f);
	fputc((int)(~n & 0xff), f);
	fputc((int)((~n >> 8) & 0xff), f);
	fwrite(p, 1, n, f);
	gz_le32(f, crc);
	gz_le32(f, size);
}

enum { GZ_TWO_MEMBERS, GZ_TRAILING, GZ_BAD_CRC, GZ_BAD_SIZE };

static const struct {
	int kind;
	int rc;
	const char *why; /* in err when rc != 0 */
} gz_forms[] = {
	{ GZ_TWO_MEMBERS, 0, NULL },
	{ GZ_TRAILING, 0, NULL },
	{ GZ_BAD_CRC, -EBADMSG, "gzip: " },
	{ GZ_BAD_SIZE, -EBADMSG, "gzip: " },
};

START_TEST(test_gzip_forms)
{
	const char *path = tpath("2023-11-14/20231114T000000.000Z_g.json.gz");
	json_t *j = epoch_json(fx("g", DAY0));
	char *text = json_dumps(j, JSON_COMPACT), err[1024] = "";
	const unsigned char *t = (const unsigned char *)text;
	size_t n = strlen(text), half = n / 2;
	struct vitals_epoch *e = NULL;
	int kind = gz_forms[_i].kind, r;
	FILE *f;

	ck_assert_uint_lt(n, 65536);
	mkdir(tpath("2023-11-14"), 0755);
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	if (kind == GZ_TWO_MEMBERS) {
		gz_member(f, text, half, gz_crc(t, half), (uint32_t)half);
		gz_member(f, text + half, n - half, gz_crc(t + half, n - half),
		    (uint32_t)(n - half));
	} else {
		gz_member(f, text, n, gz_crc(t, n) ^ (kind == GZ_BAD_CRC),
		    (uint32_t)n + (kind == GZ_BAD_SIZE));
	}
	if (kind == GZ_TRAILING)
		fwrite("\0\0\0\0", 1, 4, f);
	ck_assert_int_eq(fclose(f), 0);
	r = vitals_epoch_load(path, &e, err, sizeof(err));
	ck_assert_msg(r == gz_forms[_i].rc, "%d: %s", r, err);
	if (r == 0)
		check_same(fx("g", DAY0), e);
	else
		ck_assert_msg(strstr(err, gz_forms[_i].why) != NULL, "%s", err);
	vitals_epoch_free(e);
	free(text);
	json_decref(j);
}
END_TEST

START_TEST(test_load_missing)
{
	const char *p = tpath("2023-11-14/20231114T010000.000Z_x.json.gz");
	struct vitals_epoch *e = NULL;
	char err[512] = "";

	ck_assert_int_eq(vitals_epoch_load(p, &e, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(e);
	ck_assert_ptr_nonnull(strstr(err, p));
}
END_TEST

START_TEST(test_save_fails)
{
	char err[512] = "", path[16];

	/* The data dir is a file: mkdir of the date dir fails. */
	testutil_write_bytes(tpath("file"), "x", 1);
	ck_assert_int_eq(vitals_epoch_save(fx("h", DAY0), tpath("file"), NULL,
			     0, err, sizeof(err)),
	    -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, tpath("file")));
	/* The date dir exists but is a file. */
	testutil_write_bytes(tpath("2023-11-14"), "x", 1);
	ck_assert_int_lt(vitals_epoch_save(fx("h", DAY0), testutil_dir, NULL, 0,
			     err, sizeof(err)),
	    0);
	ck_assert_int_eq(vitals_epoch_save(fx("h", DAY0 + DAY), testutil_dir,
			     path, sizeof(path), err, sizeof(err)),
	    -ENAMETOOLONG);
	ck_assert(!exists(tpath("2023-11-15")));
}
END_TEST

START_TEST(test_save_tmp_cleanup)
{
	char err[512] = "";

	/* The final name is a directory: rename fails, the temp file goes. */
	ck_assert_int_eq(mkdir(tpath("2023-11-14"), 0755), 0);
	ck_assert_int_eq(mkdir(tpath("2023-11-14/20231114T000000.000Z_h."
				     "json.gz"),
			     0755),
	    0);
	testutil_write_bytes(
	    tpath("2023-11-14/20231114T000000.000Z_h.json.gz/x"), "x", 1);
	ck_assert_int_lt(vitals_epoch_save(fx("h", DAY0), testutil_dir, NULL, 0,
			     err, sizeof(err)),
	    0);
	ck_assert_int_eq(count_dotfiles(tpath("2023-11-14")), 0);
}
END_TEST

/* ---- what is not an epoch file ---- */

/* The name of DAY0's epoch of host h, under date dir 2023-11-14. */
#define DAY0_NAME(h) "20231114T000000.000Z_" h ".json.gz"

/*
 * A date dir that is a link (planted by someone who could write the data
 * dir) is neither written into, listed nor pruned through.
 */
START_TEST(test_date_dir_link)
{
	struct vitals_store_list l = { 0, NULL };
	char err[512] = "";

	ck_assert_int_eq(mkdir(tpath("elsewhere"), 0755), 0);
	ck_assert_int_eq(mkdir(tpath("data"), 0755), 0);
	ck_assert_int_eq(
	    symlink(tpath("elsewhere"), tpath("data/2023-11-14")), 0);
	ck_assert_int_eq(vitals_epoch_save(fx("h", DAY0), tpath("data"), NULL,
			     0, err, sizeof(err)),
	    -ELOOP);
	ck_assert_ptr_nonnull(
	    strstr(err, tpath("data/2023-11-14: not a directory")));
	ck_assert_int_eq(count_dotfiles(tpath("elsewhere")), 0);
	/* A file there named like an epoch: not listed, not pruned. */
	testutil_write_bytes(tpath("elsewhere/" DAY0_NAME("h")), "x", 1);
	ck_assert_int_eq(vitals_store_list(tpath("data"), &l), 0);
	ck_assert_uint_eq(l.n, 0);
	vitals_store_list_free(&l);
	ck_assert_int_eq(
	    vitals_store_prune(tpath("data"), HOUR, 1, DAY0 + DAY), 0);
	ck_assert(exists(tpath("elsewhere/" DAY0_NAME("h"))));
	ck_assert(exists(tpath("data/2023-11-14")));
}
END_TEST

/* An epoch name that is a link: retention removes the link, not its target. */
START_TEST(test_prune_file_link)
{
	ck_assert_int_eq(mkdir(tpath("2023-11-14"), 0755), 0);
	testutil_write_bytes(tpath("victim"), "x", 1);
	ck_assert_int_eq(
	    symlink(tpath("victim"), tpath("2023-11-14/" DAY0_NAME("h"))), 0);
	ck_assert_int_eq(
	    vitals_store_prune(testutil_dir, HOUR, 0, DAY0 + DAY), 1);
	ck_assert(exists(tpath("victim")));
	ck_assert(!exists(tpath("2023-11-14")));
}
END_TEST

/* What a file named like an epoch may be instead, and the reason given. */
static const struct {
	const char *what; /* how it is made */
	int r; /* vitals_epoch_load's result */
	const char *why; /* in its message */
} not_files[] = {
	{ "fifo", -EINVAL, "a FIFO, not a regular file: not read" },
	{ "zero", -ELOOP, "a symbolic link: not followed" },
	{ "dir", -EISDIR, "a directory, not a regular file: not read" },
	{ "huge", -EFBIG, "300 MiB, more than the 256 MiB limit: not read" },
};

/*
 * A FIFO does not hang the reader, a link to /dev/zero is not read
 * forever, a file past the compressed limit is not read at all.
 */
START_TEST(test_load_not_a_file)
{
	const char *path = tpath("2023-11-14/" DAY0_NAME("h"));
	struct vitals_epoch *e = NULL;
	char err[512] = "";
	int fd;

	ck_assert_int_eq(mkdir(tpath("2023-11-14"), 0755), 0);
	if (strcmp(not_files[_i].what, "fifo") == 0)
		ck_assert_int_eq(mkfifo(path, 0600), 0);
	else if (strcmp(not_files[_i].what, "zero") == 0)
		ck_assert_int_eq(symlink("/dev/zero", path), 0);
	else if (strcmp(not_files[_i].what, "dir") == 0)
		ck_assert_int_eq(mkdir(path, 0755), 0);
	else {
		ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT, 0644), 0);
		ck_assert_int_eq(ftruncate(fd, 300 << 20), 0); /* sparse */
		close(fd);
	}
	ck_assert_int_eq(
	    vitals_epoch_load(path, &e, err, sizeof(err)), not_files[_i].r);
	ck_assert_ptr_null(e);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_msg(strstr(err, not_files[_i].why) != NULL, "%s", err);
}
END_TEST

/*
 * A gzip bomb (4 MB of members that inflate to 4 GiB of zeros) is
 * refused once it passes the limit, which the message names, and the
 * memory it took stays near the limit, far from what it inflates to.
 */
START_TEST(test_gzip_bomb)
{
	const char *path = tpath("2023-11-14/" DAY0_NAME("h"));
	static unsigned char zeros[1 << 20], member[1 << 20];
	struct vitals_epoch *e = NULL;
	char err[512] = "";
	struct rusage ru;
	z_stream z;
	FILE *f;
	int i;

	/* One member: 64 MiB of zeros, deflated a MiB at a time. */
	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(
	    deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_out = member;
	z.avail_out = sizeof(member);
	for (i = 0; i < 64; i++) {
		z.next_in = zeros;
		z.avail_in = sizeof(zeros);
		ck_assert_int_eq(deflate(&z, i == 63 ? Z_FINISH : Z_NO_FLUSH),
		    i == 63 ? Z_STREAM_END : Z_OK);
	}
	ck_assert_int_eq(mkdir(tpath("2023-11-14"), 0755), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	for (i = 0; i < 64; i++)
		ck_assert_uint_eq(
		    fwrite(member, 1, z.total_out, f), z.total_out);
	ck_assert_int_eq(fclose(f), 0);
	deflateEnd(&z);
	ck_assert_int_eq(vitals_epoch_load(path, &e, err, sizeof(err)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_msg(
	    strstr(err, "inflates to more than the 256 MiB limit") != NULL,
	    "%s", err);
	/* Generous: the limit, its buffer's last doubling, a sanitizer's. */
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	ck_assert_msg(
	    ru.ru_maxrss < 1536L * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
}
END_TEST

/* ---- recovery ---- */

/* Rename path (an epoch file) to its temporary name ".NAME.tmp.TAG". */
static void
to_tmp(const char *path, const char *tag, char *tmp, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(tmp, len, "%.*s/.%s.tmp.%s", (int)(slash - path), path,
	    slash + 1, tag);
	ck_assert_int_eq(rename(path, tmp), 0);
}

/*
 * What a killed writer left: a whole epoch under a temporary name goes
 * into place; a truncated one, one holding another epoch, and a link go;
 * one a live writer holds (locked) stays.
 */
START_TEST(test_recover)
{
	char whole[600], cut[600], other[600], locked[600], tmp[700];
	char err[512] = "";
	struct vitals_epoch *e = NULL;
	unsigned recovered = 9, removed = 9;
	struct stat st;
	int fd;

	save("whole", DAY0, whole, sizeof(whole));
	to_tmp(whole, "0123456789abcdef", tmp, sizeof(tmp));
	save("cut", DAY0, cut, sizeof(cut));
	ck_assert_int_eq(stat(cut, &st), 0);
	ck_assert_int_eq(truncate(cut, st.st_size / 2), 0);
	to_tmp(cut, "1", tmp, sizeof(tmp));
	/* The whole epoch of host "other", under the name of host "x". */
	save("other", DAY0, other, sizeof(other));
	ck_assert_int_eq(
	    rename(other, tpath("2023-11-14/." DAY0_NAME("x") ".tmp.2")), 0);
	ck_assert_int_eq(
	    symlink(whole, tpath("2023-11-14/." DAY0_NAME("ln") ".tmp.3")), 0);
	save("locked", DAY0, locked, sizeof(locked));
	to_tmp(locked, "4", tmp, sizeof(tmp));
	ck_assert_int_ge(fd = open(tmp, O_RDONLY), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);

	ck_assert_int_eq(vitals_store_recover(testutil_dir, &recovered,
			     &removed, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(recovered, 1);
	ck_assert_uint_eq(removed, 3);
	ck_assert_int_eq(vitals_epoch_load(whole, &e, err, sizeof(err)), 0);
	check_same(fx("whole", DAY0), e);
	vitals_epoch_free(e);
	ck_assert(!exists(cut));
	ck_assert(exists(tmp)); /* still being written */
	ck_assert_int_eq(count_dotfiles(tpath("2023-11-14")), 1);
	close(fd);
	/* Its writer gone, it is recovered too. */
	ck_assert_int_eq(vitals_store_recover(testutil_dir, &recovered,
			     &removed, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(recovered, 1);
	ck_assert(exists(locked));
	ck_assert_int_eq(count_dotfiles(tpath("2023-11-14")), 0);
	ck_assert_int_eq(
	    vitals_store_recover(tpath("nope"), NULL, NULL, err, sizeof(err)),
	    0);
}
END_TEST

/* ---- retention ---- */

START_TEST(test_prune_age)
{
	struct vitals_store_list l;
	uint64_t now = DAY0 + 2 * DAY + 13 * HOUR;

	save("a", DAY0 + 12 * HOUR, NULL, 0);
	save("b", DAY0 + 12 * HOUR, NULL, 0);
	save("a", DAY0 + DAY + 12 * HOUR, NULL, 0);
	save("a", DAY0 + 2 * DAY + 12 * HOUR, NULL, 0);
	/* Cutoff now - 36h = day 1, 01:00: the two of day 0 go. */
	ck_assert_int_eq(
	    vitals_store_prune(testutil_dir, 36 * HOUR, 0, now), 2);
	ck_assert(!exists(tpath("2023-11-14")));
	ck_assert(exists(tpath("2023-11-15")));
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.v[0].start_ns, DAY0 + DAY + 12 * HOUR);
	vitals_store_list_free(&l);
	ck_assert_int_eq(
	    vitals_store_prune(testutil_dir, 36 * HOUR, 0, now), 0);
	ck_assert_int_eq(vitals_store_prune(testutil_dir, 0, 0, now), 0);
}
END_TEST

static uint64_t
file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

START_TEST(test_prune_size)
{
	struct vitals_store_list l;
	char p[4][512];
	uint64_t s2, s3;
	int i;

	for (i = 0; i < 4; i++)
		save(i % 2 ? "a" : "bb", DAY0 + (uint64_t)i * 18 * HOUR, p[i],
		    sizeof(p[i]));
	s2 = file_size(p[2]);
	s3 = file_size(p[3]);
	/* Room for the newest two and a byte short of a third. */
	ck_assert_int_eq(vitals_store_prune(testutil_dir, 0,
			     s2 + s3 + file_size(p[1]) - 1, DAY0),
	    2);
	ck_assert(!exists(p[0]) && !exists(p[1]));
	ck_assert(!exists(tpath("2023-11-14")));
	ck_assert(exists(p[2]) && exists(p[3]));
	/* Exactly the newest two: nothing more to do. */
	ck_assert_int_eq(vitals_store_prune(testutil_dir, 0, s2 + s3, DAY0), 0);
	ck_assert_int_eq(vitals_store_prune(testutil_dir, 0, s3, DAY0), 1);
	ck_assert_int_eq(vitals_store_list(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.v[0].path, p[3]);
	vitals_store_list_free(&l);
}
END_TEST

START_TEST(test_prune_tmp)
{
	const char *old = tpath("2023-11-14/.20231114T000000.000Z_h.json.gz."
				"tmp.123");
	const char *fresh = tpath("2023-11-15/.20231115T000000.000Z_h.json.gz."
				  "tmp.124");
	struct timespec ts[2];
	uint64_t now;

	ck_assert_int_eq(mkdir(tpath("2023-11-14"), 0755), 0);
	ck_assert_int_eq(mkdir(tpath("2023-11-15"), 0755), 0);
	testutil_write_bytes(old, "x", 1);
	testutil_write_bytes(fresh, "x", 1);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	now = (uint64_t)ts[0].tv_sec * NS + (uint64_t)ts[0].tv_nsec;
	ts[0].tv_sec -= 2 * 3600;
	ts[1] = ts[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, old, ts, 0), 0);
	ck_assert_int_eq(vitals_store_prune(testutil_dir, 0, 0, now), 1);
	ck_assert(!exists(old));
	ck_assert(!exists(tpath("2023-11-14")));
	ck_assert(exists(fresh));
}
END_TEST

START_TEST(test_prune_missing)
{
	ck_assert_int_eq(vitals_store_prune(tpath("nope"), HOUR, 1, DAY0), 0);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *io = tcase_create("io");
	TCase *big = tcase_create("bomb");
	TCase *pr = tcase_create("prune");

	tcase_add_checked_fixture(
	    io, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(io, test_save_load);
	tcase_add_test(io, test_save_no_path);
	tcase_add_test(io, test_list_since);
	tcase_add_test(io, test_encode_put);
	tcase_add_test(io, test_encode_fold);
	tcase_add_test(io, test_epoch_json);
	tcase_add_test(io, test_list_order);
	tcase_add_test(io, test_list_missing);
	tcase_add_loop_test(io, test_corrupt, 0, NCASES(bad_files));
	tcase_add_test(io, test_load_missing);
	tcase_add_loop_test(io, test_gzip_forms, 0, NCASES(gz_forms));
	tcase_add_test(io, test_save_fails);
	tcase_add_test(io, test_save_tmp_cleanup);
	tcase_add_test(io, test_date_dir_link);
	tcase_add_loop_test(io, test_load_not_a_file, 0, NCASES(not_files));
	tcase_add_test(io, test_recover);
	suite_add_tcase(s, io);
	/* Inflating 256 MiB: seconds on a loaded machine; a hang guard only. */
	tcase_add_checked_fixture(
	    big, testutil_dir_setup, testutil_dir_teardown);
	tcase_set_timeout(big, 120);
	tcase_add_test(big, test_gzip_bomb);
	suite_add_tcase(s, big);
	tcase_add_checked_fixture(
	    pr, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(pr, test_prune_age);
	tcase_add_test(pr, test_prune_size);
	tcase_add_test(pr, test_prune_tmp);
	tcase_add_test(pr, test_prune_file_link);
	tcase_add_test(pr, test_prune_missing);
	suite_add_tcase(s, pr);
	return s;
}

int
main(void)
{
	return testutil_run(store_suite());
}
