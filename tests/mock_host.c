/* SPDX-License-Identifier: MIT */
/*
 * A mock core: the SDK services of <vitals/vitals.h> with recording
 * behaviour, so one plugin can be linked with its test and nothing else.
 * Not thread-safe; state is global until mock_reset.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <vitals/hash.h>

#include "mock_host.h"
#include "option.h"

#define MOCK_VITALS 32
#define MOCK_TIMERS 16
#define MOCK_WATCHES 16

struct vitals_ctx {
	char name[64];
};

struct vitals_vital {
	char name[64];
	char unit[32];
	uint64_t events, wsum, digest, bad, overflow, samples;
	unsigned nlabels;
	struct mock_label *labels; /* MOCK_LABELS, open addressing */
};

struct vitals_timer {
	int live;
	uint64_t interval_ns;
	void (*cb)(void *arg);
	void *arg;
};

/* The mock's monotonic clock, advanced by mock_timer_fire. */
static uint64_t mock_clock_ns = 1000000000ULL;

struct vitals_watch {
	int live;
	int fd;
	void (*cb)(int fd, void *arg);
	void *arg;
};

static struct vitals_ctx mock_the_ctx;
static const struct vitals_settings mock_settings = {
	.host = "mockhost",
	.data_dir = "/nonexistent",
	.epoch_ns = 60000000000ULL,
};
static struct vitals_vital *mock_vitals[MOCK_VITALS];
static unsigned mock_nvital;
static struct vitals_timer mock_timers[MOCK_TIMERS];
static struct vitals_watch mock_watches[MOCK_WATCHES];
static struct vitals_finding *mock_findings;
static unsigned mock_nfinding;
static char mock_error[512], mock_log[512];
static char mock_why[512]; /* the reason of the last mock_check */
static unsigned mock_nerror, mock_nlog;
static uint64_t mock_cpu;
static struct mock_metric mock_metrics[MOCK_METRICS];
static unsigned mock_nmetric, mock_nrefused;

static uint64_t
mock_hash_str(uint64_t h, const char *s)
{
	if (s == NULL)
		return vitals_hash_mix64(h ^ 0x5a5a);
	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return vitals_hash_mix64(h);
}

static uint64_t
mock_hash_frames(uint64_t h, const uint64_t *f, uint32_t n)
{
	uint32_t i;

	for (i = 0; f != NULL && i < n; i++)
		h = vitals_hash_mix64(h ^ f[i]);
	return vitals_hash_mix64(h ^ n);
}

struct vitals_ctx *
mock_ctx(const char *name)
{
	snprintf(mock_the_ctx.name, sizeof(mock_the_ctx.name), "%s",
	    name != NULL ? name : "mock");
	return &mock_the_ctx;
}

void
mock_reset(void)
{
	unsigned i;

	for (i = 0; i < mock_nvital; i++) {
		free(mock_vitals[i]->labels);
		free(mock_vitals[i]);
		mock_vitals[i] = NULL;
	}
	mock_nvital = 0;
	memset(mock_timers, 0, sizeof(mock_timers));
	memset(mock_watches, 0, sizeof(mock_watches));
	mock_findings_clear();
	mock_series_clear();
	mock_error[0] = mock_log[0] = mock_why[0] = '\0';
	mock_nerror = mock_nlog = 0;
	mock_cpu = 0;
	mock_metrics_clear();
}

/* ---- option defaults and values: the core's own option.c ---- */

void *
mock_config_new(const struct vitals_plugin *p)
{
	char err[512];
	void *block;

	if ((block = calloc(1, p->config_size ? p->config_size : 1)) == NULL)
		return NULL;
	if (option_fill(p->options, block, NULL, 0, "mock", err, sizeof(err)) !=
	    0) {
		fprintf(stderr, "mock: %s\n", err);
		mock_config_free(p, block);
		return NULL;
	}
	return block;
}

int
mock_config_set(const struct vitals_plugin *p, void *block, const char *key,
    const char *value)
{
	const struct vitals_option *o = option_find(p->options, key);
	struct vitals_option unbounded;

	if (o == NULL)
		return -EINVAL;
	/* Without bounds: a test hands the plugin what the core refuses. */
	unbounded = *o;
	unbounded.min = unbounded.max = 0;
	return option_set(&unbounded, block, value);
}

int
mock_config_set_list(const struct vitals_plugin *p, void *block,
    const char *key, char *const *items, uint32_t n)
{
	const struct vitals_option *o = option_find(p->options, key);

	return o != NULL ? option_set_list(o, block, items, n) : -EINVAL;
}

void
mock_config_free(const struct vitals_plugin *p, void *block)
{
	option_free(p->options, block);
	free(block);
}

/* ---- logging and errors ---- */

const struct vitals_settings *
vitals_settings(const struct vitals_ctx *ctx)
{
	(void)ctx;
	return &mock_settings;
}

void
vitals_log(struct vitals_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(mock_log, sizeof(mock_log), fmt, ap);
	va_end(ap);
	mock_nlog++;
	if (getenv("MOCK_VERBOSE") != NULL)
		fprintf(stderr, "log %d: %s\n", level, mock_log);
}

void
vitals_error(struct vitals_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	va_start(ap, fmt);
	vsnprintf(mock_error, sizeof(mock_error), fmt, ap);
	va_end(ap);
	mock_nerror++;
	if (getenv("MOCK_VERBOSE") != NULL)
		fprintf(stderr, "error: %s\n", mock_error);
}

const char *
mock_last_error(void)
{
	return mock_error;
}

unsigned
mock_nerrors(void)
{
	return mock_nerror;
}

int
mock_check(const struct vitals_plugin *p, const void *block)
{
	mock_why[0] = '\0';
	if (p->abi_minor < 3 || p->check == NULL)
		return 0;
	return p->check(block, mock_why, sizeof(mock_why));
}

const char *
mock_check_why(void)
{
	return mock_why;
}

unsigned
mock_nlogs(void)
{
	return mock_nlog;
}

const char *
mock_last_log(void)
{
	return mock_log;
}

/* ---- vitals: counting sketches ---- */

static struct vitals_vital *
mock_vital_find(const char *name)
{
	unsigned i;

	for (i = 0; name != NULL && i < mock_nvital; i++)
		if (strcmp(mock_vitals[i]->name, name) == 0)
			return mock_vitals[i];
	return NULL;
}

int
vitals_vital_open(struct vitals_ctx *ctx, const char *name, const char *unit,
    struct vitals_vital **out)
{
	struct vitals_vital *v;

	(void)ctx;
	if (name == NULL || *name == '\0' || unit == NULL)
		return -EINVAL;
	if ((v = mock_vital_find(name)) != NULL) {
		if (strcmp(v->unit, unit) != 0)
			return -EINVAL;
		*out = v;
		return 0;
	}
	if (mock_nvital == MOCK_VITALS)
		return -ENOSPC;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return -ENOMEM;
	if ((v->labels = calloc(MOCK_LABELS, sizeof(*v->labels))) == NULL) {
		free(v);
		return -ENOMEM;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->unit, sizeof(v->unit), "%s", unit);
	mock_vitals[mock_nvital++] = v;
	*out = v;
	return 0;
}

/* The label's record, created empty if there is room; NULL if full. */
static struct mock_label *
mock_label_slot(struct vitals_vital *v, uint64_t label, int create)
{
	uint64_t h = vitals_hash_mix64(label);
	struct mock_label *l;
	unsigned i;

	for (i = 0; i < MOCK_LABELS; i++) {
		l = &v->labels[(h + i) & (MOCK_LABELS - 1)];
		if (l->events > 0 && l->label == label)
			return l;
		if (l->events == 0)
			return create ? l : NULL;
	}
	return NULL;
}

static int
mock_event_bad(const struct vitals_event *ev)
{
	return ev->weight == 0 || ev->nkstack > VITALS_STACK_MAX ||
	    ev->nustack > VITALS_STACK_MAX ||
	    (ev->nkstack > 0 && ev->kstack == NULL) ||
	    (ev->nustack > 0 && ev->ustack == NULL) || ev->pad != 0 ||
	    (ev->comm != NULL && strlen(ev->comm) >= VITALS_COMM_LEN);
}

static void
mock_label_first(
    struct mock_label *l, const struct vitals_event *ev, uint64_t stack)
{
	l->label = ev->label;
	l->wmin = ev->weight;
	l->exe_id = ev->exe_id;
	l->uid = ev->uid;
	l->pid = ev->pid;
	l->tid = ev->tid;
	l->nkstack = ev->nkstack;
	l->nustack = ev->nustack;
	l->stack_hash = stack;
	l->kstack0 = ev->nkstack > 0 ? ev->kstack[0] : 0;
	l->ustack0 = ev->nustack > 0 ? ev->ustack[0] : 0;
	snprintf(l->exe, sizeof(l->exe), "%s", ev->exe ? ev->exe : "");
	snprintf(l->comm, sizeof(l->comm), "%s", ev->comm ? ev->comm : "");
}

static void
mock_label_count(
    struct vitals_vital *v, const struct vitals_event *ev, uint64_t stack)
{
	struct mock_label *l = mock_label_slot(v, ev->label, 1);

	if (l == NULL) {
		v->overflow++;
		return;
	}
	if (l->events++ == 0) {
		mock_label_first(l, ev, stack);
		v->nlabels++;
	} else if (l->stack_hash != stack) {
		l->stack_changes++;
	}
	l->wsum += ev->weight;
	if (ev->weight < l->wmin)
		l->wmin = ev->weight;
	if (ev->weight > l->wmax)
		l->wmax = ev->weight;
}

int
vitals_emit(struct vitals_vital *v, const struct vitals_event *ev)
{
	uint64_t d, stack;

	if (ev == NULL || mock_event_bad(ev)) {
		v->bad++;
		return 0;
	}
	stack = mock_hash_frames(mock_hash_frames(0, ev->kstack, ev->nkstack),
	    ev->ustack, ev->nustack);
	d = vitals_hash_mix64(v->digest ^ ev->ts_ns) ^ ev->label;
	d = vitals_hash_mix64(d ^ ev->weight) ^
	    ((uint64_t)ev->exe_id << 32 | ev->uid);
	d = vitals_hash_mix64(d ^ ((uint64_t)ev->pid << 32 | ev->tid)) ^ ev->op;
	d = vitals_hash_mix64(
	    d ^ ev->args[0] ^ ev->args[1] ^ ev->args[2] ^ ev->args[3]);
	d = mock_hash_str(mock_hash_str(d ^ stack, ev->exe), ev->comm);
	v->digest = d;
	v->events++;
	v->wsum += ev->weight;
	mock_label_count(v, ev, stack);
	return 0;
}

uint64_t
vitals_vital_threshold(const struct vitals_vital *v)
{
	(void)v;
	return 2;
}

uint64_t
vitals_vital_floor(const struct vitals_vital *v)
{
	(void)v;
	return 0;
}

uint32_t
vitals_vital_hca_size(const struct vitals_vital *v)
{
	(void)v;
	return 256;
}

int
vitals_vital_load(struct vitals_vital *v, const uint64_t *hca, uint32_t m,
    uint64_t events, uint64_t wsum, uint64_t dropped)
{
	(void)dropped;
	if (hca == NULL || m != vitals_vital_hca_size(v))
		return -EINVAL;
	v->events += events;
	v->wsum += wsum;
	return 0;
}

int
vitals_vital_sample(
    struct vitals_vital *v, const struct vitals_event *ev, uint64_t count)
{
	(void)ev;
	(void)count;
	v->samples++;
	return 1;
}

uint64_t
vitals_label_hash(uint64_t label, uint32_t exe_id, uint32_t uid)
{
	return vitals_hash_label(label, exe_id, uid);
}

void
vitals_cpu_add(struct vitals_ctx *ctx, uint64_t ns)
{
	(void)ctx;
	mock_cpu += ns;
}

uint64_t
mock_cpu_ns(void)
{
	return mock_cpu;
}

unsigned
mock_nvitals(void)
{
	return mock_nvital;
}

const char *
mock_vital_name(unsigned i)
{
	return i < mock_nvital ? mock_vitals[i]->name : NULL;
}

const char *
mock_vital_unit(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->unit : NULL;
}

uint64_t
mock_vital_events(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->events : 0;
}

uint64_t
mock_vital_wsum(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->wsum : 0;
}

uint64_t
mock_vital_digest(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->digest : 0;
}

uint64_t
mock_vital_bad(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->bad : 0;
}

unsigned
mock_vital_nlabels(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->nlabels : 0;
}

uint64_t
mock_vital_overflow(const char *vital)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? v->overflow : 0;
}

const struct mock_label *
mock_label(const char *vital, uint64_t label)
{
	struct vitals_vital *v = mock_vital_find(vital);

	return v != NULL ? mock_label_slot(v, label, 0) : NULL;
}

/* ---- timers and watches: recorded, fired by the test ---- */

int
vitals_timer_add(struct vitals_ctx *ctx, uint64_t interval_ns,
    void (*cb)(void *arg), void *arg, struct vitals_timer **out)
{
	unsigned i;

	(void)ctx;
	if (interval_ns == 0 || cb == NULL)
		return -EINVAL;
	for (i = 0; i < MOCK_TIMERS; i++) {
		if (!mock_timers[i].live) {
			mock_timers[i] =
			    (struct vitals_timer){ 1, interval_ns, cb, arg };
			*out = &mock_timers[i];
			return 0;
		}
	}
	return -ENOSPC;
}

void
vitals_timer_del(struct vitals_timer *t)
{
	if (t != NULL)
		t->live = 0;
}

/* The i-th live timer, or NULL. */
static struct vitals_timer *
mock_timer(unsigned i)
{
	unsigned j;

	for (j = 0; j < MOCK_TIMERS; j++)
		if (mock_timers[j].live && i-- == 0)
			return &mock_timers[j];
	return NULL;
}

unsigned
mock_ntimers(void)
{
	unsigned i, n = 0;

	for (i = 0; i < MOCK_TIMERS; i++)
		n += mock_timers[i].live != 0;
	return n;
}

uint64_t
mock_timer_interval(unsigned i)
{
	struct vitals_timer *t = mock_timer(i);

	return t != NULL ? t->interval_ns : 0;
}

int
mock_timer_fire(unsigned i, unsigned times)
{
	struct vitals_timer *t = mock_timer(i);

	if (t == NULL)
		return -1;
	while (times-- > 0 && t->live) {
		mock_clock_ns += t->interval_ns;
		t->cb(t->arg);
	}
	return 0;
}

void
mock_clock_advance(uint64_t ns)
{
	mock_clock_ns += ns;
}

/* Mock time: starts at 1 s and moves when a timer fires or is advanced. */
uint64_t
vitals_monotonic_ns(const struct vitals_ctx *ctx)
{
	(void)ctx;
	return mock_clock_ns;
}

int
vitals_watch_add(struct vitals_ctx *ctx, int fd, void (*cb)(int fd, void *arg),
    void *arg, struct vitals_watch **out)
{
	unsigned i;

	(void)ctx;
	if (fd < 0 || cb == NULL)
		return -EINVAL;
	for (i = 0; i < MOCK_WATCHES; i++) {
		if (!mock_watches[i].live) {
			mock_watches[i] =
			    (struct vitals_watch){ 1, fd, cb, arg };
			*out = &mock_watches[i];
			return 0;
		}
	}
	return -ENOSPC;
}

void
vitals_watch_del(struct vitals_watch *w)
{
	if (w != NULL)
		w->live = 0;
}

unsigned
mock_nwatches(void)
{
	unsigned i, n = 0;

	for (i = 0; i < MOCK_WATCHES; i++)
		n += mock_watches[i].live != 0;
	return n;
}

/* ---- metrics: every observation recorded ---- */

/* The core's rule: dotted parts of [A-Za-z0-9_-], at most 127 bytes. */
static int
mock_metric_name_ok(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n >= sizeof(mock_metrics[0].name) || s[0] == '.' ||
	    s[n - 1] == '.' || strstr(s, "..") != NULL)
		return 0;
	return strspn(s,
		   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		   "0123456789_-.") == n;
}

/* The record of name, created if there is room; NULL if full. */
static struct mock_metric *
mock_metric_slot(const char *name, const char *unit)
{
	struct mock_metric *m;
	unsigned i;

	for (i = 0; i < mock_nmetric; i++)
		if (strcmp(mock_metrics[i].name, name) == 0)
			return &mock_metrics[i];
	if (mock_nmetric == MOCK_METRICS)
		return NULL;
	m = &mock_metrics[mock_nmetric++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	return m;
}

int
vitals_metric_put(
    struct vitals_ctx *ctx, const char *name, const char *unit, double value)
{
	struct mock_metric *m;

	(void)ctx;
	if (!mock_metric_name_ok(name) || unit == NULL ||
	    strlen(unit) >= sizeof(m->unit) || !isfinite(value)) {
		mock_nrefused++;
		return -EINVAL;
	}
	if ((m = mock_metric_slot(name, unit)) == NULL) {
		mock_nrefused++;
		return -ENOSPC;
	}
	if (strcmp(m->unit, unit) != 0) {
		mock_nrefused++;
		return -EEXIST;
	}
	if (m->n == 0 || value < m->min)
		m->min = value;
	if (m->n == 0 || value > m->max)
		m->max = value;
	m->sum += value;
	m->last = value;
	m->n++;
	return 0;
}

unsigned
mock_nmetrics(void)
{
	return mock_nmetric;
}

const struct mock_metric *
mock_metric_at(unsigned i)
{
	return i < mock_nmetric ? &mock_metrics[i] : NULL;
}

const struct mock_metric *
mock_metric(const char *name)
{
	unsigned i;

	for (i = 0; name != NULL && i < mock_nmetric; i++)
		if (strcmp(mock_metrics[i].name, name) == 0)
			return &mock_metrics[i];
	return NULL;
}

unsigned
mock_metric_refused(void)
{
	return mock_nrefused;
}

void
mock_metrics_clear(void)
{
	memset(mock_metrics, 0, sizeof(mock_metrics[0]) * mock_nmetric);
	mock_nmetric = 0;
	mock_nrefused = 0;
}

/* ---- findings and epochs ---- */

static char *
mock_strdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

int
vitals_finding_emit(struct vitals_ctx *ctx, const struct vitals_finding *f)
{
	struct vitals_finding *all, *c;

	all = realloc(mock_findings, (mock_nfinding + 1) * sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	mock_findings = all;
	c = &all[mock_nfinding++];
	*c = *f;
	c->filter = strdup(ctx != NULL ? ctx->name : "mock");
	c->vital = mock_strdup(f->vital);
	c->label = mock_strdup(f->label);
	c->text = mock_strdup(f->text);
	return 0;
}

unsigned
mock_nfindings(void)
{
	return mock_nfinding;
}

const struct vitals_finding *
mock_finding(unsigned i)
{
	return i < mock_nfinding ? &mock_findings[i] : NULL;
}

void
mock_findings_clear(void)
{
	unsigned i;

	for (i = 0; i < mock_nfinding; i++) {
		free((char *)mock_findings[i].filter);
		free((char *)mock_findings[i].vital);
		free((char *)mock_findings[i].label);
		free((char *)mock_findings[i].text);
	}
	free(mock_findings);
	mock_findings = NULL;
	mock_nfinding = 0;
}

/* ---- series ---- */

/* One point given to vitals_series_emit. */
struct mock_point {
	char *name;
	uint64_t ts_ns;
	double value;
};

static struct mock_point *mock_points;
static unsigned mock_npoint;

int
vitals_series_emit(
    struct vitals_ctx *ctx, const char *name, uint64_t ts_ns, double value)
{
	struct mock_point *all;

	(void)ctx;
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	all = realloc(mock_points, (mock_npoint + 1) * sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	mock_points = all;
	all[mock_npoint].ts_ns = ts_ns;
	all[mock_npoint].value = value;
	if ((all[mock_npoint].name = strdup(name)) == NULL)
		return -ENOMEM;
	mock_npoint++;
	return 0;
}

unsigned
mock_nseries(void)
{
	return mock_npoint;
}

const char *
mock_series(unsigned i, uint64_t *ts_ns, double *value)
{
	if (i >= mock_npoint)
		return NULL;
	if (ts_ns != NULL)
		*ts_ns = mock_points[i].ts_ns;
	if (value != NULL)
		*value = mock_points[i].value;
	return mock_points[i].name;
}

void
mock_series_clear(void)
{
	unsigned i;

	for (i = 0; i < mock_npoint; i++)
		free(mock_points[i].name);
	free(mock_points);
	mock_points = NULL;
	mock_npoint = 0;
}
