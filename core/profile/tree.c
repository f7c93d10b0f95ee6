/* SPDX-License-Identifier: MIT */
/*
 * A profile's stacks merged by name into one tree (exe, user frames
 * outermost first, kernel frames outermost first), written as
 * d3-flame-graph JSON, alone or against a base profile (deltas of rate),
 * and as folded stacks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "prof.h"

#define TREE_NONE UINT32_MAX
/* Deepest path: the root, the exe and every frame. */
#define TREE_DEPTH (2 * VITALS_STACK_MAX + 2)

/* One node: a name under its parent, and the weight below it. */
struct tree_node {
	double weight; /* of the stacks through it */
	double self; /* of the stacks that end at it */
	uint32_t child; /* first child (sorted by name after tree_sort) */
	uint32_t next; /* next sibling */
};

/* Node 0 is the root; node k > 0 is entry k - 1 of ids. */
struct tree {
	struct labels_map *ids; /* (parent node, name) -> node - 1 */
	struct tree_node *v;
	uint32_t n, cap;
};

/* A child of a node and its name, for sorting. */
struct tree_kid {
	const char *name;
	uint32_t node;
};

/* Text being written: folded stacks. */
struct tree_buf {
	char *s;
	size_t n, cap;
	int err; /* -ENOMEM once a write failed */
};

static const char *
tree_name(const struct tree *t, uint32_t node)
{
	return node == 0 ? "all" : labels_map_key(t->ids, node - 1);
}

static void
tree_free(struct tree *t)
{
	labels_map_free(t->ids);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* The child of parent named name, added if new; TREE_NONE on -ENOMEM. */
static uint32_t
tree_child(struct tree *t, uint32_t parent, const char *name)
{
	uint32_t id = labels_map_find(t->ids, parent, name);

	if (id != LABELS_NONE)
		return id + 1;
	if (prof_grow(&t->v, &t->cap, sizeof(*t->v), (size_t)t->n + 1) != 0 ||
	    labels_map_put(t->ids, parent, name, &id) < 0)
		return TREE_NONE;
	t->v[t->n] = (struct tree_node){ 0, 0, TREE_NONE, t->v[parent].child };
	t->v[parent].child = t->n;
	return t->n++;
}

/* Add stack s of p along its names. */
static int
tree_stack(
    struct tree *t, const struct vitals_profile *p, const struct prof_stack *s)
{
	uint32_t node, i;

	t->v[0].weight += s->weight;
	node = tree_child(t, 0, labels_map_key(p->exes, s->exe));
	for (i = 0; node != TREE_NONE; i++) {
		t->v[node].weight += s->weight;
		if (i == s->n) {
			t->v[node].self += s->weight;
			return 0;
		}
		node =
		    tree_child(t, node, p->frames[p->pool[s->first + i]].name);
	}
	return -ENOMEM;
}

static int
tree_kid_cmp(const void *a, const void *b)
{
	const struct tree_kid *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Relink every node's children in name order (kids: room for t->n). */
static void
tree_sort(struct tree *t, struct tree_kid *kids)
{
	uint32_t node, c, k, n;

	for (node = 0; node < t->n; node++) {
		for (n = 0, c = t->v[node].child; c != TREE_NONE;
		     c = t->v[c].next)
			kids[n++] = (struct tree_kid){ tree_name(t, c), c };
		qsort(kids, n, sizeof(*kids), tree_kid_cmp);
		t->v[node].child = n > 0 ? kids[0].node : TREE_NONE;
		for (k = 0; k < n; k++)
			t->v[kids[k].node].next =
			    k + 1 < n ? kids[k + 1].node : TREE_NONE;
	}
}

/* Merge p's stacks into *t (free it with tree_free).  0 or -ENOMEM. */
static int
tree_build(const struct vitals_profile *p, struct tree *t)
{
	struct tree_kid *kids = NULL;
	uint32_t i;
	int rc = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if ((t->ids = labels_map_new()) == NULL ||
	    prof_grow(&t->v, &t->cap, sizeof(*t->v), 1) != 0)
		goto fail;
	t->v[t->n++] = (struct tree_node){ 0, 0, TREE_NONE, TREE_NONE };
	for (i = 0; i < p->nstacks; i++)
		if ((rc = tree_stack(t, p, &p->stacks[i])) != 0)
			goto fail;
	if ((kids = malloc(t->n * sizeof(*kids))) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	tree_sort(t, kids);
	free(kids);
	return 0;
fail:
	tree_free(t);
	return rc;
}

/* ---- JSON ---- */

/* A JSON string of s; non-ASCII bytes become '?' if s is not UTF-8. */
static json_t *
tree_jstr(const char *s)
{
	json_t *j;
	char *copy, *c;

	if ((j = json_string(s)) != NULL || (copy = strdup(s)) == NULL)
		return j;
	for (c = copy; *c != '\0'; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* Two trees walked together: a (p) and b (base, or NULL). */
struct tree_pair {
	const struct tree *a, *b;
	double scale; /* p's covered time over base's, 0 if base covers none */
};

static json_t *tree_json_node(
    const struct tree_pair *tp, uint32_t na, uint32_t nb);

/* Which of children ca (of a) and cb (of b) comes first: <0, 0 (same), >0. */
static int
tree_json_order(const struct tree_pair *tp, uint32_t ca, uint32_t cb)
{
	if (ca == TREE_NONE)
		return 1;
	if (cb == TREE_NONE)
		return -1;
	return strcmp(tree_name(tp->a, ca), tree_name(tp->b, cb));
}

/* The children of na and nb, merged by name, appended to kids. */
static int
tree_json_kids(
    const struct tree_pair *tp, uint32_t na, uint32_t nb, json_t *kids)
{
	uint32_t ca = na != TREE_NONE ? tp->a->v[na].child : TREE_NONE;
	uint32_t cb = nb != TREE_NONE ? tp->b->v[nb].child : TREE_NONE;
	int c;

	while (ca != TREE_NONE || cb != TREE_NONE) {
		c = tree_json_order(tp, ca, cb);
		if (json_array_append_new(kids,
			tree_json_node(tp, c <= 0 ? ca : TREE_NONE,
			    c >= 0 ? cb : TREE_NONE)) != 0)
			return -ENOMEM;
		if (c <= 0)
			ca = tp->a->v[ca].next;
		if (c >= 0)
			cb = tp->b->v[cb].next;
	}
	return 0;
}

/*
 * Node na of a and its match nb in b (either may be TREE_NONE, not both)
 * with its subtree, or NULL when memory runs out.
 */
static json_t *
tree_json_node(const struct tree_pair *tp, uint32_t na, uint32_t nb)
{
	const char *name =
	    na != TREE_NONE ? tree_name(tp->a, na) : tree_name(tp->b, nb);
	double wa = na != TREE_NONE ? tp->a->v[na].weight : 0;
	double wb = nb != TREE_NONE ? tp->b->v[nb].weight : 0;
	double delta = wa - wb * tp->scale;
	json_t *o = json_object(), *kids = json_array();
	int rc = -ENOMEM;

	if (o == NULL || kids == NULL ||
	    json_object_set_new(o, "name", tree_jstr(name)) != 0 ||
	    json_object_set_new(o, "value", json_real(wa)) != 0)
		goto out;
	if (tp->b != NULL &&
	    json_object_set_new(o, "delta", json_real(delta)) != 0)
		goto out;
	if (tree_json_kids(tp, na, nb, kids) != 0 ||
	    (json_array_size(kids) > 0 &&
		json_object_set(o, "children", kids) != 0))
		goto out;
	rc = 0;
out:
	json_decref(kids);
	if (rc != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* The root's own fields: unit, totals, covered time (and base's). */
static int
tree_json_root(json_t *o, const struct vitals_profile *p,
    const struct vitals_profile *base)
{
	const struct vitals_profile_stats *st = &p->st;
	json_t *x, *y = NULL;
	int rc = -ENOMEM;

	x = json_pack("{s:o, s:f, s:I, s:I}", "unit", tree_jstr(st->unit),
	    "total", st->total, "samples", (json_int_t)st->samples,
	    "covered_ns", (json_int_t)st->covered_ns);
	if (base != NULL)
		y = json_pack("{s:f, s:I}", "base_total", base->st.total,
		    "base_covered_ns", (json_int_t)base->st.covered_ns);
	if (x != NULL && json_object_update(o, x) == 0 &&
	    (base == NULL || (y != NULL && json_object_update(o, y) == 0)))
		rc = 0;
	json_decref(x);
	json_decref(y);
	return rc;
}

/* j as compact text into a malloc'd *out. */
static int
tree_dump(const json_t *j, char **out, size_t *len)
{
	size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15), n;
	char *s;

	n = json_dumpb(j, NULL, 0, flags);
	if (n == 0 || (s = malloc(n + 1)) == NULL)
		return -ENOMEM;
	if (json_dumpb(j, s, n, flags) != n) {
		free(s);
		return -ENOMEM;
	}
	s[n] = '\0';
	*out = s;
	*len = n;
	return 0;
}

int
vitals_profile_json(const struct vitals_profile *p,
    const struct vitals_profile *base, char **out, size_t *len)
{
	struct tree a, b = { 0 };
	struct tree_pair tp = { &a, NULL, 0 };
	json_t *root = NULL;
	int rc;

	if ((rc = tree_build(p, &a)) != 0)
		return rc;
	if (base != NULL && (rc = tree_build(base, &b)) != 0)
		goto out;
	if (base != NULL) {
		tp.b = &b;
		if (base->st.covered_ns > 0)
			tp.scale = (double)p->st.covered_ns /
			    (double)base->st.covered_ns;
	}
	rc = -ENOMEM;
	if ((root = tree_json_node(&tp, 0, base != NULL ? 0 : TREE_NONE)) !=
		NULL &&
	    tree_json_root(root, p, base) == 0)
		rc = tree_dump(root, out, len);
out:
	json_decref(root);
	tree_free(&a);
	tree_free(&b);
	return rc;
}

/* ---- folded stacks ---- */

static void
tree_put(struct tree_buf *b, const char *s, size_t n)
{
	size_t cap = b->cap != 0 ? b->cap : 4096;
	char *ns;

	if (b->err != 0)
		return;
	while (cap < b->n + n + 1)
		cap *= 2;
	if (cap != b->cap) {
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->err = -ENOMEM;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* A name, with the separators of the format (';', newlines) replaced. */
static void
tree_put_name(struct tree_buf *b, const char *name)
{
	size_t at = b->n, i;

	tree_put(b, name, strlen(name));
	for (i = at; b->err == 0 && i < b->n; i++)
		if (b->s[i] == ';')
			b->s[i] = ':';
		else if (b->s[i] == '\n' || b->s[i] == '\r')
			b->s[i] = ' ';
}

/* The line of the stacks ending at path[depth]: names and weight. */
static void
tree_line(const struct tree *t, const uint32_t *path, uint32_t depth, int64_t w,
    struct tree_buf *b)
{
	char num[32];
	uint32_t i;

	for (i = 1; i <= depth; i++) {
		if (i > 1)
			tree_put(b, ";", 1);
		tree_put_name(b, tree_name(t, path[i]));
	}
	tree_put(
	    b, num, (size_t)snprintf(num, sizeof(num), " %" PRId64 "\n", w));
}

/* Lines of node path[depth] and below, in name order. */
static void
tree_folded_node(const struct tree *t, uint32_t *path, uint32_t depth,
    double *acc, struct tree_buf *b)
{
	const struct tree_node *n = &t->v[path[depth]];
	uint32_t c;
	int64_t w;

	if (depth > 0 && n->self > 0 && (w = prof_round(acc, n->self)) > 0)
		tree_line(t, path, depth, w, b);
	for (c = n->child; c != TREE_NONE && depth + 1 < TREE_DEPTH;
	     c = t->v[c].next) {
		path[depth + 1] = c;
		tree_folded_node(t, path, depth + 1, acc, b);
	}
}

int
vitals_profile_folded(const struct vitals_profile *p, char **out, size_t *len)
{
	struct tree_buf b = { 0 };
	uint32_t path[TREE_DEPTH] = { 0 };
	struct tree t;
	double acc = 0;
	int rc;

	if ((rc = tree_build(p, &t)) != 0)
		return rc;
	tree_put(&b, "", 0);
	tree_folded_node(&t, path, 0, &acc, &b);
	tree_free(&t);
	if (b.err != 0) {
		free(b.s);
		return b.err;
	}
	*out = b.s;
	*len = b.n;
	return 0;
}
