/* SPDX-License-Identifier: MIT */
/*
 * Stack frame symbolization (core/kernel/symbol.h).  /proc/kallsyms is read once
 * and searched by address; user frames go through a per-pid cache of the
 * executable mappings in /proc/PID/maps, each with its module id
 * (core/kernel/module.h), and a per-module cache of ELF function symbols
 * (.symtab, else the separate debug file's by build-id, else .dynsym),
 * names pooled per table.  Kernel names live
 * until the process exits; a file's, until sym_files_trim lets the least
 * recently used files go, between epochs.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/bpf_shared.h>

#include "clock.h"
#include "exe.h"
#include "module.h"
#include "symbol.h"

#define SYM_MAPS 256 /* executable mappings kept per process */
#define SYM_FILES 128 /* ELF files whose symbols are cached */
/*
 * Bytes of symbol tables of files kept between epochs: past it (or with
 * more than half of SYM_FILES in use, so that an epoch can load as many
 * new ones) the files not named in the epoch just closed go, least
 * recently used first.  Those named in it are kept whatever their size.
 */
#define SYM_FILES_BYTES (2u << 20)
/* A miss re-reads a process's maps at most this often (bad frames miss). */
#define SYM_REREAD_NS (100 * 1000 * 1000ULL)

/*
 * A symbol as read: its address, size and name (an offset into its
 * table's pool).  Kept only while a table loads.
 */
struct sym_raw {
	uint64_t addr;
	uint32_t size; /* 0 = up to the next symbol */
	uint32_t name;
};

/*
 * A symbol of a loaded table: 8 bytes, its address an offset from the
 * table's base, its name an offset into the pool, or SYM_GAP where a
 * sized symbol ends before the next begins (no symbol holds the bytes
 * up to it).  The kernel has ~65k functions: a pointer and a malloc'd
 * copy of each name came to ~9 MB of heap, 16-byte symbols and the pool
 * to 2.5 MB, 8-byte ones to 2.0.  A file's functions, and the kernel's
 * with its modules', lie within 4 GiB of the lowest.
 */
struct sym {
	uint32_t off;
	uint32_t name;
};

#define SYM_GAP UINT32_MAX

/* Symbols, and their names end to end (fixed once the table is loaded). */
struct sym_table {
	struct sym *v; /* by address, once loaded */
	size_t n;
	uint64_t base; /* address of offset 0 */
	struct sym_raw *raw; /* while loading: nraw of cap */
	size_t nraw, cap;
	char *pool;
	size_t pool_len, pool_cap;
};

/* User addresses end below it on x86-64 (4-level page tables: 2^47). */
#define SYM_USER_END (UINT64_C(1) << 47)

/* An executable mapping; maps are kept in address order, as listed. */
struct sym_map {
	uint64_t start, end, pgoff;
	int32_t module; /* module id (core/kernel/module.h), -1 if not a file */
	int32_t file; /* index in sym_files; -1 not yet, -2 none */
};

struct sym_proc {
	uint32_t pid; /* 0 = free */
	uint32_t exe_id; /* exe id the maps were read for, 0 = unknown */
	uint64_t read_ns; /* monotonic time of the last read */
	uint32_t nmaps;
	int whole; /* maps are all of /proc/PID/maps as read then */
	struct sym_map maps[SYM_MAPS];
};

struct sym_file {
	uint32_t module; /* module id whose symbols these are */
	int live; /* 0: a free slot */
	uint64_t used; /* sym_epoch when a name was last handed out */
	struct sym_table t;
	uint64_t bias; /* file offset -> vaddr: vaddr = off + bias */
	uint64_t text_off; /* file offset of the first executable PT_LOAD */
	int ok;
};

static struct sym_table sym_ktab;
static int sym_kloaded;
static struct sym_proc *sym_procs[SYM_PROCS];
static struct sym_file sym_files[SYM_FILES];
static unsigned sym_nfiles; /* slots ever used */
static uint64_t sym_epoch = 1; /* sym_files_trim calls, plus 1 */

static int
sym_cmp(const void *a, const void *b)
{
	const struct sym_raw *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
sym_push(struct sym_table *t, uint64_t addr, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1, pc;
	struct sym_raw *v;
	char *pool;

	if (t->nraw == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		if ((v = realloc(t->raw, t->cap * sizeof(*v))) == NULL)
			return -ENOMEM;
		t->raw = v;
	}
	if (t->pool_len + len > t->pool_cap || t->pool_len > UINT32_MAX - 1) {
		pc = t->pool_cap ? t->pool_cap * 2 : 16384;
		while (pc < t->pool_len + len)
			pc *= 2;
		if (t->pool_len > UINT32_MAX - 1 ||
		    (pool = realloc(t->pool, pc)) == NULL)
			return -ENOMEM;
		t->pool = pool;
		t->pool_cap = pc;
	}
	memcpy(t->pool + t->pool_len, name, len);
	t->raw[t->nraw].addr = addr;
	t->raw[t->nraw].size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	t->raw[t->nraw].name = (uint32_t)t->pool_len;
	t->pool_len += len;
	t->nraw++;
	return 0;
}

/* Set t->v[n] to name at addr (within 4 GiB of t's base); n + 1. */
static size_t
sym_put(struct sym_table *t, size_t n, uint64_t addr, uint32_t name)
{
	t->v[n].off = (uint32_t)(addr - t->base);
	t->v[n].name = name;
	return n + 1;
}

/*
 * A loaded table's symbols made 8-byte ones by address (a gap after
 * each sized one that ends before the next), the read ones freed, the
 * pool cut to what it holds.  Names are handed out from here on: the
 * pool does not move again.  Symbols 4 GiB or more past the lowest are
 * left out (none are: see struct sym).
 */
static void
sym_seal(struct sym_table *t)
{
	const struct sym_raw *r = t->raw;
	struct sym *v;
	uint64_t end;
	size_t i, n = 0;
	char *pool;

	if (t->nraw > 1)
		qsort(t->raw, t->nraw, sizeof(*r), sym_cmp);
	if (t->nraw > 0 &&
	    (t->v = malloc(2 * t->nraw * sizeof(*t->v))) != NULL) {
		t->base = r[0].addr;
		for (i = 0; i < t->nraw && r[i].addr - t->base <= UINT32_MAX;
		     i++) {
			n = sym_put(t, n, r[i].addr, r[i].name);
			/* Of symbols at one address, the last found is named. */
			if (r[i].size == 0 ||
			    (i + 1 < t->nraw && r[i + 1].addr == r[i].addr))
				continue;
			end = r[i].addr + r[i].size;
			if ((i + 1 == t->nraw || end < r[i + 1].addr) &&
			    end - t->base <= UINT32_MAX)
				n = sym_put(t, n, end, SYM_GAP);
		}
		t->n = n;
		if ((v = realloc(t->v, n * sizeof(*v))) != NULL)
			t->v = v;
	}
	free(t->raw);
	t->raw = NULL;
	t->nraw = t->cap = 0;
	if (t->pool_len > 0 && (pool = realloc(t->pool, t->pool_len)) != NULL) {
		t->pool = pool;
		t->pool_cap = t->pool_len;
	}
}

/* The symbol holding addr: the last one at or below it, if not a gap. */
static const char *
sym_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	uint64_t off;

	if (addr < t->base)
		return NULL;
	off = addr - t->base;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t->v[lo - 1].name == SYM_GAP)
		return NULL;
	return t->pool + t->v[lo - 1].name;
}

/*
 * The kernel's functions from /proc/kallsyms.  A kernel built with
 * function padding lists each function's padding (the bytes before it,
 * where call-depth thunks go) as __pfx_NAME: nearly half of the symbols.
 * The padding is kept as the start of the function it pads, under the
 * function's name, which names any address in it the same; the __pfx_
 * entries and their names (~2.5 MB) are not kept.
 */
static void
sym_kernel_load(void)
{
	char line[512], name[256], pfx[256] = "", type;
	unsigned long long a, pfx_at = 0;
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
		if (strncmp(name, "__pfx_", 6) == 0) {
			snprintf(pfx, sizeof(pfx), "%s", name + 6);
			pfx_at = a;
			continue;
		}
		if (pfx_at != 0 && pfx_at < a && strcmp(pfx, name) == 0)
			a = pfx_at;
		pfx_at = 0;
		if (sym_push(&sym_ktab, a, 0, name) < 0)
			break;
	}
	fclose(f);
	sym_seal(&sym_ktab);
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
		if (sym_ktab.v[i].name == SYM_GAP ||
		    strcmp(sym_ktab.pool + sym_ktab.v[i].name, name) != 0)
			continue;
		/* Aliases share an address: the end is the next higher one. */
		for (j = i + 1;
		     j < sym_ktab.n && sym_ktab.v[j].off == sym_ktab.v[i].off;
		     j++)
			;
		*lo = sym_ktab.base + sym_ktab.v[i].off;
		*hi = j < sym_ktab.n ? sym_ktab.base + sym_ktab.v[j].off
				     : *lo + 1;
		return 0;
	}
	return -ENOENT;
}

/* Function symbols of one section into t. */
static void
sym_elf_section(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct sym_table *t)
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
		    sym_push(t, s.st_value, s.st_size, name) < 0)
			return;
	}
}

/*
 * The bias from file offsets to virtual addresses, and the file offset,
 * of the first executable PT_LOAD (0 and 0 without one).
 */
static uint64_t
sym_elf_bias(Elf *e, uint64_t *text_off)
{
	GElf_Phdr ph;
	size_t i, n;

	*text_off = 0;
	if (elf_getphdrnum(e, &n) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*text_off = ph.p_offset;
			return ph.p_vaddr - ph.p_offset;
		}
	return 0;
}

/* Whether ELF e has a .symtab (a file not stripped of it). */
static int
sym_elf_has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return 1;
	return 0;
}

/* Function symbols of e's sections of type (SHT_SYMTAB, SHT_DYNSYM). */
static void
sym_elf_symbols(Elf *e, GElf_Word type, struct sym_table *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			sym_elf_section(e, scn, &sh, t);
}

/*
 * The .symtab of the separate debug file of a module with this build-id
 * into t: DIR/.build-id/XX/REST.debug for build-id XXREST, where
 * Debian's -dbg and -dbgsym packages (and other distributions') install
 * them, DIR /usr/lib/debug or $VITALS_DEBUG_DIR.  Its addresses are the
 * stripped file's.  Returns 1 if it was found and had one.
 */
static int
sym_debug_load(const char *build_id, struct sym_table *t)
{
	const char *dir = getenv("VITALS_DEBUG_DIR");
	char p[PATH_MAX];
	int fd, ok = 0;
	Elf *e;

	if (build_id == NULL || strlen(build_id) < 4)
		return 0;
	if (dir == NULL || *dir == '\0')
		dir = "/usr/lib/debug";
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", dir, build_id,
	    build_id + 2);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL) {
		if ((ok = sym_elf_has_symtab(e)))
			sym_elf_symbols(e, SHT_SYMTAB, t);
		elf_end(e);
	}
	close(fd);
	return ok;
}

/*
 * A module's function symbols: its .symtab; stripped of it, its debug
 * file's (sym_debug_load); else its .dynsym, the exported ones alone.
 */
static void
sym_file_load(struct sym_file *sf, uint32_t pid)
{
	const struct vitals_module *m = module_of(sf->module);
	int fd;
	Elf *e;

	if ((fd = module_open(sf->module, pid)) < 0)
		return;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL) {
		sf->bias = sym_elf_bias(e, &sf->text_off);
		if (sym_elf_has_symtab(e))
			sym_elf_symbols(e, SHT_SYMTAB, &sf->t);
		else if (m == NULL || !sym_debug_load(m->build_id, &sf->t))
			sym_elf_symbols(e, SHT_DYNSYM, &sf->t);
		elf_end(e);
		sym_seal(&sf->t);
		sf->ok = 1;
	}
	close(fd);
}

/* Bytes of a loaded table. */
static size_t
sym_table_bytes(const struct sym_table *t)
{
	return t->n * sizeof(*t->v) + t->pool_cap;
}

/* The symbols of a module, loaded on first use; -1 when the cache is full. */
static int
sym_file_index(uint32_t module, uint32_t pid)
{
	unsigned i, free_slot = SYM_FILES;

	for (i = 0; i < sym_nfiles; i++) {
		if (sym_files[i].live && sym_files[i].module == module)
			return (int)i;
		if (!sym_files[i].live && free_slot == SYM_FILES)
			free_slot = i;
	}
	if (free_slot == SYM_FILES) {
		if (sym_nfiles == SYM_FILES)
			return -1;
		free_slot = sym_nfiles++;
	}
	i = free_slot;
	memset(&sym_files[i], 0, sizeof(sym_files[i]));
	sym_files[i].module = module;
	sym_files[i].live = 1;
	sym_files[i].used = sym_epoch;
	sym_file_load(&sym_files[i], pid);
	return (int)i;
}

/* Let file slot f go: its table freed, the maps naming it told. */
static void
sym_file_drop(unsigned f)
{
	unsigned i;
	uint32_t j;

	for (i = 0; i < SYM_PROCS; i++)
		for (j = 0; sym_procs[i] != NULL && j < sym_procs[i]->nmaps;
		     j++)
			if (sym_procs[i]->maps[j].file == (int32_t)f)
				sym_procs[i]->maps[j].file = -1;
	free(sym_files[f].t.v);
	free(sym_files[f].t.pool);
	memset(&sym_files[f], 0, sizeof(sym_files[f]));
}

size_t
sym_files_trim(void)
{
	size_t bytes = 0;
	unsigned i, n = 0, lru;

	for (i = 0; i < sym_nfiles; i++)
		if (sym_files[i].live) {
			bytes += sym_table_bytes(&sym_files[i].t);
			n++;
		}
	while (bytes > SYM_FILES_BYTES || n > SYM_FILES / 2) {
		lru = SYM_FILES;
		for (i = 0; i < sym_nfiles; i++)
			if (sym_files[i].live &&
			    sym_files[i].used < sym_epoch &&
			    (lru == SYM_FILES ||
				sym_files[i].used < sym_files[lru].used))
				lru = i;
		if (lru == SYM_FILES)
			break;
		bytes -= sym_table_bytes(&sym_files[lru].t);
		n--;
		sym_file_drop(lru);
	}
	sym_epoch++;
	return bytes;
}

/*
 * One line of /proc/PID/maps into m if it is an executable mapping; file
 * mappings get their module id (registered if new).
 */
static int
sym_map_parse(char *line, uint32_t pid, struct sym_map *m)
{
	unsigned long long s, e, off, ino;
	unsigned int maj, min;
	char perm[8], *path, *nl;
	uint32_t id;
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &s, &e, perm, &off,
		&maj, &min, &ino, &n) < 7 ||
	    n == 0 || perm[2] != 'x')
		return 0;
	for (path = line + n; *path == ' '; path++)
		;
	if ((nl = strchr(path, '\n')) != NULL)
		*nl = '\0';
	m->start = s;
	m->end = e;
	m->pgoff = off;
	m->file = -1;
	m->module = -1;
	if (path[0] == '/' &&
	    module_get(path, maj << 20 | min, ino, pid, &id) == 0)
		m->module = (int32_t)id;
	return 1;
}

static int
sym_proc_read(struct sym_proc *p, uint32_t pid, uint32_t exe_id)
{
	char fn[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	/* The pid runs another program now: these are not its maps. */
	if (exe_id != 0 && exe_id_of(pid) != exe_id)
		return -ESRCH;
	snprintf(fn, sizeof(fn), "/proc/%u/maps", pid);
	if ((f = fopen(fn, "r")) == NULL)
		return -errno;
	/* None (a zombie's): what is cached of the process stays. */
	if (getline(&line, &cap, f) <= 0) {
		free(line);
		fclose(f);
		return -ESRCH;
	}
	p->pid = pid;
	p->exe_id = exe_id;
	p->read_ns = clock_coarse_ns();
	p->nmaps = 0;
	do
		p->nmaps += sym_map_parse(line, pid, &p->maps[p->nmaps]);
	while (p->nmaps < SYM_MAPS && getline(&line, &cap, f) > 0);
	p->whole = p->nmaps < SYM_MAPS;
	free(line);
	fclose(f);
	/* It exec'd while they were read: they may be either program's. */
	if (exe_id != 0 && exe_id_of(pid) != exe_id) {
		p->pid = 0;
		return -ESRCH;
	}
	return 0;
}

/* The mapping holding addr (maps are in address order), or NULL. */
static struct sym_map *
sym_proc_map(struct sym_proc *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nmaps, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/*
 * The executable mapping of pid holding addr, from the cache, which is
 * read again when the exe id differs (a new program in that pid) or, at
 * most every SYM_REREAD_NS, on a miss (a library loaded since).
 */
static struct sym_map *
sym_lookup(uint32_t pid, uint32_t exe_id, uint64_t addr)
{
	struct sym_proc **slot = &sym_procs[pid % SYM_PROCS], *p;
	struct sym_map *m;

	if (pid == 0)
		return NULL;
	if (*slot == NULL && (*slot = calloc(1, sizeof(**slot))) == NULL)
		return NULL;
	p = *slot;
	if (p->pid == pid && (exe_id == 0 || exe_id == p->exe_id)) {
		if ((m = sym_proc_map(p, addr)) != NULL)
			return m;
		if (clock_coarse_ns() - p->read_ns < SYM_REREAD_NS)
			return NULL;
	}
	if (sym_proc_read(p, pid, exe_id) < 0) {
		/* Gone: what is cached of it still holds for its samples. */
		if (p->pid != pid || (exe_id != 0 && exe_id != p->exe_id))
			p->pid = 0;
		else
			p->read_ns =
			    clock_coarse_ns(); /* tried: not again at once */
		return NULL;
	}
	return sym_proc_map(p, addr);
}

int
sym_proc_learn(uint32_t pid, uint32_t exe_id, uint64_t start, uint64_t end,
    uint64_t pgoff, uint32_t module)
{
	struct sym_proc *p = sym_procs[pid % SYM_PROCS];
	uint32_t i;

	if (p == NULL || p->pid != pid || p->exe_id != exe_id || pid == 0 ||
	    end <= start)
		return -ENOENT;
	/* Maps are in address order: the first one ending past start. */
	for (i = 0; i < p->nmaps && p->maps[i].end <= start; i++)
		;
	if (i < p->nmaps && p->maps[i].start < end)
		return 0; /* known (or overlapping: left as read) */
	if (p->nmaps == SYM_MAPS)
		return -ENOSPC;
	memmove(
	    &p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(p->maps[0]));
	p->maps[i].start = start;
	p->maps[i].end = end;
	p->maps[i].pgoff = pgoff;
	p->maps[i].module = (int32_t)module;
	p->maps[i].file = -1;
	p->nmaps++;
	return 0;
}

int
sym_proc_text(uint32_t pid, uint32_t exe_id, const char *path,
    uint64_t code_start, uint64_t code_end)
{
	struct sym_proc **slot = &sym_procs[pid % SYM_PROCS], *p;
	struct sym_map *m;
	struct stat st;
	uint32_t id;
	int f;

	if (pid == 0 || exe_id == 0 || code_end <= code_start)
		return -EINVAL;
	p = *slot;
	if (p != NULL && p->pid == pid && p->exe_id == exe_id)
		return 0;
	/* The file at path must be the one the process ran (its inode). */
	if (stat(path, &st) < 0 ||
	    vitals_bpf_exe_id((uint64_t)st.st_ino) != exe_id ||
	    module_get(path, 0, (uint64_t)st.st_ino, 0, &id) < 0 ||
	    (f = sym_file_index(id, 0)) < 0 || !sym_files[f].ok)
		return -ENOENT;
	if (p == NULL && (p = *slot = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	m = &p->maps[0];
	m->start = code_start;
	m->end = code_end;
	m->pgoff = sym_files[f].text_off;
	m->module = (int32_t)id;
	m->file = f;
	p->nmaps = 1;
	p->whole = 0;
	p->exe_id = exe_id;
	p->read_ns = 0; /* not read: the first miss reads the maps */
	p->pid = pid;
	return 0;
}

const char *
sym_user(uint32_t pid, uint64_t addr)
{
	struct sym_map *m = sym_lookup(pid, 0, addr);
	struct sym_file *sf;

	if (m == NULL || m->module < 0)
		return NULL;
	if (m->file == -1 &&
	    (m->file = sym_file_index((uint32_t)m->module, pid)) < 0)
		m->file = -2;
	if (m->file < 0)
		return NULL;
	sf = &sym_files[m->file];
	if (!sf->ok)
		return NULL;
	sf->used = sym_epoch;
	return sym_find(&sf->t, addr - m->start + m->pgoff + sf->bias);
}

const char *
sym_module_name(uint32_t module, uint64_t off, uint32_t pid)
{
	int f = sym_file_index(module, pid);

	if (f < 0 || !sym_files[f].ok)
		return NULL;
	sym_files[f].used = sym_epoch;
	return sym_find(&sym_files[f].t, off + sym_files[f].bias);
}

int
sym_user_loc(uint32_t pid, uint32_t exe_id, uint64_t addr, uint32_t *module,
    uint64_t *off)
{
	struct sym_map *m = sym_lookup(pid, exe_id, addr);
	uint64_t o;

	if (m == NULL || m->module < 0)
		return -ENOENT;
	o = addr - m->start + m->pgoff;
	if (o > VITALS_UFRAME_OFF_MASK)
		return -ERANGE;
	*module = (uint32_t)m->module;
	*off = o;
	return 0;
}

uint64_t
sym_user_frame(uint32_t pid, uint32_t exe_id, uint64_t addr, uint64_t since_ns)
{
	struct sym_proc *p;
	uint32_t module;
	uint64_t off;

	if (sym_user_loc(pid, exe_id, addr, &module, &off) == 0)
		return VITALS_UFRAME(module, off);
	/* No user address: kept raw, it would read as a module frame. */
	if (addr >= SYM_USER_END)
		return 0;
	/* In no code of the whole maps read since: no return address. */
	p = sym_procs[pid % SYM_PROCS];
	if (since_ns != 0 && p != NULL && p->pid == pid && p->whole &&
	    (exe_id == 0 || exe_id == p->exe_id) && p->read_ns >= since_ns &&
	    sym_proc_map(p, addr) == NULL)
		return 0;
	return addr;
}

uint32_t
sym_drop_dead(void)
{
	unsigned i;
	uint32_t n = 0;

	for (i = 0; i < SYM_PROCS; i++) {
		if (sym_procs[i] == NULL)
			continue;
		if (sym_procs[i]->pid != 0 &&
		    (kill((pid_t)sym_procs[i]->pid, 0) == 0 || errno != ESRCH))
			continue;
		n += sym_procs[i]->pid != 0;
		free(sym_procs[i]);
		sym_procs[i] = NULL;
	}
	return n;
}

uint32_t
sym_procs_cached(void)
{
	unsigned i;
	uint32_t n = 0;

	for (i = 0; i < SYM_PROCS; i++)
		n += sym_procs[i] != NULL && sym_procs[i]->pid != 0;
	return n;
}

void
sym_flush_procs(void)
{
	unsigned i;

	for (i = 0; i < SYM_PROCS; i++) {
		free(sym_procs[i]);
		sym_procs[i] = NULL;
	}
}
