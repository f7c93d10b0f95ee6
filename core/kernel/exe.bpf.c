/* SPDX-License-Identifier: MIT */
/*
 * The path of every program exec'd, by exe id (core/kernel/exe_table.h).  A fork +
 * exec of a short program lives a few milliseconds, and user space reads
 * samples every 100 ms: by then /proc no longer names it.  An exec of a
 * program already in its slot costs one load and a compare.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/task.bpf.h>

#include "exe_table.h"

struct linux_binprm {
	const char *interp;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct vitals_exec_name);
	__uint(max_entries, VITALS_EXEC_SLOTS);
} vitals_exec_names SEC(".maps");

/*
 * sched_process_exec(struct task_struct *p, pid_t old_pid,
 *     struct linux_binprm *bprm), after the new program is mapped.
 * bprm->interp is the file run: the program, or a script's interpreter,
 * whose inode the exe id is a hash of.
 */
SEC("tp_btf/sched_process_exec")
int
vitals_exec(__u64 *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx[0];
	struct linux_binprm *bprm = (struct linux_binprm *)ctx[2];
	struct vitals_exec_name *e;
	__u32 id = vitals__mm_exe(p->mm), k = id % VITALS_EXEC_SLOTS;

	if (id == 0)
		return 0;
	e = bpf_map_lookup_elem(&vitals_exec_names, &k);
	if (e == 0 || e->exe_id == id)
		return 0;
	/*
	 * A seqcount for user space, which copies the slot whole: odd while
	 * written (the fetch-adds are full barriers).  Two CPUs may write
	 * one slot at once; user space checks the path's inode anyway.
	 */
	__sync_fetch_and_add(&e->gen, 1);
	e->exe_id = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), bprm->interp) >
		1 &&
	    e->path[0] == '/')
		e->exe_id = id;
	__sync_fetch_and_add(&e->gen, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
