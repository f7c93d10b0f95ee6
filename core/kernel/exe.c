/* SPDX-License-Identifier: MIT */
/*
 * A small direct-mapped cache pid -> (exe id, path) for the BPF layer, so
 * /proc is read once per process rather than once per sample; entries of
 * exited processes are dropped by exe_drop_dead.  A second one, exe id ->
 * path, names the samples of processes gone before their samples were
 * read (fork + exec of a short program), when their comm agrees; it is
 * filled from /proc and from the kernel's table of programs exec'd
 * (core/exec.bpf.c) while a BPF probe holds it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <vitals/bpf_shared.h>

#include "clock.h"
#include "exe.h"
#include "exe_table.h"
#include "exe.skel.h"

#define EXE_PATH 256

struct exe_entry {
	uint32_t pid;
	uint32_t exe_id; /* 0: /proc could not name it (gone) */
	uint32_t miss_exe_id; /* the sample's exe id /proc did not give */
	uint64_t miss_at; /* when (clock_coarse_ns()) */
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
/*
 * How long a miss is kept, here and in exe_cache (a pid /proc did not
 * name with the sample's exe id): samples come in batches, one per drain,
 * and each would otherwise ask again.  Short, so that a later exec is
 * learnt at the next drain.  Below, an (exe id, comm) the exec table
 * could not name, in slot exe_id % EXE_KNOWN: each sample of a gone
 * process whose comm is not its exe's name (a renamed thread) would read
 * the table, stat and resolve the path again.
 */
#define EXE_MISS_NS (100 * 1000 * 1000ULL)
static struct exe_miss {
	uint32_t exe_id;
	char comm[VITALS_BPF_COMM_LEN];
	uint64_t at; /* clock_coarse_ns() of the miss */
} exe_missed[EXE_KNOWN];

static struct exe_bpf *exe_exec; /* the kernel's exec table, while held */
static unsigned exe_exec_refs;

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

/* Whether comm is the base name of k's path or the comm k was seen with. */
static int
exe_known_comm(const struct exe_known *k, const char *comm)
{
	const char *base = strrchr(k->path, '/');

	base = base ? base + 1 : k->path;
	return strncmp(base, comm, VITALS_BPF_COMM_LEN - 1) == 0 ||
	    strncmp(k->comm, comm, VITALS_BPF_COMM_LEN - 1) == 0;
}

/*
 * Learn exe_id's path from the kernel's exec table, if it has one that
 * still names a file of that exe id (a slot holds the last of the ids
 * sharing it; a file may have been replaced since) and that comm names
 * (exe_known_comm): an entry that would not name the sample does not
 * replace one learnt from /proc.  The path is made canonical, as
 * /proc/PID/exe gives it.
 */
static int
exe_learn_exec(uint32_t exe_id, const char *comm)
{
	struct vitals_exec_name n, again;
	struct exe_known tmp;
	char real[PATH_MAX];
	struct stat st;
	uint32_t key = exe_id % VITALS_EXEC_SLOTS;

	/*
	 * A seqcount: the program makes gen odd while it writes the slot.
	 * The copy is whole if gen was even and is unchanged after it.
	 */
	if (exe_exec == NULL ||
	    bpf_map__lookup_elem(exe_exec->maps.vitals_exec_names, &key,
		sizeof(key), &n, sizeof(n), 0) < 0 ||
	    bpf_map__lookup_elem(exe_exec->maps.vitals_exec_names, &key,
		sizeof(key), &again, sizeof(again), 0) < 0 ||
	    (n.gen & 1) != 0 || n.gen != again.gen || n.exe_id != exe_id)
		return -ENOENT;
	n.path[sizeof(n.path) - 1] = n.comm[sizeof(n.comm) - 1] = '\0';
	if (stat(n.path, &st) < 0 ||
	    vitals_bpf_exe_id((uint64_t)st.st_ino) != exe_id ||
	    realpath(n.path, real) == NULL || n.comm[0] == '\0' ||
	    strlen(real) >= sizeof(tmp.path))
		return -ENOENT;
	tmp.exe_id = exe_id;
	memcpy(tmp.comm, n.comm, sizeof(tmp.comm));
	memcpy(tmp.path, real, strlen(real) + 1);
	if (!exe_known_comm(&tmp, comm))
		return -ENOENT;
	exe_known[exe_id % EXE_KNOWN] = tmp;
	return 0;
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
	struct exe_miss *m = &exe_missed[exe_id % EXE_KNOWN];
	uint64_t now;

	if (comm == NULL || comm[0] == '\0')
		return -ENOENT;
	if (k->exe_id != exe_id || !exe_known_comm(k, comm)) {
		now = clock_coarse_ns();
		if (m->exe_id == exe_id && now - m->at < EXE_MISS_NS &&
		    strncmp(m->comm, comm, sizeof(m->comm)) == 0)
			return -ENOENT;
		if (exe_learn_exec(exe_id, comm) < 0) {
			m->exe_id = exe_id;
			m->at = now;
			snprintf(m->comm, sizeof(m->comm), "%s", comm);
			return -ENOENT;
		}
	}
	snprintf(buf, len, "%s", k->path);
	return 0;
}

int
exe_path(uint32_t pid, uint32_t exe_id, const char *comm, char *buf, size_t len)
{
	struct exe_entry *e;

	if (pid == 0 || exe_id == 0)
		return -ENOENT;
	e = &exe_cache[pid % EXE_SLOTS];
	if (e->pid != pid || e->exe_id != exe_id) {
		/*
		 * /proc did not give this exe id for the pid lately: it is
		 * gone, or runs another program now (the samples of a fork
		 * child from before its exec).  Its other samples of the
		 * batch go by exe id without /proc.
		 */
		if (e->pid == pid && e->miss_exe_id == exe_id &&
		    clock_coarse_ns() - e->miss_at < EXE_MISS_NS)
			return exe_known_path(exe_id, comm, buf, len);
		if (exe_resolve(e, pid) < 0 || e->exe_id != exe_id) {
			if (e->pid != pid) /* resolve failed: gone */
				e->pid = pid, e->exe_id = 0;
			e->miss_exe_id = exe_id;
			e->miss_at = clock_coarse_ns();
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
		n += exe_cache[i].pid != 0 && exe_cache[i].exe_id != 0;
	return n;
}

int
exe_exec_hold(char *why, size_t len)
{
	int r;

	if (exe_exec_refs > 0) {
		exe_exec_refs++;
		return 0;
	}
	if ((exe_exec = exe_bpf__open_and_load()) == NULL) {
		r = -errno;
		snprintf(
		    why, len, "cannot load its BPF program: %s", strerror(-r));
		return r;
	}
	if ((r = exe_bpf__attach(exe_exec)) < 0) {
		snprintf(why, len,
		    "cannot attach to sched:sched_process_exec: %s",
		    strerror(-r));
		exe_bpf__destroy(exe_exec);
		exe_exec = NULL;
		return r;
	}
	exe_exec_refs = 1;
	return 0;
}

void
exe_exec_release(void)
{
	if (exe_exec_refs == 0 || --exe_exec_refs > 0)
		return;
	exe_bpf__destroy(exe_exec);
	exe_exec = NULL;
}
