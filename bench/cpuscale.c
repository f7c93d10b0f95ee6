/* SPDX-License-Identifier: MIT */
/*
 * Whether the syscall probe's cost per event grows with the CPUs: N
 * threads (N = 1, 2, 4, ... up to the CPUs present), one pinned per CPU,
 * each calling a null syscall in a loop, with no monitor and with vitalsd
 * (syscall probe alone) in interleaved rounds.  Prints the added ns per
 * call for each N and its ratio to N = 1; asserts nothing.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CPUSCALE_BUILDDIR
#define CPUSCALE_BUILDDIR "."
#endif

#define CPUSCALE_MAXN 64 /* thread counts measured, at most */
#define CPUSCALE_MAXR 100 /* rounds, at most */

enum { CS_NONE, CS_VITALSD, CS_NMON };

struct cpuscale_opts {
	const char *vitalsd; /* the daemon */
	const char *plugin_path; /* VITALS_PLUGIN_PATH */
	int rounds; /* interleaved rounds */
	int ms; /* time per thread count per monitor */
};

/* One loop thread: pinned to cpu, counts its calls until stop. */
struct cpuscale_thread {
	pthread_t tid;
	int cpu;
	uint64_t calls;
	uint64_t wall_ns, cpu_ns; /* the thread's wall and CPU time */
};

static volatile int cpuscale_go, cpuscale_stop;

/* Per monitor, thread count index and round: wall and CPU ns per call. */
static double cpuscale_wall[CS_NMON][CPUSCALE_MAXN][CPUSCALE_MAXR];
static double cpuscale_cpu[CS_NMON][CPUSCALE_MAXN][CPUSCALE_MAXR];

static uint64_t
cpuscale_clock(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
cpuscale_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *
cpuscale_loop(void *arg)
{
	struct cpuscale_thread *t = arg;
	uint64_t w0, c0, n = 0;
	cpu_set_t one;
	int i;

	CPU_ZERO(&one);
	CPU_SET(t->cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	while (!cpuscale_go)
		;
	w0 = cpuscale_clock(CLOCK_MONOTONIC);
	c0 = cpuscale_clock(CLOCK_THREAD_CPUTIME_ID);
	while (!cpuscale_stop) {
		for (i = 0; i < 256; i++)
			syscall(SYS_getppid);
		n += 256;
	}
	t->wall_ns = cpuscale_clock(CLOCK_MONOTONIC) - w0;
	t->cpu_ns = cpuscale_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
	t->calls = n;
	return NULL;
}

/*
 * Run n threads for ms ms; store the mean over threads of the wall and
 * CPU ns per call.  0, or a negative errno if a thread did not start.
 */
static int
cpuscale_run(int n, int ms, const int *cpus, double *wall, double *cpu)
{
	struct cpuscale_thread t[CPUSCALE_MAXN];
	double w = 0, c = 0;
	int i, err;

	cpuscale_go = cpuscale_stop = 0;
	for (i = 0; i < n; i++) {
		t[i].cpu = cpus[i];
		if ((err = pthread_create(
			 &t[i].tid, NULL, cpuscale_loop, &t[i]))) {
			cpuscale_stop = cpuscale_go = 1;
			while (i-- > 0)
				pthread_join(t[i].tid, NULL);
			return -err;
		}
	}
	cpuscale_go = 1;
	cpuscale_sleep_ms(ms);
	cpuscale_stop = 1;
	for (i = 0; i < n; i++) {
		pthread_join(t[i].tid, NULL);
		w += (double)t[i].wall_ns / (double)t[i].calls;
		c += (double)t[i].cpu_ns / (double)t[i].calls;
	}
	*wall = w / n;
	*cpu = c / n;
	return 0;
}

static int
cpuscale_file_has(const char *path, const char *needle)
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

/* Start vitalsd on conf, its log in log; its pid, or -1 (said why). */
static pid_t
cpuscale_vitalsd_start(
    const struct cpuscale_opts *o, const char *conf, const char *log)
{
	pid_t p;
	int waited;

	unlink(log);
	if ((p = fork()) < 0)
		return -1;
	if (p == 0) {
		if (!freopen(log, "w", stdout) || dup2(1, 2) < 0)
			_exit(127);
		setenv("VITALS_PLUGIN_PATH", o->plugin_path, 1);
		execl(o->vitalsd, o->vitalsd, "-c", conf, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", o->vitalsd, strerror(errno));
		_exit(127);
	}
	for (waited = 0; waited < 20000; waited += 10) {
		if (cpuscale_file_has(log, "core: started"))
			return p;
		if (waitpid(p, NULL, WNOHANG) == p) {
			fprintf(stderr,
			    "cpuscale: vitalsd exited at start; "
			    "see %s\n",
			    log);
			return -1;
		}
		cpuscale_sleep_ms(10);
	}
	return p;
}

static void
cpuscale_vitalsd_stop(pid_t p)
{
	kill(p, SIGTERM);
	waitpid(p, NULL, 0);
}

static int
cpuscale_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
cpuscale_median(const double *v, int n, double *lo, double *hi)
{
	double s[CPUSCALE_MAXR];

	memcpy(s, v, sizeof(*v) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cpuscale_cmp);
	*lo = s[0];
	*hi = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Print one table (wall or CPU time per call) over the thread counts. */
static void
cpuscale_table(const char *what, double (*v)[CPUSCALE_MAXN][CPUSCALE_MAXR],
    const int *ns, int nn, int rounds)
{
	double base = 0, lo, hi, lo2, hi2, none, mon, added;
	int k;

	printf("\n%s per call (median of %d rounds; lowest-highest)\n", what,
	    rounds);
	printf("%4s %8s %17s %9s %17s %9s %9s\n", "N", "none", "spread",
	    "vitalsd", "spread", "added", "/ N=1");
	for (k = 0; k < nn; k++) {
		none = cpuscale_median(v[CS_NONE][k], rounds, &lo, &hi);
		mon = cpuscale_median(v[CS_VITALSD][k], rounds, &lo2, &hi2);
		added = mon - none;
		if (k == 0)
			base = added;
		printf("%4d %8.1f %8.1f-%-8.1f %9.1f %8.1f-%-8.1f %+9.1f ",
		    ns[k], none, lo, hi, mon, lo2, hi2, added);
		if (base > 0)
			printf("%9.2f\n", added / base);
		else
			printf("%9s\n", "-");
	}
}

static void
cpuscale_usage(FILE *f)
{
	fprintf(f,
	    "usage: cpuscale [-r ROUNDS] [-t MS] [--vitalsd PATH] "
	    "[--plugin-path DIRS]\n"
	    "N threads of a null syscall loop (N = 1, 2, 4 ... CPUs), "
	    "with no monitor and with vitalsd\n(syscall probe), "
	    "interleaved; prints the added ns per call and its ratio "
	    "to N = 1.\n  -r ROUNDS  rounds (5)\n"
	    "  -t MS      time per thread count per monitor (1000)\n");
}

static int
cpuscale_parse(int argc, char **argv, struct cpuscale_opts *o)
{
	static const struct option lo[] = { { "rounds", 1, NULL, 'r' },
		{ "time", 1, NULL, 't' }, { "vitalsd", 1, NULL, 'V' },
		{ "plugin-path", 1, NULL, 'P' }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "r:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->rounds = atoi(optarg);
			break;
		case 't':
			o->ms = atoi(optarg);
			break;
		case 'V':
			o->vitalsd = optarg;
			break;
		case 'P':
			o->plugin_path = optarg;
			break;
		case 'h':
			cpuscale_usage(stdout);
			exit(0);
		default:
			cpuscale_usage(stderr);
			return -1;
		}
	}
	if (o->rounds < 1 || o->rounds > CPUSCALE_MAXR || o->ms < 10) {
		cpuscale_usage(stderr);
		return -1;
	}
	return 0;
}

/*
 * Monitors of other users (vitalsd, perf, bpftrace, bcc's python) already
 * running: their probes are in every column, the baseline too.  Their count.
 */
static int
cpuscale_others(void)
{
	static const char *names[] = { "vitalsd", "perf", "bpftrace", "floor",
		NULL };
	char path[300], comm[64];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int n = 0, i;
	FILE *f;

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			for (i = 0; names[i]; i++)
				n += strcmp(comm, names[i]) == 0 ||
				    strstr(comm, "-bpfcc") != NULL;
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* The CPUs this process may run on, in order; their count. */
static int
cpuscale_cpus(int *cpus)
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	for (i = 0; i < CPU_SETSIZE && n < CPUSCALE_MAXN; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

int
main(int argc, char **argv)
{
	struct cpuscale_opts o = { .vitalsd =
				       CPUSCALE_BUILDDIR "/daemon/vitalsd",
		.plugin_path =
		    CPUSCALE_BUILDDIR "/probes:" CPUSCALE_BUILDDIR
				      "/filters:" CPUSCALE_BUILDDIR "/outputs",
		.rounds = 5,
		.ms = 1000 };
	char tmp[] = "/var/tmp/vitals-cpuscale.XXXXXX";
	char conf[PATH_MAX], log[PATH_MAX], cmd[PATH_MAX + 16];
	int cpus[CPUSCALE_MAXN], ns[CPUSCALE_MAXN], ncpu, nn = 0, r, k, m, i, j;
	double load[3] = { 0, 0, 0 }, w, c;
	pid_t p = 0;
	FILE *f;

	if (cpuscale_parse(argc, argv, &o) < 0)
		return 2;
	ncpu = cpuscale_cpus(cpus);
	for (k = 1; k < ncpu; k *= 2)
		ns[nn++] = k;
	ns[nn++] = ncpu;
	getloadavg(load, 3);
	printf("bench/cpuscale: %d CPUs usable (this machine has %ld online), "
	       "load average %.2f %.2f %.2f\n",
	    ncpu, sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
	if (ncpu <= 2)
		printf("NOTE: only %d CPUs here: N goes to %d, too few to show "
		       "cache lines bouncing between many CPUs\n",
		    ncpu, ncpu);
	if ((k = cpuscale_others()) > 0)
		printf("NOTE: %d other monitor processes (vitalsd, perf, "
		       "bpftrace, bcc) run here: their probes are in every "
		       "column, none's too\n",
		    k);
	if (geteuid() != 0) {
		printf("cpuscale: vitalsd's probes need root: skipped\n");
		return 0;
	}
	if (!mkdtemp(tmp)) {
		perror("cpuscale: mkdtemp");
		return 1;
	}
	snprintf(conf, sizeof(conf), "%s/vitals.yaml", tmp);
	snprintf(log, sizeof(log), "%s/vitalsd.log", tmp);
	if (!(f = fopen(conf, "w"))) {
		perror(conf);
		return 1;
	}
	fprintf(f,
	    "data_dir: %s/data\nlog: stderr\nepoch: 60s\n"
	    "probes:\n  syscall: {}\nplugins:\n  store: {}\n",
	    tmp);
	fclose(f);
	printf("rounds %d, %d ms per thread count per monitor; vitalsd: "
	       "syscall probe alone, epoch 60 s\n",
	    o.rounds, o.ms);
	fflush(stdout);
	for (r = 0; r < o.rounds; r++) {
		for (i = 0; i < CS_NMON; i++) {
			m = (i + r) % CS_NMON; /* A/B, then B/A */
			if (m == CS_VITALSD &&
			    (p = cpuscale_vitalsd_start(&o, conf, log)) < 0)
				return 1;
			/* Unrecorded: first sightings, page faults. */
			if (cpuscale_run(ncpu, 300, cpus, &w, &c) < 0)
				goto thread_fail;
			/* Ascending, then descending: no N always first. */
			for (j = 0; j < nn; j++) {
				k = r % 2 ? nn - 1 - j : j;
				if (cpuscale_run(ns[k], o.ms, cpus,
					&cpuscale_wall[m][k][r],
					&cpuscale_cpu[m][k][r]) < 0)
					goto thread_fail;
			}
			if (m == CS_VITALSD)
				cpuscale_vitalsd_stop(p);
		}
		getloadavg(load, 1);
		printf("round %d of %d done (load %.2f)\n", r + 1, o.rounds,
		    load[0]);
		fflush(stdout);
	}
	cpuscale_table("wall ns", cpuscale_wall, ns, nn, o.rounds);
	cpuscale_table("thread CPU ns", cpuscale_cpu, ns, nn, o.rounds);
	printf("\nadded: vitalsd's median less none's; / N=1: the added cost "
	       "at N threads over that at one (target <= 1.5).\nThread CPU "
	       "time is the steadier figure on a loaded machine: a preempted "
	       "thread's wall time grows, its CPU time does not.\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cpuscale: could not remove %s\n", tmp);
	return 0;
thread_fail:
	fprintf(stderr, "cpuscale: pthread_create failed\n");
	if (p > 0)
		cpuscale_vitalsd_stop(p);
	return 1;
}
