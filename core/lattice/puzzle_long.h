/*
 * puzzle_long.h - the lattice search's estimate path (issue 15, "Long
 * chains"), internal to core/lattice/puzzle*.c.
 *
 * Past the contact-map database's range a search evaluates each sequence
 * with lat_evaluate() (evaluate.h) in method estimate: a flatPERM histogram
 * and the best fold by pull-move REMC plus branch and bound, within the
 * per-sequence budgets of the params (steps, moves, nodes). The fitness and
 * the domain test read the estimate's star_counts, the integer distribution
 * stars are placed on, through the same lat_fitness_of() and lat_in_domain()
 * as exact histograms.
 *
 * Determinism: a sequence is evaluated in its canonical orientation (the
 * smaller of it and its reverse), with one thread and a seed that is a hash
 * of the lattice and that orientation alone. Its evaluation is then a pure
 * function of the puzzle and the budgets: the same whatever the evaluation
 * order, the thread count, the orientation the GA met it in, or the search
 * seed. So the level's stats, re-evaluated when the level is made, are the
 * very evaluation the search ranked, and two runs returning the same puzzle
 * with the same budgets give it the same stats (its id names the budgets).
 */
#ifndef SF_LAT_PUZZLE_LONG_H
#define SF_LAT_PUZZLE_LONG_H

#include "evaluate.h"
#include "puzzle.h"

/* The longest chain the estimate path accepts on `kind` (64 square, 48 cubic). */
int lat_long_max_length(lat_kind kind);

/* The seed of the evaluation of `seq` on `kind`: a 53-bit hash of both, orientation included. */
uint64_t lat_long_seed(lat_kind kind, const lat_seq *seq);

/*
 * The lat_evaluate() configuration of the estimate path for the chain
 * `canon` (already in canonical orientation) under the params `p`.
 */
void lat_long_config(const lat_search_params *p, const lat_seq *canon, lat_eval_config *cfg);

/*
 * Evaluates `seq` (any orientation) by the estimate path: writes its
 * fitness to *fit and, when in_domain is not NULL, 1 or 0 there as
 * lat_in_domain() says. Thread-safe. Returns 0, or a negative code with
 * `err` set (SF_ENOMEM).
 */
int lat_long_fitness(const lat_search_params *p, const lat_seq *seq, ga_eval *fit,
		     uint8_t *in_domain, sf_err *err);

/*
 * Evaluates the level's chain lv->seq (canonical orientation) by the
 * estimate path: allocates lv->estimate (freeing one already there) and
 * fills lv->eval from it: hist = star_counts, max_score, distinct_scores,
 * conformations (the sum of star_counts, a scaled count) and, for every
 * score with a count, a fold reaching it (the estimate's first sample; the
 * optimum's fold at max_score). Returns 0 or a negative code with `err`
 * set; lv->estimate is then NULL.
 */
int lat_long_level(const lat_search_params *p, lat_level *lv, sf_err *err);

#endif
