/*
 * track.h - the sampled track (trk_track of racetrack.h) built from a
 * circuit's control points, and the named validity predicates that the
 * search uses to reject unraceable tracks.
 *
 * A track is the centripetal Catmull-Rom spline through the control points
 * (spline.h), resampled by arc length, lifted by seamless Perlin elevation
 * with a capped slope (noise.h). The predicates form a table, each with a
 * fixed name and a reason that names the offending samples and the limit:
 *
 *   self_intersection  no two non-adjacent sampled segments cross or touch
 *   clearance          samples more than limits.clearance_arc apart along
 *                      the track are at least track->width apart in the
 *                      plane (so the road never overlaps itself)
 *   curvature          |curvature| <= limits.max_curvature everywhere
 *   length             limits.min_length <= length <= limits.max_length
 *
 * Both spatial predicates bucket points in a uniform grid, so a check costs
 * O(n) for a track whose samples are spread out, not O(n^2).
 */
#ifndef SF_TRK_TRACK_H
#define SF_TRK_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "racetrack.h"
#include "spline.h"

typedef struct trk_track_params {
	double spacing;   /* requested sample spacing, m (> 0); ds is near it */
	double width;     /* road width, m (> 0) */
	double amplitude; /* elevation amplitude before the slope cap, m (>= 0) */
	unsigned period;  /* noise cells around the loop (1..TRK_NOISE_MAX_PERIOD) */
	unsigned octaves; /* noise octaves (1..TRK_NOISE_MAX_OCTAVES) */
	double max_slope; /* the cap on |dz/ds| between samples (>= 0) */
	uint64_t seed;    /* the elevation noise's seed */
} trk_track_params;

/*
 * Builds the track through ctrl[0..m-1] (see spline.h for what the control
 * points must satisfy). samples[k] is the spline point k * ds along with
 * z[k] = a * noise(k / n) (noise.h, a the capped amplitude); slope[k] is
 * (z[(k + 1) % n] - z[k]) / ds, the slope of the piece from sample k to the
 * next, so |slope[k]| <= max_slope for every k, the closing piece included;
 * curvature is the polyline's (trk_polyline_curvature); seg_start as in
 * trk_path. Returns a track the caller owns and frees with trk_track_free,
 * or NULL with SF_EINVAL (a bad field, named), SF_EBUDGET or SF_ENOMEM in
 * err. The same inputs give the same bytes on every machine.
 */
trk_track *trk_track_build(const trk_vec2 *ctrl, size_t m, const trk_track_params *params,
			   sf_err *err);

/*
 * The track of an already sampled closed path (spline.h's trk_path, from
 * trk_spline_sample or trk_corners_sample) with elevation z[0..n-1] (NULL:
 * flat), slope as trk_track_build computes it. Takes the path's arrays:
 * `path` is released whatever the outcome. NULL with SF_EINVAL or SF_ENOMEM.
 */
trk_track *trk_track_from_path(trk_path *path, const double *z, double width, sf_err *err);

/* Frees a track and its arrays; NULL is a no-op. */
void trk_track_free(trk_track *track);

typedef struct trk_limits {
	double min_length, max_length; /* m */
	double max_curvature;          /* 1/m; 1 / width keeps the radius >= width */
	double clearance_arc;          /* m along the track; 3 * width is typical */
} trk_limits;

/*
 * Limits for a road of this width: radius at least `width`, clearance beyond
 * 3 * width of arc, length in [250 m, 10 km] (placeholders for the search to
 * tune).
 */
trk_limits trk_limits_default(double width);

enum {
	TRK_PRED_SELF_INTERSECTION,
	TRK_PRED_CLEARANCE,
	TRK_PRED_CURVATURE,
	TRK_PRED_LENGTH,
	TRK_NPREDICATES
};

/* The fixed name of predicate `index` ("self_intersection", ...), or NULL. */
const char *trk_predicate_name(size_t index);

typedef struct trk_violation {
	size_t predicate; /* TRK_PRED_* */
	const char *name; /* trk_predicate_name(predicate) */
	char reason[200]; /* one line, naming the samples and the limit */
} trk_violation;

typedef struct trk_report {
	size_t nfailed;
	trk_violation failed[TRK_NPREDICATES]; /* in table order */
} trk_report;

/*
 * Runs the predicates in table order on `track` and records the failing
 * ones in *report: only the first when `all` is 0, every one otherwise.
 * Returns the number recorded (0: the track is valid), or SF_EINVAL with a
 * message in err when the limits are malformed (not finite, negative, or
 * min_length > max_length).
 */
int trk_track_check(const trk_track *track, const trk_limits *limits, int all, trk_report *report,
		    sf_err *err);

#endif
