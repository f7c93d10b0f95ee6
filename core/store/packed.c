/* SPDX-License-Identifier: MIT */
/*
 * An epoch held deflated in memory: its compact text (format 2) through
 * zlib, for what is kept long and read rarely: the compact copy of an
 * epoch of 1536 samples packs into 46 kB.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <zlib.h>

#include "codec.h"

int
codec_pack(const struct vitals_epoch *e, struct codec_packed *p)
{
	char *text;
	size_t len;
	uLongf zlen;
	int r;

	p->z = NULL;
	p->zlen = p->len = 0;
	if ((r = codec_compact_encode(e, &text, &len)) != 0)
		return r;
	zlen = compressBound((uLong)len);
	if (len > UINT_MAX || (p->z = malloc(zlen)) == NULL) {
		free(text);
		return -ENOMEM;
	}
	/* The fastest level: packing is at every rollup, unpacking rare. */
	r = compress2(p->z, &zlen, (const Bytef *)text, (uLong)len, 1);
	free(text);
	if (r != Z_OK) {
		codec_packed_free(p);
		return -ENOMEM;
	}
	p->zlen = zlen;
	p->len = len;
	/* Give back what compressBound reserved beyond the stream. */
	if ((text = realloc(p->z, zlen)) != NULL)
		p->z = (unsigned char *)text;
	return 0;
}

int
codec_unpack(const struct codec_packed *p, struct vitals_epoch **out, char *err,
    size_t errlen)
{
	uLongf len = p->len;
	char *text;
	int r;

	if ((text = malloc(len + 1)) == NULL)
		return -ENOMEM;
	r = uncompress((Bytef *)text, &len, p->z, (uLong)p->zlen);
	if (r != Z_OK || len != p->len) {
		free(text);
		if (r == Z_MEM_ERROR)
			return -ENOMEM;
		snprintf(err, errlen, "a packed epoch does not inflate: %s",
		    r == Z_OK ? "short" : zError(r));
		return -EBADMSG;
	}
	r = codec_epoch_parse(text, len, out, err, errlen);
	free(text);
	return r;
}

void
codec_packed_free(struct codec_packed *p)
{
	free(p->z);
	p->z = NULL;
	p->zlen = p->len = 0;
}
