/*
 * gen_walk.c - step 1 of the generator: the random walk that becomes the
 * recorded solution (the devlog's "place a machine, move it around").
 *
 * Every tap goes through the engine on a working level (empty grid, arrows
 * with plenty of uses, or one each under single_use), so the walk obeys the
 * rules by construction. Taps are drawn with weights that favour moving
 * machines, several at once, onto cells nobody has stood on, and machines
 * that have hardly moved. Machines join one by one: each on a cell in the
 * row or column of the tap chosen for that turn, so that it moves with the
 * others, or on any other cell when none works. In the finished puzzle a
 * late machine stands on the grid from the first tap, so a cell is only
 * taken when replaying the taps so far with the machine there changes
 * nothing the others did. The walk runs a little past its target length and
 * is then cut at the prefix nearest the target that passes the walk checks
 * and still leaves gold something to do.
 */
#include "digger.h"

#include <string.h>

#include "gen_internal.h"

#define WORK_USES 200 /* arrow uses on the working level: never the limit */

/*
 * Replays w->tap[0, n) on `lv` from its start; true when every tap is valid
 * and machines 0..keep-1 stand where w->pos says after every tap (the
 * machines added since leave them alone). Fills *s, and pos rows when given.
 */
static bool prefix_agrees(const dig_level *lv, const dig_walk *w, int keep, dig_state *s,
			  uint8_t (*pos)[DIG_MAX_MACHINES])
{
	dig_cmd cmd;
	dig_state_init(lv, s);
	if (pos)
		memcpy(pos[0], s->pos, DIG_MAX_MACHINES);
	for (int i = 0; i < w->n; i++) {
		if (dig_arrow_do(lv, s, w->tap[i], &cmd) != 0)
			return false;
		if (memcmp(s->pos, w->pos[i + 1], (size_t)keep) != 0)
			return false;
		if (pos)
			memcpy(pos[i + 1], s->pos, DIG_MAX_MACHINES);
	}
	return true;
}

static void count_moves(dig_walk *w)
{
	memset(w->moves, 0, sizeof w->moves);
	for (int i = 0; i < w->n; i++)
		for (int m = 0; m < w->lv.machines; m++)
			w->moves[m] += w->pos[i + 1][m] != w->pos[i][m];
}

/*
 * Adds the next machine. Cells whose replay agrees are candidates; the
 * preferred ones make `slot` (when >= 0) move the new machine as well as
 * every machine in want->moves. False when no cell agrees.
 */
static bool add_machine(dig_walk *w, int slot, const dig_plan *want, rng *r)
{
	int k = w->lv.machines, cells = dig_cells_of(&w->lv);
	dig_level trial = w->lv;
	trial.machines = k + 1;
	uint64_t starts = dig_starts_of(&w->lv), agree = 0, inline_ok = 0;
	dig_state s;
	for (int c = 0; c < cells; c++) {
		if ((starts >> c) & 1u)
			continue;
		trial.start[k] = (uint8_t)c;
		if (!prefix_agrees(&trial, w, k, &s, NULL))
			continue;
		agree |= UINT64_C(1) << c;
		dig_plan plan;
		if (slot >= 0 && dig_arrow_plan(&trial, &s, slot, &plan) &&
		    ((plan.moves >> k) & 1u) && (plan.moves & want->moves) == want->moves)
			inline_ok |= UINT64_C(1) << c;
	}
	int c = dig_pick_cell(r, inline_ok ? inline_ok : agree);
	if (c < 0)
		return false;
	trial.start[k] = (uint8_t)c;
	prefix_agrees(&trial, w, k, &w->s, w->pos);
	w->lv = trial;
	count_moves(w);
	return true;
}

/*
 * A random valid tap, weighted towards taps that move machines: each mover
 * counts 1, +3 when it reaches a cell nobody has stood on, +6 while it has
 * moved fewer than min_moves times, and nothing when it steps straight back
 * or onto a start cell (gold can never lie there, so the machine could not
 * end there); every extra mover adds 2, and a valid tap weighs at least 1.
 * -1 when no tap is valid.
 */
static int choose_tap(const dig_walk *w, int min_moves, rng *r, dig_plan *chosen)
{
	const dig_level *lv = &w->lv;
	uint64_t seen = 0, starts = dig_starts_of(lv);
	for (int m = 0; m < lv->machines; m++)
		seen |= w->s.visited[m];
	uint32_t weight[DIG_MAX_ARROWS] = { 0 }, total = 0;
	int slots = dig_slots(lv);
	for (int slot = 0; slot < slots; slot++) {
		dig_plan plan;
		if (!dig_arrow_plan(lv, &w->s, slot, &plan))
			continue;
		uint32_t wt = 0;
		int movers = 0;
		for (int m = 0; m < lv->machines; m++) {
			if (!((plan.moves >> m) & 1u))
				continue;
			movers++;
			if (plan.to[m] == w->s.prev[m] || ((starts >> plan.to[m]) & 1u))
				continue;
			wt += 1 + 3u * !((seen >> plan.to[m]) & 1u) +
			      6u * (w->moves[m] < min_moves);
		}
		wt += 2u * (uint32_t)(movers - 1);
		weight[slot] = wt ? wt : 1;
		total += weight[slot];
	}
	if (total == 0)
		return -1;
	uint32_t x = (uint32_t)rng_below(r, total);
	for (int slot = 0; slot < slots; slot++) {
		if (x < weight[slot]) {
			dig_arrow_plan(lv, &w->s, slot, chosen);
			return slot;
		}
		x -= weight[slot];
	}
	return -1; /* not reached */
}

/*
 * Step 1: fills *w (zeroed first) with a walk of up to `target` taps on a
 * gw x gh working level under `rules`, `machines` machines joining one by
 * one (the first on a random cell), every draw from r. The walk stops early
 * when no tap is valid. False when not every machine found a start cell.
 */
bool dig_walk_play(dig_walk *w, const dig_preset *ps, int gw, int gh, const dig_rules *rules,
		   int machines, int target, rng *r)
{
	memset(w, 0, sizeof *w);
	dig_level *lv = &w->lv;
	lv->w = gw;
	lv->h = gh;
	lv->rules = *rules;
	lv->turns = DIG_MAX_TURNS;
	for (int i = 0; i < dig_slots(lv); i++) {
		lv->arrow[i].dir = rules->any_direction ? (uint8_t)rng_below(r, 4)
							: (uint8_t)dig_slot_default_dir(lv, i);
		lv->arrow[i].uses = rules->single_use ? 1 : WORK_USES;
	}
	lv->machines = 1;
	lv->start[0] = (uint8_t)rng_below(r, (uint64_t)dig_cells_of(lv));
	dig_state_init(lv, &w->s);
	memcpy(w->pos[0], w->s.pos, DIG_MAX_MACHINES);

	/* Machines join every `spacing` taps, so that the last one still has
	 * about half the walk to move in. */
	int spacing = machines > 1 ? target / (2 * machines) : target;
	if (spacing < 1)
		spacing = 1;
	int next_join = spacing;
	while (w->n < target) {
		dig_plan plan;
		int slot = -1;
		if (lv->machines < machines) {
			slot = choose_tap(w, ps->min_moves, r, &plan);
			/* Join on schedule, or at once when nothing can move. */
			if ((w->n >= next_join || slot < 0) && add_machine(w, slot, &plan, r)) {
				next_join = w->n + spacing;
				if (slot >= 0 && !dig_arrow_plan(lv, &w->s, slot, &plan))
					slot = -1;
			}
		}
		if (slot < 0)
			slot = choose_tap(w, ps->min_moves, r, &plan);
		if (slot < 0)
			break;
		dig_cmd cmd;
		dig_arrow_do(lv, &w->s, slot, &cmd);
		w->tap[w->n] = (uint8_t)slot;
		memcpy(w->pos[w->n + 1], w->s.pos, DIG_MAX_MACHINES);
		for (int m = 0; m < lv->machines; m++)
			w->moves[m] += (cmd.moved >> m) & 1u;
		w->n++;
	}
	return lv->machines == machines;
}

/* Does the last of the first n taps move a machine into a cell no machine
 * stood on before (so that its gold is collected by that tap)? */
static bool ends_fresh(const dig_walk *w, int n)
{
	uint64_t before = 0;
	for (int t = 0; t < n; t++)
		for (int m = 0; m < w->lv.machines; m++)
			before |= UINT64_C(1) << w->pos[t][m];
	for (int m = 0; m < w->lv.machines; m++)
		if (w->pos[n][m] != w->pos[n - 1][m] && !((before >> w->pos[n][m]) & 1u))
			return true;
	return false;
}

/*
 * What gold could at best do for the first n taps: before terrain, gold is
 * collected by the first machine to enter its cell, never on a start. So
 * every machine must be first into some cell, and no machine may go more
 * than max_dry moves without being first into one, or no placement of gold
 * can pass "every machine collects" and "taps between treasures". Returns
 * the check that cannot pass (a bit set), or 0.
 */
static uint32_t walk_hopeless(const dig_walk *w, int n, int max_dry)
{
	uint64_t seen = 0;
	int dry[DIG_MAX_MACHINES] = { 0 }, longest[DIG_MAX_MACHINES] = { 0 };
	int firsts[DIG_MAX_MACHINES] = { 0 };
	for (int m = 0; m < w->lv.machines; m++)
		seen |= UINT64_C(1) << w->pos[0][m];
	for (int t = 0; t < n; t++)
		for (int m = 0; m < w->lv.machines; m++) {
			int c = w->pos[t + 1][m];
			if (c == w->pos[t][m])
				continue;
			dry[m]++;
			if (dry[m] > longest[m])
				longest[m] = dry[m];
			if (!((seen >> c) & 1u)) {
				firsts[m]++;
				dry[m] = 0;
			}
			seen |= UINT64_C(1) << c;
		}
	uint32_t fails = 0;
	for (int m = 0; m < w->lv.machines; m++) {
		if (firsts[m] == 0)
			fails |= 1u << DIG_Q_EVERY_MACHINE;
		if (longest[m] > max_dry)
			fails |= 1u << DIG_Q_DRY;
	}
	return fails;
}

/*
 * Ends the walk at the prefix nearest `target` taps that passes the walk's
 * quality checks, whose last tap reaches a fresh cell (so its gold is
 * collected by that tap) and that gold could still make good
 * (walk_hopeless): a random walk rarely stops at a good moment, but one of
 * its prefixes often does, and any prefix of a solution is a solution for
 * the gold it reaches. Returns 0, or the checks the whole walk fails when
 * no prefix will do.
 */
uint32_t dig_walk_trim(dig_walk *w, const dig_preset *ps, int target)
{
	int best = 0;
	for (int n = w->n; n >= 1; n--) {
		int off = n > target ? n - target : target - n;
		if (best && off >= (best > target ? best - target : target - best))
			continue;
		if (dig_quality_run(&w->lv, ps, w->tap, n, true) == 0 && ends_fresh(w, n) &&
		    walk_hopeless(w, n, ps->max_dry) == 0)
			best = n;
	}
	if (best == 0) {
		uint32_t full = dig_quality_run(&w->lv, ps, w->tap, w->n, true);
		if (!full)
			full = walk_hopeless(w, w->n, ps->max_dry);
		return full ? full : 1u << DIG_Q_LAST_TAP;
	}
	w->n = best;
	count_moves(w);
	return 0;
}
