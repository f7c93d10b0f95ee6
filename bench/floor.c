/* SPDX-License-Identifier: MIT */
/*
 * floor: attach bench/floor.bpf.c's empty programs to every tracepoint of
 * the default probes that exists here, say how many, and wait for a signal.
 * The "floor" monitor of bench/overhead.  floor --count attaches only the
 * minimal counting program on raw_syscalls:sys_enter ("count"); floor
 * --exact makes every program count its event in a hashed slot (the
 * "exact" monitor of bench/bpfcost.py --cpu).  With --sample HZ it also
 * opens a sampling event on every CPU at HZ, as the cpu probe does
 * (cycles where a PMU has them, else cpu-clock), with a program that
 * returns at once: the sampling interrupts any monitor with a cpu vital
 * pays.  --only LIST attaches only the programs of the tracepoints named
 * in LIST (comma separated, e.g. "sys_enter,sched_switch"), for a
 * monitor of fewer probes.  With --stats it keeps the kernel's run-time
 * statistics on while it runs and, when signalled, prints what its
 * programs took: "floor: programs ran N times in T ns".
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <vitals/bpf.h>

#include "floor.skel.h"

#define FLOOR_MAX 32 /* tracepoint programs */
#define FLOOR_CPUS 1024 /* sampling events */

static volatile sig_atomic_t floor_done;

static void
floor_on_signal(int sig)
{
	(void)sig;
	floor_done = 1;
}

/*
 * Whether the tracepoint of program p is one of only, a comma-separated
 * list of names (NULL: all are).
 */
static int
floor_only(const struct bpf_program *p, const char *only)
{
	const char *tp = strchr(bpf_program__section_name(p), '/'), *s;
	size_t n;

	if (only == NULL)
		return 1;
	if (tp == NULL)
		return 0;
	n = strlen(++tp);
	for (s = only; (s = strstr(s, tp)) != NULL; s += n)
		if ((s == only || s[-1] == ',') &&
		    (s[n] == '\0' || s[n] == ','))
			return 1;
	return 0;
}

/* Whether the kernel has the tracepoint a program of the object names. */
static int
floor_has(const struct bpf_program *p)
{
	static const char *const cats[] = { "raw_syscalls", "sched", "block",
		"kmem", "exceptions", "signal", "sock", "net", "lock", NULL };
	const char *sec = bpf_program__section_name(p), *tp;
	char path[256];
	int i;

	if ((tp = strchr(sec, '/')) == NULL)
		return 0;
	for (i = 0; cats[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s",
		    cats[i], tp + 1);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}

static int
floor_usage(void)
{
	fprintf(stderr,
	    "usage: floor [--count | --exact] [--sample HZ] [--only LIST] "
	    "[--stats]\n");
	return 2;
}

/*
 * Attach p to a sampling event at hz on every online CPU (at most
 * FLOOR_CPUS), as the cpu probe's event "auto" chooses it: CPU cycles
 * where the PMU has them, else cpu-clock; links after *n.  Returns the
 * events attached or -1 with the reason printed.
 */
static int
floor_sample(struct bpf_program *p, long hz, struct bpf_link **links, int *n)
{
	static int fds[FLOOR_CPUS];
	int ncpu, cpu, got = 0, hw = 1;

	ncpu = vitals_perf_open(
	    1, PERF_COUNT_HW_CPU_CYCLES, (uint64_t)hz, fds, FLOOR_CPUS);
	if (ncpu == -ENOENT) {
		hw = 0;
		ncpu = vitals_perf_open(0, 0, (uint64_t)hz, fds, FLOOR_CPUS);
	}
	if (ncpu < 0) {
		fprintf(stderr, "floor: sampling at %ld Hz: %s\n", hz,
		    ncpu == -ENOENT ? "refused (above "
				      "kernel.perf_event_max_sample_rate?)"
				    : strerror(-ncpu));
		return -1;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		if (fds[cpu] < 0)
			continue;
		if ((links[*n] = bpf_program__attach_perf_event(p, fds[cpu])) ==
		    NULL) {
			fprintf(stderr,
			    "floor: cannot attach to cpu%d's %s "
			    "event: %s\n",
			    cpu, hw ? "cycles" : "cpu-clock", strerror(errno));
			for (; cpu < ncpu; cpu++)
				if (fds[cpu] >= 0)
					close(fds[cpu]);
			return -1;
		}
		(*n)++;
		got++;
	}
	return got;
}

/* Print the loaded programs' run count and run time, summed. */
static void
floor_print_stats(const struct bpf_object *obj)
{
	struct bpf_prog_info info;
	struct bpf_program *p;
	uint64_t ns = 0, cnt = 0;
	uint32_t len;

	bpf_object__for_each_program (p, obj) {
		if (!bpf_program__autoload(p))
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) ==
		    0) {
			ns += info.run_time_ns;
			cnt += info.run_cnt;
		}
	}
	printf("floor: programs ran %llu times in %llu ns\n",
	    (unsigned long long)cnt, (unsigned long long)ns);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", no_argument, NULL, 'c' },
		{ "exact", no_argument, NULL, 'e' },
		{ "sample", required_argument, NULL, 's' },
		{ "stats", no_argument, NULL, 'S' },
		{ "only", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bpf_link *links[FLOOR_CPUS + FLOOR_MAX];
	struct bpf_program *p;
	struct floor_bpf *skel;
	int n = 0, i, r, count = 0, exact = 0, sampled = 0, opt, stats = 0;
	int stats_fd = -1, wanted = 0;
	long hz = 0;
	char *end;
	const char *only = NULL;
	bool want;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'c')
			count = 1;
		else if (opt == 'e')
			exact = 1;
		else if (opt == 'S')
			stats = 1;
		else if (opt == 'o')
			only = optarg;
		else if (opt == 's') {
			errno = 0;
			hz = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    hz < 1 || hz > 10000) {
				fprintf(stderr,
				    "floor: --sample: expected a "
				    "frequency of 1 to 10000 Hz, got \"%s\"\n",
				    optarg);
				return 2;
			}
		} else
			return floor_usage();
	}
	if (optind != argc || (count && exact))
		return floor_usage();
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	if ((skel = floor_bpf__open()) == NULL) {
		fprintf(stderr, "floor: cannot open the BPF object: %s\n",
		    strerror(errno));
		return 1;
	}
	skel->rodata->floor_exact = exact;
	bpf_object__for_each_program (p, skel->obj) {
		if (p == skel->progs.count_sys_enter)
			want = count;
		else if (p == skel->progs.floor_sample)
			want = hz != 0;
		else
			want = !count && floor_has(p) && floor_only(p, only);
		bpf_program__set_autoload(p, want);
		if (want && p != skel->progs.floor_sample)
			wanted++;
	}
	if (only != NULL && wanted == 0) {
		fprintf(stderr,
		    "floor: --only: none of \"%s\" is a tracepoint of "
		    "the floor's programs here\n",
		    only);
		floor_bpf__destroy(skel);
		return 2;
	}
	if ((r = floor_bpf__load(skel)) < 0) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(-r));
		return 1;
	}
	if (hz != 0 &&
	    (sampled = floor_sample(skel->progs.floor_sample, hz, links, &n)) <
		0) {
		for (i = 0; i < n; i++)
			bpf_link__destroy(links[i]);
		floor_bpf__destroy(skel);
		return 1;
	}
	bpf_object__for_each_program (p, skel->obj) {
		if (!bpf_program__autoload(p) || n == sampled + FLOOR_MAX ||
		    p == skel->progs.floor_sample)
			continue;
		if ((links[n] = bpf_program__attach(p)) == NULL) {
			fprintf(stderr, "floor: cannot attach %s: %s\n",
			    bpf_program__section_name(p), strerror(errno));
			continue;
		}
		n++;
	}
	if (stats && (stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
		fprintf(stderr,
		    "floor: --stats: cannot enable run-time "
		    "statistics: %s\n",
		    strerror(-stats_fd));
		for (i = 0; i < n; i++)
			bpf_link__destroy(links[i]);
		floor_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, floor_on_signal);
	signal(SIGTERM, floor_on_signal);
	printf("floor: attached %d programs", n - sampled);
	if (hz != 0)
		printf(", sampling %d CPUs at %ld Hz", sampled, hz);
	printf("\n");
	fflush(stdout);
	while (!floor_done)
		pause();
	if (stats_fd >= 0)
		floor_print_stats(skel->obj);
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	floor_bpf__destroy(skel);
	return 0;
}
