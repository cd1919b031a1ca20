/*
 * test_puzzle.c - the lattice puzzle search (core/lattice/puzzle.h): the
 * exhaustive search against an independent brute force, the paper's fitness
 * against the published distribution of distinct scores at length 16, the
 * fitness definitions on hand-computed values, determinism, the GA and
 * MAP-Elites contracts, the levels they return, params validation and
 * stopping.
 *
 * Expected numbers are published (tests/fixtures/lattice_oracles.h and the
 * facts quoted in the comments), worked out by hand in the comments, or
 * recomputed here by brute force through the direct enumerator
 * (lat_enumerate), never copied from the search's own output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lattice/puzzle.h"
#include "lattice/puzzle_json.h"
#include "lattice_support.h"
#include "puzzle_support.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- helpers ---- */

static lat_search_params params_of(lat_kind kind, int len, lat_algorithm alg, lat_fitness fit)
{
	lat_search_params p;
	lat_search_params_default(&p);
	p.lattice = kind;
	p.length = len;
	p.algorithm = alg;
	p.fitness = fit;
	if (alg == LAT_ALG_MAP_ELITES)
		p.count = 0;
	return p;
}

static void search_ok(const lat_search_params *p, const lat_search_opts *o, lat_search_result *res)
{
	sf_err err = { 0 };
	int rc = lat_search_run(p, o, res, &err);
	if (rc)
		fail_msg("lat_search_run(%s, %s, length %d) = %d: %s",
			 lat_algorithm_name(p->algorithm), lat_fitness_name(p->fitness), p->length,
			 rc, err.msg);
}

/* The result document as compact JSON text; the caller frees it. */
static char *result_text(const lat_search_result *res, const lat_search_params *p, uint64_t seed)
{
	json_t *doc = lat_search_result_json(res, p, seed);
	assert_non_null(doc);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_non_null(text);
	return text;
}

static char *run_text(const lat_search_params *p, const lat_search_opts *o)
{
	lat_search_result res;
	search_ok(p, o, &res);
	char *text = result_text(&res, p, o->seed);
	lat_search_result_free(&res);
	return text;
}

static void enumerate_ok(lat_kind kind, const lat_seq *seq, lat_result *out)
{
	lat_opts o = { .threads = 1, .budget = 0 };
	sf_err err = { 0 };
	int rc = lat_enumerate(kind, seq, &o, out, &err);
	if (rc)
		fail_msg("lat_enumerate: %d %s", rc, err.msg);
}

/* -1, 0, 1 as `seq` compares with its reverse, bytewise (H = 1, P = 0). */
static int cmp_reverse(const uint8_t *h, int len)
{
	for (int i = 0; i < len; i++)
		if (h[i] != h[len - 1 - i])
			return h[i] < h[len - 1 - i] ? -1 : 1;
	return 0;
}

static int is_reverse_of(const lat_seq *a, const lat_seq *b)
{
	if (a->len != b->len)
		return 0;
	for (int i = 0; i < a->len; i++)
		if (a->h[i] != b->h[a->len - 1 - i])
			return 0;
	return 1;
}

static lat_seq seq_of_text(const char *text)
{
	lat_seq s;
	sf_err err = { 0 };
	if (lat_seq_parse(text, &s, &err))
		fail_msg("lat_seq_parse(%s): %s", text, err.msg);
	return s;
}

static const char *seq_text(const lat_seq *s, char buf[LAT_MAX_LEN + 1])
{
	lat_seq_format(s, buf);
	return buf;
}

/* ---- exhaustive = brute force ---- */

typedef struct ranked {
	double fitness;
	int level;   /* inside the fitness's domain (see check_exhaustive_brute) */
	int trivial; /* three bands, but forced: 3 or 4 reachable scores above the lowest */
	uint8_t g[LAT_MAX_LEN];
} ranked;

static int ranked_len; /* genome length for cmp_ranked */

/* Fitness descending, then canonical bytes ascending. */
static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->fitness != y->fitness)
		return x->fitness > y->fitness ? -1 : 1;
	return memcmp(x->g, y->g, (size_t)ranked_len);
}

/* Reachable scores of `hist` (scores 0..max) above its lowest. */
static int scores_above_lowest(const uint64_t *hist, int max)
{
	int n = -1;
	for (int s = 0; s <= max; s++)
		n += hist[s] != 0;
	return n;
}

/*
 * Every one of the 2^len sequences through the direct enumerator; for each
 * fitness, the canonical sequences (a sequence no larger than its reverse)
 * ranked by fitness, then bytes. A search returns the best `count` puzzles
 * inside the fitness's domain (puzzle.h): three star bands, i.e. at least
 * three reachable scores above the lowest (stars.h), and for rare_optimum
 * and star_ladder an H fraction in [h_min, h_max] and at least five (with
 * three or four the thresholds are forced: a trivial puzzle).
 * distinct_scores keeps trivial puzzles only while no other has been
 * taken. The first `count` such entries of the ranking must be the
 * exhaustive search's levels, in order, with the same fitness; when there
 * are none, the search fails with SF_ERANGE. Canonical sequences: (2^len +
 * 2^(len/2)) / 2 for even len (palindromes count once): 2080 at 12, 528 at
 * 10, 136 at 8. Returns how many levels the last fitness has.
 */
static int check_exhaustive_brute(lat_kind kind, int len, uint64_t ncanonical, int count,
				  const lat_fitness *fits, int nfits)
{
	uint64_t total = 1ULL << len;
	uint64_t(*hist)[LAT_MAX_SCORE + 1] = calloc(total, sizeof *hist);
	int *max = calloc(total, sizeof *max);
	ranked *rk = calloc(total, sizeof *rk);
	lat_result *r = malloc(sizeof *r);
	assert_true(hist && max && rk && r);
	for (uint64_t k = 0; k < total; k++) {
		lat_seq s = seq_bits(len, (unsigned)k);
		enumerate_ok(kind, &s, r);
		memcpy(hist[k], r->hist, sizeof hist[k]);
		max[k] = r->max_score;
	}
	int want = 0;
	for (int f = 0; f < nfits; f++) {
		lat_search_params p = params_of(kind, len, LAT_ALG_EXHAUSTIVE, fits[f]);
		p.count = count;
		uint64_t n = 0;
		for (uint64_t k = 0; k < total; k++) {
			lat_seq s = seq_bits(len, (unsigned)k);
			if (cmp_reverse(s.h, len) > 0)
				continue; /* its reverse is the canonical one */
			rk[n].fitness = lat_fitness_of(&p, &s, hist[k], max[k]).fitness;
			int above = scores_above_lowest(hist[k], max[k]), h = 0;
			for (int i = 0; i < len; i++)
				h += s.h[i];
			double hfrac = (double)h / len;
			rk[n].trivial = above == 3 || above == 4;
			rk[n].level = fits[f] == LAT_FIT_DISTINCT
					      ? above >= 3
					      : above >= 5 && hfrac >= p.h_min && hfrac <= p.h_max;
			memcpy(rk[n].g, s.h, (size_t)len);
			n++;
		}
		assert_int_equal(n, ncanonical);
		ranked_len = len;
		qsort(rk, n, sizeof *rk, cmp_ranked);
		want = 0;
		int real = 0; /* a level that is not trivial has been taken */
		for (uint64_t i = 0; i < n && want < count; i++) {
			if (!rk[i].level)
				continue;
			if (rk[i].trivial && real)
				break;
			real |= !rk[i].trivial;
			rk[want++] = rk[i];
		}

		lat_search_opts o = opts_of(1, TEST_THREADS, NULL);
		lat_search_result res;
		if (!want) {
			sf_err err = { 0 };
			if (lat_search_run(&p, &o, &res, &err) != SF_ERANGE)
				fail_msg("%s %d %s: no puzzle in the domain, yet the search did "
					 "not fail with SF_ERANGE (%zu levels)",
					 lat_kind_name(kind), len, lat_fitness_name(fits[f]),
					 res.count);
			assert_non_null(strstr(err.msg, lat_fitness_name(fits[f])) ||
					strstr(err.msg, "three reachable star bands"));
			assert_int_equal(res.count, 0);
			continue;
		}
		search_ok(&p, &o, &res);
		assert_int_equal(res.status, GA_COMPLETED);
		assert_int_equal(res.evaluations, ncanonical);
		if ((int)res.count != want)
			fail_msg("%s %d %s count %d: %d levels, brute force has %d puzzles with "
				 "three bands",
				 lat_kind_name(kind), len, lat_fitness_name(fits[f]), count,
				 (int)res.count, want);
		for (int i = 0; i < want; i++) {
			char a[LAT_MAX_LEN + 1], b[LAT_MAX_LEN + 1];
			lat_seq w = { .len = len };
			memcpy(w.h, rk[i].g, (size_t)len);
			if (res.levels[i].seq.len != len ||
			    memcmp(res.levels[i].seq.h, rk[i].g, (size_t)len) != 0)
				fail_msg("%s %d %s: level %d is %s, brute force ranks %s (%.17g) "
					 "there",
					 lat_kind_name(kind), len, lat_fitness_name(fits[f]), i,
					 seq_text(&res.levels[i].seq, a), seq_text(&w, b),
					 rk[i].fitness);
			if (res.levels[i].fitness.fitness != rk[i].fitness)
				fail_msg("%s %d %s: level %d fitness %.17g, brute force %.17g",
					 lat_kind_name(kind), len, lat_fitness_name(fits[f]), i,
					 res.levels[i].fitness.fitness, rk[i].fitness);
		}
		/* A meaningful ranking: the best is not a zero-fitness tie, and
		 * the better fitnesses are positive on every level. */
		assert_true(rk[0].fitness > 0);
		if (fits[f] != LAT_FIT_DISTINCT)
			for (int i = 0; i < want; i++)
				assert_true(res.levels[i].fitness.fitness > 0);
		lat_search_result_free(&res);
	}
	free(hist);
	free(max);
	free(rk);
	free(r);
	return want; /* of the last fitness */
}

static const lat_fitness all_fitnesses[] = { LAT_FIT_DISTINCT, LAT_FIT_RARE_OPTIMUM,
					     LAT_FIT_STAR_LADDER };

static const lat_fitness better_fitnesses[] = { LAT_FIT_RARE_OPTIMUM, LAT_FIT_STAR_LADDER };

/*
 * Length 10: every puzzle with three bands reaches at most 4 contacts
 * (all-H: a 2 x 5 block has 13 lattice edges - 9 bonds = 4), so all are
 * trivial: distinct_scores returns them, the better fitnesses have none and
 * fail. Length 12 (best 6: a 3 x 4 block, 17 - 11) has puzzles of every
 * kind.
 */
static void test_exhaustive_brute_square10(void **state)
{
	(void)state;
	assert_true(check_exhaustive_brute(LAT_SQUARE, 10, (1u << 9) + (1u << 4), 5, all_fitnesses,
					   1) == 5);
	assert_true(check_exhaustive_brute(LAT_SQUARE, 10, (1u << 9) + (1u << 4), 5,
					   better_fitnesses, 2) == 0);
	check_exhaustive_brute(LAT_SQUARE, 12, (1u << 11) + (1u << 5), 5, all_fitnesses, 3);
	assert_true(check_exhaustive_brute(LAT_SQUARE, 12, (1u << 11) + (1u << 5), 5,
					   better_fitnesses, 2) == 5);
}

/*
 * Length 8, square, asking for more levels than there are puzzles with three
 * bands (four distinct scores, 0..3, at most: the all-H 2 x 4 block has 10
 * lattice edges - 7 bonds = 3 contacts): the levels are all of them, in
 * ranking order, and no more.
 */
static void test_exhaustive_brute_square8_many(void **state)
{
	(void)state;
	int n = check_exhaustive_brute(LAT_SQUARE, 8, (1u << 7) + (1u << 3), 40, all_fitnesses, 1);
	assert_true(n < 40);
}

/*
 * Cubic length 8: the all-H chain reaches {0, 1, 2, 3, 5}, four scores above
 * 0, so every puzzle is trivial; length 10 has puzzles of every kind.
 */
static void test_exhaustive_brute_cubic8(void **state)
{
	(void)state;
	assert_true(check_exhaustive_brute(LAT_CUBIC, 8, (1u << 7) + (1u << 3), 5, all_fitnesses,
					   1) == 5);
	assert_true(check_exhaustive_brute(LAT_CUBIC, 8, (1u << 7) + (1u << 3), 5, better_fitnesses,
					   2) == 0);
	assert_true(check_exhaustive_brute(LAT_CUBIC, 10, (1u << 9) + (1u << 4), 5, all_fitnesses,
					   3) == 5);
}

/* ---- the paper's fitness against the published distribution ---- */

/*
 * LATTICE.md: over all 65536 sequences of length 16 on the square lattice
 * the number of distinct scores is at most 10, and exactly 143 sequences
 * reach 10. A sequence and its reverse have the same histogram, so with c
 * canonical sequences at 10 of which q are palindromes, 143 = 2 (c - q) + q.
 * Canonical sequences at 16: 2^15 + 2^7 = 32896. Square scores up to L = 16
 * are contiguous, so 10 distinct scores means best score 9.
 */
static void test_oracle_distinct16(void **state)
{
	(void)state;
	lat_search_params p = params_of(LAT_SQUARE, 16, LAT_ALG_EXHAUSTIVE, LAT_FIT_DISTINCT);
	p.count = 200; /* more than 143: the first below 10 shows all at 10 were seen */
	lat_search_opts o = opts_of(5, TEST_THREADS, db16());
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_int_equal(res.status, GA_COMPLETED);
	assert_int_equal(res.evaluations, (1u << 15) + (1u << 7));
	assert_int_equal(res.count, 200);
	assert_true(res.levels[0].fitness.fitness == 10);
	int at10 = 0, pal = 0;
	for (size_t i = 0; i < res.count; i++) {
		const lat_level *lv = &res.levels[i];
		assert_true(lv->fitness.fitness <= 10);
		assert_true(cmp_reverse(lv->seq.h, lv->seq.len) <= 0);
		if (lv->fitness.fitness == 10) {
			assert_int_equal(i, at10); /* all at 10 come first */
			at10++;
			pal += cmp_reverse(lv->seq.h, lv->seq.len) == 0;
			assert_int_equal(lv->eval.distinct_scores, 10);
			assert_int_equal(lv->eval.max_score, 9);
		}
	}
	assert_true(at10 < (int)res.count);
	if (2 * (at10 - pal) + pal != 143)
		fail_msg("%d canonical sequences with 10 distinct scores, %d palindromes: %d "
			 "sequences, the published count is 143",
			 at10, pal, 2 * (at10 - pal) + pal);

	/* The best one through the direct enumerator, not the database. */
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	enumerate_ok(LAT_SQUARE, &res.levels[0].seq, r);
	assert_int_equal(r->distinct_scores, 10);
	assert_int_equal(r->conformations, 802075); /* OEIS A046171, n = 15 */
	free(r);
	lat_search_result_free(&res);
}

/* ---- fitness definitions ---- */

static void fill_hist(uint64_t hist[LAT_MAX_SCORE + 1], const uint64_t *h, int n)
{
	memset(hist, 0, (LAT_MAX_SCORE + 1) * sizeof hist[0]);
	for (int i = 0; i < n; i++)
		hist[i] = h[i];
}

static ga_eval fitness(lat_fitness f, const lat_search_params *base, const lat_seq *seq,
		       const uint64_t *hist, int max)
{
	lat_search_params p = *base;
	p.fitness = f;
	return lat_fitness_of(&p, seq, hist, max);
}

/*
 * HPHPPHHPHPPHPHHP, square, symmetry-reduced (published):
 * {0: 426271, 1: 284100, 2: 78625, 3: 11592, 4: 1378, 5: 106, 6: 3},
 * total 802075. H at residues 1 3 6 7 9 12 14 15 (1-based): 8 of 16, H
 * fraction 0.5, inside the default window 0.25..0.75.
 *  - distinct_scores: scores 0..6 all reachable -> 7.
 *  - paper stars: lowest 0, max 6: one at the first reachable >= 0 + 6/2 =
 *    3, two at the next reachable below 6 = 5, three at 6 -> [3, 5, 6].
 *  - rare_optimum: log10(total / optimal) plus the rarity of the runner-up
 *    folds (scoring at least 5: 3 + 106 = 109) scaled by 1 / (10 log10
 *    total): log10(802075/3) + log10(802075/109) / (10 log10 802075)
 *    = 5.42709 + 3.86679 / 59.0421 = 5.49259.
 *  - star_ladder: one star is reached by 11592 + 1378 + 106 + 3 = 13079
 *    folds; log10(13079/3) = 3.63945; their share 13079/802075 = 0.0163065
 *    is below start_share 0.05, so the ladder is scaled by 0.0163065/0.05:
 *    1.18693.
 *  - descriptors: 0.5 and ln(802075/3)/ln(802075) = 0.9191897.
 */
static void test_fitness_reference(void **state)
{
	(void)state;
	static const uint64_t h[] = { 426271, 284100, 78625, 11592, 1378, 106, 3 };
	uint64_t hist[LAT_MAX_SCORE + 1];
	fill_hist(hist, h, 7);
	lat_search_params p;
	lat_search_params_default(&p);
	lat_seq seq = seq_of_text("HPHPPHHPHPPHPHHP");
	const double total = 802075;

	ga_eval e = fitness(LAT_FIT_DISTINCT, &p, &seq, hist, 6);
	assert_float_equal(e.fitness, 7, 0);
	assert_float_equal(e.desc[0], 0.5, 0);
	assert_float_equal(e.desc[1], log(total / 3) / log(total), 1e-12);
	assert_float_equal(e.desc[1], 0.9191897, 1e-7);

	e = fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 6);
	double rare = log10(total / 3) + log10(total / (3 + 106)) / (10 * log10(total));
	assert_float_equal(e.fitness, rare, 1e-12);
	assert_float_equal(e.fitness, 5.49259, 1e-5);
	assert_float_equal(e.desc[0], 0.5, 0);
	assert_float_equal(e.desc[1], log(total / 3) / log(total), 1e-12);

	e = fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 6);
	double one = 11592 + 1378 + 106 + 3;
	double ladder = log10(one / 3) * (one / total) / 0.05;
	assert_float_equal(e.fitness, ladder, 1e-12);
	assert_float_equal(e.fitness, 1.18693, 1e-5);

	/* start_share at or below the share: the ladder unscaled. */
	p.start_share = 0.01;
	e = fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 6);
	assert_float_equal(e.fitness, log10(one / 3), 1e-12);
	p.start_share = 0.05;

	/* The same histogram from the direct enumerator and the database gives the same. */
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	enumerate_ok(LAT_SQUARE, &seq, r);
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		assert_int_equal(r->hist[s], hist[s]);
	free(r);
}

/*
 * The H window and the band rule. HPHPPHHPHPPHPHHP has H fraction 0.5:
 *  - h_max 0.4 or h_min 0.6 puts it outside: the two better fitnesses are 0,
 *    distinct_scores is still 7; the descriptors do not change.
 *  - the window edges are inclusive: h_min = h_max = 0.5 keeps it.
 * HPPH: its 5 reduced conformations are RRR, RRU, RUR, RUL, RUU; only RUL
 * brings residue 4 next to residue 1 -> {0: 4, 1: 1}; H fraction 0.5. One
 * reachable score above the lowest: no three bands, so 0 for both better
 * fitnesses, 2 for distinct_scores. Likewise a histogram with two scores
 * above the lowest, {0: 10, 1: 5, 2: 1}.
 */
static void test_fitness_window_and_bands(void **state)
{
	(void)state;
	static const uint64_t h[] = { 426271, 284100, 78625, 11592, 1378, 106, 3 };
	uint64_t hist[LAT_MAX_SCORE + 1];
	fill_hist(hist, h, 7);
	lat_seq seq = seq_of_text("HPHPPHHPHPPHPHHP");
	lat_search_params p;
	lat_search_params_default(&p);
	const double total = 802075;

	const double windows[][2] = { { 0.25, 0.4 }, { 0.6, 0.75 }, { 0.0, 0.49 } };
	for (int w = 0; w < ARRAY_LEN(windows); w++) {
		p.h_min = windows[w][0];
		p.h_max = windows[w][1];
		ga_eval e = fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 6);
		assert_float_equal(e.fitness, 0, 0);
		assert_float_equal(e.desc[0], 0.5, 0);
		assert_float_equal(e.desc[1], log(total / 3) / log(total), 1e-12);
		assert_float_equal(fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 6).fitness, 0, 0);
		assert_float_equal(fitness(LAT_FIT_DISTINCT, &p, &seq, hist, 6).fitness, 7, 0);
	}
	p.h_min = p.h_max = 0.5;
	assert_true(fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 6).fitness > 5);
	assert_true(fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 6).fitness > 1);
	lat_search_params_default(&p);

	lat_seq hpph = seq_of_text("HPPH");
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	enumerate_ok(LAT_SQUARE, &hpph, r);
	assert_int_equal(r->hist[0], 4);
	assert_int_equal(r->hist[1], 1);
	assert_int_equal(r->max_score, 1);
	assert_float_equal(fitness(LAT_FIT_DISTINCT, &p, &hpph, r->hist, 1).fitness, 2, 0);
	assert_float_equal(fitness(LAT_FIT_RARE_OPTIMUM, &p, &hpph, r->hist, 1).fitness, 0, 0);
	assert_float_equal(fitness(LAT_FIT_STAR_LADDER, &p, &hpph, r->hist, 1).fitness, 0, 0);
	/* descriptors still: 0.5 and ln(5/1)/ln(5) = 1 */
	ga_eval e = fitness(LAT_FIT_RARE_OPTIMUM, &p, &hpph, r->hist, 1);
	assert_float_equal(e.desc[0], 0.5, 0);
	assert_float_equal(e.desc[1], 1, 1e-12);
	free(r);

	static const uint64_t two[] = { 10, 5, 1 };
	fill_hist(hist, two, 3);
	assert_float_equal(fitness(LAT_FIT_DISTINCT, &p, &seq, hist, 2).fitness, 3, 0);
	assert_float_equal(fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 2).fitness, 0, 0);
	assert_float_equal(fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 2).fitness, 0, 0);

	/* Every fold optimal (PPPP: {0: 5}): rarity descriptor 0, distinct 1. */
	lat_seq pppp = seq_of_text("PPPP");
	static const uint64_t flat[] = { 5 };
	fill_hist(hist, flat, 1);
	e = fitness(LAT_FIT_DISTINCT, &p, &pppp, hist, 0);
	assert_float_equal(e.fitness, 1, 0);
	assert_float_equal(e.desc[0], 0, 0);
	assert_float_equal(e.desc[1], 0, 0);
}

/*
 * A score set with a gap: the all-H chain of 8 on the cubic lattice over all
 * walks (published): {0: 38142, 1: 26688, 2: 11928, 3: 4488, 5: 144}, total
 * 81390 (= c_7, OEIS A001412). Distinct scores 5 (not max + 1 = 6). H
 * fraction 1: outside the default window (0 for the better fitnesses).
 * With h_max = 1 still 0: its best score is 5 but only four scores above 0
 * are reachable, so its stars are forced ([2, 3, 5] under every strategy):
 * a trivial puzzle, counted by reachable scores, not by the best one.
 *
 * The gap logic on a made-up histogram with five reachable scores above 0,
 * {0: 50000, 1: 30000, 2: 12000, 3: 5000, 5: 300, 7: 6}, total 97306:
 *  - runner-up folds are those scoring the next reachable score, 5 (6 is
 *    unreachable): 6 + 300 = 306 -> log10(97306/6) + log10(97306/306) /
 *    (10 log10 97306) = 4.20999 + 2.50242 / 49.8814 = 4.26016;
 *  - paper stars: lowest 0, max 7: one at the first reachable >= 7/2 = 3,
 *    two at 5, three at 7; one star reached by 5000 + 300 + 6 = 5306 folds,
 *    share 0.05453 >= 0.05: ladder log10(5306/6) = 2.94661.
 */
static void test_fitness_gap(void **state)
{
	(void)state;
	static const uint64_t h[] = { 38142, 26688, 11928, 4488, 0, 144 };
	uint64_t hist[LAT_MAX_SCORE + 1];
	fill_hist(hist, h, 6);
	lat_seq seq = seq_uniform(8, 1);
	lat_search_params p;
	lat_search_params_default(&p);
	p.lattice = LAT_CUBIC;
	p.length = 8;
	const double total = 81390;

	ga_eval e = fitness(LAT_FIT_DISTINCT, &p, &seq, hist, 5);
	assert_float_equal(e.fitness, 5, 0);
	assert_float_equal(e.desc[0], 1, 0);
	assert_float_equal(e.desc[1], log(total / 144) / log(total), 1e-12);
	assert_float_equal(fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 5).fitness, 0, 0);
	assert_float_equal(fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 5).fitness, 0, 0);

	p.h_max = 1;
	assert_float_equal(fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 5).fitness, 0, 0);
	assert_float_equal(fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 5).fitness, 0, 0);
	assert_true(lat_trivial(hist, 5));
	p.fitness = LAT_FIT_RARE_OPTIMUM;
	assert_false(lat_in_domain(&p, &seq, hist, 5));
	p.fitness = LAT_FIT_DISTINCT; /* the paper's keeps trivial puzzles */
	assert_true(lat_in_domain(&p, &seq, hist, 5));
	assert_float_equal(fitness(LAT_FIT_DISTINCT, &p, &seq, hist, 5).fitness, 5, 0);

	static const uint64_t g[] = { 50000, 30000, 12000, 5000, 0, 300, 0, 6 };
	fill_hist(hist, g, 8);
	const double gtotal = 97306;
	assert_false(lat_trivial(hist, 7));
	e = fitness(LAT_FIT_RARE_OPTIMUM, &p, &seq, hist, 7);
	assert_float_equal(e.fitness,
			   log10(gtotal / 6) + log10(gtotal / 306) / (10 * log10(gtotal)), 1e-12);
	assert_float_equal(e.fitness, 4.26016, 1e-5);
	e = fitness(LAT_FIT_STAR_LADDER, &p, &seq, hist, 7);
	assert_float_equal(e.fitness, log10(5306.0 / 6), 1e-12);
	assert_float_equal(e.fitness, 2.94661, 1e-5);
}

/* ---- determinism ---- */

static void expect_same(const char *a, const char *b, const char *what)
{
	if (strcmp(a, b) != 0)
		fail_msg("%s: outputs differ:\n%s\n%s", what, a, b);
}

/* Same params and seed: byte-identical JSON, for 1, 2 and 3 threads. */
static void test_determinism_threads(void **state)
{
	(void)state;
	static const lat_algorithm algs[] = { LAT_ALG_GA, LAT_ALG_MAP_ELITES, LAT_ALG_EXHAUSTIVE };
	for (int a = 0; a < ARRAY_LEN(algs); a++) {
		lat_search_params p = params_of(LAT_SQUARE, 12, algs[a], LAT_FIT_RARE_OPTIMUM);
		if (algs[a] != LAT_ALG_MAP_ELITES)
			p.count = 4;
		lat_search_opts o = opts_of(77, 1, NULL);
		char *one = run_text(&p, &o);
		char *again = run_text(&p, &o);
		expect_same(one, again, lat_algorithm_name(algs[a]));
		for (int t = 2; t <= 3; t++) {
			o.threads = t;
			char *many = run_text(&p, &o);
			char what[64];
			snprintf(what, sizeof what, "%s, 1 vs %d threads",
				 lat_algorithm_name(algs[a]), t);
			expect_same(one, many, what);
			free(many);
		}
		free(one);
		free(again);
	}
}

/* A warm database gives what a cold run (which builds its own) gives. */
static void test_determinism_warm_db(void **state)
{
	(void)state;
	lat_search_params p = params_of(LAT_SQUARE, 16, LAT_ALG_GA, LAT_FIT_DISTINCT);
	lat_search_opts cold = opts_of(42, TEST_THREADS, NULL);
	lat_search_opts warm = opts_of(42, TEST_THREADS, db16());
	char *a = run_text(&p, &cold), *b = run_text(&p, &warm);
	expect_same(a, b, "ga, length 16, cold vs warm database");
	free(a);
	free(b);

	lat_opts dbo = { .threads = 1, .budget = 0 };
	sf_err err = { 0 };
	lat_db *db12 = lat_db_build(LAT_SQUARE, 12, &dbo, &err);
	assert_non_null(db12);
	static const lat_algorithm algs[] = { LAT_ALG_MAP_ELITES, LAT_ALG_EXHAUSTIVE };
	for (int i = 0; i < ARRAY_LEN(algs); i++) {
		p = params_of(LAT_SQUARE, 12, algs[i], LAT_FIT_STAR_LADDER);
		cold = opts_of(9, TEST_THREADS, NULL);
		warm = opts_of(9, 1, db12);
		a = run_text(&p, &cold);
		b = run_text(&p, &warm);
		expect_same(a, b, lat_algorithm_name(algs[i]));
		free(a);
		free(b);
	}

	/* A database of another length or lattice is refused. */
	p = params_of(LAT_SQUARE, 14, LAT_ALG_GA, LAT_FIT_DISTINCT);
	warm = opts_of(1, 1, db12);
	lat_search_result res;
	assert_int_equal(lat_search_run(&p, &warm, &res, &err), SF_EINVAL);
	assert_int_equal(res.count, 0);
	p = params_of(LAT_CUBIC, 12, LAT_ALG_GA, LAT_FIT_DISTINCT);
	assert_int_equal(lat_search_run(&p, &warm, &res, &err), SF_EINVAL);
	lat_db_free(db12);

	/* So are thread counts below 1. */
	p = params_of(LAT_SQUARE, 8, LAT_ALG_GA, LAT_FIT_DISTINCT);
	warm = opts_of(1, 0, NULL);
	assert_int_equal(lat_search_run(&p, &warm, &res, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "threads"));
}

/* Another seed: another GA run (its series differ). */
static void test_determinism_seed(void **state)
{
	(void)state;
	lat_search_params p = params_of(LAT_SQUARE, 12, LAT_ALG_GA, LAT_FIT_RARE_OPTIMUM);
	lat_search_result a, b;
	lat_search_opts oa = opts_of(1, TEST_THREADS, NULL), ob = opts_of(2, TEST_THREADS, NULL);
	search_ok(&p, &oa, &a);
	search_ok(&p, &ob, &b);
	assert_int_equal(a.generations_run, b.generations_run);
	int differ = 0;
	for (int g = 0; g < a.generations_run; g++)
		differ |= a.series[g].mean != b.series[g].mean ||
			  a.series[g].evaluations != b.series[g].evaluations;
	assert_true(differ);
	lat_search_result_free(&a);
	lat_search_result_free(&b);
}

/* ---- levels ---- */

/* Reachable scores of `r` above its lowest, ascending; returns how many. */
static int candidates(const lat_result *r, int *out)
{
	int lowest = -1, n = 0;
	for (int s = 0; s <= r->max_score; s++) {
		if (!r->hist[s])
			continue;
		if (lowest < 0)
			lowest = s;
		else
			out[n++] = s;
	}
	return n;
}

/*
 * One level, checked against the direct enumerator and the paper's star
 * rule: the evaluation equals lat_enumerate's; three stars at the best
 * score, two at the next reachable score below it, one at the first
 * reachable score from the middle of the range (lowest + (max - lowest) / 2)
 * upwards, kept below two; every band fold is self-avoiding and scores
 * exactly its threshold. A search returns only puzzles inside its fitness's
 * domain: three bands, and for the better fitnesses at least five reachable
 * scores above the lowest (not trivial) and the H fraction in the window.
 * Under every strategy one star is never a single step above the lowest
 * when four or more scores above it are reachable.
 */
static void check_level(const lat_search_params *p, const lat_level *lv)
{
	char buf[LAT_MAX_LEN + 1];
	assert_int_equal(lv->seq.len, p->length);
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	enumerate_ok(p->lattice, &lv->seq, r);
	assert_int_equal(lv->eval.max_score, r->max_score);
	assert_int_equal(lv->eval.conformations, r->conformations);
	for (int s = 0; s <= LAT_MAX_SCORE; s++)
		if (lv->eval.hist[s] != r->hist[s])
			fail_msg("%s: hist[%d] %llu, direct enumeration %llu",
				 seq_text(&lv->seq, buf), s, (unsigned long long)lv->eval.hist[s],
				 (unsigned long long)r->hist[s]);
	sf_err err = { 0 };
	assert_int_equal(
		lat_fold_score(p->lattice, &lv->seq, lv->eval.examples[r->max_score], &err),
		r->max_score);

	int cand[LAT_MAX_SCORE + 1];
	int n = candidates(r, cand);
	if (n < 3)
		fail_msg("%s: a level with %d reachable scores above the lowest (three bands "
			 "need 3)",
			 seq_text(&lv->seq, buf), n);
	if (p->fitness != LAT_FIT_DISTINCT) {
		int h = 0;
		for (int i = 0; i < lv->seq.len; i++)
			h += lv->seq.h[i];
		double hfrac = (double)h / lv->seq.len;
		if (n < 5 || hfrac < p->h_min || hfrac > p->h_max || !(lv->fitness.fitness > 0))
			fail_msg("%s: a %s level outside its domain: %d reachable scores above "
				 "the lowest, H fraction %g, fitness %g",
				 seq_text(&lv->seq, buf), lat_fitness_name(p->fitness), n, hfrac,
				 lv->fitness.fitness);
	}
	if (n >= 4 && lv->thresholds[0] <= cand[0])
		fail_msg("%s: one star at %d, the first step above the lowest, with %d above it",
			 seq_text(&lv->seq, buf), lv->thresholds[0], n);
	assert_true(lv->thresholds[0] < lv->thresholds[1]);
	assert_true(lv->thresholds[1] < lv->thresholds[2]);
	assert_int_equal(lv->thresholds[2], r->max_score);
	if (p->stars.strategy == STARS_PAPER) {
		int lowest = 0;
		while (!r->hist[lowest])
			lowest++;
		int two = cand[n - 2], one = cand[n - 1];
		for (int i = 0; i < n; i++)
			if (cand[i] >= lowest + (r->max_score - lowest) / 2) {
				one = cand[i];
				break;
			}
		if (n >= 4 && one == cand[0])
			one = cand[1];
		if (one >= two)
			one = cand[n - 3];
		assert_int_equal(lv->thresholds[1], two);
		assert_int_equal(lv->thresholds[0], one);
	}
	for (int k = 0; k < 3; k++) {
		int t = lv->thresholds[k];
		assert_true(r->hist[t] > 0);
		const char *fold = lv->eval.examples[t];
		int got = lat_fold_score(p->lattice, &lv->seq, fold, &err);
		if (got != t)
			fail_msg("%s: band fold '%s' for threshold %d scores %d (%s)",
				 seq_text(&lv->seq, buf), fold, t, got, err.msg);
	}
	free(r);
}

static const char *level_id(const lat_level *lv, const lat_search_params *p, uint64_t seed,
			    char out[64])
{
	json_t *doc = lat_level_json(lv, p, seed);
	assert_non_null(doc);
	const char *id = json_string_value(json_object_get(doc, "id"));
	assert_non_null(id);
	assert_true(strlen(id) < 64);
	strcpy(out, id);
	json_decref(doc);
	return out;
}

static void test_levels(void **state)
{
	(void)state;
	static const lat_fitness fits[] = { LAT_FIT_DISTINCT, LAT_FIT_RARE_OPTIMUM,
					    LAT_FIT_STAR_LADDER };
	for (int f = 0; f < ARRAY_LEN(fits); f++) {
		lat_search_params p = params_of(LAT_SQUARE, 12, LAT_ALG_EXHAUSTIVE, fits[f]);
		p.count = 6;
		lat_search_opts o = opts_of(3, TEST_THREADS, NULL);
		lat_search_result res;
		search_ok(&p, &o, &res);
		assert_int_equal(res.count, 6);
		for (size_t i = 0; i < res.count; i++) {
			check_level(&p, &res.levels[i]);
			assert_int_equal(res.levels[i].cell, -1);
		}
		lat_search_result_free(&res);
	}
	/* Other star strategies and the cubic lattice (length 10: every cubic
	 * 8-mer is trivial, outside rare_optimum's domain). */
	lat_search_params p = params_of(LAT_CUBIC, 10, LAT_ALG_GA, LAT_FIT_RARE_OPTIMUM);
	p.stars.strategy = STARS_GEOMETRIC;
	p.count = 3;
	p.generations = 5;
	lat_search_opts o = opts_of(11, TEST_THREADS, NULL);
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_true(res.count >= 1);
	for (size_t i = 0; i < res.count; i++)
		check_level(&p, &res.levels[i]);
	lat_search_result_free(&res);
	p = params_of(LAT_SQUARE, 12, LAT_ALG_MAP_ELITES, LAT_FIT_STAR_LADDER);
	p.stars.strategy = STARS_PERCENTILE;
	p.generations = 10;
	search_ok(&p, &o, &res);
	for (size_t i = 0; i < res.count; i++)
		check_level(&p, &res.levels[i]);
	lat_search_result_free(&res);
	/* Short chains, where many puzzles have too few scores for three bands:
	 * every level returned still has them. */
	p = params_of(LAT_SQUARE, 8, LAT_ALG_GA, LAT_FIT_DISTINCT);
	p.count = 1000;
	p.mutation_rate = 0.5;
	search_ok(&p, &o, &res);
	assert_true(res.count >= 1);
	for (size_t i = 0; i < res.count; i++)
		check_level(&p, &res.levels[i]);
	lat_search_result_free(&res);
}

/*
 * Level ids: the same sequence gets the same id whatever the seed and the
 * search params; another sequence another id.
 */
static void test_level_ids(void **state)
{
	(void)state;
	lat_search_params p = params_of(LAT_SQUARE, 12, LAT_ALG_EXHAUSTIVE, LAT_FIT_RARE_OPTIMUM);
	p.count = 5;
	lat_search_result a, b;
	lat_search_opts oa = opts_of(1, TEST_THREADS, NULL), ob = opts_of(999, 1, NULL);
	search_ok(&p, &oa, &a);
	search_ok(&p, &ob, &b); /* exhaustive: the seed changes nothing but the seed */
	lat_search_params q = p;
	q.population = 17;
	q.generations = 3;
	q.fitness = LAT_FIT_STAR_LADDER;
	char ids[5][64];
	for (int i = 0; i < 5; i++) {
		char other[64];
		assert_memory_equal(a.levels[i].seq.h, b.levels[i].seq.h, 12);
		level_id(&a.levels[i], &p, 1, ids[i]);
		assert_memory_equal(ids[i], "lat_", 4);
		assert_int_equal(strlen(ids[i]), 4 + 32);
		for (int c = 4; c < 36; c++)
			assert_non_null(strchr("0123456789abcdef", ids[i][c]));
		assert_string_equal(ids[i], level_id(&b.levels[i], &p, 999, other));
		assert_string_equal(ids[i], level_id(&a.levels[i], &q, 5, other));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ids[i], ids[j]);
	}
	/* A level built by hand for the same sequence: the same id again. */
	lat_level lv;
	memset(&lv, 0, sizeof lv);
	lv.seq = a.levels[0].seq;
	enumerate_ok(LAT_SQUARE, &lv.seq, &lv.eval);
	assert_int_equal(stars_thresholds(lv.eval.hist, lv.eval.max_score + 1, &p.stars,
					  lv.thresholds, NULL),
			 0);
	lv.cell = -1;
	char hand[64];
	assert_string_equal(ids[0], level_id(&lv, &p, 12345, hand));
	/* ...and its reverse is another sequence text, so another id. */
	for (int i = 0; i < 12; i++)
		lv.seq.h[i] = a.levels[0].seq.h[11 - i];
	if (cmp_reverse(lv.seq.h, 12) != 0) {
		enumerate_ok(LAT_SQUARE, &lv.seq, &lv.eval);
		assert_string_not_equal(ids[0], level_id(&lv, &p, 1, hand));
	}
	lat_search_result_free(&a);
	lat_search_result_free(&b);
}

/* ---- the GA ---- */

/*
 * The paper's defaults at length 16: `generations` entries in the series,
 * each numbered, the best never falls (one elite carries it over), the first
 * level's fitness is the final best, count 5 gives 5 distinct puzzles, none
 * the reverse of another, in non-increasing fitness; each one's fitness is
 * its number of distinct scores by the direct enumerator.
 */
static void test_ga(void **state)
{
	(void)state;
	lat_search_params p = params_of(LAT_SQUARE, 16, LAT_ALG_GA, LAT_FIT_DISTINCT);
	p.count = 5;
	lat_search_opts o = opts_of(2024, TEST_THREADS, db16());
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_int_equal(res.status, GA_COMPLETED);
	assert_int_equal(res.generations_run, 50);
	for (int g = 0; g < 50; g++) {
		const ga_generation *gen = &res.series[g];
		assert_int_equal(gen->generation, g + 1);
		assert_int_equal(gen->generations, 50);
		assert_true(gen->at_best >= 1 && gen->at_best <= 30);
		assert_true(gen->mean <= gen->best);
		assert_true(gen->best <= 10); /* the published maximum at 16 */
		if (g > 0) {
			assert_true(gen->best >= res.series[g - 1].best);
			assert_true(gen->evaluations >= res.series[g - 1].evaluations);
		}
	}
	assert_true(res.series[0].evaluations <= 30);
	assert_int_equal(res.series[49].evaluations, res.evaluations);
	assert_true(res.evaluations <= 30 * 50);
	assert_int_equal(res.count, 5);
	assert_true(res.levels[0].fitness.fitness == res.series[49].best);
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	for (int i = 0; i < 5; i++) {
		const lat_level *lv = &res.levels[i];
		assert_int_equal(lv->cell, -1);
		assert_true(cmp_reverse(lv->seq.h, 16) <= 0); /* canonical orientation */
		if (i > 0)
			assert_true(lv->fitness.fitness <= res.levels[i - 1].fitness.fitness);
		for (int j = 0; j < i; j++) {
			assert_memory_not_equal(lv->seq.h, res.levels[j].seq.h, 16);
			assert_false(is_reverse_of(&lv->seq, &res.levels[j].seq));
		}
		enumerate_ok(LAT_SQUARE, &lv->seq, r);
		assert_true(lv->fitness.fitness == r->distinct_scores);
	}
	free(r);
	lat_search_result_free(&res);

	/* Without elites the best may fall, but the result still holds the
	 * best ever seen: the first level is at least every generation's best. */
	p = params_of(LAT_SQUARE, 12, LAT_ALG_GA, LAT_FIT_RARE_OPTIMUM);
	p.elites = 0;
	p.mutation_rate = 0.5;
	o = opts_of(6, TEST_THREADS, NULL);
	search_ok(&p, &o, &res);
	for (int g = 0; g < res.generations_run; g++)
		assert_true(res.levels[0].fitness.fitness >= res.series[g].best);
	lat_search_result_free(&res);

	/*
	 * Length 8 has only 256 sequences. At mutation rate 0.5 every child is
	 * a uniformly random sequence whatever its parents, so 30 x 199 children
	 * miss one of them with probability about 256 e^(-5970/256) < 1e-7: the
	 * GA sees every sequence, both orientations of each puzzle included.
	 * Its best 8 levels must then be the exhaustive search's best 8. Every
	 * 8-mer is trivial, outside rare_optimum's domain, so rare_optimum runs
	 * at length 11 (2048 sequences, the shortest square length with puzzles
	 * in its domain): 1000 + 59 x 999 children miss one with probability
	 * about 2048 e^(-59941/2048) < 1e-9.
	 */
	static const struct {
		lat_fitness fit;
		int length, population, generations;
	} full[] = {
		{ LAT_FIT_DISTINCT, 8, 30, 200 },
		{ LAT_FIT_RARE_OPTIMUM, 11, 1000, 60 },
	};
	for (int f = 0; f < ARRAY_LEN(full); f++) {
		int len = full[f].length;
		p = params_of(LAT_SQUARE, len, LAT_ALG_GA, full[f].fit);
		p.count = 8;
		p.mutation_rate = 0.5;
		p.population = full[f].population;
		p.generations = full[f].generations;
		p.h_min = 0;
		p.h_max = 1;
		o = opts_of(8, TEST_THREADS, NULL);
		search_ok(&p, &o, &res);
		assert_int_equal(res.evaluations, 1u << len);
		lat_search_result ex;
		p.algorithm = LAT_ALG_EXHAUSTIVE;
		search_ok(&p, &o, &ex);
		assert_int_equal(ex.evaluations, ((1u << len) + (1u << ((len + 1) / 2))) / 2);
		assert_int_equal(res.count, ex.count);
		assert_true(res.count >= 1);
		for (size_t i = 0; i < res.count; i++) {
			assert_memory_equal(res.levels[i].seq.h, ex.levels[i].seq.h, (size_t)len);
			assert_true(res.levels[i].fitness.fitness == ex.levels[i].fitness.fitness);
		}
		lat_search_result_free(&ex);
		lat_search_result_free(&res);
	}
}

/* ---- MAP-Elites ---- */

/* floor(x * bins), clamped to the last bin; -1 when x * bins is within 1e-9 of a bin edge. */
static int bin_of(double x, int bins)
{
	double v = x * bins;
	double f = floor(v);
	if (v - f < 1e-9 || f + 1 - v < 1e-9)
		return -1;
	return f >= bins ? bins - 1 : (int)f;
}

/*
 * Levels are in distinct cells; each cell is (floor(h_fraction * bins),
 * floor(rarity * bins)) with both descriptors recomputed here from the
 * level's sequence and the direct enumerator's histogram with libm; the
 * fitness (rare_optimum) likewise. Levels are archive cells whose puzzle
 * carries three bands, best first. count 0 (the default for map_elites)
 * returns the whole archive: at most the last generation's filled cells,
 * and the same levels as the largest count, 1000; count 3 returns its
 * first 3.
 */
static void test_map_elites(void **state)
{
	(void)state;
	json_t *pj = json_pack("{s:s, s:s, s:i}", "algorithm", "map_elites", "fitness",
			       "rare_optimum", "length", 12);
	lat_search_params p;
	sf_err err = { 0 };
	assert_int_equal(lat_search_params_from_json(pj, &p, &err), 0);
	json_decref(pj);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.bins, 10);
	lat_search_opts o = opts_of(31, TEST_THREADS, NULL);
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_int_equal(res.generations_run, 50);
	const ga_generation *last = &res.series[49];
	assert_true(last->filled >= 2);
	assert_true(res.count >= 2 && res.count <= (size_t)last->filled);
	for (int g = 1; g < 50; g++)
		assert_true(res.series[g].filled >= res.series[g - 1].filled);
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	for (size_t i = 0; i < res.count; i++) {
		const lat_level *lv = &res.levels[i];
		assert_true(lv->cell >= 0 && lv->cell < 100);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(lv->cell, res.levels[j].cell);
		if (i > 0)
			assert_true(lv->fitness.fitness <= res.levels[i - 1].fitness.fitness);
		assert_true(lv->fitness.fitness <= last->best);

		enumerate_ok(LAT_SQUARE, &lv->seq, r);
		int h = 0;
		for (int k = 0; k < 12; k++)
			h += lv->seq.h[k];
		double total = (double)r->conformations, opt = (double)r->hist[r->max_score];
		double d0 = h / 12.0, d1 = log(total / opt) / log(total);
		assert_float_equal(lv->fitness.desc[0], d0, 1e-12);
		assert_float_equal(lv->fitness.desc[1], d1, 1e-12);
		int b0 = bin_of(d0, 10), b1 = bin_of(d1, 10);
		if (b0 >= 0)
			assert_int_equal(lv->cell / 10, b0);
		if (b1 >= 0)
			assert_int_equal(lv->cell % 10, b1);

		/* rare_optimum by hand: 0 outside the window or without five
		 * reachable scores above 0 (three bands with a choice of stars);
		 * a level is never outside that domain, so never 0. */
		int cand[LAT_MAX_SCORE + 1];
		int n = candidates(r, cand);
		if (!(n >= 5 && d0 >= 0.25 && d0 <= 0.75))
			fail_msg("level %zu: outside rare_optimum's domain (%d reachable scores "
				 "above 0, H fraction %g), fitness %g",
				 i, n, d0, lv->fitness.fitness);
		double near = opt + (double)r->hist[cand[n - 2]];
		double want = log10(total / opt) + log10(total / near) / (10 * log10(total));
		assert_float_equal(lv->fitness.fitness, want, 1e-9);
		assert_true(lv->fitness.fitness > 0);

		/* The JSON names the cell as [row, column]. */
		json_t *doc = lat_level_json(lv, &p, 31);
		json_t *cell = json_object_get(json_object_get(doc, "stats"), "cell");
		assert_int_equal(json_integer_value(json_array_get(cell, 0)), lv->cell / 10);
		assert_int_equal(json_integer_value(json_array_get(cell, 1)), lv->cell % 10);
		json_decref(doc);
	}
	free(r);

	lat_search_result top;
	p.count = 1000;
	search_ok(&p, &o, &top);
	assert_int_equal(top.count, res.count);
	for (size_t i = 0; i < res.count; i++) {
		assert_memory_equal(top.levels[i].seq.h, res.levels[i].seq.h, 12);
		assert_int_equal(top.levels[i].cell, res.levels[i].cell);
	}
	lat_search_result_free(&top);
	p.count = 3;
	search_ok(&p, &o, &top);
	assert_int_equal(top.count, 3);
	for (int i = 0; i < 3; i++) {
		assert_memory_equal(top.levels[i].seq.h, res.levels[i].seq.h, 12);
		assert_int_equal(top.levels[i].cell, res.levels[i].cell);
	}
	lat_search_result_free(&top);
	lat_search_result_free(&res);
}

/* ---- params ---- */

typedef struct bad_params {
	const char *json;
	const char *names; /* the message contains "params." and this */
} bad_params;

static void test_params_invalid(void **state)
{
	(void)state;
	static const bad_params cases[] = {
		{ "{\"length\": 3}", "length" },
		{ "{\"length\": 21, \"method\": \"exact\"}", "length" },
		{ "{\"length\": 15, \"lattice\": \"cubic\", \"method\": \"exact\"}", "length" },
		{ "{\"length\": 65}", "length" },
		{ "{\"length\": 49, \"lattice\": \"cubic\"}", "length" },
		{ "{\"method\": \"guess\"}", "method" },
		{ "{\"steps\": 0}", "steps" },
		{ "{\"length\": 19, \"algorithm\": \"exhaustive\"}", "length" },
		{ "{\"length\": -16}", "length" },
		{ "{\"length\": 7}", "length" },
		{ "{\"length\": 7, \"lattice\": \"cubic\"}", "length" },
		{ "{\"star_one_fraction\": 1.5}", "star_one_fraction" },
		{ "{\"star_one_fraction\": 0}", "star_one_fraction" },
		{ "{\"star_two_fraction\": 0.6}", "star_two_fraction" },
		{ "{\"star_two_fraction\": 0, \"stars\": \"percentile\"}", "star_two_fraction" },
		{ "{\"population\": 1}", "population" },
		{ "{\"population\": 1001}", "population" },
		{ "{\"generations\": 0}", "generations" },
		{ "{\"generations\": 1001}", "generations" },
		{ "{\"mutation_rate\": -0.1}", "mutation_rate" },
		{ "{\"mutation_rate\": 1.5}", "mutation_rate" },
		{ "{\"elites\": 30}", "elites" },
		{ "{\"elites\": 5, \"population\": 5}", "elites" },
		{ "{\"elites\": -1}", "elites" },
		{ "{\"bins\": 1}", "bins" },
		{ "{\"bins\": 65}", "bins" },
		{ "{\"count\": 0}", "count" },
		{ "{\"count\": 0, \"algorithm\": \"exhaustive\"}", "count" },
		{ "{\"count\": 1001}", "count" },
		{ "{\"h_min\": 0.8, \"h_max\": 0.3}", "h_min" },
		{ "{\"h_max\": 1.5}", "h_max" },
		{ "{\"start_share\": 0}", "start_share" },
		{ "{\"start_share\": 1.5}", "start_share" },
		{ "{\"frobnicate\": 1}", "frobnicate" },
		{ "{\"length\": \"16\"}", "length" },
		{ "{\"length\": 16.5}", "length" },
		{ "{\"length\": null}", "length" },
		{ "{\"population\": true}", "population" },
		{ "{\"mutation_rate\": \"0.1\"}", "mutation_rate" },
		{ "{\"lattice\": 3}", "lattice" },
		{ "{\"lattice\": \"hexagonal\"}", "lattice" },
		{ "{\"fitness\": \"most_fun\"}", "fitness" },
		{ "{\"fitness\": 1}", "fitness" },
		{ "{\"algorithm\": \"annealing\"}", "algorithm" },
		{ "{\"stars\": \"five\"}", "stars" },
		{ "[]", "params" },
		{ "[16]", "params" },
		{ "16", "params" },
		{ "\"length\"", "params" },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		json_error_t jerr;
		json_t *pj = json_loads(cases[i].json, JSON_DECODE_ANY, &jerr);
		if (!pj)
			fail_msg("case %s is not JSON: %s", cases[i].json, jerr.text);
		lat_search_params p;
		sf_err err = { 0 };
		int rc = lat_search_params_from_json(pj, &p, &err);
		json_decref(pj);
		if (rc != SF_EINVAL || err.code != SF_EINVAL)
			fail_msg("params %s: rc %d (code %d), expected SF_EINVAL", cases[i].json,
				 rc, err.code);
		if (!strstr(err.msg, "params") || !strstr(err.msg, cases[i].names) ||
		    (strcmp(cases[i].names, "params") && !strstr(err.msg, "params.")))
			fail_msg("params %s: message does not name %s: %s", cases[i].json,
				 cases[i].names, err.msg);
	}
	/* Unknown names are quoted back. */
	static const char *const named[][2] = {
		{ "{\"fitness\": \"most_fun\"}", "most_fun" },
		{ "{\"algorithm\": \"annealing\"}", "annealing" },
		{ "{\"lattice\": \"hexagonal\"}", "hexagonal" },
		{ "{\"stars\": \"five\"}", "five" },
		{ "{\"population\": 1001}", "1001" },
	};
	for (int i = 0; i < ARRAY_LEN(named); i++) {
		json_t *pj = json_loads(named[i][0], 0, NULL);
		lat_search_params p;
		sf_err err = { 0 };
		assert_int_equal(lat_search_params_from_json(pj, &p, &err), SF_EINVAL);
		json_decref(pj);
		if (!strstr(err.msg, named[i][1]))
			fail_msg("params %s: message does not quote %s: %s", named[i][0],
				 named[i][1], err.msg);
	}
}

static void parse_ok(const char *text, lat_search_params *p)
{
	json_error_t jerr;
	json_t *pj = text ? json_loads(text, 0, &jerr) : NULL;
	if (text && !pj)
		fail_msg("%s: %s", text, jerr.text);
	sf_err err = { 0 };
	int rc = lat_search_params_from_json(pj, p, &err);
	json_decref(pj);
	if (rc)
		fail_msg("params %s: %s", text ? text : "(null)", err.msg);
}

/*
 * The paper's settings as defaults: population 30, 50 generations,
 * mutation 0.1 per element, 1 elite, length 16, the square (2D) lattice, the
 * GA and the number of distinct scores; its star rule. The documented
 * ranges' edges are accepted (length 8..20 square, 8..14 cubic, exhaustive
 * up to 18; 8 is the shortest chain with three reachable scores above 0 on
 * the square lattice: all-H length 8 folds into a 2 x 4 block, 10 lattice
 * edges - 7 bonds = 3 contacts).
 */
static void test_params_defaults(void **state)
{
	(void)state;
	const char *const empty[] = { NULL, "{}" };
	for (int i = 0; i < 2; i++) {
		lat_search_params p;
		parse_ok(empty[i], &p);
		assert_int_equal(p.population, 30);
		assert_int_equal(p.generations, 50);
		assert_float_equal(p.mutation_rate, 0.1, 0);
		assert_int_equal(p.elites, 1);
		assert_int_equal(p.length, 16);
		assert_int_equal(p.lattice, LAT_SQUARE);
		assert_int_equal(p.algorithm, LAT_ALG_GA);
		assert_int_equal(p.fitness, LAT_FIT_DISTINCT);
		assert_int_equal(p.stars.strategy, STARS_PAPER);
		assert_int_equal(p.count, 1);
	}
	lat_search_params p;
	parse_ok("{\"algorithm\": \"map_elites\"}", &p);
	assert_int_equal(p.count, 0);
	parse_ok("{\"algorithm\": \"map_elites\", \"count\": 4}", &p);
	assert_int_equal(p.count, 4);
	parse_ok("{\"algorithm\": \"exhaustive\"}", &p);
	assert_int_equal(p.count, 1);

	static const char *const edges[] = {
		"{\"length\": 8}",
		"{\"length\": 20}",
		"{\"length\": 14, \"lattice\": \"cubic\"}",
		"{\"length\": 8, \"lattice\": \"cubic\"}",
		"{\"length\": 18, \"algorithm\": \"exhaustive\"}",
		"{\"population\": 2, \"elites\": 1}",
		"{\"population\": 1000, \"generations\": 1000}",
		"{\"mutation_rate\": 0}",
		"{\"mutation_rate\": 1}",
		"{\"elites\": 0}",
		"{\"bins\": 2}",
		"{\"bins\": 64, \"algorithm\": \"map_elites\"}",
		"{\"count\": 1000}",
		"{\"h_min\": 0.5, \"h_max\": 0.5}",
		"{\"h_min\": 0, \"h_max\": 1}",
		"{\"start_share\": 1}",
		"{\"stars\": \"geometric\", \"fitness\": \"star_ladder\"}",
	};
	for (int i = 0; i < ARRAY_LEN(edges); i++)
		parse_ok(edges[i], &p);
	parse_ok("{\"mutation_rate\": 1, \"lattice\": \"cubic\", \"length\": 10, \"fitness\": "
		 "\"rare_optimum\", \"algorithm\": \"exhaustive\"}",
		 &p);
	assert_float_equal(p.mutation_rate, 1, 0);
	assert_int_equal(p.lattice, LAT_CUBIC);
	assert_int_equal(p.length, 10);
	assert_int_equal(p.fitness, LAT_FIT_RARE_OPTIMUM);
	assert_int_equal(p.algorithm, LAT_ALG_EXHAUSTIVE);

	/* The params document spells out every key and reads back the same. */
	json_t *doc = lat_search_params_json(&p);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "lattice")), "cubic");
	assert_string_equal(json_string_value(json_object_get(doc, "algorithm")), "exhaustive");
	assert_string_equal(json_string_value(json_object_get(doc, "fitness")), "rare_optimum");
	assert_int_equal(json_integer_value(json_object_get(doc, "population")), 30);
	lat_search_params back;
	sf_err err = { 0 };
	assert_int_equal(lat_search_params_from_json(doc, &back, &err), 0);
	json_decref(doc);
	assert_memory_equal(&back, &p, sizeof p);
}

/* ---- stopping ---- */

typedef struct stopper {
	atomic_int flag;
	int at;          /* generation that raises the flag */
	int calls;       /* progress calls seen */
	int last;        /* last generation number reported */
	double wait_for; /* at generation `at`, sleep until this clock time instead (> 0) */
} stopper;

static void stop_at(void *arg, const ga_generation *gen)
{
	stopper *s = arg;
	s->calls++;
	assert_int_equal(gen->generation, s->last + 1);
	s->last = gen->generation;
	if (gen->generation != s->at)
		return;
	if (s->wait_for <= 0) {
		atomic_store(&s->flag, 1);
		return;
	}
	while (ga_clock_now() <= s->wait_for) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/*
 * The exhaustive search reports its 64 chunks as generations, in order of
 * sequence number (residue i is H when bit i is set; 16 numbers per chunk
 * at length 10). It is stopped at chunk 32, by which it has seen number 510,
 * PHHHHHHHHP: eight H in a row fold like the all-H 8-mer, scores 0..3,
 * three bands, so there is a level to return.
 */
static int stop_generation(lat_algorithm alg)
{
	return alg == LAT_ALG_EXHAUSTIVE ? 32 : 3;
}

/*
 * A progress callback that raises the cancel flag at generation 3 (32 for
 * the exhaustive search): status cancelled, exactly that many generations
 * run and reported, and still a level.
 */
static void test_cancel(void **state)
{
	(void)state;
	static const lat_algorithm algs[] = { LAT_ALG_GA, LAT_ALG_MAP_ELITES, LAT_ALG_EXHAUSTIVE };
	for (int a = 0; a < ARRAY_LEN(algs); a++) {
		int at = stop_generation(algs[a]);
		lat_search_params p = params_of(LAT_SQUARE, 10, algs[a], LAT_FIT_DISTINCT);
		stopper s = { .at = at };
		atomic_init(&s.flag, 0);
		lat_search_opts o = opts_of(4, TEST_THREADS, NULL);
		o.progress = stop_at;
		o.progress_arg = &s;
		o.cancel = &s.flag;
		lat_search_result res;
		search_ok(&p, &o, &res);
		assert_int_equal(res.status, GA_CANCELLED);
		assert_int_equal(res.generations_run, at);
		assert_int_equal(s.calls, at);
		assert_true(res.count >= 1);
		assert_int_equal(res.levels[0].seq.len, 10);
		check_level(&p, &res.levels[0]);
		/* The result JSON says so. */
		json_t *doc = lat_search_result_json(&res, &p, 4);
		assert_string_equal(json_string_value(json_object_get(doc, "status")), "cancelled");
		assert_int_equal(json_array_size(json_object_get(doc, "series")), at);
		json_decref(doc);
		if (algs[a] == LAT_ALG_EXHAUSTIVE) /* half the chunks: fewer than all 528 */
			assert_true(res.evaluations < 528);
		lat_search_result_free(&res);

		/* A run without the flag raised completes, reporting every generation. */
		stopper none = { .at = -1 };
		atomic_init(&none.flag, 0);
		o.progress_arg = &none;
		o.cancel = &none.flag;
		search_ok(&p, &o, &res);
		assert_int_equal(res.status, GA_COMPLETED);
		assert_int_equal(none.calls, res.generations_run);
		assert_int_equal(res.generations_run, algs[a] == LAT_ALG_EXHAUSTIVE ? 64 : 50);
		lat_search_result_free(&res);
	}
}

/*
 * Deadlines: one already past stops the GA and MAP-Elites after their first
 * generation (status timed_out, still a level). The exhaustive search's
 * first chunk holds no puzzle with three bands (above), so it is given a
 * deadline one second ahead and its progress callback, at chunk 32, waits
 * until that has passed: it stops there, timed out, with a level.
 */
static void test_deadline(void **state)
{
	(void)state;
	static const lat_algorithm algs[] = { LAT_ALG_GA, LAT_ALG_MAP_ELITES, LAT_ALG_EXHAUSTIVE };
	for (int a = 0; a < ARRAY_LEN(algs); a++) {
		lat_search_params p = params_of(LAT_SQUARE, 10, algs[a], LAT_FIT_DISTINCT);
		lat_search_opts o = opts_of(4, TEST_THREADS, NULL);
		stopper s = { .at = -1 };
		atomic_init(&s.flag, 0);
		double now = ga_clock_now();
		int want_run = 1;
		if (algs[a] == LAT_ALG_EXHAUSTIVE) {
			want_run = s.at = stop_generation(algs[a]);
			s.wait_for = o.deadline = now + 1;
			o.progress = stop_at;
			o.progress_arg = &s;
		} else {
			o.deadline = now > 2 ? now - 1 : 1e-9;
		}
		lat_search_result res;
		search_ok(&p, &o, &res);
		assert_int_equal(res.status, GA_TIMED_OUT);
		assert_int_equal(res.generations_run, want_run);
		assert_true(res.count >= 1);
		check_level(&p, &res.levels[0]);
		if (algs[a] == LAT_ALG_EXHAUSTIVE)
			assert_true(res.evaluations < 528);
		lat_search_result_free(&res);
	}

	/*
	 * Stopped before any puzzle with three bands was seen (the exhaustive
	 * search's first chunk at length 10 is numbers 0..15: at most four H,
	 * all among residues 0..3, and no chain with four H in a row folds to
	 * three contacts): not an error, a timed-out result with no level.
	 */
	lat_search_params p = params_of(LAT_SQUARE, 10, LAT_ALG_EXHAUSTIVE, LAT_FIT_DISTINCT);
	lat_search_opts o = opts_of(4, TEST_THREADS, NULL);
	o.deadline = 1e-9;
	lat_search_result res;
	search_ok(&p, &o, &res);
	assert_int_equal(res.status, GA_TIMED_OUT);
	assert_int_equal(res.generations_run, 1);
	assert_int_equal(res.count, 0);
	lat_search_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exhaustive_brute_square10),
		cmocka_unit_test(test_exhaustive_brute_cubic8),
		cmocka_unit_test(test_exhaustive_brute_square8_many),
		cmocka_unit_test(test_oracle_distinct16),
		cmocka_unit_test(test_fitness_reference),
		cmocka_unit_test(test_fitness_window_and_bands),
		cmocka_unit_test(test_fitness_gap),
		cmocka_unit_test(test_determinism_threads),
		cmocka_unit_test(test_determinism_warm_db),
		cmocka_unit_test(test_determinism_seed),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_level_ids),
		cmocka_unit_test(test_ga),
		cmocka_unit_test(test_map_elites),
		cmocka_unit_test(test_params_invalid),
		cmocka_unit_test(test_params_defaults),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, group_teardown);
}
