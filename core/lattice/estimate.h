/*
 * estimate.h - the score histogram of a long HP chain, estimated by flatPERM.
 *
 * Exact enumeration (lattice.h) stops near square length 24 and cubic 17.
 * Past that, this module estimates the same histogram: for every score, the
 * number of conformations (same symmetry convention as lat_enumerate(): the
 * first bond points +x, the first turn +y, the first step out of the plane
 * +z) reaching it, with a relative standard error per score. The estimate is
 * labelled as one: callers must say "method": "estimate".
 *
 * Method: flatPERM (Prellberg and Krawczyk, PRL 92, 120602 (2004)), the
 * pruned-enriched Rosenbluth method made flat in (length, contacts). Chains
 * grow one residue at a time from the fixed first bond; each carries a
 * Rosenbluth weight (the product of the numbers of free, convention-allowed
 * sites met on the way), so that the mean weight reaching a state (n, m),
 * n residues and m HH contacts, is an unbiased estimate of the number of
 * conformations of the first n residues with m contacts. A chain whose
 * weight is above the running estimate for its state is copied onto
 * distinct next sites (enrichment), one below it is dropped with the
 * matching probability (pruning), so every tour leaves about one sample in
 * every reachable state, the rare high-contact ones included.
 *
 * Why flatPERM and not Wang-Landau: flatPERM counts absolute numbers (the
 * weights estimate walk counts), so the total number of conformations, which
 * is unknown past square 30 / cubic 20 bonds, comes out of the same run
 * instead of needing a normalisation; it needs no move set (Wang-Landau needs
 * ergodic pull or bond-rebridging moves to sample compact folds); growth with
 * the canonical first-bond/first-turn/first-plane rule yields the exact
 * engine's symmetry reduction directly; and a tour is a finite, seeded
 * computation, so a work budget in steps makes it deterministic with no
 * convergence schedule to tune.
 *
 * Error bars: the work is split into K independent runs (each its own seeded
 * stream, derived from the seed and the run index alone). The histogram is
 * the mean of the K per-run estimates; the stated error of a score is the
 * standard error of that mean relative to it, std / sqrt(K) / mean. Runs may
 * go to several threads; they are merged in run order, so the result is the
 * same bytes whatever the thread count, and on any machine (only integer
 * random draws and IEEE +, -, *, /, sqrt; the build has -ffp-contract=off).
 *
 * Accuracy (bench/bench_estimate.c, square lattice, the default budget and
 * runs): against exact enumeration at lengths 20-25, twelve chains, every score
 * holding at least 1e-6 of the conformations was within 2.7 % of the exact
 * count (the goal is 10 %), and 2 stated standard errors covered the exact
 * count in 132 of 137 such scores (96 %; the goal is 90 %); about 3.5 s per
 * chain on two threads. A fifth of the budget misses the goal on the rarest
 * scores (12 % off at L = 21), which is why the default is 1e8 steps. The
 * error bars are honest only where a score is sampled often: `samples` says
 * how often.
 *
 * Lengths: LAT_EST_MAX_LEN = 64 on both lattices (LAT_MAX_LEN, the
 * longest lat_seq); the chain is taken as a length and an array.
 */
#ifndef SF_LATTICE_ESTIMATE_H
#define SF_LATTICE_ESTIMATE_H

#include <stdint.h>

#include "../err.h"
#include "lattice.h"

/* Longest chain the estimator accepts, on either lattice. */
#define LAT_EST_MAX_LEN 64
/*
 * Bound on the score of a chain of LAT_EST_MAX_LEN residues: on the cubic
 * lattice an inner residue has 4 free neighbours and an end 5, so at most
 * (4 (L - 2) + 10) / 2 = 2 L + 1 contacts.
 */
#define LAT_EST_MAX_SCORE (2 * LAT_EST_MAX_LEN + 1)
/* Independent runs: at least 2 (an error needs a spread), at most this. */
#define LAT_EST_MAX_RUNS 64
/* Runs when opts->runs is 0. */
#define LAT_EST_DEFAULT_RUNS 32
/* Growth steps over all runs when opts->budget <= 0 (about 7 s on one core; see above). */
#define LAT_EST_DEFAULT_BUDGET 1e8

typedef struct lat_est_opts {
	uint64_t seed; /* the whole result is a function of the seed */
	int runs;      /* independent runs K, 2..LAT_EST_MAX_RUNS; 0: default */
	double budget; /* growth steps over all runs; <= 0: default */
	int threads;   /* threads running the runs, >= 1; does not change the result */
} lat_est_opts;

typedef struct lat_est_result {
	lat_kind lattice;
	int len;
	int runs;
	/* Highest score any run reached (a lower bound on the true maximum). */
	int max_score;
	/*
	 * Estimated conformations per score (mean over the runs). A score no run
	 * reached is 0 with error 0: rarer than the budget can see, not proven
	 * impossible.
	 */
	double hist[LAT_EST_MAX_SCORE + 1];
	/* Relative standard error of hist[s]: std over runs / sqrt(runs) / hist[s]. */
	double hist_error[LAT_EST_MAX_SCORE + 1];
	double total;       /* estimated conformations: the mean of the per-run totals */
	double total_error; /* its relative standard error, computed the same way */
	/* Full-length chains sampled per score, over all runs (how well each is seen). */
	uint64_t samples[LAT_EST_MAX_SCORE + 1];
	/*
	 * For every sampled score, a fold reaching it (len - 1 letters, in the
	 * exact engine's orientation: first bond R): the first one the lowest
	 * numbered run met. "" for a score no run reached.
	 */
	char examples[LAT_EST_MAX_SCORE + 1][LAT_EST_MAX_LEN];
	uint64_t steps; /* growth steps done, over all runs (>= the budget) */
	uint64_t tours; /* tours started, over all runs */
} lat_est_result;

/*
 * Estimates the score histogram of the chain h[0..len) (1 = H, 0 = P) on
 * `kind` by flatPERM and fills `out`. Requires 1 <= len <= LAT_EST_MAX_LEN.
 * Each of the K runs grows tours until it has done budget / K steps (a step
 * places one residue), finishing the tour under way, so `steps` can exceed
 * the budget by a tour (a few hundred steps at length 25). Chains of one or
 * two residues have one conformation, returned exactly with error 0.
 * The result depends only on kind, h, len, seed, runs and budget.
 * Returns 0; SF_EINVAL with a message naming the bad field and its allowed
 * range; or SF_ENOMEM. A thread that cannot be started leaves its runs to
 * the calling thread (same result, more time).
 */
int lat_estimate_histogram(lat_kind kind, const uint8_t *h, int len, const lat_est_opts *opts,
			   lat_est_result *out, sf_err *err);

#endif
