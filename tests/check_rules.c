/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the rules filter (Chopstix rules #1-#10) against the mock
 * core: a busy but healthy background with every vital yields nothing;
 * each injected pattern yields exactly the findings of its rule's
 * incident (info once, a warning when it lasts or at once when it is
 * unambiguous), at the right epoch and label, and near misses yield
 * nothing.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "contract.h"
#include "epochs.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

#define MS 1000000ULL
#define S 1000000000ULL
#define MIB 1048576ULL
#define GIB (1024 * MIB)
#define DEV_SDB (8u << 20 | 16u) /* kernel dev_t of 8:16 */

/* Background variations (struct rcase.bg). */
#define BG_NO_KFREE 1u /* no kmem_free vital */
#define BG_NO_CACHE 2u /* no cache vital (no PMU) */

static void *cfg, *st;
static struct tep_queue *q;

/*
 * Start the filter with defaults overridden by NULL-terminated pairs;
 * block_share is 0 (an exe's blocking is high from block_high on) unless
 * kv sets it.
 */
static int
start(const char *const *kv)
{
	static const char *const dflt[] = { "block_share", "0", NULL };

	cfg = contract_config(&vitals_plugin, dflt, kv);
	return vitals_plugin.init(mock_ctx("rules"), cfg, &st);
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

static void
add(struct tep_epoch *e, const char *vital, struct tep_ev ev)
{
	if (ev.comm == NULL && ev.exe != NULL && strrchr(ev.exe, '/'))
		ev.comm = strrchr(ev.exe, '/') + 1;
	tep_add(e, vital, &ev);
}

/*
 * A healthy, busy machine: web (pid 100) and db (pid 200) share 2000 cpu
 * samples (10% in the kernel), cache misses, modest scheduling delay,
 * blocking, I/O, page faults, balanced kmem, spread-out syscalls, socket
 * and lock traffic; free memory steady at 4 GiB; no signals.
 */
static void
background(struct tep_epoch *e, unsigned bg)
{
	const char *web = "/usr/bin/web", *db = "/usr/bin/db";
	unsigned j;

	add(e, "cpu",
	    (struct tep_ev){
		.exe = web, .pid = 100, .label = 0x100, .events = 1000 });
	add(e, "cpu",
	    (struct tep_ev){ .exe = web,
		.pid = 100,
		.label = 0xffff81,
		.op = 1,
		.ksym = "do_syscall_64",
		.events = 200 });
	add(e, "cpu",
	    (struct tep_ev){
		.exe = db, .pid = 200, .label = 0x200, .events = 700 });
	add(e, "cpu",
	    (struct tep_ev){ .exe = "/usr/sbin/cron",
		.pid = 300,
		.label = 0x300,
		.events = 100 });
	if (!(bg & BG_NO_CACHE)) {
		add(e, "cache",
		    (struct tep_ev){
			.exe = web, .label = 0x100, .events = 500 });
		add(e, "cache",
		    (struct tep_ev){
			.exe = db, .label = 0x200, .events = 400 });
		add(e, "cache",
		    (struct tep_ev){ .exe = "/usr/sbin/cron",
			.label = 0x300,
			.events = 100 });
	}
	add(e, "sched",
	    (struct tep_ev){ .exe = web,
		.pid = 100,
		.label = 100,
		.weight = 100 * MS,
		.events = 5 });
	add(e, "sched",
	    (struct tep_ev){ .exe = db,
		.pid = 200,
		.label = 200,
		.weight = 100 * MS,
		.events = 5 });
	add(e, "blocking",
	    (struct tep_ev){ .exe = web,
		.pid = 100,
		.label = 0x10,
		.weight = 200 * MS,
		.events = 20 });
	add(e, "blocking",
	    (struct tep_ev){ .exe = db,
		.pid = 200,
		.label = 0x20,
		.ksym = "io_schedule",
		.weight = 300 * MS,
		.events = 30 });
	add(e, "diskio",
	    (struct tep_ev){ .exe = db,
		.pid = 200,
		.label = 0x30,
		.op = 1,
		.weight = 10 * MIB,
		.events = 10,
		.args = { 1048576, 200000, DEV_SDB, 100 } });
	add(e, "umem",
	    (struct tep_ev){ .exe = web,
		.label = 0x40,
		.events = 100,
		.args = { 0x7f0000, 4 * GIB } });
	add(e, "umem",
	    (struct tep_ev){ .exe = db,
		.label = 0x41,
		.events = 100,
		.args = { 0x7f0000, 4 * GIB } });
	add(e, "kmem",
	    (struct tep_ev){ .exe = web,
		.label = 0x50,
		.weight = 100,
		.events = 100,
		.args = { 0, 0, 4 * GIB } });
	if (!(bg & BG_NO_KFREE))
		add(e, "kmem_free",
		    (struct tep_ev){ .exe = web,
			.label = 0x51,
			.weight = 100,
			.events = 100 });
	for (j = 0; j < 10; j++) {
		add(e, "syscall",
		    (struct tep_ev){ .exe = web,
			.pid = 100,
			.label = 0x600 + j,
			.op = j,
			.events = 500 });
		add(e, "syscall",
		    (struct tep_ev){ .exe = db,
			.pid = 200,
			.label = 0x700 + j,
			.op = j,
			.events = 300 });
	}
	tep_vital(e, "signal");
	add(e, "socket",
	    (struct tep_ev){
		.exe = web, .label = 0x80, .weight = MIB, .events = 100 });
	add(e, "lock",
	    (struct tep_ev){
		.exe = db, .label = 0x90, .weight = 50 * MS, .events = 10 });
}

/* ---- injected patterns: called for epoch i after the background ---- */

static void
inj_none(struct tep_epoch *e, unsigned i)
{
	(void)e;
	(void)i;
}

/* #1: a user-space loop with most CPU and almost no cache misses. */
static void
spin(struct tep_epoch *e, unsigned i, uint32_t op, uint64_t misses)
{
	if (i < 3)
		return;
	add(e, "cpu",
	    (struct tep_ev){ .exe = "/usr/bin/spin",
		.pid = 400,
		.label = 0x400,
		.op = op,
		.events = 6000 });
	add(e, "cache",
	    (struct tep_ev){ .exe = "/usr/bin/spin",
		.pid = 400,
		.label = 0x400,
		.events = misses });
}

static void
inj_busy(struct tep_epoch *e, unsigned i)
{
	spin(e, i, 0, 10);
}

static void
inj_busy_cache(struct tep_epoch *e, unsigned i)
{
	spin(e, i, 0, 800);
}

static void
inj_busy_kernel(struct tep_epoch *e, unsigned i)
{
	spin(e, i, 1, 10);
}

/* #2: from epoch 2 on, leaky holds more kernel or user memory each epoch. */
static void
leak(struct tep_epoch *e, unsigned i, const char *vital, uint64_t pages,
    uint64_t freed, int64_t step, unsigned until)
{
	uint64_t mem = (uint64_t)((int64_t)(4 * GIB) - step * (int64_t)i);
	struct tep_ev ev = { .exe = "/usr/bin/leaky",
		.pid = 500,
		.label = 0x501,
		.weight = pages,
		.events = pages };

	if (i < 2)
		return;
	if (i > until) { /* it keeps running, in balance */
		ev.weight = ev.events = 100;
		freed = strcmp(vital, "kmem") == 0 ? 100 : 0;
		mem = 4 * GIB;
	}
	ev.args[strcmp(vital, "kmem") == 0 ? 2 : 1] = mem;
	add(e, vital, ev);
	if (freed > 0)
		add(e, "kmem_free",
		    (struct tep_ev){ .exe = "/usr/bin/leaky",
			.label = 0x502,
			.weight = freed,
			.events = freed });
}

static void
inj_leak_kmem(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 100, 100 * MIB, 99);
}

static void
inj_leak_short(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 100, 100 * MIB, 5);
}

static void
inj_leak_small(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 300, 100, 100 * MIB, 99);
}

static void
inj_leak_rising(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 100, -100 * (int64_t)MIB, 99);
}

static void
inj_leak_kmem_gross(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 0, 100 * MIB, 99);
}

static void
inj_leak_kmem_gross_steady(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 0, 0, 99);
}

static void
inj_leak_umem(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "umem", 1000, 0, 100 * MIB, 99);
}

static void
inj_leak_umem_steady(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "umem", 1000, 0, 0, 99);
}

/*
 * Net kernel pages that are no leak: a parent that forks (its children
 * free what the forks took), or the page cache a reader fills (movable
 * pages it never faulted in).
 */
static void
inj_kmem_forker(struct tep_epoch *e, unsigned i)
{
	leak(e, i, "kmem", 500, 100, 100 * MIB, 99);
	add(e, "syscall",
	    (struct tep_ev){ .exe = "/usr/bin/leaky",
		.pid = 500,
		.label = 0x503,
		.op = SYS_clone,
		.events = 20 });
}

static void
inj_kmem_page_cache(struct tep_epoch *e, unsigned i)
{
	if (i < 2)
		return;
	add(e, "kmem",
	    (struct tep_ev){ .exe = "/usr/bin/leaky",
		.pid = 500,
		.label = 0x501,
		.weight = 500,
		.events = 500,
		.args = { 0, 0x100cca, 4 * GIB - i * 100 * MIB } });
	add(e, "kmem_free",
	    (struct tep_ev){ .exe = "/usr/bin/leaky",
		.label = 0x502,
		.weight = 100,
		.events = 100 });
}

/* A steady faulter while free memory falls (the page cache grows). */
static void
inj_umem_busy_falling(struct tep_epoch *e, unsigned i)
{
	add(e, "umem",
	    (struct tep_ev){ .exe = "/usr/bin/leaky",
		.pid = 500,
		.label = 0x501,
		.weight = 1000,
		.events = 1000,
		.args = { 0, 4 * GIB - i * 100 * MIB } });
}

/* #3: requests of dd that came back short or failed. */
static void
unsatisfied(struct tep_epoch *e, unsigned i, uint32_t op)
{
	if (i != 4)
		return;
	add(e, "diskio",
	    (struct tep_ev){ .exe = "/usr/bin/dd",
		.pid = 600,
		.label = 0x601,
		.op = op,
		.weight = 4096,
		.args = { 4096, 9000000, DEV_SDB, 2048 } });
	add(e, "diskio",
	    (struct tep_ev){ .exe = "/usr/bin/dd",
		.pid = 600,
		.label = 0x601,
		.op = op & ~1u,
		.weight = 4096,
		.args = { 4096, 9000000, DEV_SDB, 4096 } });
}

static void
inj_io(struct tep_epoch *e, unsigned i)
{
	unsatisfied(e, i, 0x101);
}

static void
inj_io_ok(struct tep_epoch *e, unsigned i)
{
	unsatisfied(e, i, 1);
}

/* #4: a kernel thread takes the CPU while tasks wait. */
static void
kernel(struct tep_epoch *e, unsigned i, uint64_t samples, uint64_t sched,
    uint64_t lock)
{
	if (i != 3)
		return;
	add(e, "cpu",
	    (struct tep_ev){ .comm = "kswapd0",
		.pid = 50,
		.label = 0xffff82,
		.op = 1,
		.ksym = "shrink_node",
		.events = samples });
	if (sched > 0)
		add(e, "sched",
		    (struct tep_ev){ .exe = "/usr/bin/web",
			.pid = 100,
			.label = 101,
			.weight = sched,
			.events = 9 });
	if (lock > 0)
		add(e, "lock",
		    (struct tep_ev){ .exe = "/usr/bin/db",
			.label = 0x91,
			.weight = lock,
			.events = 9 });
}

static void
inj_kernel(struct tep_epoch *e, unsigned i)
{
	kernel(e, i, 5000, 1500 * MS, 0);
}

static void
inj_kernel_lock(struct tep_epoch *e, unsigned i)
{
	kernel(e, i, 5000, 0, 2 * S);
}

static void
inj_kernel_quiet(struct tep_epoch *e, unsigned i)
{
	kernel(e, i, 5000, 0, 0);
}

static void
inj_kernel_small(struct tep_epoch *e, unsigned i)
{
	kernel(e, i, 1000, 1500 * MS, 0);
}

/*
 * #5: sshd blocks 200 ms an epoch, then `now` at epoch 5 (and 6 with
 * always 2, every epoch with always 1) with a source.
 */
static void
block(struct tep_epoch *e, unsigned i, uint64_t now, const char *source,
    int always)
{
	const char *sshd = "/usr/sbin/sshd";
	int on = i == 5 || always == 1 || (always == 2 && i == 6);

	add(e, "blocking",
	    (struct tep_ev){ .exe = sshd,
		.pid = 700,
		.label = 0x701,
		.ksym = "futex_wait_queue",
		.weight = on ? now : 200 * MS,
		.events = 7 });
	if (source == NULL || !on)
		return;
	if (strcmp(source, "diskio") == 0)
		add(e, "diskio",
		    (struct tep_ev){ .exe = sshd,
			.label = 0x702,
			.weight = 5 * MIB,
			.events = 5 });
	else if (strcmp(source, "lock") == 0)
		add(e, "lock",
		    (struct tep_ev){ .exe = sshd,
			.label = 0x703,
			.weight = 500 * MS,
			.events = 5 });
	else
		add(e, "socket",
		    (struct tep_ev){ .exe = sshd,
			.label = 0x704,
			.weight = 64 * 1024,
			.events = 5 });
}

static void
inj_block_disk(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, "diskio", 0);
}

static void
inj_block_disk_lasting(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, "diskio", 2);
}

static void
inj_block_lock(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, "lock", 0);
}

static void
inj_block_socket(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, "socket", 0);
}

static void
inj_block_alone(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, NULL, 0);
}

static void
inj_block_steady(struct tep_epoch *e, unsigned i)
{
	block(e, i, 3 * S, "diskio", 1);
}

static void
inj_block_small(struct tep_epoch *e, unsigned i)
{
	block(e, i, 800 * MS, "diskio", 0);
}

/* #5: 900 ms at epoch 4 (below block_high), 1.5 s at epoch 5. */
static void
inj_block_spike(struct tep_epoch *e, unsigned i)
{
	block(e, i, 1500 * MS, "diskio", 0);
	if (i == 4)
		add(e, "blocking",
		    (struct tep_ev){ .exe = "/usr/sbin/sshd",
			.label = 0x705,
			.weight = 700 * MS,
			.events = 7 });
}

/* #6: hog faults, blocks and does I/O every epoch. */
static void
swap(struct tep_epoch *e, uint64_t io)
{
	const char *hog = "/usr/bin/hog";

	add(e, "umem",
	    (struct tep_ev){ .exe = hog,
		.label = 0x801,
		.events = 20000,
		.args = { 0x7f0000, 4 * GIB } });
	add(e, "blocking",
	    (struct tep_ev){
		.exe = hog, .label = 0x802, .weight = 2 * S, .events = 50 });
	add(e, "diskio",
	    (struct tep_ev){
		.exe = hog, .label = 0x803, .weight = io, .events = 50 });
	add(e, "cache",
	    (struct tep_ev){ .exe = hog, .label = 0x804, .events = 300 });
}

static void
inj_swap(struct tep_epoch *e, unsigned i)
{
	(void)i;
	swap(e, 100 * MIB);
}

static void
inj_swap_noio(struct tep_epoch *e, unsigned i)
{
	(void)i;
	swap(e, MIB);
}

/* #7: victim waits 2 s in the run queue with little CPU. */
static void
held(struct tep_epoch *e, uint64_t cpu)
{
	add(e, "sched",
	    (struct tep_ev){ .exe = "/usr/bin/victim",
		.pid = 900,
		.label = 900,
		.weight = 2 * S,
		.events = 40 });
	add(e, "cpu",
	    (struct tep_ev){ .exe = "/usr/bin/victim",
		.pid = 900,
		.label = 0x900,
		.events = cpu });
}

static void
inj_held(struct tep_epoch *e, unsigned i)
{
	(void)i;
	held(e, 10);
}

/* Held, with few cpu samples but the CPUs idle 2% of the time (/proc,
 * its one reading): a short epoch of a saturated machine. */
static void
inj_held_saturated(struct tep_epoch *e, unsigned i)
{
	(void)i;
	held(e, 10);
	tep_metric(e, "proc.cpu.idle_pct", 2);
}

/* Held, with few cpu samples and the CPUs idle 40% of the time. */
static void
inj_held_idle(struct tep_epoch *e, unsigned i)
{
	(void)i;
	held(e, 10);
	tep_metric(e, "proc.cpu.idle_pct", 40);
}

static void
inj_held_cpu(struct tep_epoch *e, unsigned i)
{
	(void)i;
	held(e, 500);
}

/* #8: loop calls sendto on a dead socket as fast as it can. */
static void
loop(struct tep_epoch *e, uint64_t calls, unsigned labels, uint64_t blocked,
    uint64_t kmem)
{
	const char *exe = "/usr/bin/loop";
	unsigned j;

	add(e, "cpu",
	    (struct tep_ev){ .exe = exe,
		.pid = 1000,
		.label = 0xffff83,
		.op = 1,
		.ksym = "__sys_sendto",
		.events = 4000 });
	add(e, "cpu",
	    (struct tep_ev){
		.exe = exe, .pid = 1000, .label = 0x1001, .events = 1000 });
	for (j = 0; j < labels; j++)
		add(e, "syscall",
		    (struct tep_ev){ .exe = exe,
			.pid = 1000,
			.label = 0x77 + j,
			.op = 44,
			.events = calls / labels,
			.args = { 3 } });
	add(e, "blocking",
	    (struct tep_ev){
		.exe = exe, .label = 0x1002, .weight = blocked, .events = 3 });
	add(e, "kmem",
	    (struct tep_ev){
		.exe = exe, .label = 0x1003, .weight = kmem, .events = kmem });
	add(e, "kmem_free",
	    (struct tep_ev){
		.exe = exe, .label = 0x1004, .weight = kmem, .events = kmem });
}

static void
inj_loop(struct tep_epoch *e, unsigned i)
{
	(void)i;
	loop(e, 200000, 1, 10 * MS, 10);
}

static void
inj_loop_spread(struct tep_epoch *e, unsigned i)
{
	(void)i;
	loop(e, 200000, 10, 10 * MS, 10);
}

static void
inj_loop_blocked(struct tep_epoch *e, unsigned i)
{
	(void)i;
	loop(e, 200000, 1, S, 10);
}

static void
inj_loop_kmem(struct tep_epoch *e, unsigned i)
{
	(void)i;
	loop(e, 200000, 1, 10 * MS, 5000);
}

static void
inj_loop_few(struct tep_epoch *e, unsigned i)
{
	(void)i;
	loop(e, 50000, 1, 10 * MS, 10);
}

/* #9: init faults in lots of memory with few (or many) cache misses. */
static void
grow(struct tep_epoch *e, uint64_t misses)
{
	add(e, "umem",
	    (struct tep_ev){ .exe = "/usr/bin/init",
		.label = 0xa01,
		.events = 20000,
		.args = { 0x7f0000, 4 * GIB } });
	add(e, "cache",
	    (struct tep_ev){
		.exe = "/usr/bin/init", .label = 0xa02, .events = misses });
}

static void
inj_init(struct tep_epoch *e, unsigned i)
{
	(void)i;
	grow(e, 10);
}

static void
inj_load(struct tep_epoch *e, unsigned i)
{
	(void)i;
	grow(e, 1500);
}

static void
inj_grow_mid(struct tep_epoch *e, unsigned i)
{
	(void)i;
	grow(e, 300);
}

/*
 * #10: worker (pid 4242) runs from epoch `from` to 5 with `share` of cpu
 * and two syscalls, then is gone; `how` adds the end of its life.
 */
#define END_NONE 0
#define END_KILL 1
#define END_SEGV 2
#define END_EXIT 3
#define END_SYSCALLS 4 /* keeps making syscalls after epoch 5 */
#define END_OOM 5 /* SIGKILL raised by the kernel */

static void
worker(struct tep_epoch *e, unsigned i, unsigned from, uint64_t cpu, int how)
{
	const char *w = "/usr/bin/worker";

	if (i >= from && i <= 5) {
		add(e, "cpu",
		    (struct tep_ev){
			.exe = w, .pid = 4242, .label = 0xb01, .events = cpu });
		add(e, "syscall",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = 0xb02,
			.op = 0,
			.events = 2 });
		add(e, "syscall",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = 0xb03,
			.op = 1,
			.events = 2 });
	}
	if (how == END_EXIT && i == 5)
		add(e, "syscall",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = 0xb04,
			.op = SYS_exit_group });
	if (how == END_SEGV && i == 5)
		add(e, "signal",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = SIGSEGV,
			.op = SIGSEGV,
			.args = { 1, 4242, 4242 } });
	if (how == END_KILL && i == 6)
		add(e, "signal",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = SIGKILL,
			.op = SIGKILL,
			.args = { 0, 1, 4242 } });
	/* The OOM killer's: si_code SI_KERNEL, no sending process. */
	if (how == END_OOM && i == 6)
		add(e, "signal",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = SIGKILL,
			.op = SIGKILL,
			.args = { 0x80, 0, 4242 } });
	if (how == END_SYSCALLS && i > 5)
		add(e, "syscall",
		    (struct tep_ev){ .exe = w,
			.pid = 4242,
			.label = 0xb02,
			.op = 0,
			.events = 2 });
}

static void
inj_vanish_kill(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_KILL);
}

static void
inj_vanish_oom(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_OOM);
}

static void
inj_vanish_segv(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_SEGV);
}

static void
inj_vanish_exit(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_EXIT);
}

static void
inj_vanish_hang(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_NONE);
}

static void
inj_vanish_alive(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 1000, END_SYSCALLS);
}

static void
inj_vanish_young(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 4, 1000, END_KILL);
}

static void
inj_vanish_small(struct tep_epoch *e, unsigned i)
{
	worker(e, i, 0, 20, END_KILL);
}

/* ---- the table ---- */

/* What a case must find; all zero: nothing. */
struct rwant {
	int rule; /* rule of every finding; 0: no finding */
	unsigned count; /* findings */
	unsigned at; /* epoch the first finding is made at */
	unsigned from; /* epoch its range starts at */
	const char *label;
	const char *vital; /* NULL: not checked */
	unsigned severity; /* the highest of its findings; 0: not checked */
	const char *text; /* in the first finding's text; NULL: not checked */
};

/*
 * A case: its name, what it injects into the background and for how many
 * epochs (0 .. nepochs-1), then by name the background variations, the
 * options and what it must find.
 */
struct rcase {
	const char *name;
	void (*inject)(struct tep_epoch *e, unsigned i);
	unsigned nepochs;
	unsigned bg; /* BG_* */
	const char *kv[5]; /* options, NULL-terminated pairs */
	struct rwant want;
};

#define NONE \
	{ \
		0 \
	} /* no finding */
#define WARN VITALS_SEV_WARN
#define INFO VITALS_SEV_INFO
#define CRIT VITALS_SEV_CRIT

/* clang-format off */
static const struct rcase cases[] = {
	{ "clean background", inj_none, 12, .want = NONE },
	{ "clean, no kmem_free or cache", inj_none, 12,
	    .bg = BG_NO_KFREE | BG_NO_CACHE, .want = NONE },
	/* #1 */
	{ "busy loop", inj_busy, 6,
	    .want = { 1, 2, 3, 3, "/usr/bin/spin", "cpu", WARN,
		"had 75% of CPU samples but caused 1.0% of cache misses" } },
	{ "busy loop, cache misses", inj_busy_cache, 6, .want = NONE },
	{ "busy loop, in the kernel", inj_busy_kernel, 6, .want = NONE },
	{ "busy loop, idle system", inj_busy, 6, .kv = { "cpu_busy", "100000" },
	    .want = NONE },
	{ "busy loop, high_share", inj_busy, 6, .kv = { "high_share", "0.8" },
	    .want = NONE },
	/* #2 */
	{ "kmem leak", inj_leak_kmem, 10,
	    .want = { 2, 1, 6, 2, "/usr/bin/leaky", "kmem", WARN,
		"took at least 400 pages net of frees in each of the last "
		"5 epochs (2000 in all) while free memory fell by 400.0 "
		"MiB, from 3.8 GiB to 3.4 GiB" } },
	{ "kmem leak, leak_epochs 3", inj_leak_kmem, 10,
	    .kv = { "leak_epochs", "3" },
	    .want = { 2, 1, 4, 2, "/usr/bin/leaky", "kmem", WARN,
		"in each of the last 3 epochs" } },
	{ "kmem leak that stops", inj_leak_short, 10, .want = NONE },
	{ "kmem leak, small", inj_leak_small, 10, .want = NONE },
	{ "kmem leak, small, leak_pages 200", inj_leak_small, 10,
	    .kv = { "leak_pages", "200" },
	    .want = { 2, 1, 6, 2, "/usr/bin/leaky" } },
	{ "kmem of a parent that forks", inj_kmem_forker, 10, .want = NONE },
	{ "kmem of the page cache a reader fills", inj_kmem_page_cache, 10,
	    .want = NONE },
	{ "kmem leak, free memory rising", inj_leak_rising, 10, .want = NONE },
	/*
	 * Gross allocation must rise over the epochs before the window:
	 * 500 against 0, 0 (epoch 6), 0, 0, 500 (7) and 0, 0, 500, 500 (8),
	 * not against 0, 0, 500, 500, 500 (9).
	 */
	{ "kmem without kmem_free", inj_leak_kmem_gross, 10, .bg = BG_NO_KFREE,
	    .want = { 2, 1, 6, 2, "/usr/bin/leaky", "kmem", WARN,
		"took at least 500 pages allocated in each" } },
	{ "kmem without kmem_free, steady free memory",
	    inj_leak_kmem_gross_steady, 10, .bg = BG_NO_KFREE, .want = NONE },
	{ "umem leak", inj_leak_umem, 10, .bg = BG_NO_KFREE,
	    .want = { 2, 1, 6, 2, "/usr/bin/leaky", "umem", WARN,
		"took at least 1000 page faults in each of the last 5 "
		"epochs (5000 in all, up from 0 per epoch before) while "
		"free memory fell" } },
	{ "umem faults at a steady rate, free memory falling",
	    inj_umem_busy_falling, 10, .want = NONE },
	{ "umem faults, steady free memory", inj_leak_umem_steady, 10,
	    .want = NONE },
	/* #3 */
	{ "unsatisfied I/O", inj_io, 6,
	    .want = { 3, 1, 4, 4, "/usr/bin/dd", "diskio", CRIT,
		"2 sampled disk requests of /usr/bin/dd completed short "
		"or with an error (dev 8:16 sector 2048, dev 8:16 sector "
		"4096): suspect bad blocks" } },
	{ "unsatisfied I/O, io_errors 3", inj_io, 6, .kv = { "io_errors", "3" },
	    .want = NONE },
	{ "satisfied I/O", inj_io_ok, 6, .want = NONE },
	/* #4 */
	{ "kernel bottleneck, sched", inj_kernel, 5,
	    .want = { 4, 1, 3, 3, "kswapd0", "cpu", INFO,
		"74% of CPU samples were at kernel PCs (most in kswapd0, "
		"at shrink_node) while run-queue delay was 1.70 s and "
		"lock wait 50.0 ms per 60 s" } },
	{ "kernel bottleneck, lock", inj_kernel_lock, 5,
	    .want = { 4, 1, 3, 3, "kswapd0", "cpu", INFO,
		"lock wait 2.05 s" } },
	{ "kernel busy, nobody waits", inj_kernel_quiet, 5, .want = NONE },
	{ "kernel not dominant", inj_kernel_small, 5, .want = NONE },
	{ "kernel bottleneck, kernel_share 0.8", inj_kernel, 5,
	    .kv = { "kernel_share", "0.8" }, .want = NONE },
	/* #5 */
	{ "blocking with diskio", inj_block_disk, 7,
	    .want = { 5, 1, 5, 5, "/usr/sbin/sshd", "blocking", INFO,
		"/usr/sbin/sshd was blocked 3.00 s per 60 s, up from 7% "
		"of that, and rising with it: diskio (5.0 MiB)" } },
	{ "blocking with diskio, lasting", inj_block_disk_lasting, 7,
	    .want = { 5, 2, 5, 5, "/usr/sbin/sshd", "blocking", WARN,
		"seen once: a warning if it lasts" } },
	{ "blocking, block_share 0.1", inj_block_disk_lasting, 7,
	    .kv = { "block_share", "0.1" }, .want = NONE },
	{ "blocking with lock", inj_block_lock, 7,
	    .want = { 5, 1, 5, 5, "/usr/sbin/sshd", "blocking", INFO,
		"rising with it: lock (500.0 ms)" } },
	{ "blocking with socket", inj_block_socket, 7,
	    .want = { 5, 1, 5, 5, "/usr/sbin/sshd", "blocking", INFO,
		"rising with it: socket (64.0 KiB)" } },
	{ "blocking alone", inj_block_alone, 7,
	    .want = { 5, 1, 5, 5, "/usr/sbin/sshd", "blocking", INFO,
		"neither diskio, lock nor socket rose with it; blocking "
		"site futex_wait_queue" } },
	{ "blocking, steady", inj_block_steady, 7, .want = NONE },
	{ "blocking, below block_high", inj_block_small, 7, .want = NONE },
	{ "blocking, rise 20", inj_block_disk, 7, .kv = { "rise", "20" },
	    .want = NONE },
	/* #6 */
	{ "swapping", inj_swap, 3,
	    .want = { 6, 2, 0, 0, "/usr/bin/hog", "umem", WARN,
		"took 20000 page faults while blocked 2.00 s and doing "
		"100.0 MiB of disk I/O per 60 s" } },
	{ "faults without I/O", inj_swap_noio, 3, .want = NONE },
	/* #7 */
	{ "held, busy CPU", inj_held, 2,
	    .want = { 7, 1, 0, 0, "/usr/bin/victim", "sched", INFO,
		"waited 2.00 s per 60 s in the run queue with 0.5% of CPU "
		"samples: held normally" } },
	/* Info once, then a warning. */
	{ "held, idle CPU", inj_held, 2, .kv = { "cpu_busy", "5000" },
	    .want = { 7, 2, 0, 0, "/usr/bin/victim", "sched", WARN,
		"held abnormally" } },
	{ "held, few samples but no idle CPU", inj_held_saturated, 2,
	    .kv = { "cpu_busy", "5000" },
	    .want = { 7, 1, 0, 0, "/usr/bin/victim", "sched", INFO,
		"held normally" } },
	{ "held, few samples, CPUs idle 40%", inj_held_idle, 2,
	    .kv = { "cpu_busy", "5000" },
	    .want = { 7, 2, 0, 0, "/usr/bin/victim", "sched", WARN,
		"held abnormally" } },
	{ "waiting but running", inj_held_cpu, 2, .want = NONE },
	{ "held, sched_high 3s", inj_held, 2, .kv = { "sched_high", "3s" },
	    .want = NONE },
	/* #8 */
	{ "syscall loop", inj_loop, 2,
	    .want = { 8, 2, 0, 0, "/usr/bin/loop", "syscall", WARN,
		"made 200000 system calls per 60 s, 100% of them system "
		"call 44 from one site (first argument 3), with 71% of "
		"CPU samples, 10.0 ms blocked and little kernel memory "
		"per call" } },
	{ "syscalls from many sites", inj_loop_spread, 1, .want = NONE },
	{ "syscall loop that blocks", inj_loop_blocked, 1, .want = NONE },
	{ "syscalls that allocate", inj_loop_kmem, 1, .want = NONE },
	{ "few syscalls", inj_loop_few, 1, .want = NONE },
	{ "few syscalls, syscall_high 40000", inj_loop_few, 1,
	    .kv = { "syscall_high", "40000" },
	    .want = { 8, 1, 0, 0, "/usr/bin/loop" } },
	/* #9 */
	{ "initialising", inj_init, 1,
	    .want = { 9, 1, 0, 0, "/usr/bin/init", "umem", INFO,
		"took 20000 page faults per 60 s with 1.0% of cache "
		"misses: it is initialising" } },
	{ "growing load", inj_load, 1,
	    .want = { 9, 1, 0, 0, "/usr/bin/init", "umem", INFO,
		"60.0% of cache misses: its load is increasing" } },
	{ "faults, middling misses", inj_grow_mid, 1, .want = NONE },
	/* #10 */
	{ "vanished, killed by a process", inj_vanish_kill, 9,
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, INFO,
		"/usr/bin/worker (pid 4242), prominent in 6 earlier "
		"epochs, left no sample in any vital: it was killed "
		"(SIGKILL from pid 1); its last system calls: 0, 1" } },
	{ "vanished, killed by the kernel", inj_vanish_oom, 9,
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, WARN,
		"left no sample in any vital: it was killed by the kernel "
		"(SIGKILL from the kernel)" } },
	{ "vanished, crashed", inj_vanish_segv, 9,
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, CRIT,
		"it crashed (SIGSEGV from pid 4242)" } },
	{ "vanished, exited", inj_vanish_exit, 9,
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, INFO,
		"it exited; its last system calls: 0, 1, 231 (exit_group)" } },
	{ "vanished, no cause", inj_vanish_hang, 9,
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, INFO,
		"no fatal signal or exit was sampled" } },
	{ "still making syscalls", inj_vanish_alive, 9, .want = NONE },
	{ "vanished young", inj_vanish_young, 9, .want = NONE },
	{ "vanished young, vanish_epochs 2", inj_vanish_young, 9,
	    .kv = { "vanish_epochs", "2" },
	    .want = { 10, 1, 6, 5, "/usr/bin/worker" } },
	{ "vanished, never prominent", inj_vanish_small, 9, .want = NONE },
	/* the thresholds not exercised above */
	{ "busy loop, low_share 0.005", inj_busy, 6,
	    .kv = { "low_share", "0.005" }, .want = NONE },
	{ "kernel bottleneck, lock_high 3s", inj_kernel_lock, 5,
	    .kv = { "lock_high", "3s" }, .want = NONE },
	{ "blocking, block_high 4s", inj_block_disk, 7,
	    .kv = { "block_high", "4s" }, .want = NONE },
	{ "blocking after a smaller rise", inj_block_spike, 7,
	    .want = { 5, 1, 5, 5, "/usr/sbin/sshd", NULL, 0,
		"blocked 1.50 s per 60 s" } },
	{ "blocking after a smaller rise, window 1", inj_block_spike, 7,
	    .kv = { "window", "1" }, .want = NONE },
	{ "swapping, umem_high 30000", inj_swap, 3,
	    .kv = { "umem_high", "30000" }, .want = NONE },
	{ "swapping, io_high 200M", inj_swap, 3, .kv = { "io_high", "200M" },
	    .want = NONE },
	{ "syscall loop that blocks, block_low 2s", inj_loop_blocked, 1,
	    .kv = { "block_low", "2s" },
	    .want = { 8, 1, 0, 0, "/usr/bin/loop", NULL, 0,
		"1.00 s blocked" } },
	{ "syscalls from many sites, loop_share 0.05", inj_loop_spread, 1,
	    .kv = { "loop_share", "0.05" },
	    .want = { 8, 1, 0, 0, "/usr/bin/loop", NULL, 0,
		"10% of them system call 44" } },
	{ "syscalls that allocate, kmem_per_call 0.05", inj_loop_kmem, 1,
	    .kv = { "kmem_per_call", "0.05" },
	    .want = { 8, 1, 0, 0, "/usr/bin/loop" } },
	{ "vanished, never prominent, vanish_share 0.005", inj_vanish_small, 9,
	    .kv = { "vanish_share", "0.005" },
	    .want = { 10, 1, 6, 5, "/usr/bin/worker", NULL, 0,
		"it was killed (SIGKILL from pid 1)" } },
	/* the rules option */
	{ "busy loop, rules 2,3", inj_busy, 6, .kv = { "rules", "2, 3" },
	    .want = NONE },
	{ "busy loop, rules #1", inj_busy, 6, .kv = { "rules", "#1" },
	    .want = { 1, 2, 3, 3, "/usr/bin/spin" } },
};
/* clang-format on */

/* Rule number in a finding's text ("... (rule #7): ..."), or 0. */
static int
rule_of(const struct vitals_finding *f)
{
	const char *p = strstr(f->text, "(rule #");

	return p != NULL ? atoi(p + 7) : 0;
}

START_TEST(patterns)
{
	const struct rcase *c = &cases[_i];
	const struct rwant *w = &c->want;
	const struct vitals_finding *f;
	struct tep_epoch *e;
	uint32_t sev;
	unsigned i;

	ck_assert_int_eq(start(c->kv), 0);
	for (i = 0; i < c->nepochs; i++) {
		e = tep_queue_next(q);
		background(e, c->bg);
		c->inject(e, i);
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
		if (i < w->at)
			ck_assert_msg(mock_nfindings() == 0,
			    "%s: finding at epoch %u: %s", c->name, i,
			    mock_finding(0)->text);
	}
	ck_assert_msg(mock_nfindings() == w->count, "%s: %u findings%s%s",
	    c->name, mock_nfindings(), mock_nfindings() ? ", first: " : "",
	    mock_nfindings() ? mock_finding(0)->text : "");
	if (!(c->bg & BG_NO_CACHE))
		ck_assert_uint_eq(mock_nlogs(), 0);
	for (i = 0; i < mock_nfindings(); i++)
		ck_assert_msg(rule_of(mock_finding(i)) == w->rule, "%s: %s",
		    c->name, mock_finding(i)->text);
	if (w->count == 0)
		return;
	f = mock_finding(0);
	ck_assert_str_eq(f->filter, "rules");
	ck_assert_uint_eq(f->start_ns, tep_start_ns(60, w->from));
	ck_assert_uint_eq(f->end_ns, tep_start_ns(60, w->at + 1));
	ck_assert_uint_eq(f->timescale_s, 60);
	ck_assert_str_eq(f->label, w->label);
	if (w->vital != NULL)
		ck_assert_str_eq(f->vital, w->vital);
	if (w->severity != 0) {
		for (i = 0, sev = 0; i < mock_nfindings(); i++)
			if (mock_finding(i)->severity > sev)
				sev = mock_finding(i)->severity;
		ck_assert_uint_eq(sev, w->severity);
	}
	if (w->text != NULL)
		ck_assert_msg(strstr(f->text, w->text) != NULL, "%s: text '%s'",
		    c->name, f->text);
}
END_TEST

/*
 * A pattern that lasts is one incident: said when it starts, not again
 * while it lasts, and its end said once, at info, with the same start.
 */
START_TEST(one_incident)
{
	const struct vitals_finding *f = NULL;
	struct tep_epoch *e;
	unsigned i, n;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 10; i++) {
		e = tep_queue_next(q);
		background(e, 0);
		inj_leak_kmem(e, i);
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
		ck_assert_uint_eq(mock_nfindings(), i < 6 ? 0 : 1);
	}
	ck_assert_uint_eq(mock_finding(0)->start_ns, tep_start_ns(60, 2));
	for (i = 10; i < 16; i++) {
		e = tep_queue_next(q);
		background(e, 0);
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	}
	/* leaky is gone too (rule #10, info): only #2's are counted. */
	for (i = 0, n = 0; i < mock_nfindings(); i++) {
		if (rule_of(mock_finding(i)) != 2)
			continue;
		f = mock_finding(i);
		n++;
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(f->severity, VITALS_SEV_INFO);
	ck_assert_uint_eq(f->start_ns, tep_start_ns(60, 2));
	ck_assert_ptr_nonnull(strstr(f->text, "no longer holds"));
}
END_TEST

/* ---- vitals missing: each rule says so once, then stays quiet ---- */

static const struct {
	unsigned bg;
	const char *rules; /* option, NULL = all */
	unsigned logs;
	const char *message; /* in one of them: the last */
} absent_cases[] = {
	{ BG_NO_CACHE, NULL, 2, "rule #9 (Memory growth) needs cache" },
	{ BG_NO_CACHE, "1", 1, "rule #1 (Busy loop) needs cache" },
	{ BG_NO_CACHE, "2, 3", 0, NULL },
};

START_TEST(absent_vitals)
{
	const char *kv[] = { "rules", absent_cases[_i].rules, NULL };
	struct tep_epoch *e;
	unsigned i;

	ck_assert_int_eq(start(absent_cases[_i].rules ? kv : NULL), 0);
	for (i = 0; i < 4; i++) {
		e = tep_queue_next(q);
		background(e, absent_cases[_i].bg);
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	}
	ck_assert_uint_eq(mock_nfindings(), 0);
	ck_assert_uint_eq(mock_nlogs(), absent_cases[_i].logs);
	if (absent_cases[_i].message != NULL)
		ck_assert_msg(
		    strstr(mock_last_log(), absent_cases[_i].message) != NULL,
		    "log '%s'", mock_last_log());
}
END_TEST

/* Only cpu: every rule but #10 says once what it lacks. */
START_TEST(cpu_only)
{
	struct tep_epoch *e;
	unsigned i;

	ck_assert_int_eq(start(NULL), 0);
	for (i = 0; i < 3; i++) {
		e = tep_queue_next(q);
		add(e, "cpu",
		    (struct tep_ev){
			.exe = "/usr/bin/web", .label = 1, .events = 2000 });
		ck_assert_int_eq(tep_queue_run(q, &vitals_plugin, st), 0);
	}
	ck_assert_uint_eq(mock_nlogs(), 9);
	ck_assert_str_eq(mock_last_log(),
	    "rule #9 (Memory growth) needs cache, umem, absent: not checked "
	    "while absent");
	ck_assert_uint_eq(mock_nfindings(), 0);
}
END_TEST

/* Values are per base epoch: 2 s of delay in 5 min is 0.4 s a minute. */
static const struct {
	uint64_t delay;
	unsigned findings;
} rollup_cases[] = {
	{ 2 * S, 0 },
	{ 10 * S, 1 },
};

START_TEST(rollup_scaled)
{
	struct tep_queue *q300 = tep_queue_new(300, 4);
	struct tep_epoch *e = tep_queue_next(q300);

	ck_assert_int_eq(start(NULL), 0);
	background(e, 0);
	add(e, "cpu",
	    (struct tep_ev){ .exe = "/usr/bin/web",
		.label = 0x100,
		.events = 8000 }); /* keep 2000 a minute */
	add(e, "sched",
	    (struct tep_ev){ .exe = "/usr/bin/victim",
		.label = 900,
		.weight = rollup_cases[_i].delay,
		.events = 40 });
	ck_assert_int_eq(tep_queue_run(q300, &vitals_plugin, st), 0);
	ck_assert_uint_eq(mock_nfindings(), rollup_cases[_i].findings);
	if (rollup_cases[_i].findings) {
		ck_assert_uint_eq(mock_finding(0)->timescale_s, 300);
		ck_assert_int_eq(rule_of(mock_finding(0)), 7);
		ck_assert_double_eq_tol(mock_finding(0)->value, 2e9, 1);
	}
	tep_queue_free(q300);
}
END_TEST

static const struct {
	const char *key, *value, *message;
} bad_cases[] = {
	{ "rules", "11", "option 'rules': '11' is not a rule number 1..10" },
	{ "rules", "0", "option 'rules': '0'" },
	{ "rules", "busy", "option 'rules': 'busy'" },
	{ "rules", "1, 3x", "option 'rules': '3x'" },
};

START_TEST(bad_options)
{
	const char *kv[] = { bad_cases[_i].key, bad_cases[_i].value, NULL };
	int rc;

	rc = start(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, bad_cases[_i].message);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "rules");
}
END_TEST

static Suite *
rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, patterns, 0, NCASES(cases));
	tcase_add_test(tc, one_incident);
	tcase_add_loop_test(tc, absent_vitals, 0, NCASES(absent_cases));
	tcase_add_test(tc, cpu_only);
	tcase_add_loop_test(tc, rollup_scaled, 0, NCASES(rollup_cases));
	tcase_add_loop_test(tc, bad_options, 0, NCASES(bad_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(rules_suite());
}
