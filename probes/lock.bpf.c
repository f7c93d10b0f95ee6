/* SPDX-License-Identifier: MIT */
/*
 * lock vital, in the kernel: time a thread waits for a contended kernel
 * lock.  lock:contention_begin stamps the wait (and, for mutexes and
 * rw-semaphores, notes the lock's owner); lock:contention_end, when the
 * wait lasted at least min_wait, counts it under lock ^ waiting site,
 * weighted by nanoseconds waited.  The site is a hash of the top kernel
 * frames at the end, which is called from the same function as the begin:
 * walking the stack there spares the waits shorter than min_wait.
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

/*
 * A hash of the top kernel frames: where the thread waits.  The first
 * frame is __traceiter_contention_end while another tracer shares the
 * tracepoint; it is left out so the label does not depend on that.
 * Frames by offset in the kernel's text (vitals_bpf_ktext): no KASLR.
 */
static __always_inline __u64
lock_site(const struct vitals_bpf_cfg *c, void *ctx)
{
	__u64 f[LOCK_SITE_FRAMES + 1] = { 0, 0, 0, 0, 0 };
	__u64 h = 0;
	int i, first;

	bpf_get_stack(ctx, f, sizeof(f), VITALS_BPF_KSKIP);
	first =
	    f[0] >= c->param[LOCK_P_ITER_LO] && f[0] < c->param[LOCK_P_ITER_HI];
	for (i = 0; i < LOCK_SITE_FRAMES; i++)
		h = vitals_hash_mix64(
		    h ^ vitals_bpf_ktext(c, first ? f[i + 1] : f[i]));
	return h >> 1; /* a label is never in the kernel's address range */
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
	r = vitals_bpf_count(c, 0, lock ^ lock_site(c, ctx), now - v.ts, pt,
	    vitals_bpf_current_exe(pt >> 32), vitals_bpf_uid(task));
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
