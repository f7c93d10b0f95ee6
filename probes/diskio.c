/* SPDX-License-Identifier: MIT */
/*
 * diskio probe: block I/O by submitter and issuing site, weighted by bytes.
 * BPF programs on the block_io_start, block_rq_issue and
 * block_rq_complete raw tracepoints keep the sketch in the kernel; only
 * sampled completions (with the submission's stacks) reach vitalsd.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/sysmacros.h>

#include <vitals/bpf.h>

#include "diskio.skel.h"

/* Parameter slots: the same numbers as probes/diskio.bpf.c. */
#define DISKIO_P_MIN_BYTES 0
#define DISKIO_P_SITE_FRAMES 1

struct diskio_config {
	struct vitals_bpf_opts bpf;
	uint64_t min_bytes; /* smaller completions are not counted */
	int64_t site_frames; /* kernel frames walked and hashed into the site */
	int submitter; /* attribute to the submitter (block_io_start) */
};

static const char *const diskio_submit_tracepoints[] = { "block:block_io_start",
	NULL };

#define DISKIO_OFF(m) offsetof(struct diskio_config, m)

static const struct vitals_option diskio_options[] = {
	VITALS_BPF_OPTIONS(struct diskio_config, bpf),
	{ "min_bytes", VITALS_OPT_SIZE, DISKIO_OFF(min_bytes), "0",
	    "completions of fewer bytes are not counted (0: count all, "
	    "including zero-byte flushes)",
	    0, 1073741824 },
	{ "site_frames", VITALS_OPT_INT, DISKIO_OFF(site_frames), "16",
	    "kernel frames of the submission walked, hashed into the issuing "
	    "site and kept in samples (fewer walk faster)",
	    1, VITALS_BPF_STACK },
	{ "submitter", VITALS_OPT_BOOL, DISKIO_OFF(submitter), "true",
	    "attribute I/O to the task that submitted it (block_io_start, "
	    "kernel >= 6.5); false: to the task that dispatched it "
	    "(block_rq_issue, often a kworker)",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

/* Whether block:block_io_start exists here (added in Linux 6.5). */
static int
diskio_has_io_start(void)
{
	char why[128];

	return vitals_bpf_available(
		   diskio_submit_tracepoints, why, sizeof(why)) == 0;
}

/* Samples carry dev as userspace's makedev(major, minor), like st_rdev. */
static int
diskio_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	uint32_t kdev = (uint32_t)r->args[2];

	(void)arg;
	ev->args[2] = (uint64_t)makedev(kdev >> 20, kdev & ((1u << 20) - 1));
	return 0;
}

/* The submitter's program if asked for and there is one; the parameters. */
static int
diskio_setup(struct vitals_bpf_instance *p)
{
	const struct diskio_config *cf = p->config;
	struct diskio_bpf *skel = p->skel;
	int io_start = cf->submitter && diskio_has_io_start();

	if (!io_start)
		bpf_program__set_autoload(skel->progs.diskio_io_start, false);
	if (cf->submitter && !io_start)
		vitals_log(p->ctx, VITALS_LOG_WARN,
		    "no block:block_io_start "
		    "tracepoint (Linux < 6.5): I/O is attributed to the task "
		    "that dispatched it");
	p->param[DISKIO_P_MIN_BYTES] = cf->min_bytes;
	p->param[DISKIO_P_SITE_FRAMES] = (uint64_t)cf->site_frames;
	return 0;
}

VITALS_BPF_PROBE(diskio, "0.1.0",
    "block I/O bytes by submitting task and "
    "kernel issuing site; latency, device, sector and short/failed "
    "completions in samples (block tracepoints, in-kernel sketch)",
    struct diskio_config, diskio_options, .vitals = { { "diskio", "bytes" } },
    .tracepoints = { "block:block_rq_issue", "block:block_rq_complete" },
    .setup = diskio_setup, .fixup = diskio_fixup);
