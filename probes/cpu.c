/* SPDX-License-Identifier: MIT */
/*
 * cpu probe: where the CPUs spend their time.  A sampling perf event per
 * CPU (cycles where a PMU exists, else the cpu-clock software timer) runs
 * a BPF program that counts each sample under its PC in the in-kernel
 * sketch (paper 4.2: PC >> 8, exe, uid; a user PC as its code offset, so
 * every process of a program shares labels).  Built a second time with
 * -DCPU_CACHE as the cache probe: the same program on the hardware
 * cache-miss event, which needs a PMU (virtual machines often lack one).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "cpu.h"
#include "cpu.skel.h"

#define CPU_MAX 1024

#ifdef CPU_CACHE
#define CPU_NAME "cache"
#define CPU_UNIT "misses"
#define CPU_HW_EVENT PERF_COUNT_HW_CACHE_MISSES
#define CPU_DEFAULT_EVENT "cache-misses"
#define CPU_DEFAULT_FREQ "99"
#define CPU_DESC "cache misses by code site: sampled PCs of the hardware cache-miss event (needs a PMU), in-kernel sketch"
#else
#define CPU_NAME "cpu"
#define CPU_UNIT "samples"
#define CPU_HW_EVENT PERF_COUNT_HW_CPU_CYCLES
#define CPU_DEFAULT_EVENT "auto"
#define CPU_DEFAULT_FREQ "99"
#define CPU_DESC "CPU time by code site: sampled PCs (cycles, or cpu-clock without a PMU), in-kernel sketch"
#endif

struct cpu_config {
	struct vitals_bpf_opts bpf;
	int64_t frequency;
	char *event;
	int files; /* look up user frames' files in the kernel */
};

struct cpu_state {
	struct cpu_bpf *skel;
	struct vitals_bpf *bpf;
	struct bpf_link **links;
	int *fds;
	int n;
};

static const struct vitals_option cpu_options[] = {
	VITALS_BPF_OPTIONS(struct cpu_config, bpf),
	{ "frequency", VITALS_OPT_INT, offsetof(struct cpu_config, frequency),
	  CPU_DEFAULT_FREQ, "samples per second per CPU", 1, 10000 },
#ifndef CPU_CACHE
	{ "event", VITALS_OPT_STRING, offsetof(struct cpu_config, event),
	  "auto", "auto (cycles, else cpu-clock), cycles or cpu-clock", 0, 0 },
#endif
	/*
	 * Each lookup, in the sampling interrupt, ends in an irq_work that
	 * releases the mmap lock: in a VM, at high frequencies, that costs
	 * the sampled tasks more than the rest of the probe (doc/probes.md).
	 */
	{ "files", VITALS_OPT_BOOL, offsetof(struct cpu_config, files),
	  "true", "find the files of user frames in the kernel, so that "
	  "the library frames of a process gone before its samples are read "
	  "are placed (off: through /proc while it runs)", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
cpu_available(char *why, size_t len)
{
#ifdef CPU_CACHE
	int fds[CPU_MAX], n, i, r;

	if ((r = vitals_bpf_available(NULL, why, len)) < 0)
		return r;
	n = vitals_perf_open(1, CPU_HW_EVENT, 1, fds, CPU_MAX);
	if (n < 0) {
		snprintf(why, len, "no hardware PMU: the cache-miss event is "
		    "not supported here (%s)", strerror(-n == ENOENT ?
		    EOPNOTSUPP : -n));
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
#else
	return vitals_bpf_available(NULL, why, len);
#endif
}

static void
cpu_fini(void *state)
{
	struct cpu_state *s = state;
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->links != NULL && s->links[i] != NULL)
			bpf_link__destroy(s->links[i]);
		if (s->fds != NULL && s->fds[i] >= 0)
			close(s->fds[i]);
	}
	vitals_bpf_free(s->bpf);
	cpu_bpf__destroy(s->skel);
	free(s->links);
	free(s->fds);
	free(s);
}

/* `event` names an event this probe opens; then the common BPF options. */
static int
cpu_check(const void *config, char *why, size_t len)
{
	const struct cpu_config *cf = config;
	const char *ev = cf->event != NULL ? cf->event : CPU_DEFAULT_EVENT;

	if (strcmp(ev, "auto") != 0 && strcmp(ev, "cycles") != 0 &&
	    strcmp(ev, "cpu-clock") != 0 && strcmp(ev, "cache-misses") != 0) {
		snprintf(why, len, "option 'event': '%s' is not auto, cycles "
		    "or cpu-clock", ev);
		return -EINVAL;
	}
	return vitals_bpf_opts_check(&cf->bpf, why, len);
}

/*
 * Open the sampling events (cf checked by cpu_check): cycles if asked or
 * auto and a PMU exists.
 */
static int
cpu_open_events(struct vitals_ctx *ctx, struct cpu_state *s,
    const struct cpu_config *cf)
{
	const char *ev = cf->event != NULL ? cf->event : CPU_DEFAULT_EVENT;
	int hw, n;

	hw = strcmp(ev, "cpu-clock") != 0;
	n = vitals_perf_open(hw, CPU_HW_EVENT,
	    (uint64_t)cf->frequency, s->fds, CPU_MAX);
	if (n == -ENOENT && strcmp(ev, "auto") == 0) {
		vitals_log(ctx, VITALS_LOG_INFO, "no hardware cycles event "
		    "(no PMU): sampling the cpu-clock timer instead");
		n = vitals_perf_open(0, 0, (uint64_t)cf->frequency, s->fds,
		    CPU_MAX);
	}
	if (n < 0) {
		vitals_error(ctx, "cannot open the %s sampling event: %s", ev,
		    strerror(-n));
		return n;
	}
	s->n = n;
	return 0;
}

static int
cpu_attach(struct vitals_ctx *ctx, struct cpu_state *s)
{
	int i, r;

	for (i = 0; i < s->n; i++) {
		if (s->fds[i] < 0)
			continue;
		s->links[i] = bpf_program__attach_perf_event(
		    s->skel->progs.vitals_cpu_sample, s->fds[i]);
		if (s->links[i] == NULL) {
			r = -errno;
			vitals_error(ctx, "cannot attach to the perf event of "
			    "cpu %d: %s", i, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int
cpu_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct cpu_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { CPU_NAME },
		.units = { CPU_UNIT },
	};
	struct cpu_state *s;
	int r, i;

	if ((r = vitals_init_check(ctx, cpu_check, config)) != 0)
		return r;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->fds = malloc(CPU_MAX * sizeof(int));
	s->links = calloc(CPU_MAX, sizeof(*s->links));
	if (s->fds == NULL || s->links == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < CPU_MAX; i++)
		s->fds[i] = -1;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((r = cpu_open_events(ctx, s, cf)) < 0)
		goto fail;
	if ((s->skel = cpu_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		goto fail;
	vitals_bpf_set_param(s->bpf, CPU_P_FILES, cf->files != 0);
	if ((r = vitals_bpf_load(s->bpf)) < 0 || (r = cpu_attach(ctx, s)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	cpu_fini(s);
	return r;
}

static int
cpu_flush(void *state)
{
	struct cpu_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct cpu_config),
	.name = CPU_NAME,
	.version = "0.1.0",
	.description = CPU_DESC,
	.options = cpu_options,
	.available = cpu_available,
	.init = cpu_init,
	.fini = cpu_fini,
	.flush = cpu_flush,
	.check = cpu_check,
};
