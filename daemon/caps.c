/* SPDX-License-Identifier: MIT */
/*
 * vitalsd's capabilities (daemon/caps.h): the bounding set with prctl,
 * then the thread's sets with capset, by the raw system calls (no
 * libcap).  The same list is the unit's CapabilityBoundingSet
 * (conf/vitalsd.service.in); tests/unit.sh checks both.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static const int caps_keep[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN,
	CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG, CAP_SYS_RESOURCE };

const char caps_kept[] =
    "bpf perfmon sys_admin sys_ptrace dac_read_search syslog sys_resource";

/* The kept set as a mask. */
static uint64_t
caps_mask(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < sizeof(caps_keep) / sizeof(caps_keep[0]); i++)
		m |= 1ull << caps_keep[i];
	return m;
}

int
caps_drop(char *err, size_t len)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct data[2];
	uint64_t keep = caps_mask(), eff, perm;
	int cap;

	if (geteuid() != 0)
		return 0;
	/* Bounding first: dropping it takes CAP_SETPCAP, dropped below. */
	for (cap = 0; cap <= 63; cap++) {
		if (keep & (1ull << cap))
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
			break; /* past the kernel's last capability */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EPERM) {
			snprintf(err, len,
			    "dropping capability %d from the "
			    "bounding set: %s",
			    cap, strerror(errno));
			return -errno;
		}
	}
	if (syscall(SYS_capget, &hdr, data) < 0) {
		snprintf(err, len, "capget: %s", strerror(errno));
		return -errno;
	}
	eff = ((uint64_t)data[1].effective << 32 | data[0].effective) & keep;
	perm = ((uint64_t)data[1].permitted << 32 | data[0].permitted) & keep;
	data[0].effective = (uint32_t)eff;
	data[1].effective = (uint32_t)(eff >> 32);
	data[0].permitted = (uint32_t)perm;
	data[1].permitted = (uint32_t)(perm >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data) < 0) {
		snprintf(err, len, "capset: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
