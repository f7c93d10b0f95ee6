/* SPDX-License-Identifier: MIT */
/*
 * diskio probe: block I/O by submitter and issuing site, weighted by bytes.
 * BPF programs on the block_io_start, block_rq_issue and
 * block_rq_complete raw tracepoints keep the sketch in the kernel; only
 * sampled completions (with the submission's stacks) reach vitalsd.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "diskio.skel.h"

/* Parameter slots: the same numbers as probes/diskio.bpf.c. */
#define DISKIO_P_MIN_BYTES 0
#define DISKIO_P_SITE_FRAMES 1

struct diskio_config {
	struct vitals_bpf_opts bpf;
	uint64_t min_bytes;   /* smaller completions are not counted */
	int64_t site_frames;  /* kernel frames walked and hashed into the site */
	int submitter;        /* attribute to the submitter (block_io_start) */
};

struct diskio_state {
	struct diskio_bpf *skel;
	struct vitals_bpf *bpf;
};

static const char *const diskio_tracepoints[] = {
	"block:block_rq_issue", "block:block_rq_complete", NULL
};

static const char *const diskio_submit_tracepoints[] = {
	"block:block_io_start", NULL
};

#define DISKIO_OFF(m) offsetof(struct diskio_config, m)

static const struct vitals_option diskio_options[] = {
	VITALS_BPF_OPTIONS(struct diskio_config, bpf),
	{ "min_bytes", VITALS_OPT_SIZE, DISKIO_OFF(min_bytes), "0",
	  "completions of fewer bytes are not counted (0: count all, "
	  "including zero-byte flushes)", 0, 1073741824 },
	{ "site_frames", VITALS_OPT_INT, DISKIO_OFF(site_frames), "16",
	  "kernel frames of the submission walked, hashed into the issuing "
	  "site and kept in samples (fewer walk faster)", 1, VITALS_BPF_STACK },
	{ "submitter", VITALS_OPT_BOOL, DISKIO_OFF(submitter), "true",
	  "attribute I/O to the task that submitted it (block_io_start, "
	  "kernel >= 6.5); false: to the task that dispatched it "
	  "(block_rq_issue, often a kworker)", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
diskio_available(char *why, size_t len)
{
	return vitals_bpf_available(diskio_tracepoints, why, len);
}

/* Whether block:block_io_start exists here (added in Linux 6.5). */
static int
diskio_has_io_start(void)
{
	char why[128];

	return vitals_bpf_available(diskio_submit_tracepoints, why,
	    sizeof(why)) == 0;
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

static void
diskio_fini(void *state)
{
	struct diskio_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	diskio_bpf__destroy(s->skel);
	free(s);
}

/* Open the object, size its maps and set its parameters, before loading. */
static int
diskio_prepare(struct vitals_ctx *ctx, const struct diskio_config *cf,
    struct diskio_state *s)
{
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "diskio" },
		.units = { "bytes" },
		.fixup = diskio_fixup,
	};
	int io_start = cf->submitter && diskio_has_io_start();
	int r;

	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = diskio_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	if (!io_start)
		bpf_program__set_autoload(s->skel->progs.diskio_io_start, false);
	if (cf->submitter && !io_start)
		vitals_log(ctx, VITALS_LOG_WARN, "no block:block_io_start "
		    "tracepoint (Linux < 6.5): I/O is attributed to the task "
		    "that dispatched it");
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		return r;
	vitals_bpf_set_param(s->bpf, DISKIO_P_MIN_BYTES, cf->min_bytes);
	vitals_bpf_set_param(s->bpf, DISKIO_P_SITE_FRAMES,
	    (uint64_t)cf->site_frames);
	return 0;
}

static int
diskio_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	struct diskio_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	if ((r = diskio_prepare(ctx, config, s)) < 0)
		goto fail;
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	diskio_fini(s);
	return r;
}

static int
diskio_flush(void *state)
{
	struct diskio_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct diskio_config),
	.name = "diskio",
	.version = "0.1.0",
	.description = "block I/O bytes by submitting task and kernel "
	    "issuing site; latency, device, sector and short/failed "
	    "completions in samples (block tracepoints, in-kernel sketch)",
	.options = diskio_options,
	.available = diskio_available,
	.init = diskio_init,
	.fini = diskio_fini,
	.flush = diskio_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
