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

/* Parameters: the vital index of each program (set by probes/kmem.c). */
#define KMEM_P_ALLOC_VITAL 0
#define KMEM_P_FREE_VITAL 1

/*
 * Count one event of the vital in parameter p, labelled as given.  The
 * allocation counts with a plain add: mm_page_alloc fires right after the
 * allocator zeroed the page, and an atomic would wait for those stores.
 */
static __always_inline struct vitals_bpf_rec *
kmem_count(struct vitals_bpf_cfg *c, __u32 p, __u64 label, __u32 order,
    int relaxed)
{
	struct vitals_bpf_exe_slot *me;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task);

	if (!vitals_bpf_wanted(c, pt))
		return 0;
	if ((me = vitals_bpf_current_task(task, pt >> 32)) == 0)
		return 0;
	return vitals_bpf_count_with(c, (__u32)c->param[p], label,
	    1ULL << (order & 31), pt, me->exe_id,
	    vitals_bpf_uid(task), relaxed);
}

/* mm_page_alloc(struct page *page, unsigned int order, gfp_t gfp, int mt) */
SEC("raw_tp/mm_page_alloc")
int
kmem_page_alloc(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_rec *r;
	__u32 order = (__u32)ctx->args[1];
	__u64 gfp = (__u32)ctx->args[2];

	/* A failed allocation (no page) allocated nothing. */
	if (c == 0 || ctx->args[0] == 0)
		return 0;
	r = kmem_count(c, KMEM_P_ALLOC_VITAL, gfp << 8 | (order & 0xff), order,
	    1);
	if (r == 0)
		return 0;
	r->args[0] = order;
	r->args[1] = gfp;
	vitals_bpf_submit(ctx, r, 1, 1);
	return 0;
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
	r = kmem_count(c, KMEM_P_FREE_VITAL, order & 0xff, order, 0);
	if (r == 0)
		return 0;
	r->args[0] = order;
	vitals_bpf_submit(ctx, r, 1, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
