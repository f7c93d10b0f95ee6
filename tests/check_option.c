/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/runtime/option.c: every scalar parser with good and bad
 * input, and option_fill's defaults, values and messages.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "option.h"
#include "testutil.h"

/* ---- parsers ---- */

/* What a parser writes, whichever its type. */
union value {
	int b; /* VITALS_OPT_BOOL */
	int64_t i; /* VITALS_OPT_INT */
	double d; /* VITALS_OPT_DOUBLE */
	uint64_t u; /* VITALS_OPT_DURATION, VITALS_OPT_SIZE */
};

/*
 * Parse s as an option of type: when ok it must be taken and give want,
 * else refused with -EINVAL and the output left as it was (a value no
 * case parses to).
 */
static void
check_parse(uint32_t type, const char *s, int ok, union value want)
{
	union value v, old;
	int r;

	memset(&v, 0, sizeof(v));
	if (type == VITALS_OPT_BOOL)
		v.b = -1;
	else if (type == VITALS_OPT_INT)
		v.i = 12345;
	else if (type == VITALS_OPT_DOUBLE)
		v.d = 99;
	else
		v.u = 77;
	old = v;
	switch (type) {
	case VITALS_OPT_BOOL:
		r = option_parse_bool(s, &v.b);
		break;
	case VITALS_OPT_INT:
		r = option_parse_int(s, &v.i);
		break;
	case VITALS_OPT_DOUBLE:
		r = option_parse_double(s, &v.d);
		break;
	case VITALS_OPT_DURATION:
		r = option_parse_duration(s, &v.u);
		break;
	default:
		r = option_parse_size(s, &v.u);
	}
	if (ok)
		ck_assert_msg(r == 0, "\"%s\" rejected", s);
	else {
		ck_assert_msg(r == -EINVAL, "\"%s\" accepted", s);
		want = old;
	}
	if (type == VITALS_OPT_BOOL)
		ck_assert_int_eq(v.b, want.b);
	else if (type == VITALS_OPT_INT)
		ck_assert_int_eq(v.i, want.i);
	else if (type == VITALS_OPT_DOUBLE)
		ck_assert_double_eq(v.d, want.d);
	else
		ck_assert_uint_eq(v.u, want.u);
}

static const struct {
	const char *s;
	int ok;
	int want;
} bool_cases[] = {
	{ "true", 1, 1 },
	{ "TRUE", 1, 1 },
	{ "Yes", 1, 1 },
	{ "on", 1, 1 },
	{ "1", 1, 1 },
	{ "false", 1, 0 },
	{ "No", 1, 0 },
	{ "OFF", 1, 0 },
	{ "0", 1, 0 },
	{ "", 0, 0 },
	{ "2", 0, 0 },
	{ "yess", 0, 0 },
	{ "t", 0, 0 },
	{ " true", 0, 0 },
	{ "true ", 0, 0 },
};

START_TEST(test_parse_bool)
{
	check_parse(VITALS_OPT_BOOL, bool_cases[_i].s, bool_cases[_i].ok,
	    (union value){ .b = bool_cases[_i].want });
}
END_TEST

static const struct {
	const char *s;
	int ok;
	int64_t want;
} int_cases[] = {
	{ "0", 1, 0 },
	{ "42", 1, 42 },
	{ "-17", 1, -17 },
	{ "+5", 1, 5 },
	{ "9223372036854775807", 1, INT64_MAX },
	{ "-9223372036854775808", 1, INT64_MIN },
	{ "", 0, 0 },
	{ "abc", 0, 0 },
	{ "12abc", 0, 0 },
	{ "1.5", 0, 0 },
	{ "9223372036854775808", 0, 0 },
	{ " 1", 0, 0 },
	{ "1 ", 0, 0 },
	{ "0x10", 0, 0 },
	{ "-", 0, 0 },
	{ "+-1", 0, 0 },
};

START_TEST(test_parse_int)
{
	check_parse(VITALS_OPT_INT, int_cases[_i].s, int_cases[_i].ok,
	    (union value){ .i = int_cases[_i].want });
}
END_TEST

static const struct {
	const char *s;
	int ok;
	double want;
} double_cases[] = {
	{ "0", 1, 0 },
	{ "1.5", 1, 1.5 },
	{ "-2.25", 1, -2.25 },
	{ "1e3", 1, 1000 },
	{ "0.0025", 1, 0.0025 },
	{ "7", 1, 7 },
	{ "", 0, 0 },
	{ "abc", 0, 0 },
	{ "1.5x", 0, 0 },
	{ "nan", 0, 0 },
	{ "inf", 0, 0 },
	{ "1e999", 0, 0 },
	{ " 1", 0, 0 },
};

START_TEST(test_parse_double)
{
	check_parse(VITALS_OPT_DOUBLE, double_cases[_i].s, double_cases[_i].ok,
	    (union value){ .d = double_cases[_i].want });
}
END_TEST

#define S 1000000000ULL
static const struct {
	const char *s;
	int ok;
	uint64_t want;
} duration_cases[] = {
	{ "0", 1, 0 },
	{ "250ms", 1, 250000000 },
	{ "5s", 1, 5 * S },
	{ "2m", 1, 120 * S },
	{ "1h", 1, 3600 * S },
	{ "30d", 1, 2592000 * S },
	{ "1.5s", 1, 1500000000 },
	{ "10", 1, 10 * S },
	{ "100ns", 1, 100 },
	{ "7us", 1, 7000 },
	{ "0.5ms", 1, 500000 },
	{ "0.001s", 1, 1000000 },
	{ "0s", 1, 0 },
	{ "18446744073709551615ns", 1, UINT64_MAX },
	{ "", 0, 0 },
	{ "-5s", 0, 0 },
	{ "+5s", 0, 0 },
	{ "5x", 0, 0 },
	{ "s", 0, 0 },
	{ "5 s", 0, 0 },
	{ "1.s", 0, 0 },
	{ ".5s", 0, 0 },
	{ "5S", 0, 0 },
	{ "5sec", 0, 0 },
	{ "300000d", 0, 0 },
	{ "18446744073709551616ns", 0, 0 },
	{ "fast", 0, 0 },
};

START_TEST(test_parse_duration)
{
	check_parse(VITALS_OPT_DURATION, duration_cases[_i].s,
	    duration_cases[_i].ok,
	    (union value){ .u = duration_cases[_i].want });
}
END_TEST

static const struct {
	const char *s;
	int ok;
	uint64_t want;
} size_cases[] = {
	{ "0", 1, 0 },
	{ "512", 1, 512 },
	{ "64K", 1, 65536 },
	{ "16M", 1, 16 << 20 },
	{ "1G", 1, 1 << 30 },
	{ "2T", 1, 2ULL << 40 },
	{ "16MiB", 1, 16 << 20 },
	{ "4KB", 1, 4096 },
	{ "512B", 1, 512 },
	{ "1k", 1, 1024 },
	{ "1.5K", 1, 1536 },
	{ "15E", 1, 15ULL << 60 },
	{ "", 0, 0 },
	{ "-1", 0, 0 },
	{ "1X", 0, 0 },
	{ "1KiBB", 0, 0 },
	{ "iB", 0, 0 },
	{ "1iB", 0, 0 },
	{ "1.5", 0, 0 },
	{ "16E", 0, 0 },
	{ "1 K", 0, 0 },
	{ "K", 0, 0 },
	{ "1Kb", 0, 0 },
};

START_TEST(test_parse_size)
{
	check_parse(VITALS_OPT_SIZE, size_cases[_i].s, size_cases[_i].ok,
	    (union value){ .u = size_cases[_i].want });
}
END_TEST

START_TEST(test_parse_null)
{
	int b;
	int64_t i;
	double d;
	uint64_t u;

	ck_assert_int_eq(option_parse_bool(NULL, &b), -EINVAL);
	ck_assert_int_eq(option_parse_int(NULL, &i), -EINVAL);
	ck_assert_int_eq(option_parse_double(NULL, &d), -EINVAL);
	ck_assert_int_eq(option_parse_duration(NULL, &u), -EINVAL);
	ck_assert_int_eq(option_parse_size(NULL, &u), -EINVAL);
}
END_TEST

START_TEST(test_type_name)
{
	ck_assert_str_eq(option_type_name(VITALS_OPT_BOOL), "bool");
	ck_assert_str_eq(option_type_name(VITALS_OPT_INT), "int");
	ck_assert_str_eq(option_type_name(VITALS_OPT_DOUBLE), "double");
	ck_assert_str_eq(option_type_name(VITALS_OPT_STRING), "string");
	ck_assert_str_eq(option_type_name(VITALS_OPT_DURATION), "duration");
	ck_assert_str_eq(option_type_name(VITALS_OPT_SIZE), "size");
	ck_assert_str_eq(option_type_name(VITALS_OPT_STRLIST), "list");
	ck_assert_str_eq(option_type_name(0), "unknown");
	ck_assert_str_eq(option_type_name(99), "unknown");
}
END_TEST

/* ---- option_fill ---- */

struct conf {
	int on;
	int64_t rate;
	double alpha;
	char *name;
	char *label;
	uint64_t interval;
	uint64_t buf;
	struct vitals_strlist labels;
	int64_t seed;
};

#define O(m) offsetof(struct conf, m)
static const struct vitals_option table[] = {
	{ "on", VITALS_OPT_BOOL, O(on), "yes", "switch", 0, 0 },
	{ "rate", VITALS_OPT_INT, O(rate), "100", "per second", 1, 1000 },
	{ "alpha", VITALS_OPT_DOUBLE, O(alpha), "0.5", "weight", 0, 1 },
	{ "name", VITALS_OPT_STRING, O(name), "dflt", "a name", 0, 0 },
	{ "label", VITALS_OPT_STRING, O(label), NULL, "unset", 0, 0 },
	{ "interval", VITALS_OPT_DURATION, O(interval), "5s", "t", 0.1, 60 },
	{ "buf", VITALS_OPT_SIZE, O(buf), "64K", "bytes", 1024, 1048576 },
	{ "labels", VITALS_OPT_STRLIST, O(labels), "a, b", "list", 0, 0 },
	{ "seed", VITALS_OPT_INT, O(seed), NULL, "unbounded", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 },
};
#undef O

static const char valid_keys[] =
    "valid: on, rate, alpha, name, label, interval, buf, labels, seed";

/* A scalar entry at key position (line, col), value at (line, col + 6). */
static struct config_entry
entry(const char *key, const char *scalar, uint32_t line, uint32_t col)
{
	struct config_entry e;

	memset(&e, 0, sizeof(e));
	e.key = (char *)key;
	e.line = line;
	e.col = col;
	e.vline = line;
	e.vcol = col + 6;
	e.scalar = (char *)scalar;
	return e;
}

START_TEST(test_fill_defaults)
{
	struct conf c;
	char err[256] = "";

	memset(&c, 0xa5, sizeof(c));
	c.name = c.label = NULL;
	memset(&c.labels, 0, sizeof(c.labels));
	ck_assert_int_eq(
	    option_fill(table, &c, NULL, 0, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(c.on, 1);
	ck_assert_int_eq(c.rate, 100);
	ck_assert_double_eq(c.alpha, 0.5);
	ck_assert_str_eq(c.name, "dflt");
	ck_assert_ptr_null(c.label);
	ck_assert_uint_eq(c.interval, 5 * S);
	ck_assert_uint_eq(c.buf, 65536);
	ck_assert_uint_eq(c.labels.n, 2);
	ck_assert_str_eq(c.labels.v[0], "a");
	ck_assert_str_eq(c.labels.v[1], "b");
	ck_assert_int_eq(c.seed, 0);
	option_free(table, &c);
	ck_assert_ptr_null(c.name);
	ck_assert_ptr_null(c.labels.v);
	ck_assert_uint_eq(c.labels.n, 0);
}
END_TEST

START_TEST(test_fill_values)
{
	struct config_entry e[9];
	struct conf c;
	char err[256] = "";

	memset(&c, 0, sizeof(c));
	e[0] = entry("on", "off", 2, 3);
	e[1] = entry("rate", "1000", 3, 3);
	e[2] = entry("alpha", "0", 4, 3);
	e[3] = entry("name", "cpu0", 5, 3);
	e[4] = entry("label", "", 6, 3);
	e[5] = entry("interval", "250ms", 7, 3);
	e[6] = entry("buf", "1M", 8, 3);
	e[7] = entry("labels", " x, y ,, z ", 9, 3);
	e[8] = entry("seed", "-42", 10, 3);
	ck_assert_int_eq(
	    option_fill(table, &c, e, 9, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_int_eq(c.on, 0);
	ck_assert_int_eq(c.rate, 1000);
	ck_assert_double_eq(c.alpha, 0);
	ck_assert_str_eq(c.name, "cpu0");
	ck_assert_str_eq(c.label, "");
	ck_assert_uint_eq(c.interval, 250000000);
	ck_assert_uint_eq(c.buf, 1 << 20);
	ck_assert_uint_eq(c.labels.n, 3);
	ck_assert_str_eq(c.labels.v[0], "x");
	ck_assert_str_eq(c.labels.v[1], "y");
	ck_assert_str_eq(c.labels.v[2], "z");
	ck_assert_int_eq(c.seed, -42);
	option_free(table, &c);
}
END_TEST

START_TEST(test_fill_strlist_seq)
{
	char *items[] = { "first", " second ", "" };
	struct config_entry e = entry("labels", NULL, 4, 3);
	struct conf c;
	char err[256] = "";

	memset(&c, 0, sizeof(c));
	e.is_seq = 1;
	e.nitems = 3;
	e.items = items;
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.labels.n, 3);
	ck_assert_str_eq(c.labels.v[0], "first");
	ck_assert_str_eq(c.labels.v[1], " second ");
	ck_assert_str_eq(c.labels.v[2], "");
	option_free(table, &c);

	e.nitems = 0;
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.labels.n, 0);
	option_free(table, &c);
}
END_TEST

START_TEST(test_fill_strlist_empty)
{
	struct config_entry e = entry("labels", "", 4, 3);
	struct conf c;
	char err[256] = "";

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.labels.n, 0);
	option_free(table, &c);
}
END_TEST

/* A YAML null (scalar NULL) keeps the default. */
START_TEST(test_fill_null_keeps_default)
{
	struct config_entry e[2];
	struct conf c;
	char err[256] = "";

	memset(&c, 0, sizeof(c));
	e[0] = entry("rate", NULL, 2, 3);
	e[1] = entry("name", NULL, 3, 3);
	ck_assert_int_eq(
	    option_fill(table, &c, e, 2, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_int_eq(c.rate, 100);
	ck_assert_str_eq(c.name, "dflt");
	option_free(table, &c);
}
END_TEST

/* A key given twice: the last wins and nothing leaks. */
START_TEST(test_fill_repeated)
{
	struct config_entry e[2];
	struct conf c;
	char err[256] = "";

	memset(&c, 0, sizeof(c));
	e[0] = entry("name", "one", 2, 3);
	e[1] = entry("name", "two", 3, 3);
	ck_assert_int_eq(
	    option_fill(table, &c, e, 2, "conf.yaml", err, sizeof(err)), 0);
	ck_assert_str_eq(c.name, "two");
	option_free(table, &c);
}
END_TEST

static const struct {
	const char *key;
	const char *value; /* NULL: a sequence */
	uint32_t line, col;
	const char *want;
} fill_errors[] = {
	{ "rate", "fast", 12, 4,
	    "conf.yaml:12:10: option 'rate': expected an integer, "
	    "got \"fast\"" },
	{ "ratee", "5", 9, 5, NULL /* unknown: checked with valid_keys */ },
	{ "alpha", "1.5", 3, 2,
	    "conf.yaml:3:8: option 'alpha': 1.5 is out of range [0, 1]" },
	{ "alpha", "-0.1", 3, 2,
	    "conf.yaml:3:8: option 'alpha': -0.1 is out of range [0, 1]" },
	{ "alpha", "half", 3, 2,
	    "conf.yaml:3:8: option 'alpha': expected a number, got \"half\"" },
	{ "rate", "0", 5, 1,
	    "conf.yaml:5:7: option 'rate': 0 is out of range [1, 1000]" },
	{ "rate", "1001", 5, 1,
	    "conf.yaml:5:7: option 'rate': 1001 is out of range [1, 1000]" },
	{ "rate", "99999999999999999999", 5, 1,
	    "conf.yaml:5:7: option 'rate': expected an integer, got "
	    "\"99999999999999999999\"" },
	{ "on", "maybe", 7, 3,
	    "conf.yaml:7:9: option 'on': expected a boolean (true/false, "
	    "yes/no, on/off), got \"maybe\"" },
	{ "interval", "soon", 8, 3,
	    "conf.yaml:8:9: option 'interval': expected a duration (e.g. "
	    "250ms, 5s, 2m, 1h), got \"soon\"" },
	{ "interval", "-5s", 8, 3,
	    "conf.yaml:8:9: option 'interval': expected a duration (e.g. "
	    "250ms, 5s, 2m, 1h), got \"-5s\"" },
	{ "interval", "2m", 8, 3,
	    "conf.yaml:8:9: option 'interval': 2m is out of range "
	    "[0.1s, 60s]" },
	{ "interval", "50ms", 8, 3,
	    "conf.yaml:8:9: option 'interval': 50ms is out of range "
	    "[0.1s, 60s]" },
	{ "buf", "2M", 10, 3,
	    "conf.yaml:10:9: option 'buf': 2M is out of range "
	    "[1024B, 1048576B]" },
	{ "buf", "lots", 10, 3,
	    "conf.yaml:10:9: option 'buf': expected a size (e.g. 512, 64K, "
	    "16M, 1G), got \"lots\"" },
	{ "rate", NULL, 11, 3,
	    "conf.yaml:11:9: option 'rate': expected an integer, got a "
	    "sequence" },
	{ "name", NULL, 11, 3,
	    "conf.yaml:11:9: option 'name': expected a string, got a "
	    "sequence" },
};

START_TEST(test_fill_errors)
{
	char *items[] = { "x" };
	struct config_entry e;
	struct conf c;
	char err[256] = "", want[256];

	memset(&c, 0, sizeof(c));
	e = entry(fill_errors[_i].key, fill_errors[_i].value,
	    fill_errors[_i].line, fill_errors[_i].col);
	if (fill_errors[_i].value == NULL) {
		e.is_seq = 1;
		e.nitems = 1;
		e.items = items;
	}
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", err, sizeof(err)),
	    -EINVAL);
	if (fill_errors[_i].want != NULL)
		ck_assert_str_eq(err, fill_errors[_i].want);
	else {
		snprintf(want, sizeof(want),
		    "conf.yaml:%u:%u: unknown option '%s' (%s)",
		    fill_errors[_i].line, fill_errors[_i].col,
		    fill_errors[_i].key, valid_keys);
		ck_assert_str_eq(err, want);
	}
	option_free(table, &c);
}
END_TEST

START_TEST(test_fill_no_options)
{
	static const struct vitals_option empty[] = {
		{ NULL, 0, 0, NULL, NULL, 0, 0 },
	};
	struct config_entry e = entry("rate", "5", 2, 5);
	char err[256] = "", block[8];

	ck_assert_int_eq(
	    option_fill(NULL, block, &e, 1, "p.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err,
	    "p.yaml:2:5: unknown option 'rate' (this plugin has no options)");
	ck_assert_int_eq(
	    option_fill(empty, block, &e, 1, "p.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err,
	    "p.yaml:2:5: unknown option 'rate' (this plugin has no options)");
	ck_assert_int_eq(
	    option_fill(NULL, block, NULL, 0, "p.yaml", err, sizeof(err)), 0);
	option_free(NULL, block);
	option_free(empty, block);
}
END_TEST

/* A plugin's broken table is reported without a YAML position. */
START_TEST(test_fill_bad_table)
{
	static const struct vitals_option bad_def[] = {
		{ "rate", VITALS_OPT_INT, 0, "fast", NULL, 0, 0 },
		{ NULL, 0, 0, NULL, NULL, 0, 0 },
	};
	static const struct vitals_option bad_range[] = {
		{ "rate", VITALS_OPT_INT, 0, "5000", NULL, 1, 10 },
		{ NULL, 0, 0, NULL, NULL, 0, 0 },
	};
	static const struct vitals_option bad_type[] = {
		{ "rate", 42, 0, NULL, NULL, 0, 0 },
		{ NULL, 0, 0, NULL, NULL, 0, 0 },
	};
	int64_t block = 0;
	char err[256] = "";

	ck_assert_int_eq(
	    option_fill(bad_def, &block, NULL, 0, "c.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err,
	    "c.yaml: option 'rate': bad default \"fast\" "
	    "(expected an integer)");
	ck_assert_int_eq(
	    option_fill(bad_range, &block, NULL, 0, "c.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err,
	    "c.yaml: option 'rate': bad default \"5000\" "
	    "(expected an integer within its bounds)");
	ck_assert_int_eq(
	    option_fill(bad_type, &block, NULL, 0, "c.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err, "c.yaml: option 'rate': unknown type 42");
}
END_TEST

/* A short or absent message buffer truncates, never overflows. */
START_TEST(test_fill_short_err)
{
	struct config_entry e = entry("ratee", "5", 9, 5);
	struct conf c;
	char err[24];

	memset(&c, 0, sizeof(c));
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", err, sizeof(err)),
	    -EINVAL);
	ck_assert_uint_eq(strlen(err), sizeof(err) - 1);
	ck_assert_int_eq(strncmp(err, "conf.yaml:9:5: unknown", 22), 0);
	option_free(table, &c);
	ck_assert_int_eq(
	    option_fill(table, &c, &e, 1, "conf.yaml", NULL, 0), -EINVAL);
	option_free(table, &c);
}
END_TEST

static Suite *
option_suite(void)
{
	Suite *s = suite_create("option");
	TCase *p = tcase_create("parse"), *f = tcase_create("fill");

	tcase_add_loop_test(p, test_parse_bool, 0, NCASES(bool_cases));
	tcase_add_loop_test(p, test_parse_int, 0, NCASES(int_cases));
	tcase_add_loop_test(p, test_parse_double, 0, NCASES(double_cases));
	tcase_add_loop_test(p, test_parse_duration, 0, NCASES(duration_cases));
	tcase_add_loop_test(p, test_parse_size, 0, NCASES(size_cases));
	tcase_add_test(p, test_parse_null);
	tcase_add_test(p, test_type_name);
	suite_add_tcase(s, p);

	tcase_add_test(f, test_fill_defaults);
	tcase_add_test(f, test_fill_values);
	tcase_add_test(f, test_fill_strlist_seq);
	tcase_add_test(f, test_fill_strlist_empty);
	tcase_add_test(f, test_fill_null_keeps_default);
	tcase_add_test(f, test_fill_repeated);
	tcase_add_loop_test(f, test_fill_errors, 0, NCASES(fill_errors));
	tcase_add_test(f, test_fill_no_options);
	tcase_add_test(f, test_fill_bad_table);
	tcase_add_test(f, test_fill_short_err);
	suite_add_tcase(s, f);
	return s;
}

int
main(void)
{
	return testutil_run(option_suite());
}
