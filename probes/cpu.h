/* SPDX-License-Identifier: MIT */
/*
 * What the cpu and cache probes' loader (cpu.c) and BPF program
 * (cpu.bpf.c) agree on: the meaning of the cfg parameters.
 */
#ifndef VITALS_PROBE_CPU_H
#define VITALS_PROBE_CPU_H

/* cfg param[] slots. */
#define CPU_P_FILES 0 /* 1: look up the files of user frames in the kernel */

#endif /* VITALS_PROBE_CPU_H */
