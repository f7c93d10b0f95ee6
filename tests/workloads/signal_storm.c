/* SPDX-License-Identifier: MIT */
/*
 * Workload: sends itself SIGUSR1 in a loop; a handler counts deliveries
 * (the signal vital).  A self-sent unblocked signal is delivered before
 * kill() returns, so handled equals sent.
 */
#include "wl.h"

#include <signal.h>
#include <unistd.h>

static volatile uint64_t signal_storm_handled;

static void
signal_storm_handler(int sig)
{
	(void)sig;
	signal_storm_handled++;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS]");
	struct sigaction sa = { .sa_handler = signal_storm_handler };
	uint64_t deadline, sent = 0;
	pid_t self = getpid();
	int i;

	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		wl_die("sigaction");
	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	do {
		for (i = 0; i < 1024; i++)
			if (kill(self, SIGUSR1) < 0)
				wl_die("kill");
		sent += 1024;
	} while (wl_now_ns() < deadline);
	printf("{\"workload\":\"signal_storm\",\"seconds\":%g,\"sent\":%llu,"
	       "\"handled\":%llu,\"signal\":%d,\"pid\":%d}\n",
	    secs, (unsigned long long)sent,
	    (unsigned long long)signal_storm_handled, SIGUSR1, (int)self);
	return 0;
}
