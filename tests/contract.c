/* SPDX-License-Identifier: MIT */
/*
 * The checks every plugin's unit test makes alike (see contract.h), on the
 * mock core.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "contract.h"
#include "mock_host.h"

void
contract_descriptor(const struct vitals_plugin *p, uint32_t kind,
    const char *name)
{
	ck_assert_uint_eq(p->abi_major, VITALS_ABI_MAJOR);
	ck_assert_uint_eq(p->kind, kind);
	ck_assert_str_eq(p->name, name);
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
	void *cfg = mock_config_new(p), *state = NULL;
	char quoted[64];
	int rc;

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(mock_config_set(p, cfg, key, value), 0);
	rc = p->init(mock_ctx(name), cfg, &state);
	if (message == NULL) {
		snprintf(quoted, sizeof(quoted), "'%s'", key);
		message = quoted;
	}
	contract_refused(p, cfg, rc, state, message);
	mock_config_free(p, cfg);
}
