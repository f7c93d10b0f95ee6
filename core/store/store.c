/* SPDX-License-Identifier: MIT */
/*
 * The epoch store on disk (<vitals/store.h>): one gzip'd JSON file per
 * epoch under DATA_DIR/YYYY-MM-DD/, written atomically, listed, read back
 * (regular files of bounded size only), recovered after a crash and
 * pruned, never through a symbolic link in the data dir.  The JSON form
 * and the file names come from codec.c, the files from safefile.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <vitals/store.h>

#include "codec.h"
#include "safefile.h"

/* Leftover temporary files older than this are removed by prune. */
#define STORE_TMP_AGE_NS (3600ull * 1000000000ull)
/* First read buffer for a decompressed file; doubled as needed. */
#define STORE_READ_CHUNK (64 * 1024)
/* First buffer for an epoch being compressed; doubled as needed. */
#define STORE_WRITE_CHUNK (64 * 1024)
/* Largest file inflated in one go (larger ones are streamed). */
#define STORE_ONESHOT_MAX (16u << 20)
/*
 * Largest epoch file read, compressed and inflated: a real epoch is a
 * few MB; a gzip bomb or /dev/zero must not take all memory.
 */
#define STORE_MAX_FILE (256ull << 20)
#define STORE_MAX_EPOCH (256ull << 20)

/*
 * Called for each file name in each date dir (dirfd, named dir);
 * nonzero return stops.
 */
typedef int (*store_file_fn)(
    int dirfd, const char *dir, const char *name, void *arg);

static void __attribute__((format(printf, 3, 4)))
store_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "YYYY-MM-DD", the only directories the store looks into. */
static int
store_is_date(const char *s)
{
	static const char pat[] = "DDDD-DD-DD";
	size_t i;

	for (i = 0; i < sizeof(pat) - 1; i++) {
		if (pat[i] == 'D' ? s[i] < '0' || s[i] > '9' : s[i] != pat[i])
			return 0;
	}
	return s[i] == '\0';
}

/* Open date dir day of datafd: a real directory, never a symlink. */
static int
store_day_open(int datafd, const char *day)
{
	int fd;

	if ((fd = openat(datafd, day,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	return fd;
}

/* Call fn for every entry of the date dir day but "." and "..". */
static int
store_each_in(
    int datafd, const char *dir, const char *day, store_file_fn fn, void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if ((fd = store_day_open(datafd, day)) < 0)
		return fd;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (r == 0) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			r = -errno;
			break;
		}
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			r = fn(dirfd(d), dir, de->d_name, arg);
	}
	closedir(d);
	return r;
}

/*
 * Call fn for every file in every date dir of data_dir named from_day
 * ("YYYY-MM-DD") or later, or in every one if from_day is NULL.  A date
 * dir that vanished meanwhile (a concurrent prune), is not a directory
 * or is a symbolic link (never followed) is skipped.
 */
static int
store_each_file_from(
    const char *data_dir, const char *from_day, store_file_fn fn, void *arg)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *top;
	int fd, r = 0;

	if ((fd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if ((top = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (r == 0) {
		errno = 0;
		if ((de = readdir(top)) == NULL) {
			r = -errno;
			break;
		}
		if (!store_is_date(de->d_name) ||
		    (from_day != NULL && strcmp(de->d_name, from_day) < 0))
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", data_dir, de->d_name) >=
		    (int)sizeof(dir))
			r = -ENAMETOOLONG;
		else if ((r = store_each_in(dirfd(top), dir, de->d_name, fn,
			      arg)) == -ENOENT ||
		    r == -ENOTDIR)
			r = 0;
	}
	closedir(top);
	return r;
}

/* store_each_file_from() over every date dir. */
static int
store_each_file(const char *data_dir, store_file_fn fn, void *arg)
{
	return store_each_file_from(data_dir, NULL, fn, arg);
}

/* A listing being made: entries allocated, and the earliest start kept. */
struct store_lister {
	struct vitals_store_list l;
	size_t cap;
	uint64_t since_ns;
};

static int
store_list_add(int dirfd, const char *dir, const char *name, void *arg)
{
	struct store_lister *w = arg;
	struct vitals_store_list *l = &w->l;
	struct vitals_store_entry *v, *e;
	char host[256];
	uint64_t start;
	size_t len, cap;

	(void)dirfd;
	if (codec_parse_name(name, &start, host, sizeof(host)) < 0)
		return 0; /* temporary files and junk */
	if (start < w->since_ns)
		return 0;
	if (l->n == w->cap) {
		cap = w->cap != 0 ? w->cap * 2 : 64;
		if ((v = realloc(l->v, cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		l->v = v;
		w->cap = cap;
	}
	e = &l->v[l->n];
	e->start_ns = start;
	e->host = strdup(host);
	len = strlen(dir) + strlen(name) + 2;
	if (e->host == NULL || (e->path = malloc(len)) == NULL) {
		free(e->host);
		return -ENOMEM;
	}
	snprintf(e->path, len, "%s/%s", dir, name);
	l->n++;
	return 0;
}

static int
store_entry_cmp(const void *a, const void *b)
{
	const struct vitals_store_entry *x = a, *y = b;
	int c;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if ((c = strcmp(x->host, y->host)) != 0)
		return c;
	return strcmp(x->path, y->path);
}

/*
 * List the epoch files under data_dir/YYYY-MM-DD/ that start at since_ns
 * or later, sorted by start then host; only the date dirs of since_ns's
 * day (UTC) and later are read.  Names that do not parse (temporary
 * files, junk) are skipped.  Returns 0 and fills *out (the caller frees
 * it with vitals_store_list_free), -ENOENT if data_dir is missing, or
 * another negative errno.
 */
int
vitals_store_list_since(
    const char *data_dir, uint64_t since_ns, struct vitals_store_list *out)
{
	struct store_lister w = { { 0, NULL }, 0, since_ns };
	time_t sec = (time_t)(since_ns / 1000000000ull);
	char day[16];
	struct tm tm;
	int r;

	day[0] = '\0';
	if (since_ns > 0 && gmtime_r(&sec, &tm) != NULL)
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	r = store_each_file_from(
	    data_dir, day[0] != '\0' ? day : NULL, store_list_add, &w);
	if (r < 0) {
		vitals_store_list_free(&w.l);
		return r;
	}
	if (w.l.n > 1)
		qsort(w.l.v, w.l.n, sizeof(*w.l.v), store_entry_cmp);
	*out = w.l;
	return 0;
}

/* Every epoch file under data_dir: vitals_store_list_since() from 0. */
int
vitals_store_list(const char *data_dir, struct vitals_store_list *out)
{
	return vitals_store_list_since(data_dir, 0, out);
}

/* Free the entries of a listing and zero it; accepts a zeroed list. */
void
vitals_store_list_free(struct vitals_store_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].host);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* The error of a gz stream as an errno; why gets zlib's message. */
static int
store_gz_errno(gzFile gz, int saved, char *why, size_t whylen)
{
	const char *msg;
	int zerr;

	msg = gzerror(gz, &zerr);
	if (zerr == Z_ERRNO) {
		saved = saved != 0 ? saved : EIO;
		store_err(why, whylen, "%s", strerror(saved));
		return -saved;
	}
	if (zerr == Z_MEM_ERROR) {
		store_err(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* zlib prefixes its message with the file, here "<fd:N>: ". */
	if (strstr(msg, ": ") != NULL)
		msg = strstr(msg, ": ") + 2;
	store_err(why, whylen, "gzip: %s", msg);
	return -EBADMSG;
}

/* The reason an epoch inflating past STORE_MAX_EPOCH is refused. */
static int
store_too_big(char *why, size_t whylen)
{
	char limit[32];

	store_err(why, whylen,
	    "inflates to more than the %s limit for an "
	    "epoch file: not read",
	    safefile_size_str(STORE_MAX_EPOCH, limit, sizeof(limit)));
	return -EFBIG;
}

/*
 * Read and inflate all of gz into a malloc'd buffer (the caller's), at
 * most STORE_MAX_EPOCH bytes of it.
 */
static int
store_gz_slurp(gzFile gz, char **out, size_t *len, char *why, size_t whylen)
{
	size_t n = 0, cap = 0;
	char *buf = NULL, *p;
	int k, zerr, saved;

	for (;;) {
		if (n == cap) {
			if (cap > STORE_MAX_EPOCH) {
				free(buf);
				return store_too_big(why, whylen);
			}
			cap = cap ? cap * 2 : STORE_READ_CHUNK;
			if (cap > STORE_MAX_EPOCH + 1)
				cap = STORE_MAX_EPOCH + 1;
			if ((p = realloc(buf, cap)) == NULL)
				goto nomem;
			buf = p;
		}
		k = gzread(gz, buf + n,
		    (unsigned)(cap - n > INT_MAX ? INT_MAX : cap - n));
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	/* A truncated stream ends with k == 0 but leaves an error behind. */
	saved = errno;
	gzerror(gz, &zerr);
	if (k < 0 || zerr != Z_OK) {
		free(buf);
		return store_gz_errno(gz, saved, why, whylen);
	}
	*out = buf;
	*len = n;
	return 0;
nomem:
	free(buf);
	store_err(why, whylen, "out of memory");
	return -ENOMEM;
}

/*
 * Inflate the compressed bytes in[0..n) in one call into a buffer sized by
 * the gzip trailer: 0 and *out, *len when they are one whole gzip member
 * of that size, else -1 (the caller streams the file, which says what is
 * wrong with it).
 */
static int
store_inflate_once(const unsigned char *in, size_t n, char **out, size_t *len)
{
	z_stream z;
	size_t size;
	char *buf;
	int r;

	if (n < 18 || in[0] != 0x1f || in[1] != 0x8b)
		return -1;
	size = (size_t)in[n - 4] | (size_t)in[n - 3] << 8 |
	    (size_t)in[n - 2] << 16 | (size_t)in[n - 1] << 24;
	/* The trailer is the size mod 2^32: inflate stops past it anyway. */
	if (size > STORE_MAX_EPOCH || (buf = malloc(size + 1)) == NULL)
		return -1;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return -1;
	}
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = (unsigned char *)buf;
	z.avail_out = (uInt)(size + 1); /* + 1: a longer stream shows */
	r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (r != Z_STREAM_END || z.avail_in != 0 || z.total_out != size) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = size;
	return 0;
}

/*
 * The common case in one go: read the whole (small) file at fd, size
 * bytes, inflate it with one call.  0 or -1 as store_inflate_once; fd is
 * left at 0.
 */
static int
store_read_once(int fd, uint64_t size, char **out, size_t *len)
{
	unsigned char *in;
	ssize_t k;
	size_t n = 0;
	int r = -1;

	if (size == 0 || size > STORE_ONESHOT_MAX ||
	    (in = malloc((size_t)size)) == NULL)
		return -1;
	while (n < (size_t)size && (k = read(fd, in + n, (size_t)size - n)) > 0)
		n += (size_t)k;
	if (n == (size_t)size)
		r = store_inflate_once(in, n, out, len);
	free(in);
	if (r != 0 && lseek(fd, 0, SEEK_SET) != 0)
		r = -2;
	return r;
}

/*
 * The inflated contents of the gzip file open at fd (taken over: closed
 * here), of size bytes.
 */
static int
store_read_fd(
    int fd, uint64_t size, char **out, size_t *len, char *why, size_t whylen)
{
	gzFile gz;
	int r;

	if ((r = store_read_once(fd, size, out, len)) == 0) {
		close(fd);
		return 0;
	}
	if (r == -2) {
		store_err(why, whylen, "%s", strerror(errno));
		close(fd);
		return -EIO;
	}
	if ((gz = gzdopen(fd, "rb")) == NULL) {
		close(fd);
		store_err(why, whylen, "out of memory");
		return -ENOMEM;
	}
	r = store_gz_slurp(gz, out, len, why, whylen);
	/* zlib passes through what is not gzip; the store only holds gzip. */
	if (r == 0 && gzdirect(gz)) {
		free(*out);
		store_err(why, whylen, "not a gzip file");
		r = -EBADMSG;
	}
	gzclose(gz);
	return r;
}

/*
 * The inflated contents of the gzip file name in dirfd (AT_FDCWD: a
 * path): a regular file, not a symbolic link, of bounded size.
 */
static int
store_read_gz(int dirfd, const char *name, char **out, size_t *len, char *why,
    size_t whylen)
{
	struct stat st;
	int fd;

	if ((fd = safefile_open_read(
		 dirfd, name, 1, STORE_MAX_FILE, &st, why, whylen)) < 0)
		return fd;
	return store_read_fd(fd, (uint64_t)st.st_size, out, len, why, whylen);
}

/*
 * Read the epoch file at path.  Returns 0 and sets *out (the caller's,
 * free with vitals_epoch_free); -ENOENT (or another errno) if it cannot
 * be opened; -ELOOP for a symbolic link, -EINVAL for a FIFO, a device or
 * anything else not a regular file, -EFBIG for a file past the limits;
 * -EBADMSG if it is truncated, not gzip, not JSON or not an epoch.  err
 * then says "PATH: reason".
 */
int
vitals_epoch_load(
    const char *path, struct vitals_epoch **out, char *err, size_t errlen)
{
	char why[256];
	size_t len = 0;
	char *buf = NULL;
	int r;

	r = store_read_gz(AT_FDCWD, path, &buf, &len, why, sizeof(why));
	if (r < 0) {
		store_err(err, errlen, "%s: %s", path, why);
		return r;
	}
	r = codec_epoch_parse(buf, len, out, why, sizeof(why));
	free(buf);
	if (r < 0)
		store_err(err, errlen, "%s: %s", path, why);
	return r;
}

/* Free an epoch from vitals_epoch_load; accepts NULL. */
void
vitals_epoch_free(struct vitals_epoch *e)
{
	epoch_free(e);
}

int
vitals_store_prepare(const char *data_dir, char *err, size_t errlen)
{
	int fd, r = 0;

	if ((fd = safefile_dir_open(
		 data_dir, SAFEFILE_DIR_CREATE, err, errlen)) < 0)
		return fd;
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		r = -errno;
		store_err(err, errlen, "%s: %s", data_dir, strerror(-r));
	}
	close(fd);
	return r;
}

/* Where codec_compact_write's output goes: a gzip stream into memory. */
struct store_sink {
	z_stream z;
	unsigned char *buf;
	size_t cap;
	int error; /* negative errno of the first failure */
};

/* Deflate what z holds with flush, growing the buffer as it fills. */
static int
store_deflate(struct store_sink *s, int flush)
{
	unsigned char *b;
	size_t used;
	int r;

	do {
		if (s->z.avail_out == 0) {
			used = s->cap;
			s->cap = s->cap ? s->cap * 2 : STORE_WRITE_CHUNK;
			if ((b = realloc(s->buf, s->cap)) == NULL)
				return -ENOMEM;
			s->buf = b;
			s->z.next_out = b + used;
			s->z.avail_out = (uInt)(s->cap - used);
		}
		r = deflate(&s->z, flush);
		if (r == Z_STREAM_ERROR)
			return -EIO;
	} while (
	    s->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
	return 0;
}

/* A codec_sink_fn: deflate buf[0..size); 0 or a negative errno. */
static int
store_sink_write(const char *buf, size_t size, void *arg)
{
	struct store_sink *s = arg;

	s->z.next_in = (unsigned char *)(uintptr_t)buf;
	s->z.avail_in = (uInt)size;
	if (size > 0 && (s->error = store_deflate(s, Z_NO_FLUSH)) < 0)
		return s->error;
	return 0;
}

/*
 * The HCA sizes that fit counter_bytes (vitals_epoch_encode_within): the
 * vital whose counters take most folded in half, over and over.  sizes
 * and bytes have e->nvitals entries.  Returns 1 if any is folded.
 */
static int
store_fold_plan(const struct vitals_epoch *e, uint64_t counter_bytes,
    uint32_t *sizes, uint64_t *bytes)
{
	const struct vitals_vital_epoch *v;
	uint64_t total = 0;
	uint32_t i, big;
	int folded = 0;

	for (i = 0; i < e->nvitals; i++) {
		v = &e->vitals[i];
		sizes[i] = v->hca_size;
		bytes[i] = codec_hca_bytes(v->hca, v->hca_size, v->hca_size);
		total += bytes[i];
	}
	while (total > counter_bytes) {
		for (i = 0, big = e->nvitals; i < e->nvitals; i++)
			if (sizes[i] > VITALS_FOLD_MIN &&
			    (big == e->nvitals || bytes[i] > bytes[big]))
				big = i;
		if (big == e->nvitals)
			break;
		v = &e->vitals[big];
		sizes[big] /= 2;
		total -= bytes[big];
		bytes[big] = codec_hca_bytes(v->hca, v->hca_size, sizes[big]);
		total += bytes[big];
		folded = 1;
	}
	return folded;
}

/*
 * A copy of v with its HCA folded to m counters and its samples' slots
 * cut to them, in memory of its own (free hca and samples); 0 or -ENOMEM.
 */
static int
store_fold_vital(const struct vitals_vital_epoch *v, uint32_t m,
    struct vitals_vital_epoch *out)
{
	struct vitals_sample *s = NULL;
	uint64_t *hca;
	uint32_t i;

	*out = *v;
	if ((hca = calloc(m, sizeof(*hca))) == NULL ||
	    (v->nsamples > 0 &&
		(s = malloc(v->nsamples * sizeof(*s))) == NULL)) {
		free(hca);
		return -ENOMEM;
	}
	for (i = 0; v->hca != NULL && i < v->hca_size; i++)
		hca[i & (m - 1)] += v->hca[i];
	for (i = 0; i < v->nsamples; i++) {
		s[i] = v->samples[i];
		s[i].slot &= m - 1;
	}
	out->hca_size = m;
	out->hca = hca;
	out->samples = s;
	return 0;
}

static void
store_fold_free(struct vitals_vital_epoch *vs, const struct vitals_epoch *e)
{
	uint32_t i;

	for (i = 0; i < e->nvitals; i++) {
		if (vs[i].hca == e->vitals[i].hca)
			continue;
		free((void *)vs[i].hca);
		free((void *)vs[i].samples);
	}
	free(vs);
}

/*
 * e with its HCAs folded to fit counter_bytes, in *out (vitals in *vs:
 * free them with store_fold_free), or *vs NULL if none needs it.
 */
static int
store_fold(const struct vitals_epoch *e, uint64_t counter_bytes,
    struct vitals_epoch *out, struct vitals_vital_epoch **vs)
{
	uint32_t *sizes, i;
	uint64_t *bytes;
	int r = 0;

	*vs = NULL;
	if (counter_bytes == 0 || e->nvitals == 0)
		return 0;
	sizes = calloc(e->nvitals, sizeof(*sizes));
	bytes = calloc(e->nvitals, sizeof(*bytes));
	if (sizes == NULL || bytes == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if (!store_fold_plan(e, counter_bytes, sizes, bytes))
		goto out;
	if ((*vs = calloc(e->nvitals, sizeof(**vs))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < e->nvitals && r == 0; i++) {
		if (sizes[i] == e->vitals[i].hca_size)
			(*vs)[i] = e->vitals[i];
		else
			r = store_fold_vital(
			    &e->vitals[i], sizes[i], &(*vs)[i]);
	}
	if (r != 0) {
		for (; i < e->nvitals; i++)
			(*vs)[i] = e->vitals[i];
		store_fold_free(*vs, e);
		*vs = NULL;
		goto out;
	}
	*out = *e;
	out->vitals = *vs;
out:
	free(sizes);
	free(bytes);
	return r;
}

int
vitals_epoch_encode(const struct vitals_epoch *e, struct vitals_epoch_file *out,
    char *err, size_t errlen)
{
	return vitals_epoch_encode_within(e, 0, out, err, errlen);
}

int
vitals_epoch_encode_within(const struct vitals_epoch *e, uint64_t counter_bytes,
    struct vitals_epoch_file *out, char *err, size_t errlen)
{
	struct vitals_vital_epoch *vs = NULL;
	struct vitals_epoch folded;
	struct store_sink s = { .error = 0 };
	char rel[PATH_MAX];
	int r;

	memset(out, 0, sizeof(*out));
	r = codec_epoch_relpath(e->start_ns, e->host, rel, sizeof(rel));
	if (r < 0) {
		store_err(err, errlen, "epoch file name: %s", strerror(-r));
		return r;
	}
	if ((r = store_fold(e, counter_bytes, &folded, &vs)) < 0) {
		store_err(err, errlen, "out of memory");
		return r;
	}
	/* windowBits 15 + 16: a gzip stream, as gzopen writes. */
	if (deflateInit2(&s.z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		if (vs != NULL)
			store_fold_free(vs, e);
		store_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = codec_compact_write(vs != NULL ? &folded : e, store_sink_write, &s);
	if (vs != NULL)
		store_fold_free(vs, e);
	if (r == 0)
		r = store_deflate(&s, Z_FINISH);
	if (r == 0 && (out->rel = strdup(rel)) == NULL)
		r = -ENOMEM;
	if (r < 0) {
		deflateEnd(&s.z);
		free(s.buf);
		store_err(err, errlen, "encoding the epoch: %s", strerror(-r));
		return r;
	}
	out->start_ns = e->start_ns;
	out->data = s.buf;
	out->len = s.z.total_out;
	deflateEnd(&s.z);
	return 0;
}

int
vitals_epoch_json(const struct vitals_epoch *e, char **out, size_t *len)
{
	return codec_text_encode(e, out, len);
}

void
vitals_epoch_file_free(struct vitals_epoch_file *f)
{
	if (f == NULL)
		return;
	free(f->rel);
	free(f->data);
	memset(f, 0, sizeof(*f));
}

/*
 * Store f under data_dir: open (or make) the date dir without following
 * a symbolic link, write the file under a temporary name there, fsync
 * it, rename it into place and fsync the directory (and data_dir when
 * the date dir is new), so a crash leaves either no file or a whole one.
 */
int
vitals_epoch_put(const struct vitals_epoch_file *f, const char *data_dir,
    char *path, size_t pathlen, char *err, size_t errlen)
{
	char day[16], final[PATH_MAX], why[PATH_MAX + 160];
	const char *slash;
	int datafd, dayfd = -1, made = 0, r;

	if (f == NULL || f->rel == NULL || (f->data == NULL && f->len > 0) ||
	    (slash = strchr(f->rel, '/')) == NULL ||
	    (size_t)(slash - f->rel) >= sizeof(day)) {
		store_err(
		    err, errlen, "%s: no encoded epoch to write", data_dir);
		return -EINVAL;
	}
	snprintf(day, sizeof(day), "%.*s", (int)(slash - f->rel), f->rel);
	if (snprintf(final, sizeof(final), "%s/%s", data_dir, f->rel) >=
		(int)sizeof(final) ||
	    (path != NULL && strlen(final) >= pathlen)) {
		store_err(
		    err, errlen, "%s: epoch file name too long", data_dir);
		return -ENAMETOOLONG;
	}
	if ((datafd = safefile_dir_open(
		 data_dir, SAFEFILE_DIR_CREATE, err, errlen)) < 0)
		return datafd;
	if ((dayfd = r = safefile_subdir(
		 datafd, day, 1, &made, why, sizeof(why))) < 0) {
		store_err(err, errlen, "%s/%s", data_dir, why);
		goto out;
	}
	if ((r = safefile_put(
		 dayfd, slash + 1, f->data, f->len, SAFEFILE_FILE_MODE)) < 0) {
		store_err(err, errlen, "%s: %s", final, strerror(-r));
		goto out;
	}
	/* A new date dir must reach the disk in data_dir too. */
	if (made && fsync(datafd) < 0) {
		r = -errno;
		store_err(err, errlen, "%s: %s", data_dir, strerror(-r));
		goto out;
	}
	if (path != NULL)
		strcpy(path, final);
	r = 0;
out:
	if (dayfd >= 0)
		close(dayfd);
	close(datafd);
	return r;
}

int
vitals_epoch_save(const struct vitals_epoch *e, const char *data_dir,
    char *path, size_t pathlen, char *err, size_t errlen)
{
	struct vitals_epoch_file f;
	int r;

	if ((r = vitals_epoch_encode(e, &f, err, errlen)) < 0)
		return r;
	r = vitals_epoch_put(&f, data_dir, path, pathlen, err, errlen);
	vitals_epoch_file_free(&f);
	return r;
}

/* ---- retention ---- */

/* The date dir of the files being removed, kept open from one to the next. */
struct store_days {
	int datafd; /* the data dir */
	int fd; /* date dir day, or -1 */
	int removed; /* files removed from it */
	char day[16];
};

/* Close the date dir held and remove it if files went and it emptied. */
static void
store_days_done(struct store_days *d)
{
	if (d->fd < 0)
		return;
	close(d->fd);
	d->fd = -1;
	if (d->removed > 0)
		unlinkat(
		    d->datafd, d->day, AT_REMOVEDIR); /* fails if not empty */
	d->removed = 0;
}

/*
 * The date dir and name of a listed path (".../DAY/NAME"): *name points
 * into path, d->fd is DAY's descriptor.  Returns 0 or a negative errno.
 */
static int
store_days_at(struct store_days *d, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/'), *prev;
	char day[16];

	if (slash == NULL)
		return -EINVAL;
	for (prev = slash; prev > path && prev[-1] != '/'; prev--)
		;
	if ((size_t)(slash - prev) >= sizeof(day))
		return -EINVAL;
	snprintf(day, sizeof(day), "%.*s", (int)(slash - prev), prev);
	*name = slash + 1;
	if (d->fd >= 0 && strcmp(d->day, day) == 0)
		return 0;
	store_days_done(d);
	strcpy(d->day, day);
	d->fd = store_day_open(d->datafd, day);
	return d->fd < 0 ? d->fd : 0;
}

/*
 * Unlink the listed file at path itself (a symbolic link is removed, not
 * followed; nor is a date dir that became one); 1 if it was removed.
 */
static int
store_remove(struct store_days *d, const char *path)
{
	const char *name;

	if (store_days_at(d, path, &name) < 0 || unlinkat(d->fd, name, 0) < 0)
		return 0;
	d->removed++;
	return 1;
}

/*
 * Keep the newest files of l[first..] whose sizes sum to at most max;
 * remove the older ones.  Returns the number removed.
 */
static int
store_prune_size(struct store_days *d, const struct vitals_store_list *l,
    size_t first, uint64_t max)
{
	uint64_t total = 0;
	const char *name;
	struct stat st;
	size_t i;
	int n = 0;

	for (i = l->n; i > first; i--) {
		if (store_days_at(d, l->v[i - 1].path, &name) == 0 &&
		    fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			total += (uint64_t)st.st_size;
		if (total > max)
			break;
	}
	for (; i > first; i--)
		n += store_remove(d, l->v[i - 1].path);
	return n;
}

/* State of the walk that removes old temporary files. */
struct store_tmp_walk {
	uint64_t before_ns; /* remove those last modified before this */
	int n; /* removed so far */
};

static int
store_prune_tmp(int dirfd, const char *dir, const char *name, void *arg)
{
	struct store_tmp_walk *w = arg;
	struct stat st;
	uint64_t mtime;

	if (name[0] != '.' || strstr(name, SAFEFILE_TMP_TAG) == NULL)
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
	    (uint64_t)st.st_mtim.tv_nsec;
	if (mtime < w->before_ns && unlinkat(dirfd, name, 0) == 0) {
		w->n++;
		rmdir(
		    dir); /* a symbolic link is not removed; fails if not empty */
	}
	return 0;
}

/*
 * Retention: remove the files that started before now_ns - max_age_ns
 * (if max_age_ns > 0), then the oldest until the files total at most
 * max_bytes (if max_bytes > 0), then temporary files older than an hour;
 * a date dir emptied on the way goes too.  Files are removed from their
 * date dir's descriptor: no symbolic link is followed.  A file that
 * cannot be removed is left for the next pass.  Returns the number of
 * files removed (0 if data_dir does not exist), or a negative errno.
 */
int
vitals_store_prune(const char *data_dir, uint64_t max_age_ns,
    uint64_t max_bytes, uint64_t now_ns)
{
	struct store_tmp_walk w = { 0, 0 };
	struct store_days d = { -1, -1, 0, "" };
	struct vitals_store_list l;
	uint64_t cutoff = 0;
	size_t first = 0;
	int n = 0, r;

	if ((d.datafd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((r = vitals_store_list(data_dir, &l)) < 0) {
		close(d.datafd);
		return r == -ENOENT ? 0 : r;
	}
	if (max_age_ns > 0 && now_ns > max_age_ns)
		cutoff = now_ns - max_age_ns;
	while (first < l.n && l.v[first].start_ns < cutoff)
		n += store_remove(&d, l.v[first++].path);
	if (max_bytes > 0)
		n += store_prune_size(&d, &l, first, max_bytes);
	store_days_done(&d);
	vitals_store_list_free(&l);
	close(d.datafd);
	if (now_ns > STORE_TMP_AGE_NS) {
		w.before_ns = now_ns - STORE_TMP_AGE_NS;
		if ((r = store_each_file(data_dir, store_prune_tmp, &w)) < 0)
			return r;
	}
	return n + w.n;
}

/* ---- recovery after a crash ---- */

/* Counts of a recovery pass. */
struct store_recovery {
	unsigned recovered; /* temporary files renamed into place */
	unsigned removed; /* incomplete ones removed */
};

/*
 * Whether the file open at fd (size bytes), in date dir dir, holds a
 * whole epoch whose name is target: a complete gzip stream that decodes
 * as an epoch stored under that name.
 */
static int
store_is_whole(int fd, uint64_t size, const char *dir, const char *target)
{
	char rel[PATH_MAX], why[256], *buf = NULL;
	struct vitals_epoch *e = NULL;
	const char *day = strrchr(dir, '/');
	size_t len, dlen;
	int rfd, ok;

	if ((rfd = dup(fd)) < 0 ||
	    store_read_fd(rfd, size, &buf, &len, why, sizeof(why)) != 0)
		return 0;
	ok = codec_epoch_parse(buf, len, &e, why, sizeof(why)) == 0 &&
	    codec_epoch_relpath(e->start_ns, e->host, rel, sizeof(rel)) > 0;
	free(buf);
	day = day != NULL ? day + 1 : dir;
	dlen = strlen(day);
	ok = ok && strncmp(rel, day, dlen) == 0 && rel[dlen] == '/' &&
	    strcmp(rel + dlen + 1, target) == 0;
	vitals_epoch_free(e);
	return ok;
}

/*
 * A file of a date dir, if a temporary file of the store: renamed to
 * the name it was written for when it holds that whole epoch, else
 * removed; left alone while its writer holds its lock.
 */
static int
store_recover_one(int dirfd, const char *dir, const char *name, void *arg)
{
	struct store_recovery *w = arg;
	char target[NAME_MAX + 1], host[256], why[256];
	uint64_t start;
	struct stat st;
	int fd, whole;

	if (safefile_tmp_target(name, target, sizeof(target)) != 0 ||
	    codec_parse_name(target, &start, host, sizeof(host)) != 0)
		return 0;
	fd = safefile_open_read(
	    dirfd, name, 1, STORE_MAX_FILE, &st, why, sizeof(why));
	if (fd == -ENOENT)
		return 0; /* its writer renamed it meanwhile */
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return 0; /* being written */
	}
	whole =
	    fd >= 0 && store_is_whole(fd, (uint64_t)st.st_size, dir, target);
	if (whole && fsync(fd) == 0 &&
	    renameat(dirfd, name, dirfd, target) == 0) {
		(void)fsync(dirfd);
		w->recovered++;
	} else if (!whole && unlinkat(dirfd, name, 0) == 0)
		w->removed++;
	if (fd >= 0)
		close(fd);
	return 0;
}

int
vitals_store_recover(const char *data_dir, unsigned *recovered,
    unsigned *removed, char *err, size_t errlen)
{
	struct store_recovery w = { 0, 0 };
	int r;

	if ((r = store_each_file(data_dir, store_recover_one, &w)) < 0 &&
	    r != -ENOENT) {
		store_err(err, errlen, "%s: %s", data_dir, strerror(-r));
		return r;
	}
	if (recovered != NULL)
		*recovered = w.recovered;
	if (removed != NULL)
		*removed = w.removed;
	return 0;
}

/* ---- central collection: cursors, raw files, decoding (doc/fleet.md) ---- */

/* Whether s is an epoch file name (a cursor); its start in *start_ns. */
int
vitals_store_name_parse(const char *s, uint64_t *start_ns)
{
	char host[256];
	uint64_t start;

	if (s == NULL || strlen(s) >= VITALS_CURSOR_MAX ||
	    codec_parse_name(s, &start, host, sizeof(host)) != 0)
		return -EINVAL;
	if (start_ns != NULL)
		*start_ns = start;
	return 0;
}

/* The last part of a listed path. */
static const char *
store_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static int
store_name_cmp(const void *a, const void *b)
{
	const struct vitals_store_entry *x = a, *y = b;

	return strcmp(store_base(x->path), store_base(y->path));
}

/*
 * Only the date dirs from the cursor's day on are read; the entries kept
 * are moved to the front of the listing, in name order, and the rest
 * freed.
 */
int
vitals_store_list_after(const char *data_dir, const char *cursor,
    const char *host, size_t max, struct vitals_store_list *out)
{
	struct vitals_store_list l;
	uint64_t since = 0;
	size_t i, k = 0;
	int r;

	if (cursor != NULL && cursor[0] == '\0')
		cursor = NULL;
	if (cursor != NULL && vitals_store_name_parse(cursor, &since) != 0)
		return -EINVAL;
	if ((r = vitals_store_list_since(data_dir, since, &l)) != 0)
		return r;
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), store_name_cmp);
	for (i = 0; i < l.n; i++) {
		if ((cursor == NULL ||
			strcmp(store_base(l.v[i].path), cursor) > 0) &&
		    (host == NULL || strcmp(l.v[i].host, host) == 0) &&
		    (max == 0 || k < max)) {
			l.v[k++] = l.v[i];
			continue;
		}
		free(l.v[i].path);
		free(l.v[i].host);
	}
	l.n = k;
	*out = l;
	return 0;
}

/*
 * The bytes of the stored file at path (a listing's), at most max of
 * them, into *out (the caller's), with rel rebuilt from its name.
 */
int
vitals_epoch_file_load(const char *path, uint64_t max,
    struct vitals_epoch_file *out, char *err, size_t errlen)
{
	struct vitals_epoch_file f = { 0 };
	const char *base = store_base(path);
	char why[256], day[16];
	struct stat st;
	size_t n = 0;
	ssize_t k;
	int fd, r;

	if (vitals_store_name_parse(base, &f.start_ns) != 0) {
		store_err(err, errlen, "%s: not an epoch file name", path);
		return -EINVAL;
	}
	if ((fd = safefile_open_read(
		 AT_FDCWD, path, 1, max, &st, why, sizeof(why))) < 0) {
		store_err(err, errlen, "%s: %s", path, why);
		return fd;
	}
	snprintf(day, sizeof(day), "%.4s-%.2s-%.2s", base, base + 4, base + 6);
	f.len = (size_t)st.st_size;
	if ((f.rel = malloc(strlen(day) + strlen(base) + 2)) == NULL ||
	    (f.data = malloc(f.len ? f.len : 1)) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	sprintf(f.rel, "%s/%s", day, base);
	while (n < f.len && (k = read(fd, f.data + n, f.len - n)) > 0)
		n += (size_t)k;
	if (n != f.len) {
		r = -EIO; /* it shrank under us, or read failed */
		goto fail;
	}
	close(fd);
	*out = f;
	return 0;
fail:
	store_err(err, errlen, "%s: %s", path, strerror(-r));
	close(fd);
	vitals_epoch_file_free(&f);
	return r;
}

/*
 * Inflate one gzip member in[0..n) that must end the input, into at most
 * STORE_MAX_EPOCH bytes.
 */
static int
store_inflate_mem(const unsigned char *in, size_t n, char **out, size_t *len,
    char *why, size_t whylen)
{
	size_t cap = STORE_READ_CHUNK;
	char *buf = NULL, *p;
	z_stream z;
	int r = Z_OK;

	if (store_inflate_once(in, n, out, len) == 0)
		return 0;
	memset(&z, 0, sizeof(z));
	if (n > UINT_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		store_err(why, whylen, "cannot inflate");
		return -EBADMSG;
	}
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	while (r == Z_OK) {
		if (z.total_out > STORE_MAX_EPOCH) {
			r = -EFBIG;
			break;
		}
		if ((p = realloc(buf, cap + 1)) == NULL) {
			r = -ENOMEM;
			break;
		}
		buf = p;
		z.next_out = (unsigned char *)buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		r = inflate(&z, Z_NO_FLUSH);
		if (r == Z_BUF_ERROR && z.avail_out == 0)
			r = Z_OK;
		cap *= 2;
	}
	*len = z.total_out;
	inflateEnd(&z);
	if (r == Z_STREAM_END && z.avail_in == 0) {
		*out = buf;
		return 0;
	}
	free(buf);
	if (r == -EFBIG)
		return store_too_big(why, whylen);
	if (r == -ENOMEM) {
		store_err(why, whylen, "out of memory");
		return -ENOMEM;
	}
	store_err(why, whylen, "%s",
	    r == Z_STREAM_END ? "bytes after the gzip stream"
			      : "gzip: truncated or corrupt");
	return -EBADMSG;
}

/* Decode a file's bytes that came from elsewhere; *out is the caller's. */
int
vitals_epoch_decode(const void *data, size_t len, struct vitals_epoch **out,
    char *err, size_t errlen)
{
	char *buf = NULL;
	size_t n = 0;
	int r;

	if ((r = store_inflate_mem(data, len, &buf, &n, err, errlen)) != 0)
		return r;
	r = codec_epoch_parse(buf, n, out, err, errlen);
	free(buf);
	return r;
}

/* codec_epoch_relpath() for plugins: "YYYY-MM-DD/NAME" into buf. */
int
vitals_epoch_relpath(uint64_t start_ns, const char *host, char *buf, size_t len)
{
	return codec_epoch_relpath(start_ns, host, buf, len);
}
