/* SPDX-License-Identifier: MIT */
/*
 * What the sched probe's loader (sched.c) and its BPF programs
 * (sched.bpf.c) agree on: the meaning of the cfg parameters and of the
 * cause code a sched sample carries in args[3].
 */
#ifndef VITALS_PROBE_SCHED_H
#define VITALS_PROBE_SCHED_H

/* cfg param[] slots. */
#define SCHED_P_MIN_DELAY 0 /* ns: shorter run-queue delays are not counted */
#define SCHED_P_MIN_BLOCK 1 /* ns: shorter off-CPU intervals are not counted */
#define SCHED_P_SCHED 2 /* index of the sched vital + 1; 0 = off */
#define SCHED_P_BLOCKING 3 /* index of the blocking vital + 1; 0 = off */
#define SCHED_P_SITE_FRAMES 4 /* kernel frames hashed into a blocking site */
#define SCHED_P_USTACK 5 /* 1: keep user stacks of tasks going to sleep */
#define SCHED_P_WAIT 6 /* index of the wait vital + 1; 0 = off */

/* How a delayed task became runnable (sched sample args[3]). */
#define SCHED_CAUSE_WOKEN 1 /* woken after sleeping */
#define SCHED_CAUSE_NEW 2 /* a new task's first switch-in */
#define SCHED_CAUSE_PREEMPTED 3 /* switched out while still runnable */

#endif /* VITALS_PROBE_SCHED_H */
