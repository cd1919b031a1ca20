/*
 * stars.h - from a distribution of solution scores to three star thresholds.
 *
 * Every level kind ends the same way: it knows (exactly, or from sampling)
 * how many solutions reach each integer score, higher being better, and the
 * player earns one, two or three stars by reaching a score at least the
 * matching threshold. This module owns the strategies that place those
 * thresholds, so the kinds share one definition of what a star means.
 *
 * Thresholds are always three strictly increasing *reachable* scores, all
 * above the lowest reachable score (a solution anyone finds first earns no
 * star), and the three-star threshold is the best reachable score. A
 * distribution with fewer than three reachable scores above its lowest cannot
 * carry three distinct bands: stars_thresholds() then returns SF_ERANGE with
 * a message saying how many there are, and the caller decides (a generator
 * rejects such a puzzle; the evaluate command reports "thresholds": null).
 * With four or more reachable scores above the lowest, one star asks for more
 * than the first of them (on the HP lattice: never a single contact when
 * the best fold has four or more), since one step up from doing nothing is no
 * achievement. With three or four, the thresholds are therefore forced (the
 * three, or the top three) and every strategy gives the same: such a
 * distribution is "forced" (stars_forced()), and a generator treats its
 * puzzle as trivial (docs/stars.md).
 *
 * Strategies (docs/stars.md argues for each):
 *  - STARS_PAPER: the rule behind both worked examples of the paper. Three
 *    stars at the best score, two at the next reachable score below it, one
 *    at the first reachable score from the middle of the range upwards. Max 9
 *    gives 4 / 8 / 9; max 3 gives 1 / 2 / 3.
 *  - STARS_PERCENTILE: one star is reached by at most `one_fraction` of all
 *    solutions (default: the best half), two stars by at most `two_fraction`
 *    (the best tenth), three only by the best.
 *  - STARS_GEOMETRIC: our own. The tail shares are spaced evenly on a log
 *    scale between "every solution" and "the best": if a fraction p of the
 *    solutions is optimal, one star is reached by at most p^(1/3) of them and
 *    two by at most p^(2/3), so each star is about equally many times rarer
 *    than the one before whatever the shape of the distribution.
 *  - STARS_SOLVER: by difficulty, not rarity (issue 15). A kind with a
 *    reference solver runs it many times and counts, for each score, the
 *    runs whose best reached it; stars_thresholds_success() then puts one
 *    star where about STARS_SOLVER_ONE of the runs succeed and two where
 *    about STARS_SOLVER_TWO do (closest in log-odds), three at the best.
 *    The three targets (0.75, 0.25, 0.04) are evenly spaced in log-odds: the
 *    odds of earning each star are about a ninth of the star's below.
 *    stars_thresholds() refuses this strategy (a histogram alone cannot
 *    place it), and stars_parse_strategy() does not accept its name: a kind
 *    that has a solver parses "solver" itself (the lattice's params do).
 */
#ifndef SF_STARS_H
#define SF_STARS_H

#include <stdint.h>

#include "err.h"

/* The largest score range stars_thresholds() accepts (scores 0..4095). */
#define STARS_MAX_SCORES 4096

/*
 * The fewest reachable scores above the lowest that leave a strategy a
 * choice: three bands need 3, one star skips the first when there are 4, so
 * 5 is the first count where thresholds are not forced.
 */
#define STARS_FREE_SCORES 5

typedef enum stars_strategy {
	STARS_PAPER,
	STARS_PERCENTILE,
	STARS_GEOMETRIC,
	STARS_SOLVER,
} stars_strategy;

/*
 * STARS_SOLVER's targets: the share of solver runs that should reach one,
 * two and three stars. Log-odds ln(p / (1 - p)): 1.10, -1.10, -3.18, steps
 * of 2.2 (docs/stars.md). THREE is no target of the rule (three stars are
 * the best score) but of fitnesses that rank puzzles by their ladder.
 */
#define STARS_SOLVER_ONE 0.75
#define STARS_SOLVER_TWO 0.25
#define STARS_SOLVER_THREE 0.04
/*
 * The bands around them that issue 15 sets as its goal for "most", "some"
 * and "few" runs: one star reached by at least 0.6 of the runs, two by
 * 0.15 to 0.4, three by at most 0.1. Fitnesses that rank puzzles by their
 * ladder (lattice solver_ladder) penalise success outside them.
 */
#define STARS_SOLVER_ONE_MIN 0.6
#define STARS_SOLVER_TWO_MIN 0.15
#define STARS_SOLVER_TWO_MAX 0.4
#define STARS_SOLVER_THREE_MAX 0.1

typedef struct stars_config {
	stars_strategy strategy;
	double one_fraction; /* STARS_PERCENTILE only, in (0, 1) */
	double two_fraction; /* STARS_PERCENTILE only, in (0, one_fraction) */
} stars_config;

/* Fills `cfg` with `strategy` and its default fractions (0.5 and 0.1). */
void stars_config_default(stars_config *cfg, stars_strategy strategy);

/*
 * Parses a strategy name ("paper", "percentile", "geometric") into `out`.
 * Returns 0, or SF_EINVAL with a message listing the known names.
 */
int stars_parse_strategy(const char *name, stars_strategy *out, sf_err *err);

/*
 * Checks the fractions of `cfg` whatever its strategy (so that a level's
 * echoed params are always valid), naming them as params spell them:
 * 0 < star_two_fraction < star_one_fraction < 1. Returns 0 or SF_EINVAL.
 */
int stars_config_check(const stars_config *cfg, sf_err *err);

/* The name of `strategy` as stars_parse_strategy() accepts it. */
const char *stars_strategy_name(stars_strategy strategy);

/*
 * Places the thresholds for the distribution `counts[0..nscores-1]`, where
 * counts[s] is the number of solutions scoring exactly s. On success writes
 * three strictly increasing reachable scores to `thresholds` and returns 0;
 * with four or more reachable scores above the lowest, the one-star
 * threshold is never the first of them. Returns SF_EINVAL for an empty
 * distribution or bad fractions, SF_ERANGE when fewer than three scores
 * above the lowest are reachable; `thresholds` is then left untouched.
 */
int stars_thresholds(const uint64_t *counts, int nscores, const stars_config *cfg,
		     int thresholds[3], sf_err *err);

/*
 * STARS_SOLVER's thresholds for the distribution `counts[0..nscores-1]`
 * (which scores are reachable) and a solver's success: hits[s] of `runs`
 * runs reached score s or more (s = 0..nscores-1, non-increasing). Three
 * stars at the best reachable score; one and two at the pair of reachable
 * scores in between (with four or more reachable scores above the lowest,
 * never the first of them: the rules of stars_thresholds()) whose success
 * is closest to STARS_SOLVER_ONE and STARS_SOLVER_TWO, the sum of
 * stars_success_distance() being smallest; ties go to the higher scores.
 * Returns 0, SF_EINVAL for an empty distribution, runs < 1 or hits out of
 * [0, runs] or increasing, SF_ERANGE as stars_thresholds(); `thresholds`
 * is untouched on failure. Pure and deterministic (no libm).
 */
int stars_thresholds_success(const uint64_t *counts, int nscores, const int *hits, int runs,
			     int thresholds[3], sf_err *err);

/*
 * How far `hits` successes in `runs` runs are from the success rate
 * `target` in (0, 1): |logit((hits + 1/2) / (runs + 1)) - logit(target)|,
 * the half run keeping 0 and `runs` finite (0 of 64 reads as 0.008, 64 of
 * 64 as 0.992). Log-odds, because a step from 0.9 to 0.99 is as big a
 * change in difficulty as one from 0.5 to 0.9. Deterministic (dmath.h).
 */
double stars_success_distance(int hits, int runs, double target);

/*
 * 1 when `counts[0..nscores-1]` carries three star bands whose thresholds
 * are forced, the same under every strategy: 3 or 4 (below
 * STARS_FREE_SCORES) reachable scores above the lowest. 0 otherwise: no
 * three bands (fewer than 3, or an empty or oversized distribution), or a
 * real choice (5 or more). Pure; never fails.
 */
int stars_forced(const uint64_t *counts, int nscores);

/*
 * Thresholds for a score where LOWER is better (a number of moves, a time),
 * placed from two bounds instead of a distribution: `best`, the optimum
 * (three stars), and `worst`, the largest score that must still earn one
 * star. Writes [one, two, three] = [max(worst, best + 2), best + (one -
 * best) / 2, best]: strictly decreasing, so three distinct bands always
 * exist; when the bounds are closer than 2 apart the one-star threshold is
 * widened to best + 2 rather than collapsing two bands. Returns 0, or
 * SF_EINVAL (thresholds untouched) when best < 0, worst < best or best is
 * too large to widen.
 */
int stars_lower_bounds(int best, int worst, int thresholds[3], sf_err *err);

/*
 * The stars a score earns under lower-is-better thresholds [one, two,
 * three] (as stars_lower_bounds() writes them): 3 at or under three, 2 at or
 * under two, 1 at or under one, else 0.
 */
int stars_earned_lower(int score, const int thresholds[3]);

#endif
