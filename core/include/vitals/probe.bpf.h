/* SPDX-License-Identifier: MIT */
/*
 * What a probe's BPF program uses of the in-kernel sketch: the one vitals
 * header it includes (clang -target bpf -mcpu=v3; kernel types through BTF,
 * no kernel headers).  Per event a program finds whom the event is of and
 * whether the filters want it, computes the vital's label and weight, and
 * counts them; when the count returns a record the event is sampled, and
 * the program fills in what it knows and sends it.  The rest of the headers
 * below (maps, per-CPU caches, pending weights, first-sighting bits) is
 * the engine's, named vitals__* / VITALS__*: probes do not name it.
 *
 *   setup   vitals_bpf_cfg() and its param[], vitals_bpf_field()
 *   whom    vitals_bpf_me_wanted(), vitals_bpf_me(), vitals_bpf_task(),
 *           vitals_bpf_pid_tgid(), vitals_bpf_uid(), vitals_bpf_task_exe(),
 *           vitals_bpf_current_task(), vitals_bpf_current_exe(),
 *           vitals_bpf_wanted(), vitals_bpf_task_wanted(),
 *           vitals_bpf_unfiltered()
 *   label   vitals_bpf_code_off(), vitals_hash_mix64(),
 *           vitals_bpf_ktext(), vitals_bpf_khide() (no raw kernel
 *           address in a label: doc/design.md, "Kernel addresses")
 *   count   vitals_bpf_count_me(), vitals_bpf_count(),
 *           vitals_bpf_count_relaxed(), vitals_bpf_count_last(),
 *           VITALS_BPF_PT_CURRENT
 *   sample  vitals_bpf_rec_args(), vitals_bpf_submit(),
 *           vitals_bpf_submit_tp(), vitals_bpf_submit_files(),
 *           vitals_bpf_send(), vitals_bpf_ufiles(), VITALS_BPF_KSKIP
 *   types   struct vitals_bpf_cfg, struct vitals_bpf_exe_slot (a task's
 *           ids, "me"), struct vitals_bpf_rec, struct vitals_bpf_ufile,
 *           and the kernel types of <vitals/task.bpf.h> (task_struct...)
 *   consts  VITALS_BPF_STACK, VITALS_BPF_UFILES, VITALS_BPF_COMM_LEN,
 *           VITALS_BPF_MAX_VITALS, VITALS_BPF_MAX_PARAMS,
 *           VITALS_BPF_PF_KTHREAD
 *
 * Also included: <linux/bpf.h>, libbpf's <bpf/bpf_helpers.h> (SEC),
 * <bpf/bpf_tracing.h> (BPF_PROG: a BTF tracepoint's arguments by name)
 * and <bpf/bpf_core_read.h>.  doc/probe-authoring.md shows a probe whole.
 */
#ifndef VITALS_PROBE_BPF_H
#define VITALS_PROBE_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <vitals/sketch.bpf.h>

/* ---- setup ---- */

/*
 * The parameters user space wrote: the filters, and param[] (the probe's
 * own, set in its setup hook).  Look it up once per run and pass it on.
 * NULL only if the map lookup fails.
 */
static __always_inline struct vitals_bpf_cfg *
vitals_bpf_cfg(void)
{
	return bpf_map_lookup_elem(&vitals_cfg, (const void *)&vitals__zero);
}

/*
 * Read a tracepoint field at the offset user space found in the tracefs
 * format file (vitals_bpf_set_field(), cfg field_off[i]); 0 when the field
 * was not found.
 */
static __always_inline __u64
vitals_bpf_field(const struct vitals_bpf_cfg *c, void *ctx, __u32 i)
{
	__u64 v = 0;
	__u32 off, size;

	if (i >= VITALS_BPF_MAX_FIELDS)
		return 0;
	off = c->field_off[i];
	size = c->field_size[i];
	if (size == 0 || size > 8)
		return 0;
	bpf_probe_read_kernel(&v, size, (char *)ctx + off);
	return v;
}

/* ---- whom: the task an event is of, and the filters ---- */

/*
 * The current task t's ids (vitals_bpf_task()), cached per CPU under its
 * task and credential pointers, which exec or a change of uid replace:
 * me->exe_id, me->uid, me->tgid, and me->stack_top, code_start, code_end
 * and mmap_base of its mm.  The cheapest way to the ids of the current
 * task, for programs that run on most events.  NULL only if the map
 * lookup fails.
 */
static __always_inline struct vitals_bpf_exe_slot *
vitals_bpf_me(struct task_struct *t)
{
	return vitals__me(t);
}

/*
 * Whether the current task, of process pid_tgid >> 32 (as
 * bpf_get_current_pid_tgid() gives it), passes the configured filters
 * (process, cgroup, comm) and is not vitalsd itself.
 */
static __always_inline int
vitals_bpf_wanted(const struct vitals_bpf_cfg *c, __u64 pid_tgid)
{
	return vitals__wanted_tgid(c, pid_tgid >> 32);
}

/* vitals_bpf_me() of the current task if the filters want it, else NULL. */
static __always_inline struct vitals_bpf_exe_slot *
vitals_bpf_me_wanted(const struct vitals_bpf_cfg *c)
{
	struct vitals_bpf_exe_slot *me = vitals__me(vitals_bpf_task());

	return me != 0 && vitals__wanted_tgid(c, me->tgid) ? me : 0;
}

/*
 * The current task's ids as vitals_bpf_me() gives them, but checked by
 * its process tgid and mm (t is vitals_bpf_task()): for a program that has
 * read those anyway.  The slot's uid is not filled.  NULL only if the map
 * lookup fails.
 */
static __always_inline struct vitals_bpf_exe_slot *
vitals_bpf_current_task(struct task_struct *t, __u32 tgid)
{
	return vitals__current_task(t, tgid);
}

/* Exe id of the current process, tgid (0 for kernel threads). */
static __always_inline __u32
vitals_bpf_current_exe(__u32 tgid)
{
	struct vitals_bpf_exe_slot *c;

	c = vitals__current_task(vitals_bpf_task(), tgid);
	return c != 0 ? c->exe_id : 0;
}

/*
 * The filters of vitals_bpf_wanted() for task t, which need not be the
 * current one (a BTF pointer: a tracepoint's task argument), e.g. the
 * task a scheduler event switches in.
 */
static __always_inline int
vitals_bpf_task_wanted(const struct vitals_bpf_cfg *c, struct task_struct *t)
{
	__u32 tgid = t->tgid;
	int i;

	if (tgid == c->self_tgid || (c->tgid != 0 && tgid != c->tgid))
		return 0;
	if (c->cgroup != 0 && t->cgroups->dfl_cgrp->kn->id != c->cgroup)
		return 0;
	for (i = 0; i < VITALS_BPF_COMM_LEN; i++) {
		if (c->comm[i] == '\0')
			break;
		if (t->comm[i] != c->comm[i])
			return 0;
	}
	return 1;
}

/* Whether no filter is set: every process is counted. */
static __always_inline int
vitals_bpf_unfiltered(const struct vitals_bpf_cfg *c)
{
	return c->tgid == 0 && c->cgroup == 0 && c->comm[0] == '\0';
}

/* ---- label ---- */

/*
 * A kernel pointer (a lock, a request: heap, not code) as a label may
 * hold it: keyed with the host's key (vitals_hash_keyed), so a label
 * names the same object in every epoch but tells nobody where it is.
 */
static __always_inline __u64
vitals_bpf_khide(const struct vitals_bpf_cfg *c, __u64 addr)
{
	return vitals_hash_keyed(c->kkey[0], c->kkey[1], addr);
}

/*
 * A kernel text address (a PC, a frame) as a label may hold it: its
 * offset in the kernel's text, the same at every boot of the kernel
 * (KASLR removed); a module's, which its offset from the kernel's would
 * betray, keyed as vitals_bpf_khide.  Labels and the HCA slots they hash
 * to are stored where non-root users may read them: a raw address there
 * reveals the kernel's layout.
 */
static __always_inline __u64
vitals_bpf_ktext(const struct vitals_bpf_cfg *c, __u64 addr)
{
	if (addr >= c->ktext_lo && addr < c->ktext_hi)
		return addr - c->ktext_lo;
	return vitals_bpf_khide(c, addr);
}

/*
 * A user code address of the current process (me from vitals_bpf_me() or
 * vitals_bpf_current_task()) as an offset that is the same in every
 * process of the same executable, address space randomisation
 * notwithstanding: from the start of the exe's text; else, for shared
 * libraries (mapped top-down below mmap_base in load order), from
 * mmap_base, tagged in bit 62; else the address itself, tagged in bit 63.
 * For labels, so that a new process of a known program makes no new
 * labels.
 */
static __always_inline __u64
vitals_bpf_code_off(const struct vitals_bpf_exe_slot *me, __u64 pc)
{
	if (pc >= me->code_start && pc < me->code_end)
		return pc - me->code_start;
	if (pc < me->mmap_base)
		return (me->mmap_base - pc) | (1ULL << 62);
	return pc | (1ULL << 63);
}

/* ---- count ---- */

/*
 * Count one event of vital `vital` (0-based, an index of the probe's
 * vitals) of process pid_tgid (VITALS_BPF_PT_CURRENT: the current task,
 * read only if the event is sampled) with exe and uid: add weight to the
 * label's counter in the current epoch's HCA and, when the counter crossed
 * a power of t or the label is new this epoch, reserve a ring buffer
 * record for it.  Returns the record for the caller to fill (op, args)
 * and send with vitals_bpf_submit() and the like, or NULL if the event was
 * only counted (or the ring buffer was full, which counts a drop).  A
 * label counted again on the same CPU is added to its counter in sums,
 * so a counter lags the events by what each CPU holds pending; user space
 * adds that at the boundary.
 */
static __always_inline struct vitals_bpf_rec *
vitals_bpf_count(struct vitals_bpf_cfg *c, __u32 vital, __u64 label,
    __u64 weight, __u64 pid_tgid, __u32 exe_id, __u32 uid)
{
	return vitals__count_with(
	    c, vital, label, weight, pid_tgid, exe_id, uid, 0);
}

/*
 * vitals_bpf_count_me()'s full path, out of line: in line, clang keeps
 * what the full path needs across its calls in stack slots it fills
 * before the common case returns (a store and a load each).
 */
static __attribute__((noinline)) struct vitals_bpf_rec *
vitals__count_me_full(struct vitals_bpf_cfg *c,
    const struct vitals_bpf_exe_slot *me, __u32 vital, __u64 label,
    __u64 weight)
{
	return vitals__count_with(c, vital, label, weight,
	    VITALS_BPF_PT_CURRENT, me->exe_id, me->uid, 0);
}

/*
 * vitals_bpf_count() of an event of the current task, me.  The common
 * case (the label this CPU counted last for the vital, by the same exe
 * and uid, a weight of 1 that crosses nothing) only adds to the pending
 * weight, in line; the rest takes the full path.
 */
static __always_inline struct vitals_bpf_rec *
vitals_bpf_count_me(struct vitals_bpf_cfg *c, struct vitals_bpf_exe_slot *me,
    __u32 vital, __u64 label, __u64 weight)
{
	if (vitals__count_last(c, me, vital, label, weight, me->uid))
		return 0;
	return vitals__count_me_full(c, me, vital, label, weight);
}

/*
 * vitals_bpf_count() without the atomic add, for tracepoints that fire
 * right after a burst of stores: a locked instruction waits until they
 * drain (mm_page_alloc after zeroing a page: ~200 ns here).  Two CPUs
 * counting the same label in the same few nanoseconds can lose one add.
 */
static __always_inline struct vitals_bpf_rec *
vitals_bpf_count_relaxed(struct vitals_bpf_cfg *c, __u32 vital, __u64 label,
    __u64 weight, __u64 pid_tgid, __u32 exe_id, __u32 uid)
{
	return vitals__count_with(
	    c, vital, label, weight, pid_tgid, exe_id, uid, 1);
}

/*
 * Count an event of weight 1 of the current task, me (vitals_bpf_me()),
 * with one store, if it can be: its label is the one this CPU counted last
 * for the vital, by the same exe and uid, in this epoch, and its counter
 * would cross nothing.  Returns 1 if it counted the event, 0 if it did
 * nothing and the program must call vitals_bpf_count() (or _relaxed).
 * For programs that run where stores are dear (mm_page_alloc, right after
 * the allocator zeroed the page); they keep their own stores few too.
 */
static __always_inline int
vitals_bpf_count_last(const struct vitals_bpf_cfg *c,
    struct vitals_bpf_exe_slot *me, __u32 vital, __u64 label, __u64 weight,
    __u32 uid)
{
	return vitals__count_last(c, me, vital, label, weight, uid);
}

/* ---- sample ---- */

/* A sampled event's operation and four arguments, vital-specific. */
static __always_inline void
vitals_bpf_rec_args(
    struct vitals_bpf_rec *r, __u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3)
{
	r->op = op;
	r->args[0] = a0;
	r->args[1] = a1;
	r->args[2] = a2;
	r->args[3] = a3;
}

/*
 * Hand the record to user space as it is, without waking it: user space
 * drains the ring on a timer and at every boundary, and when a record
 * finds the ring more than half full, which wakes it (so a small ring
 * does not overflow in a burst of samples between two drains).
 */
static __always_inline void
vitals_bpf_send(struct vitals_bpf_rec *r)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&vitals_rb, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&vitals_rb, BPF_RB_RING_SIZE) / 2)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
}

/*
 * The executable file mappings of task t (a BTF pointer) that user
 * addresses ip[0..n) fall in, into uf (VITALS_BPF_UFILES of them, the
 * first found), so that the frames of a process are placed once it is
 * gone and /proc no longer has its maps.  The exe's text, [code[0],
 * code[1]) (a record's code_start and code_end), user space places by
 * itself.  For sampled events only: a frame in no mapping the CPU knows
 * of the process costs a bpf_find_vma() (8 at most per process, 32 per
 * CPU per 100 ms), and where interrupts are off (page faults, perf
 * samples) the kernel allows one per program run.  A frame in no code is
 * where a frame-pointer walk went astray: it and the frames after it are
 * dropped.  Returns the mappings found, plus the frames kept << 8.
 */
static __always_inline __u32
vitals_bpf_ufiles(struct task_struct *t, const __u64 *ip, __u32 n,
    const __u64 *code, struct vitals_bpf_ufile *uf)
{
	return vitals__ufiles(t, ip, n, code, uf);
}

/*
 * Fill the record's stacks from the program's context (kernel and/or
 * user as asked), with the files of the user frames if files is set,
 * and send it.  Without the files, user space places the frames of a
 * process still running through /proc, and those in the exe's text by
 * the record's code range.
 */
static __always_inline void
vitals_bpf_submit_files(
    void *ctx, struct vitals_bpf_rec *r, int kstack, int ustack, int files)
{
	long n;

	if (kstack) {
		n = bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
		r->nkstack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	}
	if (ustack) {
		n = bpf_get_stack(
		    ctx, r->ustack, sizeof(r->ustack), BPF_F_USER_STACK);
		r->nustack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	}
	if (ustack && files) {
		n = vitals__ufiles(vitals_bpf_task(), r->ustack, r->nustack,
		    &r->code_start, r->ufile);
		r->nufiles = n & 0xff;
		r->nustack = (__u32)n >> 8;
	}
	vitals_bpf_send(r);
}

/* vitals_bpf_submit_files() with the files of the user frames. */
static __always_inline void
vitals_bpf_submit(void *ctx, struct vitals_bpf_rec *r, int kstack, int ustack)
{
	vitals_bpf_submit_files(ctx, r, kstack, ustack, 1);
}

/* Kernel frames a tracing program's stack starts with: itself, bpf_trace_run. */
#define VITALS_BPF_KSKIP 2

/*
 * vitals_bpf_submit() with the kernel stack starting at the traced kernel
 * function, for raw_tp/tp_btf programs (whose first two frames are the
 * program and bpf_trace_run<N>).
 */
static __always_inline void
vitals_bpf_submit_tp(void *ctx, struct vitals_bpf_rec *r, int ustack)
{
	long n;

	n = bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), VITALS_BPF_KSKIP);
	r->nkstack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	vitals_bpf_submit(ctx, r, 0, ustack);
}

#endif /* VITALS_PROBE_BPF_H */
