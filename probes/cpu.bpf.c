/* SPDX-License-Identifier: MIT */
/*
 * cpu (and cache) vital, in the kernel: a program on a sampling perf
 * event of every CPU counts each sample under the interrupted PC >> 8
 * (paper 4.2; a kernel PC as its offset in the kernel's text), so a hot
 * function's samples share a few counters; only
 * sampled events, with both stacks, go to user space.  The idle task is
 * not counted.
 */
#include <vitals/probe.bpf.h>

#include "cpu.h"

/*
 * The interrupted registers (bpf_user_pt_regs_t), in the x86-64 user ABI
 * layout (struct pt_regs of <asm/ptrace.h>): ip is word 16, cs word 17.
 * Declared here because the BPF target does not select that header's
 * x86-64 branch.
 */
#define CPU_REG_IP 16
#define CPU_REG_CS 17

/* Set in kernel PCs' labels: apart from user code offsets of one exe. */
#define CPU_KERNEL_LABEL (1ULL << 62)

struct cpu_perf_ctx {
	__u64 regs[21];
	__u64 sample_period;
	__u64 addr;
};

SEC("perf_event")
int
vitals_cpu_sample(struct cpu_perf_ctx *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task), ip = ctx->regs[CPU_REG_IP], at;
	__u32 kernel = (ctx->regs[CPU_REG_CS] & 3) != 3;

	if (c == 0 || (pt >> 32) == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	/*
	 * User PCs by code offset, so every process of a program shares
	 * labels; kernel ones by offset in the kernel's text (no KASLR).
	 */
	at = kernel ? CPU_KERNEL_LABEL | vitals_bpf_ktext(c, ip & ~0xffULL) >> 8
		    : vitals_bpf_code_off(me, ip) >> 8;
	r = vitals_bpf_count(c, 0, at, 1, pt, me->exe_id, vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	r->op = kernel;
	r->args[0] = ip;
	/* The files of user frames only if asked: see the option in cpu.c. */
	vitals_bpf_submit_files(ctx, r, kernel, 1, c->param[CPU_P_FILES] != 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
