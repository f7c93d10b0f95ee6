/* SPDX-License-Identifier: MIT */
/*
 * What every plugin's unit test does the same way, against the mock core
 * (tests/mock_host.h): config blocks made from key/value pairs and freed,
 * the descriptor's fixed fields checked, and a bad option refused at init
 * with one message naming it and alike by --check-config.
 */
#ifndef VITALS_CONTRACT_H
#define VITALS_CONTRACT_H

#include <stdint.h>
#include <vitals/vitals.h>

/*
 * A config block of p with its defaults applied, then the NULL-terminated
 * key/value pairs of `defaults` and then of `kv` (either may be NULL); the
 * test fails if one does not parse.  The caller frees it with
 * contract_stop or mock_config_free.
 */
void *contract_config(const struct vitals_plugin *p,
    const char *const *defaults, const char *const *kv);

/*
 * Undo what a test started: p's fini on state (unless NULL), cfg freed
 * (NULL is fine) and the mock core reset.
 */
void contract_stop(const struct vitals_plugin *p, void *cfg, void *state);

/*
 * p has this ABI major, kind (VITALS_PLUGIN_*) and name, an epoch
 * callback if it is a filter, and a fini that accepts NULL.
 */
void contract_descriptor(
    const struct vitals_plugin *p, uint32_t kind, const char *name);

/*
 * init refused config block cfg: it returned rc == -EINVAL and left state
 * NULL, after exactly one vitals_error whose text holds `message`; and
 * p's check callback refuses cfg with the same message.
 */
void contract_refused(const struct vitals_plugin *p, const void *cfg, int rc,
    const void *state, const char *message);

/*
 * Start p (its context named `name`) with defaults but key = value, and
 * check it is refused as contract_refused says, with a message holding
 * `message`, or 'key' when message is NULL.  Frees what it made.
 */
void contract_bad_option(const struct vitals_plugin *p, const char *name,
    const char *key, const char *value, const char *message);

#endif
