/*
 * test_racetrack_race.c - the racetrack's simulated race and its fitness
 * (core/racetrack/race.h).
 *
 * Tracks come from trk_track_build on control points on a circle (constant
 * curvature, so the steady speed is known in closed form), an ellipse (an
 * oval with straights and bends, elevation on) or a star (radii alternating,
 * so tight corners between short straights); the PX model is the shipped
 * synthetic set (trk_px_synth, the same traces as data/px/synthetic.csv).
 * sin and cos from libm only place control points; nothing compares their
 * last bits.
 *
 * The car model's figures (race.c's design comment) are written out here
 * again, not taken from race.c, so that a change to the model has to change
 * a test too: a car of skill k corners on grip * (0.6 + 0.4 k), cruises at
 * top_speed * (0.85 + 0.15 k), and loses speed on slopes steeper than 5 %.
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
#include "racetrack/track.h"

#define TWO_PI 6.283185307179586

/* The lateral grip of a car of skill k (race.c: TRK_GRIP_BASE, TRK_GRIP_SKILL). */
static double lateral_grip(const trk_race_params *p, double skill)
{
	return p->grip * (0.6 + 0.4 * skill);
}

enum { CIRCLE, OVAL, STAR };

/*
 * Control points on a circle of radius r, an ellipse of 1.8 r by r, or a
 * star whose points alternate between r and 0.7 r.
 */
static trk_track *build(int shape, double r, size_t m, double amplitude)
{
	trk_vec2 ctrl[64];
	assert_true(m <= 64);
	for (size_t i = 0; i < m; i++) {
		double a = TWO_PI * (double)i / (double)m;
		double rad = shape == STAR && i % 2 ? 0.7 * r : r;
		ctrl[i].x = (shape == OVAL ? 1.8 * rad : rad) * cos(a);
		ctrl[i].y = rad * sin(a);
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
	return build(OVAL, 120.0, 16, 8.0);
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
	double lateral = lateral_grip(&p, p.player_skill);
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
	double corner = sqrt(lateral_grip(&p, p.player_skill) / 0.1);
	assert_true(v[5] == corner);
	for (size_t i = 0; i < N; i++) {
		double next = v[(i + 1) % N];
		assert_true(v[i] * v[i] - next * next <= 2 * p.brake * t.ds + 1e-9);
	}
	/* Sample N - 1 is 4 m before the corner. */
	assert_true(v[N - 1] <= sqrt(corner * corner + 2 * p.brake * 4.0) * (1 + 1e-12));
	assert_true(v[30] == p.top_speed); /* 173 m before the corner */
}

/* What the corner-limit hook checks and counts. */
typedef struct limit_check {
	const trk_track *t;
	const trk_race_params *p;
	size_t ticks;
	double prev_s[TRK_CARS]; /* where each car was after the previous tick */
	size_t checks, bound, slope_bound;
	char failure[240]; /* the first failure, or "" */
} limit_check;

/*
 * The top speed a car of skill `skill` may have on sample k, from the track
 * alone: sqrt(lateral grip / |curvature|) capped at top_speed, times the
 * slope factor 1 - 5 (|slope| - 0.05), at least 0.5, where |slope| > 0.05.
 * *slowed says whether the slope factor is below 1.
 */
static double raw_limit(const trk_track *t, const trk_race_params *p, double skill, size_t k,
			int *slowed)
{
	double limit = p->top_speed, kappa = fabs(t->curvature[k]);
	if (kappa > 0 && sqrt(lateral_grip(p, skill) / kappa) < limit)
		limit = sqrt(lateral_grip(p, skill) / kappa);
	double steep = fabs(t->slope[k]) - 0.05;
	*slowed = steep > 0;
	if (steep > 0)
		limit *= fmax(1 - 5 * steep, 0.5);
	return limit;
}

static void check_limit(limit_check *lc, size_t tick, int car, const trk_car_state *c, double s)
{
	const trk_track *t = lc->t;
	size_t k = (size_t)(s / t->ds) % t->n;
	int slowed;
	double limit = raw_limit(t, lc->p, c->skill, k, &slowed);
	lc->checks++;
	/* Only rounding: the race computes the same quantities. */
	if (c->v > limit * (1 + 1e-12) && !lc->failure[0])
		snprintf(lc->failure, sizeof lc->failure,
			 "tick %zu, car %d (skill %g): speed %.9g over the limit %.9g of sample "
			 "%zu (curvature %g, slope %g)",
			 tick, car, c->skill, c->v, limit, k, t->curvature[k], t->slope[k]);
	/* A corner (not top speed) that the car really drives at. */
	if (c->v >= 0.98 * limit && limit < 0.9 * lc->p->top_speed) {
		lc->bound++;
		lc->slope_bound += slowed;
	}
}

static void on_tick_limit(void *arg, size_t tick, const trk_car_state cars[TRK_CARS])
{
	limit_check *lc = arg;
	lc->ticks++;
	if (tick != lc->ticks && !lc->failure[0])
		snprintf(lc->failure, sizeof lc->failure, "hook tick %zu, expected %zu", tick,
			 lc->ticks);
	for (int i = 0; i < TRK_CARS; i++) {
		check_limit(lc, tick, i, &cars[i], cars[i].s);
		if (tick > 1)
			check_limit(lc, tick, i, &cars[i], lc->prev_s[i]);
		lc->prev_s[i] = cars[i].s;
	}
}

/*
 * Every car, at every tick, drives no faster than the raw corner limit of
 * the sample it is on, computed here from the track's curvature and slope
 * and the car's skill (race.c's profile is not used): on a star with tight
 * corners between short straights, a small circle and the hilly oval, for
 * players of skill 0.1, 0.5 and 0.9 (so opponents of skill 0 to 1). The
 * speed a car has after a tick is the one it drove the tick with, so it is
 * checked against the sample it started the tick on and the one it ended on.
 * No tolerance for discretisation is needed: the race clamps a car's speed
 * to its profile over every sample it can reach within the tick (design step
 * 3), so only rounding is allowed. The corners bind (cars drive within 2 %
 * of a limit below 0.9 top_speed), on the oval also where a slope lowers the
 * limit, so the check is not vacuous. The hook runs once per tick and sees
 * the player's logged lap.
 */
static void test_corner_limit_every_car(void **state)
{
	(void)state;
	trk_track *tracks[] = { build(STAR, 60.0, 16, 4.0), build(CIRCLE, 15.0, 16, 0.0),
				default_oval() };
	trk_px_model *m = model();
	static const double skills[] = { 0.1, 0.5, 0.9 };
	for (size_t ti = 0; ti < sizeof tracks / sizeof tracks[0]; ti++) {
		const trk_track *t = tracks[ti];
		double kmax = 0;
		for (size_t k = 0; k < t->n; k++)
			kmax = fmax(kmax, fabs(t->curvature[k]));
		if (ti < 2)
			assert_true(kmax > 0.05); /* a radius under 20 m somewhere */
		size_t slope_bound = 0;
		for (size_t si = 0; si < sizeof skills / sizeof skills[0]; si++) {
			trk_race_params p;
			trk_race_params_default(&p);
			p.player_skill = skills[si];
			p.log = 1;
			limit_check lc = { .t = t, .p = &p };
			p.on_tick = on_tick_limit;
			p.on_tick_arg = &lc;
			trk_race_result r;
			race(t, &p, m, 3 + si, &r);
			if (lc.failure[0])
				fail_msg("track %zu, player skill %g: %s", ti, p.player_skill,
					 lc.failure);
			if (!r.finished)
				fail_msg("track %zu, player skill %g: not finished", ti,
					 p.player_skill);
			assert_int_equal(lc.ticks, r.ticks);
			assert_int_equal(lc.checks, (2 * r.ticks - 1) * TRK_CARS);
			if (lc.bound < 100)
				fail_msg("track %zu, skill %g: the limit bound only %zu times", ti,
					 p.player_skill, lc.bound);
			slope_bound += lc.slope_bound;
			trk_race_result_free(&r);
		}
		if (ti == 2)
			assert_true(slope_bound > 0);
	}
	for (size_t ti = 0; ti < sizeof tracks / sizeof tracks[0]; ti++)
		trk_track_free(tracks[ti]);
	trk_px_model_free(m);
}

/* Every car's state after every tick of one race. */
typedef struct race_history {
	size_t ticks, cap;
	trk_car_state (*at)[TRK_CARS]; /* at[tick - 1][car] */
} race_history;

static void on_tick_record(void *arg, size_t tick, const trk_car_state cars[TRK_CARS])
{
	race_history *h = arg;
	if (h->ticks == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4096;
		h->at = realloc(h->at, h->cap * sizeof *h->at);
		assert_non_null(h->at);
	}
	assert_int_equal(tick, h->ticks + 1);
	memcpy(h->at[h->ticks++], cars, sizeof h->at[0]);
}

/* b - a along a loop of length len, in [-len/2, len/2). */
static double loop_delta(double a, double b, double len)
{
	double x = fmod(b - a, len);
	if (x < 0)
		x += len;
	return x >= 0.5 * len ? x - len : x;
}

/*
 * Whether car i, moving at tick U (1-based, U >= 2), had a car ahead in its
 * lane within 4 m as race.c sees it: cars move leader first (more total
 * distance, ties to the lower index), so a car ahead of i has already moved
 * this tick and is seen where it ended it, in the lane it ended it in.
 */
static int followed_at(const race_history *h, double len, size_t U, int i)
{
	const trk_car_state *was = h->at[U - 2], *now = h->at[U - 1];
	for (int o = 0; o < TRK_CARS; o++) {
		if (o == i)
			continue;
		int first = was[o].d > was[i].d || (was[o].d == was[i].d && o < i);
		const trk_car_state *seen = first ? &now[o] : &was[o];
		double gap = loop_delta(was[i].s, seen->s, len);
		if (seen->lane == was[i].lane && gap > 0 && gap <= 4.0)
			return 1;
	}
	return 0;
}

/*
 * The blocking and overtaking rule, seen from outside: on the oval and on a
 * wide flat ellipse with long fast sides, for players of skill 0, 0.5 and 1
 * over several seeds,
 *  - a car that stays in its lane never gets past a car it was following
 *    within 4 m in that lane (no car drives through another);
 *  - a car changes lane only after 25 ticks in a row with a car ahead in
 *    its lane within 4 m, and only where its cornering load v^2 |curvature|
 *    at the start of the tick is at most half its lateral grip;
 *  - lane changes do happen, so these checks are not vacuous.
 */
static void test_pass_rule(void **state)
{
	(void)state;
	trk_track *tracks[] = { default_oval(), build(OVAL, 250.0, 16, 0.0) };
	trk_px_model *m = model();
	size_t changes = 0;
	for (size_t ti = 0; ti < 2 * 3; ti++) {
		const trk_track *t = tracks[ti / 3];
		for (uint64_t seed = 1; seed <= 8; seed++) {
			trk_race_params p;
			trk_race_params_default(&p);
			p.player_skill = 0.5 * (double)(ti % 3);
			race_history h = { 0 };
			p.on_tick = on_tick_record;
			p.on_tick_arg = &h;
			trk_race_result r;
			race(t, &p, m, seed, &r);
			assert_int_equal(h.ticks, r.ticks);
			for (size_t T = 1; T < h.ticks; T++) {
				const trk_car_state *was = h.at[T - 1], *now = h.at[T];
				for (int i = 0; i < TRK_CARS; i++) {
					for (int o = 0; o < TRK_CARS; o++) {
						if (o == i || was[o].lane != was[i].lane ||
						    now[o].lane != was[o].lane ||
						    now[i].lane != was[i].lane)
							continue;
						double before =
							loop_delta(was[i].s, was[o].s, t->length);
						double after =
							loop_delta(now[i].s, now[o].s, t->length);
						if (before > 0 && before <= 4.0 && after <= 0)
							fail_msg("tick %zu: car %d drove through "
								 "car %d "
								 "(%g m -> %g m)",
								 T + 1, i, o, before, after);
					}
					if (now[i].lane == was[i].lane)
						continue;
					changes++;
					size_t k = (size_t)(was[i].s / t->ds) % t->n;
					double load = was[i].v * was[i].v * fabs(t->curvature[k]);
					if (load >
					    0.5 * lateral_grip(&p, was[i].skill) * (1 + 1e-12))
						fail_msg("tick %zu: car %d pulled out at load %g",
							 T + 1, i, load);
					/* Tick T + 1 and the 24 before it, all from tick 2 on. */
					if (T < 25)
						fail_msg("tick %zu: car %d pulled out too early",
							 T + 1, i);
					for (size_t U = T - 23; U <= T + 1; U++)
						if (!followed_at(&h, t->length, U, i))
							fail_msg("tick %zu: car %d pulled out "
								 "without "
								 "following at tick %zu",
								 T + 1, i, U);
				}
			}
			free(h.at);
			trk_race_result_free(&r);
		}
	}
	assert_true(changes > 0);
	trk_px_model_free(m);
	trk_track_free(tracks[0]);
	trk_track_free(tracks[1]);
}

static int same_race(const trk_race_result *a, const trk_race_result *b)
{
	return a->ticks == b->ticks && a->nlog == b->nlog && a->finished == b->finished &&
	       a->final_standing == b->final_standing &&
	       memcmp(&a->lap_time, &b->lap_time, sizeof a->lap_time) == 0 &&
	       memcmp(a->segment_px, b->segment_px, a->nsegments * sizeof *a->segment_px) == 0 &&
	       memcmp(a->log_s, b->log_s, a->nlog * sizeof *a->log_s) == 0 &&
	       memcmp(a->log_speed, b->log_speed, a->nlog * sizeof *a->log_speed) == 0 &&
	       memcmp(a->skill, b->skill, sizeof a->skill) == 0 &&
	       memcmp(a->grid, b->grid, sizeof a->grid) == 0 && a->overtakes == b->overtakes &&
	       a->player_gained == b->player_gained && a->player_lost == b->player_lost;
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
 * On a flat circle the corner limit is constant and the start is rolling at
 * the profile's speed, so the lap takes L / v. The player has skill 0: every
 * opponent (skills 0..0.4) is at least as good, so the player starts at the
 * front of the reversed grid (an equal car goes behind it) and nothing
 * slower is ever ahead of it in its lane; the faster cars pass in the other
 * lane, and one in the player's lane cannot pull out, since mid-corner, at
 * the grip limit, there is no room to pass. The spline's curvature is within
 * about 1 % of 1/R with 48 control points and varies around the circle;
 * measured, the lap is within 0.1 % of the formula; we allow 0.5 %.
 */
static void test_circle_lap_time(void **state)
{
	(void)state;
	const double radius = 100.0;
	trk_track *t = build(CIRCLE, radius, 48, 0.0);
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	p.player_skill = 0;
	double steady = fmin(p.top_speed * 0.85, sqrt(lateral_grip(&p, 0) * radius));
	double expect = t->length / steady;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		trk_race_result r;
		race(t, &p, m, seed, &r);
		assert_true(r.finished);
		assert_int_equal(r.stuck_segment, -1);
		assert_int_equal(r.grid[0], 1);
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
 * Skills and grid: opponent j's skill lies in band j - 1 of the three equal
 * bands of player_skill +- 0.4 (clamped to 0..1), and the grid is reversed:
 * slot 1 (the front) is the lowest skill, ties going to the lower car index,
 * so a player of skill 0 always starts in front and one of skill 1 never
 * last. The standings add up: the player's final place is its grid slot
 * minus the places it gained plus those it lost. A player of skill 0.5
 * (opponents 0.1..0.9) both gains and loses places over 20 seeds, and one of
 * skill 1 passes the slower cars ahead in some races and never loses a
 * place.
 */
static void test_grid_and_standings(void **state)
{
	(void)state;
	trk_track *t = default_oval();
	trk_px_model *m = model();
	trk_race_params p;
	trk_race_params_default(&p);
	static const double skills[] = { 0, 0.5, 1 };
	for (size_t si = 0; si < sizeof skills / sizeof skills[0]; si++) {
		p.player_skill = skills[si];
		size_t gained = 0, lost = 0;
		for (uint64_t seed = 1; seed <= 20; seed++) {
			trk_race_result r;
			race(t, &p, m, seed, &r);
			assert_true(r.finished);
			assert_true(r.skill[0] == p.player_skill);
			int slots = 0;
			for (int i = 0; i < TRK_CARS; i++) {
				if (i > 0) {
					double lo = p.player_skill - 0.4 + 0.8 * (i - 1) / 3.0;
					double hi = p.player_skill - 0.4 + 0.8 * i / 3.0;
					assert_true(r.skill[i] >= fmin(1, fmax(0, lo)) - 1e-12);
					assert_true(r.skill[i] <= fmin(1, fmax(0, hi)) + 1e-12);
				}
				int ahead = 0;
				for (int o = 0; o < TRK_CARS; o++)
					ahead += r.skill[o] < r.skill[i] ||
						 (r.skill[o] == r.skill[i] && o < i);
				assert_int_equal(r.grid[i], ahead + 1);
				slots |= 1 << (r.grid[i] - 1);
			}
			assert_int_equal(slots, (1 << TRK_CARS) - 1);
			if (p.player_skill == 0)
				assert_int_equal(r.grid[0], 1);
			if (p.player_skill == 1) {
				assert_true(r.grid[0] < TRK_CARS);
				assert_int_equal(r.player_lost, 0);
			}
			assert_int_equal(r.final_standing,
					 r.grid[0] - (int)r.player_gained + (int)r.player_lost);
			assert_true(r.overtakes >= r.player_gained + r.player_lost);
			gained += r.player_gained;
			lost += r.player_lost;
			trk_race_result_free(&r);
		}
		if (p.player_skill == 0.5) {
			assert_true(gained > 0);
			assert_true(lost > 0);
		}
		if (p.player_skill == 1)
			assert_true(gained > 0);
	}
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
	trk_track *t = build(CIRCLE, 50.0, 24, 0.0);
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
	trk_track *t = build(CIRCLE, radius, 24, 0.0);
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
	trk_track *t = build(CIRCLE, 50.0, 12, 0.0);
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
		cmocka_unit_test(test_profile_limits),
		cmocka_unit_test(test_profile_seam),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_circle_lap_time),
		cmocka_unit_test(test_segments_valued),
		cmocka_unit_test(test_grid_and_standings),
		cmocka_unit_test(test_fitness_perfect),
		cmocka_unit_test(test_fitness_by_hand),
		cmocka_unit_test(test_stuck),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_corner_limit_every_car),
		cmocka_unit_test(test_pass_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
