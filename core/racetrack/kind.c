/* kind.c - the racetrack kind's entry in the registry (core/kinds.h). */
#include <stdlib.h>

#include "../kinds.h"
#include "search.h"

static void *racetrack_params_parse(const json_t *params, sf_err *err)
{
	trk_search_params *p = malloc(sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory reading params");
		return NULL;
	}
	if (trk_search_params_from_json(params, p, err)) {
		free(p);
		return NULL;
	}
	return p;
}

static void racetrack_params_free(void *params)
{
	free(params);
}

/* opts->eval_cache is the lattice kind's; racetrack has none and ignores it. */
static json_t *racetrack_generate(const void *params, const sf_gen_opts *opts, sf_err *err)
{
	const trk_search_params *p = params;
	trk_search_opts so = { .seed = opts->seed,
			       .threads = opts->threads,
			       .progress = opts->progress,
			       .progress_arg = opts->progress_arg,
			       .cancel = opts->cancel,
			       .deadline = opts->deadline };
	trk_search_result res;
	if (trk_search_run(p, &so, &res, err))
		return NULL;
	json_t *doc = trk_search_result_json(&res, p, opts->seed);
	trk_search_result_free(&res);
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the result");
	return doc;
}

const sf_kind trk_kind_def = {
	.name = "racetrack",
	.summary = "race tracks evolved to follow a player-experience curve",
	.params_parse = racetrack_params_parse,
	.params_free = racetrack_params_free,
	.generate = racetrack_generate,
};
