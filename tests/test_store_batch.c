/*
 * test_store_batch.c - batches, the store's group commit
 * (store_batch_begin()/store_batch_end(), store.h): many writes in one
 * transaction, each call still all or nothing (a savepoint), a refused call
 * that leaves the others in place, a rollback that discards everything, a
 * full disk that loses the whole batch and never a part of it, and what a
 * batch saves over one commit per write (printed, not asserted).
 *
 * Every case runs on SQLite, in a fresh temporary folder; when
 * STARFORGE_TEST_PG names a PostgreSQL database (tests/pg/cluster.sh) the
 * same cases but the simulated full disk also run there, each in a schema
 * of its own, so both back ends are held to one contract. What is checked
 * after a commit is checked through a new handle, opened after the first
 * is closed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../server/store/store.h"
#include "store_support.h"

/* The fixture (store_support.h): SQLite in a fresh folder, or a schema per test. */
static int setup_sqlite(void **state)
{
	return fixture_setup(state, "batch", "starforge.db", 0);
}

/* The test is skipped without STARFORGE_TEST_PG (fix()). */
static int setup_pg(void **state)
{
	return fixture_setup(state, "batch", "", 1);
}

static int teardown(void **state)
{
	return fixture_teardown(state);
}

static fixture *fix(void **state)
{
	return fixture_pg_or_skip(state);
}

static store *open_rw(const fixture *f)
{
	sf_err err = { 0 };
	store *s = store_open(f->path, STORE_READWRITE, &err);
	if (!s)
		fail_msg("store_open(%s): %s", f->path, err.msg);
	return s;
}

/* Inserts job "job_<n>" (params `params`, or "{}"), with an Idempotency-Key when `key`. */
static int insert_key(store *s, int n, const char *params, const char *key, const char *hash,
		      int *existing, sf_err *err)
{
	store_job job = { 0 };
	snprintf(job.id, sizeof job.id, "job_%d", n);
	job.kind = strdup("lattice");
	job.params = strdup(params ? params : "{}");
	job.seed = (uint64_t)n;
	int rc = store_insert_job(s, &job, key, hash, existing, err);
	store_job_clear(&job);
	return rc;
}

static int insert(store *s, int n, sf_err *err)
{
	return insert_key(s, n, NULL, NULL, NULL, NULL, err);
}

static const char *id_of(int n)
{
	static char id[40];
	snprintf(id, sizeof id, "job_%d", n);
	return id;
}

/* The state of job "job_<n>", or -1 when there is none. */
static int state_of(store *s, int n)
{
	store_job job = { 0 };
	sf_err err = { 0 };
	int found = store_get_job(s, id_of(n), &job, &err);
	if (found < 0)
		fail_msg("store_get_job(%s): %s", id_of(n), err.msg);
	int state = found ? (int)job.state : -1;
	store_job_clear(&job);
	return state;
}

static int64_t count_all(store *s)
{
	int64_t counts[5];
	sf_err err = { 0 };
	assert_int_equal(store_count_jobs(s, counts, &err), 0);
	return counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
}

/* A level for store_job_succeeded(), with one text tag. */
static store_level level_for(int n, char id[40])
{
	snprintf(id, 40, "lvl_%d", n);
	store_level lv = { .id = id, .kind = "lattice", .doc = "{\"level\":1}", .ntags = 1 };
	lv.tag_name[0] = "lattice";
	lv.tag_text[0] = "square";
	return lv;
}

/*
 * Inserts, moves and progress of 60 jobs in one batch: reads inside see
 * them, another handle does not until the commit, and after a reopen
 * every one is there in its state.
 */
static void test_batch_commit(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	assert_int_equal(store_batch_begin(s, &err), 0);
	for (int n = 0; n < 60; n++)
		assert_int_equal(insert(s, n, &err), 0);
	for (int n = 0; n < 40; n++)
		assert_int_equal(store_job_started(s, id_of(n), &err), 0);
	for (int n = 0; n < 40; n++)
		assert_int_equal(store_job_progress(s, id_of(n), 3, 10, 0.5, &err), 0);
	for (int n = 0; n < 10; n++) {
		char lid[40];
		store_level lv = level_for(n, lid);
		assert_int_equal(store_job_succeeded(s, id_of(n), NULL, &lv, 1, &err), 0);
	}
	for (int n = 10; n < 20; n++)
		assert_int_equal(store_job_failed(s, id_of(n), NULL, "no puzzle", &err), 0);
	for (int n = 20; n < 30; n++)
		assert_int_equal(store_job_cancelled(s, id_of(n), NULL, &err), 0);
	for (int n = 30; n < 35; n++)
		assert_int_equal(store_job_requeue(s, id_of(n), NULL, &err), 0);
	assert_int_equal(store_put_evaluation(s, "square", "HPPH", "{\"e\":1}", &err), 0);
	assert_int_equal(store_put_resource(s, "px_model", "m1", "csv", "a,b\n", NULL, &err), 0);

	/* Reads inside the batch see its writes... */
	assert_int_equal(state_of(s, 0), JOB_SUCCEEDED);
	assert_int_equal(state_of(s, 59), JOB_QUEUED);
	assert_int_equal(count_all(s), 60);
	char *doc = NULL;
	assert_int_equal(store_get_level(s, "lvl_3", &doc, &err), 0);
	assert_non_null(doc);
	free(doc);
	/* ...and another handle sees none of them yet. */
	store *other = store_open(f->path, STORE_READONLY, &err);
	assert_non_null(other);
	assert_int_equal(state_of(other, 0), -1);
	assert_int_equal(count_all(other), 0);

	assert_int_equal(store_batch_end(s, 1, &err), 0);
	assert_int_equal(state_of(other, 0), JOB_SUCCEEDED);
	store_close(other);
	/* After the batch, single writes commit as before. */
	assert_int_equal(insert(s, 60, &err), 0);
	store_close(s);

	s = open_rw(f);
	assert_int_equal(count_all(s), 61);
	for (int n = 0; n <= 60; n++) {
		int want = n < 10   ? JOB_SUCCEEDED
			   : n < 20 ? JOB_FAILED
			   : n < 30 ? JOB_CANCELLED
			   : n < 35 ? JOB_QUEUED
			   : n < 40 ? JOB_RUNNING
				    : JOB_QUEUED;
		assert_int_equal(state_of(s, n), want);
	}
	store_job job = { 0 };
	assert_int_equal(store_get_job(s, id_of(36), &job, &err), 1);
	assert_int_equal(job.generation, 3);
	assert_int_equal(job.generations, 10);
	store_job_clear(&job);
	assert_int_equal(store_get_job(s, id_of(2), &job, &err), 1);
	assert_string_equal(job.level_ids, "[\"lvl_2\"]");
	store_job_clear(&job);
	assert_int_equal(store_get_evaluation(s, "square", "HPPH", &doc, &err), 0);
	assert_string_equal(doc, "{\"e\":1}");
	free(doc);
	char *format = NULL, *body = NULL;
	assert_int_equal(store_get_resource(s, "px_model", "m1", &format, &body, &err), 0);
	assert_string_equal(body, "a,b\n");
	free(format);
	free(body);
	store_close(s);
}

/*
 * Calls refused inside a batch (a job id taken, a move the state does not
 * allow, an unknown job, an Idempotency-Key reused with another body, a
 * resource name taken) change nothing and leave the batch's other writes,
 * including the writes the refused call made before it failed.
 */
static void test_batch_refusals(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	assert_int_equal(insert(s, 1, &err), 0); /* committed before the batch */
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(insert(s, 2, &err), 0);
	assert_int_equal(insert(s, 2, &err), SF_EINVAL);
	assert_int_equal(insert(s, 1, &err), SF_EINVAL);
	assert_int_equal(store_job_succeeded(s, id_of(2), NULL, NULL, 0, &err), SF_ERANGE);
	assert_non_null(strstr(err.msg, "cannot become"));
	assert_int_equal(store_job_started(s, "job_404", &err), SF_EINVAL);
	assert_int_equal(store_job_started(s, id_of(1), &err), 0);
	assert_int_equal(store_job_started(s, id_of(1), &err), SF_ERANGE);
	/*
	 * A call that fails after it has written: the level row goes in, then
	 * its second tag, of the same name as the first, breaks the tags' key.
	 */
	char lid[40];
	store_level lv = level_for(7, lid);
	lv.ntags = 2;
	lv.tag_name[1] = "lattice";
	lv.tag_text[1] = "cubic";
	assert_int_equal(store_job_succeeded(s, id_of(1), NULL, &lv, 1, &err), SF_EINVAL);
	assert_int_equal(state_of(s, 1), JOB_RUNNING);
	char *doc = NULL;
	assert_int_equal(store_get_level(s, "lvl_7", &doc, &err), 0);
	assert_null(doc); /* rolled back to the call's savepoint */
	/* Idempotency-Keys. */
	int existing = -1;
	assert_int_equal(insert_key(s, 3, NULL, "key-a", "hash-1", &existing, &err), 0);
	assert_int_equal(existing, 0);
	assert_int_equal(insert_key(s, 4, NULL, "key-a", "hash-2", &existing, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "Idempotency-Key reused"));
	assert_int_equal(insert_key(s, 5, NULL, "key-a", "hash-1", &existing, &err), 0);
	assert_int_equal(existing, 1);
	assert_int_equal(store_put_resource(s, "px_model", "m", "csv", "x\n", NULL, &err), 0);
	assert_int_equal(store_put_resource(s, "px_model", "m", "csv", "y\n", NULL, &err),
			 STORE_EXISTS);
	assert_int_equal(store_write_fault(s, NULL), STORE_OK);
	assert_int_equal(store_batch_end(s, 1, &err), 0);
	store_close(s);

	s = open_rw(f);
	assert_int_equal(state_of(s, 1), JOB_RUNNING);
	assert_int_equal(state_of(s, 2), JOB_QUEUED);
	assert_int_equal(state_of(s, 3), JOB_QUEUED);
	assert_int_equal(state_of(s, 4), -1);
	assert_int_equal(state_of(s, 5), -1);
	assert_int_equal(count_all(s), 3);
	/* The key maps to job 3, after the commit as inside the batch. */
	store_job job = { 0 };
	snprintf(job.id, sizeof job.id, "job_6");
	job.kind = strdup("lattice");
	job.params = strdup("{}");
	assert_int_equal(store_insert_job(s, &job, "key-a", "hash-1", &existing, &err), 0);
	assert_int_equal(existing, 1);
	assert_string_equal(job.id, "job_3");
	store_job_clear(&job);
	char *format = NULL, *body = NULL;
	assert_int_equal(store_get_resource(s, "px_model", "m", &format, &body, &err), 0);
	assert_string_equal(body, "x\n");
	free(format);
	free(body);
	assert_int_equal(store_get_level(s, "lvl_7", &doc, &err), 0);
	assert_null(doc);
	store_close(s);
}

/* store_batch_end(s, 0) discards every write of the batch; what was there before stays. */
static void test_batch_rollback(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	assert_int_equal(insert(s, 1, &err), 0);
	assert_int_equal(store_batch_begin(s, &err), 0);
	for (int n = 2; n < 20; n++)
		assert_int_equal(insert(s, n, &err), 0);
	assert_int_equal(store_job_started(s, id_of(1), &err), 0);
	assert_int_equal(store_job_failed(s, id_of(1), NULL, "boom", &err), 0);
	assert_int_equal(store_put_evaluation(s, "square", "HP", "{}", &err), 0);
	assert_int_equal(count_all(s), 19);
	assert_int_equal(store_batch_end(s, 0, &err), 0);
	assert_int_equal(count_all(s), 1);
	assert_int_equal(state_of(s, 1), JOB_QUEUED);
	store_close(s);

	s = open_rw(f);
	assert_int_equal(count_all(s), 1);
	assert_int_equal(state_of(s, 1), JOB_QUEUED);
	char *doc = NULL;
	assert_int_equal(store_get_evaluation(s, "square", "HP", &doc, &err), 0);
	assert_null(doc);
	/* A batch left open at store_close() is rolled back too. */
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(insert(s, 2, &err), 0);
	store_close(s);
	s = open_rw(f);
	assert_int_equal(count_all(s), 1);
	store_close(s);
}

/* What a batch refuses: nesting, an end without a begin, the probe and the seam, READONLY. */
static void test_batch_rules(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	assert_int_equal(store_batch_end(s, 1, &err), SF_EINVAL);
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(store_batch_begin(s, &err), SF_EINVAL); /* batches do not nest */
	assert_int_equal(store_probe_write(s, &err), SF_EINVAL);
	assert_int_equal(store_simulate_fault(s, STORE_FULL, &err), SF_EINVAL);
	assert_int_equal(insert(s, 1, &err), 0); /* the batch is still open and works */
	assert_int_equal(store_batch_end(s, 1, &err), 0);
	assert_int_equal(store_batch_end(s, 1, &err), SF_EINVAL);
	assert_int_equal(store_batch_end(s, 0, &err), SF_EINVAL);
	assert_int_equal(store_probe_write(s, &err), 0);
	store *ro = store_open(f->path, STORE_READONLY, &err);
	assert_non_null(ro);
	assert_int_equal(store_batch_begin(ro, &err), SF_EINVAL);
	assert_int_equal(store_batch_end(ro, 1, &err), SF_EINVAL);
	store_close(ro);
	assert_int_equal(store_batch_begin(NULL, &err), SF_EINVAL);
	assert_int_equal(store_batch_end(NULL, 1, &err), SF_EINVAL);
	/* Back-to-back batches. */
	for (int b = 0; b < 3; b++) {
		assert_int_equal(store_batch_begin(s, &err), 0);
		assert_int_equal(insert(s, 10 + b, &err), 0);
		assert_int_equal(store_batch_end(s, 1, &err), 0);
	}
	assert_int_equal(count_all(s), 4);
	store_close(s);
}

/*
 * A full disk half way through a batch (SQLite's page limit, set before
 * the batch): the write that needs a new page fails with the fault, which
 * rolls the whole batch back; later writes in it are refused, reads go on,
 * the end reports SF_ESYS and nothing of the batch is recorded.
 */
static void test_batch_full(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	assert_int_equal(insert(s, 0, &err), 0);
	assert_int_equal(store_simulate_fault(s, STORE_FULL, &err), 0);
	char params[2048];
	memset(params, 'x', sizeof params - 1);
	params[sizeof params - 1] = '\0';
	params[0] = '"';
	params[sizeof params - 2] = '"';
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(store_job_started(s, id_of(0), &err), 0); /* in place: fits */
	int n = 1, rc = 0;
	for (; n < 100 && (rc = insert_key(s, n, params, NULL, NULL, NULL, &err)) == 0; n++)
		;
	assert_int_equal(rc, SF_ESYS);
	assert_non_null(strstr(err.msg, "database or disk is full"));
	assert_true(n > 1); /* some writes fitted before the page ran out */
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	/* The batch is lost: writes are refused, reads see the database without it. */
	assert_int_equal(insert(s, 200, &err), SF_ESYS);
	assert_non_null(strstr(err.msg, "batch was rolled back"));
	assert_int_equal(store_job_failed(s, id_of(0), NULL, "x", &err), SF_ESYS);
	assert_int_equal(state_of(s, 0), JOB_QUEUED);
	assert_int_equal(state_of(s, 1), -1);
	assert_int_equal(store_batch_end(s, 1, &err), SF_ESYS);
	assert_non_null(strstr(err.msg, "nothing of the batch was recorded"));
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	/* Room again: the probe ends the fault, and a new batch commits. */
	assert_int_equal(store_simulate_fault(s, STORE_OK, &err), 0);
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(insert(s, 300, &err), 0);
	assert_int_equal(store_batch_end(s, 1, &err), 0);
	store_close(s);

	s = open_rw(f);
	assert_int_equal(count_all(s), 2);
	assert_int_equal(state_of(s, 0), JOB_QUEUED);
	assert_int_equal(state_of(s, 300), JOB_QUEUED);
	for (int i = 1; i <= n; i++)
		assert_int_equal(state_of(s, i), -1);
	store_close(s);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/*
 * The seam's file (STARFORGE_TEST_STORAGE_FAULT) is read when a batch
 * begins: "readonly" refuses the batch's BEGIN IMMEDIATE itself (no batch
 * open then); "full" lets it begin and loses it at the first new page.
 */
static void test_batch_seam_file(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	char seam[128];
	snprintf(seam, sizeof seam, "%s/fault", f->dir);
	setenv("STARFORGE_TEST_STORAGE_FAULT", seam, 1);
	store *s = open_rw(f);
	unsetenv("STARFORGE_TEST_STORAGE_FAULT");
	write_file(seam, "readonly\n");
	assert_int_equal(store_batch_begin(s, &err), SF_ESYS);
	assert_non_null(strstr(err.msg, "readonly"));
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE);
	assert_int_equal(store_batch_end(s, 1, &err), SF_EINVAL); /* none was opened */
	unlink(seam);
	assert_int_equal(store_probe_write(s, &err), 0);

	write_file(seam, "full");
	assert_int_equal(store_batch_begin(s, &err), 0);
	char params[2048];
	memset(params, 'y', sizeof params - 1);
	params[sizeof params - 1] = '\0';
	params[0] = params[sizeof params - 2] = '"';
	int n = 1, rc = 0;
	for (; n < 100 && (rc = insert_key(s, n, params, NULL, NULL, NULL, &err)) == 0; n++)
		;
	assert_int_equal(rc, SF_ESYS);
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	assert_int_equal(store_batch_end(s, 1, &err), SF_ESYS);
	assert_int_equal(count_all(s), 0);

	unlink(seam);
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(store_batch_begin(s, &err), 0);
	assert_int_equal(insert(s, 3, &err), 0);
	assert_int_equal(store_batch_end(s, 1, &err), 0);
	assert_int_equal(count_all(s), 1);
	store_close(s);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 500 inserts one commit each, then 500 in one batch: both stored; the times printed. */
static void test_batch_timing(void **state)
{
	fixture *f = fix(state);
	sf_err err = { 0 };
	store *s = open_rw(f);
	enum { N = 500 };
	double t0 = now_s();
	for (int n = 0; n < N; n++)
		assert_int_equal(insert(s, n, &err), 0);
	double single = now_s() - t0;
	t0 = now_s();
	assert_int_equal(store_batch_begin(s, &err), 0);
	for (int n = N; n < 2 * N; n++)
		assert_int_equal(insert(s, n, &err), 0);
	assert_int_equal(store_batch_end(s, 1, &err), 0);
	double batched = now_s() - t0;
	assert_int_equal(count_all(s), 2 * N);
	printf("    %s: %d inserts, one commit each: %.1f ms (%.0f/s); in one batch: %.1f ms "
	       "(%.0f/s), %.0fx\n",
	       store_backend(s), N, single * 1e3, N / single, batched * 1e3, N / batched,
	       single / batched);
	store_close(s);
}

int main(void)
{
#define BOTH(t)                                                     \
	cmocka_unit_test_setup_teardown(t, setup_sqlite, teardown), \
		cmocka_unit_test_setup_teardown(t, setup_pg, teardown)
	const struct CMUnitTest tests[] = {
		BOTH(test_batch_commit),
		BOTH(test_batch_refusals),
		BOTH(test_batch_rollback),
		BOTH(test_batch_rules),
		/* The page limit and the seam's file are SQLite's. */
		cmocka_unit_test_setup_teardown(test_batch_full, setup_sqlite, teardown),
		cmocka_unit_test_setup_teardown(test_batch_seam_file, setup_sqlite, teardown),
		BOTH(test_batch_timing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
