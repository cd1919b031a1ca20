/*
 * bench_racetrack.c - `make bench`, part three: the racetrack kind.
 *
 *  - One default racetrack job end to end (params {}), through the kind
 *    registry exactly as `starforge generate racetrack` runs it, on 1 and 2
 *    threads: median wall time over 5 seeds.
 *  - Races simulated per second on one core, on an 800 m oval with hills,
 *    with the shipped synthetic experience model.
 *  - Issue 13: the GA against random search with the same evaluations, for
 *    four target shapes within [0.2, 0.8] x BENCH_RACETRACK_SEEDS job seeds
 *    (default 5): the mean per-segment |target - simulated PX| of each level
 *    on its own fitness races and re-raced on HELDOUT races the search never
 *    saw (trk_heldout_seeds), medians per shape, the GA/random ratios and
 *    the held-out/own ratio. BENCH_RACETRACK_SEEDS=0 skips it.
 * Issue 5's target: a default job in at most 5 s on a 2-core machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_racetrack"
#include "bench_util.h"
#include "kinds.h"
#include "racetrack/fitness.h"
#include "racetrack/race.h"
#include "racetrack/search.h"
#include "racetrack/track.h"
#include "search/ga.h"

#include <unistd.h>

enum { HELDOUT = 30 }; /* held-out races per level */

/*
 * The held-out check: the mean per-segment error of `lv`'s track re-raced
 * on HELDOUT seeds from trk_heldout_seeds(seed), with the level's player.
 */
static double heldout_error(const trk_level *lv, const trk_search_params *p,
			    const trk_px_model *model, uint64_t seed)
{
	uint64_t seeds[HELDOUT];
	trk_heldout_seeds(seed, HELDOUT, seeds);
	trk_race_params rp;
	trk_race_params_default(&rp);
	rp.player_skill = p->player_skill;
	trk_px_fit fit;
	sf_err err = { 0 };
	if (trk_track_px(lv->track, &rp, model, seeds, HELDOUT, p->target, p->ntarget, &fit, NULL,
			 &err))
		die("held-out races", &err);
	return fit.error;
}

/* GA against random search, own and held-out error; see the top. */
static void compare(int nseeds)
{
	static const struct {
		const char *name;
		size_t n;
		double target[5];
	} shapes[] = {
		{ "rising", 2, { 0.2, 0.8 } },
		{ "falling", 2, { 0.8, 0.2 } },
		{ "peaked", 5, { 0.2, 0.5, 0.8, 0.5, 0.2 } },
		{ "valley", 5, { 0.8, 0.5, 0.2, 0.5, 0.8 } },
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = cores > 0 ? (int)cores : 1;
	double *v = malloc(4 * (size_t)nseeds * sizeof *v);
	if (!v) {
		fprintf(stderr, BENCH_NAME ": out of memory\n");
		exit(1);
	}
	printf("\nGA vs random search, default params, %d job seeds per shape, %d held-out races\n",
	       nseeds, HELDOUT);
	trk_search_params def;
	trk_search_params_default(&def);
	printf("mean per-segment |target - PX|, medians  (own: the level's %d fitness races)\n\n",
	       def.races_per_genome);
	printf("%-8s %9s %9s %9s %9s %9s %9s %9s %9s\n", "target", "GA own", "GA held", "rnd own",
	       "rnd held", "GA/rnd", "GA/rnd", "held/own", "evals");
	printf("%-8s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "", "", "", "", "own", "held", "GA",
	       "GA/rnd");
	sf_err err = { 0 };
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		double *e[4] = { v, v + nseeds, v + 2 * nseeds, v + 3 * nseeds }, evals[2] = { 0 };
		for (int a = 0; a < 2; a++)
			for (int i = 0; i < nseeds; i++) {
				trk_search_params p;
				trk_search_params_default(&p);
				p.ntarget = shapes[s].n;
				memcpy(p.target, shapes[s].target, p.ntarget * sizeof *p.target);
				p.algorithm = a ? TRK_ALG_RANDOM : TRK_ALG_GA;
				trk_px_model *model = trk_search_model(&p, &err);
				if (!model)
					die("model", &err);
				trk_search_opts opts = { .seed = (uint64_t)i + 1,
							 .threads = threads };
				trk_search_result res;
				if (trk_search_run(&p, &opts, &res, &err))
					die("search", &err);
				e[2 * a][i] = res.levels[0].fit.error;
				e[2 * a + 1][i] =
					heldout_error(&res.levels[0], &p, model, (uint64_t)i + 1);
				evals[a] += (double)res.evaluations;
				trk_search_result_free(&res);
				trk_px_model_free(model);
			}
		double ga_own = median(e[0], nseeds), ga_held = median(e[1], nseeds);
		double rnd_own = median(e[2], nseeds), rnd_held = median(e[3], nseeds);
		printf("%-8s %9.4f %9.4f %9.4f %9.4f %9.2f %9.2f %9.2f %9.3f\n", shapes[s].name,
		       ga_own, ga_held, rnd_own, rnd_held, ga_own / rnd_own, ga_held / rnd_held,
		       ga_held / ga_own, evals[0] / evals[1]);
		fflush(stdout);
	}
	free(v);
}

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
	const char *env = getenv("BENCH_RACETRACK_SEEDS");
	int nseeds = env && *env ? atoi(env) : 5;
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
	if (nseeds > 0)
		compare(nseeds);
	return 0;
}
