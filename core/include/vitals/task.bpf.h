/* SPDX-License-Identifier: MIT */
/*
 * The few kernel types vitals' BPF programs read, relocated through BTF
 * (CO-RE) so no kernel headers are needed, and the current task's ids.
 * Part of <vitals/probe.bpf.h> (through <vitals/sketch.bpf.h>); a program
 * that keeps no sketch (core/kernel/exe.bpf.c) includes it alone, after
 * <linux/bpf.h> and <bpf/bpf_helpers.h>.  A program may declare more of a
 * kernel type under a CO-RE flavour (struct task_struct___mine).
 */
#ifndef VITALS_TASK_BPF_H
#define VITALS_TASK_BPF_H

#include <bpf/bpf_core_read.h>
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

struct task_struct;

/* The cgroup v2 a task is in: its directory's inode (the cgroup id). */
struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

/* owner (CONFIG_MEMCG) is read only where the kernel has it. */
struct mm_struct {
	struct task_struct *owner;
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
	__u64 start_time;
	__u64 self_exec_id;
	struct task_struct *group_leader;
	const struct cred *cred;
	struct css_set *cgroups;
	char comm[VITALS_BPF_COMM_LEN];
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
 * (active_mm), whose exe_file lasts until exit_mmap() is done.  But an
 * exiting task switched out and back in runs on whatever mm the task
 * before it left (kernel threads always do): that one's owner is
 * another process, where exit left its own mm's NULL (or a thread of
 * its own, if others share it).  NULL for such a borrowed mm, as no
 * pointer from the task leads back to its own (vitals__exe_fill()
 * keeps the exe it had): never another process's exe.  Without an owner
 * field (no CONFIG_MEMCG) active_mm is taken as is.
 */
static __always_inline struct mm_struct *
vitals__task_mm(struct task_struct *t)
{
	struct mm_struct *mm = t->mm;
	struct task_struct *o;

	if (mm != 0)
		return mm;
	if (t->flags & VITALS_BPF_PF_KTHREAD)
		return 0;
	mm = t->active_mm;
	/* Loads through BTF pointers: a fault reads as 0. */
	if (mm != 0 && bpf_core_field_exists(mm->owner) &&
	    (o = mm->owner) != 0 && o->tgid != t->tgid)
		return 0;
	return mm;
}

/* Exe id of an mm's executable (0 if none); mm is a BTF pointer or NULL. */
static __always_inline __u32
vitals__mm_exe(struct mm_struct *mm)
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
	return vitals__mm_exe(vitals__task_mm(t));
}

#endif /* VITALS_TASK_BPF_H */
