/*
 * solver.h - the reference folder (issue 15, "Difficulty measured"): a
 * fixed-budget, seeded folder run many times on a puzzle, whose success
 * rate at each star threshold says how hard the star is to earn.
 *
 * Why a solver: the star strategies of stars.h measure rarity (how few of
 * all folds reach a score), and rarity does not predict difficulty: the
 * all-H chain's three stars are held by 8.6e-5 of its folds, yet a greedy
 * folder finds them 40 % of the time. Difficulty is what a searcher with
 * a bounded effort reaches, so we measure it with one: a model player
 * with a fixed budget whose success rates can be compared across puzzles.
 *
 * One run (lat_solver_run() does `runs` of them, independently):
 *
 *  1. Greedy growth, the way a beginner builds a fold: residue 0 at the
 *     origin, residue 1 to its right, then each next residue on the free
 *     neighbouring site where it makes the most new HH contacts, ties
 *     broken by the run's random stream (so a P residue goes anywhere
 *     free). A growth that traps itself starts again (at most
 *     LAT_SOLVER_REGROWS times; then the straight chain).
 *  2. Annealing with pull moves (Lesh, Mitzenmacher and Whitesides 2003:
 *     the complete local move set optimum.c uses too), `steps` attempted
 *     moves on a fixed temperature ladder: LAT_SOLVER_STAGES stages of
 *     equal length from 1.0 down to 0.15 contacts (geometric, listed in
 *     solver.c), Metropolis acceptance at each. The run's result is the
 *     best score it reached at any point, greedy start included.
 *
 * reach(s) = (runs whose best >= s) / runs: 1 at s = 0, non-increasing.
 *
 * The budget, LAT_SOLVER_RUNS runs of LAT_SOLVER_STEPS moves. Steps: the
 * issue's review found that 20 000-step annealing runs reach the optimum
 * of the best rarity puzzles at length 16 in 27-39 % of runs, so at that
 * budget nothing at length 16 is hard; 1 500 steps (about a player's
 * hundred moves, each tried a dozen ways) leave room for a star that few
 * runs earn, while the greedy start still earns the first stars of most
 * puzzles in most runs (docs/stars.md, `solver`, has the numbers). 2 000
 * steps, measured first, put the best solver_ladder puzzles' medians at
 * 0.36 for two stars and 0.10 for three (re-measured with fresh runs),
 * on the edges of issue 15's bands (0.15-0.4, at most 0.1); 1 500 centres
 * them. Runs: 64 runs give a success rate with a standard error of at
 * most 0.0625 (0.054 at 0.25, 0.024 at 0.04), enough to tell 0.75 from
 * 0.25 from 0.04, the targets of the solver star rule; and the cost, 64 x
 * 1 500 = 96 000 moves, is about 10 ms at length 16 on one core, so a GA
 * search of 30 x 50 (about 1 300 sequences, the solver running only for
 * those inside the fitness's domain) takes about 5 s on 2 threads
 * (bench/bench_difficulty.c measures both).
 *
 * Determinism: run r draws from its own xoshiro stream, split from the
 * seed by the run index (rng_split()), never from the thread that ran it;
 * acceptance compares 53 random bits with integer thresholds computed with
 * basic IEEE arithmetic only (no libm), as optimum.c does. The default
 * seed is a hash of the lattice and the sequence (lat_solver_seed()), so
 * reach is a property of the puzzle: the same in every search, on every
 * machine, for any thread count.
 *
 * Chains of 2..LAT_MAX_LEN residues on both lattices. The chain moves on
 * a torus wider than it is long (as in optimum.c), so no two residues can
 * meet across the wrap and no move needs a bounds check.
 */
#ifndef SF_LAT_SOLVER_H
#define SF_LAT_SOLVER_H

#include <stdint.h>

#include "../err.h"
#include "lattice.h"

#define LAT_SOLVER_RUNS 64
#define LAT_SOLVER_STEPS 1500
#define LAT_SOLVER_STAGES 8
#define LAT_SOLVER_REGROWS 64

typedef struct lat_solver_config {
	uint64_t seed;  /* the runs' streams; lat_solver_seed() for the reference */
	int runs;       /* 1..4096 */
	uint64_t steps; /* attempted pull moves per run, after the greedy growth */
	int threads;    /* >= 1; never changes the result */
} lat_solver_config;

typedef struct lat_solver_result {
	int runs;
	uint64_t steps;
	int best;                    /* the best score any run reached */
	int hits[LAT_MAX_SCORE + 2]; /* hits[s]: runs whose best >= s (0 past best) */
	char fold[LAT_MAX_LEN];      /* the first run's fold (by run index) scoring best */
} lat_solver_result;

/*
 * The reference seed of `seq` on `kind`: a hash of both (FNV-1a folded
 * through splitmix64). The same sequence always gets the same runs.
 */
uint64_t lat_solver_seed(lat_kind kind, const lat_seq *seq);

/*
 * Fills `cfg` with the reference budget for `seq` on `kind`: its seed,
 * LAT_SOLVER_RUNS runs of LAT_SOLVER_STEPS steps, one thread.
 */
void lat_solver_defaults(lat_solver_config *cfg, lat_kind kind, const lat_seq *seq);

/*
 * Runs cfg->runs independent runs of the folder on `seq` (2..LAT_MAX_LEN
 * residues) on `kind` and fills *out. Deterministic for a given kind,
 * sequence and cfg (the thread count included or not). Returns 0, or
 * SF_EINVAL for a bad kind, length, runs or threads, SF_ENOMEM, or SF_ESYS
 * when threads cannot be started; *out is then zeroed.
 */
int lat_solver_run(lat_kind kind, const lat_seq *seq, const lat_solver_config *cfg,
		   lat_solver_result *out, sf_err *err);

/* The share of runs whose best reached `score` (1 for score <= 0, 0 past best). */
double lat_solver_reach(const lat_solver_result *res, int score);

#endif
