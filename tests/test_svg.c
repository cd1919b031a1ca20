/*
 * test_svg.c - the level pictures (core/svg.c and each kind's svg.c): the
 * writer's number and text formats; for every kind, pictures of generated
 * levels that are the same bytes on repeat and whatever thread count made
 * the level, well-formed XML (a small checker here: one <svg> root with its
 * size, balanced tags, quoted attributes, no duplicate attribute, escaped
 * text) and hold what the level holds (one disc per residue, one digger per
 * machine, one ribbon per track segment, ...); the evaluation picture; and
 * bad documents, named and mutated at random, that give NULL with
 * SF_EINVAL, never a crash. Last, the pictures in docs/img are what the commands in
 * docs/img/README.md make (run from the repository root, as make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/svg.h"
#include "kinds.h"
#include "lattice/lattice.h"
#include "lattice/lattice_json.h"
#include "lattice/svg.h"
#include "racetrack/svg.h"
#include "rng.h"
#include "stars.h"
#include "stars_json.h"
#include "svg.h"
#include "xml_support.h"

/* Asserts that `svg` is well formed with a root carrying width, height and viewBox. */
static void assert_svg(const char *svg, const char *what)
{
	char why[256];
	if (xml_check(svg, why, sizeof why) < 0)
		fail_msg("%s: not well-formed XML: %s", what, why);
	const char *root = strstr(svg, "<svg ");
	double w = 0, h = 0, vw = -1, vh = -1;
	if (!root || sscanf(root,
			    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lf\" "
			    "height=\"%lf\" viewBox=\"0 0 %lf %lf\"",
			    &w, &h, &vw, &vh) != 4)
		fail_msg("%s: the root has no width, height and viewBox", what);
	if (w <= 0 || h <= 0 || w != vw || h != vh)
		fail_msg("%s: size %gx%g, viewBox %gx%g", what, w, h, vw, vh);
}

/* ---- generating levels ---- */

static json_t *generate(const char *kind, uint64_t seed, const char *params, int threads)
{
	const sf_kind *k = sf_kind_find(kind);
	assert_non_null(k);
	json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
	sf_err err = { 0 };
	void *p = k->params_parse(pj, &err);
	json_decref(pj);
	if (!p)
		fail_msg("%s %s: %s", kind, params, err.msg);
	sf_gen_opts opts = { .seed = seed, .threads = threads };
	json_t *doc = k->generate(p, &opts, &err);
	k->params_free(p);
	if (!doc)
		fail_msg("%s %s: %s", kind, params, err.msg);
	return doc;
}

/* The picture of `level` by its kind's hook; fails the test on NULL. */
static char *picture(const json_t *level)
{
	const sf_kind *k = sf_kind_find(json_string_value(json_object_get(level, "kind")));
	assert_non_null(k);
	assert_non_null(k->level_svg);
	sf_err err = { 0 };
	char *svg = k->level_svg(level, &err);
	if (!svg)
		fail_msg("%s: no picture: %s", json_string_value(json_object_get(level, "id")),
			 err.msg);
	return svg;
}

typedef void (*contents_fn)(const json_t *level, const char *svg);

typedef struct gen_case {
	const char *kind;
	uint64_t seed;
	const char *params;
} gen_case;

/*
 * For each case: the job at 1 and at 3 threads gives the same document; every
 * level's picture is the same bytes twice and from either document, well
 * formed, and passes `contents`. Returns the number of levels drawn.
 */
static int check_cases(const gen_case *cases, size_t n, contents_fn contents)
{
	int drawn = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *one = generate(cases[i].kind, cases[i].seed, cases[i].params, 1);
		json_t *three = generate(cases[i].kind, cases[i].seed, cases[i].params, 3);
		const json_t *levels = json_object_get(one, "levels");
		assert_true(json_array_size(levels) >= 1);
		assert_int_equal(json_array_size(levels),
				 json_array_size(json_object_get(three, "levels")));
		for (size_t l = 0; l < json_array_size(levels); l++) {
			const json_t *level = json_array_get(levels, l);
			char *a = picture(level), *b = picture(level);
			char *c = picture(json_array_get(json_object_get(three, "levels"), l));
			char what[160];
			snprintf(what, sizeof what, "%s seed %llu %s level %zu", cases[i].kind,
				 (unsigned long long)cases[i].seed, cases[i].params, l);
			if (strcmp(a, b) || strcmp(a, c))
				fail_msg("%s: the picture differs between draws or thread counts",
					 what);
			assert_svg(a, what);
			contents(level, a);
			free(a);
			free(b);
			free(c);
			drawn++;
		}
		json_decref(one);
		json_decref(three);
	}
	return drawn;
}

/* ---- the writer ---- */

static void test_writer(void **state)
{
	(void)state;
	svg_buf b;
	svg_init(&b);
	svg_put(&b, "%f|%f|%f|%f|%f|%f|%f|%f|%f", 0.0, -0.004, 12.5, -0.25, 3.14159, 2.999, 1e13,
		-1e13, 100.0);
	svg_put(&b, "|%d|%d|%s|%t|100%%", -42, 7, "<b>", "<a & 'b' \"c\">");
	svg_put(&b, "|%f|%f", 0.0 / 0.0, 1.0 / 0.0);
	sf_err err = { 0 };
	char *text = svg_end(&b, &err);
	assert_non_null(text);
	assert_string_equal(text, "0|0|12.5|-0.25|3.14|3|1000000000000|-1000000000000|100"
				  "|-42|7|<b>|&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;|100%"
				  "|0|0</svg>\n");
	free(text);

	svg_init(&b);
	svg_put(&b, "%x", 1);
	assert_null(svg_end(&b, &err));
	assert_int_equal(err.code, SF_ERANGE);

	char c[8];
	svg_ramp(0, c);
	assert_string_equal(c, "#2c7bb6");
	svg_ramp(0.5, c);
	assert_string_equal(c, "#ffffbf");
	svg_ramp(1, c);
	assert_string_equal(c, "#d7191c");
	svg_ramp(-3, c);
	assert_string_equal(c, "#2c7bb6");
	svg_ramp(0.0 / 0.0, c);
	assert_string_equal(c, "#2c7bb6");
	svg_ramp(7, c);
	assert_string_equal(c, "#d7191c");

	/* A document of its own passes the checker; broken ones do not. */
	svg_init(&b);
	svg_begin(&b, 10, 20, "a <title> & more");
	svg_star(&b, 5, 5, 4, "#ffc300", "#000000");
	text = svg_end(&b, &err);
	assert_non_null(text);
	assert_svg(text, "svg_begin");
	assert_non_null(strstr(text, "<title>a &lt;title&gt; &amp; more</title>"));
	free(text);
	static const char *const broken[] = {
		"<svg><g></svg>",     "<svg><g></svg></g>",
		"<svg a=1></svg>",    "<svg a=\"1\" a=\"2\"/>",
		"<svg>a < b</svg>",   "<svg>a & b</svg>",
		"<svg/><svg/>",       "<g></g>",
		"text<svg/>",         "<svg a=\"<\"/>",
		"<svg>&bogus;</svg>", "<svg a=\"1\"b=\"2\"/>",
		"<svg>x > y</svg>",   "<svg><g a=\"1></g></svg>",
	};
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		char why[256];
		if (xml_check(broken[i], why, sizeof why) >= 0)
			fail_msg("the checker took %s", broken[i]);
	}
	char why[256];
	assert_int_equal(xml_check("<?xml version=\"1.0\"?>\n<svg a='1'><g/>&#38;&#x26;</svg>\n",
				   why, sizeof why),
			 2);
}

/* ---- lattice ---- */

static int fold_contacts(const json_t *puzzle, const char *fold)
{
	const char *seq = json_string_value(json_object_get(puzzle, "sequence"));
	int n = (int)strlen(seq), at[LAT_MAX_LEN][3] = { { 0 } }, k = 0;
	for (int i = 1; i < n; i++) {
		memcpy(at[i], at[i - 1], sizeof at[i]);
		int d = (int)(strchr("RLUDFB", fold[i - 1]) - "RLUDFB");
		at[i][d / 2] += d % 2 ? -1 : 1;
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 2; j < n; j++)
			k += seq[i] == 'H' && seq[j] == 'H' &&
			     abs(at[i][0] - at[j][0]) + abs(at[i][1] - at[j][1]) +
					     abs(at[i][2] - at[j][2]) ==
				     1;
	return k;
}

static void lattice_contents(const json_t *level, const char *svg)
{
	const json_t *puzzle = json_object_get(level, "puzzle");
	const char *seq = json_string_value(json_object_get(puzzle, "sequence"));
	int n = (int)strlen(seq), h = 0;
	for (int i = 0; i < n; i++)
		h += seq[i] == 'H';
	assert_int_equal(count(svg, "class=\"res "), n);
	assert_int_equal(count(svg, "class=\"res H\""), h);
	assert_int_equal(count(svg, "class=\"bond\""), n - 1);
	const json_t *stats = json_object_get(level, "stats");
	assert_int_equal(count(svg, "class=\"bar\""),
			 json_array_size(json_object_get(stats, "histogram")));
	const json_t *t = json_object_get(json_object_get(level, "stars"), "thresholds");
	const json_t *solution = json_object_get(level, "solution");
	/* The drawn fold scores the three-star threshold (the best score without bands). */
	int expect;
	const char *fold;
	if (json_is_array(t)) {
		assert_int_equal(count(svg, "class=\"band\""), 3);
		expect = (int)json_integer_value(json_array_get(t, 2));
		fold = json_string_value(
			json_object_get(json_object_get(solution, "band_folds"), "three"));
	} else {
		assert_int_equal(count(svg, "class=\"band\""), 0);
		assert_non_null(strstr(svg, "no star bands"));
		expect = (int)json_integer_value(json_object_get(solution, "best_score"));
		fold = json_string_value(json_object_get(solution, "best_fold"));
	}
	assert_int_equal(fold_contacts(puzzle, fold), expect);
	assert_int_equal(count(svg, "class=\"contact\""), expect);
	int cubic = !strcmp(json_string_value(json_object_get(puzzle, "lattice")), "cubic");
	assert_int_equal(count(svg, "class=\"box\""), cubic);
	assert_int_equal(count(svg, "class=\"grid\""), !cubic);
}

static void test_lattice_levels(void **state)
{
	(void)state;
	static const gen_case cases[] = {
		{ "lattice", 1, "{\"length\":12,\"population\":10,\"generations\":4}" },
		{ "lattice", 2, "{\"length\":16,\"population\":10,\"generations\":3}" },
		{ "lattice", 3,
		  "{\"length\":12,\"algorithm\":\"exhaustive\",\"fitness\":\"star_ladder\","
		  "\"count\":3}" },
		{ "lattice", 4,
		  "{\"lattice\":\"cubic\",\"length\":10,\"population\":8,\"generations\":3}" },
		{ "lattice", 5,
		  "{\"lattice\":\"cubic\",\"length\":12,\"population\":6,\"generations\":2}" },
	};
	assert_true(check_cases(cases, sizeof cases / sizeof cases[0], lattice_contents) >= 7);

	/* A level without star bands draws its best fold. */
	json_t *doc =
		generate("lattice", 1, "{\"length\":12,\"population\":10,\"generations\":4}", 1);
	json_t *level = json_deep_copy(json_array_get(json_object_get(doc, "levels"), 0));
	json_object_set_new(json_object_get(level, "stars"), "thresholds", json_null());
	json_object_set_new(json_object_get(level, "solution"), "band_folds", json_null());
	char *svg = picture(level);
	assert_svg(svg, "no bands");
	lattice_contents(level, svg);
	free(svg);
	json_decref(level);
	json_decref(doc);
}

/*
 * The fold of each star (lat_level_svg_star, the kind's level_svg_star):
 * star k draws solution.band_folds' fold of k stars, whose contacts are the
 * k-th threshold, and says so in its caption; star 3 is the default
 * picture's bytes; the three differ where the folds do; a star outside
 * 1..3 is SF_EINVAL, and a level without bands SF_ERANGE. Only lattice has
 * the choice.
 */
static void test_lattice_star(void **state)
{
	(void)state;
	static const char *const keys[3] = { "one", "two", "three" };
	static const char *const words[3] = { "One", "Two", "Three" };
	assert_non_null(sf_kind_find("lattice")->level_svg_star);
	assert_null(sf_kind_find("digger")->level_svg_star);
	assert_null(sf_kind_find("racetrack")->level_svg_star);
	static const gen_case cases[] = {
		{ "lattice", 1, "{\"length\":12,\"population\":10,\"generations\":4}" },
		{ "lattice", 2, "{\"length\":24,\"population\":6,\"generations\":2}" },
		{ "lattice", 4,
		  "{\"lattice\":\"cubic\",\"length\":10,\"population\":8,"
		  "\"generations\":3}" },
	};
	int differing = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *doc = generate(cases[i].kind, cases[i].seed, cases[i].params, 1);
		const json_t *level = json_array_get(json_object_get(doc, "levels"), 0);
		const json_t *t = json_object_get(json_object_get(level, "stars"), "thresholds");
		const json_t *bands =
			json_object_get(json_object_get(level, "solution"), "band_folds");
		assert_true(json_is_array(t));
		char *dflt = picture(level), *svg[3];
		for (int k = 0; k < 3; k++) {
			sf_err err = { 0 };
			svg[k] = lat_level_svg_star(level, k + 1, &err);
			if (!svg[k])
				fail_msg("%s star %d: %s", cases[i].params, k + 1, err.msg);
			assert_svg(svg[k], "star");
			int expect = (int)json_integer_value(json_array_get(t, (size_t)k));
			const char *fold = json_string_value(json_object_get(bands, keys[k]));
			assert_int_equal(fold_contacts(json_object_get(level, "puzzle"), fold),
					 expect);
			assert_int_equal(count(svg[k], "class=\"contact\""), expect);
			char caption[64];
			snprintf(caption, sizeof caption, ">%s-star fold: %d HH contacts<",
				 words[k], expect);
			if (!strstr(svg[k], caption))
				fail_msg("%s star %d: no caption %s", cases[i].params, k + 1,
					 caption);
			/* The mark under the histogram sits under this fold's score. */
			assert_int_equal(count(svg[k], "class=\"mark\""), 1);
		}
		assert_string_equal(svg[2], dflt);
		for (int k = 0; k < 2; k++) {
			int same_fold = !strcmp(json_string_value(json_object_get(bands, keys[k])),
						json_string_value(json_object_get(bands, keys[2])));
			assert_int_equal(!strcmp(svg[k], svg[2]), same_fold);
			differing += !same_fold;
		}
		for (int k = 0; k < 3; k++)
			free(svg[k]);
		free(dflt);

		sf_err err = { 0 };
		for (int bad = -1; bad <= 4; bad += 5) {
			memset(&err, 0, sizeof err);
			assert_null(lat_level_svg_star(level, bad, &err));
			assert_int_equal(err.code, SF_EINVAL);
			assert_non_null(strstr(err.msg, "star"));
		}
		assert_null(lat_level_svg_star(level, 0, &err));
		/* Without star bands there is no fold per star. */
		json_t *plain = json_deep_copy(level);
		json_object_set_new(json_object_get(plain, "stars"), "thresholds", json_null());
		json_object_set_new(json_object_get(plain, "solution"), "band_folds", json_null());
		memset(&err, 0, sizeof err);
		assert_null(lat_level_svg_star(plain, 2, &err));
		assert_int_equal(err.code, SF_ERANGE);
		assert_non_null(strstr(err.msg, "no star bands"));
		json_decref(plain);
		/* Another kind's document is still SF_EINVAL. */
		json_t *other = json_deep_copy(level);
		json_object_set_new(other, "kind", json_string("digger"));
		memset(&err, 0, sizeof err);
		assert_null(lat_level_svg_star(other, 1, &err));
		assert_int_equal(err.code, SF_EINVAL);
		json_decref(other);
		json_decref(doc);
	}
	/* The cases have folds that differ (else the comparison above proves little). */
	assert_true(differing >= 2);
}

/* The evaluation document GET /v1/evaluations/{lattice}/{sequence} answers. */
static json_t *evaluation(lat_kind kind, const char *sequence, int threads)
{
	lat_seq seq;
	sf_err err = { 0 };
	assert_int_equal(lat_seq_parse(sequence, &seq, &err), 0);
	static lat_result res;
	lat_opts opts = { .threads = threads };
	assert_int_equal(lat_enumerate(kind, &seq, &opts, &res, &err), 0);
	json_t *doc = lat_result_json(&res, &seq);
	stars_config cfg;
	stars_config_default(&cfg, STARS_PAPER);
	int t[3];
	sf_err serr = { 0 };
	int ok = stars_thresholds(res.hist, res.max_score + 1, &cfg, t, &serr) == 0;
	json_object_set_new(doc, "stars", stars_json(&cfg, "contacts", ok ? t : NULL, serr.msg));
	return doc;
}

static void test_evaluation(void **state)
{
	(void)state;
	static const struct {
		lat_kind kind;
		const char *seq;
		int bands;
	} cases[] = {
		{ LAT_SQUARE, "HPHPPHHPHPPHPHHP", 3 },
		{ LAT_CUBIC, "HPHHPPHHH", 3 },
		{ LAT_SQUARE, "PPPP", 0 },
		{ LAT_SQUARE, "H", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *one = evaluation(cases[i].kind, cases[i].seq, 1);
		json_t *two = evaluation(cases[i].kind, cases[i].seq, 2);
		sf_err err = { 0 };
		char *a = lat_evaluation_svg(one, &err), *b = lat_evaluation_svg(two, &err);
		if (!a || !b)
			fail_msg("%s: %s", cases[i].seq, err.msg);
		assert_string_equal(a, b);
		assert_svg(a, cases[i].seq);
		assert_int_equal(count(a, "class=\"res "), (int)strlen(cases[i].seq));
		assert_int_equal(count(a, "class=\"bar\""),
				 json_array_size(json_object_get(one, "histogram")));
		assert_int_equal(count(a, "class=\"band\""), cases[i].bands);
		/* The fold drawn is the first best one: it scores max_score. */
		assert_int_equal(count(a, "class=\"contact\""),
				 json_integer_value(json_object_get(one, "max_score")));
		free(a);
		free(b);
		json_decref(one);
		json_decref(two);
	}
}

/* ---- racetrack ---- */

static void racetrack_contents(const json_t *level, const char *svg)
{
	const json_t *puzzle = json_object_get(level, "puzzle");
	int segments = (int)json_array_size(json_object_get(puzzle, "segments"));
	assert_true(segments >= 8);
	assert_int_equal(count(svg, "class=\"road\""), 1);
	assert_int_equal(count(svg, "class=\"asphalt\""), 1);
	assert_int_equal(count(svg, "class=\"seg\""), segments);
	assert_int_equal(count(svg, "class=\"px-col\""), segments);
	assert_int_equal(count(svg, "class=\"checkpoint\""), segments - 1);
	assert_int_equal(count(svg, "class=\"start\""), 1);
	assert_int_equal(count(svg, "class=\"target\""), 1);
	assert_int_equal(count(svg, "class=\"simulated\""), 1);
	assert_int_equal(count(svg, "class=\"elevation\""), 1);
	/* The legend explains the checkpoints' discs and, when a segment was
	 * never finished, its grey. */
	const char *legend = strstr(svg, "class=\"legend\"");
	assert_non_null(legend);
	assert_non_null(strstr(legend, ">checkpoint</text>"));
	int unfinished = 0;
	for (int k = 0; k < segments; k++)
		unfinished |=
			json_number_value(json_object_get(
				json_array_get(json_object_get(puzzle, "segments"), (size_t)k),
				"simulated_px")) < 0;
	assert_int_equal(strstr(legend, ">not reached</text>") != NULL, unfinished);
	/* The road passes every spline sample: as many "L" as samples - 1, twice. */
	const char *road = strstr(svg, "class=\"road\"");
	const char *end = strstr(road, "/>");
	int ls = 0;
	for (const char *p = road; p < end; p++)
		ls += *p == 'L';
	assert_int_equal(ls, (int)json_array_size(json_object_get(puzzle, "spline")) - 1);
}

static void test_racetrack_levels(void **state)
{
	(void)state;
	static const gen_case cases[] = {
		{ "racetrack", 1, "{\"population\":6,\"generations\":2}" },
		{ "racetrack", 2,
		  "{\"population\":6,\"generations\":2,\"count\":2,\"target\":[0.9,0.1,0.9]}" },
		{ "racetrack", 3, "{\"population\":4,\"generations\":1,\"points\":20}" },
	};
	assert_true(check_cases(cases, sizeof cases / sizeof cases[0], racetrack_contents) >= 3);
}

/* ---- digger ---- */

static void digger_contents(const json_t *level, const char *svg)
{
	const json_t *puzzle = json_object_get(level, "puzzle");
	int w = (int)json_integer_value(json_object_get(puzzle, "width"));
	int h = (int)json_integer_value(json_object_get(puzzle, "height"));
	assert_int_equal(count(svg, "class=\"machine\""),
			 json_array_size(json_object_get(puzzle, "machines")));
	int gold = (int)json_array_size(json_object_get(puzzle, "gold"));
	assert_int_equal(count(svg, "class=\"gold\""), gold);
	assert_int_equal(count(svg, "class=\"cell "), w * h);
	const json_t *arrows = json_object_get(puzzle, "arrows");
	int shown = 0;
	for (size_t i = 0; i < json_array_size(arrows); i++)
		shown += json_integer_value(json_object_get(json_array_get(arrows, i), "uses")) > 0;
	assert_int_equal(count(svg, "class=\"arrow\""), shown);
	assert_int_equal(count(svg, "class=\"arrow hidden\""), 2 * (w + h) - shown);
	/* Gold carries its order exactly when the level collects it in order (and
	 * then the legend's coin shows a 1 too). */
	int ordered =
		json_is_true(json_object_get(json_object_get(puzzle, "rules"), "gold_in_order"));
	assert_int_equal(count(svg, "fill=\"#7a4b00\">"), ordered ? gold + 1 : 0);
	const json_t *cells = json_object_get(puzzle, "cells");
	/* The legend: one entry for each symbol drawn, and none for one that is not. */
	static const char *const terrains[7] = { "mud", "stone", "web",   "treasure",
						 "ice", "lava",  "energy" };
	static const char *const labels[7] = {
		">mud<",
		">stone: blocks<",
		">web: gold counts from visit n<",
		">treasure: gives arrows a use<",
		">ice: freezes<",
		">lava: thaws the frozen<",
		">energy: n turns back<",
	};
	int used[7] = { 0 }, gift = 0, dot = 0, listed = 0;
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *c = json_array_get(cells, i);
		const char *t = json_string_value(json_object_get(c, "terrain"));
		char cls[48];
		snprintf(cls, sizeof cls, "class=\"cell %s\"", t);
		assert_non_null(strstr(svg, cls));
		for (int k = 0; k < 7; k++)
			used[k] |= !strcmp(t, terrains[k]);
		listed += strcmp(t, "mud") != 0;
		gift |= !strcmp(t, "treasure") &&
			json_integer_value(json_object_get(c, "param")) > 0;
		dot |= (!strcmp(t, "stone") || !strcmp(t, "web")) &&
		       json_array_size(json_object_get(c, "machines")) > 0;
	}
	used[0] |= listed < w * h;
	assert_int_equal(gift, count(svg, "class=\"gift\"") > 0);
	int entries = 2 + (shown > 0) + (shown < 2 * (w + h)) + gift + dot;
	for (int k = 0; k < 7; k++) {
		entries += used[k];
		if (used[k] != (strstr(svg, labels[k]) != NULL))
			fail_msg("legend: %s is %s but its entry %s", terrains[k],
				 used[k] ? "used" : "not used",
				 used[k] ? "is missing" : "is there");
	}
	assert_int_equal(count(svg, "class=\"legend-entry\""), entries);
	assert_int_equal(strstr(svg, ">arrow: n uses left<") != NULL, shown > 0);
	assert_int_equal(strstr(svg, ">hidden arrow: no use yet<") != NULL, shown < 2 * (w + h));
	assert_int_equal(strstr(svg, ">the arrow a treasure refills<") != NULL, gift);
	assert_int_equal(strstr(svg, ">only the machine of that colour<") != NULL, dot);
	assert_non_null(strstr(svg, ordered ? ">gold, in this order<" : ">gold<"));
}

/*
 * The legend's labels (a <text> with only x and y) of a digger picture:
 * their count, and fails unless each, at 7 px a character, ends inside the
 * page's cream card (24 px from the right edge) and above its bottom.
 * Returns the number of rows they take.
 */
static int legend_rows(const char *svg, int *labels)
{
	double width, height;
	assert_int_equal(sscanf(strstr(svg, "<svg "),
				"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lf\" "
				"height=\"%lf\"",
				&width, &height),
			 2);
	const char *at = strstr(svg, "class=\"legend\"");
	assert_non_null(at);
	double rows_y[16];
	int rows = 0;
	*labels = 0;
	while ((at = strstr(at + 1, "<text x=\""))) {
		double x, y;
		char label[80];
		if (sscanf(at, "<text x=\"%lf\" y=\"%lf\">%79[^<]", &x, &y, label) != 3)
			continue;
		++*labels;
		if (x + 7.0 * (double)strlen(label) > width - 24 + 0.01 || y > height - 20)
			fail_msg("legend label '%s' at %g,%g passes the card of %gx%g", label, x, y,
				 width, height);
		int seen = 0;
		for (int r = 0; r < rows; r++)
			seen |= rows_y[r] == y;
		if (!seen && rows < 16)
			rows_y[rows++] = y;
	}
	return rows;
}

/*
 * A narrow level with every symbol the picture has: every terrain, a
 * treasure's triangles, machine dots on stone and web, numbered gold,
 * arrows with uses and hidden ones. The legend lists all 13 and wraps into
 * rows inside the page, which grows to hold them.
 */
static void test_digger_legend(void **state)
{
	(void)state;
	const char *text =
		"{\"kind\":\"digger\",\"id\":\"dig_0123456789abcdef0123456789abcdef\",\"puzzle\":{"
		"\"width\":3,"
		"\"height\":3,\"turns\":9,\"rules\":{\"gold_in_order\":true,\"no_shuffle\":"
		"true,\"no_backtrack\":true,\"any_direction\":true,\"single_use\":true},"
		"\"machines\":[{\"x\":0,\"y\":0},{\"x\":1,\"y\":0}],"
		"\"gold\":[{\"x\":2,\"y\":2,\"order\":1},{\"x\":0,\"y\":2,\"order\":2}],"
		"\"cells\":[{\"x\":2,\"y\":0,\"terrain\":\"stone\",\"machines\":[0]},"
		"{\"x\":0,\"y\":1,\"terrain\":\"web\",\"param\":2,\"machines\":[1]},"
		"{\"x\":1,\"y\":1,\"terrain\":\"treasure\",\"param\":5},"
		"{\"x\":2,\"y\":1,\"terrain\":\"ice\"},{\"x\":0,\"y\":2,\"terrain\":\"lava\"},"
		"{\"x\":1,\"y\":2,\"terrain\":\"energy\",\"param\":3}],"
		"\"arrows\":[{\"side\":\"left\",\"index\":0,\"uses\":2},"
		"{\"side\":\"top\",\"index\":1,\"uses\":1,\"dir\":\"down\"}]}}";
	json_t *level = json_loads(text, 0, NULL);
	assert_non_null(level);
	char *svg = picture(level);
	assert_svg(svg, "legend level");
	digger_contents(level, svg);
	int labels, rows = legend_rows(svg, &labels);
	assert_int_equal(labels, 13);
	assert_true(rows >= 3);
	/* The rules take a line of their own: they do not fit after the id. */
	assert_non_null(strstr(svg, "y=\"92\" font-size=\"11\" fill=\"#8a6a52\">rules: no "
				    "shuffle, no backtrack, gold in order, any direction, single "
				    "use<"));
	free(svg);
	/* With fewer symbols, fewer entries and rows, and a shorter page. */
	json_t *plain = json_loads(text, 0, NULL);
	json_object_del(json_object_get(plain, "puzzle"), "cells");
	json_object_set_new(json_object_get(json_object_get(plain, "puzzle"), "rules"),
			    "gold_in_order", json_false());
	char *small = picture(plain);
	digger_contents(plain, small);
	int few, small_rows = legend_rows(small, &few);
	assert_int_equal(few, 5); /* machines, arrow, hidden arrow, gold, mud */
	assert_true(small_rows < rows);
	free(small);
	json_decref(plain);
	json_decref(level);
}

static void test_digger_levels(void **state)
{
	(void)state;
	static const gen_case cases[] = {
		{ "digger", 1, "{\"difficulty\":\"easiest\",\"count\":2}" },
		{ "digger", 2, "{\"difficulty\":\"medium\",\"gold_in_order\":true}" },
		{ "digger", 3, "{\"difficulty\":\"hard\",\"count\":2}" },
		{ "digger", 1, "{\"difficulty\":\"hardest\"}" },
		{ "digger", 4, "{\"difficulty\":\"hardest\",\"width\":10,\"height\":6}" },
		{ "digger", 4, "{\"difficulty\":\"hardest\"}" },
		{ "digger", 5, "{\"difficulty\":\"expert\",\"gold_in_order\":true}" },
	};
	assert_true(check_cases(cases, sizeof cases / sizeof cases[0], digger_contents) >= 9);
	/* Hardest seed 4 uses all six terrains: its legend wraps and stays inside. */
	json_t *doc = generate("digger", 4, "{\"difficulty\":\"hardest\"}", 1);
	char *svg = picture(json_array_get(json_object_get(doc, "levels"), 0));
	int labels;
	assert_true(legend_rows(svg, &labels) >= 2);
	assert_true(labels >= 10);
	free(svg);
	json_decref(doc);
}

/* ---- bad documents ---- */

/*
 * Sets (or with value NULL removes) the member at `path` in `root`: keys
 * separated by '.', a number indexing an array. Steals `value`.
 */
static void set_path(json_t *root, const char *path, json_t *value)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	json_t *at = root;
	char *save = NULL, *key = strtok_r(buf, ".", &save);
	for (char *next; key; key = next) {
		next = strtok_r(NULL, ".", &save);
		int array = json_is_array(at);
		size_t i = (size_t)atoi(key);
		if (next) {
			at = array ? json_array_get(at, i) : json_object_get(at, key);
			assert_non_null(at);
		} else if (array) {
			if (value)
				json_array_set_new(at, i, value);
			else
				json_array_remove(at, i);
		} else if (value) {
			json_object_set_new(at, key, value);
		} else {
			json_object_del(at, key);
		}
	}
}

typedef struct bad_case {
	const char *path;
	const char *value; /* JSON, or NULL to remove */
	const char *message;
} bad_case;

static void expect_bad(const json_t *good, const bad_case *cases, size_t n)
{
	const sf_kind *k = sf_kind_find(json_string_value(json_object_get(good, "kind")));
	for (size_t i = 0; i < n; i++) {
		json_t *doc = json_deep_copy(good);
		json_t *v =
			cases[i].value ? json_loads(cases[i].value, JSON_DECODE_ANY, NULL) : NULL;
		if (cases[i].value && !v)
			fail_msg("bad test value %s", cases[i].value);
		set_path(doc, cases[i].path, v);
		sf_err err = { 0 };
		char *svg = k->level_svg(doc, &err);
		if (svg || err.code != SF_EINVAL || !strstr(err.msg, cases[i].message))
			fail_msg("%s %s = %s: %s (code %d), expected SF_EINVAL naming \"%s\"",
				 k->name, cases[i].path,
				 cases[i].value ? cases[i].value : "(removed)",
				 svg ? "a picture" : err.msg, err.code, cases[i].message);
		json_decref(doc);
	}
}

static void test_bad_documents(void **state)
{
	(void)state;
	char *(*hooks[])(const json_t *, sf_err *) = { lat_level_svg, trk_level_svg, dig_level_svg,
						       lat_evaluation_svg };
	json_t *junk[] = { json_array(), json_string("x"), json_object(),
			   json_pack("{s:s}", "kind", "fractal") };
	for (size_t h = 0; h < 4; h++) {
		sf_err err = { 0 };
		assert_null(hooks[h](NULL, &err));
		assert_int_equal(err.code, SF_EINVAL);
		for (size_t j = 0; j < 4; j++) {
			err.code = 0;
			assert_null(hooks[h](junk[j], &err));
			assert_int_equal(err.code, SF_EINVAL);
		}
	}
	for (size_t j = 0; j < 4; j++)
		json_decref(junk[j]);

	json_t *lat =
		generate("lattice", 1, "{\"length\":12,\"population\":10,\"generations\":4}", 1);
	json_t *trk = generate("racetrack", 1, "{\"population\":4,\"generations\":1}", 1);
	json_t *dig = generate("digger", 1, "{\"difficulty\":\"hardest\"}", 1);
	const json_t *lv = json_array_get(json_object_get(lat, "levels"), 0);
	const json_t *tv = json_array_get(json_object_get(trk, "levels"), 0);
	const json_t *dv = json_array_get(json_object_get(dig, "levels"), 0);
	/* Each kind refuses the others' levels. */
	sf_err err = { 0 };
	assert_null(lat_level_svg(dv, &err));
	assert_non_null(strstr(err.msg, "kind"));
	assert_null(trk_level_svg(lv, &err));
	assert_null(dig_level_svg(tv, &err));
	assert_null(lat_evaluation_svg(lv, &err));
	assert_int_equal(err.code, SF_EINVAL);

	static const bad_case lattice_bad[] = {
		{ "kind", "\"digger\"", "kind" },
		{ "puzzle", NULL, "puzzle" },
		{ "puzzle.sequence", "\"HPXHPPHPHHPH\"", "puzzle.sequence" },
		{ "puzzle.sequence", "\"\"", "puzzle.sequence" },
		{ "puzzle.lattice", "\"hexagonal\"", "puzzle.lattice" },
		{ "solution.band_folds.three", "\"RRR\"", "solution.band_folds.three" },
		{ "solution.band_folds.three", "\"RRRRRRRRRRF\"", "bond 11" },
		{ "solution.band_folds.three", "\"RULDRRRRRRR\"", "lands on residue 1" },
		{ "solution.band_folds.three", "7", "solution.band_folds.three" },
		{ "stats.histogram", "[]", "stats.histogram" },
		{ "stats.histogram.0", "-5", "stats.histogram[0]" },
		{ "stats.histogram.1", "\"many\"", "stats.histogram[1]" },
		{ "stars.thresholds", "[5, 3, 9]", "stars.thresholds[1]" },
		{ "stars.thresholds", "[1, 2, 99]", "stars.thresholds[2]" },
		{ "stars.thresholds", "\"three\"", "stars.thresholds" },
		{ "stars", NULL, "stars" },
	};
	expect_bad(lv, lattice_bad, sizeof lattice_bad / sizeof lattice_bad[0]);
	static const bad_case racetrack_bad[] = {
		{ "kind", "\"lattice\"", "kind" },
		{ "puzzle.spline.2", "[1, 2]", "puzzle.spline[2]" },
		{ "puzzle.spline.3.0", "\"x\"", "puzzle.spline[3]" },
		{ "puzzle.spline", "[]", "puzzle.spline" },
		{ "puzzle.segments.1.start_sample", "0", "puzzle.segments[1].start_sample" },
		{ "puzzle.segments.2.start_sample", "100000", "puzzle.segments[2].start_sample" },
		{ "puzzle.segments.0.simulated_px", "2", "puzzle.segments[0].simulated_px" },
		{ "puzzle.segments.0.simulated_px", NULL, "puzzle.segments[0].simulated_px" },
		{ "puzzle.segments", "[]", "puzzle.segments" },
		{ "params.target", NULL, "params.target" },
		{ "params.target.1", "1.5", "params.target[1]" },
		{ "puzzle.checkpoints", "[]", "puzzle.checkpoints" },
		{ "puzzle.start_line.direction", "[1]", "puzzle.start_line.direction" },
		{ "puzzle.start_line", NULL, "puzzle.start_line" },
		{ "puzzle.width", "\"wide\"", "puzzle.width" },
		{ "puzzle.length", "-3", "puzzle.length" },
	};
	expect_bad(tv, racetrack_bad, sizeof racetrack_bad / sizeof racetrack_bad[0]);
	static const bad_case digger_bad[] = {
		{ "kind", "\"racetrack\"", "kind" },
		{ "puzzle.width", "11", "puzzle.width" },
		{ "puzzle.height", "0", "puzzle.height" },
		{ "puzzle.turns", NULL, "puzzle.turns" },
		{ "puzzle.machines", "[]", "puzzle.machines" },
		{ "puzzle.machines.0.x", "99", "puzzle.machines[0].x" },
		{ "puzzle.machines.1", "3", "puzzle.machines[1]" },
		{ "puzzle.cells.0.terrain", "\"sand\"", "puzzle.cells[0].terrain" },
		{ "puzzle.cells.0.machines", "[7]", "puzzle.cells[0].machines[0]" },
		{ "puzzle.cells.0.param", "256", "puzzle.cells[0].param" },
		{ "puzzle.cells", "{}", "puzzle.cells" },
		{ "puzzle.arrows.0.side", "\"middle\"", "puzzle.arrows[0].side" },
		{ "puzzle.arrows.0.index", "9", "puzzle.arrows[0].index" },
		{ "puzzle.arrows.0.dir", "\"sideways\"", "puzzle.arrows[0].dir" },
		{ "puzzle.arrows.0.uses", "-1", "puzzle.arrows[0].uses" },
		{ "puzzle.gold", "[]", "puzzle.gold" },
		{ "puzzle.gold.0.order", "0", "puzzle.gold[0].order" },
		{ "puzzle.rules", "3", "puzzle.rules" },
	};
	expect_bad(dv, digger_bad, sizeof digger_bad / sizeof digger_bad[0]);
	json_decref(lat);
	json_decref(trk);
	json_decref(dig);
}

/* A random node of `root` other than root itself, with its parent and key or index. */
static int pick_node(rng *r, json_t *root, json_t **parent, const char **key, size_t *index)
{
	json_t *at = root;
	for (int depth = 0;; depth++) {
		size_t n = json_is_object(at) ? json_object_size(at) : json_array_size(at);
		if (!n || (depth && rng_below(r, 3) == 0))
			return depth > 0;
		size_t i = (size_t)rng_below(r, n);
		*parent = at;
		if (json_is_object(at)) {
			void *it = json_object_iter(at);
			for (size_t k = 0; k < i; k++)
				it = json_object_iter_next(at, it);
			*key = json_object_iter_key(it);
			at = json_object_iter_value(it);
		} else {
			*key = NULL;
			*index = i;
			at = json_array_get(at, i);
		}
	}
}

/*
 * Damages a copy of each kind's level at random, 300 times (a member
 * removed or replaced by a value of another type or out of range): every
 * draw gives either a well-formed picture or NULL with SF_EINVAL and a
 * message, never a crash (the sanitizer build runs this too).
 */
static void test_random_damage(void **state)
{
	(void)state;
	json_t *docs[] = {
		generate("lattice", 2, "{\"lattice\":\"cubic\",\"length\":10,\"generations\":2}",
			 1),
		generate("racetrack", 2, "{\"population\":4,\"generations\":1}", 1),
		generate("digger", 4, "{\"difficulty\":\"hardest\"}", 1),
	};
	static const char *const values[] = { "null",  "-1",  "0",    "1e300", "0.5", "\"\"",
					      "[]",    "{}",  "true", "[[]]",  "7",   "\"H\"",
					      "[0,0]", "255", "-0.0", "64" };
	rng r;
	rng_seed(&r, 7);
	int drawn = 0, refused = 0;
	for (size_t d = 0; d < 3; d++) {
		const json_t *good = json_array_get(json_object_get(docs[d], "levels"), 0);
		for (int i = 0; i < 300; i++) {
			json_t *doc = json_deep_copy(good), *parent = NULL;
			const char *key = NULL;
			size_t index = 0;
			for (int hits = 1 + (int)rng_below(&r, 3); hits > 0; hits--) {
				if (!pick_node(&r, doc, &parent, &key, &index))
					continue;
				json_t *v = rng_below(&r, 5) ? json_loads(values[rng_below(&r, 16)],
									  JSON_DECODE_ANY, NULL)
							     : NULL;
				if (key && v)
					json_object_set_new(parent, key, v);
				else if (key)
					json_object_del(parent, key);
				else if (v)
					json_array_set_new(parent, index, v);
				else
					json_array_remove(parent, index);
			}
			const sf_kind *k =
				sf_kind_find(json_string_value(json_object_get(good, "kind")));
			sf_err err = { 0 };
			char *svg = k->level_svg(doc, &err);
			if (svg) {
				assert_svg(svg, k->name);
				drawn++;
			} else {
				if (err.code != SF_EINVAL || !err.msg[0])
					fail_msg("%s: code %d: %s", k->name, err.code, err.msg);
				refused++;
			}
			free(svg);
			json_decref(doc);
		}
		json_decref(docs[d]);
	}
	/* Both outcomes happen: the damage reaches drawn fields and ignored ones. */
	assert_true(drawn > 50);
	assert_true(refused > 50);
}

/* ---- docs/img ---- */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc((size_t)n + 1);
	if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		text = NULL;
	}
	if (text)
		text[n] = '\0';
	fclose(f);
	return text;
}

/* docs/img/<kind>.svg is what docs/img/README.md's command makes now. */
static void test_docs_pictures(void **state)
{
	(void)state;
	static const gen_case cases[] = {
		{ "lattice", 1, NULL },
		{ "racetrack", 1, NULL },
		{ "digger", 1, "{\"difficulty\":\"hardest\"}" },
	};
	for (size_t i = 0; i < 3; i++) {
		char path[64];
		snprintf(path, sizeof path, "docs/img/%s.svg", cases[i].kind);
		char *file = read_file(path);
		if (!file)
			fail_msg("%s: cannot read it (run from the repository root)", path);
		json_t *doc = generate(cases[i].kind, cases[i].seed, cases[i].params, 2);
		char *svg = picture(json_array_get(json_object_get(doc, "levels"), 0));
		if (strcmp(svg, file))
			fail_msg("%s is stale: remake it with the command in docs/img/README.md",
				 path);
		free(svg);
		free(file);
		json_decref(doc);
	}
}

int main(void)
{
	json_object_seed(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer),           cmocka_unit_test(test_lattice_levels),
		cmocka_unit_test(test_lattice_star),     cmocka_unit_test(test_evaluation),
		cmocka_unit_test(test_racetrack_levels), cmocka_unit_test(test_digger_levels),
		cmocka_unit_test(test_digger_legend),    cmocka_unit_test(test_bad_documents),
		cmocka_unit_test(test_random_damage),    cmocka_unit_test(test_docs_pictures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
