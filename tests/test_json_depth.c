/*
 * test_json_depth.c - the bracket pre-scan (core/json_depth.h).
 *
 * A table of texts with their depths, written by hand (strings holding
 * brackets and escaped quotes, closers without openers, NUL bytes, texts cut
 * short); the early stop at limit + 1; and jansson as the oracle: for
 * random valid documents the scan must give the depth of the parsed value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json_depth.h"
#include "rng.h"

static const struct {
	const char *text;
	int depth;
} CASES[] = {
	{ "", 0 },
	{ "42", 0 },
	{ "\"[[[\"", 0 },
	{ "[]", 1 },
	{ "{}", 1 },
	{ "[[1]]", 2 },
	{ "{\"a\":[{\"b\":[]}]}", 4 },
	{ "[[],[],[]]", 2 },
	{ "[\"]]]\", [\"{\"]]", 2 },
	{ "[\"\\\"[\", [1]]", 2 }, /* an escaped quote does not end the string */
	{ "[\"\\\\\", [1]]", 2 },  /* an escaped backslash does not escape the quote */
	{ "]]]]][", 1 },           /* closers without openers are ignored */
	{ "[[[", 3 },              /* cut short: the depth reached */
	{ "[\"[[[[", 1 },          /* an unterminated string ends the scan */
	{ "{\"k\":\"}}}}\"}", 1 },
	{ "[1,[2,[3,[4]]],[5]]", 4 },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
		int d = sf_json_depth(CASES[i].text, strlen(CASES[i].text), 100);
		if (d != CASES[i].depth)
			fail_msg("'%s': depth %d, expected %d", CASES[i].text, d, CASES[i].depth);
	}
	assert_int_equal(sf_json_depth(NULL, 0, 32), 0);
}

/* NUL bytes are characters like any other: the text's length rules. */
static void test_nul_bytes(void **state)
{
	(void)state;
	static const char text[] = "[\0[\0[\0]";
	assert_int_equal(sf_json_depth(text, sizeof text - 1, 32), 3);
	static const char quoted[] = "[\"\0\"[]]";
	assert_int_equal(sf_json_depth(quoted, sizeof quoted - 1, 32), 2);
}

/* The limit itself passes; one more level returns limit + 1 and stops there. */
static void test_limit(void **state)
{
	(void)state;
	enum { N = 100000 };
	char *text = malloc(2 * N);
	assert_non_null(text);
	memset(text, '[', N);
	memset(text + N, ']', N);
	assert_int_equal(sf_json_depth(text, 2 * N, SF_JSON_MAX_DEPTH), SF_JSON_MAX_DEPTH + 1);
	assert_int_equal(sf_json_depth(text, 2 * N, N), N);
	/* Exactly the limit: [[...]] with SF_JSON_MAX_DEPTH levels. */
	size_t at = N - SF_JSON_MAX_DEPTH;
	assert_int_equal(sf_json_depth(text + at, 2 * SF_JSON_MAX_DEPTH, SF_JSON_MAX_DEPTH),
			 SF_JSON_MAX_DEPTH);
	assert_int_equal(sf_json_depth(text + at - 1, 2 * SF_JSON_MAX_DEPTH + 2, SF_JSON_MAX_DEPTH),
			 SF_JSON_MAX_DEPTH + 1);
	/* Depth is nesting, not the number of brackets: many siblings stay at 1. */
	for (size_t i = 0; i < N; i++)
		memcpy(text + 2 * i, "[]", 2);
	assert_int_equal(sf_json_depth(text, 2 * N, SF_JSON_MAX_DEPTH), 1);
	free(text);
}

/* ---- jansson as the oracle ---- */

static int depth_of(const json_t *v)
{
	int deepest = 0;
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			int d = depth_of(x);
			deepest = d > deepest ? d : deepest;
		}
		return deepest + 1;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
		{
			int d = depth_of(x);
			deepest = d > deepest ? d : deepest;
		}
		return deepest + 1;
	}
	return 0;
}

/* Strings that try to fool the scan: brackets, quotes and backslashes. */
static const char *const TRICKY[] = { "[", "]", "{", "}", "\"", "\\", "\\\"[", "a\\]b", "" };

static json_t *random_value(rng *r, int levels)
{
	uint64_t pick = rng_below(r, levels > 0 ? 6 : 3);
	if (pick == 0)
		return json_integer((json_int_t)rng_below(r, 1000));
	if (pick == 1)
		return json_string(TRICKY[rng_below(r, sizeof TRICKY / sizeof TRICKY[0])]);
	if (pick == 2)
		return json_null();
	int n = (int)rng_below(r, 4);
	if (pick == 3 || pick == 4) {
		json_t *a = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(a, random_value(r, levels - 1));
		return a;
	}
	json_t *o = json_object();
	for (int i = 0; i < n; i++)
		json_object_set_new(o, TRICKY[rng_below(r, sizeof TRICKY / sizeof TRICKY[0])],
				    random_value(r, levels - 1));
	return o;
}

static void test_agrees_with_jansson(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 20261130);
	for (int i = 0; i < 2000; i++) {
		json_t *v = random_value(&r, (int)rng_below(&r, 12));
		char *text =
			json_dumps(v, JSON_ENCODE_ANY | (i % 2 ? JSON_COMPACT : JSON_INDENT(1)));
		assert_non_null(text);
		json_t *back = json_loads(text, JSON_DECODE_ANY, NULL);
		assert_non_null(back);
		int want = depth_of(back);
		int got = sf_json_depth(text, strlen(text), 100);
		if (got != want)
			fail_msg("%s: scan %d, jansson %d", text, got, want);
		json_decref(back);
		json_decref(v);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_agrees_with_jansson),
	};
	return cmocka_run_group_tests_name("json_depth", tests, NULL, NULL);
}
