/* SPDX-License-Identifier: MIT */
/*
 * Symbol names for stack frames: kernel addresses from /proc/kallsyms,
 * user addresses through the process's mappings and the ELF symbol tables
 * of the files mapped.  Names are interned for the life of the process,
 * so epochs may point at them.
 */
#ifndef VITALS_SYMBOL_H
#define VITALS_SYMBOL_H

#include <stddef.h>
#include <stdint.h>

/* Processes whose maps are cached (direct-mapped: slot pid % SYM_PROCS). */
#define SYM_PROCS 256

/* Name of the kernel function holding addr, or NULL (unknown, no access). */
const char *sym_kernel(uint64_t addr);

/*
 * Address range [*lo, *hi) of kernel function `name`: its start and the
 * next function's.  Returns 0, or -ENOENT if it is unknown or kallsyms
 * addresses are hidden.
 */
int sym_kernel_range(const char *name, uint64_t *lo, uint64_t *hi);

/*
 * Name of the function holding user address addr in process pid, or
 * NULL if the process is gone, the address is not in a file mapping, or
 * the file has no symbol for it.  Maps are cached per pid and re-read
 * when an address falls outside them (at most every 100 ms).
 */
const char *sym_user(uint32_t pid, uint64_t addr);

/*
 * Name of the function at file offset off of module id (core/kernel/module.h),
 * or NULL; pid, when not 0, is a process that maps it (the file is opened
 * as it sees it).  For frames placed by module and offset, whether or not
 * the process is still there.
 */
const char *sym_module_name(uint32_t module, uint64_t off, uint32_t pid);

/*
 * Where user address addr of process pid lies: the module id of the file
 * mapped there (core/kernel/module.h) and the address's offset in that file.
 * exe_id, when not 0, is the process's exe id as the event carried it:
 * cached maps read for another exe id (the pid exec'd or was reused) are
 * read again.  Returns 0; -ENOENT if the process is gone or addr is in no
 * file mapping (anonymous or JIT code); -ERANGE if the offset does not
 * fit VITALS_UFRAME.
 */
int sym_user_loc(uint32_t pid, uint32_t exe_id, uint64_t addr, uint32_t *module,
    uint64_t *off);

/*
 * addr as a stored user frame: VITALS_UFRAME(module, offset) where
 * sym_user_loc finds it, else addr itself, or 0 where no return address
 * can be: at or above 2^47 (what a frame-pointer walk reads past the
 * last frame; kept, it would read as a module frame), or, when since_ns
 * is not 0, in no executable mapping of the process's maps read whole at
 * or after since_ns (CLOCK_MONOTONIC, the sample's time): a walk gone
 * astray in code with no frame pointers.
 */
uint64_t sym_user_frame(
    uint32_t pid, uint32_t exe_id, uint64_t addr, uint64_t since_ns);

/*
 * For a process whose mappings are not cached: cache its executable's
 * text alone, [code_start, code_end) of the file at path (the kernel's mm
 * start_code and end_code: the first executable PT_LOAD, relocated), so
 * that its frames there are placed and named without /proc, also once it
 * is gone (a short-lived program).  Its other frames are placed from the
 * files the kernel found for them (sym_proc_learn) or, on the first one
 * that is not, from its real maps, read then while it lives.  Returns 0,
 * or a negative errno.
 */
int sym_proc_text(uint32_t pid, uint32_t exe_id, const char *path,
    uint64_t code_start, uint64_t code_end);

/*
 * Add the executable mapping [start, end) of module at file offset pgoff,
 * as the kernel reported it with a sample, to the cached maps of process
 * pid running exe_id (see sym_proc_text), so its
 * other samples' frames there are placed too.  Returns 0 (also when a
 * mapping there is known already); -ENOENT if the process's maps are not
 * cached; -ENOSPC.
 */
int sym_proc_learn(uint32_t pid, uint32_t exe_id, uint64_t start, uint64_t end,
    uint64_t pgoff, uint32_t module);

/*
 * Forget the cached maps of processes that have exited (kill(pid, 0)
 * says ESRCH), so the cache neither grows with dead pids nor serves one
 * reused.  One syscall per cached process.  Returns how many were dropped.
 */
uint32_t sym_drop_dead(void);

/* Processes whose maps are cached now. */
uint32_t sym_procs_cached(void);

/*
 * Between epochs, when no name a file's table handed out is held any
 * more (the epoch closed was written, filtered and released, and the
 * next has no sample yet): free the tables of the files not named since
 * the last call, least recently used first, until those kept take at
 * most 2 MB (and half of the file slots); those named since are kept.
 * Returns the bytes of the tables kept.
 */
size_t sym_files_trim(void);

/* Forget all cached process mappings (not the names handed out). */
void sym_flush_procs(void);

#endif /* VITALS_SYMBOL_H */
