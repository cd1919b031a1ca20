/*
 * test_digger_hint.c - solving from a play state (dig_solve_from) and the
 * hint operation (core/digger/hint.c).
 *
 * dig_solve_from() of the initial state must give dig_solve()'s result
 * byte for byte. Then, on generated levels of every preset (a few seeds
 * each), seeded random plays of valid taps are sampled at several
 * positions: where the hint says winnable, following the hint one tap at a
 * time (asking again after every tap) wins in exactly the announced number
 * of taps, the number falls by one per tap, it equals dig_solve_from's
 * optimum, and on the easier presets a breadth-first search over whole
 * dig_states written here (no keys, bounds or pruning) finds the same
 * minimum. Where the hint says dead, the undo count k is minimal: the
 * oracle finds the position dead, the prefix k taps shorter winnable and
 * every prefix in between dead. Finally the JSON operation refuses bad
 * moves with the check's messages, answers the states it can name, and
 * answers a won position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/codec.h"
#include "digger/digger.h"
#include "digger_support.h"
#include "rng.h"


/* ---- helpers ---- */

static void generate(dig_difficulty d, uint64_t seed, dig_puzzle *pz)
{
	dig_gen_params p;
	dig_gen_params_default(&p, d);
	sf_err err = { 0 };
	if (dig_generate(&p, seed, pz, &err) != 0)
		fail_msg("difficulty %d seed %llu: %s", d, (unsigned long long)seed, err.msg);
}

static void state_after(const dig_level *lv, const uint8_t *taps, int n, dig_state *s)
{
	sf_err err = { 0 };
	if (dig_play_replay(lv, taps, n, s, &err) != 0)
		fail_msg("replay: %s", err.msg);
}

/* A random play of valid taps, until won or stuck: its length. */
static int random_play(const dig_level *lv, rng *r, uint8_t *taps)
{
	dig_state s;
	dig_cmd cmd;
	dig_state_init(lv, &s);
	int n = 0;
	while (!dig_won(&s) && n < DIG_MAX_TURNS) {
		int valid[DIG_MAX_ARROWS], nvalid = 0;
		for (int slot = 0; slot < dig_slots(lv); slot++)
			if (dig_arrow_valid(lv, &s, slot))
				valid[nvalid++] = slot;
		if (nvalid == 0)
			break;
		int slot = valid[rng_below(r, (uint64_t)nvalid)];
		assert_int_equal(dig_arrow_do(lv, &s, slot, &cmd), 0);
		taps[n++] = (uint8_t)slot;
	}
	return n;
}

static uint64_t budget(void)
{
	return dig_check_solver_states();
}

/* ---- dig_solve_from ---- */

static void test_from_start_is_solve(void **state)
{
	(void)state;
	for (int d = DIG_EASIEST; d < DIG_DIFFICULTY_COUNT; d++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			static dig_puzzle pz;
			static dig_solve_result a, b;
			generate((dig_difficulty)d, seed, &pz);
			dig_state s;
			dig_state_init(&pz.level, &s);
			sf_err err = { 0 };
			assert_int_equal(dig_solve(&pz.level, budget(), &a, &err), 0);
			assert_int_equal(dig_solve_from(&pz.level, &s, budget(), &b, &err), 0);
			assert_memory_equal(&a, &b, sizeof a);
			assert_memory_equal(&a, &pz.optimal, sizeof a);
		}
}

static void test_from_won_state(void **state)
{
	(void)state;
	static dig_puzzle pz;
	generate(DIG_EASY, 2, &pz);
	dig_state s;
	state_after(&pz.level, pz.optimal.taps, pz.optimal.turns, &s);
	assert_true(dig_won(&s));
	dig_solve_result res;
	sf_err err = { 0 };
	assert_int_equal(dig_solve_from(&pz.level, &s, budget(), &res, &err), 0);
	assert_int_equal(res.status, DIG_SOLVED);
	assert_int_equal(res.turns, 0);
	dig_hint h;
	assert_int_equal(
		dig_hint_find(&pz.level, pz.optimal.taps, pz.optimal.turns, budget(), &h, &err), 0);
	assert_true(h.won);
	assert_int_equal(h.status, DIG_SOLVED);
	assert_int_equal(h.undo, 0);
}

static void test_budget_unknown(void **state)
{
	(void)state;
	static dig_puzzle pz;
	generate(DIG_HARDEST, 1, &pz);
	assert_true(pz.optimal.states > 20);
	dig_hint h;
	sf_err err = { 0 };
	assert_int_equal(dig_hint_find(&pz.level, NULL, 0, 10, &h, &err), 0);
	assert_int_equal(h.status, DIG_UNKNOWN);
	assert_int_equal(h.undo, -1);
	assert_false(h.won);
	assert_true(h.plan.status != DIG_SOLVED);
	/* The same with the full budget: the level's optimum. */
	assert_int_equal(dig_hint_find(&pz.level, NULL, 0, budget(), &h, &err), 0);
	assert_int_equal(h.status, DIG_SOLVED);
	assert_int_equal(h.plan.turns, pz.optimal.turns);
	assert_int_equal(h.plan.taps[0], pz.optimal.taps[0]);
}

/*
 * Random small levels (every terrain, random rules, 0..3 uses per arrow):
 * from the state after a random play of 0..5 valid taps, dig_solve_from
 * gives the breadth-first search's verdict and minimum, and its taps
 * replay from that state to a win. Exercises the key's path history
 * (no_shuffle, no_backtrack), spent terrain and gold in order mid-play.
 */
static void test_from_random_states_against_bfs(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 9191);
	int solved = 0, unsolvable = 0, mid = 0;
	for (int i = 0; i < 300; i++) {
		dig_level lv;
		sf_err err = { 0 };
		int w = 4 + (int)rng_below(&r, 2), h = 3;
		dig_random_level(&r, w, h, 1 + (int)rng_below(&r, 3), 6 + (int)rng_below(&r, 8),
				 true, &lv);
		for (int k = 0; k < dig_slots(&lv); k++)
			lv.arrow[k].uses = (uint8_t)rng_below(&r, 4);
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("random level %d refused: %s", i, err.msg);
		uint8_t taps[DIG_MAX_MOVES];
		int n = random_play(&lv, &r, taps);
		int at = (int)rng_below(&r, (uint64_t)(n < 5 ? n : 5) + 1);
		dig_state s;
		state_after(&lv, taps, at, &s);
		int want = bfs_from(&lv, &s, 200000);
		if (want < 0)
			continue;
		dig_solve_result res;
		assert_int_equal(dig_solve_from(&lv, &s, 10000000, &res, &err), 0);
		mid += at > 0;
		if (want == NO_WIN) {
			if (res.status != DIG_UNSOLVABLE)
				fail_msg("level %d after %d taps: no win, solver says %d in %d", i,
					 at, res.status, res.turns);
			unsolvable++;
			continue;
		}
		if (res.status != DIG_SOLVED || res.turns != want)
			fail_msg("level %d after %d taps: the fewest taps are %d, solver says %d "
				 "in %d",
				 i, at, want, res.status, res.turns);
		dig_cmd cmd;
		for (int k = 0; k < res.turns; k++)
			assert_int_equal(dig_arrow_do(&lv, &s, res.taps[k], &cmd), 0);
		assert_true(dig_won(&s));
		solved++;
	}
	print_message("bfs from play states: %d solved, %d unsolvable, %d after 1+ taps\n", solved,
		      unsolvable, mid);
	assert_true(solved >= 30);
	assert_true(unsolvable >= 30);
	assert_true(mid >= 100);
}

/* ---- hints on sampled plays ---- */

typedef struct tally {
	int winnable, dead, unknown, bfs_checked, taps_followed;
} tally;

/* Follows hints from taps[0..n-1] to the end: wins in exactly the announced taps. */
static void follow_hints(const dig_level *lv, uint8_t *taps, int n, int announced, tally *t)
{
	sf_err err = { 0 };
	for (int left = announced; left > 0; left--) {
		dig_hint h;
		assert_int_equal(dig_hint_find(lv, taps, n, budget(), &h, &err), 0);
		assert_int_equal(h.status, DIG_SOLVED);
		assert_false(h.won);
		assert_int_equal(h.plan.turns, left);
		taps[n++] = h.plan.taps[0];
		t->taps_followed++;
	}
	dig_state s;
	state_after(lv, taps, n, &s);
	assert_true(dig_won(&s));
}

/* Checks the hint at the position after taps[0..n-1]. `bfs_max`: 0 for no oracle. */
static void check_position(const dig_level *lv, const uint8_t *play, int n, uint32_t bfs_max,
			   tally *t)
{
	uint8_t taps[DIG_MAX_MOVES];
	memcpy(taps, play, (size_t)n);
	sf_err err = { 0 };
	dig_hint h;
	dig_state s;
	dig_solve_result direct;
	state_after(lv, taps, n, &s);
	assert_int_equal(dig_hint_find(lv, taps, n, budget(), &h, &err), 0);
	assert_int_equal(dig_solve_from(lv, &s, budget(), &direct, &err), 0);
	assert_int_equal(h.status, direct.status);
	if (h.status == DIG_UNKNOWN) {
		t->unknown++;
		return;
	}
	int oracle = bfs_max ? bfs_from(lv, &s, bfs_max) : -1;
	if (h.status == DIG_SOLVED) {
		t->winnable++;
		assert_int_equal(h.plan.turns, direct.turns);
		if (oracle >= 0) {
			assert_int_equal(oracle, h.plan.turns);
			t->bfs_checked++;
		}
		follow_hints(lv, taps, n, h.plan.turns, t);
		return;
	}
	t->dead++;
	if (oracle >= 0) {
		assert_int_equal(oracle, NO_WIN);
		t->bfs_checked++;
	}
	if (h.undo < 0)
		return; /* the level itself or a prefix out of budget: nothing to check */
	int k = h.undo;
	assert_true(k >= 1 && k <= n);
	/* Every shorter undo is dead, the k-th winnable. */
	for (int j = 1; j <= k; j++) {
		dig_state p;
		dig_solve_result res;
		state_after(lv, taps, n - j, &p);
		assert_int_equal(dig_solve_from(lv, &p, budget(), &res, &err), 0);
		assert_int_equal(res.status, j < k ? DIG_UNSOLVABLE : DIG_SOLVED);
		if (bfs_max) {
			int o = bfs_from(lv, &p, bfs_max);
			if (o >= 0)
				assert_int_equal(o, j < k ? NO_WIN : res.turns);
		}
	}
	assert_int_equal(h.plan.status, DIG_SOLVED);
	follow_hints(lv, taps, n - k, h.plan.turns, t);
}

static void test_hints_on_sampled_plays(void **state)
{
	(void)state;
	tally total = { 0 };
	for (int d = DIG_EASIEST; d < DIG_DIFFICULTY_COUNT; d++) {
		tally t = { 0 };
		uint32_t bfs_max = d <= DIG_EASY ? 200000 : 0;
		/* Expert's dead positions cost the most (an undo search of up to
		 * four 400 000-state solves): one level of it. */
		uint64_t levels = d == DIG_EXPERT ? 1 : 3;
		for (uint64_t seed = 1; seed <= levels; seed++) {
			static dig_puzzle pz;
			generate((dig_difficulty)d, seed, &pz);
			rng r;
			rng_seed(&r, 1000 * (uint64_t)d + seed);
			for (int play = 0; play < 3; play++) {
				uint8_t taps[DIG_MAX_MOVES];
				int n = random_play(&pz.level, &r, taps);
				/* Every position of the play, from the start to its end. */
				for (int at = 0; at <= n; at++)
					check_position(&pz.level, taps, at, bfs_max, &t);
			}
		}
		print_message("%s: %d winnable, %d dead, %d unknown, %d by bfs, %d hint taps\n",
			      dig_difficulty_name((dig_difficulty)d), t.winnable, t.dead, t.unknown,
			      t.bfs_checked, t.taps_followed);
		total.winnable += t.winnable;
		total.dead += t.dead;
		total.bfs_checked += t.bfs_checked;
		assert_true(t.winnable >= 3 * (int)levels); /* at least the starts */
	}
	assert_true(total.dead >= 10);
	assert_true(total.bfs_checked >= 20);
}

/* ---- the JSON operation ---- */

static json_t *body_for(const dig_level *lv, const uint8_t *taps, int n)
{
	json_t *body = json_pack("{s:o, s:o}", "level", dig_level_to_json(lv), "moves",
				 dig_taps_to_json(lv, taps, n));
	assert_non_null(body);
	return body;
}

/* The hint refuses exactly what the check refuses, with the same message. */
static void assert_same_refusal(json_t *body)
{
	sf_err e1 = { 0 }, e2 = { 0 };
	json_t *c = dig_check_json(body, &e1);
	json_t *h = dig_hint_json(body, &e2);
	assert_null(c);
	assert_null(h);
	assert_int_equal(e1.code, SF_EINVAL);
	assert_int_equal(e2.code, SF_EINVAL);
	assert_string_equal(e1.msg, e2.msg);
	json_decref(body);
}

static void test_json_refusals(void **state)
{
	(void)state;
	static dig_puzzle pz;
	generate(DIG_EASY, 3, &pz);
	const dig_level *lv = &pz.level;
	/* A tap after the win. */
	uint8_t taps[DIG_MAX_TURNS + 1];
	memcpy(taps, pz.optimal.taps, (size_t)pz.optimal.turns);
	taps[pz.optimal.turns] = pz.optimal.taps[0];
	assert_same_refusal(body_for(lv, taps, pz.optimal.turns + 1));
	/* A tap that is not allowed: a slot with no uses, tapped first. */
	dig_state s;
	dig_state_init(lv, &s);
	int bad = -1;
	for (int slot = 0; slot < dig_slots(lv) && bad < 0; slot++)
		if (!dig_arrow_valid(lv, &s, slot))
			bad = slot;
	assert_true(bad >= 0);
	taps[0] = (uint8_t)bad;
	assert_same_refusal(body_for(lv, taps, 1));
	/* Shapes. */
	assert_same_refusal(json_pack("[]"));
	assert_same_refusal(
		json_pack("{s:o, s:[s]}", "level", dig_level_to_json(lv), "moves", "x"));
	assert_same_refusal(
		json_pack("{s:o, s:[], s:i}", "level", dig_level_to_json(lv), "moves", "extra", 1));
	assert_same_refusal(json_pack("{s:{}, s:[]}", "level", "moves"));
	sf_err err = { 0 };
	json_t *body = json_pack("{s:o, s:[{s:s, s:i}]}", "level", dig_level_to_json(lv), "moves",
				 "side", "up", "index", 0);
	assert_null(dig_hint_json(body, &err));
	assert_non_null(strstr(err.msg, "moves[0].side"));
	json_decref(body);
}

static void test_json_answers(void **state)
{
	(void)state;
	static dig_puzzle pz;
	generate(DIG_MEDIUM, 1, &pz);
	const dig_level *lv = &pz.level;
	sf_err err = { 0 };
	/* The start: the first optimal tap, the optimum. */
	json_t *body = body_for(lv, NULL, 0);
	json_t *a = dig_hint_json(body, &err);
	assert_non_null(a);
	assert_true(json_is_true(json_object_get(a, "winnable")));
	assert_false(json_is_true(json_object_get(a, "solved")));
	assert_int_equal(json_integer_value(json_object_get(a, "undo")), 0);
	assert_int_equal(json_integer_value(json_object_get(a, "taps_needed")), pz.optimal.turns);
	assert_null(json_object_get(a, "reason"));
	json_t *first = dig_taps_to_json(lv, pz.optimal.taps, 1);
	assert_true(json_equal(json_object_get(a, "hint"), json_array_get(first, 0)));
	json_decref(first);
	json_decref(a);
	json_decref(body);
	/* Won: solved, no hint. */
	body = body_for(lv, pz.optimal.taps, pz.optimal.turns);
	a = dig_hint_json(body, &err);
	assert_non_null(a);
	assert_true(json_is_true(json_object_get(a, "solved")));
	assert_true(json_is_null(json_object_get(a, "hint")));
	assert_int_equal(json_integer_value(json_object_get(a, "taps_needed")), 0);
	json_decref(a);
	json_decref(body);
	/* A dead position from a random play: winnable false and an undo count. */
	rng r;
	rng_seed(&r, 7);
	for (int tries = 0; tries < 50; tries++) {
		uint8_t taps[DIG_MAX_MOVES];
		int n = random_play(lv, &r, taps);
		dig_state s;
		state_after(lv, taps, n, &s);
		if (dig_won(&s))
			continue;
		body = body_for(lv, taps, n);
		a = dig_hint_json(body, &err);
		assert_non_null(a);
		json_decref(body);
		if (!json_is_false(json_object_get(a, "winnable"))) {
			json_decref(a);
			continue;
		}
		json_t *undo = json_object_get(a, "undo");
		assert_true(json_is_integer(undo) && json_integer_value(undo) >= 1);
		assert_true(json_is_object(json_object_get(a, "hint")));
		assert_true(json_integer_value(json_object_get(a, "taps_needed")) >= 1);
		assert_null(json_object_get(a, "reason"));
		json_decref(a);
		return;
	}
	fail_msg("no dead random play in 50");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_start_is_solve),
		cmocka_unit_test(test_from_won_state),
		cmocka_unit_test(test_budget_unknown),
		cmocka_unit_test(test_from_random_states_against_bfs),
		cmocka_unit_test(test_hints_on_sampled_plays),
		cmocka_unit_test(test_json_refusals),
		cmocka_unit_test(test_json_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
