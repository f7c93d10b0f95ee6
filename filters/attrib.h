/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the callmodel and diff filters (never installed): how a
 * sample names its exe and its frames, a small string map, and the
 * attribution of an epoch's HCA weight to the keys its samples carry.
 */
#ifndef VITALS_FILTERS_ATTRIB_H
#define VITALS_FILTERS_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* No such entry (attrib_map_find). */
#define ATTRIB_NONE UINT32_MAX

/* Longest frame name attrib_frame writes, NUL included. */
#define ATTRIB_FRAME_LEN 128

/*
 * The executable a sample belongs to: its exe path, else its comm, else
 * "[unknown]".  Borrowed from the sample (or static).
 */
const char *attrib_exe(const struct vitals_sample *s);

/*
 * Name frame i of a sample's kernel (kernel != 0) or user stack into buf:
 * the kernel symbol when the sample has one, without its "+0x.." offset
 * unless offsets is set, else the address in hex.  Returns buf.
 */
char *attrib_frame(const struct vitals_sample *s, int kernel, uint32_t i,
    int offsets, char *buf, size_t len);

/*
 * The sample's site: its innermost kernel frame, else its innermost user
 * frame (as attrib_frame names them, without offsets), else "-".
 */
char *attrib_site(const struct vitals_sample *s, char *buf, size_t len);

/*
 * A map from (scope, string) to dense ids 0, 1, 2... in insertion order.
 * The scope lets one map hold several namespaces (e.g. the children of
 * each tree node).  Strings are copied and owned by the map.
 */
struct attrib_map;

/* A new empty map, or NULL if memory runs out.  Free with attrib_map_free. */
struct attrib_map *attrib_map_new(void);

/* Free a map and its strings; accepts NULL. */
void attrib_map_free(struct attrib_map *m);

/*
 * The id of (scope, key), added if absent.  Returns 1 and sets *id when
 * added, 0 and sets *id when it was there, -ENOMEM.
 */
int attrib_map_put(
    struct attrib_map *m, uint32_t scope, const char *key, uint32_t *id);

/* The id of (scope, key), or ATTRIB_NONE. */
uint32_t attrib_map_find(
    const struct attrib_map *m, uint32_t scope, const char *key);

/* Entries in the map; the key and scope of entry id (borrowed). */
uint32_t attrib_map_size(const struct attrib_map *m);
const char *attrib_map_key(const struct attrib_map *m, uint32_t id);
uint32_t attrib_map_scope(const struct attrib_map *m, uint32_t id);

/*
 * Attribute a vital's weight in one epoch to its samples, so that a key of
 * the caller's (exe, site...) weighs the sum over its samples.  Within an
 * HCA slot, in arrival order, each sample is credited with the rise of
 * the counter since the slot's previous sample (the weight of the events
 * up to and including it: with colliding labels, the sampled event's
 * label is the likely one); a count lower than the previous one starts
 * a new base epoch of a rollup.  The credits are then scaled so that the
 * slot's samples share exactly its HCA counter.  Without an HCA, or for
 * a slot beyond it, the largest count stands for the counter.  w has
 * ve->nsamples entries; *total gets their sum.  Returns 0, or -ENOMEM
 * (w and *total untouched).
 */
int attrib_weights(
    const struct vitals_vital_epoch *ve, double *w, double *total);

#endif /* VITALS_FILTERS_ATTRIB_H */
