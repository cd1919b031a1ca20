/*
 * fitness.h - how closely a track's races follow the designer's PX curve,
 * measured fairly (issue 13).
 *
 * Common random numbers: every track a search compares is raced on the
 * same fixed set of race seeds, derived from the job's seed alone
 * (trk_race_seeds()), so two tracks meet the same opponents' skills and
 * the same starting jitter, and the difference in their PX is the
 * tracks' doing, not the dice's. A segment's PX is the mean over those
 * races (a segment the player never completed counts as -1 in that race);
 * its spread is the standard deviation over them.
 *
 * Fitness per segment: the error is the mean over segments of
 * |target - mean simulated PX|, each segment compared at the fraction of
 * the lap of its midpoint, so a track is not rewarded for having fewer
 * segments (the paper's sum is). It lies in 0..2; 0 is a perfect match.
 *
 * Everything here is a pure function of its arguments and runs on the
 * caller's thread; the search parallelises over genomes, never within one.
 */
#ifndef SF_TRK_FITNESS_H
#define SF_TRK_FITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "px.h"
#include "race.h"
#include "track.h"

#define TRK_FIT_MAX_SEGMENTS 24 /* the circuit's most vertices (search.h) */
#define TRK_MAX_RACES 64        /* races_per_genome's upper bound */

/* A track's PX against a target, over a set of races. */
typedef struct trk_px_fit {
	size_t nsegments;
	size_t nraces;
	double target[TRK_FIT_MAX_SEGMENTS]; /* the target at each segment's midpoint */
	double mean[TRK_FIT_MAX_SEGMENTS];   /* mean PX over the races (-1 when never completed) */
	double sd[TRK_FIT_MAX_SEGMENTS];     /* its population standard deviation */
	double error;                        /* mean over segments of |target - mean|, 0..2 */
	double completed; /* share of (race, segment) pairs the player completed */
} trk_px_fit;

/*
 * Writes `n` race seeds for the job seeded `job_seed` to out[0..n-1]: 53-bit
 * values (exact in every JSON reader), a pure function of (job_seed, k), so
 * a job's first k seeds are the same whatever n. Seeds of distinct jobs, or
 * a job's seeds and trk_heldout_seeds(), do not coincide in practice.
 */
void trk_race_seeds(uint64_t job_seed, size_t n, uint64_t *out);

/*
 * `n` seeds of the job seeded `job_seed` that no search of it selects on:
 * the races a level reports its PX and error over (search.h, level_races),
 * so the reported error is not the luck of the races the level was chosen
 * on. Prefix-stable like trk_race_seeds(), another stream.
 */
void trk_report_seeds(uint64_t job_seed, size_t n, uint64_t *out);

/*
 * `n` seeds from another stream than trk_race_seeds() of any job: for
 * re-racing a level on races its search never saw (the held-out check).
 */
void trk_heldout_seeds(uint64_t seed, size_t n, uint64_t *out);

/*
 * The target at segment i of `track`: target[0..ntarget-1] evenly spaced
 * over the lap, read at the fraction of the segment's midpoint (as the
 * paper's trk_race_fitness() reads it).
 */
double trk_segment_target(const trk_track *track, size_t i, const double *target, size_t ntarget);

/*
 * The mean over the track's segments of |target - px[i]|, px holding one
 * value per segment (-1 for one never completed). Returns -1 when an
 * argument is NULL or empty.
 */
double trk_segment_error(const trk_track *track, const double *px, const double *target,
			 size_t ntarget);

/*
 * Races `track` once per seed in seeds[0..nseeds-1] (1..TRK_MAX_RACES) with
 * `params` and `model`, and fills `out` with each segment's mean PX, its
 * spread and the per-segment error against target[0..ntarget-1]. When
 * `first` is not NULL it receives the race of seeds[0] (free it with
 * trk_race_result_free). Returns 0, SF_EINVAL (bad counts, a track with
 * more than TRK_FIT_MAX_SEGMENTS segments), or the race's error (SF_ENOMEM).
 */
int trk_track_px(const trk_track *track, const trk_race_params *params, const trk_px_model *model,
		 const uint64_t *seeds, size_t nseeds, const double *target, size_t ntarget,
		 trk_px_fit *out, trk_race_result *first, sf_err *err);

#endif
