/*
 * test_storeq.c - the store thread (server/store/storeq.h) on a real SQLite
 * file in a fresh temporary folder per test: operations run in submission
 * order and answer on the loop thread; writes that wait together share one
 * commit; a write refused inside a batch leaves the others; a batch whose
 * commit fails reports every write of it failed, and none is in the file;
 * an ALONE operation runs outside any batch; a stop runs what is queued.
 * A read pool runs reads on several threads at once, each with its own
 * READONLY handle, sees what the writer committed, answers on the loop
 * thread, and with 0 threads answers inside storeq_submit.
 *
 * What was committed is read back through a second handle (a READONLY
 * store), as the service's loop does, never through the writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "../server/store/store.h"
#include "../server/store/storeq.h"

typedef struct fixture {
	char dir[64];
	char path[128];
	uv_loop_t loop;
	storeq *q;
	uv_thread_t loop_thread; /* the thread the done callbacks must run on */
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/sf_storeq_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/q.db", f->dir);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->loop_thread = uv_thread_self();
	sf_err err = { 0 };
	store *w = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(w);
	f->q = storeq_start(&f->loop, w, &err);
	assert_non_null(f->q);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	storeq_stop(f->q);
	uv_run(&f->loop, UV_RUN_DEFAULT); /* the async handle's close */
	assert_int_equal(uv_loop_close(&f->loop), 0);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* ---- operations ---- */

/* An insert of job "job_<n>", or (dup) of an id used before. */
typedef struct test_op {
	storeq_op op;
	fixture *f;
	int n;
	int *order; /* done appends n here */
	int *norder;
	uv_sem_t *started; /* when set, run posts it first */
	uv_sem_t *gate;    /* when set, run waits for it (after `started`) */
	int on_loop;    /* done ran on the loop thread */
	int done;
} test_op;

static void insert_run(store *s, storeq_op *op)
{
	test_op *t = (test_op *)op;
	if (t->started)
		uv_sem_post(t->started);
	if (t->gate)
		uv_sem_wait(t->gate);
	store_job job = { 0 };
	snprintf(job.id, sizeof job.id, "job_%d", t->n);
	job.kind = "digger";
	job.params = "{}";
	job.seed = (uint64_t)t->n;
	op->rc = store_insert_job(s, &job, NULL, NULL, NULL, &op->err);
}

static void probe_run(store *s, storeq_op *op)
{
	op->rc = store_probe_write(s, &op->err);
}

static void test_done(storeq_op *op)
{
	test_op *t = (test_op *)op;
	uv_thread_t self = uv_thread_self();
	t->on_loop = uv_thread_equal(&self, &t->f->loop_thread);
	t->done = 1;
	if (t->order)
		t->order[(*t->norder)++] = t->n;
}

static void prepare(test_op *t, fixture *f, int n, void (*run)(store *, storeq_op *), int writes)
{
	memset(t, 0, sizeof *t);
	t->f = f;
	t->n = n;
	t->op.run = run;
	t->op.done = test_done;
	t->op.writes = writes;
}

/* Runs the loop until every op given is done. */
static void wait_all(fixture *f, test_op *ops, int n)
{
	for (;;) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left += !ops[i].done;
		if (!left)
			return;
		uv_run(&f->loop, UV_RUN_ONCE);
	}
}

/* 1 when job `id` is in the file, as a READONLY handle sees it. */
static int committed(fixture *f, const char *id)
{
	sf_err err = { 0 };
	store *r = store_open(f->path, STORE_READONLY, &err);
	assert_non_null(r);
	store_job job = { 0 };
	int found = store_get_job(r, id, &job, &err);
	assert_true(found >= 0);
	store_job_clear(&job);
	store_close(r);
	return found;
}

/* ---- tests ---- */

static void test_order_and_loop_thread(void **state)
{
	fixture *f = *state;
	enum { N = 40 };
	test_op ops[N];
	int order[N], norder = 0;
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, i, insert_run, STOREQ_WRITE);
		ops[i].order = order;
		ops[i].norder = &norder;
		storeq_submit(f->q, &ops[i].op);
	}
	assert_int_equal(storeq_pending(f->q), N);
	wait_all(f, ops, N);
	assert_int_equal(storeq_pending(f->q), 0);
	assert_int_equal(norder, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(order[i], i); /* answered in submission order */
		assert_true(ops[i].on_loop);
		assert_int_equal(ops[i].op.rc, 0);
	}
	assert_int_equal(committed(f, "job_0"), 1);
	assert_int_equal(committed(f, "job_39"), 1);
}

/*
 * The first op holds the store thread, running, until every other op is
 * queued: the 99 then wait together and must share one commit (2 commits
 * in all, not 100).
 */
static void test_waiting_writes_share_a_commit(void **state)
{
	fixture *f = *state;
	enum { N = 100 };
	static test_op ops[N];
	uv_sem_t started, gate;
	assert_int_equal(uv_sem_init(&started, 0), 0);
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	unsigned long commits0, ops0, commits1, ops1;
	storeq_counts(f->q, &commits0, &ops0);
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, i, insert_run, STOREQ_WRITE);
		if (i == 0) {
			ops[i].started = &started;
			ops[i].gate = &gate;
		}
		storeq_submit(f->q, &ops[i].op);
		if (i == 0)
			uv_sem_wait(&started); /* the store thread has taken op 0 alone */
	}
	uv_sem_post(&gate);
	wait_all(f, ops, N);
	uv_sem_destroy(&gate);
	uv_sem_destroy(&started);
	storeq_counts(f->q, &commits1, &ops1);
	assert_int_equal(ops1 - ops0, N);
	assert_int_equal(commits1 - commits0, 2);
	for (int i = 0; i < N; i++)
		assert_int_equal(ops[i].op.rc, 0);
	assert_int_equal(committed(f, "job_99"), 1);
}

/* The same with group commit off (batch max 1): a commit per write. */
static void test_batch_max_one_commits_each(void **state)
{
	fixture *f = *state;
	enum { N = 20 };
	test_op ops[N];
	uv_sem_t started, gate;
	assert_int_equal(uv_sem_init(&started, 0), 0);
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	storeq_set_batch_max(f->q, 1);
	unsigned long commits0, commits1;
	storeq_counts(f->q, &commits0, NULL);
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, i, insert_run, STOREQ_WRITE);
		if (i == 0) {
			ops[i].started = &started;
			ops[i].gate = &gate;
		}
		storeq_submit(f->q, &ops[i].op);
		if (i == 0)
			uv_sem_wait(&started);
	}
	uv_sem_post(&gate);
	wait_all(f, ops, N);
	uv_sem_destroy(&gate);
	uv_sem_destroy(&started);
	storeq_counts(f->q, &commits1, NULL);
	assert_int_equal(commits1 - commits0, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(ops[i].op.rc, 0);
}

/* A duplicate id inside a batch is refused alone; the rest is committed. */
static void test_refused_write_leaves_the_batch(void **state)
{
	fixture *f = *state;
	enum { N = 10 };
	test_op ops[N];
	uv_sem_t gate;
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	for (int i = 0; i < N; i++) {
		/* ops 4 and 7 reuse the id of op 1 */
		prepare(&ops[i], f, i == 4 || i == 7 ? 1 : i, insert_run, STOREQ_WRITE);
		if (i == 0)
			ops[i].gate = &gate;
		storeq_submit(f->q, &ops[i].op);
	}
	uv_sem_post(&gate);
	wait_all(f, ops, N);
	uv_sem_destroy(&gate);
	for (int i = 0; i < N; i++) {
		if (i == 4 || i == 7) {
			assert_int_equal(ops[i].op.rc, SF_EINVAL);
		} else {
			assert_int_equal(ops[i].op.rc, 0);
			char id[16];
			snprintf(id, sizeof id, "job_%d", i);
			assert_int_equal(committed(f, id), 1);
		}
	}
}

/* store_simulate_fault on the store thread (an ALONE op: it is refused in a batch). */
typedef struct fault_op {
	test_op t;
	int fault;
} fault_op;

static void fault_run(store *s, storeq_op *op)
{
	op->rc = store_simulate_fault(s, ((fault_op *)op)->fault, &op->err);
}

static void run_alone(fixture *f, storeq_op *op)
{
	test_op *t = (test_op *)op;
	t->f = f;
	t->op.done = test_done;
	t->op.writes = STOREQ_ALONE;
	storeq_submit(f->q, op);
	wait_all(f, t, 1);
}

/*
 * A full database (store_simulate_fault's real SQLite page limit) while a
 * batch waits: every write of it fails with SF_ESYS, none is in the file,
 * and storeq_fault reports the fault. A probe (ALONE, outside any batch)
 * fails while the fault lasts and clears it once lifted.
 */
static void test_failed_batch_fails_every_write(void **state)
{
	fixture *f = *state;
	enum { N = 300 };
	static test_op ops[N];
	fault_op full = { .t.op.run = fault_run, .fault = STORE_FULL };
	run_alone(f, &full.t.op);
	assert_int_equal(full.t.op.rc, 0);

	uv_sem_t started, gate;
	assert_int_equal(uv_sem_init(&started, 0), 0);
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, 1000 + i, insert_run, STOREQ_WRITE);
		if (i == 0) {
			ops[i].started = &started;
			ops[i].gate = &gate;
		}
		storeq_submit(f->q, &ops[i].op);
		if (i == 0)
			uv_sem_wait(&started); /* op 0 alone; the 299 others in one batch */
	}
	uv_sem_post(&gate);
	wait_all(f, ops, N);
	uv_sem_destroy(&gate);
	uv_sem_destroy(&started);
	int failed = 0;
	for (int i = 1; i < N; i++) { /* op 0 ran alone: it fits or not */
		assert_int_equal(ops[i].op.rc, SF_ESYS);
		failed++;
		char id[16];
		snprintf(id, sizeof id, "job_%d", 1000 + i);
		assert_int_equal(committed(f, id), 0);
	}
	assert_int_equal(failed, N - 1);
	const char *msg = NULL;
	assert_int_equal(storeq_fault(f->q, &msg), STORE_FULL);
	assert_non_null(strstr(msg, "full"));

	test_op probe;
	prepare(&probe, f, 0, probe_run, STOREQ_ALONE);
	run_alone(f, &probe.op);
	assert_int_equal(probe.op.rc, SF_ESYS); /* still at its page limit */

	fault_op lift = { .t.op.run = fault_run, .fault = STORE_OK };
	run_alone(f, &lift.t.op);
	assert_int_equal(lift.t.op.rc, 0);
	prepare(&probe, f, 0, probe_run, STOREQ_ALONE);
	run_alone(f, &probe.op);
	assert_int_equal(probe.op.rc, 0);
	assert_int_equal(storeq_fault(f->q, NULL), STORE_OK);
}

/* An ALONE op between writes splits the batch and runs outside it (a probe
 * inside a batch would be refused with SF_EINVAL). */
static void test_alone_op_runs_outside_the_batch(void **state)
{
	fixture *f = *state;
	test_op ops[5];
	uv_sem_t gate;
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	for (int i = 0; i < 5; i++) {
		if (i == 2)
			prepare(&ops[i], f, i, probe_run, STOREQ_ALONE);
		else
			prepare(&ops[i], f, i, insert_run, STOREQ_WRITE);
		if (i == 0)
			ops[i].gate = &gate;
		storeq_submit(f->q, &ops[i].op);
	}
	uv_sem_post(&gate);
	wait_all(f, ops, 5);
	uv_sem_destroy(&gate);
	for (int i = 0; i < 5; i++)
		assert_int_equal(ops[i].op.rc, 0);
	assert_int_equal(committed(f, "job_4"), 1);
}

/* A stop runs what is queued and answers it before returning. */
static void test_stop_runs_what_is_queued(void **state)
{
	fixture *f = *state;
	enum { N = 30 };
	test_op ops[N];
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, 500 + i, insert_run, STOREQ_WRITE);
		storeq_submit(f->q, &ops[i].op);
	}
	storeq_stop(f->q);
	for (int i = 0; i < N; i++) {
		assert_true(ops[i].done);
		assert_true(ops[i].on_loop);
		assert_int_equal(ops[i].op.rc, 0);
	}
	assert_int_equal(committed(f, "job_529"), 1);
	/* teardown stops a fresh one */
	sf_err err = { 0 };
	store *w = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(w);
	f->q = storeq_start(&f->loop, w, &err);
	assert_non_null(f->q);
}

/* ---- the read pool ---- */

/* A read of job "job_<n>": rc 1 when found, 0 when not. */
static void read_run(store *s, storeq_op *op)
{
	test_op *t = (test_op *)op;
	if (t->started)
		uv_sem_post(t->started);
	if (t->gate)
		uv_sem_wait(t->gate);
	char id[40];
	snprintf(id, sizeof id, "job_%d", t->n);
	store_job job = { 0 };
	op->rc = store_get_job(s, id, &job, &op->err);
	store_job_clear(&job);
}

/* Commits jobs job_0..job_<n-1> through the writer. */
static void commit_jobs(fixture *f, int n)
{
	test_op *ops = calloc((size_t)n, sizeof *ops);
	assert_non_null(ops);
	for (int i = 0; i < n; i++) {
		prepare(&ops[i], f, i, insert_run, STOREQ_WRITE);
		storeq_submit(f->q, &ops[i].op);
	}
	wait_all(f, ops, n);
	free(ops);
}

/*
 * Three threads: three reads, each held inside its run until all three
 * have started, can only finish when they run at the same time; each sees
 * the writer's commit, and answers on the loop thread.
 */
static void test_read_pool_runs_reads_together(void **state)
{
	fixture *f = *state;
	commit_jobs(f, 3);
	sf_err err = { 0 };
	storeq *pool = storeq_start_readers(&f->loop, f->path, 3, &err);
	assert_non_null(pool);
	uv_sem_t started, gate;
	assert_int_equal(uv_sem_init(&started, 0), 0);
	assert_int_equal(uv_sem_init(&gate, 0), 0);
	enum { N = 3 };
	test_op ops[N + 1];
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, i, read_run, STOREQ_READ);
		ops[i].started = &started;
		ops[i].gate = &gate;
		storeq_submit(pool, &ops[i].op);
	}
	for (int i = 0; i < N; i++)
		uv_sem_wait(&started); /* all three running at once */
	for (int i = 0; i < N; i++)
		uv_sem_post(&gate);
	prepare(&ops[N], f, 77, read_run, STOREQ_READ); /* no such job */
	storeq_submit(pool, &ops[N].op);
	wait_all(f, ops, N + 1);
	for (int i = 0; i < N; i++) {
		assert_int_equal(ops[i].op.rc, 1);
		assert_true(ops[i].on_loop);
		assert_int_equal(ops[i].op.fault, STORE_OK);
	}
	assert_int_equal(ops[N].op.rc, 0);
	assert_int_equal(storeq_pending(pool), 0);
	unsigned long ops_run = 0;
	storeq_counts(pool, NULL, &ops_run);
	assert_int_equal(ops_run, N + 1);
	storeq_stop(pool);
	uv_sem_destroy(&started);
	uv_sem_destroy(&gate);
}

/* 0 threads: the read runs, and answers, inside storeq_submit. */
static void test_read_pool_of_none_answers_at_once(void **state)
{
	fixture *f = *state;
	commit_jobs(f, 1);
	sf_err err = { 0 };
	storeq *pool = storeq_start_readers(&f->loop, f->path, 0, &err);
	assert_non_null(pool);
	test_op op;
	prepare(&op, f, 0, read_run, STOREQ_READ);
	storeq_submit(pool, &op.op);
	assert_true(op.done);
	assert_true(op.on_loop);
	assert_int_equal(op.op.rc, 1);
	assert_int_equal(storeq_pending(pool), 0);
	storeq_stop(pool);
	/* A pool too large is refused, naming the limit. */
	assert_null(storeq_start_readers(&f->loop, f->path, STOREQ_READERS_MAX + 1, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "0..64"));
}

/* A stop answers every read still queued. */
static void test_read_pool_stop_answers_queued_reads(void **state)
{
	fixture *f = *state;
	commit_jobs(f, 2);
	sf_err err = { 0 };
	storeq *pool = storeq_start_readers(&f->loop, f->path, 1, &err);
	assert_non_null(pool);
	enum { N = 20 };
	test_op ops[N];
	for (int i = 0; i < N; i++) {
		prepare(&ops[i], f, i % 3, read_run, STOREQ_READ);
		storeq_submit(pool, &ops[i].op);
	}
	storeq_stop(pool);
	for (int i = 0; i < N; i++) {
		assert_true(ops[i].done);
		assert_true(ops[i].on_loop);
		assert_int_equal(ops[i].op.rc, i % 3 < 2 ? 1 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_loop_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiting_writes_share_a_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_max_one_commits_each, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_write_leaves_the_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_batch_fails_every_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_alone_op_runs_outside_the_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_runs_what_is_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_pool_runs_reads_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_pool_of_none_answers_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_read_pool_stop_answers_queued_reads, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
