/*
 * measure.h - a digger level's difficulty as a player faces it (issue 16):
 * how many optimal plays there are, how many taps a player can choose
 * from along one, how often random tapping wins, and how much of the
 * reachable state space is already lost. See measure.c for exactly what
 * each number means and what it costs.
 */
#ifndef SF_DIGGER_MEASURE_H
#define SF_DIGGER_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "digger.h"

/* What dig_measure_level() may spend. */
typedef struct dig_measure_opts {
	/* Enumerate the whole reachable state graph (exact mode) when it has
	 * at most this many states; otherwise sample. */
	uint64_t graph_states;
	int random_plays; /* uniformly random plays to count wins over */
	int samples;      /* states sampled for the dead-end share (sampled mode) */
	/* Each dig_solve_from() of sampled mode stores at most this many states. */
	uint64_t solver_states;
	/* Sampled mode: the solves that count optimal plays expand at most
	 * about this many states in all (past it optimal_plays is a lower
	 * bound, optimal_plays_exact false). */
	uint64_t count_work;
	uint64_t seed; /* the random plays' and the samples' rng seed */
} dig_measure_opts;

/* Fills `o` with the defaults (see measure.c for what they cost). */
void dig_measure_opts_default(dig_measure_opts *o);

/* A level's measured difficulty; measure.c defines each field exactly. */
typedef struct dig_measure {
	bool exact;       /* the whole reachable graph was enumerated */
	uint64_t states;  /* reachable states (exact), or states sampled */
	uint64_t decided; /* of those, states whose fate is known (sampled: solved in budget) */
	int optimum;      /* fewest taps that win; -1 none, or not found in sampled mode */
	/* Exact: reachable states that cannot win / reachable states.
	 * Sampled: an estimate of it, over the decided samples (states at
	 * depths drawn as the tap sequences grow; see measure.c). */
	double dead_end_share;
	double optimal_plays;     /* distinct winning tap sequences of the optimum's length */
	bool optimal_plays_exact; /* false: optimal_plays and optimal_branching are lower bounds */
	/* Along the optimal play: mean valid taps before each of its taps, and
	 * mean of those after which the rest of an optimal finish is left. */
	double branching, optimal_branching;
	int random_plays, random_wins;
	double random_win_rate; /* random_wins / random_plays (0 when no plays) */
	uint64_t solver_work;   /* states the sampled mode's solves expanded (0 exact) */
} dig_measure;

/*
 * Measures `lv` (which must pass dig_level_check) as measure.c describes.
 * `optimal`: an optimal play of lv from its start (status DIG_SOLVED, as
 * dig_solve returns it), or NULL (or another status) to have one found
 * (from the graph in exact mode, by dig_solve within solver_states when
 * sampling). Deterministic: the same level, play and options give the same
 * numbers on every machine. 0 with *out filled; SF_EINVAL when lv fails
 * dig_level_check, the options are out of range or the given play is not
 * valid; SF_ENOMEM when memory runs out.
 */
int dig_measure_level(const dig_level *lv, const dig_solve_result *optimal,
		      const dig_measure_opts *o, dig_measure *out, sf_err *err);

/*
 * Plays `plays` uniformly random plays of `lv` from its start, of the
 * kind random_win_rate counts (valid taps drawn uniformly until a win or
 * none is valid; the same law, drawn another way, so not the same plays),
 * on the stream rng_seed(seed), and returns how many won;
 * it stops as soon as `enough` have won (enough <= 0: never). lv must pass
 * dig_level_check. The generator rejects candidates that random play
 * wins too often (generate.c, random_limit).
 */
int dig_random_wins(const dig_level *lv, int plays, uint64_t seed, int enough);

#endif
