/* SPDX-License-Identifier: MIT */
/*
 * proc: the black-box OS metrics of paper 002, computed with sysstat's
 * formulas (sar, iostat) from /proc/stat, meminfo, diskstats, net/dev and
 * net/snmp read on a timer, published as named metrics.  The parsers take
 * the files' text, so tests feed them fixtures; no privilege is needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vitals/vitals.h>

#define PROC_NS 1000000000ULL
#define PROC_INTERVAL_MIN 10000000ULL /* 10ms */
#define PROC_NAME_MAX 32 /* device names, with their NUL */
#define PROC_DEV_NV 16 /* counters kept per device */
#define PROC_FILE_MAX (64u << 20) /* larger /proc text is refused */

struct proc_config {
	uint64_t interval; /* ns between two reads */
	char *root; /* directory holding stat, meminfo... */
	struct vitals_strlist disks; /* only these disks; empty = default */
	struct vitals_strlist interfaces; /* only these; empty = all but lo */
};

#define PROC_OFF(m) offsetof(struct proc_config, m)

/* clang-format off */
static const struct vitals_option proc_options[] = {
	{ .key = "interval", .type = VITALS_OPT_DURATION,
	    .offset = PROC_OFF(interval), .def = "1s",
	    .help = "time between two reads (rates are per second over it)",
	    .min = 0.01, .max = 3600 },
	{ .key = "root", .type = VITALS_OPT_STRING, .offset = PROC_OFF(root),
	    .def = "/proc",
	    .help = "directory read instead of /proc (tests, containers)" },
	{ .key = "disks", .type = VITALS_OPT_STRLIST, .offset = PROC_OFF(disks),
	    .def = NULL,
	    .help = "disks to report (default: whole disks but loop, ram, zram)" },
	{ .key = "interfaces", .type = VITALS_OPT_STRLIST,
	    .offset = PROC_OFF(interfaces), .def = NULL,
	    .help = "network interfaces to report (default: all but lo)" },
	{ .key = NULL }
};
/* clang-format on */

/* Fields of the "cpu" line of /proc/stat, in clock ticks. */
enum {
	PROC_USER,
	PROC_NICE,
	PROC_SYSTEM,
	PROC_IDLE,
	PROC_IOWAIT,
	PROC_IRQ,
	PROC_SOFTIRQ,
	PROC_STEAL,
	PROC_GUEST,
	PROC_GUEST_NICE,
	PROC_NCPU
};

/* What a /proc/stat text held (struct proc_stat.have). */
#define PROC_HAVE_CPU 0x01u
#define PROC_HAVE_CTXT 0x02u
#define PROC_HAVE_INTR 0x04u
#define PROC_HAVE_PROCS 0x08u
#define PROC_HAVE_RUNNING 0x10u
#define PROC_HAVE_BLOCKED 0x20u

struct proc_stat {
	uint64_t cpu[PROC_NCPU]; /* the "cpu" line; absent fields stay 0 */
	uint64_t ctxt, intr, procs; /* counters: switches, interrupts, forks */
	uint64_t running, blocked; /* gauges: procs_running, procs_blocked */
	uint32_t have; /* PROC_HAVE_* */
};

/* Lines of /proc/meminfo used (kB), and what they are called there. */
enum {
	PROC_MEMTOTAL,
	PROC_MEMFREE,
	PROC_MEMAVAIL,
	PROC_BUFFERS,
	PROC_CACHED,
	PROC_DIRTY,
	PROC_SLAB,
	PROC_NMEM
};
static const char *const proc_mem_keys[PROC_NMEM] = { "MemTotal", "MemFree",
	"MemAvailable", "Buffers", "Cached", "Dirty", "Slab" };

struct proc_mem {
	uint64_t kb[PROC_NMEM]; /* values in kB */
	uint32_t have; /* bit i: kb[i] was read */
};

/* Counters of /proc/diskstats after the name (4.18+ adds the discards). */
enum {
	PROC_RD_IOS,
	PROC_RD_MERGES,
	PROC_RD_SEC,
	PROC_RD_TICKS,
	PROC_WR_IOS,
	PROC_WR_MERGES,
	PROC_WR_SEC,
	PROC_WR_TICKS,
	PROC_IN_FLIGHT,
	PROC_TOT_TICKS,
	PROC_RQ_TICKS,
	PROC_DC_IOS,
	PROC_DC_MERGES,
	PROC_DC_SEC,
	PROC_DC_TICKS
};
#define PROC_DISK_MINV 11 /* counters up to rq_ticks */

/* Counters of /proc/net/dev after "NAME:". */
enum {
	PROC_RXBYT,
	PROC_RXPCK,
	PROC_RXERR,
	PROC_RXDROP,
	PROC_TXBYT = 8,
	PROC_TXPCK,
	PROC_TXERR,
	PROC_TXDROP
};
#define PROC_NET_NV 16

/* One disk or interface in a snapshot. */
struct proc_dev {
	char name[PROC_NAME_MAX]; /* as the file spells it */
	char label[PROC_NAME_MAX]; /* the name as a metric name part */
	uint64_t v[PROC_DEV_NV]; /* counters, in the file's order */
	uint32_t nv; /* counters read */
	uint32_t drop; /* not reported (being selected) */
};

struct proc_devs {
	struct proc_dev *v; /* n devices sorted by name, cap allocated */
	uint32_t n, cap;
};

/* Counters of /proc/net/snmp used, by protocol line and column name. */
enum {
	PROC_TCP_ACTIVE,
	PROC_TCP_PASSIVE,
	PROC_TCP_RETRANS,
	PROC_TCP_INERRS,
	PROC_UDP_IN,
	PROC_UDP_NOPORTS,
	PROC_UDP_INERRS,
	PROC_UDP_OUT,
	PROC_NSNMP
};
static const struct {
	const char *proto, *column, *metric, *unit;
} proc_snmp_keys[PROC_NSNMP] = {
	{ "Tcp", "ActiveOpens", "proc.tcp.active_s", "1/s" },
	{ "Tcp", "PassiveOpens", "proc.tcp.passive_s", "1/s" },
	{ "Tcp", "RetransSegs", "proc.tcp.retrans_s", "segments/s" },
	{ "Tcp", "InErrs", "proc.tcp.isegerr_s", "segments/s" },
	{ "Udp", "InDatagrams", "proc.udp.idgm_s", "datagrams/s" },
	{ "Udp", "NoPorts", "proc.udp.noport_s", "datagrams/s" },
	{ "Udp", "InErrors", "proc.udp.idgmerr_s", "datagrams/s" },
	{ "Udp", "OutDatagrams", "proc.udp.odgm_s", "datagrams/s" },
};

struct proc_snmp {
	uint64_t v[PROC_NSNMP]; /* counters */
	uint32_t have; /* bit i: v[i] was read */
};

/* The files, as bits of struct proc_snap.files and their names. */
enum {
	PROC_F_STAT,
	PROC_F_MEMINFO,
	PROC_F_DISKSTATS,
	PROC_F_NETDEV,
	PROC_F_SNMP,
	PROC_NFILES
};
static const char *const proc_files[PROC_NFILES] = { "stat", "meminfo",
	"diskstats", "net/dev", "net/snmp" };

/* Everything read at one time. */
struct proc_snap {
	uint64_t at_ns; /* vitals_monotonic_ns() of the read */
	uint32_t files; /* bit PROC_F_*: read and parsed */
	struct proc_stat stat;
	struct proc_mem mem;
	struct proc_devs disks; /* the disks reported */
	struct proc_devs nets; /* the interfaces reported */
	struct proc_snmp snmp;
};

struct proc {
	struct vitals_ctx *ctx;
	const struct proc_config *cf;
	struct proc_snap snap[2]; /* the last read and the one before */
	unsigned cur; /* snap[cur] is the last read */
	char *buf; /* text of the file being parsed */
	size_t bufcap;
	uint32_t missing; /* bit PROC_F_*: unreadable, said so */
	struct vitals_timer *timer;
};

/* ---- parsing: text in, counters out ---- */

/* The line after the one at s, or NULL at the end of the text. */
static const char *
proc_next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl != NULL && nl[1] != '\0' ? nl + 1 : NULL;
}

/*
 * Read up to max unsigned decimals separated by blanks, stopping at the
 * end of the line or at anything else.  Returns how many were read.
 */
static uint32_t
proc_u64s(const char *s, uint64_t *v, uint32_t max)
{
	uint32_t n = 0;
	uint64_t x;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (n == max || *s < '0' || *s > '9')
			return n;
		for (x = 0; *s >= '0' && *s <= '9'; s++)
			x = x * 10 + (uint64_t)(*s - '0');
		v[n++] = x;
	}
}

/* Whether line starts with word followed by a blank. */
static int
proc_word(const char *line, const char *word)
{
	size_t n = strlen(word);

	return strncmp(line, word, n) == 0 &&
	    (line[n] == ' ' || line[n] == '\t');
}

/* One line of /proc/stat: "cpu ...", "ctxt N", "procs_running N"... */
static void
proc_stat_line(const char *l, struct proc_stat *st)
{
	static const struct {
		const char *word;
		size_t off;
		uint32_t bit;
	} one[] = {
		{ "ctxt", offsetof(struct proc_stat, ctxt), PROC_HAVE_CTXT },
		{ "intr", offsetof(struct proc_stat, intr), PROC_HAVE_INTR },
		{ "processes", offsetof(struct proc_stat, procs),
		    PROC_HAVE_PROCS },
		{ "procs_running", offsetof(struct proc_stat, running),
		    PROC_HAVE_RUNNING },
		{ "procs_blocked", offsetof(struct proc_stat, blocked),
		    PROC_HAVE_BLOCKED },
	};
	size_t i;

	if (proc_word(l, "cpu")) {
		/* Kernels before 2.6.33 lack the last fields: they stay 0. */
		if (proc_u64s(l + 3, st->cpu, PROC_NCPU) >= 4)
			st->have |= PROC_HAVE_CPU;
		return;
	}
	for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		if (proc_word(l, one[i].word) &&
		    proc_u64s(l + strlen(one[i].word),
			(uint64_t *)((char *)st + one[i].off), 1) == 1) {
			st->have |= one[i].bit;
			return;
		}
	}
}

/* Parse /proc/stat text.  Returns 0, or -EBADMSG without a "cpu" line. */
static int
proc_parse_stat(const char *text, struct proc_stat *st)
{
	const char *l;

	memset(st, 0, sizeof(*st));
	for (l = text; l != NULL; l = proc_next_line(l))
		proc_stat_line(l, st);
	return (st->have & PROC_HAVE_CPU) ? 0 : -EBADMSG;
}

/* Parse /proc/meminfo text.  Returns 0, or -EBADMSG without MemTotal. */
static int
proc_parse_meminfo(const char *text, struct proc_mem *m)
{
	const char *l;
	size_t n;
	int i;

	memset(m, 0, sizeof(*m));
	for (l = text; l != NULL; l = proc_next_line(l)) {
		for (i = 0; i < PROC_NMEM; i++) {
			n = strlen(proc_mem_keys[i]);
			if (strncmp(l, proc_mem_keys[i], n) == 0 &&
			    l[n] == ':' && proc_u64s(l + n + 1, &m->kb[i], 1))
				m->have |= 1u << i;
		}
	}
	return (m->have & (1u << PROC_MEMTOTAL)) ? 0 : -EBADMSG;
}

/* Whether c may stand in a metric name part as it is. */
static int
proc_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-';
}

/* A device name as a metric name part: [A-Za-z0-9_-], others '_'. */
static void
proc_label(const char *name, char *out)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i < PROC_NAME_MAX - 1; i++)
		out[i] = proc_name_char(name[i]) ? name[i] : '_';
	out[i] = '\0';
}

/* A new zeroed device at the end of d, or NULL when out of memory. */
static struct proc_dev *
proc_dev_add(struct proc_devs *d, const char *name, size_t len)
{
	struct proc_dev *v;
	uint32_t cap;

	if (len == 0 || len >= PROC_NAME_MAX)
		return NULL;
	if (d->n == d->cap) {
		cap = d->cap ? d->cap * 2 : 16;
		if ((v = realloc(d->v, cap * sizeof(*v))) == NULL)
			return NULL;
		d->v = v;
		d->cap = cap;
	}
	v = &d->v[d->n];
	memset(v, 0, sizeof(*v));
	memcpy(v->name, name, len);
	proc_label(v->name, v->label);
	return v;
}

/* The span of the next blank-separated word at *s; its length, 0 at EOL. */
static size_t
proc_token(const char **s)
{
	size_t n;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	n = strcspn(*s, " \t\n");
	return n;
}

/* One /proc/diskstats line: "MAJ MIN NAME counters..." */
static int
proc_disk_line(const char *l, struct proc_devs *d)
{
	struct proc_dev *dev;
	uint64_t majmin[2];
	size_t n;

	if (proc_u64s(l, majmin, 2) != 2)
		return 0;
	l += strspn(l, " \t");
	l += strspn(l, "0123456789");
	l += strspn(l, " \t");
	l += strspn(l, "0123456789");
	if ((n = proc_token(&l)) == 0 || n >= PROC_NAME_MAX)
		return 0; /* not a device line: skipped */
	if ((dev = proc_dev_add(d, l, n)) == NULL)
		return -ENOMEM;
	dev->nv = proc_u64s(l + n, dev->v, PROC_DEV_NV);
	if (dev->nv >= PROC_DISK_MINV)
		d->n++;
	return 0;
}

/* One /proc/net/dev line: "  NAME: 16 counters"; headers are skipped. */
static int
proc_net_line(const char *l, struct proc_devs *d)
{
	const char *colon = strchr(l, ':'), *eol = strchr(l, '\n');
	struct proc_dev *dev;
	size_t n;

	if (colon == NULL || (eol != NULL && colon > eol))
		return 0;
	l += strspn(l, " \t");
	for (n = (size_t)(colon - l); n > 0 && l[n - 1] == ' '; n--)
		;
	if (n == 0 || n >= PROC_NAME_MAX)
		return 0;
	if ((dev = proc_dev_add(d, l, n)) == NULL)
		return -ENOMEM;
	dev->nv = proc_u64s(colon + 1, dev->v, PROC_DEV_NV);
	if (dev->nv == PROC_NET_NV)
		d->n++;
	return 0;
}

static int
proc_dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct proc_dev *)a)->name,
	    ((const struct proc_dev *)b)->name);
}

/* Parse every line of text with fn into d, sorted by name. */
static int
proc_parse_devs(const char *text, struct proc_devs *d,
    int (*fn)(const char *, struct proc_devs *))
{
	const char *l;
	int r;

	d->n = 0;
	for (l = text; l != NULL; l = proc_next_line(l))
		if ((r = fn(l, d)) != 0)
			return r;
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), proc_dev_cmp);
	return 0;
}

/* The device called name (len bytes of it) in sorted d, or NULL. */
static const struct proc_dev *
proc_dev_find(const struct proc_devs *d, const char *name, size_t len)
{
	struct proc_dev key;

	if (len >= PROC_NAME_MAX)
		return NULL;
	memcpy(key.name, name, len);
	key.name[len] = '\0';
	return bsearch(&key, d->v, d->n, sizeof(*d->v), proc_dev_cmp);
}

/*
 * Whether disk name is a partition of another disk in d: "sda1" of
 * "sda", "nvme0n1p2" of "nvme0n1", "mmcblk0p1" of "mmcblk0".  /proc has
 * no flag for it (sysstat asks /sys/block); the parent's presence in the
 * same file tells it without leaving the root directory.
 */
static int
proc_is_partition(const struct proc_devs *d, const char *name)
{
	size_t len = strlen(name), i = len;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == len || i == 0)
		return 0;
	if (proc_dev_find(d, name, i) != NULL)
		return 1;
	return i >= 2 && name[i - 1] == 'p' && name[i - 2] >= '0' &&
	    name[i - 2] <= '9' && proc_dev_find(d, name, i - 1) != NULL;
}

/* Whether name is on the list. */
static int
proc_listed(const struct vitals_strlist *l, const char *name)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return 1;
	return 0;
}

/* Whether a disk is reported when no list is given. */
static int
proc_disk_default(const struct proc_devs *d, const char *name)
{
	if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0 ||
	    strncmp(name, "zram", 4) == 0)
		return 0;
	return !proc_is_partition(d, name);
}

/*
 * Keep the disks to report: the listed ones, or by default the whole
 * disks but loop, ram and zram.  Decided on the full sorted list first,
 * since a partition is known by its parent.
 */
static void
proc_select_disks(struct proc_devs *d, const struct vitals_strlist *list)
{
	uint32_t i, kept = 0;

	for (i = 0; i < d->n; i++)
		d->v[i].drop = list->n > 0
		    ? !proc_listed(list, d->v[i].name)
		    : !proc_disk_default(d, d->v[i].name);
	for (i = 0; i < d->n; i++)
		if (!d->v[i].drop)
			d->v[kept++] = d->v[i];
	d->n = kept;
}

/* Keep the listed interfaces, or by default all but lo. */
static void
proc_select_nets(struct proc_devs *d, const struct vitals_strlist *list)
{
	uint32_t i, kept = 0;
	int keep;

	for (i = 0; i < d->n; i++) {
		keep = list->n > 0 ? proc_listed(list, d->v[i].name)
				   : strcmp(d->v[i].name, "lo") != 0;
		if (keep)
			d->v[kept++] = d->v[i];
	}
	d->n = kept;
}

/* The column of the snmp keys this header word names, or -1. */
static int
proc_snmp_key(const char *proto, size_t plen, const char *word, size_t n)
{
	int i;

	for (i = 0; i < PROC_NSNMP; i++)
		if (strlen(proc_snmp_keys[i].proto) == plen &&
		    strncmp(proc_snmp_keys[i].proto, proto, plen) == 0 &&
		    strlen(proc_snmp_keys[i].column) == n &&
		    strncmp(proc_snmp_keys[i].column, word, n) == 0)
			return i;
	return -1;
}

/* A header line and its values line ("Tcp: Names..." / "Tcp: 1 2..."). */
static void
proc_snmp_pair(
    const char *head, const char *vals, size_t plen, struct proc_snmp *s)
{
	const char *h = head + plen + 1, *v = vals + plen + 1;
	size_t hn, vn;
	int k;

	for (;;) {
		hn = proc_token(&h);
		vn = proc_token(&v);
		if (hn == 0 || vn == 0)
			return;
		k = proc_snmp_key(head, plen, h, hn);
		if (k >= 0 && proc_u64s(v, &s->v[k], 1) == 1)
			s->have |= 1u << k;
		h += hn;
		v += vn;
	}
}

/*
 * Parse /proc/net/snmp text: each protocol is a line of column names
 * followed by a line of values, both starting with "Proto:".
 */
static int
proc_parse_snmp(const char *text, struct proc_snmp *s)
{
	const char *l, *head = NULL, *colon;
	size_t plen;

	memset(s, 0, sizeof(*s));
	for (l = text; l != NULL; l = proc_next_line(l)) {
		if ((colon = strchr(l, ':')) == NULL)
			continue;
		plen = (size_t)(colon - l);
		if (head != NULL && strncmp(head, l, plen + 1) == 0) {
			proc_snmp_pair(head, l, plen, s);
			head = NULL;
		} else
			head = l;
	}
	return 0;
}

/* ---- reading the files ---- */

/* Room for 4096 more bytes in p->buf after len; 0 or a negative errno. */
static int
proc_buf_reserve(struct proc *p, size_t len)
{
	size_t cap = p->bufcap * 2 + 8192;
	char *nb;

	if (p->bufcap - len >= 4096)
		return 0;
	if (p->bufcap >= PROC_FILE_MAX)
		return -EFBIG;
	if ((nb = realloc(p->buf, cap)) == NULL)
		return -ENOMEM;
	p->buf = nb;
	p->bufcap = cap;
	return 0;
}

/*
 * Read root/rel whole into p->buf (NUL-terminated); /proc files have no
 * size, so read until EOF.  The buffer only grows.  0 or a negative errno.
 */
static int
proc_read_file(struct proc *p, const char *rel)
{
	char path[PATH_MAX];
	size_t len = 0;
	ssize_t n;
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", p->cf->root, rel);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while ((r = proc_buf_reserve(p, len)) == 0) {
		n = read(fd, p->buf + len, p->bufcap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (p->buf != NULL)
		p->buf[len] = '\0';
	return r;
}

/* Parse the text of file f into s. */
static int
proc_parse(struct proc *p, int f, struct proc_snap *s)
{
	const char *t = p->buf;
	int r;

	switch (f) {
	case PROC_F_STAT:
		return proc_parse_stat(t, &s->stat);
	case PROC_F_MEMINFO:
		return proc_parse_meminfo(t, &s->mem);
	case PROC_F_DISKSTATS:
		if ((r = proc_parse_devs(t, &s->disks, proc_disk_line)) == 0)
			proc_select_disks(&s->disks, &p->cf->disks);
		return r;
	case PROC_F_NETDEV:
		if ((r = proc_parse_devs(t, &s->nets, proc_net_line)) == 0)
			proc_select_nets(&s->nets, &p->cf->interfaces);
		return r;
	default:
		return proc_parse_snmp(t, &s->snmp);
	}
}

/*
 * Read every file into s.  A file that cannot be read or parsed leaves
 * its metrics out (said once, until it reads again, unless its bit is in
 * quiet).  Returns the first file's error, 0 if all were read.
 */
static int
proc_snap_read(struct proc *p, struct proc_snap *s, uint32_t quiet)
{
	int f, r, first = 0;

	s->files = 0;
	s->at_ns = vitals_monotonic_ns(p->ctx);
	for (f = 0; f < PROC_NFILES; f++) {
		r = proc_read_file(p, proc_files[f]);
		if (r == 0)
			r = proc_parse(p, f, s);
		if (r == 0) {
			s->files |= 1u << f;
			p->missing &= ~(1u << f);
			continue;
		}
		if (first == 0)
			first = r;
		if (!((p->missing | quiet) & (1u << f)))
			vitals_log(p->ctx, VITALS_LOG_WARN,
			    "%s/%s: %s; its metrics are left out", p->cf->root,
			    proc_files[f],
			    r == -EBADMSG ? "not in the expected format"
					  : strerror(-r));
		p->missing |= 1u << f;
	}
	return first;
}

/* ---- the formulas ---- */

/* Record one value; refusals other than a full table are logged. */
static void __attribute__((format(printf, 4, 5)))
proc_put(struct proc *p, double value, const char *unit, const char *fmt, ...)
{
	char name[128];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	r = vitals_metric_put(p->ctx, name, unit, value);
	if (r != 0 && r != -ENOSPC)
		vitals_log(p->ctx, VITALS_LOG_WARN, "metric %s refused: %s",
		    name, strerror(-r));
}

/*
 * cur - prev of a counter into *d; 0 (skip this interval) when it went
 * backwards: wrapped, or reset by a device removed and added again.
 */
static int
proc_delta(uint64_t prev, uint64_t cur, double *d)
{
	if (cur < prev)
		return 0;
	*d = (double)(cur - prev);
	return 1;
}

/*
 * sar -u: shares of the ticks elapsed.  Guest time is already counted in
 * user (and guest_nice in nice), so it is taken out there; %system counts
 * hard and soft interrupts, as sar -u without ALL does.
 */
static void
proc_put_cpu(
    struct proc *p, const struct proc_stat *a, const struct proc_stat *b)
{
	double d[PROC_NCPU], user, nice, sys, total;
	int i;

	for (i = 0; i < PROC_NCPU; i++)
		if (!proc_delta(a->cpu[i], b->cpu[i], &d[i]))
			return;
	user = d[PROC_USER] > d[PROC_GUEST] ? d[PROC_USER] - d[PROC_GUEST] : 0;
	nice = d[PROC_NICE] > d[PROC_GUEST_NICE]
	    ? d[PROC_NICE] - d[PROC_GUEST_NICE]
	    : 0;
	sys = d[PROC_SYSTEM] + d[PROC_IRQ] + d[PROC_SOFTIRQ];
	total =
	    user + nice + sys + d[PROC_IDLE] + d[PROC_IOWAIT] + d[PROC_STEAL];
	if (total <= 0)
		return;
	proc_put(p, 100 * user / total, "%", "proc.cpu.user_pct");
	proc_put(p, 100 * nice / total, "%", "proc.cpu.nice_pct");
	proc_put(p, 100 * sys / total, "%", "proc.cpu.system_pct");
	proc_put(p, 100 * d[PROC_IOWAIT] / total, "%", "proc.cpu.iowait_pct");
	proc_put(p, 100 * d[PROC_STEAL] / total, "%", "proc.cpu.steal_pct");
	proc_put(p, 100 * d[PROC_IDLE] / total, "%", "proc.cpu.idle_pct");
}

/* sar -w and -q: switches, interrupts and forks per second; run queue. */
static void
proc_put_sys(struct proc *p, const struct proc_stat *a,
    const struct proc_stat *b, double secs)
{
	double d;

	if (a != NULL && (a->have & b->have & PROC_HAVE_CTXT) &&
	    proc_delta(a->ctxt, b->ctxt, &d))
		proc_put(p, d / secs, "1/s", "proc.sys.cswch_s");
	if (a != NULL && (a->have & b->have & PROC_HAVE_INTR) &&
	    proc_delta(a->intr, b->intr, &d))
		proc_put(p, d / secs, "1/s", "proc.sys.intr_s");
	if (a != NULL && (a->have & b->have & PROC_HAVE_PROCS) &&
	    proc_delta(a->procs, b->procs, &d))
		proc_put(p, d / secs, "1/s", "proc.sys.proc_s");
	if (b->have & PROC_HAVE_RUNNING)
		proc_put(p, (double)b->running, "tasks", "proc.sys.runq_sz");
	if (b->have & PROC_HAVE_BLOCKED)
		proc_put(p, (double)b->blocked, "tasks", "proc.sys.blocked");
}

/*
 * sar -r: sizes in bytes; used memory leaves out free, buffers, page
 * cache and slab, as sysstat 11 and later count kbmemused.
 */
static void
proc_put_mem(struct proc *p, const struct proc_mem *m)
{
	static const char *const names[PROC_NMEM] = { NULL, "free", "available",
		"buffers", "cached", "dirty", NULL };
	double total = (double)m->kb[PROC_MEMTOTAL] * 1024, unused = 0;
	int i;

	for (i = 0; i < PROC_NMEM; i++)
		if (names[i] != NULL && (m->have & (1u << i)))
			proc_put(p, (double)m->kb[i] * 1024, "bytes",
			    "proc.mem.%s_bytes", names[i]);
	for (i = PROC_MEMFREE; i <= PROC_SLAB; i++)
		if (i != PROC_MEMAVAIL && i != PROC_DIRTY)
			unused += (double)m->kb[i] * 1024;
	if (unused > total)
		unused = total;
	proc_put(p, total - unused, "bytes", "proc.mem.used_bytes");
	if (total > 0)
		proc_put(p, 100 * (total - unused) / total, "%",
		    "proc.mem.memused_pct");
}

/* I/Os, sectors and ticks of a disk between two reads, per their deltas. */
struct proc_io {
	double rd, wr, nr; /* reads, writes, all I/Os (+ discards) */
	double rd_sec, wr_sec, sec; /* sectors read, written, all */
	double ticks; /* ms the I/Os took (read+write+discard) */
	int ok_rd, ok_wr, ok_nr, ok_rd_sec, ok_wr_sec, ok_sec, ok_ticks;
};

/* The deltas a disk's formulas need; ok_* says which are usable. */
static void
proc_io_deltas(
    const struct proc_dev *a, const struct proc_dev *b, struct proc_io *io)
{
	int dc = a->nv > PROC_DC_TICKS && b->nv > PROC_DC_TICKS;
	double dios = 0, dsec = 0, dticks = 0, rt = 0, wt = 0;
	int ok_dc;

	memset(io, 0, sizeof(*io));
	io->ok_rd = proc_delta(a->v[PROC_RD_IOS], b->v[PROC_RD_IOS], &io->rd);
	io->ok_wr = proc_delta(a->v[PROC_WR_IOS], b->v[PROC_WR_IOS], &io->wr);
	io->ok_rd_sec =
	    proc_delta(a->v[PROC_RD_SEC], b->v[PROC_RD_SEC], &io->rd_sec);
	io->ok_wr_sec =
	    proc_delta(a->v[PROC_WR_SEC], b->v[PROC_WR_SEC], &io->wr_sec);
	ok_dc = !dc ||
	    (proc_delta(a->v[PROC_DC_IOS], b->v[PROC_DC_IOS], &dios) &&
		proc_delta(a->v[PROC_DC_SEC], b->v[PROC_DC_SEC], &dsec) &&
		proc_delta(a->v[PROC_DC_TICKS], b->v[PROC_DC_TICKS], &dticks));
	io->ok_nr = io->ok_rd && io->ok_wr && ok_dc;
	io->nr = io->rd + io->wr + dios;
	io->ok_sec = io->ok_rd_sec && io->ok_wr_sec && ok_dc;
	io->sec = io->rd_sec + io->wr_sec + dsec;
	io->ok_ticks = ok_dc &&
	    proc_delta(a->v[PROC_RD_TICKS], b->v[PROC_RD_TICKS], &rt) &&
	    proc_delta(a->v[PROC_WR_TICKS], b->v[PROC_WR_TICKS], &wt);
	io->ticks = rt + wt + dticks;
}

/*
 * iostat -x: r/s, w/s, tps, rd_sec/s, wr_sec/s, avgrq-sz (sectors per
 * I/O), await (ms per I/O, queue included), svctm (busy ms per I/O),
 * %util (busy share of the interval) and avgqu-sz (time-weighted queue).
 */
static void
proc_put_disk(struct proc *p, const struct proc_dev *a,
    const struct proc_dev *b, double secs)
{
	const char *n = b->label;
	struct proc_io io;
	double busy, rq;

	proc_io_deltas(a, b, &io);
	if (io.ok_rd)
		proc_put(p, io.rd / secs, "1/s", "proc.disk.%s.r_s", n);
	if (io.ok_wr)
		proc_put(p, io.wr / secs, "1/s", "proc.disk.%s.w_s", n);
	if (io.ok_nr)
		proc_put(p, io.nr / secs, "1/s", "proc.disk.%s.tps", n);
	if (io.ok_rd_sec)
		proc_put(p, io.rd_sec / secs, "sectors/s",
		    "proc.disk.%s.rd_sec_s", n);
	if (io.ok_wr_sec)
		proc_put(p, io.wr_sec / secs, "sectors/s",
		    "proc.disk.%s.wr_sec_s", n);
	if (io.ok_nr && io.ok_sec)
		proc_put(p, io.nr > 0 ? io.sec / io.nr : 0, "sectors",
		    "proc.disk.%s.avgrq_sz", n);
	if (io.ok_nr && io.ok_ticks)
		proc_put(p, io.nr > 0 ? io.ticks / io.nr : 0, "ms",
		    "proc.disk.%s.await_ms", n);
	if (proc_delta(a->v[PROC_TOT_TICKS], b->v[PROC_TOT_TICKS], &busy)) {
		if (io.ok_nr)
			proc_put(p, io.nr > 0 ? busy / io.nr : 0, "ms",
			    "proc.disk.%s.svctm_ms", n);
		busy = busy / (secs * 10); /* ms per s, as a percentage */
		proc_put(p, busy > 100 ? 100 : busy, "%",
		    "proc.disk.%s.util_pct", n);
	}
	if (proc_delta(a->v[PROC_RQ_TICKS], b->v[PROC_RQ_TICKS], &rq))
		proc_put(p, rq / (secs * 1000), "requests",
		    "proc.disk.%s.avgqu_sz", n);
}

/* sar -n DEV and EDEV: packets, bytes, errors and drops per second. */
static void
proc_put_net(struct proc *p, const struct proc_dev *a, const struct proc_dev *b,
    double secs)
{
	static const struct {
		int field;
		const char *name, *unit;
	} cols[] = {
		{ PROC_RXPCK, "rxpck_s", "packets/s" },
		{ PROC_TXPCK, "txpck_s", "packets/s" },
		{ PROC_RXBYT, "rxbyt_s", "bytes/s" },
		{ PROC_TXBYT, "txbyt_s", "bytes/s" },
		{ PROC_RXERR, "rxerr_s", "packets/s" },
		{ PROC_TXERR, "txerr_s", "packets/s" },
		{ PROC_RXDROP, "rxdrop_s", "packets/s" },
		{ PROC_TXDROP, "txdrop_s", "packets/s" },
	};
	size_t i;
	double d;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (proc_delta(a->v[cols[i].field], b->v[cols[i].field], &d))
			proc_put(p, d / secs, cols[i].unit, "proc.net.%s.%s",
			    b->label, cols[i].name);
}

/*
 * Each device of the new read against the same name in the old one (both
 * sorted): a device new since then has no rate yet.
 */
static void
proc_put_devs(struct proc *p, const struct proc_devs *a,
    const struct proc_devs *b, double secs,
    void (*fn)(struct proc *, const struct proc_dev *, const struct proc_dev *,
	double))
{
	uint32_t i = 0, j = 0;
	int c;

	while (i < a->n && j < b->n) {
		c = strcmp(a->v[i].name, b->v[j].name);
		if (c == 0)
			fn(p, &a->v[i++], &b->v[j++], secs);
		else if (c < 0)
			i++;
		else
			j++;
	}
}

/* sar -n TCP, ETCP, UDP: opens, retransmits, datagrams per second. */
static void
proc_put_snmp(struct proc *p, const struct proc_snmp *a,
    const struct proc_snmp *b, double secs)
{
	double d;
	int i;

	for (i = 0; i < PROC_NSNMP; i++)
		if ((a->have & b->have & (1u << i)) &&
		    proc_delta(a->v[i], b->v[i], &d))
			proc_put(p, d / secs, proc_snmp_keys[i].unit, "%s",
			    proc_snmp_keys[i].metric);
}

/* Every metric from the reads a (before, or NULL) and b (now). */
static void
proc_put_all(
    struct proc *p, const struct proc_snap *a, const struct proc_snap *b)
{
	uint32_t both = a != NULL ? a->files & b->files : 0;
	double secs = a != NULL ? (double)(b->at_ns - a->at_ns) / PROC_NS : 0;

	if (secs <= 0)
		both = 0; /* no time passed: gauges only */
	if (both & (1u << PROC_F_STAT))
		proc_put_cpu(p, &a->stat, &b->stat);
	if (b->files & (1u << PROC_F_STAT))
		proc_put_sys(p, (both & (1u << PROC_F_STAT)) ? &a->stat : NULL,
		    &b->stat, secs);
	if (b->files & (1u << PROC_F_MEMINFO))
		proc_put_mem(p, &b->mem);
	if (both & (1u << PROC_F_DISKSTATS))
		proc_put_devs(p, &a->disks, &b->disks, secs, proc_put_disk);
	if (both & (1u << PROC_F_NETDEV))
		proc_put_devs(p, &a->nets, &b->nets, secs, proc_put_net);
	if (both & (1u << PROC_F_SNMP))
		proc_put_snmp(p, &a->snmp, &b->snmp, secs);
}

/* ---- the plugin ---- */

/* The timer: read everything, publish against the previous read. */
static void
proc_tick(void *arg)
{
	struct proc *p = arg;
	struct proc_snap *prev = &p->snap[p->cur], *now = &p->snap[p->cur ^ 1];

	proc_snap_read(p, now, 0);
	proc_put_all(p, prev, now);
	p->cur ^= 1;
}

static int
proc_available(char *why, size_t len)
{
	if (access("/proc/stat", R_OK) == 0)
		return 0;
	snprintf(
	    why, len, "/proc/stat: %s (is /proc mounted?)", strerror(errno));
	return -ENOENT;
}

static void
proc_fini(void *state)
{
	struct proc *p = state;
	int i;

	/* The timer is the core's: it frees it when the instance ends. */
	if (p == NULL)
		return;
	for (i = 0; i < 2; i++) {
		free(p->snap[i].disks.v);
		free(p->snap[i].nets.v);
	}
	free(p->buf);
	free(p);
}

/* The interval's bounds again (a mock core may skip the table's), a root. */
static int
proc_check(const void *config, char *why, size_t len)
{
	const struct proc_config *cf = config;

	if (cf->interval < PROC_INTERVAL_MIN || cf->interval > 3600 * PROC_NS) {
		snprintf(why, len, "option 'interval' must be in 10ms..1h");
		return -EINVAL;
	}
	if (cf->root == NULL || cf->root[0] == '\0') {
		snprintf(why, len, "option 'root' is empty");
		return -EINVAL;
	}
	return 0;
}

/*
 * The first read, which later ones are compared with: stat and meminfo
 * must be there (otherwise root is no /proc), the others may be missing.
 */
static int
proc_first_read(struct proc *p)
{
	const uint32_t need = (1u << PROC_F_STAT) | (1u << PROC_F_MEMINFO);
	int r;

	r = proc_snap_read(p, &p->snap[0], need);
	if ((p->snap[0].files & need) == need)
		return 0;
	r = r != 0 ? r : -EBADMSG;
	vitals_error(p->ctx, "%s/%s: %s", p->cf->root,
	    proc_files[(p->snap[0].files & 1u) ? PROC_F_MEMINFO : PROC_F_STAT],
	    r == -EBADMSG ? "not in the expected format" : strerror(-r));
	return r;
}

static int
proc_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct proc_config *cf = config;
	struct proc *p;
	int r;

	if ((r = vitals_init_check(ctx, proc_check, config)) != 0)
		return r;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	p->ctx = ctx;
	p->cf = cf;
	if ((r = proc_first_read(p)) != 0)
		goto fail;
	r = vitals_timer_add(ctx, cf->interval, proc_tick, p, &p->timer);
	if (r != 0)
		goto fail;
	*state = p;
	return 0;
fail:
	proc_fini(p);
	return r;
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct proc_config),
	.name = "proc",
	.version = "0.1.0",
	.description = "cpu, memory, disk and network metrics from /proc "
		       "(sysstat formulas)",
	.options = proc_options,
	.available = proc_available,
	.init = proc_init,
	.fini = proc_fini,
	.flush = NULL,
	.epoch = NULL,
	.write = NULL,
	.check = proc_check,
};
