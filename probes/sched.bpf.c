/* SPDX-License-Identifier: MIT */
/*
 * sched and blocking vitals, in the kernel, from sched_switch alone.  The
 * run-queue delay of the thread switched in is the kernel's own: the time
 * since its sched_info.last_queued stamp (set when it was enqueued, woken
 * or preempted, on this run queue's clock), plus what the kernel added to
 * its sched_info.run_delay since it last left a CPU (the wait on another
 * CPU's queue before a migration).  So no program runs at wakeup.  A
 * thread leaving the CPU asleep is stamped, in task-local storage, and
 * its time off-CPU counted when it comes back, under its own identity:
 * as blocking if it slept waiting for a resource (D state), as wait if it
 * slept waiting for an event (sched_sleep_vital).
 */
#include <vitals/probe.bpf.h>

#include "sched.h"

/* __state at a task's last switch: it exits and never comes back. */
#define SCHED_TASK_DEAD 0x80
/* __state bits that tell a wait for a resource from an idle one. */
#define SCHED_TASK_UNINTERRUPTIBLE 0x2
#define SCHED_TASK_NOLOAD 0x400

/* CONFIG_SCHED_INFO: times on the run queue's clock (rq->clock). */
struct sched_info {
	unsigned long pcount;
	unsigned long long run_delay;
	unsigned long long last_queued;
} __attribute__((preserve_access_index));

/* The run queue, and the way to it from a task: se.cfs_rq->rq. */
struct rq {
	__u64 clock; /* updated by __schedule() before the switch */
} __attribute__((preserve_access_index));

struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

/* x86-64: a switched-out task's kernel stack pointer. */
struct thread_struct {
	unsigned long sp;
} __attribute__((preserve_access_index));

/*
 * More of task_struct than <vitals/task.bpf.h> declares.  The ___sched
 * suffix is a CO-RE flavour: it relocates against the kernel's
 * task_struct like the plain name would.
 */
struct task_struct___sched {
	unsigned int __state;
	struct sched_entity se;
	struct sched_info sched_info;
	struct thread_struct thread;
	void *stack;
	int pid;
	int tgid;
	struct mm_struct *mm;
	const struct cred *cred;
	char comm[VITALS_BPF_COMM_LEN];
} __attribute__((preserve_access_index));

struct pt_regs {
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
} __attribute__((preserve_access_index));

/* A thread between leaving the CPU and coming back. */
struct sched_task {
	__u64 off; /* went to sleep at (ns); 0 = not blocked */
	__u64 out; /* left the CPU still runnable at (ns); 0 = not */
	__u64 run_delay; /* its sched_info.run_delay when it left */
	__u32 state; /* its state when it went to sleep */
	__u32 cause; /* SCHED_CAUSE_* of the wait that follows */
	__u32 exe; /* exe id, kept for a thread that left with no mm */
	__u32 pad;
};

/*
 * Task-local storage: found through the task itself (no hash, no LRU lock
 * on every switch) and freed with the task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sched_task);
} sched_tasks SEC(".maps");

/* The user stack of a thread that went to sleep (ustack option). */
struct sched_ustack {
	__u64 n; /* frames in ip */
	__u64 ip[VITALS_BPF_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sched_ustack);
} sched_ustacks SEC(".maps");

/* Per CPU: the top frames of the incoming thread's kernel stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sched_ustack);
	__uint(max_entries, 1);
} sched_scratch SEC(".maps");

/* The thread's entry, created empty if it has none; NULL if that fails. */
static __always_inline struct sched_task *
sched_entry(struct task_struct___sched *t)
{
	return bpf_task_storage_get(&sched_tasks, (struct task_struct *)t, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The thread's entry, or NULL if it has none. */
static __always_inline struct sched_task *
sched_lookup(struct task_struct___sched *t)
{
	return bpf_task_storage_get(
	    &sched_tasks, (struct task_struct *)t, 0, 0);
}

/* Keep the user stack of the current thread, which is going to sleep. */
static __always_inline void
sched_keep_ustack(
    const struct vitals_bpf_cfg *c, void *ctx, struct task_struct___sched *t)
{
	struct sched_ustack *u;
	long n;

	if (!vitals_bpf_wanted(c, bpf_get_current_pid_tgid()))
		return;
	u = bpf_task_storage_get(&sched_ustacks, (struct task_struct *)t, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (u == 0)
		return;
	n = bpf_get_stack(ctx, u->ip, sizeof(u->ip), BPF_F_USER_STACK);
	u->n = n > 0 ? (__u64)n / 8 : 0;
}

/* The thread's sched_info.run_delay: ns it waited on run queues so far. */
static __always_inline __u64
sched_run_delay(struct task_struct___sched *t)
{
	if (!bpf_core_field_exists(t->sched_info.run_delay))
		return 0;
	return t->sched_info.run_delay;
}

/*
 * The exe id of the outgoing thread if it has dropped its mm (it is
 * exiting): it still runs on it (active_mm), but once switched out it
 * has none, nor may its process, so the switch-in could not tell.
 * Else 0: the switch-in finds it through the mm.  Switched out again, it
 * runs on a borrowed mm, which tells nothing (0): the first is kept.
 */
static __always_inline __u32
sched_exiting_exe(struct task_struct___sched *prev)
{
	if (prev->mm != 0 ||
	    (((struct task_struct *)prev)->flags & VITALS_BPF_PF_KTHREAD))
		return 0;
	return vitals_bpf_task_exe((struct task_struct *)prev);
}

/*
 * The vital (index + 1, 0 = not counted) of a sleep begun in state.
 * Uninterruptible (D state, the killable form included) and not
 * TASK_NOLOAD is a wait for a resource: I/O, a page being read in, a
 * sleeping lock: blocking.  An interruptible sleep (a read of an idle
 * pipe or socket, poll, epoll, futex, wait4, nanosleep) and TASK_IDLE (a
 * kernel thread waiting for work) wait for an event: wait.
 */
static __always_inline __u64
sched_sleep_vital(const struct vitals_bpf_cfg *c, __u32 state)
{
	if ((state & SCHED_TASK_UNINTERRUPTIBLE) &&
	    !(state & SCHED_TASK_NOLOAD))
		return c->param[SCHED_P_BLOCKING];
	return c->param[SCHED_P_WAIT];
}

/*
 * The outgoing thread: still runnable (preempted, or woken before it
 * slept) waits for a CPU from now; asleep starts an off-CPU interval.
 * Either way its run_delay so far is noted, so that a wait the kernel
 * moves into it (a migration while queued) counts in the next delay.
 */
static __always_inline void
sched_out(const struct vitals_bpf_cfg *c, void *ctx,
    struct task_struct___sched *prev, __u64 preempt, __u32 state, __u64 now)
{
	struct sched_task *e;
	__u32 tid = prev->pid, exe;
	__u64 sleep;
	int runnable;

	if (tid == 0)
		return;
	/* A dead task's storage goes with it. */
	if (state & SCHED_TASK_DEAD)
		return;
	/*
	 * A pending signal leaves a sleeper runnable: __state is reset.  A
	 * runnable thread's entry serves the sched vital alone; a sleeper's,
	 * blocking or wait (its off stamp) and sched (its run_delay baseline).
	 */
	runnable = preempt || state == 0 || prev->__state == 0;
	sleep = runnable ? 0 : sched_sleep_vital(c, state);
	if ((c->param[SCHED_P_SCHED] | sleep) == 0 ||
	    (e = sched_entry(prev)) == 0)
		return;
	e->out = runnable ? now : 0;
	e->off = sleep != 0 ? now : 0;
	e->state = state;
	e->cause = runnable ? SCHED_CAUSE_PREEMPTED : SCHED_CAUSE_WOKEN;
	e->run_delay = sched_run_delay(prev);
	exe = sched_exiting_exe(prev);
	if (exe != 0 || prev->mm != 0)
		e->exe = exe;
	if (e->off != 0 && c->param[SCHED_P_USTACK] && prev->mm != 0)
		sched_keep_ustack(c, ctx, prev);
}

/* Copy the task's name over the current one vitals_bpf_count() wrote. */
static __always_inline void
sched_comm(struct vitals_bpf_rec *r, struct task_struct___sched *t)
{
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), t->comm);
}

/* User PC at which the task last entered the kernel, 0 for kernel threads. */
static __always_inline __u64
sched_user_pc(struct task_struct___sched *t)
{
	struct pt_regs *regs;

	if (t->mm == 0)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs((struct task_struct *)t);
	if (regs == 0 || (regs->cs & 3) == 0)
		return 0;
	return regs->ip;
}

/*
 * The text range of the record's user frames and, with files, the files
 * they fall in: the record is of the thread switching in, not of the
 * current one, so vitals_bpf_count() could take neither from the CPU's
 * cache, and the thread's process may be gone before user space reads
 * the record (a short program that slept once).  The lookups are bounded
 * as for any sample (vitals_bpf_ufiles), but each costs microseconds
 * here, where interrupts are off: a delay sample, taken for every new
 * process's first wait, goes without.
 */
static __always_inline void
sched_ufiles(struct vitals_bpf_rec *r, struct task_struct___sched *t, int files)
{
	struct mm_struct *mm = t->mm;
	__u32 n;

	/* Loads through BTF pointers: a fault reads as 0. */
	if (mm == 0 || r->nustack == 0)
		return;
	r->code_start = mm->start_code;
	r->code_end = mm->end_code;
	if (!files)
		return;
	n = vitals_bpf_ufiles((struct task_struct *)t, r->ustack, r->nustack,
	    &r->code_start, r->ufile);
	r->nufiles = n & 0xff;
	r->nustack = n >> 8;
}

/* The task's kernel stack, where it left the CPU, into the record. */
static __always_inline void
sched_kstack(struct vitals_bpf_rec *r, struct task_struct___sched *t)
{
	long n;

	n = bpf_get_task_stack(
	    (struct task_struct *)t, r->kstack, sizeof(r->kstack), 0);
	r->nkstack = n > 0 ? (__u32)((__u64)n / 8) : 0;
}

/*
 * Count a run-queue delay under the task's pid (stage one).  Only a
 * sampled event pays for the task's stack, where it was preempted or
 * slept (stage two).
 */
static __always_inline void
sched_count_delay(struct vitals_bpf_cfg *c, struct task_struct___sched *t,
    __u64 pt, __u32 exe, __u32 uid, __u64 delay, __u32 cause)
{
	struct vitals_bpf_rec *r;
	__u64 pc;

	r = vitals_bpf_count(c, (__u32)c->param[SCHED_P_SCHED] - 1, pt >> 32,
	    delay, pt, exe, uid);
	if (r == 0)
		return;
	pc = sched_user_pc(t);
	r->args[0] = delay;
	r->args[1] = (__u32)pt;
	r->args[2] = pc;
	r->args[3] = cause;
	r->ustack[0] = pc;
	r->nustack = pc != 0;
	sched_ufiles(r, t, 0);
	sched_comm(r, t);
	sched_kstack(r, t);
	vitals_bpf_send(r);
}

/* Blocking sites remembered per CPU (sched_memos), a power of 2. */
#define SCHED_MEMOS 256
/* Words of a sleeping thread's stack searched for the frames of a walk. */
#define SCHED_WINDOW 512
/*
 * Bytes below the stack's top within which a frame is placed from the
 * top, not from the saved stack pointer: the return into the system
 * call's entry (or into ret_from_fork), just under the user registers
 * (168 bytes) and above the random offset each system call adds to the
 * stack (randomize_kstack_offset), where every other frame lies.
 */
#define SCHED_TOP_NEAR 192
/*
 * x86-64's THREAD_SIZE without KASAN.  Where it is larger, the frames of
 * the entry are placed from the stack pointer, whose offset is random,
 * and so are not found again (a walk, as without the memo).
 */
#define SCHED_THREAD_SIZE 16384

/*
 * A blocking site a walk found, with where each of its frames (return
 * addresses) lay on the sleeping thread's stack: off[i] >= 0, bytes above
 * the saved stack pointer; < 0, bytes below the stack's top.
 */
struct sched_memo {
	__u64 key; /* sched_memo_key(); 0: empty */
	__u64 site; /* the hash of the frames, as sched_site() makes it */
	__u32 frames; /* frames asked for (site_frames) */
	__u32 n; /* frames the walk found */
	__s32 off[VITALS_BPF_STACK];
	__u64 ip[VITALS_BPF_STACK];
};

/*
 * The unwinder (ORC) is what a blocking site costs: its tables and the
 * stack are cold when a thread comes back after a millisecond or more,
 * microseconds a walk.  A thread that sleeps again where it, or another
 * thread entering the kernel through the same system call from the same
 * place, slept before has the same return addresses at the same places
 * of its stack; reading them there (a few words) tells the site.  Per
 * CPU, direct-mapped by sched_memo_key().
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sched_memo);
	__uint(max_entries, SCHED_MEMOS);
} sched_memos SEC(".maps");

/* Per CPU: the top of a sleeping thread's stack, to place a walk's frames. */
struct sched_window {
	__u64 w[SCHED_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sched_window);
	__uint(max_entries, 1);
} sched_windows SEC(".maps");

/*
 * Where a thread likely slept: its system call and the page offset of its
 * user PC (the same in every process of a program, and of a library),
 * or, for a kernel thread, the thread.  A guess: sched_memo_hit() checks.
 */
static __always_inline __u64
sched_memo_key(struct task_struct___sched *t, struct pt_regs *regs)
{
	if (t->mm == 0 || regs == 0 || (regs->cs & 3) == 0)
		return (__u64)(__u32)t->pid | (1ULL << 62);
	return (regs->orig_ax << 12 | (regs->ip & 0xfff)) ^ (1ULL << 63);
}

/* Whether the stack (saved pointer sp, top) holds m's frames where m saw them. */
static __always_inline int
sched_memo_hit(const struct sched_memo *m, __u64 sp, __u64 top)
{
	__u64 w, at;
	__s32 off;
	__u32 i;

	for (i = 0; i < VITALS_BPF_STACK; i++) {
		if (i >= m->n)
			break;
		off = m->off[i];
		at = off >= 0 ? sp + off : top + off;
		if (bpf_probe_read_kernel(&w, sizeof(w), (void *)at) != 0 ||
		    w != m->ip[i])
			return 0;
	}
	return m->n != 0;
}

/* The state of sched_memo_learn()'s search, for its bpf_loop() steps. */
struct sched_place {
	struct sched_memo *m;
	const __u64 *w; /* the stack, from sp */
	const __u64 *ip; /* the walk's frames */
	__u64 sp, top;
	__u32 n; /* frames to place */
	__u32 i; /* frames placed */
};

/* One word of the window: is it the next frame?  0 to go on, 1 to stop. */
static long
sched_place_step(__u32 j, void *data)
{
	struct sched_place *pl = data;
	__u32 i = pl->i;
	__u64 at;

	if (j >= SCHED_WINDOW || i >= VITALS_BPF_STACK || i >= pl->n)
		return 1;
	if (pl->w[j] != pl->ip[i])
		return 0;
	at = pl->sp + (__u64)j * 8;
	pl->m->ip[i] = pl->ip[i];
	pl->m->off[i] = at + SCHED_TOP_NEAR >= pl->top ? -(__s32)(pl->top - at)
						       : (__s32)(j * 8);
	pl->i = i + 1;
	return pl->i >= pl->n;
}

/*
 * Remember a walk's n frames ip (site, for frames asked) as m, with
 * where they lie on the sleeping thread's stack: the first occurrence
 * of each above the one before.  Left empty if one is not found in the
 * window.
 */
static __always_inline void
sched_memo_learn(struct sched_memo *m, __u64 key, const __u64 *ip, __u32 n,
    __u32 frames, __u64 site, __u64 sp, __u64 top)
{
	struct sched_place pl = {
		.m = m, .ip = ip, .sp = sp, .top = top, .n = n
	};
	struct sched_window *win;
	__u64 len = top - sp;
	__u32 zero = 0;

	m->key = 0;
	if (n == 0 || n > VITALS_BPF_STACK || top <= sp ||
	    (win = bpf_map_lookup_elem(&sched_windows, &zero)) == 0)
		return;
	if (len > sizeof(win->w))
		len = sizeof(win->w);
	if (len < 8 || bpf_probe_read_kernel(win->w, len, (void *)sp) != 0)
		return;
	pl.w = win->w;
	bpf_loop(len / 8, sched_place_step, &pl, 0);
	if (pl.i != n)
		return;
	m->site = site;
	m->frames = frames;
	m->n = n;
	m->key = key;
}

/*
 * The blocking site: a hash of the top kernel frames of the stack the
 * task slept with, by offset in the kernel's text (vitals_bpf_ktext).
 * Only those frames are unwound here, on every counted block that
 * sched_memos does not place; a sampled block unwinds the whole stack
 * for its record.
 */
static __always_inline __u64
sched_site(
    const struct vitals_bpf_cfg *c, struct task_struct___sched *t, __u64 frames)
{
	struct sched_ustack *k;
	struct sched_memo *m;
	struct pt_regs *regs;
	__u64 h = 0x5bd1e995ULL, size, key, sp = 0, top;
	__u32 zero = 0, slot;
	long n;
	int i;

	/* 1 to VITALS_BPF_STACK frames, in a form the verifier can bound. */
	frames = ((frames - 1) & (VITALS_BPF_STACK - 1)) + 1;
	regs = (struct pt_regs *)bpf_task_pt_regs((struct task_struct *)t);
	/* Read as a number: a void * field is memory to the verifier. */
	if (bpf_core_read(&top, sizeof(top), &t->stack) != 0)
		top = 0;
	top += SCHED_THREAD_SIZE;
	if (bpf_core_field_exists(t->thread.sp))
		sp = t->thread.sp;
	key = sched_memo_key(t, regs);
	slot = (__u32)vitals_hash_mix64(key) & (SCHED_MEMOS - 1);
	m = bpf_map_lookup_elem(&sched_memos, &slot);
	if (m != 0 && sp > top - SCHED_THREAD_SIZE && sp < top &&
	    m->key == key && m->frames == frames && sched_memo_hit(m, sp, top))
		return m->site;
	if ((k = bpf_map_lookup_elem(&sched_scratch, &zero)) == 0)
		return h;
	size = frames * 8;
	n = bpf_get_task_stack((struct task_struct *)t, k->ip, size, 0);
	for (i = 0; i < VITALS_BPF_STACK; i++) {
		if (n < (i + 1) * 8)
			break;
		h = vitals_hash_mix64(h ^ vitals_bpf_ktext(c, k->ip[i]));
	}
	h >>= 1; /* a label is never in the kernel's address range */
	if (m != 0 && sp > top - SCHED_THREAD_SIZE && sp < top)
		sched_memo_learn(
		    m, key, k->ip, (__u32)i, (__u32)frames, h, sp, top);
	return h;
}

/* The sleeping thread's user stack, kept at switch-out, or its user PC. */
static __always_inline void
sched_ustack(const struct vitals_bpf_cfg *c, struct vitals_bpf_rec *r,
    struct task_struct___sched *t)
{
	struct sched_ustack *u;
	int i;

	if (c->param[SCHED_P_USTACK] &&
	    (u = bpf_task_storage_get(
		 &sched_ustacks, (struct task_struct *)t, 0, 0)) != 0 &&
	    u->n > 0) {
		for (i = 0; i < VITALS_BPF_STACK; i++)
			r->ustack[i] = u->ip[i];
		r->nustack = (__u32)u->n;
		u->n = 0;
		return;
	}
	r->ustack[0] = sched_user_pc(t);
	r->nustack = r->ustack[0] != 0;
}

/*
 * Count time off-CPU under the site where the thread slept, in vital vi
 * (index + 1: blocking or wait).
 */
static __always_inline void
sched_count_block(struct vitals_bpf_cfg *c, __u64 vi,
    struct task_struct___sched *t, __u64 pt, __u32 exe, __u32 uid,
    __u64 blocked, __u64 waited, __u32 state)
{
	struct vitals_bpf_rec *r;

	r = vitals_bpf_count(c, (__u32)vi - 1,
	    sched_site(c, t, c->param[SCHED_P_SITE_FRAMES]), blocked, pt, exe,
	    uid);
	if (r == 0)
		return;
	r->op = state;
	r->args[0] = blocked;
	r->args[1] = waited;
	sched_comm(r, t);
	sched_kstack(r, t);
	sched_ustack(c, r, t);
	sched_ufiles(r, t, 1);
	vitals_bpf_send(r);
}

/*
 * The run-queue wait of thread t, switching in now, in ns (now on the
 * run queue's clock): since it was last queued on this CPU, plus what
 * the kernel added to its run_delay since it last left a CPU (base, its
 * run_delay then; for a new thread, 0), which is a wait on another CPU's
 * queue before a migration.  has_base is 0 for a thread with no entry,
 * whose base is not known.  Returns 1 if t waited (was queued), with the
 * wait in *wait.
 */
static __always_inline int
sched_wait(struct task_struct___sched *t, int has_base, __u64 base, __u64 out,
    __u64 now_ns, __u64 *wait)
{
	__u64 q = 0, d = 0, rd, clock;

	/*
	 * The run queue's clock, through the task's CFS run queue (set for
	 * tasks of every class): the kernel's data symbols, runqueues among
	 * them, need not be in kallsyms, where a BPF program finds them.
	 */
	if (bpf_core_field_exists(t->sched_info.last_queued) &&
	    bpf_core_field_exists(t->se.cfs_rq) &&
	    bpf_core_field_exists(t->se.cfs_rq->rq))
		q = t->sched_info.last_queued;
	if (q != 0) {
		/* Loads through BTF pointers: a fault reads as 0. */
		clock = t->se.cfs_rq->rq->clock;
		if (clock > q)
			d = clock - q;
		if (has_base && (rd = sched_run_delay(t)) > base)
			d += rd - base;
	} else if (out != 0) {
		/* Preempted while not runnable: the kernel keeps no stamp. */
		if (now_ns > out)
			d = now_ns - out;
	} else
		return 0;
	*wait = d;
	return 1;
}

/*
 * The incoming thread: count its run-queue wait and end its off-CPU
 * interval.  A thread's first switch-in (sched_info.pcount counts
 * arrivals, and this one is not counted yet) waited since its fork
 * queued it.
 */
static __always_inline void
sched_in(struct vitals_bpf_cfg *c, struct task_struct___sched *next, __u64 now)
{
	struct sched_task *e;
	__u64 off = 0, out = 0, base = 0, wait = 0, delay = 0, blocked = 0, pt;
	__u64 vi;
	__u32 tid = next->pid, state = 0, cause, exe, uid, kept = 0;
	int queued = 0, has_base = 1;

	if (tid == 0)
		return;
	if ((e = sched_lookup(next)) != 0) {
		off = e->off;
		out = e->out;
		base = e->run_delay;
		state = e->state;
		cause = e->cause;
		kept = e->exe;
		e->off = 0;
		e->out = 0;
	} else if (bpf_core_field_exists(next->sched_info.pcount) &&
	    next->sched_info.pcount == 0)
		cause = SCHED_CAUSE_NEW; /* its run_delay is all this wait */
	else {
		cause = SCHED_CAUSE_WOKEN;
		has_base = 0;
	}
	/* The wait is counted as sched, and told in a blocking sample. */
	if ((c->param[SCHED_P_SCHED] != 0 || off != 0) &&
	    (queued = sched_wait(next, has_base, base, out, now, &wait)) &&
	    c->param[SCHED_P_SCHED] != 0 && wait >= c->param[SCHED_P_MIN_DELAY])
		delay = wait > 0 ? wait : 1; /* counted, if at min_delay 0 */
	if (off != 0 && now > off && now - off >= c->param[SCHED_P_MIN_BLOCK])
		blocked = now - off;
	if ((delay | blocked) == 0 ||
	    !vitals_bpf_task_wanted(c, (struct task_struct *)next))
		return;
	pt = (__u64)(__u32)next->tgid << 32 | tid;
	if ((exe = vitals_bpf_task_exe((struct task_struct *)next)) == 0)
		exe = kept;
	uid = next->cred->uid.val;
	if (blocked != 0 && (vi = sched_sleep_vital(c, state)) != 0)
		sched_count_block(c, vi, next, pt, exe, uid, blocked,
		    queued ? wait : 0, state);
	if (delay != 0)
		sched_count_delay(c, next, pt, exe, uid, delay, cause);
}

SEC("tp_btf/sched_switch")
int
vitals_sched_switch(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	__u64 now;

	if (c == 0)
		return 0;
	now = bpf_ktime_get_ns();
	sched_out(c, ctx, (struct task_struct___sched *)ctx[1], ctx[0] & 1,
	    (__u32)ctx[3], now);
	sched_in(c, (struct task_struct___sched *)ctx[2], now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
