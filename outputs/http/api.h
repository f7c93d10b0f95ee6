/* SPDX-License-Identifier: MIT */
/*
 * The JSON API (/api/v1/..., doc/api.md): one handler per endpoint, each
 * parsing and checking its parameters, calling the library the CLI uses
 * and writing JSON.  Plain functions of a request and a snapshot of the
 * settings, with no evhttp in them, so that the server runs them in its
 * worker threads.
 */
#ifndef VITALS_HTTP_API_H
#define VITALS_HTTP_API_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/aggregate.h>

/* What a request is answered against: the settings as they were when it came. */
struct api_env {
	char *data_dir; /* the store, owned */
	char *config; /* the daemon's configuration file, owned, or NULL */
	char *local; /* the daemon's host, owned, or NULL */
	uint64_t epoch_ns; /* nominal base epoch length */
	uint32_t ntimescales; /* configured rollup timescales */
	uint32_t timescales[VITALS_AGG_MAX_TIMESCALES]; /* seconds, ascending */
	uint32_t max_samples; /* samples a rollup keeps per vital */
	uint64_t max_range_ns; /* longest range asked */
	uint64_t max_response; /* largest answer, bytes */
};

/* An answer: status, content type and body. */
struct api_answer {
	int status; /* HTTP status */
	const char *type; /* content type, static */
	char *body; /* malloc'd, owned by the answer */
	size_t len; /* bytes in body */
};

/* Whether path (decoded) is the API's: /api/ and below. */
int api_is_api(const char *path);

/*
 * Whether the answer to path reads nothing (/api/v1/time parses a time):
 * the server answers it on its loop rather than keep a worker from a
 * range query.
 */
int api_is_quick(const char *path);

/*
 * Answer GET path?query (path decoded, query as sent, NULL for none)
 * against env at time now_ns.  Always fills *out (free with
 * api_answer_free): a 200 answer, or an error in the documented form
 * (400, 404, 413, 500).  Thread-safe.
 */
void api_answer(const struct api_env *env, const char *path, const char *query,
    uint64_t now_ns, struct api_answer *out);

/*
 * An error answer {"error": msg} (with "param" unless NULL) of status,
 * into *out (free with api_answer_free).  Out of memory leaves an empty
 * body.
 */
void api_error(
    struct api_answer *out, int status, const char *param, const char *msg);

/* Free an answer's body; the answer is left empty.  Accepts NULL. */
void api_answer_free(struct api_answer *a);

/* Free an environment's strings; accepts NULL. */
void api_env_free(struct api_env *env);

#endif /* VITALS_HTTP_API_H */
