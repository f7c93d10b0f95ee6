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

SEC("raw_tp/sys_enter")
int
vitals_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u64 pt = bpf_get_current_pid_tgid(), sp = 0, nr = ctx->args[1];

	if (c == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	bpf_probe_read_kernel(&sp, sizeof(sp), &regs->sp);
	if ((me = vitals_bpf_current(pt >> 32)) == 0)
		return 0;
	r = vitals_bpf_count(c, 0, ((me->stack_top - sp) << 12) ^ nr, 1, pt,
	    me->exe_id, (__u32)bpf_get_current_uid_gid());
	if (r == 0)
		return 0;
	r->op = (__u32)nr;
	bpf_probe_read_kernel(&r->args[0], 8, &regs->di);
	bpf_probe_read_kernel(&r->args[1], 8, &regs->si);
	bpf_probe_read_kernel(&r->args[2], 8, &regs->dx);
	bpf_probe_read_kernel(&r->args[3], 8, &regs->r10);
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
