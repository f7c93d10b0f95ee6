/* SPDX-License-Identifier: MIT */
/*
 * The probes' programs' CPU from their run-time statistics' windows.
 * A window of few events says little of what one costs: one lock wait
 * counted among a hundred contentions that were not, after a start, is
 * half a millisecond "an event", and a busy minute after it would be
 * reckoned at many CPUs.  Such a window's rate, time for time, is the
 * figure until a window counts enough events to tell a cost per event.
 */
#include "progcpu.h"

void
progcpu_window(struct progcpu *pc, uint64_t events, uint64_t ns, uint64_t len)
{
	if (events == 0 || ns == 0 || len == 0)
		return;
	if (events < PROGCPU_EVENTS && pc->events >= PROGCPU_EVENTS)
		return;
	pc->ns_per_event = (double)ns / (double)events;
	pc->ns_per_sec = (double)ns * 1e9 / (double)len;
	pc->events = events;
}

uint64_t
progcpu_est(const struct progcpu *pc, uint64_t events, uint64_t elapsed)
{
	if (pc->events >= PROGCPU_EVENTS)
		return (uint64_t)(pc->ns_per_event * (double)events);
	return (uint64_t)(pc->ns_per_sec * (double)elapsed / 1e9);
}
