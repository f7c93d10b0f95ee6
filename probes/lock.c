/* SPDX-License-Identifier: MIT */
/*
 * lock probe: time spent waiting for contended kernel locks, by lock and
 * waiting site.  BPF programs on lock:contention_begin/contention_end keep
 * the sketch in the kernel; sampled waits carry the waiter's stacks and,
 * for mutexes and rw-semaphores, the owner the waiter found.
 */
#include <stddef.h>
#include <stdint.h>

#include <vitals/bpf.h>

#include "lock.skel.h"

/* Parameter slots of lock.bpf.c. */
#define LOCK_P_MIN_WAIT 0
#define LOCK_P_SPIN 1
#define LOCK_P_ITER_LO 2
#define LOCK_P_ITER_HI 3

struct lock_config {
	struct vitals_bpf_opts bpf;
	uint64_t min_wait; /* ns */
	int spin; /* spinlocks and rwlocks too */
};

static const struct vitals_option lock_options[] = {
	VITALS_BPF_OPTIONS(struct lock_config, bpf),
	{ "min_wait", VITALS_OPT_DURATION,
	    offsetof(struct lock_config, min_wait), "10us",
	    "count only waits at least this long (0: every contention)", 0,
	    60 },
	{ "spin", VITALS_OPT_BOOL, offsetof(struct lock_config, spin), "true",
	    "count spinlock and rwlock contention too, not only sleeping locks "
	    "(mutexes, semaphores: the paper's vital)",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

/*
 * The programs' parameters, and where __traceiter_contention_end lies
 * (unknown with addresses hidden: the frame is kept, labels then vary).
 */
static int
lock_setup(struct vitals_bpf_instance *p)
{
	const struct lock_config *cf = p->config;
	uint64_t lo, hi;

	if (vitals_bpf_ksym_range("__traceiter_contention_end", &lo, &hi) < 0)
		lo = hi = 0;
	p->param[LOCK_P_MIN_WAIT] = cf->min_wait;
	p->param[LOCK_P_SPIN] = cf->spin != 0;
	p->param[LOCK_P_ITER_LO] = lo;
	p->param[LOCK_P_ITER_HI] = hi;
	return 0;
}

VITALS_BPF_PROBE(lock, "0.1.0",
    "kernel lock wait time by lock and waiting "
    "site (lock:contention_begin/end: mutexes, rw-semaphores and, unlike "
    "the paper, spinlocks; in-kernel sketch)",
    struct lock_config, lock_options, .vitals = { { "lock", "ns" } },
    .tracepoints = { "lock:contention_begin", "lock:contention_end" },
    .setup = lock_setup);
