/* SPDX-License-Identifier: MIT */
/*
 * A plugin of an unknown kind (42), for the loader tests; everything else
 * in its descriptor is valid.
 */
#include <stddef.h>
#include <vitals/vitals.h>

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = 42,
	.name = "badkind",
	.version = "1.0",
	.description = "loader test: a kind vitalsd does not know",
};
