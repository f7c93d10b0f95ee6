/* SPDX-License-Identifier: MIT */
/*
 * umem vital, in the kernel: every user-mode page fault
 * (exceptions:page_fault_user, a BTF tracepoint) is counted under the
 * faulting user PC's code offset (vitals_bpf_code_off) >> 8; sampled
 * faults carry the fault address and the user stack.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/sketch.bpf.h>

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
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task), ip = 0;

	if (c == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	ip = regs->ip;
	/* By code offset: ASLR would give each process new labels. */
	r = vitals_bpf_count(c, 0, vitals_bpf_code_off(me, ip) >> 8, 1, pt,
	    me->exe_id, vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	r->args[0] = ctx[0];
	r->args[2] = ip;
	r->args[3] = ctx[2];
	vitals_bpf_submit(ctx, r, 0, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
