/* SPDX-License-Identifier: MIT */
/*
 * Lookups in a read-only epoch: a vital, a metric, a module.  Kept apart
 * from the reader so that unit tests of a filter can link them alone.
 */
#include <string.h>

#include <vitals/vitals.h>

/*
 * The vital called name in e, borrowed from e, or NULL.  A linear search:
 * epochs hold a dozen vitals, and one built by hand may not be sorted.
 */
const struct vitals_vital_epoch *
vitals_epoch_vital(const struct vitals_epoch *e, const char *name)
{
	uint32_t i;

	for (i = 0; e != NULL && name != NULL && i < e->nvitals; i++)
		if (e->vitals[i].name != NULL &&
		    strcmp(e->vitals[i].name, name) == 0)
			return &e->vitals[i];
	return NULL;
}

/*
 * The metric called name in e, borrowed from e, or NULL.  A binary search:
 * an epoch may hold thousands of metrics, and the engine and the decoder
 * both hand them out sorted by name.
 */
const struct vitals_metric *
vitals_epoch_metric(const struct vitals_epoch *e, const char *name)
{
	uint32_t lo = 0, hi, mid;
	int c;

	if (e == NULL || name == NULL || e->metrics == NULL)
		return NULL;
	hi = e->nmetrics;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(e->metrics[mid].name, name)) == 0)
			return &e->metrics[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The module with id in e, borrowed from e, or NULL.  A binary search: the
 * engine and the decoder both hand modules out sorted by id.
 */
const struct vitals_module *
vitals_epoch_module(const struct vitals_epoch *e, uint32_t id)
{
	uint32_t lo = 0, hi, mid;

	if (e == NULL || e->modules == NULL)
		return NULL;
	hi = e->nmodules;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (e->modules[mid].id == id)
			return &e->modules[mid];
		if (e->modules[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
