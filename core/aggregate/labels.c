/* SPDX-License-Identifier: MIT */
/*
 * The one attribution of anonymous HCA weight to the samples, exes and
 * labels of each slot, shared by every filter (see labels.h), with how a
 * sample names its exe, frames and site and a (scope, string) -> id map.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/hash.h>

#include "labels.h"

/* One sample, reduced to the key it counts under. */
struct labels_key {
	uint32_t slot, exe_id, uid, idx; /* idx: arrival order */
	uint64_t label;
};

/* One (slot, label, exe_id, uid) and its weight. */
struct labels_part {
	double weight; /* its share of the slot's counter */
	const struct vitals_sample *rep; /* sample with the highest count */
	const char *name; /* group name, in names[] or in the sample */
};

static int
labels_key_cmp(const void *a, const void *b)
{
	const struct labels_key *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	if (x->exe_id != y->exe_id)
		return x->exe_id < y->exe_id ? -1 : 1;
	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
labels_same(const struct labels_key *x, const struct labels_key *y)
{
	return x->slot == y->slot && x->label == y->label &&
	    x->exe_id == y->exe_id && x->uid == y->uid;
}

/* The samples' keys sorted by (slot, label, exe_id, uid, arrival). */
static struct labels_key *
labels_keys(const struct vitals_vital_epoch *ve)
{
	struct labels_key *k;
	uint32_t i;

	if ((k = malloc(ve->nsamples * sizeof(*k))) == NULL)
		return NULL;
	for (i = 0; i < ve->nsamples; i++)
		k[i] = (struct labels_key){ ve->samples[i].slot,
			ve->samples[i].exe_id, ve->samples[i].uid, i,
			ve->samples[i].label };
	qsort(k, ve->nsamples, sizeof(*k), labels_key_cmp);
	return k;
}

/*
 * Whether sample s of a key starts a new run after prev, the key's sample
 * before it (NULL: none): a counter restarts at every base epoch
 * boundary, which shows as a new base epoch or a smaller count.
 */
static int
labels_new_run(const struct vitals_sample *prev, const struct vitals_sample *s,
    uint64_t base_ns)
{
	return prev == NULL || s->count < prev->count ||
	    (base_ns != 0 && s->ts_ns / base_ns != prev->ts_ns / base_ns);
}

/* The sample of key k[i] before it (k sorted by labels_keys), or NULL. */
static const struct vitals_sample *
labels_prev(
    const struct vitals_vital_epoch *ve, const struct labels_key *k, size_t i)
{
	return i > 0 && labels_same(&k[i - 1], &k[i])
	    ? &ve->samples[k[i - 1].idx]
	    : NULL;
}

/*
 * Whether sample s, the first of its key's run, is a first sighting in a
 * counter other labels already filled: a sample of another key of the
 * same slot k[0..n) in the same base epoch has a lower count, and no
 * power of two (so of t) lies in (count - weight, count], so the sketch
 * took s for its label being new, not for a crossing.  Its label then
 * added only its own weight to what the others had counted.
 */
static int
labels_joins(const struct vitals_vital_epoch *ve, const struct labels_key *k,
    size_t n, const struct labels_key *ks, uint64_t base_ns)
{
	const struct vitals_sample *s = &ve->samples[ks->idx], *o;
	size_t i;

	/* The counter took a higher top bit: maybe a crossing of t. */
	if (s->weight >= s->count ||
	    ((s->count - s->weight) ^ s->count) > s->count - s->weight)
		return 0;
	for (i = 0; i < n; i++) {
		o = &ve->samples[k[i].idx];
		if (!labels_same(&k[i], ks) && o->count < s->count &&
		    (base_ns == 0 || o->ts_ns / base_ns == s->ts_ns / base_ns))
			return 1;
	}
	return 0;
}

/*
 * Credit each sample of one key k[0..n), of the slot slot[0..nslot), with
 * the rise of its count since the key's previous sample, so the credits
 * add up to the sum of the runs' highest counts; a run that starts with a
 * first sighting in a counter others filled starts from its own weight
 * (crediting it the counter would rank a label seen once in a fault's
 * slot with the fault).
 */
static void
labels_rises(const struct vitals_vital_epoch *ve, const struct labels_key *k,
    size_t n, const struct labels_key *slot, size_t nslot, uint64_t base_ns,
    double *w)
{
	const struct vitals_sample *s, *prev = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		s = &ve->samples[k[i].idx];
		if (!labels_new_run(prev, s, base_ns))
			w[k[i].idx] = (double)(s->count - prev->count);
		else if (labels_joins(ve, slot, nslot, &k[i], base_ns))
			w[k[i].idx] = (double)s->weight;
		else
			w[k[i].idx] = (double)s->count;
		prev = s;
	}
}

/* Scale the credits of one slot's samples k[0..n) to its counter. */
static double
labels_share_slot(const struct vitals_vital_epoch *ve,
    const struct labels_key *k, size_t n, double *w)
{
	double sum = 0, counter;
	size_t i;

	for (i = 0; i < n; i++)
		sum += w[k[i].idx];
	if (sum <= 0)
		return 0;
	counter = sum;
	if (ve->hca != NULL && k[0].slot < ve->hca_size &&
	    ve->hca[k[0].slot] > 0)
		counter = (double)ve->hca[k[0].slot];
	for (i = 0; i < n; i++)
		w[k[i].idx] *= counter / sum;
	return counter;
}

/* labels_weights on the sorted keys k[0..n) (all of ve's, or a slot's). */
static double
labels_credit(const struct vitals_vital_epoch *ve, const struct labels_key *k,
    size_t n, uint64_t base_ns, double *w)
{
	double all = 0;
	size_t a, b, i, j;

	for (a = 0; a < n; a = b) {
		for (b = a + 1; b < n && k[b].slot == k[a].slot;)
			b++;
		for (i = a; i < b; i = j) {
			for (j = i + 1; j < b && labels_same(&k[i], &k[j]);)
				j++;
			labels_rises(
			    ve, k + i, j - i, k + a, b - a, base_ns, w);
		}
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && k[j].slot == k[i].slot;)
			j++;
		all += labels_share_slot(ve, k + i, j - i, w);
	}
	return all;
}

/*
 * Keep every sample of a slot where a run starts with a first sighting in
 * a counter others filled: labels_joins() tests it against the slot's
 * other samples, so a copy keeps them all to credit it the same.
 */
static void
labels_keep_joined(const struct vitals_vital_epoch *ve,
    const struct labels_key *k, uint64_t base_ns, uint8_t *keep)
{
	size_t a, b, i, n = ve->nsamples;
	int joined;

	for (a = 0; a < n; a = b) {
		joined = 0;
		for (b = a + 1; b < n && k[b].slot == k[a].slot;)
			b++;
		for (i = a; i < b && !joined; i++)
			joined = labels_new_run(labels_prev(ve, k, i),
				     &ve->samples[k[i].idx], base_ns) &&
			    labels_joins(ve, k + a, b - a, &k[i], base_ns);
		for (i = a; joined && i < b; i++)
			keep[k[i].idx] = 1;
	}
}

int
labels_credited(
    const struct vitals_vital_epoch *ve, uint64_t base_ns, uint8_t *keep)
{
	const struct vitals_sample *prev, *cur, *next;
	struct labels_key *k;
	size_t i, j, n = ve->nsamples;

	if (n == 0)
		return 0;
	if ((k = labels_keys(ve)) == NULL)
		return -ENOMEM;
	memset(keep, 0, n);
	for (i = 0; i < n; i++) {
		cur = &ve->samples[k[i].idx];
		prev = labels_prev(ve, k, i);
		/* A run's first after a fall keeps runs apart. */
		keep[k[i].idx] = prev != NULL && cur->count < prev->count;
		/* The last of its pid in the run (the run's last among them). */
		for (j = i + 1; j < n && labels_same(&k[i], &k[j]); j++) {
			next = &ve->samples[k[j].idx];
			if (labels_new_run(
				&ve->samples[k[j - 1].idx], next, base_ns) ||
			    next->pid == cur->pid)
				break;
		}
		if (j == n || !labels_same(&k[i], &k[j]) ||
		    labels_new_run(&ve->samples[k[j - 1].idx],
			&ve->samples[k[j].idx], base_ns))
			keep[k[i].idx] = 1;
	}
	labels_keep_joined(ve, k, base_ns, keep);
	free(k);
	return 0;
}

int
labels_weights(const struct vitals_vital_epoch *ve, uint64_t base_ns, double *w,
    double *attributed)
{
	struct labels_key *k;

	if (ve->nsamples == 0 || ve->samples == NULL) {
		*attributed = 0;
		return 0;
	}
	if ((k = labels_keys(ve)) == NULL)
		return -ENOMEM;
	*attributed = labels_credit(ve, k, ve->nsamples, base_ns, w);
	free(k);
	return 0;
}

/*
 * The parts of the sorted, credited keys k[0..n) into p (room for n): one
 * per (slot, label, exe_id, uid), its credits summed, its sample with the
 * highest count its representative.  Returns how many.
 */
static size_t
labels_part_keys(const struct vitals_vital_epoch *ve,
    const struct labels_key *k, size_t n, const double *w,
    struct labels_part *p)
{
	size_t i, j, m = 0;

	for (i = 0; i < n; i = j, m++) {
		p[m].rep = &ve->samples[k[i].idx];
		for (j = i; j < n && labels_same(&k[i], &k[j]); j++) {
			p[m].weight += w[k[j].idx];
			if (ve->samples[k[j].idx].count >= p[m].rep->count)
				p[m].rep = &ve->samples[k[j].idx];
		}
	}
	return m;
}

/* The parts of a vital: one per sampled (slot, label, exe_id, uid). */
static int
labels_parts(const struct vitals_vital_epoch *ve, uint64_t base_ns,
    struct labels_part **out, size_t *nout, double *attributed)
{
	struct labels_key *k = NULL;
	struct labels_part *p = NULL;
	double *w = NULL;
	size_t n;

	*out = NULL;
	*nout = 0;
	*attributed = 0;
	if (ve->nsamples == 0 || ve->samples == NULL)
		return 0;
	if ((k = labels_keys(ve)) == NULL ||
	    (w = malloc(ve->nsamples * sizeof(*w))) == NULL ||
	    (p = calloc(ve->nsamples, sizeof(*p))) == NULL)
		goto fail;
	*attributed = labels_credit(ve, k, ve->nsamples, base_ns, w);
	n = labels_part_keys(ve, k, ve->nsamples, w, p);
	free(k);
	free(w);
	*out = p;
	*nout = n;
	return 0;
fail:
	free(k);
	free(w);
	free(p);
	return -ENOMEM;
}

/* By name, the heaviest part of each name first. */
static int
labels_part_name_cmp(const void *a, const void *b)
{
	const struct labels_part *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return 0;
}

static int
labels_entry_cmp(const void *a, const void *b)
{
	const struct labels_entry *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Merge parts with the same name (sorted by name) into entries. */
static int
labels_group(const struct labels_part *p, size_t n, struct labels *out)
{
	struct labels_entry *e = NULL;
	size_t i;

	if (n == 0)
		return 0;
	if ((out->v = calloc(n, sizeof(*out->v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (e == NULL || strcmp(p[i].name, e->name) != 0) {
			e = &out->v[out->n++];
			if ((e->name = strdup(p[i].name)) == NULL)
				return -ENOMEM;
			e->rep = p[i].rep; /* the heaviest part comes first */
		}
		e->weight += p[i].weight;
		e->nlabels++;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), labels_entry_cmp);
	return 0;
}

/* Name the parts the match keeps and drop the others. */
static int
labels_name_parts(struct labels_part *p, size_t *n,
    const struct labels_how *how, char (**names)[LABELS_NAME_LEN])
{
	size_t i, kept = 0;

	if ((*names = malloc((*n ? *n : 1) * sizeof(**names))) == NULL)
		return -ENOMEM;
	for (i = 0; i < *n; i++) {
		if (how->match != NULL && !how->match(p[i].rep, how->arg))
			continue;
		p[kept] = p[i];
		p[kept].name = labels_name(
		    p[i].rep, how->by, (*names)[kept], sizeof((*names)[kept]));
		kept++;
	}
	*n = kept;
	return 0;
}

int
labels_collect(const struct vitals_vital_epoch *ve,
    const struct labels_how *how, struct labels *out)
{
	struct labels_part *p = NULL;
	char(*names)[LABELS_NAME_LEN] = NULL;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->total = (double)ve->wsum;
	if ((rc = labels_parts(ve, how->base_ns, &p, &n, &out->attributed)) !=
	    0)
		goto fail;
	if ((rc = labels_name_parts(p, &n, how, &names)) != 0)
		goto fail;
	if (n > 1) /* p is NULL when there are none: qsort wants an array */
		qsort(p, n, sizeof(*p), labels_part_name_cmp);
	if ((rc = labels_group(p, n, out)) != 0)
		goto fail;
	free(names);
	free(p);
	return 0;
fail:
	free(names);
	free(p);
	labels_free(out);
	return rc;
}

void
labels_free(struct labels *l)
{
	uint32_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct labels_entry *
labels_find(const struct labels *l, const char *name)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

/* n bytes of src into buf, cut to fit and ended, as snprintf would. */
static void
labels_copy(char *buf, size_t len, const char *src, size_t n)
{
	if (len == 0)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(buf, src, n);
	buf[n] = '\0';
}

/* "0x" and v in lowercase hex into buf, as snprintf "0x%" PRIx64 would. */
static void
labels_hex(char *buf, size_t len, uint64_t v)
{
	char tmp[2 + 16];
	size_t n = sizeof(tmp);

	do {
		tmp[--n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	tmp[--n] = 'x';
	tmp[--n] = '0';
	labels_copy(buf, len, tmp + n, sizeof(tmp) - n);
}

const char *
labels_name(const struct vitals_sample *s, int by, char *buf, size_t len)
{
	if (by == LABELS_BY_EXE && s->exe != NULL && s->exe[0] != '\0')
		return s->exe;
	if (by == LABELS_BY_EXE && s->comm != NULL && s->comm[0] != '\0')
		return s->comm;
	labels_hex(buf, len, s->label);
	return buf;
}

/*
 * The parts (labels_part_keys) of the labels sampled in slot, credited as
 * labels_weights credits them (a label first seen in a counter others
 * filled stands for its weight, not the counter), into *out (*nout of
 * them; NULL and 0 when none).  0, or -ENOMEM.
 */
static int
labels_slot_parts(const struct vitals_vital_epoch *ve, uint32_t slot,
    struct labels_part **out, size_t *nout)
{
	struct labels_part *p = NULL;
	struct labels_key *k = NULL;
	double *w = NULL;
	size_t i, j, n = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < ve->nsamples; i++)
		n += ve->samples[i].slot == slot;
	if (n == 0)
		return 0;
	if ((k = malloc(n * sizeof(*k))) == NULL ||
	    (w = malloc(ve->nsamples * sizeof(*w))) == NULL ||
	    (p = calloc(n, sizeof(*p))) == NULL) {
		free(k);
		free(w);
		return -ENOMEM;
	}
	for (i = 0, j = 0; i < ve->nsamples; i++)
		if (ve->samples[i].slot == slot)
			k[j++] = (struct labels_key){ slot,
				ve->samples[i].exe_id, ve->samples[i].uid, i,
				ve->samples[i].label };
	qsort(k, n, sizeof(*k), labels_key_cmp);
	labels_credit(ve, k, n, 0, w);
	*nout = labels_part_keys(ve, k, n, w, p);
	*out = p;
	free(k);
	free(w);
	return 0;
}

/* Whether sample s names an exe or a comm. */
static int
labels_named(const struct vitals_sample *s)
{
	return s->exe[0] != '\0' || s->comm[0] != '\0';
}

void
labels_slot_name(const struct vitals_vital_epoch *ve, uint32_t slot, char *buf,
    size_t len, char *exe, size_t elen)
{
	const struct vitals_sample *best = NULL;
	struct labels_part *p;
	double credit = 0;
	size_t i, n;

	/*
	 * Labels of other exes may share the slot (no collision handling):
	 * the one credited most stands for it (without the memory to credit
	 * them, none does).
	 */
	if (labels_slot_parts(ve, slot, &p, &n) == 0) {
		for (i = 0; i < n; i++)
			if (labels_named(p[i].rep) &&
			    (best == NULL || p[i].weight > credit ||
				(p[i].weight == credit &&
				    p[i].rep->count > best->count))) {
				best = p[i].rep;
				credit = p[i].weight;
			}
		free(p);
	}
	if (best != NULL) {
		snprintf(
		    buf, len, "%s (%s) slot %u", best->exe, best->comm, slot);
		if (exe != NULL)
			snprintf(exe, elen, "%s",
			    best->exe[0] != '\0' ? best->exe : best->comm);
		return;
	}
	snprintf(buf, len, "slot %u", slot);
	if (exe != NULL)
		exe[0] = '\0';
}

const char *
labels_sample_exe(const struct vitals_sample *s)
{
	return s->exe[0] != '\0' ? s->exe : s->comm;
}

double
labels_slot_share(
    const struct vitals_vital_epoch *ve, uint32_t slot, const char *exe)
{
	struct labels_part *p;
	double mine = 0, all = 0;
	size_t i, n;

	if (labels_slot_parts(ve, slot, &p, &n) != 0)
		return 1.0;
	for (i = 0; i < n; i++) {
		all += p[i].weight;
		if (strcmp(labels_sample_exe(p[i].rep), exe) == 0)
			mine += p[i].weight;
	}
	free(p);
	return all > 0 ? mine / all : 1.0;
}

uint32_t
labels_top_slots(const struct vitals_vital_epoch *ve, uint32_t n, uint32_t *top)
{
	uint32_t ntop = 0, i, j;

	for (i = 0; i < ve->hca_size && ve->hca != NULL; i++) {
		for (j = ntop; j > 0 && ve->hca[top[j - 1]] < ve->hca[i]; j--)
			if (j < n)
				top[j] = top[j - 1];
		if (j < n && ve->hca[i] > 0) {
			top[j] = i;
			ntop += ntop < n;
		}
	}
	return ntop;
}

int
labels_family(const struct vitals_vital_epoch *ve, int by, const char *who)
{
	uint32_t pid[2], n = 0, i, j;
	char buf[LABELS_NAME_LEN];

	for (i = 0; i < ve->nsamples; i++) {
		if (strcmp(labels_name(&ve->samples[i], by, buf, sizeof(buf)),
			who) != 0)
			continue;
		for (j = 0; j < n && pid[j] != ve->samples[i].pid; j++)
			;
		if (j < n)
			continue;
		if (n == 2)
			return 1;
		pid[n++] = ve->samples[i].pid;
	}
	return 0;
}

/*
 * A frame v of epoch e stored by module (VITALS_UFRAME: a user file, or
 * a kernel image, "[kernel]") as "file+0xoff" into buf; 0, or -1 if none.
 */
static int
labels_uframe(const struct vitals_epoch *e, uint64_t v, char *buf, size_t len)
{
	const struct vitals_module *m;
	const char *base;
	int32_t id = VITALS_UFRAME_MODULE(v);
	size_t n;

	if (id < 0 || (m = vitals_epoch_module(e, (uint32_t)id)) == NULL)
		return -1;
	base = strrchr(m->path, '/');
	base = base != NULL ? base + 1 : m->path;
	n = strlen(base);
	labels_copy(buf, len, base, n);
	if (n + 1 < len) {
		buf[n] = '+';
		labels_hex(buf + n + 1, len - n - 1, VITALS_UFRAME_OFFSET(v));
	}
	return 0;
}

char *
labels_frame(const struct vitals_epoch *e, const struct vitals_sample *s,
    int kernel, uint32_t i, int offsets, char *buf, size_t len)
{
	const uint64_t *stack = kernel ? s->kstack : s->ustack;
	uint32_t n = kernel ? s->nkstack : s->nustack;
	uint32_t sym = kernel ? i : s->nkstack + i;
	const char *name = NULL;

	if (stack == NULL || i >= n) {
		labels_copy(buf, len, "?", 1);
		return buf;
	}
	if (s->ksyms != NULL)
		name = s->ksyms[sym];
	if (name != NULL && name[0] != '\0') {
		/* Without snprintf: this runs for every sample of a query. */
		labels_copy(buf, len, name,
		    offsets ? strlen(name) : strcspn(name, "+"));
		return buf;
	}
	/* Kernel frames are stored by image and offset too (kaddr.h). */
	if (labels_uframe(e, stack[i], buf, len) != 0)
		labels_hex(buf, len, stack[i]);
	return buf;
}

char *
labels_site(const struct vitals_epoch *e, const struct vitals_sample *s,
    char *buf, size_t len)
{
	if (s->nkstack > 0 && s->kstack != NULL)
		return labels_frame(e, s, 1, 0, 0, buf, len);
	if (s->nustack > 0 && s->ustack != NULL)
		return labels_frame(e, s, 0, 0, 0, buf, len);
	labels_copy(buf, len, "-", 1);
	return buf;
}

double
labels_scale(const struct vitals_epoch *e, uint64_t base_ns)
{
	if (e->length_ns == 0 || base_ns == 0)
		return 1.0;
	return (double)base_ns / (double)e->length_ns;
}

uint64_t
labels_runs(const struct vitals_epoch *e, uint64_t base_ns)
{
	return (uint64_t)e->timescale_s * 1000000000ULL > base_ns ? base_ns : 0;
}

const char *
labels_fmt(double x, const char *unit, char *buf, size_t len)
{
	static const char *const bytes[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned i = 0;

	if (unit != NULL && strcmp(unit, "ns") == 0) {
		if (fabs(x) >= 1e9)
			snprintf(buf, len, "%.2f s", x / 1e9);
		else if (fabs(x) >= 1e6)
			snprintf(buf, len, "%.1f ms", x / 1e6);
		else if (fabs(x) >= 1e3)
			snprintf(buf, len, "%.1f us", x / 1e3);
		else
			snprintf(buf, len, "%.0f ns", x);
	} else if (unit != NULL && strcmp(unit, "bytes") == 0) {
		while (fabs(x) >= 1024 && i < 4) {
			x /= 1024;
			i++;
		}
		snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", x, bytes[i]);
	} else {
		snprintf(buf, len, "%.0f %s", x, unit != NULL ? unit : "");
	}
	return buf;
}

int
labels_by(const char *text, int *by, char *why, size_t len)
{
	if (text == NULL || strcmp(text, "exe") == 0)
		*by = LABELS_BY_EXE;
	else if (strcmp(text, "label") == 0)
		*by = LABELS_BY_LABEL;
	else {
		snprintf(
		    why, len, "option 'by': '%s' is not exe or label", text);
		return -EINVAL;
	}
	return 0;
}

/* ---- the map ---- */

struct labels_map_entry {
	char *key;
	uint32_t scope;
	uint64_t hash;
};

struct labels_map {
	uint32_t n; /* entries */
	uint32_t cap; /* room in entries */
	uint32_t mask; /* table size - 1; the table is a power of two */
	struct labels_map_entry *entries;
	uint32_t *table; /* entry id + 1, 0 = empty; linear probing */
};

/* FNV-1a of the key, mixed with the scope (splitmix64 finaliser). */
static uint64_t
labels_map_hash(uint32_t scope, const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ scope;

	while (*key != '\0')
		h = (h ^ (unsigned char)*key++) * 0x100000001b3ULL;
	return vitals_hash_mix64(h);
}

struct labels_map *
labels_map_new(void)
{
	return calloc(1, sizeof(struct labels_map));
}

void
labels_map_free(struct labels_map *m)
{
	uint32_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->entries[i].key);
	free(m->entries);
	free(m->table);
	free(m);
}

/* Table slot holding (scope, key), or the empty slot where it would go. */
static uint32_t
labels_map_slot(
    const struct labels_map *m, uint32_t scope, const char *key, uint64_t h)
{
	const struct labels_map_entry *e;
	uint32_t i = (uint32_t)h & m->mask;

	for (; m->table[i] != 0; i = (i + 1) & m->mask) {
		e = &m->entries[m->table[i] - 1];
		if (e->hash == h && e->scope == scope &&
		    strcmp(e->key, key) == 0)
			break;
	}
	return i;
}

/* Double the table (kept at most half full) and re-place every entry. */
static int
labels_map_grow(struct labels_map *m)
{
	uint32_t size = m->table == NULL ? 64 : 2 * (m->mask + 1), i, j;
	uint32_t *t;

	if ((t = calloc(size, sizeof(*t))) == NULL)
		return -ENOMEM;
	free(m->table);
	m->table = t;
	m->mask = size - 1;
	for (i = 0; i < m->n; i++) {
		j = (uint32_t)m->entries[i].hash & m->mask;
		while (t[j] != 0)
			j = (j + 1) & m->mask;
		t[j] = i + 1;
	}
	return 0;
}

int
labels_map_put(
    struct labels_map *m, uint32_t scope, const char *key, uint32_t *id)
{
	uint64_t h = labels_map_hash(scope, key);
	struct labels_map_entry *e;
	uint32_t slot;
	char *copy;

	if ((m->table == NULL || 2 * (m->n + 1) > m->mask + 1) &&
	    labels_map_grow(m) != 0)
		return -ENOMEM;
	slot = labels_map_slot(m, scope, key, h);
	if (m->table[slot] != 0) {
		*id = m->table[slot] - 1;
		return 0;
	}
	if (m->n == m->cap) {
		e = realloc(
		    m->entries, (m->cap ? 2 * m->cap : 64) * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		m->entries = e;
		m->cap = m->cap ? 2 * m->cap : 64;
	}
	if ((copy = strdup(key)) == NULL)
		return -ENOMEM;
	m->entries[m->n] = (struct labels_map_entry){ copy, scope, h };
	m->table[slot] = ++m->n;
	*id = m->n - 1;
	return 1;
}

uint32_t
labels_map_find(const struct labels_map *m, uint32_t scope, const char *key)
{
	uint32_t slot;

	if (m->table == NULL)
		return LABELS_NONE;
	slot = labels_map_slot(m, scope, key, labels_map_hash(scope, key));
	return m->table[slot] != 0 ? m->table[slot] - 1 : LABELS_NONE;
}

uint32_t
labels_map_size(const struct labels_map *m)
{
	return m->n;
}

const char *
labels_map_key(const struct labels_map *m, uint32_t id)
{
	return id < m->n ? m->entries[id].key : NULL;
}

uint32_t
labels_map_scope(const struct labels_map *m, uint32_t id)
{
	return id < m->n ? m->entries[id].scope : LABELS_NONE;
}
