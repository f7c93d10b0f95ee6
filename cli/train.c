/* SPDX-License-Identifier: MIT */
/*
 * `vitals train`: a filter's model trained on a normal range, the stored
 * epochs fed to the filter in its train mode one by one, each with the
 * epochs before it as its queue.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "cli.h"
#include "config.h"
#include "handrun.h"
#include "range.h"

/* The filter in training and the queue it is fed. */
struct train_feed {
	struct handrun *h;
	struct vitals_epoch **q; /* the last n epochs read, oldest first */
	uint32_t n, cap;
	size_t fed; /* epochs fed */
};

/* Feed the epoch of entry, the oldest of a full queue making way. */
static void
train_feed_one(
    struct range *c, const struct vitals_store_entry *entry, void *arg)
{
	struct train_feed *t = arg;
	struct vitals_epoch *e;

	(void)c;
	if (t->n == t->cap) {
		vitals_epoch_free(t->q[0]);
		memmove(t->q, t->q + 1, (t->cap - 1) * sizeof(*t->q));
		t->n--;
	}
	if (range_load(entry, &t->q[t->n]) != 0)
		return;
	e = t->q[t->n++];
	t->fed++;
	handrun_feed(t->h,
	    &(struct vitals_queue){ .timescale_s = e->timescale_s,
		.n = t->n,
		.epochs = (const struct vitals_epoch *const *)t->q },
	    e->host);
}

/* Feed the stored epochs of [from, to) to h in order; *fed counts them. */
static int
train_feed(
    struct range *c, struct handrun *h, uint64_t from, uint64_t to, size_t *fed)
{
	struct train_feed t = { .h = h, .cap = c->cli->config->queue_len };
	struct vitals_store_list l;

	if (range_list(c, &l) != CLI_EXIT_OK)
		return CLI_EXIT_RUNTIME;
	if ((t.q = calloc(t.cap, sizeof(*t.q))) != NULL)
		range_each(c, &l, from, to, 1, train_feed_one, &t);
	while (t.q != NULL && t.n > 0)
		vitals_epoch_free(t.q[--t.n]);
	free(t.q);
	vitals_store_list_free(&l);
	*fed = t.fed;
	return CLI_EXIT_OK;
}

/* Say what was trained on how many epochs, and the model's size. */
static int
train_said(const struct range *c, size_t fed)
{
	struct stat sb;

	if (fed == 0) {
		cli_msg("no readable epochs in %s under %s", c->normal,
		    c->cli->data_dir);
		return CLI_EXIT_RUNTIME;
	}
	printf("trained %s on %zu epochs of %s: model %s", c->pos[0], fed,
	    c->normal, c->model);
	if (stat(c->model, &sb) == 0)
		printf(" (%lld bytes)\n", (long long)sb.st_size);
	else
		printf(" (not written)\n");
	return CLI_EXIT_OK;
}

/* Train filter NAME on --normal, writing --model. */
static int
train_report(struct range *c)
{
	struct range_sink sink = { NULL, NULL };
	struct config_entry extra[2];
	struct handrun *h = NULL;
	uint64_t from, to;
	size_t fed = 0;
	int rc;

	if (c->npos != 1 || c->normal == NULL || c->model == NULL)
		return cli_usage_error(c->cli,
		    "train: expected NAME --normal RANGE "
		    "--model PATH");
	if ((rc = range_parse(c->normal, c->now, &from, &to)) != CLI_EXIT_OK)
		return rc;
	/* Made once the arguments are good: a usage error returns above. */
	sink.findings = json_array();
	sink.points = json_array();
	memset(extra, 0, sizeof(extra));
	extra[0].key = "mode";
	extra[0].scalar = "train";
	extra[1].key = "model";
	extra[1].scalar = (char *)c->model;
	rc = range_filter_start(c, c->pos[0], extra, 2, &sink, &h);
	if (rc == CLI_EXIT_OK)
		rc = train_feed(c, h, from, to, &fed);
	/* fini writes the model; a failed write was reported there. */
	if (handrun_stop(h) != 0 && rc == CLI_EXIT_OK)
		rc = CLI_EXIT_RUNTIME;
	json_decref(sink.findings);
	json_decref(sink.points);
	return rc == CLI_EXIT_OK ? train_said(c, fed) : rc;
}

/* `vitals train`. */
static int
train_run(struct cli *cli, struct cli_args *a)
{
	return range_run(cli, a, train_report);
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd train_cmd = {
	.name = "train",
	.usage = "  train NAME --normal RANGE --model PATH\n"
		 "      train filter NAME (e.g. callmodel) on RANGE, writing "
		 "PATH\n",
	.flag = CLI_TRAIN,
	.run = train_run,
};
