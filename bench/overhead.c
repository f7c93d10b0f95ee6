/* SPDX-License-Identifier: MIT */
/*
 * Monitoring overhead: lmbench-like latency rows (null syscall ... fork+exec)
 * and a small compile, each measured with no monitor, with vitalsd running,
 * under `perf record -a -g` on the tracepoints the probes use, and with
 * empty BPF programs on those tracepoints (bench/floor: what any BPF
 * monitor pays here), with the minimal counting program the probes'
 * design starts from (bench/floor --count), and with the floor's programs
 * each counting its event in a hashed slot (bench/floor --exact), in
 * interleaved rounds.
 * Prints medians, ratios and added latency; asserts nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef OVERHEAD_BUILDDIR
#define OVERHEAD_BUILDDIR "."
#endif
#ifndef OVERHEAD_SRCDIR
#define OVERHEAD_SRCDIR "."
#endif

#define OV_CHUNK_NS 1000000ULL /* calibrated chunk of ops: about 1 ms */
#define OV_NSEL 10 /* fds given to select */
#define OV_MAXFILES 50 /* --files at most */
#define OV_TRACEFS "/sys/kernel/tracing"

extern char **environ;

enum { OV_NONE, OV_VITALSD, OV_PERF, OV_FLOOR, OV_COUNT, OV_EXACT, OV_NMON };

/* Whether monitor i is one of bench/floor's. */
#define OV_IS_FLOOR(i) ((i) == OV_FLOOR || (i) == OV_COUNT || (i) == OV_EXACT)

struct overhead_opts {
	const char *config; /* vitalsd configuration */
	const char *vitalsd; /* vitalsd executable */
	const char *plugin_path; /* VITALS_PLUGIN_PATH for vitalsd */
	const char *perf; /* perf executable */
	const char *cc; /* compiler of the build row */
	const char *rows; /* row ids to run, NULL = all */
	const char *monitors; /* monitors to use, NULL = all */
	int rounds; /* interleaved rounds */
	int samples; /* samples per row per monitor per round */
	int ms; /* time per latency sample */
	int files; /* C files in the build row */
	int settle; /* ms a monitor runs before rows are measured */
	int warm; /* unrecorded passes per monitor start */
	int sample_hz; /* floor and exact sampling (Hz), 0 = none */
	int quick; /* --quick */
};

/* What the rows work on; set up per sample by each row's setup. */
struct overhead_ctx {
	char tmp[PATH_MAX - 64]; /* private temporary directory */
	char file[PATH_MAX]; /* a small file for stat and open */
	const struct overhead_opts *o;
	int zero, null; /* /dev/zero, /dev/null */
	int sel[OV_NSEL]; /* /dev/zero fds for select */
	int ping[2], pong[2]; /* pipe round trip */
	pid_t echo; /* the echoing child */
	cpu_set_t cpus; /* affinity to restore after the pipe row */
};

struct overhead_row {
	const char *id; /* for --rows */
	const char *name; /* printed */
	int (*setup)(struct overhead_ctx *);
	int (*op)(struct overhead_ctx *, uint64_t n);
	void (*teardown)(struct overhead_ctx *);
	int once; /* one op per sample, no warm-up (the build) */
	int cpu; /* spawns processes: CPU time reported too */
};

struct overhead_mon {
	const char *name;
	int on; /* measured in this run */
	char why[512]; /* why not, when off */
	pid_t pid; /* running monitor process, or 0 */
	int ctl, ack; /* perf control pipe ends */
	int starts; /* times started */
	double secs; /* time it ran */
	uint64_t bytes; /* data it wrote */
	uint64_t epochs; /* vitalsd: epochs stored */
	int lost; /* perf reported lost events */
	int failed; /* could not start although available */
	uint64_t t0; /* start of the current run */
};

static volatile sig_atomic_t overhead_stop;
static volatile uint64_t overhead_sigs;
static char overhead_events[1024]; /* perf -e list, comma separated */
static int overhead_nevents;
static char overhead_spawn_err[256]; /* why the last overhead_spawn failed */

static uint64_t
overhead_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
overhead_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
overhead_on_signal(int sig)
{
	(void)sig;
	overhead_stop = 1;
}

static void
overhead_on_usr1(int sig)
{
	(void)sig;
	overhead_sigs++;
}

/* ---- the rows ---- */

static int
overhead_null_op(struct overhead_ctx *c, uint64_t n)
{
	(void)c;
	while (n--)
		syscall(SYS_getppid);
	return 0;
}

static int
overhead_read_op(struct overhead_ctx *c, uint64_t n)
{
	char b;

	while (n--)
		if (read(c->zero, &b, 1) != 1)
			return -errno;
	return 0;
}

static int
overhead_write_op(struct overhead_ctx *c, uint64_t n)
{
	char b = 0;

	while (n--)
		if (write(c->null, &b, 1) != 1)
			return -errno;
	return 0;
}

static int
overhead_stat_op(struct overhead_ctx *c, uint64_t n)
{
	struct stat st;

	while (n--)
		if (stat(c->file, &st) < 0)
			return -errno;
	return 0;
}

static int
overhead_open_op(struct overhead_ctx *c, uint64_t n)
{
	int fd;

	while (n--) {
		if ((fd = open(c->file, O_RDONLY)) < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

static int
overhead_select_setup(struct overhead_ctx *c)
{
	int i;

	for (i = 0; i < OV_NSEL; i++)
		c->sel[i] = -1;
	for (i = 0; i < OV_NSEL; i++)
		if ((c->sel[i] = open("/dev/zero", O_RDONLY | O_CLOEXEC)) < 0)
			return -errno;
	return 0;
}

static int
overhead_select_op(struct overhead_ctx *c, uint64_t n)
{
	struct timeval tv;
	fd_set r;
	int i;

	while (n--) {
		FD_ZERO(&r);
		for (i = 0; i < OV_NSEL; i++)
			FD_SET(c->sel[i], &r);
		tv.tv_sec = tv.tv_usec = 0;
		if (select(c->sel[OV_NSEL - 1] + 1, &r, NULL, NULL, &tv) !=
		    OV_NSEL)
			return errno ? -errno : -EIO;
	}
	return 0;
}

static void
overhead_select_teardown(struct overhead_ctx *c)
{
	int i;

	for (i = 0; i < OV_NSEL; i++)
		if (c->sel[i] >= 0)
			close(c->sel[i]);
}

static int
overhead_sigins_op(struct overhead_ctx *c, uint64_t n)
{
	struct sigaction sa = { .sa_handler = overhead_on_usr1 };

	(void)c;
	while (n--)
		if (sigaction(SIGUSR1, &sa, NULL) < 0)
			return -errno;
	return 0;
}

static int
overhead_sigdel_op(struct overhead_ctx *c, uint64_t n)
{
	struct sigaction sa = { .sa_handler = overhead_on_usr1 };
	pid_t self = getpid();

	(void)c;
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return -errno;
	while (n--)
		if (kill(self, SIGUSR1) < 0)
			return -errno;
	return 0;
}

/*
 * The echoing child of the pipe row: one byte back for each byte.  Both
 * ends share one CPU so the row measures two context switches, not where
 * the scheduler happened to wake the other end.
 */
static int
overhead_pipe_setup(struct overhead_ctx *c)
{
	cpu_set_t one;
	char b;
	int cpu;

	c->ping[0] = c->ping[1] = c->pong[0] = c->pong[1] = -1;
	c->echo = 0;
	if (sched_getaffinity(0, sizeof(c->cpus), &c->cpus) < 0)
		return -errno;
	for (cpu = CPU_SETSIZE - 1; cpu > 0 && !CPU_ISSET(cpu, &c->cpus); cpu--)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return -errno;
	if (pipe2(c->ping, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(c->pong, O_CLOEXEC) < 0)
		return -errno;
	if ((c->echo = fork()) < 0)
		return -errno;
	if (c->echo == 0) {
		close(c->ping[1]);
		close(c->pong[0]);
		while (read(c->ping[0], &b, 1) == 1)
			if (write(c->pong[1], &b, 1) != 1)
				break;
		_exit(0);
	}
	close(c->ping[0]);
	close(c->pong[1]);
	c->ping[0] = c->pong[1] = -1;
	return 0;
}

static int
overhead_pipe_op(struct overhead_ctx *c, uint64_t n)
{
	char b = 'p';

	while (n--)
		if (write(c->ping[1], &b, 1) != 1 ||
		    read(c->pong[0], &b, 1) != 1)
			return errno ? -errno : -EPIPE;
	return 0;
}

static void
overhead_pipe_teardown(struct overhead_ctx *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (c->ping[i] >= 0)
			close(c->ping[i]);
		if (c->pong[i] >= 0)
			close(c->pong[i]);
	}
	if (c->echo > 0)
		waitpid(c->echo, NULL, 0);
	sched_setaffinity(0, sizeof(c->cpus), &c->cpus);
}

/*
 * Run argv (execve of a path, or execvp when search) in dir (NULL: here) and
 * wait.  0 if it exited 0, else -ECHILD with overhead_spawn_err saying why.
 */
static int
overhead_spawn(char *const argv[], int search, const char *dir)
{
	int st;
	pid_t p = fork();

	if (p < 0)
		return -errno;
	if (p == 0) {
		if (dir && chdir(dir) < 0)
			_exit(126);
		if (search)
			execvp(argv[0], argv);
		else
			execve(argv[0], argv, environ);
		_exit(127);
	}
	if (waitpid(p, &st, 0) < 0)
		return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(overhead_spawn_err, sizeof(overhead_spawn_err),
		    "%s: cannot run it", argv[0]);
	else
		snprintf(overhead_spawn_err, sizeof(overhead_spawn_err),
		    "%s failed (wait status %#x)", argv[0], st);
	return -ECHILD;
}

static int
overhead_fork_op(struct overhead_ctx *c, uint64_t n)
{
	pid_t p;

	(void)c;
	while (n--) {
		if ((p = fork()) < 0)
			return -errno;
		if (p == 0)
			_exit(0);
		if (waitpid(p, NULL, 0) < 0)
			return -errno;
	}
	return 0;
}

static int
overhead_exec_op(struct overhead_ctx *c, uint64_t n)
{
	char *argv[] = { "/bin/true", NULL };
	int r;

	(void)c;
	while (n--)
		if ((r = overhead_spawn(argv, 0, NULL)) < 0)
			return r;
	return 0;
}

/* One build: compile each generated file with -O2, then link them. */
static int
overhead_build_op(struct overhead_ctx *c, uint64_t n)
{
	char dir[PATH_MAX], names[2 * OV_MAXFILES][16];
	char *cv[] = { (char *)c->o->cc, "-O2", "-c", NULL, "-o", NULL, NULL };
	char *lv[OV_MAXFILES + 4] = { (char *)c->o->cc, "-o", "prog" };
	int i, r;

	snprintf(dir, sizeof(dir), "%s/build", c->tmp);
	for (i = 0; i < c->o->files; i++) {
		snprintf(names[2 * i], 16, "f%d.c", i);
		snprintf(names[2 * i + 1], 16, "f%d.o", i);
		lv[3 + i] = names[2 * i + 1];
	}
	while (n--) {
		for (i = 0; i < c->o->files; i++) {
			cv[3] = names[2 * i], cv[5] = names[2 * i + 1];
			if ((r = overhead_spawn(cv, 1, dir)) < 0)
				return r;
		}
		if ((r = overhead_spawn(lv, 1, dir)) < 0)
			return r;
	}
	return 0;
}

static const struct overhead_row overhead_rows[] = {
	{ "null", "null syscall", NULL, overhead_null_op, NULL, 0, 0 },
	{ "read", "read 1B /dev/zero", NULL, overhead_read_op, NULL, 0, 0 },
	{ "write", "write 1B /dev/null", NULL, overhead_write_op, NULL, 0, 0 },
	{ "stat", "stat", NULL, overhead_stat_op, NULL, 0, 0 },
	{ "open", "open+close", NULL, overhead_open_op, NULL, 0, 0 },
	{ "select", "select 10 fds", overhead_select_setup, overhead_select_op,
	    overhead_select_teardown, 0, 0 },
	{ "sigins", "signal install", NULL, overhead_sigins_op, NULL, 0, 0 },
	{ "sigdel", "signal delivery", NULL, overhead_sigdel_op, NULL, 0, 0 },
	{ "pipe", "pipe round trip", overhead_pipe_setup, overhead_pipe_op,
	    overhead_pipe_teardown, 0, 0 },
	{ "fork", "fork+exit", NULL, overhead_fork_op, NULL, 0, 1 },
	{ "exec", "fork+exec true", NULL, overhead_exec_op, NULL, 0, 1 },
	{ "build", "build (cc -O2)", NULL, overhead_build_op, NULL, 1, 1 },
};
#define OV_NROWS (int)(sizeof(overhead_rows) / sizeof(overhead_rows[0]))

/* ---- measuring ---- */

/*
 * CPU time (user + system, ns) of this process and of the children it
 * waited for.  A BPF program runs in the context of the task that hit
 * its tracepoint, so the monitors' in-kernel work on the row's processes
 * is in it, without the scheduling noise of wall time.
 */
static double
overhead_cpu_ns(void)
{
	struct rusage s, k;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &k);
	return ((double)s.ru_utime.tv_sec + (double)s.ru_stime.tv_sec +
		   (double)k.ru_utime.tv_sec + (double)k.ru_stime.tv_sec) *
	    1e9 +
	    ((double)s.ru_utime.tv_usec + (double)s.ru_stime.tv_usec +
		(double)k.ru_utime.tv_usec + (double)k.ru_stime.tv_usec) *
	    1e3;
}

/*
 * Time ops in chunks of `chunk` until budget_ns passed; ns per op or < 0,
 * and the CPU time per op in *cpu.
 */
static double
overhead_time(const struct overhead_row *row, struct overhead_ctx *c,
    uint64_t chunk, uint64_t budget_ns, double *cpu)
{
	uint64_t ops = 0, t0, t1;
	double c0;
	int r;

	if (!row->once && (r = row->op(c, chunk)) < 0) /* warm-up */
		return r;
	c0 = overhead_cpu_ns();
	t0 = t1 = overhead_now();
	do {
		if ((r = row->op(c, row->once ? 1 : chunk)) < 0)
			return r;
		ops += row->once ? 1 : chunk;
		t1 = overhead_now();
	} while (!row->once && t1 - t0 < budget_ns && !overhead_stop);
	*cpu = (overhead_cpu_ns() - c0) / (double)ops;
	return (double)(t1 - t0) / (double)ops;
}

/* One sample of a row: its setup, the timing, its teardown. */
static double
overhead_sample(const struct overhead_row *row, struct overhead_ctx *c,
    uint64_t chunk, uint64_t budget_ns, double *cpu)
{
	double v;
	int r;

	if (row->setup && (r = row->setup(c)) < 0) {
		if (row->teardown)
			row->teardown(c);
		return r;
	}
	v = overhead_time(row, c, chunk, budget_ns, cpu);
	if (row->teardown)
		row->teardown(c);
	return v;
}

/* Ops of a row that take about OV_CHUNK_NS, measured unmonitored. */
static int
overhead_calibrate(
    const struct overhead_row *row, struct overhead_ctx *c, uint64_t *chunk)
{
	uint64_t n = 1, t0;
	int r;

	if (row->setup && (r = row->setup(c)) < 0) {
		if (row->teardown)
			row->teardown(c);
		return r;
	}
	for (r = 0; n < (1ULL << 30); n *= 2) {
		t0 = overhead_now();
		if ((r = row->op(c, n)) < 0 || row->once)
			break;
		if (overhead_now() - t0 >= OV_CHUNK_NS)
			break;
	}
	if (row->teardown)
		row->teardown(c);
	*chunk = n;
	return r;
}

static int
overhead_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Median of v, NAN when empty; with q, also the interquartile range over
 * the median (NAN under 4 samples).  v keeps its order: samples are
 * paired by round later.
 */
static double
overhead_median_q(const double *v, int n, double *q)
{
	double *w, med;

	if (q != NULL)
		*q = NAN;
	if (n == 0 || (w = malloc((size_t)n * sizeof(*w))) == NULL)
		return NAN;
	memcpy(w, v, (size_t)n * sizeof(*w));
	qsort(w, (size_t)n, sizeof(*w), overhead_cmp);
	med = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
	if (q != NULL && n >= 4 && med > 0)
		*q = (w[(3 * n) / 4] - w[n / 4]) / med;
	free(w);
	return med;
}

static double
overhead_median(const double *v, int n)
{
	return overhead_median_q(v, n, NULL);
}

/* ---- monitors ---- */

static int
overhead_open_log(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* In a monitor child: own process group, dies with the bench, log as output. */
static void
overhead_child_prepare(int logfd)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGINT);
	dup2(logfd, STDOUT_FILENO);
	dup2(logfd, STDERR_FILENO);
}

/* Last lines of a monitor's log, indented, for a failure message. */
static void
overhead_print_tail(const char *path)
{
	char line[512], buf[8][512];
	int n = 0, i;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		snprintf(buf[n++ % 8], sizeof(buf[0]), "%s", line);
	fclose(f);
	for (i = n > 8 ? n - 8 : 0; i < n; i++)
		fprintf(stderr, "    %s", buf[i % 8]);
}

/* Wait for pid to exit, SIGKILL after timeout_ms; its wait status or -1. */
static int
overhead_reap(pid_t pid, int timeout_ms)
{
	int st, waited = 0;
	pid_t r;

	while ((r = waitpid(pid, &st, WNOHANG)) == 0) {
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			return waitpid(pid, &st, 0) == pid ? st : -1;
		}
		overhead_sleep_ms(10);
		waited += 10;
	}
	return r == pid ? st : -1;
}

/* Print the warnings and errors of a log, once, to say what was measured. */
static void
overhead_print_warnings(const char *path, const char *prefix)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ": warn") || strstr(line, ": error"))
			printf("%s%s", prefix, line);
	fclose(f);
	fflush(stdout);
}

static int
overhead_file_has(const char *path, const char *needle)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static int
overhead_vitalsd_exec(const struct overhead_opts *o, const char *tmp, int logfd)
{
	char data[PATH_MAX];
	pid_t p;

	snprintf(data, sizeof(data), "%s/vitalsd-data", tmp);
	if ((p = fork()) < 0)
		return -errno;
	if (p == 0) {
		overhead_child_prepare(logfd);
		setenv("VITALS_PLUGIN_PATH", o->plugin_path, 1);
		execl(o->vitalsd, o->vitalsd, "-c", o->config, "--data-dir",
		    data, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", o->vitalsd, strerror(errno));
		_exit(127);
	}
	return p;
}

/*
 * Wait until a started monitor child writes ready into its log (or 10 s
 * pass: running, if silent, e.g. vitalsd logging to syslog); -ECHILD with
 * the log's tail if it exits first.  The first start shows its warnings.
 */
static int
overhead_wait_started(struct overhead_mon *m, const char *log,
    const char *ready, const char *what)
{
	char prefix[64];
	int waited;

	for (waited = 0; waited < 10000 && !overhead_stop; waited += 10) {
		if (overhead_file_has(log, ready)) {
			snprintf(prefix, sizeof(prefix), "%s said: ", what);
			if (m->starts == 0)
				overhead_print_warnings(log, prefix);
			return 0;
		}
		if (waitpid(m->pid, NULL, WNOHANG) == m->pid) {
			m->pid = 0;
			snprintf(
			    m->why, sizeof(m->why), "%s exited at start", what);
			fprintf(stderr, "overhead: %s:\n", m->why);
			overhead_print_tail(log);
			return -ECHILD;
		}
		overhead_sleep_ms(10);
	}
	return 0;
}

/* Start vitalsd and wait for its "started" line (or 10 s of silence). */
static int
overhead_vitalsd_start(
    struct overhead_mon *m, const struct overhead_opts *o, const char *tmp)
{
	char log[PATH_MAX];
	int fd;

	snprintf(log, sizeof(log), "%s/vitalsd.log", tmp);
	if ((fd = overhead_open_log(log)) < 0)
		return -errno;
	m->pid = overhead_vitalsd_exec(o, tmp, fd);
	close(fd);
	if (m->pid < 0)
		return (int)m->pid;
	return overhead_wait_started(m, log, "core: started", "vitalsd");
}

static struct overhead_mon *overhead_counting; /* nftw has no context */

/* nftw callback: count the epoch files of a vitalsd data directory. */
static int
overhead_count_epoch(
    const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)ftw;
	if (type == FTW_F && n > 8 && strcmp(path + n - 8, ".json.gz") == 0) {
		overhead_counting->epochs++;
		overhead_counting->bytes += (uint64_t)st->st_size;
	}
	return 0;
}

static void
overhead_vitalsd_stop(struct overhead_mon *m, const char *tmp)
{
	char data[PATH_MAX];
	int st;

	kill(m->pid, SIGTERM);
	st = overhead_reap(m->pid, 30000);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr,
		    "overhead: vitalsd did not exit 0 on SIGTERM "
		    "(status %#x); log:\n",
		    st);
		snprintf(data, sizeof(data), "%s/vitalsd.log", tmp);
		overhead_print_tail(data);
	}
	snprintf(data, sizeof(data), "%s/vitalsd-data", tmp);
	m->epochs = m->bytes = 0;
	overhead_counting = m;
	nftw(data, overhead_count_epoch, 16, FTW_PHYS);
}

/*
 * Start bench/floor as monitor i (floor, count or exact; the floor and
 * exact sampling at hz unless 0) and wait for its "attached" line.
 */
static int
overhead_floor_start(struct overhead_mon *m, const char *tmp, int i, int hz)
{
	char log[PATH_MAX], freq[16];
	char *argv[5] = { "floor", NULL, NULL, NULL, NULL };
	int fd, k = 1;

	snprintf(log, sizeof(log), "%s/%s.log", tmp, m->name);
	if ((fd = overhead_open_log(log)) < 0)
		return -errno;
	if ((m->pid = fork()) < 0) {
		close(fd);
		return -errno;
	}
	if (m->pid == 0) {
		overhead_child_prepare(fd);
		snprintf(freq, sizeof(freq), "%d", hz);
		if (i == OV_COUNT)
			argv[k++] = "--count";
		if (i == OV_EXACT)
			argv[k++] = "--exact";
		if (i != OV_COUNT && hz != 0) {
			argv[k++] = "--sample";
			argv[k++] = freq;
		}
		execv(OVERHEAD_BUILDDIR "/bench/floor", argv);
		fprintf(stderr, "exec %s/bench/floor: %s\n", OVERHEAD_BUILDDIR,
		    strerror(errno));
		_exit(127);
	}
	close(fd);
	return overhead_wait_started(m, log, "floor: attached", m->name);
}

static void
overhead_floor_stop(struct overhead_mon *m)
{
	kill(m->pid, SIGTERM);
	overhead_reap(m->pid, 10000);
}

/* The tracepoints the kernel probes attach to, the ones this kernel has. */
static int
overhead_perf_events(char *why, size_t len)
{
	static const char *ev[] = { "raw_syscalls:sys_enter",
		"sched:sched_switch", "block:block_rq_issue",
		"block:block_rq_complete", "kmem:mm_page_alloc",
		"exceptions:page_fault_user", "signal:signal_deliver",
		"lock:contention_begin", "lock:contention_end" };
	char path[256], sys[64];
	const char *colon;
	size_t i;

	if (access(OV_TRACEFS "/events", F_OK) < 0 &&
	    mount("nodev", OV_TRACEFS, "tracefs", 0, NULL) < 0) {
		snprintf(why, len, "mount tracefs at %s: %s", OV_TRACEFS,
		    strerror(errno));
		return -errno;
	}
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		colon = strchr(ev[i], ':');
		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - ev[i]), ev[i]);
		snprintf(path, sizeof(path), OV_TRACEFS "/events/%s/%s", sys,
		    colon + 1);
		if (access(path, F_OK) < 0) {
			printf("perf: tracepoint %s missing here, skipped\n",
			    ev[i]);
			continue;
		}
		snprintf(overhead_events + strlen(overhead_events),
		    sizeof(overhead_events) - strlen(overhead_events), "%s%s",
		    overhead_nevents++ ? "," : "", ev[i]);
	}
	if (overhead_nevents == 0)
		snprintf(
		    why, len, "none of the probes' tracepoints exist here");
	return overhead_nevents ? 0 : -ENOENT;
}

static pid_t
overhead_perf_exec(
    const struct overhead_opts *o, const char *tmp, int logfd, int ctl, int ack)
{
	char out[PATH_MAX], control[64];
	pid_t p;

	snprintf(out, sizeof(out), "%s/perf.data", tmp);
	snprintf(control, sizeof(control), "fd:%d,%d", ctl, ack);
	if ((p = fork()) != 0)
		return p < 0 ? -errno : p;
	overhead_child_prepare(logfd);
	fcntl(ctl, F_SETFD, 0);
	fcntl(ack, F_SETFD, 0);
	/* -D -1: events enabled only once "enable" is acknowledged. */
	execlp(o->perf, o->perf, "record", "-a", "-g", "-N", "-B", "-D", "-1",
	    "--control", control, "-o", out, "-e", overhead_events,
	    (char *)NULL);
	fprintf(stderr, "exec %s: %s\n", o->perf, strerror(errno));
	_exit(127);
}

/* Wait up to 30 s for perf's "ack" on fd; 0 once events are enabled. */
static int
overhead_perf_ack(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[16];
	ssize_t n;

	if (poll(&pfd, 1, 30000) <= 0)
		return -ETIMEDOUT;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ECHILD;
	buf[n] = '\0';
	return strncmp(buf, "ack", 3) == 0 ? 0 : -EPROTO;
}

static int
overhead_perf_start(
    struct overhead_mon *m, const struct overhead_opts *o, const char *tmp)
{
	char log[PATH_MAX];
	int fd, ctl[2], ack[2], r;

	snprintf(log, sizeof(log), "%s/perf.log", tmp);
	if ((fd = overhead_open_log(log)) < 0)
		return -errno;
	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0) {
		close(fd);
		return -errno;
	}
	m->pid = overhead_perf_exec(o, tmp, fd, ctl[0], ack[1]);
	close(fd);
	close(ctl[0]);
	close(ack[1]);
	m->ctl = ctl[1];
	m->ack = ack[0];
	if (m->pid > 0 && write(m->ctl, "enable\n", 7) == 7 &&
	    (r = overhead_perf_ack(m->ack)) == 0)
		return 0;
	r = m->pid < 0 ? (int)m->pid : -ECHILD;
	if (m->pid > 0)
		kill(m->pid, SIGINT), overhead_reap(m->pid, 30000);
	m->pid = 0;
	close(m->ctl), close(m->ack);
	snprintf(m->why, sizeof(m->why), "perf record did not start");
	fprintf(stderr, "overhead: %s:\n", m->why);
	overhead_print_tail(log);
	return r;
}

/* Add the size of perf.data (then removed) and any "lost" line to m. */
static void
overhead_perf_account(struct overhead_mon *m, const char *tmp)
{
	char path[PATH_MAX], line[512];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf.data", tmp);
	if (stat(path, &st) == 0)
		m->bytes += (uint64_t)st.st_size;
	unlink(path);
	snprintf(path, sizeof(path), "%s/perf.log", tmp);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "lost"))
			m->lost++;
	}
	fclose(f);
}

static void
overhead_perf_stop(struct overhead_mon *m, const char *tmp)
{
	int st;

	kill(m->pid, SIGINT);
	st = overhead_reap(m->pid, 120000);
	close(m->ctl);
	close(m->ack);
	/* perf re-raises the SIGINT that stopped it. */
	if (st < 0 ||
	    (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
		!(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT)))
		fprintf(stderr,
		    "overhead: perf record exited with status %#x\n", st);
	overhead_perf_account(m, tmp);
}

/* Start monitor i; on failure it is switched off for the rest of the run. */
static int
overhead_mon_start(struct overhead_mon *m, int i, const struct overhead_opts *o,
    const char *tmp)
{
	int r = 0;

	if (i == OV_VITALSD)
		r = overhead_vitalsd_start(m, o, tmp);
	else if (i == OV_PERF)
		r = overhead_perf_start(m, o, tmp);
	else if (OV_IS_FLOOR(i))
		r = overhead_floor_start(m, tmp, i, o->sample_hz);
	if (r < 0) {
		m->on = 0;
		m->failed = 1;
		if (!m->why[0])
			snprintf(
			    m->why, sizeof(m->why), "start: %s", strerror(-r));
		return r;
	}
	m->starts++;
	/* Start-up work (empty sample stores, cold caches) can be left out. */
	if (o->settle > 0)
		overhead_sleep_ms(o->settle);
	m->t0 = overhead_now();
	return 0;
}

static void
overhead_mon_stop(struct overhead_mon *m, int i, const char *tmp)
{
	m->secs += (double)(overhead_now() - m->t0) / 1e9;
	if (i == OV_VITALSD)
		overhead_vitalsd_stop(m, tmp);
	else if (i == OV_PERF)
		overhead_perf_stop(m, tmp);
	else if (OV_IS_FLOOR(i))
		overhead_floor_stop(m);
	m->pid = 0;
}

/* ---- setup ---- */

/* Generated sources of the build row: switch-heavy loops -O2 chews on. */
static int
overhead_gen_sources(struct overhead_ctx *c)
{
	char path[PATH_MAX];
	int i, j, k;
	FILE *f;

	snprintf(path, sizeof(path), "%s/build", c->tmp);
	if (mkdir(path, 0700) < 0)
		return -errno;
	for (i = 0; i < c->o->files; i++) {
		snprintf(path, sizeof(path), "%s/build/f%d.c", c->tmp, i);
		if (!(f = fopen(path, "w")))
			return -errno;
		fprintf(f,
		    "#include <stdio.h>\n#include <stdlib.h>\n"
		    "#include <string.h>\n");
		for (j = 0; j < 40; j++) {
			fprintf(f,
			    "int f%d_%d(const int *v, size_t n);\n"
			    "int f%d_%d(const int *v, size_t n)\n{\n"
			    "\tint acc = %d; size_t i;\n"
			    "\tfor (i = 0; i < n; i++) {\n"
			    "\t\tswitch ((v[i] + %d) & 15) {\n",
			    i, j, i, j, j, j);
			for (k = 0; k < 16; k++)
				fprintf(f,
				    "\t\tcase %d: acc = acc * %d + v[i] "
				    "%% %d; break;\n",
				    k, k + 3, j + k + 2);
			fprintf(f,
			    "\t\t}\n\t\tacc ^= acc << ((i + %d) & 7);\n"
			    "\t}\n\treturn acc;\n}\n",
			    j);
		}
		if (i == 0)
			fprintf(
			    f, "int main(void) { return f0_0(NULL, 0); }\n");
		if (fclose(f) != 0)
			return -errno;
	}
	return 0;
}

static int
overhead_ctx_init(struct overhead_ctx *c, const struct overhead_opts *o)
{
	const char *t = getenv("TMPDIR");
	int fd;

	memset(c, 0, sizeof(*c));
	c->o = o;
	snprintf(c->tmp, sizeof(c->tmp), "%s/vitals-overhead.XXXXXX",
	    t && *t ? t : "/tmp");
	if (!mkdtemp(c->tmp))
		return -errno;
	snprintf(c->file, sizeof(c->file), "%s/file", c->tmp);
	if ((fd = open(c->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (write(fd, "vitals\n", 7) != 7)
		return -EIO;
	close(fd);
	c->zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	c->null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (c->zero < 0 || c->null < 0)
		return -errno;
	return overhead_gen_sources(c);
}

static int
overhead_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

static void
overhead_ctx_free(struct overhead_ctx *c)
{
	if (c->zero > 0)
		close(c->zero);
	if (c->null > 0)
		close(c->null);
	if (c->tmp[0] && strstr(c->tmp, "vitals-overhead."))
		nftw(c->tmp, overhead_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Is name an executable path, or found as one in $PATH? */
static int
overhead_in_path(const char *name)
{
	char path[PATH_MAX], *dirs, *d, *save = NULL;
	int found = 0;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	if (!(dirs = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin")))
		return 0;
	for (d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/%s", d, name);
		found = access(path, X_OK) == 0;
	}
	free(dirs);
	return found;
}

/* Is id in the comma-separated list (NULL: everything is)? */
static int
overhead_selected(const char *list, const char *id)
{
	char pad[64], all[512];

	if (!list)
		return 1;
	snprintf(pad, sizeof(pad), ",%s,", id);
	snprintf(all, sizeof(all), ",%s,", list);
	return strstr(all, pad) != NULL;
}

/* Which monitors can run here, with the reason for those that cannot. */
static void
overhead_mons_init(struct overhead_mon *m, const struct overhead_opts *o)
{
	static const char *names[OV_NMON] = { "none", "vitalsd", "perf",
		"floor", "count", "exact" };
	int i;

	for (i = 0; i < OV_NMON; i++) {
		memset(&m[i], 0, sizeof(m[i]));
		m[i].name = names[i];
		m[i].on = overhead_selected(o->monitors, names[i]);
		if (!m[i].on)
			snprintf(
			    m[i].why, sizeof(m[i].why), "not in --monitors");
		else if (i != OV_NONE && geteuid() != 0)
			snprintf(m[i].why, sizeof(m[i].why),
			    "needs root "
			    "(kernel tracepoints, perf -a)");
		else if (i == OV_VITALSD && access(o->vitalsd, X_OK) < 0)
			snprintf(m[i].why, sizeof(m[i].why),
			    "%.256s: %s (run make)", o->vitalsd,
			    strerror(errno));
		else if (i == OV_VITALSD && access(o->config, R_OK) < 0)
			snprintf(m[i].why, sizeof(m[i].why), "%.256s: %s",
			    o->config, strerror(errno));
		else if (i == OV_PERF && !overhead_in_path(o->perf))
			snprintf(m[i].why, sizeof(m[i].why),
			    "%.256s not found "
			    "(Debian package linux-perf)",
			    o->perf);
		else if (i == OV_PERF)
			overhead_perf_events(m[i].why, sizeof(m[i].why));
		else if (OV_IS_FLOOR(i) &&
		    access(OVERHEAD_BUILDDIR "/bench/floor", X_OK) < 0)
			snprintf(m[i].why, sizeof(m[i].why),
			    "%s/bench/floor: "
			    "%s (run make)",
			    OVERHEAD_BUILDDIR, strerror(errno));
		if (m[i].why[0])
			m[i].on = 0;
	}
}

/* ---- options ---- */

static void
overhead_usage(FILE *f)
{
	fprintf(f,
	    "usage: overhead [--quick] [-c CONFIG] [--vitalsd PATH] "
	    "[--plugin-path DIRS]\n"
	    "                [--perf PATH] [--cc CC] [-r ROUNDS] [-s SAMPLES] "
	    "[-t MS] [--files N]\n"
	    "                [--rows LIST] [--monitors LIST] [--settle MS] "
	    "[--warm[=N]]\n"
	    "                [--sample-hz HZ]\n"
	    "Latency of lmbench-like rows with no monitor, with vitalsd, "
	    "under\nperf record -a -g on the probes' tracepoints, with "
	    "empty BPF programs\non them and the cpu probe's sampling (floor), "
	    "with one minimal counting\nprogram on raw_syscalls:sys_enter "
	    "(count), and with the floor's programs\neach counting its event "
	    "with one atomic add (exact), interleaved in rounds.\n"
	    "rows: null read write stat open select sigins sigdel pipe fork "
	    "exec build\n"
	    "monitors: none vitalsd perf floor count exact (all but none "
	    "need root)\n");
}

static int
overhead_int(const char *arg, const char *what, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr,
		    "overhead: %s: expected an integer in %d..%d, "
		    "got \"%s\"\n",
		    what, lo, hi, arg);
		exit(2);
	}
	return (int)v;
}

/* Check a comma-separated list against the known names; exit 2 if not. */
static void
overhead_check_list(const char *list, const char *what, const char *known)
{
	char *copy = strdup(list), *w, *save = NULL;
	char pad[256];

	for (w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		snprintf(pad, sizeof(pad), " %s ", w);
		if (!strstr(known, pad)) {
			fprintf(stderr,
			    "overhead: %s: unknown \"%s\" (one of:%.*s)\n",
			    what, w, (int)strlen(known) - 1, known);
			exit(2);
		}
	}
	free(copy);
}

static void
overhead_parse(int argc, char **argv, struct overhead_opts *o)
{
	static const struct option lo[] = { { "quick", 0, NULL, 'q' },
		{ "config", 1, NULL, 'c' }, { "vitalsd", 1, NULL, 'V' },
		{ "plugin-path", 1, NULL, 'P' }, { "perf", 1, NULL, 'p' },
		{ "cc", 1, NULL, 'C' }, { "rounds", 1, NULL, 'r' },
		{ "samples", 1, NULL, 's' }, { "time", 1, NULL, 't' },
		{ "files", 1, NULL, 'f' }, { "rows", 1, NULL, 'R' },
		{ "monitors", 1, NULL, 'm' }, { "settle", 1, NULL, 'S' },
		{ "warm", 2, NULL, 'W' }, { "sample-hz", 1, NULL, 'H' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int ch, r = 0, s = 0, t = 0, f = 0;

	while ((ch = getopt_long(argc, argv, "qc:r:s:t:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'q':
			o->quick = 1;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'V':
			o->vitalsd = optarg;
			break;
		case 'P':
			o->plugin_path = optarg;
			break;
		case 'p':
			o->perf = optarg;
			break;
		case 'C':
			o->cc = optarg;
			break;
		case 'r':
			r = overhead_int(optarg, "--rounds", 1, 1000);
			break;
		case 's':
			s = overhead_int(optarg, "--samples", 1, 1000);
			break;
		case 't':
			t = overhead_int(optarg, "--time", 1, 60000);
			break;
		case 'f':
			f = overhead_int(optarg, "--files", 1, OV_MAXFILES);
			break;
		case 'R':
			o->rows = optarg;
			break;
		case 'm':
			o->monitors = optarg;
			break;
		case 'S':
			o->settle = overhead_int(optarg, "--settle", 0, 600000);
			break;
		case 'W':
			o->warm = optarg == NULL
			    ? 1
			    : overhead_int(optarg, "--warm", 0, 1000);
			break;
		case 'H':
			o->sample_hz =
			    overhead_int(optarg, "--sample-hz", 0, 10000);
			break;
		case 'h':
			overhead_usage(stdout);
			exit(0);
		default:
			overhead_usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "overhead: unexpected argument \"%s\"\n",
		    argv[optind]);
		overhead_usage(stderr);
		exit(2);
	}
	if (o->rows)
		overhead_check_list(o->rows, "--rows",
		    " null read write stat "
		    "open select sigins sigdel pipe fork exec build ");
	if (o->monitors)
		overhead_check_list(o->monitors, "--monitors",
		    " none vitalsd perf floor count exact ");
	o->rounds = r ? r : o->quick ? 2 : 8;
	o->samples = s ? s : 2;
	o->ms = t ? t : o->quick ? 40 : 100;
	o->files = f ? f : o->quick ? 1 : 2;
}

/* ---- the run and the report ---- */

struct overhead_res {
	double *v[OV_NROWS][OV_NMON]; /* ns per op, per sample */
	double *cpu[OV_NROWS][OV_NMON]; /* CPU ns per op, per sample */
	int *round[OV_NROWS][OV_NMON]; /* the round of each sample */
	int rounds;
	int n[OV_NROWS][OV_NMON];
	uint64_t chunk[OV_NROWS];
	int err[OV_NROWS]; /* errno that stopped the row, or 0 */
	char msg[OV_NROWS][256]; /* what failed, when a child did */
	int on[OV_NROWS]; /* row selected and working */
};

/* Drop a row after error r (-errno), keeping what a child reported. */
static void
overhead_row_failed(struct overhead_res *res, int row, int r)
{
	res->err[row] = -r;
	res->on[row] = 0;
	if (r == -ECHILD && overhead_spawn_err[0])
		snprintf(res->msg[row], sizeof(res->msg[row]), "%s",
		    overhead_spawn_err);
}

/*
 * Each selected row once under monitor i, samples times (once for a
 * build); a pass that does not record only warms the monitor up.
 */
static void
overhead_pass(struct overhead_res *res, struct overhead_ctx *c, int i,
    int record, int round)
{
	uint64_t budget = (uint64_t)c->o->ms * 1000000ULL;
	int row, s, ns;
	double v, cpu = 0;

	for (row = 0; row < OV_NROWS && !overhead_stop; row++) {
		if (!res->on[row])
			continue;
		ns = overhead_rows[row].once ? 1 : c->o->samples;
		for (s = 0; s < ns && !overhead_stop; s++) {
			v = overhead_sample(&overhead_rows[row], c,
			    res->chunk[row], budget, &cpu);
			if (v < 0 && overhead_stop)
				break; /* interrupted, e.g. a compiler by ^C */
			if (v < 0) {
				overhead_row_failed(res, row, (int)v);
				break;
			}
			if (record) {
				res->round[row][i][res->n[row][i]] = round;
				res->cpu[row][i][res->n[row][i]] = cpu;
				res->v[row][i][res->n[row][i]++] = v;
			}
		}
	}
}

static void
overhead_run(
    struct overhead_res *res, struct overhead_ctx *c, struct overhead_mon *m)
{
	int r, k, i, w;

	for (r = 0; r < c->o->rounds && !overhead_stop; r++) {
		fprintf(stderr, "overhead: round %d/%d\n", r + 1, c->o->rounds);
		for (k = 0; k < OV_NMON && !overhead_stop; k++) {
			i = (r + k) % OV_NMON; /* rotate who goes first */
			if (!m[i].on ||
			    overhead_mon_start(&m[i], i, c->o, c->tmp) < 0)
				continue;
			/* One-time work (symbols of the programs rows run). */
			for (w = 0; w < c->o->warm && !overhead_stop; w++)
				overhead_pass(res, c, i, 0, r);
			overhead_pass(res, c, i, 1, r);
			overhead_mon_stop(&m[i], i, c->tmp);
		}
	}
}

/* Format ns in the row's unit (scale ns per unit) into buf. */
static const char *
overhead_fmt(
    char *buf, size_t len, double ns, double scale, const char *unit, int sign)
{
	double v = ns / scale, a = fabs(v);

	if (isnan(ns))
		return "-";
	snprintf(buf, len, sign ? "%+.*f %s" : "%.*f %s",
	    a < 10	   ? 3
		: a < 100  ? 2
		: a < 1000 ? 1
			   : 0,
	    v, unit);
	return buf;
}

static const char *
overhead_ratio(char *buf, size_t len, double x, double base)
{
	if (isnan(x) || isnan(base) || base <= 0)
		return "-";
	snprintf(buf, len, "%.2fx", x / base);
	return buf;
}

/* The unit ns values around ref print in: its name, and ns per unit in scale. */
static const char *
overhead_unit(double ref, double *scale)
{
	static const char *units[] = { "ns", "us", "ms", "s" };
	int u = 0;

	*scale = 1;
	while (u < 3 && ref >= *scale * 1000)
		*scale *= 1000, u++;
	return units[u];
}

static void
overhead_print_row(int row, double med[OV_NMON], double spread)
{
	char b[14][32];
	double scale;
	const char *unit = overhead_unit(
	    isnan(med[OV_NONE]) ? med[OV_VITALSD] : med[OV_NONE], &scale);

	if (!isnan(spread))
		snprintf(b[11], 32, "%.0f%%", spread * 100);
	printf("%-20s %9s %9s %9s %9s %9s %9s %8s %8s %9s %9s %9s %9s %9s "
	       "%6s\n",
	    overhead_rows[row].name,
	    overhead_fmt(b[0], 32, med[OV_NONE], scale, unit, 0),
	    overhead_fmt(b[1], 32, med[OV_FLOOR], scale, unit, 0),
	    overhead_fmt(b[2], 32, med[OV_COUNT], scale, unit, 0),
	    overhead_fmt(b[12], 32, med[OV_EXACT], scale, unit, 0),
	    overhead_fmt(b[3], 32, med[OV_VITALSD], scale, unit, 0),
	    overhead_fmt(b[4], 32, med[OV_PERF], scale, unit, 0),
	    overhead_ratio(b[5], 32, med[OV_VITALSD], med[OV_NONE]),
	    overhead_ratio(b[6], 32, med[OV_PERF], med[OV_NONE]),
	    overhead_fmt(
		b[7], 32, med[OV_FLOOR] - med[OV_NONE], scale, unit, 1),
	    overhead_fmt(
		b[8], 32, med[OV_COUNT] - med[OV_NONE], scale, unit, 1),
	    overhead_fmt(
		b[13], 32, med[OV_EXACT] - med[OV_NONE], scale, unit, 1),
	    overhead_fmt(
		b[9], 32, med[OV_VITALSD] - med[OV_NONE], scale, unit, 1),
	    overhead_fmt(
		b[10], 32, med[OV_PERF] - med[OV_NONE], scale, unit, 1),
	    isnan(spread) ? "-" : b[11]);
}

/* Geometric mean of monitor i's latency ratios, and the build's ratio. */
static void
overhead_summary_of(double med[][OV_NMON], int i, const struct overhead_mon *m)
{
	double lsum = 0, build = NAN, worst = 0, q;
	int row, n = 0, wrow = -1;

	if (!m[i].on && m[i].starts == 0) {
		printf("  %-8s not measured: %s\n", m[i].name, m[i].why);
		return;
	}
	for (row = 0; row < OV_NROWS; row++) {
		q = med[row][i] / med[row][OV_NONE];
		if (isnan(q) || q <= 0)
			continue;
		if (overhead_rows[row].once) {
			build = q;
			continue;
		}
		lsum += log(q), n++;
		if (q > worst)
			worst = q, wrow = row;
	}
	if (n)
		printf(
		    "  %-8s %.3fx geometric mean over %d latency rows (worst "
		    "%.2fx: %s)",
		    m[i].name, exp(lsum / n), n, worst,
		    overhead_rows[wrow].name);
	else
		printf("  %-8s no latency row", m[i].name);
	if (!isnan(build))
		printf(", build %+.1f%%", (build - 1) * 100);
	printf("\n");
}

/* Did any monitor measure the row? */
static int
overhead_measured(const struct overhead_res *res, int row)
{
	int i;

	for (i = 0; i < OV_NMON; i++)
		if (res->n[row][i] > 0)
			return 1;
	return 0;
}

static void
overhead_print_header(const char *first)
{
	printf("\n%-20s %9s %9s %9s %9s %9s %9s %8s %8s %9s %9s %9s %9s %9s "
	       "%6s\n",
	    first, "none", "floor", "count", "exact", "vitalsd", "perf",
	    "vd/none", "pf/none", "+floor", "+count", "+exact", "+vitalsd",
	    "+perf", "noise");
}

/*
 * Median of monitor i's samples of one row in round r, into *m; w has
 * room for them.  0 if it has none in that round.
 */
static int
overhead_round_median(const struct overhead_res *res,
    double *const src[OV_NMON], int row, int i, int r, double *w, double *m)
{
	int k, n = 0;

	for (k = 0; k < res->n[row][i]; k++)
		if (res->round[row][i][k] == r)
			w[n++] = src[i][k];
	if (n == 0)
		return 0;
	*m = overhead_median(w, n);
	return 1;
}

/*
 * Monitor i against monitor base (none, or the floor) on one row, paired
 * by round: per round, the median of the monitor's samples less the
 * median of base's of the same round (rel: over the unmonitored median of
 * the round); the mean of that over the rounds all ran, and its standard
 * error.  Rounds drift (the machine, the monitor's own epoch work) more
 * than samples within a round do, so the pairs say better than two
 * medians whether a difference is real.  Returns the rounds paired; under
 * 3, no estimate.
 */
static int
overhead_paired(const struct overhead_res *res, double *const src[OV_NMON],
    int row, int i, int base, int rel, double *mean, double *se)
{
	double *w, ma, mb, mn, d, sum = 0, sq = 0;
	int r, n = 0, most = res->n[row][OV_NONE];

	if (res->n[row][i] > most)
		most = res->n[row][i];
	if (res->n[row][base] > most)
		most = res->n[row][base];
	w = malloc(((size_t)most + 1) * sizeof(*w));
	for (r = 0; w != NULL && r < res->rounds; r++) {
		if (!overhead_round_median(res, src, row, i, r, w, &ma) ||
		    !overhead_round_median(res, src, row, base, r, w, &mb) ||
		    (rel &&
			!overhead_round_median(
			    res, src, row, OV_NONE, r, w, &mn)))
			continue;
		d = rel ? (ma - mb) / mn : ma - mb;
		sum += d;
		sq += d * d;
		n++;
	}
	free(w);
	if (n < 3)
		return n;
	*mean = sum / n;
	*se = sqrt(fmax(sq - n * *mean * *mean, 0) / (n - 1) / n);
	return n;
}

/* An added latency (rel: a share) and its standard error, for a table. */
static void
overhead_fmt_added(char *b, size_t len, int rel, double mean, double se,
    double scale, const char *unit)
{
	if (rel)
		snprintf(b, len, "%+.2f%% +- %.2f", mean * 100, se * 100);
	else
		snprintf(b, len, "%+.*f +- %.*f %s",
		    fabs(mean) / scale < 10 ? 2 : 1, mean / scale,
		    se / scale < 10 ? 2 : 1, se / scale, unit);
}

/*
 * The paired estimate of each monitor on each row, and perf's over
 * vitalsd's: of wall time, or (cpu) of the CPU time of the rows that
 * spawn processes.
 */
static void
overhead_report_paired(const struct overhead_res *res, int cpu)
{
	double *const(*src)[OV_NMON] = cpu ? res->cpu : res->v;
	static const int order[] = { OV_FLOOR, OV_COUNT, OV_EXACT, OV_VITALSD,
		OV_PERF };
	double mean[OV_NMON], se[OV_NMON], scale, lo, hi, am, ase;
	char b[OV_NMON][48], above[48];
	const char *unit;
	int row, i, k, rel, any = 0, n, nmax = 0;

	for (row = 0; row < OV_NROWS; row++) {
		if (res->err[row] || !overhead_measured(res, row) ||
		    (cpu && !overhead_rows[row].cpu))
			continue;
		rel = overhead_rows[row].once;
		unit = overhead_unit(
		    overhead_median(src[row][OV_NONE], res->n[row][OV_NONE]),
		    &scale);
		for (k = 0; k < 5; k++) {
			i = order[k];
			mean[i] = NAN;
			snprintf(b[i], sizeof(b[i]), "-");
			n = overhead_paired(res, src[row], row, i, OV_NONE, rel,
			    &mean[i], &se[i]);
			if (n < 3)
				continue;
			if (n > nmax)
				nmax = n;
			overhead_fmt_added(b[i], sizeof(b[i]), rel, mean[i],
			    se[i], scale, unit);
		}
		/* What vitalsd adds beyond the floor, which any monitor pays. */
		snprintf(above, sizeof(above), "-");
		if (overhead_paired(res, src[row], row, OV_VITALSD, OV_FLOOR,
			rel, &am, &ase) >= 3)
			overhead_fmt_added(
			    above, sizeof(above), rel, am, ase, scale, unit);
		if (!any++)
			printf("\n%s, paired by round\n%-20s %20s %20s %20s "
			       "%20s %20s %20s  %s\n",
			    cpu ? "CPU time added" : "latency added", "row",
			    "+floor", "+count", "+exact", "+vitalsd", "+perf",
			    "vitalsd-floor", "perf/vitalsd (+-1 se)");
		printf("%-20s %20s %20s %20s %20s %20s %20s",
		    overhead_rows[row].name, b[OV_FLOOR], b[OV_COUNT],
		    b[OV_EXACT], b[OV_VITALSD], b[OV_PERF], above);
		if (!isnan(mean[OV_VITALSD]) && !isnan(mean[OV_PERF]) &&
		    mean[OV_VITALSD] > 0) {
			lo = mean[OV_VITALSD] + se[OV_VITALSD];
			hi = mean[OV_VITALSD] - se[OV_VITALSD];
			printf("  %.1fx (%.1f-",
			    mean[OV_PERF] / mean[OV_VITALSD],
			    (mean[OV_PERF] - se[OV_PERF]) / lo);
			if (hi > 0)
				printf("%.1f)",
				    (mean[OV_PERF] + se[OV_PERF]) / hi);
			else
				printf("inf)");
		}
		printf("\n");
	}
	if (any)
		printf("mean over up to %d rounds of each round's median "
		       "less the unmonitored one of the same round\n(build: "
		       "over it), +- its standard error; vitalsd-floor: "
		       "vitalsd's less the floor's\n",
		    nmax);
}

/*
 * The CPU time the rows that spawn processes used (the bench and the
 * children it waited for), where wall time is noisiest.
 */
static void
overhead_report_cpu(struct overhead_res *res)
{
	double med[OV_NMON], spread;
	int row, i, any = 0;

	for (row = 0; row < OV_NROWS; row++) {
		if (!overhead_rows[row].cpu || res->err[row] ||
		    !overhead_measured(res, row))
			continue;
		if (!any++)
			overhead_print_header("CPU time (median)");
		for (i = 0; i < OV_NMON; i++)
			med[i] =
			    overhead_median(res->cpu[row][i], res->n[row][i]);
		overhead_median_q(
		    res->cpu[row][OV_NONE], res->n[row][OV_NONE], &spread);
		overhead_print_row(row, med, spread);
	}
	if (any)
		printf(
		    "CPU time: user + system time per op of the bench and "
		    "the processes it waited for\n(BPF programs run in the "
		    "context of the task that hit the tracepoint, so their time "
		    "is in it)\n");
}

static void
overhead_report(struct overhead_res *res, const struct overhead_mon *m)
{
	double med[OV_NROWS][OV_NMON], spread;
	int row, i;

	overhead_print_header("row (median)");
	for (row = 0; row < OV_NROWS; row++) {
		for (i = 0; i < OV_NMON; i++)
			med[row][i] =
			    overhead_median(res->v[row][i], res->n[row][i]);
		overhead_median_q(
		    res->v[row][OV_NONE], res->n[row][OV_NONE], &spread);
		if (res->err[row])
			printf("%-20s error: %s\n", overhead_rows[row].name,
			    res->msg[row][0] ? res->msg[row]
					     : strerror(res->err[row]));
		else if (overhead_measured(res, row))
			overhead_print_row(row, med[row], spread);
	}
	printf("noise: interquartile range of the unmonitored samples over "
	       "their median\n");
	overhead_report_cpu(res);
	overhead_report_paired(res, 0);
	overhead_report_paired(res, 1);
	printf("\nsummary (ratio to no monitor):\n");
	for (i = OV_VITALSD; i < OV_NMON; i++)
		overhead_summary_of(med, i, m);
	if (m[OV_VITALSD].starts)
		printf("vitalsd: %d runs, %.1f s monitored, %llu epochs stored "
		       "(%.1f KiB)\n",
		    m[OV_VITALSD].starts, m[OV_VITALSD].secs,
		    (unsigned long long)m[OV_VITALSD].epochs,
		    m[OV_VITALSD].bytes / 1024.0);
	if (m[OV_PERF].starts)
		printf("perf: %d runs, %.1f s monitored, wrote %.1f MiB "
		       "(%.1f MiB/s)%s\n",
		    m[OV_PERF].starts, m[OV_PERF].secs,
		    m[OV_PERF].bytes / 1048576.0,
		    m[OV_PERF].bytes / 1048576.0 / m[OV_PERF].secs,
		    m[OV_PERF].lost ? " (perf reported lost events)" : "");
}

static void
overhead_header(const struct overhead_ctx *c, const struct overhead_mon *m)
{
	const struct overhead_opts *o = c->o;
	struct utsname u;

	uname(&u);
	printf("overhead: Linux %s, %ld CPUs; %d rounds, each monitor in turn; "
	       "per round and monitor: %d samples of %d ms per latency row",
	    u.release, sysconf(_SC_NPROCESSORS_ONLN), o->rounds, o->samples,
	    o->ms);
	if (overhead_selected(o->rows, "build"))
		printf(
		    ", one build of %d C files with %s -O2", o->files, o->cc);
	if (o->settle > 0)
		printf("; each monitor runs %d ms before measuring", o->settle);
	if (o->warm)
		printf("; %d unrecorded pass%s after each monitor start",
		    o->warm, o->warm == 1 ? "" : "es");
	if ((m[OV_FLOOR].on || m[OV_EXACT].on) && o->sample_hz != 0)
		printf("; floor and exact sample at %d Hz", o->sample_hz);
	printf("\n");
	if (m[OV_VITALSD].on)
		printf("vitalsd: %s -c %s\n", o->vitalsd, o->config);
	if (m[OV_PERF].on)
		printf(
		    "perf: %s record -a -g -e %s\n", o->perf, overhead_events);
	if (geteuid() != 0)
		printf("note: not root: measuring with no monitor only "
		       "(vitalsd's probes and perf -a need root)\n");
}

/* Find each row's chunk size unmonitored; rows that fail are dropped. */
static void
overhead_prepare(struct overhead_res *res, struct overhead_ctx *c)
{
	int row, i, r;

	res->rounds = c->o->rounds;
	for (row = 0; row < OV_NROWS; row++) {
		res->on[row] =
		    overhead_selected(c->o->rows, overhead_rows[row].id);
		if (!res->on[row])
			continue;
		for (i = 0; i < OV_NMON; i++) {
			res->v[row][i] =
			    calloc((size_t)c->o->rounds * (size_t)c->o->samples,
				sizeof(double));
			res->cpu[row][i] =
			    calloc((size_t)c->o->rounds * (size_t)c->o->samples,
				sizeof(double));
			res->round[row][i] =
			    calloc((size_t)c->o->rounds * (size_t)c->o->samples,
				sizeof(int));
			if (res->v[row][i] == NULL ||
			    res->cpu[row][i] == NULL ||
			    res->round[row][i] == NULL) {
				fprintf(stderr, "overhead: out of memory\n");
				exit(1);
			}
		}
		r = overhead_calibrate(
		    &overhead_rows[row], c, &res->chunk[row]);
		if (r < 0)
			overhead_row_failed(res, row, r);
	}
}

int
main(int argc, char **argv)
{
	struct overhead_opts o = { .config =
				       OVERHEAD_SRCDIR "/conf/vitals.yaml",
		.vitalsd = OVERHEAD_BUILDDIR "/daemon/vitalsd",
		.plugin_path =
		    OVERHEAD_BUILDDIR "/probes:" OVERHEAD_BUILDDIR
				      "/filters:" OVERHEAD_BUILDDIR "/outputs",
		.perf = "perf",
		.cc = "gcc",
		.sample_hz = 99 };
	struct sigaction sa = { .sa_handler = overhead_on_signal };
	static struct overhead_res res;
	struct overhead_mon m[OV_NMON];
	struct overhead_ctx c;
	int row, i, r;

	overhead_parse(argc, argv, &o);
	if ((r = overhead_ctx_init(&c, &o)) < 0) {
		fprintf(stderr, "overhead: temporary files in %s: %s\n", c.tmp,
		    strerror(-r));
		overhead_ctx_free(&c);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	overhead_mons_init(m, &o);
	overhead_header(&c, m);
	fflush(stdout);
	overhead_prepare(&res, &c);
	overhead_run(&res, &c, m);
	if (overhead_stop)
		printf("interrupted: partial results\n");
	overhead_report(&res, m);
	overhead_ctx_free(&c);
	for (row = 0; row < OV_NROWS; row++)
		for (i = 0; i < OV_NMON; i++) {
			free(res.v[row][i]);
			free(res.cpu[row][i]);
		}
	if (overhead_stop)
		return 130;
	return m[OV_VITALSD].failed || m[OV_PERF].failed ? 1 : 0;
}
