/* SPDX-License-Identifier: MIT */
/*
 * The capabilities vitalsd keeps when it runs as root: what its probes,
 * filters and outputs need, and nothing else, so that a flaw in what it
 * parses (epochs, configuration, HTTP) cannot use the rest of root.
 */
#ifndef VITALS_DAEMON_CAPS_H
#define VITALS_DAEMON_CAPS_H

#include <stddef.h>

/*
 * Drop every capability but BPF, PERFMON, SYS_ADMIN (BPF run-time
 * statistics), SYS_PTRACE and DAC_READ_SEARCH (other processes' files
 * under /proc), SYSLOG (kernel symbol addresses) and SYS_RESOURCE
 * (memlock on old kernels) from the bounding, permitted, effective and
 * inheritable sets of this thread, and so of the threads it starts.
 * Call it before starting any thread.  Does nothing unless the effective
 * user is root.  Returns 0, or a negative errno with the reason in err.
 */
int caps_drop(char *err, size_t len);

/* The kept set's names, for messages: "bpf perfmon ...". */
extern const char caps_kept[];

#endif /* VITALS_DAEMON_CAPS_H */
