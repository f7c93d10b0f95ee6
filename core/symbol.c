/* SPDX-License-Identifier: MIT */
/*
 * Stack frame symbolization (core/symbol.h).  /proc/kallsyms is read once
 * and searched by address; user frames go through a small per-pid cache of
 * /proc/PID/maps and a per-file cache of ELF function symbols (.symtab,
 * else .dynsym).  All names live until the process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol.h"

#define SYM_PROCS 64     /* processes whose maps are cached */
#define SYM_MAPS 256     /* file mappings kept per process */
#define SYM_FILES 128    /* ELF files whose symbols are cached */

struct sym {
	uint64_t addr;
	uint64_t size;       /* 0 = up to the next symbol */
	const char *name;
};

struct sym_table {
	struct sym *v;
	size_t n;
};

struct sym_map {
	uint64_t start, end, pgoff;
	int file;            /* index in sym_files, -1 if not loaded */
	char path[240];
};

struct sym_proc {
	uint32_t pid;
	uint32_t nmaps;
	struct sym_map maps[SYM_MAPS];
};

struct sym_file {
	char path[240];
	struct sym_table t;
	uint64_t bias;       /* file offset -> vaddr: vaddr = off + bias */
	int ok;
};

static struct sym_table sym_ktab;
static int sym_kloaded;
static struct sym_proc *sym_procs[SYM_PROCS];
static struct sym_file sym_files[SYM_FILES];
static unsigned sym_nfiles;

static int
sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
sym_push(struct sym_table *t, size_t *cap, uint64_t addr, uint64_t size,
    const char *name)
{
	struct sym *v;
	char *copy;

	if (t->n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		if ((v = realloc(t->v, *cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		t->v = v;
	}
	if ((copy = strdup(name)) == NULL)
		return -ENOMEM;
	t->v[t->n].addr = addr;
	t->v[t->n].size = size;
	t->v[t->n].name = copy;
	t->n++;
	return 0;
}

/* The symbol holding addr: the last one at or below it (within its size). */
static const char *
sym_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (t->v[lo - 1].size != 0 &&
	    addr >= t->v[lo - 1].addr + t->v[lo - 1].size)
		return NULL;
	return t->v[lo - 1].name;
}

static void
sym_kernel_load(void)
{
	char line[512], name[256], type;
	unsigned long long a;
	size_t cap = 0;
	FILE *f;

	sym_kloaded = 1;
	if ((f = fopen("/proc/kallsyms", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (a == 0) /* addresses hidden (kptr_restrict, no privilege) */
			break;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (sym_push(&sym_ktab, &cap, a, 0, name) < 0)
			break;
	}
	fclose(f);
	qsort(sym_ktab.v, sym_ktab.n, sizeof(struct sym), sym_cmp);
}

const char *
sym_kernel(uint64_t addr)
{
	if (!sym_kloaded)
		sym_kernel_load();
	return sym_ktab.n ? sym_find(&sym_ktab, addr) : NULL;
}

int
sym_kernel_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	size_t i, j;

	if (!sym_kloaded)
		sym_kernel_load();
	for (i = 0; i < sym_ktab.n; i++) {
		if (strcmp(sym_ktab.v[i].name, name) != 0)
			continue;
		/* Aliases share an address: the end is the next higher one. */
		for (j = i + 1; j < sym_ktab.n &&
		    sym_ktab.v[j].addr == sym_ktab.v[i].addr; j++)
			;
		*lo = sym_ktab.v[i].addr;
		*hi = j < sym_ktab.n ? sym_ktab.v[j].addr : *lo + 1;
		return 0;
	}
	return -ENOENT;
}

/* Function symbols of one section into t. */
static void
sym_elf_section(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct sym_table *t,
    size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Sym s;
	const char *name;
	size_t i, n;

	if (d == NULL || sh->sh_entsize == 0)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		if (gelf_getsym(d, (int)i, &s) == NULL ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (name != NULL && *name != '\0' &&
		    sym_push(t, cap, s.st_value, s.st_size, name) < 0)
			return;
	}
}

/* The bias from file offsets to virtual addresses (first executable PT_LOAD). */
static uint64_t
sym_elf_bias(Elf *e)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(e, &n) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			return ph.p_vaddr - ph.p_offset;
	return 0;
}

static void
sym_file_load(struct sym_file *sf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t cap = 0;
	int fd, have_symtab = 0;
	Elf *e;

	if ((fd = open(sf->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL) {
		sf->bias = sym_elf_bias(e);
		while ((scn = elf_nextscn(e, scn)) != NULL)
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
				have_symtab = 1;
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			if (gelf_getshdr(scn, &sh) == NULL)
				continue;
			if (sh.sh_type == SHT_SYMTAB ||
			    (!have_symtab && sh.sh_type == SHT_DYNSYM))
				sym_elf_section(e, scn, &sh, &sf->t, &cap);
		}
		elf_end(e);
		qsort(sf->t.v, sf->t.n, sizeof(struct sym), sym_cmp);
		sf->ok = 1;
	}
	close(fd);
}

static int
sym_file_index(const char *path)
{
	unsigned i;

	for (i = 0; i < sym_nfiles; i++)
		if (strcmp(sym_files[i].path, path) == 0)
			return (int)i;
	if (sym_nfiles == SYM_FILES)
		return -1;
	i = sym_nfiles++;
	snprintf(sym_files[i].path, sizeof(sym_files[i].path), "%s", path);
	sym_file_load(&sym_files[i]);
	return (int)i;
}

static int
sym_proc_read(struct sym_proc *p, uint32_t pid)
{
	char fn[64], line[512], path[240];
	unsigned long long s, e, off;
	char perm[8];
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%u/maps", pid);
	if ((f = fopen(fn, "r")) == NULL)
		return -errno;
	p->pid = pid;
	p->nmaps = 0;
	while (p->nmaps < SYM_MAPS && fgets(line, sizeof(line), f) != NULL) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %239s", &s, &e,
		    perm, &off, path) < 4 || perm[2] != 'x' || path[0] != '/')
			continue;
		p->maps[p->nmaps].start = s;
		p->maps[p->nmaps].end = e;
		p->maps[p->nmaps].pgoff = off;
		p->maps[p->nmaps].file = -1;
		snprintf(p->maps[p->nmaps].path, sizeof(p->maps[0].path), "%s",
		    path);
		p->nmaps++;
	}
	fclose(f);
	return 0;
}

static struct sym_map *
sym_proc_map(struct sym_proc *p, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

const char *
sym_user(uint32_t pid, uint64_t addr)
{
	struct sym_proc **slot = &sym_procs[pid % SYM_PROCS];
	struct sym_map *m = NULL;
	struct sym_file *sf;

	if (pid == 0)
		return NULL;
	if (*slot == NULL && (*slot = calloc(1, sizeof(**slot))) == NULL)
		return NULL;
	if ((*slot)->pid == pid)
		m = sym_proc_map(*slot, addr);
	if (m == NULL) {
		if (sym_proc_read(*slot, pid) < 0) {
			(*slot)->pid = 0;
			return NULL;
		}
		if ((m = sym_proc_map(*slot, addr)) == NULL)
			return NULL;
	}
	if (m->file < 0 && (m->file = sym_file_index(m->path)) < 0)
		return NULL;
	sf = &sym_files[m->file];
	if (!sf->ok)
		return NULL;
	return sym_find(&sf->t, addr - m->start + m->pgoff + sf->bias);
}

void
sym_flush_procs(void)
{
	unsigned i;

	for (i = 0; i < SYM_PROCS; i++)
		if (sym_procs[i] != NULL)
			sym_procs[i]->pid = 0;
}
