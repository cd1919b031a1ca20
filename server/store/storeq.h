/*
 * storeq.h - the store thread: the loop never waits on the database.
 *
 * One thread owns the writer store handle. The loop thread hands it
 * operations (storeq_op: a function to run on the store thread with the
 * handle, and one to run afterwards on the loop thread) and goes on; the
 * store thread runs them in the order they were submitted and answers
 * through a uv_async, so a commit's fsync (milliseconds) never stalls HTTP.
 *
 * Group commit. The store thread takes every operation waiting when it
 * wakes (up to STOREQ_BATCH_MAX) and runs those that write in one store
 * batch (store_batch_begin/_end): one transaction, one fsync, however many
 * jobs were submitted meanwhile. Each operation still succeeds or fails on
 * its own (inside a batch a store call is a savepoint); when the batch's
 * COMMIT fails, every write of the batch that had not failed (rc 0 or a
 * positive answer such as "claimed") is reported failed with the commit's
 * error, since none of it was recorded. An
 * operation's `done` therefore runs only once its writes are durable, or
 * known lost.
 *
 * The store's fault state (store_write_fault) is the store thread's; the
 * loop reads a copy of it taken after every batch (storeq_fault).
 *
 * Reads take the same path through a read pool (storeq_start_readers):
 * threads with a READONLY handle each, so that a handler's read, one or
 * more network round trips on PostgreSQL, never holds the loop either.
 */
#ifndef SF_STOREQ_H
#define SF_STOREQ_H

#include <uv.h>

#include "store.h"

/* The most operations one batch (one commit) takes. */
#define STOREQ_BATCH_MAX 512

/*
 * What an op's run does: only reads; writes (it runs inside the batch, as
 * a savepoint); or must run outside any batch (store_probe_write).
 */
enum { STOREQ_READ = 0, STOREQ_WRITE = 1, STOREQ_ALONE = 2 };

typedef struct storeq storeq;
typedef struct storeq_op storeq_op;

struct storeq_op {
	/*
	 * Runs on the store thread with the writer handle (on a read pool's
	 * thread with that thread's READONLY handle); sets rc (0 or a
	 * negative SF_E* code) and err. Must not touch loop-thread state.
	 */
	void (*run)(store *s, storeq_op *op);
	/* Runs on the loop thread once run has (and its batch is committed). */
	void (*done)(storeq_op *op);
	int writes; /* STOREQ_READ, _WRITE (joins the batch) or _ALONE */
	int rc;
	sf_err err;
	/* The handle's fault state (store_write_fault) right after run: on a
	 * read pool, STORE_UNAVAILABLE says that a failed read could not reach
	 * the database (an answer of 503, not 500). */
	int fault;
	storeq_op *next; /* the queue's */
};

/*
 * Starts the store thread on `loop` with the writer `s`, which it owns from
 * then on (storeq_stop closes it). Returns NULL with err set on failure
 * (`s` is then still the caller's).
 */
storeq *storeq_start(uv_loop_t *loop, store *s, sf_err *err);

/*
 * A read pool: `nthreads` threads (1..STOREQ_READERS_MAX), each with a
 * READONLY handle of its own on `db_path`, opened here. Ops (STOREQ_READ
 * only) run one at a time on whichever thread is free, so their order is
 * not kept; done runs on the loop thread as for the writer. nthreads 0
 * runs each op on the loop thread inside storeq_submit (one handle): the
 * baseline the pool is measured against (bench/http_bench.sh). Returns
 * NULL with err set on failure. storeq_fault() of a pool is always
 * STORE_OK; each op carries its handle's (storeq_op.fault).
 */
#define STOREQ_READERS_MAX 64
storeq *storeq_start_readers(uv_loop_t *loop, const char *db_path, int nthreads, sf_err *err);

/*
 * The most operations one batch takes, 1..STOREQ_BATCH_MAX (the default):
 * 1 commits every write on its own, the baseline group commit is measured
 * against (bench/http_bench.sh).
 */
void storeq_set_batch_max(storeq *q, int n);

/*
 * Queues `op` (loop thread). op->done always runs on the loop thread:
 * later, or (a read pool of 0 threads) before storeq_submit returns.
 */
void storeq_submit(storeq *q, storeq_op *op);

/*
 * The store's fault state as of the last batch (store_write_fault), and
 * its message (a copy owned by q, valid until the next call on the loop
 * thread); STORE_OK and "" when there is none.
 */
int storeq_fault(storeq *q, const char **msg);

/*
 * Calls fn(arg) on the loop thread whenever the store thread has answered
 * every operation submitted (after the last done callback of a delivery
 * that left nothing pending): a stop waits for that.
 */
void storeq_on_idle(storeq *q, void (*fn)(void *arg), void *arg);

/* Operations submitted and not yet done (loop thread). */
unsigned storeq_pending(const storeq *q);

/* Commits (a batch counts once) and operations run so far (for /metrics and tests). */
void storeq_counts(const storeq *q, unsigned long *batches, unsigned long *ops);

/*
 * Runs what is queued, stops the thread(s), closes the store(s) and frees q;
 * every queued op's done has run when it returns. Loop thread; the loop
 * must not be inside a done callback of q.
 */
void storeq_stop(storeq *q);

#endif
