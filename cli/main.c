/* SPDX-License-Identifier: MIT */
/*
 * vitals: the command-line tool.  The global options, the table of
 * commands (one file each, cli/NAME.c), the usage built from it, and the
 * dispatch of a command by its name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "range.h"

static int main_help(struct cli *, struct cli_args *);

/* `vitals help`: the usage; not listed in it. */
static const struct cli_cmd main_help_cmd = {
	.name = "help",
	.run = main_help,
};

/* The commands, in the order the usage lists them. */
static const struct cli_cmd *const main_cmds[] = {
	&epochs_cmd,
	&show_cmd,
	&query_cmd,
	&findings_cmd,
	&top_cmd,
	&diff_cmd,
	&train_cmd,
	&serve_cmd,
	&pprof_cmd,
	&main_help_cmd,
	NULL,
};

/* The global options, listed between the two groups of commands. */
static const char main_options_usage[] =
    "\n"
    "options:\n"
    "  -d, --data-dir DIR  the store (default: data_dir of CONFIG, else\n"
    "                      $VITALS_DATA_DIR, else " CLI_DATA_DIR ")\n"
    "  -c, --config FILE   vitalsd configuration: data_dir, and the filters\n"
    "                      and timescales of range commands\n"
    "  -h, --help          show this help\n"
    "  -V, --version       show the version\n";

/* The usage lines of the listed commands that are range commands or not. */
static void
main_usage_list(FILE *f, int range)
{
	const struct cli_cmd *const *c;

	for (c = main_cmds; *c != NULL; c++)
		if ((*c)->usage != NULL &&
		    ((*c)->flag & CLI_RANGE_CMDS ? 1 : 0) == range)
			fputs((*c)->usage, f);
}

void
main_usage(FILE *f, const struct cli_cmd *cmd)
{
	if (cmd != NULL && (cmd->flag & CLI_RANGE_CMDS) != 0) {
		fputs(
		    "usage: vitals [--data-dir DIR] [-c CONFIG] COMMAND\n", f);
		main_usage_list(f, 1);
		fputs(range_usage_times, f);
		return;
	}
	fputs("usage: vitals [--data-dir DIR] [-c CONFIG] COMMAND [ARGS]\n"
	      "\n"
	      "commands:\n",
	    f);
	main_usage_list(f, 0);
	fputs(main_options_usage, f);
	fputs("\nrange commands:\n", f);
	main_usage_list(f, 1);
	fputs(range_usage_times, f);
}

/* `vitals help`: every command's usage, whatever the arguments. */
static int
main_help(struct cli *cli, struct cli_args *a)
{
	(void)cli;
	(void)a;
	main_usage(stdout, NULL);
	return CLI_EXIT_OK;
}

/* Parse the global options up to the command; *name is NULL if none. */
static int
main_args(struct cli *cli, struct cli_args *a, const char **name, int *done)
{
	const char *val;
	int id, rc = CLI_EXIT_OK;

	*name = NULL;
	while (rc == CLI_EXIT_OK && !*done &&
	    (id = cli_next(a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return cli_usage_error(cli, "%s", a->err);
		if (id == CLI_POS) {
			*name = val;
			break;
		}
		rc = cli_opt(cli, id, val, done);
	}
	return rc;
}

/* Run the command called name on the arguments a has left. */
static int
main_dispatch(struct cli *cli, const char *name, struct cli_args *a)
{
	const struct cli_cmd *const *c;

	for (c = main_cmds; *c != NULL && strcmp((*c)->name, name) != 0; c++)
		;
	if (*c == NULL)
		return cli_usage_error(cli, "unknown command '%s'", name);
	cli->cmd = *c;
	if (cli->cmd->run_argv != NULL)
		return cli->cmd->run_argv(
		    cli->data_dir_opt, cli->config_opt, a->argc, a->argv, a->i);
	a->cmd = cli->cmd->flag;
	return cli->cmd->run(cli, a);
}

/* The vitals command-line tool; exits 0, 1 (runtime error) or 2 (usage). */
int
main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct cli_args a;
	const char *name;
	int done = 0, rc;

	cli_args_init(&a, argc, argv, 1, CLI_GLOBAL);
	rc = main_args(&cli, &a, &name, &done);
	if (rc == CLI_EXIT_OK && !done) {
		if (name == NULL)
			rc = cli_usage_error(&cli, "no command given");
		else
			rc = main_dispatch(&cli, name, &a);
	}
	config_free(cli.config);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_msg("writing output: %s", strerror(errno));
		rc = CLI_EXIT_RUNTIME;
	}
	return rc;
}
