/*
 * test_store_events.c - the progress events of jobs in the store (store.h:
 * store_append_job_events(), store_job_events(), store_event_clear(),
 * store_prune_job_events()), on
 * both back ends: every case runs once on SQLite (a file in a fresh
 * folder) and once on PostgreSQL (a schema of its own in the database
 * STARFORGE_TEST_PG names, tests/pg/cluster.sh; skipped without it),
 * through the fixture of store_support.h.
 *
 * What an append must not have written (a fenced append refused, a call
 * with a bad argument, a batch rolled back) is checked through the store's
 * own reads, on the writer and on a READONLY handle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../server/base/embedded.h"
#include "../server/store/store.h"
#include "../server/store/store_pg.h"
#include "store_support.h"

/* ---- helpers ---- */

static store *open_mode(const fixture *f, int mode)
{
	sf_err err = { 0 };
	store *s = store_open(f->path, mode, &err);
	if (!s)
		fail_msg("store_open(%s, %d): %s", f->path, mode, err.msg);
	return s;
}

/* A queued job `id`. */
static void add_job(store *s, const char *id)
{
	sf_err err = { 0 };
	store_job job = { .seed = 3, .kind = (char *)"lattice", .params = (char *)"{}" };
	snprintf(job.id, sizeof job.id, "%s", id);
	ok(store_insert_job(s, &job, NULL, NULL, NULL, &err), &err); /* takes no string */
}

/* The fixture's store, read-write, with the queued jobs job_1..job_<jobs>. */
static store *start(const fixture *f, int jobs)
{
	store *s = open_mode(f, STORE_READWRITE);
	for (int i = 1; i <= jobs; i++) {
		char id[16];
		snprintf(id, sizeof id, "job_%d", i);
		add_job(s, id);
	}
	return s;
}

/* Claims the next job, which must be `want`, as `owner`; its fence. */
static store_fence claim_fence(store *s, const char *owner, int lease_ms, const char *want)
{
	sf_err err = { 0 };
	store_job job;
	if (store_claim_job(s, owner, lease_ms, &job, &err) != 1)
		fail_msg("claim by %s: %s", owner, err.msg);
	assert_string_equal(job.id, want);
	store_fence fence = { .attempt = job.attempt };
	snprintf(fence.owner, sizeof fence.owner, "%s", job.lease_owner);
	store_job_clear(&job);
	return fence;
}

static void append_ok(store *s, const char *id, const store_fence *f, const store_event *ev, int n)
{
	sf_err err = { 0 };
	ok(store_append_job_events(s, id, f, ev, n, &err), &err);
}

/* Reads into out[] (cap entries); the count, which must be 0..cap. */
static int read_events(store *s, const char *id, int64_t after, int cap, store_event *out)
{
	sf_err err = { 0 };
	int n = -1;
	ok(store_job_events(s, id, after, cap, out, &n, &err), &err);
	assert_true(n >= 0 && n <= cap);
	return n;
}

static void clear_all(store_event *ev, int n)
{
	for (int i = 0; i < n; i++)
		store_event_clear(&ev[i]);
}

/* How many events job `id` holds (at most 1000). */
static int count_events(store *s, const char *id)
{
	store_event *all = calloc(1000, sizeof *all);
	assert_non_null(all);
	int n = read_events(s, id, -1, 1000, all);
	clear_all(all, n);
	free(all);
	return n;
}

/* Job `id` holds exactly want[0..n-1], in that order, byte for byte. */
static void expect_events(store *s, const char *id, const store_event *want, int n)
{
	store_event got[32];
	assert_true(n < 32);
	int have = read_events(s, id, -1, 32, got);
	assert_int_equal(have, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(got[i].id, want[i].id);
		assert_non_null(got[i].data);
		assert_int_equal(strlen(got[i].data), strlen(want[i].data));
		assert_memory_equal(got[i].data, want[i].data, strlen(want[i].data) + 1);
	}
	clear_all(got, have);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int setup_sqlite(void **state)
{
	return fixture_setup(state, "events", "starforge.db", 0);
}

static int setup_pg(void **state)
{
	return fixture_setup(state, "events", "", 1);
}

/* ---- appends and reads ---- */

/* About 8 KB of JSON text with every byte class an array literal or a quote could upset. */
static char *long_data(void)
{
	static const char piece[] = "\\\"x\\\\y, {z} 'q' Ünï 日本 🎮 \\n\\t NULL ";
	size_t room = 8192 + 2 * sizeof piece, len = 0;
	char *d = malloc(room);
	assert_non_null(d);
	len += (size_t)snprintf(d, room, "{\"blob\":\"");
	while (len < 8192 - sizeof piece)
		len += (size_t)snprintf(d + len, room - len, "%s", piece);
	snprintf(d + len, room - len, "\"}");
	assert_true(strlen(d) > 8000);
	return d;
}

/* Appended out of order and in two calls; read back by id, exact bytes, per job. */
static void test_round_trip(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 2);
	char *big = long_data();
	store_event first[] = {
		{ 7, "{\"generation\":7,\"best\":0.5}" },
		{ 0, "{\"name\":\"Ünïcødé ✓ 日本語 🎮\",\"g\":0}" },
		{ 3, "{\"q\":\"she said \\\"hi\\\", \\\\ {a,b} 'x'\"}" },
	};
	store_event second[] = {
		{ 12, big },
		{ 9, " { \"spaced\" : [ 1 , 2 ] }\n" },
		{ 5000000000LL, "NULL" },
		{ 10, "" },
	};
	append_ok(s, "job_1", NULL, first, 3);
	append_ok(s, "job_1", NULL, second, 4);
	append_ok(s, "job_2", NULL, &first[0], 1);
	store_event want[] = { first[1],  first[2],  first[0], second[1],
			       second[3], second[0], second[2] };
	expect_events(s, "job_1", want, 7);
	expect_events(s, "job_2", &first[0], 1);

	/* What the read returns is the caller's: store_event_clear frees and zeroes. */
	store_event one[1];
	assert_int_equal(read_events(s, "job_1", 11, 1, one), 1);
	assert_int_equal(one[0].id, 12);
	assert_string_equal(one[0].data, big);
	store_event_clear(&one[0]);
	assert_null(one[0].data);
	assert_int_equal(one[0].id, 0);
	store_event_clear(NULL);
	free(big);
	store_close(s);
}

/* `after` and `cap` page through the events, oldest first. */
static void test_paging(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 1);
	enum { N = 25 };
	store_event ev[N];
	char text[N][32];
	for (int i = 0; i < N; i++) {
		snprintf(text[i], sizeof text[i], "{\"generation\":%d}", 2 * i);
		ev[i] = (store_event){ 2 * i, text[i] };
	}
	append_ok(s, "job_1", NULL, ev, N);
	store_event page[10];
	int64_t after = -1;
	int seen = 0, pages = 0;
	for (;;) {
		int n = read_events(s, "job_1", after, 10, page);
		if (n == 0)
			break;
		pages++;
		for (int i = 0; i < n; i++, seen++) {
			assert_int_equal(page[i].id, 2 * seen);
			assert_string_equal(page[i].data, text[seen]);
		}
		after = page[n - 1].id;
		clear_all(page, n);
	}
	assert_int_equal(seen, N);
	assert_int_equal(pages, 3);
	/* `after` between two ids, on an id, past the last; a cap of 1. */
	assert_int_equal(read_events(s, "job_1", 5, 10, page), 10);
	assert_int_equal(page[0].id, 6);
	clear_all(page, 10);
	assert_int_equal(read_events(s, "job_1", 44, 10, page), 2);
	assert_int_equal(page[0].id, 46);
	assert_int_equal(page[1].id, 48);
	clear_all(page, 2);
	assert_int_equal(read_events(s, "job_1", 48, 10, page), 0);
	assert_int_equal(read_events(s, "job_1", INT64_MAX, 10, page), 0);
	assert_int_equal(read_events(s, "job_1", INT64_MIN, 1, page), 1);
	assert_int_equal(page[0].id, 0);
	clear_all(page, 1);
	store_close(s);
}

/* An id stored before keeps its first data, across calls and within one. */
static void test_duplicates_keep_first(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 1);
	store_event a[] = { { 1, "{\"run\":1,\"g\":1}" }, { 2, "{\"run\":1,\"g\":2}" } };
	store_event b[] = { { 2, "{\"run\":2,\"g\":2}" },
			    { 3, "{\"run\":2,\"g\":3}" },
			    { 1, "{\"run\":2,\"g\":1}" },
			    { 3, "{\"run\":2,\"g\":3,\"again\":true}" } };
	append_ok(s, "job_1", NULL, a, 2);
	append_ok(s, "job_1", NULL, b, 4);
	append_ok(s, "job_1", NULL, a, 2); /* a rerun reporting the same generations */
	store_event want[] = { a[0], a[1], b[1] };
	expect_events(s, "job_1", want, 3);
	store_close(s);
}

/* ---- fencing ---- */

static void test_fenced(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 2);
	sf_err err = { 0 };
	store_event ev[] = { { 0, "{\"g\":0}" }, { 1, "{\"g\":1}" } };
	sf_err untouched = { .code = 99 };

	/* Queued: no fence holds (not running), and nothing is written. */
	store_fence guess = { .owner = "node-a", .attempt = 1 };
	assert_int_equal(store_append_job_events(s, "job_1", &guess, ev, 2, &untouched),
			 STORE_LOST);
	assert_int_equal(count_events(s, "job_1"), 0);

	/* Running under the claim's fence: written. */
	store_fence fa = claim_fence(s, "node-a", 60000, "job_1");
	assert_int_equal(fa.attempt, 1);
	append_ok(s, "job_1", &fa, ev, 1);
	/* Another owner, another attempt: lost, err untouched, nothing written. */
	store_fence other = fa;
	snprintf(other.owner, sizeof other.owner, "node-b");
	assert_int_equal(store_append_job_events(s, "job_1", &other, &ev[1], 1, &untouched),
			 STORE_LOST);
	other = fa;
	other.attempt = fa.attempt + 1;
	assert_int_equal(store_append_job_events(s, "job_1", &other, &ev[1], 1, &untouched),
			 STORE_LOST);
	/* n = 0 writes nothing and answers for the fence all the same. */
	assert_int_equal(store_append_job_events(s, "job_1", &other, ev, 0, &untouched),
			 STORE_LOST);
	ok(store_append_job_events(s, "job_1", &fa, NULL, 0, &err), &err);
	assert_int_equal(untouched.code, 99);
	expect_events(s, "job_1", ev, 1);

	/* Final: lost, even with the fence that held; unfenced (tests) still appends. */
	ok(store_job_succeeded(s, "job_1", &fa, NULL, 0, &err), &err);
	assert_int_equal(store_append_job_events(s, "job_1", &fa, &ev[1], 1, &untouched),
			 STORE_LOST);
	assert_int_equal(count_events(s, "job_1"), 1);
	append_ok(s, "job_1", NULL, &ev[1], 1);
	assert_int_equal(count_events(s, "job_1"), 2);

	/* A node whose lease expired and whose job was rescued and claimed again. */
	store_fence late = claim_fence(s, "node-a", 1, "job_2");
	sleep_ms(30);
	store_rescued out[2];
	int n = 0;
	ok(store_rescue_expired(s, 5, out, 2, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(store_append_job_events(s, "job_2", &late, ev, 2, &untouched), STORE_LOST);
	store_fence now = claim_fence(s, "node-b", 60000, "job_2");
	assert_int_equal(now.attempt, 2);
	assert_int_equal(store_append_job_events(s, "job_2", &late, ev, 2, &untouched), STORE_LOST);
	assert_int_equal(count_events(s, "job_2"), 0);
	append_ok(s, "job_2", &now, ev, 2);
	expect_events(s, "job_2", ev, 2);
	/* A cancelled job: lost too. */
	ok(store_job_cancelled(s, "job_2", &now, &err), &err);
	assert_int_equal(store_append_job_events(s, "job_2", &now, ev, 1, &untouched), STORE_LOST);
	assert_int_equal(untouched.code, 99);
	store_close(s);
}

/* ---- unknown jobs and bad arguments ---- */

static void test_unknown_job(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 0);
	sf_err err = { 0 };
	store_event ev[] = { { 0, "{\"g\":0}" } };
	store_fence fence = { .owner = "node-a", .attempt = 1 };
	const char *unknown[] = { "job_x", "", "job_\xff\xfe" };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(store_append_job_events(s, unknown[i], NULL, ev, 1, &err),
				 SF_EINVAL);
		assert_non_null(strstr(err.msg, "not found"));
		assert_int_equal(store_append_job_events(s, unknown[i], &fence, ev, 1, &err),
				 SF_EINVAL);
		assert_int_equal(store_append_job_events(s, unknown[i], NULL, ev, 0, &err),
				 SF_EINVAL);
		store_event out[2];
		int n = -1;
		ok(store_job_events(s, unknown[i], -1, 2, out, &n, &err), &err);
		assert_int_equal(n, 0);
	}
	store_close(s);
}

static void test_bad_arguments(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 1);
	sf_err err = { 0 };
	store_event good = { 1, "{\"g\":1}" };
	store_event bad[][2] = {
		{ good, { 2, NULL } },                          /* no data */
		{ good, { -1, "{\"g\":-1}" } },                 /* a negative id */
		{ good, { INT64_MIN, "{}" } },                  /* the most negative */
		{ good, { 3, "{\"bad\":\"\xc3\x28\"}" } },      /* data that is not UTF-8 */
		{ good, { 4, "{\"cesu\":\"\xed\xa0\x80\"}" } }, /* a surrogate */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(store_append_job_events(s, "job_1", NULL, bad[i], 2, &err),
				 SF_EINVAL);
		assert_int_equal(count_events(s, "job_1"), 0); /* not even the good one */
	}
	/* n out of range, no events, no store, no id, a fence without an owner. */
	store_event *many = calloc(1001, sizeof *many);
	assert_non_null(many);
	char(*text)[24] = calloc(1001, sizeof *text);
	assert_non_null(text);
	for (int i = 0; i < 1001; i++) {
		snprintf(text[i], sizeof text[i], "{\"g\":%d}", i);
		many[i] = (store_event){ i, text[i] };
	}
	assert_int_equal(store_append_job_events(s, "job_1", NULL, many, 1001, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "0..1000"));
	assert_int_equal(store_append_job_events(s, "job_1", NULL, &good, -1, &err), SF_EINVAL);
	assert_int_equal(store_append_job_events(s, "job_1", NULL, NULL, 1, &err), SF_EINVAL);
	assert_int_equal(store_append_job_events(NULL, "job_1", NULL, &good, 1, &err), SF_EINVAL);
	assert_int_equal(store_append_job_events(s, NULL, NULL, &good, 1, &err), SF_EINVAL);
	store_fence nobody = { .owner = "", .attempt = 1 };
	assert_int_equal(store_append_job_events(s, "job_1", &nobody, &good, 1, &err), SF_EINVAL);
	assert_int_equal(count_events(s, "job_1"), 0);
	/* The bounds themselves: 1000 events in one call, a cap of 1000. */
	append_ok(s, "job_1", NULL, many, 1000);
	assert_int_equal(count_events(s, "job_1"), 1000);
	free(many);
	free(text);

	/* Reads: a cap of 1..1000, an id, out and n; *n is 0 after a refusal. */
	store_event out[2];
	int n = -1;
	assert_int_equal(store_job_events(s, "job_1", -1, 0, out, &n, &err), SF_EINVAL);
	assert_int_equal(n, 0);
	n = -1;
	assert_int_equal(store_job_events(s, "job_1", -1, 1001, out, &n, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "1..1000"));
	assert_int_equal(n, 0);
	assert_int_equal(store_job_events(s, "job_1", -1, -5, out, &n, &err), SF_EINVAL);
	assert_int_equal(store_job_events(s, NULL, -1, 2, out, &n, &err), SF_EINVAL);
	assert_int_equal(store_job_events(s, "job_1", -1, 2, NULL, &n, &err), SF_EINVAL);
	assert_int_equal(store_job_events(s, "job_1", -1, 2, out, NULL, &err), SF_EINVAL);
	n = -1;
	assert_int_equal(store_job_events(NULL, "job_1", -1, 2, out, &n, &err), SF_EINVAL);
	assert_int_equal(n, 0);
	store_close(s);
}

/* ---- batches and readers ---- */

/* Inside a batch appends are savepoints: they commit or roll back with the batch. */
static void test_batch(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 2);
	sf_err err = { 0 };
	store *reader = open_mode(f, STORE_READONLY);
	store_event ev[] = { { 0, "{\"g\":0}" }, { 1, "{\"g\":1}" }, { 2, "{\"g\":2}" } };

	ok(store_batch_begin(s, &err), &err);
	append_ok(s, "job_1", NULL, ev, 2);
	assert_int_equal(count_events(s, "job_1"), 2);      /* the batch sees its own writes */
	assert_int_equal(count_events(reader, "job_1"), 0); /* nobody else does */
	ok(store_batch_end(s, 0, &err), &err);
	assert_int_equal(count_events(s, "job_1"), 0);
	assert_int_equal(count_events(reader, "job_1"), 0);

	/* A claim, its appends and a refused append in one batch: the refusal changes nothing. */
	ok(store_batch_begin(s, &err), &err);
	store_fence fence = claim_fence(s, "node-a", 60000, "job_1");
	append_ok(s, "job_1", &fence, ev, 2);
	store_fence stale = fence;
	stale.attempt = fence.attempt - 1;
	assert_int_equal(store_append_job_events(s, "job_1", &stale, &ev[2], 1, &err), STORE_LOST);
	assert_int_equal(store_append_job_events(s, "job_x", NULL, &ev[2], 1, &err), SF_EINVAL);
	append_ok(s, "job_2", NULL, &ev[2], 1);
	append_ok(s, "job_1", &fence, &ev[2], 1);
	assert_int_equal(count_events(reader, "job_1"), 0);
	ok(store_batch_end(s, 1, &err), &err);
	expect_events(reader, "job_1", ev, 3);
	expect_events(reader, "job_2", &ev[2], 1);

	/* Rolled back, the claim goes with the appends: the fence no longer holds after. */
	add_job(s, "job_3");
	ok(store_batch_begin(s, &err), &err);
	store_fence gone = claim_fence(s, "node-a", 60000, "job_2");
	(void)gone;
	store_fence f3 = claim_fence(s, "node-a", 60000, "job_3");
	append_ok(s, "job_3", &f3, ev, 3);
	ok(store_batch_end(s, 0, &err), &err);
	assert_int_equal(count_events(reader, "job_3"), 0);
	sf_err untouched = { .code = 99 };
	assert_int_equal(store_append_job_events(s, "job_3", &f3, ev, 1, &untouched), STORE_LOST);
	assert_int_equal(untouched.code, 99);
	store_close(reader);
	store_close(s);
}

/* A READONLY handle reads the events (and cannot append). */
static void test_readonly(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	store *s = start(f, 1);
	store_event ev[] = { { 4, "{\"g\":4,\"best\":1.25}" }, { 8, "{\"g\":8,\"é\":\"ü\"}" } };
	append_ok(s, "job_1", NULL, ev, 2);
	store *ro = open_mode(f, STORE_READONLY);
	expect_events(ro, "job_1", ev, 2);
	store_event page[1];
	assert_int_equal(read_events(ro, "job_1", 4, 1, page), 1);
	assert_int_equal(page[0].id, 8);
	clear_all(page, 1);
	/* Written after the reader opened: seen at its next read. */
	store_event more = { 9, "{\"g\":9}" };
	append_ok(s, "job_1", NULL, &more, 1);
	assert_int_equal(count_events(ro, "job_1"), 3);
	sf_err err = { 0 };
	assert_true(store_append_job_events(ro, "job_1", NULL, &more, 1, &err) < 0);
	store_event never = { 10, "{\"g\":10}" };
	assert_true(store_append_job_events(ro, "job_1", NULL, &never, 1, &err) < 0);
	assert_int_equal(count_events(s, "job_1"), 3);
	store_close(ro);
	store_close(s);
}

/* ---- upgrades ---- */

/*
 * A database one step older (SQLite 6: no job_events; PostgreSQL 2: an
 * integer id) keeps its jobs and events and takes 64-bit ids once migrated.
 */
static void test_upgrade(void **state)
{
	fixture *f = fixture_pg_or_skip(state);
	sf_err err = { 0 };
	size_t older = f->pg ? 2 : 6;
	store *s = store_open_with(f->path, STORE_READWRITE,
				   f->pg ? sf_pg_migrations : sf_migrations, older, &err);
	if (!s)
		fail_msg("opening the old schema: %s", err.msg);
	add_job(s, "job_old");
	store_event small = { 3, "{\"g\":3}" }, big = { 5000000000LL, "{\"g\":5000000000}" };
	if (f->pg) {
		append_ok(s, "job_old", NULL, &small, 1);
		assert_int_equal(store_append_job_events(s, "job_old", NULL, &big, 1, &err),
				 SF_EINVAL);
	} else {
		assert_int_equal(store_append_job_events(s, "job_old", NULL, &small, 1, &err),
				 SF_ESYS);
		assert_non_null(strstr(err.msg, "job_events"));
	}
	store_close(s);
	s = open_mode(f, STORE_READWRITE);
	assert_int_equal(store_version(s), store_backend_latest_version(s));
	append_ok(s, "job_old", NULL, &small, 1); /* SQLite's first, PostgreSQL's again */
	store_event second[] = { big, { 3, "{\"g\":3,\"rerun\":true}" } };
	append_ok(s, "job_old", NULL, second, 2);
	store_event want[] = { small, big };
	expect_events(s, "job_old", want, 2);
	store_close(s);
}

/*
 * Retention: only the events of a job that finished longer ago than the
 * age go; a running and a queued job keep theirs; the count is right.
 */
static void test_prune(void **state)
{
	fixture *f = *state;
	store *s = start(f, 3);
	sf_err err = { 0 };
	store_event ev[] = { { 1, "{\"g\":1}" }, { 2, "{\"g\":2}" }, { 3, "{\"g\":3}" } };
	store_fence f1 = claim_fence(s, "node-a", 60000, "job_1");
	store_fence f2 = claim_fence(s, "node-a", 60000, "job_2");
	append_ok(s, "job_1", &f1, ev, 3);
	append_ok(s, "job_2", &f2, ev, 2);
	append_ok(s, "job_3", NULL, ev, 1);
	ok(store_job_succeeded(s, "job_1", &f1, NULL, 0, &err), &err);
	int64_t deleted = -1;
	/* Finished just now: an hour's age keeps everything. */
	ok(store_prune_job_events(s, 3600 * 1000, &deleted, &err), &err);
	assert_int_equal(deleted, 0);
	assert_int_equal(count_events(s, "job_1"), 3);
	sleep_ms(20);
	ok(store_prune_job_events(s, 5, &deleted, &err), &err);
	assert_int_equal(deleted, 3);
	assert_int_equal(count_events(s, "job_1"), 0);
	assert_int_equal(count_events(s, "job_2"), 2);
	assert_int_equal(count_events(s, "job_3"), 1);
	ok(store_prune_job_events(s, 0, NULL, &err), &err); /* nothing left: fine */
	assert_int_equal(count_events(s, "job_2"), 2);
	assert_int_equal(store_prune_job_events(s, -1, &deleted, &err), SF_EINVAL);
	assert_int_equal(deleted, 0);
	assert_non_null(strstr(err.msg, "age -1 ms"));
	store_close(s);
}

/* Every case, run once per back end. */
static const struct {
	const char *name;
	CMUnitTestFunction fn;
} cases[] = {
	{ "test_round_trip", test_round_trip },
	{ "test_paging", test_paging },
	{ "test_duplicates_keep_first", test_duplicates_keep_first },
	{ "test_fenced", test_fenced },
	{ "test_unknown_job", test_unknown_job },
	{ "test_bad_arguments", test_bad_arguments },
	{ "test_batch", test_batch },
	{ "test_readonly", test_readonly },
	{ "test_upgrade", test_upgrade },
	{ "test_prune", test_prune },
};

int main(void)
{
	enum { N = sizeof cases / sizeof cases[0] };
	struct CMUnitTest sqlite_tests[N], pg_tests[N];
	for (int i = 0; i < N; i++) {
		sqlite_tests[i] = (struct CMUnitTest){ cases[i].name, cases[i].fn, setup_sqlite,
						       fixture_teardown, NULL };
		pg_tests[i] = (struct CMUnitTest){ cases[i].name, cases[i].fn, setup_pg,
						   fixture_teardown, NULL };
	}
	int failed = cmocka_run_group_tests_name("store events: sqlite", sqlite_tests, NULL, NULL);
	return failed +
	       cmocka_run_group_tests_name("store events: postgresql", pg_tests, NULL, NULL);
}
