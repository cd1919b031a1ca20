/*
 * pullmove.h - internal: one chain on a torus grid and the pull move, shared
 * by the two searches that anneal folds (optimum.c's replica exchange and
 * solver.c's reference folder). Static inline, so that each search keeps
 * its inner loop in one translation unit.
 *
 * The torus: a site is x | y << bits | z << 2 bits, each coordinate taken
 * modulo 2^bits, so stepping never leaves the grid and no bound is
 * checked; 2^bits must exceed the chain's length (a chain cannot meet
 * itself around the torus) and be at least 8. The grid holds, per site,
 * 0 or the index + 1 of the residue on it.
 *
 * The pull move (Lesh, Mitzenmacher and Whitesides 2003): residue i moves
 * to a free site next to its neighbour a = i - e and diagonal to itself,
 * and the chain beyond it, in direction e, follows two sites behind until
 * it is connected again; at an end, the end residue jumps two sites and
 * the next one takes the site between. Metropolis acceptance through a
 * table of 53-bit integer thresholds per contact loss (lat_pm_threshold()
 * of lat_pm_exp_neg()), so that a seed gives the same moves on every
 * machine: only IEEE +, -, *, / go into the thresholds, never libm.
 */
#ifndef SF_LAT_PULLMOVE_H
#define SF_LAT_PULLMOVE_H

#include <stdint.h>

#include "../rng.h"
#include "lattice.h"
#include "walk.h"

typedef struct lat_pm_torus {
	int dim, bits;
	uint32_t cells;
} lat_pm_torus;

/* The site one step from `s` in direction d (walk.h's order: R L U D F B). */
static inline uint32_t lat_pm_step(const lat_pm_torus *t, uint32_t s, int d)
{
	int shift = t->bits * (d >> 1);
	uint32_t mask = ((1u << t->bits) - 1) << shift;
	uint32_t moved = d & 1 ? s - (1u << shift) : s + (1u << shift);
	return (s & ~mask) | (moved & mask);
}

/*
 * The direction from a to b when they are neighbours, else -1: the one
 * axis whose coordinates differ, by +1 (direction 2 axis) or -1 (2 axis +
 * 1) around the torus.
 */
static inline int lat_pm_dir(const lat_pm_torus *t, uint32_t a, uint32_t b)
{
	uint32_t m = (1u << t->bits) - 1;
	int dir = -1;
	for (int k = 0; k < t->dim; k++) {
		uint32_t fa = a >> (t->bits * k) & m, fb = b >> (t->bits * k) & m;
		if (fa == fb)
			continue;
		uint32_t d = (fb - fa) & m;
		if (dir >= 0 || (d != 1 && d != m))
			return -1;
		dir = 2 * k + (d == m);
	}
	return dir;
}

/* The fixed part of a chain: its torus, length, coordination and residues. */
typedef struct lat_pm_chain {
	lat_pm_torus t;
	int n, z;         /* residues; neighbours per site (4 or 6) */
	const uint8_t *h; /* 1 for H */
	int max_loss;     /* losses above this are refused without a draw */
} lat_pm_chain;

/* Contacts that involve at least one residue of [lo, hi], on `grid`. */
static inline int lat_pm_range_contacts(const lat_pm_chain *c, const uint32_t *pos,
					const uint8_t *grid, int lo, int hi)
{
	int twice = 0;
	for (int i = lo; i <= hi; i++) {
		if (!c->h[i])
			continue;
		for (int d = 0; d < c->z; d++) {
			int o = grid[lat_pm_step(&c->t, pos[i], d)];
			if (!o)
				continue;
			int j = o - 1;
			if (!c->h[j] || j == i - 1 || j == i + 1)
				continue;
			twice += j >= lo && j <= hi ? 1 : 2;
		}
	}
	return twice / 2;
}

/*
 * One attempted pull move on the chain at `pos` (on `grid`), drawn from
 * `r`; a loss of L contacts (L <= c->max_loss) is accepted when a draw
 * falls under accept[L]. Returns 1 and adds the change to *contacts when
 * it was applied; 0 (nothing changed) otherwise.
 */
static inline int lat_pm_move(const lat_pm_chain *c, const uint64_t *accept, uint32_t *pos,
			      uint8_t *grid, rng *r, int *contacts)
{
	const lat_pm_torus *t = &c->t;
	int n = c->n;
	uint32_t nw[LAT_MAX_LEN];
	uint64_t pick = rng_next(r);
	int i = (int)(pick % (uint64_t)n);
	int e = (pick >> 32) & 1 ? 1 : -1; /* the direction the chain follows in */
	int a = i - e, k, j;
	if (a < 0 || a >= n) {
		/* end move: i jumps two sites away, i + e takes the one between */
		int d1 = (int)((pick >> 40) % (uint64_t)c->z),
		    d2 = (int)((pick >> 48) % (uint64_t)c->z);
		uint32_t sa = lat_pm_step(t, pos[i], d1), sb = lat_pm_step(t, sa, d2);
		if (grid[sa] || grid[sb])
			return 0;
		nw[i] = sb;
		nw[i + e] = sa;
		k = i + e;
		j = i + 2 * e;
	} else {
		int v = lat_pm_dir(t, pos[a], pos[i]);
		int u = (int)((pick >> 40) % (uint64_t)(c->z - 2));
		if (u >= (v & ~1))
			u += 2; /* skip the bond's own axis */
		uint32_t sl = lat_pm_step(t, pos[a], u), sc = lat_pm_step(t, pos[i], u);
		if (grid[sl])
			return 0;
		nw[i] = sl;
		k = i;
		j = i + e;
		if (j >= 0 && j < n) {
			if (sc == pos[j]) {
				j = -1; /* a corner flip: nothing follows */
			} else {
				if (grid[sc])
					return 0;
				nw[j] = sc;
				k = j;
				j += e;
			}
		}
	}
	while (j >= 0 && j < n && lat_pm_dir(t, pos[j], nw[j - e]) < 0) {
		nw[j] = pos[j - 2 * e];
		k = j;
		j += e;
	}
	int lo = i < k ? i : k, hi = i < k ? k : i;
	int before = lat_pm_range_contacts(c, pos, grid, lo, hi);
	uint32_t old[LAT_MAX_LEN];
	for (int q = lo; q <= hi; q++) {
		old[q] = pos[q];
		grid[old[q]] = 0;
	}
	for (int q = lo; q <= hi; q++) {
		pos[q] = nw[q];
		grid[nw[q]] = (uint8_t)(q + 1);
	}
	int delta = lat_pm_range_contacts(c, pos, grid, lo, hi) - before;
	if (delta < 0 && (-delta > c->max_loss || (rng_next(r) >> 11) >= accept[-delta])) {
		for (int q = lo; q <= hi; q++)
			grid[pos[q]] = 0;
		for (int q = lo; q <= hi; q++) {
			pos[q] = old[q];
			grid[old[q]] = (uint8_t)(q + 1);
		}
		return 0;
	}
	*contacts += delta;
	return 1;
}

/* The fold of the chain at `pos`: n - 1 letters and NUL into `fold`. */
static inline void lat_pm_fold(const lat_pm_torus *t, const uint32_t *pos, int n, char *fold)
{
	for (int k = 0; k + 1 < n; k++)
		fold[k] = lat_dir_letter(lat_pm_dir(t, pos[k], pos[k + 1]));
	fold[n - 1] = '\0';
}

/* exp(-x) for x >= 0, the same bits on every machine (basic IEEE operations only). */
static inline double lat_pm_exp_neg(double x)
{
	if (x > 700)
		return 0;
	int halvings = 0;
	while (x > 0.125) {
		x /= 2;
		halvings++;
	}
	double term = 1, sum = 1;
	for (int k = 1; k < 16; k++) {
		term *= -x / k;
		sum += term;
	}
	while (halvings-- > 0)
		sum *= sum;
	return sum;
}

/* A probability as a 53-bit threshold for rng_next() >> 11. */
static inline uint64_t lat_pm_threshold(double p)
{
	if (p >= 1)
		return 1ull << 53;
	if (p <= 0)
		return 0;
	return (uint64_t)(p * 9007199254740992.0);
}

#endif
