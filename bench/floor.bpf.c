/* SPDX-License-Identifier: MIT */
/*
 * The floor under any BPF monitor on this kernel: a program that returns at
 * once, on each tracepoint the default probes attach to, with the same
 * attach types.  bench/overhead runs it as the "floor" monitor, so the cost
 * vitalsd adds above what merely attaching costs is measured in the same
 * invocation.
 *
 * With --count, bench/floor loads count_sys_enter alone instead: the
 * minimal counting monitor the probes' design starts from, a classic
 * tracepoint program on raw_syscalls:sys_enter adding 1 to a hashed slot
 * of an array map with an atomic add ("count" in bench/overhead).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/*
 * With --exact (floor_exact set before load) each program counts its event
 * as the simplest exact per-label sketch would: one atomic add to a hashed
 * slot of an HCA-sized region of its own (1024 slots, as the default
 * hca_size), under a label like the probe's (syscall number and user
 * stack pointer, faulting PC >> 8, gfp and order, ...) mixed with the
 * tgid.  bench/bpfcost.py --cpu runs it as the "exact" monitor: what
 * counting every event costs on this machine, with nothing else done.
 */
const volatile int floor_exact = 0;

#define FLOOR_SLOTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 16 * FLOOR_SLOTS);
} exact_hca SEC(".maps");

struct pt_regs {
	unsigned long ip;
	unsigned long sp;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

static __always_inline int
floor_count(__u32 region, __u64 label)
{
	__u64 h = ((bpf_get_current_pid_tgid() >> 32) ^ label ^
		      ((__u64)region << 56)) *
	    0x9e3779b97f4a7c15ULL;
	__u32 k = region * FLOOR_SLOTS + (__u32)(h >> 54);
	__u64 *c = bpf_map_lookup_elem(&exact_hca, &k);

	if (c != 0)
		__sync_fetch_and_add(c, 1);
	return 0;
}

/* The label of each tracepoint's event, from its arguments a. */
#define FLOOR_LABEL_sys_enter (((struct pt_regs *)a[0])->sp ^ (__u64)a[1] << 48)
#define FLOOR_LABEL_page_fault_user \
	((a[2] & 0x10) ? 1 : ((struct pt_regs *)a[1])->ip >> 8)
#define FLOOR_LABEL_mm_page_alloc (a[2] << 8 | (a[1] & 0xff))
#define FLOOR_LABEL_mm_page_free (a[1] & 0xff)
#define FLOOR_LABEL_sched_switch ((struct task_struct *)a[2])->pid
#define FLOOR_LABEL_block_io_start a[0]
#define FLOOR_LABEL_block_rq_issue a[0]
#define FLOOR_LABEL_block_rq_complete a[0]
#define FLOOR_LABEL_signal_generate a[0]
#define FLOOR_LABEL_signal_deliver a[0]
#define FLOOR_LABEL_sock_send_length a[2]
#define FLOOR_LABEL_sock_recv_length a[2]
#define FLOOR_LABEL_net_dev_queue 0
#define FLOOR_LABEL_contention_begin a[1]
#define FLOOR_LABEL_contention_end a[1]

#define FLOOR_BTF(tp, n) \
	SEC("tp_btf/" #tp) int floor_##tp(__u64 *a) \
	{ \
		return floor_exact ? floor_count(n, FLOOR_LABEL_##tp) : 0; \
	}
#define FLOOR_RAW(tp, n) \
	SEC("raw_tp/" #tp) int floor_##tp(struct bpf_raw_tracepoint_args *ctx) \
	{ \
		__u64 *a = ctx->args; \
		return floor_exact ? floor_count(n, FLOOR_LABEL_##tp) : 0; \
	}

FLOOR_BTF(sys_enter, 0)
FLOOR_BTF(sched_switch, 1)
FLOOR_RAW(block_io_start, 2)
FLOOR_RAW(block_rq_issue, 3)
FLOOR_RAW(block_rq_complete, 4)
FLOOR_RAW(mm_page_alloc, 5)
FLOOR_RAW(mm_page_free, 6)
FLOOR_BTF(page_fault_user, 7)
FLOOR_BTF(signal_generate, 8)
FLOOR_BTF(signal_deliver, 9)
FLOOR_BTF(sock_send_length, 10)
FLOOR_BTF(sock_recv_length, 11)
FLOOR_BTF(net_dev_queue, 12)
FLOOR_BTF(contention_begin, 13)
FLOOR_BTF(contention_end, 14)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1024);
} count_hca SEC(".maps");

/* raw_syscalls:sys_enter as a classic tracepoint passes it (tracefs format). */
struct count_sys_enter_args {
	__u64 common; /* type, flags, preempt count, pid */
	long id;
	unsigned long args[6];
};

SEC("tracepoint/raw_syscalls/sys_enter")
int
count_sys_enter(struct count_sys_enter_args *ctx)
{
	__u64 h = (bpf_get_current_pid_tgid() ^ (__u64)ctx->id) *
	    0x9e3779b97f4a7c15ULL;
	__u32 k = (__u32)(h >> 54);
	__u64 *c = bpf_map_lookup_elem(&count_hca, &k);

	if (c != 0)
		__sync_fetch_and_add(c, 1);
	return 0;
}

/*
 * On the sampling perf events of floor --sample: the cpu probe's
 * interrupts, with a program that returns at once (with --exact, counts
 * the sample under the interrupted PC >> 8, as the probe labels it; the
 * PC is word 16 of the x86-64 registers the context starts with).
 */
SEC("perf_event")
int
floor_sample(__u64 *ctx)
{
	return floor_exact ? floor_count(15, ctx[16] >> 8) : 0;
}

char LICENSE[] SEC("license") = "GPL";
