/* SPDX-License-Identifier: MIT */
/*
 * The user-space half of the in-kernel sketch (<vitals/bpf.h>): sizes a
 * probe's vitals maps, drains sampled events from its ring buffer into
 * the core, flips and reads the double HCA at each boundary (paper
 * 4.1.5), and reports the BPF programs' run time as collector CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <vitals/bpf.h>
#include <vitals/hash.h>

#include "engine.h"
#include "exe.h"
#include "kaddr.h"
#include "module.h"
#include "progcpu.h"
#include "symbol.h"
#include "tracefs.h"
#include "units.h"

#define BPF_DRAIN_NS (100 * 1000 * 1000ULL)
#define BPF_RINGBUF_DEFAULT (64 * 1024ULL)
#define BPF_MAX_LINKS 16 /* programs vitals_bpf_attach() attaches per object */
/* First-sighting words of a vital at least: 64 Kibit, as the user sketch's. */
#define BPF_SEEN_MIN 1024
/* What every event reads of the parameters is their first cache line. */
_Static_assert(offsetof(struct vitals_bpf_cfg, shift) == 64,
    "cfg's first line ends before shift");
/* Least time between two reports of the programs' CPU within an epoch. */
#define BPF_LIVE_NS (1000 * 1000 * 1000ULL)
/* Least time between two sweeps of the identity caches for dead pids. */
#define BPF_DROP_NS (1000 * 1000 * 1000ULL)
/*
 * Least time between two tellings of one count in the log (records of
 * another layout, samples a full ring lost): a minute.
 */
#define BPF_TELL_NS (60 * 1000 * 1000 * 1000ULL)

/* Something counted, and told in the log at most every BPF_TELL_NS. */
struct bpf_tally {
	uint64_t n; /* counted since it was last told */
	uint64_t at; /* monotonic time it was last told, 0: never */
};

static unsigned bpf_exec_warned; /* the exec table could not be loaded */

/*
 * The maps the kernel vitals' HCAs and first-sighting bits live in,
 * carved into regions of whole units, one per vital and half (units.h).
 * While sketch.hca_memory bounds the HCAs, one pool of that size serves
 * every probe's object (their maps reuse its two); with no bound each
 * object has one of its own, as large as its vitals' hca_max.  Units
 * outside a region are zero.
 */
struct bpf_pool {
	int hca_fd, seen_fd;
	uint64_t *hca, *seen; /* mapped */
	size_t len; /* bytes of each mapping */
	uint64_t memory; /* the sketch.hca_memory it was made for */
	uint32_t units;
	unsigned refs;
	uint8_t used[]; /* by unit: 1 in a region */
};

/* The pool under sketch.hca_memory, while an object holds it. */
static struct bpf_pool *bpf_shared;

struct vitals_bpf {
	struct vitals_ctx *ctx;
	struct bpf_object *obj;
	struct vitals_bpf_spec spec;
	struct vitals_vital *vitals[VITALS_BPF_MAX_VITALS];
	struct vitals_bpf_cfg init; /* written to the map at start */
	struct vitals_bpf_cfg *cfg; /* the mapped parameters, after start */
	struct bpf_pool *pool; /* where the vitals' regions are */
	size_t cfg_len;
	/* The regions' first units, by half and vital. */
	uint32_t at[2][VITALS_BPF_MAX_VITALS];
	uint32_t size[2][VITALS_BPF_MAX_VITALS]; /* HCA counters, by half */
	uint64_t *percpu; /* one value per possible CPU */
	struct vitals_bpf_exe_slot *slots; /* vitals_exe_cache, one per CPU */
	int slots_fd; /* its map, -1 if the object has none */
	int ncpus; /* possible CPUs */
	uint64_t dropped_seen[VITALS_BPF_MAX_VITALS];
	uint64_t run_ns, run_cnt; /* programs' run totals at the window start */
	uint64_t win_events; /* events counted in the epoch by then */
	uint64_t epoch_start; /* monotonic time of the last boundary */
	uint64_t win_start; /* monotonic start of the stats window */
	int win_done; /* the half-epoch window opened in this epoch */
	unsigned wins; /* windows opened so far */
	struct progcpu pcpu; /* the programs' cost, from the windows */
	uint64_t cpu_added; /* programs' CPU reported this epoch */
	uint64_t live_at; /* monotonic time of the last report */
	int64_t mono_to_real; /* realtime - monotonic, at the last drain */
	struct ring_buffer *rb;
	/*
	 * The ring's consumer and producer positions (its first two pages,
	 * mapped read-only): equal, the ring holds nothing, and a drain
	 * skips it without a system call.  NULL where they are not mapped.
	 */
	const unsigned long *rb_cons, *rb_prod;
	struct vitals_timer *timer;
	struct vitals_watch *watch;
	int stats_fd; /* BPF_ENABLE_STATS handle, or -1 */
	struct bpf_link *links[BPF_MAX_LINKS]; /* vitals_bpf_attach()'s */
	int nlinks;
	int exec_held; /* holds exe_exec_hold() */
	struct bpf_tally bad; /* records of another layout */
	struct bpf_tally lost; /* samples a full ring lost (store had room) */
	uint64_t ring_bytes; /* the ring's size */
	char exe[4096]; /* scratch for one resolved exe path */
};

static uint32_t
bpf_log2(uint64_t x)
{
	return 63 - (uint32_t)__builtin_clzll(x);
}

static uint64_t
bpf_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Cgroup v2 id of a directory: its inode number. */
static int
bpf_cgroup_id(const char *path, __u64 *id)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*id = (__u64)st.st_ino;
	return 0;
}

/* Words of first-sighting bits beside an HCA of m counters: 64 a counter. */
static uint32_t
bpf_seen_words(uint32_t m)
{
	return m > BPF_SEEN_MIN ? m : BPF_SEEN_MIN;
}

/* Whether m counters is a size vital i's HCA may have. */
static int
bpf_size_ok(const struct vitals_bpf *b, uint32_t i, uint32_t m)
{
	return m >= 32 && (m & (m - 1)) == 0 &&
	    m <= engine_vital_hca_max(b->vitals[i]);
}

/* Units of the region of an HCA of m counters. */
static uint32_t
bpf_units(uint32_t m)
{
	return bpf_seen_words(m) / UNITS_ENTRIES;
}

/* Give vital i an HCA of m counters in the half (cfg's hca_off, hca_log). */
static void
bpf_set_size(struct vitals_bpf *b, struct vitals_bpf_cfg *c, uint32_t half,
    uint32_t i, uint32_t m)
{
	b->size[half][i] = m;
	c->hca_off[half][i] = (uint16_t)b->at[half][i];
	c->hca_log[half][i] =
	    (uint8_t)((bpf_log2(bpf_seen_words(m)) - 10) << 4 |
		(bpf_log2(m) - 5));
}

/* A pool of units, its maps made and mapped; NULL with errno set. */
static struct bpf_pool *
bpf_pool_new(uint32_t units, uint64_t memory)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	struct bpf_pool *p = calloc(1, sizeof(*p) + units);
	uint32_t entries = units * UNITS_ENTRIES;
	void *m[2] = { MAP_FAILED, MAP_FAILED };
	int e, k;

	if (p == NULL)
		return NULL;
	p->units = units;
	p->memory = memory;
	p->refs = 1;
	/* Whole pages: 8 KiB a unit. */
	p->len = (size_t)entries * sizeof(uint64_t);
	p->hca_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vitals_hca",
	    sizeof(uint32_t), sizeof(uint64_t), entries, &o);
	p->seen_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vitals_seen",
	    sizeof(uint32_t), sizeof(uint64_t), entries, &o);
	for (k = 0; k < 2 && p->hca_fd >= 0 && p->seen_fd >= 0; k++)
		m[k] = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    k == 0 ? p->hca_fd : p->seen_fd, 0);
	if (m[0] != MAP_FAILED && m[1] != MAP_FAILED) {
		p->hca = m[0];
		p->seen = m[1];
		return p;
	}
	e = errno;
	for (k = 0; k < 2; k++)
		if (m[k] != MAP_FAILED)
			munmap(m[k], p->len);
	if (p->hca_fd >= 0)
		close(p->hca_fd);
	if (p->seen_fd >= 0)
		close(p->seen_fd);
	free(p);
	errno = e;
	return NULL;
}

/*
 * Units of b's vitals' regions, both halves, at hca_max if max, else at
 * the sizes they start at.
 */
static uint64_t
bpf_units_all(const struct vitals_bpf *b, int max)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < b->spec.nvitals; i++)
		n += 2 *
		    bpf_units(max ? engine_vital_hca_max(b->vitals[i])
				  : vitals_vital_hca_size(b->vitals[i]));
	return n;
}

/* A pool of b's own of units; 0 or -errno (-E2BIG: more than a pool holds). */
static int
bpf_pool_own(struct vitals_bpf *b, uint64_t units)
{
	if (units > UNITS_MAX)
		return -E2BIG;
	b->pool = bpf_pool_new((uint32_t)units, 0);
	return b->pool != NULL ? 0 : -errno;
}

/*
 * The pool b's vitals take their regions from: the shared one (made by
 * the first object) while sketch.hca_memory bounds the HCAs, else one of
 * b's own for its vitals at hca_max.  Returns 0 or -errno (-E2BIG: more
 * than a pool holds).
 */
static int
bpf_pool_get(struct vitals_bpf *b)
{
	uint64_t memory = engine_vital_hca_memory(b->vitals[0]);

	if (memory == 0)
		return bpf_pool_own(b, bpf_units_all(b, 1));
	if (bpf_shared == NULL) {
		bpf_shared = bpf_pool_new(units_pool(memory), memory);
		if (bpf_shared == NULL)
			return -errno;
	} else {
		bpf_shared->refs++;
		if (bpf_shared->memory != memory)
			vitals_log(b->ctx, VITALS_LOG_INFO,
			    "sketch.hca_memory changed: the kernel vitals "
			    "keep the room of the old value until every "
			    "kernel probe has restarted");
	}
	b->pool = bpf_shared;
	return 0;
}

static void
bpf_pool_put(struct bpf_pool *p)
{
	if (p == NULL || --p->refs > 0)
		return;
	munmap(p->hca, p->len);
	munmap(p->seen, p->len);
	close(p->hca_fd);
	close(p->seen_fd);
	if (p == bpf_shared)
		bpf_shared = NULL;
	free(p);
}

/* No region: at[][] holds this for a half and vital without one. */
#define BPF_NO_REGION UINT32_MAX

/* Give back vital i's region of half h, zeroing it if zero (counted in). */
static void
bpf_region_give(struct vitals_bpf *b, uint32_t h, uint32_t i, int zero)
{
	uint32_t u = b->at[h][i], n = bpf_units(b->size[h][i]);
	size_t at = (size_t)u * UNITS_ENTRIES,
	       len = (size_t)n * UNITS_ENTRIES * sizeof(uint64_t);

	if (u == BPF_NO_REGION)
		return;
	if (zero) {
		memset(b->pool->hca + at, 0, len);
		memset(b->pool->seen + at, 0, len);
	}
	units_give(b->pool->used, u, n);
	b->at[h][i] = BPF_NO_REGION;
}

/*
 * Place vital i's region of half h, which has none, for an HCA of m
 * counters, or of the largest smaller one the pool has room for.
 * Returns the counters placed, 0 if not even a unit was free.
 */
static uint32_t
bpf_region_place(struct vitals_bpf *b, uint32_t h, uint32_t i, uint32_t m)
{
	int64_t u;

	while (
	    (u = units_take(b->pool->used, b->pool->units, bpf_units(m))) < 0) {
		if (bpf_units(m) == 1)
			return 0;
		m /= 2;
	}
	b->at[h][i] = (uint32_t)u;
	b->size[h][i] = m;
	return m;
}

/* Place every vital's regions at the size its HCA has; -ENOSPC if not. */
static int
bpf_layout_in(struct vitals_bpf *b)
{
	uint32_t i, h, m;

	for (i = 0; i < b->spec.nvitals; i++) {
		m = vitals_vital_hca_size(b->vitals[i]);
		for (h = 0; h < 2; h++) {
			/* A smaller one placed is given back by the caller. */
			if (bpf_region_place(b, h, i, m) != m)
				return -ENOSPC;
			bpf_set_size(b, &b->init, h, i, m);
		}
	}
	return 0;
}

/*
 * Lay out the vitals' regions in their pool, both halves at the size each
 * vital's HCA starts at (the configured one, or a restart's).  Where the
 * shared pool has no room for them, as the engine grants a starting size
 * beyond sketch.hca_memory, the object gets a pool of its own at those
 * sizes, which its vitals cannot grow beyond.  Returns 0 or -errno.
 */
static int
bpf_layout(struct vitals_bpf *b)
{
	uint64_t units = bpf_units_all(b, 0);
	uint32_t i;
	int r;

	for (i = 0; i < b->spec.nvitals; i++)
		if (!bpf_size_ok(b, i, vitals_vital_hca_size(b->vitals[i])))
			return -EINVAL;
	if ((r = bpf_pool_get(b)) < 0)
		return r;
	if (bpf_layout_in(b) == 0)
		return 0;
	for (i = 0; i < b->spec.nvitals; i++) {
		bpf_region_give(b, 0, i, 0);
		bpf_region_give(b, 1, i, 0);
	}
	bpf_pool_put(b->pool);
	b->pool = NULL;
	if ((r = bpf_pool_own(b, units)) < 0)
		return r;
	vitals_log(b->ctx, VITALS_LOG_INFO,
	    "the probe's HCAs are larger than sketch.hca_memory leaves room "
	    "for in the kernel: they take %llu KiB of maps of their own and "
	    "cannot grow",
	    (unsigned long long)(units * UNITS_BYTES / 1024));
	return bpf_layout_in(b);
}

static int
bpf_open_vitals(struct vitals_bpf *b)
{
	uint32_t i;
	int r;

	for (i = 0; i < b->spec.nvitals; i++) {
		if (b->spec.vitals[i] == NULL || b->spec.units[i] == NULL)
			return -EINVAL;
		r = vitals_vital_open(
		    b->ctx, b->spec.vitals[i], b->spec.units[i], &b->vitals[i]);
		if (r < 0)
			return r;
		b->init.floor[i] = vitals_vital_floor(b->vitals[i]);
		b->init.shift[i] =
		    bpf_log2(vitals_vital_threshold(b->vitals[i]));
	}
	return 0;
}

static int
bpf_size_maps(struct vitals_bpf *b)
{
	struct vitals_bpf_opts o = { .ringbuf = b->spec.ringbuf_bytes };
	struct bpf_map *hca, *seen, *rb;
	char why[128];
	int r;

	hca = bpf_object__find_map_by_name(b->obj, "vitals_hca");
	seen = bpf_object__find_map_by_name(b->obj, "vitals_seen");
	rb = bpf_object__find_map_by_name(b->obj, "vitals_rb");
	if (hca == NULL || seen == NULL || rb == NULL ||
	    bpf_object__find_map_by_name(b->obj, "vitals_cfg") == NULL) {
		vitals_error(b->ctx,
		    "BPF object lacks the vitals maps "
		    "(include <vitals/sketch.bpf.h>)");
		return -EINVAL;
	}
	/* A probe may fill the spec by hand rather than from the options. */
	if (vitals_bpf_opts_check(&o, why, sizeof(why)) != 0) {
		vitals_error(b->ctx, "%s", why);
		return -EINVAL;
	}
	if (o.ringbuf == 0)
		o.ringbuf = BPF_RINGBUF_DEFAULT;
	b->ring_bytes = o.ringbuf;
	if ((r = bpf_map__reuse_fd(hca, b->pool->hca_fd)) < 0 ||
	    (r = bpf_map__reuse_fd(seen, b->pool->seen_fd)) < 0 ||
	    (r = bpf_map__set_max_entries(rb, (uint32_t)o.ringbuf)) < 0)
		return r;
	return 0;
}

/*
 * Whether the object's struct vitals_bpf_cfg (from its BTF) is laid out
 * as this build's: a probe built against another SDK would count in the
 * wrong places.  0, or -EINVAL having said which member differs.
 */
static int
bpf_cfg_check(struct vitals_bpf *b)
{
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
#define BPF_CFG_MEMBER(m) { #m, offsetof(struct vitals_bpf_cfg, m) }
		BPF_CFG_MEMBER(epoch),
		BPF_CFG_MEMBER(self_tgid),
		BPF_CFG_MEMBER(tgid),
		BPF_CFG_MEMBER(nvitals),
		BPF_CFG_MEMBER(full),
		BPF_CFG_MEMBER(cgroup),
		BPF_CFG_MEMBER(comm),
		BPF_CFG_MEMBER(hca_off),
		BPF_CFG_MEMBER(hca_log),
		BPF_CFG_MEMBER(shift),
		BPF_CFG_MEMBER(floor),
		BPF_CFG_MEMBER(dropped),
		BPF_CFG_MEMBER(field_off),
		BPF_CFG_MEMBER(field_size),
		BPF_CFG_MEMBER(param),
		BPF_CFG_MEMBER(kkey),
		BPF_CFG_MEMBER(ktext_lo),
		BPF_CFG_MEMBER(ktext_hi),
#undef BPF_CFG_MEMBER
	};
	const struct btf *btf = bpf_object__btf(b->obj);
	const struct btf_type *t;
	const struct btf_member *m;
	size_t k, off;
	uint16_t j, n;
	int id;

	id = btf == NULL
	    ? -1
	    : btf__find_by_name_kind(btf, "vitals_bpf_cfg", BTF_KIND_STRUCT);
	if (id < 0 || (t = btf__type_by_id(btf, (uint32_t)id)) == NULL) {
		vitals_error(b->ctx,
		    "the probe's BPF object has no BTF of struct "
		    "vitals_bpf_cfg (build it with clang -g, including "
		    "<vitals/probe.bpf.h>)");
		return -EINVAL;
	}
	if (t->size != sizeof(struct vitals_bpf_cfg)) {
		vitals_error(b->ctx,
		    "the probe's BPF object was built against another vitals "
		    "SDK (struct vitals_bpf_cfg of %u bytes, not %zu): "
		    "rebuild it",
		    t->size, sizeof(struct vitals_bpf_cfg));
		return -EINVAL;
	}
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		m = btf_members(t);
		n = btf_vlen(t);
		for (j = 0; j < n; j++, m++)
			if (strcmp(btf__name_by_offset(btf, m->name_off),
				want[k].name) == 0)
				break;
		off = j < n ? btf_member_bit_offset(t, j) / 8 : SIZE_MAX;
		if (off != want[k].off) {
			vitals_error(b->ctx,
			    "the probe's BPF object was built against another "
			    "vitals SDK (struct vitals_bpf_cfg's %s %s): "
			    "rebuild it",
			    want[k].name,
			    j < n ? "at another offset" : "missing");
			return -EINVAL;
		}
	}
	return 0;
}

/* The key and kernel text the programs keep raw addresses out of labels by. */
static void
bpf_kernel_layout(struct vitals_bpf_cfg *c)
{
	uint64_t k[2], lo, hi;

	kaddr_key(k);
	kaddr_text(&lo, &hi);
	c->kkey[0] = k[0];
	c->kkey[1] = k[1];
	c->ktext_lo = lo;
	c->ktext_hi = hi;
}

int
vitals_bpf_prepare(struct vitals_ctx *ctx, struct bpf_object *obj,
    const struct vitals_bpf_spec *spec, struct vitals_bpf **out)
{
	struct vitals_bpf *b;
	int r;

	if (spec->nvitals == 0 || spec->nvitals > VITALS_BPF_MAX_VITALS)
		return -EINVAL;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->ctx = ctx;
	b->obj = obj;
	b->spec = *spec;
	b->stats_fd = -1;
	b->slots_fd = -1;
	memset(b->at, 0xff, sizeof(b->at)); /* BPF_NO_REGION */
	b->init.nvitals = (uint16_t)spec->nvitals;
	b->init.self_tgid = (uint32_t)getpid();
	b->init.tgid = spec->pid;
	bpf_kernel_layout(&b->init);
	if (spec->comm != NULL)
		strncpy(b->init.comm, spec->comm, sizeof(b->init.comm) - 1);
	if (spec->cgroup != NULL &&
	    (r = bpf_cgroup_id(spec->cgroup, &b->init.cgroup)) < 0) {
		vitals_error(ctx, "cgroup %s: %s", spec->cgroup, strerror(-r));
		goto fail;
	}
	if ((r = bpf_open_vitals(b)) < 0) {
		vitals_error(
		    ctx, "cannot open the probe's vitals: %s", strerror(-r));
		goto fail;
	}
	if ((r = bpf_cfg_check(b)) < 0)
		goto fail;
	if ((r = bpf_layout(b)) < 0) {
		vitals_error(ctx, "cannot make the sketch maps: %s",
		    r == -E2BIG ? "the probe's vitals' HCAs are too large "
				  "(sketch.hca_max)"
			: r == -EINVAL
			? "HCA sizes not powers of two from 32 to "
			  "sketch.hca_max"
			: strerror(-r));
		goto fail;
	}
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		r = -EINVAL;
		goto fail;
	}
	b->percpu = calloc((size_t)b->ncpus, sizeof(uint64_t));
	b->slots = calloc((size_t)b->ncpus, sizeof(*b->slots));
	if (b->percpu == NULL || b->slots == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = bpf_size_maps(b)) < 0)
		goto fail;
	*out = b;
	return 0;
fail:
	vitals_bpf_free(b);
	return r;
}

int
vitals_bpf_set_field(struct vitals_bpf *b, uint32_t i, const char *category,
    const char *event, const char *field)
{
	uint32_t off, size;
	int r;

	if (i >= VITALS_BPF_MAX_FIELDS)
		return -EINVAL;
	r = tracefs_field(category, event, field, &off, &size);
	if (r < 0)
		return r;
	b->init.field_off[i] = off;
	b->init.field_size[i] = size;
	if (b->cfg != NULL) {
		b->cfg->field_off[i] = off;
		b->cfg->field_size[i] = size;
	}
	return 0;
}

void
vitals_bpf_set_param(struct vitals_bpf *b, uint32_t i, uint64_t value)
{
	if (i >= VITALS_BPF_MAX_PARAMS)
		return;
	b->init.param[i] = value;
	if (b->cfg != NULL)
		b->cfg->param[i] = value;
}

/*
 * Names for the event's frames: kernel ones (by their raw addresses,
 * kraw), then user ones (as kept).
 */
static void
bpf_symbolize(
    const struct vitals_event *ev, const uint64_t *kraw, const char **names)
{
	uint64_t f;
	uint32_t i, back;

	for (i = 0; i < ev->nkstack; i++)
		names[i] = sym_kernel(kraw[i]);
	for (i = 0; i < ev->nustack; i++) {
		f = ev->ustack[i];
		/* Outer user frames are return addresses: look up the call itself. */
		back = i > 0;
		names[ev->nkstack + i] = VITALS_UFRAME_MODULE(f) >= 0
		    ? sym_module_name((uint32_t)VITALS_UFRAME_MODULE(f),
			  VITALS_UFRAME_OFFSET(f) - back, ev->pid)
		    : sym_user(ev->pid, f - back);
	}
}

/* Index in uf of the file mapping holding user address addr, or -1. */
static int
bpf_ufile(const struct vitals_bpf_ufile *uf, uint32_t n, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (addr >= uf[i].start && addr < uf[i].end)
			return (int)i;
	return -1;
}

/*
 * The event's user frames as they are kept: (module, file offset) where
 * they fall in a file mapping (VITALS_UFRAME), since the raw addresses
 * mean nothing once the process is gone; written to buf.  A frame in a
 * file the kernel found (uf, nuf) of a module known is placed without
 * /proc; else through the process's maps (sym_user_frame); else, the
 * process gone, by the file searched for (module_search_file).  Each
 * file's mapping is remembered for the process's other samples.  A
 * return address in no code of maps read after the sample (mono_ns)
 * ends the stack: the walk went astray there.
 */
static void
bpf_encode_ustack(struct vitals_event *ev, const struct vitals_bpf_ufile *uf,
    uint32_t nuf, uint64_t mono_ns, uint64_t *buf)
{
	/* Module of uf[k]; -1 not known yet, -2 not found. */
	int32_t mod[VITALS_BPF_UFILES];
	uint64_t addr, off;
	uint32_t i, id;
	int k;

	for (i = 0; i < nuf; i++) {
		mod[i] = module_find_file(uf[i].dev, uf[i].ino, &id) == 0
		    ? (int32_t)id
		    : -1;
		if (mod[i] >= 0)
			sym_proc_learn(ev->pid, ev->exe_id, uf[i].start,
			    uf[i].end, uf[i].off, id);
	}
	for (i = 0; i < ev->nustack; i++) {
		addr = ev->ustack[i];
		k = bpf_ufile(uf, nuf, addr);
		off = k >= 0 ? addr - uf[k].start + uf[k].off : 0;
		if (off > VITALS_UFRAME_OFF_MASK)
			k = -1;
		if (k >= 0 && mod[k] >= 0) {
			buf[i] = VITALS_UFRAME(mod[k], off);
			continue;
		}
		/* The walk went past the stack: it ends there. */
		if ((buf[i] = sym_user_frame(ev->pid, ev->exe_id, addr,
			 i > 0 ? mono_ns : 0)) == 0) {
			ev->nustack = i;
			break;
		}
		if (k < 0 || mod[k] != -1 || VITALS_UFRAME_MODULE(buf[i]) >= 0)
			continue;
		if (module_search_file(uf[k].dev, uf[k].ino, &id) < 0) {
			mod[k] = -2; /* not to be searched for again */
			continue;
		}
		mod[k] = (int32_t)id;
		sym_proc_learn(
		    ev->pid, ev->exe_id, uf[k].start, uf[k].end, uf[k].off, id);
		buf[i] = VITALS_UFRAME(id, off);
	}
	ev->ustack = buf;
}

/*
 * Drop leading kernel frames of the tracing machinery itself: the BPF
 * program's own frame (bpf_prog_TAG_NAME, which raw tracepoint programs
 * see on top of their stack), and __traceiter_<tracepoint> with its
 * __bpf_trace_ stub, whose presence depends on who else traces the same
 * tracepoint.  A stack, and a site named by its top frame, must not.
 */
static void
bpf_strip_tracing(struct vitals_event *ev)
{
	static const char *const pfx[] = { "bpf_prog_", "__traceiter_",
		"__bpf_trace_", "bpf_trace_run" };
	const char *n;
	size_t i;

	while (ev->nkstack > 0 && (n = sym_kernel(ev->kstack[0])) != NULL) {
		for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
			if (strncmp(n, pfx[i], strlen(pfx[i])) == 0)
				break;
		if (i == sizeof(pfx) / sizeof(pfx[0]))
			return;
		ev->kstack++;
		ev->nkstack--;
	}
}

/*
 * The event's kernel addresses as they are stored (core/kernel/kaddr.h):
 * its kernel frames into buf, the arguments the probe says may hold one
 * (spec.kargs) in place.  Epochs are read by users the kernel hides them
 * from.
 */
static void
bpf_hide_kernel(
    const struct vitals_bpf *b, struct vitals_event *ev, uint64_t *buf)
{
	uint32_t i;

	for (i = 0; i < ev->nkstack; i++)
		buf[i] = kaddr_frame(ev->kstack[i]);
	if (ev->nkstack > 0)
		ev->kstack = buf;
	for (i = 0; i < VITALS_NARGS; i++)
		if (b->spec.kargs & (1u << i))
			ev->args[i] = kaddr_value(ev->args[i]);
}

/*
 * Add n to t: the count to tell now, and t starts again from 0; or 0,
 * when there is nothing to tell or it was told less than BPF_TELL_NS ago.
 */
static uint64_t
bpf_tally(struct bpf_tally *t, uint64_t n)
{
	uint64_t now;

	if ((t->n += n) == 0)
		return 0;
	now = bpf_clock(CLOCK_MONOTONIC);
	if (t->at != 0 && now - t->at < BPF_TELL_NS)
		return 0;
	n = t->n;
	t->n = 0;
	t->at = now;
	return n;
}

/*
 * A record of another layout (a probe built against another SDK) is
 * dropped: say so, with the count dropped (bpf_tally).
 */
static void
bpf_bad_record(struct vitals_bpf *b, const void *data, size_t len)
{
	uint32_t version =
	    len >= sizeof(uint32_t) ? *(const uint32_t *)data : 0;
	uint64_t n = bpf_tally(&b->bad, 1);

	if (n == 0)
		return;
	vitals_log(b->ctx, VITALS_LOG_WARN,
	    "%llu sampled event(s) dropped: "
	    "BPF record layout %#x of %zu bytes, where this vitalsd reads "
	    "%#x of %zu (rebuild the probe against this SDK)",
	    (unsigned long long)n, version, len, VITALS_BPF_REC_VERSION,
	    sizeof(struct vitals_bpf_rec));
}

/*
 * n samples the programs found no room for in the ring, where the store
 * would have kept them: say how many and what to raise (bpf_tally; the
 * HCA counted the events).
 */
static void
bpf_ring_lost(struct vitals_bpf *b, uint64_t n)
{
	if ((n = bpf_tally(&b->lost, n)) == 0)
		return;
	vitals_log(b->ctx, VITALS_LOG_INFO,
	    "%llu sample(s) lost to a full ring buffer of %llu KiB while "
	    "the store had room (the events are counted; the probe's "
	    "ringbuf option holds more)",
	    (unsigned long long)n, (unsigned long long)b->ring_bytes / 1024);
}

/* Turn a record into an event and give it to the core. */
static int
bpf_on_sample(void *arg, void *data, size_t len)
{
	struct vitals_bpf *b = arg;
	const struct vitals_bpf_rec *r = data;
	struct vitals_event ev;
	char comm[VITALS_BPF_COMM_LEN + 1];
	const char *names[2 * VITALS_BPF_STACK];
	uint64_t ustack[VITALS_BPF_STACK], kstack[VITALS_BPF_STACK];
	const uint64_t *kraw;
	uint32_t nuf;

	if (!vitals_bpf_rec_valid(data, len)) {
		bpf_bad_record(b, data, len);
		return 0;
	}
	if (r->vital >= b->spec.nvitals)
		return 0;
	/*
	 * A record the store would drop costs nothing more: its exe's path
	 * and its process's maps are the dearest part of taking it.
	 */
	if (!engine_vital_room(b->vitals[r->vital], r->fresh,
		vitals_hash_label(r->label, r->exe_id, r->uid), r->count,
		(r->nkstack < VITALS_BPF_STACK ? r->nkstack
					       : VITALS_BPF_STACK) +
		    (r->nustack < VITALS_BPF_STACK ? r->nustack
						   : VITALS_BPF_STACK)))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = (uint64_t)((int64_t)r->ts_ns + b->mono_to_real);
	ev.label = r->label;
	ev.weight = r->weight ? r->weight : 1;
	ev.exe_id = r->exe_id;
	ev.uid = r->uid;
	ev.pid = r->pid;
	ev.tid = r->tid;
	ev.op = r->op;
	ev.nkstack =
	    r->nkstack < VITALS_BPF_STACK ? r->nkstack : VITALS_BPF_STACK;
	ev.nustack =
	    r->nustack < VITALS_BPF_STACK ? r->nustack : VITALS_BPF_STACK;
	ev.kstack = (const uint64_t *)r->kstack;
	ev.ustack = (const uint64_t *)r->ustack;
	memcpy(comm, r->comm, VITALS_BPF_COMM_LEN);
	comm[VITALS_BPF_COMM_LEN] = '\0';
	ev.comm = comm;
	ev.exe = exe_path(r->pid, r->exe_id, comm, b->exe, sizeof(b->exe)) == 0
	    ? b->exe
	    : NULL;
	if (ev.exe != NULL && r->nustack > 0)
		sym_proc_text(
		    r->pid, r->exe_id, ev.exe, r->code_start, r->code_end);
	memcpy(ev.args, r->args, sizeof(ev.args));
	bpf_strip_tracing(&ev);
	if (b->spec.fixup != NULL && b->spec.fixup(b->spec.fixup_arg, r, &ev))
		return 0;
	nuf = r->nufiles <= VITALS_BPF_UFILES ? r->nufiles : 0;
	bpf_encode_ustack(&ev, r->ufile, nuf, r->ts_ns, ustack);
	kraw = ev.kstack;
	bpf_hide_kernel(b, &ev, kstack);
	/* Symbolize only what the core kept: names cost /proc and ELF reads. */
	if (engine_vital_keep(b->vitals[r->vital], &ev, r->count, r->fresh)) {
		bpf_symbolize(&ev, kraw, names);
		engine_vital_name_last(
		    b->vitals[r->vital], names, ev.nkstack, ev.nustack);
	}
	return 0;
}

/* The programs' run time and run count, summed (kept only while stats are on). */
static void
bpf_run_totals(struct vitals_bpf *b, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info;
	struct bpf_program *p;
	uint32_t ilen;
	int fd;

	*ns = *cnt = 0;
	bpf_object__for_each_program (p, b->obj) {
		if ((fd = bpf_program__fd(p)) < 0)
			continue;
		memset(&info, 0, sizeof(info));
		ilen = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &ilen) == 0) {
			*ns += info.run_time_ns;
			*cnt += info.run_cnt;
		}
	}
}

/*
 * Sum the per-CPU counts of (weight - 1) of one vital's half (see
 * sketch.bpf.h), and clear them if take.
 */
static uint64_t
bpf_events_adj(struct vitals_bpf *b, uint32_t half, uint32_t vital, int take)
{
	struct bpf_map *m;
	uint32_t key = half * VITALS_BPF_MAX_VITALS + vital;
	uint64_t n = 0;
	int i, fd;

	if ((m = bpf_object__find_map_by_name(b->obj, "vitals_events")) == NULL)
		return 0;
	fd = bpf_map__fd(m);
	if (bpf_map_lookup_elem(fd, &key, b->percpu) < 0)
		return 0;
	for (i = 0; i < b->ncpus; i++)
		n += b->percpu[i];
	if (take) {
		memset(b->percpu, 0, (size_t)b->ncpus * sizeof(uint64_t));
		bpf_map_update_elem(fd, &key, b->percpu, BPF_ANY);
	}
	return n;
}

/*
 * Read every CPU's last labels and their pending weights (see
 * vitals_bpf_count() in sketch.bpf.h) into b->slots; 0 if the object
 * has none or they cannot be read.
 */
static int
bpf_pend_read(struct vitals_bpf *b)
{
	uint32_t key = 0;

	return b->slots_fd >= 0 &&
	    bpf_map_lookup_elem(b->slots_fd, &key, b->slots) == 0;
}

/* The per-CPU exe cache's map, if the object has one of this layout. */
static int
bpf_slots_fd(const struct vitals_bpf *b)
{
	struct bpf_map *m;

	_Static_assert(sizeof(struct vitals_bpf_exe_slot) % 8 == 0,
	    "per-CPU values are 8-byte aligned");
	m = bpf_object__find_map_by_name(b->obj, "vitals_exe_cache");
	if (m == NULL ||
	    bpf_map__value_size(m) != sizeof(struct vitals_bpf_exe_slot))
		return -1;
	return bpf_map__fd(m);
}

/*
 * The weight the CPUs hold pending (as bpf_pend_read() found it) for one
 * vital's counters in epoch e; added to those counters if hca is not
 * NULL (the map's half of epoch e, which the programs no longer count
 * in but for one still running across the boundary).
 */
static uint64_t
bpf_pend_take(
    const struct vitals_bpf *b, uint32_t e, uint32_t vital, uint64_t *hca)
{
	const struct vitals_bpf_pend *p;
	uint64_t n = 0;
	int i;

	for (i = 0; i < b->ncpus; i++) {
		p = &b->slots[i].last[vital].pend[e & 1];
		if (p->epoch != e || p->weight == 0)
			continue;
		n += p->weight;
		if (hca != NULL)
			__atomic_fetch_add(
			    &hca[p->slot & (b->size[e & 1][vital] - 1)],
			    p->weight, __ATOMIC_RELAXED);
	}
	return n;
}

/* One vital's counters in one half of the map. */
static uint64_t *
bpf_half(const struct vitals_bpf *b, uint32_t half, uint32_t vital)
{
	return b->pool->hca + (size_t)b->at[half][vital] * UNITS_ENTRIES;
}

/* The sum of one vital's counters in one half of the map. */
static uint64_t
bpf_half_sum(const struct vitals_bpf *b, uint32_t half, uint32_t vital)
{
	const uint64_t *h = bpf_half(b, half, vital);
	uint64_t wsum = 0;
	uint32_t j;

	for (j = 0; j < b->size[half][vital]; j++)
		wsum += h[j];
	return wsum;
}

/* Events counted so far in the live half (all of the object's vitals). */
static uint64_t
bpf_live_events(struct vitals_bpf *b)
{
	uint64_t events = 0, wsum, adj;
	uint32_t i, e = b->cfg->epoch, half = e & 1;
	int pend = bpf_pend_read(b);

	for (i = 0; i < b->spec.nvitals; i++) {
		wsum = bpf_half_sum(b, half, i);
		if (pend)
			wsum += bpf_pend_take(b, e, i, NULL);
		/* A counter read before its event's weight was noted. */
		if (wsum == 0 || (adj = bpf_events_adj(b, half, i, 0)) > wsum)
			continue;
		events += wsum - adj;
	}
	return events;
}

/*
 * Kernel run-time stats cost two clock reads on every program run (about
 * 30 ns here) and are on for every program while any probe has them on,
 * so they are on only in a window once per epoch, the same for every
 * probe: from the start (so that the first epoch's cost is known within
 * it), and from half of each epoch, for a tenth of the epoch, at most a
 * second.  The window gives the programs' time per event counted (their
 * runs that count nothing, filtered out or of programs that only keep
 * state, included); the epoch's CPU is that times the events counted.
 * A window of few events says little of their cost: its programs' time
 * a second, times the epoch's length, is the figure instead (progcpu.c).
 * At the default 60 s epoch the windows add about 1/60 of the stats'
 * per-run cost on average.
 */
static uint64_t
bpf_stats_window(const struct vitals_bpf *b)
{
	uint64_t w = vitals_settings(b->ctx)->epoch_ns / 10;

	return w < 1000000000ULL ? w : 1000000000ULL;
}

static void
bpf_stats_open(struct vitals_bpf *b)
{
	if (b->stats_fd >= 0)
		return;
	b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (b->stats_fd < 0)
		return;
	bpf_run_totals(b, &b->run_ns, &b->run_cnt);
	b->win_done = b->wins > 0;
	b->wins++;
	b->win_events = bpf_live_events(b);
	b->win_start = bpf_clock(CLOCK_MONOTONIC);
}

/* Close the window, with the events counted so far in the epoch. */
static void
bpf_stats_close(struct vitals_bpf *b, uint64_t events)
{
	uint64_t ns, cnt;

	if (b->stats_fd < 0)
		return;
	bpf_run_totals(b, &ns, &cnt);
	if (events > b->win_events && ns > b->run_ns)
		progcpu_window(&b->pcpu, events - b->win_events, ns - b->run_ns,
		    bpf_clock(CLOCK_MONOTONIC) - b->win_start);
	close(b->stats_fd);
	b->stats_fd = -1;
}

/* Open the stats window when its time comes; close it after its length. */
static void
bpf_stats_tick(struct vitals_bpf *b)
{
	uint64_t now = bpf_clock(CLOCK_MONOTONIC);

	if (b->stats_fd >= 0) {
		if (now - b->win_start >= bpf_stats_window(b))
			bpf_stats_close(b, bpf_live_events(b));
	} else if (b->wins == 0 ||
	    (!b->win_done &&
		now - b->epoch_start >= vitals_settings(b->ctx)->epoch_ns / 2))
		bpf_stats_open(b);
}

/*
 * Report the programs' CPU to the core as it grows (progcpu_est() of the
 * epoch so far), once a second, for the epoch's collector CPU
 * (vitals.cpu.programs; t does not steer it).  The boundary reports the
 * rest.
 */
static void
bpf_cpu_live(struct vitals_bpf *b)
{
	uint64_t now = bpf_clock(CLOCK_MONOTONIC), est;

	if (b->pcpu.events == 0 || now - b->live_at < BPF_LIVE_NS)
		return;
	b->live_at = now;
	est = progcpu_est(&b->pcpu, bpf_live_events(b), now - b->epoch_start);
	if (est > b->cpu_added) {
		vitals_cpu_add(b->ctx, est - b->cpu_added);
		b->cpu_added = est;
	}
}

static size_t
bpf_page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/*
 * Map the ring's two position pages read-only, as libbpf maps them for
 * its own use.  Without them (an error is no harm) every drain consumes.
 */
static void
bpf_ring_map(struct vitals_bpf *b, int fd)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return;
	b->rb_cons = p;
	b->rb_prod = (const unsigned long *)((const char *)p + pg);
}

/* Whether the ring holds no record, reserved or written. */
static int
bpf_ring_empty(const struct vitals_bpf *b)
{
	return b->rb_cons != NULL &&
	    __atomic_load_n(b->rb_cons, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(b->rb_prod, __ATOMIC_ACQUIRE);
}

/*
 * Hand the ring's records to the core.  The CPU it takes is the samples'
 * handling (each one's exe, maps and frames' names), the CPU t steers:
 * measured on this thread's clock, apart from the timers' other work.
 */
static void
bpf_consume(struct vitals_bpf *b)
{
	uint64_t t0, t1;

	if (bpf_ring_empty(b))
		return;
	t0 = bpf_clock(CLOCK_THREAD_CPUTIME_ID);
	ring_buffer__consume(b->rb);
	t1 = bpf_clock(CLOCK_THREAD_CPUTIME_ID);
	if (b->spec.nvitals > 0 && t1 > t0)
		engine_vital_sampling(b->vitals[0], t1 - t0);
}

/* Drain sampled events and keep the kernel's t in step with the core's. */
static void
bpf_drain(struct vitals_bpf *b)
{
	uint32_t i, full;

	b->mono_to_real = (int64_t)bpf_clock(CLOCK_REALTIME) -
	    (int64_t)bpf_clock(CLOCK_MONOTONIC);
	bpf_consume(b);
	bpf_stats_tick(b);
	bpf_cpu_live(b);
	for (i = 0, full = 0; i < b->spec.nvitals; i++) {
		b->cfg->shift[i] =
		    bpf_log2(vitals_vital_threshold(b->vitals[i]));
		full |= (uint32_t)engine_vital_full(b->vitals[i]) << i;
	}
	b->cfg->full = full;
}

static void
bpf_on_timer(void *arg)
{
	bpf_drain(arg);
}

/* The ring is more than half full (see vitals_bpf_send): empty it now. */
static void
bpf_on_ring(int fd, void *arg)
{
	struct vitals_bpf *b = arg;

	(void)fd;
	bpf_consume(b);
}

static int
bpf_map_all(struct vitals_bpf *b)
{
	struct bpf_map *m = bpf_object__find_map_by_name(b->obj, "vitals_cfg");
	void *p;

	b->cfg_len = bpf_page_round(sizeof(struct vitals_bpf_cfg));
	if (m == NULL)
		return -ENOENT;
	p = mmap(NULL, b->cfg_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return -errno;
	b->cfg = p;
	return 0;
}

int
vitals_bpf_start(struct vitals_bpf *b)
{
	struct bpf_map *rb;
	char why[128];
	int r;

	if ((r = bpf_map_all(b)) < 0) {
		vitals_error(
		    b->ctx, "cannot map the sketch maps: %s", strerror(-r));
		return r;
	}
	*b->cfg = b->init;
	b->slots_fd = bpf_slots_fd(b);
	rb = bpf_object__find_map_by_name(b->obj, "vitals_rb");
	b->rb = ring_buffer__new(bpf_map__fd(rb), bpf_on_sample, b, NULL);
	if (b->rb == NULL) {
		r = -errno;
		vitals_error(b->ctx, "ring buffer: %s", strerror(-r));
		return r;
	}
	bpf_ring_map(b, bpf_map__fd(rb));
	b->epoch_start = bpf_clock(CLOCK_MONOTONIC);
	b->mono_to_real = (int64_t)bpf_clock(CLOCK_REALTIME) -
	    (int64_t)bpf_clock(CLOCK_MONOTONIC);
	/* Without it, only processes seen alive are named: say so once. */
	if (b->exec_held || exe_exec_hold(why, sizeof(why)) == 0)
		b->exec_held = 1;
	else if (!bpf_exec_warned++)
		vitals_log(b->ctx, VITALS_LOG_WARN,
		    "exec table: %s; samples "
		    "of short-lived processes may lack an exe",
		    why);
	if ((r = vitals_watch_add(b->ctx, ring_buffer__epoll_fd(b->rb),
		 bpf_on_ring, b, &b->watch)) < 0)
		return r;
	return vitals_timer_add(
	    b->ctx, BPF_DRAIN_NS, bpf_on_timer, b, &b->timer);
}

int
vitals_bpf_load(struct vitals_bpf *b)
{
	int r;

	if ((r = bpf_object__load(b->obj)) < 0) {
		vitals_error(
		    b->ctx, "cannot load the BPF programs: %s", strerror(-r));
		return r;
	}
	return vitals_bpf_start(b);
}

int
vitals_bpf_attach(struct vitals_bpf *b)
{
	struct bpf_program *p;
	const char *sec;
	int r;

	bpf_object__for_each_program (p, b->obj) {
		sec = bpf_program__section_name(p);
		if (!bpf_program__autoload(p) || strcmp(sec, "perf_event") == 0)
			continue;
		if (b->nlinks == BPF_MAX_LINKS) {
			vitals_error(b->ctx, "more than %d programs to attach",
			    BPF_MAX_LINKS);
			return -E2BIG;
		}
		if ((b->links[b->nlinks] = bpf_program__attach(p)) == NULL) {
			r = -errno;
			vitals_error(b->ctx, "cannot attach to %s: %s", sec,
			    strerror(-r));
			return r;
		}
		b->nlinks++;
	}
	return 0;
}

/*
 * Forget what the identity caches (exe paths, process maps) hold about
 * exited processes.  Every probe flushes at the boundary: once is enough.
 */
static void
bpf_drop_dead(void)
{
	static uint64_t last;
	uint64_t now = bpf_clock(CLOCK_MONOTONIC);

	if (last != 0 && now - last < BPF_DROP_NS)
		return;
	last = now;
	sym_drop_dead();
	exe_drop_dead();
}

/*
 * Size each vital's HCA in the half the flip to epoch e + 1 makes live,
 * idle since the last boundary cleared it, from the live half's counters
 * (the epoch ending, all but its last events), place its region anew
 * (smaller if the pool has no room for the size wanted: it has for the
 * one given back), and have the engine's sketch of that epoch follow.
 */
static void
bpf_plan(struct vitals_bpf *b, uint32_t e)
{
	uint32_t i, m, had, next = (e + 1) & 1;

	for (i = 0; i < b->spec.nvitals; i++) {
		had = b->size[next][i];
		m = engine_vital_hca_want(
		    b->vitals[i], bpf_half(b, e & 1, i), b->size[e & 1][i]);
		if (!bpf_size_ok(b, i, m))
			m = had;
		bpf_region_give(b, next, i, 0);
		/*
		 * At least min(m, 1024), a valid size: the units given back
		 * hold a region of 1024 counters or more, at its own size's
		 * multiple, which every smaller size is aligned to.
		 */
		m = bpf_region_place(b, next, i, m);
		engine_vital_hca_plan(b->vitals[i], m);
		bpf_set_size(b, b->cfg, next, i, m);
	}
}

int
vitals_bpf_flush(struct vitals_bpf *b)
{
	uint32_t i, e, old, nv = b->spec.nvitals, m;
	uint64_t *h, wsum, dropped, events, cpu, all = 0, lost = 0;
	int r, pend, err = 0;

	if (b->cfg == NULL)
		return 0;
	e = b->cfg->epoch;
	old = e & 1;
	bpf_drain(b);
	/* A window open at the boundary ends with the epoch whose events it saw. */
	if (b->stats_fd >= 0)
		bpf_stats_close(b, bpf_live_events(b));
	bpf_plan(b, e);
	/* A counter, not a bit: the kernel's last-label cache compares it whole. */
	__atomic_store_n(&b->cfg->epoch, e + 1, __ATOMIC_SEQ_CST);
	b->cfg->full = 0; /* the next epoch's stores start empty */
	/* Samples counted just before the flip still belong to this epoch. */
	bpf_consume(b);
	pend = bpf_pend_read(b);
	for (i = 0; i < nv; i++) {
		h = bpf_half(b, old, i);
		m = b->size[old][i];
		if (pend)
			bpf_pend_take(b, e, i, h);
		wsum = bpf_half_sum(b, old, i);
		dropped = b->cfg->dropped[i] - b->dropped_seen[i];
		b->dropped_seen[i] = b->cfg->dropped[i];
		/* The map holds the sum of (weight - 1): see sketch.bpf.h. */
		events = wsum - bpf_events_adj(b, old, i, 1);
		all += events;
		/*
		 * The HCA counted them; only their samples were lost.  Told
		 * only if the store had room at the close: lost where it was
		 * full, they would not have been kept either.
		 */
		if (!engine_vital_full(b->vitals[i]))
			lost += dropped;
		engine_vital_samples_lost(b->vitals[i], dropped);
		r = vitals_vital_load(b->vitals[i], h, m, events, wsum, 0);
		if (r < 0)
			err = r;
		/* All of a region past what an epoch used stays zero. */
		memset(h, 0, (size_t)m * sizeof(uint64_t));
		memset(b->pool->seen + (size_t)b->at[old][i] * UNITS_ENTRIES, 0,
		    (size_t)bpf_seen_words(m) * sizeof(uint64_t));
	}
	bpf_ring_lost(b, lost);
	bpf_drop_dead();
	/* What bpf_cpu_live() has not reported yet. */
	cpu = progcpu_est(
	    &b->pcpu, all, bpf_clock(CLOCK_MONOTONIC) - b->epoch_start);
	if (cpu > b->cpu_added)
		vitals_cpu_add(b->ctx, cpu - b->cpu_added);
	b->cpu_added = 0;
	b->epoch_start = b->live_at = bpf_clock(CLOCK_MONOTONIC);
	b->win_done = 0;
	return err;
}

void
vitals_bpf_free(struct vitals_bpf *b)
{
	uint32_t i;

	if (b == NULL)
		return;
	while (b->nlinks > 0)
		bpf_link__destroy(b->links[--b->nlinks]);
	if (b->timer != NULL)
		vitals_timer_del(b->timer);
	if (b->watch != NULL)
		vitals_watch_del(b->watch);
	if (b->rb != NULL)
		ring_buffer__free(b->rb);
	if (b->rb_cons != NULL)
		munmap((void *)b->rb_cons, 2 * (size_t)sysconf(_SC_PAGESIZE));
	for (i = 0; b->pool != NULL && i < b->spec.nvitals; i++) {
		bpf_region_give(b, 0, i, 1);
		bpf_region_give(b, 1, i, 1);
	}
	bpf_pool_put(b->pool);
	if (b->cfg != NULL)
		munmap(b->cfg, b->cfg_len);
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	if (b->exec_held)
		exe_exec_release();
	free(b->percpu);
	free(b->slots);
	free(b);
}

/* Effective capability set of this process, from /proc/self/status. */
static uint64_t
bpf_cap_eff(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

int
vitals_bpf_available(const char *const *tracepoints, char *why, size_t len)
{
	const uint64_t bpf = 1ULL << 39, perfmon = 1ULL << 38,
		       admin = 1ULL << 21;
	char cat[64], *ev;
	uint64_t caps = bpf_cap_eff();
	int i;

	if (geteuid() != 0 && !((caps & bpf) && (caps & perfmon)) &&
	    !(caps & admin)) {
		snprintf(why, len,
		    "not root and no CAP_BPF+CAP_PERFMON "
		    "(run vitalsd as root)");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		snprintf(why, len,
		    "no kernel BTF (/sys/kernel/btf/vmlinux): "
		    "kernel built without CONFIG_DEBUG_INFO_BTF");
		return -ENOTSUP;
	}
	if (tracepoints != NULL && tracepoints[0] != NULL &&
	    tracefs_dir() == NULL) {
		snprintf(why, len,
		    "tracefs is not mounted and cannot be "
		    "mounted at /sys/kernel/tracing: %s",
		    strerror(errno));
		return -ENOTSUP;
	}
	for (i = 0; tracepoints != NULL && tracepoints[i] != NULL; i++) {
		snprintf(cat, sizeof(cat), "%s", tracepoints[i]);
		if ((ev = strchr(cat, ':')) == NULL)
			continue;
		*ev++ = '\0';
		if (!tracefs_has(cat, ev)) {
			snprintf(why, len,
			    "tracepoint %s missing from this "
			    "kernel",
			    tracepoints[i]);
			return -ENOENT;
		}
	}
	return 0;
}

int
vitals_bpf_ksym_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	return sym_kernel_range(name, lo, hi);
}
