/*
 * terrain_treasure.c - arrow treasure. The first machine to enter the cell
 * (whichever machine, whichever turn) gives one more use to each of the
 * cell's arrows named in tparam: bit i is the i-th slot of
 * dig_slots_of_cell() (left of its row, right of its row, top of its
 * column, bottom of its column). The spent bit in state.spent makes it a
 * one-shot; both changes go through dig_set so undo restores them.
 */
#include "terrain.h"

#include "terrain_common.h"

static bool treasure_on_enter(const dig_level *lv, dig_state *s, dig_cmd *cmd, int cell, int m)
{
	(void)m;
	uint64_t bit = UINT64_C(1) << cell;
	if (s->spent & bit)
		return true;
	dig_set(s, cmd, &s->spent, 8, s->spent | bit);
	int slot[4];
	dig_slots_of_cell(lv, cell, slot);
	for (int i = 0; i < 4; i++)
		if (((lv->tparam[cell] >> i) & 1u) && s->uses[slot[i]] < UINT8_MAX)
			dig_set(s, cmd, &s->uses[slot[i]], 1, s->uses[slot[i]] + 1u);
	return true;
}

/* tparam: a non-empty 4-bit arrow mask whose slots exist; tmask 0. */
static int treasure_check(const dig_level *lv, int cell, sf_err *err)
{
	int mask = lv->tparam[cell];
	if (mask < 1 || mask > 15)
		return sf_err_set(err, SF_EINVAL,
				  "treasure tparam (arrow mask) %d is outside 1..15", mask);
	int slot[4];
	dig_slots_of_cell(lv, cell, slot);
	for (int i = 0; i < 4; i++)
		if (((mask >> i) & 1) && (slot[i] < 0 || slot[i] >= dig_slots(lv)))
			return sf_err_set(err, SF_EINVAL,
					  "treasure tparam (arrow mask) %d names arrow bit %d, "
					  "which has no slot",
					  mask, i);
	if (lv->tmask[cell] != 0)
		return sf_err_set(err, SF_EINVAL, "treasure tmask %d must be 0", lv->tmask[cell]);
	return 0;
}

/* ---- generation (generate.c calls these) ---- */

/*
 * Arrow treasure in hindsight (devlog "Arrow Treasure"): on a cell the
 * solution enters, the arrows acting on it that are tapped only after the
 * cell's first entry can lose one use each and get it back from the
 * treasure. With probability p per cell that has such arrows, a random
 * non-empty subset of them moves into a treasure. Each arrow's taps all
 * come after the treasure is collected, so the solution never misses the
 * use (even when several treasures feed one arrow).
 */
static int treasure_place(dig_gen *g)
{
	dig_level *lv = g->lv;
	int placed = 0, cells = lv->w * lv->h;
	int first_tap[DIG_MAX_ARROWS];
	for (int i = 0; i < DIG_MAX_ARROWS; i++)
		first_tap[i] = DIG_MAX_TURNS;
	for (int t = g->sol->turns - 1; t >= 0; t--)
		first_tap[g->sol->tap[t]] = t;
	uint64_t free = dig_gen_free(g);
	for (int c = 0; c < cells; c++) {
		uint8_t entry;
		if (!((free >> c) & 1u) || dig_gen_entries(g, c, &entry, NULL, 1) == 0)
			continue;
		int slot[4], ok = 0;
		dig_slots_of_cell(lv, c, slot);
		for (int i = 0; i < 4; i++)
			if (lv->arrow[slot[i]].uses > 0 && first_tap[slot[i]] > entry)
				ok |= 1 << i;
		if (ok == 0 || !dig_gen_chance(g, g->p))
			continue;
		int mask = 0;
		for (int i = 0; i < 4; i++)
			if (((ok >> i) & 1) && dig_gen_chance(g, 0.5))
				mask |= 1 << i;
		while (mask == 0) {
			int i = (int)rng_below(g->rng, 4);
			mask = ok & (1 << i);
		}
		for (int i = 0; i < 4; i++)
			if ((mask >> i) & 1)
				lv->arrow[slot[i]].uses--;
		dig_gen_put(g, c, DIG_T_TREASURE, mask, 0);
		placed++;
	}
	return placed;
}

/* A red herring: with probability p, a treasure of 1 to 4 random arrows on
 * a cell nobody visits. */
static int treasure_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p);
	if (c < 0)
		return 0;
	dig_gen_put(g, c, DIG_T_TREASURE, 1 + (int)rng_below(g->rng, 15), 0);
	return 1;
}

const dig_terrain_ops dig_terrain_treasure = {
	.name = "treasure",
	.on_enter = treasure_on_enter,
	.check = treasure_check,
	.place = treasure_place,
	.decoy = treasure_decoy,
};
