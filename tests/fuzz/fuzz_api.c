/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: an API request's path and query (the first line of
 * the input is the path under /api/v1/, the rest the query) through
 * api_answer, over the store in $FUZZ_API_STORE (tests/fuzz/run.sh makes
 * one with bench/mkstore): a JSON answer with a status in 200..599, never
 * a crash, a leak or an unbounded answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *store = getenv("FUZZ_API_STORE");
	struct api_env env;
	struct api_answer a;
	char path[512], query[1024];
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl != NULL ? (size_t)(nl - data) : size;
	size_t qlen = nl != NULL ? size - plen - 1 : 0;

	if (plen + 8 >= sizeof(path) || qlen >= sizeof(query) ||
	    memchr(data, '\0', size) != NULL)
		return 0;
	snprintf(
	    path, sizeof(path), "/api/v1/%.*s", (int)plen, (const char *)data);
	memcpy(query, nl != NULL ? (const char *)nl + 1 : "", qlen);
	query[qlen] = '\0';
	memset(&env, 0, sizeof(env));
	env.data_dir = (char *)(store != NULL ? store : "/nonexistent");
	env.epoch_ns = 60ull * 1000000000ull;
	env.ntimescales = 1;
	env.timescales[0] = 300;
	env.max_samples = 64;
	env.max_range_ns = 86400ull * 1000000000ull;
	env.max_response = 1u << 20;
	/* Now: the end of mkstore's store (run.sh starts it at 1.7e9 s). */
	api_answer(&env, path, qlen > 0 ? query : NULL,
	    1700001200ull * 1000000000ull, &a);
	if (a.status < 200 || a.status > 599 ||
	    (a.body == NULL && a.len != 0) || a.len > env.max_response + 4096)
		abort();
	api_answer_free(&a);
	return 0;
}
