/*
 * search.h - the racetrack search (issue 5): a genetic algorithm over track
 * genomes whose fitness is how closely a simulated race follows the
 * designer's player-experience (PX) curve, and the level it turns the best
 * tracks into. docs/racetrack.md argues for every choice made here.
 *
 * Genome (bytes, as core/search/ga.h wants them): the layout, then one pair
 * of genes per segment. 8 bytes of walk seed (little-endian), 4 bytes per
 * point (x and y quantised to 16 bits over the area, q / 65535 x width,
 * little-endian, the points always sorted by x then y: one layout, one
 * genome), then TRK_MAX_SEGMENTS tightness bytes and TRK_MAX_SEGMENTS
 * climb bytes. The track of a genome:
 *   points    the genome's points (a repeated point dropped)
 *   diagram   Delaunay triangulation, clipped Voronoi diagram
 *   circuit   trk_loop_new() seeded with the walk seed (8..24 corners)
 *   track     corners.h: straight sides, corner k rounded at tightness
 *             byte k / 255 within the curvature limit, segment k climbing
 *             by climb byte k (mapped to -1..1 of the slope cap); valid
 *             when it passes every predicate of trk_track_check() with
 *             trk_search_limits(). Genes of segments past the circuit's
 *             count are unread.
 * Fitness (fitness.h, issue 13): every genome is raced on the same
 * races_per_genome race seeds, derived from the job's seed (common random
 * numbers); a segment's PX is the mean over those races, and the error is
 * the mean over segments of |target - mean PX| (0..2), so the number of
 * segments is not rewarded. ga.h needs a fitness >= 0, so the GA sees
 * TRK_FITNESS_SHIFT - error: every track that can be raced scores at least
 * 1, a genome with no valid track 0. Parents are drawn by tournament
 * (TRK_TOURNAMENT), which sees only the ranking. The TRK_CONFIRM best
 * genomes are then raced on the job's first level_races races (the
 * fitness races and more) and become levels in order of that error: the
 * winner of a ranking on a few races is partly the luckiest on them. A
 * level reports its PX and error (fitness = -error) on level_races other
 * races, trk_report_seeds(), which no choice was made on.
 * Algorithm "random" (the baseline): the same loop, operators, evaluation
 * and confirmation, every offspring a random genome (ga.h's GA_RANDOM), so
 * it draws as many genomes as the GA can evaluate.
 * Operators (deterministic, from the GA's one stream; each leaves the
 * points sorted):
 *  - random: trk_genome_random();
 *  - mutate: three times in four the layout is kept and the segments
 *    tuned: half of those times (when the layout was raced before) each
 *    segment's tightness moves against its error on the layout's best
 *    genome (directed), otherwise used gene bytes step by up to
 *    +-TRK_GENE_STEP with probability `rate` (one at least); the fourth
 *    time the walk seed is redrawn with probability `rate` and each point,
 *    with the same probability, moves by up to TRK_MOVE mean spacings;
 *  - crossover: the layout is parent a's three times in four, else a
 *    single-point cut on the sorted point list with either parent's walk
 *    seed; the segment genes are cut once, a's before, b's after.
 * Stars on lap time (lower is better): TRK_STAR_SKILLS agents of skill
 * 0.1..0.9, star_seeds races each, race the chosen track; their lap times
 * in tenths of a second form a histogram with score = slowest - lap, which
 * core/stars turns into three thresholds, reported back in seconds.
 */
#ifndef SF_TRK_SEARCH_H
#define SF_TRK_SEARCH_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../err.h"
#include "../rng.h"
#include "../search/ga.h"
#include "../stars.h"
#include "fitness.h"
#include "px.h"
#include "race.h"
#include "racetrack.h"
#include "track.h"

#define TRK_GENOME_SEED 8       /* the walk seed's bytes, before the points */
#define TRK_COORD_MAX 65535.0   /* a point coordinate's quantisation steps */
#define TRK_SEARCH_MIN_POINTS 8 /* fewer give too small a Voronoi diagram */
#define TRK_SEARCH_MAX_POINTS 200
#define TRK_MAX_TARGET 64
#define TRK_MIN_SEGMENTS 8    /* circuit vertices: segments (genes) of a track */
#define TRK_MAX_SEGMENTS 24   /* = TRK_FIT_MAX_SEGMENTS */
#define TRK_FITNESS_SHIFT 3.0 /* the GA's fitness of a valid track: this - error */
#define TRK_TOURNAMENT 3      /* parent selection: the best of 3 (docs/racetrack.md) */
#define TRK_MOVE 0.25         /* the largest mutation move, in mean point spacings */
#define TRK_GENE_BYTES (2 * TRK_MAX_SEGMENTS) /* tightness, then climb, per segment */
#define TRK_GENE_STEP 48.0                    /* the largest mutation step of a gene byte */
#define TRK_MAX_WARNINGS 2
#define TRK_CONFIRM 8 /* best genomes raced again on level_races before levels are chosen */
#define TRK_DEFAULT_AREA 400.0          /* m, width and height for roads up to 12 m */
#define TRK_AREA_PER_WIDTH (400.0 / 12) /* beyond: the default area grows with the road */
#define TRK_MIN_AREA_PER_WIDTH 25.0     /* the smallest area, in road widths */
#define TRK_STAR_SKILLS 9               /* skills 0.1, 0.2, ..., 0.9 */

typedef enum trk_algorithm {
	TRK_ALG_GA,     /* "ga": the genetic algorithm, tournament selection */
	TRK_ALG_RANDOM, /* "random": random genomes, the same budget (the baseline) */
} trk_algorithm;

typedef struct trk_search_params {
	int points;                    /* Voronoi sites, default 30, 8..200 */
	double width;                  /* the area, m: default 400, 100..5000 */
	double height;                 /* default 400, 100..5000 */
	double track_width;            /* road width, m: default 12, 4..40 */
	size_t ntarget;                /* 2..TRK_MAX_TARGET */
	double target[TRK_MAX_TARGET]; /* PX over the lap fraction, each 0..1; default
					* 0.2 0.5 0.8 0.5 0.2 */
	/* "synthetic" (trk_px_synth, the shipped set's seed) or an uploaded
	 * model's name (trk_px_name_valid; the caller supplies the model) */
	char px_model[TRK_PX_NAME_MAX + 1];
	double player_skill;  /* the player agent of the fitness races, default 0.5, 0..1 */
	int races_per_genome; /* fitness races per genome, default 8, 1..TRK_MAX_RACES */
	/* races the best genomes are ranked on again (the job's first
	 * level_races, the fitness races among them) and that a level reports
	 * its PX on (as many trk_report_seeds), default 32,
	 * races_per_genome..TRK_MAX_RACES */
	int level_races;
	trk_algorithm algorithm; /* default ga */
	int population;          /* default 30, 2..1000 (the paper's) */
	int generations;         /* default 50, 1..1000 (the paper's) */
	double mutation_rate;    /* default 0.1, 0..1 */
	int elites;              /* default 1, 0..population-1 */
	int count;               /* levels, default 1, 1..100 */
	int star_seeds;          /* star races per skill, default 3, 1..20 */
	stars_config stars;      /* default paper */
} trk_search_params;

/* One level: the genome, its track, the player's lap and the lap-time stars. */
typedef struct trk_level {
	uint8_t *genome; /* trk_genome_length() bytes */
	trk_track *track;
	trk_race_result race;               /* the first fitness race: the player's simulated lap */
	uint64_t race_seed;                 /* its seed, race_seeds[0] */
	trk_px_fit fit;                     /* PX over all the fitness races */
	uint64_t race_seeds[TRK_MAX_RACES]; /* the job's: fit.nraces of them */
	double fitness;                     /* -fit.error: <= 0, 0 a perfect match */
	ga_eval eval;                       /* what the GA saw */
	double thresholds[3];               /* lap seconds for one, two, three stars (decreasing) */
	int player_stars;                   /* stars the player's lap earns, 0..3 */
	size_t nlaps;
	double *laps;   /* each star race's lap, s, or -1 when unfinished */
	uint64_t races; /* races run for this level (stars + the fitness races) */
} trk_level;

typedef struct trk_search_result {
	ga_status status;
	size_t count;
	trk_level *levels; /* best first */
	ga_generation *series;
	int generations_run;
	uint64_t evaluations; /* distinct genomes evaluated */
	uint64_t races;       /* races simulated in all */
	/* The lowest and highest segment PX (mean over the fitness races) of
	 * every raced track whose races all finished; px_lo > px_hi when none. */
	double px_lo, px_hi;
	/* Target outside what the model produced (or can produce at all). */
	size_t nwarnings;
	char warnings[TRK_MAX_WARNINGS][320];
	double seconds; /* wall time of the search; never in the JSON */
} trk_search_result;

typedef struct trk_search_opts {
	uint64_t seed;
	int threads; /* >= 1; never changes the result */
	/* The experience model; NULL: the one params.px_model names. Borrowed. */
	const trk_px_model *model;
	void (*progress)(void *arg, const ga_generation *gen);
	void *progress_arg;
	const atomic_int *cancel;
	double deadline; /* CLOCK_MONOTONIC seconds, 0: none */
} trk_search_opts;

/* Fills `p` with the defaults listed above. */
void trk_search_params_default(trk_search_params *p);

/* Checks every field; returns 0 or SF_EINVAL naming the field and its range. */
int trk_search_params_check(const trk_search_params *p, sf_err *err);

/*
 * The width and height params default to for a road `track_width` wide:
 * TRK_DEFAULT_AREA up to a 12 m road, then TRK_AREA_PER_WIDTH road widths,
 * so a wide road gets the same circuits at a larger scale (a 40 m road in
 * the 400 m area leaves almost no circuit that fits).
 */
double trk_default_area(double track_width);

/* Bytes per genome for these params: TRK_GENOME_SEED + 4 x points + TRK_GENE_BYTES. */
size_t trk_genome_length(const trk_search_params *p);

/*
 * The validity limits every level's track passes: trk_limits_default() of
 * the road width, but a minimum radius of half the width (docs/racetrack.md).
 */
trk_limits trk_search_limits(const trk_search_params *p);

/*
 * Builds the track of `genome` (see the top of this file) without checking
 * it. Returns a track the caller frees with trk_track_free, or NULL with
 * err set: SF_ERANGE/SF_EINVAL when the genome has no circuit or spline
 * (an unbuildable genome), SF_ENOMEM. Pure: same genome, same bytes.
 */
trk_track *trk_genome_track(const trk_search_params *p, const uint8_t *genome, sf_err *err);

/*
 * A random genome of these params into g[0..trk_genome_length(p)-1]: a
 * layout as trk_points_random() spreads it (points at least half a mean
 * spacing apart), a random walk seed and uniform segment genes. What the
 * GA's first generation and the "random" baseline draw.
 */
void trk_genome_random(const trk_search_params *p, rng *r, uint8_t *g);

/* "ga" or "random"; NULL for another value. */
const char *trk_algorithm_name(trk_algorithm a);

/*
 * Races the track of `genome` on the job's fitness races (seeds[0..nseeds-1],
 * from trk_race_seeds()) and fills `fit`. Returns 1 when the genome has a
 * valid track (fit filled), 0 when not, or a negative code (SF_ENOMEM).
 * What the search's evaluator computes for every genome, exposed for tests
 * and tools.
 */
int trk_genome_px(const trk_search_params *p, const trk_px_model *model, const uint8_t *genome,
		  const uint64_t *seeds, size_t nseeds, trk_px_fit *fit, sf_err *err);

/*
 * The experience model params.px_model names, owned by the caller
 * (trk_px_model_free), or NULL with err set. Only "synthetic" is built in:
 * any other name is an uploaded model, which the caller fetches and passes
 * in trk_search_opts.model (SF_EINVAL here).
 */
trk_px_model *trk_search_model(const trk_search_params *p, sf_err *err);

/*
 * Runs the search. Levels are the best `count` distinct tracks that pass
 * every validity check and whose star races give three lap-time bands.
 * Returns 0 (also when cancelled or timed out: see out->status), SF_ERANGE
 * when a completed run found no such track, or another negative code with
 * err set; out is then empty. Same params and seed, same result, whatever
 * the thread count. Free with trk_search_result_free().
 */
int trk_search_run(const trk_search_params *p, const trk_search_opts *opts, trk_search_result *out,
		   sf_err *err);

void trk_search_result_free(trk_search_result *res);

/* ---- JSON (search_json.c) ---- */

/*
 * Reads params from a JSON object (NULL: all defaults); unknown keys, wrong
 * types and values out of range are refused with SF_EINVAL and a message
 * naming the key (params.points) and what it allows.
 */
int trk_search_params_from_json(const json_t *obj, trk_search_params *out, sf_err *err);

/* Every params key spelled out, a new object (NULL when out of memory). */
json_t *trk_search_params_json(const trk_search_params *p);

/*
 * The level in the common envelope: id ("trk_" + 32 hex of the SHA-256 of
 * the kind, the puzzle and the star rule), kind, seed, params, puzzle,
 * solution, stars (better "lower", thresholds in seconds), stats. A new
 * reference or NULL when out of memory.
 */
json_t *trk_level_json(const trk_level *lv, const trk_search_params *p, uint64_t seed);

/* The result document: kind, seed, params, status, evaluations, races,
 * generations_run, levels, series. A new reference or NULL. */
json_t *trk_search_result_json(const trk_search_result *r, const trk_search_params *p,
			       uint64_t seed);

#endif
