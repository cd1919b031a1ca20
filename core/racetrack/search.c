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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../par.h"
#include "check.h"
#include "corners.h"
#include "geom.h"
#include "loop.h"
#include "track.h"

/* The GA's fitness of a valid track: this minus the error (see search.h). */
#define FITNESS_SHIFT TRK_FITNESS_SHIFT
_Static_assert(TRK_MAX_SEGMENTS == TRK_FIT_MAX_SEGMENTS, "fitness.h holds every segment");

/* Track construction constants (docs/racetrack.md). */
#define TRK_SPACING 2.0     /* m between samples: a car covers ~1.2 m a tick */
#define TRK_MAX_SLOPE 0.08  /* 8 % */
#define TRK_CLIMB_GAIN 1.25 /* a climb gene's reach: |climb| past 1 (the cap) is clipped */

void trk_search_params_default(trk_search_params *p)
{
	static const double target[] = { 0.2, 0.5, 0.8, 0.5, 0.2 };
	memset(p, 0, sizeof *p);
	p->points = 16;
	p->width = TRK_DEFAULT_AREA;
	p->height = TRK_DEFAULT_AREA;
	p->track_width = 12;
	p->ntarget = sizeof target / sizeof target[0];
	memcpy(p->target, target, sizeof target);
	strcpy(p->px_model, "synthetic");
	p->player_skill = 0.5;
	p->races_per_genome = 12;
	p->level_races = 32;
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
	double least = TRK_MIN_AREA_PER_WIDTH * p->track_width;
	if (p->width < least || p->height < least)
		return sf_err_set(err, SF_EINVAL,
				  "%s %g is too small for track_width %g (allowed: at least %g, %g "
				  "road widths, so that a circuit of Voronoi cells fits; leave "
				  "width and height out to get %g)",
				  p->width < least ? "width" : "height",
				  p->width < least ? p->width : p->height, p->track_width, least,
				  TRK_MIN_AREA_PER_WIDTH, trk_default_area(p->track_width));
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
	if (p->level_races < p->races_per_genome || p->level_races > TRK_MAX_RACES)
		return sf_err_set(
			err, SF_EINVAL,
			"level_races %d is out of range (allowed: races_per_genome (%d)..%d)",
			p->level_races, p->races_per_genome, TRK_MAX_RACES);
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

double trk_default_area(double track_width)
{
	double scaled = TRK_AREA_PER_WIDTH * track_width;
	return scaled > TRK_DEFAULT_AREA ? scaled : TRK_DEFAULT_AREA;
}

size_t trk_genome_length(const trk_search_params *p)
{
	return TRK_GENOME_SEED + 4 * (size_t)p->points + TRK_GENE_BYTES;
}

/* Where the segment genes start: after the walk seed and the points. */
static size_t genes_at(const trk_search_params *p)
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

/*
 * The circuit of `genome`: its points' Voronoi diagram walked from its walk
 * seed. NULL with err set when there is none (SF_ENOMEM, or a code for an
 * unbuildable layout).
 */
static trk_loop *genome_loop(const trk_search_params *p, const uint8_t *genome, sf_err *err)
{
	size_t n = (size_t)p->points;
	trk_vec2 pts[TRK_SEARCH_MAX_POINTS];
	trk_delaunay *dt = NULL;
	trk_voronoi *vd = NULL;
	trk_loop *loop = NULL;
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
	rng r;
	rng_seed(&r, read_u64(genome));
	loop = trk_loop_new(vd, &lp, &r, err);
done:
	trk_voronoi_free(vd);
	trk_delaunay_free(dt);
	return loop;
}

trk_track *trk_genome_track(const trk_search_params *p, const uint8_t *genome, sf_err *err)
{
	trk_track *track = NULL;
	trk_loop *loop = genome_loop(p, genome, err);
	if (!loop)
		return NULL;
	/* Segment k's genes: the tightness of corner k and the climb over it. */
	const uint8_t *genes = genome + genes_at(p);
	double tight[TRK_MAX_SEGMENTS], climb[TRK_MAX_SEGMENTS];
	for (size_t k = 0; k < loop->n; k++) {
		tight[k] = genes[k] / 255.0;
		climb[k] = clamp((genes[TRK_MAX_SEGMENTS + k] - 127.5) / 127.5 * TRK_CLIMB_GAIN, -1,
				 1);
	}
	trk_limits lim = trk_search_limits(p);
	trk_path path;
	if (trk_corners_sample(loop->points, loop->n, tight, lim.max_curvature, TRK_SPACING, &path,
			       err))
		goto done;
	double *z = malloc(path.n * sizeof *z);
	if (!z) {
		sf_err_set(err, SF_ENOMEM, "out of memory for the elevation");
		trk_path_release(&path);
		goto done;
	}
	if (!trk_hills(&path, climb, TRK_MAX_SLOPE, z, err))
		track = trk_track_from_path(&path, z, p->track_width, err);
	else
		trk_path_release(&path);
	free(z);
done:
	trk_loop_free(loop);
	return track;
}

/* ---- operators ---- */

/*
 * What the search learnt about a layout (walk seed and points): the
 * per-segment error of the best genome raced on it. The gene mutation
 * reads it to move a segment's tightness the way its error points.
 */
typedef struct layout_hint {
	uint64_t hash;                /* FNV-1a of the layout's bytes */
	double fitness;               /* the best GA fitness seen on this layout (0: none) */
	size_t nseg;                  /* its circuit's segments */
	double err[TRK_MAX_SEGMENTS]; /* target - mean PX per segment, that genome's */
} layout_hint;

/* The GA's context for the operators and evaluate(). */
typedef struct trk_evaluator {
	const trk_search_params *p;
	const trk_px_model *model;
	int threads;
	const uint64_t *seeds; /* the job's fitness races, p->races_per_genome */
	const uint8_t *genomes;
	size_t n, len;
	ga_eval *out;
	double *lo, *hi;     /* per genome of the batch: its lowest, highest segment PX */
	double px_lo, px_hi; /* over every genome raced so far (lo > hi: none yet) */
	layout_hint *slot;   /* per genome of the batch: what it taught */
	layout_hint *hints;  /* per layout raced so far, in order of first sight */
	size_t nhints, cap;
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

void trk_genome_random(const trk_search_params *p, rng *r, uint8_t *g)
{
	size_t n = (size_t)p->points;
	write_u64(g, rng_next(r));
	trk_vec2 pts[TRK_SEARCH_MAX_POINTS];
	double spacing = sqrt(p->width * p->height / (double)n);
	if (trk_points_random(r, n, p->width, p->height, 0.5 * spacing, pts, NULL))
		for (size_t i = 0; i < n; i++) /* only when the area is too crowded */
			pts[i] = (trk_vec2){ rng_unit(r) * p->width, rng_unit(r) * p->height };
	for (size_t i = 0; i < n; i++)
		write_point(p, g + TRK_GENOME_SEED + 4 * i, pts[i]);
	sort_points(g, n);
	for (size_t k = 0; k < TRK_GENE_BYTES; k++)
		g[genes_at(p) + k] = (uint8_t)rng_below(r, 256);
}

static void op_random(void *ctx, rng *r, uint8_t *g)
{
	trk_genome_random(ctx_params(ctx), r, g);
}

static uint64_t layout_hash(const trk_search_params *p, const uint8_t *g)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < genes_at(p); i++)
		h = (h ^ g[i]) * UINT64_C(0x100000001b3);
	return h;
}

static const layout_hint *find_hint(const trk_evaluator *ev, uint64_t hash)
{
	for (size_t i = 0; i < ev->nhints; i++)
		if (ev->hints[i].hash == hash)
			return &ev->hints[i];
	return NULL;
}

/*
 * Directed tuning: each segment's tightness moves against its error on
 * the layout's best genome (PX too low: a wider, faster corner; too high:
 * a tighter one), with probability min(1, |error| / 0.1) and by a uniform
 * step of up to min(TRK_GENE_STEP, 600 |error|). Returns how many moved.
 */
static size_t directed_mutation(const layout_hint *h, rng *r, uint8_t *genes)
{
	size_t moved = 0;
	for (size_t k = 0; k < h->nseg; k++) {
		double e = h->err[k], mag = e < 0 ? -e : e;
		if (!(rng_unit(r) < mag / 0.1))
			continue;
		double reach = 600 * mag < TRK_GENE_STEP ? 600 * mag : TRK_GENE_STEP;
		double step = rng_unit(r) * reach * (e > 0 ? -1 : 1);
		genes[k] = (uint8_t)clamp(floor(genes[k] + step + 0.5), 0, 255);
		moved++;
	}
	return moved;
}

/*
 * Half the mutations change the layout: the walk seed is redrawn whole
 * with probability `rate`; each point, with the same probability, moves by
 * up to TRK_MOVE mean spacings in x and y. The other half keep the layout
 * (so the circuit) and tune its segments: each gene byte, with probability
 * `rate` (at least one), steps by up to +-TRK_GENE_STEP, clamped to 0..255.
 */
static void op_mutate(void *ctx, rng *r, double rate, uint8_t *g)
{
	const trk_search_params *p = ctx_params(ctx);
	size_t n = genome_points(ctx);
	if (rng_below(r, 4)) {
		const layout_hint *h = find_hint(ctx, layout_hash(p, g));
		if (h && rng_below(r, 2) && directed_mutation(h, r, g + genes_at(p)))
			return;
		/* Only the genes of the circuit's segments: the rest are unread. A
		 * layout raced before knows its count; otherwise build the circuit. */
		size_t used = TRK_MAX_SEGMENTS;
		if (h) {
			used = h->nseg;
		} else {
			trk_loop *loop = genome_loop(p, g, NULL);
			used = loop ? loop->n : TRK_MAX_SEGMENTS;
			trk_loop_free(loop);
		}
		uint8_t *genes = g + genes_at(p);
		size_t forced = (size_t)rng_below(r, 2 * used);
		forced = forced < used ? forced : TRK_MAX_SEGMENTS + forced - used;
		for (size_t k = 0; k < TRK_GENE_BYTES; k++) {
			if (k % TRK_MAX_SEGMENTS >= used)
				continue;
			if (k != forced && !(rng_unit(r) < rate))
				continue;
			double step = (2 * rng_unit(r) - 1) * TRK_GENE_STEP;
			genes[k] = (uint8_t)clamp(floor(genes[k] + step + 0.5), 0, 255);
		}
		return;
	}
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

/*
 * The layout: half the time parent a's whole (so b's segment genes meet
 * a's circuit), half the time a single-point cut on the sorted point list
 * (a's points left of the cut, b's right of it, each part of a layout
 * surviving whole) with the walk seed of either parent. The segment genes:
 * a single cut over the segments, a's before it, b's from it, a segment's
 * tightness and climb travelling together.
 */
static void op_crossover(void *ctx, rng *r, const uint8_t *a, const uint8_t *b, uint8_t *child)
{
	const trk_search_params *p = ctx_params(ctx);
	size_t n = genome_points(ctx);
	if (rng_below(r, 4)) {
		memcpy(child, a, genes_at(p));
	} else {
		size_t cut = 1 + (size_t)rng_below(r, n - 1);
		memcpy(child, rng_below(r, 2) ? b : a, TRK_GENOME_SEED);
		memcpy(child + TRK_GENOME_SEED, a + TRK_GENOME_SEED, 4 * cut);
		memcpy(child + TRK_GENOME_SEED + 4 * cut, b + TRK_GENOME_SEED + 4 * cut,
		       4 * (n - cut));
		sort_points(child, n);
	}
	size_t at = genes_at(p), cut = (size_t)rng_below(r, TRK_MAX_SEGMENTS + 1);
	for (size_t k = 0; k < TRK_MAX_SEGMENTS; k++) {
		const uint8_t *from = k < cut ? a : b;
		child[at + k] = from[at + k];
		child[at + TRK_MAX_SEGMENTS + k] = from[at + TRK_MAX_SEGMENTS + k];
	}
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
static int evaluate_one(trk_evaluator *ev, const uint8_t *g, ga_eval *out, double *lo, double *hi,
			layout_hint *hint)
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
	hint->hash = layout_hash(ev->p, g);
	hint->fitness = out->fitness;
	hint->nseg = fit.nsegments;
	for (size_t k = 0; k < fit.nsegments; k++)
		hint->err[k] = fit.target[k] - fit.mean[k];
	/* What the model produced: segments of races the player completed. */
	if (fit.completed == 1 && lo && hi)
		for (size_t k = 0; k < fit.nsegments; k++) {
			*lo = fit.mean[k] < *lo ? fit.mean[k] : *lo;
			*hi = fit.mean[k] > *hi ? fit.mean[k] : *hi;
		}
	trk_limits lim = trk_search_limits(ev->p);
	out->desc[0] = clamp((length - lim.min_length) / (lim.max_length - lim.min_length), 0, 1);
	out->desc[1] = fit.completed;
	return 0;
}

/* par_for's task i: genome i of the batch. */
static int eval_item(void *arg, size_t i)
{
	trk_evaluator *ev = arg;
	ev->lo[i] = 2;
	ev->hi[i] = -2;
	ev->slot[i].fitness = 0;
	int rc = evaluate_one(ev, ev->genomes + i * ev->len, &ev->out[i], &ev->lo[i], &ev->hi[i],
			      &ev->slot[i]);
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
	ev->lo = malloc(n * sizeof *ev->lo);
	ev->hi = malloc(n * sizeof *ev->hi);
	ev->slot = malloc(n * sizeof *ev->slot);
	int rc = !ev->lo || !ev->hi || !ev->slot
			 ? sf_err_set(err, SF_ENOMEM, "out of memory for a batch")
			 : par_for(ev->threads, n, eval_item, ev, err);
	if (!rc && atomic_load(&ev->failed))
		rc = sf_err_set(err, SF_ENOMEM, "out of memory evaluating tracks");
	/* min and max do not depend on the order: the range is deterministic. */
	for (size_t i = 0; !rc && i < n; i++) {
		ev->px_lo = ev->lo[i] < ev->px_lo ? ev->lo[i] : ev->px_lo;
		ev->px_hi = ev->hi[i] > ev->px_hi ? ev->hi[i] : ev->px_hi;
	}
	/* The hints, in batch order: the same whatever the thread count. */
	for (size_t i = 0; !rc && i < n; i++) {
		if (!(ev->slot[i].fitness > 0))
			continue;
		layout_hint *h = (layout_hint *)find_hint(ev, ev->slot[i].hash);
		if (!h) {
			if (ev->nhints == ev->cap) {
				size_t cap = ev->cap ? 2 * ev->cap : 256;
				layout_hint *grown = realloc(ev->hints, cap * sizeof *grown);
				if (!grown) {
					rc = sf_err_set(err, SF_ENOMEM,
							"out of memory for the hints");
					break;
				}
				ev->hints = grown;
				ev->cap = cap;
			}
			ev->hints[ev->nhints++] = ev->slot[i];
		} else if (ev->slot[i].fitness > h->fitness) {
			*h = ev->slot[i];
		}
	}
	free(ev->lo);
	free(ev->hi);
	free(ev->slot);
	ev->lo = ev->hi = NULL;
	ev->slot = NULL;
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

/* A lap in tenths of a second, as the check (check.h) rounds it. */
static long tenths(double seconds)
{
	return (long)trk_lap_tenths(seconds);
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
	lv->player_stars = lv->race.finished ? trk_lap_stars(lv->race.lap_time, lv->thresholds) : 0;
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
	size_t nraces = (size_t)p->level_races;
	memcpy(lv->race_seeds, seeds, nraces * sizeof *seeds);
	lv->race_seed = seeds[0];
	/* The level's races: the report races, which no choice was made on. */
	int rc = trk_track_px(lv->track, &rp, model, seeds, nraces, p->target, p->ntarget, &lv->fit,
			      &lv->race, err);
	if (rc)
		return rc;
	lv->races = nraces;
	lv->fitness = -lv->fit.error;
	return level_stars(p, model, threads, lv, err);
}

/*
 * Warns when the target asks for PX the experience model did not produce:
 * above the highest (or below the lowest) segment PX of every track the
 * search raced, or outside the model's labels altogether. The level then
 * follows the target only as far as the model lets it.
 */
static void range_warnings(const trk_search_params *p, const trk_px_model *model,
			   trk_search_result *out)
{
	double tlo = p->target[0], thi = p->target[0];
	for (size_t i = 1; i < p->ntarget; i++) {
		tlo = p->target[i] < tlo ? p->target[i] : tlo;
		thi = p->target[i] > thi ? p->target[i] : thi;
	}
	double llo = model->traces[0].intensity, lhi = llo;
	for (size_t i = 1; i < model->n; i++) {
		llo = model->traces[i].intensity < llo ? model->traces[i].intensity : llo;
		lhi = model->traces[i].intensity > lhi ? model->traces[i].intensity : lhi;
	}
	size_t w = 0;
	if (thi > lhi || tlo < llo)
		snprintf(out->warnings[w++], sizeof out->warnings[0],
			 "target spans %.3g..%.3g but the experience model '%s' labels only "
			 "%.3g..%.3g: no track can follow it outside that range",
			 tlo, thi, p->px_model, llo, lhi);
	else if (out->px_lo > out->px_hi)
		snprintf(out->warnings[w++], sizeof out->warnings[0],
			 "no raceable track was found, so the target could not be compared "
			 "with what the model produces");
	else if (thi > out->px_hi || tlo < out->px_lo)
		snprintf(out->warnings[w++], sizeof out->warnings[0],
			 "target spans %.3g..%.3g but the segments of the %llu tracks raced "
			 "reached only %.3g..%.3g PX with the experience model '%s': the "
			 "level cannot follow the target %s",
			 tlo, thi, (unsigned long long)out->evaluations, out->px_lo, out->px_hi,
			 p->px_model,
			 thi > out->px_hi && tlo < out->px_lo ? "at either end"
			 : thi > out->px_hi                   ? "at its highest"
							      : "at its lowest");
	out->nwarnings = w;
}

typedef struct confirm_batch {
	const trk_search_params *p;
	const trk_px_model *model;
	const uint64_t *seeds; /* level_races of them */
	const ga_result *gr;
	double *error; /* per candidate: its error over the level races, 3 when none */
	atomic_int failed;
} confirm_batch;

static int confirm_item(void *arg, size_t i)
{
	confirm_batch *cb = arg;
	trk_px_fit fit;
	int rc = genome_fit(cb->p, cb->model, cb->gr->genomes + i * cb->gr->length, cb->seeds,
			    (size_t)cb->p->level_races, &fit, NULL, NULL);
	if (rc < 0)
		atomic_store(&cb->failed, rc);
	cb->error[i] = rc > 0 ? fit.error : 3;
	return 0;
}

/*
 * The order in which genomes become levels. The GA ranks genomes on
 * races_per_genome races, and the best of them is partly the luckiest on
 * those races (a winner's curse: its error on other races is higher). So
 * the TRK_CONFIRM best valid genomes (at least count) are raced again on
 * the job's first level_races races (trk_race_seeds; the first
 * races_per_genome of them are the fitness races) and ordered by that
 * error (ties by GA rank); the rest follow in GA order. The choice has a
 * (smaller) winner's curse of its own, so a level then reports its PX on
 * level_races other races, trk_report_seeds(), that no choice was made on.
 * Writes the order (malloc'ed) and its length; adds the races run.
 */
static int confirm_order(const trk_search_params *p, const trk_px_model *model, int threads,
			 const uint64_t *seeds, const ga_result *gr, size_t **order, size_t *norder,
			 uint64_t *races, sf_err *err)
{
	size_t valid = 0;
	while (valid < gr->count && gr->evals[valid].fitness > 0)
		valid++;
	size_t k = (size_t)p->count > TRK_CONFIRM ? (size_t)p->count : TRK_CONFIRM;
	k = k < valid ? k : valid;
	*order = malloc((valid ? valid : 1) * sizeof **order);
	double *error = malloc((k ? k : 1) * sizeof *error);
	if (!*order || !error) {
		free(error);
		return sf_err_set(err, SF_ENOMEM, "out of memory for the candidates");
	}
	confirm_batch cb = { .p = p, .model = model, .seeds = seeds, .gr = gr, .error = error };
	int rc = par_for(threads, k, confirm_item, &cb, err);
	if (!rc && atomic_load(&cb.failed))
		rc = sf_err_set(err, SF_ENOMEM, "out of memory confirming the candidates");
	*races += (uint64_t)k * (uint64_t)p->level_races;
	for (size_t i = 0; i < valid; i++)
		(*order)[i] = i;
	/* Insertion sort of the first k by error, stable: k is small. */
	for (size_t i = 1; !rc && i < k; i++)
		for (size_t j = i; j > 0 && error[(*order)[j]] < error[(*order)[j - 1]]; j--) {
			size_t t = (*order)[j];
			(*order)[j] = (*order)[j - 1];
			(*order)[j - 1] = t;
		}
	free(error);
	*norder = valid;
	return rc;
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
			     .px_lo = 2,
			     .px_hi = -2,
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
	uint64_t lseeds[TRK_MAX_RACES], rseeds[TRK_MAX_RACES];
	trk_race_seeds(opts->seed, (size_t)p->level_races, lseeds);
	trk_report_seeds(opts->seed, (size_t)p->level_races, rseeds);
	size_t *order = NULL, norder = 0;
	if (!rc)
		rc = confirm_order(p, model, opts->threads, lseeds, &gr, &order, &norder, &races,
				   err);
	/* Confirmed candidates first, then the rest best first: past the first
	 * genome without a valid track, none has one. */
	for (size_t o = 0; !rc && o < norder && out->count < (size_t)p->count; o++) {
		size_t i = order[o];
		trk_level *lv = &out->levels[out->count];
		int kept = make_level(p, model, opts->threads, rseeds, gr.genomes + i * gr.length,
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
		out->px_lo = ev.px_lo;
		out->px_hi = ev.px_hi;
		range_warnings(p, model, out);
		gr.series = NULL;
	}
	ga_result_free(&gr);
	free(order);
	free(ev.hints);
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
