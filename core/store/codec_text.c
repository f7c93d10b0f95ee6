/* SPDX-License-Identifier: MIT */
/*
 * Epochs to and from their JSON text without a JSON tree: the one writer
 * of epoch files, the cache and the API, streaming, and a fast reader of
 * what it writes for range queries (thousands of files).  What is outside
 * that form is left to codec.c's jansson reader: the reader declines.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/hash.h>

#include "codec.h"

/* The reader's answer to anything it leaves to jansson. */
#define CT_DECLINE (-ENOTSUP)
/* Longest number token read (a double needs at most 24 characters). */
#define CT_NUM_MAX 64

/* ---- reading: tokens ---- */

struct ct_dec {
	const char *p, *end;
	struct vitals_epoch *e; /* the arena everything goes into */
	uint32_t hca_size; /* of the vital being read */
	int64_t format; /* 0 until "format" is read */
	struct codec_tables *tabs; /* the compact form's (tabs_mem), or NULL */
	struct codec_tables tabs_mem;
};

/* Kinds of scalar values. */
enum { CT_NULL, CT_INT, CT_REAL, CT_STR };

/* A scalar just read. */
struct ct_val {
	int type;
	int64_t i; /* CT_INT */
	double d; /* CT_REAL */
	const char *s; /* CT_STR: NUL-terminated, in the arena */
};

/* Members of an object and items of an array, read by callbacks. */
typedef int (*ct_member_fn)(
    struct ct_dec *d, const char *key, size_t klen, void *arg);
typedef int (*ct_item_fn)(struct ct_dec *d, void *arg);

static void
ct_ws(struct ct_dec *d)
{
	while (d->p < d->end &&
	    (*d->p == ' ' || *d->p == '\n' || *d->p == '\t' || *d->p == '\r'))
		d->p++;
}

/* Skip white space, then c; declines on anything else. */
static int
ct_expect(struct ct_dec *d, char c)
{
	ct_ws(d);
	if (d->p == d->end || *d->p != c)
		return CT_DECLINE;
	d->p++;
	return 0;
}

/*
 * The string at d->p (its opening quote): *s and *n get its raw bytes,
 * *esc whether they hold escapes.  Control and non-ASCII bytes, and \u
 * escapes, are left to jansson (which checks UTF-8).
 */
static int
ct_raw_string(struct ct_dec *d, const char **s, size_t *n, int *esc)
{
	const char *q = d->p + 1;
	unsigned char c;

	*esc = 0;
	for (; q < d->end; q++) {
		c = (unsigned char)*q;
		if (c == '"')
			break;
		if (c < 0x20 || c >= 0x80)
			return CT_DECLINE;
		if (c == '\\') {
			if (++q == d->end || *q == 'u')
				return CT_DECLINE;
			*esc = 1;
		}
	}
	if (q == d->end)
		return CT_DECLINE;
	*s = d->p + 1;
	*n = (size_t)(q - *s);
	d->p = q + 1;
	return 0;
}

/* The character an escape \c stands for, or -1. */
static int
ct_unescape(char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return -1;
	}
}

/* A string value, copied NUL-terminated into the arena. */
static int
ct_string(struct ct_dec *d, const char **out)
{
	const char *s;
	size_t n, i, k = 0;
	char *copy;
	int esc, r, c;

	if ((r = ct_raw_string(d, &s, &n, &esc)) != 0)
		return r;
	if ((copy = epoch_alloc(d->e, n + 1)) == NULL)
		return -ENOMEM;
	if (!esc) {
		memcpy(copy, s, n);
		*out = copy;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (s[i] != '\\') {
			copy[k++] = s[i];
			continue;
		}
		if ((c = ct_unescape(s[++i])) < 0)
			return CT_DECLINE;
		copy[k++] = (char)c;
	}
	*out = copy;
	return 0;
}

/* The C locale, for strtod_l; (locale_t)0 if it cannot be made. */
static locale_t ct_c_locale;
static pthread_once_t ct_locale_once = PTHREAD_ONCE_INIT;

static void
ct_locale_init(void)
{
	ct_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* A real in tok (NUL-terminated): jansson reads it as strtod does. */
static int
ct_real(const char *tok, double *out)
{
	char *end;

	pthread_once(&ct_locale_once, ct_locale_init);
	if (ct_c_locale == (locale_t)0)
		return CT_DECLINE;
	errno = 0;
	*out = strtod_l(tok, &end, ct_c_locale);
	/* jansson refuses an overflow ("real number overflow"). */
	if (*end != '\0' ||
	    ((*out == HUGE_VAL || *out == -HUGE_VAL) && errno == ERANGE))
		return CT_DECLINE;
	return 0;
}

/* The digits at d->p; returns how many. */
static size_t
ct_digits(struct ct_dec *d)
{
	const char *q = d->p;

	while (d->p < d->end && (unsigned char)(*d->p - '0') < 10)
		d->p++;
	return (size_t)(d->p - q);
}

/*
 * An integer of the digits s[0..n) (sign at neg) that fits int64, as
 * jansson's strtoll would read it; declines beyond.  Up to 18 digits
 * cannot overflow.
 */
static int
ct_int(const char *s, size_t n, int neg, int64_t *out)
{
	uint64_t m = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i >= 18 && m > (lim - (uint64_t)(s[i] - '0')) / 10)
			return CT_DECLINE;
		m = m * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

/* The real at start..d->p, for jansson's strtod. */
static int
ct_real_token(struct ct_dec *d, const char *start, struct ct_val *v)
{
	char tok[CT_NUM_MAX + 1];
	size_t len = (size_t)(d->p - start);

	if (len > CT_NUM_MAX)
		return CT_DECLINE;
	memcpy(tok, start, len);
	tok[len] = '\0';
	v->type = CT_REAL;
	return ct_real(tok, &v->d);
}

/* A JSON number at d->p: an integer unless it has a fraction or exponent. */
static int
ct_number(struct ct_dec *d, struct ct_val *v)
{
	const char *start = d->p, *digits;
	size_t n;
	int neg = 0, real = 0;

	if (*d->p == '-') {
		neg = 1;
		d->p++;
	}
	digits = d->p;
	if ((n = ct_digits(d)) == 0 || (n > 1 && digits[0] == '0'))
		return CT_DECLINE;
	if (d->p < d->end && *d->p == '.') {
		d->p++;
		real = 1;
		if (ct_digits(d) == 0)
			return CT_DECLINE;
	}
	if (d->p < d->end && (*d->p == 'e' || *d->p == 'E')) {
		d->p++;
		real = 1;
		if (d->p < d->end && (*d->p == '+' || *d->p == '-'))
			d->p++;
		if (ct_digits(d) == 0)
			return CT_DECLINE;
	}
	if (real)
		return ct_real_token(d, start, v);
	v->type = CT_INT;
	return ct_int(digits, n, neg, &v->i);
}

/* A scalar: a string, a number or null (true and false are not used). */
static int
ct_scalar(struct ct_dec *d, struct ct_val *v)
{
	ct_ws(d);
	if (d->p == d->end)
		return CT_DECLINE;
	if (*d->p == '"') {
		v->type = CT_STR;
		return ct_string(d, &v->s);
	}
	if (*d->p == '-' || (*d->p >= '0' && *d->p <= '9'))
		return ct_number(d, v);
	if (d->end - d->p >= 4 && memcmp(d->p, "null", 4) == 0) {
		d->p += 4;
		v->type = CT_NULL;
		return 0;
	}
	return CT_DECLINE;
}

/* An integer value. */
static int
ct_integer(struct ct_dec *d, int64_t *out)
{
	struct ct_val v;
	int r;

	if ((r = ct_scalar(d, &v)) != 0)
		return r;
	if (v.type != CT_INT)
		return CT_DECLINE;
	*out = v.i;
	return 0;
}

/* An object, each member's value read by fn (keys hold no escapes). */
static int
ct_object(struct ct_dec *d, ct_member_fn fn, void *arg)
{
	const char *key;
	size_t klen;
	int r, esc;

	if ((r = ct_expect(d, '{')) != 0)
		return r;
	ct_ws(d);
	if (d->p < d->end && *d->p == '}') {
		d->p++;
		return 0;
	}
	for (;;) {
		ct_ws(d);
		if (d->p == d->end || *d->p != '"')
			return CT_DECLINE;
		if ((r = ct_raw_string(d, &key, &klen, &esc)) != 0)
			return r;
		if (esc || (r = ct_expect(d, ':')) != 0)
			return CT_DECLINE;
		if ((r = fn(d, key, klen, arg)) != 0)
			return r;
		ct_ws(d);
		if (d->p < d->end && *d->p == ',') {
			d->p++;
			continue;
		}
		return ct_expect(d, '}');
	}
}

/* An array, each item read by fn. */
static int
ct_array(struct ct_dec *d, ct_item_fn fn, void *arg)
{
	int r;

	if ((r = ct_expect(d, '[')) != 0)
		return r;
	ct_ws(d);
	if (d->p < d->end && *d->p == ']') {
		d->p++;
		return 0;
	}
	for (;;) {
		if ((r = fn(d, arg)) != 0)
			return r;
		ct_ws(d);
		if (d->p < d->end && *d->p == ',') {
			d->p++;
			continue;
		}
		return ct_expect(d, ']');
	}
}

/* ---- reading: growing arrays ---- */

/* Items of an array being read, before they go to the arena. */
struct ct_vec {
	char *v;
	size_t n, cap, size;
};

/*
 * Sort vec's items with cmp; CT_DECLINE if two compare equal (a repeated
 * key is jansson's to refuse, with its message), else 0.
 */
static int
ct_vec_sort_unique(struct ct_vec *vec, int (*cmp)(const void *, const void *))
{
	size_t i;

	if (vec->n < 2)
		return 0;
	qsort(vec->v, vec->n, vec->size, cmp);
	for (i = 1; i < vec->n; i++)
		if (cmp(vec->v + (i - 1) * vec->size, vec->v + i * vec->size) ==
		    0)
			return CT_DECLINE;
	return 0;
}

/* A new zeroed item at the end of vec; NULL when out of memory. */
static void *
ct_vec_push(struct ct_vec *vec)
{
	size_t cap;
	char *p;

	if (vec->n == vec->cap) {
		cap = vec->cap ? vec->cap * 2 : 16;
		if ((p = realloc(vec->v, cap * vec->size)) == NULL)
			return NULL;
		vec->v = p;
		vec->cap = cap;
	}
	memset(vec->v + vec->n * vec->size, 0, vec->size);
	return vec->v + vec->n++ * vec->size;
}

/*
 * vec's items copied to the arena (NULL when there are none, as codec.c
 * gives); *n gets their count.
 */
static int
ct_vec_keep(struct ct_dec *d, const struct ct_vec *vec, void **out, uint32_t *n)
{
	void *p = NULL;

	if (vec->n > UINT32_MAX)
		return CT_DECLINE;
	if (vec->n > 0 && (p = epoch_alloc(d->e, vec->n * vec->size)) == NULL)
		return -ENOMEM;
	if (p != NULL)
		memcpy(p, vec->v, vec->n * vec->size);
	*out = p;
	*n = (uint32_t)vec->n;
	return 0;
}

/* ---- reading: the members of the field tables ---- */

/*
 * Whether key[0..klen) is s.  A loop beats strncmp on keys this short; a
 * key read holds no NUL, so s's end is a mismatch.
 */
static int
ct_is(const char *key, size_t klen, const char *s)
{
	size_t i;

	for (i = 0; i < klen; i++)
		if (key[i] != s[i])
			return 0;
	return s[klen] == '\0';
}

/* The index in f[from..to) of key, or -1. */
static int
ct_find(
    const struct codec_field *f, int from, int to, const char *key, size_t klen)
{
	for (; from < to && f[from].key != NULL; from++)
		if (ct_is(key, klen, f[from].key))
			return from;
	return -1;
}

/* The index in f of key, trying from *hint first (members come in order). */
static int
ct_lookup(const struct codec_field *f, const char *key, size_t klen, int *hint)
{
	int i = ct_find(f, *hint, INT_MAX, key, klen);

	if (i < 0)
		i = ct_find(f, 0, *hint, key, klen);
	if (i >= 0)
		*hint = i + 1;
	return i;
}

/* A member of a field table into base. */
static int
ct_field(struct ct_dec *d, const struct codec_field *f, void *base)
{
	char *p = (char *)base + f->off;
	struct ct_val v;
	int r;

	if ((r = ct_scalar(d, &v)) != 0)
		return r;
	switch (f->type) {
	case CODEC_U64:
		if (v.type != CT_INT)
			return CT_DECLINE;
		*(uint64_t *)(void *)p = (uint64_t)v.i; /* see codec_u64 */
		return 0;
	case CODEC_U32:
		if (v.type != CT_INT || v.i < 0 || v.i > UINT32_MAX)
			return CT_DECLINE;
		*(uint32_t *)(void *)p = (uint32_t)v.i;
		return 0;
	case CODEC_DBL:
		if (v.type == CT_STR)
			return CT_DECLINE;
		*(double *)(void *)p = v.type == CT_NULL ? NAN
		    : v.type == CT_INT			 ? (double)v.i
							 : v.d;
		return 0;
	default:
		if (v.type != CT_STR &&
		    !(v.type == CT_NULL && f->type == CODEC_STRN))
			return CT_DECLINE;
		*(const char **)(void *)p = v.type == CT_STR ? v.s : NULL;
		return 0;
	}
}

/* An object of table fields (and extra keys): its reading state. */
struct ct_obj {
	const struct codec_field *f;
	void *base;
	int hint;
	uint32_t seen; /* bits of the members read: table, then extras */
	int nfields;
};

static void
ct_obj_init(struct ct_obj *o, const struct codec_field *f, void *base)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->base = base;
	while (f[o->nfields].key != NULL)
		o->nfields++;
}

/* Mark bit i seen; a repeated key is jansson's to refuse. */
static int
ct_seen(struct ct_obj *o, int i)
{
	if (o->seen & (1u << i))
		return CT_DECLINE;
	o->seen |= 1u << i;
	return 0;
}

/*
 * Read member key if it is one of the table's: 1 if it was, 0 if it is
 * not a table member, or an error.
 */
static int
ct_obj_field(struct ct_dec *d, struct ct_obj *o, const char *key, size_t klen)
{
	int i = ct_lookup(o->f, key, klen, &o->hint), r;

	if (i < 0)
		return 0;
	if ((r = ct_seen(o, i)) != 0 ||
	    (r = ct_field(d, &o->f[i], o->base)) != 0)
		return r;
	return 1;
}

/* Whether every required table member (and extras in want) was read. */
static int
ct_obj_done(const struct ct_obj *o, uint32_t want)
{
	int i;

	for (i = 0; i < o->nfields; i++)
		if (o->f[i].type != CODEC_STRN && !(o->seen & (1u << i)))
			return CT_DECLINE;
	return (o->seen & want) == want ? 0 : CT_DECLINE;
}

/* The bit of the k-th extra key of an object read with table o. */
#define CT_EXTRA(o, k) (1u << ((o)->nfields + (k)))

/* ---- reading: samples ---- */

/* The sample being read. */
struct ct_sample {
	struct ct_obj o;
	struct vitals_sample *s;
	const char **names; /* ksyms, once one of ksyms/usyms is read */
	uint32_t want, got; /* items of the list being read: most, so far */
	uint32_t at; /* where names of the list being read go in names */
	uint64_t list[VITALS_STACK_MAX]; /* numbers of the list being read */
};

enum { CT_S_KSTACK, CT_S_USTACK, CT_S_ARGS, CT_S_KSYMS, CT_S_USYMS };

static int
ct_u64_item(struct ct_dec *d, void *arg)
{
	struct ct_sample *cs = arg;
	int64_t i;
	int r;

	if (cs->got == cs->want)
		return CT_DECLINE;
	if ((r = ct_integer(d, &i)) != 0)
		return r;
	cs->list[cs->got++] = (uint64_t)i;
	return 0;
}

/* A list of at most max numbers into the arena (NULL when empty). */
static int
ct_u64s(struct ct_dec *d, struct ct_sample *cs, uint32_t max,
    const uint64_t **out, uint32_t *n)
{
	uint64_t *v = NULL;
	int r;

	cs->want = max;
	cs->got = 0;
	if ((r = ct_array(d, ct_u64_item, cs)) != 0)
		return r;
	if (cs->got > 0 &&
	    (v = epoch_alloc(d->e, cs->got * sizeof(*v))) == NULL)
		return -ENOMEM;
	if (v != NULL)
		memcpy(v, cs->list, cs->got * sizeof(*v));
	*out = v;
	*n = cs->got;
	return 0;
}

static int
ct_name_item(struct ct_dec *d, void *arg)
{
	struct ct_sample *cs = arg;
	struct ct_val v;
	int r;

	if (cs->got == cs->want)
		return CT_DECLINE;
	if ((r = ct_scalar(d, &v)) != 0)
		return r;
	if (v.type != CT_STR)
		return CT_DECLINE;
	cs->names[cs->at + cs->got++] = v.s;
	return 0;
}

/* "ksyms" (user 0) or "usyms" (user 1): one name per frame. */
static int
ct_syms(struct ct_dec *d, struct ct_sample *cs, int user)
{
	struct vitals_sample *s = cs->s;
	size_t n = (size_t)s->nkstack + s->nustack;
	int r;

	/* The names array is sized by both stacks, read before. */
	if (!(cs->o.seen & CT_EXTRA(&cs->o, CT_S_KSTACK)) ||
	    !(cs->o.seen & CT_EXTRA(&cs->o, CT_S_USTACK)))
		return CT_DECLINE;
	if (cs->names == NULL) {
		/* + 1: empty stacks still give a non-NULL array. */
		if ((cs->names = epoch_alloc(
			 d->e, n * sizeof(*cs->names) + 1)) == NULL)
			return -ENOMEM;
		s->ksyms = cs->names;
	}
	cs->want = user ? s->nustack : s->nkstack;
	cs->got = 0;
	cs->at = user ? s->nkstack : 0;
	if ((r = ct_array(d, ct_name_item, cs)) != 0)
		return r;
	return cs->got == cs->want ? 0 : CT_DECLINE;
}

static int
ct_sample_extra(struct ct_dec *d, struct ct_sample *cs, int k)
{
	struct vitals_sample *s = cs->s;
	int r;

	if ((r = ct_seen(&cs->o, cs->o.nfields + k)) != 0)
		return r;
	switch (k) {
	case CT_S_KSTACK:
		return ct_u64s(
		    d, cs, VITALS_STACK_MAX, &s->kstack, &s->nkstack);
	case CT_S_USTACK:
		return ct_u64s(
		    d, cs, VITALS_STACK_MAX, &s->ustack, &s->nustack);
	case CT_S_ARGS:
		cs->want = VITALS_NARGS;
		cs->got = 0;
		if ((r = ct_array(d, ct_u64_item, cs)) != 0)
			return r;
		if (cs->got != VITALS_NARGS)
			return CT_DECLINE;
		memcpy(s->args, cs->list, sizeof(s->args));
		return 0;
	default:
		return ct_syms(d, cs, k == CT_S_USYMS);
	}
}

static int
ct_sample_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	static const char *const extra[] = { "kstack", "ustack", "args",
		"ksyms", "usyms" };
	struct ct_sample *cs = arg;
	int r, k;

	if ((r = ct_obj_field(d, &cs->o, key, klen)) != 0)
		return r < 0 ? r : 0;
	for (k = 0; k < 5; k++)
		if (ct_is(key, klen, extra[k]))
			return ct_sample_extra(d, cs, k);
	return CT_DECLINE;
}

static int
ct_sample_item(struct ct_dec *d, void *arg)
{
	struct ct_vec *vec = arg;
	struct ct_sample cs;
	int r;

	memset(&cs, 0, offsetof(struct ct_sample, list));
	if ((cs.s = ct_vec_push(vec)) == NULL)
		return -ENOMEM;
	ct_obj_init(&cs.o, codec_sample_fields, cs.s);
	if ((r = ct_object(d, ct_sample_member, &cs)) != 0 ||
	    (r = ct_obj_done(&cs.o,
		 CT_EXTRA(&cs.o, CT_S_KSTACK) | CT_EXTRA(&cs.o, CT_S_USTACK) |
		     CT_EXTRA(&cs.o, CT_S_ARGS))) != 0)
		return r;
	if (d->hca_size > 0 && cs.s->slot >= d->hca_size)
		return CT_DECLINE;
	return 0;
}

/* ---- reading: vitals ---- */

/* The vital being read. */
struct ct_vital {
	struct ct_obj o;
	struct vitals_vital_epoch *v;
	struct ct_vec *samples; /* reused from vital to vital */
	uint64_t *hca;
	int64_t prev; /* last index of the sparse HCA */
	uint32_t hseen; /* members of "hca" read */
};

enum { CT_V_HCA, CT_V_SAMPLES };
enum { CT_H_N, CT_H_NZ };

/* Whether table member key was read into o. */
static int
ct_obj_has(const struct ct_obj *o, const char *key)
{
	int i = ct_find(o->f, 0, o->nfields, key, strlen(key));

	return i >= 0 && (o->seen & (1u << i));
}

static int
ct_pair_item(struct ct_dec *d, void *arg)
{
	struct ct_vital *cv = arg;
	int64_t idx, val;
	int r;

	if ((r = ct_expect(d, '[')) != 0 || (r = ct_integer(d, &idx)) != 0 ||
	    (r = ct_expect(d, ',')) != 0 || (r = ct_integer(d, &val)) != 0 ||
	    (r = ct_expect(d, ']')) != 0)
		return r;
	if (idx < 0 || idx >= cv->v->hca_size || idx <= cv->prev)
		return CT_DECLINE;
	cv->hca[idx] = (uint64_t)val; /* see codec_u64 */
	cv->prev = idx;
	return 0;
}

/* The sparse HCA {"n": hca_size, "nz": [[index, value], ...]}. */
static int
ct_hca_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	struct ct_vital *cv = arg;
	int64_t n;
	int r,
	    k = ct_is(key, klen, "n") ? CT_H_N
	    : ct_is(key, klen, "nz")  ? CT_H_NZ
				      : -1;

	if (k < 0 || (cv->hseen & (1u << k)))
		return CT_DECLINE;
	cv->hseen |= 1u << k;
	if (k == CT_H_NZ)
		return ct_array(d, ct_pair_item, cv);
	if ((r = ct_integer(d, &n)) != 0)
		return r;
	return n == cv->v->hca_size ? 0 : CT_DECLINE;
}

/* The vital's HCA, zeroed in the arena, once hca_size was read. */
static int
ct_hca_alloc(struct ct_dec *d, struct ct_vital *cv)
{
	uint32_t m = cv->v->hca_size;

	/* hca_size comes first: it sizes the HCA and bounds its indexes. */
	if (!ct_obj_has(&cv->o, "hca_size") || (m & (m - 1)) != 0 ||
	    m > CODEC_HCA_MAX)
		return CT_DECLINE;
	if (m > 0 &&
	    (cv->hca = epoch_alloc(d->e, (size_t)m * sizeof(*cv->hca))) == NULL)
		return -ENOMEM;
	return 0;
}

static int
ct_hca(struct ct_dec *d, struct ct_vital *cv)
{
	int r;

	if ((r = ct_hca_alloc(d, cv)) != 0)
		return r;
	cv->prev = -1;
	if ((r = ct_object(d, ct_hca_member, cv)) != 0)
		return r;
	if (cv->hseen != (1u << CT_H_N | 1u << CT_H_NZ))
		return CT_DECLINE;
	cv->v->hca = cv->hca;
	return 0;
}

/* ---- reading: the compact form ---- */

/* An array of at most max integers into v; *n gets how many. */
struct ct_ints {
	int64_t *v;
	size_t n, max;
};

static int
ct_int_item(struct ct_dec *d, void *arg)
{
	struct ct_ints *a = arg;

	if (a->n == a->max)
		return CT_DECLINE;
	return ct_integer(d, &a->v[a->n++]);
}

static int
ct_ints(struct ct_dec *d, int64_t *v, size_t max, size_t *n)
{
	struct ct_ints a = { v, 0, max };
	int r;

	if ((r = ct_array(d, ct_int_item, &a)) != 0)
		return r;
	*n = a.n;
	return 0;
}

/* A part's answer: what jansson's reader is to explain is declined. */
static int
ct_part(int r)
{
	return r == -EBADMSG ? CT_DECLINE : r;
}

static int
ct_str_item(struct ct_dec *d, void *arg)
{
	const char **s;
	struct ct_val v;
	int r;

	if ((r = ct_scalar(d, &v)) != 0)
		return r;
	if (v.type != CT_STR)
		return CT_DECLINE;
	if ((s = ct_vec_push(arg)) == NULL)
		return -ENOMEM;
	*s = v.s;
	return 0;
}

static int
ct_task_item(struct ct_dec *d, void *arg)
{
	struct codec_task *k;
	const char *why;
	int64_t v[6];
	size_t n;
	int r;

	if ((r = ct_ints(d, v, 6, &n)) != 0)
		return r;
	if ((k = ct_vec_push(arg)) == NULL)
		return -ENOMEM;
	return ct_part(codec_task_make(d->tabs, v, n, k, &why));
}

static int
ct_stack_item(struct ct_dec *d, void *arg)
{
	int64_t v[CODEC_STACK_NUMS];
	struct codec_stack *k;
	const char *why;
	size_t n;
	int r;

	if ((r = ct_ints(d, v, CODEC_STACK_NUMS, &n)) != 0)
		return r;
	if ((k = ct_vec_push(arg)) == NULL)
		return -ENOMEM;
	return ct_part(codec_stack_make(d->e, d->tabs, v, n, k, &why));
}

/*
 * Table k of the compact form ("strings", "tasks", "stacks", in that
 * order), each item of size bytes read by fn, into the arena and
 * *out, *n.
 */
static int
ct_table(struct ct_dec *d, ct_item_fn fn, size_t size, void **out, uint32_t *n)
{
	struct ct_vec v = { NULL, 0, 0, size };
	int r;

	if ((r = ct_array(d, fn, &v)) == 0)
		r = ct_vec_keep(d, &v, out, n);
	free(v.v);
	return r;
}

/* One number of the HCA's [gap, value, ...]. */
static int
ct_gap_item(struct ct_dec *d, void *arg)
{
	struct ct_vital *cv = arg;
	int64_t x;
	int r;

	if ((r = ct_integer(d, &x)) != 0)
		return r;
	if ((cv->hseen ^= 1) == 0) {
		cv->hca[cv->prev++] = (uint64_t)x;
		return 0;
	}
	if (x < 0 || (uint64_t)x >= cv->v->hca_size - (uint64_t)cv->prev)
		return CT_DECLINE;
	cv->prev += x;
	return 0;
}

/* The HCA of the compact form: [gap, value, ...]. */
static int
ct_hca_gaps(struct ct_dec *d, struct ct_vital *cv)
{
	int r;

	if ((r = ct_hca_alloc(d, cv)) != 0)
		return r;
	cv->prev = 0;
	cv->hseen = 0;
	if ((r = ct_array(d, ct_gap_item, cv)) != 0)
		return r;
	if (cv->hseen != 0)
		return CT_DECLINE;
	cv->v->hca = cv->hca;
	return 0;
}

/* A sample row of the compact form. */
static int
ct_row_item(struct ct_dec *d, void *arg)
{
	struct ct_vital *cv = arg;
	struct vitals_sample s, *p;
	int64_t row[CODEC_ROW_MAX];
	const char *why;
	size_t n;
	int r;

	if ((r = ct_ints(d, row, CODEC_ROW_MAX, &n)) != 0)
		return r;
	if (cv->samples->n >= UINT32_MAX)
		return CT_DECLINE;
	r = codec_row_make(d->tabs, cv->v, (void *)cv->samples->v,
	    (uint32_t)cv->samples->n, row, n, &s, &why);
	if (r != 0)
		return ct_part(r);
	if ((p = ct_vec_push(cv->samples)) == NULL)
		return -ENOMEM;
	*p = s;
	return 0;
}

static int
ct_vital_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	struct ct_vital *cv = arg;
	void *samples;
	int r;

	if ((r = ct_obj_field(d, &cv->o, key, klen)) != 0)
		return r < 0 ? r : 0;
	if (ct_is(key, klen, "hca"))
		return (r = ct_seen(&cv->o, cv->o.nfields + CT_V_HCA)) != 0 ? r
		    : d->tabs != NULL ? ct_hca_gaps(d, cv)
				      : ct_hca(d, cv);
	if (!ct_is(key, klen, "samples") ||
	    (r = ct_seen(&cv->o, cv->o.nfields + CT_V_SAMPLES)) != 0 ||
	    !ct_obj_has(&cv->o, "hca_size"))
		return CT_DECLINE;
	d->hca_size = cv->v->hca_size;
	cv->samples->n = 0;
	if (d->tabs != NULL)
		d->tabs->prev_ts = d->e->start_ns;
	if ((r = d->tabs != NULL
		    ? ct_array(d, ct_row_item, cv)
		    : ct_array(d, ct_sample_item, cv->samples)) != 0 ||
	    (r = ct_vec_keep(d, cv->samples, &samples, &cv->v->nsamples)) != 0)
		return r;
	cv->v->samples = samples;
	return 0;
}

static int
ct_vital_item(struct ct_dec *d, void *arg)
{
	struct ct_vec **vecs = arg; /* vitals, samples */
	struct ct_vital cv;
	int r;

	memset(&cv, 0, sizeof(cv));
	if ((cv.v = ct_vec_push(vecs[0])) == NULL)
		return -ENOMEM;
	cv.samples = vecs[1];
	ct_obj_init(&cv.o, codec_vital_fields, cv.v);
	if ((r = ct_object(d, ct_vital_member, &cv)) != 0 ||
	    (r = ct_obj_done(&cv.o,
		 CT_EXTRA(&cv.o, CT_V_HCA) | CT_EXTRA(&cv.o, CT_V_SAMPLES))) !=
		0)
		return r;
	return cv.v->name[0] != '\0' ? 0 : CT_DECLINE;
}

static int
ct_vital_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vitals_vital_epoch *)a)->name,
	    ((const struct vitals_vital_epoch *)b)->name);
}

static int
ct_vitals(struct ct_dec *d, struct vitals_epoch *e)
{
	struct ct_vec v = { NULL, 0, 0, sizeof(struct vitals_vital_epoch) };
	struct ct_vec s = { NULL, 0, 0, sizeof(struct vitals_sample) };
	struct ct_vec *vecs[2] = { &v, &s };
	void *out;
	size_t i;
	int r;

	if ((r = ct_array(d, ct_vital_item, vecs)) == 0) {
		/* Sorted by name, each name once, as codec.c has them. */
		if (v.n > 1)
			qsort(v.v, v.n, v.size, ct_vital_cmp);
		for (i = 1; i < v.n && r == 0; i++)
			if (ct_vital_cmp(
				v.v + (i - 1) * v.size, v.v + i * v.size) == 0)
				r = CT_DECLINE;
	}
	if (r == 0 && (r = ct_vec_keep(d, &v, &out, &e->nvitals)) == 0)
		e->vitals = out;
	free(v.v);
	free(s.v);
	return r;
}

/* ---- reading: findings, metrics and the epoch ---- */

/* A member of an object that has only table members. */
static int
ct_table_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	int r = ct_obj_field(d, arg, key, klen);

	return r == 1 ? 0 : r == 0 ? CT_DECLINE : r;
}

static int
ct_finding_item(struct ct_dec *d, void *arg)
{
	struct vitals_finding *f;
	struct ct_obj o;
	int r;

	if ((f = ct_vec_push(arg)) == NULL)
		return -ENOMEM;
	ct_obj_init(&o, codec_finding_fields, f);
	if ((r = ct_object(d, ct_table_member, &o)) != 0)
		return r;
	return ct_obj_done(&o, 0);
}

static int
ct_findings(struct ct_dec *d, struct vitals_epoch *e)
{
	struct ct_vec v = { NULL, 0, 0, sizeof(struct vitals_finding) };
	void *out;
	int r;

	if ((r = ct_array(d, ct_finding_item, &v)) == 0 &&
	    (r = ct_vec_keep(d, &v, &out, &e->nfindings)) == 0)
		e->findings = out;
	free(v.v);
	return r;
}

/* A metric: its name is the key, its members a table's. */
static int
ct_metric_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	struct vitals_metric *m;
	struct ct_obj o;
	char *name;
	int r;

	if (klen == 0 || (m = ct_vec_push(arg)) == NULL)
		return klen == 0 ? CT_DECLINE : -ENOMEM;
	if ((name = epoch_alloc(d->e, klen + 1)) == NULL)
		return -ENOMEM;
	memcpy(name, key, klen);
	ct_obj_init(&o, codec_metric_fields, m);
	if ((r = ct_object(d, ct_table_member, &o)) != 0 ||
	    (r = ct_obj_done(&o, 0)) != 0)
		return r;
	m->name = name;
	return m->n > 0 ? 0 : CT_DECLINE;
}

static int
ct_metrics(struct ct_dec *d, struct vitals_epoch *e)
{
	struct ct_vec v = { NULL, 0, 0, sizeof(struct vitals_metric) };
	void *out;
	int r;

	if ((r = ct_object(d, ct_metric_member, &v)) == 0)
		r = ct_vec_sort_unique(&v, codec_metric_cmp);
	if (r == 0 && (r = ct_vec_keep(d, &v, &out, &e->nmetrics)) == 0)
		e->metrics = out;
	free(v.v);
	return r;
}

static int
ct_module_item(struct ct_dec *d, void *arg)
{
	struct vitals_module *m;
	struct ct_obj o;
	int r;

	if ((m = ct_vec_push(arg)) == NULL)
		return -ENOMEM;
	ct_obj_init(&o, codec_module_fields, m);
	if ((r = ct_object(d, ct_table_member, &o)) != 0 ||
	    (r = ct_obj_done(&o, 0)) != 0)
		return r;
	/* Out of range: jansson's decoder says so. */
	return m->id < VITALS_UFRAME_MAX_MODULES ? 0 : CT_DECLINE;
}

/* The modules table, sorted by id. */
static int
ct_modules(struct ct_dec *d, struct vitals_epoch *e)
{
	struct ct_vec v = { NULL, 0, 0, sizeof(struct vitals_module) };
	void *out;
	int r;

	if ((r = ct_array(d, ct_module_item, &v)) == 0)
		r = ct_vec_sort_unique(&v, codec_module_cmp);
	if (r == 0 && (r = ct_vec_keep(d, &v, &out, &e->nmodules)) == 0)
		e->modules = v.n > 0 ? out : NULL;
	free(v.v);
	return r;
}

enum {
	CT_E_FORMAT,
	CT_E_VITALS,
	CT_E_FINDINGS,
	CT_E_METRICS,
	CT_E_MODULES,
	CT_E_STRINGS,
	CT_E_TASKS,
	CT_E_STACKS,
	CT_E_N
};

/*
 * A table of the compact form: only there, after "format" and the
 * tables before it (k - 1 is the one before, CT_E_STRINGS the first).
 */
static int
ct_epoch_table(struct ct_dec *d, struct ct_obj *o, int k)
{
	struct codec_tables *t = d->tabs;
	void *v;
	int r;

	if (t == NULL || (k > CT_E_STRINGS && !(o->seen & CT_EXTRA(o, k - 1))))
		return CT_DECLINE;
	switch (k) {
	case CT_E_STRINGS:
		r = ct_table(d, ct_str_item, sizeof(char *), &v, &t->nstr);
		t->str = v;
		return r;
	case CT_E_TASKS:
		r = ct_table(
		    d, ct_task_item, sizeof(struct codec_task), &v, &t->ntask);
		t->task = v;
		return r;
	default:
		r = ct_table(d, ct_stack_item, sizeof(struct codec_stack), &v,
		    &t->nstack);
		t->stack = v;
		return r;
	}
}

static int
ct_epoch_member(struct ct_dec *d, const char *key, size_t klen, void *arg)
{
	static const char *const extra[CT_E_N] = { "format", "vitals",
		"findings", "metrics", "modules", "strings", "tasks",
		"stacks" };
	struct ct_obj *o = arg;
	int r, k;

	if ((r = ct_obj_field(d, o, key, klen)) != 0)
		return r < 0 ? r : 0;
	for (k = 0; k < CT_E_N && !ct_is(key, klen, extra[k]); k++)
		;
	if (k == CT_E_N || (r = ct_seen(o, o->nfields + k)) != 0)
		return CT_DECLINE;
	switch (k) {
	case CT_E_FORMAT:
		if ((r = ct_integer(d, &d->format)) != 0)
			return r;
		/* Vitals read before it were read as format 1's. */
		if (d->format == CODEC_FORMAT_COMPACT &&
		    !(o->seen & CT_EXTRA(o, CT_E_VITALS)))
			d->tabs = &d->tabs_mem;
		return d->format == CODEC_FORMAT_FULL || d->tabs != NULL
		    ? 0
		    : CT_DECLINE;
	case CT_E_STRINGS:
	case CT_E_TASKS:
	case CT_E_STACKS:
		return ct_epoch_table(d, o, k);
	case CT_E_VITALS:
		/* Rows need their tables and start_ns first. */
		if ((d->tabs != NULL &&
			(!(o->seen & CT_EXTRA(o, CT_E_STACKS)) ||
			    !ct_obj_has(o, "start_ns"))))
			return CT_DECLINE;
		return ct_vitals(d, d->e);
	case CT_E_FINDINGS:
		return ct_findings(d, d->e);
	case CT_E_METRICS:
		return ct_metrics(d, d->e);
	default:
		return ct_modules(d, d->e);
	}
}

/*
 * An epoch from its JSON text buf[0..len) (borrowed), in an arena of its
 * own: 0 and *out (free with vitals_epoch_free), -ENOTSUP for what is left
 * to jansson, or -ENOMEM.
 */
int
codec_text_decode(const char *buf, size_t len, struct vitals_epoch **out)
{
	struct ct_dec d;
	struct ct_obj o;
	int r;

	memset(&d, 0, sizeof(d));
	d.p = buf;
	d.end = buf + len;
	if ((d.e = epoch_new()) == NULL)
		return -ENOMEM;
	ct_obj_init(&o, codec_epoch_fields, d.e);
	if ((r = ct_object(&d, ct_epoch_member, &o)) == 0 &&
	    (r = ct_obj_done(&o,
		 CT_EXTRA(&o, CT_E_FORMAT) | CT_EXTRA(&o, CT_E_VITALS) |
		     CT_EXTRA(&o, CT_E_FINDINGS) |
		     (d.tabs != NULL ? CT_EXTRA(&o, CT_E_STACKS) : 0))) == 0) {
		ct_ws(&d);
		r = d.p == d.end ? 0 : CT_DECLINE;
	}
	if (r != 0) {
		epoch_free(d.e);
		return r;
	}
	*out = d.e;
	return 0;
}

/* ---- writing ---- */

/* Size of the buffer a streamed text goes through to its sink. */
#define CT_CHUNK (64 * 1024)

/* The text being written: all of it, or a chunk on its way to a sink. */
struct ct_buf {
	char *p;
	size_t n, cap;
	int err; /* -ENOMEM or the sink's error once something failed */
	codec_sink_fn sink; /* NULL: keep the whole text */
	void *arg; /* the sink's */
};

/* Hand what b holds to its sink; 0, or -1 after recording why not. */
static int
ct_flush(struct ct_buf *b)
{
	int r;

	if (b->n > 0 && (r = b->sink(b->p, b->n, b->arg)) < 0) {
		b->err = r;
		return -1;
	}
	b->n = 0;
	return 0;
}

/* Room for n more bytes; 0, or -1 after recording why not. */
static int
ct_room(struct ct_buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->err != 0)
		return -1;
	if (b->n + n < b->cap)
		return 0;
	if (b->sink != NULL && (ct_flush(b) != 0 || n < b->cap))
		return b->err != 0 ? -1 : 0;
	for (cap = b->cap ? b->cap : 4096; cap <= b->n + n; cap *= 2)
		;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->err = -ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void
ct_put(struct ct_buf *b, const char *s, size_t n)
{
	if (ct_room(b, n) == 0) {
		memcpy(b->p + b->n, s, n);
		b->n += n;
	}
}

static void
ct_puts(struct ct_buf *b, const char *s)
{
	ct_put(b, s, strlen(s));
}

/* An integer as jansson writes it ("%lld"). */
static void
ct_put_int(struct ct_buf *b, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + m % 10);
	while ((m /= 10) > 0);
	if (v < 0)
		tmp[sizeof(tmp) - 1 - n++] = '-';
	ct_put(b, tmp + sizeof(tmp) - n, n);
}

/*
 * A finite double as jansson writes a real: "%.17g" with the decimal
 * point a '.', ".0" appended when it would read back as an integer, and
 * the exponent without '+' or leading zeros.
 */
static void
ct_put_real(struct ct_buf *b, double v)
{
	char s[64], *q, *from;
	int n = snprintf(s, sizeof(s) - 3, "%.17g", v);

	if (n < 0 || n >= (int)sizeof(s) - 3) {
		b->err = -EOVERFLOW; /* not for a double: 24 bytes at most */
		return;
	}
	for (q = s; *q != '\0'; q++)
		if (!((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' ||
			*q == 'e'))
			*q = '.'; /* the locale's decimal point */
	if (strchr(s, '.') == NULL && strchr(s, 'e') == NULL)
		strcat(s, ".0");
	if ((q = strchr(s, 'e')) != NULL) {
		/* q: where the exponent's digits start; from: its first
		 * significant one (or the sign to drop). */
		from = ++q + 1;
		if (*q == '-')
			q++;
		while (*from == '0')
			from++;
		if (from != q)
			memmove(q, from, strlen(from) + 1);
	}
	ct_puts(b, s);
}

/* The letter of the short escape of c ("\\n" ...), or 0 for \\u00XX. */
static char
ct_escape(unsigned char c)
{
	switch (c) {
	case '"':
	case '\\':
		return (char)c;
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	default:
		return 0;
	}
}

/*
 * The length of the UTF-8 sequence that starts with byte c, as jansson
 * sees it, or 0 where no sequence may start.
 */
static int
ct_utf8_first(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c < 0xc2) /* a continuation byte, or an overlong ASCII */
		return 0;
	if (c < 0xe0)
		return 2;
	if (c < 0xf0)
		return 3;
	return c < 0xf5 ? 4 : 0;
}

/*
 * Whether s is UTF-8 that jansson takes (json_string): no overlong forms,
 * no surrogates, nothing above U+10FFFF.
 */
static int
ct_utf8_valid(const unsigned char *s)
{
	static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t v;
	int n, i;

	for (; *s != '\0'; s += n) {
		if ((n = ct_utf8_first(*s)) == 1)
			continue;
		if (n == 0)
			return 0;
		v = *s & (0x7f >> n);
		for (i = 1; i < n; i++) {
			if (s[i] < 0x80 || s[i] > 0xbf)
				return 0;
			v = v << 6 | (s[i] & 0x3f);
		}
		if (v < least[n] || v > 0x10ffff ||
		    (v >= 0xd800 && v <= 0xdfff))
			return 0;
	}
	return 1;
}

/*
 * A string escaped as jansson does, with every byte >= 0x80 written as
 * '?' when mangle: the tree writer replaced them so in strings that are
 * not UTF-8 (jansson refuses those) and in every non-ASCII metric name.
 */
static void
ct_put_str(struct ct_buf *b, const char *s, int mangle)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *q = (const unsigned char *)(s ? s : "");
	const unsigned char *run;
	char esc[6] = { '\\', 'u', '0', '0' };

	ct_put(b, "\"", 1);
	for (;; q++) {
		for (run = q; *q >= 0x20 && *q != '"' && *q != '\\' &&
		     !(mangle && *q >= 0x80);
		     q++)
			;
		ct_put(b, (const char *)run, (size_t)(q - run));
		if (*q == '\0')
			break;
		if (*q >= 0x80) {
			ct_put(b, "?", 1);
			continue;
		}
		if ((esc[1] = ct_escape(*q)) != 0) {
			ct_put(b, esc, 2);
			continue;
		}
		esc[1] = 'u';
		esc[4] = hex[*q >> 4];
		esc[5] = hex[*q & 15];
		ct_put(b, esc, 6);
	}
	ct_put(b, "\"", 1);
}

/* A string value: as it is if it is UTF-8, else its ASCII with '?'. */
static void
ct_put_string(struct ct_buf *b, const char *s)
{
	ct_put_str(b, s, s != NULL && !ct_utf8_valid((const unsigned char *)s));
}

/* The members of table f of base, each preceded by a comma if comma. */
static void
ct_put_fields(
    struct ct_buf *b, const struct codec_field *f, const void *base, int comma)
{
	const char *p, *s;
	double v;

	for (; f->key != NULL; f++, comma = 1) {
		p = (const char *)base + f->off;
		if (comma)
			ct_put(b, ",", 1);
		ct_put(b, "\"", 1);
		ct_puts(b, f->key);
		ct_put(b, "\":", 2);
		switch (f->type) {
		case CODEC_U64:
			ct_put_int(
			    b, (int64_t) * (const uint64_t *)(const void *)p);
			break;
		case CODEC_U32:
			ct_put_int(b, *(const uint32_t *)(const void *)p);
			break;
		case CODEC_DBL:
			v = *(const double *)(const void *)p;
			if (isfinite(v))
				ct_put_real(b, v);
			else
				ct_put(b, "null", 4);
			break;
		default:
			s = *(const char *const *)(const void *)p;
			if (s == NULL && f->type == CODEC_STRN)
				ct_put(b, "null", 4);
			else
				ct_put_string(b, s);
		}
	}
}

/* "KEY":[v0,v1,...] with a leading comma. */
static void
ct_put_u64s(struct ct_buf *b, const char *key, const uint64_t *v, uint32_t n)
{
	uint32_t i;

	ct_put(b, ",\"", 2);
	ct_puts(b, key);
	ct_put(b, "\":[", 3);
	for (i = 0; v != NULL && i < n; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)v[i]);
	}
	ct_put(b, "]", 1);
}

/* "KEY":["name",...] with a leading comma. */
static void
ct_put_names(
    struct ct_buf *b, const char *key, const char *const *v, uint32_t n)
{
	uint32_t i;

	ct_put(b, ",\"", 2);
	ct_puts(b, key);
	ct_put(b, "\":[", 3);
	for (i = 0; i < n; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_string(b, v[i]);
	}
	ct_put(b, "]", 1);
}

/* A sample as codec_sample_to_json has it (stacks cut at the maximum). */
static void
ct_put_sample(struct ct_buf *b, const struct vitals_sample *s)
{
	uint32_t nk = s->kstack != NULL ? s->nkstack : 0;
	uint32_t nu = s->ustack != NULL ? s->nustack : 0;

	nk = nk > VITALS_STACK_MAX ? VITALS_STACK_MAX : nk;
	nu = nu > VITALS_STACK_MAX ? VITALS_STACK_MAX : nu;
	ct_put(b, "{", 1);
	ct_put_fields(b, codec_sample_fields, s, 0);
	ct_put_u64s(b, "kstack", s->kstack, nk);
	ct_put_u64s(b, "ustack", s->ustack, nu);
	if (s->ksyms != NULL && nk > 0)
		ct_put_names(b, "ksyms", s->ksyms, nk);
	if (s->ksyms != NULL && nu > 0)
		ct_put_names(b, "usyms", s->ksyms + s->nkstack, nu);
	ct_put_u64s(b, "args", s->args, VITALS_NARGS);
	ct_put(b, "}", 1);
}

static void
ct_put_vital(struct ct_buf *b, const struct vitals_vital_epoch *v)
{
	uint32_t i, n = 0;

	ct_put(b, "{", 1);
	ct_put_fields(b, codec_vital_fields, v, 0);
	ct_put(b, ",\"hca\":{\"n\":", 12);
	ct_put_int(b, v->hca_size);
	ct_put(b, ",\"nz\":[", 7);
	for (i = 0; v->hca != NULL && i < v->hca_size; i++) {
		if (v->hca[i] == 0)
			continue;
		if (n++ > 0)
			ct_put(b, ",", 1);
		ct_put(b, "[", 1);
		ct_put_int(b, i);
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)v->hca[i]);
		ct_put(b, "]", 1);
	}
	ct_put(b, "]},\"samples\":[", 14);
	for (i = 0; v->samples != NULL && i < v->nsamples; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_sample(b, &v->samples[i]);
	}
	ct_put(b, "]}", 2);
}

/* Whether metric names a and b are one key once non-ASCII bytes are '?'. */
static int
ct_same_key(const char *a, const char *b)
{
	unsigned char x, y;

	do {
		x = (unsigned char)*a++;
		y = (unsigned char)*b++;
		x = x >= 0x80 ? '?' : x;
		y = y >= 0x80 ? '?' : y;
	} while (x == y && x != '\0');
	return x == y;
}

/* A metric named (non-empty name). */
static int
ct_named(const struct vitals_metric *m)
{
	return m->name != NULL && m->name[0] != '\0';
}

/*
 * Whether the named metrics of e have ASCII names in strictly ascending
 * order, as the engine writes them: then no two share a key.
 */
static int
ct_metrics_plain(const struct vitals_epoch *e)
{
	const char *prev = NULL, *q;
	uint32_t i;

	for (i = 0; i < e->nmetrics; i++) {
		if (!ct_named(&e->metrics[i]))
			continue;
		for (q = e->metrics[i].name; *q != '\0'; q++)
			if ((unsigned char)*q >= 0x80)
				return 0;
		if (prev != NULL && strcmp(prev, e->metrics[i].name) >= 0)
			return 0;
		prev = e->metrics[i].name;
	}
	return 1;
}

/*
 * The metric whose members key i's entry holds, or NULL when an earlier
 * metric holds the key: a JSON object keeps a key where it first came,
 * with the value it was last set to (as jansson did).
 */
static const struct vitals_metric *
ct_metric_of(const struct vitals_epoch *e, uint32_t i)
{
	const struct vitals_metric *m = &e->metrics[i];
	uint32_t j;

	for (j = 0; j < i; j++)
		if (ct_named(&e->metrics[j]) &&
		    ct_same_key(e->metrics[j].name, m->name))
			return NULL;
	for (j = i + 1; j < e->nmetrics; j++)
		if (ct_named(&e->metrics[j]) &&
		    ct_same_key(e->metrics[j].name, m->name))
			m = &e->metrics[j];
	return m;
}

/*
 * The metrics object, keyed by name with non-ASCII bytes made '?'; a
 * metric without a name is left out.
 */
static void
ct_put_metrics(struct ct_buf *b, const struct vitals_epoch *e)
{
	const struct vitals_metric *m;
	int plain = e->metrics == NULL || ct_metrics_plain(e), n = 0;
	uint32_t i;

	ct_put(b, ",\"metrics\":{", 12);
	for (i = 0; e->metrics != NULL && i < e->nmetrics; i++) {
		if (!ct_named(&e->metrics[i]))
			continue;
		m = plain ? &e->metrics[i] : ct_metric_of(e, i);
		if (m == NULL)
			continue;
		if (n++ > 0)
			ct_put(b, ",", 1);
		ct_put_str(b, e->metrics[i].name, 1);
		ct_put(b, ":{", 2);
		ct_put_fields(b, codec_metric_fields, m, 0);
		ct_put(b, "}", 1);
	}
	ct_put(b, "}", 1);
}

/* The vitals in the full form (format 1). */
static void
ct_put_vitals(struct ct_buf *b, const struct vitals_epoch *e)
{
	uint32_t i;

	ct_put(b, ",\"vitals\":[", 11);
	for (i = 0; e->vitals != NULL && i < e->nvitals; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_vital(b, &e->vitals[i]);
	}
	ct_put(b, "]", 1);
}

/* ---- writing the compact form (format 2) ---- */

/*
 * The compact form (CODEC_FORMAT_COMPACT) holds each distinct string
 * (exe paths, thread names, frame names), task and stack once, in
 * tables before the vitals; a sample is a row of numbers naming them.
 *
 *   "strings": ["text", ...]
 *   "tasks":   [[pid, tid - pid, uid, exe_id, exe, comm], ...]
 *   "stacks":  [[2 * nk + named, frame, ..., name, ...], ...]
 *
 * exe and comm index strings.  A stack has its nk kernel then its user
 * frames, each as the difference from the frame before it (the first
 * from 0), then, if the sample had names (named 1), one string index
 * per frame.
 * Tables are in the order their entries are first named, and a row names
 * an entry as 0 when it is the next not named yet, else as its index + 1.
 * A vital's "hca" is [gap, value, ...] over its nonzero counters, gap
 * the zeros skipped since the last; its "samples" rows are
 *
 *   [dts, label, weight, count - weight, slot ^ hashed, op, task, stack,
 *    args without the trailing zeros]
 *   [dts, back, count - its count(, weight)]
 *
 * dts the time since the vital's previous sample (the first: since the
 * epoch's start), hashed the slot the label hashes to (so 0 for the
 * engine's own samples).  The short row is a sample that repeats, but
 * for its time, count and weight, the label's sample back rows before
 * (the next crossing of a power of t on the same path): weight is left
 * out when it is that sample's too.  Numbers are the int64 bit patterns
 * of differences taken modulo 2^64.
 */

/* Fewest numbers in a full sample row (args may be cut to none). */
#define CT_ROW_FULL 8
/* Numbers in a task. */
#define CT_TASK_N 6

/* An open-addressed set of indexes into entries the caller keeps. */
struct ct_set {
	uint32_t *slot; /* entry index + 1; 0 = free */
	uint32_t mask; /* slots - 1, slots a power of two */
	uint32_t n; /* entries */
};

/* A distinct stack: frames and, if the sample had them, name indexes. */
struct ct_stack {
	uint64_t hash;
	uint32_t nk, nu;
	const uint64_t *k, *u;
	uint32_t *names; /* nk + nu string indexes, or NULL */
};

/* A distinct task: pid, tid, uid, exe_id, exe and comm (string indexes). */
struct ct_task {
	uint64_t hash;
	uint32_t v[CT_TASK_N];
};

/* The tables of one epoch being written, and each sample's entries. */
struct ct_tabs {
	struct ct_set strs, stks, tsks;
	const char **str; /* distinct strings ("" for NULL) */
	uint64_t *str_hash;
	uint32_t nstr, str_cap;
	struct ct_stack *stk;
	uint32_t nstk, stk_cap;
	struct ct_task *tsk;
	uint32_t ntsk, tsk_cap;
	uint32_t *row; /* per sample of every vital: its task, its stack */
};

static uint64_t
ct_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *q = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ q[i]) * 0x100000001b3ULL;
	return h;
}

/* Make room in s for one more entry (n * 2 below the slots); 0 or -ENOMEM. */
static int
ct_set_room(struct ct_set *s, const struct ct_tabs *t,
    uint64_t (*entry_hash)(const struct ct_tabs *, uint32_t))
{
	uint32_t n, i, j, *slot;

	if (s->slot != NULL && s->n * 2 < s->mask)
		return 0;
	n = s->slot != NULL ? (s->mask + 1) * 2 : 1024;
	if ((slot = calloc(n, sizeof(*slot))) == NULL)
		return -ENOMEM;
	for (i = 0; s->slot != NULL && i <= s->mask; i++) {
		if (s->slot[i] == 0)
			continue;
		j = (uint32_t)entry_hash(t, s->slot[i] - 1) & (n - 1);
		while (slot[j] != 0)
			j = (j + 1) & (n - 1);
		slot[j] = s->slot[i];
	}
	free(s->slot);
	s->slot = slot;
	s->mask = n - 1;
	return 0;
}

static uint64_t
ct_str_hash(const struct ct_tabs *t, uint32_t i)
{
	return t->str_hash[i];
}

static uint64_t
ct_stk_hash(const struct ct_tabs *t, uint32_t i)
{
	return t->stk[i].hash;
}

static uint64_t
ct_tsk_hash(const struct ct_tabs *t, uint32_t i)
{
	return t->tsk[i].hash;
}

/* Make *v, of *cap items of size bytes, hold n + 1; 0 or -ENOMEM. */
static int
ct_vec_room(void *v, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 256;
	void *p;

	if (n < *cap)
		return 0;
	if ((p = realloc(*(void **)v, (size_t)c * size)) == NULL)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

/* The index of string s (NULL is ""), added if new; or -ENOMEM. */
static int64_t
ct_str_index(struct ct_tabs *t, const char *s)
{
	uint32_t j, cap;
	uint64_t h;

	s = s != NULL ? s : "";
	h = ct_hash_bytes(0xcbf29ce484222325ULL, s, strlen(s));
	if (ct_set_room(&t->strs, t, ct_str_hash) != 0)
		return -ENOMEM;
	for (j = (uint32_t)h & t->strs.mask; t->strs.slot[j] != 0;
	     j = (j + 1) & t->strs.mask)
		if (t->str_hash[t->strs.slot[j] - 1] == h &&
		    strcmp(t->str[t->strs.slot[j] - 1], s) == 0)
			return t->strs.slot[j] - 1;
	cap = t->str_cap;
	if (ct_vec_room(&t->str_hash, &cap, t->nstr, sizeof(*t->str_hash)) ||
	    ct_vec_room(&t->str, &t->str_cap, t->nstr, sizeof(*t->str)))
		return -ENOMEM;
	t->str[t->nstr] = s;
	t->str_hash[t->nstr] = h;
	t->strs.slot[j] = ++t->nstr;
	t->strs.n++;
	return t->nstr - 1;
}

/* Whether stack entries a and c hold the same frames and names. */
static int
ct_stack_eq(const struct ct_stack *a, const struct ct_stack *c)
{
	size_t nn = (size_t)c->nk + c->nu;

	return a->hash == c->hash && a->nk == c->nk && a->nu == c->nu &&
	    (a->nk == 0 || memcmp(a->k, c->k, a->nk * sizeof(*a->k)) == 0) &&
	    (a->nu == 0 || memcmp(a->u, c->u, a->nu * sizeof(*a->u)) == 0) &&
	    (a->names == NULL) == (c->names == NULL) &&
	    (a->names == NULL ||
		memcmp(a->names, c->names, nn * sizeof(*a->names)) == 0);
}

/* Sample s's stack (frames cut at the maximum) and its hash into c. */
static int
ct_stack_of(struct ct_tabs *t, const struct vitals_sample *s,
    struct ct_stack *c, uint32_t *names)
{
	uint32_t i;
	int64_t x;

	memset(c, 0, sizeof(*c));
	c->nk = s->kstack != NULL ? s->nkstack : 0;
	c->nu = s->ustack != NULL ? s->nustack : 0;
	c->nk = c->nk > VITALS_STACK_MAX ? VITALS_STACK_MAX : c->nk;
	c->nu = c->nu > VITALS_STACK_MAX ? VITALS_STACK_MAX : c->nu;
	c->k = s->kstack;
	c->u = s->ustack;
	c->hash = ct_hash_bytes(0xcbf29ce484222325ULL, &c->nk, sizeof(c->nk));
	c->hash = ct_hash_bytes(c->hash, c->k, c->nk * sizeof(*c->k));
	c->hash = ct_hash_bytes(c->hash, &c->nu, sizeof(c->nu));
	c->hash = ct_hash_bytes(c->hash, c->u, c->nu * sizeof(*c->u));
	if (s->ksyms == NULL || c->nk + c->nu == 0)
		return 0;
	for (i = 0; i < c->nk + c->nu; i++) {
		x = ct_str_index(
		    t, s->ksyms[i < c->nk ? i : s->nkstack + i - c->nk]);
		if (x < 0)
			return -ENOMEM;
		names[i] = (uint32_t)x;
	}
	c->names = names;
	c->hash =
	    ct_hash_bytes(c->hash + 1, names, (c->nk + c->nu) * sizeof(*names));
	return 0;
}

/* The stack index of sample s, added if new; or -ENOMEM. */
static int64_t
ct_stack_index(struct ct_tabs *t, const struct vitals_sample *s)
{
	uint32_t names[2 * VITALS_STACK_MAX], j;
	struct ct_stack c;
	size_t nn;

	if (ct_stack_of(t, s, &c, names) != 0 ||
	    ct_set_room(&t->stks, t, ct_stk_hash) != 0)
		return -ENOMEM;
	for (j = (uint32_t)c.hash & t->stks.mask; t->stks.slot[j] != 0;
	     j = (j + 1) & t->stks.mask)
		if (ct_stack_eq(&t->stk[t->stks.slot[j] - 1], &c))
			return t->stks.slot[j] - 1;
	if (ct_vec_room(&t->stk, &t->stk_cap, t->nstk, sizeof(*t->stk)))
		return -ENOMEM;
	if (c.names != NULL) {
		nn = (size_t)c.nk + c.nu;
		if ((c.names = malloc(nn * sizeof(*c.names))) == NULL)
			return -ENOMEM;
		memcpy(c.names, names, nn * sizeof(*c.names));
	}
	t->stk[t->nstk] = c;
	t->stks.slot[j] = ++t->nstk;
	t->stks.n++;
	return t->nstk - 1;
}

/* The task index of sample s, added if new; or -ENOMEM. */
static int64_t
ct_task_index(struct ct_tabs *t, const struct vitals_sample *s)
{
	struct ct_task c;
	int64_t x, y;
	uint32_t j;

	if ((x = ct_str_index(t, s->exe)) < 0 ||
	    (y = ct_str_index(t, s->comm)) < 0 ||
	    ct_set_room(&t->tsks, t, ct_tsk_hash) != 0)
		return -ENOMEM;
	c.v[0] = s->pid;
	c.v[1] = s->tid;
	c.v[2] = s->uid;
	c.v[3] = s->exe_id;
	c.v[4] = (uint32_t)x;
	c.v[5] = (uint32_t)y;
	c.hash = ct_hash_bytes(0xcbf29ce484222325ULL, c.v, sizeof(c.v));
	for (j = (uint32_t)c.hash & t->tsks.mask; t->tsks.slot[j] != 0;
	     j = (j + 1) & t->tsks.mask)
		if (memcmp(t->tsk[t->tsks.slot[j] - 1].v, c.v, sizeof(c.v)) ==
		    0)
			return t->tsks.slot[j] - 1;
	if (ct_vec_room(&t->tsk, &t->tsk_cap, t->ntsk, sizeof(*t->tsk)))
		return -ENOMEM;
	t->tsk[t->ntsk] = c;
	t->tsks.slot[j] = ++t->ntsk;
	t->tsks.n++;
	return t->ntsk - 1;
}

static void
ct_tabs_free(struct ct_tabs *t)
{
	uint32_t i;

	for (i = 0; i < t->nstk; i++)
		free(t->stk[i].names);
	free(t->strs.slot);
	free(t->stks.slot);
	free(t->tsks.slot);
	free(t->str);
	free(t->str_hash);
	free(t->stk);
	free(t->tsk);
	free(t->row);
}

/* Fill t with e's strings, tasks and stacks and each sample's entries. */
static int
ct_tabs_build(struct ct_tabs *t, const struct vitals_epoch *e)
{
	const struct vitals_sample *s;
	size_t n = 0, r = 0;
	uint32_t i, j;
	int64_t x, y;

	for (i = 0; e->vitals != NULL && i < e->nvitals; i++)
		n += e->vitals[i].samples != NULL ? e->vitals[i].nsamples : 0;
	if (n > 0 && (t->row = malloc(n * 2 * sizeof(*t->row))) == NULL)
		return -ENOMEM;
	for (i = 0; e->vitals != NULL && i < e->nvitals; i++) {
		s = e->vitals[i].samples;
		for (j = 0; s != NULL && j < e->vitals[i].nsamples; j++) {
			if ((x = ct_task_index(t, &s[j])) < 0 ||
			    (y = ct_stack_index(t, &s[j])) < 0)
				return -ENOMEM;
			t->row[r++] = (uint32_t)x;
			t->row[r++] = (uint32_t)y;
		}
	}
	return 0;
}

/* ",n" for each of v[0..n), as differences from the one before. */
static void
ct_put_frames(struct ct_buf *b, const uint64_t *v, uint32_t n)
{
	uint64_t prev = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)(v[i] - prev));
		prev = v[i];
	}
}

/* "strings", "tasks" and "stacks", each with a leading comma. */
static void
ct_put_tabs(struct ct_buf *b, const struct ct_tabs *t)
{
	const struct ct_stack *k;
	uint32_t i, j;

	ct_put(b, ",\"strings\":[", 12);
	for (i = 0; i < t->nstr; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_string(b, t->str[i]);
	}
	ct_put(b, "],\"tasks\":[", 11);
	for (i = 0; i < t->ntsk; i++) {
		ct_put(b, i > 0 ? ",[" : "[", i > 0 ? 2 : 1);
		for (j = 0; j < CT_TASK_N; j++) {
			if (j > 0)
				ct_put(b, ",", 1);
			ct_put_int(b,
			    j == 1 ? (int64_t)(int32_t)(t->tsk[i].v[1] -
					 t->tsk[i].v[0])
				   : (int64_t)t->tsk[i].v[j]);
		}
		ct_put(b, "]", 1);
	}
	ct_put(b, "],\"stacks\":[", 12);
	for (i = 0; i < t->nstk; i++) {
		k = &t->stk[i];
		ct_put(b, i > 0 ? ",[" : "[", i > 0 ? 2 : 1);
		ct_put_int(b, 2 * (int64_t)k->nk + (k->names != NULL));
		ct_put_frames(b, k->k, k->nk);
		ct_put_frames(b, k->u, k->nu);
		for (j = 0; k->names != NULL && j < k->nk + k->nu; j++) {
			ct_put(b, ",", 1);
			ct_put_int(b, k->names[j]);
		}
		ct_put(b, "]", 1);
	}
	ct_put(b, "]", 1);
}

/* Whether sample s (entries rs) repeats p (entries rp) as a short row. */
static int
ct_repeats(const struct vitals_sample *s, const uint32_t *rs,
    const struct vitals_sample *p, const uint32_t *rp)
{
	return s->label == p->label && s->slot == p->slot && s->op == p->op &&
	    rs[0] == rp[0] && rs[1] == rp[1] &&
	    memcmp(s->args, p->args, sizeof(s->args)) == 0;
}

/*
 * The index of the label's sample before s[i] if s[i] repeats it, else
 * -1.  last maps labels to their latest sample (index + 1), mask + 1
 * slots.
 */
static int64_t
ct_repeat_of(const struct vitals_sample *s, const uint32_t *rows, uint32_t i,
    uint32_t *last, uint32_t mask)
{
	uint32_t j = (uint32_t)vitals_hash_mix64(s[i].label) & mask, p;

	for (; last[j] != 0; j = (j + 1) & mask) {
		p = last[j] - 1;
		if (s[p].label != s[i].label)
			continue;
		last[j] = i + 1;
		if (!ct_repeats(&s[i], rows + 2 * i, &s[p], rows + 2 * p))
			return -1;
		return p;
	}
	last[j] = i + 1;
	return -1;
}

/* How a row names table entry x: 0 for the next new one, else x + 1. */
static uint32_t
ct_ref(uint32_t x, uint32_t *next)
{
	if (x == *next) {
		(*next)++;
		return 0;
	}
	return x + 1;
}

/* The state of the rows being written: what "next" means in each table. */
struct ct_rows {
	const uint32_t *entry; /* the samples' task and stack indexes */
	uint32_t next_task, next_stack;
	uint32_t hca_size; /* of the vital */
	uint64_t prev_ts;
};

/* A full sample row. */
static void
ct_put_full_row(struct ct_buf *b, const struct vitals_sample *s,
    const uint32_t *r, struct ct_rows *w)
{
	uint32_t n = VITALS_NARGS, i, hashed = 0;
	uint64_t u[CT_ROW_FULL - 1];

	if (w->hca_size > 0)
		hashed =
		    (uint32_t)vitals_hash_label(s->label, s->exe_id, s->uid) &
		    (w->hca_size - 1);
	u[0] = s->label;
	u[1] = s->weight;
	u[2] = s->count - s->weight;
	u[3] = s->slot ^ hashed;
	u[4] = s->op;
	u[5] = ct_ref(r[0], &w->next_task);
	u[6] = ct_ref(r[1], &w->next_stack);
	for (i = 0; i < CT_ROW_FULL - 1; i++) {
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)u[i]);
	}
	while (n > 0 && s->args[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++) {
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)s->args[i]);
	}
}

/* Sample s[i] as a row, short if it repeats s[p] (p >= 0). */
static void
ct_put_row(struct ct_buf *b, const struct vitals_sample *s, uint32_t i,
    int64_t p, struct ct_rows *w)
{
	ct_put(b, "[", 1);
	ct_put_int(b, (int64_t)(s[i].ts_ns - w->prev_ts));
	w->prev_ts = s[i].ts_ns;
	if (p < 0) {
		ct_put_full_row(b, &s[i], w->entry + 2 * i, w);
		ct_put(b, "]", 1);
		return;
	}
	ct_put(b, ",", 1);
	ct_put_int(b, (int64_t)i - p);
	ct_put(b, ",", 1);
	ct_put_int(b, (int64_t)(s[i].count - s[p].count));
	if (s[i].weight != s[p].weight) {
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)s[i].weight);
	}
	ct_put(b, "]", 1);
}

/* The HCA as [gap, value, ...] over its nonzero counters. */
static void
ct_put_hca_gaps(struct ct_buf *b, const struct vitals_vital_epoch *v)
{
	uint32_t i, gap = 0, n = 0;

	ct_put(b, ",\"hca\":[", 8);
	for (i = 0; v->hca != NULL && i < v->hca_size; i++) {
		if (v->hca[i] == 0) {
			gap++;
			continue;
		}
		if (n++ > 0)
			ct_put(b, ",", 1);
		ct_put_int(b, gap);
		ct_put(b, ",", 1);
		ct_put_int(b, (int64_t)v->hca[i]);
		gap = 0;
	}
	ct_put(b, "]", 1);
}

/* A vital in the compact form; w->entry: its samples' first entries. */
static void
ct_put_vital_compact(struct ct_buf *b, const struct vitals_vital_epoch *v,
    struct ct_rows *w, uint64_t start_ns)
{
	const struct vitals_sample *s = v->samples;
	uint32_t i, n = s != NULL ? v->nsamples : 0, mask = 15, *last;

	while (mask < 2 * n)
		mask = mask * 2 + 1;
	if ((last = calloc(mask + 1, sizeof(*last))) == NULL) {
		b->err = -ENOMEM;
		return;
	}
	w->hca_size = v->hca_size;
	w->prev_ts = start_ns;
	ct_put(b, "{", 1);
	ct_put_fields(b, codec_vital_fields, v, 0);
	ct_put_hca_gaps(b, v);
	ct_put(b, ",\"samples\":[", 12);
	for (i = 0; i < n; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_row(
		    b, s, i, ct_repeat_of(s, w->entry, i, last, mask), w);
	}
	ct_put(b, "]}", 2);
	w->entry += 2 * (size_t)n;
	free(last);
}

/* The tables, then the vitals, in the compact form. */
static void
ct_put_vitals_compact(struct ct_buf *b, const struct vitals_epoch *e)
{
	struct ct_rows w = { 0 };
	struct ct_tabs t;
	uint32_t i;
	int r;

	memset(&t, 0, sizeof(t));
	if ((r = ct_tabs_build(&t, e)) != 0) {
		b->err = r;
		ct_tabs_free(&t);
		return;
	}
	ct_put_tabs(b, &t);
	ct_put(b, ",\"vitals\":[", 11);
	w.entry = t.row;
	for (i = 0; e->vitals != NULL && i < e->nvitals; i++) {
		if (i > 0)
			ct_put(b, ",", 1);
		ct_put_vital_compact(b, &e->vitals[i], &w, e->start_ns);
	}
	ct_put(b, "]", 1);
	ct_tabs_free(&t);
}

/* The whole epoch into b, in format (CODEC_FORMAT_*). */
static void
ct_put_epoch(struct ct_buf *b, const struct vitals_epoch *e, int format)
{
	uint32_t i;

	ct_put(b, "{\"format\":", 10);
	ct_put_int(b, format);
	ct_put_fields(b, codec_epoch_fields, e, 1);
	if (format == CODEC_FORMAT_COMPACT)
		ct_put_vitals_compact(b, e);
	else
		ct_put_vitals(b, e);
	ct_put(b, ",\"findings\":[", 13);
	for (i = 0; e->findings != NULL && i < e->nfindings; i++) {
		ct_put(b, i > 0 ? ",{" : "{", i > 0 ? 2 : 1);
		ct_put_fields(b, codec_finding_fields, &e->findings[i], 0);
		ct_put(b, "}", 1);
	}
	ct_put(b, "]", 1);
	ct_put_metrics(b, e);
	ct_put(b, ",\"modules\":[", 12);
	for (i = 0; e->modules != NULL && i < e->nmodules; i++) {
		ct_put(b, i > 0 ? ",{" : "{", i > 0 ? 2 : 1);
		ct_put_fields(b, codec_module_fields, &e->modules[i], 0);
		ct_put(b, "}", 1);
	}
	ct_put(b, "]}", 2);
}

/* e (borrowed) in format to sink, CT_CHUNK bytes at a time. */
static int
ct_write(
    const struct vitals_epoch *e, int format, codec_sink_fn sink, void *arg)
{
	struct ct_buf b = { NULL, 0, 0, 0, sink, arg };

	if ((b.p = malloc(CT_CHUNK)) == NULL)
		return -ENOMEM;
	b.cap = CT_CHUNK;
	ct_put_epoch(&b, e, format);
	if (b.err == 0)
		ct_flush(&b);
	free(b.p);
	return b.err;
}

/* e (borrowed) in format as one malloc'd NUL-terminated text. */
static int
ct_encode(const struct vitals_epoch *e, int format, char **out, size_t *len)
{
	struct ct_buf b = { NULL, 0, 0, 0, NULL, NULL };

	ct_put_epoch(&b, e, format);
	if (ct_room(&b, 1) != 0) {
		free(b.p);
		return b.err;
	}
	b.p[b.n] = '\0';
	*out = b.p;
	*len = b.n;
	return 0;
}

/*
 * e (borrowed) as compact JSON text of format 1, handed to sink in
 * chunks of at most CT_CHUNK bytes: 0, the sink's negative errno, or
 * -ENOMEM.
 */
int
codec_text_write(const struct vitals_epoch *e, codec_sink_fn sink, void *arg)
{
	return ct_write(e, CODEC_FORMAT_FULL, sink, arg);
}

/*
 * e (borrowed) as compact JSON text of format 1: 0 with a malloc'd
 * NUL-terminated text (the caller's) in *out and its length in *len, or
 * -ENOMEM.
 */
int
codec_text_encode(const struct vitals_epoch *e, char **out, size_t *len)
{
	return ct_encode(e, CODEC_FORMAT_FULL, out, len);
}

/* The same in the compact form, to sink: as codec_text_write. */
int
codec_compact_write(const struct vitals_epoch *e, codec_sink_fn sink, void *arg)
{
	return ct_write(e, CODEC_FORMAT_COMPACT, sink, arg);
}

/* The same in the compact form, in one piece: as codec_text_encode. */
int
codec_compact_encode(const struct vitals_epoch *e, char **out, size_t *len)
{
	return ct_encode(e, CODEC_FORMAT_COMPACT, out, len);
}
