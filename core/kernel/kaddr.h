/* SPDX-License-Identifier: MIT */
/*
 * Kernel addresses as they may be stored: epochs are read by users the
 * kernel hides its addresses from (kptr_restrict, perf_event_paranoid),
 * so a kernel text address is kept as an offset in its image (the
 * kernel's or a module's) and any other kernel pointer as a keyed hash
 * under the host's secret key.  See doc/design.md, "Kernel addresses".
 */
#ifndef VITALS_KADDR_H
#define VITALS_KADDR_H

#include <stddef.h>
#include <stdint.h>

/* The key file in the data dir: root's alone (0600), made if missing. */
#define KADDR_KEY_FILE "host.key"

/* The module path of the kernel's own text in the modules table. */
#define KADDR_KERNEL "[kernel]"
/* Prefix of a kernel module's ("[kernel:ext4]"). */
#define KADDR_KMOD_PREFIX "[kernel:"

/*
 * Load the host's key from DIR/host.key, or make it (16 random bytes,
 * mode 0600): pointers keyed under it keep their value across restarts.
 * A key file others may read, or of the wrong size, is replaced (a key
 * read by others would let them test guessed addresses).  Returns 0, or
 * a negative errno with the reason in err; then a random key of this
 * process is used (values stable until it exits).
 */
int kaddr_init(const char *dir, char *err, size_t len);

/* Use key (k0, k1) from now on (tests). */
void kaddr_set_key(uint64_t k0, uint64_t k1);

/* The key in force: kaddr_init's, or a random one of this process. */
void kaddr_key(uint64_t key[2]);

/*
 * Read the kernel's layout from kallsyms and modules (the files under
 * /proc by default: NULL); done on first use otherwise.  Returns 0, or
 * -ENOENT when the addresses are hidden or the file is missing (then
 * every kernel address is keyed).
 */
int kaddr_load(const char *kallsyms, const char *modules);

/*
 * An address in no image known is looked for again, once the modules
 * file lists other modules than at the last read, at most every ns (10 s
 * by default; tests set 0).
 */
void kaddr_reload_every(uint64_t ns);

/* The kernel's text [*lo, *hi) (_text to _etext), or 0s if unknown. */
void kaddr_text(uint64_t *lo, uint64_t *hi);

/* Kernel pointer addr keyed (vitals_hash_keyed): < 2^63, not invertible. */
uint64_t kaddr_hide(uint64_t addr);

/*
 * Kernel frame addr as stored: VITALS_UFRAME(module, offset) of the
 * kernel's text (module KADDR_KERNEL) or of a kernel module's, whose
 * entries the module registry holds; outside any (BPF or ftrace
 * trampolines), kaddr_hide(addr) cut to 48 bits, which reads as no
 * module's.  Loop thread only.
 */
uint64_t kaddr_frame(uint64_t addr);

/*
 * A value that may be a kernel address (an event argument): as
 * kaddr_frame if it lies in kernel text, keyed if it is another kernel
 * address (>= VITALS_KADDR_MIN), else v itself.
 */
uint64_t kaddr_value(uint64_t v);

#endif /* VITALS_KADDR_H */
