/*
 * terrain_lava.c - entering lava thaws every frozen machine. The devlog's
 * lesson is that this must happen after the whole turn: a machine that
 * walks onto ice in the same turn as another walks onto lava ends the turn
 * thawed, whatever order the machines are processed in. So lava has no
 * on_enter; its after_turn hook runs once all machines moved and all
 * on_enter hooks (ice included) ran, and looks at cmd->entered.
 */
#include "terrain.h"

#include "terrain_common.h"

static void lava_after_turn(const dig_level *lv, dig_state *s, dig_cmd *cmd)
{
	if (s->frozen == 0)
		return;
	for (uint64_t e = cmd->entered; e; e &= e - 1) {
		if (lv->terrain[__builtin_ctzll(e)] == DIG_T_LAVA) {
			dig_set(s, cmd, &s->frozen, 1, 0);
			return;
		}
	}
}

/* Lava takes no parameters. */
static int lava_check(const dig_level *lv, int cell, sf_err *err)
{
	return dig_terrain_check_plain(lv, cell, "lava", err);
}

/* ---- generation (generate.c calls these) ---- */

/*
 * Lava on its own changes nothing in a solution, so it has no place hook:
 * ice's hook (terrain_ice.c) places each lava cell together with the ice
 * it thaws. As a red herring it is rarer than the others (the devlog: many
 * lava cells make freezing pointless and look overwhelming): with
 * probability p / 3, lava on a cell nobody visits.
 */
static int lava_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p / 3);
	if (c < 0)
		return 0;
	dig_gen_put(g, c, DIG_T_LAVA, 0, 0);
	return 1;
}

const dig_terrain_ops dig_terrain_lava = {
	.name = "lava",
	.after_turn = lava_after_turn,
	.check = lava_check,
	.decoy = lava_decoy,
};
