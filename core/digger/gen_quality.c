/*
 * gen_quality.c - the generator's judge: what a tap list does on a level
 * (which gold each tap collects, and who), the gold numbering, the replay
 * test, the recorded trace, and the quality checks.
 *
 * The checks are the devlog's "tweaking" rules, each a named predicate in
 * one table, so that a rejection can be reported by name and each rule
 * tested alone (dig_quality_fails). Every check reads the same dig_run, one
 * play of the solution through the engine on the level as it stands; the
 * thresholds come from the difficulty's preset. Checks marked "walk" need
 * only the machines' moves, so the generator applies them to the walk
 * before any gold exists.
 */
#include "digger.h"

#include <string.h>

#include "gen_internal.h"
#include "terrain.h"

/* ---- the solution played on a level ---- */

/*
 * Plays `taps` on `lv` from the start through the engine (no
 * dig_level_check, so it works on the gold-less working level) and fills
 * *r (zeroed first): which gold each tap collected and who took it, each
 * machine's moves, collections, longest stretch of moves without gold
 * (counting the collecting move and any moves after its last gold) and
 * final cell. Stops at the first invalid tap (r->valid false, r->ntaps the
 * taps played).
 */
void dig_run_play(const dig_level *lv, const uint8_t *taps, int n, dig_run *r)
{
	memset(r, 0, sizeof *r);
	memset(r->got_by, DIG_NONE, sizeof r->got_by);
	memset(r->got_at, DIG_NONE, sizeof r->got_at);
	dig_state s;
	dig_cmd cmd;
	int dry[DIG_MAX_MACHINES] = { 0 };
	dig_state_init(lv, &s);
	r->gold_total = dig_popcount(s.gold);
	r->valid = true;
	for (int i = 0; i < n; i++) {
		uint64_t before = s.gold;
		if (taps[i] >= dig_slots(lv) || dig_arrow_do(lv, &s, taps[i], &cmd) != 0) {
			r->valid = false;
			break;
		}
		r->ntaps = i + 1;
		r->got[i] = before & ~s.gold;
		for (int m = 0; m < lv->machines; m++) {
			if (!((cmd.moved >> m) & 1u))
				continue;
			r->moves[m]++;
			dry[m]++;
			if (!((r->got[i] >> s.pos[m]) & 1u))
				continue;
			r->got_by[s.pos[m]] = (uint8_t)m;
			r->got_at[s.pos[m]] = (uint8_t)i;
			r->collects[m]++;
			if (dry[m] > r->longest_dry[m])
				r->longest_dry[m] = dry[m];
			dry[m] = 0;
		}
	}
	for (int m = 0; m < lv->machines; m++) {
		if (dry[m] > r->longest_dry[m])
			r->longest_dry[m] = dry[m];
		r->final[m] = s.pos[m];
	}
	r->gold_got = r->gold_total - dig_popcount(s.gold);
}

/*
 * Numbers the gold 1..n in the order `taps` collect it on lv played without
 * gold_in_order (ties within a tap in machine order, the engine's order);
 * gold the taps never collect comes last, in cell order.
 */
void dig_number_gold(dig_level *lv, const uint8_t *taps, int n)
{
	dig_level plain = *lv;
	plain.rules.gold_in_order = false;
	dig_run r;
	dig_run_play(&plain, taps, n, &r);
	int next = 1, cells = dig_cells_of(lv);
	for (int i = 0; i < r.ntaps; i++)
		for (int m = 0; m < lv->machines; m++)
			for (uint64_t g = r.got[i]; g; g &= g - 1) {
				int c = __builtin_ctzll(g);
				if (r.got_by[c] == m)
					lv->gold[c] = (uint8_t)next++;
			}
	for (int c = 0; c < cells; c++)
		if (lv->gold[c] && r.got_by[c] == DIG_NONE)
			lv->gold[c] = (uint8_t)next++;
}

/* Does dig_replay accept `lv` with taps[0, n) and collect all its gold
 * within the budget? (So the level also passes dig_level_check.) */
bool dig_replays(const dig_level *lv, const uint8_t *taps, int n)
{
	int gold = 0, turns = 0, total = dig_gold_count(lv);
	if (dig_replay(lv, taps, n, &gold, &turns, NULL) != 0)
		return false;
	return gold == total && turns == n;
}

/* Whether the taps[0, n) from *from (a copy) are all valid and leave no
 * gold: with the turn budget in the state, dig_replays' test from there. */
static bool wins_after(const dig_level *lv, const dig_state *from, const uint8_t *taps, int n)
{
	dig_state s = *from;
	dig_cmd cmd;
	for (int i = 0; i < n; i++)
		if (dig_arrow_do(lv, &s, taps[i], &cmd) != 0)
			return false;
	return dig_won(&s);
}

/* Extends the states kept before each tap of out (at[0..*known]) up to
 * at[upto]; false when a tap is not valid. */
static bool states_to(const dig_level *lv, const uint8_t *out, dig_state *at, int *known, int upto)
{
	dig_cmd cmd;
	for (; *known < upto; (*known)++) {
		at[*known + 1] = at[*known];
		if (dig_arrow_do(lv, &at[*known + 1], out[*known], &cmd) != 0)
			return false;
	}
	return true;
}

/* Leaves taps a and b of out[0, n) out (a <= b; b == a: the one tap) when
 * the rest still wins from at[a], the state before tap a: true, and out
 * holds the n - 1 or n - 2 taps left. */
static bool left_out(const dig_level *lv, const dig_state *at, uint8_t *out, int n, int a, int b)
{
	uint8_t rest[DIG_MAX_TURNS];
	int k = 0;
	for (int t = a + 1; t < n; t++)
		if (t != b)
			rest[k++] = out[t];
	if (!wins_after(lv, &at[a], rest, k))
		return false;
	memcpy(out + a, rest, (size_t)k);
	return true;
}

/*
 * A shortcut of the play taps[0, n) on lv: taps left out one at a time,
 * the earliest that can go first, while what is left still replays (every
 * tap valid, all the gold collected within the turn budget); when no one
 * tap can go, two at a time (the earliest pair first), then one at a time
 * again, until nothing can go. Writes the play left into out (room for n
 * taps) and returns its length: n when no tap can go. The states before
 * each tap are kept, so a try replays only the taps after the first one
 * left out (hardest seeds 1 to 100: about 15 us a candidate for the single
 * taps, 38 us for the pairs, which pay since the level is dressed for the
 * shortcut: generate.c, docs/digger.md "Dressed for the shortcut").
 */
int dig_shortcut(const dig_level *lv, const uint8_t *taps, int n, uint8_t *out)
{
	dig_state at[DIG_MAX_TURNS + 1]; /* at[i]: the state before out[i] */
	memmove(out, taps, (size_t)n);
	dig_state_init(lv, &at[0]);
	int known = 0; /* at[0..known] are out's */
	for (bool dropped = true; dropped;) {
		dropped = false;
		for (int a = 0; a < n && !dropped; a++) {
			if (!states_to(lv, out, at, &known, a))
				return n; /* (taps was no play: stop here) */
			if (left_out(lv, at, out, n, a, a)) {
				n--;
				known = a; /* the taps before a stay; one left out can
					    * free an earlier one */
				dropped = true;
			}
		}
		for (int a = 0; a < n && !dropped; a++) {
			if (!states_to(lv, out, at, &known, a))
				return n;
			for (int b = a + 1; b < n && !dropped; b++)
				if (left_out(lv, at, out, n, a, b)) {
					n -= 2;
					known = a;
					dropped = true;
				}
		}
	}
	return n;
}

/* ---- the trace ---- */

/*
 * Plays `taps` on `lv` from the start and records what happened in `out`
 * (zeroed first): the taps, each machine's cell after every tap and which
 * machines each tap moved. Needs no gold (it does not run dig_level_check,
 * only the engine). 0, or SF_EINVAL naming the first tap that is not valid.
 */
int dig_trace_build(const dig_level *lv, const uint8_t *taps, int ntaps, dig_trace *out,
		    sf_err *err)
{
	memset(out, 0, sizeof *out);
	if (ntaps < 0 || ntaps > DIG_MAX_TURNS)
		return sf_err_set(err, SF_EINVAL, "taps: %d taps is outside 0..%d", ntaps,
				  DIG_MAX_TURNS);
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	memcpy(out->pos[0], s.pos, DIG_MAX_MACHINES);
	for (int i = 0; i < ntaps; i++) {
		if (taps[i] >= dig_slots(lv) || dig_arrow_do(lv, &s, taps[i], &cmd) != 0) {
			memset(out, 0, sizeof *out);
			return sf_err_set(err, SF_EINVAL, "move %d: arrow %d is not valid", i + 1,
					  taps[i]);
		}
		out->tap[i] = taps[i];
		out->moved[i] = cmd.moved;
		memcpy(out->pos[i + 1], s.pos, DIG_MAX_MACHINES);
	}
	out->turns = ntaps;
	return 0;
}

/* ---- quality checks ---- */

typedef struct check_ctx {
	const dig_level *lv;
	const dig_preset *ps;
	int ntaps;
	const dig_run *run;
	bool replays; /* dig_replay: a well-formed level, all gold within the budget */
} check_ctx;

typedef struct dig_check {
	const char *name;
	bool walk; /* decided by the machines' walk alone: checked before gold goes in */
	bool (*pass)(const check_ctx *c);
} dig_check;

/* The recorded solution replays and collects every gold within the budget. */
static bool q_replays(const check_ctx *c)
{
	return c->replays && c->run->valid && c->run->gold_got == c->run->gold_total;
}

/* Gold cells / cells within the preset's range (devlog: "count the treasure"). */
static bool q_treasure_ratio(const check_ctx *c)
{
	int cells = dig_cells_of(c->lv), gold = dig_gold_count(c->lv);
	return gold * 100 >= c->ps->gold_min_pct * cells &&
	       gold * 100 <= c->ps->gold_max_pct * cells;
}

/* The last tap collects gold: otherwise the end of the solution is useless. */
static bool q_last_tap_collects(const check_ctx *c)
{
	return c->ntaps > 0 && c->run->ntaps == c->ntaps && c->run->got[c->ntaps - 1] != 0;
}

/* Every machine moves at least min_moves times. */
static bool q_machines_move(const check_ctx *c)
{
	for (int m = 0; m < c->lv->machines; m++)
		if (c->run->moves[m] < c->ps->min_moves)
			return false;
	return true;
}

/* No machine makes more than max_dry moves without collecting gold (it would
 * be shuffling aimlessly), counting moves after its last gold too. */
static bool q_taps_between_treasures(const check_ctx *c)
{
	for (int m = 0; m < c->lv->machines; m++)
		if (c->run->longest_dry[m] > c->ps->max_dry)
			return false;
	return true;
}

/* Every machine ends somewhere other than where it started. */
static bool q_start_differs_from_end(const check_ctx *c)
{
	for (int m = 0; m < c->lv->machines; m++)
		if (c->run->final[m] == c->lv->start[m])
			return false;
	return true;
}

/* No machine ends on a start cell (gold never lies under one, and the
 * final cell must hold gold). */
static bool q_ends_off_starts(const check_ctx *c)
{
	uint64_t starts = dig_starts_of(c->lv);
	for (int m = 0; m < c->lv->machines; m++)
		if ((starts >> c->run->final[m]) & 1u)
			return false;
	return true;
}

/* Every machine collects gold of its own: each one matters. */
static bool q_every_machine_collects(const check_ctx *c)
{
	for (int m = 0; m < c->lv->machines; m++)
		if (c->run->collects[m] == 0)
			return false;
	return true;
}

/* The walk is not much shorter than the grid's target (it got stuck early). */
static bool q_solution_length(const check_ctx *c)
{
	int target = dig_target_taps(c->ps, dig_cells_of(c->lv));
	return c->ntaps * 100 >= c->ps->min_taps_pct * target;
}

/* Under single_use no arrow can be tapped twice: its uses plus the uses
 * cells give it (arrow treasure, decoys included) are at most one. */
static bool q_single_use(const check_ctx *c)
{
	const dig_level *lv = c->lv;
	if (!lv->rules.single_use)
		return true;
	int total[DIG_MAX_ARROWS];
	for (int i = 0; i < dig_slots(lv); i++)
		total[i] = lv->arrow[i].uses;
	dig_state start;
	dig_state_init(lv, &start);
	for (int cell = 0; cell < dig_cells_of(lv); cell++) {
		dig_gift gift;
		dig_terrain_gift(lv, &start, cell, &gift);
		for (uint32_t b = gift.slots; b; b &= b - 1)
			total[__builtin_ctz(b)]++;
	}
	for (int i = 0; i < dig_slots(lv); i++)
		if (total[i] > 1)
			return false;
	return true;
}

static const dig_check CHECKS[DIG_Q_COUNT] = {
	[DIG_Q_LENGTH] = { "solution length", true, q_solution_length },
	[DIG_Q_MOVES] = { "machines move", true, q_machines_move },
	[DIG_Q_START_END] = { "start differs from end", true, q_start_differs_from_end },
	[DIG_Q_ENDS_OFF_STARTS] = { "ends off starts", true, q_ends_off_starts },
	[DIG_Q_REPLAYS] = { "replay collects all gold", false, q_replays },
	[DIG_Q_RATIO] = { "treasure ratio", false, q_treasure_ratio },
	[DIG_Q_LAST_TAP] = { "last tap collects gold", false, q_last_tap_collects },
	[DIG_Q_EVERY_MACHINE] = { "every machine collects", false, q_every_machine_collects },
	[DIG_Q_DRY] = { "taps between treasures", false, q_taps_between_treasures },
	[DIG_Q_SINGLE_USE] = { "single use", false, q_single_use },
};

/* The number of quality checks (dig_quality_name's range). */
int dig_quality_count(void)
{
	return DIG_Q_COUNT;
}

/* The name of quality check i (0 <= i < dig_quality_count()), else NULL. */
const char *dig_quality_name(int i)
{
	return i >= 0 && i < DIG_Q_COUNT ? CHECKS[i].name : NULL;
}

/*
 * The quality checks on `lv` solved by taps[0, n) with preset ps's
 * thresholds: bit i set when check i fails. With walk_only, only the checks
 * that the machines' moves decide (the rest read as passing), which works on
 * a level without gold.
 */
uint32_t dig_quality_run(const dig_level *lv, const dig_preset *ps, const uint8_t *taps, int n,
			 bool walk_only)
{
	dig_run run;
	dig_run_play(lv, taps, n, &run);
	check_ctx c = { .lv = lv, .ps = ps, .ntaps = n, .run = &run };
	if (!walk_only)
		c.replays = dig_replays(lv, taps, n);
	uint32_t fails = 0;
	for (int i = 0; i < DIG_Q_COUNT; i++)
		if ((!walk_only || CHECKS[i].walk) && !CHECKS[i].pass(&c))
			fails |= 1u << i;
	return fails;
}

/*
 * Runs every quality check on `lv` with the solution `sol` (its taps and
 * turns; the rest of the trace is not read) under difficulty d's thresholds.
 * Returns a bit set: bit i when check i (dig_quality_name(i)) fails; 0 when
 * the puzzle passes them all. d outside the enum counts as DIG_MEDIUM.
 */
uint32_t dig_quality_fails(const dig_level *lv, const dig_trace *sol, dig_difficulty d)
{
	if ((int)d < 0 || d >= DIG_DIFFICULTY_COUNT)
		d = DIG_MEDIUM;
	int n = sol->turns < 0 ? 0 : sol->turns > DIG_MAX_TURNS ? DIG_MAX_TURNS : sol->turns;
	return dig_quality_run(lv, &dig_presets[d], sol->tap, n, false);
}
