/*
 * lattice_json.c - the JSON codec of an evaluation (jansson is allowed in
 * core for codecs only; the computation never sees a json_t).
 */
#include "lattice_json.h"

#include <stdio.h>

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
