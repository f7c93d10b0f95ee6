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
#define CPU_DESC \
	"cache misses by code site: sampled PCs of the hardware cache-miss event (needs a PMU), in-kernel sketch"
#else
#define CPU_NAME "cpu"
#define CPU_UNIT "samples"
#define CPU_HW_EVENT PERF_COUNT_HW_CPU_CYCLES
#define CPU_DEFAULT_EVENT "auto"
#define CPU_DEFAULT_FREQ "99"
#define CPU_DESC \
	"CPU time by code site: sampled PCs (cycles, or cpu-clock without a PMU), in-kernel sketch"
#endif

struct cpu_config {
	struct vitals_bpf_opts bpf;
	int64_t frequency;
	char *event;
	int files; /* look up user frames' files in the kernel */
};

struct cpu_state {
	struct bpf_link **links; /* CPU_MAX, one per perf event */
	int *fds; /* CPU_MAX perf events, -1 where none */
	int n; /* CPUs, entries used in both */
};

static const struct vitals_option cpu_options[] = { VITALS_BPF_OPTIONS(
							struct cpu_config, bpf),
	{ "frequency", VITALS_OPT_INT, offsetof(struct cpu_config, frequency),
	    CPU_DEFAULT_FREQ, "samples per second per CPU", 1, 10000 },
#ifndef CPU_CACHE
	{ "event", VITALS_OPT_STRING, offsetof(struct cpu_config, event),
	    "auto", "auto (cycles, else cpu-clock), cycles or cpu-clock", 0,
	    0 },
#endif
	/*
	 * Each lookup, in the sampling interrupt, ends in an irq_work that
	 * releases the mmap lock: in a VM, at high frequencies, that costs
	 * the sampled tasks more than the rest of the probe (doc/probes.md).
	 */
	{ "files", VITALS_OPT_BOOL, offsetof(struct cpu_config, files), "true",
	    "find the files of user frames in the kernel, so that "
	    "the library frames of a process gone before its samples are read "
	    "are placed (off: through /proc while it runs)",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 } };

#ifdef CPU_CACHE
/* Beyond BPF: a PMU with the cache-miss event. */
static int
cpu_available(char *why, size_t len)
{
	int fds[CPU_MAX], n, i;

	n = vitals_perf_open(1, CPU_HW_EVENT, 1, fds, CPU_MAX);
	if (n < 0) {
		snprintf(why, len,
		    "no hardware PMU: the cache-miss event is "
		    "not supported here (%s)",
		    strerror(-n == ENOENT ? EOPNOTSUPP : -n));
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}
#define CPU_AVAILABLE cpu_available
#else
#define CPU_AVAILABLE NULL
#endif

/* The perf events and their links, before the core frees the rest. */
static void
cpu_fini(struct vitals_bpf_instance *p)
{
	struct cpu_state *s = p->priv;
	int i;

	for (i = 0; i < s->n; i++) {
		if (s->links != NULL && s->links[i] != NULL)
			bpf_link__destroy(s->links[i]);
		if (s->fds != NULL && s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s->links);
	free(s->fds);
}

/* `event` names an event this probe opens. */
static int
cpu_check(const void *config, char *why, size_t len)
{
	const struct cpu_config *cf = config;
	const char *ev = cf->event != NULL ? cf->event : CPU_DEFAULT_EVENT;

	if (strcmp(ev, "auto") != 0 && strcmp(ev, "cycles") != 0 &&
	    strcmp(ev, "cpu-clock") != 0 && strcmp(ev, "cache-misses") != 0) {
		snprintf(why, len,
		    "option 'event': '%s' is not auto, cycles "
		    "or cpu-clock",
		    ev);
		return -EINVAL;
	}
	return 0;
}

/*
 * Open the sampling events (cf checked by cpu_check): cycles if asked or
 * auto and a PMU exists.
 */
static int
cpu_open_events(
    struct vitals_ctx *ctx, struct cpu_state *s, const struct cpu_config *cf)
{
	const char *ev = cf->event != NULL ? cf->event : CPU_DEFAULT_EVENT;
	int hw, n;

	hw = strcmp(ev, "cpu-clock") != 0;
	n = vitals_perf_open(
	    hw, CPU_HW_EVENT, (uint64_t)cf->frequency, s->fds, CPU_MAX);
	if (n == -ENOENT && strcmp(ev, "auto") == 0) {
		vitals_log(ctx, VITALS_LOG_INFO,
		    "no hardware cycles event "
		    "(no PMU): sampling the cpu-clock timer instead");
		n = vitals_perf_open(
		    0, 0, (uint64_t)cf->frequency, s->fds, CPU_MAX);
	}
	if (n < 0) {
		vitals_error(ctx, "cannot open the %s sampling event: %s", ev,
		    strerror(-n));
		return n;
	}
	s->n = n;
	return 0;
}

/* Loaded: the program on each CPU's event. */
static int
cpu_attach(struct vitals_bpf_instance *p)
{
	struct cpu_state *s = p->priv;
	struct cpu_bpf *skel = p->skel;
	int i, r;

	for (i = 0; i < s->n; i++) {
		if (s->fds[i] < 0)
			continue;
		s->links[i] = bpf_program__attach_perf_event(
		    skel->progs.vitals_cpu_sample, s->fds[i]);
		if (s->links[i] == NULL) {
			r = -errno;
			vitals_error(p->ctx,
			    "cannot attach to the perf event of "
			    "cpu %d: %s",
			    i, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Before load: the sampling events, and whether to look up files. */
static int
cpu_setup(struct vitals_bpf_instance *p)
{
	const struct cpu_config *cf = p->config;
	struct cpu_state *s = p->priv;
	int i;

	s->fds = malloc(CPU_MAX * sizeof(int));
	s->links = calloc(CPU_MAX, sizeof(*s->links));
	if (s->fds == NULL || s->links == NULL)
		return -ENOMEM;
	for (i = 0; i < CPU_MAX; i++)
		s->fds[i] = -1;
	p->param[CPU_P_FILES] = cf->files != 0;
	/* args[0] is the PC: a kernel one is stored as a kernel frame. */
	p->spec.kargs = 1u << 0;
	return cpu_open_events(p->ctx, s, cf);
}

VITALS_BPF_PROBE_NAMED(CPU_NAME, cpu, "0.1.0", CPU_DESC, struct cpu_config,
    cpu_options, .vitals = { { CPU_NAME, CPU_UNIT } },
    .state_size = sizeof(struct cpu_state), .available = CPU_AVAILABLE,
    .check = cpu_check, .setup = cpu_setup, .attach = cpu_attach,
    .fini = cpu_fini);
