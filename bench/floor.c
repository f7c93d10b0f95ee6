/* SPDX-License-Identifier: MIT */
/*
 * floor: attach bench/floor.bpf.c's empty programs to every tracepoint of
 * the default probes that exists here, say how many, and wait for a signal.
 * The "floor" monitor of bench/overhead.  floor --count attaches only the
 * minimal counting program on raw_syscalls:sys_enter ("count"); floor
 * --exact makes every program count its event in a hashed slot (the
 * "exact" monitor of bench/bpfcost.py --cpu).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

#define FLOOR_MAX 32

static volatile sig_atomic_t floor_done;

static void
floor_on_signal(int sig)
{
	(void)sig;
	floor_done = 1;
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

int
main(int argc, char **argv)
{
	struct bpf_link *links[FLOOR_MAX];
	struct bpf_program *p;
	struct floor_bpf *skel;
	int n = 0, i, r, count, exact;
	bool want;

	count = argc == 2 && strcmp(argv[1], "--count") == 0;
	exact = argc == 2 && strcmp(argv[1], "--exact") == 0;
	if (argc > 2 || (argc == 2 && !count && !exact)) {
		fprintf(stderr, "usage: floor [--count | --exact]\n");
		return 2;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	if ((skel = floor_bpf__open()) == NULL) {
		fprintf(stderr, "floor: cannot open the BPF object: %s\n",
		    strerror(errno));
		return 1;
	}
	skel->rodata->floor_exact = exact;
	bpf_object__for_each_program(p, skel->obj) {
		if (p == skel->progs.count_sys_enter)
			want = count;
		else
			want = !count && floor_has(p);
		bpf_program__set_autoload(p, want);
	}
	if ((r = floor_bpf__load(skel)) < 0) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(-r));
		return 1;
	}
	bpf_object__for_each_program(p, skel->obj) {
		if (!bpf_program__autoload(p) || n == FLOOR_MAX)
			continue;
		if ((links[n] = bpf_program__attach(p)) == NULL) {
			fprintf(stderr, "floor: cannot attach %s: %s\n",
			    bpf_program__section_name(p), strerror(errno));
			continue;
		}
		n++;
	}
	signal(SIGINT, floor_on_signal);
	signal(SIGTERM, floor_on_signal);
	printf("floor: attached %d programs\n", n);
	fflush(stdout);
	while (!floor_done)
		pause();
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	floor_bpf__destroy(skel);
	return 0;
}
