/*
 * test_lattice_long.c - lattice searches past the contact-map database
 * (issue 15, "Long chains"): method estimate in core/lattice/puzzle.c and
 * puzzle_long.c.
 *
 * The oracles are independent of the search's own bookkeeping: every fold a
 * level names is re-scored by lat_fold_score(); the domain is re-tested with
 * lat_in_domain() on the level's distribution; at length 12 the direct
 * enumerator (lat_enumerate) gives the true best score. Determinism is
 * checked byte for byte on the result's JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lattice/puzzle.h"
#include "lattice/puzzle_json.h"
#include "lattice/svg.h"
#include "support.h"

/* Small searches: a few seconds in all on one core. */
static lat_search_params small_params(int length, lat_kind kind)
{
	lat_search_params p;
	lat_search_params_default(&p);
	p.length = length;
	p.lattice = kind;
	p.population = 6;
	p.generations = 3;
	return p;
}

static lat_search_opts opts_of(uint64_t seed, int threads)
{
	lat_search_opts o;
	memset(&o, 0, sizeof o);
	o.seed = seed;
	o.threads = threads;
	return o;
}

static void search_ok(const lat_search_params *p, const lat_search_opts *o, lat_search_result *r)
{
	sf_err err = { 0 };
	int rc = lat_search_run(p, o, r, &err);
	if (rc)
		fail_msg("lat_search_run: %s", err.msg);
}

/*
 * Three levels from a small square-lattice search at `length` with
 * `method`, seeded `seed` on two threads: its params and options (for the
 * caller to search again) and its result, which the caller frees.
 */
static void search_square(int length, lat_method method, uint64_t seed, lat_search_params *p,
			  lat_search_opts *o, lat_search_result *r)
{
	*p = small_params(length, LAT_SQUARE);
	p->count = 3;
	p->method = method;
	*o = opts_of(seed, 2);
	search_ok(p, o, r);
}

static char *result_text(const lat_search_result *r, const lat_search_params *p, uint64_t seed)
{
	json_t *doc = lat_search_result_json(r, p, seed);
	assert_non_null(doc);
	char *text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(doc);
	assert_non_null(text);
	return text;
}

/* Scores `fold` on the level's chain, failing the test when it is invalid. */
static int fold_score(const lat_search_params *p, const lat_level *lv, const char *fold)
{
	sf_err err = { 0 };
	int s = lat_fold_score(p->lattice, &lv->seq, fold, &err);
	if (s < 0)
		fail_msg("fold %s of a level is invalid: %s", fold, err.msg);
	return s;
}

/* Every claim a long level makes, checked against the folds themselves. */
static void check_level(const lat_search_params *p, const lat_level *lv, uint64_t seed)
{
	assert_non_null(lv->estimate);
	const lat_evaluation *ev = lv->estimate;
	assert_int_equal(ev->method, LAT_METHOD_ESTIMATE);
	assert_int_equal(lv->seq.len, p->length);
	assert_int_equal(lv->eval.max_score, ev->opt_score);
	assert_true(lat_in_domain(p, &lv->seq, lv->eval.hist, lv->eval.max_score));
	/* The best fold is valid and scores the optimum. */
	assert_int_equal(fold_score(p, lv, lv->eval.examples[lv->eval.max_score]), ev->opt_score);
	assert_int_equal(fold_score(p, lv, ev->opt_fold), ev->opt_score);
	/* Three increasing thresholds, the last the best; each band fold reaches its own. */
	assert_true(lv->thresholds[0] >= 1);
	assert_true(lv->thresholds[0] < lv->thresholds[1]);
	assert_true(lv->thresholds[1] < lv->thresholds[2]);
	assert_int_equal(lv->thresholds[2], lv->eval.max_score);
	for (int k = 0; k < 3; k++)
		assert_true(fold_score(p, lv, lv->eval.examples[lv->thresholds[k]]) >=
			    lv->thresholds[k]);

	/* The level's JSON says how it was evaluated. */
	json_t *doc = lat_level_json(lv, p, seed);
	assert_non_null(doc);
	json_t *stats = json_object_get(doc, "stats");
	assert_string_equal(json_string_value(json_object_get(stats, "method")), "estimate");
	json_t *hist = json_object_get(stats, "histogram");
	json_t *errs = json_object_get(stats, "histogram_error");
	assert_int_equal(json_array_size(hist), (size_t)lv->eval.max_score + 1);
	assert_int_equal(json_array_size(errs), json_array_size(hist));
	assert_true(json_number_value(json_array_get(hist, 0)) > 0);
	assert_true(json_is_real(json_array_get(errs, 0)));
	json_t *opt = json_object_get(stats, "optimum");
	assert_int_equal(json_integer_value(json_object_get(opt, "score")), ev->opt_score);
	assert_true(json_is_boolean(json_object_get(opt, "proven")));
	json_t *sol = json_object_get(doc, "solution");
	assert_int_equal(json_integer_value(json_object_get(sol, "best_score")), ev->opt_score);
	/* Its picture draws. */
	sf_err err = { 0 };
	char *svg = lat_level_svg(doc, &err);
	if (!svg)
		fail_msg("lat_level_svg: %s", err.msg);
	assert_non_null(strstr(svg, "<svg"));
	free(svg);
	json_decref(doc);
}

/* A GA search at length 26 returns valid, in-domain levels (default budgets). */
static void test_long_levels(void **state)
{
	(void)state;
	lat_search_params p;
	lat_search_opts o;
	lat_search_result r;
	search_square(26, LAT_METHOD_AUTO, 7, &p, &o, &r);
	assert_int_equal(lat_search_method(&p), LAT_METHOD_ESTIMATE);
	assert_int_equal(r.status, GA_COMPLETED);
	assert_true(r.count >= 1 && r.count <= 3);
	for (size_t i = 0; i < r.count; i++)
		check_level(&p, &r.levels[i], 7);
	lat_search_result_free(&r);

	/* rare_optimum keeps its H window on the estimate path too. */
	p.fitness = LAT_FIT_RARE_OPTIMUM;
	p.count = 2;
	search_ok(&p, &o, &r);
	for (size_t i = 0; i < r.count; i++) {
		check_level(&p, &r.levels[i], 7);
		assert_true(r.levels[i].fitness.fitness > 0);
	}
	lat_search_result_free(&r);
}

/* The cubic lattice past its database: length 20, MAP-Elites. */
static void test_long_cubic(void **state)
{
	(void)state;
	lat_search_params p = small_params(20, LAT_CUBIC);
	p.algorithm = LAT_ALG_MAP_ELITES;
	p.count = 0;
	p.steps = 50000;
	p.moves = 50000;
	p.nodes = 10000;
	lat_search_opts o = opts_of(3, 2);
	lat_search_result r;
	search_ok(&p, &o, &r);
	assert_true(r.count >= 1);
	for (size_t i = 0; i < r.count; i++) {
		check_level(&p, &r.levels[i], 3);
		assert_true(r.levels[i].cell >= 0);
	}
	lat_search_result_free(&r);
}

/* Square 40 and 64 (small budgets): levels, folds and pictures hold at any length. */
static void test_long_longest(void **state)
{
	(void)state;
	static const int lengths[] = { 40, 64 };
	for (int i = 0; i < 2; i++) {
		lat_search_params p = small_params(lengths[i], LAT_SQUARE);
		p.population = 4;
		p.generations = 2;
		p.steps = 20000;
		p.moves = 20000;
		p.nodes = 1000;
		lat_search_opts o = opts_of(9, 2);
		lat_search_result r;
		search_ok(&p, &o, &r);
		assert_int_equal(r.count, 1);
		check_level(&p, &r.levels[0], 9);
		lat_search_result_free(&r);
	}
}

/* The same bytes for thread counts 1 and 2 and for a repeated run. */
static void test_long_deterministic(void **state)
{
	(void)state;
	lat_search_params p = small_params(24, LAT_SQUARE);
	p.count = 3;
	p.steps = 50000;
	p.moves = 50000;
	p.nodes = 10000;
	char *text[3];
	for (int i = 0; i < 3; i++) {
		lat_search_opts o = opts_of(11, i == 1 ? 1 : 2);
		lat_search_result r;
		search_ok(&p, &o, &r);
		assert_true(r.count >= 1);
		text[i] = result_text(&r, &p, 11);
		lat_search_result_free(&r);
	}
	assert_string_equal(text[0], text[1]);
	assert_string_equal(text[0], text[2]);
	assert_non_null(strstr(text[0], "\"method\":\"estimate\""));
	for (int i = 0; i < 3; i++)
		free(text[i]);

	/* Another seed searches differently but a puzzle met by both is
	 * evaluated the same: its seed comes from the sequence alone. */
	lat_search_opts o = opts_of(12, 2);
	lat_search_result a, b;
	search_ok(&p, &o, &a);
	o.seed = 13;
	search_ok(&p, &o, &b);
	for (size_t i = 0; i < a.count; i++)
		for (size_t j = 0; j < b.count; j++)
			if (!memcmp(a.levels[i].seq.h, b.levels[j].seq.h, (size_t)p.length))
				assert_memory_equal(a.levels[i].eval.hist, b.levels[j].eval.hist,
						    sizeof a.levels[i].eval.hist);
	lat_search_result_free(&a);
	lat_search_result_free(&b);
}

typedef struct length_case {
	int length;
	lat_kind lattice;
	lat_algorithm algorithm;
	lat_method method;
	const char *want[3]; /* substrings of the message; NULL: valid */
} length_case;

/* Lengths and methods: the ranges per method, named in the refusals. */
static void test_long_params(void **state)
{
	(void)state;
	static const length_case cases[] = {
		{ 21, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_EXACT, { "length 21", "8..20", "exact" } },
		{ 30, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_EXACT, { "length 30", "8..20", "8..64" } },
		{ 15, LAT_CUBIC, LAT_ALG_GA, LAT_METHOD_EXACT, { "length 15", "8..14", "8..48" } },
		{ 65, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_AUTO, { "length 65", "8..64", "8..20" } },
		{ 65, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_ESTIMATE, { "length 65", "8..64" } },
		{ 49, LAT_CUBIC, LAT_ALG_MAP_ELITES, LAT_METHOD_AUTO, { "length 49", "8..48" } },
		{ 7, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_ESTIMATE, { "length 7", "8..64" } },
		{ 19, LAT_SQUARE, LAT_ALG_EXHAUSTIVE, LAT_METHOD_AUTO, { "length 19", "8..18" } },
		{ 12,
		  LAT_SQUARE,
		  LAT_ALG_EXHAUSTIVE,
		  LAT_METHOD_ESTIMATE,
		  { "estimate", "exhaustive" } },
		{ 20, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_EXACT, { NULL } },
		{ 64, LAT_SQUARE, LAT_ALG_GA, LAT_METHOD_AUTO, { NULL } },
		{ 48, LAT_CUBIC, LAT_ALG_GA, LAT_METHOD_ESTIMATE, { NULL } },
		{ 8, LAT_CUBIC, LAT_ALG_GA, LAT_METHOD_ESTIMATE, { NULL } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const length_case *c = &cases[i];
		lat_search_params p;
		lat_search_params_default(&p);
		p.length = c->length;
		p.lattice = c->lattice;
		p.algorithm = c->algorithm;
		p.method = c->method;
		sf_err err = { 0 };
		int rc = lat_search_params_check(&p, &err);
		if (!c->want[0]) {
			if (rc)
				fail_msg("case %zu refused: %s", i, err.msg);
			continue;
		}
		assert_int_equal(rc, SF_EINVAL);
		for (int k = 0; k < 3 && c->want[k]; k++)
			if (!strstr(err.msg, c->want[k]))
				fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, c->want[k]);
	}
	/* auto resolves by the database's range. */
	lat_search_params p;
	lat_search_params_default(&p);
	p.length = 20;
	assert_int_equal(lat_search_method(&p), LAT_METHOD_EXACT);
	p.length = 21;
	assert_int_equal(lat_search_method(&p), LAT_METHOD_ESTIMATE);
	p.lattice = LAT_CUBIC;
	p.length = 14;
	assert_int_equal(lat_search_method(&p), LAT_METHOD_EXACT);
	p.length = 15;
	assert_int_equal(lat_search_method(&p), LAT_METHOD_ESTIMATE);

	/* The budgets, through the JSON params. */
	static const char *const bad[][2] = {
		{ "{\"steps\": 0}", "steps 0" },
		{ "{\"moves\": 0}", "moves 0" },
		{ "{\"nodes\": -1}", "nodes -1" },
		{ "{\"method\": \"guess\"}", "exact, estimate, auto" },
		{ "{\"length\": 24, \"method\": \"exact\"}", "8..20" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *pj = json_loads(bad[i][0], 0, NULL);
		assert_non_null(pj);
		sf_err err = { 0 };
		lat_search_params q;
		assert_int_equal(lat_search_params_from_json(pj, &q, &err), SF_EINVAL);
		if (!strstr(err.msg, bad[i][1]) || !strstr(err.msg, "params."))
			fail_msg("'%s': '%s' lacks '%s'", bad[i][0], err.msg, bad[i][1]);
		json_decref(pj);
	}
	json_t *pj = json_loads("{\"length\": 40, \"method\": \"estimate\", \"steps\": 100000}", 0,
				NULL);
	lat_search_params q;
	assert_int_equal(lat_search_params_from_json(pj, &q, NULL), 0);
	assert_int_equal(q.method, LAT_METHOD_ESTIMATE);
	assert_int_equal(q.steps, 100000);
	assert_int_equal(q.moves, LAT_LONG_MOVES);
	json_t *echo = lat_search_params_json(&q);
	assert_string_equal(json_string_value(json_object_get(echo, "method")), "estimate");
	assert_int_equal(json_integer_value(json_object_get(echo, "nodes")), LAT_LONG_NODES);
	json_decref(echo);
	json_decref(pj);
}

/* Method estimate at length 12 finds the true best score of every level. */
static void test_long_matches_exact(void **state)
{
	(void)state;
	lat_search_params p;
	lat_search_opts o;
	lat_search_result est, exact;
	search_square(12, LAT_METHOD_ESTIMATE, 5, &p, &o, &est);
	p.method = LAT_METHOD_EXACT;
	search_ok(&p, &o, &exact);
	assert_true(est.count >= 1 && exact.count >= 1);
	/* distinct_scores counts the scores up to the proven optimum: the same
	 * fitness, so the same search and the same best puzzle. */
	assert_memory_equal(est.levels[0].seq.h, exact.levels[0].seq.h, 12);
	assert_int_equal(est.levels[0].eval.max_score, exact.levels[0].eval.max_score);
	assert_null(exact.levels[0].estimate);
	lat_opts eo = { .threads = 1, .budget = 0 };
	for (size_t i = 0; i < est.count; i++) {
		const lat_level *lv = &est.levels[i];
		assert_non_null(lv->estimate);
		assert_true(lv->estimate->opt_proven);
		static lat_result truth;
		assert_int_equal(lat_enumerate(LAT_SQUARE, &lv->seq, &eo, &truth, NULL), 0);
		assert_int_equal(lv->eval.max_score, truth.max_score);
		p.method = LAT_METHOD_ESTIMATE;
		check_level(&p, lv, 5);
	}
	/* Exact levels say so, with a proven optimum. */
	json_t *doc = lat_level_json(&exact.levels[0], &p, 5);
	json_t *stats = json_object_get(doc, "stats");
	assert_string_equal(json_string_value(json_object_get(stats, "method")), "exact");
	json_t *opt = json_object_get(stats, "optimum");
	assert_int_equal(json_integer_value(json_object_get(opt, "score")),
			 exact.levels[0].eval.max_score);
	assert_true(json_is_true(json_object_get(opt, "proven")));
	json_decref(doc);
	lat_search_result_free(&est);
	lat_search_result_free(&exact);
}

/* ---- no database, no cache ---- */

static atomic_int cache_gets, cache_puts;

static int cache_get(void *ctx, lat_kind kind, const lat_seq *seq, uint64_t hist[LAT_MAX_SCORE + 1])
{
	(void)ctx, (void)kind, (void)seq, (void)hist;
	atomic_fetch_add(&cache_gets, 1);
	return -1;
}

static void cache_put(void *ctx, const lat_result *res, const lat_seq *seq)
{
	(void)ctx, (void)res, (void)seq;
	atomic_fetch_add(&cache_puts, 1);
}

/* The estimate path neither reads nor feeds the (exact) cache, and ignores a warm database. */
static void test_long_no_cache(void **state)
{
	(void)state;
	lat_eval_cache cache = { .ctx = NULL, .get = cache_get, .put = cache_put };
	lat_search_params p = small_params(22, LAT_SQUARE);
	p.steps = 20000;
	p.moves = 20000;
	p.nodes = 1000;
	lat_opts dbo = { .threads = 1, .budget = 0 };
	lat_db *db = lat_db_build(LAT_SQUARE, 10, &dbo, NULL); /* the wrong length */
	assert_non_null(db);
	lat_search_opts o = opts_of(2, 2);
	o.cache = &cache;
	o.db = db;
	lat_search_result r;
	search_ok(&p, &o, &r);
	assert_int_equal(atomic_load(&cache_gets), 0);
	assert_int_equal(atomic_load(&cache_puts), 0);
	lat_search_result_free(&r);

	/* The exact path at length 10 still uses both. */
	p.length = 10;
	search_ok(&p, &o, &r);
	assert_true(atomic_load(&cache_gets) > 0);
	assert_true(atomic_load(&cache_puts) > 0);
	lat_search_result_free(&r);
	lat_db_free(db);
}

int main(void)
{
	json_object_seed(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_params),
		cmocka_unit_test(test_long_levels),
		cmocka_unit_test(test_long_cubic),
		cmocka_unit_test(test_long_longest),
		cmocka_unit_test(test_long_deterministic),
		cmocka_unit_test(test_long_matches_exact),
		cmocka_unit_test(test_long_no_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
