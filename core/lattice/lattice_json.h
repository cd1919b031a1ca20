/* lattice_json.h - JSON codec for lattice evaluations. */
#ifndef SF_LATTICE_JSON_H
#define SF_LATTICE_JSON_H

#include <jansson.h>

#include "evaluate.h"
#include "lattice.h"

/*
 * The evaluation `res` of `seq` as a new JSON object with the keys sequence,
 * lattice, length, conformations, histogram (an array indexed by score, up to
 * max_score), max_score, distinct_scores and examples (score as a string key
 * -> fold). Returns a new reference owned by the caller, or NULL when out of
 * memory.
 */
json_t *lat_result_json(const lat_result *res, const lat_seq *seq);

/*
 * The evaluation `ev` of `seq` (made under `cfg`) as a new JSON object:
 * "method" ("exact" or "estimate") and "optimum" {score, proven, fold} in
 * both cases. Exact: lat_result_json()'s keys. Estimate: sequence, lattice,
 * length, seed, conformations and conformations_error (estimated total and
 * its relative standard error), histogram (estimated conformations per
 * score 0..max_score, reals; 0 for a score no run sampled),
 * histogram_error (relative standard error per score, null where not
 * sampled), samples (full-length chains sampled per score), max_score (the
 * optimum's score), distinct_scores (scores known reachable), examples (a
 * fold per sampled score, the optimum's fold at max_score), budget {runs,
 * steps, moves, nodes}, and optimum's moves and nodes. Returns a new
 * reference, or NULL when out of memory.
 */
json_t *lat_evaluation_json(const lat_evaluation *ev, const lat_seq *seq,
			    const lat_eval_config *cfg);

/*
 * The distribution stars are placed on, read back from a document of
 * lat_evaluation_json() (or lat_result_json()): the integer histogram of an
 * exact one, lat_star_counts_estimate() of an estimated one. Returns the
 * number of scores (max_score + 1), or -1 when the histogram is missing or
 * malformed.
 */
int lat_evaluation_star_counts(const json_t *doc, uint64_t counts[LAT_MAX_SCORE + 1]);

#endif
