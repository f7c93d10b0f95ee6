/* SPDX-License-Identifier: MIT */
/*
 * `vitals pprof`: one vital's stacks over a time range, weighted by the
 * HCA weight they stand for, as a gzip'd pprof profile or folded stacks
 * (<vitals/profile.h>).  cli/main.c hands it the command line.
 */
#ifndef VITALS_CLI_PPROF_H
#define VITALS_CLI_PPROF_H

/*
 * Run `vitals pprof` with its arguments argv[i..argc) (after the command
 * name).  data_dir and config are the global --data-dir and -c values,
 * or NULL.  Returns the exit status: 0, 1 (no store, no epochs or no
 * samples in the range, an unwritable output) or 2 (usage, bad time,
 * a terminal as the output of a binary profile, bad configuration).
 */
int pprof_run(const char *data_dir, const char *config, int argc,
    char **argv, int i);

/* The usage lines of the command, for `vitals --help`. */
extern const char pprof_usage[];

#endif /* VITALS_CLI_PPROF_H */
