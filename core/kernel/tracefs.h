/* SPDX-License-Identifier: MIT */
/*
 * tracefs: where tracepoints are described.  Mounted on demand (as root)
 * when /sys/kernel/tracing is empty, so BPF probes and libbpf find it.
 */
#ifndef VITALS_TRACEFS_H
#define VITALS_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The tracefs directory, mounting it at /sys/kernel/tracing if nothing is
 * there yet.  Returns a static string, or NULL with errno set.
 */
const char *tracefs_dir(void);

/* 1 if tracepoint category:event exists, 0 if not. */
int tracefs_has(const char *category, const char *event);

/*
 * Offset and size of `field` in the tracepoint's record, from its format
 * file.  Returns 0, -ENOENT (no tracepoint or no such field) or -errno.
 */
int tracefs_field(const char *category, const char *event, const char *field,
    uint32_t *off, uint32_t *size);

#endif /* VITALS_TRACEFS_H */
