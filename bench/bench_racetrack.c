/*
 * bench_racetrack.c - `make bench`, part three: the racetrack kind.
 *
 *  - One default racetrack job end to end (params {}), through the kind
 *    registry exactly as `starforge generate racetrack` runs it, on 1 and 2
 *    threads: median wall time over 5 seeds.
 *  - Races simulated per second on one core, on an 800 m oval with hills,
 *    with the shipped synthetic experience model.
 * Issue 5's target: a default job in at most 5 s on a 2-core machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_racetrack"
#include "bench_util.h"
#include "kinds.h"
#include "racetrack/race.h"
#include "racetrack/track.h"
#include "search/ga.h"

static double time_job(const sf_kind *kind, uint64_t seed, int threads)
{
	sf_err err = { 0 };
	void *params = kind->params_parse(NULL, &err);
	if (!params)
		die("params", &err);
	sf_gen_opts opts = { .seed = seed, .threads = threads };
	double t = ga_clock_now();
	json_t *doc = kind->generate(params, &opts, &err);
	t = ga_clock_now() - t;
	if (!doc)
		die("generate", &err);
	json_decref(doc);
	kind->params_free(params);
	return t;
}

int main(void)
{
	const sf_kind *kind = sf_kind_find("racetrack");
	if (!kind) {
		fprintf(stderr, "bench_racetrack: no racetrack kind\n");
		return 1;
	}
	enum { SEEDS = 5 };
	double t1[SEEDS], t2[SEEDS];
	for (int i = 0; i < SEEDS; i++) {
		t1[i] = time_job(kind, (uint64_t)i + 1, 1);
		t2[i] = time_job(kind, (uint64_t)i + 1, 2);
	}
	printf("\nStarforge racetrack benchmark (medians over %d seeds)\n\n", SEEDS);
	printf("%-52s %8.3f s\n", "default racetrack job, 1 thread", median(t1, SEEDS));
	printf("%-52s %8.3f s\n", "default racetrack job, 2 threads", median(t2, SEEDS));

	/* An oval with hills: 64 control points on an ellipse of 160 x 90 m. */
	enum { M = 64 };
	trk_vec2 ctrl[M];
	double c = 1, s = 0; /* rotate by 2 pi / M with a fixed rotation matrix */
	const double cs = 0.99518472667219688624, sn = 0.09801714032956060199;
	for (int i = 0; i < M; i++) {
		ctrl[i] = (trk_vec2){ 160 * c, 90 * s };
		double nc = c * cs - s * sn;
		s = c * sn + s * cs;
		c = nc;
	}
	trk_track_params tp = { .spacing = 2,
				.width = 12,
				.amplitude = 6,
				.period = 4,
				.octaves = 2,
				.max_slope = 0.08,
				.seed = 7 };
	sf_err err = { 0 };
	trk_track *track = trk_track_build(ctrl, M, &tp, &err);
	trk_px_model *model = trk_px_synth(TRK_PX_SYNTH_SEED, 200, &err);
	if (!track || !model)
		die("track or model", &err);
	trk_race_params rp;
	trk_race_params_default(&rp);
	enum { RACES = 2000 };
	double t = ga_clock_now();
	for (int i = 0; i < RACES; i++) {
		trk_race_result r;
		if (trk_race_run(track, &rp, model, (uint64_t)i, &r, &err))
			die("race", &err);
		trk_race_result_free(&r);
	}
	t = ga_clock_now() - t;
	printf("%-52s %8.0f /s  (%.0f m lap)\n", "races simulated, one core", RACES / t,
	       track->length);
	trk_track_free(track);
	trk_px_model_free(model);
	return 0;
}
