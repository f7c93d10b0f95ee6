/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a callmodel model file (filters/callmodel.c, linked
 * in with the mock core) through callmodel_model_load, as the filter
 * reads the file named by its model option.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../filters/callmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct callmodel_model *m = NULL;
	char err[1024];
	int fd;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_model.%d.json",
		    (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if (callmodel_model_load(path, &m, err, sizeof(err)) == 0)
		callmodel_model_free(m);
	return 0;
}
