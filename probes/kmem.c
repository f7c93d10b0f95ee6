/* SPDX-License-Identifier: MIT */
/*
 * kmem probe: kernel page allocations (vital kmem) and frees (kmem_free),
 * in pages, so an epoch's net allocation is kmem - kmem_free.  BPF programs
 * on the mm_page_alloc / mm_page_free raw tracepoints keep the sketches in
 * the kernel; only sampled events (with stacks) reach vitalsd.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vitals/bpf.h>

#include "kmem.skel.h"
#include "memfree.h"

struct kmem_config {
	struct vitals_bpf_opts bpf;
	struct vitals_strlist vitals; /* kmem, kmem_free */
};

struct kmem_state {
	struct memfree mem;
	uint32_t alloc_vital; /* index of kmem in the object, or UINT32_MAX */
};

static const struct vitals_option kmem_options[] = {
	VITALS_BPF_OPTIONS(struct kmem_config, bpf),
	{ "vitals", VITALS_OPT_STRLIST, offsetof(struct kmem_config, vitals),
	    "kmem,kmem_free",
	    "vitals to count: kmem (page allocations), "
	    "kmem_free (page frees)",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static const char *const kmem_vitals[2] = { "kmem", "kmem_free" };

/* Allocation samples get the free memory in args[2]. */
static int
kmem_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	struct vitals_bpf_instance *p = arg;
	struct kmem_state *s = p->priv;

	if (r->vital == s->alloc_vital)
		ev->args[2] = memfree_bytes(&s->mem, p->ctx);
	return 0;
}

/* `vitals` names kmem, kmem_free or both. */
static int
kmem_check(const void *config, char *why, size_t len)
{
	const struct kmem_config *cf = config;
	uint32_t i;

	for (i = 0; i < cf->vitals.n; i++) {
		if (strcmp(cf->vitals.v[i], kmem_vitals[0]) != 0 &&
		    strcmp(cf->vitals.v[i], kmem_vitals[1]) != 0) {
			snprintf(why, len,
			    "option 'vitals': '%s' is not one "
			    "of kmem, kmem_free",
			    cf->vitals.v[i]);
			return -EINVAL;
		}
	}
	if (cf->vitals.n == 0) {
		snprintf(why, len, "option 'vitals' names no vital");
		return -EINVAL;
	}
	return 0;
}

/*
 * The spec's vitals from the option (checked by kmem_check), kmem first:
 * switch off the programs of vitals not asked for, and tell the free's
 * its vital index (read-only data).
 */
static int
kmem_setup(struct vitals_bpf_instance *p)
{
	const struct kmem_config *cf = p->config;
	struct kmem_bpf *skel = p->skel;
	struct kmem_state *s = p->priv;
	struct bpf_program *progs[2] = { skel->progs.kmem_page_alloc,
		skel->progs.kmem_page_free };
	uint32_t idx[2], j;

	p->spec.nvitals = 0;
	for (j = 0; j < 2; j++) {
		idx[j] = vitals_strlist_selects(&cf->vitals, kmem_vitals[j])
		    ? p->spec.nvitals
		    : UINT32_MAX;
		if (idx[j] != UINT32_MAX) {
			p->spec.vitals[p->spec.nvitals] = kmem_vitals[j];
			p->spec.units[p->spec.nvitals++] = "pages";
		} else
			bpf_program__set_autoload(progs[j], false);
	}
	s->alloc_vital = idx[0];
	/* kmem is listed first: the allocation's program counts vital 0. */
	skel->rodata->kmem_free_vital = idx[1];
	return 0;
}

VITALS_BPF_PROBE(kmem, "0.1.0",
    "kernel page allocations (kmem) and frees "
    "(kmem_free) in pages, by process, gfp flags and order: Linux gives "
    "these tracepoints no call site, so unlike the paper's patched "
    "allocator the site is in the samples' stacks, not the label "
    "(mm_page_alloc/free raw tracepoints, in-kernel sketch)",
    struct kmem_config, kmem_options,
    .vitals = { { "kmem", "pages" }, { "kmem_free", "pages" } },
    .tracepoints = { "kmem:mm_page_alloc", "kmem:mm_page_free" },
    .state_size = sizeof(struct kmem_state), .check = kmem_check,
    .setup = kmem_setup, .fixup = kmem_fixup);
