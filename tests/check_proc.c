/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the proc probe with the mock core: two snapshots of /proc
 * text from tests/fixtures/proc/CASE/{a,b} are put in a temporary root in
 * turn, the timer fires once, and every metric is checked against values
 * worked out by hand from the fixtures with the sysstat formulas.
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

/* The files of a snapshot, relative to the root. */
static const char *const files[] = { "stat", "meminfo", "diskstats", "net/dev",
	"net/snmp" };
#define NFILES (sizeof(files) / sizeof(files[0]))

static char *root;
static void *cfg, *st;

/* ---- the temporary root ---- */

static void
setup(void)
{
	root = testutil_tmpdir("check_proc");
	cfg = st = NULL;
}

static void
teardown(void)
{
	if (st != NULL)
		vitals_plugin.fini(st);
	mock_config_free(&vitals_plugin, cfg);
	cfg = st = NULL;
	mock_reset();
	testutil_tmpdir_remove(root);
	root = NULL;
}

/* Write text to root/rel, making root/net as needed. */
static void
put_text(const char *rel, const char *text)
{
	mkdir(testutil_path(root, "net"), 0755);
	testutil_write_file(testutil_path(root, rel), text);
}

/* Make root hold snapshot `snap` (a or b) of a fixture case. */
static void
use_snapshot(const char *fixture, const char *snap)
{
	const char *src = getenv("top_srcdir");
	char path[512], text[16384];
	size_t i, n;
	FILE *f;

	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/tests/fixtures/proc/%s/%s/%s",
		    src != NULL ? src : ".", fixture, snap, files[i]);
		if ((f = fopen(path, "r")) == NULL) {
			snprintf(path, sizeof(path), "%s/%s", root, files[i]);
			unlink(path); /* this case has no such file */
			continue;
		}
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		put_text(files[i], text);
	}
}

/* Start the probe on root with the options in kv (NULL-terminated pairs). */
static int
start(const char *const *kv)
{
	int r;

	ck_assert_ptr_nonnull(cfg = mock_config_new(&vitals_plugin));
	ck_assert_int_eq(mock_config_set(&vitals_plugin, cfg, "root", root), 0);
	for (; kv != NULL && kv[0] != NULL; kv += 2)
		ck_assert_int_eq(
		    mock_config_set(&vitals_plugin, cfg, kv[0], kv[1]), 0);
	r = vitals_plugin.init(mock_ctx("proc"), cfg, &st);
	if (r != 0)
		st = NULL;
	return r;
}

/* Snapshot a at init, b at the first tick (2 s later). */
static void
run_case(const char *fixture, const char *const *kv)
{
	use_snapshot(fixture, "a");
	ck_assert_int_eq(start(kv), 0);
	ck_assert_uint_eq(mock_ntimers(), 1);
	ck_assert_uint_eq(mock_nmetrics(), 0); /* init only reads */
	use_snapshot(fixture, "b");
	ck_assert_int_eq(mock_timer_fire(0, 1), 0);
}

/* ---- expected values ---- */

struct want {
	const char *name;
	double value; /* NAN: must be absent */
	const char *unit; /* NULL: not checked */
};

#define ABSENT NAN

static void
check_wants(const struct want *w)
{
	const struct mock_metric *m;
	double tol;

	for (; w->name != NULL; w++) {
		m = mock_metric(w->name);
		if (isnan(w->value)) {
			ck_assert_msg(m == NULL,
			    "%s: present (%.17g), want absent", w->name,
			    m != NULL ? m->last : 0.0);
			continue;
		}
		ck_assert_msg(
		    m != NULL, "%s: absent, want %.17g", w->name, w->value);
		ck_assert_msg(m->n == 1, "%s: %llu observations", w->name,
		    (unsigned long long)m->n);
		tol = 1e-9 * (fabs(w->value) > 1 ? fabs(w->value) : 1);
		ck_assert_msg(fabs(m->last - w->value) <= tol,
		    "%s: %.17g, want %.17g", w->name, m->last, w->value);
		if (w->unit != NULL)
			ck_assert_msg(strcmp(m->unit, w->unit) == 0,
			    "%s: unit '%s', want '%s'", w->name, m->unit,
			    w->unit);
	}
}

/* No metric name may contain any of these. */
static void
check_none(const char *const *parts)
{
	const struct mock_metric *m;
	unsigned i;
	size_t j;

	for (i = 0; (m = mock_metric_at(i)) != NULL; i++)
		for (j = 0; parts[j] != NULL; j++)
			ck_assert_msg(strstr(m->name, parts[j]) == NULL,
			    "metric %s should not be reported", m->name);
	ck_assert_uint_eq(mock_metric_refused(), 0);
}

static const char *const two_s[] = { "interval", "2s", NULL };

/*
 * fixtures/proc/basic over 2 s.  cpu deltas: user 600 (guest 100), nice
 * 50 (guest_nice 10), system 150 + irq 30 + softirq 20, idle 1100,
 * iowait 100, steal 60: 2000 ticks.  sda: 200 reads, 300 writes, 100
 * discards, sectors 16000/24000/8000, ticks 1000/1600/400, busy 1500 ms,
 * queue 2400 ms.  nvme0n1 (no discard fields): 100/100 I/Os, sectors
 * 800/1600, ticks 50/150, busy 100, queue 200.
 */
static const struct want basic_wants[] = {
	{ "proc.cpu.user_pct", 25, "%" },
	{ "proc.cpu.nice_pct", 2, "%" },
	{ "proc.cpu.system_pct", 10, "%" },
	{ "proc.cpu.iowait_pct", 5, "%" },
	{ "proc.cpu.steal_pct", 3, "%" },
	{ "proc.cpu.idle_pct", 55, "%" },
	{ "proc.sys.cswch_s", 5000, "1/s" },
	{ "proc.sys.intr_s", 2000, "1/s" },
	{ "proc.sys.proc_s", 25, "1/s" },
	{ "proc.sys.runq_sz", 7, "tasks" },
	{ "proc.sys.blocked", 2, "tasks" },
	{ "proc.mem.free_bytes", 4000000 * 1024.0, "bytes" },
	{ "proc.mem.available_bytes", 10000000 * 1024.0, "bytes" },
	{ "proc.mem.buffers_bytes", 500000 * 1024.0, "bytes" },
	{ "proc.mem.cached_bytes", 5000000 * 1024.0, "bytes" },
	{ "proc.mem.dirty_bytes", 1234 * 1024.0, "bytes" },
	/* 16000000 - 4000000 - 500000 - 5000000 - 500000 (slab) kB */
	{ "proc.mem.used_bytes", 6000000 * 1024.0, "bytes" },
	{ "proc.mem.memused_pct", 37.5, "%" },
	{ "proc.disk.sda.r_s", 100, "1/s" },
	{ "proc.disk.sda.w_s", 150, "1/s" },
	{ "proc.disk.sda.tps", 300, "1/s" },
	{ "proc.disk.sda.rd_sec_s", 8000, "sectors/s" },
	{ "proc.disk.sda.wr_sec_s", 12000, "sectors/s" },
	{ "proc.disk.sda.avgrq_sz", 80, "sectors" },
	{ "proc.disk.sda.await_ms", 5, "ms" },
	{ "proc.disk.sda.svctm_ms", 2.5, "ms" },
	{ "proc.disk.sda.util_pct", 75, "%" },
	{ "proc.disk.sda.avgqu_sz", 1.2, "requests" },
	{ "proc.disk.nvme0n1.r_s", 50, NULL },
	{ "proc.disk.nvme0n1.w_s", 50, NULL },
	{ "proc.disk.nvme0n1.tps", 100, NULL },
	{ "proc.disk.nvme0n1.rd_sec_s", 400, NULL },
	{ "proc.disk.nvme0n1.wr_sec_s", 800, NULL },
	{ "proc.disk.nvme0n1.avgrq_sz", 12, NULL },
	{ "proc.disk.nvme0n1.await_ms", 1, NULL },
	{ "proc.disk.nvme0n1.svctm_ms", 0.5, NULL },
	{ "proc.disk.nvme0n1.util_pct", 5, NULL },
	{ "proc.disk.nvme0n1.avgqu_sz", 0.1, NULL },
	/* idle: no I/O gives 0, not a division by zero */
	{ "proc.disk.dm-0.r_s", 0, NULL },
	{ "proc.disk.dm-0.await_ms", 0, NULL },
	{ "proc.disk.dm-0.svctm_ms", 0, NULL },
	{ "proc.disk.dm-0.avgrq_sz", 0, NULL },
	{ "proc.disk.dm-0.util_pct", 0, NULL },
	{ "proc.disk.md127.tps", 0, NULL },
	/* 10 reads of 80 sectors, 1 ms each, 1 ms busy, 1 ms queued */
	{ "proc.disk.mmcblk0.r_s", 5, NULL },
	{ "proc.disk.mmcblk0.await_ms", 0.1, NULL },
	{ "proc.disk.mmcblk0.util_pct", 0.05, NULL },
	{ "proc.disk.mmcblk0.avgqu_sz", 0.0005, NULL },
	/* new since the first read: no rate yet */
	{ "proc.disk.sdb.r_s", ABSENT, NULL },
	{ "proc.net.eth0.rxpck_s", 1000, "packets/s" },
	{ "proc.net.eth0.txpck_s", 1500, "packets/s" },
	{ "proc.net.eth0.rxbyt_s", 100000, "bytes/s" },
	{ "proc.net.eth0.txbyt_s", 200000, "bytes/s" },
	{ "proc.net.eth0.rxerr_s", 2, "packets/s" },
	{ "proc.net.eth0.txerr_s", 1, "packets/s" },
	{ "proc.net.eth0.rxdrop_s", 3, "packets/s" },
	{ "proc.net.eth0.txdrop_s", 4, "packets/s" },
	/* "eth0.100" (a VLAN) cannot be a dotted part: '.' becomes '_' */
	{ "proc.net.eth0_100.rxbyt_s", 100, NULL },
	{ "proc.net.eth0_100.txpck_s", 1, NULL },
	/* "eth1:4096 ..." (no blank after the colon) */
	{ "proc.net.eth1.rxbyt_s", 2048, NULL },
	{ "proc.net.eth1.rxpck_s", 4, NULL },
	{ "proc.net.eth1.txbyt_s", 1024, NULL },
	{ "proc.net.eth1.txpck_s", 2, NULL },
	{ "proc.tcp.active_s", 10, "1/s" },
	{ "proc.tcp.passive_s", 5, "1/s" },
	{ "proc.tcp.retrans_s", 3, "segments/s" },
	{ "proc.tcp.isegerr_s", 1, "segments/s" },
	/* Udp, not UdpLite (whose counters jumped by millions) */
	{ "proc.udp.idgm_s", 500, "datagrams/s" },
	{ "proc.udp.noport_s", 2, "datagrams/s" },
	{ "proc.udp.idgmerr_s", 1, "datagrams/s" },
	{ "proc.udp.odgm_s", 1500, "datagrams/s" },
	{ NULL, 0, NULL },
};

/* Partitions, loop/ram/zram and lo are left out by default. */
static const char *const basic_none[] = { "sda1", "sda2", "nvme0n1p1",
	"mmcblk0p1", "loop", "ram", ".net.lo.", NULL };

START_TEST(test_basic)
{
	run_case("basic", two_s);
	check_wants(basic_wants);
	check_none(basic_none);
	/* 6 cpu, 5 sys, 7 mem, 5 disks read twice x 10, 3 interfaces x 8,
	 * 8 snmp: nothing else */
	ck_assert_uint_eq(mock_nmetrics(), 6 + 5 + 7 + 5 * 10 + 3 * 8 + 8);
}
END_TEST

/* The same reads 1 s apart: every rate doubles, shares and sizes do not. */
START_TEST(test_interval_scales_rates)
{
	static const struct want w[] = {
		{ "proc.sys.cswch_s", 10000, NULL },
		{ "proc.disk.sda.r_s", 200, NULL },
		{ "proc.disk.sda.util_pct", 100, NULL }, /* 150%, capped */
		{ "proc.disk.sda.avgqu_sz", 2.4, NULL },
		{ "proc.disk.sda.await_ms", 5, NULL },
		{ "proc.net.eth0.rxbyt_s", 200000, NULL },
		{ "proc.udp.odgm_s", 3000, NULL },
		{ "proc.cpu.user_pct", 25, NULL },
		{ "proc.mem.memused_pct", 37.5, NULL },
		{ NULL, 0, NULL },
	};

	run_case("basic", NULL);
	ck_assert_uint_eq(mock_timer_interval(0), 1000000000ULL);
	check_wants(w);
}
END_TEST

/*
 * fixtures/proc/backwards: basic with counters that went backwards in b:
 * iowait, every sda counter (the disk was removed and added again),
 * nvme0n1's sectors read, eth0's 32-bit rx bytes (wrapped), TCP
 * retransmits.  Those metrics skip the interval; the others do not.
 */
static const struct want backwards_wants[] = {
	{ "proc.cpu.user_pct", ABSENT, NULL },
	{ "proc.cpu.idle_pct", ABSENT, NULL },
	{ "proc.cpu.iowait_pct", ABSENT, NULL },
	{ "proc.sys.cswch_s", 5000, NULL },
	{ "proc.disk.sda.r_s", ABSENT, NULL },
	{ "proc.disk.sda.tps", ABSENT, NULL },
	{ "proc.disk.sda.await_ms", ABSENT, NULL },
	{ "proc.disk.sda.svctm_ms", ABSENT, NULL },
	{ "proc.disk.sda.util_pct", ABSENT, NULL },
	{ "proc.disk.sda.avgqu_sz", ABSENT, NULL },
	{ "proc.disk.sda.rd_sec_s", ABSENT, NULL },
	{ "proc.disk.nvme0n1.rd_sec_s", ABSENT, NULL },
	{ "proc.disk.nvme0n1.avgrq_sz", ABSENT, NULL },
	{ "proc.disk.nvme0n1.wr_sec_s", 800, NULL },
	{ "proc.disk.nvme0n1.r_s", 50, NULL },
	{ "proc.disk.nvme0n1.await_ms", 1, NULL },
	{ "proc.disk.nvme0n1.util_pct", 5, NULL },
	{ "proc.net.eth0.rxbyt_s", ABSENT, NULL },
	{ "proc.net.eth0.rxpck_s", 1000, NULL },
	{ "proc.net.eth0.txbyt_s", 200000, NULL },
	{ "proc.tcp.retrans_s", ABSENT, NULL },
	{ "proc.tcp.active_s", 10, NULL },
	{ NULL, 0, NULL },
};

START_TEST(test_backwards)
{
	const struct mock_metric *m;
	unsigned i;

	run_case("backwards", two_s);
	check_wants(backwards_wants);
	/* Nothing huge anywhere: a wrap never becomes a rate. */
	for (i = 0; (m = mock_metric_at(i)) != NULL; i++)
		ck_assert_msg(m->last >= 0 && m->last < 1e11, "%s = %g",
		    m->name, m->last);
}
END_TEST

/*
 * fixtures/proc/old: an old kernel's files: 4 cpu fields, no
 * procs_running, no MemAvailable, Dirty or Slab, 11 disk counters, no
 * net/snmp.  What is there is computed, the rest left out.
 */
static const struct want old_wants[] = {
	{ "proc.cpu.user_pct", 10, NULL },
	{ "proc.cpu.system_pct", 10, NULL },
	{ "proc.cpu.idle_pct", 80, NULL },
	{ "proc.cpu.steal_pct", 0, NULL },
	{ "proc.sys.cswch_s", 1000, NULL },
	{ "proc.sys.proc_s", 2, NULL },
	{ "proc.sys.intr_s", ABSENT, NULL },
	{ "proc.sys.runq_sz", ABSENT, NULL },
	{ "proc.mem.available_bytes", ABSENT, NULL },
	{ "proc.mem.dirty_bytes", ABSENT, NULL },
	{ "proc.mem.used_bytes", 500000 * 1024.0, NULL },
	{ "proc.mem.memused_pct", 50, NULL },
	{ "proc.disk.hda.r_s", 10, NULL },
	{ "proc.disk.hda.tps", 10, NULL },
	{ "proc.disk.hda.avgrq_sz", 8, NULL },
	{ "proc.disk.hda.await_ms", 2, NULL },
	{ "proc.disk.hda.svctm_ms", 1, NULL },
	{ "proc.disk.hda.util_pct", 1, NULL },
	{ "proc.disk.hda.avgqu_sz", 0.02, NULL },
	{ "proc.disk.hda1.r_s", ABSENT, NULL },
	{ "proc.net.eth0.rxbyt_s", 100, NULL },
	{ "proc.net.eth0.txpck_s", 2, NULL },
	{ "proc.tcp.active_s", ABSENT, NULL },
	{ NULL, 0, NULL },
};

START_TEST(test_old_kernel)
{
	run_case("old", two_s);
	check_wants(old_wants);
	/* The missing file was said, once, naming it. */
	ck_assert_ptr_nonnull(strstr(mock_last_log(), "net/snmp"));
	ck_assert_uint_eq(mock_nlogs(), 1);
	mock_timer_fire(0, 1);
	ck_assert_uint_eq(mock_nlogs(), 1);
}
END_TEST

/* ---- the disks and interfaces options ---- */

struct filter_case {
	const char *disks, *interfaces; /* option values, NULL = default */
	const char *const present[6]; /* a metric of each listed device */
	const char *const absent[6];
};

static const struct filter_case filter_cases[] = {
	{ "sda1,loop0", NULL,
	    { "proc.disk.sda1.r_s", "proc.disk.loop0.r_s",
		"proc.net.eth0.rxpck_s" },
	    { "proc.disk.sda.r_s", "proc.disk.nvme0n1.r_s",
		"proc.net.lo.rxpck_s" } },
	{ NULL, "lo, eth9", { "proc.net.lo.rxpck_s", "proc.disk.sda.r_s" },
	    { "proc.net.eth0.rxpck_s", "proc.net.eth1.rxpck_s",
		"proc.net.eth9.rxpck_s", "proc.disk.sda1.r_s" } },
	{ "nvme0n1p1,zram0", "eth0.100",
	    { "proc.disk.nvme0n1p1.r_s", "proc.disk.zram0.w_s",
		"proc.net.eth0_100.rxpck_s" },
	    { "proc.disk.nvme0n1.r_s", "proc.disk.sda.r_s",
		"proc.net.eth0.rxpck_s", "proc.net.lo.rxpck_s" } },
};

START_TEST(test_filters)
{
	const struct filter_case *c = &filter_cases[_i];
	const char *kv[7] = { "interval", "2s" };
	size_t n = 2, i;

	if (c->disks != NULL) {
		kv[n++] = "disks";
		kv[n++] = c->disks;
	}
	if (c->interfaces != NULL) {
		kv[n++] = "interfaces";
		kv[n++] = c->interfaces;
	}
	run_case("basic", kv);
	for (i = 0; i < 6 && c->present[i] != NULL; i++)
		ck_assert_msg(mock_metric(c->present[i]) != NULL,
		    "case %d: %s absent", _i, c->present[i]);
	for (i = 0; i < 6 && c->absent[i] != NULL; i++)
		ck_assert_msg(mock_metric(c->absent[i]) == NULL,
		    "case %d: %s present", _i, c->absent[i]);
}
END_TEST

/* Later ticks go on from the last read; unchanged counters give 0. */
START_TEST(test_steady)
{
	const struct mock_metric *m;

	run_case("basic", two_s);
	ck_assert_int_eq(mock_timer_fire(0, 3), 0);
	ck_assert_ptr_nonnull(m = mock_metric("proc.disk.sda.r_s"));
	ck_assert_uint_eq(m->n, 4);
	ck_assert(m->max == 100 && m->min == 0 && m->last == 0);
	/* sdb was new at the first tick; it has rates from the second on */
	ck_assert_ptr_nonnull(m = mock_metric("proc.disk.sdb.r_s"));
	ck_assert_uint_eq(m->n, 3);
	/* no ticks elapsed: shares are skipped, not 0/0 */
	ck_assert_uint_eq(mock_metric("proc.cpu.idle_pct")->n, 1);
	ck_assert_uint_eq(mock_metric("proc.mem.free_bytes")->n, 4);
}
END_TEST

/* ---- refusals at init ---- */

START_TEST(test_no_root)
{
	char missing[300];

	snprintf(missing, sizeof(missing), "%s/nothing", root);
	ck_assert_ptr_nonnull(cfg = mock_config_new(&vitals_plugin));
	ck_assert_int_eq(
	    mock_config_set(&vitals_plugin, cfg, "root", missing), 0);
	ck_assert_int_eq(
	    vitals_plugin.init(mock_ctx("proc"), cfg, &st), -ENOENT);
	st = NULL;
	ck_assert_ptr_nonnull(strstr(mock_last_error(), "/nothing/stat"));
	ck_assert_uint_eq(mock_ntimers(), 0);
}
END_TEST

START_TEST(test_not_proc)
{
	put_text("stat", "this is not /proc/stat\n");
	put_text("meminfo", "MemTotal: 1000 kB\n");
	ck_assert_int_eq(start(NULL), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(mock_last_error(), "/stat: not in the"));
	put_text("stat", "cpu 1 2 3 4\n");
	put_text("meminfo", "MemFree: 1000 kB\n");
	mock_config_free(&vitals_plugin, cfg);
	ck_assert_int_eq(start(NULL), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(mock_last_error(), "/meminfo: not in"));
}
END_TEST

START_TEST(test_bad_interval)
{
	static const char *const kv[] = { "interval", "1ms", NULL };
	int rc;

	use_snapshot("basic", "a");
	rc = start(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, "interval");
}
END_TEST

START_TEST(test_descriptor)
{
	static const char *const keys[] = { "interval", "root", "disks",
		"interfaces" };
	char why[128] = "";
	size_t i;

	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_PROBE, "proc");
	ck_assert_uint_eq(vitals_plugin.abi_minor, VITALS_ABI_MINOR);
	for (i = 0; i < 4; i++) {
		ck_assert_str_eq(vitals_plugin.options[i].key, keys[i]);
		ck_assert_ptr_nonnull(vitals_plugin.options[i].help);
	}
	ck_assert_ptr_null(vitals_plugin.options[4].key);
	/* The tests run on Linux, where /proc is there to read. */
	ck_assert_int_eq(vitals_plugin.available(why, sizeof(why)), 0);
}
END_TEST

static Suite *
proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *t = tcase_create("formulas");
	TCase *o = tcase_create("options");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_basic);
	tcase_add_test(t, test_interval_scales_rates);
	tcase_add_test(t, test_backwards);
	tcase_add_test(t, test_old_kernel);
	tcase_add_test(t, test_steady);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(o, setup, teardown);
	tcase_add_loop_test(o, test_filters, 0, NCASES(filter_cases));
	tcase_add_test(o, test_no_root);
	tcase_add_test(o, test_not_proc);
	tcase_add_test(o, test_bad_interval);
	tcase_add_test(o, test_descriptor);
	suite_add_tcase(s, o);
	return s;
}

int
main(void)
{
	return testutil_run(proc_suite());
}
