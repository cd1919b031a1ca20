/*
 * test_cors.c - the allowed browser origins (server/http/cors.h): what a list
 * accepts and refuses, and which Origin header gets which
 * Access-Control-Allow-Origin value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../server/http/cors.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct list_case {
	const char *list;
	const char *error; /* NULL: accepted; else a part of the message */
} list_case;

static const list_case LISTS[] = {
	{ "https://play.example", NULL },
	{ "http://127.0.0.1:5173", NULL },
	{ "http://[::1]:8080", NULL },
	{ "HTTPS://Play.Example", NULL },
	{ "app+x.y-z://host_1~", NULL },
	{ "*", NULL },
	{ " https://a.example , http://b.example:1,,*", NULL },
	{ "", "the list of origins is empty" },
	{ " , ,", "the list of origins is empty" },
	{ "null", "origin 'null' is refused" },
	{ "https://play.example/", "'https://play.example/' is not an origin" },
	{ "https://play.example/app", "is not an origin" },
	{ "play.example", "is not an origin" },
	{ "https://", "is not an origin" },
	{ "https://a.example:", "is not an origin" },
	{ "https://a.example:65536", "is not an origin" },
	{ "https://a.example:1234567", "is not an origin" },
	{ "https://user@a.example", "is not an origin" },
	{ "https://a.example?x", "is not an origin" },
	{ "https://[::1", "is not an origin" },
	{ "https://[]", "is not an origin" },
	{ "1http://a.example", "is not an origin" },
	{ "**", "is not an origin" },
	{ "https://a.example, ftp//b", "'ftp//b' is not an origin" },
};

static void test_lists(void **state)
{
	(void)state;
	for (int i = 0; i < ARRAY_LEN(LISTS); i++) {
		sf_err err = { 0 };
		cors_policy *p = cors_parse(LISTS[i].list, &err);
		if (!LISTS[i].error && !p)
			fail_msg("case %d '%s': %s", i, LISTS[i].list, err.msg);
		if (LISTS[i].error && p)
			fail_msg("case %d '%s' was accepted", i, LISTS[i].list);
		if (LISTS[i].error && !strstr(err.msg, LISTS[i].error))
			fail_msg("case %d: '%s' does not say '%s'", i, err.msg, LISTS[i].error);
		cors_free(p);
	}
}

static void test_allow(void **state)
{
	(void)state;
	sf_err err = { 0 };
	cors_policy *p = cors_parse("https://Play.Example, http://localhost:3000", &err);
	assert_non_null(p);
	assert_false(cors_any(p));
	assert_string_equal(cors_allow(p, "https://play.example"), "https://play.example");
	assert_string_equal(cors_allow(p, "HTTPS://PLAY.EXAMPLE"), "https://play.example");
	assert_string_equal(cors_allow(p, "http://localhost:3000"), "http://localhost:3000");
	const char *refused[] = {
		NULL,
		"",
		"null",
		"http://play.example", /* another scheme */
		"https://play.example:443",
		"https://play.example.evil",
		"https://evil-play.example",
		"https://play.exampl",
		"http://localhost:30000",
		"http://localhost:300",
		"http://localhost",
	};
	for (int i = 0; i < ARRAY_LEN(refused); i++)
		if (cors_allow(p, refused[i]))
			fail_msg("'%s' was allowed", refused[i] ? refused[i] : "(none)");

	/* A repeated option adds to the list; a bad one leaves it as it was. */
	assert_int_equal(cors_add(p, "https://b.example,https://play.example", &err), 0);
	assert_string_equal(cors_allow(p, "https://b.example"), "https://b.example");
	assert_int_equal(cors_add(p, "https://c.example, bad", &err), SF_EINVAL);
	assert_null(cors_allow(p, "https://c.example"));
	char text[256];
	cors_describe(p, text, sizeof text);
	assert_string_equal(text, "https://play.example,http://localhost:3000,https://b.example");
	cors_describe(p, text, 10); /* cut short, still a string */
	assert_true(strlen(text) < 10);
	cors_free(p);

	p = cors_parse("https://a.example,*", &err);
	assert_non_null(p);
	assert_true(cors_any(p));
	assert_string_equal(cors_allow(p, "https://anything.example"), "*");
	assert_string_equal(cors_allow(p, NULL), "*");
	cors_free(p);
	assert_null(cors_allow(NULL, "https://a.example"));
	cors_free(NULL);
}

static void test_limits(void **state)
{
	(void)state;
	sf_err err = { 0 };
	char list[CORS_ORIGINS_MAX * 32] = "";
	for (int i = 0; i < CORS_ORIGINS_MAX; i++) {
		char one[32];
		snprintf(one, sizeof one, "%shttps://h%d.example", i ? "," : "", i);
		strcat(list, one);
	}
	cors_policy *p = cors_parse(list, &err);
	assert_non_null(p);
	assert_string_equal(cors_allow(p, "https://h63.example"), "https://h63.example");
	assert_int_equal(cors_add(p, "https://h0.example", &err), 0); /* a repeat takes no room */
	assert_int_equal(cors_add(p, "https://one-more.example", &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "more than 64 origins"));
	cors_free(p);

	char longest[CORS_ORIGIN_MAX + 2] = "https://";
	while (strlen(longest) < CORS_ORIGIN_MAX)
		strcat(longest, "a");
	p = cors_parse(longest, &err);
	assert_non_null(p);
	cors_free(p);
	strcat(longest, "a");
	assert_null(cors_parse(longest, &err));
	assert_non_null(strstr(err.msg, "over 255 characters"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_allow),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
