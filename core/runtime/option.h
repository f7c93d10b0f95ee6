/* SPDX-License-Identifier: MIT */
/*
 * Option tables: the one mechanism that reads typed values into a block
 * from a declarative table (struct vitals_option): a plugin's config
 * block from its YAML entries, the core's own settings (config.c) and the
 * mock core of the unit tests.
 */
#ifndef VITALS_OPTION_H
#define VITALS_OPTION_H

#include <stddef.h>
#include <stdint.h>
#include <vitals/vitals.h>

struct config_entry;

/*
 * Types of the core's own settings beyond the VITALS_OPT_* a plugin may
 * declare (option_fill refuses them in a plugin's table): a non-negative
 * integer stored in a uint32_t or a uint64_t member.
 */
#define OPTION_UINT32 0x101u
#define OPTION_UINT64 0x102u

/*
 * Fill block from table: every option first takes its default, then the
 * value of the matching entry in entries[0..n) (a NULL scalar, a YAML
 * null, keeps the default).  An unknown key, a value of the wrong type or
 * out of bounds fails with "FILE:LINE:COL: ..." in err naming the key (and,
 * for an unknown key, the valid ones).  Returns 0, -EINVAL, or -ENOMEM; on
 * failure the block may hold values, free it with option_free.
 */
int option_fill(const struct vitals_option *table, void *block,
    const struct config_entry *entries, size_t n, const char *file, char *err,
    size_t errlen);

/*
 * Parse text as o's type into its member of block, replacing (and
 * freeing) what was there.  Returns 0, -EINVAL if text does not parse,
 * -ERANGE if it is outside [min, max] (when min < max), or -ENOMEM.
 */
int option_set(const struct vitals_option *o, void *block, const char *text);

/*
 * Set STRLIST option o of block to a copy of items[0..n) (a YAML
 * sequence), replacing what was there.  Returns 0, -EINVAL if o is not a
 * list, or -ENOMEM.
 */
int option_set_list(
    const struct vitals_option *o, void *block, char *const *items, uint32_t n);

/* The option called key in table (which may be NULL), borrowed, or NULL. */
const struct vitals_option *option_find(
    const struct vitals_option *table, const char *key);

/* Free the strings and lists option_fill put in block; accepts NULL table. */
void option_free(const struct vitals_option *table, void *block);

/* Scalar parsers: return 0 and write *out, or -EINVAL.  Whole string must parse. */
int option_parse_bool(const char *s, int *out);
int option_parse_int(const char *s, int64_t *out);
int option_parse_double(const char *s, double *out);
/* "250ms", "5s", "2m", "1h", "30d"; a bare number is seconds. */
int option_parse_duration(const char *s, uint64_t *ns);
/* "512", "64K", "16M", "1G", "2T" (powers of 1024), optional "B"/"iB". */
int option_parse_size(const char *s, uint64_t *bytes);

/* The type's name for messages and --list-plugins ("bool", "duration"...). */
const char *option_type_name(uint32_t type);

#endif /* VITALS_OPTION_H */
