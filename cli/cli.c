/* SPDX-License-Identifier: MIT */
/*
 * What the `vitals` commands share (cli/cli.h): messages, the options
 * every command takes, where the store and the configuration are, the
 * store's listing, and formatting.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build top; not core/runtime/config.h */
#endif

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/vitals.h>

#include "cli.h"
#include "config.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define CLI_CONFIG SYSCONFDIR "/vitals/vitals.yaml"

/* ---- messages and options ---- */

/* "vitals: ", the message, a newline, to stderr. */
static void
cli_vmsg(const char *fmt, va_list ap)
{
	fputs("vitals: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
}

int
cli_usage_error(const struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	main_usage(stderr, cli->cmd);
	return CLI_EXIT_USAGE;
}

int
cli_opt(struct cli *cli, int id, const char *val, int *done)
{
	switch (id) {
	case CO_HELP:
		main_usage(stdout, cli->cmd);
		*done = 1;
		return CLI_EXIT_OK;
	case CO_VERSION:
		printf("vitals %s\n", PACKAGE_VERSION);
		*done = 1;
		return CLI_EXIT_OK;
	case CO_DATA_DIR:
		cli->data_dir_opt = val;
		return CLI_EXIT_OK;
	case CO_CONFIG:
		cli->config_opt = val;
		return CLI_EXIT_OK;
	}
	return cli_usage_error(cli, "unexpected option");
}

/* ---- the store and the configuration ---- */

int
cli_data_dir(struct cli *cli)
{
	char err[512];
	const char *env;
	int rc;

	if (cli->data_dir_opt != NULL) {
		cli->data_dir = cli->data_dir_opt;
		return CLI_EXIT_OK;
	}
	if (cli->config_opt != NULL) {
		err[0] = '\0';
		cli->config_path = cli->config_opt;
		rc = config_load(
		    cli->config_path, &cli->config, err, sizeof err);
		if (rc < 0) {
			cli_msg("%s", err[0] != '\0' ? err : strerror(-rc));
			return CLI_EXIT_RUNTIME;
		}
		cli->data_dir = cli->config->data_dir;
		if (cli->data_dir != NULL)
			return CLI_EXIT_OK;
	}
	env = getenv("VITALS_DATA_DIR");
	cli->data_dir = env != NULL && *env != '\0' ? env : CLI_DATA_DIR;
	return CLI_EXIT_OK;
}

/* Read cli->config_path, or take the defaults without one. */
static int
cli_config_read(struct cli *cli)
{
	char err[1024];
	int r;

	if (cli->config_path == NULL) {
		if ((cli->config = config_default()) != NULL)
			return CLI_EXIT_OK;
		cli_msg("out of memory");
		return CLI_EXIT_RUNTIME;
	}
	if ((r = config_load(
		 cli->config_path, &cli->config, err, sizeof(err))) != 0) {
		cli_msg("%s", err);
		return r == -ENOENT ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int
cli_config(struct cli *cli)
{
	const char *env = getenv("VITALS_DATA_DIR");
	struct stat st;
	int rc;

	cli->config_path = cli->config_opt;
	if (cli->config_path == NULL && stat(CLI_CONFIG, &st) == 0)
		cli->config_path = CLI_CONFIG;
	if ((rc = cli_config_read(cli)) != CLI_EXIT_OK)
		return rc;
	if (cli->data_dir_opt != NULL)
		cli->data_dir = cli->data_dir_opt;
	else if (cli->config_opt != NULL || env == NULL || *env == '\0')
		cli->data_dir = cli->config_path != NULL ? cli->config->data_dir
							 : CLI_DATA_DIR;
	else
		cli->data_dir = env;
	return CLI_EXIT_OK;
}

void
cli_no_filters_note(const struct cli *cli)
{
	if (cli->config_path == NULL)
		cli_msg("no configuration file (-c FILE, or %s), so no filter "
			"runs over the range ('vitals findings --stored' shows "
			"what vitalsd found)",
		    CLI_CONFIG);
}

void
cli_selection_free(struct cli_selection *s)
{
	free(s->v);
	vitals_store_list_free(&s->list);
	memset(s, 0, sizeof *s);
}

/* Keep the entries of s->list made by host (all when host is NULL). */
static int
cli_selection_filter(struct cli_selection *s, const char *host)
{
	size_t i;

	s->v = calloc(s->list.n + 1, sizeof *s->v);
	if (s->v == NULL)
		return -ENOMEM;
	for (i = 0; i < s->list.n; i++) {
		if (host == NULL || strcmp(s->list.v[i].host, host) == 0)
			s->v[s->n++] = &s->list.v[i];
	}
	return 0;
}

int
cli_select(struct cli_selection *s, const char *dir, const char *host)
{
	int rc;

	memset(s, 0, sizeof *s);
	rc = vitals_store_list(dir, &s->list);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		cli_msg("data directory %s does not exist", dir);
		return CLI_EXIT_RUNTIME;
	}
	if (rc == 0)
		rc = cli_selection_filter(s, host);
	if (rc < 0) {
		cli_msg("cannot list %s: %s", dir, strerror(-rc));
		cli_selection_free(s);
		return CLI_EXIT_RUNTIME;
	}
	if (s->n == 0) {
		if (host != NULL)
			cli_msg("no epochs of host %s under %s", host, dir);
		else
			cli_msg("no epochs under %s", dir);
		cli_selection_free(s);
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

int
cli_epoch_load(const char *path, const char *what, struct vitals_epoch **out)
{
	char err[512];
	const char *reason = err;
	size_t n = strlen(path);
	int rc;

	err[0] = '\0';
	if ((rc = vitals_epoch_load(path, out, err, sizeof err)) == 0)
		return 0;
	/* The reason may already name the file. */
	if (strncmp(err, path, n) == 0 && err[n] == ':')
		reason = err + n + 1 + (err[n + 1] == ' ');
	if (*reason == '\0')
		reason = strerror(-rc);
	cli_msg("%s%s: %s", what, path, reason);
	return rc;
}

/* Order vitals by name. */
static int
cli_cmp_vital_name(const void *a, const void *b)
{
	const struct vitals_vital_epoch *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* Order vitals by events, most first. */
static int
cli_cmp_vital_events(const void *a, const void *b)
{
	const struct vitals_vital_epoch *const *x = a, *const *y = b;

	if ((*x)->events != (*y)->events)
		return (*x)->events < (*y)->events ? 1 : -1;
	return strcmp((*x)->name, (*y)->name);
}

const struct vitals_vital_epoch **
cli_vitals_sorted(const struct vitals_epoch *e, int by_events)
{
	const struct vitals_vital_epoch **v;
	uint32_t i;

	if ((v = calloc(e->nvitals + 1, sizeof *v)) == NULL)
		return NULL;
	for (i = 0; i < e->nvitals; i++)
		v[i] = &e->vitals[i];
	qsort(v, e->nvitals, sizeof *v,
	    by_events ? cli_cmp_vital_events : cli_cmp_vital_name);
	return v;
}

/* ---- parsing and formatting ---- */

int
cli_parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

void
cli_fmt_time(uint64_t ns, int ms, char *buf, size_t len)
{
	time_t t = (time_t)(ns / CLI_NS);
	struct tm tm;
	size_t n;

	if (localtime_r(&t, &tm) == NULL ||
	    (n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		snprintf(buf, len, "@%" PRIu64, (uint64_t)(ns / CLI_NS));
		return;
	}
	if (ms)
		snprintf(buf + n, len - n, ".%03u",
		    (unsigned)(ns / 1000000u % 1000u));
}

void
cli_fmt_timescale(uint32_t ts, int base, char *buf, size_t len)
{
	if (base)
		snprintf(buf, len, "base");
	else if (ts % 86400 == 0)
		snprintf(buf, len, "%ud", ts / 86400);
	else if (ts % 3600 == 0)
		snprintf(buf, len, "%uh", ts / 3600);
	else if (ts % 60 == 0)
		snprintf(buf, len, "%um", ts / 60);
	else
		snprintf(buf, len, "%us", ts);
}

const char *
cli_severity_name(uint32_t sev)
{
	switch (sev) {
	case VITALS_SEV_INFO:
		return "info";
	case VITALS_SEV_WARN:
		return "warn";
	case VITALS_SEV_CRIT:
		return "crit";
	}
	return "?";
}

const char *
cli_dash(const char *s)
{
	return s != NULL && *s != '\0' ? s : "-";
}

int
cli_print_json(const json_t *j)
{
	int rc;

	rc = json_dumpf(j, stdout, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	fputc('\n', stdout);
	return rc;
}
