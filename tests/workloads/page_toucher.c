/* SPDX-License-Identifier: MIT */
/*
 * Workload: maps 16 MiB of fresh anonymous memory, writes one byte to
 * every page (a user page fault and a page allocation each), unmaps it
 * and repeats (the umem and kmem vitals), in THREADS threads (1) at once:
 * from several CPUs, the same labels (the same PC, the same allocation).
 * Each thread goes on past the duration until it has done MAPS mappings
 * (1), so a test can ask for enough pages however slow the machine is.
 */
#include "wl.h"

#include <pthread.h>
#include <stdlib.h>
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

struct page_toucher {
	uint64_t deadline;
	uint64_t least; /* maps to do at least */
	size_t pg;
	uint64_t pages, maps;
};

static void *
page_toucher_thread(void *arg)
{
	struct page_toucher *pt = arg;

	do {
		pt->pages += page_toucher_touch(pt->pg);
		pt->maps++;
	} while (pt->maps < pt->least || wl_now_ns() < pt->deadline);
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [THREADS [MAPS]]]");
	long n = wl_int_arg(argc, argv, 2, "THREADS", 1, 256, 1), i;
	long least = wl_int_arg(argc, argv, 3, "MAPS", 1, 1L << 30, 1);
	struct page_toucher *pt = calloc((size_t)n, sizeof(*pt));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	uint64_t deadline, pages = 0, maps = 0;

	if (!pt || !th)
		wl_die("calloc");
	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	for (i = 0; i < n; i++) {
		pt[i].deadline = deadline;
		pt[i].least = (uint64_t)least;
		pt[i].pg = (size_t)sysconf(_SC_PAGESIZE);
		if (pthread_create(&th[i], NULL, page_toucher_thread, &pt[i]))
			wl_die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		pages += pt[i].pages;
		maps += pt[i].maps;
	}
	printf("{\"workload\":\"page_toucher\",\"seconds\":%g,\"pages\":%llu,"
	       "\"maps\":%llu,\"page_size\":%zu,\"threads\":%ld,\"pid\":%d}\n",
	    secs, (unsigned long long)pages, (unsigned long long)maps, pt[0].pg,
	    n, (int)getpid());
	free(pt);
	free(th);
	return 0;
}
