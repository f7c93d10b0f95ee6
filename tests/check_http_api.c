/* SPDX-License-Identifier: MIT */
/*
 * The http plugin's API (outputs/http/api.c) without a server: requests
 * as path and query string against an empty store, table-driven, for the
 * status, the parameter an error names and the limits.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>
#include <vitals/store.h>

#include "api.h"
#include "testutil.h"

#define NS 1000000000ull
/* 2026-11-22T10:00:00Z */
#define NOW (1795341600ull * NS)

static char *tdir;
static struct api_env env;

static void
setup(void)
{
	tdir = testutil_tmpdir("check_http_api");
	memset(&env, 0, sizeof(env));
	env.data_dir = strdup(tdir);
	env.epoch_ns = 60 * NS;
	env.ntimescales = 3;
	env.timescales[0] = 300;
	env.timescales[1] = 3600;
	env.timescales[2] = 86400;
	env.max_range_ns = 2 * 86400 * NS;
	env.max_response = 1 << 20;
}

static void
teardown(void)
{
	api_env_free(&env);
	testutil_tmpdir_remove(tdir);
	tdir = NULL;
}

/* Answer path?query; the JSON body in *j (the caller's). */
static int
ask(const char *path, const char *query, json_t **j)
{
	struct api_answer a;
	json_error_t e;
	int status;

	api_answer(&env, path, query, NOW, &a);
	ck_assert_ptr_nonnull(a.body);
	ck_assert_str_eq(a.type, "application/json");
	*j = json_loadb(a.body, a.len, 0, &e);
	ck_assert_msg(*j != NULL, "%s?%s: not JSON: %.*s", path, query,
	    (int)a.len, a.body);
	status = a.status;
	api_answer_free(&a);
	return status;
}

static const struct {
	const char *path, *query;
	int status;
	const char *param; /* named by the error, or NULL */
} cases[] = {
	/* answers over an empty store */
	{ "/api/v1/hosts", NULL, 200, NULL },
	{ "/api/v1/hosts", "", 200, NULL },
	{ "/api/v1/epochs", "from=-2h&to=now&limit=5", 200, NULL },
	{ "/api/v1/epochs", "from=&to=", 200, NULL },
	{ "/api/v1/time", "t=2026-11-22T10:00Z", 200, NULL },
	{ "/api/v1/time", "t=-1h", 200, NULL },
	{ "/api/v1/time", "t=2026-11-22+10%3A00Z", 200, NULL },
	{ "/api/v1/time", "t=1795341600000000000", 200, NULL },
	/* paths */
	{ "/api/v1/nosuch", NULL, 404, NULL },
	{ "/api/v1/", NULL, 404, NULL },
	{ "/api/v2/hosts", NULL, 404, NULL },
	{ "/api/v1/hosts/", NULL, 404, NULL },
	{ "/api/v1/epoch/", NULL, 400, "id" },
	{ "/api/v1/epoch/x1", NULL, 400, "id" },
	{ "/api/v1/epoch/99999999999999999999", NULL, 400, "id" },
	{ "/api/v1/epoch/1795341600000000000", NULL, 404, NULL },
	{ "/api/v1/epoch/1795341600000000000", "host=a/b", 400, "host" },
	/* parameter names */
	{ "/api/v1/hosts", "from=-1h", 400, "from" },
	{ "/api/v1/epochs", "bogus", 400, "bogus" },
	{ "/api/v1/epochs", "From=-1h", 400, "From" },
	{ "/api/v1/epochs", "from=-1h&from=-2h", 400, "from" },
	{ "/api/v1/epochs", "&&&limit=3&&", 200, NULL },
	{ "/api/v1/epochs", "%66rom=-1h", 200, NULL },
	{ "/api/v1/epochs", "%ZZ=1", 400, "%ZZ" },
	{ "/api/v1/epochs", "x%0a=1", 400, "x%0a" },
	{ "/api/v1/epochs", "%62ogus=1", 400, "bogus" },
	/* values */
	{ "/api/v1/epochs", "from=%", 400, "from" },
	{ "/api/v1/epochs", "from=%4", 400, "from" },
	{ "/api/v1/epochs", "from=%00", 400, "from" },
	{ "/api/v1/epochs", "from=%c3%28", 400, "from" },
	{ "/api/v1/epochs", "from=soon", 400, "from" },
	{ "/api/v1/epochs", "to=2026-02-30", 400, "to" },
	{ "/api/v1/epochs", "from=-1h&to=-2h", 400, "to" },
	{ "/api/v1/epochs", "from=-1h&to=-1h", 400, "to" },
	{ "/api/v1/epochs", "from=-3d", 413, "from" },
	{ "/api/v1/epochs", "limit=-1", 400, "limit" },
	{ "/api/v1/epochs", "limit=0", 400, "limit" },
	{ "/api/v1/epochs", "limit=1x", 400, "limit" },
	{ "/api/v1/epochs", "limit=99999999999999999999999", 400, "limit" },
	{ "/api/v1/epochs", "host=a,b,,c", 200, NULL },
	{ "/api/v1/epochs", "host=a%2Fb", 400, "host" },
	{ "/api/v1/series", "timescale=7m", 400, "timescale" },
	{ "/api/v1/series", "timescale=5", 400, "timescale" },
	{ "/api/v1/series", "timescale=-5m", 400, "timescale" },
	{ "/api/v1/series", "top=101", 400, "top" },
	{ "/api/v1/fleet", "vital=cpu,sched", 400, "vital" },
	{ "/api/v1/fleet", "top=1", 400, "top" },
	{ "/api/v1/fleet", "timescale=7m", 400, "timescale" },
	{ "/api/v1/top", "k=0", 400, "k" },
	{ "/api/v1/findings", "severity=warning", 400, "severity" },
	{ "/api/v1/samples", NULL, 400, "epoch" },
	{ "/api/v1/samples", "epoch=1&slot=4294967296", 400, "slot" },
	{ "/api/v1/samples", "epoch=1&limit=100001", 400, "limit" },
	{ "/api/v1/time", NULL, 400, "t" },
	{ "/api/v1/time", "t=", 400, "t" },
	{ "/api/v1/time", "t=2600-01-01", 400, "t" },
	/* central collection */
	{ "/api/v1/files", NULL, 200, NULL },
	{ "/api/v1/files", "since=20261122T100000.000Z_a.json.gz&limit=5", 200,
	    NULL },
	{ "/api/v1/files", "since=../x", 400, "since" },
	{ "/api/v1/files", "since=2026-11-22/20261122T100000.000Z_a.json.gz",
	    400, "since" },
	{ "/api/v1/files", "limit=1001", 400, "limit" },
	{ "/api/v1/files", "host=a/b", 400, "host" },
	{ "/api/v1/file/", NULL, 400, "name" },
	{ "/api/v1/file/..%2Fetc%2Fpasswd", NULL, 400, "name" },
	{ "/api/v1/file/20261122T100000.000Z_a.json.gz", NULL, 404, NULL },
	{ "/api/v1/nodes", NULL, 200, NULL },
};

START_TEST(test_cases)
{
	json_t *j, *p;
	int status;

	status = ask(cases[_i].path, cases[_i].query, &j);
	ck_assert_msg(status == cases[_i].status, "%s?%s: %d, expected %d: %s",
	    cases[_i].path, cases[_i].query, status, cases[_i].status,
	    json_string_value(json_object_get(j, "error")));
	p = json_object_get(j, "param");
	if (cases[_i].param == NULL)
		ck_assert_msg(p == NULL, "%s?%s: names %s", cases[_i].path,
		    cases[_i].query, json_string_value(p));
	else
		ck_assert_msg(p != NULL &&
			strcmp(json_string_value(p), cases[_i].param) == 0,
		    "%s?%s: names %s, not %s", cases[_i].path, cases[_i].query,
		    json_string_value(p), cases[_i].param);
	if (status >= 400)
		ck_assert_ptr_nonnull(
		    json_string_value(json_object_get(j, "error")));
	json_decref(j);
}
END_TEST

/* 413s say their limit: the range's in ns, the answer's in bytes. */
START_TEST(test_limits)
{
	json_t *j;

	ck_assert_int_eq(ask("/api/v1/epochs", "from=-3d", &j), 413);
	ck_assert_uint_eq(
	    json_integer_value(json_object_get(j, "limit")), 2 * 86400 * NS);
	json_decref(j);
	env.max_response = 10;
	ck_assert_int_eq(ask("/api/v1/hosts", NULL, &j), 413);
	ck_assert_uint_eq(json_integer_value(json_object_get(j, "limit")), 10);
	json_decref(j);
}
END_TEST

/* /time resolves as the other endpoints read times. */
START_TEST(test_time)
{
	json_t *j;

	ck_assert_int_eq(ask("/api/v1/time", "t=-1h", &j), 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "t")), "-1h");
	ck_assert_uint_eq(
	    json_integer_value(json_object_get(j, "ns")), NOW - 3600 * NS);
	json_decref(j);
	ck_assert_int_eq(ask("/api/v1/epochs", "from=-90m&to=-30m", &j), 200);
	ck_assert_uint_eq(
	    json_integer_value(json_object_get(j, "from_ns")), NOW - 5400 * NS);
	ck_assert_uint_eq(
	    json_integer_value(json_object_get(j, "to_ns")), NOW - 1800 * NS);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "epochs")), 0);
	json_decref(j);
}
END_TEST

/* hosts over an empty store; local only when the daemon says so. */
START_TEST(test_hosts)
{
	json_t *j;

	ck_assert_int_eq(ask("/api/v1/hosts", NULL, &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "hosts")), 0);
	ck_assert_ptr_null(json_object_get(j, "local"));
	json_decref(j);
	env.local = strdup("web-1");
	ck_assert_int_eq(ask("/api/v1/hosts", NULL, &j), 200);
	ck_assert_str_eq(
	    json_string_value(json_object_get(j, "local")), "web-1");
	json_decref(j);
}
END_TEST

/* An epoch of host at start, its file's mtime set to mtime. */
static void
put_epoch(
    const char *host, uint64_t start, uint64_t mtime, char *path, size_t len)
{
	struct vitals_epoch e = { 0 };
	struct timespec ts[2];
	char err[256];

	e.host = host;
	e.start_ns = start;
	e.length_ns = 60 * NS;
	e.timescale_s = 60;
	ck_assert_int_eq(
	    vitals_epoch_save(&e, tdir, path, len, err, sizeof(err)), 0);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime / NS);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/*
 * files lists the settled files after the cursor, stops at one written
 * less than 2 s ago (more only when the limit cut the answer); file/NAME
 * sends a listed file's bytes as stored.
 */
START_TEST(test_files)
{
	char p1[512], p2[512], p3[512], *disk = NULL;
	struct api_answer a;
	size_t len = 0;
	json_t *j, *f;
	FILE *fh;

	put_epoch("a", NOW - 180 * NS, NOW - 100 * NS, p1, sizeof(p1));
	put_epoch("b", NOW - 180 * NS, NOW - 100 * NS, p2, sizeof(p2));
	put_epoch("a", NOW - 120 * NS, NOW - NS, p3, sizeof(p3));
	ck_assert_int_eq(ask("/api/v1/files", "host=a", &j), 200);
	f = json_object_get(j, "files");
	ck_assert_uint_eq(json_array_size(f), 1);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(f, 0), "name")),
	    strrchr(p1, '/') + 1);
	/* one still settling is not "more": a central would ask at once */
	ck_assert(json_is_false(json_object_get(j, "more")));
	json_decref(j);
	ck_assert_int_eq(ask("/api/v1/files",
			     "limit=1&since="
			     "20261122T095700.000Z_a.json.gz",
			     &j),
	    200);
	f = json_object_get(j, "files");
	ck_assert_uint_eq(json_array_size(f), 1);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(f, 0), "host")),
	    "b");
	ck_assert(json_is_true(json_object_get(j, "more")));
	json_decref(j);
	api_answer(
	    &env, "/api/v1/file/20261122T095700.000Z_a.json.gz", NULL, NOW, &a);
	ck_assert_int_eq(a.status, 200);
	ck_assert_str_eq(a.type, "application/gzip");
	ck_assert_ptr_nonnull(fh = fopen(p1, "rb"));
	disk = malloc(a.len + 1);
	len = fread(disk, 1, a.len + 1, fh);
	fclose(fh);
	ck_assert_uint_eq(len, a.len);
	ck_assert_int_eq(memcmp(disk, a.body, len), 0);
	free(disk);
	api_answer_free(&a);
	/* teardown removes the (then empty) data dir. */
	snprintf(p1, sizeof(p1), "rm -rf '%s'/2026-*", tdir);
	ck_assert_int_eq(system(p1), 0);
}
END_TEST

/* Only /api/ is the API; only /api/v1/time is answered without a worker. */
START_TEST(test_paths)
{
	ck_assert(api_is_api("/api/v1/hosts"));
	ck_assert(api_is_api("/api"));
	ck_assert(!api_is_api("/apix"));
	ck_assert(!api_is_api("/index.html"));
	ck_assert(api_is_quick("/api/v1/time"));
	ck_assert(!api_is_quick("/api/v1/timex"));
	ck_assert(!api_is_quick("/api/v1/hosts"));
}
END_TEST

static Suite *
api_suite(void)
{
	Suite *s = suite_create("http_api");
	TCase *tc = tcase_create("api");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_cases, 0, NCASES(cases));
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_time);
	tcase_add_test(tc, test_hosts);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_files);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(api_suite());
}
