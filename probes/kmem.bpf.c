/* SPDX-License-Identifier: MIT */
/*
 * kmem and kmem_free vitals, in the kernel: every page allocation and free
 * (raw tracepoints mm_page_alloc / mm_page_free) is counted in pages.
 * Linux passes no call site to these tracepoints (the paper patched the
 * allocator to), and a stack walk per page is too dear, so the label is the
 * allocation's gfp flags and order; sampled events carry the real stacks.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <vitals/sketch.bpf.h>

/*
 * The vital each program counts.  The allocation's is 0 whenever its
 * program is loaded (probes/kmem.c lists kmem first); the free's is 0 or
 * 1, set before load in read-only data, whose line the programs read
 * anyway (vitals_bpf_zero), where a cfg parameter is one more line.
 */
#define KMEM_ALLOC_VITAL 0
const volatile __u32 kmem_free_vital = 1;

/*
 * Count one event of the vital, labelled as given.  The
 * allocation counts with a plain add: mm_page_alloc fires right after the
 * allocator zeroed the page, and an atomic would wait for those stores.
 */
static __always_inline struct vitals_bpf_rec *
kmem_count(struct vitals_bpf_cfg *c, __u32 vital, __u64 label, __u32 order,
    int relaxed)
{
	struct vitals_bpf_exe_slot *me;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task);

	if (!vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	return vitals_bpf_count_with(c, vital, label,
	    1ULL << (order & 31), pt, me->exe_id,
	    vitals_bpf_uid(task), relaxed);
}

/*
 * The allocation's full path: count (and maybe sample) as the free does.
 * Out of line, so that the common case below keeps its few values in
 * registers: every spill is a store, and stores are dear here.
 */
static __attribute__((noinline)) int
kmem_alloc_full(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_rec *r;
	__u32 order = (__u32)ctx->args[1];
	__u64 gfp = (__u32)ctx->args[2];

	if (c == 0)
		return 0;
	r = kmem_count(c, KMEM_ALLOC_VITAL, gfp << 8 | (order & 0xff), order,
	    1);
	if (r == 0)
		return 0;
	r->args[0] = order;
	r->args[1] = gfp;
	vitals_bpf_submit(ctx, r, 1, 1);
	return 0;
}

/*
 * mm_page_alloc(struct page *page, unsigned int order, gfp_t gfp, int mt):
 * right after the allocator zeroed the page, where each store waits for
 * those to drain.  Most allocations repeat the CPU's last label and
 * cross nothing: vitals_bpf_count_last() counts them with one store.
 */
SEC("raw_tp/mm_page_alloc")
int
kmem_page_alloc(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = vitals_bpf_task();
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	__u64 pt = vitals_bpf_pid_tgid(task), gfp;
	__u32 order;

	/* A failed allocation (no page) allocated nothing. */
	if (c == 0 || ctx->args[0] == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	order = (__u32)ctx->args[1];
	gfp = (__u32)ctx->args[2];
	if (vitals_bpf_count_last(c, me, KMEM_ALLOC_VITAL,
	    gfp << 8 | (order & 0xff), 1ULL << (order & 31),
	    vitals_bpf_uid(task)))
		return 0;
	return kmem_alloc_full(ctx);
}

/* mm_page_free(struct page *page, unsigned int order) */
SEC("raw_tp/mm_page_free")
int
kmem_page_free(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_rec *r;
	__u32 order = (__u32)ctx->args[1];

	if (c == 0)
		return 0;
	r = kmem_count(c, kmem_free_vital, order & 0xff, order, 0);
	if (r == 0)
		return 0;
	r->args[0] = order;
	vitals_bpf_submit(ctx, r, 1, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
