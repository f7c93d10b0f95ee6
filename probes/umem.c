/* SPDX-License-Identifier: MIT */
/*
 * umem probe: user page faults by faulting PC (as a code offset).  A BPF
 * program on the exceptions:page_fault_user BTF tracepoint keeps the
 * sketch in the kernel; only sampled faults (with user stacks) reach
 * vitalsd, where they get the free memory.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "memfree.h"
#include "umem.skel.h"

struct umem_config {
	struct vitals_bpf_opts bpf;
};

struct umem_state {
	struct umem_bpf *skel;
	struct vitals_bpf *bpf;
	struct vitals_ctx *ctx;
	struct memfree mem;
};

static const char *const umem_tracepoints[] = {
	"exceptions:page_fault_user", NULL
};

static const struct vitals_option umem_options[] = {
	VITALS_BPF_OPTIONS(struct umem_config, bpf),
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
umem_available(char *why, size_t len)
{
	return vitals_bpf_available(umem_tracepoints, why, len);
}

/* Samples get the free memory in args[1]. */
static int
umem_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	struct umem_state *s = arg;

	(void)r;
	ev->args[1] = memfree_bytes(&s->mem, s->ctx);
	return 0;
}

static void
umem_fini(void *state)
{
	struct umem_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	umem_bpf__destroy(s->skel);
	free(s);
}

static int
umem_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct umem_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "umem" },
		.units = { "faults" },
		.fixup = umem_fixup,
	};
	struct umem_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->ctx = ctx;
	spec.fixup_arg = s;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = umem_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		goto fail;
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	umem_fini(s);
	return r;
}

static int
umem_flush(void *state)
{
	struct umem_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct umem_config),
	.name = "umem",
	.version = "0.1.0",
	.description = "user page faults by faulting user PC, as a code offset "
	    "the same in every process of a program (all user-mode faults, "
	    "where the paper counted those that map in memory; "
	    "exceptions:page_fault_user BTF tracepoint, in-kernel sketch)",
	.options = umem_options,
	.available = umem_available,
	.init = umem_init,
	.fini = umem_fini,
	.flush = umem_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
