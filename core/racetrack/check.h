/*
 * check.h - the racetrack kind's check operation (sf_kind.check, behind
 * POST /v1/racetrack/check): the stars a player's lap earns on a level.
 *
 * Body: {"level": <the level document>, "lap_time": seconds,
 * "checkpoints": [split times, s]}. The stars come from the level's own
 * stars.thresholds ([one, two, three] s, decreasing), compared in tenths of
 * a second as the search compares laps (docs/racetrack.md, "Stars on lap
 * time"). They cannot be worked out again from a puzzle alone (the star
 * races need the job's race seed and params, which only the level
 * carries), so the check needs the level, not just its puzzle; of the
 * puzzle it reads only length and segments[].start, so a client may leave
 * the spline (the bulk of a long track) out to stay under the service's
 * body limit. The thresholds are taken from the level as sent: the check
 * rates a lap against a level, it does not vouch for the level.
 *
 * Plausibility: no car of the race goes faster than trk_race_params_default()'s
 * top_speed (60 m/s; the tow never passes it), so a lap faster than
 * length / top_speed, or a split between two checkpoints faster than the
 * segment's length / top_speed, is impossible: the answer then says
 * "valid": false with a reason instead of stars.
 *
 * Answer: kind, valid, stars (0..3; null when not valid), lap_time,
 * thresholds, next_star_at (the threshold of the next star, s; null at three
 * stars or when not valid), min_lap_time, length, segments (only with
 * checkpoints: index, start, length, at, time, min_time per segment) and
 * reason (present exactly when valid is false). See
 * schema/racetrack/check-result.schema.json.
 */
#ifndef SF_TRK_CHECK_H
#define SF_TRK_CHECK_H

#include <jansson.h>

#include "../err.h"

/*
 * A lap time in whole tenths of a second, rounded half up, as the search
 * rounds star laps (floor(seconds x 10 + 0.5)), kept as a double so that
 * no finite input overflows.
 */
double trk_lap_tenths(double seconds);

/*
 * The stars a lap of `lap_time` seconds earns under thresholds [one, two,
 * three] (decreasing): one for each threshold it is at or under, compared
 * in tenths (trk_lap_tenths). 0..3.
 */
int trk_lap_stars(double lap_time, const double thresholds[3]);

/*
 * The check operation: reads the body above, validates it and rates the
 * lap. A new object, or NULL with SF_EINVAL and a message starting with the
 * JSON path of the first problem ("lap_time: ...", "level.stars: ...",
 * "checkpoints[2]: ..."), or SF_ENOMEM. Pure; thread-safe.
 */
json_t *trk_check_json(const json_t *body, sf_err *err);

#endif
