/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: an epoch file's JSON text through both readers.  The
 * fast reader (codec_text_decode) may decline, but what it accepts
 * jansson's reader must accept too, and both must give the same epoch
 * (compared by their encodings); that epoch written in the compact form
 * must read back the same.  `make fuzz` runs it (tests/fuzz/run.sh).
 */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* e's encoding, or NULL when out of memory. */
static char *
fuzz_text(const struct vitals_epoch *e, size_t *len)
{
	char *t = NULL;

	if (codec_text_encode(e, &t, len) != 0)
		return NULL;
	return t;
}

/* Whether e, written in the compact form and read back, is e (text a). */
static void
fuzz_compact(const struct vitals_epoch *e, const char *a, size_t alen)
{
	struct vitals_epoch *back = NULL;
	char err[256], *c = NULL, *b;
	size_t clen = 0, blen = 0;

	if (a == NULL || codec_compact_encode(e, &c, &clen) != 0)
		return;
	if (codec_epoch_parse(c, clen, &back, err, sizeof(err)) != 0)
		abort(); /* the compact form of an epoch does not read */
	if ((b = fuzz_text(back, &blen)) != NULL &&
	    (alen != blen || memcmp(a, b, alen) != 0))
		abort(); /* it reads as another epoch */
	free(b);
	free(c);
	vitals_epoch_free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vitals_epoch *fast = NULL, *slow = NULL;
	const char *buf = (const char *)data;
	char err[256], *a, *b;
	size_t alen = 0, blen = 0;
	json_error_t je;
	json_t *j;
	int rf, rs = -EBADMSG;

	rf = codec_text_decode(buf, size, &fast);
	if ((j = json_loadb(buf, size, JSON_REJECT_DUPLICATES, &je)) != NULL) {
		rs = codec_epoch_from_json(j, &slow, err, sizeof(err));
		json_decref(j);
	}
	if (rf == 0) {
		if (rs != 0)
			abort(); /* the fast reader took what jansson refuses */
		a = fuzz_text(fast, &alen);
		b = fuzz_text(slow, &blen);
		if (a != NULL && b != NULL &&
		    (alen != blen || memcmp(a, b, alen) != 0))
			abort(); /* the two readers disagree */
		fuzz_compact(fast, a, alen);
		free(a);
		free(b);
	}
	vitals_epoch_free(fast);
	vitals_epoch_free(slow);
	return 0;
}
