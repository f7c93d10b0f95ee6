/* SPDX-License-Identifier: MIT */
/*
 * One operation in a loop for a given time, for benches that start their
 * monitors from outside (bench/bcc.sh): a null syscall, fork+exec of
 * /bin/true, a pipe ping-pong between two processes on one CPU, or a 4 KiB
 * write + fsync.  Prints one line: the operations, wall and CPU time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OPS_BLOCK 4096 /* bytes per write before each fsync */

static uint64_t
ops_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t
ops_tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL +
	    (uint64_t)tv.tv_usec * 1000ULL;
}

/* User + system time of the process and of the children it waited for. */
static uint64_t
ops_cpu(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return ops_tv_ns(s.ru_utime) + ops_tv_ns(s.ru_stime) +
	    ops_tv_ns(c.ru_utime) + ops_tv_ns(c.ru_stime);
}

static void
ops_die(const char *what)
{
	fprintf(stderr, "ops: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t
ops_null(uint64_t deadline)
{
	uint64_t n = 0;
	int i;

	do {
		for (i = 0; i < 1024; i++)
			syscall(SYS_getppid);
		n += 1024;
	} while (ops_now() < deadline);
	return n;
}

static uint64_t
ops_exec(uint64_t deadline)
{
	uint64_t n = 0;
	pid_t p;
	int st;

	do {
		if ((p = fork()) < 0)
			ops_die("fork");
		if (p == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			ops_die("/bin/true");
		n++;
	} while (ops_now() < deadline);
	return n;
}

/* Both ends on the CPU the parent runs on: each round trip switches twice. */
static uint64_t
ops_pipe(uint64_t deadline)
{
	int ping[2], pong[2], st;
	uint64_t n = 0;
	cpu_set_t one;
	char c = 0;
	pid_t p;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		ops_die("sched_setaffinity");
	if (pipe(ping) < 0 || pipe(pong) < 0)
		ops_die("pipe");
	if ((p = fork()) < 0)
		ops_die("fork");
	if (p == 0) {
		close(ping[1]);
		close(pong[0]);
		while (read(ping[0], &c, 1) == 1 && write(pong[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	do {
		for (int i = 0; i < 64; i++)
			if (write(ping[1], &c, 1) != 1 ||
			    read(pong[0], &c, 1) != 1)
				ops_die("pipe round trip");
		n += 64;
	} while (ops_now() < deadline);
	close(ping[1]);
	waitpid(p, &st, 0);
	return n;
}

static uint64_t
ops_fsync(uint64_t deadline, const char *dir)
{
	char path[4096], buf[OPS_BLOCK];
	uint64_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/ops-fsync-%d.dat", dir, (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		ops_die(path);
	memset(buf, 0xa5, sizeof(buf));
	do {
		/* 64 blocks rewritten in turn: the file stays small. */
		if (pwrite(fd, buf, sizeof(buf), (off_t)(n % 64) * OPS_BLOCK) !=
			(ssize_t)sizeof(buf) ||
		    fsync(fd) < 0)
			ops_die(path);
		n++;
	} while (ops_now() < deadline);
	close(fd);
	unlink(path);
	return n;
}

int
main(int argc, char **argv)
{
	uint64_t t0, c0, n, wall, cpu, deadline;
	const char *mode = argc > 1 ? argv[1] : "";
	long ms = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (ms <= 0 || (strcmp(mode, "fsync") == 0 && argc < 4)) {
		fprintf(stderr,
		    "usage: ops null|exec|pipe|fsync MS [DIR]\n"
		    "prints: MODE OPS WALL_NS CPU_NS (CPU of the "
		    "process and its children)\n");
		return 2;
	}
	c0 = ops_cpu();
	t0 = ops_now();
	deadline = t0 + (uint64_t)ms * 1000000ULL;
	if (strcmp(mode, "null") == 0)
		n = ops_null(deadline);
	else if (strcmp(mode, "exec") == 0)
		n = ops_exec(deadline);
	else if (strcmp(mode, "pipe") == 0)
		n = ops_pipe(deadline);
	else if (strcmp(mode, "fsync") == 0)
		n = ops_fsync(deadline, argv[3]);
	else {
		fprintf(stderr, "ops: unknown mode %s\n", mode);
		return 2;
	}
	wall = ops_now() - t0;
	cpu = ops_cpu() - c0;
	printf("%s %llu %llu %llu\n", mode, (unsigned long long)n,
	    (unsigned long long)wall, (unsigned long long)cpu);
	return 0;
}
