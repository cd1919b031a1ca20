/*
 * evaluate.h - one evaluation of a chain of any length (issue 15): the
 * exact engine where its budget allows, else an estimate, with the best
 * fold either way. Behind `starforge evaluate --method`, the evaluation
 * endpoint and the long-chain puzzle search.
 *
 * Methods:
 *  - LAT_METHOD_EXACT: lat_enumerate() (lattice.h), refused with SF_EBUDGET
 *    past the exact budget. The optimum is the histogram's maximum, proven.
 *  - LAT_METHOD_ESTIMATE: the histogram by flatPERM (estimate.h), with a
 *    relative standard error per score, and the optimum by lat_optimum()
 *    (optimum.h: pull-move REMC, then branch and bound within a node
 *    budget), proven only when the exact search completed or the heuristic
 *    met the admissible bound.
 *  - LAT_METHOD_AUTO (the default): exact when lat_estimate() is within the
 *    exact budget, else estimate.
 *
 * The estimate can miss the rarest high scores, and the optimum search can
 * find a score the estimate never sampled. Stars need every reachable score
 * up to the best: star_counts[] is the histogram stars are placed on (the
 * exact counts; or the estimate scaled into integers, every sampled score
 * at least 1, the optimum's score at least 1), so that the three-star
 * threshold is always the best fold known.
 *
 * Determinism: exact results do not depend on anything but the chain; an
 * estimate and an optimum depend on the seed and the budgets only, never on
 * the thread count (estimate.h and optimum.h say why).
 */
#ifndef SF_LAT_EVALUATE_H
#define SF_LAT_EVALUATE_H

#include <stdint.h>

#include "../err.h"
#include "estimate.h"
#include "lattice.h"
#include "optimum.h"

typedef enum lat_method {
	LAT_METHOD_AUTO,
	LAT_METHOD_EXACT,
	LAT_METHOD_ESTIMATE,
} lat_method;

/*
 * The longest chain per lattice that evaluations accept: issue 15 asks for
 * square 64 and cubic 48 (the cubic estimate's grid and the optimum search
 * slow down past that).
 */
#define LAT_EVAL_MAX_SQUARE 64
#define LAT_EVAL_MAX_CUBIC 48

typedef struct lat_eval_config {
	lat_method method;
	uint64_t seed;       /* the estimate's and the optimum's random streams */
	int threads;         /* >= 1; never changes the result */
	double exact_budget; /* conformations; <= 0: LAT_DEFAULT_BUDGET */
	double est_steps;    /* flatPERM growth steps; <= 0: LAT_EST_DEFAULT_BUDGET */
	int est_runs;        /* flatPERM runs; 0: LAT_EST_DEFAULT_RUNS */
	uint64_t opt_moves;  /* REMC attempted moves; 0: LAT_OPT_DEFAULT_MOVES */
	uint64_t opt_nodes;  /* branch-and-bound nodes; 0: LAT_EVAL_DEFAULT_NODES */
} lat_eval_config;

/*
 * Branch-and-bound nodes by default: 5e7, about 2.5 s on one core; proves
 * square optima to about length 30 (optimum.h has the figures).
 */
#define LAT_EVAL_DEFAULT_NODES 50000000ull

typedef struct lat_evaluation {
	lat_kind lattice;
	int len;
	lat_method method;  /* the one used: EXACT or ESTIMATE */
	lat_result exact;   /* method EXACT: the full exact result */
	lat_est_result est; /* method ESTIMATE: the estimate */
	/* The best fold: exact (proven) or from lat_optimum(). */
	int opt_score;
	int opt_proven;
	char opt_fold[LAT_MAX_LEN];    /* len - 1 letters and NUL */
	uint64_t opt_moves, opt_nodes; /* work the optimum search did (estimate only) */
	int max_score;                 /* the best known score: opt_score */
	/* The distribution stars are placed on (see above), scores 0..max_score. */
	uint64_t star_counts[LAT_MAX_SCORE + 1];
} lat_evaluation;

/* Fills `cfg` with the defaults: auto, seed 1, one thread. */
void lat_eval_config_default(lat_eval_config *cfg);

/* "auto", "exact", "estimate". */
const char *lat_method_name(lat_method m);

/* Parses a method name; returns 0 or SF_EINVAL naming the allowed values. */
int lat_parse_method(const char *name, lat_method *out, sf_err *err);

/*
 * Checks a chain's length against the evaluation limits of `kind` (1..64
 * square, 1..48 cubic). Returns 0 or SF_EINVAL naming the length and range.
 */
int lat_eval_check_length(lat_kind kind, int len, sf_err *err);

/*
 * The method AUTO resolves to for a chain of `len` residues on `kind`
 * under `exact_budget` (<= 0: LAT_DEFAULT_BUDGET); EXACT and ESTIMATE
 * resolve to themselves.
 */
lat_method lat_eval_resolve(lat_method m, lat_kind kind, int len, double exact_budget);

/*
 * The integer distribution stars are placed on, from an estimated one
 * (hist[0..nscores), its total) and the best score known: the estimate
 * scaled so that the total fits 2^60 (strategies read only ratios and
 * which scores are reachable), every sampled score at least 1, and
 * max_score at least 1 (found by the optimum search, too rare to sample).
 */
void lat_star_counts_estimate(const double *hist, int nscores, double total, int max_score,
			      uint64_t counts[LAT_MAX_SCORE + 1]);

/*
 * Evaluates `seq` on `kind` by cfg->method into *out (large: allocate it).
 * Returns 0; SF_EINVAL (bad length or config), SF_EBUDGET (exact asked for
 * past the exact budget), SF_ENOMEM or SF_ESYS, with `err` set.
 */
int lat_evaluate(lat_kind kind, const lat_seq *seq, const lat_eval_config *cfg, lat_evaluation *out,
		 sf_err *err);

#endif
