/*
 * race.h - the simulated race of the racetrack kind (shared/seeds/001).
 *
 * A fixed tick of 0.02 s; four cars on a sampled trk_track, car 0 the
 * player agent. The opponents' skills are seeded, spread wide around the
 * player's; skill sets a car's cruising speed, cornering grip and
 * acceleration. Speed is limited by curvature (lateral grip) and slope,
 * with braking ahead of corners. The start is rolling, in single file, the
 * slowest car in front; cars interact: a car ahead gives a tow (more
 * acceleration and cruising speed) to the one behind, a car cannot drive
 * through the one ahead in its lane (it is blocked), and after a short
 * follow a faster car pulls out to pass where it is not cornering hard;
 * standings and passes are kept. race.c's design comment gives the figures
 * and why the race is built to be lively. The player logs a trk_px_sample
 * (px.h) every tick; every 50 samples the window goes through the
 * experience model and the PX value is kept; at the end of each segment
 * the remaining samples are flushed and the segment's PX is the mean of
 * its values.
 *
 * Ending: the player completes a lap; or it is stuck (not moving for
 * 50 ticks teleports it to the start of its current segment; the third
 * teleport in one segment marks it unplayable and ends the race);
 * or the time limit, proportional to the track length, runs out. Segments
 * without a PX value get -1.
 *
 * Determinism: same track, params and seed give the same race, bit for
 * bit: IEEE arithmetic and sqrt only, no libm transcendental functions.
 */
#ifndef SF_TRK_RACE_H
#define SF_TRK_RACE_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "px.h"
#include "racetrack.h"

#define TRK_TICK 0.02
#define TRK_CARS 4
/* TRK_PX_WINDOW (samples per experience window) comes from px.h. */

/* A car after a tick, as params.on_tick sees it. */
typedef struct trk_car_state {
	double d;     /* total distance from the player's start line, m */
	double s;     /* arc position, d wrapped into [0, length) */
	double v;     /* speed, m/s */
	double skill; /* 0..1 */
	int lane;     /* 0 or 1 */
} trk_car_state;

typedef struct trk_race_params {
	double player_skill; /* 0..1; opponents' skills are drawn around it */
	double grip;         /* lateral acceleration limit, m/s^2 (default 9) */
	double top_speed;    /* m/s (default 60) */
	double accel, brake; /* m/s^2 (defaults 6 and 12) */
	double time_factor;  /* time limit = time_factor * length / top_speed + 30 s (default 4) */
	int log;             /* keep the player's per-tick lap log (positions, speed) */
	/* When not NULL, called after every tick (tick 1, 2, ...) with every
	 * car's state, index 0 the player, before the player's stuck check: a
	 * seam for tests and tools that only reads. The state is borrowed for
	 * the call; the race does not depend on what the hook does. */
	void (*on_tick)(void *arg, size_t tick, const trk_car_state cars[TRK_CARS]);
	void *on_tick_arg;
	/* When not NULL, called with every feature window of the player (px.h)
	 * just before the model predicts it: how tools/px_synth draws the
	 * synthetic trace set from the race's own feature distribution. Read
	 * only, like on_tick. */
	void (*on_window)(void *arg, const double window[TRK_PX_NFEAT]);
	void *on_window_arg;
} trk_race_params;

typedef struct trk_race_result {
	int finished;      /* the player completed the lap */
	int stuck_segment; /* segment found unplayable, or -1 */
	double lap_time;   /* seconds, when finished */
	size_t nsegments;
	double *segment_px; /* per segment: mean PX, or -1 */
	int final_standing; /* 1..4; = grid[0] - player_gained + player_lost */
	size_t ticks;
	double skill[TRK_CARS]; /* every car's skill, index 0 the player */
	int grid[TRK_CARS];     /* every car's starting place, 1 the front */
	size_t overtakes;       /* pairs of cars that changed order, summed over ticks */
	size_t player_gained;   /* places the player gained, summed over ticks */
	size_t player_lost;     /* places the player lost (teleports included) */
	/* when params.log: the player's lap, one entry per tick */
	size_t nlog;
	float *log_s;     /* arc position along the track, m */
	float *log_speed; /* m/s */
} trk_race_result;

/* Defaults listed above, player_skill 0.5, log 0, on_tick NULL. */
void trk_race_params_default(trk_race_params *p);

/*
 * Races on `track` with the experience `model`, the opponents' skills and
 * starting jitter drawn from `seed`. Fills `out` (its arrays are malloc'ed;
 * free with trk_race_result_free). Returns 0, SF_EINVAL for bad params
 * (message names the field) or a track without samples or segments, or
 * SF_ENOMEM; `out` then holds no arrays.
 */
int trk_race_run(const trk_track *track, const trk_race_params *params, const trk_px_model *model,
		 uint64_t seed, trk_race_result *out, sf_err *err);

/* Frees the arrays of `r` and zeroes it; safe on a zeroed result. */
void trk_race_result_free(trk_race_result *r);

/*
 * The speed limit at each sample from curvature and slope alone, with the
 * braking needed ahead of corners applied backwards around the loop (so it
 * is consistent across the start line): v[i] for i in 0..n-1, m/s. The cars
 * never exceed it (tested).
 */
int trk_speed_profile(const trk_track *track, const trk_race_params *params, double *v,
		      sf_err *err);

/*
 * The target PX curve target[0..ntarget-1] (evenly spaced over the lap, first
 * at fraction 0, last at 1) at x = fraction * (ntarget - 1), by linear
 * interpolation; x on a grid point returns that point exactly.
 */
double trk_target_at(const double *target, size_t ntarget, double x);

/*
 * The fitness of a race against a target PX curve defined over the fraction
 * of the lap: target(f) for f in [0,1] given as `ntarget` evenly spaced
 * points (linear interpolation, first at f = 0, last at f = 1); each segment
 * is compared at the fraction of its midpoint. Fitness = -sum over segments
 * of |target - simulated| (a missing segment counts as PX -1), so a perfect
 * match scores 0. Returns -HUGE_VAL when ntarget is 0 or an argument is NULL.
 */
double trk_race_fitness(const trk_track *track, const trk_race_result *r, const double *target,
			size_t ntarget);

#endif
