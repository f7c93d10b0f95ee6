/* SPDX-License-Identifier: MIT */
/*
 * umem vital, in the kernel: every user-mode page fault
 * (exceptions:page_fault_user, a BTF tracepoint) is counted under the
 * faulting user PC's code offset (vitals_bpf_code_off) >> 8; sampled
 * faults carry the fault address and the user stack.  An instruction
 * fetch fault is code being paged in, not memory a site allocates: its
 * PC is merely the first one run in the page, a new label for nearly
 * every such fault (half of a compiler's faults), each sampled as new.
 * They count under one label per process image, UMEM_CODE_LABEL.
 */
#include <vitals/probe.bpf.h>

/* x86 page fault error code: the access was an instruction fetch. */
#define UMEM_PF_INSTR 0x10
/* The label of instruction fetch faults (above any code offset >> 8). */
#define UMEM_CODE_LABEL (1ULL << 61)

struct pt_regs {
	unsigned long ip;
} __attribute__((preserve_access_index));

/*
 * page_fault_user(unsigned long address, struct pt_regs *regs,
 *     unsigned long error_code): as a BTF tracepoint the verifier knows
 * regs, so the PC is a plain load rather than a probe-read helper call.
 */
SEC("tp_btf/page_fault_user")
int
umem_fault(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct pt_regs *regs = (struct pt_regs *)ctx[1];
	__u64 ip, label;

	if (c == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	ip = regs->ip;
	/* By code offset: ASLR would give each process new labels. */
	label = (ctx[2] & UMEM_PF_INSTR) ? UMEM_CODE_LABEL
					 : vitals_bpf_code_off(me, ip) >> 8;
	r = vitals_bpf_count_me(c, me, 0, label, 1);
	if (r == 0)
		return 0;
	r->args[0] = ctx[0];
	r->args[2] = ip;
	r->args[3] = ctx[2];
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
