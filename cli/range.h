/* SPDX-License-Identifier: MIT */
/*
 * The `vitals` commands over time ranges: query, findings, top, diff and
 * train.  cli/main.c parses the global options and hands the rest of
 * the command line over.
 */
#ifndef VITALS_CLI_RANGE_H
#define VITALS_CLI_RANGE_H

/* Whether cmd is one of the commands below. */
int range_is_command(const char *cmd);

/*
 * Run command cmd with its arguments argv[0..argc) (after the command
 * name).  data_dir and config are the global --data-dir and -c values, or
 * NULL.  Returns the exit status: 0, 1 (no data, runtime error) or 2
 * (usage, bad time or range, bad configuration).
 */
int range_run(const char *cmd, const char *data_dir, const char *config,
    int argc, char **argv);

/* The usage lines of these commands, for `vitals --help`. */
extern const char range_usage[];

#endif /* VITALS_CLI_RANGE_H */
