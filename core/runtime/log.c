/* SPDX-License-Identifier: MIT */
/*
 * Logging for the core and for plugins: one line per message, to stderr as
 * "vitalsd: error: WHO: message" or to syslog, above a level threshold, with
 * per-call-site rate limiting for errors that repeat.  Single-threaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <vitals/vitals.h>

#include "log.h"

static int log_target = LOG_TO_STDERR;
static int log_threshold = VITALS_LOG_INFO;
/* openlog(3) keeps the pointer it is given, so the ident lives here. */
static char log_ident[64] = "vitalsd";

static const struct {
	const char *name;
	int level;
	int priority;
} log_levels[] = {
	{ "error", VITALS_LOG_ERR, LOG_ERR },
	{ "warn", VITALS_LOG_WARN, LOG_WARNING },
	{ "info", VITALS_LOG_INFO, LOG_INFO },
	{ "debug", VITALS_LOG_DEBUG, LOG_DEBUG },
};
#define LOG_NLEVELS (sizeof(log_levels) / sizeof(log_levels[0]))

/* The table entry for level: the first one at least as severe. */
static size_t
log_level_index(int level)
{
	size_t i;

	for (i = 0; i < LOG_NLEVELS - 1; i++) {
		if (level <= log_levels[i].level)
			return (i);
	}
	return (LOG_NLEVELS - 1);
}

/*
 * Set where messages go (LOG_TO_STDERR or LOG_TO_SYSLOG), the most verbose
 * level written, and the program name that prefixes lines (copied; NULL
 * keeps the current one).  May be called again, e.g. after a reload.
 */
void
log_setup(int target, int level, const char *ident)
{
	if (log_target == LOG_TO_SYSLOG)
		closelog();
	if (ident != NULL)
		snprintf(log_ident, sizeof(log_ident), "%s", ident);
	log_target = target;
	log_threshold = level;
	if (target == LOG_TO_SYSLOG)
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/*
 * Log one message at level, prefixed with who ("core", a plugin name, or
 * NULL for none).  Messages less severe than the threshold are dropped.
 * A trailing newline in fmt is not needed and is removed.
 */
void
log_vmsg(int level, const char *who, const char *fmt, va_list ap)
{
	char msg[2048];
	size_t i, len;

	if (level > log_threshold)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len > 0 && msg[len - 1] == '\n')
		msg[--len] = '\0';
	i = log_level_index(level);

	if (log_target == LOG_TO_SYSLOG) {
		if (who != NULL && *who != '\0')
			syslog(log_levels[i].priority, "%s: %s", who, msg);
		else
			syslog(log_levels[i].priority, "%s", msg);
		return;
	}
	if (who != NULL && *who != '\0')
		fprintf(stderr, "%s: %s: %s: %s\n", log_ident,
		    log_levels[i].name, who, msg);
	else
		fprintf(
		    stderr, "%s: %s: %s\n", log_ident, log_levels[i].name, msg);
}

/* log_vmsg with variable arguments. */
void
log_msg(int level, const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, who, fmt, ap);
	va_end(ap);
}

static long
log_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return (0);
	return ((long)ts.tv_sec);
}

/*
 * Log through the call site's limit l: at most l->burst messages per
 * l->interval_s seconds.  The first message of a new window first reports
 * how many were suppressed in the previous one.  Dropped levels (below the
 * threshold) do not count.
 */
void
log_limited(
    struct log_limit *l, int level, const char *who, const char *fmt, ...)
{
	va_list ap;
	long now;

	if (level > log_threshold)
		return;
	now = log_now();
	if (now - l->window_start >= (long)l->interval_s ||
	    now < l->window_start) {
		if (l->suppressed > 0)
			log_msg(level, who, "%u similar messages suppressed",
			    l->suppressed);
		l->window_start = now;
		l->printed = 0;
		l->suppressed = 0;
	}
	if (l->printed >= l->burst) {
		l->suppressed++;
		return;
	}
	l->printed++;
	va_start(ap, fmt);
	log_vmsg(level, who, fmt, ap);
	va_end(ap);
}

/*
 * Parse a level name: "error", "warn", "info" or "debug".  Returns the
 * VITALS_LOG_* level, or -EINVAL for anything else (including NULL).
 */
int
log_level_parse(const char *s)
{
	size_t i;

	if (s == NULL)
		return (-EINVAL);
	for (i = 0; i < LOG_NLEVELS; i++) {
		if (strcmp(s, log_levels[i].name) == 0)
			return (log_levels[i].level);
	}
	return (-EINVAL);
}
