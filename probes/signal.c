/* SPDX-License-Identifier: MIT */
/*
 * signal probe: signals by receiving process and signal number.  A BPF
 * program on signal:signal_deliver keeps the sketch in the kernel; one on
 * signal:signal_generate remembers each signal's sender, so sampled
 * deliveries (with the receiver's stacks) say who sent them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "signal.skel.h"

/* Parameter slot of signal.bpf.c. */
#define SIGNAL_P_SENDER 0

struct signal_config {
	struct vitals_bpf_opts bpf;
	int sender; /* record senders at signal_generate */
};

struct signal_state {
	struct signal_bpf *skel;
	struct vitals_bpf *bpf;
};

static const char *const signal_tracepoints[] = {
	"signal:signal_deliver", "signal:signal_generate", NULL
};

static const struct vitals_option signal_options[] = {
	VITALS_BPF_OPTIONS(struct signal_config, bpf),
	{ "sender", VITALS_OPT_BOOL, offsetof(struct signal_config, sender),
	  "true", "name each sampled signal's sender (a program on "
	  "signal:signal_generate; false saves its cost per signal)", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
signal_available(char *why, size_t len)
{
	return vitals_bpf_available(signal_tracepoints, why, len);
}

static void
signal_fini(void *state)
{
	struct signal_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	signal_bpf__destroy(s->skel);
	free(s);
}

static int
signal_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct signal_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "signal" },
		.units = { "signals" },
	};
	struct signal_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = signal_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	if (!cf->sender)
		bpf_program__set_autoload(s->skel->progs.vitals_signal_generate,
		    false);
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		goto fail;
	vitals_bpf_set_param(s->bpf, SIGNAL_P_SENDER, cf->sender != 0);
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	signal_fini(s);
	return r;
}

static int
signal_flush(void *state)
{
	struct signal_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct signal_config),
	.name = "signal",
	.version = "0.1.0",
	.description = "signals by receiving process and signal number, counted "
	    "at delivery (signal:signal_deliver; sender from signal_generate; "
	    "in-kernel sketch)",
	.options = signal_options,
	.available = signal_available,
	.init = signal_init,
	.fini = signal_fini,
	.flush = signal_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
