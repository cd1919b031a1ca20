/*
 * geom.h - the plane geometry a race track grows from: seeded points in a
 * rectangle, their Delaunay triangulation (Bowyer-Watson) and its dual, the
 * Voronoi diagram clipped to the rectangle. Prefix trk_.
 *
 * Robustness. The two predicates every decision rests on, orientation and
 * in-circle, are evaluated exactly: a floating-point evaluation with
 * Shewchuk's static error bound answers when its sign is certain, and an
 * exact expansion-arithmetic evaluation (Dekker/Shewchuk, + - * only)
 * answers otherwise. The triangulation is therefore a true Delaunay
 * triangulation of the input, and identical on every IEEE machine.
 *
 * Degeneracies. Duplicate points are refused (SF_EINVAL, naming both
 * indices); input whose points are all collinear has no triangle (SF_ERANGE).
 * Cocircular ties are broken by one consistent rule, without jitter: a point
 * exactly on a circumcircle is *not* inside it, so an insertion never
 * destroys a triangle its point only touches. The result is then one of the
 * several Delaunay triangulations of that input (each triangle's open
 * circumdisc is empty), chosen by insertion order. In the Voronoi diagram
 * such a tie shows as a zero-length edge between two vertices at the same
 * place; the loop module never uses such an edge.
 *
 * Super-triangle. Bowyer-Watson starts from a large triangle around the
 * points and removes every triangle touching it at the end. With a finite
 * super-triangle, hull triangles whose circumcircle is larger than it can be
 * missing afterwards (nearly collinear points on the hull); a final
 * gift-wrapping pass adds them back (starting from one gift-wrapped hull
 * triangle when none survived), so the triangulation always covers the
 * convex hull (2n - 2 - h triangles for n points, h of them on the hull).
 */
#ifndef SF_TRK_GEOM_H
#define SF_TRK_GEOM_H

#include <stddef.h>

#include "../err.h"
#include "../rng.h"
#include "racetrack.h"

/* "No such index": a hull edge's missing neighbour, a border vertex's triangle. */
#define TRK_NONE ((size_t)-1)
/* The most points a triangulation accepts (insertion is O(n^2): the work budget). */
#define TRK_MAX_POINTS 4096

/*
 * Fills out[0..n-1] with points uniformly distributed in [0, width) x
 * [0, height), each at least min_distance from every earlier one (a
 * candidate too close is rejected and drawn again). Deterministic in the
 * state of `r`. Requires 1 <= n <= TRK_MAX_POINTS, finite width and height
 * > 0 and a finite min_distance >= 0. Returns 0; SF_EINVAL with a message
 * naming the bad argument; or SF_ERANGE when the points do not fit (after
 * 1000 + 100 n draws in all), saying how many were placed.
 */
int trk_points_random(rng *r, size_t n, double width, double height, double min_distance,
		      trk_vec2 *out, sf_err *err);

/*
 * A Delaunay triangle: point indices v[] counter-clockwise; nb[i] the
 * triangle across the edge opposite v[i] (from v[i+1] to v[i+2], indices
 * mod 3), or TRK_NONE on the convex hull; centre its circumcentre.
 */
typedef struct trk_tri {
	size_t v[3];
	size_t nb[3];
	trk_vec2 centre;
} trk_tri;

/* A Delaunay triangulation; it owns both arrays. */
typedef struct trk_delaunay {
	size_t npoints;
	trk_vec2 *points; /* a copy of the input */
	size_t ntris;
	trk_tri *tris;
} trk_delaunay;

/*
 * Triangulates points[0..n-1] (Bowyer-Watson, exact predicates; see the top
 * of this file). Returns a triangulation the caller frees with
 * trk_delaunay_free, or NULL with `err` set: SF_EINVAL for n < 3, n >
 * TRK_MAX_POINTS, a non-finite coordinate or two equal points; SF_ERANGE
 * when all points are collinear; SF_ENOMEM.
 */
trk_delaunay *trk_delaunay_new(const trk_vec2 *points, size_t n, sf_err *err);

/* Frees a triangulation; NULL is a no-op. */
void trk_delaunay_free(trk_delaunay *dt);

/*
 * A Voronoi vertex: the circumcentre of Delaunay triangle `tri`, inside the
 * rectangle; or, with `border` set, the point where a Voronoi edge leaves the
 * rectangle (tri is then TRK_NONE). Each cut makes its own border vertex.
 */
typedef struct trk_vvertex {
	trk_vec2 pos;
	size_t tri;
	int border;
} trk_vvertex;

/*
 * A Voronoi edge between vertices a and b, dual to the Delaunay edge between
 * points site[0] and site[1] (it lies on their perpendicular bisector).
 * `clipped` is set when either end is a border vertex.
 */
typedef struct trk_vedge {
	size_t a, b;
	size_t site[2];
	int clipped;
} trk_vedge;

/*
 * The Voronoi diagram of a triangulation, clipped to [0, width] x [0,
 * height]: one vertex per triangle whose circumcentre lies in the rectangle,
 * one edge per interior Delaunay edge whose dual segment meets the rectangle
 * (cut at the border where it leaves it; dropped when wholly outside).
 * Hull edges' unbounded rays are not represented. Adjacency is in CSR form:
 * the edges incident to vertex v are adj[adj_start[v] .. adj_start[v+1]-1],
 * in increasing edge order. The diagram owns every array.
 */
typedef struct trk_voronoi {
	double width, height;
	size_t nvertices;
	trk_vvertex *vertices;
	size_t nedges;
	trk_vedge *edges;
	size_t *adj_start; /* nvertices + 1 entries */
	size_t *adj;       /* 2 * nedges entries */
} trk_voronoi;

/*
 * Builds the clipped Voronoi diagram dual to `dt` (see trk_voronoi). Requires
 * finite width and height > 0. Returns a diagram the caller frees with
 * trk_voronoi_free, or NULL with `err` set (SF_EINVAL, SF_ENOMEM).
 */
trk_voronoi *trk_voronoi_new(const trk_delaunay *dt, double width, double height, sf_err *err);

/* Frees a diagram; NULL is a no-op. */
void trk_voronoi_free(trk_voronoi *vd);

/* The vertex at the other end of edge e from vertex v (v must be an end of e). */
size_t trk_vedge_other(const trk_vedge *e, size_t v);

#endif
