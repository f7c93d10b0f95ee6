/* SPDX-License-Identifier: MIT */
/*
 * umem probe: user page faults by faulting PC (as a code offset).  A BPF
 * program on the exceptions:page_fault_user BTF tracepoint keeps the
 * sketch in the kernel; only sampled faults (with user stacks) reach
 * vitalsd, where they get the free memory.
 */
#include <vitals/bpf.h>

#include "memfree.h"
#include "umem.skel.h"

/* Samples get the free memory in args[1]. */
static int
umem_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	struct vitals_bpf_instance *p = arg;

	(void)r;
	ev->args[1] = memfree_bytes(p->priv, p->ctx);
	return 0;
}

VITALS_BPF_PROBE(umem, "0.1.0",
    "user page faults by faulting user PC, as a "
    "code offset the same in every process of a program (all user-mode "
    "faults, where the paper counted those that map in memory; "
    "exceptions:page_fault_user BTF tracepoint, in-kernel sketch)",
    struct vitals_bpf_opts, vitals_bpf_options,
    .vitals = { { "umem", "faults" } },
    .tracepoints = { "exceptions:page_fault_user" },
    .state_size = sizeof(struct memfree), .fixup = umem_fixup);
