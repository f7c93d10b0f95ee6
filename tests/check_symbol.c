/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/kernel/module.c, core/kernel/symbol.c and core/kernel/exe.c: build-ids
 * read from ELF notes (with and without section headers), the module
 * registry, user addresses resolved to (module, file offset), and the
 * per-pid caches forgetting processes that exited.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <vitals/bpf_shared.h>

#include "exe.h"
#include "module.h"
#include "symbol.h"
#include "testutil.h"

/* The build-id tests/buildid_known is linked with (Makefile.am). */
#define KNOWN_ID "0123456789abcdeffedcba9876543210deadbeef"

/* A function of this executable whose code the tests look for. */
int check_symbol_target(int x) __attribute__((noinline, noipa));

int
check_symbol_target(int x)
{
	return x * 3 + 1;
}

/* One that only a .symtab names: static, so never in .dynsym. */
static int check_symbol_local(int x) __attribute__((noinline, noipa));

static int
check_symbol_local(int x)
{
	return x * 7 + 3;
}

/*
 * Two functions of one byte each with 15 bytes between them that no
 * symbol holds (the assembler's sizes are what the symbol table says).
 */
void check_symbol_sized(void);
void check_symbol_after_gap(void);
__asm__(".text\n"
	".globl check_symbol_sized\n"
	".type check_symbol_sized, @function\n"
	"check_symbol_sized: ret\n"
	".size check_symbol_sized, 1\n"
	".skip 15, 0xcc\n"
	".globl check_symbol_after_gap\n"
	".type check_symbol_after_gap, @function\n"
	"check_symbol_after_gap: ret\n"
	".size check_symbol_after_gap, 1\n");

/* A file of the build tree (tests/NAME) or of the temp dir. */
static const char *
path_of(const char *dir, const char *name)
{
	static char p[PATH_MAX];
	const char *top = getenv(dir);

	snprintf(p, sizeof(p), "%s/%s", top ? top : ".", name);
	return p;
}

/* A copy of src at dst with its section headers removed from the header. */
static void
copy_without_sections(const char *src, const char *dst)
{
	char buf[65536];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	ssize_t n;
	int in, out;

	ck_assert_int_ge(in = open(src, O_RDONLY), 0);
	ck_assert_int_ge(
	    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
	n = read(in, buf, sizeof(buf));
	ck_assert_int_gt(n, (ssize_t)sizeof(*eh));
	ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	do
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	while ((n = read(in, buf, sizeof(buf))) > 0);
	close(in);
	close(out);
}

/* ---- build-ids ---- */

START_TEST(test_build_id_known)
{
	char hex[MODULE_BUILD_ID_HEX] = "x";

	ck_assert_int_eq(
	    module_build_id(path_of("top_builddir", "tests/buildid_known"), hex,
		sizeof(hex)),
	    0);
	ck_assert_str_eq(hex, KNOWN_ID);
}
END_TEST

START_TEST(test_build_id_none)
{
	char hex[MODULE_BUILD_ID_HEX] = "x";

	ck_assert_int_eq(
	    module_build_id(path_of("top_builddir", "tests/buildid_none"), hex,
		sizeof(hex)),
	    -ENOENT);
	ck_assert_str_eq(hex, "x");
}
END_TEST

/* Files stripped of section headers still have the note through PT_NOTE. */
START_TEST(test_build_id_phdr_only)
{
	char hex[MODULE_BUILD_ID_HEX] = "", dst[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	snprintf(dst, sizeof(dst), "%s/nosh.XXXXXX", tmp ? tmp : "/tmp");
	close(mkstemp(dst));
	copy_without_sections(
	    path_of("top_builddir", "tests/buildid_known"), dst);
	ck_assert_int_eq(module_build_id(dst, hex, sizeof(hex)), 0);
	unlink(dst);
	ck_assert_str_eq(hex, KNOWN_ID);
}
END_TEST

START_TEST(test_build_id_errors)
{
	char hex[MODULE_BUILD_ID_HEX], small[40];
	const char *known = path_of("top_builddir", "tests/buildid_known");

	/* 20 bytes need 41 characters. */
	ck_assert_int_eq(module_build_id(known, small, sizeof(small)), -ENOSPC);
	ck_assert_int_eq(
	    module_build_id("/proc/self/status", hex, sizeof(hex)), -EINVAL);
	ck_assert_int_eq(
	    module_build_id("/nonexistent/x", hex, sizeof(hex)), -ENOENT);
}
END_TEST

/* ---- the registry ---- */

START_TEST(test_registry)
{
	const char *known = path_of("top_builddir", "tests/buildid_known");
	const struct vitals_module *m;
	uint32_t a, b, c, d, n0 = module_count();
	struct stat st;

	ck_assert_int_eq(stat(known, &st), 0);
	ck_assert_int_eq(module_get(known, 0, st.st_ino, 0, &a), 0);
	ck_assert_int_eq(module_get(known, 0, st.st_ino, 0, &b), 0);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(a, n0); /* ids are dense */
	ck_assert_ptr_nonnull(m = module_of(a));
	ck_assert_uint_eq(m->id, a);
	ck_assert_str_eq(m->path, known);
	ck_assert_str_eq(m->build_id, KNOWN_ID);
	/* Same path, another inode (rebuilt since): another module, no id. */
	ck_assert_int_eq(module_get(known, 0, st.st_ino + 1, 0, &c), 0);
	ck_assert_uint_ne(c, a);
	ck_assert_str_eq(module_of(c)->build_id, "");
	/* By path: the newest module with that path. */
	ck_assert_int_eq(module_by_path(known, &d), 0);
	ck_assert_uint_eq(d, c);
	ck_assert_uint_eq(module_count(), n0 + 2);
	ck_assert_ptr_null(module_of(module_count()));
	ck_assert_int_eq(module_open(c, 0), -ENOENT);
	ck_assert_int_ge(d = (uint32_t)module_open(a, 0), 0);
	close((int)d);
}
END_TEST

/*
 * Modules are found by file, (device, inode) as the kernel reports a
 * frame's file, once registered; a module whose file could not be opened
 * has no device and is not.
 */
START_TEST(test_registry_by_file)
{
	const char *known = path_of("top_builddir", "tests/buildid_known");
	uint32_t a, b, dev;
	struct stat st;

	ck_assert_int_eq(stat(known, &st), 0);
	dev = module_dev_encode(st.st_dev);
	ck_assert_uint_eq(dev >> 20, major(st.st_dev));
	ck_assert_uint_eq(dev & 0xfffff, minor(st.st_dev));
	ck_assert_int_eq(module_get(known, 0, st.st_ino, 0, &a), 0);
	ck_assert_int_eq(module_find_file(dev, st.st_ino, &b), 0);
	ck_assert_uint_eq(b, a);
	ck_assert_int_eq(module_find_file(dev, st.st_ino + 7, &b), -ENOENT);
	ck_assert_int_eq(module_find_file(dev + 1, st.st_ino, &b), -ENOENT);
	ck_assert_int_eq(module_find_file(0, st.st_ino, &b), -ENOENT);
	ck_assert_int_eq(module_get("/nonexistent/libx.so", 0, 5, 0, &a), 0);
	ck_assert_int_eq(module_find_file(0, 5, &b), -ENOENT);
	/* A device from a maps line is the kernel's own: it is kept. */
	ck_assert_int_eq(
	    module_get("/nonexistent/liby.so", 0x800011, 6, 0, &a), 0);
	ck_assert_int_eq(module_find_file(0x800011, 6, &b), 0);
	ck_assert_uint_eq(b, a);
}
END_TEST

/*
 * A file known only by (device, inode), a library of a process gone
 * before its maps were read, is searched for in the directories of the
 * modules registered, and registered under the path found.
 */
START_TEST(test_search_file)
{
	const char *known = path_of("top_builddir", "tests/buildid_known");
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX - 16], a[PATH_MAX], b[PATH_MAX];
	uint32_t ida, idb, id2, dev;
	struct stat sa, sb;
	char buf[4096];
	ssize_t n;
	int in, out;

	snprintf(
	    dir, sizeof(dir), "%s/vitals-search.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/liba.so", dir);
	snprintf(b, sizeof(b), "%s/libb.so", dir);
	ck_assert_int_ge(in = open(known, O_RDONLY), 0);
	ck_assert_int_ge(out = open(b, O_WRONLY | O_CREAT, 0600), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	ck_assert_int_ge(out = open(a, O_WRONLY | O_CREAT, 0600), 0);
	close(out);
	ck_assert_int_eq(stat(a, &sa), 0);
	ck_assert_int_eq(stat(b, &sb), 0);
	dev = module_dev_encode(sb.st_dev);
	/* Unknown, and in no directory a module is in. */
	ck_assert_int_eq(module_find_file(dev, sb.st_ino, &idb), -ENOENT);
	/* liba.so registered: its directory is searched, libb.so found. */
	ck_assert_int_eq(module_get(a, 0, sa.st_ino, 0, &ida), 0);
	ck_assert_int_eq(module_search_file(dev, sb.st_ino, &idb), 0);
	ck_assert_uint_ne(idb, ida);
	ck_assert_str_eq(module_of(idb)->path, b);
	ck_assert_str_eq(module_of(idb)->build_id, KNOWN_ID);
	ck_assert_int_eq(module_find_file(dev, sb.st_ino, &id2), 0);
	ck_assert_uint_eq(id2, idb);
	/* An inode in none of them: not found, and not searched again. */
	ck_assert_int_eq(
	    module_search_file(dev, sb.st_ino + 100000, &id2), -ENOENT);
	ck_assert_int_eq(
	    module_search_file(dev, sb.st_ino + 100000, &id2), -ENOENT);
	ck_assert_int_eq(module_search_file(0, sb.st_ino, &id2), -ENOENT);
	unlink(a);
	unlink(b);
	rmdir(dir);
}
END_TEST

/* Enough paths to grow the head table several times; all found again. */
START_TEST(test_registry_many)
{
	char p[64];
	uint32_t i, id, first = module_count();

	for (i = 0; i < 3000; i++) {
		snprintf(p, sizeof(p), "/nonexistent/lib%u.so", i);
		ck_assert_int_eq(module_get(p, 0, i + 1, 0, &id), 0);
		ck_assert_uint_eq(id, first + i);
	}
	for (i = 0; i < 3000; i++) {
		snprintf(p, sizeof(p), "/nonexistent/lib%u.so", i);
		ck_assert_int_eq(module_by_path(p, &id), 0);
		ck_assert_uint_eq(id, first + i);
		ck_assert_str_eq(module_of(id)->path, p);
	}
}
END_TEST

/* ---- user addresses ---- */

/* (module, offset) of a function of ours names its code in the file. */
START_TEST(test_user_loc_self)
{
	uint64_t addr = (uint64_t)(uintptr_t)&check_symbol_target, off;
	char exe[PATH_MAX], hex[MODULE_BUILD_ID_HEX] = "", file[16];
	const struct vitals_module *m;
	uint32_t id;
	ssize_t n;
	int fd;

	ck_assert_int_gt(
	    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[n] = '\0';
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)getpid(), 0, addr, &id, &off), 0);
	ck_assert_ptr_nonnull(m = module_of(id));
	ck_assert_str_eq(m->path, exe);
	module_build_id(exe, hex, sizeof(hex));
	ck_assert_str_eq(m->build_id, hex);
	/* The bytes at that offset of the file are the function's code. */
	ck_assert_int_ge(fd = open(exe, O_RDONLY), 0);
	ck_assert_int_eq(
	    pread(fd, file, sizeof(file), (off_t)off), (ssize_t)sizeof(file));
	close(fd);
	ck_assert_mem_eq(file, (const void *)(uintptr_t)addr, sizeof(file));
	ck_assert_uint_eq(sym_user_frame((uint32_t)getpid(), 0, addr, 0),
	    VITALS_UFRAME(id, off));
	ck_assert_str_eq(
	    sym_user((uint32_t)getpid(), addr), "check_symbol_target");
}
END_TEST

/*
 * An address past a sized function's end, before the next one begins,
 * is no function's; the functions' own bytes are theirs.
 */
START_TEST(test_user_sized_gap)
{
	uint64_t a = (uint64_t)(uintptr_t)&check_symbol_sized;
	uint64_t b = (uint64_t)(uintptr_t)&check_symbol_after_gap;
	uint32_t pid = (uint32_t)getpid();

	ck_assert_uint_eq(b - a, 16);
	ck_assert_str_eq(sym_user(pid, a), "check_symbol_sized");
	ck_assert_ptr_null(sym_user(pid, a + 1));
	ck_assert_ptr_null(sym_user(pid, a + 15));
	ck_assert_str_eq(sym_user(pid, b), "check_symbol_after_gap");
}
END_TEST

/* Anonymous executable memory (JIT code) and non-code stay raw. */
START_TEST(test_user_loc_anon)
{
	uint32_t pid = (uint32_t)getpid(), id = 99;
	uint64_t off = 99, a;
	static int data;
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	a = (uint64_t)(uintptr_t)p + 16;
	ck_assert_int_eq(sym_user_loc(pid, 0, a, &id, &off), -ENOENT);
	ck_assert_uint_eq(sym_user_frame(pid, 0, a, 0), a);
	a = (uint64_t)(uintptr_t)&data;
	ck_assert_int_eq(sym_user_loc(pid, 0, a, &id, &off), -ENOENT);
	ck_assert_int_eq(sym_user_loc(0, 0, a, &id, &off), -ENOENT);
	ck_assert_uint_eq(id, 99); /* outputs untouched on failure */
	ck_assert_uint_eq(off, 99);
	/* No user address (a walk past the last frame): 0, not a module. */
	ck_assert_uint_eq(
	    sym_user_frame(pid, 0, UINT64_C(0xec8c485355fc8949), 0), 0);
	ck_assert_uint_eq(sym_user_frame(pid, 0, UINT64_C(1) << 47, 0), 0);
	ck_assert_uint_eq(sym_user_frame(pid, 0, (UINT64_C(1) << 47) - 1, 0),
	    (UINT64_C(1) << 47) - 1);
	munmap(p, 4096);
}
END_TEST

/*
 * The executable mapping of this process whose path contains needle:
 * its range, file offset, device (kernel encoding), inode and path.
 */
static void
self_map(const char *needle, uint64_t *start, uint64_t *end, uint64_t *off,
    uint32_t *dev, uint64_t *ino, char *path)
{
	unsigned long long s, e, o, i;
	unsigned int maj, min;
	char line[PATH_MAX + 128], perm[8];
	FILE *f;
	int n, found = 0;

	ck_assert_ptr_nonnull(f = fopen("/proc/self/maps", "r"));
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e,
			perm, &o, &maj, &min, &i, &n) < 7 ||
		    perm[2] != 'x' || strstr(line + n, needle) == NULL)
			continue;
		line[strcspn(line, "\n")] = '\0';
		strcpy(path, line + n);
		*start = s, *end = e, *off = o, *ino = i;
		*dev = maj << 20 | min;
		found = 1;
	}
	fclose(f);
	ck_assert_msg(found, "no executable mapping of %s", needle);
}

static void reap(pid_t pid);
static pid_t spawn_sleeper(void);

/*
 * A process gone before its samples are read: its exe's text comes from
 * the range the kernel sent (sym_proc_text), its libraries from the files
 * the kernel found for its frames (sym_proc_learn), and both stay placed
 * and named after a failed re-read of its maps.
 */
START_TEST(test_gone_learn)
{
	char exe[PATH_MAX], lib[PATH_MAX];
	uint64_t es, ee, eo, eino, ls, le, lo, lino, addr, off;
	uint32_t edev, ldev, xid, libc, id;
	pid_t child = spawn_sleeper();
	const char *name;

	xid = exe_id_of((uint32_t)child);
	ck_assert_uint_ne(xid, 0);
	self_map("check_symbol", &es, &ee, &eo, &edev, &eino, exe);
	self_map("/libc.so", &ls, &le, &lo, &ldev, &lino, lib);
	reap(child);
	/* Not cached: nothing to learn into. */
	ck_assert_int_eq(
	    sym_proc_learn((uint32_t)child, xid, ls, le, lo, 0), -ENOENT);
	ck_assert_int_eq(sym_proc_text((uint32_t)child, xid, exe, es, ee), 0);
	addr = (uint64_t)(uintptr_t)&check_symbol_target;
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, addr, &id, &off), 0);
	ck_assert_str_eq(sym_module_name(id, off, 0), "check_symbol_target");
	/* A libc function: not placed until libc's mapping is learnt. */
	addr = (uint64_t)(uintptr_t)&getpid;
	ck_assert_uint_ge(addr, ls);
	ck_assert_uint_lt(addr, le);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, addr, &id, &off), -ENOENT);
	ck_assert_int_eq(module_get(lib, ldev, lino, 0, &libc), 0);
	ck_assert_int_eq(
	    sym_proc_learn((uint32_t)child, xid, ls, le, lo, libc), 0);
	/* Known already (or overlapping): left as it is. */
	ck_assert_int_eq(
	    sym_proc_learn((uint32_t)child, xid, ls + 4096, le, lo, 99), 0);
	ck_assert_int_eq(
	    sym_proc_learn((uint32_t)child, xid + 1, ls, le, lo, libc),
	    -ENOENT);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, addr, &id, &off), 0);
	ck_assert_uint_eq(id, libc);
	ck_assert_uint_eq(off, addr - ls + lo);
	ck_assert_ptr_nonnull(name = sym_module_name(id, off, 0));
	ck_assert_msg(strstr(name, "getpid") != NULL, "getpid named %s", name);
	/* A miss once the re-read interval is past: the maps are not lost. */
	usleep(150 * 1000);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, 16, &id, &off), -ENOENT);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, addr, &id, &off), 0);
	ck_assert_uint_eq(id, libc);
	/* The kernel's device for libc is the one its maps line gives. */
	ck_assert_int_eq(module_find_file(ldev, lino, &id), 0);
	ck_assert_uint_eq(id, libc);
}
END_TEST

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A return address in no code of maps read after the sample is where a
 * frame-pointer walk went astray: 0, which ends the stack.  Code (a
 * file's or anonymous) stays, and so does any address when the maps were
 * read before the sample or are another program's (the pid exec'd).
 */
START_TEST(test_user_frame_junk)
{
	static int data;
	uint64_t since = mono_ns() - 1000000000ULL, d, jit, code, off;
	uint32_t xid, id;
	pid_t child;
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	child = spawn_sleeper(); /* has our mappings */
	xid = exe_id_of((uint32_t)child);
	d = (uint64_t)(uintptr_t)&data;
	jit = (uint64_t)(uintptr_t)p + 16;
	code = (uint64_t)(uintptr_t)&check_symbol_target;
	ck_assert_uint_eq(sym_user_frame((uint32_t)child, xid, d, since), 0);
	ck_assert_uint_eq(
	    sym_user_frame((uint32_t)child, xid, jit, since), jit);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, code, &id, &off), 0);
	ck_assert_uint_eq(sym_user_frame((uint32_t)child, xid, code, since),
	    VITALS_UFRAME(id, off));
	/* Maps read before the sample, or no time: kept raw. */
	ck_assert_uint_eq(
	    sym_user_frame((uint32_t)child, xid, d, mono_ns() + 1000000000ULL),
	    d);
	ck_assert_uint_eq(sym_user_frame((uint32_t)child, xid, d, 0), d);
	/* The pid runs another exe than the sample's: not its maps. */
	ck_assert_uint_eq(
	    sym_user_frame((uint32_t)child, xid + 1, d, since), d);
	reap(child);
	munmap(p, 4096);

	/* A child that exec'd since its sample: sleep's maps are not ours. */
	ck_assert_int_ge(child = fork(), 0);
	if (child == 0) {
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	while (exe_id_of((uint32_t)child) == xid)
		usleep(1000);
	ck_assert_uint_eq(sym_user_frame((uint32_t)child, xid, d, since), d);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, xid, code, &id, &off), -ENOENT);
	reap(child);
}
END_TEST

/* ---- dropping exited processes ---- */

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

/*
 * A child that waits to be killed, whose pid does not share a cache slot
 * with ours (both caches are direct-mapped by pid).
 */
static pid_t
spawn_sleeper(void)
{
	pid_t pid;

	for (;;) {
		ck_assert_int_ge(pid = fork(), 0);
		if (pid == 0) {
			pause();
			_exit(0);
		}
		if ((uint32_t)pid % SYM_PROCS !=
			(uint32_t)getpid() % SYM_PROCS &&
		    (uint32_t)pid % EXE_SLOTS != (uint32_t)getpid() % EXE_SLOTS)
			return pid;
		reap(pid);
	}
}

START_TEST(test_maps_dropped_on_exit)
{
	uint64_t addr = (uint64_t)(uintptr_t)&check_symbol_target, off;
	pid_t child = spawn_sleeper();
	uint32_t id, idc;

	ck_assert_int_eq(
	    sym_user_loc((uint32_t)getpid(), 0, addr, &id, &off), 0);
	/* The child runs the same file: the same module. */
	ck_assert_int_eq(sym_user_loc((uint32_t)child, 0, addr, &idc, &off), 0);
	ck_assert_uint_eq(idc, id);
	ck_assert_uint_eq(sym_procs_cached(), 2);
	ck_assert_uint_eq(sym_drop_dead(), 0); /* both alive */
	ck_assert_uint_eq(sym_procs_cached(), 2);
	reap(child);
	ck_assert_uint_eq(sym_drop_dead(), 1);
	ck_assert_uint_eq(sym_procs_cached(), 1);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)child, 0, addr, &idc, &off), -ENOENT);
	ck_assert_uint_eq(sym_procs_cached(), 1);
}
END_TEST

START_TEST(test_exe_dropped_on_exit)
{
	char self[PATH_MAX], path[PATH_MAX];
	pid_t child = spawn_sleeper();
	uint32_t xid = exe_id_of((uint32_t)child);
	ssize_t n;

	ck_assert_uint_ne(xid, 0);
	ck_assert_int_gt(
	    n = readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
	self[n] = '\0';
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, NULL, path, sizeof(path)), 0);
	ck_assert_str_eq(path, self);
	ck_assert_int_eq(
	    exe_path((uint32_t)getpid(), exe_id_of((uint32_t)getpid()), NULL,
		path, sizeof(path)),
	    0);
	ck_assert_uint_eq(exe_cached(), 2);
	ck_assert_uint_eq(exe_drop_dead(), 0);
	reap(child);
	ck_assert_uint_eq(exe_drop_dead(), 1);
	ck_assert_uint_eq(exe_cached(), 1);
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, NULL, path, sizeof(path)), -ENOENT);
}
END_TEST

/*
 * A process gone before its samples were read is named by the path last
 * resolved for its exe id, only if its comm is that path's base name as
 * exec sets it (cut to 15 characters) or the comm of the process it was
 * resolved for (a program run through a symbolic link).
 */
START_TEST(test_exe_known_after_exit)
{
	char self[PATH_MAX], path[PATH_MAX], comm[VITALS_BPF_COMM_LEN];
	pid_t child = spawn_sleeper();
	uint32_t xid = exe_id_of((uint32_t)child);
	ssize_t n;

	ck_assert_int_gt(
	    n = readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
	self[n] = '\0';
	snprintf(comm, sizeof(comm), "%s", strrchr(self, '/') + 1);
	/* Resolved while it runs, its samples saying it is "alias". */
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, "alias", path, sizeof(path)), 0);
	reap(child);
	ck_assert_uint_eq(exe_drop_dead(), 1);
	path[0] = '\0';
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, comm, path, sizeof(path)), 0);
	ck_assert_str_eq(path, self);
	path[0] = '\0';
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, "alias", path, sizeof(path)), 0);
	ck_assert_str_eq(path, self);
	/* Another name, no name, or another exe id: not this program. */
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, "sh", path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, NULL, path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid, "", path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(
	    exe_path((uint32_t)child, xid + 1, comm, path, sizeof(path)),
	    -ENOENT);
}
END_TEST

/*
 * A kernel with function padding lists it as __pfx_NAME before NAME: an
 * address in the padding is named NAME, as the function itself, and no
 * __pfx_ symbol is kept.  Needs kallsyms' addresses (root) and such a
 * kernel; else nothing to check.
 */
START_TEST(test_kernel_padding)
{
	char line[512], name[256], prev[256] = "", type;
	unsigned long long a, prev_at = 0, lo = 0, at = 0;
	char fn[256] = "";
	uint64_t rlo, rhi;
	FILE *f;

	if ((f = fopen("/proc/kallsyms", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL && at == 0) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 ||
		    a == 0 || (type != 't' && type != 'T'))
			continue;
		if (strncmp(prev, "__pfx_", 6) == 0 &&
		    strcmp(prev + 6, name) == 0 && prev_at < a &&
		    strchr(line, '[') == NULL) {
			lo = prev_at;
			at = a;
			snprintf(fn, sizeof(fn), "%s", name);
		}
		snprintf(prev, sizeof(prev), "%s", name);
		prev_at = a;
	}
	fclose(f);
	if (at == 0)
		return;
	ck_assert_str_eq(sym_kernel(lo), fn);
	ck_assert_str_eq(sym_kernel(at - 1), fn);
	ck_assert_str_eq(sym_kernel(at), fn);
	ck_assert_str_eq(sym_kernel(at + 1), fn);
	ck_assert_int_eq(sym_kernel_range(fn, &rlo, &rhi), 0);
	ck_assert_uint_eq(rlo, lo);
	snprintf(name, sizeof(name), "__pfx_%s", fn);
	ck_assert_int_eq(sym_kernel_range(name, &rlo, &rhi), -ENOENT);
}
END_TEST

/*
 * The symbol tables of files are let go between epochs, least recently
 * used first, so that new files keep getting names: 160 files (symlinks
 * to this executable, each its own module) are more than the cache has
 * slots for at once.
 */
START_TEST(test_files_trimmed)
{
	uint64_t addr = (uint64_t)(uintptr_t)&check_symbol_target, off;
	const char *tmp = getenv("TMPDIR");
	char exe[PATH_MAX], dir[PATH_MAX - 16], p[PATH_MAX];
	uint32_t id, ids[160];
	size_t all, kept;
	struct stat st;
	unsigned i;
	ssize_t n;

	ck_assert_int_gt(
	    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[n] = '\0';
	ck_assert_int_eq(stat(exe, &st), 0);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)getpid(), 0, addr, &id, &off), 0);
	snprintf(dir, sizeof(dir), "%s/vitals-syms.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < 160; i++) {
		snprintf(p, sizeof(p), "%s/e%u", dir, i);
		ck_assert_int_eq(symlink(exe, p), 0);
		ck_assert_int_eq(module_get(p, 0, st.st_ino, 0, &ids[i]), 0);
	}
	for (i = 0; i < 100; i++)
		ck_assert_str_eq(
		    sym_module_name(ids[i], off, 0), "check_symbol_target");
	/* All named in this epoch: kept. */
	all = sym_files_trim();
	ck_assert_uint_gt(all, 0);
	ck_assert_str_eq(
	    sym_module_name(ids[0], off, 0), "check_symbol_target");
	/* None named since but ids[0]: down to half the slots, ids[0] kept. */
	kept = sym_files_trim();
	ck_assert_uint_lt(kept, all);
	ck_assert_uint_le(kept, 2u << 20);
	for (i = 100; i < 160; i++)
		ck_assert_str_eq(
		    sym_module_name(ids[i], off, 0), "check_symbol_target");
	/* One that went is loaded again. */
	ck_assert_str_eq(
	    sym_module_name(ids[1], off, 0), "check_symbol_target");
	for (i = 0; i < 160; i++) {
		snprintf(p, sizeof(p), "%s/e%u", dir, i);
		unlink(p);
	}
	rmdir(dir);
}
END_TEST

/*
 * A file stripped of its .symtab names only what .dynsym exports; with
 * its separate debug file where Debian's -dbg packages put them
 * (DIR/.build-id/XX/REST.debug), its local functions are named too.
 */
START_TEST(test_debug_file)
{
	uint64_t addr = (uint64_t)(uintptr_t)&check_symbol_local, off;
	char exe[PATH_MAX], hex[MODULE_BUILD_ID_HEX] = "", code[16];
	char cmd[4 * PATH_MAX], p[PATH_MAX], *dir;
	uint32_t id, without, with;
	struct stat st;
	ssize_t n;
	int fd;

	ck_assert_int_gt(check_symbol_local(1), 0);
	ck_assert_int_gt(
	    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[n] = '\0';
	ck_assert_int_eq(module_build_id(exe, hex, sizeof(hex)), 0);
	ck_assert_uint_gt(strlen(hex), 4);
	ck_assert_int_eq(
	    sym_user_loc((uint32_t)getpid(), 0, addr, &id, &off), 0);
	ck_assert_str_eq(sym_module_name(id, off, 0), "check_symbol_local");
	dir = testutil_tmpdir("debug");
	snprintf(cmd, sizeof(cmd),
	    "mkdir -p %s/d/.build-id/%.2s %s/none && "
	    "objcopy --only-keep-debug %s %s/d/.build-id/%.2s/%s.debug && "
	    "objcopy --strip-all %s %s/stripped && "
	    "ln -s stripped %s/without && ln -s stripped %s/with",
	    dir, hex, dir, exe, dir, hex, hex + 2, exe, dir, dir, dir);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	/* The stripped copy has the same code at the same offset. */
	snprintf(p, sizeof(p), "%s/stripped", dir);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(
	    pread(fd, code, sizeof(code), (off_t)off), (ssize_t)sizeof(code));
	close(fd);
	ck_assert_mem_eq(code, (const void *)(uintptr_t)addr, sizeof(code));
	/* Two modules of it, each loading its symbols on first use. */
	snprintf(p, sizeof(p), "%s/without", dir);
	ck_assert_int_eq(module_get(p, 0, st.st_ino, 0, &without), 0);
	snprintf(p, sizeof(p), "%s/with", dir);
	ck_assert_int_eq(module_get(p, 0, st.st_ino, 0, &with), 0);
	ck_assert_str_eq(module_of(with)->build_id, hex);
	snprintf(p, sizeof(p), "%s/none", dir);
	setenv("VITALS_DEBUG_DIR", p, 1);
	ck_assert_ptr_null(sym_module_name(without, off, 0));
	snprintf(p, sizeof(p), "%s/d", dir);
	setenv("VITALS_DEBUG_DIR", p, 1);
	ck_assert_str_eq(sym_module_name(with, off, 0), "check_symbol_local");
	unsetenv("VITALS_DEBUG_DIR");
	testutil_tmpdir_remove(dir);
}
END_TEST

static Suite *
symbol_suite(void)
{
	Suite *s = suite_create("symbol");
	TCase *b = tcase_create("build_id"), *r = tcase_create("registry");
	TCase *u = tcase_create("user"), *d = tcase_create("drop");

	tcase_add_test(b, test_build_id_known);
	tcase_add_test(b, test_build_id_none);
	tcase_add_test(b, test_build_id_phdr_only);
	tcase_add_test(b, test_build_id_errors);
	suite_add_tcase(s, b);
	tcase_add_test(r, test_registry);
	tcase_add_test(r, test_registry_many);
	tcase_add_test(r, test_registry_by_file);
	tcase_add_test(r, test_search_file);
	suite_add_tcase(s, r);
	tcase_add_test(u, test_user_loc_self);
	tcase_add_test(u, test_user_sized_gap);
	tcase_add_test(u, test_user_loc_anon);
	tcase_add_test(u, test_files_trimmed);
	tcase_add_test(u, test_debug_file);
	tcase_add_test(u, test_kernel_padding);
	suite_add_tcase(s, u);
	tcase_add_test(d, test_maps_dropped_on_exit);
	tcase_add_test(d, test_exe_dropped_on_exit);
	tcase_add_test(d, test_exe_known_after_exit);
	tcase_add_test(d, test_gone_learn);
	tcase_add_test(d, test_user_frame_junk);
	suite_add_tcase(s, d);
	return s;
}

int
main(void)
{
	return testutil_run(symbol_suite());
}
