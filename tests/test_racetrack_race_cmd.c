/*
 * test_racetrack_race_cmd.c - `starforge race`, the real binary run as a
 * child process (STARFORGE_BIN, as make test sets it; spawn.h runs it).
 *
 * Oracles: the level itself and core/racetrack/fitness.h. A small
 * `starforge generate racetrack` result is written to a file; raced on its
 * own seeds (no --race-seed) the command must print every segment's
 * simulated_px and simulated_px_sd and the level's error exactly, through
 * stdin, a FILE argument, --level and a single level document alike; with
 * --race-seed S its seeds must be trk_heldout_seeds(S, N) and its error the
 * mean of the |target - PX| it prints. Bad input (not JSON, another kind,
 * no puzzle, a damaged puzzle, --races out of 1..64, unknown flags, an
 * uploaded model without --px-model) must exit 2 with one line naming the
 * problem and nothing on stdout.
 *
 * Run from the repository root (make test does), where data/px/ lies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "racetrack/fitness.h"
#include "spawn.h"

#define PARAMS                                                                                  \
	"{\"population\": 6, \"generations\": 2, \"races_per_genome\": 5, \"level_races\": 5, " \
	"\"star_seeds\": 1, "                                                                   \
	"\"count\": 2, \"player_skill\": 0.6}"

/* Temporary files, removed at the end. */
static char result_path[] = "/tmp/starforge-race-XXXXXX";
static char scratch_path[] = "/tmp/starforge-race-in-XXXXXX";
static json_t *result; /* the generate result in result_path */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fail_msg("cannot write %s", path);
}

/* Writes `doc` (compact, as the CLI prints) to the scratch file and returns its path. */
static const char *scratch(const json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_non_null(text);
	write_file(scratch_path, text);
	free(text);
	return scratch_path;
}

static int setup(void **state)
{
	(void)state;
	int fd = mkstemp(result_path), fd2 = mkstemp(scratch_path);
	if (fd < 0 || fd2 < 0)
		return -1;
	close(fd);
	close(fd2);
	run_result res;
	RUN(&res, "generate", "racetrack", "--seed", "9", "--params", PARAMS);
	if (res.status != 0) {
		fprintf(stderr, "generate failed: %s\n", res.err);
		return -1;
	}
	write_file(result_path, res.out);
	json_error_t jerr;
	result = json_loads(res.out, 0, &jerr);
	run_free(&res);
	return result && json_array_size(json_object_get(result, "levels")) == 2 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(result);
	unlink(result_path);
	unlink(scratch_path);
	return 0;
}

static json_t *level_at(size_t i)
{
	return json_array_get(json_object_get(result, "levels"), i);
}

static double num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_number(v))
		fail_msg("\"%s\" is missing or not a number", key);
	return json_number_value(v);
}

/* The race output reproduces level `lv` exactly: its seeds, PX, spread and error. */
static void expect_own_px(json_t *out, const json_t *lv)
{
	const json_t *stats = json_object_get(lv, "stats");
	const json_t *seeds = json_object_get(stats, "race_seeds");
	assert_int_equal(get_int(out, "races"), 5);
	assert_true(json_equal(json_object_get(out, "race_seeds"), (json_t *)seeds));
	assert_string_equal(get_str(out, "level_id"), json_string_value(json_object_get(lv, "id")));
	const json_t *want = json_object_get(json_object_get(lv, "puzzle"), "segments");
	const json_t *got = json_object_get(out, "segments");
	assert_int_equal(json_array_size(got), json_array_size(want));
	for (size_t i = 0; i < json_array_size(want); i++) {
		const json_t *g = json_array_get(got, i), *w = json_array_get(want, i);
		assert_int_equal(json_integer_value(json_object_get(g, "index")), i);
		if (num(g, "simulated_px") != num(w, "simulated_px") ||
		    num(g, "simulated_px_sd") != num(w, "simulated_px_sd") ||
		    num(g, "target") != num(w, "target_px"))
			fail_msg("segment %zu: %.17g +- %.17g (target %.17g), the level has %.17g "
				 "+- "
				 "%.17g (target %.17g)",
				 i, num(g, "simulated_px"), num(g, "simulated_px_sd"),
				 num(g, "target"), num(w, "simulated_px"),
				 num(w, "simulated_px_sd"), num(w, "target_px"));
	}
	double level_error = -num(json_object_get(stats, "fitness"), "value");
	assert_true(num(out, "error") == level_error);
	assert_true(num(out, "level_error") == level_error);
	assert_true(num(out, "ratio") == 1.0);
}

/* No --race-seed: the level's own races, its PX exactly, by every way in. */
static void test_own_seeds(void **state)
{
	(void)state;
	run_result res;
	run_args_in(&res, (const char *const[]){ "race", NULL }, result_path);
	json_t *out = expect_json(&res);
	expect_own_px(out, level_at(0));
	json_decref(out);
	/* The same bytes again, and from a FILE argument. */
	run_result again;
	RUN(&again, "race", result_path);
	assert_string_equal(again.out, res.out);
	run_free(&again);
	run_free(&res);

	RUN(&res, "race", "--level", "1", result_path);
	out = expect_json(&res);
	expect_own_px(out, level_at(1));
	json_decref(out);
	run_free(&res);

	/* A single level document (as GET /v1/levels/{id} answers it), on stdin. */
	run_args_in(&res, (const char *const[]){ "race", NULL }, scratch(level_at(1)));
	out = expect_json(&res);
	expect_own_px(out, level_at(1));
	json_decref(out);
	run_free(&res);
}

/* --race-seed: held-out seeds, N of them (default 30). */
static void test_heldout(void **state)
{
	(void)state;
	uint64_t want[30];
	trk_heldout_seeds(5, 30, want);
	const struct {
		const char *races; /* NULL: the default */
		size_t n;
	} runs[] = { { "7", 7 }, { NULL, 30 }, { "1", 1 } };
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		run_result res;
		if (runs[r].races)
			RUN(&res, "race", "--race-seed", "5", "--races", runs[r].races,
			    result_path);
		else
			RUN(&res, "race", "--race-seed=5", result_path);
		json_t *out = expect_json(&res);
		assert_int_equal(get_int(out, "races"), runs[r].n);
		const json_t *seeds = json_object_get(out, "race_seeds");
		assert_int_equal(json_array_size(seeds), runs[r].n);
		for (size_t k = 0; k < runs[r].n; k++)
			assert_true((uint64_t)json_integer_value(json_array_get(seeds, k)) ==
				    want[k]);
		/* The error is the mean |target - PX| of what it prints. */
		const json_t *segs = json_object_get(out, "segments");
		double sum = 0;
		for (size_t i = 0; i < json_array_size(segs); i++) {
			const json_t *s = json_array_get(segs, i);
			double px = num(s, "simulated_px"), sd = num(s, "simulated_px_sd");
			assert_true(px >= -1 && px <= 1 && sd >= 0 && sd <= 1);
			if (runs[r].n == 1)
				assert_true(sd == 0);
			sum += fabs(num(s, "target") - px);
		}
		double error = num(out, "error");
		assert_true(fabs(error - sum / (double)json_array_size(segs)) < 1e-12);
		double level_error = num(out, "level_error");
		assert_true(fabs(num(out, "ratio") - error / level_error) < 1e-12);
		/* Not the level's own races: another error. */
		assert_true(error !=
			    -num(json_object_get(json_object_get(level_at(0), "stats"), "fitness"),
				 "value"));
		json_decref(out);
		run_free(&res);
	}
}

/* An uploaded model's level races with its traces given by --px-model. */
static void test_px_model_file(void **state)
{
	(void)state;
	json_t *lv = json_deep_copy(level_at(0));
	json_object_set_new(json_object_get(lv, "params"), "px_model", json_string("june"));
	const char *path = scratch(lv);
	json_decref(lv);
	bad_case refused = { { "race", NULL },
			     { "px_model 'june'", "synthetic", "--px-model", NULL } };
	expect_usage_error_in(&refused, NAMES_ALL, path);
	run_result res;
	RUN(&res, "race", "--px-model", "data/px/synthetic.csv", path);
	json_t *out = expect_json(&res);
	assert_int_equal(get_int(out, "races"), 5);
	assert_int_equal(json_array_size(json_object_get(out, "segments")),
			 json_array_size(json_object_get(json_object_get(level_at(0), "puzzle"),
							 "segments")));
	json_decref(out);
	run_free(&res);
}

/*
 * A bad input document: `text` as it is, or else level 0 with the member
 * `key` of `section` (NULL: of the level) set to the JSON `value` (NULL:
 * removed).
 */
typedef struct bad_input {
	const char *text;
	const char *section, *key, *value;
	const char *names[3];
} bad_input;

/* Writes the case's document to the scratch file; returns its path. */
static const char *input_file(const bad_input *c)
{
	if (c->text) {
		write_file(scratch_path, c->text);
		return scratch_path;
	}
	json_t *lv = json_deep_copy(level_at(0));
	json_t *obj = c->section ? json_object_get(lv, c->section) : lv;
	if (c->value) {
		json_error_t jerr;
		json_t *v = json_loads(c->value, JSON_DECODE_ANY, &jerr);
		if (!v)
			fail_msg("bad test value %s", c->value);
		json_object_set_new(obj, c->key, v);
	} else {
		json_object_del(obj, c->key);
	}
	const char *path = scratch(lv);
	json_decref(lv);
	return path;
}

static void test_bad_input(void **state)
{
	(void)state;
	/* Bad command lines, the input a good generate result. */
	const bad_case args[] = {
		{ { "race", "--races", "0", "--race-seed", "1", NULL },
		  { "--races", "1..64", NULL } },
		{ { "race", "--race-seed", "1", "--races", "65", NULL },
		  { "--races", "1..64", NULL } },
		{ { "race", "--races", "x", NULL }, { "--races", NULL } },
		{ { "race", "--races", NULL }, { "--races needs a value", NULL } },
		{ { "race", "--races", "5", NULL }, { "--races needs --race-seed", NULL } },
		{ { "race", "--race-seed", "abc", NULL }, { "--race-seed 'abc'", NULL } },
		{ { "race", "--race-seed", "-1", NULL }, { "--race-seed '-1'", NULL } },
		{ { "race", "--race-seed", "9007199254740992", NULL }, { "--race-seed", NULL } },
		{ { "race", "--level", "2", NULL },
		  { "--level 2: the document has 2 levels", NULL } },
		{ { "race", "--level", "-1", NULL }, { "--level", NULL } },
		{ { "race", "--fast", NULL }, { "unknown option '--fast'", NULL } },
		{ { "race", "-x", NULL }, { "unknown option '-x'", NULL } },
		{ { "race", "a.json", "b.json", NULL }, { "one FILE at most", NULL } },
		{ { "race", "/nonexistent/level.json", NULL },
		  { "/nonexistent/level.json", NULL } },
		{ { "race", "--px-model", "/nonexistent.csv", NULL },
		  { "--px-model '/nonexistent.csv'", NULL } },
		{ { "race", "--px-model", "README.md", NULL }, { "--px-model 'README.md'", NULL } },
	};
	for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
		expect_usage_error_in(&args[i], NAMES_ALL, result_path);

	/* Bad documents on stdin. */
	const bad_input inputs[] = {
		{ "this is not JSON", NULL, NULL, NULL, { "stdin is not JSON", NULL } },
		{ "", NULL, NULL, NULL, { "stdin is not JSON", NULL } },
		{ "[1, 2]",
		  NULL,
		  NULL,
		  NULL,
		  { "not a racetrack level or a generate result", NULL } },
		{ "{\"levels\": []}",
		  NULL,
		  NULL,
		  NULL,
		  { "--level 0: the document has 0 levels", NULL } },
		{ "{\"kind\": \"digger\", \"puzzle\": {}}",
		  NULL,
		  NULL,
		  NULL,
		  { "kind is 'digger', not racetrack", NULL } },
		{ "{\"puzzle\": {}}",
		  NULL,
		  NULL,
		  NULL,
		  { "not a racetrack level (no kind)", NULL } },
		{ NULL, NULL, "puzzle", NULL, { "no puzzle", NULL } },
		{ NULL, NULL, "puzzle", "\"track\"", { "puzzle: must be an object", NULL } },
		{ NULL, "puzzle", "ds", "-2", { "puzzle.ds", NULL } },
		{ NULL, "puzzle", "segments", "[]", { "puzzle.segments", NULL } },
		{ NULL, "puzzle", "spline", "[[1, 2]]", { "puzzle.spline", NULL } },
		{ NULL, NULL, "stats", NULL, { "stats.race_seeds", "--race-seed", NULL } },
		{ NULL,
		  NULL,
		  "stats",
		  "{\"race_seeds\": [\"x\"]}",
		  { "stats.race_seeds[0]", NULL } },
		{ NULL, "params", "player_skill", "2.0", { "player_skill", NULL } },
		{ NULL, "params", "colour", "\"red\"", { "colour", NULL } },
	};
	for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		bad_case c = { { "race", NULL }, { NULL } };
		memcpy(c.names, inputs[i].names, sizeof inputs[i].names);
		expect_usage_error_in(&c, NAMES_ALL, input_file(&inputs[i]));
	}
	/* Nothing on stdin at all. */
	bad_case empty = { { "race", NULL }, { "stdin is not JSON", NULL } };
	expect_usage_error(&empty, NAMES_ALL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_seeds),
		cmocka_unit_test(test_heldout),
		cmocka_unit_test(test_px_model_file),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
