/* SPDX-License-Identifier: MIT */
/*
 * HOOK(metrics): the Prometheus exposition, outputs/http/metrics.[ch], is
 * written on its own branch.  Until it is merged, the http plugin and
 * `vitals serve` are built with -DHTTP_NO_METRICS and these stand-ins:
 * /metrics answers 404.  Delete this file, and the define and the include
 * in http.c and cli/serve.c, when metrics.[ch] lands (Makefile.am:
 * HTTP_METRICS_SOURCES).
 */
#ifndef VITALS_HTTP_NOMETRICS_H
#define VITALS_HTTP_NOMETRICS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <vitals/vitals.h>

struct metrics;

static inline struct metrics *
metrics_new(uint32_t topk)
{
	static char none;

	(void)topk;
	return (struct metrics *)(void *)&none;
}

static inline void
metrics_free(struct metrics *m)
{
	(void)m;
}

static inline int
metrics_epoch(struct metrics *m, const struct vitals_epoch *e)
{
	(void)m;
	(void)e;
	return 0;
}

static inline int
metrics_render(const struct metrics *m, char **out, size_t *len)
{
	(void)m;
	(void)out;
	(void)len;
	return -ENOSYS;
}

#endif /* VITALS_HTTP_NOMETRICS_H */
