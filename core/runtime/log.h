/* SPDX-License-Identifier: MIT */
/*
 * Logging for the core and, through vitals_log(), for plugins: to stderr
 * or syslog, with a level threshold and per-call-site rate limiting.
 */
#ifndef VITALS_LOG_H
#define VITALS_LOG_H

#include <stdarg.h>

/* Where messages go. */
#define LOG_TO_STDERR 0
#define LOG_TO_SYSLOG 1

/* Set the destination and the most verbose level written (VITALS_LOG_*). */
void log_setup(int target, int level, const char *ident);

/* Log one message at level; `who` ("core", a plugin name) prefixes it. */
void log_msg(int level, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_vmsg(int level, const char *who, const char *fmt, va_list ap);

/*
 * Rate-limited logging for repeated errors: a `struct log_limit` lives at
 * the call site (static or in the caller's state).  At most `burst`
 * messages per `interval_s`; when it opens again, the number suppressed is
 * reported once.
 */
struct log_limit {
	unsigned interval_s; /* window length in seconds */
	unsigned burst; /* messages allowed per window */
	long window_start; /* CLOCK_MONOTONIC seconds of the window */
	unsigned printed; /* messages in this window */
	unsigned suppressed; /* messages dropped in this window */
};
#define LOG_LIMIT_INIT \
	{ \
		60, 5, 0, 0, 0 \
	}

void log_limited(struct log_limit *l, int level, const char *who,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parse "error", "warn", "info", "debug"; returns the level or -EINVAL. */
int log_level_parse(const char *s);

#endif /* VITALS_LOG_H */
