/*
 * estimate.c - flatPERM estimate of the score histogram of one HP chain
 * (the design and the choice of method are in estimate.h).
 *
 * One run is a sequence of tours. A tour starts from the fixed first bond
 * (residues 0 and 1 on +x, weight 1) and is a depth-first recursion: a chain
 * of n residues with m contacts and weight W first adds W to wsum[n][m]
 * (the run's estimate of the count of that state is wsum / tours), then,
 * unless n is the full length, compares W with that estimate, r = W tours /
 * wsum[n][m], and
 *  - r >= 1: continues on c distinct free sites of the a allowed, chosen
 *    uniformly, each child weighing W a / c, where c is floor(r) or, with
 *    probability r - floor(r), one more, and at most a (rounding r down
 *    every time left the error bars too narrow: over 10 seeds of the
 *    published L = 20 histogram the rms deviation from the exact counts was
 *    1.30 stated standard errors, against 0.97 with this rounding);
 *  - r < 1: continues on one site with probability r, the child weighing
 *    (W / r) a, else stops.
 * Both keep the expected weight reaching every later state unchanged, given
 * everything done before the decision; since r only reads that past (the
 * running sums, this tour's earlier samples included), each run's estimate
 * is unbiased, while the number of samples per state and tour stays near
 * one: flat in (n, m).
 *
 * Symmetry: the growth only offers the sites the exact engine's canonical
 * form allows (while the chain is straight: +x or +y; while it is planar on
 * the cubic lattice: the four in-plane directions or +z), so the weights
 * count symmetry-reduced conformations with no correction afterwards.
 *
 * Threads own whole runs: each run has its own stream (rng_split of the seed
 * by the run index), grid and sums, and writes only its own row of the
 * per-run results; the merge reads the rows in run order.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"
#include "estimate.h"

#define EST_SCORES (LAT_EST_MAX_SCORE + 1)

/* Growth phases of the canonical form. */
enum { EST_STRAIGHT, EST_PLANAR, EST_FREE };

/* Direction indices: R L U D F B, as the exact engine orders them. */
enum { DIR_R, DIR_L, DIR_U, DIR_D, DIR_F, DIR_B };

typedef struct est_run {
	/* inputs */
	const uint8_t *h;
	int len, ndir;
	int off[6];
	double budget;
	/* state */
	rng r;
	uint8_t *grid; /* 0 empty, 1 P, 2 H: contacts are sums of grid >> 1 */
	double tours;  /* tours started, as the divisor of the estimate */
	uint64_t steps;
	double *wsum; /* [len + 1][EST_SCORES] */
	/* outputs */
	double *hist;      /* this run's estimate at full length, EST_SCORES */
	uint64_t *samples; /* full-length samples per score, EST_SCORES */
	uint64_t ntours;
	/* The first full-length fold this run met per score ("" while none). */
	char (*examples)[LAT_EST_MAX_LEN];
	char path[LAT_EST_MAX_LEN]; /* the letters of the bonds placed so far */
} est_run;

/* Contacts gained by putting residue k on free site q (its predecessor is a neighbour). */
static int est_contacts(const est_run *run, int k, int q)
{
	if (!run->h[k])
		return 0;
	int c = 0;
	for (int e = 0; e < run->ndir; e++)
		c += run->grid[q + run->off[e]] >> 1;
	return c - run->h[k - 1];
}

/*
 * The chain holds residues 0..n-1, the last on `site`, with m contacts,
 * weight w and canonical phase `phase`.
 */
static void est_grow(est_run *run, int n, int site, int m, double w, int phase)
{
	double *cell = &run->wsum[(size_t)n * EST_SCORES + (size_t)m];
	*cell += w;
	run->steps++;
	if (n == run->len) {
		if (!run->samples[m]++)
			memcpy(run->examples[m], run->path, (size_t)n); /* n - 1 letters, NUL */
		return;
	}

	/* The allowed free sites. */
	int dirs[6], a = 0;
	for (int d = 0; d < run->ndir; d++) {
		if (phase == EST_STRAIGHT && d != DIR_R && d != DIR_U)
			continue;
		if (phase == EST_PLANAR && d == DIR_B)
			continue;
		if (run->grid[site + run->off[d]] == 0)
			dirs[a++] = d;
	}
	if (a == 0)
		return;

	double ratio = w * run->tours / *cell;
	int copies;
	double child;
	if (ratio >= 1) {
		/* floor(r) or floor(r) + 1 copies, so that about r go on; at most a. */
		if (ratio >= a) {
			copies = a;
		} else {
			copies = (int)ratio;
			if (rng_unit(&run->r) < ratio - copies)
				copies++;
		}
		child = w * a / copies;
	} else {
		if (rng_unit(&run->r) >= ratio)
			return;
		copies = 1;
		child = w / ratio * a;
	}

	/* `copies` distinct directions, uniformly: a partial Fisher-Yates shuffle. */
	for (int i = 0; i < copies; i++) {
		int j = i + (int)rng_below(&run->r, (uint64_t)(a - i));
		int d = dirs[j];
		dirs[j] = dirs[i];
		dirs[i] = d;

		int q = site + run->off[d];
		int gained = est_contacts(run, n, q);
		int next = phase;
		if (phase == EST_STRAIGHT && d == DIR_U)
			next = run->ndir == 6 ? EST_PLANAR : EST_FREE;
		else if (phase == EST_PLANAR && d == DIR_F)
			next = EST_FREE;
		run->grid[q] = (uint8_t)(1 + run->h[n]);
		run->path[n - 1] = "RLUDFB"[d];
		est_grow(run, n + 1, q, m + gained, child, next);
		run->grid[q] = 0;
	}
}

/* One run: tours until the budget is spent, then this run's histogram. */
static void est_run_all(est_run *run)
{
	int side = 2 * run->len + 3;
	int centre = run->len + 1;
	int origin = centre + side * centre + (run->ndir == 6 ? side * side * centre : 0);
	int first = origin + run->off[DIR_R];
	run->grid[origin] = (uint8_t)(1 + run->h[0]);
	run->grid[first] = (uint8_t)(1 + run->h[1]);
	memset(run->path, 0, sizeof run->path);
	run->path[0] = 'R';
	while ((double)run->steps < run->budget) {
		run->tours += 1;
		run->ntours++;
		est_grow(run, 2, first, 0, 1.0, EST_STRAIGHT);
	}
	const double *row = &run->wsum[(size_t)run->len * EST_SCORES];
	for (int s = 0; s < EST_SCORES; s++)
		run->hist[s] = row[s] / run->tours;
}

typedef struct est_job {
	est_run *runs;
	int nruns, stride, start;
} est_job;

static void *est_worker(void *arg)
{
	est_job *job = arg;
	for (int k = job->start; k < job->nruns; k += job->stride)
		est_run_all(&job->runs[k]);
	return NULL;
}

/* Runs every run over `threads` threads; runs a thread could not take run here. */
static void est_run_threads(est_run *runs, int nruns, int threads)
{
	if (threads > nruns)
		threads = nruns;
	pthread_t tid[LAT_EST_MAX_RUNS];
	est_job jobs[LAT_EST_MAX_RUNS];
	int started[LAT_EST_MAX_RUNS] = { 0 };
	for (int t = 0; t < threads; t++)
		jobs[t] = (est_job){ .runs = runs, .nruns = nruns, .stride = threads, .start = t };
	for (int t = 1; t < threads; t++)
		started[t] = pthread_create(&tid[t], NULL, est_worker, &jobs[t]) == 0;
	est_worker(&jobs[0]);
	for (int t = 1; t < threads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			est_worker(&jobs[t]);
	}
}

/* Mean and relative standard error of x[0..k) read with stride `stride`. */
static void est_mean_error(const double *x, int k, size_t stride, double *mean, double *rel)
{
	double sum = 0;
	for (int i = 0; i < k; i++)
		sum += x[(size_t)i * stride];
	double mu = sum / k, ss = 0;
	for (int i = 0; i < k; i++) {
		double d = x[(size_t)i * stride] - mu;
		ss += d * d;
	}
	*mean = mu;
	*rel = mu > 0 ? sqrt(ss / (k - 1) / k) / mu : 0;
}

int lat_estimate_histogram(lat_kind kind, const uint8_t *h, int len, const lat_est_opts *opts,
			   lat_est_result *out, sf_err *err)
{
	if (kind != LAT_SQUARE && kind != LAT_CUBIC)
		return sf_err_set(err, SF_EINVAL, "lattice must be square or cubic");
	if (len < 1 || len > LAT_EST_MAX_LEN)
		return sf_err_set(err, SF_EINVAL, "length %d is out of range (allowed: 1..%d)", len,
				  LAT_EST_MAX_LEN);
	if (!h || !opts || !out)
		return sf_err_set(err, SF_EINVAL, "sequence, options and result are required");
	for (int i = 0; i < len; i++)
		if (h[i] > 1)
			return sf_err_set(err, SF_EINVAL,
					  "residue %d is %d (allowed: 0 for P, 1 for H)", i + 1,
					  h[i]);
	int nruns = opts->runs ? opts->runs : LAT_EST_DEFAULT_RUNS;
	if (nruns < 2 || nruns > LAT_EST_MAX_RUNS)
		return sf_err_set(err, SF_EINVAL,
				  "runs %d is out of range (allowed: 2..%d, 0 = %d)", opts->runs,
				  LAT_EST_MAX_RUNS, LAT_EST_DEFAULT_RUNS);
	if (opts->threads < 1)
		return sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: >= 1)",
				  opts->threads);
	double budget = opts->budget > 0 ? opts->budget : LAT_EST_DEFAULT_BUDGET;
	if (!(budget <= 1e15))
		return sf_err_set(err, SF_EINVAL, "budget %g is out of range (allowed: <= 1e15)",
				  budget);

	memset(out, 0, sizeof *out);
	out->lattice = kind;
	out->len = len;
	out->runs = nruns;
	if (len <= 2) {
		out->hist[0] = out->total = 1;
		out->samples[0] = 1;
		if (len == 2)
			out->examples[0][0] = 'R';
		return 0;
	}

	int ndir = kind == LAT_CUBIC ? 6 : 4;
	size_t side = (size_t)(2 * len + 3);
	size_t cells = ndir == 6 ? side * side * side : side * side;
	size_t wcells = (size_t)(len + 1) * EST_SCORES;
	est_run *runs = calloc((size_t)nruns, sizeof *runs);
	double *hist = calloc((size_t)nruns * EST_SCORES, sizeof *hist);
	uint64_t *samples = calloc((size_t)nruns * EST_SCORES, sizeof *samples);
	char(*examples)[LAT_EST_MAX_LEN] = calloc((size_t)nruns * EST_SCORES, sizeof *examples);
	int rc = 0;
	if (!runs || !hist || !samples || !examples)
		goto nomem;
	rng base;
	rng_seed(&base, opts->seed);
	for (int k = 0; k < nruns; k++) {
		est_run *run = &runs[k];
		run->h = h;
		run->len = len;
		run->ndir = ndir;
		int s = (int)side;
		int offs[6] = { 1, -1, s, -s, s * s, -s * s };
		memcpy(run->off, offs, sizeof offs);
		run->budget = budget / nruns;
		run->r = rng_split(&base, (uint64_t)k);
		run->grid = calloc(cells, 1);
		run->wsum = calloc(wcells, sizeof *run->wsum);
		run->hist = &hist[(size_t)k * EST_SCORES];
		run->samples = &samples[(size_t)k * EST_SCORES];
		run->examples = &examples[(size_t)k * EST_SCORES];
		if (!run->grid || !run->wsum)
			goto nomem;
	}

	est_run_threads(runs, nruns, opts->threads);

	double totals[LAT_EST_MAX_RUNS];
	for (int k = 0; k < nruns; k++) {
		double t = 0;
		for (int s = 0; s < EST_SCORES; s++)
			t += hist[(size_t)k * EST_SCORES + (size_t)s];
		totals[k] = t;
		out->steps += runs[k].steps;
		out->tours += runs[k].ntours;
	}
	est_mean_error(totals, nruns, 1, &out->total, &out->total_error);
	out->max_score = 0;
	for (int s = 0; s < EST_SCORES; s++) {
		est_mean_error(&hist[s], nruns, EST_SCORES, &out->hist[s], &out->hist_error[s]);
		for (int k = 0; k < nruns; k++) {
			size_t at = (size_t)k * EST_SCORES + (size_t)s;
			if (samples[at] && !out->samples[s])
				memcpy(out->examples[s], examples[at], LAT_EST_MAX_LEN);
			out->samples[s] += samples[at];
		}
		if (out->hist[s] > 0)
			out->max_score = s;
	}
	goto done;

nomem:
	rc = sf_err_set(err, SF_ENOMEM, "out of memory for the estimate of length %d", len);
done:
	if (runs)
		for (int k = 0; k < nruns; k++) {
			free(runs[k].grid);
			free(runs[k].wsum);
		}
	free(runs);
	free(hist);
	free(samples);
	free(examples);
	return rc;
}
