/* SPDX-License-Identifier: MIT */
/*
 * The findings of an aggregated range as `vitals findings` prints them
 * (cli/findings.c); `vitals query` prints them within its report.
 */
#ifndef VITALS_CLI_FINDINGS_H
#define VITALS_CLI_FINDINGS_H

#include <jansson.h>
#include <vitals/aggregate.h>

#include "range.h"

/* The findings of r that c asks for, under a FINDINGS heading. */
void findings_text(const struct range *c, const struct vitals_agg_result *r);

/* The findings of r that c asks for, as a new JSON array (or NULL). */
json_t *findings_json(const struct range *c, const struct vitals_agg_result *r);

#endif /* VITALS_CLI_FINDINGS_H */
