/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the threshold filter against the mock core: hand-made
 * epochs (tests/epochs.h) with known weights per exe, rules that do and
 * do not hold, scaling of partial epochs and rollups, and bad rule text.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "epochs.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define MIB 1048576.0

static void *cfg, *st;
static struct tep_queue *q;

/* Start with option pairs (NULL-terminated); returns what init returned. */
static int
start(const char *const *kv)
{
	cfg = contract_config(&vitals_plugin, NULL, kv);
	return vitals_plugin.init(mock_ctx("threshold"), cfg, &st);
}

static void
start_rules(const char *rules)
{
	const char *kv[] = { "rules", rules, NULL };

	ck_assert_int_eq(start(kv), 0);
}

static void
setup(void)
{
	cfg = st = NULL;
	q = tep_queue_new(60, 16);
}

static void
teardown(void)
{
	contract_stop(&vitals_plugin, cfg, st);
	tep_queue_free(q);
}

/*
 * A 60 s epoch: cpu 4000 samples of yes + 1000 of sshd; sched 80 ms of
 * sshd + 20 ms of yes over 10 events; diskio 200 MiB of dd in 100
 * requests; syscall 5 calls of yes.
 */
static void
fill(struct tep_epoch *e)
{
	tep_add(e, "cpu",
	    &(struct tep_ev){ .exe = "/usr/bin/yes",
		.comm = "yes",
		.label = 1,
		.events = 4000 });
	tep_add(e, "cpu",
	    &(struct tep_ev){ .exe = "/usr/sbin/sshd",
		.comm = "sshd",
		.label = 2,
		.events = 1000 });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/sbin/sshd",
		.comm = "sshd",
		.label = 16,
		.weight = 80000000,
		.events = 8 });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/bin/yes",
		.comm = "yes",
		.label = 17,
		.weight = 20000000,
		.events = 2 });
	tep_add(e, "diskio",
	    &(struct tep_ev){ .exe = "/usr/bin/dd",
		.comm = "dd",
		.label = 32,
		.weight = 200 * 1048576ULL,
		.events = 100 });
	tep_add(e, "syscall",
	    &(struct tep_ev){ .exe = "/usr/bin/yes",
		.comm = "yes",
		.label = 48,
		.events = 5 });
}

static void
run_one(void)
{
	fill(tep_queue_next(q));
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
}

/* ---- one rule on the standard epoch ---- */

static const struct {
	const char *rule;
	unsigned findings;
	const char *vital, *label; /* of the finding */
	double value;
} rule_cases[] = {
	{ "cpu.wsum > 4999", 1, "cpu", "/usr/bin/yes", 5000 },
	{ "cpu.wsum > 5000", 0, NULL, NULL, 0 },
	{ "cpu.wsum >= 5000", 1, "cpu", "/usr/bin/yes", 5000 },
	{ "cpu.wsum < 5000", 0, NULL, NULL, 0 },
	{ "cpu.wsum <= 5000", 1, "cpu", NULL, 5000 },
	{ "cpu.events > 4K", 1, "cpu", "/usr/bin/yes", 5000 },
	{ "diskio.wsum > 100M", 1, "diskio", "/usr/bin/dd", 200 * MIB },
	{ "diskio.wsum > 0.25G", 0, NULL, NULL, 0 },
	{ "diskio.events >= 100", 1, "diskio", "/usr/bin/dd", 100 },
	{ "sched.wsum > 99ms", 1, "sched", "/usr/sbin/sshd", 1e8 },
	{ "sched.wsum > 0.1s", 0, NULL, NULL, 0 },
	{ "sched.wsum@/usr/sbin/sshd > 50ms", 1, "sched", "/usr/sbin/sshd",
	    8e7 },
	{ "sched.wsum@/usr/bin/yes > 50ms", 0, NULL, NULL, 0 },
	{ "sched.wsum@sshd > 50ms", 1, "sched", "/usr/sbin/sshd", 8e7 },
	{ "sched.wsum@/usr/bin/yes < 50ms", 1, "sched", "/usr/bin/yes", 2e7 },
	{ "sched.events@/usr/sbin/sshd > 7", 1, "sched", "/usr/sbin/sshd", 8 },
	{ "syscall.events < 10", 1, "syscall", NULL, 5 },
	{ "syscall.events <= 5", 1, "syscall", NULL, 5 },
	{ "syscall.events < 5", 0, NULL, NULL, 0 },
	{ "cpu.events@/usr/bin/yes > 3999", 1, "cpu", "/usr/bin/yes", 4000 },
	{ "cpu.unique > 1", 1, "cpu", "/usr/bin/yes", 2 },
	{ "cpu.unique@/usr/bin/yes > 1", 0, NULL, NULL, 0 },
	{ "cpu.events@/usr/bin/gone < 1", 1, "cpu", "/usr/bin/gone", 0 },
	{ "cpu.events@/usr/bin/gone > 0", 0, NULL, NULL, 0 },
	{ "cpu.dropped > 0", 0, NULL, NULL, 0 },
	{ "lock.wsum > 1", 0, NULL, NULL, 0 },
	{ "lock.wsum < 1", 0, NULL, NULL, 0 },
};

START_TEST(one_rule)
{
	const struct vitals_finding *f;

	start_rules(rule_cases[_i].rule);
	run_one();
	ck_assert_msg(mock_nfindings() == rule_cases[_i].findings,
	    "%s: %u findings", rule_cases[_i].rule, mock_nfindings());
	if (rule_cases[_i].findings == 0)
		return;
	f = mock_finding(0);
	ck_assert_str_eq(f->filter, "threshold");
	ck_assert_str_eq(f->vital, rule_cases[_i].vital);
	if (rule_cases[_i].label == NULL)
		ck_assert_ptr_null(f->label);
	else
		ck_assert_str_eq(f->label, rule_cases[_i].label);
	ck_assert_double_eq_tol(f->value, rule_cases[_i].value, 1e-6);
	ck_assert_uint_eq(f->severity, VITALS_SEV_WARN);
	ck_assert_uint_eq(f->timescale_s, 60);
	ck_assert_uint_eq(f->start_ns, tep_start_ns(60, 0));
	ck_assert_uint_eq(f->end_ns, tep_start_ns(60, 1));
	ck_assert_ptr_nonnull(strstr(f->text, rule_cases[_i].rule));
}
END_TEST

START_TEST(finding_text)
{
	const struct vitals_finding *f;

	start_rules("cpu.wsum > 4999, sched.wsum@sshd > 50ms, "
		    "cpu.events@/x < 1, cpu.unique > 1");
	run_one();
	ck_assert_uint_eq(mock_nfindings(), 4);
	f = mock_finding(0);
	ck_assert_str_eq(f->text,
	    "cpu weighted sum was 5000 samples per 60 s, above the bound "
	    "4999 samples of rule 1 (cpu.wsum > 4999); /usr/bin/yes had 80% "
	    "of the vital's weight");
	ck_assert_double_eq_tol(f->expected, 4999, 1e-9);
	ck_assert_double_eq_tol(f->score, 1.0 / 4999, 1e-9);
	ck_assert_str_eq(mock_finding(1)->text,
	    "sched weighted sum of /usr/sbin/sshd was 80.0 ms per 60 s, "
	    "above the bound 50.0 ms of rule 2 (sched.wsum@sshd > 50ms)");
	ck_assert_str_eq(mock_finding(2)->text,
	    "cpu events of /x was 0 per 60 s, below the bound 1 of rule 3 "
	    "(cpu.events@/x < 1); /x was not seen");
	ck_assert_str_eq(mock_finding(3)->text,
	    "cpu unique labels was 2, above the bound 1 of rule 4 "
	    "(cpu.unique > 1); /usr/bin/yes had 80% of the vital's weight");
}
END_TEST

/*
 * ---- a bound crossed epoch after epoch: one incident per rule, said at
 * its first epoch; back within the bound, its end, at info ----
 */

START_TEST(every_epoch)
{
	struct tep_epoch *e;
	unsigned i;

	start_rules("cpu.wsum > 100, syscall.events < 3, diskio.wsum > 1M");
	for (i = 0; i < 3; i++)
		run_one();
	ck_assert_uint_eq(mock_nfindings(), 2);
	for (i = 0; i < 2; i++) {
		ck_assert_str_eq(
		    mock_finding(i)->vital, i % 2 == 0 ? "cpu" : "diskio");
		ck_assert_uint_eq(
		    mock_finding(i)->start_ns, tep_start_ns(60, 0));
		ck_assert_uint_eq(mock_finding(i)->severity, VITALS_SEV_WARN);
	}
	/* cpu back under its bound: the end of its incident only. */
	e = tep_queue_next(q);
	tep_add(e, "cpu",
	    &(struct tep_ev){
		.exe = "/usr/bin/yes", .label = 1, .events = 50 });
	tep_add(e, "diskio",
	    &(struct tep_ev){
		.exe = "/usr/bin/dd", .label = 2, .weight = 4 << 20 });
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), 3);
	ck_assert_uint_eq(mock_finding(2)->severity, VITALS_SEV_INFO);
	ck_assert_str_eq(mock_finding(2)->vital, "cpu");
	ck_assert_ptr_nonnull(
	    strstr(mock_finding(2)->text, "back within the bound of rule 1"));
	ck_assert_uint_eq(mock_finding(2)->start_ns, tep_start_ns(60, 0));
}
END_TEST

/* A vital that comes and goes: checked when there, logged once when not. */
START_TEST(absent_vital_logged_once)
{
	struct tep_epoch *e;
	unsigned i;

	start_rules("lock.wsum > 1ms");
	for (i = 0; i < 3; i++)
		run_one();
	ck_assert_uint_eq(mock_nfindings(), 0);
	ck_assert_uint_eq(mock_nlogs(), 1);
	ck_assert_ptr_nonnull(strstr(mock_last_log(), "'lock' absent"));
	e = tep_queue_next(q);
	tep_add(e, "lock",
	    &(struct tep_ev){
		.exe = "/usr/bin/db", .label = 9, .weight = 5000000 });
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), 1);
	ck_assert_str_eq(mock_finding(0)->label, "/usr/bin/db");
	run_one();
	ck_assert_uint_eq(mock_nlogs(), 1);
}
END_TEST

/* ---- severity: the option, and a rule's own ---- */

static const struct {
	const char *option; /* NULL: default */
	const char *rule;
	unsigned severity;
} sev_cases[] = {
	{ NULL, "cpu.wsum > 1", VITALS_SEV_WARN },
	{ "crit", "cpu.wsum > 1", VITALS_SEV_CRIT },
	{ "info", "cpu.wsum > 1", VITALS_SEV_INFO },
	{ "info", "cpu.wsum > 1 crit", VITALS_SEV_CRIT },
	{ NULL, "cpu.wsum > 1 info", VITALS_SEV_INFO },
};

START_TEST(severity)
{
	const char *kv[] = { "rules", sev_cases[_i].rule, "severity",
		sev_cases[_i].option, NULL };

	if (sev_cases[_i].option == NULL)
		kv[2] = NULL;
	ck_assert_int_eq(start(kv), 0);
	run_one();
	ck_assert_uint_eq(mock_nfindings(), 1);
	ck_assert_uint_eq(mock_finding(0)->severity, sev_cases[_i].severity);
}
END_TEST

/* ---- values are per nominal base epoch ---- */

static const struct {
	const char *rule;
	unsigned findings;
	double value;
} partial_cases[] = {
	{ "cpu.wsum > 9999", 1, 10000 }, /* 5000 in 30 s = 10000 per 60 s */
	{ "cpu.wsum > 10000", 0, 0 },
	{ "cpu.unique > 1", 1, 2 }, /* not scaled */
	{ "sched.wsum@sshd >= 160ms", 1, 1.6e8 },
};

START_TEST(partial_epoch_scaled)
{
	struct tep_epoch *e;

	start_rules(partial_cases[_i].rule);
	e = tep_queue_next(q);
	fill(e);
	tep_partial(e, 30);
	ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), partial_cases[_i].findings);
	if (partial_cases[_i].findings > 0)
		ck_assert_double_eq_tol(
		    mock_finding(0)->value, partial_cases[_i].value, 1e-3);
}
END_TEST

START_TEST(rollup_scaled)
{
	struct tep_epoch *base[5], *roll;
	struct tep_queue *q300 = tep_queue_new(300, 4);
	unsigned i;

	start_rules("cpu.wsum > 4999, cpu.wsum > 5001, "
		    "sched.wsum@/usr/sbin/sshd > 79ms");
	roll = tep_queue_next(q300);
	for (i = 0; i < 5; i++) {
		base[i] = tep_epoch_new(60, i);
		fill(base[i]);
		tep_merge(roll, base[i]);
	}
	ck_assert_int_eq(tep_queue_run(q300, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), 2);
	ck_assert_double_eq_tol(mock_finding(0)->value, 5000, 1e-6);
	ck_assert_uint_eq(mock_finding(0)->timescale_s, 300);
	ck_assert_uint_eq(mock_finding(0)->end_ns, tep_start_ns(300, 1));
	ck_assert_str_eq(mock_finding(1)->label, "/usr/sbin/sshd");
	ck_assert_double_eq_tol(mock_finding(1)->value, 8e7, 1);
	tep_queue_free(q300);
	for (i = 0; i < 5; i++)
		tep_epoch_free(base[i]);
}
END_TEST

/* ---- bad rule text: init fails naming the rule and the token ---- */

static const struct {
	const char *rules;
	const char *message;
} bad_cases[] = {
	{ "cpu.wsum", "rule 1 'cpu.wsum': missing operator" },
	{ "cpu.wsum >", "rule 1 'cpu.wsum >': missing value" },
	{ "cpu.wsun > 5", "unknown field 'wsun'" },
	{ "cpu > 5", "bad subject 'cpu'" },
	{ ".wsum > 5", "bad subject '.wsum'" },
	{ "cpu.wsum >> 5", "bad operator '>>'" },
	{ "cpu.wsum = 5", "bad operator '='" },
	{ "cpu.wsum > 5X", "bad value '5X'" },
	{ "cpu.wsum > fast", "bad value 'fast'" },
	{ "cpu.wsum > 5 loud", "unexpected 'loud'" },
	{ "cpu.wsum > 5 warn extra", "unexpected 'extra'" },
	{ "cpu.dropped@/bin/x > 1", "field 'dropped' has no per-exe value" },
	{ "diskio.wsum > 5ms", "vital 'diskio' does not weigh time" },
	{ "sched.events > 5ms", "a duration bounds only the wsum field" },
	{ "cpu.wsum@ > 5", "empty exe after '@'" },
	{ "cpu.wsum > 5, sched.wsum >< 1",
	    "rule 2 'sched.wsum >< 1': bad operator '><'" },
	/* A comma list drops empty items (a YAML sequence keeps them). */
	{ "cpu.wsum > 5, , x", "rule 2 'x': bad subject 'x'" },
};

/* An empty item of a YAML sequence is an empty rule. */
START_TEST(empty_rule)
{
	char *items[] = { "cpu.wsum > 5", "", "x" };

	cfg = mock_config_new(&vitals_plugin);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(
	    mock_config_set_list(&vitals_plugin, cfg, "rules", items, 3), 0);
	ck_assert_int_eq(
	    vitals_plugin.init(mock_ctx("threshold"), cfg, &st), -EINVAL);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(
	    strstr(mock_last_error(), "rule 2 '': empty rule"));
}
END_TEST

START_TEST(bad_rules)
{
	const char *kv[] = { "rules", bad_cases[_i].rules, NULL };
	int rc;

	rc = start(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, bad_cases[_i].message);
}
END_TEST

static const struct {
	const char *key, *value, *message;
} bad_option_cases[] = {
	{ "severity", "loud", "option 'severity': 'loud'" },
	{ "rules", "", "option 'rules' is empty" },
};

START_TEST(bad_options)
{
	const char *kv[] = { bad_option_cases[_i].key,
		bad_option_cases[_i].value, NULL, NULL, NULL };
	int rc;

	if (strcmp(kv[0], "rules") != 0) {
		kv[2] = "rules";
		kv[3] = "cpu.wsum > 1";
	}
	rc = start(kv);
	contract_refused(
	    &vitals_plugin, cfg, rc, st, bad_option_cases[_i].message);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "threshold");
}
END_TEST

static Suite *
threshold_suite(void)
{
	Suite *s = suite_create("threshold");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, one_rule, 0, NCASES(rule_cases));
	tcase_add_test(tc, finding_text);
	tcase_add_test(tc, every_epoch);
	tcase_add_test(tc, absent_vital_logged_once);
	tcase_add_loop_test(tc, severity, 0, NCASES(sev_cases));
	tcase_add_loop_test(tc, partial_epoch_scaled, 0, NCASES(partial_cases));
	tcase_add_test(tc, rollup_scaled);
	tcase_add_loop_test(tc, bad_rules, 0, NCASES(bad_cases));
	tcase_add_test(tc, empty_rule);
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_option_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(threshold_suite());
}
