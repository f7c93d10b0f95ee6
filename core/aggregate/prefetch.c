/* SPDX-License-Identifier: MIT */
/*
 * Reading stored epochs ahead in worker threads.  Workers claim the next
 * index under a mutex, decode the file without it, and park the result in
 * a ring the caller drains in order; a full ring makes them wait, so
 * memory stays bounded by `ahead` decoded epochs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vitals/store.h>

#include "prefetch.h"

#define PREFETCH_MAX_THREADS 4

/* One place of the ring. */
struct prefetch_slot {
	struct vitals_epoch *e;
	int done; /* loaded (or failed), not taken yet */
	int rc;
	char err[512];
};

struct prefetch {
	pthread_mutex_t mu;
	pthread_cond_t ready; /* a slot was filled */
	pthread_cond_t space; /* the caller took one */
	const char *const *paths;
	size_t n;
	size_t next; /* next index to claim */
	size_t taken; /* indexes handed to the caller */
	size_t ahead; /* ring size */
	struct prefetch_slot *ring;
	int stop;
	unsigned nthreads;
	pthread_t threads[PREFETCH_MAX_THREADS];
};

/* Claim the next index, waiting for room; 0 when there is none left. */
static int
prefetch_claim(struct prefetch *p, size_t *i)
{
	int ok;

	pthread_mutex_lock(&p->mu);
	while (!p->stop && p->next < p->n && p->next - p->taken >= p->ahead)
		pthread_cond_wait(&p->space, &p->mu);
	ok = !p->stop && p->next < p->n;
	if (ok)
		*i = p->next++;
	pthread_mutex_unlock(&p->mu);
	return ok;
}

static void *
prefetch_worker(void *arg)
{
	struct prefetch *p = arg;
	struct prefetch_slot *s;
	struct vitals_epoch *e;
	char err[512];
	size_t i;
	int rc;

	while (prefetch_claim(p, &i)) {
		e = NULL;
		err[0] = '\0';
		rc = vitals_epoch_load(p->paths[i], &e, err, sizeof(err));
		pthread_mutex_lock(&p->mu);
		s = &p->ring[i % p->ahead];
		s->e = e;
		s->rc = rc;
		memcpy(s->err, err, sizeof(s->err));
		s->done = 1;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static unsigned
prefetch_ncpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1		       ? 1
	    : n > PREFETCH_MAX_THREADS ? PREFETCH_MAX_THREADS
				       : (unsigned)n;
}

struct prefetch *
prefetch_start(
    const char *const *paths, size_t n, unsigned threads, size_t ahead)
{
	struct prefetch *p;
	unsigned i;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->paths = paths;
	p->n = n;
	p->ahead = ahead ? ahead : 1;
	if ((p->ring = calloc(p->ahead, sizeof(*p->ring))) == NULL) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->space, NULL);
	threads = threads ? threads : prefetch_ncpu();
	threads =
	    threads > PREFETCH_MAX_THREADS ? PREFETCH_MAX_THREADS : threads;
	for (i = 0; i < threads && i < n; i++)
		if (pthread_create(&p->threads[p->nthreads], NULL,
			prefetch_worker, p) == 0)
			p->nthreads++;
	if (p->nthreads == 0 && n > 0) {
		prefetch_stop(p);
		return NULL;
	}
	return p;
}

int
prefetch_take(struct prefetch *p, size_t i, struct vitals_epoch **out,
    char *err, size_t errlen)
{
	struct prefetch_slot *s = &p->ring[i % p->ahead];
	int rc;

	if (i != p->taken || i >= p->n)
		return -EINVAL;
	pthread_mutex_lock(&p->mu);
	while (!s->done)
		pthread_cond_wait(&p->ready, &p->mu);
	rc = s->rc;
	*out = s->e;
	if (rc != 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", s->err);
	s->e = NULL;
	s->done = 0;
	p->taken++;
	pthread_cond_broadcast(&p->space);
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void
prefetch_stop(struct prefetch *p)
{
	size_t i;
	unsigned t;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->space);
	pthread_mutex_unlock(&p->mu);
	for (t = 0; t < p->nthreads; t++)
		pthread_join(p->threads[t], NULL);
	for (i = 0; i < p->ahead; i++)
		vitals_epoch_free(p->ring[i].e);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->space);
	pthread_mutex_destroy(&p->mu);
	free(p->ring);
	free(p);
}
