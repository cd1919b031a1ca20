/*
 * walk.h - what the two exact enumerators share (internal to core/lattice).
 *
 * Geometry. The chain lives on a padded grid of side 2*len+1 with residue 0
 * in the middle, so no walk and no neighbour of a walk site can leave it and
 * the inner loops need no bounds checks. A site is one index; a step in
 * direction d adds off[d]. Directions are numbered R L U D F B (0..5), the
 * order in which every enumerator tries them: that order defines "the first
 * conformation" and so the examples.
 *
 * Symmetry. Counting each conformation once up to rotations and reflections
 * is a small automaton over the bonds: in phase 0 (straight so far) only R
 * and U are allowed; on the cubic lattice phase 1 (turned, still in the xy
 * plane) allows the four in-plane moves and F; phase 2 allows everything.
 *
 * Tasks. Work is split by prefix: every symmetry-reduced walk of `bonds`
 * bonds is one task, listed in depth-first order, so merging per-task results
 * in task order reproduces a single-threaded run exactly. The split depth
 * depends on the length only, never on the thread count.
 */
#ifndef SF_LAT_WALK_H
#define SF_LAT_WALK_H

#include <stdint.h>

#include "lattice.h"

enum { LAT_R, LAT_L, LAT_U, LAT_D, LAT_F, LAT_B };
#define LAT_PHASE_FREE 2

typedef struct lat_geom {
	lat_kind kind;
	int ndir;
	int side;   /* grid side, 2*len+1 */
	int cells;  /* side^dim */
	int center; /* site of residue 0 */
	int off[6]; /* site delta per direction */
} lat_geom;

typedef struct lat_task {
	uint8_t bonds; /* prefix length in bonds (>= 1) */
	uint8_t phase; /* symmetry phase after the prefix */
	uint8_t dirs[LAT_MAX_LEN];
} lat_task;

/* Bit d set when direction d is allowed in `phase`, per lattice (0 square, 1 cubic). */
extern const uint8_t lat_phase_allowed[2][3];
/* The phase after a step in direction d from `phase`. */
extern const uint8_t lat_phase_next[2][3][6];

/* Sets up the grid geometry for chains of up to `len` residues. */
void lat_geom_init(lat_geom *g, lat_kind kind, int len);

/*
 * Lists the tasks for a chain of `len` >= 3 residues: every reduced prefix of
 * lat_split_bonds(len) bonds, in depth-first order. Returns the task count
 * and sets *out to a malloc'ed array the caller frees, or returns 0 with *out
 * NULL when out of memory.
 */
size_t lat_tasks_make(const lat_geom *g, int len, lat_task **out);

/* The letter of direction d ("RLUDFB"[d]). */
static inline char lat_dir_letter(int d)
{
	return "RLUDFB"[d];
}

#endif
