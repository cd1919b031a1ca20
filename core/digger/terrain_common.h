/*
 * terrain_common.h - small helpers the terrain modules share (internal to
 * core/digger; not part of the interface other modules code against).
 */
#ifndef SF_DIGGER_TERRAIN_COMMON_H
#define SF_DIGGER_TERRAIN_COMMON_H

#include "terrain.h"

/* The module tables, one per terrain file; dig_terrain_of() returns them. */
extern const dig_terrain_ops dig_terrain_mud;
extern const dig_terrain_ops dig_terrain_stone;
extern const dig_terrain_ops dig_terrain_web;
extern const dig_terrain_ops dig_terrain_treasure;
extern const dig_terrain_ops dig_terrain_ice;
extern const dig_terrain_ops dig_terrain_lava;
extern const dig_terrain_ops dig_terrain_energy;

/*
 * For terrains without parameters: 0 when tparam and tmask of `cell` are
 * both zero, else SF_EINVAL with a message naming `name` and the field.
 */
int dig_terrain_check_plain(const dig_level *lv, int cell, const char *name, sf_err *err);

/*
 * 0 when tmask of `cell` names only machines that exist (bits below
 * lv->machines), else SF_EINVAL with a message naming `name`.
 */
int dig_terrain_check_mask(const dig_level *lv, int cell, const char *name, sf_err *err);

#endif
