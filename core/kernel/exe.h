/* SPDX-License-Identifier: MIT */
/*
 * Executable paths of processes, resolved once per process from
 * /proc/PID/exe and cached; an entry whose exe id no longer matches (the
 * pid was reused, or the process exec'd) is resolved again, and entries
 * of exited processes are dropped.
 */
#ifndef VITALS_EXE_H
#define VITALS_EXE_H

#include <stddef.h>
#include <stdint.h>

/* Processes whose exe is cached (direct-mapped: slot pid % EXE_SLOTS). */
#define EXE_SLOTS 1024
/* Executables whose path is kept by exe id, for processes already gone. */
#define EXE_KNOWN 256

/*
 * Copy the path of process pid's executable into buf.  exe_id is the id
 * the kernel side computed (vitals_bpf_exe_id of the inode), used to
 * validate the cache.  A process already gone is named by the path last
 * resolved or exec'd (exe_exec_hold) for exe_id if comm (its name in the
 * sample, or NULL) is that path's base name as exec sets it, or the comm
 * of the process it was resolved or exec'd as.  Returns 0, or -ENOENT if
 * the process is gone and not named so, or has no executable (kernel
 * threads).
 */
int exe_path(
    uint32_t pid, uint32_t exe_id, const char *comm, char *buf, size_t len);

/* Exe id of a process as the kernel side computes it; 0 if unknown. */
uint32_t exe_id_of(uint32_t pid);

/*
 * Forget the entries of processes that have exited (kill(pid, 0) says
 * ESRCH): one syscall per cached process.  Returns how many were dropped.
 */
uint32_t exe_drop_dead(void);

/* Processes whose exe path is cached now. */
uint32_t exe_cached(void);

/*
 * Hold the kernel's table of programs exec'd (core/exec.bpf.c on
 * sched:sched_process_exec), loading it on the first hold: exe_path()
 * then names a gone process of any program exec'd by an absolute path
 * since, not only of one a live process was seen of.  Returns 0, or a
 * negative errno with the reason in why.  Each hold is released once.
 */
int exe_exec_hold(char *why, size_t len);
void exe_exec_release(void);

#endif /* VITALS_EXE_H */
