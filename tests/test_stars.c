/*
 * test_stars.c - star threshold strategies (core/stars.h).
 *
 * Every expected threshold below is worked out by hand in a comment from the
 * definitions in stars.h and the paper's worked examples; the histograms are
 * copied from the published oracle numbers (symmetry-reduced square-lattice
 * histograms, all-walk histograms), never from this project's own output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "rng.h"
#include "stars.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const int SENTINEL[3] = { -111, -222, -333 };

/* ---- real histograms (oracle numbers) ---- */

/* HPHPPHHPHPPHPHHPPHPH, L = 20, square, symmetry-reduced. */
static const uint64_t H_HPHP20[] = { 18049040, 15828467, 6236723, 1471987, 258992,
				     38540,    5182,     597,     48,      2 };
/* HPHPPHHPHPPHPHHP, L = 16, square, symmetry-reduced. */
static const uint64_t H_HPHP16[] = { 426271, 284100, 78625, 11592, 1378, 106, 3 };
/* All-H, L = 16, square, symmetry-reduced. */
static const uint64_t H_ALLH16[] = { 116579, 194896, 191814, 138446, 84607,
				     45564,  18733,  8662,   2705,   69 };
/* All-H, L = 12, square, all walks. */
static const uint64_t H_ALLH12[] = { 29940, 36976, 27600, 15552, 6424, 3552, 248 };
/* All-H, L = 8, cubic, all walks: no conformation has exactly 4 contacts. */
static const uint64_t H_CUBIC8[] = { 38142, 26688, 11928, 4488, 0, 144 };

static void expect_thresholds(const uint64_t *counts, int n, const stars_config *cfg, int a, int b,
			      int c)
{
	int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
	sf_err err = { 0 };
	int rc = stars_thresholds(counts, n, cfg, t, &err);
	if (rc != 0)
		fail_msg("stars_thresholds failed (%d): %s", rc, err.msg);
	if (t[0] != a || t[1] != b || t[2] != c)
		fail_msg("strategy %s: thresholds [%d,%d,%d], expected [%d,%d,%d]",
			 stars_strategy_name(cfg->strategy), t[0], t[1], t[2], a, b, c);
}

static void expect_default(const uint64_t *counts, int n, stars_strategy s, int a, int b, int c)
{
	stars_config cfg;
	stars_config_default(&cfg, s);
	expect_thresholds(counts, n, &cfg, a, b, c);
}

/* ---- the paper's worked examples ---- */

/*
 * Paper, line 56: "because the maximum achievable score found is 9, the star
 * threshold is divided by 0-3 as zero stars, 4-7 contacts as one star, 8
 * contacts as two stars, and 9 contacts as three stars" -> [4, 8, 9].
 * The L = 20 benchmark HPHPPHHPHPPHPHHPPHPH reaches every score 0..9.
 */
static void test_paper_max9_real(void **state)
{
	(void)state;
	expect_default(H_HPHP20, ARRAY_LEN(H_HPHP20), STARS_PAPER, 4, 8, 9);
	/* The all-H L = 16 histogram is also contiguous 0..9. */
	expect_default(H_ALLH16, ARRAY_LEN(H_ALLH16), STARS_PAPER, 4, 8, 9);
}

/*
 * Paper: "a star is obtained with each additional HH-contact, as there are
 * only a maximum of three contacts possible" -> [1, 2, 3]. The paper's
 * low-fitness histogram has "a similar number of configurations" per score;
 * no such histogram is published with numbers, so these are made up in that
 * shape (any counts give the same answer).
 */
static void test_paper_max3(void **state)
{
	(void)state;
	static const uint64_t similar[] = { 310, 290, 270, 250 };
	static const uint64_t skewed[] = { 100000, 5000, 40, 1 };
	expect_default(similar, 4, STARS_PAPER, 1, 2, 3);
	expect_default(skewed, 4, STARS_PAPER, 1, 2, 3);
}

/*
 * The paper rule on other real histograms. One star: first reachable score
 * >= lowest + floor((max - lowest) / 2) (max 9 -> 4 as in the paper); two:
 * the reachable score right below the max; three: the max.
 *  - HPHPPHHPHPPHPHHP: max 6, floor(6/2) = 3 -> [3, 5, 6]
 *  - all-H L = 12 walks: max 6 -> [3, 5, 6]
 *  - cubic all-H L = 8: reachable {0,1,2,3,5}; floor(5/2) = 2 -> one at 2;
 *    two at the reachable score below 5, which is 3 (4 is a gap) -> [2, 3, 5]
 *  - scores 2..10 (lowest 2): 2 + floor(8/2) = 6 -> [6, 9, 10]
 *  - gaps {0,1,2,7,9}: mid 0 + 4 = 4, first reachable >= 4 is 7 -> [7, ...]
 *    but 7 is the two-star score (below 9), so one is pulled down to 2:
 *    [2, 7, 9]
 */
static void test_paper_other_real(void **state)
{
	(void)state;
	expect_default(H_HPHP16, ARRAY_LEN(H_HPHP16), STARS_PAPER, 3, 5, 6);
	expect_default(H_ALLH12, ARRAY_LEN(H_ALLH12), STARS_PAPER, 3, 5, 6);
	expect_default(H_CUBIC8, ARRAY_LEN(H_CUBIC8), STARS_PAPER, 2, 3, 5);
	static const uint64_t from2[] = { 0, 0, 50, 40, 30, 20, 10, 8, 6, 4, 2 };
	expect_default(from2, ARRAY_LEN(from2), STARS_PAPER, 6, 9, 10);
	static const uint64_t gaps[] = { 9, 8, 7, 0, 0, 0, 0, 3, 0, 1 };
	expect_default(gaps, ARRAY_LEN(gaps), STARS_PAPER, 2, 7, 9);
	/* Trailing zero counts do not move the three-star score. */
	static const uint64_t trailing[] = { 5, 4, 3, 2, 1, 1, 1, 0, 0, 0 };
	/* max 6, mid 3 -> [3, 5, 6] */
	expect_default(trailing, ARRAY_LEN(trailing), STARS_PAPER, 3, 5, 6);
}

/* ---- percentile ---- */

/*
 * Default fractions: one star at the first score whose tail share (share of
 * solutions scoring at least that much) is <= 0.5, two at the first <= 0.1;
 * with four or more reachable scores above the lowest, one star is never
 * the first of them (a single contact).
 *
 * HPHPPHHPHPPHPHHP, total 802075:
 *   >=1 375804 (0.4685)  >=2 91704 (0.1143)  >=3 13079 (0.0163) ... >=6 3
 *   one: 1 has 0.4685 <= 0.5, but six scores above 0 are reachable, so a
 *   single contact earns nothing: 2; two: 3 (0.1143 > 0.1, 0.0163 <= 0.1)
 *   -> [2, 3, 6] (the rule without that floor gave [1, 3, 6])
 * All-H L = 16, total 802075:
 *   >=1 0.8547  >=2 0.6117  >=3 0.3725  >=4 0.1999  >=5 0.0944  >=6 0.0376
 *   one: 3; two: 5 -> [3, 5, 9]
 * All-H L = 12 walks, total 120292:
 *   >=1 0.7511  >=2 0.4437  >=3 0.2143  >=4 0.0850  >=5 0.0316  >=6 0.0021
 *   one: 2; two: 4 -> [2, 4, 6]
 * Cubic all-H L = 8 walks, total 81390:
 *   >=1 0.5314  >=2 0.2035  >=3 0.0569  >=5 0.0018
 *   one: 2; two: 3 -> [2, 3, 5]
 * HPHPPHHPHPPHPHHPPHPH, total 41889578:
 *   >=1 0.5691  >=2 0.1913  >=3 0.0424  ...
 *   one: 2; two: 3 -> [2, 3, 9]
 */
static void test_percentile_default_real(void **state)
{
	(void)state;
	stars_config cfg;
	stars_config_default(&cfg, STARS_PERCENTILE);
	assert_int_equal(cfg.strategy, STARS_PERCENTILE);
	assert_true(cfg.one_fraction == 0.5);
	assert_true(cfg.two_fraction == 0.1);
	expect_thresholds(H_HPHP16, ARRAY_LEN(H_HPHP16), &cfg, 2, 3, 6);
	expect_thresholds(H_ALLH16, ARRAY_LEN(H_ALLH16), &cfg, 3, 5, 9);
	expect_thresholds(H_ALLH12, ARRAY_LEN(H_ALLH12), &cfg, 2, 4, 6);
	expect_thresholds(H_CUBIC8, ARRAY_LEN(H_CUBIC8), &cfg, 2, 3, 5);
	expect_thresholds(H_HPHP20, ARRAY_LEN(H_HPHP20), &cfg, 2, 3, 9);
}

/*
 * Custom fractions.
 * All-H L = 16 with (0.25, 0.01): tails >=3 0.3725, >=4 0.1999 -> one 4;
 *   >=7 0.0143, >=8 0.0035 -> two 8 -> [4, 8, 9]
 * HPHPPHHPHPPHPHHPPHPH with (0.05, 0.001): >=2 0.1913, >=3 0.0424 -> one 3;
 *   >=5 0.00106 (> 0.001), >=6 0.000139 -> two 6 -> [3, 6, 9]
 * HPHPPHHPHPPHPHHP with (0.9, 0.3): >=1 0.4685 <= 0.9 -> one 1, a single
 *   contact, raised to 2; 0.4685 > 0.3, >=2 0.1143 <= 0.3 -> two 2, which
 *   must lie above one: 3 -> [2, 3, 6] (without the floor: [1, 2, 6])
 * All-H L = 12 with (0.01, 0.001): one: >=6 0.0021 is the first <= 0.01 -> 6;
 *   two: nothing is <= 0.001 -> the max. Both collide with three stars, so
 *   two is pulled down to 5 and one to 4 -> [4, 5, 6]
 */
static void test_percentile_custom(void **state)
{
	(void)state;
	stars_config cfg;
	stars_config_default(&cfg, STARS_PERCENTILE);
	cfg.one_fraction = 0.25;
	cfg.two_fraction = 0.01;
	expect_thresholds(H_ALLH16, ARRAY_LEN(H_ALLH16), &cfg, 4, 8, 9);
	cfg.one_fraction = 0.05;
	cfg.two_fraction = 0.001;
	expect_thresholds(H_HPHP20, ARRAY_LEN(H_HPHP20), &cfg, 3, 6, 9);
	cfg.one_fraction = 0.9;
	cfg.two_fraction = 0.3;
	expect_thresholds(H_HPHP16, ARRAY_LEN(H_HPHP16), &cfg, 2, 3, 6);
	cfg.one_fraction = 0.01;
	cfg.two_fraction = 0.001;
	expect_thresholds(H_ALLH12, ARRAY_LEN(H_ALLH12), &cfg, 4, 5, 6);

	/*
	 * "At most" includes equality. {0: 12, 1: 8, 2: 12, 3: 4, 4: 2, 5: 1,
	 * 6: 1}, total 40: >=1 28/40 = 0.7, >=2 20/40 = 0.5 exactly -> one 2;
	 * >=3 8/40 = 0.2, >=4 4/40 = 0.1 exactly -> two 4 -> [2, 4, 6] (strict
	 * "<" would give [3, 5, 6]). The cut-offs fall above the first score,
	 * so the single-contact floor plays no part.
	 */
	static const uint64_t exact[] = { 12, 8, 12, 4, 2, 1, 1 };
	stars_config_default(&cfg, STARS_PERCENTILE);
	expect_thresholds(exact, ARRAY_LEN(exact), &cfg, 2, 4, 6);
}

/* ---- geometric ---- */

/*
 * One star at the first score with tail share <= p^(1/3), two at the first
 * <= p^(2/3), where p is the share of the best score; then made strictly
 * increasing by pulling down.
 *
 * HPHPPHHPHPPHPHHP: p = 3/802075 = 3.740e-6, p^(1/3) = 0.01552,
 *   p^(2/3) = 2.410e-4. Tails >=3 0.01631 (>), >=4 0.001854 (<=) -> one 4;
 *   >=4 0.001854 (>), >=5 1.359e-4 (<=) -> two 5 -> [4, 5, 6]
 * All-H L = 16: p = 69/802075 = 8.603e-5, p^(1/3) = 0.04414, p^(2/3) = 0.001949.
 *   >=5 0.0944 (>), >=6 0.0376 (<=) -> one 6; >=8 0.00346 (>), >=9 8.6e-5
 *   (<=) -> two 9 = max, pulled down to 8 -> [6, 8, 9]
 * All-H L = 12 walks: p = 248/120292 = 0.002062, p^(1/3) = 0.1273,
 *   p^(2/3) = 0.01620. >=3 0.2143 (>), >=4 0.0850 (<=) -> one 4;
 *   >=5 0.0316 (>), >=6 0.0021 -> two 6 = max, pulled to 5 -> [4, 5, 6]
 * Cubic all-H L = 8 walks: p = 144/81390 = 0.001769, p^(1/3) = 0.1209,
 *   p^(2/3) = 0.01463. >=2 0.2035 (>), >=3 0.0569 (<=) -> one 3;
 *   >=3 0.0569 (>), >=5 0.0018 -> two 5 = max, pulled down to the reachable
 *   score below 5, which is 3 (4 is a gap); then one (3) collides and is
 *   pulled to 2 -> [2, 3, 5]
 * HPHPPHHPHPPHPHHPPHPH: p = 2/41889578 = 4.774e-8, p^(1/3) = 0.003628,
 *   p^(2/3) = 1.316e-5. >=4 0.00724 (>), >=5 0.00106 (<=) -> one 5;
 *   >=7 1.545e-5 (>), >=8 1.19e-6 (<=) -> two 8 -> [5, 8, 9]
 */
static void test_geometric_real(void **state)
{
	(void)state;
	expect_default(H_HPHP16, ARRAY_LEN(H_HPHP16), STARS_GEOMETRIC, 4, 5, 6);
	expect_default(H_ALLH16, ARRAY_LEN(H_ALLH16), STARS_GEOMETRIC, 6, 8, 9);
	expect_default(H_ALLH12, ARRAY_LEN(H_ALLH12), STARS_GEOMETRIC, 4, 5, 6);
	expect_default(H_CUBIC8, ARRAY_LEN(H_CUBIC8), STARS_GEOMETRIC, 2, 3, 5);
	expect_default(H_HPHP20, ARRAY_LEN(H_HPHP20), STARS_GEOMETRIC, 5, 8, 9);
}

/* Fractions belong to the percentile strategy only: the others ignore them. */
static void test_fractions_ignored_elsewhere(void **state)
{
	(void)state;
	stars_config cfg = { .strategy = STARS_PAPER, .one_fraction = -3, .two_fraction = 7 };
	expect_thresholds(H_HPHP20, ARRAY_LEN(H_HPHP20), &cfg, 4, 8, 9);
	cfg.strategy = STARS_GEOMETRIC;
	expect_thresholds(H_HPHP20, ARRAY_LEN(H_HPHP20), &cfg, 5, 8, 9);
}

/* ---- properties over random distributions ---- */

#define PROP_MAX 4096

typedef struct view {
	int lowest, max; /* lowest and highest reachable score */
	int n;           /* reachable scores above the lowest */
	int s[PROP_MAX];
	double tail[PROP_MAX]; /* share of solutions scoring >= s[i] */
} view;

static void make_view(const uint64_t *c, int ns, view *v)
{
	uint64_t total = 0;
	v->lowest = v->max = -1;
	v->n = 0;
	for (int k = 0; k < ns; k++) {
		total += c[k];
		if (c[k]) {
			if (v->lowest < 0)
				v->lowest = k;
			v->max = k;
		}
	}
	uint64_t above = total;
	for (int k = 0; k < ns; k++) {
		if (!c[k])
			continue;
		if (k != v->lowest) {
			v->s[v->n] = k;
			v->tail[v->n] = (double)above / (double)total;
			v->n++;
		}
		above -= c[k];
	}
}

static int index_of(const view *v, int score)
{
	for (int i = 0; i < v->n; i++)
		if (v->s[i] == score)
			return i;
	return -1;
}

/* Random distribution of 1..PROP_MAX scores with gaps and several shapes. */
static int random_dist(rng *r, uint64_t *c)
{
	int size_class = (int)rng_below(r, 10);
	int ns = size_class < 6   ? 1 + (int)rng_below(r, 12)
		 : size_class < 9 ? 1 + (int)rng_below(r, 64)
				  : 1 + (int)rng_below(r, PROP_MAX);
	int shape = (int)rng_below(r, 6);
	double reach = 0.2 + 0.8 * rng_unit(r);
	int lead = rng_below(r, 3) == 0 ? (int)rng_below(r, (uint64_t)ns) : 0;
	int trail = rng_below(r, 4) == 0 ? (int)rng_below(r, (uint64_t)(ns - lead)) : 0;
	uint64_t big = ns <= 64 ? 1000000000000ULL : 1000000000ULL;
	memset(c, 0, sizeof(uint64_t) * (size_t)ns);
	for (int k = lead; k < ns - trail; k++) {
		if (rng_unit(r) >= reach)
			continue;
		switch (shape) {
		case 0: /* small, flat */
			c[k] = 1 + rng_below(r, 10);
			break;
		case 1: /* anything up to `big` */
			c[k] = 1 + rng_below(r, big);
			break;
		case 2: /* decaying like a real histogram */
			c[k] = 1 + (uint64_t)((double)big * pow(0.3 + 0.4 * rng_unit(r), k - lead));
			break;
		case 3: /* the lowest reachable score holds nearly everything */
			c[k] = 1 + rng_below(r, 3);
			break;
		case 4: /* the best score holds nearly everything */
			c[k] = 1 + rng_below(r, 5);
			break;
		default: /* 0/1 spikes */
			c[k] = rng_below(r, 2) ? 1 : big;
			break;
		}
	}
	int first = -1, last = -1;
	for (int k = 0; k < ns; k++)
		if (c[k]) {
			if (first < 0)
				first = k;
			last = k;
		}
	if (shape == 3 && first >= 0)
		c[first] = big;
	if (shape == 4 && last >= 0)
		c[last] = big;
	return ns;
}

/* The strategy's two cut-offs (tail shares), or -1 for the paper strategy. */
static void cutoffs(const stars_config *cfg, const view *v, double *f1, double *f2)
{
	*f1 = *f2 = -1;
	if (cfg->strategy == STARS_PERCENTILE) {
		*f1 = cfg->one_fraction;
		*f2 = cfg->two_fraction;
	} else if (cfg->strategy == STARS_GEOMETRIC) {
		double p = v->tail[v->n - 1];
		*f1 = pow(p, 1.0 / 3.0);
		*f2 = pow(p, 2.0 / 3.0);
	}
}

/* Checks the result for one distribution. */
static void check_one(const uint64_t *c, int ns, const stars_config *cfg, view *v, int iter)
{
	make_view(c, ns, v);
	double f1 = -1, f2 = -1;
	/* A share this close to a cut-off could go either way in floating point. */
	const double tol = 1e-9;
	if (v->n >= 3)
		cutoffs(cfg, v, &f1, &f2);

	int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
	sf_err err = { 0 };
	int rc = stars_thresholds(c, ns, cfg, t, &err);
	const char *name = stars_strategy_name(cfg->strategy);

	if (v->lowest < 0) {
		if (rc != SF_EINVAL)
			fail_msg("iter %d (%s): all-zero distribution, rc %d, expected SF_EINVAL",
				 iter, name, rc);
		if (memcmp(t, SENTINEL, sizeof t) != 0)
			fail_msg("iter %d: thresholds written on SF_EINVAL", iter);
		return;
	}
	if (v->n < 3) {
		if (rc != SF_ERANGE)
			fail_msg("iter %d (%s): %d reachable above lowest, rc %d, expected "
				 "SF_ERANGE",
				 iter, name, v->n, rc);
		if (memcmp(t, SENTINEL, sizeof t) != 0)
			fail_msg("iter %d: thresholds written on SF_ERANGE", iter);
		if (!has_number(err.msg, v->n))
			fail_msg("iter %d: message does not say how many (%d): %s", iter, v->n,
				 err.msg);
		return;
	}
	if (rc != 0)
		fail_msg("iter %d (%s): rc %d: %s", iter, name, rc, err.msg);

	/* General: increasing, reachable, above the lowest, three stars = max. */
	if (!(t[0] > v->lowest && t[0] < t[1] && t[1] < t[2]))
		fail_msg("iter %d (%s): [%d,%d,%d] not increasing above lowest %d", iter, name,
			 t[0], t[1], t[2], v->lowest);
	for (int k = 0; k < 3; k++)
		if (t[k] >= ns || c[t[k]] == 0)
			fail_msg("iter %d (%s): threshold %d is not reachable", iter, name, t[k]);
	if (t[2] != v->max)
		fail_msg("iter %d (%s): three stars at %d, max is %d", iter, name, t[2], v->max);

	int i1 = index_of(v, t[0]), i2 = index_of(v, t[1]);
	/* One star is never the first step above the lowest when four or more
	 * scores are reachable above it; it is the lowest candidate allowed. */
	int first = v->n >= 4 ? 1 : 0;
	if (i1 < first)
		fail_msg("iter %d (%s): one star at %d, the first score above the lowest %d, "
			 "with %d reachable above it",
			 iter, name, t[0], v->lowest, v->n);
	/* Forced: with 3 or 4 candidates every strategy answers the top three. */
	if (stars_forced(c, ns) != (v->n < STARS_FREE_SCORES))
		fail_msg("iter %d: stars_forced %d with %d reachable above the lowest", iter,
			 stars_forced(c, ns), v->n);
	if (v->n < STARS_FREE_SCORES && (i1 != v->n - 3 || i2 != v->n - 2))
		fail_msg("iter %d (%s): forced distribution (%d above the lowest) gave "
			 "[%d,%d,%d]",
			 iter, name, v->n, t[0], t[1], t[2]);
	if (cfg->strategy == STARS_PAPER) {
		/* Two stars: the reachable score right below the max. */
		if (i2 != v->n - 2)
			fail_msg("iter %d (paper): two stars at %d, expected %d", iter, t[1],
				 v->s[v->n - 2]);
		/* One: first reachable >= the middle, unless that is taken by two. */
		int mid = v->lowest + (v->max - v->lowest) / 2, want = 0;
		while (v->s[want] < mid)
			want++;
		if (want < first)
			want = first;
		if (want >= i2)
			want = i2 - 1;
		if (i1 != want)
			fail_msg("iter %d (paper): one star at %d, expected %d", iter, t[0],
				 v->s[want]);
		return;
	}

	/*
	 * Percentile and geometric, from the definitions: each star is reached
	 * by at most its share of the solutions unless it had to be pulled down
	 * right below the next star, and it is the most generous such score: no
	 * reachable score between the star below (or the first step, which is
	 * no star when four or more are reachable) and it already qualifies.
	 */
	if (!(v->tail[i1] <= f1 * (1 + tol) || i1 == i2 - 1))
		fail_msg("iter %d (%s): one star at %d reached by %g > %g", iter, name, t[0],
			 v->tail[i1], f1);
	if (!(v->tail[i2] <= f2 * (1 + tol) || i2 == v->n - 2))
		fail_msg("iter %d (%s): two stars at %d reached by %g > %g", iter, name, t[1],
			 v->tail[i2], f2);
	for (int i = first; i < i1; i++)
		if (v->tail[i] <= f1 * (1 - tol))
			fail_msg("iter %d (%s): one star at %d but %d already has share %g <= %g",
				 iter, name, t[0], v->s[i], v->tail[i], f1);
	for (int i = i1 + 1; i < i2; i++)
		if (v->tail[i] <= f2 * (1 - tol))
			fail_msg("iter %d (%s): two stars at %d but %d already has share %g <= %g",
				 iter, name, t[1], v->s[i], v->tail[i], f2);
}

static void test_properties_random(void **state)
{
	(void)state;
	static uint64_t c[PROP_MAX];
	static view v;
	rng r;
	int checked = 0, ranged = 0, gapped = 0, floored = 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		rng_seed(&r, 0x5eed0000 + seed);
		for (int iter = 0; iter < 5000; iter++) {
			int ns = random_dist(&r, c);
			stars_config cfg;
			stars_strategy strat = (stars_strategy)rng_below(&r, 3);
			stars_config_default(&cfg, strat);
			if (strat == STARS_PERCENTILE && rng_below(&r, 2)) {
				cfg.one_fraction = 0.02 + 0.96 * rng_unit(&r);
				cfg.two_fraction = cfg.one_fraction * (0.01 + 0.98 * rng_unit(&r));
			}
			check_one(c, ns, &cfg, &v, iter);
			checked++;
			ranged += v.n < 3;
			/* Cases where the strategy's own cut-off admits the first
			 * step, so that only the floor keeps one star off it. */
			double f1, f2;
			cutoffs(&cfg, &v, &f1, &f2);
			floored += v.n >= 4 && v.lowest >= 0 && v.tail[0] <= f1;
			for (int k = v.lowest; k >= 0 && k < v.max; k++)
				if (!c[k]) {
					gapped += v.n >= 3;
					break;
				}
		}
	}
	/* The generator must really cover each kind of case. */
	assert_true(checked > 15000);
	assert_true(ranged > 200);
	assert_true(gapped > 2000);
	assert_true(floored > 200);
}

/* The cubic gap example and a few hand-made gap cases. */
static void test_properties_gaps(void **state)
{
	(void)state;
	static const uint64_t cases[][12] = {
		{ 38142, 26688, 11928, 4488, 0, 144 },
		{ 5, 0, 0, 4, 0, 0, 3, 0, 0, 2 },
		{ 0, 0, 0, 1000, 0, 500, 0, 0, 0, 0, 20, 1 },
		{ 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 },
	};
	static view v;
	for (int i = 0; i < ARRAY_LEN(cases); i++)
		for (int s = 0; s < 3; s++) {
			stars_config cfg;
			stars_config_default(&cfg, (stars_strategy)s);
			check_one(cases[i], 12, &cfg, &v, i);
			assert_true(v.n >= 3);
		}
}

/*
 * Regression (an out-of-bounds read once): {0: 100, 1: 1, 2: 1, 3: 1} has exactly
 * three reachable scores above the lowest, so every strategy can only answer
 * [1, 2, 3]. Percentile: tail(1) = 3/103 = 0.029 <= 0.1, so both candidates
 * are score 1. Geometric: p = 1/103, p^(2/3) = 0.0455 >= 0.029, same.
 * {0: 1000000, 1: 1, 2: 1, 3: 1}: p^(2/3) = 1e-4 >= tail(1) = 3e-6, same.
 */
static void test_low_candidate_pick_regression(void **state)
{
	(void)state;
	static const uint64_t low[] = { 100, 1, 1, 1 };
	static const uint64_t lower[] = { 1000000, 1, 1, 1 };
	for (int s = 0; s < 3; s++) {
		expect_default(low, 4, (stars_strategy)s, 1, 2, 3);
		expect_default(lower, 4, (stars_strategy)s, 1, 2, 3);
	}
	/* {0: 1000, 2: 1, 5: 1, 6: 1, 9: 1}, default percentile: every score
	 * above 0 has share <= 4/1004 <= 0.1, so both candidates are the first
	 * score above 0, 2. Four scores are reachable above 0, so one star
	 * skips that first step: one at 5, two at the next reachable score 6,
	 * three at 9 (without the floor: [2, 5, 9]). The thresholds are then
	 * forced: the top three of four. */
	static const uint64_t gap[] = { 1000, 0, 1, 0, 0, 1, 1, 0, 0, 1 };
	stars_config cfg;
	stars_config_default(&cfg, STARS_PERCENTILE);
	expect_thresholds(gap, ARRAY_LEN(gap), &cfg, 5, 6, 9);
}

/* ---- the first step is no star ---- */

/*
 * With four or more reachable scores above the lowest, no strategy gives one
 * star for the first of them (on the HP lattice a single contact). Each
 * case is one whose strategy alone would pick that first step; the rule
 * without the floor gave the `was` column.
 *  - percentile on HPHPPHHPHPPHPHHP: >=1 0.4685 <= 0.5 -> 1, raised to 2;
 *    two 3 (0.0163) -> [2, 3, 6], was [1, 3, 6].
 *  - geometric on {0: 1000000, 1: 1000, 2: 100, 3: 10, 4: 5, 5: 1}, total
 *    1001116: p = 9.989e-7, p^(1/3) = 0.009996, p^(2/3) = 9.98e-5;
 *    >=1 1116/1001116 = 0.001115 <= 0.009996 -> 1, raised to 2; >=2
 *    1.159e-4 > 9.98e-5, >=3 1.6e-5 -> two 3 -> [2, 3, 5], was [1, 3, 5].
 *  - paper on {0: 10, 5: 5, 6: 4, 7: 3, 8: 2, 9: 1}: mid 0 + 9/2 = 4, the
 *    first reachable >= 4 is 5, the first step (0 to 5 is one step when
 *    1..4 are unreachable) -> raised to 6; two 8 -> [6, 8, 9], was
 *    [5, 8, 9].
 *  - with exactly three scores above the lowest all three are needed: the
 *    paper's max-3 example stays [1, 2, 3] under every strategy.
 */
static void test_first_step_no_star(void **state)
{
	(void)state;
	stars_config cfg;
	stars_config_default(&cfg, STARS_PERCENTILE);
	expect_thresholds(H_HPHP16, ARRAY_LEN(H_HPHP16), &cfg, 2, 3, 6);
	static const uint64_t sparse[] = { 1000000, 1000, 100, 10, 5, 1 };
	expect_default(sparse, ARRAY_LEN(sparse), STARS_GEOMETRIC, 2, 3, 5);
	static const uint64_t jump[] = { 10, 0, 0, 0, 0, 5, 4, 3, 2, 1 };
	expect_default(jump, ARRAY_LEN(jump), STARS_PAPER, 6, 8, 9);

	/* Every real histogram above, every strategy: one star above the first
	 * step (they all reach four or more scores above 0). */
	static const struct {
		const uint64_t *h;
		int n;
	} real[] = {
		{ H_HPHP20, ARRAY_LEN(H_HPHP20) }, { H_HPHP16, ARRAY_LEN(H_HPHP16) },
		{ H_ALLH16, ARRAY_LEN(H_ALLH16) }, { H_ALLH12, ARRAY_LEN(H_ALLH12) },
		{ H_CUBIC8, ARRAY_LEN(H_CUBIC8) }, { sparse, ARRAY_LEN(sparse) },
		{ jump, ARRAY_LEN(jump) },
	};
	for (int i = 0; i < ARRAY_LEN(real); i++) {
		int lowest = 0, first = -1;
		while (!real[i].h[lowest])
			lowest++;
		for (int s = lowest + 1; first < 0; s++)
			if (real[i].h[s])
				first = s;
		for (int st = 0; st < 3; st++) {
			stars_config_default(&cfg, (stars_strategy)st);
			int t[3];
			assert_int_equal(stars_thresholds(real[i].h, real[i].n, &cfg, t, NULL), 0);
			if (t[0] <= first)
				fail_msg("histogram %d, %s: one star at %d, the first step", i,
					 stars_strategy_name(cfg.strategy), t[0]);
		}
	}
	/* Percentile at any one-star fraction, even one above every tail share. */
	static const double fractions[] = { 0.99, 0.9, 0.7, 0.5, 0.47 };
	for (int i = 0; i < ARRAY_LEN(fractions); i++) {
		stars_config_default(&cfg, STARS_PERCENTILE);
		cfg.one_fraction = fractions[i];
		cfg.two_fraction = fractions[i] / 10;
		int t[3];
		assert_int_equal(stars_thresholds(H_HPHP16, ARRAY_LEN(H_HPHP16), &cfg, t, NULL), 0);
		assert_true(t[0] >= 2);
	}
	/* Three scores above the lowest: [1, 2, 3] stays. */
	static const uint64_t max3[] = { 100000, 5000, 40, 1 };
	for (int st = 0; st < 3; st++)
		expect_default(max3, ARRAY_LEN(max3), (stars_strategy)st, 1, 2, 3);
}

/*
 * stars_forced(): three bands whose thresholds no strategy can choose, 3 or
 * 4 reachable scores above the lowest. The cubic all-H 8 histogram reaches
 * 5 but only four scores above 0 (4 is a gap): forced, [2, 3, 5] under
 * every strategy. Forced distributions give the same thresholds under every
 * strategy and any percentile fractions.
 */
static void test_forced(void **state)
{
	(void)state;
	static const uint64_t hpph[] = { 4, 1 };
	static const uint64_t two[] = { 10, 5, 1 };
	static const uint64_t max3[] = { 310, 290, 270, 250 };
	static const uint64_t max4[] = { 10, 6, 2, 1, 1 };
	static const uint64_t max5[] = { 10, 6, 2, 1, 1, 1 };
	static const uint64_t from2[] = { 0, 0, 50, 40, 30, 20 }; /* 3 above the lowest, 2 */
	static const struct {
		const uint64_t *h;
		int n, forced;
		int t[3]; /* when forced */
	} cases[] = {
		{ hpph, ARRAY_LEN(hpph), 0, { 0 } },
		{ two, ARRAY_LEN(two), 0, { 0 } },
		{ max3, ARRAY_LEN(max3), 1, { 1, 2, 3 } },
		{ max4, ARRAY_LEN(max4), 1, { 2, 3, 4 } },
		{ max5, ARRAY_LEN(max5), 0, { 0 } },
		{ from2, ARRAY_LEN(from2), 1, { 3, 4, 5 } },
		{ H_CUBIC8, ARRAY_LEN(H_CUBIC8), 1, { 2, 3, 5 } },
		{ H_HPHP16, ARRAY_LEN(H_HPHP16), 0, { 0 } },
		{ H_HPHP20, ARRAY_LEN(H_HPHP20), 0, { 0 } },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		if (stars_forced(cases[i].h, cases[i].n) != cases[i].forced)
			fail_msg("case %d: stars_forced %d, expected %d", i,
				 stars_forced(cases[i].h, cases[i].n), cases[i].forced);
		if (!cases[i].forced)
			continue;
		for (int st = 0; st < 3; st++)
			expect_default(cases[i].h, cases[i].n, (stars_strategy)st, cases[i].t[0],
				       cases[i].t[1], cases[i].t[2]);
		stars_config cfg;
		stars_config_default(&cfg, STARS_PERCENTILE);
		cfg.one_fraction = 0.99;
		cfg.two_fraction = 0.001;
		expect_thresholds(cases[i].h, cases[i].n, &cfg, cases[i].t[0], cases[i].t[1],
				  cases[i].t[2]);
	}
	/* A real choice: max 5 contiguous gives different thresholds by strategy
	 * ({0: 10, 1: 6, 2: 2, 3..5: 1}, total 21: paper one at 0 + 5/2 = 2,
	 * two 4 -> [2, 4, 5]; percentile >=1 11/21 > 0.5, >=2 5/21 <= 0.5 -> 2,
	 * >=3 3/21 > 0.1, >=4 2/21 <= 0.1 -> 4 -> [2, 4, 5]; geometric p = 1/21,
	 * p^(1/3) = 0.3625: >=2 0.238 -> 2; p^(2/3) = 0.1314: >=4 0.0952 -> 4).
	 * Not forced, yet all three agree here: forced is about room, not
	 * agreement. */
	for (int st = 0; st < 3; st++)
		expect_default(max5, ARRAY_LEN(max5), (stars_strategy)st, 2, 4, 5);
	/* Nothing to say about empty, absent or oversized distributions. */
	static const uint64_t zeros[4] = { 0 };
	assert_int_equal(stars_forced(NULL, 4), 0);
	assert_int_equal(stars_forced(max3, 0), 0);
	assert_int_equal(stars_forced(zeros, 4), 0);
	static uint64_t wide[STARS_MAX_SCORES + 1];
	wide[0] = 10;
	wide[1] = wide[2] = wide[3] = 1;
	assert_int_equal(stars_forced(wide, STARS_MAX_SCORES + 1), 0);
	assert_int_equal(stars_forced(wide, STARS_MAX_SCORES), 1);
}

/* ---- errors ---- */

static void expect_range(const uint64_t *c, int ns, int how_many)
{
	for (int s = 0; s < 3; s++) {
		stars_config cfg;
		stars_config_default(&cfg, (stars_strategy)s);
		int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
		sf_err err = { 0 };
		assert_int_equal(stars_thresholds(c, ns, &cfg, t, &err), SF_ERANGE);
		assert_int_equal(err.code, SF_ERANGE);
		assert_memory_equal(t, SENTINEL, sizeof t);
		if (!has_number(err.msg, how_many))
			fail_msg("message does not say %d: %s", how_many, err.msg);
	}
}

static void test_too_few_scores(void **state)
{
	(void)state;
	/* HPPH on the square lattice: 4 conformations with 0 contacts, 1 with 1. */
	static const uint64_t hpph[] = { 4, 1 };
	expect_range(hpph, 2, 1);
	static const uint64_t pppp[] = { 5 };
	expect_range(pppp, 1, 0);
	/* Two reachable scores above the lowest (3), with gaps and padding. */
	static const uint64_t two[] = { 0, 0, 0, 7, 0, 0, 3, 0, 0, 0, 0, 1, 0, 0 };
	expect_range(two, ARRAY_LEN(two), 2);
	/* Only the lowest, far from 0. */
	static const uint64_t one[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	expect_range(one, ARRAY_LEN(one), 0);
}

static void expect_einval(const uint64_t *c, int ns, const stars_config *cfg)
{
	int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
	sf_err err = { 0 };
	int rc = stars_thresholds(c, ns, cfg, t, &err);
	if (rc != SF_EINVAL)
		fail_msg("rc %d, expected SF_EINVAL (ns %d, fractions %g %g)", rc, ns,
			 cfg->one_fraction, cfg->two_fraction);
	assert_int_equal(err.code, SF_EINVAL);
	assert_true(err.msg[0] != '\0');
	assert_memory_equal(t, SENTINEL, sizeof t);
}

static void test_empty_distribution(void **state)
{
	(void)state;
	static const uint64_t zeros[10] = { 0 };
	static uint64_t wide[STARS_MAX_SCORES + 1];
	for (int s = 0; s < 3; s++) {
		stars_config cfg;
		stars_config_default(&cfg, (stars_strategy)s);
		expect_einval(NULL, 5, &cfg);
		expect_einval(H_HPHP16, 0, &cfg);
		expect_einval(H_HPHP16, -1, &cfg);
		expect_einval(zeros, 10, &cfg);
		expect_einval(zeros, 1, &cfg);
		/* Beyond the largest accepted score range. */
		wide[0] = 10;
		wide[1] = wide[2] = wide[3] = 1;
		expect_einval(wide, STARS_MAX_SCORES + 1, &cfg);
	}
	/* The largest range itself is accepted. Paper: reachable {0, 100, 2000,
	 * 4095}; mid 2047 -> first reachable 4095, taken -> pulled below 2000. */
	uint64_t *big = wide;
	memset(big, 0, sizeof wide);
	big[0] = 10;
	big[100] = big[2000] = big[4095] = 1;
	stars_config cfg;
	stars_config_default(&cfg, STARS_PAPER);
	expect_thresholds(big, STARS_MAX_SCORES, &cfg, 100, 2000, 4095);
}

static void test_bad_fractions(void **state)
{
	(void)state;
	static const double bad[][2] = {
		{ 0.0, 0.0 },  { 1.0, 0.5 }, { 0.5, 0.5 },   { 0.1, 0.5 }, { 0.5, 0.0 },
		{ 0.5, -0.1 }, { 1.5, 0.1 }, { -0.5, -0.6 }, { NAN, 0.1 }, { 0.5, NAN },
	};
	for (int i = 0; i < ARRAY_LEN(bad); i++) {
		stars_config cfg;
		stars_config_default(&cfg, STARS_PERCENTILE);
		cfg.one_fraction = bad[i][0];
		cfg.two_fraction = bad[i][1];
		expect_einval(H_HPHP20, ARRAY_LEN(H_HPHP20), &cfg);
	}
}

/* ---- names ---- */

static void test_parse_strategy(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		stars_strategy s;
	} good[] = {
		{ "paper", STARS_PAPER },
		{ "percentile", STARS_PERCENTILE },
		{ "geometric", STARS_GEOMETRIC },
	};
	for (int i = 0; i < ARRAY_LEN(good); i++) {
		stars_strategy out = (stars_strategy)-1;
		sf_err err = { 0 };
		assert_int_equal(stars_parse_strategy(good[i].name, &out, &err), 0);
		assert_int_equal(out, good[i].s);
		assert_string_equal(stars_strategy_name(good[i].s), good[i].name);
	}
	static const char *const badnames[] = { "Paper",  "PAPER",  "",       "papers", "pape",
						"paper ", " paper", "linear", "percent" };
	for (int i = 0; i < ARRAY_LEN(badnames); i++) {
		stars_strategy out = STARS_GEOMETRIC;
		sf_err err = { 0 };
		int rc = stars_parse_strategy(badnames[i], &out, &err);
		if (rc != SF_EINVAL)
			fail_msg("'%s' accepted (rc %d)", badnames[i], rc);
		assert_int_equal(err.code, SF_EINVAL);
		assert_non_null(strstr(err.msg, "paper"));
		assert_non_null(strstr(err.msg, "percentile"));
		assert_non_null(strstr(err.msg, "geometric"));
		if (badnames[i][0])
			assert_non_null(strstr(err.msg, badnames[i]));
		assert_null(strchr(err.msg, '\n'));
	}
}

/* ---- the solver rule ---- */

/*
 * stars_thresholds_success(): one and two at the pair of candidates (above
 * the lowest score, never the first of them with four or more) nearest
 * 0.75 and 0.25 in log-odds, p = (hits + 1/2) / (runs + 1); three at the
 * best. Worked by hand with 64 runs, logit(0.75) = 1.099, logit(0.25) =
 * -1.099:
 *  - H_HPHP16 (candidates 1..6), hits 64 64 64 60 50 20 3: logit of 64, 60,
 *    50, 20 hits = 4.860, 2.599, 1.248, -0.775. One in {2, 3, 4}: distances
 *    3.761, 1.500, 0.149; two at 5: 0.324. Pair (4, 5) = 0.473, every other
 *    pair more: [4, 5, 6].
 *  - the same with every run reaching every score: all pairs tie, the
 *    higher wins: [4, 5, 6].
 *  - hits 64 30 10 5 2 1 0: one at 2 (10 hits, 2.745) beats 3 (3.480) and
 *    4; two at 3 (5 hits, 1.283) beats 4 (2 hits, 2.120) and 5: [2, 3, 6]
 *    (score 1, 30 hits, is the first candidate and never one star).
 *  - three candidates: forced [1, 2, 3]; four: [2, 3, 4].
 */
static void test_solver_rule(void **state)
{
	(void)state;
	static const uint64_t three[] = { 5, 3, 2, 1 }, four[] = { 5, 4, 3, 2, 1 };
	static const struct {
		const uint64_t *counts;
		int n;
		int hits[7];
		int want[3];
	} cases[] = {
		{ H_HPHP16, ARRAY_LEN(H_HPHP16), { 64, 64, 64, 60, 50, 20, 3 }, { 4, 5, 6 } },
		{ H_HPHP16, ARRAY_LEN(H_HPHP16), { 64, 64, 64, 64, 64, 64, 64 }, { 4, 5, 6 } },
		{ H_HPHP16, ARRAY_LEN(H_HPHP16), { 64, 30, 10, 5, 2, 1, 0 }, { 2, 3, 6 } },
		{ three, ARRAY_LEN(three), { 64, 64, 64, 0 }, { 1, 2, 3 } },
		{ four, ARRAY_LEN(four), { 64, 64, 51, 19, 3 }, { 2, 3, 4 } },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
		sf_err err = { 0 };
		assert_int_equal(stars_thresholds_success(cases[i].counts, cases[i].n,
							  cases[i].hits, 64, t, &err),
				 0);
		if (memcmp(t, cases[i].want, sizeof t))
			fail_msg("case %d: [%d,%d,%d], expected [%d,%d,%d]", i, t[0], t[1], t[2],
				 cases[i].want[0], cases[i].want[1], cases[i].want[2]);
	}
	/* distances: log-odds, with the half run */
	assert_true(fabs(stars_success_distance(32, 64, 0.5)) < 1e-12);
	assert_true(fabs(stars_success_distance(64, 64, 0.8) - (log(129.0) - log(4.0))) < 1e-9);
	assert_true(fabs(stars_success_distance(0, 64, 0.05) - (log(19.0) - log(129.0)) * -1) <
		    1e-9);
	/* refusals leave the thresholds alone */
	static const int up[] = { 64, 10, 20, 5, 1, 0, 0 }, over[] = { 65, 64, 60, 5, 1, 0, 0 };
	static const uint64_t two[] = { 5, 3, 1 };
	static const int hits3[] = { 64, 64, 64 };
	const struct {
		const uint64_t *counts;
		int n;
		const int *hits;
		int runs, rc;
	} bad[] = {
		{ H_HPHP16, 7, up, 64, SF_EINVAL },
		{ H_HPHP16, 7, over, 64, SF_EINVAL },
		{ H_HPHP16, 7, cases[0].hits, 0, SF_EINVAL },
		{ two, 3, hits3, 64, SF_ERANGE },
		{ H_HPHP16, 0, cases[0].hits, 64, SF_EINVAL },
	};
	for (int i = 0; i < ARRAY_LEN(bad); i++) {
		int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
		sf_err err = { 0 };
		assert_int_equal(stars_thresholds_success(bad[i].counts, bad[i].n, bad[i].hits,
							  bad[i].runs, t, &err),
				 bad[i].rc);
		assert_memory_equal(t, SENTINEL, sizeof t);
	}
	/* a histogram alone cannot place solver stars, and the core parser
	 * (kinds without a solver) does not know the name */
	stars_config cfg;
	stars_config_default(&cfg, STARS_SOLVER);
	int t[3];
	sf_err err = { 0 };
	assert_int_equal(stars_thresholds(H_HPHP16, ARRAY_LEN(H_HPHP16), &cfg, t, &err), SF_EINVAL);
	assert_string_equal(stars_strategy_name(STARS_SOLVER), "solver");
	stars_strategy st;
	assert_int_equal(stars_parse_strategy("solver", &st, &err), SF_EINVAL);
}

/* ---- lower is better, from bounds ---- */

/*
 * stars_lower_bounds(best, worst): [max(worst, best + 2), best + (one -
 * best) / 2, best]. Worked by hand: best 10, worst 20 gives one 20, two
 * 10 + 10 / 2 = 15; best 10, worst 13 gives two 10 + 3 / 2 = 11; bounds
 * less than 2 apart widen one to best + 2 = 12 and two to 11.
 */
static void test_lower_bounds(void **state)
{
	(void)state;
	static const int cases[][5] = {
		/* best, worst, one, two, three */
		{ 10, 20, 20, 15, 10 }, { 10, 13, 13, 11, 10 }, { 10, 12, 12, 11, 10 },
		{ 10, 11, 12, 11, 10 }, { 10, 10, 12, 11, 10 }, { 0, 0, 2, 1, 0 },
		{ 3, 100, 100, 51, 3 },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
		sf_err err = { 0 };
		assert_int_equal(stars_lower_bounds(cases[i][0], cases[i][1], t, &err), 0);
		if (t[0] != cases[i][2] || t[1] != cases[i][3] || t[2] != cases[i][4])
			fail_msg("best %d worst %d: [%d,%d,%d], expected [%d,%d,%d]", cases[i][0],
				 cases[i][1], t[0], t[1], t[2], cases[i][2], cases[i][3],
				 cases[i][4]);
		/* Strictly decreasing, and the stars each score earns. */
		assert_true(t[0] > t[1] && t[1] > t[2]);
		assert_int_equal(stars_earned_lower(t[2], t), 3);
		assert_int_equal(stars_earned_lower(t[2] - 1, t), 3);
		assert_int_equal(stars_earned_lower(t[2] + 1, t), 2);
		assert_int_equal(stars_earned_lower(t[1], t), 2);
		assert_int_equal(stars_earned_lower(t[1] + 1, t), 1);
		assert_int_equal(stars_earned_lower(t[0], t), 1);
		assert_int_equal(stars_earned_lower(t[0] + 1, t), 0);
		/* The worst bound earns 3, 2 or 1 stars as it is 0, 1 or more above best. */
		static const int at_worst[3] = { 3, 2, 1 };
		int slack = cases[i][1] - cases[i][0];
		assert_int_equal(stars_earned_lower(cases[i][1], t),
				 at_worst[slack < 2 ? slack : 2]);
	}
	/* Refused, thresholds untouched. */
	static const int bad[][2] = { { -1, 5 }, { 5, 4 }, { STARS_MAX_SCORES + 1, 1 << 30 } };
	for (int i = 0; i < ARRAY_LEN(bad); i++) {
		int t[3] = { SENTINEL[0], SENTINEL[1], SENTINEL[2] };
		sf_err err = { 0 };
		assert_int_equal(stars_lower_bounds(bad[i][0], bad[i][1], t, &err), SF_EINVAL);
		assert_true(has_number(err.msg, bad[i][0]));
		assert_memory_equal(t, SENTINEL, sizeof t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_max9_real),
		cmocka_unit_test(test_paper_max3),
		cmocka_unit_test(test_paper_other_real),
		cmocka_unit_test(test_percentile_default_real),
		cmocka_unit_test(test_percentile_custom),
		cmocka_unit_test(test_geometric_real),
		cmocka_unit_test(test_fractions_ignored_elsewhere),
		cmocka_unit_test(test_properties_random),
		cmocka_unit_test(test_properties_gaps),
		cmocka_unit_test(test_low_candidate_pick_regression),
		cmocka_unit_test(test_first_step_no_star),
		cmocka_unit_test(test_forced),
		cmocka_unit_test(test_too_few_scores),
		cmocka_unit_test(test_empty_distribution),
		cmocka_unit_test(test_bad_fractions),
		cmocka_unit_test(test_parse_strategy),
		cmocka_unit_test(test_lower_bounds),
		cmocka_unit_test(test_solver_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
