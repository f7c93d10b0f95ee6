/* SPDX-License-Identifier: MIT */
/*
 * Workload: CPU-bound in a shared library for the duration: memchr(3) of
 * libc over a 64 KiB buffer that holds no match, so a test can check
 * that the cpu vital places the library's frames (the clock is read once
 * every 1024 scans: few samples fall in the vDSO).  With "cpu" after the
 * duration, it is of the process's own CPU time.  Prints the scans.
 */
#include "wl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIB_LOOP_BUF (64 * 1024)

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [cpu]]");
	int cpu = wl_cpu_arg(argc, argv, 2);
	uint64_t deadline, scans = 0, found = 0;
	char *buf;
	int i;

	if ((buf = calloc(1, LIB_LOOP_BUF)) == NULL)
		wl_die("calloc");
	deadline = (cpu ? wl_cpu_ns() : wl_now_ns()) + (uint64_t)(secs * 1e9);
	do {
		for (i = 0; i < 1024; i++) {
			/* The buffer may have changed: memchr is not hoisted. */
			__asm__ volatile("" : : "r"(buf) : "memory");
			found += memchr(buf, 'x', LIB_LOOP_BUF) != NULL;
		}
		scans += 1024;
	} while ((cpu ? wl_cpu_ns() : wl_now_ns()) < deadline);
	printf("{\"workload\":\"lib_loop\",\"seconds\":%g,\"clock\":\"%s\","
	       "\"scans\":%llu,\"found\":%llu,\"pid\":%d}\n",
	    secs, cpu ? "cpu" : "wall", (unsigned long long)scans,
	    (unsigned long long)found, (int)getpid());
	free(buf);
	return 0;
}
