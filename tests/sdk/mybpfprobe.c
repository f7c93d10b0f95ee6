/* SPDX-License-Identifier: MIT */
/*
 * A third-party BPF probe built out of the tree against the installed SDK
 * (tests/sdk.sh): forks, by forking process.  Its descriptor is all of it.
 */
#include <vitals/bpf.h>

#include "mybpfprobe.skel.h"

VITALS_BPF_PROBE(mybpfprobe, "1.0",
    "forks by forking process "
    "(sched:sched_process_fork, in-kernel sketch)",
    struct vitals_bpf_opts, vitals_bpf_options,
    .vitals = { { "forks", "forks" } },
    .tracepoints = { "sched:sched_process_fork" });
