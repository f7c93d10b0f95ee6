/* SPDX-License-Identifier: MIT */
/*
 * diskio vital, in the kernel.  A request is remembered where it is formed
 * from the submitter's bio (block:block_io_start, in the submitting task),
 * stamped at dispatch (block:block_rq_issue) and counted at completion
 * (block:block_rq_complete) under the submitter's identity and issuing
 * site, weighted by the bytes completed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/sketch.bpf.h>

/* Field slots resolved by user space (probes/diskio.c). */
#define DISKIO_F_START_DEV 0
#define DISKIO_F_START_SECTOR 1
#define DISKIO_F_START_RWBS 2
#define DISKIO_F_ISSUE_DEV 3
#define DISKIO_F_ISSUE_SECTOR 4
#define DISKIO_F_ISSUE_RWBS 5
#define DISKIO_F_ISSUE_BYTES 6
#define DISKIO_F_DONE_DEV 7
#define DISKIO_F_DONE_SECTOR 8
#define DISKIO_F_DONE_RWBS 9
#define DISKIO_F_DONE_NR_SECTOR 10
#define DISKIO_F_DONE_ERROR 11

/* Parameters. */
#define DISKIO_P_MIN_BYTES 0
#define DISKIO_P_SITE_FRAMES 1

#define DISKIO_UNSATISFIED 0x100

/*
 * A tracepoint program's 0 would also hide the event from every perf user
 * of the tracepoint on this CPU (perf stat/record would count nothing);
 * non-zero lets them see it and costs nothing when there are none.
 */
#define DISKIO_PASS 1

/* A request in flight: the device, its first sector and its direction. */
struct diskio_key {
	__u32 dev;
	__u32 op;
	__u64 sector;
};

/* Who submitted it, from where, and when it reached the device. */
struct diskio_req {
	__u64 pid_tgid;
	__u64 site;      /* hash of the submission's kernel frames */
	__u64 issue_ns;  /* block_rq_issue time; 0 = not seen */
	__u32 exe_id;
	__u32 uid;
	__u32 bytes;     /* requested, at issue */
	__u32 wanted;    /* the submitter passed the filters */
	__u32 nkstack;
	__u32 nustack;
	char comm[VITALS_BPF_COMM_LEN];
	__u64 kstack[VITALS_BPF_STACK];
	__u64 ustack[VITALS_BPF_STACK];
};

/* In-flight requests; LRU so entries whose completion was missed age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct diskio_key);
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

/* Kernel text start, so sites do not change with KASLR; 0 if unknown. */
extern const void _stext __ksym __weak;

/* 0 read, 1 write, 2 other, from the first letters of rwbs. */
static __always_inline __u32
diskio_op(const struct vitals_bpf_cfg *c, void *ctx, __u32 i)
{
	char rwbs[4] = { 0 };
	__u32 off;
	char ch;

	if (i >= VITALS_BPF_MAX_FIELDS || c->field_size[i] < sizeof(rwbs))
		return 2;
	off = c->field_off[i];
	bpf_probe_read_kernel(rwbs, sizeof(rwbs), (char *)ctx + off);
	/* A leading F is a preflush ahead of the data direction. */
	ch = rwbs[0] == 'F' ? rwbs[1] : rwbs[0];
	return ch == 'R' ? 0 : ch == 'W' ? 1 : 2;
}

static __always_inline void
diskio_key_of(struct diskio_key *k, const struct vitals_bpf_cfg *c, void *ctx,
    __u32 first)
{
	k->dev = (__u32)vitals_bpf_field(c, ctx, first);
	k->sector = vitals_bpf_field(c, ctx, first + 1);
	k->op = diskio_op(c, ctx, first + 2);
}

/*
 * The issuing site: a hash of the direction and the top kernel frames,
 * KASLR removed, so reads, writes and discards from one path stay apart.
 */
static __always_inline __u64
diskio_site(const struct vitals_bpf_cfg *c, const struct diskio_req *e,
    __u32 op)
{
	__u64 h = op, base = (__u64)&_stext;
	__u32 i, n = e->nkstack;

	if (n > c->param[DISKIO_P_SITE_FRAMES])
		n = (__u32)c->param[DISKIO_P_SITE_FRAMES];
	for (i = 0; i < VITALS_BPF_STACK; i++) {
		if (i >= n)
			break;
		h = vitals_bpf_mix64(h ^ (e->kstack[i] - base));
	}
	return h;
}

/*
 * Remember the request under k with the current task as its submitter:
 * identity, stacks and site (only if the task passes the filters).
 */
static __always_inline void
diskio_remember(struct vitals_bpf_cfg *c, void *ctx, struct diskio_key *k,
    __u64 issue_ns, __u32 bytes)
{
	struct vitals_bpf_exe_slot *me;
	struct diskio_req *e;
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	long n;

	if ((e = bpf_map_lookup_elem(&diskio_scratch, &zero)) == 0)
		return;
	e->issue_ns = issue_ns;
	e->bytes = bytes;
	e->wanted = vitals_bpf_wanted(c, pt);
	e->pid_tgid = pt;
	e->nkstack = e->nustack = 0;
	e->site = 0;
	if (e->wanted) {
		me = vitals_bpf_current(pt >> 32);
		e->exe_id = me != 0 ? me->exe_id : 0;
		e->uid = (__u32)bpf_get_current_uid_gid();
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
		e->nkstack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
		if (me != 0 && me->stack_top != 0) {
			n = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack),
			    BPF_F_USER_STACK);
			e->nustack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
		}
		e->site = diskio_site(c, e, k->op);
	}
	bpf_map_update_elem(&diskio_reqs, k, e, BPF_ANY);
}

SEC("tracepoint/block/block_io_start")
int
diskio_io_start(void *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct diskio_key k;

	if (c == 0)
		return DISKIO_PASS;
	diskio_key_of(&k, c, ctx, DISKIO_F_START_DEV);
	diskio_remember(c, ctx, &k, 0, 0);
	return DISKIO_PASS;
}

SEC("tracepoint/block/block_rq_issue")
int
diskio_rq_issue(void *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct diskio_req *e;
	struct diskio_key k;
	__u32 bytes;

	if (c == 0)
		return DISKIO_PASS;
	diskio_key_of(&k, c, ctx, DISKIO_F_ISSUE_DEV);
	bytes = (__u32)vitals_bpf_field(c, ctx, DISKIO_F_ISSUE_BYTES);
	if ((e = bpf_map_lookup_elem(&diskio_reqs, &k)) != 0) {
		e->issue_ns = bpf_ktime_get_ns();
		e->bytes = bytes;
		return DISKIO_PASS;
	}
	/* Not formed from a bio we saw: the dispatching task stands in. */
	diskio_remember(c, ctx, &k, bpf_ktime_get_ns(), bytes);
	return DISKIO_PASS;
}

/* Fill a sampled completion's record from the request and send it up. */
static __always_inline void
diskio_submit(void *ctx, struct vitals_bpf_rec *r, const struct diskio_req *e,
    const struct diskio_key *k, __u64 bytes, __s32 err)
{
	__u64 now = bpf_ktime_get_ns();

	r->op = k->op;
	if (err != 0 || (e != 0 && bytes < e->bytes))
		r->op |= DISKIO_UNSATISFIED;
	r->args[0] = bytes;
	r->args[1] = e != 0 && e->issue_ns != 0 && now > e->issue_ns ?
	    now - e->issue_ns : 0;
	r->args[2] = k->dev;
	r->args[3] = k->sector;
	__builtin_memset(r->comm, 0, sizeof(r->comm));
	if (e != 0) {
		__builtin_memcpy(r->comm, e->comm, sizeof(r->comm));
		__builtin_memcpy(r->kstack, e->kstack, sizeof(r->kstack));
		__builtin_memcpy(r->ustack, e->ustack, sizeof(r->ustack));
		r->nkstack = e->nkstack;
		r->nustack = e->nustack;
	}
	vitals_bpf_submit(ctx, r, 0, 0);
}

SEC("tracepoint/block/block_rq_complete")
int
diskio_rq_complete(void *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_rec *r;
	struct diskio_req *e;
	struct diskio_key k;
	__u64 bytes;
	__s32 err;

	if (c == 0)
		return DISKIO_PASS;
	diskio_key_of(&k, c, ctx, DISKIO_F_DONE_DEV);
	bytes = vitals_bpf_field(c, ctx, DISKIO_F_DONE_NR_SECTOR) << 9;
	err = (__s32)vitals_bpf_field(c, ctx, DISKIO_F_DONE_ERROR);
	e = bpf_map_lookup_elem(&diskio_reqs, &k);
	if (bytes < c->param[DISKIO_P_MIN_BYTES])
		goto out;
	if (e != 0 && e->wanted)
		r = vitals_bpf_count(c, 0, e->site, bytes, e->pid_tgid,
		    e->exe_id, e->uid);
	else if (e == 0 && c->tgid == 0 && c->cgroup == 0 &&
	    c->comm[0] == '\0')
		/* Submitter unknown (before we attached): site 0, pid 0. */
		r = vitals_bpf_count(c, 0, 0, bytes, 0, 0, 0);
	else
		goto out;
	if (r != 0)
		diskio_submit(ctx, r, e, &k, bytes, err);
out:
	if (e != 0)
		bpf_map_delete_elem(&diskio_reqs, &k);
	return DISKIO_PASS;
}

char LICENSE[] SEC("license") = "GPL";
