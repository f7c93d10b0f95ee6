/* SPDX-License-Identifier: MIT */
/*
 * perf_event sampling for the sampling vitals (cpu, cache): one event per
 * online CPU, to which the probe attaches its BPF program, so samples are
 * counted in the in-kernel sketch like tracepoint events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <vitals/bpf.h>

static int
perf_online(int cpu)
{
	char p[96];
	FILE *f;
	int c = '1';

	if (cpu == 0)
		return 1; /* cpu0 often has no "online" file */
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if ((f = fopen(p, "r")) == NULL)
		return 1;
	c = fgetc(f);
	fclose(f);
	return c == '1';
}

int
vitals_perf_open(int hw, uint64_t config, uint64_t freq_hz, int *fds, int max)
{
	struct perf_event_attr a;
	int ncpu, cpu, fd, opened = 0, err = 0;

	ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu > max)
		ncpu = max;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a.config = hw ? config : PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = freq_hz;
	for (cpu = 0; cpu < ncpu; cpu++) {
		fds[cpu] = -1;
		if (!perf_online(cpu))
			continue;
		fd = (int)syscall(
		    SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = errno;
			continue;
		}
		fds[cpu] = fd;
		opened++;
	}
	if (opened == 0) {
		if (err == ENOENT || err == EOPNOTSUPP || err == EINVAL)
			return -ENOENT;
		return -(err ? err : ENODEV);
	}
	return ncpu;
}
