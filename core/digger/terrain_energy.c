/*
 * terrain_energy.c - energy magic: the first machine to enter the cell
 * gives tparam turns back (turns_left += tparam). A one-shot, marked in
 * state.spent. Several machines may reach energy cells in one tap and each
 * cell pays out, which is why the generator places energy last.
 */
#include "terrain.h"

#include "terrain_common.h"

#define ENERGY_MAX 9 /* turns one cell gives back: a single digit for young players */

static bool energy_on_enter(const dig_level *lv, dig_state *s, dig_cmd *cmd, int cell, int m)
{
	(void)m;
	uint64_t bit = UINT64_C(1) << cell;
	if (s->spent & bit)
		return true;
	dig_set(s, cmd, &s->spent, 8, s->spent | bit);
	dig_set(s, cmd, &s->turns_left, 2, (uint16_t)(s->turns_left + lv->tparam[cell]));
	return true;
}

/* tparam: turns given, 1..ENERGY_MAX; tmask 0. */
static int energy_check(const dig_level *lv, int cell, sf_err *err)
{
	if (lv->tparam[cell] < 1 || lv->tparam[cell] > ENERGY_MAX)
		return sf_err_set(err, SF_EINVAL, "energy tparam (turns given) %d is outside 1..%d",
				  lv->tparam[cell], ENERGY_MAX);
	if (lv->tmask[cell] != 0)
		return sf_err_set(err, SF_EINVAL, "energy tmask %d must be 0", lv->tmask[cell]);
	return 0;
}

/* ---- generation (generate.c calls these) ---- */

/*
 * Energy in hindsight (devlog "Energy Magic"): over the cells the solution
 * enters, back to front by the tap that first enters each (1-based k), each
 * becomes with probability p an energy cell giving 1 turn back, and the
 * budget shown drops by 1. The devlog's important rule: never when k equals
 * the current budget, or the player runs out of turns one tap before
 * reaching it. Going back to front makes the rule enough: the j-th cell
 * placed has k < T - (j - 1) (T the taps), so if q placed cells are first
 * entered at tap i or later, i <= k_q <= T - q, and before tap i the player
 * has T - q - (i - 1) >= 1 turns left (the other placed cells paid out).
 * k never exceeds the budget: placing at k < budget leaves budget >= k,
 * and later cells have k no larger.
 */
static int energy_place(dig_gen *g)
{
	int cells = g->lv->w * g->lv->h, placed = 0, budget = g->lv->turns;
	uint8_t first[DIG_MAX_CELLS] = { 0 }; /* 1-based tap of the first entry; 0: none */
	uint64_t free = dig_gen_free(g);
	for (int c = 0; c < cells; c++) {
		uint8_t entry;
		if (((free >> c) & 1u) && dig_gen_entries(g, c, &entry, NULL, 1) > 0)
			first[c] = (uint8_t)(entry + 1);
	}
	for (int k = g->sol->turns; k >= 1; k--)
		for (int c = 0; c < cells; c++) {
			if (first[c] != k || k == budget || !dig_gen_chance(g, g->p))
				continue;
			dig_gen_put(g, c, DIG_T_ENERGY, 1, 0);
			budget--;
			placed++;
		}
	g->lv->turns = budget;
	return placed;
}

/* A red herring: with probability p, one energy cell (1 turn) nobody visits. */
static int energy_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p);
	if (c < 0)
		return 0;
	dig_gen_put(g, c, DIG_T_ENERGY, 1, 0);
	return 1;
}

const dig_terrain_ops dig_terrain_energy = {
	.name = "energy",
	.on_enter = energy_on_enter,
	.check = energy_check,
	.place = energy_place,
	.decoy = energy_decoy,
};
