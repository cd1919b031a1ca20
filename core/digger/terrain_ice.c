/*
 * terrain_ice.c - a machine that enters ice freezes: arrows no longer
 * select it and it blocks like a wall until lava (terrain_lava.c) thaws
 * everybody. The ice stays, so later visitors freeze too. A machine that
 * merely starts on ice has not entered it and is not frozen.
 */
#include "terrain.h"

#include "terrain_common.h"

static bool ice_on_enter(const dig_level *lv, dig_state *s, dig_cmd *cmd, int cell, int m)
{
	(void)lv;
	(void)cell;
	dig_set(s, cmd, &s->frozen, 1, s->frozen | (1u << m));
	return true;
}

/* Ice takes no parameters. */
static int ice_check(const dig_level *lv, int cell, sf_err *err)
{
	return dig_terrain_check_plain(lv, cell, "ice", err);
}

/* ---- generation (generate.c calls these) ---- */

#define ICE_MIN_GAP 2   /* taps a frozen machine waits before lava, at least */
#define ICE_MAX_PAIRS 2 /* ice-and-lava pairs per level */

/*
 * Ice (and its lava) in hindsight (devlog "Ice & Lava"). For each machine,
 * in an order starting at a random one, look for gaps: it enters cell c,
 * then stands still for at least ICE_MIN_GAP taps, then moves again. With
 * probability p, c becomes ice and a cell another machine enters inside the
 * gap becomes lava (when lava is allowed), which thaws the machine before
 * it has to move. c must be entered only that once, or a later visitor
 * would freeze for good. A machine that never moves again after entering c
 * needs no lava: with probability p / 2 its last cell becomes ice alone.
 * While frozen the machine does exactly what it did in the solution
 * (nothing), so the solution still works; thawing early is harmless.
 */
static int ice_place(dig_gen *g)
{
	const dig_trace *sol = g->sol;
	int machines = g->lv->machines, placed = 0, pairs = 0;
	bool lava = (g->terrains >> DIG_T_LAVA) & 1u;
	int first = (int)rng_below(g->rng, (uint64_t)machines);
	for (int i = 0; i < machines; i++) {
		int m = (first + i) % machines;
		for (int t = 0; t < sol->turns; t++) {
			if (!((sol->moved[t] >> m) & 1u))
				continue;
			int c = sol->pos[t + 1][m], t2 = t + 1;
			while (t2 < sol->turns && !((sol->moved[t2] >> m) & 1u))
				t2++;
			uint64_t free = dig_gen_free(g);
			if (!((free >> c) & 1u) || dig_gen_entries(g, c, NULL, NULL, 0) != 1)
				continue;
			if (t2 == sol->turns) {
				if (dig_gen_chance(g, g->p / 2)) {
					dig_gen_put(g, c, DIG_T_ICE, 0, 0);
					placed++;
				}
				continue;
			}
			if (!lava || pairs >= ICE_MAX_PAIRS || t2 - t - 1 < ICE_MIN_GAP)
				continue;
			uint64_t hot = 0; /* cells other machines enter inside the gap */
			for (int u = t + 1; u < t2; u++)
				for (int k = 0; k < machines; k++)
					if (((sol->moved[u] >> k) & 1u))
						hot |= UINT64_C(1) << sol->pos[u + 1][k];
			hot &= free & ~(UINT64_C(1) << c);
			if (hot == 0 || !dig_gen_chance(g, g->p))
				continue;
			dig_gen_put(g, c, DIG_T_ICE, 0, 0);
			dig_gen_put(g, dig_gen_pick(g, hot), DIG_T_LAVA, 0, 0);
			placed += 2;
			pairs++;
		}
	}
	return placed;
}

/* A red herring: with probability p, ice on a cell nobody visits. */
static int ice_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p);
	if (c < 0)
		return 0;
	dig_gen_put(g, c, DIG_T_ICE, 0, 0);
	return 1;
}

const dig_terrain_ops dig_terrain_ice = {
	.name = "ice",
	.on_enter = ice_on_enter,
	.check = ice_check,
	.place = ice_place,
	.decoy = ice_decoy,
};
