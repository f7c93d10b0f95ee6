/* SPDX-License-Identifier: MIT */
/*
 * kmem probe: kernel page allocations (vital kmem) and frees (kmem_free),
 * in pages, so an epoch's net allocation is kmem - kmem_free.  BPF programs
 * on the mm_page_alloc / mm_page_free raw tracepoints keep the sketches in
 * the kernel; only sampled events (with stacks) reach vitalsd.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "kmem.skel.h"
#include "memfree.h"

struct kmem_config {
	struct vitals_bpf_opts bpf;
	struct vitals_strlist vitals; /* kmem, kmem_free */
};

struct kmem_state {
	struct kmem_bpf *skel;
	struct vitals_bpf *bpf;
	struct vitals_ctx *ctx;
	struct memfree mem;
	uint32_t alloc_vital;  /* index of kmem in the object, or UINT32_MAX */
};

static const char *const kmem_tracepoints[] = {
	"kmem:mm_page_alloc", "kmem:mm_page_free", NULL
};

static const struct vitals_option kmem_options[] = {
	VITALS_BPF_OPTIONS(struct kmem_config, bpf),
	{ "vitals", VITALS_OPT_STRLIST, offsetof(struct kmem_config, vitals),
	  "kmem,kmem_free", "vitals to count: kmem (page allocations), "
	  "kmem_free (page frees)", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
kmem_available(char *why, size_t len)
{
	return vitals_bpf_available(kmem_tracepoints, why, len);
}

/* Allocation samples get the free memory in args[2]. */
static int
kmem_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	struct kmem_state *s = arg;

	if (r->vital == s->alloc_vital)
		ev->args[2] = memfree_bytes(&s->mem, s->ctx);
	return 0;
}

static void
kmem_fini(void *state)
{
	struct kmem_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	kmem_bpf__destroy(s->skel);
	free(s);
}

static const char *const kmem_vitals[2] = { "kmem", "kmem_free" };

/* `vitals` names kmem, kmem_free or both; then the common BPF options. */
static int
kmem_check(const void *config, char *why, size_t len)
{
	const struct kmem_config *cf = config;
	uint32_t i;

	for (i = 0; i < cf->vitals.n; i++) {
		if (strcmp(cf->vitals.v[i], kmem_vitals[0]) != 0 &&
		    strcmp(cf->vitals.v[i], kmem_vitals[1]) != 0) {
			snprintf(why, len, "option 'vitals': '%s' is not one "
			    "of kmem, kmem_free", cf->vitals.v[i]);
			return -EINVAL;
		}
	}
	if (cf->vitals.n == 0) {
		snprintf(why, len, "option 'vitals' names no vital");
		return -EINVAL;
	}
	return vitals_bpf_opts_check(&cf->bpf, why, len);
}

/*
 * Fill the spec's vitals from the option (checked by kmem_check), switch
 * off the programs of vitals not asked for, and tell the others their
 * vital index.
 */
static void
kmem_choose(const struct vitals_strlist *l, struct kmem_state *s,
    struct vitals_bpf_spec *spec, uint64_t idx[2])
{
	struct bpf_program *progs[2] = { s->skel->progs.kmem_page_alloc,
	    s->skel->progs.kmem_page_free };
	uint32_t j;

	for (j = 0; j < 2; j++) {
		idx[j] = vitals_strlist_selects(l, kmem_vitals[j]) ?
		    spec->nvitals : UINT32_MAX;
		if (idx[j] != UINT32_MAX) {
			spec->vitals[spec->nvitals] = kmem_vitals[j];
			spec->units[spec->nvitals++] = "pages";
		} else
			bpf_program__set_autoload(progs[j], false);
	}
}

/* Open the object and size its maps, before loading. */
static int
kmem_prepare(struct vitals_ctx *ctx, const struct kmem_config *cf,
    struct kmem_state *s)
{
	struct vitals_bpf_spec spec = { .fixup = kmem_fixup, .fixup_arg = s };
	uint64_t idx[2];
	int r;

	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = kmem_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	kmem_choose(&cf->vitals, s, &spec, idx);
	s->alloc_vital = (uint32_t)idx[0];
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		return r;
	/* kmem_choose() lists kmem first: its program counts vital 0. */
	s->skel->rodata->kmem_free_vital = (uint32_t)idx[1];
	return 0;
}

static int
kmem_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	struct kmem_state *s;
	int r;

	if ((r = vitals_init_check(ctx, kmem_check, config)) != 0)
		return r;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->ctx = ctx;
	if ((r = kmem_prepare(ctx, config, s)) < 0)
		goto fail;
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	kmem_fini(s);
	return r;
}

static int
kmem_flush(void *state)
{
	struct kmem_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct kmem_config),
	.name = "kmem",
	.version = "0.1.0",
	.description = "kernel page allocations (kmem) and frees (kmem_free) "
	    "in pages, by process, gfp flags and order: Linux gives these "
	    "tracepoints no call site, so unlike the paper's patched "
	    "allocator the site is in the samples' stacks, not the label "
	    "(mm_page_alloc/free raw tracepoints, in-kernel sketch)",
	.options = kmem_options,
	.available = kmem_available,
	.init = kmem_init,
	.fini = kmem_fini,
	.flush = kmem_flush,
	.check = kmem_check,
};
