/*
 * spline.h - the closed centripetal Catmull-Rom spline through a circuit's
 * control points, resampled by arc length, with the signed curvature of the
 * resulting polyline.
 *
 * Centripetal (alpha 0.5) parameterisation spaces the knots by the square
 * root of the chord lengths, which rules out cusps and self-intersections
 * inside a span (Yuksel, Schaefer and Keyser 2011); the spline runs exactly
 * through every control point and is C1. Everything here uses only + - * /
 * and sqrt (all correctly rounded in IEEE), so a set of control points gives
 * the same samples on every machine.
 */
#ifndef SF_TRK_SPLINE_H
#define SF_TRK_SPLINE_H

#include <stddef.h>

#include "../err.h"
#include "racetrack.h"

/* Sub-steps per span of the fine chord polyline that measures arc length. */
#define TRK_SPLINE_SUBSTEPS 64
/* The most samples a resampled path may have (the work budget). */
#define TRK_SPLINE_MAX_SAMPLES ((size_t)1 << 22)

/*
 * A closed path resampled by arc length: pts[0..n-1] spaced ds along the
 * spline (pts[n-1] joins pts[0]); curvature[k] the signed curvature at
 * pts[k] (1/m, positive turning left); seg_start[i] the first sample of the
 * span from control point i to control point i + 1 (seg_start[0] == 0).
 * The arrays are malloc'ed and owned by the path; trk_path_release frees
 * them.
 */
typedef struct trk_path {
	size_t n;
	trk_vec2 *pts;
	double *curvature;
	double ds;
	double length; /* n * ds, the arc length of the spline */
	size_t nsegments;
	size_t *seg_start;
} trk_path;

/*
 * The point of span i (from ctrl[i] to ctrl[(i + 1) % m]) at local parameter
 * u in [0, 1] of the closed centripetal Catmull-Rom spline through
 * ctrl[0..m-1]. Requires m >= 4 and consecutive control points distinct
 * (trk_spline_sample checks both). u = 0 gives ctrl[i] up to rounding.
 */
trk_vec2 trk_spline_eval(const trk_vec2 *ctrl, size_t m, size_t i, double u);

/*
 * Resamples the closed spline through ctrl[0..m-1] by arc length into *out.
 * The arc length L is the length of a chord polyline with
 * TRK_SPLINE_SUBSTEPS pieces per span (its relative shortfall against the
 * true length is about (kappa * h)^2 / 24 for pieces of length h, below 1e-5
 * for any span gentler than a quarter turn); n = max(4, round(L / spacing)),
 * ds = L / n, and sample k is the spline point at arc length k * ds, found
 * by linear interpolation of the parameter inside the fine piece.
 * seg_start[i] is the first sample at or past control point i; it is
 * non-decreasing, and strictly increasing whenever every span is longer than
 * ds (a span shorter than ds may hold no sample; seg_start[i] == n means
 * control point i lies past the last sample). Curvature is trk_polyline_curvature of the samples.
 *
 * Requires m >= 4, finite coordinates, consecutive control points (ctrl[m-1]
 * and ctrl[0] included) distinct, and spacing > 0. On failure returns
 * SF_EINVAL (bad input), SF_EBUDGET (more than TRK_SPLINE_MAX_SAMPLES) or
 * SF_ENOMEM with a message in err, and leaves *out empty (safe to release).
 */
int trk_spline_sample(const trk_vec2 *ctrl, size_t m, double spacing, trk_path *out, sf_err *err);

/* Frees the arrays of a path and zeroes it; a zeroed path is a no-op. */
void trk_path_release(trk_path *path);

/*
 * The signed curvature of the closed polyline pts[0..n-1] (n >= 3) at each
 * vertex, written to curvature[0..n-1]: the reciprocal radius of the circle
 * through the vertex and its two neighbours (Menger curvature,
 * 2 * cross(b - a, c - b) / (|b - a| |c - b| |c - a|)), positive for a left
 * turn. It is exact for points on a circle, and for a smooth curve sampled
 * evenly by arc length it is kappa + O(ds^2) (the first-order error terms of
 * the two neighbours cancel). A repeated point gives 0; a reversal (the
 * neighbours coincide) gives HUGE_VAL.
 */
void trk_polyline_curvature(const trk_vec2 *pts, size_t n, double *curvature);

#endif
