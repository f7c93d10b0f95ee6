/* SPDX-License-Identifier: MIT */
/*
 * The options of every `vitals` command in one table, each entry naming
 * the commands it applies to, and the walk over a command's arguments:
 * cli/main.c (the global options), the commands and cli/range.c (the
 * range commands' options) parse through it, so the options they share
 * (-h, -d, -c, --json, --host, ...) are spelt and checked once.
 */
#ifndef VITALS_CLI_ARGS_H
#define VITALS_CLI_ARGS_H

#include <stddef.h>

/* Commands, as the bits of an option's cmds. */
enum {
	CLI_GLOBAL = 1u << 0, /* before the command name */
	CLI_EPOCHS = 1u << 1,
	CLI_SHOW = 1u << 2,
	CLI_QUERY = 1u << 3,
	CLI_FINDINGS = 1u << 4,
	CLI_TOP = 1u << 5,
	CLI_DIFF = 1u << 6,
	CLI_TRAIN = 1u << 7,
	CLI_SERVE = 1u << 8,
	CLI_PPROF = 1u << 9,
	CLI_HOSTS = 1u << 10,
};
#define CLI_ALL 0x7ffu

/* Option ids, as cli_next() returns them. */
enum cli_opt_id {
	CO_HELP,
	CO_VERSION,
	CO_DATA_DIR,
	CO_CONFIG,
	CO_JSON,
	CO_HOST,
	CO_VITAL,
	CO_LIMIT, /* epochs -n */
	CO_LAST, /* show */
	CO_SLOTS, /* show --top: HCA slots listed */
	CO_SAMPLES, /* show */
	CO_FROM,
	CO_TO,
	CO_TIMESCALE,
	CO_FILTER,
	CO_NO_CACHE,
	CO_CACHE_DIR,
	CO_SEVERITY,
	CO_STORED,
	CO_K, /* top --top/-k: labels listed */
	CO_NO_FILTER,
	CO_NORMAL,
	CO_MODEL,
	CO_LISTEN, /* serve */
	CO_TOKEN, /* serve */
	CO_INSECURE, /* serve */
	CO_WEB_DIR, /* serve */
	CO_EXE, /* pprof */
	CO_OUTPUT, /* pprof -o */
	CO_FOLDED, /* pprof */
};

/* What cli_next() returns besides an option id. */
#define CLI_POS (-1) /* a positional argument, in *val */
#define CLI_END (-2) /* no arguments left */
#define CLI_ERR (-3) /* a bad option or value: why is in err */

/* A walk over the arguments of one command. */
struct cli_args {
	int argc;
	char **argv;
	int i; /* next argument */
	int rest; /* "--" seen: everything left is positional */
	unsigned cmd; /* CLI_* whose options are accepted */
	char err[256];
};

/* Walk argv[i..argc) as command cmd (one CLI_* bit). */
void cli_args_init(
    struct cli_args *a, int argc, char **argv, int i, unsigned cmd);

/*
 * The next argument: an option's id (CO_*) with its value in *val (NULL
 * for an option without one); CLI_POS with a positional argument in *val
 * (a word not starting with '-', "-" alone, a negative number or relative
 * time such as "-1" or "-2h", or anything after "--"); CLI_END; or CLI_ERR
 * with the reason in a->err: an option unknown (or not of this command),
 * one missing its value, or one given a value it does not take.  Values
 * come as "--opt V", "--opt=V" or, for short options, "-oV".
 */
int cli_next(struct cli_args *a, const char **val);

/* The long spelling of option id (for messages), or "?". */
const char *cli_opt_name(int id);

#endif /* VITALS_CLI_ARGS_H */
