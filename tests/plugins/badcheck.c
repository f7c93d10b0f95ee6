/* SPDX-License-Identifier: MIT */
/*
 * A filter whose check callback refuses every configuration, for the
 * loader and daemon tests.  Built a second time with -DOLDCHECK as
 * `oldcheck`, which declares ABI minor 2: the core must not call its
 * check, as a descriptor of that minor ends before the member.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <vitals/vitals.h>

#ifdef OLDCHECK
#define BADCHECK_NAME "oldcheck"
#define BADCHECK_MINOR 2
#else
#define BADCHECK_NAME "badcheck"
#define BADCHECK_MINOR VITALS_ABI_MINOR
#endif

static int
badcheck_check(const void *config, char *why, size_t len)
{
	(void)config;
	snprintf(why, len, "check refuses on purpose (test plugin)");
	return (-EINVAL);
}

static int
badcheck_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	*state = NULL;
	return (vitals_init_check(ctx, badcheck_check, config));
}

static void
badcheck_fini(void *state)
{
	(void)state;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = BADCHECK_MINOR,
	.kind = VITALS_PLUGIN_FILTER,
	.name = BADCHECK_NAME,
	.version = "1.0",
	.description = "loader test: a filter whose check always refuses",
	.init = badcheck_init,
	.fini = badcheck_fini,
	.check = badcheck_check,
};
