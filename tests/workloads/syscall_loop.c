/* SPDX-License-Identifier: MIT */
/*
 * Workload: one cheap system call, getppid, in a tight loop through
 * syscall(2) (the syscall vital), for the duration and until it made at
 * least CALLS calls (0), so a test can ask for enough calls however slow
 * the machine is; prints the calls and the syscall number it used.
 */
#include "wl.h"

#include <sys/syscall.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [CALLS]]");
	uint64_t least =
	    (uint64_t)wl_int_arg(argc, argv, 2, "CALLS", 0, 1L << 40, 0);
	uint64_t deadline, calls = 0;
	int i;

	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	do {
		for (i = 0; i < 4096; i++)
			syscall(SYS_getppid);
		calls += 4096;
	} while (calls < least || wl_now_ns() < deadline);
	printf("{\"workload\":\"syscall_loop\",\"seconds\":%g,\"calls\":%llu,"
	       "\"nr\":%d,\"pid\":%d}\n",
	    secs, (unsigned long long)calls, (int)SYS_getppid, (int)getpid());
	return 0;
}
