/* SPDX-License-Identifier: MIT */
/*
 * A module without a descriptor, for the loader tests: it exports a valid
 * one under a misspelt name, which the loader must not accept.
 */
#include <stddef.h>
#include <vitals/vitals.h>

const struct vitals_plugin vitals_plugins = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.name = "nodesc",
	.version = "1.0",
	.description = "loader test: the descriptor symbol is misspelt",
};
