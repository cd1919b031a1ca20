/*
 * test_generate.c - `starforge generate`, the real binary run as a child
 * process (its absolute path comes from STARFORGE_BIN; make test sets it;
 * spawn.h runs it).
 *
 * Expected numbers are published ones (walk counts, the paper's maximum of
 * 10 distinct scores at length 16), worked out by hand in the comments, or
 * recomputed here by brute force through the direct enumerator of libcore;
 * folds the binary prints are re-scored by an independent walker. Nothing is
 * compared with the binary's own earlier output except to show that two runs
 * agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lattice/lattice.h"
#include "spawn.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- reading the result ---- */

static json_t *get_obj(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_object(v))
		fail_msg("\"%s\" is missing or not an object", key);
	return v;
}

static json_t *get_arr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_array(v))
		fail_msg("\"%s\" is missing or not an array", key);
	return v;
}

static double get_num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_number(v))
		fail_msg("\"%s\" is missing or not a number", key);
	return json_number_value(v);
}

/* `obj` has exactly the keys `keys` (NULL-terminated), no more, no fewer. */
static void expect_keys(json_t *obj, const char *const *keys, const char *what)
{
	size_t n = 0;
	for (; keys[n]; n++)
		if (!json_object_get(obj, keys[n]))
			fail_msg("%s has no key \"%s\"", what, keys[n]);
	if (json_object_size(obj) != n) {
		const char *k;
		json_t *v;
		json_object_foreach(obj, k, v)
		{
			int known = 0;
			for (size_t i = 0; i < n; i++)
				known |= !strcmp(k, keys[i]);
			if (!known)
				fail_msg("%s has an unexpected key \"%s\"", what, k);
		}
	}
}

static const char *const result_keys[] = { "kind",   "seed",        "params",
					   "status", "evaluations", "generations_run",
					   "levels", "series",      NULL };
static const char *const level_keys[] = { "id",       "kind",  "seed",  "params", "puzzle",
					  "solution", "stars", "stats", NULL };

/*
 * One level of the result, checked on its own terms: the envelope keys; the
 * sequence (canonical: its H = 1, P = 0 bytes no larger than its reverse's);
 * the histogram summing to the published symmetry-reduced count; the best
 * fold and the band folds re-scored independently; thresholds strictly
 * increasing, reachable, the three-star one at the best score; the fitness
 * (distinct_scores) equal to the number of reachable scores.
 */
static void check_level(json_t *lv, long long seed, int len, long long conformations)
{
	expect_keys(lv, level_keys, "level");
	assert_string_equal(get_str(lv, "kind"), "lattice");
	assert_int_equal(get_int(lv, "seed"), seed);
	const char *id = get_str(lv, "id");
	assert_int_equal(strlen(id), 36);
	assert_memory_equal(id, "lat_", 4);

	json_t *puzzle = get_obj(lv, "puzzle");
	assert_string_equal(get_str(puzzle, "lattice"), "square");
	assert_int_equal(get_int(puzzle, "length"), len);
	const char *seq = get_str(puzzle, "sequence");
	assert_int_equal(strlen(seq), len);
	for (int i = 0; i < len; i++) {
		assert_true(seq[i] == 'H' || seq[i] == 'P');
		int a = seq[i] == 'H', b = seq[len - 1 - i] == 'H';
		if (a != b) {
			assert_true(a < b); /* canonical orientation */
			break;
		}
	}

	json_t *stats = get_obj(lv, "stats");
	json_t *hist = get_arr(stats, "histogram");
	long long sum = 0;
	int distinct = 0, n = (int)json_array_size(hist);
	for (int s = 0; s < n; s++) {
		json_int_t c = json_integer_value(json_array_get(hist, (size_t)s));
		assert_true(c >= 0);
		sum += c;
		distinct += c > 0;
	}
	assert_int_equal(sum, conformations);
	assert_int_equal(get_int(stats, "conformations"), conformations);
	assert_int_equal(get_int(stats, "max_score"), n - 1);
	json_t *fit = get_obj(stats, "fitness");
	assert_string_equal(get_str(fit, "name"), "distinct_scores");
	assert_true(get_num(fit, "value") == distinct);

	json_t *sol = get_obj(lv, "solution");
	assert_int_equal(get_int(sol, "best_score"), n - 1);
	assert_int_equal(score_fold(seq, get_str(sol, "best_fold"), 0), n - 1);
	json_t *stars = get_obj(lv, "stars");
	json_t *t = get_arr(stars, "thresholds");
	assert_int_equal(json_array_size(t), 3);
	static const char *const bands[] = { "one", "two", "three" };
	json_t *folds = get_obj(sol, "band_folds");
	int prev = -1;
	for (int k = 0; k < 3; k++) {
		int th = (int)json_integer_value(json_array_get(t, (size_t)k));
		assert_true(th > prev);
		assert_true(th < n && json_integer_value(json_array_get(hist, (size_t)th)) > 0);
		assert_int_equal(score_fold(seq, get_str(folds, bands[k]), 0), th);
		prev = th;
	}
	assert_int_equal(prev, n - 1);
}

/* ---- generate: results ---- */

/*
 * The paper's defaults: length 16, square, GA, population 30, 50
 * generations. 802075 conformations (OEIS A046171, n = 15); at most 10
 * distinct scores at length 16 (published); the series has 50 generations,
 * its best never falls (one elite) and ends at the level's fitness.
 */
static void test_generate_default(void **state)
{
	(void)state;
	run_result res;
	RUN(&res, "generate", "lattice", "--seed", "42");
	json_t *doc = expect_json(&res);
	expect_keys(doc, result_keys, "result");
	assert_string_equal(get_str(doc, "kind"), "lattice");
	assert_int_equal(get_int(doc, "seed"), 42);
	assert_string_equal(get_str(doc, "status"), "completed");
	assert_int_equal(get_int(doc, "generations_run"), 50);
	json_int_t evals = get_int(doc, "evaluations");
	assert_true(evals >= 30 && evals <= 30 * 50);

	json_t *params = get_obj(doc, "params");
	assert_int_equal(get_int(params, "length"), 16);
	assert_string_equal(get_str(params, "lattice"), "square");
	assert_string_equal(get_str(params, "algorithm"), "ga");
	assert_string_equal(get_str(params, "fitness"), "distinct_scores");
	assert_int_equal(get_int(params, "population"), 30);
	assert_int_equal(get_int(params, "generations"), 50);
	assert_true(get_num(params, "mutation_rate") == 0.1);
	assert_int_equal(get_int(params, "elites"), 1);
	assert_int_equal(get_int(params, "count"), 1);
	assert_string_equal(get_str(params, "stars"), "paper");

	json_t *levels = get_arr(doc, "levels");
	assert_int_equal(json_array_size(levels), 1);
	json_t *lv = json_array_get(levels, 0);
	check_level(lv, 42, 16, 802075);
	assert_true(json_equal(get_obj(lv, "params"), params));
	double fitness = get_num(get_obj(get_obj(lv, "stats"), "fitness"), "value");
	assert_true(fitness <= 10);

	json_t *series = get_arr(doc, "series");
	assert_int_equal(json_array_size(series), 50);
	double best = -1;
	for (int g = 0; g < 50; g++) {
		json_t *gen = json_array_get(series, (size_t)g);
		assert_int_equal(get_int(gen, "generation"), g + 1);
		double b = get_num(gen, "best");
		assert_true(b >= best);
		assert_true(get_num(gen, "mean") <= b);
		best = b;
	}
	assert_true(best == fitness);
	assert_int_equal(get_int(json_array_get(series, 49), "evaluations"), evals);
	json_decref(doc);
	run_free(&res);
}

static void test_generate_repeatable(void **state)
{
	(void)state;
	static const char *const plain[] = { "generate", "lattice", "--seed", "42", NULL };
	expect_same_stdout(plain, plain);
	static const char *const t1[] = { "generate",  "lattice", "--seed", "42",
					  "--threads", "1",       NULL };
	static const char *const t2[] = { "generate", "lattice", "--seed=42", "--threads=2", NULL };
	expect_same_stdout(t1, t2);
	expect_same_stdout(plain, t1);
	static const char *const m1[] = {
		"generate",
		"lattice",
		"--threads",
		"1",
		"--seed",
		"7",
		"--params",
		"{\"algorithm\":\"map_elites\",\"fitness\":\"rare_optimum\",\"length\":12}",
		NULL
	};
	static const char *const m2[] = {
		"generate",
		"--params",
		"{\"length\":12,\"fitness\":\"rare_optimum\",\"algorithm\":\"map_elites\"}",
		"--threads",
		"2",
		"lattice",
		"--seed",
		"7",
		NULL
	};
	expect_same_stdout(m1, m2);

	/* Another seed: another run. */
	run_result a, b;
	RUN(&a, "generate", "lattice", "--seed", "1");
	RUN(&b, "generate", "lattice", "--seed", "2");
	json_t *da = expect_json(&a), *db = expect_json(&b);
	assert_int_equal(get_int(da, "seed"), 1);
	assert_int_equal(get_int(db, "seed"), 2);
	assert_false(json_equal(json_object_get(da, "series"), json_object_get(db, "series")));
	json_decref(da);
	json_decref(db);
	run_free(&a);
	run_free(&b);
}

/* --progress: one stderr line per generation (50 by default), stdout unchanged. */
static void test_generate_progress(void **state)
{
	(void)state;
	run_result plain, prog;
	RUN(&plain, "generate", "lattice", "--seed", "3");
	RUN(&prog, "generate", "lattice", "--seed", "3", "--progress");
	assert_int_equal(prog.status, 0);
	assert_string_equal(prog.out, plain.out);
	assert_int_equal(count_char(prog.out, '\n'), 1);
	assert_int_equal(count_char(prog.err, '\n'), 50);
	assert_true(prog.err_len > 0 && prog.err[prog.err_len - 1] == '\n');
	const char *line = prog.err;
	for (int g = 1; g <= 50; g++) {
		char want[32];
		snprintf(want, sizeof want, "generation %d/50", g);
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("progress line %d does not start with '%s': %.60s", g, want, line);
		line = strchr(line, '\n') + 1;
	}
	run_free(&plain);
	run_free(&prog);
}

/*
 * Exhaustive at length 10: every canonical sequence, 2^9 + 2^4 = 528 (a
 * sequence and its reverse are one puzzle; 32 palindromes count once), in
 * 64 chunks. The level is the brute-force best: the most distinct scores
 * (counted here with the direct enumerator over all 1024 sequences), ties
 * to the smallest H = 1, P = 0 byte string among canonical sequences. Each
 * has 2034 conformations (OEIS A046171, n = 9).
 */
static void test_generate_exhaustive(void **state)
{
	(void)state;
	int best = -1;
	uint8_t best_g[10] = { 0 };
	lat_result *r = malloc(sizeof *r);
	assert_non_null(r);
	for (unsigned k = 0; k < 1024; k++) {
		lat_seq s;
		memset(&s, 0, sizeof s);
		s.len = 10;
		for (int i = 0; i < 10; i++)
			s.h[i] = (uint8_t)(k >> i & 1);
		uint8_t rev[10];
		for (int i = 0; i < 10; i++)
			rev[i] = s.h[9 - i];
		if (memcmp(s.h, rev, 10) > 0)
			continue;
		lat_opts o = { .threads = 1, .budget = 0 };
		sf_err err = { 0 };
		if (lat_enumerate(LAT_SQUARE, &s, &o, r, &err))
			fail_msg("lat_enumerate: %s", err.msg);
		if (r->distinct_scores > best ||
		    (r->distinct_scores == best && memcmp(s.h, best_g, 10) < 0)) {
			best = r->distinct_scores;
			memcpy(best_g, s.h, 10);
		}
	}
	free(r);
	char want[11];
	for (int i = 0; i < 10; i++)
		want[i] = best_g[i] ? 'H' : 'P';
	want[10] = '\0';

	run_result res;
	RUN(&res, "generate", "lattice", "--seed", "0", "--params",
	    "{\"algorithm\": \"exhaustive\", \"length\": 10}");
	json_t *doc = expect_json(&res);
	expect_keys(doc, result_keys, "result");
	assert_int_equal(get_int(doc, "seed"), 0);
	assert_string_equal(get_str(doc, "status"), "completed");
	assert_int_equal(get_int(doc, "evaluations"), 528);
	assert_int_equal(get_int(doc, "generations_run"), 64);
	assert_int_equal(json_array_size(get_arr(doc, "series")), 64);
	json_t *params = get_obj(doc, "params");
	assert_string_equal(get_str(params, "algorithm"), "exhaustive");
	assert_int_equal(get_int(params, "length"), 10);
	json_t *levels = get_arr(doc, "levels");
	assert_int_equal(json_array_size(levels), 1);
	json_t *lv = json_array_get(levels, 0);
	check_level(lv, 0, 10, 2034);
	assert_string_equal(get_str(get_obj(lv, "puzzle"), "sequence"), want);
	assert_true(get_num(get_obj(get_obj(lv, "stats"), "fitness"), "value") == best);
	json_decref(doc);
	run_free(&res);
}

/* The largest seed that survives a double, 2^53 - 1, is accepted and echoed. */
static void test_generate_seed_range(void **state)
{
	(void)state;
	static const char *const seeds[] = { "0", "9007199254740991" };
	static const long long values[] = { 0, 9007199254740991LL };
	for (int i = 0; i < 2; i++) {
		run_result res;
		RUN(&res, "generate", "lattice", "--seed", seeds[i], "--params",
		    "{\"length\": 12, \"generations\": 2, \"population\": 10}");
		json_t *doc = expect_json(&res);
		assert_int_equal(get_int(doc, "seed"), values[i]);
		json_t *lv = json_array_get(get_arr(doc, "levels"), 0);
		assert_int_equal(get_int(lv, "seed"), values[i]);
		assert_int_equal(get_int(doc, "generations_run"), 2);
		json_decref(doc);
		run_free(&res);
	}
}

/* ---- generate: bad input ---- */

static void test_generate_bad_input(void **state)
{
	(void)state;
	static const bad_case cases[] = {
		{ { "generate", "lattice", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "-1", NULL }, { "--seed", "-1", NULL } },
		{ { "generate", "lattice", "--seed=-1", NULL }, { "--seed", "-1", NULL } },
		{ { "generate", "lattice", "--seed", "abc", NULL }, { "--seed", "abc", NULL } },
		{ { "generate", "lattice", "--seed", "", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "4.5", NULL }, { "4.5", NULL } },
		{ { "generate", "lattice", "--seed", "+5", NULL }, { "+5", NULL } },
		{ { "generate", "lattice", "--seed", " 5", NULL }, { "--seed", NULL } },
		{ { "generate", "lattice", "--seed", "42x", NULL }, { "42x", NULL } },
		{ { "generate", "lattice", "--seed", "9007199254740992", NULL },
		  { "9007199254740992", NULL } },
		{ { "generate", "lattice", "--seed", "18446744073709551616", NULL },
		  { "18446744073709551616", NULL } },
		{ { "generate", "tetris", "--seed", "1", NULL }, { "tetris", NULL } },
		{ { "generate", "--seed", "1", NULL }, { "kind", NULL } },
		{ { "generate", NULL }, { "kind", NULL } },
		{ { "generate", "lattice", "lattice", "--seed", "1", NULL }, { "lattice", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{length: 16", NULL },
		  { "--params", "JSON", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "", NULL },
		  { "--params", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "[]", NULL },
		  { "params", "object", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "16", NULL },
		  { "params", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"frobnicate\": 1}", NULL },
		  { "params.", "frobnicate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"length\": 65}", NULL },
		  { "params.", "length", "65" } },
		{ { "generate", "lattice", "--seed", "1", "--params",
		    "{\"length\": 21, \"method\": \"exact\"}", NULL },
		  { "params.", "length", "21" } },
		{ { "generate", "lattice", "--seed", "1", "--params",
		    "{\"lattice\": \"cubic\", \"length\": 49}", NULL },
		  { "params.", "length", "49" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"length\": \"16\"}",
		    NULL },
		  { "params.", "length", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"population\": 1}", NULL },
		  { "params.", "population", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"generations\": 0}",
		    NULL },
		  { "params.", "generations", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"mutation_rate\": 1.5}",
		    NULL },
		  { "params.", "mutation_rate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"count\": 0}", NULL },
		  { "params.", "count", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"fitness\": \"fun\"}",
		    NULL },
		  { "params.", "fitness", "fun" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"algorithm\": \"sa\"}",
		    NULL },
		  { "params.", "algorithm", "sa" } },
		{ { "generate", "lattice", "--seed", "1", "--params", "{\"lattice\": 2}", NULL },
		  { "params.", "lattice", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--params",
		    "{\"algorithm\": \"exhaustive\", \"length\": 19}", NULL },
		  { "params.", "length", "19" } },
		{ { "generate", "lattice", "--seed", "1", "--frobnicate", NULL },
		  { "--frobnicate", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--threads", "0", NULL },
		  { "--threads", NULL } },
		{ { "generate", "lattice", "--seed", "1", "--threads", "257", NULL },
		  { "--threads", "257", NULL } },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++)
		expect_usage_error(&cases[i], NAMES_ALL);
}

/* ---- help ---- */

static void test_generate_help(void **state)
{
	(void)state;
	static const char *const forms[][5] = {
		{ "generate", "--help", NULL },
		{ "generate", "-h", NULL },
		{ "generate", "lattice", "--seed", "1", "--help" },
	};
	for (int i = 0; i < ARRAY_LEN(forms); i++) {
		const char *args[6] = { 0 };
		for (int k = 0; k < 5 && forms[i][k]; k++)
			args[k] = forms[i][k];
		run_result res;
		run_args(&res, args);
		if (res.status != 0)
			fail_msg("generate --help: exit %d; stderr: %s", res.status, res.err);
		assert_int_equal(res.err_len, 0);
		assert_non_null(strstr(res.out, "usage"));
		assert_non_null(strstr(res.out, "generate"));
		assert_non_null(strstr(res.out, "--seed"));
		assert_non_null(strstr(res.out, "--params"));
		/* The kinds are listed: 'lattice' on a line of its own. */
		assert_non_null(strstr(res.out, "\n  lattice "));
		run_free(&res);
	}
	/* And the top-level help names the command. */
	run_result res;
	RUN(&res, "--help");
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.out, "generate"));
	run_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_default),
		cmocka_unit_test(test_generate_repeatable),
		cmocka_unit_test(test_generate_progress),
		cmocka_unit_test(test_generate_exhaustive),
		cmocka_unit_test(test_generate_seed_range),
		cmocka_unit_test(test_generate_bad_input),
		cmocka_unit_test(test_generate_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
