/* SPDX-License-Identifier: MIT */
/*
 * `vitals show`: one epoch in detail, its vitals, heaviest labels, samples
 * with their stacks, metrics, modules and findings, as text or JSON.  The
 * epoch is a file, an index in the store or a start time prefix.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "cli.h"
#include "codec.h"

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

/* Whether s is an epoch index: an optional '-' and decimal digits. */
static int
show_is_index(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '\0')
		return 0;
	return strspn(s, "0123456789") == strlen(s);
}

/* ---- text ---- */

/* Header: host, start, length, t per vital, dropped, collector CPU. */
static void
show_header(const struct vitals_epoch *e, const char *path,
    const struct vitals_vital_epoch *const *v)
{
	char start[64];
	uint32_t i;

	cli_fmt_time(e->start_ns, 1, start, sizeof start);
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
show_counts(const struct vitals_vital_epoch *v)
{
	printf("\n%s (unit: %s)\n", v->name, cli_dash(v->unit));
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
struct show_slot {
	uint64_t count;
	uint32_t idx;
};

/* Order slots by counter, largest first. */
static int
show_cmp_slot(const void *a, const void *b)
{
	const struct show_slot *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Samples of slot idx sharing s's exe. */
static uint32_t
show_slot_exes(const struct vitals_vital_epoch *v, uint32_t idx,
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
show_slot_label_seen(
    const struct vitals_vital_epoch *v, uint32_t idx, uint32_t i)
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
show_slot_sample(
    const struct vitals_vital_epoch *v, uint32_t idx, uint32_t *nlabels)
{
	const struct vitals_sample *best = NULL, *s;
	uint32_t i, n, bestn = 0;

	*nlabels = 0;
	for (i = 0; i < v->nsamples; i++) {
		s = &v->samples[i];
		if (s->slot != idx)
			continue;
		if (!show_slot_label_seen(v, idx, i))
			(*nlabels)++;
		n = show_slot_exes(v, idx, s);
		if (n > bestn || (n == bestn && s->count > best->count)) {
			best = s;
			bestn = n;
		}
	}
	return best;
}

/* One TOP LABELS line. */
static void
show_top_slot(const struct vitals_vital_epoch *v, const struct show_slot *sl)
{
	const struct vitals_sample *s;
	uint32_t nlabels;
	double share;

	share = v->wsum > 0 ? 100.0 * sl->count / v->wsum : 0.0;
	printf("    %6" PRIu32 " %14" PRIu64 " %6.2f%%  ", sl->idx, sl->count,
	    share);
	if ((s = show_slot_sample(v, sl->idx, &nlabels)) == NULL) {
		printf("(no sample)\n");
		return;
	}
	printf("%s (%s) label 0x%" PRIx64, cli_dash(s->exe), cli_dash(s->comm),
	    s->label);
	if (nlabels > 1)
		printf(" (+%" PRIu32 " other label%s)", nlabels - 1,
		    nlabels > 2 ? "s" : "");
	printf("\n");
}

/* The n largest HCA slots with the samples that fell into them. */
static int
show_top(const struct vitals_vital_epoch *v, size_t n)
{
	struct show_slot *sl;
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
	qsort(sl, used, sizeof *sl, show_cmp_slot);
	printf("  TOP LABELS\n");
	printf("    %6s %14s %7s  %s\n", "slot", "count", "share",
	    "exe (comm) label");
	for (i = 0; i < used && i < n; i++)
		show_top_slot(v, &sl[i]);
	if (used == 0)
		printf("    (empty)\n");
	free(sl);
	return 0;
}

/* Order samples by count, largest first, then by time. */
static int
show_cmp_sample(const void *a, const void *b)
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
show_uframe(const struct vitals_epoch *e, uint64_t v, const char *name)
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

/*
 * An unnamed kernel frame stored by image and offset (core/kernel/kaddr.h):
 * "[kernel]+0xOFF".  Returns 0, or -1 for another (an older epoch's raw
 * address, or a keyed one in no image).
 */
static int
show_kframe(const struct vitals_epoch *e, uint64_t v)
{
	int32_t id = VITALS_UFRAME_MODULE(v);
	const struct vitals_module *m;

	if (id < 0 || (m = vitals_epoch_module(e, (uint32_t)id)) == NULL)
		return -1;
	printf(
	    "        k %s+0x%" PRIx64 "\n", m->path, VITALS_UFRAME_OFFSET(v));
	return 0;
}

/* A sample's stack, innermost frame first, kernel then user. */
static void
show_stack(const struct vitals_epoch *e, const struct vitals_sample *s)
{
	uint32_t i;

	for (i = 0; i < s->nkstack; i++) {
		if (s->ksyms != NULL && s->ksyms[i] != NULL &&
		    *s->ksyms[i] != '\0')
			printf("        k %s\n", s->ksyms[i]);
		else if (show_kframe(e, s->kstack[i]) != 0)
			printf("        k 0x%016" PRIx64 "\n", s->kstack[i]);
	}
	for (i = 0; i < s->nustack; i++)
		show_uframe(e, s->ustack[i],
		    s->ksyms != NULL ? s->ksyms[s->nkstack + i] : NULL);
}

/*
 * The arguments of a sample of vital as a person reads them, into buf
 * (doc/probes.md gives each probe's): a socket's peer and ports, a disk
 * request's device, sector and latency, a signal's sender.  0 if the
 * vital's are not decoded here.
 */
static int
show_what(
    const char *vital, const struct vitals_sample *s, char *buf, size_t len)
{
	const uint64_t *a = s->args;
	uint32_t ip = (uint32_t)a[0];
	char peer[48], proto[32];

	if (strcmp(vital, "socket") == 0) {
		if (a[2] == 6 || a[2] == 17)
			snprintf(proto, sizeof(proto), "%s",
			    a[2] == 6 ? "tcp" : "udp");
		else
			snprintf(
			    proto, sizeof(proto), "protocol %" PRIu64, a[2]);
		/* No IPv4 peer: an IPv6 one (its port), or none recorded. */
		if (ip != 0)
			snprintf(peer, sizeof(peer), " %s %u.%u.%u.%u:%" PRIu64,
			    s->op & 1 ? "from" : "to", ip >> 24,
			    (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff,
			    a[1]);
		else if (a[1] != 0)
			snprintf(peer, sizeof(peer), " %s port %" PRIu64,
			    s->op & 1 ? "from" : "to", a[1]);
		else
			peer[0] = '\0';
		snprintf(buf, len, "%s %s%s, %s local port %" PRIu64 "%s%s",
		    s->op & 1 ? "received" : "sent", proto, peer,
		    s->op & 1 ? "on" : "from", a[3] & 0xffff,
		    (a[3] >> 16) == 10 ? " (IPv6)" : "",
		    peer[0] == '\0' ? " (peer not recorded)" : "");
		return 1;
	}
	if (strcmp(vital, "diskio") == 0) {
		snprintf(buf, len,
		    "%" PRIu64 " bytes, device %u:%u, sector %" PRIu64
		    ", %.3f ms from dispatch to completion",
		    a[0], major((dev_t)a[2]), minor((dev_t)a[2]), a[3],
		    (double)a[1] / 1e6);
		return 1;
	}
	if (strcmp(vital, "signal") == 0) {
		snprintf(buf, len,
		    "signal %" PRIu32 " (%s) to pid %" PRIu64
		    ", si_code %" PRId64 ", from %s%" PRIu64,
		    s->op, strsignal((int)s->op), a[2], (int64_t)a[0],
		    a[1] == 0 ? "the kernel or unknown, pid " : "pid ", a[1]);
		return 1;
	}
	return 0;
}

/* One sample: when, who, what, then its stack. */
static void
show_sample(const struct vitals_epoch *e, const char *vital,
    const struct vitals_sample *s)
{
	char what[256], when[64];

	cli_fmt_time(s->ts_ns, 1, when, sizeof when);
	printf("    %s  pid %" PRIu32 "/%" PRIu32 "  uid %" PRIu32
	       "  comm %s  exe %s\n",
	    when, s->pid, s->tid, s->uid, cli_dash(s->comm), cli_dash(s->exe));
	printf("      label 0x%" PRIx64 "  weight %" PRIu64 "  count %" PRIu64
	       "  op %" PRIu32 "  args %" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 "\n",
	    s->label, s->weight, s->count, s->op, s->args[0], s->args[1],
	    s->args[2], s->args[3]);
	if (show_what(vital, s, what, sizeof(what)))
		printf("      %s\n", what);
	show_stack(e, s);
}

/* Up to n samples, the largest counts first. */
static int
show_samples(
    const struct vitals_epoch *e, const struct vitals_vital_epoch *v, size_t n)
{
	const struct vitals_sample **sv;
	uint32_t i;

	if (n == 0)
		return 0;
	if ((sv = calloc(v->nsamples + 1, sizeof *sv)) == NULL)
		return -ENOMEM;
	for (i = 0; i < v->nsamples; i++)
		sv[i] = &v->samples[i];
	qsort(sv, v->nsamples, sizeof *sv, show_cmp_sample);
	printf("  SAMPLES (%zu of %" PRIu32 ")\n",
	    n < v->nsamples ? n : (size_t)v->nsamples, v->nsamples);
	for (i = 0; i < v->nsamples && i < n; i++)
		show_sample(e, v->name, sv[i]);
	free(sv);
	return 0;
}

/* The findings (only those about vital, when it is set). */
static void
show_findings(const struct vitals_epoch *e, const char *vital)
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
		    cli_severity_name(f->severity), cli_dash(f->filter),
		    cli_dash(f->vital), cli_dash(f->label), f->score, f->value,
		    f->expected, f->timescale_s);
		printf("      %s\n", cli_dash(f->text));
		n++;
	}
	if (n == 0)
		printf("  (none)\n");
}

/* The named metrics (probes' time series): mean, min, max, last, n. */
static void
show_metrics(const struct vitals_epoch *e)
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
		    m->name, cli_dash(m->unit), m->mean, m->min, m->max,
		    m->last, m->n);
	}
}

/* The modules user frames and exes refer to: id, build-id, path. */
static void
show_modules(const struct vitals_epoch *e)
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
		    cli_dash(m->build_id), cli_dash(m->path));
	}
}

/* One vital in full: counts, top labels, samples. */
static int
show_vital(const struct vitals_epoch *e, const struct vitals_vital_epoch *v,
    const struct show_opts *o)
{
	int rc;

	show_counts(v);
	if ((rc = show_top(v, o->top)) < 0)
		return rc;
	return show_samples(e, v, o->nsamples);
}

/* The whole epoch as text. */
static int
show_text(
    const struct vitals_epoch *e, const char *path, const struct show_opts *o)
{
	const struct vitals_vital_epoch **v;
	uint32_t i;
	int rc = 0;

	if ((v = cli_vitals_sorted(e, 0)) == NULL)
		return -ENOMEM;
	show_header(e, path, v);
	for (i = 0; i < e->nvitals && rc == 0; i++) {
		if (o->vital == NULL || strcmp(v[i]->name, o->vital) == 0)
			rc = show_vital(e, v[i], o);
	}
	if (rc == 0 && o->vital == NULL)
		show_metrics(e);
	if (rc == 0 && o->vital == NULL)
		show_modules(e);
	if (rc == 0)
		show_findings(e, o->vital);
	free(v);
	return rc;
}

/* The whole epoch as JSON, in format 1 (the API's, every sample whole). */
static int
show_json(const struct vitals_epoch *e)
{
	json_t *j;
	char *text;
	size_t len;
	int rc;

	if ((rc = codec_text_encode(e, &text, &len)) != 0)
		return rc;
	/* Read back to be printed indented, as cli_print_json prints. */
	j = json_loadb(text, len, 0, NULL);
	free(text);
	if (j == NULL)
		return -ENOMEM;
	rc = cli_print_json(j);
	json_decref(j);
	return rc;
}

/* ---- picking the epoch ---- */

/*
 * Index of the most recent entry below `below` whose local start begins
 * with prefix ("" matches every entry); 0 or -ENOENT.
 */
static int
show_pick_time(const struct cli_selection *s, const char *prefix, size_t below,
    size_t *out)
{
	char when[64], want[64], *sp;
	size_t i, n;

	snprintf(want, sizeof want, "%s", prefix);
	/* Accept "2026-11-22 00:15" for "2026-11-22T00:15". */
	if ((sp = strchr(want, ' ')) != NULL)
		*sp = 'T';
	n = strlen(want);
	for (i = below; i-- > 0;) {
		cli_fmt_time(s->v[i]->start_ns, 1, when, sizeof when);
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
show_pick_index(const struct cli_selection *s, const char *arg, size_t *out)
{
	long long k;

	if (!show_is_index(arg))
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
show_is_path(const char *arg)
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

	if ((rc = cli_epoch_load(path, what, e)) < 0)
		return rc;
	if ((*pathp = strdup(path)) == NULL) {
		vitals_epoch_free(*e);
		cli_msg("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/*
 * The most recent readable epoch whose start begins with prefix; files that
 * do not load are reported and skipped.  CLI_EXIT_OK or CLI_EXIT_RUNTIME.
 */
static int
show_newest(const struct cli_selection *s, const char *prefix, const char *dir,
    struct vitals_epoch **e, char **path)
{
	size_t i, cur = s->n, tried = 0;

	while (show_pick_time(s, prefix, cur, &i) == 0) {
		if (show_load(s->v[i]->path, "skipping ", e, path) == 0)
			return CLI_EXIT_OK;
		cur = i;
		tried++;
	}
	if (tried == 0)
		cli_msg("no epoch matches '%s' (%zu epochs under %s)", prefix,
		    s->n, dir);
	else if (*prefix != '\0')
		cli_msg("no readable epoch matches '%s' under %s", prefix, dir);
	else
		cli_msg("no readable epochs under %s", dir);
	return CLI_EXIT_RUNTIME;
}

/*
 * Load the epoch o names from the store: an index exactly, else the newest
 * readable match of a time prefix (or of all, by default and for --last).
 */
static int
show_from_store(struct cli *cli, const struct show_opts *o,
    struct vitals_epoch **e, char **path)
{
	struct cli_selection s;
	size_t i;
	int rc, r;

	if ((rc = cli_data_dir(cli)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_select(&s, cli->data_dir, o->host)) != CLI_EXIT_OK)
		return rc;
	r = o->epoch != NULL ? show_pick_index(&s, o->epoch, &i) : -ENOENT;
	if (r == 0)
		rc = show_load(s.v[i]->path, "", e, path) == 0
		    ? CLI_EXIT_OK
		    : CLI_EXIT_RUNTIME;
	else if (r == -ERANGE) {
		cli_msg("no epoch %s (%zu epochs under %s)", o->epoch, s.n,
		    cli->data_dir);
		rc = CLI_EXIT_RUNTIME;
	} else
		rc = show_newest(&s, o->epoch != NULL ? o->epoch : "",
		    cli->data_dir, e, path);
	cli_selection_free(&s);
	return rc;
}

/* ---- the command ---- */

/* Set o->epoch from a positional argument (NULL for --last); only one. */
static int
show_set_epoch(struct cli *cli, struct show_opts *o, const char *val)
{
	if (o->epoch != NULL || o->last)
		return cli_usage_error(cli, "show: more than one EPOCH");
	o->epoch = val;
	o->last = val == NULL;
	return CLI_EXIT_OK;
}

/* Parse one option of `vitals show`. */
static int
show_opt(
    struct cli *cli, struct show_opts *o, int id, const char *val, int *done)
{
	switch (id) {
	case CLI_POS:
		return show_set_epoch(cli, o, val);
	case CO_LAST:
		return show_set_epoch(cli, o, NULL);
	case CO_JSON:
		o->json = 1;
		return CLI_EXIT_OK;
	case CO_HOST:
		o->host = val;
		return CLI_EXIT_OK;
	case CO_VITAL:
		o->vital = val;
		return CLI_EXIT_OK;
	case CO_SLOTS:
		if (cli_parse_count(val, &o->top) < 0)
			return cli_usage_error(cli, "bad --top %s", val);
		return CLI_EXIT_OK;
	case CO_SAMPLES:
		if (cli_parse_count(val, &o->nsamples) < 0)
			return cli_usage_error(cli, "bad --samples %s", val);
		return CLI_EXIT_OK;
	}
	return cli_opt(cli, id, val, done);
}

/* Parse the arguments of `vitals show`. */
static int
show_args(struct cli *cli, struct cli_args *a, struct show_opts *o, int *done)
{
	const char *val;
	int id, rc = CLI_EXIT_OK;

	while (rc == CLI_EXIT_OK && !*done &&
	    (id = cli_next(a, &val)) != CLI_END) {
		if (id == CLI_ERR)
			return cli_usage_error(cli, "show: %s", a->err);
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
		cli_msg("no vital %s in %s", o->vital, path);
		return CLI_EXIT_RUNTIME;
	}
	rc = o->json ? show_json(e) : show_text(e, path, o);
	if (rc < 0) {
		cli_msg("%s", strerror(-rc));
		return CLI_EXIT_RUNTIME;
	}
	return CLI_EXIT_OK;
}

/* `vitals show`: one epoch in detail. */
static int
show_run(struct cli *cli, struct cli_args *a)
{
	struct show_opts o = { .top = 5, .nsamples = 5 };
	struct vitals_epoch *e;
	char *path = NULL;
	int done = 0, rc;

	if ((rc = show_args(cli, a, &o, &done)) != CLI_EXIT_OK || done)
		return rc;
	if (show_is_path(o.epoch))
		rc = show_load(o.epoch, "", &e, &path) == 0 ? CLI_EXIT_OK
							    : CLI_EXIT_RUNTIME;
	else
		rc = show_from_store(cli, &o, &e, &path);
	if (rc != CLI_EXIT_OK)
		return rc;
	rc = show_epoch(e, path, &o);
	vitals_epoch_free(e);
	free(path);
	return rc;
}

/* The command's entry in cli/main.c's table. */
const struct cli_cmd show_cmd = {
	.name = "show",
	.usage = "  show [EPOCH | --last] [--json] [--host H] [--vital NAME] "
		 "[--top N]\n"
		 "       [--samples N]\n"
		 "      show one epoch; EPOCH is a file, an index (0 is the "
		 "first, -1\n"
		 "      the last) or a local start time prefix "
		 "(2026-11-22T00:15: the\n"
		 "      most recent match); default and --last: the newest "
		 "readable\n",
	.flag = CLI_SHOW,
	.run = show_run,
};
