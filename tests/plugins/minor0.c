/* SPDX-License-Identifier: MIT */
/*
 * A probe built against ABI 1.0, before named metrics were appended: the
 * loader must still take it (a minor only ever appends fields).
 */
#include <vitals/vitals.h>

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = 0,
	.kind = VITALS_PLUGIN_PROBE,
	.name = "minor0",
	.version = "1",
	.description = "test probe declaring ABI minor 0",
};
