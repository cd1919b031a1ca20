/*
 * pxmodels.h - uploaded player-experience models: the /v1/px-models
 * handlers (service.h) and the resources a job's generator fetches.
 *
 * A job runs on a worker thread, so it cannot use the loop thread's store
 * handle; pxres gives each worker thread its own READONLY handle (opened on
 * first use, closed when the thread ends), as evalcache.c does. The models
 * are immutable once stored, so what a worker reads is what the job was
 * checked against at submit time.
 */
#ifndef SF_PXMODELS_H
#define SF_PXMODELS_H

#include <stddef.h>

#include "store.h"

typedef struct pxres pxres;

/* Resources read from the database at `db_path`; NULL when out of memory. */
pxres *pxres_new(const char *db_path);

/* Frees `p` (and the calling thread's handle); NULL is a no-op. */
void pxres_free(pxres *p);

/*
 * The sf_gen_opts.resource callback (ctx: a pxres): the body of the
 * uploaded model `name` when `type` is "px_model", malloc'ed, its length in
 * *len; NULL for any other type, a missing model or a database failure
 * (logged). Any thread; each has its own read-only handle.
 */
char *pxres_fetch(void *ctx, const char *type, const char *name, size_t *len);

/*
 * Whether the resource (`type`, `name`) exists, read through `db` (the
 * loop thread's handle): 1, 0 (also for an unknown type), or a negative
 * code with err set.
 */
int pxres_exists(store *db, const char *type, const char *name, sf_err *err);

#endif
