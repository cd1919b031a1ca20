/*
 * test_digger_solve.c - the digger solver (core/digger/solve.c).
 *
 * The oracle is a brute force written here: plain depth-first search over
 * every tap sequence the engine allows (no hashing, no bounds, no
 * merging), keeping the shortest that wins. On hundreds of small random
 * levels (3x3 and 4x3, 1 to 3 machines, every terrain, random rules, turn
 * budgets up to 7) the solver must give the same verdict and the same
 * minimum, and its taps must replay to all the gold in exactly that many
 * taps. Around it: hand-made levels whose optimum is known (including ones
 * that need energy, treasure or lava to win), unreachable gold, the state
 * budget (DIG_UNKNOWN), bad levels, and determinism.
 *
 * A second oracle reaches further than the brute force: plain breadth-first
 * search over whole dig_states (every byte but turns_used, so nothing the
 * solver's compact keys, lower bound or dominance rule leave out can hide
 * a difference). It checks the solver's verdict and minimum on larger
 * random levels with longer budgets and on generated puzzles of every
 * difficulty up to hard, where the A* bound and the pruning do their work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/digger.h"
#include "digger_support.h"
#include "rng.h"

/* ---- the brute force ---- */

typedef struct brute {
	const dig_level *lv;
	dig_state s;
	int best;       /* fewest winning taps found, or INT_MAX-like */
	long nodes;     /* taps tried */
	long max_nodes; /* give up beyond this */
} brute;

static void brute_dfs(brute *b, int depth)
{
	if (depth + 1 >= b->best || b->nodes > b->max_nodes)
		return;
	for (int slot = 0; slot < dig_slots(b->lv); slot++) {
		dig_cmd cmd;
		if (dig_arrow_do(b->lv, &b->s, slot, &cmd) != 0)
			continue;
		b->nodes++;
		if (dig_won(&b->s))
			b->best = depth + 1;
		else
			brute_dfs(b, depth + 1);
		dig_arrow_undo(&b->s, &cmd);
	}
}

/* The fewest taps that win lv by exhaustive search, NO_WIN when none does,
 * -1 when the search passed max_nodes taps. */
static int brute_force(const dig_level *lv, long max_nodes)
{
	brute b = { .lv = lv, .best = NO_WIN, .max_nodes = max_nodes };
	dig_state_init(lv, &b.s);
	brute_dfs(&b, 0);
	return b.nodes > max_nodes ? -1 : b.best;
}

/* ---- the breadth-first oracle (bfs_from(), digger_support.h) ---- */

/* The fewest taps that win lv from its start: bfs_from() of the initial state. */
static int bfs_oracle(const dig_level *lv, uint32_t max_states)
{
	dig_state s;
	dig_state_init(lv, &s);
	return bfs_from(lv, &s, max_states);
}

/* ---- random levels ---- */

/*
 * A random level as in digger_support.h, but half the time its gold is put
 * on cells a random walk of valid taps entered, so that many are solvable.
 */
static void random_case(rng *r, dig_level *lv)
{
	int w = 3 + (int)rng_below(r, 2), h = 3;
	int machines = 1 + (int)rng_below(r, 3);
	int turns = 1 + (int)rng_below(r, 7);
	dig_random_level(r, w, h, machines, turns, true, lv);
	if (rng_below(r, 2))
		return;
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	uint64_t entered = 0;
	for (int t = 0; t < turns; t++) {
		int valid[DIG_MAX_ARROWS], n = 0;
		for (int i = 0; i < dig_slots(lv); i++)
			if (dig_arrow_valid(lv, &s, i))
				valid[n++] = i;
		if (n == 0)
			break;
		dig_arrow_do(lv, &s, valid[rng_below(r, (uint64_t)n)], &cmd);
		entered |= cmd.entered;
	}
	for (int m = 0; m < machines; m++)
		entered &= ~(UINT64_C(1) << lv->start[m]);
	if (!entered)
		return;
	memset(lv->gold, 0, sizeof lv->gold);
	int k = 0;
	for (uint64_t e = entered; e; e &= e - 1)
		if (k == 0 || rng_below(r, 2))
			lv->gold[__builtin_ctzll(e)] = (uint8_t)++k;
	if (lv->rules.gold_in_order) {
		/* Shuffle the orders 1..k. */
		for (int c = 0; c < w * h; c++) {
			if (!lv->gold[c])
				continue;
			int d = (int)rng_below(r, (uint64_t)(w * h));
			if (lv->gold[d]) {
				uint8_t t = lv->gold[c];
				lv->gold[c] = lv->gold[d];
				lv->gold[d] = t;
			}
		}
	}
}

static int gold_count(const dig_level *lv)
{
	int n = 0;
	for (int c = 0; c < lv->w * lv->h; c++)
		n += lv->gold[c] != 0;
	return n;
}

/* A solved result replays to every gold in exactly res->turns taps. */
static void assert_replays(const dig_level *lv, const dig_solve_result *res)
{
	sf_err err;
	int gold = -1, turns = -1;
	if (dig_replay(lv, res->taps, res->turns, &gold, &turns, &err) != 0)
		fail_msg("solver taps do not replay: %s", err.msg);
	assert_int_equal(gold, gold_count(lv));
	assert_int_equal(turns, res->turns);
	/* No shorter prefix already wins: every tap is needed. */
	if (res->turns > 0) {
		assert_int_equal(dig_replay(lv, res->taps, res->turns - 1, &gold, &turns, &err), 0);
		assert_true(gold < gold_count(lv));
	}
}

/*
 * The solver's bounds (DIG_BOUND_USES, the default; the first solver's
 * DIG_BOUND_NEAREST; DIG_BOUND_PAIRS, the assignment bound with its pair
 * tables from the first state, which small levels never reach otherwise;
 * DIG_BOUND_ASSIGN, the assignment bound alone, the default before the
 * uses bound; DIG_BOUND_ROUTES, the route bound on top of the uses bound)
 * on the same level: the same verdict and the same number of taps (all are
 * exact searches; only the work differs). Returns the default's result in
 * *res.
 */
static void solve_both(const dig_level *lv, uint64_t max_states, dig_solve_result *res, int i)
{
	sf_err err = { 0 };
	dig_solve_result old, pairs, assign, routes;
	assert_int_equal(dig_solve(lv, max_states, res, &err), 0);
	assert_int_equal(dig_solve_with(lv, NULL, max_states, DIG_BOUND_NEAREST, &old, &err), 0);
	assert_int_equal(dig_solve_with(lv, NULL, max_states, DIG_BOUND_PAIRS, &pairs, &err), 0);
	assert_int_equal(dig_solve_with(lv, NULL, max_states, DIG_BOUND_ASSIGN, &assign, &err), 0);
	assert_int_equal(dig_solve_with(lv, NULL, max_states, DIG_BOUND_ROUTES, &routes, &err), 0);
	if (old.status != res->status || (res->status == DIG_SOLVED && old.turns != res->turns))
		fail_msg("level %d: the uses bound says status %d in %d, the nearest bound %d "
			 "in %d",
			 i, res->status, res->turns, old.status, old.turns);
	if (pairs.status != res->status || (res->status == DIG_SOLVED && pairs.turns != res->turns))
		fail_msg("level %d: the uses bound says status %d in %d, with pair tables "
			 "%d in %d",
			 i, res->status, res->turns, pairs.status, pairs.turns);
	if (assign.status != res->status ||
	    (res->status == DIG_SOLVED && assign.turns != res->turns))
		fail_msg("level %d: the uses bound says status %d in %d, the assignment bound "
			 "alone %d in %d",
			 i, res->status, res->turns, assign.status, assign.turns);
	if (routes.status != res->status ||
	    (res->status == DIG_SOLVED && routes.turns != res->turns))
		fail_msg("level %d: the uses bound says status %d in %d, the route bound %d in %d",
			 i, res->status, res->turns, routes.status, routes.turns);
}

static void test_against_brute_force(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 77);
	int solved = 0, unsolvable = 0, skipped = 0, terrain_wins = 0;
	for (int i = 0; i < 3000; i++) {
		dig_level lv;
		sf_err err;
		random_case(&r, &lv);
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("random level %d refused: %s", i, err.msg);
		int want = brute_force(&lv, 3000000);
		if (want < 0) {
			skipped++;
			continue;
		}
		dig_solve_result res;
		solve_both(&lv, 10000000, &res, i);
		if (want == NO_WIN) {
			if (res.status != DIG_UNSOLVABLE)
				fail_msg("level %d: brute force finds no win, solver says %d in %d",
					 i, res.status, res.turns);
			unsolvable++;
			continue;
		}
		if (res.status != DIG_SOLVED || res.turns != want)
			fail_msg("level %d: brute force wins in %d, solver says status %d in %d", i,
				 want, res.status, res.turns);
		assert_true(res.states > 0);
		assert_replays(&lv, &res);
		solved++;
		for (int c = 0; c < lv.w * lv.h; c++)
			if (lv.terrain[c] != DIG_T_MUD && lv.terrain[c] != DIG_T_STONE) {
				terrain_wins++;
				break;
			}
	}
	print_message("brute force: %d solved, %d unsolvable, %d skipped, %d with terrain\n",
		      solved, unsolvable, skipped, terrain_wins);
	assert_true(solved >= 1000);
	assert_true(unsolvable >= 600);
	assert_true(terrain_wins >= 800);
	assert_true(skipped <= 100);
}

/*
 * The solver (both bounds) on lv against the breadth-first oracle within
 * oracle_states: the fewest taps both agree on (a solved play is also
 * replayed), NO_WIN when no play wins, -1 when the oracle gave up.
 */
static int against_bfs(const dig_level *lv, uint32_t oracle_states, int i)
{
	int want = bfs_oracle(lv, oracle_states);
	if (want < 0)
		return -1;
	dig_solve_result res;
	solve_both(lv, 10000000, &res, i);
	if (want == NO_WIN) {
		if (res.status != DIG_UNSOLVABLE)
			fail_msg("level %d: no win exists, solver says %d in %d", i, res.status,
				 res.turns);
		return NO_WIN;
	}
	if (res.status != DIG_SOLVED || res.turns != want)
		fail_msg("level %d: the fewest taps are %d, solver says status %d in %d", i, want,
			 res.status, res.turns);
	assert_replays(lv, &res);
	return want;
}

/* The solver against the breadth-first oracle on levels too large for the
 * brute force: 4x3 to 5x4, up to four machines, budgets up to 18 turns. */
static void test_against_bfs(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 4242);
	int solved = 0, unsolvable = 0, deep = 0;
	for (int i = 0; i < 300; i++) {
		dig_level lv;
		sf_err err;
		int w = 4 + (int)rng_below(&r, 2), h = 3 + (int)rng_below(&r, 2);
		dig_random_level(&r, w, h, 1 + (int)rng_below(&r, 4), 8 + (int)rng_below(&r, 11),
				 true, &lv);
		for (int k = 0; k < dig_slots(&lv); k++)
			lv.arrow[k].uses = (uint8_t)rng_below(&r, 4);
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("random level %d refused: %s", i, err.msg);
		int want = against_bfs(&lv, 200000, i);
		if (want < 0)
			continue;
		if (want == NO_WIN) {
			unsolvable++;
			continue;
		}
		solved++;
		deep += want >= 8;
	}
	print_message("bfs: %d solved (%d of 8+ taps), %d unsolvable\n", solved, deep, unsolvable);
	assert_true(solved >= 60);
	assert_true(deep >= 10);
	assert_true(unsolvable >= 60);
}

/*
 * Webs over every gold, needing 2 to 4 visits, worn by anyone, by one
 * machine or by some (the assignment bound charges a web one machine
 * wears for its loops back in and asks a web several wear for its entries
 * in time; under no_shuffle its distances never reverse): against the
 * breadth-first oracle, with and without no_shuffle.
 */
static void test_webs_against_bfs(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 1616);
	int solved = 0, unsolvable = 0, one_wearer = 0, no_shuffle = 0;
	for (int i = 0; i < 200; i++) {
		dig_level lv;
		sf_err err;
		int w = 3 + (int)rng_below(&r, 2), h = 3 + (int)rng_below(&r, 2);
		int machines = 1 + (int)rng_below(&r, 3);
		dig_random_level(&r, w, h, machines, 10 + (int)rng_below(&r, 11), false, &lv);
		lv.rules.no_shuffle = rng_below(&r, 2) == 0;
		lv.rules.any_direction = rng_below(&r, 3) == 0;
		bool single = false;
		for (int c = 0; c < w * h; c++) {
			if (!lv.gold[c]) {
				if (lv.terrain[c] == DIG_T_WEB)
					lv.terrain[c] = DIG_T_MUD;
				if (lv.terrain[c] == DIG_T_MUD)
					lv.tparam[c] = lv.tmask[c] = 0;
				continue;
			}
			lv.terrain[c] = DIG_T_WEB;
			lv.tparam[c] = (uint8_t)(2 + rng_below(&r, 3));
			int kind = (int)rng_below(&r, 3);
			lv.tmask[c] = kind == 0 ? 0
				      : kind == 1
					      ? (uint8_t)(1u << rng_below(&r, (uint64_t)machines))
					      : (uint8_t)rng_below(&r, 1u << machines);
			single |= lv.tmask[c] && !(lv.tmask[c] & (lv.tmask[c] - 1));
		}
		for (int k = 0; k < dig_slots(&lv); k++) {
			lv.arrow[k].uses = (uint8_t)(1 + rng_below(&r, 4));
			if (lv.rules.any_direction)
				lv.arrow[k].dir = (uint8_t)rng_below(&r, 4);
		}
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("web level %d refused: %s", i, err.msg);
		int want = against_bfs(&lv, 100000, i);
		if (want < 0)
			continue;
		if (want == NO_WIN) {
			unsolvable++;
			continue;
		}
		solved++;
		one_wearer += single;
		no_shuffle += lv.rules.no_shuffle;
	}
	print_message("webs: %d solved (%d with a web one machine wears, %d no_shuffle), %d "
		      "unsolvable\n",
		      solved, one_wearer, no_shuffle, unsolvable);
	assert_true(solved >= 40);
	assert_true(one_wearer >= 15);
	assert_true(no_shuffle >= 15);
	assert_true(unsolvable >= 20);
}

/* Generated puzzles: the optimum in the level is the true minimum. */
static void test_generated_against_bfs(void **state)
{
	(void)state;
	int compared = 0;
	for (int d = DIG_EASIEST; d <= DIG_HARD; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		for (uint64_t seed = 1; seed <= 6; seed++) {
			static dig_puzzle pz;
			sf_err err = { 0 };
			if (dig_generate(&p, seed, &pz, &err) != 0)
				fail_msg("difficulty %d seed %llu: %s", d, (unsigned long long)seed,
					 err.msg);
			int want = bfs_oracle(&pz.level, 400000);
			if (want < 0)
				continue;
			if (want != pz.optimal.turns)
				fail_msg("difficulty %d seed %llu: the fewest taps are %d, the "
					 "level "
					 "says %d",
					 d, (unsigned long long)seed, want, pz.optimal.turns);
			compared++;
		}
	}
	print_message("bfs: %d generated optima confirmed\n", compared);
	assert_true(compared >= 18);
	/* Past the oracle's reach, the two bounds agree with each other. */
	for (int d = DIG_HARD; d <= DIG_HARDEST; d++) {
		dig_gen_params p;
		dig_gen_params_default(&p, (dig_difficulty)d);
		for (uint64_t seed = 1; seed <= 3; seed++) {
			static dig_puzzle pz;
			sf_err err = { 0 };
			dig_solve_result res;
			assert_int_equal(dig_generate(&p, seed, &pz, &err), 0);
			solve_both(&pz.level, 2000000, &res, (int)seed);
			assert_int_equal(res.status, DIG_SOLVED);
			assert_int_equal(res.turns, pz.optimal.turns);
		}
	}
}

/*
 * The route bound's choice (route_fit) on levels where it has real work:
 * every candidate that hardest seeds 15 to 27 put to the solver, accepted
 * or not (the generator's on_solve hook hands each one over before its
 * proof), solved with the uses bound and with the route bound on top: the
 * same verdict and the same optimum, which replays. The brute-forced and
 * breadth-first levels above are too small for the choice to branch much;
 * here a failure remembered wrongly (a call taken as failing because one
 * that spent more failed) gives four of these candidates a longer
 * optimum.
 */
#define ROUTE_CANDIDATES 64
typedef struct candidates {
	dig_level level[ROUTE_CANDIDATES];
	int n;
} candidates;

static void keep_candidate(void *arg, const dig_solve_event *ev)
{
	candidates *c = arg;
	if (!ev->done && c->n < ROUTE_CANDIDATES)
		c->level[c->n++] = *ev->level;
}

static void test_routes_on_candidates(void **state)
{
	(void)state;
	static candidates c;
	c.n = 0;
	dig_gen_params p;
	dig_gen_params_default(&p, DIG_HARDEST);
	p.on_solve = keep_candidate;
	p.on_solve_arg = &c;
	for (uint64_t seed = 15; seed <= 27; seed++) {
		static dig_puzzle pz;
		sf_err err = { 0 };
		assert_int_equal(dig_generate(&p, seed, &pz, &err), 0);
	}
	assert_true(c.n >= 20 && c.n < ROUTE_CANDIDATES);
	for (int i = 0; i < c.n; i++) {
		sf_err err = { 0 };
		dig_solve_result uses, routes;
		assert_int_equal(dig_solve_with(&c.level[i], NULL, 500000, DIG_BOUND_USES, &uses, &err),
				 0);
		assert_int_equal(
			dig_solve_with(&c.level[i], NULL, 500000, DIG_BOUND_ROUTES, &routes, &err), 0);
		assert_int_equal(uses.status, DIG_SOLVED);
		if (routes.status != DIG_SOLVED || routes.turns != uses.turns)
			fail_msg("candidate %d: the uses bound finds %d taps, the route bound "
				 "status %d in %d",
				 i, uses.turns, routes.status, routes.turns);
		assert_replays(&c.level[i], &routes);
	}
	print_message("routes: %d hardest candidates, the same optima\n", c.n);
}

/*
 * The default bound builds its pair tables only once a search has expanded
 * 16384 states, and from then on orders the open states by the stronger
 * bound: on levels whose search gets that far, the same optimum as with
 * the pair tables from the first state on (DIG_BOUND_PAIRS). With the uses
 * bound hardly any generated level's search gets that far, so the levels
 * are random ones found by a seeded search that do (plain rules, every
 * arrow with the uses given, 40 turns; the nearest bound cannot decide them
 * within 1 000 000 states).
 */
static void test_pair_tables_mid_search(void **state)
{
	(void)state;
	static const struct {
		const char *pic;
		int uses;
	} longs[] = {
		{ ". . . . . . $/. $ @0 @1 $ @2 ./. . . . . $ $/$ . $ . $ . $/. . . . $ . .", 3 },
		{ ". . . $ . @0 $/@1 $ . . . $ ./@2 . . . . . $/$ . @3 . . $ $/. . . $ . . .", 2 },
		{ ". @0 $ . $ ./. $ . . $ ./. @1 @2 . . ./$ . . . . $/$ . @3 . . $", 3 },
	};
	for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
		dig_level lv;
		sf_err err = { 0 };
		dig_solve_result res, pairs;
		assert_int_equal(dig_picture(longs[i].pic, longs[i].uses, 40, &lv), 0);
		assert_int_equal(dig_solve(&lv, 3000000, &res, &err), 0);
		if (res.states < 16384)
			fail_msg("level %zu: %llu states, the pair tables never built", i,
				 (unsigned long long)res.states);
		assert_int_equal(dig_solve_with(&lv, NULL, 3000000, DIG_BOUND_PAIRS, &pairs, &err),
				 0);
		assert_int_equal(res.status, DIG_SOLVED);
		assert_int_equal(pairs.status, DIG_SOLVED);
		if (pairs.turns != res.turns)
			fail_msg("level %zu: the default says %d taps, the pair tables from the "
				 "start %d",
				 i, res.turns, pairs.turns);
		assert_replays(&lv, &res);
	}
}

/*
 * Where the uses bound pays (on this level it raises the f of 44 % of the
 * states it is asked and finds 31 % dead), the default leaves the pair
 * tables out of a long search (solve.c, uses_paid): building them took
 * 270 M of this search's 1 013 M instructions and saved 2 % of its states.
 * The level is the sixth candidate of hardest seed 138 (2026-12-07), whose
 * proof passes 16 384 states: the default still finds the optimum that the
 * pair tables from the first state on find (DIG_BOUND_PAIRS), and its play
 * replays.
 */
static void test_pair_tables_left_out(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err = { 0 };
	dig_solve_result res, pairs;
	assert_int_equal(dig_picture(". . # . . .@2 l$7 i/. .$13 #:16$14 # . . w2$8 t8$3/"
				     ". . e1$11 # #:1$2 .@3 .@1 w2$12/"
				     ".@4 l e1$10 w2 .$1 t1 w2$5 w2$9/. i t8 # .@0 . i$4 .$6",
				     0, 20, &lv),
			 0);
	/* (arrows without uses too: a treasure may give them some) */
	assert_int_equal(dig_arrows(&lv, "L0=1< L1=0v L2=2^ L3=1> L4=0v R0=0< R1=1> R2=2> R3=1v "
					 "R4=0v T0=0< T1=1v T2=2^ T3=0> T4=2^ T5=1> T6=3v T7=0> "
					 "B0=0< B1=2> B2=0< B3=0< B4=0v B5=1v B6=0^ B7=0^"),
			 0);
	lv.rules.no_shuffle = true;
	lv.rules.any_direction = true;
	assert_int_equal(dig_level_check(&lv, &err), 0);
	assert_int_equal(dig_solve(&lv, 500000, &res, &err), 0);
	assert_int_equal(dig_solve_with(&lv, NULL, 500000, DIG_BOUND_PAIRS, &pairs, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_int_equal(pairs.status, DIG_SOLVED);
	if (res.states <= 16384)
		fail_msg("%llu states: the search never got as long as the pair tables wait for",
			 (unsigned long long)res.states);
	assert_int_equal(res.turns, pairs.turns);
	assert_replays(&lv, &res);
}

/* ---- hand-made levels ---- */

typedef struct known_case {
	const char *name;
	const char *pic;
	dig_rules rules;
	int uses;
	int turns;
	const char *arrows;
	int status;
	int optimum;
	const char *taps; /* the only optimal taps, or NULL */
} known_case;

#define PLAIN                                     \
	{                                         \
		false, false, false, false, false \
	}
#define IN_ORDER                                 \
	{                                        \
		false, false, true, false, false \
	}

static const known_case KNOWN[] = {
	{ "two steps right", "@0 . $", PLAIN, 2, 5, NULL, DIG_SOLVED, 2, "L0 L0" },
	{ "one arrow use too few", "@0 . $", PLAIN, 1, 5, NULL, DIG_UNSOLVABLE, 0, NULL },
	{ "one turn too few", "@0 . $", PLAIN, 2, 1, NULL, DIG_UNSOLVABLE, 0, NULL },
	{ "energy pays for the second step", "@0 e1 $", PLAIN, 2, 1, NULL, DIG_SOLVED, 2, "L0 L0" },
	{ "treasure pays for the second step", "@0 t1 $", PLAIN, 1, 5, NULL, DIG_SOLVED, 2,
	  "L0 L0" },
	{ "two machines share the taps", "@0 $ ./@1 $ .", PLAIN, 1, 5, NULL, DIG_SOLVED, 2, NULL },
	{ "one tap moves both onto gold", "@0 $ @1 $", PLAIN, 1, 5, NULL, DIG_SOLVED, 1, "L0" },
	{ "gold in order takes the long way", "@0 $2 $1", IN_ORDER, 3, 5, NULL, DIG_SOLVED, 3,
	  "L0 L0 R0" },
	{ "web needs a second visit", "@0 w2$ .", PLAIN, 2, 5, NULL, DIG_SOLVED, 3, NULL },
	/* Row 0's right-pointing arrow steps in once and out past it; no
	 * arrow leads back in. */
	{ "web no machine steps into twice", "@0 w2$ . ./. . . ./@1 . . .", PLAIN, 2, 9,
	  "L0=2 R0=0 T0=0 B0=0 T1=0 B1=0", DIG_UNSOLVABLE, 0, NULL },
	{ "web stepped into again from the right", "@0 w2$ . ./. . . ./@1 . . .", PLAIN, 2, 9,
	  "L0=2 R0=1 T0=0 B0=0 T1=0 B1=0", DIG_SOLVED, 3, NULL },
	{ "frozen until lava thaws", "@0 i $/@1 l .", PLAIN, 1, 5, "L0=2", DIG_SOLVED, 3,
	  "L0 L1 L0" },
	{ "frozen for good", "@0 i $/@1 . .", PLAIN, 1, 5, "L0=2", DIG_UNSOLVABLE, 0, NULL },
	/* Time decides (which the bounds and the lone-machine test relax: they
	 * count every gift as given and ignore freezing). The treasure two
	 * cells right would give row 0's left-pointing arrow the use it needs,
	 * but one use of the right-pointing arrow takes machine 0 only half
	 * way; machine 1 below it can fetch it (up into it, then row 0 moves
	 * both left). Ice and no lava; then lava that machine 1 steps into. */
	{ "a gift nobody can fetch", "$ @0 . t2", PLAIN, 0, 9, "L0=1", DIG_UNSOLVABLE, 0, NULL },
	{ "a gift another machine fetches", "$ @0 . t2/. . . @1", PLAIN, 0, 9, "L0=1 B3=1",
	  DIG_SOLVED, 2, NULL },
	{ "ice with no lava", "@0 i . $", PLAIN, 0, 9, "L0=3", DIG_UNSOLVABLE, 0, NULL },
	{ "ice, and lava another machine enters", "@0 i . $/. l . ./. @1 . .", PLAIN, 0, 9,
	  "L0=3 B1=1", DIG_SOLVED, 4, NULL },
	{ "gold walled in by stone", "@0 . ./# # #/. . $", PLAIN, 3, 9, NULL, DIG_UNSOLVABLE, 0,
	  NULL },
	{ "gold no arrow can reach", "@0 . ./. . $", PLAIN, 1, 9, "L1=0 T2=0", DIG_UNSOLVABLE, 0,
	  NULL },
	{ "stone open to the right machine", "@0 #:2 $/@1 . .", PLAIN, 1, 5, NULL, DIG_SOLVED, 3,
	  "L1 B1 L0" },
	/* More than 127 uses on one arrow, few enough beyond the turns that
	 * the uses bound runs: its walks count uses in bytes below 128. */
	{ "an arrow with 130 uses", "@0 . . . . $", PLAIN, 0, 70, "L0=130", DIG_SOLVED, 5,
	  "L0 L0 L0 L0 L0" },
};

static void test_known_levels(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++) {
		const known_case *kc = &KNOWN[i];
		dig_level lv;
		sf_err err;
		if (dig_picture(kc->pic, kc->uses, kc->turns, &lv) != 0 ||
		    dig_arrows(&lv, kc->arrows) != 0)
			fail_msg("%s: bad picture", kc->name);
		lv.rules = kc->rules;
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("%s: level refused: %s", kc->name, err.msg);
		dig_solve_result res;
		assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
		if (res.status != kc->status)
			fail_msg("%s: status %d, expected %d", kc->name, res.status, kc->status);
		if (kc->status != DIG_SOLVED) {
			assert_int_equal(brute_force(&lv, 1000000), NO_WIN);
			continue;
		}
		if (res.turns != kc->optimum)
			fail_msg("%s: %d taps, expected %d", kc->name, res.turns, kc->optimum);
		assert_replays(&lv, &res);
		assert_int_equal(brute_force(&lv, 1000000), kc->optimum);
		const char *p = kc->taps;
		for (int t = 0; p && t < res.turns; t++)
			if (res.taps[t] != dig_slot_named(&lv, &p))
				fail_msg("%s: tap %d differs from the only optimum", kc->name, t);
	}
}

/*
 * The lone-machine test counts a web's visits: a web whose gold needs two
 * more counted visits, which machine 0 alone can step into once (it can
 * only pass it) and machine 1 never, is out of reach before any state is
 * expanded. (Counting one entry per web, as before 2026-12-05, the search
 * expanded 10 states; brute force agrees there is no win, test_known_levels.)
 */
static void test_web_visits_counted(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	assert_int_equal(dig_picture("@0 w2$ . ./. . . ./@1 . . .", 2, 9, &lv), 0);
	assert_int_equal(dig_arrows(&lv, "L0=2 R0=0 T0=0 B0=0 T1=0 B1=0"), 0);
	dig_solve_result res;
	assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNSOLVABLE);
	assert_int_equal(res.states, 0);
	/* With a way back in (one use on row 0's left-pointing arrow) the
	 * same test must let it through: three taps win (in, out and back,
	 * either way). */
	assert_int_equal(dig_arrows(&lv, "R0=1"), 0);
	assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_int_equal(res.turns, 3);
}

/* The level `pic` (no uses but `arrows`, 9 turns, plain rules) is dead
 * before any state is expanded when every state is asked the tests the
 * default search asks only in long ones (the web supply test and the sole
 * collector's walk: with the assignment bound), the default search finds
 * no win either, and brute force agrees; then, with the arrows `more`
 * too, every bound wins in as many taps as brute force finds, which are
 * returned. */
static int dead_then_wins(const char *pic, const char *arrows, const char *more, int i)
{
	dig_level lv;
	sf_err err;
	assert_int_equal(dig_picture(pic, 0, 9, &lv), 0);
	assert_int_equal(dig_arrows(&lv, arrows), 0);
	assert_int_equal(dig_level_check(&lv, &err), 0);
	dig_solve_result res;
	assert_int_equal(dig_solve_with(&lv, NULL, 100000, DIG_BOUND_ASSIGN, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNSOLVABLE);
	assert_int_equal(res.states, 0);
	assert_int_equal(dig_solve(&lv, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNSOLVABLE);
	assert_int_equal(brute_force(&lv, 1000000), NO_WIN);
	assert_int_equal(dig_arrows(&lv, more), 0);
	solve_both(&lv, 100000, &res, i);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_replays(&lv, &res);
	assert_int_equal(brute_force(&lv, 1000000), res.turns);
	return res.turns;
}

/*
 * The web supply test (webs_short): a web over the top middle cell needs
 * two counted visits, and the only way in is up column 1 from the cell
 * below it, which only row 1's right-pointing arrow feeds, once. Each
 * machine alone can get in (machine 1 up column 0 first), so the
 * lone-machine test and the uses bound let the start through; but only one
 * machine can be brought to the doorstep, so the start is dead before any
 * state is expanded (asked of every state with the assignment bound; the
 * default asks it only in long searches). Brute force agrees (no win).
 * With a second use on row 1's arrow and row 0's left-pointing one to step
 * out of the web, both machines get in: solved, in as many taps as brute
 * force finds.
 */
static void test_web_supply(void **state)
{
	(void)state;
	dead_then_wins(". w2$ ./@0 . ./@1 . .", "L1=1 B0=1 B1=2", "L1=2 R0=1", 0);
}

/*
 * The web supply test when a slot alone brings machines to a web's
 * doorstep: the web over the top middle cell needs two counted visits;
 * machine 0 steps in along row 0 (one use), machine 1 only up column 1,
 * whose one use takes it to the doorstep, not in. Each machine alone can
 * get in (machine 1 round by column 0 and row 0), and counting column 1's
 * use for the step onto the doorstep and again for the step in, the
 * supply test let the start through (one state expanded); the first step
 * in along column 1 needs an earlier tap of column 1 itself, so it now
 * calls the start dead. Brute force agrees (no win). With two uses up
 * column 1 and two along row 0 it wins in three taps (machine 1 in, then
 * row 0 pushes it out as machine 0 steps in), as brute force finds.
 */
static void test_web_supply_fed(void **state)
{
	(void)state;
	assert_int_equal(dead_then_wins("@0 w2$ ./. . ./. @1 .", "L0=1 R2=1 B0=2 B1=1",
					     "B1=2 L0=2", 1),
			 3);
}

/*
 * Gifts within reach (relax_of): the gold at the top of column 1 is three
 * steps up that column from its bottom row; machine 0 can get into the
 * column (up column 0, right along row 2) but the column's arrow has one
 * use, and the treasure under it that would give a second is out of every
 * machine's reach (no arrow steps into the bottom row's middle). Counting
 * the gift as given, every bound let the start through (four states
 * expanded; the nearest bound still does); counted only within reach, the
 * start is dead before any state is expanded, as brute force agrees. With
 * a way into the treasure (row 3's arrow) and a second use up column 1,
 * every bound finds the same optimum as brute force.
 */
static void test_gift_out_of_reach(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	assert_int_equal(dig_picture(". $ ./. . ./. . ./@0 t8 .", 0, 9, &lv), 0);
	assert_int_equal(dig_arrows(&lv, "B0=1 L2=1 B1=1"), 0);
	assert_int_equal(dig_level_check(&lv, &err), 0);
	static const dig_bound every[] = { DIG_BOUND_USES, DIG_BOUND_ASSIGN, DIG_BOUND_PAIRS,
					   DIG_BOUND_ROUTES };
	dig_solve_result res;
	for (size_t i = 0; i < sizeof every / sizeof every[0]; i++) {
		assert_int_equal(dig_solve_with(&lv, NULL, 100000, every[i], &res, &err), 0);
		assert_int_equal(res.status, DIG_UNSOLVABLE);
		assert_int_equal(res.states, 0);
	}
	/* The nearest bound, the first solver's, still counts every gift. */
	assert_int_equal(dig_solve_with(&lv, NULL, 100000, DIG_BOUND_NEAREST, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNSOLVABLE);
	assert_true(res.states > 0);
	assert_int_equal(brute_force(&lv, 1000000), NO_WIN);
	assert_int_equal(dig_arrows(&lv, "L3=1 B1=2"), 0);
	solve_both(&lv, 100000, &res, 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_replays(&lv, &res);
	assert_int_equal(brute_force(&lv, 1000000), res.turns);
}

/*
 * The sole collector's walk (sole_dead): one machine between two gold on
 * row 0, one use on each of the row's arrows and five up column 0, where
 * they move nobody. Each gold alone is one tap away, so the lone-machine
 * test and the uses bound let the start through, and the assignment bound
 * too (three relaxed steps reach both, within the seven uses); but the
 * machine alone can collect them, and one walk into both spends one of
 * the row's arrows twice. Asked of every state (the assignment bound), the
 * start is dead before any state is expanded (the default asks it only in
 * long searches); brute force agrees. With a second use on the
 * right-pointing arrow every bound wins in brute force's three taps.
 */
static void test_sole_collector(void **state)
{
	(void)state;
	assert_int_equal(dead_then_wins("$ @0 $/. . .", "L0=1 R0=1 B0=5", "L0=2", 0), 3);
}

/* The 4x2 level `pic` (no uses but `arrows`, 6 turns, any_direction),
 * solved by every bound in 3 taps that replay. */
static void solve_twins(const char *pic, const char *arrows, int i, dig_level *lv,
			dig_solve_result *res)
{
	sf_err err;
	assert_int_equal(dig_picture(pic, 0, 6, lv), 0);
	lv->rules.any_direction = true;
	assert_int_equal(dig_arrows(lv, arrows), 0);
	assert_int_equal(dig_level_check(lv, &err), 0);
	solve_both(lv, 100000, res, i);
	assert_int_equal(res->status, DIG_SOLVED);
	assert_int_equal(res->turns, 3);
	assert_replays(lv, res);
}

/*
 * Twin arrows (any_direction: both arrows of row 0 point right, one and two
 * uses): the search merges them (solve.c, twins_merged) but the play it
 * returns must be the level's own, so the three steps right to the gold
 * are one tap of the left arrow and two of the right one (three taps of
 * either alone do not replay). The same from a state where one use of
 * each is left, and on a level where a treasure on the way gives the second
 * twin one more use; every bound agrees (the nearest one searches the level
 * as it is).
 */
static void test_twin_arrows(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	dig_solve_result res;
	solve_twins("@0 . . $/. . . .", "L0=1> R0=2>", 0, &lv, &res);
	int left = dig_slot_row_left(&lv, 0), right = dig_slot_row_right(&lv, 0);
	int lefts = 0, rights = 0;
	for (int t = 0; t < res.turns; t++) {
		lefts += res.taps[t] == left;
		rights += res.taps[t] == right;
	}
	assert_int_equal(lefts, 1);
	assert_int_equal(rights, 2);

	/* From the state after one tap of the right arrow: two taps, one each. */
	dig_state s;
	dig_cmd cmd;
	dig_state_init(&lv, &s);
	assert_int_equal(dig_arrow_do(&lv, &s, right, &cmd), 0);
	assert_int_equal(dig_solve_from(&lv, &s, 100000, &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_int_equal(res.turns, 2);
	assert_true(res.taps[0] != res.taps[1]);
	for (int t = 0; t < res.turns; t++)
		assert_int_equal(dig_arrow_do(&lv, &s, res.taps[t], &cmd), 0);
	assert_true(dig_won(&s));

	/* One use each, and a treasure at (1, 0) that gives the right arrow
	 * one more (bit 1: the right arrow of the cell's row) after the
	 * search has merged the twins. */
	solve_twins("@0 t2 . $/. . . .", "L0=1> R0=1>", 1, &lv, &res);
}

/* ---- budget, errors, determinism ---- */

/* A level with many reachable states: 3 machines on 5x4, plenty of uses. */
static void big_level(dig_level *lv)
{
	assert_int_equal(dig_picture(". . . . $/@0 . . @1 ./. . @2 . ./$ . . . $2", 3, 30, lv), 0);
}

static void test_state_budget(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	dig_solve_result res;
	big_level(&lv);
	assert_int_equal(dig_level_check(&lv, &err), 0);
	assert_int_equal(dig_solve(&lv, 10000000, &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_replays(&lv, &res);
	uint64_t full = res.states;
	assert_true(full > 10);
	for (uint64_t budget = 0; budget < 4; budget++) {
		assert_int_equal(dig_solve(&lv, budget, &res, &err), 0);
		assert_int_equal(res.status, DIG_UNKNOWN);
		assert_int_equal(res.turns, 0);
	}
	/* Unsolvable with a budget too small to prove it: unknown. Each
	 * gold has a walk of some machine within the arrows' single uses
	 * (so neither the lone-machine test nor the uses bound calls it dead
	 * at the start), yet no play collects all three. */
	assert_int_equal(dig_picture("$ . . $ . . @0/. . @1 . . . $", 1, 12, &lv), 0);
	assert_int_equal(dig_solve(&lv, 10000000, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNSOLVABLE);
	assert_true(res.states > 3);
	assert_int_equal(dig_solve(&lv, 2, &res, &err), 0);
	assert_int_equal(res.status, DIG_UNKNOWN);
}

static void test_bad_level(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	dig_solve_result res;
	assert_int_equal(dig_picture("@0 . .", 1, 5, &lv), 0); /* no gold */
	assert_int_equal(dig_solve(&lv, 1000, &res, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "gold"));
	assert_int_not_equal(res.status, DIG_SOLVED);
}

static void test_deterministic(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	dig_solve_result a, b;
	big_level(&lv);
	assert_int_equal(dig_solve(&lv, 10000000, &a, &err), 0);
	assert_int_equal(dig_solve(&lv, 10000000, &b, &err), 0);
	assert_memory_equal(&a, &b, sizeof a);
}

/* Every rule at once on a larger level: the solver still agrees with
 * replay, and larger budgets never change a proved answer. */
static void test_rules_combined(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 5);
	int checked = 0;
	for (int i = 0; i < 200; i++) {
		dig_level lv;
		sf_err err;
		dig_random_level(&r, 5, 4, 1 + (int)rng_below(&r, 4), 12, true, &lv);
		for (int s = 0; s < dig_slots(&lv); s++)
			lv.arrow[s].uses = (uint8_t)rng_below(&r, 3);
		dig_solve_result res, more;
		assert_int_equal(dig_solve(&lv, 200000, &res, &err), 0);
		if (res.status == DIG_UNKNOWN)
			continue;
		assert_int_equal(dig_solve(&lv, 2000000, &more, &err), 0);
		assert_int_equal(more.status, res.status);
		assert_int_equal(more.turns, res.turns);
		if (res.status == DIG_SOLVED)
			assert_replays(&lv, &res);
		checked++;
	}
	assert_true(checked > 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_brute_force),
		cmocka_unit_test(test_against_bfs),
		cmocka_unit_test(test_webs_against_bfs),
		cmocka_unit_test(test_generated_against_bfs),
		cmocka_unit_test(test_routes_on_candidates),
		cmocka_unit_test(test_pair_tables_mid_search),
		cmocka_unit_test(test_pair_tables_left_out),
		cmocka_unit_test(test_known_levels),
		cmocka_unit_test(test_web_visits_counted),
		cmocka_unit_test(test_web_supply),
		cmocka_unit_test(test_web_supply_fed),
		cmocka_unit_test(test_gift_out_of_reach),
		cmocka_unit_test(test_sole_collector),
		cmocka_unit_test(test_twin_arrows),
		cmocka_unit_test(test_state_budget),
		cmocka_unit_test(test_bad_level),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_rules_combined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
