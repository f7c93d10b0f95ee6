/* SPDX-License-Identifier: MIT */
/*
 * `vitals pprof`: the stacks of one vital over a time range, weighted by
 * the HCA weight they stand for (<vitals/profile.h>), written as a gzip'd
 * pprof profile for `go tool pprof`, or as folded stacks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vitals/aggregate.h>
#include <vitals/profile.h>

#include "args.h"
#include "cli.h"
#include "config.h"
#include "pprof.h"

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define PPROF_DATA_DIR LOCALSTATEDIR "/lib/vitals"
#define PPROF_CONFIG SYSCONFDIR "/vitals/vitals.yaml"

#define PPROF_OK 0
#define PPROF_RUNTIME 1
#define PPROF_USAGE 2
#define PPROF_NS 1000000000ull
/* The default range: the last hour. */
#define PPROF_SPAN (3600 * PPROF_NS)
#define PPROF_MAX_HOSTS 32

const char pprof_usage[] =
    "  pprof [--vital V] [--from T] [--to T] [--host H]... [--exe E]\n"
    "        [-o FILE] [--folded]\n"
    "      the stacks of vital V (default cpu) over the range (default\n"
    "      the last hour), each weighted by the HCA weight it stands for,\n"
    "      as a gzip'd pprof profile (go tool pprof) or, with --folded,\n"
    "      folded stacks (flamegraph.pl, speedscope); --exe: only the\n"
    "      samples of that exe (a path, or a name); written to FILE, else\n"
    "      to stdout unless it is a terminal\n";

/* What the command was given. */
struct pprof_opts {
	const char *data_dir_opt; /* --data-dir, or NULL */
	const char *config_opt; /* -c, or NULL */
	const char *vital;
	const char *exe; /* --exe, or NULL */
	const char *output; /* -o, or NULL for stdout */
	const char *from_s, *to_s;
	const char *hosts[PPROF_MAX_HOSTS];
	uint32_t nhosts;
	int folded;
	uint64_t now, from, to;
};

static void pprof_msg(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int pprof_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
pprof_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: pprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A bad argument: the message and the usage; returns PPROF_USAGE. */
static int
pprof_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: pprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr,
	    "usage: vitals [--data-dir DIR] [-c CONFIG] COMMAND\n%s",
	    pprof_usage);
	return PPROF_USAGE;
}

/* ---- times ---- */

static uint64_t
pprof_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * PPROF_NS + (uint64_t)ts.tv_nsec;
}


static int
pprof_bad_time(const char *what, const char *s)
{
	pprof_msg("%s: bad time '%s': expected ISO-8601 (2026-11-22T10:00, "
		  "optionally with seconds and Z or +01:00), a date "
		  "(2026-11-22), now, a time before now (-30m, -2h, -1d) or "
		  "@UNIXSECONDS",
	    what, s);
	return PPROF_USAGE;
}

/* --from/--to, by default the last hour. */
static int
pprof_window(struct pprof_opts *o)
{
	o->to = o->now;
	if (o->to_s != NULL && vitals_time_parse(o->to_s, o->now, &o->to) != 0)
		return pprof_bad_time("--to", o->to_s);
	o->from = o->to > PPROF_SPAN ? o->to - PPROF_SPAN : 0;
	if (o->from_s != NULL && vitals_time_parse(o->from_s, o->now, &o->from) != 0)
		return pprof_bad_time("--from", o->from_s);
	if (o->to <= o->from) {
		pprof_msg("empty range: --to (%s) is not after --from (%s)",
		    o->to_s != NULL ? o->to_s : "now",
		    o->from_s != NULL ? o->from_s : "default");
		return PPROF_USAGE;
	}
	return PPROF_OK;
}

/* ---- arguments and the store ---- */

/* Apply option id with value val. */
static int
pprof_apply(struct pprof_opts *o, int id, const char *val)
{
	switch (id) {
	case CLI_POS:
		return pprof_usage_error("unexpected argument '%s'", val);
	case CO_DATA_DIR:
		o->data_dir_opt = val;
		break;
	case CO_CONFIG:
		o->config_opt = val;
		break;
	case CO_VITAL:
		o->vital = val;
		break;
	case CO_FROM:
		o->from_s = val;
		break;
	case CO_TO:
		o->to_s = val;
		break;
	case CO_HOST:
		if (o->nhosts == PPROF_MAX_HOSTS)
			return pprof_usage_error("too many --host");
		o->hosts[o->nhosts++] = val;
		break;
	case CO_EXE:
		o->exe = val;
		break;
	case CO_OUTPUT:
		o->output = val;
		break;
	case CO_FOLDED:
		o->folded = 1;
		break;
	}
	return PPROF_OK;
}

/* Parse argv[i..argc); PPROF_OK, PPROF_USAGE, or -1 after the help. */
static int
pprof_args(struct pprof_opts *o, int argc, char **argv, int i)
{
	struct cli_args a;
	const char *val;
	int id, rc;

	cli_args_init(&a, argc, argv, i, CLI_PPROF);
	while ((id = cli_next(&a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return pprof_usage_error("%s", a.err);
		if (id == CO_HELP) {
			printf("usage: vitals [--data-dir DIR] [-c CONFIG] "
			       "COMMAND\n%s",
			    pprof_usage);
			return -1;
		}
		if ((rc = pprof_apply(o, id, val)) != PPROF_OK)
			return rc;
	}
	if (*o->vital == '\0')
		return pprof_usage_error("--vital: empty name");
	return PPROF_OK;
}

/*
 * The store, as the range commands find it: --data-dir, -c's data_dir,
 * $VITALS_DATA_DIR, the installed configuration's data_dir, the default.
 * *cfg is the configuration loaded (the caller frees it), or NULL.
 */
static int
pprof_data_dir(
    const struct pprof_opts *o, struct config **cfg, const char **dir)
{
	const char *env = getenv("VITALS_DATA_DIR"), *config = o->config_opt;
	struct stat st;
	char err[1024];
	int r;

	*cfg = NULL;
	if (config == NULL && stat(PPROF_CONFIG, &st) == 0)
		config = PPROF_CONFIG;
	if (o->data_dir_opt == NULL && config != NULL &&
	    (o->config_opt != NULL || env == NULL || *env == '\0') &&
	    (r = config_load(config, cfg, err, sizeof(err))) != 0) {
		pprof_msg("%s", err);
		return r == -ENOENT ? PPROF_RUNTIME : PPROF_USAGE;
	}
	if (o->data_dir_opt != NULL)
		*dir = o->data_dir_opt;
	else if (*cfg != NULL && (*cfg)->data_dir != NULL)
		*dir = (*cfg)->data_dir;
	else if (o->config_opt == NULL && env != NULL && *env != '\0')
		*dir = env;
	else
		*dir = PPROF_DATA_DIR;
	return PPROF_OK;
}

/* ---- the profile ---- */

/* Write buf[0..len) to o->output, else stdout. */
static int
pprof_write(const struct pprof_opts *o, const char *buf, size_t len)
{
	FILE *f = stdout;
	int bad;

	if (o->output != NULL && (f = fopen(o->output, "wb")) == NULL) {
		pprof_msg("%s: %s", o->output, strerror(errno));
		return PPROF_RUNTIME;
	}
	bad = fwrite(buf, 1, len, f) != len;
	if (f != stdout)
		bad |= fclose(f) != 0;
	else
		bad |= fflush(f) != 0;
	if (bad) {
		pprof_msg("%s: %s", o->output != NULL ? o->output : "stdout",
		    strerror(errno));
		return PPROF_RUNTIME;
	}
	return PPROF_OK;
}

/* Whether the range gave something to write; says why not. */
static int
pprof_has_samples(const struct pprof_opts *o, const struct vitals_profile *p)
{
	const struct vitals_profile_stats *st = vitals_profile_stats(p);

	if (st->vital_epochs == 0)
		pprof_msg("no vital %s in the %" PRIu64 " epochs of the range",
		    o->vital, st->epochs);
	else if (st->samples == 0)
		pprof_msg("no samples of %s%s%s in the %" PRIu64
			  " epochs of the range",
		    o->vital, o->exe != NULL ? " of exe " : "",
		    o->exe != NULL ? o->exe : "", st->epochs);
	return st->samples > 0;
}

/* One line on stderr about what a file received. */
static void
pprof_summary(const struct pprof_opts *o, const struct vitals_profile *p)
{
	const struct vitals_profile_stats *st = vitals_profile_stats(p);

	fprintf(stderr,
	    "vitals: pprof: %s: %" PRIu64 " samples of %s, %" PRIu64
	    " stacks, total %.0f %s, from %" PRIu64 " epochs\n",
	    o->output, st->samples, o->vital, st->stacks, st->total, st->unit,
	    st->epochs);
}

/* Read the range into p and write it as asked. */
static int
pprof_make(
    const struct pprof_opts *o, const char *dir, struct vitals_profile *p)
{
	char err[1024], *buf = NULL;
	size_t len = 0;
	int r;

	r = vitals_profile_range(
	    p, dir, o->from, o->to, o->hosts, o->nhosts, err, sizeof(err));
	if (r != 0) {
		pprof_msg("%s", err[0] != '\0' ? err : strerror(-r));
		return PPROF_RUNTIME;
	}
	if (vitals_profile_stats(p)->skipped > 0)
		pprof_msg("skipped %" PRIu64 " unreadable epoch files (%s)",
		    vitals_profile_stats(p)->skipped, err);
	if (!pprof_has_samples(o, p))
		return PPROF_RUNTIME;
	r = o->folded ? vitals_profile_folded(p, &buf, &len)
		      : vitals_profile_pprof(p, &buf, &len);
	if (r != 0) {
		pprof_msg("%s", strerror(-r));
		return PPROF_RUNTIME;
	}
	r = pprof_write(o, buf, len);
	if (r == PPROF_OK && o->output != NULL)
		pprof_summary(o, p);
	free(buf);
	return r;
}

int
pprof_run(
    const char *data_dir, const char *config, int argc, char **argv, int i)
{
	struct pprof_opts o = {
		.data_dir_opt = data_dir, .config_opt = config, .vital = "cpu"
	};
	struct vitals_profile *p;
	struct config *cfg = NULL;
	const char *dir;
	int rc;

	o.now = pprof_now();
	if ((rc = pprof_args(&o, argc, argv, i)) != PPROF_OK)
		return rc < 0 ? PPROF_OK : rc;
	if ((rc = pprof_window(&o)) != PPROF_OK)
		return rc;
	if (o.output == NULL && !o.folded && isatty(STDOUT_FILENO))
		return pprof_usage_error("not writing a binary profile to a "
					 "terminal: give -o FILE or redirect "
					 "stdout");
	if ((rc = pprof_data_dir(&o, &cfg, &dir)) != PPROF_OK)
		return rc;
	if ((p = vitals_profile_new(o.vital, o.exe)) == NULL) {
		pprof_msg("%s", strerror(ENOMEM));
		rc = PPROF_RUNTIME;
	} else
		rc = pprof_make(&o, dir, p);
	vitals_profile_free(p);
	config_free(cfg);
	return rc;
}

/* `vitals pprof`, in cli/main.c's table. */
const struct cli_cmd pprof_cmd = {
	.name = "pprof",
	.usage = pprof_usage,
	.flag = CLI_PPROF,
	.run_argv = pprof_run,
};
