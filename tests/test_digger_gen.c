/*
 * test_digger_gen.c - the digger generator (core/digger/generate.c,
 * gen_walk.c, gen_quality.c) and the terrain modules' generation hooks.
 *
 * The solver is the oracle: every generated puzzle, for every preset and
 * many seeds, must pass dig_level_check, replay its recorded solution to
 * all gold within the budget, and carry a solver proof (DIG_SOLVED, no more
 * taps than recorded) whose own taps replay too. The quality checks are
 * tested one by one on hand-made traces built to break exactly one rule,
 * and each hindsight hook on a trace where its placement is forced (p = 1)
 * and must both keep the solution working and actually matter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "digger/digger.h"
#include "digger/measure.h"
#include "digger/terrain.h"

#define SEEDS 50

/* ---- helpers ---- */

/* Bit of the quality check called `name` in dig_quality_fails' result. */
static uint32_t check_bit(const char *name)
{
	for (int i = 0; i < dig_quality_count(); i++)
		if (strcmp(dig_quality_name(i), name) == 0)
			return 1u << i;
	fail_msg("no quality check is named \"%s\"", name);
	return 0;
}

/* A w x h level of plain mud, arrows into the grid and hidden, one machine
 * at `start`, no gold. */
static void plain_level(dig_level *lv, int w, int h, int start)
{
	memset(lv, 0, sizeof *lv);
	lv->w = w;
	lv->h = h;
	lv->machines = 1;
	lv->start[0] = (uint8_t)start;
	for (int i = 0; i < dig_slots(lv); i++)
		lv->arrow[i].dir = (uint8_t)dig_slot_default_dir(lv, i);
}

/* Gives every arrow exactly the uses `taps` need and the budget their
 * count, then records the trace. */
static void fit_and_trace(dig_level *lv, const uint8_t *taps, int n, dig_trace *tr)
{
	for (int i = 0; i < dig_slots(lv); i++)
		lv->arrow[i].uses = 0;
	for (int i = 0; i < n; i++)
		lv->arrow[taps[i]].uses++;
	lv->turns = n;
	sf_err err = { 0 };
	if (dig_trace_build(lv, taps, n, tr, &err) != 0)
		fail_msg("trace: %s", err.msg);
}

static int gold_count(const dig_level *lv)
{
	int n = 0;
	for (int c = 0; c < lv->w * lv->h; c++)
		n += lv->gold[c] != 0;
	return n;
}

/* Replays `taps` on lv and fails the test unless all gold is collected. */
static void assert_replays(const dig_level *lv, const uint8_t *taps, int n, const char *what)
{
	sf_err err = { 0 };
	int gold = -1, turns = -1;
	if (dig_replay(lv, taps, n, &gold, &turns, &err) != 0)
		fail_msg("%s: replay: %s", what, err.msg);
	if (gold != gold_count(lv) || turns != n)
		fail_msg("%s: replay collected %d of %d gold in %d taps", what, gold,
			 gold_count(lv), turns);
}

/* Whether `taps` replay on lv and collect all its gold within the budget. */
static bool wins(const dig_level *lv, const uint8_t *taps, int n)
{
	int gold = -1, turns = -1;
	return dig_replay(lv, taps, n, &gold, &turns, NULL) == 0 && gold == gold_count(lv);
}

/* How often machine m moves in tr (from the trace, not the checks' code). */
static int moves_of(const dig_trace *tr, int m)
{
	int moves = 0;
	for (int t = 0; t < tr->turns; t++)
		moves += (tr->moved[t] >> m) & 1u;
	return moves;
}

/* Fails the test unless `taps` stop collecting all of lv's gold once `cell`
 * is plain mud: the terrain placed there is needed, not decoration. */
static void assert_needed(const dig_level *lv, int cell, const uint8_t *taps, int n)
{
	dig_level without = *lv;
	without.terrain[cell] = DIG_T_MUD;
	without.tparam[cell] = 0;
	without.tmask[cell] = 0;
	if (wins(&without, taps, n))
		fail_msg("the %s at cell %d is not needed", dig_terrain_of(lv->terrain[cell])->name,
			 cell);
}

/* ---- every preset, many seeds ---- */

/* Everything a generated puzzle must satisfy, whatever the preset. */
static void check_puzzle(const dig_gen_params *p, uint64_t seed, const dig_puzzle *pz)
{
	char what[64];
	snprintf(what, sizeof what, "difficulty %d seed %llu", (int)p->difficulty,
		 (unsigned long long)seed);
	const dig_level *lv = &pz->level;
	sf_err err = { 0 };
	if (dig_level_check(lv, &err) != 0)
		fail_msg("%s: level check: %s", what, err.msg);
	assert_true(pz->attempts >= 1 && pz->attempts <= p->max_attempts);
	assert_true(lv->machines >= 1 && lv->machines <= DIG_MAX_MACHINES);
	assert_memory_equal(&lv->rules, &p->rules, sizeof lv->rules);

	/* The recorded solution: all gold within the budget, and a trace that
	 * is what the engine does with its taps. */
	const dig_trace *tr = &pz->recorded;
	assert_true(tr->turns >= 1 && tr->turns <= DIG_MAX_TURNS);
	assert_true(lv->turns <= tr->turns);
	assert_replays(lv, tr->tap, tr->turns, what);
	dig_trace again;
	assert_int_equal(dig_trace_build(lv, tr->tap, tr->turns, &again, NULL), 0);
	assert_memory_equal(&again, tr, sizeof again);

	/* The proof: solved, no longer than recorded, and its taps work. */
	if (pz->optimal.status != DIG_SOLVED)
		fail_msg("%s: solver status %d", what, pz->optimal.status);
	assert_true(pz->optimal.turns >= 1 && pz->optimal.turns <= tr->turns);
	assert_replays(lv, pz->optimal.taps, pz->optimal.turns, what);

	/* No candidate of this puzzle contradicted the engine: a candidate
	 * reaches the solver only when its recorded solution replays, so the
	 * solver can neither call it unsolvable nor need more taps. */
	assert_true(pz->nrejected >= 0 && pz->nrejected <= DIG_REJECT_NAMES);
	for (int i = 0; i < pz->nrejected; i++)
		if (!strcmp(pz->rejected[i], "solver unsolvable") ||
		    !strcmp(pz->rejected[i], "solver longer"))
			fail_msg("%s: a candidate was rejected as \"%s\"", what, pz->rejected[i]);

	/* Every quality check passes on the emitted puzzle. */
	uint32_t fails = dig_quality_fails(lv, tr, p->difficulty);
	if (fails)
		fail_msg("%s: quality check \"%s\" fails", what,
			 dig_quality_name(__builtin_ctz(fails)));

	/* ... and on the solver's optimal play, the one a player would find:
	 * every check, and (counted here from the trace, apart from the
	 * checks' own code) every machine moves at least three times, the
	 * devlog's rule. */
	dig_trace best;
	assert_int_equal(dig_trace_build(lv, pz->optimal.taps, pz->optimal.turns, &best, NULL), 0);
	fails = dig_quality_fails(lv, &best, p->difficulty);
	if (fails)
		fail_msg("%s: the optimal play fails quality check \"%s\"", what,
			 dig_quality_name(__builtin_ctz(fails)));
	for (int m = 0; m < lv->machines; m++)
		if (moves_of(&best, m) < 3)
			fail_msg("%s: machine %d moves %d times in the optimal play", what, m,
				 moves_of(&best, m));

	/* ... and on the recorded walk's shortcut (the taps that can go left
	 * out), which is never shorter than the optimum. */
	dig_trace cut;
	char why[48] = "";
	if (dig_judge_shortcut(lv, p->difficulty, tr, &cut, why, sizeof why) != 0)
		fail_msg("%s: the shortcut is rejected: %s", what, why);
	assert_true(cut.turns >= pz->optimal.turns && cut.turns <= tr->turns);
	assert_int_equal(dig_quality_fails(lv, &cut, p->difficulty), 0);

	/* The level is dressed for its recorded solution (generate.c,
	 * dress_for_shortcut): no tap of it can go, and, where no red herring
	 * adds a use or a cell the play may step on, with one use less on any
	 * arrow it taps, or one turn less, it no longer wins. */
	if (cut.turns != tr->turns)
		fail_msg("%s: %d of the recorded solution's %d taps can go", what,
			 tr->turns - cut.turns, tr->turns);
	for (int i = 0; i < dig_slots(lv) && !p->red_herrings; i++) {
		bool tapped = false;
		for (int t = 0; t < tr->turns; t++)
			tapped |= tr->tap[t] == i;
		dig_level less = *lv;
		if (!tapped || less.arrow[i].uses == 0)
			continue;
		less.arrow[i].uses--;
		if (wins(&less, tr->tap, tr->turns))
			fail_msg("%s: arrow %d has a use the recorded solution never needs", what,
				 i);
	}
	dig_level fewer = *lv;
	fewer.turns--;
	if (!p->red_herrings && wins(&fewer, tr->tap, tr->turns))
		fail_msg("%s: the recorded solution wins with a turn less", what);

	/* Arrow uses come from the solution: never more than single_use allows,
	 * and directions into the grid unless any_direction. */
	for (int i = 0; i < dig_slots(lv); i++) {
		if (lv->rules.single_use)
			assert_true(lv->arrow[i].uses <= 1);
		if (!lv->rules.any_direction)
			assert_int_equal(lv->arrow[i].dir, dig_slot_default_dir(lv, i));
	}
	/* Terrain only where the preset allows it. */
	for (int c = 0; c < lv->w * lv->h; c++)
		if (lv->terrain[c] != DIG_T_MUD)
			assert_true((p->terrains >> lv->terrain[c]) & 1u);
}

/* dig_generate for p and seed into *pz, failing the test on an error, then
 * check_puzzle. */
static void generate_checked(const dig_gen_params *p, uint64_t seed, dig_puzzle *pz)
{
	sf_err err = { 0 };
	if (dig_generate(p, seed, pz, &err) != 0)
		fail_msg("difficulty %d seed %llu: %s", (int)p->difficulty,
			 (unsigned long long)seed, err.msg);
	check_puzzle(p, seed, pz);
}

static void test_presets(void **state)
{
	(void)state;
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		int terrain_seen[DIG_T_COUNT] = { 0 }, most_machines = 0, turned = 0;
		for (uint64_t seed = 1; seed <= SEEDS; seed++) {
			static dig_puzzle pz;
			generate_checked(&p, seed, &pz);
			const dig_level *lv = &pz.level;
			for (int c = 0; c < lv->w * lv->h; c++)
				terrain_seen[lv->terrain[c]]++;
			if (lv->machines > most_machines)
				most_machines = lv->machines;
			for (int i = 0; i < dig_slots(lv); i++)
				turned += lv->arrow[i].dir != dig_slot_default_dir(lv, i);
		}
		if (d == DIG_EASIEST) {
			/* 3x3, one or two machines, no terrain, the strict rules. */
			assert_true(p.w == 3 && p.h == 3);
			assert_true(most_machines <= 2);
			assert_true(p.rules.single_use && p.rules.no_shuffle &&
				    p.rules.no_backtrack);
			assert_int_equal(p.terrains, 0);
		}
		if (d == DIG_EXPERT) {
			/* The largest grid, always six machines. */
			assert_true(p.w == DIG_MAX_W && p.h == DIG_MAX_H);
			assert_int_equal(most_machines, 6);
		}
		if (d >= DIG_HARDEST) {
			/* Every terrain shows up over the seeds, six machines occur,
			 * and arrows point every which way. */
			for (int t = DIG_T_STONE; t < DIG_T_COUNT; t++)
				if (terrain_seen[t] == 0)
					fail_msg("%s: no %s in %d puzzles",
						 dig_difficulty_name((dig_difficulty)d),
						 dig_terrain_of(t)->name, SEEDS);
			assert_int_equal(most_machines, 6);
			assert_true(p.rules.any_direction && p.red_herrings);
			assert_true(turned > 0);
		}
		assert_false(p.rules.gold_in_order);
	}
}

/* The grid grows with the difficulty, in width and (to expert's 10 x 6)
 * in height, never shrinking either way. */
static void test_preset_grids(void **state)
{
	(void)state;
	int last_w = 0, last_h = 0;
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		assert_true(p.w >= last_w && p.h >= last_h);
		assert_true(p.w * p.h > last_w * last_h);
		assert_true(p.h >= 3 && p.h <= DIG_MAX_H);
		assert_true(p.max_attempts >= 1 && p.solver_states >= 1);
		last_w = p.w;
		last_h = p.h;
	}
	assert_int_equal(last_w, DIG_MAX_W);
	assert_int_equal(last_h, DIG_MAX_H);
}

/* Same seed and params: the same bytes; another seed: another puzzle. */
static void test_deterministic(void **state)
{
	(void)state;
	static dig_puzzle a, b;
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		for (uint64_t seed = 7; seed < 10; seed++) {
			memset(&a, 0xAB, sizeof a);
			memset(&b, 0x11, sizeof b);
			assert_int_equal(dig_generate(&p, seed, &a, NULL), 0);
			assert_int_equal(dig_generate(&p, seed, &b, NULL), 0);
			assert_memory_equal(&a, &b, sizeof a);
			assert_int_equal(dig_generate(&p, seed + 100, &b, NULL), 0);
			assert_memory_not_equal(&a.level, &b.level, sizeof a.level);
		}
	}
}

/* gold_in_order: orders 1..n in the order the recorded solution collects
 * them, and the puzzle still replays and solves. */
static void test_gold_in_order(void **state)
{
	(void)state;
	for (int d = DIG_EASY; d <= DIG_HARD; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		p.rules.gold_in_order = true;
		for (uint64_t seed = 1; seed <= 10; seed++) {
			static dig_puzzle pz;
			generate_checked(&p, seed, &pz);
			/* Step through: each tap collects the next orders only. */
			const dig_level *lv = &pz.level;
			dig_state s;
			dig_cmd cmd;
			dig_state_init(lv, &s);
			int next = 1;
			for (int t = 0; t < pz.recorded.turns; t++) {
				uint64_t before = s.gold;
				assert_int_equal(dig_arrow_do(lv, &s, pz.recorded.tap[t], &cmd), 0);
				for (uint64_t g = before & ~s.gold; g; g &= g - 1)
					assert_true(lv->gold[__builtin_ctzll(g)] >= next);
				next += __builtin_popcountll(before & ~s.gold);
			}
			assert_true(dig_won(&s));
		}
	}
}

/* params.machines overrides the preset and grows a small grid to fit. */
static void test_machines_override(void **state)
{
	(void)state;
	dig_gen_params p;
	dig_gen_params_default(&p, DIG_MEDIUM);
	p.machines = 1;
	static dig_puzzle pz;
	sf_err err = { 0 };
	for (uint64_t seed = 1; seed <= 5; seed++) {
		if (dig_generate(&p, seed, &pz, &err) != 0)
			fail_msg("one machine: %s", err.msg);
		assert_int_equal(pz.level.machines, 1);
		check_puzzle(&p, seed, &pz);
	}
	dig_gen_params_default(&p, DIG_EASIEST);
	p.rules.single_use = false;
	p.rules.no_backtrack = false;
	p.machines = 4;
	if (dig_generate(&p, 3, &pz, &err) != 0)
		fail_msg("four machines on easiest: %s", err.msg);
	assert_int_equal(pz.level.machines, 4);
	assert_true(pz.level.w * pz.level.h >= 15 && pz.level.h == 3);
	check_puzzle(&p, 3, &pz);
}

/* The presets with red herrings, without them: check_puzzle then also
 * asks that no arrow the recorded solution taps has a use it never needs,
 * nor the budget a turn (the level is dressed for the recorded solution;
 * the presets without herrings are asked in test_presets). */
static void test_dressed_without_herrings(void **state)
{
	(void)state;
	for (int d = DIG_HARD; d < DIG_DIFFICULTY_COUNT; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		assert_true(p.red_herrings);
		p.red_herrings = false;
		for (uint64_t seed = 1; seed <= 12; seed++) {
			static dig_puzzle pz;
			generate_checked(&p, seed, &pz);
		}
	}
}

/* Bad params name the field; impossible ones give SF_ERANGE naming the
 * check that rejected most, with the attempts and rejections recorded. */
static void test_params_errors(void **state)
{
	(void)state;
	static dig_puzzle pz;
	dig_gen_params p;
	sf_err err = { 0 };
	static const struct {
		const char *field;
		int difficulty, w, h, machines, max_attempts;
		uint64_t states;
	} BAD[] = {
		{ "difficulty", DIG_DIFFICULTY_COUNT, 0, 0, 0, 10, 10 },
		{ "difficulty", -1, 0, 0, 0, 10, 10 },
		{ "w", 2, 11, 0, 0, 10, 10 },
		{ "h", 2, 0, 7, 0, 10, 10 },
		{ "machines", 2, 0, 0, 7, 10, 10 },
		{ "max_attempts", 2, 0, 0, 0, 0, 10 },
		{ "solver_states", 2, 0, 0, 0, 10, 0 },
	};
	for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
		dig_gen_params_default(&p, DIG_MEDIUM);
		p.difficulty = (dig_difficulty)BAD[i].difficulty;
		p.w = BAD[i].w;
		p.h = BAD[i].h;
		p.machines = BAD[i].machines;
		p.max_attempts = BAD[i].max_attempts;
		p.solver_states = BAD[i].states;
		assert_int_equal(dig_generate(&p, 1, &pz, &err), SF_EINVAL);
		if (strncmp(err.msg, BAD[i].field, strlen(BAD[i].field)) != 0)
			fail_msg("case %zu: \"%s\" does not name %s", i, err.msg, BAD[i].field);
	}
	dig_gen_params_default(&p, DIG_MEDIUM);
	p.solver_bound = (dig_bound)7;
	assert_int_equal(dig_generate(&p, 1, &pz, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "solver_bound"));
	dig_gen_params_default(&p, DIG_MEDIUM);
	p.terrains = 1u << DIG_T_COUNT;
	assert_int_equal(dig_generate(&p, 1, &pz, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "terrains"));

	/* A one-state solver budget proves nothing: every candidate that gets
	 * that far is rejected as "solver budget". */
	dig_gen_params_default(&p, DIG_MEDIUM);
	p.solver_states = 1;
	p.max_attempts = 20;
	assert_int_equal(dig_generate(&p, 1, &pz, &err), SF_ERANGE);
	assert_non_null(strstr(err.msg, "rejected most"));
	assert_non_null(strstr(err.msg, "20 attempts"));
	assert_int_equal(pz.attempts, 20);
	bool budget = false;
	assert_true(pz.nrejected >= 1 && pz.nrejected <= 8);
	for (int i = 0; i < pz.nrejected; i++)
		budget = budget || strcmp(pz.rejected[i], "solver budget") == 0;
	assert_true(budget);
	assert_int_equal(pz.level.w, 0); /* no level is handed out */
}

/* The stop callback ends a call between candidates with SF_EBUDGET and
 * hands out nothing; one that never says stop changes nothing. */
typedef struct stop_after {
	int calls, limit;
} stop_after;

static bool stop_when(void *arg)
{
	stop_after *s = arg;
	return ++s->calls > s->limit;
}

static void test_stop(void **state)
{
	(void)state;
	static dig_puzzle pz, plain;
	dig_gen_params p;
	dig_gen_params_default(&p, DIG_HARDEST);
	sf_err err = { 0 };
	assert_int_equal(dig_generate(&p, 11, &plain, &err), 0);
	stop_after never = { .limit = 1 << 30 };
	p.stop = stop_when;
	p.stop_arg = &never;
	assert_int_equal(dig_generate(&p, 11, &pz, &err), 0);
	assert_memory_equal(&pz, &plain, sizeof pz);
	assert_int_equal(never.calls, plain.attempts);

	p.solver_states = 1; /* every candidate that gets far is rejected: a long call */
	p.max_attempts = 100000;
	stop_after soon = { .limit = 3 };
	p.stop_arg = &soon;
	assert_int_equal(dig_generate(&p, 11, &pz, &err), SF_EBUDGET);
	assert_int_equal(soon.calls, 4);
	assert_non_null(strstr(err.msg, "stopped after 3 attempts"));
	assert_int_equal(pz.level.w, 0);
}

/* What test_on_solve's hook saw: every event, copied. */
typedef struct solve_log {
	int n;
	struct {
		dig_solve_event ev;
		dig_level level;
		dig_solve_result result;
		char why[48];
	} e[64];
} solve_log;

static void log_solve(void *arg, const dig_solve_event *ev)
{
	solve_log *log = arg;
	assert_true(log->n < 64);
	log->e[log->n].ev = *ev;
	log->e[log->n].level = *ev->level;
	if (ev->done) {
		log->e[log->n].result = *ev->result;
		snprintf(log->e[log->n].why, sizeof log->e[0].why, "%s", ev->why);
	}
	log->n++;
}

/*
 * The on_solve hook brackets every proof, in order: a start and an end per
 * solver run, the same candidate both times; the end carries the solver's
 * own answer (the same level solved again gives the same result) and the
 * verdict: one of the puzzle's rejection names, "solver budget" as often
 * as the puzzle counts budget cuts, and "" only for the accepted last one,
 * which is the puzzle's level and optimum. The puzzle is the same, byte
 * for byte, with the hook or without. Hardest seed 86 meets step 6: one of
 * its candidates passes the solver's checks and is rejected because
 * random play wins it too often.
 */
static void test_on_solve(void **state)
{
	(void)state;
	static dig_puzzle pz, plain;
	static solve_log log;
	const uint64_t seeds[] = { 1, 2, 86, 11 };
	int random = 0;
	for (int k = 0; k < 4; k++) {
		dig_gen_params p;
		dig_gen_params_default(&p, DIG_HARDEST);
		uint64_t seed = seeds[k];
		if (k == 3)
			p.solver_states = 300; /* some proofs run out */
		sf_err err = { 0 };
		assert_int_equal(dig_generate(&p, seed, &plain, &err), 0);
		log.n = 0;
		p.on_solve = log_solve;
		p.on_solve_arg = &log;
		assert_int_equal(dig_generate(&p, seed, &pz, &err), 0);
		assert_memory_equal(&pz, &plain, sizeof pz);
		assert_int_equal(log.n, 2 * pz.solver_runs);
		int budget = 0, last = 0;
		for (int i = 0; i < log.n; i += 2) {
			assert_false(log.e[i].ev.done);
			assert_true(log.e[i + 1].ev.done);
			assert_true(log.e[i].ev.attempt > last);
			last = log.e[i].ev.attempt;
			assert_int_equal(log.e[i + 1].ev.attempt, last);
			assert_memory_equal(&log.e[i].level, &log.e[i + 1].level,
					    sizeof log.e[i].level);
			dig_solve_result again;
			assert_int_equal(dig_solve_with(&log.e[i].level, NULL, p.solver_states,
							p.solver_bound, &again, &err),
					 0);
			assert_memory_equal(&again, &log.e[i + 1].result, sizeof again);
			const char *why = log.e[i + 1].why;
			budget += strcmp(why, "solver budget") == 0;
			random += strcmp(why, "random play wins") == 0;
			if (strcmp(why, "solver budget") == 0)
				assert_int_equal(again.status, DIG_UNKNOWN);
			if (i + 2 < log.n) {
				bool named = false;
				for (int j = 0; j < pz.nrejected; j++)
					named |= strcmp(pz.rejected[j], why) == 0;
				assert_true(named);
			} else {
				assert_string_equal(why, "");
				assert_int_equal(last, pz.attempts);
				assert_memory_equal(&log.e[i].level, &pz.level, sizeof pz.level);
				assert_memory_equal(&log.e[i + 1].result, &pz.optimal,
						    sizeof pz.optimal);
			}
		}
		assert_int_equal(budget, pz.solver_budget);
		if (k == 3)
			assert_true(budget > 0);
	}
	assert_true(random > 0);
}

/* ---- the quality checks on hand-made traces ---- */

/*
 * One machine on a 3x3 grid walks right, right, down, down from (0,0) to
 * (2,2); with gold on (2,0) and (2,2) it passes every check of "easiest"
 * (4 taps of a 6-tap target, 2 moves per gold, 2 of 9 cells gold).
 */
static void corner_walk(dig_level *lv, dig_trace *tr, uint8_t *taps)
{
	plain_level(lv, 3, 3, 0);
	taps[0] = taps[1] = (uint8_t)dig_slot_row_left(lv, 0);
	taps[2] = taps[3] = (uint8_t)dig_slot_col_top(lv, 2);
	lv->gold[2] = 1;
	lv->gold[8] = 2;
	fit_and_trace(lv, taps, 4, tr);
}

static void test_quality_names(void **state)
{
	(void)state;
	assert_true(dig_quality_count() >= 8);
	for (int i = 0; i < dig_quality_count(); i++) {
		assert_non_null(dig_quality_name(i));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(dig_quality_name(i), dig_quality_name(j));
	}
	assert_null(dig_quality_name(-1));
	assert_null(dig_quality_name(dig_quality_count()));
}

/*
 * The generator judges the play a player would find, not only its own walk
 * (issue 16). The constructed case is the level the generator used to emit
 * for `generate digger --seed 5 --params '{"difficulty":"easiest"}'`: a
 * 3x3 grid, one machine at the bottom middle, gold in the middle (order 1)
 * and at the left of the middle row (order 2). The recorded walk, 6 taps
 * (right, up, left to the middle gold, up, left, down to the other), passes
 * every quality check; yet 2 taps win (bottom arrow of column 1 up into the
 * middle, then the right arrow of row 1 left), under the easiest minimum
 * of 4 taps (60 % of 70 % of 9 cells, rounded). The judge must reject it.
 */
static void test_judge_optimal(void **state)
{
	(void)state;
	dig_level lv;
	plain_level(&lv, 3, 3, 7);
	lv.rules = (dig_rules){ .no_shuffle = true, .no_backtrack = true, .single_use = true };
	lv.gold[4] = 1;
	lv.gold[3] = 2;
	const uint8_t taps[6] = {
		(uint8_t)dig_slot_row_left(&lv, 2),  (uint8_t)dig_slot_col_bottom(&lv, 2),
		(uint8_t)dig_slot_row_right(&lv, 1), (uint8_t)dig_slot_col_bottom(&lv, 1),
		(uint8_t)dig_slot_row_right(&lv, 0), (uint8_t)dig_slot_col_top(&lv, 0),
	};
	dig_trace tr;
	fit_and_trace(&lv, taps, 6, &tr);
	assert_replays(&lv, taps, 6, "the recorded walk");
	assert_int_equal(dig_quality_fails(&lv, &tr, DIG_EASIEST), 0);
	const uint8_t shortcut[2] = { (uint8_t)dig_slot_col_bottom(&lv, 1),
				      (uint8_t)dig_slot_row_right(&lv, 1) };
	assert_replays(&lv, shortcut, 2, "the shortcut");

	sf_err err = { 0 };
	dig_solve_result res;
	assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_int_equal(res.turns, 2);
	char why[48];
	assert_int_equal(dig_judge_optimal(&lv, &lv, DIG_EASIEST, &tr, &res, why, sizeof why), 1);
	assert_string_equal(why, "optimal play: solution length");

	/* A generated puzzle passes; the same optimum on a "plain" level that
	 * lacks the arrow use its first tap takes (as if that use were a red
	 * herring) needs the herring; an unfinished search is the budget's. */
	dig_gen_params p;
	dig_gen_params_default(&p, DIG_HARD);
	static dig_puzzle pz;
	assert_int_equal(dig_generate(&p, 3, &pz, &err), 0);
	assert_int_equal(dig_judge_optimal(&pz.level, &pz.level, DIG_HARD, &pz.recorded,
					   &pz.optimal, why, sizeof why),
			 0);
	dig_level plain = pz.level;
	plain.arrow[pz.optimal.taps[0]].uses = 0;
	assert_int_equal(dig_judge_optimal(&pz.level, &plain, DIG_HARD, &pz.recorded, &pz.optimal,
					   why, sizeof why),
			 1);
	assert_string_equal(why, "red herring needed");
	dig_solve_result unknown = pz.optimal;
	unknown.status = DIG_UNKNOWN;
	assert_int_equal(dig_judge_optimal(&pz.level, &pz.level, DIG_HARD, &pz.recorded, &unknown,
					   why, sizeof why),
			 1);
	assert_string_equal(why, "solver budget");

	/* Expert judges what the player faces: at most 2 spare taps in the
	 * turn budget, and 4.5 valid taps per tap along the optimal play
	 * (counted by measure.c, a separate count of valid taps). */
	dig_measure_opts mo;
	dig_measure_opts_default(&mo);
	mo.random_plays = 10;
	mo.samples = 1;
	dig_measure m;
	assert_int_equal(dig_measure_level(&pz.level, &pz.optimal, &mo, &m, &err), 0);
	assert_true(m.branching < 3.5); /* hard seed 3: a narrow level */
	dig_trace tight = pz.recorded;
	tight.turns = pz.optimal.turns;
	assert_int_equal(dig_judge_optimal(&pz.level, &pz.level, DIG_EXPERT, &tight, &pz.optimal,
					   why, sizeof why),
			 1);
	assert_string_equal(why, "few choices");
	static dig_puzzle ex;
	dig_gen_params_default(&p, DIG_EXPERT);
	assert_int_equal(dig_generate(&p, 1, &ex, &err), 0);
	assert_int_equal(dig_measure_level(&ex.level, &ex.optimal, &mo, &m, &err), 0);
	assert_true(m.branching >= 4.5);
	assert_true(ex.recorded.turns - ex.optimal.turns <= 2);
	tight = ex.recorded;
	tight.turns = ex.optimal.turns + 2;
	assert_int_equal(dig_judge_optimal(&ex.level, &ex.level, DIG_EXPERT, &tight, &ex.optimal,
					   why, sizeof why),
			 0);
	tight.turns++;
	assert_int_equal(dig_judge_optimal(&ex.level, &ex.level, DIG_EXPERT, &tight, &ex.optimal,
					   why, sizeof why),
			 1);
	assert_string_equal(why, "spare taps");
	/* The other presets leave both alone (hardest may still fail the
	 * level on its own thresholds, not on these). */
	if (dig_judge_optimal(&ex.level, &ex.level, DIG_HARDEST, &tight, &ex.optimal, why,
			      sizeof why))
		assert_string_not_equal(why, "spare taps");
}

/* Whether taps[0, n) with tap `skip` left out collects all the gold of lv
 * within its budget. */
static bool wins_without(const dig_level *lv, const uint8_t *taps, int n, int skip)
{
	uint8_t rest[DIG_MAX_TURNS];
	int m = 0;
	for (int i = 0; i < n; i++)
		if (i != skip)
			rest[m++] = taps[i];
	return wins(lv, rest, m);
}

/*
 * Before the proof, the generator judges the recorded walk's shortcut: the
 * taps that can be left out, left out (a play a player finds without the
 * solver). The constructed case is an easy candidate the generator used to
 * prove (seed 39, first attempt): 4 x 3, machine 0 at the bottom right,
 * machine 1 at the left of the middle row, stone at the top of column 1
 * (nobody passes) and at its bottom (only machine 1 does), gold at (2,2),
 * (1,2), (3,0) and (2,0). The recorded walk, 7 taps, passes every check:
 * machine 1 moves right (tap 3), down onto the gold under the stone (tap
 * 4) and right again (tap 6, collecting nothing). That sixth tap can go,
 * and then machine 1 moves twice: under easy's three moves per machine.
 */
static void test_judge_shortcut(void **state)
{
	(void)state;
	dig_level lv;
	plain_level(&lv, 4, 3, 11);
	lv.machines = 2;
	lv.start[1] = 4;
	lv.rules = (dig_rules){ .no_shuffle = true, .single_use = true };
	lv.terrain[1] = lv.terrain[9] = DIG_T_STONE;
	lv.tmask[9] = 2; /* only machine 1 passes */
	lv.gold[10] = 1;
	lv.gold[9] = 2;
	lv.gold[3] = 3;
	lv.gold[2] = 4;
	const uint8_t taps[7] = {
		(uint8_t)dig_slot_row_right(&lv, 2), (uint8_t)dig_slot_col_bottom(&lv, 2),
		(uint8_t)dig_slot_row_left(&lv, 1),  (uint8_t)dig_slot_col_top(&lv, 1),
		(uint8_t)dig_slot_col_bottom(&lv, 3), (uint8_t)dig_slot_row_left(&lv, 2),
		(uint8_t)dig_slot_row_right(&lv, 0),
	};
	dig_trace tr;
	fit_and_trace(&lv, taps, 7, &tr);
	assert_replays(&lv, taps, 7, "the recorded walk");
	assert_int_equal(dig_quality_fails(&lv, &tr, DIG_EASY), 0);
	assert_int_equal(moves_of(&tr, 1), 3);
	for (int i = 0; i < 7; i++) /* only the sixth tap can go */
		assert_int_equal(wins_without(&lv, taps, 7, i), i == 5);

	dig_trace cut;
	char why[48];
	assert_int_equal(dig_judge_shortcut(&lv, DIG_EASY, &tr, &cut, why, sizeof why), 1);
	assert_string_equal(why, "shortcut: machines move");
	const uint8_t left[6] = { taps[0], taps[1], taps[2], taps[3], taps[4], taps[6] };
	assert_int_equal(cut.turns, 6);
	assert_memory_equal(cut.tap, left, 6);
	assert_int_equal(moves_of(&cut, 1), 2);
	for (int i = 0; i < 6; i++) /* nothing more can go */
		assert_false(wins_without(&lv, cut.tap, 6, i));
	sf_err err = { 0 };
	dig_solve_result res;
	assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_true(res.turns <= 6);

	/* A walk with no tap to leave out is its own shortcut. */
	uint8_t corner[8];
	corner_walk(&lv, &tr, corner);
	for (int i = 0; i < 4; i++)
		assert_false(wins_without(&lv, corner, 4, i));
	assert_int_equal(dig_judge_shortcut(&lv, DIG_EASIEST, &tr, &cut, why, sizeof why), 0);
	assert_memory_equal(&cut, &tr, sizeof cut);
}

/*
 * When no single tap can go, the shortcut leaves out two at a time: here
 * the machine steps right and back before going down to its gold. Without
 * the first tap the second moves nobody (the machine is at the left edge),
 * without the second the taps down move nobody (the machine is in column
 * 1), without a tap down the gold stays; without both of the first two
 * the walk wins in two taps.
 */
static void test_shortcut_pairs(void **state)
{
	(void)state;
	dig_level lv;
	plain_level(&lv, 4, 3, 0);
	lv.gold[8] = 1;
	const uint8_t taps[4] = {
		(uint8_t)dig_slot_row_left(&lv, 0),
		(uint8_t)dig_slot_row_right(&lv, 0),
		(uint8_t)dig_slot_col_top(&lv, 0),
		(uint8_t)dig_slot_col_top(&lv, 0),
	};
	dig_trace tr;
	fit_and_trace(&lv, taps, 4, &tr);
	assert_replays(&lv, taps, 4, "the recorded walk");
	assert_int_equal(tr.pos[1][0], 1);
	assert_int_equal(tr.pos[2][0], 0);
	for (int i = 0; i < 4; i++)
		assert_false(wins_without(&lv, taps, 4, i));
	dig_trace cut;
	char why[48] = "";
	dig_judge_shortcut(&lv, DIG_EASIEST, &tr, &cut, why, sizeof why);
	assert_int_equal(cut.turns, 2);
	assert_memory_equal(cut.tap, taps + 2, 2);
	assert_replays(&lv, cut.tap, 2, "the shortcut");
}

static void test_quality_checks(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[8];
	corner_walk(&lv, &tr, taps);
	assert_int_equal(dig_quality_fails(&lv, &tr, DIG_EASIEST), 0);
	assert_int_equal(tr.pos[4][0], 8);

	/* Gold only along the way: the last tap collects nothing. */
	corner_walk(&lv, &tr, taps);
	lv.gold[8] = 0;
	lv.gold[5] = 2;
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("last tap collects gold"));

	/* One gold in nine cells is below easiest's treasure ratio. */
	corner_walk(&lv, &tr, taps);
	lv.gold[2] = 0;
	lv.gold[8] = 1;
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("treasure ratio"));

	/* Four moves to the only gold: too long between treasures. */
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("taps between treasures"));

	/* A second machine in the bottom-left corner that nothing moves. */
	corner_walk(&lv, &tr, taps);
	lv.machines = 2;
	lv.start[1] = 6;
	fit_and_trace(&lv, taps, 4, &tr);
	uint32_t fails = dig_quality_fails(&lv, &tr, DIG_EASIEST);
	assert_true(fails & check_bit("machines move"));
	assert_true(fails & check_bit("start differs from end"));
	assert_true(fails & check_bit("every machine collects"));
	assert_false(fails & check_bit("last tap collects gold"));

	/* A budget one short: the recorded solution no longer replays. */
	corner_walk(&lv, &tr, taps);
	lv.turns = 3;
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) &
		    check_bit("replay collects all gold"));

	/* single_use with an arrow tapped twice. */
	corner_walk(&lv, &tr, taps);
	lv.rules.single_use = true;
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("single use"));

	/* single_use: four arrows once each pass, until a treasure (a decoy
	 * nobody visits) would give one of them a second tap. */
	plain_level(&lv, 3, 3, 0);
	taps[0] = (uint8_t)dig_slot_row_left(&lv, 0); /* (1,0) */
	taps[1] = (uint8_t)dig_slot_col_top(&lv, 1);  /* (1,1) */
	taps[2] = (uint8_t)dig_slot_row_left(&lv, 1); /* (2,1) */
	taps[3] = (uint8_t)dig_slot_col_top(&lv, 2);  /* (2,2) */
	lv.gold[4] = 1;
	lv.gold[8] = 2;
	lv.rules.single_use = true;
	fit_and_trace(&lv, taps, 4, &tr);
	assert_false(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("single use"));
	lv.terrain[7] = (uint8_t)dig_terrain_by_name("treasure");
	lv.tparam[7] = 1 << 2; /* top of column 1 */
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("single use"));

	/* Two taps are too short a solution for a 3x3 grid. */
	corner_walk(&lv, &tr, taps);
	lv.gold[8] = 0;
	lv.gold[5] = 0;
	lv.gold[1] = 1;
	fit_and_trace(&lv, taps, 2, &tr);
	assert_true(dig_quality_fails(&lv, &tr, DIG_EASIEST) & check_bit("solution length"));

	/* Right then left: the machine ends where it started. */
	plain_level(&lv, 3, 3, 0);
	taps[0] = (uint8_t)dig_slot_row_left(&lv, 0);
	taps[1] = (uint8_t)dig_slot_row_right(&lv, 0);
	lv.gold[1] = 1;
	fit_and_trace(&lv, taps, 2, &tr);
	assert_true(dig_quality_fails(&lv, &tr, DIG_MEDIUM) & check_bit("start differs from end"));

	/* Machine 1 ends on machine 0's start cell. */
	plain_level(&lv, 3, 3, 0);
	lv.machines = 2;
	lv.start[1] = 1;
	taps[0] = (uint8_t)dig_slot_col_top(&lv, 0);   /* machine 0 down to (0,1) */
	taps[1] = (uint8_t)dig_slot_row_right(&lv, 0); /* machine 1 left to (0,0) */
	lv.gold[3] = 1;
	fit_and_trace(&lv, taps, 2, &tr);
	assert_true(dig_quality_fails(&lv, &tr, DIG_MEDIUM) & check_bit("ends off starts"));
}

/* ---- the hindsight hooks, one at a time ---- */

/* A dig_gen over lv and tr with placement probability p. */
static void gen_over(dig_gen *g, dig_level *lv, const dig_trace *tr, rng *r, double p)
{
	memset(g, 0, sizeof *g);
	g->lv = lv;
	g->sol = tr;
	g->rng = r;
	g->p = p;
	g->terrains = 0x7E; /* every terrain but mud */
	for (int t = 0; t <= tr->turns; t++)
		for (int m = 0; m < lv->machines; m++)
			g->visited |= UINT64_C(1) << tr->pos[t][m];
}

/* Energy, back to front: never on the cell first entered when the taps so
 * far equal the budget (the devlog's important rule). One machine walks
 * right three times on a 4x2 grid: the last cell stays plain, the other two
 * give a turn each, the budget drops from 3 to 1 and the solution still
 * works, but only with the energy. */
static void test_hook_energy(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[3];
	plain_level(&lv, 4, 2, 0);
	taps[0] = taps[1] = taps[2] = (uint8_t)dig_slot_row_left(&lv, 0);
	lv.gold[3] = 1;
	fit_and_trace(&lv, taps, 3, &tr);
	rng r;
	rng_seed(&r, 1);
	dig_gen g;
	gen_over(&g, &lv, &tr, &r, 1.0);
	assert_int_equal(dig_terrain_of(DIG_T_ENERGY)->place(&g), 2);
	assert_int_equal(lv.terrain[1], DIG_T_ENERGY);
	assert_int_equal(lv.terrain[2], DIG_T_ENERGY);
	assert_int_equal(lv.terrain[3], DIG_T_MUD);
	assert_int_equal(lv.turns, 1);
	assert_int_equal(g.taken, 0x6);
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	assert_replays(&lv, taps, 3, "energy");
	assert_needed(&lv, 2, taps, 3);
}

/*
 * Ice and lava: machine 0 steps right onto (1,0) and waits while machine 1
 * walks down column 3 three times, then moves on. Ice on (1,0) and lava on
 * a cell machine 1 enters inside the wait keep the solution; without the
 * lava machine 0 would stay frozen.
 */
static void test_hook_ice_lava(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[5];
	plain_level(&lv, 4, 4, 0);
	lv.machines = 2;
	lv.start[1] = 3;                                       /* (3,0) */
	taps[0] = (uint8_t)dig_slot_row_left(&lv, 0);          /* both right: m0 (1,0), m1 stuck */
	taps[1] = taps[2] = (uint8_t)dig_slot_col_top(&lv, 3); /* m1 down to (3,2) */
	taps[3] = (uint8_t)dig_slot_col_top(&lv, 3);           /* m1 (3,3) */
	taps[4] = (uint8_t)dig_slot_col_top(&lv, 1);           /* m0 down to (1,1) */
	lv.gold[5] = 1;
	lv.gold[15] = 2;
	fit_and_trace(&lv, taps, 5, &tr);
	assert_int_equal(tr.moved[0], 1);
	assert_replays(&lv, taps, 5, "plain");
	bool placed = false;
	for (uint64_t seed = 1; seed <= 8 && !placed; seed++) {
		dig_level copy = lv;
		rng r;
		rng_seed(&r, seed);
		dig_gen g;
		gen_over(&g, &copy, &tr, &r, 1.0);
		if (dig_terrain_of(DIG_T_ICE)->place(&g) < 2 || copy.terrain[1] != DIG_T_ICE)
			continue;
		placed = true;
		int lava = -1;
		for (int c = 0; c < 16; c++)
			if (copy.terrain[c] == DIG_T_LAVA)
				lava = c;
		/* (3,1), (3,2) or (3,3): machine 1 enters them inside the wait */
		assert_true(lava == 7 || lava == 11 || lava == 15);
		assert_int_equal(dig_level_check(&copy, NULL), 0);
		assert_replays(&copy, taps, 5, "ice and lava");
		assert_needed(&copy, lava, taps, 5);
	}
	assert_true(placed);
}

/*
 * Arrow treasure: (1,0) is entered by the first tap; the top arrow of
 * column 1, tapped only afterwards, loses its use to a treasure there. The
 * solution still works, and without the treasure it does not.
 */
static void test_hook_treasure(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[2];
	plain_level(&lv, 3, 3, 0);
	taps[0] = (uint8_t)dig_slot_row_left(&lv, 0);
	taps[1] = (uint8_t)dig_slot_col_top(&lv, 1);
	lv.gold[4] = 1;
	fit_and_trace(&lv, taps, 2, &tr);
	rng r;
	rng_seed(&r, 3);
	dig_gen g;
	gen_over(&g, &lv, &tr, &r, 1.0);
	assert_int_equal(dig_terrain_of(DIG_T_TREASURE)->place(&g), 1);
	assert_int_equal(lv.terrain[1], DIG_T_TREASURE);
	assert_int_equal(lv.tparam[1], 1 << 2); /* top of its column */
	assert_int_equal(lv.arrow[taps[1]].uses, 0);
	assert_int_equal(lv.arrow[taps[0]].uses, 1); /* tapped before: untouched */
	assert_int_equal(lv.terrain[4], DIG_T_MUD);  /* entered by the last tap: nothing after */
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	assert_replays(&lv, taps, 2, "treasure");
	assert_needed(&lv, 1, taps, 2);
}

/*
 * Web: a machine walks right, left, right over (1,0), entering it twice
 * (no_shuffle off). The web goes there with gold and needs 2 visits, so
 * the gold is taken on the second.
 */
static void test_hook_web(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[4];
	plain_level(&lv, 3, 2, 0);
	taps[0] = (uint8_t)dig_slot_row_left(&lv, 0);  /* (1,0) */
	taps[1] = (uint8_t)dig_slot_row_right(&lv, 0); /* (0,0) */
	taps[2] = (uint8_t)dig_slot_row_left(&lv, 0);  /* (1,0) again */
	taps[3] = (uint8_t)dig_slot_row_left(&lv, 0);  /* (2,0) */
	lv.gold[2] = 1;
	fit_and_trace(&lv, taps, 4, &tr);
	rng r;
	rng_seed(&r, 5);
	dig_gen g;
	gen_over(&g, &lv, &tr, &r, 1.0);
	assert_int_equal(dig_terrain_of(DIG_T_WEB)->place(&g), 1);
	assert_int_equal(lv.terrain[1], DIG_T_WEB);
	assert_int_equal(lv.tparam[1], 2);
	assert_true(lv.tmask[1] == 0 || lv.tmask[1] == 1);
	assert_true(lv.gold[1] != 0);
	lv.gold[1] = 1;
	lv.gold[2] = 2;
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	assert_replays(&lv, taps, 4, "web");
	/* The gold stays through the first visit and goes on the second. */
	dig_state s;
	dig_cmd cmd;
	dig_state_init(&lv, &s);
	for (int t = 0; t < 3; t++) {
		assert_int_equal(dig_arrow_do(&lv, &s, taps[t], &cmd), 0);
		assert_int_equal((s.gold >> 1) & 1u, t < 2);
	}
}

/* Stone: every free cell nobody visits becomes stone for everybody; the
 * cells of the path stay enterable by the machine that uses them. */
static void test_hook_stone(void **state)
{
	(void)state;
	dig_level lv;
	dig_trace tr;
	uint8_t taps[4];
	corner_walk(&lv, &tr, taps);
	rng r;
	rng_seed(&r, 9);
	dig_gen g;
	gen_over(&g, &lv, &tr, &r, 1.0);
	assert_true(dig_terrain_of(DIG_T_STONE)->place(&g) >= 4);
	static const int unvisited[] = { 3, 4, 6, 7 };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(lv.terrain[unvisited[i]], DIG_T_STONE);
		assert_int_equal(lv.tmask[unvisited[i]], 0);
	}
	for (int c = 1; c < 9; c++)
		if (lv.terrain[c] == DIG_T_STONE && lv.tmask[c] != 0)
			assert_int_equal(lv.tmask[c], 1);
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	assert_replays(&lv, taps, 4, "stone");
}

/* Decoys land only on free cells nobody visits and never break the
 * solution. */
static void test_decoys(void **state)
{
	(void)state;
	for (int t = DIG_T_STONE; t < DIG_T_COUNT; t++) {
		int placed = 0;
		for (uint64_t seed = 1; seed <= 20; seed++) {
			dig_level lv;
			dig_trace tr;
			uint8_t taps[4];
			corner_walk(&lv, &tr, taps);
			rng r;
			rng_seed(&r, seed);
			dig_gen g;
			gen_over(&g, &lv, &tr, &r, 1.0);
			placed += dig_terrain_of(t)->decoy(&g);
			for (int c = 0; c < 9; c++)
				if (lv.terrain[c] != DIG_T_MUD)
					assert_false((g.visited >> c) & 1u);
			assert_int_equal(dig_level_check(&lv, NULL), 0);
			assert_replays(&lv, taps, 4, dig_terrain_of(t)->name);
		}
		if (placed == 0)
			fail_msg("%s: no decoy in 20 tries at p = 1", dig_terrain_of(t)->name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_preset_grids),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_gold_in_order),
		cmocka_unit_test(test_machines_override),
		cmocka_unit_test(test_dressed_without_herrings),
		cmocka_unit_test(test_params_errors),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_on_solve),
		cmocka_unit_test(test_quality_names),
		cmocka_unit_test(test_quality_checks),
		cmocka_unit_test(test_judge_optimal),
		cmocka_unit_test(test_judge_shortcut),
		cmocka_unit_test(test_shortcut_pairs),
		cmocka_unit_test(test_hook_energy),
		cmocka_unit_test(test_hook_ice_lava),
		cmocka_unit_test(test_hook_treasure),
		cmocka_unit_test(test_hook_web),
		cmocka_unit_test(test_hook_stone),
		cmocka_unit_test(test_decoys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
