/* SPDX-License-Identifier: MIT */
/*
 * syscall vital, in the kernel: every system call entry is counted under
 * its label, the caller's user stack pointer combined with the syscall
 * number (paper 4.2), so distinct call sites stay apart.  The stack
 * pointer is taken as a depth below the process's stack top: with address
 * space randomisation the raw pointer would differ in every process.
 */
#include <vitals/probe.bpf.h>

struct pt_regs {
	unsigned long di, si, dx, r10, sp;
} __attribute__((preserve_access_index));

/*
 * sys_enter(struct pt_regs *regs, long id), a BTF tracepoint: the verifier
 * knows regs is a struct pt_regs, so the stack pointer is a direct
 * (fault-safe) load rather than a helper call.  The arguments are read
 * from ctx after the calls that find the task, not before (BPF_PROG
 * would): kept across them, each would be a store and a load.
 */
SEC("tp_btf/sys_enter")
int
vitals_sys_enter(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct pt_regs *regs;
	long nr;

	if (c == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	regs = (struct pt_regs *)ctx[0];
	nr = (long)ctx[1];
	r = vitals_bpf_count_me(
	    c, me, 0, ((me->stack_top - regs->sp) << 12) ^ nr, 1);
	if (r == 0)
		return 0;
	regs = (struct pt_regs *)ctx[0];
	nr = (long)ctx[1];
	vitals_bpf_rec_args(r, nr, regs->di, regs->si, regs->dx, regs->r10);
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
