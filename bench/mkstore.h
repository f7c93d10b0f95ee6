/* SPDX-License-Identifier: MIT */
/*
 * What bench/mkstore.c (the store generator) and bench/mkfaults.c (the
 * faults it injects for each filter with --faults) share: the options,
 * the simulated exes, and injected streams of events.  Not installed.
 */
#ifndef VITALS_BENCH_MKSTORE_H
#define VITALS_BENCH_MKSTORE_H

#include <jansson.h>
#include <stdint.h>

#include <vitals/hash.h>
#include <vitals/vitals.h>

#define MK_NS 1000000000ull
#define MK_MAX_VITALS 16
#define MK_MAX_HOSTS 4096
#define MK_EXES 8
#define MK_UBASE 0x400000ull
#define MK_KBASE 0xffffffff81000000ull
#define MK_PAGE 4096ull /* bytes per page, for free memory */
#define MK_UID 1000
#define MK_NFAULTS 9 /* kinds of fault --faults injects */
/* The vitals of a --faults store unless --vitals says otherwise. */
#define MKF_VITALS "cpu,blocking,diskio,kmem,kmem_free,umem,syscall,signal"

struct mk_opts {
	const char *out;
	const char *manifest;
	uint64_t span_ns; /* --days / --span */
	uint64_t epoch_ns;
	uint64_t start_ns; /* 0 = end at the last boundary before now */
	uint32_t nhosts;
	char *hosts[MK_MAX_HOSTS];
	uint32_t nvitals;
	char *vitals[MK_MAX_VITALS];
	uint64_t seed;
	uint64_t rate; /* events per second per vital */
	uint32_t labels;
	double zipf;
	uint32_t max_samples;
	char *odd; /* --odd: the host that differs, else NULL */
	double odd_scale; /* its regular rates times this */
	int clean; /* no anomalies */
	int faults; /* inject one fault per filter instead (mkfaults.c) */
	int quiet;
	int proc; /* --proc: the proc probe's metrics, each second */
	int32_t disk_fault; /* host index with a slow disk, -1 = none */
	int32_t net_fault; /* host index with a cut network, -1 = none */
	double fault_at; /* share of the epochs before the faults start */
};

/* A simulated executable. */
struct mk_exe {
	char path[32];
	char comm[16];
	uint32_t id; /* exe_id: hash of the path */
	uint32_t pid;
};

/*
 * Events injected into one vital during one epoch, spread evenly over it
 * between the regular ones.  Event j has label label + (j % nlabels) *
 * 0x100; its weight, op, args and kernel frames are the vital's usual
 * (mk_event) unless set here.
 */
struct mk_extra {
	uint64_t n; /* events */
	uint64_t label; /* first label */
	uint32_t nlabels; /* labels used in turn, >= 1 */
	const struct mk_exe *x; /* whose events */
	uint64_t weight; /* each event's weight; 0 = the vital's usual */
	int64_t op; /* the op; -1 = the vital's usual */
	int set_args; /* args below replace the usual ones */
	uint64_t args[VITALS_NARGS];
	int at_end; /* all at the epoch's last nanosecond, after the rest */
};

/* Most extra streams in one vital and epoch. */
#define MK_MAX_EXTRA 4

/*
 * How one vital's regular stream is changed in one epoch: its rate, exes
 * left out (bit i = exe i of the synthetic set), exes whose events are
 * repeated `boost` times in all (bit set in boosted), and extra streams.
 */
struct mk_change {
	double scale; /* regular events times this (1 = as usual) */
	uint32_t absent; /* exes with no event */
	uint32_t boosted; /* exes whose events are repeated */
	uint32_t boost; /* times each of their events is emitted, >= 1 */
	uint32_t nextra;
	struct mk_extra extra[MK_MAX_EXTRA];
};

/* One default anomaly (mkstore.c; none with --faults or --clean). */
struct mk_anomaly {
	int kind;
	int vital; /* index in opts vitals, -1 = all */
	uint64_t first, n; /* epochs [first, first + n) */
	double factor;
};
#define MK_NKINDS 4 /* default anomalies */

struct mkf; /* the fault plan of mkfaults.c */

struct mk {
	struct mk_opts o;
	uint64_t nepochs;
	double *cdf;
	struct mk_exe exes[MK_EXES], rogue;
	struct mk_anomaly an[MK_NKINDS];
	int nan;
	uint32_t odd; /* the host with the default anomalies (--odd; 0) */
	uint64_t rogue_label; /* the cpu burst's label */
	uint64_t new_label; /* the new dominating label */
	struct config *cfg;
	struct mkf *faults; /* with --faults, else NULL */
};

/* The cumulative Zipf share of labels ranks 0..r (cdf[labels - 1] = 1). */
double mk_share(const struct mk *m, uint32_t r);

/* The Zipf share of all labels of synthetic exe e (ranks r, r % 8 == e). */
double mk_exe_share(const struct mk *m, uint32_t e);

/* Mean weight of one regular event of vital name. */
double mk_mean_weight(const char *vital);

/*
 * The first label from `from` on (in steps of 0x100) of exe x whose HCA
 * slot no regular label shares, so that an injected label stands alone
 * in its counter and its samples name it.
 */
uint64_t mk_free_label(
    const struct mk *m, uint64_t from, const struct mk_exe *x);

/* Fill x as the exe at path (comm: its base name; id: hash; pid). */
void mk_exe_init(struct mk_exe *x, const char *path);

/* Index of vital name in the options, or -1. */
int mk_vital_index(const struct mk *m, const char *name);

/* ---- mkfaults.c ---- */

/*
 * Plan the faults of --faults on m (after the exes and epochs are set):
 * each at known epochs, exe and label, spaced along the store.  Returns
 * 0, -ENOMEM, or -EINVAL with a message on stderr when the store is too
 * short or lacks a vital a fault needs.
 */
int mkf_plan(struct mk *m);

/* Free the plan; accepts NULL. */
void mkf_free(struct mkf *f);

/*
 * Add the faults' changes to host h's vital vi in epoch i, whose regular
 * stream has `regular` events (none on hosts other than the first, nor
 * with --clean).
 */
void mkf_changes(const struct mk *m, uint32_t h, int vi, uint64_t i,
    uint64_t regular, struct mk_change *c);

/* Free memory (bytes) on host h at time ts, leaks included. */
uint64_t mkf_free_memory(const struct mk *m, uint32_t h, uint64_t ts);

/* Append the manifest entries of the faults to array a.  0 or -ENOMEM. */
int mkf_manifest(const struct mk *m, json_t *a);

#endif /* VITALS_BENCH_MKSTORE_H */
