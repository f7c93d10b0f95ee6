/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the ewma filter, linked in directly with the mock core:
 * hand-made epochs go through vitals_plugin.epoch and the findings the
 * mock recorded are checked.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define HCA 256
#define NEPOCHS 64
#define BASE_NS 1700000000000000000ULL
#define CPU 0 /* index of cpu in an epoch's vitals (sorted by name) */
#define SCHED 1

/* One hand-made epoch with two vitals, cpu and sched. */
struct fake {
	struct vitals_epoch e;
	struct vitals_vital_epoch v[2];
	uint64_t hca[2][HCA];
	struct vitals_sample s[3];
};

/* The epochs of one timescale, oldest first, as a queue shows them. */
struct history {
	uint32_t ts;
	uint32_t n;
	struct fake f[NEPOCHS];
	const struct vitals_epoch *p[NEPOCHS];
};

static struct history h60, h300;
static void *cfg, *st;

/*
 * Start the filter with defaults overridden by NULL-terminated pairs.  The
 * floors are off (the hand-made values are small) unless kv sets them.
 */
static void
start(const char *const *kv)
{
	static const char *const dflt[] = { "floor", "*=0", "min_share", "0",
		NULL };

	cfg = contract_config(&vitals_plugin, dflt, kv);
	ck_assert_int_eq(vitals_plugin.init(mock_ctx("ewma"), cfg, &st), 0);
}

static void
setup(void)
{
	memset(&h60, 0, sizeof(h60));
	memset(&h300, 0, sizeof(h300));
	h60.ts = 60;
	h300.ts = 300;
	cfg = st = NULL;
}

static void
teardown(void)
{
	contract_stop(&vitals_plugin, cfg, st);
}

/*
 * Prepare the next epoch: cpu HCA 100 per slot but slot 7 at 300, sched
 * 50 per slot; weighted sums are the HCA sums.  The test may change it
 * before run().
 */
static struct fake *
next(struct history *h)
{
	struct fake *f;
	uint32_t i;

	ck_assert_uint_lt(h->n, NEPOCHS);
	f = &h->f[h->n];
	memset(f, 0, sizeof(*f));
	f->e.host = "mockhost";
	f->e.timescale_s = h->ts;
	f->e.seq = h->n;
	f->e.length_ns = (uint64_t)h->ts * 1000000000ULL;
	f->e.start_ns = BASE_NS + h->n * f->e.length_ns;
	f->e.nvitals = 2;
	f->e.vitals = f->v;
	f->v[CPU].name = "cpu";
	f->v[CPU].unit = "samples";
	f->v[SCHED].name = "sched";
	f->v[SCHED].unit = "ns";
	for (i = 0; i < 2; i++) {
		f->v[i].hca_size = HCA;
		f->v[i].hca = f->hca[i];
	}
	for (i = 0; i < HCA; i++) {
		f->hca[CPU][i] = i == 7 ? 300 : 100;
		f->hca[SCHED][i] = 50;
	}
	f->v[CPU].wsum = 100 * HCA + 200;
	f->v[SCHED].wsum = 50 * HCA;
	return f;
}

/* Hand the newest epoch to the filter with the whole history as queue. */
static void
run(struct history *h)
{
	struct vitals_queue q = { .timescale_s = h->ts };

	h->p[h->n] = &h->f[h->n].e;
	h->n++;
	q.n = h->n;
	q.epochs = h->p;
	ck_assert_int_eq(vitals_plugin.epoch(st, &q), 0);
}

/* Feed n epochs whose cpu and sched weighted sums are set. */
static void
feed(struct history *h, unsigned n, uint64_t cpu, uint64_t sched)
{
	struct fake *f;

	while (n-- > 0) {
		f = next(h);
		f->v[CPU].wsum = cpu;
		f->v[SCHED].wsum = sched;
		run(h);
	}
}

/* Findings that are not an incident's end (said later, at info). */
static unsigned
changes(void)
{
	unsigned i, n = 0;

	for (i = 0; i < mock_nfindings(); i++)
		n += strstr(mock_finding(i)->text, "is over") == NULL;
	return n;
}

/* The one finding that is not an incident's end. */
static const struct vitals_finding *
only_finding(void)
{
	unsigned i;

	ck_assert_uint_eq(changes(), 1);
	for (i = 0; strstr(mock_finding(i)->text, "is over") != NULL; i++)
		;
	return mock_finding(i);
}

/* ---- steady series: never a finding ---- */

static const struct {
	const char *name;
	double level; /* mean value */
	double jitter; /* relative amplitude of a deterministic wobble */
	double trend; /* relative growth per epoch */
	const char *alpha;
} steady_cases[] = {
	{ "constant", 20000, 0, 0, "0.3" },
	{ "jitter 2%", 20000, 0.02, 0, "0.3" },
	{ "jitter 4% alpha 0.1", 20000, 0.04, 0, "0.1" },
	{ "slow trend", 20000, 0.01, 0.01, "0.3" },
	{ "tiny values", 3, 0.3, 0, "0.3" },
	{ "zero", 0, 0, 0, "0.5" },
};

START_TEST(steady_series)
{
	const char *kv[] = { "alpha", steady_cases[_i].alpha, NULL };
	double x, level = steady_cases[_i].level;
	unsigned i;

	start(kv);
	for (i = 0; i < 60; i++) {
		x = level * (1 + steady_cases[_i].jitter * sin(i * 1.7));
		level *= 1 + steady_cases[_i].trend;
		feed(&h60, 1, (uint64_t)llround(x), 12800);
	}
	ck_assert_msg(mock_nfindings() == 0, "%s: %u findings, first: %s",
	    steady_cases[_i].name, mock_nfindings(),
	    mock_nfindings() ? mock_finding(0)->text : "");
}
END_TEST

/* ---- a one-epoch step after warm-up: exactly one finding, info ---- */

static const struct {
	unsigned vital; /* CPU or SCHED */
	unsigned at; /* epoch index of the step */
	double factor; /* value during the step, times the baseline */
	const char *warmup;
	unsigned severity;
} step_cases[] = {
	{ CPU, 10, 10, "5", VITALS_SEV_INFO },
	{ SCHED, 7, 3, "5", VITALS_SEV_INFO },
	{ CPU, 5, 2, "5", VITALS_SEV_INFO },
	{ CPU, 12, 0, "5", VITALS_SEV_INFO },
	{ SCHED, 3, 1.2, "3", VITALS_SEV_INFO },
	{ CPU, 1, 5, "0", VITALS_SEV_INFO },
};

START_TEST(step_burst)
{
	const char *kv[] = { "top", "0", "warmup", step_cases[_i].warmup,
		NULL };
	const struct vitals_finding *f;
	unsigned i, v = step_cases[_i].vital;
	uint64_t base = 20000, x;

	start(kv);
	for (i = 0; i < 20; i++) {
		x = i == step_cases[_i].at
		    ? (uint64_t)(base * step_cases[_i].factor)
		    : base;
		feed(&h60, 1, v == CPU ? x : base, v == SCHED ? x : base);
	}
	f = only_finding();
	ck_assert_str_eq(f->vital, v == CPU ? "cpu" : "sched");
	ck_assert_ptr_null(f->label);
	ck_assert_str_eq(f->filter, "ewma");
	ck_assert_uint_eq(f->start_ns, h60.f[step_cases[_i].at].e.start_ns);
	ck_assert_uint_eq(f->end_ns, f->start_ns + 60000000000ULL);
	ck_assert_uint_eq(f->timescale_s, 60);
	ck_assert_double_gt(f->score, 3);
	ck_assert_double_eq_tol(f->value, base * step_cases[_i].factor, 1);
	ck_assert_double_eq_tol(f->expected, base, 1e-6);
	ck_assert_uint_eq(f->severity, step_cases[_i].severity);
}
END_TEST

/* Feed n epochs where slot 7 of cpu holds `count`, named by /usr/bin/foo. */
static void
feed_slot(struct history *h, unsigned n, uint64_t count)
{
	struct fake *f;

	while (n-- > 0) {
		f = next(h);
		f->hca[CPU][7] = count;
		f->v[CPU].wsum = 100 * HCA + count - 100;
		f->s[0] = (struct vitals_sample){ .slot = 7,
			.label = 0x401234,
			.weight = 1,
			.count = count,
			.exe = "/usr/bin/foo",
			.comm = "foo" };
		f->v[CPU].samples = f->s;
		f->v[CPU].nsamples = 1;
		run(h);
	}
}

/*
 * Slot 7 rises to `count` in foo's samples, a first sighting at 1 and a
 * crossing at 16384, and bar, another exe whose label shares the slot, is
 * first seen late: its one sample saw the counter at count - 10.
 */
static void
feed_collided(struct history *h, uint64_t count)
{
	struct fake *f = next(h);

	f->hca[CPU][7] = count;
	f->v[CPU].wsum = 100 * HCA + count - 100;
	f->s[0] = (struct vitals_sample){ .slot = 7,
		.label = 0x401234,
		.weight = 1,
		.count = 1,
		.exe = "/usr/bin/foo",
		.comm = "foo" };
	f->s[1] = f->s[0];
	f->s[1].count = 16384;
	f->s[2] = (struct vitals_sample){ .slot = 7,
		.label = 0x405678,
		.exe_id = 2,
		.weight = 1,
		.count = count - 10,
		.exe = "/usr/bin/bar",
		.comm = "bar" };
	f->v[CPU].samples = f->s;
	f->v[CPU].nsamples = 3;
	run(h);
}

/* The findings of severity sev or more, counted. */
static unsigned
count_sev(uint32_t sev)
{
	unsigned i, n = 0;

	for (i = 0; i < mock_nfindings(); i++)
		n += mock_finding(i)->severity >= sev;
	return n;
}

/*
 * The rise is foo's in both epochs though bar, seen once late in the
 * slot, saw its counter highest: bar stands for its own weight, so the
 * rise is foo's, a warning at the second epoch.  Naming the slot by its
 * highest sample charged it to bar, a new incident seen once (info).
 */
START_TEST(collided_rise)
{
	const struct vitals_finding *f;

	start(NULL);
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 1, 30000);
	mock_findings_clear();
	feed_collided(&h60, 30000);
	f = only_finding();
	ck_assert_str_eq(f->label, "/usr/bin/foo");
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN);
	ck_assert_ptr_nonnull(
	    strstr(f->text, "most of the change in /usr/bin/foo (foo) slot 7"));
}
END_TEST

/*
 * A rise one exe makes that lasts: seen once it is info; in 2 of 3 epochs
 * a warning (one incident, its range from its first epoch), then nothing
 * while it lasts, and its end (the fall back) is info, no new anomaly.
 */
START_TEST(persistent_rise)
{
	const struct vitals_finding *f;
	unsigned i, warn = 0, at;

	start(NULL);
	feed_slot(&h60, 10, 300);
	at = h60.n;
	feed_slot(&h60, 1, 30000);
	f = only_finding();
	ck_assert_uint_eq(f->severity, VITALS_SEV_INFO);
	ck_assert_str_eq(f->label, "/usr/bin/foo");
	ck_assert_ptr_nonnull(strstr(f->text, "seen once"));
	mock_findings_clear();
	feed_slot(&h60, 1, 30000);
	f = only_finding();
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN);
	ck_assert_str_eq(f->label, "/usr/bin/foo");
	ck_assert_str_eq(f->vital, "cpu");
	ck_assert_uint_eq(f->start_ns, h60.f[at].e.start_ns);
	ck_assert_uint_eq(f->end_ns, h60.f[at + 1].e.start_ns + 60000000000ULL);
	ck_assert_ptr_nonnull(
	    strstr(f->text, "most of the change in /usr/bin/foo (foo) slot 7"));
	ck_assert_ptr_nonnull(strstr(f->text, "in 2 of the last 3 epochs"));
	mock_findings_clear();
	feed_slot(&h60, 3, 30000);
	ck_assert_uint_eq(mock_nfindings(), 0);
	feed_slot(&h60, 6, 300);
	/* The fall back is the incident's end: info, said once. */
	for (i = 0; i < mock_nfindings(); i++) {
		warn += mock_finding(i)->severity > VITALS_SEV_INFO;
		if (strstr(mock_finding(i)->text, "is over") != NULL)
			ck_assert_uint_eq(
			    mock_finding(i)->start_ns, h60.f[at].e.start_ns);
	}
	ck_assert_uint_eq(warn, 0);
	ck_assert_uint_eq(mock_nfindings(), 1);
	ck_assert_ptr_nonnull(strstr(mock_finding(0)->text, "is over after"));
}
END_TEST

/* k of 2k-1: a rise in epochs 1 and 3 of three is one incident. */
START_TEST(intermittent_rise)
{
	start(NULL);
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 1, 30000);
	feed_slot(&h60, 1, 300);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 0);
	feed_slot(&h60, 1, 30000);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 1);
	/* persist 3: 3 of 5 needed, two are not enough. */
	teardown();
	setup();
	{
		const char *kv[] = { "persist", "3", NULL };

		start(kv);
	}
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 2, 30000);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 0);
	feed_slot(&h60, 1, 30000);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 1);
}
END_TEST

/* A rise under the vital's floor is not said at all. */
START_TEST(floor_option)
{
	const char *low[] = { "floor", "cpu=10", NULL };
	const char *high[] = { "floor", "cpu=1000", NULL };

	start(low); /* 30000 - 300 per 60 s is 495 per s: above 10 */
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 2, 30000);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 1);
	teardown();
	setup();
	start(high);
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 2, 30000);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/*
 * min_share: a slot that rises by far, but whose exe holds little of the
 * vital (a victim among many), is no warning, only info.
 */
START_TEST(min_share_option)
{
	const char *kv[] = { "min_share", "0.6", NULL };

	start(kv); /* slot 7 at 30000 holds 54% of the vital */
	feed_slot(&h60, 10, 300);
	feed_slot(&h60, 2, 30000);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 0);
	ck_assert_ptr_nonnull(strstr(only_finding()->text, "holds too little"));
}
END_TEST

/* The built-in floors apply without the option; wait is never a warning. */
START_TEST(builtin_floors)
{
	struct vitals_ctx *ctx = mock_ctx("ewma");
	unsigned i;

	cfg = mock_config_new(&vitals_plugin);
	ck_assert_int_eq(vitals_plugin.init(ctx, cfg, &st), 0);
	/* sched: 0.5 s per 60 s is under 200 ms/s. */
	for (i = 0; i < 12; i++)
		feed(&h60, 1, 20000, i < 10 ? 1000000 : 500000000);
	ck_assert_uint_eq(mock_nfindings(), 0);
	/* sched: 60 s per 60 s is above it, but no exe made it: info. */
	feed(&h60, 2, 20000, 60000000000ULL);
	ck_assert_uint_gt(mock_nfindings(), 0);
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 0);
}
END_TEST

START_TEST(finding_text)
{
	const char *kv[] = { "top", "0", NULL };
	const struct vitals_finding *f;

	start(kv);
	feed(&h60, 8, 20000, 1000);
	feed(&h60, 1, 41230, 1000);
	f = only_finding();
	/* sd is floored at 5% of the mean: (41230 - 20000) / 1000. */
	ck_assert_double_eq_tol(f->score, 21.23, 1e-9);
	ck_assert_str_eq(f->text,
	    "cpu weighted sum 41230 is 21.2 sd above "
	    "its EWMA 20000 (alpha 0.3, k 3); spread over many sites, no exe "
	    "made most of it");
	mock_findings_clear();
	feed(&h60, 10, 20000, 1000);
	ck_assert_uint_eq(changes(), 0);
	mock_findings_clear();
	feed(&h60, 1, 100, 1000);
	ck_assert_ptr_nonnull(strstr(only_finding()->text, " below its EWMA"));
}
END_TEST

/* ---- warm-up: nothing before `warmup` values are learnt ---- */

static const struct {
	unsigned at; /* epoch index of a spike */
	const char *warmup;
	unsigned findings;
} warm_cases[] = {
	{ 0, "5", 0 },
	{ 2, "5", 0 },
	{ 4, "5", 0 },
	{ 5, "5", 1 },
	{ 9, "10", 0 },
	{ 10, "10", 1 },
	{ 1, "1", 1 },
	{ 0, "0", 0 },
};

START_TEST(warmup)
{
	const char *kv[] = { "top", "0", "warmup", warm_cases[_i].warmup,
		NULL };
	unsigned i;

	start(kv);
	for (i = 0; i <= warm_cases[_i].at; i++)
		feed(&h60, 1, i == warm_cases[_i].at ? 1000000 : 20000, 5000);
	ck_assert_uint_eq(mock_nfindings(), warm_cases[_i].findings);
}
END_TEST

/* ---- per-label bursts in one HCA slot ---- */

static const struct {
	int sample; /* a sample sits in slot 7 */
	const char *label; /* expected label: the exe, else the slot */
} label_cases[] = {
	{ 1, "/usr/bin/foo" },
	{ 0, "slot 7" },
};

START_TEST(label_burst)
{
	struct fake *f;
	const struct vitals_finding *fd;
	unsigned i;

	start(NULL);
	for (i = 0; i < 12; i++) {
		f = next(&h60);
		if (i == 8) {
			f->hca[CPU][7] = 700; /* total +400: under 5% of 26k */
			f->v[CPU].wsum += 400;
		}
		if (label_cases[_i].sample) {
			f->s[0] = (struct vitals_sample){ .slot = 7,
				.label = 0x401234,
				.weight = 1,
				.count = 64,
				.exe = "/usr/bin/foo",
				.comm = "foo" };
			f->v[CPU].samples = f->s;
			f->v[CPU].nsamples = 1;
		}
		run(&h60);
	}
	fd = only_finding();
	ck_assert_str_eq(fd->vital, "cpu");
	ck_assert_str_eq(fd->label, label_cases[_i].label);
	ck_assert_uint_eq(fd->severity, VITALS_SEV_INFO);
	ck_assert_uint_eq(fd->start_ns, h60.f[8].e.start_ns);
	ck_assert_double_eq(fd->value, 700);
	ck_assert_double_eq_tol(fd->expected, 300, 1e-6);
	ck_assert_double_gt(fd->score, 3);
	ck_assert_ptr_nonnull(strstr(fd->text, "slot 7 count 700 is"));
}
END_TEST

/*
 * A slot new to the top rises from at most the smallest of the last top:
 * one finding, charged to its exe, the weighted sum's text naming it.
 */
START_TEST(new_label_rises)
{
	struct fake *f;

	start(NULL);
	feed(&h60, 10, 100 * HCA + 200, 12800);
	/* Slot 20 enters the top for the first time with a huge count. */
	f = next(&h60);
	f->hca[CPU][20] = 50000;
	f->v[CPU].wsum += 50000;
	f->s[0] = (struct vitals_sample){ .slot = 20,
		.label = 0x7f3a00,
		.weight = 1,
		.count = 50000,
		.exe = "/usr/bin/miner",
		.comm = "miner" };
	f->v[CPU].samples = f->s;
	f->v[CPU].nsamples = 1;
	run(&h60);
	ck_assert_str_eq(only_finding()->vital, "cpu");
	ck_assert_str_eq(only_finding()->label, "/usr/bin/miner");
	ck_assert_ptr_nonnull(strstr(only_finding()->text,
	    "above its EWMA 25800 (alpha 0.3, k 3); most of the change in "
	    "/usr/bin/miner (miner) slot 20 (count 50000, EWMA 0)"));
}
END_TEST

/*
 * A vital at 0 that rises, in a slot no sample names: "rose from an EWMA
 * of 0", not a count of sds (which the floor of 1 made the value
 * itself), one finding charged to the slot, not said to be a kernel
 * thread's (it was, and a second finding called the rise spread over
 * many sites).
 */
START_TEST(rise_from_zero_unnamed)
{
	struct fake *f;
	unsigned i;

	start(NULL);
	for (i = 0; i < 10; i++) {
		f = next(&h60);
		memset(f->hca[SCHED], 0, sizeof(f->hca[SCHED]));
		f->v[SCHED].wsum = 0;
		run(&h60);
	}
	mock_findings_clear();
	f = next(&h60);
	memset(f->hca[SCHED], 0, sizeof(f->hca[SCHED]));
	f->hca[SCHED][3] = 3000000000ULL;
	f->v[SCHED].wsum = 3000000000ULL;
	run(&h60);
	ck_assert_str_eq(only_finding()->label, "slot 3");
	ck_assert_str_eq(only_finding()->text,
	    "sched weighted sum 3000000000 rose from an EWMA of 0 (alpha 0.3, "
	    "k 3); most of the change in slot 3 (count 3000000000, EWMA 0); "
	    "no sample of the epoch names the process that made it");
}
END_TEST

/*
 * A top slot that empties while the weighted sum drops is named as it was
 * last seen (its exe left no sample now); a drop spread over every slot
 * names nobody.
 */
START_TEST(mover_left)
{
	struct fake *f;
	unsigned i;

	start(NULL);
	for (i = 0; i < 10; i++) {
		f = next(&h60);
		f->hca[CPU][7] = 20000;
		f->v[CPU].wsum += 20000 - 300;
		f->s[0] = (struct vitals_sample){ .slot = 7,
			.label = 0x401234,
			.weight = 1,
			.count = 20000,
			.exe = "/usr/bin/foo",
			.comm = "foo" };
		f->v[CPU].samples = f->s;
		f->v[CPU].nsamples = 1;
		run(&h60);
	}
	f = next(&h60);
	f->hca[CPU][7] = 0;
	f->v[CPU].wsum -= 300;
	run(&h60);
	ck_assert_ptr_nonnull(strstr(only_finding()->text,
	    " below its EWMA 45500 (alpha 0.3, k 3); most of the change in "
	    "/usr/bin/foo (foo) slot 7 (count 0, EWMA 20000)"));
	mock_findings_clear();
	feed(&h60, 10, 100 * HCA + 200, 12800);
	mock_findings_clear();
	f = next(&h60);
	for (i = 0; i < HCA; i++)
		f->hca[CPU][i] /= 4;
	f->v[CPU].wsum /= 4;
	run(&h60);
	/* Only the sum is reported (falls of slots are not), naming none. */
	for (i = 0; i < mock_nfindings(); i++)
		if (strncmp(mock_finding(i)->text, "cpu weighted sum", 16) == 0)
			break;
	ck_assert_uint_lt(i, mock_nfindings());
	ck_assert_ptr_null(mock_finding(i)->label);
	ck_assert_ptr_null(strstr(mock_finding(i)->text, "most of the change"));
}
END_TEST

START_TEST(top_zero_ignores_labels)
{
	const char *kv[] = { "top", "0", NULL };
	struct fake *f;

	start(kv);
	feed(&h60, 10, 100 * HCA + 200, 12800);
	f = next(&h60);
	f->hca[CPU][7] = 900;
	run(&h60);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/* A slot that falls out of the top keeps learning but is not tested. */
START_TEST(label_leaving_top)
{
	struct fake *f;

	start(NULL);
	feed(&h60, 10, 100 * HCA + 200, 12800);
	f = next(&h60);
	f->hca[CPU][7] = 100; /* ties with slots 0, 1, 2: out of the top 3 */
	run(&h60);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/*
 * Many slots take turns at the top: bounded state, and as none stays, no
 * warning (each new slot's rise is said once, at info).
 */
START_TEST(label_eviction)
{
	struct fake *f;
	unsigned i;

	start(NULL);
	for (i = 0; i < NEPOCHS; i++) {
		f = next(&h60);
		f->hca[CPU][8 + 2 * i] = 5000; /* two new slots each epoch */
		f->hca[CPU][9 + 2 * i] = 4000;
		f->v[CPU].wsum = 100 * HCA + 9000;
		run(&h60);
	}
	ck_assert_uint_eq(count_sev(VITALS_SEV_WARN), 0);
}
END_TEST

/* ---- one state per timescale ---- */

START_TEST(timescales_separate)
{
	unsigned i;

	start(NULL);
	for (i = 0; i < 20; i++) {
		feed(&h60, 1, 1000, 500);
		feed(&h300, 1, 50000, 25000);
	}
	ck_assert_uint_eq(mock_nfindings(), 0);
	feed(&h300, 1, 500000, 25000);
	ck_assert_uint_eq(only_finding()->timescale_s, 300);
	ck_assert_uint_eq(only_finding()->start_ns, h300.f[20].e.start_ns);
	ck_assert_double_eq_tol(only_finding()->expected, 50000, 1e-6);
	mock_findings_clear();
	feed(&h60, 1, 1000, 500);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

START_TEST(timescale_warms_alone)
{
	struct history *h = &h300;

	start(NULL);
	feed(&h60, 20, 1000, 500);
	h->ts = 3600;
	feed(h, 1, 900000, 500000);
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/* ---- options ---- */

START_TEST(vitals_option)
{
	const char *kv[] = { "vitals", "sched", "top", "0", NULL };

	start(kv);
	feed(&h60, 10, 1000, 500);
	feed(&h60, 1, 90000, 500);
	ck_assert_uint_eq(mock_nfindings(), 0);
	feed(&h60, 1, 1000, 90000);
	ck_assert_str_eq(only_finding()->vital, "sched");
}
END_TEST

START_TEST(k_option)
{
	const char *kv[] = { "k", "30", "top", "0", NULL };

	start(kv);
	feed(&h60, 10, 20000, 500);
	feed(&h60, 1, 40000, 500); /* 20 sd: under k */
	ck_assert_uint_eq(mock_nfindings(), 0);
	feed(&h60, 10, 20000, 500);
	feed(&h60, 1, 200000, 500);
	ck_assert_uint_eq(only_finding()->severity, VITALS_SEV_INFO);
}
END_TEST

static const struct {
	const char *key, *value;
} bad_cases[] = {
	{ "top", "17" },
	{ "top", "-1" },
	{ "alpha", "1.5" },
	{ "alpha", "-0.1" },
	{ "k", "-1" },
	{ "warmup", "-2" },
	{ "persist", "0" },
	{ "persist", "9" },
	{ "floor", "cpu" },
	{ "floor", "cpu=-1" },
	{ "floor", "cpu=1x" },
	{ "min_share", "1.5" },
};

START_TEST(bad_options)
{
	contract_bad_option(&vitals_plugin, "ewma", bad_cases[_i].key,
	    bad_cases[_i].value, NULL);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "ewma");
	ck_assert_ptr_null(vitals_plugin.flush);
}
END_TEST

static Suite *
ewma_suite(void)
{
	Suite *s = suite_create("ewma");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, steady_series, 0, NCASES(steady_cases));
	tcase_add_loop_test(tc, step_burst, 0, NCASES(step_cases));
	tcase_add_test(tc, persistent_rise);
	tcase_add_test(tc, collided_rise);
	tcase_add_test(tc, intermittent_rise);
	tcase_add_test(tc, floor_option);
	tcase_add_test(tc, min_share_option);
	tcase_add_test(tc, builtin_floors);
	tcase_add_test(tc, finding_text);
	tcase_add_loop_test(tc, warmup, 0, NCASES(warm_cases));
	tcase_add_loop_test(tc, label_burst, 0, NCASES(label_cases));
	tcase_add_test(tc, new_label_rises);
	tcase_add_test(tc, rise_from_zero_unnamed);
	tcase_add_test(tc, top_zero_ignores_labels);
	tcase_add_test(tc, label_leaving_top);
	tcase_add_test(tc, label_eviction);
	tcase_add_test(tc, mover_left);
	tcase_add_test(tc, timescales_separate);
	tcase_add_test(tc, timescale_warms_alone);
	tcase_add_test(tc, vitals_option);
	tcase_add_test(tc, k_option);
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(ewma_suite());
}
