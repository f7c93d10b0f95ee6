/* SPDX-License-Identifier: MIT */
/*
 * A valid probe for the loader tests: options of three types, an
 * available() that says yes, and an init that opens nothing.
 */
#include <stddef.h>
#include <stdint.h>
#include <vitals/vitals.h>

struct good_config {
	int64_t rate; /* events per second (unused) */
	char *label; /* a string option */
	uint64_t period; /* a duration option, ns */
};

static const struct vitals_option good_options[] = {
	{ .key = "rate",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct good_config, rate),
	    .def = "10",
	    .help = "events per second",
	    .min = 1,
	    .max = 1000 },
	{ .key = "label",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct good_config, label),
	    .def = "good",
	    .help = "a string option" },
	{ .key = "period",
	    .type = VITALS_OPT_DURATION,
	    .offset = offsetof(struct good_config, period),
	    .def = "1s",
	    .help = "a duration option" },
	{ .key = NULL }
};

static int
good_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return (0);
}

static int
good_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	(void)ctx;
	(void)config;
	*state = NULL;
	return (0);
}

static void
good_fini(void *state)
{
	(void)state;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct good_config),
	.name = "good",
	.version = "1.0",
	.description = "loader test: a valid probe that emits nothing",
	.options = good_options,
	.available = good_available,
	.init = good_init,
	.fini = good_fini,
};
