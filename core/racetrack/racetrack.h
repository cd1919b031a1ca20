/*
 * racetrack.h - shared types of the `racetrack` level kind (issue 5): race
 * tracks grown from a Voronoi diagram and evolved so that a simulated race
 * produces a designer's player-experience (PX) curve
 * (shared/seeds/001). Prefix trk_. All logic of the kind lives in
 * core/racetrack/; modules:
 *
 *   geom.[ch]   seeded points, Bowyer-Watson Delaunay triangulation, the dual
 *               Voronoi diagram clipped to the rectangle
 *   loop.[ch]   the circuit: a closed, simple walk along Voronoi edges
 *   spline.[ch] closed centripetal Catmull-Rom spline through the walk's
 *               vertices, resampled by arc length; curvature
 *   noise.[ch]  Perlin noise that wraps seamlessly around the loop, for
 *               elevation with a capped slope
 *   track.[ch]  the sampled track (trk_track below) and its named validity
 *               predicates
 *   px.[ch]     the nearest-neighbour experience model over play traces
 *   race.[ch]   the fixed-tick race of four cars (a later session)
 *
 * Units: metres and seconds. Everything is seeded (core/rng) and uses only
 * IEEE arithmetic and core/dmath where results feed a level, so that a seed
 * gives the same track on every machine.
 */
#ifndef SF_RACETRACK_H
#define SF_RACETRACK_H

#include <stddef.h>

typedef struct trk_vec2 {
	double x, y;
} trk_vec2;

typedef struct trk_vec3 {
	double x, y, z; /* z is elevation */
} trk_vec3;

/*
 * A sampled closed track: samples[0..n-1] evenly spaced by arc length
 * (spacing ds, the last joins the first), each with its position, the
 * signed curvature of the horizontal path (1/m, positive turning left) and
 * the slope of the elevation (dz/ds). Segment i (a gene) runs from sample
 * seg_start[i] up to seg_start[i+1] (wrapping), from control point i of the
 * spline to control point i+1.
 */
typedef struct trk_track {
	size_t n;
	trk_vec3 *samples;
	double *curvature;
	double *slope;
	double ds;
	double length; /* n * ds */
	double width;
	size_t nsegments;
	size_t *seg_start;
} trk_track;

#endif
