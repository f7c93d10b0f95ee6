/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's on-disk cache: one gzip'd JSON file per entry,
 * {"format":2,"key":"HEX","name":"NAME","value":...} (compact, in that
 * order, so the value's text is found without parsing the rest), written
 * to a temporary name and renamed (safefile.c), every directory reached
 * from the cache's descriptor without following a symbolic link.  The key
 * hashes every input of the value, so an entry is valid exactly when its
 * inputs are unchanged; the key is public, so an entry is trusted only if
 * this user wrote it (its owner, a mode no one else may write) and it
 * names itself.  Anything else is a miss.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cache.h"
#include "hash.h"
#include "safefile.h"

#define CACHE_FORMAT 2
/* Largest entry read, compressed and inflated (a rollup is a few MB). */
#define CACHE_MAX_FILE (256ull << 20)
#define CACHE_MAX_VALUE (256ull << 20)
/* Deepest directory the pruning walk goes into. */
#define CACHE_MAX_DEPTH 8
#define CACHE_QUEUE 8 /* pending asynchronous writes */
#define CACHE_FNV_PRIME 0x100000001b3ull
#define CACHE_ALT_PRIME 0x9e3779b97f4a7c15ull

/* A write waiting for the writer thread. */
struct cache_job {
	char *name;
	struct cache_key key;
	size_t stem;
	void *obj;
	int (*encode)(void *obj, char **text, size_t *len);
	void (*release)(void *obj);
};

struct cache {
	char *dir;
	int dirfd; /* dir, opened and checked once */
	/* the writer thread and its queue */
	int started, stop;
	pthread_t writer;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t head, n;
	struct cache_job q[CACHE_QUEUE];
};

/* ---- keys ---- */

void
cache_key_init(struct cache_key *k, const char *kind)
{
	k->h[0] = 0xcbf29ce484222325ull;
	k->h[1] = 0x84222325cbf29ce4ull;
	cache_key_str(k, kind);
}

void
cache_key_add(struct cache_key *k, const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t a = k->h[0], b = k->h[1];
	size_t i;

	for (i = 0; i < n; i++) {
		a = (a ^ p[i]) * CACHE_FNV_PRIME;
		b = (b ^ p[i]) * CACHE_ALT_PRIME;
		b ^= b >> 29;
	}
	k->h[0] = a;
	k->h[1] = b;
}

void
cache_key_u64(struct cache_key *k, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	cache_key_add(k, b, sizeof(b));
}

void
cache_key_str(struct cache_key *k, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	/* The length first, so ("ab", "c") and ("a", "bc") differ. */
	cache_key_u64(k, s != NULL ? n : UINT64_MAX);
	cache_key_add(k, s, n);
}

void
cache_key_key(struct cache_key *k, const struct cache_key *other)
{
	cache_key_u64(k, other->h[0]);
	cache_key_u64(k, other->h[1]);
}

void
cache_key_hex(const struct cache_key *k, char out[33])
{
	snprintf(out, 33, "%016llx%016llx",
	    (unsigned long long)hash_mix64(k->h[0]),
	    (unsigned long long)hash_mix64(k->h[1] ^ k->h[0]));
}

/* ---- the directory ---- */

int
cache_open(const char *dir, struct cache **out, char *err, size_t errlen)
{
	struct cache *c;
	int fd;

	if ((fd = safefile_dir_open(dir, SAFEFILE_DIR_CREATE, err, errlen)) < 0)
		return fd;
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		close(fd);
		return -EACCES;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->dir = strdup(dir)) == NULL) {
		free(c);
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->dirfd = fd;
	*out = c;
	return 0;
}

static void cache_writer_stop(struct cache *c);

void
cache_close(struct cache *c)
{
	if (c == NULL)
		return;
	cache_writer_stop(c);
	close(c->dirfd);
	free(c->dir);
	free(c);
}

const char *
cache_dir(const struct cache *c)
{
	return c->dir;
}

/*
 * The directory of entry name, opened from the cache's descriptor without
 * following a symbolic link (made when create is set), and in *base the
 * entry's last name.  Returns a descriptor or a negative errno.
 */
static int
cache_entry_dir(
    struct cache *c, const char *name, int create, const char **base)
{
	const char *slash = strrchr(name, '/');
	char rel[PATH_MAX], why[PATH_MAX + 64];

	*base = slash != NULL ? slash + 1 : name;
	if (slash == NULL)
		return openat(
		    c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((size_t)(slash - name) >= sizeof(rel))
		return -ENAMETOOLONG;
	snprintf(rel, sizeof(rel), "%.*s", (int)(slash - name), name);
	return safefile_subdir(c->dirfd, rel, create, NULL, why, sizeof(why));
}

int
cache_has(struct cache *c, const char *name)
{
	const char *base;
	struct stat st;
	int dfd, r;

	if ((dfd = cache_entry_dir(c, name, 0, &base)) < 0)
		return 0;
	r = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode);
	close(dfd);
	return r;
}

/* ---- entries ---- */

/* Whether an entry with status st is this user's own. */
static int
cache_trusted(const struct stat *st)
{
	return st->st_uid == geteuid() &&
	    (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* Inflate all of gz, at most CACHE_MAX_VALUE bytes, NUL-terminated. */
static char *
cache_inflate(gzFile gz, size_t *len)
{
	size_t n = 0, cap = 64 * 1024;
	char *buf, *p;
	int k = 0;

	buf = malloc(cap);
	while (buf != NULL) {
		if (n + 1 >= cap) {
			if (cap >= CACHE_MAX_VALUE) {
				free(buf);
				return NULL;
			}
			if ((p = realloc(buf, cap *= 2)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
		if ((k = gzread(gz, buf + n, (unsigned)(cap - n - 1))) <= 0)
			break;
		n += (size_t)k;
	}
	if (buf == NULL || k < 0 || gzdirect(gz)) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The inflated contents of entry name, NUL-terminated (the caller
 * frees), if it is a regular file this user wrote; else NULL.
 */
static char *
cache_slurp(struct cache *c, const char *name, size_t *len)
{
	char why[128], *buf = NULL;
	const char *base;
	struct stat st;
	int dfd, fd;
	gzFile gz;

	if ((dfd = cache_entry_dir(c, name, 0, &base)) < 0)
		return NULL;
	fd = safefile_open_read(
	    dfd, base, 1, CACHE_MAX_FILE, &st, why, sizeof(why));
	close(dfd);
	if (fd < 0)
		return NULL;
	if (!cache_trusted(&st) || (gz = gzdopen(fd, "rb")) == NULL) {
		close(fd);
		return NULL;
	}
	buf = cache_inflate(gz, len);
	if (gzclose(gz) != Z_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The start of entry name stored with key k, up to its value, in a
 * malloc'd string (the caller's); NULL for a name that cannot be put in
 * it as is, or out of memory.
 */
static char *
cache_head(const struct cache_key *k, const char *name)
{
	char hex[33], *head;
	const char *p;
	size_t len;

	for (p = name; *p != '\0'; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
			return NULL;
	cache_key_hex(k, hex);
	len = strlen(name) + 96;
	if ((head = malloc(len)) == NULL)
		return NULL;
	snprintf(head, len,
	    "{\"format\":%d,\"key\":\"%s\",\"name\":\"%s\",\"value\":",
	    CACHE_FORMAT, hex, name);
	return head;
}

int
cache_get_text(struct cache *c, const char *name, const struct cache_key *k,
    char **buf, const char **value, size_t *len)
{
	char *b, *head;
	size_t n = 0, h;
	int ok;

	if ((head = cache_head(k, name)) == NULL)
		return -ENOENT;
	h = strlen(head);
	if ((b = cache_slurp(c, name, &n)) == NULL) {
		free(head);
		return -ENOENT;
	}
	ok = n >= h + 2 && memcmp(b, head, h) == 0 && b[n - 1] == '}';
	free(head);
	if (!ok) {
		free(b);
		return -ENOENT;
	}
	*buf = b;
	*value = b + h;
	*len = n - h - 1;
	return 0;
}

int
cache_get(
    struct cache *c, const char *name, const struct cache_key *k, json_t **out)
{
	const char *value;
	char *buf;
	size_t len;
	json_t *v;

	if (cache_get_text(c, name, k, &buf, &value, &len) != 0)
		return -ENOENT;
	v = json_loadb(value, len, 0, NULL);
	free(buf);
	if (v == NULL)
		return -ENOENT;
	*out = v;
	return 0;
}

/* Write head, text (len bytes) and "}" gzip'd to the temporary file f. */
static int
cache_write_gz(
    struct safefile *f, const char *head, const char *text, size_t len)
{
	gzFile gz;
	int fd, r = 0;

	if ((fd = dup(f->fd)) < 0)
		return -errno;
	if ((gz = gzdopen(fd, "wb1")) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	if (gzwrite(gz, head, (unsigned)strlen(head)) == 0 ||
	    (len > 0 && gzwrite(gz, text, (unsigned)len) == 0) ||
	    gzwrite(gz, "}", 1) == 0)
		r = -EIO;
	if (gzclose(gz) != Z_OK && r == 0)
		r = -EIO;
	return r;
}

int
cache_put_text(struct cache *c, const char *name, const struct cache_key *k,
    const char *text, size_t len)
{
	struct safefile f;
	const char *base;
	char *head;
	int dfd, r;

	if ((head = cache_head(k, name)) == NULL)
		return -EINVAL;
	if ((dfd = cache_entry_dir(c, name, 1, &base)) < 0) {
		free(head);
		return dfd;
	}
	if ((r = safefile_begin(&f, dfd, base, 0644)) == 0) {
		if ((r = cache_write_gz(&f, head, text, len)) == 0)
			r = safefile_commit(&f, base);
		else
			safefile_abort(&f);
	}
	close(dfd);
	free(head);
	return r;
}

int
cache_put(
    struct cache *c, const char *name, const struct cache_key *k, json_t *value)
{
	char *text;
	int r;

	if ((text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return -ENOMEM;
	r = cache_put_text(c, name, k, text, strlen(text));
	free(text);
	return r;
}

void
cache_remove_stale(struct cache *c, const char *name, size_t stem)
{
	const char *base;
	struct dirent *de;
	size_t plen;
	int dfd;
	DIR *d;

	if (strrchr(name, '/') == NULL ||
	    stem <= (size_t)(strrchr(name, '/') - name))
		return;
	if ((dfd = cache_entry_dir(c, name, 0, &base)) < 0)
		return;
	plen = stem - (size_t)(base - name);
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, plen) != 0 ||
		    strcmp(de->d_name, base) == 0)
			continue;
		unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/* ---- asynchronous writes ---- */

static void
cache_job_run(struct cache *c, struct cache_job *j)
{
	char *text = NULL;
	size_t len = 0;

	if (j->encode(j->obj, &text, &len) == 0 &&
	    cache_put_text(c, j->name, &j->key, text, len) == 0 && j->stem > 0)
		cache_remove_stale(c, j->name, j->stem);
	free(text);
	j->release(j->obj);
	free(j->name);
}

static void *
cache_writer(void *arg)
{
	struct cache *c = arg;
	struct cache_job j;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->n == 0 && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->n == 0)
			break;
		j = c->q[c->head];
		c->head = (c->head + 1) % CACHE_QUEUE;
		c->n--;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		cache_job_run(c, &j);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Start the writer on first use; 0, or -1 to write synchronously. */
static int
cache_writer_start(struct cache *c)
{
	if (c->started)
		return c->started > 0 ? 0 : -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->started =
	    pthread_create(&c->writer, NULL, cache_writer, c) == 0 ? 1 : -1;
	return c->started > 0 ? 0 : -1;
}

static void
cache_writer_stop(struct cache *c)
{
	if (c->started <= 0)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->writer, NULL);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	c->started = 0;
}

int
cache_put_async(struct cache *c, const char *name, const struct cache_key *k,
    size_t stem, void *obj, int (*encode)(void *obj, char **text, size_t *len),
    void (*release)(void *obj))
{
	struct cache_job j = { NULL, *k, stem, obj, encode, release };

	if ((j.name = strdup(name)) == NULL) {
		release(obj);
		return -ENOMEM;
	}
	if (cache_writer_start(c) != 0) {
		cache_job_run(c, &j);
		return 0;
	}
	pthread_mutex_lock(&c->mu);
	while (c->n == CACHE_QUEUE)
		pthread_cond_wait(&c->cv, &c->mu);
	c->q[(c->head + c->n) % CACHE_QUEUE] = j;
	c->n++;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* ---- pruning ---- */

/* A file met by the walk: its name under the cache dir. */
struct cache_file {
	char *rel;
	struct timespec mtime;
};

/* The files under a directory, as the walk finds them. */
struct cache_walk {
	struct cache_file *v;
	size_t n, cap;
	int failed;
};

static int
cache_walk_add(struct cache_walk *w, const char *rel, const struct stat *st)
{
	struct cache_file *v;

	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		if ((v = realloc(w->v, w->cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		w->v = v;
	}
	if ((w->v[w->n].rel = strdup(rel)) == NULL)
		return -ENOMEM;
	w->v[w->n++].mtime = st->st_mtim;
	return 0;
}

/*
 * Add the regular files under the directory open at fd (taken over),
 * named rel under the cache dir, going down into real directories only.
 */
static void
cache_walk_dir(struct cache_walk *w, int fd, const char *rel, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int sfd;
	DIR *d;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while (!w->failed && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			0 ||
		    snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) >=
			(int)sizeof(sub))
			continue;
		if (S_ISREG(st.st_mode))
			w->failed = cache_walk_add(w, sub, &st) != 0;
		else if (S_ISDIR(st.st_mode) && depth < CACHE_MAX_DEPTH &&
		    (sfd = openat(dirfd(d), de->d_name,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			cache_walk_dir(w, sfd, sub, depth + 1);
	}
	closedir(d);
}

static int
cache_file_cmp(const void *x, const void *y)
{
	const struct cache_file *a = x, *b = y;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->rel, b->rel);
}

/* Remove the entry rel itself (never what a symbolic link points to). */
static int
cache_unlink(struct cache *c, const char *rel)
{
	const char *base;
	int dfd, r;

	if ((dfd = cache_entry_dir(c, rel, 0, &base)) < 0)
		return 0;
	r = unlinkat(dfd, base, 0) == 0;
	close(dfd);
	return r;
}

int
cache_prune(struct cache *c, const char *subdir, size_t max_files)
{
	struct cache_walk w = { NULL, 0, 0, 0 };
	char why[PATH_MAX + 64];
	int fd, removed = 0;
	size_t i;

	if ((fd = safefile_subdir(
		 c->dirfd, subdir, 0, NULL, why, sizeof(why))) < 0)
		return 0;
	cache_walk_dir(&w, fd, subdir, 0);
	if (!w.failed && w.n > max_files) {
		qsort(w.v, w.n, sizeof(*w.v), cache_file_cmp);
		for (i = 0; i < w.n - max_files; i++)
			removed += cache_unlink(c, w.v[i].rel);
	}
	for (i = 0; i < w.n; i++)
		free(w.v[i].rel);
	free(w.v);
	return removed;
}
