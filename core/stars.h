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
} stars_strategy;

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
