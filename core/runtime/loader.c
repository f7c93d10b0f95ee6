/* SPDX-License-Identifier: MIT */
/*
 * The plugin loader, and the only file that calls libltdl.  A plugin NAME
 * is a file NAME.la (build tree) or NAME.so (installed) in a directory of
 * the search path; it is loaded only after its file and directory pass an
 * ownership and mode check and its descriptor passes the ABI check.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"

#ifndef PKGLIBDIR
#define PKGLIBDIR "/usr/local/lib/vitals"
#endif

/*
 * Plugins are allocated one by one so that the pointers handed out stay
 * valid as more are loaded; `view` is the array loader_plugins() returns.
 */
struct loader {
	char **dirs; /* search path, in order */
	size_t ndirs;
	struct loader_plugin **owned; /* nplugins, in load order */
	struct loader_plugin *view; /* shallow copies of owned */
	size_t nplugins;
	size_t cap;
};

/* A list of names collected from the search path. */
struct loader_names {
	char **v;
	size_t n;
	size_t cap;
};

/* Loaders alive: libltdl starts with the first and stops with the last. */
static unsigned loader_ltdl_refs;
/*
 * libltdl keeps global state (its handle list, the last error): range
 * queries make loaders in the http plugin's worker threads while the
 * daemon's own may reload on the loop, so every libltdl call and the
 * count above are made under this lock.
 */
static pthread_mutex_t loader_ltdl_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const loader_exts[] = { ".la", ".so" };
#define LOADER_NEXTS (sizeof(loader_exts) / sizeof(loader_exts[0]))

/* First ABI minor whose descriptor has the check member. */
#define LOADER_MINOR_CHECK 3
/* The first ABI minor with a filter's scope. */
#define LOADER_MINOR_SCOPE 5

/* Storage the core writes for each option type, 0 for an unknown type. */
static size_t
loader_opt_size(uint32_t type)
{
	switch (type) {
	case VITALS_OPT_BOOL:
		return (sizeof(int));
	case VITALS_OPT_INT:
		return (sizeof(int64_t));
	case VITALS_OPT_DOUBLE:
		return (sizeof(double));
	case VITALS_OPT_STRING:
		return (sizeof(char *));
	case VITALS_OPT_DURATION:
	case VITALS_OPT_SIZE:
		return (sizeof(uint64_t));
	case VITALS_OPT_STRLIST:
		return (sizeof(struct vitals_strlist));
	}
	return (0);
}

static int loader_refuse(char *why, size_t len, int error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Write a refusal reason to why and return error, so callers can return it. */
static int
loader_refuse(char *why, size_t len, int error, const char *fmt, ...)
{
	va_list ap;

	if (len > 0) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return (error);
}

static int
loader_add_dir(struct loader *l, const char *dir, size_t len)
{
	char *copy;

	if (len == 0)
		return (0);
	copy = strndup(dir, len);
	if (copy == NULL)
		return (-ENOMEM);
	l->dirs[l->ndirs++] = copy;
	return (0);
}

/* Fill l->dirs from VITALS_PLUGIN_PATH, dirs[0..n) and PKGLIBDIR. */
static int
loader_set_path(struct loader *l, const char *const *dirs, size_t n)
{
	const char *env, *p, *colon, *next;
	size_t i, max = n + 1;

	env = getenv("VITALS_PLUGIN_PATH");
	if (env != NULL) {
		for (p = env; *p != '\0'; p++)
			max += (*p == ':');
		max++;
	}
	l->dirs = calloc(max, sizeof(*l->dirs));
	if (l->dirs == NULL)
		return (-ENOMEM);
	for (p = env; p != NULL; p = next) {
		colon = strchr(p, ':');
		next = (colon != NULL) ? colon + 1 : NULL;
		if (loader_add_dir(l, p,
			(colon != NULL) ? (size_t)(colon - p) : strlen(p)) != 0)
			return (-ENOMEM);
	}
	for (i = 0; i < n; i++) {
		if (dirs[i] != NULL &&
		    loader_add_dir(l, dirs[i], strlen(dirs[i])) != 0)
			return (-ENOMEM);
	}
	return (loader_add_dir(l, PKGLIBDIR, strlen(PKGLIBDIR)));
}

/*
 * Create a loader searching VITALS_PLUGIN_PATH (colon-separated, empty
 * entries ignored), then dirs[0..n) (copied), then PKGLIBDIR, and start
 * libltdl if no other loader has.  Returns NULL only when memory runs out
 * (or libltdl cannot start, which is the same thing).
 */
struct loader *
loader_new(const char *const *dirs, size_t n)
{
	struct loader *l;

	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return (NULL);
	pthread_mutex_lock(&loader_ltdl_lock);
	if (loader_ltdl_refs == 0 && lt_dlinit() != 0) {
		pthread_mutex_unlock(&loader_ltdl_lock);
		free(l);
		return (NULL);
	}
	loader_ltdl_refs++;
	pthread_mutex_unlock(&loader_ltdl_lock);
	if (loader_set_path(l, dirs, n) != 0) {
		loader_free(l);
		return (NULL);
	}
	return (l);
}

/*
 * Close every module, free the loader, and stop libltdl with the last
 * loader.  Descriptors handed out are invalid afterwards.  Accepts NULL.
 */
void
loader_free(struct loader *l)
{
	struct loader_plugin *p;
	size_t i;

	if (l == NULL)
		return;
	pthread_mutex_lock(&loader_ltdl_lock);
	for (i = l->nplugins; i > 0; i--)
		lt_dlclose((lt_dlhandle)l->owned[i - 1]->handle);
	if (--loader_ltdl_refs == 0)
		lt_dlexit();
	pthread_mutex_unlock(&loader_ltdl_lock);
	for (i = l->nplugins; i > 0; i--) {
		p = l->owned[i - 1];
		free(p->name);
		free(p->object);
		free(p->path);
		free(p);
	}
	for (i = 0; i < l->ndirs; i++)
		free(l->dirs[i]);
	free(l->dirs);
	free(l->owned);
	free(l->view);
	free(l);
}

/* NAME from DIR/NAME.la or DIR/NAME.so, written to out; -EINVAL if neither. */
static int
loader_base_name(const char *path, char *out, size_t len)
{
	const char *base;
	size_t i, n, elen;

	base = strrchr(path, '/');
	base = (base != NULL) ? base + 1 : path;
	n = strlen(base);
	for (i = 0; i < LOADER_NEXTS; i++) {
		elen = strlen(loader_exts[i]);
		if (n > elen && strcmp(base + n - elen, loader_exts[i]) == 0)
			break;
	}
	if (i == LOADER_NEXTS || n - elen >= len)
		return (-EINVAL);
	memcpy(out, base, n - elen);
	out[n - elen] = '\0';
	return (0);
}

/*
 * Refuse a file (dir NULL) or the directory dir, as st describes it, that
 * someone other than root and the running user could replace or change.
 * A sticky directory passes when sticky_ok: others cannot rename or
 * remove what they do not own in it (an ancestor such as /tmp).
 */
static int
loader_check_stat(const struct stat *st, const char *dir, int sticky_ok,
    char *why, size_t len)
{
	char subject[4200] = "";

	if (dir == NULL && !S_ISREG(st->st_mode))
		return (loader_refuse(
		    why, len, -EINVAL, "refusing: not a regular file"));
	if (dir != NULL && !S_ISDIR(st->st_mode))
		return (loader_refuse(why, len, -ENOTDIR,
		    "refusing: %s is not a directory", dir));
	if (dir != NULL)
		snprintf(subject, sizeof(subject), "directory %s is ", dir);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(sticky_ok && (st->st_mode & S_ISVTX)))
		return (loader_refuse(why, len, -EPERM,
		    "refusing: %swritable by group or others (mode %04o)",
		    subject, (unsigned)(st->st_mode & 07777)));
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return (loader_refuse(why, len, -EPERM,
		    "refusing: %sowned by uid %u, not root or the running user",
		    subject, (unsigned)st->st_uid));
	return (0);
}

/* The directory path, checked as loader_check_stat says. */
static int
loader_check_dir(const char *path, int sticky_ok, char *why, size_t len)
{
	struct stat st;
	int error;

	if (stat(path, &st) != 0) {
		error = errno;
		return (loader_refuse(why, len, -error, "cannot stat %s: %s",
		    path, strerror(error)));
	}
	return (loader_check_stat(&st, path, sticky_ok, why, len));
}

/*
 * Every directory above dir, from the root down: none may be replaced by
 * another user, or the checks of the files below it would prove nothing.
 */
static int
loader_check_ancestors(const char *dir, char *why, size_t len)
{
	char real[PATH_MAX], *slash;
	int error;

	if (realpath(dir, real) == NULL) {
		error = errno;
		return (loader_refuse(why, len, -error, "cannot resolve %s: %s",
		    dir, strerror(error)));
	}
	for (slash = real; (slash = strchr(slash + 1, '/')) != NULL;) {
		*slash = '\0';
		error = loader_check_dir(real, 1, why, len);
		*slash = '/';
		if (error != 0)
			return (error);
	}
	return (real[1] != '\0' ? loader_check_dir("/", 1, why, len) : 0);
}

/*
 * Open path for reading without following a symbolic link or blocking on
 * a FIFO, and check the file opened (not the name, which may change in
 * between).  Returns 0 with the descriptor (the caller's) in *fd.
 */
static int
loader_open_checked(const char *path, int *fd, char *why, size_t len)
{
	struct stat st;
	int error, f;

	if ((f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) <
	    0) {
		error = errno;
		if (error == ELOOP)
			return (loader_refuse(
			    why, len, -EPERM, "refusing: a symbolic link"));
		return (loader_refuse(
		    why, len, -error, "cannot open file: %s", strerror(error)));
	}
	if (fstat(f, &st) != 0) {
		error = -errno;
		close(f);
		return (loader_refuse(
		    why, len, error, "cannot stat file: %s", strerror(-error)));
	}
	if ((error = loader_check_stat(&st, NULL, 0, why, len)) != 0) {
		close(f);
		return (error);
	}
	*fd = f;
	return (0);
}

/*
 * Open the file at path (which holds a '/') checked, after the directory
 * holding it and every directory above; *fd is the caller's.
 */
static int
loader_open_path(const char *path, int *fd, char *why, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;
	int error;

	if (slash == NULL)
		return (loader_refuse(why, len, -EINVAL, "not a path"));
	n = (slash == path) ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir))
		return (
		    loader_refuse(why, len, -ENAMETOOLONG, "path too long"));
	memcpy(dir, path, n);
	dir[n] = '\0';
	if ((error = loader_open_checked(path, fd, why, len)) != 0)
		return (error);
	if ((error = loader_check_dir(dir, 0, why, len)) != 0 ||
	    (error = loader_check_ancestors(dir, why, len)) != 0) {
		close(*fd);
		*fd = -1;
	}
	return (error);
}

/*
 * The shared object a libtool archive, open as fd, names: its dlname, in
 * DIR/.libs/ while uninstalled (installed=no), else beside the archive in
 * DIR.  The archive's libdir is never followed: what is loaded is what
 * was checked, in the directory the archive was found in.
 */
static int
loader_la_object(
    const char *la, int fd, char *obj, size_t objlen, char *why, size_t len)
{
	char line[1024], dlname[256] = "";
	size_t dirlen = (size_t)(strrchr(la, '/') + 1 - la), n;
	int installed = 1;
	FILE *f;

	if ((f = fdopen(fd, "r")) == NULL)
		return (loader_refuse(
		    why, len, -errno, "cannot read: %s", strerror(errno)));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "dlname='", 8) == 0 &&
		    (n = strcspn(line + 8, "'")) < sizeof(dlname) &&
		    line[8 + n] == '\'') {
			memcpy(dlname, line + 8, n);
			dlname[n] = '\0';
		} else if (strncmp(line, "installed=no", 12) == 0)
			installed = 0;
	}
	fclose(f);
	if (dlname[0] == '\0' || strchr(dlname, '/') != NULL ||
	    strcmp(dlname, "..") == 0 || strcmp(dlname, ".") == 0)
		return (loader_refuse(why, len, -ENOEXEC,
		    "refusing: the archive names no shared object in its "
		    "directory (dlname '%s')",
		    dlname));
	if ((size_t)snprintf(obj, objlen, "%.*s%s%s", (int)dirlen, la,
		installed ? "" : ".libs/", dlname) >= objlen)
		return (
		    loader_refuse(why, len, -ENAMETOOLONG, "path too long"));
	return (0);
}

/*
 * Open the shared object of path checked: path itself (NAME.so), or the
 * one its archive names (NAME.la), whose refusals start with its path.
 * Its name goes to obj, and *fd (the caller's) is the file checked.
 */
static int
loader_open_object(
    const char *path, char *obj, size_t objlen, int *fd, char *why, size_t len)
{
	char sub[512];
	size_t n = strlen(path);
	int error, la;

	if ((error = loader_open_path(path, fd, why, len)) != 0)
		return (error);
	if (n < 3 || strcmp(path + n - 3, ".la") != 0) {
		if ((size_t)snprintf(obj, objlen, "%s", path) >= objlen) {
			close(*fd);
			return (loader_refuse(
			    why, len, -ENAMETOOLONG, "path too long"));
		}
		return (0);
	}
	la = *fd;
	*fd = -1;
	if ((error = loader_la_object(path, la, obj, objlen, why, len)) != 0)
		return (error);
	if ((error = loader_open_path(obj, fd, sub, sizeof(sub))) != 0)
		return (loader_refuse(why, len, error, "%s: %s", obj, sub));
	return (0);
}

/* An option table ending in {NULL}: known types, unique keys, in bounds. */
static int
loader_check_options(const struct vitals_plugin *d, char *why, size_t len)
{
	const struct vitals_option *o;
	size_t i, j, size;

	if (d->options == NULL || d->options[0].key == NULL)
		return (0);
	if (d->config_size == 0)
		return (loader_refuse(why, len, -EINVAL,
		    "options declared but config_size is 0"));
	for (i = 0; (o = &d->options[i])->key != NULL; i++) {
		if ((size = loader_opt_size(o->type)) == 0)
			return (loader_refuse(why, len, -EINVAL,
			    "option '%s': unknown type %u", o->key, o->type));
		if ((size_t)o->offset + size > d->config_size)
			return (loader_refuse(why, len, -EINVAL,
			    "option '%s': "
			    "offset %u + %zu bytes is beyond config_size %u",
			    o->key, o->offset, size, d->config_size));
		for (j = 0; j < i; j++) {
			if (strcmp(d->options[j].key, o->key) == 0)
				return (loader_refuse(why, len, -EINVAL,
				    "option '%s' declared twice", o->key));
		}
	}
	return (0);
}

/*
 * Check a descriptor: the ABI version before any other field is read, then
 * kind, name (must be the file's base name), description and options.
 */
static int
loader_check_desc(
    const struct vitals_plugin *d, const char *name, char *why, size_t len)
{
	if (d->abi_major != VITALS_ABI_MAJOR || d->abi_minor > VITALS_ABI_MINOR)
		return (loader_refuse(why, len, -EPROTO,
		    "ABI %u.%u not supported (vitalsd speaks %u.%u)",
		    d->abi_major, d->abi_minor, VITALS_ABI_MAJOR,
		    VITALS_ABI_MINOR));
	if (d->kind != VITALS_PLUGIN_PROBE && d->kind != VITALS_PLUGIN_FILTER &&
	    d->kind != VITALS_PLUGIN_OUTPUT)
		return (loader_refuse(
		    why, len, -EINVAL, "unknown plugin kind %u", d->kind));
	if (d->name == NULL)
		return (
		    loader_refuse(why, len, -EINVAL, "descriptor has no name"));
	if (strcmp(d->name, name) != 0)
		return (loader_refuse(why, len, -EINVAL,
		    "descriptor names plugin '%.64s' but the file is '%s'",
		    d->name, name));
	if (d->description == NULL)
		return (loader_refuse(
		    why, len, -EINVAL, "descriptor has no description"));
	return (loader_check_options(d, why, len));
}

/* Append a checked module to l; takes ownership of handle on success. */
static int
loader_append(struct loader *l, const char *path, const char *obj,
    lt_dlhandle handle, const struct vitals_plugin *d,
    const struct loader_plugin **out)
{
	struct loader_plugin *p, **owned, *view;
	size_t cap;

	if (l->nplugins == l->cap) {
		cap = l->cap ? l->cap * 2 : 8;
		if ((owned = reallocarray(l->owned, cap, sizeof(*owned))) ==
		    NULL)
			return (-ENOMEM);
		l->owned = owned;
		if ((view = reallocarray(l->view, cap, sizeof(*view))) == NULL)
			return (-ENOMEM);
		l->view = view;
		l->cap = cap;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (-ENOMEM);
	p->name = strdup(d->name);
	p->path = strdup(path);
	p->object = strdup(obj);
	if (p->name == NULL || p->path == NULL || p->object == NULL) {
		free(p->name);
		free(p->path);
		free(p->object);
		free(p);
		return (-ENOMEM);
	}
	p->desc = d;
	p->handle = handle;
	l->owned[l->nplugins] = p;
	l->view[l->nplugins++] = *p;
	*out = p;
	return (0);
}

static const struct loader_plugin *
loader_find_loaded(const struct loader *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nplugins; i++) {
		if (strcmp(l->owned[i]->name, name) == 0)
			return (l->owned[i]);
	}
	return (NULL);
}

/*
 * Whether the object holding d is the file open as fd: the name was
 * checked, and no other user can change what it names (its directories
 * passed too), but the loader's own search could still pick another
 * file of that name already loaded.
 */
static int
loader_same_file(const void *d, int fd)
{
	struct stat a, b;
	Dl_info info;

	return (dladdr(d, &info) != 0 && info.dli_fname != NULL &&
	    stat(info.dli_fname, &a) == 0 && fstat(fd, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

/*
 * Load the shared object obj, checked and open as fd (closed here), for
 * the plugin file path, and check its descriptor.  obj is loaded by its
 * name, never through a libtool archive, whose libdir could name another.
 */
static int
loader_dlopen(struct loader *l, const char *path, const char *obj,
    const char *name, int fd, const struct loader_plugin **out, char *why,
    size_t len)
{
	const struct vitals_plugin *d;
	lt_dlhandle h;
	const char *e;
	int error;

	pthread_mutex_lock(&loader_ltdl_lock);
	if ((h = lt_dlopen(obj)) == NULL) {
		e = lt_dlerror();
		error = loader_refuse(why, len, -ENOEXEC,
		    "not a loadable module: %s",
		    e != NULL ? e : "unknown error");
		pthread_mutex_unlock(&loader_ltdl_lock);
		close(fd);
		return (error);
	}
	d = (const struct vitals_plugin *)lt_dlsym(h, "vitals_plugin");
	pthread_mutex_unlock(&loader_ltdl_lock);
	if (d == NULL) {
		error = loader_refuse(
		    why, len, -ENOEXEC, "no vitals_plugin descriptor");
		goto fail;
	}
	if (!loader_same_file(d, fd)) {
		error = loader_refuse(why, len, -EPERM,
		    "refusing: %s is not "
		    "the file that was checked",
		    obj);
		goto fail;
	}
	if ((error = loader_check_desc(d, name, why, len)) != 0)
		goto fail;
	if ((error = loader_append(l, path, obj, h, d, out)) != 0) {
		loader_refuse(why, len, error, "out of memory");
		goto fail;
	}
	close(fd);
	return (0);
fail:
	pthread_mutex_lock(&loader_ltdl_lock);
	lt_dlclose(h);
	pthread_mutex_unlock(&loader_ltdl_lock);
	close(fd);
	return (error);
}

/*
 * Load path, which holds a '/' so that dlopen never searches for it, and
 * write a refusal reason (without the path) to why.
 */
static int
loader_load(struct loader *l, const char *path,
    const struct loader_plugin **out, char *why, size_t len)
{
	const struct loader_plugin *p;
	char name[256], obj[PATH_MAX];
	int error, fd;

	if (loader_base_name(path, name, sizeof(name)) != 0)
		return (loader_refuse(
		    why, len, -EINVAL, "not a NAME.la or NAME.so file"));
	if ((p = loader_find_loaded(l, name)) != NULL) {
		if (strcmp(p->path, path) != 0)
			return (loader_refuse(why, len, -EEXIST,
			    "plugin '%s' is already loaded from %s", name,
			    p->path));
		*out = p;
		return (0);
	}
	if ((error = loader_open_object(
		 path, obj, sizeof(obj), &fd, why, len)) != 0)
		return (error);
	return (loader_dlopen(l, path, obj, name, fd, out, why, len));
}

/*
 * Check and load the plugin file at path (NAME.la or NAME.so; a path
 * without a '/' is taken relative to the current directory, never
 * searched for).  Loading a file already loaded returns the same plugin.
 * Returns 0 and sets *out (owned by the loader, valid until loader_free),
 * or a negative errno with "PATH: reason" in err: -EPERM for ownership or
 * mode, -EPROTO for the ABI, -ENOEXEC for a file that is no module or
 * has no descriptor, -EINVAL for a bad descriptor, -EEXIST for a second
 * file of an already loaded name, -ENOENT or another stat error.
 */
int
loader_open_file(struct loader *l, const char *path,
    const struct loader_plugin **out, char *err, size_t errlen)
{
	char buf[4096], why[512];
	int error;

	if (strchr(path, '/') == NULL) {
		if ((size_t)snprintf(buf, sizeof(buf), "./%s", path) >=
		    sizeof(buf))
			return (loader_refuse(err, errlen, -ENAMETOOLONG,
			    "%s: path too long", path));
		path = buf;
	}
	error = loader_load(l, path, out, why, sizeof(why));
	if (error != 0)
		loader_refuse(err, errlen, error, "%s: %s", path, why);
	return (error);
}

/* The first DIR/NAME.la or DIR/NAME.so on the search path, into buf. */
static int
loader_find(const struct loader *l, const char *name, char *buf, size_t len)
{
	struct stat st;
	size_t i, j;

	for (i = 0; i < l->ndirs; i++) {
		for (j = 0; j < LOADER_NEXTS; j++) {
			if ((size_t)snprintf(buf, len, "%s/%s%s", l->dirs[i],
				name, loader_exts[j]) >= len)
				continue;
			if (stat(buf, &st) == 0)
				return (0);
		}
	}
	return (-ENOENT);
}

/* The search path as "DIR:DIR", in buf (cut at its size). */
static const char *
loader_dirs_text(const struct loader *l, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < l->ndirs && off < len; i++)
		off += (size_t)snprintf(
		    buf + off, len - off, "%s%s", i > 0 ? ":" : "", l->dirs[i]);
	return buf;
}

/*
 * Find the plugin called name on the search path (first directory wins,
 * NAME.la before NAME.so in a directory) and load it; a name already
 * loaded returns the same plugin.  Returns 0 and sets *out (owned by the
 * loader), -EINVAL for a name that is empty or holds a '/', -ENOENT with
 * the known names in err when there is no such file, or a refusal of
 * loader_open_file() with "PATH: reason" in err.
 */
int
loader_open(struct loader *l, const char *name,
    const struct loader_plugin **out, char *err, size_t errlen)
{
	const struct loader_plugin *p;
	char path[4096];
	char *known;

	if (*name == '\0' || *name == '.' || strchr(name, '/') != NULL)
		return (loader_refuse(
		    err, errlen, -EINVAL, "invalid plugin name '%s'", name));
	if ((p = loader_find_loaded(l, name)) != NULL) {
		*out = p;
		return (0);
	}
	if (loader_find(l, name, path, sizeof(path)) != 0) {
		known = loader_known_names(l);
		if (known != NULL && *known != '\0')
			loader_refuse(err, errlen, -ENOENT,
			    "no plugin named '%s' (known: %s)", name, known);
		else
			loader_refuse(err, errlen, -ENOENT,
			    "no plugin named '%s': no plugins at all in %s "
			    "(VITALS_PLUGIN_PATH adds directories)",
			    name, loader_dirs_text(l, path, sizeof(path)));
		free(known);
		return (-ENOENT);
	}
	return (loader_open_file(l, path, out, err, errlen));
}

static int
loader_names_add(struct loader_names *s, const char *name)
{
	char **v;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 16;
		if ((v = reallocarray(s->v, cap, sizeof(*v))) == NULL)
			return (-ENOMEM);
		s->v = v;
		s->cap = cap;
	}
	if ((s->v[s->n] = strdup(name)) == NULL)
		return (-ENOMEM);
	s->n++;
	return (0);
}

static void
loader_names_free(struct loader_names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int
loader_names_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Add the names of the NAME.la and NAME.so files in dir (none if missing). */
static int
loader_names_dir(struct loader_names *s, const char *dir)
{
	struct dirent *de;
	char name[256];
	DIR *d;
	int error = 0;

	if ((d = opendir(dir)) == NULL)
		return (0);
	while (error == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    loader_base_name(de->d_name, name, sizeof(name)) != 0)
			continue;
		error = loader_names_add(s, name);
	}
	closedir(d);
	return (error);
}

/* Every plugin name on the search path, sorted, without duplicates. */
static int
loader_names(const struct loader *l, struct loader_names *s)
{
	size_t i, j;
	int error;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < l->ndirs; i++) {
		if ((error = loader_names_dir(s, l->dirs[i])) != 0) {
			loader_names_free(s);
			return (error);
		}
	}
	if (s->n == 0)
		return (0);
	qsort(s->v, s->n, sizeof(*s->v), loader_names_cmp);
	for (i = 1, j = 1; i < s->n; i++) {
		if (strcmp(s->v[i], s->v[j - 1]) == 0)
			free(s->v[i]);
		else
			s->v[j++] = s->v[i];
	}
	s->n = j;
	return (0);
}

/*
 * Load every plugin on the search path, one file per name (first
 * directory wins), in name order.  A refused file is reported through
 * cb(path, reason, arg), if cb is not NULL, and skipped; strings are
 * borrowed for the call.  Returns how many plugins are loaded for the
 * names found (those loaded before included).
 */
size_t
loader_scan(struct loader *l,
    void (*cb)(const char *path, const char *reason, void *arg), void *arg)
{
	const struct loader_plugin *p;
	struct loader_names s;
	char path[4096], why[512];
	size_t i, loaded = 0;

	if (loader_names(l, &s) != 0) {
		if (cb != NULL)
			cb(l->ndirs > 0 ? l->dirs[0] : "", "out of memory",
			    arg);
		return (0);
	}
	for (i = 0; i < s.n; i++) {
		if (loader_find(l, s.v[i], path, sizeof(path)) != 0)
			continue;
		if (loader_load(l, path, &p, why, sizeof(why)) == 0)
			loaded++;
		else if (cb != NULL)
			cb(path, why, arg);
	}
	loader_names_free(&s);
	return (loaded);
}

/*
 * The loaded plugins, in load order; *n receives the count.  The array is
 * borrowed and valid until the next load or loader_free; the strings and
 * descriptors it points to stay valid until loader_free.
 */
const struct loader_plugin *
loader_plugins(const struct loader *l, size_t *n)
{
	*n = l->nplugins;
	return (l->view);
}

/*
 * The names of the NAME.la and NAME.so files on the search path, sorted
 * and deduplicated, as "a, b, c" ("" when there are none).  The caller
 * frees the string.  Returns NULL only when memory runs out.
 */
char *
loader_known_names(struct loader *l)
{
	struct loader_names s;
	size_t i, len = 1;
	char *out;

	if (loader_names(l, &s) != 0)
		return (NULL);
	for (i = 0; i < s.n; i++)
		len += strlen(s.v[i]) + 2;
	if ((out = malloc(len)) != NULL) {
		out[0] = '\0';
		for (i = 0; i < s.n; i++) {
			if (i > 0)
				strcat(out, ", ");
			strcat(out, s.v[i]);
		}
	}
	loader_names_free(&s);
	return (out);
}

/*
 * Run d's value checks on config, a block option_fill() filled from d's
 * table.  The check member is read only from a descriptor of ABI minor 3
 * or later: an older plugin's descriptor ends before it.  Returns 0 when
 * there is no check, else what check returns, with its reason in why.
 */
int
loader_check_config(
    const struct vitals_plugin *d, const void *config, char *why, size_t len)
{
	if (d->abi_minor < LOADER_MINOR_CHECK || d->check == NULL)
		return (0);
	return (d->check(config, why, len));
}

/*
 * Identity of the file a loaded plugin's code came from, for keying
 * cached results: "PATH SIZE MTIME INODE" of the shared object holding
 * its descriptor (the file loaded, so a libtool .la names the .so it
 * loaded), and the plugin's file.  Writes buf only on success; returns 0 or a negative errno.
 */
int
loader_file_id(const struct loader_plugin *p, char *buf, size_t len)
{
	struct stat st;
	int n;

	if (stat(p->object, &st) != 0)
		return (-errno);
	n = snprintf(buf, len, "%s %lld %lld.%09ld %llu", p->object,
	    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	    st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
	return (n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0);
}

uint32_t
loader_scope(const struct vitals_plugin *d)
{
	return d->kind == VITALS_PLUGIN_FILTER &&
		d->abi_minor >= LOADER_MINOR_SCOPE
	    ? d->scope
	    : VITALS_SCOPE_HOST;
}
