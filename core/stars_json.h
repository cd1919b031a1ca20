/* stars_json.h - JSON codec for star thresholds, shared by every kind. */
#ifndef SF_STARS_JSON_H
#define SF_STARS_JSON_H

#include <jansson.h>

#include "stars.h"

/*
 * The stars object of a level: {"strategy", "metric", "better": "higher",
 * "thresholds": [one, two, three]}. When `thresholds` is NULL (the
 * distribution could not carry three stars) "thresholds" is null and
 * "reason" holds `reason`. Returns a new reference, or NULL when out of memory.
 */
json_t *stars_json(const stars_config *cfg, const char *metric, const int *thresholds,
		   const char *reason);

#endif
