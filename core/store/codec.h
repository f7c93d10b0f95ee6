/* SPDX-License-Identifier: MIT */
/*
 * Epochs to and from JSON (the on-disk form), and the store's file naming.
 * Internal to libvitals; consumers use <vitals/store.h>.
 */
#ifndef VITALS_CODEC_H
#define VITALS_CODEC_H

#include <jansson.h>
#include <vitals/vitals.h>

/* Format version written into every epoch file ("format": N). */
#define CODEC_FORMAT 1
/*
 * Largest HCA accepted when decoding (config allows 65536): a corrupt
 * hca_size must not make us allocate gigabytes.
 */
#define CODEC_HCA_MAX (1u << 20)

/* Types of the scalar members in the field tables. */
enum {
	CODEC_U64, /* uint64_t, as the int64 bit pattern (see codec_u64) */
	CODEC_U32, /* uint32_t */
	CODEC_DBL, /* double; null stands for NaN */
	CODEC_STR, /* const char *, required; NULL is written as "" */
	CODEC_STRN, /* const char *, may be NULL: null or absent */
};

/* One scalar member of a struct and its JSON key. */
struct codec_field {
	const char *key;  /* JSON key; NULL ends a table */
	int type;         /* CODEC_* */
	size_t off;       /* offset of the member */
};

/*
 * The scalar members of an epoch, a vital, a sample, a finding and a
 * metric (its name is the key it is stored under), in the order they are
 * written; both codecs (JSON tree and text) are driven by them.
 */
extern const struct codec_field codec_epoch_fields[];
extern const struct codec_field codec_vital_fields[];
extern const struct codec_field codec_sample_fields[];
extern const struct codec_field codec_finding_fields[];
extern const struct codec_field codec_metric_fields[];
extern const struct codec_field codec_module_fields[];

/* qsort orders of the epoch's tables: metrics by name, modules by id. */
int codec_metric_cmp(const void *a, const void *b);
int codec_module_cmp(const void *a, const void *b);

/*
 * Encode an epoch as a new JSON object (caller owns the reference).
 * Returns NULL only when memory runs out.
 */
json_t *codec_epoch_to_json(const struct vitals_epoch *e);

/*
 * Decode an epoch from JSON.  Returns 0 and sets *out (free with
 * vitals_epoch_free), or -EBADMSG with the first problem (the JSON path of
 * the bad member) in err, or -ENOMEM.
 */
int codec_epoch_from_json(json_t *j, struct vitals_epoch **out, char *err,
    size_t errlen);

/*
 * Decode an epoch from its JSON text buf[0..len) without building a JSON
 * tree: a fast reader of the form the encoders write, for range queries
 * that read thousands of files.  It gives the epoch codec_epoch_from_json
 * would, or declines: -ENOTSUP for anything outside that form (an error,
 * an unknown or repeated key, keys out of their usual order where one
 * depends on another, \u escapes, non-ASCII bytes), and the caller then
 * reads the text with jansson, which takes any valid epoch and explains
 * what is wrong with a bad one (codec_epoch_parse does both).  Returns 0
 * and sets *out (free with vitals_epoch_free), -ENOTSUP, or -ENOMEM.
 */
int codec_text_decode(const char *buf, size_t len, struct vitals_epoch **out);

/*
 * Decode an epoch from its JSON text: codec_text_decode, else jansson and
 * codec_epoch_from_json.  Returns 0 and sets *out (free with
 * vitals_epoch_free), -EBADMSG with the reason in err ("line L column C:
 * ..." for bad JSON, else the JSON path of the bad member), or -ENOMEM.
 */
int codec_epoch_parse(const char *buf, size_t len, struct vitals_epoch **out,
    char *err, size_t errlen);

/*
 * Encode an epoch (borrowed) as compact JSON text, the bytes
 * json_dumps(codec_epoch_to_json(e), JSON_COMPACT) gives, without building
 * a JSON tree.  Returns 0 with a malloc'd, NUL-terminated text in *out
 * (the caller's) and its length in *len; -ENOTSUP for an epoch it leaves
 * to codec_epoch_to_json (strings with non-ASCII bytes, metrics not
 * sorted by name); -ENOMEM.
 */
int codec_text_encode(const struct vitals_epoch *e, char **out, size_t *len);

/*
 * Free an epoch made by codec_epoch_from_json (one arena holds it and all
 * it points to); accepts NULL.  vitals_epoch_free is this.
 */
void codec_epoch_free(struct vitals_epoch *e);

/*
 * A new zeroed epoch in its own arena (free with codec_epoch_free), and
 * zeroed memory in the arena of such an epoch or of a decoded one.  Both
 * return NULL when out of memory (codec_epoch_alloc also for n == 0).
 */
struct vitals_epoch *codec_epoch_new(void);
void *codec_epoch_alloc(struct vitals_epoch *e, size_t n);

/*
 * s (NULL reads as "") in the arena of such an epoch, stored once however
 * often it is asked for: the strings of its samples (symbols, exes,
 * threads) repeat.  NULL when out of memory.
 */
const char *codec_epoch_intern(struct vitals_epoch *e, const char *s);

/*
 * p[0..n) in the arena likewise (samples share frame arrays and their
 * names' arrays), aligned as codec_epoch_alloc's; NULL for n == 0 or out
 * of memory.  Not to be written through.
 */
const void *codec_epoch_intern_bytes(struct vitals_epoch *e, const void *p,
    size_t n);

/*
 * Free what interning keeps once the epoch is built (its table); the
 * epoch is untouched and may still intern.  Accepts NULL.
 */
void codec_epoch_seal(struct vitals_epoch *e);

/* How many distinct strings and arrays e's table holds (0 once sealed). */
uint32_t codec_epoch_interned(const struct vitals_epoch *e);

/*
 * Whether host (len bytes, which may hold a NUL) can name epoch files: no
 * '/' nor NUL, and short enough for the file and its temporary name to
 * fit in NAME_MAX.  Returns 0, or -EINVAL or -ENAMETOOLONG with the
 * reason in why.
 */
int codec_host_check(const char *host, size_t len, char *why, size_t whylen);

/*
 * The path of an epoch's file relative to the data dir:
 * "YYYY-MM-DD/YYYYMMDDTHHMMSS.mmmZ_HOST.json.gz" (UTC).  Returns the
 * length written, or -ENAMETOOLONG.
 */
int codec_epoch_relpath(uint64_t start_ns, const char *host, char *buf,
    size_t len);

/* Parse a file name made by codec_epoch_relpath's last part; 0 or -EINVAL. */
int codec_parse_name(const char *name, uint64_t *start_ns, char *host,
    size_t hostlen);

#endif /* VITALS_CODEC_H */
