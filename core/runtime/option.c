/* SPDX-License-Identifier: MIT */
/*
 * Option tables: the scalar forms every option type accepts (bool, integer,
 * number, duration, size, comma list), the typed setter that reads one
 * into a block for plugins' options and the core's settings alike, and
 * the filling of a plugin's config block from the raw entries config.c
 * kept, with their YAML positions.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "option.h"

#define NS_PER_S 1000000000ULL

/* A type's name and what a message says it expected. */
static const struct option_kind {
	const char *name;
	const char *expected;
} option_kinds[] = {
	[VITALS_OPT_BOOL] = { "bool",
	    "a boolean (true/false, yes/no, on/off)" },
	[VITALS_OPT_INT] = { "int", "an integer" },
	[VITALS_OPT_DOUBLE] = { "double", "a number" },
	[VITALS_OPT_STRING] = { "string", "a string" },
	[VITALS_OPT_DURATION] = { "duration",
	    "a duration (e.g. 250ms, 5s, 2m, 1h)" },
	[VITALS_OPT_SIZE] = { "size", "a size (e.g. 512, 64K, 16M, 1G)" },
	[VITALS_OPT_STRLIST] = { "list", "a list of strings" },
};
#define OPTION_NKINDS (sizeof(option_kinds) / sizeof(option_kinds[0]))

/* What option_fill is working on, for messages. */
struct option_ctx {
	void *block; /* the config block being filled */
	const char *file; /* configuration file named in messages */
	char *err; /* message buffer, may be NULL */
	size_t errlen; /* its size */
};

/* ---- scalar parsers ---- */

/* Parse true/false, yes/no, on/off or 1/0, any case.  Returns 0 or -EINVAL. */
int
option_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	if (s == NULL)
		return -EINVAL;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* Parse a decimal int64 with an optional sign.  Returns 0 or -EINVAL. */
int
option_parse_int(const char *s, int64_t *out)
{
	long long v;
	char *end;

	/* strtoll would skip leading blanks; the whole string must be a number. */
	if (s == NULL ||
	    (!isdigit((unsigned char)s[0]) && s[0] != '-' && s[0] != '+'))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* Parse a finite number (strtod syntax).  Returns 0 or -EINVAL. */
int
option_parse_double(const char *s, double *out)
{
	double v;
	char *end;

	if (s == NULL || s[0] == '\0' || isspace((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Parse an unsigned decimal "123" or "1.25" at s: the integer part exactly
 * (so that large counts of nanoseconds or bytes keep every digit), the
 * fraction as a double.  *end receives the first character after it.
 */
static int
option_decimal(const char *s, uint64_t *ip, double *fp, const char **end)
{
	uint64_t v = 0;
	double f = 0, scale = 0.1;
	unsigned d;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return -EINVAL;
		for (; isdigit((unsigned char)*s); s++, scale /= 10)
			f += (*s - '0') * scale;
	}
	*ip = v;
	*fp = f;
	*end = s;
	return 0;
}

/* ip.fp times mult, rounded to the nearest unit; -EINVAL on overflow. */
static int
option_scale(uint64_t ip, double fp, uint64_t mult, uint64_t *out)
{
	uint64_t whole, frac;

	if (ip > UINT64_MAX / mult)
		return -EINVAL;
	whole = ip * mult;
	frac = (uint64_t)(fp * (double)mult + 0.5);
	if (frac > UINT64_MAX - whole)
		return -EINVAL;
	*out = whole + frac;
	return 0;
}

/*
 * Parse a non-negative duration, "1.5s" or "250ms" (units ns, us, ms, s, m,
 * h, d; none means seconds) into nanoseconds.  Returns 0 or -EINVAL, also
 * on overflow.
 */
int
option_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t mult;
	} units[] = {
		{ "", NS_PER_S },
		{ "ns", 1 },
		{ "us", 1000 },
		{ "ms", 1000000 },
		{ "s", NS_PER_S },
		{ "m", 60 * NS_PER_S },
		{ "h", 3600 * NS_PER_S },
		{ "d", 86400 * NS_PER_S },
	};
	const char *end;
	uint64_t ip;
	double fp;
	size_t i;

	if (s == NULL || option_decimal(s, &ip, &fp, &end) != 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0)
			return option_scale(ip, fp, units[i].mult, ns);
	return -EINVAL;
}

/*
 * Parse a size in bytes: a number, an optional K, M, G, T, P or E (powers
 * of 1024, any case), then an optional "B" or, after a prefix, "iB".
 * Returns 0 or -EINVAL, also on overflow.
 */
int
option_parse_size(const char *s, uint64_t *bytes)
{
	static const char prefixes[] = "KMGTPE";
	const char *end, *p = NULL;
	uint64_t ip, mult = 1;
	double fp;

	if (s == NULL || option_decimal(s, &ip, &fp, &end) != 0)
		return -EINVAL;
	if (*end != '\0' &&
	    (p = strchr(prefixes, toupper((unsigned char)*end))) != NULL) {
		mult = 1ULL << (10 * (p - prefixes + 1));
		end++;
	}
	if (*end == 'B')
		end++;
	else if (p != NULL && end[0] == 'i' && end[1] == 'B')
		end += 2;
	/* A fraction of a byte means nothing. */
	if (*end != '\0' || (mult == 1 && fp != 0))
		return -EINVAL;
	return option_scale(ip, fp, mult, bytes);
}

/* The type's name for messages ("bool", "duration"...); a static string. */
const char *
option_type_name(uint32_t type)
{
	if (type >= OPTION_NKINDS || option_kinds[type].name == NULL)
		return "unknown";
	return option_kinds[type].name;
}

/* What a message says an option of this type expects. */
static const char *
option_expected(uint32_t type)
{
	if (type >= OPTION_NKINDS || option_kinds[type].expected == NULL)
		return "a value";
	return option_kinds[type].expected;
}

/* ---- lists ---- */

static void
option_list_free(struct vitals_strlist *l)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->n = 0;
	l->v = NULL;
}

/* Append a copy of s[0..len) to l, whose v has room.  Returns 0 or -ENOMEM. */
static int
option_list_add(struct vitals_strlist *l, const char *s, size_t len)
{
	if ((l->v[l->n] = strndup(s, len)) == NULL)
		return -ENOMEM;
	l->n++;
	return 0;
}

/* Split "a, b,c" into l, trimming blanks and dropping empty items. */
static int
option_list_split(const char *s, struct vitals_strlist *l)
{
	const char *p, *q, *e;
	size_t n = 1;

	for (p = s; *p != '\0'; p++)
		n += *p == ',';
	if ((l->v = calloc(n, sizeof(*l->v))) == NULL)
		return -ENOMEM;
	for (p = s; p != NULL; p = *e == ',' ? e + 1 : NULL) {
		e = p + strcspn(p, ",");
		for (q = e; q > p && isspace((unsigned char)q[-1]); q--)
			;
		while (p < q && isspace((unsigned char)*p))
			p++;
		if (p < q && option_list_add(l, p, (size_t)(q - p)) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Copy a YAML sequence's items into l. */
static int
option_list_copy(char *const *items, uint32_t n, struct vitals_strlist *l)
{
	uint32_t i;

	if ((l->v = calloc(n ? n : 1, sizeof(*l->v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (option_list_add(l, items[i], strlen(items[i])) != 0)
			return -ENOMEM;
	return 0;
}

/* ---- filling a block ---- */

/* Whether v is outside o's bounds (which apply only when min < max). */
static int
option_out_of_range(const struct vitals_option *o, double v)
{
	return o->min < o->max && (v < o->min || v > o->max);
}

/* An OPTION_UINT32 or OPTION_UINT64 value of o into p. */
static int
option_set_uint(const struct vitals_option *o, void *p, const char *text)
{
	int64_t v;

	if (option_parse_int(text, &v) != 0 || v < 0 ||
	    (o->type == OPTION_UINT32 && v > UINT32_MAX))
		return -EINVAL;
	if (option_out_of_range(o, (double)v))
		return -ERANGE;
	if (o->type == OPTION_UINT32)
		*(uint32_t *)p = (uint32_t)v;
	else
		*(uint64_t *)p = (uint64_t)v;
	return 0;
}

/*
 * Parse text as o's type into its member of block, replacing (and
 * freeing) what was there.  Returns 0, -EINVAL if text does not parse,
 * -ERANGE if it is out of bounds, or -ENOMEM.
 */
int
option_set(const struct vitals_option *o, void *block, const char *text)
{
	void *p = (char *)block + o->offset;
	struct vitals_strlist l = { 0, NULL };
	union {
		int b;
		int64_t i;
		double d;
		uint64_t u;
	} v;
	char *s;

	switch (o->type) {
	case VITALS_OPT_BOOL:
		if (option_parse_bool(text, &v.b) != 0)
			return -EINVAL;
		*(int *)p = v.b;
		return 0;
	case VITALS_OPT_INT:
		if (option_parse_int(text, &v.i) != 0)
			return -EINVAL;
		if (option_out_of_range(o, (double)v.i))
			return -ERANGE;
		*(int64_t *)p = v.i;
		return 0;
	case VITALS_OPT_DOUBLE:
		if (option_parse_double(text, &v.d) != 0)
			return -EINVAL;
		if (option_out_of_range(o, v.d))
			return -ERANGE;
		*(double *)p = v.d;
		return 0;
	case VITALS_OPT_STRING:
		if ((s = strdup(text)) == NULL)
			return -ENOMEM;
		free(*(char **)p);
		*(char **)p = s;
		return 0;
	case VITALS_OPT_DURATION:
		if (option_parse_duration(text, &v.u) != 0)
			return -EINVAL;
		if (option_out_of_range(o, (double)v.u / (double)NS_PER_S))
			return -ERANGE;
		*(uint64_t *)p = v.u;
		return 0;
	case VITALS_OPT_SIZE:
		if (option_parse_size(text, &v.u) != 0)
			return -EINVAL;
		if (option_out_of_range(o, (double)v.u))
			return -ERANGE;
		*(uint64_t *)p = v.u;
		return 0;
	case VITALS_OPT_STRLIST:
		if (option_list_split(text, &l) != 0) {
			option_list_free(&l);
			return -ENOMEM;
		}
		option_list_free(p);
		*(struct vitals_strlist *)p = l;
		return 0;
	case OPTION_UINT32:
	case OPTION_UINT64:
		return option_set_uint(o, p, text);
	}
	return -EINVAL;
}

int
vitals_options_check(const struct vitals_option *table, const void *config,
    char *why, size_t len)
{
	const struct vitals_option *o;
	const char *p;
	double v;

	for (o = table; o != NULL && o->key != NULL; o++) {
		p = (const char *)config + o->offset;
		if (o->type == VITALS_OPT_INT)
			v = (double)*(const int64_t *)p;
		else if (o->type == VITALS_OPT_DOUBLE)
			v = *(const double *)p;
		else if (o->type == VITALS_OPT_DURATION)
			v = (double)*(const uint64_t *)p / (double)NS_PER_S;
		else if (o->type == VITALS_OPT_SIZE)
			v = (double)*(const uint64_t *)p;
		else
			continue;
		/* NaN is out of every range. */
		if (o->min < o->max && !(v >= o->min && v <= o->max)) {
			snprintf(
			    why, len, "option '%s' is out of range", o->key);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Set STRLIST option o of block to a copy of items[0..n) (a YAML
 * sequence), replacing what was there.  Returns 0, -EINVAL if o is not a
 * list, or -ENOMEM.
 */
int
option_set_list(
    const struct vitals_option *o, void *block, char *const *items, uint32_t n)
{
	struct vitals_strlist *l = (void *)((char *)block + o->offset);

	if (o->type != VITALS_OPT_STRLIST)
		return -EINVAL;
	option_list_free(l);
	return option_list_copy(items, n, l);
}

/* Write "FILE:LINE:COL: message" (no position when line is 0). */
static int option_error(struct option_ctx *x, uint32_t line, uint32_t col,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
option_error(
    struct option_ctx *x, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (x->err == NULL || x->errlen == 0)
		return -EINVAL;
	if (line > 0)
		n = snprintf(
		    x->err, x->errlen, "%s:%u:%u: ", x->file, line, col);
	else
		n = snprintf(x->err, x->errlen, "%s: ", x->file);
	if (n < 0 || (size_t)n >= x->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Report a value outside o's bounds, bounds in the option's own units. */
static int
option_range_error(struct option_ctx *x, const struct vitals_option *o,
    const struct config_entry *e)
{
	const char *unit = "";

	if (o->type == VITALS_OPT_DURATION)
		unit = "s";
	else if (o->type == VITALS_OPT_SIZE)
		unit = "B";
	return option_error(x, e->vline, e->vcol,
	    "option '%s': %s is out of range [%.15g%s, %.15g%s]", o->key,
	    e->scalar, o->min, unit, o->max, unit);
}

/* Set o to its default: zero, then the parsed `def` text if any. */
static int
option_default(struct option_ctx *x, const struct vitals_option *o)
{
	static const size_t sizes[] = {
		[VITALS_OPT_BOOL] = sizeof(int),
		[VITALS_OPT_INT] = sizeof(int64_t),
		[VITALS_OPT_DOUBLE] = sizeof(double),
		[VITALS_OPT_STRING] = sizeof(char *),
		[VITALS_OPT_DURATION] = sizeof(uint64_t),
		[VITALS_OPT_SIZE] = sizeof(uint64_t),
		[VITALS_OPT_STRLIST] = sizeof(struct vitals_strlist),
	};
	int r;

	if (o->type >= OPTION_NKINDS || sizes[o->type] == 0)
		return option_error(
		    x, 0, 0, "option '%s': unknown type %u", o->key, o->type);
	memset((char *)x->block + o->offset, 0, sizes[o->type]);
	if (o->def == NULL)
		return 0;
	if ((r = option_set(o, x->block, o->def)) == -ENOMEM) {
		option_error(x, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if (r != 0)
		return option_error(x, 0, 0,
		    "option '%s': bad default \"%s\" (expected %s%s)", o->key,
		    o->def, option_expected(o->type),
		    r == -ERANGE ? " within its bounds" : "");
	return 0;
}

/* Set o from e: a sequence only for lists; a NULL scalar keeps the default. */
static int
option_value(struct option_ctx *x, const struct vitals_option *o,
    const struct config_entry *e)
{
	int r;

	if (e->is_seq && o->type == VITALS_OPT_STRLIST) {
		r = option_set_list(o, x->block, e->items, e->nitems);
	} else if (e->is_seq) {
		return option_error(x, e->vline, e->vcol,
		    "option '%s': expected %s, got a sequence", o->key,
		    option_expected(o->type));
	} else if (e->scalar == NULL) {
		return 0;
	} else
		r = option_set(o, x->block, e->scalar);
	if (r == -ENOMEM) {
		option_error(x, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if (r == -ERANGE)
		return option_range_error(x, o, e);
	if (r != 0)
		return option_error(x, e->vline, e->vcol,
		    "option '%s': expected %s, got \"%s\"", o->key,
		    option_expected(o->type), e->scalar);
	return 0;
}

/* Append s to the string in buf, truncating to len. */
static void
option_append(char *buf, size_t len, const char *s)
{
	size_t used = strnlen(buf, len);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s", s);
}

/* Report an unknown key, listing the table's keys. */
static int
option_unknown(struct option_ctx *x, const struct vitals_option *table,
    const struct config_entry *e)
{
	const struct vitals_option *o;

	option_error(x, e->line, e->col, "unknown option '%s' (", e->key);
	if (x->err == NULL || x->errlen == 0)
		return -EINVAL;
	if (table == NULL || table->key == NULL)
		option_append(x->err, x->errlen, "this plugin has no options");
	else
		option_append(x->err, x->errlen, "valid: ");
	for (o = table; o != NULL && o->key != NULL; o++) {
		if (o != table)
			option_append(x->err, x->errlen, ", ");
		option_append(x->err, x->errlen, o->key);
	}
	option_append(x->err, x->errlen, ")");
	return -EINVAL;
}

/* The option called key in table, or NULL. */
const struct vitals_option *
option_find(const struct vitals_option *table, const char *key)
{
	const struct vitals_option *o;

	for (o = table; o != NULL && o->key != NULL; o++)
		if (strcmp(o->key, key) == 0)
			return o;
	return NULL;
}

/*
 * Fill block (which must hold no strings or lists yet: zeroed or freed
 * with option_free) from table's defaults, then from entries[0..n), which
 * are borrowed.  Strings and lists put in block are owned by the caller,
 * to be freed with option_free.  Returns 0, -EINVAL with "FILE:LINE:COL:
 * ..." in err, or -ENOMEM.
 */
int
option_fill(const struct vitals_option *table, void *block,
    const struct config_entry *entries, size_t n, const char *file, char *err,
    size_t errlen)
{
	struct option_ctx x = { block, file ? file : "config", err, errlen };
	const struct vitals_option *o;
	size_t i;
	int r;

	for (o = table; o != NULL && o->key != NULL; o++)
		if ((r = option_default(&x, o)) != 0)
			return r;
	for (i = 0; i < n; i++) {
		if ((o = option_find(table, entries[i].key)) == NULL)
			return option_unknown(&x, table, &entries[i]);
		if ((r = option_value(&x, o, &entries[i])) != 0)
			return r;
	}
	return 0;
}

/* Free block's STRING and STRLIST members, clearing them; table may be NULL. */
void
option_free(const struct vitals_option *table, void *block)
{
	const struct vitals_option *o;
	char **s;

	for (o = table; block != NULL && o != NULL && o->key != NULL; o++) {
		if (o->type == VITALS_OPT_STRING) {
			s = (char **)((char *)block + o->offset);
			free(*s);
			*s = NULL;
		} else if (o->type == VITALS_OPT_STRLIST)
			option_list_free((void *)((char *)block + o->offset));
	}
}
