/* SPDX-License-Identifier: MIT */
/*
 * The one way libvitals creates, replaces and reads the files it keeps
 * (epochs, cache entries, models): directories opened once and checked,
 * files made under an unpredictable temporary name relative to that
 * directory's descriptor, never through a symbolic link, and renamed into
 * place; files read only when they are regular and not too large.
 */
#ifndef VITALS_SAFEFILE_H
#define VITALS_SAFEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* safefile_dir_open() modes. */
#define SAFEFILE_DIR_OPEN 0 /* the directory must exist */
#define SAFEFILE_DIR_CREATE 1 /* create it and its parents (DIR_MODE) */

/*
 * The modes of what libvitals creates: the owner's and its group's, never
 * others': epochs hold command names and syscall arguments that the
 * kernel itself hides from other users (kernel addresses are not stored:
 * core/kernel/kaddr.h).  The group is
 * the data dir's when it is set-group-ID (packages make it `vitals`).
 */
#define SAFEFILE_FILE_MODE 0640
#define SAFEFILE_DIR_MODE 0750

/* What a temporary name carries between the target's name and its tag. */
#define SAFEFILE_TMP_TAG ".tmp."
/* Bytes a temporary name adds to its target's: ".", TAG, 16 hex digits. */
#define SAFEFILE_TMP_EXTRA (1 + sizeof(SAFEFILE_TMP_TAG) - 1 + 16)

/*
 * Open the directory at path (made with its missing parents when mode is
 * SAFEFILE_DIR_CREATE).  When running as root, every directory on the
 * way, every directory above the one opened and every symbolic link
 * followed must be trusted (see safefile_trusted); one that is not is
 * refused with -EPERM.  Returns a descriptor (O_DIRECTORY, close-on-exec,
 * the caller's) or a negative errno with "PATH: reason" in err.
 */
int safefile_dir_open(const char *path, int mode, char *err, size_t errlen);

/*
 * Whether safefile_dir_open(path, SAFEFILE_DIR_CREATE) could succeed and
 * files be written there, without creating anything: path exists and is
 * writable, or its nearest existing parent is.  Returns 0 or a negative
 * errno with "PATH: reason" in err.
 */
int safefile_dir_check(const char *path, char *err, size_t errlen);

/*
 * Open the directory rel (one name or several joined by '/') under dirfd
 * without following any symbolic link, making what is missing (0755) if
 * create is set; each is checked as safefile_dir_open checks.  *made (if
 * not NULL) is set when the last one was made here.  Returns a descriptor
 * (the caller's) or a negative errno (-ELOOP or -ENOTDIR for a symbolic
 * link or another file in the way, -EPERM for an untrusted one) with a
 * reason in why.
 */
int safefile_subdir(int dirfd, const char *rel, int create, int *made,
    char *why, size_t whylen);

/*
 * When the process runs as root, whether a directory with status st may
 * be written in: owned by root and not writable by group or others unless
 * it is sticky.  Returns 0, or -EPERM with the reason in why.  Always 0
 * for other users.
 */
int safefile_trusted(const struct stat *st, char *why, size_t whylen);

/* A file being written under a temporary name in a directory. */
struct safefile {
	int dirfd; /* the directory, borrowed */
	int fd; /* the temporary file, -1 once closed */
	char tmp[256]; /* its name in dirfd */
};

/*
 * Create a temporary file for target name in dirfd: ".NAME.tmp.XXXX..."
 * with 16 random hex digits, O_EXCL | O_NOFOLLOW, mode (whatever the
 * umask), locked (flock) until committed or aborted so that a recovery
 * pass can tell it from one a dead writer left.  Returns 0 with *f
 * filled, or a negative errno.
 */
int safefile_begin(
    struct safefile *f, int dirfd, const char *name, mode_t mode);

/* Write all len bytes of buf to f.  Returns 0 or a negative errno. */
int safefile_write(struct safefile *f, const void *buf, size_t len);

/*
 * fsync f, close it, rename it to name in its directory and fsync the
 * directory: readers see the old file or the whole new one.  On failure
 * the temporary file is removed.  Returns 0 or a negative errno.
 */
int safefile_commit(struct safefile *f, const char *name);

/* Close and remove an uncommitted f; accepts one already closed. */
void safefile_abort(struct safefile *f);

/*
 * Replace name in dirfd with len bytes of data, as begin, write and
 * commit do.  Returns 0 or a negative errno.
 */
int safefile_put(
    int dirfd, const char *name, const void *data, size_t len, mode_t mode);

/*
 * The target of a temporary name made by safefile_begin (or an older
 * ".NAME.tmp.PID"): writes NAME into buf and returns 0, or returns
 * -EINVAL for any other name.
 */
int safefile_tmp_target(const char *tmp, char *buf, size_t len);

/*
 * Open name in dirfd (AT_FDCWD for a path) for reading without blocking
 * on a FIFO or a device, refusing (with a reason in why) a symbolic link
 * when nofollow is set (-ELOOP), a directory (-EISDIR) or anything else
 * but a regular file (-EINVAL),
 * and a file over max bytes (-EFBIG).  The descriptor returned is
 * blocking again; *st (if not NULL) gets its status.  Returns the
 * descriptor (the caller's) or a negative errno.
 */
int safefile_open_read(int dirfd, const char *name, int nofollow, uint64_t max,
    struct stat *st, char *why, size_t whylen);

/*
 * Read all of the regular file at path (symbolic links followed) if it
 * holds at most max bytes: 0 with *out (malloc'd, NUL-terminated, the
 * caller's) and *len, or a negative errno with the reason in why.
 */
int safefile_read(const char *path, uint64_t max, char **out, size_t *len,
    char *why, size_t whylen);

/* "256 MiB", "4 MiB", "512 KiB" or "300 bytes", for messages. */
const char *safefile_size_str(uint64_t n, char *buf, size_t len);

#endif /* VITALS_SAFEFILE_H */
