/* SPDX-License-Identifier: MIT */
/*
 * The module registry: every file (executable or library) a user frame or
 * a sample's exe was seen in gets an id, stable for the life of the
 * process, with its path and GNU build-id read once.  User frames are
 * stored as (module id, file offset); see VITALS_UFRAME in <vitals/vitals.h>.
 */
#ifndef VITALS_MODULE_H
#define VITALS_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include <vitals/vitals.h>

/* Longest build-id kept, in bytes (SHA-1 ids are 20). */
#define MODULE_BUILD_ID_MAX 64
/* Room for a build-id in lowercase hex and its NUL. */
#define MODULE_BUILD_ID_HEX (2 * MODULE_BUILD_ID_MAX + 1)

/*
 * Read the GNU build-id note (NT_GNU_BUILD_ID) of the ELF file open on fd
 * into hex as lowercase hex.  Returns 0; -ENOENT if the file has no such
 * note (or one longer than MODULE_BUILD_ID_MAX); -EINVAL if it is not ELF;
 * -ENOSPC if hex is too small.  fd stays open and its offset is unused.
 */
int module_build_id_fd(int fd, char *hex, size_t len);

/* The same for the file at path; also -errno from open(2). */
int module_build_id(const char *path, char *hex, size_t len);

/*
 * Id of the module (path, ino), as /proc/PID/maps names a file mapping
 * (dev, the device it gives, in the kernel's encoding: major << 20 |
 * minor; 0 if not known, then taken from the file when it is opened);
 * registered if new, its build-id read from /proc/PID/root/PATH when pid
 * is not 0 (the process's own view of the file, which differs in a
 * container), else from path, and only from a file that is still that
 * inode ("" otherwise: the file was replaced since).  ino 0 means unknown
 * (no check).  Not thread-safe: the loop thread only.  Returns 0 and sets
 * *id; -ENOSPC when VITALS_UFRAME_MAX_MODULES modules are registered;
 * -ENOMEM.
 */
int module_get(
    const char *path, uint32_t dev, uint64_t ino, uint32_t pid, uint32_t *id);

/* A stat(2) st_dev in the kernel's encoding, as module_get() takes it. */
uint32_t module_dev_encode(uint64_t st_dev);

/*
 * Id of a module registered for the file (dev, ino), or -ENOENT: how a
 * frame the kernel placed by file (struct vitals_bpf_ufile) finds its
 * module.  The newest module of a file, if several.
 */
int module_find_file(uint32_t dev, uint64_t ino, uint32_t *id);

/*
 * module_find_file(), else the file searched for by inode in the
 * directories of the modules registered and of the files this process
 * maps (a shared library of a process that is gone: no /proc maps name
 * it), registered under the path found.  A file not found is not searched
 * for again for a minute.  Returns 0 or -ENOENT (or module_get's errors).
 */
int module_search_file(uint32_t dev, uint64_t ino, uint32_t *id);

/*
 * Id of the newest module registered with path (a sample's exe), or, if
 * none, of the file now at path, registered.  Same returns as module_get.
 */
int module_by_path(const char *path, uint32_t *id);

/*
 * The module with id, or NULL.  Owned by the registry; it and its strings
 * stay valid until the process exits.
 */
const struct vitals_module *module_of(uint32_t id);

/*
 * Open module id's file read-only, through /proc/PID/root when pid is not
 * 0, checking it is still the inode registered.  Returns the descriptor
 * (the caller closes it), or -ENOENT.
 */
int module_open(uint32_t id, uint32_t pid);

/* Modules registered so far (ids are 0 to this minus 1). */
uint32_t module_count(void);

#endif /* VITALS_MODULE_H */
