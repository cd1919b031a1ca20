/*
 * level_parse.h - the track of a racetrack level, read back from the
 * level's JSON (the "puzzle" that search_json.c writes), so that a level
 * can be raced again without its genome: `starforge race` re-races a level
 * on held-out seeds, and tests compare the result with the track the
 * search built.
 *
 * The puzzle lists every sample ([x, y, z]), the spacing ds, the road's
 * width and each segment's first sample; everything else a trk_track holds
 * is derived from those exactly as trk_track_build() derives it: the
 * curvature is trk_polyline_curvature() of the samples in the plane, the
 * slope of sample k is (z[k + 1] - z[k]) / ds (the closing piece
 * included), and the length is n x ds. Levels write every number in its
 * shortest round-trip form (core/json_out.h), which reads back as the same
 * double, so the rebuilt track is the searched one bit for bit and its
 * races give the level's own PX (tests/test_racetrack_level_parse.c).
 */
#ifndef SF_TRK_LEVEL_PARSE_H
#define SF_TRK_LEVEL_PARSE_H

#include <jansson.h>

#include "../err.h"
#include "racetrack.h"

/* The fewest and most samples a puzzle's spline may have. */
#define TRK_PUZZLE_MIN_SAMPLES 4
#define TRK_PUZZLE_MAX_SAMPLES 100000

/*
 * Rebuilds the track of a racetrack puzzle: `puzzle` is the object a level
 * holds under "puzzle" (spline, ds, width and segments[].start_sample are
 * read; samples and length, when present, must agree with the spline and
 * n x ds; other keys are ignored). `where` names the puzzle in messages
 * ("puzzle", "level.puzzle"). Requires TRK_PUZZLE_MIN_SAMPLES..
 * TRK_PUZZLE_MAX_SAMPLES samples of three finite numbers each, ds and
 * width finite and > 0, a length of at most 10 km (the longest track the
 * search accepts), and 1..TRK_FIT_MAX_SEGMENTS segments whose start
 * samples begin at 0, never decrease and stay below the sample count.
 * Returns a new track (free with trk_track_free), or NULL with SF_EINVAL
 * and a message naming the JSON path ("puzzle.spline[3]: ...") or
 * SF_ENOMEM in err. Pure and thread-safe.
 */
trk_track *trk_puzzle_track(const json_t *puzzle, const char *where, sf_err *err);

#endif
