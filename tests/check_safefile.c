/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/store/safefile.c: temporary names no one can guess
 * or plant a link at, files replaced without following a link at their
 * name, directories others may write refused when running as root, and
 * reads that refuse FIFOs, devices, links and files too large.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/vitals.h>

#include "safefile.h"
#include "testutil.h"

#define NOBODY 65534 /* a user other than root */

/* rel in this test's directory (see testutil_path). */
#define tpath(rel) testutil_path(testutil_dir, rel)

/* Whether the checks that apply to root can be seen here. */
static int
as_root(const char *test)
{
	if (geteuid() == 0)
		return 1;
	fprintf(stderr, "SKIP: %s: the checks apply to root only\n", test);
	return 0;
}

/* ---- temporary names ---- */

START_TEST(test_tmp_names)
{
	struct safefile a, b;
	char target[64];
	const char *p;
	int dfd, fd;

	ck_assert_int_ge(dfd = open(testutil_dir, O_RDONLY | O_DIRECTORY), 0);
	ck_assert_int_eq(safefile_begin(&a, dfd, "x.json.gz", 0644), 0);
	ck_assert_int_eq(safefile_begin(&b, dfd, "x.json.gz", 0644), 0);
	/* ".x.json.gz.tmp." and 16 random hex digits, never twice the same. */
	ck_assert_str_ne(a.tmp, b.tmp);
	ck_assert_int_eq(strncmp(a.tmp, ".x.json.gz.tmp.", 15), 0);
	ck_assert_uint_eq(strlen(a.tmp), 15 + 16);
	for (p = a.tmp + 15; *p != '\0'; p++)
		ck_assert(strchr("0123456789abcdef", *p) != NULL);
	ck_assert_int_eq(safefile_tmp_target(a.tmp, target, sizeof(target)), 0);
	ck_assert_str_eq(target, "x.json.gz");
	/* The writer holds a lock a recovery pass can see. */
	ck_assert_int_ge(fd = open(tpath(a.tmp), O_RDONLY), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	close(fd);
	snprintf(target, sizeof(target), "%s", a.tmp);
	safefile_abort(&a);
	safefile_abort(&b);
	ck_assert_int_ne(access(tpath(target), F_OK), 0); /* aborted: gone */
	ck_assert_int_eq(
	    safefile_tmp_target(".x.json.gz.tmp.123", target, sizeof(target)),
	    0);
	ck_assert_int_lt(safefile_tmp_target("x.json.gz", target, 64), 0);
	ck_assert_int_lt(safefile_tmp_target(".x.tmp.", target, 64), 0);
	ck_assert_int_lt(safefile_tmp_target(".x.tmp.zz", target, 64), 0);
	close(dfd);
}
END_TEST

/*
 * A link planted at the name being replaced is replaced itself: what it
 * points to is never written.
 */
START_TEST(test_put_over_link)
{
	struct stat st;
	int dfd;

	testutil_write_file(tpath("victim"), "precious");
	ck_assert_int_eq(chmod(tpath("victim"), 0600), 0);
	ck_assert_int_eq(symlink(tpath("victim"), tpath("out")), 0);
	ck_assert_int_ge(dfd = open(testutil_dir, O_RDONLY | O_DIRECTORY), 0);
	ck_assert_int_eq(safefile_put(dfd, "out", "new", 3, 0644), 0);
	close(dfd);
	ck_assert_str_eq(testutil_read_text(tpath("victim")), "precious");
	ck_assert_int_eq(lstat(tpath("victim"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(lstat(tpath("out"), &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_str_eq(testutil_read_text(tpath("out")), "new");
}
END_TEST

/* The SDK's writer: the same, from a path; a missing directory named. */
START_TEST(test_file_write)
{
	char err[512];

	testutil_write_file(tpath("victim"), "precious");
	ck_assert_int_eq(symlink(tpath("victim"), tpath("model.json")), 0);
	ck_assert_int_eq(
	    vitals_file_check(tpath("model.json"), err, sizeof(err)), 0);
	ck_assert_int_eq(
	    vitals_file_write(tpath("model.json"), "{}\n", 3, err, sizeof(err)),
	    0);
	ck_assert_str_eq(testutil_read_text(tpath("victim")), "precious");
	ck_assert_str_eq(testutil_read_text(tpath("model.json")), "{}\n");
	ck_assert_int_eq(
	    vitals_file_check(tpath("gone/model.json"), err, sizeof(err)),
	    -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, tpath("gone/model.json")));
	ck_assert_int_eq(vitals_file_write(tpath("gone/model.json"), "x", 1,
			     err, sizeof(err)),
	    -ENOENT);
}
END_TEST

/* ---- directories ---- */

/* Made with its parents, or only checked; a file in the way is named. */
START_TEST(test_dir_open)
{
	char err[512];
	int fd;

	ck_assert_int_eq(
	    safefile_dir_check(tpath("a/b/c"), err, sizeof(err)), 0);
	ck_assert_int_ne(
	    access(tpath("a"), F_OK), 0); /* a check makes nothing */
	ck_assert_int_eq(safefile_dir_open(tpath("a/b/c"), SAFEFILE_DIR_OPEN,
			     err, sizeof(err)),
	    -ENOENT);
	ck_assert_int_ge(fd = safefile_dir_open(tpath("a/b/c"),
			     SAFEFILE_DIR_CREATE, err, sizeof(err)),
	    0);
	close(fd);
	ck_assert_int_eq(access(tpath("a/b/c"), W_OK), 0);
	testutil_write_file(tpath("file"), "x");
	ck_assert_int_eq(safefile_dir_open(tpath("file/d"), SAFEFILE_DIR_CREATE,
			     err, sizeof(err)),
	    -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, tpath("file")));
	ck_assert_int_eq(
	    safefile_dir_check(tpath("file/d"), err, sizeof(err)), -ENOTDIR);
	/* A link to a directory on the way is followed (root owns it). */
	ck_assert_int_eq(symlink(tpath("a/b"), tpath("ln")), 0);
	ck_assert_int_ge(fd = safefile_dir_open(tpath("ln/c"),
			     SAFEFILE_DIR_OPEN, err, sizeof(err)),
	    0);
	close(fd);
}
END_TEST

/* One refused case: the directory made writable or given away. */
static const struct {
	const char *name; /* what is wrong */
	const char *at; /* the directory changed */
	mode_t mode; /* its mode, or 0 to leave it */
	uid_t owner; /* its owner (NOBODY), or 0 to leave it */
	const char *why; /* in the message */
} refused[] = {
	{ "world-writable", "data", 0777, 0,
	    "writable by group or others (mode 0777) without the sticky bit" },
	{ "group-writable parent", "", 0775, 0,
	    "writable by group or others (mode 0775) without the sticky bit" },
	{ "another user's", "data", 0, NOBODY,
	    "owned by user 65534, not root" },
	{ "another user's parent", "", 0, NOBODY,
	    "owned by user 65534, not root" },
};

/*
 * As root: a data dir, or a parent of it, that another user could write
 * or owns is refused by name; the directory is not made below it.
 */
START_TEST(test_dir_refused)
{
	const char *at = tpath(refused[_i].at);
	char err[1024], want[1024];
	int fd;

	if (!as_root("test_dir_refused"))
		return;
	ck_assert_int_eq(mkdir(tpath("data"), 0755), 0);
	if (refused[_i].mode != 0)
		ck_assert_int_eq(chmod(at, refused[_i].mode), 0);
	if (refused[_i].owner != 0)
		ck_assert_int_eq(chown(at, refused[_i].owner, 0), 0);
	fd = safefile_dir_open(
	    tpath("data/sub"), SAFEFILE_DIR_CREATE, err, sizeof(err));
	ck_assert_int_eq(fd, -EPERM);
	snprintf(want, sizeof(want),
	    "%s: %s is %s; refused as vitals runs as "
	    "root",
	    tpath("data/sub"), refused[_i].at[0] ? at : testutil_dir,
	    refused[_i].why);
	ck_assert_str_eq(err, want);
	ck_assert_int_ne(access(tpath("data/sub"), F_OK), 0);
	ck_assert_int_eq(
	    safefile_dir_check(tpath("data/sub"), err, sizeof(err)), -EPERM);
}
END_TEST

/* A sticky world-writable directory (/tmp) is fine; a non-root caller's. */
START_TEST(test_dir_sticky)
{
	char err[512];
	int fd;

	ck_assert_int_eq(mkdir(tpath("shared"), 0755), 0);
	ck_assert_int_eq(chmod(tpath("shared"), 01777), 0);
	ck_assert_int_ge(fd = safefile_dir_open(tpath("shared/data"),
			     SAFEFILE_DIR_CREATE, err, sizeof(err)),
	    0);
	close(fd);
}
END_TEST

/*
 * As root: a link on the way owned by another user is refused (they
 * could point it anywhere), and so is a link to a directory whose parent
 * another user may write.
 */
START_TEST(test_dir_link_refused)
{
	char err[1024];

	if (!as_root("test_dir_link_refused"))
		return;
	ck_assert_int_eq(mkdir(tpath("real"), 0755), 0);
	ck_assert_int_eq(symlink(tpath("real"), tpath("ln")), 0);
	ck_assert_int_eq(lchown(tpath("ln"), NOBODY, NOBODY), 0);
	ck_assert_int_eq(safefile_dir_open(tpath("ln/data"),
			     SAFEFILE_DIR_CREATE, err, sizeof(err)),
	    -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link owned by user 65534"));
	ck_assert_int_ne(access(tpath("real/data"), F_OK), 0);
	/* Through a root-owned link, into a directory under a writable one. */
	ck_assert_int_eq(mkdir(tpath("open"), 0777), 0);
	ck_assert_int_eq(chmod(tpath("open"), 0777), 0);
	ck_assert_int_eq(mkdir(tpath("open/data"), 0755), 0);
	ck_assert_int_eq(symlink(tpath("open/data"), tpath("ln2")), 0);
	ck_assert_int_eq(safefile_dir_open(
			     tpath("ln2"), SAFEFILE_DIR_OPEN, err, sizeof(err)),
	    -EPERM);
	ck_assert_ptr_nonnull(strstr(err, tpath("open")));
}
END_TEST

/* Below a checked directory, no link is followed and nothing made there. */
START_TEST(test_subdir_link)
{
	char why[512];
	int dfd, fd, made = -1;

	ck_assert_int_eq(mkdir(tpath("elsewhere"), 0755), 0);
	ck_assert_int_eq(mkdir(tpath("data"), 0755), 0);
	ck_assert_int_eq(symlink(tpath("elsewhere"), tpath("data/day")), 0);
	ck_assert_int_ge(dfd = open(tpath("data"), O_RDONLY | O_DIRECTORY), 0);
	ck_assert_int_eq(
	    safefile_subdir(dfd, "day", 1, &made, why, sizeof(why)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(why, "day: not a directory"));
	ck_assert_int_eq(
	    safefile_subdir(dfd, "day/x", 1, &made, why, sizeof(why)), -ELOOP);
	ck_assert_int_ne(access(tpath("elsewhere/x"), F_OK), 0);
	ck_assert_int_ge(
	    fd = safefile_subdir(dfd, "a/b", 1, &made, why, sizeof(why)), 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	close(dfd);
}
END_TEST

/* ---- reading ---- */

/*
 * FIFOs, devices, links (when not followed), directories and files over
 * the limit are refused at once, never read; a regular file is handed
 * back blocking.
 */
START_TEST(test_open_read)
{
	char why[256];
	struct stat st;
	int fd;

	ck_assert_int_eq(mkfifo(tpath("fifo"), 0600), 0);
	ck_assert_int_eq(safefile_open_read(AT_FDCWD, tpath("fifo"), 1, 100,
			     &st, why, sizeof(why)),
	    -EINVAL);
	ck_assert_str_eq(why, "a FIFO, not a regular file: not read");
	ck_assert_int_eq(safefile_open_read(AT_FDCWD, "/dev/zero", 0, 100, &st,
			     why, sizeof(why)),
	    -EINVAL);
	ck_assert_str_eq(
	    why, "a character device, not a regular file: not read");
	ck_assert_int_eq(symlink("/dev/zero", tpath("zero")), 0);
	ck_assert_int_eq(safefile_open_read(AT_FDCWD, tpath("zero"), 1, 100,
			     &st, why, sizeof(why)),
	    -ELOOP);
	ck_assert_str_eq(why, "a symbolic link: not followed");
	ck_assert_int_eq(safefile_open_read(AT_FDCWD, testutil_dir, 0, 100, &st,
			     why, sizeof(why)),
	    -EISDIR);
	testutil_write_file(tpath("big"), "0123456789");
	ck_assert_int_eq(safefile_open_read(AT_FDCWD, tpath("big"), 1, 9, &st,
			     why, sizeof(why)),
	    -EFBIG);
	ck_assert_str_eq(
	    why, "10 bytes, more than the 9 bytes limit: not read");
	ck_assert_int_ge(fd = safefile_open_read(AT_FDCWD, tpath("big"), 1, 10,
			     &st, why, sizeof(why)),
	    0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_eq(st.st_size, 10);
	close(fd);
}
END_TEST

START_TEST(test_read)
{
	char why[256], *buf = NULL;
	size_t len = 0;

	testutil_write_file(tpath("f"), "hello");
	ck_assert_int_eq(
	    safefile_read(tpath("f"), 5, &buf, &len, why, sizeof(why)), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_str_eq(buf, "hello");
	free(buf);
	ck_assert_int_eq(
	    safefile_read(tpath("f"), 4, &buf, &len, why, sizeof(why)), -EFBIG);
	/* A link is followed here (a configuration may be one). */
	ck_assert_int_eq(symlink(tpath("f"), tpath("ln")), 0);
	ck_assert_int_eq(
	    safefile_read(tpath("ln"), 5, &buf, &len, why, sizeof(why)), 0);
	free(buf);
	ck_assert_int_eq(
	    safefile_read("/dev/zero", 1 << 20, &buf, &len, why, sizeof(why)),
	    -EINVAL);
}
END_TEST

static Suite *
safefile_suite(void)
{
	Suite *s = suite_create("safefile");
	TCase *w = tcase_create("write");
	TCase *d = tcase_create("dirs");
	TCase *r = tcase_create("read");

	tcase_add_checked_fixture(w, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(w, test_tmp_names);
	tcase_add_test(w, test_put_over_link);
	tcase_add_test(w, test_file_write);
	suite_add_tcase(s, w);
	tcase_add_checked_fixture(d, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(d, test_dir_open);
	tcase_add_loop_test(d, test_dir_refused, 0, NCASES(refused));
	tcase_add_test(d, test_dir_sticky);
	tcase_add_test(d, test_dir_link_refused);
	tcase_add_test(d, test_subdir_link);
	suite_add_tcase(s, d);
	tcase_add_checked_fixture(r, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(r, test_open_read);
	tcase_add_test(r, test_read);
	suite_add_tcase(s, r);
	return s;
}

int
main(void)
{
	return testutil_run(safefile_suite());
}
