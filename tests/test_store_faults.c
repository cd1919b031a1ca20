/*
 * test_store_faults.c - storage faults in the store (store.h): how a full
 * disk and a read-only database reach callers (SF_ESYS, the fault state and
 * its message), that a refused write changes nothing and reads go on, and
 * that only store_probe_write() ends the fault. The faults are simulated
 * with the store's seam (store_simulate_fault(), and the file named by
 * STARFORGE_TEST_STORAGE_FAULT). On SQLite the seam uses SQLite's own page
 * limit and query_only, so the codes and messages are SQLite's. The
 * read-only cases run a second time on PostgreSQL (when STARFORGE_TEST_PG
 * names a database, as under `make test`; tests/pg/cluster.sh), in a schema
 * of their own, where the seam makes the session read-only and the
 * server's SQLSTATE 25006 is what the store sees; a full disk cannot be
 * simulated there (test_store.c covers the rest of PostgreSQL's faults).
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

#include <libpq-fe.h>

#include "../server/store/store.h"
#include "store_support.h"

/* The fixture (store_support.h): f->seam is the test seam's file, in the fixture's folder. */
static int setup(void **state)
{
	return fixture_setup(state, "faults", "starforge.db", 0);
}

/* The PostgreSQL fixture: f->path names schema sf_faults_<pid>_<n>, which open creates. */
static int setup_pg(void **state)
{
	return fixture_setup(state, "faults", "", 1);
}

static int teardown(void **state)
{
	return fixture_teardown(state);
}

/* Inserts job "job_<n>" with `params` as its params; returns the store's code. */
static int insert(store *s, int n, const char *params, sf_err *err)
{
	store_job job = { 0 };
	snprintf(job.id, sizeof job.id, "job_%d", n);
	job.kind = strdup("lattice");
	job.params = strdup(params);
	job.seed = (uint64_t)n;
	int rc = store_insert_job(s, &job, NULL, NULL, NULL, err);
	store_job_clear(&job);
	return rc;
}

/* 1 when job "job_<n>" is stored (in state *state_out), 0 when not. */
static int stored(store *s, int n, job_state *state_out)
{
	char id[40];
	snprintf(id, sizeof id, "job_%d", n);
	store_job job = { 0 };
	sf_err err = { 0 };
	int found = store_get_job(s, id, &job, &err);
	assert_true(found >= 0);
	if (found && state_out)
		*state_out = job.state;
	store_job_clear(&job);
	return found;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A full database: SF_ESYS, STORE_FULL with SQLite's message, nothing written, reads go on. */
static void test_full(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(insert(s, 0, "{}", &err), 0);
	const char *msg = NULL;
	assert_int_equal(store_write_fault(s, &msg), STORE_OK);
	assert_string_equal(msg, "");

	assert_int_equal(store_simulate_fault(s, STORE_FULL, &err), 0);
	/* Rows of 2 KB: the page they fill is soon full and a new one is refused. */
	char params[2048];
	memset(params, 'x', sizeof params - 1);
	params[sizeof params - 1] = '\0';
	params[0] = '"';
	params[sizeof params - 2] = '"';
	int n = 1, rc = 0;
	for (; n < 100 && (rc = insert(s, n, params, &err)) == 0; n++)
		;
	assert_int_equal(rc, SF_ESYS);
	assert_non_null(strstr(err.msg, "database or disk is full"));
	assert_non_null(strstr(err.msg, "store_insert_job"));
	assert_int_equal(store_write_fault(s, &msg), STORE_FULL);
	assert_non_null(strstr(msg, "full"));
	/* The refused job is not there; the ones before are, and reads work. */
	assert_int_equal(stored(s, n, NULL), 0);
	job_state st;
	for (int i = 0; i < n; i++) {
		assert_int_equal(stored(s, i, &st), 1);
		assert_int_equal(st, JOB_QUEUED);
	}
	store_job jobs[4];
	int got = 0;
	assert_int_equal(store_list_jobs(s, -1, NULL, 0, 4, jobs, &got, &err), 0);
	assert_true(got >= 1);
	for (int i = 0; i < got; i++)
		store_job_clear(&jobs[i]);

	/* Still full: the probe says so and keeps the fault. */
	assert_int_equal(store_probe_write(s, &err), SF_ESYS);
	assert_non_null(strstr(err.msg, "page limit"));
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	/* Space again: the fault stays until a probe ends it. */
	assert_int_equal(store_simulate_fault(s, STORE_OK, &err), 0);
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(store_write_fault(s, &msg), STORE_OK);
	assert_string_equal(msg, "");
	assert_int_equal(insert(s, n, params, &err), 0);
	assert_int_equal(stored(s, n, NULL), 1);
	store_close(s);
}

/* A read-only database: every write SF_ESYS with STORE_UNWRITABLE; the job keeps its state. */
static void test_readonly(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(insert(s, 1, "{}", &err), 0);
	assert_int_equal(store_simulate_fault(s, STORE_UNWRITABLE, &err), 0);

	/* Each kind of write: a transition, an insert, the evaluation cache, a resource. */
	assert_int_equal(store_job_started(s, "job_1", &err), SF_ESYS);
	/* SQLite's message, or PostgreSQL's for SQLSTATE 25006. */
	const char *says = f->pg ? "read-only transaction" : "readonly database";
	assert_non_null(strstr(err.msg, says));
	const char *msg;
	assert_int_equal(store_write_fault(s, &msg), STORE_UNWRITABLE);
	assert_non_null(strstr(msg, f->pg ? "read-only" : "readonly"));
	assert_int_equal(insert(s, 2, "{}", &err), SF_ESYS);
	assert_int_equal(store_put_evaluation(s, "square", "HPPH", "{}", &err), SF_ESYS);
	assert_int_equal(store_put_resource(s, "px_model", "m", "csv", "a,b\n", NULL, &err),
			 SF_ESYS);
	assert_int_equal(store_probe_write(s, &err), SF_ESYS);

	/* Nothing changed, and reading works. */
	job_state st;
	assert_int_equal(stored(s, 1, &st), 1);
	assert_int_equal(st, JOB_QUEUED);
	assert_int_equal(stored(s, 2, NULL), 0);
	int64_t counts[5];
	assert_int_equal(store_count_jobs(s, counts, &err), 0);
	assert_int_equal(counts[JOB_QUEUED], 1);

	assert_int_equal(store_simulate_fault(s, STORE_OK, &err), 0);
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE); /* until probed */
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(store_write_fault(s, NULL), STORE_OK);
	assert_int_equal(store_job_started(s, "job_1", &err), 0);
	assert_int_equal(stored(s, 1, &st), 1);
	assert_int_equal(st, JOB_RUNNING);
	store_close(s);
}

/* Errors that are not the storage's set no fault; the seam refuses what it cannot do. */
static void test_not_faults(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(insert(s, 1, "{}", &err), 0);
	assert_int_equal(insert(s, 1, "{}", &err), SF_EINVAL); /* the id is taken */
	assert_int_equal(store_job_succeeded(s, "job_1", NULL, NULL, 0, &err), SF_ERANGE);
	assert_int_equal(store_job_started(s, "job_404", &err), SF_EINVAL);
	assert_int_equal(store_write_fault(s, NULL), STORE_OK);
	assert_int_equal(store_simulate_fault(s, 7, &err), SF_EINVAL);
	assert_int_equal(store_simulate_fault(NULL, STORE_FULL, &err), SF_EINVAL);
	assert_int_equal(store_write_fault(NULL, NULL), STORE_OK);
	store *ro = store_open(f->path, STORE_READONLY, &err);
	assert_non_null(ro);
	assert_int_equal(store_simulate_fault(ro, STORE_FULL, &err), SF_EINVAL);
	assert_int_equal(store_probe_write(ro, &err), SF_EINVAL);
	store_close(ro);
	/* A store with room and write access passes the probe at once. */
	assert_int_equal(store_probe_write(s, &err), 0);
	store_close(s);
}

/* The environment's seam file is read before every write transaction. */
static void test_seam_file(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	write_file(f->seam, "readonly\n");
	setenv("STARFORGE_TEST_STORAGE_FAULT", f->seam, 1);
	/* A database that needs migrating cannot be opened read-only... */
	store *s = store_open(f->path, STORE_READWRITE, &err);
	assert_null(s);
	assert_non_null(strstr(err.msg, "readonly database"));
	/* ...one that is migrated can, and reads. */
	unsetenv("STARFORGE_TEST_STORAGE_FAULT");
	store_close(store_open(f->path, STORE_READWRITE, &err));
	setenv("STARFORGE_TEST_STORAGE_FAULT", f->seam, 1);
	s = store_open(f->path, STORE_READWRITE, &err);
	unsetenv("STARFORGE_TEST_STORAGE_FAULT");
	assert_non_null(s);
	assert_int_equal(stored(s, 1, NULL), 0);
	assert_int_equal(insert(s, 1, "{}", &err), SF_ESYS);
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE);
	write_file(f->seam, "");
	assert_int_equal(insert(s, 1, "{}", &err), 0);
	assert_int_equal(store_probe_write(s, &err), 0);
	write_file(f->seam, "full");
	assert_int_equal(store_probe_write(s, &err), SF_ESYS);
	assert_int_equal(store_write_fault(s, NULL), STORE_FULL);
	unlink(f->seam); /* no file: no fault */
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(insert(s, 2, "{}", &err), 0);
	store_close(s);
	/* Without the variable the file means nothing. */
	write_file(f->seam, "readonly");
	s = store_open(f->path, STORE_READWRITE, &err);
	assert_non_null(s);
	assert_int_equal(insert(s, 3, "{}", &err), 0);
	store_close(s);
}

/*
 * PostgreSQL's seam file: "readonly" makes the session read-only before
 * the next write; anything else (a full disk cannot be simulated) lifts it.
 */
static void test_pg_seam_file(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store_close(store_open(f->path, STORE_READWRITE, &err)); /* migrated first */
	write_file(f->seam, "readonly\n");
	setenv("STARFORGE_TEST_STORAGE_FAULT", f->seam, 1);
	store *s = store_open(f->path, STORE_READWRITE, &err);
	unsetenv("STARFORGE_TEST_STORAGE_FAULT");
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(stored(s, 1, NULL), 0);
	assert_int_equal(insert(s, 1, "{}", &err), SF_ESYS);
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE);
	assert_int_equal(store_probe_write(s, &err), SF_ESYS);
	write_file(f->seam, "");
	assert_int_equal(insert(s, 1, "{}", &err), 0);
	assert_int_equal(store_probe_write(s, &err), 0);
	assert_int_equal(store_write_fault(s, NULL), STORE_OK);
	write_file(f->seam, "full");
	assert_int_equal(insert(s, 2, "{}", &err), 0);
	unlink(f->seam);
	assert_int_equal(insert(s, 3, "{}", &err), 0);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seam_file, setup, teardown),
	};
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test_setup_teardown(test_readonly, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_not_faults, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_pg_seam_file, setup_pg, teardown),
	};
	const char *pg = getenv("STARFORGE_TEST_PG");
	if (!pg || !*pg) {
		printf("[  SKIPPED ] store faults: postgresql: STARFORGE_TEST_PG is not set (make "
		       "test sets it; by hand: sh tests/pg/cluster.sh CMD)\n");
		fflush(stdout);
	}
	int failed = cmocka_run_group_tests_name("store faults: sqlite", tests, NULL, NULL);
	if (!pg || !*pg)
		return failed;
	return failed +
	       cmocka_run_group_tests_name("store faults: postgresql", pg_tests, NULL, NULL);
}
