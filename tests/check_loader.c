/* SPDX-License-Identifier: MIT */
/*
 * Tests of core/runtime/loader.c with the real libltdl on the modules built from
 * tests/plugins/, found in $VITALS_TEST_PLUGINS (NAME.la + .libs/NAME.so in
 * the build tree, or bare NAME.so): loads, refusals, file checks (the
 * object an archive names, the directories above, links and FIFOs), search.
 */
#include <sys/stat.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "testutil.h"

/* The directory of the built test modules ($VITALS_TEST_PLUGINS). */
static const char *plugdir;

/* The file the loader would pick in plugdir: NAME.la, else NAME.so. */
static void
plugin_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.la", plugdir, name);
	if (access(buf, F_OK) != 0)
		snprintf(buf, len, "%s/%s.so", plugdir, name);
	ck_assert_msg(access(buf, F_OK) == 0, "%s: test module not built", buf);
}

/* The real shared object: .libs/NAME.so in the build tree, else NAME.so. */
static void
object_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/.libs/%s.so", plugdir, name);
	if (access(buf, F_OK) != 0)
		snprintf(buf, len, "%s/%s.so", plugdir, name);
	ck_assert_msg(access(buf, F_OK) == 0, "%s: test module not built", buf);
}

/* A loader searching only plugdir (and PKGLIBDIR), whatever the environment. */
static struct loader *
test_loader(void)
{
	const char *dirs[] = { plugdir };
	struct loader *l;

	unsetenv("VITALS_PLUGIN_PATH");
	l = loader_new(dirs, 1);
	ck_assert_ptr_nonnull(l);
	return (l);
}

static void
tmp_make(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/check_loader.XXXXXX",
	    (tmp != NULL && *tmp != '\0') ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Remove dir and everything in it. */
static void
tmp_remove(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	chmod(dir, 0700);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0)
			tmp_remove(path);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(dir), 0);
}

static void
copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[8192];
	FILE *in, *out;
	size_t n;

	ck_assert_ptr_nonnull(in = fopen(from, "rb"));
	ck_assert_ptr_nonnull(out = fopen(to, "wb"));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_int_eq(chmod(to, mode), 0);
}

/* Modules that must load, with their kind (minor0: built for ABI 1.0). */
static const struct {
	const char *name;
	uint32_t kind;
} loads[] = {
	{ "good", VITALS_PLUGIN_PROBE },
	{ "badinit", VITALS_PLUGIN_FILTER },
	{ "unavail", VITALS_PLUGIN_PROBE },
	{ "minor0", VITALS_PLUGIN_PROBE },
	{ "badcheck", VITALS_PLUGIN_FILTER },
	{ "oldcheck", VITALS_PLUGIN_FILTER },
	{ "stall", VITALS_PLUGIN_FILTER },
};

START_TEST(test_load)
{
	const struct loader_plugin *p = NULL, *v;
	struct loader *l = test_loader();
	char path[4096], err[512] = "";
	size_t n;

	plugin_path(loads[_i].name, path, sizeof(path));
	ck_assert_msg(
	    loader_open_file(l, path, &p, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(p->name, loads[_i].name);
	ck_assert_str_eq(p->path, path);
	ck_assert_ptr_nonnull(p->handle);
	ck_assert_uint_eq(p->desc->abi_major, VITALS_ABI_MAJOR);
	ck_assert_uint_eq(p->desc->kind, loads[_i].kind);
	ck_assert_str_eq(p->desc->name, loads[_i].name);
	ck_assert_ptr_nonnull(p->desc->description);
	v = loader_plugins(l, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(v[0].desc, p->desc);
	loader_free(l);
}
END_TEST

START_TEST(test_good_descriptor)
{
	const struct loader_plugin *p = NULL;
	const struct vitals_plugin *d;
	struct loader *l = test_loader();
	char err[512] = "", why[64] = "";

	ck_assert_msg(
	    loader_open(l, "good", &p, err, sizeof(err)) == 0, "%s", err);
	d = p->desc;
	ck_assert_uint_eq(d->abi_minor, VITALS_ABI_MINOR);
	ck_assert_uint_gt(d->config_size, 0);
	ck_assert_ptr_nonnull(d->options);
	ck_assert_str_eq(d->options[0].key, "rate");
	ck_assert_uint_eq(d->options[0].type, VITALS_OPT_INT);
	ck_assert_str_eq(d->options[1].key, "label");
	ck_assert_uint_eq(d->options[1].type, VITALS_OPT_STRING);
	ck_assert_str_eq(d->options[2].key, "period");
	ck_assert_uint_eq(d->options[2].type, VITALS_OPT_DURATION);
	ck_assert_ptr_null(d->options[3].key);
	ck_assert_ptr_nonnull(d->available);
	ck_assert_int_eq(d->available(why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(d->init);
	ck_assert_ptr_null(d->epoch);
	loader_free(l);
}
END_TEST

/*
 * loader_check_config runs a plugin's check only where its ABI minor has
 * the member: oldcheck (minor 2) has a refusing check that must not run.
 */
static const struct {
	const char *name;
	int error;
	const char *why;
} value_checks[] = {
	{ "badcheck", -EINVAL, "check refuses on purpose (test plugin)" },
	{ "oldcheck", 0, "" },
	{ "good", 0, "" },
};

START_TEST(test_check_config)
{
	const struct loader_plugin *p = NULL;
	struct loader *l = test_loader();
	char err[512] = "", why[128] = "";
	int block = 0;

	ck_assert_msg(
	    loader_open(l, value_checks[_i].name, &p, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_int_eq(loader_check_config(p->desc, &block, why, sizeof(why)),
	    value_checks[_i].error);
	ck_assert_str_eq(why, value_checks[_i].why);
	loader_free(l);
}
END_TEST

/* The core's ABI as the loader prints it, "1.1". */
#define ABI_STR_(x) #x
#define ABI_STR(x) ABI_STR_(x)
#define ABI_CORE ABI_STR(VITALS_ABI_MAJOR) "." ABI_STR(VITALS_ABI_MINOR)

/* Modules that must be refused, and what the reason must say. */
static const struct {
	const char *name;
	int error;
	const char *reason;
} refusals[] = {
	{ "nodesc", -ENOEXEC, "no vitals_plugin descriptor" },
	{ "badabi", -EPROTO,
	    "ABI 99.0 not supported (vitalsd speaks " ABI_CORE ")" },
	{ "minornext", -EPROTO, "not supported (vitalsd speaks " ABI_CORE ")" },
	{ "badkind", -EINVAL, "unknown plugin kind 42" },
};

/* err must be "PATH: ...reason..." */
static void
check_refusal(const char *err, const char *path, const char *reason)
{
	size_t n = strlen(path);

	ck_assert_msg(
	    strncmp(err, path, n) == 0 && strncmp(err + n, ": ", 2) == 0,
	    "'%s' does not start with '%s: '", err, path);
	ck_assert_msg(
	    strstr(err + n, reason) != NULL, "'%s' lacks '%s'", err, reason);
}

START_TEST(test_refuse)
{
	const struct loader_plugin *p = NULL;
	struct loader *l = test_loader();
	char path[4096], err[512] = "";
	size_t n;

	plugin_path(refusals[_i].name, path, sizeof(path));
	ck_assert_int_eq(loader_open_file(l, path, &p, err, sizeof(err)),
	    refusals[_i].error);
	check_refusal(err, path, refusals[_i].reason);
	ck_assert_ptr_null(p);

	err[0] = '\0';
	ck_assert_int_eq(
	    loader_open(l, refusals[_i].name, &p, err, sizeof(err)),
	    refusals[_i].error);
	check_refusal(err, path, refusals[_i].reason);
	ck_assert_ptr_null(p);
	loader_plugins(l, &n);
	ck_assert_uint_eq(n, 0);
	loader_free(l);
}
END_TEST

/* What a file-check case puts in its temporary directory. */
#define PUT_COPY 0 /* a copy of good's shared object */
#define PUT_DIR 1 /* a directory */
#define PUT_TEXT 2 /* a text file */

/*
 * File checks on a copy of good's object in a fresh directory: the
 * file's name, what it is, modes and owners, and the expected outcome.
 */
static const struct {
	const char *what;
	const char *file;
	int put;
	mode_t mode, dir_mode;
	int uid, dir_uid; /* -1: leave the running user's */
	int error;
	const char *reason; /* "DIR" stands for the directory */
} checks[] = {
	{ "copy 0644 in a 0700 directory", "good.so", PUT_COPY, 0644, 0700, -1,
	    -1, 0, NULL },
	{ "copy 0755 in a 0755 directory", "good.so", PUT_COPY, 0755, 0755, -1,
	    -1, 0, NULL },
	{ "file 0666", "good.so", PUT_COPY, 0666, 0700, -1, -1, -EPERM,
	    "refusing: writable by group or others (mode 0666)" },
	{ "file 0620", "good.so", PUT_COPY, 0620, 0700, -1, -1, -EPERM,
	    "refusing: writable by group or others (mode 0620)" },
	{ "directory 0777", "good.so", PUT_COPY, 0644, 0777, -1, -1, -EPERM,
	    "refusing: directory DIR is writable by group or others "
	    "(mode 0777)" },
	{ "sticky directory 1777", "good.so", PUT_COPY, 0644, 01777, -1, -1,
	    -EPERM,
	    "refusing: directory DIR is writable by group or others "
	    "(mode 1777)" },
	{ "file owned by uid 1000", "good.so", PUT_COPY, 0644, 0700, 1000, -1,
	    -EPERM,
	    "refusing: owned by uid 1000, not root or the running user" },
	{ "directory owned by uid 1000", "good.so", PUT_COPY, 0644, 0700, -1,
	    1000, -EPERM, "refusing: directory DIR is owned by uid 1000" },
	{ "renamed copy", "other.so", PUT_COPY, 0644, 0700, -1, -1, -EINVAL,
	    "descriptor names plugin 'good' but the file is 'other'" },
	{ "directory named good.so", "good.so", PUT_DIR, 0755, 0700, -1, -1,
	    -EINVAL, "refusing: not a regular file" },
	{ "text file named good.so", "good.so", PUT_TEXT, 0644, 0700, -1, -1,
	    -ENOEXEC, "not a loadable module" },
	{ "no .so or .la suffix", "good.dll", PUT_COPY, 0644, 0700, -1, -1,
	    -EINVAL, "not a NAME.la or NAME.so file" },
};

static void
check_put(const char *path, int put, mode_t mode)
{
	char obj[4096];
	FILE *f;

	switch (put) {
	case PUT_COPY:
		object_path("good", obj, sizeof(obj));
		copy_file(obj, path, mode);
		break;
	case PUT_DIR:
		ck_assert_int_eq(mkdir(path, mode), 0);
		break;
	case PUT_TEXT:
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs("not an ELF object\n", f);
		fclose(f);
		ck_assert_int_eq(chmod(path, mode), 0);
		break;
	}
}

/* reason with every "DIR" replaced by dir. */
static void
expand_dir(char *out, size_t len, const char *reason, const char *dir)
{
	const char *at;
	size_t n = 0;

	out[0] = '\0';
	while ((at = strstr(reason, "DIR")) != NULL && n < len) {
		n += (size_t)snprintf(out + n, len - n, "%.*s%s",
		    (int)(at - reason), reason, dir);
		reason = at + 3;
	}
	if (n < len)
		snprintf(out + n, len - n, "%s", reason);
}

START_TEST(test_file_check)
{
	const struct loader_plugin *p = NULL;
	char dir[256], path[512], reason[512], err[1024] = "";
	struct loader *l;

	if ((checks[_i].uid >= 0 || checks[_i].dir_uid >= 0) &&
	    geteuid() != 0) {
		printf("check_loader: SKIP '%s': chown needs root\n",
		    checks[_i].what);
		return;
	}
	tmp_make(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, checks[_i].file);
	check_put(path, checks[_i].put, checks[_i].mode);
	if (checks[_i].uid >= 0)
		ck_assert_int_eq(chown(path, (uid_t)checks[_i].uid, -1), 0);
	if (checks[_i].dir_uid >= 0)
		ck_assert_int_eq(chown(dir, (uid_t)checks[_i].dir_uid, -1), 0);
	ck_assert_int_eq(chmod(dir, checks[_i].dir_mode), 0);

	l = test_loader();
	ck_assert_int_eq(
	    loader_open_file(l, path, &p, err, sizeof(err)), checks[_i].error);
	if (checks[_i].error == 0) {
		ck_assert_str_eq(p->desc->name, "good");
		ck_assert_str_eq(p->path, path);
	} else {
		expand_dir(reason, sizeof(reason), checks[_i].reason, dir);
		check_refusal(err, path, reason);
		ck_assert_ptr_null(p);
	}
	loader_free(l);
	tmp_remove(dir);
}
END_TEST

/*
 * A libtool archive DIR/good.la (written here, as libtool writes one for
 * an uninstalled module) whose object DIR/.libs/good.so is checked too.
 */
static const struct {
	const char *what;
	mode_t la_mode, obj_mode, libs_mode;
	int obj_uid; /* -1: leave the running user's */
	int error;
	const char *reason; /* "DIR" stands for the directory */
} archives[] = {
	{ "archive and object fine", 0644, 0755, 0755, -1, 0, NULL },
	{ "archive 0666", 0666, 0755, 0755, -1, -EPERM,
	    "refusing: writable by group or others (mode 0666)" },
	{ "object 0666", 0644, 0666, 0755, -1, -EPERM,
	    "DIR/.libs/good.so: "
	    "refusing: writable by group or others (mode 0666)" },
	{ ".libs 0777", 0644, 0755, 0777, -1, -EPERM,
	    "DIR/.libs/good.so: "
	    "refusing: directory DIR/.libs is writable by group or others" },
	{ "object owned by uid 1000", 0644, 0755, 0755, 1000, -EPERM,
	    "DIR/.libs/good.so: refusing: owned by uid 1000" },
};

static void
write_archive(const char *path, mode_t mode)
{
	FILE *f;

	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("# good.la - a libtool library file\n"
	      "dlname='good.so'\nlibrary_names='good.so good.so good.so'\n"
	      "old_library=''\ndependency_libs=''\ninstalled=no\n"
	      "shouldnotlink=yes\nlibdir='/nowhere'\n",
	    f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_archive)
{
	const struct loader_plugin *p = NULL;
	char dir[256], libs[300], la[512], obj[512], reason[1024];
	char err[1024] = "";
	struct loader *l;

	if (archives[_i].obj_uid >= 0 && geteuid() != 0) {
		printf("check_loader: SKIP '%s': chown needs root\n",
		    archives[_i].what);
		return;
	}
	tmp_make(dir, sizeof(dir));
	snprintf(libs, sizeof(libs), "%s/.libs", dir);
	snprintf(la, sizeof(la), "%s/good.la", dir);
	snprintf(obj, sizeof(obj), "%s/good.so", libs);
	ck_assert_int_eq(mkdir(libs, 0755), 0);
	write_archive(la, archives[_i].la_mode);
	check_put(obj, PUT_COPY, archives[_i].obj_mode);
	if (archives[_i].obj_uid >= 0)
		ck_assert_int_eq(
		    chown(obj, (uid_t)archives[_i].obj_uid, -1), 0);
	ck_assert_int_eq(chmod(libs, archives[_i].libs_mode), 0);

	l = test_loader();
	ck_assert_int_eq(
	    loader_open_file(l, la, &p, err, sizeof(err)), archives[_i].error);
	if (archives[_i].error == 0) {
		ck_assert_str_eq(p->desc->name, "good");
		ck_assert_str_eq(p->path, la);
	} else {
		expand_dir(reason, sizeof(reason), archives[_i].reason, dir);
		check_refusal(err, la, reason);
	}
	loader_free(l);
	chmod(libs, 0700);
	tmp_remove(dir);
}
END_TEST

/*
 * Where a libtool archive's object comes from: its directory only, never
 * its libdir (a .la naming another directory must not get a file that
 * was never checked loaded).  "DIR" is the archive's directory, "EVIL" a
 * directory holding a world-writable good.so.
 */
static const struct {
	const char *what;
	const char *dlname;
	int installed;
	int put_beside; /* a checked good.so in DIR (installed) */
	int error;
	const char *reason;
} redirects[] = {
	{ "installed, libdir elsewhere, object beside", "good.so", 1, 1, 0,
	    NULL },
	{ "installed, libdir elsewhere, nothing beside", "good.so", 1, 0,
	    -ENOENT, "DIR/good.so: cannot open file" },
	{ "dlname with a directory", "../EVIL/good.so", 1, 0, -ENOEXEC,
	    "the archive names no shared object in its directory" },
	{ "no dlname", "", 1, 1, -ENOEXEC,
	    "the archive names no shared object in its directory" },
};

START_TEST(test_archive_libdir)
{
	const struct loader_plugin *p = NULL;
	char dir[256], evil[256], la[512], obj[512], beside[512];
	char reason[1024], dlname[512], err[1024] = "";
	struct loader *l;
	FILE *f;

	tmp_make(dir, sizeof(dir));
	tmp_make(evil, sizeof(evil));
	object_path("good", obj, sizeof(obj));
	snprintf(beside, sizeof(beside), "%s/good.so", evil);
	copy_file(obj, beside, 0666);
	snprintf(beside, sizeof(beside), "%s/good.so", dir);
	if (redirects[_i].put_beside)
		copy_file(obj, beside, 0755);
	expand_dir(dlname, sizeof(dlname), redirects[_i].dlname, "");
	if (strstr(redirects[_i].dlname, "EVIL") != NULL)
		snprintf(
		    dlname, sizeof(dlname), "..%s/good.so", strrchr(evil, '/'));
	snprintf(la, sizeof(la), "%s/good.la", dir);
	ck_assert_ptr_nonnull(f = fopen(la, "w"));
	fprintf(f,
	    "# good.la - a libtool library file\n"
	    "dlname='%s'\ninstalled=%s\nlibdir='%s'\n",
	    dlname, redirects[_i].installed ? "yes" : "no", evil);
	ck_assert_int_eq(fclose(f), 0);

	l = test_loader();
	ck_assert_int_eq(
	    loader_open_file(l, la, &p, err, sizeof(err)), redirects[_i].error);
	if (redirects[_i].error == 0) {
		ck_assert_str_eq(p->desc->name, "good");
		ck_assert_str_eq(p->object, beside);
	} else {
		expand_dir(reason, sizeof(reason), redirects[_i].reason, dir);
		check_refusal(err, la, reason);
	}
	loader_free(l);
	tmp_remove(dir);
	tmp_remove(evil);
}
END_TEST

/*
 * Every directory above a plugin's must be safe from other users too; a
 * sticky one (like /tmp) is, above the plugin's own directory.  "TOP"
 * stands for the outer directory, made with mode top_mode.
 */
static const struct {
	const char *what;
	mode_t top_mode;
	int error;
	const char *reason;
} ancestors[] = {
	{ "outer 0755", 0755, 0, NULL },
	{ "outer 0777", 0777, -EPERM,
	    "refusing: directory TOP is writable by group or others "
	    "(mode 0777)" },
	{ "outer sticky 1777", 01777, 0, NULL },
	{ "outer 0775", 0775, -EPERM,
	    "refusing: directory TOP is writable by group or others "
	    "(mode 0775)" },
};

START_TEST(test_ancestors)
{
	const struct loader_plugin *p = NULL;
	char top[256], dir[300], path[512], obj[512], reason[1024];
	char err[1024] = "";
	struct loader *l;
	const char *at;

	tmp_make(top, sizeof(top));
	snprintf(dir, sizeof(dir), "%s/plugins", top);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/good.so", dir);
	object_path("good", obj, sizeof(obj));
	copy_file(obj, path, 0755);
	ck_assert_int_eq(chmod(top, ancestors[_i].top_mode), 0);

	l = test_loader();
	ck_assert_int_eq(loader_open_file(l, path, &p, err, sizeof(err)),
	    ancestors[_i].error);
	if (ancestors[_i].error != 0) {
		at = strstr(ancestors[_i].reason, "TOP");
		snprintf(reason, sizeof(reason), "%.*s%s%s",
		    (int)(at - ancestors[_i].reason), ancestors[_i].reason, top,
		    at + 3);
		check_refusal(err, path, reason);
	}
	loader_free(l);
	chmod(top, 0700);
	tmp_remove(top);
}
END_TEST

/* A plugin name that is a symbolic link, or a FIFO, is refused at once. */
START_TEST(test_not_a_file)
{
	const struct loader_plugin *p = NULL;
	char dir[256], path[512], obj[512], err[1024] = "";
	struct loader *l = test_loader();

	tmp_make(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/good.so", dir);
	object_path("good", obj, sizeof(obj));
	ck_assert_int_eq(symlink(obj, path), 0);
	ck_assert_int_eq(
	    loader_open_file(l, path, &p, err, sizeof(err)), -EPERM);
	check_refusal(err, path, "refusing: a symbolic link");
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(
	    loader_open_file(l, path, &p, err, sizeof(err)), -EINVAL);
	check_refusal(err, path, "refusing: not a regular file");
	loader_free(l);
	tmp_remove(dir);
}
END_TEST

START_TEST(test_unknown_name)
{
	static const char *const names[] = { "badabi", "badinit", "badkind",
		"good", "nodesc" };
	const struct loader_plugin *p = NULL;
	struct loader *l = test_loader();
	char err[1024] = "";
	size_t i;

	ck_assert_int_eq(
	    loader_open(l, "nosuch", &p, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_msg(
	    strstr(err, "no plugin named 'nosuch'") != NULL, "%s", err);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(strstr(err, names[i]) != NULL, "'%s' lacks %s",
		    err, names[i]);
	ck_assert_int_eq(
	    loader_open(l, "../plugins/good", &p, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(loader_open(l, "", &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(p);
	loader_free(l);
}
END_TEST

/*
 * With no plugin anywhere on the search path (VITALS_PLUGIN_PATH unset,
 * an empty directory, and PKGLIBDIR where nothing is installed), the
 * refusal says where it looked and how to add a directory, not "known:
 * none".  Where PKGLIBDIR holds plugins there is nothing to test.
 */
START_TEST(test_no_plugins_anywhere)
{
	const struct loader_plugin *p = NULL;
	char dir[256], err[2048] = "", *env, *known;
	const char *dirs[1];
	struct loader *l;

	tmp_make(dir, sizeof(dir));
	dirs[0] = dir;
	env = getenv("VITALS_PLUGIN_PATH");
	env = env != NULL ? strdup(env) : NULL;
	unsetenv("VITALS_PLUGIN_PATH");
	ck_assert_ptr_nonnull(l = loader_new(dirs, 1));
	if (env != NULL)
		setenv("VITALS_PLUGIN_PATH", env, 1);
	free(env);
	known = loader_known_names(l);
	if (known != NULL && *known == '\0') {
		ck_assert_int_eq(
		    loader_open(l, "ewma", &p, err, sizeof(err)), -ENOENT);
		ck_assert_msg(strstr(err,
				  "no plugin named 'ewma': no plugins "
				  "at all in ") != NULL &&
			strstr(err, dir) != NULL &&
			strstr(err, "VITALS_PLUGIN_PATH adds directories") !=
			    NULL,
		    "%s", err);
	}
	free(known);
	loader_free(l);
	tmp_remove(dir);
}
END_TEST

START_TEST(test_known_names)
{
	static const char *const files[] = { "zz_known_b.so", "zz_known_a.la",
		"zz_known_a.so", ".hidden.so", "notes.txt", "x.so.1" };
	const char *dirs[1];
	char dir[256], path[512], *known;
	struct loader *l;
	size_t i, n;

	tmp_make(dir, sizeof(dir));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		check_put(path, PUT_TEXT, 0644);
	}
	unsetenv("VITALS_PLUGIN_PATH");
	dirs[0] = dir;
	ck_assert_ptr_nonnull(l = loader_new(dirs, 1));
	ck_assert_ptr_nonnull(known = loader_known_names(l));
	n = strlen(known);
	ck_assert_msg(
	    n >= 22 && strcmp(known + n - 22, "zz_known_a, zz_known_b") == 0,
	    "known: '%s'", known);
	ck_assert_msg(strstr(known, "hidden") == NULL &&
		strstr(known, "notes") == NULL && strstr(known, "x.so") == NULL,
	    "known: '%s'", known);
	free(known);
	loader_free(l);
	tmp_remove(dir);
}
END_TEST

struct scan_result {
	char refused[8][512];
	size_t n;
};

static void
scan_cb(const char *path, const char *reason, void *arg)
{
	struct scan_result *r = arg;

	if (strncmp(path, plugdir, strlen(plugdir)) != 0 || r->n == 8)
		return;
	snprintf(
	    r->refused[r->n++], sizeof(r->refused[0]), "%s: %s", path, reason);
}

START_TEST(test_scan)
{
	struct loader *l = test_loader();
	const struct loader_plugin *v;
	struct scan_result r;
	char path[4096];
	size_t i, j, n, ours = 0;

	memset(&r, 0, sizeof(r));
	ck_assert_uint_ge(loader_scan(l, scan_cb, &r), 2);
	ck_assert_uint_eq(r.n, sizeof(refusals) / sizeof(refusals[0]));
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		plugin_path(refusals[i].name, path, sizeof(path));
		for (j = 0; j < r.n; j++) {
			if (strncmp(r.refused[j], path, strlen(path)) == 0)
				break;
		}
		ck_assert_msg(j < r.n, "%s not reported", path);
		check_refusal(r.refused[j], path, refusals[i].reason);
	}
	v = loader_plugins(l, &n);
	for (i = 0; i < n; i++) {
		if (strncmp(v[i].path, plugdir, strlen(plugdir)) == 0)
			ours++;
	}
	ck_assert_uint_eq(ours, sizeof(loads) / sizeof(loads[0]));
	/* A second scan loads nothing new. */
	memset(&r, 0, sizeof(r));
	loader_scan(l, scan_cb, &r);
	loader_plugins(l, &j);
	ck_assert_uint_eq(j, n);
	loader_free(l);
}
END_TEST

/*
 * Where "good" is found: a copy in a temporary directory T, placed in
 * VITALS_PLUGIN_PATH or in the given directories before or after plugdir.
 */
static const struct {
	const char *what;
	int env; /* put "/nonexistent::T" in VITALS_PLUGIN_PATH */
	int t_first; /* dirs = { T, plugdir } rather than { plugdir, T } */
	int want_t; /* the copy in T wins */
} precedence[] = {
	{ "VITALS_PLUGIN_PATH before the given dirs", 1, 0, 1 },
	{ "first given dir wins (T)", 0, 1, 1 },
	{ "first given dir wins (plugdir)", 0, 0, 0 },
};

START_TEST(test_precedence)
{
	const struct loader_plugin *p = NULL;
	char dir[256], path[512], env[512], err[1024] = "";
	const char *dirs[2];
	struct loader *l;
	size_t n;

	tmp_make(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/good.so", dir);
	check_put(path, PUT_COPY, 0644);
	dirs[0] = precedence[_i].t_first ? dir : plugdir;
	dirs[1] = precedence[_i].t_first ? plugdir : dir;
	if (precedence[_i].env) {
		snprintf(env, sizeof(env), "/nonexistent::%s", dir);
		setenv("VITALS_PLUGIN_PATH", env, 1);
		l = loader_new(dirs, 1);
	} else {
		unsetenv("VITALS_PLUGIN_PATH");
		l = loader_new(dirs, 2);
	}
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(
	    loader_open(l, "good", &p, err, sizeof(err)) == 0, "%s", err);
	n = precedence[_i].want_t ? strlen(dir) : strlen(plugdir);
	ck_assert_msg(
	    strncmp(p->path, precedence[_i].want_t ? dir : plugdir, n) == 0 &&
		p->path[n] == '/',
	    "%s: loaded %s", precedence[_i].what, p->path);
	loader_free(l);
	unsetenv("VITALS_PLUGIN_PATH");
	tmp_remove(dir);
}
END_TEST

START_TEST(test_open_twice)
{
	const struct loader_plugin *p = NULL, *q = NULL;
	char dir[256], copy[512], err[1024] = "";
	struct loader *l = test_loader();
	size_t n;

	ck_assert_int_eq(loader_open(l, "good", &p, err, sizeof(err)), 0);
	ck_assert_int_eq(loader_open(l, "good", &q, err, sizeof(err)), 0);
	ck_assert_ptr_eq(p, q);
	q = NULL;
	ck_assert_int_eq(loader_open_file(l, p->path, &q, err, sizeof(err)), 0);
	ck_assert_ptr_eq(p, q);
	/* Loading more keeps the pointers handed out valid. */
	ck_assert_int_eq(loader_open(l, "badinit", &q, err, sizeof(err)), 0);
	ck_assert_str_eq(p->name, "good");
	loader_plugins(l, &n);
	ck_assert_uint_eq(n, 2);

	tmp_make(dir, sizeof(dir));
	snprintf(copy, sizeof(copy), "%s/good.so", dir);
	check_put(copy, PUT_COPY, 0644);
	q = NULL;
	ck_assert_int_eq(
	    loader_open_file(l, copy, &q, err, sizeof(err)), -EEXIST);
	check_refusal(err, copy, "plugin 'good' is already loaded from");
	ck_assert_ptr_null(q);
	loader_free(l);
	tmp_remove(dir);
}
END_TEST

START_TEST(test_two_loaders)
{
	const struct loader_plugin *p = NULL, *q = NULL;
	struct loader *a = test_loader(), *b = test_loader();
	char err[1024] = "", why[64];

	ck_assert_int_eq(loader_open(a, "good", &p, err, sizeof(err)), 0);
	ck_assert_int_eq(loader_open(b, "good", &q, err, sizeof(err)), 0);
	loader_free(a);
	/* b's module must still be mapped, and libltdl still running. */
	ck_assert_str_eq(q->desc->name, "good");
	ck_assert_int_eq(q->desc->available(why, sizeof(why)), 0);
	ck_assert_int_eq(loader_open(b, "badinit", &p, err, sizeof(err)), 0);
	loader_free(b);
	/* And libltdl starts again for a new loader. */
	a = test_loader();
	ck_assert_int_eq(loader_open(a, "good", &p, err, sizeof(err)), 0);
	loader_free(a);
	loader_free(NULL);
}
END_TEST

START_TEST(test_relative_path)
{
	const struct loader_plugin *p = NULL;
	char path[4096], cwd[4096], rel[512], err[1024] = "";
	struct loader *l = test_loader();
	const char *base;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	plugin_path("good", path, sizeof(path));
	base = strrchr(path, '/') + 1;
	ck_assert_int_eq(chdir(plugdir), 0);
	ck_assert_msg(
	    loader_open_file(l, base, &p, err, sizeof(err)) == 0, "%s", err);
	snprintf(rel, sizeof(rel), "./%s", base);
	ck_assert_str_eq(p->path, rel);
	ck_assert_int_eq(chdir(cwd), 0);
	loader_free(l);
}
END_TEST

static Suite *
loader_suite(void)
{
	Suite *s = suite_create("loader");
	TCase *tc;

	tc = tcase_create("load");
	tcase_add_loop_test(tc, test_load, 0, NCASES(loads));
	tcase_add_test(tc, test_good_descriptor);
	tcase_add_loop_test(tc, test_check_config, 0, NCASES(value_checks));
	tcase_add_loop_test(tc, test_refuse, 0, NCASES(refusals));
	suite_add_tcase(s, tc);

	tc = tcase_create("file checks");
	tcase_add_loop_test(tc, test_file_check, 0, NCASES(checks));
	tcase_add_loop_test(tc, test_archive, 0, NCASES(archives));
	tcase_add_loop_test(tc, test_archive_libdir, 0, NCASES(redirects));
	tcase_add_loop_test(tc, test_ancestors, 0, NCASES(ancestors));
	tcase_add_test(tc, test_not_a_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("search");
	tcase_add_test(tc, test_unknown_name);
	tcase_add_test(tc, test_no_plugins_anywhere);
	tcase_add_test(tc, test_known_names);
	tcase_add_test(tc, test_scan);
	tcase_add_loop_test(tc, test_precedence, 0, NCASES(precedence));
	tcase_add_test(tc, test_open_twice);
	tcase_add_test(tc, test_two_loaders);
	tcase_add_test(tc, test_relative_path);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	plugdir = getenv("VITALS_TEST_PLUGINS");
	if (plugdir == NULL || *plugdir == '\0') {
		printf("check_loader: SKIP: VITALS_TEST_PLUGINS is not set "
		       "(run through make check)\n");
		return (77);
	}
	return testutil_run(loader_suite());
}
