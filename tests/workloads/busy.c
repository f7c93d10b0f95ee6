/* SPDX-License-Identifier: MIT */
/*
 * Workload: CPU-bound for the duration inside one out-of-line function,
 * busy_loop, whose PC range `nm -S` gives, so a test can check that the
 * cpu vital's samples land in it.  With "cpu" after the duration, it is
 * of the process's own CPU time (ITIMER_PROF), however busy the machine
 * is.  Prints its run-time address and the CPU time it used too.
 */
#include "wl.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

/* The loop the cpu probe test looks for; noipa keeps it one plain symbol. */
uint64_t busy_loop(void) __attribute__((noipa));

static volatile sig_atomic_t busy_stop;
static volatile uint64_t busy_sink;

static void
busy_alarm(int sig)
{
	(void)sig;
	busy_stop = 1;
}

/* Spin until an interval timer fires; returns the iterations done. */
uint64_t
busy_loop(void)
{
	uint64_t n = 0, x = 1;

	while (!busy_stop) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		n++;
	}
	busy_sink = x;
	return n;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [cpu]]");
	int cpu = wl_cpu_arg(argc, argv, 2);
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = busy_alarm };
	uint64_t loops;

	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec =
	    (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	if (sigaction(cpu ? SIGPROF : SIGALRM, &sa, NULL) < 0 ||
	    setitimer(cpu ? ITIMER_PROF : ITIMER_REAL, &it, NULL) < 0)
		wl_die("timer");
	loops = busy_loop();
	printf("{\"workload\":\"busy\",\"seconds\":%g,\"clock\":\"%s\","
	       "\"loops\":%llu,\"cpu_ns\":%llu,\"busy_loop\":\"%#lx\","
	       "\"pid\":%d}\n",
	    secs, cpu ? "cpu" : "wall", (unsigned long long)loops,
	    (unsigned long long)wl_cpu_ns(),
	    (unsigned long)(uintptr_t)busy_loop, (int)getpid());
	return 0;
}
