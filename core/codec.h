/* SPDX-License-Identifier: MIT */
/*
 * Epochs to and from JSON (the on-disk form), and the store's file naming.
 * Internal to libvitals; consumers use <vitals/store.h>.
 */
#ifndef VITALS_CODEC_H
#define VITALS_CODEC_H

#include <jansson.h>
#include <vitals/vitals.h>

/* Format version written into every epoch file ("format": N). */
#define CODEC_FORMAT 1

/*
 * Encode an epoch as a new JSON object (caller owns the reference).
 * Returns NULL only when memory runs out.
 */
json_t *codec_epoch_to_json(const struct vitals_epoch *e);

/*
 * Decode an epoch from JSON.  Returns 0 and sets *out (free with
 * vitals_epoch_free), or -EBADMSG with the first problem (the JSON path of
 * the bad member) in err, or -ENOMEM.
 */
int codec_epoch_from_json(json_t *j, struct vitals_epoch **out, char *err,
    size_t errlen);

/*
 * Free an epoch made by codec_epoch_from_json (one arena holds it and all
 * it points to); accepts NULL.  vitals_epoch_free is this.
 */
void codec_epoch_free(struct vitals_epoch *e);

/*
 * A new zeroed epoch in its own arena (free with codec_epoch_free), and
 * zeroed memory in the arena of such an epoch or of a decoded one.  Both
 * return NULL when out of memory (codec_epoch_alloc also for n == 0).
 */
struct vitals_epoch *codec_epoch_new(void);
void *codec_epoch_alloc(struct vitals_epoch *e, size_t n);

/*
 * The path of an epoch's file relative to the data dir:
 * "YYYY-MM-DD/YYYYMMDDTHHMMSS.mmmZ_HOST.json.gz" (UTC).  Returns the
 * length written, or -ENAMETOOLONG.
 */
int codec_epoch_relpath(uint64_t start_ns, const char *host, char *buf,
    size_t len);

/* Parse a file name made by codec_epoch_relpath's last part; 0 or -EINVAL. */
int codec_parse_name(const char *name, uint64_t *start_ns, char *host,
    size_t hostlen);

#endif /* VITALS_CODEC_H */
