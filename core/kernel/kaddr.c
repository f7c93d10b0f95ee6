/* SPDX-License-Identifier: MIT */
/*
 * Kernel addresses as they may be stored (core/kernel/kaddr.h): the
 * host's key, kept in a root-only file of the data dir, and the kernel's
 * layout (its text and its modules', from kallsyms and /proc/modules),
 * by which a text address becomes an offset in its image.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/hash.h>
#include <vitals/vitals.h>

#include "clock.h"
#include "kaddr.h"
#include "module.h"
#include "safefile.h"

#define KADDR_MODS 512 /* kernel modules placed */
#define KADDR_NAME 56 /* longest module name kept, with its NUL */
/* A module's text goes this far past its last symbol, at most. */
#define KADDR_SLACK (64 * 1024)
/* An address in no image reloads the layout at most this often. */
#define KADDR_RELOAD_NS (10 * 1000 * 1000 * 1000ULL)
/* Longest line of the modules file read. */
#define KADDR_LINE 512

/* A kernel module's text: [lo, hi), offsets from base. */
struct kaddr_mod {
	uint64_t base, lo, hi;
	int32_t id; /* its module registry id, -1 until a frame needs it */
	char name[KADDR_NAME];
};

static uint64_t kaddr_k[2];
static int kaddr_keyed; /* kaddr_k is set */
static uint64_t kaddr_lo, kaddr_hi; /* the kernel's text */
static int32_t kaddr_kid = -1; /* KADDR_KERNEL's registry id */
static struct kaddr_mod kaddr_mods[KADDR_MODS];
static uint32_t kaddr_nmods;
static int kaddr_loaded;
static uint64_t kaddr_load_ns;
static uint64_t kaddr_reload_ns = KADDR_RELOAD_NS;
static uint64_t kaddr_mods_sum; /* kaddr_modules_sum() at the last load */
static const char *kaddr_kallsyms_path = "/proc/kallsyms";
static const char *kaddr_modules_path = "/proc/modules";

void
kaddr_set_key(uint64_t k0, uint64_t k1)
{
	kaddr_k[0] = k0;
	kaddr_k[1] = k1;
	kaddr_keyed = 1;
}

void
kaddr_key(uint64_t key[2])
{
	uint64_t k[2] = { 0, 0 };

	if (!kaddr_keyed) {
		/* No key file: this process's own, which nobody may read. */
		if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
			k[0] = clock_coarse_ns() ^ (uint64_t)getpid() << 32;
		kaddr_set_key(k[0], k[1]);
	}
	key[0] = kaddr_k[0];
	key[1] = kaddr_k[1];
}

/* The key in file fd, if it is one only its owner may read. */
static int
kaddr_key_read(int fd)
{
	uint64_t k[2];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0 || st.st_size != (off_t)sizeof(k))
		return -EPERM;
	if (read(fd, k, sizeof(k)) != (ssize_t)sizeof(k))
		return -EIO;
	kaddr_set_key(k[0], k[1]);
	return 0;
}

/* A new key, written to DIR/host.key with mode 0600. */
static int
kaddr_key_make(int dfd)
{
	uint64_t k[2];
	ssize_t w;
	int fd, r = 0;

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
		return -EIO;
	unlinkat(dfd, KADDR_KEY_FILE, 0);
	fd = openat(dfd, KADDR_KEY_FILE,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* The mode whatever the umask; and no group a set-gid dir gave. */
	if (fchmod(fd, 0600) < 0 || (w = write(fd, k, sizeof(k))) < 0)
		r = -errno;
	else if (w != (ssize_t)sizeof(k) || fsync(fd) < 0)
		r = -EIO;
	close(fd);
	if (r < 0) {
		unlinkat(dfd, KADDR_KEY_FILE, 0);
		return r;
	}
	kaddr_set_key(k[0], k[1]);
	return 0;
}

int
kaddr_init(const char *dir, char *err, size_t len)
{
	int dfd, fd, r;

	/* As root, a directory others could swap the file in is refused. */
	if ((dfd = safefile_dir_open(dir, SAFEFILE_DIR_CREATE, err, len)) < 0)
		return dfd;
	fd = openat(dfd, KADDR_KEY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	r = fd >= 0 ? kaddr_key_read(fd) : -errno;
	if (fd >= 0)
		close(fd);
	if (r < 0 && (r = kaddr_key_make(dfd)) < 0)
		snprintf(
		    err, len, "%s/%s: %s", dir, KADDR_KEY_FILE, strerror(-r));
	close(dfd);
	return r;
}

uint64_t
kaddr_hide(uint64_t addr)
{
	uint64_t k[2];

	kaddr_key(k);
	return vitals_hash_keyed(k[0], k[1], addr);
}

/* The entry of module name, added if new; NULL when full. */
static struct kaddr_mod *
kaddr_mod(const char *name)
{
	struct kaddr_mod *m;
	uint32_t i;

	for (i = kaddr_nmods; i-- > 0;)
		if (strcmp(kaddr_mods[i].name, name) == 0)
			return &kaddr_mods[i];
	if (kaddr_nmods == KADDR_MODS)
		return NULL;
	m = &kaddr_mods[kaddr_nmods++];
	memset(m, 0, sizeof(*m));
	m->lo = UINT64_MAX;
	m->id = -1;
	snprintf(m->name, sizeof(m->name), "%s", name);
	return m;
}

/*
 * One kallsyms line: the kernel's text bounds, and each module's text
 * symbols' range.
 */
static void
kaddr_symbol(uint64_t a, char type, const char *name, const char *mod)
{
	char n[KADDR_NAME];
	struct kaddr_mod *m;

	if (mod[0] == '\0') {
		if (strcmp(name, "_text") == 0 ||
		    (strcmp(name, "_stext") == 0 && kaddr_lo == 0))
			kaddr_lo = a;
		else if (strcmp(name, "_etext") == 0)
			kaddr_hi = a;
		return;
	}
	if ((type != 't' && type != 'T') || mod[0] != '[' ||
	    strcmp(mod, "[bpf]") == 0 ||
	    strcmp(mod, "[__builtin__ftrace]") == 0)
		return;
	snprintf(n, sizeof(n), "%.*s", (int)strcspn(mod + 1, "]"), mod + 1);
	if ((m = kaddr_mod(n)) == NULL)
		return;
	m->lo = a < m->lo ? a : m->lo;
	m->hi = a + 1 > m->hi ? a + 1 : m->hi;
}

static int
kaddr_cmp(const void *a, const void *b)
{
	const struct kaddr_mod *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A modules file line's name (KADDR_NAME), size and base; 0 if none. */
static int
kaddr_modules_line(const char *line, char *name, unsigned long long *size,
    unsigned long long *a)
{
	return sscanf(line, "%55s %llu %*s %*s %*s %llx", name, size, a) == 3;
}

/* h with one module of the modules file folded in. */
static uint64_t
kaddr_modules_fold(
    uint64_t h, const char *name, unsigned long long size, unsigned long long a)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++)
		h = vitals_hash_mix64(h ^ (unsigned char)name[i]);
	h = vitals_hash_mix64(h ^ size);
	return vitals_hash_mix64(h ^ a);
}

/*
 * Each module's base (its text's, /proc/modules), else its lowest symbol.
 * Returns the modules file's modules folded as kaddr_modules_sum() does.
 */
static uint64_t
kaddr_bases(void)
{
	char line[KADDR_LINE], name[KADDR_NAME];
	unsigned long long size, a;
	struct kaddr_mod *m;
	uint64_t sum = 0;
	uint32_t i;
	FILE *f;

	if ((f = fopen(kaddr_modules_path, "r")) != NULL) {
		sum = 1;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (!kaddr_modules_line(line, name, &size, &a))
				continue;
			sum = kaddr_modules_fold(sum, name, size, a);
			for (i = 0; i < kaddr_nmods; i++)
				if (strcmp(kaddr_mods[i].name, name) == 0)
					kaddr_mods[i].base = a;
		}
		fclose(f);
	}
	for (i = 0; i < kaddr_nmods; i++) {
		m = &kaddr_mods[i];
		if (m->base == 0 || m->base > m->lo)
			m->base = m->lo;
		if (m->base < m->lo)
			m->lo = m->base;
		m->hi += KADDR_SLACK;
	}
	qsort(kaddr_mods, kaddr_nmods, sizeof(*kaddr_mods), kaddr_cmp);
	/* A module's slack stops where the next one starts. */
	for (i = 0; i + 1 < kaddr_nmods; i++)
		if (kaddr_mods[i].hi > kaddr_mods[i + 1].lo)
			kaddr_mods[i].hi = kaddr_mods[i + 1].lo;
	return sum;
}

/*
 * The modules the modules file lists, by name, size and base, folded
 * into 64 bits (their use counts, which change, left out); 0 if it
 * cannot be read.
 */
static uint64_t
kaddr_modules_sum(void)
{
	char line[KADDR_LINE], name[KADDR_NAME];
	unsigned long long size, a;
	uint64_t h = 1;
	FILE *f;

	if ((f = fopen(kaddr_modules_path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (kaddr_modules_line(line, name, &size, &a))
			h = kaddr_modules_fold(h, name, size, a);
	fclose(f);
	return h;
}

void
kaddr_reload_every(uint64_t ns)
{
	kaddr_reload_ns = ns;
}

int
kaddr_load(const char *kallsyms, const char *modules)
{
	/* The last load's modules, whose registry ids carry over. */
	static struct kaddr_mod old[KADDR_MODS];
	char line[512], name[256], mod[256], type;
	unsigned long long a;
	uint32_t nold = kaddr_nmods, i, j;
	FILE *f;

	if (kallsyms != NULL)
		kaddr_kallsyms_path = kallsyms;
	if (modules != NULL)
		kaddr_modules_path = modules;
	kaddr_loaded = 1;
	kaddr_load_ns = clock_coarse_ns();
	kaddr_mods_sum = 0;
	memcpy(old, kaddr_mods, nold * sizeof(*old));
	kaddr_lo = kaddr_hi = 0;
	kaddr_nmods = 0;
	if ((f = fopen(kaddr_kallsyms_path, "r")) == NULL)
		return -ENOENT;
	while (fgets(line, sizeof(line), f) != NULL) {
		mod[0] = '\0';
		if (sscanf(line, "%llx %c %255s %255s", &a, &type, name, mod) <
		    3)
			continue;
		if (a == 0) /* addresses hidden (kptr_restrict) */
			break;
		kaddr_symbol(a, type, name, mod);
	}
	fclose(f);
	if (kaddr_hi <= kaddr_lo)
		kaddr_lo = kaddr_hi = 0;
	kaddr_mods_sum = kaddr_bases();
	/* A module seen before keeps its registry id. */
	for (i = 0; i < kaddr_nmods; i++)
		for (j = 0; j < nold; j++)
			if (strcmp(old[j].name, kaddr_mods[i].name) == 0)
				kaddr_mods[i].id = old[j].id;
	return kaddr_lo != 0 ? 0 : -ENOENT;
}

void
kaddr_text(uint64_t *lo, uint64_t *hi)
{
	if (!kaddr_loaded)
		kaddr_load(NULL, NULL);
	*lo = kaddr_lo;
	*hi = kaddr_hi;
}

/* Registry id of the image named path (*id, -1 until known); -1 if none. */
static int32_t
kaddr_image(int32_t *id, const char *path)
{
	uint32_t u;

	if (*id < 0 && module_get(path, 0, 0, 0, &u) == 0)
		*id = (int32_t)u;
	return *id;
}

/* The module whose text holds addr, or NULL. */
static struct kaddr_mod *
kaddr_find(uint64_t addr)
{
	uint32_t lo = 0, hi = kaddr_nmods, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (kaddr_mods[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= kaddr_mods[lo - 1].hi)
		return NULL;
	return &kaddr_mods[lo - 1];
}

/* Stored frame of text address addr, or 0 if in no image known. */
static uint64_t
kaddr_place(uint64_t addr)
{
	char path[KADDR_NAME + 16];
	struct kaddr_mod *m;

	if (addr >= kaddr_lo && addr < kaddr_hi &&
	    kaddr_image(&kaddr_kid, KADDR_KERNEL) >= 0)
		return VITALS_UFRAME(kaddr_kid, addr - kaddr_lo);
	if ((m = kaddr_find(addr)) == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s%s]", KADDR_KMOD_PREFIX, m->name);
	if (kaddr_image(&m->id, path) < 0)
		return 0;
	return VITALS_UFRAME(m->id, addr - m->base);
}

/* kaddr_place, the layout read again (a module loaded since) if due. */
static uint64_t
kaddr_text_frame(uint64_t addr)
{
	uint64_t f;

	if (!kaddr_loaded)
		kaddr_load(NULL, NULL);
	if ((f = kaddr_place(addr)) != 0 ||
	    clock_coarse_ns() - kaddr_load_ns < kaddr_reload_ns)
		return f;
	/*
	 * With the same modules, an address in none is not a module's (a
	 * BPF program's, a trampoline's) and kallsyms would not place it;
	 * reading it takes 150 ms of CPU here, which every such frame cost
	 * every 10 s, and what the CPU watermark took as sampling's.
	 */
	if (kaddr_modules_sum() == kaddr_mods_sum) {
		kaddr_load_ns = clock_coarse_ns();
		return 0;
	}
	kaddr_load(NULL, NULL);
	return kaddr_place(addr);
}

uint64_t
kaddr_frame(uint64_t addr)
{
	uint64_t f = kaddr_text_frame(addr);

	return f != 0 ? f : kaddr_hide(addr) & VITALS_UFRAME_OFF_MASK;
}

uint64_t
kaddr_value(uint64_t v)
{
	uint64_t f;

	if (v < VITALS_KADDR_MIN)
		return v;
	return (f = kaddr_text_frame(v)) != 0 ? f : kaddr_hide(v);
}
