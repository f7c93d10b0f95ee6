/* SPDX-License-Identifier: MIT */
/*
 * Reading and writing stored epochs: the one way the daemon, the CLI, the
 * aggregator and third-party tools reach the epoch store.  One gzip'd JSON
 * file per epoch under DATA_DIR/YYYY-MM-DD/.
 */
#ifndef VITALS_STORE_H
#define VITALS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One stored epoch file, as listed (not yet read). */
struct vitals_store_entry {
	char *path;        /* full path of the file */
	char *host;        /* host part of the name */
	uint64_t start_ns; /* epoch start taken from the name */
};

/* A listing of a store, sorted by start time then host. */
struct vitals_store_list {
	size_t n;                        /* entries */
	struct vitals_store_entry *v;    /* n entries, owned by the list */
};

/*
 * List the epoch files under data_dir, oldest first.  Files whose names do
 * not parse are skipped.  Returns 0 and fills *out (free it with
 * vitals_store_list_free), -ENOENT if data_dir does not exist, or another
 * negative errno.
 */
int vitals_store_list(const char *data_dir, struct vitals_store_list *out);

/*
 * vitals_store_list() of the files that start at since_ns or later: only
 * the date directories of since_ns's day (UTC) and later are read, so
 * listing the last hours of a long store stays cheap.
 */
int vitals_store_list_since(const char *data_dir, uint64_t since_ns,
    struct vitals_store_list *out);

/* Free a listing's contents; accepts a zeroed or half-filled list. */
void vitals_store_list_free(struct vitals_store_list *l);

/*
 * Read one epoch file.  Returns 0 and sets *out (free with
 * vitals_epoch_free), or a negative errno (-EBADMSG for a corrupt,
 * truncated or malformed file; -ELOOP for a symbolic link, which is not
 * followed; -EINVAL for a FIFO, a device or anything but a regular file;
 * -EFBIG for a file of more than 256 MiB, compressed or inflated) with a
 * reason naming the file in err.
 */
int vitals_epoch_load(const char *path, struct vitals_epoch **out,
    char *err, size_t errlen);

/* Free an epoch returned by vitals_epoch_load; accepts NULL. */
void vitals_epoch_free(struct vitals_epoch *e);

/*
 * Write an epoch under data_dir: to a temporary name, fsync'd, renamed,
 * and the directory fsync'd, so a crash never leaves a torn file.  The
 * date directory is never a symbolic link (-ELOOP); data_dir is checked
 * as vitals_store_prepare() checks it.  On
 * success returns 0 and, if path is not NULL, writes the final path there.
 * Returns a negative errno otherwise, with a reason in err.
 */
int vitals_epoch_save(const struct vitals_epoch *e, const char *data_dir,
    char *path, size_t pathlen, char *err, size_t errlen);

/*
 * An epoch as the bytes of its file, for an output that must be able to
 * store it later (the disk was full): vitals_epoch_save() is
 * vitals_epoch_encode() then vitals_epoch_put().
 */
struct vitals_epoch_file {
	uint64_t start_ns;   /* the epoch's start */
	char *rel;           /* its path under a data dir: YYYY-MM-DD/NAME */
	unsigned char *data; /* the file's bytes (gzip'd JSON), len of them */
	size_t len;
};

/*
 * Encode e into *out (free it with vitals_epoch_file_free).  Returns 0,
 * or a negative errno with a reason in err (*out is then empty).
 */
int vitals_epoch_encode(const struct vitals_epoch *e,
    struct vitals_epoch_file *out, char *err, size_t errlen);

/*
 * An epoch as the JSON text of its file (the form `vitals show --json`
 * prints, compact): a malloc'd, NUL-terminated text in *out, the caller's,
 * and its length in *len.  Returns 0 or -ENOMEM (*out untouched).
 */
int vitals_epoch_json(const struct vitals_epoch *e, char **out, size_t *len);

/* Store an encoded epoch under data_dir as vitals_epoch_save() does. */
int vitals_epoch_put(const struct vitals_epoch_file *f, const char *data_dir,
    char *path, size_t pathlen, char *err, size_t errlen);

/* Free an encoded epoch's contents; accepts a zeroed one and NULL. */
void vitals_epoch_file_free(struct vitals_epoch_file *f);

/*
 * Make data_dir ready to store epochs: create it and its parents (0755)
 * and check this process can write there.  When running as root, a
 * directory on the way (or above data_dir) owned by a user other than
 * root, or writable by group or others without the sticky bit, is
 * refused with -EPERM.  Returns 0, or a negative errno with "DIR: reason"
 * in err.
 */
int vitals_store_prepare(const char *data_dir, char *err, size_t errlen);

/*
 * Apply retention: delete epoch files that started before now_ns - max_age_ns
 * (when max_age_ns > 0), then the oldest files until the store holds at
 * most max_bytes (when max_bytes > 0), and remove emptied date directories.
 * Leftover temporary files older than an hour are removed too.  Entries
 * are removed themselves: a symbolic link (a date directory or a file) is
 * never followed.  Returns the number of files deleted, or a negative
 * errno.
 */
int vitals_store_prune(const char *data_dir, uint64_t max_age_ns,
    uint64_t max_bytes, uint64_t now_ns);

/*
 * ABI minor 4.  Recover what a writer killed while storing an epoch left
 * in data_dir's date dirs: a temporary file that holds the whole epoch it
 * was written for (a complete gzip stream that decodes as that epoch) is
 * renamed into place, any other is removed; one that a live writer still
 * holds is left alone.  *recovered and *removed (either may be NULL) get
 * the counts.  Returns 0 (also when data_dir does not exist), or a
 * negative errno with "DIR: reason" in err.
 */
int vitals_store_recover(const char *data_dir, unsigned *recovered,
    unsigned *removed, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* VITALS_STORE_H */
