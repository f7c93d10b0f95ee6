/* SPDX-License-Identifier: MIT */
/*
 * The daemon's YAML configuration, read with libyaml's document API so that
 * every message names the file, line and column.  Global settings and
 * sketch sizes are checked here; plugin options are kept raw for
 * option_fill, which knows each plugin's table.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "codec.h"
#include "config.h"
#include "option.h"
#include "safefile.h"

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#define CONFIG_DATA_DIR LOCALSTATEDIR "/lib/vitals"
/* Largest configuration file read. */
#define CONFIG_MAX_FILE (4u << 20)

#define NS_PER_S 1000000000ULL
#define CFG_STR(x) #x
#define CFG_XSTR(x) CFG_STR(x)

/* The state of one config_load. */
struct cfg {
	const char *file; /* path named in messages */
	yaml_document_t *doc; /* the parsed document */
	struct config *c; /* the configuration being built */
	char *err; /* message buffer, may be NULL */
	size_t errlen; /* its size */
	char path[256]; /* dotted prefix of the mapping read ("sketch.") */
};

struct cfg_key;
typedef int cfg_fn(struct cfg *, const struct cfg_key *, yaml_node_t *, void *);
/* What cfg_value checks of a scalar s (node v) before option_set reads it. */
typedef int cfg_check_fn(
    struct cfg *, const struct cfg_key *, yaml_node_t *, const char *);

/*
 * A setting: declared as a plugin's option is (key, type, offset in
 * struct config or struct config_sketch, bounds), read by option.c's
 * option_set, plus what only the core's settings have.
 */
struct cfg_key {
	struct vitals_option opt; /* key, type and where it goes; the bounds */
	cfg_fn *fn; /* reads the value node: cfg_value, or the setting's own */
	unsigned flags; /* CFG_* */
	uint32_t kind; /* VITALS_PLUGIN_* for the plugin sections */
	const char *expect; /* what a bad value message says was expected */
	cfg_check_fn *check; /* for cfg_value: what the type cannot say */
};
#define CFG_SKETCH 0x1u /* member of struct config_sketch, not struct config */
#define CFG_POW2 0x4u /* a power of two */

/* A setting declared as an option: default text def, no help line. */
/* clang-format off */
#define CFG_OPT_DEF(key, type, off, def, min, max) \
	{ key, type, (uint32_t)(off), def, NULL, min, max }
/* clang-format on */
#define CFG_OPT(key, type, off, min, max) \
	CFG_OPT_DEF(key, type, off, NULL, min, max)
/* No upper bound (option_set checks bounds only when min < max). */
#define CFG_NOMAX HUGE_VAL

/* A key found in a mapping and its value. */
struct cfg_seen {
	yaml_node_t *key;
	yaml_node_t *val;
};
#define CFG_MAXKEYS 16

/* ---- messages ---- */

static int
cfg_verror(struct cfg *x, const yaml_mark_t *m, const char *fmt, va_list ap)
{
	int n;

	if (x->err == NULL || x->errlen == 0)
		return -EINVAL;
	if (m != NULL)
		n = snprintf(x->err, x->errlen, "%s:%lu:%lu: ", x->file,
		    (unsigned long)m->line + 1, (unsigned long)m->column + 1);
	else
		n = snprintf(x->err, x->errlen, "%s: ", x->file);
	if (n >= 0 && (size_t)n < x->errlen)
		vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
	return -EINVAL;
}

/* Write "FILE:LINE:COL: message" at node n (no position if n is NULL). */
static int cfg_error(struct cfg *x, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
cfg_error(struct cfg *x, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verror(x, n != NULL ? &n->start_mark : NULL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The same at an explicit mark. */
static int cfg_error_at(struct cfg *x, const yaml_mark_t *m, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static int
cfg_error_at(struct cfg *x, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verror(x, m, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
cfg_nomem(struct cfg *x)
{
	cfg_error(x, NULL, "out of memory");
	return -ENOMEM;
}

/* Append s to the string in buf, truncating to len. */
static void
cfg_append(char *buf, size_t len, const char *s)
{
	size_t used = strnlen(buf, len);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s", s);
}

/* ---- nodes ---- */

static yaml_node_t *
cfg_node(struct cfg *x, int i)
{
	return yaml_document_get_node(x->doc, i);
}

/* Whether n is a YAML null: an empty or ~/null plain scalar. */
static int
cfg_is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	size_t i;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp((const char *)n->data.scalar.value, nulls[i]) == 0)
			return 1;
	return 0;
}

/* Describe what n is, for "got ..." in messages. */
static const char *
cfg_got(const yaml_node_t *n, char *buf, size_t len)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a sequence";
	snprintf(buf, len, "\"%s\"", (const char *)n->data.scalar.value);
	return buf;
}

/* Set *name to key node n's text; keys must be scalars. */
static int
cfg_keyname(struct cfg *x, const yaml_node_t *n, const char **name)
{
	if (n->type != YAML_SCALAR_NODE)
		return cfg_error(x, n, "keys must be scalars, got %s",
		    n->type == YAML_MAPPING_NODE ? "a mapping" : "a sequence");
	*name = (const char *)n->data.scalar.value;
	return 0;
}

/* The key node before pair p in mapping map with the same text, or NULL. */
static yaml_node_t *
cfg_earlier(
    struct cfg *x, yaml_node_t *map, yaml_node_pair_t *p, const char *name)
{
	yaml_node_pair_t *q;
	yaml_node_t *k;

	for (q = map->data.mapping.pairs.start; q < p; q++) {
		k = cfg_node(x, q->key);
		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, name) == 0)
			return k;
	}
	return NULL;
}

/* Extend the dotted path with "name."; returns the length to restore. */
static size_t
cfg_push(struct cfg *x, const char *name)
{
	size_t len = strlen(x->path);

	snprintf(x->path + len, sizeof(x->path) - len, "%s.", name);
	return len;
}

static void
cfg_pop(struct cfg *x, size_t len)
{
	x->path[len] = '\0';
}

/* ---- scalar settings ---- */

static int
cfg_bad(struct cfg *x, const struct cfg_key *k, const yaml_node_t *v)
{
	char got[160];

	return cfg_error(x, v, "setting '%s%s': expected %s, got %s", x->path,
	    k->opt.key, k->expect, cfg_got(v, got, sizeof(got)));
}

/* 1 and *s if v is a scalar, 0 if it is null (the default stays), or error. */
static int
cfg_scalar(struct cfg *x, const struct cfg_key *k, const yaml_node_t *v,
    const char **s)
{
	if (cfg_is_null(v))
		return 0;
	if (v->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, v);
	*s = (const char *)v->data.scalar.value;
	return 1;
}

/*
 * A setting of a plain type, read by option_set as a plugin's option is,
 * after its own check (k->check) if it has one; a string must not be
 * empty.
 */
static int
cfg_value(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	const char *p = (const char *)base + k->opt.offset;
	uint64_t n;
	const char *s = NULL;
	int r;

	if ((r = cfg_scalar(x, k, v, &s)) <= 0)
		return r;
	if (k->check != NULL && (r = k->check(x, k, v, s)) != 0)
		return r;
	if (k->opt.type == VITALS_OPT_STRING && *s == '\0')
		return cfg_bad(x, k, v);
	if ((r = option_set(&k->opt, base, s)) == -ENOMEM)
		return cfg_nomem(x);
	if (r != 0)
		return cfg_bad(x, k, v);
	if (k->flags & CFG_POW2) {
		n = k->opt.type == OPTION_UINT32 ? *(const uint32_t *)p
						 : *(const uint64_t *)p;
		if ((n & (n - 1)) != 0)
			return cfg_bad(x, k, v);
	}
	return 0;
}

/*
 * `host`: epoch files are named after it, so what cannot be in a file
 * name, or would make the name too long to store, is refused here rather
 * than at every epoch.
 */
static int
cfg_host(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, const char *s)
{
	char why[160];

	if (codec_host_check(s, v->data.scalar.length, why, sizeof(why)) != 0)
		return cfg_error(x, v, "setting '%s': %s", k->opt.key, why);
	return 0;
}

/*
 * `data_dir`: an absolute path (the daemon's working directory is no
 * place to look for it) with room for the date dirs and file names.
 */
static int
cfg_data_dir(
    struct cfg *x, const struct cfg_key *k, yaml_node_t *v, const char *s)
{
	if (memchr(s, '\0', v->data.scalar.length) != NULL)
		return cfg_error(x, v,
		    "setting '%s': a NUL byte cannot be in "
		    "a path",
		    k->opt.key);
	if (s[0] != '/')
		return cfg_error(x, v,
		    "setting '%s': expected an absolute "
		    "path, got '%s'",
		    k->opt.key, s);
	if (strlen(s) > CONFIG_DATA_DIR_MAX)
		return cfg_error(x, v,
		    "setting '%s': %zu bytes, more than "
		    "the %d a data dir may have",
		    k->opt.key, strlen(s), CONFIG_DATA_DIR_MAX);
	x->c->data_dir_line = (uint32_t)v->start_mark.line + 1;
	x->c->data_dir_col = (uint32_t)v->start_mark.column + 1;
	return 0;
}

static int
cfg_log(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, const char *s)
{
	if (strcmp(s, "stderr") != 0 && strcmp(s, "syslog") != 0)
		return cfg_bad(x, k, v);
	return 0;
}

static int
cfg_log_level(
    struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	static const struct {
		const char *name;
		int level;
	} levels[] = {
		{ "error", VITALS_LOG_ERR },
		{ "warn", VITALS_LOG_WARN },
		{ "info", VITALS_LOG_INFO },
		{ "debug", VITALS_LOG_DEBUG },
	};
	const char *s = NULL;
	size_t i;
	int r;

	if ((r = cfg_scalar(x, k, v, &s)) <= 0)
		return r;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcmp(s, levels[i].name) == 0) {
			*(int *)((char *)base + k->opt.offset) =
			    levels[i].level;
			return 0;
		}
	}
	return cfg_bad(x, k, v);
}

/* ---- raw entries ---- */

static void
cfg_entry_free(struct config_entry *e)
{
	uint32_t i;

	free(e->key);
	free(e->scalar);
	for (i = 0; i < e->nitems; i++)
		free(e->items[i]);
	free(e->items);
}

/* Copy sequence v's scalar items into e; `what` names it in messages. */
static int
cfg_entry_items(
    struct cfg *x, struct config_entry *e, yaml_node_t *v, const char *what)
{
	yaml_node_item_t *it = v->data.sequence.items.start;
	size_t n = (size_t)(v->data.sequence.items.top - it);
	yaml_node_t *item;
	const char *s = NULL;

	e->is_seq = 1;
	if ((e->items = calloc(n ? n : 1, sizeof(*e->items))) == NULL)
		return cfg_nomem(x);
	for (; it < v->data.sequence.items.top; it++) {
		item = cfg_node(x, *it);
		if (item->type != YAML_SCALAR_NODE)
			return cfg_error(x, item,
			    "%s: list items must be scalars, got %s", what,
			    item->type == YAML_MAPPING_NODE ? "a mapping"
							    : "a sequence");
		s = cfg_is_null(item) ? ""
				      : (const char *)item->data.scalar.value;
		if ((e->items[e->nitems] = strdup(s)) == NULL)
			return cfg_nomem(x);
		e->nitems++;
	}
	return 0;
}

/*
 * Fill e from key `key` written at mark km and value node v: a scalar
 * (NULL for a YAML null) or a sequence of scalars.  A mapping is an error
 * naming `what`.
 */
static int
cfg_entry(struct cfg *x, struct config_entry *e, const char *key,
    const yaml_mark_t *km, yaml_node_t *v, const char *what)
{
	if ((e->key = strdup(key)) == NULL)
		return cfg_nomem(x);
	e->line = (uint32_t)km->line + 1;
	e->col = (uint32_t)km->column + 1;
	e->vline = (uint32_t)v->start_mark.line + 1;
	e->vcol = (uint32_t)v->start_mark.column + 1;
	if (v->type == YAML_SEQUENCE_NODE)
		return cfg_entry_items(x, e, v, what);
	if (v->type == YAML_MAPPING_NODE)
		return cfg_error(x, v,
		    "%s: expected a scalar or a list, got "
		    "a mapping",
		    what);
	if (!cfg_is_null(v) &&
	    (e->scalar = strdup((const char *)v->data.scalar.value)) == NULL)
		return cfg_nomem(x);
	return 0;
}

/* plugin_path: a sequence or a comma list, read as a STRLIST option. */
static int
cfg_plugin_path(
    struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	const struct vitals_option table[] = { k->opt,
		{ NULL, 0, 0, NULL, NULL, 0, 0 } };
	struct config_entry e;
	char what[300];
	int r;

	memset(&e, 0, sizeof(e));
	snprintf(what, sizeof(what), "setting '%s%s'", x->path, k->opt.key);
	if ((r = cfg_entry(x, &e, k->opt.key, &v->start_mark, v, what)) == 0)
		r = option_fill(table, base, &e, 1, x->file, x->err, x->errlen);
	cfg_entry_free(&e);
	return r;
}

/* ---- timescales ---- */

/* Default rollup timescales, dropped where they do not fit the epoch. */
static const uint32_t cfg_default_timescales[] = { 300, 3600, 86400 };

/*
 * Check one timescale (text s at node n) against the epoch and those
 * already read, and insert it in ascending order.
 */
static int
cfg_timescale_add(struct cfg *x, const yaml_node_t *n, const char *s)
{
	struct config *c = x->c;
	uint64_t ns;
	uint32_t i, sec;

	if (option_parse_duration(s, &ns) != 0 || ns == 0 ||
	    ns % NS_PER_S != 0 || ns / NS_PER_S > UINT32_MAX)
		return cfg_error(x, n,
		    "setting 'timescales': expected a "
		    "duration in whole seconds (e.g. 5m, 1h, 1d), got \"%s\"",
		    s);
	if (ns <= c->epoch_ns || ns % c->epoch_ns != 0)
		return cfg_error(x, n,
		    "setting 'timescales': %s is not a "
		    "multiple of the epoch (%.3gs) longer than it",
		    s, (double)c->epoch_ns / NS_PER_S);
	sec = (uint32_t)(ns / NS_PER_S);
	for (i = 0; i < c->ntimescales; i++)
		if (c->timescales[i] == sec)
			return cfg_error(x, n,
			    "setting 'timescales': %s is "
			    "given twice",
			    s);
	if (c->ntimescales == CONFIG_MAX_TIMESCALES)
		return cfg_error(x, n,
		    "setting 'timescales': more than " CFG_XSTR(
			CONFIG_MAX_TIMESCALES) " timescales");
	for (i = c->ntimescales; i > 0 && c->timescales[i - 1] > sec; i--)
		c->timescales[i] = c->timescales[i - 1];
	c->timescales[i] = sec;
	c->ntimescales++;
	return 0;
}

/* timescales: a sequence of durations, or one comma-separated scalar. */
static int
cfg_timescales(
    struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	yaml_node_item_t *it;
	yaml_node_t *item;
	char buf[256], *tok, *save = NULL;
	int r;

	(void)base;
	x->c->ntimescales = 0;
	if (cfg_is_null(v))
		return 0;
	if (v->type == YAML_MAPPING_NODE)
		return cfg_bad(x, k, v);
	if (v->type == YAML_SCALAR_NODE) {
		snprintf(
		    buf, sizeof(buf), "%s", (const char *)v->data.scalar.value);
		for (tok = strtok_r(buf, ", ", &save); tok != NULL;
		     tok = strtok_r(NULL, ", ", &save))
			if ((r = cfg_timescale_add(x, v, tok)) != 0)
				return r;
		return 0;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		item = cfg_node(x, *it);
		if (item->type != YAML_SCALAR_NODE)
			return cfg_bad(x, k, item);
		r = cfg_timescale_add(
		    x, item, (const char *)item->data.scalar.value);
		if (r != 0)
			return r;
	}
	return 0;
}

/* Without a `timescales` key: the defaults that fit the epoch. */
static void
cfg_timescales_default(struct config *c)
{
	uint32_t i;
	uint64_t ns;

	c->ntimescales = 0;
	for (i = 0; i <
	     sizeof(cfg_default_timescales) / sizeof(cfg_default_timescales[0]);
	     i++) {
		ns = (uint64_t)cfg_default_timescales[i] * NS_PER_S;
		if (ns > c->epoch_ns && ns % c->epoch_ns == 0)
			c->timescales[c->ntimescales++] =
			    cfg_default_timescales[i];
	}
}

/* ---- mappings ---- */

/* 1 if v is a mapping, 0 if it is null (nothing set), or an error. */
static int
cfg_mapping(
    struct cfg *x, const char *name, const yaml_node_t *v, const char *expect)
{
	char got[160];

	if (v->type == YAML_MAPPING_NODE)
		return 1;
	if (cfg_is_null(v))
		return 0;
	return cfg_error(x, v, "setting '%s%s': expected %s, got %s", x->path,
	    name, expect, cfg_got(v, got, sizeof(got)));
}

static int
cfg_unknown(struct cfg *x, const yaml_node_t *k, const char *name,
    const struct cfg_key *keys, size_t n)
{
	size_t i;

	cfg_error(x, k, "unknown setting '%s%s' (valid: ", x->path, name);
	for (i = 0; i < n && x->err != NULL && x->errlen > 0; i++) {
		cfg_append(x->err, x->errlen, keys[i].opt.key);
		cfg_append(x->err, x->errlen, i + 1 < n ? ", " : ")");
	}
	return -EINVAL;
}

/*
 * Match mapping map's keys against keys[0..n): an unknown or repeated key
 * is an error; seen[i] receives where key i was found, if it was.
 */
static int
cfg_collect(struct cfg *x, yaml_node_t *map, const struct cfg_key *keys,
    size_t n, struct cfg_seen *seen)
{
	yaml_node_pair_t *p;
	yaml_node_t *k;
	const char *name = NULL;
	size_t i;
	int r;

	memset(seen, 0, n * sizeof(*seen));
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		k = cfg_node(x, p->key);
		if ((r = cfg_keyname(x, k, &name)) != 0)
			return r;
		for (i = 0; i < n && strcmp(keys[i].opt.key, name) != 0; i++)
			;
		if (i == n)
			return cfg_unknown(x, k, name, keys, n);
		if (seen[i].key != NULL)
			return cfg_error(x, k,
			    "setting '%s%s' given twice "
			    "(first at line %lu, column %lu)",
			    x->path, name,
			    (unsigned long)seen[i].key->start_mark.line + 1,
			    (unsigned long)seen[i].key->start_mark.column + 1);
		seen[i].key = k;
		seen[i].val = cfg_node(x, p->value);
	}
	return 0;
}

/*
 * Read the keys from..to that were seen, in table order (so that a key
 * can rely on the ones before it), into the config or into sketch s.
 */
static int
cfg_apply(struct cfg *x, const struct cfg_key *keys, size_t from, size_t to,
    const struct cfg_seen *seen, struct config_sketch *s)
{
	void *base;
	size_t i;
	int r;

	for (i = from; i < to; i++) {
		if (seen[i].val == NULL)
			continue;
		base = (keys[i].flags & CFG_SKETCH) ? (void *)s : (void *)x->c;
		if ((r = keys[i].fn(x, &keys[i], seen[i].val, base)) != 0)
			return r;
	}
	return 0;
}

/* Read mapping v, the value of key k, against keys[0..n). */
static int
cfg_submap(struct cfg *x, const struct cfg_key *k, yaml_node_t *v,
    const struct cfg_key *keys, size_t n)
{
	struct cfg_seen seen[CFG_MAXKEYS];
	size_t len;
	int r;

	if ((r = cfg_mapping(x, k->opt.key, v, k->expect)) <= 0)
		return r;
	len = cfg_push(x, k->opt.key);
	if ((r = cfg_collect(x, v, keys, n, seen)) == 0)
		r = cfg_apply(x, keys, 0, n, seen, NULL);
	cfg_pop(x, len);
	return r;
}

/* ---- retention and sketch ---- */

static const struct cfg_key cfg_retention_keys[] = {
	{ CFG_OPT_DEF("max_age", VITALS_OPT_DURATION,
	      offsetof(struct config, retention_ns), "30d", 0, 0),
	    cfg_value, 0, 0,
	    "a duration (e.g. 12h, 30d; 0 keeps epochs forever)", NULL },
	{ CFG_OPT_DEF("max_size", VITALS_OPT_SIZE,
	      offsetof(struct config, retention_bytes), "1G", 0, 0),
	    cfg_value, 0, 0, "a size (e.g. 512M, 10G; 0 for no limit)", NULL },
};
#define CFG_NRETENTION \
	(sizeof(cfg_retention_keys) / sizeof(cfg_retention_keys[0]))

static int
cfg_retention(
    struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	(void)base;
	return cfg_submap(x, k, v, cfg_retention_keys, CFG_NRETENTION);
}

static cfg_fn cfg_vitals;

/* Indexes in cfg_sketch_keys; the per-vital keys come first. */
enum {
	SK_HCA,
	SK_SAMPLES,
	SK_STACK,
	SK_SEEN,
	SK_FLOOR,
	SK_T,
	SK_TMAX,
	SK_HCA_MAX,
	SK_NSIZES,
	SK_CPU_HIGH = SK_NSIZES,
	SK_CPU_LOW,
	SK_DISK_BUDGET,
	SK_SAMPLE_MEM,
	SK_HCA_MEM,
	SK_VITALS,
	SK_NKEYS
};

#define SK(key, type, m, def, min, max) \
	CFG_OPT_DEF(key, type, offsetof(struct config_sketch, m), def, min, max)
static const struct cfg_key cfg_sketch_keys[SK_NKEYS] = {
	[SK_HCA] = { SK("hca_size", OPTION_UINT32, hca_size, "1024", 32, 65536),
	    cfg_value, CFG_SKETCH | CFG_POW2, 0,
	    "a power of two from 32 to 65536" },
	[SK_SAMPLES] = { SK("max_samples", OPTION_UINT32, max_samples, "2048",
			     1, 1000000),
	    cfg_value, CFG_SKETCH, 0, "an integer from 1 to 1000000" },
	[SK_STACK] = { SK("stack_depth", OPTION_UINT32, stack_depth, "16", 0,
			   VITALS_STACK_MAX),
	    cfg_value, CFG_SKETCH, 0,
	    "an integer from 0 to " CFG_XSTR(VITALS_STACK_MAX) },
	[SK_SEEN] = { SK("seen_bits", OPTION_UINT32, seen_bits, "65536", 1024,
			  16777216),
	    cfg_value, CFG_SKETCH | CFG_POW2, 0,
	    "a power of two from 1024 to 16777216" },
	[SK_FLOOR] = { SK("floor", OPTION_UINT64, floor, "1", 1, CFG_NOMAX),
	    cfg_value, CFG_SKETCH, 0, "an integer >= 1" },
	[SK_T] = { SK("threshold", OPTION_UINT64, threshold, "2", 2, CFG_NOMAX),
	    cfg_value, CFG_SKETCH | CFG_POW2, 0, "a power of two >= 2" },
	[SK_TMAX] = { SK("threshold_max", OPTION_UINT64, threshold_max, "65536",
			  2, CFG_NOMAX),
	    cfg_value, CFG_SKETCH | CFG_POW2, 0,
	    "a power of two >= threshold" },
	[SK_HCA_MAX] = { SK("hca_max", OPTION_UINT32, hca_max, "16384", 32,
			     65536),
	    cfg_value, CFG_SKETCH | CFG_POW2, 0,
	    "a power of two from hca_size to 65536" },
	[SK_CPU_HIGH] = { CFG_OPT_DEF("cpu_high", VITALS_OPT_DOUBLE,
			      offsetof(struct config, cpu_high), "0.01", 0, 1),
	    cfg_value, 0, 0, "a share of one CPU from 0 to 1 (e.g. 0.01)" },
	[SK_CPU_LOW] = { CFG_OPT_DEF("cpu_low", VITALS_OPT_DOUBLE,
			     offsetof(struct config, cpu_low), "0.0025", 0, 1),
	    cfg_value, 0, 0,
	    "a share of one CPU from 0 to cpu_high (e.g. 0.0025)" },
	[SK_DISK_BUDGET] = { CFG_OPT_DEF("disk_budget", VITALS_OPT_SIZE,
				 offsetof(struct config, disk_budget), "0", 0,
				 0),
	    cfg_value, 0, 0,
	    "a size in bytes per epoch (e.g. 8K; 0: no budget)" },
	[SK_SAMPLE_MEM] = { CFG_OPT_DEF("sample_memory", VITALS_OPT_SIZE,
				offsetof(struct config, sample_memory), "768K",
				0, CFG_NOMAX),
	    cfg_value, 0, 0, "a size (e.g. 768K, 2M; 0: no bound)" },
	[SK_HCA_MEM] = { CFG_OPT_DEF("hca_memory", VITALS_OPT_SIZE,
			     offsetof(struct config, hca_memory), "1M", 0,
			     CFG_NOMAX),
	    cfg_value, 0, 0, "a size (e.g. 1M, 4M; 0: no bound but hca_max)" },
	[SK_VITALS] = { CFG_OPT("vitals", 0, 0, 0, 0), cfg_vitals, 0, 0,
	    "a mapping of vital names to sketch sizes" },
};
#undef SK

/*
 * hca_max must not be below hca_size where it was set here; where only
 * hca_size was, hca_max follows it up (a fixed size, as before hca_max).
 */
static int
cfg_hca_check(
    struct cfg *x, struct config_sketch *s, const struct cfg_seen *seen)
{
	if (s->hca_max >= s->hca_size)
		return 0;
	if (seen[SK_HCA_MAX].val == NULL) {
		s->hca_max = s->hca_size;
		return 0;
	}
	return cfg_error(x, seen[SK_HCA_MAX].val,
	    "setting '%shca_max': %u is below hca_size %u", x->path, s->hca_max,
	    s->hca_size);
}

/* threshold_max must not be below threshold, wherever each was set. */
static int
cfg_sketch_check(
    struct cfg *x, struct config_sketch *s, const struct cfg_seen *seen)
{
	int r;

	if ((r = cfg_hca_check(x, s, seen)) != 0)
		return r;
	if (s->threshold_max >= s->threshold)
		return 0;
	if (seen[SK_TMAX].val != NULL)
		return cfg_error(x, seen[SK_TMAX].val,
		    "setting "
		    "'%sthreshold_max': %llu is below threshold %llu",
		    x->path, (unsigned long long)s->threshold_max,
		    (unsigned long long)s->threshold);
	return cfg_error(x, seen[SK_T].val,
	    "setting '%sthreshold': %llu is "
	    "above threshold_max %llu",
	    x->path, (unsigned long long)s->threshold,
	    (unsigned long long)s->threshold_max);
}

/* cpu_low must not be above cpu_high, wherever each was set. */
static int
cfg_cpu_check(struct cfg *x, const struct cfg_seen *seen)
{
	const struct config *c = x->c;

	if (c->cpu_low <= c->cpu_high)
		return 0;
	if (seen[SK_CPU_LOW].val != NULL)
		return cfg_error(x, seen[SK_CPU_LOW].val,
		    "setting "
		    "'%scpu_low': %g is above cpu_high %g",
		    x->path, c->cpu_low, c->cpu_high);
	return cfg_error(x, seen[SK_CPU_HIGH].val,
	    "setting '%scpu_high': %g "
	    "is below cpu_low %g (set cpu_low too)",
	    x->path, c->cpu_high, c->cpu_low);
}

static int
cfg_sketch(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	struct cfg_seen seen[CFG_MAXKEYS];
	size_t len;
	int r;

	(void)base;
	if ((r = cfg_mapping(x, k->opt.key, v, k->expect)) <= 0)
		return r;
	len = cfg_push(x, k->opt.key);
	if ((r = cfg_collect(x, v, cfg_sketch_keys, SK_NKEYS, seen)) == 0 &&
	    (r = cfg_apply(
		 x, cfg_sketch_keys, 0, SK_VITALS, seen, &x->c->sketch)) == 0 &&
	    (r = cfg_sketch_check(x, &x->c->sketch, seen)) == 0 &&
	    (r = cfg_cpu_check(x, seen)) == 0)
		r = cfg_apply(
		    x, cfg_sketch_keys, SK_VITALS, SK_NKEYS, seen, NULL);
	cfg_pop(x, len);
	return r;
}

/* A new per-vital sketch, a copy of the defaults named `name`. */
static struct config_sketch *
cfg_vital_add(struct config *c, const char *name)
{
	struct config_sketch *s;

	s = realloc(c->vital_sketch, (c->nvital_sketch + 1) * sizeof(*s));
	if (s == NULL)
		return NULL;
	c->vital_sketch = s;
	s += c->nvital_sketch;
	*s = c->sketch;
	if ((s->vital = strdup(name)) == NULL)
		return NULL;
	c->nvital_sketch++;
	return s;
}

/* One `name: {sizes}` under sketch.vitals, inheriting the defaults. */
static int
cfg_vital(struct cfg *x, yaml_node_t *map, yaml_node_pair_t *p)
{
	yaml_node_t *k = cfg_node(x, p->key), *v = cfg_node(x, p->value), *prev;
	struct cfg_seen seen[CFG_MAXKEYS];
	struct config_sketch *s;
	const char *name = NULL;
	size_t len;
	int r;

	if ((r = cfg_keyname(x, k, &name)) != 0)
		return r;
	if ((prev = cfg_earlier(x, map, p, name)) != NULL)
		return cfg_error(x, k,
		    "setting '%s%s' given twice (first at "
		    "line %lu, column %lu)",
		    x->path, name, (unsigned long)prev->start_mark.line + 1,
		    (unsigned long)prev->start_mark.column + 1);
	if ((s = cfg_vital_add(x->c, name)) == NULL)
		return cfg_nomem(x);
	if ((r = cfg_mapping(x, name, v, "a mapping of sketch sizes")) <= 0)
		return r;
	len = cfg_push(x, name);
	if ((r = cfg_collect(x, v, cfg_sketch_keys, SK_NSIZES, seen)) == 0 &&
	    (r = cfg_apply(x, cfg_sketch_keys, 0, SK_NSIZES, seen, s)) == 0)
		r = cfg_sketch_check(x, s, seen);
	cfg_pop(x, len);
	return r;
}

static int
cfg_vitals(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	yaml_node_pair_t *p;
	size_t len;
	int r;

	(void)base;
	if ((r = cfg_mapping(x, k->opt.key, v, k->expect)) <= 0)
		return r;
	len = cfg_push(x, k->opt.key);
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++)
		if ((r = cfg_vital(x, v, p)) != 0)
			break;
	cfg_pop(x, len);
	return r;
}

/* ---- plugins ---- */

static void
cfg_plugin_free(struct config_plugin *p)
{
	size_t i;

	free(p->name);
	for (i = 0; i < p->nentries; i++)
		cfg_entry_free(&p->entries[i]);
	free(p->entries);
}

/* A new zeroed plugin, already counted so that config_free frees it. */
static struct config_plugin *
cfg_plugin_add(struct config *c)
{
	struct config_plugin *p;

	p = realloc(c->plugins, (c->nplugins + 1) * sizeof(*p));
	if (p == NULL)
		return NULL;
	c->plugins = p;
	p += c->nplugins++;
	memset(p, 0, sizeof(*p));
	return p;
}

/* A new zeroed entry of p, already counted. */
static struct config_entry *
cfg_option_add(struct config_plugin *p)
{
	struct config_entry *e;

	e = realloc(p->entries, (p->nentries + 1) * sizeof(*e));
	if (e == NULL)
		return NULL;
	p->entries = e;
	e += p->nentries++;
	memset(e, 0, sizeof(*e));
	return e;
}

/* The generic `enable` key: a boolean, null keeps the default. */
static int
cfg_enable(struct cfg *x, struct config_plugin *p, const yaml_node_t *v)
{
	char got[160];

	if (cfg_is_null(v))
		return 0;
	if (v->type == YAML_SCALAR_NODE &&
	    option_parse_bool(
		(const char *)v->data.scalar.value, &p->enabled) == 0)
		return 0;
	return cfg_error(x, v,
	    "plugin '%s': option 'enable': expected a "
	    "boolean (true/false), got %s",
	    p->name, cfg_got(v, got, sizeof(got)));
}

/* One `key: value` under plugin p, whose options are mapping map. */
static int
cfg_option(struct cfg *x, struct config_plugin *p, yaml_node_t *map,
    yaml_node_pair_t *pair)
{
	yaml_node_t *k = cfg_node(x, pair->key), *v = cfg_node(x, pair->value);
	struct config_entry *e;
	yaml_node_t *prev;
	const char *name = NULL;
	char what[512];
	int r;

	if ((r = cfg_keyname(x, k, &name)) != 0)
		return r;
	if ((prev = cfg_earlier(x, map, pair, name)) != NULL)
		return cfg_error(x, k,
		    "plugin '%s': option '%s' given twice "
		    "(first at line %lu, column %lu)",
		    p->name, name, (unsigned long)prev->start_mark.line + 1,
		    (unsigned long)prev->start_mark.column + 1);
	if (strcmp(name, "enable") == 0)
		return cfg_enable(x, p, v);
	if ((e = cfg_option_add(p)) == NULL)
		return cfg_nomem(x);
	snprintf(what, sizeof(what), "plugin '%s': option '%s'", p->name, name);
	return cfg_entry(x, e, name, &k->start_mark, v, what);
}

/* The plugin configured as `name` earlier, in any section, or NULL. */
static const struct config_plugin *
cfg_plugin_find(const struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nplugins; i++)
		if (strcmp(c->plugins[i].name, name) == 0)
			return &c->plugins[i];
	return NULL;
}

/* One `name: {options}` in section of kind `kind`. */
static int
cfg_plugin(struct cfg *x, uint32_t kind, yaml_node_pair_t *pair)
{
	yaml_node_t *k = cfg_node(x, pair->key), *v = cfg_node(x, pair->value);
	const struct config_plugin *prev;
	struct config_plugin *p;
	yaml_node_pair_t *q;
	const char *name = NULL;
	char got[160];
	int r;

	if ((r = cfg_keyname(x, k, &name)) != 0)
		return r;
	if (*name == '\0')
		return cfg_error(x, k, "a plugin name must not be empty");
	if ((prev = cfg_plugin_find(x->c, name)) != NULL)
		return cfg_error(x, k,
		    "plugin '%s' configured twice (first at "
		    "line %u, column %u)",
		    name, prev->line, prev->col);
	if ((p = cfg_plugin_add(x->c)) == NULL ||
	    (p->name = strdup(name)) == NULL)
		return cfg_nomem(x);
	p->kind = kind;
	p->line = (uint32_t)k->start_mark.line + 1;
	p->col = (uint32_t)k->start_mark.column + 1;
	p->enabled = 1;
	if (cfg_is_null(v))
		return 0;
	if (v->type != YAML_MAPPING_NODE)
		return cfg_error(x, v,
		    "plugin '%s': expected a mapping of "
		    "options, got %s",
		    name, cfg_got(v, got, sizeof(got)));
	for (q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
	     q++)
		if ((r = cfg_option(x, p, v, q)) != 0)
			return r;
	return 0;
}

/* probes:, filters: or plugins: (outputs). */
static int
cfg_section(struct cfg *x, const struct cfg_key *k, yaml_node_t *v, void *base)
{
	yaml_node_pair_t *p;
	int r;

	(void)base;
	if ((r = cfg_mapping(x, k->opt.key, v, k->expect)) <= 0)
		return r;
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++)
		if ((r = cfg_plugin(x, k->kind, p)) != 0)
			return r;
	return 0;
}

/* ---- the file ---- */

#define C(key, type, m, def, min, max) \
	CFG_OPT_DEF(key, type, offsetof(struct config, m), def, min, max)
/* Settings read by a function of their own have type 0 (none). */
#define CFG_NONE(key) CFG_OPT(key, 0, 0, 0, 0)
static const struct cfg_key cfg_top_keys[] = {
	{ C("host", VITALS_OPT_STRING, host, NULL, 0, 0), cfg_value, 0, 0,
	    "a host name", cfg_host },
	{ C("data_dir", VITALS_OPT_STRING, data_dir, CONFIG_DATA_DIR, 0, 0),
	    cfg_value, 0, 0, "an absolute path", cfg_data_dir },
	{ C("epoch", VITALS_OPT_DURATION, epoch_ns, "60s", 0.1, CFG_NOMAX),
	    cfg_value, 0, 0,
	    "a duration of at least 100ms (e.g. 250ms, 5s, 2m)", NULL },
	{ CFG_NONE("retention"), cfg_retention, 0, 0, "a mapping", NULL },
	{ C("plugin_path", VITALS_OPT_STRLIST, plugin_path, NULL, 0, 0),
	    cfg_plugin_path, 0, 0, "a list of directories", NULL },
	{ C("log", VITALS_OPT_STRING, log, "stderr", 0, 0), cfg_value, 0, 0,
	    "stderr or syslog", cfg_log },
	{ C("log_level", 0, log_level, NULL, 0, 0), cfg_log_level, 0, 0,
	    "error, warn, info or debug", NULL },
	{ C("filter_queue", OPTION_UINT32, queue_len, "16", 2, 1024), cfg_value,
	    0, 0, "an integer from 2 to 1024", NULL },
	{ C("filter_queue_samples", OPTION_UINT32, queue_samples, "256", 0,
	      1048576),
	    cfg_value, 0, 0, "an integer from 0 (all) to 1048576", NULL },
	{ CFG_NONE("sketch"), cfg_sketch, 0, 0, "a mapping", NULL },
	{ CFG_NONE("probes"), cfg_section, 0, VITALS_PLUGIN_PROBE,
	    "a mapping of plugin names to options", NULL },
	{ CFG_NONE("filters"), cfg_section, 0, VITALS_PLUGIN_FILTER,
	    "a mapping of plugin names to options", NULL },
	{ CFG_NONE("plugins"), cfg_section, 0, VITALS_PLUGIN_OUTPUT,
	    "a mapping of plugin names to options", NULL },
	/* Last: read after `epoch`, which it must be a multiple of. */
	{ CFG_NONE("timescales"), cfg_timescales, 0, 0,
	    "a list of durations (e.g. [5m, 1h, 1d])", NULL },
};
#undef CFG_NONE
#undef C
#define CFG_NTOP (sizeof(cfg_top_keys) / sizeof(cfg_top_keys[0]))
#define CFG_TIMESCALES (CFG_NTOP - 1) /* "timescales", the last key */

static int
cfg_root(struct cfg *x, yaml_node_t *root)
{
	struct cfg_seen seen[CFG_MAXKEYS];
	char got[160];
	int r;

	if (root == NULL || cfg_is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return cfg_error(x, root,
		    "expected a mapping of settings at "
		    "the top level, got %s",
		    cfg_got(root, got, sizeof(got)));
	if ((r = cfg_collect(x, root, cfg_top_keys, CFG_NTOP, seen)) != 0)
		return r;
	if ((r = cfg_apply(x, cfg_top_keys, 0, CFG_NTOP, seen, NULL)) != 0)
		return r;
	if (seen[CFG_TIMESCALES].val == NULL)
		cfg_timescales_default(x->c);
	return 0;
}

/* Report libyaml's error, with the position it points at. */
static int
cfg_yaml_error(struct cfg *x, const yaml_parser_t *p, const char *buf)
{
	yaml_mark_t m = p->problem_mark;
	const char *problem = p->problem ? p->problem : "malformed YAML";
	size_t i;

	/* libyaml's composer fails on some allocations without a code. */
	if (p->error == YAML_MEMORY_ERROR || p->error == YAML_NO_ERROR)
		return cfg_nomem(x);
	if (p->error == YAML_READER_ERROR) {
		/* The reader gives a byte offset, not a mark. */
		memset(&m, 0, sizeof(m));
		for (i = 0; i < p->problem_offset; i++) {
			m.column++;
			if (buf[i] == '\n') {
				m.line++;
				m.column = 0;
			}
		}
	}
	if (p->context != NULL)
		return cfg_error_at(x, &m, "%s (%s)", problem, p->context);
	return cfg_error_at(x, &m, "%s", problem);
}

/* Parse buf (len bytes) into doc: exactly one YAML document, or none. */
static int
cfg_parse(struct cfg *x, const char *buf, size_t len, yaml_document_t *doc)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	yaml_node_t *root;
	int r = 0;

	if (!yaml_parser_initialize(&parser))
		return cfg_nomem(x);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, doc)) {
		r = cfg_yaml_error(x, &parser, buf);
		yaml_parser_delete(&parser);
		return r;
	}
	if (!yaml_parser_load(&parser, &extra))
		r = cfg_yaml_error(x, &parser, buf);
	else {
		if ((root = yaml_document_get_root_node(&extra)) != NULL)
			r = cfg_error(x, root,
			    "only one YAML document is "
			    "allowed");
		yaml_document_delete(&extra);
	}
	if (r != 0)
		yaml_document_delete(doc);
	yaml_parser_delete(&parser);
	return r;
}

/*
 * The defaults the tables keys[0..n) declare, into c (or its sketch).
 * Returns 0, or -ENOMEM (a default that does not parse is a bug the
 * tests catch: it reads as out of memory).
 */
static int
cfg_table_defaults(struct config *c, const struct cfg_key *keys, size_t n)
{
	void *base;
	size_t i;

	for (i = 0; i < n; i++) {
		if (keys[i].opt.def == NULL)
			continue;
		base = (keys[i].flags & CFG_SKETCH) ? (void *)&c->sketch
						    : (void *)c;
		if (option_set(&keys[i].opt, base, keys[i].opt.def) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Set every default; returns 0 or -ENOMEM (c then half-built). */
static int
cfg_defaults(struct config *c)
{
	char host[256];

	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if ((c->host = strdup(host)) == NULL ||
	    cfg_table_defaults(c, cfg_top_keys, CFG_NTOP) != 0 ||
	    cfg_table_defaults(c, cfg_retention_keys, CFG_NRETENTION) != 0 ||
	    cfg_table_defaults(c, cfg_sketch_keys, SK_NKEYS) != 0)
		return -ENOMEM;
	c->log_level = VITALS_LOG_INFO;
	cfg_timescales_default(c); /* those that fit the default epoch */
	return 0;
}

/*
 * A configuration with every default (host from gethostname(), data_dir
 * LOCALSTATEDIR/lib/vitals, epoch 60s...) and no plugins; file is NULL.
 * Free with config_free.  Returns NULL only when memory runs out.
 */
struct config *
config_default(void)
{
	struct config *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (cfg_defaults(c) != 0) {
		config_free(c);
		return NULL;
	}
	return c;
}

/*
 * Read and check the configuration at path.  Returns 0 and sets *out
 * (owned by the caller, free with config_free), or a negative errno with
 * "FILE:LINE:COL: message" (or "FILE: message" when the file cannot be
 * read) in err.  An empty file means every default.
 */
int
config_load(const char *path, struct config **out, char *err, size_t errlen)
{
	struct cfg x = { .file = path, .err = err, .errlen = errlen };
	yaml_document_t doc;
	struct config *c = NULL;
	char *buf = NULL, why[160];
	size_t len = 0;
	int r;

	/* A FIFO, a device or a huge file is refused, not read forever. */
	r = safefile_read(path, CONFIG_MAX_FILE, &buf, &len, why, sizeof(why));
	if (r != 0) {
		cfg_error(&x, NULL, "%s", why);
		return r;
	}
	if ((c = config_default()) == NULL ||
	    (c->file = strdup(path)) == NULL) {
		r = cfg_nomem(&x);
		goto fail;
	}
	if ((r = cfg_parse(&x, buf, len, &doc)) != 0)
		goto fail;
	x.doc = &doc;
	x.c = c;
	r = cfg_root(&x, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	if (r != 0)
		goto fail;
	free(buf);
	*out = c;
	return 0;
fail:
	free(buf);
	config_free(c);
	return r;
}

/* Free c and everything it owns; accepts NULL and half-built configs. */
void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->file);
	free(c->host);
	free(c->data_dir);
	free(c->log);
	for (i = 0; i < c->plugin_path.n; i++)
		free(c->plugin_path.v[i]);
	free(c->plugin_path.v);
	for (i = 0; i < c->nvital_sketch; i++)
		free(c->vital_sketch[i].vital);
	free(c->vital_sketch);
	for (i = 0; i < c->nplugins; i++)
		cfg_plugin_free(&c->plugins[i]);
	free(c->plugins);
	free(c);
}

/* Sketch sizes for vital, borrowed from c: its override, else the defaults. */
const struct config_sketch *
config_sketch_for(const struct config *c, const char *vital)
{
	size_t i;

	for (i = 0; vital != NULL && i < c->nvital_sketch; i++)
		if (strcmp(c->vital_sketch[i].vital, vital) == 0)
			return &c->vital_sketch[i];
	return &c->sketch;
}
