/* SPDX-License-Identifier: MIT */
/*
 * Epochs to and from JSON (the on-disk form), and the store's file naming.
 * Internal to libvitals; consumers use <vitals/store.h>.
 */
#ifndef VITALS_CODEC_H
#define VITALS_CODEC_H

#include <jansson.h>
#include <vitals/vitals.h>

#include "epoch.h"

/*
 * Format versions ("format": N): 1, the full form, each sample an object
 * with its stacks and names (the API's and `vitals show --json`'s); 2,
 * the compact form the store writes, strings and stacks in tables that
 * samples name by index (codec_text.c describes it).  Both read.
 */
#define CODEC_FORMAT_FULL 1
#define CODEC_FORMAT_COMPACT 2
/* The format of the files the store writes. */
#define CODEC_FORMAT CODEC_FORMAT_COMPACT
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
	const char *key; /* JSON key; NULL ends a table */
	int type; /* CODEC_* */
	size_t off; /* offset of the member */
};

/*
 * The scalar members of an epoch, a vital, a sample, a finding and a
 * metric (its name is the key it is stored under), in the order they are
 * written; the writer and both readers are driven by them.
 */
extern const struct codec_field codec_epoch_fields[];
extern const struct codec_field codec_vital_fields[];
extern const struct codec_field codec_sample_fields[];
extern const struct codec_field codec_finding_fields[];
extern const struct codec_field codec_metric_fields[];
extern const struct codec_field codec_module_fields[];

/* A task of the compact form's table; strings in the epoch's arena. */
struct codec_task {
	uint32_t pid, tid, uid, exe_id;
	const char *exe, *comm;
};

/* A stack of the compact form's table, in the epoch's arena. */
struct codec_stack {
	uint32_t nk, nu; /* kernel, user frames */
	const uint64_t *frames; /* nk kernel then nu user frames */
	const char *const *names; /* nk + nu names, or NULL */
};

/* The compact form's tables as a reader has them so far. */
struct codec_tables {
	const char **str;
	struct codec_task *task;
	struct codec_stack *stack;
	uint32_t nstr, ntask, nstack;
	uint32_t next_task, next_stack; /* entries rows have named */
	uint64_t prev_ts; /* the time of the vital's previous sample */
};

/*
 * The parts of the compact form (codec_text.c describes it) from the
 * numbers v[0..n) either reader collected, for both readers to check and
 * build alike: a task, a stack (into e's arena), and sample i of vital v
 * (samples[0..i) those before it).  Each returns 0, -EBADMSG with the
 * reason in *why (a constant), or -ENOMEM.
 */
int codec_task_make(const struct codec_tables *t, const int64_t *v, size_t n,
    struct codec_task *out, const char **why);
int codec_stack_make(struct vitals_epoch *e, const struct codec_tables *t,
    const int64_t *v, size_t n, struct codec_stack *out, const char **why);
int codec_row_make(struct codec_tables *t, const struct vitals_vital_epoch *v,
    const struct vitals_sample *samples, uint32_t i, const int64_t *row,
    size_t n, struct vitals_sample *out, const char **why);

/* Most numbers in a row of the compact form, and in a stack. */
#define CODEC_ROW_MAX (8 + VITALS_NARGS)
#define CODEC_STACK_NUMS (1 + 4 * VITALS_STACK_MAX)

/* qsort orders of the epoch's tables: metrics by name, modules by id. */
int codec_metric_cmp(const void *a, const void *b);
int codec_module_cmp(const void *a, const void *b);

/*
 * Decode an epoch from JSON.  Returns 0 and sets *out (free with
 * vitals_epoch_free), or -EBADMSG with the first problem (the JSON path of
 * the bad member) in err, or -ENOMEM.
 */
int codec_epoch_from_json(
    json_t *j, struct vitals_epoch **out, char *err, size_t errlen);

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
 * Where codec_text_write hands the text: buf[0..n) is borrowed for the
 * call.  Returns 0, or a negative errno that stops the writing.
 */
typedef int (*codec_sink_fn)(const char *buf, size_t n, void *arg);

/*
 * Write an epoch (borrowed) as format 1 JSON text, without a JSON tree,
 * in chunks of at most 64 KiB to sink: the bytes the jansson tree writer
 * of format 1 wrote (json_dumps(tree, JSON_COMPACT)), strings that are
 * not UTF-8 with their bytes >= 0x80 as '?', metric names likewise
 * whatever they are, a metric named twice where it first came with the
 * last one's members.  Returns 0, the sink's error, or -ENOMEM.
 */
int codec_text_write(
    const struct vitals_epoch *e, codec_sink_fn sink, void *arg);

/*
 * The same text in one piece: 0 with a malloc'd, NUL-terminated text in
 * *out (the caller's) and its length in *len, or -ENOMEM.
 */
int codec_text_encode(const struct vitals_epoch *e, char **out, size_t *len);

/*
 * The same epoch in the compact form (format 2), to sink or in one piece:
 * as codec_text_write and codec_text_encode.  Decoded, it gives the epoch
 * its format 1 text gives.
 */
int codec_compact_write(
    const struct vitals_epoch *e, codec_sink_fn sink, void *arg);
int codec_compact_encode(const struct vitals_epoch *e, char **out, size_t *len);

/* An epoch packed: its compact text, zlib'd (packed.c). */
struct codec_packed {
	unsigned char *z; /* the zlib stream, malloc'd; NULL: none */
	size_t zlen; /* its bytes */
	size_t len; /* the text's bytes */
};

/*
 * Pack e (borrowed) into *p (free with codec_packed_free).  0, or -ENOMEM
 * (*p then empty).  Unpacked, it gives the epoch its format 1 text gives.
 */
int codec_pack(const struct vitals_epoch *e, struct codec_packed *p);

/*
 * The epoch p holds, in *out (free with vitals_epoch_free).  0, -ENOMEM,
 * or -EBADMSG with the reason in err.
 */
int codec_unpack(const struct codec_packed *p, struct vitals_epoch **out,
    char *err, size_t errlen);

void codec_packed_free(struct codec_packed *p);

/*
 * Whether host (len bytes, which may hold a NUL) can name epoch files: no
 * '/' nor NUL, and short enough for the file and its temporary name to
 * fit in NAME_MAX.  Returns 0, or -EINVAL or -ENAMETOOLONG with the
 * reason in why.
 */
/*
 * The stored bytes of m counters folded to `to` (a power of two <= m:
 * counter i sums those j with j & (to - 1) == i), as the disk budget
 * counts them: a byte per nonzero counter and one per two digits.
 */
uint64_t codec_hca_bytes(const uint64_t *hca, uint32_t m, uint32_t to);

int codec_host_check(const char *host, size_t len, char *why, size_t whylen);

/*
 * The path of an epoch's file relative to the data dir:
 * "YYYY-MM-DD/YYYYMMDDTHHMMSS.mmmZ_HOST.json.gz" (UTC).  Returns the
 * length written, or -ENAMETOOLONG.
 */
int codec_epoch_relpath(
    uint64_t start_ns, const char *host, char *buf, size_t len);

/* Parse a file name made by codec_epoch_relpath's last part; 0 or -EINVAL. */
int codec_parse_name(
    const char *name, uint64_t *start_ns, char *host, size_t hostlen);

#endif /* VITALS_CODEC_H */
