/*
 * res_pool.h - the callback through which a job's generator reads uploaded
 * resources (core/kinds.h, sf_resource_kind; racetrack's experience models).
 *
 * A job runs on a worker thread, so it cannot use the loop thread's store
 * handle; res_pool gives each worker thread its own READONLY handle (opened
 * on first use, closed when the thread ends), as evalcache.c does.
 * Resources are immutable once stored, so what a worker reads is what the
 * job was checked against at submit time.
 */
#ifndef SF_RES_POOL_H
#define SF_RES_POOL_H

#include <stddef.h>

#include "../store/store.h"

typedef struct res_pool res_pool;

/* Resources read from the database at `db_path` (a path or a URI); NULL when out of memory. */
res_pool *res_pool_new(const char *db_path);

/* Frees `p` (and the calling thread's handle); NULL is a no-op. */
void res_pool_free(res_pool *p);

/*
 * The sf_gen_opts.resource callback (ctx: a res_pool): the body of the
 * uploaded resource (`type`, `name`), malloc'ed, its length in *len; NULL
 * for a missing resource or a database failure (logged). Any thread; each
 * has its own read-only handle.
 */
char *res_fetch(void *ctx, const char *type, const char *name, size_t *len);

/*
 * Whether the resource (`type`, `name`) exists, read through `db` (the
 * loop thread's handle): 1, 0, or a negative code with err set.
 */
int res_exists(store *db, const char *type, const char *name, sf_err *err);

#endif
