/*
 * puzzle_json.c - see puzzle_json.h. Every params key is read through one
 * table, so the parser, the defaults and the normalised output cannot
 * disagree about which keys exist.
 */
#include "puzzle_json.h"

#include <stdio.h>
#include <string.h>

#include "../sha256.h"
#include "../stars_json.h"
#include "lattice_json.h"

enum key_type { KEY_INT, KEY_REAL, KEY_NAME };

typedef struct param_key {
	const char *name;
	enum key_type type;
	size_t offset; /* into lat_search_params */
	/* KEY_NAME: parses the string into the field. */
	int (*parse)(const char *text, void *field, sf_err *err);
} param_key;

static int parse_lattice(const char *t, void *f, sf_err *e)
{
	return lat_parse_kind(t, f, e);
}
static int parse_algorithm(const char *t, void *f, sf_err *e)
{
	return lat_parse_algorithm(t, f, e);
}
static int parse_fitness(const char *t, void *f, sf_err *e)
{
	return lat_parse_fitness(t, f, e);
}
static int parse_stars(const char *t, void *f, sf_err *e)
{
	return stars_parse_strategy(t, f, e);
}

#define FIELD(name) offsetof(lat_search_params, name)
static const param_key keys[] = {
	{ "length", KEY_INT, FIELD(length), NULL },
	{ "lattice", KEY_NAME, FIELD(lattice), parse_lattice },
	{ "algorithm", KEY_NAME, FIELD(algorithm), parse_algorithm },
	{ "fitness", KEY_NAME, FIELD(fitness), parse_fitness },
	{ "population", KEY_INT, FIELD(population), NULL },
	{ "generations", KEY_INT, FIELD(generations), NULL },
	{ "mutation_rate", KEY_REAL, FIELD(mutation_rate), NULL },
	{ "elites", KEY_INT, FIELD(elites), NULL },
	{ "bins", KEY_INT, FIELD(bins), NULL },
	{ "count", KEY_INT, FIELD(count), NULL },
	{ "stars", KEY_NAME, FIELD(stars.strategy), parse_stars },
	{ "star_one_fraction", KEY_REAL, FIELD(stars.one_fraction), NULL },
	{ "star_two_fraction", KEY_REAL, FIELD(stars.two_fraction), NULL },
	{ "h_min", KEY_REAL, FIELD(h_min), NULL },
	{ "h_max", KEY_REAL, FIELD(h_max), NULL },
	{ "start_share", KEY_REAL, FIELD(start_share), NULL },
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const param_key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static int read_key(const param_key *k, const json_t *v, lat_search_params *p, sf_err *err)
{
	void *field = (char *)p + k->offset;
	switch (k->type) {
	case KEY_INT: {
		json_int_t i = json_integer_value(v);
		if (!json_is_integer(v) || i < -1000000000 || i > 1000000000)
			return sf_err_set(err, SF_EINVAL, "params.%s must be an integer", k->name);
		*(int *)field = (int)i;
		return 0;
	}
	case KEY_REAL:
		if (!json_is_number(v))
			return sf_err_set(err, SF_EINVAL, "params.%s must be a number", k->name);
		*(double *)field = json_number_value(v);
		return 0;
	case KEY_NAME:
		if (!json_is_string(v))
			return sf_err_set(err, SF_EINVAL, "params.%s must be a string", k->name);
		if (k->parse(json_string_value(v), field, err)) {
			char prefix[64];
			snprintf(prefix, sizeof prefix, "params.%s: ", k->name);
			sf_err_prefix(err, prefix);
			return SF_EINVAL;
		}
		return 0;
	}
	return SF_EINVAL;
}

int lat_search_params_from_json(const json_t *obj, lat_search_params *out, sf_err *err)
{
	lat_search_params_default(out);
	if (!obj)
		return lat_search_params_check(out, err);
	if (!json_is_object(obj))
		return sf_err_set(err, SF_EINVAL, "params must be a JSON object");
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)obj, name, v)
	{
		const param_key *k = find_key(name);
		if (!k)
			return sf_err_set(
				err, SF_EINVAL,
				"params.%s is not a lattice parameter (allowed: length, "
				"lattice, algorithm, fitness, population, generations, "
				"mutation_rate, elites, bins, count, stars, star_one_fraction, "
				"star_two_fraction, h_min, h_max, start_share)",
				name);
		int rc = read_key(k, v, out, err);
		if (rc)
			return rc;
	}
	if (out->algorithm == LAT_ALG_MAP_ELITES && !json_object_get(obj, "count"))
		out->count = 0;
	int rc = lat_search_params_check(out, err);
	if (rc)
		sf_err_prefix(err, "params.");
	return rc;
}

json_t *lat_search_params_json(const lat_search_params *p)
{
	json_t *obj = json_object();
	for (size_t i = 0; obj && i < NKEYS; i++) {
		const param_key *k = &keys[i];
		const void *field = (const char *)p + k->offset;
		json_t *v = NULL;
		if (k->type == KEY_INT)
			v = json_integer(*(const int *)field);
		else if (k->type == KEY_REAL)
			v = json_real(*(const double *)field);
		else if (!strcmp(k->name, "lattice"))
			v = json_string(lat_kind_name(p->lattice));
		else if (!strcmp(k->name, "algorithm"))
			v = json_string(lat_algorithm_name(p->algorithm));
		else if (!strcmp(k->name, "fitness"))
			v = json_string(lat_fitness_name(p->fitness));
		else
			v = json_string(stars_strategy_name(p->stars.strategy));
		if (json_object_set_new(obj, k->name, v)) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
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
	uint8_t digest[SHA256_DIGEST_LEN];
	sha256(canon, (size_t)n, digest);
	memcpy(id, "lat_", 4);
	sha256_hex(digest, 16, id + 4);
}

json_t *lat_level_json(const lat_level *lv, const lat_search_params *p, uint64_t seed)
{
	char id[40], seq[LAT_MAX_LEN + 1];
	level_id(lv, p, id);
	lat_seq_format(&lv->seq, seq);
	const lat_result *ev = &lv->eval;

	json_t *stats = lat_result_json(ev, &lv->seq);
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
