/* SPDX-License-Identifier: MIT */
/*
 * Epochs from JSON through jansson (the reader that explains what is
 * wrong with a bad file), and the names of the store's files.  Scalar
 * members are described once in field tables that drive the writer
 * (codec_text.c) and both readers; a decoded epoch lives in one arena.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/hash.h>

#include "codec.h"

#define CODEC_NS 1000000000ull
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

/* Decoding state: the epoch, and the JSON path of the member being read. */
struct codec_dec {
	struct vitals_epoch *e; /* the arena everything goes into */
	char *err;
	size_t errlen;
	size_t plen;
	char path[128];
};

typedef int (*codec_dec_fn)(
    struct codec_dec *d, json_t *o, void *item, const void *arg);

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
	if ((s = epoch_intern_n(d->e, json_string_value(v), n)) == NULL)
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
	if ((f = epoch_alloc(d->e, n * sizeof(*f))) == NULL && n > 0)
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
		return codec_fail(
		    d, key, "expected %u names (one per frame)", n);
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
	names =
	    epoch_alloc(d->e, (s->nkstack + s->nustack) * sizeof(*names) + 1);
	if (names == NULL)
		return codec_nomem(d);
	memset(names, 0, (s->nkstack + s->nustack) * sizeof(*names));
	if (hk && (r = codec_syms_from(d, o, "ksyms", s->nkstack, names)) < 0)
		return r;
	if (hu &&
	    (r = codec_syms_from(
		 d, o, "usyms", s->nustack, names + s->nkstack)) < 0)
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
	hca = epoch_alloc(d->e, (size_t)v->hca_size * sizeof(*hca));
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

/*
 * o[key]: an array of items (objects if objects), each decoded by fn into
 * an arena array.
 */
static int
codec_items_from(struct codec_dec *d, json_t *o, const char *key, size_t size,
    codec_dec_fn fn, const void *arg, void **out, uint32_t *nout, int objects)
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
	if ((v = epoch_alloc(d->e, n * size)) == NULL && n > 0)
		return codec_nomem(d);
	for (i = 0; i < n; i++) {
		m = codec_enter(d, NULL, i);
		item = json_array_get(a, i);
		if (objects && !json_is_object(item))
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

/* o[key]: an array of objects, each decoded by fn into an arena array. */
static int
codec_array_from(struct codec_dec *d, json_t *o, const char *key, size_t size,
    codec_dec_fn fn, const void *arg, void **out, uint32_t *nout)
{
	return codec_items_from(d, o, key, size, fn, arg, out, nout, 1);
}

/* ---- the compact form (format 2) ---- */

/* Array a's integers into v[0..max): 0 with *n, or -EBADMSG. */
static int
codec_ints_from(
    struct codec_dec *d, json_t *a, int64_t *v, size_t max, size_t *n)
{
	size_t i;

	if (!json_is_array(a))
		return codec_fail(d, NULL, "expected an array");
	if ((*n = json_array_size(a)) > max)
		return codec_fail(d, NULL, "more than %zu numbers", max);
	for (i = 0; i < *n; i++) {
		if (!json_is_integer(json_array_get(a, i)))
			return codec_fail(d, NULL, "expected integers");
		v[i] = json_integer_value(json_array_get(a, i));
	}
	return 0;
}

/* A part's answer: its reason in err, at the path of the part. */
static int
codec_part(struct codec_dec *d, int r, const char *why)
{
	if (r == -ENOMEM)
		return codec_nomem(d);
	return r < 0 ? codec_fail(d, NULL, "%s", why) : 0;
}

/* One member of "strings". */
static int
codec_str_item(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	(void)arg;
	return codec_string_from(d, o, item, 0);
}

static int
codec_task_item(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	int64_t v[6];
	const char *why = NULL;
	size_t n;
	int r;

	if ((r = codec_ints_from(d, o, v, 6, &n)) < 0)
		return r;
	return codec_part(d, codec_task_make(arg, v, n, item, &why), why);
}

static int
codec_stack_item(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	int64_t v[CODEC_STACK_NUMS];
	const char *why = NULL;
	size_t n;
	int r;

	if ((r = codec_ints_from(d, o, v, CODEC_STACK_NUMS, &n)) < 0)
		return r;
	return codec_part(
	    d, codec_stack_make(d->e, arg, v, n, item, &why), why);
}

/* "strings", "tasks" and "stacks" into t. */
static int
codec_tables_from(struct codec_dec *d, json_t *j, struct codec_tables *t)
{
	void *s, *k, *st;
	int r;

	if ((r = codec_items_from(d, j, "strings", sizeof(char *),
		 codec_str_item, t, &s, &t->nstr, 0)) < 0)
		return r;
	t->str = s;
	if ((r = codec_items_from(d, j, "tasks", sizeof(struct codec_task),
		 codec_task_item, t, &k, &t->ntask, 0)) < 0 ||
	    (r = codec_items_from(d, j, "stacks", sizeof(struct codec_stack),
		 codec_stack_item, t, &st, &t->nstack, 0)) < 0)
		return r;
	t->task = k;
	t->stack = st;
	return 0;
}

/* The HCA as [gap, value, ...]. */
static int
codec_hca_gaps_from(
    struct codec_dec *d, json_t *o, struct vitals_vital_epoch *v)
{
	json_t *h, *g, *x;
	uint64_t *hca;
	uint64_t at = 0;
	size_t i, mark;

	if ((h = codec_get_array(d, o, "hca")) == NULL)
		return -EBADMSG;
	mark = codec_enter(d, "hca", 0);
	if (json_array_size(h) % 2 != 0)
		return codec_fail(d, NULL, "expected [gap, value, ...]");
	hca = epoch_alloc(d->e, (size_t)v->hca_size * sizeof(*hca));
	if (hca == NULL && v->hca_size > 0)
		return codec_nomem(d);
	for (i = 0; i < json_array_size(h); i += 2) {
		g = json_array_get(h, i);
		x = json_array_get(h, i + 1);
		if (!json_is_integer(g) || !json_is_integer(x))
			return codec_fail(d, NULL, "expected integers");
		if (json_integer_value(g) < 0 ||
		    (uint64_t)json_integer_value(g) >= v->hca_size - at)
			return codec_fail(d, NULL,
			    "a counter past hca_size (%u)", v->hca_size);
		at += (uint64_t)json_integer_value(g);
		hca[at++] = (uint64_t)json_integer_value(x);
	}
	codec_leave(d, mark);
	v->hca = hca;
	return 0;
}

/* The rows of "samples" of vital v. */
static int
codec_rows_from(struct codec_dec *d, json_t *o, struct vitals_vital_epoch *v,
    struct codec_tables *t, uint64_t start_ns)
{
	struct vitals_sample *s;
	int64_t row[CODEC_ROW_MAX];
	const char *why = NULL;
	size_t i, n, mark, m, k;
	json_t *a;
	int r;

	if ((a = codec_get_array(d, o, "samples")) == NULL)
		return -EBADMSG;
	mark = codec_enter(d, "samples", 0);
	if ((n = json_array_size(a)) > UINT32_MAX)
		return codec_fail(d, NULL, "too many entries");
	if ((s = epoch_alloc(d->e, n * sizeof(*s))) == NULL && n > 0)
		return codec_nomem(d);
	t->prev_ts = start_ns;
	for (i = 0; i < n; i++) {
		m = codec_enter(d, NULL, i);
		if ((r = codec_ints_from(d, json_array_get(a, i), row,
			 CODEC_ROW_MAX, &k)) < 0 ||
		    (r = codec_part(d,
			 codec_row_make(
			     t, v, s, (uint32_t)i, row, k, &s[i], &why),
			 why)) < 0)
			return r;
		codec_leave(d, m);
	}
	codec_leave(d, mark);
	v->samples = s;
	v->nsamples = (uint32_t)n;
	return 0;
}

/* A vital; arg: the compact form's tables, NULL in format 1. */
static int
codec_vital_from(struct codec_dec *d, json_t *o, void *item, const void *arg)
{
	struct codec_tables *t = (struct codec_tables *)(uintptr_t)arg;
	struct vitals_vital_epoch *v = item;
	void *samples;
	int r;

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
	if (t != NULL)
		return (r = codec_hca_gaps_from(d, o, v)) < 0
		    ? r
		    : codec_rows_from(d, o, v, t, d->e->start_ns);
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
	if ((name = epoch_alloc(d->e, n + 1)) == NULL)
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
	if ((m = epoch_alloc(d->e, n * sizeof(*m))) == NULL && n > 0)
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
			return codec_fail(
			    d, "modules", "module %u appears twice", m[i].id);
	e->modules = m;
	e->nmodules = n;
	return 0;
}

static int
codec_epoch_from(struct codec_dec *d, json_t *j, struct vitals_epoch *e)
{
	struct codec_tables t, *tp = NULL;
	json_t *f;
	void *vitals, *findings;
	int r;

	if (!json_is_object(j))
		return codec_fail(d, NULL, "expected an object");
	if ((f = json_object_get(j, "format")) == NULL)
		return codec_fail(d, "format", "missing");
	if (!json_is_integer(f) ||
	    (json_integer_value(f) != CODEC_FORMAT_FULL &&
		json_integer_value(f) != CODEC_FORMAT_COMPACT))
		return codec_fail(d, "format",
		    "unsupported (this reader knows formats %d and %d)",
		    CODEC_FORMAT_FULL, CODEC_FORMAT_COMPACT);
	memset(&t, 0, sizeof(t));
	if ((r = codec_fields_from_json(d, j, codec_epoch_fields, e)) < 0)
		return r;
	if (json_integer_value(f) == CODEC_FORMAT_COMPACT) {
		if ((r = codec_tables_from(d, j, &t)) < 0)
			return r;
		tp = &t;
	}
	if ((r = codec_array_from(d, j, "vitals",
		 sizeof(struct vitals_vital_epoch), codec_vital_from, tp,
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
 * (or epoch_free).  Returns 0 and sets *out; -EBADMSG with the JSON
 * path of the first bad member in err; -ENOMEM.
 */
int
codec_epoch_from_json(
    json_t *j, struct vitals_epoch **out, char *err, size_t errlen)
{
	struct codec_dec d = { .err = err, .errlen = errlen };
	int r;

	if ((d.e = epoch_new()) == NULL)
		return codec_nomem(&d);
	if ((r = codec_epoch_from(&d, j, d.e)) < 0) {
		epoch_free(d.e);
		return r;
	}
	epoch_seal(d.e);
	*out = d.e;
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

/* ---- the compact form's parts, for both readers ---- */

/* v as a uint32_t: 0, or -EBADMSG with why. */
static int
codec_u32_of(int64_t v, uint32_t *out, const char **why)
{
	if (v < 0 || v > UINT32_MAX) {
		*why = "a number out of range";
		return -EBADMSG;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A string index of t: 0, or -EBADMSG with why. */
static int
codec_str_of(
    const struct codec_tables *t, int64_t v, const char **out, const char **why)
{
	if (v < 0 || v >= t->nstr) {
		*why = "a string index out of range";
		return -EBADMSG;
	}
	*out = t->str[v];
	return 0;
}

int
codec_task_make(const struct codec_tables *t, const int64_t *v, size_t n,
    struct codec_task *out, const char **why)
{
	struct codec_task k;
	int r;

	if (n != 6) {
		*why = "a task is 6 numbers";
		return -EBADMSG;
	}
	if (v[1] < INT32_MIN || v[1] > INT32_MAX) {
		*why = "a tid out of range";
		return -EBADMSG;
	}
	if ((r = codec_u32_of(v[0], &k.pid, why)) < 0 ||
	    (r = codec_u32_of(v[2], &k.uid, why)) < 0 ||
	    (r = codec_u32_of(v[3], &k.exe_id, why)) < 0 ||
	    (r = codec_str_of(t, v[4], &k.exe, why)) < 0 ||
	    (r = codec_str_of(t, v[5], &k.comm, why)) < 0)
		return r;
	k.tid = (uint32_t)((int64_t)k.pid + v[1]);
	*out = k;
	return 0;
}

int
codec_stack_make(struct vitals_epoch *e, const struct codec_tables *t,
    const int64_t *v, size_t n, struct codec_stack *out, const char **why)
{
	uint64_t *f = NULL, prev = 0;
	const char **names = NULL;
	size_t m, i;
	int named, r;

	*why = "a stack does not hold its frames (and names)";
	if (n < 1 || v[0] < 0 || v[0] > 2 * VITALS_STACK_MAX + 1)
		return -EBADMSG;
	named = (int)(v[0] & 1);
	m = named ? (n - 1) / 2 : n - 1;
	if ((named && ((n - 1) % 2 != 0 || m == 0)) ||
	    (size_t)(v[0] >> 1) > m ||
	    m - (size_t)(v[0] >> 1) > VITALS_STACK_MAX)
		return -EBADMSG;
	if (m > 0 && (f = epoch_alloc(e, m * sizeof(*f))) == NULL)
		return -ENOMEM;
	/* Each side's first frame is from 0. */
	for (i = 0; i < m; i++)
		f[i] = prev =
		    (i == (size_t)(v[0] >> 1) ? 0 : prev) + (uint64_t)v[1 + i];
	if (named && (names = epoch_alloc(e, m * sizeof(*names))) == NULL)
		return -ENOMEM;
	for (i = 0; named && i < m; i++)
		if ((r = codec_str_of(t, v[1 + m + i], &names[i], why)) < 0)
			return r;
	out->nk = (uint32_t)(v[0] >> 1);
	out->nu = (uint32_t)(m - out->nk);
	out->frames = f;
	out->names = names;
	return 0;
}

/* The entry a row names (0: the next not named yet, else index + 1). */
static int
codec_ref_of(
    int64_t v, uint32_t n, uint32_t *next, uint32_t *out, const char **why)
{
	if (v == 0 && *next < n) {
		*out = (*next)++;
		return 0;
	}
	if (v > 0 && v <= *next) {
		*out = (uint32_t)(v - 1);
		return 0;
	}
	*why = "a row names a task or stack that is not in the table";
	return -EBADMSG;
}

/* A full row's members after its time (CODEC_ROW_MAX numbers at most). */
static int
codec_row_full(struct codec_tables *t, const struct vitals_vital_epoch *v,
    const int64_t *row, size_t n, struct vitals_sample *s, const char **why)
{
	const struct codec_task *k;
	const struct codec_stack *st;
	uint32_t ti, si, x, hashed = 0;
	int r;

	if ((r = codec_u32_of(row[4], &x, why)) < 0 ||
	    (r = codec_u32_of(row[5], &s->op, why)) < 0 ||
	    (r = codec_ref_of(row[6], t->ntask, &t->next_task, &ti, why)) < 0 ||
	    (r = codec_ref_of(row[7], t->nstack, &t->next_stack, &si, why)) < 0)
		return r;
	k = &t->task[ti];
	st = &t->stack[si];
	s->label = (uint64_t)row[1];
	s->weight = (uint64_t)row[2];
	s->count = (uint64_t)row[3] + s->weight;
	s->pid = k->pid;
	s->tid = k->tid;
	s->uid = k->uid;
	s->exe_id = k->exe_id;
	s->exe = k->exe;
	s->comm = k->comm;
	if (v->hca_size > 0)
		hashed =
		    (uint32_t)vitals_hash_label(s->label, s->exe_id, s->uid) &
		    (v->hca_size - 1);
	s->slot = x ^ hashed;
	s->nkstack = st->nk;
	s->nustack = st->nu;
	s->kstack = st->nk > 0 ? st->frames : NULL;
	s->ustack = st->nu > 0 ? st->frames + st->nk : NULL;
	s->ksyms = st->names;
	memcpy(s->args, row + 8, (n - 8) * sizeof(*row));
	return 0;
}

int
codec_row_make(struct codec_tables *t, const struct vitals_vital_epoch *v,
    const struct vitals_sample *samples, uint32_t i, const int64_t *row,
    size_t n, struct vitals_sample *out, const char **why)
{
	struct vitals_sample s;
	int r;

	memset(&s, 0, sizeof(s));
	if (n == 3 || n == 4) {
		if (row[1] < 1 || row[1] > i) {
			*why = "a short row names no sample before it";
			return -EBADMSG;
		}
		s = samples[i - row[1]];
		s.count += (uint64_t)row[2];
		if (n == 4)
			s.weight = (uint64_t)row[3];
	} else if (n < 8 || n > CODEC_ROW_MAX) {
		*why = "a sample row is 3, 4 or 8 to 12 numbers";
		return -EBADMSG;
	} else if ((r = codec_row_full(t, v, row, n, &s, why)) < 0)
		return r;
	if (v->hca_size > 0 && s.slot >= v->hca_size) {
		*why = "a slot out of range (hca_size)";
		return -EBADMSG;
	}
	s.ts_ns = t->prev_ts += (uint64_t)row[0];
	*out = s;
	return 0;
}

/* ---- the disk budget's measure of counters ---- */

uint64_t
codec_hca_bytes(const uint64_t *hca, uint32_t m, uint32_t to)
{
	uint64_t n = 0, x, digits;
	uint32_t i, j;

	for (i = 0; hca != NULL && i < to; i++) {
		for (j = i, x = 0; j < m; j += to)
			x += hca[j];
		if (x == 0)
			continue;
		for (digits = 1; x >= 10; x /= 10)
			digits++;
		n += 1 + digits / 2;
	}
	return n;
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
