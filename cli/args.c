/* SPDX-License-Identifier: MIT */
/* The options of the `vitals` commands and their walk (cli/args.h). */
#include <stdio.h>
#include <string.h>

#include "args.h"

/* An option: its spellings, whether it takes a value, where it applies. */
struct cli_opt {
	const char *name; /* "--data-dir" */
	const char *alias; /* "-d", or NULL */
	int arg; /* takes a value */
	int id; /* CO_* */
	unsigned cmds; /* CLI_* bits */
};

#define CLI_RANGE (CLI_QUERY | CLI_FINDINGS | CLI_TOP)

static const struct cli_opt cli_opts[] = {
	{ "--help", "-h", 0, CO_HELP, CLI_ALL },
	{ "--version", "-V", 0, CO_VERSION, CLI_GLOBAL },
	{ "--data-dir", "-d", 1, CO_DATA_DIR, CLI_ALL },
	{ "--config", "-c", 1, CO_CONFIG, CLI_ALL },
	{ "--json", NULL, 0, CO_JSON,
	    CLI_ALL & ~(CLI_GLOBAL | CLI_TRAIN | CLI_SERVE | CLI_PPROF) },
	{ "--host", NULL, 1, CO_HOST, CLI_ALL & ~(CLI_GLOBAL | CLI_SERVE) },
	{ "--vital", NULL, 1, CO_VITAL,
	    CLI_SHOW | CLI_RANGE | CLI_DIFF | CLI_PPROF },
	{ "--limit", "-n", 1, CO_LIMIT, CLI_EPOCHS },
	{ "--last", NULL, 0, CO_LAST, CLI_SHOW },
	{ "--top", NULL, 1, CO_SLOTS, CLI_SHOW },
	{ "--samples", NULL, 1, CO_SAMPLES, CLI_SHOW },
	{ "--from", NULL, 1, CO_FROM, CLI_RANGE | CLI_PPROF },
	{ "--to", NULL, 1, CO_TO, CLI_RANGE | CLI_PPROF },
	{ "--timescale", "-t", 1, CO_TIMESCALE, CLI_QUERY | CLI_FINDINGS },
	{ "--filter", NULL, 1, CO_FILTER, CLI_QUERY | CLI_FINDINGS },
	{ "--no-cache", NULL, 0, CO_NO_CACHE, CLI_QUERY | CLI_FINDINGS },
	{ "--cache-dir", NULL, 1, CO_CACHE_DIR, CLI_QUERY | CLI_FINDINGS },
	{ "--severity", NULL, 1, CO_SEVERITY, CLI_FINDINGS },
	{ "--stored", NULL, 0, CO_STORED, CLI_FINDINGS },
	{ "--top", "-k", 1, CO_K, CLI_TOP },
	{ "--no-filter", NULL, 0, CO_NO_FILTER, CLI_TOP },
	{ "--normal", NULL, 1, CO_NORMAL, CLI_TRAIN },
	{ "--model", NULL, 1, CO_MODEL, CLI_TRAIN },
	{ "--listen", NULL, 1, CO_LISTEN, CLI_SERVE },
	{ "--token", NULL, 1, CO_TOKEN, CLI_SERVE },
	{ "--insecure", NULL, 0, CO_INSECURE, CLI_SERVE },
	{ "--web-dir", NULL, 1, CO_WEB_DIR, CLI_SERVE },
	{ "--exe", NULL, 1, CO_EXE, CLI_PPROF },
	{ "--output", "-o", 1, CO_OUTPUT, CLI_PPROF },
	{ "--folded", NULL, 0, CO_FOLDED, CLI_PPROF },
	{ NULL, NULL, 0, 0, 0 },
};

void
cli_args_init(struct cli_args *a, int argc, char **argv, int i, unsigned cmd)
{
	a->argc = argc;
	a->argv = argv;
	a->i = i;
	a->rest = 0;
	a->cmd = cmd;
	a->err[0] = '\0';
}

/* Whether spelling p is the first n characters of s, exactly. */
static int
cli_spelt(const char *p, const char *s, size_t n)
{
	return p != NULL && strlen(p) == n && strncmp(p, s, n) == 0;
}

/* Option s (up to any '=') of command cmd, or NULL. */
static const struct cli_opt *
cli_find(const char *s, unsigned cmd, const char **inline_val)
{
	const struct cli_opt *o;
	size_t n = strcspn(s, "=");

	*inline_val = s[n] == '=' ? s + n + 1 : NULL;
	for (o = cli_opts; o->name != NULL; o++)
		if ((o->cmds & cmd) != 0 &&
		    (cli_spelt(o->name, s, n) || cli_spelt(o->alias, s, n)))
			return o;
	return NULL;
}

/* A short option taking a value that s starts with, as in "-cFILE". */
static const struct cli_opt *
cli_find_short(const char *s, unsigned cmd)
{
	const struct cli_opt *o;

	if (s[1] == '-' || s[1] == '\0' || s[2] == '\0')
		return NULL;
	for (o = cli_opts; o->name != NULL; o++)
		if ((o->cmds & cmd) != 0 && o->arg && o->alias != NULL &&
		    o->alias[1] == s[1])
			return o;
	return NULL;
}

int
cli_next(struct cli_args *a, const char **val)
{
	const struct cli_opt *o;
	const char *s, *iv;

	for (;;) {
		if (a->i >= a->argc)
			return CLI_END;
		s = a->argv[a->i++];
		*val = s;
		if (a->rest || s[0] != '-' || s[1] == '\0' ||
		    (s[1] >= '0' && s[1] <= '9'))
			return CLI_POS;
		if (strcmp(s, "--") != 0)
			break;
		a->rest = 1;
	}
	if ((o = cli_find(s, a->cmd, &iv)) == NULL) {
		if ((o = cli_find_short(s, a->cmd)) == NULL) {
			snprintf(
			    a->err, sizeof(a->err), "unknown option %s", s);
			return CLI_ERR;
		}
		*val = s + 2;
		return o->id;
	}
	if (!o->arg && iv != NULL) {
		snprintf(a->err, sizeof(a->err), "option %s takes no value",
		    o->name);
		return CLI_ERR;
	}
	if (o->arg && iv == NULL && a->i >= a->argc) {
		snprintf(
		    a->err, sizeof(a->err), "option %s needs a value", o->name);
		return CLI_ERR;
	}
	*val = !o->arg ? NULL : iv != NULL ? iv : a->argv[a->i++];
	return o->id;
}

const char *
cli_opt_name(int id)
{
	const struct cli_opt *o;

	for (o = cli_opts; o->name != NULL; o++)
		if (o->id == id)
			return o->name;
	return "?";
}
