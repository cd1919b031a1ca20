/*
 * search.c - the racetrack search; see search.h for the genome, fitness,
 * operators and stars.
 *
 * Who runs where: trk_search_run() runs on the caller's thread and drives
 * core/search/ga.c. Each batch of genomes to evaluate (and, per level, the
 * batch of star races) is spread over `threads` workers by par_for, which
 * write only their own output slots; the experience model and the job's
 * race seeds they read are immutable. A genome's races run one after the
 * other on its worker, in seed order, so every evaluation is a pure
 * function of the genome and the job's seed, and the thread count never
 * shows in the result.
 */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../par.h"
#include "geom.h"
#include "loop.h"
#include "track.h"

/* The GA's fitness of a valid track: this minus the error (see search.h). */
#define FITNESS_SHIFT TRK_FITNESS_SHIFT
_Static_assert(TRK_MAX_SEGMENTS == TRK_FIT_MAX_SEGMENTS, "fitness.h holds every segment");

/* Track construction constants (docs/racetrack.md). */
#define TRK_SPACING 2.0    /* m between samples: a car covers ~1.2 m a tick */
#define TRK_AMPLITUDE 10.0 /* m of elevation before the slope cap */
#define TRK_PERIOD 6       /* noise cells around the loop */
#define TRK_OCTAVES 2
#define TRK_MAX_SLOPE 0.08 /* 8 % */

void trk_search_params_default(trk_search_params *p)
{
	static const double target[] = { 0.2, 0.5, 0.8, 0.5, 0.2 };
	memset(p, 0, sizeof *p);
	p->points = 30;
	p->width = 400;
	p->height = 400;
	p->track_width = 12;
	p->ntarget = sizeof target / sizeof target[0];
	memcpy(p->target, target, sizeof target);
	strcpy(p->px_model, "synthetic");
	p->player_skill = 0.5;
	p->races_per_genome = 8;
	p->algorithm = TRK_ALG_GA;
	p->population = 30;
	p->generations = 50;
	p->mutation_rate = 0.1;
	p->elites = 1;
	p->count = 1;
	p->star_seeds = 3;
	stars_config_default(&p->stars, STARS_PAPER);
}

int trk_search_params_check(const trk_search_params *p, sf_err *err)
{
	if (p->points < TRK_SEARCH_MIN_POINTS || p->points > TRK_SEARCH_MAX_POINTS)
		return sf_err_set(err, SF_EINVAL, "points %d is out of range (allowed: %d..%d)",
				  p->points, TRK_SEARCH_MIN_POINTS, TRK_SEARCH_MAX_POINTS);
	if (!(p->width >= 100 && p->width <= 5000))
		return sf_err_set(err, SF_EINVAL, "width %g is out of range (allowed: 100..5000)",
				  p->width);
	if (!(p->height >= 100 && p->height <= 5000))
		return sf_err_set(err, SF_EINVAL, "height %g is out of range (allowed: 100..5000)",
				  p->height);
	if (!(p->track_width >= 4 && p->track_width <= 40))
		return sf_err_set(err, SF_EINVAL, "track_width %g is out of range (allowed: 4..40)",
				  p->track_width);
	if (p->ntarget < 2 || p->ntarget > TRK_MAX_TARGET)
		return sf_err_set(err, SF_EINVAL,
				  "target has %zu points (allowed: 2..%d numbers in 0..1)",
				  p->ntarget, TRK_MAX_TARGET);
	for (size_t i = 0; i < p->ntarget; i++)
		if (!(p->target[i] >= 0 && p->target[i] <= 1))
			return sf_err_set(err, SF_EINVAL,
					  "target[%zu] %g is out of range (allowed: 0..1)", i,
					  p->target[i]);
	if (!trk_px_name_valid(p->px_model))
		return sf_err_set(err, SF_EINVAL,
				  "px_model '%s' is not a model name (allowed: synthetic or an "
				  "uploaded model's name, 1..%d of a-z 0-9 _ -)",
				  p->px_model, TRK_PX_NAME_MAX);
	if (!(p->player_skill >= 0 && p->player_skill <= 1))
		return sf_err_set(err, SF_EINVAL, "player_skill %g is out of range (allowed: 0..1)",
				  p->player_skill);
	if (p->races_per_genome < 1 || p->races_per_genome > TRK_MAX_RACES)
		return sf_err_set(err, SF_EINVAL,
				  "races_per_genome %d is out of range (allowed: 1..%d)",
				  p->races_per_genome, TRK_MAX_RACES);
	if (!trk_algorithm_name(p->algorithm))
		return sf_err_set(err, SF_EINVAL, "algorithm %d is unknown (allowed: ga, random)",
				  (int)p->algorithm);
	int rc = ga_params_check(p->population, p->generations, p->mutation_rate, p->elites, err);
	if (rc)
		return rc;
	if (p->count < 1 || p->count > 100)
		return sf_err_set(err, SF_EINVAL, "count %d is out of range (allowed: 1..100)",
				  p->count);
	if (p->star_seeds < 1 || p->star_seeds > 20)
		return sf_err_set(err, SF_EINVAL, "star_seeds %d is out of range (allowed: 1..20)",
				  p->star_seeds);
	return stars_config_check(&p->stars, err);
}

size_t trk_genome_length(const trk_search_params *p)
{
	return TRK_GENOME_SEED + 4 * (size_t)p->points;
}

trk_limits trk_search_limits(const trk_search_params *p)
{
	/* Radius at least half the width: tighter, the road's inner edge would
	 * fold over itself. trk_limits_default's full width rejects almost every
	 * Voronoi circuit of the default area (docs/racetrack.md). */
	trk_limits lim = trk_limits_default(p->track_width);
	lim.max_curvature = 2 / p->track_width;
	return lim;
}

trk_px_model *trk_search_model(const trk_search_params *p, sf_err *err)
{
	if (strcmp(p->px_model, TRK_PX_SYNTHETIC)) {
		sf_err_set(err, SF_EINVAL,
			   "px_model '%s' is an uploaded model, which the caller must supply "
			   "(built in: synthetic)",
			   p->px_model);
		return NULL;
	}
	return trk_px_synth(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, err);
}

/* ---- genome -> track ---- */

static uint64_t read_u64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void write_u64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static unsigned read_u16(const uint8_t *b)
{
	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

static void write_u16(uint8_t *b, unsigned v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

/* splitmix64's finaliser: a bijective mix, so distinct inputs stay distinct. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

const char *trk_algorithm_name(trk_algorithm a)
{
	switch (a) {
	case TRK_ALG_GA:
		return "ga";
	case TRK_ALG_RANDOM:
		return "random";
	}
	return NULL;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Point i's coordinates from its quantised bytes. */
static trk_vec2 genome_point(const trk_search_params *p, const uint8_t *genome, size_t i)
{
	const uint8_t *q = genome + TRK_GENOME_SEED + 4 * i;
	return (trk_vec2){ .x = read_u16(q) * (p->width / TRK_COORD_MAX),
			   .y = read_u16(q + 2) * (p->height / TRK_COORD_MAX) };
}

trk_track *trk_genome_track(const trk_search_params *p, const uint8_t *genome, sf_err *err)
{
	size_t n = (size_t)p->points;
	/* Room for the points, then for the circuit's control points. */
	trk_vec2 *pts = malloc((n > TRK_MAX_SEGMENTS ? n : TRK_MAX_SEGMENTS) * sizeof *pts);
	trk_delaunay *dt = NULL;
	trk_voronoi *vd = NULL;
	trk_loop *loop = NULL;
	trk_track *track = NULL;
	if (!pts) {
		sf_err_set(err, SF_ENOMEM, "out of memory for the points");
		return NULL;
	}
	/* The operators keep the points sorted (x, then y), so equal points are
	 * neighbours: a repeat adds nothing to the diagram and is dropped. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && !memcmp(genome + TRK_GENOME_SEED + 4 * i,
				 genome + TRK_GENOME_SEED + 4 * (i - 1), 4))
			continue;
		pts[m++] = genome_point(p, genome, i);
	}
	if (!(dt = trk_delaunay_new(pts, m, err)))
		goto done;
	if (!(vd = trk_voronoi_new(dt, p->width, p->height, err)))
		goto done;
	trk_loop_params lp;
	trk_loop_params_default(&lp);
	lp.min_vertices = TRK_MIN_SEGMENTS;
	lp.max_vertices = TRK_MAX_SEGMENTS;
	lp.margin = 2 * p->track_width;
	lp.min_edge_length = p->track_width;
	lp.max_attempts = 16;
	lp.steps_per_attempt = 1024;
	uint64_t walk = read_u64(genome);
	rng r;
	rng_seed(&r, walk);
	if (!(loop = trk_loop_new(vd, &lp, &r, err)))
		goto done;
	trk_track_params tp = { .spacing = TRK_SPACING,
				.width = p->track_width,
				.amplitude = TRK_AMPLITUDE,
				.period = TRK_PERIOD,
				.octaves = TRK_OCTAVES,
				.max_slope = TRK_MAX_SLOPE,
				.seed = mix64(walk ^ UINT64_C(0xe1e7)) };
	/* The spline runs through the midpoints of the circuit's sides, which
	 * rounds every Voronoi corner (a spline through the corners themselves
	 * turns far too sharply: docs/racetrack.md). */
	for (size_t i = 0; i < loop->n; i++) {
		trk_vec2 a = loop->points[i], b = loop->points[(i + 1) % loop->n];
		pts[i].x = (a.x + b.x) / 2;
		pts[i].y = (a.y + b.y) / 2;
	}
	track = trk_track_build(pts, loop->n, &tp, err);
done:
	trk_loop_free(loop);
	trk_voronoi_free(vd);
	trk_delaunay_free(dt);
	free(pts);
	return track;
}

/* ---- operators ---- */

/* The GA's context for the operators and evaluate(). */
typedef struct trk_evaluator {
	const trk_search_params *p;
	const trk_px_model *model;
	int threads;
	const uint64_t *seeds; /* the job's fitness races, p->races_per_genome */
	const uint8_t *genomes;
	size_t n, len;
	ga_eval *out;
	atomic_uint_fast64_t races;
	atomic_int failed; /* SF_ENOMEM from a worker ends the run */
} trk_evaluator;

/* The operators read the area and point count from the evaluator. */
static const trk_search_params *ctx_params(const void *ctx)
{
	return ((const trk_evaluator *)ctx)->p;
}

static size_t genome_points(const void *ctx)
{
	return (size_t)ctx_params(ctx)->points;
}

static int cmp_point(const void *x, const void *y)
{
	const uint8_t *a = x, *b = y;
	unsigned ax = read_u16(a), bx = read_u16(b);
	if (ax != bx)
		return ax < bx ? -1 : 1;
	unsigned ay = read_u16(a + 2), by = read_u16(b + 2);
	return ay < by ? -1 : ay > by;
}

/* Puts the points in their canonical order: by x, then y. One layout has
 * one genome, and an index cut splits the area left from right. */
static void sort_points(uint8_t *g, size_t n)
{
	qsort(g + TRK_GENOME_SEED, n, 4, cmp_point);
}

static void write_point(const trk_search_params *p, uint8_t *q, trk_vec2 v)
{
	write_u16(q,
		  (unsigned)clamp(floor(v.x / p->width * TRK_COORD_MAX + 0.5), 0, TRK_COORD_MAX));
	write_u16(q + 2,
		  (unsigned)clamp(floor(v.y / p->height * TRK_COORD_MAX + 0.5), 0, TRK_COORD_MAX));
}

/* A random layout as trk_points_random() spreads it (at least half a mean
 * spacing apart) and a random walk seed. */
static void op_random(void *ctx, rng *r, uint8_t *g)
{
	const trk_search_params *p = ctx_params(ctx);
	size_t n = genome_points(ctx);
	write_u64(g, rng_next(r));
	trk_vec2 pts[TRK_SEARCH_MAX_POINTS];
	double spacing = sqrt(p->width * p->height / (double)n);
	if (trk_points_random(r, n, p->width, p->height, 0.5 * spacing, pts, NULL))
		for (size_t i = 0; i < n; i++) /* only when the area is too crowded */
			pts[i] = (trk_vec2){ rng_unit(r) * p->width, rng_unit(r) * p->height };
	for (size_t i = 0; i < n; i++)
		write_point(p, g + TRK_GENOME_SEED + 4 * i, pts[i]);
	sort_points(g, n);
}

/* The walk seed is redrawn whole with probability `rate`; each point, with
 * the same probability, moves by up to TRK_MOVE mean spacings in x and y. */
static void op_mutate(void *ctx, rng *r, double rate, uint8_t *g)
{
	const trk_search_params *p = ctx_params(ctx);
	size_t n = genome_points(ctx);
	if (rng_unit(r) < rate)
		write_u64(g, rng_next(r));
	double reach = TRK_MOVE * sqrt(p->width * p->height / (double)n);
	for (size_t i = 0; i < n; i++) {
		if (!(rng_unit(r) < rate))
			continue;
		trk_vec2 v = genome_point(p, g, i);
		v.x = clamp(v.x + (2 * rng_unit(r) - 1) * reach, 0, p->width);
		v.y = clamp(v.y + (2 * rng_unit(r) - 1) * reach, 0, p->height);
		write_point(p, g + TRK_GENOME_SEED + 4 * i, v);
	}
	sort_points(g, n);
}

/* Single point on the sorted point list: the child takes the parent a's
 * points left of the cut and b's right of it (so each half of the layout
 * survives whole), and the walk seed of either parent. */
static void op_crossover(void *ctx, rng *r, const uint8_t *a, const uint8_t *b, uint8_t *child)
{
	size_t n = genome_points(ctx);
	size_t cut = 1 + (size_t)rng_below(r, n - 1);
	memcpy(child, rng_below(r, 2) ? b : a, TRK_GENOME_SEED);
	memcpy(child + TRK_GENOME_SEED, a + TRK_GENOME_SEED, 4 * cut);
	memcpy(child + TRK_GENOME_SEED + 4 * cut, b + TRK_GENOME_SEED + 4 * cut, 4 * (n - cut));
	sort_points(child, n);
}

static void describe_genome(void *ctx, const uint8_t *g, char *buf, size_t size)
{
	(void)ctx;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;
	for (; i < TRK_GENOME_SEED && 2 * i + 2 < size; i++) {
		buf[2 * i] = hex[g[i] >> 4];
		buf[2 * i + 1] = hex[g[i] & 15];
	}
	if (size)
		buf[2 * i] = '\0';
}

/* ---- evaluation ---- */

/* trk_genome_px(), also giving the track's length (when `length` is not NULL). */
static int genome_fit(const trk_search_params *p, const trk_px_model *model, const uint8_t *genome,
		      const uint64_t *seeds, size_t nseeds, trk_px_fit *fit, double *length,
		      sf_err *err)
{
	memset(fit, 0, sizeof *fit);
	sf_err e = { 0 };
	trk_track *track = trk_genome_track(p, genome, &e);
	if (!track)
		return e.code == SF_ENOMEM ? sf_err_set(err, SF_ENOMEM, "%s", e.msg) : 0;
	trk_limits lim = trk_search_limits(p);
	trk_report rep;
	int rc = trk_track_check(track, &lim, 0, &rep, &e);
	if (rc) {
		trk_track_free(track);
		return rc < 0 ? sf_err_set(err, rc, "%s", e.msg) : 0;
	}
	trk_race_params rp;
	trk_race_params_default(&rp);
	rp.player_skill = p->player_skill;
	rc = trk_track_px(track, &rp, model, seeds, nseeds, p->target, p->ntarget, fit, NULL, err);
	if (length)
		*length = track->length;
	trk_track_free(track);
	return rc ? rc : 1;
}

int trk_genome_px(const trk_search_params *p, const trk_px_model *model, const uint8_t *genome,
		  const uint64_t *seeds, size_t nseeds, trk_px_fit *fit, sf_err *err)
{
	return genome_fit(p, model, genome, seeds, nseeds, fit, NULL, err);
}

/*
 * The GA's evaluation of one genome: 0 for a genome without a valid track,
 * FITNESS_SHIFT - the per-segment error otherwise. Descriptors: the length
 * within the limits, and the share of segments the player completed.
 */
static int evaluate_one(trk_evaluator *ev, const uint8_t *g, ga_eval *out)
{
	memset(out, 0, sizeof *out);
	trk_px_fit fit;
	double length = 0;
	int rc = genome_fit(ev->p, ev->model, g, ev->seeds, (size_t)ev->p->races_per_genome, &fit,
			    &length, NULL);
	if (rc <= 0)
		return rc == SF_ENOMEM ? rc : 0;
	atomic_fetch_add(&ev->races, (uint64_t)ev->p->races_per_genome);
	out->fitness = clamp(FITNESS_SHIFT - fit.error, 0, FITNESS_SHIFT);
	trk_limits lim = trk_search_limits(ev->p);
	out->desc[0] = clamp((length - lim.min_length) / (lim.max_length - lim.min_length), 0, 1);
	out->desc[1] = fit.completed;
	return 0;
}

/* par_for's task i: genome i of the batch. */
static int eval_item(void *arg, size_t i)
{
	trk_evaluator *ev = arg;
	int rc = evaluate_one(ev, ev->genomes + i * ev->len, &ev->out[i]);
	if (rc)
		atomic_store(&ev->failed, rc);
	return 0;
}

static int eval_batch(void *ctx, const uint8_t *genomes, size_t n, ga_eval *out, sf_err *err)
{
	trk_evaluator *ev = ctx;
	ev->genomes = genomes;
	ev->n = n;
	ev->out = out;
	int rc = par_for(ev->threads, n, eval_item, ev, err);
	if (!rc && atomic_load(&ev->failed))
		rc = sf_err_set(err, SF_ENOMEM, "out of memory evaluating tracks");
	return rc;
}

/* ---- stars ---- */

typedef struct star_batch {
	const trk_search_params *p;
	const trk_px_model *model;
	const trk_track *track;
	uint64_t seed;
	size_t n;
	double *laps;
	atomic_int failed;
} star_batch;

/* Star race k (par_for's task): skill 0.1 x (1 + k / star_seeds), its own seed. */
static int star_race(void *arg, size_t k)
{
	star_batch *sb = arg;
	trk_race_params rp;
	trk_race_params_default(&rp);
	rp.player_skill = 0.1 * (double)(1 + k / (size_t)sb->p->star_seeds);
	trk_race_result race = { 0 };
	int rc = trk_race_run(sb->track, &rp, sb->model, mix64(sb->seed + k + 1), &race, NULL);
	if (rc)
		atomic_store(&sb->failed, rc);
	sb->laps[k] = !rc && race.finished ? race.lap_time : -1;
	trk_race_result_free(&race);
	return 0;
}

static long tenths(double seconds)
{
	return (long)floor(seconds * 10 + 0.5);
}

/*
 * Races the level's track with agents of increasing skill and places the
 * lap-time thresholds. Returns 1 when three bands exist, 0 when not (no
 * level), or a negative code.
 */
static int level_stars(const trk_search_params *p, const trk_px_model *model, int threads,
		       trk_level *lv, sf_err *err)
{
	size_t n = (size_t)TRK_STAR_SKILLS * (size_t)p->star_seeds;
	star_batch sb = {
		.p = p, .model = model, .track = lv->track, .seed = lv->race_seed, .n = n
	};
	lv->laps = malloc(n * sizeof *lv->laps);
	if (!lv->laps)
		return sf_err_set(err, SF_ENOMEM, "out of memory for the star races");
	sb.laps = lv->laps;
	lv->nlaps = n;
	int rc = par_for(threads, n, star_race, &sb, err);
	if (rc)
		return rc;
	int failed = atomic_load(&sb.failed);
	if (failed)
		return sf_err_set(err, failed,
				  failed == SF_ENOMEM ? "out of memory in the star races"
						      : "a star race failed (%s)",
				  sf_err_name(failed));
	lv->races += n;
	long slow = -1, fast = -1;
	for (size_t k = 0; k < n; k++) {
		if (lv->laps[k] < 0)
			continue;
		long t = tenths(lv->laps[k]);
		slow = slow < 0 || t > slow ? t : slow;
		fast = fast < 0 || t < fast ? t : fast;
	}
	if (slow < 0)
		return 0;
	/* Score = (slowest - lap) in units of `unit` tenths, higher is better. */
	long unit = (slow - fast) / STARS_MAX_SCORES + 1;
	int nscores = (int)((slow - fast) / unit) + 1;
	uint64_t *hist = calloc((size_t)nscores, sizeof *hist);
	if (!hist)
		return sf_err_set(err, SF_ENOMEM, "out of memory for the lap histogram");
	for (size_t k = 0; k < n; k++)
		if (lv->laps[k] >= 0)
			hist[(slow - tenths(lv->laps[k])) / unit]++;
	int t[3];
	int ok = stars_thresholds(hist, nscores, &p->stars, t, NULL) == 0;
	free(hist);
	if (!ok)
		return 0;
	for (int i = 0; i < 3; i++)
		lv->thresholds[i] = (double)(slow - (long)t[i] * unit) / 10.0;
	lv->player_stars = 0;
	if (lv->race.finished)
		for (int i = 0; i < 3; i++)
			lv->player_stars += tenths(lv->race.lap_time) <= tenths(lv->thresholds[i]);
	return 1;
}

static void level_free(trk_level *lv)
{
	free(lv->genome);
	trk_track_free(lv->track);
	trk_race_result_free(&lv->race);
	free(lv->laps);
	memset(lv, 0, sizeof *lv);
}

/*
 * Builds the level of `genome` into `lv`: 1 when it is a level (a valid
 * track with three lap-time bands), 0 when not, or a negative code.
 */
static int make_level(const trk_search_params *p, const trk_px_model *model, int threads,
		      const uint64_t *seeds, const uint8_t *genome, const ga_eval *eval,
		      trk_level *lv, sf_err *err)
{
	memset(lv, 0, sizeof *lv);
	size_t len = trk_genome_length(p);
	if (!eval->fitness)
		return 0;
	if (!(lv->genome = malloc(len)))
		return sf_err_set(err, SF_ENOMEM, "out of memory for a level");
	memcpy(lv->genome, genome, len);
	lv->eval = *eval;
	sf_err e = { 0 };
	if (!(lv->track = trk_genome_track(p, genome, &e)))
		return e.code == SF_ENOMEM ? sf_err_set(err, SF_ENOMEM, "%s", e.msg) : 0;
	trk_race_params rp;
	trk_race_params_default(&rp);
	rp.player_skill = p->player_skill;
	size_t nraces = (size_t)p->races_per_genome;
	memcpy(lv->race_seeds, seeds, nraces * sizeof *seeds);
	lv->race_seed = seeds[0];
	/* The same races as the evaluator's, so the level shows what the GA saw. */
	int rc = trk_track_px(lv->track, &rp, model, seeds, nraces, p->target, p->ntarget, &lv->fit,
			      &lv->race, err);
	if (rc)
		return rc;
	lv->races = nraces;
	lv->fitness = -lv->fit.error;
	return level_stars(p, model, threads, lv, err);
}

static int same_track(const trk_track *a, const trk_track *b)
{
	return a->n == b->n && !memcmp(a->samples, b->samples, a->n * sizeof *a->samples);
}

int trk_search_run(const trk_search_params *p, const trk_search_opts *opts, trk_search_result *out,
		   sf_err *err)
{
	memset(out, 0, sizeof *out);
	double start = ga_clock_now();
	int rc = trk_search_params_check(p, err);
	if (rc)
		return rc;
	if (opts->threads < 1 || opts->threads > 1024)
		return sf_err_set(err, SF_EINVAL, "threads %d is out of range (allowed: 1..1024)",
				  opts->threads);
	trk_px_model *own = NULL;
	const trk_px_model *model = opts->model;
	if (!model && !(model = own = trk_search_model(p, err)))
		return err ? err->code : SF_ENOMEM;

	uint64_t seeds[TRK_MAX_RACES];
	trk_race_seeds(opts->seed, (size_t)p->races_per_genome, seeds);
	trk_evaluator ev = { .p = p,
			     .model = model,
			     .threads = opts->threads,
			     .seeds = seeds,
			     .len = trk_genome_length(p) };
	ga_problem prob = { .length = ev.len,
			    .alphabet = 256,
			    .ctx = &ev,
			    .evaluate = eval_batch,
			    .random = op_random,
			    .mutate = op_mutate,
			    .crossover = op_crossover,
			    .describe = describe_genome };
	ga_config cfg;
	ga_config_default(&cfg);
	cfg.algorithm = p->algorithm == TRK_ALG_RANDOM ? GA_RANDOM : GA_GENETIC;
	cfg.tournament = TRK_TOURNAMENT;
	cfg.seed = opts->seed;
	cfg.population = p->population;
	cfg.generations = p->generations;
	cfg.mutation_rate = p->mutation_rate;
	cfg.elites = p->elites;
	cfg.progress = opts->progress;
	cfg.progress_arg = opts->progress_arg;
	cfg.cancel = opts->cancel;
	cfg.deadline = opts->deadline;
	ga_result gr = { 0 };
	rc = ga_run(&prob, &cfg, SIZE_MAX, &gr, err);
	if (!rc) {
		out->levels = calloc((size_t)p->count + 1, sizeof *out->levels);
		if (!out->levels)
			rc = sf_err_set(err, SF_ENOMEM, "out of memory for the levels");
	}
	uint64_t races = atomic_load(&ev.races);
	/* Best first: past the first genome without a valid track, none has one. */
	for (size_t i = 0;
	     !rc && i < gr.count && out->count < (size_t)p->count && gr.evals[i].fitness > 0; i++) {
		trk_level *lv = &out->levels[out->count];
		int kept = make_level(p, model, opts->threads, seeds, gr.genomes + i * gr.length,
				      &gr.evals[i], lv, err);
		races += lv->races;
		for (size_t j = 0; kept > 0 && j < out->count; j++)
			if (same_track(out->levels[j].track, lv->track))
				kept = 0;
		if (kept < 0)
			rc = kept;
		else if (kept)
			out->count++;
		else
			level_free(lv);
	}
	if (!rc && !out->count && gr.status == GA_COMPLETED)
		rc = sf_err_set(err, SF_ERANGE,
				"no valid track with three lap-time star bands found (%llu genomes "
				"evaluated); try more generations or another seed",
				(unsigned long long)gr.evaluations);
	if (!rc) {
		out->status = gr.status;
		out->series = gr.series;
		out->generations_run = gr.generations_run;
		out->evaluations = gr.evaluations;
		out->races = races;
		gr.series = NULL;
	}
	ga_result_free(&gr);
	trk_px_model_free(own);
	if (rc)
		trk_search_result_free(out);
	out->seconds = ga_clock_now() - start;
	return rc;
}

void trk_search_result_free(trk_search_result *res)
{
	for (size_t i = 0; res->levels && i < res->count + 1; i++)
		level_free(&res->levels[i]);
	free(res->levels);
	free(res->series);
	memset(res, 0, sizeof *res);
}
