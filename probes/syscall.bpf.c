/* SPDX-License-Identifier: MIT */
/*
 * syscall vital, in the kernel: every system call entry is counted under
 * its label, the caller's user stack pointer combined with the syscall
 * number (paper 4.2), so distinct call sites stay apart.  The stack
 * pointer is taken as a depth below the process's stack top: with address
 * space randomisation the raw pointer would differ in every process.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/sketch.bpf.h>

struct pt_regs {
	unsigned long di;
	unsigned long si;
	unsigned long dx;
	unsigned long r10;
	unsigned long sp;
} __attribute__((preserve_access_index));

/*
 * A BTF tracepoint: the verifier knows regs is a struct pt_regs, so the
 * stack pointer is a direct (fault-safe) load rather than a helper call.
 */
SEC("tp_btf/sys_enter")
int
vitals_sys_enter(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	__u64 sp, nr = ctx[1];

	if (c == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	sp = regs->sp;
	r = vitals_bpf_count(c, 0, ((me->stack_top - sp) << 12) ^ nr, 1,
	    VITALS_BPF_PT_CURRENT, me->exe_id, me->uid);
	if (r == 0)
		return 0;
	r->op = (__u32)nr;
	r->args[0] = regs->di;
	r->args[1] = regs->si;
	r->args[2] = regs->dx;
	r->args[3] = regs->r10;
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
