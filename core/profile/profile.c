/* SPDX-License-Identifier: MIT */
/*
 * Collecting a profile: each sample of one vital, weighted by the HCA
 * attribution (labels_weights), is reduced to its exe and frames, kept
 * once per distinct stack in tables the profile owns, so that epochs can
 * be freed as soon as they are added.  Also the range reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/profile.h>
#include <vitals/store.h>

#include "labels.h"
#include "prefetch.h"
#include "prof.h"

/* Epoch files the range reader decodes ahead of the one it adds. */
#define PROFILE_AHEAD 16
/* Room for a stack's key: the exe id and every frame id, in hex. */
#define PROFILE_KEY_LEN (9 * (2 * VITALS_STACK_MAX + 1) + 1)

int
prof_grow(void *v, uint32_t *cap, size_t size, size_t n)
{
	void **pv = v, *nv;
	size_t c = *cap != 0 ? *cap : 16;

	if (n <= *cap)
		return 0;
	if (n > UINT32_MAX)
		return -ENOMEM;
	while (c < n)
		c *= 2;
	if (c > UINT32_MAX)
		c = UINT32_MAX;
	if ((nv = realloc(*pv, c * size)) == NULL)
		return -ENOMEM;
	*pv = nv;
	*cap = (uint32_t)c;
	return 0;
}

int64_t
prof_round(double *acc, double value)
{
	double before = *acc;

	*acc += value;
	return (int64_t)llround(*acc) - (int64_t)llround(before);
}

struct vitals_profile *
vitals_profile_new(const char *vital, const char *exe)
{
	struct vitals_profile *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->vital = strdup(vital != NULL ? vital : "");
	p->exe = exe != NULL ? strdup(exe) : NULL;
	p->exes = labels_map_new();
	p->frame_ids = labels_map_new();
	p->mapping_ids = labels_map_new();
	p->stack_ids = labels_map_new();
	if (p->vital == NULL || (exe != NULL && p->exe == NULL) ||
	    p->exes == NULL || p->frame_ids == NULL || p->mapping_ids == NULL ||
	    p->stack_ids == NULL) {
		vitals_profile_free(p);
		return NULL;
	}
	p->st.vital = p->vital;
	p->st.exe = p->exe;
	p->st.unit = "";
	return p;
}

void
vitals_profile_free(struct vitals_profile *p)
{
	uint32_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nframes; i++)
		free(p->frames[i].name);
	for (i = 0; i < p->nmappings; i++) {
		free(p->mappings[i].path);
		free(p->mappings[i].build_id);
	}
	free(p->frames);
	free(p->mappings);
	free(p->stacks);
	free(p->pool);
	labels_map_free(p->exes);
	labels_map_free(p->frame_ids);
	labels_map_free(p->mapping_ids);
	labels_map_free(p->stack_ids);
	free(p->vital);
	free(p->exe);
	free(p->unit);
	free(p);
}

void
vitals_profile_set_base(struct vitals_profile *p, uint64_t base_ns)
{
	p->base_ns = base_ns;
}

const struct vitals_profile_stats *
vitals_profile_stats(const struct vitals_profile *p)
{
	return &p->st;
}

/* ---- one sample ---- */

/* Whether sample s passes the exe filter (see vitals_profile_new). */
static int
profile_exe_match(const struct vitals_profile *p, const struct vitals_sample *s)
{
	const char *exe = s->exe != NULL ? s->exe : "", *base;

	if (p->exe == NULL)
		return 1;
	if (strchr(p->exe, '/') != NULL)
		return strcmp(exe, p->exe) == 0;
	base = strrchr(exe, '/');
	base = base != NULL ? base + 1 : exe;
	return strcmp(base, p->exe) == 0 ||
	    (s->comm != NULL && strcmp(s->comm, p->exe) == 0);
}

/* Register the file (path, build_id) as a mapping; its index in *out. */
static int
profile_mapping_put(
    struct vitals_profile *p, const struct vitals_module *m, uint32_t *out)
{
	const char *path = m->path != NULL ? m->path : "";
	const char *bid = m->build_id != NULL ? m->build_id : "";
	char *key = NULL, *cpath = NULL, *cbid = NULL;
	size_t n = strlen(path) + strlen(bid) + 2;
	int rc = -ENOMEM;

	if ((key = malloc(n)) == NULL || (cpath = strdup(path)) == NULL ||
	    (cbid = strdup(bid)) == NULL ||
	    prof_grow(&p->mappings, &p->cap_mappings, sizeof(*p->mappings),
		(size_t)p->nmappings + 1) != 0)
		goto out;
	snprintf(key, n, "%s\n%s", bid, path);
	if ((rc = labels_map_put(p->mapping_ids, 0, key, out)) == 1) {
		p->mappings[p->nmappings++] =
		    (struct prof_mapping){ cpath, cbid, 0 };
		cpath = cbid = NULL;
		rc = 0;
	}
out:
	free(key);
	free(cpath);
	free(cbid);
	return rc;
}

/*
 * The mapping of module id of epoch e (cache: one entry per e->modules,
 * LABELS_NONE until known), or PROF_RAW when e lists no such module.
 */
static int
profile_mapping(struct vitals_profile *p, const struct vitals_epoch *e,
    int32_t id, uint32_t *cache, uint32_t *out)
{
	const struct vitals_module *m;
	size_t j;
	int rc;

	*out = PROF_RAW;
	if (id < 0 || (m = vitals_epoch_module(e, (uint32_t)id)) == NULL)
		return 0;
	j = (size_t)(m - e->modules);
	if (cache[j] == LABELS_NONE &&
	    (rc = profile_mapping_put(p, m, &cache[j])) != 0)
		return rc;
	*out = cache[j];
	return 0;
}

/* The id of frame (mapping, addr, name), added if new. */
static int
profile_frame(struct vitals_profile *p, uint32_t mapping, uint64_t addr,
    const char *name, int symbol, uint32_t *id)
{
	char key[LABELS_FRAME_LEN + 24], *copy;

	snprintf(key, sizeof(key), "%" PRIx64 " %s", addr, name);
	if ((*id = labels_map_find(p->frame_ids, mapping, key)) != LABELS_NONE)
		return 0;
	if ((copy = strdup(name)) == NULL ||
	    prof_grow(&p->frames, &p->cap_frames, sizeof(*p->frames),
		(size_t)p->nframes + 1) != 0 ||
	    labels_map_put(p->frame_ids, mapping, key, id) < 0) {
		free(copy);
		return -ENOMEM;
	}
	p->frames[p->nframes++] =
	    (struct prof_frame){ copy, addr, mapping, symbol };
	if (mapping < p->nmappings && addr > p->mappings[mapping].max_off)
		p->mappings[mapping].max_off = addr;
	return 0;
}

/* Whether frame i of s (kernel frames first) was named by a symbol. */
static int
profile_symbol(const struct vitals_sample *s, uint32_t i)
{
	return s->ksyms != NULL && s->ksyms[i] != NULL &&
	    s->ksyms[i][0] != '\0';
}

/*
 * The frame ids of s into ids (room for 2 * VITALS_STACK_MAX): user
 * frames outermost first, then kernel frames outermost first; *n of them.
 */
static int
profile_frames(struct vitals_profile *p, const struct vitals_epoch *e,
    const struct vitals_sample *s, uint32_t *cache, uint32_t *ids, uint32_t *n)
{
	uint32_t nu = s->ustack != NULL ? s->nustack : 0, i, m;
	uint32_t nk = s->kstack != NULL ? s->nkstack : 0;
	char name[LABELS_FRAME_LEN];
	uint64_t v;
	int rc = 0;

	*n = 0;
	for (i = nu < VITALS_STACK_MAX ? nu : VITALS_STACK_MAX;
	     rc == 0 && i--;) {
		v = s->ustack[i];
		if ((rc = profile_mapping(
			 p, e, VITALS_UFRAME_MODULE(v), cache, &m)) != 0)
			break;
		labels_frame(e, s, 0, i, 0, name, sizeof(name));
		rc = profile_frame(p, m,
		    m == PROF_RAW ? v : VITALS_UFRAME_OFFSET(v), name,
		    profile_symbol(s, s->nkstack + i), &ids[(*n)++]);
	}
	for (i = nk < VITALS_STACK_MAX ? nk : VITALS_STACK_MAX;
	     rc == 0 && i--;) {
		labels_frame(e, s, 1, i, 0, name, sizeof(name));
		/*
		 * Kernel frames ((image, offset) or, in no image, keyed below
		 * 2^48: core/kernel/kaddr.h) above every user mapping's
		 * made-up addresses, so the "[kernel]" mapping overlaps none.
		 */
		v = s->kstack[i];
		rc = profile_frame(p, PROF_KERNEL,
		    v < PROF_KERNEL_MIN ? v | 1ULL << 63 : v, name,
		    profile_symbol(s, i), &ids[(*n)++]);
	}
	return rc;
}

/* Append v in hex and the separator c to key at *at. */
static void
profile_hex(char *key, size_t *at, uint32_t v, char c)
{
	char tmp[8];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	while (n > 0)
		key[(*at)++] = tmp[--n];
	key[(*at)++] = c;
}

/* The stack (exe, ids[0..n)) gets weight w and one more sample. */
static int
profile_stack(struct vitals_profile *p, uint32_t exe, const uint32_t *ids,
    uint32_t n, double w)
{
	char key[PROFILE_KEY_LEN];
	size_t at = 0;
	uint32_t i, id;

	profile_hex(key, &at, exe, ':');
	for (i = 0; i < n; i++)
		profile_hex(key, &at, ids[i], ',');
	key[at] = '\0';
	if ((id = labels_map_find(p->stack_ids, 0, key)) == LABELS_NONE) {
		if (prof_grow(&p->stacks, &p->cap_stacks, sizeof(*p->stacks),
			(size_t)p->nstacks + 1) != 0 ||
		    prof_grow(&p->pool, &p->cap_pool, sizeof(*p->pool),
			(size_t)p->npool + n) != 0 ||
		    labels_map_put(p->stack_ids, 0, key, &id) < 0)
			return -ENOMEM;
		p->stacks[p->nstacks++] =
		    (struct prof_stack){ exe, p->npool, n, 0, 0 };
		if (n > 0) /* a stack of no frames has no ids (NULL) */
			memcpy(p->pool + p->npool, ids, n * sizeof(*ids));
		p->npool += n;
		p->st.stacks++;
	}
	p->stacks[id].weight += w;
	p->stacks[id].samples++;
	return 0;
}

/* Add sample s of epoch e with attributed weight w. */
static int
profile_sample(struct vitals_profile *p, const struct vitals_epoch *e,
    const struct vitals_sample *s, double w, uint32_t *cache)
{
	uint32_t ids[2 * VITALS_STACK_MAX], n, exe;
	char buf[LABELS_NAME_LEN];
	int rc;

	if (!profile_exe_match(p, s))
		return 0;
	if (labels_map_put(p->exes, 0,
		labels_name(s, LABELS_BY_EXE, buf, sizeof(buf)), &exe) < 0)
		return -ENOMEM;
	if ((rc = profile_frames(p, e, s, cache, ids, &n)) != 0 ||
	    (rc = profile_stack(p, exe, ids, n, w)) != 0)
		return rc;
	p->st.total += w;
	p->st.samples++;
	return 0;
}

/* ---- epochs ---- */

/* Count e's time, and the vital's unit, weight and threshold. */
static int
profile_epoch(struct vitals_profile *p, const struct vitals_epoch *e,
    const struct vitals_vital_epoch *ve)
{
	uint64_t end = e->start_ns + e->length_ns;

	if (p->st.epochs == 0 || e->start_ns < p->st.start_ns)
		p->st.start_ns = e->start_ns;
	if (end > p->st.end_ns)
		p->st.end_ns = end;
	p->st.epochs++;
	p->st.covered_ns += e->length_ns;
	if (ve == NULL)
		return 0;
	p->st.vital_epochs++;
	p->st.wsum += (double)ve->wsum;
	if (ve->threshold > p->st.threshold)
		p->st.threshold = ve->threshold;
	if (p->unit == NULL && ve->unit != NULL) {
		if ((p->unit = strdup(ve->unit)) == NULL)
			return -ENOMEM;
		p->st.unit = p->unit;
	}
	return 0;
}

int
vitals_profile_add(struct vitals_profile *p, const struct vitals_epoch *e)
{
	const struct vitals_vital_epoch *ve = vitals_epoch_vital(e, p->vital);
	uint32_t *cache = NULL, i;
	double *w = NULL, attributed;
	int rc;

	if ((rc = profile_epoch(p, e, ve)) != 0 || ve == NULL ||
	    ve->nsamples == 0 || ve->samples == NULL)
		return rc;
	if ((w = malloc(ve->nsamples * sizeof(*w))) == NULL ||
	    (cache = malloc((e->nmodules + 1) * sizeof(*cache))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(cache, 0xff, (e->nmodules + 1) * sizeof(*cache));
	rc = labels_weights(ve, labels_runs(e, p->base_ns), w, &attributed);
	for (i = 0; rc == 0 && i < ve->nsamples; i++)
		rc = profile_sample(p, e, &ve->samples[i], w[i], cache);
out:
	free(w);
	free(cache);
	return rc;
}

/* ---- a range of the store ---- */

/* Whether host is one of hosts[0..n) (any when n is 0). */
static int
profile_host(const char *host, const char *const *hosts, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strcmp(hosts[i], host) == 0)
			return 1;
	return n == 0;
}

/* Load the epoch of paths[i], through the prefetcher when there is one. */
static int
profile_load(struct prefetch *pf, const char *const *paths, size_t i,
    struct vitals_epoch **e, char *err, size_t errlen)
{
	if (pf != NULL)
		return prefetch_take(pf, i, e, err, errlen);
	return vitals_epoch_load(paths[i], e, err, errlen);
}

/*
 * Add the epochs of paths[0..n) in order; unreadable ones are counted in
 * skipped, the first one's reason left in err.  *read: those added.
 */
static int
profile_files(struct vitals_profile *p, const char *const *paths, size_t n,
    char *err, size_t errlen, size_t *read)
{
	struct prefetch *pf = prefetch_start(paths, n, 0, PROFILE_AHEAD);
	struct vitals_epoch *e;
	char why[1024];
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		why[0] = '\0';
		if ((rc = profile_load(pf, paths, i, &e, why, sizeof(why))) !=
		    0) {
			if (rc == -ENOMEM)
				break;
			if (p->st.skipped++ == 0 && errlen > 0)
				snprintf(err, errlen, "%s",
				    why[0] != '\0' ? why : paths[i]);
			rc = 0;
			continue;
		}
		rc = vitals_profile_add(p, e);
		vitals_epoch_free(e);
		(*read)++;
	}
	prefetch_stop(pf);
	return rc;
}

/* UTC time of ns as 2026-11-22T10:00:00Z into buf. */
static void
profile_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "@%" PRIu64, ns / 1000000000u);
}

/* The message of a range that read nothing. */
static void
profile_nodata(const struct vitals_profile *p, const char *data_dir,
    uint64_t from_ns, uint64_t to_ns, char *err, size_t errlen)
{
	char a[32], b[32], first[512];

	snprintf(first, sizeof(first), "%s", errlen > 0 ? err : "");
	profile_time(from_ns, a, sizeof(a));
	profile_time(to_ns, b, sizeof(b));
	if (p->st.skipped > 0)
		snprintf(err, errlen,
		    "no readable epoch from %s to %s under %s (%" PRIu64
		    " skipped; first: %s)",
		    a, b, data_dir, p->st.skipped, first);
	else
		snprintf(err, errlen, "no epoch from %s to %s under %s", a, b,
		    data_dir);
}

int
vitals_profile_range(struct vitals_profile *p, const char *data_dir,
    uint64_t from_ns, uint64_t to_ns, const char *const *hosts, uint32_t nhosts,
    char *err, size_t errlen)
{
	struct vitals_store_list l;
	const char **paths = NULL;
	size_t i, n = 0, read = 0;
	int rc;

	if (errlen > 0)
		err[0] = '\0';
	if ((rc = vitals_store_list_since(data_dir, from_ns, &l)) != 0) {
		if (rc == -ENOTDIR)
			rc = -ENOENT;
		snprintf(err, errlen, "%s: %s", data_dir,
		    rc == -ENOENT ? "no such data directory" : strerror(-rc));
		return rc;
	}
	if ((paths = calloc(l.n + 1, sizeof(*paths))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (l.v[i].start_ns >= from_ns && l.v[i].start_ns < to_ns &&
		    profile_host(l.v[i].host, hosts, nhosts))
			paths[n++] = l.v[i].path;
	rc = profile_files(p, paths, n, err, errlen, &read);
	if (rc == 0 && read == 0) {
		profile_nodata(p, data_dir, from_ns, to_ns, err, errlen);
		rc = -ENODATA;
	}
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free(paths);
	vitals_store_list_free(&l);
	return rc;
}
