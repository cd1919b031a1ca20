/*
 * bench_racetrack.c - `make bench`, part three: the racetrack kind.
 *
 * Issue 13's goals, measured here (docs/racetrack.md, "GA against random
 * search"):
 *
 *   "Mean per-segment |target - simulated PX|, re-raced on held-out race
 *   seeds, at most 0.05 for shaped targets within [0.2, 0.8] (rising,
 *   falling, peaked, valley, two peaks), median over 10 job seeds."
 *   "The GA's error at most 0.6 x that of random search with the same
 *   number of evaluations."
 *   "Held-out error at most 1.15 x the level's reported error."
 *   "A default job at most 5 s on 2 cores."
 *
 * What it prints:
 *
 *  - One default racetrack job end to end (params {}), through the kind
 *    registry exactly as `starforge generate racetrack` runs it, on 1 and 2
 *    threads: median wall time over 5 seeds, and the 5 s goal's pass/fail.
 *  - Races simulated per second on one core, on an 800 m oval with hills,
 *    with the shipped synthetic experience model.
 *  - The GA against random search with the same evaluations, default params
 *    but the target, for five target shapes within [0.2, 0.8] (rising,
 *    falling, peaked, valley, two peaks; see `shapes` below) x job seeds
 *    1..N, N = BENCH_RACETRACK_SEEDS (default 10; 0 skips everything
 *    below): the mean per-segment |target - simulated PX| of each level on
 *    its own races (the level_races report races, trk_report_seeds) and
 *    re-raced on HELDOUT races the search never
 *    saw (trk_heldout_seeds), medians per shape and over every shape x seed
 *    ("all shapes"), the GA/random ratios, the held-out/own ratio and the
 *    evaluations ratio; then one pass/fail line per goal, each goal applied
 *    to every shape's medians. Searches run on SEARCH_THREADS threads,
 *    which never changes a result.
 *  - What the GA's tracks look like per target shape (the five above, flat
 *    0.3 and flat 0.7), medians over the seeds, as a markdown table for
 *    docs/racetrack.md: length, segments, mean |curvature| over samples,
 *    share of samples on straights, elevation range, max |slope|, share of
 *    samples at the slope cap, and the correlation over a track's segments
 *    between the target PX and the segment's mean |curvature|. The five
 *    shapes reuse the comparison's GA levels; only the flat targets are
 *    searched again.
 *  - With BENCH_RACETRACK_SVG_DIR set: the picture (the kind's level_svg
 *    hook, what `starforge picture` draws) of the GA level of seed 1 for
 *    rising, valley and two peaks, written there as
 *    racetrack-<shape>-seed1.svg (the directory is created if missing).
 *
 * Everything but the timings is a pure function of the seeds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BENCH_NAME "bench_racetrack"
#include "bench_util.h"
#include "kinds.h"
#include "racetrack/fitness.h"
#include "racetrack/race.h"
#include "racetrack/search.h"
#include "racetrack/track.h"
#include "search/ga.h"

enum {
	HELDOUT = 30,       /* held-out races per level */
	SEARCH_THREADS = 2, /* the comparison's searches */
	NCOMPARED = 5,      /* shapes[0..NCOMPARED-1]: GA against random */
};

/* Issue 13's goals (see the top). */
#define GOAL_HELD 0.05       /* GA held-out error, median per shape */
#define GOAL_GA_RANDOM 0.6   /* GA / random, held out */
#define GOAL_HELD_OWN 1.15   /* GA held out / own */
#define GOAL_JOB_SECONDS 5.0 /* a default job on 2 threads */

/* The search's slope cap (search.c's TRK_MAX_SLOPE, not exported). */
#define SLOPE_CAP 0.08
#define STRAIGHT_CURVATURE 0.005 /* |curvature| below this, 1/m: a straight */

static const struct {
	const char *name;
	size_t n;
	double target[5];
	int picture; /* write seed 1's GA level as an SVG */
} shapes[] = {
	{ "rising", 2, { 0.2, 0.8 }, 1 },
	{ "falling", 2, { 0.8, 0.2 }, 0 },
	{ "peaked", 5, { 0.2, 0.5, 0.8, 0.5, 0.2 }, 0 },
	{ "valley", 5, { 0.8, 0.5, 0.2, 0.5, 0.8 }, 1 },
	{ "two peaks", 5, { 0.2, 0.8, 0.2, 0.8, 0.2 }, 1 },
	/* the shape table only */
	{ "flat 0.3", 2, { 0.3, 0.3 }, 0 },
	{ "flat 0.7", 2, { 0.7, 0.7 }, 0 },
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* What a track looks like: the shape table's columns. */
enum {
	ST_LENGTH,    /* m */
	ST_SEGMENTS,  /* segments (genes) */
	ST_CURVATURE, /* mean |curvature| over samples, 1/m */
	ST_STRAIGHT,  /* share of samples with |curvature| < STRAIGHT_CURVATURE */
	ST_ELEVATION, /* max z - min z, m */
	ST_MAX_SLOPE, /* max |slope| */
	ST_AT_CAP,    /* share of samples with |slope| within 1e-9 of SLOPE_CAP */
	ST_CORR,      /* Pearson r over segments: target PX vs mean |curvature|; NaN if undefined */
	NSTATS
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, BENCH_NAME ": out of memory\n");
		exit(1);
	}
	return p;
}

/* The median of the finite values of v[0..n), left unchanged; NaN if none. */
static double median_of(const double *v, int n)
{
	double *w = xmalloc((size_t)n * sizeof *w);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			w[m++] = v[i];
	double r = m ? median(w, m) : NAN;
	free(w);
	return r;
}

/* The Pearson correlation of x and y over n values; NaN when either is constant. */
static double pearson(const double *x, const double *y, size_t n)
{
	if (n < 2)
		return NAN;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++)
		mx += x[i], my += y[i];
	mx /= (double)n, my /= (double)n;
	double sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (!(sxx > 1e-18) || !(syy > 1e-18))
		return NAN;
	return sxy / sqrt(sxx * syy);
}

/* The shape table's figures of `track` raced against target[0..ntarget). */
static void track_stats(const trk_track *t, const double *target, size_t ntarget, double st[NSTATS])
{
	double sum = 0, zlo = INFINITY, zhi = -INFINITY, smax = 0;
	size_t straight = 0, cap = 0;
	for (size_t k = 0; k < t->n; k++) {
		double c = fabs(t->curvature[k]), s = fabs(t->slope[k]), z = t->samples[k].z;
		sum += c;
		straight += c < STRAIGHT_CURVATURE;
		cap += fabs(s - SLOPE_CAP) <= 1e-9;
		if (s > smax)
			smax = s;
		if (z < zlo)
			zlo = z;
		if (z > zhi)
			zhi = z;
	}
	double n = t->n ? (double)t->n : 1;
	st[ST_LENGTH] = t->length;
	st[ST_SEGMENTS] = (double)t->nsegments;
	st[ST_CURVATURE] = sum / n;
	st[ST_STRAIGHT] = (double)straight / n;
	st[ST_ELEVATION] = t->n ? zhi - zlo : 0;
	st[ST_MAX_SLOPE] = smax;
	st[ST_AT_CAP] = (double)cap / n;
	/* Segment i: samples seg_start[i] up to seg_start[i + 1], wrapping. */
	size_t m = t->nsegments;
	double *tg = xmalloc(2 * (m ? m : 1) * sizeof *tg), *curv = tg + (m ? m : 1);
	for (size_t i = 0; i < m; i++) {
		size_t a = t->seg_start[i], b = i + 1 < m ? t->seg_start[i + 1] : t->seg_start[0];
		size_t len = b >= a && m > 1 ? b - a : t->n - a + b, cnt = 0;
		double cs = 0;
		for (size_t k = a; cnt < len; k = (k + 1) % t->n, cnt++)
			cs += fabs(t->curvature[k]);
		curv[i] = len ? cs / (double)len : 0;
		tg[i] = trk_segment_target(t, i, target, ntarget);
	}
	st[ST_CORR] = pearson(tg, curv, m);
	free(tg);
}

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

/*
 * Writes the picture of `lv` (job seed `seed`) into dir as
 * racetrack-<shape>-seed<seed>.svg (spaces in the shape's name as '-'), and
 * appends the path to `list` (size `cap`) for the report.
 */
static void write_picture(const sf_kind *kind, const char *dir, const char *shape,
			  const trk_level *lv, const trk_search_params *p, uint64_t seed,
			  char *list, size_t cap)
{
	sf_err err = { 0 };
	json_t *level = trk_level_json(lv, p, seed);
	if (!level) {
		fprintf(stderr, BENCH_NAME ": out of memory writing a level\n");
		exit(1);
	}
	char *svg = kind->level_svg(level, &err);
	json_decref(level);
	if (!svg)
		die("picture", &err);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, BENCH_NAME ": mkdir %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	char path[4096], name[64];
	size_t j = 0;
	for (const char *c = shape; *c && j < sizeof name - 1; c++)
		name[j++] = *c == ' ' ? '-' : *c;
	name[j] = 0;
	snprintf(path, sizeof path, "%s/racetrack-%s-seed%llu.svg", dir, name,
		 (unsigned long long)seed);
	FILE *f = fopen(path, "w");
	if (!f || fputs(svg, f) < 0 || fclose(f)) {
		fprintf(stderr, BENCH_NAME ": cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	free(svg);
	size_t used = strlen(list);
	snprintf(list + used, cap - used, "  %s\n", path);
}

/* One search of shapes[s] with job seed `seed`; dies when it fails. */
static void search(size_t s, trk_algorithm alg, uint64_t seed, const trk_px_model *model,
		   trk_search_params *p, trk_search_result *res)
{
	trk_search_params_default(p);
	p->ntarget = shapes[s].n;
	memcpy(p->target, shapes[s].target, p->ntarget * sizeof *p->target);
	p->algorithm = alg;
	trk_search_opts opts = { .seed = seed, .threads = SEARCH_THREADS, .model = model };
	sf_err err = { 0 };
	if (trk_search_run(p, &opts, res, &err))
		die("search", &err);
}

static const char *verdict(int ok)
{
	return ok ? "PASS" : "FAIL";
}

/*
 * GA against random search for shapes[0..NCOMPARED), then the shape table
 * for every shape; see the top.
 */
static void compare(const sf_kind *kind, int nseeds)
{
	const char *svg_dir = getenv("BENCH_RACETRACK_SVG_DIR");
	if (svg_dir && !*svg_dir)
		svg_dir = NULL;
	sf_err err = { 0 };
	trk_search_params def;
	trk_search_params_default(&def);
	trk_px_model *model = trk_search_model(&def, &err);
	if (!model)
		die("model", &err);
	size_t ns = (size_t)nseeds;
	/* e[a][s * nseeds + i]: GA own, GA held, random own, random held */
	double *e[4];
	for (int a = 0; a < 4; a++)
		e[a] = xmalloc(NCOMPARED * ns * sizeof *e[a]);
	double *st = xmalloc(NSHAPES * ns * NSTATS * sizeof *st); /* [shape][seed][stat] */
	double evals[NCOMPARED][2] = { { 0 } }, med[NCOMPARED + 1][4], evals_all[2] = { 0 };
	char pictures[NSHAPES * 4200] = ""; /* the SVG files written, one a line */

	printf("\nGA vs random search, default params, %d job seeds per shape, %d held-out races,"
	       " %d search threads\n",
	       nseeds, HELDOUT, SEARCH_THREADS);
	printf("mean per-segment |target - PX|, medians  (own: the level's %d report races; the "
	       "search chose on %d fitness races)\n\n",
	       def.level_races, def.races_per_genome);
	printf("%-10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "target", "GA own", "GA held", "rnd own",
	       "rnd held", "GA/rnd", "GA/rnd", "held/own", "evals");
	printf("%-10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "", "", "", "", "own", "held", "GA",
	       "GA/rnd");
	fflush(stdout);
	double t0 = ga_clock_now();
	for (size_t s = 0; s < NCOMPARED; s++) {
		for (int a = 0; a < 2; a++)
			for (size_t i = 0; i < ns; i++) {
				uint64_t seed = (uint64_t)i + 1;
				trk_search_params p;
				trk_search_result res;
				search(s, a ? TRK_ALG_RANDOM : TRK_ALG_GA, seed, model, &p, &res);
				const trk_level *lv = &res.levels[0];
				e[2 * a][s * ns + i] = lv->fit.error;
				e[2 * a + 1][s * ns + i] = heldout_error(lv, &p, model, seed);
				evals[s][a] += (double)res.evaluations;
				if (!a) {
					track_stats(lv->track, p.target, p.ntarget,
						    st + (s * ns + i) * NSTATS);
					if (svg_dir && shapes[s].picture && seed == 1)
						write_picture(kind, svg_dir, shapes[s].name, lv, &p,
							      seed, pictures, sizeof pictures);
				}
				trk_search_result_free(&res);
			}
		for (int a = 0; a < 4; a++)
			med[s][a] = median_of(e[a] + s * ns, nseeds);
		evals_all[0] += evals[s][0], evals_all[1] += evals[s][1];
		printf("%-10s %9.4f %9.4f %9.4f %9.4f %9.2f %9.2f %9.2f %9.3f\n", shapes[s].name,
		       med[s][0], med[s][1], med[s][2], med[s][3], med[s][0] / med[s][2],
		       med[s][1] / med[s][3], med[s][1] / med[s][0], evals[s][0] / evals[s][1]);
		fflush(stdout);
	}
	for (int a = 0; a < 4; a++)
		med[NCOMPARED][a] = median_of(e[a], NCOMPARED * nseeds);
	const double *m = med[NCOMPARED];
	printf("%-10s %9.4f %9.4f %9.4f %9.4f %9.2f %9.2f %9.2f %9.3f\n", "all shapes", m[0], m[1],
	       m[2], m[3], m[0] / m[2], m[1] / m[3], m[1] / m[0], evals_all[0] / evals_all[1]);
	printf("(all shapes: medians over every shape x seed, ratios of those medians)\n");
	printf("comparison: %.0f s for %d searches\n", ga_clock_now() - t0, 2 * NCOMPARED * nseeds);
	if (*pictures)
		printf("pictures of the GA levels (BENCH_RACETRACK_SVG_DIR):\n%s", pictures);
	printf("\n");

	/* The goals, each applied to every shape's medians. */
	int ok[3] = { 1, 1, 1 };
	for (size_t s = 0; s < NCOMPARED; s++) {
		ok[0] &= med[s][1] <= GOAL_HELD;
		ok[1] &= med[s][1] / med[s][3] <= GOAL_GA_RANDOM;
		ok[2] &= med[s][1] / med[s][0] <= GOAL_HELD_OWN;
	}
	const char *what[3] = { "GA held-out error", "GA/random, held out", "GA held out/own" };
	const double goal[3] = { GOAL_HELD, GOAL_GA_RANDOM, GOAL_HELD_OWN };
	for (int g = 0; g < 3; g++) {
		int pass = 0;
		double worst = -INFINITY;
		for (size_t s = 0; s < NCOMPARED; s++) {
			double v = g == 0   ? med[s][1]
				   : g == 1 ? med[s][1] / med[s][3]
					    : med[s][1] / med[s][0];
			pass += v <= goal[g];
			if (v > worst)
				worst = v;
		}
		printf("goal (issue 13) %-20s <= %4.2f per shape: %s  (%d of %d shapes, worst "
		       "%.3f)\n",
		       what[g], goal[g], verdict(ok[g]), pass, NCOMPARED, worst);
	}
	fflush(stdout);

	/* The shape table: flat targets need GA runs of their own. */
	t0 = ga_clock_now();
	for (size_t s = NCOMPARED; s < NSHAPES; s++)
		for (size_t i = 0; i < ns; i++) {
			uint64_t seed = (uint64_t)i + 1;
			trk_search_params p;
			trk_search_result res;
			search(s, TRK_ALG_GA, seed, model, &p, &res);
			track_stats(res.levels[0].track, p.target, p.ntarget,
				    st + (s * ns + i) * NSTATS);
			trk_search_result_free(&res);
		}
	printf("\nWhat the GA's tracks look like, default params, medians over %d job seeds\n"
	       "(the comparison's GA levels; flat targets searched again in %.0f s). Straights:\n"
	       "|curvature| < %g /m; at cap: |slope| within 1e-9 of %.2f; r: correlation over a\n"
	       "track's segments between the target PX and the segment's mean |curvature|.\n\n",
	       nseeds, ga_clock_now() - t0, STRAIGHT_CURVATURE, SLOPE_CAP);
	printf("| target | length (m) | segments | mean abs curvature (1/m) | straights | "
	       "elevation range (m) | max abs slope | at slope cap | r (target PX, curvature) "
	       "|\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	double *col = xmalloc(ns * sizeof *col);
	for (size_t s = 0; s < NSHAPES; s++) {
		double md[NSTATS];
		for (int k = 0; k < NSTATS; k++) {
			for (size_t i = 0; i < ns; i++)
				col[i] = st[(s * ns + i) * NSTATS + k];
			md[k] = median_of(col, nseeds);
		}
		char target[64] = "", r[16];
		size_t len = 0;
		for (size_t j = 0; j < shapes[s].n; j++)
			len += (size_t)snprintf(target + len, sizeof target - len, "%s%.1f",
						j ? ", " : "", shapes[s].target[j]);
		if (isfinite(md[ST_CORR]))
			snprintf(r, sizeof r, "%+.2f", md[ST_CORR]);
		else
			snprintf(r, sizeof r, "n/a");
		printf("| %s [%s] | %.0f | %.*f | %.4f | %.2f | %.1f | %.3f | %.3f | %s |\n",
		       shapes[s].name, target, md[ST_LENGTH],
		       md[ST_SEGMENTS] == floor(md[ST_SEGMENTS]) ? 0 : 1, md[ST_SEGMENTS],
		       md[ST_CURVATURE], md[ST_STRAIGHT], md[ST_ELEVATION], md[ST_MAX_SLOPE],
		       md[ST_AT_CAP], r);
	}
	fflush(stdout);
	free(col);
	free(st);
	for (int a = 0; a < 4; a++)
		free(e[a]);
	trk_px_model_free(model);
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
	int nseeds = env && *env ? atoi(env) : 10;
	enum { SEEDS = 5 };
	double t1[SEEDS], t2[SEEDS];
	for (int i = 0; i < SEEDS; i++) {
		t1[i] = time_job(kind, (uint64_t)i + 1, 1);
		t2[i] = time_job(kind, (uint64_t)i + 1, 2);
	}
	printf("\nStarforge racetrack benchmark (medians over %d seeds)\n\n", SEEDS);
	printf("%-52s %8.3f s\n", "default racetrack job, 1 thread", median(t1, SEEDS));
	double job2 = median(t2, SEEDS);
	printf("%-52s %8.3f s\n", "default racetrack job, 2 threads", job2);
	printf("goal (issue 5) default job on 2 threads <= %.0f s: %s\n", GOAL_JOB_SECONDS,
	       verdict(job2 <= GOAL_JOB_SECONDS));

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
		compare(kind, nseeds);
	return 0;
}
