/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for central collection: the store's cursors (a listing after
 * a file name resumes without a gap or a duplicate), the raw files and
 * their decoding, the nodes' kept state, and the remote output's checks
 * of what a node sends (outputs/remote/verify.c), table-driven.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vitals/store.h>
#include <vitals/vitals.h>

#include "verify.h"
#include "testutil.h"

#define NS 1000000000ull
/* 2023-11-14T00:00:00Z */
#define T0 (1699920000ull * NS)

/* An epoch of host starting at start, len long. */
static void
fx_epoch(struct vitals_epoch *e, const char *host, uint64_t start, uint64_t len)
{
	memset(e, 0, sizeof(*e));
	e->host = host;
	e->start_ns = start;
	e->length_ns = len;
	e->timescale_s = (uint32_t)(len / NS);
}

/* Its file bytes (the caller frees f). */
static void
fx_encode(
    const char *host, uint64_t start, uint64_t len, struct vitals_epoch_file *f)
{
	struct vitals_epoch e;
	char err[256];

	fx_epoch(&e, host, start, len);
	ck_assert_int_eq(vitals_epoch_encode(&e, f, err, sizeof(err)), 0);
}

static void
fx_store(const char *host, uint64_t start)
{
	struct vitals_epoch_file f;
	char err[256];

	fx_encode(host, start, NS, &f);
	ck_assert_int_eq(
	    vitals_epoch_put(&f, testutil_dir, NULL, 0, err, sizeof(err)), 0);
	vitals_epoch_file_free(&f);
}

static const char *
base(const char *p)
{
	return strrchr(p, '/') + 1;
}

/* ---- cursors ---- */

static const struct {
	const char *s;
	int ok;
} names[] = {
	{ "20231114T000000.000Z_a.json.gz", 1 },
	{ "20231114T000000.999Z_web-1.x_y.json.gz", 1 },
	{ "", 0 },
	{ "20231114T000000.000Z_.json.gz", 0 },
	{ "20231114T000000.000Z_a.json", 0 },
	{ "../20231114T000000.000Z_a.json.gz", 0 },
	{ "2023-11-14/20231114T000000.000Z_a.json.gz", 0 },
	{ ".20231114T000000.000Z_a.json.gz.tmp.0123456789abcdef", 0 },
	{ "20231314T000000.000Z_a.json.gz", 0 },
	{ "20231114T000000.000Z_a b.json.gz", 0 },
};

START_TEST(test_name_parse)
{
	uint64_t start = 0;

	ck_assert_int_eq(
	    vitals_store_name_parse(names[_i].s, &start) == 0, names[_i].ok);
	if (names[_i].ok)
		ck_assert_uint_ge(start, T0);
}
END_TEST

/* Every file after each cursor, once, in order, across days and hosts. */
START_TEST(test_list_after)
{
	static const struct {
		const char *host;
		uint64_t start;
	} files[] = {
		{ "a", T0 },
		{ "b", T0 },
		{ "a", T0 + NS },
		{ "a", T0 + 86400 * NS },
		{ "a", T0 + 86401 * NS },
		{ "b", T0 + 86401 * NS },
	};
	struct vitals_store_list l;
	char cursor[VITALS_CURSOR_MAX] = "";
	size_t i, seen = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fx_store(files[i].host, files[i].start);
	/* Host a, two at a time, resuming from the last name each time. */
	for (;;) {
		ck_assert_int_eq(
		    vitals_store_list_after(testutil_dir, cursor, "a", 2, &l),
		    0);
		if (l.n == 0)
			break;
		ck_assert_uint_le(l.n, 2);
		for (i = 0; i < l.n; i++) {
			ck_assert_str_eq(l.v[i].host, "a");
			ck_assert_int_gt(strcmp(base(l.v[i].path), cursor), 0);
			snprintf(
			    cursor, sizeof(cursor), "%s", base(l.v[i].path));
			seen++;
		}
		vitals_store_list_free(&l);
	}
	vitals_store_list_free(&l);
	ck_assert_uint_eq(seen, 4);
	/* All hosts, no limit. */
	ck_assert_int_eq(
	    vitals_store_list_after(testutil_dir, NULL, NULL, 0, &l), 0);
	ck_assert_uint_eq(l.n, 6);
	for (i = 1; i < l.n; i++)
		ck_assert_int_lt(
		    strcmp(base(l.v[i - 1].path), base(l.v[i].path)), 0);
	vitals_store_list_free(&l);
	ck_assert_int_eq(
	    vitals_store_list_after(testutil_dir, "x/../y", NULL, 0, &l),
	    -EINVAL);
}
END_TEST

/* The raw bytes read back decode to the epoch stored. */
START_TEST(test_file_load_decode)
{
	struct vitals_store_list l;
	struct vitals_epoch_file f;
	struct vitals_epoch *e;
	char err[256];

	fx_store("web1", T0 + 5 * NS);
	ck_assert_int_eq(
	    vitals_store_list_after(testutil_dir, NULL, NULL, 0, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_int_eq(
	    vitals_epoch_file_load(l.v[0].path, 1 << 20, &f, err, sizeof(err)),
	    0);
	ck_assert_str_eq(f.rel, "2023-11-14/20231114T000005.000Z_web1.json.gz");
	ck_assert_int_eq(
	    vitals_epoch_decode(f.data, f.len, &e, err, sizeof(err)), 0);
	ck_assert_str_eq(e->host, "web1");
	ck_assert_uint_eq(e->start_ns, T0 + 5 * NS);
	vitals_epoch_free(e);
	ck_assert_int_eq(vitals_epoch_file_load(
			     l.v[0].path, 8, &f, err, sizeof(err)) == -EFBIG,
	    1);
	vitals_epoch_file_free(&f);
	vitals_store_list_free(&l);
}
END_TEST

/* A node's state is kept and read back; junk files are passed over. */
START_TEST(test_node_state)
{
	struct vitals_node n = { 0 };
	struct vitals_node_list l;
	char key[128], err[256], path[512];
	FILE *f;

	ck_assert_int_eq(
	    vitals_node_key("http://10.0.0.2:9977", key, sizeof(key)), 0);
	ck_assert_int_eq(strncmp(key, "10.0.0.2_9977-", 14), 0);
	n.key = key;
	n.url = "http://10.0.0.2:9977";
	n.host = "web1";
	n.cursor = "20231114T000005.000Z_web1.json.gz";
	n.pulled = 7;
	ck_assert_int_eq(
	    vitals_node_save(testutil_dir, &n, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/nodes/junk.json", testutil_dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("{\"key\": \"j\", \"url\": \"u\", \"cursor\": \"../x\"}", f);
	fclose(f);
	/* What a killed writer left behind is removed, the state kept. */
	snprintf(path, sizeof(path), "%s/nodes/.k.json.tmp.0123456789abcdef",
	    testutil_dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fclose(f);
	ck_assert_int_eq(vitals_nodes_recover(testutil_dir), 1);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(vitals_nodes_load(testutil_dir, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.v[0].host, "web1");
	ck_assert_str_eq(l.v[0].cursor, n.cursor);
	ck_assert_uint_eq(l.v[0].pulled, 7);
	vitals_node_list_free(&l);
}
END_TEST

/* ---- the remote output's checks ---- */

static const struct {
	const char *s;
	int ok;
	const char *name, *addr, *prefix;
	uint16_t port;
} specs[] = {
	{ "http://10.0.0.2:9977", 1, "", "10.0.0.2", "", 9977 },
	{ "web1=http://10.0.0.2:9977/", 1, "web1", "10.0.0.2", "", 9977 },
	{ "http://node.example/vitals", 1, "", "node.example", "/vitals", 80 },
	{ "http://[fd00::2]:9977", 1, "", "fd00::2", "", 9977 },
	{ "https://10.0.0.2:9977", 0, NULL, NULL, NULL, 0 },
	{ "10.0.0.2:9977", 0, NULL, NULL, NULL, 0 },
	{ "http://10.0.0.2:0", 0, NULL, NULL, NULL, 0 },
	{ "http://10.0.0.2:99999", 0, NULL, NULL, NULL, 0 },
	{ "http://:9977", 0, NULL, NULL, NULL, 0 },
	{ "a/b=http://10.0.0.2:9977", 0, NULL, NULL, NULL, 0 },
	{ "http://10.0.0.2:9977/x?y", 0, NULL, NULL, NULL, 0 },
};

START_TEST(test_spec)
{
	struct remote_spec sp;
	char why[256];

	ck_assert_int_eq(
	    remote_spec_parse(specs[_i].s, &sp, why, sizeof(why)) == 0,
	    specs[_i].ok);
	if (!specs[_i].ok)
		return;
	ck_assert_str_eq(sp.name, specs[_i].name);
	ck_assert_str_eq(sp.addr, specs[_i].addr);
	ck_assert_str_eq(sp.prefix, specs[_i].prefix);
	ck_assert_uint_eq(sp.port, specs[_i].port);
}
END_TEST

#define F(n) "{\"name\":\"" n "\",\"host\":\"a\",\"start_ns\":0,\"bytes\":10}"
static const struct {
	const char *body, *cursor;
	int r;
	size_t n;
	int more;
} listings[] = {
	{ "{\"files\":[],\"more\":false}", NULL, 0, 0, 0 },
	{ "{\"files\":[" F("20231114T000000.000Z_a.json.gz") "," F(
	      "20231114T000001.000Z_a.json.gz") "],\"more\":true}",
	    NULL, 0, 2, 1 },
	/* not after the cursor */
	{ "{\"files\":[" F(
	      "20231114T000000.000Z_a.json.gz") "],\"more\":false}",
	    "20231114T000000.000Z_a.json.gz", -EBADMSG, 0, 0 },
	/* out of order */
	{ "{\"files\":[" F("20231114T000001.000Z_a.json.gz") "," F(
	      "20231114T000000.000Z_a.json.gz") "],\"more\":false}",
	    NULL, -EBADMSG, 0, 0 },
	/* another host's file */
	{ "{\"files\":[{\"name\":\"20231114T000000.000Z_b.json.gz\",\"host\":"
	  "\"b\",\"start_ns\":0,\"bytes\":1}],\"more\":false}",
	    NULL, -EBADMSG, 0, 0 },
	/* a path, not a name */
	{ "{\"files\":[{\"name\":\"../../etc/passwd\",\"host\":\"a\","
	  "\"start_ns\":0,\"bytes\":1}],\"more\":false}",
	    NULL, -EBADMSG, 0, 0 },
	/* larger than max_file */
	{ "{\"files\":[{\"name\":\"20231114T000000.000Z_a.json.gz\",\"host\":"
	  "\"a\",\"start_ns\":0,\"bytes\":999999}],\"more\":false}",
	    NULL, -EFBIG, 0, 0 },
	/* more than asked */
	{ "{\"files\":[" F("20231114T000000.000Z_a.json.gz") "," F(
	      "20231114T000001.000Z_a.json.gz") "," F("20231114T000002.000Z_a."
						      "json.gz") "],\"more\":"
								 "false}",
	    NULL, -EBADMSG, 0, 0 },
	{ "not json", NULL, -EBADMSG, 0, 0 },
	{ "{\"files\":{}}", NULL, -EBADMSG, 0, 0 },
};

START_TEST(test_listing)
{
	struct remote_file *v = NULL;
	size_t n = 0;
	int more = -1;
	char why[256];

	ck_assert_int_eq(
	    remote_listing_parse(listings[_i].body, strlen(listings[_i].body),
		"a", listings[_i].cursor, 2, 1000, &v, &n, &more, why,
		sizeof(why)),
	    listings[_i].r);
	if (listings[_i].r == 0) {
		ck_assert_uint_eq(n, listings[_i].n);
		ck_assert_int_eq(more, listings[_i].more);
	}
	free(v);
}
END_TEST

static const struct {
	const char *body;
	int r;
	const char *host;
} locals[] = {
	{ "{\"hosts\":[],\"local\":\"web1\"}", 0, "web1" },
	{ "{\"hosts\":[]}", -EBADMSG, NULL },
	{ "{\"local\":\"a/b\"}", -EBADMSG, NULL },
	{ "{\"local\":\"\"}", -EBADMSG, NULL },
	{ "[]", -EBADMSG, NULL },
};

START_TEST(test_local)
{
	char host[256], why[256];

	ck_assert_int_eq(
	    remote_local_parse(locals[_i].body, strlen(locals[_i].body), host,
		sizeof(host), why, sizeof(why)),
	    locals[_i].r);
	if (locals[_i].r == 0)
		ck_assert_str_eq(host, locals[_i].host);
}
END_TEST

/* What a node sends for a file listed as name. */
enum {
	V_GOOD,
	V_HOST,
	V_FUTURE,
	V_OLD,
	V_LONG,
	V_NAME,
	V_CORRUPT,
	V_TRUNC,
	V_BIG,
	V_EMPTY
};
static const struct {
	int what;
	int r;
} verifies[] = {
	{ V_GOOD, 0 },
	{ V_HOST, -EPERM },
	{ V_FUTURE, -ERANGE },
	{ V_OLD, -ERANGE },
	{ V_LONG, -ERANGE },
	{ V_NAME, -EINVAL },
	{ V_CORRUPT, -EBADMSG },
	{ V_TRUNC, -EBADMSG },
	{ V_BIG, -EFBIG },
	{ V_EMPTY, -EFBIG },
};

START_TEST(test_verify)
{
	const uint64_t now = T0 + 3600 * NS;
	struct remote_limits lim = { now, 60 * NS, 86400 * NS, 1 << 20 };
	const char *host = verifies[_i].what == V_HOST ? "evil" : "web1";
	uint64_t start = T0, len = NS;
	struct vitals_epoch_file f;
	struct vitals_epoch *e = NULL;
	char name[VITALS_CURSOR_MAX], why[512];
	size_t n;

	if (verifies[_i].what == V_FUTURE)
		start = now + 120 * NS;
	if (verifies[_i].what == V_OLD)
		start = 5 * NS;
	if (verifies[_i].what == V_LONG)
		len = 2 * 86400 * NS;
	fx_encode(host, start, len, &f);
	snprintf(name, sizeof(name), "%s", strchr(f.rel, '/') + 1);
	if (verifies[_i].what == V_HOST || verifies[_i].what == V_NAME)
		snprintf(name, sizeof(name), "%s",
		    "20231114T000000.000Z_web1.json.gz");
	if (verifies[_i].what == V_NAME) {
		/* Listed as the epoch of T0, it holds the one of T0 + 1 s. */
		vitals_epoch_file_free(&f);
		fx_encode(host, T0 + NS, len, &f);
	}
	n = f.len;
	if (verifies[_i].what == V_CORRUPT)
		f.data[f.len / 2] ^= 0x55;
	if (verifies[_i].what == V_TRUNC)
		n = f.len - 6;
	if (verifies[_i].what == V_BIG)
		lim.max_file = f.len - 1;
	if (verifies[_i].what == V_EMPTY)
		n = 0;
	ck_assert_int_eq(
	    remote_verify("web1", name, f.data, n, &lim, &e, why, sizeof(why)),
	    verifies[_i].r);
	if (verifies[_i].r == 0) {
		ck_assert_str_eq(e->host, "web1");
		ck_assert_uint_eq(e->start_ns, T0);
	} else
		ck_assert_ptr_null(e);
	vitals_epoch_free(e);
	vitals_epoch_file_free(&f);
}
END_TEST

static Suite *
remote_suite(void)
{
	Suite *s = suite_create("remote");
	TCase *store = tcase_create("store"), *chk = tcase_create("checks");

	tcase_add_checked_fixture(
	    store, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_loop_test(store, test_name_parse, 0, NCASES(names));
	tcase_add_test(store, test_list_after);
	tcase_add_test(store, test_file_load_decode);
	tcase_add_test(store, test_node_state);
	suite_add_tcase(s, store);
	tcase_add_loop_test(chk, test_spec, 0, NCASES(specs));
	tcase_add_loop_test(chk, test_listing, 0, NCASES(listings));
	tcase_add_loop_test(chk, test_local, 0, NCASES(locals));
	tcase_add_loop_test(chk, test_verify, 0, NCASES(verifies));
	suite_add_tcase(s, chk);
	return s;
}

int
main(void)
{
	return testutil_run(remote_suite());
}
