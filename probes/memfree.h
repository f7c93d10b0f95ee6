/* SPDX-License-Identifier: MIT */
/*
 * Free memory for the kmem and umem samples.  The kernel's free page
 * counter (vm_zone_stat) is a data symbol a BPF program cannot reach on a
 * kernel without CONFIG_KALLSYMS_ALL, so samples get it in user space:
 * sysinfo(2)'s freeram, the counter /proc/meminfo shows as MemFree,
 * without the rest of meminfo's figures to make and parse; read at most
 * once per MEMFREE_TTL_NS.
 */
#ifndef VITALS_PROBES_MEMFREE_H
#define VITALS_PROBES_MEMFREE_H

#include <stdint.h>
#include <sys/sysinfo.h>

#include <vitals/vitals.h>

#define MEMFREE_TTL_NS (100 * 1000 * 1000ULL)

struct memfree {
	uint64_t bytes; /* MemFree at the last read; 0 = unknown */
	uint64_t at_ns; /* vitals_monotonic_ns() of that read; 0 = never */
};

/* MemFree in bytes, read again when older than the TTL. */
static inline uint64_t
memfree_bytes(struct memfree *m, const struct vitals_ctx *ctx)
{
	uint64_t now = vitals_monotonic_ns(ctx);
	struct sysinfo si;

	if (m->at_ns != 0 && now - m->at_ns < MEMFREE_TTL_NS)
		return m->bytes;
	m->at_ns = now;
	if (sysinfo(&si) == 0)
		m->bytes =
		    (uint64_t)si.freeram * (si.mem_unit ? si.mem_unit : 1);
	return m->bytes;
}

#endif /* VITALS_PROBES_MEMFREE_H */
