/*
 * test_encoding.c - gzip content coding (server/http/encoding.h): which
 * Accept-Encoding values choose gzip (q-values, "*", identity), which
 * media types are compressed, the gzip bytes (a round trip through zlib,
 * the same bytes every time, no mtime, a fixed OS byte) and the ETag of
 * the compressed representation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../server/http/encoding.h"

typedef struct accept_case {
	const char *header; /* NULL: no header */
	int gzip;
} accept_case;

static const accept_case ACCEPTS[] = {
	{ NULL, 0 },
	{ "", 0 },
	{ "gzip", 1 },
	{ "GZip", 1 },
	{ "x-gzip", 1 },
	{ "gzip, deflate, br", 1 },
	{ "br;q=1.0, gzip;q=0.8, *;q=0.1", 1 },
	{ "deflate", 0 },
	{ "br", 0 },
	{ "identity", 0 },
	{ "gzip;q=0", 0 },
	{ "gzip;q=0.0", 0 },
	{ "gzip;q=0.000", 0 },
	{ "gzip; q=0", 0 },
	{ "gzip ; q=0 ", 0 },
	{ "gzip;Q=0", 0 },
	{ "gzip;q=0.001", 1 }, /* identity unnamed: acceptable, but not preferred */
	{ "gzip;q=0.5, br", 1 },
	{ "gzip;q=1", 1 },
	{ "gzip;q=1.000", 1 },
	{ "gzip;q=1.0001", 0 }, /* more than three decimals: malformed, 0 */
	{ "gzip;q=2", 0 },
	{ "gzip;q=-1", 0 },
	{ "gzip;q=", 0 },
	{ "gzip;q=abc", 0 },
	{ "gzip;q=0.5x", 0 },
	{ "*", 1 },
	{ "*;q=0", 0 },
	{ "*;q=0.5", 1 },              /* gzip 0.5 ties identity's 0.5 from "*" */
	{ "*, gzip;q=0", 0 },          /* gzip named: its own q wins over "*" */
	{ "gzip;q=0, *", 0 },          /* in either order */
	{ "gzip;q=0.5, identity", 0 }, /* identity preferred */
	{ "gzip;q=0.5, identity;q=0.4", 1 },
	{ "gzip, identity;q=0", 1 },
	{ "identity;q=0, *;q=0", 0 }, /* nothing acceptable: identity anyway */
	{ "gzip;level=9;q=0.3", 1 },  /* other parameters ignored */
	{ "gzip;q=0.3;level=9", 1 },
	{ "gzipx", 0 },
	{ "xgzip", 0 },
	{ "deflate,gzip", 1 },
	{ ",,gzip,,", 1 },
	{ " \t gzip", 1 },
	{ "gzip;q=0, gzip", 1 }, /* listed twice: the better q */
};

static void test_accepts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ACCEPTS / sizeof ACCEPTS[0]; i++)
		if (enc_accepts_gzip(ACCEPTS[i].header) != ACCEPTS[i].gzip)
			fail_msg("Accept-Encoding '%s': gzip %d, want %d",
				 ACCEPTS[i].header ? ACCEPTS[i].header : "(none)", !ACCEPTS[i].gzip,
				 ACCEPTS[i].gzip);
}

static void test_compressible(void **state)
{
	(void)state;
	static const char *const yes[] = { "application/json",
					   "application/problem+json",
					   "application/json; charset=utf-8",
					   "Application/JSON",
					   "application/yaml",
					   "image/svg+xml",
					   "text/html; charset=utf-8",
					   "text/javascript; charset=utf-8",
					   "text/css; charset=utf-8",
					   "text/plain; version=0.0.4; charset=utf-8",
					   "text/csv",
					   "application/vnd.x+json" };
	static const char *const no[] = { "text/event-stream",
					  "text/event-stream; charset=utf-8",
					  "image/png",
					  "application/octet-stream",
					  "application/gzip",
					  "text/",
					  "",
					  "json",
					  "application/jsonx" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!enc_compressible(yes[i]))
			fail_msg("'%s' should be compressible", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (enc_compressible(no[i]))
			fail_msg("'%s' should not be compressible", no[i]);
	assert_false(enc_compressible(NULL));
}

/* gunzip with zlib itself (windowBits 15 + 16: gzip only). */
static char *gunzip(const char *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	char *out = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* one member, nothing after it */
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static void test_gzip_round_trip(void **state)
{
	(void)state;
	size_t sizes[] = { 0, 1, 255, 256, 4096, 200000 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k];
		char *text = malloc(n + 1);
		for (size_t i = 0; i < n; i++) /* JSON-ish, compressible but not trivially */
			text[i] = "{\"histogram\":[0123456789,]}"[(i * 7 + i / 13) % 27];
		char *a, *b;
		size_t alen, blen;
		assert_int_equal(enc_gzip(text, n, &a, &alen), 0);
		assert_int_equal(enc_gzip(text, n, &b, &blen), 0);
		/* Deterministic: the same bytes twice. */
		assert_int_equal(alen, blen);
		assert_memory_equal(a, b, alen);
		/* The header: magic, deflate, no flags, mtime 0, XFL, OS 3. */
		assert_true(alen >= 18);
		static const unsigned char head[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 };
		assert_memory_equal(a, head, sizeof head);
		assert_int_equal((unsigned char)a[9], 3);
		size_t back_len;
		char *back = gunzip(a, alen, &back_len);
		assert_int_equal(back_len, n);
		if (n)
			assert_memory_equal(back, text, n);
		if (n >= 4096)
			assert_true(alen < n / 2); /* it did compress */
		free(back);
		free(a);
		free(b);
		free(text);
	}
}

static void test_etag_gz(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "\"0123456789abcdef0123456789abcdef\"",
		  "\"0123456789abcdef0123456789abcdef-gz\"" },
		{ "W/\"abc\"", "W/\"abc-gz\"" },
		{ "\"\"", "\"-gz\"" },
		{ "abc", "abc-gz" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[ENC_ETAG_MAX];
		enc_etag_gz(cases[i][0], out);
		assert_string_equal(out, cases[i][1]);
	}
	char longest[200];
	memset(longest, 'a', sizeof longest - 1);
	longest[sizeof longest - 1] = '\0';
	char out[ENC_ETAG_MAX];
	enc_etag_gz(longest, out);
	assert_true(strlen(out) < ENC_ETAG_MAX);
	assert_string_equal(out + strlen(out) - 3, "-gz");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_compressible),
		cmocka_unit_test(test_gzip_round_trip),
		cmocka_unit_test(test_etag_gz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
