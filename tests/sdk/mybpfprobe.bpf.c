/* SPDX-License-Identifier: MIT */
/*
 * The out-of-tree probe's program (tests/sdk.sh), built against the
 * installed <vitals/probe.bpf.h> alone: every fork, counted under the
 * forking process (its exe, uid, and its pid as the label); samples carry
 * the child's pid and the stacks.
 */
#include <vitals/probe.bpf.h>

SEC("tp_btf/sched_process_fork")
int
BPF_PROG(mybpfprobe_fork, struct task_struct *parent, struct task_struct *child)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;

	if (c == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	r = vitals_bpf_count_me(c, me, 0, me->tgid, 1);
	if (r == 0)
		return 0;
	vitals_bpf_rec_args(r, 0, child->pid, 0, 0, 0);
	vitals_bpf_submit_tp(ctx, r, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
