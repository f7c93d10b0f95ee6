/* SPDX-License-Identifier: MIT */
/*
 * Shared by the workload programs that exercise the kernel probes: the
 * duration argument, a monotonic clock, and a JSON string writer for the
 * one line of JSON each program prints at exit.
 */
#ifndef VITALS_WORKLOAD_H
#define VITALS_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

/*
 * Parse argv[1] as a duration in seconds (default 3 when absent; "-h"
 * prints usage and exits 0).  Bad input prints a message and the usage
 * line to stderr and exits 2.  usage is the text after the program name.
 */
double wl_seconds(int argc, char **argv, const char *usage);

/*
 * Parse argv[i] as an integer in [lo, hi], or return def when argc <= i.
 * Bad input exits 2 with a message naming what (and the usage line).
 */
long wl_int_arg(
    int argc, char **argv, int i, const char *what, long lo, long hi, long def);

/*
 * Whether argv[i] asks for CPU time: 1 for "cpu" (the duration is of the
 * process's own CPU time, which the machine's load cannot shorten), 0 when
 * argc <= i.  Anything else exits 2 with a message and the usage line.
 */
int wl_cpu_arg(int argc, char **argv, int i);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t wl_now_ns(void);

/* Nanoseconds of CPU time the process used (CLOCK_PROCESS_CPUTIME_ID). */
uint64_t wl_cpu_ns(void);

/* Print s to f as a JSON string literal (quotes, escapes). */
void wl_json_str(FILE *f, const char *s);

/* Print "msg: strerror(errno)" to stderr and exit 1. */
void wl_die(const char *msg) __attribute__((noreturn));

#endif
