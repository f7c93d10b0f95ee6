/* SPDX-License-Identifier: MIT */
/*
 * diskio vital, in the kernel.  A request is remembered where it is formed
 * from the submitter's bio (block_io_start, in the submitting task),
 * stamped at dispatch (block_rq_issue) and counted at completion
 * (block_rq_complete) under the submitter's identity and issuing site,
 * weighted by the bytes completed.  Raw tracepoints: the request pointer
 * is the key, and no trace record is built per event.
 */
#include <vitals/probe.bpf.h>

/* Parameters (probes/diskio.c). */
#define DISKIO_P_MIN_BYTES 0
#define DISKIO_P_SITE_FRAMES 1

#define DISKIO_UNSATISFIED 0x100
#define DISKIO_OP_MASK 0xff /* REQ_OP_MASK: READ 0, WRITE 1, others above */

struct gendisk {
	int major;
	int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct bio {
	void *bi_end_io; /* the submitter's completion handler */
} __attribute__((preserve_access_index));

/* The user registers a task entered the kernel with (bpf_task_pt_regs). */
struct pt_regs {
	unsigned long ip;
	unsigned long sp;
} __attribute__((preserve_access_index));

struct request {
	struct request_queue *q;
	struct bio *bio;
	unsigned int cmd_flags;
	unsigned int __data_len;
	unsigned long long __sector;
} __attribute__((preserve_access_index));

/* The submission's stacks, and the files of its user frames. */
struct diskio_stacks {
	__u32 nkstack;
	__u32 nustack;
	__u32 nufiles; /* the files of ustack (vitals_bpf_ufiles) */
	__u32 pad;
	__u64 kstack[VITALS_BPF_STACK];
	__u64 ustack[VITALS_BPF_STACK];
	struct vitals_bpf_ufile ufile[VITALS_BPF_UFILES];
};

/* Who submitted a request, from where, and when it reached the device. */
struct diskio_req {
	__u64 pid_tgid;
	__u64 site; /* hash of the direction and the submission's frames */
	__u64 issue_ns; /* block_rq_issue time; 0 = not seen */
	__u64 sector; /* first sector, at issue */
	__u32 exe_id;
	__u32 uid;
	__u32 bytes; /* requested, at issue */
	__u32 wanted; /* the submitter passed the filters */
	char comm[VITALS_BPF_COMM_LEN];
	struct diskio_stacks st;
};

/*
 * Per CPU: the stacks of the last DISKIO_WALKS requests walked, each with
 * what it was (the submitting thread, where it entered the kernel from
 * user space, the request's flags and its bio's completion handler) and
 * when.  A request alike in all of those within DISKIO_REUSE_NS (the
 * rest of a plugged batch, the next block of an fsync loop, while a
 * journal thread's requests come in between) takes them instead of
 * walking again: such requests come from one path, and the kernel walk
 * (~300 ns a frame here) is most of a request's cost.  Each kind is
 * walked again at least every DISKIO_REUSE_NS.
 */
#define DISKIO_REUSE_NS 10000000ULL
#define DISKIO_WALKS 4

struct diskio_walk {
	__u64 pid_tgid;
	__u64 uip, usp; /* user ip and sp at kernel entry */
	__u64 end_io;
	__u64 ns; /* when walked */
	__u32 flags; /* cmd_flags */
	__u32 pad;
	struct diskio_stacks st;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct diskio_walk);
	__uint(max_entries, DISKIO_WALKS);
} diskio_walks SEC(".maps");

/* Per CPU: the entry of diskio_walks the next new walk replaces. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} diskio_walk_next SEC(".maps");

/* Requests in flight by address; LRU, so a missed completion ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct diskio_req);
	__uint(max_entries, 4096);
} diskio_reqs SEC(".maps");

/* Per CPU: one entry being built (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct diskio_req);
	__uint(max_entries, 1);
} diskio_scratch SEC(".maps");

/*
 * 0 read, 1 write, 2 other (flush, discard, ...).  A write of no data
 * (bytes: the request's as issued) is a cache flush (REQ_PREFLUSH, as
 * fsync sends when no data goes with it), which the block layer
 * completes empty: other, too.
 */
static __always_inline __u32
diskio_op(struct request *rq, __u64 bytes)
{
	__u32 op = BPF_CORE_READ(rq, cmd_flags) & DISKIO_OP_MASK;

	if (op == 1 && bytes == 0)
		return 2;
	return op < 2 ? op : 2;
}

/*
 * The issuing site: a hash of the direction and the top kernel frames,
 * KASLR removed (vitals_bpf_ktext), so reads, writes and discards from
 * one path stay apart.
 */
static __always_inline __u64
diskio_site(
    const struct vitals_bpf_cfg *c, const struct diskio_req *e, __u32 op)
{
	__u64 h = op;
	__u32 i, n = e->st.nkstack;

	for (i = 0; i < VITALS_BPF_STACK; i++) {
		if (i >= n)
			break;
		h = vitals_hash_mix64(h ^ vitals_bpf_ktext(c, e->st.kstack[i]));
	}
	return h >> 1; /* a label is never in the kernel's address range */
}

/* Whether w holds the walk of a request like rq (see diskio_walks). */
static __always_inline int
diskio_walked(const struct diskio_walk *w, struct request *rq, __u64 pt,
    const struct pt_regs *regs, __u64 now)
{
	return w->pid_tgid == pt && now - w->ns < DISKIO_REUSE_NS &&
	    w->uip == regs->ip && w->usp == regs->sp &&
	    w->flags == BPF_CORE_READ(rq, cmd_flags) &&
	    w->end_io == (__u64)BPF_CORE_READ(rq, bio, bi_end_io);
}

/*
 * Identity (and stacks) of the current task, which submits the request.
 * The kernel walk stops at site_frames frames: its length is the cost.
 */
static __always_inline void
diskio_submitter(const struct vitals_bpf_cfg *c, void *ctx,
    struct diskio_req *e, struct request *rq, __u64 pt, int stacks)
{
	struct vitals_bpf_exe_slot *me =
	    vitals_bpf_current_task(vitals_bpf_task(), pt >> 32);
	__u32 size = (__u32)c->param[DISKIO_P_SITE_FRAMES] * 8, zero = 0, k;
	__u64 none[2] = { 0, 0 }, now;
	struct diskio_walk *w = 0;
	struct pt_regs *regs;
	__u32 *next;
	long n;

	e->exe_id = me != 0 ? me->exe_id : 0;
	e->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (!stacks)
		return;
	now = bpf_ktime_get_ns();
	regs = (struct pt_regs *)bpf_task_pt_regs(vitals_bpf_task());
	for (k = 0; k < DISKIO_WALKS; k++) {
		w = bpf_map_lookup_elem(&diskio_walks, &k);
		if (w == 0 || !diskio_walked(w, rq, pt, regs, now))
			continue;
		e->st = w->st;
		return;
	}
	w = 0;
	if ((next = bpf_map_lookup_elem(&diskio_walk_next, &zero)) != 0) {
		k = *next % DISKIO_WALKS;
		*next = k + 1;
		w = bpf_map_lookup_elem(&diskio_walks, &k);
	}
	if (size == 0 || size > sizeof(e->st.kstack))
		size = sizeof(e->st.kstack);
	/* Skip this program and bpf_trace_run1: the site starts in the kernel. */
	n = bpf_get_stack(ctx, e->st.kstack, size, 2);
	e->st.nkstack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	if (me != 0 && me->stack_top != 0) {
		n = bpf_get_stack(
		    ctx, e->st.ustack, sizeof(e->st.ustack), BPF_F_USER_STACK);
		e->st.nustack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
		/*
		 * Every file, the exe's too: the completion's record, sent
		 * from another task, cannot carry the submitter's text range.
		 */
		n = vitals_bpf_ufiles(vitals_bpf_task(), e->st.ustack,
		    e->st.nustack, none, e->st.ufile);
		e->st.nufiles = n & 0xff;
		e->st.nustack = (__u32)n >> 8;
	}
	if (w == 0)
		return;
	w->pid_tgid = pt;
	w->uip = regs->ip;
	w->usp = regs->sp;
	w->ns = now;
	w->flags = BPF_CORE_READ(rq, cmd_flags);
	w->end_io = (__u64)BPF_CORE_READ(rq, bio, bi_end_io);
	w->st = e->st;
}

/*
 * Remember rq with the current task as its submitter.  Requests without
 * data (flushes) weigh nothing: they get the identity but no stack walk.
 */
static __always_inline void
diskio_remember(
    struct vitals_bpf_cfg *c, void *ctx, struct request *rq, __u64 issue_ns)
{
	struct diskio_req *e;
	__u64 key = (__u64)rq, pt = bpf_get_current_pid_tgid();
	__u32 zero = 0;

	if ((e = bpf_map_lookup_elem(&diskio_scratch, &zero)) == 0)
		return;
	e->issue_ns = issue_ns;
	e->bytes = BPF_CORE_READ(rq, __data_len);
	e->sector = BPF_CORE_READ(rq, __sector);
	e->wanted = vitals_bpf_wanted(c, pt);
	e->pid_tgid = pt;
	e->st.nkstack = e->st.nustack = e->st.nufiles = 0;
	if (e->wanted)
		diskio_submitter(c, ctx, e, rq, pt, e->bytes != 0);
	e->site = diskio_site(c, e, diskio_op(rq, e->bytes));
	bpf_map_update_elem(&diskio_reqs, &key, e, BPF_ANY);
}

/* block_io_start(struct request *rq): formed from a bio, in its submitter. */
SEC("raw_tp/block_io_start")
int
diskio_io_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();

	if (c != 0)
		diskio_remember(c, ctx, (struct request *)ctx->args[0], 0);
	return 0;
}

/* block_rq_issue(struct request *rq): handed to the driver. */
SEC("raw_tp/block_rq_issue")
int
diskio_rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct request *rq = (struct request *)ctx->args[0];
	struct diskio_req *e;
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();

	if (c == 0)
		return 0;
	if ((e = bpf_map_lookup_elem(&diskio_reqs, &key)) != 0) {
		e->issue_ns = now;
		e->bytes = BPF_CORE_READ(rq, __data_len);
		e->sector = BPF_CORE_READ(rq, __sector);
		return 0;
	}
	/* Not formed from a bio we saw (a flush): the dispatcher stands in. */
	diskio_remember(c, ctx, rq, now);
	return 0;
}

/* Device of rq as the kernel's dev_t (major << 20 | minor). */
static __always_inline __u64
diskio_dev(struct request *rq)
{
	struct gendisk *d = BPF_CORE_READ(rq, q, disk);

	if (d == 0)
		return 0;
	return (__u64)BPF_CORE_READ(d, major) << 20 |
	    (__u32)BPF_CORE_READ(d, first_minor);
}

/* Fill a sampled completion's record from the request and send it up. */
static __always_inline void
diskio_submit(void *ctx, struct vitals_bpf_rec *r, const struct diskio_req *e,
    struct request *rq, __u64 bytes, __u32 unsat)
{
	__u64 now = bpf_ktime_get_ns();

	/* A failed write completing no bytes is still a write. */
	r->op = diskio_op(rq, e != 0 ? e->bytes : bytes) | unsat;
	r->args[0] = bytes;
	r->args[2] = diskio_dev(rq);
	r->args[3] = BPF_CORE_READ(rq, __sector);
	__builtin_memset(r->comm, 0, sizeof(r->comm));
	if (e != 0) {
		if (e->issue_ns != 0 && now > e->issue_ns)
			r->args[1] = now - e->issue_ns;
		if (e->issue_ns != 0)
			r->args[3] = e->sector;
		__builtin_memcpy(r->comm, e->comm, sizeof(r->comm));
		__builtin_memcpy(r->kstack, e->st.kstack, sizeof(r->kstack));
		__builtin_memcpy(r->ustack, e->st.ustack, sizeof(r->ustack));
		r->nkstack = e->st.nkstack;
		r->nustack = e->st.nustack;
		r->nufiles = e->st.nufiles;
		__builtin_memcpy(r->ufile, e->st.ufile, sizeof(r->ufile));
	}
	vitals_bpf_submit(ctx, r, 0, 0);
}

/* Count bytes of rq under its submitter (or pid 0 if never seen). */
static __always_inline void
diskio_count(struct vitals_bpf_cfg *c, void *ctx, struct request *rq,
    struct diskio_req *e, __u64 bytes, __u32 unsat)
{
	struct vitals_bpf_rec *r;

	if (bytes < c->param[DISKIO_P_MIN_BYTES])
		return;
	if (e != 0 && e->wanted)
		r = vitals_bpf_count(
		    c, 0, e->site, bytes, e->pid_tgid, e->exe_id, e->uid);
	else if (e == 0 && vitals_bpf_unfiltered(c))
		/* Submitted before we attached: site 0, pid 0. */
		r = vitals_bpf_count(c, 0, 0, bytes, 0, 0, 0);
	else
		return;
	if (r != 0)
		diskio_submit(ctx, r, e, rq, bytes, unsat);
}

/*
 * block_rq_complete(struct request *rq, blk_status_t error,
 *     unsigned int nr_bytes): nr_bytes of the rq's remaining bytes are
 * done; fewer than remain is a partial completion, the rest follows.
 */
SEC("raw_tp/block_rq_complete")
int
diskio_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct request *rq = (struct request *)ctx->args[0];
	struct diskio_req *e;
	__u64 key = (__u64)rq, bytes = (__u32)ctx->args[2];
	__u32 err = (__u8)ctx->args[1], unsat = 0, partial;

	if (c == 0)
		return 0;
	partial = bytes < BPF_CORE_READ(rq, __data_len);
	if (err != 0 || partial)
		unsat = DISKIO_UNSATISFIED;
	e = bpf_map_lookup_elem(&diskio_reqs, &key);
	diskio_count(c, ctx, rq, e, bytes, unsat);
	if (e != 0 && !partial)
		bpf_map_delete_elem(&diskio_reqs, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
