/*
 * racetrack_support.h - a helper shared by the racetrack test suites: one
 * generate result of the racetrack kind, through the kind registry exactly
 * as the service and `starforge generate` call it.
 *
 * Include after <cmocka.h> (it fails the test on any refusal).
 */
#ifndef SF_TEST_RACETRACK_SUPPORT_H
#define SF_TEST_RACETRACK_SUPPORT_H

#include <jansson.h>
#include <stdint.h>

#include "kinds.h"

/*
 * The generate result for params_text (JSON; NULL for the defaults), `seed`
 * and `threads`; the caller owns it. Fails the test when the params are
 * refused or the search fails.
 */
static inline json_t *racetrack_generate(const char *params_text, uint64_t seed, int threads)
{
	json_error_t jerr;
	json_t *pj = params_text ? json_loads(params_text, 0, &jerr) : NULL;
	if (params_text && !pj)
		fail_msg("params are not JSON: %s", jerr.text);
	const sf_kind *kind = sf_kind_find("racetrack");
	assert_non_null(kind);
	sf_err err = { 0 };
	void *params = kind->params_parse(pj, &err);
	json_decref(pj);
	if (!params)
		fail_msg("params refused: %s", err.msg);
	sf_gen_opts opts = { .seed = seed, .threads = threads };
	json_t *doc = kind->generate(params, &opts, &err);
	kind->params_free(params);
	if (!doc)
		fail_msg("generate failed: %s", err.msg);
	return doc;
}

#endif
