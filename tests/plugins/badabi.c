/* SPDX-License-Identifier: MIT */
/*
 * A plugin from a future ABI 99, for the loader tests: only the two
 * version words are where struct vitals_plugin has them; the loader must
 * refuse it reading nothing else (the object is shorter than the struct).
 */
#include <stdint.h>

/* What ABI 99 might look like: the version first, then anything. */
struct badabi_plugin_v99 {
	uint32_t abi_major;
	uint32_t abi_minor;
	uint64_t flags;
	const char *name;
};

const struct badabi_plugin_v99 vitals_plugin = {
	.abi_major = 99,
	.abi_minor = 0,
	.flags = 0,
	.name = "badabi",
};
