/* SPDX-License-Identifier: MIT */
/*
 * syscall probe: system calls by call site.  A BPF program on
 * raw_syscalls:sys_enter keeps the sketch in the kernel; only sampled
 * calls (with their user stacks and first four arguments) reach vitalsd.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "syscall.skel.h"

struct syscall_config {
	struct vitals_bpf_opts bpf;
};

struct syscall_state {
	struct syscall_bpf *skel;
	struct vitals_bpf *bpf;
};

static const char *const syscall_tracepoints[] = {
	"raw_syscalls:sys_enter", NULL
};

static const struct vitals_option syscall_options[] = {
	VITALS_BPF_OPTIONS(struct syscall_config, bpf),
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
syscall_available(char *why, size_t len)
{
	return vitals_bpf_available(syscall_tracepoints, why, len);
}

static void
syscall_fini(void *state)
{
	struct syscall_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	syscall_bpf__destroy(s->skel);
	free(s);
}

static int
syscall_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct syscall_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "syscall" },
		.units = { "calls" },
	};
	struct syscall_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = syscall_bpf__open()) == NULL) {
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
	syscall_fini(s);
	return r;
}

static int
syscall_flush(void *state)
{
	struct syscall_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct syscall_config),
	.name = "syscall",
	.version = "0.1.0",
	.description = "system calls by user call site (raw_syscalls:sys_enter, in-kernel sketch)",
	.options = syscall_options,
	.available = syscall_available,
	.init = syscall_init,
	.fini = syscall_fini,
	.flush = syscall_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
