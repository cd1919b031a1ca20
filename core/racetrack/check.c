/*
 * check.c - rating a lap of a racetrack level: the check operation behind
 * POST /v1/racetrack/check (check.h).
 *
 * Everything the answer says comes from four things the body carries: the
 * level's thresholds, the track's length and segment starts, the lap time
 * and the optional splits. No race runs, so a check costs microseconds and
 * a client may leave the level's spline out.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../params.h"
#include "fitness.h"
#include "race.h"

/* The longest track there is: trk_limits_default()'s max_length. */
#define CHECK_MAX_LENGTH 10000.0

typedef struct lap_check {
	double thresholds[3];
	double length;
	size_t nsegments;
	double start[TRK_FIT_MAX_SEGMENTS]; /* m along the lap */
	double lap_time;
	int has_splits;
	double at[TRK_FIT_MAX_SEGMENTS]; /* s: when the lap reached each segment's start */
} lap_check;

double trk_lap_tenths(double seconds)
{
	return floor(seconds * 10 + 0.5);
}

int trk_lap_stars(double lap_time, const double thresholds[3])
{
	int stars = 0;
	for (int i = 0; i < 3; i++)
		stars += trk_lap_tenths(lap_time) <= trk_lap_tenths(thresholds[i]);
	return stars;
}

/* A JSON value's type for messages, "missing" for NULL. */
static const char *type_of(const json_t *v)
{
	return v ? sf_json_type_name(json_typeof(v)) : "missing";
}

/* Whether v is a finite number; its value in *out. */
static int finite_number(const json_t *v, double *out)
{
	*out = json_number_value(v);
	return json_is_number(v) && isfinite(*out);
}

static int read_keys(const json_t *body, sf_err *err)
{
	if (!json_is_object(body))
		return sf_err_set(err, SF_EINVAL,
				  "body: must be an object with level, lap_time and checkpoints, "
				  "not %s",
				  type_of(body));
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "level") && strcmp(key, "lap_time") && strcmp(key, "checkpoints")) {
			char q[SF_QUOTED_KEY];
			sf_quote_key(key, q);
			return sf_err_set(err, SF_EINVAL,
					  "body: unknown key \"%s\" (allowed: level, lap_time, "
					  "checkpoints)",
					  q);
		}
	}
	return 0;
}

/* level.stars: the thresholds, three positive numbers, decreasing. */
static int read_stars(const json_t *level, lap_check *c, sf_err *err)
{
	const json_t *stars = json_object_get(level, "stars");
	if (!stars)
		return sf_err_set(
			err, SF_EINVAL,
			"level.stars: missing; the check needs the whole level (as GET "
			"/v1/levels/{id} answers it), not just its puzzle: the thresholds cannot "
			"be worked out again without the level's star races");
	if (!json_is_object(stars))
		return sf_err_set(err, SF_EINVAL, "level.stars: must be an object, not %s",
				  type_of(stars));
	const json_t *better = json_object_get(stars, "better");
	if (better && (!json_is_string(better) || strcmp(json_string_value(better), "lower")))
		return sf_err_set(
			err, SF_EINVAL,
			"level.stars.better: must be \"lower\" (a racetrack's stars are on "
			"lap time)");
	const json_t *t = json_object_get(stars, "thresholds");
	if (!json_is_array(t) || json_array_size(t) != 3)
		return sf_err_set(
			err, SF_EINVAL,
			"level.stars.thresholds: must be [one, two, three], three lap times "
			"in seconds, not %s",
			json_is_array(t) ? "an array of another length" : type_of(t));
	for (size_t i = 0; i < 3; i++) {
		double x;
		if (!finite_number(json_array_get(t, i), &x) || !(x > 0))
			return sf_err_set(err, SF_EINVAL,
					  "level.stars.thresholds[%zu]: must be a finite number of "
					  "seconds > 0",
					  i);
		if (i > 0 && !(x < c->thresholds[i - 1]))
			return sf_err_set(err, SF_EINVAL,
					  "level.stars.thresholds[%zu]: must be below "
					  "level.stars.thresholds[%zu] (%g s): more stars need a "
					  "faster lap",
					  i, i - 1, c->thresholds[i - 1]);
		c->thresholds[i] = x;
	}
	return 0;
}

/* level.puzzle: its length and each segment's start. */
static int read_puzzle(const json_t *level, lap_check *c, sf_err *err)
{
	const json_t *puzzle = json_object_get(level, "puzzle");
	if (!json_is_object(puzzle))
		return sf_err_set(err, SF_EINVAL,
				  "level.puzzle: must be the level's puzzle object, not %s",
				  type_of(puzzle));
	const json_t *length = json_object_get(puzzle, "length");
	if (!finite_number(length, &c->length) || !(c->length > 0) || c->length > CHECK_MAX_LENGTH)
		return sf_err_set(err, SF_EINVAL,
				  "level.puzzle.length: must be a number of metres in (0, %g]",
				  CHECK_MAX_LENGTH);
	const json_t *segments = json_object_get(puzzle, "segments");
	size_t ns = json_array_size(segments);
	if (!json_is_array(segments) || ns < 1 || ns > TRK_FIT_MAX_SEGMENTS)
		return sf_err_set(err, SF_EINVAL,
				  "level.puzzle.segments: must be an array of 1..%d segments, each "
				  "with its start, not %s",
				  TRK_FIT_MAX_SEGMENTS,
				  json_is_array(segments) ? "one of another length"
							  : type_of(segments));
	c->nsegments = ns;
	for (size_t i = 0; i < ns; i++) {
		double s;
		const json_t *v = json_object_get(json_array_get(segments, i), "start");
		if (!finite_number(v, &s) || (i == 0 && s != 0))
			return sf_err_set(
				err, SF_EINVAL,
				i ? "level.puzzle.segments[%zu].start: must be a number of "
				    "metres"
				  : "level.puzzle.segments[%zu].start: must be 0 (the first "
				    "segment starts the lap)",
				i);
		if (i > 0 && !(s >= c->start[i - 1] && s < c->length))
			return sf_err_set(
				err, SF_EINVAL,
				"level.puzzle.segments[%zu].start: %g m must be at or past "
				"the previous segment's start (%g m) and below the length "
				"(%g m)",
				i, s, c->start[i - 1], c->length);
		c->start[i] = s;
	}
	return 0;
}

static int read_level(const json_t *body, lap_check *c, sf_err *err)
{
	const json_t *level = json_object_get(body, "level");
	if (!json_is_object(level))
		return sf_err_set(
			err, SF_EINVAL,
			"level: must be an object, a racetrack level as GET /v1/levels/{id} "
			"answers it, not %s",
			type_of(level));
	const json_t *kind = json_object_get(level, "kind");
	if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "racetrack"))) {
		const char *name = json_string_value(kind);
		return sf_err_set(err, SF_EINVAL,
				  "level.kind: must be \"racetrack\", not %s%.40s%s",
				  name ? "\"" : "", name ? name : type_of(kind), name ? "\"" : "");
	}
	int rc = read_stars(level, c, err);
	return rc ? rc : read_puzzle(level, c, err);
}

static int read_lap(const json_t *body, lap_check *c, sf_err *err)
{
	const json_t *lap = json_object_get(body, "lap_time");
	if (!json_is_number(lap))
		return sf_err_set(err, SF_EINVAL,
				  "lap_time: must be a positive finite number of seconds, not %s",
				  type_of(lap));
	if (!finite_number(lap, &c->lap_time) || !(c->lap_time > 0))
		return sf_err_set(err, SF_EINVAL,
				  "lap_time: must be a positive finite number of seconds, got %g",
				  c->lap_time);
	const json_t *splits = json_object_get(body, "checkpoints");
	if (!splits || json_is_null(splits))
		return 0;
	size_t want = c->nsegments - 1;
	if (!json_is_array(splits) || json_array_size(splits) != want)
		return sf_err_set(
			err, SF_EINVAL,
			"checkpoints: must be an array of %zu split times in seconds, one "
			"per segment start after the first (the track has %zu segments), "
			"not %s",
			want, c->nsegments,
			json_is_array(splits) ? "one of another length" : type_of(splits));
	c->has_splits = 1;
	c->at[0] = 0;
	for (size_t j = 0; j < want; j++) {
		double t;
		double prev = c->at[j];
		if (!finite_number(json_array_get(splits, j), &t) || !(t > prev) ||
		    !(t < c->lap_time))
			return sf_err_set(err, SF_EINVAL,
					  "checkpoints[%zu]: must be a number of seconds above %s "
					  "(%g s) and below lap_time (%g s)",
					  j, j ? "the previous split" : "0", prev, c->lap_time);
		c->at[j + 1] = t;
	}
	return 0;
}

/* The answer's per-segment splits, with the first too-fast one's reason in `reason`. */
static json_t *splits_json(const lap_check *c, double top, char *reason, size_t cap)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < c->nsegments; i++) {
		int last = i + 1 == c->nsegments;
		double end = last ? c->length : c->start[i + 1];
		double len = end - c->start[i];
		double time = (last ? c->lap_time : c->at[i + 1]) - c->at[i];
		double min_time = len / top;
		if (time < min_time && !reason[0]) {
			char from[48] = "the start", to[48] = "the finish";
			if (i)
				snprintf(from, sizeof from, "checkpoints[%zu]", i - 1);
			if (!last)
				snprintf(to, sizeof to, "checkpoints[%zu]", i);
			snprintf(reason, cap,
				 "segment %zu, from %s to %s: %.6g s for %.6g m is faster than the "
				 "top speed of %g m/s allows (%.6g s)",
				 i, from, to, time, len, top, min_time);
		}
		if (json_array_append_new(arr, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "index",
							 (json_int_t)i, "start", c->start[i],
							 "length", len, "at", c->at[i], "time",
							 time, "min_time", min_time))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *answer(const lap_check *c)
{
	trk_race_params rp;
	trk_race_params_default(&rp);
	double top = rp.top_speed;
	double min_lap = c->length / top;
	char reason[320] = "";
	if (c->lap_time < min_lap)
		snprintf(reason, sizeof reason,
			 "lap_time %.6g s is faster than any lap can be: %.6g m at the top speed "
			 "of %g m/s take %.6g s",
			 c->lap_time, c->length, top, min_lap);
	json_t *segments = NULL;
	if (c->has_splits && !(segments = splits_json(c, top, reason, sizeof reason)))
		return NULL;
	int valid = !reason[0];
	int stars = trk_lap_stars(c->lap_time, c->thresholds);
	json_t *doc = json_pack("{s:s, s:b, s:o, s:f, s:[fff], s:o, s:f, s:f}", "kind", "racetrack",
				"valid", valid, "stars", valid ? json_integer(stars) : json_null(),
				"lap_time", c->lap_time, "thresholds", c->thresholds[0],
				c->thresholds[1], c->thresholds[2], "next_star_at",
				valid && stars < 3 ? json_real(c->thresholds[stars]) : json_null(),
				"min_lap_time", min_lap, "length", c->length);
	if (doc && segments && json_object_set_new(doc, "segments", json_incref(segments)))
		goto fail;
	if (doc && !valid && json_object_set_new(doc, "reason", json_string(reason)))
		goto fail;
	json_decref(segments);
	return doc;
fail:
	json_decref(segments);
	json_decref(doc);
	return NULL;
}

json_t *trk_check_json(const json_t *body, sf_err *err)
{
	lap_check c;
	memset(&c, 0, sizeof c);
	if (read_keys(body, err) || read_level(body, &c, err) || read_lap(body, &c, err))
		return NULL;
	json_t *doc = answer(&c);
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the check");
	return doc;
}
