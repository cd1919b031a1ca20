/* stars_json.c - see stars_json.h. */
#include "stars_json.h"

json_t *stars_json(const stars_config *cfg, const char *metric, const int *thresholds,
		   const char *reason)
{
	json_t *obj = json_object();
	if (!obj)
		return NULL;
	json_t *t = thresholds ? json_pack("[iii]", thresholds[0], thresholds[1], thresholds[2])
			       : json_null();
	int bad = json_object_set_new(obj, "strategy",
				      json_string(stars_strategy_name(cfg->strategy))) ||
		  json_object_set_new(obj, "metric", json_string(metric)) ||
		  json_object_set_new(obj, "better", json_string("higher")) ||
		  json_object_set_new(obj, "thresholds", t);
	if (!bad && cfg->strategy == STARS_PERCENTILE)
		bad = json_object_set_new(obj, "fractions",
					  json_pack("[ff]", cfg->one_fraction, cfg->two_fraction));
	if (!bad && !thresholds)
		bad = json_object_set_new(obj, "reason", json_string(reason ? reason : ""));
	if (bad) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}
