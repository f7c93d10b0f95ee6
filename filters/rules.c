/* SPDX-License-Identifier: MIT */
/*
 * rules: the diagnosis rules of Chopstix (section 3.2) over the vitals
 * present, with each vital's weight attributed to exes from the samples.
 * Absolute values are per nominal base epoch, so the rules read the same
 * on rollups; each rule's exact condition is in doc/filters.md.  A rule that
 * holds for an exe is one incident until it no longer does; a warning
 * needs it to hold in `persist` of the last 2*persist-1 epochs, unless it
 * is unambiguous (bad blocks, a leak over leak_epochs, a fatal signal):
 * doc/findings.md.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include <vitals/vitals.h>

#include "incident.h"
#include "labels.h"

/*
 * The contract's vitals, by index; RULES_KCPU is cpu in the kernel,
 * RULES_KMOV the kmem allocations that are movable (user and page cache
 * pages, __GFP_MOVABLE in the gfp flags of kmem args[1]).
 */
enum {
	RULES_CPU,
	RULES_CACHE,
	RULES_SCHED,
	RULES_BLOCKING,
	RULES_DISKIO,
	RULES_UMEM,
	RULES_KMEM,
	RULES_KMEM_FREE,
	RULES_SYSCALL,
	RULES_SIGNAL,
	RULES_SOCKET,
	RULES_LOCK,
	RULES_NV,
	RULES_KCPU = RULES_NV,
	RULES_KMOV
};

#define RULES_GFP_MOVABLE 0x08u /* ___GFP_MOVABLE */

static const char *const rules_vitals[RULES_NV] = { "cpu", "cache", "sched",
	"blocking", "diskio", "umem", "kmem", "kmem_free", "syscall", "signal",
	"socket", "lock" };

#define RULES_N 10
#define RULES_BIT(v) (1u << (v))
#define RULES_UNSATISFIED 0x100u /* diskio op bit: short or failed */
#define RULES_NAMED 3 /* devices, signals, syscalls named in a text */

struct rules_config {
	struct vitals_strlist rules; /* rule numbers checked; empty = all */
	double cpu_busy; /* cpu samples per base epoch of a busy system */
	double high_share; /* an exe's share of a vital counted high */
	double low_share; /* an exe's share of a vital counted low */
	double kernel_share; /* share of cpu samples in the kernel: high */
	uint64_t sched_high; /* run-queue delay per base epoch, ns */
	uint64_t lock_high; /* lock wait per base epoch, ns */
	uint64_t block_high; /* an exe's blocking per base epoch, ns */
	uint64_t block_low; /* an exe's blocking counted low, ns */
	double block_share; /* an exe's blocking: high, as a share of time */
	double rise; /* times the previous epochs' mean that is a rise */
	int64_t window; /* previous epochs in that mean */
	int64_t leak_epochs; /* consecutive epochs of net allocation */
	double leak_pages; /* net pages or faults per base epoch */
	int64_t io_errors; /* unsatisfied diskio samples of an exe */
	double umem_high; /* an exe's faults per base epoch counted high */
	uint64_t io_high; /* an exe's diskio bytes per base epoch: high */
	double syscall_high; /* an exe's syscalls per base epoch: high */
	double loop_share; /* share of its syscalls from one label */
	double kmem_per_call; /* kmem pages per syscall counted low */
	int64_t vanish_epochs; /* epochs prominent before vanishing */
	double vanish_share; /* share of a vital that is prominent */
	int64_t persist; /* a warning holds in persist of 2*persist-1 epochs */
};

#define RULES_OFF(m) offsetof(struct rules_config, m)

/* clang-format off */
static const struct vitals_option rules_options[] = {
	{ .key = "rules", .type = VITALS_OPT_STRLIST,
	    .offset = RULES_OFF(rules), .def = NULL,
	    .help = "rule numbers to check, 1..10 (default: all)" },
	{ .key = "cpu_busy", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(cpu_busy), .def = "1000",
	    .help = "cpu samples per base epoch at which the system is busy "
	    "(#1, #4, #7, #8)", .min = 0, .max = 1e18 },
	{ .key = "high_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(high_share), .def = "0.5",
	    .help = "an exe's share of cpu (#1, #8) or cache (#9) that is "
	    "high", .min = 0, .max = 1 },
	{ .key = "low_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(low_share), .def = "0.05",
	    .help = "an exe's share of cache (#1, #9) or cpu (#7) that is low",
	    .min = 0, .max = 1 },
	{ .key = "kernel_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(kernel_share), .def = "0.5",
	    .help = "share of cpu samples at kernel PCs that dominates (#4); "
	    "below it the kernel is low (#7)", .min = 0, .max = 1 },
	{ .key = "sched_high", .type = VITALS_OPT_DURATION,
	    .offset = RULES_OFF(sched_high), .def = "1s",
	    .help = "run-queue delay per base epoch that is high: all tasks "
	    "(#4), one exe (#7)" },
	{ .key = "lock_high", .type = VITALS_OPT_DURATION,
	    .offset = RULES_OFF(lock_high), .def = "1s",
	    .help = "lock wait per base epoch of all tasks that is high (#4)" },
	{ .key = "block_high", .type = VITALS_OPT_DURATION,
	    .offset = RULES_OFF(block_high), .def = "1s",
	    .help = "an exe's blocking per base epoch that is high (#5, #6)" },
	{ .key = "block_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(block_share), .def = "0.2",
	    .help = "an exe's blocking must also be at least this share of "
	    "the epoch's time to be high (#5, #6): a task waiting on a "
	    "resource a fifth of the time", .min = 0, .max = 1e6 },
	{ .key = "block_low", .type = VITALS_OPT_DURATION,
	    .offset = RULES_OFF(block_low), .def = "100ms",
	    .help = "an exe's blocking per base epoch that is low (#8)" },
	{ .key = "rise", .type = VITALS_OPT_DOUBLE, .offset = RULES_OFF(rise),
	    .def = "2", .help = "times the mean of the previous epochs that is "
	    "a rise (#5; #2 without kmem_free)", .min = 1, .max = 1e9 },
	{ .key = "window", .type = VITALS_OPT_INT, .offset = RULES_OFF(window),
	    .def = "4", .help = "previous epochs averaged as the baseline (#5)",
	    .min = 1, .max = 1024 },
	{ .key = "leak_epochs", .type = VITALS_OPT_INT,
	    .offset = RULES_OFF(leak_epochs), .def = "5",
	    .help = "consecutive epochs of net allocation by one exe (#2)",
	    .min = 2, .max = 1024 },
	{ .key = "leak_pages", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(leak_pages), .def = "256",
	    .help = "net kmem pages or umem faults per base epoch that count "
	    "as allocating (#2)", .min = 0, .max = 1e18 },
	{ .key = "io_errors", .type = VITALS_OPT_INT,
	    .offset = RULES_OFF(io_errors), .def = "1",
	    .help = "unsatisfied diskio samples of one exe to report (#3)",
	    .min = 1, .max = 1e9 },
	{ .key = "umem_high", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(umem_high), .def = "10000",
	    .help = "an exe's page faults per base epoch that are high "
	    "(#6, #9)", .min = 0, .max = 1e18 },
	{ .key = "io_high", .type = VITALS_OPT_SIZE,
	    .offset = RULES_OFF(io_high), .def = "64M",
	    .help = "an exe's disk I/O bytes per base epoch that are high (#6)" },
	{ .key = "syscall_high", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(syscall_high), .def = "100000",
	    .help = "an exe's system calls per base epoch that are high (#8)",
	    .min = 0, .max = 1e18 },
	{ .key = "loop_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(loop_share), .def = "0.5",
	    .help = "share of an exe's system calls from one label that makes "
	    "a loop (#8)", .min = 0, .max = 1 },
	{ .key = "kmem_per_call", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(kmem_per_call), .def = "0.01",
	    .help = "kmem pages per system call that are low (#8, where kmem "
	    "is present)", .min = 0, .max = 1e18 },
	{ .key = "vanish_epochs", .type = VITALS_OPT_INT,
	    .offset = RULES_OFF(vanish_epochs), .def = "3",
	    .help = "earlier epochs an exe was prominent in before it "
	    "vanished (#10)", .min = 1, .max = 1023 },
	{ .key = "vanish_share", .type = VITALS_OPT_DOUBLE,
	    .offset = RULES_OFF(vanish_share), .def = "0.05",
	    .help = "share of some vital that makes an exe prominent (#10)",
	    .min = 0, .max = 1 },
	{ .key = "persist", .type = VITALS_OPT_INT,
	    .offset = RULES_OFF(persist), .def = "2",
	    .help = "a rule's warning needs it to hold in persist of the "
	    "last 2*persist-1 epochs (#1, #4-#8; #2, #3 and #10 are "
	    "unambiguous and need one), else info", .min = 1,
	    .max = INCIDENT_K_MAX },
	{ .key = NULL }
};
/* clang-format on */

/* One epoch's weight per vital and exe, built when a rule needs it. */
struct rules_view {
	int built;
	const struct vitals_epoch *ep;
	double scale; /* to a value per base epoch */
	const struct vitals_vital_epoch *ve[RULES_NV + 2];
	struct labels lab[RULES_NV + 2]; /* by exe */
};

/* One epoch callback: the queue and the views of its epochs. */
struct rules_run {
	const struct vitals_queue *q;
	struct rules_view *views; /* q->n, oldest first */
	int rc; /* first error */
};

struct rules {
	struct vitals_ctx *ctx;
	const struct rules_config *cf;
	uint64_t base_ns;
	int enabled[RULES_N + 1];
	int said[RULES_N + 1]; /* "vitals absent" logged */
	struct incidents inc;
	const struct vitals_queue *q; /* the queue being looked at */
};

/* ---- views ---- */

static int
rules_kernel_pc(const struct vitals_sample *s, const void *arg)
{
	(void)arg;
	return s->op == 1;
}

static int
rules_movable(const struct vitals_sample *s, const void *arg)
{
	(void)arg;
	return (s->args[1] & RULES_GFP_MOVABLE) != 0;
}

static void
rules_view_free(struct rules_view *v)
{
	int i;

	for (i = 0; i <= RULES_KMOV; i++)
		labels_free(&v->lab[i]);
}

/* View of queue epoch i (0 oldest), built on first use. */
static struct rules_view *
rules_view(struct rules *r, struct rules_run *run, uint32_t i)
{
	struct rules_view *v = &run->views[i];
	struct labels_how how = { LABELS_BY_EXE,
		labels_runs(run->q->epochs[i], r->base_ns), NULL, NULL };
	int k;

	if (v->built)
		return v;
	v->built = 1;
	v->ep = run->q->epochs[i];
	v->scale = labels_scale(v->ep, r->base_ns);
	for (k = 0; k < RULES_NV; k++) {
		v->ve[k] = vitals_epoch_vital(v->ep, rules_vitals[k]);
		if (v->ve[k] != NULL &&
		    labels_collect(v->ve[k], &how, &v->lab[k]) != 0)
			run->rc = -ENOMEM;
	}
	how.match = rules_kernel_pc;
	if ((v->ve[RULES_KCPU] = v->ve[RULES_CPU]) != NULL &&
	    labels_collect(v->ve[RULES_CPU], &how, &v->lab[RULES_KCPU]) != 0)
		run->rc = -ENOMEM;
	how.match = rules_movable;
	if ((v->ve[RULES_KMOV] = v->ve[RULES_KMEM]) != NULL &&
	    labels_collect(v->ve[RULES_KMEM], &how, &v->lab[RULES_KMOV]) != 0)
		run->rc = -ENOMEM;
	return v;
}

static struct rules_view *
rules_newest(struct rules *r, struct rules_run *run)
{
	return rules_view(r, run, run->q->n - 1);
}

/* Weight of vital vi per base epoch (kernel cpu: what its samples hold). */
static double
rules_total(const struct rules_view *v, int vi)
{
	const struct labels *l = &v->lab[vi];
	double sum = 0;
	uint32_t i;

	if (v->ve[vi] == NULL)
		return 0;
	if (vi != RULES_KCPU)
		return (double)v->ve[vi]->wsum * v->scale;
	for (i = 0; i < l->n; i++)
		sum += l->v[i].weight;
	return sum * v->scale;
}

/* Weight of exe `name` in vital vi per base epoch; 0 if absent. */
static double
rules_w(const struct rules_view *v, int vi, const char *name)
{
	const struct labels_entry *e = labels_find(&v->lab[vi], name);

	return e != NULL ? e->weight * v->scale : 0;
}

/* Share of exe `name` in vital vi (kernel cpu: of all cpu). */
static double
rules_share(const struct rules_view *v, int vi, const char *name)
{
	double total = rules_total(v, vi == RULES_KCPU ? RULES_CPU : vi);

	return total > 0 ? rules_w(v, vi, name) / total : 0;
}

/* Mean weight of exe `name` in vital vi over the n epochs before the newest. */
static double
rules_mean_before(struct rules *r, struct rules_run *run, int vi,
    const char *name, uint32_t n)
{
	uint32_t last = run->q->n - 1, i, first = last > n ? last - n : 0;
	double sum = 0;

	for (i = first; i < last; i++)
		sum += rules_w(rules_view(r, run, i), vi, name);
	return last > first ? sum / (last - first) : 0;
}

/* ---- findings ---- */

static const char *const rules_names[RULES_N + 1] = { NULL, "Busy loop",
	"Memory leak", "Unsatisfied disk I/O", "Kernel bottleneck",
	"Blocking source", "Low memory", "Held from scheduling",
	"System call busy loop", "Memory growth", "Process vanished" };

/* What a finding says besides its sentence. */
struct rules_out {
	int rule; /* 1..10 */
	uint32_t severity;
	uint32_t first; /* queue index where the range starts */
	const char *vital, *label;
	double value, expected, score;
	int once; /* unambiguous: an incident at once, without persisting */
};

/* The rules that hold at one epoch only (a vanishing): no end is said. */
#define RULES_ONESHOT(n) ((n) == 10)

static void rules_emit(struct rules *r, struct rules_run *run,
    const struct rules_out *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * The step of the incident of o (its rule, vital and exe): how its finding
 * is said, or 0 when nothing is (an incident going on).  An info condition
 * or an unambiguous one is an incident at once; a warning needs persist.
 */
static int
rules_step(struct rules *r, struct rules_run *run, const struct rules_out *o,
    uint32_t *severity, uint64_t *start_ns, char *tail, size_t len)
{
	uint32_t k = (uint32_t)r->cf->persist, need;
	struct incident_out io;
	char key[512];

	need = o->once || o->severity <= VITALS_SEV_INFO ? 1 : k;
	snprintf(key, sizeof(key), "#%d\t%.63s\t%.400s", o->rule,
	    o->vital ? o->vital : "", o->label ? o->label : "");
	if (incident_step(&r->inc, run->q, key, o->vital, o->label, 1, o->score,
		o->severity, need, &io) != 0) {
		run->rc = -ENOMEM;
		return 0;
	}
	tail[0] = '\0';
	*severity = io.severity;
	*start_ns = io.start_ns;
	if (io.what == INCIDENT_START) {
		incident_started(&r->inc, run->q->timescale_s, key,
		    run->q->epochs[o->first]->start_ns);
		*start_ns =
		    incident_find(&r->inc, run->q->timescale_s, key)->start_ns;
	}
	incident_tail(&r->inc, &io, need > 1, tail, len);
	return io.what == INCIDENT_NOTE || io.what == INCIDENT_START ||
	    io.what == INCIDENT_UPDATE;
}

/* Emit one finding: "Name (rule #N): " and the sentence from fmt. */
static void
rules_emit(struct rules *r, struct rules_run *run, const struct rules_out *o,
    const char *fmt, ...)
{
	const struct vitals_epoch *first = run->q->epochs[o->first];
	struct vitals_finding f = { 0 };
	char text[1600], tail[160];
	uint64_t start_ns;
	uint32_t sev;
	int n;
	va_list ap;

	if (!rules_step(r, run, o, &sev, &start_ns, tail, sizeof(tail)))
		return;
	n = snprintf(text, sizeof(text),
	    "%s (rule #%d): ", rules_names[o->rule], o->rule);
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	n = (int)strlen(text);
	snprintf(text + n, sizeof(text) - (size_t)n, "%s", tail);
	f.start_ns = first->start_ns;
	if (start_ns != 0 && start_ns < f.start_ns)
		f.start_ns = start_ns;
	f.severity = sev;
	f.score = o->score;
	f.value = o->value;
	f.expected = o->expected;
	f.vital = o->vital;
	f.label = o->label;
	f.text = text;
	if (vitals_queue_emit(r->ctx, run->q, &f) != 0)
		run->rc = -ENOMEM;
}

/* The contract's weight units, as rules_vitals. */
static const char *const rules_units[RULES_NV] = { "samples", "samples", "ns",
	"ns", "bytes", "faults", "pages", "pages", "calls", "signals", "bytes",
	"ns" };

static const char *
rules_fmt(double x, int vi, char *buf, size_t len)
{
	return labels_fmt(x, rules_units[vi], buf, len);
}

/* ---- #1 busy loop: high cpu, near-zero cache misses ---- */

static int
rules_1(struct rules *r, struct rules_run *run)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	const struct labels *cpu = &v->lab[RULES_CPU];
	struct rules_out o = { .rule = 1,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "cpu" };
	double c, m;
	uint32_t i;

	if (rules_total(v, RULES_CPU) < cf->cpu_busy)
		return 0;
	for (i = 0; i < cpu->n; i++) {
		c = rules_share(v, RULES_CPU, cpu->v[i].name);
		m = rules_share(v, RULES_CACHE, cpu->v[i].name);
		if (c < cf->high_share || m > cf->low_share)
			continue;
		if (rules_w(v, RULES_KCPU, cpu->v[i].name) >=
		    cf->kernel_share * rules_w(v, RULES_CPU, cpu->v[i].name))
			continue; /* mostly in the kernel: rule #4's ground */
		o.label = cpu->v[i].name;
		o.value = c;
		o.expected = cf->high_share;
		o.score = c / fmax(m, 0.001);
		rules_emit(r, run, &o,
		    "%s had %.0f%% of CPU samples but caused %.1f%% of cache "
		    "misses: an unproductive loop that does not yield",
		    o.label, 100 * c, 100 * m);
	}
	return 0;
}

/* ---- #2 memory leak: net allocation by one exe, epoch after epoch ---- */

/* Free memory reported by the latest sample of vital vi; 0 if none. */
static double
rules_free_mem(const struct rules_view *v, int vi)
{
	const struct vitals_vital_epoch *ve = v->ve[vi];
	int arg = vi == RULES_KMEM ? 2 : 1;
	uint64_t best = 0, ts = 0;
	uint32_t i;

	for (i = 0; ve != NULL && i < ve->nsamples; i++) {
		if (ve->samples[i].args[arg] != 0 &&
		    ve->samples[i].ts_ns >= ts) {
			ts = ve->samples[i].ts_ns;
			best = ve->samples[i].args[arg];
		}
	}
	return (double)best;
}

/*
 * Whether exe was sampled creating processes or threads in v (fork,
 * vfork, clone, clone3): the kernel pages a fork takes (page tables, a
 * kernel stack) are charged to the parent and freed by the child.
 */
static int
rules_forks(const struct rules_view *v, const char *exe)
{
	const struct vitals_vital_epoch *ve = v->ve[RULES_SYSCALL];
	const struct vitals_sample *s;
	char buf[24];
	uint32_t i;

	for (i = 0; ve != NULL && i < ve->nsamples; i++) {
		s = &ve->samples[i];
		if ((s->op == SYS_fork || s->op == SYS_vfork ||
			s->op == SYS_clone
#ifdef SYS_clone3
			|| s->op == SYS_clone3
#endif
			) &&
		    strcmp(labels_name(s, LABELS_BY_EXE, buf, sizeof(buf)),
			exe) == 0)
			return 1;
	}
	return 0;
}

/*
 * Net allocation of exe in vital vi (kmem less kmem_free where present).
 * Where umem is present too, movable pages (user memory and the page
 * cache) count only as far as the exe faulted user pages in: a leak is
 * memory the process keeps, while the page cache its reads and writes
 * fill (a cat, a grep, a program writing files) is kmem it never frees
 * itself, and no leak.  Unmovable kernel pages count in full, but for an
 * exe that forks (a make, a shell), whose children free them.
 */
static double
rules_net(const struct rules_view *v, int vi, const char *exe)
{
	double net = rules_w(v, vi, exe), mov, kern;

	if (vi == RULES_KMEM && v->ve[RULES_KMEM_FREE] != NULL) {
		net -= rules_w(v, RULES_KMEM_FREE, exe);
		if (v->ve[RULES_UMEM] != NULL) {
			mov = rules_w(v, RULES_KMOV, exe);
			kern = rules_forks(v, exe)
			    ? 0
			    : rules_w(v, RULES_KMEM, exe) - mov;
			net = fmin(
			    net, kern + fmin(mov, rules_w(v, RULES_UMEM, exe)));
		}
	}
	return net;
}

static uint32_t rules_pids(
    const struct rules_view *v, const char *exe, uint32_t *pid, uint32_t max);

/*
 * Whether one process of exe was sampled in every epoch of the queue from
 * first on: a leak is one process keeping what it took, not a family of
 * short processes (a build's, a script's) each taking its share.
 */
static int
rules_one_process(
    struct rules *r, struct rules_run *run, const char *exe, uint32_t first)
{
	uint32_t cand[16], ncand, other[64], nother, i, j, k;

	ncand = rules_pids(rules_view(r, run, run->q->n - 1), exe, cand, 16);
	for (i = 0; i < ncand; i++) {
		for (j = first; j + 1 < run->q->n; j++) {
			nother =
			    rules_pids(rules_view(r, run, j), exe, other, 64);
			for (k = 0; k < nother && other[k] != cand[i]; k++)
				;
			if (k == nother)
				break;
		}
		if (j + 1 >= run->q->n)
			return 1;
	}
	return 0;
}

/* Net allocation in each of the window's epochs; returns the least. */
static double
rules_leak_min(struct rules *r, struct rules_run *run, int vi, const char *exe,
    uint32_t first, double *sum)
{
	double least = INFINITY, net;
	uint32_t i;

	*sum = 0;
	for (i = first; i < run->q->n; i++) {
		if (rules_view(r, run, i)->ve[vi] == NULL)
			return -1;
		net = rules_net(rules_view(r, run, i), vi, exe);
		*sum += net;
		least = fmin(least, net);
	}
	return least;
}

/* Whether kmem_free is there to net kmem in every epoch from first. */
static int
rules_netted(struct rules *r, struct rules_run *run, int vi, uint32_t first)
{
	uint32_t i;

	for (i = first; vi == RULES_KMEM && i < run->q->n; i++)
		if (rules_view(r, run, i)->ve[RULES_KMEM_FREE] == NULL)
			return 0;
	return vi == RULES_KMEM;
}

/*
 * exe's mean allocation in vital vi over the queue's epochs before first
 * that have the vital; -1 if there are none.
 */
static double
rules_leak_before(struct rules *r, struct rules_run *run, int vi,
    const char *exe, uint32_t first)
{
	struct rules_view *v;
	double sum = 0;
	uint32_t i, n = 0;

	for (i = 0; i < first; i++) {
		v = rules_view(r, run, i);
		if (v->ve[vi] != NULL) {
			sum += rules_net(v, vi, exe);
			n++;
		}
	}
	return n > 0 ? sum / n : -1;
}

/* "page faults", "pages net of frees" or "pages allocated". */
static const char *
rules_leak_what(int vi, int netted)
{
	if (vi == RULES_UMEM)
		return "page faults";
	return netted ? "pages net of frees" : "pages allocated";
}

/*
 * Net allocation (kmem less kmem_free) needs no more evidence.  Gross
 * allocation (umem faults, kmem alone) also needs free memory to fall
 * and the exe's allocation to have risen: a process that maps and unmaps
 * memory faults all the time, and free memory falls whenever the page
 * cache grows, so a steady allocator is not a leak.
 */
static void
rules_leak_vital(struct rules *r, struct rules_run *run, int vi)
{
	uint32_t first = run->q->n - (uint32_t)r->cf->leak_epochs, i;
	struct rules_view *v = rules_newest(r, run);
	struct rules_out o = { .rule = 2,
		.severity = VITALS_SEV_WARN,
		.first = first,
		.vital = rules_vitals[vi],
		.once = 1 };
	double least, sum, was, now, before = 0;
	int netted = rules_netted(r, run, vi, first), fell;
	char a[48], b[48], c[48], falling[200] = "", rise[80] = "";

	was = rules_free_mem(rules_view(r, run, first), vi);
	now = rules_free_mem(v, vi);
	fell = was > 0 && now > 0 && now < was;
	if (was > 0 && now > 0 && !fell)
		return; /* memory is not running out */
	if (!netted && !fell)
		return;
	if (fell)
		snprintf(falling, sizeof(falling),
		    " while free memory fell by %s, from %s to %s",
		    labels_fmt(was - now, "bytes", c, sizeof(c)),
		    labels_fmt(was, "bytes", a, sizeof(a)),
		    labels_fmt(now, "bytes", b, sizeof(b)));
	for (i = 0; i < v->lab[vi].n; i++) {
		o.label = v->lab[vi].v[i].name;
		least = rules_leak_min(r, run, vi, o.label, first, &sum);
		if (least < r->cf->leak_pages || least <= 0 ||
		    !rules_one_process(r, run, o.label, first))
			continue;
		if (!netted) {
			before = rules_leak_before(r, run, vi, o.label, first);
			if (before < 0 || least < r->cf->rise * before)
				continue;
			snprintf(rise, sizeof(rise),
			    ", up from %.0f per epoch before", before);
		}
		o.value = sum;
		o.expected = r->cf->leak_pages * (double)r->cf->leak_epochs;
		o.score = least / fmax(r->cf->leak_pages, 1);
		rules_emit(r, run, &o,
		    "%s took at least %.0f %s in each of the last %lld "
		    "epochs (%.0f in all%s)%s",
		    o.label, least, rules_leak_what(vi, netted),
		    (long long)r->cf->leak_epochs, sum, rise, falling);
	}
}

static int
rules_2(struct rules *r, struct rules_run *run)
{
	uint32_t first;

	if (run->q->n < (uint32_t)r->cf->leak_epochs)
		return 0;
	first = run->q->n - (uint32_t)r->cf->leak_epochs;
	rules_leak_vital(r, run, RULES_KMEM);
	/* Faults alone are weaker evidence: only without net kmem. */
	if (!rules_netted(r, run, RULES_KMEM, first))
		rules_leak_vital(r, run, RULES_UMEM);
	return 0;
}

/* ---- #3 unsatisfied I/O: bad blocks ---- */

/* Unsatisfied requests of one exe and where they went. */
struct rules_io {
	const char *exe;
	uint32_t n, nwhere;
	uint64_t dev[RULES_NAMED], sector[RULES_NAMED];
};

static void
rules_io_add(struct rules_io *io, uint32_t *nio, const char *exe,
    const struct vitals_sample *s)
{
	struct rules_io *x;
	uint32_t i;

	for (i = 0; i < *nio && strcmp(io[i].exe, exe) != 0; i++)
		;
	x = &io[i];
	if (i == *nio) {
		memset(x, 0, sizeof(*x));
		x->exe = exe;
		(*nio)++;
	}
	x->n++;
	for (i = 0; i < x->nwhere; i++)
		if (x->dev[i] == s->args[2] && x->sector[i] == s->args[3])
			return;
	if (x->nwhere < RULES_NAMED) {
		x->dev[x->nwhere] = s->args[2];
		x->sector[x->nwhere++] = s->args[3];
	}
}

static void
rules_io_report(
    struct rules *r, struct rules_run *run, const struct rules_io *x)
{
	struct rules_out o = { .rule = 3,
		.severity = VITALS_SEV_CRIT,
		.first = run->q->n - 1,
		.vital = "diskio",
		.label = x->exe,
		.value = x->n,
		.expected = (double)r->cf->io_errors,
		.score = x->n,
		.once = 1 };
	char where[256] = "";
	size_t used = 0;
	uint32_t i;

	/* Block tracepoints give the kernel's dev_t: major << 20 | minor. */
	for (i = 0; i < x->nwhere && used < sizeof(where); i++) {
		snprintf(where + used, sizeof(where) - used,
		    "%sdev %llu:%llu sector %llu", i ? ", " : "",
		    (unsigned long long)(x->dev[i] >> 20),
		    (unsigned long long)(x->dev[i] & 0xfffff),
		    (unsigned long long)x->sector[i]);
		used = strlen(where);
	}
	rules_emit(r, run, &o,
	    "%u sampled disk request%s of %s completed short or with an "
	    "error (%s): suspect bad blocks",
	    x->n, x->n == 1 ? "" : "s", x->exe, where);
}

static int
rules_3(struct rules *r, struct rules_run *run)
{
	const struct vitals_vital_epoch *ve;
	const struct vitals_sample *s;
	struct rules_io *io;
	char(*names)[24];
	uint32_t i, nio = 0;

	ve = rules_newest(r, run)->ve[RULES_DISKIO];
	io = calloc(ve->nsamples + 1, sizeof(*io));
	names = calloc(ve->nsamples + 1, sizeof(*names));
	if (io == NULL || names == NULL) {
		free(io);
		free(names);
		return -ENOMEM;
	}
	for (i = 0; i < ve->nsamples; i++) {
		s = &ve->samples[i];
		if (s->op & RULES_UNSATISFIED)
			rules_io_add(io, &nio,
			    labels_name(
				s, LABELS_BY_EXE, names[i], sizeof(names[i])),
			    s);
	}
	for (i = 0; i < nio; i++)
		if (io[i].n >= (uint64_t)r->cf->io_errors)
			rules_io_report(r, run, &io[i]);
	free(io);
	free(names);
	return 0;
}

/* ---- #4 kernel bottleneck ---- */

/* The kernel symbol where the most kernel cpu weight sat, or "". */
static const char *
rules_hot_ksym(
    struct rules *r, const struct rules_view *v, char *buf, size_t len)
{
	struct labels_how how = { LABELS_BY_LABEL,
		labels_runs(v->ep, r->base_ns), rules_kernel_pc, NULL };
	const struct vitals_sample *s;
	struct labels l;

	buf[0] = '\0';
	if (labels_collect(v->ve[RULES_CPU], &how, &l) != 0)
		return buf;
	if (l.n > 0) {
		s = l.v[0].rep;
		if (s->nkstack > 0 && s->ksyms != NULL && s->ksyms[0] != NULL)
			snprintf(buf, len, ", at %s", s->ksyms[0]);
		else
			snprintf(buf, len, ", at %s", l.v[0].name);
	}
	labels_free(&l);
	return buf;
}

static int
rules_4(struct rules *r, struct rules_run *run)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	struct rules_out o = { .rule = 4,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "cpu" };
	double cpu = rules_total(v, RULES_CPU), k = rules_total(v, RULES_KCPU);
	double sched = rules_total(v, RULES_SCHED);
	double lock = rules_total(v, RULES_LOCK);
	const struct labels *kl = &v->lab[RULES_KCPU];
	char a[48], b[48], at[160];

	if (cpu < cf->cpu_busy || cpu <= 0 || k / cpu < cf->kernel_share)
		return 0;
	if (sched < (double)cf->sched_high && lock < (double)cf->lock_high)
		return 0;
	o.label = kl->n > 0 ? kl->v[0].name : NULL;
	o.value = k / cpu;
	o.expected = cf->kernel_share;
	o.score = o.value / fmax(cf->kernel_share, 0.01);
	rules_emit(r, run, &o,
	    "%.0f%% of CPU samples were at kernel PCs (most in %s%s) while "
	    "run-queue delay was %s and lock wait %s per %g s: the kernel "
	    "keeps the scheduler from running tasks",
	    100 * o.value, o.label != NULL ? o.label : "unknown",
	    rules_hot_ksym(r, v, at, sizeof(at)),
	    v->ve[RULES_SCHED] ? rules_fmt(sched, RULES_SCHED, a, sizeof(a))
			       : "unknown",
	    v->ve[RULES_LOCK] ? rules_fmt(lock, RULES_LOCK, b, sizeof(b))
			      : "unknown",
	    (double)r->base_ns / 1e9);
	return 0;
}

/* ---- #5 blocking mirrored by diskio, lock or socket ---- */

/* "diskio (12.0 MiB), lock (1.20 s)": the sources that rose with it. */
static int
rules_mirrors(struct rules *r, struct rules_run *run, const char *exe,
    char *buf, size_t len)
{
	static const int src[] = { RULES_DISKIO, RULES_LOCK, RULES_SOCKET };
	struct rules_view *v = rules_newest(r, run);
	double now, before;
	char x[48];
	size_t used = 0;
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < 3; i++) {
		if (v->ve[src[i]] == NULL)
			continue;
		now = rules_w(v, src[i], exe);
		before = rules_mean_before(
		    r, run, src[i], exe, (uint32_t)r->cf->window);
		if (now <= 0 || now < r->cf->rise * before || used >= len)
			continue;
		snprintf(buf + used, len - used, "%s%s (%s)", n ? ", " : "",
		    rules_vitals[src[i]], rules_fmt(now, src[i], x, sizeof(x)));
		used = strlen(buf);
		n++;
	}
	return n;
}

/* Whether an exe's blocking per base epoch b is high (#5, #6). */
static int
rules_block_high(const struct rules *r, double b)
{
	return b >= (double)r->cf->block_high &&
	    b >= r->cf->block_share * (double)r->base_ns;
}

/* The blocking site (top kernel frame) of exe's heaviest blocking label. */
static const char *
rules_block_site(const struct rules_view *v, const char *exe)
{
	const struct labels_entry *e =
	    labels_find(&v->lab[RULES_BLOCKING], exe);

	if (e == NULL || e->rep->nkstack == 0 || e->rep->ksyms == NULL ||
	    e->rep->ksyms[0] == NULL)
		return "unknown";
	return e->rep->ksyms[0];
}

static void
rules_5_exe(struct rules *r, struct rules_run *run, const char *exe)
{
	struct rules_view *v = rules_newest(r, run);
	struct rules_out o = { .rule = 5,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "blocking",
		.label = exe };
	double b = rules_w(v, RULES_BLOCKING, exe), before;
	char what[400], x[48];

	before = rules_mean_before(
	    r, run, RULES_BLOCKING, exe, (uint32_t)r->cf->window);
	if (!rules_block_high(r, b) || b < r->cf->rise * before)
		return;
	o.value = b;
	o.expected = before;
	o.score =
	    before > 0 ? b / before : b / fmax((double)r->cf->block_high, 1);
	rules_fmt(b, RULES_BLOCKING, x, sizeof(x));
	if (rules_mirrors(r, run, exe, what, sizeof(what)) > 0) {
		rules_emit(r, run, &o,
		    "%s was blocked %s per %g s, up from %.0f%% of that, "
		    "and rising with it: %s",
		    exe, x, (double)r->base_ns / 1e9, 100 * before / b, what);
		return;
	}
	o.severity = VITALS_SEV_INFO;
	rules_emit(r, run, &o,
	    "%s was blocked %s per %g s, up from %.0f%% of that, but "
	    "neither diskio, lock nor socket rose with it; blocking site %s",
	    exe, x, (double)r->base_ns / 1e9, 100 * before / b,
	    rules_block_site(v, exe));
}

static int
rules_5(struct rules *r, struct rules_run *run)
{
	struct rules_view *v = rules_newest(r, run);
	uint32_t i;

	if (run->q->n < 2)
		return 0;
	for (i = 0; i < v->lab[RULES_BLOCKING].n; i++)
		rules_5_exe(r, run, v->lab[RULES_BLOCKING].v[i].name);
	return 0;
}

/* ---- #6 low memory and swapping ---- */

static int
rules_6(struct rules *r, struct rules_run *run)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	const struct labels *um = &v->lab[RULES_UMEM];
	struct rules_out o = { .rule = 6,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "umem" };
	double f, b, io;
	char x[48], y[48];
	uint32_t i;

	for (i = 0; i < um->n; i++) {
		o.label = um->v[i].name;
		f = rules_w(v, RULES_UMEM, o.label);
		b = rules_w(v, RULES_BLOCKING, o.label);
		io = rules_w(v, RULES_DISKIO, o.label);
		if (f < cf->umem_high || !rules_block_high(r, b) ||
		    io < (double)cf->io_high)
			continue;
		o.value = f;
		o.expected = cf->umem_high;
		o.score = f / fmax(cf->umem_high, 1);
		rules_emit(r, run, &o,
		    "%s took %.0f page faults while blocked %s and doing %s "
		    "of disk I/O per %g s: main memory is short and it "
		    "swaps",
		    o.label, f, rules_fmt(b, RULES_BLOCKING, x, sizeof(x)),
		    rules_fmt(io, RULES_DISKIO, y, sizeof(y)),
		    (double)r->base_ns / 1e9);
	}
	return 0;
}

/* ---- #7 held from scheduling ---- */

/*
 * Whether the CPUs were busy in v: cpu_busy samples (per base epoch), or,
 * where the proc probe measured it, idle under a tenth of the time in one
 * of its readings (each second).  The sample count alone cannot say it
 * for short epochs: at 99 Hz two CPUs give 594 samples in 3 s, never
 * cpu_busy's 1000; nor for a burst: a build's last seconds saturate the
 * CPUs and queue tasks in an epoch idle 58% on average.  Tasks queued
 * behind either are held normally.
 */
static int
rules_cpu_busy(const struct rules *r, struct rules_view *v)
{
	const struct vitals_metric *idle =
	    vitals_epoch_metric(v->ep, "proc.cpu.idle_pct");

	if (rules_total(v, RULES_CPU) >= r->cf->cpu_busy)
		return 1;
	return idle != NULL && idle->n > 0 && idle->min < 10;
}

static int
rules_7(struct rules *r, struct rules_run *run)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	const struct labels *sl = &v->lab[RULES_SCHED];
	struct rules_out o = { .rule = 7,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "sched" };
	double cpu = rules_total(v, RULES_CPU), d, c;
	int busy = rules_cpu_busy(r, v);
	char x[48];
	uint32_t i;

	if (cpu > 0 && rules_total(v, RULES_KCPU) / cpu >= cf->kernel_share)
		return 0; /* the kernel is busy: rule #4's ground */
	o.severity = busy ? VITALS_SEV_INFO : VITALS_SEV_WARN;
	for (i = 0; i < sl->n; i++) {
		o.label = sl->v[i].name;
		d = rules_w(v, RULES_SCHED, o.label);
		c = rules_share(v, RULES_CPU, o.label);
		if (d < (double)cf->sched_high || c > cf->low_share)
			continue;
		o.value = d;
		o.expected = (double)cf->sched_high;
		o.score = d / fmax((double)cf->sched_high, 1);
		rules_emit(r, run, &o,
		    "%s waited %s per %g s in the run queue with %.1f%% of "
		    "CPU samples: %s",
		    o.label, rules_fmt(d, RULES_SCHED, x, sizeof(x)),
		    (double)r->base_ns / 1e9, 100 * c,
		    busy ? "held normally, the CPU is busy and shared fairly"
			 : "held abnormally, the CPU is not busy");
	}
	return 0;
}

/* ---- #8 system call busy loop ---- */

static int
rules_exe_match(const struct vitals_sample *s, const void *arg)
{
	char buf[24];

	return strcmp(labels_name(s, LABELS_BY_EXE, buf, sizeof(buf)),
		   (const char *)arg) == 0;
}

/* Share of exe's system calls in its heaviest label, and that sample. */
static double
rules_loop_label(struct rules *r, const struct rules_view *v, const char *exe,
    struct vitals_sample *rep)
{
	struct labels_how how = { LABELS_BY_LABEL,
		labels_runs(v->ep, r->base_ns), rules_exe_match, exe };
	double all = 0, share = 0;
	struct labels l;
	uint32_t i;

	if (labels_collect(v->ve[RULES_SYSCALL], &how, &l) != 0)
		return 0;
	for (i = 0; i < l.n; i++)
		all += l.v[i].weight;
	if (l.n > 0 && all > 0) {
		share = l.v[0].weight / all;
		*rep = *l.v[0].rep;
	}
	labels_free(&l);
	return share;
}

static void
rules_8_exe(struct rules *r, struct rules_run *run, const char *exe)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	struct rules_out o = { .rule = 8,
		.severity = VITALS_SEV_WARN,
		.first = run->q->n - 1,
		.vital = "syscall",
		.label = exe };
	double calls = rules_w(v, RULES_SYSCALL, exe), loop, per = 0;
	double blk = rules_w(v, RULES_BLOCKING, exe);
	struct vitals_sample rep = { 0 };
	char x[48];

	if (calls < cf->syscall_high || calls <= 0)
		return;
	if ((loop = rules_loop_label(r, v, exe, &rep)) < cf->loop_share)
		return;
	if (v->ve[RULES_BLOCKING] != NULL && blk > (double)cf->block_low)
		return;
	if (v->ve[RULES_KMEM] != NULL &&
	    (per = rules_w(v, RULES_KMEM, exe) / calls) > cf->kmem_per_call)
		return;
	o.value = calls;
	o.expected = cf->syscall_high;
	o.score = calls / fmax(cf->syscall_high, 1);
	rules_emit(r, run, &o,
	    "%s made %.0f system calls per %g s, %.0f%% of them system "
	    "call %u from one site (first argument %llu), with %.0f%% of CPU "
	    "samples, %s blocked%s: a loop around a failing call",
	    exe, calls, (double)r->base_ns / 1e9, 100 * loop, rep.op,
	    (unsigned long long)rep.args[0],
	    100 * rules_share(v, RULES_CPU, exe),
	    v->ve[RULES_BLOCKING] ? rules_fmt(blk, RULES_BLOCKING, x, sizeof(x))
				  : "unknown time",
	    v->ve[RULES_KMEM] ? " and little kernel memory per call" : "");
}

static int
rules_8(struct rules *r, struct rules_run *run)
{
	struct rules_view *v = rules_newest(r, run);
	const struct labels *cpu = &v->lab[RULES_CPU];
	uint32_t i;

	if (rules_total(v, RULES_CPU) < r->cf->cpu_busy)
		return 0;
	for (i = 0; i < cpu->n; i++)
		if (rules_share(v, RULES_CPU, cpu->v[i].name) >=
		    r->cf->high_share)
			rules_8_exe(r, run, cpu->v[i].name);
	return 0;
}

/* ---- #9 memory growth: initialisation or rising load ---- */

static int
rules_9(struct rules *r, struct rules_run *run)
{
	const struct rules_config *cf = r->cf;
	struct rules_view *v = rules_newest(r, run);
	const struct labels *um = &v->lab[RULES_UMEM];
	struct rules_out o = { .rule = 9,
		.severity = VITALS_SEV_INFO,
		.first = run->q->n - 1,
		.vital = "umem" };
	double f, m;
	uint32_t i;

	for (i = 0; i < um->n; i++) {
		o.label = um->v[i].name;
		f = rules_w(v, RULES_UMEM, o.label);
		m = rules_share(v, RULES_CACHE, o.label);
		if (f < cf->umem_high ||
		    (m > cf->low_share && m < cf->high_share))
			continue;
		o.value = f;
		o.expected = cf->umem_high;
		o.score = f / fmax(cf->umem_high, 1);
		rules_emit(r, run, &o,
		    "%s took %.0f page faults per %g s with %.1f%% of cache "
		    "misses: %s",
		    o.label, f, (double)r->base_ns / 1e9, 100 * m,
		    m <= cf->low_share ? "it is initialising"
				       : "its load is increasing");
	}
	return 0;
}

/* ---- #10 a process whose vitals vanish ---- */

/* Whether exe has a sample in any vital of v but signal. */
static int
rules_seen(const struct rules_view *v, const char *exe)
{
	int k;

	for (k = 0; k < RULES_NV; k++)
		if (k != RULES_SIGNAL && labels_find(&v->lab[k], exe) != NULL)
			return 1;
	return 0;
}

/* Largest share exe has of any vital in v. */
static double
rules_prominence(const struct rules_view *v, const char *exe)
{
	double best = 0;
	int k;

	for (k = 0; k < RULES_NV; k++)
		if (k != RULES_SIGNAL)
			best = fmax(best, rules_share(v, k, exe));
	return best;
}

/* The pids exe's samples carry in v, up to max; returns how many. */
static uint32_t
rules_pids(
    const struct rules_view *v, const char *exe, uint32_t *pid, uint32_t max)
{
	const struct vitals_sample *s;
	uint32_t n = 0, i, j;
	char buf[24];
	int k;

	for (k = 0; k < RULES_NV; k++) {
		for (i = 0; v->ve[k] != NULL && i < v->ve[k]->nsamples; i++) {
			s = &v->ve[k]->samples[i];
			if (strcmp(
				labels_name(s, LABELS_BY_EXE, buf, sizeof(buf)),
				exe) != 0)
				continue;
			for (j = 0; j < n && pid[j] != s->pid; j++)
				;
			if (j == n && n < max)
				pid[n++] = s->pid;
		}
	}
	return n;
}

static const struct {
	int sig;
	const char *name;
	int crash; /* 1: a fault, 0: a request to stop */
} rules_sigs[] = {
	{ SIGKILL, "SIGKILL", 0 },
	{ SIGTERM, "SIGTERM", 0 },
	{ SIGINT, "SIGINT", 0 },
	{ SIGHUP, "SIGHUP", 0 },
	{ SIGQUIT, "SIGQUIT", 1 },
	{ SIGSEGV, "SIGSEGV", 1 },
	{ SIGBUS, "SIGBUS", 1 },
	{ SIGFPE, "SIGFPE", 1 },
	{ SIGILL, "SIGILL", 1 },
	{ SIGABRT, "SIGABRT", 1 },
	{ SIGSYS, "SIGSYS", 1 },
	{ SIGTRAP, "SIGTRAP", 1 },
	{ SIGPIPE, "SIGPIPE", 0 },
	{ SIGXCPU, "SIGXCPU", 1 },
};

/* The signal's name, or -1 for one that does not end a process. */
static int
rules_sig(uint32_t sig)
{
	unsigned i;

	for (i = 0; i < sizeof(rules_sigs) / sizeof(rules_sigs[0]); i++)
		if ((uint32_t)rules_sigs[i].sig == sig)
			return (int)i;
	return -1;
}

/* A signal the kernel raised itself (si_code SI_KERNEL: the OOM killer). */
#define RULES_SI_KERNEL 0x80

/* The last fatal signal aimed at a vanished process. */
struct rules_sig_seen {
	int k; /* its index in rules_sigs, or -1: none */
	int kernel; /* raised by the kernel, not sent by a process */
	uint64_t sender; /* the sending pid; 0: the kernel, or not recorded */
};

/*
 * Fatal signals aimed at one of pid[] in v, appended to buf: "SIGKILL
 * from pid 1, SIGKILL from the kernel"; the last one is kept in *last.
 */
static void
rules_signals(const struct rules_view *v, const uint32_t *pid, uint32_t npid,
    char *buf, size_t len, uint32_t *nsig, struct rules_sig_seen *last)
{
	const struct vitals_vital_epoch *ve = v->ve[RULES_SIGNAL];
	const struct vitals_sample *s;
	size_t used = strlen(buf);
	uint32_t i, j;
	int k, kernel;

	for (i = 0; ve != NULL && i < ve->nsamples; i++) {
		s = &ve->samples[i];
		for (j = 0; j < npid && pid[j] != (uint32_t)s->args[2]; j++)
			;
		if (j == npid || (k = rules_sig(s->op)) < 0)
			continue;
		kernel = s->args[0] == RULES_SI_KERNEL;
		*last = (struct rules_sig_seen){ k, kernel, s->args[1] };
		if ((*nsig)++ < RULES_NAMED && used < len) {
			if (kernel)
				snprintf(buf + used, len - used,
				    "%s%s from the kernel", used ? ", " : "",
				    rules_sigs[k].name);
			else
				snprintf(buf + used, len - used,
				    "%s%s from pid %llu", used ? ", " : "",
				    rules_sigs[k].name,
				    (unsigned long long)s->args[1]);
			used = strlen(buf);
		}
	}
}

static const char *
rules_syscall_name(uint32_t nr)
{
	if (nr == SYS_exit)
		return " (exit)";
	if (nr == SYS_exit_group)
		return " (exit_group)";
	if (nr == SYS_kill)
		return " (kill)";
	if (nr == SYS_tgkill)
		return " (tgkill)";
	return "";
}

static int
rules_ts_cmp(const void *a, const void *b)
{
	const struct vitals_sample *x = *(const struct vitals_sample *const *)a;
	const struct vitals_sample *y = *(const struct vitals_sample *const *)b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/*
 * exe's last distinct system calls in v, oldest first, as "0, 231
 * (exit_group)"; *exited is set when one of them ends the process.
 */
static void
rules_last_calls(const struct rules_view *v, const char *exe, char *buf,
    size_t len, int *exited)
{
	const struct vitals_vital_epoch *ve = v->ve[RULES_SYSCALL];
	const struct vitals_sample **s;
	uint32_t nr[RULES_NAMED], n = 0, i, j, ns = 0;
	size_t used = 0;

	buf[0] = '\0';
	if (ve == NULL || (s = calloc(ve->nsamples + 1, sizeof(*s))) == NULL)
		return;
	for (i = 0; i < ve->nsamples; i++)
		if (rules_exe_match(&ve->samples[i], exe))
			s[ns++] = &ve->samples[i];
	qsort(s, ns, sizeof(*s), rules_ts_cmp);
	for (i = ns; i-- > 0 && n < RULES_NAMED;) {
		for (j = 0; j < n && nr[j] != s[i]->op; j++)
			;
		if (j == n)
			nr[n++] = s[i]->op;
	}
	for (i = n; i-- > 0 && used < len;) {
		*exited |= nr[i] == SYS_exit || nr[i] == SYS_exit_group;
		snprintf(buf + used, len - used, "%s%u%s", used ? ", " : "",
		    nr[i], rules_syscall_name(nr[i]));
		used = strlen(buf);
	}
	free(s);
}

/*
 * Why it may have gone, from its signals and last system calls, and how
 * grave that is: a crash is harm (crit); a SIGKILL the kernel raised (the
 * OOM killer) or from a sender not recorded is a warning; a SIGKILL a
 * process sent (kill -9, a service manager ending a stop that hung), a
 * request to stop (SIGTERM, SIGINT, SIGHUP, SIGPIPE) or an exit is info,
 * and so is a departure with neither seen: exits are sampled, so most
 * such processes just ended.
 */
static void
rules_10_report(struct rules *r, struct rules_run *run, const char *exe,
    const uint32_t *pid, uint32_t npid, uint32_t prominent, double share)
{
	uint32_t n = run->q->n, nsig = 0;
	struct rules_view *before = rules_view(r, run, n - 2);
	struct rules_out o = { .rule = 10,
		.severity = VITALS_SEV_INFO,
		.first = n - 2,
		.vital = NULL,
		.label = exe,
		.value = share,
		.expected = r->cf->vanish_share,
		.score = prominent,
		.once = 1 };
	struct rules_sig_seen last = { -1, 0, 0 };
	char sigs[256] = "", calls[128], how[320];
	int exited = 0;

	rules_signals(before, pid, npid, sigs, sizeof(sigs), &nsig, &last);
	rules_signals(
	    rules_newest(r, run), pid, npid, sigs, sizeof(sigs), &nsig, &last);
	rules_last_calls(before, exe, calls, sizeof(calls), &exited);
	if (last.k >= 0) {
		snprintf(how, sizeof(how), "%s (%s)",
		    rules_sigs[last.k].crash ? "it crashed"
			: last.kernel	     ? "it was killed by the kernel"
					     : "it was killed",
		    sigs);
		if (rules_sigs[last.k].crash)
			o.severity = VITALS_SEV_CRIT;
		else if (rules_sigs[last.k].sig == SIGKILL &&
		    (last.kernel || last.sender == 0))
			o.severity = VITALS_SEV_WARN;
	} else if (exited)
		snprintf(how, sizeof(how), "it exited");
	else
		snprintf(how, sizeof(how),
		    "no fatal signal or exit was sampled: it ended unseen, "
		    "or hung");
	rules_emit(r, run, &o,
	    "%s (pid %u), prominent in %u earlier epochs, left no sample in "
	    "any vital: %s; its last system calls: %s",
	    exe, npid > 0 ? pid[0] : 0, prominent, how,
	    calls[0] ? calls : "none sampled");
}

/* Whether exe is in a vital before k of v (so it was considered). */
static int
rules_listed_before(const struct rules_view *v, const char *exe, int k)
{
	int j;

	for (j = 0; j < k; j++)
		if (j != RULES_SIGNAL && labels_find(&v->lab[j], exe) != NULL)
			return 1;
	return 0;
}

/*
 * The pids of exe in the previous epoch that lived through at least
 * `vanish_epochs` epochs of the queue before the newest (sampled in each,
 * in any vital), into pid[]; returns how many.  A process that did not is
 * short-lived by nature (one of a script's or a build's), and an exe
 * whose processes come and go vanishes all the time.
 */
static uint32_t
rules_10_lived(struct rules *r, struct rules_run *run, const char *exe,
    uint32_t *pid, uint32_t max)
{
	uint32_t n = run->q->n, cand[8], ncand, other[64], nother, i, j, k,
		 lived, m = 0;

	ncand = rules_pids(rules_view(r, run, n - 2), exe, cand, 8);
	for (i = 0; i < ncand && m < max; i++) {
		for (j = 0, lived = 0; j + 1 < n; j++) {
			nother =
			    rules_pids(rules_view(r, run, j), exe, other, 64);
			for (k = 0; k < nother && other[k] != cand[i]; k++)
				;
			lived += k < nother;
		}
		if (lived >= (uint32_t)r->cf->vanish_epochs)
			pid[m++] = cand[i];
	}
	return m;
}

/*
 * Check one exe seen in the previous epoch: gone now, prominent before,
 * one of its processes long-lived.  Kernel threads (no exe) are left out:
 * they park and wake, and their ends are the kernel's.
 */
static void
rules_10_exe(struct rules *r, struct rules_run *run, const char *exe,
    const struct vitals_sample *rep)
{
	uint32_t n = run->q->n, j, prominent = 0, pid[8], npid;
	double share, best = 0;

	if (rep == NULL || rep->exe == NULL || rep->exe[0] == '\0' ||
	    rules_seen(rules_newest(r, run), exe))
		return;
	for (j = 0; j < n - 1; j++) {
		share = rules_prominence(rules_view(r, run, j), exe);
		prominent += share >= r->cf->vanish_share;
		best = fmax(best, share);
	}
	if (prominent < (uint32_t)r->cf->vanish_epochs ||
	    (npid = rules_10_lived(r, run, exe, pid, 8)) == 0)
		return;
	rules_10_report(r, run, exe, pid, npid, prominent, best);
}

static int
rules_10(struct rules *r, struct rules_run *run)
{
	struct rules_view *prev;
	uint32_t i;
	int k;

	if (run->q->n < (uint32_t)r->cf->vanish_epochs + 1)
		return 0;
	prev = rules_view(r, run, run->q->n - 2);
	for (k = 0; k < RULES_NV; k++)
		for (i = 0; k != RULES_SIGNAL && i < prev->lab[k].n; i++)
			if (!rules_listed_before(
				prev, prev->lab[k].v[i].name, k))
				rules_10_exe(r, run, prev->lab[k].v[i].name,
				    prev->lab[k].v[i].rep);
	return 0;
}

/* ---- the rule table ---- */

static const struct rules_def {
	uint32_t all; /* vitals all needed */
	uint32_t any; /* of which at least one is needed (0: none) */
	int (*check)(struct rules *r, struct rules_run *run);
} rules_defs[RULES_N + 1] = {
	[1] = { RULES_BIT(RULES_CPU) | RULES_BIT(RULES_CACHE), 0, rules_1 },
	[2] = { 0, RULES_BIT(RULES_KMEM) | RULES_BIT(RULES_UMEM), rules_2 },
	[3] = { RULES_BIT(RULES_DISKIO), 0, rules_3 },
	[4] = { RULES_BIT(RULES_CPU),
	    RULES_BIT(RULES_SCHED) | RULES_BIT(RULES_LOCK), rules_4 },
	[5] = { RULES_BIT(RULES_BLOCKING),
	    RULES_BIT(RULES_DISKIO) | RULES_BIT(RULES_LOCK) |
		RULES_BIT(RULES_SOCKET),
	    rules_5 },
	[6] = { RULES_BIT(RULES_UMEM) | RULES_BIT(RULES_BLOCKING) |
		RULES_BIT(RULES_DISKIO),
	    0, rules_6 },
	[7] = { RULES_BIT(RULES_SCHED) | RULES_BIT(RULES_CPU), 0, rules_7 },
	[8] = { RULES_BIT(RULES_SYSCALL) | RULES_BIT(RULES_CPU), 0, rules_8 },
	[9] = { RULES_BIT(RULES_UMEM) | RULES_BIT(RULES_CACHE), 0, rules_9 },
	[10] = { 0, 0, rules_10 },
};

/* "cache, one of sched or lock": the vitals of mask missing in v. */
static void
rules_missing(const struct rules_view *v, uint32_t all, uint32_t any, char *buf,
    size_t len)
{
	size_t used = 0;
	int k, n = 0;

	buf[0] = '\0';
	for (k = 0; k < RULES_NV && used < len; k++) {
		if (!(all & RULES_BIT(k)) || v->ve[k] != NULL)
			continue;
		snprintf(buf + used, len - used, "%s%s", n++ ? ", " : "",
		    rules_vitals[k]);
		used = strlen(buf);
	}
	for (k = 0; any != 0 && k < RULES_NV; k++)
		if ((any & RULES_BIT(k)) && v->ve[k] != NULL)
			return;
	for (k = 0, n = 0; any != 0 && k < RULES_NV && used < len; k++) {
		if (!(any & RULES_BIT(k)))
			continue;
		snprintf(buf + used, len - used, "%s%s",
		    n++ ? " or " : (used ? ", one of " : "one of "),
		    rules_vitals[k]);
		used = strlen(buf);
	}
}

/* Whether rule n can run on v; says once per instance when it cannot. */
static int
rules_can(struct rules *r, const struct rules_view *v, int n)
{
	char missing[256];

	rules_missing(
	    v, rules_defs[n].all, rules_defs[n].any, missing, sizeof(missing));
	if (missing[0] == '\0')
		return 1;
	if (!r->said[n])
		vitals_log(r->ctx, VITALS_LOG_INFO,
		    "rule #%d (%s) needs %s, absent: not checked while "
		    "absent",
		    n, rules_names[n], missing);
	r->said[n] = 1;
	return 0;
}

/* An incident that is over (a rule no longer holds): its end, at info. */
static int
rules_end(void *arg, const struct incident *in, const struct incident_out *o)
{
	struct rules *r = arg;
	char text[768], tm[16];
	int n = atoi(in->key + 1);

	if (n < 1 || n > RULES_N || RULES_ONESHOT(n))
		return 0;
	snprintf(text, sizeof(text),
	    "%s (rule #%d): no longer holds%s%s; the incident since %s is "
	    "over after %u epochs",
	    rules_names[n], n, in->label ? " for " : "",
	    in->label ? in->label : "",
	    incident_time(o->start_ns, tm, sizeof(tm)), o->epochs);
	return incident_end_emit(r->ctx, r->q, in, o, text);
}

static int
rules_epoch(void *state, const struct vitals_queue *q)
{
	struct rules *r = state;
	struct rules_run run = { q, NULL, 0 };
	uint32_t i;
	int n;

	r->q = q;
	if ((run.views = calloc(q->n, sizeof(*run.views))) == NULL)
		return -ENOMEM;
	for (n = 1; n <= RULES_N; n++) {
		if (r->enabled[n] && rules_can(r, rules_newest(r, &run), n) &&
		    rules_defs[n].check(r, &run) != 0)
			run.rc = -ENOMEM;
	}
	for (i = 0; i < q->n; i++)
		rules_view_free(&run.views[i]);
	free(run.views);
	if (incident_sweep(&r->inc, q, rules_end, r) != 0)
		run.rc = -ENOMEM;
	return run.rc;
}

static void
rules_fini(void *state)
{
	struct rules *r = state;

	if (r != NULL)
		incident_free(&r->inc);
	free(r);
}

/* "3" or "#3" -> 3; 0 if it is not a rule number. */
static int
rules_number(const char *s)
{
	char *end;
	long n;

	if (*s == '#')
		s++;
	n = strtol(s, &end, 10);
	return end != s && *end == '\0' && n >= 1 && n <= RULES_N ? (int)n : 0;
}

/* Every entry of `rules` is a rule number. */
static int
rules_check(const void *config, char *why, size_t len)
{
	const struct rules_config *cf = config;
	uint32_t i;

	for (i = 0; i < cf->rules.n; i++) {
		if (rules_number(cf->rules.v[i]) == 0) {
			snprintf(why, len,
			    "option 'rules': '%s' is not a rule "
			    "number 1..%d",
			    cf->rules.v[i], RULES_N);
			return -EINVAL;
		}
	}
	return 0;
}

static int
rules_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct rules_config *cf = config;
	struct rules *r;
	uint32_t i;
	int n;

	r = vitals_init_state(ctx, rules_check, config, sizeof(*r), &n);
	if (r == NULL)
		return n;
	for (n = 1; n <= RULES_N; n++)
		r->enabled[n] = cf->rules.n == 0;
	for (i = 0; i < cf->rules.n; i++)
		r->enabled[rules_number(cf->rules.v[i])] = 1;
	r->ctx = ctx;
	r->cf = cf;
	r->base_ns = vitals_settings(ctx)->epoch_ns;
	r->inc.k = (uint32_t)cf->persist;
	*state = r;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct rules_config),
	.name = "rules",
	.version = "0.1.0",
	.description =
	    "Chopstix diagnosis rules #1-#10 over the vitals present",
	.options = rules_options,
	.init = rules_init,
	.fini = rules_fini,
	.epoch = rules_epoch,
	.check = rules_check,
};
