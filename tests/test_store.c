/*
 * test_store.c - the store (server/store/store.h) against both back ends:
 * SQLite on real database files in a fresh temporary folder per test
 * (mkdtemp under /tmp, removed afterwards), and PostgreSQL in a fresh
 * schema per test (dropped afterwards) of the database STARFORGE_TEST_PG
 * names. `make test` runs every test binary under tests/pg/cluster.sh,
 * which starts a throwaway cluster and sets that variable; without it the
 * PostgreSQL group is skipped with a notice, so the binary still runs on a
 * machine without PostgreSQL.
 *
 * The contract's tests run twice, once per back end (the second group in
 * main()); migrations, file handling and SQL written in one dialect have
 * tests of their own per back end.
 *
 * What the store wrote is checked, where it matters, through a separate raw
 * connection (sqlite3 or libpq) rather than through the store itself: the
 * schema version, the tables a failed migration must not have left behind,
 * the journal mode. A crash is simulated by a child process that writes and
 * then _exit()s without closing its handle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/kinds.h"
#include "../server/base/embedded.h"
#include "../server/store/store.h"
#include "../server/store/store_pg.h"
#include "store_support.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the fixture (store_support.h) ---- */

/* SQLite: dir/data/db/starforge.db, two folders that do not exist yet. */
static int setup(void **state)
{
	return fixture_setup(state, "store", "data/db/starforge.db", 0);
}

/*
 * The PostgreSQL group's fixture: the folder as for SQLite (some tests
 * write files) and f->path the URI of a schema of its own, which does not
 * exist yet: store_open() creates it. main() runs the group only with
 * STARFORGE_TEST_PG set.
 */
static int setup_pg(void **state)
{
	return fixture_setup(state, "store", "", 1);
}

static int teardown(void **state)
{
	return fixture_teardown(state);
}

/* The binary's schema version for the fixture's back end. */
static int latest(const fixture *f)
{
	return f->pg ? store_pg_latest_version() : store_latest_version();
}

static int is_pg(const char *path)
{
	return strncmp(path, "postgresql://", 13) == 0;
}

static PGconn *pg_connect(const char *uri)
{
	PGconn *c = PQconnectdb(uri);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connecting to %s: %s", uri, PQerrorMessage(c));
	PQclear(PQexec(c, "SET client_min_messages = warning"));
	return c;
}

/* ---- raw access, bypassing the store ---- */

static void raw_exec(const char *path, const char *sql)
{
	if (is_pg(path)) {
		PGconn *c = pg_connect(path);
		PGresult *res = PQexec(c, sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("raw_exec(%s): %s", sql, PQerrorMessage(c));
		PQclear(res);
		PQfinish(c);
		return;
	}
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fail_msg("raw_exec(%s): %s", sql, msg ? msg : "?");
	sqlite3_free(msg);
	sqlite3_close(db);
}

/* The first column of the first row of `sql` as an integer (-1 without a row). */
static long long raw_int(const char *path, const char *sql)
{
	if (is_pg(path)) {
		PGconn *c = pg_connect(path);
		PGresult *res = PQexec(c, sql);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("raw_int(%s): %s", sql, PQerrorMessage(c));
		long long v = PQntuples(res) > 0 ? atoll(PQgetvalue(res, 0, 0)) : -1;
		PQclear(res);
		PQfinish(c);
		return v;
	}
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The schema version as stored: PRAGMA user_version, or schema_migrations' largest. */
static long long raw_version(const char *path)
{
	return raw_int(path, is_pg(path) ? "SELECT coalesce(max(version), 0) FROM schema_migrations"
					 : "PRAGMA user_version");
}

static int table_exists(const char *path, const char *name)
{
	if (is_pg(path)) {
		PGconn *c = pg_connect(path);
		const char *params[] = { name };
		PGresult *res = PQexecParams(c,
					     "SELECT count(*) FROM pg_tables WHERE schemaname = "
					     "current_schema() AND tablename = $1",
					     1, NULL, params, NULL, NULL, 0);
		assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
		int n = atoi(PQgetvalue(res, 0, 0));
		PQclear(res);
		PQfinish(c);
		return n;
	}
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT count(*) FROM sqlite_master WHERE type = "
					    "'table' AND name = ?1",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* ---- helpers ---- */

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A failure: the code returned, the code recorded and a message. */
static void assert_failed(int rc, const sf_err *err, int code)
{
	assert_int_equal(rc, code);
	assert_int_equal(err->code, code);
	assert_true(strlen(err->msg) > 0);
}

static store *open_ok(const char *path, int mode)
{
	sf_err err = { 0 };
	store *s = store_open(path, mode, &err);
	if (!s)
		fail_msg("store_open(%s): %s", path, err.msg);
	return s;
}

/* A job to insert, with strings it owns. */
static store_job new_job(const char *id, const char *kind, const char *params, uint64_t seed)
{
	store_job job = { .seed = seed };
	snprintf(job.id, sizeof job.id, "%s", id);
	job.kind = strdup(kind);
	job.params = strdup(params);
	assert_non_null(job.kind);
	assert_non_null(job.params);
	return job;
}

/* Inserts job `id` without an Idempotency-Key; returns its seq. */
static int64_t insert(store *s, const char *id, const char *kind)
{
	sf_err err = { 0 };
	store_job job = new_job(id, kind, "{\"length\":16}", 42);
	int existing = -1;
	int rc = store_insert_job(s, &job, NULL, NULL, &existing, &err);
	if (rc)
		fail_msg("insert %s: %s", id, err.msg);
	assert_int_equal(existing, 0);
	int64_t seq = job.seq;
	store_job_clear(&job);
	return seq;
}

static void expect_state(store *s, const char *id, job_state want)
{
	store_job job = get(s, id);
	assert_string_equal(job_state_name(job.state), job_state_name(want));
	store_job_clear(&job);
}

/* A migration table entry from a string. */
#define MIGRATION(name, text)                                         \
	{                                                             \
		name, (const unsigned char *)(text), sizeof(text) - 1 \
	}

/* ---- opening and migrations ---- */

static void test_fresh_database(void **state)
{
	fixture *f = *state;
	assert_true(store_latest_version() >= 1);
	assert_int_equal(store_latest_version(), (int)sf_migrations_count);
	store *s = open_ok(f->path, STORE_READWRITE); /* creates data/db/ */
	assert_int_equal(store_version(s), store_latest_version());
	store_close(s);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), store_latest_version());
	static const char *const tables[] = {
		"jobs",       "idempotency_keys", "levels",
		"level_tags", "evaluations",      "evaluation_cache"
	};
	for (int i = 0; i < ARRAY_LEN(tables); i++)
		assert_int_equal(table_exists(f->path, tables[i]), 1);
	/* WAL is a property of the file: a fresh connection reports it. */
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(store_version(NULL), -1);
}

static void test_reopen_does_not_reapply(void **state)
{
	fixture *f = *state;
	/* A step that is not idempotent: run twice, it would add a second row. */
	const sf_embedded m[] = { MIGRATION(
		"m/0001_t.sql", "CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1);") };
	sf_err err = { 0 };
	for (int i = 0; i < 3; i++) {
		store *s = store_open_with(f->path, STORE_READWRITE, m, 1, &err);
		assert_non_null(s);
		assert_int_equal(store_version(s), 1);
		store_close(s);
	}
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM t"), 1);

	/* The real schema: a second open keeps the data (and 0001 has no IF NOT EXISTS). */
	char path[160];
	snprintf(path, sizeof path, "%s/real.db", f->dir);
	store *s = open_ok(path, STORE_READWRITE);
	insert(s, "job_kept", "lattice");
	store_close(s);
	s = open_ok(path, STORE_READWRITE);
	assert_int_equal(store_version(s), store_latest_version());
	store_job job = get(s, "job_kept");
	store_job_clear(&job);
	store_close(s);
}

static void test_upgrade(void **state)
{
	fixture *f = *state;
	const sf_embedded m[] = {
		MIGRATION("migrations/0001_t.sql", "CREATE TABLE t (x); INSERT INTO t VALUES (1);"),
		MIGRATION("migrations/0002_y.sql",
			  "ALTER TABLE t ADD COLUMN y DEFAULT 7; INSERT INTO t VALUES (2, 8);"),
	};
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, m, 1, &err);
	assert_non_null(s);
	assert_int_equal(store_version(s), 1);
	store_close(s);
	raw_exec(f->path, "INSERT INTO t VALUES (3)");
	s = store_open_with(f->path, STORE_READWRITE, m, 2, &err);
	assert_non_null(s);
	assert_int_equal(store_version(s), 2);
	store_close(s);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM t"), 3);
	assert_int_equal(raw_int(f->path, "SELECT sum(y) FROM t"), 7 + 8 + 7);

	/* The embedded schema from an older binary's database (all but its last step). */
	char path[160];
	snprintf(path, sizeof path, "%s/old.db", f->dir);
	size_t older = sf_migrations_count - 1;
	s = store_open_with(path, STORE_READWRITE, sf_migrations, older, &err);
	assert_non_null(s);
	assert_int_equal(store_version(s), (int)older);
	store_close(s);
	assert_int_equal(raw_int(path, "PRAGMA user_version"), (long long)older);
	s = open_ok(path, STORE_READWRITE);
	assert_int_equal(store_version(s), store_latest_version());
	insert(s, "job_after_upgrade", "lattice");
	store_close(s);
}

static void test_newer_database_refused(void **state)
{
	fixture *f = *state;
	store_close(open_ok(f->path, STORE_READWRITE));
	int latest = store_latest_version();
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", latest + 1);
	raw_exec(f->path, sql);
	for (int mode = STORE_READWRITE; mode <= STORE_READONLY; mode++) {
		sf_err err = { 0 };
		assert_null(store_open(f->path, mode, &err));
		assert_int_equal(err.code, SF_ERANGE);
		assert_true(has_number(err.msg, latest + 1));
		assert_true(has_number(err.msg, latest));
	}
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), latest + 1);
}

static void test_readonly_refuses_older_database(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, sf_migrations, 0, &err);
	assert_non_null(s);
	store_close(s);
	assert_null(store_open(f->path, STORE_READONLY, &err));
	assert_int_equal(err.code, SF_ERANGE);
	assert_true(has_number(err.msg, 0));
	assert_true(has_number(err.msg, store_latest_version()));
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 0); /* not migrated */
}

static void test_failing_migration_rolls_back(void **state)
{
	fixture *f = *state;
	const sf_embedded m[] = {
		MIGRATION("migrations/0001_t.sql", "CREATE TABLE t (x);"),
		MIGRATION("migrations/0002_bad.sql",
			  "CREATE TABLE u (y); INSERT INTO t VALUES (5);\n"
			  "CREATE TABLE broken (;"),
	};
	sf_err err = { 0 };
	assert_null(store_open_with(f->path, STORE_READWRITE, m, 2, &err));
	assert_true(err.code < 0);
	assert_non_null(strstr(err.msg, "0002_bad.sql"));
	assert_non_null(strstr(err.msg, "syntax error"));
	/* 0001 stays applied; nothing of 0002 does, its version included. */
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
	assert_int_equal(table_exists(f->path, "t"), 1);
	assert_int_equal(table_exists(f->path, "u"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM t"), 0);
	store *s = store_open_with(f->path, STORE_READWRITE, m, 1, &err);
	assert_non_null(s);
	store_close(s);

	/* A step holding its own BEGIN fails inside ours and is rolled back too. */
	const sf_embedded begin[] = {
		MIGRATION("migrations/0001_t.sql", "CREATE TABLE t (x);"),
		MIGRATION("migrations/0002_begin.sql", "CREATE TABLE v (z); BEGIN; COMMIT;"),
	};
	assert_null(store_open_with(f->path, STORE_READWRITE, begin, 2, &err));
	assert_non_null(strstr(err.msg, "0002_begin.sql"));
	assert_int_equal(table_exists(f->path, "v"), 0);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);

	/* A step that commits on its own is reported (it cannot be undone). */
	const sf_embedded commit[] = {
		MIGRATION("migrations/0001_t.sql", "CREATE TABLE t (x);"),
		MIGRATION("migrations/0002_commit.sql", "CREATE TABLE w (z); COMMIT;"),
	};
	assert_null(store_open_with(f->path, STORE_READWRITE, commit, 2, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_non_null(strstr(err.msg, "0002_commit.sql"));
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
}

static void test_migration_foreign_keys(void **state)
{
	fixture *f = *state;
	/* A step may rebuild a referenced table (enforcement is off while it
	 * runs), but may not leave a reference dangling. */
	const sf_embedded m[] = {
		MIGRATION("migrations/0001_pc.sql",
			  "CREATE TABLE p (id TEXT PRIMARY KEY);"
			  "CREATE TABLE c (pid TEXT NOT NULL REFERENCES p (id));"
			  "INSERT INTO p VALUES ('a'); INSERT INTO c VALUES ('a');"),
		MIGRATION("migrations/0002_rebuild.sql",
			  "CREATE TABLE new_p (id TEXT PRIMARY KEY, note TEXT);"
			  "INSERT INTO new_p (id) SELECT id FROM p; DROP TABLE p;"
			  "ALTER TABLE new_p RENAME TO p;"),
		MIGRATION("migrations/0003_dangling.sql", "INSERT INTO c VALUES ('zz');"),
	};
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, m, 2, &err);
	if (!s)
		fail_msg("%s", err.msg);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM c JOIN p ON c.pid = p.id"), 1);
	assert_null(store_open_with(f->path, STORE_READWRITE, m, 3, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "0003_dangling.sql"));
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM c"), 1);
}

static void test_bad_migration_tables(void **state)
{
	fixture *f = *state;
	const sf_embedded gap[] = {
		MIGRATION("migrations/0001_a.sql", "CREATE TABLE a (x);"),
		MIGRATION("migrations/0003_c.sql", "CREATE TABLE c (x);"),
	};
	const sf_embedded unnamed[] = { MIGRATION("migrations/initial.sql",
						  "CREATE TABLE a (x);") };
	const sf_embedded nul[] = { { "0001_a.sql", (const unsigned char *)"A\0B", 3 } };
	sf_err err = { 0 };
	assert_null(store_open_with(f->path, STORE_READWRITE, gap, 2, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "0003_c.sql"));
	assert_null(store_open_with(f->path, STORE_READWRITE, unnamed, 1, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "initial.sql"));
	assert_null(store_open_with(f->path, STORE_READWRITE, nul, 1, &err));
	assert_int_equal(err.code, SF_EINVAL);
	/* Nothing was created for a table that was refused. */
	struct stat sb;
	assert_int_not_equal(stat(f->path, &sb), 0);
}

static void test_open_errors(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	/* A folder where the database file should be. */
	assert_null(store_open(f->dir, STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_non_null(strstr(err.msg, f->dir));
	/* A file where a folder should be. */
	char file[160], below[200];
	snprintf(file, sizeof file, "%s/plain", f->dir);
	FILE *fp = fopen(file, "w");
	assert_non_null(fp);
	fputs("not a database, not a folder\n", fp);
	fclose(fp);
	snprintf(below, sizeof below, "%s/sub/x.db", file);
	assert_null(store_open(below, STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_non_null(strstr(err.msg, file));
	/* A file that is not a database. */
	memset(&err, 0, sizeof err);
	assert_null(store_open(file, STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_non_null(strstr(err.msg, "not a database"));
	/* Read-only never creates. */
	assert_null(store_open(f->path, STORE_READONLY, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_true(strlen(err.msg) > 0);
	assert_int_not_equal(access(f->path, F_OK), 0);
	/* Bad arguments. */
	assert_null(store_open("", STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_null(store_open(NULL, STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_null(store_open(f->path, 7, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_true(has_number(err.msg, 7));
	assert_null(store_open(f->dir, STORE_READWRITE, NULL)); /* err may be NULL */
	store_close(NULL);
}

static void test_memory_database(void **state)
{
	(void)state;
	store *s = open_ok(":memory:", STORE_READWRITE);
	assert_int_equal(store_version(s), store_latest_version());
	insert(s, "job_m", "lattice");
	expect_state(s, "job_m", JOB_QUEUED);
	store_close(s);
}

/* ---- jobs ---- */

static void test_job_state_names(void **state)
{
	(void)state;
	static const char *const names[] = { "queued", "running", "succeeded", "failed",
					     "cancelled" };
	for (int i = 0; i < ARRAY_LEN(names); i++) {
		assert_string_equal(job_state_name((job_state)i), names[i]);
		assert_int_equal(job_state_parse(names[i]), i);
	}
	assert_int_equal(job_state_parse("Queued"), -1);
	assert_int_equal(job_state_parse(""), -1);
	assert_int_equal(job_state_parse(NULL), -1);
	assert_string_equal(job_state_name((job_state)9), "unknown");
}

/* Lists and checks the ids, in order; returns the last seq (the next cursor). */
static int64_t expect_jobs(store *s, int st, const char *kind, int64_t before, int limit,
			   const char *const *want, int nwant)
{
	store_job jobs[16];
	int n = -1;
	sf_err err = { 0 };
	ok(store_list_jobs(s, st, kind, before, limit, jobs, &n, &err), &err);
	assert_int_equal(n, nwant);
	int64_t last = 0;
	for (int i = 0; i < n; i++) {
		assert_string_equal(jobs[i].id, want[i]);
		assert_true(i == 0 || jobs[i].seq < last);
		if (before)
			assert_true(jobs[i].seq < before);
		last = jobs[i].seq;
		store_job_clear(&jobs[i]);
	}
	return last;
}

static void test_jobs_insert_get_list(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	int64_t t0 = wall_ms();
	store_job job =
		new_job("job_1", "lattice", "{\"length\":16,\"lattice\":\"square\"}", UINT64_MAX);
	int existing = -1;
	ok(store_insert_job(s, &job, NULL, NULL, &existing, &err), &err);
	assert_int_equal(existing, 0);
	assert_true(job.seq > 0);
	assert_int_equal(job.state, JOB_QUEUED);
	assert_true(job.created_ms >= t0 && job.created_ms <= wall_ms());
	store_job_clear(&job);

	int64_t seq[6] = { 0 };
	{
		store_job g = get(s, "job_1");
		seq[1] = g.seq;
		assert_string_equal(g.kind, "lattice");
		assert_string_equal(g.params, "{\"length\":16,\"lattice\":\"square\"}");
		assert_true(g.seed == UINT64_MAX); /* stored bit for bit */
		assert_int_equal(g.state, JOB_QUEUED);
		assert_int_equal(g.started_ms, 0);
		assert_int_equal(g.finished_ms, 0);
		assert_null(g.error);
		assert_null(g.level_ids);
		store_job_clear(&g);
	}
	seq[2] = insert(s, "job_2", "racetrack");
	seq[3] = insert(s, "job_3", "lattice");
	seq[4] = insert(s, "job_4", "racetrack");
	seq[5] = insert(s, "job_5", "lattice");
	for (int i = 2; i <= 5; i++)
		assert_true(seq[i] > seq[i - 1]);

	store_job missing = { .kind = NULL };
	assert_int_equal(store_get_job(s, "job_404", &missing, &err), 0);
	assert_null(missing.kind);

	/* Newest first, paged with the before cursor. */
	static const char *const all[] = { "job_5", "job_4", "job_3", "job_2", "job_1" };
	expect_jobs(s, -1, NULL, 0, 16, all, 5);
	int64_t cursor = expect_jobs(s, -1, NULL, 0, 2, all, 2);
	cursor = expect_jobs(s, -1, NULL, cursor, 2, all + 2, 2);
	cursor = expect_jobs(s, -1, NULL, cursor, 2, all + 4, 1);
	expect_jobs(s, -1, NULL, cursor, 2, NULL, 0);
	expect_jobs(s, -1, NULL, 0, 0, NULL, 0);

	/* Filters. */
	ok(store_job_started(s, "job_2", &err), &err);
	ok(store_job_started(s, "job_3", &err), &err);
	static const char *const running[] = { "job_3", "job_2" };
	expect_jobs(s, JOB_RUNNING, NULL, 0, 16, running, 2);
	static const char *const lattice[] = { "job_5", "job_3", "job_1" };
	expect_jobs(s, -1, "lattice", 0, 16, lattice, 3);
	cursor = expect_jobs(s, -1, "lattice", 0, 1, lattice, 1);
	expect_jobs(s, -1, "lattice", cursor, 16, lattice + 1, 2);
	static const char *const queued_lattice[] = { "job_5", "job_1" };
	expect_jobs(s, JOB_QUEUED, "lattice", 0, 16, queued_lattice, 2);
	static const char *const running_racetrack[] = { "job_2" };
	expect_jobs(s, JOB_RUNNING, "racetrack", 0, 16, running_racetrack, 1);
	expect_jobs(s, JOB_FAILED, NULL, 0, 16, NULL, 0);
	expect_jobs(s, -1, "digger", 0, 16, NULL, 0);

	int64_t counts[5];
	ok(store_count_jobs(s, counts, &err), &err);
	assert_int_equal(counts[JOB_QUEUED], 3);
	assert_int_equal(counts[JOB_RUNNING], 2);
	assert_int_equal(counts[JOB_SUCCEEDED] + counts[JOB_FAILED] + counts[JOB_CANCELLED], 0);

	/* Bad arguments. */
	store_job jobs[2];
	int n = -1;
	assert_failed(store_list_jobs(s, 5, NULL, 0, 2, jobs, &n, &err), &err, SF_EINVAL);
	assert_int_equal(n, 0);
	assert_failed(store_list_jobs(s, -1, NULL, -3, 2, jobs, &n, &err), &err, SF_EINVAL);
	assert_failed(store_list_jobs(s, -1, NULL, 0, -1, jobs, &n, &err), &err, SF_EINVAL);
	store_job dup = new_job("job_1", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &dup, NULL, NULL, NULL, &err), &err, SF_EINVAL);
	assert_true(strstr(err.msg, "UNIQUE") ||
		    strstr(err.msg, "unique")); /* SQLite, PostgreSQL */
	store_job_clear(&dup);
	store_job longid = new_job("", "lattice", "{}", 1);
	memset(longid.id, 'x', sizeof longid.id); /* no room for the NUL */
	assert_failed(store_insert_job(s, &longid, NULL, NULL, NULL, &err), &err, SF_EINVAL);
	longid.id[0] = '\0';
	assert_failed(store_insert_job(s, &longid, NULL, NULL, NULL, &err), &err, SF_EINVAL);
	store_job_clear(&longid);
	assert_failed(store_get_job(s, NULL, &job, &err), &err, SF_EINVAL);
	assert_failed(store_count_jobs(s, NULL, &err), &err, SF_EINVAL);
	store_close(s);
}

static void test_idempotency(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	const char *hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
	const char *other = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";
	int existing = -1;

	store_job first = new_job("job_a", "lattice", "{\"length\":16}", 7);
	ok(store_insert_job(s, &first, "key-1", hash, &existing, &err), &err);
	assert_int_equal(existing, 0);

	/* The same key and body again: the earlier job, nothing inserted. */
	store_job again = new_job("job_b", "lattice", "{\"length\":16}", 7);
	ok(store_insert_job(s, &again, "key-1", hash, &existing, &err), &err);
	assert_int_equal(existing, 1);
	assert_string_equal(again.id, "job_a");
	assert_int_equal(again.seq, first.seq);
	assert_int_equal(again.created_ms, first.created_ms);
	assert_int_equal(again.seed, 7);
	assert_string_equal(again.params, "{\"length\":16}");
	store_job_clear(&again);
	store_job probe;
	assert_int_equal(store_get_job(s, "job_b", &probe, &err), 0);

	/* The same key with another body is refused, and the job is left alone. */
	store_job clash = new_job("job_c", "lattice", "{\"length\":20}", 7);
	assert_failed(store_insert_job(s, &clash, "key-1", other, &existing, &err), &err,
		      SF_EINVAL);
	assert_string_equal(err.msg, "Idempotency-Key reused with a different body");
	assert_int_equal(existing, 0);
	assert_string_equal(clash.id, "job_c");
	assert_string_equal(clash.params, "{\"length\":20}");
	assert_int_equal(store_get_job(s, "job_c", &probe, &err), 0);

	/* A new key inserts; no key inserts every time. */
	ok(store_insert_job(s, &clash, "key-2", other, &existing, &err), &err);
	assert_int_equal(existing, 0);
	store_job_clear(&clash);
	store_job plain1 = new_job("job_d", "lattice", "{\"length\":16}", 7);
	store_job plain2 = new_job("job_e", "lattice", "{\"length\":16}", 7);
	ok(store_insert_job(s, &plain1, NULL, NULL, &existing, &err), &err);
	assert_int_equal(existing, 0);
	ok(store_insert_job(s, &plain2, NULL, NULL, NULL, &err), &err);
	assert_true(plain2.seq > plain1.seq);
	store_job_clear(&plain1);
	store_job_clear(&plain2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 4);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM idempotency_keys"), 2);

	/* A key whose insert fails is not recorded: the transaction is whole. */
	store_job dup = new_job("job_a", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &dup, "key-3", hash, &existing, &err), &err, SF_EINVAL);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM idempotency_keys"), 2);
	assert_failed(store_insert_job(s, &dup, "key-4", NULL, &existing, &err), &err, SF_EINVAL);
	store_job_clear(&dup);
	store_job_clear(&first);
	store_close(s);
}

static void test_transitions(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	insert(s, "job_ok", "lattice");
	insert(s, "job_fail", "lattice");
	insert(s, "job_cancel", "lattice");
	insert(s, "job_requeue", "lattice");

	/* queued -> running -> progress -> succeeded */
	ok(store_job_started(s, "job_ok", &err), &err);
	store_job j = get(s, "job_ok");
	assert_int_equal(j.state, JOB_RUNNING);
	assert_true(j.started_ms >= j.created_ms && j.started_ms <= wall_ms());
	assert_int_equal(j.finished_ms, 0);
	store_job_clear(&j);
	ok(store_job_progress(s, "job_ok", 3, 50, 1.5, &err), &err);
	ok(store_job_progress(s, "job_ok", 4, 50, 2.25, &err), &err);
	j = get(s, "job_ok");
	assert_int_equal(j.generation, 4);
	assert_int_equal(j.generations, 50);
	assert_true(j.best == 2.25);
	int64_t started = j.started_ms;
	store_job_clear(&j);
	ok(store_job_succeeded(s, "job_ok", NULL, NULL, 0, &err), &err);
	j = get(s, "job_ok");
	assert_int_equal(j.state, JOB_SUCCEEDED);
	assert_int_equal(j.started_ms, started);
	assert_true(j.finished_ms >= started && j.finished_ms <= wall_ms());
	assert_string_equal(j.level_ids, "[]");
	assert_null(j.error);
	store_job_clear(&j);

	/* A final state never changes again. */
	assert_failed(store_job_started(s, "job_ok", &err), &err, SF_ERANGE);
	assert_non_null(strstr(err.msg, "succeeded"));
	assert_failed(store_job_cancelled(s, "job_ok", NULL, &err), &err, SF_ERANGE);
	assert_failed(store_job_failed(s, "job_ok", NULL, "late", &err), &err, SF_ERANGE);
	assert_failed(store_job_requeue(s, "job_ok", NULL, &err), &err, SF_ERANGE);
	assert_failed(store_job_progress(s, "job_ok", 5, 50, 3, &err), &err, SF_ERANGE);
	expect_state(s, "job_ok", JOB_SUCCEEDED);

	/* Moves that skip a step. */
	assert_failed(store_job_progress(s, "job_fail", 1, 2, 3, &err), &err, SF_ERANGE);
	assert_non_null(strstr(err.msg, "queued"));
	assert_failed(store_job_succeeded(s, "job_fail", NULL, NULL, 0, &err), &err, SF_ERANGE);
	ok(store_job_started(s, "job_fail", &err), &err);
	assert_failed(store_job_started(s, "job_fail", &err), &err, SF_ERANGE);

	/* running -> failed, with its message */
	ok(store_job_failed(s, "job_fail", NULL, "params.length: 40, allowed 1..32", &err), &err);
	j = get(s, "job_fail");
	assert_int_equal(j.state, JOB_FAILED);
	assert_string_equal(j.error, "params.length: 40, allowed 1..32");
	assert_true(j.finished_ms >= j.started_ms && j.started_ms > 0);
	assert_null(j.level_ids);
	store_job_clear(&j);
	assert_failed(store_job_failed(s, "job_fail", NULL, NULL, &err), &err, SF_EINVAL);

	/* queued -> cancelled: finished without having started */
	ok(store_job_cancelled(s, "job_cancel", NULL, &err), &err);
	j = get(s, "job_cancel");
	assert_int_equal(j.state, JOB_CANCELLED);
	assert_int_equal(j.started_ms, 0);
	assert_true(j.finished_ms >= j.created_ms);
	store_job_clear(&j);

	/* running -> queued forgets the run */
	ok(store_job_started(s, "job_requeue", &err), &err);
	ok(store_job_progress(s, "job_requeue", 9, 10, -4, &err), &err);
	ok(store_job_requeue(s, "job_requeue", NULL, &err), &err);
	j = get(s, "job_requeue");
	assert_int_equal(j.state, JOB_QUEUED);
	assert_int_equal(j.started_ms, 0);
	assert_int_equal(j.generation, 0);
	assert_int_equal(j.generations, 0);
	assert_true(j.best == 0);
	store_job_clear(&j);

	/* Unknown jobs. */
	assert_failed(store_job_started(s, "job_404", &err), &err, SF_EINVAL);
	assert_non_null(strstr(err.msg, "job_404"));
	assert_failed(store_job_cancelled(s, NULL, NULL, &err), &err, SF_EINVAL);

	int64_t counts[5];
	ok(store_count_jobs(s, counts, &err), &err);
	static const int64_t want[5] = { 1, 0, 1, 1, 1 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(counts[i], want[i]);
	store_close(s);
}

static void test_pending_after_crash(void **state)
{
	fixture *f = *state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The process that dies: writes, then exits without closing. */
		sf_err err = { 0 };
		store *s = store_open(f->path, STORE_READWRITE, &err);
		if (!s)
			_exit(2);
		store_job job;
		static const char *const ids[] = { "job_a", "job_b", "job_c",
						   "job_d", "job_e", "job_f" };
		for (int i = 0; i < 6; i++) {
			job = (store_job){ .kind = "lattice", .params = "{}" };
			snprintf(job.id, sizeof job.id, "%s", ids[i]);
			if (store_insert_job(s, &job, NULL, NULL, NULL, &err))
				_exit(3);
		}
		int rc = store_job_started(s, "job_b", &err) ||
			 store_job_started(s, "job_c", &err) ||
			 store_job_succeeded(s, "job_c", NULL, NULL, 0, &err) ||
			 store_job_started(s, "job_d", &err) ||
			 store_job_progress(s, "job_d", 5, 9, 1, &err) ||
			 store_job_cancelled(s, "job_e", NULL, &err);
		_exit(rc ? 4 : 0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	static const char *const want[] = { "job_a", "job_b", "job_d", "job_f" };
	for (int round = 0; round < 2; round++) { /* the second finds them all queued */
		char(*ids)[40] = NULL;
		size_t n = 0;
		ok(store_pending_jobs(s, &ids, &n, &err), &err);
		assert_int_equal(n, 4);
		for (size_t i = 0; i < n; i++)
			assert_string_equal(ids[i], want[i]);
		free(ids);
		for (int i = 0; i < 4; i++) {
			store_job j = get(s, want[i]);
			assert_int_equal(j.state, JOB_QUEUED);
			assert_int_equal(j.started_ms, 0);
			assert_int_equal(j.generation, 0);
			store_job_clear(&j);
		}
	}
	expect_state(s, "job_c", JOB_SUCCEEDED);
	expect_state(s, "job_e", JOB_CANCELLED);
	/* Nothing pending: an empty list. */
	ok(store_job_cancelled(s, "job_a", NULL, &err), &err);
	ok(store_job_cancelled(s, "job_b", NULL, &err), &err);
	ok(store_job_cancelled(s, "job_d", NULL, &err), &err);
	ok(store_job_cancelled(s, "job_f", NULL, &err), &err);
	char(*ids)[40] = NULL;
	size_t n = 9;
	ok(store_pending_jobs(s, &ids, &n, &err), &err);
	assert_int_equal(n, 0);
	free(ids);
	assert_failed(store_pending_jobs(s, NULL, &n, &err), &err, SF_EINVAL);
	store_close(s);
}

/* ---- levels ---- */

static store_level level(const char *id, const char *kind, const char *doc)
{
	return (store_level){ .id = id, .kind = kind, .doc = doc };
}

static void tag_text(store_level *lv, const char *name, const char *text)
{
	lv->tag_name[lv->ntags] = name;
	lv->tag_text[lv->ntags++] = text;
}

static void tag_num(store_level *lv, const char *name, double num)
{
	lv->tag_name[lv->ntags] = name;
	lv->tag_num[lv->ntags++] = num;
}

static void succeed(store *s, const char *job, const store_level *levels, int n)
{
	sf_err err = { 0 };
	insert(s, job, levels[0].kind);
	ok(store_job_started(s, job, &err), &err);
	ok(store_job_succeeded(s, job, NULL, levels, n, &err), &err);
}

/* Lists levels and checks their documents, in order; returns the last seq. */
static int64_t expect_levels(store *s, const char *kind, const store_filter *filters, int nf,
			     int64_t before, int limit, const char *const *want, int nwant)
{
	char *docs[16];
	int64_t seqs[16];
	int n = -1;
	sf_err err = { 0 };
	ok(store_list_levels(s, kind, filters, nf, before, limit, docs, seqs, &n, &err), &err);
	assert_int_equal(n, nwant);
	int64_t last = 0;
	for (int i = 0; i < n; i++) {
		assert_string_equal(docs[i], want[i]);
		assert_true(i == 0 || seqs[i] < last);
		if (before)
			assert_true(seqs[i] < before);
		last = seqs[i];
		free(docs[i]);
	}
	return last;
}

static void test_levels(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };

	store_level a[2] = { level("L1", "lattice", "{\"id\":\"L1\"}"),
			     level("L2", "lattice", "{\"id\":\"L2\"}") };
	tag_text(&a[0], "lattice", "square");
	tag_num(&a[0], "length", 16);
	tag_num(&a[0], "distinct_scores", 7);
	tag_text(&a[1], "lattice", "cubic");
	tag_num(&a[1], "length", 12);
	tag_num(&a[1], "distinct_scores", 5);
	succeed(s, "job_1", a, 2);
	store_job j = get(s, "job_1");
	assert_string_equal(j.level_ids, "[\"L1\",\"L2\"]");
	store_job_clear(&j);

	/* L1 again with another document and tags: the first stays. */
	store_level b[2] = { level("L1", "lattice", "{\"id\":\"L1\",\"changed\":true}"),
			     level("L3", "lattice", "{\"id\":\"L3\"}") };
	tag_text(&b[0], "lattice", "cubic");
	tag_num(&b[0], "length", 99);
	tag_text(&b[1], "lattice", "square");
	tag_num(&b[1], "length", 20);
	tag_num(&b[1], "distinct_scores", 4);
	succeed(s, "job_2", b, 2);
	j = get(s, "job_2");
	assert_string_equal(j.level_ids, "[\"L1\",\"L3\"]");
	store_job_clear(&j);
	store_level c[1] = { level("T1", "racetrack", "{\"id\":\"T1\"}") };
	tag_num(&c[0], "length", 20);
	succeed(s, "job_3", c, 1);

	char *doc = NULL;
	ok(store_get_level(s, "L1", &doc, &err), &err);
	assert_string_equal(doc, "{\"id\":\"L1\"}");
	free(doc);
	doc = (char *)"sentinel";
	ok(store_get_level(s, "L9", &doc, &err), &err);
	assert_null(doc);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM levels"), 4);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM level_tags WHERE level_id = 'L1'"),
			 3);

	static const char *const all[] = { "{\"id\":\"T1\"}", "{\"id\":\"L3\"}", "{\"id\":\"L2\"}",
					   "{\"id\":\"L1\"}" };
	const char *T1 = all[0], *L3 = all[1], *L2 = all[2], *L1 = all[3];
	expect_levels(s, NULL, NULL, 0, 0, 16, all, 4);
	expect_levels(s, "lattice", NULL, 0, 0, 16, all + 1, 3);
	expect_levels(s, "digger", NULL, 0, 0, 16, NULL, 0);

	const store_filter square = { .name = "lattice", .text = "square" };
	const char *const want_square[] = { L3, L1 };
	expect_levels(s, NULL, &square, 1, 0, 16, want_square, 2);

	const store_filter long16 = { .name = "length", .has_min = 1, .min = 16 };
	const char *const want_long[] = { T1, L3, L1 }; /* 16 itself included; not L1's 99 */
	expect_levels(s, NULL, &long16, 1, 0, 16, want_long, 3);
	int64_t cursor = expect_levels(s, NULL, &long16, 1, 0, 2, want_long, 2);
	expect_levels(s, NULL, &long16, 1, cursor, 2, want_long + 2, 1);
	const store_filter long17 = { .name = "length", .has_min = 1, .min = 16.5 };
	expect_levels(s, NULL, &long17, 1, 0, 16, want_long, 2);
	const store_filter long99 = { .name = "length", .has_min = 1, .min = 99 };
	expect_levels(s, NULL, &long99, 1, 0, 16, NULL, 0);

	const store_filter both[2] = { { .name = "lattice", .text = "square" },
				       { .name = "distinct_scores", .has_min = 1, .min = 5 } };
	const char *const want_both[] = { L1 };
	expect_levels(s, NULL, both, 2, 0, 16, want_both, 1);
	const store_filter racetrack_long = { .name = "length", .has_min = 1, .min = 20 };
	const char *const want_track[] = { T1 };
	expect_levels(s, "racetrack", &racetrack_long, 1, 0, 16, want_track, 1);
	const char *const want_l3[] = { L3 };
	expect_levels(s, "lattice", &racetrack_long, 1, 0, 16, want_l3, 1);

	/* A text filter never matches a number, nor an unknown name anything. */
	const store_filter as_text = { .name = "length", .text = "20" };
	expect_levels(s, NULL, &as_text, 1, 0, 16, NULL, 0);
	const store_filter unknown = { .name = "colour", .text = "red" };
	expect_levels(s, NULL, &unknown, 1, 0, 16, NULL, 0);
	const store_filter min_text = { .name = "lattice", .has_min = 1, .min = -1e300 };
	expect_levels(s, NULL, &min_text, 1, 0, 16, NULL, 0);
	(void)L2;

	/* Many shapes, more than the statement cache holds, and back again. */
	for (int round = 0; round < 2; round++) {
		store_filter many[STORE_MAX_FILTERS];
		for (int nf = 1; nf <= STORE_MAX_FILTERS; nf++) {
			for (int i = 0; i < nf; i++)
				many[i] = (i % 2) ? long16 : square;
			expect_levels(s, NULL, many, nf, 0, 16, want_square, 2);
			expect_levels(s, "lattice", many, nf, 0, 16, want_square, 2);
		}
	}

	/* A number with its text form (tag_has_num) answers both kinds of filter. */
	store_level d[1] = { level("L4", "lattice", "{\"id\":\"L4\"}") };
	tag_text(&d[0], "width", "7");
	d[0].tag_num[0] = 7;
	d[0].tag_has_num[0] = 1;
	succeed(s, "job_4", d, 1);
	const char *const want_l4[] = { "{\"id\":\"L4\"}" };
	const store_filter width_text = { .name = "width", .text = "7" };
	expect_levels(s, NULL, &width_text, 1, 0, 16, want_l4, 1);
	const store_filter width7 = { .name = "width", .has_min = 1, .min = 7 };
	expect_levels(s, NULL, &width7, 1, 0, 16, want_l4, 1);
	const store_filter width8 = { .name = "width", .has_min = 1, .min = 7.5 };
	expect_levels(s, NULL, &width8, 1, 0, 16, NULL, 0);

	/* One id twice in one success: the first entry is stored, with its tags only. */
	store_level same[2] = { level("L5", "lattice", "{\"id\":\"L5\"}"),
				level("L5", "lattice", "{\"id\":\"L5\",\"second\":1}") };
	tag_text(&same[0], "shape", "first");
	tag_text(&same[1], "shape", "second");
	tag_text(&same[1], "extra", "x");
	succeed(s, "job_5", same, 2);
	ok(store_get_level(s, "L5", &doc, &err), &err);
	assert_string_equal(doc, "{\"id\":\"L5\"}");
	free(doc);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM level_tags WHERE level_id = 'L5'"),
			 1);
	const store_filter first = { .name = "shape", .text = "first" };
	const char *const want_l5[] = { "{\"id\":\"L5\"}" };
	expect_levels(s, NULL, &first, 1, 0, 16, want_l5, 1);
	j = get(s, "job_5");
	assert_string_equal(j.level_ids, "[\"L5\",\"L5\"]");
	store_job_clear(&j);

	/* Bad arguments. */
	char *docs[2];
	int n = -1;
	store_filter bad = { .name = "length", .text = "x", .has_min = 1, .min = 1 };
	assert_failed(store_list_levels(s, NULL, &bad, 1, 0, 2, docs, NULL, &n, &err), &err,
		      SF_EINVAL);
	assert_non_null(strstr(err.msg, "length"));
	bad = (store_filter){ .name = "length" };
	assert_failed(store_list_levels(s, NULL, &bad, 1, 0, 2, docs, NULL, &n, &err), &err,
		      SF_EINVAL);
	bad = (store_filter){ .text = "x" };
	assert_failed(store_list_levels(s, NULL, &bad, 1, 0, 2, docs, NULL, &n, &err), &err,
		      SF_EINVAL);
	store_filter nine[STORE_MAX_FILTERS + 1];
	for (int i = 0; i < ARRAY_LEN(nine); i++)
		nine[i] = square;
	assert_failed(store_list_levels(s, NULL, nine, ARRAY_LEN(nine), 0, 2, docs, NULL, &n, &err),
		      &err, SF_EINVAL);
	assert_true(has_number(err.msg, STORE_MAX_FILTERS));
	assert_failed(store_list_levels(s, NULL, NULL, 0, 0, -1, docs, NULL, &n, &err), &err,
		      SF_EINVAL);
	assert_int_equal(n, 0);
	assert_failed(store_get_level(s, NULL, &doc, &err), &err, SF_EINVAL);

	/* A bad level is refused before anything is written. */
	insert(s, "job_bad", "lattice");
	ok(store_job_started(s, "job_bad", &err), &err);
	store_level broken[2] = { level("L7", "lattice", "{}"), level("L8", "lattice", NULL) };
	assert_failed(store_job_succeeded(s, "job_bad", NULL, broken, 2, &err), &err, SF_EINVAL);
	store_level many_tags = level("L7", "lattice", "{}");
	many_tags.ntags = STORE_MAX_TAGS + 1;
	assert_failed(store_job_succeeded(s, "job_bad", NULL, &many_tags, 1, &err), &err, SF_EINVAL);
	/* Two tags of one name: the insert fails and the whole transition rolls back. */
	store_level twice = level("L7", "lattice", "{}");
	tag_num(&twice, "length", 1);
	tag_num(&twice, "length", 2);
	assert_failed(store_job_succeeded(s, "job_bad", NULL, &twice, 1, &err), &err, SF_EINVAL);
	assert_non_null(strstr(err.msg, "L7"));
	expect_state(s, "job_bad", JOB_RUNNING);
	doc = NULL;
	ok(store_get_level(s, "L7", &doc, &err), &err);
	assert_null(doc);
	store_close(s);
}

/* ---- evaluations ---- */

static void test_evaluations(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	char *doc = (char *)"sentinel";
	ok(store_get_evaluation(s, "square", "HPHPPHHPHPPHPHHP", &doc, &err), &err);
	assert_null(doc);
	ok(store_put_evaluation(s, "square", "HPHPPHHPHPPHPHHP", "{\"max_score\":6}", &err), &err);
	ok(store_get_evaluation(s, "square", "HPHPPHHPHPPHPHHP", &doc, &err), &err);
	assert_string_equal(doc, "{\"max_score\":6}");
	free(doc);
	/* The key is the pair. */
	ok(store_get_evaluation(s, "cubic", "HPHPPHHPHPPHPHHP", &doc, &err), &err);
	assert_null(doc);
	ok(store_get_evaluation(s, "square", "HPHPPHHPHPPHPHH", &doc, &err), &err);
	assert_null(doc);
	/* A second put replaces. */
	ok(store_put_evaluation(s, "square", "HPHPPHHPHPPHPHHP", "{\"max_score\":6,\"v\":2}", &err),
	   &err);
	ok(store_get_evaluation(s, "square", "HPHPPHHPHPPHPHHP", &doc, &err), &err);
	assert_string_equal(doc, "{\"max_score\":6,\"v\":2}");
	free(doc);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM evaluations"), 1);
	assert_failed(store_put_evaluation(s, "square", "HP", NULL, &err), &err, SF_EINVAL);
	assert_failed(store_get_evaluation(s, NULL, "HP", &doc, &err), &err, SF_EINVAL);
	store_close(s);
}

/*
 * The bounded cache against a model written here: a list in order of use
 * (least recent first), a put or touch moving its key to the end, a put
 * past the bound dropping from the front. 400 random operations (puts and
 * touches of 1..4 keys, repeats and absent keys included, and bounds
 * changed now and then) over 9 keys; after each, every key's presence and
 * document and the counters must be the model's.
 */
typedef struct lru_model {
	int order[16]; /* key indexes, least recently used first */
	int n;
	int doc[16]; /* each key's document version */
	int64_t evictions, max;
} lru_model;

static void lru_use(lru_model *m, int key)
{
	int i = 0;
	while (i < m->n && m->order[i] != key)
		i++;
	if (i < m->n)
		memmove(&m->order[i], &m->order[i + 1], (size_t)(m->n - i - 1) * sizeof(int));
	else
		m->n++;
	m->order[m->n - 1] = key;
}

static int64_t lru_trim(lru_model *m)
{
	int64_t out = m->max && m->n > m->max ? m->n - m->max : 0;
	memmove(m->order, m->order + out, (size_t)(m->n - out) * sizeof(int));
	m->n -= (int)out;
	m->evictions += out;
	return out;
}

static int lru_has(const lru_model *m, int key)
{
	for (int i = 0; i < m->n; i++)
		if (m->order[i] == key)
			return 1;
	return 0;
}

static void test_evaluation_lru(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	enum { KEYS = 9, OPS = 400 };
	static const char *const lat[KEYS] = { "square", "square", "square", "cubic", "cubic",
					       "square", "cubic",  "square", "cubic" };
	static const char *const seq[KEYS] = { "HPHP", "HPPH", "HHPP",  "HPHP", "HPPH",
					       "PPHH", "PPHH", "HPHPH", "HPHPH" };
	lru_model m = { .max = 4 };
	ok(store_limit_evaluations(s, m.max, NULL, &err), &err);
	uint32_t r32 = 12345;
	char docs[4][32];
	for (int op = 0; op < OPS; op++) {
		r32 = r32 * 1103515245u + 12345u;
		int what = (int)(r32 >> 16) % 10, nkeys = 1 + (int)(r32 >> 8) % 4;
		store_evaluation ev[4];
		int keys[4];
		for (int i = 0; i < nkeys; i++) {
			r32 = r32 * 1103515245u + 12345u;
			keys[i] = (int)(r32 >> 16) % KEYS;
			snprintf(docs[i], sizeof docs[i], "{\"op\":%d,\"i\":%d}", op, i);
			ev[i] = (store_evaluation){ lat[keys[i]], seq[keys[i]], docs[i] };
		}
		if (what < 5) { /* a put */
			ok(store_put_evaluations(s, ev, (size_t)nkeys, &err), &err);
			for (int i = 0; i < nkeys; i++) {
				lru_use(&m, keys[i]);
				m.doc[keys[i]] = op * 4 + i;
			}
			lru_trim(&m);
		} else if (what < 9) { /* a touch: a key not held stays out */
			ok(store_touch_evaluations(s, ev, (size_t)nkeys, &err), &err);
			for (int i = 0; i < nkeys; i++)
				if (lru_has(&m, keys[i]))
					lru_use(&m, keys[i]);
		} else { /* a new bound: 0 (none), 1..6 */
			m.max = (int64_t)((r32 >> 4) % 7);
			int64_t evicted = -1;
			ok(store_limit_evaluations(s, m.max, &evicted, &err), &err);
			assert_int_equal(evicted, lru_trim(&m));
		}
		for (int k = 0; k < KEYS; k++) {
			char *doc = NULL, want[32];
			ok(store_get_evaluation(s, lat[k], seq[k], &doc, &err), &err);
			if (!lru_has(&m, k)) {
				if (doc)
					fail_msg("op %d: key %d held, the model evicted it", op, k);
				continue;
			}
			if (!doc)
				fail_msg("op %d: key %d evicted, the model holds it", op, k);
			snprintf(want, sizeof want, "{\"op\":%d,\"i\":%d}", m.doc[k] / 4,
				 m.doc[k] % 4);
			assert_string_equal(doc, want);
			free(doc);
		}
		int64_t entries = -1, evictions = -1;
		ok(store_evaluation_stats(s, &entries, &evictions, &err), &err);
		assert_int_equal(entries, m.n);
		assert_int_equal(evictions, m.evictions);
	}
	assert_true(m.evictions > 50); /* the bound was reached often */
	/* Another handle (a reader, another node) reads the same counters. */
	store *r = open_ok(f->path, STORE_READONLY);
	int64_t entries = -1, evictions = -1;
	ok(store_evaluation_stats(r, &entries, &evictions, &err), &err);
	assert_int_equal(entries, m.n);
	assert_int_equal(evictions, m.evictions);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM evaluations"), m.n);
	assert_true(store_put_evaluation(r, "square", "HH", "{}", &err) < 0);
	store_close(r);
	/* A key touched twice in one call is used as of its last place. */
	store_evaluation a = { "square", "AAAA", "{}" }, b = { "square", "BBBB", "{}" },
			 c = { "square", "CCCC", "{}" }, aba[] = { a, b, a };
	ok(store_limit_evaluations(s, 2, NULL, &err), &err);
	ok(store_put_evaluations(s, aba, 2, &err), &err);
	ok(store_touch_evaluations(s, aba, 3, &err), &err); /* B, then A */
	ok(store_put_evaluations(s, &c, 1, &err), &err);
	char *got = NULL;
	ok(store_get_evaluation(s, "square", "BBBB", &got, &err), &err);
	assert_null(got);
	ok(store_get_evaluation(s, "square", "AAAA", &got, &err), &err);
	assert_non_null(got);
	free(got);
	/* Bad arguments change nothing. */
	store_evaluation bad = { "square", NULL, NULL };
	assert_failed(store_touch_evaluations(s, &bad, 1, &err), &err, SF_EINVAL);
	assert_failed(store_limit_evaluations(s, -1, NULL, &err), &err, SF_EINVAL);
	assert_failed(store_evaluation_stats(s, NULL, &evictions, &err), &err, SF_EINVAL);
	ok(store_touch_evaluations(s, NULL, 0, &err), &err);
	store_close(s);
}

/*
 * A database from before the bound (SQLite 7, PostgreSQL 3) keeps its
 * entries, ranked by when they were stored, and counts them.
 */
static void test_evaluation_lru_upgrade(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	size_t older = f->pg ? 3 : 7;
	store *s = store_open_with(f->path, STORE_READWRITE,
				   f->pg ? sf_pg_migrations : sf_migrations, older, &err);
	if (!s)
		fail_msg("opening the old schema: %s", err.msg);
	store_close(s);
	raw_exec(f->path,
		 "INSERT INTO evaluations (lattice, sequence, doc, created_ms) VALUES "
		 "('square', 'HPPH', '{\"a\":1}', 1000), ('cubic', 'HH', '{\"a\":2}', 1001), "
		 "('square', 'HHHH', '{\"a\":3}', 1002)");
	s = open_ok(f->path, STORE_READWRITE);
	int64_t entries = -1, evictions = -1, evicted = -1;
	ok(store_evaluation_stats(s, &entries, &evictions, &err), &err);
	assert_int_equal(entries, 3);
	assert_int_equal(evictions, 0);
	ok(store_limit_evaluations(s, 2, &evicted, &err), &err);
	assert_int_equal(evicted, 1);
	char *doc = NULL;
	ok(store_get_evaluation(s, "square", "HPPH", &doc, &err), &err);
	assert_null(doc); /* the first stored went */
	ok(store_put_evaluation(s, "square", "PPPP", "{\"a\":4}", &err), &err);
	ok(store_get_evaluation(s, "cubic", "HH", &doc, &err), &err);
	assert_null(doc); /* then the second */
	ok(store_get_evaluation(s, "square", "HHHH", &doc, &err), &err);
	assert_string_equal(doc, "{\"a\":3}");
	free(doc);
	store_close(s);
}

static void test_resources(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	char *format = (char *)"sentinel", *body = (char *)"sentinel";
	/* Missing: 0 with both NULL. */
	ok(store_get_resource(s, "px_model", "mine", &format, &body, &err), &err);
	assert_null(format);
	assert_null(body);
	const char *csv = "speed,intensity\r\n0.5,0.25\n";
	ok(store_put_resource(s, "px_model", "mine", "csv", csv, NULL, &err), &err);
	ok(store_get_resource(s, "px_model", "mine", &format, &body, &err), &err);
	assert_string_equal(format, "csv");
	assert_string_equal(body, csv); /* byte for byte, CR included */
	free(format);
	free(body);
	/* A name is taken for good within its type: the second put changes nothing. */
	err.code = 0;
	assert_int_equal(store_put_resource(s, "px_model", "mine", "json", "{}", NULL, &err),
			 STORE_EXISTS);
	assert_int_equal(err.code, 0);
	ok(store_get_resource(s, "px_model", "mine", &format, &body, &err), &err);
	assert_string_equal(format, "csv");
	assert_string_equal(body, csv);
	free(format);
	free(body);
	/* ...but another type has its own names. */
	ok(store_put_resource(s, "other_type", "mine", "json", "{}", NULL, &err), &err);
	ok(store_get_resource(s, "other_type", "mine", &format, &body, &err), &err);
	assert_string_equal(body, "{}");
	free(format);
	free(body);
	assert_failed(store_put_resource(s, "px_model", NULL, "csv", csv, NULL, &err), &err,
		      SF_EINVAL);
	assert_failed(store_put_resource(s, NULL, "x", "csv", csv, NULL, &err), &err, SF_EINVAL);
	assert_failed(store_get_resource(s, "px_model", NULL, &format, &body, &err), &err,
		      SF_EINVAL);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM resources"), 2);
	/* A read-only handle reads it. */
	store *r = open_ok(f->path, STORE_READONLY);
	ok(store_get_resource(r, "px_model", "mine", &format, &body, &err), &err);
	assert_string_equal(body, csv);
	free(format);
	free(body);
	ok(store_get_resource(r, "px_model", "other", &format, &body, &err), &err);
	assert_null(body);
	store_close(r);
	store_close(s);
}

/* Lists `type` from `before`, expecting exactly `names` in that order. */
static void expect_resources(store *s, const char *type, int64_t before, int limit,
			     const char *const *names, int count, store_resource *out)
{
	sf_err err = { 0 };
	int n = -1;
	ok(store_list_resources(s, type, before, limit, out, &n, &err), &err);
	assert_int_equal(n, count);
	for (int i = 0; i < n; i++) {
		assert_string_equal(out[i].name, names[i]);
		if (i)
			assert_true(out[i].seq < out[i - 1].seq);
	}
}

/* Listing: newest first, paged by seq, per type, summaries without bodies. */
static void test_resource_listing(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	store_resource out[4];
	expect_resources(s, "px_model", 0, 4, NULL, 0, out);
	ok(store_put_resource(s, "px_model", "a", "csv", "body a", "{\"traces\":1}", &err), &err);
	ok(store_put_resource(s, "other_type", "x", "json", "{}", "{}", &err), &err);
	ok(store_put_resource(s, "px_model", "b", "json", "body b", "{\"traces\":2}", &err), &err);
	ok(store_put_resource(s, "px_model", "c", "csv", "body c", NULL, &err), &err);

	const char *first[] = { "c", "b" };
	expect_resources(s, "px_model", 0, 2, first, 2, out);
	/* No summary stored: the body comes instead, to compute one from. */
	assert_null(out[0].summary);
	assert_string_equal(out[0].body, "body c");
	assert_string_equal(out[0].format, "csv");
	assert_string_equal(out[1].summary, "{\"traces\":2}");
	assert_null(out[1].body);
	assert_string_equal(out[1].format, "json");
	assert_true(out[1].created_ms > 0);
	int64_t next = out[1].seq;
	store_resource_clear(&out[0]);
	store_resource_clear(&out[1]);
	assert_null(out[0].name);
	const char *second[] = { "a" };
	expect_resources(s, "px_model", next, 2, second, 1, out);
	assert_string_equal(out[0].summary, "{\"traces\":1}");
	store_resource_clear(&out[0]);
	const char *other[] = { "x" };
	expect_resources(s, "other_type", 0, 4, other, 1, out);
	store_resource_clear(&out[0]);
	expect_resources(s, "px_model", 0, 0, NULL, 0, out);

	int n = 7;
	assert_failed(store_list_resources(s, NULL, 0, 2, out, &n, &err), &err, SF_EINVAL);
	assert_int_equal(n, 0);
	assert_failed(store_list_resources(s, "px_model", 0, -1, out, &n, &err), &err, SF_EINVAL);
	assert_failed(store_list_resources(s, "px_model", -5, 2, out, &n, &err), &err, SF_EINVAL);
	store_resource_clear(NULL);

	/* A read-only handle lists too. */
	store *r = open_ok(f->path, STORE_READONLY);
	const char *all[] = { "c", "b", "a" };
	expect_resources(r, "px_model", 0, 4, all, 3, out);
	for (int i = 0; i < 3; i++)
		store_resource_clear(&out[i]);
	store_close(r);
	store_close(s);
}

/* Migration 0004 keeps a version-3 database's resources, in upload order, without summaries. */
static void test_resources_migrate_listing(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, sf_migrations, 3, &err);
	assert_non_null(s);
	store_close(s);
	raw_exec(f->path, "INSERT INTO resources (type, name, format, body, created) VALUES "
			  "('px_model', 'late', 'csv', 'l', 2000), "
			  "('px_model', 'early', 'json', 'e', 1000)");
	s = open_ok(f->path, STORE_READWRITE);
	assert_true(store_version(s) >= 4);
	ok(store_put_resource(s, "px_model", "new", "csv", "n", "{}", &err), &err);
	assert_int_equal(store_put_resource(s, "px_model", "early", "csv", "x", NULL, &err),
			 STORE_EXISTS);
	store_resource out[4];
	const char *names[] = { "new", "late", "early" };
	expect_resources(s, "px_model", 0, 4, names, 3, out);
	assert_null(out[1].summary);
	assert_string_equal(out[1].body, "l");
	assert_int_equal(out[2].created_ms, 1000);
	assert_string_equal(out[2].format, "json");
	for (int i = 0; i < 3; i++)
		store_resource_clear(&out[i]);
	store_close(s);
}

/* Lists levels of `kind` with one filter; returns how many match (at most 4). */
static int count_filtered(store *s, const char *kind, store_filter filter)
{
	char *docs[4];
	int n = 0;
	sf_err err = { 0 };
	ok(store_list_levels(s, kind, &filter, 1, 0, 4, docs, NULL, &n, &err), &err);
	for (int i = 0; i < n; i++)
		free(docs[i]);
	return n;
}

/* Migration 0005 gives stored digger levels the tags their kind now declares. */
static void test_level_filters_migrate(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, sf_migrations, 4, &err);
	assert_non_null(s);
	store_close(s);
	raw_exec(f->path, "INSERT INTO levels (id, kind, doc, created_ms) VALUES "
			  "('dig_1', 'digger', '{\"params\":{\"difficulty\":\"hardest\"},"
			  "\"stats\":{\"max_taps\":13,\"recorded_stars\":2}}', 1), "
			  "('dig_2', 'digger', '{\"params\":{\"difficulty\":\"easy\"},"
			  "\"stats\":{\"max_taps\":5}}', 2), "
			  "('lat_1', 'lattice', '{\"params\":{\"difficulty\":\"hardest\"},"
			  "\"stats\":{\"max_taps\":13}}', 3)");
	s = open_ok(f->path, STORE_READWRITE);
	assert_true(store_version(s) >= 5);
	assert_int_equal(
		count_filtered(s, "digger", (store_filter){ "difficulty", "hardest", 0, 0 }), 1);
	assert_int_equal(count_filtered(s, NULL, (store_filter){ "difficulty", "hardest", 0, 0 }),
			 1);
	assert_int_equal(count_filtered(s, NULL, (store_filter){ "difficulty", "easy", 0, 0 }), 1);
	assert_int_equal(count_filtered(s, NULL, (store_filter){ "max_taps", "13", 0, 0 }), 1);
	assert_int_equal(count_filtered(s, NULL, (store_filter){ "max_taps", NULL, 1, 5 }), 2);
	assert_int_equal(count_filtered(s, NULL, (store_filter){ "recorded_stars", NULL, 1, 2 }),
			 1);
	/* Only digger levels: the lattice level's look-alike values got no tag. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM level_tags WHERE level_id = "
					  "'lat_1'"),
			 0);
	store_close(s);
}

/*
 * The kinds' filters (core/kinds.h) fit the store: at most STORE_MAX_TAGS
 * each, names distinct within a kind, and one type per name across kinds
 * (a listing without kind takes any kind's filter).
 */
static void test_kind_filters(void **state)
{
	(void)state;
	for (size_t i = 0; i < sf_kind_count(); i++) {
		const sf_kind *k = sf_kind_at(i);
		int n = 0;
		for (const sf_level_filter *f = k->filters; f && f->name; f++, n++) {
			assert_ptr_equal(sf_kind_filter(k, f->name), f);
			assert_non_null(f->section);
			for (size_t j = 0; j < sf_kind_count(); j++) {
				const sf_level_filter *g = sf_kind_filter(sf_kind_at(j), f->name);
				if (g)
					assert_int_equal(g->type, f->type);
			}
		}
		assert_true(n >= 1);
		assert_true(n <= STORE_MAX_TAGS && n <= SF_KIND_MAX_FILTERS);
	}
	assert_non_null(sf_kind_filter(NULL, "difficulty"));
	assert_non_null(sf_kind_filter(NULL, "sequence"));
	assert_null(sf_kind_filter(NULL, "knd"));
	assert_null(sf_kind_filter(sf_kind_find("digger"), "length"));
	char buf[256];
	assert_string_equal(sf_kind_filter_names(sf_kind_find("lattice"), buf, sizeof buf),
			    "lattice, length, sequence, conformations, max_score, distinct_scores");
}

/* Migration 0003 moves the models a version-2 database holds into resources. */
static void test_px_models_migrate(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = store_open_with(f->path, STORE_READWRITE, sf_migrations, 2, &err);
	assert_non_null(s);
	store_close(s);
	raw_exec(f->path, "INSERT INTO px_models (name, format, body, traces, created) "
			  "VALUES ('old', 'json', '{\"traces\": []}', 1, 1234)");
	s = open_ok(f->path, STORE_READWRITE);
	assert_true(store_version(s) >= 3);
	char *format = NULL, *body = NULL;
	ok(store_get_resource(s, "px_model", "old", &format, &body, &err), &err);
	assert_string_equal(format, "json");
	assert_string_equal(body, "{\"traces\": []}");
	free(format);
	free(body);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT created FROM resources WHERE name = 'old'"),
			 1234);
	assert_int_equal(
		raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'px_models'"), 0);
}

/* ---- a reader beside the writer ---- */

static void test_readonly_handle(void **state)
{
	fixture *f = *state;
	store *w = open_ok(f->path, STORE_READWRITE);
	store *r = open_ok(f->path, STORE_READONLY);
	assert_int_equal(store_version(r), latest(f));
	sf_err err = { 0 };
	char *doc = NULL;
	store_job job;
	assert_int_equal(store_get_job(r, "job_w", &job, &err), 0);
	ok(store_get_evaluation(r, "square", "HPPH", &doc, &err), &err);
	assert_null(doc);

	/* Committed writes are visible to the reader at once. */
	insert(w, "job_w", "lattice");
	ok(store_put_evaluation(w, "square", "HPPH", "{\"e\":1}", &err), &err);
	job = get(r, "job_w");
	assert_int_equal(job.state, JOB_QUEUED);
	store_job_clear(&job);
	ok(store_get_evaluation(r, "square", "HPPH", &doc, &err), &err);
	assert_string_equal(doc, "{\"e\":1}");
	free(doc);
	ok(store_job_started(w, "job_w", &err), &err);
	expect_state(r, "job_w", JOB_RUNNING);

	/* The reader cannot write. */
	store_job mine = new_job("job_r", "lattice", "{}", 1);
	int rc = store_insert_job(r, &mine, NULL, NULL, NULL, &err);
	assert_true(rc < 0);
	assert_int_equal(err.code, rc);
	assert_true(strlen(err.msg) > 0);
	store_job_clear(&mine);
	rc = store_put_evaluation(r, "square", "HH", "{}", &err);
	assert_true(rc < 0 && strlen(err.msg) > 0);
	rc = store_job_cancelled(r, "job_w", NULL, &err);
	assert_true(rc < 0 && strlen(err.msg) > 0);
	char(*ids)[40] = NULL;
	size_t n = 0;
	rc = store_pending_jobs(r, &ids, &n, &err);
	assert_true(rc < 0 && strlen(err.msg) > 0);
	assert_null(ids);
	expect_state(w, "job_w", JOB_RUNNING);
	assert_int_equal(store_get_job(w, "job_r", &job, &err), 0);
	/* The writer still works after the reader's failures. */
	ok(store_job_cancelled(w, "job_w", NULL, &err), &err);
	expect_state(r, "job_w", JOB_CANCELLED);
	store_close(r);
	store_close(w);

	/* A reader alone, after the writer has gone (and taken the -wal file). */
	assert_true(f->pg || access(f->path, F_OK) != -1);
	r = open_ok(f->path, STORE_READONLY);
	expect_state(r, "job_w", JOB_CANCELLED);
	store_close(r);
}

static void test_concurrent_open(void **state)
{
	fixture *f = *state;
	/* Processes racing to create and migrate one new database: each waits
	 * for the lock, finds the work done and skips it. */
	enum { PROCS = 6 };
	pid_t pids[PROCS];
	fflush(NULL);
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			sf_err err = { 0 };
			store *s = store_open(f->path, STORE_READWRITE, &err);
			if (!s) {
				fprintf(stderr, "child %d: %s\n", i, err.msg);
				_exit(1);
			}
			store_job job = { .kind = "lattice", .params = "{}" };
			snprintf(job.id, sizeof job.id, "job_%d", i);
			int rc = store_version(s) != latest(f) ||
				 store_insert_job(s, &job, NULL, NULL, NULL, &err);
			store_close(s);
			_exit(rc ? 2 : 0);
		}
	}
	for (int i = 0; i < PROCS; i++) {
		int status = 0;
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), PROCS);
	assert_int_equal(raw_version(f->path), latest(f));
	if (f->pg) /* each step applied once */
		assert_int_equal(raw_int(f->path, "SELECT count(*) FROM schema_migrations"),
				 latest(f));
}

/* ---- values that look like SQL ---- */

static void test_sql_lookalike_values(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	const char *id = "job_'; DROP TABLE jobs; --";
	const char *kind = "lat\"tice'); DELETE FROM levels; --";
	const char *params = "{\"name\":\"O'Brien; \\\"x\\\"\",\"sql\":\"' OR '1'='1\"}";
	const char *key = "k'; UPDATE jobs SET state='failed'; --";
	store_job job = new_job(id, kind, params, 3);
	int existing = -1;
	ok(store_insert_job(s, &job, key, "h'h", &existing, &err), &err);
	store_job_clear(&job);
	job = new_job("job_other", kind, params, 3);
	ok(store_insert_job(s, &job, key, "h'h", &existing, &err), &err);
	assert_int_equal(existing, 1);
	assert_string_equal(job.id, id);
	assert_string_equal(job.kind, kind);
	assert_string_equal(job.params, params);
	store_job_clear(&job);
	ok(store_job_started(s, id, &err), &err);
	const char *lid = "L'1\"; --";
	const char *ldoc = "{\"q\":\"'; DROP TABLE levels; --\"}";
	store_level lv = level(lid, kind, ldoc);
	tag_text(&lv, "n'ame", "te'xt; --");
	ok(store_job_succeeded(s, id, NULL, &lv, 1, &err), &err);
	job = get(s, id);
	assert_string_equal(job.kind, kind);
	assert_string_equal(job.params, params);
	assert_string_equal(job.level_ids, "[\"L'1\\\"; --\"]"); /* JSON-escaped quote */
	store_job_clear(&job);
	const store_filter fl = { .name = "n'ame", .text = "te'xt; --" };
	const char *const want[] = { ldoc };
	expect_levels(s, kind, &fl, 1, 0, 4, want, 1);
	char *doc = NULL;
	ok(store_get_level(s, lid, &doc, &err), &err);
	assert_string_equal(doc, ldoc);
	free(doc);
	ok(store_put_evaluation(s, "sq'uare", "HP'; --", "{\"x\":\"'\"}", &err), &err);
	ok(store_get_evaluation(s, "sq'uare", "HP'; --", &doc, &err), &err);
	assert_string_equal(doc, "{\"x\":\"'\"}");
	free(doc);
	assert_failed(store_job_failed(s, "job_'--", NULL, "x", &err), &err, SF_EINVAL);
	assert_non_null(strstr(err.msg, "job_'--"));
	store_close(s);
	/* Every table is still there and holds exactly what was put in. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM levels"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs WHERE state = 'succeeded'"),
			 1);
}

/* ---- PostgreSQL only ---- */

/* A PostgreSQL URI of the fixture's server with another schema (and extra query text). */
static void pg_other(const fixture *f, char *out, size_t size, const char *schema,
		     const char *extra)
{
	char base[400];
	snprintf(base, sizeof base, "%s%s", getenv("STARFORGE_TEST_PG"), extra ? extra : "");
	pg_uri(out, size, base, schema);
	(void)f;
}

static void test_pg_fresh_database(void **state)
{
	fixture *f = *state;
	assert_true(store_pg_latest_version() >= 1);
	assert_int_equal(store_pg_latest_version(), (int)sf_pg_migrations_count);
	assert_int_equal(table_exists(f->path, "jobs"), 0); /* the schema does not exist yet */
	store *s = open_ok(f->path, STORE_READWRITE);
	assert_string_equal(store_backend(s), "postgresql");
	assert_int_equal(store_version(s), store_pg_latest_version());
	assert_int_equal(store_backend_latest_version(s), store_pg_latest_version());
	store_close(s);
	assert_int_equal(raw_version(f->path), store_pg_latest_version());
	static const char *const tables[] = {
		"jobs",      "idempotency_keys", "levels", "level_tags",        "evaluations",
		"resources", "job_events",       "nodes",  "schema_migrations", "evaluation_cache"
	};
	for (int i = 0; i < ARRAY_LEN(tables); i++)
		assert_int_equal(table_exists(f->path, tables[i]), 1);
	/* In the schema of the URI, not in public. */
	char sql[200];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM pg_tables WHERE schemaname = '%s' AND tablename = 'jobs'",
		 f->schema);
	assert_int_equal(raw_int(getenv("STARFORGE_TEST_PG"), sql), 1);
	/* Reopening applies nothing again. */
	s = open_ok(f->path, STORE_READWRITE);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM schema_migrations"),
			 store_pg_latest_version());
}

static void test_pg_migrations(void **state)
{
	fixture *f = *state;
	const sf_embedded m[] = {
		MIGRATION("migrations/postgres/0001_t.sql",
			  "CREATE TABLE t (x int, y int DEFAULT 7); INSERT INTO t (x) VALUES (1);"),
		MIGRATION("migrations/postgres/0002_y.sql", "INSERT INTO t VALUES (2, 8);"),
		MIGRATION("migrations/postgres/0003_bad.sql",
			  "CREATE TABLE u (y int); INSERT INTO t (x) VALUES (5);\n"
			  "CREATE TABLE broken (;"),
	};
	sf_err err = { 0 };
	/* Opened three times, a step that is not idempotent runs once. */
	for (int i = 0; i < 3; i++) {
		store *s = store_open_with(f->path, STORE_READWRITE, m, 1, &err);
		if (!s)
			fail_msg("%s", err.msg);
		assert_int_equal(store_version(s), 1);
		assert_int_equal(store_backend_latest_version(s), 1);
		store_close(s);
	}
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM t"), 1);
	/* Upgrade: the data stays and the next step runs. */
	raw_exec(f->path, "INSERT INTO t (x) VALUES (3)");
	store *s = store_open_with(f->path, STORE_READWRITE, m, 2, &err);
	assert_non_null(s);
	assert_int_equal(store_version(s), 2);
	store_close(s);
	assert_int_equal(raw_version(f->path), 2);
	assert_int_equal(raw_int(f->path, "SELECT sum(y) FROM t"), 7 + 7 + 8);
	/* A failing step rolls back whole, its version included. */
	assert_null(store_open_with(f->path, STORE_READWRITE, m, 3, &err));
	assert_true(err.code < 0);
	assert_non_null(strstr(err.msg, "0003_bad.sql"));
	assert_non_null(strstr(err.msg, "syntax error"));
	assert_int_equal(raw_version(f->path), 2);
	assert_int_equal(table_exists(f->path, "u"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM t"), 3);
	/* A step with a BEGIN of its own is refused and rolled back. */
	const sf_embedded begin[] = { m[0], m[1],
				      MIGRATION("migrations/postgres/0003_begin.sql",
						"CREATE TABLE v (z int); BEGIN;") };
	assert_null(store_open_with(f->path, STORE_READWRITE, begin, 3, &err));
	assert_non_null(strstr(err.msg, "0003_begin.sql"));
	assert_int_equal(table_exists(f->path, "v"), 0);
	assert_int_equal(raw_version(f->path), 2);
	/* One that commits on its own is reported (it cannot be undone). */
	const sf_embedded commit[] = { m[0], m[1],
				       MIGRATION("migrations/postgres/0003_commit.sql",
						 "CREATE TABLE w (z int); COMMIT;") };
	assert_null(store_open_with(f->path, STORE_READWRITE, commit, 3, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_non_null(strstr(err.msg, "0003_commit.sql"));
	assert_int_equal(raw_version(f->path), 2);
	/* Newer than the binary: refused, read-write and read-only, nothing changed. */
	for (int mode = STORE_READWRITE; mode <= STORE_READONLY; mode++) {
		assert_null(store_open_with(f->path, mode, m, 1, &err));
		assert_int_equal(err.code, SF_ERANGE);
		assert_true(has_number(err.msg, 2));
		assert_true(has_number(err.msg, 1));
	}
	assert_int_equal(raw_version(f->path), 2);
	/* A bad table is refused before connecting. */
	const sf_embedded gap[] = { m[0], MIGRATION("migrations/postgres/0003_c.sql", "") };
	assert_null(store_open_with(f->path, STORE_READWRITE, gap, 2, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "0003_c.sql"));

	/* Read-only: never creates nor migrates, refuses any other version. */
	char other[512], name[64];
	snprintf(name, sizeof name, "%s_ro", f->schema);
	pg_other(f, other, sizeof other, name, NULL);
	assert_null(store_open(other, STORE_READONLY, &err));
	assert_int_equal(err.code, SF_ERANGE);
	assert_true(has_number(err.msg, 0));
	assert_true(has_number(err.msg, store_pg_latest_version()));
	assert_int_equal(raw_int(getenv("STARFORGE_TEST_PG"),
				 "SELECT count(*) FROM pg_namespace WHERE nspname LIKE '%\\_ro'"),
			 0);
}

static void test_pg_open_errors(void **state)
{
	(void)state;
	sf_err err = { 0 };
	/* No server there: SF_ESYS, and the message never shows the password. */
	assert_null(store_open("postgresql://someone:s3cretpw@/starforge?host=/nonexistent_sf_dir",
			       STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_true(strlen(err.msg) > 0);
	assert_null(strstr(err.msg, "s3cretpw"));
	assert_null(store_open("postgres://x@/y?host=/nonexistent_sf_dir", STORE_READONLY, &err));
	assert_int_equal(err.code, SF_ESYS);
	assert_null(store_open("postgresql://x@/y?host=/nonexistent_sf_dir", 7, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_true(has_number(err.msg, 7));
	/* A URI libpq cannot parse. */
	assert_null(store_open("postgresql://[bad", STORE_READWRITE, &err));
	assert_int_equal(err.code, SF_ESYS);
}

/* Two handles on one database see each other's writes at once, and race fairly. */
static void test_pg_two_handles(void **state)
{
	fixture *f = *state;
	store *a = open_ok(f->path, STORE_READWRITE);
	store *b = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	int64_t s1 = insert(a, "job_1", "lattice");
	int64_t s2 = insert(b, "job_2", "lattice");
	assert_true(s2 > s1);
	expect_state(b, "job_1", JOB_QUEUED);
	ok(store_job_started(b, "job_1", &err), &err);
	expect_state(a, "job_1", JOB_RUNNING);
	ok(store_put_evaluation(b, "square", "HPPH", "{\"e\":1}", &err), &err);
	char *doc = NULL;
	ok(store_get_evaluation(a, "square", "HPPH", &doc, &err), &err);
	assert_string_equal(doc, "{\"e\":1}");
	free(doc);
	/* A cancel on one node and a success on the other: the first wins, the second is told. */
	ok(store_job_cancelled(a, "job_1", NULL, &err), &err);
	store_level lv = level("L1", "lattice", "{}");
	assert_failed(store_job_succeeded(b, "job_1", NULL, &lv, 1, &err), &err, SF_ERANGE);
	assert_non_null(strstr(err.msg, "cancelled, cannot become succeeded"));
	ok(store_get_level(a, "L1", &doc, &err), &err);
	assert_null(doc); /* the loser wrote nothing */
	/* The same Idempotency-Key from both: one job. */
	store_job j = new_job("job_k1", "lattice", "{}", 1);
	int existing = -1;
	ok(store_insert_job(a, &j, "key", "h", &existing, &err), &err);
	store_job_clear(&j);
	j = new_job("job_k2", "lattice", "{}", 1);
	ok(store_insert_job(b, &j, "key", "h", &existing, &err), &err);
	assert_int_equal(existing, 1);
	assert_string_equal(j.id, "job_k1");
	store_job_clear(&j);
	int64_t counts[5];
	ok(store_count_jobs(b, counts, &err), &err);
	assert_int_equal(counts[JOB_QUEUED], 2);
	assert_int_equal(counts[JOB_CANCELLED], 1);
	store_close(a);
	store_close(b);
}

typedef struct opener {
	const char *uri;
	int version;
	sf_err err;
} opener;

static void *open_thread(void *arg)
{
	opener *o = arg;
	store *s = store_open(o->uri, STORE_READWRITE, &o->err);
	o->version = s ? store_version(s) : -1;
	store_close(s);
	return NULL;
}

/* Threads racing to create and migrate one new schema: each step is applied once. */
static void test_pg_concurrent_open_threads(void **state)
{
	fixture *f = *state;
	enum { THREADS = 8 };
	pthread_t t[THREADS];
	opener o[THREADS];
	for (int i = 0; i < THREADS; i++) {
		o[i] = (opener){ .uri = f->path };
		assert_int_equal(pthread_create(&t[i], NULL, open_thread, &o[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (o[i].version != store_pg_latest_version())
			fail_msg("thread %d: %s", i, o[i].err.msg);
	}
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM schema_migrations"),
			 store_pg_latest_version());
	assert_int_equal(raw_version(f->path), store_pg_latest_version());
}

/* SQLSTATE 25006: the seam, then a database made read-only for real. */
static void test_pg_unwritable(void **state)
{
	fixture *f = *state;
	sf_err err = { 0 };
	store *s = open_ok(f->path, STORE_READWRITE);
	insert(s, "job_1", "lattice");
	const char *msg = NULL;
	assert_int_equal(store_write_fault(s, &msg), STORE_OK);
	assert_string_equal(msg, "");
	ok(store_simulate_fault(s, STORE_UNWRITABLE, &err), &err);
	store_job j = new_job("job_2", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &j, NULL, NULL, NULL, &err), &err, SF_ESYS);
	store_job_clear(&j);
	assert_int_equal(store_write_fault(s, &msg), STORE_UNWRITABLE);
	assert_non_null(strstr(msg, "read-only"));
	assert_failed(store_job_started(s, "job_1", &err), &err, SF_ESYS);
	expect_state(s, "job_1", JOB_QUEUED); /* reads go on */
	assert_int_equal(store_get_job(s, "job_2", &j, &err), 0);
	assert_failed(store_probe_write(s, &err), &err, SF_ESYS);
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE);
	ok(store_simulate_fault(s, STORE_OK, &err), &err);
	assert_int_equal(store_write_fault(s, NULL), STORE_UNWRITABLE); /* sticky */
	ok(store_probe_write(s, &err), &err);
	assert_int_equal(store_write_fault(s, &msg), STORE_OK);
	assert_string_equal(msg, "");
	ok(store_job_started(s, "job_1", &err), &err);
	assert_failed(store_simulate_fault(s, STORE_FULL, &err), &err, SF_EINVAL);
	assert_non_null(strstr(err.msg, "PostgreSQL"));
	store_close(s);

	/* The database itself read-only, as a standby is: ALTER DATABASE. */
	char db[48], extra[80], uri[512], sql[160];
	snprintf(db, sizeof db, "sf_ro_%d", (int)getpid());
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
	raw_exec(getenv("STARFORGE_TEST_PG"), sql);
	snprintf(extra, sizeof extra, "&dbname=%s", db);
	pg_other(f, uri, sizeof uri, "sf_ro", extra);
	store *before = open_ok(uri, STORE_READWRITE);
	insert(before, "job_1", "lattice");
	snprintf(sql, sizeof sql, "ALTER DATABASE %s SET default_transaction_read_only = on", db);
	raw_exec(getenv("STARFORGE_TEST_PG"), sql);
	store *w = open_ok(uri, STORE_READWRITE); /* opening only reads */
	j = new_job("job_2", "lattice", "{}", 1);
	assert_failed(store_insert_job(w, &j, NULL, NULL, NULL, &err), &err, SF_ESYS);
	store_job_clear(&j);
	assert_int_equal(store_write_fault(w, &msg), STORE_UNWRITABLE);
	assert_non_null(strstr(msg, "read-only"));
	expect_state(w, "job_1", JOB_QUEUED);
	assert_failed(store_probe_write(w, &err), &err, SF_ESYS);
	assert_int_equal(store_write_fault(w, NULL), STORE_UNWRITABLE);
	snprintf(sql, sizeof sql, "ALTER DATABASE %s RESET default_transaction_read_only", db);
	raw_exec(getenv("STARFORGE_TEST_PG"), sql);
	ok(store_probe_write(w, &err), &err); /* a new session: writable again */
	assert_int_equal(store_write_fault(w, NULL), STORE_OK);
	insert(w, "job_2", "lattice");
	store_close(before);
	store_close(w);
	snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
	raw_exec(getenv("STARFORGE_TEST_PG"), sql);
}

/* Documents, params and bodies come back byte for byte (strong ETags depend on it). */
static void test_pg_bytes(void **state)
{
	fixture *f = *state;
	store *s = open_ok(f->path, STORE_READWRITE);
	sf_err err = { 0 };
	const char *params =
		"{ \"a\" :\t1 ,\n\r\n \"\xc3\xa9\" : \"\\u00e9 \xe2\x9c\x93 "
		"\xf0\x9d\x84\x9e\", \"n\": 1.0e0 , \"z\":-0.0 ,\"q\":\"\\\"\\\\\" }  \n";
	store_job j = new_job("job_b", "lattice", params, 5);
	ok(store_insert_job(s, &j, NULL, NULL, NULL, &err), &err);
	store_job_clear(&j);
	j = get(s, "job_b");
	assert_string_equal(j.params, params);
	store_job_clear(&j);
	ok(store_job_started(s, "job_b", &err), &err);
	const char *doc1 = "\xef\xbb\xbf{\"id\":\"L\\\"1\",  \"t\":\"{a,b}\\\\NULL\" "
			   ",\"u\":\"\xe6\x97\xa5\"}\n";
	const char *doc2 = "{\"id\": \"L2\"}\t";
	store_level lv[2] = { level("L\"1", "lattice", doc1), level("L2", "lattice", doc2) };
	/* Tag values that need quoting in an array literal. */
	tag_text(&lv[0], "na\"me", "te,xt{}\\");
	tag_text(&lv[0], "null", "NULL");
	tag_num(&lv[0], "big", 1e308);
	tag_num(&lv[0], "tiny", 5e-324);
	tag_num(&lv[1], "big", -0.0);
	ok(store_job_succeeded(s, "job_b", NULL, lv, 2, &err), &err);
	char *doc = NULL;
	ok(store_get_level(s, "L\"1", &doc, &err), &err);
	assert_string_equal(doc, doc1);
	free(doc);
	const char *const both[] = { doc2, doc1 };
	expect_levels(s, "lattice", NULL, 0, 0, 4, both, 2);
	const store_filter quoted = { .name = "na\"me", .text = "te,xt{}\\" };
	expect_levels(s, NULL, &quoted, 1, 0, 4, both + 1, 1);
	const store_filter null_text = { .name = "null", .text = "NULL" };
	expect_levels(s, NULL, &null_text, 1, 0, 4, both + 1, 1);
	const store_filter big = { .name = "big", .has_min = 1, .min = 1e308 };
	expect_levels(s, NULL, &big, 1, 0, 4, both + 1, 1);
	const store_filter zero = { .name = "big", .has_min = 1, .min = 0 };
	expect_levels(s, NULL, &zero, 1, 0, 4, both, 2);
	const store_filter tiny = { .name = "tiny", .has_min = 1, .min = 5e-324 };
	expect_levels(s, NULL, &tiny, 1, 0, 4, both + 1, 1);
	j = get(s, "job_b");
	assert_string_equal(j.level_ids, "[\"L\\\"1\",\"L2\"]");
	store_job_clear(&j);
	/* Evaluations in a batch with quotes, backslashes and a repeated key (the last wins). */
	store_evaluation e[3] = { { "square", "H\"P", "{\"a\":\"\\\\\"}" },
				  { "cubic", "HP,{}", " {\"b\" : [1, 2]}\r\n" },
				  { "square", "H\"P", "{\"a\":2}" } };
	ok(store_put_evaluations(s, e, 3, &err), &err);
	ok(store_get_evaluation(s, "square", "H\"P", &doc, &err), &err);
	assert_string_equal(doc, "{\"a\":2}");
	free(doc);
	ok(store_get_evaluation(s, "cubic", "HP,{}", &doc, &err), &err);
	assert_string_equal(doc, e[1].doc);
	free(doc);
	/* Resources: CR LF and trailing blanks kept. */
	const char *body = "speed,intensity\r\n0.5,0.25 \r\n\xce\xbb,1\n\n";
	ok(store_put_resource(s, "px_model", "m\xc3\xb6", "csv", body, NULL, &err), &err);
	char *format = NULL, *got = NULL;
	ok(store_get_resource(s, "px_model", "m\xc3\xb6", &format, &got, &err), &err);
	assert_string_equal(got, body);
	free(format);
	free(got);
	store_close(s);
}

/*
 * Ends the server sessions of application `app` (the store's own, named
 * in its URI) and waits until they are gone, as a server restart would.
 */
static void terminate(const char *app)
{
	char sql[200];
	snprintf(sql, sizeof sql,
		 "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
		 "WHERE application_name = '%s'",
		 app);
	assert_int_equal(raw_int(getenv("STARFORGE_TEST_PG"), sql), 1);
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s'", app);
	for (int i = 0; i < 200 && raw_int(getenv("STARFORGE_TEST_PG"), sql) > 0; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
}

/* Batches: savepoints per call, one commit; a lost connection rolls the batch back whole. */
static void test_pg_batch(void **state)
{
	fixture *f = *state;
	char app[64], extra[96], uri[512];
	snprintf(app, sizeof app, "sf_batch_%d", (int)getpid());
	snprintf(extra, sizeof extra, "&application_name=%s", app);
	pg_other(f, uri, sizeof uri, f->schema, extra);
	store *s = open_ok(uri, STORE_READWRITE);
	store *r = open_ok(f->path, STORE_READONLY);
	sf_err err = { 0 };
	store_job j;
	ok(store_batch_begin(s, &err), &err);
	assert_failed(store_batch_begin(s, &err), &err, SF_EINVAL);
	insert(s, "job_1", "lattice");
	store_job dup = new_job("job_1", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &dup, NULL, NULL, NULL, &err), &err, SF_EINVAL);
	store_job_clear(&dup);
	assert_failed(store_job_started(s, "job_404", &err), &err, SF_EINVAL);
	insert(s, "job_2", "lattice");
	ok(store_job_started(s, "job_2", &err), &err);
	expect_state(s, "job_2", JOB_RUNNING);                    /* the batch sees its writes */
	assert_int_equal(store_get_job(r, "job_1", &j, &err), 0); /* others do not, yet */
	assert_failed(store_probe_write(s, &err), &err, SF_EINVAL);
	assert_failed(store_simulate_fault(s, STORE_UNWRITABLE, &err), &err, SF_EINVAL);
	ok(store_batch_end(s, 1, &err), &err);
	expect_state(r, "job_1", JOB_QUEUED);
	expect_state(r, "job_2", JOB_RUNNING);
	assert_failed(store_batch_end(s, 1, &err), &err, SF_EINVAL);

	/* Rolled back: nothing recorded. */
	ok(store_batch_begin(s, &err), &err);
	insert(s, "job_3", "lattice");
	ok(store_batch_end(s, 0, &err), &err);
	assert_int_equal(store_get_job(r, "job_3", &j, &err), 0);

	/* The connection lost inside a batch: the whole batch goes, later writes are refused. */
	ok(store_batch_begin(s, &err), &err);
	insert(s, "job_4", "lattice");
	terminate(app);
	store_job lost = new_job("job_5", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &lost, NULL, NULL, NULL, &err), &err, SF_ESYS);
	store_job_clear(&lost);
	lost = new_job("job_6", "lattice", "{}", 1);
	assert_failed(store_insert_job(s, &lost, NULL, NULL, NULL, &err), &err, SF_ESYS);
	assert_non_null(strstr(err.msg, "batch was rolled back"));
	store_job_clear(&lost);
	expect_state(s, "job_1", JOB_QUEUED); /* reads go on, reconnected */
	assert_int_equal(store_get_job(s, "job_4", &j, &err), 0);
	assert_failed(store_batch_end(s, 1, &err), &err, SF_ESYS);
	/* Outside a batch the store goes on, on a new connection. */
	insert(s, "job_7", "lattice");
	expect_state(r, "job_7", JOB_QUEUED);
	assert_int_equal(store_get_job(r, "job_4", &j, &err), 0);

	/* A session ended between calls (a server restart): the next call reconnects first. */
	terminate(app);
	expect_state(s, "job_1", JOB_QUEUED);
	terminate(app);
	insert(s, "job_8", "lattice");
	assert_int_equal(store_lock_exclusive(s, &err), 0);
	store_close(r);
	store_close(s);
}

/* Tests that hold every back end to store.h, run once per back end (main()). */
#define CONTRACT_TESTS(setup_fn)                                                                  \
	cmocka_unit_test_setup_teardown(test_jobs_insert_get_list, setup_fn, teardown),           \
		cmocka_unit_test_setup_teardown(test_idempotency, setup_fn, teardown),            \
		cmocka_unit_test_setup_teardown(test_transitions, setup_fn, teardown),            \
		cmocka_unit_test_setup_teardown(test_pending_after_crash, setup_fn, teardown),    \
		cmocka_unit_test_setup_teardown(test_levels, setup_fn, teardown),                 \
		cmocka_unit_test_setup_teardown(test_evaluations, setup_fn, teardown),            \
		cmocka_unit_test_setup_teardown(test_evaluation_lru, setup_fn, teardown),         \
		cmocka_unit_test_setup_teardown(test_evaluation_lru_upgrade, setup_fn, teardown), \
		cmocka_unit_test_setup_teardown(test_resources, setup_fn, teardown),              \
		cmocka_unit_test_setup_teardown(test_resource_listing, setup_fn, teardown),       \
		cmocka_unit_test_setup_teardown(test_readonly_handle, setup_fn, teardown),        \
		cmocka_unit_test_setup_teardown(test_concurrent_open, setup_fn, teardown),        \
		cmocka_unit_test_setup_teardown(test_sql_lookalike_values, setup_fn, teardown)

int main(void)
{
	const struct CMUnitTest sqlite_tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_does_not_reapply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_database_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_refuses_older_database, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failing_migration_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_foreign_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_migration_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test(test_memory_database),
		cmocka_unit_test(test_job_state_names),
		cmocka_unit_test_setup_teardown(test_px_models_migrate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resources_migrate_listing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filters_migrate, setup, teardown),
		cmocka_unit_test(test_kind_filters),
		CONTRACT_TESTS(setup),
	};
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test_setup_teardown(test_pg_fresh_database, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_pg_migrations, setup_pg, teardown),
		cmocka_unit_test(test_pg_open_errors),
		cmocka_unit_test_setup_teardown(test_pg_two_handles, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_pg_concurrent_open_threads, setup_pg,
						teardown),
		cmocka_unit_test_setup_teardown(test_pg_unwritable, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_pg_bytes, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_pg_batch, setup_pg, teardown),
		CONTRACT_TESTS(setup_pg),
	};
	const char *pg = getenv("STARFORGE_TEST_PG");
	if (!pg || !*pg) {
		printf("[  SKIPPED ] store: postgresql: STARFORGE_TEST_PG is not set (make test "
		       "sets it; by hand: sh tests/pg/cluster.sh build/tests/test_store)\n");
		fflush(stdout);
	}
	int failed = cmocka_run_group_tests_name("store: sqlite", sqlite_tests, NULL, NULL);
	if (!pg || !*pg)
		return failed;
	return failed + cmocka_run_group_tests_name("store: postgresql", pg_tests, NULL, NULL);
}
