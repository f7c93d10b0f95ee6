/* SPDX-License-Identifier: MIT */
/*
 * Symbol names for stack frames: kernel addresses from /proc/kallsyms,
 * user addresses through the process's mappings and the ELF symbol tables
 * of the files mapped.  Names are interned for the life of the process,
 * so epochs may point at them.
 */
#ifndef VITALS_SYMBOL_H
#define VITALS_SYMBOL_H

#include <stdint.h>

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
 * when an address falls outside them.
 */
const char *sym_user(uint32_t pid, uint64_t addr);

/* Forget cached process mappings (not the names handed out). */
void sym_flush_procs(void);

#endif /* VITALS_SYMBOL_H */
