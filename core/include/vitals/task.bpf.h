/* SPDX-License-Identifier: MIT */
/*
 * The few kernel types vitals' BPF programs read, relocated through BTF
 * (CO-RE) so no kernel headers are needed, and the current task's ids.
 * Included by <vitals/sketch.bpf.h>; a program that keeps no sketch
 * (core/exec.bpf.c) includes it alone, after <linux/bpf.h> and
 * <bpf/bpf_helpers.h>.
 */
#ifndef VITALS_TASK_BPF_H
#define VITALS_TASK_BPF_H

#include <vitals/bpf_shared.h>

struct super_block {
	__u32 s_dev;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct mm_struct {
	struct file *exe_file;
	unsigned long start_stack;
	unsigned long start_code;
	unsigned long end_code;
	unsigned long mmap_base;
} __attribute__((preserve_access_index));

/* vm_flags is read only where the kernel has it (bpf_core_field_exists). */
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

struct cred {
	struct {
		unsigned int val;
	} uid;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	struct mm_struct *mm;
	struct mm_struct *active_mm;
	int pid;
	int tgid;
	struct task_struct *group_leader;
	const struct cred *cred;
} __attribute__((preserve_access_index));

/*
 * The current task, for vitals_bpf_pid_tgid() and vitals_bpf_uid(): plain
 * loads through its BTF pointer cost less than a helper call each
 * (bpf_get_current_pid_tgid(), bpf_get_current_uid_gid(): ~4.5 ns apiece
 * here).
 */
static __always_inline struct task_struct *
vitals_bpf_task(void)
{
	return (struct task_struct *)bpf_get_current_task_btf();
}

/* bpf_get_current_pid_tgid() of task t. */
static __always_inline __u64
vitals_bpf_pid_tgid(struct task_struct *t)
{
	return (__u64)(__u32)t->tgid << 32 | (__u32)t->pid;
}

/* The uid bpf_get_current_uid_gid() gives for task t. */
static __always_inline __u32
vitals_bpf_uid(struct task_struct *t)
{
	return t->cred->uid.val;
}

/* task_struct.flags: a kernel thread (include/linux/sched.h). */
#define VITALS_BPF_PF_KTHREAD 0x00200000U

/*
 * The address space task t runs in, for its exe: its mm, or, once exit
 * has dropped that (exit_mm() before mmput(), so the pages freed in
 * exit_mmap() come with no mm), the one it still runs on lazily
 * (active_mm), whose exe_file lasts until exit_mmap() is done.  Kernel
 * threads borrow active_mm from whoever ran before: NULL for them.
 */
static __always_inline struct mm_struct *
vitals_bpf_task_mm(struct task_struct *t)
{
	struct mm_struct *mm = t->mm;

	if (mm == 0 && !(t->flags & VITALS_BPF_PF_KTHREAD))
		mm = t->active_mm;
	return mm;
}

/* Exe id of an mm's executable (0 if none); mm is a BTF pointer or NULL. */
static __always_inline __u32
vitals_bpf_mm_exe(struct mm_struct *mm)
{
	struct file *f;
	struct inode *ino;

	/* Loads through BTF pointers: a fault reads as 0. */
	if (mm == 0 || (f = mm->exe_file) == 0 || (ino = f->f_inode) == 0)
		return 0;
	return vitals_bpf_exe_id(ino->i_ino);
}

/*
 * Exe id of task t (a BTF pointer: a tracepoint's task argument, or
 * vitals_bpf_task()), 0 for kernel threads.
 */
static __always_inline __u32
vitals_bpf_task_exe(struct task_struct *t)
{
	return vitals_bpf_mm_exe(vitals_bpf_task_mm(t));
}

#endif /* VITALS_TASK_BPF_H */
