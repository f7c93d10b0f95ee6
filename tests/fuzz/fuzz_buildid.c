/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the ELF build-id reader (module_build_id_fd) on any
 * bytes, as it reads the binaries of every process it sees: a build-id,
 * or a refusal; never a read out of the file or a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char hex[MODULE_BUILD_ID_HEX];

	if (fd < 0 && (fd = memfd_create("fuzz_buildid", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (module_build_id_fd(fd, hex, sizeof(hex)) == 0 &&
	    strlen(hex) % 2 != 0)
		abort(); /* hex digits come in pairs */
	return 0;
}
