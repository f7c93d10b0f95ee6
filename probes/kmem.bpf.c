/* SPDX-License-Identifier: MIT */
/*
 * kmem and kmem_free vitals, in the kernel: every page allocation and free
 * (raw tracepoints mm_page_alloc / mm_page_free) is counted in pages.
 * Linux passes no call site to these tracepoints (the paper patched the
 * allocator to), and a stack walk per page is too dear, so the label is the
 * allocation's gfp flags and order; sampled events carry the real stacks.
 */
#include <vitals/probe.bpf.h>

/*
 * The vital each program counts.  The allocation's is 0 whenever its
 * program is loaded (probes/kmem.c lists kmem first); the free's is 0 or
 * 1, set before load in read-only data, whose line the programs read
 * anyway (the SDK keeps its maps' key there), where a cfg parameter is
 * one more line.
 */
#define KMEM_ALLOC_VITAL 0
const volatile __u32 kmem_free_vital = 1;

/*
 * Count one event of the vital, labelled as given, of the current task
 * (me, from vitals_bpf_me()), in pages.  The
 * allocation counts with a plain add: mm_page_alloc fires right after the
 * allocator zeroed the page, and an atomic would wait for those stores.
 */
static __always_inline struct vitals_bpf_rec *
kmem_count(struct vitals_bpf_cfg *c, struct vitals_bpf_exe_slot *me,
    __u32 vital, __u64 label, __u32 order, int relaxed)
{
	if (relaxed)
		return vitals_bpf_count_relaxed(c, vital, label,
		    1ULL << (order & 31), VITALS_BPF_PT_CURRENT, me->exe_id,
		    me->uid);
	return vitals_bpf_count_me(c, me, vital, label, 1ULL << (order & 31));
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
	struct vitals_bpf_exe_slot *me = vitals_bpf_me(vitals_bpf_task());
	struct vitals_bpf_rec *r;
	__u32 order = (__u32)ctx->args[1];
	__u64 gfp = (__u32)ctx->args[2];

	if (c == 0 || me == 0)
		return 0;
	r = kmem_count(
	    c, me, KMEM_ALLOC_VITAL, gfp << 8 | (order & 0xff), order, 1);
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
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	__u64 gfp;
	__u32 order;

	/* A failed allocation (no page) allocated nothing. */
	if (c == 0 || ctx->args[0] == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	order = (__u32)ctx->args[1];
	gfp = (__u32)ctx->args[2];
	if (vitals_bpf_count_last(c, me, KMEM_ALLOC_VITAL,
		gfp << 8 | (order & 0xff), 1ULL << (order & 31), me->uid))
		return 0;
	return kmem_alloc_full(ctx);
}

/* mm_page_free(struct page *page, unsigned int order) */
SEC("raw_tp/mm_page_free")
int
kmem_page_free(struct bpf_raw_tracepoint_args *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct vitals_bpf_exe_slot *me;
	struct vitals_bpf_rec *r;
	__u32 order = (__u32)ctx->args[1];

	if (c == 0 || (me = vitals_bpf_me_wanted(c)) == 0)
		return 0;
	r = kmem_count(c, me, kmem_free_vital, order & 0xff, order, 0);
	if (r == 0)
		return 0;
	r->args[0] = order;
	vitals_bpf_submit(ctx, r, 1, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
