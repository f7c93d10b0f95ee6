/* SPDX-License-Identifier: MIT */
/*
 * lock vital, in the kernel: time a thread waits for a contended kernel
 * lock.  lock:contention_begin stamps the wait (and, for mutexes and
 * rw-semaphores, notes the lock's owner); lock:contention_end, when the
 * wait lasted at least min_wait, counts it under lock ^ waiting site,
 * weighted by nanoseconds waited.  The site is a hash of the top kernel
 * frames at the end, which is called from the same function as the begin:
 * walking the stack there spares the waits shorter than min_wait, and a
 * site walked before is read off the stack where the walk found it
 * (lock_memos) instead.
 */
#include <vitals/probe.bpf.h>

/* Probe parameters (set by lock.c). */
#define LOCK_P_MIN_WAIT 0 /* ns; shorter waits are not counted */
#define LOCK_P_SPIN 1 /* 1: also spinlocks and rwlocks */
#define LOCK_P_ITER_LO 2 /* __traceiter_contention_end: [lo, hi), or 0s */
#define LOCK_P_ITER_HI 3

/* contention_begin flags (LCB_F_* of the kernel). */
#define LOCK_F_SPIN 0x01
#define LOCK_F_READ 0x02
#define LOCK_F_WRITE 0x04
#define LOCK_F_RT 0x08
#define LOCK_F_PERCPU 0x10
#define LOCK_F_MUTEX 0x20

/* Kernel frames hashed into the waiting site. */
#define LOCK_SITE_FRAMES 4

/* The low bits of a mutex or rw-semaphore owner word are flags. */
#define LOCK_OWNER_FLAGS 0x07UL

struct lock_atomic {
	long counter;
};

struct mutex {
	struct lock_atomic owner;
} __attribute__((preserve_access_index));

struct rw_semaphore {
	struct lock_atomic owner;
} __attribute__((preserve_access_index));

/* The user registers a task entered the kernel with (bpf_task_pt_regs). */
struct pt_regs {
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
} __attribute__((preserve_access_index));

struct task_struct___lock {
	void *stack;
} __attribute__((preserve_access_index));

struct lock_key {
	__u64 lock;
	__u32 tid;
	__u32 pad;
};

struct lock_wait {
	__u64 ts; /* contention_begin, ns */
	__u32 flags; /* LOCK_F_* */
	__u32 owner; /* owner's thread id when begun, 0 if unknown */
};

/* LRU: a wait whose end was missed must not hold its entry for ever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct lock_key);
	__type(value, struct lock_wait);
	__uint(max_entries, 16384);
} lock_waits SEC(".maps");

/* Waiting sites remembered per CPU (lock_memos), a power of 2. */
#define LOCK_MEMOS 128
/* Words above the program's arguments searched for a walk's frames. */
#define LOCK_WINDOW 256
/* x86-64's THREAD_SIZE without KASAN: where the task's stack ends. */
#define LOCK_THREAD_SIZE 16384

/*
 * A waiting site a walk found, with where each of its frames (return
 * addresses) lay on the stack: bytes above the program's arguments.
 */
struct lock_memo {
	__u64 key; /* lock_memo_key(); 0: empty */
	__u64 site; /* the hash of the frames, as lock_site() makes it */
	__s32 off[LOCK_SITE_FRAMES];
	__u64 ip[LOCK_SITE_FRAMES];
};

/*
 * The unwinder is what a waiting site costs: microseconds a walk, spent
 * just after the lock is taken, inside its critical section.  A thread
 * that waits again where it, or another thread of the same path, waited
 * before has the same return addresses at the same distances above the
 * arguments bpf_trace_run2() passes the program (ctx, on the kernel
 * stack); reading them there (a few words) tells the site.  Per CPU,
 * direct-mapped by lock_memo_key().
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct lock_memo);
	__uint(max_entries, LOCK_MEMOS);
} lock_memos SEC(".maps");

/* Per CPU: where the stack is read, and the stack read to place a walk. */
struct lock_window {
	__u64 base; /* ctx as a number: a store and a load make it one */
	__s32 off0; /* where the site's first frame lay; 0: not known */
	__u32 pad;
	__u64 w[LOCK_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct lock_window);
	__uint(max_entries, 1);
} lock_windows SEC(".maps");

/*
 * Where a thread likely waits: the site's first frame (in which slow
 * path the wait was, and where), with the system call the thread is in
 * or, for a kernel thread, the thread.  A guess: lock_memo_hit() checks.
 */
static __always_inline __u64
lock_memo_key(struct task_struct *t, __u64 ip0)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 k;

	if (t->mm == 0 || regs == 0 || (regs->cs & 3) == 0)
		k = (__u64)(__u32)t->pid | (1ULL << 62);
	else
		k = regs->orig_ax ^ (1ULL << 63);
	return vitals_hash_mix64(k ^ ip0) | 1;
}

/* Whether the stack above base holds m's frames where m saw them. */
static __always_inline int
lock_memo_hit(const struct lock_memo *m, __u64 base)
{
	__u64 w;
	int i;

	for (i = 1; i < LOCK_SITE_FRAMES; i++)
		if (bpf_probe_read_kernel(&w, sizeof(w),
			(void *)(base + (__u64)(__s64)m->off[i])) != 0 ||
		    w != m->ip[i])
			return 0;
	return 1;
}

/*
 * Remember the frames ip (site) of task t, with where they lie above
 * base (below top): the first occurrence of each above the one before.
 * Nothing is kept if one is not found in the window.
 */
static __always_inline void
lock_memo_learn(struct lock_window *win, struct task_struct *t, const __u64 *ip,
    __u64 site, __u64 base, __u64 top)
{
	__s32 off[LOCK_SITE_FRAMES];
	__u64 len = top - base, key;
	struct lock_memo *m;
	__u32 j = 0, slot;
	int i;

	if (len > sizeof(win->w))
		len = sizeof(win->w);
	if (len < 8 || bpf_probe_read_kernel(win->w, len, (void *)base) != 0)
		return;
	for (i = 0; i < LOCK_SITE_FRAMES; i++) {
		if (ip[i] == 0)
			return;
		for (; j < LOCK_WINDOW && j < len / 8; j++)
			if (win->w[j] == ip[i])
				break;
		if (j >= LOCK_WINDOW || j >= len / 8)
			return;
		off[i] = (__s32)(j * 8);
		j++;
	}
	key = lock_memo_key(t, ip[0]);
	slot = (__u32)key & (LOCK_MEMOS - 1);
	if ((m = bpf_map_lookup_elem(&lock_memos, &slot)) == 0)
		return;
	for (i = 0; i < LOCK_SITE_FRAMES; i++) {
		m->off[i] = off[i];
		m->ip[i] = ip[i];
	}
	m->site = site;
	m->key = key;
	win->off0 = off[0];
}

/*
 * A site lock_memos places: the memo's site, or 0.  Not on t's stack
 * (an interrupt's), or on a first wait, 0: walk.
 */
static __always_inline __u64
lock_memo_site(struct lock_window *win, struct task_struct *t, __u64 base)
{
	struct lock_memo *m;
	__u64 ip0, key;
	__u32 slot;

	if (win->off0 == 0 ||
	    bpf_probe_read_kernel(&ip0, sizeof(ip0),
		(void *)(base + (__u64)(__s64)win->off0)) != 0)
		return 0;
	key = lock_memo_key(t, ip0);
	slot = (__u32)key & (LOCK_MEMOS - 1);
	m = bpf_map_lookup_elem(&lock_memos, &slot);
	if (m == 0 || m->key != key || m->ip[0] != ip0 ||
	    !lock_memo_hit(m, base))
		return 0;
	return m->site;
}

/*
 * A hash of the top kernel frames: where the thread waits.  The first
 * frame is __traceiter_contention_end while another tracer shares the
 * tracepoint; it is left out so the label does not depend on that.
 * Frames by offset in the kernel's text (vitals_bpf_ktext): no KASLR.
 * A site lock_memos places is not walked again.
 */
static __always_inline __u64
lock_site(const struct vitals_bpf_cfg *c, void *ctx, struct task_struct *t)
{
	__u64 f[LOCK_SITE_FRAMES + 1] = { 0, 0, 0, 0, 0 };
	__u64 h = 0, base = 0, bottom = 0;
	struct lock_window *win;
	__u32 zero = 0;
	int i, first;

	win = bpf_map_lookup_elem(&lock_windows, &zero);
	if (win != 0) {
		*(volatile __u64 *)&win->base = (__u64)(long)ctx;
		base = *(volatile __u64 *)&win->base;
		if (bpf_core_read(&bottom, sizeof(bottom),
			&((struct task_struct___lock *)t)->stack) != 0 ||
		    base <= bottom || base >= bottom + LOCK_THREAD_SIZE)
			win = 0;
		else if ((h = lock_memo_site(win, t, base)) != 0)
			return h;
	}
	bpf_get_stack(ctx, f, sizeof(f), VITALS_BPF_KSKIP);
	first =
	    f[0] >= c->param[LOCK_P_ITER_LO] && f[0] < c->param[LOCK_P_ITER_HI];
	for (i = 0; i < LOCK_SITE_FRAMES; i++)
		h = vitals_hash_mix64(
		    h ^ vitals_bpf_ktext(c, first ? f[i + 1] : f[i]));
	h >>= 1; /* a label is never in the kernel's address range */
	if (win != 0)
		lock_memo_learn(win, t, first ? f + 1 : f, h, base,
		    bottom + LOCK_THREAD_SIZE);
	return h;
}

/*
 * The thread owning a sleeping lock: a mutex's or write-held
 * rw-semaphore's owner, or the last reader that took a read-held one (a
 * hint: other readers may hold it too, or it may have left).
 */
static __always_inline __u32
lock_owner(__u64 lock, __u32 flags)
{
	struct task_struct *t;
	long owner = 0;
	int pid = 0;

	if (flags & LOCK_F_MUTEX)
		bpf_probe_read_kernel(
		    &owner, sizeof(owner), &((struct mutex *)lock)->owner);
	else if (flags & (LOCK_F_SPIN | LOCK_F_PERCPU | LOCK_F_RT))
		return 0;
	else if (flags & (LOCK_F_READ | LOCK_F_WRITE))
		bpf_probe_read_kernel(&owner, sizeof(owner),
		    &((struct rw_semaphore *)lock)->owner);
	if (owner == 0)
		return 0;
	t = (struct task_struct *)(owner & ~LOCK_OWNER_FLAGS);
	bpf_probe_read_kernel(&pid, sizeof(pid), &t->pid);
	return (__u32)pid;
}

SEC("tp_btf/contention_begin")
int
vitals_lock_begin(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct lock_wait w = {}, *old;
	struct lock_key k = { .lock = ctx[0] };
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 flags = (__u32)ctx[1];

	if (c == 0 ||
	    (!c->param[LOCK_P_SPIN] &&
		(flags & (LOCK_F_SPIN | LOCK_F_MUTEX)) == LOCK_F_SPIN))
		return 0;
	if (!vitals_bpf_wanted(c, pt))
		return 0;
	k.tid = (__u32)pt;
	/* A mutex that stops spinning begins again: keep the first stamp. */
	old = bpf_map_lookup_elem(&lock_waits, &k);
	if (old != 0 && old->flags == (LOCK_F_MUTEX | LOCK_F_SPIN) &&
	    flags == LOCK_F_MUTEX) {
		old->flags = flags;
		return 0;
	}
	w.ts = bpf_ktime_get_ns();
	w.flags = flags;
	w.owner = lock_owner(k.lock, flags);
	bpf_map_update_elem(&lock_waits, &k, &w, BPF_ANY);
	return 0;
}

SEC("tp_btf/contention_end")
int
vitals_lock_end(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct lock_key k = { .lock = ctx[0] };
	struct vitals_bpf_rec *r;
	struct lock_wait *w, v;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task), now = bpf_ktime_get_ns(), lock;

	if (c == 0)
		return 0;
	k.tid = (__u32)pt;
	if ((w = bpf_map_lookup_elem(&lock_waits, &k)) == 0)
		return 0;
	v = *w;
	bpf_map_delete_elem(&lock_waits, &k);
	if (now < v.ts || now - v.ts < c->param[LOCK_P_MIN_WAIT])
		return 0;
	/* The lock keyed: its address is the kernel's secret. */
	lock = vitals_bpf_khide(c, k.lock);
	r = vitals_bpf_count(c, 0, lock ^ lock_site(c, ctx, task), now - v.ts,
	    pt, vitals_bpf_current_exe(pt >> 32), vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	r->args[0] = lock;
	r->args[1] = v.flags;
	r->args[2] = v.owner;
	r->args[3] = (__u64)(__s64)(int)ctx[1];
	vitals_bpf_submit_tp(ctx, r, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
