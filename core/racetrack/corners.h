/*
 * corners.h - a circuit's centre line with a tightness per corner, and its
 * hills: the genes of a racetrack segment (issue 13, docs/racetrack.md).
 *
 * The circuit is a closed polygon v[0..m-1] (the Voronoi loop). Its sides
 * are straight; corner k is the symmetric quadratic Bezier curve from
 * A = v[k] - T u1 to B = v[k] + T u2 with control point v[k] (u1, u2 the
 * unit directions of the sides into and out of the corner), so the road
 * leaves the straight tangentially, turns, and joins the next straight
 * tangentially. The tangent length T sets how tight the corner is: its
 * sharpest curvature, at the apex, is sin(a/2) / (T cos^2(a/2)) for a turn
 * of angle a, so halving T doubles it, and a car's corner speed
 * sqrt(grip / curvature) drops by a factor sqrt(2). T ranges from
 * T_hi = half the shorter of the two sides (the widest rounding, meeting
 * the neighbouring corner at the side's midpoint at most) down to T_lo, the
 * tightest rounding whose apex curvature stays within max_curvature (times
 * TRK_CORNER_MARGIN, for the sampled curvature's small error). A corner so
 * sharp that even T_hi exceeds the limit gets T_hi (the track's curvature
 * check then rejects it).
 *
 * Segment k runs from the midpoint of side (v[k-1], v[k]) to that of side
 * (v[k], v[k+1]): half a straight, corner k, half a straight. The path
 * starts at the midpoint of side (v[m-1], v[0]), so seg_start[0] == 0.
 *
 * Hills: segment k climbs (or drops) by climb[k] * max_slope * L_k / 1.5 over
 * its length L_k along a smoothstep 3u^2 - 2u^3 (steepest, 1.5 x the mean,
 * at its middle), so |climb| = 1 reaches the slope cap and more would pass
 * it; the climbs are then evened out (each lowered by its share, in
 * proportion to its length, of the loop's total) so the profile closes, and
 * scaled down as a whole only if that pushed a step past max_slope. Hills
 * thus scale with the track: a long segment climbs higher at the same gene.
 *
 * Only + - * / and sqrt, so the same inputs give the same bits everywhere.
 */
#ifndef SF_TRK_CORNERS_H
#define SF_TRK_CORNERS_H

#include <stddef.h>

#include "../err.h"
#include "spline.h"

#define TRK_CORNER_MARGIN 0.95 /* T_lo keeps the apex curvature this far inside the limit */
#define TRK_CORNER_SUBSTEPS 64 /* fine steps per corner curve (one per straight) */

/*
 * Samples the closed circuit v[0..m-1] (m >= 3, consecutive vertices
 * distinct, no straight reversal) into *out, spaced about `spacing` by arc
 * length, with corner k rounded at tightness[k] in 0..1 (0 the widest
 * rounding T_hi, 1 the tightest the curvature limit allows, T_lo; linear in
 * T between). seg_start[k] is the first sample at or past the start of
 * segment k (see above); curvature is trk_polyline_curvature's. Returns 0,
 * or SF_EINVAL (bad input, named), SF_EBUDGET or SF_ENOMEM with *out empty.
 */
int trk_corners_sample(const trk_vec2 *v, size_t m, const double *tightness, double max_curvature,
		       double spacing, trk_path *out, sf_err *err);

/*
 * The elevation z[0..path->n-1] of `path` (from trk_corners_sample, one
 * climb per segment, each in -1..1) as described above; every closed step
 * |z[(k+1) % n] - z[k]| / ds is at most max_slope. Returns 0 or SF_EINVAL.
 */
int trk_hills(const trk_path *path, const double *climb, double max_slope, double *z, sf_err *err);

#endif
