/* SPDX-License-Identifier: MIT */
/*
 * The aggregator's on-disk cache: one gzip'd JSON file per entry,
 * {"format":1,"key":"HEX","value":...} (compact, in that order, so the
 * value's text is found without parsing the rest), written to a temporary
 * name and renamed.  The key hashes every input of the value, so an entry
 * is valid exactly when its inputs are unchanged; anything unreadable is a
 * miss.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <vitals/hash.h>
#include <vitals/store.h>

#include "cache.h"

#define CACHE_FORMAT 1
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
	    (unsigned long long)vitals_hash_mix64(k->h[0]),
	    (unsigned long long)vitals_hash_mix64(k->h[1] ^ k->h[0]));
}

/* ---- the directory ---- */

int
cache_open(const char *dir, struct cache **out)
{
	struct cache *c;
	char err[PATH_MAX + 64];
	int r;

	if ((r = vitals_store_prepare(dir, err, sizeof(err))) != 0)
		return r;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->dir = strdup(dir)) == NULL) {
		free(c);
		return -ENOMEM;
	}
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
	free(c->dir);
	free(c);
}

const char *
cache_dir(const struct cache *c)
{
	return c->dir;
}

static int
cache_path(const struct cache *c, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", c->dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- entries ---- */

/* The inflated contents of a gzip file, NUL-terminated; caller frees. */
static char *
cache_slurp(const char *path, size_t *len)
{
	size_t n = 0, cap = 64 * 1024;
	char *buf, *p;
	gzFile gz;
	int k = 0;

	if ((gz = gzopen(path, "rb")) == NULL)
		return NULL;
	buf = malloc(cap);
	while (buf != NULL) {
		if (n + 1 >= cap) {
			if ((p = realloc(buf, cap *= 2)) == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
		}
		if ((k = gzread(gz, buf + n, (unsigned)(cap - n - 1))) <= 0)
			break;
		n += (size_t)k;
	}
	if (gzclose(gz) != Z_OK || k < 0) {
		free(buf);
		return NULL;
	}
	if (buf != NULL)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* The start of an entry stored with key k, up to its value. */
static int
cache_head(const struct cache_key *k, char *buf, size_t len)
{
	char hex[33];

	cache_key_hex(k, hex);
	return snprintf(buf, len,
	    "{\"format\":%d,\"key\":\"%s\",\"value\":", CACHE_FORMAT, hex);
}

int
cache_get_text(struct cache *c, const char *name, const struct cache_key *k,
    char **buf, const char **value, size_t *len)
{
	char path[PATH_MAX], head[96], *b;
	size_t n = 0, h;

	if (cache_path(c, name, path, sizeof(path)) != 0 ||
	    (b = cache_slurp(path, &n)) == NULL)
		return -ENOENT;
	h = (size_t)cache_head(k, head, sizeof(head));
	if (n < h + 2 || memcmp(b, head, h) != 0 || b[n - 1] != '}') {
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

/* Write head, text (len bytes) and "}" gzip'd to the new file tmp. */
static int
cache_write_gz(const char *tmp, const char *head, const char *text, size_t len)
{
	gzFile gz;
	int r = 0;

	if ((gz = gzopen(tmp, "wb1")) == NULL)
		return errno ? -errno : -ENOMEM;
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
	char path[PATH_MAX], tmp[PATH_MAX + 32], dir[PATH_MAX], head[96];
	char err[PATH_MAX + 64], *slash;
	int r;

	if ((r = cache_path(c, name, path, sizeof(path))) != 0)
		return r;
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	if ((r = vitals_store_prepare(dir, err, sizeof(err))) != 0)
		return r;
	cache_head(k, head, sizeof(head));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if ((r = cache_write_gz(tmp, head, text, len)) == 0 &&
	    rename(tmp, path) != 0)
		r = -errno;
	if (r != 0)
		unlink(tmp);
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
	char path[PATH_MAX], file[PATH_MAX * 2];
	const char *base, *prefix;
	struct dirent *de;
	size_t plen;
	DIR *d;

	if (cache_path(c, name, path, sizeof(path)) != 0 ||
	    (base = strrchr(name, '/')) == NULL ||
	    (size_t)(base - name) >= stem)
		return;
	prefix = base + 1;
	plen = stem - (size_t)(prefix - name);
	path[strlen(c->dir) + 1 + (size_t)(base - name)] = '\0';
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0 ||
		    strcmp(de->d_name, prefix) == 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		unlink(file);
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

/* A file met by the walk. */
struct cache_file {
	char *path;
	struct timespec mtime;
};

/* nftw gives no argument to its callback: the walk's state lives here. */
static struct {
	struct cache_file *v;
	size_t n, cap;
	int failed;
} cache_walk;

static int
cache_walk_add(
    const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct cache_file *v;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (cache_walk.n == cache_walk.cap) {
		cache_walk.cap = cache_walk.cap ? cache_walk.cap * 2 : 256;
		v = realloc(cache_walk.v, cache_walk.cap * sizeof(*v));
		if (v == NULL) {
			cache_walk.failed = 1;
			return 1;
		}
		cache_walk.v = v;
	}
	if ((cache_walk.v[cache_walk.n].path = strdup(path)) == NULL) {
		cache_walk.failed = 1;
		return 1;
	}
	cache_walk.v[cache_walk.n++].mtime = st->st_mtim;
	return 0;
}

static int
cache_file_cmp(const void *x, const void *y)
{
	const struct cache_file *a = x, *b = y;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->path, b->path);
}

int
cache_prune(struct cache *c, const char *subdir, size_t max_files)
{
	char path[PATH_MAX];
	size_t i;
	int removed = 0;

	if (cache_path(c, subdir, path, sizeof(path)) != 0)
		return 0;
	memset(&cache_walk, 0, sizeof(cache_walk));
	nftw(path, cache_walk_add, 16, FTW_PHYS);
	if (!cache_walk.failed && cache_walk.n > max_files) {
		qsort(cache_walk.v, cache_walk.n, sizeof(*cache_walk.v),
		    cache_file_cmp);
		for (i = 0; i < cache_walk.n - max_files; i++)
			removed += unlink(cache_walk.v[i].path) == 0;
	}
	for (i = 0; i < cache_walk.n; i++)
		free(cache_walk.v[i].path);
	free(cache_walk.v);
	memset(&cache_walk, 0, sizeof(cache_walk));
	return removed;
}
