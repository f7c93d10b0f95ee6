/* SPDX-License-Identifier: MIT */
/*
 * `vitals diff`: what changed from one range to another, each rolled into
 * one epoch, as the diff filter sees the two in a row.
 */
#include <stddef.h>

#include <vitals/store.h>

#include "cli.h"
#include "range.h"

/* Range A, then range B, through the diff filter. */
static int
diff_report(struct range *c)
{
	uint64_t af, at, bf, bt;
	struct vitals_epoch *a = NULL, *b = NULL;
	const struct vitals_epoch *v[2];
	struct config_entry once[2];
	size_t n = 0;
	int rc;

	if (c->npos != 2)
		return cli_usage_error(c->cli,
		    "diff: expected two ranges, RANGE_A "
		    "RANGE_B (FROM..TO each)");
	if ((rc = range_parse(c->pos[0], c->now, &af, &at)) != CLI_EXIT_OK ||
	    (rc = range_parse(c->pos[1], c->now, &bf, &bt)) != CLI_EXIT_OK)
		return rc;
	if ((rc = range_rollup(c, af, at, &a)) == CLI_EXIT_OK &&
	    (rc = range_rollup(c, bf, bt, &b)) == CLI_EXIT_OK) {
		v[0] = a;
		v[1] = b;
		/* Two ranges compared once, on request: a change is said
		 * at once, not after it persists, and however small (the
		 * options, where the installed filter has them). */
		if (range_installed(c, "diff", "persist") == 2)
			once[n++] = (struct config_entry){ .key = "persist",
				.scalar = "1" };
		if (range_installed(c, "diff", "min_info") == 2)
			once[n++] = (struct config_entry){ .key = "min_info",
				.scalar = "0" };
		rc = range_filter_once(
		    c, "diff", once, n, v, 2, "DIFF (diff filter, A then B)");
	}
	vitals_epoch_free(a);
	vitals_epoch_free(b);
	return rc;
}

/* `vitals diff`. */
static int
diff_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, diff_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd diff_cmd = {
	.name = "diff",
	.usage = "  diff RANGE_A RANGE_B [--json]\n"
		 "      what changed from A to B, through the diff filter\n",
	.flag = CLI_DIFF,
	.run = diff_run,
};
