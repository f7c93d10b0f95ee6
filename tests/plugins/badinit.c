/* SPDX-License-Identifier: MIT */
/*
 * A valid filter whose init always fails with -EIO after vitals_error(),
 * for the daemon tests (the core must log the reason once, naming the
 * plugin); the loader tests only check that it loads.
 */
#include <errno.h>
#include <stddef.h>
#include <vitals/vitals.h>

static int
badinit_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	(void)config;
	*state = NULL;
	vitals_error(ctx, "init fails on purpose (test plugin)");
	return (-EIO);
}

static void
badinit_fini(void *state)
{
	(void)state;
}

static int
badinit_epoch(void *state, const struct vitals_queue *q)
{
	(void)state;
	(void)q;
	return (0);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = "badinit",
	.version = "1.0",
	.description = "loader test: a filter whose init always fails",
	.init = badinit_init,
	.fini = badinit_fini,
	.epoch = badinit_epoch,
};
