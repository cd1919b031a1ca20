/*
 * generate.c - the constructive generator of Direction Digger (the devlog's
 * "efficient" way): play a random solution first, then dress the grid so
 * that exactly that solution works, then prove it with the solver. This
 * file holds the presets and the pipeline; gen_walk.c plays the walk,
 * gen_quality.c judges candidates and gen_hooks.c serves the terrain
 * modules' place and decoy hooks.
 *
 * One candidate goes through a fixed pipeline, every step driven by one rng
 * stream (seeded once per dig_generate call and never reseeded, so a retry
 * continues the stream and the same seed and params give the same bytes):
 *
 *  1. The walk (gen_walk.c): taps chosen at random among those the engine
 *     says are valid on a working level (dig_arrow_plan / dig_arrow_do;
 *     every arrow with plenty of uses, or one each under single_use),
 *     preferring taps that move machines; one machine at first, the next
 *     ones joining in the row or column of the chosen tap so that both
 *     move. The walk is cut at its best prefix near the preset's target
 *     length (taps_pct of the cells).
 *  2. Gold in hindsight: on each machine's final cell always; then on cells
 *     that break up a machine's longest stretch without gold; then on random
 *     cells the solution enters, up to a count drawn from the treasure-ratio
 *     range. Never on a start cell. Arrow uses become the solution's usage
 *     (unused arrows hidden: 0; under single_use at most 1), the turn budget
 *     the number of taps.
 *  3. Terrain in hindsight: the place hook of every allowed terrain module
 *     (terrain.h), in dig_place_order, with the preset's probability. The
 *     level is copied before each hook; afterwards the recorded solution is
 *     replayed (dig_replay) together with every quality check, and if it no
 *     longer collects all gold within the budget, or any check now fails,
 *     the copy comes back. Then red herrings the same way: the decoy hooks
 *     (cells nobody visits) and a spare use on a hidden arrow or two.
 *  4. Quality checks (gen_quality.c): a table of named predicates, the
 *     devlog's "tweaking" rules with the preset's thresholds. The walk's
 *     own checks run in step 1, the rest after step 2 and after each hook.
 *  5. First the recorded solution's shortcut (dig_shortcut: the taps that
 *     can go left out, a play the player finds without a solver) must pass
 *     the checks too (judge_shortcut); it spares the proof of 40 % of the
 *     hardest candidates the optimal play's checks would reject. Then the
 *     level is dressed for the shortcut (dress_for_shortcut): the uses and
 *     turns only the left-out taps needed go, and the shortcut becomes the
 *     recorded solution.
 *     Proof: dig_solve within solver_states must return DIG_SOLVED with no
 *     more taps than the recorded solution. A candidate whose search ran
 *     out of budget (DIG_UNKNOWN) is rejected like one that failed a
 *     check: the generator never emits a puzzle the solver did not solve.
 *     Then the solver's optimal play must pass the checks too (judge_optimal).
 *  6. The random player, where the preset asks (random_limit: hardest and
 *     expert): GEN_RANDOM_PLAYS uniformly random plays (dig_random_wins,
 *     measure.h, on a stream split from the candidate's rng, so the main
 *     stream is untouched) must win fewer than random_limit times.
 *
 * A rejected candidate is counted against the name of what rejected it and
 * the next one starts from step 1. After max_attempts the call fails with
 * SF_ERANGE naming the check that rejected most.
 *
 * Gold orders are always numbered in the order the solution collects the
 * gold (ties within one tap in machine order, as the engine collects), so
 * that the same level works with gold_in_order on or off; they are
 * renumbered after every change, since a web moves a collection later.
 */
#include "digger.h"

#include <stdio.h>
#include <string.h>

#include "gen_internal.h"
#include "measure.h"
#include "terrain.h"

#define GEN_RANDOM_PLAYS 500 /* step 6's random plays per candidate */

#define ARROW_DECOYS_MAX 2 /* hidden arrows a red herring may reveal */

#define TBIT(t) (1u << (t))
#define ALL_TERRAINS                                                                    \
	(TBIT(DIG_T_STONE) | TBIT(DIG_T_WEB) | TBIT(DIG_T_TREASURE) | TBIT(DIG_T_ICE) | \
	 TBIT(DIG_T_LAVA) | TBIT(DIG_T_ENERGY))

/*
 * The six presets (docs/digger.md has the table). The grid grows with the
 * difficulty, in width first and in height too (3 rows to expert's 6); rules
 * loosen and terrains arrive as the difficulty rises; every machine moves at
 * least three times (the devlog's rule). The machine counts and gold ranges
 * were tuned so that the measured difficulty (measure.h: optimum, random-play
 * win rate, dead-end share, branching) rises strictly from easiest to expert
 * over 30 seeds (bench_digger's second table). Expert also judges the
 * optimal play by what the player faces, since its grid alone left it no
 * harder than hardest on other seeds (seeds 31-60: more random wins, a lower
 * dead-end share): its minimum solution length is 90 % of the target (18
 * taps; 75 % until 2026-12-05, when expert's median optimum tied hardest's
 * in 6 % of 30-seed samples), the recorded solution (the turn budget;
 * the walk's shortcut, the walk itself at most 2 taps longer) may be at
 * most 2 taps longer than the optimum (max_spare), and the optimal play
 * must offer 4.5 valid taps per tap on average (min_choice_x10; the small,
 * narrow levels were the ones a random player won; 3.5 until 2026-12-05,
 * when hardest's median branching passed expert's on seeds 181-210).
 * Hardest and expert also ask the random player (step 6, random_limit):
 * fewer than 3 wins in 500 random plays at hardest, none at expert
 * (hardest's seed 80 gave a level that 18 % of random plays won, and on
 * seeds 61-90 hardest's mean random-win rate passed hard's). The solver
 * budgets: at hardest and expert, 500000 states, within which the solver
 * (since its lone-machine test) gave up on none of the 511 hardest
 * candidates that reached it over seeds 1 to 200 (1 of 877 over seeds 1 to
 * 300 since 2026-12-05's random player; 1.4 % with the pair tables alone;
 * 100000 states gave up on a sixth of hardest's before issue 16's solver
 * work), so that the budget no longer decides which puzzles come out; a search
 * that runs out stores about 60 MB. The check and the hint solve within
 * the largest budget (dig_check_solver_states), so that they prove every
 * generated level again.
 */
const dig_preset dig_presets[DIG_DIFFICULTY_COUNT] = {
	[DIG_EASIEST] = {
		.name = "easiest", .w = 3, .h = 3, .machines_min = 1, .machines_max = 1,
		.rules = { .no_shuffle = true, .no_backtrack = true, .single_use = true },
		.terrains = 0, .red_herrings = false,
		.taps_pct = 70, .min_taps_pct = 60, .gold_min_pct = 20, .gold_max_pct = 45,
		.min_moves = 3, .max_dry = 3, .max_spare = -1,
		.max_attempts = 300, .solver_states = 20000,
	},
	[DIG_EASY] = {
		.name = "easy", .w = 4, .h = 3, .machines_min = 1, .machines_max = 2,
		.rules = { .no_shuffle = true, .single_use = true },
		.terrains = TBIT(DIG_T_STONE), .red_herrings = false,
		.taps_pct = 70, .min_taps_pct = 60, .gold_min_pct = 20, .gold_max_pct = 40,
		.min_moves = 3, .max_dry = 3, .max_spare = -1,
		.place_p = { [DIG_T_STONE] = 0.35 },
		.max_attempts = 300, .solver_states = 50000,
	},
	[DIG_MEDIUM] = {
		.name = "medium", .w = 5, .h = 4, .machines_min = 2, .machines_max = 3,
		.rules = { .no_shuffle = true },
		.terrains = TBIT(DIG_T_STONE) | TBIT(DIG_T_WEB) | TBIT(DIG_T_TREASURE),
		.red_herrings = false,
		.taps_pct = 65, .min_taps_pct = 60, .gold_min_pct = 20, .gold_max_pct = 40,
		.min_moves = 3, .max_dry = 4, .max_spare = -1,
		.place_p = { [DIG_T_STONE] = 0.3, [DIG_T_WEB] = 0.5, [DIG_T_TREASURE] = 0.25 },
		.max_attempts = 300, .solver_states = 100000,
	},
	[DIG_HARD] = {
		.name = "hard", .w = 7, .h = 4, .machines_min = 3, .machines_max = 3,
		.rules = { .no_shuffle = true },
		.terrains = TBIT(DIG_T_STONE) | TBIT(DIG_T_WEB) | TBIT(DIG_T_TREASURE) |
			    TBIT(DIG_T_ICE) | TBIT(DIG_T_LAVA),
		.red_herrings = true,
		.taps_pct = 60, .min_taps_pct = 60, .gold_min_pct = 15, .gold_max_pct = 28,
		.min_moves = 3, .max_dry = 5, .max_spare = -1,
		.place_p = { [DIG_T_STONE] = 0.3, [DIG_T_WEB] = 0.5, [DIG_T_TREASURE] = 0.25,
			     [DIG_T_ICE] = 0.6, [DIG_T_LAVA] = 0.6 },
		.decoy_p = 0.4,
		.max_attempts = 300, .solver_states = 100000,
	},
	[DIG_HARDEST] = {
		.name = "hardest", .w = 8, .h = 5, .machines_min = 4, .machines_max = 6,
		.rules = { .no_shuffle = true, .any_direction = true },
		.terrains = ALL_TERRAINS, .red_herrings = true,
		.taps_pct = 55, .min_taps_pct = 60, .gold_min_pct = 15, .gold_max_pct = 35,
		.min_moves = 3, .max_dry = 5, .max_spare = -1, .random_limit = 3,
		.place_p = { [DIG_T_STONE] = 0.3, [DIG_T_WEB] = 0.5, [DIG_T_TREASURE] = 0.25,
			     [DIG_T_ICE] = 0.6, [DIG_T_LAVA] = 0.6, [DIG_T_ENERGY] = 0.25 },
		.decoy_p = 0.4,
		.max_attempts = 300, .solver_states = 500000,
	},
	[DIG_EXPERT] = {
		.name = "expert", .w = 10, .h = 6, .machines_min = 6, .machines_max = 6,
		.rules = { .no_shuffle = true, .any_direction = true },
		.terrains = ALL_TERRAINS, .red_herrings = true,
		.taps_pct = 33, .min_taps_pct = 90, .gold_min_pct = 15, .gold_max_pct = 30,
		.min_moves = 3, .max_dry = 6, .max_spare = 2, .min_choice_x10 = 45,
		.random_limit = 1,
		.place_p = { [DIG_T_STONE] = 0.3, [DIG_T_WEB] = 0.5, [DIG_T_TREASURE] = 0.25,
			     [DIG_T_ICE] = 0.6, [DIG_T_LAVA] = 0.6, [DIG_T_ENERGY] = 0.25 },
		.decoy_p = 0.4,
		.max_attempts = 300, .solver_states = 500000,
	},
};

/* ---- steps 2 and 3: gold, arrows and terrain in hindsight ---- */

/* Who first enters each cell in the walk, and when (DIG_NONE: nobody). */
typedef struct first_entry {
	uint8_t by[DIG_MAX_CELLS];
	uint8_t at[DIG_MAX_CELLS];
} first_entry;

static void first_entries(const dig_trace *tr, int machines, first_entry *f)
{
	memset(f, DIG_NONE, sizeof *f);
	for (int t = 0; t < tr->turns; t++)
		for (int m = 0; m < machines; m++) {
			int c = tr->pos[t + 1][m];
			if (((tr->moved[t] >> m) & 1u) && f->by[c] == DIG_NONE) {
				f->by[c] = (uint8_t)m;
				f->at[c] = (uint8_t)t;
			}
		}
}

/*
 * The longest stretch of machine m's moves without collecting gold, as the
 * taps [*from, *to] it spans; its length in moves is returned (a machine
 * that collects nothing counts 100 more, so it is served first). Before
 * terrain, gold is collected by whoever first enters its cell.
 */
static int longest_dry(const dig_trace *tr, const first_entry *f, const uint8_t *gold, int m,
		       int *from, int *to)
{
	int best = 0, run = 0, start = 0, collected = 0;
	*from = *to = -1;
	for (int t = 0; t < tr->turns; t++) {
		if (!((tr->moved[t] >> m) & 1u))
			continue;
		if (run == 0)
			start = t;
		run++;
		int c = tr->pos[t + 1][m];
		bool collects = gold[c] && f->by[c] == m && f->at[c] == t;
		if (run > best) {
			best = run;
			*from = start;
			*to = t;
		}
		if (collects) {
			collected++;
			run = 0;
		}
	}
	return collected ? best : best + 100;
}

/*
 * Step 2: gold on every final cell, then optional gold where it helps most
 * (devlog: a machine that goes too long between treasures looks aimless):
 * while some machine's longest gold-less stretch is longer than max_dry (or
 * it collects nothing), gold goes on the cell nearest the middle of that
 * stretch that the machine is first to enter; then random cells the
 * solution enters, until the count drawn from the treasure-ratio range.
 * Never on a start cell. Also sets arrow uses and the turn budget from the
 * walk. Returns the optional gold cells.
 */
static uint64_t place_gold(dig_level *lv, const dig_walk *w, const dig_trace *tr,
			   const dig_preset *ps, rng *r)
{
	int cells = dig_cells_of(lv);
	uint64_t starts = dig_starts_of(lv), finals = 0, entered = 0;
	for (int m = 0; m < lv->machines; m++)
		finals |= UINT64_C(1) << tr->pos[tr->turns][m];
	for (int t = 0; t < tr->turns; t++)
		for (int m = 0; m < lv->machines; m++)
			if ((tr->moved[t] >> m) & 1u)
				entered |= UINT64_C(1) << tr->pos[t + 1][m];
	int lo = (ps->gold_min_pct * cells + 99) / 100, hi = ps->gold_max_pct * cells / 100;
	int want = lo + (hi > lo ? (int)rng_below(r, (uint64_t)(hi - lo + 1)) : 0);
	int have = 0;
	for (uint64_t f = finals & ~starts; f; f &= f - 1, have++)
		lv->gold[__builtin_ctzll(f)] = 1;

	first_entry fe;
	first_entries(tr, lv->machines, &fe);
	uint64_t optional = 0;
	uint8_t hopeless = 0; /* machines whose longest stretch has no free cell */
	while (have < hi) {
		int worst = -1, len = ps->max_dry, from = 0, to = 0;
		for (int m = 0; m < lv->machines; m++) {
			int a, b, l = longest_dry(tr, &fe, lv->gold, m, &a, &b);
			if (!((hopeless >> m) & 1u) && l > len) {
				worst = m;
				len = l;
				from = a;
				to = b;
			}
		}
		if (worst < 0)
			break;
		int best = -1, best_off = DIG_MAX_TURNS, mid = from + to;
		for (int t = from; t <= to; t++) {
			int c = tr->pos[t + 1][worst];
			if (!((tr->moved[t] >> worst) & 1u) || lv->gold[c] ||
			    ((starts >> c) & 1u) || fe.by[c] != worst || fe.at[c] != t)
				continue;
			int off = 2 * t > mid ? 2 * t - mid : mid - 2 * t;
			if (off < best_off) {
				best = c;
				best_off = off;
			}
		}
		if (best < 0) {
			hopeless |= (uint8_t)(1u << worst);
			continue;
		}
		lv->gold[best] = 1;
		optional |= UINT64_C(1) << best;
		have++;
	}
	uint64_t pool = entered & ~finals & ~starts & ~optional;
	for (; have < want && pool; have++) {
		int c = dig_pick_cell(r, pool);
		pool &= ~(UINT64_C(1) << c);
		optional |= UINT64_C(1) << c;
		lv->gold[c] = 1;
	}
	for (int i = 0; i < dig_slots(lv); i++)
		lv->arrow[i].uses = 0;
	for (int t = 0; t < w->n; t++)
		lv->arrow[w->tap[t]].uses++;
	lv->turns = w->n;
	dig_number_gold(lv, w->tap, w->n);
	return optional;
}

/* Step 3's working set: the hooks' view, and what a kept change must pass. */
typedef struct hindsight {
	dig_gen g;
	const dig_preset *ps;
	const uint8_t *taps; /* the recorded solution */
	int n;
	uint64_t optional; /* gold cells step 2 chose freely (trim_gold may drop them) */
} hindsight;

static void trim_gold(dig_level *lv, uint64_t optional, uint64_t taken, const dig_preset *ps,
		      rng *r);

/*
 * Runs one hook on a copy of the level. The change stands only when,
 * optional gold trimmed back into the treasure ratio and the gold
 * renumbered, the puzzle still passes every quality check, the replay of
 * the recorded solution (all gold within the budget) first among them.
 * Otherwise the copy comes back: terrain never makes a candidate worse.
 */
static void try_hook(hindsight *h, int (*hook)(dig_gen *), double p)
{
	if (!hook || p <= 0)
		return;
	dig_gen *g = &h->g;
	dig_level saved = *g->lv;
	uint64_t taken = g->taken;
	g->p = p;
	if (hook(g) == 0)
		return;
	trim_gold(g->lv, h->optional, g->taken, h->ps, g->rng);
	dig_number_gold(g->lv, h->taps, h->n);
	if (dig_quality_run(g->lv, h->ps, h->taps, h->n, false) != 0) {
		*g->lv = saved;
		g->taken = taken;
	}
}

/* Step 3, red herrings beyond the terrain decoys: a spare use on up to
 * ARROW_DECOYS_MAX hidden arrows, each with probability p. */
static int arrow_decoys(dig_gen *g)
{
	int placed = 0, slots = dig_slots(g->lv);
	for (int k = 0; k < ARROW_DECOYS_MAX; k++) {
		if (!dig_gen_chance(g, g->p))
			continue;
		uint64_t hidden = 0;
		for (int i = 0; i < slots; i++)
			if (g->lv->arrow[i].uses == 0)
				hidden |= UINT64_C(1) << i;
		int slot = dig_gen_pick(g, hidden);
		if (slot < 0)
			break;
		g->lv->arrow[slot].uses = 1;
		placed++;
	}
	return placed;
}

/* Removes optional gold (never a terrain's) while there is more than the
 * preset allows. */
static void trim_gold(dig_level *lv, uint64_t optional, uint64_t taken, const dig_preset *ps,
		      rng *r)
{
	int cells = dig_cells_of(lv), gold = dig_gold_count(lv);
	uint64_t pool = optional & ~taken;
	while (gold * 100 > ps->gold_max_pct * cells && pool) {
		int c = dig_pick_cell(r, pool);
		pool &= ~(UINT64_C(1) << c);
		if (lv->gold[c]) {
			lv->gold[c] = 0;
			gold--;
		}
	}
}

/* ---- the pipeline ---- */

/*
 * Rejection reasons: the quality checks on the recorded walk (0 ..
 * DIG_Q_COUNT - 1), then these, then the quality checks on the solver's
 * optimal play (REJ_OPTIMAL + check), then on the recorded walk's shortcut
 * (REJ_SHORTCUT + check).
 */
enum {
	PASSED = -1,
	REJ_MACHINES = DIG_Q_COUNT, /* not every machine found a start */
	REJ_SOLVER_BUDGET,
	REJ_SOLVER_UNSOLVABLE,
	REJ_SOLVER_LONGER,
	REJ_SPARE,   /* the turn budget leaves more spare taps than the preset allows */
	REJ_CHOICE,  /* the optimal play offers fewer valid taps than the preset asks */
	REJ_HERRING, /* the optimal play needs a red herring */
	REJ_RANDOM,  /* random play wins too often (step 6) */
	REJ_OPTIMAL,
	REJ_SHORTCUT = REJ_OPTIMAL + DIG_Q_COUNT,
	REJ_COUNT = REJ_SHORTCUT + DIG_Q_COUNT
};

/* Writes the name of rejection reason i into buf. */
static void reject_name(int i, char *buf, size_t size)
{
	static const char *const EXTRA[] = { "machines placed",    "solver budget",
					     "solver unsolvable",  "solver longer",
					     "spare taps",         "few choices",
					     "red herring needed", "random play wins" };
	_Static_assert(sizeof EXTRA / sizeof EXTRA[0] == REJ_OPTIMAL - DIG_Q_COUNT,
		       "a name for every reason between the checks and REJ_OPTIMAL");
	if (i < DIG_Q_COUNT)
		snprintf(buf, size, "%s", dig_quality_name(i));
	else if (i < REJ_OPTIMAL)
		snprintf(buf, size, "%s", EXTRA[i - DIG_Q_COUNT]);
	else if (i < REJ_SHORTCUT)
		snprintf(buf, size, "optimal play: %s", dig_quality_name(i - REJ_OPTIMAL));
	else
		snprintf(buf, size, "shortcut: %s", dig_quality_name(i - REJ_SHORTCUT));
}

_Static_assert(REJ_COUNT <= DIG_REJECT_NAMES, "dig_puzzle.rejected must hold every reason");

static void note_reject(dig_puzzle *out, int *count, int reason)
{
	if (count[reason]++ == 0 && out->nrejected < DIG_REJECT_NAMES) {
		reject_name(reason, out->rejected[out->nrejected], sizeof out->rejected[0]);
		out->nrejected++;
	}
}

static int lowest_bit(uint32_t v)
{
	return __builtin_ctz(v);
}

/* The effective grid: params or preset, grown (width first) until it holds
 * 3 cells per machine and 3 more. */
static void grid_size(const dig_gen_params *p, const dig_preset *ps, int *gw, int *gh)
{
	*gw = p->w ? p->w : ps->w;
	*gh = p->h ? p->h : ps->h;
	int need = 3 * (p->machines ? p->machines : ps->machines_max) + 3;
	while (*gw * *gh < need && *gw < DIG_MAX_W)
		(*gw)++;
	while (*gw * *gh < need && *gh < DIG_MAX_H)
		(*gh)++;
}

/* So grid_size always reaches `need`, and any grid fits a cell set. */
_Static_assert((DIG_MAX_W * DIG_MAX_H) >= 3 * DIG_MAX_MACHINES + 3,
	       "the largest grid holds the most machines");

static int check_params(const dig_gen_params *p, sf_err *err)
{
	if ((int)p->difficulty < 0 || p->difficulty >= DIG_DIFFICULTY_COUNT)
		return sf_err_set(err, SF_EINVAL, "difficulty: %d is outside 0..%d",
				  (int)p->difficulty, DIG_DIFFICULTY_COUNT - 1);
	if (p->w != 0 && (p->w < 2 || p->w > DIG_MAX_W))
		return sf_err_set(err, SF_EINVAL, "w: %d is outside 2..%d (0: the difficulty's)",
				  p->w, DIG_MAX_W);
	if (p->h != 0 && (p->h < 2 || p->h > DIG_MAX_H))
		return sf_err_set(err, SF_EINVAL, "h: %d is outside 2..%d (0: the difficulty's)",
				  p->h, DIG_MAX_H);
	if (p->machines < 0 || p->machines > DIG_MAX_MACHINES)
		return sf_err_set(err, SF_EINVAL,
				  "machines: %d is outside 1..%d (0: the difficulty's)",
				  p->machines, DIG_MAX_MACHINES);
	if (p->terrains & ~(uint32_t)ALL_TERRAINS & ~TBIT(DIG_T_MUD))
		return sf_err_set(err, SF_EINVAL,
				  "terrains: bit set %#x names no terrain (bits 1..%d)",
				  p->terrains, DIG_T_COUNT - 1);
	if (p->max_attempts < 1 || p->max_attempts > 100000)
		return sf_err_set(err, SF_EINVAL, "max_attempts: %d is outside 1..100000",
				  p->max_attempts);
	if ((int)p->solver_bound < 0 || p->solver_bound > DIG_BOUND_ROUTES)
		return sf_err_set(err, SF_EINVAL, "solver_bound: %d is outside 0..%d",
				  (int)p->solver_bound, DIG_BOUND_ROUTES);
	if (p->solver_states < 1)
		return sf_err_set(err, SF_EINVAL, "solver_states: 0 is outside 1..%llu",
				  (unsigned long long)UINT64_MAX);
	return 0; /* grid_size makes room for any machine count */
}

/* The name of difficulty d's preset, or NULL when d is not a difficulty. */
const char *dig_difficulty_name(dig_difficulty d)
{
	return (int)d >= 0 && d < DIG_DIFFICULTY_COUNT ? dig_presets[d].name : NULL;
}

/*
 * Fills `p` with difficulty d's preset (d outside the enum counts as
 * DIG_MEDIUM): its grid, machines 0 (each candidate draws a count from the
 * preset's range), rules, terrains, red herrings, attempts and solver
 * budget; no stop callback.
 */
void dig_gen_params_default(dig_gen_params *p, dig_difficulty d)
{
	if ((int)d < 0 || d >= DIG_DIFFICULTY_COUNT)
		d = DIG_MEDIUM;
	const dig_preset *ps = &dig_presets[d];
	memset(p, 0, sizeof *p);
	p->difficulty = d;
	p->w = ps->w;
	p->h = ps->h;
	p->machines = 0;
	p->rules = ps->rules;
	p->terrains = ps->terrains;
	p->red_herrings = ps->red_herrings;
	p->max_attempts = ps->max_attempts;
	p->solver_states = ps->solver_states;
	p->solver_bound = DIG_BOUND_USES;
}

/*
 * One candidate, steps 1 to 4: PASSED with out->level and out->recorded
 * set, and *plain the level as it stood before the red herrings; or the
 * index of the rejection reason (reject_name).
 */
static int candidate(const dig_gen_params *p, rng *r, dig_puzzle *out, dig_level *plain)
{
	const dig_preset *ps = &dig_presets[p->difficulty];
	int gw, gh;
	grid_size(p, ps, &gw, &gh);
	int machines = p->machines;
	if (machines == 0)
		machines = ps->machines_min +
			   (int)rng_below(r, (uint64_t)(ps->machines_max - ps->machines_min + 1));
	int target = dig_target_taps(ps, gw * gh);

	dig_walk w;
	int longest = target + target / 4 > DIG_MAX_TURNS ? DIG_MAX_TURNS : target + target / 4;
	if (!dig_walk_play(&w, ps, gw, gh, &p->rules, machines, longest, r))
		return REJ_MACHINES;
	uint32_t fails = dig_walk_trim(&w, ps, target);
	if (fails)
		return lowest_bit(fails);

	dig_level *lv = &out->level;
	*lv = w.lv;
	dig_trace *tr = &out->recorded;
	if (dig_trace_build(lv, w.tap, w.n, tr, NULL) != 0)
		return DIG_Q_REPLAYS; /* the walk went through the engine: not reached */
	uint64_t optional = place_gold(lv, &w, tr, ps, r);

	fails = dig_quality_run(lv, ps, w.tap, w.n, false);
	if (fails)
		return lowest_bit(fails);

	hindsight h;
	memset(&h, 0, sizeof h);
	h.g.lv = lv;
	h.g.sol = tr;
	h.g.rng = r;
	h.g.terrains = p->terrains;
	for (int t = 0; t <= tr->turns; t++)
		for (int m = 0; m < lv->machines; m++)
			h.g.visited |= UINT64_C(1) << tr->pos[t][m];
	h.ps = ps;
	h.taps = w.tap;
	h.n = w.n;
	h.optional = optional;
	for (int i = 0; i < DIG_T_COUNT; i++) {
		int t = dig_place_order[i];
		if ((p->terrains >> t) & 1u)
			try_hook(&h, dig_terrain_of(t)->place, ps->place_p[t]);
	}
	*plain = *lv;
	if (p->red_herrings) {
		for (int i = 0; i < DIG_T_COUNT; i++) {
			int t = dig_place_order[i];
			if ((p->terrains >> t) & 1u)
				try_hook(&h, dig_terrain_of(t)->decoy, ps->decoy_p);
		}
		try_hook(&h, arrow_decoys, ps->decoy_p);
	}
	fails = dig_quality_run(lv, ps, w.tap, w.n, false);
	if (fails)
		return lowest_bit(fails);
	/* The hooks keep what every machine does (terrain.h); make sure the
	 * trace handed out is what the finished level does with the taps. */
	dig_trace final;
	if (dig_trace_build(lv, w.tap, w.n, &final, NULL) != 0 ||
	    memcmp(&final, tr, sizeof final) != 0)
		return DIG_Q_REPLAYS;
	return PASSED;
}

/*
 * Whether the player, following the optimal play taps[0..n-1] of lv,
 * chooses among at least min_x10 / 10 valid taps per tap on average
 * (measure.h's `branching`, the same count).
 */
static bool choice_enough(const dig_level *lv, const uint8_t *taps, int n, int min_x10)
{
	if (min_x10 <= 0 || n <= 0)
		return true;
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	long valid = 0;
	int slots = dig_slots(lv);
	for (int t = 0; t < n; t++) {
		for (int slot = 0; slot < slots; slot++)
			valid += dig_arrow_valid(lv, &s, slot);
		if (dig_arrow_do(lv, &s, taps[t], &cmd) != 0)
			return false;
	}
	return valid * 10 >= (long)min_x10 * n;
}

/*
 * Step 5, the solver's verdict on a candidate that passed steps 1 to 4:
 * PASSED, or the rejection reason. The optimum must exist within the
 * budget and be no longer than the recorded solution (and, where the
 * preset asks, at most max_spare taps shorter and offering min_choice_x10
 * / 10 valid taps per tap); then the player's view: the solver's optimal
 * play must pass every quality check the recorded walk passed (a shortcut
 * that skips most of the puzzle, a machine that an optimal play barely
 * moves, ...), and it must work just as well on `plain`, the level without
 * its red herrings, so that no optimal play shown needs one (a decoy that
 * gives uses or turns, or a stone it needs as a wall, would be part of the
 * puzzle, not a herring).
 */
static int judge_optimal(const dig_level *lv, const dig_level *plain, const dig_preset *ps,
			 const dig_trace *recorded, const dig_solve_result *res)
{
	if (res->status == DIG_UNKNOWN)
		return REJ_SOLVER_BUDGET;
	if (res->status != DIG_SOLVED)
		return REJ_SOLVER_UNSOLVABLE;
	if (res->turns > recorded->turns)
		return REJ_SOLVER_LONGER;
	if (ps->max_spare >= 0 && recorded->turns - res->turns > ps->max_spare)
		return REJ_SPARE;
	if (!choice_enough(lv, res->taps, res->turns, ps->min_choice_x10))
		return REJ_CHOICE;
	uint32_t fails = dig_quality_run(lv, ps, res->taps, res->turns, false);
	if (fails)
		return REJ_OPTIMAL + lowest_bit(fails);
	if (!dig_replays(plain, res->taps, res->turns))
		return REJ_HERRING;
	return PASSED;
}

/*
 * Step 5's first part, before the proof: the recorded solution's shortcut
 * (dig_shortcut: taps dropped while the rest still wins) is a play a player
 * can find, so it must pass every quality check too; and the optimum is at
 * most its length, so a shortcut that leaves more than max_spare spare
 * taps settles REJ_SPARE already. PASSED, or the reason; the shortcut's
 * trace in *cut when not NULL (the recorded one when no tap can go).
 */
static int judge_shortcut(const dig_level *lv, const dig_preset *ps, const dig_trace *recorded,
			  dig_trace *cut)
{
	uint8_t taps[DIG_MAX_TURNS];
	int n = dig_shortcut(lv, recorded->tap, recorded->turns, taps);
	if (cut && dig_trace_build(lv, taps, n, cut, NULL) != 0)
		cut->turns = 0; /* (not reached: a shortcut replays) */
	if (n == recorded->turns)
		return PASSED;
	if (ps->max_spare >= 0 && recorded->turns - n > ps->max_spare)
		return REJ_SPARE;
	uint32_t fails = dig_quality_run(lv, ps, taps, n, false);
	return fails ? REJ_SHORTCUT + lowest_bit(fails) : PASSED;
}

/*
 * Plays taps[0, n) on lv from the start: whether every tap is valid and
 * the play wins, and into uses and *turns the least of each slot's uses
 * and of the turns left along the way, before the first tap and after
 * every tap (what the play never needed: gifts can raise a count midway,
 * so the count at the end alone would not do).
 */
static bool play_headroom(const dig_level *lv, const uint8_t *taps, int n,
			  uint8_t uses[DIG_MAX_ARROWS], int *turns)
{
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	int slots = dig_slots(lv);
	memcpy(uses, s.uses, DIG_MAX_ARROWS);
	*turns = s.turns_left;
	for (int t = 0; t < n; t++) {
		if (dig_arrow_do(lv, &s, taps[t], &cmd) != 0)
			return false;
		for (int i = 0; i < slots; i++)
			if (s.uses[i] < uses[i])
				uses[i] = s.uses[i];
		if (s.turns_left < *turns)
			*turns = s.turns_left;
	}
	return dig_won(&s);
}

/*
 * Step 5's second part: the level dressed for the shortcut `cut` instead
 * of the recorded walk, in *lv and *plain alike. Step 2 gave every arrow
 * the walk tapped the walk's taps as uses (step 3 may have moved some into
 * treasure) and the walk's length as the turn budget; the taps the
 * shortcut left out were never needed, so each such arrow loses the uses
 * the shortcut's play on `plain` never needs (its least count along that
 * play, gifts counted), the budget the turns it never needs, the gold is
 * renumbered in the shortcut's order and the shortcut becomes the recorded
 * solution: one use less on an arrow it taps, or one turn less, and it no
 * longer wins on `plain`. Counted on `plain`, the red herrings stay what
 * they were (a decoy use on an arrow the walk tapped too, where treasure
 * had taken its own, is not the walk's). A shortcut that does not win on
 * `plain` needs a red herring, which is then part of the puzzle: the
 * candidate is rejected as the optimal play's check would (REJ_HERRING).
 * Where the shortcut is the walk itself the candidate stays as it was.
 * The solver then searches a level without the slack the walk left
 * behind: hardest seeds 301 to 1000 took 9.1 s instead of 13.9 s, p99
 * 132 ms instead of 216 ms (with the shortcut's pairs, the least of three
 * alternated runs per seed; docs/digger.md, "Dressed for the shortcut").
 */
static int dress_for_shortcut(dig_level *lv, dig_level *plain, dig_trace *recorded,
			      const dig_trace *cut)
{
	if (cut->turns <= 0 || cut->turns >= recorded->turns)
		return PASSED;
	uint8_t room[DIG_MAX_ARROWS];
	int turns_room;
	/* It wins on lv (judge_shortcut): if not on plain, a herring helps. */
	if (!play_headroom(plain, cut->tap, cut->turns, room, &turns_room))
		return REJ_HERRING;
	uint32_t walked = 0; /* the slots the walk tapped */
	for (int t = 0; t < recorded->turns; t++)
		walked |= UINT32_C(1) << recorded->tap[t];
	dig_level tight[2] = { *lv, *plain };
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < dig_slots(lv); i++)
			if ((walked >> i) & 1u)
				tight[k].arrow[i].uses =
					(uint8_t)(tight[k].arrow[i].uses - room[i]);
		tight[k].turns -= turns_room;
		dig_number_gold(&tight[k], cut->tap, cut->turns);
		if (!dig_replays(&tight[k], cut->tap, cut->turns))
			return PASSED; /* (not seen: the level stays as it was) */
	}
	/* cut is the shortcut's trace on lv: fewer uses and turns change no
	 * move of a play that still replays, so it is the dressed level's too
	 * (test_digger_gen's check_puzzle builds it again and compares). */
	*lv = tight[0];
	*plain = tight[1];
	*recorded = *cut;
	return PASSED;
}

/* See digger.h: judge_shortcut for the tests, with difficulty d's preset. */
int dig_judge_shortcut(const dig_level *lv, dig_difficulty d, const dig_trace *recorded,
		       dig_trace *shortcut, char *why, size_t size)
{
	if ((int)d < 0 || d >= DIG_DIFFICULTY_COUNT)
		d = DIG_MEDIUM;
	int reason = judge_shortcut(lv, &dig_presets[d], recorded, shortcut);
	if (reason == PASSED)
		return 0;
	reject_name(reason, why, size);
	return 1;
}

/* See digger.h: judge_optimal for the tests, with difficulty d's preset. */
int dig_judge_optimal(const dig_level *lv, const dig_level *plain, dig_difficulty d,
		      const dig_trace *recorded, const dig_solve_result *optimal, char *why,
		      size_t size)
{
	if ((int)d < 0 || d >= DIG_DIFFICULTY_COUNT)
		d = DIG_MEDIUM;
	int reason = judge_optimal(lv, plain, &dig_presets[d], recorded, optimal);
	if (reason == PASSED)
		return 0;
	reject_name(reason, why, size);
	return 1;
}

/*
 * Generates a puzzle for params `p` and `seed` (see the design note at the
 * top). On success 0 and *out filled (zeroed first): the level, the
 * recorded solution, the solver's optimal one, the candidates tried and the
 * names of the checks that rejected the others. SF_EINVAL (naming the
 * field) for bad params, SF_ERANGE when no candidate passed in
 * p->max_attempts (naming the check that rejected most), SF_EBUDGET when
 * p->stop asked to stop, SF_ENOMEM when the solver could not allocate.
 * Same seed and params: the same bytes.
 */
int dig_generate(const dig_gen_params *p, uint64_t seed, dig_puzzle *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = check_params(p, err);
	if (rc != 0)
		return rc;
	rng r;
	rng_seed(&r, seed);
	int count[REJ_COUNT] = { 0 };
	dig_solve_result res;
	dig_level plain;
	const dig_preset *ps = &dig_presets[p->difficulty];
	for (int attempt = 1; attempt <= p->max_attempts; attempt++) {
		if (p->stop && p->stop(p->stop_arg)) {
			memset(out, 0, sizeof *out);
			return sf_err_set(err, SF_EBUDGET,
					  "difficulty %s: stopped after %d attempts",
					  dig_presets[p->difficulty].name, attempt - 1);
		}
		out->attempts = attempt;
		memset(&out->level, 0, sizeof out->level);
		memset(&out->recorded, 0, sizeof out->recorded);
		int reason = candidate(p, &r, out, &plain);
		dig_trace cut;
		if (reason == PASSED)
			reason = judge_shortcut(&out->level, ps, &out->recorded, &cut);
		if (reason == PASSED)
			reason = dress_for_shortcut(&out->level, &plain, &out->recorded, &cut);
		if (reason == PASSED) {
			dig_solve_event ev = { .attempt = attempt, .level = &out->level };
			if (p->on_solve)
				p->on_solve(p->on_solve_arg, &ev);
			memset(&res, 0, sizeof res);
			rc = dig_solve_with(&out->level, NULL, p->solver_states, p->solver_bound,
					    &res, err);
			if (rc != 0) {
				memset(out, 0, sizeof *out);
				return rc;
			}
			reason = judge_optimal(&out->level, &plain, ps, &out->recorded, &res);
			if (reason == PASSED && ps->random_limit > 0) {
				rng plays = rng_split(&r, (uint64_t)attempt);
				if (dig_random_wins(&out->level, GEN_RANDOM_PLAYS, rng_next(&plays),
						    ps->random_limit) >= ps->random_limit)
					reason = REJ_RANDOM;
			}
			out->solver_runs++;
			out->solver_budget += reason == REJ_SOLVER_BUDGET;
			if (p->on_solve) {
				char why[sizeof out->rejected[0]] = "";
				if (reason != PASSED)
					reject_name(reason, why, sizeof why);
				ev.done = true;
				ev.result = &res;
				ev.why = why;
				p->on_solve(p->on_solve_arg, &ev);
			}
		}
		if (reason == PASSED) {
			out->optimal = res;
			return 0;
		}
		note_reject(out, count, reason);
	}
	int worst = 0;
	for (int i = 1; i < REJ_COUNT; i++)
		if (count[i] > count[worst])
			worst = i;
	memset(&out->level, 0, sizeof out->level);
	memset(&out->recorded, 0, sizeof out->recorded);
	int attempts = out->attempts;
	char worst_name[sizeof out->rejected[0]];
	reject_name(worst, worst_name, sizeof worst_name);
	return sf_err_set(err, SF_ERANGE,
			  "difficulty %s: no puzzle passed in %d attempts; \"%s\" rejected most "
			  "(%d times)",
			  ps->name, attempts, worst_name, count[worst]);
}
