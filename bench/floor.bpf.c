/* SPDX-License-Identifier: MIT */
/*
 * The floor under any BPF monitor on this kernel: a program that returns at
 * once, on each tracepoint the default probes attach to, with the same
 * attach types.  bench/overhead runs it as the "floor" monitor, so the cost
 * vitalsd adds above what merely attaching costs is measured in the same
 * invocation.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FLOOR_BTF(tp) \
	SEC("tp_btf/" #tp) int floor_##tp(void *ctx) { return 0; }
#define FLOOR_RAW(tp) \
	SEC("raw_tp/" #tp) int floor_##tp(void *ctx) { return 0; }

FLOOR_BTF(sys_enter)
FLOOR_BTF(sched_switch)
FLOOR_BTF(sched_wakeup)
FLOOR_BTF(sched_wakeup_new)
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

char LICENSE[] SEC("license") = "GPL";
