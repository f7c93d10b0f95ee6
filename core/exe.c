/* SPDX-License-Identifier: MIT */
/*
 * A small direct-mapped cache pid -> (exe id, path) for the BPF layer, so
 * /proc is read once per process rather than once per sample; entries of
 * exited processes are dropped by exe_drop_dead.  A second one, exe id ->
 * path, names the samples of processes gone before their samples were
 * read (fork + exec of a short program), when their comm agrees.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/bpf_shared.h>

#include "exe.h"

#define EXE_PATH 256

struct exe_entry {
	uint32_t pid;
	uint32_t exe_id;
	char path[EXE_PATH];
};

/* A path seen lately for an exe id, and the comm of the process seen. */
struct exe_known {
	uint32_t exe_id;
	char comm[VITALS_BPF_COMM_LEN];
	char path[EXE_PATH];
};

static struct exe_entry exe_cache[EXE_SLOTS];
static struct exe_known exe_known[EXE_KNOWN]; /* slot exe_id % EXE_KNOWN */

uint32_t
exe_id_of(uint32_t pid)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%u/exe", pid);
	if (stat(p, &st) < 0)
		return 0;
	return vitals_bpf_exe_id((uint64_t)st.st_ino);
}

static int
exe_resolve(struct exe_entry *e, uint32_t pid)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%u/exe", pid);
	n = readlink(p, e->path, sizeof(e->path) - 1);
	if (n <= 0)
		return -ENOENT;
	e->path[n] = '\0';
	e->pid = pid;
	e->exe_id = exe_id_of(pid);
	return 0;
}

/* Remember e's path for its exe id, with the comm its process had. */
static void
exe_learn(const struct exe_entry *e, const char *comm)
{
	struct exe_known *k = &exe_known[e->exe_id % EXE_KNOWN];

	if (comm == NULL || comm[0] == '\0')
		return;
	k->exe_id = e->exe_id;
	snprintf(k->comm, sizeof(k->comm), "%s", comm);
	snprintf(k->path, sizeof(k->path), "%s", e->path);
}

/*
 * The path last seen for exe_id, if comm is what exec gives a process run
 * from it: the path's base name cut to the 15 characters of a comm, or
 * the comm a live process of it had (run through a symbolic link: `as`
 * for x86_64-linux-gnu-as).  The check keeps a stale or colliding id (a
 * hash of the inode number) from naming the wrong program.
 */
static int
exe_known_path(uint32_t exe_id, const char *comm, char *buf, size_t len)
{
	const struct exe_known *k = &exe_known[exe_id % EXE_KNOWN];
	const char *base;

	if (comm == NULL || comm[0] == '\0' || k->exe_id != exe_id)
		return -ENOENT;
	base = strrchr(k->path, '/');
	base = base ? base + 1 : k->path;
	if (strncmp(base, comm, VITALS_BPF_COMM_LEN - 1) != 0 &&
	    strncmp(k->comm, comm, VITALS_BPF_COMM_LEN - 1) != 0)
		return -ENOENT;
	snprintf(buf, len, "%s", k->path);
	return 0;
}

int
exe_path(uint32_t pid, uint32_t exe_id, const char *comm, char *buf,
    size_t len)
{
	struct exe_entry *e;

	if (pid == 0 || exe_id == 0)
		return -ENOENT;
	e = &exe_cache[pid % EXE_SLOTS];
	if (e->pid != pid || e->exe_id != exe_id) {
		if (exe_resolve(e, pid) < 0 || e->exe_id != exe_id) {
			e->pid = 0;
			return exe_known_path(exe_id, comm, buf, len);
		}
		exe_learn(e, comm);
	}
	snprintf(buf, len, "%s", e->path);
	return 0;
}

uint32_t
exe_drop_dead(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < EXE_SLOTS; i++) {
		if (exe_cache[i].pid == 0 ||
		    kill((pid_t)exe_cache[i].pid, 0) == 0 || errno != ESRCH)
			continue;
		exe_cache[i].pid = 0;
		n++;
	}
	return n;
}

uint32_t
exe_cached(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < EXE_SLOTS; i++)
		n += exe_cache[i].pid != 0;
	return n;
}
