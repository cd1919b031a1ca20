/*
 * terrain_stone.c - rock that blocks. tmask names the machines that may
 * pass through (devlog: "Machine Red can go through it, but not Machine
 * Green"); tmask 0 blocks everybody. Stone has no effect once entered, so
 * its only rule is can_enter; the engine turns a refusal into "this machine
 * does not move", which the chain rule then propagates to machines behind.
 */
#include "terrain.h"

#include "terrain_common.h"

/* Only machines named in the cell's tmask may enter. */
static bool stone_can_enter(const dig_level *lv, const dig_state *s, int cell, int m)
{
	(void)s;
	return (lv->tmask[cell] >> m) & 1u;
}

/* tparam must be 0; tmask may name only existing machines. */
static int stone_check(const dig_level *lv, int cell, sf_err *err)
{
	if (lv->tparam[cell] != 0)
		return sf_err_set(err, SF_EINVAL, "stone tparam %d must be 0", lv->tparam[cell]);
	return dig_terrain_check_mask(lv, cell, "stone", err);
}

/* ---- generation (generate.c calls these) ---- */

/*
 * Stone in hindsight (devlog "Stone"): a cell nobody stands on becomes
 * stone for everybody with probability p; a cell only one machine stands on
 * becomes stone only that machine may pass, with probability p / 2. Neither
 * changes the recorded solution, since nobody else ever enters.
 */
static int stone_place(dig_gen *g)
{
	int placed = 0, cells = g->lv->w * g->lv->h;
	uint64_t free = dig_gen_free(g);
	for (int c = 0; c < cells; c++) {
		if (!((free >> c) & 1u))
			continue;
		uint8_t who = dig_gen_visitors(g, c);
		if (who == 0 && dig_gen_chance(g, g->p)) {
			dig_gen_put(g, c, DIG_T_STONE, 0, 0);
			placed++;
		} else if (who != 0 && (who & (who - 1)) == 0 && dig_gen_chance(g, g->p / 2)) {
			dig_gen_put(g, c, DIG_T_STONE, 0, who);
			placed++;
		}
	}
	return placed;
}

/* A red herring: with probability p, one stone on a cell nobody visits,
 * half the time passable by one random machine. */
static int stone_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p);
	if (c < 0)
		return 0;
	int mask = 0;
	if (dig_gen_chance(g, 0.5))
		mask = 1 << rng_below(g->rng, (uint64_t)g->lv->machines);
	dig_gen_put(g, c, DIG_T_STONE, 0, mask);
	return 1;
}

const dig_terrain_ops dig_terrain_stone = {
	.name = "stone",
	.can_enter = stone_can_enter,
	.check = stone_check,
	.place = stone_place,
	.decoy = stone_decoy,
};
