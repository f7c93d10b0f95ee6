/* SPDX-License-Identifier: MIT */
/*
 * Workload: 4 x nproc threads spin for the duration, so runnable tasks
 * outnumber CPUs and this executable accumulates run-queue delay (the
 * sched vital).  Each spinner reads the kernel's own account of its
 * waits (run_delay, the second field of /proc/thread-self/schedstat) as
 * it stops; their sum is printed as run_delay_ns.
 */
#include "wl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The spinning thread body, one plain symbol for stack checks. */
void *runq_spin(void *arg) __attribute__((noipa));

static int runq_stop;

/* What a spinner hands back. */
struct runq_result {
	uint64_t loops;
	uint64_t run_delay; /* ns, 0 if schedstat could not be read */
};

/* The calling thread's run_delay (ns) from the kernel, or 0. */
static uint64_t
runq_run_delay(void)
{
	unsigned long long run, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

/* Spin until told to stop; *arg (a struct runq_result) gets the counts. */
void *
runq_spin(void *arg)
{
	struct runq_result *r = arg;
	uint64_t n = 0;

	while (!__atomic_load_n(&runq_stop, __ATOMIC_RELAXED))
		n++;
	r->loops = n;
	r->run_delay = runq_run_delay();
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS]");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i, n;
	struct timespec ts;
	struct runq_result *res;
	uint64_t total = 0, delay = 0;
	pthread_t *th;

	if (cpus < 1)
		cpus = 1;
	n = 4 * cpus;
	th = calloc((size_t)n, sizeof(*th));
	res = calloc((size_t)n, sizeof(*res));
	if (!th || !res)
		wl_die("calloc");
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, runq_spin, &res[i]) != 0)
			wl_die("pthread_create");
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	__atomic_store_n(&runq_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += res[i].loops;
		delay += res[i].run_delay;
	}
	printf("{\"workload\":\"runq\",\"seconds\":%g,\"threads\":%ld,"
	       "\"cpus\":%ld,\"loops\":%llu,\"run_delay_ns\":%llu,"
	       "\"pid\":%d}\n",
	    secs, n, cpus, (unsigned long long)total,
	    (unsigned long long)delay, (int)getpid());
	free(th);
	free(res);
	return 0;
}
