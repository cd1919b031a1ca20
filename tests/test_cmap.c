/*
 * test_cmap.c - the contact-map database (lat_db_*): its size against the
 * published numbers of distinct contact maps, its conformation count
 * against the symmetry-reduced counts, and the promise that scoring through
 * it gives exactly what the direct enumerator gives, examples included.
 *
 * Numbers come from tests/fixtures/lattice_oracles.h (OEIS walk counts and
 * exact contact-map counts; sources cited there).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lattice_support.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TEST_THREADS 4
/*
 * The databases the tests share, built on first use. Square 19 is the first
 * length whose maps need two 64-bit words (72 pairs can touch; 64 at 18), so
 * the tests go one past the 18 the oracle's map counts reach.
 */
#define SQUARE_MAX 19
#define CUBIC_MAX 14

static lat_db *dbs[2][CUBIC_MAX > SQUARE_MAX ? CUBIC_MAX + 1 : SQUARE_MAX + 1];

/* ---- helpers ---- */

static lat_kind kind_of(int cubic)
{
	return cubic ? LAT_CUBIC : LAT_SQUARE;
}

static lat_db *build_ok(lat_kind kind, int len, int threads)
{
	lat_opts opts = { .threads = threads, .budget = 0 };
	sf_err err = { 0 };
	lat_db *db = lat_db_build(kind, len, &opts, &err);
	if (!db)
		fail_msg("lat_db_build(%s, %d, %d threads): %s (%d)", lat_kind_name(kind), len,
			 threads, err.msg, err.code);
	return db;
}

/* The shared database of `len` on `kind`. */
static const lat_db *db_get(lat_kind kind, int len)
{
	int c = kind == LAT_CUBIC;
	assert_true(len >= 2 && len <= (c ? CUBIC_MAX : SQUARE_MAX));
	if (!dbs[c][len])
		dbs[c][len] = build_ok(kind, len, TEST_THREADS);
	return dbs[c][len];
}

static int group_teardown(void **state)
{
	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(dbs); c++)
		for (size_t len = 0; len < ARRAY_LEN(dbs[c]); len++) {
			lat_db_free(dbs[c][len]);
			dbs[c][len] = NULL;
		}
	return 0;
}

static uint64_t reduced(lat_kind kind, int len)
{
	return kind == LAT_CUBIC ? cubic_reduced(len) : square_reduced(len);
}

/*
 * Both evaluation paths agree exactly on `seq`: lat_db_evaluate and
 * lat_enumerate give byte-identical results (each output first filled with
 * a different byte, so an unwritten byte shows), and lat_db_histogram
 * gives the same histogram and returns the maximum score.
 */
static void check_paths_agree(lat_kind kind, const lat_db *db, const lat_seq *seq, int threads)
{
	lat_result direct, via_db;
	lat_opts opts = { .threads = threads, .budget = 0 };
	sf_err err = { 0 };
	char text[LAT_MAX_LEN + 1];
	lat_seq_format(seq, text);

	memset(&direct, 0x5a, sizeof direct);
	memset(&via_db, 0xa5, sizeof via_db);
	if (lat_enumerate(kind, seq, &opts, &direct, &err))
		fail_msg("lat_enumerate(%s, %s): %s", lat_kind_name(kind), text, err.msg);
	if (lat_db_evaluate(db, seq, &via_db, &err))
		fail_msg("lat_db_evaluate(%s, %s): %s", lat_kind_name(kind), text, err.msg);
	if (memcmp(&direct, &via_db, sizeof direct)) {
		for (int s = 0; s <= LAT_MAX_SCORE; s++)
			if (direct.hist[s] != via_db.hist[s] ||
			    memcmp(direct.examples[s], via_db.examples[s], LAT_MAX_LEN))
				fail_msg("%s %s score %d: enumerate %llu '%.32s', database %llu "
					 "'%.32s'",
					 lat_kind_name(kind), text, s,
					 (unsigned long long)direct.hist[s], direct.examples[s],
					 (unsigned long long)via_db.hist[s], via_db.examples[s]);
		fail_msg("%s %s: the results differ outside the histogram and examples",
			 lat_kind_name(kind), text);
	}

	uint64_t hist[LAT_MAX_SCORE + 1];
	memset(hist, 0xff, sizeof hist);
	int max = lat_db_histogram(db, seq, hist);
	assert_int_equal(max, direct.max_score);
	assert_memory_equal(hist, direct.hist, sizeof hist);
}

/* ---- size of the database ---- */

static void test_contact_map_counts(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(oracle_contact_maps); i++) {
		const oracle_maps *o = &oracle_contact_maps[i];
		lat_kind kind = kind_of(o->cubic);
		const lat_db *db = db_get(kind, o->len);
		if (lat_db_maps(db) != o->maps)
			fail_msg("%s L=%d: %zu contact maps, oracle %llu", lat_kind_name(kind),
				 o->len, lat_db_maps(db), (unsigned long long)o->maps);
		assert_int_equal(lat_db_kind(db), kind);
		assert_int_equal(lat_db_len(db), o->len);
		assert_true(lat_db_bytes(db) > lat_db_maps(db) * sizeof(uint64_t));
	}
}

static void test_conformations(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		lat_kind kind = kind_of(c);
		for (int len = 2; len <= (c ? CUBIC_MAX : SQUARE_MAX); len++) {
			const lat_db *db = db_get(kind, len);
			if (lat_db_conformations(db) != reduced(kind, len))
				fail_msg("%s L=%d: %llu conformations, want %llu",
					 lat_kind_name(kind), len,
					 (unsigned long long)lat_db_conformations(db),
					 (unsigned long long)reduced(kind, len));
			/* Never more maps than conformations; a chain of 2 or 3 has one map. */
			assert_true(lat_db_maps(db) <= lat_db_conformations(db));
			if (len <= 3)
				assert_int_equal(lat_db_maps(db), 1);
		}
	}
}

/* ---- both paths agree ---- */

/*
 * Every sequence for the shortest chains, then random ones: more for short
 * chains, where they are cheap and the sample is a larger share.
 */
static void check_lattice_agreement(lat_kind kind, int max_len, int exhaustive_len, uint64_t seed)
{
	rng r;
	rng_seed(&r, seed);
	for (int len = 2; len <= max_len; len++) {
		const lat_db *db = db_get(kind, len);
		lat_seq allh = seq_uniform(len, 1), allp = seq_uniform(len, 0);
		check_paths_agree(kind, db, &allh, 1 + len % 3);
		check_paths_agree(kind, db, &allp, 1 + len % 3);
		if (len <= exhaustive_len) {
			for (unsigned bits = 0; bits < 1u << len; bits++) {
				lat_seq seq = seq_bits(len, bits);
				check_paths_agree(kind, db, &seq, 1 + (int)(bits % 3));
			}
			continue;
		}
		int count = len <= 12 ? 12 : len <= 15 ? 6 : 3;
		for (int i = 0; i < count; i++) {
			lat_seq seq = seq_random(&r, len);
			check_paths_agree(kind, db, &seq, 1 + i % 3);
		}
	}
}

static void test_agree_square(void **state)
{
	(void)state;
	check_lattice_agreement(LAT_SQUARE, SQUARE_MAX, 8, 4242);
}

static void test_agree_cubic(void **state)
{
	(void)state;
	check_lattice_agreement(LAT_CUBIC, 12, 7, 1995);
}

/* The oracle's reduced histograms that fit a shared database (square L = 16). */
static void test_oracle_histograms(void **state)
{
	(void)state;
	int checked = 0;
	for (size_t i = 0; i < ARRAY_LEN(oracle_histograms); i++) {
		const oracle_hist *o = &oracle_histograms[i];
		lat_kind kind = kind_of(o->cubic);
		int len = (int)strlen(o->seq);
		if (!o->reduced || len > (o->cubic ? CUBIC_MAX : SQUARE_MAX))
			continue;
		lat_seq seq;
		sf_err err = { 0 };
		assert_int_equal(lat_seq_parse(o->seq, &seq, &err), 0);
		uint64_t hist[LAT_MAX_SCORE + 1];
		lat_db_histogram(db_get(kind, len), &seq, hist);
		for (int s = 0; s <= LAT_MAX_SCORE; s++) {
			uint64_t want = s < ORACLE_HIST_SCORES ? o->hist[s] : 0;
			if (hist[s] != want)
				fail_msg("%s, score %d: %llu, oracle %llu", o->name, s,
					 (unsigned long long)hist[s], (unsigned long long)want);
		}
		checked++;
	}
	assert_true(checked >= 2);
}

/* ---- thread count ---- */

static void test_db_threads(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		int len;
	} cases[] = {
		{ LAT_SQUARE, 4 }, /* fewer tasks than threads */
		{ LAT_SQUARE, 12 }, { LAT_SQUARE, 16 }, { LAT_CUBIC, 6 }, { LAT_CUBIC, 10 },
	};
	rng r;
	rng_seed(&r, 31337);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		lat_db *db[3];
		for (int t = 0; t < 3; t++)
			db[t] = build_ok(cases[i].kind, cases[i].len, t + 1);
		for (int t = 1; t < 3; t++) {
			assert_int_equal(lat_db_maps(db[t]), lat_db_maps(db[0]));
			assert_int_equal(lat_db_conformations(db[t]), lat_db_conformations(db[0]));
		}
		for (int k = 0; k < 6; k++) {
			lat_seq seq = k == 0 ? seq_uniform(cases[i].len, 1)
					     : seq_random(&r, cases[i].len);
			lat_result res[3];
			uint64_t hist[3][LAT_MAX_SCORE + 1];
			sf_err err = { 0 };
			for (int t = 0; t < 3; t++) {
				memset(&res[t], 0x11 * (t + 1), sizeof res[t]);
				assert_int_equal(lat_db_evaluate(db[t], &seq, &res[t], &err), 0);
				lat_db_histogram(db[t], &seq, hist[t]);
			}
			for (int t = 1; t < 3; t++) {
				assert_memory_equal(&res[t], &res[0], sizeof res[0]);
				assert_memory_equal(hist[t], hist[0], sizeof hist[0]);
			}
		}
		for (int t = 0; t < 3; t++)
			lat_db_free(db[t]);
	}
}

/*
 * A built database is read-only and may be used by several threads at once:
 * four threads evaluate the same sequences on one database concurrently
 * and must each get what a lone caller gets.
 */
#define SHARED_SEQS 24
#define SHARED_THREADS 4

typedef struct shared_job {
	const lat_db *db;
	const lat_seq *seqs;
	lat_result *out; /* SHARED_SEQS results */
	int failed;
} shared_job;

static void *shared_worker(void *arg)
{
	shared_job *job = arg;
	for (int rep = 0; rep < 3; rep++) {
		for (int i = 0; i < SHARED_SEQS; i++) {
			sf_err err = { 0 };
			if (lat_db_evaluate(job->db, &job->seqs[i], &job->out[i], &err))
				job->failed = 1;
		}
	}
	return NULL;
}

static void test_db_shared_by_threads(void **state)
{
	(void)state;
	const lat_db *db = db_get(LAT_SQUARE, 14);
	static lat_seq seqs[SHARED_SEQS];
	static lat_result alone[SHARED_SEQS], together[SHARED_THREADS][SHARED_SEQS];
	rng r;
	rng_seed(&r, 8086);
	for (int i = 0; i < SHARED_SEQS; i++) {
		sf_err err = { 0 };
		seqs[i] = seq_random(&r, 14);
		assert_int_equal(lat_db_evaluate(db, &seqs[i], &alone[i], &err), 0);
	}
	pthread_t tid[SHARED_THREADS];
	shared_job jobs[SHARED_THREADS];
	for (int t = 0; t < SHARED_THREADS; t++) {
		jobs[t] = (shared_job){ .db = db, .seqs = seqs, .out = together[t] };
		assert_int_equal(pthread_create(&tid[t], NULL, shared_worker, &jobs[t]), 0);
	}
	for (int t = 0; t < SHARED_THREADS; t++)
		assert_int_equal(pthread_join(tid[t], NULL), 0);
	for (int t = 0; t < SHARED_THREADS; t++) {
		assert_int_equal(jobs[t].failed, 0);
		assert_memory_equal(together[t], alone, sizeof alone);
	}
}

/* ---- errors ---- */

static void test_length_mismatch(void **state)
{
	(void)state;
	const lat_db *db = db_get(LAT_SQUARE, 10);
	static const int lens[] = { 1, 9, 11, LAT_MAX_LEN };
	for (size_t i = 0; i < ARRAY_LEN(lens); i++) {
		lat_seq seq = seq_uniform(lens[i], 1);
		lat_result res;
		sf_err err = { 0 };
		assert_int_equal(lat_db_evaluate(db, &seq, &res, &err), SF_EINVAL);
		assert_int_equal(err.code, SF_EINVAL);
		assert_non_null(strstr(err.msg, "10"));
		uint64_t hist[LAT_MAX_SCORE + 1];
		assert_int_equal(lat_db_histogram(db, &seq, hist), SF_EINVAL);
	}
}

static void test_build_errors(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		int len, threads;
		double budget;
		int code;
	} cases[] = {
		/* lengths out of 2..LAT_DB_MAX_LEN */
		{ LAT_SQUARE, 1, 1, 0, SF_EINVAL },
		{ LAT_SQUARE, 0, 1, 0, SF_EINVAL },
		{ LAT_SQUARE, -5, 1, 0, SF_EINVAL },
		{ LAT_SQUARE, LAT_DB_MAX_LEN + 1, 1, 1e30, SF_EINVAL },
		{ LAT_CUBIC, LAT_DB_MAX_LEN + 1, 1, 1e30, SF_EINVAL },
		{ LAT_CUBIC, 1, 1, 0, SF_EINVAL },
		/* over the default database budget (square <= 20, cubic <= 14) */
		{ LAT_SQUARE, 21, 1, 0, SF_EBUDGET },
		{ LAT_SQUARE, LAT_DB_MAX_LEN, 1, 0, SF_EBUDGET },
		{ LAT_CUBIC, 15, 1, 0, SF_EBUDGET },
		{ LAT_CUBIC, LAT_DB_MAX_LEN, 1, 0, SF_EBUDGET },
		/* over an explicit budget */
		{ LAT_SQUARE, 12, 1, 1000, SF_EBUDGET },
		{ LAT_CUBIC, 10, 2, 39639, SF_EBUDGET },
		/* bad thread counts */
		{ LAT_SQUARE, 8, 0, 0, SF_EINVAL },
		{ LAT_SQUARE, 8, -1, 0, SF_EINVAL },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		lat_opts opts = { .threads = cases[i].threads, .budget = cases[i].budget };
		sf_err err = { 0 };
		lat_db *db = lat_db_build(cases[i].kind, cases[i].len, &opts, &err);
		if (db || err.code != cases[i].code) {
			lat_db_free(db);
			fail_msg("case %zu (%s L=%d): got %s with code %d, want NULL and %d", i,
				 lat_kind_name(cases[i].kind), cases[i].len,
				 db ? "a database" : "NULL", err.code, cases[i].code);
		}
		assert_true(err.msg[0] != '\0');
	}
	/* The default database budget admits square 20 and cubic 14 (checked, not built). */
	sf_err err = { 0 };
	assert_int_equal(lat_check_budget(LAT_SQUARE, 20, LAT_DEFAULT_DB_BUDGET, &err), 0);
	assert_int_equal(lat_check_budget(LAT_CUBIC, 14, LAT_DEFAULT_DB_BUDGET, &err), 0);
	/* An exact budget is enough. */
	lat_opts exact = { .threads = 2, .budget = (double)cubic_reduced(10) };
	lat_db *db = lat_db_build(LAT_CUBIC, 10, &exact, &err);
	assert_non_null(db);
	assert_int_equal(lat_db_conformations(db), cubic_reduced(10));
	lat_db_free(db);
	/* Freeing NULL does nothing. */
	lat_db_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contact_map_counts),   cmocka_unit_test(test_conformations),
		cmocka_unit_test(test_agree_square),         cmocka_unit_test(test_agree_cubic),
		cmocka_unit_test(test_oracle_histograms),    cmocka_unit_test(test_db_threads),
		cmocka_unit_test(test_db_shared_by_threads), cmocka_unit_test(test_length_mismatch),
		cmocka_unit_test(test_build_errors),
	};
	return cmocka_run_group_tests(tests, NULL, group_teardown);
}
