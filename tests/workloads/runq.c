/* SPDX-License-Identifier: MIT */
/*
 * Workload: 4 x nproc threads spin for the duration, so runnable tasks
 * outnumber CPUs and this executable accumulates run-queue delay (the
 * sched vital).  Each spinner goes on past the duration until it has
 * been preempted SWITCHES times (0; its involuntary context switches),
 * so a test can ask for enough waits however busy the machine is.  Each
 * reads the kernel's own account of its waits (run_delay, the second
 * field of /proc/thread-self/schedstat) as it stops; their sum is
 * printed as run_delay_ns, and the time from start to the last join as
 * elapsed_ns.
 */
#include "wl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The spinning thread body, one plain symbol for stack checks. */
void *runq_spin(void *arg) __attribute__((noipa));

static int runq_stop;

/* What a spinner is given and hands back. */
struct runq_result {
	long least; /* preemptions to wait for past the stop */
	uint64_t loops;
	uint64_t run_delay; /* ns, 0 if schedstat could not be read */
	long preempted; /* its involuntary context switches */
};

/* The calling thread's involuntary context switches. */
static long
runq_preempted(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

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

	for (;;) {
		n++;
		if (!__atomic_load_n(&runq_stop, __ATOMIC_RELAXED) ||
		    (n & 0xfffff) != 0)
			continue;
		if ((r->preempted = runq_preempted()) >= r->least)
			break;
	}
	r->loops = n;
	r->run_delay = runq_run_delay();
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [SWITCHES]]");
	long least = wl_int_arg(argc, argv, 2, "SWITCHES", 0, 1L << 20, 0);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i, n, fewest = -1;
	struct timespec ts;
	struct runq_result *res;
	uint64_t total = 0, delay = 0, start = wl_now_ns();
	pthread_t *th;

	if (cpus < 1)
		cpus = 1;
	n = 4 * cpus;
	th = calloc((size_t)n, sizeof(*th));
	res = calloc((size_t)n, sizeof(*res));
	if (!th || !res)
		wl_die("calloc");
	for (i = 0; i < n; i++) {
		res[i].least = least;
		if (pthread_create(&th[i], NULL, runq_spin, &res[i]) != 0)
			wl_die("pthread_create");
	}
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	__atomic_store_n(&runq_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += res[i].loops;
		delay += res[i].run_delay;
		if (fewest < 0 || res[i].preempted < fewest)
			fewest = res[i].preempted;
	}
	printf("{\"workload\":\"runq\",\"seconds\":%g,\"threads\":%ld,"
	       "\"cpus\":%ld,\"loops\":%llu,\"run_delay_ns\":%llu,"
	       "\"preempted_min\":%ld,\"elapsed_ns\":%llu,\"pid\":%d}\n",
	    secs, n, cpus, (unsigned long long)total, (unsigned long long)delay,
	    fewest, (unsigned long long)(wl_now_ns() - start), (int)getpid());
	free(th);
	free(res);
	return 0;
}
