/*
 * test_racetrack_race.c - the racetrack's simulated race and its fitness
 * (core/racetrack/race.h).
 *
 * Tracks come from trk_track_build on control points on a circle (constant
 * curvature, so the steady speed is known in closed form) or an ellipse (an
 * oval with straights and bends, elevation on); the PX model is the shipped
 * synthetic set (trk_px_synth, the same traces as data/px/synthetic.csv).
 * sin and cos from libm only place control points; nothing compares their
 * last bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "racetrack/px.h"
#include "racetrack/race.h"
#include "racetrack/track.h"

#define TWO_PI 6.283185307179586

static trk_track *build(int oval, double r, size_t m, double amplitude)
{
	trk_vec2 ctrl[64];
	assert_true(m <= 64);
	for (size_t i = 0; i < m; i++) {
		double a = TWO_PI * (double)i / (double)m;
		ctrl[i].x = (oval ? 1.8 * r : r) * cos(a);
		ctrl[i].y = r * sin(a);
	}
	trk_track_params p = {
		.spacing = 1.0,
		.width = 10.0,
		.amplitude = amplitude,
		.period = 8,
		.octaves = 3,
		.max_slope = 0.08,
		.seed = 42,
	};
	sf_err err;
	trk_track *t = trk_track_build(ctrl, m, &p, &err);
	if (!t)
		fail_msg("build: %s", err.msg);
	return t;
}

/* The default oval: about 1.1 km, two long bends, hills up to the slope cap. */
static trk_track *default_oval(void)
{
	return build(1, 120.0, 16, 8.0);
}

static trk_px_model *model(void)
{
	sf_err err;
	trk_px_model *m = trk_px_synth(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, &err);
	if (!m)
		fail_msg("synth: %s", err.msg);
	return m;
}

static void race(const trk_track *t, const trk_race_params *p, const trk_px_model *m, uint64_t seed,
		 trk_race_result *r)
{
	sf_err err;
	if (trk_race_run(t, p, m, seed, r, &err))
		fail_msg("race: %s", err.msg);
}

/*
 * The profile respects each corner's limit and the braking limit between
 * every pair of neighbours, the seam included; the braking pass really binds
 * somewhere (so the second check is not vacuous); and the player's logged
 * speed never exceeds the profile where it is.
 */
static void test_profile_limits(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.log = 1;
	double *v = malloc(t->n * sizeof *v);
	assert_non_null(v);
	assert_int_equal(trk_speed_profile(t, &p, v, NULL), 0);
	double lateral = p.grip * (0.8 + 0.2 * p.player_skill);
	int braked = 0;
	for (size_t i = 0; i < t->n; i++) {
		double k = fabs(t->curvature[i]);
		double corner = k > 0 ? sqrt(lateral / k) : HUGE_VAL;
		assert_true(v[i] >= 0 && v[i] <= p.top_speed);
		assert_true(v[i] <= corner * (1 + 1e-12));
		double next = v[(i + 1) % t->n];
		assert_true(v[i] * v[i] - next * next <= 2 * p.brake * t->ds + 1e-9);
		if (v[i] < fmin(corner, p.top_speed) - 1.0)
			braked = 1;
	}
	assert_true(braked);

	trk_race_result r;
	race(t, &p, m, 7, &r);
	assert_true(r.finished);
	assert_int_equal(r.nlog, r.ticks);
	double vmin = HUGE_VAL;
	for (size_t i = 0; i < t->n; i++)
		vmin = fmin(vmin, v[i]);
	assert_true(vmin < 0.8 * p.top_speed); /* the corners bind */
	for (size_t i = 0; i < r.nlog; i++) {
		/* The log is float: allow either sample within 1 mm of it. */
		double s = r.log_s[i];
		size_t a = (size_t)(fmax(0, s - 1e-3) / t->ds) % t->n;
		size_t b = (size_t)((s + 1e-3) / t->ds) % t->n;
		double allowed = fmax(v[a], v[b]);
		if (r.log_speed[i] > allowed + 1e-3)
			fail_msg("tick %zu: speed %g over the profile %g at s = %g", i,
				 (double)r.log_speed[i], allowed, s);
	}
	trk_race_result_free(&r);
	free(v);
	trk_px_model_free(m);
	trk_track_free(t);
}

/*
 * The braking zone of a corner just past the start line reaches back across
 * the seam: a hand-made straight track of 200 samples with a tight corner at
 * samples 3..8. A single backward pass would leave the last samples at top
 * speed, above what the brakes allow before the corner.
 */
static void test_profile_seam(void **state)
{
	(void)state;
	enum { N = 200 };
	trk_vec3 samples[N];
	double curvature[N], slope[N], v[N];
	size_t seg_start[1] = { 0 };
	memset(samples, 0, sizeof samples);
	for (size_t i = 0; i < N; i++) {
		curvature[i] = i >= 3 && i <= 8 ? 0.1 : 0.0;
		slope[i] = 0;
	}
	trk_track t = { .n = N,
			.samples = samples,
			.curvature = curvature,
			.slope = slope,
			.ds = 1.0,
			.length = N,
			.width = 10,
			.nsegments = 1,
			.seg_start = seg_start };
	trk_race_params p;
	trk_race_params_default(&p);
	assert_int_equal(trk_speed_profile(&t, &p, v, NULL), 0);
	double corner = sqrt(p.grip * (0.8 + 0.2 * p.player_skill) / 0.1);
	assert_true(v[5] == corner);
	for (size_t i = 0; i < N; i++) {
		double next = v[(i + 1) % N];
		assert_true(v[i] * v[i] - next * next <= 2 * p.brake * t.ds + 1e-9);
	}
	/* Sample N - 1 is 4 m before the corner. */
	assert_true(v[N - 1] <= sqrt(corner * corner + 2 * p.brake * 4.0) * (1 + 1e-12));
	assert_true(v[30] == p.top_speed); /* 173 m before the corner */
}

static int same_race(const trk_race_result *a, const trk_race_result *b)
{
	return a->ticks == b->ticks && a->nlog == b->nlog && a->finished == b->finished &&
	       a->final_standing == b->final_standing &&
	       memcmp(&a->lap_time, &b->lap_time, sizeof a->lap_time) == 0 &&
	       memcmp(a->segment_px, b->segment_px, a->nsegments * sizeof *a->segment_px) == 0 &&
	       memcmp(a->log_s, b->log_s, a->nlog * sizeof *a->log_s) == 0 &&
	       memcmp(a->log_speed, b->log_speed, a->nlog * sizeof *a->log_speed) == 0;
}

/* A seed gives the same race byte for byte; another seed another race. */
static void test_determinism(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.log = 1;
	trk_race_result a, b, c;
	race(t, &p, m, 11, &a);
	race(t, &p, m, 11, &b);
	race(t, &p, m, 12, &c);
	assert_true(same_race(&a, &b));
	assert_false(a.ticks == c.ticks && same_race(&a, &c));
	trk_race_result_free(&a);
	trk_race_result_free(&b);
	trk_race_result_free(&c);
	trk_px_model_free(m);
	trk_track_free(t);
}

/*
 * On a flat circle the corner limit is constant, so the lap takes
 * L / v + v / (2 accel): the distance at the steady speed plus the time lost
 * accelerating from rest. The player has skill 0, so no opponent (skills
 * 0..0.2) is slower and none blocks it. The spline's curvature is within
 * about 1 % of 1/R with 48 control points and varies around the circle;
 * measured, the lap is within 0.1 % of the formula; we allow 0.5 %.
 */
static void test_circle_lap_time(void **state)
{
	(void)state;
	const double radius = 100.0;
	trk_track *t = build(0, radius, 48, 0.0);
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.player_skill = 0;
	double steady = fmin(p.top_speed * 0.85, sqrt(p.grip * 0.8 * radius));
	double expect = t->length / steady + steady / (2 * p.accel);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		trk_race_result r;
		race(t, &p, m, seed, &r);
		assert_true(r.finished);
		assert_int_equal(r.stuck_segment, -1);
		if (fabs(r.lap_time - expect) > 0.005 * expect)
			fail_msg("lap %g s, expected %g s", r.lap_time, expect);
		assert_true(r.lap_time <= (double)r.ticks * TRK_TICK);
		assert_true(r.lap_time > (double)(r.ticks - 1) * TRK_TICK);
		trk_race_result_free(&r);
	}
	trk_px_model_free(m);
	trk_track_free(t);
}

/* A normal lap gives every segment a PX value within 0..1, for several seeds and skills. */
static void test_segments_valued(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	int differ = 0;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		p.player_skill = (double)(seed % 3) / 2.0;
		trk_race_result r;
		race(t, &p, m, seed, &r);
		assert_true(r.finished);
		assert_int_equal(r.nsegments, t->nsegments);
		assert_true(r.final_standing >= 1 && r.final_standing <= 4);
		for (size_t i = 0; i < r.nsegments; i++) {
			assert_true(r.segment_px[i] >= 0 && r.segment_px[i] <= 1);
			if (r.segment_px[i] != r.segment_px[0])
				differ = 1;
		}
		trk_race_result_free(&r);
	}
	assert_true(differ); /* the model sees different situations */
	trk_px_model_free(m);
	trk_track_free(t);
}

/*
 * Standings: a player of skill 0 starts last behind opponents of skill 0..0.2
 * and, never faster than any of them, finishes last; a player of skill 1
 * (opponents 0.8..1) gets past someone in some races, which needs the
 * overtaking rule (blocked cars would otherwise only follow).
 */
static void test_standings(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	int passed = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		trk_race_result r;
		p.player_skill = 0;
		race(t, &p, m, seed, &r);
		assert_int_equal(r.final_standing, 4);
		trk_race_result_free(&r);
		p.player_skill = 1;
		race(t, &p, m, seed, &r);
		assert_true(r.final_standing >= 1 && r.final_standing <= 4);
		if (r.final_standing < 4)
			passed = 1;
		trk_race_result_free(&r);
	}
	assert_true(passed);
	trk_px_model_free(m);
	trk_track_free(t);
}

/*
 * A target built from the race's own segment PX at the segments' midpoints
 * scores exactly 0: with 2n + 1 target points, the midpoint of samples a..b
 * lands on point a + b.
 */
static void test_fitness_perfect(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	trk_race_result r;
	race(t, &p, m, 3, &r);
	size_t ntarget = 2 * t->n + 1;
	double *target = malloc(ntarget * sizeof *target);
	assert_non_null(target);
	for (size_t i = 0; i < ntarget; i++)
		target[i] = 0.25;
	double worse = 0;
	for (size_t i = 0; i < t->nsegments; i++) {
		size_t a = t->seg_start[i];
		size_t b = i + 1 < t->nsegments ? t->seg_start[i + 1] : t->n;
		target[a + b] = r.segment_px[i];
		worse -= fabs(0.25 - r.segment_px[i]);
	}
	assert_true(trk_race_fitness(t, &r, target, ntarget) == 0.0);
	for (size_t i = 0; i < ntarget; i++)
		target[i] = 0.25;
	assert_true(fabs(trk_race_fitness(t, &r, target, ntarget) - worse) < 1e-12);
	free(target);
	trk_race_result_free(&r);
	trk_px_model_free(m);
	trk_track_free(t);
}

/* A hand-made track and result: the sum by hand, and -1 for a missing segment. */
static void test_fitness_by_hand(void **state)
{
	(void)state;
	size_t seg_start[2] = { 0, 5 };
	trk_track t = { .n = 10, .ds = 1, .length = 10, .nsegments = 2, .seg_start = seg_start };
	double px[2] = { 0.5, -1 };
	trk_race_result r = { .nsegments = 2, .segment_px = px, .stuck_segment = 1 };
	double target[2] = { 0, 1 }; /* midpoints at 0.25 and 0.75 */
	/* |0.25 - 0.5| + |0.75 - (-1)| */
	assert_true(trk_race_fitness(&t, &r, target, 2) == -2.0);
	r.nsegments = 1; /* the second segment missing altogether: also -1 */
	assert_true(trk_race_fitness(&t, &r, target, 2) == -2.0);
	px[1] = 0.75;
	r.nsegments = 2;
	assert_true(trk_race_fitness(&t, &r, target, 2) == -0.25);
	double flat = 0.5;
	px[1] = 0.5;
	assert_true(trk_race_fitness(&t, &r, &flat, 1) == 0.0);
}

/*
 * Grip so small that the corner speed is a few cm/s: the player moves less
 * than 0.5 m per 50 ticks, is teleported three times in segment 0 and the
 * race ends there, every segment -1.
 */
static void test_stuck(void **state)
{
	(void)state;
	trk_track *t = build(0, 50.0, 24, 0.0);
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.grip = 1e-4;
	trk_race_result r;
	race(t, &p, m, 5, &r);
	assert_false(r.finished);
	assert_int_equal(r.stuck_segment, 0);
	assert_int_equal(r.ticks, 150);
	for (size_t i = 0; i < r.nsegments; i++)
		assert_true(r.segment_px[i] == -1);
	assert_true(trk_race_fitness(t, &r, (double[]){ 0.5 }, 1) == -1.5 * (double)t->nsegments);
	trk_race_result_free(&r);
	trk_px_model_free(m);
	trk_track_free(t);
}

/*
 * Grip for about 0.6 m/s: never stuck, but the time limit runs out after a
 * segment or so. The reached, completed segments have values, the rest -1.
 */
static void test_time_limit(void **state)
{
	(void)state;
	const double radius = 100.0;
	trk_track *t = build(0, radius, 24, 0.0);
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.grip = 0.36 / (0.9 * radius);
	trk_race_result r;
	race(t, &p, m, 5, &r);
	assert_false(r.finished);
	assert_int_equal(r.stuck_segment, -1);
	double limit = p.time_factor * t->length / p.top_speed + 30.0;
	assert_int_equal(r.ticks, (size_t)(limit / TRK_TICK));
	assert_true(r.segment_px[0] >= 0 && r.segment_px[0] <= 1);
	assert_true(r.segment_px[r.nsegments - 1] == -1);
	size_t valued = 0;
	while (valued < r.nsegments && r.segment_px[valued] >= 0)
		valued++;
	for (size_t i = valued; i < r.nsegments; i++)
		assert_true(r.segment_px[i] == -1);
	assert_true(valued < 4);
	trk_race_result_free(&r);
	trk_px_model_free(m);
	trk_track_free(t);
}

/* Bad params give SF_EINVAL naming the field, from both entry points. */
static void test_bad_params(void **state)
{
	(void)state;
	static const struct {
		const char *field;
		size_t offset;
		double value;
	} cases[] = {
		{ "grip", offsetof(trk_race_params, grip), -1.0 },
		{ "grip", offsetof(trk_race_params, grip), 0.0 },
		{ "player_skill", offsetof(trk_race_params, player_skill), 1.5 },
		{ "player_skill", offsetof(trk_race_params, player_skill), -0.1 },
		{ "top_speed", offsetof(trk_race_params, top_speed), NAN },
		{ "accel", offsetof(trk_race_params, accel), INFINITY },
		{ "brake", offsetof(trk_race_params, brake), 0.0 },
		{ "time_factor", offsetof(trk_race_params, time_factor), -4.0 },
	};
	trk_track *t = build(0, 50.0, 12, 0.0);
	trk_px_model *m = model();
	double *v = malloc(t->n * sizeof *v);
	assert_non_null(v);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		trk_race_params p;
		trk_race_params_default(&p);
		memcpy((char *)&p + cases[i].offset, &cases[i].value, sizeof(double));
		sf_err err;
		trk_race_result r;
		assert_int_equal(trk_race_run(t, &p, m, 1, &r, &err), SF_EINVAL);
		if (!strstr(err.msg, cases[i].field))
			fail_msg("case %zu: \"%s\" does not name %s", i, err.msg, cases[i].field);
		assert_null(r.segment_px);
		assert_null(r.log_s);
		trk_race_result_free(&r);
		assert_int_equal(trk_speed_profile(t, &p, v, &err), SF_EINVAL);
		assert_non_null(strstr(err.msg, cases[i].field));
	}
	trk_race_params p;
	trk_race_params_default(&p);
	sf_err err;
	trk_race_result r;
	assert_int_equal(trk_race_run(t, &p, NULL, 1, &r, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "model"));
	free(v);
	trk_px_model_free(m);
	trk_track_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_limits),  cmocka_unit_test(test_profile_seam),
		cmocka_unit_test(test_determinism),     cmocka_unit_test(test_circle_lap_time),
		cmocka_unit_test(test_segments_valued), cmocka_unit_test(test_standings),
		cmocka_unit_test(test_fitness_perfect), cmocka_unit_test(test_fitness_by_hand),
		cmocka_unit_test(test_stuck),           cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_bad_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
