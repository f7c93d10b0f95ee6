/* SPDX-License-Identifier: MIT */
/*
 * lock probe: time spent waiting for contended kernel locks, by lock and
 * waiting site.  BPF programs on lock:contention_begin/contention_end keep
 * the sketch in the kernel; sampled waits carry the waiter's stacks and,
 * for mutexes and rw-semaphores, the owner the waiter found.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "lock.skel.h"

/* Parameter slots of lock.bpf.c. */
#define LOCK_P_MIN_WAIT 0
#define LOCK_P_SPIN 1
#define LOCK_P_ITER_LO 2
#define LOCK_P_ITER_HI 3

struct lock_config {
	struct vitals_bpf_opts bpf;
	uint64_t min_wait; /* ns */
	int spin;          /* spinlocks and rwlocks too */
};

struct lock_state {
	struct lock_bpf *skel;
	struct vitals_bpf *bpf;
	uint64_t iter[2]; /* __traceiter_contention_end, [lo, hi); 0s if unknown */
};

static const char *const lock_tracepoints[] = {
	"lock:contention_begin", "lock:contention_end", NULL
};

static const struct vitals_option lock_options[] = {
	VITALS_BPF_OPTIONS(struct lock_config, bpf),
	{ "min_wait", VITALS_OPT_DURATION, offsetof(struct lock_config, min_wait),
	  "10us", "count only waits at least this long (0: every contention)",
	  0, 60 },
	{ "spin", VITALS_OPT_BOOL, offsetof(struct lock_config, spin), "true",
	  "count spinlock and rwlock contention too, not only sleeping locks "
	  "(mutexes, semaphores: the paper's vital)", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
lock_available(char *why, size_t len)
{
	return vitals_bpf_available(lock_tracepoints, why, len);
}

static void
lock_fini(void *state)
{
	struct lock_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	lock_bpf__destroy(s->skel);
	free(s);
}

static int
lock_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct lock_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "lock" },
		.units = { "ns" },
	};
	struct lock_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	/* Unknown (addresses hidden): the frame is kept, labels then vary. */
	if (vitals_bpf_ksym_range("__traceiter_contention_end", &s->iter[0],
	    &s->iter[1]) < 0)
		s->iter[0] = s->iter[1] = 0;
	if ((s->skel = lock_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		goto fail;
	vitals_bpf_set_param(s->bpf, LOCK_P_MIN_WAIT, cf->min_wait);
	vitals_bpf_set_param(s->bpf, LOCK_P_SPIN, cf->spin != 0);
	vitals_bpf_set_param(s->bpf, LOCK_P_ITER_LO, s->iter[0]);
	vitals_bpf_set_param(s->bpf, LOCK_P_ITER_HI, s->iter[1]);
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	lock_fini(s);
	return r;
}

static int
lock_flush(void *state)
{
	struct lock_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct lock_config),
	.name = "lock",
	.version = "0.1.0",
	.description = "kernel lock wait time by lock and waiting site "
	    "(lock:contention_begin/end: mutexes, rw-semaphores and, unlike the "
	    "paper, spinlocks; in-kernel sketch)",
	.options = lock_options,
	.available = lock_available,
	.init = lock_init,
	.fini = lock_fini,
	.flush = lock_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
