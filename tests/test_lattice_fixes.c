/*
 * test_lattice_fixes.c - the three fixes of issue 15 on real puzzles:
 *
 *  1. the one-star threshold is never a single contact on a puzzle whose
 *     best fold has four or more (stars.h), under every strategy;
 *  2. no fitness and star strategy pair returns trivial puzzles, whose
 *     thresholds are forced ([1, 2, 3] or [2, 3, 4]): star_ladder with
 *     geometric stars used to return nothing else;
 *  3. MAP-Elites (and every algorithm) returns only levels inside the
 *     fitness's domain: fitness > 0, the H fraction in [h_min, h_max].
 *
 * The oracle is this file's own reading of each level: the histogram from
 * the direct enumerator (lat_enumerate) or the level's own evaluation, the
 * H fraction counted from the sequence, the reachable scores counted from
 * the histogram. Nothing is copied from the search's output. The measured
 * numbers quoted in the comments (before the fixes) are in
 * docs/lattice-search.md and docs/stars.md.
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

#include "lattice/puzzle.h"
#include "lattice/puzzle_json.h"
#include "lattice_support.h"
#include "puzzle_support.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const stars_strategy strategies[] = { STARS_PAPER, STARS_PERCENTILE, STARS_GEOMETRIC };
static const lat_fitness fitnesses[] = { LAT_FIT_DISTINCT, LAT_FIT_RARE_OPTIMUM,
					 LAT_FIT_STAR_LADDER };

/* Reachable scores above the lowest of hist[0..max], ascending; how many. */
static int candidates(const uint64_t *hist, int max, int *out)
{
	int lowest = -1, n = 0;
	for (int s = 0; s <= max; s++) {
		if (!hist[s])
			continue;
		if (lowest < 0)
			lowest = s;
		else
			out[n++] = s;
	}
	return n;
}

static double h_fraction(const lat_seq *s)
{
	int h = 0;
	for (int i = 0; i < s->len; i++)
		h += s->h[i];
	return (double)h / s->len;
}

static const char *seq_text(const lat_seq *s, char buf[LAT_MAX_LEN + 1])
{
	lat_seq_format(s, buf);
	return buf;
}

static void search_ok(const lat_search_params *p, const lat_search_opts *o, lat_search_result *res)
{
	sf_err err = { 0 };
	int rc = lat_search_run(p, o, res, &err);
	if (rc)
		fail_msg("lat_search_run(%s, %s, %s, length %d) = %d: %s",
			 lat_algorithm_name(p->algorithm), lat_fitness_name(p->fitness),
			 stars_strategy_name(p->stars.strategy), p->length, rc, err.msg);
}

static lat_search_params params_of(int len, lat_algorithm alg, lat_fitness fit, stars_strategy st)
{
	lat_search_params p;
	lat_search_params_default(&p);
	p.length = len;
	p.algorithm = alg;
	p.fitness = fit;
	p.stars.strategy = st;
	p.count = alg == LAT_ALG_MAP_ELITES ? 0 : 10;
	return p;
}

/* ---- 1. the first star is never a single contact ---- */

/*
 * Every canonical square sequence of length 12 (2080) through the direct
 * enumerator, and every one of length 16 (32896) through the database:
 * wherever four or more scores above 0 are reachable (best >= 4), no
 * strategy puts one star at 1 contact, at default fractions and at others.
 * The test counts how many of those puzzles have a one-contact share (the
 * share of folds with at least one contact) within the default 0.5, where
 * the percentile rule without the floor gave 1: it must be many, or this
 * test could not fail. At length 16 it was 18303 of the 27959 puzzles with
 * best >= 4 (docs/stars.md).
 */
static void check_first_star(const lat_seq *seq, const uint64_t *hist, int max, int *tempting)
{
	int cand[LAT_MAX_SCORE + 1];
	int n = candidates(hist, max, cand);
	if (n < 4)
		return;
	assert_int_equal(cand[0], 1); /* the lowest is 0, the first step one contact */
	uint64_t total = 0, zero = hist[0];
	for (int s = 0; s <= max; s++)
		total += hist[s];
	*tempting += (double)(total - zero) / (double)total <= 0.5;
	static const double fractions[][2] = { { 0.5, 0.1 }, { 0.9, 0.3 }, { 0.99, 0.5 } };
	for (int st = 0; st < ARRAY_LEN(strategies); st++) {
		for (int f = 0; f < ARRAY_LEN(fractions); f++) {
			if (f && strategies[st] != STARS_PERCENTILE)
				break;
			stars_config cfg;
			stars_config_default(&cfg, strategies[st]);
			cfg.one_fraction = fractions[f][0];
			cfg.two_fraction = fractions[f][1];
			int t[3];
			assert_int_equal(stars_thresholds(hist, max + 1, &cfg, t, NULL), 0);
			if (t[0] < 2) {
				char buf[LAT_MAX_LEN + 1];
				fail_msg("%s (best %d): %s stars (%g, %g) give one star at %d "
					 "contact",
					 seq_text(seq, buf), max, stars_strategy_name(cfg.strategy),
					 cfg.one_fraction, cfg.two_fraction, t[0]);
			}
		}
	}
}

static void test_first_star_real(void **state)
{
	(void)state;
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	lat_opts eo = { .threads = 1, .budget = 0 };
	sf_err err = { 0 };
	int tempting = 0, seen = 0;
	for (unsigned k = 0; k < 1u << 12; k++) {
		lat_seq s = seq_bits(12, k);
		lat_seq rev = s;
		for (int i = 0; i < 12; i++)
			rev.h[i] = s.h[11 - i];
		if (memcmp(rev.h, s.h, 12) < 0)
			continue; /* its reverse is the same puzzle */
		if (lat_enumerate(LAT_SQUARE, &s, &eo, r, &err))
			fail_msg("lat_enumerate: %s", err.msg);
		check_first_star(&s, r->hist, r->max_score, &tempting);
		seen++;
	}
	assert_int_equal(seen, (1 << 11) + (1 << 5));
	assert_true(tempting > 100);

	tempting = 0;
	uint64_t hist[LAT_MAX_SCORE + 1];
	for (unsigned k = 0; k < 1u << 16; k += 1) {
		lat_seq s = seq_bits(16, k);
		int max = lat_db_histogram(db16(), &s, hist);
		assert_true(max >= 0);
		check_first_star(&s, hist, max, &tempting);
	}
	assert_true(tempting > 10000);

	/* The benchmark HPHPPHHPHPPHPHHP, by the direct enumerator: percentile
	 * [2, 3, 6] (it was [1, 3, 6]: 46.9 % of its folds have a contact). */
	lat_seq hp;
	assert_int_equal(lat_seq_parse("HPHPPHHPHPPHPHHP", &hp, &err), 0);
	assert_int_equal(lat_enumerate(LAT_SQUARE, &hp, &eo, r, &err), 0);
	stars_config cfg;
	stars_config_default(&cfg, STARS_PERCENTILE);
	int t[3];
	assert_int_equal(stars_thresholds(r->hist, r->max_score + 1, &cfg, t, NULL), 0);
	assert_int_equal(t[0], 2);
	assert_int_equal(t[1], 3);
	assert_int_equal(t[2], 6);
	free(r);
}

/* ---- 2. no pair collapses to trivial puzzles ---- */

/*
 * Fails when a better fitness's level lies outside its domain: fitness 0,
 * or the H fraction (counted here) outside [h_min, h_max].
 */
static void check_in_window(const lat_search_params *p, const lat_level *lv, const char *what)
{
	char buf[LAT_MAX_LEN + 1];
	if (p->fitness == LAT_FIT_DISTINCT)
		return;
	double hf = h_fraction(&lv->seq);
	if (!(lv->fitness.fitness > 0) || hf < p->h_min || hf > p->h_max)
		fail_msg("%s: %s outside the domain: fitness %g, H fraction %g (window %g..%g)",
			 what, seq_text(&lv->seq, buf), lv->fitness.fitness, hf, p->h_min,
			 p->h_max);
}

/*
 * A level as this file reads it: its histogram, its reachable scores, its
 * H fraction. Fails when the level is trivial (3 or 4 reachable scores
 * above 0: forced thresholds), when its thresholds are not three distinct
 * reachable scores ending at the best with one star above a single
 * contact, or when it lies outside the fitness's domain.
 */
static void check_not_trivial(const lat_search_params *p, const lat_level *lv, const char *what)
{
	char buf[LAT_MAX_LEN + 1];
	int cand[LAT_MAX_SCORE + 1];
	int n = candidates(lv->eval.hist, lv->eval.max_score, cand);
	if (n < 5)
		fail_msg("%s: %s is trivial: best %d, %d reachable scores above 0, thresholds "
			 "[%d, %d, %d]",
			 what, seq_text(&lv->seq, buf), lv->eval.max_score, n, lv->thresholds[0],
			 lv->thresholds[1], lv->thresholds[2]);
	assert_true(lv->eval.max_score > 4);
	assert_true(lv->thresholds[0] < lv->thresholds[1] && lv->thresholds[1] < lv->thresholds[2]);
	assert_int_equal(lv->thresholds[2], lv->eval.max_score);
	for (int k = 0; k < 3; k++)
		assert_true(lv->eval.hist[lv->thresholds[k]] > 0);
	if (lv->thresholds[0] < 2)
		fail_msg("%s: %s gives one star for a single contact: [%d, %d, %d], best %d", what,
			 seq_text(&lv->seq, buf), lv->thresholds[0], lv->thresholds[1],
			 lv->thresholds[2], lv->eval.max_score);
	check_in_window(p, lv, what);
}

/*
 * The finding itself: star_ladder with geometric stars, exhaustive at length
 * 16 (the true ten best). Before the fix all ten were max-3 chains with
 * [1, 2, 3] (PPHPPHPPPPPPPHHP first, 4.22); with only max-3 chains
 * excluded, all ten were max-4 chains with [2, 3, 4]. Now none is trivial:
 * the best, PHPPPPPPHHHHHHHH, has [3, 4, 5], reached by 4.99 %, 0.157 % and
 * 0.0022 % of its folds.
 */
static void test_geometric_star_ladder(void **state)
{
	(void)state;
	lat_search_params p =
		params_of(16, LAT_ALG_EXHAUSTIVE, LAT_FIT_STAR_LADDER, STARS_GEOMETRIC);
	lat_search_opts o = opts_of(1, TEST_THREADS, db16());
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_int_equal(res.count, 10);
	for (size_t i = 0; i < res.count; i++)
		check_not_trivial(&p, &res.levels[i], "exhaustive star_ladder geometric");
	lat_search_result_free(&res);
}

/*
 * Every fitness x strategy pair at length 16: the exhaustive search's ten
 * best and the GA's ten best on two seeds. Before the fix, star_ladder with
 * geometric stars returned ten max-3 chains with [1, 2, 3] from the
 * exhaustive search, and 50 trivial puzzles of 50 from the GA on seeds 1-5.
 */
static void test_no_trivial_top_levels(void **state)
{
	(void)state;
	for (int f = 0; f < ARRAY_LEN(fitnesses); f++) {
		for (int st = 0; st < ARRAY_LEN(strategies); st++) {
			lat_search_params p =
				params_of(16, LAT_ALG_EXHAUSTIVE, fitnesses[f], strategies[st]);
			lat_search_opts o = opts_of(1, TEST_THREADS, db16());
			lat_search_result res;
			search_ok(&p, &o, &res);
			assert_int_equal(res.count, 10);
			char what[96];
			snprintf(what, sizeof what, "exhaustive %s %s", lat_fitness_name(p.fitness),
				 stars_strategy_name(p.stars.strategy));
			for (size_t i = 0; i < res.count; i++)
				check_not_trivial(&p, &res.levels[i], what);
			lat_search_result_free(&res);

			p.algorithm = LAT_ALG_GA;
			for (uint64_t seed = 1; seed <= 2; seed++) {
				o = opts_of(seed, TEST_THREADS, db16());
				search_ok(&p, &o, &res);
				assert_true(res.count >= 1);
				snprintf(what, sizeof what, "ga seed %d %s %s", (int)seed,
					 lat_fitness_name(p.fitness),
					 stars_strategy_name(p.stars.strategy));
				for (size_t i = 0; i < res.count; i++)
					check_not_trivial(&p, &res.levels[i], what);
				lat_search_result_free(&res);
			}
		}
	}
}

/*
 * The fitnesses themselves: star_ladder and rare_optimum are 0 on a trivial
 * puzzle whatever its shares, inside the H window. PPHPPHPPPPPPPHHP (H
 * fraction 0.3125) was the best star_ladder puzzle under geometric stars
 * before the fix (4.22): best 3, thresholds [1, 2, 3].
 */
static void test_trivial_fitness_zero(void **state)
{
	(void)state;
	static const char *const trivial[] = { "PPHPPHPPPPPPPHHP", "PHPPPPPHPPHPPPHP" };
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	lat_opts eo = { .threads = 1, .budget = 0 };
	sf_err err = { 0 };
	for (int i = 0; i < ARRAY_LEN(trivial); i++) {
		lat_seq s;
		assert_int_equal(lat_seq_parse(trivial[i], &s, &err), 0);
		assert_int_equal(lat_enumerate(LAT_SQUARE, &s, &eo, r, &err), 0);
		int cand[LAT_MAX_SCORE + 1];
		assert_int_equal(candidates(r->hist, r->max_score, cand), 3);
		double hf = h_fraction(&s);
		assert_true(hf >= 0.25 && hf <= 0.75);
		assert_true(lat_trivial(r->hist, r->max_score));
		for (int st = 0; st < ARRAY_LEN(strategies); st++) {
			lat_search_params p =
				params_of(16, LAT_ALG_GA, LAT_FIT_STAR_LADDER, strategies[st]);
			assert_true(lat_fitness_of(&p, &s, r->hist, r->max_score).fitness == 0);
			assert_false(lat_in_domain(&p, &s, r->hist, r->max_score));
			p.fitness = LAT_FIT_RARE_OPTIMUM;
			assert_true(lat_fitness_of(&p, &s, r->hist, r->max_score).fitness == 0);
			p.fitness = LAT_FIT_DISTINCT;
			assert_true(lat_fitness_of(&p, &s, r->hist, r->max_score).fitness == 4);
			int t[3];
			assert_int_equal(
				stars_thresholds(r->hist, r->max_score + 1, &p.stars, t, NULL), 0);
			assert_true(t[0] == 1 && t[1] == 2 && t[2] == 3);
		}
	}
	free(r);
}

/* ---- 3. MAP-Elites returns only levels inside the domain ---- */

/*
 * MAP-Elites at length 16 for both better fitnesses, three strategies and
 * three seeds: every level has fitness > 0, its H fraction inside the
 * window, at least five reachable scores above 0, and the fitness
 * lat_fitness_of() gives its histogram. Before the fix every one of these
 * runs returned levels of fitness 0 (5 to 9 of 45 to 51 per run on seeds
 * 1-5). The archive still holds such puzzles in cells nothing better
 * reached: the last generation's filled cells outnumber the levels.
 */
static void test_map_elites_domain(void **state)
{
	(void)state;
	static const lat_fitness better[] = { LAT_FIT_RARE_OPTIMUM, LAT_FIT_STAR_LADDER };
	int dropped_somewhere = 0;
	for (int f = 0; f < ARRAY_LEN(better); f++) {
		for (int st = 0; st < ARRAY_LEN(strategies); st++) {
			for (uint64_t seed = 1; seed <= 3; seed++) {
				lat_search_params p = params_of(16, LAT_ALG_MAP_ELITES, better[f],
								strategies[st]);
				lat_search_opts o = opts_of(seed, TEST_THREADS, db16());
				lat_search_result res;
				search_ok(&p, &o, &res);
				assert_true(res.count >= 1);
				const ga_generation *last = &res.series[res.generations_run - 1];
				assert_true(res.count <= (size_t)last->filled);
				dropped_somewhere |= res.count < (size_t)last->filled;
				char what[96];
				snprintf(what, sizeof what, "map_elites seed %d %s %s", (int)seed,
					 lat_fitness_name(p.fitness),
					 stars_strategy_name(p.stars.strategy));
				/* The domain first (the finding), then the rest. */
				for (size_t i = 0; i < res.count; i++)
					check_in_window(&p, &res.levels[i], what);
				for (size_t i = 0; i < res.count; i++) {
					const lat_level *lv = &res.levels[i];
					check_not_trivial(&p, lv, what);
					ga_eval e = lat_fitness_of(&p, &lv->seq, lv->eval.hist,
								   lv->eval.max_score);
					assert_true(e.fitness == lv->fitness.fitness);
					assert_true(lat_in_domain(&p, &lv->seq, lv->eval.hist,
								  lv->eval.max_score));
				}
				lat_search_result_free(&res);
			}
		}
	}
	assert_true(dropped_somewhere);

	/* A narrow window: every level sits exactly on it. */
	lat_search_params p = params_of(16, LAT_ALG_MAP_ELITES, LAT_FIT_STAR_LADDER, STARS_PAPER);
	p.h_min = p.h_max = 0.5;
	lat_search_opts o = opts_of(4, TEST_THREADS, db16());
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_true(res.count >= 1);
	for (size_t i = 0; i < res.count; i++) {
		assert_true(h_fraction(&res.levels[i].seq) == 0.5);
		assert_true(res.levels[i].fitness.fitness > 0);
	}
	/* Fewer levels than asked: count 1000 returns the same as the archive
	 * (count 0), and count 2 its first two. */
	size_t all = res.count;
	lat_search_result more;
	p.count = 1000;
	search_ok(&p, &o, &more);
	assert_int_equal(more.count, all);
	for (size_t i = 0; i < all; i++)
		assert_memory_equal(more.levels[i].seq.h, res.levels[i].seq.h, 16);
	lat_search_result_free(&more);
	if (all >= 2) {
		p.count = 2;
		search_ok(&p, &o, &more);
		assert_int_equal(more.count, 2);
		assert_memory_equal(more.levels[1].seq.h, res.levels[1].seq.h, 16);
		lat_search_result_free(&more);
	}
	lat_search_result_free(&res);

	/* distinct_scores keeps the paper's domain, but a trivial puzzle only
	 * as a last resort: at length 16 none of its archive is trivial (73 of
	 * 239 levels were, on seeds 1-5, before). */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		p = params_of(16, LAT_ALG_MAP_ELITES, LAT_FIT_DISTINCT, STARS_PAPER);
		o = opts_of(seed, TEST_THREADS, db16());
		search_ok(&p, &o, &res);
		for (size_t i = 0; i < res.count; i++)
			check_not_trivial(&p, &res.levels[i], "map_elites distinct_scores");
		lat_search_result_free(&res);
	}
}

/*
 * Chains too short for anything but trivial puzzles (square length 8-10,
 * cubic 8-9): the better fitnesses find nothing in their domain and say so,
 * naming the fitness and the rule; distinct_scores still returns the
 * paper's length-8 puzzles, all [1, 2, 3].
 */
static void test_short_chains(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		int len;
	} shorts[] = { { LAT_SQUARE, 8 }, { LAT_SQUARE, 10 }, { LAT_CUBIC, 9 } };
	for (int i = 0; i < ARRAY_LEN(shorts); i++) {
		lat_search_params p =
			params_of(shorts[i].len, LAT_ALG_GA, LAT_FIT_STAR_LADDER, STARS_GEOMETRIC);
		p.lattice = shorts[i].kind;
		p.generations = 10;
		lat_search_opts o = opts_of(3, TEST_THREADS, NULL);
		lat_search_result res;
		sf_err err = { 0 };
		assert_int_equal(lat_search_run(&p, &o, &res, &err), SF_ERANGE);
		assert_int_equal(res.count, 0);
		assert_non_null(strstr(err.msg, "star_ladder"));
		assert_non_null(strstr(err.msg, "trivial"));
	}
	lat_search_params p = params_of(8, LAT_ALG_EXHAUSTIVE, LAT_FIT_DISTINCT, STARS_PERCENTILE);
	lat_search_opts o = opts_of(3, TEST_THREADS, NULL);
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_true(res.count >= 1);
	for (size_t i = 0; i < res.count; i++) {
		const lat_level *lv = &res.levels[i];
		assert_true(lat_trivial(lv->eval.hist, lv->eval.max_score));
		assert_true(lv->thresholds[0] == 1 && lv->thresholds[1] == 2 &&
			    lv->thresholds[2] == 3);
	}
	lat_search_result_free(&res);
}

/* Determinism stays: MAP-Elites star_ladder, 1 vs 3 threads, cold vs warm. */
static void test_fixes_deterministic(void **state)
{
	(void)state;
	lat_search_params p =
		params_of(16, LAT_ALG_MAP_ELITES, LAT_FIT_STAR_LADDER, STARS_GEOMETRIC);
	char *text[3];
	for (int k = 0; k < 3; k++) {
		lat_search_opts o = opts_of(21, k == 1 ? 3 : 1, k == 2 ? db16() : NULL);
		lat_search_result res;
		search_ok(&p, &o, &res);
		json_t *doc = lat_search_result_json(&res, &p, 21);
		assert_non_null(doc);
		text[k] = json_dumps(doc, JSON_COMPACT);
		assert_non_null(text[k]);
		json_decref(doc);
		lat_search_result_free(&res);
	}
	assert_string_equal(text[0], text[1]);
	assert_string_equal(text[0], text[2]);
	for (int k = 0; k < 3; k++)
		free(text[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_star_real),
		cmocka_unit_test(test_geometric_star_ladder),
		cmocka_unit_test(test_no_trivial_top_levels),
		cmocka_unit_test(test_trivial_fitness_zero),
		cmocka_unit_test(test_map_elites_domain),
		cmocka_unit_test(test_short_chains),
		cmocka_unit_test(test_fixes_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, group_teardown);
}
