/*
 * race.c - the fixed-tick race of the racetrack kind (race.h).
 *
 * Design. A car is a point at total distance d along the centre line (the
 * arc position is d wrapped into [0, length)) in one of two lanes, at
 * lateral offsets -width/4 and +width/4. A lane is a racing line: a car
 * only ever meets the cars in its own lane, and changes lane only to pass.
 * Every tick (TRK_TICK) each car, in order of total distance, leader
 * first:
 *
 *  1. takes the tow of the nearest car ahead in either lane between
 *     TRK_DRAFT_MIN and TRK_DRAFT_GAP metres: tow = 1 - gap / TRK_DRAFT_GAP.
 *     It raises the speed the car aims at on a straight by TRK_DRAFT_SPEED
 *     * top_speed * tow (never past top_speed) and its acceleration by the
 *     factor 1 + TRK_DRAFT_ACCEL * tow. A car alongside (closer than
 *     TRK_DRAFT_MIN) gets none, so two cars side by side keep their order
 *     unless one is the faster car;
 *  2. aims at min(its cruise + tow bonus, its speed profile here) and moves
 *     its speed toward that by at most its acceleration * TRK_TICK up or
 *     brake * TRK_TICK down;
 *  3. never exceeds its profile anywhere it could reach this tick: the
 *     speed is clamped to the profile's minimum over the samples from its
 *     position to one sample past position + (v + accel * TRK_TICK) *
 *     TRK_TICK. The profile's braking pass makes this clamp at most about
 *     brake * TRK_TICK below the speed the car had;
 *  4. is blocked by the nearest car ahead in its own lane within
 *     TRK_BLOCK_GAP metres (arc distance, so lapping cars interact) when
 *     that car is slower. After following so for TRK_FOLLOW_TICKS ticks it
 *     pulls out into the other lane (an instant change) when it is on a
 *     straight (its cornering load v^2 |curvature| at most TRK_PASS_LOAD of
 *     its lateral grip: mid-corner there is one line), the speed it aims at
 *     (step 2, within the reach of step 3) is more than TRK_OVERTAKE_DV
 *     above the blocker's, and no car in the other lane is within
 *     TRK_LANE_CLEAR metres. Otherwise it matches the slower car's speed,
 *     so gaps inside TRK_BLOCK_GAP never shrink and no car drives through
 *     another in its lane;
 *  5. advances d by its new speed * TRK_TICK.
 *
 * Skill. A car of skill k in 0..1 cruises at top_speed * (TRK_CRUISE_BASE
 * + TRK_CRUISE_SKILL k), corners on lateral grip grip * (TRK_GRIP_BASE +
 * TRK_GRIP_SKILL k) and accelerates at accel * (TRK_ACCEL_BASE +
 * TRK_ACCEL_SKILL k); every car brakes at brake. A skill step of 0.25 is
 * about 6 % of corner speed, so over a lap a better car gains seconds, not
 * tenths: it catches the car ahead and passes, and a worse car drops back.
 *
 * The speed profile of a car (trk_speed_profile for the player): v(i) =
 * sqrt(lateral / |curvature(i)|) capped at top_speed, times a slope factor
 * 1 - TRK_SLOPE_PENALTY * (|slope| - TRK_SLOPE_FREE) (1 below
 * TRK_SLOPE_FREE, at least TRK_SLOPE_FLOOR), then the backward pass v(i) =
 * min(v(i), sqrt(v(i+1)^2 + 2 brake ds)) twice around the loop. One pass
 * leaves only the pair (n-1, 0) possibly inconsistent and v(0) already
 * final; the second pass settles it, so every pair, the seam included,
 * satisfies the braking bound.
 *
 * Why the race is built to be lively. The experience model labels close
 * rivals, positions gained and positions lost as tense and being alone as
 * calm (docs/px-model.md). A field of near-equal cars that strings out
 * behind its leader gives neither, and every track then gets about the same
 * PX. So: the opponents' skills spread wide around the player, one in each
 * third of [player_skill - TRK_SKILL_SPREAD, player_skill +
 * TRK_SKILL_SPREAD] (clamped to 0..1), so there is usually a slower car to
 * catch, a rival of the player's pace and a faster car that catches the
 * player; the grid is reversed (the slowest car leads), as in reverse-grid
 * races, so the faster cars must pass; the start is rolling, cars in single
 * file TRK_ROLL_GAP metres apart (one to two seconds at corner speeds), so
 * gaps grow on fast sections and shrink in slow ones instead of starting as
 * one pack; and the tow lets a follower close up on straights and pass
 * there. Where straights, slow corners and fast sweepers lie then decides
 * where the player is alone, follows, battles and passes: the track's
 * shape sets the PX curve.
 *
 * Grid. Opponent j (1..3) draws its skill uniformly in band j - 1 of the
 * three, then a jitter of up to TRK_GRID_JITTER metres, both from core/rng
 * seeded by `seed`. The cars line up by skill, slowest in front (ties by
 * car index, so the player goes ahead of an equal opponent), in lanes
 * alternating from lane 0 at the front. The player is at d = 0 on the start
 * line, so its lap is exactly [0, length] and segment 0 starts with the
 * race; the car s slots ahead of it is at d = s * TRK_ROLL_GAP + its jitter
 * (behind: negative d). Every car starts at its cruise speed or its profile
 * at its position, the lower. Standings rank total distance (ties favour
 * the lower car index, so the player). Opponents keep racing after a lap of
 * their own.
 *
 * PX. After moving, the player logs a trk_px_sample: its speed, top_speed,
 * the speeds of opponents (car order) between 20 m behind and 50 m ahead
 * along the track, its standing, the total-distance gaps to the nearest car
 * ahead and behind in the standings (-1 when none) and whether its speed
 * dropped this tick. Every TRK_PX_WINDOW samples the window's prediction is
 * added to the current segment; when the player enters a new segment the
 * remaining samples are flushed and the segment closes with the mean of its
 * predictions. A segment the player crossed without logging a sample (one
 * shorter than a tick's travel, or a span with no track sample) takes the
 * value of the next segment that closes with samples (or, at the finish or
 * when the race fails after it, of the last one closed).
 *
 * Ending. Finished: the player's d reaches length (lap_time interpolates
 * inside the last tick). Stuck: every TRK_STUCK_TICKS ticks, a player that
 * has moved less than TRK_STUCK_DIST metres is teleported to the start of
 * its current segment at speed 0; the TRK_STUCK_TELEPORTS-th teleport in
 * one segment marks it unplayable (stuck_segment) and ends the race. Time
 * out: after time_factor * length / top_speed + 30 s. When the race does
 * not finish, the current (incomplete) segment and every later one are -1,
 * as the design text says: "the agent failed a segment and the ones that
 * followed".
 *
 * Everything uses + - * / sqrt and floor, all exact or correctly rounded in
 * IEEE, and a fixed processing order, so a race is the same on every
 * machine.
 */
#include "race.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"

#define TRK_BLOCK_GAP 4.0     /* m: a slower car this close ahead in the lane blocks */
#define TRK_LANE_CLEAR 4.0    /* m: the other lane must be empty within this to pull out */
#define TRK_OVERTAKE_DV 1.0   /* m/s: least speed advantage to pull out */
#define TRK_FOLLOW_TICKS 25   /* ticks blocked before pulling out: 0.5 s */
#define TRK_PASS_LOAD 0.5     /* pulling out needs v^2 |curvature| <= this * lateral grip */
#define TRK_DRAFT_GAP 25.0    /* m: the tow reaches this far behind a car */
#define TRK_DRAFT_MIN 2.0     /* m: closer than this, alongside, there is no tow */
#define TRK_DRAFT_SPEED 0.06  /* cruise gain at full tow, a fraction of top_speed */
#define TRK_DRAFT_ACCEL 1.0   /* acceleration gain at full tow, a fraction of the car's */
#define TRK_ROLL_GAP 20.0     /* m between cars in the rolling start */
#define TRK_GRID_JITTER 0.5   /* m: the most an opponent's slot is moved ahead */
#define TRK_SKILL_SPREAD 0.4  /* opponents' skills within player_skill +- this */
#define TRK_CRUISE_BASE 0.85  /* cruise = top_speed * (BASE + SKILL * skill) */
#define TRK_CRUISE_SKILL 0.15 /* (skill 0.5 cruises at 0.925 top_speed) */
#define TRK_GRIP_BASE 0.6     /* lateral grip = grip * (BASE + SKILL * skill) */
#define TRK_GRIP_SKILL 0.4    /* (skill 1 uses all of grip, skill 0 60 % of it) */
#define TRK_ACCEL_BASE 0.8    /* acceleration = accel * (BASE + SKILL * skill) */
#define TRK_ACCEL_SKILL 0.4   /* (skill 0.5 accelerates at accel) */
#define TRK_SLOPE_FREE 0.05   /* |slope| up to this costs no speed */
#define TRK_SLOPE_PENALTY 5.0 /* speed fraction lost per unit of slope beyond */
#define TRK_SLOPE_FLOOR 0.5   /* the slope factor's minimum */
#define TRK_STUCK_TICKS 50
#define TRK_STUCK_DIST 0.5 /* m */
#define TRK_STUCK_TELEPORTS 3
#define TRK_VIEW_AHEAD 50.0
#define TRK_VIEW_BEHIND 20.0
#define TRK_TIME_MARGIN 30.0 /* s added to the time limit */

void trk_race_params_default(trk_race_params *p)
{
	p->player_skill = 0.5;
	p->grip = 9.0;
	p->top_speed = 60.0;
	p->accel = 6.0;
	p->brake = 12.0;
	p->time_factor = 4.0;
	p->log = 0;
	p->on_tick = NULL;
	p->on_tick_arg = NULL;
	p->on_window = NULL;
	p->on_window_arg = NULL;
}

void trk_race_result_free(trk_race_result *r)
{
	if (!r)
		return;
	free(r->segment_px);
	free(r->log_s);
	free(r->log_speed);
	memset(r, 0, sizeof *r);
}

/* Checks that params->field is finite and within [lo, hi] (lo excluded when lo_open). */
static int check_range(double v, const char *field, double lo, int lo_open, double hi, sf_err *err)
{
	if (!isfinite(v) || v < lo || (lo_open && v == lo) || v > hi)
		return sf_err_set(err, SF_EINVAL, "params.%s: %g outside %s%g, %g]", field, v,
				  lo_open ? "(" : "[", lo, hi);
	return 0;
}

static int check_params(const trk_race_params *p, sf_err *err)
{
	if (!p)
		return sf_err_set(err, SF_EINVAL, "params: missing");
	if (check_range(p->player_skill, "player_skill", 0, 0, 1, err) ||
	    check_range(p->grip, "grip", 0, 1, 1000, err) ||
	    check_range(p->top_speed, "top_speed", 1, 0, 1000, err) ||
	    check_range(p->accel, "accel", 0, 1, 1000, err) ||
	    check_range(p->brake, "brake", 0, 1, 1000, err) ||
	    check_range(p->time_factor, "time_factor", 0, 1, 100, err))
		return SF_EINVAL;
	return 0;
}

static int check_track(const trk_track *t, sf_err *err)
{
	if (!t || t->n < 3 || !t->samples || !t->curvature || !t->slope)
		return sf_err_set(err, SF_EINVAL, "track: missing or fewer than 3 samples");
	if (!(t->ds > 0) || !isfinite(t->ds) || !(t->length > 0) || !isfinite(t->length))
		return sf_err_set(err, SF_EINVAL, "track: ds and length must be finite and > 0");
	if (t->nsegments < 1 || !t->seg_start || t->seg_start[0] != 0)
		return sf_err_set(err, SF_EINVAL, "track: needs segments, the first at sample 0");
	for (size_t i = 1; i < t->nsegments; i++)
		if (t->seg_start[i] < t->seg_start[i - 1] || t->seg_start[i] > t->n)
			return sf_err_set(
				err, SF_EINVAL,
				"track: seg_start[%zu] = %zu out of order or past n = %zu", i,
				t->seg_start[i], t->n);
	return 0;
}

/* The profile of a car with skill `skill` (params already checked). */
static void profile_for(const trk_track *t, const trk_race_params *p, double skill, double *v)
{
	double lateral = p->grip * (TRK_GRIP_BASE + TRK_GRIP_SKILL * skill);
	size_t n = t->n;
	for (size_t i = 0; i < n; i++) {
		double k = fabs(t->curvature[i]);
		double vmax = p->top_speed;
		if (k > 0) {
			double corner = sqrt(lateral / k); /* 0 for k = HUGE_VAL */
			if (corner < vmax)
				vmax = corner;
		}
		double steep = fabs(t->slope[i]) - TRK_SLOPE_FREE;
		if (steep > 0) {
			double f = 1.0 - TRK_SLOPE_PENALTY * steep;
			vmax *= f > TRK_SLOPE_FLOOR ? f : TRK_SLOPE_FLOOR;
		}
		v[i] = vmax;
	}
	double reach = 2.0 * p->brake * t->ds;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = n; i-- > 0;) {
			double next = v[(i + 1) % n];
			double lim = sqrt(next * next + reach);
			if (lim < v[i])
				v[i] = lim;
		}
	}
}

int trk_speed_profile(const trk_track *track, const trk_race_params *params, double *v, sf_err *err)
{
	int rc = check_track(track, err);
	if (rc)
		return rc;
	if ((rc = check_params(params, err)))
		return rc;
	profile_for(track, params, params->player_skill, v);
	return 0;
}

typedef struct car {
	double d;       /* total distance, m */
	double s;       /* wrap(d, length): kept with d, read far more often */
	double v;       /* m/s */
	int lane;       /* 0 or 1 */
	int follow;     /* consecutive ticks blocked */
	double skill;   /* 0..1 */
	double cruise;  /* top_speed * (TRK_CRUISE_BASE + TRK_CRUISE_SKILL skill) */
	double lateral; /* grip * (TRK_GRIP_BASE + TRK_GRIP_SKILL skill) */
	double accel;   /* accel * (TRK_ACCEL_BASE + TRK_ACCEL_SKILL skill) */
	double *profile;
} car;

/* d wrapped into [0, len). */
static double wrap(double d, double len)
{
	double s = d - len * floor(d / len);
	if (s >= len)
		s -= len;
	if (s < 0)
		s = 0;
	return s;
}

/*
 * b - a along the loop, in [-len/2, len/2), for a and b in [0, len) (as
 * wrap() gives them): the same value as wrap(b - a) shifted, without the
 * division.
 */
static double arc_delta(double a, double b, double len)
{
	double x = b - a;
	if (x < 0)
		x += len;
	return x >= 0.5 * len ? x - len : x;
}

static size_t sample_at(const trk_track *t, double s)
{
	size_t k = (size_t)(s / t->ds);
	return k >= t->n ? k % t->n : k;
}

/*
 * The nearest car ahead of car ci within `within` metres of arc (gap > 0),
 * in lane `lane` or in either lane when lane < 0; -1 when none. *gap gets
 * its distance.
 */
static int car_ahead(const trk_track *t, const car *cars, int ci, int lane, double within,
		     double *gap)
{
	double s = cars[ci].s;
	int found = -1;
	double nearest = within;
	for (int o = 0; o < TRK_CARS; o++) {
		if (o == ci || (lane >= 0 && cars[o].lane != lane))
			continue;
		double g = arc_delta(s, cars[o].s, t->length);
		if (g > 0 && g <= nearest) {
			nearest = g;
			found = o;
		}
	}
	*gap = nearest;
	return found;
}

/* Moves car ci one tick (steps 1-5 of the design). */
static void drive(const trk_track *t, const trk_race_params *p, car *cars, int ci)
{
	car *c = &cars[ci];
	double s = c->s;
	size_t k0 = sample_at(t, s);

	/* 1. The tow. */
	double gap, tow = 0;
	if (car_ahead(t, cars, ci, -1, TRK_DRAFT_GAP, &gap) >= 0 && gap >= TRK_DRAFT_MIN)
		tow = 1.0 - gap / TRK_DRAFT_GAP;
	double accel = c->accel * (1.0 + TRK_DRAFT_ACCEL * tow);
	double target = c->cruise + TRK_DRAFT_SPEED * p->top_speed * tow;
	if (target > p->top_speed)
		target = p->top_speed;

	/* 2. Toward the target. */
	if (c->profile[k0] < target)
		target = c->profile[k0];
	double v = c->v;
	if (v < target) {
		v += accel * TRK_TICK;
		if (v > target)
			v = target;
	} else {
		v -= p->brake * TRK_TICK;
		if (v < target)
			v = target;
	}

	/* 3. Never over the profile anywhere within this tick's reach. */
	double upper = c->v + accel * TRK_TICK;
	size_t ahead = (size_t)(upper * TRK_TICK / t->ds) + 2;
	for (size_t j = 0; j <= ahead; j++) {
		double lim = c->profile[(k0 + j) % t->n];
		if (lim < v)
			v = lim;
		if (lim < target)
			target = lim;
	}
	if (v < 0)
		v = 0;

	/* 4. Blocked in the lane, or pulling out to pass. */
	int blocker = car_ahead(t, cars, ci, c->lane, TRK_BLOCK_GAP, &gap);
	if (blocker >= 0 && cars[blocker].v < v) {
		c->follow++;
		double load = c->v * c->v * fabs(t->curvature[k0]);
		int pass = c->follow >= TRK_FOLLOW_TICKS && load <= TRK_PASS_LOAD * c->lateral &&
			   target - cars[blocker].v > TRK_OVERTAKE_DV;
		for (int o = 0; pass && o < TRK_CARS; o++) {
			if (o == ci || cars[o].lane == c->lane)
				continue;
			double g = arc_delta(s, cars[o].s, t->length);
			if (g >= -TRK_LANE_CLEAR && g <= TRK_LANE_CLEAR)
				pass = 0;
		}
		if (pass) {
			c->lane = 1 - c->lane;
			c->follow = 0;
		} else {
			v = cars[blocker].v;
		}
	} else {
		c->follow = 0;
	}

	/* 5. Move. */
	c->v = v;
	c->d += v * TRK_TICK;
	c->s = wrap(c->d, t->length);
}

/* The running PX of the player's segments. */
typedef struct px_state {
	const trk_px_model *model;
	void (*on_window)(void *arg, const double window[TRK_PX_NFEAT]);
	void *on_window_arg;
	trk_px_sample window[TRK_PX_WINDOW];
	size_t count; /* samples in window */
	double sum;   /* predictions in the current segment */
	size_t npred;
	size_t pending; /* first segment without a value yet */
	double last;    /* the last closed value, or -1 */
} px_state;

static int px_predict(px_state *px, sf_err *err)
{
	double feat[TRK_PX_NFEAT];
	int rc = trk_px_window_features(px->window, px->count, feat, err);
	if (rc) {
		sf_err_prefix(err, "player sample: ");
		return rc;
	}
	if (px->on_window)
		px->on_window(px->on_window_arg, feat);
	px->sum += trk_px_predict(px->model, feat);
	px->npred++;
	px->count = 0;
	return 0;
}

static int px_log(px_state *px, const trk_px_sample *sample, sf_err *err)
{
	px->window[px->count++] = *sample;
	return px->count == TRK_PX_WINDOW ? px_predict(px, err) : 0;
}

/* Closes segment `seg`: flushes, and gives its value to the pending segments up to it. */
static int px_close(px_state *px, double *segment_px, size_t seg, sf_err *err)
{
	if (px->count > 0) {
		int rc = px_predict(px, err);
		if (rc)
			return rc;
	}
	if (px->npred == 0)
		return 0; /* crossed without a sample: stays pending */
	double value = px->sum / (double)px->npred;
	for (size_t i = px->pending; i <= seg; i++)
		segment_px[i] = value;
	px->pending = seg + 1;
	px->last = value;
	px->sum = 0;
	px->npred = 0;
	return 0;
}

static int log_push(trk_race_result *r, size_t *cap, double s, double v)
{
	if (r->nlog == *cap) {
		size_t ncap = *cap ? 2 * *cap : 1024;
		float *ns = realloc(r->log_s, ncap * sizeof *ns);
		if (!ns)
			return SF_ENOMEM;
		r->log_s = ns;
		float *nv = realloc(r->log_speed, ncap * sizeof *nv);
		if (!nv)
			return SF_ENOMEM;
		r->log_speed = nv;
		*cap = ncap;
	}
	r->log_s[r->nlog] = (float)s;
	r->log_speed[r->nlog] = (float)v;
	r->nlog++;
	return 0;
}

/* The player's sample after a tick; `standing` gets its place. */
static trk_px_sample player_sample(const trk_track *t, const trk_race_params *p, const car *cars,
				   int braking)
{
	trk_px_sample smp;
	memset(&smp, 0, sizeof smp);
	const car *me = &cars[0];
	smp.speed = me->v;
	smp.top_speed = p->top_speed;
	smp.standing = 1;
	smp.gap_ahead = -1;
	smp.gap_behind = -1;
	smp.braking = braking != 0;
	double s = me->s;
	for (int o = 1; o < TRK_CARS; o++) {
		double delta = arc_delta(s, cars[o].s, t->length);
		if (delta >= -TRK_VIEW_BEHIND && delta <= TRK_VIEW_AHEAD &&
		    smp.nvisible < TRK_PX_MAX_VISIBLE)
			smp.visible_speed[smp.nvisible++] = cars[o].v;
		double lead = cars[o].d - me->d;
		if (lead > 0) {
			smp.standing++;
			if (smp.gap_ahead < 0 || lead < smp.gap_ahead)
				smp.gap_ahead = lead;
		} else if (smp.gap_behind < 0 || -lead < smp.gap_behind) {
			smp.gap_behind = -lead;
		}
	}
	return smp;
}

/*
 * Draws the opponents' skills and lines the cars up for the rolling start
 * (the design's "Grid"); out->skill and out->grid get every car's skill and
 * slot.
 */
static void grid_cars(const trk_track *t, const trk_race_params *p, uint64_t seed, double *profiles,
		      car *cars, trk_race_result *out)
{
	rng r;
	rng_seed(&r, seed);
	double jitter[TRK_CARS] = { 0 };
	for (int i = 0; i < TRK_CARS; i++) {
		double skill = p->player_skill;
		if (i > 0) {
			/* Uniform in band i - 1 of TRK_CARS - 1 equal bands over [-1, 1]. */
			double u = ((double)(i - 1) + rng_unit(&r)) / (double)(TRK_CARS - 1);
			skill += TRK_SKILL_SPREAD * (2.0 * u - 1.0);
			skill = skill < 0 ? 0 : skill > 1 ? 1 : skill;
			jitter[i] = TRK_GRID_JITTER * rng_unit(&r);
		}
		car *c = &cars[i];
		c->follow = 0;
		c->skill = skill;
		c->cruise = p->top_speed * (TRK_CRUISE_BASE + TRK_CRUISE_SKILL * skill);
		c->lateral = p->grip * (TRK_GRIP_BASE + TRK_GRIP_SKILL * skill);
		c->accel = p->accel * (TRK_ACCEL_BASE + TRK_ACCEL_SKILL * skill);
		c->profile = profiles + (size_t)i * t->n;
		profile_for(t, p, skill, c->profile);
		out->skill[i] = skill;
	}
	/* Slot 0 is the front: lower skill first, ties by car index. */
	int slot[TRK_CARS];
	for (int i = 0; i < TRK_CARS; i++) {
		slot[i] = 0;
		for (int o = 0; o < TRK_CARS; o++)
			if (cars[o].skill < cars[i].skill ||
			    (cars[o].skill == cars[i].skill && o < i))
				slot[i]++;
	}
	for (int i = 0; i < TRK_CARS; i++) {
		car *c = &cars[i];
		c->d = TRK_ROLL_GAP * (double)(slot[0] - slot[i]) + jitter[i];
		c->s = wrap(c->d, t->length);
		c->lane = slot[i] % 2;
		double limit = c->profile[sample_at(t, c->s)];
		c->v = limit < c->cruise ? limit : c->cruise;
		out->grid[i] = slot[i] + 1;
	}
}

/* rank[i]: the cars ahead of car i (more total distance, or as much and a lower index). */
static void rank_cars(const car *cars, int rank[TRK_CARS])
{
	for (int i = 0; i < TRK_CARS; i++) {
		rank[i] = 0;
		for (int o = 0; o < TRK_CARS; o++)
			if (cars[o].d > cars[i].d || (cars[o].d == cars[i].d && o < i))
				rank[i]++;
	}
}

/* Counts the pairs whose order changed since prev_rank, then prev_rank = rank. */
static void count_passes(const car *cars, int prev_rank[TRK_CARS], int rank[TRK_CARS],
			 trk_race_result *out)
{
	rank_cars(cars, rank);
	for (int a = 0; a < TRK_CARS; a++)
		for (int b = a + 1; b < TRK_CARS; b++)
			if ((prev_rank[a] < prev_rank[b]) != (rank[a] < rank[b]))
				out->overtakes++;
	if (rank[0] < prev_rank[0])
		out->player_gained += (size_t)(prev_rank[0] - rank[0]);
	else
		out->player_lost += (size_t)(rank[0] - prev_rank[0]);
	memcpy(prev_rank, rank, TRK_CARS * sizeof *rank);
}

/* Hands the cars' state after tick `tick` to params->on_tick. */
static void report_tick(const trk_race_params *p, size_t tick, const car *cars)
{
	trk_car_state st[TRK_CARS];
	for (int i = 0; i < TRK_CARS; i++) {
		st[i].d = cars[i].d;
		st[i].s = cars[i].s;
		st[i].v = cars[i].v;
		st[i].skill = cars[i].skill;
		st[i].lane = cars[i].lane;
	}
	p->on_tick(p->on_tick_arg, tick, st);
}

int trk_race_run(const trk_track *track, const trk_race_params *params, const trk_px_model *model,
		 uint64_t seed, trk_race_result *out, sf_err *err)
{
	memset(out, 0, sizeof *out);
	out->stuck_segment = -1;
	int rc = check_track(track, err);
	if (rc)
		return rc;
	if ((rc = check_params(params, err)))
		return rc;
	if (!model || model->n == 0)
		return sf_err_set(err, SF_EINVAL, "model: missing or empty");

	const trk_track *t = track;
	const trk_race_params *p = params;
	size_t n = t->n, nseg = t->nsegments;
	double *profiles = malloc(TRK_CARS * n * sizeof *profiles);
	out->segment_px = malloc(nseg * sizeof *out->segment_px);
	px_state *px = malloc(sizeof *px);
	if (!profiles || !out->segment_px || !px) {
		rc = sf_err_set(err, SF_ENOMEM, "out of memory for a race on %zu samples", n);
		goto fail;
	}
	out->nsegments = nseg;
	for (size_t i = 0; i < nseg; i++)
		out->segment_px[i] = -1;

	car cars[TRK_CARS];
	grid_cars(t, p, seed, profiles, cars, out);
	int rank[TRK_CARS], prev_rank[TRK_CARS];
	rank_cars(cars, prev_rank);

	px->model = model;
	px->on_window = p->on_window;
	px->on_window_arg = p->on_window_arg;
	px->count = 0;
	px->sum = 0;
	px->npred = 0;
	px->pending = 0;
	px->last = -1;

	double limit = p->time_factor * t->length / p->top_speed + TRK_TIME_MARGIN;
	size_t max_ticks = (size_t)(limit / TRK_TICK);
	size_t log_cap = 0, seg = 0;
	size_t since_check = 0;
	double d_check = 0;
	int teleports = 0;
	int order[TRK_CARS];
	trk_px_sample smp;
	while (out->ticks < max_ticks) {
		/* Leader first; ties by car index. */
		for (int i = 0; i < TRK_CARS; i++) {
			int j = i;
			while (j > 0 && cars[order[j - 1]].d < cars[i].d) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = i;
		}
		double d_prev = cars[0].d, v_prev = cars[0].v;
		for (int i = 0; i < TRK_CARS; i++)
			drive(t, p, cars, order[i]);
		out->ticks++;
		count_passes(cars, prev_rank, rank, out);
		if (p->on_tick)
			report_tick(p, out->ticks, cars);
		car *me = &cars[0];
		smp = player_sample(t, p, cars, me->v < v_prev);
		out->final_standing = smp.standing;
		if (p->log && log_push(out, &log_cap, me->s, me->v)) {
			rc = sf_err_set(err, SF_ENOMEM, "out of memory for the race log");
			goto fail;
		}
		if (me->d >= t->length) {
			double frac = (t->length - d_prev) / (me->d - d_prev);
			out->lap_time = ((double)(out->ticks - 1) + frac) * TRK_TICK;
			out->finished = 1;
			if ((rc = px_log(px, &smp, err)) ||
			    (rc = px_close(px, out->segment_px, nseg - 1, err)))
				goto fail;
			for (size_t i = px->pending; i < nseg; i++)
				out->segment_px[i] = px->last;
			break;
		}
		size_t at = (size_t)(me->d / t->ds);
		while (seg + 1 < nseg && t->seg_start[seg + 1] <= at) {
			if ((rc = px_close(px, out->segment_px, seg, err)))
				goto fail;
			seg++;
			teleports = 0;
		}
		if ((rc = px_log(px, &smp, err)))
			goto fail;
		if (++since_check == TRK_STUCK_TICKS) {
			if (me->d - d_check < TRK_STUCK_DIST) {
				me->d = (double)t->seg_start[seg] * t->ds;
				me->s = wrap(me->d, t->length);
				me->v = 0;
				if (++teleports == TRK_STUCK_TELEPORTS) {
					out->stuck_segment = (int)seg;
					break;
				}
			}
			since_check = 0;
			d_check = me->d;
		}
	}
	if (!out->finished) {
		/* Segments crossed without a sample before the failed one take the
		 * last closed value, as at the finish; the failed segment and every
		 * later one stay -1. */
		for (size_t i = px->pending; i < seg; i++)
			out->segment_px[i] = px->last;
		for (size_t i = seg; i < nseg; i++)
			out->segment_px[i] = -1;
	}
	free(profiles);
	free(px);
	return 0;
fail:
	free(profiles);
	free(px);
	trk_race_result_free(out);
	out->stuck_segment = -1;
	return rc;
}

double trk_target_at(const double *target, size_t ntarget, double x)
{
	if (ntarget == 1 || x <= 0)
		return target[0];
	if (x >= (double)(ntarget - 1))
		return target[ntarget - 1];
	size_t i = (size_t)x;
	double frac = x - (double)i;
	return frac == 0 ? target[i] : target[i] + frac * (target[i + 1] - target[i]);
}

double trk_race_fitness(const trk_track *track, const trk_race_result *r, const double *target,
			size_t ntarget)
{
	if (!track || !r || !target || ntarget == 0 || track->n == 0)
		return -HUGE_VAL;
	double fitness = 0;
	for (size_t i = 0; i < track->nsegments; i++) {
		size_t a = track->seg_start[i];
		size_t b = i + 1 < track->nsegments ? track->seg_start[i + 1] : track->n;
		/* x = (a + b) / (2 n) * (ntarget - 1), the product first so that a
		 * midpoint on a grid point lands on it exactly. */
		double x = ((double)(a + b) * (double)(ntarget - 1)) / (double)(2 * track->n);
		double sim = r->segment_px && i < r->nsegments ? r->segment_px[i] : -1;
		double diff = trk_target_at(target, ntarget, x) - sim;
		fitness -= diff < 0 ? -diff : diff;
	}
	return fitness;
}
