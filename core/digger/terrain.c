/*
 * terrain.c - the registry of terrain modules. Everything that needs a
 * terrain's behaviour asks dig_terrain_of(type) for its hook table; this
 * file is the only place that lists the modules, so adding a terrain means
 * one new terrain_<name>.c, one enum value and one line here. It also holds
 * the parameter checks several modules share and the gift probe
 * (dig_terrain_gift), the one way the solver and the star rule learn what a
 * cell gives without testing its type.
 */
#include "terrain.h"

#include <string.h>

#include "terrain_common.h"

static const dig_terrain_ops *const MODULES[DIG_T_COUNT] = {
	[DIG_T_MUD] = &dig_terrain_mud,       [DIG_T_STONE] = &dig_terrain_stone,
	[DIG_T_WEB] = &dig_terrain_web,       [DIG_T_TREASURE] = &dig_terrain_treasure,
	[DIG_T_ICE] = &dig_terrain_ice,       [DIG_T_LAVA] = &dig_terrain_lava,
	[DIG_T_ENERGY] = &dig_terrain_energy,
};

/*
 * The devlog's placement order: ice and lava first (they need several free
 * cells, so they go in while the map is still empty), energy last (it
 * lowers the turn budget, which must be counted after everything else).
 * Mud places nothing (it has no place hook) and is listed first only so that
 * the array names every type once.
 */
const int dig_place_order[DIG_T_COUNT] = {
	DIG_T_MUD, DIG_T_ICE, DIG_T_LAVA, DIG_T_WEB, DIG_T_STONE, DIG_T_TREASURE, DIG_T_ENERGY,
};

/* The hook table of terrain type t; NULL when t is not a terrain type. */
const dig_terrain_ops *dig_terrain_of(int t)
{
	if (t < 0 || t >= DIG_T_COUNT)
		return NULL;
	return MODULES[t];
}

/* The terrain type named `name` (its JSON spelling), or -1 when none is. */
int dig_terrain_by_name(const char *name)
{
	if (!name)
		return -1;
	for (int t = 0; t < DIG_T_COUNT; t++)
		if (strcmp(MODULES[t]->name, name) == 0)
			return t;
	return -1;
}

/* Runs cell's on_enter hook for machine m on a copy of `s` into *after;
 * false when the cell has no hook. */
static bool visit_copy(const dig_level *lv, const dig_state *s, int cell, int m, dig_state *after)
{
	const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[cell]);
	if (!ops || !ops->on_enter)
		return false;
	*after = *s;
	dig_cmd cmd;
	cmd.nlog = 0;
	cmd.moved = (uint8_t)(1u << m);
	cmd.entered = UINT64_C(1) << cell;
	ops->on_enter(lv, after, &cmd, cell, m);
	return true;
}

/* See terrain.h: one on_enter call on a copy of `s`, compared with `s`. */
void dig_terrain_gift(const dig_level *lv, const dig_state *s, int cell, dig_gift *out)
{
	memset(out, 0, sizeof *out);
	dig_state after;
	if (!visit_copy(lv, s, cell, 0, &after))
		return;
	for (int i = 0; i < dig_slots(lv); i++)
		if (after.uses[i] > s->uses[i])
			out->slots |= UINT32_C(1) << i;
	out->turns = after.turns_left > s->turns_left ? after.turns_left - s->turns_left : 0;
	out->one_shot = ((after.spent & ~s->spent) >> cell) & 1u;
}

/* Parameterless terrains: both fields must be zero. */
int dig_terrain_check_plain(const dig_level *lv, int cell, const char *name, sf_err *err)
{
	if (lv->tparam[cell] != 0)
		return sf_err_set(err, SF_EINVAL, "%s tparam %d must be 0", name, lv->tparam[cell]);
	if (lv->tmask[cell] != 0)
		return sf_err_set(err, SF_EINVAL, "%s tmask %d must be 0", name, lv->tmask[cell]);
	return 0;
}

/* A machine mask may name only machines 0..machines-1. */
int dig_terrain_check_mask(const dig_level *lv, int cell, const char *name, sf_err *err)
{
	unsigned all = (1u << lv->machines) - 1u;
	if (lv->tmask[cell] & ~all)
		return sf_err_set(
			err, SF_EINVAL,
			"%s tmask %d names a machine that does not exist (machines 0..%d)", name,
			lv->tmask[cell], lv->machines - 1);
	return 0;
}

/* See terrain.h: one on_enter call per machine on a copy of `s`. */
uint8_t dig_terrain_counters(const dig_level *lv, const dig_state *s, int cell)
{
	uint8_t mask = 0;
	dig_state after;
	for (int m = 0; s->web_left[cell] > 0 && m < lv->machines; m++)
		if (visit_copy(lv, s, cell, m, &after) && after.web_left[cell] < s->web_left[cell])
			mask |= (uint8_t)(1u << m);
	return mask;
}
