/* SPDX-License-Identifier: MIT */
/*
 * Workload: the main thread blocks reading a pipe that a second thread
 * writes one byte to every 100 ms, so the process spends nearly all its
 * time off-CPU in pipe_read (the blocking vital).
 */
#include "wl.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define PIPE_SLEEPER_MS 100

struct pipe_sleeper {
	int wfd;
	uint64_t deadline;
	uint64_t writes;
};

static void *
pipe_sleeper_writer(void *arg)
{
	struct pipe_sleeper *ps = arg;
	struct timespec ts = { 0, PIPE_SLEEPER_MS * 1000000L };
	char c = 'x';

	while (wl_now_ns() + PIPE_SLEEPER_MS * 1000000ULL <= ps->deadline) {
		nanosleep(&ts, NULL);
		if (write(ps->wfd, &c, 1) != 1)
			break;
		ps->writes++;
	}
	close(ps->wfd);
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS]");
	struct pipe_sleeper ps;
	uint64_t reads = 0;
	pthread_t th;
	int fds[2];
	char c;

	if (pipe(fds) < 0)
		wl_die("pipe");
	ps.wfd = fds[1];
	ps.writes = 0;
	ps.deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	if (pthread_create(&th, NULL, pipe_sleeper_writer, &ps) != 0)
		wl_die("pthread_create");
	while (read(fds[0], &c, 1) == 1)
		reads++;
	pthread_join(th, NULL);
	printf("{\"workload\":\"pipe_sleeper\",\"seconds\":%g,\"reads\":%llu,"
	       "\"interval_ms\":%d,\"pid\":%d}\n",
	    secs, (unsigned long long)reads, PIPE_SLEEPER_MS, (int)getpid());
	return 0;
}
