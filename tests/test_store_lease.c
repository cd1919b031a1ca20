/*
 * test_store_lease.c - leases, claims and fencing in the store (store.h:
 * store_claim_job(), store_job_heartbeat(), the fenced outcomes,
 * store_rescue_expired(), store_request_cancel()), on both back ends:
 * every case runs once on SQLite (a file in a fresh folder) and once on
 * PostgreSQL (a schema of its own in the database STARFORGE_TEST_PG names,
 * tests/pg/cluster.sh; skipped without it), through the fixture of
 * store_support.h.
 *
 * Expiry is real, not simulated: a lease of 1 ms and a short sleep. What a
 * lost node must not have written (a level of a fenced success that was
 * refused) is checked through the store's reads; a queued job whose cancel
 * is pending (which the API alone cannot make) is written with a raw
 * connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../server/base/embedded.h"
#include "../server/store/store.h"
#include "../server/store/store_pg.h"
#include "store_support.h"

/* ---- helpers ---- */

static store *open_rw(const char *path)
{
	sf_err err = { 0 };
	store *s = store_open(path, STORE_READWRITE, &err);
	if (!s)
		fail_msg("store_open(%s): %s", path, err.msg);
	return s;
}

static void insert(store *s, const char *id)
{
	sf_err err = { 0 };
	store_job job = { .seed = 7 };
	snprintf(job.id, sizeof job.id, "%s", id);
	job.kind = strdup("lattice");
	job.params = strdup("{\"length\":8}");
	ok(store_insert_job(s, &job, NULL, NULL, NULL, &err), &err);
	assert_int_equal(job.attempt, 0);
	assert_int_equal(job.lost, 0);
	assert_string_equal(job.lease_owner, "");
	assert_int_equal(job.lease_until_ms, 0);
	store_job_clear(&job);
}

/* Claims the next job as `owner`; asserts that there is one, and that it is `want` when given. */
static store_job claim(store *s, const char *owner, int lease_ms, const char *want)
{
	sf_err err = { 0 };
	store_job job;
	int rc = store_claim_job(s, owner, lease_ms, &job, &err);
	if (rc != 1)
		fail_msg("claim by %s: %d %s", owner, rc, err.msg);
	if (want)
		assert_string_equal(job.id, want);
	assert_int_equal(job.state, JOB_RUNNING);
	assert_string_equal(job.lease_owner, owner);
	return job;
}

static store_fence fence_of(const store_job *job)
{
	store_fence f = { .attempt = job->attempt };
	snprintf(f.owner, sizeof f.owner, "%s", job->lease_owner);
	return f;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs `sql` on a connection of its own, bypassing the store. */
static void raw_exec(const fixture *f, const char *sql)
{
	if (f->pg) {
		PGconn *c = PQconnectdb(f->path);
		PGresult *res = PQexec(c, sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			fail_msg("raw_exec(%s): %s", sql, PQerrorMessage(c));
		PQclear(res);
		PQfinish(c);
		return;
	}
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("raw_exec(%s): %s", sql, msg ? msg : "?");
	sqlite3_free(msg);
	sqlite3_close(db);
}

/* The database's clock now (PostgreSQL), Unix ms. */
static int64_t pg_clock_ms(const fixture *f)
{
	PGconn *c = PQconnectdb(f->path);
	PGresult *res =
		PQexec(c, "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	int64_t v = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(c);
	return v;
}

static int setup_sqlite(void **state)
{
	return fixture_setup(state, "lease", "starforge.db", 0);
}

static int setup_pg(void **state)
{
	return fixture_setup(state, "lease", "", 1);
}

/* ---- claims ---- */

/* Oldest first, every field of the claim, 0 on an empty queue, the arguments. */
static void test_claim_order(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	store_job none = { .attempt = -7 };
	assert_int_equal(store_claim_job(s, "node-a", 1000, &none, &err), 0);
	assert_int_equal(none.attempt, -7); /* untouched */
	insert(s, "job_1");
	insert(s, "job_2");
	insert(s, "job_3");

	int64_t before = wall_ms();
	store_job a = claim(s, "node-a", 30000, "job_1");
	assert_int_equal(a.attempt, 1);
	assert_int_equal(a.lost, 0);
	assert_int_equal(a.cancel_requested, 0);
	assert_int_equal(a.lease_until_ms - a.started_ms, 30000);
	assert_true(a.started_ms >= before - 2000 && a.started_ms <= wall_ms() + 2000);
	assert_int_equal(a.generation, 0);
	assert_int_equal(a.finished_ms, 0);
	assert_string_equal(a.kind, "lattice");
	assert_string_equal(a.params, "{\"length\":8}");
	assert_int_equal(a.seed, 7);
	/* What the claim returned is what is stored. */
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_RUNNING);
	assert_int_equal(g.attempt, 1);
	assert_string_equal(g.lease_owner, "node-a");
	assert_int_equal(g.lease_until_ms, a.lease_until_ms);
	assert_int_equal(g.started_ms, a.started_ms);
	store_job_clear(&g);
	store_job_clear(&a);

	store_job b = claim(s, "node-b", 1000, "job_2");
	store_job c = claim(s, "node-a", 1000, "job_3");
	store_job_clear(&b);
	store_job_clear(&c);
	assert_int_equal(store_claim_job(s, "node-a", 1000, &none, &err), 0);

	/* The listing fills the lease fields too. */
	store_job listed[3];
	int n = 0;
	ok(store_list_jobs(s, JOB_RUNNING, NULL, 0, 3, listed, &n, &err), &err);
	assert_int_equal(n, 3);
	assert_string_equal(listed[0].id, "job_3");
	assert_string_equal(listed[0].lease_owner, "node-a");
	assert_int_equal(listed[1].attempt, 1);
	assert_string_equal(listed[1].lease_owner, "node-b");
	for (int i = 0; i < n; i++)
		store_job_clear(&listed[i]);

	/* Arguments: an owner of 1..63 characters, a lease of 1 ms to a day. */
	char long_owner[80];
	memset(long_owner, 'x', 64);
	long_owner[64] = '\0';
	assert_int_equal(store_claim_job(s, "", 1000, &none, &err), SF_EINVAL);
	assert_int_equal(store_claim_job(s, NULL, 1000, &none, &err), SF_EINVAL);
	assert_int_equal(store_claim_job(s, long_owner, 1000, &none, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "1..63"));
	long_owner[63] = '\0';
	assert_int_equal(store_claim_job(s, long_owner, 1000, &none, &err), 0); /* 63: fine */
	assert_int_equal(store_claim_job(s, "node-a", 0, &none, &err), SF_EINVAL);
	assert_int_equal(store_claim_job(s, "node-a", 86400001, &none, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "lease_ms"));
	assert_int_equal(store_claim_job(s, "node-a", 1000, NULL, &err), SF_EINVAL);
	assert_int_equal(store_claim_job(NULL, "node-a", 1000, &none, &err), SF_EINVAL);
	store_close(s);
}

/* A queued job whose cancel is pending is never claimed. */
static void test_claim_skips_cancel_requested(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	insert(s, "job_2");
	raw_exec(f, "UPDATE jobs SET cancel_requested = (1 = 1) WHERE id = 'job_1'");
	store_job j = claim(s, "node-a", 1000, "job_2");
	store_job_clear(&j);
	assert_int_equal(store_claim_job(s, "node-a", 1000, &j, &err), 0);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_int_equal(g.cancel_requested, 1);
	store_job_clear(&g);
	store_close(s);
}

enum { RACE_JOBS = 60, RACE_THREADS = 4 };

typedef struct racer {
	const char *path;
	char owner[16];
	int claimed[RACE_JOBS]; /* how often this thread claimed job_<i> */
	int count;
	char failure[320];
} racer;

/* One node: its own handle, claiming until the queue stays empty. */
static void *race(void *arg)
{
	racer *r = arg;
	sf_err err = { 0 };
	store *s = store_open(r->path, STORE_READWRITE, &err);
	if (!s) {
		snprintf(r->failure, sizeof r->failure, "open: %s", err.msg);
		return NULL;
	}
	for (int empty = 0; empty < 5;) {
		store_job job;
		int rc = store_claim_job(s, r->owner, 60000, &job, &err);
		if (rc < 0) {
			snprintf(r->failure, sizeof r->failure, "claim: %s", err.msg);
			break;
		}
		if (rc == 0) { /* empty, or (PostgreSQL) every queued row locked by a rival */
			empty++;
			sleep_ms(2);
			continue;
		}
		empty = 0;
		int i = atoi(job.id + 4);
		if (i >= 0 && i < RACE_JOBS)
			r->claimed[i]++;
		r->count++;
		store_job_clear(&job);
	}
	store_close(s);
	return NULL;
}

/* Nodes claiming at once from one queue: every job claimed exactly once. */
static void test_claim_concurrent(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	ok(store_batch_begin(s, &err), &err);
	for (int i = 0; i < RACE_JOBS; i++) {
		char id[16];
		snprintf(id, sizeof id, "job_%d", i);
		insert(s, id);
	}
	ok(store_batch_end(s, 1, &err), &err);
	static racer racers[RACE_THREADS];
	pthread_t threads[RACE_THREADS];
	for (int t = 0; t < RACE_THREADS; t++) {
		memset(&racers[t], 0, sizeof racers[t]);
		racers[t].path = f->path;
		snprintf(racers[t].owner, sizeof racers[t].owner, "node-%d", t);
		assert_int_equal(pthread_create(&threads[t], NULL, race, &racers[t]), 0);
	}
	for (int t = 0; t < RACE_THREADS; t++)
		pthread_join(threads[t], NULL);
	int total = 0;
	for (int t = 0; t < RACE_THREADS; t++) {
		if (racers[t].failure[0])
			fail_msg("%s: %s", racers[t].owner, racers[t].failure);
		total += racers[t].count;
	}
	assert_int_equal(total, RACE_JOBS);
	for (int i = 0; i < RACE_JOBS; i++) {
		int times = 0;
		char id[16];
		snprintf(id, sizeof id, "job_%d", i);
		for (int t = 0; t < RACE_THREADS; t++)
			times += racers[t].claimed[i];
		if (times != 1)
			fail_msg("%s claimed %d times", id, times);
		store_job g = get(s, id);
		assert_int_equal(g.state, JOB_RUNNING);
		assert_int_equal(g.attempt, 1);
		store_job_clear(&g);
	}
	store_close(s);
}

/* ---- heartbeats ---- */

static void test_heartbeat(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	store_job j = claim(s, "node-a", 10000, "job_1");
	store_fence fence = fence_of(&j);
	sleep_ms(20);
	int cancel = -1;
	ok(store_job_heartbeat(s, "job_1", &fence, 20000, 3, 10, 0.75, &cancel, &err), &err);
	assert_int_equal(cancel, 0);
	store_job g = get(s, "job_1");
	assert_true(g.lease_until_ms >= j.lease_until_ms + 10000 + 20);
	assert_int_equal(g.generation, 3);
	assert_int_equal(g.generations, 10);
	assert_true(g.best == 0.75);
	assert_int_equal(g.started_ms, j.started_ms);
	store_job_clear(&g);

	/* A cancel asked for reaches the owner at its next heartbeat. */
	job_state st = JOB_QUEUED;
	assert_int_equal(store_request_cancel(s, "job_1", &st, &err), 1);
	assert_int_equal(st, JOB_RUNNING);
	ok(store_job_heartbeat(s, "job_1", &fence, 20000, 4, 10, 0.8, &cancel, &err), &err);
	assert_int_equal(cancel, 1);
	ok(store_job_heartbeat(s, "job_1", &fence, 20000, 4, 10, 0.8, NULL, &err), &err);

	/* Another owner or attempt: lost, nothing written, err untouched. */
	store_fence other = fence;
	other.attempt = 2;
	sf_err untouched = { .code = 99 };
	assert_int_equal(
		store_job_heartbeat(s, "job_1", &other, 20000, 9, 10, 0.9, &cancel, &untouched),
		STORE_LOST);
	assert_int_equal(untouched.code, 99);
	assert_int_equal(cancel, 0);
	snprintf(other.owner, sizeof other.owner, "node-b");
	other.attempt = fence.attempt;
	assert_int_equal(store_job_heartbeat(s, "job_1", &other, 20000, 9, 10, 0.9, NULL, &err),
			 STORE_LOST);
	g = get(s, "job_1");
	assert_int_equal(g.generation, 4);
	store_job_clear(&g);
	/* Unknown id, no fence, a bad lease. */
	assert_int_equal(store_job_heartbeat(s, "job_x", &fence, 1000, 0, 0, 0, NULL, &err),
			 SF_EINVAL);
	assert_int_equal(store_job_heartbeat(s, "job_1", NULL, 1000, 0, 0, 0, NULL, &err),
			 SF_EINVAL);
	assert_int_equal(store_job_heartbeat(s, "job_1", &fence, 0, 0, 0, 0, NULL, &err),
			 SF_EINVAL);
	/* A final job: lost too. */
	ok(store_job_cancelled(s, "job_1", &fence, &err), &err);
	assert_int_equal(store_job_heartbeat(s, "job_1", &fence, 1000, 0, 0, 0, NULL, &err),
			 STORE_LOST);
	store_job_clear(&j);
	store_close(s);
}

/* ---- fencing after a rescue ---- */

static store_level one_level(const char *id)
{
	store_level lv = { .id = id, .kind = "lattice", .doc = "{\"x\":1}", .ntags = 1 };
	lv.tag_name[0] = "lattice";
	lv.tag_text[0] = "square";
	return lv;
}

static void test_lost_owner_writes_nothing(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	store_job a = claim(s, "node-a", 1, "job_1");
	store_fence fa = fence_of(&a);
	sleep_ms(30);
	store_rescued out[4];
	int n = -1;
	ok(store_rescue_expired(s, 3, out, 4, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].id, "job_1");
	assert_int_equal(out[0].state, JOB_QUEUED);
	assert_int_equal(out[0].attempt, 1);
	assert_int_equal(out[0].lost, 1);
	assert_string_equal(out[0].kind, "lattice"); /* for the log line */
	assert_int_equal(out[0].seed, 7);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_int_equal(g.attempt, 1);
	assert_int_equal(g.lost, 1);
	assert_string_equal(g.lease_owner, "");
	assert_int_equal(g.lease_until_ms, 0);
	assert_int_equal(g.started_ms, 0);
	store_job_clear(&g);

	store_job b = claim(s, "node-b", 60000, "job_1");
	assert_int_equal(b.attempt, 2);
	assert_int_equal(b.lost, 1);
	store_fence fb = fence_of(&b);

	/* node-a comes back: every write it tries is refused, and writes nothing. */
	store_level lv = one_level("L_late");
	sf_err untouched = { .code = 99 };
	assert_int_equal(store_job_heartbeat(s, "job_1", &fa, 1000, 1, 2, 3, NULL, &untouched),
			 STORE_LOST);
	assert_int_equal(store_job_succeeded(s, "job_1", &fa, &lv, 1, &untouched), STORE_LOST);
	assert_int_equal(store_job_failed(s, "job_1", &fa, "late", &untouched), STORE_LOST);
	assert_int_equal(store_job_cancelled(s, "job_1", &fa, &untouched), STORE_LOST);
	assert_int_equal(store_job_requeue(s, "job_1", &fa, &untouched), STORE_LOST);
	assert_int_equal(untouched.code, 99);
	char *doc = (char *)"x";
	ok(store_get_level(s, "L_late", &doc, &err), &err);
	assert_null(doc);
	g = get(s, "job_1");
	assert_int_equal(g.state, JOB_RUNNING);
	assert_string_equal(g.lease_owner, "node-b");
	assert_int_equal(g.attempt, 2);
	store_job_clear(&g);

	/* node-b, which holds the lease, records its success with its levels. */
	store_level mine = one_level("L_b");
	ok(store_job_succeeded(s, "job_1", &fb, &mine, 1, &err), &err);
	ok(store_get_level(s, "L_b", &doc, &err), &err);
	assert_non_null(doc);
	free(doc);
	g = get(s, "job_1");
	assert_int_equal(g.state, JOB_SUCCEEDED);
	assert_string_equal(g.lease_owner, "");
	assert_int_equal(g.lease_until_ms, 0);
	assert_int_equal(g.attempt, 2);
	assert_string_equal(g.level_ids, "[\"L_b\"]");
	store_job_clear(&g);
	/* Final: a fenced outcome is lost, even with the right fence; an unknown id is not. */
	assert_int_equal(store_job_failed(s, "job_1", &fb, "again", &err), STORE_LOST);
	assert_int_equal(store_job_failed(s, "job_x", &fb, "x", &err), SF_EINVAL);
	store_fence bad = { .owner = "", .attempt = 1 };
	assert_int_equal(store_job_cancelled(s, "job_1", &bad, &err), SF_EINVAL);
	store_job_clear(&a);
	store_job_clear(&b);
	store_close(s);
}

/* ---- rescue ---- */

static void test_rescue_max_lost(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	insert(s, "job_old"); /* started the single-node way: no lease, never rescued */
	store_rescued out[4];
	int n = -1;
	for (int round = 1; round <= 2; round++) {
		store_job j = claim(s, "node-a", 1, "job_1");
		assert_int_equal(j.attempt, round);
		store_job_clear(&j);
		sleep_ms(30);
		ok(store_rescue_expired(s, 2, out, 4, &n, &err), &err);
		assert_int_equal(n, 1);
		assert_int_equal(out[0].lost, round);
		assert_int_equal(out[0].attempt, round);
		assert_int_equal(out[0].state, round < 2 ? JOB_QUEUED : JOB_FAILED);
		if (round == 1) {
			ok(store_job_started(s, "job_old", &err), &err);
			store_job old = get(s, "job_old");
			assert_int_equal(old.attempt, 0);
			assert_string_equal(old.lease_owner, "");
			store_job_clear(&old);
		}
	}
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_FAILED);
	assert_int_equal(g.lost, 2);
	assert_string_equal(g.error, "the job lost its node 2 times (its lease expired each "
				     "time); it is not retried");
	assert_true(g.finished_ms > 0);
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);
	ok(store_rescue_expired(s, 2, out, 4, &n, &err), &err);
	assert_int_equal(n, 0);
	g = get(s, "job_old");
	assert_int_equal(g.state, JOB_RUNNING);
	assert_int_equal(g.lost, 0);
	store_job_clear(&g);

	/* Arguments: max_lost 1..100, cap >= 0, out for a cap. */
	assert_int_equal(store_rescue_expired(s, 0, out, 4, &n, &err), SF_EINVAL);
	assert_int_equal(store_rescue_expired(s, 101, out, 4, &n, &err), SF_EINVAL);
	assert_int_equal(store_rescue_expired(s, 3, out, -1, &n, &err), SF_EINVAL);
	assert_int_equal(store_rescue_expired(s, 3, NULL, 4, &n, &err), SF_EINVAL);
	assert_int_equal(store_rescue_expired(s, 3, out, 4, NULL, &err), SF_EINVAL);
	ok(store_rescue_expired(s, 3, NULL, 0, &n, &err), &err);
	assert_int_equal(n, 0);
	store_close(s);
}

/* At most `cap` per call, oldest lease first; the rest wait for the next. */
static void test_rescue_cap(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	const char *ids[] = { "job_1", "job_2", "job_3" };
	for (int i = 0; i < 3; i++) {
		insert(s, ids[i]);
		store_job j = claim(s, "node-a", 1, ids[i]);
		store_job_clear(&j);
		sleep_ms(5);
	}
	sleep_ms(30);
	store_rescued out[2];
	int n = 0;
	ok(store_rescue_expired(s, 5, out, 2, &n, &err), &err);
	assert_int_equal(n, 2);
	int seen[3] = { 0 };
	for (int i = 0; i < n; i++)
		seen[atoi(out[i].id + 4) - 1]++;
	assert_int_equal(seen[0] + seen[1], 2); /* the two oldest leases */
	ok(store_rescue_expired(s, 5, out, 2, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].id, "job_3");
	ok(store_rescue_expired(s, 5, out, 2, &n, &err), &err);
	assert_int_equal(n, 0);
	int64_t counts[5];
	ok(store_count_jobs(s, counts, &err), &err);
	assert_int_equal(counts[JOB_QUEUED], 3);
	store_close(s);
}

/* A cancel asked for while the owner died: the rescue cancels the job. */
static void test_rescue_cancel_requested(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	store_job j = claim(s, "node-a", 1, "job_1");
	store_job_clear(&j);
	job_state st;
	assert_int_equal(store_request_cancel(s, "job_1", &st, &err), 1);
	assert_int_equal(st, JOB_RUNNING);
	sleep_ms(30);
	store_rescued out[1];
	int n = 0;
	ok(store_rescue_expired(s, 1, out, 1, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].state, JOB_CANCELLED);
	assert_int_equal(out[0].lost, 1);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_CANCELLED);
	assert_true(g.finished_ms > 0);
	assert_null(g.error);
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);
	store_close(s);
}

/* ---- cancel requests ---- */

static void test_request_cancel(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_q");
	insert(s, "job_r");
	job_state st = JOB_RUNNING;
	/* Queued: cancelled at once. */
	assert_int_equal(store_request_cancel(s, "job_q", &st, &err), 1);
	assert_int_equal(st, JOB_CANCELLED);
	store_job g = get(s, "job_q");
	assert_int_equal(g.state, JOB_CANCELLED);
	assert_true(g.finished_ms > 0);
	store_job_clear(&g);
	/* Running: asked, the job goes on. */
	store_job j = claim(s, "node-a", 60000, "job_r");
	store_fence fence = fence_of(&j);
	store_job_clear(&j);
	assert_int_equal(store_request_cancel(s, "job_r", &st, &err), 1);
	assert_int_equal(st, JOB_RUNNING);
	assert_int_equal(store_request_cancel(s, "job_r", NULL, &err), 1);
	g = get(s, "job_r");
	assert_int_equal(g.state, JOB_RUNNING);
	assert_int_equal(g.cancel_requested, 1);
	assert_int_equal(g.finished_ms, 0);
	store_job_clear(&g);
	/* Final: nothing changes, the state is told. */
	assert_int_equal(store_request_cancel(s, "job_q", &st, &err), 0);
	assert_int_equal(st, JOB_CANCELLED);
	ok(store_job_succeeded(s, "job_r", &fence, NULL, 0, &err), &err);
	assert_int_equal(store_request_cancel(s, "job_r", &st, &err), 0);
	assert_int_equal(st, JOB_SUCCEEDED);
	/* Unknown. */
	assert_int_equal(store_request_cancel(s, "job_x", &st, &err), SF_EINVAL);
	assert_int_equal(store_request_cancel(s, NULL, &st, &err), SF_EINVAL);
	store_close(s);
}

/* ---- fenced requeue and cancel, unfenced calls ---- */

static void test_fenced_requeue_and_cancel(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	store_job j = claim(s, "node-a", 60000, "job_1");
	store_fence fence = fence_of(&j);
	store_job_clear(&j);
	ok(store_job_heartbeat(s, "job_1", &fence, 60000, 5, 9, 1.5, NULL, &err), &err);
	ok(store_job_requeue(s, "job_1", &fence, &err), &err);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_int_equal(g.attempt, 1); /* counts claims */
	assert_int_equal(g.started_ms, 0);
	assert_int_equal(g.generation, 0);
	assert_string_equal(g.lease_owner, "");
	assert_int_equal(g.lease_until_ms, 0);
	store_job_clear(&g);
	/* Requeued, the old fence is spent. */
	assert_int_equal(store_job_requeue(s, "job_1", &fence, &err), STORE_LOST);

	j = claim(s, "node-b", 60000, "job_1");
	assert_int_equal(j.attempt, 2);
	fence = fence_of(&j);
	store_job_clear(&j);
	ok(store_job_cancelled(s, "job_1", &fence, &err), &err);
	g = get(s, "job_1");
	assert_int_equal(g.state, JOB_CANCELLED);
	assert_true(g.finished_ms > 0);
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);

	/* A requeue of a job whose cancel is pending cancels it: queued, none would claim it. */
	insert(s, "job_2");
	j = claim(s, "node-a", 60000, "job_2");
	fence = fence_of(&j);
	store_job_clear(&j);
	assert_int_equal(store_request_cancel(s, "job_2", NULL, &err), 1);
	ok(store_job_requeue(s, "job_2", &fence, &err), &err);
	g = get(s, "job_2");
	assert_int_equal(g.state, JOB_CANCELLED);
	assert_true(g.finished_ms > 0);
	store_job_clear(&g);

	/* Fenced failure of a running job. */
	insert(s, "job_3");
	j = claim(s, "node-a", 60000, "job_3");
	fence = fence_of(&j);
	store_job_clear(&j);
	ok(store_job_failed(s, "job_3", &fence, "no puzzle", &err), &err);
	g = get(s, "job_3");
	assert_int_equal(g.state, JOB_FAILED);
	assert_string_equal(g.error, "no puzzle");
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);
	store_close(s);
}

/* f == NULL: the moves of before, on claimed jobs and on started ones alike. */
static void test_unfenced_unchanged(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	insert(s, "job_2");
	ok(store_job_started(s, "job_1", &err), &err);
	store_job g = get(s, "job_1");
	assert_int_equal(g.attempt, 0);
	assert_int_equal(g.lease_until_ms, 0);
	store_job_clear(&g);
	ok(store_job_succeeded(s, "job_1", NULL, NULL, 0, &err), &err);
	assert_int_equal(store_job_failed(s, "job_1", NULL, "late", &err), SF_ERANGE);
	assert_non_null(strstr(err.msg, "cannot become"));
	assert_int_equal(store_job_requeue(s, "job_1", NULL, &err), SF_ERANGE);
	/* An unfenced outcome of a claimed job applies, and clears the lease. */
	store_job j = claim(s, "node-a", 60000, "job_2");
	store_job_clear(&j);
	ok(store_job_requeue(s, "job_2", NULL, &err), &err);
	g = get(s, "job_2");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);
	ok(store_job_cancelled(s, "job_2", NULL, &err), &err);
	assert_int_equal(store_job_cancelled(s, "job_x", NULL, &err), SF_EINVAL);
	store_close(s);
}

/* ---- clocks, batches, the start-up requeue, upgrades ---- */

/* lease_until - started_ms is the lease exactly; on PostgreSQL both are the server's clock. */
static void test_database_clock(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	insert(s, "job_1");
	int64_t before = f->pg ? pg_clock_ms(f) : wall_ms();
	store_job j = claim(s, "node-a", 4321, "job_1");
	int64_t after = f->pg ? pg_clock_ms(f) : wall_ms();
	assert_int_equal(j.lease_until_ms - j.started_ms, 4321);
	assert_true(j.started_ms >= before && j.started_ms <= after);
	store_job_clear(&j);
	store_close(s);
}

/* Inside a batch a claim is a savepoint: rolled back with the batch, the job is queued. */
static void test_claim_in_batch(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	ok(store_batch_begin(s, &err), &err);
	store_job j = claim(s, "node-a", 60000, "job_1");
	store_fence fence = fence_of(&j);
	store_job_clear(&j);
	assert_int_equal(store_job_failed(s, "job_1", &fence, "x", &err), 0);
	assert_int_equal(store_job_failed(s, "job_1", &fence, "x", &err), STORE_LOST);
	ok(store_batch_end(s, 0, &err), &err);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_int_equal(g.attempt, 0);
	store_job_clear(&g);
	store_close(s);
}

/* The start-up requeue clears leases and honours a pending cancel. */
static void test_pending_clears_leases(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = open_rw(f->path);
	sf_err err = { 0 };
	insert(s, "job_1");
	insert(s, "job_2");
	insert(s, "job_3");
	store_job j = claim(s, "node-a", 60000, "job_1");
	store_job_clear(&j);
	j = claim(s, "node-a", 60000, "job_2");
	store_job_clear(&j);
	assert_int_equal(store_request_cancel(s, "job_2", NULL, &err), 1);
	char(*ids)[40] = NULL;
	size_t n = 0;
	ok(store_pending_jobs(s, &ids, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(ids[0], "job_1");
	assert_string_equal(ids[1], "job_3");
	free(ids);
	store_job g = get(s, "job_1");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_string_equal(g.lease_owner, "");
	assert_int_equal(g.lease_until_ms, 0);
	assert_int_equal(g.attempt, 1);
	store_job_clear(&g);
	g = get(s, "job_2");
	assert_int_equal(g.state, JOB_CANCELLED);
	store_job_clear(&g);
	store_close(s);
}

/* A database of the schema before leases keeps its jobs and can be claimed from. */
static void test_upgrade_keeps_jobs(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	sf_err err = { 0 };
	size_t older = f->pg ? 1 : 5; /* the versions before 0002_lost.sql and 0006_leases.sql */
	store *s = store_open_with(f->path, STORE_READWRITE,
				   f->pg ? sf_pg_migrations : sf_migrations, older, &err);
	if (!s)
		fail_msg("opening the old schema: %s", err.msg);
	assert_int_equal(store_version(s), (int)older);
	if (f->pg) {
		insert(s, "job_old"); /* PostgreSQL's 0001 already has the lease columns */
	} else {
		/* The old schema has no lease columns: insert by hand, as an old binary did. */
		store_close(s);
		s = NULL;
		raw_exec(f, "INSERT INTO jobs (id, kind, params, seed, state, created_ms) "
			    "VALUES ('job_old', 'lattice', '{}', 1, 'queued', 1000)");
		raw_exec(f, "INSERT INTO jobs (id, kind, params, seed, state, created_ms, "
			    "started_ms) VALUES ('job_ran', 'lattice', '{}', 2, 'running', 1000, "
			    "2000)");
	}
	store_close(s);
	s = open_rw(f->path);
	assert_int_equal(store_version(s), store_backend_latest_version(s));
	store_job g = get(s, "job_old");
	assert_int_equal(g.state, JOB_QUEUED);
	assert_int_equal(g.attempt, 0);
	assert_int_equal(g.lost, 0);
	assert_int_equal(g.cancel_requested, 0);
	assert_string_equal(g.lease_owner, "");
	store_job_clear(&g);
	store_job j = claim(s, "node-a", 1000, "job_old");
	assert_int_equal(j.attempt, 1);
	store_job_clear(&j);
	store_close(s);
}

#define LEASE_TESTS(setup_fn)                                                                      \
	cmocka_unit_test_setup_teardown(test_claim_order, setup_fn, fixture_teardown),             \
		cmocka_unit_test_setup_teardown(test_claim_skips_cancel_requested, setup_fn,       \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_claim_concurrent, setup_fn,                   \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_heartbeat, setup_fn, fixture_teardown),       \
		cmocka_unit_test_setup_teardown(test_lost_owner_writes_nothing, setup_fn,          \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_rescue_max_lost, setup_fn, fixture_teardown), \
		cmocka_unit_test_setup_teardown(test_rescue_cap, setup_fn, fixture_teardown),      \
		cmocka_unit_test_setup_teardown(test_rescue_cancel_requested, setup_fn,            \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_request_cancel, setup_fn, fixture_teardown),  \
		cmocka_unit_test_setup_teardown(test_fenced_requeue_and_cancel, setup_fn,          \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_unfenced_unchanged, setup_fn,                 \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_database_clock, setup_fn, fixture_teardown),  \
		cmocka_unit_test_setup_teardown(test_claim_in_batch, setup_fn, fixture_teardown),  \
		cmocka_unit_test_setup_teardown(test_pending_clears_leases, setup_fn,              \
						fixture_teardown),                                 \
		cmocka_unit_test_setup_teardown(test_upgrade_keeps_jobs, setup_fn,                 \
						fixture_teardown)

int main(void)
{
	const struct CMUnitTest sqlite_tests[] = { LEASE_TESTS(setup_sqlite) };
	const struct CMUnitTest pg_tests[] = { LEASE_TESTS(setup_pg) };
	int failed = cmocka_run_group_tests_name("store leases: sqlite", sqlite_tests, NULL, NULL);
	return failed +
	       cmocka_run_group_tests_name("store leases: postgresql", pg_tests, NULL, NULL);
}
