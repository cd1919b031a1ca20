/*
 * puzzle_json.c - see puzzle_json.h. The params go through one key table
 * (core/params.h).
 */
#include "puzzle_json.h"

#include <stdio.h>
#include <string.h>

#include "../params.h"
#include "../sha256.h"
#include "../stars_json.h"
#include "lattice_json.h"
#include "puzzle_long.h"

static int parse_lattice(const char *t, void *f, sf_err *e)
{
	return lat_parse_kind(t, f, e);
}
static const char *lattice_name(const void *f)
{
	return lat_kind_name(*(const lat_kind *)f);
}
static int parse_algorithm(const char *t, void *f, sf_err *e)
{
	return lat_parse_algorithm(t, f, e);
}
static const char *algorithm_name(const void *f)
{
	return lat_algorithm_name(*(const lat_algorithm *)f);
}
static int parse_method(const char *t, void *f, sf_err *e)
{
	return lat_parse_method(t, f, e);
}
static const char *method_name(const void *f)
{
	return lat_method_name(*(const lat_method *)f);
}
static int parse_fitness(const char *t, void *f, sf_err *e)
{
	return lat_parse_fitness(t, f, e);
}
static const char *fitness_name(const void *f)
{
	return lat_fitness_name(*(const lat_fitness *)f);
}
/* The core's strategies, and "solver": the lattice kind has a solver (stars.h). */
static int parse_stars(const char *t, void *f, sf_err *e)
{
	if (t && !strcmp(t, "solver")) {
		*(stars_strategy *)f = STARS_SOLVER;
		return 0;
	}
	if (!stars_parse_strategy(t, f, NULL))
		return 0;
	return sf_err_set(e, SF_EINVAL,
			  "unknown star strategy '%s' (allowed: paper, percentile, geometric, "
			  "solver)",
			  t ? t : "");
}

#define FIELD(name) offsetof(lat_search_params, name)
#define INT(key, field)                                                 \
	{                                                               \
		key, SF_PARAM_INT, FIELD(field), NULL, NULL, NULL, NULL \
	}
#define REAL(key, field)                                                 \
	{                                                                \
		key, SF_PARAM_REAL, FIELD(field), NULL, NULL, NULL, NULL \
	}
#define NAME(key, field, parse, name)                                     \
	{                                                                 \
		key, SF_PARAM_NAME, FIELD(field), parse, name, NULL, NULL \
	}
static const sf_param keys[] = {
	INT("length", length),
	NAME("lattice", lattice, parse_lattice, lattice_name),
	NAME("algorithm", algorithm, parse_algorithm, algorithm_name),
	NAME("fitness", fitness, parse_fitness, fitness_name),
	INT("population", population),
	INT("generations", generations),
	REAL("mutation_rate", mutation_rate),
	INT("elites", elites),
	INT("bins", bins),
	INT("count", count),
	NAME("stars", stars.strategy, parse_stars, sf_param_stars_name),
	REAL("star_one_fraction", stars.one_fraction),
	REAL("star_two_fraction", stars.two_fraction),
	REAL("h_min", h_min),
	REAL("h_max", h_max),
	REAL("start_share", start_share),
	NAME("method", method, parse_method, method_name),
	INT("steps", steps),
	INT("moves", moves),
	INT("nodes", nodes),
};
#define NKEYS (sizeof keys / sizeof keys[0])

int lat_search_params_from_json(const json_t *obj, lat_search_params *out, sf_err *err)
{
	lat_search_params_default(out);
	if (!obj)
		return lat_search_params_check(out, err);
	int rc = sf_params_read(keys, NKEYS, "lattice", obj, out, err);
	if (rc)
		return rc;
	if (out->algorithm == LAT_ALG_MAP_ELITES && !json_object_get(obj, "count"))
		out->count = 0;
	rc = lat_search_params_check(out, err);
	if (rc)
		sf_err_prefix(err, "params.");
	return rc;
}

json_t *lat_search_params_json(const lat_search_params *p)
{
	return sf_params_write(keys, NKEYS, p);
}

/* "lat_" and 32 hex digits: SHA-256 of the kind, lattice, sequence and star rule. */
static void level_id(const lat_level *lv, const lat_search_params *p, char id[40])
{
	char seq[LAT_MAX_LEN + 1], canon[256];
	lat_seq_format(&lv->seq, seq);
	int n = snprintf(canon, sizeof canon, "lattice\n%s\n%s\n%s", lat_kind_name(p->lattice), seq,
			 stars_strategy_name(p->stars.strategy));
	if (p->stars.strategy == STARS_PERCENTILE)
		n += snprintf(canon + n, sizeof canon - (size_t)n, " %.17g %.17g",
			      p->stars.one_fraction, p->stars.two_fraction);
	/* An estimated level's stats are a function of the puzzle and the
	 * budgets (puzzle_long.h); exact ids stay as they were. */
	if (lv->estimate)
		n += snprintf(canon + n, sizeof canon - (size_t)n, "\nestimate %d %d %d", p->steps,
			      p->moves, p->nodes);
	uint8_t digest[SHA256_DIGEST_LEN];
	sha256(canon, (size_t)n, digest);
	memcpy(id, "lat_", 4);
	sha256_hex(digest, 16, id + 4);
}

/*
 * The level's evaluation for its stats, as a new object: an exact one
 * (lat_result_json()) with "method": "exact" and "optimum" {score, proven:
 * true}, or an estimate (lat_evaluation_json(): method, histogram and
 * histogram_error, optimum, ...). NULL when out of memory.
 */
static json_t *level_evaluation_json(const lat_level *lv, const lat_search_params *p)
{
	if (lv->estimate) {
		lat_eval_config cfg;
		lat_long_config(p, &lv->seq, &cfg);
		return lat_evaluation_json(lv->estimate, &lv->seq, &cfg);
	}
	json_t *stats = lat_result_json(&lv->eval, &lv->seq);
	if (stats && (json_object_set_new(stats, "method", json_string("exact")) ||
		      json_object_set_new(
			      stats, "optimum",
			      json_pack("{s:i, s:b}", "score", lv->eval.max_score, "proven", 1)))) {
		json_decref(stats);
		return NULL;
	}
	return stats;
}

json_t *lat_level_json(const lat_level *lv, const lat_search_params *p, uint64_t seed)
{
	char id[40], seq[LAT_MAX_LEN + 1];
	level_id(lv, p, id);
	lat_seq_format(&lv->seq, seq);
	const lat_result *ev = &lv->eval;

	json_t *stats = level_evaluation_json(lv, p);
	if (!stats)
		return NULL;
	/* The evaluation's own identity keys belong to the puzzle. */
	json_object_del(stats, "sequence");
	json_object_del(stats, "lattice");
	json_object_del(stats, "length");
	json_object_del(stats, "examples");
	json_t *folds = json_pack("{s:s, s:s, s:s}", "one", ev->examples[lv->thresholds[0]], "two",
				  ev->examples[lv->thresholds[1]], "three",
				  ev->examples[lv->thresholds[2]]);
	json_t *doc = json_pack(
		"{s:s, s:s, s:I, s:o, s:{s:s, s:i, s:s}, s:{s:i, s:s, s:o}, s:o, s:o}", "id", id,
		"kind", "lattice", "seed", (json_int_t)seed, "params", lat_search_params_json(p),
		"puzzle", "lattice", lat_kind_name(p->lattice), "length", lv->seq.len, "sequence",
		seq, "solution", "best_score", ev->max_score, "best_fold",
		ev->examples[ev->max_score], "band_folds", folds, "stars",
		stars_json(&p->stars, "contacts", lv->thresholds, NULL), "stats", stats);
	if (!doc)
		return NULL;
	json_t *fit = json_pack("{s:s, s:f, s:f, s:f}", "name", lat_fitness_name(p->fitness),
				"value", lv->fitness.fitness, "h_fraction", lv->fitness.desc[0],
				"rarity", lv->fitness.desc[1]);
	if (!fit || json_object_set_new(stats, "fitness", fit)) {
		json_decref(doc);
		return NULL;
	}
	/* The reference solver's success at each star (solver.h). */
	const lat_solver_result *sr = &lv->solver;
	json_t *success = json_array();
	for (int k = 0; success && k < 3; k++)
		if (json_array_append_new(success,
					  json_real(lat_solver_reach(sr, lv->thresholds[k])))) {
			json_decref(success);
			success = NULL;
		}
	json_t *solver =
		success ? json_pack("{s:i, s:I, s:i, s:o}", "runs", sr->runs, "steps",
				    (json_int_t)sr->steps, "best", sr->best, "success", success)
			: NULL;
	if (!solver || json_object_set_new(stats, "solver", solver)) {
		json_decref(doc);
		return NULL;
	}
	if (lv->cell >= 0 &&
	    json_object_set_new(stats, "cell",
				json_pack("[ii]", lv->cell / p->bins, lv->cell % p->bins))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

json_t *lat_search_result_json(const lat_search_result *r, const lat_search_params *p,
			       uint64_t seed)
{
	json_t *levels = json_array(), *series = json_array();
	json_t *doc = json_pack("{s:s, s:I, s:o, s:s, s:I, s:i, s:o, s:o}", "kind", "lattice",
				"seed", (json_int_t)seed, "params", lat_search_params_json(p),
				"status", ga_status_name(r->status), "evaluations",
				(json_int_t)r->evaluations, "generations_run", r->generations_run,
				"levels", json_incref(levels), "series", json_incref(series));
	int bad = !doc;
	for (size_t i = 0; !bad && i < r->count; i++)
		bad = json_array_append_new(levels, lat_level_json(&r->levels[i], p, seed));
	for (int g = 0; !bad && g < r->generations_run; g++) {
		const ga_generation *gen = &r->series[g];
		bad = json_array_append_new(
			series, json_pack("{s:i, s:f, s:f, s:i, s:i, s:I}", "generation",
					  gen->generation, "best", gen->best, "mean", gen->mean,
					  "at_best", gen->at_best, "filled", gen->filled,
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
