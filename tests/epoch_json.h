/* SPDX-License-Identifier: MIT */
/*
 * An epoch as a jansson tree, for tests that look at single members of
 * its format 1 text (codec_text_encode, the API's form) read back.
 */
#ifndef VITALS_TESTS_EPOCH_JSON_H
#define VITALS_TESTS_EPOCH_JSON_H

#include <stdlib.h>

#include <jansson.h>

#include "codec.h"

/* e (borrowed) as a new JSON object, the caller's; NULL if out of memory. */
static inline json_t *
epoch_json(const struct vitals_epoch *e)
{
	json_t *j;
	char *text;
	size_t len;

	if (codec_text_encode(e, &text, &len) != 0)
		return NULL;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	return j;
}

#endif /* VITALS_TESTS_EPOCH_JSON_H */
