/* SPDX-License-Identifier: MIT */
/*
 * mkstore: write a store of simulated epochs without waiting for them.  A
 * seeded Zipf event stream per host and vital goes through the real sketch
 * engine (core/engine/engine.h) at simulated times, each epoch is closed at its
 * simulated end and saved with vitals_epoch_save, and anomalies (or, with
 * --faults, one fault per filter: mkfaults.c) are injected at known
 * times, listed in a JSON manifest.  With --proc every host also gets the
 * proc probe's black-box metrics (one observation per simulated second),
 * where --disk-fault and --net-fault give one host a slow disk or a cut
 * network for the peer filter.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/store.h>

#include "config.h"
#include "engine.h"
#include "mkstore.h"
#include "option.h"

#define MK_ROGUE_EXE "/usr/bin/cryptominer"
#define MK_ROGUE_LABEL 0x7f3a0000ull /* searched from here: see mk_free_label */
#define MK_NEW_LABEL 0x66a00000ull
#define MK_NEW_EXE 2 /* exe index owning the new dominating label */
#define MK_VANISH_EXE 1 /* exe index that vanishes */

/* Kinds of anomaly, in the order they are placed along the store. */
enum { MK_CPU_BURST, MK_RATE_X8, MK_NEW_LABEL_K, MK_VANISH };

static const char *const mk_kind_names[MK_NKINDS] = { "cpu_burst", "rate_x8",
	"new_label", "vanishing_exe" };
/* Where each starts, as a share of the store's epochs. */
static const double mk_kind_at[MK_NKINDS] = { 0.25, 0.5, 0.65, 0.8 };

static uint64_t
mk_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return vitals_hash_mix64(*s);
}

static double
mk_uniform(uint64_t *s)
{
	return (double)(mk_next(s) >> 11) * 0x1.0p-53;
}

static uint32_t
mk_fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static uint32_t
mk_rank(const struct mk *m, uint64_t *rng)
{
	double u = mk_uniform(rng);
	uint32_t lo = 0, hi = m->o.labels - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ---- one event ---- */

static int
mk_is(const char *vital, const char *a, const char *b, const char *c)
{
	return strcmp(vital, a) == 0 || (b && strcmp(vital, b) == 0) ||
	    (c && strcmp(vital, c) == 0);
}

/* Weight of one event by vital: samples, ns of delay, bytes. */
static uint64_t
mk_weight(const char *vital, uint64_t *rng)
{
	if (mk_is(vital, "sched", "blocking", "lock"))
		return 1000 + mk_next(rng) % 40000;
	if (mk_is(vital, "diskio", "socket", NULL))
		return 4096 * (1 + mk_next(rng) % 16);
	return 1;
}

double
mk_mean_weight(const char *vital)
{
	if (mk_is(vital, "sched", "blocking", "lock"))
		return 1000 + 39999 / 2.0;
	if (mk_is(vital, "diskio", "socket", NULL))
		return 4096 * 8.5;
	return 1;
}

static const char *
mk_unit(const char *vital)
{
	if (mk_is(vital, "sched", "blocking", "lock"))
		return "ns";
	if (mk_is(vital, "diskio", "socket", NULL))
		return "bytes";
	if (mk_is(vital, "cpu", "cache", NULL))
		return "samples";
	if (strcmp(vital, "umem") == 0)
		return "faults";
	if (mk_is(vital, "kmem", "kmem_free", NULL))
		return "pages";
	if (strcmp(vital, "syscall") == 0)
		return "calls";
	if (strcmp(vital, "signal") == 0)
		return "signals";
	return "events";
}

/* Common system calls and harmless signals, picked by label. */
static const uint32_t mk_syscalls[] = { 0, 1, 3, 7, 35, 44, 45, 202, 232, 257 };
static const uint32_t mk_signals[] = { 10, 14, 17, 28, 29 };
#define MK_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The vital's op and args for an event, as the kernel probes fill them
 * (doc/probes.md, the vitals contract), derived from its label so that they
 * cost no random draw: a label is one site doing one thing.
 */
static void
mk_details(
    const struct mk *m, uint32_t h, const char *vital, struct vitals_event *ev)
{
	uint64_t z = vitals_hash_mix64(ev->label), free = 0;

	ev->args[0] = ev->weight;
	if (mk_is(vital, "umem", "kmem", NULL))
		free = mkf_free_memory(m, h, ev->ts_ns);
	if (mk_is(vital, "cpu", "cache", NULL)) {
		ev->args[0] = ev->label;
	} else if (strcmp(vital, "sched") == 0) {
		ev->args[1] = ev->tid;
	} else if (strcmp(vital, "blocking") == 0) {
		ev->op = 1; /* TASK_INTERRUPTIBLE */
	} else if (strcmp(vital, "diskio") == 0) {
		ev->op = (uint32_t)(z & 1);
		ev->args[1] = 100000 + (z >> 8) % 5000000; /* latency ns */
		ev->args[2] = 8u << 20; /* sda as the kernel's dev_t */
		ev->args[3] = (z >> 16) % 100000000;
	} else if (strcmp(vital, "umem") == 0) {
		ev->args[0] = 0x7f0000000000ull + (z % 1000000) * MK_PAGE;
		ev->args[1] = free;
	} else if (strcmp(vital, "kmem") == 0) {
		ev->args[0] = 0; /* order */
		ev->args[1] = 0xcc0; /* GFP_KERNEL */
		ev->args[2] = free;
	} else if (strcmp(vital, "kmem_free") == 0) {
		ev->args[0] = 0;
	} else if (strcmp(vital, "syscall") == 0) {
		ev->op = mk_syscalls[z % MK_NELEM(mk_syscalls)];
		ev->args[0] = (z >> 8) % 64; /* a file descriptor */
	} else if (strcmp(vital, "signal") == 0) {
		ev->op = mk_signals[z % MK_NELEM(mk_signals)];
		ev->args[0] = 0; /* SI_USER */
		ev->args[1] = 1; /* sent by init */
		ev->args[2] = ev->pid;
	}
}

/*
 * Count one event of exe x with label at ts; xs, when not NULL, is the
 * injected stream it belongs to (its weight, op and args win).
 */
static void
mk_emit(const struct mk *m, uint32_t h, struct vitals_vital *v,
    const char *vital, uint64_t label, const struct mk_exe *x, uint64_t ts,
    uint64_t *rng, const struct mk_extra *xs)
{
	uint64_t k[2], u[2];
	struct vitals_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.label = label;
	ev.weight =
	    xs != NULL && xs->weight ? xs->weight : mk_weight(vital, rng);
	ev.exe_id = x->id;
	ev.uid = MK_UID;
	ev.pid = ev.tid = x->pid;
	k[0] = MK_KBASE + (vitals_hash_mix64(label) & 0xfffff0);
	k[1] = MK_KBASE + (vitals_hash_mix64(label + 1) & 0xfffff0);
	u[0] = label + 0x10;
	u[1] = MK_UBASE + (vitals_hash_mix64(~label) & 0xffff0);
	ev.nkstack = 2;
	ev.nustack = 2;
	ev.kstack = k;
	ev.ustack = u;
	ev.exe = x->path;
	ev.comm = x->comm;
	mk_details(m, h, vital, &ev);
	if (xs != NULL && xs->op >= 0)
		ev.op = (uint32_t)xs->op;
	if (xs != NULL && xs->set_args)
		memcpy(ev.args, xs->args, sizeof(ev.args));
	vitals_emit(v, &ev);
}

/* ---- one vital's epoch ---- */

/* The anomaly of kind active at epoch i on host, or NULL. */
static const struct mk_anomaly *
mk_active(const struct mk *m, int kind, uint64_t i, uint32_t host)
{
	const struct mk_anomaly *a;
	int k;

	for (k = 0; k < m->nan; k++) {
		a = &m->an[k];
		if (a->kind == kind && host == m->odd && i >= a->first &&
		    (kind == MK_VANISH || i < a->first + a->n))
			return a;
	}
	return NULL;
}

/*
 * The default anomalies in one vital's epoch: a rate times factor, a
 * vanished exe, and a rogue exe's or a new label's events (factor times
 * the top label's).
 */
static void
mk_anomaly_changes(const struct mk *m, uint32_t h, int vi, uint64_t i,
    uint64_t regular, struct mk_change *c)
{
	const struct mk_anomaly *a, *rogue, *fresh;
	struct mk_extra *x = &c->extra[c->nextra];
	uint64_t n = regular;

	if ((a = mk_active(m, MK_RATE_X8, i, h)) != NULL && a->vital == vi) {
		n = (uint64_t)((double)n * a->factor);
		c->scale = a->factor;
	}
	if (mk_active(m, MK_VANISH, i, h) != NULL)
		c->absent |= 1u << MK_VANISH_EXE;
	rogue = mk_active(m, MK_CPU_BURST, i, h);
	fresh = mk_active(m, MK_NEW_LABEL_K, i, h);
	a = rogue != NULL && rogue->vital == vi	  ? rogue
	    : fresh != NULL && fresh->vital == vi ? fresh
						  : NULL;
	if (a == NULL)
		return;
	*x = (struct mk_extra){ .label =
				    a == rogue ? m->rogue_label : m->new_label,
		.nlabels = 1,
		.x = a == rogue ? &m->rogue : &m->exes[MK_NEW_EXE],
		.op = -1 };
	x->n = (uint64_t)(a->factor * (double)n * m->cdf[0]);
	c->nextra++;
}

/*
 * Emit the events of the extra streams due before regular event k of n
 * (all that are left when k == n), at ts.
 */
static void
mk_extras(const struct mk *m, uint32_t h, struct vitals_vital *v,
    const char *vital, const struct mk_change *c, uint64_t *done, uint64_t k,
    uint64_t n, uint64_t ts, uint64_t *rng)
{
	const struct mk_extra *x;
	uint32_t s;

	for (s = 0; s < c->nextra; s++) {
		x = &c->extra[s];
		if (x->at_end && k < n)
			continue;
		for (; done[s] < x->n && (k == n || done[s] * n <= k * x->n);
		     done[s]++)
			mk_emit(m, h, v, vital,
			    x->label + (done[s] % x->nlabels) * 0x100, x->x, ts,
			    rng, x);
	}
}

/*
 * One vital's events of epoch i on host h, from start over one epoch: the
 * Zipf stream, changed and interleaved with injected streams as a probe
 * would see them.
 */
static void
mk_vital_epoch(const struct mk *m, struct vitals_vital *v, int vi, uint32_t h,
    uint64_t i, uint64_t start, uint64_t *rng)
{
	const char *name = m->o.vitals[vi];
	uint64_t n, k, len = m->o.epoch_ns, ts, done[MK_MAX_EXTRA] = { 0 };
	struct mk_change c;
	uint32_t r, e, rep;

	memset(&c, 0, sizeof(c));
	c.scale = 1;
	c.boost = 1;
	n = m->o.rate * len / MK_NS;
	if (m->o.odd != NULL && h == m->odd)
		n = (uint64_t)((double)n * m->o.odd_scale);
	mk_anomaly_changes(m, h, vi, i, n, &c);
	if (m->faults != NULL)
		mkf_changes(m, h, vi, i, n, &c);
	n = (uint64_t)((double)n * c.scale);
	for (k = 0; k < n; k++) {
		ts = start + k * len / n;
		mk_extras(m, h, v, name, &c, done, k, n, ts, rng);
		r = mk_rank(m, rng);
		e = r % MK_EXES;
		if (c.absent & (1u << e))
			continue;
		for (rep = (c.boosted >> e) & 1 ? c.boost : 1; rep > 0; rep--)
			mk_emit(m, h, v, name,
			    MK_UBASE + (uint64_t)(r + 1) * 0x100, &m->exes[e],
			    ts, rng, NULL);
	}
	mk_extras(m, h, v, name, &c, done, n, n, start + len - 1, rng);
}

/* ---- the proc probe's metrics (--proc) ---- */

/* A normal deviate from the generator (Box-Muller). */
static double
mk_gauss(uint64_t *s)
{
	double u = mk_uniform(s), v = mk_uniform(s);

	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* x times a factor of noise cv (never below 0). */
static double
mk_noisy(uint64_t *s, double x, double cv)
{
	double y = x * (1 + cv * mk_gauss(s));

	return y > 0 ? y : 0;
}

/* One observation of a metric, unless an earlier one failed (*r). */
static void
mk_put(struct engine *eng, int *r, const char *name, const char *unit, double v)
{
	if (*r == 0)
		*r = engine_metric_put(eng, name, unit, v);
}

/* The first epoch of the peer faults. */
static uint64_t
mk_fault_epoch(const struct mk *m)
{
	return (uint64_t)(m->o.fault_at * (double)m->nepochs);
}

/*
 * Host h's proc metrics in epoch i, one observation a second: a load
 * that all hosts share (slow waves, as a job that runs on all of them),
 * noise of each host's own, and the faults from their epoch on.
 */
static int
mk_proc_epoch(const struct mk *m, struct engine *eng, uint32_t h, uint64_t i)
{
	uint64_t s, secs = m->o.epoch_ns / MK_NS, rng;
	int disk = (int32_t)h == m->o.disk_fault && i >= mk_fault_epoch(m);
	int net = (int32_t)h == m->o.net_fault && i >= mk_fault_epoch(m);
	double load, t, util;
	int r = 0;

	rng = vitals_hash_mix64(
	    m->o.seed ^ ((uint64_t)mk_fnv(m->o.hosts[h]) << 20) ^ i);
	for (s = 0; s < (secs ? secs : 1) && r == 0; s++) {
		t = (double)(i * secs + s);
		load = 1 + 0.3 * sin(2 * M_PI * t / 5400) +
		    0.1 * sin(2 * M_PI * t / 780);
		util = mk_noisy(&rng, 20 * load * (disk ? 3 : 1), 0.2);
		mk_put(eng, &r, "proc.cpu.user_pct", "%",
		    mk_noisy(&rng, 30 * load, 0.2));
		mk_put(eng, &r, "proc.cpu.system_pct", "%",
		    mk_noisy(&rng, 10 * load, 0.2));
		mk_put(eng, &r, "proc.cpu.iowait_pct", "%",
		    mk_noisy(&rng, disk ? 12 : 2, 0.3));
		mk_put(eng, &r, "proc.disk.sda.rd_sec_s", "sectors/s",
		    mk_noisy(&rng, 2000 * load, 0.3));
		mk_put(eng, &r, "proc.disk.sda.wr_sec_s", "sectors/s",
		    mk_noisy(&rng, 4000 * load, 0.3));
		mk_put(eng, &r, "proc.disk.sda.await_ms", "ms",
		    mk_noisy(&rng, disk ? 40 : 5, 0.3));
		mk_put(eng, &r, "proc.disk.sda.avgqu_sz", "requests",
		    mk_noisy(&rng, 0.5 * load * (disk ? 6 : 1), 0.3));
		mk_put(eng, &r, "proc.disk.sda.util_pct", "%",
		    util > 100 ? 100 : util);
		mk_put(eng, &r, "proc.net.eth0.rxbyt_s", "bytes/s",
		    mk_noisy(&rng, 20e6 * load * (net ? 0.3 : 1), 0.2));
		mk_put(eng, &r, "proc.net.eth0.txbyt_s", "bytes/s",
		    mk_noisy(&rng, 20e6 * load * (net ? 0.3 : 1), 0.2));
		mk_put(eng, &r, "proc.net.eth0.rxerr_s", "packets/s", 0);
		mk_put(eng, &r, "proc.net.eth0.txerr_s", "packets/s", 0);
		mk_put(eng, &r, "proc.net.eth0.rxdrop_s", "packets/s",
		    mk_uniform(&rng) < 0.01 ? 1 : 0);
		mk_put(eng, &r, "proc.net.eth0.txdrop_s", "packets/s", 0);
		mk_put(eng, &r, "proc.tcp.retrans_s", "segments/s",
		    mk_noisy(&rng, net ? 60 : 2, 0.5));
	}
	return r;
}

/* All epochs of host h. */
static int
mk_host(struct mk *m, uint32_t h)
{
	struct vitals_vital *v[MK_MAX_VITALS];
	uint64_t rng[MK_MAX_VITALS], i, start;
	const struct vitals_epoch *e;
	char err[1024];
	struct engine *eng;
	uint32_t k;
	int r = 0;

	if ((eng = engine_new(m->cfg, m->o.hosts[h])) == NULL)
		return -ENOMEM;
	for (k = 0; k < m->o.nvitals && r == 0; k++) {
		r = engine_vital_open(
		    eng, m->o.vitals[k], mk_unit(m->o.vitals[k]), &v[k]);
		rng[k] = vitals_hash_mix64(m->o.seed ^ mk_fnv(m->o.hosts[h]) ^
		    ((uint64_t)mk_fnv(m->o.vitals[k]) << 32));
	}
	engine_start(eng, m->o.start_ns);
	for (i = 0; i < m->nepochs && r == 0; i++) {
		start = m->o.start_ns + i * m->o.epoch_ns;
		for (k = 0; k < m->o.nvitals; k++)
			mk_vital_epoch(m, v[k], (int)k, h, i, start, &rng[k]);
		if (m->o.proc && (r = mk_proc_epoch(m, eng, h, i)) != 0) {
			fprintf(stderr, "mkstore: proc metrics: %s\n",
			    strerror(-r));
			break;
		}
		e = engine_close(eng, start + m->o.epoch_ns, 0);
		if ((r = vitals_epoch_save(
			 e, m->o.out, NULL, 0, err, sizeof(err))) != 0)
			fprintf(stderr, "mkstore: %s\n", err);
		engine_release(eng);
		if (!m->o.quiet && i % 500 == 499)
			fprintf(stderr, "mkstore: %s: %llu/%llu epochs\n",
			    m->o.hosts[h], (unsigned long long)i + 1,
			    (unsigned long long)m->nepochs);
	}
	engine_free(eng);
	return r;
}

/* ---- anomalies and manifest ---- */

int
mk_vital_index(const struct mk *m, const char *name)
{
	uint32_t k;

	for (k = 0; k < m->o.nvitals; k++)
		if (strcmp(m->o.vitals[k], name) == 0)
			return (int)k;
	return -1;
}

/* The vital name, else the vital of index fallback, else the first. */
static int
mk_vital_or(const struct mk *m, const char *name, int fallback)
{
	int k = mk_vital_index(m, name);

	if (k >= 0)
		return k;
	return fallback < (int)m->o.nvitals ? fallback : 0;
}

static void
mk_plan(struct mk *m)
{
	static const char *const vital[MK_NKINDS] = { "cpu", "diskio", "sched",
		NULL };
	static const double factor[MK_NKINDS] = { 3, 8, 2, 0 };
	uint64_t len = m->nepochs / 50;
	int k;

	len = len < 3 ? 3 : len > 10 ? 10 : len;
	if (m->o.clean || m->o.faults)
		return;
	for (k = 0; k < MK_NKINDS; k++) {
		m->an[k].kind = k;
		m->an[k].vital = vital[k] ? mk_vital_or(m, vital[k], k) : -1;
		m->an[k].first = (uint64_t)(mk_kind_at[k] * (double)m->nepochs);
		m->an[k].n = k == MK_VANISH ? m->nepochs - m->an[k].first : len;
		m->an[k].factor = factor[k];
	}
	m->nan = MK_NKINDS;
}

static json_t *
mk_anomaly_json(const struct mk *m, const struct mk_anomaly *a)
{
	const struct mk_exe *x = a->kind == MK_CPU_BURST ? &m->rogue
	    : a->kind == MK_NEW_LABEL_K			 ? &m->exes[MK_NEW_EXE]
	    : a->kind == MK_VANISH ? &m->exes[MK_VANISH_EXE]
				   : NULL;
	uint64_t start = m->o.start_ns + a->first * m->o.epoch_ns;
	char label[32];
	json_t *o;

	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f}", "kind",
	    mk_kind_names[a->kind], "filter", "ewma", "host",
	    m->o.hosts[m->odd], "start_ns", (json_int_t)start, "end_ns",
	    (json_int_t)(start + a->n * m->o.epoch_ns), "first_epoch",
	    (json_int_t)a->first, "epochs", (json_int_t)a->n, "factor",
	    a->factor);
	if (o == NULL)
		return NULL;
	if (a->vital >= 0)
		json_object_set_new(
		    o, "vital", json_string(m->o.vitals[a->vital]));
	if (x != NULL) {
		json_object_set_new(o, "exe", json_string(x->path));
		json_object_set_new(o, "comm", json_string(x->comm));
	}
	if (a->kind == MK_CPU_BURST || a->kind == MK_NEW_LABEL_K) {
		snprintf(label, sizeof(label), "0x%llx",
		    (unsigned long long)(a->kind == MK_CPU_BURST
			    ? m->rogue_label
			    : m->new_label));
		json_object_set_new(o, "label", json_string(label));
	}
	return o;
}

/* The peer faults of --disk-fault and --net-fault in anomalies a. */
static void
mk_peer_manifest(const struct mk *m, json_t *a)
{
	static const char *const kind[2] = { "slow_disk", "cut_network" };
	static const char *const cls[2] = { "storage", "network" };
	int32_t host[2] = { m->o.disk_fault, m->o.net_fault };
	uint64_t at = m->o.start_ns + mk_fault_epoch(m) * m->o.epoch_ns;
	int k;

	for (k = 0; k < 2; k++)
		if (host[k] >= 0 && (uint32_t)host[k] < m->o.nhosts)
			json_array_append_new(a,
			    json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "kind",
				kind[k], "filter", "peer", "host",
				m->o.hosts[host[k]], "class", cls[k],
				"start_ns", (json_int_t)at, "end_ns",
				(json_int_t)(m->o.start_ns +
				    m->nepochs * m->o.epoch_ns)));
}

static int
mk_manifest(const struct mk *m)
{
	char path[4096];
	json_t *j, *hosts, *vitals, *an;
	uint32_t k;
	int r;

	if (m->o.manifest != NULL)
		snprintf(path, sizeof(path), "%s", m->o.manifest);
	else
		snprintf(path, sizeof(path), "%s/manifest.json", m->o.out);
	j = json_pack("{s:I, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:i, s:f, "
		      "s:[], s:[], s:[]}",
	    "seed", (json_int_t)m->o.seed, "clean", m->o.clean, "faults",
	    m->o.faults, "start_ns", (json_int_t)m->o.start_ns, "end_ns",
	    (json_int_t)(m->o.start_ns + m->nepochs * m->o.epoch_ns),
	    "epoch_ns", (json_int_t)m->o.epoch_ns, "epochs",
	    (json_int_t)m->nepochs, "rate", (json_int_t)m->o.rate, "labels",
	    (int)m->o.labels, "zipf", m->o.zipf, "hosts", "vitals",
	    "anomalies");
	if (j == NULL)
		return -ENOMEM;
	if (m->o.odd != NULL)
		json_object_set_new(j, "odd",
		    json_pack("{s:s, s:f}", "host", m->o.odd, "scale",
			m->o.odd_scale));
	hosts = json_object_get(j, "hosts");
	vitals = json_object_get(j, "vitals");
	an = json_object_get(j, "anomalies");
	for (k = 0; k < m->o.nhosts; k++)
		json_array_append_new(hosts, json_string(m->o.hosts[k]));
	for (k = 0; k < m->o.nvitals; k++)
		json_array_append_new(vitals, json_string(m->o.vitals[k]));
	for (k = 0; k < (uint32_t)m->nan; k++)
		json_array_append_new(an, mk_anomaly_json(m, &m->an[k]));
	mk_peer_manifest(m, an);
	if ((r = m->faults ? mkf_manifest(m, an) : 0) != 0) {
		json_decref(j);
		return r;
	}
	r = json_dump_file(j, path, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	if (r != 0)
		fprintf(stderr, "mkstore: cannot write %s\n", path);
	json_decref(j);
	return r;
}

/* ---- setup ---- */

uint64_t
mk_free_label(const struct mk *m, uint64_t from, const struct mk_exe *x)
{
	uint32_t mask = m->cfg->sketch.hca_size - 1, r, slot;
	uint64_t label;

	for (label = from;; label += 0x100) {
		slot =
		    (uint32_t)(vitals_label_hash(label, x->id, MK_UID) & mask);
		for (r = 0; r < m->o.labels; r++)
			if ((vitals_label_hash(
				 MK_UBASE + (uint64_t)(r + 1) * 0x100,
				 m->exes[r % MK_EXES].id, MK_UID) &
				mask) == slot)
				break;
		if (r == m->o.labels || label - from > 0x100 * 4096ull)
			return label;
	}
}

void
mk_exe_init(struct mk_exe *x, const char *path)
{
	const char *base = strrchr(path, '/');

	snprintf(x->path, sizeof(x->path), "%s", path);
	snprintf(x->comm, sizeof(x->comm), "%.15s", base ? base + 1 : path);
	x->id = mk_fnv(path);
	x->pid = 1000 + (x->id % 30000);
}

double
mk_share(const struct mk *m, uint32_t r)
{
	return r < m->o.labels ? m->cdf[r] : 1.0;
}

double
mk_exe_share(const struct mk *m, uint32_t e)
{
	double share = 0;
	uint32_t r;

	for (r = e; r < m->o.labels; r += MK_EXES)
		share += mk_share(m, r) - (r > 0 ? mk_share(m, r - 1) : 0);
	return share;
}

static int
mk_setup(struct mk *m)
{
	char path[32];
	double sum = 0;
	uint32_t i;

	if ((m->cdf = calloc(m->o.labels, sizeof(*m->cdf))) == NULL ||
	    (m->cfg = config_default()) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->o.labels; i++)
		m->cdf[i] = sum += pow((double)i + 1, -m->o.zipf);
	for (i = 0; i < m->o.labels; i++)
		m->cdf[i] /= sum;
	m->cdf[m->o.labels - 1] = 1.0;
	for (i = 0; i < MK_EXES; i++) {
		snprintf(path, sizeof(path), "/usr/bin/synth-%u", i);
		mk_exe_init(&m->exes[i], path);
	}
	mk_exe_init(&m->rogue, MK_ROGUE_EXE);
	m->rogue_label = mk_free_label(m, MK_ROGUE_LABEL, &m->rogue);
	m->new_label = mk_free_label(m, MK_NEW_LABEL, &m->exes[MK_NEW_EXE]);
	m->cfg->epoch_ns = m->o.epoch_ns;
	m->cfg->sketch.max_samples = m->o.max_samples;
	m->cfg->sample_memory = 0; /* the samples the options say, all */
	m->cfg->sketch.stack_depth = 4;
	/* A fixed HCA: mk_free_label() places labels in its slots. */
	m->cfg->sketch.hca_size = m->cfg->sketch.hca_max = 1024;
	m->nepochs = m->o.span_ns / m->o.epoch_ns;
	if (m->o.start_ns == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		m->o.start_ns = ((uint64_t)ts.tv_sec * MK_NS) / m->o.epoch_ns *
			m->o.epoch_ns -
		    m->nepochs * m->o.epoch_ns;
	}
	m->o.start_ns -= m->o.start_ns % m->o.epoch_ns;
	if (m->o.odd != NULL) {
		for (i = 0; i < m->o.nhosts; i++)
			if (strcmp(m->o.hosts[i], m->o.odd) == 0)
				break;
		if (i == m->o.nhosts) {
			fprintf(
			    stderr, "mkstore: --odd: no host %s\n", m->o.odd);
			return -EINVAL;
		}
		m->odd = i;
	}
	mk_plan(m);
	return m->o.faults ? mkf_plan(m) : 0;
}

static void
mk_usage(FILE *f)
{
	fprintf(f,
	    "usage: mkstore --out DIR [--days N | --span DURATION] [--epoch "
	    "60s]\n"
	    "               [--hosts N | --host NAME,...] [--start "
	    "UNIXSECONDS]\n"
	    "               [--vitals cpu,sched,diskio] [--rate R] [--labels "
	    "N]\n"
	    "               [--zipf S] [--seed S] [--max-samples N] [--clean]\n"
	    "               [--faults] [--odd NAME[=FACTOR]] [--manifest FILE]\n"
	    "               [--quiet] [--proc [--disk-fault I] [--net-fault I] "
	    "[--fault-at SHARE]]\n"
	    "\n"
	    "Writes simulated epochs (default 1 day of 60s epochs, one host\n"
	    "'node-1', cpu/sched/diskio at 200 events/s each over 200 Zipf\n"
	    "labels) ending at the last epoch boundary before now, with a cpu\n"
	    "burst of a rogue exe, a rate x8, a new dominating label and a\n"
	    "vanishing exe on the first host (none with --clean), and\n"
	    "DIR/manifest.json saying where they are.  --faults injects\n"
	    "instead one fault for each filter (ewma, threshold, rules #2,\n"
	    "#3, #8, #10, affinity, diff, callmodel), by default into\n"
	    "" MKF_VITALS "; the store needs at least 3 hours.  --proc adds\n"
	    "the proc probe's metrics to every host, and --disk-fault I\n"
	    "(--net-fault I) gives host I (1 = the first) a slow disk (a cut\n"
	    "network) from SHARE of the store on (default 0.5), for the\n"
	    "peer filter.  --odd puts the anomalies on host NAME instead of\n"
	    "the first and multiplies its event rates by FACTOR (default 1)\n"
	    "over the whole span: the odd one of a fleet.\n");
}

/* Split a comma list into v (strdup'd), at most max items. */
static int
mk_list(const char *s, char **v, uint32_t *n, uint32_t max)
{
	char *copy = strdup(s), *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && *n < max;
	     tok = strtok_r(NULL, ",", &save))
		v[(*n)++] = strdup(tok);
	free(copy);
	return *n > 0 ? 0 : -EINVAL;
}

static int
mk_number(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || !(*out >= min && *out <= max)) {
		fprintf(stderr,
		    "mkstore: %s: expected a number from %g to %g, "
		    "got \"%s\"\n",
		    opt, min, max, s);
		return -EINVAL;
	}
	return 0;
}

static int
mk_duration(const char *opt, const char *s, uint64_t *out)
{
	if (option_parse_duration(s, out) != 0 || *out == 0) {
		fprintf(stderr,
		    "mkstore: %s: expected a duration, got \"%s\"\n", opt, s);
		return -EINVAL;
	}
	return 0;
}

/* --odd NAME[=FACTOR]: the host, and its rates' factor (default 1). */
static int
mk_odd(struct mk_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');

	o->odd_scale = 1;
	if (eq != NULL &&
	    mk_number("--odd", eq + 1, 0.01, 100, &o->odd_scale) != 0)
		return -EINVAL;
	o->odd = eq != NULL ? strndup(arg, (size_t)(eq - arg)) : strdup(arg);
	return 0;
}

static int
mk_opt(struct mk_opts *o, int c, const char *arg)
{
	char name[32];
	double d;

	switch (c) {
	case 'o':
		o->out = arg;
		return 0;
	case 'm':
		o->manifest = arg;
		return 0;
	case 'C':
		o->clean = 1;
		return 0;
	case 'F':
		o->faults = 1;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case 'd':
		if (mk_number("--days", arg, 0.0001, 3650, &d) != 0)
			return -EINVAL;
		o->span_ns = (uint64_t)(d * 86400.0 * (double)MK_NS);
		return 0;
	case 'S':
		return mk_duration("--span", arg, &o->span_ns);
	case 'e':
		return mk_duration("--epoch", arg, &o->epoch_ns);
	case 'H':
		if (mk_number("--hosts", arg, 1, MK_MAX_HOSTS, &d) != 0)
			return -EINVAL;
		for (o->nhosts = 0; o->nhosts < (uint32_t)d; o->nhosts++) {
			snprintf(name, sizeof(name), "node-%u", o->nhosts + 1);
			o->hosts[o->nhosts] = strdup(name);
		}
		return 0;
	case 'h':
		return mk_list(arg, o->hosts, &o->nhosts, MK_MAX_HOSTS);
	case 'v':
		return mk_list(arg, o->vitals, &o->nvitals, MK_MAX_VITALS);
	case 't':
		if (mk_number("--start", arg, 1, 4e9, &d) != 0)
			return -EINVAL;
		o->start_ns = (uint64_t)d * MK_NS;
		return 0;
	case 's':
		if (mk_number("--seed", arg, 0, 1e18, &d) != 0)
			return -EINVAL;
		o->seed = (uint64_t)d;
		return 0;
	case 'r':
		if (mk_number("--rate", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->rate = (uint64_t)d;
		return 0;
	case 'l':
		if (mk_number("--labels", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->labels = (uint32_t)d;
		return 0;
	case 'z':
		return mk_number("--zipf", arg, 0, 4, &o->zipf);
	case 'P':
		o->proc = 1;
		return 0;
	case 'D':
	case 'N':
		if (mk_number(c == 'D' ? "--disk-fault" : "--net-fault", arg, 1,
			MK_MAX_HOSTS, &d) != 0)
			return -EINVAL;
		*(c == 'D' ? &o->disk_fault : &o->net_fault) = (int32_t)d - 1;
		return 0;
	case 'A':
		return mk_number("--fault-at", arg, 0, 1, &o->fault_at);
	case 'O':
		return mk_odd(o, arg);
	case 'M':
		if (mk_number("--max-samples", arg, 1, 1e6, &d) != 0)
			return -EINVAL;
		o->max_samples = (uint32_t)d;
		return 0;
	}
	mk_usage(stderr);
	return -EINVAL;
}

static int
mk_args(int argc, char **argv, struct mk_opts *o)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "days", required_argument, NULL, 'd' },
		{ "span", required_argument, NULL, 'S' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "host", required_argument, NULL, 'h' },
		{ "vitals", required_argument, NULL, 'v' },
		{ "start", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "labels", required_argument, NULL, 'l' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "max-samples", required_argument, NULL, 'M' },
		{ "odd", required_argument, NULL, 'O' },
		{ "clean", no_argument, NULL, 'C' },
		{ "faults", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "proc", no_argument, NULL, 'P' },
		{ "disk-fault", required_argument, NULL, 'D' },
		{ "net-fault", required_argument, NULL, 'N' },
		{ "fault-at", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, '?' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1)
		if (mk_opt(o, c, optarg) != 0)
			return 2;
	if (o->out == NULL || optind != argc) {
		mk_usage(stderr);
		return 2;
	}
	if (o->nhosts == 0)
		o->hosts[o->nhosts++] = strdup("node-1");
	if (o->nvitals == 0)
		mk_list(o->faults ? MKF_VITALS : "cpu,sched,diskio", o->vitals,
		    &o->nvitals, MK_MAX_VITALS);
	if (o->span_ns < o->epoch_ns) {
		fprintf(
		    stderr, "mkstore: the span is shorter than one epoch\n");
		return 2;
	}
	return 0;
}

/* Write the store and its manifest; exit 0, 1 (failure) or 2 (usage). */
int
main(int argc, char **argv)
{
	struct mk m;
	char err[1024];
	uint32_t h;
	int r;

	memset(&m, 0, sizeof(m));
	m.o.span_ns = 86400 * MK_NS;
	m.o.epoch_ns = 60 * MK_NS;
	m.o.seed = 1;
	m.o.rate = 200;
	m.o.labels = 200;
	m.o.zipf = 1.0;
	m.o.max_samples = 128;
	m.o.disk_fault = m.o.net_fault = -1;
	m.o.fault_at = 0.5;
	if ((r = mk_args(argc, argv, &m.o)) != 0)
		return r;
	/* Refuse a bad plan (e.g. --faults in too short a span) before mkdir. */
	if ((r = mk_setup(&m)) != 0) {
		if (r == -ENOMEM)
			fprintf(stderr, "mkstore: out of memory\n");
		return r == -EINVAL ? 2 : 1;
	}
	if (vitals_store_prepare(m.o.out, err, sizeof(err)) != 0) {
		fprintf(stderr, "mkstore: %s\n", err);
		return 1;
	}
	for (h = 0, r = 0; h < m.o.nhosts && r == 0; h++)
		r = mk_host(&m, h);
	if (r == 0)
		r = mk_manifest(&m);
	if (r == 0 && !m.o.quiet)
		fprintf(stderr, "mkstore: %llu epochs x %u hosts under %s\n",
		    (unsigned long long)m.nepochs, m.o.nhosts, m.o.out);
	config_free(m.cfg);
	mkf_free(m.faults);
	free(m.cdf);
	free(m.o.odd);
	for (h = 0; h < m.o.nhosts; h++)
		free(m.o.hosts[h]);
	for (h = 0; h < m.o.nvitals; h++)
		free(m.o.vitals[h]);
	return r == 0 ? 0 : 1;
}
