/*
 * test_racetrack_px.c - the nearest-neighbour experience model of the
 * racetrack kind (core/racetrack/px.h): feature windows computed by hand,
 * nearest neighbour against a brute force written here, deterministic ties,
 * the CSV and JSON upload codecs (every rejected case names its problem; no
 * input crashes them) and the shipped SYNTHETIC trace set, which must parse,
 * return each trace's own label, regenerate byte for byte, spread its labels
 * over 0..1, depend on its seed alone, and predict a PX that follows the
 * race's speed on a random track.
 *
 * Run from the repository root (make test does), where data/px/ lies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "racetrack/px.h"
#include "racetrack/race.h"
#include "racetrack/search.h"
#include "rng.h"

#define SYNTH_PATH "data/px/synthetic.csv"

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run the test from the repository root)", path);
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* An exact-size heap copy, so that ASan flags any read past the end. */
static char *exact_copy(const char *text, size_t len)
{
	char *p = malloc(len ? len : 1);
	assert_non_null(p);
	memcpy(p, text, len);
	return p;
}

static int printable(const char *msg)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return 0;
	return 1;
}

static void assert_models_equal(const trk_px_model *a, const trk_px_model *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			assert_true(a->traces[i].window[f] == b->traces[i].window[f]);
		assert_true(a->traces[i].intensity == b->traces[i].intensity);
	}
}

/* ---- feature windows ---- */

static void test_feature_names(void **state)
{
	(void)state;
	static const char *const want[TRK_PX_NFEAT] = { "speed",     "speed_sd", "rel_speed",
							"proximity", "gained",   "lost",
							"standing",  "braking" };
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		assert_string_equal(trk_px_feature_name(f), want[f]);
	assert_null(trk_px_feature_name(TRK_PX_NFEAT));
	assert_null(trk_px_feature_name(-1));
}

static void test_window_by_hand(void **state)
{
	(void)state;
	trk_px_sample s[4] = {
		{ .speed = 25,
		  .top_speed = 50,
		  .nvisible = 1,
		  .visible_speed = { 30 },
		  .standing = 3,
		  .gap_ahead = 10,
		  .gap_behind = 30 },
		{ .speed = 30,
		  .top_speed = 50,
		  .nvisible = 2,
		  .visible_speed = { 30, 40 },
		  .standing = 2,
		  .gap_ahead = 20,
		  .gap_behind = 8,
		  .braking = true },
		{ .speed = 40,
		  .top_speed = 50,
		  .standing = 2,
		  .gap_ahead = -1,
		  .gap_behind = -1,
		  .braking = true },
		{ .speed = 45, .top_speed = 50, .standing = 3, .gap_ahead = 50, .gap_behind = 50 },
	};
	double f[TRK_PX_NFEAT];
	sf_err err = { 0 };
	assert_int_equal(trk_px_window_features(s, 4, f, &err), 0);
	/* r = 0.5, 0.6, 0.8, 0.9: mean 0.7, population variance 0.1 / 4. */
	assert_float_equal(f[TRK_PX_SPEED], 0.7, 1e-12);
	assert_float_equal(f[TRK_PX_SPEED_SD], 2 * sqrt(0.025), 1e-12);
	/* (30 - 25) / 50 and ((30 + 40) / 2 - 30) / 50: both 0.1. */
	assert_float_equal(f[TRK_PX_REL_SPEED], 0.55, 1e-12);
	/* The closest gap is 8 m behind at tick 1. */
	assert_float_equal(f[TRK_PX_PROXIMITY], 1 - 8.0 / 40, 1e-12);
	assert_float_equal(f[TRK_PX_GAINED], 1.0 / 3, 1e-12); /* 3 -> 2 */
	assert_float_equal(f[TRK_PX_LOST], 1.0 / 3, 1e-12);   /* 2 -> 3 */
	assert_float_equal(f[TRK_PX_STANDING], (2.5 - 1) / 3, 1e-12);
	assert_float_equal(f[TRK_PX_BRAKING], 0.5, 1e-12);

	/* Alone, leading, over the limit: clamped speed, neutral rel_speed. */
	trk_px_sample solo = {
		.speed = 70, .top_speed = 60, .standing = 1, .gap_ahead = -1, .gap_behind = 100
	};
	assert_int_equal(trk_px_window_features(&solo, 1, f, &err), 0);
	static const double want[TRK_PX_NFEAT] = { 1, 0, 0.5, 0, 0, 0, 0, 0 };
	for (int i = 0; i < TRK_PX_NFEAT; i++)
		assert_float_equal(f[i], want[i], 1e-15);

	/* Positions are capped at 3; last place for the whole window. */
	trk_px_sample swing[6];
	static const int standing[6] = { 4, 1, 4, 1, 4, 4 };
	for (int i = 0; i < 6; i++)
		swing[i] = (trk_px_sample){ .speed = 0,
					    .top_speed = 1,
					    .standing = standing[i],
					    .gap_ahead = 0,
					    .gap_behind = -1 };
	assert_int_equal(trk_px_window_features(swing, 6, f, &err), 0);
	assert_float_equal(f[TRK_PX_GAINED], 1, 0);
	assert_float_equal(f[TRK_PX_LOST], 1, 0);
	assert_float_equal(f[TRK_PX_PROXIMITY], 1, 0);
	assert_float_equal(f[TRK_PX_STANDING], (3.0 - 1) / 3, 1e-12);
}

static void test_window_rejects_bad_samples(void **state)
{
	(void)state;
	static const struct {
		const char *field;
		trk_px_sample sample;
	} cases[] = {
		{ "speed", { .speed = -1, .top_speed = 1, .standing = 1 } },
		{ "speed", { .speed = NAN, .top_speed = 1, .standing = 1 } },
		{ "top_speed", { .speed = 1, .top_speed = 0, .standing = 1 } },
		{ "nvisible", { .speed = 1, .top_speed = 1, .standing = 1, .nvisible = 4 } },
		{ "visible_speed[1]",
		  { .speed = 1,
		    .top_speed = 1,
		    .standing = 1,
		    .nvisible = 2,
		    .visible_speed = { 1, INFINITY } } },
		{ "standing", { .speed = 1, .top_speed = 1, .standing = 0 } },
		{ "standing", { .speed = 1, .top_speed = 1, .standing = 5 } },
		{ "gaps", { .speed = 1, .top_speed = 1, .standing = 1, .gap_ahead = INFINITY } },
	};
	double f[TRK_PX_NFEAT];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		trk_px_sample s[2] = {
			{ .speed = 1, .top_speed = 1, .standing = 1 },
			cases[i].sample,
		};
		sf_err err = { 0 };
		assert_int_equal(trk_px_window_features(s, 2, f, &err), SF_EINVAL);
		if (!strstr(err.msg, cases[i].field) || !strstr(err.msg, "sample 1"))
			fail_msg("case %zu: message \"%s\" does not name %s of sample 1", i,
				 err.msg, cases[i].field);
	}
	sf_err err = { 0 };
	assert_int_equal(trk_px_window_features(NULL, 0, f, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "at least one sample"));
}

/* ---- the model ---- */

static size_t brute_nearest(const trk_px_trace *t, size_t n, const double *w)
{
	size_t best = SIZE_MAX;
	long double best_d = 0;
	for (size_t i = 0; i < n; i++) {
		long double d = 0;
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			d += ((long double)t[i].window[f] - w[f]) *
			     ((long double)t[i].window[f] - w[f]);
		if (best == SIZE_MAX || d < best_d) {
			best = i;
			best_d = d;
		}
	}
	return best;
}

static void test_nearest_matches_brute_force(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 42);
	enum { N = 300, QUERIES = 2000 };
	trk_px_trace *t = malloc(N * sizeof *t);
	assert_non_null(t);
	for (size_t i = 0; i < N; i++) {
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			t[i].window[f] = rng_unit(&r);
		t[i].intensity = (double)i / N;
	}
	sf_err err = { 0 };
	trk_px_model *m = trk_px_model_new(t, N, &err);
	assert_non_null(m);
	for (size_t q = 0; q < QUERIES; q++) {
		double w[TRK_PX_NFEAT];
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			w[f] = rng_unit(&r);
		size_t want = brute_nearest(t, N, w);
		assert_int_equal(trk_px_nearest(m, w), want);
		assert_true(trk_px_predict(m, w) == t[want].intensity);
	}
	/* Every stored window returns its own label. */
	for (size_t i = 0; i < N; i++)
		assert_true(trk_px_predict(m, t[i].window) == t[i].intensity);
	trk_px_model_free(m);
	free(t);
}

static void test_ties_go_to_lowest_index(void **state)
{
	(void)state;
	trk_px_trace t[4];
	memset(t, 0, sizeof t);
	for (int f = 0; f < TRK_PX_NFEAT; f++) {
		t[0].window[f] = 0.9;
		t[1].window[f] = 0.4; /* 0.4 and 0.6 are equally near 0.5... */
		t[2].window[f] = 0.6;
		t[3].window[f] = 0.4; /* ...and a duplicate of trace 1 */
	}
	t[0].intensity = 0.0;
	t[1].intensity = 0.25;
	t[2].intensity = 0.75;
	t[3].intensity = 1.0;
	double q[TRK_PX_NFEAT];
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		q[f] = 0.5;
	sf_err err = { 0 };
	trk_px_model *m = trk_px_model_new(t, 4, &err);
	assert_non_null(m);
	for (int rep = 0; rep < 3; rep++)
		assert_int_equal(trk_px_nearest(m, q), 1);
	assert_int_equal(trk_px_nearest(m, t[3].window), 1); /* the first duplicate */
	trk_px_model_free(m);

	/* Swap the tied pair: still the lower index, now trace 1 = 0.6. */
	trk_px_trace swapped[2] = { t[2], t[1] };
	m = trk_px_model_new(swapped, 2, &err);
	assert_non_null(m);
	assert_int_equal(trk_px_nearest(m, q), 0);
	assert_true(trk_px_predict(m, q) == 0.75);
	trk_px_model_free(m);
}

/*
 * The nearest-neighbour walk (px.c walks outward in the order of feature 0
 * and stops a side on its gap alone) against the plain scan it replaces,
 * in doubles with a strict <: on a coarse grid, where feature 0 repeats
 * and distances tie all the time, the index must be the scan's exactly.
 */
static void test_nearest_walk_equals_scan(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 7);
	enum { N = 500, QUERIES = 3000 };
	trk_px_trace *t = malloc(N * sizeof *t);
	assert_non_null(t);
	for (size_t i = 0; i < N; i++) {
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			t[i].window[f] = (double)rng_below(&r, 5) / 4;
		t[i].intensity = rng_unit(&r);
	}
	sf_err err = { 0 };
	trk_px_model *m = trk_px_model_new(t, N, &err);
	assert_non_null(m);
	for (size_t q = 0; q < QUERIES; q++) {
		double w[TRK_PX_NFEAT];
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			w[f] = (double)rng_below(&r, 9) / 8;
		size_t want = 0;
		double best = INFINITY;
		for (size_t i = 0; i < N; i++) {
			double d = 0;
			for (int f = 0; f < TRK_PX_NFEAT; f++)
				d += (t[i].window[f] - w[f]) * (t[i].window[f] - w[f]);
			if (d < best) {
				best = d;
				want = i;
			}
		}
		assert_int_equal(trk_px_nearest(m, w), want);
	}
	trk_px_model_free(m);
	free(t);
}

static void test_model_new_validates(void **state)
{
	(void)state;
	trk_px_trace t = { .window = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 }, .intensity = 0.5 };
	sf_err err = { 0 };
	assert_null(trk_px_model_new(&t, 0, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_non_null(strstr(err.msg, "empty"));
	assert_null(trk_px_model_new(&t, TRK_PX_MAX_TRACES + 1, &err));
	assert_non_null(strstr(err.msg, "too many traces"));
	t.window[TRK_PX_LOST] = NAN;
	assert_null(trk_px_model_new(&t, 1, &err));
	assert_non_null(strstr(err.msg, "lost"));
	t.window[TRK_PX_LOST] = 0;
	t.intensity = 1.01;
	assert_null(trk_px_model_new(&t, 1, &err));
	assert_non_null(strstr(err.msg, "intensity"));
	trk_px_model_free(NULL);
}

/* ---- the shipped synthetic set ---- */

static void test_synthetic_set(void **state)
{
	(void)state;
	size_t len;
	char *file = read_all(SYNTH_PATH, &len);
	assert_non_null(strstr(file, "SYNTHETIC"));
	assert_true(strstr(file, "SYNTHETIC") < strchr(file, '\n'));

	size_t glen;
	sf_err err = { 0 };
	char *gen = trk_px_synth_csv(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, &glen, &err);
	assert_non_null(gen);
	if (glen != len || memcmp(gen, file, len))
		fail_msg("%s differs from the generator's output: rebuild and run "
			 "build/tools/px_synth > %s",
			 SYNTH_PATH, SYNTH_PATH);
	/* Another seed gives another set: the seed is really used. */
	char *other = trk_px_synth_csv(TRK_PX_SYNTH_SEED + 1, TRK_PX_SYNTH_COUNT, &glen, &err);
	assert_non_null(other);
	assert_true(glen != len || memcmp(other, file, len));

	char *copy = exact_copy(file, len);
	trk_px_model *m = trk_px_parse_csv(copy, len, &err);
	if (!m)
		fail_msg("%s", err.msg);
	assert_int_equal(m->n, TRK_PX_SYNTH_COUNT);
	double lo = 1, hi = 0;
	for (size_t i = 0; i < m->n; i++) {
		double label = m->traces[i].intensity;
		if (trk_px_predict(m, m->traces[i].window) != label)
			fail_msg("trace %zu: its own window does not return its label", i);
		lo = label < lo ? label : lo;
		hi = label > hi ? label : hi;
	}
	/* The set spans calm to tense, or it cannot steer a PX curve. */
	assert_true(lo < 0.1);
	assert_true(hi > 0.7);

	trk_px_model_free(m);
	free(copy);
	free(other);
	free(gen);
	free(file);
}

/*
 * The labels: a linear stretch of the stated tension score clipped at its
 * 5 % and 95 % quantiles, so they reach both ends exactly, about 5 % of
 * them sit on each end, and neither half of 0..1 is starved.
 */
static void test_synthetic_labels(void **state)
{
	(void)state;
	sf_err err = { 0 };
	trk_px_model *m = trk_px_synth(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, &err);
	if (!m)
		fail_msg("%s", err.msg);
	assert_int_equal(m->n, TRK_PX_SYNTH_COUNT);
	double lo = 1, hi = 0;
	size_t low = 0, zeros = 0, ones = 0;
	for (size_t i = 0; i < m->n; i++) {
		double label = m->traces[i].intensity;
		lo = label < lo ? label : lo;
		hi = label > hi ? label : hi;
		low += label < 0.5;
		zeros += label == 0;
		ones += label == 1;
	}
	size_t n = m->n, high = n - low;
	print_message("labels: %zu in [0, 0.5), %zu in [0.5, 1]; %zu at 0, %zu at 1\n", low, high,
		      zeros, ones);
	assert_true(lo == 0);
	assert_true(hi == 1);
	assert_true(low * 5 >= n);
	assert_true(high * 5 >= n);
	/* The clip: 5 % of the windows at or under the 5 % quantile (ties may
	 * add a few), as many at or over the 95 % one. */
	assert_true(zeros * 100 >= 4 * n && zeros * 100 <= 7 * n);
	assert_true(ones * 100 >= 4 * n && ones * 100 <= 7 * n);
	trk_px_model_free(m);
}

/* Models differ only when their seeds do. */
static void test_synthetic_seed(void **state)
{
	(void)state;
	sf_err err = { 0 };
	trk_px_model *a = trk_px_synth(7, 200, &err), *b = trk_px_synth(7, 200, &err),
		     *c = trk_px_synth(8, 200, &err);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_models_equal(a, b);
	assert_int_equal(c->n, 200);
	size_t differ = 0;
	for (size_t i = 0; i < a->n; i++)
		differ += memcmp(&a->traces[i], &c->traces[i], sizeof a->traces[i]) != 0;
	assert_true(differ * 2 > a->n);
	trk_px_model_free(a);
	trk_px_model_free(b);
	trk_px_model_free(c);
	/* Out of range counts are refused. */
	assert_null(trk_px_synth(7, 1, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_null(trk_px_synth(7, TRK_PX_MAX_TRACES + 1, &err));
	assert_int_equal(err.code, SF_EINVAL);
}

typedef struct windows {
	double w[4096][TRK_PX_NFEAT];
	size_t n;
} windows;

static void catch_window(void *arg, const double window[TRK_PX_NFEAT])
{
	windows *ws = arg;
	if (ws->n < sizeof ws->w / sizeof ws->w[0])
		memcpy(ws->w[ws->n], window, sizeof ws->w[0]);
	ws->n++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * The shipped model's prediction follows what the track does: over the
 * windows of one race on the valid track of a random genome (the search's
 * default params), the predictions take more than 30 distinct values (in
 * races of at least 45 windows; in any race more than half of them are
 * distinct), and they correlate with the window's speed feature (Pearson
 * r > 0.5). Genomes are drawn until three races of 45 windows or more
 * (laps of about 40 s) have been seen.
 */
static void test_prediction_follows_speed(void **state)
{
	(void)state;
	sf_err err = { 0 };
	trk_px_model *model = trk_px_synth(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, &err);
	assert_non_null(model);
	trk_search_params sp;
	trk_search_params_default(&sp);
	trk_limits lim = trk_search_limits(&sp);
	uint8_t *g = malloc(trk_genome_length(&sp));
	windows *ws = malloc(sizeof *ws);
	double *pred = malloc(sizeof ws->w / sizeof ws->w[0] * sizeof *pred);
	assert_non_null(g);
	assert_non_null(ws);
	assert_non_null(pred);
	rng r;
	rng_seed(&r, 2025);
	int raced = 0, long_races = 0;
	while (long_races < 3) {
		assert_true(raced < 30);
		trk_genome_random(&sp, &r, g);
		trk_track *t = trk_genome_track(&sp, g, &err);
		trk_report rep;
		if (!t || trk_track_check(t, &lim, 0, &rep, &err) != 0) {
			trk_track_free(t);
			continue;
		}
		trk_race_params rp;
		trk_race_params_default(&rp);
		rp.on_window = catch_window;
		rp.on_window_arg = ws;
		ws->n = 0;
		trk_race_result res = { 0 };
		assert_int_equal(trk_race_run(t, &rp, model, rng_next(&r), &res, &err), 0);
		size_t n = ws->n;
		assert_true(n >= 10 && n <= sizeof ws->w / sizeof ws->w[0]);
		double sx = 0, sy = 0;
		for (size_t i = 0; i < n; i++) {
			pred[i] = trk_px_predict(model, ws->w[i]);
			sx += ws->w[i][TRK_PX_SPEED];
			sy += pred[i];
		}
		double mx = sx / (double)n, my = sy / (double)n, sxx = 0, syy = 0, sxy = 0;
		for (size_t i = 0; i < n; i++) {
			double dx = ws->w[i][TRK_PX_SPEED] - mx, dy = pred[i] - my;
			sxx += dx * dx;
			syy += dy * dy;
			sxy += dx * dy;
		}
		double corr = sxy / sqrt(sxx * syy);
		qsort(pred, n, sizeof *pred, cmp_double);
		size_t distinct = 1;
		for (size_t i = 1; i < n; i++)
			distinct += pred[i] != pred[i - 1];
		print_message("race %d (%.0f m): %zu windows, %zu distinct predictions, "
			      "r(speed, PX) = %.3f\n",
			      raced, t->length, n, distinct, corr);
		assert_true(corr > 0.5);
		assert_true(distinct * 2 > n);
		if (n >= 45) {
			assert_true(distinct > 30);
			long_races++;
		}
		trk_race_result_free(&res);
		trk_track_free(t);
		raced++;
	}
	free(pred);
	free(ws);
	free(g);
	trk_px_model_free(model);
}

/* ---- upload codecs ---- */

#define HEADER "speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity\n"
#define ROW "0.5,0.1,0.5,0.2,0,0,0.3,0,0.4\n"

struct bad_case {
	const char *text;
	const char *want[3]; /* substrings the message must contain */
};

static void check_bad(const struct bad_case *c, size_t n, int json)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(c[i].text);
		char *text = exact_copy(c[i].text, len);
		sf_err err = { 0 };
		trk_px_model *m = json ? trk_px_parse_json(text, len, &err)
				       : trk_px_parse_csv(text, len, &err);
		if (m)
			fail_msg("case %zu was accepted: %s", i, c[i].text);
		assert_int_equal(err.code, SF_EINVAL);
		for (int k = 0; k < 3 && c[i].want[k]; k++)
			if (!strstr(err.msg, c[i].want[k]))
				fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.msg,
					 c[i].want[k]);
		assert_true(printable(err.msg));
		free(text);
	}
}

static void test_csv_errors(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{ "", { "no header" } },
		{ "# only a comment\n\n", { "no header" } },
		{ HEADER, { "empty" } },
		{ "speed,speedy,rel_speed,proximity,gained,lost,standing,braking,intensity\n" ROW,
		  { "line 1", "unknown column \"speedy\"" } },
		{ "speed,speed_sd,rel_speed,proximity,gained,lost,standing,intensity\n",
		  { "line 1", "missing column \"braking\"" } },
		{ "speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking\n",
		  { "missing column \"intensity\"" } },
		{ "speed,speed,rel_speed,proximity,gained,lost,standing,braking,intensity\n",
		  { "duplicate column \"speed\"" } },
		{ HEADER ROW HEADER, { "line 3", "column speed", "\"speed\" is not a number" } },
		{ "speed,speed_sd,rel_speed,proximity,gained,lost,standing,braking,intensity,x\n",
		  { "header has 10 columns", "expected 9" } },
		{ HEADER "abc,0.1,0.5,0.2,0,0,0.3,0,0.4\n",
		  { "line 2", "column speed", "\"abc\" is not a number" } },
		{ HEADER "0.5x,0.1,0.5,0.2,0,0,0.3,0,0.4\n", { "\"0.5x\" is not a number" } },
		{ HEADER "0.5,nan,0.5,0.2,0,0,0.3,0,0.4\n", { "column speed_sd", "not finite" } },
		{ HEADER "0.5,0.1,inf,0.2,0,0,0.3,0,0.4\n", { "column rel_speed", "not finite" } },
		{ HEADER "0.5,0.1,0.5,0.2,0,0,0.3,0,1.5\n",
		  { "line 2", "column intensity", "1.5 outside 0..1" } },
		{ HEADER "0.5,0.1,0.5,0.2,0,0,0.3,0,-0.1\n",
		  { "column intensity", "-0.1 outside" } },
		{ HEADER "0.5,0.1,0.5,2,0,0,0.3,0,0.4\n",
		  { "column proximity", "2 outside 0..1" } },
		{ HEADER ROW "0.5,0.1,0.5,0.2,0,0,0.3,0\n", { "line 3", "8 values, expected 9" } },
		{ HEADER "0.5,0.1,0.5,0.2,0,0,0.3,0,0.4,0.1\n", { "line 2", "10 values" } },
		{ HEADER "0.5,,0.5,0.2,0,0,0.3,0,0.4\n", { "column speed_sd", "empty value" } },
		{ "# comment\n" HEADER "\n" ROW "0.5,0.1,0.5,0.2,0,0,0.3,0,\"0.4\"\n",
		  { "line 5", "column intensity", "\"\"0.4\"\" is not a number" } },
		{ HEADER "\xff\x01,0.1,0.5,0.2,0,0,0.3,0,0.4\n", { "\"??\" is not a number" } },
		/* Columns in another order: the message names the column, not its position. */
		{ "intensity,braking,standing,lost,gained,proximity,rel_speed,speed_sd,speed\n"
		  "0.4,0,0.3,0,0,0.2,0.5,0.1,7\n",
		  { "column speed", "7 outside 0..1" } },
	};
	check_bad(cases, sizeof cases / sizeof cases[0], 0);

	/* One trace too many. */
	size_t rowlen = strlen(ROW), n = TRK_PX_MAX_TRACES + 1;
	size_t len = strlen(HEADER) + n * rowlen;
	char *big = malloc(len);
	assert_non_null(big);
	memcpy(big, HEADER, strlen(HEADER));
	for (size_t i = 0; i < n; i++)
		memcpy(big + strlen(HEADER) + i * rowlen, ROW, rowlen);
	sf_err err = { 0 };
	assert_null(trk_px_parse_csv(big, len, &err));
	assert_non_null(strstr(err.msg, "too many traces"));
	assert_non_null(strstr(err.msg, "10000"));
	/* Exactly the limit is fine. */
	trk_px_model *m = trk_px_parse_csv(big, len - rowlen, &err);
	assert_non_null(m);
	assert_int_equal(m->n, TRK_PX_MAX_TRACES);
	trk_px_model_free(m);
	free(big);
}

#define FEATS                                                                                \
	"\"features\": [\"speed\", \"speed_sd\", \"rel_speed\", \"proximity\", \"gained\", " \
	"\"lost\", \"standing\", \"braking\"]"
#define TRACE "{\"window\": [0.5, 0.1, 0.5, 0.2, 0, 0, 0.3, 0], \"intensity\": 0.4}"

static void test_json_errors(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{ "", { "not valid JSON" } },
		{ "{\"features\": [", { "not valid JSON", "line 1" } },
		{ "[]", { "must be an object" } },
		{ "{" FEATS ", \"traces\": [" TRACE "], \"name\": \"x\"}",
		  { "unknown field \"name\"" } },
		{ "{\"traces\": [" TRACE "]}", { "missing field \"features\"" } },
		{ "{" FEATS "}", { "missing field \"traces\"" } },
		{ "{\"features\": \"speed\", \"traces\": []}", { "features: must be an array" } },
		{ "{\"features\": [\"speed\", \"speedy\"], \"traces\": []}",
		  { "features[1]", "unknown feature \"speedy\"" } },
		{ "{\"features\": [\"speed\", 3], \"traces\": []}",
		  { "features[1]", "must be a string" } },
		{ "{\"features\": [\"speed\", \"speed\"], \"traces\": []}",
		  { "features[1]", "duplicate feature \"speed\"" } },
		{ "{\"features\": [\"speed\"], \"traces\": []}",
		  { "missing feature \"speed_sd\"" } },
		{ "{" FEATS ", \"traces\": []}", { "traces", "empty" } },
		{ "{" FEATS ", \"traces\": {}}", { "traces: must be an array" } },
		{ "{" FEATS ", \"traces\": [" TRACE ", 3]}", { "traces[1]", "must be an object" } },
		{ "{" FEATS ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0], \"intensity\": 0.1, "
		  "\"who\": 1}]}",
		  { "traces[0]", "unknown field \"who\"" } },
		{ "{" FEATS ", \"traces\": [{\"intensity\": 0.1}]}",
		  { "traces[0]", "missing window" } },
		{ "{" FEATS ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0]}]}",
		  { "traces[0]", "missing intensity" } },
		{ "{" FEATS ", \"traces\": [" TRACE ", {\"window\": [0,0,0,0,0,0,0], "
		  "\"intensity\": 0.1}]}",
		  { "traces[1].window", "array of 8 numbers" } },
		{ "{" FEATS
		  ", \"traces\": [{\"window\": [0,0,\"x\",0,0,0,0,0], \"intensity\": 0.1}]}",
		  { "traces[0].window[2] (rel_speed)", "must be a number" } },
		{ "{" FEATS
		  ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,1.5], \"intensity\": 0.1}]}",
		  { "traces[0].window[7] (braking)", "1.5 outside 0..1" } },
		{ "{" FEATS ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0], \"intensity\": 2}]}",
		  { "traces[0].intensity", "2 outside 0..1" } },
		{ "{" FEATS ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0], \"intensity\": true}]}",
		  { "traces[0].intensity", "must be a number" } },
		{ "{" FEATS ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0], \"intensity\": NaN}]}",
		  { "not valid JSON" } },
		{ "{" FEATS
		  ", \"traces\": [{\"window\": [0,0,0,0,0,0,0,0], \"intensity\": 1e999}]}",
		  { "not valid JSON" } },
		{ "{" FEATS ", " FEATS ", \"traces\": [" TRACE "]}",
		  { "not valid JSON", "duplicate" } },
		{ "{" FEATS ", \"traces\": [" TRACE "], \"comment\": 3}", { "comment" } },
	};
	check_bad(cases, sizeof cases / sizeof cases[0], 1);

	/* One trace too many, through the json_t entry point. */
	json_error_t jerr;
	json_t *doc = json_loads("{" FEATS ", \"traces\": []}", 0, &jerr);
	json_t *trace = json_loads(TRACE, 0, &jerr);
	assert_non_null(doc);
	assert_non_null(trace);
	json_t *arr = json_object_get(doc, "traces");
	for (int i = 0; i <= TRK_PX_MAX_TRACES; i++)
		assert_int_equal(json_array_append(arr, trace), 0);
	sf_err err = { 0 };
	assert_null(trk_px_model_from_json(doc, &err));
	assert_non_null(strstr(err.msg, "too many traces"));
	json_array_remove(arr, 0);
	trk_px_model *m = trk_px_model_from_json(doc, &err);
	assert_non_null(m);
	assert_int_equal(m->n, TRK_PX_MAX_TRACES);
	trk_px_model_free(m);
	json_decref(trace);
	json_decref(doc);
}

static void test_csv_and_json_agree(void **state)
{
	(void)state;
	/* The same two traces, columns permuted differently in each format. */
	static const char csv[] =
		"# two traces\r\n"
		"braking, intensity ,speed,speed_sd,rel_speed,proximity,gained,lost,standing\r\n"
		"0.25,0.9,0.875,0.125,0.75,0.5,0.3333333333333333,0,0\r\n"
		"\r\n"
		"0,0.05,0.5,0,0.5,0,0,0,1\r\n";
	static const char json[] =
		"{\"comment\": \"two traces\", \"features\": [\"standing\", \"lost\", \"gained\", "
		"\"proximity\", \"rel_speed\", \"speed_sd\", \"speed\", \"braking\"], "
		"\"traces\": [{\"intensity\": 0.9, \"window\": [0, 0, 0.3333333333333333, 0.5, "
		"0.75, 0.125, 0.875, 0.25]}, {\"window\": [1, 0, 0, 0, 0.5, 0, 0.5, 0], "
		"\"intensity\": 0.05}]}";
	sf_err err = { 0 };
	char *a = exact_copy(csv, strlen(csv)), *b = exact_copy(json, strlen(json));
	trk_px_model *mc = trk_px_parse_csv(a, strlen(csv), &err);
	if (!mc)
		fail_msg("%s", err.msg);
	trk_px_model *mj = trk_px_parse_json(b, strlen(json), &err);
	if (!mj)
		fail_msg("%s", err.msg);
	assert_models_equal(mc, mj);
	assert_int_equal(mc->n, 2);
	assert_true(mc->traces[0].window[TRK_PX_SPEED] == 0.875);
	assert_true(mc->traces[0].window[TRK_PX_BRAKING] == 0.25);
	assert_true(mc->traces[1].window[TRK_PX_STANDING] == 1);
	assert_true(mc->traces[1].intensity == 0.05);
	trk_px_model_free(mc);
	trk_px_model_free(mj);
	free(a);
	free(b);

	/* The shipped set, CSV -> model -> JSON text -> model: exactly equal. */
	size_t len;
	char *file = read_all(SYNTH_PATH, &len);
	mc = trk_px_parse_csv(file, len, &err);
	assert_non_null(mc);
	json_t *doc = trk_px_model_json(mc);
	assert_non_null(doc);
	char *text = json_dumps(doc, JSON_COMPACT);
	assert_non_null(text);
	mj = trk_px_parse_json(text, strlen(text), &err);
	if (!mj)
		fail_msg("%s", err.msg);
	assert_models_equal(mc, mj);
	/* And back to CSV: the same text as the file below its comment lines. */
	size_t clen;
	char *again = trk_px_model_csv_digits(mj, NULL, TRK_PX_SYNTH_DIGITS, &clen);
	assert_non_null(again);
	const char *body = strstr(file, "speed,");
	assert_non_null(body);
	assert_int_equal(clen, len - (size_t)(body - file));
	assert_memory_equal(again, body, clen);
	free(again);
	free(text);
	json_decref(doc);
	trk_px_model_free(mc);
	trk_px_model_free(mj);
	free(file);
}

/* Either a model or SF_EINVAL with a printable message; never a crash. */
static void parse_any(const char *text, size_t len, int json)
{
	char *copy = exact_copy(text, len);
	sf_err err = { 0 };
	trk_px_model *m =
		json ? trk_px_parse_json(copy, len, &err) : trk_px_parse_csv(copy, len, &err);
	if (m) {
		assert_true(m->n >= 1 && m->n <= TRK_PX_MAX_TRACES);
		trk_px_model_free(m);
	} else {
		assert_int_equal(err.code, SF_EINVAL);
		assert_true(err.msg[0] != '\0');
		assert_true(printable(err.msg));
	}
	free(copy);
}

static void test_fuzz(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 7);
	char buf[512];
	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t)rng_below(&r, sizeof buf);
		/* Half raw bytes, half drawn from the formats' own alphabet. */
		static const char alpha[] = "0123456789.,-+eE\n\r #\"{}[]:abcdefghinpqrstuvwxyz_";
		int textual = i % 2;
		for (size_t k = 0; k < len; k++)
			buf[k] = textual ? alpha[rng_below(&r, sizeof alpha - 1)]
					 : (char)rng_below(&r, 256);
		parse_any(buf, len, 0);
		parse_any(buf, len, 1);
	}

	/* Every truncation of valid CSV and JSON, then single-byte mutations. */
	static const char csv[] = "# c\n" HEADER ROW ROW "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9\n";
	static const char json[] = "{" FEATS ", \"traces\": [" TRACE ", " TRACE "]}";
	const char *texts[2] = { csv, json };
	for (int j = 0; j < 2; j++) {
		size_t len = strlen(texts[j]);
		for (size_t cut = 0; cut <= len; cut++)
			parse_any(texts[j], cut, j);
		for (int i = 0; i < 2000; i++) {
			memcpy(buf, texts[j], len);
			buf[rng_below(&r, len)] = (char)rng_below(&r, 256);
			parse_any(buf, len, j);
		}
	}
	/* A prefix that ends on a row boundary still parses. */
	sf_err err = { 0 };
	size_t cut = strlen("# c\n" HEADER ROW);
	trk_px_model *m = trk_px_parse_csv(csv, cut, &err);
	assert_non_null(m);
	assert_int_equal(m->n, 1);
	trk_px_model_free(m);

	/* Truncations of the shipped file. */
	size_t flen;
	char *file = read_all(SYNTH_PATH, &flen);
	for (size_t c = 0; c <= flen; c += 1 + (size_t)rng_below(&r, 97))
		parse_any(file, c, 0);
	free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_names),
		cmocka_unit_test(test_window_by_hand),
		cmocka_unit_test(test_window_rejects_bad_samples),
		cmocka_unit_test(test_nearest_matches_brute_force),
		cmocka_unit_test(test_ties_go_to_lowest_index),
		cmocka_unit_test(test_nearest_walk_equals_scan),
		cmocka_unit_test(test_model_new_validates),
		cmocka_unit_test(test_synthetic_set),
		cmocka_unit_test(test_synthetic_labels),
		cmocka_unit_test(test_synthetic_seed),
		cmocka_unit_test(test_prediction_follows_speed),
		cmocka_unit_test(test_csv_errors),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_csv_and_json_agree),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
