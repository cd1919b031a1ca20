/*
 * solver.c - the reference folder: greedy growth, then annealing with pull
 * moves; see solver.h for the method, its budget and why.
 *
 * Who runs where: lat_solver_run() hands the runs to `threads` workers
 * (par_run), worker w taking runs w, w + threads, ...; each worker owns
 * one torus grid, and each run writes only its own slots of the result
 * arrays (its best score and fold), merged in run order afterwards. A run
 * depends only on the seed and its index, so the thread count never shows.
 *
 * The torus, the pull move and the acceptance thresholds are pullmove.h's,
 * shared with optimum.c's replica exchange; here one chain at a time on a
 * torus sized to it (2^bits > length, at least 8): 32 x 32 sites at
 * length 16, so a run's grid stays in the first-level cache.
 */
#include "solver.h"

#include <stdlib.h>
#include <string.h>

#include "../par.h"
#include "../rng.h"
#include "optimum.h"
#include "pullmove.h"
#include "walk.h"

#define SOLVER_MAX_RUNS 4096
/* Losses beyond this are never accepted at the ladder's temperatures
 * (exp(-64 / 1.0) is below 2^-53). */
#define SOLVER_MAX_LOSS 64

/* The temperature ladder, in contacts: 1.0 * (0.15)^(k / 7), rounded. */
static const double ladder[LAT_SOLVER_STAGES] = { 1.0,   0.763, 0.582, 0.443,
						  0.338, 0.258, 0.197, 0.15 };

uint64_t lat_solver_seed(lat_kind kind, const lat_seq *seq)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	h = (h ^ (uint64_t)kind) * 0x100000001b3ull;
	h = (h ^ (uint64_t)seq->len) * 0x100000001b3ull;
	for (int i = 0; i < seq->len; i++)
		h = (h ^ (uint64_t)(seq->h[i] ? 'H' : 'P')) * 0x100000001b3ull;
	/* splitmix64's finaliser, so that near sequences get far seeds */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

void lat_solver_defaults(lat_solver_config *cfg, lat_kind kind, const lat_seq *seq)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->seed = lat_solver_seed(kind, seq);
	cfg->runs = LAT_SOLVER_RUNS;
	cfg->steps = LAT_SOLVER_STEPS;
	cfg->threads = 1;
}

double lat_solver_reach(const lat_solver_result *res, int score)
{
	if (score <= 0)
		return 1;
	if (res->runs <= 0 || score > res->best)
		return 0;
	return (double)res->hits[score] / (double)res->runs;
}

/* ---- one chain on a torus (pullmove.h) ---- */

typedef struct solver {
	/* shared by every run, read-only */
	lat_pm_chain c; /* torus, length, coordination, residues */
	int bound;
	uint64_t steps;
	uint64_t accept[LAT_SOLVER_STAGES][SOLVER_MAX_LOSS + 1];
	rng base;
	int runs, threads;
	/* per run, written by the run's worker only */
	int *best;
	char *folds; /* runs * LAT_MAX_LEN */
	int failed;  /* set (by any worker) when a grid cannot be allocated */
} solver;

typedef struct chain {
	uint32_t pos[LAT_MAX_LEN];
	uint8_t *grid;
	int contacts;
	rng r;
} chain;

/* Removes the chain from its grid. */
static void chain_clear(const solver *sv, chain *c, int placed)
{
	for (int q = 0; q < placed; q++)
		c->grid[c->pos[q]] = 0;
	(void)sv;
}

/*
 * Greedy growth (solver.h, step 1). Leaves the chain on the grid with its
 * contacts counted.
 */
static void chain_grow(const solver *sv, chain *c)
{
	const lat_pm_torus *t = &sv->c.t;
	int n = sv->c.n;
	for (int attempt = 0; attempt <= LAT_SOLVER_REGROWS; attempt++) {
		int placed = 2, contacts = 0;
		c->pos[0] = 0;
		c->pos[1] = lat_pm_step(t, 0, LAT_R);
		c->grid[c->pos[0]] = 1;
		c->grid[c->pos[1]] = 2;
		if (attempt == LAT_SOLVER_REGROWS) {
			/* every growth trapped itself: the straight chain */
			for (int k = 2; k < n; k++) {
				c->pos[k] = lat_pm_step(t, c->pos[k - 1], LAT_R);
				c->grid[c->pos[k]] = (uint8_t)(k + 1);
			}
			c->contacts = 0;
			return;
		}
		for (int k = 2; k < n; k++) {
			uint32_t cand[6];
			int ncand = 0, most = -1;
			for (int d = 0; d < sv->c.z; d++) {
				uint32_t s = lat_pm_step(t, c->pos[k - 1], d);
				if (c->grid[s])
					continue;
				int gain = 0;
				if (sv->c.h[k])
					for (int e = 0; e < sv->c.z; e++) {
						int o = c->grid[lat_pm_step(t, s, e)];
						gain += o && o - 1 != k - 1 && sv->c.h[o - 1];
					}
				if (gain > most) {
					most = gain;
					ncand = 0;
				}
				if (gain == most)
					cand[ncand++] = s;
			}
			if (!ncand)
				break; /* trapped */
			uint32_t s = cand[ncand == 1 ? 0 : rng_below(&c->r, (uint64_t)ncand)];
			c->pos[k] = s;
			c->grid[s] = (uint8_t)(k + 1);
			contacts += most;
			placed++;
		}
		if (placed == n) {
			c->contacts = contacts;
			return;
		}
		chain_clear(sv, c, placed);
	}
}

/* Run `run` on the worker's grid: its best score and fold into the slots. */
static void solve_one(solver *sv, uint8_t *grid, int run)
{
	chain c;
	c.grid = grid;
	c.r = rng_split(&sv->base, (uint64_t)run);
	chain_grow(sv, &c);
	int best = c.contacts;
	char *fold = sv->folds + (size_t)run * LAT_MAX_LEN;
	lat_pm_fold(&sv->c.t, c.pos, sv->c.n, fold);
	for (int stage = 0; stage < LAT_SOLVER_STAGES && best < sv->bound; stage++) {
		uint64_t end = sv->steps * (uint64_t)(stage + 1) / LAT_SOLVER_STAGES;
		for (uint64_t m = sv->steps * (uint64_t)stage / LAT_SOLVER_STAGES; m < end; m++) {
			if (lat_pm_move(&sv->c, sv->accept[stage], c.pos, c.grid, &c.r,
					&c.contacts) &&
			    c.contacts > best) {
				best = c.contacts;
				lat_pm_fold(&sv->c.t, c.pos, sv->c.n, fold);
				if (best >= sv->bound)
					break; /* nothing can beat it: the rest changes nothing */
			}
		}
	}
	sv->best[run] = best;
	chain_clear(sv, &c, sv->c.n);
}

static void solve_worker(void *arg, int worker)
{
	solver *sv = arg;
	uint8_t *grid = calloc(sv->c.t.cells, 1);
	if (!grid) {
		sv->failed = 1; /* any worker: read after the join */
		return;
	}
	for (int run = worker; run < sv->runs; run += sv->threads)
		solve_one(sv, grid, run);
	free(grid);
}

int lat_solver_run(lat_kind kind, const lat_seq *seq, const lat_solver_config *cfg,
		   lat_solver_result *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	if (kind != LAT_SQUARE && kind != LAT_CUBIC)
		return sf_err_set(err, SF_EINVAL, "lattice: unknown kind %d", (int)kind);
	if (seq->len < 2 || seq->len > LAT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL, "sequence: length %d, allowed 2..%d", seq->len,
				  LAT_MAX_LEN);
	if (cfg->runs < 1 || cfg->runs > SOLVER_MAX_RUNS)
		return sf_err_set(err, SF_EINVAL, "runs: %d, allowed 1..%d", cfg->runs,
				  SOLVER_MAX_RUNS);
	if (cfg->threads < 1 || cfg->threads > 1024)
		return sf_err_set(err, SF_EINVAL, "threads: %d, allowed 1..1024", cfg->threads);
	solver *sv = calloc(1, sizeof *sv);
	if (!sv)
		return sf_err_set(err, SF_ENOMEM, "out of memory for the solver");
	int n = seq->len, rc = 0;
	sv->c.t.dim = kind == LAT_CUBIC ? 3 : 2;
	sv->c.t.bits = 3;
	while ((1 << sv->c.t.bits) <= n)
		sv->c.t.bits++;
	sv->c.t.cells = 1u << (sv->c.t.bits * sv->c.t.dim);
	sv->c.n = n;
	sv->c.z = 2 * sv->c.t.dim;
	sv->c.h = seq->h;
	sv->c.max_loss = SOLVER_MAX_LOSS;
	sv->steps = cfg->steps;
	lat_opt_chain oc;
	lat_opt_chain_from_seq(seq, &oc);
	sv->bound = lat_optimum_bound(kind, &oc);
	for (int s = 0; s < LAT_SOLVER_STAGES; s++)
		for (int d = 0; d <= SOLVER_MAX_LOSS; d++)
			sv->accept[s][d] = lat_pm_threshold(lat_pm_exp_neg(d / ladder[s]));
	rng_seed(&sv->base, cfg->seed);
	sv->runs = cfg->runs;
	sv->threads = cfg->threads < cfg->runs ? cfg->threads : cfg->runs;
	sv->best = calloc((size_t)cfg->runs, sizeof *sv->best);
	sv->folds = calloc((size_t)cfg->runs, LAT_MAX_LEN);
	if (!sv->best || !sv->folds) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory for the solver");
		goto done;
	}
	if ((rc = par_run(sv->threads, solve_worker, sv, err)))
		goto done;
	if (sv->failed) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory for the solver's grid");
		goto done;
	}
	out->runs = cfg->runs;
	out->steps = cfg->steps;
	out->best = -1;
	for (int run = 0; run < cfg->runs; run++) {
		int b = sv->best[run];
		for (int s = 0; s <= b; s++)
			out->hits[s]++;
		if (b > out->best) {
			out->best = b;
			memcpy(out->fold, sv->folds + (size_t)run * LAT_MAX_LEN, LAT_MAX_LEN);
		}
	}
done:
	free(sv->best);
	free(sv->folds);
	free(sv);
	if (rc)
		memset(out, 0, sizeof *out);
	return rc;
}
