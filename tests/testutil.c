/* SPDX-License-Identifier: MIT */
/*
 * What the Check unit tests share (see testutil.h): temporary directories,
 * whole files written and read, and main()'s run of a suite.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

char *
testutil_tmpdir(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[256];
	int n;

	n = snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp", name);
	ck_assert_int_lt(n, (int)sizeof(tmpl));
	ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp %s", tmpl);
	return strdup(tmpl);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
testutil_tmpdir_remove(char *dir)
{
	if (dir == NULL)
		return;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *testutil_dir;

void
testutil_dir_setup(void)
{
	testutil_dir = testutil_tmpdir(program_invocation_short_name);
}

void
testutil_dir_teardown(void)
{
	testutil_tmpdir_remove(testutil_dir);
	testutil_dir = NULL;
}

const char *
testutil_path(const char *dir, const char *rel)
{
	static char buf[4][512];
	static int k;
	int n;

	k = (k + 1) % 4;
	n = snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, rel);
	ck_assert_int_lt(n, (int)sizeof(buf[k]));
	return buf[k];
}

void
testutil_write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot write %s", path);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

void
testutil_write_file(const char *path, const char *text)
{
	testutil_write_bytes(path, text, strlen(text));
}

const char *
testutil_read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

char *
testutil_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap * 2 + 4096;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

int
testutil_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
