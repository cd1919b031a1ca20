/* par.c - see par.h. */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct par_slot {
	void (*fn)(void *arg, int worker);
	void *arg;
	int worker;
} par_slot;

static void *par_main(void *p)
{
	par_slot *slot = p;
	slot->fn(slot->arg, slot->worker);
	return NULL;
}

int par_run(int nthreads, void (*fn)(void *arg, int worker), void *arg, sf_err *err)
{
	if (nthreads <= 1) {
		fn(arg, 0);
		return 0;
	}
	pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
	par_slot *slots = calloc((size_t)nthreads, sizeof *slots);
	if (!tids || !slots) {
		free(tids);
		free(slots);
		return sf_err_set(err, SF_ENOMEM, "out of memory starting %d threads", nthreads);
	}
	int started = 1, rc = 0;
	for (int w = 1; w < nthreads; w++, started++) {
		slots[w] = (par_slot){ fn, arg, w };
		int e = pthread_create(&tids[w], NULL, par_main, &slots[w]);
		if (e) {
			rc = sf_err_set(err, SF_ESYS, "cannot start worker thread %d of %d: %s",
					w + 1, nthreads, strerror(e));
			break;
		}
	}
	if (!rc)
		fn(arg, 0);
	for (int w = 1; w < started; w++)
		pthread_join(tids[w], NULL);
	free(tids);
	free(slots);
	return rc;
}

typedef struct par_items {
	size_t n;
	int (*fn)(void *arg, size_t i);
	void *arg;
	atomic_size_t next;
} par_items;

/* One worker of par_for(): pull the next index until none is left or fn says stop. */
static void par_items_main(void *p, int worker)
{
	(void)worker;
	par_items *it = p;
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&it->next, 1, memory_order_relaxed);
		if (i >= it->n || it->fn(it->arg, i))
			return;
	}
}

int par_for(int nthreads, size_t n, int (*fn)(void *arg, size_t i), void *arg, sf_err *err)
{
	par_items it = { .n = n, .fn = fn, .arg = arg };
	atomic_init(&it.next, 0);
	if ((size_t)nthreads > n)
		nthreads = (int)n;
	return par_run(nthreads > 0 ? nthreads : 1, par_items_main, &it, err);
}
