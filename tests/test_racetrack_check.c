/*
 * test_racetrack_check.c - the racetrack kind's check operation
 * (core/racetrack/check.c, behind POST /v1/racetrack/check): the stars a
 * lap earns on a level.
 *
 * Oracles: a hand-made level whose thresholds (30.0, 28.5, 27.2 s), length
 * (600 m: no lap under 10 s at 60 m/s) and three 200 m segments make every
 * verdict worked out by hand, in tenths of a second rounded half up (30.04
 * is 30.0, 30.05 is 30.1); a level generated in-process, whose thresholds
 * the check must apply at, just under and just over each one, and whose
 * player lap must earn the stars the search recorded for it
 * (solution.player_lap.stars); and a table of bad bodies, each refused with
 * SF_EINVAL and a message starting with the JSON path of the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "racetrack/check.h"
#include "racetrack_support.h"

/* A level as small as the check takes: kind, stars and the puzzle's length and segments. */
#define HAND_LEVEL                                                                       \
	"{\"kind\": \"racetrack\", \"stars\": {\"better\": \"lower\", \"thresholds\": "  \
	"[30.0, 28.5, 27.2]}, \"puzzle\": {\"length\": 600, \"segments\": [{\"start\": " \
	"0}, {\"start\": 200}, {\"start\": 400}]}}"

static json_t *generated; /* a generate result of a small search */

static int make_level(void **state)
{
	(void)state;
	generated = racetrack_generate("{\"population\": 8, \"generations\": 3, "
				       "\"races_per_genome\": 3, \"star_seeds\": 2, \"count\": 2}",
				       21, 2);
	return generated ? 0 : -1;
}

static int free_level(void **state)
{
	(void)state;
	json_decref(generated);
	return 0;
}

/* Runs the check through the registry, as the service does; consumes body. */
static json_t *run_check(json_t *body, sf_err *err)
{
	const sf_kind *kind = sf_kind_find("racetrack");
	assert_non_null(kind);
	assert_non_null(kind->check);
	json_t *res = kind->check(body, err);
	json_decref(body);
	return res;
}

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (!v)
		fail_msg("test JSON does not parse (%s): %s", jerr.text, text);
	return v;
}

/* The check of a lap (and splits, NULL for none) on `level` (borrowed); must succeed. */
static json_t *check_ok(const json_t *level, double lap, const char *splits)
{
	json_t *body = json_pack("{s:O, s:f}", "level", level, "lap_time", lap);
	if (splits)
		json_object_set_new(body, "checkpoints", parse(splits));
	sf_err err = { 0 };
	json_t *res = run_check(body, &err);
	if (!res)
		fail_msg("lap %.17g refused: %s", lap, err.msg);
	return res;
}

static json_int_t stars_of(const json_t *res)
{
	const json_t *v = json_object_get(res, "stars");
	if (!json_is_integer(v))
		fail_msg("stars is not an integer");
	return json_integer_value(v);
}

/* The hand-made level: every verdict worked out in the header comment. */
static void test_hand_made(void **state)
{
	(void)state;
	json_t *level = parse(HAND_LEVEL);
	const struct {
		double lap;
		int stars;
		double next; /* next_star_at, 0 for null */
	} laps[] = {
		{ 45.0, 0, 30.0 }, { 30.06, 0, 30.0 }, { 30.05, 0, 30.0 }, { 30.049, 1, 28.5 },
		{ 30.0, 1, 28.5 }, { 29.9, 1, 28.5 },  { 28.55, 1, 28.5 }, { 28.54, 2, 27.2 },
		{ 28.5, 2, 27.2 }, { 27.3, 2, 27.2 },  { 27.25, 2, 27.2 }, { 27.249, 3, 0 },
		{ 27.2, 3, 0 },    { 27.15, 3, 0 },    { 10.0, 3, 0 },
	};
	for (size_t i = 0; i < sizeof laps / sizeof laps[0]; i++) {
		json_t *res = check_ok(level, laps[i].lap, NULL);
		if (stars_of(res) != laps[i].stars)
			fail_msg("lap %g: %lld stars, expected %d", laps[i].lap,
				 (long long)stars_of(res), laps[i].stars);
		assert_true(json_is_true(json_object_get(res, "valid")));
		assert_string_equal(json_string_value(json_object_get(res, "kind")), "racetrack");
		assert_true(json_number_value(json_object_get(res, "lap_time")) == laps[i].lap);
		const json_t *next = json_object_get(res, "next_star_at");
		if (laps[i].next == 0)
			assert_true(json_is_null(next));
		else
			assert_true(json_number_value(next) == laps[i].next);
		assert_true(json_number_value(json_object_get(res, "min_lap_time")) == 10.0);
		assert_true(json_number_value(json_object_get(res, "length")) == 600.0);
		assert_null(json_object_get(res, "reason"));
		assert_null(json_object_get(res, "segments"));
		const json_t *t = json_object_get(res, "thresholds");
		assert_int_equal(json_array_size(t), 3);
		assert_true(json_number_value(json_array_get(t, 1)) == 28.5);
		json_decref(res);
	}
	/* Faster than 600 m at 60 m/s: impossible, no stars. */
	json_t *res = check_ok(level, 9.99, NULL);
	assert_true(json_is_false(json_object_get(res, "valid")));
	assert_true(json_is_null(json_object_get(res, "stars")));
	assert_true(json_is_null(json_object_get(res, "next_star_at")));
	const char *reason = json_string_value(json_object_get(res, "reason"));
	assert_non_null(reason);
	assert_non_null(strstr(reason, "lap_time 9.99 s is faster than any lap can be"));
	json_decref(res);
	json_decref(level);
}

/* Splits: per segment times; one faster than its 200 m allows voids the lap. */
static void test_checkpoints(void **state)
{
	(void)state;
	json_t *level = parse(HAND_LEVEL);
	json_t *res = check_ok(level, 28.0, "[9.5, 19]");
	assert_true(json_is_true(json_object_get(res, "valid")));
	assert_int_equal(stars_of(res), 2);
	const json_t *segs = json_object_get(res, "segments");
	assert_int_equal(json_array_size(segs), 3);
	const double at[] = { 0, 9.5, 19 }, time[] = { 9.5, 9.5, 9 }, start[] = { 0, 200, 400 };
	for (size_t i = 0; i < 3; i++) {
		const json_t *s = json_array_get(segs, i);
		assert_int_equal(json_integer_value(json_object_get(s, "index")), i);
		assert_true(json_number_value(json_object_get(s, "start")) == start[i]);
		assert_true(json_number_value(json_object_get(s, "length")) == 200.0);
		assert_true(json_number_value(json_object_get(s, "at")) == at[i]);
		assert_true(json_number_value(json_object_get(s, "time")) == time[i]);
		assert_true(json_number_value(json_object_get(s, "min_time")) == 200.0 / 60.0);
	}
	json_decref(res);
	/* A null checkpoints is none. */
	res = check_ok(level, 28.0, "null");
	assert_null(json_object_get(res, "segments"));
	json_decref(res);
	const struct {
		double lap;
		const char *splits;
		const char *reason;
	} fast[] = {
		{ 28.0, "[3, 19]", "segment 0, from the start to checkpoints[0]: 3 s for 200 m" },
		{ 28.0, "[9.5, 12]", "segment 1, from checkpoints[0] to checkpoints[1]: 2.5 s" },
		{ 20.0, "[9.5, 19]", "segment 2, from checkpoints[1] to the finish: 1 s" },
		/* The lap's own bound is reported first. */
		{ 9.0, "[3, 6]", "lap_time 9 s is faster than any lap can be" },
	};
	for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++) {
		res = check_ok(level, fast[i].lap, fast[i].splits);
		assert_true(json_is_false(json_object_get(res, "valid")));
		assert_true(json_is_null(json_object_get(res, "stars")));
		const char *reason = json_string_value(json_object_get(res, "reason"));
		if (!reason || !strstr(reason, fast[i].reason))
			fail_msg("splits %s: reason '%s', expected '%s'", fast[i].splits,
				 reason ? reason : "(none)", fast[i].reason);
		assert_int_equal(json_array_size(json_object_get(res, "segments")), 3);
		json_decref(res);
	}
	json_decref(level);
}

/* A generated level: its own thresholds, its own player lap. */
static void test_generated(void **state)
{
	(void)state;
	const json_t *levels = json_object_get(generated, "levels");
	assert_true(json_array_size(levels) >= 1);
	for (size_t l = 0; l < json_array_size(levels); l++) {
		const json_t *lv = json_array_get(levels, l);
		const json_t *th = json_object_get(json_object_get(lv, "stars"), "thresholds");
		double t[3];
		for (int i = 0; i < 3; i++)
			t[i] = json_number_value(json_array_get(th, (size_t)i));
		assert_true(t[0] > t[1] && t[1] > t[2]);
		for (int i = 0; i < 3; i++) {
			/* At the threshold and 0.04 s over (the same tenth): i + 1 stars;
			 * 0.06 s over rounds to the next tenth: i stars (the next
			 * threshold is at least a tenth faster). */
			json_t *at = check_ok(lv, t[i], NULL),
			       *over = check_ok(lv, t[i] + 0.04, NULL);
			json_t *out = check_ok(lv, t[i] + 0.06, NULL);
			assert_int_equal(stars_of(at), i + 1);
			assert_int_equal(stars_of(over), i + 1);
			assert_int_equal(stars_of(out), i);
			/* Just under: at least i + 1, more only when it reaches the next. */
			json_t *under = check_ok(lv, t[i] - 0.01, NULL);
			assert_int_equal(stars_of(under), i + 1);
			assert_true(json_number_value(json_object_get(out, "next_star_at")) ==
				    t[i]);
			json_decref(at);
			json_decref(over);
			json_decref(out);
			json_decref(under);
		}
		/* The player's simulated lap earns what the search recorded. */
		const json_t *lap = json_object_get(json_object_get(lv, "solution"), "player_lap");
		if (json_is_true(json_object_get(lap, "finished"))) {
			json_t *res =
				check_ok(lv, json_number_value(json_object_get(lap, "time")), NULL);
			assert_int_equal(stars_of(res),
					 json_integer_value(json_object_get(lap, "stars")));
			json_decref(res);
		}
		/* Splits at each segment's share of the lap are plausible. */
		const json_t *puzzle = json_object_get(lv, "puzzle");
		const json_t *segs = json_object_get(puzzle, "segments");
		double length = json_number_value(json_object_get(puzzle, "length"));
		json_t *splits = json_array();
		for (size_t i = 1; i < json_array_size(segs); i++)
			json_array_append_new(splits,
					      json_real(t[1] *
							json_number_value(json_object_get(
								json_array_get(segs, i), "start")) /
							length));
		char *text = json_dumps(splits, JSON_COMPACT);
		json_decref(splits);
		json_t *res = check_ok(lv, t[1], text);
		free(text);
		assert_true(json_is_true(json_object_get(res, "valid")));
		assert_int_equal(stars_of(res), 2);
		assert_int_equal(json_array_size(json_object_get(res, "segments")),
				 json_array_size(segs));
		json_decref(res);
		/* The spline is not needed: a level without it gets the same answer. */
		json_t *slim = json_deep_copy(lv);
		json_object_del(json_object_get(slim, "puzzle"), "spline");
		json_t *a = check_ok(lv, t[0], NULL), *b = check_ok(slim, t[0], NULL);
		assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
		json_decref(slim);
	}
}

static void test_lap_stars(void **state)
{
	(void)state;
	const double t[3] = { 30.0, 28.5, 27.2 };
	assert_int_equal(trk_lap_stars(30.04, t), 1);
	assert_int_equal(trk_lap_stars(30.05, t), 0);
	assert_int_equal(trk_lap_stars(1e300, t), 0);
	assert_int_equal(trk_lap_stars(0.01, t), 3);
	assert_true(trk_lap_tenths(29.74) == 297.0);
	assert_true(trk_lap_tenths(29.75) == 298.0);
}

typedef struct bad_body {
	const char *body;  /* JSON text */
	const char *error; /* the message's start */
} bad_body;

#define WITH_LEVEL(rest) "{\"level\": " HAND_LEVEL rest "}"
#define LEVEL_WITH(stars, puzzle)                                                               \
	"{\"level\": {\"kind\": \"racetrack\", \"stars\": " stars ", \"puzzle\": " puzzle "}, " \
	"\"lap_time\": 29}"
#define GOOD_STARS "{\"thresholds\": [30, 28.5, 27.2]}"
#define GOOD_PUZZLE "{\"length\": 600, \"segments\": [{\"start\": 0}, {\"start\": 200}]}"

static void test_bad_bodies(void **state)
{
	(void)state;
	const bad_body cases[] = {
		{ "[]",
		  "body: must be an object with level, lap_time and checkpoints, not an array" },
		{ "3", "body: must be an object" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"score\": 3"), "body: unknown key \"score\"" },
		{ "{\"lap_time\": 29}", "level: must be an object" },
		{ "{\"level\": [], \"lap_time\": 29}", "level: must be an object" },
		{ "{\"level\": {\"kind\": \"digger\"}, \"lap_time\": 29}",
		  "level.kind: must be \"racetrack\", not \"digger\"" },
		{ "{\"level\": {\"kind\": 3}, \"lap_time\": 29}",
		  "level.kind: must be \"racetrack\", not an integer" },
		/* Just a puzzle: no thresholds to rate against. */
		{ "{\"level\": " GOOD_PUZZLE ", \"lap_time\": 29}", "level.stars: missing" },
		{ LEVEL_WITH("[30, 28, 27]", GOOD_PUZZLE), "level.stars: must be an object" },
		{ LEVEL_WITH("{\"thresholds\": null}", GOOD_PUZZLE),
		  "level.stars.thresholds: must be [one, two, three]" },
		{ LEVEL_WITH("{\"thresholds\": [30, 28]}", GOOD_PUZZLE),
		  "level.stars.thresholds: must be [one, two, three]" },
		{ LEVEL_WITH("{\"thresholds\": [27, 28.5, 30]}", GOOD_PUZZLE),
		  "level.stars.thresholds[1]: must be below level.stars.thresholds[0]" },
		{ LEVEL_WITH("{\"thresholds\": [30, 30, 27]}", GOOD_PUZZLE),
		  "level.stars.thresholds[1]: must be below" },
		{ LEVEL_WITH("{\"thresholds\": [30, 28, -1]}", GOOD_PUZZLE),
		  "level.stars.thresholds[2]: must be a finite number of seconds > 0" },
		{ LEVEL_WITH("{\"thresholds\": [30, \"28\", 27]}", GOOD_PUZZLE),
		  "level.stars.thresholds[1]: must be a finite number" },
		{ LEVEL_WITH("{\"better\": \"higher\", \"thresholds\": [30, 28, 27]}", GOOD_PUZZLE),
		  "level.stars.better: must be \"lower\"" },
		{ "{\"level\": {\"stars\": " GOOD_STARS "}, \"lap_time\": 29}",
		  "level.puzzle: must be the level's puzzle object, not missing" },
		{ LEVEL_WITH(GOOD_STARS, "{\"segments\": [{\"start\": 0}]}"),
		  "level.puzzle.length: must be a number of metres in (0, 10000]" },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": -5, \"segments\": [{\"start\": 0}]}"),
		  "level.puzzle.length: " },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 20000, \"segments\": [{\"start\": 0}]}"),
		  "level.puzzle.length: " },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 600}"),
		  "level.puzzle.segments: must be an array of 1..24 segments" },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 600, \"segments\": []}"),
		  "level.puzzle.segments: must be an array of 1..24 segments" },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 600, \"segments\": [{\"start\": 5}]}"),
		  "level.puzzle.segments[0].start: must be 0" },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 600, \"segments\": [{\"start\": 0}, {}]}"),
		  "level.puzzle.segments[1].start: must be a number of metres" },
		{ LEVEL_WITH(GOOD_STARS, "{\"length\": 600, \"segments\": [{\"start\": 0}, "
					 "{\"start\": 300}, {\"start\": 200}]}"),
		  "level.puzzle.segments[2].start: 200 m must be at or past" },
		{ LEVEL_WITH(GOOD_STARS,
			     "{\"length\": 600, \"segments\": [{\"start\": 0}, {\"start\": 600}]}"),
		  "level.puzzle.segments[1].start: 600 m must be at or past" },
		{ WITH_LEVEL(""),
		  "lap_time: must be a positive finite number of seconds, not missing" },
		{ WITH_LEVEL(", \"lap_time\": \"29\""),
		  "lap_time: must be a positive finite number of seconds, not a string" },
		{ WITH_LEVEL(", \"lap_time\": 0"),
		  "lap_time: must be a positive finite number of seconds, got 0" },
		{ WITH_LEVEL(", \"lap_time\": -3.5"),
		  "lap_time: must be a positive finite number of seconds, got -3.5" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [10]"),
		  "checkpoints: must be an array of 2 split times in seconds, one per segment "
		  "start after the first (the track has 3 segments), not one of another length" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": {}"),
		  "checkpoints: must be an array of 2 split times" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [0, 10]"),
		  "checkpoints[0]: must be a number of seconds above 0" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [20, 10]"),
		  "checkpoints[1]: must be a number of seconds above the previous split (20 s)" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [10, 10]"), "checkpoints[1]: " },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [10, 29]"),
		  "checkpoints[1]: must be a number of seconds above the previous split (10 s) and "
		  "below lap_time (29 s)" },
		{ WITH_LEVEL(", \"lap_time\": 29, \"checkpoints\": [10, \"x\"]"),
		  "checkpoints[1]: " },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sf_err err = { 0 };
		json_t *res = run_check(parse(cases[i].body), &err);
		if (res)
			fail_msg("case %zu accepted: %s", i, cases[i].body);
		assert_int_equal(err.code, SF_EINVAL);
		if (strncmp(err.msg, cases[i].error, strlen(cases[i].error)))
			fail_msg("case %zu: message '%s' does not start with '%s'", i, err.msg,
				 cases[i].error);
	}
	/* The level as GET /v1/levels/{id} answers it, every key, is no problem. */
	json_t *lv = json_array_get(json_object_get(generated, "levels"), 0);
	json_t *res = check_ok(lv, 1000.0, NULL);
	assert_int_equal(stars_of(res), 0);
	json_decref(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lap_stars),   cmocka_unit_test(test_hand_made),
		cmocka_unit_test(test_checkpoints), cmocka_unit_test(test_generated),
		cmocka_unit_test(test_bad_bodies),
	};
	return cmocka_run_group_tests(tests, make_level, free_level);
}
