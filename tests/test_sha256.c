/*
 * test_sha256.c - SHA-256 (core/sha256.h).
 *
 * Reference values come from outside this project:
 *  - the example vectors of FIPS 180-2 (appendix B) and the NIST examples:
 *    "abc", the empty string, the 448-bit and 896-bit two-block messages and
 *    one million 'a';
 *  - for the padding edges (55, 56, 63, 64 and 65 bytes) and the seeded
 *    pseudo-random buffer: digests computed with coreutils `sha256sum` and
 *    Python's hashlib, which agreed; the buffer's bytes were produced both by
 *    core/rng.c and by an independent Python transcription of splitmix64 +
 *    xoshiro256**, and those agreed too.
 * The streaming tests then require every way of splitting a message to give
 * the one-shot digest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sha256.h"

/* The lower-case hex of the whole digest of `n` bytes at `data`, one-shot. */
static void hex_of(const void *data, size_t n, char out[65])
{
	uint8_t d[32];
	sha256(data, n, d);
	sha256_hex(d, 32, out);
}

/* ---- published vectors ---- */

static const struct {
	const char *msg;
	const char *hex;
} NIST[] = {
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
	  "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void test_nist_vectors(void **state)
{
	(void)state;
	char hex[65];
	for (size_t i = 0; i < sizeof NIST / sizeof NIST[0]; i++) {
		size_t n = strlen(NIST[i].msg);
		hex_of(NIST[i].msg, n, hex);
		assert_string_equal(hex, NIST[i].hex);

		/* The same through the streaming API, one byte at a time. */
		sha256_ctx c;
		uint8_t d[32];
		sha256_init(&c);
		for (size_t k = 0; k < n; k++)
			sha256_update(&c, NIST[i].msg + k, 1);
		sha256_final(&c, d);
		sha256_hex(d, 32, hex);
		assert_string_equal(hex, NIST[i].hex);
	}
}

/* The empty message also with a NULL pointer and empty updates. */
static void test_empty_message(void **state)
{
	(void)state;
	static const char empty[] =
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	char hex[65];
	hex_of(NULL, 0, hex);
	assert_string_equal(hex, empty);

	sha256_ctx c;
	uint8_t d[32];
	sha256_init(&c);
	sha256_update(&c, NULL, 0);
	sha256_update(&c, "x", 0);
	sha256_final(&c, d);
	sha256_hex(d, 32, hex);
	assert_string_equal(hex, empty);
}

/* One million 'a': one-shot, and streamed in uneven pieces. */
static void test_million_a(void **state)
{
	(void)state;
	static const char want[] =
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	const size_t n = 1000000;
	char *msg = malloc(n);
	assert_non_null(msg);
	memset(msg, 'a', n);
	char hex[65];
	hex_of(msg, n, hex);
	assert_string_equal(hex, want);

	sha256_ctx c;
	uint8_t d[32];
	sha256_init(&c);
	for (size_t off = 0, step = 1; off < n; off += step, step = step % 997 + 1) {
		size_t take = step < n - off ? step : n - off;
		sha256_update(&c, msg + off, take);
	}
	sha256_final(&c, d);
	sha256_hex(d, 32, hex);
	assert_string_equal(hex, want);
	free(msg);
}

/* ---- streaming equals one-shot ---- */

enum { RANDOM_LEN = 4099 };

/* RANDOM_LEN bytes, each the top byte of one rng_next() from seed 20240601. */
static void fill_random(uint8_t *buf)
{
	rng r;
	rng_seed(&r, 20240601);
	for (size_t i = 0; i < RANDOM_LEN; i++)
		buf[i] = (uint8_t)(rng_next(&r) >> 56);
}

static void test_any_chunk_size_equals_oneshot(void **state)
{
	(void)state;
	static uint8_t buf[RANDOM_LEN];
	fill_random(buf);

	uint8_t want[32], got[32];
	sha256(buf, RANDOM_LEN, want);
	char hex[65];
	sha256_hex(want, 32, hex);
	assert_string_equal(hex,
			    "9fb4ff516b8efc5455a7c66a48f3bb12dc7e91ed39887cd1ab25043d2bb79508");

	for (size_t chunk = 1; chunk <= 130; chunk++) {
		sha256_ctx c;
		sha256_init(&c);
		for (size_t off = 0; off < RANDOM_LEN; off += chunk) {
			size_t take = chunk < RANDOM_LEN - off ? chunk : RANDOM_LEN - off;
			sha256_update(&c, buf + off, take);
		}
		sha256_final(&c, got);
		if (memcmp(got, want, 32) != 0)
			fail_msg("chunks of %zu bytes: digest differs from one-shot", chunk);
	}
}

/* A context copied mid-message continues independently of the original. */
static void test_context_copy(void **state)
{
	(void)state;
	static uint8_t buf[RANDOM_LEN];
	fill_random(buf);

	uint8_t whole[32], prefix[32], a[32], b[32];
	sha256(buf, RANDOM_LEN, whole);
	sha256(buf, 1000, prefix);

	sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, buf, 1000);
	sha256_ctx fork = c;
	sha256_final(&c, a);
	sha256_update(&fork, buf + 1000, RANDOM_LEN - 1000);
	sha256_final(&fork, b);
	assert_memory_equal(a, prefix, 32);
	assert_memory_equal(b, whole, 32);
}

/* ---- padding edges ---- */

/*
 * Byte i of the message is (i * 31 + 7) mod 256. 55 bytes is the longest
 * message whose padding fits its single block; 56..63 spill the length into
 * a second block; 64 is exactly one block; 65 starts a second one.
 */
static const struct {
	size_t len;
	const char *hex;
} EDGES[] = {
	{ 55, "8aa994584139d128848eeebc4e815639ba5ab6e6e39574195a63ac4f14f7c43b" },
	{ 56, "ad574708f75c044c9b85de64cb568ee7711ff4f36448c6242f053ba8f6cc2b63" },
	{ 63, "280ed3e8ff1df845b2e7dfe6ac6cee817bef20e783cc65abc41b818b4d2fe076" },
	{ 64, "c6ab9724ade5b6a7a1edfffb12f3aa9181351355af8fd08c919952ad211339dd" },
	{ 65, "788367c73c7ddf4c53f65e68cc0d943e6227ab55b0e78ba63ace822b1c6301c0" },
};

static void test_padding_edges(void **state)
{
	(void)state;
	uint8_t msg[65];
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (uint8_t)(i * 31 + 7);

	for (size_t e = 0; e < sizeof EDGES / sizeof EDGES[0]; e++) {
		size_t n = EDGES[e].len;
		char hex[65];
		hex_of(msg, n, hex);
		assert_string_equal(hex, EDGES[e].hex);

		/* Split in two at every point, including the empty ends. */
		for (size_t cut = 0; cut <= n; cut++) {
			sha256_ctx c;
			uint8_t d[32];
			sha256_init(&c);
			sha256_update(&c, msg, cut);
			sha256_update(&c, msg + cut, n - cut);
			sha256_final(&c, d);
			sha256_hex(d, 32, hex);
			if (strcmp(hex, EDGES[e].hex) != 0)
				fail_msg("%zu bytes cut at %zu: %s, want %s", n, cut, hex,
					 EDGES[e].hex);
		}
	}
}

/* ---- sha256_hex ---- */

static void test_hex(void **state)
{
	(void)state;
	uint8_t d[32];
	sha256("abc", 3, d);

	/* Sentinels catch a write past the terminating NUL. */
	char out[80];
	memset(out, '#', sizeof out);
	sha256_hex(d, 8, out);
	assert_string_equal(out, "ba7816bf8f01cfea");
	assert_int_equal(out[17], '#');

	memset(out, '#', sizeof out);
	sha256_hex(d, 32, out);
	assert_string_equal(out,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(out[65], '#');

	/* Every byte value maps to its two lower-case digits. */
	static const char digits[] = "0123456789abcdef";
	uint8_t all[32];
	for (int base = 0; base < 256; base += 32) {
		for (int i = 0; i < 32; i++)
			all[i] = (uint8_t)(base + i);
		sha256_hex(all, 32, out);
		for (int i = 0; i < 32; i++) {
			assert_int_equal(out[2 * i], digits[(base + i) >> 4]);
			assert_int_equal(out[2 * i + 1], digits[(base + i) & 15]);
		}
	}

	/* The shortest prefix. */
	sha256_hex(d, 1, out);
	assert_string_equal(out, "ba");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nist_vectors),
		cmocka_unit_test(test_empty_message),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_any_chunk_size_equals_oneshot),
		cmocka_unit_test(test_context_copy),
		cmocka_unit_test(test_padding_edges),
		cmocka_unit_test(test_hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
