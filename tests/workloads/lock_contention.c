/* SPDX-License-Identifier: MIT */
/*
 * Workload: THREADS threads (default 4) map, touch and unmap one page in
 * a loop; mmap and munmap take the process's mmap_lock for writing, so
 * the threads contend on it in the kernel (the lock vital).
 */
#include "wl.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct lock_contention {
	uint64_t deadline;
	uint64_t ops;
};

/* One thread: mmap/touch/munmap until the deadline; counts in arg. */
void *lock_contention_thread(void *arg) __attribute__((noipa));

/* See above. */
void *
lock_contention_thread(void *arg)
{
	struct lock_contention *lc = arg;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p;
	int i;

	do {
		for (i = 0; i < 64; i++) {
			p = mmap(NULL, pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				wl_die("mmap");
			p[0] = 1;
			munmap((void *)p, pg);
		}
		lc->ops += 64;
	} while (wl_now_ns() < lc->deadline);
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [THREADS]]");
	long n = wl_int_arg(argc, argv, 2, "THREADS", 2, 256, 4), i;
	struct lock_contention *lc = calloc((size_t)n, sizeof(*lc));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	uint64_t deadline, ops = 0;

	if (!lc || !th)
		wl_die("calloc");
	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	for (i = 0; i < n; i++) {
		lc[i].deadline = deadline;
		if (pthread_create(
			&th[i], NULL, lock_contention_thread, &lc[i]))
			wl_die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ops += lc[i].ops;
	}
	printf("{\"workload\":\"lock_contention\",\"seconds\":%g,\"ops\":%llu,"
	       "\"threads\":%ld,\"pid\":%d}\n",
	    secs, (unsigned long long)ops, n, (int)getpid());
	free(lc);
	free(th);
	return 0;
}
