/*
 * test_routes.c - the route table (server/http/routes.h): matching, parameters,
 * 404 and 405 with the Allow list, percent-decoding and its limits.
 *
 * The table below has the service's shape. Every expectation is written out
 * by hand from the rules in routes.h and routes.c; in particular the Allow
 * list is in table order, without duplicates, with HEAD right after GET
 * ("GET, HEAD, DELETE"), and a HEAD request matches a GET route.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/http/routes.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const route TABLE[] = {
	{ "GET", "/v1/jobs", "jobs.list", NULL, NULL },
	{ "POST", "/v1/jobs", "jobs.create", NULL, NULL },
	{ "GET", "/v1/jobs/{id}", "jobs.get", NULL, NULL },
	{ "DELETE", "/v1/jobs/{id}", "jobs.cancel", NULL, NULL },
	{ "GET", "/v1/jobs/{id}/events", "jobs.events", NULL, NULL },
	{ "GET", "/v1/levels", "levels.list", NULL, NULL },
	/* Before "{id}": otherwise "{id}" would take "abc.svg" whole. */
	{ "GET", "/v1/levels/{id}.svg", "levels.svg", NULL, NULL },
	{ "GET", "/v1/levels/{id}", "levels.get", NULL, NULL },
	{ "GET", "/v1/evaluations/{lattice}/{sequence}", "evaluations.get", NULL, NULL },
	{ "GET", "/healthz", "healthz", NULL, NULL },
	{ "GET", "/readyz", "readyz", NULL, NULL },
	{ "GET", "/metrics", "metrics", NULL, NULL },
	{ "GET", "/openapi.yaml", "openapi", NULL, NULL },
};

typedef struct route_case {
	const char *method;
	const char *path;
	const char *want;                        /* route name, or NULL for none */
	int status;                              /* 200, 404 or 405 */
	const char *allow;                       /* on 405 */
	const char *params[ROUTE_MAX_PARAMS][2]; /* name, value; all of them */
} route_case;

static const route_case CASES[] = {
	/* Plain matches, and HEAD through GET. */
	{ "GET", "/v1/jobs", "jobs.list", 200, "", { { 0 } } },
	{ "HEAD", "/v1/jobs", "jobs.list", 200, "", { { 0 } } },
	{ "POST", "/v1/jobs", "jobs.create", 200, "", { { 0 } } },
	{ "GET", "/v1/jobs/job_0123abcd", "jobs.get", 200, "", { { "id", "job_0123abcd" } } },
	{ "HEAD", "/v1/jobs/job_1", "jobs.get", 200, "", { { "id", "job_1" } } },
	{ "DELETE", "/v1/jobs/job_1", "jobs.cancel", 200, "", { { "id", "job_1" } } },
	{ "GET", "/v1/jobs/job_1/events", "jobs.events", 200, "", { { "id", "job_1" } } },
	{ "GET", "/v1/levels", "levels.list", 200, "", { { 0 } } },
	{ "GET", "/v1/levels/lvl_9", "levels.get", 200, "", { { "id", "lvl_9" } } },
	{ "GET",
	  "/v1/evaluations/square/HPHPPHHPHPPHPHHP",
	  "evaluations.get",
	  200,
	  "",
	  { { "lattice", "square" }, { "sequence", "HPHPPHHPHPPHPHHP" } } },
	{ "GET", "/healthz", "healthz", 200, "", { { 0 } } },
	{ "GET", "/readyz", "readyz", 200, "", { { 0 } } },
	{ "GET", "/metrics", "metrics", 200, "", { { 0 } } },
	{ "GET", "/openapi.yaml", "openapi", 200, "", { { 0 } } },

	/* Suffix parameters: table order decides, the value must be non-empty. */
	{ "GET", "/v1/levels/lvl_9.svg", "levels.svg", 200, "", { { "id", "lvl_9" } } },
	{ "GET", "/v1/levels/a.svg.svg", "levels.svg", 200, "", { { "id", "a.svg" } } },
	{ "GET", "/v1/levels/.svg", "levels.get", 200, "", { { "id", ".svg" } } },
	{ "GET", "/v1/levels/a.SVG", "levels.get", 200, "", { { "id", "a.SVG" } } },
	{ "GET", "/v1/levels/a.sv", "levels.get", 200, "", { { "id", "a.sv" } } },
	{ "GET", "/v1/levels/a%2Esvg", "levels.svg", 200, "", { { "id", "a" } } },

	/* The query string is not part of the path, and its escapes are not checked. */
	{ "GET", "/v1/jobs?limit=10&state=queued", "jobs.list", 200, "", { { 0 } } },
	{ "GET", "/v1/jobs/j1?x=%2F%00%G", "jobs.get", 200, "", { { "id", "j1" } } },
	{ "GET", "/v1/jobs/?x=1", NULL, 404, "", { { 0 } } },

	/* 405 with the Allow list. */
	{ "PUT", "/v1/jobs", NULL, 405, "GET, HEAD, POST", { { 0 } } },
	{ "DELETE", "/v1/jobs", NULL, 405, "GET, HEAD, POST", { { 0 } } },
	{ "POST", "/v1/jobs/job_1", NULL, 405, "GET, HEAD, DELETE", { { 0 } } },
	{ "PATCH", "/v1/jobs/job_1", NULL, 405, "GET, HEAD, DELETE", { { 0 } } },
	{ "DELETE", "/v1/jobs/job_1/events", NULL, 405, "GET, HEAD", { { 0 } } },
	{ "POST", "/v1/levels/x.svg", NULL, 405, "GET, HEAD", { { 0 } } },
	{ "POST", "/healthz", NULL, 405, "GET, HEAD", { { 0 } } },
	{ "OPTIONS", "/metrics", NULL, 405, "GET, HEAD", { { 0 } } },
	/* Methods are case-sensitive (RFC 9110, 9.1). */
	{ "get", "/v1/jobs", NULL, 405, "GET, HEAD, POST", { { 0 } } },
	/* An unknown path is a 404 whatever the method. */
	{ "POST", "/nope", NULL, 404, "", { { 0 } } },
	{ "DELETE", "/v1/jobs/", NULL, 404, "", { { 0 } } },

	/* 404: trailing slash, empty segments, extra segments, prefixes. */
	{ "GET", "/v1/jobs/", NULL, 404, "", { { 0 } } },
	{ "GET", "/healthz/", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/job_1/", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/job_1/events/", NULL, 404, "", { { 0 } } },
	{ "GET", "//v1/jobs", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1//jobs", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs//events", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/evaluations/square//", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/evaluations//HPPH", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/evaluations/square", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/evaluations/square/HPPH/x", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/job_1/events/x", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/job_1/eventsx", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/", NULL, 404, "", { { 0 } } },
	{ "GET", "/v", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/job", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobsx", NULL, 404, "", { { 0 } } },
	{ "GET", "/V1/jobs", NULL, 404, "", { { 0 } } },
	{ "GET", "/healthzz", NULL, 404, "", { { 0 } } },
	{ "GET", "/", NULL, 404, "", { { 0 } } },
	{ "GET", "", NULL, 404, "", { { 0 } } },
	{ "GET", "v1/jobs", NULL, 404, "", { { 0 } } },
	{ "GET", "*", NULL, 404, "", { { 0 } } },

	/* Percent-decoding, of parameters and literals alike. */
	{ "GET", "/v1/jobs/%48i", "jobs.get", 200, "", { { "id", "Hi" } } },
	{ "GET", "/v1/jobs/%4a%4A", "jobs.get", 200, "", { { "id", "JJ" } } },
	{ "GET", "/v1/jobs/100%25", "jobs.get", 200, "", { { "id", "100%" } } },
	{ "GET", "/v1/jobs/%2548", "jobs.get", 200, "", { { "id", "%48" } } }, /* decoded once */
	{ "GET", "/v1/jobs/a%20b", "jobs.get", 200, "", { { "id", "a b" } } },
	{ "GET", "/v1/jobs/a+b", "jobs.get", 200, "", { { "id", "a+b" } } }, /* '+' is not ' ' */
	{ "GET", "/v1/%6Aobs", "jobs.list", 200, "", { { 0 } } },
	{ "GET", "/%68ealthz", "healthz", 200, "", { { 0 } } },
	{ "POST", "/%68ealthz", NULL, 405, "GET, HEAD", { { 0 } } },
	{ "GET", "/v1/jobs/%C3%A9t%C3%A9", "jobs.get", 200, "", { { "id", "\xC3\xA9t\xC3\xA9" } } },

	/* Rejected escapes: the path matches nothing, even for a 405. */
	{ "GET", "/v1/jobs/a%2Fb", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/a%2fb", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1%2Fjobs", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/a%00", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/%G1", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/%1G", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/abc%", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/abc%4", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/%%41", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs/%", NULL, 404, "", { { 0 } } },
	{ "GET", "/v1/jobs%", NULL, 404, "", { { 0 } } },
	{ "PUT", "/v1/jobs/a%2Fb", NULL, 404, "", { { 0 } } },
	/* A bad escape anywhere in the path, even in a segment a route would not look at. */
	{ "GET", "/v1/jobs/ok/%ZZ", NULL, 404, "", { { 0 } } },
};

static int nparams_of(const route_case *c)
{
	int n = 0;
	while (n < ROUTE_MAX_PARAMS && c->params[n][0])
		n++;
	return n;
}

static void test_table(void **state)
{
	(void)state;
	for (int i = 0; i < ARRAY_LEN(CASES); i++) {
		const route_case *c = &CASES[i];
		route_match m;
		memset(&m, 0x5a, sizeof m);
		int status = -1;
		char allow[64];
		memset(allow, 'x', sizeof allow);
		const route *r = route_find(TABLE, ARRAY_LEN(TABLE), c->method, c->path, &m,
					    &status, allow, sizeof allow);
		const char *got = r ? r->name : "(none)";
		if (c->want ? (!r || strcmp(got, c->want) != 0) : r != NULL)
			fail_msg("case %d: %s %s: route %s, want %s", i, c->method, c->path, got,
				 c->want ? c->want : "(none)");
		if (status != c->status)
			fail_msg("case %d: %s %s: status %d, want %d", i, c->method, c->path,
				 status, c->status);
		if (strcmp(allow, c->allow) != 0)
			fail_msg("case %d: %s %s: Allow \"%s\", want \"%s\"", i, c->method, c->path,
				 allow, c->allow);
		int want_n = nparams_of(c);
		if (m.nparams != want_n)
			fail_msg("case %d: %s %s: %d params, want %d", i, c->method, c->path,
				 m.nparams, want_n);
		for (int k = 0; k < want_n; k++) {
			const char *v = route_param(&m, c->params[k][0]);
			if (!v || strcmp(v, c->params[k][1]) != 0)
				fail_msg("case %d: %s %s: param %s = \"%s\", want \"%s\"", i,
					 c->method, c->path, c->params[k][0], v ? v : "(null)",
					 c->params[k][1]);
			/* The params come in pattern order, values[] agreeing with lookup. */
			assert_ptr_equal(v, m.values[k]);
		}
	}
}

/* A path "/v1/<prefix><n times 'a' or "%61"><suffix>". */
static char *long_path(const char *prefix, size_t n, int encoded, const char *suffix)
{
	size_t cap = strlen(prefix) + n * 3 + strlen(suffix) + 1;
	char *p = malloc(cap);
	assert_non_null(p);
	size_t len = (size_t)snprintf(p, cap, "%s", prefix);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(p + len, cap - len, "%s", encoded ? "%61" : "a");
	snprintf(p + len, cap - len, "%s", suffix);
	return p;
}

static void check_long(const char *prefix, size_t n, int encoded, const char *suffix,
		       const char *want)
{
	char *path = long_path(prefix, n, encoded, suffix);
	route_match m;
	int status = 0;
	char allow[64];
	const route *r =
		route_find(TABLE, ARRAY_LEN(TABLE), "GET", path, &m, &status, allow, sizeof allow);
	if (!want) {
		if (r)
			fail_msg("%zu-byte value (%s): matched %s", n,
				 encoded ? "encoded" : "plain", r->name);
		assert_int_equal(status, 404);
		assert_int_equal(m.nparams, 0);
	} else {
		if (!r || strcmp(r->name, want) != 0)
			fail_msg("%zu-byte value (%s): got %s, want %s", n,
				 encoded ? "encoded" : "plain", r ? r->name : "(none)", want);
		const char *id = route_param(&m, "id");
		assert_non_null(id);
		assert_int_equal(strlen(id), n);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(id[i], 'a');
	}
	free(path);
}

/* A value has at most ROUTE_MAX_VALUE - 1 bytes once decoded; longer ones match nothing. */
static void test_long_values(void **state)
{
	(void)state;
	const size_t max = ROUTE_MAX_VALUE - 1;
	for (int enc = 0; enc <= 1; enc++) {
		check_long("/v1/jobs/", max, enc, "", "jobs.get");
		check_long("/v1/jobs/", max + 1, enc, "", NULL);
		check_long("/v1/jobs/", 10000, enc, "", NULL);
		check_long("/v1/levels/", max, enc, ".svg", "levels.svg");
		/* Too long for levels.svg; levels.get would need max + 5 bytes. */
		check_long("/v1/levels/", max + 1, enc, ".svg", NULL);
		/* A long segment where a literal is expected is just a mismatch. */
		check_long("/v1/", 10000, enc, "/x", NULL);
	}
}

/* Patterns with more parameters than route_match holds never match. */
static void test_too_many_params(void **state)
{
	(void)state;
	const route table[] = {
		{ "GET", "/{a}/{b}/{c}/{d}/{e}", "five", NULL, NULL },
		{ "GET", "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}", "nine", NULL, NULL },
		{ "GET", "/{a}/{b}/{c}/{d}", "four", NULL, NULL },
		{ "GET", "/x/{b}/{c}/{d}/{e}", "fallback", NULL, NULL },
	};
	route_match m;
	int status = 0;
	char allow[64];

	const route *r = route_find(table, 4, "GET", "/1/2/3/4", &m, &status, allow, sizeof allow);
	assert_non_null(r);
	assert_string_equal(r->name, "four");
	assert_int_equal(m.nparams, 4);
	assert_string_equal(route_param(&m, "a"), "1");
	assert_string_equal(route_param(&m, "d"), "4");

	r = route_find(table, 4, "GET", "/1/2/3/4/5", &m, &status, allow, sizeof allow);
	assert_null(r);
	assert_int_equal(status, 404);
	assert_int_equal(m.nparams, 0);

	r = route_find(table, 4, "GET", "/1/2/3/4/5/6/7/8/9", &m, &status, allow, sizeof allow);
	assert_null(r);
	assert_int_equal(status, 404);

	/* The oversized pattern is skipped, not fatal: the next one still matches. */
	r = route_find(table, 4, "GET", "/x/2/3/4/5", &m, &status, allow, sizeof allow);
	assert_non_null(r);
	assert_string_equal(r->name, "fallback");
	assert_string_equal(route_param(&m, "e"), "5");
	assert_null(route_param(&m, "a"));

	/* Nor does it count towards a 405. */
	r = route_find(table, 3, "POST", "/1/2/3/4/5", &m, &status, allow, sizeof allow);
	assert_null(r);
	assert_int_equal(status, 404);
}

/* Malformed patterns match nothing. */
static void test_malformed_patterns(void **state)
{
	(void)state;
	const route table[] = {
		{ "GET", "{id}", "no-slash", NULL, NULL },
		{ "GET", "/{id", "unterminated", NULL, NULL },
		{ "GET", "/{}", "empty-name", NULL, NULL },
		{ "GET", "/{a{b}", "brace-in-name", NULL, NULL },
		{ "GET", NULL, "null-pattern", NULL, NULL },
		{ NULL, "/x", "null-method", NULL, NULL },
		{ "GET", "/ok", "ok", NULL, NULL },
	};
	const char *paths[] = { "/x", "/{id", "/{}", "/{a{b}", "/anything" };
	route_match m;
	int status = 0;
	for (int i = 0; i < ARRAY_LEN(paths); i++) {
		const route *r =
			route_find(table, ARRAY_LEN(table), "GET", paths[i], &m, &status, NULL, 0);
		if (r)
			fail_msg("%s matched %s", paths[i], r->name);
		assert_int_equal(status, 404);
	}
	const route *r = route_find(table, ARRAY_LEN(table), "GET", "/ok", &m, &status, NULL, 0);
	assert_non_null(r);
	assert_string_equal(r->name, "ok");
}

/* Allow: table order, no duplicates, HEAD after GET, truncated only at whole entries. */
static void test_allow_list(void **state)
{
	(void)state;
	const route table[] = {
		{ "GET", "/x", "x.get", NULL, NULL },
		{ "GET", "/x", "x.get2", NULL, NULL },
		{ "HEAD", "/x", "x.head", NULL, NULL },
		{ "POST", "/x", "x.post", NULL, NULL },
		{ "POST", "/{any}", "any.post", NULL, NULL },
		{ "HEAD", "/y", "y.head", NULL, NULL },
		{ "PUT", "/y", "y.put", NULL, NULL },
		{ "GET", "/y", "y.get", NULL, NULL },
	};
	const size_t n = ARRAY_LEN(table);
	int status = 0;
	char allow[64];

	assert_null(route_find(table, n, "DELETE", "/x", NULL, &status, allow, sizeof allow));
	assert_int_equal(status, 405);
	assert_string_equal(allow, "GET, HEAD, POST");

	/*
	 * An explicit HEAD route keeps its table place and GET does not add it
	 * again; "/{any}" comes first in the table.
	 */
	assert_null(route_find(table, n, "DELETE", "/y", NULL, &status, allow, sizeof allow));
	assert_int_equal(status, 405);
	assert_string_equal(allow, "POST, HEAD, PUT, GET");

	/* First match wins; HEAD takes the first GET or HEAD route. */
	const route *r = route_find(table, n, "GET", "/x", NULL, &status, allow, sizeof allow);
	assert_string_equal(r->name, "x.get");
	assert_int_equal(status, 200);
	assert_string_equal(allow, "");
	r = route_find(table, n, "HEAD", "/x", NULL, &status, NULL, 0);
	assert_string_equal(r->name, "x.get");
	r = route_find(table, n, "HEAD", "/y", NULL, &status, NULL, 0);
	assert_string_equal(r->name, "y.head");

	/* Truncation: "GET, HEAD, POST" needs 16 bytes. */
	struct {
		size_t len;
		const char *want;
	} cuts[] = { { 16, "GET, HEAD, POST" },
		     { 15, "GET, HEAD" },
		     { 10, "GET, HEAD" },
		     { 9, "GET" },
		     { 4, "GET" },
		     { 3, "" },
		     { 1, "" } };
	for (int i = 0; i < ARRAY_LEN(cuts); i++) {
		memset(allow, 'x', sizeof allow);
		status = 0;
		assert_null(route_find(table, n, "PUT", "/x", NULL, &status, allow, cuts[i].len));
		assert_int_equal(status, 405);
		if (strcmp(allow, cuts[i].want) != 0)
			fail_msg("allow_len %zu: \"%s\", want \"%s\"", cuts[i].len, allow,
				 cuts[i].want);
		assert_int_equal(allow[cuts[i].len], 'x'); /* nothing written past the end */
	}

	/* After the first entry that does not fit, shorter ones are not squeezed in. */
	const route wide[] = {
		{ "GET", "/w", "w.get", NULL, NULL },
		{ "OPTIONS", "/w", "w.options", NULL, NULL },
		{ "PUT", "/w", "w.put", NULL, NULL },
	};
	assert_null(route_find(wide, 3, "POST", "/w", NULL, &status, allow, sizeof allow));
	assert_string_equal(allow, "GET, HEAD, OPTIONS, PUT");
	assert_null(route_find(wide, 3, "POST", "/w", NULL, &status, allow, 16));
	assert_int_equal(status, 405);
	assert_string_equal(allow, "GET, HEAD");

	/* No buffer at all: the status is still right. */
	assert_null(route_find(table, n, "PUT", "/x", NULL, &status, NULL, 0));
	assert_int_equal(status, 405);
	/* A non-NULL buffer with allow_len 0 is left alone. */
	memset(allow, 'x', sizeof allow);
	assert_null(route_find(table, n, "PUT", "/x", NULL, &status, allow, 0));
	assert_int_equal(allow[0], 'x');
}

/* The degenerate arguments: NULL table, NULL method or path, NULL outputs. */
static void test_null_arguments(void **state)
{
	(void)state;
	route_match m;
	int status = 0;
	char allow[16] = "junk";
	assert_null(route_find(NULL, 0, "GET", "/healthz", &m, &status, allow, sizeof allow));
	assert_int_equal(status, 404);
	assert_string_equal(allow, "");
	assert_null(route_find(TABLE, ARRAY_LEN(TABLE), NULL, "/healthz", &m, &status, NULL, 0));
	assert_int_equal(status, 404);
	assert_null(route_find(TABLE, ARRAY_LEN(TABLE), "GET", NULL, &m, &status, NULL, 0));
	assert_int_equal(status, 404);
	const route *r =
		route_find(TABLE, ARRAY_LEN(TABLE), "GET", "/v1/jobs/j", NULL, NULL, NULL, 0);
	assert_non_null(r);
	assert_string_equal(r->name, "jobs.get");
	/* Nothing matches in an empty prefix of the table. */
	assert_null(route_find(TABLE, 2, "GET", "/healthz", &m, &status, NULL, 0));
	assert_int_equal(status, 404);
}

/* A route's arg reaches the match; a miss leaves none. */
static void test_route_arg(void **state)
{
	(void)state;
	static const int one = 1, two = 2;
	const route table[] = {
		{ "POST", "/v1/a", "a.upload", NULL, &one },
		{ "GET", "/v1/a/{name}", "a.get", NULL, &two },
	};
	route_match m;
	int status = 0;
	assert_non_null(route_find(table, 2, "GET", "/v1/a/x", &m, &status, NULL, 0));
	assert_ptr_equal(m.arg, &two);
	assert_non_null(route_find(table, 2, "POST", "/v1/a", &m, &status, NULL, 0));
	assert_ptr_equal(m.arg, &one);
	assert_null(route_find(table, 2, "GET", "/v1/a", &m, &status, NULL, 0));
	assert_int_equal(status, 405);
	assert_null(m.arg);
}

static void test_route_param(void **state)
{
	(void)state;
	route_match m;
	int status = 0;
	const route *r = route_find(TABLE, ARRAY_LEN(TABLE), "GET", "/v1/evaluations/cubic/HPH", &m,
				    &status, NULL, 0);
	assert_non_null(r);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(route_param(&m, "lattice"), "cubic");
	assert_string_equal(route_param(&m, "sequence"), "HPH");
	/* Names are whole: no prefixes, no extensions, no braces. */
	assert_null(route_param(&m, "lat"));
	assert_null(route_param(&m, "latticex"));
	assert_null(route_param(&m, "lattice}"));
	assert_null(route_param(&m, "{lattice}"));
	assert_null(route_param(&m, "id"));
	assert_null(route_param(&m, ""));
	assert_null(route_param(&m, NULL));
	assert_null(route_param(NULL, "lattice"));

	/* The suffix is not part of the name. */
	r = route_find(TABLE, ARRAY_LEN(TABLE), "GET", "/v1/levels/L.svg", &m, &status, NULL, 0);
	assert_non_null(r);
	assert_string_equal(route_param(&m, "id"), "L");
	assert_null(route_param(&m, "id.svg"));

	/* A failed lookup leaves no parameters behind. */
	assert_null(route_find(TABLE, ARRAY_LEN(TABLE), "GET", "/nope", &m, &status, NULL, 0));
	assert_int_equal(m.nparams, 0);
	assert_null(route_param(&m, "id"));
}

/* A root pattern "/" matches "/" only. */
static void test_root(void **state)
{
	(void)state;
	const route table[] = { { "GET", "/", "root", NULL, NULL } };
	int status = 0;
	const route *r = route_find(table, 1, "GET", "/", NULL, &status, NULL, 0);
	assert_non_null(r);
	assert_int_equal(status, 200);
	assert_null(route_find(table, 1, "GET", "//", NULL, &status, NULL, 0));
	assert_int_equal(status, 404);
	assert_null(route_find(table, 1, "GET", "/x", NULL, &status, NULL, 0));
	assert_int_equal(status, 404);
	assert_non_null(route_find(table, 1, "GET", "/?q", NULL, &status, NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_long_values),
		cmocka_unit_test(test_too_many_params),
		cmocka_unit_test(test_malformed_patterns),
		cmocka_unit_test(test_allow_list),
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_route_arg),
		cmocka_unit_test(test_route_param),
		cmocka_unit_test(test_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
