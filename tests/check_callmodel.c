/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the callmodel filter: the model math (eq. 1 and 2, the
 * paper's worked example) called directly through filters/callmodel.h,
 * and the plugin with the mock core: train on hand-made normal epochs,
 * score normal and anomalous ones, the model file and its errors.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../filters/callmodel.h"
#include "contract.h"
#include "mock_host.h"
#include "testutil.h"

extern const struct vitals_plugin vitals_plugin;

/* ---- trees from short specs ---- */

/*
 * Add "x|y|z=N" (N units, the path's last node only) or "x|y|z" (count 1
 * on every node of the path, as a trial) under the root of t.
 */
static void
tree_put(struct callmodel_tree *t, const char *spec)
{
	char buf[256], *tok, *save = NULL, *eq;
	uint64_t n = 1;
	uint32_t id = CALLMODEL_ROOT;
	int last;

	snprintf(buf, sizeof(buf), "%s", spec);
	if ((eq = strchr(buf, '=')) != NULL) {
		*eq = '\0';
		n = strtoull(eq + 1, NULL, 10);
	}
	for (tok = strtok_r(buf, "|", &save); tok != NULL;
	     tok = strtok_r(NULL, "|", &save)) {
		last = save == NULL || *save == '\0';
		ck_assert_int_eq(callmodel_tree_add(t, id, tok,
				     eq == NULL || last ? n : 0, &id),
		    0);
	}
}

/* A tree named root with count `units` and the given paths. */
static struct callmodel_tree *
tree_make(const char *root, uint64_t units, const char *const *specs)
{
	struct callmodel_tree *t = callmodel_tree_new(root);

	ck_assert_ptr_nonnull(t);
	callmodel_tree_bump(t, CALLMODEL_ROOT, units);
	for (; specs != NULL && *specs != NULL; specs++)
		tree_put(t, *specs);
	return t;
}

/* The node at "x|y|z" under the root, or CALLMODEL_NONE. */
static uint32_t
tree_at(const struct callmodel_tree *t, const char *path)
{
	char buf[256], *tok, *save = NULL;
	uint32_t id = CALLMODEL_ROOT;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "|", &save);
	     tok != NULL && id != CALLMODEL_NONE;
	     tok = strtok_r(NULL, "|", &save))
		id = callmodel_tree_find(t, id, tok);
	return id;
}

/* ---- the paper's worked example (Figure 3, eq. 3) ---- */

/*
 * Model: a (p 1.0) calls b (0.9) and c (0.8); b calls e (0.3), e calls f.
 * Trial: a, b, c, and c calls d (new), which calls g.  Commonality
 * {a, b, c}, minimum difference {d, e} (f and g are their effects), so
 * Delta(u) = (0.0 + 0.1 + 0.2 + 1.0 + 0.3) / 5 = 0.32.
 */
static const char *const paper_model[] = { "b=90", "c=80", "b|e=27", "b|e|f=9",
	NULL };
static const char *const paper_trial[] = { "b", "c", "c|d|g", NULL };

START_TEST(paper_example)
{
	struct callmodel_tree *m = tree_make("a", 100, paper_model);
	struct callmodel_tree *t = tree_make("a", 1, paper_trial);
	struct callmodel_result r;

	ck_assert_double_eq_tol(
	    callmodel_prob(m, 0, tree_at(m, "b")), 0.9, 1e-12);
	ck_assert_double_eq_tol(
	    callmodel_prob(m, 0, tree_at(m, "c")), 0.8, 1e-12);
	ck_assert_double_eq_tol(
	    callmodel_prob(m, 0, tree_at(m, "b|e")), 0.3, 1e-12);
	ck_assert_double_eq(callmodel_prob(m, 0, CALLMODEL_ROOT), 1.0);
	callmodel_score(m, CALLMODEL_ROOT, t, CALLMODEL_ROOT, &r);
	ck_assert_uint_eq(r.neffective, 5);
	ck_assert_uint_eq(r.ncommon, 3);
	ck_assert_uint_eq(r.nnew, 1);
	ck_assert_uint_eq(r.nmissing, 1);
	/* The paper rounds to two decimals: 0.32. */
	ck_assert_double_eq(round(r.score * 100) / 100, 0.32);
	ck_assert_double_eq_tol(r.score, 0.32, 1e-12);
	/* Most suspect: the new d, then the missing e. */
	ck_assert_uint_eq(r.suspects[0].kind, CALLMODEL_NEW);
	ck_assert_str_eq(callmodel_tree_name(t, r.suspects[0].node), "d");
	ck_assert_double_eq(r.suspects[0].delta, 1.0);
	ck_assert_uint_eq(r.suspects[1].kind, CALLMODEL_MISSING);
	ck_assert_str_eq(callmodel_tree_name(m, r.suspects[1].node), "e");
	ck_assert_double_eq_tol(r.suspects[1].delta, 0.3, 1e-12);
	ck_assert_double_eq_tol(r.suspects[2].delta, 0.2, 1e-12);
	callmodel_tree_free(m);
	callmodel_tree_free(t);
}
END_TEST

/* ---- eq. 1 and 2 on small trees ---- */

static const struct {
	const char *name;
	uint64_t units;
	const char *model[6];
	const char *trial[6];
	double score; /* by hand */
	unsigned neffective;
} score_cases[] = {
	{ "identical, all certain", 10, { "x=10", "x|y=10" }, { "x|y" }, 0, 3 },
	{ "rare path taken", 10, { "x=10", "z=1" }, { "x", "z" }, 0.9 / 3, 3 },
	{ "frequent path missing", 10, { "x=10", "x|y=9" }, { "x" }, 0.9 / 3,
	    3 },
	{ "new subtree counts once", 10, { "x=10" }, { "x", "n|n1|n2" },
	    1.0 / 3, 3 },
	{ "missing subtree counts once", 10, { "x=10", "x|y=10", "x|y|z=10" },
	    { NULL }, 1.0 / 2, 2 },
	{ "half-probable paths", 4, { "x=2", "y=2" }, { "x" }, (0.5 + 0.5) / 3,
	    3 },
	{ "empty model", 1, { NULL }, { "x|y" }, 1.0 / 2, 2 },
};

START_TEST(score_table)
{
	struct callmodel_tree *m =
	    tree_make("u", score_cases[_i].units, score_cases[_i].model);
	struct callmodel_tree *t = tree_make("u", 1, score_cases[_i].trial);
	struct callmodel_result r;

	callmodel_score(m, CALLMODEL_ROOT, t, CALLMODEL_ROOT, &r);
	ck_assert_msg(fabs(r.score - score_cases[_i].score) < 1e-12,
	    "%s: score %g, expected %g", score_cases[_i].name, r.score,
	    score_cases[_i].score);
	ck_assert_uint_eq(r.neffective, score_cases[_i].neffective);
	ck_assert_uint_eq(r.ncommon + r.nnew + r.nmissing, r.neffective);
	callmodel_tree_free(m);
	callmodel_tree_free(t);
}
END_TEST

/* Learning counts units (coverage), not how often a path occurs in one. */
START_TEST(learn_coverage)
{
	const char *const u1[] = { "x|y", "x|y", "x|z", NULL };
	const char *const u2[] = { "x", NULL };
	struct callmodel_tree *m = callmodel_tree_new("");
	struct callmodel_tree *t1 = tree_make("", 0, u1);
	struct callmodel_tree *t2 = tree_make("", 0, u2);

	ck_assert_int_eq(callmodel_learn(m, 0, t1, 0), 0);
	ck_assert_int_eq(callmodel_learn(m, 0, t2, 0), 0);
	ck_assert_int_eq(callmodel_learn(m, 0, t2, 0), 0);
	ck_assert_uint_eq(callmodel_tree_count(m, 0), 3);
	ck_assert_uint_eq(callmodel_tree_count(m, tree_at(m, "x")), 3);
	ck_assert_uint_eq(callmodel_tree_count(m, tree_at(m, "x|y")), 1);
	ck_assert_double_eq_tol(
	    callmodel_prob(m, 0, tree_at(m, "x|z")), 1.0 / 3, 1e-12);
	ck_assert_uint_eq(callmodel_tree_size(m), 4);
	ck_assert_int_eq(callmodel_tree_add(m, 99, "bad", 1, NULL), -EINVAL);
	callmodel_tree_free(m);
	callmodel_tree_free(t1);
	callmodel_tree_free(t2);
}
END_TEST

static const struct {
	size_t len;
	const char *want;
} path_cases[] = {
	{ 256, "cpu: entry > do_syscall > ksys_read > vfs_read" },
	{ 32, "cpu: ... > ksys_read > vfs_read" },
	{ 22, "cpu: ... > vfs_read" },
	{ 4, "cpu" },
};

START_TEST(path_text)
{
	const char *const p[] = { "x|cpu|entry|do_syscall|ksys_read|vfs_read",
		NULL };
	struct callmodel_tree *t = tree_make("", 1, p);
	uint32_t x = tree_at(t, "x");
	char buf[256];

	callmodel_path(t, x,
	    tree_at(t, "x|cpu|entry|do_syscall|ksys_read|vfs_read"), buf,
	    path_cases[_i].len);
	ck_assert_str_eq(buf, path_cases[_i].want);
	ck_assert_uint_lt(strlen(buf), path_cases[_i].len);
	callmodel_tree_free(t);
}
END_TEST

/* ---- hand-made epochs ---- */

#define MAXS 16
#define MAXF 8
#define NFAKE 32
#define BASE_NS 1700000000000000000ULL
#define BLOCKING 0 /* vitals sorted by name */
#define CPU 1

struct fake {
	struct vitals_epoch e;
	struct vitals_vital_epoch v[2];
	struct vitals_sample s[2][MAXS];
	uint64_t k[2][MAXS][MAXF], u[2][MAXS][MAXF];
	const char *ksyms[2][MAXS][MAXF];
	char names[2][MAXS][MAXF][48];
	char exe[2][MAXS][64], comm[2][MAXS][16];
};

static struct fake fakes[NFAKE];
static const struct vitals_epoch *queue[NFAKE];
static unsigned nfake;
static char *dir, model_path[128];
static void *cfg, *st;

static struct fake *
fake_new(uint32_t timescale)
{
	struct fake *f;

	ck_assert_uint_lt(nfake, NFAKE);
	f = &fakes[nfake];
	memset(f, 0, sizeof(*f));
	f->e.host = "mockhost";
	f->e.timescale_s = timescale;
	f->e.seq = nfake;
	f->e.length_ns = (uint64_t)timescale * 1000000000ULL;
	f->e.start_ns = BASE_NS + nfake * f->e.length_ns;
	f->e.nvitals = 2;
	f->e.vitals = f->v;
	f->v[BLOCKING].name = "blocking";
	f->v[BLOCKING].unit = "ns";
	f->v[CPU].name = "cpu";
	f->v[CPU].unit = "samples";
	f->v[BLOCKING].samples = f->s[BLOCKING];
	f->v[CPU].samples = f->s[CPU];
	return f;
}

/*
 * One sample of vital v for exe ("comm=NAME" for a comm without exe) with
 * stacks written outermost first: user addresses in hex, kernel symbols
 * (a "0x..." kernel frame has no symbol).
 */
static void
sample(struct fake *f, int v, const char *exe, const char *ustack,
    const char *kstack)
{
	unsigned i = f->v[v].nsamples++, n;
	struct vitals_sample *s = &f->s[v][i];
	char buf[256], *tok, *save = NULL, *toks[MAXF];

	ck_assert_uint_lt(i, MAXS);
	if (strncmp(exe, "comm=", 5) == 0)
		snprintf(f->comm[v][i], sizeof(f->comm[v][i]), "%s", exe + 5);
	else
		snprintf(f->exe[v][i], sizeof(f->exe[v][i]), "%s", exe);
	s->exe = f->exe[v][i];
	s->comm = f->comm[v][i];
	s->count = s->weight = 1;
	snprintf(buf, sizeof(buf), "%s", ustack);
	for (n = 0, tok = strtok_r(buf, " ", &save); tok != NULL && n < MAXF;
	     tok = strtok_r(NULL, " ", &save))
		toks[n++] = tok;
	for (s->nustack = n; n > 0; n--)
		f->u[v][i][s->nustack - n] = strtoull(toks[n - 1], NULL, 16);
	s->ustack = f->u[v][i];
	snprintf(buf, sizeof(buf), "%s", kstack);
	for (n = 0, tok = strtok_r(buf, " ", &save); tok != NULL && n < MAXF;
	     tok = strtok_r(NULL, " ", &save))
		toks[n++] = tok;
	for (s->nkstack = n; n > 0; n--) {
		char *name = f->names[v][i][s->nkstack - n];

		snprintf(name, 48, "%s",
		    strncmp(toks[n - 1], "0x", 2) == 0 ? "" : toks[n - 1]);
		f->ksyms[v][i][s->nkstack - n] = name;
		f->k[v][i][s->nkstack - n] = strncmp(toks[n - 1], "0x", 2) == 0
		    ? strtoull(toks[n - 1], NULL, 16)
		    : 0xffffffff81000000ULL + 64 * n;
	}
	s->kstack = f->k[v][i];
	/* Names of the kernel frames, then of the user frames: none here. */
	ck_assert_uint_le(s->nkstack + s->nustack, MAXF);
	for (n = 0; n < s->nustack; n++)
		f->ksyms[v][i][s->nkstack + n] = NULL;
	s->ksyms = f->ksyms[v][i];
}

#define EXE_A "/usr/bin/a"
#define EXE_B "/usr/sbin/b"
#define READ_PATH "entry_SYSCALL_64 do_syscall_64+0x5c ksys_read+0x1c"
#define WRITE_PATH "entry_SYSCALL_64 do_syscall_64+0x5c ksys_write+0x10"
#define SLEEP_PATH "entry_SYSCALL_64 do_syscall_64 do_nanosleep schedule"
#define KWORKER_PATH "ret_from_fork kthread worker_thread 0xffffffff81234567"

/*
 * Normal epoch i: a reads every epoch and writes in epochs i % 10 == 3;
 * b page-faults at one user path every epoch and at a second one in
 * epochs i % 5 == 0; a kworker (comm only) blocks every epoch.
 */
static struct fake *
normal(unsigned i)
{
	struct fake *f = fake_new(60);

	sample(f, CPU, EXE_A, "", READ_PATH);
	sample(f, CPU, EXE_A, "", READ_PATH);
	if (i % 10 == 3)
		sample(f, CPU, EXE_A, "", WRITE_PATH);
	sample(f, BLOCKING, EXE_A, "", SLEEP_PATH);
	sample(f, CPU, EXE_B, "0x401000 0x401234",
	    "asm_exc_page_fault handle_mm_fault");
	if (i % 5 == 0)
		sample(f, CPU, EXE_B, "0x401000 0x401500",
		    "asm_exc_page_fault handle_mm_fault");
	sample(f, BLOCKING, "comm=kworker/0:1", "", KWORKER_PATH);
	return f;
}

/* Hand the newest fake to the filter with every fake so far as queue. */
static int
run_rc(struct fake *f)
{
	struct vitals_queue q = { .timescale_s = f->e.timescale_s };

	queue[nfake++] = &f->e;
	q.n = nfake;
	q.epochs = queue;
	return vitals_plugin.epoch(st, &q);
}

static void
run(struct fake *f)
{
	ck_assert_int_eq(run_rc(f), 0);
}

/* Start the filter with the model path and NULL-terminated pairs. */
static int
start_rc(const char *const *kv)
{
	const char *const dflt[] = { "model", model_path, NULL };
	struct vitals_ctx *ctx = mock_ctx("callmodel");

	if (cfg != NULL)
		mock_config_free(&vitals_plugin, cfg);
	cfg = contract_config(&vitals_plugin, dflt, kv);
	st = NULL;
	return vitals_plugin.init(ctx, cfg, &st);
}

static void
start(const char *const *kv)
{
	ck_assert_int_eq(start_rc(kv), 0);
}

static void
stop(void)
{
	vitals_plugin.fini(st);
	st = NULL;
}

/* Train on normal epochs 0..n-1 and write the model. */
static void
train(unsigned n)
{
	const char *kv[] = { "mode", "train", NULL };
	unsigned i;

	start(kv);
	for (i = 0; i < n; i++)
		run(normal(i));
	stop();
	ck_assert_uint_eq(mock_nfindings(), 0);
	ck_assert_int_eq(access(model_path, R_OK), 0);
}

static void
setup(void)
{
	dir = testutil_tmpdir("check_callmodel");
	snprintf(model_path, sizeof(model_path), "%s/model.json", dir);
	nfake = 0;
	cfg = st = NULL;
}

static void
teardown(void)
{
	contract_stop(&vitals_plugin, cfg, st);
	testutil_tmpdir_remove(dir);
	dir = NULL;
}

/*
 * User frames are named by their module's file and offset, or by their
 * symbol: a file's frame gets one name whatever id each run gave it.
 */
START_TEST(user_frame_names)
{
	static const struct vitals_module m1[] = { { 0, "/usr/sbin/b", "b1" } };
	static const struct vitals_module m2[] = { { 0, "/lib/libc.so.6", "" },
		{ 3, "/usr/sbin/b", "b1" } };
	const char *want[] = { EXE_B "|cpu|b+0x1234|vfs_read",
		EXE_B "|cpu|main|b+0x1234|vfs_read" };
	struct callmodel_model *m = callmodel_model_new(0, 0, 1);
	struct callmodel_tree *t;
	struct fake *f;
	unsigned r;

	ck_assert_ptr_nonnull(m);
	for (r = 0; r < 2; r++) {
		f = fake_new(60);
		nfake++;
		f->e.modules = r == 0 ? m1 : m2;
		f->e.nmodules = r == 0 ? 1 : 2;
		sample(f, CPU, EXE_B, "0x0", "vfs_read");
		f->u[CPU][0][0] = VITALS_UFRAME(r == 0 ? 0 : 3, 0x1234);
		if (r == 1) {
			/* An outer frame with a symbol, in a module not listed. */
			f->s[CPU][0].nustack = 2;
			f->u[CPU][0][1] = VITALS_UFRAME(7, 0x99);
			f->ksyms[CPU][0][2] = "main+0x10";
		}
		ck_assert_ptr_nonnull(t = callmodel_tree_new(""));
		ck_assert_int_eq(callmodel_build(t, &f->e, m, NULL, 1), 0);
		ck_assert_uint_ne(tree_at(t, want[r]), CALLMODEL_NONE);
		callmodel_tree_free(t);
	}
	callmodel_model_free(m);
	nfake = 0;
}
END_TEST

/* ---- training and scoring ---- */

START_TEST(train_writes_model)
{
	json_error_t je;
	json_t *j;
	char cmd[256];

	train(10);
	ck_assert_ptr_nonnull(j = json_load_file(model_path, 0, &je));
	ck_assert_str_eq(json_string_value(json_object_get(j, "format")),
	    "vitals-callmodel");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "version")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "epochs")), 10);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(j, "timescale_s")), 60);
	/* a, b and the kworker (named by its comm). */
	ck_assert_uint_eq(json_array_size(json_object_get(j, "exes")), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "vitals")), 2);
	json_decref(j);
	/* Nothing but the model is left in the directory. */
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * A link planted at the model's name (or where its temporary file once
 * went, "PATH.tmp.PID") is replaced, never written through: the file it
 * points to keeps its contents.
 */
START_TEST(train_over_link)
{
	char victim[600], old_tmp[700];
	struct stat sb;
	json_error_t je;
	json_t *j;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	testutil_write_file(victim, "precious");
	ck_assert_int_eq(symlink(victim, model_path), 0);
	snprintf(
	    old_tmp, sizeof(old_tmp), "%s.tmp.%ld", model_path, (long)getpid());
	ck_assert_int_eq(symlink(victim, old_tmp), 0);
	train(3);
	ck_assert_int_eq(lstat(model_path, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_ptr_nonnull(j = json_load_file(model_path, 0, &je));
	json_decref(j);
	ck_assert_ptr_null(j = json_load_file(victim, 0, &je));
	ck_assert_int_eq(stat(victim, &sb), 0);
	ck_assert_int_eq(sb.st_size, 8);
}
END_TEST

/* The model has the probabilities the normal epochs imply. */
START_TEST(train_probabilities)
{
	struct callmodel_model *m = NULL;
	char err[256];
	uint32_t a, b;

	train(10);
	ck_assert_int_eq(
	    callmodel_model_load(model_path, &m, err, sizeof(err)), 0);
	a = tree_at(m->tree, EXE_A);
	b = tree_at(m->tree, EXE_B);
	ck_assert_uint_ne(a, CALLMODEL_NONE);
	ck_assert_uint_eq(callmodel_tree_count(m->tree, a), 10);
	/* Offsets are dropped by default; paths run outermost first. */
	ck_assert_double_eq_tol(
	    callmodel_prob(m->tree, a,
		tree_at(m->tree,
		    EXE_A "|cpu|entry_SYSCALL_64|do_syscall_64|ksys_write")),
	    0.1, 1e-12);
	ck_assert_double_eq_tol(
	    callmodel_prob(
		m->tree, b, tree_at(m->tree, EXE_B "|cpu|0x401000|0x401500")),
	    0.2, 1e-12);
	ck_assert_uint_ne(tree_at(m->tree,
			      "kworker/0:1|blocking|ret_from_fork|"
			      "kthread|worker_thread|0xffffffff81234567"),
	    CALLMODEL_NONE);
	callmodel_model_free(m);
}
END_TEST

/* Anomalies made from a normal epoch (index 11: no rare path). */
static void
anomaly_none(struct fake *f)
{
	(void)f;
}

static void
anomaly_rare_paths(struct fake *f)
{
	sample(f, CPU, EXE_A, "", WRITE_PATH);
	sample(f, CPU, EXE_B, "0x401000 0x401500",
	    "asm_exc_page_fault handle_mm_fault");
}

static void
anomaly_new_path(struct fake *f)
{
	sample(f, BLOCKING, EXE_B, "0x401000 0x401777",
	    "entry_SYSCALL_64 do_syscall_64 io_schedule");
}

/* a writes instead of reading: a frequent path missing, a rare one taken. */
static void
anomaly_swap(struct fake *f)
{
	f->v[CPU].nsamples = 0;
	sample(f, CPU, EXE_A, "", WRITE_PATH);
	sample(f, CPU, EXE_B, "0x401000 0x401234",
	    "asm_exc_page_fault handle_mm_fault");
}

/* b stops faulting and only blocks somewhere new (a hang). */
static void
anomaly_hang(struct fake *f)
{
	f->v[CPU].nsamples = 0;
	sample(f, CPU, EXE_A, "", READ_PATH);
	sample(f, BLOCKING, EXE_B, "", "entry_SYSCALL_64 futex_wait");
}

static void
anomaly_unknown(struct fake *f)
{
	sample(f, CPU, "/opt/new", "", "entry_SYSCALL_64 ksys_read");
}

static void
anomaly_hang_swap(struct fake *f)
{
	f->v[CPU].nsamples = 0;
	sample(f, CPU, EXE_A, "", WRITE_PATH);
	sample(f, BLOCKING, EXE_B, "", "entry_SYSCALL_64 futex_wait");
}

/*
 * Scores by hand.  a normally has 11 effective nodes (a, cpu + 3 frames
 * of the read path, blocking + 4 frames of the sleep path); b has 6 nodes
 * (b, cpu, 2 user and 2 kernel frames) plus its rare 0x401500 (p 0.2).
 */
static const struct {
	const char *name;
	void (*make)(struct fake *);
	const char *min_score;
	unsigned nfindings;
	const char *first; /* label of the first finding */
	double score; /* of the first finding, by hand; < 0 = not checked */
	const char *vital; /* of the first finding */
	const char *text; /* in the first finding's text */
	const char *second; /* label of the second finding */
} scene_cases[] = {
	{ "normal", anomaly_none, "0.12", 0, NULL, 0, NULL, NULL, NULL },
	{ "normal, rare paths taken", anomaly_rare_paths, "0.12", 0, NULL, 0,
	    NULL, NULL, NULL },
	/* b: 0.2 missing + new blocking vital node 1, over 8 nodes. */
	{ "new path", anomaly_new_path, "0.12", 1, EXE_B, 1.2 / 8, "blocking",
	    "new path blocking: 0x401000 > 0x401777 > entry_SYSCALL_64 > "
	    "do_syscall_64 > io_schedule (1 samples)",
	    NULL },
	/* a: ksys_read missing (1.0) and ksys_write taken (0.9) over 11. */
	{ "changed frequencies", anomaly_swap, "0.12", 1, EXE_A, 1.9 / 11,
	    "cpu",
	    "missing path cpu: entry_SYSCALL_64 > do_syscall_64 > ksys_read "
	    "(p 1.00); rare path cpu: entry_SYSCALL_64 > do_syscall_64 > "
	    "ksys_write (p 0.10, 1 samples)",
	    NULL },
	/* b: cpu missing (1.0), blocking new (1.0), b itself 0. */
	{ "hang, default min_score", anomaly_hang, NULL, 1, EXE_B, 2.0 / 3,
	    "cpu",
	    "call-path score 0.67 over 3 paths (1 new, 1 missing); "
	    "missing path cpu: 0x401000 > 0x401234 > asm_exc_page_fault > "
	    "handle_mm_fault (p 1.00); new path blocking: entry_SYSCALL_64 > "
	    "futex_wait (1 samples)",
	    NULL },
	{ "unknown exe", anomaly_unknown, NULL, 1, "/opt/new", 1.0, "cpu",
	    "exe absent from the model (10 normal epochs); busiest path cpu: "
	    "entry_SYSCALL_64 > ksys_read (1 samples)",
	    NULL },
	{ "ranking", anomaly_hang_swap, "0.12", 2, EXE_B, 2.0 / 3, "cpu", NULL,
	    EXE_A },
};

START_TEST(scenes)
{
	const char *kv[] = { "min_score", scene_cases[_i].min_score, NULL };
	const struct vitals_finding *f;
	struct fake *e;

	train(10);
	start(scene_cases[_i].min_score != NULL ? kv : NULL);
	e = normal(11);
	scene_cases[_i].make(e);
	run(e);
	ck_assert_msg(mock_nfindings() == scene_cases[_i].nfindings,
	    "%s: %u findings, first: %s", scene_cases[_i].name,
	    mock_nfindings(), mock_nfindings() ? mock_finding(0)->text : "");
	if (scene_cases[_i].nfindings == 0)
		return;
	f = mock_finding(0);
	ck_assert_str_eq(f->filter, "callmodel");
	ck_assert_str_eq(f->label, scene_cases[_i].first);
	ck_assert_str_eq(f->vital, scene_cases[_i].vital);
	ck_assert_double_eq_tol(f->score, scene_cases[_i].score, 1e-12);
	ck_assert_double_eq(f->value, f->score);
	ck_assert_uint_eq(f->start_ns, e->e.start_ns);
	ck_assert_uint_eq(f->end_ns, e->e.start_ns + 60000000000ULL);
	ck_assert_uint_eq(f->timescale_s, 60);
	ck_assert_ptr_nonnull(strstr(f->text, scene_cases[_i].first));
	if (scene_cases[_i].text != NULL)
		ck_assert_msg(strstr(f->text, scene_cases[_i].text) != NULL,
		    "%s: text '%s' lacks '%s'", scene_cases[_i].name, f->text,
		    scene_cases[_i].text);
	if (scene_cases[_i].second != NULL) {
		ck_assert_str_eq(
		    mock_finding(1)->label, scene_cases[_i].second);
		ck_assert_double_lt(mock_finding(1)->score, f->score);
	}
}
END_TEST

/* A normal epoch scores at most what the model expects of it. */
START_TEST(expected_score)
{
	const char *kv[] = { "min_score", "0", NULL };
	unsigned i;

	train(10);
	start(kv);
	run(normal(11));
	ck_assert_uint_eq(mock_nfindings(), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_double_ge(mock_finding(i)->expected, 0);
		ck_assert_double_le(mock_finding(i)->expected, 0.5);
	}
	/* b misses a path of p 0.2, a one of p 0.1, kworker nothing. */
	ck_assert_str_eq(mock_finding(0)->label, EXE_B);
	ck_assert_double_eq_tol(mock_finding(0)->score, 0.2 / 7, 1e-12);
	ck_assert_double_eq_tol(mock_finding(0)->expected, 0.32 / 9, 1e-12);
	ck_assert_str_eq(mock_finding(1)->label, EXE_A);
	ck_assert_double_eq_tol(mock_finding(1)->score, 0.1 / 11, 1e-12);
	ck_assert_double_eq_tol(mock_finding(1)->expected, 0.18 / 11, 1e-12);
	ck_assert_str_eq(mock_finding(2)->label, "kworker/0:1");
	ck_assert_double_eq(mock_finding(2)->score, 0);
}
END_TEST

/* Findings otherwise: /opt/new (1.0), b (2/3), a (1.9/11). */
static const struct {
	const char *key, *value;
	unsigned nfindings;
	const char *first;
	double score;
} option_cases[] = {
	{ "top", "1", 1, "/opt/new", 1.0 },
	{ "unknown", "false", 2, EXE_B, 2.0 / 3 },
	/* Only blocking: /opt/new and a's cpu swap unseen, b = (0 + 1) / 2. */
	{ "vitals", "blocking", 1, EXE_B, 0.5 },
	{ "min_score", "0.7", 1, "/opt/new", 1.0 },
	{ "min_score", "0.6", 2, "/opt/new", 1.0 },
};

/* The hang of b, a's swap and an unknown exe in one epoch. */
START_TEST(score_options)
{
	const char *kv[] = { "min_score", "0.12", option_cases[_i].key,
		option_cases[_i].value, NULL };
	struct fake *e;

	train(10);
	start(kv);
	e = normal(11);
	anomaly_hang_swap(e);
	anomaly_unknown(e);
	run(e);
	ck_assert_uint_eq(mock_nfindings(), option_cases[_i].nfindings);
	ck_assert_str_eq(mock_finding(0)->label, option_cases[_i].first);
	ck_assert_double_eq_tol(
	    mock_finding(0)->score, option_cases[_i].score, 1e-12);
}
END_TEST

/* An exe name that is not UTF-8 still gives a valid model file. */
START_TEST(non_utf8_exe)
{
	const char *kv[] = { "mode", "train", NULL };
	struct callmodel_model *m = NULL;
	struct fake *e;
	char err[256];
	unsigned i;

	start(kv);
	for (i = 0; i < 3; i++) {
		e = normal(i);
		sample(
		    e, CPU, "/opt/caf\xe9", "", "entry_SYSCALL_64 ksys_read");
		run(e);
	}
	stop();
	start(NULL);
	e = normal(11);
	sample(e, CPU, "/opt/caf\xe9", "", "entry_SYSCALL_64 ksys_read");
	run(e);
	/* Known (an unknown exe would score 1), under its sanitized name. */
	ck_assert_uint_eq(mock_nfindings(), 0);
	ck_assert_int_eq(
	    callmodel_model_load(model_path, &m, err, sizeof(err)), 0);
	ck_assert_uint_ne(tree_at(m->tree, "/opt/caf?"), CALLMODEL_NONE);
	callmodel_model_free(m);
}
END_TEST

/* Coverage depends on the unit's length: other timescales are skipped. */
START_TEST(other_timescale)
{
	struct fake *e;

	train(10);
	start(NULL);
	e = fake_new(300);
	sample(e, CPU, "/opt/new", "", "x");
	sample(e, BLOCKING, EXE_B, "", "entry_SYSCALL_64 futex_wait");
	run(e);
	ck_assert_uint_eq(mock_nfindings(), 0);
	e = fake_new(60);
	sample(e, CPU, "/opt/new", "", "x");
	run(e);
	ck_assert_uint_eq(mock_nfindings(), 1);
}
END_TEST

/* ---- the model file ---- */

/* Every node of a is in b with the same count, and the sizes match. */
static void
same_tree(const struct callmodel_tree *a, uint32_t x,
    const struct callmodel_tree *b, uint32_t y)
{
	uint32_t c, d;

	ck_assert_uint_eq(
	    callmodel_tree_count(a, x), callmodel_tree_count(b, y));
	for (c = callmodel_tree_child(a, x); c != CALLMODEL_NONE;
	     c = callmodel_tree_sibling(a, c)) {
		d = callmodel_tree_find(b, y, callmodel_tree_name(a, c));
		ck_assert_msg(d != CALLMODEL_NONE, "node %s lost",
		    callmodel_tree_name(a, c));
		same_tree(a, c, b, d);
	}
}

START_TEST(model_round_trip)
{
	struct callmodel_model *m, *back = NULL;
	struct callmodel_tree *t;
	char err[256];
	unsigned i;

	ck_assert_ptr_nonnull(m = callmodel_model_new(2, 1, 0));
	for (i = 0; i < 12; i++) {
		ck_assert_ptr_nonnull(t = callmodel_tree_new(""));
		ck_assert_int_eq(
		    callmodel_build(t, &normal(i)->e, m, NULL, 1), 0);
		ck_assert_int_eq(callmodel_learn(m->tree, 0, t, 0), 0);
		callmodel_tree_free(t);
	}
	m->timescale_s = 60;
	ck_assert_int_eq(
	    callmodel_model_save(m, model_path, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    callmodel_model_load(model_path, &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(
	    callmodel_tree_size(back->tree), callmodel_tree_size(m->tree));
	same_tree(m->tree, 0, back->tree, 0);
	ck_assert_uint_eq(back->depth, 2);
	ck_assert_int_eq(back->offsets, 1);
	ck_assert_int_eq(back->ustack, 0);
	ck_assert_uint_eq(back->timescale_s, 60);
	ck_assert_uint_eq(back->nvitals, 2);
	ck_assert(callmodel_model_has_vital(back, "blocking"));
	/* Two outermost frames, offsets kept, no user frames. */
	ck_assert_uint_ne(tree_at(back->tree,
			      EXE_A "|cpu|entry_SYSCALL_64|"
				    "do_syscall_64+0x5c"),
	    CALLMODEL_NONE);
	ck_assert_uint_eq(tree_at(back->tree,
			      EXE_A "|cpu|entry_SYSCALL_64|"
				    "do_syscall_64+0x5c|ksys_read+0x1c"),
	    CALLMODEL_NONE);
	ck_assert_uint_ne(tree_at(back->tree,
			      EXE_B "|cpu|asm_exc_page_fault|"
				    "handle_mm_fault"),
	    CALLMODEL_NONE);
	callmodel_model_free(m);
	callmodel_model_free(back);
}
END_TEST

/*
 * The paper's example end to end, from a hand-written model file in the
 * documented format: exe a (p 1) has blocking (0.9) and cpu (0.8) paths,
 * blocking -> schedule (0.3) -> f.  The epoch has a blocking sample with
 * no stack and a cpu one with the new path cpu -> d -> g.
 */
START_TEST(model_file_by_hand)
{
	const struct vitals_finding *f;
	struct fake *e;

	testutil_write_file(model_path,
	    "{\"format\": \"vitals-callmodel\", \"version\": 1, \"epochs\": "
	    "100,\n"
	    " \"timescale_s\": 60, \"depth\": 0, \"offsets\": false,\n"
	    " \"ustack\": true, \"vitals\": [\"blocking\", \"cpu\"],\n"
	    " \"exes\": [{\"exe\": \"/bin/a\", \"units\": 100, \"nodes\": [\n"
	    "   [\"blocking\", -1, 90], [\"cpu\", -1, 80],\n"
	    "   [\"schedule\", 0, 27], [\"f\", 2, 9]]}]}\n");
	start(NULL);
	e = fake_new(60);
	sample(e, BLOCKING, "/bin/a", "", "");
	sample(e, CPU, "/bin/a", "", "d g");
	run(e);
	f = mock_finding(0);
	ck_assert_ptr_null(f); /* 0.32 < the default 0.5 */
	stop();
	{
		const char *kv[] = { "min_score", "0.3", NULL };

		start(kv);
	}
	run(e);
	ck_assert_uint_eq(mock_nfindings(), 1);
	f = mock_finding(0);
	ck_assert_double_eq(round(f->score * 100) / 100, 0.32);
	ck_assert_str_eq(f->vital, "cpu");
	ck_assert_ptr_nonnull(strstr(f->text,
	    "score 0.32 over 5 paths "
	    "(1 new, 1 missing); new path cpu: d > g (1 samples); missing path "
	    "blocking: schedule > f (p 0.30)"));
}
END_TEST

static const struct {
	const char *name;
	const char *text; /* file contents; NULL = no file */
	int rc;
	const char *why; /* in the error */
} bad_cases[] = {
	{ "missing", NULL, -ENOENT, "No such file" },
	{ "empty", "", -EBADMSG, "line" },
	{ "not JSON", "{\"format\": ", -EBADMSG, "line" },
	{ "other format", "{\"format\": \"x\", \"version\": 1}", -EBADMSG,
	    "format" },
	{ "version 2", "{\"format\": \"vitals-callmodel\", \"version\": 2}",
	    -EBADMSG, "version" },
	{ "no exes",
	    "{\"format\": \"vitals-callmodel\", \"version\": 1, "
	    "\"epochs\": 3, \"timescale_s\": 0, \"depth\": 0, \"offsets\": "
	    "false, \"ustack\": true, \"vitals\": []}",
	    -EBADMSG, "\"exes\"" },
#define HDR \
	"{\"format\": \"vitals-callmodel\", \"version\": 1, \"epochs\": " \
	"3, \"timescale_s\": 0, \"depth\": 0, \"offsets\": false, " \
	"\"ustack\": " \
	"true, \"vitals\": [\"cpu\"], \"exes\": "
	{ "units above epochs",
	    HDR "[{\"exe\": \"x\", \"units\": 4, "
		"\"nodes\": []}]}",
	    -EBADMSG, "exes[0]" },
	{ "forward parent",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": "
		"[[\"cpu\", 1, 1], [\"f\", -1, 1]]}]}",
	    -EBADMSG, "exes[0].nodes[0]: parent 1" },
	{ "count above parent",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": "
		"[[\"cpu\", -1, 2], [\"f\", 0, 3]]}]}",
	    -EBADMSG, "exes[0].nodes[1]: count 3" },
	{ "zero count",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": "
		"[[\"cpu\", -1, 0]]}]}",
	    -EBADMSG, "count 0" },
	{ "duplicate node",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": "
		"[[\"cpu\", -1, 2], [\"cpu\", -1, 1]]}]}",
	    -EBADMSG, "duplicate" },
	{ "duplicate exe",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": []},"
		"{\"exe\": \"x\", \"units\": 1, \"nodes\": []}]}",
	    -EBADMSG, "exes[1]: duplicate exe" },
	{ "bad node",
	    HDR "[{\"exe\": \"x\", \"units\": 3, \"nodes\": "
		"[[\"cpu\", -1]]}]}",
	    -EBADMSG, "[name, parent, count]" },
#undef HDR
};

START_TEST(bad_model_files)
{
	char want[256];

	if (bad_cases[_i].text != NULL)
		testutil_write_file(model_path, bad_cases[_i].text);
	ck_assert_int_eq(start_rc(NULL), bad_cases[_i].rc);
	ck_assert_ptr_null(st);
	ck_assert_uint_eq(mock_nerrors(), 1);
	snprintf(want, sizeof(want), "model %s: ", model_path);
	ck_assert_msg(strstr(mock_last_error(), want) != NULL &&
		strstr(mock_last_error(), bad_cases[_i].why) != NULL,
	    "%s: error '%s'", bad_cases[_i].name, mock_last_error());
	/* The file is init's to read: --check-config takes the options. */
	ck_assert_int_eq(mock_check(&vitals_plugin, cfg), 0);
}
END_TEST

/* A FIFO named as the model is refused at once, never read forever. */
START_TEST(fifo_model_file)
{
	ck_assert_int_eq(mkfifo(model_path, 0600), 0);
	ck_assert_int_eq(start_rc(NULL), -EINVAL);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(mock_last_error(), "not a regular file") != NULL,
	    "error '%s'", mock_last_error());
}
END_TEST

START_TEST(train_needs_writable_path)
{
	const char *kv[] = { "mode", "train", NULL };

	snprintf(model_path, sizeof(model_path), "%s/nodir/model.json", dir);
	ck_assert_int_lt(start_rc(kv), 0);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(mock_last_error(), model_path));
}
END_TEST

/*
 * The model cannot be written at the end (its directory went away): fini
 * reports it with vitals_error, naming the file, so the core can fail
 * the command; no model is left behind.
 */
START_TEST(train_save_fails)
{
	const char *kv[] = { "mode", "train", NULL };
	char sub[96], want[192];
	unsigned i;

	snprintf(sub, sizeof(sub), "%s/gone", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(model_path, sizeof(model_path), "%s/model.json", sub);
	start(kv);
	for (i = 0; i < 3; i++)
		run(normal(i));
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_uint_eq(mock_nerrors(), 0);
	stop();
	ck_assert_uint_eq(mock_nerrors(), 1);
	snprintf(want, sizeof(want), "model %s not written: ", model_path);
	ck_assert_msg(strstr(mock_last_error(), want) != NULL, "error '%s'",
	    mock_last_error());
	ck_assert_int_ne(access(model_path, F_OK), 0);
}
END_TEST

START_TEST(train_nothing_no_file)
{
	const char *kv[] = { "mode", "train", NULL };

	start(kv);
	stop();
	ck_assert_int_ne(access(model_path, F_OK), 0);
	ck_assert_ptr_nonnull(strstr(mock_last_log(), "not written"));
}
END_TEST

static const struct {
	const char *key, *value;
	const char *why;
} opt_cases[] = {
	{ "mode", "learn", "'mode'" },
	{ "model", "", "'model'" },
	{ "min_score", "1.5", "'min_score'" },
	{ "top", "0", "'top'" },
	{ "depth", "-1", "'depth'" },
};

START_TEST(bad_options)
{
	const char *kv[] = { opt_cases[_i].key, opt_cases[_i].value, NULL };
	int rc;

	train(2);
	rc = start_rc(kv);
	contract_refused(&vitals_plugin, cfg, rc, st, opt_cases[_i].why);
}
END_TEST

START_TEST(descriptor)
{
	contract_descriptor(&vitals_plugin, VITALS_PLUGIN_FILTER, "callmodel");
}
END_TEST

static Suite *
callmodel_suite(void)
{
	Suite *s = suite_create("callmodel");
	TCase *math = tcase_create("math"), *tc = tcase_create("plugin");

	tcase_add_test(math, paper_example);
	tcase_add_loop_test(math, score_table, 0, NCASES(score_cases));
	tcase_add_test(math, learn_coverage);
	tcase_add_loop_test(math, path_text, 0, NCASES(path_cases));
	tcase_add_test(math, user_frame_names);
	suite_add_tcase(s, math);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, train_writes_model);
	tcase_add_test(tc, train_over_link);
	tcase_add_test(tc, train_probabilities);
	tcase_add_loop_test(tc, scenes, 0, NCASES(scene_cases));
	tcase_add_test(tc, expected_score);
	tcase_add_loop_test(tc, score_options, 0, NCASES(option_cases));
	tcase_add_test(tc, non_utf8_exe);
	tcase_add_test(tc, other_timescale);
	tcase_add_test(tc, model_round_trip);
	tcase_add_test(tc, model_file_by_hand);
	tcase_add_loop_test(tc, bad_model_files, 0, NCASES(bad_cases));
	tcase_add_test(tc, fifo_model_file);
	tcase_add_test(tc, train_needs_writable_path);
	tcase_add_test(tc, train_save_fails);
	tcase_add_test(tc, train_nothing_no_file);
	tcase_add_loop_test(tc, bad_options, 0, NCASES(opt_cases));
	tcase_add_test(tc, descriptor);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(callmodel_suite());
}
