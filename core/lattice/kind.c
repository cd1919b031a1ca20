/* kind.c - the lattice kind's entry in the registry (core/kinds.h). */
#include <stdlib.h>

#include "../kinds.h"
#include "check.h"
#include "puzzle.h"
#include "puzzle_json.h"
#include "svg.h"

static void *lattice_params_parse(const json_t *params, sf_err *err)
{
	lat_search_params *p = malloc(sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory reading params");
		return NULL;
	}
	if (lat_search_params_from_json(params, p, err)) {
		free(p);
		return NULL;
	}
	return p;
}

static void lattice_params_free(void *params)
{
	free(params);
}

static json_t *lattice_generate(const void *params, const sf_gen_opts *opts, sf_err *err)
{
	const lat_search_params *p = params;
	lat_search_opts so = { .seed = opts->seed,
			       .threads = opts->threads,
			       .progress = opts->progress,
			       .progress_arg = opts->progress_arg,
			       .cancel = opts->cancel,
			       .deadline = opts->deadline,
			       .cache = opts->eval_cache };
	lat_search_result res;
	if (lat_search_run(p, &so, &res, err))
		return NULL;
	json_t *doc = lat_search_result_json(&res, p, opts->seed);
	lat_search_result_free(&res);
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the result");
	return doc;
}

/* GET /v1/levels?kind=lattice filters (core/kinds.h, sf_level_filter). */
static const char *const lattice_names[] = { "square", "cubic", NULL };
static const sf_level_filter lattice_filters[] = {
	{ "lattice", "puzzle", SF_FILTER_TEXT, lattice_names },
	{ "length", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "sequence", "puzzle", SF_FILTER_TEXT, NULL },
	{ "conformations", "stats", SF_FILTER_NUMBER, NULL },
	{ "max_score", "stats", SF_FILTER_NUMBER, NULL },
	{ "distinct_scores", "stats", SF_FILTER_NUMBER, NULL },
	{ NULL, NULL, SF_FILTER_TEXT, NULL },
};

const sf_kind lat_kind_def = {
	.name = "lattice",
	.summary = "three-star HP lattice protein puzzles (square or cubic)",
	.params_parse = lattice_params_parse,
	.params_free = lattice_params_free,
	.generate = lattice_generate,
	.check = lat_check_json,
	.level_svg = lat_level_svg,
	.level_svg_star = lat_level_svg_star,
	.filters = lattice_filters,
};
