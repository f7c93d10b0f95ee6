/* SPDX-License-Identifier: MIT */
/*
 * The time and range forms every command and the HTTP API take: ISO-8601
 * with or without a zone, a date, now, a time before now (-2h), @UNIX
 * seconds, nanoseconds; FROM..TO.  Arithmetic is checked: a time that does
 * not fit is refused, never wrapped.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/aggregate.h>

#define NS 1000000000ull
/* Latest second whose nanoseconds fit in 64 bits (year 2554). */
#define MAX_SEC (UINT64_MAX / NS - 1)

/* n digits at *s into *v, advancing *s; 0 or -EINVAL. */
static int
times_digits(const char **s, int n, int *v)
{
	*v = 0;
	while (n-- > 0) {
		if (**s < '0' || **s > '9')
			return -EINVAL;
		*v = *v * 10 + (*(*s)++ - '0');
	}
	return 0;
}

/* "Z", "+HH", "+HH:MM", "+HHMM" (or '-') at s; *off in seconds east. */
static int
times_zone(const char *s, long *off, int *has)
{
	int h = 0, m = 0, sign;

	*has = 0;
	*off = 0;
	if (*s == '\0')
		return 0;
	*has = 1;
	if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
		return 0;
	if (*s != '+' && *s != '-')
		return -EINVAL;
	sign = *s++ == '-' ? -1 : 1;
	if (times_digits(&s, 2, &h) != 0)
		return -EINVAL;
	if (*s == ':')
		s++;
	if (*s != '\0' && times_digits(&s, 2, &m) != 0)
		return -EINVAL;
	if (*s != '\0' || h > 23 || m > 59)
		return -EINVAL;
	*off = sign * (h * 3600L + m * 60L);
	return 0;
}

/* The clock part "HH:MM[:SS[.fff]]" at *s into tm and *ns. */
static int
times_clock(const char **s, struct tm *tm, uint64_t *ns)
{
	int frac = 0, scale = 100000000;

	if (times_digits(s, 2, &tm->tm_hour) != 0 || *(*s)++ != ':' ||
	    times_digits(s, 2, &tm->tm_min) != 0)
		return -EINVAL;
	if (**s == ':') {
		(*s)++;
		if (times_digits(s, 2, &tm->tm_sec) != 0)
			return -EINVAL;
		if (**s == '.' || **s == ',') {
			for ((*s)++; **s >= '0' && **s <= '9'; (*s)++) {
				frac += (**s - '0') * scale;
				scale /= 10;
			}
		}
	}
	*ns = (uint64_t)frac;
	return tm->tm_hour > 23 || tm->tm_min > 59 || tm->tm_sec > 60 ? -EINVAL
								      : 0;
}

/* ISO-8601: a date, optionally a clock, optionally a zone. */
static int
times_iso(const char *s, uint64_t *out)
{
	struct tm tm, chk;
	uint64_t ns = 0;
	int has_zone, y;
	time_t t;
	long off;

	memset(&tm, 0, sizeof(tm));
	if (times_digits(&s, 4, &y) != 0 || *s++ != '-' ||
	    times_digits(&s, 2, &tm.tm_mon) != 0 || *s++ != '-' ||
	    times_digits(&s, 2, &tm.tm_mday) != 0)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon--;
	if ((*s == 'T' || *s == 't' || *s == ' ') &&
	    (s++, times_clock(&s, &tm, &ns) != 0))
		return -EINVAL;
	if (times_zone(s, &off, &has_zone) != 0 || tm.tm_mon < 0 ||
	    tm.tm_mon > 11 || tm.tm_mday < 1)
		return -EINVAL;
	chk = tm;
	tm.tm_isdst = -1;
	t = has_zone ? timegm(&tm) - off : mktime(&tm);
	/* timegm/mktime normalize Feb 30 into March: refuse what moved. */
	if (t == (time_t)-1 || tm.tm_mday != chk.tm_mday ||
	    tm.tm_mon != chk.tm_mon)
		return -EINVAL;
	if (t < 0 || (uint64_t)t > MAX_SEC)
		return -ERANGE;
	*out = (uint64_t)t * NS + ns;
	return 0;
}

/* "-2h", "-30m", "-1d12h", "-90s", "-1w": before now. */
static int
times_relative(const char *s, uint64_t now, uint64_t *out)
{
	static const struct {
		char unit;
		uint64_t sec;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
		{ 'w', 604800 } };
	uint64_t total = 0, n;
	size_t i;
	char *end;

	for (s++; *s != '\0'; s = end + 1) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		errno = 0;
		n = strtoull(s, &end, 10);
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].unit)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		if (errno == ERANGE || n > MAX_SEC / units[i].sec ||
		    total + n * units[i].sec > MAX_SEC)
			return -ERANGE;
		total += n * units[i].sec;
	}
	if (total * NS > now)
		return -ERANGE;
	*out = now - total * NS;
	return 0;
}

/* Digits only: "@" seconds, or 13 or more digits of nanoseconds. */
static int
times_number(const char *s, uint64_t scale, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v > UINT64_MAX / scale ||
	    v * scale / NS > MAX_SEC)
		return -ERANGE;
	*out = v * scale;
	return 0;
}

int
vitals_time_parse(const char *s, uint64_t now_ns, uint64_t *out)
{
	size_t digits;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*out = now_ns;
		return 0;
	}
	if (s[0] == '-')
		return times_relative(s, now_ns, out);
	if (s[0] == '@')
		return times_number(s + 1, NS, out);
	digits = strspn(s, "0123456789");
	if (s[digits] == '\0' && digits >= 13)
		return times_number(s, 1, out);
	return times_iso(s, out);
}

int
vitals_range_parse(
    const char *s, uint64_t now_ns, uint64_t *from_ns, uint64_t *to_ns)
{
	const char *dots = strstr(s, "..");
	uint64_t from, to;
	char a[128];
	int r;

	if (dots == NULL || (size_t)(dots - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(dots - s));
	a[dots - s] = '\0';
	if ((r = vitals_time_parse(a, now_ns, &from)) != 0 ||
	    (r = vitals_time_parse(dots + 2, now_ns, &to)) != 0)
		return r;
	if (to <= from)
		return -EDOM;
	*from_ns = from;
	*to_ns = to;
	return 0;
}
