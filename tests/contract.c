/* SPDX-License-Identifier: MIT */
/*
 * What every plugin's unit test does alike (see contract.h), on the mock
 * core.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "contract.h"
#include "mock_host.h"

static void
contract_set(const struct vitals_plugin *p, void *cfg, const char *const *kv)
{
	for (; kv != NULL && kv[0] != NULL; kv += 2)
		ck_assert_msg(mock_config_set(p, cfg, kv[0], kv[1]) == 0,
		    "option %s: '%s' does not parse", kv[0], kv[1]);
}

void *
contract_config(const struct vitals_plugin *p, const char *const *defaults,
    const char *const *kv)
{
	void *cfg = mock_config_new(p);

	ck_assert_ptr_nonnull(cfg);
	contract_set(p, cfg, defaults);
	contract_set(p, cfg, kv);
	return cfg;
}

void
contract_stop(const struct vitals_plugin *p, void *cfg, void *state)
{
	if (state != NULL)
		p->fini(state);
	mock_config_free(p, cfg);
	mock_reset();
}

void
contract_descriptor(
    const struct vitals_plugin *p, uint32_t kind, const char *name)
{
	ck_assert_uint_eq(p->abi_major, VITALS_ABI_MAJOR);
	ck_assert_uint_eq(p->kind, kind);
	ck_assert_str_eq(p->name, name);
	if (kind == VITALS_PLUGIN_FILTER)
		ck_assert_ptr_nonnull(p->epoch);
	ck_assert_ptr_nonnull(p->fini);
	p->fini(NULL);
}

void
contract_refused(const struct vitals_plugin *p, const void *cfg, int rc,
    const void *state, const char *message)
{
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_ptr_null(state);
	ck_assert_uint_eq(mock_nerrors(), 1);
	ck_assert_msg(strstr(mock_last_error(), message) != NULL,
	    "error \"%s\" does not say \"%s\"", mock_last_error(), message);
	/* --check-config refuses it alike, without starting anything. */
	ck_assert_int_eq(mock_check(p, cfg), -EINVAL);
	ck_assert_str_eq(mock_check_why(), mock_last_error());
}

void
contract_bad_option(const struct vitals_plugin *p, const char *name,
    const char *key, const char *value, const char *message)
{
	const char *kv[] = { key, value, NULL };
	void *cfg = contract_config(p, NULL, kv), *state = NULL;
	char quoted[64];
	int rc;

	rc = p->init(mock_ctx(name), cfg, &state);
	if (message == NULL) {
		snprintf(quoted, sizeof(quoted), "'%s'", key);
		message = quoted;
	}
	contract_refused(p, cfg, rc, state, message);
	mock_config_free(p, cfg);
}
