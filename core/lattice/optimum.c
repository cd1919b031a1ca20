/*
 * optimum.c - the best fold of a long chain: replica-exchange Monte Carlo
 * with pull moves, then branch and bound; see optimum.h for the method and
 * why.
 *
 * The heuristic's replicas live on a torus of side 2^bits per axis (64, or
 * 128 for a 64-residue chain): wider than the chain is long, so no two
 * residues can meet across the wrap, and the chain may drift forever
 * without bounds checks. A site is x | y << bits | z << 2 bits; a grid of
 * one byte per site holds residue + 1 (0: empty).
 *
 * A move: a residue i and a side (its neighbour i + 1 or i - 1 as the
 * anchor). An internal pull move puts i on a free site L next to the anchor
 * and diagonal to i, and i's other neighbour on the fourth corner C of that
 * square (free, or already there); the rest of the chain on that side
 * follows, each residue into the site two places ahead of it, until one is
 * already next to its new neighbour. At the chain's end (no anchor) the
 * end residue jumps two free sites away and the chain follows the same way.
 * The energy change is counted over the moved stretch only.
 *
 * The branch and bound walks the same symmetry-reduced tree as the
 * enumerator (walk.h), on its padded grid.
 */
#include "optimum.h"

#include <stdlib.h>
#include <string.h>

#include "../rng.h"
#include "pullmove.h"
#include "walk.h"

#define OPT_MAX_REPLICAS 32
/* Moves per replica between two rounds of exchanges (Thachuk et al.'s phi). */
#define OPT_SWAP_EVERY 500
#define OPT_DEFAULT_TMIN 0.25
#define OPT_DEFAULT_TMAX 0.80

void lat_optimum_defaults(lat_optimum_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->seed = 1;
	cfg->moves = LAT_OPT_DEFAULT_MOVES;
	cfg->nodes = LAT_OPT_DEFAULT_NODES;
	cfg->replicas = LAT_OPT_DEFAULT_REPLICAS;
	cfg->t_min = OPT_DEFAULT_TMIN;
	cfg->t_max = OPT_DEFAULT_TMAX;
}

int lat_opt_chain_parse(const char *text, lat_opt_chain *out, sf_err *err)
{
	size_t n = strlen(text);
	memset(out, 0, sizeof *out);
	if (n < 2 || n > LAT_OPT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL, "sequence: length %zu, allowed 2..%d", n,
				  LAT_OPT_MAX_LEN);
	for (size_t i = 0; i < n; i++) {
		if (text[i] != 'H' && text[i] != 'P')
			return sf_err_set(err, SF_EINVAL, "sequence: character %zu is not H or P",
					  i);
		out->h[i] = text[i] == 'H';
	}
	out->len = (int)n;
	return 0;
}

void lat_opt_chain_from_seq(const lat_seq *seq, lat_opt_chain *out)
{
	memset(out, 0, sizeof *out);
	out->len = seq->len;
	memcpy(out->h, seq->h, (size_t)seq->len);
}

/* ---- the bound ---- */

/* Contact slots of residue j of an n-residue chain when nothing is placed. */
static int free_slots(int z, int n, int j)
{
	return j == 0 || j == n - 1 ? z - 1 : z - 2;
}

int lat_optimum_bound(lat_kind kind, const lat_opt_chain *chain)
{
	int z = kind == LAT_CUBIC ? 6 : 4, slots[2] = { 0, 0 };
	for (int j = 0; j < chain->len; j++)
		if (chain->h[j])
			slots[j & 1] += free_slots(z, chain->len, j);
	return slots[0] < slots[1] ? slots[0] : slots[1];
}

/* ---- the heuristic: replica-exchange Monte Carlo with pull moves ---- */

/* The torus, the move and the acceptance thresholds: pullmove.h. */

typedef struct replica {
	uint32_t pos[LAT_OPT_MAX_LEN];
	uint8_t *grid;
	int contacts;
} replica;

/* Largest contact loss a move can cause; thresholds cover every loss. */
#define OPT_MAX_LOSS (LAT_OPT_MAX_LEN * 3 - 1)

typedef struct remc {
	lat_pm_chain c;
	replica rep[OPT_MAX_REPLICAS];
	int nrep;
	int at[OPT_MAX_REPLICAS]; /* replica index at temperature slot s */
	double beta[OPT_MAX_REPLICAS];
	uint64_t accept[OPT_MAX_REPLICAS][OPT_MAX_LOSS + 1]; /* per slot, per contact loss */
	rng r;
} remc;

/* Runs the heuristic; fills score, fold, moves, moves_best of `out`. */
static int remc_run(lat_kind kind, const lat_opt_chain *chain, const lat_optimum_config *cfg,
		    int bound, lat_optimum_result *out)
{
	remc *m = calloc(1, sizeof *m);
	if (!m)
		return SF_ENOMEM;
	int n = chain->len, rc = 0;
	lat_pm_torus *t = &m->c.t;
	t->dim = kind == LAT_CUBIC ? 3 : 2;
	t->bits = n <= 63 ? 6 : 7;
	t->cells = 1u << (t->bits * t->dim);
	m->c.n = n;
	m->c.z = 2 * t->dim;
	m->c.h = chain->h;
	m->c.max_loss = OPT_MAX_LOSS;
	m->nrep = cfg->replicas > 0 ? cfg->replicas : LAT_OPT_DEFAULT_REPLICAS;
	double tmin = cfg->t_min > 0 ? cfg->t_min : OPT_DEFAULT_TMIN;
	double tmax = cfg->t_max > 0 ? cfg->t_max : OPT_DEFAULT_TMAX;
	rng_seed(&m->r, cfg->seed);
	for (int s = 0; s < m->nrep; s++) {
		/* linear ladder, as Thachuk et al. use */
		double temp = m->nrep == 1 ? tmin : tmin + (tmax - tmin) * s / (m->nrep - 1);
		m->beta[s] = 1 / temp;
		for (int d = 0; d <= OPT_MAX_LOSS; d++)
			m->accept[s][d] = lat_pm_threshold(lat_pm_exp_neg(d * m->beta[s]));
		m->at[s] = s;
		replica *rp = &m->rep[s];
		rp->grid = calloc(t->cells, 1);
		if (!rp->grid) {
			rc = SF_ENOMEM;
			goto done;
		}
		for (int q = 0; q < n; q++) {
			rp->pos[q] = (uint32_t)q; /* straight along x */
			rp->grid[q] = (uint8_t)(q + 1);
		}
		rp->contacts = 0;
	}
	uint32_t best_pos[LAT_OPT_MAX_LEN];
	for (int q = 0; q < n; q++)
		best_pos[q] = (uint32_t)q;
	int best = 0;
	uint64_t moves = 0, moves_best = 0;
	int target = cfg->target > 0 && cfg->target < bound ? cfg->target : bound;
	while (moves < cfg->moves && best < target) {
		for (int s = 0; s < m->nrep && best < target; s++) {
			replica *rp = &m->rep[m->at[s]];
			for (int q = 0; q < OPT_SWAP_EVERY && moves < cfg->moves; q++) {
				moves++;
				if (lat_pm_move(&m->c, m->accept[s], rp->pos, rp->grid, &m->r,
						&rp->contacts) &&
				    rp->contacts > best) {
					best = rp->contacts;
					moves_best = moves;
					memcpy(best_pos, rp->pos, (size_t)n * sizeof *best_pos);
					if (best >= target)
						break;
				}
			}
		}
		/* exchanges between neighbouring temperatures, coldest pair first */
		for (int s = 0; s + 1 < m->nrep; s++) {
			replica *cold = &m->rep[m->at[s]], *hot = &m->rep[m->at[s + 1]];
			/* energies are -contacts */
			double x = (m->beta[s] - m->beta[s + 1]) *
				   (double)(cold->contacts - hot->contacts);
			uint64_t r53 = rng_next(&m->r) >> 11;
			if (x <= 0 || r53 < lat_pm_threshold(lat_pm_exp_neg(x))) {
				int tmp = m->at[s];
				m->at[s] = m->at[s + 1];
				m->at[s + 1] = tmp;
			}
		}
	}
	out->score = best;
	out->moves = moves;
	out->moves_best = moves_best;
	lat_pm_fold(t, best_pos, n, out->fold);
done:
	for (int s = 0; s < m->nrep; s++)
		free(m->rep[s].grid);
	free(m);
	return rc;
}

/* ---- the exact search: branch and bound ---- */

typedef struct bnb {
	lat_geom g;
	int n, z, cubic;
	const uint8_t *h;
	uint8_t *grid; /* residue + 1 */
	int site[LAT_OPT_MAX_LEN];
	uint8_t dirs[LAT_OPT_MAX_LEN];
	int fslots[LAT_OPT_MAX_LEN + 1][2]; /* slots of unplaced H residues j >= k, by parity */
	int best;
	char best_fold[LAT_OPT_MAX_LEN];
	uint64_t nodes, budget;
	int aborted;
} bnb;

/* Contacts still possible once residues 0..k-1 are placed. */
static int bnb_bound(const bnb *b, int k)
{
	int slots[2] = { b->fslots[k][0], b->fslots[k][1] };
	for (int j = 0; j < k; j++) {
		if (!b->h[j])
			continue;
		int empty = 0;
		for (int d = 0; d < b->z; d++)
			empty += !b->grid[b->site[j] + b->g.off[d]];
		if (j == k - 1 && k < b->n)
			empty--; /* the next bond takes one */
		slots[j & 1] += empty;
	}
	int future = b->fslots[k][0] + b->fslots[k][1];
	if (slots[0] < future)
		future = slots[0];
	if (slots[1] < future)
		future = slots[1];
	return future;
}

static void bnb_dfs(bnb *b, int k, int phase, int contacts)
{
	if (b->aborted)
		return;
	if (k == b->n) {
		if (contacts > b->best) {
			b->best = contacts;
			for (int q = 0; q + 1 < b->n; q++)
				b->best_fold[q] = lat_dir_letter(b->dirs[q]);
			b->best_fold[b->n - 1] = '\0';
		}
		return;
	}
	if (++b->nodes > b->budget) {
		b->aborted = 1;
		return;
	}
	if (contacts + bnb_bound(b, k) <= b->best)
		return;
	uint8_t allowed = lat_phase_allowed[b->cubic][phase];
	int from = b->site[k - 1];
	for (int d = 0; d < b->g.ndir; d++) {
		if (!(allowed >> d & 1))
			continue;
		int q = from + b->g.off[d];
		if (b->grid[q])
			continue;
		int gain = 0;
		if (b->h[k])
			for (int e = 0; e < b->z; e++) {
				int o = b->grid[q + b->g.off[e]];
				if (o && o - 1 != k - 1 && b->h[o - 1])
					gain++;
			}
		b->grid[q] = (uint8_t)(k + 1);
		b->site[k] = q;
		b->dirs[k - 1] = (uint8_t)d;
		bnb_dfs(b, k + 1, lat_phase_next[b->cubic][phase][d], contacts + gain);
		b->grid[q] = 0;
		if (b->aborted)
			return;
	}
}

/*
 * Searches for a fold scoring more than out->score within `budget` nodes;
 * updates out->score and out->fold when it finds one, sets nodes and
 * exact_complete.
 */
static int bnb_run(lat_kind kind, const lat_opt_chain *chain, uint64_t budget,
		   lat_optimum_result *out)
{
	bnb *b = calloc(1, sizeof *b);
	if (!b)
		return SF_ENOMEM;
	int n = chain->len;
	lat_geom_init(&b->g, kind, n);
	b->grid = calloc((size_t)b->g.cells, 1);
	if (!b->grid) {
		free(b);
		return SF_ENOMEM;
	}
	b->n = n;
	b->cubic = kind == LAT_CUBIC;
	b->z = b->g.ndir;
	b->h = chain->h;
	b->budget = budget;
	b->best = out->score;
	for (int k = n - 1; k >= 0; k--) {
		b->fslots[k][0] = b->fslots[k + 1][0];
		b->fslots[k][1] = b->fslots[k + 1][1];
		if (chain->h[k])
			b->fslots[k][k & 1] += free_slots(b->z, n, k);
	}
	b->site[0] = b->g.center;
	b->grid[b->g.center] = 1;
	b->site[1] = b->g.center + b->g.off[LAT_R];
	b->grid[b->site[1]] = 2;
	b->dirs[0] = LAT_R;
	b->nodes = 1;
	if (n == 2) {
		if (b->best < 0) {
			b->best = 0;
			strcpy(b->best_fold, "R");
		}
	} else {
		bnb_dfs(b, 2, 0, 0);
	}
	if (b->best > out->score) {
		out->score = b->best;
		memcpy(out->fold, b->best_fold, (size_t)n);
	}
	out->nodes = b->nodes;
	out->exact_complete = !b->aborted;
	free(b->grid);
	free(b);
	return 0;
}

int lat_optimum(lat_kind kind, const lat_opt_chain *chain, const lat_optimum_config *cfg,
		lat_optimum_result *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	if (kind != LAT_SQUARE && kind != LAT_CUBIC)
		return sf_err_set(err, SF_EINVAL, "lattice: unknown kind %d", (int)kind);
	if (chain->len < 2 || chain->len > LAT_OPT_MAX_LEN)
		return sf_err_set(err, SF_EINVAL, "sequence: length %d, allowed 2..%d", chain->len,
				  LAT_OPT_MAX_LEN);
	if (cfg->replicas > OPT_MAX_REPLICAS)
		return sf_err_set(err, SF_EINVAL, "replicas: %d, allowed 1..%d", cfg->replicas,
				  OPT_MAX_REPLICAS);
	int n = chain->len;
	out->bound = lat_optimum_bound(kind, chain);
	/* the straight chain: always valid, score 0 */
	out->score = 0;
	memset(out->fold, 'R', (size_t)(n - 1));
	out->fold[n - 1] = '\0';
	if (cfg->moves > 0 && out->bound > 0) {
		int rc = remc_run(kind, chain, cfg, out->bound, out);
		if (rc)
			return sf_err_set(err, rc, "out of memory");
	}
	if (out->score >= out->bound) {
		out->proven = 1;
		return 0;
	}
	if (cfg->nodes > 0) {
		int rc = bnb_run(kind, chain, cfg->nodes, out);
		if (rc)
			return sf_err_set(err, rc, "out of memory");
		out->proven = out->exact_complete;
	}
	return 0;
}
