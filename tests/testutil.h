/* SPDX-License-Identifier: MIT */
/*
 * What the Check unit tests share: a temporary directory per test that is
 * removed with all it holds, paths in it, files written and read whole, the
 * number of cases in a table, and main()'s run of a suite.
 */
#ifndef VITALS_TESTUTIL_H
#define VITALS_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* Number of cases in a table, as tcase_add_loop_test wants it. */
#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * Make a new directory <name>.XXXXXX, mode 0700, in $TMPDIR or /tmp; the
 * test fails if it cannot.  Returns its path, malloc'd: the caller hands it back to
 * testutil_tmpdir_remove.
 */
char *testutil_tmpdir(const char *name);

/*
 * Remove dir and everything below it, never following a link, and free
 * the path.  NULL is fine.
 */
void testutil_tmpdir_remove(char *dir);

/*
 * A checked fixture for tests that want a directory of their own:
 * testutil_dir_setup makes testutil_dir (named after the program) and
 * testutil_dir_teardown removes it with all it holds.  NULL outside.
 */
extern char *testutil_dir;
void testutil_dir_setup(void);
void testutil_dir_teardown(void);

/*
 * dir/rel in one of four static buffers used in turn: a result stays
 * valid for the next three calls.  Borrowed.
 */
const char *testutil_path(const char *dir, const char *rel);

/* Write text (or len bytes of buf) to path, created or truncated. */
void testutil_write_file(const char *path, const char *text);
void testutil_write_bytes(const char *path, const void *buf, size_t len);

/*
 * The start of path's text (a static buffer of 4096 bytes, overwritten by
 * the next call), "" if it cannot be read: for comparing short files.
 */
const char *testutil_read_text(const char *path);

/*
 * The whole of path with a NUL after it, malloc'd (the caller frees it),
 * its length in *len when len is not NULL; NULL if it cannot be read.
 */
char *testutil_read_file(const char *path, size_t *len);

/*
 * Run every test of s (Check's fork mode unless CK_FORK says otherwise;
 * output as CK_VERBOSITY says, normal by default) and free it.  Returns EXIT_SUCCESS when none failed, for main().
 */
int testutil_run(Suite *s);

#endif
