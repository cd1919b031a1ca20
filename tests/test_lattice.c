/*
 * test_lattice.c - the direct exact enumerator (lat_enumerate) and the parts
 * of the HP model around it: sequence parsing, fold scoring, the work
 * estimate and the budget.
 *
 * The enumerator is checked three ways:
 *  - against published numbers (tests/fixtures/lattice_oracles.h: OEIS walk
 *    counts, symmetry-reduced counts, A336492, histograms, benchmark optima);
 *  - against an independent brute force written here: plain recursion over
 *    every self-avoiding walk, no symmetry reduction, no grid, an O(n^2)
 *    overlap and contact check;
 *  - against itself: every example fold is re-scored by a checker written
 *    here, and the result must not depend on the thread count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lattice_support.h"
#include "support.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TEST_THREADS 4
/* Longest square chain whose all-H result the group set-up keeps. */
#define ALLH_MAX 20

/* ---- helpers ---- */

static lat_seq seq_text(const char *text)
{
	lat_seq seq;
	sf_err err = { 0 };
	int rc = lat_seq_parse(text, &seq, &err);
	if (rc)
		fail_msg("lat_seq_parse(%s): %s", text, err.msg);
	return seq;
}

static const char *seq_str(const lat_seq *seq, char buf[LAT_MAX_LEN + 1])
{
	lat_seq_format(seq, buf);
	return buf;
}

/*
 * Enumerates and insists on success. `out` is first filled with a byte that
 * depends on the thread count, so bytes the engine forgot to write would
 * show up in the memcmp of the thread test.
 */
static void enumerate_ok(lat_kind kind, const lat_seq *seq, int threads, lat_result *out)
{
	lat_opts opts = { .threads = threads, .budget = 0 };
	sf_err err = { 0 };
	memset(out, 0x11 * threads, sizeof *out);
	int rc = lat_enumerate(kind, seq, &opts, out, &err);
	if (rc) {
		char buf[LAT_MAX_LEN + 1];
		fail_msg("lat_enumerate(%s, %s, %d threads) = %d: %s", lat_kind_name(kind),
			 seq_str(seq, buf), threads, rc, err.msg);
	}
}

/* The summary fields agree with the histogram. */
static void check_summary(const lat_result *res, lat_kind kind, int len)
{
	assert_int_equal(res->lattice, kind);
	assert_int_equal(res->len, len);
	uint64_t total = 0;
	int max = 0, distinct = 0;
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		total += res->hist[s];
		if (res->hist[s]) {
			max = s;
			distinct++;
		}
	}
	assert_int_equal(res->conformations, total);
	assert_int_equal(res->max_score, max);
	assert_int_equal(res->distinct_scores, distinct);
}

/* ---- an independent checker and brute-force enumerator ---- */

static const char bf_letters[] = "RLUDFB";
static const int bf_step[6][3] = {
	{ 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 },
};

static int bf_dist(const int *a, const int *b)
{
	return abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]);
}

/*
 * The symmetry-reduced representative, decided from absolute moves alone:
 * the first move is R, the first move that is not R is U, and the first
 * move that leaves the xy plane is F. Walks failing this are in BF_OTHER.
 */
enum { BF_START, BF_STRAIGHT, BF_PLANE, BF_FREE, BF_OTHER };

static int bf_next_state(int state, int d)
{
	switch (state) {
	case BF_START:
		return d == 0 ? BF_STRAIGHT : BF_OTHER;
	case BF_STRAIGHT:
		return d == 0 ? BF_STRAIGHT : d == 2 ? BF_PLANE : BF_OTHER;
	case BF_PLANE:
		return d < 4 ? BF_PLANE : d == 4 ? BF_FREE : BF_OTHER;
	default:
		return state;
	}
}

/*
 * Scores `fold` (one letter per bond) for `seq` on a lattice with `ndir`
 * directions; -1 when the fold has the wrong length, a letter off the
 * lattice or visits a site twice. Sets *canonical when the fold is the
 * symmetry-reduced representative as defined above.
 */
static int bf_check_fold(int ndir, const lat_seq *seq, const char *fold, int *canonical)
{
	int pos[LAT_MAX_LEN][3] = { { 0, 0, 0 } };
	size_t n = strnlen(fold, LAT_MAX_LEN);
	if ((int)n != seq->len - 1)
		return -1;
	int state = BF_START;
	for (size_t b = 0; b < n; b++) {
		const char *at = memchr(bf_letters, fold[b], (size_t)ndir);
		if (!at)
			return -1;
		int d = (int)(at - bf_letters);
		state = bf_next_state(state, d);
		for (int a = 0; a < 3; a++)
			pos[b + 1][a] = pos[b][a] + bf_step[d][a];
	}
	for (int i = 0; i < seq->len; i++)
		for (int j = i + 1; j < seq->len; j++)
			if (bf_dist(pos[i], pos[j]) == 0)
				return -1;
	int score = 0;
	for (int i = 0; i < seq->len; i++)
		for (int j = i + 2; j < seq->len; j++)
			score += seq->h[i] && seq->h[j] && bf_dist(pos[i], pos[j]) == 1;
	if (canonical)
		*canonical = state != BF_OTHER;
	return score;
}

typedef struct bf_walk {
	int ndir, len;
	const uint8_t *h;
	int pos[LAT_MAX_LEN][3];
	char fold[LAT_MAX_LEN];
	uint64_t walks;                             /* every self-avoiding walk */
	uint64_t all[LAT_MAX_SCORE + 1];            /* per score, over every walk */
	uint64_t reduced[LAT_MAX_SCORE + 1];        /* per score, over the representatives */
	char first[LAT_MAX_SCORE + 1][LAT_MAX_LEN]; /* first representative per score */
} bf_walk;

/* Places residue k next to residue k-1 in every direction, R L U D F B in turn. */
static void bf_place(bf_walk *w, int k, int score, int state)
{
	if (k == w->len) {
		w->walks++;
		w->all[score]++;
		if (state != BF_OTHER) {
			if (!w->reduced[score])
				memcpy(w->first[score], w->fold, (size_t)k - 1);
			w->reduced[score]++;
		}
		return;
	}
	for (int d = 0; d < w->ndir; d++) {
		int p[3];
		for (int a = 0; a < 3; a++)
			p[a] = w->pos[k - 1][a] + bf_step[d][a];
		int ok = 1, gain = 0;
		for (int j = 0; j < k - 1; j++) {
			int dist = bf_dist(w->pos[j], p);
			if (dist == 0) {
				ok = 0;
				break;
			}
			gain += dist == 1 && w->h[j] && w->h[k];
		}
		if (!ok)
			continue;
		memcpy(w->pos[k], p, sizeof p);
		w->fold[k - 1] = bf_letters[d];
		bf_place(w, k + 1, score + gain, bf_next_state(state, d));
	}
}

static void bf_run(lat_kind kind, const lat_seq *seq, bf_walk *w)
{
	memset(w, 0, sizeof *w);
	w->ndir = kind == LAT_CUBIC ? 6 : 4;
	w->len = seq->len;
	w->h = seq->h;
	bf_place(w, 1, 0, BF_START);
}

/*
 * Histogram over all walks from symmetry-reduced ones, for chains of two
 * residues or more (one residue is a single point, one walk). Square: every
 * class has 8 images but the rod, 4. Cubic: non-planar classes 48, planar 24, the
 * rod 6, and the planar classes with the rod are the square classes, so
 * all = 48 cubic - 24 square - 18 [s == 0] (the rod always scores 0).
 */
static void unreduced_square(const lat_result *sq, uint64_t out[LAT_MAX_SCORE + 1])
{
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		out[s] = 8 * sq->hist[s] - (s == 0 ? 4 : 0);
}

static void unreduced_cubic(const lat_result *cu, const lat_result *sq,
			    uint64_t out[LAT_MAX_SCORE + 1])
{
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		out[s] = 48 * cu->hist[s] - 24 * sq->hist[s] - (s == 0 ? 18 : 0);
}

/*
 * The examples: a fold exactly for the reachable scores, each a canonical
 * self-avoiding walk that scores its key under the checker above (and under
 * lat_fold_score), with nothing but zero bytes after it.
 */
static void check_examples(lat_kind kind, const lat_seq *seq, const lat_result *res)
{
	int ndir = kind == LAT_CUBIC ? 6 : 4;
	char buf[LAT_MAX_LEN + 1];
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		const char *ex = res->examples[s];
		size_t n = strnlen(ex, LAT_MAX_LEN);
		for (size_t b = n; b < LAT_MAX_LEN; b++)
			if (ex[b])
				fail_msg("%s %s: junk after example %d", lat_kind_name(kind),
					 seq_str(seq, buf), s);
		if (!res->hist[s]) {
			if (n)
				fail_msg("%s %s: example for unreachable score %d: %s",
					 lat_kind_name(kind), seq_str(seq, buf), s, ex);
			continue;
		}
		if ((int)n != seq->len - 1)
			fail_msg("%s %s: example %d has %zu moves", lat_kind_name(kind),
				 seq_str(seq, buf), s, n);
		int canonical = 0;
		int got = bf_check_fold(ndir, seq, ex, &canonical);
		if (got != s)
			fail_msg("%s %s: example %d '%s' checks as %d", lat_kind_name(kind),
				 seq_str(seq, buf), s, ex, got);
		if (!canonical)
			fail_msg("%s %s: example %d '%s' is not symmetry-reduced",
				 lat_kind_name(kind), seq_str(seq, buf), s, ex);
		sf_err err = { 0 };
		char fold[LAT_MAX_LEN + 1] = { 0 };
		memcpy(fold, ex, n);
		assert_int_equal(lat_fold_score(kind, seq, fold, &err), s);
	}
}

/* ---- shared results: the all-H square chain for L = 1..ALLH_MAX ---- */

static lat_result allh_square[ALLH_MAX + 1];

static int group_setup(void **state)
{
	(void)state;
	for (int len = 1; len <= ALLH_MAX; len++) {
		lat_seq seq = seq_uniform(len, 1);
		lat_opts opts = { .threads = TEST_THREADS, .budget = 0 };
		sf_err err = { 0 };
		if (lat_enumerate(LAT_SQUARE, &seq, &opts, &allh_square[len], &err)) {
			fprintf(stderr, "set-up: all-H L=%d: %s\n", len, err.msg);
			return -1;
		}
	}
	return 0;
}

/* ---- lat_seq_parse ---- */

static void test_seq_parse_valid(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"H", "P", "HP", "HPPH", "HPHPPHHPHPPHPHHP", "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH",
	};
	for (size_t i = 0; i < ARRAY_LEN(texts); i++) {
		lat_seq seq;
		sf_err err = { 0 };
		assert_int_equal(lat_seq_parse(texts[i], &seq, &err), 0);
		assert_int_equal(seq.len, (int)strlen(texts[i]));
		for (int k = 0; k < seq.len; k++)
			assert_int_equal(seq.h[k], texts[i][k] == 'H');
		char buf[LAT_MAX_LEN + 1];
		assert_string_equal(seq_str(&seq, buf), texts[i]);
	}
}

static void test_seq_parse_invalid(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *needle; /* must appear in the message */
	} cases[] = {
		{ "", "empty" },
		{ "h", "position 1" },
		{ "HPhP", "position 3" },
		{ "HPPp", "position 4" },
		{ "HPXP", "position 3" },
		{ "A", "position 1" },
		{ "HP P", "position 3" },
		{ "HHHH\tH", "position 5" },
		{ "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH",
		  "65" }, /* 65 letters */
		{ "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP",
		  "80" }, /* 80 letters */
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		lat_seq seq;
		sf_err err = { 0 };
		int rc = lat_seq_parse(cases[i].text, &seq, &err);
		if (rc != SF_EINVAL || err.code != SF_EINVAL)
			fail_msg("'%s': rc %d code %d", cases[i].text, rc, err.code);
		if (!strstr(err.msg, cases[i].needle))
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, err.msg,
				 cases[i].needle);
	}
	/* The length message also names the allowed range. */
	lat_seq seq;
	sf_err err = { 0 };
	assert_int_equal(lat_seq_parse(cases[ARRAY_LEN(cases) - 2].text, &seq, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "1..64"));
}

/* ---- lat_fold_score on hand-made folds ---- */

static void test_fold_score_cases(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		const char *seq, *fold;
		int want;           /* score, or SF_EINVAL */
		const char *needle; /* in the error message */
	} cases[] = {
		{ LAT_SQUARE, "H", "", 0, NULL },
		{ LAT_SQUARE, "HH", "R", 0, NULL },
		{ LAT_SQUARE, "HH", "D", 0, NULL },
		{ LAT_SQUARE, "HPPH", "RUL", 1, NULL }, /* a unit square: 0 touches 3 */
		{ LAT_SQUARE, "PHHP", "RUL", 0, NULL }, /* ... P residues do not count */
		{ LAT_SQUARE, "HHHH", "RRR", 0, NULL }, /* the rod */
		{ LAT_SQUARE, "HHHH", "LDR", 1, NULL }, /* any orientation */
		{ LAT_SQUARE, "HPPPPH", "RULLD", 1, NULL },
		/* a 3x3 spiral: 12 edges - 8 bonds */
		{ LAT_SQUARE, "HHHHHHHHH", "RRUULLDR", 4, NULL },
		{ LAT_SQUARE, "HHHHHHHHH", "RRUULLDRR", SF_EINVAL, "9 moves" },
		{ LAT_CUBIC, "HPPH", "RFL", 1, NULL },
		{ LAT_CUBIC, "HHHHHHHH", "RULFRDL", 5, NULL }, /* 2x2x2 cube: 12 edges - 7 bonds */
		{ LAT_CUBIC, "HHHHHHHH", "RRRRRRR", 0, NULL },
		/* overlaps */
		{ LAT_SQUARE, "HHH", "RL", SF_EINVAL, "move 2" },
		{ LAT_SQUARE, "HHHHH", "RULD", SF_EINVAL, "move 4" },
		{ LAT_CUBIC, "HHHHH", "RFLB", SF_EINVAL, "move 4" },
		{ LAT_CUBIC, "HHHHHHHHHH", "RULFRDLBR", SF_EINVAL, "move 8" },
		/* wrong lengths */
		{ LAT_SQUARE, "H", "R", SF_EINVAL, "1 moves" },
		{ LAT_SQUARE, "HHHH", "RU", SF_EINVAL, "2 moves" },
		{ LAT_SQUARE, "HHHH", "RULD", SF_EINVAL, "4 moves" },
		{ LAT_CUBIC, "HHHH", "", SF_EINVAL, "0 moves" },
		/* letters off the lattice */
		{ LAT_SQUARE, "HHHH", "RFL", SF_EINVAL, "move 2" },
		{ LAT_SQUARE, "HHHH", "RUB", SF_EINVAL, "move 3" },
		{ LAT_CUBIC, "HHHH", "RXL", SF_EINVAL, "move 2" },
		{ LAT_CUBIC, "HHHH", "rul", SF_EINVAL, "move 1" },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		lat_seq seq = seq_text(cases[i].seq);
		sf_err err = { 0 };
		int got = lat_fold_score(cases[i].kind, &seq, cases[i].fold, &err);
		if (got != cases[i].want)
			fail_msg("case %zu (%s %s %s): got %d, want %d (%s)", i,
				 lat_kind_name(cases[i].kind), cases[i].seq, cases[i].fold, got,
				 cases[i].want, err.msg);
		if (cases[i].want >= 0) {
			/* The independent checker agrees on the valid ones. */
			int ndir = cases[i].kind == LAT_CUBIC ? 6 : 4;
			assert_int_equal(bf_check_fold(ndir, &seq, cases[i].fold, NULL), got);
			continue;
		}
		assert_int_equal(err.code, cases[i].want);
		if (!strstr(err.msg, cases[i].needle))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i].needle);
		int ndir = cases[i].kind == LAT_CUBIC ? 6 : 4;
		assert_int_equal(bf_check_fold(ndir, &seq, cases[i].fold, NULL), -1);
	}
}

/* ---- symmetry-reduced counts ---- */

static void test_square_counts(void **state)
{
	(void)state;
	for (int len = 1; len <= ALLH_MAX; len++) {
		const lat_result *res = &allh_square[len];
		check_summary(res, LAT_SQUARE, len);
		if (res->conformations != oracle_square_reduced[len])
			fail_msg("square L=%d: %llu conformations, A046171 says %llu", len,
				 (unsigned long long)res->conformations,
				 (unsigned long long)oracle_square_reduced[len]);
		/* A046171 is (c_n - 4)/8 + 1 with c_n from A001411. */
		if (len >= 2)
			assert_int_equal(oracle_square_reduced[len],
					 (oracle_square_walks[len - 1] - 4) / 8 + 1);
	}
	/* Another sequence has the same conformations: the all-P chain. */
	for (int len = 1; len <= 16; len++) {
		lat_seq seq = seq_uniform(len, 0);
		lat_result res;
		enumerate_ok(LAT_SQUARE, &seq, TEST_THREADS, &res);
		assert_int_equal(res.conformations, oracle_square_reduced[len]);
		assert_int_equal(res.hist[0], res.conformations);
		assert_int_equal(res.max_score, 0);
		assert_int_equal(res.distinct_scores, 1);
	}
}

static void test_cubic_formula(void **state)
{
	(void)state;
	/* The formula reproduces the two published cubic reduced counts. */
	assert_int_equal(cubic_reduced(10), ORACLE_CUBIC_REDUCED_L10);
	assert_int_equal(cubic_reduced(12), ORACLE_CUBIC_REDUCED_L12);
	/* And its divisions are exact wherever the tables reach. */
	for (int n = 1; n < (int)ARRAY_LEN(oracle_cubic_walks); n++) {
		uint64_t c3 = oracle_cubic_walks[n], c2 = oracle_square_walks[n];
		assert_int_equal((c2 - 4) % 8, 0);
		assert_int_equal((c3 - 3 * (c2 - 4) - 6) % 48, 0);
	}
}

static void test_cubic_counts(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 1301);
	for (int len = 1; len <= 13; len++) {
		lat_seq seq = len % 2 ? seq_uniform(len, 0) : seq_random(&r, len);
		lat_result res;
		enumerate_ok(LAT_CUBIC, &seq, TEST_THREADS, &res);
		check_summary(&res, LAT_CUBIC, len);
		if (res.conformations != cubic_reduced(len))
			fail_msg("cubic L=%d: %llu conformations, want %llu", len,
				 (unsigned long long)res.conformations,
				 (unsigned long long)cubic_reduced(len));
	}
}

/* lat_estimate is exact where the walk tables reach (square n <= 30, cubic n <= 20). */
static void test_estimate_exact(void **state)
{
	(void)state;
	for (int len = 1; len <= 31; len++) {
		double want = (double)square_reduced(len);
		if (lat_estimate(LAT_SQUARE, len) != want)
			fail_msg("square L=%d: estimate %.17g, want %.17g", len,
				 lat_estimate(LAT_SQUARE, len), want);
	}
	for (int len = 1; len <= 21; len++) {
		double want = (double)cubic_reduced(len);
		if (lat_estimate(LAT_CUBIC, len) != want)
			fail_msg("cubic L=%d: estimate %.17g, want %.17g", len,
				 lat_estimate(LAT_CUBIC, len), want);
	}
	/* Beyond the tables it keeps growing. */
	assert_true(lat_estimate(LAT_SQUARE, 32) > lat_estimate(LAT_SQUARE, 31));
	assert_true(lat_estimate(LAT_CUBIC, 22) > lat_estimate(LAT_CUBIC, 21));
}

/* ---- the brute force against OEIS, then the engine against the brute force ---- */

static void test_bruteforce_walk_counts(void **state)
{
	(void)state;
	static bf_walk w;
	for (int len = 1; len <= 12; len++) {
		lat_seq seq = seq_uniform(len, 0);
		bf_run(LAT_SQUARE, &seq, &w);
		assert_int_equal(w.walks, oracle_square_walks[len - 1]); /* A001411 */
		assert_int_equal(w.reduced[0], square_reduced(len));     /* A046171 */
	}
	for (int len = 1; len <= 8; len++) {
		lat_seq seq = seq_uniform(len, 0);
		bf_run(LAT_CUBIC, &seq, &w);
		assert_int_equal(w.walks, oracle_cubic_walks[len - 1]); /* A001412 */
		assert_int_equal(w.reduced[0], cubic_reduced(len));
	}
}

/* The oracle's histograms over all walks: all-H square L=12 and cubic L=8. */
static void test_allwalk_histograms(void **state)
{
	(void)state;
	static bf_walk w;
	for (size_t i = 0; i < ARRAY_LEN(oracle_histograms); i++) {
		const oracle_hist *o = &oracle_histograms[i];
		if (o->reduced)
			continue;
		lat_seq seq = seq_text(o->seq);
		lat_kind kind = o->cubic ? LAT_CUBIC : LAT_SQUARE;
		uint64_t engine[LAT_MAX_SCORE + 1];
		lat_result sq, cu;
		enumerate_ok(LAT_SQUARE, &seq, TEST_THREADS, &sq);
		if (o->cubic) {
			enumerate_ok(LAT_CUBIC, &seq, TEST_THREADS, &cu);
			unreduced_cubic(&cu, &sq, engine);
		} else {
			unreduced_square(&sq, engine);
		}
		bf_run(kind, &seq, &w);
		for (int s = 0; s <= LAT_MAX_SCORE; s++) {
			uint64_t want = s < ORACLE_HIST_SCORES ? o->hist[s] : 0;
			if (w.all[s] != want || engine[s] != want)
				fail_msg("%s, score %d: brute force %llu, engine %llu, oracle %llu",
					 o->name, s, (unsigned long long)w.all[s],
					 (unsigned long long)engine[s], (unsigned long long)want);
		}
	}
}

/*
 * Random sequences: the engine's reduced histogram equals the brute force's
 * count of representatives, the brute force's histogram over all walks is
 * the symmetry relation applied to the engine's, and every example is the
 * first representative reaching its score in R L U D F B depth-first order.
 */
static void compare_with_bruteforce(lat_kind kind, const lat_seq *seq, int threads)
{
	static bf_walk w;
	char buf[LAT_MAX_LEN + 1];
	lat_result res, sq;
	uint64_t unreduced[LAT_MAX_SCORE + 1];
	enumerate_ok(kind, seq, threads, &res);
	check_summary(&res, kind, seq->len);
	if (kind == LAT_CUBIC) {
		enumerate_ok(LAT_SQUARE, seq, threads, &sq);
		unreduced_cubic(&res, &sq, unreduced);
	} else {
		unreduced_square(&res, unreduced);
	}
	bf_run(kind, seq, &w);
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		if (res.hist[s] != w.reduced[s] || unreduced[s] != w.all[s])
			fail_msg("%s %s score %d: engine %llu (all walks %llu), brute force %llu "
				 "(all walks %llu)",
				 lat_kind_name(kind), seq_str(seq, buf), s,
				 (unsigned long long)res.hist[s], (unsigned long long)unreduced[s],
				 (unsigned long long)w.reduced[s], (unsigned long long)w.all[s]);
		if (memcmp(res.examples[s], w.first[s], LAT_MAX_LEN))
			fail_msg("%s %s score %d: example '%.32s', first in depth-first order "
				 "'%.32s'",
				 lat_kind_name(kind), seq_str(seq, buf), s, res.examples[s],
				 w.first[s]);
	}
	check_examples(kind, seq, &res);
}

/*
 * Engine against brute force for every length up to `max_len`: the all-H
 * and all-P chains and `per_len` random ones, on thread counts 1..3.
 */
static void check_bruteforce_lengths(lat_kind kind, int max_len, int per_len, uint64_t seed)
{
	rng r;
	rng_seed(&r, seed);
	for (int len = 2; len <= max_len; len++) {
		lat_seq allh = seq_uniform(len, 1), allp = seq_uniform(len, 0);
		compare_with_bruteforce(kind, &allh, 1 + len % 3);
		compare_with_bruteforce(kind, &allp, 1 + len % 3);
		for (int i = 0; i < per_len; i++) {
			lat_seq seq = seq_random(&r, len);
			compare_with_bruteforce(kind, &seq, 1 + i % 3);
		}
	}
}

static void test_bruteforce_square(void **state)
{
	(void)state;
	check_bruteforce_lengths(LAT_SQUARE, 11, 8, 20240611);
}

static void test_bruteforce_cubic(void **state)
{
	(void)state;
	check_bruteforce_lengths(LAT_CUBIC, 8, 6, 7734);
}

/* ---- published histograms and sums ---- */

static void test_reduced_histograms(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(oracle_histograms); i++) {
		const oracle_hist *o = &oracle_histograms[i];
		if (!o->reduced)
			continue;
		lat_seq seq = seq_text(o->seq);
		lat_kind kind = o->cubic ? LAT_CUBIC : LAT_SQUARE;
		lat_result res;
		enumerate_ok(kind, &seq, TEST_THREADS, &res);
		check_summary(&res, kind, seq.len);
		for (int s = 0; s <= LAT_MAX_SCORE; s++) {
			uint64_t want = s < ORACLE_HIST_SCORES ? o->hist[s] : 0;
			if (res.hist[s] != want)
				fail_msg("%s, score %d: %llu, oracle %llu", o->name, s,
					 (unsigned long long)res.hist[s], (unsigned long long)want);
		}
		assert_int_equal(res.conformations, kind == LAT_CUBIC ? cubic_reduced(seq.len)
								      : square_reduced(seq.len));
		check_examples(kind, &seq, &res);
	}
}

/* A336492: the contacts of all square walks of the all-H chain, n = 1..19 bonds. */
static void test_contact_sum_a336492(void **state)
{
	(void)state;
	for (int n = 1; n <= ALLH_MAX - 1; n++) {
		uint64_t all[LAT_MAX_SCORE + 1], sum = 0;
		unreduced_square(&allh_square[n + 1], all);
		for (int s = 0; s <= LAT_MAX_SCORE; s++)
			sum += (uint64_t)s * all[s];
		if (sum != oracle_square_contact_sum[n])
			fail_msg("n=%d: contact sum %llu, A336492 says %llu", n,
				 (unsigned long long)sum,
				 (unsigned long long)oracle_square_contact_sum[n]);
	}
}

/* Best known optima of the square benchmarks of length 18 and 20. */
static void test_benchmark_optima(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(oracle_square_optima); i++) {
		const oracle_optimum *o = &oracle_square_optima[i];
		lat_seq seq = seq_text(o->seq);
		lat_result res;
		enumerate_ok(LAT_SQUARE, &seq, TEST_THREADS, &res);
		if (res.max_score != o->best)
			fail_msg("%s: max score %d, best known %d", o->seq, res.max_score, o->best);
		if (o->unique)
			assert_int_equal(res.hist[o->best], 1);
		check_examples(LAT_SQUARE, &seq, &res);
	}
}

/* ---- examples and threads ---- */

static void test_examples_valid(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 99);
	for (int len = 1; len <= 16; len++) {
		for (int i = 0; i < 3; i++) {
			lat_seq seq = i == 0 ? seq_uniform(len, 1) : seq_random(&r, len);
			lat_result res;
			enumerate_ok(LAT_SQUARE, &seq, TEST_THREADS, &res);
			check_examples(LAT_SQUARE, &seq, &res);
			if (len <= 12) {
				enumerate_ok(LAT_CUBIC, &seq, TEST_THREADS, &res);
				check_examples(LAT_CUBIC, &seq, &res);
			}
		}
	}
	/* A chain of one residue: one conformation, the empty fold. */
	lat_seq one = seq_text("H");
	lat_result res;
	enumerate_ok(LAT_CUBIC, &one, 1, &res);
	assert_int_equal(res.conformations, 1);
	assert_int_equal(res.hist[0], 1);
	assert_string_equal(res.examples[0], "");
}

static void test_thread_independence(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		const char *seq;
	} cases[] = {
		{ LAT_SQUARE, "HPH" }, /* fewer tasks than threads */
		{ LAT_SQUARE, "HHPHHPPH" },
		{ LAT_SQUARE, "HPHPPHHPHPPHPHHP" },
		{ LAT_SQUARE, "HHPPHPPHHHPHHPPHHH" },
		{ LAT_CUBIC, "HPPH" },
		{ LAT_CUBIC, "HHPHPPHHH" },
		{ LAT_CUBIC, "HPHHPPHHHPHH" },
	};
	static const int threads[] = { 2, 3, 7 };
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		lat_seq seq = seq_text(cases[i].seq);
		lat_result one, many;
		enumerate_ok(cases[i].kind, &seq, 1, &one);
		for (size_t t = 0; t < ARRAY_LEN(threads); t++) {
			enumerate_ok(cases[i].kind, &seq, threads[t], &many);
			if (memcmp(&one, &many, sizeof one))
				fail_msg("%s %s: %d threads differ from 1",
					 lat_kind_name(cases[i].kind), cases[i].seq, threads[t]);
		}
	}
}

/* ---- the budget ---- */

static int contains(const char *msg, const char *needle)
{
	return strstr(msg, needle) != NULL;
}

/* The budget error names the estimate and the limit, as %.3g writes them. */
static void check_budget_message(const sf_err *err, double estimate, double limit)
{
	char est[32], lim[32];
	snprintf(est, sizeof est, "%.3g", estimate);
	snprintf(lim, sizeof lim, "%.3g", limit);
	if (!contains(err->msg, est) || !contains(err->msg, lim))
		fail_msg("budget message '%s' lacks estimate %s or limit %s", err->msg, est, lim);
}

static void test_budget_refusal(void **state)
{
	(void)state;
	lat_result res;
	sf_err err = { 0 };
	lat_seq seq = seq_uniform(12, 1);

	/* Square L = 12 has 15037 conformations: a budget of 1000 refuses it. */
	lat_opts small = { .threads = 2, .budget = 1000 };
	assert_int_equal(lat_enumerate(LAT_SQUARE, &seq, &small, &res, &err), SF_EBUDGET);
	assert_int_equal(err.code, SF_EBUDGET);
	check_budget_message(&err, (double)square_reduced(12), 1000);
	memset(&err, 0, sizeof err);
	assert_int_equal(lat_check_budget(LAT_SQUARE, 12, 1000, &err), SF_EBUDGET);
	check_budget_message(&err, (double)square_reduced(12), 1000);

	/* One under the exact count refuses, the exact count is enough. */
	lat_opts tight = { .threads = 2, .budget = (double)square_reduced(12) - 1 };
	assert_int_equal(lat_enumerate(LAT_SQUARE, &seq, &tight, &res, &err), SF_EBUDGET);
	tight.budget += 1;
	assert_int_equal(lat_enumerate(LAT_SQUARE, &seq, &tight, &res, &err), 0);
	assert_int_equal(res.conformations, square_reduced(12));

	/* Cubic L = 10: 39640 conformations. */
	lat_seq ten = seq_uniform(10, 1);
	lat_opts cub = { .threads = 2, .budget = 1e4 };
	memset(&err, 0, sizeof err);
	assert_int_equal(lat_enumerate(LAT_CUBIC, &ten, &cub, &res, &err), SF_EBUDGET);
	assert_int_equal(err.code, SF_EBUDGET);
	check_budget_message(&err, (double)ORACLE_CUBIC_REDUCED_L10, 1e4);
	cub.budget = (double)ORACLE_CUBIC_REDUCED_L10;
	assert_int_equal(lat_enumerate(LAT_CUBIC, &ten, &cub, &res, &err), 0);

	/* The default budget refuses square 25 straight away, naming both numbers. */
	lat_seq long25 = seq_uniform(25, 1);
	lat_opts dflt = { .threads = 1, .budget = 0 };
	memset(&err, 0, sizeof err);
	assert_int_equal(lat_enumerate(LAT_SQUARE, &long25, &dflt, &res, &err), SF_EBUDGET);
	assert_int_equal(err.code, SF_EBUDGET);
	check_budget_message(&err, (double)square_reduced(25), LAT_DEFAULT_BUDGET);
}

static void test_default_budget(void **state)
{
	(void)state;
	sf_err err = { 0 };
	/* Admitted by the default budget (checked, not enumerated). */
	for (int len = 1; len <= 24; len++)
		assert_int_equal(lat_check_budget(LAT_SQUARE, len, 0, &err), 0);
	for (int len = 1; len <= 17; len++)
		assert_int_equal(lat_check_budget(LAT_CUBIC, len, 0, &err), 0);
	/* A negative budget selects the default too. */
	assert_int_equal(lat_check_budget(LAT_SQUARE, 24, -1, &err), 0);
	assert_int_equal(lat_check_budget(LAT_SQUARE, 25, -1, &err), SF_EBUDGET);
	/* Refused from square 25 and cubic 18 up to the longest chain. */
	for (int len = 25; len <= LAT_MAX_LEN; len++) {
		memset(&err, 0, sizeof err);
		assert_int_equal(lat_check_budget(LAT_SQUARE, len, 0, &err), SF_EBUDGET);
		assert_int_equal(err.code, SF_EBUDGET);
		check_budget_message(&err, lat_estimate(LAT_SQUARE, len), LAT_DEFAULT_BUDGET);
	}
	for (int len = 18; len <= LAT_MAX_LEN; len++) {
		memset(&err, 0, sizeof err);
		assert_int_equal(lat_check_budget(LAT_CUBIC, len, 0, &err), SF_EBUDGET);
		check_budget_message(&err, lat_estimate(LAT_CUBIC, len), LAT_DEFAULT_BUDGET);
	}
	/* Lengths outside 1..LAT_MAX_LEN are invalid, not over budget. */
	static const int bad[] = { -1, 0, LAT_MAX_LEN + 1, 100 };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		memset(&err, 0, sizeof err);
		assert_int_equal(lat_check_budget(LAT_SQUARE, bad[i], 1e30, &err), SF_EINVAL);
		assert_int_equal(err.code, SF_EINVAL);
	}
}

static void test_bad_threads(void **state)
{
	(void)state;
	lat_seq seq = seq_text("HPPH");
	lat_result res;
	static const int bad[] = { 0, -3, 1025 };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		lat_opts opts = { .threads = bad[i], .budget = 0 };
		sf_err err = { 0 };
		assert_int_equal(lat_enumerate(LAT_SQUARE, &seq, &opts, &res, &err), SF_EINVAL);
		assert_int_equal(err.code, SF_EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_parse_valid),
		cmocka_unit_test(test_seq_parse_invalid),
		cmocka_unit_test(test_fold_score_cases),
		cmocka_unit_test(test_square_counts),
		cmocka_unit_test(test_cubic_formula),
		cmocka_unit_test(test_cubic_counts),
		cmocka_unit_test(test_estimate_exact),
		cmocka_unit_test(test_bruteforce_walk_counts),
		cmocka_unit_test(test_allwalk_histograms),
		cmocka_unit_test(test_bruteforce_square),
		cmocka_unit_test(test_bruteforce_cubic),
		cmocka_unit_test(test_reduced_histograms),
		cmocka_unit_test(test_contact_sum_a336492),
		cmocka_unit_test(test_benchmark_optima),
		cmocka_unit_test(test_examples_valid),
		cmocka_unit_test(test_thread_independence),
		cmocka_unit_test(test_budget_refusal),
		cmocka_unit_test(test_default_budget),
		cmocka_unit_test(test_bad_threads),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
