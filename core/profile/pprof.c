/* SPDX-License-Identifier: MIT */
/*
 * A profile as pprof's profile.proto, gzip'd: the messages are filled
 * from the profile's tables and packed by the protobuf-c code generated
 * at build time from the profile.proto pprof ships (profile.pb-c.[ch]).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include "prof.h"
#include "profile.pb-c.h"

/* Where the first module mapping's made-up addresses start, and their
 * alignment: pprof reads an address as mapping start + file offset. */
#define PPROF_BASE 0x400000ull
#define PPROF_PAGE 4096ull

/* The messages of one profile being packed; every array is owned. */
struct pprof {
	const struct vitals_profile *p;
	struct labels_map *strs; /* the string table: text -> index */
	struct labels_map *fns; /* (user?, name) -> function id - 1 */
	int err; /* -ENOMEM once interning failed */
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[2], *typep[2], period;
	Perftools__Profiles__Mapping *maps, **mapp;
	Perftools__Profiles__Function *fn, **fnp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Sample *samples, **samplep;
	Perftools__Profiles__Label *labels, **labelp;
	uint64_t *locids; /* the samples' location ids */
	int64_t *values; /* 2 per sample */
	int *named; /* per mapping (+ the kernel's): all frames named */
	char **strings; /* the string table, borrowed from strs */
	int64_t comment;
};

/* Index of s in the string table, added if new. */
static int64_t
pprof_str(struct pprof *b, const char *s)
{
	uint32_t id = 0;

	if (labels_map_put(b->strs, 0, s, &id) < 0)
		b->err = -ENOMEM;
	return id;
}

/* The unit pprof knows for a vital's unit. */
static const char *
pprof_unit(const char *unit)
{
	if (strcmp(unit, "ns") == 0)
		return "nanoseconds";
	if (strcmp(unit, "bytes") == 0)
		return "bytes";
	return "count";
}

static void
pprof_free(struct pprof *b)
{
	labels_map_free(b->strs);
	labels_map_free(b->fns);
	free(b->maps);
	free(b->mapp);
	free(b->fn);
	free(b->fnp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->samples);
	free(b->samplep);
	free(b->labels);
	free(b->labelp);
	free(b->locids);
	free(b->values);
	free(b->named);
	free(b->strings);
}

/* Allocate the arrays for p's tables.  0 or -ENOMEM. */
static int
pprof_alloc(struct pprof *b, const struct vitals_profile *p)
{
	size_t nm = (size_t)p->nmappings + 1, nf = p->nframes + 1,
	       ns = p->nstacks + 1;

	memset(b, 0, sizeof(*b));
	b->p = p;
	b->strs = labels_map_new();
	b->fns = labels_map_new();
	b->maps = calloc(nm, sizeof(*b->maps));
	b->mapp = calloc(nm, sizeof(*b->mapp));
	b->fn = calloc(nf, sizeof(*b->fn));
	b->fnp = calloc(nf, sizeof(*b->fnp));
	b->locs = calloc(nf, sizeof(*b->locs));
	b->locp = calloc(nf, sizeof(*b->locp));
	b->lines = calloc(nf, sizeof(*b->lines));
	b->linep = calloc(nf, sizeof(*b->linep));
	b->samples = calloc(ns, sizeof(*b->samples));
	b->samplep = calloc(ns, sizeof(*b->samplep));
	b->labels = calloc(ns, sizeof(*b->labels));
	b->labelp = calloc(ns, sizeof(*b->labelp));
	b->locids = calloc((size_t)p->npool + 1, sizeof(*b->locids));
	b->values = calloc(2 * ns, sizeof(*b->values));
	b->named = calloc(nm, sizeof(*b->named));
	if (b->strs == NULL || b->fns == NULL || b->maps == NULL ||
	    b->mapp == NULL || b->fn == NULL || b->fnp == NULL ||
	    b->locs == NULL || b->locp == NULL || b->lines == NULL ||
	    b->linep == NULL || b->samples == NULL || b->samplep == NULL ||
	    b->labels == NULL || b->labelp == NULL || b->locids == NULL ||
	    b->values == NULL || b->named == NULL)
		return -ENOMEM;
	pprof_str(b, ""); /* index 0 is "" in every profile */
	return b->err;
}

/* The profile's header: sample types, period, time span, comment. */
static void
pprof_header(struct pprof *b)
{
	const struct vitals_profile *p = b->p;
	const struct vitals_profile_stats *st = &p->st;
	Perftools__Profiles__Profile *pr = &b->prof;
	char comment[256];

	perftools__profiles__value_type__init(&b->types[0]);
	perftools__profiles__value_type__init(&b->types[1]);
	perftools__profiles__value_type__init(&b->period);
	b->types[0].type = pprof_str(b, p->vital);
	b->types[0].unit = pprof_str(b, pprof_unit(st->unit));
	b->types[1].type = pprof_str(b, "samples");
	b->types[1].unit = pprof_str(b, "count");
	b->period = b->types[0];
	b->typep[0] = &b->types[0];
	b->typep[1] = &b->types[1];
	pr->n_sample_type = 2;
	pr->sample_type = b->typep;
	pr->default_sample_type = b->types[0].type;
	pr->period_type = &b->period;
	/*
	 * Values are the vital's weight, already counted whole (the HCA,
	 * not a sampling of it): one event a period, not t, which readers
	 * that scale by the period would multiply them by.
	 */
	pr->period = 1;
	pr->time_nanos = (int64_t)(st->start_ns & INT64_MAX);
	pr->duration_nanos = (int64_t)((st->end_ns - st->start_ns) & INT64_MAX);
	snprintf(comment, sizeof(comment), "vitals: vital %s (unit %s)%s%s",
	    p->vital, st->unit[0] != '\0' ? st->unit : "-",
	    p->exe != NULL ? ", exe " : "", p->exe != NULL ? p->exe : "");
	b->comment = pprof_str(b, comment);
	pr->n_comment = 1;
	pr->comment = &b->comment;
}

/* Index in maps of a frame's mapping (the kernel's last), or -1. */
static long
pprof_mapping_of(const struct pprof *b, const struct prof_frame *f)
{
	if (f->mapping == PROF_KERNEL)
		return (long)b->p->nmappings;
	return f->mapping < b->p->nmappings ? (long)f->mapping : -1;
}

/*
 * Which mappings have every frame named by a symbol (b->named), and the
 * range of the kernel addresses (*klo > *khi when there is none).
 */
static void
pprof_scan(struct pprof *b, uint64_t *klo, uint64_t *khi)
{
	const struct vitals_profile *p = b->p;
	const struct prof_frame *f;
	uint32_t i;
	long m;

	*klo = UINT64_MAX;
	*khi = 0;
	for (i = 0; i <= p->nmappings; i++)
		b->named[i] = 1;
	for (i = 0; i < p->nframes; i++) {
		f = &p->frames[i];
		if ((m = pprof_mapping_of(b, f)) >= 0 && !f->symbol)
			b->named[m] = 0;
		if (f->mapping == PROF_KERNEL) {
			*klo = f->addr < *klo ? f->addr : *klo;
			*khi = f->addr > *khi ? f->addr : *khi;
		}
	}
}

/* Mapping i (the kernel's is the last), added to the profile. */
static Perftools__Profiles__Mapping *
pprof_mapping_add(struct pprof *b, uint32_t i)
{
	Perftools__Profiles__Mapping *m = &b->maps[i];

	perftools__profiles__mapping__init(m);
	m->id = i + 1;
	m->has_functions = b->named[i];
	b->mapp[b->prof.n_mapping++] = m;
	return m;
}

/*
 * The mappings: the modules at made-up, disjoint addresses, then
 * "[kernel]" around the kernel addresses seen.  A mapping claims
 * functions only if every frame in it was named by a symbol, so that
 * pprof symbolizes the others from the file when it has it.
 */
static void
pprof_mappings(struct pprof *b)
{
	const struct vitals_profile *p = b->p;
	uint64_t at = PPROF_BASE, klo, khi;
	Perftools__Profiles__Mapping *m;
	uint32_t i;

	pprof_scan(b, &klo, &khi);
	b->prof.mapping = b->mapp;
	for (i = 0; i < p->nmappings; i++) {
		m = pprof_mapping_add(b, i);
		m->memory_start = at;
		at += (p->mappings[i].max_off / PPROF_PAGE + 1) * PPROF_PAGE;
		m->memory_limit = at;
		m->filename = pprof_str(b, p->mappings[i].path);
		m->build_id = pprof_str(b, p->mappings[i].build_id);
	}
	if (klo > khi)
		return;
	m = pprof_mapping_add(b, p->nmappings);
	m->memory_start = klo;
	m->memory_limit = khi < UINT64_MAX ? khi + 1 : khi;
	m->filename = pprof_str(b, "[kernel]");
}

/* The id of the function named as frame f, added if new. */
static uint64_t
pprof_function(struct pprof *b, const struct prof_frame *f)
{
	uint32_t scope = f->mapping != PROF_KERNEL, id;
	Perftools__Profiles__Function *fn;

	if ((id = labels_map_find(b->fns, scope, f->name)) != LABELS_NONE)
		return id + 1;
	if (labels_map_put(b->fns, scope, f->name, &id) < 0) {
		b->err = -ENOMEM;
		return 0;
	}
	fn = &b->fn[id];
	perftools__profiles__function__init(fn);
	fn->id = id + 1;
	fn->name = fn->system_name = pprof_str(b, f->name);
	b->fnp[b->prof.n_function++] = fn;
	return fn->id;
}

/* One location per frame, with one line naming its function. */
static void
pprof_locations(struct pprof *b)
{
	const struct vitals_profile *p = b->p;
	const struct prof_frame *f;
	Perftools__Profiles__Location *l;
	uint32_t i;
	long m;

	for (i = 0; i < p->nframes; i++) {
		f = &p->frames[i];
		l = &b->locs[i];
		perftools__profiles__location__init(l);
		perftools__profiles__line__init(&b->lines[i]);
		l->id = i + 1;
		m = pprof_mapping_of(b, f);
		l->mapping_id = m >= 0 ? (uint64_t)m + 1 : 0;
		l->address = f->addr;
		if (f->mapping < p->nmappings)
			l->address += b->maps[f->mapping].memory_start;
		b->lines[i].function_id = pprof_function(b, f);
		b->linep[i] = &b->lines[i];
		l->n_line = 1;
		l->line = &b->linep[i];
		b->locp[i] = l;
	}
	b->prof.n_location = p->nframes;
	b->prof.location = b->locp;
	b->prof.function = b->fnp;
}

/* One sample per stack: locations innermost first, weight, samples, exe. */
static void
pprof_samples(struct pprof *b)
{
	const struct vitals_profile *p = b->p;
	const struct prof_stack *s;
	Perftools__Profiles__Sample *sm;
	double acc = 0;
	uint32_t i, k;

	for (i = 0; i < p->nstacks; i++) {
		s = &p->stacks[i];
		sm = &b->samples[i];
		perftools__profiles__sample__init(sm);
		for (k = 0; k < s->n; k++)
			b->locids[s->first + k] =
			    p->pool[s->first + s->n - 1 - k] + 1;
		sm->n_location_id = s->n;
		sm->location_id = &b->locids[s->first];
		b->values[2 * i] = prof_round(&acc, s->weight);
		b->values[2 * i + 1] = (int64_t)(s->samples & INT64_MAX);
		sm->n_value = 2;
		sm->value = &b->values[2 * i];
		perftools__profiles__label__init(&b->labels[i]);
		b->labels[i].key = pprof_str(b, "exe");
		b->labels[i].str =
		    pprof_str(b, labels_map_key(p->exes, s->exe));
		b->labelp[i] = &b->labels[i];
		sm->n_label = 1;
		sm->label = &b->labelp[i];
		b->samplep[i] = sm;
	}
	b->prof.n_sample = p->nstacks;
	b->prof.sample = b->samplep;
}

/* The string table, last: everything is interned by now. */
static int
pprof_strings(struct pprof *b)
{
	uint32_t i, n = labels_map_size(b->strs);

	if ((b->strings = calloc(n, sizeof(*b->strings))) == NULL)
		return -ENOMEM;
	/* protobuf-c only reads them; they stay the map's. */
	for (i = 0; i < n; i++)
		b->strings[i] = (char *)labels_map_key(b->strs, i);
	b->prof.n_string_table = n;
	b->prof.string_table = b->strings;
	return 0;
}

/* in[0..n) gzip'd into a malloc'd *out.  0, -ENOMEM or -EIO. */
static int
pprof_gzip(const uint8_t *in, size_t n, char **out, size_t *len)
{
	z_stream z;
	unsigned char *buf = NULL;
	uLong cap;
	int rc;

	memset(&z, 0, sizeof(z));
	if (n > UINT_MAX) /* one call to deflate */
		return -ENOMEM;
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
		Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)n) + 64;
	if (cap > UINT_MAX || (buf = malloc(cap)) == NULL) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = in;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = (char *)buf;
	*len = z.total_out;
	return 0;
}

int
vitals_profile_pprof(const struct vitals_profile *p, char **out, size_t *len)
{
	struct pprof b;
	uint8_t *packed = NULL;
	size_t n;
	int rc;

	if ((rc = pprof_alloc(&b, p)) != 0)
		goto out;
	perftools__profiles__profile__init(&b.prof);
	pprof_header(&b);
	pprof_mappings(&b);
	pprof_locations(&b);
	pprof_samples(&b);
	if ((rc = b.err) != 0 || (rc = pprof_strings(&b)) != 0)
		goto out;
	n = perftools__profiles__profile__get_packed_size(&b.prof);
	if ((packed = malloc(n + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&b.prof, packed);
	rc = pprof_gzip(packed, n, out, len);
out:
	free(packed);
	pprof_free(&b);
	return rc;
}
