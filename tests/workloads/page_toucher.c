/* SPDX-License-Identifier: MIT */
/*
 * Workload: maps 16 MiB of fresh anonymous memory, writes one byte to
 * every page (a user page fault and a page allocation each), unmaps it
 * and repeats (the umem and kmem vitals).
 */
#include "wl.h"

#include <sys/mman.h>
#include <unistd.h>

#define PAGE_TOUCHER_CHUNK (16u << 20)

/* Touch every page of one fresh mapping; returns the pages touched. */
uint64_t page_toucher_touch(size_t pg) __attribute__((noipa));

/* See above; exits on mmap failure. */
uint64_t
page_toucher_touch(size_t pg)
{
	volatile char *p;
	size_t i;

	p = mmap(NULL, PAGE_TOUCHER_CHUNK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		wl_die("mmap");
	for (i = 0; i < PAGE_TOUCHER_CHUNK; i += pg)
		p[i] = 1;
	munmap((void *)p, PAGE_TOUCHER_CHUNK);
	return PAGE_TOUCHER_CHUNK / pg;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS]");
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t deadline, pages = 0, maps = 0;

	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	do {
		pages += page_toucher_touch(pg);
		maps++;
	} while (wl_now_ns() < deadline);
	printf("{\"workload\":\"page_toucher\",\"seconds\":%g,\"pages\":%llu,"
	       "\"maps\":%llu,\"page_size\":%zu,\"pid\":%d}\n",
	    secs, (unsigned long long)pages, (unsigned long long)maps, pg,
	    (int)getpid());
	return 0;
}
