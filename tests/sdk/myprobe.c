/* SPDX-License-Identifier: MIT */
/*
 * A third-party probe built out of the tree against the installed SDK
 * (tests/sdk.sh, doc/sdk.md).  Every `interval` it reads /proc/loadavg:
 * it counts one event in the vital "runnable" per runnable task, labelled
 * by the last digit of the newest pid (a stand-in for a real label, such
 * as a code address), and records the 1-minute load average as the named
 * metric "myprobe.loadavg1".  It needs no privilege.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <vitals/vitals.h>

#define MYPROBE_LOADAVG "/proc/loadavg"

/* The config block the core fills from the option table below. */
struct myprobe_config {
	uint64_t interval; /* VITALS_OPT_DURATION: nanoseconds */
	int64_t most; /* VITALS_OPT_INT */
};

struct myprobe {
	struct vitals_ctx *ctx;
	const struct myprobe_config *cfg;
	struct vitals_vital *vital; /* the sketch events are counted in */
	struct vitals_timer *timer;
};

/* Bounds: INT as is, DURATION in seconds; checked by the core. */
static const struct vitals_option myprobe_options[] = {
	{ "interval", VITALS_OPT_DURATION,
	    offsetof(struct myprobe_config, interval), "100ms",
	    "time between two reads of /proc/loadavg", 0.001, 60 },
	{ "most", VITALS_OPT_INT, offsetof(struct myprobe_config, most), "64",
	    "most events counted per read", 1, 4096 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 },
};

/* Whether the probe can run here; the reason goes to --list-plugins. */
static int
myprobe_available(char *why, size_t len)
{
	int error;

	if (access(MYPROBE_LOADAVG, R_OK) != 0) {
		error = errno;
		snprintf(why, len, "cannot read " MYPROBE_LOADAVG);
		return -error;
	}
	return 0;
}

/* The timer: one read, its events and its metric. */
static void
myprobe_tick(void *arg)
{
	struct myprobe *p = arg;
	struct vitals_event ev = { 0 };
	double load1;
	unsigned running, total, lastpid;
	int64_t i;
	FILE *f;

	if ((f = fopen(MYPROBE_LOADAVG, "r")) == NULL)
		return;
	/* "0.42 0.30 0.25 2/123 4567": loads, runnable/all tasks, last pid */
	if (fscanf(f, "%lf %*f %*f %u/%u %u", &load1, &running, &total,
		&lastpid) != 4) {
		fclose(f);
		vitals_log(
		    p->ctx, VITALS_LOG_WARN, "unexpected " MYPROBE_LOADAVG);
		return;
	}
	fclose(f);
	vitals_metric_put(p->ctx, "myprobe.loadavg1", "tasks", load1);
	ev.label = lastpid % 10;
	ev.weight = 1;
	ev.pid = ev.tid = (uint32_t)getpid();
	ev.comm = "myprobe";
	ev.args[0] = total;
	for (i = 0; i < (int64_t)running && i < p->cfg->most; i++)
		vitals_emit(p->vital, &ev); /* counts; keeps a sample if due */
}

static void
myprobe_fini(void *state)
{
	/* The timer and the vital are the core's: it frees them. */
	free(state);
}

static int
myprobe_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	struct myprobe *p;
	int r;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	p->ctx = ctx;
	p->cfg = config;
	if ((r = vitals_vital_open(ctx, "runnable", "tasks", &p->vital)) != 0 ||
	    (r = vitals_timer_add(
		 ctx, p->cfg->interval, myprobe_tick, p, &p->timer)) != 0) {
		vitals_error(ctx, "cannot start: error %d", r);
		free(p);
		return r;
	}
	*state = p;
	return 0;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct myprobe_config),
	.name = "myprobe",
	.version = "0.1",
	.description = "third-party example: runnable tasks from /proc/loadavg",
	.options = myprobe_options,
	.available = myprobe_available,
	.init = myprobe_init,
	.fini = myprobe_fini,
	/* flush: NULL, the sketch is the core's; no check: the table bounds
	 * every value. */
};
