/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the http output's Prometheus exposition (outputs/http/
 * metrics.c) on hand-made epochs: counters summed, gauges of the newest
 * epoch, base units, the top k exes, label escaping, one HELP and TYPE
 * per family.  `check_metrics --dump` prints a realistic render instead,
 * for tests/metrics_lint.sh to give to promtool.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epochs.h"
#include "metrics.h"
#include "testutil.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/*
 * Allocation failures on demand: while fail_after >= 0, that many more
 * allocations succeed and the rest fail.  Not under AddressSanitizer,
 * which owns malloc.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_FAULTS 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(NO_FAULTS)
#define FAULTS 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
static long fail_after = -1;

static int
fault(void)
{
	if (fail_after < 0)
		return 0;
	if (fail_after == 0)
		return 1;
	fail_after--;
	return 0;
}

void *
malloc(size_t n)
{
	return fault() ? NULL : __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	return fault() ? NULL : __libc_calloc(n, size);
}

void *
realloc(void *p, size_t n)
{
	return fault() ? NULL : __libc_realloc(p, n);
}
#endif

/* Most vitals a test epoch has (tep_epoch_view sorts them by name). */
#define NV 8

static struct metrics *m;
static char *text;

static void
setup(void)
{
	m = metrics_new(3);
	ck_assert_ptr_nonnull(m);
	text = NULL;
}

static void
teardown(void)
{
	metrics_free(m);
	free(text);
}

/* Render m into text (the previous render freed). */
static const char *
render(void)
{
	size_t len = 0;

	free(text);
	text = NULL;
	ck_assert_int_eq(metrics_render(m, &text, &len), 0);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), len);
	return text;
}

/* Where line (whole) starts in text, or NULL. */
static const char *
find_line(const char *t, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = t; (p = strstr(p, line)) != NULL; p++)
		if ((p == t || p[-1] == '\n') && p[n] == '\n')
			return p;
	return NULL;
}

#define has_line(line) \
	ck_assert_msg( \
	    find_line(text, line) != NULL, "no line '%s' in:\n%s", line, text)
#define no_line(line) \
	ck_assert_msg( \
	    find_line(text, line) == NULL, "line '%s' in:\n%s", line, text)

/* Lines of text that start with prefix. */
static int
count_prefix(const char *t, const char *prefix)
{
	const char *p = t;
	int n = 0;

	for (; *p != '\0'; p = strchr(p, '\n') + 1)
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	return n;
}

/*
 * The text format's shape: every line ends in \n, each family has one
 * HELP then one TYPE, and its samples follow them, together.
 */
static void
check_families(const char *t)
{
	char names[256][128], fam[128] = "", name[128];
	int n = 0, i, k;
	const char *p, *end;

	ck_assert(t[0] == '\0' || t[strlen(t) - 1] == '\n');
	for (p = t; *p != '\0'; p = end + 1) {
		end = strchr(p, '\n');
		if (sscanf(p, "# HELP %127s", name) == 1) {
			for (i = 0; i < n; i++)
				ck_assert_msg(strcmp(names[i], name) != 0,
				    "second HELP for %s", name);
			ck_assert_int_lt(n, 256);
			strcpy(names[n++], name);
			end = strchr(end + 1, '\n');
			ck_assert_msg(sscanf(strchr(p, '\n') + 1,
					  "# TYPE %127s", fam) == 1 &&
				strcmp(fam, name) == 0,
			    "no TYPE after HELP of %s", name);
			continue;
		}
		ck_assert_msg(
		    p[0] != '#', "stray comment: %.*s", (int)(end - p), p);
		k = (int)strcspn(p, "{ ");
		ck_assert_msg(fam[0] != '\0' && (int)strlen(fam) == k &&
			strncmp(p, fam, (size_t)k) == 0,
		    "sample outside its family %s: %.*s", fam, (int)(end - p),
		    p);
	}
}

/* ---- building epochs ---- */

static const char *const exes[] = { "/usr/bin/a", "/usr/bin/b", "/usr/bin/c",
	"/usr/bin/d", "/usr/bin/e", "/usr/bin/f" };
static const uint64_t cpu_w[] = { 500, 300, 100, 60, 30, 10 };

/* cpu: six exes weighing 500..10; sched: two (4 ms); diskio: one. */
static void
fill(struct tep_epoch *e)
{
	unsigned i;

	for (i = 0; i < 6; i++)
		tep_add(e, "cpu",
		    &(struct tep_ev){
			.exe = exes[i], .label = i + 1, .events = cpu_w[i] });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/bin/f",
		.label = 7,
		.weight = 3000000,
		.events = 3 });
	tep_add(e, "sched",
	    &(struct tep_ev){ .exe = "/usr/bin/a",
		.label = 8,
		.weight = 1000000,
		.events = 2 });
	tep_add(e, "diskio",
	    &(struct tep_ev){
		.exe = "/srv/db", .label = 9, .weight = 8192, .events = 2 });
}

/* A copy of t's view whose vitals (copied into vv) a test may change. */
static struct vitals_epoch
view(struct tep_epoch *t, struct vitals_vital_epoch *vv)
{
	struct vitals_epoch e = *tep_epoch_view(t);

	ck_assert_uint_le(e.nvitals, NV);
	memcpy(vv, e.vitals, e.nvitals * sizeof(*vv));
	e.vitals = vv;
	return e;
}

/* The vital named name in vv (n of them). */
static struct vitals_vital_epoch *
vital(struct vitals_vital_epoch *vv, uint32_t n, const char *name)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strcmp(vv[i].name, name) == 0)
			return &vv[i];
	ck_abort_msg("no vital %s", name);
	return NULL;
}

/* Account one epoch number seq of fill(). */
static void
feed_filled(uint64_t seq, uint64_t threshold, uint64_t cpu_ns, int partial)
{
	struct tep_epoch *t = tep_epoch_new(60, seq);
	struct vitals_vital_epoch vv[NV];
	struct vitals_epoch e;

	fill(t);
	if (partial)
		tep_partial(t, 30);
	e = view(t, vv);
	e.cpu_ns = cpu_ns;
	vital(vv, e.nvitals, "cpu")->threshold = threshold;
	vital(vv, e.nvitals, "cpu")->unique = threshold + 1;
	vital(vv, e.nvitals, "cpu")->dropped = 5;
	vital(vv, e.nvitals, "cpu")->samples_dropped = 2;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
}

/* Account an epoch with just these metrics (and one vital). */
static void
feed_metrics(const struct vitals_metric *mt, uint32_t n)
{
	struct tep_epoch *t = tep_epoch_new(60, 0);
	struct vitals_epoch e;

	tep_vital(t, "cpu");
	e = *tep_epoch_view(t);
	e.nmetrics = n;
	e.metrics = mt;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
}

/* ---- tests ---- */

START_TEST(test_empty)
{
	render();
	check_families(text);
	has_line("vitals_build_info{version=\"" PACKAGE_VERSION "\"} 1");
	has_line("vitals_epochs_total 0");
	has_line("vitals_collector_cpu_seconds_total 0");
	ck_assert_ptr_null(strstr(text, "vitals_last_epoch_timestamp_seconds"));
	ck_assert_ptr_null(strstr(text, "vitals_host_info"));
	ck_assert_ptr_null(strstr(text, "vital=\""));
}
END_TEST

/* Counters: the sums of two epochs, in base units. */
START_TEST(test_counters)
{
	feed_filled(0, 4, 250000000, 0);
	feed_filled(1, 16, 500000000, 1);
	render();
	check_families(text);
	has_line("# TYPE vitals_events_total counter");
	has_line("vitals_events_total{vital=\"cpu\"} 2000");
	has_line("vitals_events_total{vital=\"sched\"} 10");
	has_line("vitals_events_total{vital=\"diskio\"} 4");
	has_line("# TYPE vitals_weight_samples_total counter");
	has_line("vitals_weight_samples_total{vital=\"cpu\"} 2000");
	has_line("vitals_weight_seconds_total{vital=\"sched\"} 0.008");
	has_line("vitals_weight_bytes_total{vital=\"diskio\"} 16384");
	has_line("vitals_dropped_events_total{vital=\"cpu\"} 10");
	has_line("vitals_lost_samples_total{vital=\"cpu\"} 4");
	has_line("vitals_samples_total{vital=\"cpu\"} 12");
	has_line("vitals_epochs_total 2");
	has_line("vitals_partial_epochs_total 1");
	has_line("vitals_collector_cpu_seconds_total 0.75");
	has_line("vitals_vital_info{vital=\"sched\",unit=\"ns\"} 1");
	has_line("vitals_host_info{host=\"mockhost\"} 1");
}
END_TEST

/* Gauges: the newest epoch's values, and none for a vital it lacks. */
START_TEST(test_gauges)
{
	struct tep_epoch *t;
	struct vitals_vital_epoch vv[NV];
	struct vitals_epoch e;

	feed_filled(0, 4, 0, 0);
	feed_filled(1, 16, 0, 1);
	render();
	has_line("# TYPE vitals_threshold gauge");
	has_line("vitals_threshold{vital=\"cpu\"} 16");
	no_line("vitals_threshold{vital=\"cpu\"} 4");
	has_line("vitals_unique_labels{vital=\"cpu\"} 17");
	/* Epoch 1 starts 60 s after TEP_BASE_NS and was cut at 30 s. */
	has_line("vitals_last_epoch_timestamp_seconds 1699920090");
	has_line("vitals_epoch_length_seconds 30");

	t = tep_epoch_new(60, 2);
	tep_add(t, "cpu", &(struct tep_ev){ .exe = "/bin/z", .label = 1 });
	e = view(t, vv);
	vv[0].threshold = 2;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
	render();
	check_families(text);
	has_line("vitals_threshold{vital=\"cpu\"} 2");
	has_line("vitals_events_total{vital=\"diskio\"} 4");
	ck_assert_ptr_null(strstr(text, "vitals_threshold{vital=\"diskio\"}"));
	ck_assert_ptr_null(
	    strstr(text, "vitals_unique_labels{vital=\"sched\"}"));
	ck_assert_ptr_null(strstr(text, "vitals_exe_weight_seconds"));
	has_line("vitals_exe_weight_samples{vital=\"cpu\",exe=\"z\"} 1");
	ck_assert_int_eq(count_prefix(text, "vitals_exe_weight_samples{"), 1);
	has_line("vitals_last_epoch_timestamp_seconds 1699920180");
	has_line("vitals_epoch_length_seconds 60");
}
END_TEST

/* A vital whose unit changes: its weight counter starts again. */
START_TEST(test_unit_change)
{
	struct tep_epoch *t = tep_epoch_new(60, 0);
	struct vitals_vital_epoch vv[NV];
	struct vitals_epoch e;

	tep_add(t, "x", &(struct tep_ev){ .label = 1, .weight = 2500000000 });
	e = view(t, vv);
	vv[0].unit = "ns";
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	render();
	has_line("vitals_weight_seconds_total{vital=\"x\"} 2.5");
	vv[0].unit = "bytes";
	vv[0].wsum = 10;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
	render();
	check_families(text);
	has_line("vitals_weight_bytes_total{vital=\"x\"} 10");
	ck_assert_ptr_null(strstr(text, "vitals_weight_seconds_total"));
	has_line("vitals_events_total{vital=\"x\"} 2");
}
END_TEST

/* The top k: k per vital, heaviest first, one line per base name. */
START_TEST(test_topk)
{
	struct tep_epoch *t = tep_epoch_new(60, 0);
	const char *a, *b, *c;

	fill(t);
	/* Another exe named a: the two are one label value, summed. */
	tep_add(t, "cpu",
	    &(struct tep_ev){ .exe = "/opt/a", .label = 20, .events = 250 });
	ck_assert_int_eq(metrics_epoch(m, tep_epoch_view(t)), 0);
	tep_epoch_free(t);
	render();
	check_families(text);
	has_line("# TYPE vitals_exe_weight_samples gauge");
	a = find_line(
	    text, "vitals_exe_weight_samples{vital=\"cpu\",exe=\"a\"} 750");
	b = find_line(
	    text, "vitals_exe_weight_samples{vital=\"cpu\",exe=\"b\"} 300");
	c = find_line(
	    text, "vitals_exe_weight_samples{vital=\"cpu\",exe=\"c\"} 100");
	ck_assert_msg(a && b && c && a < b && b < c, "top 3 of cpu:\n%s", text);
	ck_assert_int_eq(
	    count_prefix(text, "vitals_exe_weight_samples{vital=\"cpu\","), 3);
	has_line("vitals_exe_weight_seconds{vital=\"sched\",exe=\"f\"} 0.003");
	has_line("vitals_exe_weight_seconds{vital=\"sched\",exe=\"a\"} 0.001");
	has_line("vitals_exe_weight_bytes{vital=\"diskio\",exe=\"db\"} 8192");
	ck_assert_int_eq(count_prefix(text, "# TYPE vitals_exe_weight_"), 3);
}
END_TEST

/* topk 0: no exe families at all. */
START_TEST(test_topk_off)
{
	struct tep_epoch *t = tep_epoch_new(60, 0);

	metrics_free(m);
	m = metrics_new(0);
	fill(t);
	ck_assert_int_eq(metrics_epoch(m, tep_epoch_view(t)), 0);
	tep_epoch_free(t);
	render();
	ck_assert_ptr_null(strstr(text, "vitals_exe_weight"));
	has_line("vitals_events_total{vital=\"cpu\"} 1000");
}
END_TEST

/* Exe names with a quote, a backslash, a newline, and bytes not UTF-8. */
START_TEST(test_escape)
{
	struct tep_epoch *t = tep_epoch_new(60, 0);

	tep_add(t, "cpu",
	    &(struct tep_ev){
		.exe = "/opt/we\"ird\\na\nme", .label = 1, .events = 7 });
	tep_add(t, "cpu",
	    &(struct tep_ev){
		.exe = "/opt/bad\xff\xc3", .label = 2, .events = 5 });
	tep_add(t, "cpu",
	    &(struct tep_ev){
		.comm = "h\xc3\xa9llo", .label = 3, .events = 3 });
	ck_assert_int_eq(metrics_epoch(m, tep_epoch_view(t)), 0);
	tep_epoch_free(t);
	render();
	check_families(text);
	has_line("vitals_exe_weight_samples{vital=\"cpu\",exe="
		 "\"we\\\"ird\\\\na\\nme\"} 7");
	has_line("vitals_exe_weight_samples{vital=\"cpu\",exe=\"bad??\"} 5");
	has_line(
	    "vitals_exe_weight_samples{vital=\"cpu\",exe=\"h\xc3\xa9llo\"} 3");
}
END_TEST

/* Named metrics: name, labels and value in base units. */
/* clang-format off */
static const struct {
	const char *name, *unit;
	double last;
	const char *line;
} conv_cases[] = {
	{ "proc.cpu.user_pct", "%", 12.5, "vitals_proc_cpu_user_ratio 0.125" },
	{ "proc.mem.memused_pct", "%", 50, "vitals_proc_mem_memused_ratio 0.5" },
	{ "proc.disk.vda.await_ms", "ms", 2.5,
	    "vitals_proc_disk_await_seconds{disk=\"vda\"} 0.0025" },
	{ "proc.disk.nvme0n1.util_pct", "%", 100,
	    "vitals_proc_disk_util_ratio{disk=\"nvme0n1\"} 1" },
	{ "proc.disk.sda.rd_sec_s", "sectors/s", 10,
	    "vitals_proc_disk_read_bytes_per_second{disk=\"sda\"} 5120" },
	{ "proc.disk.sda.avgrq_sz", "sectors", 8,
	    "vitals_proc_disk_avgrq_bytes{disk=\"sda\"} 4096" },
	{ "proc.disk.sda.tps", "1/s", 42, "vitals_proc_disk_tps{disk=\"sda\"} 42" },
	{ "proc.net.eth0_100.rxbyt_s", "bytes/s", 1234.5,
	    "vitals_proc_net_rx_bytes_per_second{interface=\"eth0_100\"} 1234.5" },
	{ "proc.net.eth0.txdrop_s", "packets/s", 0.25,
	    "vitals_proc_net_txdrop_per_second{interface=\"eth0\"} 0.25" },
	{ "proc.mem.free_bytes", "bytes", 1048576,
	    "vitals_proc_mem_free_bytes 1048576" },
	{ "proc.sys.cswch_s", "1/s", 1500, "vitals_proc_sys_cswch_per_second 1500" },
	{ "proc.sys.runq_sz", "tasks", 3, "vitals_proc_sys_runq_sz 3" },
	{ "proc.tcp.retrans_s", "segments/s", 0.1,
	    "vitals_proc_tcp_retrans_per_second 0.1" },
	{ "proc.udp.noport_s", "datagrams/s", 2,
	    "vitals_proc_udp_noport_per_second 2" },
	/* Not the proc table's: sanitized, units converted all the same. */
	{ "proc.cpu.user_pct", "ratio", 0.5, "vitals_metric_proc_cpu_user_pct 0.5" },
	{ "proc.disk.sda.queue_ms", "ms", 4,
	    "vitals_metric_proc_disk_sda_queue_seconds 0.004" },
	{ "app.Latency_ms", "ms", 40, "vitals_metric_app_latency_seconds 0.04" },
	{ "app.rtt", "us", 150, "vitals_metric_app_rtt_seconds 0.00015" },
	{ "app.uptime_s", "s", 7, "vitals_metric_app_uptime_seconds 7" },
	{ "app.req_s", "1/s", 7, "vitals_metric_app_req_per_second 7" },
	{ "app.in_s", "bytes/s", 8, "vitals_metric_app_in_bytes_per_second 8" },
	{ "app.load", "%", 50, "vitals_metric_app_load_ratio 0.5" },
	{ "app.heap", "bytes", 64, "vitals_metric_app_heap_bytes 64" },
	{ "app.items_total", "items", 5, "vitals_metric_app_items_total_value 5" },
	{ "my-app.queue.depth", "", 4, "vitals_metric_my_app_queue_depth 4" },
};
/* clang-format on */

START_TEST(test_convert)
{
	struct vitals_metric mt = { .name = conv_cases[_i].name,
		.unit = conv_cases[_i].unit,
		.mean = 0,
		.min = 0,
		.max = conv_cases[_i].last,
		.last = conv_cases[_i].last,
		.n = 1 };
	char type[160];
	size_t k = strcspn(conv_cases[_i].line, "{ ");

	feed_metrics(&mt, 1);
	render();
	check_families(text);
	has_line(conv_cases[_i].line);
	snprintf(type, sizeof(type), "# TYPE %.*s gauge", (int)k,
	    conv_cases[_i].line);
	has_line(type);
}
END_TEST

/* Metrics are the newest epoch's; names that meet are one family. */
START_TEST(test_metrics_newest)
{
	const struct vitals_metric a[] = {
		{ .name = "app.a-b", .unit = "", .last = 1, .n = 1 },
		{ .name = "app.a_b", .unit = "", .last = 1, .n = 1 },
		{ .name = "proc.disk.sda.await_ms",
		    .unit = "ms",
		    .last = 1,
		    .n = 1 },
		{ .name = "proc.disk.vda.await_ms",
		    .unit = "ms",
		    .last = 2,
		    .n = 1 },
		{ .name = "proc.mem.free_bytes",
		    .unit = "bytes",
		    .last = 9,
		    .n = 1 },
	};
	const struct vitals_metric b[] = {
		{ .name = "proc.disk.vda.await_ms",
		    .unit = "ms",
		    .last = 3,
		    .n = 1 },
	};

	feed_metrics(a, 5);
	render();
	check_families(text);
	ck_assert_int_eq(count_prefix(text, "vitals_metric_app_a_b "), 1);
	ck_assert_int_eq(
	    count_prefix(text, "# TYPE vitals_proc_disk_await_seconds "), 1);
	has_line("vitals_proc_disk_await_seconds{disk=\"sda\"} 0.001");
	has_line("vitals_proc_disk_await_seconds{disk=\"vda\"} 0.002");
	feed_metrics(b, 1);
	render();
	check_families(text);
	has_line("vitals_proc_disk_await_seconds{disk=\"vda\"} 0.003");
	ck_assert_ptr_null(strstr(text, "disk=\"sda\""));
	ck_assert_ptr_null(strstr(text, "vitals_proc_mem_free_bytes"));
	ck_assert_ptr_null(strstr(text, "vitals_metric_app"));
}
END_TEST

/* Findings by filter and severity, summed over epochs. */
START_TEST(test_findings)
{
	const struct vitals_finding f1[] = {
		{ .filter = "ewma",
		    .severity = VITALS_SEV_WARN,
		    .vital = "cpu" },
		{ .filter = "ewma",
		    .severity = VITALS_SEV_CRIT,
		    .vital = "cpu" },
		{ .filter = "topk", .severity = VITALS_SEV_INFO },
		{ .filter = "topk", .severity = VITALS_SEV_INFO },
		{ .filter = "odd", .severity = 9 },
	};
	const struct vitals_finding f2[] = {
		{ .filter = "ewma",
		    .severity = VITALS_SEV_WARN,
		    .vital = "sched" },
	};
	struct tep_epoch *t = tep_epoch_new(60, 0);
	struct vitals_epoch e;

	tep_vital(t, "cpu");
	e = *tep_epoch_view(t);
	e.nfindings = 5;
	e.findings = f1;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	e.seq++; /* the next epoch */
	e.start_ns += 60000000000ull;
	e.nfindings = 1;
	e.findings = f2;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
	render();
	check_families(text);
	has_line("# TYPE vitals_findings_total counter");
	has_line("vitals_findings_total{filter=\"ewma\",severity=\"info\"} 0");
	has_line("vitals_findings_total{filter=\"ewma\",severity=\"warn\"} 2");
	has_line("vitals_findings_total{filter=\"ewma\",severity=\"crit\"} 1");
	has_line("vitals_findings_total{filter=\"topk\",severity=\"info\"} 2");
	has_line("vitals_findings_total{filter=\"topk\",severity=\"crit\"} 0");
	has_line(
	    "vitals_findings_total{filter=\"odd\",severity=\"unknown\"} 1");
	ck_assert_ptr_null(
	    strstr(text, "filter=\"ewma\",severity=\"unknown\""));
}
END_TEST

/* The daemon's numbers: exported once known, left out otherwise. */
/* vitalsd writes an epoch as it closes and again with the filters'
 * findings: the second write adds its findings, not another epoch. */
START_TEST(test_rewrite)
{
	const struct vitals_finding f[] = {
		{ .filter = "ewma",
		    .severity = VITALS_SEV_WARN,
		    .vital = "cpu" },
	};
	struct tep_epoch *t = tep_epoch_new(60, 0);
	struct vitals_epoch e;

	tep_vital(t, "cpu");
	e = *tep_epoch_view(t);
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	e.nfindings = 1;
	e.findings = f;
	ck_assert_int_eq(metrics_epoch(m, &e), 0);
	tep_epoch_free(t);
	render();
	has_line("vitals_epochs_total 1");
	has_line("vitals_findings_total{filter=\"ewma\",severity=\"warn\"} 1");
}
END_TEST

START_TEST(test_daemon)
{
	struct metrics_daemon d = { .have = METRICS_HAVE_BPF_RUN |
		    METRICS_HAVE_START,
		.bpf_run_ns = 1500000000,
		.bpf_run_count = 42,
		.store_backlog_bytes = 99,
		.start_ns = 1699920000000000000ULL };

	render();
	ck_assert_ptr_null(strstr(text, "vitals_bpf_"));
	metrics_daemon(m, &d);
	render();
	check_families(text);
	has_line("# TYPE vitals_bpf_run_seconds_total counter");
	has_line("vitals_bpf_run_seconds_total 1.5");
	has_line("vitals_bpf_runs_total 42");
	has_line("vitals_start_time_seconds 1699920000");
	ck_assert_ptr_null(strstr(text, "vitals_store_backlog_bytes"));
	d.have = METRICS_HAVE_BACKLOG;
	metrics_daemon(m, &d);
	render();
	has_line("# TYPE vitals_store_backlog_bytes gauge");
	has_line("vitals_store_backlog_bytes 99");
	ck_assert_ptr_null(strstr(text, "vitals_bpf_"));
}
END_TEST

/*
 * Each allocation of metrics_epoch failing in turn: -ENOMEM and the
 * render as it was, until enough succeed and the epoch is accounted.
 */
START_TEST(test_enomem)
{
#ifdef FAULTS
	const struct vitals_finding fi = { .filter = "rules", .severity = 2 };
	const struct vitals_metric mt = { .name = "proc.disk.vda.await_ms",
		.unit = "ms",
		.last = 1,
		.n = 1 };
	struct tep_epoch *t = tep_epoch_new(60, 1);
	struct vitals_vital_epoch vv[NV];
	struct vitals_epoch e;
	char *before;
	long n;
	int r;

	/* Under valgrind, its malloc wins: nothing to inject then. */
	fail_after = 0;
	before = malloc(1);
	fail_after = -1;
	if (before != NULL) {
		free(before);
		tep_epoch_free(t);
		return;
	}
	feed_filled(0, 4, 0, 0);
	before = strdup(render());
	fill(t);
	tep_add(t, "kmem", &(struct tep_ev){ .exe = "/bin/k", .label = 1 });
	e = view(t, vv);
	e.nfindings = 1;
	e.findings = &fi;
	e.nmetrics = 1;
	e.metrics = &mt;
	for (n = 0;; n++) {
		fail_after = n;
		r = metrics_epoch(m, &e);
		fail_after = -1;
		if (r == 0)
			break;
		ck_assert_int_eq(r, -ENOMEM);
		ck_assert_str_eq(render(), before);
	}
	ck_assert_int_gt(n, 10);
	render();
	has_line("vitals_epochs_total 2");
	has_line("vitals_events_total{vital=\"kmem\"} 1");
	has_line("vitals_findings_total{filter=\"rules\",severity=\"warn\"} 1");
	has_line("vitals_proc_disk_await_seconds{disk=\"vda\"} 0.001");
	free(before);
	tep_epoch_free(t);
#endif
}
END_TEST

/* ---- a realistic render, for promtool ---- */

/* clang-format off */
static const struct vitals_metric dump_metrics[] = {
	{ "my-probe.queue.depth", "", 4, 1, 7, 4, 3 },
	{ "my-probe.rtt_us", "us", 150, 90, 210, 150, 3 },
	{ "proc.cpu.idle_pct", "%", 80, 79, 81, 80.5, 4 },
	{ "proc.cpu.user_pct", "%", 15.5, 15, 16, 15.25, 4 },
	{ "proc.disk.sda.await_ms", "ms", 1.25, 1, 2, 1.25, 4 },
	{ "proc.disk.sda.util_pct", "%", 3, 2, 4, 3, 4 },
	{ "proc.disk.vda.await_ms", "ms", 0.5, 0.5, 0.5, 0.5, 4 },
	{ "proc.disk.vda.rd_sec_s", "sectors/s", 16, 8, 24, 16, 4 },
	{ "proc.mem.free_bytes", "bytes", 1.5e9, 1.5e9, 1.5e9, 1.5e9, 4 },
	{ "proc.net.eth0.rxbyt_s", "bytes/s", 1234.5, 1000, 1500, 1234.5, 4 },
	{ "proc.sys.cswch_s", "1/s", 2000, 1900, 2100, 2000, 4 },
	{ "proc.sys.runq_sz", "tasks", 2, 1, 3, 2, 4 },
	{ "proc.tcp.retrans_s", "segments/s", 0.25, 0, 1, 0.25, 4 },
};
/* clang-format on */

static const struct vitals_finding dump_findings[] = {
	{ .filter = "ewma", .severity = VITALS_SEV_WARN, .vital = "cpu" },
	{ .filter = "topk", .severity = VITALS_SEV_INFO, .vital = "cpu" },
};

/*
 * Two epochs of fill() with odd exe names, metrics and findings, and the
 * daemon's numbers, rendered into text with a new m.  Returns 0 or -1.
 */
static int
dump_render(void)
{
	struct tep_epoch *t;
	struct vitals_epoch e;
	uint64_t seq;
	int r = 0;

	if ((m = metrics_new(METRICS_TOPK_DEFAULT)) == NULL)
		return -1;
	for (seq = 0; seq < 2 && r == 0; seq++) {
		t = tep_epoch_new(60, seq);
		fill(t);
		tep_add(t, "cpu",
		    &(struct tep_ev){ .exe = "/opt/we\"ird\\na\nme",
			.label = 30,
			.events = 7 });
		tep_add(t, "kmem",
		    &(struct tep_ev){
			.comm = "kworker/0:1", .label = 31, .weight = 12 });
		e = *tep_epoch_view(t);
		e.cpu_ns = 12345678;
		e.nmetrics = sizeof(dump_metrics) / sizeof(dump_metrics[0]);
		e.metrics = dump_metrics;
		e.nfindings = sizeof(dump_findings) / sizeof(dump_findings[0]);
		e.findings = dump_findings;
		r = metrics_epoch(m, &e);
		tep_epoch_free(t);
	}
	metrics_daemon(m,
	    &(struct metrics_daemon){ .have = METRICS_HAVE_BPF_RUN |
		    METRICS_HAVE_BACKLOG | METRICS_HAVE_START,
		.bpf_run_ns = 123456789,
		.bpf_run_count = 1000,
		.store_backlog_bytes = 4096,
		.start_ns = 1699919990000000000ULL });
	if (r != 0 || metrics_render(m, &text, &(size_t){ 0 }) != 0)
		return -1;
	return 0;
}

/* The realistic render has every part, in the text format's shape. */
START_TEST(test_dump)
{
	metrics_free(m);
	ck_assert_int_eq(dump_render(), 0);
	check_families(text);
	has_line("vitals_exe_weight_samples{vital=\"cpu\",exe=\"a\"} 500");
	has_line(
	    "vitals_exe_weight_pages{vital=\"kmem\",exe=\"kworker/0:1\"} 12");
	has_line("vitals_proc_disk_await_seconds{disk=\"vda\"} 0.0005");
	has_line("vitals_metric_my_probe_rtt_seconds 0.00015");
	has_line("vitals_findings_total{filter=\"topk\",severity=\"info\"} 2");
	has_line("vitals_store_backlog_bytes 4096");
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_gauges);
	tcase_add_test(tc, test_unit_change);
	tcase_add_test(tc, test_topk);
	tcase_add_test(tc, test_topk_off);
	tcase_add_test(tc, test_escape);
	tcase_add_loop_test(tc, test_convert, 0, NCASES(conv_cases));
	tcase_add_test(tc, test_metrics_newest);
	tcase_add_test(tc, test_findings);
	tcase_add_test(tc, test_rewrite);
	tcase_add_test(tc, test_daemon);
	tcase_add_test(tc, test_enomem);
	tcase_add_test(tc, test_dump);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	int failed;

	if (argc == 2 && strcmp(argv[1], "--dump") == 0) {
		failed = dump_render() != 0 || fputs(text, stdout) == EOF;
		teardown();
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	return testutil_run(metrics_suite());
}
