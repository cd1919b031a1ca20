/*
 * test_http_query.c - the pure parts of server/http/http.h: the decoding of
 * query keys and values (http_query_decode: '+' and %XX decoded, every
 * bad escape and "%00" kept as written; expectations written out by hand)
 * and which X-Request-Id values a client may choose
 * (http_request_id_valid).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../server/http/http.h"

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

static void test_request_id(void **state)
{
	(void)state;
	static const char *const good[] = { "a",
					    "0",
					    "abc-DEF_123.4:5",
					    "req:42",
					    "-",
					    "...",
					    "550e8400-e29b-41d4-a716-446655440000" };
	static const char *const bad[] = { "",    "a b",  "a\nb", "a\x1b", "a\x7f", "caf\xc3\xa9",
					   "a/b", "a\"b", "a,b",  "a;b",   "a=b",   "a+b",
					   "a%20" };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (!http_request_id_valid(good[i]))
			fail_msg("'%s' should be a valid request id", good[i]);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (http_request_id_valid(bad[i]))
			fail_msg("'%s' should not be a valid request id", bad[i]);
	assert_false(http_request_id_valid(NULL));
	char id[HTTP_REQUEST_ID_MAX + 2];
	memset(id, 'x', sizeof id);
	id[HTTP_REQUEST_ID_MAX] = '\0';
	assert_true(http_request_id_valid(id)); /* 128: the longest */
	id[HTTP_REQUEST_ID_MAX] = 'x';
	id[HTTP_REQUEST_ID_MAX + 1] = '\0';
	assert_false(http_request_id_valid(id)); /* 129 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_request_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
