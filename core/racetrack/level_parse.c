/*
 * level_parse.c - a racetrack puzzle's JSON back into a trk_track; see
 * level_parse.h.
 *
 * The derived arrays are computed by the same code and expressions as
 * trk_track_build() (track.c) and trk_spline_sample() (spline.c): the
 * curvature by trk_polyline_curvature() itself, the slope and the length
 * by the same arithmetic in the same order, so nothing here can drift from
 * the builder by a rounding.
 */
#include "level_parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../params.h"
#include "fitness.h"
#include "spline.h"
#include "track.h"

/* The longest track there is: trk_limits_default()'s max_length. */
#define PUZZLE_MAX_LENGTH 10000.0

/* puzzle[key]: a finite number > 0, or SF_EINVAL naming where.key. */
static int read_positive(const json_t *puzzle, const char *where, const char *key, double *out,
			 sf_err *err)
{
	const json_t *v = json_object_get(puzzle, key);
	if (!json_is_number(v))
		return sf_err_set(err, SF_EINVAL, "%s.%s: must be a finite number > 0, not %s",
				  where, key, v ? sf_json_type_name(json_typeof(v)) : "missing");
	double x = json_number_value(v);
	if (!isfinite(x) || !(x > 0))
		return sf_err_set(err, SF_EINVAL, "%s.%s: must be a finite number > 0, got %g",
				  where, key, x);
	*out = x;
	return 0;
}

/* spline[k] into samples[k]: [x, y, z], three finite numbers. */
static int read_sample(const json_t *v, const char *where, size_t k, trk_vec3 *out, sf_err *err)
{
	double c[3];
	if (json_is_array(v) && json_array_size(v) == 3) {
		size_t i;
		for (i = 0; i < 3; i++) {
			const json_t *x = json_array_get(v, i);
			c[i] = json_number_value(x);
			if (!json_is_number(x) || !isfinite(c[i]))
				break;
		}
		if (i == 3) {
			out->x = c[0];
			out->y = c[1];
			out->z = c[2];
			return 0;
		}
	}
	return sf_err_set(err, SF_EINVAL, "%s.spline[%zu]: must be [x, y, z], three finite numbers",
			  where, k);
}

static int read_spline(const json_t *puzzle, const char *where, trk_track *t, sf_err *err)
{
	const json_t *spline = json_object_get(puzzle, "spline");
	size_t n = json_array_size(spline);
	if (!json_is_array(spline) || n < TRK_PUZZLE_MIN_SAMPLES || n > TRK_PUZZLE_MAX_SAMPLES)
		return sf_err_set(err, SF_EINVAL,
				  "%s.spline: must be an array of %d..%d samples [x, y, z]%s",
				  where, TRK_PUZZLE_MIN_SAMPLES, TRK_PUZZLE_MAX_SAMPLES,
				  spline ? "" : " (missing)");
	const json_t *samples = json_object_get(puzzle, "samples");
	if (samples && (!json_is_integer(samples) || json_integer_value(samples) != (json_int_t)n))
		return sf_err_set(err, SF_EINVAL,
				  "%s.samples: must be the number of samples in %s.spline (%zu)",
				  where, where, n);
	t->samples = malloc(n * sizeof *t->samples);
	if (!t->samples)
		return sf_err_set(err, SF_ENOMEM, "%s: out of memory for %zu samples", where, n);
	t->n = n;
	for (size_t k = 0; k < n; k++)
		if (read_sample(json_array_get(spline, k), where, k, &t->samples[k], err))
			return SF_EINVAL;
	return 0;
}

static int read_segments(const json_t *puzzle, const char *where, trk_track *t, sf_err *err)
{
	const json_t *segments = json_object_get(puzzle, "segments");
	size_t ns = json_array_size(segments);
	if (!json_is_array(segments) || ns < 1 || ns > TRK_FIT_MAX_SEGMENTS)
		return sf_err_set(err, SF_EINVAL,
				  "%s.segments: must be an array of 1..%d segments, each with its "
				  "start_sample%s",
				  where, TRK_FIT_MAX_SEGMENTS, segments ? "" : " (missing)");
	t->seg_start = malloc(ns * sizeof *t->seg_start);
	if (!t->seg_start)
		return sf_err_set(err, SF_ENOMEM, "%s: out of memory", where);
	t->nsegments = ns;
	for (size_t i = 0; i < ns; i++) {
		const json_t *s = json_object_get(json_array_get(segments, i), "start_sample");
		json_int_t v = json_integer_value(s);
		if (i == 0 && (!json_is_integer(s) || v != 0))
			return sf_err_set(
				err, SF_EINVAL,
				"%s.segments[0].start_sample: must be 0 (the first segment "
				"starts the lap)",
				where);
		json_int_t lo = i ? (json_int_t)t->seg_start[i - 1] : 0, hi = (json_int_t)t->n - 1;
		if (!json_is_integer(s) || v < lo || v > hi)
			return sf_err_set(
				err, SF_EINVAL,
				"%s.segments[%zu].start_sample: must be an integer "
				"%lld..%lld (at or past the previous segment's, below the "
				"sample count)",
				where, i, (long long)lo, (long long)hi);
		t->seg_start[i] = (size_t)v;
	}
	return 0;
}

trk_track *trk_puzzle_track(const json_t *puzzle, const char *where, sf_err *err)
{
	if (!json_is_object(puzzle)) {
		sf_err_set(err, SF_EINVAL,
			   "%s: must be an object (a racetrack level's puzzle), not %s", where,
			   puzzle ? sf_json_type_name(json_typeof(puzzle)) : "missing");
		return NULL;
	}
	trk_track *t = calloc(1, sizeof *t);
	if (!t) {
		sf_err_set(err, SF_ENOMEM, "%s: out of memory", where);
		return NULL;
	}
	if (read_positive(puzzle, where, "ds", &t->ds, err) ||
	    read_positive(puzzle, where, "width", &t->width, err) ||
	    read_spline(puzzle, where, t, err) || read_segments(puzzle, where, t, err))
		goto fail;
	/* As trk_spline_sample() writes it: n x ds. */
	t->length = (double)t->n * t->ds;
	if (!(t->length <= PUZZLE_MAX_LENGTH)) {
		sf_err_set(err, SF_EINVAL,
			   "%s: %zu samples %g m apart make %g m, over the longest track (%g m)",
			   where, t->n, t->ds, t->length, PUZZLE_MAX_LENGTH);
		goto fail;
	}
	const json_t *length = json_object_get(puzzle, "length");
	if (length && (!json_is_number(length) ||
		       !(fabs(json_number_value(length) - t->length) <= 1e-9 * t->length))) {
		sf_err_set(err, SF_EINVAL, "%s.length: must be samples x ds (%.17g m)", where,
			   t->length);
		goto fail;
	}
	size_t n = t->n;
	trk_vec2 *plane = malloc(n * sizeof *plane);
	t->curvature = malloc(n * sizeof *t->curvature);
	t->slope = malloc(n * sizeof *t->slope);
	if (!plane || !t->curvature || !t->slope) {
		free(plane);
		sf_err_set(err, SF_ENOMEM, "%s: out of memory for %zu samples", where, n);
		goto fail;
	}
	for (size_t k = 0; k < n; k++) {
		plane[k].x = t->samples[k].x;
		plane[k].y = t->samples[k].y;
		/* As trk_track_build(): the piece from sample k to the next. */
		t->slope[k] = (t->samples[(k + 1) % n].z - t->samples[k].z) / t->ds;
	}
	trk_polyline_curvature(plane, n, t->curvature);
	free(plane);
	return t;
fail:
	trk_track_free(t);
	return NULL;
}
