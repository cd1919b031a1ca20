/*
 * test_json_out.c - shortest round-trip reals in JSON output (core/json_out.h).
 *
 * Oracles: strtod (every text reads back as exactly the same double), the
 * definition of "shortest" checked directly (one significant digit fewer,
 * correctly rounded by printf, no longer reads back), decimals as a person
 * writes them (0.2 stays 0.2), and jansson (the rewritten document parses
 * to a value json_equal to the original, strings untouched).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "rng.h"

/* Significant digits in a decimal text ("0.0250" has 3, "1.5e-07" has 2). */
static int significant_digits(const char *text)
{
	const char *p = text;
	if (*p == '-')
		p++;
	while (*p == '0' || *p == '.')
		p++;
	int n = 0, trailing_zeros = 0;
	for (; *p && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.')
			continue;
		n++;
		trailing_zeros = *p == '0' ? trailing_zeros + 1 : 0;
	}
	return n - trailing_zeros > 0 ? n - trailing_zeros : 1;
}

static void test_as_written(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *text;
	} CASES[] = {
		{ 0.2, "0.2" },
		{ 0.1, "0.1" },
		{ 0.05, "0.05" },
		{ 0.25, "0.25" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 100.0, "100.0" },
		{ 2.0, "2.0" },
		{ -0.5, "-0.5" },
		{ 1e-5, "1e-05" },
		{ 1.5e-7, "1.5e-07" },
		{ 123.456, "123.456" },
		{ 1e20, "1e+20" },
		{ 12345678901234567.0, "12345678901234568.0" },
		{ 36603058655753712.0, "36603058655753710.0" },
		{ 0.0, "0.0" },
		{ 5e8, "500000000.0" },
		{ 0.30000000000000004, "0.30000000000000004" },
	};
	for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
		char buf[40];
		int n = sf_json_real_text(CASES[i].v, buf, sizeof buf);
		assert_int_equal(n, (int)strlen(buf));
		assert_string_equal(buf, CASES[i].text);
	}
}

static void test_shortest_random(void **state)
{
	(void)state;
	rng g;
	rng_seed(&g, 12);
	int checked = 0;
	for (int i = 0; i < 200000; i++) {
		double v;
		if (i % 2) {
			uint64_t bits = rng_next(&g);
			memcpy(&v, &bits, sizeof v);
			if (!isfinite(v))
				continue;
		} else {
			/* short decimals, the values people write in params */
			v = (double)(int64_t)(rng_next(&g) % 2000001 - 1000000) /
			    pow(10.0, (double)(rng_next(&g) % 9));
		}
		char buf[40], shorter[400];
		sf_json_real_text(v, buf, sizeof buf);
		assert_true(strtod(buf, NULL) == v);
		assert_non_null(strpbrk(buf, ".e"));
		int digits = significant_digits(buf);
		if (digits > 1) {
			snprintf(shorter, sizeof shorter, "%.*g", digits - 1, v);
			if (strtod(shorter, NULL) == v)
				fail_msg("%s: %s has fewer digits and reads back", buf, shorter);
		}
		checked++;
	}
	assert_true(checked > 150000);
}

static void test_document(void **state)
{
	(void)state;
	json_error_t error;
	const char *in = "{\"rate\":0.2,\"n\":7,\"neg\":-3,\"big\":1e300,\"tiny\":5e-324,"
			 "\"s\":\"0.20000000000000001 \\\" 0.1\",\"list\":[0.1,[2.5,-0.75]],"
			 "\"x\":100.0,\"t\":true,\"z\":null}";
	json_t *doc = json_loads(in, 0, &error);
	assert_non_null(doc);
	char *plain = json_dumps(doc, JSON_COMPACT);
	char *text = sf_json_dumps(doc, JSON_COMPACT);
	assert_non_null(text);
	assert_non_null(strstr(plain, "0.20000000000000001,")); /* what jansson alone writes */
	assert_non_null(strstr(text, "\"rate\":0.2,"));
	assert_non_null(strstr(text, "\"s\":\"0.20000000000000001 \\\" 0.1\""));
	assert_non_null(strstr(text, "\"list\":[0.1,[2.5,-0.75]]"));
	assert_non_null(strstr(text, "\"n\":7,"));
	assert_non_null(strstr(text, "\"x\":100.0,"));
	assert_non_null(strstr(text, "\"big\":1e+300,"));
	assert_non_null(strstr(text, "\"tiny\":5e-324,"));
	json_t *back = json_loads(text, 0, &error);
	assert_non_null(back);
	assert_true(json_equal(doc, back));
	assert_true(json_is_real(json_object_get(back, "x")));
	free(plain);
	free(text);
	json_decref(back);
	json_decref(doc);
	assert_null(sf_json_dumps(NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_written),
		cmocka_unit_test(test_shortest_random),
		cmocka_unit_test(test_document),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
