/* SPDX-License-Identifier: MIT */
/*
 * The state of a profile (struct vitals_profile), shared by its three
 * parts: profile.c (collecting stacks from epochs), tree.c (the merged
 * tree: JSON and folded stacks) and pprof.c (the pprof encoding).
 */
#ifndef VITALS_PROF_H
#define VITALS_PROF_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/profile.h>

#include "labels.h"

/* struct prof_frame.mapping of frames outside any mapping. */
#define PROF_KERNEL UINT32_MAX /* a kernel frame */
/* Kernel frames' addresses are at least this; user mappings' below. */
#define PROF_KERNEL_MIN (UINT64_C(1) << 48)
#define PROF_RAW (UINT32_MAX - 1) /* a user address outside any file */

/* One distinct frame: where it is and what the tree calls it. */
struct prof_frame {
	char *name; /* labels_frame() name without offset, owned */
	uint64_t addr; /* kernel or raw address, or file offset */
	uint32_t mapping; /* index in mappings, PROF_KERNEL or PROF_RAW */
	int symbol; /* 1 if named by a symbol the sample carried */
};

/* One file user frames were in: a module of the epochs, united by file. */
struct prof_mapping {
	char *path; /* owned */
	char *build_id; /* lowercase hex or "", owned */
	uint64_t max_off; /* largest file offset of its frames */
};

/* One distinct stack: an exe and frames, and what it adds up to. */
struct prof_stack {
	uint32_t exe; /* id in exes (its name is the map's key) */
	uint32_t first; /* frames: pool[first .. first + n), outermost */
	uint32_t n; /* first: user frames, then kernel frames */
	double weight; /* attributed weight of its samples */
	uint64_t samples; /* vitals samples */
};

/* A profile.  Every pointer is owned. */
struct vitals_profile {
	char *vital;
	char *exe; /* filter, or NULL */
	char *unit; /* NULL until an epoch has the vital */
	uint64_t base_ns; /* vitals_profile_set_base */
	struct vitals_profile_stats st;
	struct labels_map *exes; /* exe names (scope 0) */
	struct labels_map *frame_ids; /* (mapping code, "ADDR NAME") */
	struct prof_frame *frames;
	uint32_t nframes, cap_frames;
	struct labels_map *mapping_ids; /* "BUILD_ID\nPATH" */
	struct prof_mapping *mappings;
	uint32_t nmappings, cap_mappings;
	struct labels_map *stack_ids; /* "EXE:F,F,..." in hex ids */
	struct prof_stack *stacks;
	uint32_t nstacks, cap_stacks;
	uint32_t *pool; /* the stacks' frame ids */
	uint32_t npool, cap_pool;
};

/*
 * Grow array *v of *cap elements of size bytes to hold at least n.
 * Returns 0 or -ENOMEM (*v untouched).
 */
int prof_grow(void *v, uint32_t *cap, size_t size, size_t n);

/*
 * Integer shares of running sums: the whole number a value brings the
 * running sum *acc to, minus what the sum before it rounded to, so that
 * rounded values add up to the rounded total.  Updates *acc.
 */
int64_t prof_round(double *acc, double value);

#endif /* VITALS_PROF_H */
