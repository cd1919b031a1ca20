/*
 * test_cli.c - the real starforge binary, run as a child process.
 *
 * The binary's absolute path comes from STARFORGE_BIN (make test sets it);
 * spawn.h runs it and holds the independent walker that re-scores folds.
 * Expected numbers are published ones (walk counts, oracle histograms) or
 * worked out by hand in the comments; the example folds the binary prints are
 * re-scored here by an independent walker, never compared with its own output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../server/base/version.h"
#include "spawn.h"
#include "support.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- reading the result ---- */

static void expect_int_array(json_t *arr, const long long *want, int n, const char *what)
{
	if (!json_is_array(arr))
		fail_msg("%s is not an array", what);
	if ((int)json_array_size(arr) != n)
		fail_msg("%s has %d entries, expected %d", what, (int)json_array_size(arr), n);
	for (int i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, (size_t)i);
		if (!json_is_integer(v) || json_integer_value(v) != want[i])
			fail_msg("%s[%d] is not %lld", what, i, want[i]);
	}
}

static json_t *get_stars(json_t *doc, const char *strategy)
{
	json_t *stars = json_object_get(doc, "stars");
	if (!json_is_object(stars))
		fail_msg("\"stars\" is missing or not an object");
	assert_string_equal(get_str(stars, "strategy"), strategy);
	return stars;
}

static void expect_thresholds(json_t *doc, const char *strategy, int a, int b, int c)
{
	const long long want[3] = { a, b, c };
	expect_int_array(json_object_get(get_stars(doc, strategy), "thresholds"), want, 3,
			 "stars.thresholds");
}

/*
 * Consistency of one evaluation: histogram sums to `conformations` (when
 * given), max_score and distinct_scores agree with it, and the examples are
 * exactly one valid fold per reachable score, each re-scored independently.
 */
static void check_evaluation(json_t *doc, const char *seq, int cubic, long long conformations)
{
	assert_string_equal(get_str(doc, "sequence"), seq);
	assert_string_equal(get_str(doc, "lattice"), cubic ? "cubic" : "square");
	assert_int_equal(get_int(doc, "length"), strlen(seq));
	json_t *hist = json_object_get(doc, "histogram");
	assert_true(json_is_array(hist));
	int n = (int)json_array_size(hist);
	assert_true(n >= 1);
	long long sum = 0;
	int distinct = 0;
	for (int s = 0; s < n; s++) {
		json_t *v = json_array_get(hist, (size_t)s);
		assert_true(json_is_integer(v));
		assert_true(json_integer_value(v) >= 0);
		sum += json_integer_value(v);
		distinct += json_integer_value(v) > 0;
	}
	assert_true(json_integer_value(json_array_get(hist, (size_t)n - 1)) > 0);
	if (conformations >= 0)
		assert_int_equal(sum, conformations);
	assert_int_equal(get_int(doc, "conformations"), sum);
	assert_int_equal(get_int(doc, "max_score"), n - 1);
	assert_int_equal(get_int(doc, "distinct_scores"), distinct);

	json_t *examples = json_object_get(doc, "examples");
	assert_true(json_is_object(examples));
	assert_int_equal(json_object_size(examples), distinct);
	for (int s = 0; s < n; s++) {
		char key[16];
		snprintf(key, sizeof key, "%d", s);
		json_t *ex = json_object_get(examples, key);
		if (json_integer_value(json_array_get(hist, (size_t)s)) == 0) {
			if (ex)
				fail_msg("example for unreachable score %d", s);
			continue;
		}
		if (!json_is_string(ex))
			fail_msg("no example for reachable score %d", s);
		int got = score_fold(seq, json_string_value(ex), cubic);
		if (got != s)
			fail_msg("example '%s' for score %d scores %d", json_string_value(ex), s,
				 got);
	}
}

/* ---- evaluate: results ---- */

/*
 * HPHPPHHPHPPHPHHP: the oracle histogram {0: 426271, ..., 6: 3}; 802075
 * conformations (OEIS A046171, n = 15). Paper stars, max 6: one at the first
 * reachable score >= floor(6 / 2) = 3, two at 5, three at 6 -> [3, 5, 6].
 */
static void test_evaluate_reference(void **state)
{
	(void)state;
	static const long long hist[] = { 426271, 284100, 78625, 11592, 1378, 106, 3 };
	run_result res;
	RUN(&res, "evaluate", "HPHPPHHPHPPHPHHP");
	json_t *doc = expect_json(&res);
	check_evaluation(doc, "HPHPPHHPHPPHPHHP", 0, 802075);
	expect_int_array(json_object_get(doc, "histogram"), hist, 7, "histogram");
	assert_int_equal(get_int(doc, "conformations"), 802075);
	assert_int_equal(get_int(doc, "max_score"), 6);
	assert_int_equal(get_int(doc, "distinct_scores"), 7);
	json_t *examples = json_object_get(doc, "examples");
	for (int s = 0; s <= 6; s++) {
		char key[4] = { (char)('0' + s), 0 };
		assert_non_null(json_object_get(examples, key));
	}
	/* Depth-first with R tried first: the very first conformation is the
	 * straight rod, which has no contact. */
	assert_string_equal(get_str(examples, "0"), "RRRRRRRRRRRRRRR");
	json_t *stars = get_stars(doc, "paper");
	assert_string_equal(get_str(stars, "metric"), "contacts");
	assert_string_equal(get_str(stars, "better"), "higher");
	expect_thresholds(doc, "paper", 3, 5, 6);
	json_decref(doc);
	run_free(&res);
}

/*
 * The other strategies on the same histogram (tail shares out of 802075:
 * >=1 0.4685, >=2 0.1143, >=3 0.0163, >=4 0.00185, >=5 1.36e-4, >=6 3.7e-6).
 * percentile 0.5 / 0.1: one 1 (0.4685 <= 0.5), but a single contact is no
 * star when four or more scores above 0 are reachable (stars.h): 2; two 3
 * -> [2, 3, 6].
 * geometric: p^(1/3) = 0.01552 -> one 4; p^(2/3) = 2.41e-4 -> two 5 -> [4, 5, 6].
 */
static void test_evaluate_strategies(void **state)
{
	(void)state;
	run_result res;
	RUN(&res, "evaluate", "--stars", "percentile", "HPHPPHHPHPPHPHHP");
	json_t *doc = expect_json(&res);
	expect_thresholds(doc, "percentile", 2, 3, 6);
	json_t *fr = json_object_get(get_stars(doc, "percentile"), "fractions");
	assert_true(json_is_array(fr) && json_array_size(fr) == 2);
	assert_float_equal(json_number_value(json_array_get(fr, 0)), 0.5, 1e-12);
	assert_float_equal(json_number_value(json_array_get(fr, 1)), 0.1, 1e-12);
	json_decref(doc);
	run_free(&res);

	RUN(&res, "evaluate", "--stars=geometric", "HPHPPHHPHPPHPHHP");
	doc = expect_json(&res);
	expect_thresholds(doc, "geometric", 4, 5, 6);
	json_decref(doc);
	run_free(&res);
}

/*
 * Cubic all-H, L = 8 (n = 7 bonds). Symmetry-reduced count from the walk
 * counts: c_7 = 81390 (cubic), 2172 (square). One rod (6 images); planar
 * non-rod walks 3 * (2172 - 4) = 6504, 24 images each -> 271; non-planar
 * (81390 - 6 - 6504) / 48 = 1560 -> 1 + 271 + 1560 = 1832 conformations.
 * Reachable scores: as for all walks {0, 1, 2, 3, 5} (no 4). Score 5 needs
 * the 2x2x2 cube (12 edges - 7 bonds = 5 contacts): its 144 directed
 * Hamiltonian paths are all non-planar, so 144 / 48 = 3 reduced ones.
 * Paper stars: floor(5 / 2) = 2 -> one at 2, two at 3 (below 5), three at 5.
 */
static void test_evaluate_cubic(void **state)
{
	(void)state;
	run_result res;
	RUN(&res, "evaluate", "--lattice", "cubic", "HHHHHHHH");
	json_t *doc = expect_json(&res);
	check_evaluation(doc, "HHHHHHHH", 1, 1832);
	json_t *hist = json_object_get(doc, "histogram");
	assert_int_equal(json_array_size(hist), 6);
	assert_int_equal(json_integer_value(json_array_get(hist, 4)), 0);
	assert_int_equal(json_integer_value(json_array_get(hist, 5)), 3);
	assert_int_equal(get_int(doc, "max_score"), 5);
	assert_int_equal(get_int(doc, "distinct_scores"), 5);
	assert_null(json_object_get(json_object_get(doc, "examples"), "4"));
	expect_thresholds(doc, "paper", 2, 3, 5);
	json_decref(doc);
	run_free(&res);

	/* L = 10: 39640 conformations (LATTICE.md; the same computation with
	 * c_9 = 1853886 and 16268: 1 + 2033 + 37606). */
	RUN(&res, "evaluate", "--lattice=cubic", "HHHHHHHHHH");
	doc = expect_json(&res);
	check_evaluation(doc, "HHHHHHHHHH", 1, 39640);
	json_decref(doc);
	run_free(&res);
}

static void test_engine_cmap_identical(void **state)
{
	(void)state;
	static const char *const d1[] = { "evaluate", "HPHPPHHPHPPHPHHP", NULL };
	static const char *const c1[] = { "evaluate", "--engine", "cmap", "HPHPPHHPHPPHPHHP",
					  NULL };
	expect_same_stdout(d1, c1);
	static const char *const d2[] = { "evaluate", "--lattice", "cubic", "HPHHPPHHPH", NULL };
	static const char *const c2[] = { "evaluate",      "--lattice",  "cubic",
					  "--engine=cmap", "HPHHPPHHPH", NULL };
	expect_same_stdout(d2, c2);
	static const char *const d3[] = { "evaluate", "--engine", "direct", "HPHPPHHPHPPHPHHP",
					  NULL };
	expect_same_stdout(d1, d3);

	/* And the cmap result is the published one, not just the same. */
	run_result res;
	RUN(&res, "evaluate", "--engine", "cmap", "HPHPPHHPHPPHPHHP");
	json_t *doc = expect_json(&res);
	static const long long hist[] = { 426271, 284100, 78625, 11592, 1378, 106, 3 };
	expect_int_array(json_object_get(doc, "histogram"), hist, 7, "histogram");
	json_decref(doc);
	run_free(&res);
}

static void test_threads_identical(void **state)
{
	(void)state;
	static const char *const t1[] = { "evaluate", "--threads", "1", "HPHPPHHPHPPHPHHP", NULL };
	static const char *const t2[] = { "evaluate", "--threads", "2", "HPHPPHHPHPPHPHHP", NULL };
	static const char *const t7[] = { "evaluate", "--threads=7", "HPHPPHHPHPPHPHHP", NULL };
	expect_same_stdout(t1, t2);
	expect_same_stdout(t1, t7);
	static const char *const c1[] = { "evaluate", "--lattice",  "cubic", "--threads",
					  "1",        "HHPHPHHPHH", NULL };
	static const char *const c2[] = { "evaluate", "--lattice",  "cubic", "--threads",
					  "2",        "HHPHPHHPHH", NULL };
	expect_same_stdout(c1, c2);
}

/*
 * HPPH: the 5 reduced conformations of 4 residues are RRR, RRU, RUR, RUL and
 * RUU; only RUL brings residue 4 next to residue 1 -> histogram [4, 1]: one
 * reachable score above the lowest. PPPP: [5], none.
 */
static void test_too_few_scores(void **state)
{
	(void)state;
	static const struct {
		const char *seq;
		long long hist[2];
		int n, above;
	} cases[] = {
		{ "HPPH", { 4, 1 }, 2, 1 },
		{ "PPPP", { 5, 0 }, 1, 0 },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		run_result res;
		RUN(&res, "evaluate", cases[i].seq);
		json_t *doc = expect_json(&res);
		check_evaluation(doc, cases[i].seq, 0, 5);
		expect_int_array(json_object_get(doc, "histogram"), cases[i].hist, cases[i].n,
				 "histogram");
		json_t *stars = get_stars(doc, "paper");
		json_t *t = json_object_get(stars, "thresholds");
		if (!json_is_null(t))
			fail_msg("%s: stars.thresholds is not null", cases[i].seq);
		const char *reason = get_str(stars, "reason");
		if (!has_number(reason, cases[i].above))
			fail_msg("%s: reason does not say %d: %s", cases[i].seq, cases[i].above,
				 reason);
		json_decref(doc);
		run_free(&res);
	}
}

/* ---- evaluate: bad input ---- */

static void test_bad_input(void **state)
{
	(void)state;
	static const bad_case cases[] = {
		{ { "evaluate", "", NULL }, { "empty", "length 0", NULL } },
		{ { "evaluate", "hphp", NULL }, { "'h'", "\"h\"", "lower", NULL } },
		{ { "evaluate", "HPX", NULL }, { "X", NULL } },
		{ { "evaluate",
		    "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH", NULL },
		  { "65", "64", NULL } },
		{ { "evaluate", "--lattice", "cubic",
		    "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH", NULL },
		  { "49", "48", NULL } },
		{ { "evaluate", "--method", "guess", "HPHP", NULL }, { "guess", NULL } },
		{ { "evaluate", "--seed", "-1", "HPHP", NULL }, { "-1", NULL } },
		{ { "evaluate", "--steps", "0", "HPHP", NULL }, { "--steps", NULL } },
		{ { "evaluate", "--moves", "lots", "HPHP", NULL }, { "lots", NULL } },
		{ { "evaluate", "--lattice", "hexagonal", "HPHP", NULL }, { "hexagonal", NULL } },
		{ { "evaluate", "--stars", "bogus", "HPHP", NULL }, { "bogus", NULL } },
		{ { "evaluate", "--engine", "warp", "HPHP", NULL }, { "warp", NULL } },
		{ { "evaluate", "--threads", "0", "HPHP", NULL }, { "threads", NULL } },
		{ { "evaluate", "--threads", "abc", "HPHP", NULL }, { "abc", NULL } },
		{ { "evaluate", "--threads=-3", "HPHP", NULL }, { "-3", NULL } },
		{ { "evaluate", "--method", "exact", "--budget", "1000", "HPHPPHHPHPPHPHHP", NULL },
		  { "budget", NULL } },
		{ { "evaluate", NULL }, { "sequence", NULL } },
		{ { "evaluate", "HPHP", "PPHH", NULL }, { "PPHH", "more than one", "two", NULL } },
		{ { "evaluate", "--frobnicate", "HPHP", NULL }, { "--frobnicate", NULL } },
		{ { "evaluate", "HPHP", "--threads", NULL }, { "threads", NULL } },
		{ { "frobnicate", NULL }, { "frobnicate", NULL } },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++)
		expect_usage_error(&cases[i], NAMES_ANY);
	/* Uploaded experience models live in the service's database. */
	static const bad_case uploaded = { { "generate", "racetrack", "--seed", "1", "--params",
					     "{\"px_model\":\"mine\"}", NULL },
					   { "'mine'", "service", "synthetic", NULL } };
	expect_usage_error(&uploaded, NAMES_ALL);
}

/* The exact method's budget refusal states the limit it was held to. */
static void test_budget_message(void **state)
{
	(void)state;
	run_result res;
	RUN(&res, "evaluate", "--method", "exact", "--budget", "1000", "HPHPPHHPHPPHPHHP");
	assert_int_equal(res.status, 2);
	assert_int_equal(res.out_len, 0);
	if (!strstr(res.err, "1000") && !strstr(res.err, "1e+03") && !strstr(res.err, "1e3"))
		fail_msg("budget message does not state the limit: %s", res.err);
	run_free(&res);

	/* A budget above the work is fine: 802075 < 1e6. */
	RUN(&res, "evaluate", "--budget", "1e6", "HPHPPHHPHPPHPHHP");
	json_t *doc = expect_json(&res);
	assert_int_equal(get_int(doc, "conformations"), 802075);
	json_decref(doc);
	run_free(&res);

	/* Past the budget, auto (the default) estimates instead: the best fold
	 * of this chain is 6 contacts (exact enumeration, above), which the
	 * optimum search proves, and the estimated total is within 10 % of
	 * 802075. */
	RUN(&res, "evaluate", "--budget", "1000", "--steps", "2e6", "HPHPPHHPHPPHPHHP");
	doc = expect_json(&res);
	assert_string_equal(json_string_value(json_object_get(doc, "method")), "estimate");
	json_t *opt = json_object_get(doc, "optimum");
	assert_int_equal(json_integer_value(json_object_get(opt, "score")), 6);
	assert_true(json_is_true(json_object_get(opt, "proven")));
	double total = json_number_value(json_object_get(doc, "conformations"));
	if (!(total > 0.9 * 802075 && total < 1.1 * 802075))
		fail_msg("estimated total %g is not within 10 %% of 802075", total);
	json_decref(doc);
	run_free(&res);
}

/* ---- help and dispatch ---- */

static void expect_help(const char *const *args, const char *const *mentions)
{
	run_result res;
	run_args(&res, args);
	if (res.status != 0)
		fail_msg("%s: exit %d, expected 0", args[0], res.status);
	assert_int_equal(res.err_len, 0);
	if (!strstr(res.out, "usage"))
		fail_msg("%s: no usage on stdout: %s", args[0], res.out);
	for (int i = 0; mentions[i]; i++)
		if (!strstr(res.out, mentions[i]))
			fail_msg("help does not mention %s", mentions[i]);
	run_free(&res);
}

static void test_help(void **state)
{
	(void)state;
	static const char *const top[] = { "--help", NULL };
	static const char *const top_mentions[] = { "evaluate", NULL };
	expect_help(top, top_mentions);
	static const char *const ev[] = { "evaluate", "--help", NULL };
	static const char *const ev_mentions[] = { "--lattice", "--stars",  "--threads",
						   "--budget",  "--engine", NULL };
	expect_help(ev, ev_mentions);
	static const char *const ev2[] = { "evaluate", "HPHP", "--help", NULL };
	expect_help(ev2, ev_mentions);
}

static void test_no_arguments(void **state)
{
	(void)state;
	static const char *const none[] = { NULL };
	run_result res;
	run_args(&res, none);
	assert_int_equal(res.status, 2);
	assert_int_equal(res.out_len, 0);
	assert_true(res.err_len > 0);
	run_free(&res);
}

/*
 * `starforge --version` and `starforge version`: one line on stdout,
 * "starforge VERSION (commit COMMIT)", exit 0, the strings this suite was
 * linked with (server/base/version.h, the same build); VERSION is dotted
 * numbers, COMMIT hexadecimal or "unknown" (a build outside git).
 */
static void test_version(void **state)
{
	(void)state;
	static const char *const flag[] = { "--version", NULL }, *const word[] = { "version",
										   NULL };
	run_result a, b;
	run_args(&a, flag);
	run_args(&b, word);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_int_equal(a.err_len, 0);
	assert_string_equal(a.out, b.out);
	char want[256];
	snprintf(want, sizeof want, "starforge %s (commit %s)\n", sf_version, sf_commit);
	assert_string_equal(a.out, want);
	assert_int_equal(count_char(a.out, '\n'), 1);
	assert_true(strspn(sf_version, "0123456789.") == strlen(sf_version) &&
		    sf_version[0] != '.');
	assert_true(strcmp(sf_commit, "unknown") == 0 ||
		    (strlen(sf_commit) >= 7 &&
		     strspn(sf_commit, "0123456789abcdef") == strlen(sf_commit)));
	run_free(&a);
	run_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evaluate_reference),
		cmocka_unit_test(test_evaluate_strategies),
		cmocka_unit_test(test_evaluate_cubic),
		cmocka_unit_test(test_engine_cmap_identical),
		cmocka_unit_test(test_threads_identical),
		cmocka_unit_test(test_too_few_scores),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_budget_message),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_no_arguments),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
