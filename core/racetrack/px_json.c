/*
 * px_json.c - the JSON codec of PX trace sets (see px.h; jansson is allowed
 * in core for codecs only, the model never sees a json_t). Messages name the
 * JSON path of the bad value, e.g. traces[3].window[1] (speed_sd).
 */
#include "px.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replaces anything but printable ASCII in err->msg, which quotes user text. */
static void sanitize_msg(sf_err *err)
{
	if (!err)
		return;
	for (char *p = err->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
}

static int feature_index(const char *name)
{
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		if (!strcmp(trk_px_feature_name(f), name))
			return f;
	return -1;
}

static int parse_features(const json_t *arr, int *col_of, sf_err *err)
{
	if (!json_is_array(arr))
		return sf_err_set(err, SF_EINVAL, "features: must be an array of feature names");
	size_t n = json_array_size(arr);
	if (n > TRK_PX_NFEAT)
		return sf_err_set(err, SF_EINVAL, "features: %zu names, expected %d", n,
				  TRK_PX_NFEAT);
	int seen[TRK_PX_NFEAT] = { 0 };
	for (size_t i = 0; i < n; i++) {
		const json_t *name = json_array_get(arr, i);
		if (!json_is_string(name))
			return sf_err_set(err, SF_EINVAL, "features[%zu]: must be a string", i);
		int f = feature_index(json_string_value(name));
		if (f < 0) {
			sf_err_set(
				err, SF_EINVAL,
				"features[%zu]: unknown feature \"%.24s\" (features: speed, "
				"speed_sd, rel_speed, proximity, gained, lost, standing, braking)",
				i, json_string_value(name));
			sanitize_msg(err);
			return SF_EINVAL;
		}
		if (seen[f])
			return sf_err_set(err, SF_EINVAL, "features[%zu]: duplicate feature \"%s\"",
					  i, trk_px_feature_name(f));
		seen[f] = 1;
		col_of[i] = f;
	}
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		if (!seen[f])
			return sf_err_set(err, SF_EINVAL, "features: missing feature \"%s\"",
					  trk_px_feature_name(f));
	return 0;
}

/* A number in 0..1 at `path` (already formatted) into *out. */
static int get_unit(const json_t *v, const char *path, double *out, sf_err *err)
{
	if (!json_is_number(v))
		return sf_err_set(err, SF_EINVAL, "%s: must be a number", path);
	double x = json_number_value(v);
	if (!isfinite(x))
		return sf_err_set(err, SF_EINVAL, "%s: not finite", path);
	if (x < 0 || x > 1)
		return sf_err_set(err, SF_EINVAL, "%s: %g outside 0..1", path, x);
	*out = x;
	return 0;
}

static int parse_trace(const json_t *obj, size_t i, const int *col_of, trk_px_trace *t, sf_err *err)
{
	char path[96];
	if (!json_is_object(obj))
		return sf_err_set(err, SF_EINVAL, "traces[%zu]: must be an object", i);
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)obj, key, val)
	{
		if (strcmp(key, "window") && strcmp(key, "intensity")) {
			sf_err_set(err, SF_EINVAL,
				   "traces[%zu]: unknown field \"%.24s\" (allowed: window, "
				   "intensity)",
				   i, key);
			sanitize_msg(err);
			return SF_EINVAL;
		}
	}
	const json_t *win = json_object_get(obj, "window");
	if (!win)
		return sf_err_set(err, SF_EINVAL, "traces[%zu]: missing window", i);
	if (!json_is_array(win) || json_array_size(win) != TRK_PX_NFEAT)
		return sf_err_set(err, SF_EINVAL,
				  "traces[%zu].window: must be an array of %d numbers, one per "
				  "feature",
				  i, TRK_PX_NFEAT);
	for (size_t c = 0; c < TRK_PX_NFEAT; c++) {
		snprintf(path, sizeof path, "traces[%zu].window[%zu] (%s)", i, c,
			 trk_px_feature_name(col_of[c]));
		if (get_unit(json_array_get(win, c), path, &t->window[col_of[c]], err))
			return SF_EINVAL;
	}
	const json_t *label = json_object_get(obj, "intensity");
	if (!label)
		return sf_err_set(err, SF_EINVAL, "traces[%zu]: missing intensity", i);
	snprintf(path, sizeof path, "traces[%zu].intensity", i);
	return get_unit(label, path, &t->intensity, err);
}

trk_px_model *trk_px_model_from_json(const json_t *doc, sf_err *err)
{
	if (!json_is_object(doc)) {
		sf_err_set(err, SF_EINVAL,
			   "a trace set must be an object with \"features\" and \"traces\"");
		return NULL;
	}
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)doc, key, val)
	{
		if (strcmp(key, "features") && strcmp(key, "traces") && strcmp(key, "comment")) {
			sf_err_set(err, SF_EINVAL,
				   "unknown field \"%.24s\" (allowed: features, traces, comment)",
				   key);
			sanitize_msg(err);
			return NULL;
		}
	}
	const json_t *comment = json_object_get(doc, "comment");
	if (comment && !json_is_string(comment)) {
		sf_err_set(err, SF_EINVAL, "comment: must be a string");
		return NULL;
	}
	const json_t *features = json_object_get(doc, "features");
	const json_t *traces = json_object_get(doc, "traces");
	int col_of[TRK_PX_NFEAT];
	if (!features) {
		sf_err_set(err, SF_EINVAL,
			   "missing field \"features\" (the window's column names)");
		return NULL;
	}
	if (parse_features(features, col_of, err))
		return NULL;
	if (!traces) {
		sf_err_set(err, SF_EINVAL, "missing field \"traces\"");
		return NULL;
	}
	if (!json_is_array(traces)) {
		sf_err_set(err, SF_EINVAL, "traces: must be an array");
		return NULL;
	}
	size_t n = json_array_size(traces);
	if (n == 0) {
		sf_err_set(err, SF_EINVAL, "traces: the trace set is empty, at least 1 is needed");
		return NULL;
	}
	if (n > TRK_PX_MAX_TRACES) {
		sf_err_set(err, SF_EINVAL, "traces: too many traces: %zu, at most %d", n,
			   TRK_PX_MAX_TRACES);
		return NULL;
	}
	trk_px_trace *out = malloc(n * sizeof *out);
	if (!out) {
		sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", n);
		return NULL;
	}
	trk_px_model *model = NULL;
	for (size_t i = 0; i < n; i++)
		if (parse_trace(json_array_get(traces, i), i, col_of, &out[i], err))
			goto fail;
	model = trk_px_model_new(out, n, err);
fail:
	free(out);
	return model;
}

trk_px_model *trk_px_parse_json(const char *text, size_t len, sf_err *err)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		sf_err_set(err, SF_EINVAL, "not valid JSON: line %d, column %d: %s", jerr.line,
			   jerr.column, jerr.text);
		sanitize_msg(err);
		return NULL;
	}
	trk_px_model *model = trk_px_model_from_json(doc, err);
	json_decref(doc);
	return model;
}

json_t *trk_px_model_json(const trk_px_model *model)
{
	json_t *doc = json_object();
	json_t *names = json_array();
	json_t *traces = json_array();
	/* set_new steals even on failure, so `doc` owns both arrays from here. */
	int bad = !doc || !names || !traces ||
		  json_object_set_new(doc, "features", json_incref(names)) ||
		  json_object_set_new(doc, "traces", json_incref(traces));
	for (int f = 0; !bad && f < TRK_PX_NFEAT; f++)
		bad = json_array_append_new(names, json_string(trk_px_feature_name(f)));
	for (size_t i = 0; !bad && i < model->n; i++) {
		json_t *win = json_array();
		json_t *obj = json_object();
		bad = !win || !obj || json_object_set_new(obj, "window", json_incref(win)) ||
		      json_object_set_new(obj, "intensity", json_real(model->traces[i].intensity));
		for (int f = 0; !bad && f < TRK_PX_NFEAT; f++)
			bad = json_array_append_new(win, json_real(model->traces[i].window[f]));
		if (!bad)
			bad = json_array_append(traces, obj);
		json_decref(win);
		json_decref(obj);
	}
	json_decref(names);
	json_decref(traces);
	if (bad) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}
