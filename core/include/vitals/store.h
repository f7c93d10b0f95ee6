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
	char *path; /* full path of the file */
	char *host; /* host part of the name */
	uint64_t start_ns; /* epoch start taken from the name */
};

/* A listing of a store, sorted by start time then host. */
struct vitals_store_list {
	size_t n; /* entries */
	struct vitals_store_entry *v; /* n entries, owned by the list */
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
int vitals_store_list_since(
    const char *data_dir, uint64_t since_ns, struct vitals_store_list *out);

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
int vitals_epoch_load(
    const char *path, struct vitals_epoch **out, char *err, size_t errlen);

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
	uint64_t start_ns; /* the epoch's start */
	char *rel; /* its path under a data dir: YYYY-MM-DD/NAME */
	unsigned char *data; /* the file's bytes (gzip'd JSON), len of them */
	size_t len;
};

/*
 * Encode e into *out (free it with vitals_epoch_file_free).  Returns 0,
 * or a negative errno with a reason in err (*out is then empty).
 * vitals_epoch_encode_within() (ABI minor 7) first folds the HCAs that
 * take most (each in half: counter i gets i + size/2, a sample's slot
 * its low bits, as a smaller HCA would have counted them) until the
 * counters' stored bytes, as the disk budget counts them (a byte per
 * counter and one per two digits), fit counter_bytes, or every HCA is at
 * VITALS_FOLD_MIN; 0 folds nothing.  The epoch's events, weights and
 * samples are unchanged; what is lost is which of the labels sharing a
 * folded counter counted how much.
 */
#define VITALS_FOLD_MIN 64
int vitals_epoch_encode_within(const struct vitals_epoch *e,
    uint64_t counter_bytes, struct vitals_epoch_file *out, char *err,
    size_t errlen);
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

/* ---- central collection (doc/fleet.md) ---- */

/*
 * A node's cursor is the name of the last epoch file taken from it: the
 * last part of its path ("20261127T001500.000Z_web1.json.gz").  File
 * names sort as their epochs' starts (then hosts), so "every file whose
 * name sorts after the cursor" resumes a pull without a gap or a
 * duplicate, across restarts of either side.
 */
#define VITALS_CURSOR_MAX 256

/*
 * Whether s is an epoch file name (and so a cursor): 0, or -EINVAL.  On
 * success *start_ns (if not NULL) gets the start the name holds, to the
 * millisecond.
 */
int vitals_store_name_parse(const char *s, uint64_t *start_ns);

/*
 * The epoch files of data_dir whose names sort after cursor (NULL or ""
 * for all), of host only when host is not NULL, in name order, at most
 * max of them (0: no limit).  Entries are as vitals_store_list() gives
 * them.  Returns 0 and fills *out (free with vitals_store_list_free),
 * -EINVAL for a cursor that is not a file name, -ENOENT when data_dir
 * is missing, or another negative errno.
 */
int vitals_store_list_after(const char *data_dir, const char *cursor,
    const char *host, size_t max, struct vitals_store_list *out);

/*
 * Read a stored epoch file's bytes as they are (gzip'd JSON), without
 * decoding them: a regular file, never through a symbolic link, of at
 * most max bytes (-EFBIG beyond).  path comes from a listing, never from
 * a request.  Returns 0 and fills *out (start_ns and rel taken from the
 * name; free with vitals_epoch_file_free), or a negative errno with a
 * reason in err.
 */
int vitals_epoch_file_load(const char *path, uint64_t max,
    struct vitals_epoch_file *out, char *err, size_t errlen);

/*
 * Decode len bytes of an epoch file (gzip'd JSON, as stored) that came
 * from elsewhere: inflated to at most the store's limit.  Returns 0 and
 * sets *out (free with vitals_epoch_free), or -EBADMSG (corrupt), -EFBIG
 * (too large) or -ENOMEM with the reason in err.
 */
int vitals_epoch_decode(const void *data, size_t len, struct vitals_epoch **out,
    char *err, size_t errlen);

/*
 * The path under a data dir an epoch of start_ns on host is stored at
 * ("YYYY-MM-DD/NAME").  Returns its length, or a negative errno.
 */
int vitals_epoch_relpath(
    uint64_t start_ns, const char *host, char *buf, size_t len);

/*
 * What a central vitalsd knows of one node it pulls from (the remote
 * output), kept in DATA_DIR/nodes/KEY.json: the cursor it resumes from
 * and the state shown by /metrics, /api/v1/nodes and `vitals hosts`.
 */
struct vitals_node {
	char *key; /* file name part, from the URL */
	char *url; /* the node's base URL */
	char *host; /* its host name, pinned at first contact; or NULL */
	char *cursor; /* name of the last epoch file stored, or NULL */
	uint64_t last_start_ns; /* start of that epoch */
	uint64_t last_end_ns; /* its end (start + length) */
	uint64_t last_ok_ns; /* wall time of the last successful round */
	uint64_t pulled; /* epochs stored, ever */
	uint64_t errors; /* failed requests (network, timeouts, HTTP) */
	uint64_t refused; /* epochs or answers refused by verification */
	uint64_t last_error_ns; /* when the last error or refusal happened */
	char *last_error; /* what it was, or NULL */
};

/* The nodes of a data dir, sorted by key. */
struct vitals_node_list {
	size_t n;
	struct vitals_node *v; /* n nodes, owned by the list */
};

/*
 * Read every node state under data_dir/nodes/ (a missing directory is an
 * empty list; an unreadable or malformed file is skipped).  Returns 0 and
 * fills *out (free with vitals_node_list_free), or a negative errno.
 */
int vitals_nodes_load(const char *data_dir, struct vitals_node_list *out);

/*
 * Store n (n->key names the file) under data_dir/nodes/ as
 * vitals_file_write() writes, so a crash keeps the old state or the new.
 * Returns 0 or a negative errno with the reason in err.
 */
int vitals_node_save(const char *data_dir, const struct vitals_node *n,
    char *err, size_t errlen);

/*
 * Remove what a writer killed while it kept a node's state left in
 * data_dir/nodes/: temporary files no live writer holds (the state file
 * itself is whole, the old or the new).  Returns the number removed, or
 * a negative errno.
 */
int vitals_nodes_recover(const char *data_dir);

/* Free a node's strings and zero it; accepts NULL. */
void vitals_node_clear(struct vitals_node *n);

/* Free a node list's contents; accepts a zeroed list. */
void vitals_node_list_free(struct vitals_node_list *l);

/*
 * The key a node's state is kept under, from its URL: the characters of
 * host and port that can name a file, then a hash of the whole URL
 * ("10.0.0.2_9977-1a2b3c4d").  Returns 0 or -ENAMETOOLONG.
 */
int vitals_node_key(const char *url, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VITALS_STORE_H */
