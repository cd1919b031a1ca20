/* svg.h - the picture of a digger level (core/digger/svg.c). */
#ifndef SF_DIG_SVG_H
#define SF_DIG_SVG_H

#include <jansson.h>

#include "../err.h"

/*
 * The picture of a digger level document (the kind's level_svg hook, see
 * core/kinds.h): the grid with its terrains, the machines on their start
 * cells, the gold, the arrows around the grid with their uses, and a
 * legend explaining every symbol drawn (wrapped to fit the page). Reads
 * the level's JSON only (schema/digger/puzzle.schema.json), not the rules
 * engine. Returns malloc'ed SVG text the caller frees, the same bytes for
 * the same document everywhere; NULL with err set: SF_EINVAL when `level`
 * is not a digger level (the message names the field), SF_ENOMEM.
 */
char *dig_level_svg(const json_t *level, sf_err *err);

#endif
