/*
 * test_auth.c - bearer tokens (server/http/auth.h): the token file's format,
 * its errors (which name the line and never quote a token), and the check
 * of an Authorization header against one or many tokens, including
 * presented tokens that are a prefix, an extension, or the same length
 * with one byte changed at either end of a configured one.
 *
 * The comparison's constant time is a property of its code (every byte of
 * every token is looked at; see auth.c), not something a unit test can
 * time reliably; what is tested here is that the branch-free comparison
 * gives the right answer in every position where a naive one could go
 * wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../server/http/auth.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define T16 "abcdefghijklmnop"
#define T2 "Zz0-._~+/=!#$%&'*^`|"

/* A token of `n` characters from the token alphabet, cycling; out has n + 1 bytes. */
static void long_token(char *out, size_t n, char first)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(0x21 + (first - 0x21 + (int)i) % 94);
	out[n] = '\0';
}

/* ---- the file format ---- */

typedef struct parse_case {
	const char *text;
	int count;         /* tokens parsed, or 0 when parsing fails */
	const char *error; /* a part of the message when it fails */
} parse_case;

static const parse_case PARSE[] = {
	{ T16 "\n", 1, NULL },
	{ T16, 1, NULL }, /* no final newline */
	{ "# tokens for the build farm\n\n" T16 "\n\n# and CI\n" T2 "\n", 2, NULL },
	{ "  " T16 " \t\r\n\t" T2 "\r\n", 2, NULL }, /* blanks around, CRLF */
	{ "   # an indented comment\n" T16 "\n", 1, NULL },
	{ T16 "\n" T16 "\n", 2, NULL }, /* a repeat is harmless */
	{ "", 0, "holds no token" },
	{ "\n\n  \n", 0, "holds no token" },
	{ "# nothing but comments\n#" T16 "\n", 0, "holds no token" },
	{ "abcdefghijklmno\n", 0, "line 1: a token is 15 characters (allowed: 16..256)" },
	{ T16 "\n\nshort\n", 0, "line 3: a token is 5 characters" },
	{ "abcdefgh ijklmnop\n", 0, "line 1, column 9: a token holds a space" },
	{ T16 "\n  abcdefgh\tijklmnop\n", 0, "line 2, column 11:" },
	{ "abcdefghijklmnop\x7f\n", 0, "line 1, column 17:" },
	{ "abcdefghijklmnop\xc3\xa9\n", 0, "line 1, column 17:" },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (int i = 0; i < ARRAY_LEN(PARSE); i++) {
		const parse_case *c = &PARSE[i];
		sf_err err = { 0 };
		auth_tokens *t = auth_parse(c->text, strlen(c->text), &err);
		if (c->count) {
			if (!t)
				fail_msg("case %d: %s", i, err.msg);
			assert_int_equal(auth_count(t), c->count);
		} else {
			if (t)
				fail_msg("case %d parsed, want '%s'", i, c->error);
			assert_int_equal(err.code, SF_EINVAL);
			if (!strstr(err.msg, c->error))
				fail_msg("case %d: '%s' does not say '%s'", i, err.msg, c->error);
			/* The message names where, never what. */
			assert_null(strstr(err.msg, "abcdefgh"));
		}
		auth_free(t);
	}
}

/* A NUL byte inside the text is a bad character, not the end of the file. */
static void test_parse_nul_byte(void **state)
{
	(void)state;
	static const char text[] = T16 "\n"
				       "abcdefgh\0ijklmnop\n";
	sf_err err = { 0 };
	assert_null(auth_parse(text, sizeof text - 1, &err));
	assert_non_null(strstr(err.msg, "line 2, column 9:"));
}

static void test_parse_lengths(void **state)
{
	(void)state;
	char text[AUTH_TOKEN_MAX + 3];
	for (size_t n = AUTH_TOKEN_MIN - 1; n <= AUTH_TOKEN_MAX + 1; n++) {
		long_token(text, n, '!');
		sf_err err = { 0 };
		auth_tokens *t = auth_parse(text, n, &err);
		int ok = n >= AUTH_TOKEN_MIN && n <= AUTH_TOKEN_MAX;
		if (ok != (t != NULL))
			fail_msg("length %zu: %s", n, t ? "accepted" : err.msg);
		auth_free(t);
	}
}

static void test_parse_count_limit(void **state)
{
	(void)state;
	size_t per = 20, n = AUTH_TOKENS_MAX + 1;
	char *text = malloc(n * per + 1);
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		snprintf(text + i * per, per + 1, "token-%013zu\n", i);
	sf_err err = { 0 };
	auth_tokens *t = auth_parse(text, (n - 1) * per, &err);
	assert_non_null(t);
	assert_int_equal(auth_count(t), AUTH_TOKENS_MAX);
	/* The first and the last of them are accepted. */
	assert_int_equal(auth_check(t, "Bearer token-0000000000000"), AUTH_OK);
	assert_int_equal(auth_check(t, "Bearer token-0000000001023"), AUTH_OK);
	assert_int_equal(auth_check(t, "Bearer token-0000000001024"), AUTH_EINVALID);
	auth_free(t);
	assert_null(auth_parse(text, n * per, &err));
	assert_non_null(strstr(err.msg, "line 1025: more than 1024 tokens"));
	free(text);
}

/* ---- the file ---- */

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
	(void)state;
	char path[] = "/tmp/test_auth_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	sf_err err = { 0 };

	write_file(path, "# ops\n" T16 "\n", strlen("# ops\n" T16 "\n"));
	auth_tokens *t = auth_load(path, &err);
	assert_non_null(t);
	assert_int_equal(auth_check(t, "Bearer " T16), AUTH_OK);
	auth_free(t);

	/* Errors start with the path. */
	write_file(path, "tooshort\n", 9);
	assert_null(auth_load(path, &err));
	assert_int_equal(err.code, SF_EINVAL);
	assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
	assert_non_null(strstr(err.msg, ": line 1: a token is 8 characters"));
	assert_null(strstr(err.msg, "tooshort"));

	/* Over AUTH_FILE_MAX bytes, even of comments. */
	char *big = malloc(AUTH_FILE_MAX + 2);
	assert_non_null(big);
	memset(big, '#', AUTH_FILE_MAX + 1);
	write_file(path, big, AUTH_FILE_MAX + 1);
	assert_null(auth_load(path, &err));
	assert_non_null(strstr(err.msg, "is over 1048576 bytes"));
	free(big);

	unlink(path);
	assert_null(auth_load(path, &err));
	assert_non_null(strstr(err.msg, "cannot be read"));
	auth_free(NULL);
}

/* ---- the check ---- */

typedef struct check_case {
	const char *header; /* NULL: no Authorization header */
	int want;
} check_case;

static const check_case CHECK[] = {
	{ "Bearer " T16, AUTH_OK },
	{ "Bearer " T2, AUTH_OK },
	{ "bearer " T16, AUTH_OK }, /* the scheme in any case */
	{ "BEARER " T16, AUTH_OK },
	{ "  Bearer    " T16 "  \t", AUTH_OK }, /* blanks around */
	/* not a Bearer credential at all */
	{ NULL, AUTH_EMISSING },
	{ "", AUTH_EMISSING },
	{ "   ", AUTH_EMISSING },
	{ "Basic YWxhZGRpbjpvcGVuc2VzYW1l", AUTH_EMISSING },
	{ "Bearer", AUTH_EMISSING },
	{ "Bearer" T16, AUTH_EMISSING },
	{ "Bear " T16, AUTH_EMISSING },
	{ "Bearer\t" T16, AUTH_EMISSING },
	{ T16, AUTH_EMISSING },
	/* a Bearer credential that is not right */
	{ "Bearer ", AUTH_EINVALID },
	{ "Bearer abcdefghijklmno", AUTH_EINVALID },     /* a prefix */
	{ "Bearer abcdefghijklmnopq", AUTH_EINVALID },   /* an extension */
	{ "Bearer " T16 T16, AUTH_EINVALID },            /* the token twice */
	{ "Bearer bbcdefghijklmnop", AUTH_EINVALID },    /* the first byte */
	{ "Bearer abcdefghijklmnoq", AUTH_EINVALID },    /* the last byte */
	{ "Bearer abcdefghIjklmnop", AUTH_EINVALID },    /* one letter's case */
	{ "Bearer ABCDEFGHIJKLMNOP", AUTH_EINVALID },    /* tokens are case-sensitive */
	{ "Bearer bcdefghijklmnop", AUTH_EINVALID },     /* a suffix */
	{ "Bearer " T16 " " T16, AUTH_EINVALID },        /* two tokens */
	{ "Bearer abcdefgh ijklmnop", AUTH_EINVALID },   /* a space inside */
	{ "Bearer " T2 "\x01", AUTH_EINVALID },          /* a control character after */
	{ "Bearer Zz0-._~+/=!#$%&'*^`", AUTH_EINVALID }, /* T2 less its last byte */
};

static void test_check_table(void **state)
{
	(void)state;
	sf_err err = { 0 };
	const char text[] = T16 "\n" T2 "\n";
	auth_tokens *t = auth_parse(text, strlen(text), &err);
	assert_non_null(t);
	for (int i = 0; i < ARRAY_LEN(CHECK); i++) {
		int got = auth_check(t, CHECK[i].header);
		if (got != CHECK[i].want)
			fail_msg("case %d '%s': %d, want %d", i,
				 CHECK[i].header ? CHECK[i].header : "(none)", got, CHECK[i].want);
	}
	assert_int_equal(auth_check(NULL, "Bearer " T16), AUTH_EMISSING);
	auth_free(t);
}

/*
 * Tokens of the longest length, against presented ones differing in one
 * byte at every position, one byte shorter and one longer: the comparison
 * runs over AUTH_TOKEN_MAX bytes, so its last byte matters as much as its
 * first.
 */
static void test_check_longest_every_position(void **state)
{
	(void)state;
	char tok[AUTH_TOKEN_MAX + 2], header[AUTH_TOKEN_MAX + 16];
	long_token(tok, AUTH_TOKEN_MAX, '0');
	sf_err err = { 0 };
	auth_tokens *t = auth_parse(tok, AUTH_TOKEN_MAX, &err);
	assert_non_null(t);
	snprintf(header, sizeof header, "Bearer %s", tok);
	assert_int_equal(auth_check(t, header), AUTH_OK);
	for (size_t i = 0; i < AUTH_TOKEN_MAX; i++) {
		char *p = header + 7 + i, was = *p;
		*p = was == '~' ? '!' : (char)(was + 1);
		if (auth_check(t, header) != AUTH_EINVALID)
			fail_msg("a change at byte %zu was accepted", i);
		*p = was;
	}
	header[7 + AUTH_TOKEN_MAX - 1] = '\0';
	assert_int_equal(auth_check(t, header), AUTH_EINVALID);
	snprintf(header, sizeof header, "Bearer %sA", tok);
	assert_int_equal(auth_check(t, header), AUTH_EINVALID); /* over the longest length */
	auth_free(t);
}

/*
 * Many tokens, including ones that are prefixes of one another: each is
 * accepted (wherever it is in the file: every token is compared, none
 * short-circuits the others), and the shared prefixes and extensions that
 * are not tokens themselves are refused.
 */
static void test_check_many_tokens(void **state)
{
	(void)state;
	const char *tokens[] = {
		"0123456789abcdef", "0123456789abcdef0", "0123456789abcdef01",
		"x123456789abcdef", "0123456789abcdeX",  "the-last-one-in-the-file-0000",
	};
	char text[512] = "", header[128];
	for (int i = 0; i < ARRAY_LEN(tokens); i++) {
		strcat(text, tokens[i]);
		strcat(text, "\n");
	}
	sf_err err = { 0 };
	auth_tokens *t = auth_parse(text, strlen(text), &err);
	assert_non_null(t);
	assert_int_equal(auth_count(t), ARRAY_LEN(tokens));
	for (int i = 0; i < ARRAY_LEN(tokens); i++) {
		snprintf(header, sizeof header, "Bearer %s", tokens[i]);
		assert_int_equal(auth_check(t, header), AUTH_OK);
	}
	const char *refused[] = {
		"0123456789abcde",
		"0123456789abcdef012",
		"0123456789abcdef1",
		"y123456789abcdef",
		"the-last-one-in-the-file-000",
		"the-last-one-in-the-file-00000",
	};
	for (int i = 0; i < ARRAY_LEN(refused); i++) {
		snprintf(header, sizeof header, "Bearer %s", refused[i]);
		if (auth_check(t, header) != AUTH_EINVALID)
			fail_msg("'%s' was accepted", refused[i]);
	}
	auth_free(t);

	/* Another set does not accept this one's tokens. */
	t = auth_parse(T2, strlen(T2), &err);
	assert_non_null(t);
	assert_int_equal(auth_check(t, "Bearer 0123456789abcdef"), AUTH_EINVALID);
	auth_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_nul_byte),
		cmocka_unit_test(test_parse_lengths),
		cmocka_unit_test(test_parse_count_limit),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_check_longest_every_position),
		cmocka_unit_test(test_check_many_tokens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
