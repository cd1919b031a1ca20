/*
 * test_lattice_evaluate.c - one evaluation of any length
 * (core/lattice/evaluate.h): the method choice, the estimate's example
 * folds, the optimum against exact enumeration, the star distribution of
 * an estimate, and determinism across thread counts.
 *
 * Oracles: the exact engine (lat_enumerate) where it runs; lat_fold_score,
 * which walks a fold independently of either engine; the published best
 * known scores of the 2D benchmarks (shared/oracles/LATTICE.md, copied
 * here) and the 16-mer's exact count (tests/fixtures/lattice_oracles.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "lattice/evaluate.h"
#include "lattice/lattice_json.h"
#include "lattice_support.h"

/* Small budgets: an estimate in well under a second. */
static lat_eval_config small_config(lat_method method, uint64_t seed, int threads)
{
	lat_eval_config cfg;
	lat_eval_config_default(&cfg);
	cfg.method = method;
	cfg.seed = seed;
	cfg.threads = threads;
	cfg.est_steps = 4e5;
	cfg.opt_moves = 200000;
	cfg.opt_nodes = 2000000;
	return cfg;
}

static lat_seq parse_ok(const char *text)
{
	lat_seq seq;
	sf_err err = { 0 };
	if (lat_seq_parse(text, &seq, &err))
		fail_msg("lat_seq_parse(%s): %s", text, err.msg);
	return seq;
}

static lat_evaluation *evaluate_ok(lat_kind kind, const lat_seq *seq, const lat_eval_config *cfg)
{
	lat_evaluation *ev = malloc(sizeof *ev);
	assert_non_null(ev);
	sf_err err = { 0 };
	if (lat_evaluate(kind, seq, cfg, ev, &err))
		fail_msg("lat_evaluate(len %d, %s): %s", seq->len, lat_method_name(cfg->method),
			 err.msg);
	return ev;
}

/* Every example fold of an estimate, and the optimum's, scores what it claims. */
static void check_folds(lat_kind kind, const lat_seq *seq, const lat_evaluation *ev)
{
	sf_err err = { 0 };
	int got = lat_fold_score(kind, seq, ev->opt_fold, &err);
	if (got != ev->opt_score)
		fail_msg("optimum fold %s scores %d, claimed %d (%s)", ev->opt_fold, got,
			 ev->opt_score, err.msg);
	int seen = 0;
	for (int s = 0; s <= LAT_EST_MAX_SCORE; s++) {
		if (!ev->est.samples[s]) {
			assert_string_equal(ev->est.examples[s], "");
			continue;
		}
		seen++;
		got = lat_fold_score(kind, seq, ev->est.examples[s], &err);
		if (got != s)
			fail_msg("example of score %d (%s) scores %d (%s)", s, ev->est.examples[s],
				 got, err.msg);
		assert_int_equal(ev->est.examples[s][0], 'R'); /* the exact engine's orientation */
	}
	assert_true(seen >= 1);
}

/* auto is exact within the exact budget, estimate past it. */
static void test_resolve(void **state)
{
	(void)state;
	assert_int_equal(lat_eval_resolve(LAT_METHOD_AUTO, LAT_SQUARE, 16, 0), LAT_METHOD_EXACT);
	assert_int_equal(lat_eval_resolve(LAT_METHOD_AUTO, LAT_SQUARE, 30, 0), LAT_METHOD_ESTIMATE);
	/* 802075 conformations at square 16 (fixtures): a budget just below. */
	assert_int_equal(lat_eval_resolve(LAT_METHOD_AUTO, LAT_SQUARE, 16, 802074),
			 LAT_METHOD_ESTIMATE);
	assert_int_equal(lat_eval_resolve(LAT_METHOD_AUTO, LAT_SQUARE, 16, 802075),
			 LAT_METHOD_EXACT);
	assert_int_equal(lat_eval_resolve(LAT_METHOD_EXACT, LAT_SQUARE, 60, 0), LAT_METHOD_EXACT);
	assert_int_equal(lat_eval_resolve(LAT_METHOD_ESTIMATE, LAT_CUBIC, 8, 0),
			 LAT_METHOD_ESTIMATE);

	lat_method m;
	sf_err err = { 0 };
	assert_int_equal(lat_parse_method("estimate", &m, &err), 0);
	assert_int_equal(m, LAT_METHOD_ESTIMATE);
	assert_int_equal(lat_parse_method("Exact", &m, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "'Exact'"));

	/* Lengths: square 1..64, cubic 1..48. */
	assert_int_equal(lat_eval_check_length(LAT_SQUARE, 64, &err), 0);
	assert_int_equal(lat_eval_check_length(LAT_CUBIC, 48, &err), 0);
	assert_int_equal(lat_eval_check_length(LAT_CUBIC, 49, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "1..48"));
	assert_int_equal(lat_eval_check_length(LAT_SQUARE, 0, &err), SF_EINVAL);

	/* Exact past its budget is refused, not estimated. */
	lat_seq seq = seq_uniform(30, 1);
	lat_eval_config cfg = small_config(LAT_METHOD_EXACT, 1, 1);
	lat_evaluation *ev = malloc(sizeof *ev);
	assert_int_equal(lat_evaluate(LAT_SQUARE, &seq, &cfg, ev, &err), SF_EBUDGET);
	free(ev);
}

/*
 * The estimate path against exact enumeration at square 10..16 and cubic
 * 8..10 over random chains: the optimum never exceeds the exact maximum and
 * equals it whenever proven (at these lengths the branch and bound always
 * completes within 2e6 nodes, so all of them are proven); every fold scores
 * what it claims.
 */
static void test_estimate_against_exact(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 15);
	static lat_result exact;
	int proven = 0, total = 0;
	for (int i = 0; i < 24; i++) {
		lat_kind kind = i % 3 == 2 ? LAT_CUBIC : LAT_SQUARE;
		int len = kind == LAT_CUBIC ? 8 + i % 3 : 10 + i % 7;
		lat_seq seq = seq_random(&r, len);
		lat_opts eo = { .threads = 2, .budget = 0 };
		sf_err err = { 0 };
		if (lat_enumerate(kind, &seq, &eo, &exact, &err))
			fail_msg("lat_enumerate: %s", err.msg);
		lat_eval_config cfg = small_config(LAT_METHOD_ESTIMATE, 100 + (uint64_t)i, 2);
		lat_evaluation *ev = evaluate_ok(kind, &seq, &cfg);
		assert_int_equal(ev->method, LAT_METHOD_ESTIMATE);
		check_folds(kind, &seq, ev);
		if (ev->opt_score > exact.max_score)
			fail_msg("optimum %d above the exact maximum %d", ev->opt_score,
				 exact.max_score);
		if (ev->opt_proven && ev->opt_score != exact.max_score)
			fail_msg("proven optimum %d but the exact maximum is %d", ev->opt_score,
				 exact.max_score);
		proven += ev->opt_proven;
		total++;
		/* The estimate never samples a score no conformation reaches. */
		for (int s = 0; s <= LAT_MAX_SCORE; s++)
			if (ev->star_counts[s])
				assert_true(s <= exact.max_score && exact.hist[s] > 0);
		assert_int_equal(ev->max_score, ev->opt_score);
		assert_true(ev->star_counts[ev->max_score] >= 1);
		free(ev);
	}
	assert_int_equal(proven, total);
}

/* Exact through lat_evaluate: the enumerator's result, the optimum proven. */
static void test_exact_method(void **state)
{
	(void)state;
	lat_seq seq = parse_ok("HPHPPHHPHPPHPHHP");
	lat_eval_config cfg = small_config(LAT_METHOD_AUTO, 1, 2);
	lat_evaluation *ev = evaluate_ok(LAT_SQUARE, &seq, &cfg);
	assert_int_equal(ev->method, LAT_METHOD_EXACT);
	assert_int_equal(ev->exact.conformations, 802075);
	assert_int_equal(ev->opt_score, 6);
	assert_true(ev->opt_proven);
	sf_err err = { 0 };
	assert_int_equal(lat_fold_score(LAT_SQUARE, &seq, ev->opt_fold, &err), 6);
	for (int s = 0; s <= 6; s++)
		assert_true(ev->star_counts[s] == ev->exact.hist[s]);
	json_t *doc = lat_evaluation_json(ev, &seq, &cfg);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "method")), "exact");
	json_t *opt = json_object_get(doc, "optimum");
	assert_int_equal(json_integer_value(json_object_get(opt, "score")), 6);
	assert_true(json_is_true(json_object_get(opt, "proven")));
	assert_null(json_object_get(doc, "histogram_error"));
	json_decref(doc);
	free(ev);
}

/*
 * Long chains: the 2D benchmarks of lengths 36 and 64 (best known 14 and
 * 42; shared/oracles/LATTICE.md): the optimum's fold is valid and scores what it claims, it never
 * exceeds the admissible bound, and proven stays false when the branch and
 * bound cannot finish (64 residues in 1e5 nodes).
 */
static void test_long_chains(void **state)
{
	(void)state;
	lat_seq s36 = parse_ok("PPPHHPPHHPPPPPHHHHHHHPPHHPPPPHHPPHPP");
	lat_eval_config cfg = small_config(LAT_METHOD_AUTO, 3, 2);
	cfg.opt_moves = 3000000;
	lat_evaluation *ev = evaluate_ok(LAT_SQUARE, &s36, &cfg);
	assert_int_equal(ev->method, LAT_METHOD_ESTIMATE);
	check_folds(LAT_SQUARE, &s36, ev);
	assert_true(ev->opt_score <= 14);
	if (ev->opt_proven)
		assert_int_equal(ev->opt_score, 14);
	free(ev);

	lat_seq s64 = parse_ok("HHHHHHHHHHHHPHPHPPHHPPHHPPHPPHHPPHHPPHPPHHPPHHPPHPHPHHHHHHHHHHHH");
	assert_int_equal(s64.len, 64);
	cfg = small_config(LAT_METHOD_ESTIMATE, 5, 2);
	cfg.opt_nodes = 100000;
	ev = evaluate_ok(LAT_SQUARE, &s64, &cfg);
	check_folds(LAT_SQUARE, &s64, ev);
	lat_opt_chain chain;
	lat_opt_chain_from_seq(&s64, &chain);
	assert_true(ev->opt_score <= lat_optimum_bound(LAT_SQUARE, &chain));
	assert_true(ev->opt_score <= 42); /* the best known fold of this benchmark */
	assert_false(ev->opt_proven);
	free(ev);
}

/* The star distribution of an estimate keeps every sampled score and the optimum. */
static void test_star_counts(void **state)
{
	(void)state;
	double hist[6] = { 1e25, 3e24, 0, 2.5, 0.2, 0 };
	uint64_t counts[LAT_MAX_SCORE + 1];
	lat_star_counts_estimate(hist, 6, 1.3e25, 5, counts);
	assert_true(counts[0] > counts[1] && counts[1] > 0);
	assert_int_equal(counts[2], 0);
	assert_int_equal(counts[3], 1); /* scaled below 1, kept reachable */
	assert_int_equal(counts[4], 1);
	assert_int_equal(counts[5], 1); /* the optimum, never sampled */
	/* The ratio of the two big scores survives the scaling. */
	double ratio = (double)counts[0] / (double)counts[1];
	assert_true(ratio > 3.333 && ratio < 3.334);
	uint64_t sum = 0;
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		sum += counts[s];
	assert_true(sum <= (1ull << 61));
}

/* Same seed, same bytes, whatever the thread count; another seed differs. */
static void test_deterministic(void **state)
{
	(void)state;
	lat_seq seq = parse_ok("HPHPPHHPHPPHPHHPPHPPHHPHPHHPHP");
	char *text[3];
	for (int i = 0; i < 3; i++) {
		lat_eval_config cfg = small_config(LAT_METHOD_AUTO, i == 2 ? 8 : 7, i ? 3 : 1);
		lat_evaluation *ev = evaluate_ok(LAT_SQUARE, &seq, &cfg);
		check_folds(LAT_SQUARE, &seq, ev);
		json_t *doc = lat_evaluation_json(ev, &seq, &cfg);
		assert_non_null(doc);
		text[i] = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
		json_decref(doc);
		free(ev);
	}
	assert_string_equal(text[0], text[1]);
	assert_string_not_equal(text[0], text[2]);
	for (int i = 0; i < 3; i++)
		free(text[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),      cmocka_unit_test(test_estimate_against_exact),
		cmocka_unit_test(test_exact_method), cmocka_unit_test(test_long_chains),
		cmocka_unit_test(test_star_counts),  cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
