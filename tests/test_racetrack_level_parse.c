/*
 * test_racetrack_level_parse.c - a racetrack level's track read back from
 * its JSON (core/racetrack/level_parse.c), what `starforge race` races.
 *
 * Oracles: the search itself. Levels of a small search go through the text
 * the command line and the service write (sf_json_dumps) and back; the
 * track rebuilt from each puzzle must be the one trk_genome_track() builds
 * from the level's genome, bit for bit (samples, curvature, slope, segment
 * starts, ds, length, width), and racing it on the level's own race seeds
 * must give exactly the level's simulated_px, simulated_px_sd and fitness.
 * Then a table of damaged puzzles, each refused with SF_EINVAL and a
 * message that starts with the JSON path of the damage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "kinds.h"
#include "racetrack/fitness.h"
#include "racetrack/level_parse.h"
#include "racetrack/search.h"
#include "racetrack/track.h"
#include "racetrack_support.h"

/* Two levels of a small search, as read back from the text the CLI prints. */
static json_t *result;

static int make_levels(void **state)
{
	(void)state;
	json_t *doc = racetrack_generate(
		"{\"population\": 8, \"generations\": 3, "
		"\"races_per_genome\": 4, \"level_races\": 4, \"star_seeds\": 1, \"count\": 2}",
		11, 2);
	char *text = sf_json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return -1;
	json_error_t jerr;
	result = json_loads(text, 0, &jerr);
	free(text);
	return result ? 0 : -1;
}

static int free_levels(void **state)
{
	(void)state;
	json_decref(result);
	return 0;
}

static json_t *level_at(size_t i)
{
	json_t *lv = json_array_get(json_object_get(result, "levels"), i);
	assert_non_null(lv);
	return lv;
}

static trk_track *parse_ok(const json_t *puzzle)
{
	sf_err err = { 0 };
	trk_track *t = trk_puzzle_track(puzzle, "puzzle", &err);
	if (!t)
		fail_msg("the level's own puzzle is refused: %s", err.msg);
	return t;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The track the search built for the level: trk_genome_track of stats.genome. */
static trk_track *searched_track(const json_t *lv, trk_search_params *p)
{
	sf_err err = { 0 };
	if (trk_search_params_from_json(json_object_get(lv, "params"), p, &err))
		fail_msg("the level's params are refused: %s", err.msg);
	const char *hex =
		json_string_value(json_object_get(json_object_get(lv, "stats"), "genome"));
	assert_non_null(hex);
	size_t len = trk_genome_length(p);
	assert_int_equal(strlen(hex), 2 * len);
	uint8_t *genome = malloc(len);
	assert_non_null(genome);
	for (size_t i = 0; i < len; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
		assert_true(hi >= 0 && lo >= 0);
		genome[i] = (uint8_t)(hi << 4 | lo);
	}
	trk_track *t = trk_genome_track(p, genome, &err);
	free(genome);
	if (!t)
		fail_msg("the level's genome has no track: %s", err.msg);
	return t;
}

/* The rebuilt track is the searched one, every array bit for bit. */
static void test_same_track(void **state)
{
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const json_t *lv = level_at(i);
		trk_search_params p;
		trk_track *want = searched_track(lv, &p);
		trk_track *got = parse_ok(json_object_get(lv, "puzzle"));
		assert_int_equal(got->n, want->n);
		assert_int_equal(got->nsegments, want->nsegments);
		assert_memory_equal(&got->ds, &want->ds, sizeof got->ds);
		assert_memory_equal(&got->length, &want->length, sizeof got->length);
		assert_memory_equal(&got->width, &want->width, sizeof got->width);
		assert_memory_equal(got->samples, want->samples, got->n * sizeof *got->samples);
		assert_memory_equal(got->curvature, want->curvature,
				    got->n * sizeof *got->curvature);
		assert_memory_equal(got->slope, want->slope, got->n * sizeof *got->slope);
		assert_memory_equal(got->seg_start, want->seg_start,
				    got->nsegments * sizeof *got->seg_start);
		/* A track that turns both ways and climbs: the arrays mean something. */
		int left = 0, right = 0, climbs = 0;
		for (size_t k = 0; k < got->n; k++) {
			left |= got->curvature[k] > 0;
			right |= got->curvature[k] < 0;
			climbs |= got->slope[k] != 0;
		}
		assert_true(left && right && climbs);
		trk_track_free(got);
		trk_track_free(want);
	}
}

static double number_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_number(v))
		fail_msg("\"%s\" is missing or not a number", key);
	return json_number_value(v);
}

/* Raced on its own seeds, the rebuilt track gives the level's PX exactly. */
static void test_same_px(void **state)
{
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const json_t *lv = level_at(i);
		trk_search_params p;
		sf_err err = { 0 };
		assert_int_equal(
			trk_search_params_from_json(json_object_get(lv, "params"), &p, &err), 0);
		trk_track *t = parse_ok(json_object_get(lv, "puzzle"));
		const json_t *stats = json_object_get(lv, "stats");
		const json_t *js = json_object_get(stats, "race_seeds");
		size_t nseeds = json_array_size(js);
		assert_int_equal(nseeds, 4);
		uint64_t seeds[TRK_MAX_RACES];
		for (size_t k = 0; k < nseeds; k++)
			seeds[k] = (uint64_t)json_integer_value(json_array_get(js, k));
		trk_px_model *model = trk_search_model(&p, &err);
		assert_non_null(model);
		trk_race_params rp;
		trk_race_params_default(&rp);
		rp.player_skill = p.player_skill;
		trk_px_fit fit;
		assert_int_equal(trk_track_px(t, &rp, model, seeds, nseeds, p.target, p.ntarget,
					      &fit, NULL, &err),
				 0);
		const json_t *segs = json_object_get(json_object_get(lv, "puzzle"), "segments");
		assert_int_equal(fit.nsegments, json_array_size(segs));
		for (size_t s = 0; s < fit.nsegments; s++) {
			const json_t *seg = json_array_get(segs, s);
			assert_true(fit.mean[s] == number_at(seg, "simulated_px"));
			assert_true(fit.sd[s] == number_at(seg, "simulated_px_sd"));
			assert_true(fit.target[s] == number_at(seg, "target_px"));
		}
		assert_true(-fit.error == number_at(json_object_get(stats, "fitness"), "value"));
		trk_px_model_free(model);
		trk_track_free(t);
	}
}

/*
 * Sets the member at `path` ("spline/2/1": keys and array indices split by
 * '/') of `root` to the JSON `value`, or deletes it when value is NULL.
 */
static void set_path(json_t *root, const char *path, const char *value)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	json_t *cur = root;
	char *save = NULL, *part = strtok_r(buf, "/", &save);
	while (part) {
		char *next = strtok_r(NULL, "/", &save);
		int is_index = part[0] >= '0' && part[0] <= '9';
		size_t idx = (size_t)strtoul(part, NULL, 10);
		if (!next) {
			json_t *v = NULL;
			if (value) {
				json_error_t jerr;
				v = json_loads(value, JSON_DECODE_ANY, &jerr);
				if (!v)
					fail_msg("bad test value %s: %s", value, jerr.text);
			}
			int rc = is_index ? (v ? json_array_set_new(cur, idx, v)
					       : json_array_remove(cur, idx))
					  : (v ? json_object_set_new(cur, part, v)
					       : json_object_del(cur, part));
			if (rc)
				fail_msg("cannot set %s", path);
			return;
		}
		cur = is_index ? json_array_get(cur, idx) : json_object_get(cur, part);
		if (!cur)
			fail_msg("no %s in the puzzle", path);
		part = next;
	}
}

typedef struct bad_puzzle {
	const char *path;  /* what to change; "" for the whole puzzle */
	const char *value; /* its new JSON value, NULL to delete it */
	const char *error; /* the message's start */
} bad_puzzle;

static void test_bad_puzzles(void **state)
{
	(void)state;
	const json_t *puzzle = json_object_get(level_at(0), "puzzle");
	size_t n = json_array_size(json_object_get(puzzle, "spline"));
	size_t ns = json_array_size(json_object_get(puzzle, "segments"));
	json_int_t second = json_integer_value(json_object_get(
		json_array_get(json_object_get(puzzle, "segments"), 1), "start_sample"));
	char n_text[32], past_text[64], last_path[64], before_text[32];
	snprintf(n_text, sizeof n_text, "%zu", n + 1);
	snprintf(past_text, sizeof past_text, "%zu", n);
	snprintf(last_path, sizeof last_path, "segments/%zu/start_sample", ns - 1);
	snprintf(before_text, sizeof before_text, "%lld", (long long)second);
	const bad_puzzle cases[] = {
		{ "spline", NULL, "puzzle.spline: must be an array of 4..100000 samples" },
		{ "spline", "{}", "puzzle.spline: must be an array" },
		{ "spline", "[[0,0,0],[1,0,0],[1,1,0]]", "puzzle.spline: must be an array of 4.." },
		{ "spline/2", "[1, 2]", "puzzle.spline[2]: must be [x, y, z]" },
		{ "spline/5/1", "\"a\"", "puzzle.spline[5]: must be [x, y, z]" },
		{ "spline/7", "null", "puzzle.spline[7]: must be [x, y, z]" },
		{ "samples", n_text, "puzzle.samples: must be the number of samples" },
		{ "samples", "\"many\"", "puzzle.samples: must be the number of samples" },
		{ "ds", NULL, "puzzle.ds: must be a finite number > 0, not missing" },
		{ "ds", "0", "puzzle.ds: must be a finite number > 0, got 0" },
		{ "ds", "\"2\"", "puzzle.ds: must be a finite number > 0, not a string" },
		{ "ds", "1000.0", "puzzle: " }, /* over 10 km */
		{ "width", "-12", "puzzle.width: must be a finite number > 0, got -12" },
		{ "length", "123.5", "puzzle.length: must be samples x ds" },
		{ "segments", NULL, "puzzle.segments: must be an array of 1..24 segments" },
		{ "segments", "[]", "puzzle.segments: must be an array of 1..24 segments" },
		{ "segments/0/start_sample", "1", "puzzle.segments[0].start_sample: must be 0" },
		{ "segments/0/start_sample", NULL, "puzzle.segments[0].start_sample: must be 0" },
		{ "segments/2/start_sample", before_text, NULL }, /* equal to the previous: fine */
		{ "segments/2/start_sample", "0",
		  "puzzle.segments[2].start_sample: must be an integer" },
		{ last_path, past_text, "puzzle.segments[" },
		{ "segments/1/start_sample", "1.5",
		  "puzzle.segments[1].start_sample: must be an integer" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *copy = json_deep_copy(puzzle);
		set_path(copy, cases[i].path, cases[i].value);
		sf_err err = { 0 };
		trk_track *t = trk_puzzle_track(copy, "puzzle", &err);
		json_decref(copy);
		if (!cases[i].error) {
			if (!t)
				fail_msg("case %zu (%s): refused: %s", i, cases[i].path, err.msg);
			trk_track_free(t);
			continue;
		}
		if (t)
			fail_msg("case %zu (%s = %s) was accepted", i, cases[i].path,
				 cases[i].value ? cases[i].value : "(deleted)");
		assert_int_equal(err.code, SF_EINVAL);
		if (strncmp(err.msg, cases[i].error, strlen(cases[i].error)))
			fail_msg("case %zu (%s): message '%s' does not start with '%s'", i,
				 cases[i].path, err.msg, cases[i].error);
	}
	/* Not an object at all, or missing. */
	sf_err err = { 0 };
	json_t *arr = json_array();
	assert_null(trk_puzzle_track(arr, "level.puzzle", &err));
	assert_string_equal(
		err.msg,
		"level.puzzle: must be an object (a racetrack level's puzzle), not an array");
	json_decref(arr);
	assert_null(trk_puzzle_track(NULL, "puzzle", &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "not missing"));
}

/* A hand-made square: 4 samples, the curvature the builder's formula gives. */
static void test_small_square(void **state)
{
	(void)state;
	json_error_t jerr;
	json_t *puzzle =
		json_loads("{\"spline\": [[0,0,0],[10,0,1],[10,10,1],[0,10,0]], "
			   "\"ds\": 10, \"width\": 4, \"segments\": [{\"start_sample\": 0}, "
			   "{\"start_sample\": 2}]}",
			   0, &jerr);
	assert_non_null(puzzle);
	sf_err err = { 0 };
	trk_track *t = trk_puzzle_track(puzzle, "puzzle", &err);
	json_decref(puzzle);
	if (!t)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(t->n, 4);
	assert_true(t->length == 40.0);
	/* Each corner turns left by 90 degrees: 2 sin(90) / |c - a| = 2 / (10 sqrt 2). */
	for (size_t k = 0; k < 4; k++)
		assert_true(fabs(t->curvature[k] - 2.0 / (10.0 * 1.4142135623730951)) < 1e-12);
	assert_true(t->slope[0] == 0.1 && t->slope[1] == 0.0 && t->slope[2] == -0.1 &&
		    t->slope[3] == 0.0);
	assert_int_equal(t->nsegments, 2);
	assert_int_equal(t->seg_start[1], 2);
	trk_track_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_track),
		cmocka_unit_test(test_same_px),
		cmocka_unit_test(test_bad_puzzles),
		cmocka_unit_test(test_small_square),
	};
	return cmocka_run_group_tests(tests, make_levels, free_levels);
}
