/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of core/aggregate/group.c: warnings of several filters about
 * one exe are grouped with the first, on one host and timescale, while
 * the exe is still being reported on; nothing else is.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "testutil.h"

#define E 60000000000ULL /* one 60 s epoch */
#define T0 1700000040000000000ULL

/* One finding fed to group_note, and what it must say. */
struct step {
	const char *filter, *host, *vital, *label;
	uint32_t severity, timescale_s;
	unsigned epoch; /* made at the end of this epoch */
	unsigned from; /* its range starts at this epoch */
	int grouped; /* 1: grouped with an earlier warning */
	const char *with; /* its group's lead, when grouped */
};

#define W VITALS_SEV_WARN
#define I VITALS_SEV_INFO
#define C VITALS_SEV_CRIT

static const struct {
	const char *name;
	struct step s[8];
} cases[] = {
	{ "two filters, one exe",
	    { { "ewma", "h", "cpu", "/bin/busy", W, 60, 1, 0, 0, NULL },
		{ "diff", "h", "cpu", "/bin/busy", W, 60, 1, 0, 1,
		    "ewma cpu since" },
		{ "affinity", "h", "cpu", "/bin/busy", W, 60, 2, 1, 1,
		    "ewma cpu since" } } },
	{ "the same filter again: its own business",
	    { { "rules", "h", "blocking", "/bin/x", W, 60, 1, 0, 0, NULL },
		{ "rules", "h", "diskio", "/bin/x", W, 60, 1, 0, 0, NULL } } },
	{ "other exes, hosts, timescales",
	    { { "ewma", "h", "cpu", "/bin/a", W, 60, 1, 0, 0, NULL },
		{ "diff", "h", "cpu", "/bin/b", W, 60, 1, 0, 0, NULL },
		{ "diff", "g", "cpu", "/bin/a", W, 60, 1, 0, 0, NULL },
		{ "diff", "h", "cpu", "/bin/a", W, 300, 1, 0, 0, NULL } } },
	{ "info leads nothing, but keeps a group open",
	    { { "diff", "h", "cpu", "/bin/a", I, 60, 1, 1, 0, NULL },
		{ "ewma", "h", "cpu", "/bin/a", W, 60, 2, 1, 0, NULL },
		{ "ewma", "h", "cpu", "/bin/a", I, 60, 5, 1, 0, NULL },
		{ "diff", "h", "cpu", "/bin/a", W, 60, 8, 7, 1,
		    "ewma cpu since" } } },
	{ "a group closes after GROUP_QUIET quiet epochs",
	    { { "ewma", "h", "cpu", "/bin/a", W, 60, 1, 0, 0, NULL },
		{ "diff", "h", "cpu", "/bin/a", W, 60, 5, 4, 0, NULL } } },
	{ "no label: nothing to group by",
	    { { "ewma", "h", "cpu", NULL, W, 60, 1, 0, 0, NULL },
		{ "diff", "h", "cpu", NULL, W, 60, 1, 0, 0, NULL } } },
};

START_TEST(table)
{
	const struct step *s;
	struct vitals_finding f;
	struct group *g = group_new();
	char with[256];
	int r;

	ck_assert_ptr_nonnull(g);
	for (s = cases[_i].s; s->filter != NULL; s++) {
		memset(&f, 0, sizeof(f));
		f.start_ns = T0 + s->from * E;
		f.end_ns = T0 + (s->epoch + 1) * E;
		f.timescale_s = s->timescale_s;
		f.severity = s->severity;
		f.vital = s->vital;
		f.label = s->label;
		f.text = "x";
		with[0] = '\0';
		r = group_note(g, s->host, s->filter, &f, with, sizeof(with));
		ck_assert_msg(r == s->grouped, "%s: step %s %s: %d",
		    cases[_i].name, s->filter, s->label ? s->label : "-", r);
		if (s->with != NULL)
			ck_assert_msg(
			    strncmp(with, s->with, strlen(s->with)) == 0,
			    "%s: with '%s'", cases[_i].name, with);
	}
	group_free(g);
}
END_TEST

START_TEST(rank)
{
	ck_assert_int_lt(group_rank("rules"), group_rank("ewma"));
	ck_assert_int_lt(group_rank("threshold"), group_rank("ewma"));
	ck_assert_int_lt(group_rank("ewma"), group_rank("diff"));
	ck_assert_int_lt(group_rank("diff"), group_rank("affinity"));
	ck_assert_int_lt(group_rank("affinity"), group_rank("myfilter"));
	ck_assert_int_eq(group_rank("myfilter"), group_rank(NULL));
	group_free(NULL);
}
END_TEST

static Suite *
group_suite(void)
{
	Suite *s = suite_create("group");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, table, 0, NCASES(cases));
	tcase_add_test(tc, rank);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_run(group_suite());
}
