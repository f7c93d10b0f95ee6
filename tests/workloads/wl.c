/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the workload programs: argument parsing with clear
 * messages (exit 2), the clock, JSON string output and fatal errors.
 */
#include "wl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *wl_usage_text;

static void __attribute__((noreturn))
wl_usage_exit(const char *prog, int status)
{
	fprintf(
	    status ? stderr : stdout, "usage: %s %s\n", prog, wl_usage_text);
	exit(status);
}

/* See wl.h. */
double
wl_seconds(int argc, char **argv, const char *usage)
{
	char *end;
	double s;

	wl_usage_text = usage;
	if (argc < 2)
		return 3.0;
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		wl_usage_exit(argv[0], 0);
	errno = 0;
	s = strtod(argv[1], &end);
	if (errno || end == argv[1] || *end || !isfinite(s) || s <= 0 ||
	    s > 86400) {
		fprintf(stderr, "%s: bad duration '%s' (seconds, > 0)\n",
		    argv[0], argv[1]);
		wl_usage_exit(argv[0], 2);
	}
	return s;
}

/* See wl.h. */
long
wl_int_arg(
    int argc, char **argv, int i, const char *what, long lo, long hi, long def)
{
	char *end;
	long v;

	if (argc <= i)
		return def;
	errno = 0;
	v = strtol(argv[i], &end, 10);
	if (errno || end == argv[i] || *end || v < lo || v > hi) {
		fprintf(stderr, "%s: bad %s '%s' (an integer in %ld..%ld)\n",
		    argv[0], what, argv[i], lo, hi);
		wl_usage_exit(argv[0], 2);
	}
	return v;
}

/* See wl.h. */
int
wl_cpu_arg(int argc, char **argv, int i)
{
	if (argc <= i)
		return 0;
	if (strcmp(argv[i], "cpu") == 0)
		return 1;
	fprintf(stderr, "%s: bad clock '%s' (only 'cpu')\n", argv[0], argv[i]);
	wl_usage_exit(argv[0], 2);
}

static uint64_t
wl_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* See wl.h. */
uint64_t
wl_now_ns(void)
{
	return wl_clock_ns(CLOCK_MONOTONIC);
}

/* See wl.h. */
uint64_t
wl_cpu_ns(void)
{
	return wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* See wl.h. */
void
wl_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* See wl.h. */
void
wl_die(const char *msg)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, msg,
	    strerror(errno));
	exit(1);
}
