/* SPDX-License-Identifier: MIT */
/*
 * The plugin loader: every libltdl call in vitals lives in loader.c.  It
 * finds plugins on a search path, checks each file's ownership and mode,
 * the descriptor's ABI and kind, and hands out the descriptor.
 */
#ifndef VITALS_LOADER_H
#define VITALS_LOADER_H

#include <stddef.h>
#include <vitals/vitals.h>

/* A plugin file found on the search path. */
struct loader_plugin {
	char *name; /* plugin name (from the descriptor) */
	char *path; /* file it was loaded from */
	const struct vitals_plugin *desc; /* borrowed from the loaded module */
	void *handle; /* lt_dlhandle, owned by the loader */
	char *object; /* the shared object loaded: path, or
					 the one its .la names */
};

/* A set of loaded plugins and the search path they came from. */
struct loader;

/*
 * Create a loader whose search path is, in order: the directories in the
 * environment variable VITALS_PLUGIN_PATH (colon-separated), then dirs[0..n),
 * then PKGLIBDIR.  Returns NULL only when memory runs out.
 */
struct loader *loader_new(const char *const *dirs, size_t n);

/* Unload everything and free the loader; accepts NULL. */
void loader_free(struct loader *l);

/*
 * Check and load one file.  Refusals, each with a reason naming the file
 * in err: not a loadable module, no `vitals_plugin` symbol, ABI major
 * mismatch or newer minor, unknown kind, a name missing, a file or
 * directory writable by group/others or owned by a user other than root
 * and the current user.  Returns 0 and sets *out (owned by the loader),
 * or a negative errno.
 */
int loader_open_file(struct loader *l, const char *path,
    const struct loader_plugin **out, char *err, size_t errlen);

/*
 * Find the plugin called `name` on the search path (first directory wins)
 * and load it.  Returns 0 and sets *out, -ENOENT if no file of that name
 * exists (err then lists the known names), or a refusal as above.
 */
int loader_open(struct loader *l, const char *name,
    const struct loader_plugin **out, char *err, size_t errlen);

/*
 * Load every plugin on the search path (one per name, first directory
 * wins), for --list-plugins.  Files that are refused are reported through
 * cb(path, reason, arg) and skipped.  Returns the number loaded.
 */
size_t loader_scan(struct loader *l,
    void (*cb)(const char *path, const char *reason, void *arg), void *arg);

/* The loaded plugins, in load order; *n receives the count.  Borrowed. */
const struct loader_plugin *loader_plugins(const struct loader *l, size_t *n);

/* Names of plugins on the search path ("a, b, c") for messages; caller frees. */
char *loader_known_names(struct loader *l);

/*
 * Run the value checks of plugin d (its check callback, where its ABI
 * minor has one) on a config block filled from d's options.  Returns 0
 * or check's negative errno with the reason in why.
 */
/*
 * The scope of plugin d (VITALS_SCOPE_*): its scope member for a filter
 * built at ABI minor 5 or later, else VITALS_SCOPE_HOST.
 */
uint32_t loader_scope(const struct vitals_plugin *d);

int loader_check_config(
    const struct vitals_plugin *d, const void *config, char *why, size_t len);

/*
 * "PATH SIZE MTIME INODE" of the shared object p's code was loaded from,
 * for keying cached results.  Returns 0, or a negative errno.
 */
int loader_file_id(const struct loader_plugin *p, char *buf, size_t len);

#endif /* VITALS_LOADER_H */
