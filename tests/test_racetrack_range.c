/*
 * test_racetrack_range.c - what a racetrack job can and cannot do (issue 13):
 * every documented road width gives valid tracks, and a target outside what
 * the experience model produces gets a warning in the result, never a
 * silent plateau.
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
#include "racetrack/search.h"
#include "racetrack/track.h"
#include "racetrack_support.h"
#include "rng.h"

static void params_for(const char *json, trk_search_params *p)
{
	json_error_t jerr;
	json_t *obj = json_loads(json, 0, &jerr);
	assert_non_null(obj);
	sf_err err = { 0 };
	if (trk_search_params_from_json(obj, p, &err))
		fail_msg("%s refused: %s", json, err.msg);
	json_decref(obj);
}

/*
 * Every width of the documented range 4..40 m, with the area left to its
 * default: at least half of the random genomes (68-97 % seen) gives a track that passes every
 * check with that width's limits (the GA starts from such genomes), and
 * the area grows with the road beyond 12 m.
 */
static void test_every_width(void **state)
{
	(void)state;
	static const double widths[] = { 4, 6, 8, 12, 16, 20, 25, 30, 35, 40 };
	enum { GENOMES = 60 };
	for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
		char json[64];
		snprintf(json, sizeof json, "{\"track_width\": %g}", widths[w]);
		trk_search_params p;
		params_for(json, &p);
		assert_true(p.width == (widths[w] > 12 ? 400.0 / 12 * widths[w] : 400.0));
		assert_true(p.height == p.width);
		trk_limits lim = trk_search_limits(&p);
		uint8_t *g = malloc(trk_genome_length(&p));
		assert_non_null(g);
		rng r;
		rng_seed(&r, 1000 + w);
		int valid = 0;
		for (int i = 0; i < GENOMES; i++) {
			trk_genome_random(&p, &r, g);
			sf_err err = { 0 };
			trk_track *t = trk_genome_track(&p, g, &err);
			trk_report rep;
			if (t && trk_track_check(t, &lim, 0, &rep, &err) == 0) {
				valid++;
				assert_true(t->width == widths[w]);
			}
			trk_track_free(t);
		}
		free(g);
		if (valid < GENOMES / 2)
			fail_msg("track_width %g: only %d of %d random genomes give a valid track",
				 widths[w], valid, GENOMES);
	}
}

/* The narrowest and the widest road each give levels whose tracks pass the checks. */
static void test_width_levels(void **state)
{
	(void)state;
	static const char *params[] = {
		"{\"track_width\": 4, \"population\": 8, \"generations\": 3, "
		"\"races_per_genome\": 2, \"star_seeds\": 1}",
		"{\"track_width\": 40, \"population\": 8, \"generations\": 3, "
		"\"races_per_genome\": 2, \"star_seeds\": 1}",
	};
	for (size_t i = 0; i < 2; i++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			trk_search_params p;
			params_for(params[i], &p);
			trk_search_opts opts = { .seed = seed, .threads = 2 };
			trk_search_result res;
			sf_err err = { 0 };
			if (trk_search_run(&p, &opts, &res, &err))
				fail_msg("%s seed %llu: %s", params[i], (unsigned long long)seed,
					 err.msg);
			assert_true(res.count >= 1);
			trk_limits lim = trk_search_limits(&p);
			trk_report rep;
			assert_int_equal(trk_track_check(res.levels[0].track, &lim, 1, &rep, &err),
					 0);
			trk_search_result_free(&res);
		}
}

/* An area too small for the road is refused with a message naming the least. */
static void test_area_too_small(void **state)
{
	(void)state;
	json_t *obj = json_loads("{\"track_width\": 40, \"width\": 400}", 0, NULL);
	trk_search_params p;
	sf_err err = { 0 };
	assert_int_equal(trk_search_params_from_json(obj, &p, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "params.width 400 is too small for track_width 40"));
	assert_non_null(strstr(err.msg, "at least 1000"));
	json_decref(obj);
}

static json_t *warnings_of(json_t *doc)
{
	json_t *w = json_object_get(doc, "warnings");
	assert_true(json_is_array(w));
	return w;
}

/*
 * The warning: a target the model's tracks never reached (flat 0.99, flat
 * 0.01) is named in the result with the range the search saw, which does
 * not contain the target; a target well inside that range gets none.
 */
static void test_out_of_range_warning(void **state)
{
	(void)state;
	static const char *base = "\"population\": 8, \"generations\": 3, \"races_per_genome\": 2, "
				  "\"star_seeds\": 1";
	char json[256];
	double seen_lo = 2, seen_hi = -2;
	static const double flat[] = { 0.99, 0.01 };
	for (size_t i = 0; i < 2; i++) {
		snprintf(json, sizeof json, "{\"target\": [%g, %g], %s}", flat[i], flat[i], base);
		json_t *doc = racetrack_generate(json, 5, 2);
		json_t *range = json_object_get(doc, "px_range");
		assert_true(json_is_array(range));
		double lo = json_real_value(json_array_get(range, 0));
		double hi = json_real_value(json_array_get(range, 1));
		assert_true(lo <= hi);
		seen_lo = lo < seen_lo ? lo : seen_lo;
		seen_hi = hi > seen_hi ? hi : seen_hi;
		/* The range is what the levels show: their segments lie inside it. */
		json_t *segs = json_object_get(
			json_object_get(json_array_get(json_object_get(doc, "levels"), 0),
					"puzzle"),
			"segments");
		size_t k;
		json_t *seg;
		json_array_foreach(segs, k, seg)
		{
			double px = json_real_value(json_object_get(seg, "simulated_px"));
			if (px >= 0) {
				assert_true(px >= lo - 1e-12);
				assert_true(px <= hi + 1e-12);
			}
		}
		json_t *w = warnings_of(doc);
		assert_true(flat[i] > hi || flat[i] < lo);
		assert_int_equal(json_array_size(w), 1);
		const char *text = json_string_value(json_array_get(w, 0));
		assert_non_null(strstr(text, flat[i] > 0.5 ? "at its highest" : "at its lowest"));
		json_decref(doc);
	}
	/* A target in the middle of what the model produced: no warning. */
	double mid = (seen_lo + seen_hi) / 2;
	snprintf(json, sizeof json, "{\"target\": [%.3f, %.3f], %s}", mid, mid, base);
	json_t *doc = racetrack_generate(json, 5, 2);
	assert_int_equal(json_array_size(warnings_of(doc)), 0);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_width),
		cmocka_unit_test(test_width_levels),
		cmocka_unit_test(test_area_too_small),
		cmocka_unit_test(test_out_of_range_warning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
