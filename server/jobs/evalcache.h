/*
 * evalcache.h - the lattice search's view of the SQLite evaluation cache.
 *
 * Jobs evaluate sequences on worker threads. Each worker reads the cache
 * through its own read-only store handle (opened on first use, closed when
 * the thread ends), so the loop thread's writer is never shared. New
 * evaluations, and the cached ones a search used (so that the bounded cache,
 * store_limit_evaluations(), keeps them longer), are queued under a mutex
 * and written by the store thread when a job ends (evalcache_flush), which
 * keeps the single-writer rule and costs one commit per job.
 */
#ifndef SF_EVALCACHE_H
#define SF_EVALCACHE_H

#include "../../core/lattice/puzzle.h"
#include "../base/metrics.h"
#include "../store/store.h"

typedef struct evalcache evalcache;

/* A cache over the database at `db_path`, counting into `ms`; NULL when out of memory. */
evalcache *evalcache_new(const char *db_path, metrics_shared *ms);

/* Frees `c` and its queued entries (not written); NULL is a no-op. */
void evalcache_free(evalcache *c);

/* The interface lat_search_run() takes; valid as long as `c`. */
const lat_eval_cache *evalcache_iface(evalcache *c);

/*
 * Store thread: marks the cached entries the searches used as used, then
 * writes the new evaluations, to `writer` (a transaction each).
 */
int evalcache_flush(evalcache *c, store *writer, sf_err *err);

#endif
