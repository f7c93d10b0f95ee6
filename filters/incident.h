/* SPDX-License-Identifier: MIT */
/*
 * What a finding's severity means, in one place for every filter
 * (doc/findings.md): a condition seen once is info; it becomes an incident,
 * reported once at warn (or crit), when it holds in k of the last 2k-1
 * epochs or is unambiguous; the incident's later epochs are updates and its
 * end closes it, both at info.  Also the least change of each vital, per
 * second, that is large enough to warn about (a share of the machine).
 * Compiled into the filters that need it, like labels.c.
 */
#ifndef VITALS_FILTERS_INCIDENT_H
#define VITALS_FILTERS_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

/* Most epochs of persistence (k) an incident may need. */
#define INCIDENT_K_MAX 8

/* What incident_step decided for one key at one epoch. */
#define INCIDENT_QUIET 0 /* nothing to say */
#define INCIDENT_NOTE 1 /* held, not (yet) an incident: info */
#define INCIDENT_START 2 /* an incident starts: its severity */
#define INCIDENT_UPDATE 3 /* it goes on, grown or escalated: info or more */
#define INCIDENT_ON 4 /* it goes on (or paused), nothing new: no finding */
#define INCIDENT_END 5 /* it is over (it was a warning or worse): info */

/*
 * One condition a filter watches (a vital and an exe, a rule and an exe),
 * at one timescale.  The incident's findings all carry the filter's vital
 * and label and start_ns: its stable key.
 */
struct incident {
	uint32_t timescale_s;
	char *key; /* the filter's key, owned */
	char *vital, *label; /* as its findings name them, owned; may be NULL */
	uint64_t hist; /* bit 0: held at the newest epoch stepped */
	uint64_t tick; /* start_ns of the newest epoch stepped */
	uint64_t
	    first_ns; /* start of the first epoch of this run of sightings */
	uint64_t start_ns; /* start of the incident (its findings' range) */
	uint32_t severity; /* reported severity, 0 = no incident open */
	uint32_t epochs; /* epochs it held since it started */
	double peak; /* largest magnitude reported */
	double last; /* magnitude at the newest epoch it held */
};

/* The incidents of one filter instance, at every timescale. */
struct incidents {
	uint32_t k; /* epochs of 2k-1 a statistical condition must hold */
	uint32_t n, cap;
	struct incident *v;
};

/* What a step reports to the filter. */
struct incident_out {
	int what; /* INCIDENT_* */
	uint32_t severity; /* of the finding to emit */
	uint64_t start_ns; /* range start of the finding to emit */
	uint32_t epochs; /* epochs the incident held (START, UPDATE, END) */
	double peak; /* largest magnitude it had */
};

/*
 * Step key (at q's timescale, at q's newest epoch): whether the condition
 * held (held), with what magnitude (any positive scale, for "grown"), the
 * severity an incident would have (sev, VITALS_SEV_WARN or _CRIT) and the
 * epochs of 2k-1 it must hold first: need = s->k for a statistical
 * condition, 1 for an unambiguous one.  vital and label are copied for
 * the incident's end.  Returns 0 with *out filled, or -ENOMEM.
 */
int incident_step(struct incidents *s, const struct vitals_queue *q,
    const char *key, const char *vital, const char *label, int held,
    double magnitude, uint32_t sev, uint32_t need, struct incident_out *out);

/*
 * The incident (or watched condition) of key at timescale ts, or NULL.
 * Borrowed; valid until the next step or sweep.
 */
const struct incident *incident_find(
    const struct incidents *s, uint32_t ts, const char *key);

/*
 * Move the start of the incident of key at ts back to start_ns (its
 * findings' range start), when its condition covers earlier epochs than
 * the ones it held in (a leak's window); later findings use it.
 */
void incident_started(
    struct incidents *s, uint32_t ts, const char *key, uint64_t start_ns);

/*
 * Whether an incident whose key starts with prefix is open at ts, or
 * ended within the last 2k-1 epochs (the change back is part of it).
 */
int incident_recent(const struct incidents *s, uint32_t ts, const char *prefix);

/*
 * After the filter stepped the keys it saw at q's newest epoch: step every
 * other key of q's timescale as not held, calling end() for each incident
 * that is over (with the incident and the step's out, both borrowed) and
 * forgetting what is quiet.  Returns 0, or the first non-zero end().
 */
int incident_sweep(struct incidents *s, const struct vitals_queue *q,
    int (*end)(
	void *arg, const struct incident *in, const struct incident_out *out),
    void *arg);

/*
 * For incident_sweep's end(): emit the end of incident in (out, the
 * step's) at info, naming its vital and label (NULL for one that is ""),
 * from its start to the end of q's newest epoch, saying text.  Returns 0
 * or -ENOMEM.
 */
int incident_end_emit(struct vitals_ctx *ctx, const struct vitals_queue *q,
    const struct incident *in, const struct incident_out *out,
    const char *text);

/* Free every incident; the set is left empty. */
void incident_free(struct incidents *s);

/*
 * The least rise (or change) of a vital, per second in its unit, that is
 * large enough to warn about: from `floors` ("VITAL=VALUE" entries, VALUE
 * with a K/M/G or ns/us/ms/s suffix) for the vitals they name, else from
 * its "*=VALUE" entry, else the built-in default for the contract's
 * vitals, else 0.
 */
double incident_floor(const struct vitals_strlist *floors, const char *vital);

/*
 * severity, or info for a vital whose rise is never harm by itself (wait:
 * idle waits; kmem_free: pages given back).
 */
uint32_t incident_cap(const char *vital, uint32_t severity);

/*
 * Epochs an anomaly lasts before a filter learns it as the norm: warmup,
 * and at least twice the window (2 * (2k - 1)), so that an incident is
 * over before its level is learnt unless it goes on and on.
 */
uint64_t incident_adapt(const struct incidents *s, int64_t warmup);

/*
 * Whether a culprit named as labels_name names it (an exe path, else a
 * comm) is a process running an executable: a path.  A kernel thread
 * (named by its comm: kworker/u8:2, ksoftirqd/0) works for others, and a
 * change in its share (kworkers taking turns at the lock vital) is no
 * culprit's: never more than info in ewma, diff and affinity.
 */
int incident_process(const char *name);

/* Check a floors option; 0, or -EINVAL with the reason in why. */
int incident_floors_check(
    const struct vitals_strlist *floors, char *why, size_t len);

/* The built-in floors, as "VITAL=VALUE,...", for an option's help. */
#define INCIDENT_FLOORS_HELP \
	"cpu=20 (samples/s, a fifth of a CPU at 99 Hz), sched=200ms, " \
	"blocking=200ms, wait=2s, lock=20ms (each per s), diskio=16M, " \
	"socket=4M (bytes/s), umem=50000, kmem=50000, kmem_free=50000 " \
	"(faults, pages/s), syscall=200000, signal=500 (/s); a rise of " \
	"wait or kmem_free is never more than info"

/* "12:00:10" (local time) of ns, for a sentence. */
const char *incident_time(uint64_t ns, char *buf, size_t len);

/*
 * What a finding adds to its sentence to say step o of an incident of s:
 * "; seen once: a warning if it lasts" (NOTE), "; in N of the last 2k-1
 * epochs: an incident since T" (START, when window is set: the filter
 * says how long it held), "; the incident since T goes on (N epochs)"
 * (UPDATE), else "".  Returns buf.
 */
const char *incident_tail(const struct incidents *s,
    const struct incident_out *o, int window, char *buf, size_t len);

#endif /* VITALS_FILTERS_INCIDENT_H */
