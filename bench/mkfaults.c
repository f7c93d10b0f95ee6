/* SPDX-License-Identifier: MIT */
/*
 * mkstore --faults: one fault for each filter to find, at known epochs,
 * exes and labels, spaced along the store after a normal stretch that
 * callmodel learns from; the free memory kmem and umem samples report;
 * and the manifest entries saying what each fault is and who should find
 * it.  Each fault mimics its real cause through the events a probe sees.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkstore.h"

enum {
	MKF_BURST, /* ewma: a rogue exe's cpu burst */
	MKF_BOUND, /* threshold: one exe's disk writes cross a bound */
	MKF_LEAK, /* rules #2: one exe allocates and never frees */
	MKF_IO_ERROR, /* rules #3: writes to a bad sector fail */
	MKF_SYSCALL_LOOP, /* rules #8: a loop around a failing send */
	MKF_TAKEOVER, /* affinity: a rogue exe takes blocking over, leaves */
	MKF_SHIFT, /* diff: one exe makes 8x its system calls */
	MKF_NEW_PATH, /* callmodel: an exe stalls in a new blocking site */
	MKF_CRASH, /* rules #10: an exe takes SIGSEGV and is gone */
};

#define MKF_TRAIN 20 /* normal epochs first (warm-up, callmodel training) */
#define MKF_GAP 12 /* least epochs between faults: diff's baseline */
#define MKF_CRASH_MIN 6 /* epochs left after the crash */
#define MKF_LEAK_PAGES 2048 /* pages leaked per epoch: 8 MiB */
#define MKF_LOOP_CALLS 150000 /* calls per epoch of the syscall loop */
#define MKF_STALL_NS 500000000ull /* each blocked wait of the stall */
#define MKF_STALL_WAITS 120 /* waits per epoch of the stall */
#define MKF_FREE_BASE (6ull << 30) /* free memory, bytes */
#define MKF_FREE_SWING (24ull << 20) /* its slow swing, bytes */
#define MKF_FREE_PERIOD 50.0 /* epochs */
#define MKF_SIGSEGV 11
#define MKF_SENDTO 44

/* One planned fault. */
struct mkf_fault {
	const char *kind; /* manifest "kind" */
	const char *filter; /* the filter meant to find it */
	int rule; /* rules: the rule number, else 0 */
	const char *vital; /* the vital it shows in most */
	const struct mk_exe *x; /* whose */
	uint64_t label; /* the injected label, 0 if none */
	uint64_t first, n; /* epochs [first, first + n) */
	char threshold[96]; /* threshold: a rule it crosses */
};

struct mkf {
	struct mkf_fault f[MK_NFAULTS];
	struct mk_exe rsync; /* the takeover's exe */
	uint64_t regular; /* regular events per vital and epoch */
};

/* Epochs of each fault, in order along the store. */
static const uint64_t mkf_len[MK_NFAULTS] = { 3, 3, 8, 3, 3, 4, 8, 4, 0 };

static const struct mk_exe *
mkf_synth(const struct mk *m, uint32_t e)
{
	return &m->exes[e % MK_EXES];
}

/* The threshold rule the bound fault crosses: 3x the exe's usual bytes. */
static void
mkf_threshold_rule(const struct mk *m, struct mkf_fault *f)
{
	double usual = (double)m->o.rate * ((double)m->o.epoch_ns / MK_NS) *
	    mk_exe_share(m, 7) * mk_mean_weight("diskio");
	unsigned long long mib = (unsigned long long)ceil(3 * usual / 1048576);

	snprintf(f->threshold, sizeof(f->threshold), "diskio.wsum@%s > %lluM",
	    f->x->path, mib ? mib : 1);
}

/* Which fault, which filter, which vital and exe: before placing them. */
static void
mkf_define(const struct mk *m, struct mkf *p)
{
	static const struct {
		const char *kind, *filter, *vital;
		int rule;
	} def[MK_NFAULTS] = {
		{ "burst", "ewma", "cpu", 0 },
		{ "bound", "threshold", "diskio", 0 },
		{ "leak", "rules", "kmem", 2 },
		{ "io_error", "rules", "diskio", 3 },
		{ "syscall_loop", "rules", "syscall", 8 },
		{ "takeover", "affinity", "blocking", 0 },
		{ "shift", "diff", "syscall", 0 },
		{ "new_path", "callmodel", "blocking", 0 },
		{ "crash", "rules", "signal", 10 },
	};
	static const uint64_t from[MK_NFAULTS] = { 0x7f3a0000, 0x5b000000,
		0x6c000000, 0x5d000000, 0x5c000000, 0x72000000, 0, 0x73000000,
		0x0b00 };
	static const uint32_t exe[MK_NFAULTS] = { 0, 7, 6, 3, 4, 0, 2, 5, 1 };
	struct mkf_fault *f;
	int k;

	mk_exe_init(&p->rsync, "/usr/bin/rsync");
	for (k = 0; k < MK_NFAULTS; k++) {
		f = &p->f[k];
		f->kind = def[k].kind;
		f->filter = def[k].filter;
		f->vital = def[k].vital;
		f->rule = def[k].rule;
		f->x = k == MKF_BURST	? &m->rogue
		    : k == MKF_TAKEOVER ? &p->rsync
					: mkf_synth(m, exe[k]);
		f->label = from[k] ? mk_free_label(m, from[k], f->x) : 0;
	}
	mkf_threshold_rule(m, &p->f[MKF_BOUND]);
}

/* Whether every vital a fault needs is in the store; says which is not. */
static int
mkf_vitals_there(const struct mk *m)
{
	static const char *const need[] = { "cpu", "blocking", "diskio", "kmem",
		"kmem_free", "umem", "syscall", "signal" };
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (mk_vital_index(m, need[i]) < 0) {
			fprintf(stderr,
			    "mkstore: --faults needs vital %s (--vitals "
			    "must include " MKF_VITALS ")\n",
			    need[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Place the faults after the training stretch, evenly spaced. */
static int
mkf_place(const struct mk *m, struct mkf *p)
{
	uint64_t busy = 0, gap, at = MKF_TRAIN;
	int k;

	for (k = 0; k < MK_NFAULTS; k++)
		busy += mkf_len[k];
	if (m->nepochs <
	    MKF_TRAIN + busy + MKF_CRASH_MIN + (MK_NFAULTS - 1) * MKF_GAP) {
		fprintf(stderr,
		    "mkstore: --faults needs at least %llu epochs, not %llu\n",
		    (unsigned long long)(MKF_TRAIN + busy + MKF_CRASH_MIN +
			(MK_NFAULTS - 1) * MKF_GAP),
		    (unsigned long long)m->nepochs);
		return -EINVAL;
	}
	gap =
	    (m->nepochs - MKF_TRAIN - busy - MKF_CRASH_MIN) / (MK_NFAULTS - 1);
	for (k = 0; k < MK_NFAULTS; k++) {
		p->f[k].first = at;
		p->f[k].n = mkf_len[k] ? mkf_len[k] : m->nepochs - at;
		at += p->f[k].n + gap;
	}
	return 0;
}

int
mkf_plan(struct mk *m)
{
	struct mkf *p;
	int r;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	if ((r = mkf_vitals_there(m)) != 0 || (r = mkf_place(m, p)) != 0) {
		free(p);
		return r;
	}
	mkf_define(m, p);
	p->regular = m->o.rate * m->o.epoch_ns / MK_NS;
	m->faults = p;
	return 0;
}

void
mkf_free(struct mkf *f)
{
	free(f);
}

/* ---- the events of each fault ---- */

/* Whether epoch i is one of fault k's (planned and not --clean). */
static int
mkf_on(const struct mk *m, int k, uint64_t i)
{
	const struct mkf_fault *f = &m->faults->f[k];

	return !m->o.clean && i >= f->first && i < f->first + f->n;
}

/* A new extra stream of fault k's exe and label in c; NULL when full. */
static struct mk_extra *
mkf_extra(const struct mk *m, int k, struct mk_change *c, uint64_t n)
{
	const struct mkf_fault *f = &m->faults->f[k];
	struct mk_extra *x;

	if (c->nextra == MK_MAX_EXTRA)
		return NULL;
	x = &c->extra[c->nextra++];
	*x = (struct mk_extra){
		.n = n, .label = f->label, .nlabels = 1, .x = f->x, .op = -1
	};
	return x;
}

/* The leaker allocates pages and faults them in; freed when it restarts. */
static void
mkf_leak(const struct mk *m, const char *vital, uint64_t i, struct mk_change *c)
{
	const struct mkf_fault *f = &m->faults->f[MKF_LEAK];
	struct mk_extra *x;

	if (mkf_on(m, MKF_LEAK, i) && strcmp(vital, "kmem") == 0) {
		mkf_extra(m, MKF_LEAK, c, MKF_LEAK_PAGES);
	} else if (mkf_on(m, MKF_LEAK, i) && strcmp(vital, "umem") == 0) {
		if ((x = mkf_extra(m, MKF_LEAK, c, MKF_LEAK_PAGES)) != NULL)
			x->nlabels = 4; /* the allocator's touching loop */
	} else if (!m->o.clean && i == f->first + f->n &&
	    strcmp(vital, "kmem_free") == 0) {
		/* It restarts: its memory is freed at exit. */
		if ((x = mkf_extra(m, MKF_LEAK, c, MKF_LEAK_PAGES * f->n)))
			x->label += 0x100;
	}
}

/* Failed writes to one bad sector of sdb. */
static void
mkf_io_error(const struct mk *m, struct mk_change *c)
{
	struct mk_extra *x = mkf_extra(m, MKF_IO_ERROR, c, 6);

	if (x == NULL)
		return;
	x->weight = 4096;
	x->op = 0x100 | 1; /* a write, unsatisfied */
	x->set_args = 1;
	x->args[0] = 4096;
	x->args[1] = 30000000000ull; /* 30 s: the disk retried, gave up */
	x->args[2] = (8u << 20) | 16; /* sdb */
	x->args[3] = 4711;
}

/* A loop around a failing sendto, burning CPU in a few PCs. */
static void
mkf_loop(const struct mk *m, const char *vital, struct mk_change *c)
{
	const struct mkf_fault *f = &m->faults->f[MKF_SYSCALL_LOOP];
	struct mk_extra *x;

	if (strcmp(vital, "syscall") == 0 &&
	    (x = mkf_extra(m, MKF_SYSCALL_LOOP, c, MKF_LOOP_CALLS)) != NULL) {
		x->op = MKF_SENDTO;
		x->set_args = 1;
		x->args[0] = 7; /* the socket */
		x->args[2] = 1400;
	} else if (strcmp(vital, "cpu") == 0 &&
	    (x = mkf_extra(
		 m, MKF_SYSCALL_LOOP, c, m->faults->regular * 3 / 2)) != NULL) {
		x->label = f->label + 0x1000;
		x->nlabels = 4;
	}
}

/* An exe stalls: it only blocks, in a new place, for long waits. */
static void
mkf_stall(const struct mk *m, const char *vital, struct mk_change *c)
{
	const struct mkf_fault *f = &m->faults->f[MKF_NEW_PATH];
	struct mk_extra *x;

	c->absent |= 1u << (uint32_t)(f->x - m->exes);
	if (strcmp(vital, "blocking") == 0 &&
	    (x = mkf_extra(m, MKF_NEW_PATH, c, MKF_STALL_WAITS)) != NULL)
		x->weight = MKF_STALL_NS;
}

/* The crash: SIGSEGV at the end of the epoch before, then nothing. */
static void
mkf_crash(
    const struct mk *m, const char *vital, uint64_t i, struct mk_change *c)
{
	const struct mkf_fault *f = &m->faults->f[MKF_CRASH];
	struct mk_extra *x;

	if (m->o.clean)
		return;
	if (i >= f->first)
		c->absent |= 1u << (uint32_t)(f->x - m->exes);
	if (i + 1 != f->first || strcmp(vital, "signal") != 0 ||
	    (x = mkf_extra(m, MKF_CRASH, c, 1)) == NULL)
		return;
	x->op = MKF_SIGSEGV;
	x->at_end = 1;
	x->set_args = 1;
	x->args[0] = 1; /* SEGV_MAPERR */
	x->args[1] = 0; /* raised by the kernel */
	x->args[2] = f->x->pid;
}

void
mkf_changes(const struct mk *m, uint32_t h, int vi, uint64_t i,
    uint64_t regular, struct mk_change *c)
{
	const char *v = m->o.vitals[vi];
	const struct mkf *p = m->faults;

	if (h != 0 || p == NULL)
		return;
	if (mkf_on(m, MKF_BURST, i) && strcmp(v, "cpu") == 0)
		mkf_extra(m, MKF_BURST, c, 3 * (uint64_t)(regular * m->cdf[0]));
	if (mkf_on(m, MKF_BOUND, i) && strcmp(v, "diskio") == 0)
		mkf_extra(m, MKF_BOUND, c,
		    (uint64_t)(6 * (double)regular * mk_exe_share(m, 7)));
	mkf_leak(m, v, i, c);
	if (mkf_on(m, MKF_IO_ERROR, i) && strcmp(v, "diskio") == 0)
		mkf_io_error(m, c);
	if (mkf_on(m, MKF_SYSCALL_LOOP, i))
		mkf_loop(m, v, c);
	if (mkf_on(m, MKF_TAKEOVER, i) && strcmp(v, "blocking") == 0)
		mkf_extra(m, MKF_TAKEOVER, c, 6 * regular);
	if (mkf_on(m, MKF_SHIFT, i) && strcmp(v, "syscall") == 0) {
		c->boosted |= 1u << (uint32_t)(p->f[MKF_SHIFT].x - m->exes);
		c->boost = 8;
	}
	if (mkf_on(m, MKF_NEW_PATH, i))
		mkf_stall(m, v, c);
	mkf_crash(m, v, i, c);
}

/* Pages the leaker holds at time ts (freed when it restarts). */
static double
mkf_leaked(const struct mk *m, double at)
{
	const struct mkf_fault *f = &m->faults->f[MKF_LEAK];

	if (m->o.clean || at < (double)f->first ||
	    at >= (double)(f->first + f->n))
		return 0;
	return (at - (double)f->first) * MKF_LEAK_PAGES;
}

uint64_t
mkf_free_memory(const struct mk *m, uint32_t h, uint64_t ts)
{
	double at = (double)(ts - m->o.start_ns) / (double)m->o.epoch_ns;
	double free = (double)MKF_FREE_BASE +
	    (double)MKF_FREE_SWING * sin(2 * M_PI * at / MKF_FREE_PERIOD);

	/* Jitter of up to 512 KiB, the same for a given second. */
	free += (double)(vitals_hash_mix64(ts / MK_NS ^ h) % (1u << 20)) -
	    (1u << 19);
	if (m->faults != NULL && h == 0)
		free -= mkf_leaked(m, at) * MK_PAGE;
	return (uint64_t)free;
}

/* ---- the manifest ---- */

static json_t *
mkf_json(const struct mk *m, const struct mkf_fault *f)
{
	uint64_t start = m->o.start_ns + f->first * m->o.epoch_ns;
	json_t *o;
	char hex[32];

	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I, "
		      "s:I}",
	    "kind", f->kind, "filter", f->filter, "host", m->o.hosts[0],
	    "vital", f->vital, "exe", f->x->path, "comm", f->x->comm, "pid",
	    (int)f->x->pid, "start_ns", (json_int_t)start, "end_ns",
	    (json_int_t)(start + f->n * m->o.epoch_ns), "first_epoch",
	    (json_int_t)f->first, "epochs", (json_int_t)f->n);
	if (o == NULL)
		return NULL;
	if (f->rule)
		json_object_set_new(o, "rule", json_integer(f->rule));
	if (f->label) {
		snprintf(
		    hex, sizeof(hex), "0x%llx", (unsigned long long)f->label);
		json_object_set_new(o, "label", json_string(hex));
	}
	if (f->threshold[0])
		json_object_set_new(
		    o, "threshold_rule", json_string(f->threshold));
	return o;
}

/* The ranges diff and callmodel are run with. */
static int
mkf_ranges(const struct mk *m, const struct mkf_fault *f, json_t *o)
{
	uint64_t start = m->o.start_ns + f->first * m->o.epoch_ns;
	uint64_t len = f->n * m->o.epoch_ns;
	int r = 0;

	if (strcmp(f->filter, "diff") == 0)
		r = json_object_set_new(o, "baseline",
		    json_pack("{s:I, s:I}", "start_ns",
			(json_int_t)(start - len), "end_ns",
			(json_int_t)start));
	else if (strcmp(f->filter, "callmodel") == 0)
		r = json_object_set_new(o, "train",
		    json_pack("{s:I, s:I}", "start_ns",
			(json_int_t)m->o.start_ns, "end_ns",
			(json_int_t)(m->o.start_ns +
			    MKF_TRAIN * m->o.epoch_ns)));
	return r == 0 ? 0 : -ENOMEM;
}

int
mkf_manifest(const struct mk *m, json_t *a)
{
	json_t *o;
	int k;

	if (m->o.clean)
		return 0;
	for (k = 0; k < MK_NFAULTS; k++) {
		o = mkf_json(m, &m->faults->f[k]);
		if (o == NULL || mkf_ranges(m, &m->faults->f[k], o) != 0 ||
		    json_array_append_new(a, o) != 0)
			return -ENOMEM;
	}
	return 0;
}
