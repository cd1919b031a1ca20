/*
 * test_http_query.c - the decoding of query keys and values
 * (http_query_decode, server/http.h): '+' and %XX decoded, every bad
 * escape and "%00" kept as written. Expectations written out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../server/http.h"

static const char *const CASES[][2] = {
	{ "", "" },
	{ "plain", "plain" },
	{ "a+b", "a b" },
	{ "%41%62c", "Abc" },
	{ "%e2%82%AC", "\xe2\x82\xac" },
	{ "a%2Fb", "a/b" },          /* a query value may hold '/' */
	{ "%2B+", "+ " },            /* an escaped '+' stays '+' */
	{ "%252B", "%2B" },          /* decoded once, not twice */
	{ "%00", "%00" },            /* never a NUL inside */
	{ "x%00y%01", "x%00y\x01" }, /* only the NUL escape is kept */
	{ "%", "%" },                /* cut short at the end */
	{ "%4", "%4" },
	{ "%zz%4g", "%zz%4g" }, /* not hex */
	{ "100%", "100%" },
	{ "%%41", "%A" },
};

static void test_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
		char out[64];
		memset(out, 'X', sizeof out);
		size_t n = http_query_decode(CASES[i][0], out);
		if (strcmp(out, CASES[i][1]) || n != strlen(CASES[i][1]))
			fail_msg("'%s' decoded to '%s' (%zu bytes), want '%s'", CASES[i][0], out, n,
				 CASES[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
