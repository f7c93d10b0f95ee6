/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the time and range forms every command and the API
 * take (vitals_time_parse, vitals_range_parse): a result within the
 * representable range and ordered, or a refusal; never a wrap.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/aggregate.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A fixed "now": 2026-11-22T10:00:00Z. */
	const uint64_t now = 1795341600ull * 1000000000ull;
	uint64_t t, from, to;
	char s[256];

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	/* A time before now ("-30m") is never after now: no wrap. */
	if (vitals_time_parse(s, now, &t) == 0 && s[0] == '-' && t > now)
		abort();
	if (vitals_range_parse(s, now, &from, &to) == 0 && from >= to)
		abort(); /* a range that ends before it starts was taken */
	return 0;
}
