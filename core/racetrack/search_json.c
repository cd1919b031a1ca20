/*
 * search_json.c - the JSON codec of the racetrack search: params, levels
 * and the result document (see search.h). The params go through one key
 * table (core/params.h).
 *
 * Stars: core/stars_json writes "better": "higher" over integer scores; a
 * racetrack level's metric is a lap time in seconds, lower being better, so
 * its stars object is written here in the same shape (strategy, metric,
 * better, thresholds) with "better": "lower" and the unit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../params.h"
#include "../sha256.h"
#include "search.h"

static int read_target(const json_t *v, void *params, sf_err *err)
{
	trk_search_params *p = params;
	size_t n = json_array_size(v);
	if (!json_is_array(v) || n < 2 || n > TRK_MAX_TARGET)
		return sf_err_set(err, SF_EINVAL,
				  "params.target must be an array of 2..%d numbers in 0..1",
				  TRK_MAX_TARGET);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(v, i);
		if (!json_is_number(x))
			return sf_err_set(err, SF_EINVAL,
					  "params.target[%zu] must be a number in 0..1", i);
		p->target[i] = json_number_value(x);
	}
	p->ntarget = n;
	return 0;
}

static json_t *write_target(const void *params)
{
	const trk_search_params *p = params;
	json_t *v = json_array();
	for (size_t j = 0; v && j < p->ntarget; j++) {
		if (json_array_append_new(v, json_real(p->target[j]))) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

static int read_model(const json_t *v, void *params, sf_err *err)
{
	trk_search_params *p = params;
	const char *s = json_string_value(v);
	if (!s || !trk_px_name_valid(s))
		return sf_err_set(err, SF_EINVAL,
				  "params.px_model must be a model name (allowed: "
				  "synthetic or an uploaded model's name, 1..%d of a-z 0-9 _ -)",
				  TRK_PX_NAME_MAX);
	strcpy(p->px_model, s);
	return 0;
}

static json_t *write_model(const void *params)
{
	return json_string(((const trk_search_params *)params)->px_model);
}

static int parse_algorithm(const char *text, void *field, sf_err *err)
{
	for (int a = TRK_ALG_GA; a <= TRK_ALG_RANDOM; a++)
		if (!strcmp(text, trk_algorithm_name((trk_algorithm)a))) {
			*(trk_algorithm *)field = (trk_algorithm)a;
			return 0;
		}
	return sf_err_set(err, SF_EINVAL, "params.algorithm '%s' is unknown (allowed: ga, random)",
			  text);
}

static const char *algorithm_name(const void *field)
{
	return trk_algorithm_name(*(const trk_algorithm *)field);
}

#define FIELD(name) offsetof(trk_search_params, name)
#define INT(key, field)                                                 \
	{                                                               \
		key, SF_PARAM_INT, FIELD(field), NULL, NULL, NULL, NULL \
	}
#define REAL(key, field)                                                 \
	{                                                                \
		key, SF_PARAM_REAL, FIELD(field), NULL, NULL, NULL, NULL \
	}
#define CUSTOM(key, field, rd, wr)                                     \
	{                                                              \
		key, SF_PARAM_CUSTOM, FIELD(field), NULL, NULL, rd, wr \
	}
static const sf_param keys[] = {
	INT("points", points),
	REAL("width", width),
	REAL("height", height),
	REAL("track_width", track_width),
	CUSTOM("target", target, read_target, write_target),
	CUSTOM("px_model", px_model, read_model, write_model),
	REAL("player_skill", player_skill),
	INT("races_per_genome", races_per_genome),
	INT("level_races", level_races),
	{ "algorithm", SF_PARAM_NAME, FIELD(algorithm), parse_algorithm, algorithm_name, NULL,
	  NULL },
	INT("population", population),
	INT("generations", generations),
	REAL("mutation_rate", mutation_rate),
	INT("elites", elites),
	INT("count", count),
	INT("star_seeds", star_seeds),
	{ "stars", SF_PARAM_NAME, FIELD(stars.strategy), sf_param_parse_stars, sf_param_stars_name,
	  NULL, NULL },
	REAL("star_one_fraction", stars.one_fraction),
	REAL("star_two_fraction", stars.two_fraction),
};
#define NKEYS (sizeof keys / sizeof keys[0])

int trk_search_params_from_json(const json_t *obj, trk_search_params *out, sf_err *err)
{
	trk_search_params_default(out);
	if (!obj)
		return trk_search_params_check(out, err);
	int rc = sf_params_read(keys, NKEYS, "racetrack", obj, out, err);
	if (rc)
		return rc;
	/* An area left out grows with a wide road (search.h, TRK_AREA_PER_WIDTH). */
	double area = trk_default_area(out->track_width);
	if (!json_object_get(obj, "width"))
		out->width = area;
	if (!json_object_get(obj, "height"))
		out->height = area;
	rc = trk_search_params_check(out, err);
	if (rc)
		sf_err_prefix(err, "params.");
	return rc;
}

json_t *trk_search_params_json(const trk_search_params *p)
{
	return sf_params_write(keys, NKEYS, p);
}

/* ---- levels ---- */

static json_t *vec3(trk_vec3 v)
{
	return json_pack("[fff]", v.x, v.y, v.z);
}

/* The track as a level shows it: every sample and the segments. */
static json_t *puzzle_json(const trk_level *lv)
{
	const trk_track *t = lv->track;
	json_t *spline = json_array(), *segments = json_array(), *checkpoints = json_array();
	int bad = !spline || !segments || !checkpoints;
	for (size_t k = 0; !bad && k < t->n; k++)
		bad = json_array_append_new(spline, vec3(t->samples[k]));
	for (size_t i = 0; !bad && i < t->nsegments; i++) {
		size_t a = t->seg_start[i], s = a < t->n ? a : t->n - 1;
		/* The target and the mean PX over the fitness races exactly as the
		 * fitness compares them, so their mean difference is the error. */
		bad = json_array_append_new(segments,
					    json_pack("{s:f, s:I, s:f, s:f, s:f}", "start",
						      (double)s * t->ds, "start_sample",
						      (json_int_t)s, "target_px", lv->fit.target[i],
						      "simulated_px", lv->fit.mean[i],
						      "simulated_px_sd", lv->fit.sd[i])) ||
		      json_array_append_new(checkpoints, vec3(t->samples[s]));
	}
	if (bad) {
		json_decref(spline);
		json_decref(segments);
		json_decref(checkpoints);
		return NULL;
	}
	/* The start line crosses the road at sample 0, square to the direction of travel. */
	trk_vec3 a = t->samples[0], b = t->samples[1 % t->n];
	double dx = b.x - a.x, dy = b.y - a.y, len = sqrt(dx * dx + dy * dy);
	if (len > 0) {
		dx /= len;
		dy /= len;
	}
	return json_pack("{s:o, s:I, s:f, s:f, s:f, s:o, s:o, s:{s:o, s:[ff], s:f}}", "spline",
			 spline, "samples", (json_int_t)t->n, "ds", t->ds, "width", t->width,
			 "length", t->length, "segments", segments, "checkpoints", checkpoints,
			 "start_line", "position", vec3(a), "direction", dx, dy, "width", t->width);
}

static json_t *solution_json(const trk_level *lv, const trk_search_params *p)
{
	json_t *px = json_array();
	for (size_t i = 0; px && i < lv->race.nsegments; i++)
		if (json_array_append_new(px, json_real(lv->race.segment_px[i]))) {
			json_decref(px);
			return NULL;
		}
	return json_pack("{s:{s:b, s:o, s:i, s:i, s:o, s:I, s:f, s:i}}", "player_lap", "finished",
			 lv->race.finished, "time",
			 lv->race.finished ? json_real(lv->race.lap_time) : json_null(),
			 "final_standing", lv->race.final_standing, "stuck_segment",
			 lv->race.stuck_segment, "segment_px", px, "race_seed",
			 (json_int_t)lv->race_seed, "player_skill", p->player_skill, "stars",
			 lv->player_stars);
}

static json_t *stars_object(const trk_level *lv, const trk_search_params *p)
{
	json_t *obj = json_pack("{s:s, s:s, s:s, s:s, s:[fff]}", "strategy",
				stars_strategy_name(p->stars.strategy), "metric", "lap_time",
				"better", "lower", "unit", "s", "thresholds", lv->thresholds[0],
				lv->thresholds[1], lv->thresholds[2]);
	if (obj && p->stars.strategy == STARS_PERCENTILE &&
	    json_object_set_new(obj, "fractions",
				json_pack("[ff]", p->stars.one_fraction, p->stars.two_fraction))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *stats_json(const trk_level *lv, size_t genome_len)
{
	static const char hex[] = "0123456789abcdef";
	char *g = malloc(2 * genome_len + 1);
	json_t *laps = json_array(), *seeds = json_array();
	if (!g || !laps || !seeds) {
		free(g);
		json_decref(laps);
		json_decref(seeds);
		return NULL;
	}
	for (size_t k = 0; k < lv->fit.nraces; k++)
		if (json_array_append_new(seeds, json_integer((json_int_t)lv->race_seeds[k]))) {
			free(g);
			json_decref(laps);
			json_decref(seeds);
			return NULL;
		}
	for (size_t i = 0; i < genome_len; i++) {
		g[2 * i] = hex[lv->genome[i] >> 4];
		g[2 * i + 1] = hex[lv->genome[i] & 15];
	}
	g[2 * genome_len] = '\0';
	for (size_t k = 0; k < lv->nlaps; k++)
		if (json_array_append_new(laps, lv->laps[k] >= 0 ? json_real(lv->laps[k])
								 : json_null())) {
			free(g);
			json_decref(laps);
			json_decref(seeds);
			return NULL;
		}
	json_t *obj = json_pack("{s:{s:f, s:f}, s:I, s:o, s:s, s:I, s:o, s:i}", "fitness", "value",
				lv->fitness, "ga", lv->eval.fitness, "races", (json_int_t)lv->races,
				"race_seeds", seeds, "genome", g, "segments",
				(json_int_t)lv->track->nsegments, "star_laps", laps, "star_skills",
				TRK_STAR_SKILLS);
	free(g);
	return obj;
}

/* "trk_" and 32 hex digits: SHA-256 of the kind, the puzzle and the star rule. */
static int level_id(const json_t *puzzle, const trk_search_params *p, char id[40])
{
	char *text = json_dumps(puzzle, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		return -1;
	char rule[96];
	int n = snprintf(rule, sizeof rule, "\n%s", stars_strategy_name(p->stars.strategy));
	if (p->stars.strategy == STARS_PERCENTILE)
		snprintf(rule + n, sizeof rule - (size_t)n, " %.17g %.17g", p->stars.one_fraction,
			 p->stars.two_fraction);
	sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, "racetrack\n", 10);
	sha256_update(&c, text, strlen(text));
	sha256_update(&c, rule, strlen(rule));
	uint8_t digest[SHA256_DIGEST_LEN];
	sha256_final(&c, digest);
	free(text);
	memcpy(id, "trk_", 4);
	sha256_hex(digest, 16, id + 4);
	return 0;
}

json_t *trk_level_json(const trk_level *lv, const trk_search_params *p, uint64_t seed)
{
	json_t *puzzle = puzzle_json(lv);
	json_t *solution = solution_json(lv, p);
	char id[40];
	if (!puzzle || !solution || level_id(puzzle, p, id)) {
		json_decref(puzzle);
		json_decref(solution);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o}", "id", id, "kind", "racetrack",
			 "seed", (json_int_t)seed, "params", trk_search_params_json(p), "puzzle",
			 puzzle, "solution", solution, "stars", stars_object(lv, p), "stats",
			 stats_json(lv, trk_genome_length(p)));
}

json_t *trk_search_result_json(const trk_search_result *r, const trk_search_params *p,
			       uint64_t seed)
{
	json_t *levels = json_array(), *series = json_array();
	json_t *doc =
		json_pack("{s:s, s:I, s:o, s:s, s:I, s:I, s:i, s:o, s:o}", "kind", "racetrack",
			  "seed", (json_int_t)seed, "params", trk_search_params_json(p), "status",
			  ga_status_name(r->status), "evaluations", (json_int_t)r->evaluations,
			  "races", (json_int_t)r->races, "generations_run", r->generations_run,
			  "levels", json_incref(levels), "series", json_incref(series));
	int bad = !doc;
	json_t *warnings = json_array();
	for (size_t i = 0; warnings && i < r->nwarnings; i++)
		if (json_array_append_new(warnings, json_string(r->warnings[i])))
			json_decref(warnings), warnings = NULL;
	bad = bad || json_object_set_new(doc, "warnings", warnings);
	bad = bad ||
	      json_object_set_new(doc, "px_range",
				  r->px_lo <= r->px_hi ? json_pack("[f, f]", r->px_lo, r->px_hi)
						       : json_null());
	for (size_t i = 0; !bad && i < r->count; i++)
		bad = json_array_append_new(levels, trk_level_json(&r->levels[i], p, seed));
	for (int g = 0; !bad && g < r->generations_run; g++) {
		const ga_generation *gen = &r->series[g];
		bad = json_array_append_new(series,
					    json_pack("{s:i, s:f, s:f, s:i, s:I}", "generation",
						      gen->generation, "best", gen->best, "mean",
						      gen->mean, "at_best", gen->at_best,
						      "evaluations", (json_int_t)gen->evaluations));
	}
	json_decref(levels);
	json_decref(series);
	if (bad) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}
