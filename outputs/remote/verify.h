/* SPDX-License-Identifier: MIT */
/*
 * What the remote output checks before it trusts a node: its URL, its
 * answers (the host it says it is, the listing of its files) and each
 * epoch file it sends.  Plain functions of bytes, with no libevent in
 * them, so that tests/check_remote.c runs them on tables of cases.
 */
#ifndef VITALS_REMOTE_VERIFY_H
#define VITALS_REMOTE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include <vitals/store.h>

/* Longest host part of a node URL, NUL included. */
#define REMOTE_ADDR_MAX 256
/* Longest path prefix of a node URL, NUL included. */
#define REMOTE_PREFIX_MAX 256

/* A node as configured: "URL" or "NAME=URL". */
struct remote_spec {
	char name[256]; /* the host name it must have, "" if not given */
	char url[1024]; /* http://ADDR[:PORT][/PREFIX] */
	char addr[REMOTE_ADDR_MAX]; /* address or name to connect to */
	uint16_t port; /* 80 when not given */
	char prefix[REMOTE_PREFIX_MAX]; /* path before /api/v1/, "" or "/x" */
};

/*
 * Parse a configured node: "http://ADDR[:PORT][/PREFIX]" or
 * "NAME=http://...".  Returns 0 with *out filled, or -EINVAL with the
 * reason in why.
 */
int remote_spec_parse(
    const char *s, struct remote_spec *out, char *why, size_t whylen);

/*
 * The node's own host name from its /api/v1/hosts answer ("local"),
 * checked to name epoch files, into host.  Returns 0, or -EBADMSG with
 * the reason in why.
 */
int remote_local_parse(const char *body, size_t len, char *host, size_t hostlen,
    char *why, size_t whylen);

/* One file of a node's listing. */
struct remote_file {
	char name[VITALS_CURSOR_MAX]; /* its name, the next cursor */
	uint64_t bytes; /* its size, as the node says */
};

/*
 * Check a /api/v1/files answer for a node named host that was asked for
 * the files after cursor (NULL: from the start): every name an epoch
 * file name of that host, after the cursor, in increasing order, of at
 * most max_file bytes, at most max of them.  Returns 0 with *files (n of
 * them, malloc'd, the caller's) and *more, or -EBADMSG (a malformed or
 * inconsistent answer) or -EFBIG (a file larger than max_file) with the
 * reason in why.
 */
int remote_listing_parse(const char *body, size_t len, const char *host,
    const char *cursor, size_t max, uint64_t max_file,
    struct remote_file **files, size_t *n, int *more, char *why, size_t whylen);

/* Bounds an epoch file from a node must stay within. */
struct remote_limits {
	uint64_t now_ns; /* the central's clock */
	uint64_t max_future_ns; /* how far past now an epoch may end */
	uint64_t max_length_ns; /* longest epoch */
	uint64_t max_file; /* largest file, bytes */
};

/*
 * Check an epoch file a node sent as name: at most max_file bytes,
 * decodes, of host host, starting after 2001 and ending before now plus
 * max_future, of a length from 1 ns to max_length, and stored under the
 * very name it was listed as.  Returns 0 and sets *out (free with
 * vitals_epoch_free), or a negative errno (-EFBIG, -EBADMSG, -EPERM for
 * another host, -ERANGE for its times, -EINVAL for its name) with the
 * reason in why.
 */
int remote_verify(const char *host, const char *name, const void *data,
    size_t len, const struct remote_limits *lim, struct vitals_epoch **out,
    char *why, size_t whylen);

#endif /* VITALS_REMOTE_VERIFY_H */
