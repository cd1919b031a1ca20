/*
 * test_log.c - the log (server/base/log.h): the escapes of client bytes (text
 * and JSON), the format names, and whole lines as written to stderr: the
 * timestamp, the request line's fields, JSON lines that parse, long parts
 * cut without breaking a line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../server/base/log.h"

typedef struct escape_case {
	const char *in;
	size_t len; /* 0: strlen(in) */
	const char *text, *json;
} escape_case;

static const escape_case ESCAPES[] = {
	{ "plain /v1/levels?x=1", 0, "plain /v1/levels?x=1", "plain /v1/levels?x=1" },
	{ "a\nb", 0, "a\\x0ab", "a\\nb" },
	{ "\r\t", 0, "\\x0d\\x09", "\\r\\t" },
	{ "\x1b[31mred", 0, "\\x1b[31mred", "\\u001b[31mred" },
	{ "del\x7f", 0, "del\\x7f", "del\\u007f" },
	{ "q\"uo\\te", 0, "q\"uo\\x5cte", "q\\\"uo\\\\te" },
	{ "nul\0x", 5, "nul\\x00x", "nul\\u0000x" },
	{ "\x01\x1f ", 0, "\\x01\\x1f ", "\\u0001\\u001f " },
	/* UTF-8 passes; bytes that are not UTF-8 are \xNN in both. */
	{ "caf\xc3\xa9 \xe2\x82\xac", 0, "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
	{ "\xff\xfe", 0, "\\xff\\xfe", "\\\\xff\\\\xfe" },
	{ "\xc3", 0, "\\xc3", "\\\\xc3" },                                 /* cut short */
	{ "\xc0\xaf", 0, "\\xc0\\xaf", "\\\\xc0\\\\xaf" },                 /* overlong '/' */
	{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80", "\\\\xed\\\\xa0\\\\x80" }, /* a surrogate */
	/* C1 controls (U+0080..U+009F): a terminal may act on them. */
	{ "\xc2\x9b"
	  "2J",
	  0, "\\xc2\\x9b2J", "\\u009b2J" },
	{ "\xc2\xa0", 0, "\xc2\xa0", "\xc2\xa0" }, /* U+00A0 is not a control */
};

static void test_escapes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ESCAPES / sizeof ESCAPES[0]; i++) {
		const escape_case *c = &ESCAPES[i];
		size_t len = c->len ? c->len : strlen(c->in);
		char out[256];
		size_t n = log_escape_text(c->in, len, out, sizeof out);
		if (strcmp(out, c->text) || n != strlen(c->text))
			fail_msg("case %zu: text escape '%s', want '%s'", i, out, c->text);
		n = log_escape_json(c->in, len, out, sizeof out);
		if (strcmp(out, c->json) || n != strlen(c->json))
			fail_msg("case %zu: JSON escape '%s', want '%s'", i, out, c->json);
	}
}

static void test_escape_cut(void **state)
{
	(void)state;
	char out[8];
	/* Cut at whole escapes: "ab" then \x0a would pass 7 bytes. */
	size_t n = log_escape_text("ab\n\ncd", 6, out, sizeof out);
	assert_string_equal(out, "ab\\x0a");
	assert_int_equal(n, strlen("ab\\x0a\\x0acd"));
	n = log_escape_json("\x1b\x1b", 2, out, sizeof out);
	assert_string_equal(out, "\\u001b");
	assert_int_equal(n, 12);
}

static void test_format_names(void **state)
{
	(void)state;
	log_format f = LOG_JSON;
	assert_int_equal(log_format_parse("text", &f), 0);
	assert_int_equal(f, LOG_TEXT);
	assert_int_equal(log_format_parse("json", &f), 0);
	assert_int_equal(f, LOG_JSON);
	static const char *const bad[] = { "", "JSON", "Text", "json ", "xml", "jsonl" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(log_format_parse(bad[i], &f), -1);
	assert_int_equal(log_format_parse(NULL, &f), -1);
}

/* Runs fn with stderr sent to a file; returns what it wrote (caller frees). */
static char *capture(void (*fn)(void))
{
	char path[] = "/tmp/starforge-test-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *text = calloc(1, 1 << 16);
	ssize_t n = pread(fd, text, (1 << 16) - 1, 0);
	assert_true(n >= 0);
	close(fd);
	unlink(path);
	return text;
}

/* True when s starts with an RFC 3339 UTC time with milliseconds. */
static int stamped(const char *s)
{
	const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return 0;
	}
	return 1;
}

static void write_text_lines(void)
{
	log_set_format(LOG_TEXT);
	log_http("GET", "/v1/levels/\x1b[2Jx\nforged 200", 404, 1.5, "levels.get", "abc-1");
	log_info("serve: listening on %s", "http://127.0.0.1:1");
	log_job_event("job_1", "succeeded", "lattice", 42, "levels=3");
}

static void test_text_lines(void **state)
{
	(void)state;
	char *out = capture(write_text_lines);
	char *l1 = out, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	assert_true(stamped(l1) && stamped(l2) && stamped(l3));
	assert_int_equal(strlen(l3) - (size_t)(strchr(l3, '\n') - l3), 1); /* three lines */
	assert_memory_equal(l1 + 24,
			    " http GET /v1/levels/\\x1b[2Jx\\x0aforged 200 404 1.500ms "
			    "route=levels.get request_id=abc-1\n",
			    (size_t)(l2 - l1 - 24));
	assert_memory_equal(l2 + 24, " serve: listening on http://127.0.0.1:1\n",
			    (size_t)(l3 - l2 - 24));
	assert_string_equal(l3 + 24, " job job_1 succeeded kind=lattice seed=42 levels=3\n");
	free(out);
}

static void write_json_lines(void)
{
	log_set_format(LOG_JSON);
	log_http("G\x01T", "/p\"\\\xff\x7f", 503, 0.25, "unmatched", NULL);
	log_error("store: %s", "disk \"full\"");
	log_job_event("job_2", "failed", "digger", 18446744073709551615ULL, NULL);
	char big[6000];
	memset(big, '\x1b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	log_http("GET", big, 200, 1, big, big); /* every part cut, the line still whole */
	log_set_format(LOG_TEXT);
}

static void test_json_lines(void **state)
{
	(void)state;
	char *out = capture(write_json_lines);
	json_t *lines[4];
	char *p = out;
	for (int i = 0; i < 4; i++) {
		char *nl = strchr(p, '\n');
		assert_non_null(nl);
		json_error_t e;
		lines[i] = json_loadb(p, (size_t)(nl - p), 0, &e);
		if (!lines[i])
			fail_msg("line %d is not JSON (%s): %.*s", i, e.text, (int)(nl - p), p);
		assert_true(stamped(json_string_value(json_object_get(lines[i], "ts"))));
		p = nl + 1;
	}
	assert_string_equal(p, "");
	json_t *h = lines[0];
	assert_string_equal(json_string_value(json_object_get(h, "level")), "error");
	assert_string_equal(json_string_value(json_object_get(h, "event")), "http");
	assert_string_equal(json_string_value(json_object_get(h, "method")), "G\x01T");
	assert_string_equal(json_string_value(json_object_get(h, "path")), "/p\"\\\\xff\x7f");
	assert_int_equal(json_integer_value(json_object_get(h, "status")), 503);
	assert_true(json_real_value(json_object_get(h, "ms")) == 0.25);
	assert_string_equal(json_string_value(json_object_get(h, "route")), "unmatched");
	assert_string_equal(json_string_value(json_object_get(h, "request_id")), "-");
	assert_non_null(strstr(json_string_value(json_object_get(h, "msg")), "http G\x01T /p"));
	assert_string_equal(json_string_value(json_object_get(lines[1], "level")), "error");
	assert_string_equal(json_string_value(json_object_get(lines[1], "msg")),
			    "store: disk \"full\"");
	json_t *j = lines[2];
	assert_string_equal(json_string_value(json_object_get(j, "job")), "job_2");
	assert_string_equal(json_string_value(json_object_get(j, "transition")), "failed");
	assert_string_equal(json_string_value(json_object_get(j, "seed")), "18446744073709551615");
	assert_null(json_object_get(j, "detail"));
	const char *cut = json_string_value(json_object_get(lines[3], "path"));
	assert_true(strlen(cut) < 2000);
	assert_string_equal(cut + strlen(cut) - 3, "...");
	for (int i = 0; i < 4; i++)
		json_decref(lines[i]);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),      cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_format_names), cmocka_unit_test(test_text_lines),
		cmocka_unit_test(test_json_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
