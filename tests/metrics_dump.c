/* SPDX-License-Identifier: MIT */
/*
 * Render stored epochs as the http output's /metrics would after they
 * closed: `metrics_dump [-k TOPK] FILE...` accounts each epoch file in the
 * order given and prints the Prometheus text, for tests/metrics_lint.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>
#include <vitals/vitals.h>

#include "metrics.h"

/* Account the epoch file at path.  Returns 0 or -1 after a message. */
static int
dump_file(struct metrics *m, const char *path)
{
	struct vitals_epoch *e = NULL;
	char err[512] = "";
	int r;

	if ((r = vitals_epoch_load(path, &e, err, sizeof(err))) != 0) {
		fprintf(
		    stderr, "metrics_dump: %s\n", err[0] ? err : strerror(-r));
		return -1;
	}
	r = metrics_epoch(m, e);
	vitals_epoch_free(e);
	if (r != 0) {
		fprintf(stderr, "metrics_dump: %s: %s\n", path, strerror(-r));
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long topk = METRICS_TOPK_DEFAULT;
	struct metrics *m;
	char *text = NULL;
	size_t len = 0;
	int i = 1, rc = 1;

	if (argc > 2 && strcmp(argv[1], "-k") == 0) {
		topk = strtoul(argv[2], NULL, 10);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: metrics_dump [-k TOPK] FILE...\n");
		return 2;
	}
	if ((m = metrics_new((uint32_t)topk)) == NULL)
		return 1;
	for (; i < argc; i++)
		if (dump_file(m, argv[i]) != 0)
			goto out;
	if (metrics_render(m, &text, &len) != 0 ||
	    fwrite(text, 1, len, stdout) != len)
		goto out;
	rc = 0;
out:
	free(text);
	metrics_free(m);
	return rc;
}
