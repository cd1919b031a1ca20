/* kind.c - the racetrack kind's entry in the registry (core/kinds.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinds.h"
#include "check.h"
#include "px.h"
#include "search.h"
#include "svg.h"

/* sf_resource_kind.validate: a trace set in CSV or JSON, parsed whole. */
static int px_validate(const char *body, size_t len, const char *format, json_t **summary,
		       sf_err *err)
{
	trk_px_model *model = !strcmp(format, "csv") ? trk_px_parse_csv(body, len, err)
						     : trk_px_parse_json(body, len, err);
	if (!model)
		return err ? err->code : SF_EINVAL;
	json_t *features = json_array();
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		json_array_append_new(features, json_string(trk_px_feature_name(f)));
	*summary = json_pack("{s:I, s:o}", "traces", (json_int_t)model->n, "features", features);
	trk_px_model_free(model);
	return *summary ? 0 : sf_err_set(err, SF_ENOMEM, "out of memory");
}

static const char *const px_formats[] = { "csv",  "text/csv; charset=utf-8", "csv", "text/csv",
					  "json", "application/json",        NULL };

/* Experience models designers upload: POST /v1/px-models (docs/px-model.md). */
static const sf_resource_kind px_resource = {
	.type = "px_model",
	.collection = "px-models",
	.slug = "px-model",
	.what = "model",
	.title = "Invalid trace set",
	.builtin = TRK_PX_SYNTHETIC,
	.formats = px_formats,
	.validate = px_validate,
};

_Static_assert(TRK_PX_NAME_MAX == SF_RESOURCE_NAME_MAX, "one name rule for every resource");

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

/* An uploaded experience model is the one resource racetrack params name. */
static const char *racetrack_params_resource(const void *params, const char **type)
{
	const trk_search_params *p = params;
	*type = px_resource.type;
	return strcmp(p->px_model, TRK_PX_SYNTHETIC) ? p->px_model : NULL;
}

/*
 * The uploaded model params.px_model names, fetched through opts->resource
 * and parsed (the upload was validated, but it is parsed again here: the
 * store holds text). NULL with err set when there is no resource callback
 * (the command line), no such model or a model that no longer parses.
 */
static trk_px_model *uploaded_model(const trk_search_params *p, const sf_gen_opts *opts,
				    sf_err *err)
{
	if (!opts->resource) {
		sf_err_set(err, SF_EINVAL,
			   "params.px_model '%s': uploaded experience models are a service feature "
			   "(POST /v1/px-models on starforge serve); here only 'synthetic' is "
			   "available",
			   p->px_model);
		return NULL;
	}
	size_t len = 0;
	char *text = opts->resource(opts->resource_ctx, px_resource.type, p->px_model, &len);
	if (!text) {
		sf_err_set(err, SF_EINVAL, "params.px_model '%s' is not an uploaded model",
			   p->px_model);
		return NULL;
	}
	trk_px_model *model = trk_px_parse_any(text, len, err);
	free(text);
	if (!model) {
		char prefix[TRK_PX_NAME_MAX + 40];
		snprintf(prefix, sizeof prefix, "params.px_model '%s': ", p->px_model);
		sf_err_prefix(err, prefix);
	}
	return model;
}

/* opts->eval_cache is the lattice kind's; racetrack has none and ignores it. */
static json_t *racetrack_generate(const void *params, const sf_gen_opts *opts, sf_err *err)
{
	const trk_search_params *p = params;
	trk_px_model *model = NULL;
	if (strcmp(p->px_model, TRK_PX_SYNTHETIC) && !(model = uploaded_model(p, opts, err)))
		return NULL;
	trk_search_opts so = { .seed = opts->seed,
			       .threads = opts->threads,
			       .model = model,
			       .progress = opts->progress,
			       .progress_arg = opts->progress_arg,
			       .cancel = opts->cancel,
			       .deadline = opts->deadline };
	trk_search_result res;
	int rc = trk_search_run(p, &so, &res, err);
	trk_px_model_free(model);
	if (rc)
		return NULL;
	json_t *doc = trk_search_result_json(&res, p, opts->seed);
	trk_search_result_free(&res);
	if (!doc)
		sf_err_set(err, SF_ENOMEM, "out of memory writing the result");
	return doc;
}

/* GET /v1/levels?kind=racetrack filters (core/kinds.h, sf_level_filter). */
static const sf_level_filter racetrack_filters[] = {
	{ "samples", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "ds", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "width", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "length", "puzzle", SF_FILTER_NUMBER, NULL },
	{ "races", "stats", SF_FILTER_NUMBER, NULL },
	{ "segments", "stats", SF_FILTER_NUMBER, NULL },
	{ "star_skills", "stats", SF_FILTER_NUMBER, NULL },
	{ NULL, NULL, SF_FILTER_TEXT, NULL },
};

const sf_kind trk_kind_def = {
	.name = "racetrack",
	.summary = "race tracks evolved to follow a player-experience curve",
	.params_parse = racetrack_params_parse,
	.params_free = racetrack_params_free,
	.generate = racetrack_generate,
	.params_resource = racetrack_params_resource,
	.resource = &px_resource,
	.check = trk_check_json,
	.level_svg = trk_level_svg,
	.filters = racetrack_filters,
};
