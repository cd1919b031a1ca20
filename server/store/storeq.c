/*
 * storeq.c - the store thread (storeq.h).
 *
 * Two lists under one mutex: `todo` (submitted, in order) and `done` (run,
 * waiting for the loop). The thread sleeps on a condition variable while
 * `todo` is empty; the loop learns of finished operations through a
 * uv_async, whose sends libuv coalesces, so one wake-up may deliver a whole
 * batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storeq.h"

struct storeq {
	uv_loop_t *loop;
	store *s; /* the store thread's from storeq_start to storeq_stop */
	uv_thread_t thread;
	/* A read pool (storeq_start_readers): nreaders threads, reader[i] the
	 * handle of thread i; inline_reads: no thread, reader[0] on the loop. */
	int nreaders, inline_reads;
	store **reader;
	uv_thread_t *threads;
	uv_mutex_t mu;
	uv_cond_t wake;
	uv_async_t async;
	storeq_op *todo, *todo_tail;
	storeq_op *done, *done_tail;
	int stop;
	int batch_max; /* under mu */
	unsigned pending; /* loop thread's count of submitted, not yet done */
	void (*on_idle)(void *arg);
	void *idle_arg;
	/* under mu: copied after every batch */
	int fault;
	char fault_msg[256];
	char fault_copy[256]; /* the loop's copy, what storeq_fault returns */
	unsigned long batches, ops;
};

static void append(storeq_op **head, storeq_op **tail, storeq_op *first, storeq_op *last)
{
	if (*tail)
		(*tail)->next = first;
	else
		*head = first;
	*tail = last;
}

/*
 * Runs ops[0..] up to (not including) `end`, in order: when more than one
 * of them writes, inside one batch.
 */
static void run_segment(storeq *q, storeq_op *ops, storeq_op *end, unsigned long *commits)
{
	int writes = 0;
	for (storeq_op *op = ops; op != end; op = op->next)
		writes += op->writes == STOREQ_WRITE;
	sf_err berr = { 0 };
	/* Without a batch (it could not begin) each write commits on its own. */
	int batched = writes > 1 && store_batch_begin(q->s, &berr) == 0;
	for (storeq_op *op = ops; op != end; op = op->next) {
		op->rc = 0;
		memset(&op->err, 0, sizeof op->err);
		op->run(q->s, op);
		op->fault = store_write_fault(q->s, NULL);
	}
	if (batched && store_batch_end(q->s, 1, &berr)) {
		/* Nothing of the batch was recorded: its writes that succeeded failed. */
		for (storeq_op *op = ops; op != end; op = op->next)
			if (op->writes == STOREQ_WRITE && op->rc >= 0) { /* 0 or an answer (claimed, ...) */
				op->rc = berr.code ? berr.code : SF_ESYS;
				op->err = berr;
			}
	}
	*commits += batched ? 1 : (unsigned long)writes;
}

/*
 * Runs one taken list in submission order: the writes in one batch, except
 * that an op that must run alone (STOREQ_ALONE) ends the batch before it
 * and runs outside any.
 */
static void run_batch(storeq *q, storeq_op *ops)
{
	unsigned long commits = 0, n = 0;
	storeq_op *seg = ops;
	for (storeq_op *op = ops; op; op = op->next) {
		n++;
		if (op->writes != STOREQ_ALONE)
			continue;
		run_segment(q, seg, op, &commits);
		op->rc = 0;
		memset(&op->err, 0, sizeof op->err);
		op->run(q->s, op);
		op->fault = store_write_fault(q->s, NULL);
		commits++;
		seg = op->next;
	}
	run_segment(q, seg, NULL, &commits);
	const char *msg = NULL;
	int fault = store_write_fault(q->s, &msg);
	uv_mutex_lock(&q->mu);
	q->fault = fault;
	snprintf(q->fault_msg, sizeof q->fault_msg, "%s", msg ? msg : "");
	q->batches += commits;
	q->ops += n;
	uv_mutex_unlock(&q->mu);
}

static void thread_main(void *arg)
{
	storeq *q = arg;
	for (;;) {
		uv_mutex_lock(&q->mu);
		while (!q->todo && !q->stop)
			uv_cond_wait(&q->wake, &q->mu);
		if (!q->todo) { /* stopping, and nothing left */
			uv_mutex_unlock(&q->mu);
			return;
		}
		/* Take up to STOREQ_BATCH_MAX from the front. */
		storeq_op *first = q->todo, *last = first;
		for (int n = 1; n < q->batch_max && last->next; n++)
			last = last->next;
		q->todo = last->next;
		if (!q->todo)
			q->todo_tail = NULL;
		last->next = NULL;
		uv_mutex_unlock(&q->mu);

		run_batch(q, first);

		uv_mutex_lock(&q->mu);
		append(&q->done, &q->done_tail, first, last);
		uv_mutex_unlock(&q->mu);
		uv_async_send(&q->async);
	}
}

/* Runs one op of a read pool with the handle `s`. */
static void run_read(store *s, storeq_op *op)
{
	op->rc = 0;
	memset(&op->err, 0, sizeof op->err);
	op->run(s, op);
	op->fault = store_write_fault(s, NULL);
}

typedef struct reader_arg {
	storeq *q;
	int i;
} reader_arg;

/* A read pool's thread: one op at a time, whichever is first. */
static void reader_main(void *arg)
{
	reader_arg *ra = arg;
	storeq *q = ra->q;
	store *s = q->reader[ra->i];
	free(ra);
	for (;;) {
		uv_mutex_lock(&q->mu);
		while (!q->todo && !q->stop)
			uv_cond_wait(&q->wake, &q->mu);
		storeq_op *op = q->todo;
		if (!op) { /* stopping, and nothing left */
			uv_mutex_unlock(&q->mu);
			return;
		}
		q->todo = op->next;
		if (!q->todo)
			q->todo_tail = NULL;
		op->next = NULL;
		uv_mutex_unlock(&q->mu);

		run_read(s, op);

		uv_mutex_lock(&q->mu);
		append(&q->done, &q->done_tail, op, op);
		q->ops++;
		uv_mutex_unlock(&q->mu);
		uv_async_send(&q->async);
	}
}

/* Loop thread: runs the done callbacks of what the store thread finished. */
static void deliver(storeq *q)
{
	uv_mutex_lock(&q->mu);
	storeq_op *op = q->done;
	q->done = q->done_tail = NULL;
	snprintf(q->fault_copy, sizeof q->fault_copy, "%s", q->fault_msg);
	uv_mutex_unlock(&q->mu);
	while (op) {
		storeq_op *next = op->next;
		op->next = NULL;
		q->pending--;
		op->done(op); /* may free op */
		op = next;
	}
	if (!q->pending && q->on_idle && !q->stop)
		q->on_idle(q->idle_arg);
}

static void on_async(uv_async_t *a)
{
	deliver(a->data);
}

static void on_closed(uv_handle_t *h)
{
	free(h->data);
}

/* A queue with its mutex, condition variable and async handle; no thread yet. */
static storeq *q_new(uv_loop_t *loop, sf_err *err)
{
	storeq *q = calloc(1, sizeof *q);
	if (!q) {
		sf_err_set(err, SF_ENOMEM, "store thread: out of memory");
		return NULL;
	}
	q->loop = loop;
	q->batch_max = STOREQ_BATCH_MAX;
	if (uv_mutex_init(&q->mu)) {
		free(q);
		sf_err_set(err, SF_ESYS, "store thread: cannot create a mutex");
		return NULL;
	}
	if (uv_cond_init(&q->wake)) {
		uv_mutex_destroy(&q->mu);
		free(q);
		sf_err_set(err, SF_ESYS, "store thread: cannot create a condition variable");
		return NULL;
	}
	q->async.data = q;
	if (uv_async_init(loop, &q->async, on_async)) {
		uv_cond_destroy(&q->wake);
		uv_mutex_destroy(&q->mu);
		free(q);
		sf_err_set(err, SF_ESYS, "store thread: cannot create an async handle");
		return NULL;
	}
	return q;
}

/* Undoes q_new() of a queue that has no thread running (q is freed once its handle closes). */
static void q_abandon(storeq *q)
{
	uv_cond_destroy(&q->wake);
	uv_mutex_destroy(&q->mu);
	uv_close((uv_handle_t *)&q->async, on_closed);
}

storeq *storeq_start(uv_loop_t *loop, store *s, sf_err *err)
{
	storeq *q = q_new(loop, err);
	if (!q)
		return NULL;
	q->s = s;
	q->fault = store_write_fault(s, NULL);
	if (uv_thread_create(&q->thread, thread_main, q)) {
		q_abandon(q);
		sf_err_set(err, SF_ESYS, "store thread: cannot start the thread");
		return NULL;
	}
	return q;
}

/* Stops and joins the first n threads of a read pool. */
static void readers_join(storeq *q, int n)
{
	uv_mutex_lock(&q->mu);
	q->stop = 1;
	uv_cond_broadcast(&q->wake);
	uv_mutex_unlock(&q->mu);
	for (int i = 0; i < n; i++)
		uv_thread_join(&q->threads[i]);
}

/* Closes a read pool's handles and frees its arrays. */
static void readers_free(storeq *q)
{
	int n = q->nreaders ? q->nreaders : 1;
	for (int i = 0; q->reader && i < n; i++)
		store_close(q->reader[i]);
	free(q->reader);
	free(q->threads);
	q->reader = NULL;
	q->threads = NULL;
}

storeq *storeq_start_readers(uv_loop_t *loop, const char *db_path, int nthreads, sf_err *err)
{
	if (nthreads < 0 || nthreads > STOREQ_READERS_MAX) {
		sf_err_set(err, SF_EINVAL, "read pool: %d threads (allowed: 0..%d)", nthreads,
			   STOREQ_READERS_MAX);
		return NULL;
	}
	storeq *q = q_new(loop, err);
	if (!q)
		return NULL;
	int handles = nthreads ? nthreads : 1;
	q->nreaders = nthreads;
	q->inline_reads = !nthreads;
	q->reader = calloc((size_t)handles, sizeof *q->reader);
	q->threads = calloc((size_t)handles, sizeof *q->threads);
	int ok = q->reader && q->threads;
	if (!ok)
		sf_err_set(err, SF_ENOMEM, "read pool: out of memory");
	for (int i = 0; ok && i < handles; i++)
		ok = (q->reader[i] = store_open(db_path, STORE_READONLY, err)) != NULL;
	int started = 0;
	for (; ok && started < nthreads; started++) {
		reader_arg *ra = malloc(sizeof *ra);
		if (ra) {
			ra->q = q;
			ra->i = started;
		}
		if (!ra || uv_thread_create(&q->threads[started], reader_main, ra)) {
			free(ra);
			sf_err_set(err, SF_ESYS, "read pool: cannot start thread %d", started + 1);
			ok = 0;
			break;
		}
	}
	if (!ok) {
		readers_join(q, started);
		readers_free(q);
		q_abandon(q);
		return NULL;
	}
	return q;
}

void storeq_set_batch_max(storeq *q, int n)
{
	uv_mutex_lock(&q->mu);
	q->batch_max = n < 1 ? 1 : n > STOREQ_BATCH_MAX ? STOREQ_BATCH_MAX : n;
	uv_mutex_unlock(&q->mu);
}

void storeq_submit(storeq *q, storeq_op *op)
{
	op->next = NULL;
	if (q->inline_reads) { /* a read pool of 0 threads: here and now */
		run_read(q->reader[0], op);
		q->ops++;
		op->done(op);
		return;
	}
	q->pending++;
	uv_mutex_lock(&q->mu);
	append(&q->todo, &q->todo_tail, op, op);
	uv_cond_signal(&q->wake);
	uv_mutex_unlock(&q->mu);
}

int storeq_fault(storeq *q, const char **msg)
{
	uv_mutex_lock(&q->mu);
	int fault = q->fault;
	snprintf(q->fault_copy, sizeof q->fault_copy, "%s", q->fault_msg);
	uv_mutex_unlock(&q->mu);
	if (msg)
		*msg = q->fault_copy;
	return fault;
}

void storeq_on_idle(storeq *q, void (*fn)(void *arg), void *arg)
{
	q->on_idle = fn;
	q->idle_arg = arg;
}

unsigned storeq_pending(const storeq *q)
{
	return q->pending;
}

void storeq_counts(const storeq *q, unsigned long *batches, unsigned long *ops)
{
	storeq *m = (storeq *)q; /* the mutex is not part of the value */
	uv_mutex_lock(&m->mu);
	if (batches)
		*batches = m->batches;
	if (ops)
		*ops = m->ops;
	uv_mutex_unlock(&m->mu);
}

void storeq_stop(storeq *q)
{
	if (!q)
		return;
	if (q->reader) {
		readers_join(q, q->nreaders);
		deliver(q);
		/* A done callback may have queued more: run it here, the threads gone. */
		while (q->todo) {
			storeq_op *op = q->todo;
			q->todo = op->next;
			if (!q->todo)
				q->todo_tail = NULL;
			op->next = NULL;
			run_read(q->reader[0], op);
			append(&q->done, &q->done_tail, op, op);
			deliver(q);
		}
		readers_free(q);
	} else {
		uv_mutex_lock(&q->mu);
		q->stop = 1;
		uv_cond_signal(&q->wake);
		uv_mutex_unlock(&q->mu);
		uv_thread_join(&q->thread);
		deliver(q); /* what the thread finished last */
		/* A done callback may have queued more: run it here, the thread gone. */
		while (q->todo) {
			storeq_op *ops = q->todo;
			q->todo = q->todo_tail = NULL;
			storeq_op *last = ops;
			while (last->next)
				last = last->next;
			run_batch(q, ops);
			append(&q->done, &q->done_tail, ops, last);
			deliver(q);
		}
		store_close(q->s);
		q->s = NULL;
	}
	uv_cond_destroy(&q->wake);
	uv_mutex_destroy(&q->mu);
	uv_close((uv_handle_t *)&q->async, on_closed);
}
