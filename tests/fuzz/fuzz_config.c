/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a configuration file (YAML) through config_load, as
 * vitalsd -c reads it: accepted or refused with a message, never a crash,
 * a leak or a hang.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct config *c = NULL;
	char err[1024];
	int fd;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_config.%d.yaml",
		    (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if (config_load(path, &c, err, sizeof(err)) == 0)
		config_free(c);
	return 0;
}
