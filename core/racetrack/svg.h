/* svg.h - the picture of a racetrack level (core/racetrack/svg.c). */
#ifndef SF_TRK_SVG_H
#define SF_TRK_SVG_H

#include <jansson.h>

#include "../err.h"

/*
 * The picture of a racetrack level document (the kind's level_svg hook, see
 * core/kinds.h): the track from above coloured by the simulated PX of each
 * segment, with its start line and checkpoints; beside it the target PX
 * curve against the simulated PX, and the elevation profile. Returns
 * malloc'ed SVG text the caller frees, the same bytes for the same document
 * everywhere; NULL with err set: SF_EINVAL when `level` is not a racetrack
 * level (the message names the field), SF_ENOMEM.
 */
char *trk_level_svg(const json_t *level, sf_err *err);

#endif
