/* svg.h - pictures of lattice levels and evaluations (core/lattice/svg.c). */
#ifndef SF_LAT_SVG_H
#define SF_LAT_SVG_H

#include <jansson.h>

#include "../err.h"

/*
 * The picture of a lattice level document (the kind's level_svg hook, see
 * core/kinds.h): the three-star fold on its grid (the best fold when the
 * level has no star bands) beside the score histogram with the star bands.
 * Returns malloc'ed SVG text the caller frees, the same bytes for the same
 * document everywhere; NULL with err set: SF_EINVAL when `level` is not a
 * lattice level (the message names the field), SF_ENOMEM.
 */
char *lat_level_svg(const json_t *level, sf_err *err);

/*
 * The same picture with the fold of `star` stars (1..3:
 * solution.band_folds.one, two or three) on the left, its score marked under
 * the histogram; star 3 gives lat_level_svg()'s bytes for a level with star
 * bands. NULL with err set: SF_EINVAL for a star outside 1..3 or a document
 * that is not a lattice level, SF_ERANGE when the level has no star bands
 * (stars.thresholds null: it has no fold for each star), SF_ENOMEM.
 */
char *lat_level_svg_star(const json_t *level, int star, sf_err *err);

/*
 * The picture of an evaluation document (schema/evaluation.schema.json, as
 * GET /v1/evaluations/{lattice}/{sequence} answers it): the score histogram
 * with the star bands under the document's star rule, beside the first fold
 * reaching the best score. Ownership and errors as lat_level_svg().
 */
char *lat_evaluation_svg(const json_t *evaluation, sf_err *err);

#endif
