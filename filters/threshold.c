/* SPDX-License-Identifier: MIT */
/*
 * threshold: admin-set bounds on a vital's events, weighted sum, unique
 * labels or dropped events, for the whole vital or for one exe's share,
 * e.g. "diskio.wsum > 100M" or "sched.wsum@/usr/bin/ssh > 50ms".  Values
 * are per nominal base epoch, so a rule reads the same at every timescale.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/vitals.h>

#include "incident.h"
#include "labels.h"

#define THRESHOLD_EVENTS 0
#define THRESHOLD_WSUM 1
#define THRESHOLD_UNIQUE 2
#define THRESHOLD_DROPPED 3

#define THRESHOLD_GT 0
#define THRESHOLD_GE 1
#define THRESHOLD_LT 2
#define THRESHOLD_LE 3

struct threshold_config {
	struct vitals_strlist rules; /* "VITAL.FIELD[@EXE] OP VALUE [SEV]" */
	char *severity; /* default severity of a finding */
};

#define THRESHOLD_OFF(m) offsetof(struct threshold_config, m)

/* clang-format off */
static const struct vitals_option threshold_options[] = {
	{ .key = "rules", .type = VITALS_OPT_STRLIST,
	    .offset = THRESHOLD_OFF(rules), .def = NULL,
	    .help = "bounds, each 'VITAL.FIELD[@EXE] OP VALUE [SEVERITY]' "
	    "with FIELD events|wsum|unique|dropped, OP > >= < <=, VALUE per "
	    "base epoch with K/M/G/T or ns/us/ms/s/m/h suffix, "
	    "e.g. 'sched.wsum@/usr/bin/ssh > 50ms crit'" },
	{ .key = "severity", .type = VITALS_OPT_STRING,
	    .offset = THRESHOLD_OFF(severity), .def = "warn",
	    .help = "severity of a violation: info, warn or crit "
	    "(a rule's own SEVERITY wins)" },
	{ .key = NULL }
};
/* clang-format on */

static const char *const threshold_fields[] = { "events", "wsum", "unique",
	"dropped" };
static const char *const threshold_field_text[] = { "events", "weighted sum",
	"unique labels", "dropped events" };
static const char *const threshold_ops[] = { ">", ">=", "<", "<=" };
static const char *const threshold_sevs[] = { "info", "warn", "crit" };

/* The contract's vitals that do not weigh time (ns). */
static const char *const threshold_untimed[] = { "cpu", "cache", "diskio",
	"umem", "kmem", "kmem_free", "syscall", "signal", "socket" };

struct threshold_rule {
	char *text; /* as written */
	char *vital;
	char *exe; /* NULL: the whole vital */
	int field; /* THRESHOLD_EVENTS... */
	int op; /* THRESHOLD_GT... */
	int timed; /* the bound had a duration suffix */
	double bound;
	uint32_t severity;
	int warned; /* absent vital or unit mismatch logged */
};

struct threshold {
	struct vitals_ctx *ctx;
	uint64_t base_ns; /* nominal base epoch */
	uint32_t nrules;
	struct threshold_rule *rules;
	struct incidents inc; /* a bound crossed: one incident until back */
	const struct vitals_queue *q; /* the queue being looked at */
};

static int
threshold_lookup(const char *tok, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(tok, names[i]) == 0)
			return i;
	return -1;
}

/* VALUE: a number with an optional size (x1024^n) or time (ns) suffix. */
static int
threshold_value(const char *tok, double *out, int *timed)
{
	static const char *const suf[] = { "", "K", "k", "M", "G", "T", "ns",
		"us", "ms", "s", "m", "h" };
	static const double mul[] = { 1, 1024.0, 1024.0, 1048576.0,
		1073741824.0, 1099511627776.0, 1, 1e3, 1e6, 1e9, 60e9, 3600e9 };
	char *end;
	double x = strtod(tok, &end);
	int i;

	if (end == tok || !isfinite(x))
		return -EINVAL;
	if ((i = threshold_lookup(end, suf, 12)) < 0)
		return -EINVAL;
	*out = x * mul[i];
	*timed = i >= 6;
	return 0;
}

/* SUBJECT: VITAL.FIELD[@EXE]. */
static int
threshold_subject(struct threshold_rule *r, char *tok, const char *where,
    char *why, size_t len)
{
	char *at = strchr(tok, '@'), *dot;

	if (at != NULL) {
		*at++ = '\0';
		if (*at == '\0') {
			snprintf(why, len, "%s: empty exe after '@'", where);
			return -EINVAL;
		}
	}
	if ((dot = strrchr(tok, '.')) == NULL || dot == tok) {
		snprintf(why, len,
		    "%s: bad subject '%s' (expected "
		    "VITAL.FIELD or VITAL.FIELD@EXE)",
		    where, tok);
		return -EINVAL;
	}
	*dot++ = '\0';
	if ((r->field = threshold_lookup(dot, threshold_fields, 4)) < 0) {
		snprintf(why, len,
		    "%s: unknown field '%s' (expected events, "
		    "wsum, unique or dropped)",
		    where, dot);
		return -EINVAL;
	}
	if (at != NULL && r->field == THRESHOLD_DROPPED) {
		snprintf(why, len, "%s: field 'dropped' has no per-exe value",
		    where);
		return -EINVAL;
	}
	if ((r->vital = strdup(tok)) == NULL ||
	    (at != NULL && (r->exe = strdup(at)) == NULL))
		return -ENOMEM;
	return 0;
}

/* OP VALUE [SEVERITY], after the subject. */
static int
threshold_bound(struct threshold_rule *r, char *const *tok, int ntok,
    const char *where, char *why, size_t len)
{
	int sev;

	if (ntok < 3) {
		snprintf(why, len, "%s: missing %s", where,
		    ntok < 2 ? "operator" : "value");
		return -EINVAL;
	}
	if ((r->op = threshold_lookup(tok[1], threshold_ops, 4)) < 0) {
		snprintf(why, len,
		    "%s: bad operator '%s' (expected >, >=, < "
		    "or <=)",
		    where, tok[1]);
		return -EINVAL;
	}
	if (threshold_value(tok[2], &r->bound, &r->timed) != 0) {
		snprintf(why, len,
		    "%s: bad value '%s' (a number, optionally "
		    "with K, M, G, T or ns, us, ms, s, m, h)",
		    where, tok[2]);
		return -EINVAL;
	}
	if (ntok > 3 &&
	    (sev = threshold_lookup(tok[3], threshold_sevs, 3)) >= 0)
		r->severity = VITALS_SEV_INFO + (uint32_t)sev;
	if (ntok > 4 || (ntok == 4 && r->severity == 0)) {
		snprintf(why, len,
		    "%s: unexpected '%s' (expected a severity "
		    "info, warn or crit, or nothing)",
		    where, tok[r->severity == 0 ? 3 : 4]);
		return -EINVAL;
	}
	return 0;
}

/* A duration only bounds the weighted sum of a vital that weighs time. */
static int
threshold_units(
    const struct threshold_rule *r, const char *where, char *why, size_t len)
{
	if (!r->timed)
		return 0;
	if (r->field != THRESHOLD_WSUM) {
		snprintf(why, len, "%s: a duration bounds only the wsum field",
		    where);
		return -EINVAL;
	}
	if (threshold_lookup(r->vital, threshold_untimed, 9) >= 0) {
		snprintf(why, len,
		    "%s: vital '%s' does not weigh time, a "
		    "duration cannot bound it",
		    where, r->vital);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse rule i (numbered from 1 in messages) into r, whose strings the
 * caller frees with threshold_rule_free, even on failure.  Returns 0,
 * -ENOMEM, or -EINVAL with the reason in why.
 */
static int
threshold_parse(const char *text, uint32_t i, uint32_t defsev,
    struct threshold_rule *r, char *why, size_t len)
{
	char where[300], *copy, *tok[8], *save = NULL, *t;
	int ntok = 0, rc = -ENOMEM;

	snprintf(where, sizeof(where), "rule %u '%s'", i + 1, text);
	if ((copy = strdup(text)) == NULL || (r->text = strdup(text)) == NULL)
		goto out;
	for (t = strtok_r(copy, " \t", &save); t != NULL && ntok < 8;
	     t = strtok_r(NULL, " \t", &save))
		tok[ntok++] = t;
	rc = -EINVAL;
	if (ntok == 0) {
		snprintf(why, len, "%s: empty rule", where);
		goto out;
	}
	if ((rc = threshold_subject(r, tok[0], where, why, len)) != 0 ||
	    (rc = threshold_bound(r, tok, ntok, where, why, len)) != 0 ||
	    (rc = threshold_units(r, where, why, len)) != 0)
		goto out;
	if (r->severity == 0)
		r->severity = defsev;
out:
	free(copy);
	return rc;
}

/* Whether group e is the exe the rule names: a path, or a base name/comm. */
static int
threshold_exe_match(const char *pat, const struct labels_entry *e)
{
	const char *base = strrchr(e->name, '/');

	if (strchr(pat, '/') != NULL)
		return strcmp(e->name, pat) == 0;
	return strcmp(base != NULL ? base + 1 : e->name, pat) == 0 ||
	    strcmp(e->rep->comm != NULL ? e->rep->comm : "", pat) == 0;
}

/* The per-exe value; *who is the heaviest matching group, or NULL. */
static double
threshold_exe_value(const struct threshold_rule *r,
    const struct vitals_vital_epoch *ve, const struct labels *l,
    const char **who)
{
	double w = 0, nl = 0;
	uint32_t i;

	*who = NULL;
	for (i = 0; i < l->n; i++) {
		if (!threshold_exe_match(r->exe, &l->v[i]))
			continue;
		if (*who == NULL)
			*who = l->v[i].name;
		w += l->v[i].weight;
		nl += l->v[i].nlabels;
	}
	if (r->field == THRESHOLD_UNIQUE)
		return nl;
	if (r->field == THRESHOLD_WSUM)
		return w;
	return ve->wsum > 0 ? (double)ve->events * w / (double)ve->wsum : 0;
}

static double
threshold_vital_value(
    const struct threshold_rule *r, const struct vitals_vital_epoch *ve)
{
	switch (r->field) {
	case THRESHOLD_EVENTS:
		return (double)ve->events;
	case THRESHOLD_WSUM:
		return (double)ve->wsum;
	case THRESHOLD_UNIQUE:
		return (double)ve->unique;
	}
	return (double)ve->dropped;
}

static int
threshold_violated(const struct threshold_rule *r, double x)
{
	switch (r->op) {
	case THRESHOLD_GT:
		return x > r->bound;
	case THRESHOLD_GE:
		return x >= r->bound;
	case THRESHOLD_LT:
		return x < r->bound;
	}
	return x <= r->bound;
}

/* "7200 samples" / "80.0 ms" for a weighted sum, else a plain count. */
static const char *
threshold_fmt(const struct threshold_rule *r,
    const struct vitals_vital_epoch *ve, double x, char *buf, size_t len)
{
	if (r->field == THRESHOLD_WSUM)
		return labels_fmt(x, ve->unit, buf, len);
	snprintf(buf, len, "%.0f", x);
	return buf;
}

/* One sentence: what was measured, the bound, who is responsible. */
static void
threshold_text(const struct threshold *t, const struct threshold_rule *r,
    const struct vitals_vital_epoch *ve, double x, const char *who,
    double share, char *text, size_t len)
{
	char val[48], bound[48], whose[300] = "", per[40] = "";
	int above = r->op == THRESHOLD_GT || r->op == THRESHOLD_GE;

	if (r->exe != NULL)
		snprintf(
		    whose, sizeof(whose), " of %s", who != NULL ? who : r->exe);
	if (r->field != THRESHOLD_UNIQUE) /* the others are scaled */
		snprintf(
		    per, sizeof(per), " per %g s", (double)t->base_ns / 1e9);
	snprintf(text, len, "%s %s%s was %s%s, %s the bound %s of rule %u (%s)",
	    ve->name, threshold_field_text[r->field], whose,
	    threshold_fmt(r, ve, x, val, sizeof(val)), per,
	    above ? "above" : "below",
	    threshold_fmt(r, ve, r->bound, bound, sizeof(bound)),
	    (unsigned)(r - t->rules) + 1, r->text);
	if (r->exe == NULL && who != NULL && above)
		snprintf(text + strlen(text), len - strlen(text),
		    "; %s had %.0f%% of the vital's weight", who, 100 * share);
	if (r->exe != NULL && who == NULL)
		snprintf(text + strlen(text), len - strlen(text),
		    "; %s was not seen", r->exe);
}

/*
 * A crossed bound is the administrator's own word: an incident at once,
 * at the rule's severity, said again only when it doubles; the end is
 * said when the value is back within the bound.
 */
static int
threshold_emit(struct threshold *t, const struct vitals_queue *q,
    const struct threshold_rule *r, const struct vitals_vital_epoch *ve,
    double x, const struct labels *l, const char *who)
{
	struct vitals_finding f = { 0 };
	struct incident_out o;
	char text[1200], key[32], tm[16];
	double share = 0;

	if (r->exe == NULL && l->n > 0 && l->total > 0) {
		who = l->v[0].name;
		share = l->v[0].weight / l->total;
	}
	snprintf(key, sizeof(key), "%u", (unsigned)(r - t->rules));
	if (incident_step(&t->inc, q, key, ve->name, r->text, 1,
		fabs(x - r->bound) + 1, r->severity, 1, &o) != 0)
		return -ENOMEM;
	if (o.what != INCIDENT_START && o.what != INCIDENT_UPDATE)
		return 0;
	threshold_text(t, r, ve, x, who, share, text, sizeof(text));
	if (o.what == INCIDENT_UPDATE)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		    "; crossed since %s (%u epochs)",
		    incident_time(o.start_ns, tm, sizeof(tm)), o.epochs);
	f.start_ns = o.start_ns;
	f.severity = o.severity;
	f.score = fabs(x - r->bound) / fmax(fabs(r->bound), 1);
	f.value = x;
	f.expected = r->bound;
	f.vital = ve->name;
	f.label = r->exe != NULL
	    ? (who != NULL ? who : r->exe)
	    : (r->op == THRESHOLD_GT || r->op == THRESHOLD_GE ? who : NULL);
	f.text = text;
	return vitals_queue_emit(t->ctx, q, &f);
}

/* A rule on a vital this epoch lacks, or of the wrong unit: said once. */
static int
threshold_skip(struct threshold *t, struct threshold_rule *r,
    const struct vitals_vital_epoch *ve)
{
	if (ve != NULL && (!r->timed || strcmp(ve->unit, "ns") == 0))
		return 0;
	if (!r->warned)
		vitals_log(t->ctx, VITALS_LOG_INFO,
		    ve == NULL ? "rule %u (%s): vital '%s' absent, not checked"
			       : "rule %u (%s): vital '%s' does not weigh "
				 "time, not checked",
		    (unsigned)(r - t->rules) + 1, r->text, r->vital);
	r->warned = 1;
	return 1;
}

/* Rule r on the newest epoch of q: a finding if it is violated. */
static int
threshold_eval(
    struct threshold *t, const struct vitals_queue *q, struct threshold_rule *r)
{
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	const struct vitals_vital_epoch *ve = vitals_epoch_vital(ep, r->vital);
	struct labels_how how = { LABELS_BY_EXE, labels_runs(ep, t->base_ns),
		NULL, NULL };
	struct labels l = { 0 };
	const char *who = NULL;
	double x, scale = labels_scale(ep, t->base_ns);
	int rc;

	if (threshold_skip(t, r, ve))
		return 0;
	if ((r->exe != NULL || r->op <= THRESHOLD_GE) &&
	    (rc = labels_collect(ve, &how, &l)) != 0)
		return rc;
	x = r->exe != NULL ? threshold_exe_value(r, ve, &l, &who)
			   : threshold_vital_value(r, ve);
	if (r->field != THRESHOLD_UNIQUE)
		x *= scale;
	rc = threshold_violated(r, x) ? threshold_emit(t, q, r, ve, x, &l, who)
				      : 0;
	labels_free(&l);
	return rc;
}

/* A bound no longer crossed: the end of its incident, at info. */
static int
threshold_end(
    void *arg, const struct incident *in, const struct incident_out *o)
{
	struct threshold *t = arg;
	char text[768], tm[16];
	unsigned i = (unsigned)atoi(in->key);

	snprintf(text, sizeof(text),
	    "%s: back within the bound of rule %u (%s), crossed since %s for "
	    "%u epochs",
	    in->vital ? in->vital : "", i + 1, in->label ? in->label : "",
	    incident_time(o->start_ns, tm, sizeof(tm)), o->epochs);
	return vitals_queue_emit(t->ctx, t->q,
	    &(struct vitals_finding){ .start_ns = o->start_ns,
		.severity = VITALS_SEV_INFO,
		.vital = in->vital,
		.label = i < t->nrules ? t->rules[i].exe : NULL,
		.text = text });
}

static int
threshold_epoch(void *state, const struct vitals_queue *q)
{
	struct threshold *t = state;
	uint32_t i;
	int rc = 0;

	t->q = q;
	for (i = 0; i < t->nrules; i++)
		if (threshold_eval(t, q, &t->rules[i]) != 0)
			rc = -ENOMEM;
	if (incident_sweep(&t->inc, q, threshold_end, t) != 0)
		rc = -ENOMEM;
	return rc;
}

/* Free the strings of rule r, parsed or half-parsed. */
static void
threshold_rule_free(struct threshold_rule *r)
{
	free(r->text);
	free(r->vital);
	free(r->exe);
}

static void
threshold_fini(void *state)
{
	struct threshold *t = state;
	uint32_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrules; i++)
		threshold_rule_free(&t->rules[i]);
	free(t->rules);
	incident_free(&t->inc);
	free(t);
}

/* The `severity` option as a VITALS_SEV_*, or 0 if it names none. */
static uint32_t
threshold_defsev(const struct threshold_config *cf)
{
	int sev = threshold_lookup(
	    cf->severity ? cf->severity : "warn", threshold_sevs, 3);

	return sev < 0 ? 0 : VITALS_SEV_INFO + (uint32_t)sev;
}

/* A severity, and rules that all parse (each parsed, then dropped). */
static int
threshold_check(const void *config, char *why, size_t len)
{
	const struct threshold_config *cf = config;
	uint32_t i, sev = threshold_defsev(cf);
	struct threshold_rule r;
	int rc = 0;

	if (sev == 0) {
		snprintf(why, len,
		    "option 'severity': '%s' is not info, warn "
		    "or crit",
		    cf->severity);
		return -EINVAL;
	}
	if (cf->rules.n == 0) {
		snprintf(why, len, "option 'rules' is empty: nothing to check");
		return -EINVAL;
	}
	for (i = 0; i < cf->rules.n && rc == 0; i++) {
		memset(&r, 0, sizeof(r));
		rc = threshold_parse(cf->rules.v[i], i, sev, &r, why, len);
		threshold_rule_free(&r);
	}
	return rc;
}

static int
threshold_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct threshold_config *cf = config;
	struct threshold *t;
	uint32_t i;
	int rc;

	t = vitals_init_state(ctx, threshold_check, config, sizeof(*t), &rc);
	if (t == NULL)
		return rc;
	if ((t->rules = calloc(cf->rules.n, sizeof(*t->rules))) == NULL) {
		free(t);
		return -ENOMEM;
	}
	t->ctx = ctx;
	t->base_ns = vitals_settings(ctx)->epoch_ns;
	t->inc.k = 1;
	for (i = 0; i < cf->rules.n; i++, t->nrules++) {
		/* Checked above: only memory can run out here. */
		rc = threshold_parse(cf->rules.v[i], i, threshold_defsev(cf),
		    &t->rules[i], NULL, 0);
		if (rc != 0) {
			t->nrules++; /* so fini frees its parts */
			threshold_fini(t);
			return rc;
		}
	}
	*state = t;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct threshold_config),
	.name = "threshold",
	.version = "0.1.0",
	.description = "admin-set bounds on vitals, whole or per exe",
	.options = threshold_options,
	.init = threshold_init,
	.fini = threshold_fini,
	.epoch = threshold_epoch,
	.check = threshold_check,
};
