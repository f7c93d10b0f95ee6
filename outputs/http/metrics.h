/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus exposition of the http output (/metrics): an accumulator
 * fed with closed epochs, rendered as the text format 0.0.4.  Self-contained:
 * no libevent, no state outside struct metrics.  doc/metrics.md lists every
 * family it exports.
 */
#ifndef VITALS_OUTPUTS_HTTP_METRICS_H
#define VITALS_OUTPUTS_HTTP_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* The Content-Type to serve metrics_render's text with. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Default of the http output's `metrics_top` option. */
#define METRICS_TOPK_DEFAULT 10

/* Bits of struct metrics_daemon.have: which of its fields are known. */
#define METRICS_HAVE_BPF_RUN 0x1u /* bpf_run_ns and bpf_run_count */
#define METRICS_HAVE_BACKLOG 0x2u /* store_backlog_bytes */
#define METRICS_HAVE_START 0x4u /* start_ns */

/*
 * Numbers about the daemon that a closed epoch does not carry, which the
 * server passes when it has them.  A field is exported only when its bit
 * is set in have; the others are left out rather than shown as 0.
 */
struct metrics_daemon {
	uint32_t have; /* METRICS_HAVE_* */
	/*
	 * Run time and runs of the probes' BPF programs since they were
	 * loaded, summed over the programs (bpf_prog_info run_time_ns and
	 * run_cnt; the kernel counts them only while kernel.bpf_stats_enabled
	 * is 1).  Epochs have this time only inside cpu_ns.
	 */
	uint64_t bpf_run_ns;
	uint64_t bpf_run_count;
	/* Encoded epochs held back from the store (a full disk), in bytes. */
	uint64_t store_backlog_bytes;
	/* When the daemon started, CLOCK_REALTIME nanoseconds. */
	uint64_t start_ns;
};

struct metrics;

/*
 * A new, empty accumulator exporting the topk heaviest exes of each vital
 * (0: none).  Owned by the caller, freed with metrics_free.  NULL when
 * memory runs out.
 */
struct metrics *metrics_new(uint32_t topk);

/* Free an accumulator and all it holds; accepts NULL. */
void metrics_free(struct metrics *m);

/*
 * Account one closed base epoch, borrowed for the call (nothing of it is
 * kept): counters add its numbers to those since metrics_new, gauges take
 * its values, and the vitals, metrics and exes absent from it lose their
 * gauges.  Epochs are expected in order and of one host (see
 * doc/metrics.md, "Hosts").  Returns 0, or -ENOMEM with m as it was.
 */
int metrics_epoch(struct metrics *m, const struct vitals_epoch *e);

/*
 * Replace the daemon's numbers (copied) that the next renders export.
 */
void metrics_daemon(struct metrics *m, const struct metrics_daemon *d);

/*
 * Render everything accounted so far in the Prometheus text format
 * (version 0.0.4; serve it with METRICS_CONTENT_TYPE).  On success sets
 * *out to a NUL-terminated string of *len bytes (NUL excluded), malloc'd
 * and owned by the caller, who frees it.  Returns 0 or -ENOMEM (then *out
 * and *len are untouched).
 */
int metrics_render(const struct metrics *m, char **out, size_t *len);

struct vitals_node_list;

/*
 * The state of the nodes a central pulls from (the remote output's, in
 * the store: vitals_nodes_load) as the vitals_remote_* families, labelled
 * by node URL, into a malloc'd text (the caller's).  Returns 0 or -ENOMEM.
 */
int metrics_nodes(
    const struct vitals_node_list *l, uint64_t now_ns, char **out, size_t *len);

#endif /* VITALS_OUTPUTS_HTTP_METRICS_H */
