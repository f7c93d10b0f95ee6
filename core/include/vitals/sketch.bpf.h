/* SPDX-License-Identifier: MIT */
/*
 * The in-kernel half of a vitals sketch: the engine under the probe API of
 * <vitals/probe.bpf.h>, which includes it (probes include that, and name
 * nothing of this one's vitals__* internals).  The HCA lives in an
 * mmap'able array map that user space reads at each epoch boundary; per
 * CPU, the last label of each vital, its hash and its weight not yet added
 * to the counter, and the current task's ids; first-sighting bits; and
 * only events whose counter crosses a power of t (or whose label is new)
 * cross to user space through the ring buffer.  The hash is user space's
 * (<vitals/hash.h>) and the sampling test core/engine/sketch.c's, so
 * kernel and user sketches add up.
 */
#ifndef VITALS_SKETCH_BPF_H
#define VITALS_SKETCH_BPF_H

#include <bpf/bpf_core_read.h>
#include <vitals/bpf_shared.h>
#include <vitals/hash.h>
#include <vitals/task.bpf.h>

/*
 * One mmap'able array of u64 counters: each vital's HCA of each half in a
 * region user space places (cfg's hca_off); user space gives the object a
 * map of its own or one every probe's object shares.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* replaced by user space before load */
} vitals_hca SEC(".maps");

/* First-sighting bits, in the HCA's regions; cleared with the HCA. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* replaced by user space before load */
} vitals_seen SEC(".maps");

/* Parameters user space writes while the programs run (one entry). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vitals_bpf_cfg);
	__uint(max_entries, 1);
} vitals_cfg SEC(".maps");

/* Sampled events, to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16); /* resized by user space before load */
} vitals_rb SEC(".maps");

/*
 * Per CPU, [epoch][vital]: the sum of (weight - 1) over the events counted,
 * so that user space gets the event count as the HCA's sum minus this
 * without a per-event add for unit weights.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2 * VITALS_BPF_MAX_VITALS);
} vitals_events SEC(".maps");

/*
 * The key of one-entry maps, read-only data: a lookup with it loads the
 * key rather than storing one on the stack first.  Stores are what a
 * program pays most for where it runs after a burst of them (see
 * vitals__count_last), and every one of the maps below has key 0.
 */
static const volatile __u32 vitals__zero = 0;

/*
 * A check over the last-label fields: another program of the object can
 * run nested on the same CPU (from an interrupt) in the middle of an
 * update, and a torn entry must not pair one label with another's hash.
 */
static __always_inline __u64
vitals__last_chk(__u64 label, __u64 h, __u32 exe_id, __u32 uid)
{
	/* The constant keeps a zeroed entry from matching label 0, exe 0. */
	return label ^ h ^ ((__u64)exe_id << 32 | uid) ^ 0x5bd1e9955bd1e995ULL;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct vitals_bpf_exe_slot);
	__uint(max_entries, 1);
} vitals_exe_cache SEC(".maps");

static __always_inline __u32
vitals__log2(__u64 x)
{
	__u32 r = 0;

	if (x >> 32) {
		x >>= 32;
		r += 32;
	}
	if (x >> 16) {
		x >>= 16;
		r += 16;
	}
	if (x >> 8) {
		x >>= 8;
		r += 8;
	}
	if (x >> 4) {
		x >>= 4;
		r += 4;
	}
	if (x >> 2) {
		x >>= 2;
		r += 2;
	}
	if (x >> 1)
		r += 1;
	return r;
}

/*
 * Whether a counter going from old to new (> old) took a higher top bit:
 * only then does a power of two, so a power of t, lie in (old, new].
 * Most events keep it, and callers test this before they load the floor
 * and t (cfg's second line).
 */
static __always_inline int
vitals__top_rose(__u64 old, __u64 new)
{
	return (old ^ new) > old;
}

/* sketch_crossed() of core/engine/sketch.c; shift >= 1. */
static __always_inline int
vitals__crossed(__u64 old, __u64 new, __u32 shift, __u64 floor)
{
	__u32 lnew, top;

	if (new <= old || new < floor || shift == 0 ||
	    !vitals__top_rose(old, new))
		return 0;
	lnew = vitals__log2(new) / shift;
	if (old != 0 && vitals__log2(old) / shift == lnew)
		return 0;
	top = lnew * shift;
	return top >= 64 || (1ULL << top) >= floor;
}

/*
 * The exe id of a task exit left with no mm, by pid, from its first event
 * then (on its own mm, which active_mm still is) for its events after it
 * ran on a borrowed one (vitals__task_mm): exit_mmap() frees most of a
 * process's pages, and a busy CPU switches away in it.  start_time tells
 * a pid reused.  Entries live from a task's exit to its end, so a few
 * hundred cover any burst of exits; the least recently used go first.
 */
struct vitals__exit_exe {
	__u64 start_time;
	__u32 exe_id;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct vitals__exit_exe);
	__uint(max_entries, 1024);
} vitals_exit_exes SEC(".maps");

/*
 * The exe cache slot's key for task t: its mm; for a user task exit left
 * without one, 1, as the mm it runs on changes under it (exit_mmap() then
 * frees on whichever it borrowed) while its exe does not; 0 for kernel
 * threads.
 */
static __always_inline __u64
vitals__task_key(struct task_struct *t)
{
	struct mm_struct *mm = t->mm;

	if (mm != 0 || (t->flags & VITALS_BPF_PF_KTHREAD))
		return (__u64)mm;
	return 1;
}

/*
 * Fill a CPU's exe cache slot for a process and return it: out of line,
 * as it is rare, and returned so the caller keeps nothing live across the
 * call (a value kept is a spill, and a spill is a store).  An exiting
 * task that runs on a borrowed mm from its first event, or on its own
 * after exit's mmput() released the exe, takes its exe from the slot it
 * had on this CPU before exit, if it is still there and of the same exec.
 */
static __attribute__((noinline)) struct vitals_bpf_exe_slot *
vitals__exe_fill(
    struct vitals_bpf_exe_slot *c, struct task_struct *t, __u32 tgid)
{
	struct vitals__exit_exe x = {}, *k;
	struct mm_struct *mm = vitals__task_mm(t);
	__u64 exec_id = t->self_exec_id;
	__u32 pid = (__u32)t->pid, was = 0;

	if (c->tgid == tgid && c->exec_id == exec_id)
		was = c->exe_id;
	c->task = 0; /* vitals__me() must fill it again */
	c->tgid = tgid;
	c->exec_id = exec_id;
	c->mm = vitals__task_key(t);
	c->exe_id = 0;
	c->stack_top = c->code_start = c->code_end = c->mmap_base = 0;
	/* Loads through BTF pointers: a fault reads as 0. */
	if (mm != 0) {
		c->stack_top = mm->start_stack;
		c->code_start = mm->start_code;
		c->code_end = mm->end_code;
		c->mmap_base = mm->mmap_base;
		c->exe_id = vitals__mm_exe(mm);
	}
	if (c->mm != 1)
		return c;
	if (c->exe_id != 0) {
		x.start_time = t->start_time;
		x.exe_id = c->exe_id;
		bpf_map_update_elem(&vitals_exit_exes, &pid, &x, BPF_ANY);
		return c;
	}
	/* No mm, or its exe already released (exit's mmput()). */
	k = bpf_map_lookup_elem(&vitals_exit_exes, &pid);
	c->exe_id = k != 0 && k->start_time == t->start_time ? k->exe_id : was;
	return c;
}

/* Slot c, filled again for task t of process tgid unless it holds them. */
static __always_inline struct vitals_bpf_exe_slot *
vitals__exe_of(struct vitals_bpf_exe_slot *c, struct task_struct *t, __u32 tgid)
{
	if (c->tgid != tgid || tgid == 0 || c->mm != vitals__task_key(t))
		return vitals__exe_fill(c, t, tgid);
	return c;
}

/*
 * The current process's exe id and stack top, cached per CPU by tgid so
 * most events skip the pointer walk; t is vitals_bpf_task().  NULL only
 * if the map lookup fails.
 */
static __always_inline struct vitals_bpf_exe_slot *
vitals__current_task(struct task_struct *t, __u32 tgid)
{
	struct vitals_bpf_exe_slot *c;

	c = bpf_map_lookup_elem(&vitals_exe_cache, (const void *)&vitals__zero);
	if (c == 0)
		return 0;
	return vitals__exe_of(c, t, tgid);
}

/*
 * vitals__me()'s fill: the process's fields as vitals__current_task()
 * finds them, then the task and its credentials as the key.  A kernel
 * thread is not keyed (all share one cred, and a freed one's task may be
 * the next one's): its events fill the slot each time.
 */
static __attribute__((noinline)) struct vitals_bpf_exe_slot *
vitals__me_fill(struct vitals_bpf_exe_slot *c, struct task_struct *t)
{
	const struct cred *cr = t->cred;

	c = vitals__exe_of(c, t, (__u32)t->tgid);
	/* Loads through BTF pointers: a fault reads as 0. */
	c->uid = cr != 0 ? cr->uid.val : 0;
	c->cred = (__u64)cr;
	c->task = (t->flags & VITALS_BPF_PF_KTHREAD) ? 0 : (__u64)t;
	return c;
}

/*
 * The current task t's exe cache slot (vitals_bpf_task()), with its tgid
 * and uid, for programs that run on most events: checked by the task and
 * its credentials alone, two loads of which the first is of a per-CPU
 * variable, where vitals__current_task() reads the task's tgid and mm
 * (two more of its cache lines) and vitals_bpf_uid() its cred (one
 * more).  A task keeps its tgid, exe and uid while it keeps its cred
 * pointer: an exec installs new credentials (after it replaced the mm, so
 * what it frees of the old one counts for the old exe), as does a change
 * of uid, and a new thread in a freed task's place that shares its cred
 * is of the same process.  NULL only if the map lookup fails.
 */
static __always_inline struct vitals_bpf_exe_slot *
vitals__me(struct task_struct *t)
{
	struct vitals_bpf_exe_slot *c;

	c = bpf_map_lookup_elem(&vitals_exe_cache, (const void *)&vitals__zero);
	if (c == 0)
		return 0;
	if (c->task != (__u64)t || c->cred != (__u64)t->cred)
		return vitals__me_fill(c, t);
	return c;
}

/*
 * Whether the current task's comm starts with the configured one.  Out of
 * line, as the other cold paths: a program's time on a busy machine is
 * mostly the cache lines it touches, its code's among them.
 */
static __attribute__((noinline)) int
vitals__comm_wanted(const struct vitals_bpf_cfg *c)
{
	char comm[VITALS_BPF_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < VITALS_BPF_COMM_LEN; i++) {
		if (c->comm[i] == '\0')
			break;
		if (comm[i] != c->comm[i])
			return 0;
	}
	return 1;
}

/*
 * Whether the current task, of process tgid, passes the configured
 * filters (process, cgroup, comm) and is not vitalsd itself.
 */
static __always_inline int
vitals__wanted_tgid(const struct vitals_bpf_cfg *c, __u32 tgid)
{
	if (tgid == c->self_tgid)
		return 0;
	if (c->tgid != 0 && tgid != c->tgid)
		return 0;
	if (c->cgroup != 0 && bpf_get_current_cgroup_id() != c->cgroup)
		return 0;
	return c->comm[0] == '\0' || vitals__comm_wanted(c);
}

/*
 * Where vital's region of the maps starts in a half, and its HCA's size
 * and first-sighting bits there (hca_log: see struct vitals_bpf_cfg).
 * All of cfg's first line, which every event reads anyway.
 */
static __always_inline __u32
vitals__base(const struct vitals_bpf_cfg *c, __u32 half, __u32 vital)
{
	return (__u32)c->hca_off[half & 1][vital & (VITALS_BPF_MAX_VITALS - 1)]
	    << 10;
}

static __always_inline __u32
vitals__geo(const struct vitals_bpf_cfg *c, __u32 half, __u32 vital)
{
	return c->hca_log[half & 1][vital & (VITALS_BPF_MAX_VITALS - 1)];
}

/* The HCA slot of hash h for the size geo (vitals__geo()) gives. */
static __always_inline __u32
vitals__slot(__u32 geo, __u64 h)
{
	return (__u32)h & ((32U << (geo & 15)) - 1);
}

/*
 * Test-and-set the label's two first-sighting bits; 1 if either was clear.
 * The bits come from the label hash's high halves (the HCA slot uses its
 * low bits), which saves a third mix on every event.  Both bits lie in
 * one 64-byte line of the map (a blocked Bloom filter): a label new to
 * this CPU costs one cold line, not two.  The map's values are page
 * aligned (it is mmap'able) and a vital's bits start on a line, since
 * regions are whole 1024s of words; base is vitals__base(), geo
 * vitals__geo() (2^(16 + its high nibble) bits).
 */
static __always_inline int
vitals__first(__u32 base, __u32 geo, __u64 h)
{
	__u64 b1, m1, m2, *w1, *w2;
	__u32 k1, k2;
	int fresh = 0;

	b1 = h >> (48 - (geo >> 4));
	m1 = 1ULL << (b1 & 63);
	m2 = 1ULL << ((h >> 32) & 63);
	k1 = base + (__u32)(b1 >> 6);
	k2 = (k1 & ~7U) | (__u32)((h >> 38) & 7);
	w1 = bpf_map_lookup_elem(&vitals_seen, &k1);
	w2 = bpf_map_lookup_elem(&vitals_seen, &k2);
	if (w1 == 0 || w2 == 0)
		return 0;
	if (!(*w1 & m1)) {
		__sync_fetch_and_or(w1, m1);
		fresh = 1;
	}
	if (!(*w2 & m2)) {
		__sync_fetch_and_or(w2, m2);
		fresh = 1;
	}
	return fresh;
}

/*
 * Whether the exe cache slot c is the current process's, tgid: the text
 * range it holds is then the current mm's (a record about another task,
 * a disk completion's submitter, must not take it).  For samples only.
 */
static __always_inline int
vitals__current_text(const struct vitals_bpf_exe_slot *c, __u32 tgid)
{
	struct task_struct *t = vitals_bpf_task();

	return (__u32)t->tgid == tgid && c->mm == vitals__task_key(t);
}

/*
 * Whether weight add, pending for last's label on this CPU, would leave
 * its counter (as this CPU last saw it) under the same top bit, so below
 * any power of t not yet crossed: then it may stay pending.
 */
static __always_inline int
vitals__pend_fits(const struct vitals_bpf_last *last, __u64 add)
{
	return !vitals__top_rose(last->base, last->base + add);
}

/*
 * Whether last's entry, of the label at hand, is live in epoch ep (a cfg
 * epoch, not the half) with p its pending weight there: its bits were
 * set in ep, or it was counted in ep with them untested (under the floor,
 * or the store full), and its pending weight is of ep.  See
 * vitals__count_with().
 */
static __always_inline int
vitals__last_live(const struct vitals_bpf_last *last,
    const struct vitals_bpf_pend *p, __u32 ep)
{
	return (last->epoch == ep || last->below == ep) && p->epoch == ep;
}

/*
 * Add a CPU's pending weight of a label counted before (another now
 * takes its place in last, or the epoch changed) to its counter, if it
 * is of this epoch, and start the pending weight afresh.  No
 * sample is taken for it: it crossed no power of t as this CPU saw the
 * counter, and the event at hand is another label's.
 */
static __always_inline void
vitals__pend_flush(const struct vitals_bpf_cfg *c, struct vitals_bpf_pend *p,
    __u32 vital, __u32 epoch)
{
	__u32 idx;
	__u64 *cnt;

	/* One of an epoch before: user space took it at that boundary. */
	if (p->epoch == epoch && p->weight != 0) {
		idx = vitals__base(c, epoch & 1, vital) +
		    vitals__slot(vitals__geo(c, epoch & 1, vital), p->slot);
		if ((cnt = bpf_map_lookup_elem(&vitals_hca, &idx)) != 0)
			__sync_fetch_and_add(cnt, p->weight);
	}
	p->weight = 0;
}

/*
 * The pid_tgid to pass vitals_bpf_count() for the current task's, read
 * only if the event is sampled: the task's pid and tgid are a cache line
 * of their own, and most events are only counted.
 */
#define VITALS_BPF_PT_CURRENT (~0ULL)

/*
 * vitals_bpf_count() and vitals_bpf_count_relaxed(): relaxed adds to the
 * counter with a plain load and store instead of an atomic fetch-add.
 */
static __always_inline struct vitals_bpf_rec *
vitals__count_with(struct vitals_bpf_cfg *c, __u32 vital, __u64 label,
    __u64 weight, __u64 pid_tgid, __u32 exe_id, __u32 uid, int relaxed)
{
	struct vitals_bpf_exe_slot *cpu;
	struct vitals_bpf_last *last = 0;
	struct vitals_bpf_pend *p = 0;
	struct vitals_bpf_rec *r;
	/* h set: clang keeps it across the flush's call on every path. */
	__u64 h = 0, old, new, add = weight, *cnt, *ev;
	__u32 slot, idx, epoch, ep;
	int same, known, bits, fresh = 0;

	if (vital >= VITALS_BPF_MAX_VITALS || vital >= c->nvitals)
		return 0;
	/*
	 * Read once: a flip during the program must not make it take the
	 * half of one epoch and the pending weight of the next (it would
	 * clear the pending weight user space is about to read).
	 */
	ep = *(volatile __u32 *)&c->epoch;
	epoch = ep & 1;
	/* Folded away for a constant weight of 1, skipped for weight 1 at run time. */
	if (weight != 1) {
		idx = epoch * VITALS_BPF_MAX_VITALS + vital;
		ev = bpf_map_lookup_elem(&vitals_events, &idx);
		if (ev != 0)
			*ev += weight - 1;
	}
	if ((cpu = bpf_map_lookup_elem(
		 &vitals_exe_cache, (const void *)&vitals__zero)) != 0) {
		/* Or clang computes p before the test, which the verifier refuses. */
		asm volatile("" : "+r"(cpu));
		last = &cpu->last[vital & (VITALS_BPF_MAX_VITALS - 1)];
		p = &last->pend[epoch];
	}
	same = last != 0 && last->label == label && last->exe == exe_id &&
	    last->uid == uid;
	if (same) {
		h = last->h;
		same = last->chk == vitals__last_chk(label, h, exe_id, uid);
	}
	/*
	 * The same label counted last on this CPU in the same epoch has its
	 * bits set already, and its weight since this CPU last added to the
	 * counter is pending: it adds to the pending weight, and only when
	 * the sum would take the counter (as this CPU last saw it) to a
	 * higher top bit, so maybe across a power of t, does it add the sum
	 * to the counter and test for a sample.  cfg's epoch is a counter,
	 * not the half, so a CPU idle across two boundaries does not trust
	 * bits since cleared.  So does a label counted in this epoch under
	 * its floor or with the sample store full, whose bits are tested
	 * when it is first added to the counter past them: without that, each
	 * of its events would take the whole path (after the store filled,
	 * every label new since).
	 */
	bits = same && last->epoch == ep;
	known = same && vitals__last_live(last, p, ep);
	if (known) {
		add = p->weight + weight;
		if (vitals__pend_fits(last, add)) {
			p->weight = add;
			return 0;
		}
		p->weight = 0;
	} else if (p != 0) {
		vitals__pend_flush(c, p, vital, ep);
	}
	if (!same) {
		h = vitals_hash_label(label, exe_id, uid);
		if (last != 0) {
			last->label = label;
			last->h = h;
			last->exe = exe_id;
			last->uid = uid;
			last->epoch = ~0U; /* bits not known set */
			last->below = ~0U;
			last->chk = vitals__last_chk(label, h, exe_id, uid);
		}
	}
	slot = vitals__slot(vitals__geo(c, epoch, vital), h);
	idx = vitals__base(c, epoch, vital) + slot;
	cnt = bpf_map_lookup_elem(&vitals_hca, &idx);
	if (cnt == 0)
		return 0;
	if (relaxed) {
		old = *cnt;
		*cnt = old + add;
	} else
		old = __sync_fetch_and_add(cnt, add);
	new = old + add;
	if (last != 0) {
		last->base = new;
		p->slot = slot;
		p->epoch = ep;
	}
	if (known && !vitals__top_rose(old, new))
		return 0;
	if (new < c->floor[vital]) {
		if (last != 0)
			last->below = ep;
		return 0;
	}
	/*
	 * A vital whose sample store spent its share (the disk budget's)
	 * keeps no more first sightings: do not test or send them.  It still
	 * keeps crossings of a power of t, which are rare by design and carry
	 * the weight (a leak that starts once the share is spent), so those
	 * are still tested and sent, as not fresh.
	 */
	if ((c->full >> vital) & 1) {
		if (last != 0)
			last->below = ep;
	} else if (!bits) {
		/* Loaded again: kept across the calls, they would be spilled. */
		fresh = vitals__first(vitals__base(c, epoch, vital),
		    vitals__geo(c, epoch, vital), h);
		if (last != 0)
			last->epoch = ep;
	}
	if (!fresh &&
	    !vitals__crossed(old, new, c->shift[vital], c->floor[vital]))
		return 0;
	r = bpf_ringbuf_reserve(&vitals_rb, sizeof(*r), 0);
	if (r == 0) {
		__sync_fetch_and_add(&c->dropped[vital], 1);
		return 0;
	}
	if (pid_tgid == VITALS_BPF_PT_CURRENT)
		pid_tgid = vitals_bpf_pid_tgid(vitals_bpf_task());
	r->version = VITALS_BPF_REC_VERSION;
	r->vital = vital;
	r->ts_ns = bpf_ktime_get_ns();
	r->label = label;
	r->weight = weight;
	r->count = new;
	r->slot = slot;
	r->exe_id = exe_id;
	r->uid = uid;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->epoch = epoch;
	r->fresh = fresh;
	r->op = 0;
	r->nkstack = 0;
	r->nustack = 0;
	r->args[0] = r->args[1] = r->args[2] = r->args[3] = 0;
	r->code_start = r->code_end = 0;
	r->nufiles = 0;
	/* The CPU's cached process, if the record is of the current one. */
	if (cpu != 0 && cpu->tgid == r->pid && cpu->exe_id == exe_id &&
	    vitals__current_text(cpu, r->pid))
		r->code_start = cpu->code_start, r->code_end = cpu->code_end;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	return r;
}

/*
 * The common case of vitals_bpf_count() in loads and one store, for
 * programs that run where stores are dear (mm_page_alloc, right after
 * the allocator zeroed the page: until those stores drain, each store of
 * the program waits, 10-25 ns apiece here, where a load does not).  Its
 * caller should keep the stores of its own path few as well: no stack
 * keys (vitals__zero), no value live across a call.  An event of
 * weight 1 whose label is the one last counted for this vital on this
 * CPU (me from vitals__me), by the same exe and uid, in the same
 * epoch (its first-sighting bits are set, or are to be tested later: see
 * vitals__count_with), and whose weight may stay pending
 * (vitals__pend_fits): it only adds to the pending weight.  Returns 1
 * if it counted the event, 0 if it did nothing and the caller must take
 * the full path.
 */
static __always_inline int
vitals__count_last(const struct vitals_bpf_cfg *c,
    struct vitals_bpf_exe_slot *me, __u32 vital, __u64 label, __u64 weight,
    __u32 uid)
{
	struct vitals_bpf_last *last;
	struct vitals_bpf_pend *p;
	__u32 epoch = *(volatile __u32 *)&c->epoch;
	__u64 add;

	if (weight != 1 || vital >= VITALS_BPF_MAX_VITALS ||
	    vital >= c->nvitals)
		return 0;
	last = &me->last[vital];
	p = &last->pend[epoch & 1];
	if (last->label != label || last->exe != me->exe_id ||
	    last->uid != uid || !vitals__last_live(last, p, epoch) ||
	    last->chk != vitals__last_chk(label, last->h, me->exe_id, uid))
		return 0;
	add = p->weight + weight;
	if (!vitals__pend_fits(last, add))
		return 0;
	p->weight = add;
	return 1;
}

/* VM_EXEC of vm_flags (include/linux/mm.h). */
#define VITALS__VM_EXEC 0x4UL

/* What vitals__ufile_cb() found at an address (vitals_bpf_ufile kind). */
#define VITALS__UF_FILE 0 /* code in a file: the ufile is filled */
#define VITALS__UF_ANON 1 /* code in no file (JIT, vdso) */
#define VITALS__UF_NONE 2 /* no code */

/* bpf_find_vma()'s callback: what the mapping holding the address holds. */
static long
vitals__ufile_cb(struct task_struct *t, struct vm_area_struct *vma, void *data)
{
	struct vitals_bpf_ufile *u = data;
	struct file *f = vma->vm_file;
	struct inode *ino;

	u->start = vma->vm_start;
	u->end = vma->vm_end;
	if (bpf_core_field_exists(vma->vm_flags) &&
	    !(vma->vm_flags & VITALS__VM_EXEC)) {
		u->kind = VITALS__UF_NONE;
		return 0;
	}
	/* Loads through BTF pointers: a fault reads as 0. */
	if (f == 0 || (ino = f->f_inode) == 0) {
		u->kind = VITALS__UF_ANON;
		return 0;
	}
	u->off = (__u64)vma->vm_pgoff << 12;
	u->ino = ino->i_ino;
	u->dev = ino->i_sb != 0 ? ino->i_sb->s_dev : 0;
	u->kind = VITALS__UF_FILE;
	return 0;
}

/* Mappings a CPU remembers of the last process it sampled. */
#define VITALS__UCACHE 8
/* Lookups a CPU makes for one process: the cost of a sample is bounded. */
#define VITALS__ULOOKUPS 8
/* And in all, per window of time: so is their cost where processes churn. */
#define VITALS__UWINDOW_NS 100000000ULL
#define VITALS__UWINDOW_LOOKUPS 32

struct vitals__ucache {
	__u32 tgid;
	__u32 n;
	__u64 mm; /* the process's mm: exec replaces it, not the tgid */
	__u32 lookups; /* bpf_find_vma() calls made for it */
	__u32 win_lookups; /* and in the window that started at win_ns */
	__u64 win_ns;
	struct vitals_bpf_ufile uf[VITALS__UCACHE]; /* kind: VITALS__UF_* */
};

/*
 * Per CPU: the mappings bpf_find_vma() found for the process sampled last,
 * files and mappings of no code (its heap, its stack), so that its next
 * samples look up only addresses not met yet, and at most
 * VITALS__ULOOKUPS of them, and at most VITALS__UWINDOW_LOOKUPS in
 * each 100 ms whatever the process (fork+exec storms): a lookup where
 * interrupts are off costs an irq_work (a self-IPI: microseconds in a VM)
 * to release the mmap lock.  A process that lives on has its frames
 * placed through /proc instead.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct vitals__ucache);
	__uint(max_entries, 1);
} vitals_ufile_cache SEC(".maps");

/* The CPU's mapping cache, emptied if it is of another process than t's. */
static __always_inline struct vitals__ucache *
vitals__ucache(struct task_struct *t)
{
	struct vitals__ucache *c;
	__u64 mm = (__u64)vitals__task_mm(t);

	c = bpf_map_lookup_elem(
	    &vitals_ufile_cache, (const void *)&vitals__zero);
	if (c != 0 && (c->tgid != (__u32)t->tgid || c->mm != mm)) {
		c->tgid = (__u32)t->tgid;
		c->mm = mm;
		c->n = 0;
		c->lookups = 0;
	}
	return c;
}

/*
 * The executable file mappings of task t (a BTF pointer) that user
 * addresses ip[0..n) fall in, into uf (VITALS_BPF_UFILES of them, the
 * first found), so that the frames of a process are placed once it is
 * gone and /proc no longer has its maps.  The exe's text, [code[0],
 * code[1]) (a record's code_start and code_end), user space places by
 * itself.  For sampled events only: a frame in no mapping the CPU knows
 * of the process costs a bpf_find_vma() (VITALS__ULOOKUPS at most per
 * process), and where interrupts are off (page faults, perf samples) the
 * kernel allows one per program run, as it releases the mmap lock later
 * (irq_work), so the first frame outside the known mappings is the one
 * looked up.  A frame in no code is where a frame-pointer walk went
 * astray (code built without frame pointers): it and the frames after it
 * are dropped.  Returns the mappings found, plus the frames kept << 8.
 */
/* Whether this window of the CPU's lookups has room for one; takes it. */
static __always_inline int
vitals__ulookup_budget(struct vitals__ucache *c)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - c->win_ns >= VITALS__UWINDOW_NS) {
		c->win_ns = now;
		c->win_lookups = 0;
	}
	if (c->win_lookups >= VITALS__UWINDOW_LOOKUPS)
		return 0;
	c->win_lookups++;
	return 1;
}

/* The state of vitals__ufiles()'s walk, for its bpf_loop() steps. */
struct vitals__uwalk {
	struct task_struct *t;
	const __u64 *ip;
	const __u64 *code;
	struct vitals_bpf_ufile *uf;
	struct vitals__ucache *c;
	__u32 n; /* frames kept */
	__u32 nuf; /* uf filled */
};

/* One frame of vitals__ufiles(): 0 to go on, 1 to stop. */
static long
vitals__ufile_step(__u32 i, void *data)
{
	struct vitals__uwalk *w = data;
	struct vitals__ucache *c = w->c;
	struct vitals_bpf_ufile u;
	__u32 k, m, nuf = w->nuf;
	__u64 pc;

	if (i >= VITALS_BPF_STACK || i >= w->n || nuf > VITALS_BPF_UFILES)
		return 1;
	pc = w->ip[i];
	if (pc >= w->code[0] && pc < w->code[1])
		return 0;
	for (k = 0; k < VITALS_BPF_UFILES && k < nuf; k++)
		if (pc >= w->uf[k].start && pc < w->uf[k].end)
			return 0;
	for (k = 0; k < VITALS__UCACHE && k < c->n; k++)
		if (pc >= c->uf[k].start && pc < c->uf[k].end)
			break;
	if (k < VITALS__UCACHE && k < c->n) {
		u = c->uf[k];
	} else {
		if (c->lookups >= VITALS__ULOOKUPS ||
		    !vitals__ulookup_budget(c))
			return 1;
		c->lookups++;
		u.start = u.end = u.ino = 0;
		u.kind = VITALS__UF_ANON;
		switch (bpf_find_vma(w->t, pc, vitals__ufile_cb, &u, 0)) {
		case 0:
			break;
		case -16: /* EBUSY: the mmap lock, or its release pending */
			return 1;
		default:
			u.kind = VITALS__UF_NONE; /* in no mapping */
		}
		/* A range to remember: in no mapping, there is none. */
		if (u.kind != VITALS__UF_ANON && u.end > u.start &&
		    (m = c->n) < VITALS__UCACHE) {
			c->uf[m] = u;
			c->n = m + 1;
		}
	}
	if (u.kind == VITALS__UF_NONE) {
		w->n = i;
		return 1;
	}
	if (u.kind == VITALS__UF_FILE && nuf < VITALS_BPF_UFILES) {
		w->uf[nuf] = u;
		w->nuf = nuf + 1;
	}
	return 0;
}

/*
 * (A bpf_loop(): its step is verified once, where a loop in line is
 * verified frame by frame, for every program that takes user stacks.)
 */
static __always_inline __u32
vitals__ufiles(struct task_struct *t, const __u64 *ip, __u32 n,
    const __u64 *code, struct vitals_bpf_ufile *uf)
{
	struct vitals__uwalk w = { .t = t,
		.ip = ip,
		.code = code,
		.uf = uf,
		.n = n < VITALS_BPF_STACK ? n : VITALS_BPF_STACK };

	/* No frames (a kernel thread): leave the CPU's cache as it is. */
	if (w.n == 0 || (w.c = vitals__ucache(t)) == 0)
		return w.n << 8;
	bpf_loop(w.n, vitals__ufile_step, &w, 0);
	return w.nuf | w.n << 8;
}

#endif /* VITALS_SKETCH_BPF_H */
