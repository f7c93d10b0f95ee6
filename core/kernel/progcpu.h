/* SPDX-License-Identifier: MIT */
/*
 * The probes' programs' CPU, from the kernel's run-time statistics of
 * short windows (see bpf.c, bpf_stats_window()): a window gives the time
 * its programs took and the events they counted in it; the CPU of a
 * longer time is reckoned from the last window that could tell.
 */
#ifndef VITALS_PROGCPU_H
#define VITALS_PROGCPU_H

#include <stdint.h>

/*
 * A window that counted this many events measures a cost per event,
 * and a time's CPU is that times its events; below it the window's
 * programs' time a second, times the time, is the figure.
 */
#define PROGCPU_EVENTS 10000

struct progcpu {
	double ns_per_event; /* the programs' ns per event counted */
	double ns_per_sec; /* the programs' ns per second */
	uint64_t events; /* events counted in that window; 0: none yet */
};

/*
 * A window of len ns in which the programs took ns and counted events.
 * Its figures replace the last if it counted PROGCPU_EVENTS or neither
 * did (the newer rate is the better): a window of few events (a quiet
 * second, or one of the first sightings every label gets after a start)
 * does not overwrite a cost per event.  One of no events or no time
 * changes nothing.
 */
void progcpu_window(
    struct progcpu *pc, uint64_t events, uint64_t ns, uint64_t len);

/* The programs' CPU (ns) over elapsed ns in which events were counted. */
uint64_t progcpu_est(
    const struct progcpu *pc, uint64_t events, uint64_t elapsed);

#endif /* VITALS_PROGCPU_H */
