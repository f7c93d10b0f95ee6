/* SPDX-License-Identifier: MIT */
/*
 * Files made safely (safefile.h): directories walked one name at a time
 * from a descriptor and checked, temporary files created O_EXCL |
 * O_NOFOLLOW under random names and renamed into place, files read only
 * when regular and bounded.  The store, the cache and the SDK's
 * vitals_file_write() all go through here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vitals/vitals.h>

#include "safefile.h"

/* Most directories above one walked up before giving up. */
#define SAFEFILE_MAX_DEPTH 4096
/* Names tried before a temporary file is given up on. */
#define SAFEFILE_TRIES 16
/* How every directory is opened, on top of O_PATH or O_RDONLY. */
#define SAFEFILE_DIR_FLAGS (O_DIRECTORY | O_CLOEXEC)

static void __attribute__((format(printf, 3, 4)))
safefile_say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

const char *
safefile_size_str(uint64_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(n >> 20));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(n >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	return buf;
}

int
safefile_trusted(const struct stat *st, char *why, size_t whylen)
{
	if (geteuid() != 0)
		return 0;
	if (st->st_uid != 0) {
		safefile_say(why, whylen, "owned by user %u, not root",
		    (unsigned)st->st_uid);
		return -EPERM;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st->st_mode & S_ISVTX) == 0) {
		safefile_say(why, whylen,
		    "writable by group or others (mode %04o) without the "
		    "sticky bit",
		    (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* The path of an open descriptor, for messages; "?" if unknown. */
static const char *
safefile_fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (len == 0 || (n = readlink(link, buf, len - 1)) < 0) {
		snprintf(buf, len, "?");
		return buf;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * Check the directory at fd, known as name: "NAME is REASON" in why and
 * -EPERM when it is not trusted.
 */
static int
safefile_check_fd(int fd, const char *name, char *why, size_t whylen)
{
	char reason[160];
	struct stat st;

	if (fstat(fd, &st) < 0) {
		safefile_say(why, whylen, "%s: %s", name, strerror(errno));
		return -errno;
	}
	if (safefile_trusted(&st, reason, sizeof(reason)) != 0) {
		safefile_say(why, whylen,
		    "%s is %s; refused as vitals runs "
		    "as root",
		    name, reason);
		return -EPERM;
	}
	return 0;
}

/* Every directory above fd up to the root: trusted, as the walk checks. */
static int
safefile_check_above(int fd, char *why, size_t whylen)
{
	struct stat st, up;
	char name[PATH_MAX];
	int cur, next, i, r = 0;

	if (geteuid() != 0)
		return 0;
	if (fstat(fd, &st) < 0 ||
	    (cur = openat(fd, "..", O_PATH | SAFEFILE_DIR_FLAGS)) < 0) {
		safefile_say(why, whylen, "%s", strerror(errno));
		return -errno;
	}
	for (i = 0; i < SAFEFILE_MAX_DEPTH; i++) {
		if (fstat(cur, &up) < 0) {
			r = -errno;
			break;
		}
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			break; /* the root is its own parent */
		if ((r = safefile_check_fd(cur,
			 safefile_fd_path(cur, name, sizeof(name)), why,
			 whylen)) != 0)
			break;
		st = up;
		if ((next = openat(cur, "..", O_PATH | SAFEFILE_DIR_FLAGS)) <
		    0) {
			r = -errno;
			break;
		}
		close(cur);
		cur = next;
	}
	close(cur);
	if (r < 0 && r != -EPERM)
		safefile_say(why, whylen, "%s", strerror(-r));
	return r;
}

/*
 * A symbolic link met on the way (named name) may be followed when, as
 * root, root owns it: its directory was checked, so no one else can
 * replace it.
 */
static int
safefile_follow_ok(
    int dirfd, const char *comp, const char *name, char *why, size_t whylen)
{
	struct stat st;

	if (fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		safefile_say(why, whylen, "%s: %s", name, strerror(errno));
		return -errno;
	}
	if (!S_ISLNK(st.st_mode)) {
		safefile_say(why, whylen, "%s: not a directory", name);
		return -ENOTDIR;
	}
	if (geteuid() == 0 && st.st_uid != 0) {
		safefile_say(why, whylen,
		    "%s is a symbolic link owned by user "
		    "%u, not root; refused as vitals runs as root",
		    name, (unsigned)st.st_uid);
		return -EPERM;
	}
	return 0;
}

/* The walk's modes: safefile_dir_open's two, and safefile_dir_check. */
#define SAFEFILE_DIR_PROBE 2

/*
 * One step of the walk: open comp under *cur (named `sofar` once done),
 * following a trusted symbolic link (*followed is set then), making it
 * when missing in create mode.  Returns 1 when a missing directory ends a
 * probe, 0, or a negative errno with a reason in why.
 */
static int
safefile_step(int *cur, const char *comp, const char *sofar, int mode,
    int *followed, char *why, size_t whylen)
{
	int next, r;

	next = openat(*cur, comp, O_PATH | O_NOFOLLOW | SAFEFILE_DIR_FLAGS);
	if (next < 0 && errno == ENOENT && mode == SAFEFILE_DIR_PROBE)
		return 1;
	if (next < 0 && errno == ENOENT && mode == SAFEFILE_DIR_CREATE) {
		if (mkdirat(*cur, comp, SAFEFILE_DIR_MODE) < 0 &&
		    errno != EEXIST) {
			safefile_say(why, whylen, "cannot create %s: %s", sofar,
			    strerror(errno));
			return -errno;
		}
		next = openat(
		    *cur, comp, O_PATH | O_NOFOLLOW | SAFEFILE_DIR_FLAGS);
	}
	if (next < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		if ((r = safefile_follow_ok(*cur, comp, sofar, why, whylen)) <
		    0)
			return r;
		*followed = 1;
		next = openat(*cur, comp, O_PATH | SAFEFILE_DIR_FLAGS);
	}
	if (next < 0) {
		safefile_say(why, whylen, "%s: %s", sofar, strerror(errno));
		return -errno;
	}
	if ((r = safefile_check_fd(next, sofar, why, whylen)) < 0) {
		close(next);
		return r;
	}
	close(*cur);
	*cur = next;
	return 0;
}

/*
 * Walk path from / (or the working directory), one name at a time.
 * Returns an O_PATH descriptor of the last directory reached (all of
 * path, or in a probe its nearest existing parent, *missing then set).
 */
static int
safefile_walk(
    const char *path, int mode, int *missing, char *why, size_t whylen)
{
	char buf[PATH_MAX], *p, *comp, *next, saved;
	int cur, r = 0, followed = path[0] != '/';

	*missing = 0;
	if (strlen(path) >= sizeof(buf)) {
		safefile_say(why, whylen, "name too long");
		return -ENAMETOOLONG;
	}
	strcpy(buf, path);
	if ((cur = open(path[0] == '/' ? "/" : ".",
		 O_PATH | SAFEFILE_DIR_FLAGS)) < 0) {
		r = -errno;
		safefile_say(why, whylen, "%s", strerror(-r));
		return r;
	}
	if ((r = safefile_check_fd(cur,
		 path[0] == '/' ? "/" : "the working directory", why, whylen)) <
	    0)
		goto fail;
	for (p = buf; *p != '\0' && r == 0; p = next) {
		for (comp = p; *comp == '/'; comp++)
			;
		for (next = comp; *next != '\0' && *next != '/'; next++)
			;
		if (next == comp || (next - comp == 1 && *comp == '.'))
			continue;
		saved = *next;
		*next = '\0';
		r = safefile_step(
		    &cur, comp, buf, mode, &followed, why, whylen);
		*next = saved;
	}
	if (r < 0)
		goto fail;
	*missing = r == 1;
	if (followed && (r = safefile_check_above(cur, why, whylen)) < 0)
		goto fail;
	return cur;
fail:
	close(cur);
	return r;
}

/* "PATH: why", or only why when it starts with PATH already. */
static void
safefile_name_why(char *err, size_t errlen, const char *path, const char *why)
{
	size_t n = strlen(path);

	if (strncmp(why, path, n) == 0 && why[n] == ':')
		safefile_say(err, errlen, "%s", why);
	else
		safefile_say(err, errlen, "%s: %s", path, why);
}

int
safefile_dir_open(const char *path, int mode, char *err, size_t errlen)
{
	char why[PATH_MAX + 160];
	int cur, fd, missing;

	if (path == NULL || path[0] == '\0') {
		safefile_say(err, errlen, "(empty): no directory named");
		return -ENOENT;
	}
	if ((cur = safefile_walk(path, mode, &missing, why, sizeof(why))) < 0) {
		safefile_name_why(err, errlen, path, why);
		return cur;
	}
	fd = openat(cur, ".", O_RDONLY | SAFEFILE_DIR_FLAGS);
	close(cur);
	if (fd < 0) {
		safefile_say(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	return fd;
}

int
safefile_dir_check(const char *path, char *err, size_t errlen)
{
	char why[PATH_MAX + 160];
	int cur, missing, r = 0;

	if (path == NULL || path[0] == '\0') {
		safefile_say(err, errlen, "(empty): no directory named");
		return -ENOENT;
	}
	cur =
	    safefile_walk(path, SAFEFILE_DIR_PROBE, &missing, why, sizeof(why));
	if (cur < 0) {
		safefile_name_why(err, errlen, path, why);
		return cur;
	}
	if (faccessat(cur, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		r = -errno;
		safefile_say(err, errlen, "%s: %s%s", path,
		    missing ? "cannot be created: " : "", strerror(errno));
	}
	close(cur);
	return r;
}

int
safefile_subdir(
    int dirfd, const char *rel, int create, int *made, char *why, size_t whylen)
{
	char buf[PATH_MAX], *comp, *save = NULL;
	int cur, next, r = 0, fd;

	if (made != NULL)
		*made = 0;
	if (strlen(rel) >= sizeof(buf)) {
		safefile_say(why, whylen, "name too long");
		return -ENAMETOOLONG;
	}
	strcpy(buf, rel);
	if ((cur = openat(dirfd, ".", O_PATH | SAFEFILE_DIR_FLAGS)) < 0) {
		safefile_say(why, whylen, "%s", strerror(errno));
		return -errno;
	}
	for (comp = strtok_r(buf, "/", &save); comp != NULL && r == 0;
	     comp = strtok_r(NULL, "/", &save)) {
		if (made != NULL)
			*made = 0;
		next =
		    openat(cur, comp, O_PATH | O_NOFOLLOW | SAFEFILE_DIR_FLAGS);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, comp, SAFEFILE_DIR_MODE) == 0 &&
			    made != NULL)
				*made = 1;
			next = openat(cur, comp,
			    O_PATH | O_NOFOLLOW | SAFEFILE_DIR_FLAGS);
		}
		if (next < 0) {
			r = errno == ENOTDIR || errno == ELOOP ? -ELOOP
							       : -errno;
			safefile_say(why, whylen, "%s: %s", comp,
			    r == -ELOOP ? "not a directory (a symbolic link or "
					  "another file): not followed"
					: strerror(errno));
			break;
		}
		r = safefile_check_fd(next, comp, why, whylen);
		close(cur);
		cur = next;
	}
	if (r < 0) {
		close(cur);
		return r;
	}
	fd = openat(cur, ".", O_RDONLY | SAFEFILE_DIR_FLAGS);
	close(cur);
	if (fd < 0) {
		safefile_say(why, whylen, "%s: %s", rel, strerror(errno));
		return -errno;
	}
	return fd;
}

/* ---- writing ---- */

/* 64 bits no other process can guess; getrandom() when it can. */
static uint64_t
safefile_random(void)
{
	static unsigned counter;
	struct timespec ts;
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* Early at boot: still unique; O_EXCL keeps it safe either way. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
	    (uint64_t)getpid() << 40 ^ ++counter * 0x9e3779b97f4a7c15ull;
	return r;
}

int
safefile_begin(struct safefile *f, int dirfd, const char *name, mode_t mode)
{
	size_t n = strlen(name);
	int i, fd = -1;

	f->dirfd = dirfd;
	f->fd = -1;
	f->tmp[0] = '\0';
	if (n == 0 || strchr(name, '/') != NULL)
		return -EINVAL;
	if (n + SAFEFILE_TMP_EXTRA > NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < SAFEFILE_TRIES && fd < 0; i++) {
		snprintf(f->tmp, sizeof(f->tmp),
		    ".%s" SAFEFILE_TMP_TAG "%016llx", name,
		    (unsigned long long)safefile_random());
		fd = openat(dirfd, f->tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	f->fd = fd;
	/* The mode whatever the umask: readers need not run as the writer. */
	if (fchmod(fd, mode) < 0) {
		safefile_abort(f);
		return -errno;
	}
	/* A recovery pass leaves a locked file alone: it is being written. */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	return 0;
}

int
safefile_write(struct safefile *f, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		if ((n = write(f->fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
safefile_commit(struct safefile *f, const char *name)
{
	int r = 0;

	if (fsync(f->fd) < 0)
		r = -errno;
	if (close(f->fd) < 0 && r == 0)
		r = -errno;
	f->fd = -1;
	if (r == 0 && renameat(f->dirfd, f->tmp, f->dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		safefile_abort(f);
		return r;
	}
	f->tmp[0] = '\0';
	return fsync(f->dirfd) < 0 ? -errno : 0;
}

void
safefile_abort(struct safefile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp[0] != '\0')
		unlinkat(f->dirfd, f->tmp, 0);
	f->tmp[0] = '\0';
}

int
safefile_put(
    int dirfd, const char *name, const void *data, size_t len, mode_t mode)
{
	struct safefile f;
	int r;

	if ((r = safefile_begin(&f, dirfd, name, mode)) < 0)
		return r;
	if ((r = safefile_write(&f, data, len)) < 0) {
		safefile_abort(&f);
		return r;
	}
	return safefile_commit(&f, name);
}

int
safefile_tmp_target(const char *tmp, char *buf, size_t len)
{
	const char *tag = NULL, *p;
	size_t n;

	if (tmp[0] != '.')
		return -EINVAL;
	for (p = tmp; (p = strstr(p + 1, SAFEFILE_TMP_TAG)) != NULL;)
		tag = p;
	if (tag == NULL || tag == tmp + 1 ||
	    tag[sizeof(SAFEFILE_TMP_TAG) - 1] == '\0')
		return -EINVAL;
	for (p = tag + sizeof(SAFEFILE_TMP_TAG) - 1; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return -EINVAL;
	n = (size_t)(tag - tmp - 1);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, tmp + 1, n);
	buf[n] = '\0';
	return 0;
}

/* ---- reading ---- */

/* What kind of file st is, for messages. */
static const char *
safefile_kind(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISCHR(st->st_mode))
		return "a character device";
	if (S_ISBLK(st->st_mode))
		return "a block device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	return "not a regular file";
}

int
safefile_open_read(int dirfd, const char *name, int nofollow, uint64_t max,
    struct stat *stp, char *why, size_t whylen)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	char size[32], limit[32];
	struct stat st;
	int fd, fl;

	if ((fd = openat(dirfd, name, flags | (nofollow ? O_NOFOLLOW : 0))) <
	    0) {
		if (errno == ELOOP && nofollow) {
			safefile_say(
			    why, whylen, "a symbolic link: not followed");
			return -ELOOP;
		}
		safefile_say(why, whylen, "%s", strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		safefile_say(why, whylen, "%s", strerror(errno));
		close(fd);
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		safefile_say(why, whylen, "%s, not a regular file: not read",
		    safefile_kind(&st));
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		safefile_say(why, whylen,
		    "%s, more than the %s limit: not read",
		    safefile_size_str((uint64_t)st.st_size, size, sizeof(size)),
		    safefile_size_str(max, limit, sizeof(limit)));
		close(fd);
		return -EFBIG;
	}
	if (stp != NULL)
		*stp = st;
	return fd;
}

int
safefile_read(const char *path, uint64_t max, char **out, size_t *len,
    char *why, size_t whylen)
{
	size_t n = 0, cap;
	char *buf, *p, limit[32];
	struct stat st;
	ssize_t k;
	int fd;

	if ((fd = safefile_open_read(
		 AT_FDCWD, path, 0, max, &st, why, whylen)) < 0)
		return fd;
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL)
		goto nomem;
	/* The size may change meanwhile: read to the end, never past max. */
	for (;;) {
		if (n == cap) {
			if (n > max) {
				free(buf);
				close(fd);
				safefile_say(why, whylen,
				    "more than the %s limit: "
				    "not read",
				    safefile_size_str(
					max, limit, sizeof(limit)));
				return -EFBIG;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if ((p = realloc(buf, cap + 1)) == NULL)
				goto nomem;
			buf = p;
		}
		if ((k = read(fd, buf + n, cap - n)) < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	if (k < 0) {
		safefile_say(why, whylen, "%s", strerror(errno));
		free(buf);
		close(fd);
		return -errno;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
nomem:
	free(buf);
	close(fd);
	safefile_say(why, whylen, "out of memory");
	return -ENOMEM;
}

/* ---- the SDK's files ---- */

/*
 * The directory of path (opened as safefile_dir_open does, not created)
 * and, in *base, its last name.  Returns the descriptor or a negative
 * errno with "PATH: reason" in err.
 */
static int
safefile_parent(const char *path, const char **base, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], why[PATH_MAX + 256];
	int fd;

	if (path[0] == '\0' || (slash != NULL && slash[1] == '\0')) {
		safefile_say(err, errlen, "%s: not a file name", path);
		return -EINVAL;
	}
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s",
		     (int)(slash == path ? 1 : slash - path),
		     path) >= (int)sizeof(dir)) {
		safefile_say(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	*base = slash != NULL ? slash + 1 : path;
	if ((fd = safefile_dir_open(dir, SAFEFILE_DIR_OPEN, why, sizeof(why))) <
	    0)
		safefile_say(err, errlen, "%s: %s", path, why);
	return fd;
}

int
vitals_file_write(
    const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	const char *base;
	int dfd, r;

	if ((dfd = safefile_parent(path, &base, err, errlen)) < 0)
		return dfd;
	if ((r = safefile_put(dfd, base, data, len, SAFEFILE_FILE_MODE)) < 0)
		safefile_say(err, errlen, "%s: %s", path, strerror(-r));
	close(dfd);
	return r;
}

int
vitals_file_read(const char *path, uint64_t max, char **out, size_t *len,
    char *err, size_t errlen)
{
	return safefile_read(path, max, out, len, err, errlen);
}

int
vitals_file_check(const char *path, char *err, size_t errlen)
{
	struct safefile f;
	const char *base;
	int dfd, r;

	if ((dfd = safefile_parent(path, &base, err, errlen)) < 0)
		return dfd;
	if ((r = safefile_begin(&f, dfd, base, SAFEFILE_FILE_MODE)) < 0)
		safefile_say(err, errlen, "%s: cannot be written: %s", path,
		    strerror(-r));
	else
		safefile_abort(&f);
	close(dfd);
	return r;
}
