/* SPDX-License-Identifier: MIT */
/*
 * `vitals pprof`: the stacks of one vital over a time range, weighted by
 * the HCA weight they stand for (<vitals/profile.h>), written as a gzip'd
 * pprof profile for `go tool pprof`, or as folded stacks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vitals/profile.h>

#include "cli.h"
#include "range.h"

/* The default range: the last hour. */
#define PPROF_SPAN (3600 * CLI_NS)

/* Write buf[0..len) to c->output, else stdout. */
static int
pprof_write(const struct range *c, const char *buf, size_t len)
{
	const char *name = c->output != NULL ? c->output : "stdout";
	FILE *f = stdout;
	int bad;

	if (c->output != NULL && (f = fopen(c->output, "wb")) == NULL) {
		cli_msg("%s: %s", c->output, strerror(errno));
		return CLI_EXIT_RUNTIME;
	}
	bad = fwrite(buf, 1, len, f) != len;
	bad |= f != stdout ? fclose(f) != 0 : fflush(f) != 0;
	if (bad) {
		cli_msg("%s: %s", name, strerror(errno));
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

/* Whether the range gave something to write; says why not. */
static int
pprof_has_samples(const struct range *c, const struct vitals_profile *p)
{
	const struct vitals_profile_stats *st = vitals_profile_stats(p);

	if (st->vital_epochs == 0)
		cli_msg("no vital %s in the %" PRIu64 " epochs of the range",
		    c->vital, st->epochs);
	else if (st->samples == 0)
		cli_msg("no samples of %s%s%s in the %" PRIu64
			" epochs of the range",
		    c->vital, c->exe != NULL ? " of exe " : "",
		    c->exe != NULL ? c->exe : "", st->epochs);
	return st->samples > 0;
}

/* Read the range into p and write it as asked. */
static int
pprof_make(const struct range *c, struct vitals_profile *p)
{
	const struct vitals_profile_stats *st = vitals_profile_stats(p);
	char err[1024] = "", *buf = NULL;
	size_t len = 0;
	int r;

	r = vitals_profile_range(p, c->cli->data_dir, c->from, c->to, c->hosts,
	    c->nhosts, err, sizeof(err));
	if (r != 0) {
		cli_msg("%s", err[0] != '\0' ? err : strerror(-r));
		return CLI_EXIT_RUNTIME;
	}
	if (st->skipped > 0)
		cli_msg("skipped %" PRIu64 " unreadable epoch files (%s)",
		    st->skipped, err);
	if (!pprof_has_samples(c, p))
		return CLI_EXIT_RUNTIME;
	r = c->folded ? vitals_profile_folded(p, &buf, &len)
		      : vitals_profile_pprof(p, &buf, &len);
	if (r != 0) {
		cli_msg("%s", strerror(-r));
		return CLI_EXIT_RUNTIME;
	}
	r = pprof_write(c, buf, len);
	if (r == CLI_EXIT_OK && c->output != NULL)
		cli_msg("%s: %" PRIu64 " samples of %s, %" PRIu64
			" stacks, total %.0f %s, from %" PRIu64 " epochs",
		    c->output, st->samples, c->vital, st->stacks, st->total,
		    st->unit, st->epochs);
	free(buf);
	return r;
}

/* The range, then the profile of vital --vital (default cpu). */
static int
pprof_report(struct range *c)
{
	struct vitals_profile *p;
	int rc;

	if (c->vital == NULL)
		c->vital = "cpu";
	if (*c->vital == '\0')
		return cli_usage_error(c->cli, "pprof: --vital: empty name");
	if ((rc = range_window(c, PPROF_SPAN)) != CLI_EXIT_OK)
		return rc;
	if (c->output == NULL && !c->folded && isatty(STDOUT_FILENO))
		return cli_usage_error(c->cli,
		    "pprof: not writing a binary profile to a terminal: "
		    "give -o FILE or redirect stdout");
	if ((p = vitals_profile_new(c->vital, c->exe)) == NULL) {
		cli_msg("%s", strerror(ENOMEM));
		return CLI_EXIT_RUNTIME;
	}
	rc = pprof_make(c, p);
	vitals_profile_free(p);
	return rc;
}

/* `vitals pprof`. */
static int
pprof_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, pprof_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd pprof_cmd = {
	.name = "pprof",
	.usage =
	    "  pprof [--vital V] [--from T] [--to T] [--host H]... [--exe E]\n"
	    "        [-o FILE] [--folded]\n"
	    "      the stacks of vital V (default cpu) over the range (default\n"
	    "      the last hour), each weighted by the HCA weight it stands\n"
	    "      for, as a gzip'd pprof profile (go tool pprof) or, with\n"
	    "      --folded, folded stacks (flamegraph.pl, speedscope); --exe:\n"
	    "      only the samples of that exe (a path, or a name); written to\n"
	    "      FILE, else to stdout unless it is a terminal\n",
	.flag = CLI_PPROF,
	.run = pprof_run,
};
