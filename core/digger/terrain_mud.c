/*
 * terrain_mud.c - plain ground. Mud has no rules of its own: every machine
 * may enter it, every visit may collect its gold, and it carries no
 * parameters. It is the terrain every cell starts as, so the generator never
 * "places" it; the table exists so that lookups never meet a NULL module.
 */
#include "terrain.h"

#include "terrain_common.h"

/* Mud takes no parameters: tparam and tmask must be zero. */
static int mud_check(const dig_level *lv, int cell, sf_err *err)
{
	return dig_terrain_check_plain(lv, cell, "mud", err);
}

/* ---- generation (generate.c calls these) ---- */

const dig_terrain_ops dig_terrain_mud = {
	.name = "mud",
	.check = mud_check,
};
