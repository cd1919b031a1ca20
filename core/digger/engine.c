/*
 * engine.c - the rules of Direction Digger: grid geometry, the arrow
 * command (plan / valid / do / undo), winning, replay and the structural
 * check of a level.
 *
 * The arrow command follows the devlog's "command validity" design. A plan
 * selects the non-frozen machines in the arrow's row or column and gives
 * each a target one step along the arrow. A target is valid on its own when
 * it is on the grid, the terrain lets that machine in and the path rules
 * (no_shuffle, no_backtrack) allow it. Machines then block one another:
 * a move into an occupied cell stands only if the occupant itself validly
 * moves this turn. That is a greatest fixpoint (start with every
 * individually valid move, strike moves into cells whose occupant does not
 * move until nothing changes), which settles rows of any length and a
 * chain pressed against the edge without ever ordering the moves.
 *
 * dig_arrow_do() then moves every valid machine at once, runs the entered
 * cells' on_enter hooks in machine order (collecting gold they allow), and
 * finally every terrain's after_turn hook once (lava thaws after all moved).
 * Every write to the state goes through dig_set(), which logs the old value
 * in the command, so dig_arrow_undo() restores the state byte for byte.
 * Terrain behaviour lives only in the terrain modules; this file never
 * tests a terrain's type.
 */
#include "digger.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrain.h"

static const int DX[4] = { 0, 1, 0, -1 };
static const int DY[4] = { -1, 0, 1, 0 };

/* ---- geometry ---- */

/* The number of arrow slots of lv's grid: 2 * (w + h). */
int dig_slots(const dig_level *lv)
{
	return 2 * (lv->w + lv->h);
}

/* The slot left of row y (it points right by default). */
int dig_slot_row_left(const dig_level *lv, int y)
{
	(void)lv;
	return y;
}

/* The slot right of row y (it points left by default). */
int dig_slot_row_right(const dig_level *lv, int y)
{
	return lv->h + y;
}

/* The slot above column x (it points down by default). */
int dig_slot_col_top(const dig_level *lv, int x)
{
	return 2 * lv->h + x;
}

/* The slot below column x (it points up by default). */
int dig_slot_col_bottom(const dig_level *lv, int x)
{
	return 2 * lv->h + lv->w + x;
}

/*
 * The four slots acting on `cell` (which must be on the grid), in treasure
 * bit order: left of its row, right of its row, top of its column, bottom
 * of its column.
 */
void dig_slots_of_cell(const dig_level *lv, int cell, int out[4])
{
	int x = cell % lv->w, y = cell / lv->w;
	out[0] = dig_slot_row_left(lv, y);
	out[1] = dig_slot_row_right(lv, y);
	out[2] = dig_slot_col_top(lv, x);
	out[3] = dig_slot_col_bottom(lv, x);
}

/* The cell one step from `cell` in direction `dir`, or -1 off the grid (or
 * for a direction outside 0..3). */
static inline int step_of(const dig_level *lv, int cell, int dir)
{
	if (dir < 0 || dir > 3)
		return -1;
	int x = cell % lv->w + DX[dir], y = cell / lv->w + DY[dir];
	if (x < 0 || x >= lv->w || y < 0 || y >= lv->h)
		return -1;
	return y * lv->w + x;
}

/* See step_of (which dig_arrow_plan inlines). */
int dig_step(const dig_level *lv, int cell, int dir)
{
	return step_of(lv, cell, dir);
}

/* The direction `slot` points in when arrows point into the grid. */
dig_dir dig_slot_default_dir(const dig_level *lv, int slot)
{
	if (slot < lv->h)
		return DIG_RIGHT;
	if (slot < 2 * lv->h)
		return DIG_LEFT;
	if (slot < 2 * lv->h + lv->w)
		return DIG_DOWN;
	return DIG_UP;
}

/* Whether `slot` (in range) stands beside a row (left or right side). */
bool dig_slot_is_row(const dig_level *lv, int slot)
{
	return slot < 2 * lv->h;
}

/* The cells of the row or column `slot` (in range) acts on, as a cell set:
 * a row's w bits in one run, a column's every w-th bit. */
uint64_t dig_slot_line(const dig_level *lv, int slot)
{
	if (dig_slot_is_row(lv, slot))
		return ((UINT64_C(1) << lv->w) - 1) << (slot % lv->h * lv->w);
	uint64_t line = 0;
	for (int c = (slot - 2 * lv->h) % lv->w; c < lv->w * lv->h; c += lv->w)
		line |= UINT64_C(1) << c;
	return line;
}

/* ---- state ---- */

/*
 * Writes `value` into the state field at `field` (size 1, 2 or 8 bytes),
 * logging the old value in `cmd` first so that dig_arrow_undo() restores
 * it. A NULL cmd writes without logging (setting up a state). `field` must
 * point inside `s`. A full log is a programming error and aborts, which no
 * level can cause: a turn logs 3 writes (use, turns left, turns used), at
 * most 10 per moving machine (prev, pos, visited, gold, next gold and its
 * cell's on_enter, treasure's 5 the most) and lava's one: 64 with six
 * machines, well under DIG_LOG_MAX.
 */
void dig_set(dig_state *s, dig_cmd *cmd, void *field, int size, uint64_t value)
{
	uint8_t u8;
	uint16_t u16;
	if (cmd) {
		if (cmd->nlog >= DIG_LOG_MAX)
			abort();
		uint64_t old;
		if (size == 1) {
			memcpy(&u8, field, 1);
			old = u8;
		} else if (size == 2) {
			memcpy(&u16, field, 2);
			old = u16;
		} else {
			memcpy(&old, field, 8);
		}
		cmd->log[cmd->nlog].off = (uint16_t)((uint8_t *)field - (uint8_t *)s);
		cmd->log[cmd->nlog].size = (uint8_t)size;
		cmd->log[cmd->nlog].old = old;
		cmd->nlog++;
	}
	if (size == 1) {
		u8 = (uint8_t)value;
		memcpy(field, &u8, 1);
	} else if (size == 2) {
		u16 = (uint16_t)value;
		memcpy(field, &u16, 2);
	} else {
		memcpy(field, &value, 8);
	}
}

/*
 * Sets `s` to the start of `lv` (which should pass dig_level_check): the
 * machines on their start cells, which count as visited, every gold still
 * there, the arrows' uses and the turn budget, each terrain's per-cell
 * state (init_cell hooks). Unused entries are zero, so states compare with
 * memcmp.
 */
void dig_state_init(const dig_level *lv, dig_state *s)
{
	memset(s, 0, sizeof *s);
	int cells = lv->w * lv->h;
	for (int m = 0; m < lv->machines; m++) {
		s->pos[m] = lv->start[m];
		s->prev[m] = DIG_NONE;
		s->visited[m] = UINT64_C(1) << lv->start[m];
	}
	for (int c = 0; c < cells; c++)
		if (lv->gold[c])
			s->gold |= UINT64_C(1) << c;
	for (int i = 0; i < dig_slots(lv); i++)
		s->uses[i] = lv->arrow[i].uses;
	s->next_gold = 1;
	s->turns_left = (int16_t)lv->turns;
	for (int c = 0; c < cells; c++) {
		const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[c]);
		if (ops && ops->init_cell)
			ops->init_cell(lv, s, c);
	}
}

/* True when no gold is left on the grid. */
bool dig_won(const dig_state *s)
{
	return s->gold == 0;
}

/* The number of gold cells of `lv` (each counts once, whatever its order). */
int dig_gold_count(const dig_level *lv)
{
	int n = 0;
	for (int c = 0; c < lv->w * lv->h; c++)
		n += lv->gold[c] != 0;
	return n;
}

/* ---- the arrow command ---- */

/* Is the step of machine m into `to` valid on its own (ignoring machines)? */
static bool step_allowed(const dig_level *lv, const dig_state *s, int m, int to)
{
	if (to < 0)
		return false;
	const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[to]);
	if (ops && ops->can_enter && !ops->can_enter(lv, s, to, m))
		return false;
	if (lv->rules.no_shuffle && to == s->prev[m])
		return false;
	if (lv->rules.no_backtrack && ((s->visited[m] >> to) & 1u))
		return false;
	return true;
}

/*
 * Works out what tapping `slot` would do: plan->selected (non-frozen
 * machines in its row or column), plan->moves (those whose move is valid,
 * machine blocking resolved) and plan->to (each machine's cell after the
 * tap: the target for movers, its own cell otherwise; 0 for unused
 * machines). `plan` may be NULL. Returns whether the tap is valid: the slot
 * exists, has uses left, turns are left and at least one machine moves.
 * Never changes the state.
 */
bool dig_arrow_plan(const dig_level *lv, const dig_state *s, int slot, dig_plan *plan)
{
	dig_plan local;
	if (!plan)
		plan = &local;
	memset(plan, 0, sizeof *plan);
	if (slot < 0 || slot >= dig_slots(lv))
		return false;
	int dir = lv->arrow[slot].dir;
	uint64_t line = dig_slot_line(lv, slot);
	uint8_t ok = 0;
	uint64_t stay = 0; /* the cells of machines that do not move */
	for (int m = 0; m < lv->machines; m++) {
		int pos = s->pos[m];
		plan->to[m] = (uint8_t)pos;
		if (((s->frozen >> m) & 1u) || !((line >> pos) & 1u)) {
			stay |= UINT64_C(1) << pos;
			continue;
		}
		plan->selected |= (uint8_t)(1u << m);
		int to = step_of(lv, pos, dir);
		if (step_allowed(lv, s, m, to)) {
			ok |= (uint8_t)(1u << m);
			plan->to[m] = (uint8_t)to;
		} else {
			stay |= UINT64_C(1) << pos;
		}
	}
	/* Greatest fixpoint: a move into an occupied cell stands only while
	 * the occupant moves too (a mover never targets its own cell). */
	for (bool changed = ok != 0; changed;) {
		changed = false;
		for (uint8_t left = ok; left; left &= (uint8_t)(left - 1)) {
			int m = __builtin_ctz(left);
			if ((stay >> plan->to[m]) & 1u) {
				ok &= (uint8_t) ~(1u << m);
				plan->to[m] = s->pos[m];
				stay |= UINT64_C(1) << s->pos[m];
				changed = true;
			}
		}
	}
	plan->moves = ok;
	return ok != 0 && s->uses[slot] > 0 && s->turns_left > 0;
}

/* Whether tapping `slot` is valid now (see dig_arrow_plan). */
bool dig_arrow_valid(const dig_level *lv, const dig_state *s, int slot)
{
	return dig_arrow_plan(lv, s, slot, NULL);
}

/*
 * Taps `slot`: spends a use and a turn, moves every machine whose move is
 * valid at once, runs the on_enter hooks of the entered cells in machine
 * order (collecting the gold each allows: with gold_in_order only the next
 * one in order), then each terrain's after_turn hook. `cmd` receives what
 * happened and the undo log. SF_EINVAL, with `s` untouched, when the tap is
 * not valid.
 */
int dig_arrow_do(const dig_level *lv, dig_state *s, int slot, dig_cmd *cmd)
{
	dig_plan plan;
	cmd->nlog = 0;
	cmd->moved = 0;
	cmd->entered = 0;
	cmd->arrow = (uint8_t)slot;
	if (!dig_arrow_plan(lv, s, slot, &plan))
		return SF_EINVAL;
	dig_set(s, cmd, &s->uses[slot], 1, s->uses[slot] - 1u);
	dig_set(s, cmd, &s->turns_left, 2, (uint16_t)(s->turns_left - 1));
	dig_set(s, cmd, &s->turns_used, 2, (uint16_t)(s->turns_used + 1));
	for (unsigned left = plan.moves; left; left &= left - 1) {
		int m = __builtin_ctz(left);
		dig_set(s, cmd, &s->prev[m], 1, s->pos[m]);
		dig_set(s, cmd, &s->pos[m], 1, plan.to[m]);
		dig_set(s, cmd, &s->visited[m], 8, s->visited[m] | (UINT64_C(1) << plan.to[m]));
		cmd->entered |= UINT64_C(1) << plan.to[m];
	}
	cmd->moved = plan.moves;
	for (unsigned left = plan.moves; left; left &= left - 1) { /* in machine order */
		int m = __builtin_ctz(left);
		int cell = plan.to[m];
		const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[cell]);
		bool take = ops && ops->on_enter ? ops->on_enter(lv, s, cmd, cell, m) : true;
		uint64_t bit = UINT64_C(1) << cell;
		if (!take || !(s->gold & bit))
			continue;
		if (lv->rules.gold_in_order && lv->gold[cell] != s->next_gold)
			continue;
		dig_set(s, cmd, &s->gold, 8, s->gold & ~bit);
		dig_set(s, cmd, &s->next_gold, 1, s->next_gold + 1u);
	}
	for (int t = 0; t < DIG_T_COUNT; t++) {
		const dig_terrain_ops *ops = dig_terrain_of(t);
		if (ops->after_turn)
			ops->after_turn(lv, s, cmd);
	}
	return 0;
}

/* Undoes the tap `cmd` records; `s` must be the state dig_arrow_do() left
 * (or one undone back to it). */
void dig_arrow_undo(dig_state *s, const dig_cmd *cmd)
{
	for (int i = cmd->nlog - 1; i >= 0; i--) {
		uint8_t *field = (uint8_t *)s + cmd->log[i].off;
		uint64_t old = cmd->log[i].old;
		if (cmd->log[i].size == 1) {
			uint8_t v = (uint8_t)old;
			memcpy(field, &v, 1);
		} else if (cmd->log[i].size == 2) {
			uint16_t v = (uint16_t)old;
			memcpy(field, &v, 2);
		} else {
			memcpy(field, &old, 8);
		}
	}
}

/* ---- level check ---- */

/* "(x,y)" of `cell` in lv's grid, into buf. */
static const char *cell_name(const dig_level *lv, int cell, char buf[32])
{
	snprintf(buf, 32, "(%d,%d)", cell % lv->w, cell / lv->w);
	return buf;
}

static int check_grid(const dig_level *lv, sf_err *err)
{
	if (lv->w < 1 || lv->w > DIG_MAX_W)
		return sf_err_set(err, SF_EINVAL, "w: %d is outside 1..%d", lv->w, DIG_MAX_W);
	if (lv->h < 1 || lv->h > DIG_MAX_H)
		return sf_err_set(err, SF_EINVAL, "h: %d is outside 1..%d", lv->h, DIG_MAX_H);
	if (lv->turns < 1 || lv->turns > DIG_MAX_TURNS)
		return sf_err_set(err, SF_EINVAL, "turns: %d is outside 1..%d", lv->turns,
				  DIG_MAX_TURNS);
	if (lv->machines < 1 || lv->machines > DIG_MAX_MACHINES)
		return sf_err_set(err, SF_EINVAL, "machines: %d machines is outside 1..%d",
				  lv->machines, DIG_MAX_MACHINES);
	return 0;
}

static int check_cells(const dig_level *lv, sf_err *err)
{
	char at[32];
	for (int c = 0; c < lv->w * lv->h; c++) {
		if (lv->terrain[c] >= DIG_T_COUNT)
			return sf_err_set(err, SF_EINVAL, "terrain at %s: type %d is outside 0..%d",
					  cell_name(lv, c, at), lv->terrain[c], DIG_T_COUNT - 1);
		const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[c]);
		if (ops->check && ops->check(lv, c, err) != 0) {
			char prefix[56];
			snprintf(prefix, sizeof prefix, "terrain at %s: ", cell_name(lv, c, at));
			sf_err_prefix(err, prefix);
			return SF_EINVAL;
		}
	}
	return 0;
}

static int check_machines(const dig_level *lv, sf_err *err)
{
	char at[32];
	int cells = lv->w * lv->h;
	for (int m = 0; m < lv->machines; m++) {
		int c = lv->start[m];
		if (c >= cells)
			return sf_err_set(err, SF_EINVAL,
					  "machines[%d]: cell %s is outside the %dx%d grid", m,
					  cell_name(lv, c, at), lv->w, lv->h);
		for (int k = 0; k < m; k++)
			if (lv->start[k] == c)
				return sf_err_set(
					err, SF_EINVAL,
					"machines[%d]: cell %s already holds machines[%d]", m,
					cell_name(lv, c, at), k);
		if (lv->gold[c])
			return sf_err_set(err, SF_EINVAL,
					  "machines[%d]: cell %s has gold; gold never lies under a "
					  "start cell",
					  m, cell_name(lv, c, at));
	}
	/* The terrain hooks are checked by now, so a start state is sound. */
	dig_state s;
	dig_state_init(lv, &s);
	for (int m = 0; m < lv->machines; m++) {
		int c = lv->start[m];
		const dig_terrain_ops *ops = dig_terrain_of(lv->terrain[c]);
		if (ops->can_enter && !ops->can_enter(lv, &s, c, m))
			return sf_err_set(
				err, SF_EINVAL,
				"machines[%d]: cell %s is %s, which machine %d may not enter", m,
				cell_name(lv, c, at), ops->name, m);
	}
	return 0;
}

static int check_gold(const dig_level *lv, sf_err *err)
{
	char at[32];
	int cells = lv->w * lv->h, n = 0;
	for (int c = 0; c < cells; c++)
		n += lv->gold[c] != 0;
	if (n == 0)
		return sf_err_set(err, SF_EINVAL,
				  "gold: the grid has none; at least one is needed");
	if (!lv->rules.gold_in_order)
		return 0;
	uint64_t seen = 0; /* bit k-1: order k */
	for (int c = 0; c < cells; c++) {
		int k = lv->gold[c];
		if (k == 0)
			continue;
		if (k > n)
			return sf_err_set(
				err, SF_EINVAL,
				"gold at %s: order %d is outside 1..%d (gold_in_order needs "
				"orders 1..n, each once)",
				cell_name(lv, c, at), k, n);
		if ((seen >> (k - 1)) & 1u)
			return sf_err_set(err, SF_EINVAL,
					  "gold at %s: order %d is used twice (gold_in_order needs "
					  "orders 1..n, each once)",
					  cell_name(lv, c, at), k);
		seen |= UINT64_C(1) << (k - 1);
	}
	return 0;
}

static int check_arrows(const dig_level *lv, sf_err *err)
{
	static const char *const DIR_NAME[4] = { "up", "right", "down", "left" };
	int slots = dig_slots(lv);
	for (int i = 0; i < DIG_MAX_ARROWS; i++) {
		const dig_arrow *a = &lv->arrow[i];
		if (i >= slots) {
			if (a->dir != 0 || a->uses != 0)
				return sf_err_set(
					err, SF_EINVAL,
					"arrows[%d]: a %dx%d grid has slots 0..%d; unused "
					"slots must be zero",
					i, lv->w, lv->h, slots - 1);
			continue;
		}
		if (a->dir > 3)
			return sf_err_set(err, SF_EINVAL,
					  "arrows[%d]: direction %d is outside 0..3", i, a->dir);
		dig_dir def = dig_slot_default_dir(lv, i);
		if (!lv->rules.any_direction && a->dir != def)
			return sf_err_set(err, SF_EINVAL,
					  "arrows[%d]: direction %s must be %s (into the grid) "
					  "unless any_direction is set",
					  i, DIR_NAME[a->dir], DIR_NAME[def]);
	}
	return 0;
}

/*
 * Checks that `lv` is a well-formed level: grid size, turn budget, machine
 * count, terrain types and their parameters (each module's check hook),
 * machines on distinct in-grid cells they may enter and without gold, at
 * least one gold (orders 1..n once each under gold_in_order), arrow
 * directions (into the grid unless any_direction) and unused slots zero.
 * 0, or SF_EINVAL with a message naming the field.
 */
int dig_level_check(const dig_level *lv, sf_err *err)
{
	int rc;
	if ((rc = check_grid(lv, err)) != 0 || (rc = check_cells(lv, err)) != 0 ||
	    (rc = check_gold(lv, err)) != 0 || (rc = check_machines(lv, err)) != 0 ||
	    (rc = check_arrows(lv, err)) != 0)
		return rc;
	return 0;
}

/* ---- replay ---- */

/*
 * Why tapping `slot` in `s` is refused, as a phrase for messages ("the
 * arrow has no uses left"), or NULL when the tap is valid. `tapped` says
 * whether the play tapped this slot before: an arrow hidden at the start
 * that a treasure gave a use to, since spent, has "no uses left", not "is
 * hidden". The reasons in order: no such slot, no uses, no turns, nobody
 * unfrozen in the line, nobody able to step.
 */
const char *dig_arrow_refusal(const dig_level *lv, const dig_state *s, int slot, bool tapped)
{
	dig_plan plan;
	if (dig_arrow_plan(lv, s, slot, &plan))
		return NULL;
	if (slot < 0 || slot >= dig_slots(lv))
		return "the grid has no such arrow";
	bool row = dig_slot_is_row(lv, slot);
	if (s->uses[slot] == 0)
		return lv->arrow[slot].uses || tapped ? "the arrow has no uses left"
						      : "the arrow is hidden";
	if (s->turns_left <= 0)
		return "no turns are left";
	if (!plan.selected)
		return row ? "no unfrozen machine stands in its row"
			   : "no unfrozen machine stands in its column";
	return row ? "no machine in its row can move that way"
		   : "no machine in its column can move that way";
}

/*
 * Plays `taps` (arrow slots) from the start of `lv`. 0 with *gold (gold
 * collected) and *turns (taps made, ntaps) set; SF_EINVAL when the level
 * fails dig_level_check or a tap is not valid, naming the first bad tap by
 * its 1-based move number ("move 3: arrow 5 is not valid: ..."). Either
 * output pointer may be NULL.
 */
int dig_replay(const dig_level *lv, const uint8_t *taps, int ntaps, int *gold, int *turns,
	       sf_err *err)
{
	int rc = dig_level_check(lv, err);
	if (rc != 0)
		return rc;
	if (ntaps < 0 || (ntaps > 0 && !taps))
		return sf_err_set(err, SF_EINVAL, "taps: %d taps is not a tap list", ntaps);
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	uint64_t start_gold = s.gold;
	int slots = dig_slots(lv);
	uint32_t tapped = 0; /* bit i: slot i tapped before */
	for (int i = 0; i < ntaps; i++) {
		if (taps[i] >= slots)
			return sf_err_set(err, SF_EINVAL, "move %d: arrow %d is outside 0..%d",
					  i + 1, taps[i], slots - 1);
		if (dig_arrow_do(lv, &s, taps[i], &cmd) != 0)
			return sf_err_set(
				err, SF_EINVAL, "move %d: arrow %d is not valid: %s", i + 1,
				taps[i],
				dig_arrow_refusal(lv, &s, taps[i], (tapped >> taps[i]) & 1u));
		tapped |= UINT32_C(1) << taps[i];
	}
	if (gold)
		*gold = __builtin_popcountll(start_gold & ~s.gold);
	if (turns)
		*turns = ntaps;
	return 0;
}
