/*
 * par.h - run one function on N threads and wait for all of them.
 *
 * The core's only concurrency primitive. Callers split their work into
 * tasks and let the workers pull task indices from an atomic counter, so the
 * *result* must never depend on which worker ran which task; every user in
 * core merges per-worker results in task order for that reason.
 */
#ifndef SF_PAR_H
#define SF_PAR_H

#include "err.h"

/*
 * Calls fn(arg, w) for w = 0..nthreads-1, worker 0 on the calling thread,
 * the others on new threads, and returns when all have returned. Returns 0,
 * or SF_ESYS when a thread cannot be started; the workers already started are
 * joined first, and fn has then run for some workers only, so callers treat
 * SF_ESYS as a failure of the whole computation.
 */
int par_run(int nthreads, void (*fn)(void *arg, int worker), void *arg, sf_err *err);

/*
 * The task-pulling loop every caller wants: calls fn(arg, i) once for each
 * i in 0..n-1 on min(nthreads, n) workers (at least one) that pull indices
 * from an atomic counter, so fn must write only results of its own i. A
 * worker stops pulling when fn returns non-zero (a cancel, a failure); the
 * others stop at their next call that says so. Returns as par_run().
 */
int par_for(int nthreads, size_t n, int (*fn)(void *arg, size_t i), void *arg, sf_err *err);

#endif
