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

#define FLOOR_BTF(tp) \
	SEC("tp_btf/" #tp) int floor_##tp(void *ctx) { return 0; }
#define FLOOR_RAW(tp) \
	SEC("raw_tp/" #tp) int floor_##tp(void *ctx) { return 0; }

FLOOR_BTF(sys_enter)
FLOOR_BTF(sched_switch)
FLOOR_RAW(block_io_start)
FLOOR_RAW(block_rq_issue)
FLOOR_RAW(block_rq_complete)
FLOOR_RAW(mm_page_alloc)
FLOOR_RAW(mm_page_free)
FLOOR_BTF(page_fault_user)
FLOOR_BTF(signal_generate)
FLOOR_BTF(signal_deliver)
FLOOR_BTF(sock_send_length)
FLOOR_BTF(sock_recv_length)
FLOOR_BTF(net_dev_queue)
FLOOR_BTF(contention_begin)
FLOOR_BTF(contention_end)

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

char LICENSE[] SEC("license") = "GPL";
