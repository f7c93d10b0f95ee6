/* SPDX-License-Identifier: MIT */
/*
 * A filter that never returns from its first epoch: it creates the file
 * `marker` to say it is there, then waits to be killed.  tests/harden.sh
 * kills vitalsd -9 while it waits, as a crash while the filters run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <vitals/vitals.h>

struct stall_config {
	char *marker; /* the file created once the filter stalls */
};

static const struct vitals_option stall_options[] = {
	{ .key = "marker",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct stall_config, marker),
	    .def = NULL,
	    .help = "file created when the first epoch comes" },
	{ .key = NULL }
};

static int
stall_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct stall_config *c = config;

	if (c->marker == NULL) {
		vitals_error(ctx, "set marker");
		return -EINVAL;
	}
	*state = c->marker;
	return 0;
}

static void
stall_fini(void *state)
{
	(void)state;
}

static int
stall_epoch(void *state, const struct vitals_queue *q)
{
	int fd;

	(void)q;
	if ((fd = open(state, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
		close(fd);
	for (;;)
		pause();
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.config_size = sizeof(struct stall_config),
	.name = "stall",
	.version = "1",
	.description = "never returns from its first epoch (tests)",
	.options = stall_options,
	.init = stall_init,
	.fini = stall_fini,
	.epoch = stall_epoch,
};
