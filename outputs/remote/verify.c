/* SPDX-License-Identifier: MIT */
/*
 * The remote output's checks (verify.h): node URLs, the answers of a
 * node's API and the epoch files it sends, refused unless they are what
 * the node should send.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <vitals/store.h>
#include <vitals/vitals.h>

#include "verify.h"

#define VERIFY_NS 1000000000ull
/* Epochs start after 2001-01-01: anything earlier is a broken clock. */
#define VERIFY_MIN_START (978307200ull * VERIFY_NS)

/* Whether s names a host: printable ASCII, no '/', 1 to 200 bytes. */
static int
verify_host_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '/')
			return 0;
	return i > 0 && i <= 200;
}

int
remote_spec_parse(
    const char *s, struct remote_spec *out, char *why, size_t whylen)
{
	struct remote_spec sp;
	const char *eq = strchr(s, '='), *u, *a, *colon, *slash;
	unsigned long port = 80;
	char *end;
	size_t n;

	memset(&sp, 0, sizeof(sp));
	u = s;
	if (eq != NULL && eq < strstr(s, "://")) {
		n = (size_t)(eq - s);
		snprintf(sp.name, sizeof(sp.name), "%.*s", (int)n, s);
		if (n >= sizeof(sp.name) || !verify_host_ok(sp.name)) {
			snprintf(why, whylen, "node '%s': bad host name", s);
			return -EINVAL;
		}
		u = eq + 1;
	}
	if (strncmp(u, "http://", 7) != 0 || strlen(u) >= sizeof(sp.url)) {
		snprintf(why, whylen,
		    "node '%.200s': expected http://ADDR:PORT "
		    "or NAME=http://ADDR:PORT",
		    s);
		return -EINVAL;
	}
	strcpy(sp.url, u);
	a = u + 7;
	slash = strchr(a, '/');
	n = slash != NULL ? (size_t)(slash - a) : strlen(a);
	colon = a[0] == '[' ? memchr(a, ']', n) : memchr(a, ':', n);
	if (a[0] == '[') {
		if (colon == NULL)
			goto bad;
		snprintf(sp.addr, sizeof(sp.addr), "%.*s", (int)(colon - a - 1),
		    a + 1);
		colon = colon + 1 < a + n && colon[1] == ':' ? colon + 1 : NULL;
	} else
		snprintf(sp.addr, sizeof(sp.addr), "%.*s",
		    (int)(colon != NULL ? (size_t)(colon - a) : n), a);
	if (colon != NULL) {
		port = strtoul(colon + 1, &end, 10);
		if (end != a + n || port == 0 || port > 65535 ||
		    colon + 1 == end)
			goto bad;
	}
	if (sp.addr[0] == '\0' ||
	    (slash != NULL && strlen(slash) >= sizeof(sp.prefix)))
		goto bad;
	if (slash != NULL)
		strcpy(sp.prefix, slash);
	n = strlen(sp.prefix);
	while (n > 0 && sp.prefix[n - 1] == '/')
		sp.prefix[--n] = '\0';
	if (strpbrk(sp.prefix, "?#% ") != NULL)
		goto bad;
	sp.port = (uint16_t)port;
	*out = sp;
	return 0;
bad:
	snprintf(why, whylen,
	    "node '%.200s': bad URL (http://ADDR[:PORT]"
	    "[/PATH])",
	    s);
	return -EINVAL;
}

int
remote_local_parse(const char *body, size_t len, char *host, size_t hostlen,
    char *why, size_t whylen)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *s = json_string_value(json_object_get(j, "local"));
	int r = -EBADMSG;

	if (s == NULL)
		snprintf(why, whylen,
		    "its /api/v1/hosts says no local host "
		    "(is it a vitalsd with the http output?)");
	else if (!verify_host_ok(s) || strlen(s) >= hostlen)
		snprintf(why, whylen,
		    "its host name is not one epoch files "
		    "can be named after");
	else {
		strcpy(host, s);
		r = 0;
	}
	json_decref(j);
	return r;
}

/* Check one listed file j, after prev, into *f. */
static int
verify_listed(json_t *j, const char *host, const char *prev, uint64_t max_file,
    struct remote_file *f, char *why, size_t whylen)
{
	const char *name = json_string_value(json_object_get(j, "name"));
	const char *h = json_string_value(json_object_get(j, "host"));
	json_t *b = json_object_get(j, "bytes");
	char rel[VITALS_CURSOR_MAX + 16];
	uint64_t start;

	if (name == NULL || h == NULL || !json_is_integer(b) ||
	    json_integer_value(b) < 0 ||
	    vitals_store_name_parse(name, &start) != 0) {
		snprintf(why, whylen, "a listed file is malformed");
		return -EBADMSG;
	}
	if (strcmp(h, host) != 0 ||
	    vitals_epoch_relpath(start, host, rel, sizeof(rel)) < 0 ||
	    strcmp(strchr(rel, '/') + 1, name) != 0) {
		snprintf(why, whylen,
		    "it lists %.200s of host '%.100s', not "
		    "of '%s'",
		    name, h, host);
		return -EBADMSG;
	}
	if (prev != NULL && strcmp(name, prev) <= 0) {
		snprintf(why, whylen, "it lists %s, not after %s", name, prev);
		return -EBADMSG;
	}
	if ((uint64_t)json_integer_value(b) > max_file) {
		snprintf(why, whylen,
		    "%s: %" PRIu64 " bytes, more than "
		    "max_file (%" PRIu64 ")",
		    name, (uint64_t)json_integer_value(b), max_file);
		return -EFBIG;
	}
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->bytes = (uint64_t)json_integer_value(b);
	return 0;
}

int
remote_listing_parse(const char *body, size_t len, const char *host,
    const char *cursor, size_t max, uint64_t max_file,
    struct remote_file **files, size_t *n, int *more, char *why, size_t whylen)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	json_t *a = json_object_get(j, "files"),
	       *m = json_object_get(j, "more");
	struct remote_file *v = NULL;
	const char *prev = cursor;
	size_t i, k;
	int r = 0;

	if (!json_is_array(a) || !json_is_boolean(m) ||
	    (k = json_array_size(a)) > max) {
		snprintf(why, whylen, "its listing of files is malformed");
		json_decref(j);
		return -EBADMSG;
	}
	if (k > 0 && (v = calloc(k, sizeof(*v))) == NULL) {
		json_decref(j);
		return -ENOMEM;
	}
	for (i = 0; i < k && r == 0; i++) {
		r = verify_listed(json_array_get(a, i), host, prev, max_file,
		    &v[i], why, whylen);
		prev = v[i].name;
	}
	if (r == 0) {
		*files = v;
		*n = k;
		*more = json_is_true(m);
	} else
		free(v);
	json_decref(j);
	return r;
}

/* The times of e: started after 2001, ends before now + max_future. */
static int
verify_times(const struct vitals_epoch *e, const struct remote_limits *lim,
    char *why, size_t whylen)
{
	if (e->start_ns < VERIFY_MIN_START || e->length_ns == 0 ||
	    e->length_ns > lim->max_length_ns ||
	    e->start_ns > UINT64_MAX - e->length_ns ||
	    e->start_ns + e->length_ns > lim->now_ns + lim->max_future_ns) {
		snprintf(why, whylen,
		    "its times are not sane (start %" PRIu64
		    " ns, length %" PRIu64 " ns)",
		    e->start_ns, e->length_ns);
		return -ERANGE;
	}
	return 0;
}

int
remote_verify(const char *host, const char *name, const void *data, size_t len,
    const struct remote_limits *lim, struct vitals_epoch **out, char *why,
    size_t whylen)
{
	struct vitals_epoch *e = NULL;
	char rel[VITALS_CURSOR_MAX + 16], err[512];
	int r;

	if (len == 0 || len > lim->max_file) {
		snprintf(why, whylen,
		    "%s: %zu bytes, not 1 to max_file (%" PRIu64 ")", name, len,
		    lim->max_file);
		return -EFBIG;
	}
	if ((r = vitals_epoch_decode(data, len, &e, err, sizeof(err))) != 0) {
		snprintf(why, whylen, "%s: does not decode: %s", name, err);
		return r == -ENOMEM ? r : r == -EFBIG ? -EFBIG : -EBADMSG;
	}
	if (e->host == NULL || strcmp(e->host, host) != 0) {
		snprintf(why, whylen,
		    "%s: an epoch of host '%.100s', not of "
		    "'%s'",
		    name, e->host != NULL ? e->host : "", host);
		r = -EPERM;
	} else if ((r = verify_times(e, lim, why, whylen)) != 0)
		;
	else if (vitals_epoch_relpath(e->start_ns, e->host, rel, sizeof(rel)) <
		0 ||
	    strcmp(strchr(rel, '/') + 1, name) != 0) {
		snprintf(why, whylen, "%s: holds the epoch of %s", name,
		    strchr(rel, '/') != NULL ? strchr(rel, '/') + 1 : "?");
		r = -EINVAL;
	}
	if (r != 0) {
		vitals_epoch_free(e);
		return r;
	}
	*out = e;
	return 0;
}
