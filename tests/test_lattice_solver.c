/*
 * test_lattice_solver.c - the reference folder (core/lattice/solver.c), the
 * solver star rule (stars_thresholds_success()) on real puzzles, and the
 * solver_ladder fitness and its search (core/lattice/puzzle.c).
 *
 * Oracles:
 *  - the exact enumerator (lat_enumerate): the solver's best never exceeds
 *    the true optimum, and on short chains some run reaches it;
 *  - lat_fold_score and the tests' own walker (replay_fold(), lattice_support.h): the fold the
 * solver reports is a conformation scoring exactly its claimed best;
 *  - the definition of reach: 1 at score 0, non-increasing, positive at
 *    the best and 0 past it;
 *  - the domain, recomputed here from the histogram (H fraction in the
 *    window, at least STARS_FREE_SCORES reachable scores above 0): the
 *    fitness is positive exactly there, and searches return nothing else;
 *  - the rules of stars.h, checked on the thresholds of every level;
 *  - determinism: the same result for 1, 2, 3 and 8 threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lattice/lattice.h"
#include "lattice/optimum.h"
#include "lattice/puzzle.h"
#include "lattice/puzzle_json.h"
#include "lattice/solver.h"
#include "lattice_support.h"
#include "puzzle_support.h"
#include "rng.h"

/* ---- helpers ---- */

static lat_solver_result solve_with(lat_kind kind, const lat_seq *seq, int runs, int threads)
{
	lat_solver_config cfg;
	lat_solver_defaults(&cfg, kind, seq);
	cfg.runs = runs;
	cfg.threads = threads;
	lat_solver_result r;
	sf_err err = { 0 };
	if (lat_solver_run(kind, seq, &cfg, &r, &err))
		fail_msg("lat_solver_run: %s", err.msg);
	return r;
}

/* The invariants of any solver result on `seq`. */
static void assert_result_sane(lat_kind kind, const lat_seq *seq, const lat_solver_result *r)
{
	sf_err err = { 0 };
	assert_true(r->best >= 0);
	assert_int_equal(r->hits[0], r->runs);
	assert_true(lat_solver_reach(r, 0) == 1.0);
	for (int s = 1; s <= r->best + 1; s++) {
		assert_true(r->hits[s] <= r->hits[s - 1]);
		assert_true(lat_solver_reach(r, s) <= lat_solver_reach(r, s - 1));
	}
	assert_true(r->hits[r->best] > 0);
	assert_int_equal(r->hits[r->best + 1], 0);
	assert_true(lat_solver_reach(r, r->best + 1) == 0.0);
	int score = lat_fold_score(kind, seq, r->fold, &err);
	if (score != r->best)
		fail_msg("fold %s scores %d (%s), the solver claims %d", r->fold, score, err.msg,
			 r->best);
	assert_int_equal(replay_fold(kind, seq->h, seq->len, r->fold), r->best);
}

/* The domain of the better fitnesses, recomputed from the histogram. */
static int domain_oracle(const lat_search_params *p, const lat_seq *seq, const uint64_t *hist,
			 int max)
{
	int h = 0, above = 0;
	for (int i = 0; i < seq->len; i++)
		h += seq->h[i];
	for (int s = 1; s <= max; s++)
		above += hist[s] != 0;
	double frac = (double)h / seq->len;
	return frac >= p->h_min && frac <= p->h_max && above >= STARS_FREE_SCORES;
}

/* stars.h's rules for thresholds `t` on histogram `hist` with best `max`. */
static void assert_star_rules(const uint64_t *hist, int max, const int t[3])
{
	int above = 0, first = -1;
	for (int s = 1; s <= max; s++)
		if (hist[s]) {
			above++;
			if (first < 0)
				first = s;
		}
	assert_true(t[0] < t[1] && t[1] < t[2]);
	assert_int_equal(t[2], max);
	for (int k = 0; k < 3; k++) {
		assert_true(t[k] >= 1);
		assert_true(hist[t[k]] > 0);
	}
	if (above >= 4)
		assert_true(t[0] > first);
}

/* ---- the solver ---- */

static void test_never_above_optimum(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		int lo, hi, per;
	} cases[] = { { LAT_SQUARE, 8, 16, 3 }, { LAT_CUBIC, 6, 10, 3 } };
	rng r;
	rng_seed(&r, 15);
	int reached_short = 0, tried_short = 0;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (int len = cases[c].lo; len <= cases[c].hi; len++) {
			for (int k = 0; k < cases[c].per; k++) {
				lat_seq seq = seq_random(&r, len);
				lat_opts o = { .threads = TEST_THREADS };
				static lat_result ex;
				sf_err err = { 0 };
				assert_int_equal(lat_enumerate(cases[c].kind, &seq, &o, &ex, &err),
						 0);
				lat_solver_result res = solve_with(cases[c].kind, &seq, 16, 1);
				assert_result_sane(cases[c].kind, &seq, &res);
				if (res.best > ex.max_score)
					fail_msg("length %d: solver best %d above the optimum %d",
						 len, res.best, ex.max_score);
				if (len <= 12) {
					tried_short++;
					reached_short += res.best == ex.max_score;
				}
			}
		}
	}
	/* A folder that cannot find the optimum of a 12-mer in 16 x 1500
	 * moves is broken, not weak. */
	assert_int_equal(reached_short, tried_short);
}

static void test_known_chains(void **state)
{
	(void)state;
	/* All-P: no contact is possible; every run scores 0. */
	lat_seq p = seq_uniform(20, 0);
	lat_solver_result r = solve_with(LAT_SQUARE, &p, 8, 1);
	assert_int_equal(r.best, 0);
	assert_result_sane(LAT_SQUARE, &p, &r);
	/* All-H square 9: a 3 x 3 square holds 4 contacts, the optimum. */
	lat_seq h9 = seq_uniform(9, 1);
	r = solve_with(LAT_SQUARE, &h9, 8, 1);
	assert_int_equal(r.best, 4);
	assert_result_sane(LAT_SQUARE, &h9, &r);
	/* All-H cubic 8: a 2 x 2 x 2 cube holds 5 contacts. */
	lat_seq h8 = seq_uniform(8, 1);
	r = solve_with(LAT_CUBIC, &h8, 8, 1);
	assert_int_equal(r.best, 5);
	assert_result_sane(LAT_CUBIC, &h8, &r);
}

static void test_longest_chains(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 64);
	static const struct {
		lat_kind kind;
		int len;
	} cases[] = { { LAT_SQUARE, 64 }, { LAT_CUBIC, 48 }, { LAT_CUBIC, 64 }, { LAT_SQUARE, 2 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		lat_seq seq = seq_random(&r, cases[c].len);
		lat_solver_result res = solve_with(cases[c].kind, &seq, 4, 2);
		assert_result_sane(cases[c].kind, &seq, &res);
		lat_opt_chain oc;
		lat_opt_chain_from_seq(&seq, &oc);
		assert_true(res.best <= lat_optimum_bound(cases[c].kind, &oc));
	}
}

static void test_deterministic_across_threads(void **state)
{
	(void)state;
	lat_seq seq;
	sf_err err = { 0 };
	assert_int_equal(lat_seq_parse("HPHPPHHPHPPHPHHPPHPH", &seq, &err), 0);
	lat_solver_result one = solve_with(LAT_SQUARE, &seq, 40, 1);
	static const int threads[] = { 2, 3, 8 };
	for (size_t i = 0; i < 3; i++) {
		lat_solver_result other = solve_with(LAT_SQUARE, &seq, 40, threads[i]);
		assert_memory_equal(&one, &other, sizeof one);
	}
	/* Run r's stream depends on the seed and r only: the first 20 runs
	 * of 40 are the 20 runs of a 20-run solve, so no count can shrink. */
	lat_solver_result half = solve_with(LAT_SQUARE, &seq, 20, 1);
	for (int s = 0; s <= LAT_MAX_SCORE; s++) {
		assert_true(one.hits[s] >= half.hits[s]);
		assert_true(one.hits[s] - half.hits[s] <= 20);
	}
	/* Another seed draws other runs (the reach of a 20-mer is not so flat
	 * that 40 runs could not tell them apart). */
	lat_solver_config cfg;
	lat_solver_defaults(&cfg, LAT_SQUARE, &seq);
	cfg.runs = 40;
	cfg.seed ^= 1;
	lat_solver_result moved;
	assert_int_equal(lat_solver_run(LAT_SQUARE, &seq, &cfg, &moved, &err), 0);
	assert_memory_not_equal(one.hits, moved.hits, sizeof one.hits);
	/* The reference seed is the sequence's and the lattice's. */
	lat_seq other = seq;
	other.h[0] = 0;
	assert_true(lat_solver_seed(LAT_SQUARE, &seq) != lat_solver_seed(LAT_SQUARE, &other));
	assert_true(lat_solver_seed(LAT_SQUARE, &seq) != lat_solver_seed(LAT_CUBIC, &seq));
}

static void test_refusals(void **state)
{
	(void)state;
	lat_seq seq = seq_uniform(10, 1);
	lat_solver_config cfg;
	lat_solver_defaults(&cfg, LAT_SQUARE, &seq);
	assert_int_equal(cfg.runs, LAT_SOLVER_RUNS);
	assert_int_equal((int)cfg.steps, LAT_SOLVER_STEPS);
	lat_solver_result r;
	sf_err err = { 0 };
	cfg.runs = 0;
	assert_int_equal(lat_solver_run(LAT_SQUARE, &seq, &cfg, &r, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "runs"));
	cfg.runs = 4;
	cfg.threads = 0;
	assert_int_equal(lat_solver_run(LAT_SQUARE, &seq, &cfg, &r, &err), SF_EINVAL);
	cfg.threads = 1;
	assert_int_equal(lat_solver_run((lat_kind)4, &seq, &cfg, &r, &err), SF_EINVAL);
	seq.len = 1;
	assert_int_equal(lat_solver_run(LAT_SQUARE, &seq, &cfg, &r, &err), SF_EINVAL);
	assert_true(has_number(err.msg, 1));
	assert_int_equal(r.runs, 0);
}

/* ---- the star rule and the fitness on real puzzles ---- */

static void test_strategy_and_fitness_at_16(void **state)
{
	(void)state;
	const lat_db *db = db16();
	lat_search_params p;
	lat_search_params_default(&p);
	p.fitness = LAT_FIT_SOLVER_LADDER;
	p.stars.strategy = STARS_SOLVER;
	rng r;
	rng_seed(&r, 1615);
	int inside = 0, outside = 0;
	for (int k = 0; k < 120; k++) {
		lat_seq seq = seq_random(&r, 16);
		if (k % 4 == 0) /* H-poor chains, outside the window */
			for (int i = 0; i < 16; i++)
				seq.h[i] = (uint8_t)(i % 6 == 0);
		if (k % 4 == 0 && k % 8 == 0)
			seq.h[(k / 8) % 16] = 1;
		uint64_t hist[LAT_MAX_SCORE + 1];
		int max = lat_db_histogram(db, &seq, hist);
		int dom = domain_oracle(&p, &seq, hist, max);
		assert_int_equal(lat_in_domain(&p, &seq, hist, max), dom);
		ga_eval e = lat_fitness_of(&p, &seq, hist, max);
		if (!dom) {
			outside++;
			assert_true(e.fitness == 0);
			continue;
		}
		inside++;
		assert_true(e.fitness > 0 && e.fitness <= 1);
		/* a chain and its reverse are one puzzle, with one fitness */
		lat_seq rev = seq;
		for (int i = 0; i < 16; i++)
			rev.h[i] = seq.h[15 - i];
		ga_eval er = lat_fitness_of(&p, &rev, hist, max);
		assert_true(er.fitness == e.fitness);
		if (memcmp(rev.h, seq.h, 16) < 0)
			seq = rev; /* the orientation the search solves */
		lat_solver_result sr = solve_with(LAT_SQUARE, &seq, LAT_SOLVER_RUNS, 1);
		int t[3];
		sf_err err = { 0 };
		assert_int_equal(stars_thresholds_success(hist, max + 1, sr.hits, sr.runs, t, &err),
				 0);
		assert_star_rules(hist, max, t);
		assert_true(sr.best <= max);
		/* the fitness is the ladder's distance at those thresholds, each
		 * star's success out of its band counting three times more */
		int h3 = t[2] <= sr.best ? sr.hits[t[2]] : 0;
		double miss = stars_success_distance(sr.hits[t[0]], sr.runs, STARS_SOLVER_ONE) +
			      stars_success_distance(sr.hits[t[1]], sr.runs, STARS_SOLVER_TWO) +
			      stars_success_distance(h3, sr.runs, STARS_SOLVER_THREE);
		double p1 = (sr.hits[t[0]] + 0.5) / (sr.runs + 1),
		       p2 = (sr.hits[t[1]] + 0.5) / (sr.runs + 1), p3 = (h3 + 0.5) / (sr.runs + 1);
		if (p1 < STARS_SOLVER_ONE_MIN)
			miss += 3 * stars_success_distance(sr.hits[t[0]], sr.runs,
							   STARS_SOLVER_ONE_MIN);
		if (p2 < STARS_SOLVER_TWO_MIN)
			miss += 3 * stars_success_distance(sr.hits[t[1]], sr.runs,
							   STARS_SOLVER_TWO_MIN);
		if (p2 > STARS_SOLVER_TWO_MAX)
			miss += 3 * stars_success_distance(sr.hits[t[1]], sr.runs,
							   STARS_SOLVER_TWO_MAX);
		if (p3 > STARS_SOLVER_THREE_MAX)
			miss += 3 * stars_success_distance(h3, sr.runs, STARS_SOLVER_THREE_MAX);
		double want = 1 / (1 + miss); /* summed in another order: not bit-equal */
		assert_true(e.fitness > want - 1e-12 && e.fitness < want + 1e-12);
		/* no other pair of thresholds is nearer the targets */
		double chosen = stars_success_distance(sr.hits[t[0]], sr.runs, STARS_SOLVER_ONE) +
				stars_success_distance(sr.hits[t[1]], sr.runs, STARS_SOLVER_TWO);
		for (int a = 2; a < max; a++)
			for (int b = a + 1; b < max; b++)
				assert_true(stars_success_distance(sr.hits[a], sr.runs,
								   STARS_SOLVER_ONE) +
						    stars_success_distance(sr.hits[b], sr.runs,
									   STARS_SOLVER_TWO) >=
					    chosen - 1e-12);
	}
	assert_true(inside >= 20);
	assert_true(outside >= 20);
}

/* Every level of `res` is inside the domain, with its stats and stars right. */
static void assert_levels_in_domain(const lat_search_params *p, const lat_search_result *res)
{
	for (size_t i = 0; i < res->count; i++) {
		const lat_level *lv = &res->levels[i];
		const lat_result *ev = &lv->eval;
		assert_true(domain_oracle(p, &lv->seq, ev->hist, ev->max_score));
		assert_true(lv->fitness.fitness > 0);
		assert_star_rules(ev->hist, ev->max_score, lv->thresholds);
		lat_solver_result sr = solve_with(p->lattice, &lv->seq, LAT_SOLVER_RUNS, 1);
		assert_memory_equal(&sr, &lv->solver, sizeof sr);
		if (p->stars.strategy == STARS_SOLVER) {
			int t[3];
			assert_int_equal(stars_thresholds_success(ev->hist, ev->max_score + 1,
								  sr.hits, sr.runs, t, NULL),
					 0);
			assert_memory_equal(t, lv->thresholds, sizeof t);
		}
	}
}

static void test_search_in_domain(void **state)
{
	(void)state;
	static const lat_algorithm algs[] = { LAT_ALG_GA, LAT_ALG_MAP_ELITES };
	static const stars_strategy strats[] = { STARS_SOLVER, STARS_PAPER };
	for (size_t a = 0; a < 2; a++) {
		for (size_t s = 0; s < 2; s++) {
			lat_search_params p;
			lat_search_params_default(&p);
			p.algorithm = algs[a];
			p.fitness = LAT_FIT_SOLVER_LADDER;
			p.stars.strategy = strats[s];
			p.population = 12;
			p.generations = 6;
			p.count = algs[a] == LAT_ALG_MAP_ELITES ? 0 : 5;
			lat_search_opts o = opts_of(7, TEST_THREADS, db16());
			lat_search_result res;
			sf_err err = { 0 };
			assert_int_equal(lat_search_run(&p, &o, &res, &err), 0);
			assert_true(res.count >= 1);
			assert_levels_in_domain(&p, &res);
			lat_search_result_free(&res);
		}
	}
}

static void test_search_deterministic(void **state)
{
	(void)state;
	lat_search_params p;
	lat_search_params_default(&p);
	p.fitness = LAT_FIT_SOLVER_LADDER;
	p.stars.strategy = STARS_SOLVER;
	p.population = 10;
	p.generations = 4;
	p.count = 3;
	lat_search_result a, b;
	sf_err err = { 0 };
	lat_search_opts o1 = opts_of(3, 1, db16()), o3 = opts_of(3, 3, db16());
	assert_int_equal(lat_search_run(&p, &o1, &a, &err), 0);
	assert_int_equal(lat_search_run(&p, &o3, &b, &err), 0);
	assert_int_equal(a.count, b.count);
	for (size_t i = 0; i < a.count; i++) {
		assert_memory_equal(a.levels[i].seq.h, b.levels[i].seq.h, 16);
		assert_true(a.levels[i].fitness.fitness == b.levels[i].fitness.fitness);
		assert_memory_equal(a.levels[i].thresholds, b.levels[i].thresholds,
				    sizeof a.levels[i].thresholds);
		assert_memory_equal(&a.levels[i].solver, &b.levels[i].solver,
				    sizeof a.levels[i].solver);
	}
	/* and the level JSON says what the solver found at each star */
	json_t *doc = lat_level_json(&a.levels[0], &p, 3);
	assert_non_null(doc);
	json_t *solver = json_object_get(json_object_get(doc, "stats"), "solver");
	assert_int_equal(json_integer_value(json_object_get(solver, "runs")), LAT_SOLVER_RUNS);
	assert_int_equal(json_integer_value(json_object_get(solver, "steps")), LAT_SOLVER_STEPS);
	json_t *success = json_object_get(solver, "success");
	assert_int_equal(json_array_size(success), 3);
	for (int k = 0; k < 3; k++) {
		int t = a.levels[0].thresholds[k];
		double want = (double)a.levels[0].solver.hits[t] / LAT_SOLVER_RUNS;
		assert_true(json_real_value(json_array_get(success, (size_t)k)) == want);
	}
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(doc, "stars"), "strategy")),
		"solver");
	json_decref(doc);
	lat_search_result_free(&a);
	lat_search_result_free(&b);
}

static void test_params(void **state)
{
	(void)state;
	sf_err err = { 0 };
	json_t *ok = json_pack("{s:s, s:s}", "fitness", "solver_ladder", "stars", "solver");
	lat_search_params p;
	assert_int_equal(lat_search_params_from_json(ok, &p, &err), 0);
	assert_int_equal(p.fitness, LAT_FIT_SOLVER_LADDER);
	assert_int_equal(p.stars.strategy, STARS_SOLVER);
	json_t *echo = lat_search_params_json(&p);
	assert_string_equal(json_string_value(json_object_get(echo, "stars")), "solver");
	assert_string_equal(json_string_value(json_object_get(echo, "fitness")), "solver_ladder");
	json_decref(echo);
	json_decref(ok);
	json_t *bad = json_pack("{s:s}", "stars", "solvers");
	assert_int_equal(lat_search_params_from_json(bad, &p, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "solver)"));
	json_decref(bad);
	/* the core parser (racetrack, digger, evaluate) has no solver to ask */
	stars_strategy st;
	assert_int_equal(stars_parse_strategy("solver", &st, &err), SF_EINVAL);
	lat_fitness f;
	assert_int_equal(lat_parse_fitness("solver_ladder", &f, &err), 0);
	assert_int_equal(f, LAT_FIT_SOLVER_LADDER);
	assert_string_equal(lat_fitness_name(LAT_FIT_SOLVER_LADDER), "solver_ladder");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_above_optimum),
		cmocka_unit_test(test_known_chains),
		cmocka_unit_test(test_longest_chains),
		cmocka_unit_test(test_deterministic_across_threads),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_strategy_and_fitness_at_16),
		cmocka_unit_test(test_search_in_domain),
		cmocka_unit_test(test_search_deterministic),
		cmocka_unit_test(test_params),
	};
	return cmocka_run_group_tests(tests, NULL, group_teardown);
}
