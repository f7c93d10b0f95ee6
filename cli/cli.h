/* SPDX-License-Identifier: MIT */
/*
 * What the `vitals` commands share: the entry each has in cli/main.c's
 * table, the store and configuration they resolve (struct cli), exit
 * codes and messages, and the formatting of times and counts.
 */
#ifndef VITALS_CLI_CLI_H
#define VITALS_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <vitals/store.h>

#include "args.h"

/* Exit codes. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1 /* no data, unreadable store or file */
#define CLI_EXIT_USAGE 2 /* bad arguments, time or configuration */

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
/* The store when neither options, configuration nor environment name one. */
#define CLI_DATA_DIR LOCALSTATEDIR "/lib/vitals"

/* Nanoseconds in a second. */
#define CLI_NS 1000000000ull

/* The commands over time ranges: listed apart in the usage. */
#define CLI_RANGE_CMDS \
	(CLI_QUERY | CLI_FINDINGS | CLI_TOP | CLI_DIFF | CLI_TRAIN)

struct cli;
struct config;

/*
 * A command: one file, cli/NAME.c, exporting only this entry (NAME_cmd,
 * declared below), and one line of the table in cli/main.c.
 */
struct cli_cmd {
	/* Its name, as typed: "show". */
	const char *name;
	/* Its lines of the usage, each ending in '\n'; NULL: not listed. */
	const char *usage;
	/*
	 * Its CLI_* bit (cli/args.h), or 0: the options run walks, and whether
	 * the usage lists it with the range commands (CLI_RANGE_CMDS).
	 */
	unsigned flag;
	/*
	 * Run it: a is at the first argument after the name, walking flag's
	 * options; cli holds the global options.  Returns the exit code.
	 */
	int (*run)(struct cli *cli, struct cli_args *a);
};

/* The commands, one file each, listed by cli/main.c. */
extern const struct cli_cmd epochs_cmd;
extern const struct cli_cmd hosts_cmd;
extern const struct cli_cmd show_cmd;
extern const struct cli_cmd query_cmd;
extern const struct cli_cmd findings_cmd;
extern const struct cli_cmd top_cmd;
extern const struct cli_cmd diff_cmd;
extern const struct cli_cmd train_cmd;
extern const struct cli_cmd serve_cmd;
extern const struct cli_cmd pprof_cmd;

/* The command being run, its options and the store they lead to. */
struct cli {
	const struct cli_cmd *cmd; /* NULL until the command is known */
	const char *data_dir_opt; /* --data-dir, or NULL */
	const char *config_opt; /* -c, or NULL */
	const char *config_path; /* the configuration read, or NULL */
	struct config *config; /* read from config_path, or defaults */
	const char *data_dir; /* the store, once resolved */
};

/* The store's listing, restricted to one host if asked. */
struct cli_selection {
	struct vitals_store_list list;
	/* n entries of list, oldest first */
	const struct vitals_store_entry **v;
	size_t n;
};

/*
 * The usage of cmd's section to f: a range command's, the range commands
 * alone; else (and for NULL) every command.  Built from the table, in
 * cli/main.c.
 */
void main_usage(FILE *f, const struct cli_cmd *cmd);

/* Print "vitals: " and a message to stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Complain about the arguments: the message, then the usage of cli->cmd,
 * to stderr.  Returns CLI_EXIT_USAGE for the caller to pass on.
 */
int cli_usage_error(const struct cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Handle an option every command takes (-h, -V, -d, -c), the value val
 * borrowed until the command ends.  After -h and -V, which print, *done
 * is set.  Returns CLI_EXIT_OK, or CLI_EXIT_USAGE for any other option.
 */
int cli_opt(struct cli *cli, int id, const char *val, int *done);

/*
 * Resolve the store of a command that reads only the store: --data-dir,
 * the data_dir of -c, $VITALS_DATA_DIR, then the built-in default.
 * Returns CLI_EXIT_OK, or CLI_EXIT_RUNTIME when -c cannot be read.
 */
int cli_data_dir(struct cli *cli);

/*
 * Resolve the configuration and the store of a command that runs
 * filters.  The configuration is -c, else the installed one if present,
 * else defaults; the store --data-dir, -c's data_dir, $VITALS_DATA_DIR,
 * the installed configuration's data_dir, then the built-in default.
 * Returns CLI_EXIT_OK, CLI_EXIT_RUNTIME (a file missing, no memory) or
 * CLI_EXIT_USAGE (a bad configuration), after saying why.
 */
int cli_config(struct cli *cli);

/*
 * Say on standard error that no configuration file was read, so no
 * filter runs (the findings and query commands), and where one is.
 */
void cli_no_filters_note(const struct cli *cli);

/*
 * List the store dir, keeping host's epochs (all for NULL).  Returns
 * CLI_EXIT_OK with at least one entry in *s (free with cli_selection_free),
 * or CLI_EXIT_RUNTIME after saying why.
 */
int cli_select(struct cli_selection *s, const char *dir, const char *host);

/* Free a selection; accepts a zeroed one. */
void cli_selection_free(struct cli_selection *s);

/*
 * Load the epoch file at path into *out (free with vitals_epoch_free).
 * Returns 0, or a negative errno after saying why, prefixed with what.
 */
int cli_epoch_load(
    const char *path, const char *what, struct vitals_epoch **out);

/*
 * The epoch's vitals as a new array of pointers (the caller frees it, not
 * the vitals), by name or by events (most first); NULL without memory.
 */
const struct vitals_vital_epoch **cli_vitals_sorted(
    const struct vitals_epoch *e, int by_events);

/* Parse a count (0 and up); 0 with *out, or -EINVAL. */
int cli_parse_count(const char *s, size_t *out);

/* Local time of ns as 2026-11-22T00:15:00 into buf, with ".123" if ms. */
void cli_fmt_time(uint64_t ns, int ms, char *buf, size_t len);

/* A timescale of ts seconds as "5m", "1h", "1d" or "90s"; "base" if base. */
void cli_fmt_timescale(uint32_t ts, int base, char *buf, size_t len);

/* The name of a finding severity: "info", "warn", "crit" or "?". */
const char *cli_severity_name(uint32_t sev);

/* s, or "-" when it is NULL or empty. */
const char *cli_dash(const char *s);

/* Print j to stdout, indented, and a newline.  Returns 0 or -EIO. */
int cli_print_json(const json_t *j);

#endif /* VITALS_CLI_CLI_H */
