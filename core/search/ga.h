/*
 * ga.h - generic evolutionary search over opaque fixed-length genomes: the
 * paper's genetic algorithm and MAP-Elites, shared by every level kind.
 *
 * A genome is `length` elements of one byte; a problem supplies how to make
 * a random one, mutate it, cross two over, evaluate a batch of them and
 * describe one as text, and gets defaults for all but evaluation when its
 * elements are symbols 0..alphabet-1. Evaluation yields a fitness (>= 0,
 * higher is better) and two behaviour descriptors in [0, 1] that MAP-Elites
 * uses to place a genome in its archive.
 *
 * Determinism: every random choice comes from one xoshiro256** stream seeded
 * from the configuration's seed, drawn on the calling thread in a fixed
 * order; evaluation is the only part that may run on several threads, and
 * it must be a pure function of the genome. The same seed and configuration
 * therefore give the same result on any machine with any thread count.
 *
 * Memo: within a run no genome is evaluated twice. Each generation the
 * distinct genomes not yet seen are handed to the evaluator as one batch, so
 * an evaluator can put a cache (the service's SQLite table keyed by
 * sequence) or a thread pool behind it.
 *
 * Stopping: after every generation the run reports progress through a
 * callback and then checks an atomic cancel flag and a wall-clock deadline;
 * a stopped run still returns the best found so far, with its status saying
 * why it stopped.
 */
#ifndef SF_GA_H
#define SF_GA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "../rng.h"

#define GA_DESCRIPTORS 2

typedef struct ga_eval {
	double fitness;              /* finite, >= 0, higher is better; else taken as 0 */
	double desc[GA_DESCRIPTORS]; /* behaviour descriptors, each in [0, 1] */
} ga_eval;

typedef struct ga_problem {
	size_t length; /* elements (bytes) per genome, >= 1 */
	int alphabet;  /* for the default operators: elements are 0..alphabet-1 (2..256) */
	void *ctx;     /* passed to every operator */

	/*
	 * Evaluates `n` genomes stored back to back at `genomes` into out[0..n-1].
	 * Must be deterministic per genome and may use threads. Returns 0, or a
	 * negative SF_E* code with `err` set, which ends the run.
	 */
	int (*evaluate)(void *ctx, const uint8_t *genomes, size_t n, ga_eval *out, sf_err *err);

	/* Optional; NULL selects the default named in the comment. */
	/* Uniformly random symbols. */
	void (*random)(void *ctx, rng *r, uint8_t *genome);
	/* Each element, with probability `rate`, becomes a different random symbol. */
	void (*mutate)(void *ctx, rng *r, double rate, uint8_t *genome);
	/* Single point: a prefix of `a` (1..length-1 elements), then the rest of `b`. */
	void (*crossover)(void *ctx, rng *r, const uint8_t *a, const uint8_t *b, uint8_t *child);
	/* Writes a printable form to buf (size bytes, NUL-terminated); default: digits. */
	void (*describe)(void *ctx, const uint8_t *genome, char *buf, size_t size);
} ga_problem;

typedef enum ga_algorithm {
	GA_GENETIC,    /* the paper's generational GA */
	GA_MAP_ELITES, /* quality diversity over a grid of the two descriptors; a
			* newcomer takes a cell only when strictly fitter */
	GA_RANDOM,     /* the baseline: the GA's loop with every offspring a random
			* genome (elites still carried), so it draws exactly as many
			* genomes as the GA: population + (generations - 1) x
			* (population - elites) */
} ga_algorithm;

/* One generation's statistics: the series of the paper's Figure 3. */
typedef struct ga_generation {
	int generation;       /* 1-based */
	int generations;      /* of how many */
	double best;          /* best fitness in the population (MAP-Elites: the archive) */
	double mean;          /* mean fitness of the population (MAP-Elites: the archive) */
	int at_best;          /* individuals sharing the best fitness */
	int filled;           /* MAP-Elites: occupied cells; GA: 0 */
	uint64_t evaluations; /* distinct genomes evaluated so far */
} ga_generation;

typedef struct ga_config {
	ga_algorithm algorithm;
	uint64_t seed;
	int population; /* GA: individuals; MAP-Elites: offspring per generation */
	int generations;
	double mutation_rate; /* per element */
	int elites;           /* GA: carried over unchanged, 0..population-1 */
	/* GA: parent selection. 0: roulette on fitness (the paper's); k >= 2:
	 * tournament of k individuals drawn uniformly with replacement, the
	 * fittest winning (ties: the first drawn), 2..64. */
	int tournament;
	int bins; /* MAP-Elites: cells per descriptor (bins x bins grid) */
	/* Progress after every generation; may be NULL. Runs on the calling thread. */
	void (*progress)(void *arg, const ga_generation *gen);
	void *progress_arg;
	const atomic_int *cancel; /* stop when non-zero; may be NULL */
	double deadline;          /* stop after this CLOCK_MONOTONIC second; 0: none */
} ga_config;

typedef enum ga_status {
	GA_COMPLETED,
	GA_CANCELLED,
	GA_TIMED_OUT,
} ga_status;

typedef struct ga_result {
	ga_status status;
	size_t length;         /* bytes per genome */
	size_t count;          /* individuals returned */
	uint8_t *genomes;      /* count * length bytes, best first */
	ga_eval *evals;        /* count evaluations */
	int *cells;            /* MAP-Elites: archive cell of each (row-major); GA: NULL */
	ga_generation *series; /* one per generation run */
	int generations_run;
	uint64_t evaluations; /* distinct genomes evaluated */
} ga_result;

/* The paper's settings: population 30, 50 generations, mutation 0.1, 1 elite, roulette; 10 bins. */
void ga_config_default(ga_config *cfg);

/*
 * Checks a configuration; returns 0 or SF_EINVAL naming the field and its
 * allowed range (population 2..10000, generations 1..100000, mutation_rate
 * 0..1, elites 0..population-1, tournament 0 or 2..64, bins 1..256).
 */
int ga_config_check(const ga_config *cfg, sf_err *err);

/*
 * Runs the search. The result holds the best `count` distinct genomes ever
 * evaluated (GA; best first, ties broken by genome bytes) or the archive's
 * occupied cells (MAP-Elites; best first, at most `count` when count > 0).
 * Returns 0 (also when cancelled or timed out: see out->status), or a
 * negative code when the configuration is bad, memory runs out or the
 * evaluator fails; `out` is then empty. The caller frees `out` with
 * ga_result_free().
 */
int ga_run(const ga_problem *problem, const ga_config *cfg, size_t count, ga_result *out,
	   sf_err *err);

/* Frees what ga_run() allocated in `res` and empties it; safe on an emptied result. */
void ga_result_free(ga_result *res);

/*
 * Checks the GA settings a level kind's params carry, within the ranges a
 * service request may ask for (tighter than ga_config_check(), so that one
 * request cannot take the machine): population 2..1000, generations
 * 1..1000, mutation_rate 0..1, elites 0..population-1. Returns 0 or
 * SF_EINVAL naming the field and its range. Shared by every kind.
 */
int ga_params_check(int population, int generations, double mutation_rate, int elites, sf_err *err);

/* The CLOCK_MONOTONIC time in seconds, the clock of ga_config.deadline. */
double ga_clock_now(void);

/* "completed", "cancelled" or "timed_out". */
const char *ga_status_name(ga_status status);

/* "ga", "map_elites" or "random". */
const char *ga_algorithm_name(ga_algorithm algorithm);

/* Writes the problem's printable form of `genome` to buf (size bytes, NUL-terminated). */
void ga_describe(const ga_problem *p, const uint8_t *genome, char *buf, size_t size);

/* The default operators, for problems that want to wrap them. */
void ga_default_random(const ga_problem *p, rng *r, uint8_t *genome);
void ga_default_mutate(const ga_problem *p, rng *r, double rate, uint8_t *genome);
void ga_default_crossover(const ga_problem *p, rng *r, const uint8_t *a, const uint8_t *b,
			  uint8_t *child);

#endif
