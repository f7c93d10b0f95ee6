/* SPDX-License-Identifier: MIT */
/*
 * The call-model math of the callmodel filter (Maruyama & Matsuoka,
 * IPDPS'08), exposed so unit tests can call it directly: call trees with
 * per-node unit counts, the suspect score of eq. 1 and 2, and the model
 * file.  Internal to filters/callmodel.c; never installed.
 */
#ifndef VITALS_FILTERS_CALLMODEL_H
#define VITALS_FILTERS_CALLMODEL_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

#define CALLMODEL_NONE UINT32_MAX /* no such node */
#define CALLMODEL_ROOT 0u /* every tree's root node */
#define CALLMODEL_SUSPECTS 4 /* most suspect nodes kept per score */
#define CALLMODEL_DEPTH_MAX (2 * VITALS_STACK_MAX) /* frames per path */
#define CALLMODEL_FORMAT "vitals-callmodel" /* the model file's "format" */
#define CALLMODEL_VERSION 1 /* the model file's "version" */

/*
 * A call tree: node 0 is the root; every other node is a name under a
 * parent, unique among its siblings, with a count.  In a model the count
 * is the number of units (epochs) in which the node's path appeared; in a
 * trial tree, the number of samples that went through it.
 */
struct callmodel_tree;

/* A tree holding only its root, named root (copied); NULL if no memory. */
struct callmodel_tree *callmodel_tree_new(const char *root);

/* Free a tree; accepts NULL. */
void callmodel_tree_free(struct callmodel_tree *t);

/*
 * Add count to the child `name` of parent, creating it (with count 0
 * first) if absent.  Sets *id if id is not NULL.  Returns 0, -EINVAL for
 * a parent that is not a node, or -ENOMEM.
 */
int callmodel_tree_add(struct callmodel_tree *t, uint32_t parent,
    const char *name, uint64_t count, uint32_t *id);

/* Add count to node id itself (e.g. the root's units). */
void callmodel_tree_bump(struct callmodel_tree *t, uint32_t id, uint64_t count);

/* The child `name` of parent, or CALLMODEL_NONE. */
uint32_t callmodel_tree_find(
    const struct callmodel_tree *t, uint32_t parent, const char *name);

/* Nodes in the tree, the root included. */
uint32_t callmodel_tree_size(const struct callmodel_tree *t);
/* A node's name (borrowed), parent (CALLMODEL_NONE for the root), count. */
const char *callmodel_tree_name(const struct callmodel_tree *t, uint32_t id);
uint32_t callmodel_tree_parent(const struct callmodel_tree *t, uint32_t id);
uint64_t callmodel_tree_count(const struct callmodel_tree *t, uint32_t id);
/* First child and next sibling of a node, CALLMODEL_NONE at the end. */
uint32_t callmodel_tree_child(const struct callmodel_tree *t, uint32_t id);
uint32_t callmodel_tree_sibling(const struct callmodel_tree *t, uint32_t id);

/*
 * The paper's estimated call probability of a node, p(g) = n_g / n_f with
 * f its parent: the share of the units containing the parent's path that
 * also contain the node's.  A unit root (unit_root) has probability 1.
 */
double callmodel_prob(
    const struct callmodel_tree *t, uint32_t unit_root, uint32_t id);

/*
 * Learn one unit: add 1 to the model node of every node of the trial
 * subtree under troot (troot included; mroot is its model counterpart),
 * creating the nodes the model lacks.  Returns 0 or -ENOMEM.
 */
int callmodel_learn(struct callmodel_tree *model, uint32_t mroot,
    const struct callmodel_tree *trial, uint32_t troot);

/* How an effective node relates the model M and the trial T (eq. 1). */
#define CALLMODEL_COMMON 0u /* in M and T: delta = 1 - p */
#define CALLMODEL_MISSING 1u /* in M only: delta = p */
#define CALLMODEL_NEW 2u /* in T only: delta = 1 */

/* One effective node and its suspect score. */
struct callmodel_suspect {
	double delta; /* Delta(n), eq. 1 */
	double p; /* its model probability (1 for a new node, unused) */
	uint32_t kind; /* CALLMODEL_COMMON, _MISSING or _NEW */
	uint32_t
	    node; /* in the trial tree (COMMON, NEW) or the model (MISSING) */
	uint64_t
	    weight; /* trial samples through it, or model units for MISSING */
};

/* The suspect score of one unit and its most suspect nodes. */
struct callmodel_result {
	double score; /* Delta(u), eq. 2: the mean delta over E */
	uint32_t neffective; /* |E| */
	uint32_t ncommon, nmissing, nnew; /* |E| by kind */
	uint32_t nsuspects; /* filled entries of suspects */
	struct callmodel_suspect
	    suspects[CALLMODEL_SUSPECTS]; /* largest delta first */
};

/*
 * Score the trial unit under troot against the model unit under mroot
 * (eq. 1 and 2).  E is the commonality of the two trees plus their
 * minimum difference: the nodes present in only one of them whose parent
 * is in both (the descendants of a missing or new node are its effect,
 * not further evidence).  The unit roots are common with probability 1.
 * Fills *out; never fails.
 */
void callmodel_score(const struct callmodel_tree *model, uint32_t mroot,
    const struct callmodel_tree *trial, uint32_t troot,
    struct callmodel_result *out);

/*
 * "vital: f1 > f2 > ... > fn": the path from below unit_root down to
 * node id, outermost frame first; when it does not fit in len, the vital
 * and the innermost frames are kept around "...".  Returns buf.
 */
char *callmodel_path(const struct callmodel_tree *t, uint32_t unit_root,
    uint32_t id, char *buf, size_t len);

/*
 * A model: the tree root -> exe -> vital -> frames (outermost first), with
 * the root's count the epochs learnt and each exe's count its units (the
 * epochs in which it had samples), and how paths were built.
 */
struct callmodel_model {
	struct callmodel_tree *tree; /* owned */
	uint32_t timescale_s; /* of the epochs learnt; 0 = several */
	uint32_t depth; /* outermost frames kept per path; 0 = all */
	int offsets; /* kernel symbols keep their "+0x.." call-site offset */
	int ustack; /* user frames are part of the paths */
	uint32_t nvitals; /* vitals whose samples were learnt */
	char **vitals; /* nvitals names, owned */
};

/* An empty model built with these path settings; NULL if no memory. */
struct callmodel_model *callmodel_model_new(
    uint32_t depth, int offsets, int ustack);

/* Free a model; accepts NULL. */
void callmodel_model_free(struct callmodel_model *m);

/* Whether vital `name` is among the model's vitals. */
int callmodel_model_has_vital(
    const struct callmodel_model *m, const char *name);

/* Add vital `name` to the model's vitals if absent.  0 or -ENOMEM. */
int callmodel_model_add_vital(struct callmodel_model *m, const char *name);

/*
 * Build the trial tree of one epoch into t (an empty tree): root -> exe
 * -> vital -> frames, counting samples, with m's path settings.  Only
 * vitals listed in `only` (all when only is NULL or empty) are used, and
 * in score mode (learning == 0) only those the model learnt; when
 * learning, every vital used is added to m's vitals.  Returns 0 or
 * -ENOMEM.
 */
int callmodel_build(struct callmodel_tree *t, const struct vitals_epoch *e,
    struct callmodel_model *m, const struct vitals_strlist *only, int learning);

/*
 * Write the model as JSON to path atomically, through vitals_file_write
 * (an unpredictable temporary name created O_EXCL | O_NOFOLLOW, fsync,
 * rename).  Returns 0, or a negative errno with a reason in err.
 */
int callmodel_model_save(const struct callmodel_model *m, const char *path,
    char *err, size_t errlen);

/*
 * Read a model file.  Returns 0 and sets *out (the caller frees it), or a
 * negative errno (-ENOENT..., -EBADMSG for a file that is not a valid
 * model) with a reason in err that does not repeat the path.
 */
int callmodel_model_load(
    const char *path, struct callmodel_model **out, char *err, size_t errlen);

#endif /* VITALS_FILTERS_CALLMODEL_H */
