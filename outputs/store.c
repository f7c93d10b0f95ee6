/* SPDX-License-Identifier: MIT */
/*
 * The `store` output plugin: writes every closed epoch to the data dir as
 * one gzip'd JSON file (through <vitals/store.h>) as soon as it closes,
 * again if the filters then add findings, and applies the retention
 * settings every few epochs; at start it recovers the epochs a killed
 * daemon left under temporary names.  An epoch that cannot be written
 * (disk full, I/O error) is kept in memory, encoded, up to `backlog`
 * bytes, and written with the next epoch once the data dir takes files
 * again; only what overflows the backlog, or is still held when the
 * daemon stops, is lost, and each such loss fails the write (vitalsd then
 * exits non-zero).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
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
	uint64_t backlog; /* bytes of unwritten epochs kept to retry */
};

/* One instance. */
struct store_state {
	struct vitals_ctx *ctx; /* the core's handle, borrowed */
	char *dir; /* data dir, owned */
	uint64_t prune_every; /* from the config */
	int follow; /* no dir option: follow the global data_dir on reload */
	char *refused; /* a data_dir moved to that could not be used, or NULL */
	uint64_t written; /* epochs handed to write so far */
	uint64_t last_seq, last_start; /* the last one, to tell a rewrite */
	uint64_t backlog; /* from the config */
	struct vitals_epoch_file *held; /* unwritten epochs, oldest first */
	size_t nheld, cap;
	uint64_t held_bytes; /* sum of their lengths */
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
	{ .key = "backlog",
	    .type = VITALS_OPT_SIZE,
	    .offset = offsetof(struct store_config, backlog),
	    .def = "64M",
	    .help = "bytes of epochs (compressed) kept in memory while they "
		    "cannot be written (disk full, I/O error), written as soon "
		    "as the data dir takes files again; 0 keeps none" },
	{ .key = NULL }
};

/* "2026-11-22T10:00:00Z": an epoch's start, for messages. */
static const char *
store_when(uint64_t start_ns, char *buf, size_t len)
{
	time_t t = (time_t)(start_ns / 1000000000ull);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%llu", (unsigned long long)start_ns);
	return buf;
}

/* Write the held epochs, oldest first, up to the first that fails. */
static int
store_flush(struct store_state *st, char *err, size_t len)
{
	size_t i, n = st->nheld;
	uint64_t first = n > 0 ? st->held[0].start_ns : 0;
	char when[32];
	int r = 0;

	for (i = 0; i < n; i++) {
		r = vitals_epoch_put(&st->held[i], st->dir, NULL, 0, err, len);
		if (r < 0)
			break;
		st->held_bytes -= st->held[i].len;
		vitals_epoch_file_free(&st->held[i]);
	}
	if (i == 0)
		return r;
	memmove(st->held, st->held + i, (n - i) * sizeof(*st->held));
	st->nheld = n - i;
	vitals_log(st->ctx, VITALS_LOG_WARN,
	    "wrote %zu epoch%s held in memory since %s to %s%s", i,
	    i == 1 ? "" : "s", store_when(first, when, sizeof(when)), st->dir,
	    st->nheld ? "; more are held" : "");
	return r;
}

static void
store_fini(void *arg)
{
	struct store_state *st = arg;
	char err[512], when[32];
	size_t i;

	if (st == NULL)
		return;
	/* Said through vitals_error: a stop that lost data failed (exit 1). */
	if (st->nheld > 0 && store_flush(st, err, sizeof(err)) < 0) {
		vitals_error(st->ctx,
		    "%zu epoch%s from %s on lost: they could not be written "
		    "before the store stopped: %s",
		    st->nheld, st->nheld == 1 ? "" : "s",
		    store_when(st->held[0].start_ns, when, sizeof(when)), err);
	}
	for (i = 0; i < st->nheld; i++)
		vitals_epoch_file_free(&st->held[i]);
	free(st->held);
	free(st->refused);
	free(st->dir);
	free(st);
}

/*
 * What a daemon killed while writing left: whole epochs under temporary
 * names go into place, the rest goes.  Nothing here stops a start.
 */
static void
store_recover(struct vitals_ctx *ctx, const char *dir)
{
	unsigned recovered = 0, removed = 0;
	char err[512];

	if (vitals_store_recover(dir, &recovered, &removed, err, sizeof(err)) <
	    0) {
		vitals_log(ctx, VITALS_LOG_WARN, "recovery: %s", err);
		return;
	}
	if (recovered > 0)
		vitals_log(ctx, VITALS_LOG_WARN,
		    "recovered %u epoch%s a stop "
		    "left under a temporary name in %s",
		    recovered, recovered == 1 ? "" : "s", dir);
	if (removed > 0)
		vitals_log(ctx, VITALS_LOG_INFO,
		    "removed %u incomplete "
		    "temporary file%s from %s",
		    removed, removed == 1 ? "" : "s", dir);
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
	store_recover(ctx, dir);
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->dir = strdup(dir)) == NULL) {
		store_fini(st);
		return -ENOMEM;
	}
	st->ctx = ctx;
	st->follow = cfg->dir == NULL;
	st->prune_every = cfg->prune_every > 0 ? (uint64_t)cfg->prune_every : 1;
	st->backlog = cfg->backlog;
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

/* Drop the oldest held epoch: it is lost. */
static void
store_drop_oldest(struct store_state *st)
{
	st->held_bytes -= st->held[0].len;
	vitals_epoch_file_free(&st->held[0]);
	memmove(st->held, st->held + 1, --st->nheld * sizeof(*st->held));
}

/*
 * Keep f (taken over) to write later, dropping the oldest held epochs
 * while the backlog would overflow; a rewrite of the newest held epoch
 * (the same file, with the filters' findings) replaces it.  Returns 0,
 * or a negative errno after vitals_error() when an epoch was lost.
 */
static int
store_hold(struct store_state *st, struct vitals_epoch_file *f)
{
	struct vitals_epoch_file *v;
	uint64_t first = 0;
	char when[32];
	size_t cap, lost = 0;

	if (st->nheld > 0 && strcmp(st->held[st->nheld - 1].rel, f->rel) == 0) {
		st->held_bytes -= st->held[st->nheld - 1].len;
		vitals_epoch_file_free(&st->held[st->nheld - 1]);
		st->nheld--;
	}
	if (f->len > st->backlog) {
		vitals_error(st->ctx,
		    "epoch of %s lost: its %zu bytes exceed the backlog (%llu)",
		    store_when(f->start_ns, when, sizeof(when)), f->len,
		    (unsigned long long)st->backlog);
		vitals_epoch_file_free(f);
		return -ENOSPC;
	}
	while (st->nheld > 0 && st->held_bytes + f->len > st->backlog) {
		first = lost++ == 0 ? st->held[0].start_ns : first;
		store_drop_oldest(st);
	}
	if (st->nheld == st->cap) {
		cap = st->cap ? st->cap * 2 : 8;
		if ((v = realloc(st->held, cap * sizeof(*v))) == NULL) {
			vitals_error(st->ctx, "epoch of %s lost: out of memory",
			    store_when(f->start_ns, when, sizeof(when)));
			vitals_epoch_file_free(f);
			return -ENOMEM;
		}
		st->held = v;
		st->cap = cap;
	}
	st->held[st->nheld++] = *f;
	st->held_bytes += f->len;
	if (lost == 0)
		return 0;
	vitals_error(st->ctx,
	    "%zu epoch%s from %s on lost: the backlog of "
	    "%llu bytes is full",
	    lost, lost == 1 ? "" : "s", store_when(first, when, sizeof(when)),
	    (unsigned long long)st->backlog);
	return -ENOSPC;
}

/*
 * Move to the global data_dir if a reload changed it (and the store has
 * no dir of its own): the epochs held so far go there too.  A directory
 * that cannot be used is said once, and the store stays where it was.
 */
static void
store_follow(struct store_state *st)
{
	const char *dir = vitals_settings(st->ctx)->data_dir;
	char err[512], *d;

	if (!st->follow || dir == NULL || dir[0] == '\0' ||
	    strcmp(dir, st->dir) == 0)
		return;
	if (st->refused != NULL && strcmp(st->refused, dir) == 0)
		return;
	free(st->refused);
	st->refused = NULL;
	if (vitals_store_prepare(dir, err, sizeof(err)) < 0) {
		vitals_log(st->ctx, VITALS_LOG_ERR,
		    "data_dir %s; still writing to %s", err, st->dir);
		st->refused = strdup(dir);
		return;
	}
	if ((d = strdup(dir)) == NULL)
		return;
	vitals_log(
	    st->ctx, VITALS_LOG_INFO, "writing to %s (was %s)", d, st->dir);
	free(st->dir);
	st->dir = d;
}

/*
 * Save the epoch, after any held ones.  One that cannot be written is
 * held (the first failure of a run is logged; the rest add to it), and
 * retention runs even then: it may free the space.  The same epoch again
 * (the core's second call, with the filters' findings) replaces the file
 * and counts once.
 */
static int
store_write(void *arg, const struct vitals_epoch *e)
{
	struct store_state *st = arg;
	struct vitals_epoch_file f;
	char err[512];
	int r, holding = st->nheld > 0;
	int again = st->written > 0 && e->seq == st->last_seq &&
	    e->start_ns == st->last_start;

	store_follow(st);
	if (holding && !again)
		store_prune(st);
	/* Counters past half the disk budget are folded (doc/design.md). */
	r = vitals_epoch_encode_within(
	    e, vitals_settings(st->ctx)->disk_budget / 2, &f, err, sizeof(err));
	if (r < 0) {
		vitals_error(st->ctx, "epoch not saved: %s", err);
		return r;
	}
	if ((r = store_flush(st, err, sizeof(err))) == 0)
		r = vitals_epoch_put(&f, st->dir, NULL, 0, err, sizeof(err));
	if (r == 0)
		vitals_epoch_file_free(&f);
	else if (st->backlog == 0) {
		vitals_epoch_file_free(&f);
		vitals_error(st->ctx, "epoch not saved: %s", err);
	} else {
		if (!holding && f.len <= st->backlog)
			vitals_log(st->ctx, VITALS_LOG_ERR,
			    "epoch not saved: %s; holding epochs in memory "
			    "(backlog %.1f MiB) until the data dir takes them",
			    err, (double)st->backlog / (1 << 20));
		r = store_hold(st, &f);
	}
	if (again)
		return r;
	st->last_seq = e->seq;
	st->last_start = e->start_ns;
	if (++st->written % st->prune_every == 0 && !holding)
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
