/*
 * test_digger_codec.c - the JSON codec of Direction Digger (core/digger/
 * codec.h): level descriptions and tap lists (the star rule and the check
 * operation: test_digger_check.c; the kind and its jobs:
 * test_digger_kind.c).
 *
 * Oracles: round trips compare whole structs with memcmp; the check's
 * verdicts are compared with what the generator recorded and the solver
 * proved (never with the codec's own output); the bad-description table
 * names the JSON path every message must start with; the fuzz test only
 * asks for the codec's contract (a level that passes dig_level_check, or a
 * message that names the path) on mutations of valid descriptions.
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
#include "rng.h"

#define SEEDS_PER_DIFFICULTY 4

/* ---- fixtures ---- */

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

/*
 * A copy of `lv` with every byte that is not a field of the level zero
 * (struct padding, cells and slots beyond the grid, starts beyond the
 * machines), so that memcmp compares meaning.
 */
static void canonical(const dig_level *lv, dig_level *out)
{
	memset(out, 0, sizeof *out);
	out->w = lv->w;
	out->h = lv->h;
	out->rules.no_shuffle = lv->rules.no_shuffle;
	out->rules.no_backtrack = lv->rules.no_backtrack;
	out->rules.gold_in_order = lv->rules.gold_in_order;
	out->rules.any_direction = lv->rules.any_direction;
	out->rules.single_use = lv->rules.single_use;
	for (int c = 0; c < lv->w * lv->h; c++) {
		out->terrain[c] = lv->terrain[c];
		out->tparam[c] = lv->tparam[c];
		out->tmask[c] = lv->tmask[c];
		out->gold[c] = lv->gold[c];
	}
	out->machines = lv->machines;
	for (int m = 0; m < lv->machines; m++)
		out->start[m] = lv->start[m];
	for (int s = 0; s < dig_slots(lv); s++)
		out->arrow[s] = lv->arrow[s];
	out->turns = lv->turns;
}

/* level -> JSON -> level, expecting the same bytes, and the same text again. */
static void round_trip(const dig_level *lv)
{
	dig_level want, got;
	canonical(lv, &want);
	json_t *doc = dig_level_to_json(lv);
	assert_non_null(doc);
	sf_err err = { 0 };
	int rc = dig_level_from_json(doc, "level", &got, &err);
	if (rc)
		fail_msg("round trip refused: %s", err.msg);
	assert_memory_equal(&want, &got, sizeof want);
	json_t *again = dig_level_to_json(&got);
	char *a = json_dumps(doc, JSON_COMPACT), *b = json_dumps(again, JSON_COMPACT);
	assert_string_equal(a, b);
	free(a);
	free(b);
	json_decref(again);
	json_decref(doc);
}

/* ---- round trips ---- */

static void test_round_trip_handmade(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	sf_err err = { 0 };
	if (dig_level_check(&lv, &err))
		fail_msg("the fixture is not a level: %s", err.msg);
	round_trip(&lv);
	/* Every rule on, arrows any way. */
	lv.rules = (dig_rules){ true, true, true, true, true };
	lv.arrow[0].dir = DIG_UP;
	lv.arrow[5].dir = DIG_DOWN;
	round_trip(&lv);
}

static void test_round_trip_generated(void **state)
{
	(void)state;
	int difficulties[DIG_DIFFICULTY_COUNT] = { 0 };
	for (int i = 0; i < npuzzles; i++) {
		const dig_puzzle *pz = &puzzles[i];
		round_trip(&pz->level);
		/* Tap lists too: slots -> JSON -> the same slots. */
		const uint8_t *lists[2] = { pz->recorded.tap, pz->optimal.taps };
		int lens[2] = { pz->recorded.turns, pz->optimal.turns };
		for (int k = 0; k < 2; k++) {
			json_t *j = dig_taps_to_json(&pz->level, lists[k], lens[k]);
			uint8_t back[DIG_MAX_MOVES];
			int n = -1;
			sf_err err = { 0 };
			assert_int_equal(dig_taps_from_json(j, "moves", &pz->level, back,
							    DIG_MAX_MOVES, &n, &err),
					 0);
			assert_int_equal(n, lens[k]);
			assert_memory_equal(back, lists[k], (size_t)n);
			json_decref(j);
		}
		difficulties[i / SEEDS_PER_DIFFICULTY]++;
	}
	for (int d = 0; d < DIG_DIFFICULTY_COUNT; d++)
		assert_int_equal(difficulties[d], SEEDS_PER_DIFFICULTY);
}

/* ---- bad descriptions ---- */

/*
 * Sets the value at `path` ("arrows[3].uses", "" for the root) in *root to
 * `value` (stolen; NULL deletes the member or element).
 */
static void set_path(json_t **root, const char *path, json_t *value)
{
	if (!*path) {
		json_decref(*root);
		*root = value;
		return;
	}
	json_t *node = *root;
	const char *p = path;
	for (;;) {
		char key[32];
		long index = -1;
		size_t n = 0;
		if (*p == '[') {
			index = strtol(p + 1, (char **)&p, 10);
			p++; /* ']' */
		} else {
			while (*p && *p != '.' && *p != '[')
				key[n++] = *p++;
			key[n] = '\0';
		}
		if (*p == '.')
			p++;
		if (!*p) {
			if (index >= 0 && value)
				assert_int_equal(json_array_set_new(node, (size_t)index, value), 0);
			else if (index >= 0)
				assert_int_equal(json_array_remove(node, (size_t)index), 0);
			else if (value)
				assert_int_equal(json_object_set_new(node, key, value), 0);
			else
				assert_int_equal(json_object_del(node, key), 0);
			return;
		}
		node = index >= 0 ? json_array_get(node, (size_t)index)
				  : json_object_get(node, key);
		assert_non_null(node);
	}
}

typedef struct bad_case {
	const char *path, *value; /* value: JSON text, NULL deletes */
	const char *path2, *value2;
	const char *expect; /* the message starts with this */
} bad_case;

static const bad_case BAD[] = {
	{ "", "[]", NULL, NULL, "level: must be an object" },
	{ "", "null", NULL, NULL, "level: must be an object" },
	{ "colour", "1", NULL, NULL, "level: unknown key \"colour\"" },
	{ "width", NULL, NULL, NULL, "level.width: is required" },
	{ "width", "\"4\"", NULL, NULL, "level.width: must be an integer 1..10" },
	{ "width", "4.0", NULL, NULL, "level.width: must be an integer" },
	{ "width", "0", NULL, NULL, "level.width: must be an integer 1..10" },
	{ "width", "11", NULL, NULL, "level.width: must be" },
	{ "height", "7", NULL, NULL, "level.height: must be an integer 1..6" },
	{ "height", "-3", NULL, NULL, "level.height: must be" },
	{ "turns", "0", NULL, NULL, "level.turns: must be an integer 1..96" },
	{ "turns", "97", NULL, NULL, "level.turns: must be an integer 1..96" },
	{ "turns", "9223372036854775807", NULL, NULL, "level.turns: must be" },
	{ "turns", "-9223372036854775807", NULL, NULL, "level.turns: must be" },
	{ "turns", "1e300", NULL, NULL, "level.turns: must be" },
	{ "rules", "[]", NULL, NULL, "level.rules: must be an object" },
	{ "rules.gold_in_order", "1", NULL, NULL,
	  "level.rules.gold_in_order: must be true or false" },
	{ "rules.fast", "true", NULL, NULL, "level.rules: unknown key \"fast\"" },
	{ "machines", NULL, NULL, NULL, "level.machines: is required" },
	{ "machines", "[]", NULL, NULL, "level.machines: has 0 items; it must have 1..6" },
	{ "machines", "{}", NULL, NULL, "level.machines: must be an array" },
	{ "machines[0]", "[0,0]", NULL, NULL, "level.machines[0]: must be an object" },
	{ "machines[0].x", "4", NULL, NULL, "level.machines[0].x: must be an integer 0..3" },
	{ "machines[0].y", NULL, NULL, NULL, "level.machines[0].y: is required" },
	{ "machines[0].z", "1", NULL, NULL, "level.machines[0]: unknown key \"z\"" },
	{ "machines[1]", "{\"x\":0,\"y\":0}", NULL, NULL, "level.machines[1]: cell (0,0) already" },
	{ "machines[1]", "{\"x\":1,\"y\":1}", NULL, NULL,
	  "level.machines[1]: cell (1,1) is stone" },
	{ "cells", "{}", NULL, NULL, "level.cells: must be an array" },
	{ "cells[0]", "\"web\"", NULL, NULL, "level.cells[0]: must be an object" },
	{ "cells[0].terrain", "\"lava2\"", NULL, NULL,
	  "level.cells[0].terrain: \"lava2\" is not one of mud, stone" },
	{ "cells[0].terrain", "7", NULL, NULL, "level.cells[0].terrain: must be one of" },
	{ "cells[0].terrain", NULL, NULL, NULL, "level.cells[0].terrain: is required" },
	{ "cells[0].param", "0", NULL, NULL, "level.cells[0]: web tparam" },
	{ "cells[1].param", "256", NULL, NULL, "level.cells[1].param: must be an integer 0..255" },
	{ "cells[1].param", "10", NULL, NULL, "level.cells[1]: energy tparam" },
	{ "cells[2].machines", "[5]", NULL, NULL,
	  "level.cells[2].machines[0]: must be a machine index 0..1" },
	{ "cells[2].machines", "[0,0]", NULL, NULL,
	  "level.cells[2].machines[1]: machine 0 is listed twice" },
	{ "cells[2].machines", "[0,1,1]", NULL, NULL,
	  "level.cells[2].machines: has 3 items; it must have 0..2" },
	{ "cells[2].machines", "\"0\"", NULL, NULL, "level.cells[2].machines: must be an array" },
	{ "cells[3].param", "16", NULL, NULL, "level.cells[3]: treasure tparam" },
	{ "cells[3].machines", "[0]", NULL, NULL, "level.cells[3]: treasure tmask" },
	{ "cells[1]", "{\"x\":2,\"y\":0,\"terrain\":\"ice\"}", NULL, NULL,
	  "level.cells[1]: cell (2,0) is listed twice" },
	{ "gold", "[]", NULL, NULL, "level.gold: has 0 items" },
	{ "gold", NULL, NULL, NULL, "level.gold: is required" },
	{ "gold[0].order", "0", NULL, NULL, "level.gold[0].order: must be an integer 1..12" },
	{ "gold[0].order", "true", NULL, NULL, "level.gold[0].order: must be" },
	{ "gold[1]", "{\"x\":2,\"y\":0}", NULL, NULL, "level.gold[1]: cell (2,0) is listed twice" },
	{ "gold[0]", "{\"x\":0,\"y\":0}", NULL, NULL,
	  "level.gold[0]: cell (0,0) is machine 0's start" },
	{ "rules.gold_in_order", "true", "gold[1].order", "1",
	  "level.gold[1].order: order 1 is used twice" },
	{ "rules.gold_in_order", "true", "gold[1].order", "3",
	  "level.gold[1].order: must be an integer 1..2" },
	{ "arrows", "[1]", NULL, NULL, "level.arrows[0]: must be an object" },
	{ "arrows[3].uses", "256", NULL, NULL, "level.arrows[3].uses: must be an integer 0..255" },
	{ "arrows[3].uses", "-1", NULL, NULL, "level.arrows[3].uses: must be an integer 0..255" },
	{ "arrows[3].uses", NULL, NULL, NULL, "level.arrows[3].uses: is required" },
	{ "arrows[3].side", "\"middle\"", NULL, NULL,
	  "level.arrows[3].side: \"middle\" is not one of left, right, top, bottom" },
	{ "arrows[3].index", "3", NULL, NULL, "level.arrows[3].index: must be an integer 0..2" },
	{ "arrows[6].index", "4", NULL, NULL, "level.arrows[6].index: must be an integer 0..3" },
	{ "arrows[4]", "{\"side\":\"right\",\"index\":0,\"uses\":1}", NULL, NULL,
	  "level.arrows[4]: the right arrow of row 0 is listed twice" },
	{ "arrows[0].dir", "\"left\"", NULL, NULL, "level.arrows[0].dir: must be \"right\"" },
	{ "arrows[0].dir", "\"sideways\"", NULL, NULL,
	  "level.arrows[0].dir: \"sideways\" is not one of up" },
	{ "arrows[0].colour", "1", NULL, NULL, "level.arrows[0]: unknown key \"colour\"" },
};

static void test_bad_descriptions(void **state)
{
	(void)state;
	dig_level lv;
	dig_handmade(&lv);
	for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
		const bad_case *b = &BAD[i];
		json_t *doc = dig_level_to_json(&lv);
		const char *paths[2] = { b->path, b->path2 }, *values[2] = { b->value, b->value2 };
		for (int k = 0; k < 2 && paths[k]; k++) {
			json_error_t jerr;
			json_t *v =
				values[k] ? json_loads(values[k], JSON_DECODE_ANY, &jerr) : NULL;
			if (values[k] && !v)
				fail_msg("case %zu: bad test value %s: %s", i, values[k],
					 jerr.text);
			set_path(&doc, paths[k], v);
		}
		dig_level out;
		sf_err err = { 0 };
		int rc = dig_level_from_json(doc, "level", &out, &err);
		if (rc != SF_EINVAL || strncmp(err.msg, b->expect, strlen(b->expect)))
			fail_msg("case %zu (%s = %s): rc %d, message \"%s\", expected \"%s...\"", i,
				 b->path, b->value ? b->value : "(deleted)", rc, err.msg,
				 b->expect);
		json_decref(doc);
	}
}

/* ---- fuzz ---- */

/* A pointer to one place in a document: a member of an object or an element of an array. */
typedef struct slot_ref {
	json_t *parent;
	const char *key;
	size_t index;
} slot_ref;

static void collect(json_t *v, slot_ref *out, int *n, int max)
{
	if (json_is_object(v)) {
		const char *key;
		json_t *child;
		json_object_foreach(v, key, child)
		{
			if (*n < max)
				out[(*n)++] = (slot_ref){ v, key, 0 };
			collect(child, out, n, max);
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (*n < max)
				out[(*n)++] = (slot_ref){ v, NULL, i };
			collect(json_array_get(v, i), out, n, max);
		}
	}
}

static json_t *random_string(rng *r)
{
	static const char *const words[] = { "left",   "right", "top",  "bottom",   "up",    "down",
					     "mud",    "stone", "web",  "treasure", "ice",   "lava",
					     "energy", "",      "LEFT", "left\0x",  "stone " };
	if (rng_below(r, 2))
		return json_string(words[rng_below(r, sizeof words / sizeof words[0])]);
	char bytes[40];
	size_t n = (size_t)rng_below(r, sizeof bytes);
	for (size_t i = 0; i < n; i++)
		bytes[i] = (char)rng_below(r, 256);
	return json_stringn_nocheck(bytes, n);
}

static json_t *random_value(rng *r)
{
	static const json_int_t ints[] = { -1,
					   0,
					   1,
					   2,
					   3,
					   5,
					   6,
					   7,
					   9,
					   10,
					   11,
					   15,
					   16,
					   63,
					   64,
					   95,
					   96,
					   97,
					   255,
					   256,
					   65535,
					   2147483647,
					   -2147483648LL,
					   INT64_MAX,
					   INT64_MIN };
	switch (rng_below(r, 9)) {
	case 0:
	case 1:
		return json_integer(ints[rng_below(r, sizeof ints / sizeof ints[0])]);
	case 2:
		return json_real(rng_below(r, 2) ? 1.5 : 1e300);
	case 3:
		return random_string(r);
	case 4:
		return json_boolean(rng_below(r, 2));
	case 5:
		return json_null();
	case 6:
		return json_object();
	case 7:
		return json_array();
	default: {
		/* Deep nesting. */
		json_t *v = json_integer(1);
		int depth = 50 + (int)rng_below(r, 400);
		for (int i = 0; i < depth; i++) {
			json_t *w = rng_below(r, 2) ? json_array() : json_object();
			if (json_is_array(w))
				json_array_append_new(w, v);
			else
				json_object_set_new(w, "x", v);
			v = w;
		}
		return v;
	}
	}
}

static void mutate(json_t *doc, rng *r)
{
	slot_ref refs[512];
	int n = 0;
	collect(doc, refs, &n, 512);
	if (!n)
		return;
	slot_ref s = refs[rng_below(r, (uint64_t)n)];
	json_t *cur = s.key ? json_object_get(s.parent, s.key) : json_array_get(s.parent, s.index);
	json_t *v = NULL;
	switch (rng_below(r, 7)) {
	case 0: /* drop */
		if (s.key)
			json_object_del(s.parent, s.key);
		else
			json_array_remove(s.parent, s.index);
		return;
	case 1: /* an unknown key, or an extra element */
		if (json_is_object(cur))
			json_object_set_new(cur, "extra", random_value(r));
		else if (json_is_array(cur))
			json_array_append_new(cur, json_deep_copy(json_array_get(cur, 0)));
		return;
	case 2: /* a number nudged or blown up */
		if (json_is_integer(cur)) {
			json_int_t k = json_integer_value(cur);
			json_int_t d[] = { 1, -1, 2, -64, 1000000 };
			v = json_integer(k + d[rng_below(r, 5)]);
			break;
		}
		v = random_value(r);
		break;
	case 3: { /* another node's value in this place */
		slot_ref o = refs[rng_below(r, (uint64_t)n)];
		v = json_deep_copy(o.key ? json_object_get(o.parent, o.key)
					 : json_array_get(o.parent, o.index));
		break;
	}
	default:
		v = random_value(r);
		break;
	}
	if (!v)
		return;
	if (s.key)
		json_object_set_new(s.parent, s.key, v);
	else
		json_array_set_new(s.parent, s.index, v);
}

/*
 * The check operation on a level the fuzz read: a random walk of taps the
 * engine accepts (stopping at the win) must be accepted with the same gold
 * and turns; the same walk with a random tap (any side, any index, possibly
 * off the grid) spliced in must either be accepted or refused with a
 * message naming the move or its field. Either way no crash, and the
 * solver's answer is one of the three statuses.
 */
static void fuzz_check(const dig_level *lv, json_t *doc, rng *r, int *accepted)
{
	dig_state s;
	dig_cmd cmd;
	uint8_t taps[DIG_MAX_TURNS];
	int n = 0, limit = (int)rng_below(r, 16);
	dig_state_init(lv, &s);
	while (n < limit && !dig_won(&s)) {
		int valid[DIG_MAX_ARROWS], nvalid = 0;
		for (int i = 0; i < dig_slots(lv); i++)
			if (dig_arrow_valid(lv, &s, i))
				valid[nvalid++] = i;
		if (nvalid == 0)
			break;
		taps[n] = (uint8_t)valid[rng_below(r, (uint64_t)nvalid)];
		dig_arrow_do(lv, &s, taps[n++], &cmd);
	}
	json_t *moves = dig_taps_to_json(lv, taps, n);
	bool spliced = rng_below(r, 2);
	if (spliced) {
		static const char *const SIDES[] = { "left", "right", "top", "bottom", "up" };
		json_array_insert_new(moves, (size_t)rng_below(r, (uint64_t)n + 1),
				      json_pack("{s:s, s:I}", "side", SIDES[rng_below(r, 5)],
						"index", (json_int_t)rng_below(r, 12) - 1));
	}
	json_t *body = json_pack("{s:O, s:o}", "level", doc, "moves", moves);
	sf_err err = { 0 };
	json_t *res = dig_check_json(body, &err);
	json_decref(body);
	if (!res) {
		if (!spliced || err.code != SF_EINVAL || strncmp(err.msg, "moves[", 6))
			fail_msg("check refused %s walk of %d taps: \"%s\"",
				 spliced ? "a spliced" : "a", n, err.msg);
		return;
	}
	const char *status =
		json_string_value(json_object_get(json_object_get(res, "solver"), "status"));
	assert_non_null(status);
	assert_true(!strcmp(status, "solved") || !strcmp(status, "unsolvable") ||
		    !strcmp(status, "unknown"));
	if (!spliced) {
		assert_int_equal(json_integer_value(json_object_get(res, "turns")), n);
		assert_int_equal(json_integer_value(json_object_get(res, "gold")),
				 dig_gold_count(lv) - __builtin_popcountll(s.gold));
		assert_int_equal(json_is_true(json_object_get(res, "solved")), dig_won(&s));
	}
	(*accepted)++;
	json_decref(res);
}

static void test_fuzz(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 20240611);
	dig_level hand;
	dig_handmade(&hand);
	int parsed = 0, refused = 0, checked = 0;
	for (int it = 0; it < 6000; it++) {
		const dig_level *base = it % 5 == 0 || !npuzzles
						? &hand
						: &puzzles[rng_below(&r, (uint64_t)npuzzles)].level;
		json_t *doc = dig_level_to_json(base);
		int k = 1 + (int)rng_below(&r, 3);
		for (int j = 0; j < k; j++)
			mutate(doc, &r);
		dig_level out;
		sf_err err = { 0 };
		int rc = dig_level_from_json(doc, "level", &out, &err);
		if (rc == 0) {
			sf_err e2 = { 0 };
			if (dig_level_check(&out, &e2))
				fail_msg("iteration %d: read a level that fails its check: %s", it,
					 e2.msg);
			round_trip(&out);
			fuzz_check(&out, doc, &r, &checked);
			parsed++;
		} else {
			if (rc != SF_EINVAL || strncmp(err.msg, "level", 5) || strlen(err.msg) < 10)
				fail_msg("iteration %d: rc %d, message \"%s\"", it, rc, err.msg);
			refused++;
		}
		json_decref(doc);
	}
	/* Both outcomes must occur, or the mutations test nothing. */
	assert_true(parsed > 100);
	assert_true(refused > 1000);
	assert_true(checked > 50);
	print_message("fuzz: %d mutated descriptions read (%d checks answered), %d refused\n",
		      parsed, checked, refused);
}

int main(void)
{
	json_object_seed(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_handmade),
		cmocka_unit_test(test_round_trip_generated),
		cmocka_unit_test(test_bad_descriptions),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, make_puzzles, free_puzzles);
}
