/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the peer filter: the arithmetic of filters/peer.h on
 * known values (histograms, symmetric KL, majority divergence, k of 2k-1,
 * smoothing), then hand-made slots of several hosts fed through
 * vitals_plugin.epoch against the mock core: the odd host is indicted
 * with its class, alike hosts and fewer than 3 hosts give nothing, and a
 * trained model is written and read.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../filters/peer.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define BASE_NS 1700000000000000000ULL
#define MAXH 8
#define NMET 5

/* ---- the arithmetic ---- */

static const struct {
	double p[2], q[2], want;
} kl_cases[] = {
	{ { 0.5, 0.5 }, { 0.5, 0.5 }, 0 },
	{ { 0.5, 0.5 }, { 0.9, 0.1 }, 0.4394449 },
	{ { 0.9, 0.1 }, { 0.5, 0.5 }, 0.4394449 }, /* symmetric */
	{ { 0.99, 0.01 }, { 0.01, 0.99 }, 4.5032175 },
};

START_TEST(test_skl)
{
	double lp[2], lq[2];
	int i;

	for (i = 0; i < 2; i++) {
		lp[i] = log(kl_cases[_i].p[i]);
		lq[i] = log(kl_cases[_i].q[i]);
	}
	ck_assert_double_eq_tol(
	    peer_skl(kl_cases[_i].p, lp, kl_cases[_i].q, lq, 2),
	    kl_cases[_i].want, 1e-6);
}
END_TEST

static const struct {
	double x[4];
	uint32_t n, bins;
	double lo, hi;
	double want[4];
} hist_cases[] = {
	/* one sample a bin: (1 + 1 / 4) / (4 + 1) each */
	{ { 0, 1, 2, 3 }, 4, 4, 0, 4, { 0.25, 0.25, 0.25, 0.25 } },
	/* all in the first bin: 4.5 / 5 and 0.5 / 5 */
	{ { 0, 0, 0, 0 }, 4, 2, 0, 1, { 0.9, 0.1 } },
	/* values outside the range clamp into the end bins */
	{ { -5, 10 }, 2, 2, 0, 1, { 0.5, 0.5 } },
	/* the upper bound goes in the last bin */
	{ { 1, 1, 0 }, 3, 2, 0, 1, { 1.5 / 4, 2.5 / 4 } },
};

START_TEST(test_hist)
{
	double p[4], lp[4];
	uint32_t i;

	peer_hist(hist_cases[_i].x, hist_cases[_i].n, hist_cases[_i].lo,
	    hist_cases[_i].hi, hist_cases[_i].bins, p, lp);
	for (i = 0; i < hist_cases[_i].bins; i++) {
		ck_assert_double_eq_tol(p[i], hist_cases[_i].want[i], 1e-9);
		ck_assert_double_eq_tol(lp[i], log(p[i]), 1e-12);
	}
}
END_TEST

static const struct {
	float d[6];
	uint32_t n;
	float want; /* the (n/2 + 1)-th largest */
} maj_cases[] = {
	{ { 5, 1, 1, 1 }, 4, 1 }, /* over with 1 of 4: not a majority */
	{ { 5, 5, 5, 1 }, 4, 5 }, /* 3 of 4 */
	{ { 5, 5, 1, 1 }, 4, 1 }, /* 2 of 4 is not more than half */
	{ { 3, 9, 1, 7, 5 }, 5, 5 },
	{ { 2 }, 1, 2 },
	{ { 4, 1 }, 2, 1 }, /* more than half of 2 is both */
	{ { 1, 1, 1, 1, 1, 1 }, 6, 1 },
};

START_TEST(test_majority)
{
	float d[6];

	memcpy(d, maj_cases[_i].d, sizeof(d));
	ck_assert_float_eq(
	    peer_majority(d, maj_cases[_i].n), maj_cases[_i].want);
}
END_TEST

static const struct {
	uint32_t k;
	const char *verdicts; /* oldest first, '1' anomalous */
	int want;
} kofn_cases[] = {
	{ 3, "11001", 1 },
	{ 3, "111000", 0 }, /* the oldest 1 left the 5 windows */
	{ 3, "10101", 1 },
	{ 3, "1100", 0 },
	{ 2, "101", 1 },
	{ 2, "1001", 0 },
	{ 1, "01", 1 },
	{ 1, "10", 0 },
	{ 15, "111111111111111", 1 },
};

START_TEST(test_kofn)
{
	const char *v;
	uint32_t h = 0;

	for (v = kofn_cases[_i].verdicts; *v != '\0'; v++)
		h = peer_push(h, *v == '1', kofn_cases[_i].k);
	ck_assert_int_eq(peer_kofn(h, kofn_cases[_i].k), kofn_cases[_i].want);
	ck_assert_uint_lt(h, 1u << (2 * kofn_cases[_i].k - 1) | 1u);
}
END_TEST

START_TEST(test_smooth)
{
	double x[4] = { 1, 2, 3, 4 }, y[4] = { 1, 2, 3, 4 };

	peer_smooth(x, 4, 2);
	ck_assert_double_eq(x[0], 1);
	ck_assert_double_eq(x[1], 1.5);
	ck_assert_double_eq(x[3], 3.5);
	peer_smooth(y, 4, 1);
	ck_assert_double_eq(y[2], 3);
}
END_TEST

/* ---- hand-made slots ---- */

/* The metrics of one host's epoch, sorted by name as in a stored epoch. */
static const char *const met_names[NMET] = { "proc.cpu.user_pct",
	"proc.disk.sda.await_ms", "proc.disk.sda.util_pct",
	"proc.net.eth0.rxbyt_s", "proc.tcp.retrans_s" };
static const double met_base[NMET] = { 30, 5, 20, 2e7, 2 };

struct host_epoch {
	char name[16];
	struct vitals_epoch e;
	struct vitals_metric m[NMET];
	struct vitals_vital_epoch v; /* sched, for the white-box */
	struct vitals_sample smp[3];
};

/* sched's exes; a host with `rogue` has the last one take most of it. */
static const char *const wb_exes[3] = { "/usr/bin/a", "/usr/bin/b",
	"/usr/bin/rogue" };

static struct host_epoch hs[MAXH];
static int wb_rogue = -1; /* host whose sched is mostly rogue's */
static void *cfg, *st;

/* Deterministic noise in [-1, 1) from a key. */
static double
noise(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-52 - 1;
}

static void
start(const char *const *kv)
{
	cfg = mock_config_new(&vitals_plugin);
	ck_assert_ptr_nonnull(cfg);
	for (; kv != NULL && kv[0] != NULL; kv += 2)
		ck_assert_int_eq(
		    mock_config_set(&vitals_plugin, cfg, kv[0], kv[1]), 0);
	ck_assert_int_eq(vitals_plugin.init(mock_ctx("peer"), cfg, &st), 0);
}

static void
stop(void)
{
	if (st != NULL)
		vitals_plugin.fini(st);
	st = NULL;
	mock_config_free(&vitals_plugin, cfg);
	cfg = NULL;
}

static void
teardown(void)
{
	stop();
	mock_reset();
	wb_rogue = -1;
}

/*
 * Slot s of n hosts: host `odd` (or none: -1) has metric `met` times
 * `factor`; `noisy` 0 gives every host exactly the same values.  Each
 * host is fed with the others as peers, as the aggregator does.
 */
static void
slot(uint32_t n, uint64_t s, int odd, int met, double factor, int noisy)
{
	const struct vitals_epoch *q[1], *peers[MAXH];
	uint32_t h, j, np;
	double v;

	for (h = 0; h < n; h++) {
		snprintf(hs[h].name, sizeof(hs[h].name), "h%u", h);
		hs[h].e = (struct vitals_epoch){ .host = hs[h].name,
			.start_ns = BASE_NS + s * 60000000000ull,
			.length_ns = 60000000000ull,
			.timescale_s = 60,
			.nvitals = 1,
			.vitals = &hs[h].v,
			.nmetrics = NMET,
			.metrics = hs[h].m };
		for (j = 0; j < 3; j++)
			hs[h].smp[j] = (struct vitals_sample){ .slot = j,
				.exe = wb_exes[j],
				.comm = "",
				.weight = 1,
				.count = j == 2
				    ? (wb_rogue == (int)h ? 5000 : 10)
				    : 1000 + 100 * (uint64_t)j };
		hs[h].v = (struct vitals_vital_epoch){ .name = "sched",
			.unit = "ns",
			.nsamples = 3,
			.samples = hs[h].smp };
		for (j = 0; j < NMET; j++) {
			v = met_base[j] *
			    (1 +
				(noisy ? 0.1 * noise(s * 131 + h * 7 + j) : 0));
			if ((int)h == odd && (int)j == met)
				v *= factor;
			hs[h].m[j] =
			    (struct vitals_metric){ .name = met_names[j],
				    .unit = "x",
				    .mean = v,
				    .min = v,
				    .max = v,
				    .last = v,
				    .n = 60 };
		}
	}
	for (h = 0; h < n; h++) {
		for (np = 0, j = 0; j < n; j++)
			if (j != h)
				peers[np++] = &hs[j].e;
		q[0] = &hs[h].e;
		ck_assert_int_eq(vitals_plugin.epoch(st,
				     &(struct vitals_queue){ .timescale_s = 60,
					 .n = 1,
					 .epochs = q,
					 .npeers = np,
					 .peers = peers }),
		    0);
	}
}

/* The slot (1, 2, ...) of the first finding, or 0; its host and class. */
static uint64_t
first_finding(char *host, char *cls)
{
	const struct vitals_finding *f;

	if (mock_nfindings() == 0)
		return 0;
	f = mock_finding(0);
	snprintf(host, 16, "%s", f->label ? f->label : "");
	snprintf(cls, 16, "%s", f->vital ? f->vital : "");
	return (f->start_ns - BASE_NS) / 60000000000ull + 1;
}

static const char *const small_win[] = { "win_size", "8", "win_shift", "4", "k",
	"2", NULL };

static const struct {
	const char *what;
	uint32_t n;
	int odd, met;
	double factor;
	int noisy;
	const char *host, *cls; /* NULL: no finding */
} slot_cases[] = {
	{ "slow disk", 6, 3, 1, 8, 1, "h3", "storage" },
	{ "busy disk", 5, 0, 2, 4, 1, "h0", "storage" },
	{ "cut network", 6, 5, 3, 0.2, 1, "h5", "network" },
	{ "retransmits", 4, 2, 4, 30, 1, "h2", "network" },
	{ "busy cpu", 6, 1, 0, 3, 1, "h1", "cpu" },
	{ "alike hosts, noise", 6, -1, 0, 1, 1, NULL, NULL },
	{ "identical hosts", 6, -1, 0, 1, 0, NULL, NULL },
	{ "two hosts", 2, 1, 1, 8, 1, NULL, NULL },
	{ "a small difference", 6, 2, 1, 1.1, 1, NULL, NULL },
};

START_TEST(test_slots)
{
	char host[16] = "", cls[16] = "";
	uint64_t s, at;
	unsigned i;

	start(small_win);
	for (s = 0; s < 40; s++)
		slot(slot_cases[_i].n, s, slot_cases[_i].odd,
		    slot_cases[_i].met, slot_cases[_i].factor,
		    slot_cases[_i].noisy);
	at = first_finding(host, cls);
	if (slot_cases[_i].host == NULL) {
		ck_assert_msg(mock_nfindings() == 0,
		    "%s: %u findings, first %s", slot_cases[_i].what,
		    mock_nfindings(),
		    mock_nfindings() ? mock_finding(0)->text : "");
		return;
	}
	ck_assert_msg(at > 0, "%s: no finding", slot_cases[_i].what);
	ck_assert_str_eq(host, slot_cases[_i].host);
	ck_assert_str_eq(cls, slot_cases[_i].cls);
	/* the fault is there from the start: the 2nd window (8 + 4 slots) */
	ck_assert_uint_eq(at, 12);
	for (i = 0; i < mock_nfindings(); i++) {
		ck_assert_str_eq(mock_finding(i)->label, slot_cases[_i].host);
		ck_assert_int_eq(mock_finding(i)->severity, VITALS_SEV_WARN);
		ck_assert_ptr_nonnull(
		    strstr(mock_finding(i)->text, "diverges"));
	}
}
END_TEST

/* A fault that starts late is indicted within 2 windows of its start. */
START_TEST(test_late_fault)
{
	char host[16], cls[16];
	uint64_t s;

	start(small_win);
	for (s = 0; s < 60; s++)
		slot(6, s, s >= 30 ? 4 : -1, 1, 8, 1);
	ck_assert_uint_gt(mock_nfindings(), 0);
	s = first_finding(host, cls);
	ck_assert_str_eq(host, "h4");
	ck_assert_uint_gt(s, 30);
	ck_assert_uint_le(s, 30 + 2 * 8);
}
END_TEST

/* Groups: the odd host alone in its group of 2 is compared with no one. */
START_TEST(test_groups)
{
	static const char *const kv[] = { "win_size", "8", "win_shift", "4",
		"k", "2", "groups", "db=h4 h5", NULL };
	uint64_t s;

	start(kv);
	for (s = 0; s < 40; s++)
		slot(6, s, 5, 1, 8, 1);
	ck_assert_uint_eq(mock_nfindings(), 0);
	stop();
	mock_reset();
	start(small_win);
	for (s = 0; s < 40; s++)
		slot(6, s, 5, 1, 8, 1);
	ck_assert_uint_gt(mock_nfindings(), 0);
}
END_TEST

/* Training on alike hosts writes thresholds that then indict no one. */
START_TEST(test_train)
{
	char model[] = "/tmp/check_peer_XXXXXX", path[64];
	char buf[4096];
	const char *kv[] = { "win_size", "8", "win_shift", "4", "k", "2",
		"mode", "train", "model", path, NULL };
	const char *kv2[] = { "win_size", "8", "win_shift", "4", "k", "2",
		"model", path, "threshold", "0", NULL };
	FILE *f;
	size_t len;
	uint64_t s;

	ck_assert_ptr_nonnull(mkdtemp(model));
	snprintf(path, sizeof(path), "%s/peer.model", model);
	start(kv);
	for (s = 0; s < 40; s++)
		slot(6, s, -1, 0, 1, 1);
	stop();
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"disk.await\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"filter\": \"peer\""));
	/* untrained metrics (absent here) keep threshold 0: not written */
	ck_assert_ptr_null(strstr(buf, "\"net.errors\""));
	mock_reset();
	start(kv2);
	for (s = 0; s < 40; s++)
		slot(6, s, -1, 0, 1, 1);
	ck_assert_uint_eq(mock_nfindings(), 0);
	for (s = 40; s < 80; s++)
		slot(6, s, 2, 1, 8, 1);
	ck_assert_uint_gt(mock_nfindings(), 0);
	ck_assert_str_eq(mock_finding(0)->label, "h2");
	unlink(path);
	rmdir(model);
}
END_TEST

/* White-box: the host whose sched is mostly another exe's is reported. */
START_TEST(test_whitebox)
{
	const struct vitals_finding *f;
	uint64_t s;
	unsigned i, n = 0;

	start(small_win);
	for (s = 0; s < 10; s++)
		slot(6, s, -1, 0, 1, 1);
	ck_assert_uint_eq(mock_nfindings(), 0);
	wb_rogue = 4;
	for (s = 10; s < 12; s++)
		slot(6, s, -1, 0, 1, 1);
	for (i = 0; i < mock_nfindings(); i++) {
		f = mock_finding(i);
		ck_assert_str_eq(f->vital, "sched");
		ck_assert_str_eq(f->label, "h4");
		ck_assert_ptr_nonnull(strstr(f->text, "/usr/bin/rogue"));
		n++;
	}
	/* k = 2: reported from the second slot on */
	ck_assert_uint_eq(n, 1);
}
END_TEST

static const struct {
	const char *key, *value;
} bad_cases[] = {
	{ "win_shift", "100" },
	{ "mode", "guess" },
	{ "groups", "nameless" },
	{ "groups", "=h1" },
	{ "vitals", "a,b,c,d,e" },
};

START_TEST(test_check)
{
	void *b = mock_config_new(&vitals_plugin);

	ck_assert_int_eq(mock_check(&vitals_plugin, b), 0);
	ck_assert_int_eq(mock_config_set(&vitals_plugin, b, bad_cases[_i].key,
			     bad_cases[_i].value),
	    0);
	ck_assert_int_ne(mock_check(&vitals_plugin, b), 0);
	mock_config_free(&vitals_plugin, b);
}
END_TEST

/* Train mode without a model is refused. */
START_TEST(test_train_needs_model)
{
	void *b = mock_config_new(&vitals_plugin);

	ck_assert_int_eq(
	    mock_config_set(&vitals_plugin, b, "mode", "train"), 0);
	ck_assert_int_ne(mock_check(&vitals_plugin, b), 0);
	mock_config_free(&vitals_plugin, b);
}
END_TEST

static Suite *
peer_suite(void)
{
	Suite *s = suite_create("peer");
	TCase *tc = tcase_create("math");

	tcase_add_loop_test(tc, test_skl, 0, NCASES(kl_cases));
	tcase_add_loop_test(tc, test_hist, 0, NCASES(hist_cases));
	tcase_add_loop_test(tc, test_majority, 0, NCASES(maj_cases));
	tcase_add_loop_test(tc, test_kofn, 0, NCASES(kofn_cases));
	tcase_add_test(tc, test_smooth);
	suite_add_tcase(s, tc);
	tc = tcase_create("slots");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_slots, 0, NCASES(slot_cases));
	tcase_add_test(tc, test_late_fault);
	tcase_add_test(tc, test_groups);
	tcase_add_test(tc, test_train);
	tcase_add_test(tc, test_whitebox);
	tcase_add_loop_test(tc, test_check, 0, NCASES(bad_cases));
	tcase_add_test(tc, test_train_needs_model);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(peer_suite());
}
