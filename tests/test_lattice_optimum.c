/*
 * test_lattice_optimum.c - the best-fold search for long chains
 * (core/lattice/optimum.c): replica-exchange Monte Carlo with pull moves,
 * then branch and bound.
 *
 * Oracles:
 *  - the exact enumerator (lat_enumerate): for random chains at square
 *    lengths 10..16 and cubic 8..11, the branch and bound alone must prove
 *    its maximum, the heuristic alone must reach it, and the bound must
 *    never be below it;
 *  - the check operation (lat_fold_check) for every fold of up to
 *    LAT_MAX_LEN residues, and a walker of the tests (replay_fold() in
 *    lattice_support.h: coordinates,
 *    pairwise contacts) for every fold of any length: each returned fold is
 *    a conformation of the chain and scores exactly what the result claims;
 *  - published optima (copied from the oracle notes, not read from them):
 *    the four 18- and 20-mers with a single optimal fold, proven here, and
 *    the standard 2D benchmarks of lengths 20..64, reached here;
 *  - budgets: a tiny node budget never gives proven; the same seed twice
 *    gives the same fold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lattice/check.h"
#include "lattice/lattice.h"
#include "lattice/optimum.h"
#include "lattice_support.h"
#include "rng.h"

/* ---- helpers ---- */

static lat_opt_chain chain_of(const char *text)
{
	lat_opt_chain c;
	sf_err err;
	if (lat_opt_chain_parse(text, &c, &err))
		fail_msg("bad test chain %s: %s", text, err.msg);
	return c;
}

/* The result's fold is valid and scores res->score, by both checkers. */
static void assert_fold_scores(lat_kind kind, const lat_opt_chain *c, const lat_optimum_result *res)
{
	int mine = replay_fold(kind, c->h, c->len, res->fold);
	if (mine != res->score)
		fail_msg("fold %s replays to %d, result claims %d", res->fold, mine, res->score);
	if (c->len <= LAT_MAX_LEN) {
		lat_seq seq;
		memset(&seq, 0, sizeof seq);
		seq.len = c->len;
		memcpy(seq.h, c->h, (size_t)c->len);
		lat_fold_verdict v;
		lat_fold_check(kind, &seq, res->fold, strlen(res->fold), &v);
		assert_int_equal(v.fault, LAT_FOLD_OK);
		assert_int_equal(v.score, res->score);
	}
}

static int exact_max(lat_kind kind, const lat_seq *seq)
{
	lat_opts opts = { .threads = 1, .budget = 0 };
	lat_result *res = malloc(sizeof *res);
	sf_err err;
	assert_non_null(res);
	assert_int_equal(lat_enumerate(kind, seq, &opts, res, &err), 0);
	int m = res->max_score;
	free(res);
	return m;
}

static lat_optimum_result run(lat_kind kind, const lat_opt_chain *c, const lat_optimum_config *cfg)
{
	lat_optimum_result res;
	sf_err err;
	if (lat_optimum(kind, c, cfg, &res, &err))
		fail_msg("lat_optimum failed: %s", err.msg);
	assert_fold_scores(kind, c, &res);
	assert_true(res.score <= res.bound);
	/* proven only from a completed search or a score at the bound */
	if (res.proven)
		assert_true(res.exact_complete || res.score == res.bound);
	return res;
}

/* ---- against the exact enumerator ---- */

static void check_random(lat_kind kind, int lo, int hi, int per_len, uint64_t seed)
{
	rng r;
	rng_seed(&r, seed);
	for (int len = lo; len <= hi; len++)
		for (int t = 0; t < per_len; t++) {
			lat_seq seq = seq_random(&r, len);
			int want = exact_max(kind, &seq);
			lat_opt_chain c;
			lat_opt_chain_from_seq(&seq, &c);
			assert_true(lat_optimum_bound(kind, &c) >= want);

			/* the exact search alone proves the maximum */
			lat_optimum_config cfg;
			lat_optimum_defaults(&cfg);
			cfg.moves = 0;
			lat_optimum_result res = run(kind, &c, &cfg);
			assert_int_equal(res.score, want);
			assert_true(res.proven);

			/* the heuristic alone reaches it */
			lat_optimum_defaults(&cfg);
			cfg.nodes = 0;
			cfg.moves = 2000000;
			cfg.seed = seed + (uint64_t)(len * 31 + t);
			cfg.target = want > 0 ? want : 1;
			res = run(kind, &c, &cfg);
			if (res.score != want)
				fail_msg("%s length %d: heuristic %d, exact %d",
					 lat_kind_name(kind), len, res.score, want);
			assert_int_equal(res.proven, res.score == res.bound);

			/* both, the default way */
			lat_optimum_defaults(&cfg);
			cfg.moves = 200000;
			res = run(kind, &c, &cfg);
			assert_int_equal(res.score, want);
			assert_true(res.proven);
		}
}

static void test_square_against_enumerator(void **state)
{
	(void)state;
	check_random(LAT_SQUARE, 10, 16, 3, 1501);
}

static void test_cubic_against_enumerator(void **state)
{
	(void)state;
	check_random(LAT_CUBIC, 8, 11, 3, 1502);
}

/* ---- published optima ---- */

/* The 18- and 20-mers with a single optimal fold (square), proven. */
static void test_unique_optima_proven(void **state)
{
	(void)state;
	static const struct {
		const char *seq;
		int best;
	} cases[] = {
		{ "HHPPPPPHHPPPHPPPHP", 4 },   { "HPHPHHHPPPHHHHPPHH", 8 },
		{ "PHPPHPHHHPHHPHHHHH", 9 },   { "HHHPPHPHPHPPHPHPHPPH", 10 },
		{ "HPHPPHHPHPPHPHHPPHPH", 9 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lat_opt_chain c = chain_of(cases[i].seq);
		lat_optimum_config cfg;
		lat_optimum_defaults(&cfg);
		cfg.moves = 1000000;
		lat_optimum_result res = run(LAT_SQUARE, &c, &cfg);
		if (res.score != cases[i].best || !res.proven)
			fail_msg("%s: score %d proven %d, want %d proven", cases[i].seq, res.score,
				 res.proven, cases[i].best);
	}
}

/* The standard 2D benchmarks reach their best known scores (heuristic only). */
static void test_square_benchmarks(void **state)
{
	(void)state;
	static const struct {
		const char *seq;
		int best;
		uint64_t moves;
	} cases[] = {
		{ "HPHPPHHPHPPHPHHPPHPH", 9, 5000000 },
		{ "HHPPHPPHPPHPPHPPHPPHPPHH", 9, 5000000 },
		{ "PPHPPHHPPPPHHPPPPHHPPPPHH", 8, 5000000 },
		{ "PPPHHPPHHPPPPPHHHHHHHPPHHPPPPHHPPHPP", 14, 20000000 },
		{ "PPHPPHHPPHHPPPPPHHHHHHHHHHPPPPPPHHPPHHPPHPPHHHHH", 23, 20000000 },
		{ "HHPHPHPHPHHHHPHPPPHPPPHPPPPHPPPHPPPHPHHHHPHPHPHPHH", 21, 20000000 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lat_opt_chain c = chain_of(cases[i].seq);
		lat_optimum_config cfg;
		lat_optimum_defaults(&cfg);
		cfg.nodes = 0;
		cfg.moves = cases[i].moves;
		cfg.target = cases[i].best;
		lat_optimum_result res = run(LAT_SQUARE, &c, &cfg);
		if (res.score != cases[i].best)
			fail_msg("length %d: found %d, best known %d", c.len, res.score,
				 cases[i].best);
		/* no exact search: proven only where the score meets the bound */
		assert_int_equal(res.proven, res.score == res.bound);
	}
}

/* ---- budgets and determinism ---- */

static void test_tiny_budget_not_proven(void **state)
{
	(void)state;
	lat_opt_chain c = chain_of("HPHPPHHPHPPHPHHPPHPH");
	lat_optimum_config cfg;
	lat_optimum_defaults(&cfg);
	for (uint64_t nodes = 1; nodes <= 1000; nodes *= 10) {
		cfg.moves = 0;
		cfg.nodes = nodes;
		lat_optimum_result res = run(LAT_SQUARE, &c, &cfg);
		assert_false(res.exact_complete);
		assert_false(res.proven);
		assert_true(res.nodes <= nodes + 1);
		/* with the heuristic's optimum first, the search still cannot finish */
		cfg.moves = 1000000;
		res = run(LAT_SQUARE, &c, &cfg);
		assert_int_equal(res.score, 9);
		assert_false(res.proven);
	}
	/* cubic too */
	lat_opt_chain c3 = chain_of("HPHHPPHHHHPHHHPPHHPPHPHH");
	cfg.moves = 100000;
	cfg.nodes = 100;
	lat_optimum_result res = run(LAT_CUBIC, &c3, &cfg);
	assert_false(res.proven);
	/* and no budget at all: a straight chain, proven only if nothing can touch */
	cfg.moves = 0;
	cfg.nodes = 0;
	res = run(LAT_SQUARE, &c, &cfg);
	assert_int_equal(res.score, 0);
	assert_false(res.proven);
	lat_opt_chain even = chain_of("HPHPHPHP"); /* H only on even residues: no contact */
	res = run(LAT_SQUARE, &even, &cfg);
	assert_int_equal(res.bound, 0);
	assert_true(res.proven);
}

static void test_deterministic(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		const char *seq;
	} cases[] = {
		{ LAT_SQUARE, "PPPHHPPHHPPPPPHHHHHHHPPHHPPPPHHPPHPP" },
		{ LAT_CUBIC, "HPHHPPHHHHPHHHPPHHPPHPHHHPHPHHPPHHPPPHPPPPPPPPHH" },
		{ LAT_SQUARE, "HHHHHHHHHHHHPHPHPPHHPPHHPPHPPHHPPHHPPHPPHHPPHHPPHPHPHHHHHHHHHHHH" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lat_opt_chain c = chain_of(cases[i].seq);
		lat_optimum_config cfg;
		lat_optimum_defaults(&cfg);
		cfg.nodes = 0;
		cfg.moves = 300000;
		cfg.seed = 77;
		lat_optimum_result a = run(cases[i].kind, &c, &cfg);
		lat_optimum_result b = run(cases[i].kind, &c, &cfg);
		assert_string_equal(a.fold, b.fold);
		assert_int_equal(a.score, b.score);
		assert_int_equal(a.moves_best, b.moves_best);
		assert_true(a.score > 0);
	}
}

/* ---- inputs ---- */

static void test_parse_and_refusals(void **state)
{
	(void)state;
	lat_opt_chain c;
	sf_err err;
	char longest[LAT_OPT_MAX_LEN + 2];
	memset(longest, 'H', sizeof longest);
	longest[LAT_OPT_MAX_LEN] = '\0';
	assert_int_equal(lat_opt_chain_parse(longest, &c, &err), 0);
	assert_int_equal(c.len, LAT_OPT_MAX_LEN);
	longest[LAT_OPT_MAX_LEN] = 'H';
	longest[LAT_OPT_MAX_LEN + 1] = '\0';
	assert_int_equal(lat_opt_chain_parse(longest, &c, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "2..64"));
	assert_int_equal(lat_opt_chain_parse("HPxH", &c, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "character 2"));
	assert_int_equal(lat_opt_chain_parse("H", &c, &err), SF_EINVAL);

	lat_optimum_config cfg;
	lat_optimum_defaults(&cfg);
	lat_optimum_result res;
	c = chain_of("HPPH");
	cfg.replicas = 33;
	assert_int_equal(lat_optimum(LAT_SQUARE, &c, &cfg, &res, &err), SF_EINVAL);
	cfg.replicas = 0;
	assert_int_equal(lat_optimum((lat_kind)5, &c, &cfg, &res, &err), SF_EINVAL);
	c.len = 65;
	assert_int_equal(lat_optimum(LAT_SQUARE, &c, &cfg, &res, &err), SF_EINVAL);

	/* the shortest chains */
	c = chain_of("HH");
	res = run(LAT_CUBIC, &c, &cfg);
	assert_int_equal(res.score, 0);
	assert_true(res.proven);
	c = chain_of("HPPH");
	res = run(LAT_SQUARE, &c, &cfg);
	assert_int_equal(res.score, 1);
	assert_true(res.proven);
}

/* An all-H 64-mer on both lattices: the torus must not make false contacts. */
static void test_longest_chains(void **state)
{
	(void)state;
	char all_h[LAT_OPT_MAX_LEN + 1];
	memset(all_h, 'H', LAT_OPT_MAX_LEN);
	all_h[LAT_OPT_MAX_LEN] = '\0';
	lat_opt_chain c = chain_of(all_h);
	lat_optimum_config cfg;
	lat_optimum_defaults(&cfg);
	cfg.nodes = 1000;
	cfg.moves = 500000;
	for (int k = 2; k <= 3; k++) {
		lat_optimum_result res = run((lat_kind)k, &c, &cfg);
		assert_true(res.score > 0);
		assert_false(res.proven);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_square_against_enumerator),
		cmocka_unit_test(test_cubic_against_enumerator),
		cmocka_unit_test(test_unique_optima_proven),
		cmocka_unit_test(test_square_benchmarks),
		cmocka_unit_test(test_tiny_budget_not_proven),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_parse_and_refusals),
		cmocka_unit_test(test_longest_chains),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
