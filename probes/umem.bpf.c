/* SPDX-License-Identifier: MIT */
/*
 * umem vital, in the kernel: every user-mode page fault
 * (exceptions:page_fault_user, raw) is counted under the faulting user PC
 * >> 8; sampled faults carry the fault address and the user stack.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/sketch.bpf.h>

struct pt_regs {
	unsigned long ip;
} __attribute__((preserve_access_index));

/* page_fault_user(unsigned long address, struct pt_regs *regs,
 *     unsigned long error_code) */
SEC("raw_tp/page_fault_user")
int
umem_fault(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[1];
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task), ip = 0;

	if (c == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	bpf_probe_read_kernel(&ip, sizeof(ip), &regs->ip);
	r = vitals_bpf_count(c, 0, ip >> 8, 1, pt, me->exe_id,
	    vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	r->args[0] = ctx->args[0];
	r->args[2] = ip;
	r->args[3] = ctx->args[2];
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
