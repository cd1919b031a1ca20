/*
 * lattice_json.c - the JSON codec of an evaluation (jansson is allowed in
 * core for codecs only; the computation never sees a json_t).
 */
#include "lattice_json.h"

#include <stdio.h>
#include <string.h>

json_t *lat_result_json(const lat_result *res, const lat_seq *seq)
{
	char text[LAT_MAX_LEN + 1];
	lat_seq_format(seq, text);
	json_t *obj = json_object();
	json_t *hist = json_array();
	json_t *examples = json_object();
	/* set_new steals its value even when it fails, so each value is owned
	 * by `obj` from here on and one decref of `obj` frees everything. */
	int bad = !obj || !hist || !examples ||
		  json_object_set_new(obj, "sequence", json_string(text)) ||
		  json_object_set_new(obj, "lattice", json_string(lat_kind_name(res->lattice))) ||
		  json_object_set_new(obj, "length", json_integer(res->len)) ||
		  json_object_set_new(obj, "conformations",
				      json_integer((json_int_t)res->conformations)) ||
		  json_object_set_new(obj, "histogram", json_incref(hist)) ||
		  json_object_set_new(obj, "max_score", json_integer(res->max_score)) ||
		  json_object_set_new(obj, "distinct_scores", json_integer(res->distinct_scores)) ||
		  json_object_set_new(obj, "examples", json_incref(examples));
	for (int s = 0; !bad && s <= res->max_score; s++) {
		bad = json_array_append_new(hist, json_integer((json_int_t)res->hist[s]));
		if (bad || !res->hist[s])
			continue;
		char key[16];
		snprintf(key, sizeof key, "%d", s);
		bad = json_object_set_new(examples, key, json_string(res->examples[s]));
	}
	json_decref(hist);
	json_decref(examples);
	if (bad) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* "optimum": {"score", "proven", "fold"}, plus the search's work when estimated. */
static json_t *optimum_json(const lat_evaluation *ev)
{
	json_t *o = json_pack("{s:i, s:b, s:s}", "score", ev->opt_score, "proven", ev->opt_proven,
			      "fold", ev->opt_fold);
	if (o && ev->method == LAT_METHOD_ESTIMATE &&
	    (json_object_set_new(o, "moves", json_integer((json_int_t)ev->opt_moves)) ||
	     json_object_set_new(o, "nodes", json_integer((json_int_t)ev->opt_nodes)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The keys of an estimate (see lattice_json.h) into `obj`; 0 or -1. */
static int estimate_json(json_t *obj, const lat_evaluation *ev, const lat_eval_config *cfg)
{
	const lat_est_result *est = &ev->est;
	json_t *hist = json_array(), *errs = json_array(), *samples = json_array();
	json_t *examples = json_object();
	int distinct = 0;
	int bad = !hist || !errs || !samples || !examples ||
		  json_object_set_new(obj, "seed", json_integer((json_int_t)cfg->seed)) ||
		  json_object_set_new(obj, "conformations", json_real(est->total)) ||
		  json_object_set_new(obj, "conformations_error", json_real(est->total_error)) ||
		  json_object_set_new(obj, "histogram", json_incref(hist)) ||
		  json_object_set_new(obj, "histogram_error", json_incref(errs)) ||
		  json_object_set_new(obj, "samples", json_incref(samples)) ||
		  json_object_set_new(obj, "examples", json_incref(examples));
	for (int s = 0; !bad && s <= ev->max_score; s++) {
		int seen = s <= LAT_EST_MAX_SCORE && est->hist[s] > 0;
		const char *fold = s == ev->max_score ? ev->opt_fold
				   : seen             ? est->examples[s]
						      : NULL;
		distinct += ev->star_counts[s] != 0;
		bad = json_array_append_new(hist, json_real(seen ? est->hist[s] : 0)) ||
		      json_array_append_new(errs,
					    seen ? json_real(est->hist_error[s]) : json_null()) ||
		      json_array_append_new(samples,
					    json_integer(seen ? (json_int_t)est->samples[s] : 0));
		if (!bad && fold && fold[0]) {
			char key[16];
			snprintf(key, sizeof key, "%d", s);
			bad = json_object_set_new(examples, key, json_string(fold));
		}
	}
	if (!bad)
		bad = json_object_set_new(obj, "distinct_scores", json_integer(distinct)) ||
		      json_object_set_new(
			      obj, "budget",
			      json_pack("{s:i, s:I, s:I, s:I}", "runs", est->runs, "steps",
					(json_int_t)est->steps, "moves",
					(json_int_t)(cfg->opt_moves ? cfg->opt_moves
								    : LAT_OPT_DEFAULT_MOVES),
					"nodes",
					(json_int_t)(cfg->opt_nodes ? cfg->opt_nodes
								    : LAT_EVAL_DEFAULT_NODES)));
	json_decref(hist);
	json_decref(errs);
	json_decref(samples);
	json_decref(examples);
	return bad ? -1 : 0;
}

json_t *lat_evaluation_json(const lat_evaluation *ev, const lat_seq *seq,
			    const lat_eval_config *cfg)
{
	json_t *obj;
	if (ev->method == LAT_METHOD_EXACT) {
		obj = lat_result_json(&ev->exact, seq);
	} else {
		char text[LAT_MAX_LEN + 1];
		lat_seq_format(seq, text);
		obj = json_pack("{s:s, s:s, s:i, s:i}", "sequence", text, "lattice",
				lat_kind_name(ev->lattice), "length", ev->len, "max_score",
				ev->max_score);
		if (obj && estimate_json(obj, ev, cfg)) {
			json_decref(obj);
			obj = NULL;
		}
	}
	if (obj && (json_object_set_new(obj, "method", json_string(lat_method_name(ev->method))) ||
		    json_object_set_new(obj, "optimum", optimum_json(ev)))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int lat_evaluation_star_counts(const json_t *doc, uint64_t counts[LAT_MAX_SCORE + 1])
{
	const json_t *hist = json_object_get(doc, "histogram");
	size_t n = json_array_size(hist);
	if (!n || n > LAT_MAX_SCORE + 1)
		return -1;
	const char *method = json_string_value(json_object_get(doc, "method"));
	if (method && !strcmp(method, "estimate")) {
		double h[LAT_MAX_SCORE + 1];
		for (size_t i = 0; i < n; i++) {
			const json_t *v = json_array_get(hist, i);
			if (!json_is_number(v) || !(json_number_value(v) >= 0))
				return -1;
			h[i] = json_number_value(v);
		}
		double total = json_number_value(json_object_get(doc, "conformations"));
		lat_star_counts_estimate(h, (int)n, total, (int)n - 1, counts);
		return (int)n;
	}
	memset(counts, 0, sizeof(uint64_t) * (LAT_MAX_SCORE + 1));
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(hist, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return -1;
		counts[i] = (uint64_t)json_integer_value(v);
	}
	return (int)n;
}
