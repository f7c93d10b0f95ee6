/* SPDX-License-Identifier: MIT */
/*
 * The module registry (core/kernel/module.h): modules by id in a growing array,
 * found by path through an open-addressing table of the newest id per
 * path (older modules with the same path, e.g. a binary rebuilt in place,
 * are chained behind it), and by file through a second table keyed on
 * (device, inode); build-ids read from ELF notes via libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "module.h"

struct module {
	struct vitals_module m; /* id, and path and build_id stored below */
	uint64_t ino; /* inode it was registered with, 0 = unknown */
	uint32_t dev; /* its device (kernel encoding), 0 = unknown */
	int32_t older; /* previous module with the same path, or -1 */
};

static struct module **module_v; /* by id */
static uint32_t module_n, module_cap;
static uint32_t *module_heads; /* newest id + 1 per path; 0 = empty */
static uint32_t module_nheads, module_hcap; /* hcap: 0 or a power of two */
static uint32_t *module_files; /* id + 1 per (dev, ino); 0 = empty */
static uint32_t module_nfiles, module_fcap; /* fcap: 0 or a power of two */

/* ---- build-ids ---- */

static int
module_hex(const unsigned char *b, size_t n, char *hex, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (n == 0 || n > MODULE_BUILD_ID_MAX)
		return -ENOENT;
	if (len < 2 * n + 1)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[b[i] >> 4];
		hex[2 * i + 1] = digits[b[i] & 15];
	}
	hex[2 * n] = '\0';
	return 0;
}

/* The build-id among the notes of d, or -ENOENT. */
static int
module_note_scan(Elf_Data *d, char *hex, size_t len)
{
	const char *buf = d->d_buf;
	size_t off = 0, next, name, desc;
	GElf_Nhdr nh;

	while (buf != NULL &&
	    (next = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name, "GNU", 4) == 0)
			return module_hex((const unsigned char *)buf + desc,
			    nh.n_descsz, hex, len);
		off = next;
	}
	return -ENOENT;
}

static int
module_notes_scn(Elf *e, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;
	int r;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		if ((r = module_note_scan(d, hex, len)) != -ENOENT)
			return r;
	}
	return -ENOENT;
}

/* Through the program headers, for files stripped of section headers. */
static int
module_notes_phdr(Elf *e, char *hex, size_t len)
{
	GElf_Phdr ph;
	Elf_Data *d;
	size_t i, n;
	int r;

	if (elf_getphdrnum(e, &n) != 0)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(e, (int)i, &ph) == NULL ||
		    ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
		    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d != NULL && (r = module_note_scan(d, hex, len)) != -ENOENT)
			return r;
	}
	return -ENOENT;
}

int
module_build_id_fd(int fd, char *hex, size_t len)
{
	Elf *e;
	int r;

	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL)
		return -EINVAL;
	if (elf_kind(e) != ELF_K_ELF)
		r = -EINVAL;
	else if ((r = module_notes_scn(e, hex, len)) == -ENOENT)
		r = module_notes_phdr(e, hex, len);
	elf_end(e);
	return r;
}

int
module_build_id(const char *path, char *hex, size_t len)
{
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	r = module_build_id_fd(fd, hex, len);
	close(fd);
	return r;
}

/* ---- the registry ---- */

/* FNV-1a of the path. */
static uint32_t
module_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *path != '\0'; path++)
		h = (h ^ (unsigned char)*path) * 0x100000001b3ULL;
	return (uint32_t)(h ^ (h >> 32));
}

/* The head slot of path: its newest id + 1, or the empty slot for it. */
static uint32_t *
module_head(const char *path)
{
	uint32_t mask = module_hcap - 1, i = module_hash(path) & mask;

	while (module_heads[i] != 0 &&
	    strcmp(module_v[module_heads[i] - 1]->m.path, path) != 0)
		i = (i + 1) & mask;
	return &module_heads[i];
}

/* Room for one more path in the head table (kept at most half full). */
static int
module_heads_reserve(void)
{
	uint32_t *old = module_heads, oldcap = module_hcap, i;

	if ((module_nheads + 1) * 2 <= module_hcap)
		return 0;
	module_hcap = oldcap ? oldcap * 2 : 256;
	if ((module_heads = calloc(module_hcap, sizeof(*old))) == NULL) {
		module_heads = old;
		module_hcap = oldcap;
		return -ENOMEM;
	}
	for (i = 0; i < oldcap; i++)
		if (old[i] != 0)
			*module_head(module_v[old[i] - 1]->m.path) = old[i];
	free(old);
	return 0;
}

/* ---- by file ---- */

/* The slot of (dev, ino) in module_files: its id + 1, or the empty slot. */
static uint32_t *
module_file_slot(uint32_t dev, uint64_t ino)
{
	uint32_t mask = module_fcap - 1, i;
	uint64_t h = (ino ^ (uint64_t)dev << 40) * 0x9e3779b97f4a7c15ULL;
	const struct module *m;

	for (i = (uint32_t)(h >> 32) & mask; module_files[i] != 0;
	     i = (i + 1) & mask) {
		m = module_v[module_files[i] - 1];
		if (m->dev == dev && m->ino == ino)
			break;
	}
	return &module_files[i];
}

/* Index module m by its file, if known (the newest module of a file wins). */
static void
module_file_index(const struct module *m)
{
	uint32_t *old = module_files, oldcap = module_fcap, i, *slot;

	if (m->dev == 0 || m->ino == 0)
		return;
	if ((module_nfiles + 1) * 2 > module_fcap) {
		module_fcap = oldcap ? oldcap * 2 : 256;
		if ((module_files = calloc(module_fcap, sizeof(*old))) ==
		    NULL) {
			module_files = old;
			module_fcap = oldcap;
			return; /* found through path or maps instead */
		}
		for (i = 0; i < oldcap; i++)
			if (old[i] != 0)
				*module_file_slot(module_v[old[i] - 1]->dev,
				    module_v[old[i] - 1]->ino) = old[i];
		free(old);
	}
	slot = module_file_slot(m->dev, m->ino);
	module_nfiles += *slot == 0;
	*slot = m->m.id + 1;
}

uint32_t
module_dev_encode(uint64_t st_dev)
{
	return major(st_dev) << 20 | minor(st_dev);
}

int
module_find_file(uint32_t dev, uint64_t ino, uint32_t *id)
{
	uint32_t *slot;

	if (module_fcap == 0 || dev == 0 || ino == 0)
		return -ENOENT;
	if (*(slot = module_file_slot(dev, ino)) == 0)
		return -ENOENT;
	*id = *slot - 1;
	return 0;
}

/* ---- files known only by (dev, ino) ---- */

/* Directories searched: those of the modules registered and our own. */
#define MODULE_DIRS 64
/* A file searched for in vain is searched for again after this long. */
#define MODULE_MISS_NS (60 * 1000000000ULL)
#define MODULE_MISSES 64

static char *module_dirs[MODULE_DIRS];
static uint32_t module_ndirs;
static int module_dirs_seeded;
static struct module_miss {
	uint32_t dev;
	uint64_t ino;
	uint64_t ns;
} module_misses[MODULE_MISSES];
static uint32_t module_nmisses;

/* Remember the directory of path (absolute) for module_search_file. */
static void
module_dir_note(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n;
	uint32_t i;

	if (path[0] != '/' || slash == NULL || module_ndirs == MODULE_DIRS)
		return;
	n = slash == path ? 1 : (size_t)(slash - path);
	for (i = 0; i < module_ndirs; i++)
		if (strlen(module_dirs[i]) == n &&
		    memcmp(module_dirs[i], path, n) == 0)
			return;
	if ((module_dirs[module_ndirs] = strndup(path, n)) != NULL)
		module_ndirs++;
}

/* The directories of the files mapped into this process (libc's among them). */
static void
module_dirs_seed(void)
{
	char *line = NULL, *path;
	size_t cap = 0;
	FILE *f;

	module_dirs_seeded = 1;
	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		return;
	while (getline(&line, &cap, f) > 0)
		if ((path = strchr(line, '/')) != NULL) {
			path[strcspn(path, "\n")] = '\0';
			module_dir_note(path);
		}
	free(line);
	fclose(f);
}

/* The recent vain search for (dev, ino), or NULL. */
static struct module_miss *
module_missed(uint32_t dev, uint64_t ino)
{
	uint32_t i;

	for (i = 0; i < module_nmisses && i < MODULE_MISSES; i++)
		if (module_misses[i].dev == dev && module_misses[i].ino == ino)
			return &module_misses[i];
	return NULL;
}

/* Directory dir's regular file that is (dev, ino), registered; -ENOENT. */
static int
module_search_dir(const char *dir, uint32_t dev, uint64_t ino, uint32_t *id)
{
	char path[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int r = -ENOENT;

	if ((dp = opendir(dir)) == NULL)
		return -ENOENT;
	while ((d = readdir(dp)) != NULL) {
		if ((uint64_t)d->d_ino != ino ||
		    (d->d_type != DT_REG && d->d_type != DT_UNKNOWN))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s",
			strcmp(dir, "/") == 0 ? "" : dir,
			d->d_name) >= (int)sizeof(path))
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_ino == ino &&
		    module_dev_encode(st.st_dev) == dev) {
			r = module_get(path, dev, ino, 0, id);
			break;
		}
	}
	closedir(dp);
	return r;
}

int
module_search_file(uint32_t dev, uint64_t ino, uint32_t *id)
{
	struct module_miss *miss;
	uint64_t now;
	uint32_t i;

	if (module_find_file(dev, ino, id) == 0)
		return 0;
	if (dev == 0 || ino == 0)
		return -ENOENT;
	now = clock_coarse_ns();
	if ((miss = module_missed(dev, ino)) != NULL &&
	    now - miss->ns < MODULE_MISS_NS)
		return -ENOENT;
	if (!module_dirs_seeded)
		module_dirs_seed();
	/* module_get() may note a directory: the count is read each time. */
	for (i = 0; i < module_ndirs; i++)
		if (module_search_dir(module_dirs[i], dev, ino, id) == 0)
			return 0;
	if (miss == NULL)
		miss = &module_misses[module_nmisses++ % MODULE_MISSES];
	miss->dev = dev;
	miss->ino = ino;
	miss->ns = now;
	return -ENOENT;
}

/*
 * Open path as process pid sees it (its root), else as we do, keeping
 * only a regular file (never a device that happens to be mapped) that is
 * inode ino (any when ino is 0); its device (kernel encoding) into *dev.
 */
static int
module_open_file(const char *path, uint64_t ino, uint32_t pid, uint32_t *dev)
{
	char p[PATH_MAX + 32];
	struct stat st;
	int fd, i;

	for (i = pid != 0 ? 0 : 1; i < 2; i++) {
		if (i == 0)
			snprintf(p, sizeof(p), "/proc/%u/root%s", pid, path);
		fd = open(i == 0 ? p : path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    (ino == 0 || st.st_ino == ino)) {
			*dev = module_dev_encode(st.st_dev);
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

static int
module_add(
    const char *path, uint32_t dev, uint64_t ino, uint32_t pid, uint32_t *id)
{
	char hex[MODULE_BUILD_ID_HEX] = "";
	size_t np = strlen(path) + 1, nh;
	struct module *m, **v;
	uint32_t *head, fdev = 0;
	int fd;

	if (module_n == VITALS_UFRAME_MAX_MODULES)
		return -ENOSPC;
	if (module_heads_reserve() < 0)
		return -ENOMEM;
	if (module_n == module_cap) {
		v = realloc(
		    module_v, (module_cap ? module_cap * 2 : 256) * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		module_v = v;
		module_cap = module_cap ? module_cap * 2 : 256;
	}
	if ((fd = module_open_file(path, ino, pid, &fdev)) >= 0) {
		if (module_build_id_fd(fd, hex, sizeof(hex)) < 0)
			hex[0] = '\0';
		close(fd);
		/* The maps line's device is the kernel's own: it wins. */
		if (dev == 0)
			dev = fdev;
	}
	nh = strlen(hex) + 1;
	if ((m = malloc(sizeof(*m) + np + nh)) == NULL)
		return -ENOMEM;
	m->m.id = module_n;
	m->m.path = memcpy((char *)(m + 1), path, np);
	m->m.build_id = memcpy((char *)(m + 1) + np, hex, nh);
	m->ino = ino;
	m->dev = dev;
	head = module_head(path);
	m->older = *head != 0 ? (int32_t)(*head - 1) : -1;
	module_nheads += *head == 0;
	*head = module_n + 1;
	module_v[module_n++] = m;
	module_file_index(m);
	module_dir_note(path);
	*id = m->m.id;
	return 0;
}

int
module_get(
    const char *path, uint32_t dev, uint64_t ino, uint32_t pid, uint32_t *id)
{
	struct module *m;
	int32_t i;

	if (module_hcap > 0)
		for (i = (int32_t)*module_head(path) - 1; i >= 0;
		     i = module_v[i]->older) {
			m = module_v[i];
			if (m->ino != ino)
				continue;
			/* Registered from stat (or not opened): the kernel's device. */
			if (dev != 0 && m->dev != dev) {
				m->dev = dev;
				module_file_index(m);
			}
			*id = (uint32_t)i;
			return 0;
		}
	return module_add(path, dev, ino, pid, id);
}

int
module_by_path(const char *path, uint32_t *id)
{
	struct stat st;
	uint32_t h;

	if (module_hcap > 0 && (h = *module_head(path)) != 0) {
		*id = h - 1;
		return 0;
	}
	return module_add(path, 0, stat(path, &st) == 0 ? st.st_ino : 0, 0, id);
}

const struct vitals_module *
module_of(uint32_t id)
{
	return id < module_n ? &module_v[id]->m : NULL;
}

int
module_open(uint32_t id, uint32_t pid)
{
	uint32_t dev;

	if (id >= module_n)
		return -ENOENT;
	return module_open_file(
	    module_v[id]->m.path, module_v[id]->ino, pid, &dev);
}

uint32_t
module_count(void)
{
	return module_n;
}
