/* SPDX-License-Identifier: MIT */
/*
 * `vitals hosts`: the hosts of a store, one line each (epochs, first and
 * last start), and for the nodes a central pulls from (the remote
 * output's state kept in the store, DATA_DIR/nodes/) where they are
 * pulled from, the lag, errors and refusals.  It reads the store only,
 * so it works the same with the daemon running or not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <vitals/store.h>

#include "cli.h"

#define HOSTS_NS 1000000000ull

/* One host of the store. */
struct hosts_row {
	const char *host; /* borrowed from the listing */
	uint64_t epochs, first_ns, last_ns;
	const struct vitals_node *node; /* pulled from, or NULL */
};

/* Options of `vitals hosts`. */
struct hosts_opts {
	int json;
	const char *host;
};

/* The row of host in v[0..*n), added when missing (v has room). */
static struct hosts_row *
hosts_row(struct hosts_row *v, size_t *n, const char *host)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i].host, host) == 0)
			return &v[i];
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].host = host;
	return &v[(*n)++];
}

static uint64_t
hosts_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * HOSTS_NS + (uint64_t)ts.tv_nsec;
}

static json_t *
hosts_json_row(const struct hosts_row *r, uint64_t now)
{
	const struct vitals_node *n = r->node;
	json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "host", r->host, "epochs",
	    (json_int_t)r->epochs, "first_ns", (json_int_t)r->first_ns,
	    "last_ns", (json_int_t)r->last_ns);

	if (o == NULL || n == NULL)
		return o;
	json_object_set_new(o, "node",
	    json_pack("{s:s, s:I, s:I, s:I, s:f, "
		      "s:s?}",
		"url", n->url, "pulled", (json_int_t)n->pulled, "errors",
		(json_int_t)n->errors, "refused", (json_int_t)n->refused,
		"lag_s",
		n->last_end_ns && now > n->last_end_ns
		    ? (double)(now - n->last_end_ns) / HOSTS_NS
		    : 0.0,
		"last_error", n->last_error));
	return o;
}

static void
hosts_print_row(const struct hosts_row *r, uint64_t now)
{
	const struct vitals_node *n = r->node;
	char first[64], last[64];

	cli_fmt_time(r->first_ns, 0, first, sizeof(first));
	cli_fmt_time(r->last_ns, 0, last, sizeof(last));
	printf("%-20s %8" PRIu64 "  %s .. %s", r->host, r->epochs, first, last);
	if (n != NULL)
		printf("  from %s  lag %.0fs  pulled %" PRIu64
		       "  errors %" PRIu64 "  refused %" PRIu64 "%s%s",
		    n->url,
		    n->last_end_ns && now > n->last_end_ns
			? (double)(now - n->last_end_ns) / HOSTS_NS
			: 0.0,
		    n->pulled, n->errors, n->refused,
		    n->last_error != NULL ? "  last error: " : "",
		    n->last_error != NULL ? n->last_error : "");
	printf("\n");
}

/* Nodes not (yet) in the store, with what they are. */
static void
hosts_print_pending(const struct vitals_node *n)
{
	printf("%-20s %8d  (nothing pulled yet from %s)  errors %" PRIu64
	       "  refused %" PRIu64 "%s%s\n",
	    n->host != NULL ? n->host : "?", 0, n->url, n->errors, n->refused,
	    n->last_error != NULL ? "  last error: " : "",
	    n->last_error != NULL ? n->last_error : "");
}

static int
hosts_list(const char *data_dir, const struct hosts_opts *o)
{
	struct vitals_store_list l = { 0, NULL };
	struct vitals_node_list nl = { 0, NULL };
	struct hosts_row *v = NULL, *r;
	uint64_t now = hosts_now();
	json_t *arr = NULL;
	size_t i, k, n = 0;
	int rc;

	if ((rc = vitals_store_list(data_dir, &l)) != 0 ||
	    (rc = vitals_nodes_load(data_dir, &nl)) != 0)
		goto out;
	if ((v = calloc(l.n + 1, sizeof(*v))) == NULL ||
	    (o->json && (arr = json_array()) == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		if (o->host != NULL && strcmp(l.v[i].host, o->host) != 0)
			continue;
		r = hosts_row(v, &n, l.v[i].host);
		if (r->epochs++ == 0)
			r->first_ns = l.v[i].start_ns;
		r->last_ns = l.v[i].start_ns;
	}
	for (k = 0; k < nl.n; k++)
		for (i = 0; i < n; i++)
			if (nl.v[k].host != NULL &&
			    strcmp(nl.v[k].host, v[i].host) == 0)
				v[i].node = &nl.v[k];
	for (i = 0; i < n; i++) {
		if (arr != NULL)
			json_array_append_new(arr, hosts_json_row(&v[i], now));
		else
			hosts_print_row(&v[i], now);
	}
	for (k = 0; arr == NULL && k < nl.n; k++)
		if (nl.v[k].pulled == 0 &&
		    (o->host == NULL ||
			(nl.v[k].host && strcmp(nl.v[k].host, o->host) == 0)))
			hosts_print_pending(&nl.v[k]);
	if (arr != NULL)
		cli_print_json(arr);
	rc = n == 0 && nl.n == 0 ? -ENODATA : 0;
out:
	json_decref(arr);
	free(v);
	vitals_store_list_free(&l);
	vitals_node_list_free(&nl);
	return rc;
}

static int
hosts_run(struct cli *cli, struct cli_args *a)
{
	struct hosts_opts o = { 0 };
	const char *val;
	int done = 0, id, rc = CLI_EXIT_OK;

	while (
	    rc == CLI_EXIT_OK && !done && (id = cli_next(a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return cli_usage_error(cli, "hosts: %s", a->err);
		if (id == CLI_POS)
			return cli_usage_error(cli,
			    "hosts: unexpected "
			    "argument %s",
			    val);
		if (id == CO_JSON)
			o.json = 1;
		else if (id == CO_HOST)
			o.host = val;
		else
			rc = cli_opt(cli, id, val, &done);
	}
	if (rc != CLI_EXIT_OK || done)
		return rc;
	if ((rc = cli_data_dir(cli)) != CLI_EXIT_OK)
		return rc;
	rc = hosts_list(cli->data_dir, &o);
	if (rc == -ENODATA || rc == -ENOENT)
		cli_msg("no hosts under %s", cli->data_dir);
	else if (rc < 0)
		cli_msg("%s: %s", cli->data_dir, strerror(-rc));
	return rc < 0 ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd hosts_cmd = {
	.name = "hosts",
	.usage = "  hosts [--json] [--host H]\n"
		 "      list the hosts in the store; for nodes a central pulls "
		 "from, their URL,\n      lag, errors and refusals\n",
	.flag = CLI_HOSTS,
	.run = hosts_run,
};
