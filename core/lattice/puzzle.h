/*
 * puzzle.h - three-star lattice puzzles: the search that turns the exact
 * engine into a level generator (the paper's GA, MAP-Elites, and an
 * exhaustive search that returns the true best puzzles).
 *
 * A genome is an H/P sequence (one byte per residue, 1 = H). Its fitness
 * comes from its exact score histogram, through the contact-map database of
 * its length (built once per search, or handed in warm by the caller):
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
 * The two better fitnesses have a domain, and are 0 outside it: the H
 * fraction lies in [h_min, h_max] (without that window both would drift to
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
#include "lattice.h"

typedef enum lat_fitness {
	LAT_FIT_DISTINCT,
	LAT_FIT_RARE_OPTIMUM,
	LAT_FIT_STAR_LADDER,
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
} lat_search_params;

/* One generated puzzle: the sequence, its exact evaluation and its stars. */
typedef struct lat_level {
	lat_seq seq;
	lat_result eval;    /* the full evaluation, examples included */
	int thresholds[3];  /* a search returns only levels with three bands */
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
	const lat_db *db;     /* a warm database of the right lattice and length, or NULL */
	/* Consulted by ga and map_elites (not exhaustive, which meets every
	 * sequence once); NULL: none. Never changes the result. */
	const lat_eval_cache *cache;
	void (*progress)(void *arg, const ga_generation *gen);
	void *progress_arg;
	const atomic_int *cancel;
	double deadline;      /* CLOCK_MONOTONIC seconds, 0: none */
} lat_search_opts;

/* Fills `p` with the defaults listed above. */
void lat_search_params_default(lat_search_params *p);

/*
 * Checks every field of `p`; returns 0 or SF_EINVAL naming the field and
 * its allowed range (length 8..20 square / 8..14 cubic, through the
 * database budget; exhaustive up to length 18, 2^18 sequences).
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
 * rare_optimum and star_ladder the fitness is positive exactly inside the
 * domain (lat_in_domain()) and 0 outside it.
 */
ga_eval lat_fitness_of(const lat_search_params *p, const lat_seq *seq,
		       const uint64_t hist[LAT_MAX_SCORE + 1], int max_score);

/*
 * 1 when the sequence with histogram `hist` (scores 0..max_score) can be a
 * level of the search `p`: it carries three star bands under p->stars and,
 * for rare_optimum and star_ladder, its H fraction lies in [h_min, h_max]
 * and it is not trivial (lat_trivial()). 0 otherwise. Pure.
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
 * three star bands, and for the two better fitnesses the H window and no
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
