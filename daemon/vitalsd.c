/* SPDX-License-Identifier: MIT */
/*
 * vitalsd: the collector daemon.  Parses the command line, reads the
 * configuration, lists or checks plugins, or runs the host loop in the
 * foreground until a signal or --epochs N.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "config.h"
#include "host.h"
#include "instance.h"
#include "loader.h"
#include "log.h"
#include "option.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif
#ifndef PKGLIBDIR
#define PKGLIBDIR "/usr/local/lib/vitals"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define VITALSD_DEFAULT_CONF SYSCONFDIR "/vitals/vitals.yaml"

struct vitalsd_args {
	const char *conf; /* -c */
	const char *data_dir; /* --data-dir */
	const char *log_level; /* --log-level */
	uint64_t epochs; /* --epochs */
	int list, verbose, json, check;
};

static void
vitalsd_usage(FILE *f)
{
	fprintf(f,
	    "usage: vitalsd [-c FILE] [--data-dir DIR] [--epochs N] [--log-level L]\n"
	    "       vitalsd [-c FILE] --list-plugins [-v] [--json]\n"
	    "       vitalsd [-c FILE] --check-config\n"
	    "\n"
	    "  -c, --config FILE   configuration (default " VITALSD_DEFAULT_CONF
	    ")\n"
	    "  -D, --data-dir DIR  store epochs in DIR instead of the configured data_dir\n"
	    "  -n, --epochs N      close N epochs, then exit\n"
	    "  -l, --list-plugins  list the plugins found and whether they can run here\n"
	    "  -v, --verbose       with --list-plugins: every option, type, default, help\n"
	    "  -j, --json          with --list-plugins: JSON output\n"
	    "  -t, --check-config  validate the configuration and every plugin's option\n"
	    "                      values (disabled plugins too), then exit\n"
	    "  -L, --log-level L   error, warn, info or debug (overrides log_level)\n"
	    "  -V, --version       print the version\n"
	    "\n"
	    "Runs in the foreground.  SIGTERM/SIGINT write the current partial epoch\n"
	    "and exit 0; SIGHUP reloads the configuration.\n");
}

static int
vitalsd_parse(int argc, char **argv, struct vitalsd_args *a)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "data-dir", required_argument, NULL, 'D' },
		{ "epochs", required_argument, NULL, 'n' },
		{ "list-plugins", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "check-config", no_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t n;
	int c;

	while ((c = getopt_long(
		    argc, argv, "c:D:n:lvjtL:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->conf = optarg;
			break;
		case 'D':
			a->data_dir = optarg;
			break;
		case 'n':
			if (option_parse_int(optarg, &n) != 0 || n < 1) {
				fprintf(stderr,
				    "vitalsd: --epochs: expected a positive integer, got \"%s\"\n",
				    optarg);
				return 2;
			}
			a->epochs = (uint64_t)n;
			break;
		case 'l':
			a->list = 1;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'j':
			a->json = 1;
			break;
		case 't':
			a->check = 1;
			break;
		case 'L':
			a->log_level = optarg;
			break;
		case 'V':
			printf("vitalsd %s\n", PACKAGE_VERSION);
			exit(0);
		case 'h':
			vitalsd_usage(stdout);
			exit(0);
		default:
			vitalsd_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vitalsd: unexpected argument '%s'\n",
		    argv[optind]);
		return 2;
	}
	return 0;
}

/* ---- --list-plugins ---- */

static void
vitalsd_on_refused(const char *path, const char *reason, void *arg)
{
	(void)path;
	(void)arg;
	fprintf(stderr, "vitalsd: %s\n", reason);
}

static const char *
vitalsd_kind(uint32_t kind)
{
	return kind == VITALS_PLUGIN_PROBE ? "probe"
	    : kind == VITALS_PLUGIN_FILTER ? "filter"
					   : "output";
}

static json_t *
vitalsd_plugin_json(const struct loader_plugin *p, int ok, const char *why)
{
	const struct vitals_option *o;
	json_t *j, *opts;

	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name", p->name, "kind",
	    vitalsd_kind(p->desc->kind), "version",
	    p->desc->version ? p->desc->version : "", "description",
	    p->desc->description, "path", p->path, "available", ok);
	if (!ok)
		json_object_set_new(j, "why", json_string(why));
	opts = json_array();
	for (o = p->desc->options; o && o->key; o++)
		json_array_append_new(opts,
		    json_pack("{s:s, s:s, s:s?, s:s?}", "key", o->key, "type",
			option_type_name(o->type), "default", o->def, "help",
			o->help));
	json_object_set_new(j, "options", opts);
	return j;
}

static void
vitalsd_plugin_text(
    const struct loader_plugin *p, int ok, const char *why, int verbose)
{
	const struct vitals_option *o;

	printf("%-12s %-7s %-8s %-32s %s\n", p->name,
	    vitalsd_kind(p->desc->kind),
	    p->desc->version ? p->desc->version : "-", ok ? "yes" : why,
	    p->desc->description);
	if (!verbose)
		return;
	for (o = p->desc->options; o && o->key; o++)
		printf("    %-16s %-9s %-14s %s\n", o->key,
		    option_type_name(o->type), o->def ? o->def : "-",
		    o->help ? o->help : "");
	if (p->desc->options && p->desc->options[0].key)
		printf("\n");
}

static int
vitalsd_list(struct loader *l, int verbose, int json)
{
	const struct loader_plugin *p;
	json_t *arr = json_array();
	char why[512];
	size_t i, n;
	int ok;

	loader_scan(l, vitalsd_on_refused, NULL);
	p = loader_plugins(l, &n);
	if (!json)
		printf("%-12s %-7s %-8s %-32s %s\n", "NAME", "KIND", "VERSION",
		    "AVAILABLE", "DESCRIPTION");
	for (i = 0; i < n; i++) {
		why[0] = '\0';
		ok = p[i].desc->available == NULL ||
		    p[i].desc->available(why, sizeof(why)) == 0;
		if (!ok && !why[0])
			snprintf(why, sizeof(why), "no (no reason given)");
		if (json)
			json_array_append_new(
			    arr, vitalsd_plugin_json(&p[i], ok, why));
		else
			vitalsd_plugin_text(&p[i], ok, why, verbose);
	}
	if (json)
		json_dumpf(arr, stdout, JSON_INDENT(2)), printf("\n");
	json_decref(arr);
	if (n == 0)
		fprintf(stderr,
		    "vitalsd: no plugins found: set VITALS_PLUGIN_PATH "
		    "or plugin_path, or install them under %s\n",
		    PKGLIBDIR);
	return n > 0 ? 0 : 1;
}

/* ---- configuration ---- */

/*
 * --data-dir DIR in place of c's data_dir, made absolute (the daemon
 * must not depend on where it was started from).  Returns 0, or 2 with a
 * message printed.
 */
static int
vitalsd_data_dir(const char *dir, struct config *c)
{
	char cwd[PATH_MAX], *abs = NULL;
	size_t n;

	if (dir[0] == '/')
		abs = strdup(dir);
	else if (getcwd(cwd, sizeof(cwd)) != NULL &&
	    (abs = malloc((n = strlen(cwd) + strlen(dir) + 2))) != NULL)
		snprintf(abs, n, "%s/%s", cwd, dir);
	if (abs == NULL) {
		fprintf(stderr, "vitalsd: --data-dir %s: %s\n", dir,
		    strerror(errno ? errno : ENOMEM));
		return 2;
	}
	if (strlen(abs) > CONFIG_DATA_DIR_MAX) {
		fprintf(stderr,
		    "vitalsd: --data-dir %s: more than the %d "
		    "bytes a data dir may have\n",
		    dir, CONFIG_DATA_DIR_MAX);
		free(abs);
		return 2;
	}
	free(c->data_dir);
	c->data_dir = abs;
	c->data_dir_line = c->data_dir_col = 0;
	c->data_dir_cli = 1;
	return 0;
}

/*
 * Read the configuration.  Without -c, a missing default file means all
 * defaults; with -c, it is an error.  Returns 0 or 2 (message printed).
 */
static int
vitalsd_config(const struct vitalsd_args *a, struct config **out)
{
	const char *path = a->conf ? a->conf : VITALSD_DEFAULT_CONF;
	char err[1024];
	int r, lvl;

	r = config_load(path, out, err, sizeof(err));
	if (r == -ENOENT && a->conf == NULL)
		r = (*out = config_default()) ? 0 : -ENOMEM;
	if (r != 0) {
		fprintf(stderr, "vitalsd: %s\n", err);
		return 2;
	}
	if (a->data_dir && vitalsd_data_dir(a->data_dir, *out) != 0)
		return 2;
	if (a->log_level) {
		if ((lvl = log_level_parse(a->log_level)) < 0) {
			fprintf(stderr,
			    "vitalsd: --log-level: expected error, warn, info or debug, got \"%s\"\n",
			    a->log_level);
			return 2;
		}
		(*out)->log_level = lvl;
	}
	return 0;
}

static int
vitalsd_run(struct config *c, struct loader *l, uint64_t epochs)
{
	struct host *h;
	char err[1024];
	int r;

#ifdef __GLIBC__
	/*
	 * A fixed mmap threshold: glibc raises it to the size of each large
	 * block freed (libbpf's BTF at start frees several MB), after which
	 * every sketch buffer and epoch copy comes from the heap, resident
	 * from the first byte and kept after it is freed.  With it fixed,
	 * blocks of 128 kB and more are mapped on their own: pages never
	 * touched (a quiet vital's sample room) cost nothing, and a freed
	 * block goes back to the system.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	/* Before any thread starts: threads take the sets they start with. */
	if ((r = caps_drop(err, sizeof(err))) != 0) {
		log_msg(VITALS_LOG_ERR, "core", "%s", err);
		return 1;
	}
	if (geteuid() == 0)
		log_msg(VITALS_LOG_DEBUG, "core", "capabilities kept: %s",
		    caps_kept);
	if ((h = host_new(c, l)) == NULL) {
		fprintf(stderr, "vitalsd: out of memory\n");
		return 1;
	}
	if ((r = host_start(h, err, sizeof(err))) != 0) {
		log_msg(VITALS_LOG_ERR, "core", "%s", err);
		host_free(h);
		return 1;
	}
	log_msg(VITALS_LOG_INFO, "core", "started: epoch %gs, data in %s",
	    (double)c->epoch_ns / 1e9, c->data_dir);
	r = host_run(h, epochs);
	host_free(h);
	/*
	 * A filter that could not save its state (a model) at stop failed;
	 * so did a run that lost epochs (an output's write failed, or the
	 * store still held unwritten ones when it stopped).
	 */
	if (instance_write_failures() > 0)
		log_msg(VITALS_LOG_ERR, "core",
		    "%u epoch write%s failed: "
		    "epochs were lost",
		    instance_write_failures(),
		    instance_write_failures() == 1 ? "" : "s");
	return r == 0 && instance_stop_failures() == 0 &&
		instance_write_failures() == 0
	    ? 0
	    : 1;
}

int
main(int argc, char **argv)
{
	struct vitalsd_args a = { 0 };
	struct config *c = NULL;
	struct loader *l;
	char err[1024];
	int r;

	if ((r = vitalsd_parse(argc, argv, &a)) != 0)
		return r;
	if ((r = vitalsd_config(&a, &c)) != 0)
		return r;
	log_setup(strcmp(c->log, "syslog") == 0 ? LOG_TO_SYSLOG : LOG_TO_STDERR,
	    c->log_level, "vitalsd");
	l = loader_new((const char *const *)c->plugin_path.v, c->plugin_path.n);
	if (l == NULL) {
		config_free(c);
		return 1;
	}
	if (a.list) {
		r = vitalsd_list(l, a.verbose, a.json);
	} else if (a.check) {
		r = host_check(c, l, 0, err, sizeof(err));
		if (r != 0)
			fprintf(stderr, "vitalsd: %s\n", err);
		else
			printf("%s: configuration OK\n",
			    c->file ? c->file : "(defaults)");
		r = r ? 2 : 0;
	} else if ((r = host_check(c, l, 1, err, sizeof(err))) != 0) {
		/* What --check-config refuses, the daemon refuses alike. */
		log_msg(VITALS_LOG_ERR, "core", "%s", err);
		r = 2;
	} else {
		r = vitalsd_run(c, l, a.epochs);
		c = NULL; /* the host owned it */
	}
	config_free(c);
	loader_free(l);
	return r;
}
