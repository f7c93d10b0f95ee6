/* SPDX-License-Identifier: MIT */
/*
 * The sketch engine: live vitals with double-buffered sketches, the emit
 * path probes call, the adaptive threshold (paper 4.1.3: t doubles when
 * the collector reaches its CPU or sample-memory high watermark and halves
 * at a boundary below the low one), the disk budget that bounds each
 * vital's samples, and the closed-epoch view.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vitals/hash.h>

#include "codec.h"
#include "engine.h"
#include "metric.h"
#include "module.h"

/*
 * The disk budget's model of a stored epoch (the compact form, gzip'd),
 * from epochs of vitalsd with the shipped configuration (bench/disk.sh):
 * a sample costs 27 bytes among thousands, 50 among a few hundred, so
 * 40; a nonzero counter one byte plus one per two digits of its value;
 * the rest (header, metrics, findings) about 3 KiB.
 */
#define ENGINE_SAMPLE_BYTES 40
#define ENGINE_EPOCH_BYTES 3072
/* The metrics an epoch the budget bound has (see engine_budget_note). */
#define ENGINE_BUDGET_METRIC "vitals.disk_budget"
#define ENGINE_CPU_METRIC "vitals.cpu"
#define ENGINE_MEMORY_METRIC "vitals.memory"
#define ENGINE_RING_METRIC "vitals.rings.lost"
/* The exe paths the samples of one epoch may name: slots, bytes. */
#define ENGINE_EXE_SLOTS 1024
#define ENGINE_EXE_BYTES 65536
/*
 * Samples a vital may keep whatever the budget: its first sightings
 * (the reserve, SKETCH_RESERVE_MIN at least, adds the heavy labels first
 * seen late).  At 4, with a reserve of 2, the shipped 4K budget stores
 * 8.0 kB a steady epoch on a quiet machine and 10.8 under churn, against
 * 12.4 and 19.7 at 16 and 8 (bench/README.md).  An attempt before ewma
 * named a slot by the shared attribution had tests/calm.sh miss a fault.
 */
#define ENGINE_BUDGET_MIN_SAMPLES 4
/*
 * The least share of a vital's weight in an epoch with which a label
 * still crosses t (engine_cover_shift): the disk budget's share spent, a
 * crossing is what gets a heavy label its sample in the reserve.
 */
#define ENGINE_COVER_SHARE 64

/* Bitmap words to mark every module id VITALS_UFRAME can name. */
#define ENGINE_MOD_WORDS ((VITALS_UFRAME_MAX_MODULES + 63) / 64)

/* A vital's t and HCA size in a stored epoch, for a restart to start from. */
struct engine_resume {
	char name[32];
	uint32_t shift;
	uint32_t hca_size;
};

struct engine {
	const struct config *cfg;
	char host[256];
	uint32_t nvitals;
	struct vitals_vital *vitals[ENGINE_MAX_VITALS];
	uint64_t seq; /* number of the current epoch */
	uint64_t start_ns; /* start of the current epoch */
	uint64_t cpu_start_ns; /* process CPU time at the start */
	uint64_t cpu_extra_ns; /* CPU reported by probes this epoch */
	uint64_t
	    cpu_fixed_ns; /* of the process's, fixed work (boundary, start) */
	uint64_t cpu_sampled_ns; /* of the process's, handling samples */
	/*
	 * The exe paths the samples of the epoch collected (exes[xcur]) and
	 * of the closed one name, shared by every vital's sketch: each vital
	 * a pool of its own was 18 KiB per sketch, mostly unused.
	 */
	struct sketch_exes exes[2];
	unsigned xcur;
	uint64_t ring_lost; /* samples rings lost this epoch */
	int rings; /* some vital is fed through a ring (ring_lost is told) */
	uint64_t cpu_budget_used; /* CPU counted against doublings this epoch */
	struct metric_table *metrics; /* named metrics (vitals_metric_put) */
	struct sketch_budget
	    budget; /* the sample stores' bytes (sample_memory) */
	size_t hca_held; /* HCA and filter bytes granted (hca_memory) */
	/* the closed view */
	struct vitals_epoch closed;
	struct vitals_vital_epoch views[ENGINE_MAX_VITALS];
	struct vitals_finding *findings;
	uint32_t nfindings, findings_cap;
	struct vitals_module *modules; /* the closed epoch's modules table */
	uint32_t modules_cap;
	uint64_t
	    mod_seen[ENGINE_MOD_WORDS]; /* ids referenced, while building */
	/* t by vital name for vitals opened until engine_resume_end */
	struct engine_resume resume[ENGINE_MAX_VITALS];
	uint32_t nresume;
};

static uint64_t
engine_process_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	    1000000000ULL +
	    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static uint32_t
engine_log2(uint64_t x)
{
	return 63 - (uint32_t)__builtin_clzll(x);
}

struct engine *
engine_new(const struct config *c, const char *host)
{
	struct engine *e;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	if ((e->metrics = metric_table_new(METRIC_MAX_NAMES)) == NULL) {
		free(e);
		return NULL;
	}
	e->exes[0].nslots = e->exes[1].nslots = ENGINE_EXE_SLOTS;
	e->exes[0].size = e->exes[1].size = ENGINE_EXE_BYTES;
	engine_reconfigure(e, c, host);
	return e;
}

void
engine_reconfigure(struct engine *e, const struct config *c, const char *host)
{
	e->cfg = c;
	e->budget.limit = c->sample_memory;
	strncpy(e->host, host ? host : "localhost", sizeof(e->host) - 1);
}

static void
engine_findings_clear(struct engine *e)
{
	uint32_t i;

	for (i = 0; i < e->nfindings; i++) {
		free((char *)e->findings[i].filter);
		free((char *)e->findings[i].vital);
		free((char *)e->findings[i].label);
		free((char *)e->findings[i].text);
	}
	e->nfindings = 0;
}

void
engine_free(struct engine *e)
{
	uint32_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->nvitals; i++) {
		sketch_free(e->vitals[i]->buf[0]);
		sketch_free(e->vitals[i]->buf[1]);
		free(e->vitals[i]);
	}
	engine_findings_clear(e);
	free(e->findings);
	free(e->modules);
	metric_table_free(e->metrics);
	sketch_exes_free(&e->exes[0]);
	sketch_exes_free(&e->exes[1]);
	free(e);
}

static int
engine_vital_name_ok(const char *name)
{
	size_t i, n;

	n = strlen(name);
	if (n == 0 || n >= sizeof(((struct vitals_vital *)0)->name))
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
			(name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return 0;
	return 1;
}

/* Bytes of an HCA of m counters and its filter, in sketch s's terms. */
static size_t
engine_hca_cost(const struct sketch *s, uint32_t m)
{
	struct sketch_params p = s->p;

	p.seen_bits = s->seen_min;
	return (size_t)m * sizeof(uint64_t) + sketch_seen_bits(&p, m) / 8;
}

static void engine_vital_limit(struct vitals_vital *v, uint32_t limit);

/*
 * A restart's HCA: v (just made, at its configured size) takes size m it
 * had in the stored epoch, if it is within its sizes and hca_memory has
 * room for it; else what the room allows.  Out of memory, it keeps its
 * size.
 */
static void
engine_vital_resume_hca(struct vitals_vital *v, uint32_t m)
{
	struct engine *e = v->eng;
	const struct sketch *s = v->buf[0];
	uint64_t limit = e->cfg->hca_memory;
	size_t others = e->hca_held - v->hca_held;

	if (m <= s->p.hca_size || m > s->p.hca_max || (m & (m - 1)) != 0)
		return;
	while (limit != 0 && m > s->p.hca_size &&
	    others + 2 * engine_hca_cost(s, m) > limit)
		m /= 2;
	if (sketch_resize_hca(v->buf[0], m) != 0 ||
	    sketch_resize_hca(v->buf[1], m) != 0) {
		sketch_resize_hca(v->buf[0], v->hca_min);
		return;
	}
	v->hca_held = 2 * engine_hca_cost(s, m);
	e->hca_held = others + v->hca_held;
}

static int
engine_vital_init(struct engine *e, struct vitals_vital *v, const char *name,
    const char *unit)
{
	const struct config_sketch *cs = config_sketch_for(e->cfg, name);
	uint32_t i, s, m = cs->hca_size;
	struct sketch_params p = {
		.hca_size = cs->hca_size,
		.seen_bits = cs->seen_bits,
		.hca_max = cs->hca_max,
		.max_samples = cs->max_samples,
		.stack_depth = cs->stack_depth,
		.floor = cs->floor,
	};

	strcpy(v->name, name);
	strncpy(v->unit, unit, sizeof(v->unit) - 1);
	v->eng = e;
	if (cs->threshold < 2 || cs->threshold_max < cs->threshold)
		return -EINVAL;
	v->shift_min = v->shift = engine_log2(cs->threshold);
	v->shift_max = engine_log2(cs->threshold_max);
	for (i = 0; i < e->nresume; i++) {
		if (strcmp(e->resume[i].name, name) != 0)
			continue;
		s = e->resume[i].shift;
		v->shift = s < v->shift_min ? v->shift_min
		    : s > v->shift_max	    ? v->shift_max
					    : s;
		m = e->resume[i].hca_size;
	}
	v->limit = cs->max_samples;
	v->high_samples = cs->max_samples - cs->max_samples / 4;
	v->hca_min = cs->hca_size;
	if ((v->buf[0] = sketch_new(&p, &e->budget)) == NULL ||
	    (v->buf[1] = sketch_new(&p, &e->budget)) == NULL)
		return -ENOMEM;
	sketch_share_exes(v->buf[v->cur], &e->exes[e->xcur]);
	sketch_share_exes(v->buf[v->cur ^ 1], &e->exes[e->xcur ^ 1]);
	/* Its starting size is not the bound's to refuse. */
	v->hca_held = 2 * engine_hca_cost(v->buf[0], p.hca_size);
	e->hca_held += v->hca_held;
	engine_vital_resume_hca(v, m);
	/* Until its first boundary a vital has a few shares' worth. */
	if (e->cfg->disk_budget > 0)
		engine_vital_limit(v, ENGINE_BUDGET_MIN_SAMPLES * 4);
	return 0;
}

int
engine_vital_open(struct engine *e, const char *name, const char *unit,
    struct vitals_vital **out)
{
	struct vitals_vital *v;
	uint32_t i;
	int r;

	if (name == NULL || unit == NULL || !engine_vital_name_ok(name))
		return -EINVAL;
	for (i = 0; i < e->nvitals; i++) {
		if (strcmp(e->vitals[i]->name, name) != 0)
			continue;
		if (strcmp(e->vitals[i]->unit, unit) != 0)
			return -EEXIST;
		*out = e->vitals[i];
		return 0;
	}
	if (e->nvitals == ENGINE_MAX_VITALS)
		return -ENOSPC;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return -ENOMEM;
	if ((r = engine_vital_init(e, v, name, unit)) != 0) {
		sketch_free(v->buf[0]);
		sketch_free(v->buf[1]);
		free(v);
		return r;
	}
	/* Keep vitals sorted by name: the closed view promises it. */
	for (i = e->nvitals; i > 0 && strcmp(e->vitals[i - 1]->name, name) > 0;
	     i--)
		e->vitals[i] = e->vitals[i - 1];
	e->vitals[i] = v;
	e->nvitals++;
	*out = v;
	return 0;
}

int
engine_resume(struct engine *e, const struct vitals_epoch *ep)
{
	const struct vitals_vital_epoch *ve;
	uint32_t i;

	if (ep->host == NULL || strcmp(ep->host, e->host) != 0)
		return -ESRCH;
	e->nresume = 0;
	for (i = 0; i < ep->nvitals && e->nresume < ENGINE_MAX_VITALS; i++) {
		ve = &ep->vitals[i];
		if (ve->threshold < 2 || ve->name == NULL ||
		    strlen(ve->name) >= sizeof(e->resume[0].name))
			continue;
		strcpy(e->resume[e->nresume].name, ve->name);
		e->resume[e->nresume].hca_size = ve->hca_size;
		e->resume[e->nresume++].shift = engine_log2(ve->threshold);
	}
	return 0;
}

size_t
engine_resume_end(struct engine *e, char *buf, size_t len)
{
	const struct vitals_vital *v;
	size_t n = 0;
	uint32_t i;
	int w;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; e->nresume > 0 && i < e->nvitals; i++) {
		v = e->vitals[i];
		if (v->shift == v->shift_min || n >= len)
			continue;
		w = snprintf(buf + n, len - n, "%s%s %llu", n ? ", " : "",
		    v->name, (unsigned long long)vitals_vital_threshold(v));
		n = w < 0 ? len : n + (size_t)w;
	}
	e->nresume = 0;
	return n < len ? n : len > 0 ? len - 1 : 0;
}

void
engine_start(struct engine *e, uint64_t start_ns)
{
	e->start_ns = start_ns;
	e->cpu_start_ns = engine_process_cpu_ns();
	e->cpu_extra_ns = 0;
	e->cpu_fixed_ns = 0;
	e->cpu_sampled_ns = 0;
	e->cpu_budget_used = 0;
}

/* The daemon's own CPU this epoch, the last boundary's work included. */
static uint64_t
engine_cpu_daemon(const struct engine *e)
{
	return engine_process_cpu_ns() - e->cpu_start_ns;
}

/*
 * The CPU t steers this epoch: the daemon's handling the samples the
 * probes sent (engine_vital_sampling: each one's exe, maps and frames'
 * names), as measured.  Not its fixed work (the last boundary's: closing,
 * filters, writing; start-up, a reload), which is per epoch or once, nor
 * its steady work (metrics read each second, the probes' timers), which
 * is per second, nor what probes spend counting events in the kernel
 * (vitals_cpu_add), which is per event: t changes none of them, only how
 * many events are sampled.
 */
static uint64_t
engine_cpu_sampling(const struct engine *e)
{
	return e->cpu_sampled_ns;
}

void
engine_tick(struct engine *e)
{
	uint64_t budget, used;
	uint32_t i;

	budget = (uint64_t)(e->cfg->cpu_high * (double)e->cfg->epoch_ns);
	used = engine_cpu_sampling(e);
	if (budget == 0 || used - e->cpu_budget_used < budget)
		return;
	e->cpu_budget_used = used;
	for (i = 0; i < e->nvitals; i++)
		if (e->vitals[i]->shift < e->vitals[i]->shift_max)
			e->vitals[i]->shift++;
}

/* The stored bytes of s's counters, as the budget's model has them. */
static uint64_t
engine_hca_bytes(const struct sketch *s)
{
	return codec_hca_bytes(s->hca, s->p.hca_size, s->p.hca_size);
}

/*
 * Set v's sample bound for the epoch now collecting.  Its t mark stays
 * that of the sample store's memory (max_samples): past the bound only
 * the reserve keeps crossings, so they cost no disk, and a mark at the
 * bound (4 samples under the shipped budget) doubled t in every epoch
 * that had a few, until no label crossed it.
 */
static void
engine_vital_limit(struct vitals_vital *v, uint32_t limit)
{
	struct sketch *s = v->buf[v->cur];

	v->limit = limit < s->p.max_samples ? limit : s->p.max_samples;
	s->limit = v->limit;
}

/*
 * The largest t (as a shift) at which a label with 1/ENGINE_COVER_SHARE
 * of the weight s counted still crosses it: above it, a heavy label first
 * seen once the budget's share was spent would get no sample.
 */
static uint32_t
engine_cover_shift(const struct sketch *s)
{
	uint64_t w = s->wsum / ENGINE_COVER_SHARE;
	uint32_t k = 1;

	while (k < 62 && (2ULL << k) <= w)
		k++;
	return k;
}

/*
 * Samples the budget leaves for the epoch starting: the budget less what
 * the counters and the rest took in the one that closed (counters change
 * slowly from epoch to epoch), at ENGINE_SAMPLE_BYTES each.  The store
 * folds counters that take more than half the budget
 * (vitals_epoch_encode_within): they count for at most that.
 */
static uint64_t
engine_budget_samples(const struct engine *e)
{
	uint64_t fixed = 0, half = e->cfg->disk_budget / 2;
	uint32_t i;

	for (i = 0; i < e->nvitals; i++)
		fixed += e->vitals[i]->hca_bytes;
	fixed = (fixed < half ? fixed : half) + ENGINE_EPOCH_BYTES;
	return e->cfg->disk_budget > fixed
	    ? (e->cfg->disk_budget - fixed) / ENGINE_SAMPLE_BYTES
	    : 0;
}

/*
 * At the boundary, share the budget's samples among the vitals by what
 * each asked for in the epoch that closed (kept + dropped), smallest
 * first, none below ENGINE_BUDGET_MIN_SAMPLES (water-filling); a vital
 * that asked for more than its share, crossings of a power of t half of
 * it or more, has its t doubled, as the CPU watermark does, but not past
 * engine_cover_shift(), where a heavy label stops crossing it.  First
 * sightings do not count: t does not change them, and a higher t only
 * takes from the reserve the crossings that bring a heavy label first
 * seen once the share was spent.
 */
static void
engine_budget(struct engine *e)
{
	uint64_t want[ENGINE_MAX_VITALS], left, share, w;
	uint32_t order[ENGINE_MAX_VITALS], n = e->nvitals, i, j, k;
	struct vitals_vital *v;
	struct sketch *s;

	for (i = 0; i < n; i++) {
		v = e->vitals[i];
		s = v->buf[v->cur ^ 1];
		v->hca_bytes = engine_hca_bytes(s);
		want[i] = s->nsamples + s->samples_dropped;
		for (j = i; j > 0 && want[order[j - 1]] > want[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	left = engine_budget_samples(e);
	for (k = 0; k < n; k++) {
		i = order[k];
		v = e->vitals[i];
		share = left / (n - k);
		share = share > ENGINE_BUDGET_MIN_SAMPLES
		    ? share
		    : ENGINE_BUDGET_MIN_SAMPLES;
		w = want[i] < share ? want[i] : share;
		left -= w < left ? w : left;
		/* Room to grow: twice what it asked for, within its share. */
		w = 2 * w < share ? 2 * w : share;
		engine_vital_limit(v,
		    (uint32_t)(w > ENGINE_BUDGET_MIN_SAMPLES
			    ? w
			    : ENGINE_BUDGET_MIN_SAMPLES));
		if (want[i] > share &&
		    2 * v->buf[v->cur ^ 1]->crossings >= share &&
		    v->shift < v->shift_max &&
		    v->shift < engine_cover_shift(v->buf[v->cur ^ 1]))
			v->shift++;
	}
}

/*
 * Record in the closing epoch that the disk budget bound it (a vital
 * under a share dropped samples or reached it): the samples it let the
 * vitals keep, and those it made them drop (metrics
 * ENGINE_BUDGET_METRIC.samples and .dropped).  Once a share is reached,
 * the kernel sends no more first sightings of the vital (it does not
 * test them): those are not counted in .dropped, so how many are depends
 * on how soon the share was told to the kernel.
 */
static void
engine_budget_note(struct engine *e)
{
	uint64_t limit = 0, dropped = 0;
	const struct sketch *s;
	uint32_t i;
	int bound = 0;

	for (i = 0; i < e->nvitals; i++) {
		s = e->vitals[i]->buf[e->vitals[i]->cur ^ 1];
		limit += s->limit;
		if (s->limit < s->p.max_samples &&
		    (s->samples_dropped > 0 || s->nsamples >= s->limit)) {
			bound = 1;
			dropped += s->samples_dropped;
		}
	}
	if (!bound)
		return;
	metric_put(e->metrics, ENGINE_BUDGET_METRIC ".samples", "samples",
	    (double)limit);
	metric_put(e->metrics, ENGINE_BUDGET_METRIC ".dropped", "samples",
	    (double)dropped);
}

/*
 * At the boundary: halve t where the collector stayed under both low
 * marks, or, under the disk budget, where t is above engine_cover_shift()
 * and the collector's CPU under its high mark (t raised for the CPU
 * stays).  High marks of crossings are of the sample store's memory.
 */
static void
engine_adapt(struct engine *e, uint64_t cpu_ns, uint64_t len_ns)
{
	struct vitals_vital *v;
	struct sketch *s;
	double share;
	uint32_t i;

	share = len_ns ? (double)cpu_ns / (double)len_ns : 0;
	for (i = 0; i < e->nvitals; i++) {
		v = e->vitals[i];
		s = v->buf[v->cur ^ 1];
		v->high_samples = s->p.max_samples - s->p.max_samples / 4;
		if (v->shift <= v->shift_min)
			continue;
		if ((share < e->cfg->cpu_low &&
			s->crossings < s->p.max_samples / 4) ||
		    (e->cfg->disk_budget > 0 && share < e->cfg->cpu_high &&
			v->shift > engine_cover_shift(s)))
			v->shift--;
	}
}

static void
engine_view_vital(struct vitals_vital_epoch *ve, const struct vitals_vital *v,
    const struct sketch *s)
{
	memset(ve, 0, sizeof(*ve));
	ve->name = v->name;
	ve->unit = v->unit;
	ve->threshold = 1ULL << v->shift;
	ve->floor = s->p.floor;
	ve->events = s->events;
	ve->wsum = s->wsum;
	ve->unique = sketch_unique(s->hca, s->p.hca_size);
	ve->dropped = v->closed_dropped;
	ve->samples_dropped = s->samples_dropped;
	ve->hca_size = s->p.hca_size;
	ve->nsamples = s->nsamples;
	ve->hca = s->hca;
	ve->samples = s->samples;
}

/*
 * Mark the modules a sample refers to: its frames' (kernel frames name
 * the kernel's images, core/kernel/kaddr.h) and its exe's.
 */
static void
engine_mark_sample(
    struct engine *e, const struct vitals_sample *s, const char **last_exe)
{
	uint32_t i, id;
	int32_t m;

	for (i = 0; s->ustack != NULL && i < s->nustack; i++)
		if ((m = VITALS_UFRAME_MODULE(s->ustack[i])) >= 0)
			e->mod_seen[m / 64] |= 1ULL << (m % 64);
	for (i = 0; s->kstack != NULL && i < s->nkstack; i++)
		if ((m = VITALS_UFRAME_MODULE(s->kstack[i])) >= 0)
			e->mod_seen[m / 64] |= 1ULL << (m % 64);
	/* Samples of one process share the interned exe string: look up once. */
	if (s->exe == NULL || s->exe[0] == '\0' || s->exe == *last_exe)
		return;
	*last_exe = s->exe;
	if (module_by_path(s->exe, &id) == 0)
		e->mod_seen[id / 64] |= 1ULL << (id % 64);
}

/*
 * The closed epoch's modules table: exactly the modules its samples refer
 * to, in id order, copied from the registry (whose strings live as long as
 * the process).  Out of memory, the table is left short.
 */
static void
engine_modules(struct engine *e)
{
	const struct vitals_module *m;
	const char *last_exe = NULL;
	struct vitals_module *v;
	uint32_t i, j, n = 0, cap;
	uint64_t w;

	for (i = 0; i < e->nvitals; i++)
		for (j = 0; j < e->views[i].nsamples; j++)
			engine_mark_sample(
			    e, &e->views[i].samples[j], &last_exe);
	for (i = 0; i < ENGINE_MOD_WORDS; i++) {
		for (w = e->mod_seen[i]; w != 0; w &= w - 1) {
			m = module_of(i * 64 + (uint32_t)__builtin_ctzll(w));
			if (m == NULL)
				continue; /* not ours: e.g. a probe's made-up frame */
			if (n == e->modules_cap) {
				cap = e->modules_cap ? e->modules_cap * 2 : 64;
				v = realloc(e->modules, cap * sizeof(*v));
				if (v == NULL)
					break;
				e->modules = v;
				e->modules_cap = cap;
			}
			e->modules[n++] = *m;
		}
		e->mod_seen[i] = 0;
	}
	e->closed.nmodules = n;
	e->closed.modules = n > 0 ? e->modules : NULL;
}

/*
 * At the boundary, before the swap: size the emptied buffer for the epoch
 * starting, as a probe planned it or from the closing epoch's estimate.
 * Out of memory, it keeps its size (and a probe's plan fails in
 * vitals_vital_load, as its sizes then differ).
 */
static uint32_t engine_hca_grant(struct vitals_vital *v, uint32_t m);

static void
engine_vital_resize(struct vitals_vital *v)
{
	struct sketch *s = v->buf[v->cur], *next = v->buf[v->cur ^ 1];
	uint32_t m = v->hca_plan;

	if (m == 0)
		m = engine_vital_hca_want(v, s->hca, s->p.hca_size);
	v->hca_plan = 0;
	/* Out of memory it keeps its size, and the bound counts that. */
	if (sketch_resize_hca(next, m) != 0)
		engine_hca_grant(v, next->p.hca_size);
}

/*
 * Of size m for v's next epoch, what sketch.hca_memory leaves room for
 * beside the other vitals: m, or when it grows past the room, the
 * largest power of two that fits, never below the size it has.  Both
 * buffers are reckoned at the larger of m and the closing epoch's size,
 * which they both have by the boundary after next: the sum the engine
 * holds stays within the bound.  Taken from the bound at once; first
 * come, first served.
 */
static uint32_t
engine_hca_grant(struct vitals_vital *v, uint32_t m)
{
	struct engine *e = v->eng;
	const struct sketch *s = v->buf[v->cur];
	uint32_t cur = s->p.hca_size;
	uint64_t limit = e->cfg->hca_memory;
	size_t others = e->hca_held - v->hca_held;

	while (
	    limit != 0 && m > cur && others + 2 * engine_hca_cost(s, m) > limit)
		m /= 2;
	v->hca_held = 2 * engine_hca_cost(s, m > cur ? m : cur);
	e->hca_held = others + v->hca_held;
	return m;
}

uint32_t
engine_vital_hca_want(struct vitals_vital *v, const uint64_t *hca, uint32_t m)
{
	const struct sketch *s = v->buf[v->cur];

	return engine_hca_grant(v,
	    sketch_hca_next(m, sketch_unique(hca, m), v->hca_min, s->p.hca_max,
		&v->hca_idle));
}

int
engine_vital_hca_plan(struct vitals_vital *v, uint32_t m)
{
	if (m == 0 || (m & (m - 1)) != 0 || m > v->buf[v->cur]->p.hca_max)
		return -EINVAL;
	v->hca_plan = m;
	return 0;
}

uint32_t
engine_vital_hca_max(const struct vitals_vital *v)
{
	return v->buf[v->cur]->p.hca_max;
}

uint64_t
engine_vital_hca_memory(const struct vitals_vital *v)
{
	return v->eng->cfg->hca_memory;
}

/*
 * The closing epoch's collector CPU (its cpu_ns) in parts, in seconds:
 * what t steers (ENGINE_CPU_METRIC.sampling), the fixed work (.fixed: the
 * boundary before it, start-up), the rest of the daemon's (.other: its
 * steady work) and the probes' programs (.programs).
 */
static void
engine_cpu_note(struct engine *e, uint64_t daemon, uint64_t sampling)
{
	uint64_t fixed = daemon - sampling;

	if (e->cpu_fixed_ns < fixed)
		fixed = e->cpu_fixed_ns;
	metric_put(e->metrics, ENGINE_CPU_METRIC ".sampling", "s",
	    (double)sampling / 1e9);
	metric_put(
	    e->metrics, ENGINE_CPU_METRIC ".fixed", "s", (double)fixed / 1e9);
	metric_put(e->metrics, ENGINE_CPU_METRIC ".other", "s",
	    (double)(daemon - sampling - fixed) / 1e9);
	metric_put(e->metrics, ENGINE_CPU_METRIC ".programs", "s",
	    (double)e->cpu_extra_ns / 1e9);
}

/* This process's resident bytes (/proc/self/statm), or -1 if unknown. */
static double
engine_resident(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

/*
 * The collector's memory at the close, in bytes: what the sketches and
 * sample stores of every vital hold (ENGINE_MEMORY_METRIC.sketches) and
 * the process's resident set (.resident).
 */
static void
engine_memory_note(struct engine *e)
{
	double rss = engine_resident();

	metric_put(e->metrics, ENGINE_MEMORY_METRIC ".sketches", "bytes",
	    (double)engine_held(e));
	if (rss >= 0)
		metric_put(
		    e->metrics, ENGINE_MEMORY_METRIC ".resident", "bytes", rss);
}

const struct vitals_epoch *
engine_close(struct engine *e, uint64_t now_ns, int partial)
{
	struct vitals_vital *v;
	uint64_t daemon, sampling, dropped = 0;
	uint32_t i;

	daemon = engine_cpu_daemon(e);
	sampling = engine_cpu_sampling(e);
	if (sampling > daemon) /* each measured apart: the clocks' rounding */
		sampling = daemon;
	engine_findings_clear(e);
	/*
	 * The swap: the buffer that held the epoch before last was written
	 * out at the previous close, so it is cleared and made current; the
	 * one collecting until now becomes the closed epoch.
	 */
	/* The paths of the epoch before last are named by no sample now. */
	e->xcur ^= 1;
	sketch_exes_reset(&e->exes[e->xcur]);
	for (i = 0; i < e->nvitals; i++) {
		v = e->vitals[i];
		sketch_share_exes(v->buf[v->cur ^ 1], &e->exes[e->xcur]);
		sketch_reset(v->buf[v->cur ^ 1]);
		engine_vital_resize(v);
		v->cur ^= 1;
		v->high_held = 0;
		v->closed_dropped = v->dropped;
		v->dropped = 0;
		dropped += v->closed_dropped;
	}
	for (i = 0; i < e->nvitals; i++)
		engine_view_vital(&e->views[i], e->vitals[i],
		    e->vitals[i]->buf[e->vitals[i]->cur ^ 1]);
	memset(&e->closed, 0, sizeof(e->closed));
	e->closed.host = e->host;
	e->closed.start_ns = e->start_ns;
	e->closed.length_ns = now_ns > e->start_ns ? now_ns - e->start_ns : 0;
	e->closed.timescale_s = (uint32_t)(e->cfg->epoch_ns / 1000000000ULL);
	e->closed.partial = partial ? 1 : 0;
	e->closed.seq = e->seq++;
	e->closed.dropped = dropped;
	e->closed.cpu_ns = daemon + e->cpu_extra_ns;
	e->closed.nvitals = e->nvitals;
	e->closed.vitals = e->views;
	engine_budget_note(e);
	engine_cpu_note(e, daemon, sampling);
	engine_memory_note(e);
	/* What a ring lost, whether the store had room or not. */
	if (e->rings)
		metric_put(e->metrics, ENGINE_RING_METRIC, "samples",
		    (double)e->ring_lost);
	e->ring_lost = 0;
	e->closed.nmetrics = metric_close(e->metrics, &e->closed.metrics);
	engine_modules(e);
	engine_adapt(e, sampling, e->closed.length_ns);
	if (e->cfg->disk_budget > 0)
		engine_budget(e);
	engine_start(e, now_ns);
	return &e->closed;
}

static char *
engine_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int
engine_finding_add(
    struct engine *e, const struct vitals_finding *f, const char *filter)
{
	struct vitals_finding *nf, *arr;
	uint32_t cap;

	if (e->nfindings == e->findings_cap) {
		cap = e->findings_cap ? e->findings_cap * 2 : 16;
		if ((arr = realloc(e->findings, cap * sizeof(*arr))) == NULL)
			return -ENOMEM;
		e->findings = arr;
		e->findings_cap = cap;
	}
	nf = &e->findings[e->nfindings];
	*nf = *f;
	nf->filter = engine_strdup(filter);
	nf->vital = engine_strdup(f->vital);
	nf->label = engine_strdup(f->label);
	nf->text = engine_strdup(f->text);
	if ((filter && !nf->filter) || (f->vital && !nf->vital) ||
	    (f->label && !nf->label) || (f->text && !nf->text)) {
		free((char *)nf->filter);
		free((char *)nf->vital);
		free((char *)nf->label);
		free((char *)nf->text);
		return -ENOMEM;
	}
	e->nfindings++;
	e->closed.findings = e->findings;
	e->closed.nfindings = e->nfindings;
	return 0;
}

int
engine_finding_regroup(
    struct engine *e, uint32_t i, uint32_t severity, const char *suffix)
{
	struct vitals_finding *f;
	size_t a, b;
	char *t;

	if (i >= e->nfindings)
		return -EINVAL;
	f = &e->findings[i];
	a = f->text != NULL ? strlen(f->text) : 0;
	b = strlen(suffix);
	if ((t = malloc(a + b + 1)) == NULL)
		return -ENOMEM;
	memcpy(t, f->text != NULL ? f->text : "", a);
	memcpy(t + a, suffix, b + 1);
	free((char *)f->text);
	f->text = t;
	f->severity = severity;
	return 0;
}

int
engine_metric_put(
    struct engine *e, const char *name, const char *unit, double value)
{
	return metric_put(e->metrics, name, unit, value);
}

void
engine_cpu_add(struct engine *e, uint64_t ns)
{
	e->cpu_extra_ns += ns;
}

size_t
engine_bytes(const struct engine *e)
{
	size_t n = sizeof(*e), stores = 0, first = 0, per, hca = 0, least = 0,
	       bound;
	const struct sketch *s;
	const struct sketch_params *p;
	uint32_t i;

	for (i = 0; i < e->nvitals; i++) {
		s = e->vitals[i]->buf[0];
		p = &s->p;
		per = sketch_sample_bytes(p);
		/* sketch_bytes() has the HCA and filter at their most. */
		hca += 2 * engine_hca_cost(s, p->hca_max);
		least += 2 * engine_hca_cost(s, e->vitals[i]->hca_min);
		/* Its exe paths are the engine's (below). */
		n += sizeof(struct vitals_vital) +
		    2 *
			(sketch_bytes(p) - p->max_samples * per -
			    engine_hca_cost(s, p->hca_max) -
			    sketch_exes_bytes(
				SKETCH_EXE_SLOTS, SKETCH_POOL_BYTES));
		stores += 2 * (size_t)p->max_samples * per;
		first += 2 *
		    (size_t)(p->max_samples < SKETCH_FIRST ? p->max_samples
							   : SKETCH_FIRST) *
		    per;
	}
	n += 2 * sketch_exes_bytes(ENGINE_EXE_SLOTS, ENGINE_EXE_BYTES);
	/* The budget keeps each store's first samples within it. */
	if (e->budget.limit != 0) {
		bound = e->budget.limit > first ? e->budget.limit : first;
		stores = stores < bound ? stores : bound;
	}
	/* The HCAs grow within hca_memory; their starting sizes may pass it. */
	if (e->cfg->hca_memory != 0 && e->cfg->hca_memory < hca)
		hca = e->cfg->hca_memory > least ? e->cfg->hca_memory : least;
	return n + stores + hca;
}

size_t
engine_held(const struct engine *e)
{
	size_t n = sizeof(*e);
	uint32_t i;

	for (i = 0; i < e->nvitals; i++)
		n += sizeof(struct vitals_vital) +
		    sketch_held(e->vitals[i]->buf[0]) +
		    sketch_held(e->vitals[i]->buf[1]);
	for (i = 0; i < 2; i++)
		if (e->exes[i].slot != NULL)
			n += sketch_exes_bytes(
			    e->exes[i].nslots, e->exes[i].size);
	return n;
}

void
engine_release(struct engine *e)
{
	struct vitals_vital *v;
	uint32_t i;

	for (i = 0; i < e->nvitals; i++) {
		v = e->vitals[i];
		sketch_trim(v->buf[v->cur ^ 1]);
	}
	/* The boundary's work, from the close on, is done. */
	engine_fixed_end(e, 0);
}

/* The daemon's CPU this epoch that did not handle samples. */
static uint64_t
engine_cpu_unsampled(const struct engine *e)
{
	uint64_t daemon = engine_cpu_daemon(e);

	return daemon > e->cpu_sampled_ns ? daemon - e->cpu_sampled_ns : 0;
}

uint64_t
engine_fixed_begin(const struct engine *e)
{
	return engine_cpu_unsampled(e);
}

void
engine_fixed_end(struct engine *e, uint64_t begin)
{
	uint64_t now = engine_cpu_unsampled(e);

	e->cpu_fixed_ns += now > begin ? now - begin : 0;
}

void
engine_vital_sampling(struct vitals_vital *v, uint64_t ns)
{
	v->eng->cpu_sampled_ns += ns;
}

uint32_t
engine_nvitals(const struct engine *e)
{
	return e->nvitals;
}

/* ---- the SDK's sketch calls ---- */

/*
 * Sample-memory high watermark: t doubles within the epoch when the
 * vital's crossings of a power of t (kept or dropped) reach its mark, and
 * the mark moves half-way to the end, so t doubles again only as they
 * keep coming; and when the budget all stores share is three quarters
 * spent, for each vital whose crossings keep coming, again each time
 * half as many more came.  First sightings fill the store too, but t
 * does not change them: counted here, they raised t to its maximum on a
 * machine of many short-lived processes, and a heavy label first seen
 * once the store was full never crossed a power of t to get a sample.
 */
static void
engine_watermark(struct vitals_vital *v, const struct sketch *s)
{
	const struct sketch_budget *b = &v->eng->budget;

	if (v->shift >= v->shift_max)
		return;
	if (s->crossings >= v->high_samples) {
		v->shift++;
		v->high_samples += (s->p.max_samples - v->high_samples) / 2;
	} else if (b->limit != 0 &&
	    b->used + b->kept >= b->limit - b->limit / 4 &&
	    s->crossings >= v->high_held) {
		v->shift++;
		v->high_held = s->crossings + s->crossings / 2 + 1;
	}
}

int
vitals_emit(struct vitals_vital *v, const struct vitals_event *ev)
{
	struct sketch *s = v->buf[v->cur];
	int r;

	r = sketch_add(s, ev, v->shift);
	if (r == 0)
		return 0;
	engine_watermark(v, s); /* a crossing dropped counts too */
	return r == 1;
}

uint64_t
vitals_vital_threshold(const struct vitals_vital *v)
{
	return 1ULL << v->shift;
}

uint64_t
vitals_vital_floor(const struct vitals_vital *v)
{
	return v->buf[v->cur]->p.floor;
}

uint32_t
vitals_vital_hca_size(const struct vitals_vital *v)
{
	return v->buf[v->cur]->p.hca_size;
}

int
vitals_vital_load(struct vitals_vital *v, const uint64_t *hca, uint32_t m,
    uint64_t events, uint64_t wsum, uint64_t dropped)
{
	struct sketch *s = v->buf[v->cur];
	uint32_t i;

	if (hca == NULL || m != s->p.hca_size)
		return -EINVAL;
	for (i = 0; i < m; i++)
		s->hca[i] += hca[i];
	s->events += events;
	s->wsum += wsum;
	v->dropped += dropped;
	return 0;
}

int
vitals_vital_sample(
    struct vitals_vital *v, const struct vitals_event *ev, uint64_t count)
{
	return engine_vital_keep(v, ev, count, 1);
}

int
engine_vital_keep(struct vitals_vital *v, const struct vitals_event *ev,
    uint64_t count, int fresh)
{
	struct sketch *s = v->buf[v->cur];
	uint64_t h = vitals_hash_label(ev->label, ev->exe_id, ev->uid);
	uint64_t slot = h & (s->p.hca_size - 1);
	int r;

	r = fresh ? sketch_keep(s, ev, slot, count)
		  : sketch_keep_crossing(s, ev, slot, count);
	/* Kernel-decided samples fill the store too: raise t as emit does. */
	engine_watermark(v, s);
	return r == 1;
}

int
engine_vital_room(
    struct vitals_vital *v, int fresh, uint64_t h, uint64_t count, uint32_t nf)
{
	struct sketch *s = v->buf[v->cur];

	if (sketch_would_keep(s, fresh, h, count, nf))
		return 1;
	s->samples_dropped++;
	if (!fresh) {
		s->crossings++;
		engine_watermark(v, s);
	}
	return 0;
}

void
engine_vital_samples_lost(struct vitals_vital *v, uint64_t n)
{
	v->buf[v->cur]->samples_dropped += n;
	v->eng->ring_lost += n;
	v->eng->rings = 1;
}

int
engine_vital_full(const struct vitals_vital *v)
{
	return sketch_full(v->buf[v->cur]);
}

int
engine_vital_name_last(
    struct vitals_vital *v, const char *const *names, uint32_t nk, uint32_t nu)
{
	struct sketch *s = v->buf[v->cur];

	if (s->nsamples == 0)
		return -ENOENT;
	return sketch_set_syms(s, s->last, names, nk, nu);
}

uint64_t
vitals_label_hash(uint64_t label, uint32_t exe_id, uint32_t uid)
{
	return vitals_hash_label(label, exe_id, uid);
}
