/* SPDX-License-Identifier: MIT */
/*
 * sched probe: run-queue delay by process (sched) and time off-CPU by the
 * site a thread slept at: waiting for a resource (blocking) or for an
 * event (wait), from a BPF program on the sched_switch BTF tracepoint
 * that keeps the sketches in the kernel.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>
#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "sched.h"
#include "sched.skel.h"

struct sched_config {
	struct vitals_bpf_opts bpf;
	struct vitals_strlist vitals; /* of "sched", "blocking", "wait" */
	uint64_t min_delay; /* ns */
	uint64_t min_block; /* ns */
	int64_t site_frames; /* kernel frames naming a blocking site */
	int ustack; /* keep user stacks of sleeping threads */
};

#define SCHED_OFF(m) offsetof(struct sched_config, m)

/* clang-format off */
static const struct vitals_option sched_options[] = {
	VITALS_BPF_OPTIONS(struct sched_config, bpf),
	{ .key = "vitals", .type = VITALS_OPT_STRLIST,
	    .offset = SCHED_OFF(vitals), .def = "sched,blocking,wait",
	    .help = "vitals to count: sched (run-queue delay); blocking "
	    "(time off-CPU waiting for a resource: a sleep begun in "
	    "uninterruptible state, D, as for disk I/O, a page being read "
	    "in or a sleeping lock); wait (time off-CPU waiting for an "
	    "event: an interruptible sleep, as in an idle read of a pipe or "
	    "socket, poll, epoll, futex, wait4 or nanosleep, or TASK_IDLE, a "
	    "kernel thread waiting for work). The state the thread left the "
	    "CPU in decides; a vital left out is not counted" },
	{ .key = "min_delay", .type = VITALS_OPT_DURATION,
	    .offset = SCHED_OFF(min_delay), .def = "100us",
	    .help = "shorter run-queue delays are not counted",
	    .min = 0, .max = 60 },
	{ .key = "min_block", .type = VITALS_OPT_DURATION,
	    .offset = SCHED_OFF(min_block), .def = "1ms",
	    .help = "shorter times off-CPU (blocking, wait) are not counted",
	    .min = 0, .max = 3600 },
	{ .key = "site_frames", .type = VITALS_OPT_INT,
	    .offset = SCHED_OFF(site_frames), .def = "6",
	    .help = "top kernel frames hashed into a blocking or wait site",
	    .min = 1, .max = VITALS_BPF_STACK },
	{ .key = "ustack", .type = VITALS_OPT_BOOL,
	    .offset = SCHED_OFF(ustack), .def = "false",
	    .help = "unwind the user stack of every thread going to sleep, "
	    "for blocking and wait samples (~4x the cost per context "
	    "switch); off: only the user PC of the blocking call" },
	{ .key = NULL }
};
/* clang-format on */

/* Drop the zero frames a user stack walk may end with. */
static int
sched_fixup(void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev)
{
	(void)arg;
	(void)r;
	while (ev->nustack > 0 && ev->ustack[ev->nustack - 1] == 0)
		ev->nustack--;
	return 0;
}

/* `vitals` names some of sched, blocking, wait. */
static int
sched_check(const void *config, char *why, size_t len)
{
	const struct sched_config *cf = config;
	uint32_t i;

	for (i = 0; i < cf->vitals.n; i++) {
		if (strcmp(cf->vitals.v[i], "sched") != 0 &&
		    strcmp(cf->vitals.v[i], "blocking") != 0 &&
		    strcmp(cf->vitals.v[i], "wait") != 0) {
			snprintf(why, len,
			    "vitals: unknown vital '%s' "
			    "(this probe counts sched, blocking and wait)",
			    cf->vitals.v[i]);
			return -EINVAL;
		}
	}
	if (cf->vitals.n == 0) {
		snprintf(why, len,
		    "vitals: empty (give some of sched, blocking, wait)");
		return -EINVAL;
	}
	return 0;
}

/* The vitals the probe counts, in the order of struct sched_ids. */
static const char *const sched_names[] = { "sched", "blocking", "wait" };

/* Each vital's index in the spec + 1, or 0 when not counted. */
struct sched_ids {
	uint64_t sched, blocking, wait;
};

/*
 * The spec's vitals from the option (checked by sched_check).  With
 * no_sched, the sched vital is left out (the kernel cannot give it).
 */
static void
sched_vitals(const struct vitals_strlist *l, bool no_sched,
    struct vitals_bpf_spec *spec, struct sched_ids *ids)
{
	uint64_t *id[] = { &ids->sched, &ids->blocking, &ids->wait };
	uint32_t i, k;

	memset(ids, 0, sizeof(*ids));
	spec->nvitals = 0;
	for (i = 0; i < l->n; i++)
		for (k = 0; k < 3; k++)
			if (strcmp(l->v[i], sched_names[k]) == 0 &&
			    *id[k] == 0 && (k != 0 || !no_sched)) {
				spec->vitals[spec->nvitals] = sched_names[k];
				*id[k] = ++spec->nvitals;
			}
	for (i = 0; i < spec->nvitals; i++)
		spec->units[i] = "ns";
}

/* Whether kernel BTF has member m in struct s. */
static bool
sched_btf_member(const struct btf *btf, const char *s, const char *m)
{
	const struct btf_member *mb;
	const struct btf_type *t;
	int id, i;

	if ((id = btf__find_by_name_kind(btf, s, BTF_KIND_STRUCT)) < 0 ||
	    (t = btf__type_by_id(btf, (uint32_t)id)) == NULL)
		return false;
	mb = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, mb++)
		if (strcmp(btf__name_by_offset(btf, mb->name_off), m) == 0)
			return true;
	return false;
}

/*
 * The kernel's run-queue stamps the sched vital reads, through BTF; NULL
 * if present (or if there is no BTF, which vitals_bpf_available reports).
 */
static const char *
sched_missing_stamps(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *missing = NULL;

	if (btf == NULL)
		return NULL;
	if (!sched_btf_member(btf, "sched_info", "last_queued"))
		missing =
		    "task_struct.sched_info.last_queued (CONFIG_SCHED_INFO)";
	else if (!sched_btf_member(btf, "cfs_rq", "rq"))
		missing = "cfs_rq.rq (CONFIG_FAIR_GROUP_SCHED)";
	btf__free(btf);
	return missing;
}

/*
 * Before load: the vitals asked for (checked by sched_check), but sched
 * only where the kernel keeps run-queue stamps (without them the delay
 * could be counted only for some preemptions: it is left out rather than
 * counted so), and the programs' parameters.
 */
static int
sched_setup(struct vitals_bpf_instance *p)
{
	const struct sched_config *cf = p->config;
	const char *missing;
	struct sched_ids ids;

	sched_vitals(&cf->vitals, false, &p->spec, &ids);
	if (ids.sched != 0 && (missing = sched_missing_stamps()) != NULL) {
		if (ids.blocking == 0 && ids.wait == 0) {
			vitals_error(p->ctx,
			    "vitals: sched needs the kernel's "
			    "run-queue stamps, and this kernel has no %s",
			    missing);
			return -ENOTSUP;
		}
		vitals_log(p->ctx, VITALS_LOG_WARN,
		    "this kernel has no %s: "
		    "counting blocking and wait only, not sched",
		    missing);
		sched_vitals(&cf->vitals, true, &p->spec, &ids);
	}
	p->param[SCHED_P_MIN_DELAY] = cf->min_delay;
	p->param[SCHED_P_MIN_BLOCK] = cf->min_block;
	p->param[SCHED_P_SCHED] = ids.sched;
	p->param[SCHED_P_BLOCKING] = ids.blocking;
	p->param[SCHED_P_WAIT] = ids.wait;
	p->param[SCHED_P_SITE_FRAMES] = (uint64_t)cf->site_frames;
	p->param[SCHED_P_USTACK] =
	    cf->ustack && (ids.blocking != 0 || ids.wait != 0);
	return 0;
}

VITALS_BPF_PROBE(sched, "0.1.0",
    "run-queue delay by process (sched) and "
    "time off-CPU by the site slept at, waiting for a resource (blocking: "
    "D state) or for an event (wait), from the sched_switch BTF "
    "tracepoint, in-kernel sketches; the delay is the kernel's own "
    "(sched_info): from being queued (woken, preempted or forked) to "
    "switch-in, not from the last run as in the paper",
    struct sched_config, sched_options,
    .vitals = { { "sched", "ns" }, { "blocking", "ns" }, { "wait", "ns" } },
    .tracepoints = { "sched:sched_switch" }, .check = sched_check,
    .setup = sched_setup, .fixup = sched_fixup);
