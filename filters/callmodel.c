/* SPDX-License-Identifier: MIT */
/*
 * callmodel: call-model anomaly scoring after Maruyama & Matsuoka
 * (IPDPS'08).  In train mode it learns, per exe, how often each call path
 * of its sampled stacks appears in normal epochs and writes the model
 * file; in score mode it scores each later epoch's exes (eq. 1 and 2).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <vitals/vitals.h>

#include "callmodel.h"
#include "incident.h"
#include "labels.h"

/* ---- call trees ---- */

struct callmodel_tree {
	struct labels_map *names; /* (parent, name) -> node id */
	uint32_t cap; /* room in the arrays below */
	uint64_t *count;
	uint32_t *child; /* first child */
	uint32_t *sibling; /* next sibling */
};

/* Make room for node n; 0 or -ENOMEM. */
static int
callmodel_tree_room(struct callmodel_tree *t, uint32_t n)
{
	uint32_t cap = t->cap ? 2 * t->cap : 64;
	void *p;

	if (n < t->cap)
		return 0;
	if ((p = realloc(t->count, cap * sizeof(*t->count))) == NULL)
		return -ENOMEM;
	t->count = p;
	if ((p = realloc(t->child, cap * sizeof(*t->child))) == NULL)
		return -ENOMEM;
	t->child = p;
	if ((p = realloc(t->sibling, cap * sizeof(*t->sibling))) == NULL)
		return -ENOMEM;
	t->sibling = p;
	t->cap = cap;
	return 0;
}

/* Give new node id (just added to the map) its arrays and link it. */
static int
callmodel_tree_link(struct callmodel_tree *t, uint32_t parent, uint32_t id)
{
	if (callmodel_tree_room(t, id) != 0)
		return -ENOMEM;
	t->count[id] = 0;
	t->child[id] = CALLMODEL_NONE;
	t->sibling[id] = CALLMODEL_NONE;
	if (parent != CALLMODEL_NONE) {
		t->sibling[id] = t->child[parent];
		t->child[parent] = id;
	}
	return 0;
}

struct callmodel_tree *
callmodel_tree_new(const char *root)
{
	struct callmodel_tree *t;
	uint32_t id;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->names = labels_map_new()) == NULL ||
	    labels_map_put(t->names, CALLMODEL_NONE, root, &id) < 0 ||
	    callmodel_tree_link(t, CALLMODEL_NONE, id) != 0) {
		callmodel_tree_free(t);
		return NULL;
	}
	return t;
}

void
callmodel_tree_free(struct callmodel_tree *t)
{
	if (t == NULL)
		return;
	labels_map_free(t->names);
	free(t->count);
	free(t->child);
	free(t->sibling);
	free(t);
}

int
callmodel_tree_add(struct callmodel_tree *t, uint32_t parent, const char *name,
    uint64_t count, uint32_t *id)
{
	uint32_t n;
	int r;

	if (parent >= labels_map_size(t->names))
		return -EINVAL;
	if ((r = labels_map_put(t->names, parent, name, &n)) < 0)
		return r;
	if (r == 1 && callmodel_tree_link(t, parent, n) != 0)
		return -ENOMEM;
	t->count[n] += count;
	if (id != NULL)
		*id = n;
	return 0;
}

void
callmodel_tree_bump(struct callmodel_tree *t, uint32_t id, uint64_t count)
{
	if (id < labels_map_size(t->names))
		t->count[id] += count;
}

uint32_t
callmodel_tree_find(
    const struct callmodel_tree *t, uint32_t parent, const char *name)
{
	return labels_map_find(t->names, parent, name);
}

uint32_t
callmodel_tree_size(const struct callmodel_tree *t)
{
	return labels_map_size(t->names);
}

const char *
callmodel_tree_name(const struct callmodel_tree *t, uint32_t id)
{
	return labels_map_key(t->names, id);
}

uint32_t
callmodel_tree_parent(const struct callmodel_tree *t, uint32_t id)
{
	return labels_map_scope(t->names, id);
}

uint64_t
callmodel_tree_count(const struct callmodel_tree *t, uint32_t id)
{
	return id < callmodel_tree_size(t) ? t->count[id] : 0;
}

uint32_t
callmodel_tree_child(const struct callmodel_tree *t, uint32_t id)
{
	return id < callmodel_tree_size(t) ? t->child[id] : CALLMODEL_NONE;
}

uint32_t
callmodel_tree_sibling(const struct callmodel_tree *t, uint32_t id)
{
	return id < callmodel_tree_size(t) ? t->sibling[id] : CALLMODEL_NONE;
}

/* ---- the model math ---- */

double
callmodel_prob(const struct callmodel_tree *t, uint32_t unit_root, uint32_t id)
{
	uint32_t parent = callmodel_tree_parent(t, id);
	uint64_t np;

	if (id == unit_root || parent == CALLMODEL_NONE)
		return 1.0;
	np = t->count[parent];
	return np > 0 ? (double)t->count[id] / (double)np : 0.0;
}

int
callmodel_learn(struct callmodel_tree *model, uint32_t mroot,
    const struct callmodel_tree *trial, uint32_t troot)
{
	uint32_t tc, mc;
	int r;

	callmodel_tree_bump(model, mroot, 1);
	for (tc = trial->child[troot]; tc != CALLMODEL_NONE;
	     tc = trial->sibling[tc]) {
		r = callmodel_tree_add(
		    model, mroot, callmodel_tree_name(trial, tc), 0, &mc);
		if (r != 0 || (r = callmodel_learn(model, mc, trial, tc)) != 0)
			return r;
	}
	return 0;
}

/* Count one effective node into the result, keeping the top suspects. */
static void
callmodel_note(struct callmodel_result *out, const struct callmodel_suspect *s)
{
	struct callmodel_suspect *v = out->suspects;
	uint32_t i;

	out->score += s->delta; /* the sum until callmodel_score divides */
	out->neffective++;
	if (s->kind == CALLMODEL_COMMON)
		out->ncommon++;
	else if (s->kind == CALLMODEL_MISSING)
		out->nmissing++;
	else
		out->nnew++;
	for (i = out->nsuspects; i > 0; i--) {
		if (v[i - 1].delta > s->delta ||
		    (v[i - 1].delta == s->delta &&
			v[i - 1].weight >= s->weight))
			break;
		if (i < CALLMODEL_SUSPECTS)
			v[i] = v[i - 1];
	}
	if (i < CALLMODEL_SUSPECTS) {
		v[i] = *s;
		if (out->nsuspects < CALLMODEL_SUSPECTS)
			out->nsuspects++;
	}
}

/* Eq. 1 over the children of a common pair (m, t), then down. */
static void
callmodel_score_pair(const struct callmodel_tree *model, uint32_t mroot,
    uint32_t m, const struct callmodel_tree *trial, uint32_t t,
    struct callmodel_result *out)
{
	struct callmodel_suspect s;
	uint32_t tc, mc;

	for (tc = trial->child[t]; tc != CALLMODEL_NONE;
	     tc = trial->sibling[tc]) {
		mc = callmodel_tree_find(
		    model, m, callmodel_tree_name(trial, tc));
		s = (struct callmodel_suspect){ .kind = CALLMODEL_NEW,
			.delta = 1.0,
			.p = 0.0,
			.node = tc,
			.weight = trial->count[tc] };
		if (mc != CALLMODEL_NONE) {
			s.kind = CALLMODEL_COMMON;
			s.p = callmodel_prob(model, mroot, mc);
			s.delta = 1.0 - s.p;
		}
		callmodel_note(out, &s);
		if (mc != CALLMODEL_NONE)
			callmodel_score_pair(model, mroot, mc, trial, tc, out);
	}
	for (mc = model->child[m]; mc != CALLMODEL_NONE;
	     mc = model->sibling[mc]) {
		if (callmodel_tree_find(trial, t,
			callmodel_tree_name(model, mc)) != CALLMODEL_NONE)
			continue;
		s = (struct callmodel_suspect){ .kind = CALLMODEL_MISSING,
			.p = callmodel_prob(model, mroot, mc),
			.node = mc,
			.weight = model->count[mc] };
		s.delta = s.p;
		callmodel_note(out, &s);
	}
}

void
callmodel_score(const struct callmodel_tree *model, uint32_t mroot,
    const struct callmodel_tree *trial, uint32_t troot,
    struct callmodel_result *out)
{
	struct callmodel_suspect root = { .kind = CALLMODEL_COMMON,
		.delta = 0.0,
		.p = 1.0,
		.node = troot,
		.weight = trial->count[troot] };

	memset(out, 0, sizeof(*out));
	callmodel_note(out, &root);
	callmodel_score_pair(model, mroot, mroot, trial, troot, out);
	out->score /= out->neffective;
}

char *
callmodel_path(const struct callmodel_tree *t, uint32_t unit_root, uint32_t id,
    char *buf, size_t len)
{
	const char *names[CALLMODEL_DEPTH_MAX + 8];
	size_t n = 0, k, used;
	int w;

	for (; id != unit_root && id != CALLMODEL_NONE &&
	     n < sizeof(names) / sizeof(names[0]);
	     id = callmodel_tree_parent(t, id))
		names[n++] = callmodel_tree_name(t, id);
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (n == 0)
		return buf;
	/* names[] is innermost first; k is how many inner frames fit. */
	used = strlen(names[n - 1]) + strlen(": ... > ");
	for (k = 0; k + 1 < n; k++) {
		if (used + strlen(names[k]) + (k > 0 ? 3 : 0) >= len)
			break;
		used += strlen(names[k]) + (k > 0 ? 3 : 0);
	}
	w = snprintf(buf, len, "%s%s%s", names[n - 1], n > 1 ? ": " : "",
	    k + 1 < n ? (k > 0 ? "... > " : "...") : "");
	for (used = w > 0 ? (size_t)w : 0; k > 0 && used < len; k--) {
		w = snprintf(buf + used, len - used, "%s%s", names[k - 1],
		    k > 1 ? " > " : "");
		used += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

/* ---- models and trial trees ---- */

struct callmodel_model *
callmodel_model_new(uint32_t depth, int offsets, int ustack)
{
	struct callmodel_model *m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	if ((m->tree = callmodel_tree_new("")) == NULL) {
		free(m);
		return NULL;
	}
	m->depth = depth;
	m->offsets = offsets;
	m->ustack = ustack;
	return m;
}

void
callmodel_model_free(struct callmodel_model *m)
{
	uint32_t i;

	if (m == NULL)
		return;
	callmodel_tree_free(m->tree);
	for (i = 0; i < m->nvitals; i++)
		free(m->vitals[i]);
	free(m->vitals);
	free(m);
}

int
callmodel_model_has_vital(const struct callmodel_model *m, const char *name)
{
	uint32_t i;

	for (i = 0; i < m->nvitals; i++)
		if (strcmp(m->vitals[i], name) == 0)
			return 1;
	return 0;
}

int
callmodel_model_add_vital(struct callmodel_model *m, const char *name)
{
	char **v;

	if (callmodel_model_has_vital(m, name))
		return 0;
	if ((v = realloc(m->vitals, (m->nvitals + 1) * sizeof(*v))) == NULL)
		return -ENOMEM;
	m->vitals = v;
	if ((v[m->nvitals] = strdup(name)) == NULL)
		return -ENOMEM;
	m->nvitals++;
	return 0;
}

/* Add one sample's path under its vital node vn, outermost frame first. */
static int
callmodel_build_sample(struct callmodel_tree *t, uint32_t vn,
    const struct vitals_epoch *e, const struct vitals_sample *s,
    const struct callmodel_model *m)
{
	uint32_t nu = m->ustack && s->ustack != NULL ? s->nustack : 0;
	uint32_t nk = s->kstack != NULL ? s->nkstack : 0, i, kept = 0;
	char name[LABELS_FRAME_LEN];
	int r;

	for (i = nu + nk; i > 0; i--) {
		if (m->depth > 0 && kept++ == m->depth)
			break;
		if (i > nk)
			labels_frame(
			    e, s, 0, i - nk - 1, 0, name, sizeof(name));
		else
			labels_frame(
			    e, s, 1, i - 1, m->offsets, name, sizeof(name));
		if ((r = callmodel_tree_add(t, vn, name, 1, &vn)) != 0)
			return r;
	}
	return 0;
}

/*
 * The exe as a tree name (as every filter names it, labels_name): bytes
 * >= 0x80 become '?', so the model file is valid JSON (UTF-8) and
 * training and scoring name an exe alike.  buf holds at least
 * LABELS_NAME_LEN bytes.
 */
static const char *
callmodel_exe_name(const struct vitals_sample *s, char *buf, size_t len)
{
	const char *exe = labels_name(s, LABELS_BY_EXE, buf, len), *p;
	size_t i;

	for (p = exe; *p != '\0' && (unsigned char)*p < 0x80; p++)
		;
	if (*p == '\0')
		return exe;
	for (i = 0; exe[i] != '\0' && i + 1 < len; i++)
		buf[i] = (unsigned char)exe[i] < 0x80 ? exe[i] : '?';
	buf[i] = '\0';
	return buf;
}

int
callmodel_build(struct callmodel_tree *t, const struct vitals_epoch *e,
    struct callmodel_model *m, const struct vitals_strlist *only, int learning)
{
	const struct vitals_vital_epoch *ve;
	const struct vitals_sample *s;
	uint32_t i, xn, vn;
	char exe[4096];
	int r;

	for (ve = e->vitals; ve < e->vitals + e->nvitals; ve++) {
		if ((only != NULL && !vitals_strlist_selects(only, ve->name)) ||
		    (!learning && !callmodel_model_has_vital(m, ve->name)))
			continue;
		if (learning &&
		    (r = callmodel_model_add_vital(m, ve->name)) != 0)
			return r;
		for (i = 0; i < ve->nsamples; i++) {
			s = &ve->samples[i];
			if ((r = callmodel_tree_add(t, CALLMODEL_ROOT,
				 callmodel_exe_name(s, exe, sizeof(exe)), 1,
				 &xn)) != 0 ||
			    (r = callmodel_tree_add(t, xn, ve->name, 1, &vn)) !=
				0 ||
			    (r = callmodel_build_sample(t, vn, e, s, m)) != 0)
				return r;
		}
	}
	return 0;
}

/* ---- the model file ---- */

/* Append the nodes under id to a, parents first; -ENOMEM on failure. */
static int
callmodel_save_nodes(
    const struct callmodel_tree *t, uint32_t id, json_int_t parent, json_t *a)
{
	json_int_t self;
	uint32_t c;
	json_t *n;

	for (c = t->child[id]; c != CALLMODEL_NONE; c = t->sibling[c]) {
		self = (json_int_t)json_array_size(a);
		n = json_pack("[sII]", callmodel_tree_name(t, c), parent,
		    (json_int_t)t->count[c]);
		if (n == NULL || json_array_append_new(a, n) != 0 ||
		    callmodel_save_nodes(t, c, self, a) != 0)
			return -ENOMEM;
	}
	return 0;
}

static json_t *
callmodel_to_json(const struct callmodel_model *m)
{
	const struct callmodel_tree *t = m->tree;
	json_t *root, *vitals, *exes, *nodes, *x;
	uint32_t i, c;

	root = json_pack("{sssisIsisisbsb}", "format", CALLMODEL_FORMAT,
	    "version", CALLMODEL_VERSION, "epochs", (json_int_t)t->count[0],
	    "timescale_s", (int)m->timescale_s, "depth", (int)m->depth,
	    "offsets", m->offsets, "ustack", m->ustack);
	vitals = json_array();
	exes = json_array();
	if (root == NULL || vitals == NULL || exes == NULL ||
	    json_object_set_new(root, "vitals", vitals) != 0 ||
	    json_object_set_new(root, "exes", exes) != 0)
		goto fail;
	for (i = 0; i < m->nvitals; i++)
		if (json_array_append_new(vitals, json_string(m->vitals[i])) !=
		    0)
			goto fail;
	for (c = t->child[0]; c != CALLMODEL_NONE; c = t->sibling[c]) {
		nodes = json_array();
		x = json_pack("{sssIso}", "exe", callmodel_tree_name(t, c),
		    "units", (json_int_t)t->count[c], "nodes", nodes);
		if (x == NULL || json_array_append_new(exes, x) != 0 ||
		    callmodel_save_nodes(t, c, -1, nodes) != 0)
			goto fail;
	}
	return root;
fail:
	json_decref(root);
	return NULL;
}

/*
 * Write m to path through the core (vitals_file_write): a temporary file
 * no one can plant a link at, renamed over path, so a crash leaves the
 * old model or the new one.
 */
int
callmodel_model_save(
    const struct callmodel_model *m, const char *path, char *err, size_t errlen)
{
	char *text = NULL, *p;
	size_t len;
	json_t *j;
	int r;

	if ((j = callmodel_to_json(m)) != NULL)
		text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	len = text != NULL ? strlen(text) : 0;
	if (text == NULL || (p = realloc(text, len + 2)) == NULL) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	text = p;
	text[len++] = '\n';
	text[len] = '\0';
	r = vitals_file_write(path, text, len, err, errlen);
	free(text);
	return r;
}

/* Reading: where in the file a check failed, for the message. */
struct callmodel_rd {
	struct callmodel_model *m;
	char *err;
	size_t errlen;
};

static int callmodel_bad(struct callmodel_rd *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
callmodel_bad(struct callmodel_rd *rd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rd->err, rd->errlen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* A non-negative integer member no larger than max; -1 if not. */
static json_int_t
callmodel_uint(json_t *o, const char *key, json_int_t max)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > max)
		return -1;
	return json_integer_value(v);
}

/* One node [name, parent, count] of exes[x]; ids maps local -> tree. */
static int
callmodel_load_node(struct callmodel_rd *rd, size_t x, size_t i, json_t *n,
    uint32_t exe, uint32_t *ids)
{
	struct callmodel_tree *t = rd->m->tree;
	json_int_t parent, count;
	const char *name;
	uint32_t p;

	if (!json_is_array(n) || json_array_size(n) != 3 ||
	    !json_is_string(json_array_get(n, 0)) ||
	    !json_is_integer(json_array_get(n, 1)) ||
	    !json_is_integer(json_array_get(n, 2)))
		return callmodel_bad(rd,
		    "exes[%zu].nodes[%zu]: expected [name, parent, count]", x,
		    i);
	name = json_string_value(json_array_get(n, 0));
	parent = json_integer_value(json_array_get(n, 1));
	count = json_integer_value(json_array_get(n, 2));
	if (parent < -1 || parent >= (json_int_t)i)
		return callmodel_bad(rd,
		    "exes[%zu].nodes[%zu]: parent %lld is not an earlier node",
		    x, i, (long long)parent);
	p = parent < 0 ? exe : ids[parent];
	if (name[0] == '\0' ||
	    callmodel_tree_find(t, p, name) != CALLMODEL_NONE)
		return callmodel_bad(rd,
		    "exes[%zu].nodes[%zu]: empty or duplicate name '%s'", x, i,
		    name);
	if (count < 1 || (uint64_t)count > callmodel_tree_count(t, p))
		return callmodel_bad(rd,
		    "exes[%zu].nodes[%zu]: count %lld is not within 1..%" PRIu64
		    " (its parent's count)",
		    x, i, (long long)count, callmodel_tree_count(t, p));
	return callmodel_tree_add(t, p, name, (uint64_t)count, &ids[i]);
}

static int
callmodel_load_exe(struct callmodel_rd *rd, size_t x, json_t *o)
{
	struct callmodel_tree *t = rd->m->tree;
	json_t *nodes = json_object_get(o, "nodes");
	json_t *name = json_object_get(o, "exe");
	json_int_t units = callmodel_uint(o, "units", (json_int_t)t->count[0]);
	uint32_t exe, *ids;
	size_t i;
	int r = 0;

	if (!json_is_string(name) || json_string_length(name) == 0 ||
	    units < 1 || !json_is_array(nodes))
		return callmodel_bad(rd,
		    "exes[%zu]: expected {\"exe\": name, "
		    "\"units\": 1..epochs, \"nodes\": [...]}",
		    x);
	if (callmodel_tree_find(t, CALLMODEL_ROOT, json_string_value(name)) !=
	    CALLMODEL_NONE)
		return callmodel_bad(rd, "exes[%zu]: duplicate exe '%s'", x,
		    json_string_value(name));
	if ((r = callmodel_tree_add(t, CALLMODEL_ROOT, json_string_value(name),
		 (uint64_t)units, &exe)) != 0)
		return r;
	if ((ids = calloc(json_array_size(nodes) + 1, sizeof(*ids))) == NULL)
		return -ENOMEM;
	for (i = 0; i < json_array_size(nodes) && r == 0; i++)
		r = callmodel_load_node(
		    rd, x, i, json_array_get(nodes, i), exe, ids);
	free(ids);
	return r;
}

/* The header fields: format, version, epochs and the path settings. */
static int
callmodel_load_header(struct callmodel_rd *rd, json_t *j)
{
	json_t *fmt = json_object_get(j, "format"), *v;
	json_int_t epochs = callmodel_uint(j, "epochs", INT64_MAX);
	json_int_t ts = callmodel_uint(j, "timescale_s", UINT32_MAX);
	json_int_t depth = callmodel_uint(j, "depth", CALLMODEL_DEPTH_MAX);
	struct callmodel_model *m = rd->m;
	size_t i;

	if (!json_is_object(j) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), CALLMODEL_FORMAT) != 0)
		return callmodel_bad(rd,
		    "not a callmodel model (\"format\" is "
		    "not \"" CALLMODEL_FORMAT "\")");
	if (callmodel_uint(j, "version", INT64_MAX) != CALLMODEL_VERSION)
		return callmodel_bad(rd,
		    "unsupported \"version\" (expected %d)", CALLMODEL_VERSION);
	if (epochs < 1 || ts < 0 || depth < 0 ||
	    !json_is_boolean(json_object_get(j, "offsets")) ||
	    !json_is_boolean(json_object_get(j, "ustack")) ||
	    !json_is_array(json_object_get(j, "vitals")) ||
	    !json_is_array(json_object_get(j, "exes")))
		return callmodel_bad(rd,
		    "expected \"epochs\" >= 1, "
		    "\"timescale_s\", \"depth\" 0..%d, \"offsets\", "
		    "\"ustack\", "
		    "\"vitals\" and \"exes\"",
		    CALLMODEL_DEPTH_MAX);
	callmodel_tree_bump(m->tree, CALLMODEL_ROOT, (uint64_t)epochs);
	m->timescale_s = (uint32_t)ts;
	m->depth = (uint32_t)depth;
	m->offsets = json_is_true(json_object_get(j, "offsets"));
	m->ustack = json_is_true(json_object_get(j, "ustack"));
	json_array_foreach(json_object_get(j, "vitals"), i, v)
	{
		if (!json_is_string(v))
			return callmodel_bad(
			    rd, "vitals[%zu]: not a string", i);
		if (callmodel_model_add_vital(m, json_string_value(v)) != 0)
			return -ENOMEM;
	}
	return 0;
}

int
callmodel_model_load(
    const char *path, struct callmodel_model **out, char *err, size_t errlen)
{
	struct callmodel_rd rd = { .err = err, .errlen = errlen };
	char *text = NULL;
	json_error_t je;
	json_t *j, *x;
	size_t i, len;
	int r;

	/* Bounded, and never a FIFO or a device that reads forever. */
	if ((r = vitals_file_read(
		 path, CALLMODEL_MAX_FILE, &text, &len, err, errlen)) != 0)
		return r;
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (j == NULL) {
		snprintf(err, errlen, "line %d: %s", je.line, je.text);
		return -EBADMSG;
	}
	if ((rd.m = callmodel_model_new(0, 0, 0)) == NULL) {
		json_decref(j);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = callmodel_load_header(&rd, j);
	json_array_foreach(json_object_get(j, "exes"), i, x)
	{
		if (r != 0)
			break;
		r = json_is_object(x)
		    ? callmodel_load_exe(&rd, i, x)
		    : callmodel_bad(&rd, "exes[%zu]: not an object", i);
	}
	json_decref(j);
	if (r != 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		callmodel_model_free(rd.m);
		return r;
	}
	*out = rd.m;
	return 0;
}

/* ---- the plugin ---- */

struct callmodel_config {
	char *model; /* model file */
	char *mode; /* "score" or "train" */
	double min_score; /* report exes scoring at least this */
	int64_t top; /* most findings per epoch */
	struct vitals_strlist vitals; /* vitals whose samples are used */
	int64_t depth; /* train: outermost frames kept per path, 0 = all */
	int offsets; /* train: keep kernel call-site offsets */
	int ustack; /* train: user frames are part of the paths */
	int unknown; /* score exes absent from the model as 1 */
	int64_t persist; /* a warning when high in persist of 2*persist-1 */
};

#define CALLMODEL_OFF(m) offsetof(struct callmodel_config, m)

/* clang-format off */
static const struct vitals_option callmodel_options[] = {
	{ .key = "model", .type = VITALS_OPT_STRING,
	    .offset = CALLMODEL_OFF(model), .def = NULL,
	    .help = "model file: written at the end in train mode, read at "
		    "start in score mode (required)" },
	{ .key = "mode", .type = VITALS_OPT_STRING,
	    .offset = CALLMODEL_OFF(mode), .def = "score",
	    .help = "score (report exes whose call paths deviate from the "
		    "model) or train (learn the model from every epoch)" },
	{ .key = "min_score", .type = VITALS_OPT_DOUBLE,
	    .offset = CALLMODEL_OFF(min_score), .def = "0.5",
	    .help = "report exes whose suspect score (0..1) is at least this",
	    .min = 0, .max = 1 },
	{ .key = "top", .type = VITALS_OPT_INT, .offset = CALLMODEL_OFF(top),
	    .def = "10", .help = "most suspect exes reported per epoch",
	    .min = 1, .max = 10000 },
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = CALLMODEL_OFF(vitals), .def = NULL,
	    .help = "vitals whose samples are used (default: all)" },
	{ .key = "depth", .type = VITALS_OPT_INT,
	    .offset = CALLMODEL_OFF(depth), .def = "0",
	    .help = "train: outermost frames kept per path (0 = all); "
		    "score mode uses the model's",
	    .min = 0, .max = CALLMODEL_DEPTH_MAX },
	{ .key = "offsets", .type = VITALS_OPT_BOOL,
	    .offset = CALLMODEL_OFF(offsets), .def = "false",
	    .help = "train: kernel frames keep their +0x call-site offset; "
		    "score mode uses the model's" },
	{ .key = "ustack", .type = VITALS_OPT_BOOL,
	    .offset = CALLMODEL_OFF(ustack), .def = "true",
	    .help = "train: user frames are part of the paths; score mode "
		    "uses the model's" },
	{ .key = "unknown", .type = VITALS_OPT_BOOL,
	    .offset = CALLMODEL_OFF(unknown), .def = "true",
	    .help = "give exes absent from the model the score 1 (the paper's "
		    "unmatched process) instead of skipping them" },
	{ .key = "persist", .type = VITALS_OPT_INT,
	    .offset = CALLMODEL_OFF(persist), .def = "2",
	    .help = "a known exe scoring at least min_score is a warning when "
		    "it does in persist of the last 2*persist-1 epochs (else "
		    "info); exes absent from the model are info",
	    .min = 1, .max = INCIDENT_K_MAX },
	{ .key = NULL }
};
/* clang-format on */

struct callmodel {
	struct vitals_ctx *ctx;
	const struct callmodel_config *cf;
	int train;
	struct callmodel_model *model;
	struct incidents inc; /* known exes that keep scoring high */
};

/* One exe of the epoch being scored. */
struct callmodel_hit {
	const char *exe; /* its name, borrowed from the trial tree */
	uint32_t texe; /* in the trial tree */
	uint32_t mexe; /* in the model, CALLMODEL_NONE if unknown */
	struct callmodel_result r;
};

/* Learn the newest epoch as one more unit of every exe it sampled. */
static int
callmodel_train_epoch(struct callmodel *c, const struct vitals_epoch *ep)
{
	struct callmodel_model *m = c->model;
	struct callmodel_tree *t;
	int r;

	if ((t = callmodel_tree_new("")) == NULL)
		return -ENOMEM;
	if (callmodel_tree_count(m->tree, CALLMODEL_ROOT) == 0)
		m->timescale_s = ep->timescale_s;
	else if (m->timescale_s != ep->timescale_s)
		m->timescale_s = 0;
	r = callmodel_build(t, ep, m, &c->cf->vitals, 1);
	if (r == 0)
		r = callmodel_learn(m->tree, CALLMODEL_ROOT, t, CALLMODEL_ROOT);
	callmodel_tree_free(t);
	return r;
}

/* Highest score first; ties by exe name, so the order is stable. */
static int
callmodel_hit_cmp(const void *a, const void *b)
{
	const struct callmodel_hit *x = a, *y = b;

	if (x->r.score != y->r.score)
		return x->r.score > y->r.score ? -1 : 1;
	return strcmp(x->exe, y->exe);
}

/*
 * The score a normal epoch of this exe is expected to have: a node of
 * probability p contributes 1 - p with probability p and p otherwise,
 * 2p(1 - p) on average (ignoring the minimum-difference rule).
 */
static void
callmodel_expect_sum(const struct callmodel_tree *t, uint32_t u, uint32_t id,
    double *sum, uint32_t *n)
{
	uint32_t c;
	double p;

	for (c = callmodel_tree_child(t, id); c != CALLMODEL_NONE;
	     c = callmodel_tree_sibling(t, c)) {
		p = callmodel_prob(t, u, c);
		*sum += 2 * p * (1 - p);
		(*n)++;
		callmodel_expect_sum(t, u, c, sum, n);
	}
}

static double
callmodel_expected(const struct callmodel_tree *t, uint32_t mexe)
{
	uint32_t n = 1; /* the exe itself, common with delta 0 */
	double sum = 0;

	callmodel_expect_sum(t, mexe, mexe, &sum, &n);
	return sum / n;
}

/* The first-level node (the vital) above id under unit root u. */
static const char *
callmodel_vital_of(const struct callmodel_tree *t, uint32_t u, uint32_t id)
{
	while (id != CALLMODEL_NONE && callmodel_tree_parent(t, id) != u)
		id = callmodel_tree_parent(t, id);
	return id != CALLMODEL_NONE ? callmodel_tree_name(t, id) : NULL;
}

/* The busiest path below node x: down the heaviest children to a leaf. */
static uint32_t
callmodel_busiest(const struct callmodel_tree *t, uint32_t x)
{
	uint32_t c, best;

	while ((c = callmodel_tree_child(t, x)) != CALLMODEL_NONE) {
		for (best = c; c != CALLMODEL_NONE;
		     c = callmodel_tree_sibling(t, c))
			if (callmodel_tree_count(t, c) >
			    callmodel_tree_count(t, best))
				best = c;
		x = best;
	}
	return x;
}

/* "new path P (3 samples)" for one suspect, appended at buf + *used. */
static void
callmodel_say(const struct callmodel *c, const struct callmodel_tree *trial,
    const struct callmodel_hit *h, const struct callmodel_suspect *s, char *buf,
    size_t len, size_t *used)
{
	const struct callmodel_tree *t =
	    s->kind == CALLMODEL_MISSING ? c->model->tree : trial;
	uint32_t leaf = s->node;
	char path[320];
	int w;

	/* A new or missing node's whole subtree is new or missing. */
	if (s->kind != CALLMODEL_COMMON)
		leaf = callmodel_busiest(t, s->node);
	callmodel_path(t, s->kind == CALLMODEL_MISSING ? h->mexe : h->texe,
	    leaf, path, sizeof(path));
	if (*used >= len)
		return;
	if (s->kind == CALLMODEL_NEW)
		w = snprintf(buf + *used, len - *used,
		    "; new path %s (%" PRIu64 " samples)", path, s->weight);
	else if (s->kind == CALLMODEL_MISSING)
		w = snprintf(buf + *used, len - *used,
		    "; missing path %s (p %.2f)", path, s->p);
	else
		w = snprintf(buf + *used, len - *used,
		    "; rare path %s (p %.2f, %" PRIu64 " samples)", path, s->p,
		    s->weight);
	*used += w > 0 ? (size_t)w : 0;
}

/* Text, vital and severity of a finding for an exe the model lacks. */
static void
callmodel_unknown_text(const struct callmodel *c,
    const struct callmodel_tree *trial, const struct callmodel_hit *h,
    struct vitals_finding *f, char *text, size_t len)
{
	uint32_t top = callmodel_busiest(trial, h->texe);
	char path[320];

	callmodel_path(trial, h->texe, top, path, sizeof(path));
	snprintf(text, len,
	    "%s: call-path score 1.00: exe absent from the model (%" PRIu64
	    " normal epochs); busiest path %s (%" PRIu64 " samples)",
	    h->exe, callmodel_tree_count(c->model->tree, CALLMODEL_ROOT), path,
	    callmodel_tree_count(trial, top));
	f->vital = callmodel_vital_of(trial, h->texe, top);
	f->severity = VITALS_SEV_INFO;
}

/* Text, vital, expectation and severity of a finding for a known exe. */
static void
callmodel_known_text(const struct callmodel *c,
    const struct callmodel_tree *trial, const struct callmodel_hit *h,
    struct vitals_finding *f, char *text, size_t len)
{
	const struct callmodel_suspect *top = &h->r.suspects[0];
	int missing = top->kind == CALLMODEL_MISSING, w;
	size_t used;
	uint32_t i;

	w = snprintf(text, len,
	    "%s: call-path score %.2f over %u paths (%u new, %u missing)",
	    h->exe, h->r.score, h->r.neffective, h->r.nnew, h->r.nmissing);
	used = w > 0 ? (size_t)w : 0;
	for (i = 0; i < h->r.nsuspects && i < 2; i++)
		if (h->r.suspects[i].delta > 0)
			callmodel_say(
			    c, trial, h, &h->r.suspects[i], text, len, &used);
	f->vital = callmodel_vital_of(missing ? c->model->tree : trial,
	    missing ? h->mexe : h->texe, top->node);
	f->expected = callmodel_expected(c->model->tree, h->mexe);
	f->severity = VITALS_SEV_WARN;
}

static int
callmodel_emit(struct callmodel *c, const struct vitals_queue *q,
    const struct callmodel_tree *trial, const struct callmodel_hit *h)
{
	struct vitals_finding f = { 0 };
	char text[1280], tm[16];
	struct incident_out o = { 0 };
	size_t used;

	if (h->mexe == CALLMODEL_NONE)
		callmodel_unknown_text(c, trial, h, &f, text, sizeof(text));
	else
		callmodel_known_text(c, trial, h, &f, text, sizeof(text));
	f.start_ns = vitals_queue_newest(q)->start_ns;
	/*
	 * The ranking is said every epoch, at info; a known exe that keeps
	 * scoring high is an incident, a warning where it starts.
	 */
	if (f.severity > VITALS_SEV_INFO &&
	    incident_step(&c->inc, q, h->exe, f.vital, h->exe, 1, h->r.score,
		f.severity, c->inc.k, &o) != 0)
		return -ENOMEM;
	f.severity = o.what == INCIDENT_START ? o.severity : VITALS_SEV_INFO;
	used = strlen(text);
	if (o.what == INCIDENT_START) {
		f.start_ns = o.start_ns;
		snprintf(text + used, sizeof(text) - used,
		    "; high in %u of the last %u epochs: an incident since %s",
		    o.epochs, 2 * c->inc.k - 1,
		    incident_time(o.start_ns, tm, sizeof(tm)));
	} else if (o.what == INCIDENT_ON || o.what == INCIDENT_UPDATE)
		snprintf(text + used, sizeof(text) - used,
		    "; an incident since %s (%u epochs)",
		    incident_time(o.start_ns, tm, sizeof(tm)), o.epochs);
	f.score = h->r.score;
	f.value = h->r.score;
	f.label = h->exe;
	f.text = text;
	return vitals_queue_emit(c->ctx, q, &f);
}

/* Score every exe of the trial tree, then report the worst ones. */
static int
callmodel_rank(struct callmodel *c, const struct vitals_queue *q,
    const struct callmodel_tree *trial)
{
	const struct callmodel_tree *mt = c->model->tree;
	struct callmodel_hit *hits;
	uint32_t x, n = 0, i;
	int rc = 0;

	hits = calloc(callmodel_tree_size(trial), sizeof(*hits));
	if (hits == NULL)
		return -ENOMEM;
	for (x = callmodel_tree_child(trial, CALLMODEL_ROOT);
	     x != CALLMODEL_NONE; x = callmodel_tree_sibling(trial, x)) {
		hits[n].texe = x;
		hits[n].exe = callmodel_tree_name(trial, x);
		hits[n].mexe =
		    callmodel_tree_find(mt, CALLMODEL_ROOT, hits[n].exe);
		if (hits[n].mexe != CALLMODEL_NONE)
			callmodel_score(mt, hits[n].mexe, trial, x, &hits[n].r);
		else if (c->cf->unknown)
			hits[n].r.score = 1.0;
		else
			continue;
		n++;
	}
	qsort(hits, n, sizeof(*hits), callmodel_hit_cmp);
	for (i = 0; i < n && i < (uint32_t)c->cf->top; i++)
		if (hits[i].r.score >= c->cf->min_score &&
		    callmodel_emit(c, q, trial, &hits[i]) != 0)
			rc = -ENOMEM;
	free(hits);
	return rc;
}

/* Only the newest epoch of the queue is new; the model holds the past. */
static int
callmodel_epoch(void *state, const struct vitals_queue *q)
{
	struct callmodel *c = state;
	const struct vitals_epoch *ep = vitals_queue_newest(q);
	struct callmodel_tree *t;
	int r;

	if (c->train)
		return callmodel_train_epoch(c, ep);
	/* Coverage depends on the unit's length: score like-sized epochs. */
	if (c->model->timescale_s != 0 &&
	    ep->timescale_s != c->model->timescale_s)
		return 0;
	if ((t = callmodel_tree_new("")) == NULL)
		return -ENOMEM;
	r = callmodel_build(t, ep, c->model, &c->cf->vitals, 0);
	if (r == 0)
		r = callmodel_rank(c, q, t);
	callmodel_tree_free(t);
	if (incident_sweep(&c->inc, q, NULL, NULL) != 0 && r == 0)
		r = -ENOMEM;
	return r;
}

static void
callmodel_fini(void *state)
{
	struct callmodel *c = state;
	char err[512];

	if (c == NULL)
		return;
	incident_free(&c->inc);
	if (c->train && callmodel_tree_count(c->model->tree, 0) == 0)
		vitals_log(c->ctx, VITALS_LOG_WARN,
		    "no epoch learnt: model %s not written", c->cf->model);
	else if (c->train &&
	    callmodel_model_save(c->model, c->cf->model, err, sizeof(err)) != 0)
		vitals_error(c->ctx, "model %s not written: %s", c->cf->model,
		    err); /* the core says it and fails the command */
	else if (c->train)
		vitals_log(c->ctx, VITALS_LOG_INFO,
		    "model %s written: %" PRIu64 " epochs, %u nodes",
		    c->cf->model, callmodel_tree_count(c->model->tree, 0),
		    callmodel_tree_size(c->model->tree));
	callmodel_model_free(c->model);
	free(c);
}

/* Train mode: fail now rather than after hours of learning. */
static int
callmodel_check_writable(struct vitals_ctx *ctx, const char *path)
{
	char err[512];
	int r;

	if ((r = vitals_file_check(path, err, sizeof(err))) != 0)
		vitals_error(ctx, "model %s", err);
	return r;
}

/* Copy the subtree below s in src under d in dst, counts included. */
static int
callmodel_copy(struct callmodel_tree *dst, uint32_t d,
    const struct callmodel_tree *src, uint32_t s)
{
	uint32_t c, n;
	int r;

	for (c = callmodel_tree_child(src, s); c != CALLMODEL_NONE;
	     c = callmodel_tree_sibling(src, c))
		if ((r = callmodel_tree_add(dst, d, callmodel_tree_name(src, c),
			 callmodel_tree_count(src, c), &n)) != 0 ||
		    (r = callmodel_copy(dst, n, src, c)) != 0)
			return r;
	return 0;
}

/*
 * Score mode with a `vitals` list: keep only those vitals in the model,
 * or the paths of the others would all count as missing.
 */
static int
callmodel_restrict(struct callmodel_model *m, const struct vitals_strlist *only)
{
	struct callmodel_tree *t = callmodel_tree_new(""), *old = m->tree;
	uint32_t x, v, nx, nv;
	int r = 0;

	if (t == NULL)
		return -ENOMEM;
	callmodel_tree_bump(t, CALLMODEL_ROOT, callmodel_tree_count(old, 0));
	for (x = callmodel_tree_child(old, 0); x != CALLMODEL_NONE && r == 0;
	     x = callmodel_tree_sibling(old, x)) {
		r = callmodel_tree_add(t, CALLMODEL_ROOT,
		    callmodel_tree_name(old, x), callmodel_tree_count(old, x),
		    &nx);
		for (v = callmodel_tree_child(old, x);
		     v != CALLMODEL_NONE && r == 0;
		     v = callmodel_tree_sibling(old, v))
			if (vitals_strlist_selects(
				only, callmodel_tree_name(old, v)) &&
			    (r = callmodel_tree_add(t, nx,
				 callmodel_tree_name(old, v),
				 callmodel_tree_count(old, v), &nv)) == 0)
				r = callmodel_copy(t, nv, old, v);
	}
	if (r != 0) {
		callmodel_tree_free(t);
		return r;
	}
	m->tree = t;
	callmodel_tree_free(old);
	return 0;
}

/*
 * A model path, a mode, values in range.  Whether the model file can be
 * read (score) or written (train) is left to init: it depends on the
 * machine and on the user the command runs as, a model may be trained
 * after the configuration is written, and a write test is a side effect.
 */
static int
callmodel_check(const void *config, char *why, size_t len)
{
	const struct callmodel_config *cf = config;

	if (cf->model == NULL || cf->model[0] == '\0') {
		snprintf(why, len,
		    "option 'model' is required (the model "
		    "file path)");
		return -EINVAL;
	}
	if (cf->mode == NULL ||
	    (strcmp(cf->mode, "score") != 0 &&
		strcmp(cf->mode, "train") != 0)) {
		snprintf(why, len,
		    "option 'mode' must be score or train, "
		    "not '%s'",
		    cf->mode ? cf->mode : "");
		return -EINVAL;
	}
	return vitals_options_check(callmodel_options, config, why, len);
}

/*
 * Start in the mode asked (options checked by callmodel_check): a new
 * model to train, whose file must be writable, or the model to score
 * against, loaded.
 */
static int
callmodel_start(struct callmodel *c)
{
	const struct callmodel_config *cf = c->cf;
	char err[512];
	int r;

	c->train = strcmp(cf->mode, "train") == 0;
	if (c->train) {
		c->model = callmodel_model_new(
		    (uint32_t)cf->depth, cf->offsets, cf->ustack);
		if (c->model == NULL)
			return -ENOMEM;
		return callmodel_check_writable(c->ctx, cf->model);
	}
	if ((r = callmodel_model_load(
		 cf->model, &c->model, err, sizeof(err))) != 0) {
		vitals_error(c->ctx, "model %s: %s", cf->model, err);
		return r;
	}
	return cf->vitals.n > 0 ? callmodel_restrict(c->model, &cf->vitals) : 0;
}

static int
callmodel_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	struct callmodel *c;
	int r;

	c = vitals_init_state(ctx, callmodel_check, config, sizeof(*c), &r);
	if (c == NULL)
		return r;
	c->ctx = ctx;
	c->cf = config;
	c->inc.k = (uint32_t)c->cf->persist;
	if ((r = callmodel_start(c)) != 0) {
		callmodel_model_free(c->model);
		free(c);
		return r;
	}
	*state = c;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	VITALS_PLUGIN_HEAD(VITALS_PLUGIN_FILTER, struct callmodel_config),
	.name = "callmodel",
	.version = "0.1.0",
	.description = "call-path model of normal epochs; scores exes whose "
		       "sampled call paths deviate (Maruyama & Matsuoka)",
	.options = callmodel_options,
	.init = callmodel_init,
	.fini = callmodel_fini,
	.epoch = callmodel_epoch,
	.check = callmodel_check,
};
