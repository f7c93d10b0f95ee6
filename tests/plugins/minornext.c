/* SPDX-License-Identifier: MIT */
/*
 * A probe declaring an ABI minor newer than the core's: it may read
 * fields this core does not have, so the loader must refuse it.
 */
#include <vitals/vitals.h>

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR + 1,
	.kind = VITALS_PLUGIN_PROBE,
	.name = "minornext",
	.version = "1",
	.description = "test probe declaring a newer ABI minor",
};
