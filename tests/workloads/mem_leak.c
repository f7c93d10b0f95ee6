/* SPDX-License-Identifier: MIT */
/*
 * Workload: a memory leak.  Every 10 ms it maps RATE/100 MiB of fresh
 * anonymous memory (RATE MiB/s, 256), writes one byte to every page (a
 * user page fault and a page allocation each) and keeps it, until the
 * duration is over or CAP MiB (4096) are held; the memory goes back only
 * at exit.  Unlike page_toucher, the process's resident size only grows.
 */
#include "wl.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Map and touch n bytes, kept; returns the pages touched. */
uint64_t mem_leak_grow(size_t n, size_t pg) __attribute__((noipa));

/* See above; exits on mmap failure. */
uint64_t
mem_leak_grow(size_t n, size_t pg)
{
	volatile char *p;
	size_t i;

	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (p == MAP_FAILED)
		wl_die("mmap");
	for (i = 0; i < n; i += pg)
		p[i] = 1;
	return n / pg;
}

int
main(int argc, char **argv)
{
	const char *usage = "[SECONDS [RATE_MIB [CAP_MIB]]]";
	double secs = wl_seconds(argc, argv, usage);
	long rate = wl_int_arg(argc, argv, 2, "RATE_MIB", 1, 65536, 256);
	long cap = wl_int_arg(argc, argv, 3, "CAP_MIB", 1, 1L << 20, 4096);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t step = ((size_t)rate << 20) / 100;
	uint64_t end, next, pages = 0, held = 0;
	struct timespec ts;

	step = (step + pg - 1) / pg * pg;
	end = wl_now_ns() + (uint64_t)(secs * 1e9);
	for (next = wl_now_ns(); wl_now_ns() < end; next += 10000000ULL) {
		if (held + step <= ((uint64_t)cap << 20)) {
			pages += mem_leak_grow(step, pg);
			held += step;
		}
		if (next + 10000000ULL > wl_now_ns()) {
			uint64_t d = next + 10000000ULL - wl_now_ns();

			ts.tv_sec = (time_t)(d / 1000000000ULL);
			ts.tv_nsec = (long)(d % 1000000000ULL);
			nanosleep(&ts, NULL);
		}
	}
	printf("{\"workload\":\"mem_leak\",\"seconds\":%g,\"rate_mib\":%ld,"
	       "\"cap_mib\":%ld,\"pages\":%llu,\"held\":%llu,"
	       "\"page_size\":%zu,\"pid\":%d}\n",
	    secs, rate, cap, (unsigned long long)pages,
	    (unsigned long long)held, pg, (int)getpid());
	return 0;
}
