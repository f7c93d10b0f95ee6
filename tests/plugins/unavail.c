/* SPDX-License-Identifier: MIT */
/*
 * A probe that is never available, for the daemon test: vitalsd must start
 * without it and say why.
 */
#include <errno.h>
#include <stdio.h>
#include <vitals/vitals.h>

static int
unavail_available(char *why, size_t len)
{
	snprintf(why, len, "test probe never runs (by design)");
	return -ENODEV;
}

static int
unavail_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	(void)ctx;
	(void)config;
	*state = NULL;
	return -EIO; /* must never be called */
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.name = "unavail",
	.version = "1",
	.description = "test probe that is never available",
	.available = unavail_available,
	.init = unavail_init,
};
