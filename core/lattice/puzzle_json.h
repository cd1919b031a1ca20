/* puzzle_json.h - JSON codec of lattice search params, levels and results. */
#ifndef SF_LAT_PUZZLE_JSON_H
#define SF_LAT_PUZZLE_JSON_H

#include <jansson.h>

#include "puzzle.h"

/*
 * Reads search params from a JSON object (NULL: all defaults). Every key is
 * optional with the default of lat_search_params_default(); for map_elites
 * `count` defaults to 0 (the whole archive). Unknown keys, wrong types and
 * out-of-range values are refused: returns SF_EINVAL with a message naming
 * the key and what it allows.
 */
int lat_search_params_from_json(const json_t *obj, lat_search_params *out, sf_err *err);

/* The params with every key spelled out, as a new JSON object (NULL when out of memory). */
json_t *lat_search_params_json(const lat_search_params *p);

/*
 * A level document in the common envelope (shared/ARCHITECTURE.md): id,
 * kind, seed, params, puzzle, solution, stars, stats. The id is a content
 * hash of the kind, the puzzle and its star rule, so equal puzzles share an
 * id. Returns a new reference or NULL when out of memory.
 */
json_t *lat_level_json(const lat_level *lv, const lat_search_params *p, uint64_t seed);

/*
 * The result of a search: kind, seed, params, status, evaluations,
 * generations_run, levels and the per-generation series. Returns a new
 * reference or NULL when out of memory.
 */
json_t *lat_search_result_json(const lat_search_result *r, const lat_search_params *p,
			       uint64_t seed);

#endif
