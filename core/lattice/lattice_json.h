/* lattice_json.h - JSON codec for lattice evaluations. */
#ifndef SF_LATTICE_JSON_H
#define SF_LATTICE_JSON_H

#include <jansson.h>

#include "lattice.h"

/*
 * The evaluation `res` of `seq` as a new JSON object with the keys sequence,
 * lattice, length, conformations, histogram (an array indexed by score, up to
 * max_score), max_score, distinct_scores and examples (score as a string key
 * -> fold). Returns a new reference owned by the caller, or NULL when out of
 * memory.
 */
json_t *lat_result_json(const lat_result *res, const lat_seq *seq);

#endif
