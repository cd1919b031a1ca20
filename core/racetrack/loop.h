/*
 * loop.h - the circuit: a closed, simple walk along the edges of a Voronoi
 * diagram (issue 5; shared/seeds/001).
 *
 * The design text starts at a random edge, steps to a random neighbouring
 * edge, records the vertex the two share, and repeats until it is back at
 * the start. As written that walk can revisit a vertex (a figure eight
 * touches itself) and need not come back at all. Made sound here:
 *
 *  - the walk never enters a vertex it has already recorded, and it closes
 *    only by stepping along a real Voronoi edge back to its first vertex;
 *  - a walk that runs into a dead end backs up and tries the next neighbour
 *    in its (shuffled) order: a randomized depth-first search for a cycle
 *    whose length lies in [min_vertices, max_vertices], limited to
 *    steps_per_attempt steps; a walk that cannot close in that budget is
 *    abandoned and a new one starts from another random edge, up to
 *    max_attempts times, after which the search fails with SF_ERANGE.
 *
 * Why the circuit never crosses itself: Voronoi edges are the edges of a
 * planar straight-line subdivision, so two of them meet only at a shared
 * end. A closed walk that repeats no vertex therefore traces a simple
 * polygon: non-adjacent sides share no end and so cannot meet at all, and
 * adjacent sides meet only at their common vertex (they are distinct edges,
 * so they cannot overlap).
 *
 * The walk uses only interior vertices: circumcentres inside the rectangle,
 * at least `margin` from its border, joined by unclipped edges. An edge cut
 * at the border, its border vertex and every edge touching it are left out
 * of the graph altogether, so a cut end is never a turning point. Edges
 * shorter than min_edge_length (and always zero-length ones, which a
 * cocircular tie in the triangulation produces) are left out too, so no two
 * consecutive circuit vertices coincide.
 */
#ifndef SF_TRK_LOOP_H
#define SF_TRK_LOOP_H

#include <stddef.h>

#include "../err.h"
#include "../rng.h"
#include "geom.h"
#include "racetrack.h"

typedef struct trk_loop_params {
	size_t min_vertices;      /* >= 3 */
	size_t max_vertices;      /* >= min_vertices */
	double margin;            /* >= 0: distance of every vertex from the border */
	double min_edge_length;   /* >= 0: shorter edges are not used */
	size_t max_attempts;      /* >= 1: walks started from a random edge */
	size_t steps_per_attempt; /* >= 1: neighbours tried by one walk */
} trk_loop_params;

/*
 * A circuit: n vertex positions of a simple polygon, counter-clockwise,
 * closed by the side from points[n-1] back to points[0]; vertex[i] is the
 * Voronoi vertex index of points[i]. The loop owns both arrays.
 */
typedef struct trk_loop {
	size_t n;
	trk_vec2 *points;
	size_t *vertex;
} trk_loop;

/*
 * Fills `p` with the defaults: 8..40 vertices, margin 0, min_edge_length 0,
 * 64 attempts of 4096 steps each.
 */
void trk_loop_params_default(trk_loop_params *p);

/*
 * Finds a circuit in `vd` (see the top of this file), drawing from `r`:
 * the same diagram, parameters and generator state give the same circuit.
 * Returns a loop the caller frees with trk_loop_free, or NULL with `err`
 * set: SF_EINVAL naming a parameter out of range; SF_ERANGE when no circuit
 * was found within the attempt budget (or the diagram has no usable edge);
 * SF_ENOMEM.
 */
trk_loop *trk_loop_new(const trk_voronoi *vd, const trk_loop_params *p, rng *r, sf_err *err);

/* Frees a loop; NULL is a no-op. */
void trk_loop_free(trk_loop *loop);

#endif
