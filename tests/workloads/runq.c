/* SPDX-License-Identifier: MIT */
/*
 * Workload: 4 x nproc threads spin for the duration, so runnable tasks
 * outnumber CPUs and this executable accumulates run-queue delay (the
 * sched vital).
 */
#include "wl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The spinning thread body, one plain symbol for stack checks. */
void *runq_spin(void *arg) __attribute__((noipa));

static int runq_stop;

/* Spin until told to stop; *arg receives the iteration count. */
void *
runq_spin(void *arg)
{
	uint64_t n = 0;

	while (!__atomic_load_n(&runq_stop, __ATOMIC_RELAXED))
		n++;
	*(uint64_t *)arg = n;
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS]");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i, n;
	struct timespec ts;
	uint64_t *loops, total = 0;
	pthread_t *th;

	if (cpus < 1)
		cpus = 1;
	n = 4 * cpus;
	th = calloc((size_t)n, sizeof(*th));
	loops = calloc((size_t)n, sizeof(*loops));
	if (!th || !loops)
		wl_die("calloc");
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, runq_spin, &loops[i]) != 0)
			wl_die("pthread_create");
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	__atomic_store_n(&runq_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += loops[i];
	}
	printf("{\"workload\":\"runq\",\"seconds\":%g,\"threads\":%ld,"
	       "\"cpus\":%ld,\"loops\":%llu,\"pid\":%d}\n",
	    secs, n, cpus, (unsigned long long)total, (int)getpid());
	free(th);
	free(loops);
	return 0;
}
