/* SPDX-License-Identifier: MIT */
/*
 * What a central vitalsd knows of the nodes it pulls epochs from
 * (<vitals/store.h>, doc/fleet.md): one small JSON file per node under
 * DATA_DIR/nodes/, written atomically by the remote output and read by
 * the http output's API and /metrics and by `vitals hosts`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>
#include <vitals/store.h>

#include "safefile.h"

/* A node's state file is a few hundred bytes; anything larger is junk. */
#define NODES_FILE_MAX (64 * 1024)
/* Most nodes read from one data dir. */
#define NODES_MAX 100000

/* Free a node's strings and zero it; accepts NULL. */
void
vitals_node_clear(struct vitals_node *n)
{
	if (n == NULL)
		return;
	free(n->key);
	free(n->url);
	free(n->host);
	free(n->cursor);
	free(n->last_error);
	memset(n, 0, sizeof(*n));
}

/* Free a list's nodes and zero it; accepts a zeroed list. */
void
vitals_node_list_free(struct vitals_node_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		vitals_node_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* FNV-1a, 32 bits: enough to tell apart two URLs of one host and port. */
static uint32_t
nodes_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* "HOST_PORT-HASH" of url into buf: a file name, one per URL. */
int
vitals_node_key(const char *url, char *buf, size_t len)
{
	const char *p = strstr(url, "://");
	char part[64];
	size_t i = 0;
	int n;

	p = p != NULL ? p + 3 : url;
	for (; *p != '\0' && *p != '/' && i + 1 < sizeof(part); p++)
		part[i++] = (*p >= 'a' && *p <= 'z') ||
			(*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			*p == '-' || *p == '.'
		    ? *p
		    : '_';
	part[i] = '\0';
	n = snprintf(buf, len, "%s-%08x", part, nodes_hash(url));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* s, or NULL when it is not a string. */
static char *
nodes_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? strdup(s) : NULL;
}

static uint64_t
nodes_u64(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

/* Parse one state file's text into *n; 0 or -EBADMSG. */
static int
nodes_parse(const char *text, size_t len, struct vitals_node *n)
{
	json_t *o = json_loadb(text, len, 0, NULL);

	memset(n, 0, sizeof(*n));
	if (o == NULL || !json_is_object(o) ||
	    (n->key = nodes_str(o, "key")) == NULL ||
	    (n->url = nodes_str(o, "url")) == NULL) {
		json_decref(o);
		vitals_node_clear(n);
		return -EBADMSG;
	}
	n->host = nodes_str(o, "host");
	n->cursor = nodes_str(o, "cursor");
	n->last_error = nodes_str(o, "last_error");
	n->last_start_ns = nodes_u64(o, "last_start_ns");
	n->last_end_ns = nodes_u64(o, "last_end_ns");
	n->last_ok_ns = nodes_u64(o, "last_ok_ns");
	n->pulled = nodes_u64(o, "pulled");
	n->errors = nodes_u64(o, "errors");
	n->refused = nodes_u64(o, "refused");
	n->last_error_ns = nodes_u64(o, "last_error_ns");
	json_decref(o);
	/* A cursor that is not a file name would resume from nowhere. */
	if (n->cursor != NULL &&
	    vitals_store_name_parse(n->cursor, NULL) != 0) {
		vitals_node_clear(n);
		return -EBADMSG;
	}
	return 0;
}

static int
nodes_cmp(const void *a, const void *b)
{
	const struct vitals_node *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* Add the state file name (in the nodes dir, fd dirfd) to l. */
static int
nodes_add(int dirfd, const char *name, struct vitals_node_list *l, size_t *cap)
{
	struct vitals_node n, *v;
	char why[256], *text = NULL;
	size_t len = 0, nl = strlen(name);
	ssize_t k;
	int fd, r;

	if (name[0] == '.' || nl < 6 || strcmp(name + nl - 5, ".json") != 0)
		return 0;
	if ((fd = safefile_open_read(
		 dirfd, name, 1, NODES_FILE_MAX, NULL, why, sizeof(why))) < 0)
		return 0;
	if ((text = malloc(NODES_FILE_MAX + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (len < NODES_FILE_MAX &&
	    (k = read(fd, text + len, NODES_FILE_MAX - len)) > 0)
		len += (size_t)k;
	close(fd);
	r = nodes_parse(text, len, &n);
	free(text);
	if (r != 0)
		return 0;
	if (l->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if (*cap > NODES_MAX ||
		    (v = realloc(l->v, *cap * sizeof(*v))) == NULL) {
			vitals_node_clear(&n);
			return -ENOMEM;
		}
		l->v = v;
	}
	l->v[l->n++] = n;
	return 0;
}

/* Every state file of data_dir/nodes/ into *out (the caller's). */
int
vitals_nodes_load(const char *data_dir, struct vitals_node_list *out)
{
	struct vitals_node_list l = { 0, NULL };
	char path[PATH_MAX];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int fd, r = 0;

	if (snprintf(path, sizeof(path), "%s/nodes", data_dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	    0) {
		if (errno != ENOENT)
			return -errno;
		*out = l;
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d)) != NULL)
		r = nodes_add(dirfd(d), de->d_name, &l, &cap);
	closedir(d);
	if (r != 0) {
		vitals_node_list_free(&l);
		return r;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), nodes_cmp);
	*out = l;
	return 0;
}

/* Set key to s when s is not NULL. */
static void
nodes_set_str(json_t *o, const char *key, const char *s)
{
	if (s != NULL)
		json_object_set_new(o, key, json_string(s));
}

/* Replace n's state file in data_dir/nodes/ atomically. */
int
vitals_node_save(
    const char *data_dir, const struct vitals_node *n, char *err, size_t errlen)
{
	char path[PATH_MAX], name[256], *text;
	json_t *o;
	int dfd, r;

	if (n->key == NULL || strchr(n->key, '/') != NULL || n->key[0] == '.' ||
	    n->url == NULL) {
		snprintf(err, errlen, "%s: bad node key", data_dir);
		return -EINVAL;
	}
	if (snprintf(path, sizeof(path), "%s/nodes", data_dir) >=
		(int)sizeof(path) ||
	    strlen(n->key) > 200) {
		snprintf(err, errlen, "%s: node file name too long", data_dir);
		return -ENAMETOOLONG;
	}
	snprintf(name, sizeof(name), "%s.json", n->key);
	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "key",
	    n->key, "url", n->url, "last_start_ns",
	    (json_int_t)n->last_start_ns, "last_end_ns",
	    (json_int_t)n->last_end_ns, "last_ok_ns", (json_int_t)n->last_ok_ns,
	    "pulled", (json_int_t)n->pulled, "errors", (json_int_t)n->errors,
	    "refused", (json_int_t)n->refused, "last_error_ns",
	    (json_int_t)n->last_error_ns);
	if (o == NULL)
		return -ENOMEM;
	nodes_set_str(o, "host", n->host);
	nodes_set_str(o, "cursor", n->cursor);
	nodes_set_str(o, "last_error", n->last_error);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (text == NULL)
		return -ENOMEM;
	if ((dfd = safefile_dir_open(path, SAFEFILE_DIR_CREATE, err, errlen)) <
	    0) {
		free(text);
		return dfd;
	}
	if ((r = safefile_put(dfd, name, text, strlen(text), 0644)) < 0)
		snprintf(err, errlen, "%s/%s: %s", path, name, strerror(-r));
	close(dfd);
	free(text);
	return r;
}

/* Remove the temporary files of data_dir/nodes/ no live writer holds. */
int
vitals_nodes_recover(const char *data_dir)
{
	char path[PATH_MAX], target[256];
	struct dirent *de;
	int fd, tfd, n = 0;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/nodes", data_dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	    0)
		return errno == ENOENT ? 0 : -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		if (safefile_tmp_target(de->d_name, target, sizeof(target)) !=
		    0)
			continue;
		tfd = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (tfd < 0)
			continue;
		/* A live writer holds its temporary file locked. */
		if (flock(tfd, LOCK_EX | LOCK_NB) == 0 &&
		    unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
		close(tfd);
	}
	closedir(d);
	return n;
}
