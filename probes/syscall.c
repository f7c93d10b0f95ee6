/* SPDX-License-Identifier: MIT */
/*
 * syscall probe: system calls by call site.  A BPF program on
 * raw_syscalls:sys_enter keeps the sketch in the kernel; only sampled
 * calls (with their user stacks and first four arguments) reach vitalsd.
 */
#include <vitals/bpf.h>

#include "syscall.skel.h"

VITALS_BPF_PROBE(syscall, "0.1.0",
    "system calls by user call site "
    "(raw_syscalls:sys_enter, in-kernel sketch)",
    struct vitals_bpf_opts, vitals_bpf_options,
    .vitals = { { "syscall", "calls" } },
    .tracepoints = { "raw_syscalls:sys_enter" });
