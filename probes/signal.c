/* SPDX-License-Identifier: MIT */
/*
 * signal probe: signals by receiving process and signal number.  A BPF
 * program on signal:signal_deliver keeps the sketch in the kernel; one on
 * signal:signal_generate remembers each signal's sender, so sampled
 * deliveries (with the receiver's stacks) say who sent them.
 */
#include <stdbool.h>
#include <stddef.h>

#include <vitals/bpf.h>

#include "signal.skel.h"

/* Parameter slot of signal.bpf.c. */
#define SIGNAL_P_SENDER 0

struct signal_config {
	struct vitals_bpf_opts bpf;
	int sender; /* record senders at signal_generate */
};

static const struct vitals_option signal_options[] = {
	VITALS_BPF_OPTIONS(struct signal_config, bpf),
	{ "sender", VITALS_OPT_BOOL, offsetof(struct signal_config, sender),
	    "true",
	    "name each sampled signal's sender (a program on "
	    "signal:signal_generate; false saves its cost per signal)",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

/* Without senders, signal_generate's program is not loaded. */
static int
signal_setup(struct vitals_bpf_instance *p)
{
	const struct signal_config *cf = p->config;
	struct signal_bpf *skel = p->skel;

	if (!cf->sender)
		bpf_program__set_autoload(
		    skel->progs.vitals_signal_generate, false);
	p->param[SIGNAL_P_SENDER] = cf->sender != 0;
	return 0;
}

VITALS_BPF_PROBE(signal, "0.1.0",
    "signals by receiving process and signal "
    "number, counted at delivery (signal:signal_deliver; sender from "
    "signal_generate; in-kernel sketch)",
    struct signal_config, signal_options, .vitals = { { "signal", "signals" } },
    .tracepoints = { "signal:signal_deliver", "signal:signal_generate" },
    .setup = signal_setup);
