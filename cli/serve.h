/* SPDX-License-Identifier: MIT */
/*
 * `vitals serve`: the http plugin's API, page and /metrics over any
 * store, without a daemon.
 */
#ifndef VITALS_CLI_SERVE_H
#define VITALS_CLI_SERVE_H

/*
 * Run `vitals serve` with the arguments argv[i..argc) after the command
 * name; data_dir and config are the global --data-dir and -c, or NULL.
 * Serves until SIGINT or SIGTERM.  Returns the exit status: 0, 1 (no
 * store, cannot listen) or 2 (usage, bad configuration).
 */
int serve_run(const char *data_dir, const char *config, int argc, char **argv,
    int i);

/* The usage lines of the command, for `vitals --help`. */
extern const char serve_usage[];

#endif /* VITALS_CLI_SERVE_H */
