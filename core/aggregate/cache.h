/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's on-disk cache: JSON values in gzip'd files under a
 * cache directory, each stamped with the 128-bit key of everything it was
 * computed from.  An entry whose key differs, or that does not read back,
 * is a miss; the caller recomputes and overwrites it.
 */
#ifndef VITALS_CACHE_H
#define VITALS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A key: a hash of every input of a cached value, fed in order. */
struct cache_key {
	uint64_t h[2];
};

/* Start a key; `kind` separates the kinds of entries. */
void cache_key_init(struct cache_key *k, const char *kind);

/* Feed n bytes, a string (with its length), a number or another key. */
void cache_key_add(struct cache_key *k, const void *data, size_t n);
void cache_key_str(struct cache_key *k, const char *s);
void cache_key_u64(struct cache_key *k, uint64_t v);
void cache_key_key(struct cache_key *k, const struct cache_key *other);

/* The key as 32 hex digits and a NUL. */
void cache_key_hex(const struct cache_key *k, char out[33]);

/* A cache directory and its counters. */
struct cache;

/*
 * Use dir (copied) as a cache, creating it if needed; it is opened and
 * checked once (see safefile_dir_open: as root, a directory others may
 * write is refused with -EPERM).  Returns 0 and sets *out, or a negative
 * errno with "DIR: reason" in err when dir cannot be made, used or
 * written.
 */
int cache_open(const char *dir, struct cache **out, char *err, size_t errlen);

/* Wait for pending writes, free the handle; accepts NULL.  The files stay. */
void cache_close(struct cache *c);

/* The directory in use (borrowed). */
const char *cache_dir(const struct cache *c);

/* Whether entry `name` is there (a regular file), without reading it. */
int cache_has(struct cache *c, const char *name);

/*
 * Read entry `name` (a relative path ending in .json.gz) if it was stored
 * with key k under that name, by this user (the file's owner, and no one
 * else may write it).  Returns 0 and a new reference in *out, or -ENOENT
 * for a missing, stale, foreign or unreadable entry.
 */
int cache_get(
    struct cache *c, const char *name, const struct cache_key *k, json_t **out);

/*
 * The same, leaving the value as JSON text: 0 with the whole entry in
 * *buf (malloc'd, the caller's) and the text of its value at *value, *len
 * bytes (not NUL-terminated), or -ENOENT as cache_get.
 */
int cache_get_text(struct cache *c, const char *name, const struct cache_key *k,
    char **buf, const char **value, size_t *len);

/*
 * Store value (borrowed) as entry `name` with key k: written to a
 * temporary file and renamed, so readers see the old entry or the new.
 * Returns 0 or a negative errno (a cache that cannot be written is only
 * slower, so callers may ignore it).
 */
int cache_put(struct cache *c, const char *name, const struct cache_key *k,
    json_t *value);

/* The same with the value as JSON text text[0..len) (borrowed). */
int cache_put_text(struct cache *c, const char *name, const struct cache_key *k,
    const char *text, size_t len);

/*
 * Store an entry from a writer thread, so the caller goes on: encode(obj,
 * &text, &len) is called there to make the value's JSON text (malloc'd;
 * nothing is stored unless it returns 0), then the entry is written as
 * cache_put_text does, older versions sharing its first `stem` bytes are
 * removed (when stem > 0, see cache_remove_stale), and release(obj) is
 * called.  At most a few entries wait; beyond that the caller waits.
 * cache_close waits for every pending write.  If no thread can be
 * started, the entry is written before returning.  Returns 0 or -ENOMEM
 * (release is then called here).
 */
int cache_put_async(struct cache *c, const char *name,
    const struct cache_key *k, size_t stem, void *obj,
    int (*encode)(void *obj, char **text, size_t *len),
    void (*release)(void *obj));

/*
 * Remove the entries in the directory of `name` whose names start like
 * name's first `stem` bytes, but for name itself: older versions of an
 * entry that carries its key in its name.
 */
void cache_remove_stale(struct cache *c, const char *name, size_t stem);

/*
 * Keep at most max_files entries under subdir (recursively), removing the
 * least recently written first.  Returns the number removed.
 */
int cache_prune(struct cache *c, const char *subdir, size_t max_files);

#endif /* VITALS_CACHE_H */
