/* SPDX-License-Identifier: MIT */
/*
 * The http output's /metrics (metrics.h): counters summed over the closed
 * epochs seen, gauges of the newest one, each vital's heaviest exes by the
 * attribution the filters use (labels.h) and the proc probe's metrics in
 * base units, rendered as the Prometheus text format 0.0.4.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/store.h>

#include "labels.h"
#include "metrics.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Room for a unit and for its name in families ("seconds", "samples"). */
#define METRICS_UNIT_LEN 32
/* Filters counted by name; findings of any further one count as "other". */
#define METRICS_MAX_FILTERS 64
/* Severities counted: 0 for a value outside VITALS_SEV_*, then 1 to 3. */
#define METRICS_NSEV 4

/* One exe of a vital's top k. */
struct metrics_exe {
	char *name; /* label value: base name of the exe path, else comm */
	double weight; /* attributed in the newest epoch, in the vital's unit */
};

/* One vital, as seen so far. */
struct metrics_vital {
	char *name;
	char unit[METRICS_UNIT_LEN]; /* unit of its newest epoch */
	char base[METRICS_UNIT_LEN]; /* its base unit, in family names */
	double mul, div; /* a value in unit * mul / div is in base */
	uint64_t epochs; /* epochs accounted that had it; 0: not yet */
	uint64_t events, weight, dropped, lost, kept; /* summed */
	int present; /* in the newest epoch: the gauges below hold */
	uint64_t threshold, unique;
	uint32_t nexe;
	struct metrics_exe *exe; /* at most topk, heaviest first */
};

/* Findings of one filter, by severity. */
struct metrics_filter {
	char *name;
	uint64_t n[METRICS_NSEV];
};

/* One named metric of the newest epoch, as a Prometheus gauge. */
struct metrics_gauge {
	char *family; /* Prometheus name; the block holding help, lvalue too */
	const char *help;
	const char *lname; /* label name (static), or NULL */
	const char *lvalue; /* label value when lname is set */
	double value; /* last value in the epoch, in base units */
};

struct metrics {
	uint32_t topk;
	char *host; /* of the newest epoch */
	uint64_t epochs, partial, cpu_ns;
	uint64_t end_ns, length_ns; /* of the newest epoch */
	uint32_t nv;
	struct metrics_vital *v; /* sorted by name */
	uint32_t nf;
	struct metrics_filter *f; /* in order of first finding */
	uint32_t ng;
	struct metrics_gauge *g; /* sorted by family, then label value */
	struct metrics_daemon d;
	/* The newest epoch accounted: vitalsd writes an epoch to outputs as
	 * it closes and again, with more findings, once filters added some. */
	uint64_t last_start, last_seq;
	uint32_t last_nfindings;
	int have_last;
};

/* What an epoch is turned into before anything of m changes. */
struct metrics_prep {
	uint32_t *vidx; /* m->v index of each of e's vitals */
	struct metrics_exe **exe; /* each vital's top k */
	uint32_t *nexe;
	uint32_t *fidx; /* m->f index of each of e's findings */
	struct metrics_gauge *g; /* e's metrics */
	uint32_t ng;
	char *host;
};

/* ---- units ---- */

/* Units converted to a base unit: a value * mul / div. */
static const struct {
	const char *unit, *base;
	double mul, div;
} metrics_units[] = {
	{ "ns", "seconds", 1, 1e9 },
	{ "us", "seconds", 1, 1e6 },
	{ "ms", "seconds", 1, 1e3 },
	{ "s", "seconds", 1, 1 },
	{ "bytes", "bytes", 1, 1 },
};

/* s made a name part: lowercase [a-z0-9_], others become '_'. */
static void
metrics_sanitize(char *s)
{
	for (; *s != '\0'; s++) {
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
		else if (!((*s >= 'a' && *s <= 'z') ||
			     (*s >= '0' && *s <= '9')))
			*s = '_';
	}
}

/*
 * A vital's unit as a base unit for family names: seconds and bytes
 * converted, any count ("samples", "pages", "calls") as itself.
 */
static void
metrics_vital_unit(struct metrics_vital *v, const char *unit)
{
	size_t i;

	snprintf(v->unit, sizeof(v->unit), "%s", unit != NULL ? unit : "");
	v->mul = v->div = 1;
	for (i = 0; i < sizeof(metrics_units) / sizeof(metrics_units[0]); i++)
		if (strcmp(v->unit, metrics_units[i].unit) == 0) {
			snprintf(v->base, sizeof(v->base), "%s",
			    metrics_units[i].base);
			v->mul = metrics_units[i].mul;
			v->div = metrics_units[i].div;
			return;
		}
	snprintf(v->base, sizeof(v->base), "%s",
	    v->unit[0] != '\0' ? v->unit : "units");
	metrics_sanitize(v->base);
}

/* ---- the proc probe's metrics ---- */

/* Groups of proc.GROUP.DEVICE.LEAF names, and their device label. */
static const struct {
	const char *group, *label;
} metrics_proc_devs[] = {
	{ "disk", "disk" },
	{ "net", "interface" },
};

/*
 * proc.GROUP[.DEVICE].LEAF put in unit, exported as vitals_proc_FAMILY:
 * value * mul / div.  doc/metrics.md has the same table.
 */
/* clang-format off */
static const struct {
	const char *group, *leaf, *unit, *family;
	double mul, div;
	const char *help;
} metrics_proc[] = {
	{ "cpu", "user_pct", "%", "cpu_user_ratio", 1, 100,
	    "Share of CPU time in user mode, guest time excluded (sar %user)" },
	{ "cpu", "nice_pct", "%", "cpu_nice_ratio", 1, 100,
	    "Share of CPU time in user mode niced, guest time excluded (sar %nice)" },
	{ "cpu", "system_pct", "%", "cpu_system_ratio", 1, 100,
	    "Share of CPU time in the kernel, interrupts included (sar %system)" },
	{ "cpu", "iowait_pct", "%", "cpu_iowait_ratio", 1, 100,
	    "Share of CPU time idle with I/O outstanding (sar %iowait)" },
	{ "cpu", "steal_pct", "%", "cpu_steal_ratio", 1, 100,
	    "Share of CPU time taken by the hypervisor (sar %steal)" },
	{ "cpu", "idle_pct", "%", "cpu_idle_ratio", 1, 100,
	    "Share of CPU time idle (sar %idle)" },
	{ "sys", "cswch_s", "1/s", "sys_cswch_per_second", 1, 1,
	    "Context switches per second (sar cswch/s)" },
	{ "sys", "intr_s", "1/s", "sys_intr_per_second", 1, 1,
	    "Interrupts per second (sar intr/s)" },
	{ "sys", "proc_s", "1/s", "sys_proc_per_second", 1, 1,
	    "Processes created per second (sar proc/s)" },
	{ "sys", "runq_sz", "tasks", "sys_runq_sz", 1, 1,
	    "Tasks runnable (procs_running, sar runq-sz)" },
	{ "sys", "blocked", "tasks", "sys_blocked", 1, 1,
	    "Tasks blocked on I/O (procs_blocked, sar blocked)" },
	{ "mem", "free_bytes", "bytes", "mem_free_bytes", 1, 1,
	    "Free memory (MemFree)" },
	{ "mem", "available_bytes", "bytes", "mem_available_bytes", 1, 1,
	    "Memory available without swapping (MemAvailable)" },
	{ "mem", "buffers_bytes", "bytes", "mem_buffers_bytes", 1, 1,
	    "Block device buffers (Buffers)" },
	{ "mem", "cached_bytes", "bytes", "mem_cached_bytes", 1, 1,
	    "Page cache (Cached)" },
	{ "mem", "dirty_bytes", "bytes", "mem_dirty_bytes", 1, 1,
	    "Memory waiting to be written back (Dirty)" },
	{ "mem", "used_bytes", "bytes", "mem_used_bytes", 1, 1,
	    "Memory used: MemTotal less free, buffers, cache and slab (sar kbmemused)" },
	{ "mem", "memused_pct", "%", "mem_memused_ratio", 1, 100,
	    "Used memory's share of MemTotal (sar %memused)" },
	{ "disk", "r_s", "1/s", "disk_r_per_second", 1, 1,
	    "Reads completed per second (iostat r/s)" },
	{ "disk", "w_s", "1/s", "disk_w_per_second", 1, 1,
	    "Writes completed per second (iostat w/s)" },
	{ "disk", "tps", "1/s", "disk_tps", 1, 1,
	    "I/Os completed per second, discards included (iostat tps)" },
	{ "disk", "rd_sec_s", "sectors/s", "disk_read_bytes_per_second", 512, 1,
	    "Bytes read per second (iostat rd_sec/s times 512)" },
	{ "disk", "wr_sec_s", "sectors/s", "disk_written_bytes_per_second",
	    512, 1, "Bytes written per second (iostat wr_sec/s times 512)" },
	{ "disk", "avgrq_sz", "sectors", "disk_avgrq_bytes", 512, 1,
	    "Mean size of an I/O (iostat avgrq-sz times 512)" },
	{ "disk", "await_ms", "ms", "disk_await_seconds", 1, 1e3,
	    "Mean time an I/O took, queue included (iostat await)" },
	{ "disk", "svctm_ms", "ms", "disk_svctm_seconds", 1, 1e3,
	    "Busy time per I/O (iostat svctm)" },
	{ "disk", "util_pct", "%", "disk_util_ratio", 1, 100,
	    "Share of the time the disk was busy (iostat %util)" },
	{ "disk", "avgqu_sz", "requests", "disk_avgqu_sz", 1, 1,
	    "Mean number of I/Os in flight, time-weighted (iostat avgqu-sz)" },
	{ "net", "rxpck_s", "packets/s", "net_rxpck_per_second", 1, 1,
	    "Packets received per second (sar rxpck/s)" },
	{ "net", "txpck_s", "packets/s", "net_txpck_per_second", 1, 1,
	    "Packets sent per second (sar txpck/s)" },
	{ "net", "rxbyt_s", "bytes/s", "net_rx_bytes_per_second", 1, 1,
	    "Bytes received per second (sar rxkB/s times 1024)" },
	{ "net", "txbyt_s", "bytes/s", "net_tx_bytes_per_second", 1, 1,
	    "Bytes sent per second (sar txkB/s times 1024)" },
	{ "net", "rxerr_s", "packets/s", "net_rxerr_per_second", 1, 1,
	    "Receive errors per second (sar rxerr/s)" },
	{ "net", "txerr_s", "packets/s", "net_txerr_per_second", 1, 1,
	    "Transmit errors per second (sar txerr/s)" },
	{ "net", "rxdrop_s", "packets/s", "net_rxdrop_per_second", 1, 1,
	    "Received packets dropped per second (sar rxdrop/s)" },
	{ "net", "txdrop_s", "packets/s", "net_txdrop_per_second", 1, 1,
	    "Packets to send dropped per second (sar txdrop/s)" },
	{ "tcp", "active_s", "1/s", "tcp_active_per_second", 1, 1,
	    "TCP active opens per second (ActiveOpens, sar active/s)" },
	{ "tcp", "passive_s", "1/s", "tcp_passive_per_second", 1, 1,
	    "TCP passive opens per second (PassiveOpens, sar passive/s)" },
	{ "tcp", "retrans_s", "segments/s", "tcp_retrans_per_second", 1, 1,
	    "TCP segments retransmitted per second (RetransSegs, sar retrans/s)" },
	{ "tcp", "isegerr_s", "segments/s", "tcp_isegerr_per_second", 1, 1,
	    "TCP segments received in error per second (InErrs, sar isegerr/s)" },
	{ "udp", "idgm_s", "datagrams/s", "udp_idgm_per_second", 1, 1,
	    "UDP datagrams received per second (InDatagrams, sar idgm/s)" },
	{ "udp", "odgm_s", "datagrams/s", "udp_odgm_per_second", 1, 1,
	    "UDP datagrams sent per second (OutDatagrams, sar odgm/s)" },
	{ "udp", "noport_s", "datagrams/s", "udp_noport_per_second", 1, 1,
	    "UDP datagrams to no listening port per second (NoPorts, sar noport/s)" },
	{ "udp", "idgmerr_s", "datagrams/s", "udp_idgmerr_per_second", 1, 1,
	    "UDP datagrams received in error per second (InErrors, sar idgmerr/s)" },
};
/* clang-format on */

/*
 * Units of metrics of other names: strip the name's suffix, add the
 * family's, value * mul / div.  Any other "X/s" is a rate per second.
 */
static const struct {
	const char *unit, *strip, *suffix;
	double mul, div;
} metrics_generic[] = {
	{ "%", "_pct", "_ratio", 1, 100 },
	{ "ns", "_ns", "_seconds", 1, 1e9 },
	{ "us", "_us", "_seconds", 1, 1e6 },
	{ "ms", "_ms", "_seconds", 1, 1e3 },
	{ "s", "_s", "_seconds", 1, 1 },
	{ "bytes", "_bytes", "_bytes", 1, 1 },
	{ "bytes/s", "_s", "_bytes_per_second", 1, 1 },
	{ "/s", "_s", "_per_second", 1, 1 },
};

/* Whether s ends with suffix. */
static int
metrics_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * One gauge in a single block (family, help and label value copied), so
 * that freeing g->family frees it all.  Returns 0 or -ENOMEM.
 */
static int
metrics_gauge_make(struct metrics_gauge *g, const char *family,
    const char *help, const char *lname, const char *lvalue, double value)
{
	size_t nf = strlen(family) + 1, nh = strlen(help) + 1;
	size_t nl = lvalue != NULL ? strlen(lvalue) + 1 : 0;
	char *b;

	if ((b = malloc(nf + nh + nl)) == NULL)
		return -ENOMEM;
	g->family = memcpy(b, family, nf);
	g->help = memcpy(b + nf, help, nh);
	g->lname = lname;
	g->lvalue = lvalue != NULL ? memcpy(b + nf + nh, lvalue, nl) : NULL;
	g->value = value;
	return 0;
}

/* The proc table's entry for the name's group and leaf in unit, or -1. */
static int
metrics_proc_find(
    const char *group, size_t glen, const char *leaf, const char *unit)
{
	size_t i;

	for (i = 0; i < sizeof(metrics_proc) / sizeof(metrics_proc[0]); i++)
		if (strlen(metrics_proc[i].group) == glen &&
		    strncmp(metrics_proc[i].group, group, glen) == 0 &&
		    strcmp(metrics_proc[i].leaf, leaf) == 0 &&
		    strcmp(metrics_proc[i].unit, unit) == 0)
			return (int)i;
	return -1;
}

/*
 * A proc probe metric the table knows: proc.GROUP.LEAF, or
 * proc.GROUP.DEVICE.LEAF for the device groups.  Returns 1 with *g made,
 * 0 if the name is not one of them, or -ENOMEM.
 */
static int
metrics_gauge_proc(struct metrics_gauge *g, const struct vitals_metric *mt)
{
	const char *group, *dot, *leaf, *lname = NULL;
	char family[160], dev[128] = "";
	size_t glen, i;
	int k;

	if (strncmp(mt->name, "proc.", 5) != 0 ||
	    (dot = strchr(group = mt->name + 5, '.')) == NULL)
		return 0;
	glen = (size_t)(dot - group);
	leaf = dot + 1;
	for (i = 0;
	     i < sizeof(metrics_proc_devs) / sizeof(metrics_proc_devs[0]); i++)
		if (strlen(metrics_proc_devs[i].group) == glen &&
		    strncmp(metrics_proc_devs[i].group, group, glen) == 0)
			lname = metrics_proc_devs[i].label;
	if (lname != NULL) {
		if ((dot = strchr(leaf, '.')) == NULL ||
		    (size_t)(dot - leaf) >= sizeof(dev))
			return 0;
		memcpy(dev, leaf, (size_t)(dot - leaf));
		dev[dot - leaf] = '\0';
		leaf = dot + 1;
	}
	if (strchr(leaf, '.') != NULL ||
	    (k = metrics_proc_find(group, glen, leaf, mt->unit)) < 0)
		return 0;
	snprintf(
	    family, sizeof(family), "vitals_proc_%s", metrics_proc[k].family);
	if (metrics_gauge_make(g, family, metrics_proc[k].help, lname,
		lname != NULL ? dev : NULL,
		mt->last * metrics_proc[k].mul / metrics_proc[k].div) != 0)
		return -ENOMEM;
	return 1;
}

/* metrics_generic's entry for unit, or -1: leave the value as it is. */
static int
metrics_generic_find(const char *unit)
{
	int i, n = (int)(sizeof(metrics_generic) / sizeof(metrics_generic[0]));

	for (i = 0; i < n - 1; i++)
		if (strcmp(unit, metrics_generic[i].unit) == 0)
			return i;
	return metrics_ends(unit, metrics_generic[n - 1].unit) ? n - 1 : -1;
}

/*
 * Any other metric: vitals_metric_NAME with the name sanitized, its unit
 * turned into a base unit where metrics_generic knows it, and a name
 * ending as a histogram's or a counter's would renamed.
 */
static int
metrics_gauge_generic(struct metrics_gauge *g, const struct vitals_metric *mt)
{
	static const char *const reserved[] = { "_total", "_count", "_sum",
		"_bucket" };
	char family[256], help[320];
	double mul = 1, div = 1;
	size_t i, n;
	int k;

	/* Names are at most 127 bytes: the suffixes below always fit. */
	n = (size_t)snprintf(family, 200, "vitals_metric_%s", mt->name);
	if (n >= 200)
		n = 199;
	metrics_sanitize(family);
	if ((k = metrics_generic_find(mt->unit)) >= 0) {
		if (metrics_ends(family, metrics_generic[k].strip))
			family[n - strlen(metrics_generic[k].strip)] = '\0';
		if (!metrics_ends(family, metrics_generic[k].suffix))
			strcat(family, metrics_generic[k].suffix);
		mul = metrics_generic[k].mul;
		div = metrics_generic[k].div;
	}
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (metrics_ends(family, reserved[i]))
			strcat(family, "_value");
	snprintf(help, sizeof(help),
	    "Named metric %s (unit '%s'), last value in the newest epoch%s",
	    mt->name, mt->unit, k >= 0 ? ", in base units" : "");
	return metrics_gauge_make(
	    g, family, help, NULL, NULL, mt->last * mul / div);
}

static int
metrics_gauge_cmp(const void *a, const void *b)
{
	const struct metrics_gauge *x = a, *y = b;
	int c;

	if ((c = strcmp(x->family, y->family)) != 0)
		return c;
	return strcmp(x->lvalue != NULL ? x->lvalue : "",
	    y->lvalue != NULL ? y->lvalue : "");
}

/* Free n gauges and their array; accepts NULL. */
static void
metrics_gauges_free(struct metrics_gauge *g, uint32_t n)
{
	uint32_t i;

	for (i = 0; g != NULL && i < n; i++)
		free(g[i].family);
	free(g);
}

/*
 * The epoch's metrics as gauges sorted by family and label, a name that
 * maps onto one already made left out.  Returns 0 or -ENOMEM.
 */
static int
metrics_gauges(const struct vitals_epoch *e, struct metrics_prep *p)
{
	struct vitals_metric mt;
	uint32_t i, n = 0;
	int r;

	if (e->nmetrics == 0)
		return 0;
	if ((p->g = calloc(e->nmetrics, sizeof(*p->g))) == NULL)
		return -ENOMEM;
	for (i = 0; i < e->nmetrics; i++) {
		if ((mt = e->metrics[i]).name == NULL)
			continue;
		if (mt.unit == NULL)
			mt.unit = "";
		if ((r = metrics_gauge_proc(&p->g[n], &mt)) == 0)
			r = metrics_gauge_generic(&p->g[n], &mt);
		if (r < 0) {
			p->ng = n;
			return -ENOMEM;
		}
		n++;
	}
	qsort(p->g, n, sizeof(*p->g), metrics_gauge_cmp);
	for (i = 0, p->ng = 0; i < n; i++) {
		if (p->ng > 0 &&
		    metrics_gauge_cmp(&p->g[p->ng - 1], &p->g[i]) == 0)
			free(p->g[i].family);
		else
			p->g[p->ng++] = p->g[i];
	}
	return 0;
}

/* ---- label values ---- */

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t
metrics_utf8(const unsigned char *s)
{
	uint32_t c;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * An exe's label value: the base name of its path, or a comm ("kworker/0:1")
 * or hex label as it is, with bytes that are not UTF-8 made '?'.
 * Malloc'd, or NULL.
 */
static char *
metrics_exe_name(const struct labels_entry *le)
{
	const char *name = le->name, *slash = strrchr(name, '/');
	unsigned char *s, *p;
	size_t k;

	/* labels_name: the group is the exe path when the sample has one. */
	if (le->rep != NULL && le->rep->exe != NULL &&
	    le->rep->exe[0] != '\0' && slash != NULL && slash[1] != '\0')
		name = slash + 1;
	if ((s = (unsigned char *)strdup(name)) == NULL)
		return NULL;
	for (p = s; *p != '\0'; p += k)
		if ((k = metrics_utf8(p)) == 0) {
			*p = '?';
			k = 1;
		}
	return (char *)s;
}

/* ---- the top k exes ---- */

static int
metrics_exe_by_name(const void *a, const void *b)
{
	return strcmp(((const struct metrics_exe *)a)->name,
	    ((const struct metrics_exe *)b)->name);
}

static int
metrics_exe_by_weight(const void *a, const void *b)
{
	const struct metrics_exe *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Free n exes and their array; accepts NULL. */
static void
metrics_exes_free(struct metrics_exe *v, uint32_t n)
{
	uint32_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i].name);
	free(v);
}

/* Sum the exes that share a label value; keep the k heaviest. */
static void
metrics_exes_merge(struct metrics_exe *v, uint32_t *n, uint32_t k)
{
	uint32_t i, j = 0;

	qsort(v, *n, sizeof(*v), metrics_exe_by_name);
	for (i = 0; i < *n; i++) {
		if (j > 0 && strcmp(v[j - 1].name, v[i].name) == 0) {
			v[j - 1].weight += v[i].weight;
			free(v[i].name);
		} else {
			v[j++] = v[i];
		}
	}
	qsort(v, j, sizeof(*v), metrics_exe_by_weight);
	for (i = k; i < j; i++)
		free(v[i].name);
	*n = j < k ? j : k;
}

/*
 * The k heaviest exes of a vital by attributed weight, exes of one base
 * name summed.  Sets *out (malloc'd, may be NULL) and *n.  Returns 0 or
 * -ENOMEM.
 */
static int
metrics_top(const struct vitals_vital_epoch *ve, uint32_t k,
    struct metrics_exe **out, uint32_t *n)
{
	struct labels_how how = { .by = LABELS_BY_EXE };
	struct metrics_exe *v = NULL;
	struct labels l;
	uint32_t i, nv = 0;

	if (k == 0 || ve->nsamples == 0) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	if (labels_collect(ve, &how, &l) != 0)
		return -ENOMEM;
	if (l.n > 0 && (v = calloc(l.n, sizeof(*v))) == NULL)
		goto fail;
	for (i = 0; i < l.n; i++) {
		if (!(l.v[i].weight > 0))
			continue;
		if ((v[nv].name = metrics_exe_name(&l.v[i])) == NULL)
			goto fail;
		v[nv++].weight = l.v[i].weight;
	}
	labels_free(&l);
	if (nv == 0) {
		free(v);
		v = NULL;
	} else {
		metrics_exes_merge(v, &nv, k);
	}
	*out = v;
	*n = nv;
	return 0;
fail:
	metrics_exes_free(v, nv);
	labels_free(&l);
	return -ENOMEM;
}

/* ---- accounting ---- */

struct metrics *
metrics_new(uint32_t topk)
{
	struct metrics *m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->topk = topk;
	return m;
}

void
metrics_free(struct metrics *m)
{
	uint32_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nv; i++) {
		free(m->v[i].name);
		metrics_exes_free(m->v[i].exe, m->v[i].nexe);
	}
	free(m->v);
	for (i = 0; i < m->nf; i++)
		free(m->f[i].name);
	free(m->f);
	metrics_gauges_free(m->g, m->ng);
	free(m->host);
	free(m);
}

void
metrics_daemon(struct metrics *m, const struct metrics_daemon *d)
{
	m->d = *d;
}

/*
 * The index of vital `name` in m->v, added (not yet accounted) where
 * the sorted order puts it.  Returns the index or -ENOMEM.
 */
static int
metrics_vital_index(struct metrics *m, const char *name)
{
	struct metrics_vital *v;
	uint32_t i;
	int c = 1;

	for (i = 0; i < m->nv && (c = strcmp(m->v[i].name, name)) < 0; i++)
		;
	if (i < m->nv && c == 0)
		return (int)i;
	if ((v = realloc(m->v, (m->nv + 1) * sizeof(*v))) == NULL)
		return -ENOMEM;
	m->v = v;
	memmove(&v[i + 1], &v[i], (m->nv - i) * sizeof(*v));
	memset(&v[i], 0, sizeof(*v));
	if ((v[i].name = strdup(name)) == NULL) {
		memmove(&v[i], &v[i + 1], (m->nv - i) * sizeof(*v));
		return -ENOMEM;
	}
	m->nv++;
	return (int)i;
}

/*
 * The index in m->f of the filter a finding counts under, added (with
 * no findings) if new; past METRICS_MAX_FILTERS names, "other".
 * Returns the index or -ENOMEM.
 */
static int
metrics_filter_index(struct metrics *m, const char *name)
{
	struct metrics_filter *f;
	uint32_t i;

	if (name == NULL)
		name = "unknown";
	for (i = 0; i < m->nf; i++)
		if (strcmp(m->f[i].name, name) == 0)
			return (int)i;
	if (m->nf >= METRICS_MAX_FILTERS && strcmp(name, "other") != 0)
		return metrics_filter_index(m, "other");
	if ((f = realloc(m->f, (m->nf + 1) * sizeof(*f))) == NULL)
		return -ENOMEM;
	m->f = f;
	memset(&f[m->nf], 0, sizeof(*f));
	if ((f[m->nf].name = strdup(name)) == NULL)
		return -ENOMEM;
	return (int)m->nf++;
}

static void
metrics_prep_free(struct metrics_prep *p, uint32_t nvitals)
{
	uint32_t i;

	for (i = 0; p->exe != NULL && p->nexe != NULL && i < nvitals; i++)
		metrics_exes_free(p->exe[i], p->nexe[i]);
	free(p->exe);
	free(p->nexe);
	free(p->vidx);
	free(p->fidx);
	metrics_gauges_free(p->g, p->ng);
	free(p->host);
}

/*
 * Everything an epoch needs allocated, before m's numbers change: m's
 * entries for its vitals and filters (unaccounted until committed), the
 * top k exes, the gauges.  Returns 0 or -ENOMEM.
 */
static int
metrics_prep(
    struct metrics *m, const struct vitals_epoch *e, struct metrics_prep *p)
{
	uint32_t i, n = e->nvitals ? e->nvitals : 1;
	int r;

	memset(p, 0, sizeof(*p));
	p->vidx = calloc(n, sizeof(*p->vidx));
	p->exe = calloc(n, sizeof(*p->exe));
	p->nexe = calloc(n, sizeof(*p->nexe));
	p->fidx = calloc(e->nfindings ? e->nfindings : 1, sizeof(*p->fidx));
	p->host = strdup(e->host != NULL ? e->host : "");
	if (!p->vidx || !p->exe || !p->nexe || !p->fidx || !p->host)
		return -ENOMEM;
	for (i = 0; i < e->nvitals; i++) {
		if (metrics_vital_index(m, e->vitals[i].name) < 0 ||
		    metrics_top(
			&e->vitals[i], m->topk, &p->exe[i], &p->nexe[i]))
			return -ENOMEM;
	}
	/* Indexes only once every vital is in: inserts move them. */
	for (i = 0; i < e->nvitals; i++)
		p->vidx[i] =
		    (uint32_t)metrics_vital_index(m, e->vitals[i].name);
	for (i = 0; i < e->nfindings; i++) {
		if ((r = metrics_filter_index(m, e->findings[i].filter)) < 0)
			return r;
		p->fidx[i] = (uint32_t)r;
	}
	return metrics_gauges(e, p);
}

/* Add one vital's epoch to its entry; its exes move from the prep. */
static void
metrics_commit_vital(struct metrics_vital *v,
    const struct vitals_vital_epoch *ve, struct metrics_exe **exe,
    uint32_t *nexe)
{
	char unit[METRICS_UNIT_LEN];

	snprintf(unit, sizeof(unit), "%s", ve->unit != NULL ? ve->unit : "");
	if (v->epochs == 0 || strcmp(v->unit, unit) != 0) {
		v->weight = 0; /* another unit: its counter starts again */
		metrics_vital_unit(v, unit);
	}
	v->epochs++;
	v->events += ve->events;
	v->weight += ve->wsum;
	v->dropped += ve->dropped;
	v->lost += ve->samples_dropped;
	v->kept += ve->nsamples;
	v->present = 1;
	v->threshold = ve->threshold;
	v->unique = ve->unique;
	v->exe = *exe;
	v->nexe = *nexe;
	*exe = NULL;
	*nexe = 0;
}

/* Account the prepared epoch; allocates nothing, cannot fail. */
static void
metrics_commit(
    struct metrics *m, const struct vitals_epoch *e, struct metrics_prep *p)
{
	const struct vitals_finding *f;
	uint32_t i, sev;
	char *host;

	if (m->have_last && e->start_ns == m->last_start &&
	    e->seq == m->last_seq && e->nfindings > m->last_nfindings) {
		/* The same epoch again, with the filters' findings: only
		 * those are new. */
		for (i = m->last_nfindings; i < e->nfindings; i++) {
			f = &e->findings[i];
			sev = f->severity < METRICS_NSEV ? f->severity : 0;
			m->f[p->fidx[i]].n[sev]++;
		}
		m->last_nfindings = e->nfindings;
		return;
	}
	m->have_last = 1;
	m->last_start = e->start_ns;
	m->last_seq = e->seq;
	m->last_nfindings = e->nfindings;
	for (i = 0; i < m->nv; i++) {
		metrics_exes_free(m->v[i].exe, m->v[i].nexe);
		m->v[i].exe = NULL;
		m->v[i].nexe = 0;
		m->v[i].present = 0;
	}
	for (i = 0; i < e->nvitals; i++)
		metrics_commit_vital(
		    &m->v[p->vidx[i]], &e->vitals[i], &p->exe[i], &p->nexe[i]);
	for (i = 0; i < e->nfindings; i++) {
		f = &e->findings[i];
		sev = f->severity < METRICS_NSEV ? f->severity : 0;
		m->f[p->fidx[i]].n[sev]++;
	}
	metrics_gauges_free(m->g, m->ng);
	m->g = p->g;
	m->ng = p->ng;
	p->g = NULL;
	p->ng = 0;
	host = m->host;
	m->host = p->host;
	p->host = host;
	m->epochs++;
	m->partial += e->partial != 0;
	m->cpu_ns += e->cpu_ns;
	m->end_ns = e->start_ns + e->length_ns;
	m->length_ns = e->length_ns;
}

int
metrics_epoch(struct metrics *m, const struct vitals_epoch *e)
{
	struct metrics_prep p;
	int r;

	if ((r = metrics_prep(m, e, &p)) == 0)
		metrics_commit(m, e, &p);
	metrics_prep_free(&p, e->nvitals);
	return r;
}

/* ---- rendering ---- */

/* Write s with the escapes of a label value (quote too) or of HELP. */
static void
metrics_escape(FILE *f, const char *s, int quote)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k;

	for (; *p != '\0'; p += k) {
		k = metrics_utf8(p);
		if (k == 0) {
			fputc('?', f);
			k = 1;
		} else if (*p == '\\') {
			fputs("\\\\", f);
		} else if (*p == '\n') {
			fputs("\\n", f);
		} else if (*p == '"' && quote) {
			fputs("\\\"", f);
		} else {
			fwrite(p, 1, k, f);
		}
	}
}

/* A family's HELP (printf format) and TYPE lines. */
static void __attribute__((format(printf, 4, 5)))
metrics_head(FILE *f, const char *name, const char *type, const char *fmt, ...)
{
	char help[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(help, sizeof(help), fmt, ap);
	va_end(ap);
	fprintf(f, "# HELP %s ", name);
	metrics_escape(f, help, 0);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

/* A sample's name and up to two labels (k1 or k2 NULL: fewer). */
static void
metrics_series(FILE *f, const char *name, const char *k1, const char *v1,
    const char *k2, const char *v2)
{
	fputs(name, f);
	if (k1 == NULL)
		return;
	fprintf(f, "{%s=\"", k1);
	metrics_escape(f, v1, 1);
	if (k2 != NULL) {
		fprintf(f, "\",%s=\"", k2);
		metrics_escape(f, v2, 1);
	}
	fputs("\"}", f);
}

/* A value: the shortest of %.15g and %.17g that reads back the same. */
static void
metrics_double(FILE *f, double x)
{
	char buf[40];

	if (isnan(x)) {
		fputs(" NaN\n", f);
		return;
	}
	if (isinf(x)) {
		fputs(x > 0 ? " +Inf\n" : " -Inf\n", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", x);
	if (strtod(buf, NULL) != x)
		snprintf(buf, sizeof(buf), "%.17g", x);
	fprintf(f, " %s\n", buf);
}

static void
metrics_u64(FILE *f, uint64_t x)
{
	fprintf(f, " %" PRIu64 "\n", x);
}

/* A counter in a vital's unit, in its base unit. */
static void
metrics_scaled(FILE *f, const struct metrics_vital *v, uint64_t x)
{
	if (v->mul == 1 && v->div == 1)
		metrics_u64(f, x);
	else
		metrics_double(f, (double)x * v->mul / v->div);
}

/* A family of one sample. */
static void
metrics_one(
    FILE *f, const char *name, const char *type, const char *help, uint64_t x)
{
	metrics_head(f, name, type, "%s", help);
	metrics_series(f, name, NULL, NULL, NULL, NULL);
	metrics_u64(f, x);
}

static void
metrics_one_seconds(
    FILE *f, const char *name, const char *type, const char *help, uint64_t ns)
{
	metrics_head(f, name, type, "%s", help);
	metrics_series(f, name, NULL, NULL, NULL, NULL);
	metrics_double(f, (double)ns / 1e9);
}

static void
metrics_render_build(FILE *f, const struct metrics *m)
{
	metrics_head(f, "vitals_build_info", "gauge",
	    "The vitals version serving these metrics; always 1");
	metrics_series(
	    f, "vitals_build_info", "version", PACKAGE_VERSION, NULL, NULL);
	metrics_u64(f, 1);
	if (m->host == NULL)
		return;
	metrics_head(f, "vitals_host_info", "gauge",
	    "The host of the newest epoch; always 1 (the other families "
	    "carry no host label)");
	metrics_series(f, "vitals_host_info", "host", m->host, NULL, NULL);
	metrics_u64(f, 1);
}

/* The epochs' numbers about the collector, then the server's. */
static void
metrics_render_health(FILE *f, const struct metrics *m)
{
	const struct metrics_daemon *d = &m->d;

	metrics_one(f, "vitals_epochs_total", "counter",
	    "Closed epochs accounted since the exporter started", m->epochs);
	metrics_one(f, "vitals_partial_epochs_total", "counter",
	    "Epochs closed early (at shutdown) among them", m->partial);
	metrics_one_seconds(f, "vitals_collector_cpu_seconds_total", "counter",
	    "CPU time of the collector (user, system and its BPF programs) "
	    "in those epochs",
	    m->cpu_ns);
	if (m->epochs > 0) {
		metrics_one_seconds(f, "vitals_last_epoch_timestamp_seconds",
		    "gauge",
		    "When the newest epoch closed (its end), "
		    "seconds since the Unix epoch",
		    m->end_ns);
		metrics_one_seconds(f, "vitals_epoch_length_seconds", "gauge",
		    "Actual length of the newest epoch", m->length_ns);
	}
	if (d->have & METRICS_HAVE_START)
		metrics_one_seconds(f, "vitals_start_time_seconds", "gauge",
		    "When the daemon started, seconds since the Unix epoch",
		    d->start_ns);
	if (d->have & METRICS_HAVE_BPF_RUN) {
		metrics_one_seconds(f, "vitals_bpf_run_seconds_total",
		    "counter",
		    "Run time of the probes' BPF programs since they were "
		    "loaded (kernel.bpf_stats_enabled)",
		    d->bpf_run_ns);
		metrics_one(f, "vitals_bpf_runs_total", "counter",
		    "Runs of the probes' BPF programs since they were loaded "
		    "(kernel.bpf_stats_enabled)",
		    d->bpf_run_count);
	}
	if (d->have & METRICS_HAVE_BACKLOG)
		metrics_one(f, "vitals_store_backlog_bytes", "gauge",
		    "Encoded epochs waiting to be stored",
		    d->store_backlog_bytes);
}

/* Which vitals a per-vital family shows, and what it shows of each. */
enum {
	METRICS_EVENTS,
	METRICS_DROPPED,
	METRICS_LOST,
	METRICS_KEPT,
	METRICS_THRESHOLD,
	METRICS_UNIQUE,
	METRICS_INFO,
};

/* clang-format off */
static const struct {
	const char *name, *type, *help;
	int gauge; /* 1: only the vitals of the newest epoch */
} metrics_vital_families[] = {
	[METRICS_EVENTS] = { "vitals_events_total", "counter",
	    "Events counted by the vital", 0 },
	[METRICS_DROPPED] = { "vitals_dropped_events_total", "counter",
	    "Events the vital lost before its sketch", 0 },
	[METRICS_LOST] = { "vitals_lost_samples_total", "counter",
	    "Sampled events not kept (the epoch's sample memory was full)", 0 },
	[METRICS_KEPT] = { "vitals_samples_total", "counter",
	    "Sampled events kept in the epochs", 0 },
	[METRICS_THRESHOLD] = { "vitals_threshold", "gauge",
	    "Sampling threshold t in force at the newest epoch's close, in the "
	    "vital's unit (vitals_vital_info)", 1 },
	[METRICS_UNIQUE] = { "vitals_unique_labels", "gauge",
	    "Distinct labels in the newest epoch (linear-counting estimate)", 1 },
	[METRICS_INFO] = { "vitals_vital_info", "gauge",
	    "The unit of the vital's weights and threshold; always 1", 0 },
};
/* clang-format on */

static uint64_t
metrics_vital_value(const struct metrics_vital *v, int which)
{
	switch (which) {
	case METRICS_EVENTS:
		return v->events;
	case METRICS_DROPPED:
		return v->dropped;
	case METRICS_LOST:
		return v->lost;
	case METRICS_KEPT:
		return v->kept;
	case METRICS_THRESHOLD:
		return v->threshold;
	case METRICS_UNIQUE:
		return v->unique;
	}
	return 1;
}

/* One family with one sample per vital. */
static void
metrics_render_vital_family(FILE *f, const struct metrics *m, int which)
{
	const struct metrics_vital *v;
	int gauge = metrics_vital_families[which].gauge, head = 0;
	uint32_t i;

	for (i = 0; i < m->nv; i++) {
		v = &m->v[i];
		if (v->epochs == 0 || (gauge && !v->present))
			continue;
		if (!head++)
			metrics_head(f, metrics_vital_families[which].name,
			    metrics_vital_families[which].type, "%s",
			    metrics_vital_families[which].help);
		if (which == METRICS_INFO)
			metrics_series(f, "vitals_vital_info", "vital", v->name,
			    "unit", v->unit);
		else
			metrics_series(f, metrics_vital_families[which].name,
			    "vital", v->name, NULL, NULL);
		metrics_u64(f, metrics_vital_value(v, which));
	}
}

/* Whether vital i is the first of m->v (among those shown) with its base. */
static int
metrics_first_base(const struct metrics *m, uint32_t i, int exes)
{
	uint32_t j;

	for (j = 0; j < i; j++)
		if ((exes ? m->v[j].nexe > 0 : m->v[j].epochs > 0) &&
		    strcmp(m->v[j].base, m->v[i].base) == 0)
			return 0;
	return 1;
}

/* vitals_weight_BASE_total: one family per base unit. */
static void
metrics_render_weights(FILE *f, const struct metrics *m)
{
	char name[96];
	uint32_t i, j;

	for (i = 0; i < m->nv; i++) {
		if (m->v[i].epochs == 0 || !metrics_first_base(m, i, 0))
			continue;
		snprintf(
		    name, sizeof(name), "vitals_weight_%s_total", m->v[i].base);
		metrics_head(f, name, "counter",
		    "Sum of the weights of the events the vital counted, in %s",
		    m->v[i].base);
		for (j = i; j < m->nv; j++) {
			if (m->v[j].epochs == 0 ||
			    strcmp(m->v[j].base, m->v[i].base) != 0)
				continue;
			metrics_series(
			    f, name, "vital", m->v[j].name, NULL, NULL);
			metrics_scaled(f, &m->v[j], m->v[j].weight);
		}
	}
}

/* vitals_exe_weight_BASE: the top k exes of each vital, per base unit. */
static void
metrics_render_exes(FILE *f, const struct metrics *m)
{
	const struct metrics_vital *v;
	char name[96];
	uint32_t i, j, k;

	for (i = 0; i < m->nv; i++) {
		if (m->v[i].nexe == 0 || !metrics_first_base(m, i, 1))
			continue;
		snprintf(
		    name, sizeof(name), "vitals_exe_weight_%s", m->v[i].base);
		metrics_head(f, name, "gauge",
		    "Weight attributed to the exe (base name of its path, else "
		    "its comm) in the newest epoch, in %s; the %" PRIu32
		    " heaviest per vital",
		    m->v[i].base, m->topk);
		for (j = i; j < m->nv; j++) {
			v = &m->v[j];
			if (strcmp(v->base, m->v[i].base) != 0)
				continue;
			for (k = 0; k < v->nexe; k++) {
				metrics_series(f, name, "vital", v->name, "exe",
				    v->exe[k].name);
				metrics_double(
				    f, v->exe[k].weight * v->mul / v->div);
			}
		}
	}
}

static void
metrics_render_findings(FILE *f, const struct metrics *m)
{
	static const char *const sev[METRICS_NSEV] = { "unknown", "info",
		"warn", "crit" };
	uint32_t i, s, head = 0;

	for (i = 0; i < m->nf; i++) {
		if (!(m->f[i].n[0] | m->f[i].n[1] | m->f[i].n[2] |
			m->f[i].n[3]))
			continue;
		if (!head++)
			metrics_head(f, "vitals_findings_total", "counter",
			    "Findings the filters emitted, by filter and "
			    "severity");
		/* Every severity of a filter seen, so rates start at 0. */
		for (s = 0; s < METRICS_NSEV; s++) {
			if (s == 0 && m->f[i].n[0] == 0)
				continue;
			metrics_series(f, "vitals_findings_total", "filter",
			    m->f[i].name, "severity", sev[s]);
			metrics_u64(f, m->f[i].n[s]);
		}
	}
}

static void
metrics_render_gauges(FILE *f, const struct metrics *m)
{
	const struct metrics_gauge *g;
	uint32_t i;

	for (i = 0; i < m->ng; i++) {
		g = &m->g[i];
		if (i == 0 || strcmp(m->g[i - 1].family, g->family) != 0)
			metrics_head(f, g->family, "gauge", "%s", g->help);
		metrics_series(f, g->family, g->lname, g->lvalue, NULL, NULL);
		metrics_double(f, g->value);
	}
}

int
metrics_render(const struct metrics *m, char **out, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int w;

	if ((f = open_memstream(&buf, &n)) == NULL)
		return -ENOMEM;
	metrics_render_build(f, m);
	metrics_render_health(f, m);
	metrics_render_vital_family(f, m, METRICS_INFO);
	metrics_render_vital_family(f, m, METRICS_EVENTS);
	metrics_render_weights(f, m);
	metrics_render_vital_family(f, m, METRICS_DROPPED);
	metrics_render_vital_family(f, m, METRICS_KEPT);
	metrics_render_vital_family(f, m, METRICS_LOST);
	metrics_render_vital_family(f, m, METRICS_THRESHOLD);
	metrics_render_vital_family(f, m, METRICS_UNIQUE);
	metrics_render_exes(f, m);
	metrics_render_findings(f, m);
	metrics_render_gauges(f, m);
	w = ferror(f);
	if (fclose(f) != 0 || w) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* One family of the nodes' state: a value per node. */
static void
metrics_node_family(FILE *f, const struct vitals_node_list *l, const char *name,
    const char *type, const char *help, int which, uint64_t now_ns)
{
	const struct vitals_node *n;
	size_t i;

	metrics_head(f, name, type, "%s", help);
	for (i = 0; i < l->n; i++) {
		n = &l->v[i];
		if (which >= 3 && n->last_end_ns == 0)
			continue;
		metrics_series(f, name, "node", n->url, NULL, NULL);
		switch (which) {
		case 0:
			metrics_u64(f, n->pulled);
			break;
		case 1:
			metrics_u64(f, n->errors);
			break;
		case 2:
			metrics_u64(f, n->refused);
			break;
		case 3:
			metrics_double(f, (double)n->last_end_ns / 1e9);
			break;
		default:
			metrics_double(f,
			    now_ns > n->last_end_ns
				? (double)(now_ns - n->last_end_ns) / 1e9
				: 0.0);
		}
	}
}

int
metrics_nodes(
    const struct vitals_node_list *l, uint64_t now_ns, char **out, size_t *len)
{
	char *buf = NULL;
	size_t i, n = 0;
	FILE *f;
	int w;

	if ((f = open_memstream(&buf, &n)) == NULL)
		return -ENOMEM;
	metrics_head(f, "vitals_remote_node_info", "gauge",
	    "A node this central pulls epochs from, with its host; always 1");
	for (i = 0; i < l->n; i++) {
		metrics_series(f, "vitals_remote_node_info", "node",
		    l->v[i].url, "host",
		    l->v[i].host != NULL ? l->v[i].host : "");
		metrics_u64(f, 1);
	}
	metrics_node_family(f, l, "vitals_remote_epochs_pulled_total",
	    "counter", "Epoch files pulled from the node and stored", 0,
	    now_ns);
	metrics_node_family(f, l, "vitals_remote_errors_total", "counter",
	    "Rounds that failed on the network, a timeout or an HTTP error", 1,
	    now_ns);
	metrics_node_family(f, l, "vitals_remote_refused_total", "counter",
	    "Answers and epoch files of the node refused by verification", 2,
	    now_ns);
	metrics_node_family(f, l,
	    "vitals_remote_last_epoch_end_timestamp_seconds", "gauge",
	    "End of the newest epoch pulled from the node, seconds since the "
	    "Unix epoch",
	    3, now_ns);
	metrics_node_family(f, l, "vitals_remote_lag_seconds", "gauge",
	    "How far the newest epoch pulled from the node ends behind now", 4,
	    now_ns);
	w = ferror(f);
	if (fclose(f) != 0 || w) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = n;
	return 0;
}
