/*
 * optimum.h - the best fold of a long HP chain (issue 15, "Long chains"):
 * the three-star threshold of a puzzle whose chain is too long for the exact
 * enumerator (square lengths past ~24, cubic past ~16).
 *
 * Two engines behind one call, lat_optimum():
 *
 *  - A heuristic: replica-exchange Monte Carlo with pull moves (Lesh,
 *    Mitzenmacher and Whitesides 2003; Thachuk, Shmygelska and Hoos 2007,
 *    whose REMC reaches the best known optima of the 2D benchmarks up to
 *    length 100 and the 3D Harvard 48-mers). Pull moves are complete
 *    (every conformation reaches every other) and local, so a chain can
 *    rearrange its core without unfolding; the replicas at high
 *    temperature cross the barriers that trap a single annealing run, and
 *    exchanges carry their finds down to the cold replicas that polish
 *    them. Chosen over PERM because it needs no tuning per length, its
 *    work is a plain count of attempted moves (a budget that does not
 *    depend on the machine), and one code path serves both lattices.
 *
 *  - An exact search: depth-first branch and bound over the
 *    symmetry-reduced self-avoiding walks (the same reduction as the
 *    enumerator), seeded with the heuristic's best score so that it only
 *    looks for strictly better folds. Its bound is admissible: both
 *    lattices are bipartite, so every contact joins an even and an odd
 *    residue; a residue still to be placed can make at most z - 2 contacts
 *    (z - 1 at the chain's end; z = 4 square, 6 cubic), a placed one at
 *    most as many as it has empty neighbouring sites (one fewer for the
 *    last placed, whose next bond takes one), and every future contact
 *    needs one unplaced residue. So the contacts still to come are at
 *    most min(even slots, odd slots, unplaced slots). When the search
 *    finishes inside its node budget, the result is proven optimal.
 *
 * Proof is also claimed when the heuristic reaches the bound at the root
 * (nothing can beat it). "proven" is never set otherwise.
 *
 * Determinism: one thread, a seeded xoshiro generator (rng.h), a work
 * budget in attempted moves and search nodes, never in wall time, and
 * Metropolis acceptance through integer thresholds computed with basic
 * IEEE arithmetic only (no libm), so a seed gives the same score and the
 * same fold on every machine.
 *
 * Chains: this module predates LAT_MAX_LEN 64 (lattice.h) and keeps its
 * own chain type holding up to LAT_OPT_MAX_LEN residues. Folds are written
 * as the service writes them (check.h): one letter per bond, R L U D and,
 * on the cubic lattice, F B. The heuristic's folds come in whatever
 * orientation the chain ended in (lat_fold_check() accepts any); the exact
 * search's start with R like the enumerator's.
 */
#ifndef SF_LAT_OPTIMUM_H
#define SF_LAT_OPTIMUM_H

#include <stdint.h>

#include "../err.h"
#include "lattice.h"

/* Longest chain lat_optimum() accepts: issue 15 asks for square 64, cubic 48. */
#define LAT_OPT_MAX_LEN 64

/*
 * Defaults. Moves: 2e7 attempted moves take about 4 s on one core (about
 * 5e6 moves/s at lengths 48-64 on either lattice). In bench/bench_optimum.c
 * (seeds 1..6) the 2D benchmarks of lengths 20..50 reached their best known
 * scores within 1.2e7 moves, 64 within 2e7, 60 within 0.7e7 to 2.8e8; the
 * 3D 48-mers (seeds 1..3) within 0.2e7 to 1.6e8, one of them one contact
 * short after 4e8. Temperatures 0.25..0.80 over 8 replicas beat 0.30..1.00
 * on the 3D 48-mers at 2e7 moves (644 contacts against 635 over two seeds).
 * Nodes: 2e8 nodes take about 10 s and prove square chains to about 36
 * residues, cubic to about 20. A caller that runs many chains (a search)
 * should pass smaller budgets.
 */
#define LAT_OPT_DEFAULT_MOVES 20000000ull
#define LAT_OPT_DEFAULT_NODES 200000000ull
#define LAT_OPT_DEFAULT_REPLICAS 8

typedef struct lat_opt_chain {
	int len;                    /* residues, 2..LAT_OPT_MAX_LEN */
	uint8_t h[LAT_OPT_MAX_LEN]; /* 1 for H, 0 for P */
} lat_opt_chain;

typedef struct lat_optimum_config {
	uint64_t seed;  /* the heuristic's random stream */
	uint64_t moves; /* heuristic budget in attempted moves; 0: skip the heuristic */
	uint64_t nodes; /* exact search budget in nodes; 0: skip the exact search */
	int replicas;   /* REMC replicas, 1..32; <= 0: LAT_OPT_DEFAULT_REPLICAS */
	double t_min;   /* coldest temperature in contact units; <= 0: 0.25 */
	double t_max;   /* hottest (a linear ladder); <= 0: 0.80 */
	int target;     /* stop the heuristic once it reaches this score; <= 0: never */
} lat_optimum_config;

typedef struct lat_optimum_result {
	int score;                  /* the best score found (HH contacts) */
	int proven;                 /* 1 when score is proven to be the optimum */
	int bound;                  /* the admissible upper bound at the root */
	char fold[LAT_OPT_MAX_LEN]; /* a fold reaching score: len - 1 letters and NUL */
	uint64_t moves;             /* heuristic moves attempted */
	uint64_t moves_best;        /* moves attempted when the best was first reached */
	uint64_t nodes;             /* exact search nodes visited */
	int exact_complete;         /* 1 when the exact search ran to its end */
} lat_optimum_result;

/* Fills `cfg` with the defaults and seed 1. */
void lat_optimum_defaults(lat_optimum_config *cfg);

/*
 * Parses a chain of 'H' and 'P' letters of length 2..LAT_OPT_MAX_LEN.
 * Returns 0, or SF_EINVAL naming the first bad character and its position,
 * or the length and the allowed range.
 */
int lat_opt_chain_parse(const char *text, lat_opt_chain *out, sf_err *err);

/* The chain of a lat_seq (always fits). */
void lat_opt_chain_from_seq(const lat_seq *seq, lat_opt_chain *out);

/*
 * The best fold of `chain` on `kind`: first the heuristic with cfg->moves
 * attempted moves (stopping early at cfg->target or at the root bound),
 * then, when cfg->nodes > 0, the exact search for anything better within
 * cfg->nodes nodes. Fills *out; out->proven is 1 only when the exact search
 * completed or the heuristic reached the root bound. With both budgets 0 the
 * answer is a straight chain (score 0 unless contacts are impossible).
 * Deterministic for a given cfg. Returns 0, or SF_EINVAL for a bad kind,
 * length or replica count, or SF_ENOMEM.
 */
int lat_optimum(lat_kind kind, const lat_opt_chain *chain, const lat_optimum_config *cfg,
		lat_optimum_result *out, sf_err *err);

/*
 * The admissible upper bound on the score of `chain` on `kind` that the
 * exact search starts from (the bipartite slot count above).
 */
int lat_optimum_bound(lat_kind kind, const lat_opt_chain *chain);

#endif
