/* SPDX-License-Identifier: MIT */
/*
 * Epochs to and from JSON, the form they take on disk, and the names of
 * the store's files.  Scalar members are described once in field tables
 * that drive both directions; a decoded epoch lives in one arena.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"

#define CODEC_NS 1000000000ull
/* Arena chunk size; larger requests get a chunk of their own. */
#define CODEC_CHUNK (64 * 1024)
/*
 * Longest host part of a file name: the temporary name
 * ".NAME.tmp.XXXXXXXXXXXXXXXX" (safefile.c) must still fit in NAME_MAX
 * (255): 21 + 200 + 8 + 22 bytes.
 */
#define CODEC_HOST_MAX 200
/* "YYYYMMDDTHHMMSS.mmmZ_" before the host, ".json.gz" after it. */
#define CODEC_NAME_PATTERN "DDDDDDDDTDDDDDD.DDDZ_"
#define CODEC_NAME_SUFFIX ".json.gz"

/* clang-format off */
#define CODEC_F(t, s, m) { #m, t, offsetof(struct s, m) }
/* clang-format on */

const struct codec_field codec_epoch_fields[] = {
	CODEC_F(CODEC_STR, vitals_epoch, host),
	CODEC_F(CODEC_U64, vitals_epoch, start_ns),
	CODEC_F(CODEC_U64, vitals_epoch, length_ns),
	CODEC_F(CODEC_U32, vitals_epoch, timescale_s),
	CODEC_F(CODEC_U32, vitals_epoch, partial),
	CODEC_F(CODEC_U64, vitals_epoch, seq),
	CODEC_F(CODEC_U64, vitals_epoch, dropped),
	CODEC_F(CODEC_U64, vitals_epoch, cpu_ns),
	{ NULL, 0, 0 },
};

const struct codec_field codec_vital_fields[] = {
	CODEC_F(CODEC_STR, vitals_vital_epoch, name),
	CODEC_F(CODEC_STR, vitals_vital_epoch, unit),
	CODEC_F(CODEC_U64, vitals_vital_epoch, threshold),
	CODEC_F(CODEC_U64, vitals_vital_epoch, floor),
	CODEC_F(CODEC_U64, vitals_vital_epoch, events),
	CODEC_F(CODEC_U64, vitals_vital_epoch, wsum),
	CODEC_F(CODEC_U64, vitals_vital_epoch, unique),
	CODEC_F(CODEC_U64, vitals_vital_epoch, dropped),
	CODEC_F(CODEC_U64, vitals_vital_epoch, samples_dropped),
	CODEC_F(CODEC_U32, vitals_vital_epoch, hca_size),
	{ NULL, 0, 0 },
};

const struct codec_field codec_sample_fields[] = {
	CODEC_F(CODEC_U64, vitals_sample, ts_ns),
	CODEC_F(CODEC_U64, vitals_sample, label),
	CODEC_F(CODEC_U64, vitals_sample, weight),
	CODEC_F(CODEC_U64, vitals_sample, count),
	CODEC_F(CODEC_U32, vitals_sample, slot),
	CODEC_F(CODEC_U32, vitals_sample, exe_id),
	CODEC_F(CODEC_U32, vitals_sample, uid),
	CODEC_F(CODEC_U32, vitals_sample, pid),
	CODEC_F(CODEC_U32, vitals_sample, tid),
	CODEC_F(CODEC_U32, vitals_sample, op),
	CODEC_F(CODEC_STR, vitals_sample, exe),
	CODEC_F(CODEC_STR, vitals_sample, comm),
	{ NULL, 0, 0 },
};

const struct codec_field codec_finding_fields[] = {
	CODEC_F(CODEC_U64, vitals_finding, start_ns),
	CODEC_F(CODEC_U64, vitals_finding, end_ns),
	CODEC_F(CODEC_U32, vitals_finding, timescale_s),
	CODEC_F(CODEC_U32, vitals_finding, severity),
	CODEC_F(CODEC_DBL, vitals_finding, score),
	CODEC_F(CODEC_DBL, vitals_finding, value),
	CODEC_F(CODEC_DBL, vitals_finding, expected),
	CODEC_F(CODEC_STR, vitals_finding, filter),
	CODEC_F(CODEC_STRN, vitals_finding, vital),
	CODEC_F(CODEC_STRN, vitals_finding, label),
	CODEC_F(CODEC_STR, vitals_finding, text),
	{ NULL, 0, 0 },
};

/* A metric's members; its name is the key it is stored under. */
const struct codec_field codec_metric_fields[] = {
	CODEC_F(CODEC_STR, vitals_metric, unit),
	CODEC_F(CODEC_DBL, vitals_metric, mean),
	CODEC_F(CODEC_DBL, vitals_metric, min),
	CODEC_F(CODEC_DBL, vitals_metric, max),
	CODEC_F(CODEC_DBL, vitals_metric, last),
	CODEC_F(CODEC_U64, vitals_metric, n),
	{ NULL, 0, 0 },
};

/* A module of the epoch's table (ABI minor 2): an id VITALS_UFRAME names. */
const struct codec_field codec_module_fields[] = {
	CODEC_F(CODEC_U32, vitals_module, id),
	CODEC_F(CODEC_STR, vitals_module, path),
	CODEC_F(CODEC_STR, vitals_module, build_id),
	{ NULL, 0, 0 },
};

/* A block of the arena a decoded epoch lives in. */
struct codec_chunk {
	struct codec_chunk *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

/*
 * A decoded epoch and everything it points to: the epoch comes first so
 * codec_epoch_free can get back from it to the chunks.
 */
/*
 * A string or byte array of the arena, in the owner's table of them; len
 * has CODEC_BYTES set for a byte array, which has no NUL after it.
 */
struct codec_str {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

#define CODEC_BYTES 0x80000000u

struct codec_owner {
	struct vitals_epoch epoch;
	struct codec_chunk *chunks;
	/*
	 * The arena's strings and stack arrays, each stored once (open
	 * addressing, size a power of two or 0): a thousand samples name the
	 * same few hundred functions, exes and threads, and many share their
	 * frames or their frames' names.  Freed by codec_epoch_seal.
	 */
	struct codec_str *strs;
	uint32_t nstrs, strs_size;
};

/* Decoding state: the arena, and the JSON path of the member being read. */
struct codec_dec {
	struct codec_owner *own;
	char *err;
	size_t errlen;
	size_t plen;
	char path[128];
};

typedef json_t *(*codec_enc_fn)(const void *item);
typedef int (*codec_dec_fn)(
    struct codec_dec *d, json_t *o, void *item, const void *arg);

/* ---- encoding ---- */

/*
 * jansson integers are signed 64-bit, so a uint64_t (counters, addresses
 * >= 2^63 such as kernel frames) is stored as the int64 with the same bit
 * pattern and cast back when read: exact, at the price of negative numbers
 * in the file for values >= 2^63.
 */
static json_t *
codec_u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* JSON has no NaN or infinity (json_real refuses them): write null. */
static json_t *
codec_double(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/*
 * json_string refuses invalid UTF-8, and a comm or an exe path may hold
 * any bytes: replace the non-ASCII bytes of such a string by '?'.
 */
static json_t *
codec_string(const char *s)
{
	json_t *j;
	char *copy, *p;

	if (s == NULL)
		s = "";
	if ((j = json_string(s)) != NULL)
		return j;
	if ((copy = strdup(s)) == NULL)
		return NULL;
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* Set o[key] = v, stealing v; fails (-1) when v is NULL (out of memory). */
static int
codec_set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v);
}

static json_t *
codec_field_to_json(const struct codec_field *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	const char *s;

	switch (f->type) {
	case CODEC_U64:
		return codec_u64(*(const uint64_t *)p);
	case CODEC_U32:
		return json_integer(*(const uint32_t *)p);
	case CODEC_DBL:
		return codec_double(*(const double *)p);
	case CODEC_STR:
		return codec_string(*(const char *const *)p);
	default:
		s = *(const char *const *)p;
		return s != NULL ? codec_string(s) : json_null();
	}
}

static int
codec_fields_to_json(json_t *o, const struct codec_field *f, const void *base)
{
	for (; f->key != NULL; f++)
		if (codec_set(o, f->key, codec_field_to_json(f, base)) < 0)
			return -1;
	return 0;
}

static json_t *
codec_u64_array(const uint64_t *v, uint32_t n)
{
	json_t *a;
	uint32_t i;

	if ((a = json_array()) == NULL || v == NULL)
		return a;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(a, codec_u64(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
codec_array_to_json(const void *base, size_t n, size_t size, codec_enc_fn fn)
{
	json_t *a, *item;
	size_t i;

	if ((a = json_array()) == NULL || base == NULL)
		return a;
	for (i = 0; i < n; i++) {
		item = fn((const char *)base + i * size);
		if (json_array_append_new(a, item) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
codec_ksyms_to_json(const char *const *ksyms, uint32_t n)
{
	json_t *a;
	uint32_t i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(a, codec_string(ksyms[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * A sample.  Stacks deeper than VITALS_STACK_MAX are cut there, so that
 * what is written can always be read back.
 */
static json_t *
codec_sample_to_json(const void *item)
{
	const struct vitals_sample *s = item;
	uint32_t nk = s->kstack != NULL ? s->nkstack : 0;
	uint32_t nu = s->ustack != NULL ? s->nustack : 0;
	json_t *o;

	nk = nk > VITALS_STACK_MAX ? VITALS_STACK_MAX : nk;
	nu = nu > VITALS_STACK_MAX ? VITALS_STACK_MAX : nu;
	if ((o = json_object()) == NULL)
		return NULL;
	if (codec_fields_to_json(o, codec_sample_fields, s) < 0 ||
	    codec_set(o, "kstack", codec_u64_array(s->kstack, nk)) < 0 ||
	    codec_set(o, "ustack", codec_u64_array(s->ustack, nu)) < 0 ||
	    (s->ksyms != NULL && nk > 0 &&
		codec_set(o, "ksyms", codec_ksyms_to_json(s->ksyms, nk)) < 0) ||
	    (s->ksyms != NULL && nu > 0 && codec_set(o, "usyms",
		codec_ksyms_to_json(s->ksyms + s->nkstack, nu)) < 0) ||
	    codec_set(o, "args", codec_u64_array(s->args, VITALS_NARGS)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * The HCA, sparsely: {"n": hca_size, "nz": [[index, value], ...]} with
 * the non-zero counters in index order.  In a one-minute epoch most of a
 * vital's counters are zero (few labels are hot), and a dense array would
 * make the zeros the bulk of every file before compression and of the
 * memory jansson needs to read it.
 */
static json_t *
codec_hca_to_json(const struct vitals_vital_epoch *v)
{
	json_t *o, *nz, *pair;
	uint32_t i;

	if ((o = json_object()) == NULL)
		return NULL;
	if (codec_set(o, "n", json_integer(v->hca_size)) < 0 ||
	    codec_set(o, "nz", nz = json_array()) < 0)
		goto fail;
	for (i = 0; v->hca != NULL && i < v->hca_size; i++) {
		if (v->hca[i] == 0)
			continue;
		pair = json_pack("[Io]", (json_int_t)i, codec_u64(v->hca[i]));
		if (json_array_append_new(nz, pair) < 0)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *
codec_vital_to_json(const void *item)
{
	const struct vitals_vital_epoch *v = item;
	json_t *o;

	if ((o = json_object()) == NULL)
		return NULL;
	if (codec_fields_to_json(o, codec_vital_fields, v) < 0 ||
	    codec_set(o, "hca", codec_hca_to_json(v)) < 0 ||
	    codec_set(o, "samples",
		codec_array_to_json(v->samples, v->nsamples,
		    sizeof(*v->samples), codec_sample_to_json)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
codec_finding_to_json(const void *item)
{
	json_t *o;

	if ((o = json_object()) == NULL)
		return NULL;
	if (codec_fields_to_json(o, codec_finding_fields, item) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * Set o[key] = v, stealing v, with the bytes >= 0x80 of key made '?' as
 * codec_string does (jansson refuses keys that are not UTF-8).
 */
static int
codec_set_key(json_t *o, const char *key, json_t *v)
{
	const char *k;
	char *copy, *p;
	int r;

	for (k = key; *k != '\0' && (unsigned char)*k < 0x80; k++)
		;
	if (*k == '\0')
		return json_object_set_new(o, key, v);
	if ((copy = strdup(key)) == NULL) {
		json_decref(v);
		return -1;
	}
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	r = json_object_set_new(o, copy, v);
	free(copy);
	return r;
}

/*
 * The metrics as {"NAME": {"unit": ..., "mean": ..., ...}, ...}: an
 * object, since names are unique, in the epoch's (name) order.  A metric
 * without a name is left out.
 */
static json_t *
codec_metrics_to_json(const struct vitals_epoch *e)
{
	const struct vitals_metric *m;
	json_t *o, *mo;
	uint32_t i;

	if ((o = json_object()) == NULL)
		return NULL;
	for (i = 0; e->metrics != NULL && i < e->nmetrics; i++) {
		m = &e->metrics[i];
		if (m->name == NULL || m->name[0] == '\0')
			continue;
		if ((mo = json_object()) == NULL ||
		    codec_fields_to_json(mo, codec_metric_fields, m) < 0) {
			json_decref(mo);
			json_decref(o);
			return NULL;
		}
		if (codec_set_key(o, m->name, mo) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* The modules table as [{"id": N, "path": "...", "build_id": "..."}]. */
static json_t *
codec_modules_to_json(const struct vitals_epoch *e)
{
	json_t *a, *mo;
	uint32_t i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; e->modules != NULL && i < e->nmodules; i++) {
		/* The array owns mo from the append on, even if it fails. */
		if (json_array_append_new(a, mo = json_object()) < 0 ||
		    codec_fields_to_json(mo, codec_module_fields,
			&e->modules[i]) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * Encode an epoch (borrowed) as a new JSON object, the caller's
 * reference.  Returns NULL only when memory runs out.
 */
json_t *
codec_epoch_to_json(const struct vitals_epoch *e)
{
	json_t *o;

	if ((o = json_object()) == NULL)
		return NULL;
	if (codec_set(o, "format", json_integer(CODEC_FORMAT)) < 0 ||
	    codec_fields_to_json(o, codec_epoch_fields, e) < 0 ||
	    codec_set(o, "vitals",
		codec_array_to_json(e->vitals, e->nvitals, sizeof(*e->vitals),
		    codec_vital_to_json)) < 0 ||
	    codec_set(o, "findings",
		codec_array_to_json(e->findings, e->nfindings,
		    sizeof(*e->findings), codec_finding_to_json)) < 0 ||
	    codec_set(o, "metrics", codec_metrics_to_json(e)) < 0 ||
	    codec_set(o, "modules", codec_modules_to_json(e)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- the arena of a decoded epoch ---- */

/* n zeroed bytes owned by o's arena; NULL for n == 0 or out of memory. */
static void *
codec_alloc(struct codec_owner *o, size_t n)
{
	const size_t align = _Alignof(max_align_t);
	struct codec_chunk *c = o->chunks;
	size_t size;
	void *p;

	if (n == 0)
		return NULL;
	n = (n + align - 1) / align * align;
	if (c == NULL || c->size - c->used < n) {
		size = n > CODEC_CHUNK ? n : CODEC_CHUNK;
		if ((c = malloc(sizeof(*c) + size)) == NULL)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = o->chunks;
		o->chunks = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return memset(p, 0, n);
}

/* Double o's string table (256 entries first); 0 or -ENOMEM. */
static int
codec_strs_grow(struct codec_owner *o)
{
	uint32_t size = o->strs_size ? o->strs_size * 2 : 256, i, j;
	struct codec_str *v;

	if ((v = calloc(size, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < o->strs_size; i++) {
		if (o->strs[i].s == NULL)
			continue;
		for (j = o->strs[i].hash & (size - 1); v[j].s != NULL;
		    j = (j + 1) & (size - 1))
			;
		v[j] = o->strs[i];
	}
	free(o->strs);
	o->strs = v;
	o->strs_size = size;
	return 0;
}

/*
 * The arena's copy of p[0..n), shared with every equal one stored before:
 * with a NUL after it for a string (bytes 0), without for a byte array
 * (bytes CODEC_BYTES).  A string with a NUL inside is copied alone.  NULL
 * when out of memory.
 */
static void *
codec_intern_as(struct codec_owner *o, const void *p, size_t n, uint32_t bytes)
{
	const unsigned char *b = p;
	uint32_t h = 2166136261u ^ bytes, i, len = (uint32_t)n | bytes;
	char *d;

	if (n >= CODEC_BYTES || (!bytes && memchr(p, '\0', n) != NULL))
		goto alone;
	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	/* Found, it costs nothing: only a new entry may grow the table. */
	for (i = h & (o->strs_size - 1);
	    o->strs_size > 0 && o->strs[i].s != NULL;
	    i = (i + 1) & (o->strs_size - 1))
		if (o->strs[i].hash == h && o->strs[i].len == len &&
		    memcmp(o->strs[i].s, p, n) == 0)
			return (void *)(uintptr_t)o->strs[i].s;
	if (o->nstrs >= o->strs_size / 2) {
		if (codec_strs_grow(o) != 0)
			goto alone;
		for (i = h & (o->strs_size - 1); o->strs[i].s != NULL;
		    i = (i + 1) & (o->strs_size - 1))
			;
	}
	if ((d = codec_alloc(o, n + !bytes)) == NULL)
		return NULL;
	memcpy(d, p, n);
	o->strs[i] = (struct codec_str){ d, len, h };
	o->nstrs++;
	return d;
alone:
	if ((d = codec_alloc(o, n + !bytes)) != NULL)
		memcpy(d, p, n);
	return d;
}

/* codec_intern_as() of the string s[0..n). */
static const char *
codec_intern(struct codec_owner *o, const char *s, size_t n)
{
	return codec_intern_as(o, s, n, 0);
}

/* The owner of an epoch from codec_epoch_new or codec_epoch_from_json. */
static struct codec_owner *
codec_owner_of(const struct vitals_epoch *e)
{
	return (struct codec_owner *)(uintptr_t)((const char *)e -
	    offsetof(struct codec_owner, epoch));
}

/*
 * Free an epoch made by codec_epoch_from_json, and all it points to, in
 * one go; accepts NULL.  Only for decoded epochs (vitals_epoch_free calls
 * it): the engine's epochs are allocated differently.
 */
void
codec_epoch_free(struct vitals_epoch *e)
{
	struct codec_owner *o;
	struct codec_chunk *c, *next;

	if (e == NULL)
		return;
	o = codec_owner_of(e);
	for (c = o->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(o->strs);
	free(o);
}

/*
 * A new, zeroed epoch in an arena of its own, to be filled with
 * codec_epoch_alloc (rollups and copies are built this way, so that
 * vitals_epoch_free frees them like loaded epochs).  NULL when out of
 * memory.
 */
struct vitals_epoch *
codec_epoch_new(void)
{
	struct codec_owner *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	return &o->epoch;
}

/*
 * n zeroed bytes owned by e, which came from codec_epoch_new or
 * codec_epoch_from_json; freed with it.  NULL for n == 0 or out of memory.
 */
void *
codec_epoch_alloc(struct vitals_epoch *e, size_t n)
{
	struct codec_owner *o;

	o = codec_owner_of(e);
	return codec_alloc(o, n);
}

/*
 * s (NULL reads as "") in e's arena, stored once however many times it is
 * asked for; e as for codec_epoch_alloc.  NULL when out of memory.
 */
const char *
codec_epoch_intern(struct vitals_epoch *e, const char *s)
{
	struct codec_owner *o;

	o = codec_owner_of(e);
	if (s == NULL)
		s = "";
	return codec_intern(o, s, strlen(s));
}

/*
 * p[0..n) (n > 0) in e's arena, stored once however many times it is
 * asked for; e as for codec_epoch_alloc.  NULL when out of memory.
 */
const void *
codec_epoch_intern_bytes(struct vitals_epoch *e, const void *p, size_t n)
{
	struct codec_owner *o;

	o = codec_owner_of(e);
	return n > 0 ? codec_intern_as(o, p, n, CODEC_BYTES) : NULL;
}

/* Strings and arrays in e's interning table: 0 once sealed. */
uint32_t
codec_epoch_interned(const struct vitals_epoch *e)
{
	return codec_owner_of(e)->nstrs;
}

/*
 * Free the table that makes e's strings and arrays shared, once e is
 * built: it is as large as a tenth of a queued epoch.  Interning again
 * starts a new one (sharing only from then on).
 */
void
codec_epoch_seal(struct vitals_epoch *e)
{
	struct codec_owner *o;

	if (e == NULL)
		return;
	o = codec_owner_of(e);
	free(o->strs);
	o->strs = NULL;
	o->nstrs = o->strs_size = 0;
}

/* ---- decoding ---- */

/* Append n bytes of s to the path, cut where it is full. */
static void
codec_path_put(struct codec_dec *d, const char *s, size_t n)
{
	size_t room = sizeof(d->path) - 1 - d->plen;

	n = n < room ? n : room;
	memcpy(d->path + d->plen, s, n);
	d->plen += n;
	d->path[d->plen] = '\0';
}

/*
 * Append ".key" (or "[i]" when key is NULL) to the path; returns the mark.
 * Called for every member decoded, so it avoids snprintf.
 */
static size_t
codec_enter(struct codec_dec *d, const char *key, size_t i)
{
	size_t mark = d->plen, n = 0;
	char num[24];

	if (key != NULL) {
		if (d->plen > 0)
			codec_path_put(d, ".", 1);
		codec_path_put(d, key, strlen(key));
		return mark;
	}
	do
		num[sizeof(num) - 1 - n++] = (char)('0' + i % 10);
	while ((i /= 10) > 0 && n < sizeof(num) - 2);
	codec_path_put(d, "[", 1);
	codec_path_put(d, num + sizeof(num) - n, n);
	codec_path_put(d, "]", 1);
	return mark;
}

static void
codec_leave(struct codec_dec *d, size_t mark)
{
	d->plen = mark;
	d->path[mark] = '\0';
}

/* Report "PATH[.key]: message" in err; returns -EBADMSG. */
static int __attribute__((format(printf, 3, 4)))
codec_fail(struct codec_dec *d, const char *key, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (key != NULL)
		codec_enter(d, key, 0);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->err != NULL && d->errlen > 0)
		snprintf(d->err, d->errlen, "%s: %s",
		    d->plen > 0 ? d->path : "(root)", msg);
	return -EBADMSG;
}

static int
codec_nomem(struct codec_dec *d)
{
	if (d->err != NULL && d->errlen > 0)
		snprintf(d->err, d->errlen, "out of memory");
	return -ENOMEM;
}

static int
codec_u64_from(struct codec_dec *d, json_t *v, uint64_t *out)
{
	if (!json_is_integer(v))
		return codec_fail(d, NULL, "expected an integer");
	*out = (uint64_t)json_integer_value(v); /* see codec_u64 */
	return 0;
}

static int
codec_u32_from(struct codec_dec *d, json_t *v, uint32_t *out)
{
	json_int_t i;

	if (!json_is_integer(v))
		return codec_fail(d, NULL, "expected an integer");
	i = json_integer_value(v);
	if (i < 0 || i > UINT32_MAX)
		return codec_fail(d, NULL, "%lld out of range", (long long)i);
	*out = (uint32_t)i;
	return 0;
}

static int
codec_double_from(struct codec_dec *d, json_t *v, double *out)
{
	if (json_is_null(v))
		*out = NAN;
	else if (json_is_number(v))
		*out = json_number_value(v);
	else
		return codec_fail(d, NULL, "expected a number");
	return 0;
}

/* A JSON string in the arena (interned). */
static int
codec_string_from(
    struct codec_dec *d, json_t *v, const char **out, int nullable)
{
	const char *s;
	size_t n;

	if (!json_is_string(v))
		return codec_fail(
		    d, NULL, "expected a string%s", nullable ? " or null" : "");
	n = json_string_length(v);
	if ((s = codec_intern(d->own, json_string_value(v), n)) == NULL)
		return codec_nomem(d);
	*out = s;
	return 0;
}

static int
codec_field_from_json(
    struct codec_dec *d, json_t *v, const struct codec_field *f, char *p)
{
	if (v == NULL && f->type != CODEC_STRN)
		return codec_fail(d, NULL, "missing");
	if (v == NULL || (f->type == CODEC_STRN && json_is_null(v)))
		return 0; /* the arena is zeroed: NULL */
	switch (f->type) {
	case CODEC_U64:
		return codec_u64_from(d, v, (uint64_t *)p);
	case CODEC_U32:
		return codec_u32_from(d, v, (uint32_t *)p);
	case CODEC_DBL:
		return codec_double_from(d, v, (double *)p);
	default:
		return codec_string_from(
		    d, v, (const char **)p, f->type == CODEC_STRN);
	}
}

static int
codec_fields_from_json(
    struct codec_dec *d, json_t *o, const struct codec_field *f, void *base)
{
	size_t mark;
	int r;

	for (; f->key != NULL; f++) {
		mark = codec_enter(d, f->key, 0);
		r = codec_field_from_json(
		    d, json_object_get(o, f->key), f, (char *)base + f->off);
		if (r < 0)
			return r;
		codec_leave(d, mark);
	}
	return 0;
}

/* o[key], which must be an array; NULL after reporting why. */
static json_t *
codec_get_array(struct codec_dec *d, json_t *o, const char *key)
{
	json_t *a = json_object_get(o, key);

	if (a == NULL)
		codec_fail(d, key, "missing");
	else if (!json_is_array(a))
		codec_fail(d, key, "expected an array");
	else
		return a;
	return NULL;
}

/* o[key]: an array of at most max u64 (at least min), into the arena. */
static int
codec_u64s_from(struct codec_dec *d, json_t *o, const char *key, size_t min,
    size_t max, uint64_t **out, uint32_t *nout)
{
	json_t *a;
	uint64_t *f;
	size_t i, n, mark, m;
	int r;

	if ((a = codec_get_array(d, o, key)) == NULL)
		return -EBADMSG;
	mark = codec_enter(d, key, 0);
	if ((n = json_array_size(a)) > max || n < min)
		return codec_fail(d, NULL,
		    min == max ? "expected %zu numbers"
			       : "more than %zu frames",
		    max);
	if ((f = codec_alloc(d->own, n * sizeof(*f))) == NULL && n > 0)
		return codec_nomem(d);
	for (i = 0; i < n; i++) {
		m = codec_enter(d, NULL, i);
		if ((r = codec_u64_from(d, json_array_get(a, i), &f[i])) < 0)
			return r;
		codec_leave(d, m);
	}
	codec_leave(d, mark);
	*out = f;
	*nout = (uint32_t)n;
	return 0;
}

/* One optional array of frame names ("ksyms" or "usyms") into names. */
static int
codec_syms_from(struct codec_dec *d, json_t *o, const char *key, uint32_t n,
    const char **names)
{
	size_t i, mark, m;
	json_t *a;
	int r;

	if ((a = codec_get_array(d, o, key)) == NULL)
		return -EBADMSG;
	if (json_array_size(a) != n)
		return codec_fail(d, key, "expected %u names (one per frame)",
		    n);
	mark = codec_enter(d, key, 0);
	for (i = 0; i < n; i++) {
		m = codec_enter(d, NULL, i);
		if ((r = codec_string_from(
			 d, json_array_get(a, i), &names[i], 0)) < 0)
			return r;
		codec_leave(d, m);
	}
	codec_leave(d, mark);
	return 0;
}

/*
 * The optional "ksyms" and "usyms": one name per kernel and user frame,
 * kept as one array, kernel names first ("" where unknown).
 */
static int
codec_ksyms_from(struct codec_dec *d, json_t *o, struct vitals_sample *s)
{
	const char **names;
	int hk, hu, r;

	hk = json_object_get(o, "ksyms") != NULL;
	hu = json_object_get(o, "usyms") != NULL;
	if (!hk && !hu)
		return 0;
	/* + 1: empty stacks still give a non-NULL array. */
	names = codec_alloc(d->own,
	    (s->nkstack + s->nustack) * sizeof(*names) + 1);
	if (names == NULL)
		return codec_nomem(d);
	memset(names, 0, (s->nkstack + s->nustack) * sizeof(*names));
	if (hk && (r = codec_syms_from(d, o, "ksyms", s->nkstack, names)) < 0)
		return r;
	if (hu && (r = codec_syms_from(d, o, "usyms", s->nustack,
	    names + s->nkstack)) < 0)
		return r;
	s->ksyms = names;
	return 0;
}

static int
codec_sample_from(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	const struct vitals_vital_epoch *v = arg;
	struct vitals_sample *s = item;
	uint64_t *k = NULL, *u = NULL, *args = NULL;
	uint32_t nargs;
	int r;

	if ((r = codec_fields_from_json(d, o, codec_sample_fields, s)) < 0)
		return r;
	if (v->hca_size > 0 && s->slot >= v->hca_size)
		return codec_fail(d, "slot", "%u out of range (hca_size %u)",
		    s->slot, v->hca_size);
	if ((r = codec_u64s_from(
		 d, o, "kstack", 0, VITALS_STACK_MAX, &k, &s->nkstack)) < 0 ||
	    (r = codec_u64s_from(
		 d, o, "ustack", 0, VITALS_STACK_MAX, &u, &s->nustack)) < 0 ||
	    (r = codec_u64s_from(
		 d, o, "args", VITALS_NARGS, VITALS_NARGS, &args, &nargs)) < 0)
		return r;
	s->kstack = k;
	s->ustack = u;
	memcpy(s->args, args, sizeof(s->args));
	return codec_ksyms_from(d, o, s);
}

/* One [index, value] pair of a sparse HCA. */
static int
codec_pair_from(struct codec_dec *d, json_t *p, uint32_t n, int64_t prev,
    int64_t *idx, uint64_t *val)
{
	json_t *i = json_array_get(p, 0), *v = json_array_get(p, 1);

	if (!json_is_array(p) || json_array_size(p) != 2 ||
	    !json_is_integer(i) || !json_is_integer(v))
		return codec_fail(d, NULL, "expected [index, value]");
	*idx = json_integer_value(i);
	if (*idx < 0 || *idx >= n)
		return codec_fail(d, NULL, "index %lld out of range (n = %u)",
		    (long long)*idx, n);
	if (*idx <= prev)
		return codec_fail(d, NULL, "index %lld not after %lld",
		    (long long)*idx, (long long)prev);
	*val = (uint64_t)json_integer_value(v); /* see codec_u64 */
	return 0;
}

/* Fill hca_size counters from the sparse form written by codec_hca_to_json. */
static int
codec_hca_from(struct codec_dec *d, json_t *o, struct vitals_vital_epoch *v)
{
	json_t *h = json_object_get(o, "hca"), *n, *nz, *p;
	uint64_t *hca, val = 0;
	int64_t idx = -1;
	size_t i, mark, m;
	int r;

	if (!json_is_object(h))
		return codec_fail(
		    d, "hca", h ? "expected an object" : "missing");
	mark = codec_enter(d, "hca", 0);
	n = json_object_get(h, "n");
	if (!json_is_integer(n) || json_integer_value(n) != v->hca_size)
		return codec_fail(
		    d, "n", "expected hca_size (%u)", v->hca_size);
	if ((nz = codec_get_array(d, h, "nz")) == NULL)
		return -EBADMSG;
	hca = codec_alloc(d->own, (size_t)v->hca_size * sizeof(*hca));
	if (hca == NULL && v->hca_size > 0)
		return codec_nomem(d);
	codec_enter(d, "nz", 0);
	for (i = 0; i < json_array_size(nz); i++) {
		m = codec_enter(d, NULL, i);
		p = json_array_get(nz, i);
		r = codec_pair_from(d, p, v->hca_size, idx, &idx, &val);
		if (r < 0)
			return r;
		hca[idx] = val;
		codec_leave(d, m);
	}
	codec_leave(d, mark);
	v->hca = hca;
	return 0;
}

/* o[key]: an array of objects, each decoded by fn into an arena array. */
static int
codec_array_from(struct codec_dec *d, json_t *o, const char *key, size_t size,
    codec_dec_fn fn, const void *arg, void **out, uint32_t *nout)
{
	json_t *a, *item;
	size_t i, n, mark, m;
	char *v;
	int r;

	if ((a = codec_get_array(d, o, key)) == NULL)
		return -EBADMSG;
	mark = codec_enter(d, key, 0);
	if ((n = json_array_size(a)) > UINT32_MAX)
		return codec_fail(d, NULL, "too many entries");
	if ((v = codec_alloc(d->own, n * size)) == NULL && n > 0)
		return codec_nomem(d);
	for (i = 0; i < n; i++) {
		m = codec_enter(d, NULL, i);
		if (!json_is_object(item = json_array_get(a, i)))
			return codec_fail(d, NULL, "expected an object");
		if ((r = fn(d, item, v + i * size, arg)) < 0)
			return r;
		codec_leave(d, m);
	}
	codec_leave(d, mark);
	*out = v;
	*nout = (uint32_t)n;
	return 0;
}

static int
codec_vital_from(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	struct vitals_vital_epoch *v = item;
	void *samples;
	int r;

	(void)arg;
	if ((r = codec_fields_from_json(d, o, codec_vital_fields, v)) < 0)
		return r;
	if (v->name[0] == '\0')
		return codec_fail(d, "name", "empty");
	/* 0 is a vital without a sketch; otherwise a power of two. */
	if ((v->hca_size & (v->hca_size - 1)) != 0)
		return codec_fail(
		    d, "hca_size", "%u is not a power of two", v->hca_size);
	if (v->hca_size > CODEC_HCA_MAX)
		return codec_fail(d, "hca_size", "%u is more than %u",
		    v->hca_size, CODEC_HCA_MAX);
	if ((r = codec_hca_from(d, o, v)) < 0)
		return r;
	if ((r = codec_array_from(d, o, "samples", sizeof(struct vitals_sample),
		 codec_sample_from, v, &samples, &v->nsamples)) < 0)
		return r;
	v->samples = samples;
	return 0;
}

static int
codec_finding_from(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	(void)arg;
	return codec_fields_from_json(d, o, codec_finding_fields, item);
}

static int
codec_vital_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vitals_vital_epoch *)a)->name,
	    ((const struct vitals_vital_epoch *)b)->name);
}

/* Epochs promise vitals sorted by name, each name once. */
static int
codec_vitals_sort(struct codec_dec *d, struct vitals_vital_epoch *v, uint32_t n)
{
	uint32_t i;

	if (n > 1)
		qsort(v, n, sizeof(*v), codec_vital_cmp);
	for (i = 1; i < n; i++)
		if (strcmp(v[i - 1].name, v[i].name) == 0)
			return codec_fail(
			    d, "vitals", "vital '%s' appears twice", v[i].name);
	return 0;
}

int
codec_metric_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vitals_metric *)a)->name,
	    ((const struct vitals_metric *)b)->name);
}

/* One member of "metrics": the key is the name. */
static int
codec_metric_from(
    struct codec_dec *d, const char *key, json_t *o, struct vitals_metric *m)
{
	size_t mark, n = strlen(key);
	char *name;
	int r;

	if (n == 0)
		return codec_fail(d, NULL, "a metric has an empty name");
	mark = codec_enter(d, key, 0);
	if (!json_is_object(o))
		return codec_fail(d, NULL, "expected an object");
	if ((r = codec_fields_from_json(d, o, codec_metric_fields, m)) < 0)
		return r;
	if (m->n == 0)
		return codec_fail(d, "n", "no observations");
	if ((name = codec_alloc(d->own, n + 1)) == NULL)
		return codec_nomem(d);
	memcpy(name, key, n);
	m->name = name;
	codec_leave(d, mark);
	return 0;
}

/*
 * The optional "metrics" object (files written before metrics existed
 * have none), sorted by name into the arena.
 */
static int
codec_metrics_from(struct codec_dec *d, json_t *j, struct vitals_epoch *e)
{
	json_t *o = json_object_get(j, "metrics");
	struct vitals_metric *m;
	size_t n, i = 0, mark;
	void *it;
	int r;

	if (o == NULL)
		return 0;
	if (!json_is_object(o))
		return codec_fail(d, "metrics", "expected an object");
	if ((n = json_object_size(o)) > UINT32_MAX)
		return codec_fail(d, "metrics", "too many entries");
	if ((m = codec_alloc(d->own, n * sizeof(*m))) == NULL && n > 0)
		return codec_nomem(d);
	mark = codec_enter(d, "metrics", 0);
	for (it = json_object_iter(o); it != NULL;
	     it = json_object_iter_next(o, it)) {
		r = codec_metric_from(d, json_object_iter_key(it),
		    json_object_iter_value(it), &m[i++]);
		if (r < 0)
			return r;
	}
	codec_leave(d, mark);
	if (n > 1)
		qsort(m, n, sizeof(*m), codec_metric_cmp);
	e->metrics = m;
	e->nmetrics = (uint32_t)n;
	return 0;
}

/* One member of "modules": an id VITALS_UFRAME can name, two strings. */
static int
codec_module_from(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	const struct vitals_module *m = item;
	int r;

	(void)arg;
	if ((r = codec_fields_from_json(d, o, codec_module_fields, item)) < 0)
		return r;
	if (m->id >= VITALS_UFRAME_MAX_MODULES)
		return codec_fail(d, "id", "%u out of range (at most %u)",
		    m->id, VITALS_UFRAME_MAX_MODULES - 1);
	return 0;
}

int
codec_module_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct vitals_module *)a)->id;
	uint32_t y = ((const struct vitals_module *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * The optional "modules" array (files written before ABI minor 2 have
 * none), sorted by id, each id once.
 */
static int
codec_modules_from(struct codec_dec *d, json_t *j, struct vitals_epoch *e)
{
	struct vitals_module *m;
	void *v = NULL;
	uint32_t i, n = 0;
	int r;

	if (json_object_get(j, "modules") == NULL)
		return 0;
	if ((r = codec_array_from(d, j, "modules", sizeof(*m),
		 codec_module_from, NULL, &v, &n)) < 0)
		return r;
	m = v;
	if (n > 1)
		qsort(m, n, sizeof(*m), codec_module_cmp);
	for (i = 1; i < n; i++)
		if (m[i - 1].id == m[i].id)
			return codec_fail(d, "modules",
			    "module %u appears twice", m[i].id);
	e->modules = m;
	e->nmodules = n;
	return 0;
}

static int
codec_epoch_from(struct codec_dec *d, json_t *j, struct vitals_epoch *e)
{
	json_t *f;
	void *vitals, *findings;
	int r;

	if (!json_is_object(j))
		return codec_fail(d, NULL, "expected an object");
	if ((f = json_object_get(j, "format")) == NULL)
		return codec_fail(d, "format", "missing");
	if (!json_is_integer(f) || json_integer_value(f) != CODEC_FORMAT)
		return codec_fail(d, "format",
		    "unsupported (this reader knows format %d)", CODEC_FORMAT);
	if ((r = codec_fields_from_json(d, j, codec_epoch_fields, e)) < 0 ||
	    (r = codec_array_from(d, j, "vitals",
		 sizeof(struct vitals_vital_epoch), codec_vital_from, NULL,
		 &vitals, &e->nvitals)) < 0 ||
	    (r = codec_vitals_sort(d, vitals, e->nvitals)) < 0 ||
	    (r = codec_array_from(d, j, "findings",
		 sizeof(struct vitals_finding), codec_finding_from, NULL,
		 &findings, &e->nfindings)) < 0 ||
	    (r = codec_metrics_from(d, j, e)) < 0 ||
	    (r = codec_modules_from(d, j, e)) < 0)
		return r;
	e->vitals = vitals;
	e->findings = findings;
	return 0;
}

/*
 * Decode an epoch from j (borrowed).  The epoch and everything it points
 * to live in one arena owned by the result: free it with vitals_epoch_free
 * (or codec_epoch_free).  Returns 0 and sets *out; -EBADMSG with the JSON
 * path of the first bad member in err; -ENOMEM.
 */
int
codec_epoch_from_json(
    json_t *j, struct vitals_epoch **out, char *err, size_t errlen)
{
	struct codec_dec d = { .err = err, .errlen = errlen };
	int r;

	if ((d.own = calloc(1, sizeof(*d.own))) == NULL)
		return codec_nomem(&d);
	if ((r = codec_epoch_from(&d, j, &d.own->epoch)) < 0) {
		codec_epoch_free(&d.own->epoch);
		return r;
	}
	codec_epoch_seal(&d.own->epoch);
	*out = &d.own->epoch;
	return 0;
}

/*
 * Decode an epoch from its JSON text buf[0..len): the fast reader, and
 * jansson for what it declines.  Returns 0 and sets *out; -EBADMSG with
 * the reason in err; -ENOMEM.
 */
int
codec_epoch_parse(const char *buf, size_t len, struct vitals_epoch **out,
    char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;
	int r;

	if ((r = codec_text_decode(buf, len, out)) != -ENOTSUP) {
		if (r == -ENOMEM && err != NULL && errlen > 0)
			snprintf(err, errlen, "out of memory");
		return r;
	}
	if ((j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "line %d column %d: %s", je.line,
			    je.column, je.text);
		return -EBADMSG;
	}
	r = codec_epoch_from_json(j, out, err, errlen);
	json_decref(j);
	return r;
}

/* ---- file names ---- */

static int
codec_host_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

int
codec_host_check(const char *host, size_t len, char *why, size_t whylen)
{
	if (memchr(host, '\0', len) != NULL) {
		snprintf(why, whylen,
		    "a NUL byte cannot be in a file name "
		    "(epoch files are named after the host)");
		return -EINVAL;
	}
	if (memchr(host, '/', len) != NULL) {
		snprintf(why, whylen,
		    "'/' cannot be in a file name (epoch "
		    "files are named after the host)");
		return -EINVAL;
	}
	if (len > CODEC_HOST_MAX) {
		snprintf(why, whylen,
		    "%zu bytes, more than the %d an epoch "
		    "file name has room for",
		    len, CODEC_HOST_MAX);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * The name an epoch of start_ns on host is stored under, relative to the
 * data dir; characters of host other than letters, digits, '-', '.' and
 * '_' become '_' (an empty or NULL host is "_").  Returns the length
 * written to buf, or -ENAMETOOLONG.
 */
int
codec_epoch_relpath(uint64_t start_ns, const char *host, char *buf, size_t len)
{
	char h[CODEC_HOST_MAX + 1];
	time_t sec = (time_t)(start_ns / CODEC_NS);
	unsigned ms = (unsigned)(start_ns / 1000000 % 1000);
	struct tm tm;
	size_t i;
	int n;

	if (host == NULL || host[0] == '\0')
		host = "_";
	for (i = 0; host[i] != '\0'; i++) {
		if (i == CODEC_HOST_MAX)
			return -ENAMETOOLONG;
		h[i] = codec_host_char((unsigned char)host[i]) ? host[i] : '_';
	}
	h[i] = '\0';
	if (gmtime_r(&sec, &tm) == NULL)
		return -EOVERFLOW;
	n = snprintf(buf, len,
	    "%04d-%02d-%02d/%04d%02d%02dT%02d%02d%02d.%03u"
	    "Z_%s" CODEC_NAME_SUFFIX,
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms, h);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

/* The number written in the n digits at s (checked by the caller). */
static int
codec_digits(const char *s, int n)
{
	int v = 0;

	while (n-- > 0)
		v = v * 10 + (*s++ - '0');
	return v;
}

/* The UTC time written in a checked name, or -1 if it is not a real date. */
static int64_t
codec_name_time(const char *name)
{
	struct tm tm = { 0 };
	time_t t;

	tm.tm_year = codec_digits(name, 4) - 1900;
	tm.tm_mon = codec_digits(name + 4, 2) - 1;
	tm.tm_mday = codec_digits(name + 6, 2);
	tm.tm_hour = codec_digits(name + 9, 2);
	tm.tm_min = codec_digits(name + 11, 2);
	tm.tm_sec = codec_digits(name + 13, 2);
	if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59)
		return -1;
	/* timegm normalizes Feb 30 into March: refuse what it moved. */
	t = timegm(&tm);
	if (t < 0 || tm.tm_mday != codec_digits(name + 6, 2))
		return -1;
	return t;
}

/*
 * Parse the last part of a name made by codec_epoch_relpath: writes the
 * start (to the millisecond) and the host (NUL-terminated, hostlen bytes
 * at most) only on success.  Returns 0, or -EINVAL for any other name
 * (temporary files included).
 */
int
codec_parse_name(
    const char *name, uint64_t *start_ns, char *host, size_t hostlen)
{
	static const char pat[] = CODEC_NAME_PATTERN;
	const size_t pre = sizeof(pat) - 1, suf = strlen(CODEC_NAME_SUFFIX);
	size_t i, nl, hl;
	uint64_t ms;
	int64_t t;

	for (i = 0; i < pre; i++) {
		if (pat[i] == 'D' ? name[i] < '0' || name[i] > '9'
				  : name[i] != pat[i])
			return -EINVAL;
	}
	nl = strlen(name);
	if (nl <= pre + suf || strcmp(name + nl - suf, CODEC_NAME_SUFFIX) != 0)
		return -EINVAL;
	hl = nl - pre - suf;
	if (hl >= hostlen)
		return -EINVAL;
	for (i = pre; i < pre + hl; i++)
		if (!codec_host_char((unsigned char)name[i]))
			return -EINVAL;
	ms = (uint64_t)codec_digits(name + 16, 3) * 1000000;
	if ((t = codec_name_time(name)) < 0 ||
	    (uint64_t)t > (UINT64_MAX - ms) / CODEC_NS)
		return -EINVAL;
	*start_ns = (uint64_t)t * CODEC_NS + ms;
	memcpy(host, name + pre, hl);
	host[hl] = '\0';
	return 0;
}
