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
	json_t *hist = json_array();
	json_t *examples = json_object();
	json_t *obj = json_object();
	if (!hist || !examples || !obj)
		goto fail;
	for (int s = 0; s <= res->max_score; s++) {
		if (json_array_append_new(hist, json_integer((json_int_t)res->hist[s])))
			goto fail;
		if (!res->hist[s])
			continue;
		char key[16];
		snprintf(key, sizeof key, "%d", s);
		if (json_object_set_new(examples, key, json_string(res->examples[s])))
			goto fail;
	}
	if (json_object_set_new(obj, "sequence", json_string(text)) ||
	    json_object_set_new(obj, "lattice", json_string(lat_kind_name(res->lattice))) ||
	    json_object_set_new(obj, "length", json_integer(res->len)) ||
	    json_object_set_new(obj, "conformations", json_integer((json_int_t)res->conformations)) ||
	    json_object_set_new(obj, "histogram", hist) ||
	    json_object_set_new(obj, "max_score", json_integer(res->max_score)) ||
	    json_object_set_new(obj, "distinct_scores", json_integer(res->distinct_scores)) ||
	    json_object_set_new(obj, "examples", examples)) {
		/* set_new steals its value even when it fails. */
		json_decref(obj);
		return NULL;
	}
	return obj;
fail:
	json_decref(hist);
	json_decref(examples);
	json_decref(obj);
	return NULL;
}
