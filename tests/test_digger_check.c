/*
 * test_digger_check.c - the star rule and the check operation of Direction
 * Digger (core/digger/check.c, behind POST /v1/digger/check).
 *
 * Oracles: the thresholds of generated levels against the brief's rule and
 * what the generator recorded and the solver proved (three stars at the
 * optimum, at least one for the recorded play); the check's verdicts on a
 * hand-made level whose plays are worked out by hand, on an unsolvable
 * level, on bad bodies (each message starts with the JSON path), and on
 * the recorded and optimal plays of generated levels.
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
#include "digger_support.h"
#include "stars.h"

#define SEEDS_PER_DIFFICULTY 4

/* Generated puzzles, SEEDS_PER_DIFFICULTY of each difficulty, made once. */
static dig_puzzle *puzzles;
static int npuzzles;

static int make_puzzles(void **state)
{
	(void)state;
	puzzles = dig_sample_puzzles(SEEDS_PER_DIFFICULTY, &npuzzles);
	return puzzles ? 0 : -1;
}

static int free_puzzles(void **state)
{
	(void)state;
	free(puzzles);
	return 0;
}

static json_t *check_body(const dig_level *lv, const uint8_t *taps, int n)
{
	return json_pack("{s:o, s:o}", "level", dig_level_to_json(lv), "moves",
			 dig_taps_to_json(lv, taps, n));
}

static json_t *run_check(json_t *body, sf_err *err)
{
	json_t *res = dig_check_json(body, err);
	json_decref(body);
	return res;
}

static void test_thresholds(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	/* Budget 6 plus the energy's 2. */
	assert_int_equal(dig_max_taps(&lv), 8);
	int t[3];
	assert_int_equal(dig_thresholds(&lv, 4, t, NULL), 0);
	assert_int_equal(t[0], 8);
	assert_int_equal(t[1], 6);
	assert_int_equal(t[2], 4);
	/* Bounds closer than 2: the one-star threshold widens to optimum + 2. */
	assert_int_equal(dig_thresholds(&lv, 7, t, NULL), 0);
	assert_int_equal(t[0], 9);
	assert_int_equal(t[1], 8);
	assert_int_equal(t[2], 7);
	sf_err err = { 0 };
	assert_int_equal(dig_thresholds(&lv, -1, t, &err), SF_EINVAL);

	for (int i = 0; i < npuzzles; i++) {
		const dig_puzzle *pz = &puzzles[i];
		assert_int_equal(dig_thresholds(&pz->level, pz->optimal.turns, t, &err), 0);
		assert_true(t[0] > t[1] && t[1] > t[2]);
		assert_int_equal(t[2], pz->optimal.turns);
		/* The brief's rule is max(recorded, budget); ours is never below it. */
		int brief =
			pz->recorded.turns > pz->level.turns ? pz->recorded.turns : pz->level.turns;
		assert_true(t[0] >= brief);
		assert_true(stars_earned_lower(pz->recorded.turns, t) >= 1);
		assert_int_equal(stars_earned_lower(pz->optimal.turns, t), 3);
	}
}

/* The hand-made level's winning play: row 0's left arrow twice (machine 0
 * onto the web gold), then row 2's right arrow twice (machine 1 onto the
 * other gold). */
static void handmade_win(const dig_level *lv, uint8_t win[4])
{
	win[0] = win[1] = (uint8_t)dig_slot_row_left(lv, 0);
	win[2] = win[3] = (uint8_t)dig_slot_row_right(lv, 2);
}

static void test_check_handmade(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	uint8_t win[4];
	handmade_win(&lv, win);
	sf_err err = { 0 };
	json_t *res = run_check(check_body(&lv, win, 4), &err);
	if (!res)
		fail_msg("check failed: %s", err.msg);
	assert_true(json_is_true(json_object_get(res, "solved")));
	assert_int_equal(json_integer_value(json_object_get(res, "gold")), 2);
	assert_int_equal(json_integer_value(json_object_get(res, "gold_total")), 2);
	assert_int_equal(json_integer_value(json_object_get(res, "turns")), 4);
	assert_int_equal(json_integer_value(json_object_get(res, "turns_left")), 2);
	assert_int_equal(json_integer_value(json_object_get(res, "optimum")), 4);
	assert_int_equal(json_integer_value(json_object_get(res, "stars")), 3);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(res, "thresholds"), 0)),
			 8);
	json_decref(res);

	/* Half way: nothing solved, no stars, the thresholds still there. */
	res = run_check(check_body(&lv, win, 1), &err);
	assert_non_null(res);
	assert_true(json_is_false(json_object_get(res, "solved")));
	assert_int_equal(json_integer_value(json_object_get(res, "gold")), 0);
	assert_int_equal(json_integer_value(json_object_get(res, "stars")), 0);
	json_decref(res);

	/* A hidden arrow, a spent arrow, a move after the win. */
	uint8_t hidden[] = { (uint8_t)dig_slot_col_top(&lv, 0) };
	assert_null(run_check(check_body(&lv, hidden, 1), &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_string_equal(err.msg, "moves[0]: this tap is not allowed: the arrow is hidden");
	uint8_t spent[] = { win[0], win[1], win[0] };
	assert_null(run_check(check_body(&lv, spent, 3), &err));
	assert_string_equal(err.msg,
			    "moves[2]: this tap is not allowed: the arrow has no uses left");
	uint8_t after[] = { win[0], win[1], win[2], win[3], win[2] };
	assert_null(run_check(check_body(&lv, after, 5), &err));
	assert_string_equal(err.msg, "moves[4]: the level is already solved after moves[3]");
}

/* A level nobody can solve: a check still replays, but rates nothing. */
static void test_check_unsolvable(void **state)
{
	(void)state;
	dig_level lv;
	memset(&lv, 0, sizeof lv);
	lv.w = 3;
	lv.h = 1;
	lv.turns = 4;
	lv.machines = 1;
	lv.gold[2] = 1;
	for (int s = 0; s < dig_slots(&lv); s++)
		lv.arrow[s].dir = (uint8_t)dig_slot_default_dir(&lv, s);
	lv.arrow[dig_slot_col_top(&lv, 0)].uses = 3; /* moves nothing on one row */
	sf_err err = { 0 };
	json_t *res = run_check(check_body(&lv, NULL, 0), &err);
	if (!res)
		fail_msg("check failed: %s", err.msg);
	assert_true(json_is_false(json_object_get(res, "solved")));
	assert_true(json_is_null(json_object_get(res, "stars")));
	assert_true(json_is_null(json_object_get(res, "thresholds")));
	assert_true(json_is_null(json_object_get(res, "optimum")));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(res, "solver"), "status")),
		"unsolvable");
	assert_non_null(
		strstr(json_string_value(json_object_get(res, "reason")), "cannot be solved"));
	json_decref(res);
}

static void test_check_bad_bodies(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	static const struct {
		const char *moves; /* NULL: the key is absent */
		const char *extra; /* an extra top-level key, or NULL */
		const char *expect;
	} cases[] = {
		{ NULL, NULL, "moves: must be an array of taps" },
		{ "{}", NULL, "moves: must be an array" },
		{ "[5]", NULL, "moves[0]: must be an object with side and index" },
		{ "[{\"side\":\"left\",\"index\":0},{\"side\":\"up\",\"index\":0}]", NULL,
		  "moves[1].side: \"up\" is not one of left, right, top, bottom" },
		{ "[{\"side\":\"left\",\"index\":9}]", NULL,
		  "moves[0].index: must be an integer 0..2" },
		{ "[{\"side\":\"top\"}]", NULL, "moves[0].index: is required" },
		{ "[{\"side\":\"top\",\"index\":0,\"uses\":1}]", NULL,
		  "moves[0]: unknown key \"uses\"" },
		{ "[]", "score", "body: unknown key \"score\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *body = json_pack("{s:o}", "level", dig_level_to_json(&lv));
		if (cases[i].moves)
			json_object_set_new(body, "moves",
					    json_loads(cases[i].moves, JSON_DECODE_ANY, NULL));
		if (cases[i].extra)
			json_object_set_new(body, cases[i].extra, json_integer(1));
		sf_err err = { 0 };
		assert_null(run_check(body, &err));
		if (err.code != SF_EINVAL ||
		    strncmp(err.msg, cases[i].expect, strlen(cases[i].expect)))
			fail_msg("case %zu: \"%s\", expected \"%s...\"", i, err.msg,
				 cases[i].expect);
	}
	sf_err err = { 0 };
	assert_null(run_check(json_array(), &err));
	assert_true(!strncmp(err.msg, "body: must be an object", 23));
	json_t *body = json_pack("{s:o, s:[]}", "level", dig_level_to_json(&lv), "moves");
	json_object_set_new(json_object_get(body, "level"), "turns", json_integer(0));
	assert_null(run_check(body, &err));
	assert_true(!strncmp(err.msg, "level.turns: must be", 20));
	assert_null(run_check(json_pack("{s:[]}", "moves"), &err));
	assert_true(!strncmp(err.msg, "level: must be an object", 24));
}

static void test_check_generated(void **state)
{
	(void)state;
	for (int i = 0; i < npuzzles; i++) {
		const dig_puzzle *pz = &puzzles[i];
		sf_err err = { 0 };
		json_t *rec = run_check(
			check_body(&pz->level, pz->recorded.tap, pz->recorded.turns), &err);
		if (!rec)
			fail_msg("puzzle %d: recorded solution refused: %s", i, err.msg);
		assert_true(json_is_true(json_object_get(rec, "solved")));
		assert_true(json_integer_value(json_object_get(rec, "stars")) >= 1);
		assert_int_equal(json_integer_value(json_object_get(rec, "optimum")),
				 pz->optimal.turns);
		json_decref(rec);
		json_t *opt = run_check(check_body(&pz->level, pz->optimal.taps, pz->optimal.turns),
					&err);
		if (!opt)
			fail_msg("puzzle %d: optimal solution refused: %s", i, err.msg);
		assert_true(json_is_true(json_object_get(opt, "solved")));
		assert_int_equal(json_integer_value(json_object_get(opt, "stars")), 3);
		json_decref(opt);
		/* An extra tap of a hidden or spent arrow is refused by index. */
		uint8_t taps[DIG_MAX_TURNS + 1];
		memcpy(taps, pz->optimal.taps, (size_t)pz->optimal.turns);
		taps[pz->optimal.turns] = taps[0];
		assert_null(run_check(check_body(&pz->level, taps, pz->optimal.turns + 1), &err));
		char want[48];
		snprintf(want, sizeof want, "moves[%d]: ", pz->optimal.turns);
		assert_true(!strncmp(err.msg, want, strlen(want)));
	}
}

/* The arrow (side, index) of `state` in a check's answer, or NULL. */
static const json_t *state_arrow(const json_t *st, const char *side, int index)
{
	size_t i;
	const json_t *a;
	json_array_foreach(json_object_get(st, "arrows"), i, a)
	{
		if (!strcmp(json_string_value(json_object_get(a, "side")), side) &&
		    json_integer_value(json_object_get(a, "index")) == index)
			return a;
	}
	return NULL;
}

/* Whether arrow (side, index) is tappable, with `uses` uses left. */
static void assert_arrow(const json_t *st, const char *side, int index, bool tappable, int uses)
{
	const json_t *a = state_arrow(st, side, index);
	assert_non_null(a);
	assert_int_equal(json_is_true(json_object_get(a, "tappable")), tappable);
	assert_int_equal(json_integer_value(json_object_get(a, "uses")), uses);
}

static int tappable_count(const json_t *st)
{
	size_t i;
	const json_t *a;
	int n = 0;
	json_array_foreach(json_object_get(st, "arrows"), i, a)
	{
		n += json_is_true(json_object_get(a, "tappable"));
	}
	return n;
}

static void assert_machine(const json_t *st, int m, int x, int y)
{
	const json_t *pos = json_array_get(json_object_get(st, "machines"), (size_t)m);
	assert_non_null(pos);
	assert_int_equal(json_integer_value(json_object_get(pos, "x")), x);
	assert_int_equal(json_integer_value(json_object_get(pos, "y")), y);
	assert_true(json_is_false(json_object_get(pos, "frozen")));
}

/* The cell (x, y) of `state`'s cells, or NULL. */
static const json_t *state_cell(const json_t *st, int x, int y)
{
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(st, "cells"), i, c)
	{
		if (json_integer_value(json_object_get(c, "x")) == x &&
		    json_integer_value(json_object_get(c, "y")) == y)
			return c;
	}
	return NULL;
}

/*
 * The check's "state" on the hand-made level (tests/digger_support.h),
 * worked out by hand: machine 0 at (0,0) and 1 at (3,2); row 0's left
 * arrow (2 uses) moves machine 0 right onto the web gold at (2,0) in two
 * taps, row 2's right arrow (2 uses) machine 1 left onto the gold at (1,2).
 * Column 1's top arrow has a use but nobody stands in column 1; column 0's
 * bottom arrow would push machine 0 off the top of the grid.
 */
static void test_check_state_handmade(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	uint8_t win[4];
	handmade_win(&lv, win);
	sf_err err = { 0 };
	json_t *res = run_check(check_body(&lv, win, 0), &err);
	assert_non_null(res);
	const json_t *st = json_object_get(res, "state");
	assert_non_null(st);
	assert_machine(st, 0, 0, 0);
	assert_machine(st, 1, 3, 2);
	assert_int_equal(json_array_size(json_object_get(st, "gold")), 2);
	assert_int_equal(json_array_size(json_object_get(st, "arrows")), 14);
	assert_arrow(st, "left", 0, true, 2);
	assert_arrow(st, "right", 2, true, 2);
	assert_arrow(st, "top", 1, false, 1);
	assert_arrow(st, "bottom", 0, false, 1);
	assert_int_equal(tappable_count(st), 2);
	assert_int_equal(json_array_size(json_object_get(st, "cells")), 4);
	assert_int_equal(json_integer_value(json_object_get(state_cell(st, 2, 0), "visits_left")),
			 1);
	assert_true(json_is_false(json_object_get(state_cell(st, 3, 0), "spent")));
	json_decref(res);

	/* Machine 0 on the web: its gold collected, row 0's arrow spent. */
	res = run_check(check_body(&lv, win, 2), &err);
	assert_non_null(res);
	st = json_object_get(res, "state");
	assert_machine(st, 0, 2, 0);
	assert_machine(st, 1, 3, 2);
	const json_t *gold = json_object_get(st, "gold");
	assert_int_equal(json_array_size(gold), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(gold, 0), "x")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(gold, 0), "y")), 2);
	assert_int_equal(json_integer_value(json_object_get(state_cell(st, 2, 0), "visits_left")),
			 0);
	assert_arrow(st, "left", 0, false, 0);
	assert_arrow(st, "right", 2, true, 2);
	assert_int_equal(tappable_count(st), 1);
	json_decref(res);

	/* Solved: no gold left, and no arrow may be tapped any more. */
	res = run_check(check_body(&lv, win, 4), &err);
	assert_non_null(res);
	st = json_object_get(res, "state");
	assert_machine(st, 1, 1, 2);
	assert_int_equal(json_array_size(json_object_get(st, "gold")), 0);
	assert_arrow(st, "right", 2, false, 0);
	assert_int_equal(tappable_count(st), 0);
	json_decref(res);
}

/*
 * On generated levels: after every prefix of the recorded solution (the
 * easier difficulties; the end alone for the rest, whose checks solve
 * longer), the machines stand where the generator's trace says, and the
 * recorded solution's next tap is tappable; at the end no gold and no
 * tappable arrow is left.
 */
static void test_check_state_generated(void **state)
{
	(void)state;
	for (int i = 0; i < npuzzles; i++) {
		const dig_puzzle *pz = &puzzles[i];
		const dig_trace *tr = &pz->recorded;
		bool every = i < 3 * SEEDS_PER_DIFFICULTY; /* easiest, easy, medium */
		for (int k = every ? 0 : tr->turns; k <= tr->turns; k++) {
			sf_err err = { 0 };
			json_t *res = run_check(check_body(&pz->level, tr->tap, k), &err);
			if (!res)
				fail_msg("puzzle %d, %d taps: %s", i, k, err.msg);
			const json_t *st = json_object_get(res, "state");
			for (int m = 0; m < pz->level.machines; m++) {
				const json_t *pos =
					json_array_get(json_object_get(st, "machines"), (size_t)m);
				int cell = (int)(json_integer_value(json_object_get(pos, "y")) *
							 pz->level.w +
						 json_integer_value(json_object_get(pos, "x")));
				assert_int_equal(cell, tr->pos[k][m]);
			}
			if (k < tr->turns) {
				json_t *next = dig_taps_to_json(&pz->level, &tr->tap[k], 1);
				const json_t *t = json_array_get(next, 0);
				const json_t *a = state_arrow(
					st, json_string_value(json_object_get(t, "side")),
					(int)json_integer_value(json_object_get(t, "index")));
				assert_non_null(a);
				assert_true(json_is_true(json_object_get(a, "tappable")));
				json_decref(next);
			} else {
				assert_int_equal(json_array_size(json_object_get(st, "gold")), 0);
				assert_int_equal(tappable_count(st), 0);
			}
			json_decref(res);
		}
	}
}

int main(void)
{
	json_object_seed(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_check_handmade),
		cmocka_unit_test(test_check_unsolvable),
		cmocka_unit_test(test_check_bad_bodies),
		cmocka_unit_test(test_check_generated),
		cmocka_unit_test(test_check_state_handmade),
		cmocka_unit_test(test_check_state_generated),
	};
	return cmocka_run_group_tests(tests, make_puzzles, free_puzzles);
}
