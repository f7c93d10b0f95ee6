/* SPDX-License-Identifier: MIT */
/*
 * The `store` output plugin: writes every closed epoch to the data dir as
 * one gzip'd JSON file (through <vitals/store.h>) and applies the
 * retention settings every few epochs.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vitals/store.h>
#include <vitals/vitals.h>

/* The config block the core fills from the YAML. */
struct store_config {
	char *dir; /* data dir; NULL = the global data_dir */
	int64_t prune_every; /* epochs between retention passes */
};

/* One instance. */
struct store_state {
	struct vitals_ctx *ctx; /* the core's handle, borrowed */
	char *dir; /* data dir, owned */
	uint64_t prune_every; /* from the config */
	uint64_t written; /* epochs handed to write so far */
};

static const struct vitals_option store_options[] = {
	{ .key = "dir",
	    .type = VITALS_OPT_STRING,
	    .offset = offsetof(struct store_config, dir),
	    .def = NULL,
	    .help =
		"directory for epoch files (default: the global data_dir)" },
	{ .key = "prune_every",
	    .type = VITALS_OPT_INT,
	    .offset = offsetof(struct store_config, prune_every),
	    .def = "10",
	    .help = "epochs between two retention passes",
	    .min = 1,
	    .max = INT32_MAX },
	{ .key = NULL }
};

static void
store_fini(void *arg)
{
	struct store_state *st = arg;

	if (st == NULL)
		return;
	free(st->dir);
	free(st);
}

static int
store_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct store_config *cfg = config;
	const char *dir = cfg->dir;
	struct store_state *st;
	char err[512];
	int r;

	if (dir == NULL)
		dir = vitals_settings(ctx)->data_dir;
	if (dir == NULL || dir[0] == '\0') {
		vitals_error(ctx, "no data dir: set data_dir or store.dir");
		return -EINVAL;
	}
	if ((r = vitals_store_prepare(dir, err, sizeof(err))) < 0) {
		vitals_error(ctx, "data dir %s", err);
		return r;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->dir = strdup(dir)) == NULL) {
		store_fini(st);
		return -ENOMEM;
	}
	st->ctx = ctx;
	st->prune_every = cfg->prune_every > 0 ? (uint64_t)cfg->prune_every : 1;
	*state = st;
	return 0;
}

/* Apply the retention settings; failures are logged, never fatal. */
static void
store_prune(struct store_state *st)
{
	const struct vitals_settings *s = vitals_settings(st->ctx);
	struct timespec ts;
	uint64_t now;
	int n;

	if (s->retention_ns == 0 && s->retention_bytes == 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	n = vitals_store_prune(
	    st->dir, s->retention_ns, s->retention_bytes, now);
	if (n < 0)
		vitals_log(st->ctx, VITALS_LOG_WARN, "retention in %s: %s",
		    st->dir, strerror(-n));
	else
		vitals_log(st->ctx, VITALS_LOG_DEBUG,
		    "retention removed %d "
		    "file%s from %s",
		    n, n == 1 ? "" : "s", st->dir);
}

/*
 * Save the epoch.  A failure (disk full...) is reported to the core, which
 * logs it once (rate-limited) and carries on.  Retention runs even then: it
 * may free the space.
 */
static int
store_write(void *arg, const struct vitals_epoch *e)
{
	struct store_state *st = arg;
	char err[512];
	int r;

	r = vitals_epoch_save(e, st->dir, NULL, 0, err, sizeof(err));
	if (r < 0)
		vitals_error(st->ctx, "epoch not saved: %s", err);
	if (++st->written % st->prune_every == 0)
		store_prune(st);
	return r;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_OUTPUT,
	.config_size = sizeof(struct store_config),
	.name = "store",
	.version = "1.0",
	.description = "writes closed epochs to the data dir and prunes it",
	.options = store_options,
	.init = store_init,
	.fini = store_fini,
	.write = store_write,
};
