/* SPDX-License-Identifier: MIT */
/*
 * `vitals epochs`: the epochs in a store, oldest first, one line each
 * (start, host, length, the busiest vitals, findings) or as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <vitals/store.h>

#include "cli.h"

/* Vitals summarised on one line. */
#define EPOCHS_TOP_VITALS 4

/* Options of `vitals epochs`. */
struct epochs_opts {
	int json;
	const char *host;
	size_t limit; /* most recent files to read; 0 = all */
};

/* v with a k/M/G/T/P suffix once it has more than five digits. */
static void
epochs_fmt_count(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "kMGTPE";
	double d = (double)v;
	int i = -1;

	if (v < 100000) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1000.0 && i < 5) {
		d /= 1000.0;
		i++;
	}
	snprintf(buf, len, "%.3g%c", d, suffix[i]);
}

/*
 * The unit a weighted sum is shown with on the line: ns, or B for bytes;
 * none for counts of events (calls, samples, pages, signals).
 */
static const char *
epochs_unit(const char *unit)
{
	if (unit == NULL)
		return "";
	if (strcmp(unit, "ns") == 0)
		return "ns";
	if (strcmp(unit, "bytes") == 0)
		return "B";
	return "";
}

/* One line: start, host, length, the busiest vitals' wsum, findings. */
static int
epochs_print_line(const struct vitals_epoch *e)
{
	const struct vitals_vital_epoch **v;
	char start[64], num[32];
	uint32_t i;

	if ((v = cli_vitals_sorted(e, 1)) == NULL)
		return -ENOMEM;
	cli_fmt_time(e->start_ns, 0, start, sizeof start);
	printf("%s  %s  %.1fs%s ", start, e->host, e->length_ns / 1e9,
	    e->partial ? " partial" : "");
	for (i = 0; i < e->nvitals && i < EPOCHS_TOP_VITALS; i++) {
		epochs_fmt_count(v[i]->wsum, num, sizeof num);
		printf(" %s=%s%s", v[i]->name, num, epochs_unit(v[i]->unit));
	}
	printf("  findings=%" PRIu32 "\n", e->nfindings);
	free(v);
	return 0;
}

/* The JSON summary of one epoch: {path, host, start_ns, ...}, or NULL. */
static json_t *
epochs_json(const struct vitals_epoch *e, const char *path)
{
	const struct vitals_vital_epoch *v;
	json_t *o, *vitals;
	uint32_t i;

	o = json_pack("{s:s, s:s, s:I, s:I, s:b, s:{}, s:I}", "path", path,
	    "host", e->host, "start_ns", (json_int_t)e->start_ns, "length_ns",
	    (json_int_t)e->length_ns, "partial", (int)e->partial, "vitals",
	    "findings", (json_int_t)e->nfindings);
	if (o == NULL)
		return NULL;
	vitals = json_object_get(o, "vitals");
	for (i = 0; i < e->nvitals; i++) {
		v = &e->vitals[i];
		if (json_object_set_new(vitals, v->name,
			json_pack("{s:I, s:I, s:I, s:I}", "events",
			    (json_int_t)v->events, "wsum", (json_int_t)v->wsum,
			    "unique", (json_int_t)v->unique, "samples",
			    (json_int_t)v->nsamples)) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* Summarise one file, to stdout or into arr; a corrupt file is skipped. */
static int
epochs_one(const char *path, json_t *arr, int *nread)
{
	struct vitals_epoch *e;
	int rc;

	if (cli_epoch_load(path, "skipping ", &e) < 0)
		return 0;
	if (arr != NULL)
		rc = json_array_append_new(arr, epochs_json(e, path)) == 0
		    ? 0
		    : -ENOMEM;
	else
		rc = epochs_print_line(e);
	vitals_epoch_free(e);
	if (rc == 0)
		(*nread)++;
	return rc;
}

/* Print the summaries of the selected entries, oldest first. */
static int
epochs_list(const struct cli_selection *s, const struct epochs_opts *o)
{
	json_t *arr = NULL;
	size_t i = 0;
	int nread = 0, rc = 0;

	if (o->json && (arr = json_array()) == NULL)
		return -ENOMEM;
	if (o->limit > 0 && s->n > o->limit)
		i = s->n - o->limit;
	for (; i < s->n && rc == 0; i++)
		rc = epochs_one(s->v[i]->path, arr, &nread);
	if (rc == 0 && arr != NULL)
		cli_print_json(arr);
	json_decref(arr);
	if (rc == 0 && nread == 0)
		rc = -ENODATA;
	return rc;
}

/* Parse the arguments of `vitals epochs`. */
static int
epochs_args(
    struct cli *cli, struct cli_args *a, struct epochs_opts *o, int *done)
{
	const char *val;
	int id, rc = CLI_EXIT_OK;

	while (rc == CLI_EXIT_OK && !*done) {
		switch ((id = cli_next(a, &val))) {
		case CLI_END:
			return rc;
		case CLI_ERR:
			return cli_usage_error(cli, "epochs: %s", a->err);
		case CLI_POS:
			return cli_usage_error(
			    cli, "epochs: unexpected argument %s", val);
		case CO_JSON:
			o->json = 1;
			break;
		case CO_HOST:
			o->host = val;
			break;
		case CO_LIMIT:
			if (cli_parse_count(val, &o->limit) < 0)
				return cli_usage_error(
				    cli, "bad --limit %s", val);
			break;
		default:
			rc = cli_opt(cli, id, val, done);
		}
	}
	return rc;
}

/* `vitals epochs`: list stored epochs. */
static int
epochs_run(struct cli *cli, struct cli_args *a)
{
	struct epochs_opts o = { 0 };
	struct cli_selection s;
	int done = 0, rc;

	if ((rc = epochs_args(cli, a, &o, &done)) != CLI_EXIT_OK || done)
		return rc;
	if ((rc = cli_data_dir(cli)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_select(&s, cli->data_dir, o.host)) != CLI_EXIT_OK)
		return rc;
	rc = epochs_list(&s, &o);
	if (rc == -ENODATA)
		cli_msg("no readable epochs under %s", cli->data_dir);
	else if (rc < 0)
		cli_msg("%s", strerror(-rc));
	cli_selection_free(&s);
	return rc < 0 ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd epochs_cmd = {
	.name = "epochs",
	.usage = "  epochs [--json] [--host H] [--limit N]\n"
		 "      list stored epochs, oldest first (--limit: the N most "
		 "recent)\n",
	.flag = CLI_EPOCHS,
	.run = epochs_run,
};
