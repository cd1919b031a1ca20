/*
 * terrain_web.c - spider web over gold. The gold under a web is collected
 * only once the web is worn through: state.web_left starts at tparam and
 * every counted visit (by a machine in tmask, or by anyone when tmask is 0)
 * takes one off. The visit that reaches 0, and every visit after it, may
 * collect the gold. A machine standing on a web at the start has not
 * visited it. web_left is part of the state, so changes go through dig_set
 * and undo restores them.
 */
#include "terrain.h"

#include "terrain_common.h"

/* Does a visit by machine m count against this web? */
static bool web_counts(const dig_level *lv, int cell, int m)
{
	return lv->tmask[cell] == 0 || ((lv->tmask[cell] >> m) & 1u);
}

static bool web_on_enter(const dig_level *lv, dig_state *s, dig_cmd *cmd, int cell, int m)
{
	if (s->web_left[cell] > 0 && web_counts(lv, cell, m))
		dig_set(s, cmd, &s->web_left[cell], 1, s->web_left[cell] - 1u);
	return s->web_left[cell] == 0;
}

static void web_init_cell(const dig_level *lv, dig_state *s, int cell)
{
	s->web_left[cell] = lv->tparam[cell];
}

/* tparam: visits needed, at least 1; tmask: existing machines only. */
static int web_check(const dig_level *lv, int cell, sf_err *err)
{
	if (lv->tparam[cell] < 1)
		return sf_err_set(err, SF_EINVAL, "web tparam (visits needed) %d is outside 1..255",
				  lv->tparam[cell]);
	return dig_terrain_check_mask(lv, cell, "web", err);
}

/* ---- generation (generate.c calls these) ---- */

#define WEB_MAX_NEEDED 5 /* visits a generated web asks for, at most */

/*
 * Web in hindsight (devlog "Spider Web"): a cell machines enter at least
 * twice becomes, with probability p, a web over gold (added if absent)
 * needing as many counted visits as it gets (sometimes fewer, at least 2,
 * so an earlier visitor takes the gold; at most WEB_MAX_NEEDED). When one
 * machine made every visit, half the time only its visits count.
 */
static int web_place(dig_gen *g)
{
	int placed = 0, cells = g->lv->w * g->lv->h;
	uint64_t free = dig_gen_free(g);
	uint8_t who[DIG_MAX_TURNS];
	for (int c = 0; c < cells; c++) {
		if (!((free >> c) & 1u))
			continue;
		int n = dig_gen_entries(g, c, NULL, who, DIG_MAX_TURNS);
		if (n < 2 || !dig_gen_chance(g, g->p))
			continue;
		uint8_t by = 0;
		for (int i = 0; i < n; i++)
			by |= (uint8_t)(1u << who[i]);
		int mask = (by & (by - 1)) == 0 && dig_gen_chance(g, 0.5) ? by : 0;
		int need = n;
		if (n > 2 && dig_gen_chance(g, 0.3))
			need = 2 + (int)rng_below(g->rng, (uint64_t)(n - 1));
		if (need > WEB_MAX_NEEDED)
			need = WEB_MAX_NEEDED;
		dig_gen_put(g, c, DIG_T_WEB, need, mask);
		if (!g->lv->gold[c])
			g->lv->gold[c] = 1; /* generate.c renumbers the gold */
		placed++;
	}
	return placed;
}

/* A red herring: with probability p, a web needing 2 or 3 visits, without
 * gold, on a cell nobody visits. */
static int web_decoy(dig_gen *g)
{
	int c = dig_gen_decoy_cell(g, g->p);
	if (c < 0)
		return 0;
	dig_gen_put(g, c, DIG_T_WEB, 2 + (int)rng_below(g->rng, 2), 0);
	return 1;
}

const dig_terrain_ops dig_terrain_web = {
	.name = "web",
	.on_enter = web_on_enter,
	.init_cell = web_init_cell,
	.check = web_check,
	.place = web_place,
	.decoy = web_decoy,
};
