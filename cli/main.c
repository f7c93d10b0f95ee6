/* SPDX-License-Identifier: MIT */
/*
 * vitals: the command-line tool.  Lists the epochs in a store and shows one
 * epoch (its vitals, heaviest labels, samples with stacks and findings) as
 * text or JSON.  It reads the store only through <vitals/store.h>.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build top; not core/runtime/config.h */
#endif

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "args.h"
#include "codec.h"
#include "config.h"
#include "instance.h"
#include "pprof.h"
#include "range.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#define DEFAULT_DATA_DIR LOCALSTATEDIR "/lib/vitals"

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_RUNTIME 1 /* no data, unreadable store or file */
#define EXIT_USAGE 2 /* bad arguments */

/* Vitals summarised on one line of `vitals epochs`. */
#define EPOCHS_TOP_VITALS 4

/* Where the store is, from the global options. */
struct cli {
	const char *data_dir_opt; /* --data-dir, or NULL */
	const char *config_path; /* -c, or NULL */
	struct config *config; /* loaded from config_path */
	const char *data_dir; /* resolved by cli_data_dir() */
};

/* The store's listing, restricted to one host if asked. */
struct selection {
	struct vitals_store_list list;
	/* n entries of list, oldest first */
	const struct vitals_store_entry **v;
	size_t n;
};

/* Options of `vitals epochs`. */
struct epochs_opts {
	int json;
	const char *host;
	size_t limit; /* most recent files to read; 0 = all */
};

/* Options of `vitals show`. */
struct show_opts {
	int json;
	const char *epoch; /* path, time prefix or index; NULL = newest */
	int last; /* --last given */
	const char *host;
	const char *vital; /* only this vital, or NULL */
	size_t top; /* HCA slots under TOP LABELS */
	size_t nsamples; /* samples under SAMPLES */
};

static const char usage_text[] =
    "usage: vitals [--data-dir DIR] [-c CONFIG] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  epochs [--json] [--host H] [--limit N]\n"
    "      list stored epochs, oldest first (--limit: the N most recent)\n"
    "  show [EPOCH | --last] [--json] [--host H] [--vital NAME] [--top N]\n"
    "       [--samples N]\n"
    "      show one epoch; EPOCH is a file, an index (0 is the first, -1\n"
    "      the last) or a local start time prefix (2026-11-22T00:15: the\n"
    "      most recent match); default and --last: the newest readable\n"
    "\n"
    "options:\n"
    "  -d, --data-dir DIR  the store (default: data_dir of CONFIG, else\n"
    "                      $VITALS_DATA_DIR, else " DEFAULT_DATA_DIR ")\n"
    "  -c, --config FILE   vitalsd configuration: data_dir, and the filters\n"
    "                      and timescales of range commands\n"
    "  -h, --help          show this help\n"
    "  -V, --version       show the version\n";

/* The usage: this file's commands, then the range commands', pprof's. */
static void
print_usage(FILE *f)
{
	fputs(usage_text, f);
	fputs("\nrange commands:\n", f);
	fputs(range_usage, f);
	fputs("\nprofiles (times as above):\n", f);
	fputs(pprof_usage, f);
}

static void msg(const char *, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Print "vitals: " and a message to stderr. */
static void
msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Complain about the arguments; returns EXIT_USAGE for the caller to pass. */
static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vitals: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	print_usage(stderr);
	return EXIT_USAGE;
}

/* Whether s is an epoch index: an optional '-' and decimal digits. */
static int
is_index(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '\0')
		return 0;
	return strspn(s, "0123456789") == strlen(s);
}

/* Parse a count for --top/--samples/--limit; 0 or -EINVAL. */
static int
parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* Handle an option every command accepts; EXIT_OK, or an exit code to stop. */
static int
common_opt(struct cli *cli, int id, const char *val, int *done)
{
	switch (id) {
	case CO_HELP:
		print_usage(stdout);
		*done = 1;
		return EXIT_OK;
	case CO_VERSION:
		printf("vitals %s\n", PACKAGE_VERSION);
		*done = 1;
		return EXIT_OK;
	case CO_DATA_DIR:
		cli->data_dir_opt = val;
		return EXIT_OK;
	case CO_CONFIG:
		cli->config_path = val;
		return EXIT_OK;
	}
	return usage_error("unexpected option");
}

/*
 * Resolve the store directory: --data-dir, the config's data_dir, then
 * $VITALS_DATA_DIR, then the built-in default.  Returns EXIT_OK or
 * EXIT_RUNTIME when the config cannot be read.
 */
static int
cli_data_dir(struct cli *cli)
{
	char err[512];
	const char *env;
	int rc;

	if (cli->data_dir_opt != NULL) {
		cli->data_dir = cli->data_dir_opt;
		return EXIT_OK;
	}
	if (cli->config_path != NULL) {
		err[0] = '\0';
		rc = config_load(
		    cli->config_path, &cli->config, err, sizeof err);
		if (rc < 0) {
			msg("%s", err[0] != '\0' ? err : strerror(-rc));
			return EXIT_RUNTIME;
		}
		cli->data_dir = cli->config->data_dir;
		if (cli->data_dir != NULL)
			return EXIT_OK;
	}
	env = getenv("VITALS_DATA_DIR");
	cli->data_dir = env != NULL && *env != '\0' ? env : DEFAULT_DATA_DIR;
	return EXIT_OK;
}

/* ---- the store ---- */

/* Free a selection; accepts a zeroed one. */
static void
selection_free(struct selection *s)
{
	free(s->v);
	vitals_store_list_free(&s->list);
	memset(s, 0, sizeof *s);
}

/* Keep the entries of s->list made by host (all when host is NULL). */
static int
selection_filter(struct selection *s, const char *host)
{
	size_t i;

	s->v = calloc(s->list.n + 1, sizeof *s->v);
	if (s->v == NULL)
		return -ENOMEM;
	for (i = 0; i < s->list.n; i++) {
		if (host == NULL || strcmp(s->list.v[i].host, host) == 0)
			s->v[s->n++] = &s->list.v[i];
	}
	return 0;
}

/*
 * List the store, keeping host's epochs.  Returns EXIT_OK with at least one
 * entry in *s (free with selection_free), or EXIT_RUNTIME after saying why.
 */
static int
selection_load(struct selection *s, const char *dir, const char *host)
{
	int rc;

	memset(s, 0, sizeof *s);
	rc = vitals_store_list(dir, &s->list);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		msg("data directory %s does not exist", dir);
		return EXIT_RUNTIME;
	}
	if (rc == 0)
		rc = selection_filter(s, host);
	if (rc < 0) {
		msg("cannot list %s: %s", dir, strerror(-rc));
		selection_free(s);
		return EXIT_RUNTIME;
	}
	if (s->n == 0) {
		if (host != NULL)
			msg("no epochs of host %s under %s", host, dir);
		else
			msg("no epochs under %s", dir);
		selection_free(s);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Load an epoch file; on failure print why (prefixed by what) and return rc. */
static int
epoch_load(const char *path, const char *what, struct vitals_epoch **out)
{
	char err[512];
	const char *reason = err;
	size_t n = strlen(path);
	int rc;

	err[0] = '\0';
	if ((rc = vitals_epoch_load(path, out, err, sizeof err)) == 0)
		return 0;
	/* The reason may already name the file. */
	if (strncmp(err, path, n) == 0 && err[n] == ':')
		reason = err + n + 1 + (err[n + 1] == ' ');
	if (*reason == '\0')
		reason = strerror(-rc);
	msg("%s%s: %s", what, path, reason);
	return rc;
}

/* ---- formatting ---- */

/* Local time of ns as 2026-11-22T00:15:00, with ".123" if ms is set. */
static void
fmt_time(uint64_t ns, int ms, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t n;

	if (localtime_r(&t, &tm) == NULL ||
	    (n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		snprintf(buf, len, "@%" PRIu64, ns);
		return;
	}
	if (ms)
		snprintf(buf + n, len - n, ".%03u",
		    (unsigned)(ns / 1000000u % 1000u));
}

/* v with a k/M/G/T/P suffix once it has more than five digits. */
static void
fmt_count(uint64_t v, char *buf, size_t len)
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

/* Name of a finding severity. */
static const char *
fmt_severity(uint32_t sev)
{
	switch (sev) {
	case VITALS_SEV_INFO:
		return "info";
	case VITALS_SEV_WARN:
		return "warn";
	case VITALS_SEV_CRIT:
		return "crit";
	}
	return "?";
}

/* A string, or "-" when NULL or empty. */
static const char *
str_or_dash(const char *s)
{
	return s != NULL && *s != '\0' ? s : "-";
}

/* Order vitals by name. */
static int
cmp_vital_name(const void *a, const void *b)
{
	const struct vitals_vital_epoch *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* Order vitals by events, most first. */
static int
cmp_vital_events(const void *a, const void *b)
{
	const struct vitals_vital_epoch *const *x = a, *const *y = b;

	if ((*x)->events != (*y)->events)
		return (*x)->events < (*y)->events ? 1 : -1;
	return strcmp((*x)->name, (*y)->name);
}

/*
 * The epoch's vitals as a new array of pointers (caller frees) sorted with
 * cmp; NULL when out of memory.
 */
static const struct vitals_vital_epoch **
vitals_sorted(
    const struct vitals_epoch *e, int (*cmp)(const void *, const void *))
{
	const struct vitals_vital_epoch **v;
	uint32_t i;

	if ((v = calloc(e->nvitals + 1, sizeof *v)) == NULL)
		return NULL;
	for (i = 0; i < e->nvitals; i++)
		v[i] = &e->vitals[i];
	qsort(v, e->nvitals, sizeof *v, cmp);
	return v;
}

/* ---- vitals epochs ---- */

/* One line: start, host, length, the busiest vitals' wsum, findings. */
static int
epochs_print_line(const struct vitals_epoch *e)
{
	const struct vitals_vital_epoch **v;
	char start[64], num[32];
	uint32_t i;

	if ((v = vitals_sorted(e, cmp_vital_events)) == NULL)
		return -ENOMEM;
	fmt_time(e->start_ns, 0, start, sizeof start);
	printf("%s  %s  %.1fs%s ", start, e->host, e->length_ns / 1e9,
	    e->partial ? " partial" : "");
	for (i = 0; i < e->nvitals && i < EPOCHS_TOP_VITALS; i++) {
		fmt_count(v[i]->wsum, num, sizeof num);
		printf(" %s=%s", v[i]->name, num);
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

	if (epoch_load(path, "skipping ", &e) < 0)
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
epochs_run(const struct selection *s, const struct epochs_opts *o)
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
	if (rc == 0 && arr != NULL) {
		json_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	}
	json_decref(arr);
	if (rc == 0 && nread == 0)
		rc = -ENODATA;
	return rc;
}

/* Parse the arguments of `vitals epochs`. */
static int
epochs_args(struct cli *cli, struct cli_args *a, struct epochs_opts *o,
    int *done)
{
	const char *val;
	int id, rc = EXIT_OK;

	a->cmd = CLI_EPOCHS;
	while (rc == EXIT_OK && !*done) {
		switch ((id = cli_next(a, &val))) {
		case CLI_END:
			return rc;
		case CLI_ERR:
			return usage_error("epochs: %s", a->err);
		case CLI_POS:
			return usage_error(
			    "epochs: unexpected argument %s", val);
		case CO_JSON:
			o->json = 1;
			break;
		case CO_HOST:
			o->host = val;
			break;
		case CO_LIMIT:
			if (parse_count(val, &o->limit) < 0)
				return usage_error("bad --limit %s", val);
			break;
		default:
			rc = common_opt(cli, id, val, done);
		}
	}
	return rc;
}

/* `vitals epochs`: list stored epochs. */
static int
cmd_epochs(struct cli *cli, struct cli_args *a)
{
	struct epochs_opts o = { 0 };
	struct selection s;
	int done = 0, rc;

	if ((rc = epochs_args(cli, a, &o, &done)) != EXIT_OK || done)
		return rc;
	if ((rc = cli_data_dir(cli)) != EXIT_OK)
		return rc;
	if ((rc = selection_load(&s, cli->data_dir, o.host)) != EXIT_OK)
		return rc;
	rc = epochs_run(&s, &o);
	if (rc == -ENODATA)
		msg("no readable epochs under %s", cli->data_dir);
	else if (rc < 0)
		msg("%s", strerror(-rc));
	selection_free(&s);
	return rc < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* ---- vitals show: text ---- */

/* Header: host, start, length, t per vital, dropped, collector CPU. */
static void
print_header(const struct vitals_epoch *e, const char *path,
    const struct vitals_vital_epoch *const *v)
{
	char start[64];
	uint32_t i;

	fmt_time(e->start_ns, 1, start, sizeof start);
	printf("EPOCH %s  host %s\n", start, e->host);
	printf("  file       %s\n", path);
	printf("  length     %.3f s%s (nominal %" PRIu32 " s, seq %" PRIu64
	       ")\n",
	    e->length_ns / 1e9, e->partial ? " partial" : "", e->timescale_s,
	    e->seq);
	printf("  threshold ");
	for (i = 0; i < e->nvitals; i++)
		printf(" %s=%" PRIu64, v[i]->name, v[i]->threshold);
	printf("\n  dropped    %" PRIu64 " events\n", e->dropped);
	printf("  collector  %.3f ms CPU (%.4f%% of the epoch)\n",
	    e->cpu_ns / 1e6,
	    e->length_ns > 0 ? 100.0 * e->cpu_ns / e->length_ns : 0.0);
}

/* A vital's counts. */
static void
print_vital(const struct vitals_vital_epoch *v)
{
	printf("\n%s (unit: %s)\n", v->name, str_or_dash(v->unit));
	printf("  events %" PRIu64 "  weighted sum %" PRIu64
	       "  unique labels ~%" PRIu64 "\n",
	    v->events, v->wsum, v->unique);
	printf("  threshold %" PRIu64 "  floor %" PRIu64 "  hca %" PRIu32
	       " counters  dropped %" PRIu64 " events\n",
	    v->threshold, v->floor, v->hca_size, v->dropped);
	printf("  samples %" PRIu32 " kept, %" PRIu64 " dropped\n", v->nsamples,
	    v->samples_dropped);
}

/* An HCA slot and its counter, for sorting. */
struct slot {
	uint64_t count;
	uint32_t idx;
};

/* Order slots by counter, largest first. */
static int
cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Samples of slot idx sharing s's exe. */
static uint32_t
slot_exe_count(const struct vitals_vital_epoch *v, uint32_t idx,
    const struct vitals_sample *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < v->nsamples; i++) {
		if (v->samples[i].slot == idx &&
		    strcmp(v->samples[i].exe, s->exe) == 0)
			n++;
	}
	return n;
}

/* Whether a sample of slot idx before the i-th has the same label. */
static int
slot_label_seen(const struct vitals_vital_epoch *v, uint32_t idx, uint32_t i)
{
	uint32_t j;

	for (j = 0; j < i; j++) {
		if (v->samples[j].slot == idx &&
		    v->samples[j].label == v->samples[i].label)
			return 1;
	}
	return 0;
}

/*
 * The sample of slot idx standing for it: one of the most frequent exe,
 * the largest count among those.  NULL if no sample fell there.  Also
 * counts the distinct labels sampled in the slot.
 */
static const struct vitals_sample *
slot_sample(const struct vitals_vital_epoch *v, uint32_t idx, uint32_t *nlabels)
{
	const struct vitals_sample *best = NULL, *s;
	uint32_t i, n, bestn = 0;

	*nlabels = 0;
	for (i = 0; i < v->nsamples; i++) {
		s = &v->samples[i];
		if (s->slot != idx)
			continue;
		if (!slot_label_seen(v, idx, i))
			(*nlabels)++;
		n = slot_exe_count(v, idx, s);
		if (n > bestn || (n == bestn && s->count > best->count)) {
			best = s;
			bestn = n;
		}
	}
	return best;
}

/* One TOP LABELS line. */
static void
print_top_slot(const struct vitals_vital_epoch *v, const struct slot *sl)
{
	const struct vitals_sample *s;
	uint32_t nlabels;
	double share;

	share = v->wsum > 0 ? 100.0 * sl->count / v->wsum : 0.0;
	printf("    %6" PRIu32 " %14" PRIu64 " %6.2f%%  ", sl->idx, sl->count,
	    share);
	if ((s = slot_sample(v, sl->idx, &nlabels)) == NULL) {
		printf("(no sample)\n");
		return;
	}
	printf("%s (%s) label 0x%" PRIx64, str_or_dash(s->exe),
	    str_or_dash(s->comm), s->label);
	if (nlabels > 1)
		printf(" (+%" PRIu32 " other label%s)", nlabels - 1,
		    nlabels > 2 ? "s" : "");
	printf("\n");
}

/* The n largest HCA slots with the samples that fell into them. */
static int
print_top(const struct vitals_vital_epoch *v, size_t n)
{
	struct slot *sl;
	uint32_t i, used = 0;

	if (n == 0)
		return 0;
	if ((sl = calloc(v->hca_size + 1, sizeof *sl)) == NULL)
		return -ENOMEM;
	for (i = 0; i < v->hca_size; i++) {
		if (v->hca[i] > 0) {
			sl[used].count = v->hca[i];
			sl[used++].idx = i;
		}
	}
	qsort(sl, used, sizeof *sl, cmp_slot);
	printf("  TOP LABELS\n");
	printf("    %6s %14s %7s  %s\n", "slot", "count", "share",
	    "exe (comm) label");
	for (i = 0; i < used && i < n; i++)
		print_top_slot(v, &sl[i]);
	if (used == 0)
		printf("    (empty)\n");
	free(sl);
	return 0;
}

/* Order samples by count, largest first, then by time. */
static int
cmp_sample(const void *a, const void *b)
{
	const struct vitals_sample *const *x = a, *const *y = b;

	if ((*x)->count != (*y)->count)
		return (*x)->count < (*y)->count ? 1 : -1;
	if ((*x)->ts_ns != (*y)->ts_ns)
		return (*x)->ts_ns < (*y)->ts_ns ? -1 : 1;
	return 0;
}

/*
 * A user frame: "name (module+0xOFF)" or "module+0xOFF" for one stored
 * module-relative (VITALS_UFRAME), else the raw address and its name.
 */
static void
print_uframe(const struct vitals_epoch *e, uint64_t v, const char *name)
{
	int32_t id = VITALS_UFRAME_MODULE(v);
	const struct vitals_module *m;
	const char *base;
	char where[320];

	if (name != NULL && *name == '\0')
		name = NULL;
	if (id < 0) {
		printf("        u 0x%" PRIx64 "%s%s\n", v, name ? " " : "",
		    name ? name : "");
		return;
	}
	if ((m = vitals_epoch_module(e, (uint32_t)id)) != NULL) {
		base = strrchr(m->path, '/');
		snprintf(where, sizeof where, "%s+0x%" PRIx64,
		    base != NULL ? base + 1 : m->path, VITALS_UFRAME_OFFSET(v));
	} else {
		snprintf(where, sizeof where, "[module %" PRId32 "]+0x%" PRIx64,
		    id, VITALS_UFRAME_OFFSET(v));
	}
	if (name != NULL)
		printf("        u %s (%s)\n", name, where);
	else
		printf("        u %s\n", where);
}

/* A sample's stack, innermost frame first, kernel then user. */
static void
print_stack(const struct vitals_epoch *e, const struct vitals_sample *s)
{
	uint32_t i;

	for (i = 0; i < s->nkstack; i++) {
		if (s->ksyms != NULL && s->ksyms[i] != NULL &&
		    *s->ksyms[i] != '\0')
			printf("        k %s\n", s->ksyms[i]);
		else
			printf("        k 0x%016" PRIx64 "\n", s->kstack[i]);
	}
	for (i = 0; i < s->nustack; i++)
		print_uframe(e, s->ustack[i],
		    s->ksyms != NULL ? s->ksyms[s->nkstack + i] : NULL);
}

/* One sample: when, who, what, then its stack. */
static void
print_sample(const struct vitals_epoch *e, const struct vitals_sample *s)
{
	char when[64];

	fmt_time(s->ts_ns, 1, when, sizeof when);
	printf("    %s  pid %" PRIu32 "/%" PRIu32 "  uid %" PRIu32
	       "  comm %s  exe %s\n",
	    when, s->pid, s->tid, s->uid, str_or_dash(s->comm),
	    str_or_dash(s->exe));
	printf("      label 0x%" PRIx64 "  weight %" PRIu64 "  count %" PRIu64
	       "  op %" PRIu32 "  args %" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 "\n",
	    s->label, s->weight, s->count, s->op, s->args[0], s->args[1],
	    s->args[2], s->args[3]);
	print_stack(e, s);
}

/* Up to n samples, the largest counts first. */
static int
print_samples(const struct vitals_epoch *e, const struct vitals_vital_epoch *v,
    size_t n)
{
	const struct vitals_sample **sv;
	uint32_t i;

	if (n == 0)
		return 0;
	if ((sv = calloc(v->nsamples + 1, sizeof *sv)) == NULL)
		return -ENOMEM;
	for (i = 0; i < v->nsamples; i++)
		sv[i] = &v->samples[i];
	qsort(sv, v->nsamples, sizeof *sv, cmp_sample);
	printf("  SAMPLES (%zu of %" PRIu32 ")\n",
	    n < v->nsamples ? n : (size_t)v->nsamples, v->nsamples);
	for (i = 0; i < v->nsamples && i < n; i++)
		print_sample(e, sv[i]);
	free(sv);
	return 0;
}

/* The findings (only those about vital, when it is set). */
static void
print_findings(const struct vitals_epoch *e, const char *vital)
{
	const struct vitals_finding *f;
	uint32_t i, n = 0;

	printf("\nFINDINGS\n");
	for (i = 0; i < e->nfindings; i++) {
		f = &e->findings[i];
		if (vital != NULL &&
		    (f->vital == NULL || strcmp(f->vital, vital) != 0))
			continue;
		printf("  [%s] %s  vital %s  label %s  score %.3g  value %.6g"
		       " vs expected %.6g (%" PRIu32 " s)\n",
		    fmt_severity(f->severity), str_or_dash(f->filter),
		    str_or_dash(f->vital), str_or_dash(f->label), f->score,
		    f->value, f->expected, f->timescale_s);
		printf("      %s\n", str_or_dash(f->text));
		n++;
	}
	if (n == 0)
		printf("  (none)\n");
}

/* The named metrics (probes' time series): mean, min, max, last, n. */
static void
print_metrics(const struct vitals_epoch *e)
{
	const struct vitals_metric *m;
	uint32_t i;

	printf("\nMETRICS (%" PRIu32 ")\n", e->nmetrics);
	if (e->nmetrics == 0) {
		printf("  (none)\n");
		return;
	}
	printf("  %-40s %-12s %12s %12s %12s %12s %6s\n", "name", "unit",
	    "mean", "min", "max", "last", "n");
	for (i = 0; i < e->nmetrics; i++) {
		m = &e->metrics[i];
		printf("  %-40s %-12s %12.6g %12.6g %12.6g %12.6g %6" PRIu64
		       "\n",
		    m->name, str_or_dash(m->unit), m->mean, m->min, m->max,
		    m->last, m->n);
	}
}

/* The modules user frames and exes refer to: id, build-id, path. */
static void
print_modules(const struct vitals_epoch *e)
{
	const struct vitals_module *m;
	uint32_t i;

	printf("\nMODULES (%" PRIu32 ")\n", e->nmodules);
	if (e->nmodules == 0) {
		printf("  (none)\n");
		return;
	}
	printf("  %5s  %-40s  %s\n", "id", "build-id", "path");
	for (i = 0; i < e->nmodules; i++) {
		m = &e->modules[i];
		printf("  %5" PRIu32 "  %-40s  %s\n", m->id,
		    str_or_dash(m->build_id), str_or_dash(m->path));
	}
}

/* One vital in full: counts, top labels, samples. */
static int
show_vital(const struct vitals_epoch *e, const struct vitals_vital_epoch *v,
    const struct show_opts *o)
{
	int rc;

	print_vital(v);
	if ((rc = print_top(v, o->top)) < 0)
		return rc;
	return print_samples(e, v, o->nsamples);
}

/* The whole epoch as text. */
static int
show_text(
    const struct vitals_epoch *e, const char *path, const struct show_opts *o)
{
	const struct vitals_vital_epoch **v;
	uint32_t i;
	int rc = 0;

	if ((v = vitals_sorted(e, cmp_vital_name)) == NULL)
		return -ENOMEM;
	print_header(e, path, v);
	for (i = 0; i < e->nvitals && rc == 0; i++) {
		if (o->vital == NULL || strcmp(v[i]->name, o->vital) == 0)
			rc = show_vital(e, v[i], o);
	}
	if (rc == 0 && o->vital == NULL)
		print_metrics(e);
	if (rc == 0 && o->vital == NULL)
		print_modules(e);
	if (rc == 0)
		print_findings(e, o->vital);
	free(v);
	return rc;
}

/* The whole epoch as JSON, in the store's own form. */
static int
show_json(const struct vitals_epoch *e)
{
	json_t *j;
	int rc;

	if ((j = codec_epoch_to_json(e)) == NULL)
		return -ENOMEM;
	rc = json_dumpf(j, stdout, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	fputc('\n', stdout);
	json_decref(j);
	return rc;
}

/* ---- vitals show: picking the epoch ---- */

/*
 * Index of the most recent entry below `below` whose local start begins
 * with prefix ("" matches every entry); 0 or -ENOENT.
 */
static int
pick_by_time(
    const struct selection *s, const char *prefix, size_t below, size_t *out)
{
	char when[64], want[64], *sp;
	size_t i, n;

	snprintf(want, sizeof want, "%s", prefix);
	/* Accept "2026-11-22 00:15" for "2026-11-22T00:15". */
	if ((sp = strchr(want, ' ')) != NULL)
		*sp = 'T';
	n = strlen(want);
	for (i = below; i-- > 0;) {
		fmt_time(s->v[i]->start_ns, 1, when, sizeof when);
		if (strncmp(when, want, n) == 0) {
			*out = i;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The entry an index argument names ("0" the first, "-1" the last): 0,
 * -ERANGE for a negative index out of range, or -ENOENT when arg is no
 * index in range (it may still be a time prefix, like "2026").
 */
static int
pick_index(const struct selection *s, const char *arg, size_t *out)
{
	long long k;

	if (!is_index(arg))
		return -ENOENT;
	errno = 0;
	k = strtoll(arg, NULL, 10);
	if (errno == 0 && k < 0 && (unsigned long long)-k <= s->n) {
		*out = s->n - (size_t)-k;
		return 0;
	}
	if (errno == 0 && k >= 0 && (unsigned long long)k < s->n) {
		*out = (size_t)k;
		return 0;
	}
	return arg[0] == '-' ? -ERANGE : -ENOENT;
}

/* Whether arg names a file rather than an index or time prefix. */
static int
is_path(const char *arg)
{
	struct stat st;

	if (arg == NULL)
		return 0;
	if (strchr(arg, '/') != NULL)
		return 1;
	return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Load the file at path for `show`, prefixing a failure with what.  Returns
 * 0 with *e and *pathp (a copy the caller frees), or a negative errno.
 */
static int
show_load(
    const char *path, const char *what, struct vitals_epoch **e, char **pathp)
{
	int rc;

	if ((rc = epoch_load(path, what, e)) < 0)
		return rc;
	if ((*pathp = strdup(path)) == NULL) {
		vitals_epoch_free(*e);
		msg("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/*
 * The most recent readable epoch whose start begins with prefix; files that
 * do not load are reported and skipped.  EXIT_OK or EXIT_RUNTIME.
 */
static int
show_newest(const struct selection *s, const char *prefix, const char *dir,
    struct vitals_epoch **e, char **path)
{
	size_t i, cur = s->n, tried = 0;

	while (pick_by_time(s, prefix, cur, &i) == 0) {
		if (show_load(s->v[i]->path, "skipping ", e, path) == 0)
			return EXIT_OK;
		cur = i;
		tried++;
	}
	if (tried == 0)
		msg("no epoch matches '%s' (%zu epochs under %s)", prefix, s->n,
		    dir);
	else if (*prefix != '\0')
		msg("no readable epoch matches '%s' under %s", prefix, dir);
	else
		msg("no readable epochs under %s", dir);
	return EXIT_RUNTIME;
}

/*
 * Load the epoch o names from the store: an index exactly, else the newest
 * readable match of a time prefix (or of all, by default and for --last).
 */
static int
show_from_store(struct cli *cli, const struct show_opts *o,
    struct vitals_epoch **e, char **path)
{
	struct selection s;
	size_t i;
	int rc, r;

	if ((rc = cli_data_dir(cli)) != EXIT_OK)
		return rc;
	if ((rc = selection_load(&s, cli->data_dir, o->host)) != EXIT_OK)
		return rc;
	r = o->epoch != NULL ? pick_index(&s, o->epoch, &i) : -ENOENT;
	if (r == 0)
		rc = show_load(s.v[i]->path, "", e, path) == 0 ? EXIT_OK
							       : EXIT_RUNTIME;
	else if (r == -ERANGE) {
		msg("no epoch %s (%zu epochs under %s)", o->epoch, s.n,
		    cli->data_dir);
		rc = EXIT_RUNTIME;
	} else
		rc = show_newest(&s, o->epoch != NULL ? o->epoch : "",
		    cli->data_dir, e, path);
	selection_free(&s);
	return rc;
}

/* Set o->epoch from a positional argument (NULL for --last); only one. */
static int
show_set_epoch(struct show_opts *o, const char *val)
{
	if (o->epoch != NULL || o->last)
		return usage_error("show: more than one EPOCH");
	o->epoch = val;
	o->last = val == NULL;
	return EXIT_OK;
}

/* Parse one option of `vitals show`. */
static int
show_opt(
    struct cli *cli, struct show_opts *o, int id, const char *val, int *done)
{
	switch (id) {
	case CLI_POS:
		return show_set_epoch(o, val);
	case CO_LAST:
		return show_set_epoch(o, NULL);
	case CO_JSON:
		o->json = 1;
		return EXIT_OK;
	case CO_HOST:
		o->host = val;
		return EXIT_OK;
	case CO_VITAL:
		o->vital = val;
		return EXIT_OK;
	case CO_SLOTS:
		if (parse_count(val, &o->top) < 0)
			return usage_error("bad --top %s", val);
		return EXIT_OK;
	case CO_SAMPLES:
		if (parse_count(val, &o->nsamples) < 0)
			return usage_error("bad --samples %s", val);
		return EXIT_OK;
	}
	return common_opt(cli, id, val, done);
}

/* Parse the arguments of `vitals show`. */
static int
show_args(struct cli *cli, struct cli_args *a, struct show_opts *o, int *done)
{
	const char *val;
	int id, rc = EXIT_OK;

	a->cmd = CLI_SHOW;
	while (rc == EXIT_OK && !*done &&
	    (id = cli_next(a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return usage_error("show: %s", a->err);
		rc = show_opt(cli, o, id, val, done);
	}
	return rc;
}

/* Show the loaded epoch as asked. */
static int
show_epoch(
    const struct vitals_epoch *e, const char *path, const struct show_opts *o)
{
	int rc;

	if (o->vital != NULL && vitals_epoch_vital(e, o->vital) == NULL) {
		msg("no vital %s in %s", o->vital, path);
		return EXIT_RUNTIME;
	}
	rc = o->json ? show_json(e) : show_text(e, path, o);
	if (rc < 0) {
		msg("%s", strerror(-rc));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* `vitals show`: one epoch in detail. */
static int
cmd_show(struct cli *cli, struct cli_args *a)
{
	struct show_opts o = { .top = 5, .nsamples = 5 };
	struct vitals_epoch *e;
	char *path = NULL;
	int done = 0, rc;

	if ((rc = show_args(cli, a, &o, &done)) != EXIT_OK || done)
		return rc;
	if (is_path(o.epoch))
		rc = show_load(o.epoch, "", &e, &path) == 0 ? EXIT_OK
							    : EXIT_RUNTIME;
	else
		rc = show_from_store(cli, &o, &e, &path);
	if (rc != EXIT_OK)
		return rc;
	rc = show_epoch(e, path, &o);
	vitals_epoch_free(e);
	free(path);
	return rc;
}

/* ---- main ---- */

/* Parse the global options up to the command; *cmd is NULL if none. */
static int
global_args(struct cli *cli, struct cli_args *a, const char **cmd, int *done)
{
	const char *val;
	int id, rc = EXIT_OK;

	*cmd = NULL;
	while (rc == EXIT_OK && !*done &&
	    (id = cli_next(a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return usage_error("%s", a->err);
		if (id == CLI_POS) {
			*cmd = val;
			break;
		}
		rc = common_opt(cli, id, val, done);
	}
	return rc;
}

/* Run the command named cmd on the remaining arguments. */
static int
dispatch(struct cli *cli, const char *cmd, struct cli_args *a)
{
	int rc;

	if (strcmp(cmd, "epochs") == 0)
		return cmd_epochs(cli, a);
	if (strcmp(cmd, "show") == 0)
		return cmd_show(cli, a);
	if (strcmp(cmd, "pprof") == 0)
		return pprof_run(
		    cli->data_dir_opt, cli->config_path, a->argc, a->argv, a->i);
	if (range_is_command(cmd)) {
		rc = range_run(cmd, cli->data_dir_opt, cli->config_path,
		    a->argc - a->i, a->argv + a->i);
		/* A filter that could not save its state (a model) failed. */
		return rc == EXIT_OK && instance_stop_failures() > 0
		    ? EXIT_RUNTIME
		    : rc;
	}
	if (strcmp(cmd, "help") == 0) {
		print_usage(stdout);
		return EXIT_OK;
	}
	return usage_error("unknown command '%s'", cmd);
}

/* The vitals command-line tool; exits 0, 1 (runtime error) or 2 (usage). */
int
main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct cli_args a;
	const char *cmd;
	int done = 0, rc;

	cli_args_init(&a, argc, argv, 1, CLI_GLOBAL);
	rc = global_args(&cli, &a, &cmd, &done);
	if (rc == EXIT_OK && !done) {
		if (cmd == NULL)
			rc = usage_error("no command given");
		else
			rc = dispatch(&cli, cmd, &a);
	}
	config_free(cli.config);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("writing output: %s", strerror(errno));
		rc = EXIT_RUNTIME;
	}
	return rc;
}
