/*
 * gen_hooks.c - what the terrain modules' place and decoy hooks (terrain.h)
 * may ask of the generator: where the recorded solution goes (the taps that
 * enter a cell, who stands on it), which cells are still free, draws from
 * the candidate's rng stream, and writing a cell. generate.c runs the hooks
 * (step 3 of its pipeline); every draw here comes from that one stream, so
 * the same seed still gives the same bytes.
 */
#include "digger.h"

#include "gen_internal.h"
#include "terrain.h"

/*
 * The taps (0-based, oldest first) at which some machine enters `cell` in
 * g->sol, and who entered each time (`who` may be NULL). Writes at most
 * `max` entries and returns the full count. A start does not count as an
 * entry.
 */
int dig_gen_entries(const dig_gen *g, int cell, uint8_t *tap, uint8_t *who, int max)
{
	int n = 0;
	for (int t = 0; t < g->sol->turns; t++)
		for (int m = 0; m < g->lv->machines; m++)
			if (((g->sol->moved[t] >> m) & 1u) && g->sol->pos[t + 1][m] == cell) {
				if (n < max) {
					if (tap)
						tap[n] = (uint8_t)t;
					if (who)
						who[n] = (uint8_t)m;
				}
				n++;
			}
	return n;
}

/* The machines (bit m) that ever stand on `cell` in g->sol, starts included. */
uint8_t dig_gen_visitors(const dig_gen *g, int cell)
{
	uint8_t v = 0;
	for (int t = 0; t <= g->sol->turns; t++)
		for (int m = 0; m < g->lv->machines; m++)
			if (g->sol->pos[t][m] == cell)
				v |= (uint8_t)(1u << m);
	return v;
}

/* Cells a hook may still use: on the grid, not taken, no machine's start. */
uint64_t dig_gen_free(const dig_gen *g)
{
	int cells = dig_cells_of(g->lv);
	uint64_t all = cells == 64 ? ~UINT64_C(0) : (UINT64_C(1) << cells) - 1;
	return all & ~g->taken & ~dig_starts_of(g->lv);
}

/* A uniformly random cell of `cells`, or -1 (drawing nothing) when empty. */
int dig_gen_pick(dig_gen *g, uint64_t cells)
{
	return dig_pick_cell(g->rng, cells);
}

/* True with probability p: one draw from g->rng. */
bool dig_gen_chance(dig_gen *g, double p)
{
	return rng_unit(g->rng) < p;
}

/*
 * A red herring's cell: with probability p (one draw), a uniformly random
 * free cell nobody stands on in g->sol (a second draw); -1 when the first
 * draw says no or no such cell is left.
 */
int dig_gen_decoy_cell(dig_gen *g, double p)
{
	if (!dig_gen_chance(g, p))
		return -1;
	return dig_gen_pick(g, dig_gen_free(g) & ~g->visited);
}

/* Makes `cell` terrain t with tparam and tmask, and adds it to g->taken. */
void dig_gen_put(dig_gen *g, int cell, int t, int tparam, int tmask)
{
	g->lv->terrain[cell] = (uint8_t)t;
	g->lv->tparam[cell] = (uint8_t)tparam;
	g->lv->tmask[cell] = (uint8_t)tmask;
	g->taken |= UINT64_C(1) << cell;
}
