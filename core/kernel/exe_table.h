/* SPDX-License-Identifier: MIT */
/*
 * The table core/kernel/exe.bpf.c fills at each exec and core/kernel/exe.c reads: the
 * path of the program a process exec'd, by exe id, so the samples of a
 * process gone before its samples were read are still named.  Plain C
 * over the kernel's fixed-width types: it compiles for both targets.
 */
#ifndef VITALS_EXE_TABLE_H
#define VITALS_EXE_TABLE_H

#include <vitals/bpf_shared.h>

/* Slots of the table: exe id % VITALS_EXEC_SLOTS. */
#define VITALS_EXEC_SLOTS 1024
#define VITALS_EXEC_PATH 256

struct vitals_exec_name {
	__u32 exe_id; /* vitals_bpf_exe_id() of the program; 0 while written */
	__u32 gen; /* odd while the program writes the slot */
	char comm[VITALS_BPF_COMM_LEN]; /* the comm exec gave the process */
	char path[VITALS_EXEC_PATH]; /* as exec'd: absolute, or not kept */
};

#endif /* VITALS_EXE_TABLE_H */
