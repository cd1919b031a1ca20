/*
 * test_job_request.c - the body of POST /v1/jobs (server/jobs/job_request.h):
 * which problem each bad body gets, and what a good one reads into.
 *
 * The expected details are written out by hand from the messages the
 * handler answered before the parser was factored out of it, so a change
 * of wording shows up here as well as in the integration tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/jobs/job_request.h"

typedef struct bad_case {
	const char *body;
	int status;
	const char *slug;
	const char *title;
	const char *detail; /* exact, or a prefix when `prefix` */
	int prefix;
} bad_case;

static const bad_case BAD[] = {
	{ "", 400, "invalid-json", "Malformed JSON", "the body is not valid JSON: ", 1 },
	{ "{\"kind\":\"lattice\",\"kind\":\"digger\"}", 400, "invalid-json", "Malformed JSON",
	  "the body is not valid JSON: duplicate object key near '\"kind\"' (line 1, column 24)",
	  0 },
	{ "[1]", 400, "invalid-request", "Invalid job request",
	  "the body must be a JSON object with kind, params and seed", 0 },
	{ "{\"kind\":\"lattice\",\"priority\":1}", 400, "invalid-request", "Invalid job request",
	  "unknown field 'priority' (allowed: kind, params, seed)", 0 },
	{ "{\"params\":{}}", 400, "invalid-request", "Invalid job request",
	  "kind must be a string naming a level kind (allowed: lattice, racetrack, digger)", 0 },
	{ "{\"kind\":\"lattice\",\"params\":[]}", 400, "invalid-request", "Invalid job request",
	  "params must be a JSON object", 0 },
	{ "{\"kind\":\"lattice\",\"seed\":9007199254740992}", 400, "invalid-request",
	  "Invalid job request", "seed must be an integer in 0..9007199254740991", 0 },
	{ "{\"kind\":\"lattice\",\"seed\":-1}", 400, "invalid-request", "Invalid job request",
	  "seed must be an integer in 0..9007199254740991", 0 },
	{ "{\"kind\":\"lattice\",\"seed\":1.0}", 400, "invalid-request", "Invalid job request",
	  "seed must be an integer in 0..9007199254740991", 0 },
	{ "{\"kind\":\"maze\"}", 422, "unknown-kind", "Unknown level kind",
	  "kind 'maze' is unknown (allowed: lattice, racetrack, digger)", 0 },
	{ "{\"kind\":\"lattice\",\"params\":{\"length\":99}}", 422, "invalid-params",
	  "Invalid parameters", "params.length", 1 },
	{ "{\"kind\":\"racetrack\",\"params\":{\"px_model\":\"Bad Name\"}}", 422, "invalid-params",
	  "Invalid parameters", "params.px_model", 1 },
	{ "{\"kind\":\"digger\",\"params\":{\"difficulty\":\"extreme\"}}", 422, "invalid-params",
	  "Invalid parameters", "params.difficulty", 1 },
};

static void test_bad_bodies(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
		const bad_case *c = &BAD[i];
		job_request jr;
		job_request_problem p;
		memset(&jr, 0xA5, sizeof jr);
		int rc = jobs_parse_request(c->body, strlen(c->body), &jr, &p);
		if (rc != -1 || p.status != c->status || strcmp(p.slug, c->slug) ||
		    strcmp(p.title, c->title) ||
		    (c->prefix ? strncmp(p.detail, c->detail, strlen(c->detail))
			       : strcmp(p.detail, c->detail)))
			fail_msg("body %s: got rc %d, %d %s \"%s\"", c->body, rc, p.status, p.slug,
				 p.detail);
		/* Nothing is handed over on failure. */
		assert_null(jr.doc);
		assert_null(jr.params);
	}
}

/* The body is `len` bytes, not a C string: a NUL inside is invalid JSON. */
static void test_body_with_nul(void **state)
{
	(void)state;
	static const char body[] = "{\"kind\":\"lattice\"}\0junk";
	job_request jr;
	job_request_problem p;
	assert_int_equal(jobs_parse_request(body, sizeof body - 1, &jr, &p), -1);
	assert_int_equal(p.status, 400);
	assert_string_equal(p.slug, "invalid-json");
	assert_int_equal(jobs_parse_request(body, strlen(body), &jr, &p), 0);
	job_request_clear(&jr);
}

/* A long name is cut where the handler's 512-byte detail cut it. */
static void test_long_detail(void **state)
{
	(void)state;
	char body[2100];
	char kind[2001];
	memset(kind, 'k', sizeof kind - 1);
	kind[sizeof kind - 1] = '\0';
	snprintf(body, sizeof body, "{\"kind\":\"%s\"}", kind);
	job_request jr;
	job_request_problem p;
	assert_int_equal(jobs_parse_request(body, strlen(body), &jr, &p), -1);
	assert_int_equal(p.status, 422);
	assert_int_equal(strlen(p.detail), sizeof p.detail - 1);
	assert_memory_equal(p.detail, "kind 'kkk", 9);
}

static void test_good_bodies(void **state)
{
	(void)state;
	static const char *const kinds[] = { "lattice", "racetrack", "digger" };
	for (size_t i = 0; i < 3; i++) {
		char body[128];
		snprintf(body, sizeof body, "{\"kind\":\"%s\",\"seed\":7,\"params\":{\"count\":2}}",
			 kinds[i]);
		job_request jr;
		job_request_problem p;
		assert_int_equal(jobs_parse_request(body, strlen(body), &jr, &p), 0);
		assert_string_equal(jr.kind->name, kinds[i]);
		assert_non_null(jr.params);
		assert_true(json_is_object(jr.doc));
		assert_ptr_equal(jr.params_js, json_object_get(jr.doc, "params"));
		assert_int_equal(json_integer_value(jr.seed_js), 7);
		job_request_clear(&jr);
		assert_null(jr.doc);
		assert_null(jr.params);
	}
	/* Params and seed are optional. */
	job_request jr;
	job_request_problem p;
	assert_int_equal(jobs_parse_request("{\"kind\":\"digger\"}", 17, &jr, &p), 0);
	assert_null(jr.params_js);
	assert_null(jr.seed_js);
	assert_non_null(jr.params);
	job_request_clear(&jr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_body_with_nul),
		cmocka_unit_test(test_long_detail),
		cmocka_unit_test(test_good_bodies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
