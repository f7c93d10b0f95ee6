/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/runtime/config.c: defaults, every global setting, sketch
 * overrides, the plugin sections, and the file:line:col of every error.
 * Each test writes its YAML to a real file in a mkdtemp() directory.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "option.h"
#include "testutil.h"

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif

#define S 1000000000ULL

static char *dir;
static char path[128];

static void
setup(void)
{
	dir = testutil_tmpdir("check_config");
	snprintf(path, sizeof(path), "%s/vitals.yaml", dir);
}

static void
teardown(void)
{
	testutil_tmpdir_remove(dir);
	dir = NULL;
}

/* Write yaml to the test's file and load it. */
static int
load(const char *yaml, struct config **c, char *err, size_t errlen)
{
	testutil_write_file(path, yaml);
	*c = NULL;
	if (err != NULL)
		err[0] = '\0';
	return config_load(path, c, err, errlen);
}

/* Load yaml, which must be valid. */
static struct config *
load_ok(const char *yaml)
{
	struct config *c;
	char err[512];

	ck_assert_msg(load(yaml, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->file, path);
	return c;
}

static void
check_defaults(const struct config *c)
{
	char host[256] = "";

	gethostname(host, sizeof(host));
	ck_assert_str_eq(c->host, host[0] ? host : "localhost");
	ck_assert_str_eq(c->data_dir, LOCALSTATEDIR "/lib/vitals");
	ck_assert_uint_eq(c->epoch_ns, 60 * S);
	ck_assert_uint_eq(c->retention_ns, 30 * 86400 * S);
	ck_assert_uint_eq(c->retention_bytes, 1ULL << 30);
	ck_assert_uint_eq(c->plugin_path.n, 0);
	ck_assert_str_eq(c->log, "stderr");
	ck_assert_int_eq(c->log_level, VITALS_LOG_INFO);
	ck_assert_double_eq(c->cpu_high, 0.01);
	ck_assert_double_eq(c->cpu_low, 0.0025);
	ck_assert_uint_eq(c->queue_len, 16);
	ck_assert_ptr_null(c->sketch.vital);
	ck_assert_uint_eq(c->sketch.hca_size, 1024);
	ck_assert_uint_eq(c->sketch.hca_max, 16384);
	ck_assert_uint_eq(c->hca_memory, 1 << 20);
	ck_assert_uint_eq(c->sketch.max_samples, 2048);
	ck_assert_uint_eq(c->sketch.stack_depth, 16);
	ck_assert_uint_eq(c->sketch.seen_bits, 65536);
	ck_assert_uint_eq(c->sketch.floor, 1);
	ck_assert_uint_eq(c->sketch.threshold, 2);
	ck_assert_uint_eq(c->sketch.threshold_max, 65536);
	ck_assert_uint_eq(c->nvital_sketch, 0);
	ck_assert_uint_eq(c->nplugins, 0);
}

START_TEST(test_default)
{
	struct config *c = config_default();

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(c->file);
	check_defaults(c);
	ck_assert_ptr_eq(config_sketch_for(c, "cpu"), &c->sketch);
	ck_assert_ptr_eq(config_sketch_for(c, NULL), &c->sketch);
	config_free(c);
	config_free(NULL);
}
END_TEST

static const char *const empty_cases[] = {
	"",
	"# only comments\n\n   # more\n",
	"---\n",
	"~\n",
	"---\n...\n",
};

START_TEST(test_empty)
{
	struct config *c = load_ok(empty_cases[_i]);

	check_defaults(c);
	config_free(c);
}
END_TEST

START_TEST(test_globals)
{
	struct config *c = load_ok("# every global setting\n"
				   "host: node7\n"
				   "data_dir: /srv/vitals\n"
				   "epoch: 250ms\n"
				   "retention:\n"
				   "  max_age: 12h\n"
				   "  max_size: 512MiB\n"
				   "plugin_path: [/opt/a, /opt/b]\n"
				   "log: syslog\n"
				   "log_level: debug\n"
				   "filter_queue: 1024\n");

	ck_assert_str_eq(c->host, "node7");
	ck_assert_str_eq(c->data_dir, "/srv/vitals");
	ck_assert_uint_eq(c->epoch_ns, 250000000);
	ck_assert_uint_eq(c->retention_ns, 12 * 3600 * S);
	ck_assert_uint_eq(c->retention_bytes, 512ULL << 20);
	ck_assert_uint_eq(c->plugin_path.n, 2);
	ck_assert_str_eq(c->plugin_path.v[0], "/opt/a");
	ck_assert_str_eq(c->plugin_path.v[1], "/opt/b");
	ck_assert_str_eq(c->log, "syslog");
	ck_assert_int_eq(c->log_level, VITALS_LOG_DEBUG);
	ck_assert_uint_eq(c->queue_len, 1024);
	ck_assert_uint_eq(c->nplugins, 0);
	config_free(c);
}
END_TEST

START_TEST(test_edges)
{
	struct config *c = load_ok("epoch: 100ms\n"
				   "retention:\n"
				   "  max_age: 0\n"
				   "  max_size: 0\n"
				   "plugin_path: ' /opt/a ,/opt/b,, '\n"
				   "filter_queue: 2\n"
				   "sketch:\n"
				   "  hca_size: 32\n"
				   "  stack_depth: 0\n"
				   "  cpu_high: 0\n"
				   "  cpu_low: 0\n");

	ck_assert_uint_eq(c->epoch_ns, 100000000);
	ck_assert_uint_eq(c->retention_ns, 0);
	ck_assert_uint_eq(c->retention_bytes, 0);
	ck_assert_uint_eq(c->plugin_path.n, 2);
	ck_assert_str_eq(c->plugin_path.v[0], "/opt/a");
	ck_assert_str_eq(c->plugin_path.v[1], "/opt/b");
	ck_assert_uint_eq(c->queue_len, 2);
	ck_assert_uint_eq(c->sketch.hca_size, 32);
	ck_assert_uint_eq(c->sketch.stack_depth, 0);
	ck_assert_double_eq(c->cpu_high, 0);
	ck_assert_double_eq(c->cpu_low, 0);
	config_free(c);
}
END_TEST

/* A null value keeps the default, for settings and sections alike. */
START_TEST(test_nulls)
{
	struct config *c = load_ok("host:\n"
				   "epoch: ~\n"
				   "retention:\n"
				   "plugin_path: null\n"
				   "sketch:\n"
				   "probes:\n"
				   "filters: {}\n");

	check_defaults(c);
	config_free(c);
}
END_TEST

static const struct {
	const char *yaml;
	int level;
} level_cases[] = {
	{ "log_level: error\n", VITALS_LOG_ERR },
	{ "log_level: warn\n", VITALS_LOG_WARN },
	{ "log_level: info\n", VITALS_LOG_INFO },
	{ "log_level: debug\n", VITALS_LOG_DEBUG },
};

START_TEST(test_log_level)
{
	struct config *c = load_ok(level_cases[_i].yaml);

	ck_assert_int_eq(c->log_level, level_cases[_i].level);
	config_free(c);
}
END_TEST

START_TEST(test_sketch)
{
	const struct config_sketch *s;
	struct config *c =
	    load_ok("sketch:\n"
		    "  vitals:\n" /* before the defaults it inherits */
		    "    io:\n"
		    "      hca_size: 256\n"
		    "      threshold_max: 1024\n"
		    "    cpu:\n"
		    "      max_samples: 100\n"
		    "    net:\n"
		    "    big: { hca_size: 65536 }\n"
		    "  hca_size: 4096\n"
		    "  max_samples: 500\n"
		    "  stack_depth: 64\n"
		    "  seen_bits: 1048576\n"
		    "  floor: 3\n"
		    "  threshold: 4\n"
		    "  threshold_max: 4096\n"
		    "  cpu_high: 0.05\n"
		    "  cpu_low: 0.01\n"
		    "  hca_memory: 4M\n");

	ck_assert_uint_eq(c->sketch.hca_size, 4096);
	ck_assert_uint_eq(c->sketch.hca_max, 16384);
	ck_assert_uint_eq(c->hca_memory, 4 << 20);
	ck_assert_uint_eq(c->sketch.max_samples, 500);
	ck_assert_uint_eq(c->sketch.stack_depth, 64);
	ck_assert_uint_eq(c->sketch.seen_bits, 1048576);
	ck_assert_uint_eq(c->sketch.floor, 3);
	ck_assert_uint_eq(c->sketch.threshold, 4);
	ck_assert_uint_eq(c->sketch.threshold_max, 4096);
	ck_assert_double_eq(c->cpu_high, 0.05);
	ck_assert_double_eq(c->cpu_low, 0.01);
	ck_assert_uint_eq(c->nvital_sketch, 4);

	s = config_sketch_for(c, "io");
	ck_assert_str_eq(s->vital, "io");
	ck_assert_uint_eq(s->hca_size, 256);
	ck_assert_uint_eq(s->threshold_max, 1024);
	ck_assert_uint_eq(s->max_samples, 500);
	ck_assert_uint_eq(s->stack_depth, 64);
	ck_assert_uint_eq(s->seen_bits, 1048576);
	ck_assert_uint_eq(s->floor, 3);
	ck_assert_uint_eq(s->threshold, 4);

	s = config_sketch_for(c, "cpu");
	ck_assert_str_eq(s->vital, "cpu");
	ck_assert_uint_eq(s->max_samples, 100);
	ck_assert_uint_eq(s->hca_size, 4096);
	ck_assert_uint_eq(s->threshold_max, 4096);

	s = config_sketch_for(c, "net");
	ck_assert_str_eq(s->vital, "net");
	ck_assert_uint_eq(s->hca_size, 4096);
	ck_assert_uint_eq(s->hca_max, 16384);

	/* hca_max not set: it follows hca_size up (a fixed size). */
	s = config_sketch_for(c, "big");
	ck_assert_uint_eq(s->hca_size, 65536);
	ck_assert_uint_eq(s->hca_max, 65536);
	ck_assert_uint_eq(s->max_samples, 500);

	ck_assert_ptr_eq(config_sketch_for(c, "sched"), &c->sketch);
	ck_assert_ptr_eq(config_sketch_for(c, NULL), &c->sketch);
	config_free(c);
}
END_TEST

START_TEST(test_plugins)
{
	const struct config_plugin *p;
	const struct config_entry *e;
	struct config *c = load_ok("probes:\n"
				   "  cpu:\n"
				   "    rate: 99\n"
				   "    labels: [a, b]\n"
				   "  sched:\n"
				   "filters:\n"
				   "  ewma:\n"
				   "    enable: false\n"
				   "    alpha: 0.3\n"
				   "    empty:\n"
				   "plugins:\n"
				   "  store: {}\n"
				   "  http:\n"
				   "    enable: yes\n"
				   "    listen:\n"
				   "      - ':8080'\n"
				   "      - \"[::1]:80\"\n");

	ck_assert_uint_eq(c->nplugins, 5);

	p = &c->plugins[0];
	ck_assert_str_eq(p->name, "cpu");
	ck_assert_uint_eq(p->kind, VITALS_PLUGIN_PROBE);
	ck_assert_uint_eq(p->line, 2);
	ck_assert_uint_eq(p->col, 3);
	ck_assert_int_eq(p->enabled, 1);
	ck_assert_uint_eq(p->nentries, 2);
	e = &p->entries[0];
	ck_assert_str_eq(e->key, "rate");
	ck_assert_uint_eq(e->line, 3);
	ck_assert_uint_eq(e->col, 5);
	ck_assert_uint_eq(e->vline, 3);
	ck_assert_uint_eq(e->vcol, 11);
	ck_assert_int_eq(e->is_seq, 0);
	ck_assert_str_eq(e->scalar, "99");
	e = &p->entries[1];
	ck_assert_str_eq(e->key, "labels");
	ck_assert_uint_eq(e->line, 4);
	ck_assert_uint_eq(e->vcol, 13);
	ck_assert_int_eq(e->is_seq, 1);
	ck_assert_ptr_null(e->scalar);
	ck_assert_uint_eq(e->nitems, 2);
	ck_assert_str_eq(e->items[0], "a");
	ck_assert_str_eq(e->items[1], "b");

	p = &c->plugins[1];
	ck_assert_str_eq(p->name, "sched");
	ck_assert_uint_eq(p->kind, VITALS_PLUGIN_PROBE);
	ck_assert_uint_eq(p->line, 5);
	ck_assert_int_eq(p->enabled, 1);
	ck_assert_uint_eq(p->nentries, 0);

	p = &c->plugins[2];
	ck_assert_str_eq(p->name, "ewma");
	ck_assert_uint_eq(p->kind, VITALS_PLUGIN_FILTER);
	ck_assert_uint_eq(p->line, 7);
	ck_assert_int_eq(p->enabled, 0);
	ck_assert_uint_eq(p->nentries, 2);
	ck_assert_str_eq(p->entries[0].key, "alpha");
	ck_assert_str_eq(p->entries[0].scalar, "0.3");
	ck_assert_str_eq(p->entries[1].key, "empty");
	ck_assert_ptr_null(p->entries[1].scalar);
	ck_assert_int_eq(p->entries[1].is_seq, 0);

	p = &c->plugins[3];
	ck_assert_str_eq(p->name, "store");
	ck_assert_uint_eq(p->kind, VITALS_PLUGIN_OUTPUT);
	ck_assert_uint_eq(p->line, 12);
	ck_assert_uint_eq(p->nentries, 0);

	p = &c->plugins[4];
	ck_assert_str_eq(p->name, "http");
	ck_assert_uint_eq(p->kind, VITALS_PLUGIN_OUTPUT);
	ck_assert_int_eq(p->enabled, 1);
	ck_assert_uint_eq(p->nentries, 1);
	e = &p->entries[0];
	ck_assert_str_eq(e->key, "listen");
	ck_assert_uint_eq(e->line, 15);
	ck_assert_uint_eq(e->col, 5);
	ck_assert_uint_eq(e->vline, 16);
	ck_assert_uint_eq(e->vcol, 7);
	ck_assert_uint_eq(e->nitems, 2);
	ck_assert_str_eq(e->items[0], ":8080");
	ck_assert_str_eq(e->items[1], "[::1]:80");
	config_free(c);
}
END_TEST

/* The entries kept for a plugin fill its options with positions intact. */
START_TEST(test_plugin_option_fill)
{
	struct opts {
		int64_t rate;
		struct vitals_strlist labels;
	} o;
	static const struct vitals_option table[] = {
		{ "rate", VITALS_OPT_INT, offsetof(struct opts, rate), "1",
		    NULL, 1, 100 },
		{ "labels", VITALS_OPT_STRLIST, offsetof(struct opts, labels),
		    NULL, NULL, 0, 0 },
		{ NULL, 0, 0, NULL, NULL, 0, 0 },
	};
	struct config *c;
	char err[512], want[512];

	c = load_ok("probes:\n  cpu:\n    labels: x, y\n    rate: 50\n");
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(option_fill(table, &o, c->plugins[0].entries,
			     c->plugins[0].nentries, c->file, err, sizeof(err)),
	    0);
	ck_assert_int_eq(o.rate, 50);
	ck_assert_uint_eq(o.labels.n, 2);
	ck_assert_str_eq(o.labels.v[1], "y");
	option_free(table, &o);
	config_free(c);

	c = load_ok("probes:\n  cpu:\n    labels: [x]\n    rate:   fast\n"
		    "    ratee: 5\n");
	ck_assert_int_eq(option_fill(table, &o, c->plugins[0].entries,
			     c->plugins[0].nentries, c->file, err, sizeof(err)),
	    -EINVAL);
	snprintf(want, sizeof(want),
	    "%s:4:13: option 'rate': expected an "
	    "integer, got \"fast\"",
	    path);
	ck_assert_str_eq(err, want);
	option_free(table, &o);
	ck_assert_int_eq(option_fill(table, &o, c->plugins[0].entries + 2, 1,
			     c->file, err, sizeof(err)),
	    -EINVAL);
	snprintf(want, sizeof(want),
	    "%s:5:5: unknown option 'ratee' (valid: "
	    "rate, labels)",
	    path);
	ck_assert_str_eq(err, want);
	option_free(table, &o);
	config_free(c);
}
END_TEST

START_TEST(test_missing)
{
	struct config *c = (struct config *)&c;
	char err[256], want[256];

	snprintf(want, sizeof(want), "%s/nope.yaml", dir);
	ck_assert_int_eq(config_load(want, &c, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_eq(c, (struct config *)&c);
	strcat(want, ": No such file or directory");
	ck_assert_str_eq(err, want);

	ck_assert_int_eq(config_load(dir, &c, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want),
	    "%s: a directory, not a regular file: not read", dir);
	ck_assert_str_eq(err, want);
}
END_TEST

static const char valid_top[] =
    "(valid: host, data_dir, epoch, retention, "
    "plugin_path, log, log_level, filter_queue, filter_queue_samples, sketch, probes, filters, "
    "plugins, timescales)";
static const char valid_sizes[] = "hca_size, max_samples, stack_depth, "
				  "seen_bits, floor, threshold, threshold_max, "
				  "hca_max";
static const char dur_expect[] =
    "expected a duration of at least 100ms (e.g. 250ms, 5s, 2m)";

/* Bad files and the message after "FILE". */
static const struct {
	const char *yaml;
	const char *fmt; /* one %s: valid_top, valid_sizes or dur_expect */
	const char *arg;
} error_cases[] = {
	/* malformed YAML */
	{ "epoch: 5s\nfoo: a: b\n",
	    ":2:7: mapping values are not allowed in this context", NULL },
	{ "plugin_path: [a, b\nhost: x\n",
	    ":2:5: did not find expected ',' "
	    "or ']' (while parsing a flow sequence)",
	    NULL },
	{ "host: \"unterminated\n",
	    ":2:1: found unexpected end of stream "
	    "(while scanning a quoted scalar)",
	    NULL },
	{ "data_dir: ok\nhost: \xc3\x28\n",
	    ":2:8: invalid trailing UTF-8 octet", NULL },
	{ "host: *nope\n", ":1:7: found undefined alias", NULL },
	{ "host: a\n---\nhost: b\n", ":3:1: only one YAML document is allowed",
	    NULL },
	/* the top level */
	{ "- a\n- b\n",
	    ":1:1: expected a mapping of settings at the top "
	    "level, got a sequence",
	    NULL },
	{ "just words\n",
	    ":1:1: expected a mapping of settings at the top "
	    "level, got \"just words\"",
	    NULL },
	{ "host: a\nepochs: 5s\n", ":2:1: unknown setting 'epochs' %s",
	    valid_top },
	{ "epoch: 5s\nepoch: 6s\n",
	    ":2:1: setting 'epoch' given twice "
	    "(first at line 1, column 1)",
	    NULL },
	{ "? [a, b]\n: c\n", ":1:3: keys must be scalars, got a sequence",
	    NULL },
	/* global values */
	{ "host: \"\"\n",
	    ":1:7: setting 'host': expected a host name, "
	    "got \"\"",
	    NULL },
	{ "host: [a]\n",
	    ":1:7: setting 'host': expected a host name, "
	    "got a sequence",
	    NULL },
	{ "data_dir: {a: b}\n",
	    ":1:11: setting 'data_dir': expected an "
	    "absolute path, got a mapping",
	    NULL },
	/* What would make every epoch fail to store is refused here. */
	{ "host: web/1\n",
	    ":1:7: setting 'host': '/' cannot be in a file name (epoch files "
	    "are named after the host)",
	    NULL },
	{ "host: \"web\\0x\"\n",
	    ":1:7: setting 'host': a NUL byte cannot be in a file name (epoch "
	    "files are named after the host)",
	    NULL },
	{ "data_dir: var/lib/vitals\n",
	    ":1:11: setting 'data_dir': expected an absolute path, got "
	    "'var/lib/vitals'",
	    NULL },
	{ "data_dir: \"/var/\\0lib\"\n",
	    ":1:11: setting 'data_dir': a NUL byte cannot be in a path", NULL },
	{ "epoch: fast\n", ":1:8: setting 'epoch': %s, got \"fast\"",
	    dur_expect },
	{ "epoch: 50ms\n", ":1:8: setting 'epoch': %s, got \"50ms\"",
	    dur_expect },
	{ "epoch: -5s\n", ":1:8: setting 'epoch': %s, got \"-5s\"",
	    dur_expect },
	{ "retention: 5\n",
	    ":1:12: setting 'retention': expected a mapping, "
	    "got \"5\"",
	    NULL },
	{ "retention:\n  - 1\n",
	    ":2:3: setting 'retention': expected a "
	    "mapping, got a sequence",
	    NULL },
	{ "retention:\n  keep: 1\n",
	    ":2:3: unknown setting 'retention.keep' "
	    "(valid: max_age, max_size)",
	    NULL },
	{ "retention:\n  max_age: -1d\n",
	    ":2:12: setting "
	    "'retention.max_age': expected a duration (e.g. 12h, 30d; 0 keeps "
	    "epochs forever), got \"-1d\"",
	    NULL },
	{ "retention:\n  max_size: big\n",
	    ":2:13: setting "
	    "'retention.max_size': expected a size (e.g. 512M, 10G; 0 for no "
	    "limit), got \"big\"",
	    NULL },
	{ "plugin_path:\n  - [a]\n",
	    ":2:5: setting 'plugin_path': list "
	    "items must be scalars, got a sequence",
	    NULL },
	{ "plugin_path: {a: 1}\n",
	    ":1:14: setting 'plugin_path': expected "
	    "a scalar or a list, got a mapping",
	    NULL },
	{ "log: file\n",
	    ":1:6: setting 'log': expected stderr or syslog, "
	    "got \"file\"",
	    NULL },
	{ "log_level: verbose\n",
	    ":1:12: setting 'log_level': expected "
	    "error, warn, info or debug, got \"verbose\"",
	    NULL },
	{ "filter_queue: 1\n",
	    ":1:15: setting 'filter_queue': expected an "
	    "integer from 2 to 1024, got \"1\"",
	    NULL },
	{ "filter_queue: 1025\n",
	    ":1:15: setting 'filter_queue': expected "
	    "an integer from 2 to 1024, got \"1025\"",
	    NULL },
	/* sketch */
	{ "sketch: [1]\n",
	    ":1:9: setting 'sketch': expected a mapping, "
	    "got a sequence",
	    NULL },
	{ "sketch:\n  hca_size: 1000\n",
	    ":2:13: setting 'sketch.hca_size': "
	    "expected a power of two from 32 to 65536, got \"1000\"",
	    NULL },
	{ "sketch:\n  hca_size: 16\n",
	    ":2:13: setting 'sketch.hca_size': "
	    "expected a power of two from 32 to 65536, got \"16\"",
	    NULL },
	{ "sketch:\n  hca_size: 131072\n",
	    ":2:13: setting "
	    "'sketch.hca_size': expected a power of two from 32 to 65536, "
	    "got \"131072\"",
	    NULL },
	{ "sketch:\n  hca_size: 1024\n  hca_max: 512\n",
	    ":3:12: setting 'sketch.hca_max': 512 is below hca_size 1024",
	    NULL },
	{ "sketch:\n  hca_max: 3000\n",
	    ":2:12: setting 'sketch.hca_max': "
	    "expected a power of two from hca_size to 65536, got \"3000\"",
	    NULL },
	{ "sketch:\n  vitals:\n    cpu:\n      hca_max: 64\n"
	  "  hca_size: 256\n",
	    ":4:16: setting 'sketch.vitals.cpu.hca_max': 64 is below "
	    "hca_size 256",
	    NULL },
	{ "sketch:\n  hca_memory: lots\n",
	    ":2:15: setting 'sketch.hca_memory': expected a size (e.g. 1M, "
	    "4M; 0: no bound but hca_max), got \"lots\"",
	    NULL },
	{ "sketch:\n  max_samples: 0\n",
	    ":2:16: setting "
	    "'sketch.max_samples': expected an integer from 1 to 1000000, "
	    "got \"0\"",
	    NULL },
	{ "sketch:\n  stack_depth: 65\n",
	    ":2:16: setting "
	    "'sketch.stack_depth': expected an integer from 0 to 64, "
	    "got \"65\"",
	    NULL },
	{ "sketch:\n  seen_bits: 3000\n",
	    ":2:14: setting "
	    "'sketch.seen_bits': expected a power of two from 1024 to "
	    "16777216, got \"3000\"",
	    NULL },
	{ "sketch:\n  floor: 0\n",
	    ":2:10: setting 'sketch.floor': expected "
	    "an integer >= 1, got \"0\"",
	    NULL },
	{ "sketch:\n  threshold: 3\n",
	    ":2:14: setting 'sketch.threshold': "
	    "expected a power of two >= 2, got \"3\"",
	    NULL },
	{ "sketch:\n  threshold: 4\n  threshold_max: 2\n",
	    ":3:18: setting "
	    "'sketch.threshold_max': 2 is below threshold 4",
	    NULL },
	{ "sketch:\n  threshold: 131072\n",
	    ":2:14: setting "
	    "'sketch.threshold': 131072 is above threshold_max 65536",
	    NULL },
	{ "sketch:\n  cpu_high: 1.5\n",
	    ":2:13: setting 'sketch.cpu_high': "
	    "expected a share of one CPU from 0 to 1 (e.g. 0.01), got \"1.5\"",
	    NULL },
	{ "sketch:\n  cpu_high: 0.1\n  cpu_low: 0.2\n",
	    ":3:12: setting "
	    "'sketch.cpu_low': 0.2 is above cpu_high 0.1",
	    NULL },
	{ "sketch:\n  cpu_high: 0.001\n",
	    ":2:13: setting 'sketch.cpu_high': "
	    "0.001 is below cpu_low 0.0025 (set cpu_low too)",
	    NULL },
	{ "sketch:\n  colour: red\n",
	    ":2:3: unknown setting 'sketch.colour' "
	    "(valid: %s, cpu_high, cpu_low, disk_budget, sample_memory, hca_memory, vitals)",
	    valid_sizes },
	{ "sketch:\n  vitals: [cpu]\n",
	    ":2:11: setting 'sketch.vitals': "
	    "expected a mapping of vital names to sketch sizes, got a "
	    "sequence",
	    NULL },
	{ "sketch:\n  vitals:\n    cpu: 5\n",
	    ":3:10: setting "
	    "'sketch.vitals.cpu': expected a mapping of sketch sizes, "
	    "got \"5\"",
	    NULL },
	{ "sketch:\n  vitals:\n    cpu:\n      cpu_high: 0.1\n",
	    ":4:7: "
	    "unknown setting 'sketch.vitals.cpu.cpu_high' (valid: %s)",
	    valid_sizes },
	{ "sketch:\n  vitals:\n    cpu:\n      hca_size: 100\n",
	    ":4:17: "
	    "setting 'sketch.vitals.cpu.hca_size': expected a power of two "
	    "from 32 to 65536, got \"100\"",
	    NULL },
	{ "sketch:\n  vitals:\n    cpu:\n      threshold: 131072\n",
	    ":4:18: "
	    "setting 'sketch.vitals.cpu.threshold': 131072 is above "
	    "threshold_max 65536",
	    NULL },
	{ "sketch:\n  threshold_max: 64\n  vitals:\n    io:\n"
	  "      threshold: 128\n",
	    ":5:18: setting "
	    "'sketch.vitals.io.threshold': 128 is above threshold_max 64",
	    NULL },
	{ "sketch:\n  vitals:\n    cpu: {}\n    cpu: {}\n",
	    ":4:5: setting "
	    "'sketch.vitals.cpu' given twice (first at line 3, column 5)",
	    NULL },
	/* plugin sections */
	{ "probes:\n  - cpu\n",
	    ":2:3: setting 'probes': expected a mapping "
	    "of plugin names to options, got a sequence",
	    NULL },
	{ "plugins: store\n",
	    ":1:10: setting 'plugins': expected a mapping "
	    "of plugin names to options, got \"store\"",
	    NULL },
	{ "probes:\n  cpu:\nfilters:\n  cpu: {}\n",
	    ":4:3: plugin 'cpu' "
	    "configured twice (first at line 2, column 3)",
	    NULL },
	{ "plugins:\n  store:\n  store:\n",
	    ":3:3: plugin 'store' "
	    "configured twice (first at line 2, column 3)",
	    NULL },
	{ "probes:\n  cpu:\n    opt:\n      a: 1\n",
	    ":4:7: plugin 'cpu': "
	    "option 'opt': expected a scalar or a list, got a mapping",
	    NULL },
	{ "probes:\n  cpu:\n    opt:\n      - a: 1\n",
	    ":4:9: plugin 'cpu': "
	    "option 'opt': list items must be scalars, got a mapping",
	    NULL },
	{ "probes:\n  cpu: yes\n",
	    ":2:8: plugin 'cpu': expected a mapping "
	    "of options, got \"yes\"",
	    NULL },
	{ "filters:\n  ewma:\n    enable: maybe\n",
	    ":3:13: plugin 'ewma': "
	    "option 'enable': expected a boolean (true/false), got \"maybe\"",
	    NULL },
	{ "probes:\n  cpu:\n    rate: 1\n    rate: 2\n",
	    ":4:5: plugin 'cpu': "
	    "option 'rate' given twice (first at line 3, column 5)",
	    NULL },
	{ "probes:\n  \"\": {}\n", ":2:3: a plugin name must not be empty",
	    NULL },
};

START_TEST(test_errors)
{
	struct config *c;
	char err[1024], suffix[512], want[1024];

	snprintf(
	    suffix, sizeof(suffix), error_cases[_i].fmt, error_cases[_i].arg);
	snprintf(want, sizeof(want), "%s%s", path, suffix);
	ck_assert_int_eq(
	    load(error_cases[_i].yaml, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err, want);
}
END_TEST

/*
 * A host name too long for an epoch's file name: refused with its
 * position, while the longest that fits is taken.
 */
START_TEST(test_host_length)
{
	char yaml[400], want[256];
	struct config *c;
	char err[1024];

	memset(yaml, 0, sizeof(yaml));
	memcpy(yaml, "host: ", 6);
	memset(yaml + 6, 'h', 300);
	yaml[306] = '\n';
	ck_assert_int_eq(load(yaml, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	snprintf(want, sizeof(want),
	    "%s:1:7: setting 'host': 300 bytes, more "
	    "than the 200 an epoch file name has room for",
	    path);
	ck_assert_str_eq(err, want);
	yaml[6 + 200] = '\n';
	yaml[6 + 201] = '\0';
	ck_assert_int_eq(load(yaml, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(c->host), 200);
	config_free(c);
}
END_TEST

/*
 * What is not a regular file of reasonable size is refused, naming the
 * file: -c /dev/zero would read forever, a FIFO would block.
 */
START_TEST(test_not_a_file)
{
	char fifo[600], big[600], err[1024], want[1024];
	struct config *c = NULL;
	FILE *f;

	ck_assert_int_eq(
	    config_load("/dev/zero", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(
	    err, "/dev/zero: a character device, not a regular file: not read");
	snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(config_load(fifo, &c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: a FIFO, not a regular file: not read",
	    fifo);
	ck_assert_str_eq(err, want);
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	ck_assert_ptr_nonnull(f = fopen(big, "w"));
	ck_assert_int_eq(fseek(f, 5 << 20, SEEK_SET), 0);
	ck_assert_int_eq(fputc('\n', f), '\n');
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(config_load(big, &c, err, sizeof(err)), -EFBIG);
	snprintf(want, sizeof(want),
	    "%s: %d bytes, more than the 4 MiB "
	    "limit: not read",
	    big, (5 << 20) + 1);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(c);
}
END_TEST

/* A message that does not fit is cut, never overflows. */
START_TEST(test_short_err)
{
	struct config *c;
	char err[16];

	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(load("epochs: 1\n", &c, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(strlen(err), sizeof(err) - 1);
	ck_assert_int_eq(load("epochs: 1\n", &c, NULL, 0), -EINVAL);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *ok = tcase_create("valid"), *bad = tcase_create("errors");

	tcase_add_checked_fixture(ok, setup, teardown);
	tcase_add_test(ok, test_default);
	tcase_add_loop_test(ok, test_empty, 0, NCASES(empty_cases));
	tcase_add_test(ok, test_globals);
	tcase_add_test(ok, test_edges);
	tcase_add_test(ok, test_nulls);
	tcase_add_loop_test(ok, test_log_level, 0, NCASES(level_cases));
	tcase_add_test(ok, test_sketch);
	tcase_add_test(ok, test_plugins);
	tcase_add_test(ok, test_plugin_option_fill);
	tcase_add_test(ok, test_missing);
	tcase_add_test(ok, test_not_a_file);
	tcase_add_test(ok, test_host_length);
	suite_add_tcase(s, ok);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_loop_test(bad, test_errors, 0, NCASES(error_cases));
	tcase_add_test(bad, test_short_err);
	suite_add_tcase(s, bad);
	return s;
}

int
main(void)
{
	return testutil_run(config_suite());
}
