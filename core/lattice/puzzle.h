/*
 * puzzle.h - three-star lattice puzzles: the search that turns the exact
 * engine into a level generator (the paper's GA, MAP-Elites, and an
 * exhaustive search that returns the true best puzzles).
 *
 * A genome is an H/P sequence (one byte per residue, 1 = H). Its fitness
 * comes from its exact score histogram, through the contact-map database of
 * its length (built once per search, or handed in warm by the caller), or,
 * past the database's range (method estimate, puzzle_long.h), from an
 * estimated one:
 *
 *  - LAT_FIT_DISTINCT ("distinct_scores"), the paper's: the number of
 *    distinct scores. On the square lattice the reachable scores are
 *    contiguous, so this is max score + 1 and simply rewards H-rich chains.
 *  - LAT_FIT_RARE_OPTIMUM ("rare_optimum"): how rare the three-star fold
 *    is, log10(conformations / optimal conformations): 0 when every fold is
 *    optimal, log10 of the total when one fold is. The protein designer's
 *    "unique native state": one best answer, hard to master.
 *  - LAT_FIT_STAR_LADDER ("star_ladder"): easy to start and hard to master.
 *    log10 of how many times rarer three stars are than one star, scaled
 *    down when fewer than `start_share` of all folds reach one star.
 *  - LAT_FIT_SOLVER_LADDER ("solver_ladder", issue 15): stars evenly
 *    spaced in difficulty. The reference solver (solver.h) runs on the
 *    puzzle; with hits_k of its runs reaching star k's threshold, the
 *    fitness is 1 / (1 + sum_k [d_k + 3 out_k]), with d_k =
 *    stars_success_distance(hits_k, runs, target_k), targets 0.75, 0.25
 *    and 0.04, and out_k the same log-odds distance to the nearest edge
 *    of star k's band when the success lies outside it (0 inside; bands
 *    at least 0.6, 0.15-0.4, at most 0.1; stars.h, STARS_SOLVER_*): 1 for
 *    a perfect ladder, one star found by most runs, two by some, three by
 *    few. With "stars": "solver" the thresholds are themselves
 *    placed by solver success, so the fitness ranks how well a puzzle's
 *    scores can be laid on the ladder at all.
 * The three better fitnesses have a domain, and are 0 outside it: the H
 * fraction lies in [h_min, h_max] (without that window they would drift to
 * H-rich chains too) and the puzzle is not trivial, i.e. its star
 * thresholds are not forced (stars_forced(): at least STARS_FREE_SCORES
 * reachable scores above 0; on the square lattice a best score of 5 or
 * more). A trivial puzzle's thresholds are [1, 2, 3] or [2, 3, 4] under
 * every strategy, so a fitness that measures a strategy's stars would
 * measure nothing there, and star_ladder preferred exactly those puzzles
 * under geometric stars. The paper's distinct_scores keeps every puzzle
 * with three star bands, trivial ones included (at square length 8 all of
 * them are), and ranks trivial ones last. docs/lattice-search.md argues
 * for each.
 *
 * Levels: every algorithm returns only puzzles inside its fitness's domain
 * (lat_in_domain()), so a search may return fewer levels than `count`.
 *
 * MAP-Elites descriptors: the H fraction, and the rarity of the best score
 * normalised to [0, 1] (log(total / optimal) / log(total)).
 */
#ifndef SF_LAT_PUZZLE_H
#define SF_LAT_PUZZLE_H

#include <stdatomic.h>

#include "../search/ga.h"
#include "../stars.h"
#include "evaluate.h"
#include "lattice.h"
#include "solver.h"

typedef enum lat_fitness {
	LAT_FIT_DISTINCT,
	LAT_FIT_RARE_OPTIMUM,
	LAT_FIT_STAR_LADDER,
	LAT_FIT_SOLVER_LADDER,
} lat_fitness;

typedef enum lat_algorithm {
	LAT_ALG_GA,
	LAT_ALG_MAP_ELITES,
	LAT_ALG_EXHAUSTIVE,
} lat_algorithm;

typedef struct lat_search_params {
	int length;           /* residues, default 16 */
	lat_kind lattice;     /* default square */
	lat_algorithm algorithm; /* default ga */
	lat_fitness fitness;  /* default distinct_scores */
	int population;       /* default 30 */
	int generations;      /* default 50 */
	double mutation_rate; /* default 0.1 */
	int elites;           /* default 1 */
	int bins;             /* MAP-Elites cells per descriptor, default 10 */
	int count;            /* levels returned: default 1 (map_elites: 0 = the archive) */
	stars_config stars;   /* default paper */
	double h_min, h_max;  /* H fraction window of the better fitnesses, default 0.25..0.75 */
	double start_share;   /* star_ladder: share of folds one star should admit, default 0.05 */
	/*
	 * Long chains (issue 15; docs/lattice-search.md, "Long chains"): how
	 * each sequence is evaluated. exact: through the contact-map database
	 * (square 8..20, cubic 8..14); estimate: lat_evaluate() with method
	 * estimate and the per-sequence budgets below (square 8..64, cubic
	 * 8..48); auto (the default): exact where the database fits its default
	 * budget, else estimate.
	 */
	lat_method method;
	int steps; /* estimate: flatPERM growth steps per sequence, default LAT_LONG_STEPS */
	int moves; /* estimate: optimum heuristic moves per sequence, default LAT_LONG_MOVES */
	int nodes; /* estimate: branch-and-bound nodes per sequence, default LAT_LONG_NODES */
} lat_search_params;

/* One generated puzzle: the sequence, its evaluation (exact, or estimated) and its stars. */
typedef struct lat_level {
	lat_seq seq;
	lat_result eval;    /* the full evaluation, examples included */
	int thresholds[3];  /* a search returns only levels with three bands */
	/* The reference solver on the puzzle (solver.h's default budget and
	 * seed): its success at each threshold goes into the level's stats. */
	lat_solver_result solver;
	/* Method estimate: the evaluation `eval` was made from (its estimate
	 * and optimum; owned, freed by lat_search_result_free()); NULL for an
	 * exact level. `eval` then holds the integer distribution stars are
	 * placed on (star_counts) and a fold for each of its scores. */
	lat_evaluation *estimate;
	ga_eval fitness;    /* fitness and descriptors */
	int cell;           /* MAP-Elites archive cell, -1 otherwise */
} lat_level;

typedef struct lat_search_result {
	ga_status status;
	size_t count;
	lat_level *levels;   /* best first */
	ga_generation *series;
	int generations_run;
	uint64_t evaluations; /* distinct sequences evaluated */
} lat_search_result;

/*
 * An evaluation cache the search consults before computing, so that a
 * sequence evaluated by an earlier job or request is not evaluated again
 * (the service puts its SQLite table behind it). Both functions are called
 * from evaluation threads at once and must be thread-safe.
 */
typedef struct lat_eval_cache {
	void *ctx;
	/* Fills hist[0..LAT_MAX_SCORE] and returns the max score, or -1 on a miss. */
	int (*get)(void *ctx, lat_kind kind, const lat_seq *seq, uint64_t hist[LAT_MAX_SCORE + 1]);
	/* Offers a full evaluation (examples included) just computed; may defer the write. */
	void (*put)(void *ctx, const lat_result *res, const lat_seq *seq);
} lat_eval_cache;

typedef struct lat_search_opts {
	uint64_t seed;
	int threads;          /* evaluation threads, >= 1; never changes the result */
	/* A warm database of the right lattice and length, or NULL; ignored
	 * (and never built) when the search's method is estimate. */
	const lat_db *db;
	/* Consulted by ga and map_elites (not exhaustive, which meets every
	 * sequence once, nor method estimate: the cache holds exact
	 * evaluations only); NULL: none. Never changes the result. */
	const lat_eval_cache *cache;
	void (*progress)(void *arg, const ga_generation *gen);
	void *progress_arg;
	const atomic_int *cancel;
	double deadline;      /* CLOCK_MONOTONIC seconds, 0: none */
} lat_search_opts;

/* Fills `p` with the defaults listed above. */
void lat_search_params_default(lat_search_params *p);

/*
 * Per-sequence budgets of the estimate path by default. A default search
 * (population 30, 50 generations) evaluates about 1 400 distinct
 * sequences. At square length 30 (one core, bench of 40 chains of H
 * fraction 0.75, where distinct_scores drifts): flatPERM does about 1.5e7
 * steps/s, so 5e5 steps take 0.03 s and leave 5-10 % relative error on the
 * common scores; REMC does about 6e6 moves/s, and its best scores summed
 * over the 40 chains were 683 at 3e5 moves, 689 at 6e5 and 1e6, 692 at
 * 3e6, so 6e5 (0.1 s) takes most of the gain; 1e5 branch-and-bound nodes
 * cost a few ms and prove the optimum of the short chains the search also
 * meets. About 0.08 s a sequence all told (timings on a shared machine,
 * noisy): a default length-30 job measured 114-124 CPU seconds, about a
 * minute on 2 idle cores. docs/lattice-search.md ("Long chains") has the
 * measurements.
 */
#define LAT_LONG_STEPS 500000
#define LAT_LONG_MOVES 600000
#define LAT_LONG_NODES 100000

/*
 * The method a search with params `p` evaluates its sequences by: p->method,
 * with auto resolved (exact where the contact-map database of p->length fits
 * LAT_DEFAULT_DB_BUDGET, else estimate). Exhaustive searches are exact.
 */
lat_method lat_search_method(const lat_search_params *p);

/*
 * Checks every field of `p`; returns 0 or SF_EINVAL naming the field and
 * its allowed range (length 8..20 square / 8..14 cubic with method exact,
 * through the database budget; 8..64 square / 8..48 cubic with estimate or
 * auto; exhaustive up to length 18, 2^18 sequences, and exact only).
 */
int lat_search_params_check(const lat_search_params *p, sf_err *err);

/* Names as the JSON params spell them; parsers return 0 or SF_EINVAL. */
const char *lat_fitness_name(lat_fitness f);
int lat_parse_fitness(const char *name, lat_fitness *out, sf_err *err);
const char *lat_algorithm_name(lat_algorithm a);
int lat_parse_algorithm(const char *name, lat_algorithm *out, sf_err *err);

/*
 * The fitness and descriptors of a sequence with histogram `hist` (scores
 * 0..max_score). Pure; the definition of every fitness lives here. For
 * rare_optimum, star_ladder and solver_ladder the fitness is positive
 * exactly inside the domain (lat_in_domain()) and 0 outside it. Runs the
 * reference solver (solver.h, about 12 ms at square length 16) when the
 * fitness is solver_ladder or the stars are "solver", and the sequence is
 * inside the domain.
 */
ga_eval lat_fitness_of(const lat_search_params *p, const lat_seq *seq,
		       const uint64_t hist[LAT_MAX_SCORE + 1], int max_score);

/*
 * 1 when the sequence with histogram `hist` (scores 0..max_score) can be a
 * level of the search `p`: it carries three star bands under p->stars and,
 * for rare_optimum, star_ladder and solver_ladder, its H fraction lies in
 * [h_min, h_max] and it is not trivial (lat_trivial()). 0 otherwise. Pure;
 * never runs the solver (whether three bands exist does not depend on the
 * strategy: 3 or more reachable scores above 0).
 */
int lat_in_domain(const lat_search_params *p, const lat_seq *seq,
		  const uint64_t hist[LAT_MAX_SCORE + 1], int max_score);

/*
 * 1 when the puzzle with histogram `hist` is trivial: its star thresholds
 * are forced, the same under every strategy (stars_forced(): 3 or 4
 * reachable scores above 0, so [1, 2, 3] or [2, 3, 4] on the square
 * lattice). 0 when it has no three bands or when a strategy has a choice.
 */
int lat_trivial(const uint64_t hist[LAT_MAX_SCORE + 1], int max_score);

/*
 * Runs the search `p` describes. Levels are the best `count` distinct
 * puzzles (up to reversal) inside the fitness's domain (lat_in_domain():
 * three star bands, and for the three better fitnesses the H window and no
 * trivial stars); fewer when the search found fewer (MAP-Elites: its
 * archive cells whose elite is inside the domain). Returns 0 (also when
 * cancelled or timed out: see out->status), SF_ERANGE when no puzzle found
 * is inside the domain in a completed run (a stopped one returns what it
 * has, possibly nothing), or another negative code with `err` set; out is then
 * empty. The same params and seed give the same result for any thread count
 * and with or without a warm database. Free with lat_search_result_free().
 */
int lat_search_run(const lat_search_params *p, const lat_search_opts *opts,
		   lat_search_result *out, sf_err *err);

void lat_search_result_free(lat_search_result *res);

#endif
