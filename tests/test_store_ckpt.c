/*
 * test_store_ckpt.c - WAL checkpoints off the writer's thread
 * (store_checkpoint_in_background(), store.h), on a real SQLite file in a
 * fresh temporary folder.
 *
 * 24 MB of jobs committed in 1 MB batches, about 6 000 pages: with the
 * writer's own automatic checkpoint gone, only the background thread can
 * copy the WAL into the database file. So the database file holds the data
 * before any close, and the thread counts several checkpoints. Once the
 * WAL is copied whole, the next commit starts it over from its beginning:
 * another 1 MB batch leaves the WAL file no larger; and the WAL never
 * held the whole 24 MB (past three times the limit the writer copies the
 * rest itself). Every row reads back
 * after a close and a reopen. A READONLY handle is refused; PostgreSQL's
 * handle (not tested here) does nothing.
 */
#define _DEFAULT_SOURCE /* usleep() */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../server/store/store.h"

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (long long)st.st_size;
}

static void test_checkpoints_run_off_the_writer(void **state)
{
	(void)state;
	char dir[] = "/tmp/sf_ckpt_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64], wal[72];
	snprintf(path, sizeof path, "%s/c.db", dir);
	snprintf(wal, sizeof wal, "%s-wal", path);
	sf_err err = { 0 };
	store *w = store_open(path, STORE_READWRITE, &err);
	assert_non_null(w);
	assert_int_equal(store_checkpoint_in_background(w, &err), 0);
	assert_int_equal(store_checkpoint_in_background(w, &err), 0); /* on already: no-op */

	enum { BATCHES = 24, PER_BATCH = 256, PARAM = 4000 };
	char *params = malloc(PARAM + 16);
	assert_non_null(params);
	memset(params, 0, PARAM + 16);
	strcpy(params, "{\"x\":\"");
	memset(params + 6, 'a', PARAM);
	strcat(params, "\"}");
	const long long written = (long long)BATCHES * PER_BATCH * PARAM;
	long long wal_before = 0;
	unsigned long runs = 0;
	for (int b = 0; b <= BATCHES; b++) {
		if (b == BATCHES) {
			/* The rest of the WAL copied (by a connection of the test's: the
			 * thread has shown its work above), then one more batch. */
			sqlite3 *db;
			assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
					 SQLITE_OK);
			/* Its first read shows it the WAL (else: log -1, nothing copied). */
			assert_int_equal(
				sqlite3_exec(db, "PRAGMA schema_version", NULL, NULL, NULL),
				SQLITE_OK);
			/* SQLITE_BUSY while the thread is checkpointing too. */
			int log = -1, copied = -2;
			for (int i = 0; i < 500 && (log <= 0 || log != copied); i++) {
				int rc = sqlite3_wal_checkpoint_v2(
					db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
				assert_true(rc == SQLITE_OK || rc == SQLITE_BUSY);
				if (rc == SQLITE_BUSY)
					usleep(10 * 1000);
			}
			assert_true(log > 0);
			assert_int_equal(log, copied);
			sqlite3_close(db);
			wal_before = file_size(wal);
		}
		assert_int_equal(store_batch_begin(w, &err), 0);
		for (int i = 0; i < PER_BATCH; i++) {
			store_job job = { 0 };
			snprintf(job.id, sizeof job.id, "job_%d_%d", b, i);
			job.kind = "digger";
			job.params = params;
			job.seed = (uint64_t)i;
			assert_int_equal(store_insert_job(w, &job, NULL, NULL, NULL, &err), 0);
		}
		assert_int_equal(store_batch_end(w, 1, &err), 0);
		if (b == BATCHES - 1) {
			/* The thread has copied the WAL into the file, before any close. */
			for (int i = 0; i < 500 && store_background_checkpoints(w) < 2; i++)
				usleep(10 * 1000);
			runs = store_background_checkpoints(w);
			assert_true(runs >= 2);
			assert_true(file_size(path) > written / 2);
		}
	}
	free(params);
	/* The last batch went to the start of the WAL, which did not grow. */
	assert_true(wal_before >= PER_BATCH * PARAM);
	assert_true(file_size(wal) <= wal_before);
	/* Under 24 batches in a row the thread alone may never find the WAL
	 * copied whole at a batch's start; the writer's own checkpoint past
	 * 3 * STORE_CHECKPOINT_PAGES bounds it (about 12 MB, and a batch). */
	assert_true(wal_before < 16LL * 1024 * 1024);
	printf("# %lu background checkpoints; WAL file %lld bytes for %lld written\n", runs,
	       wal_before, written);

	/* A READONLY handle sees every row and has nothing to checkpoint. */
	store *r = store_open(path, STORE_READONLY, &err);
	assert_non_null(r);
	assert_int_equal(store_checkpoint_in_background(r, &err), SF_EINVAL);
	int64_t counts[5] = { 0 };
	assert_int_equal(store_count_jobs(r, counts, &err), 0);
	assert_int_equal(counts[JOB_QUEUED], (BATCHES + 1) * PER_BATCH);
	store_close(r);
	store_close(w);

	w = store_open(path, STORE_READWRITE, &err);
	assert_non_null(w);
	assert_int_equal(store_count_jobs(w, counts, &err), 0);
	assert_int_equal(counts[JOB_QUEUED], (BATCHES + 1) * PER_BATCH);
	assert_int_equal(store_background_checkpoints(w), 0); /* not started on this handle */
	store_close(w);
	char cmd[96];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoints_run_off_the_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
