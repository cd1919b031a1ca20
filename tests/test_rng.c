/*
 * test_rng.c - the seeded generator (core/rng.h): xoshiro256** seeded by
 * splitmix64.
 *
 * Reference values come from outside this project:
 *  - splitmix64 (Vigna's splitmix64.c) from x = 0: 0xe220a8397b1dcdaf,
 *    0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec; from
 *    x = 1234567: 6457827717110365317, 3203168211198807973,
 *    9817491932198370423, 4593380528125082431 (the values splitmix64.c
 *    prints, quoted by many ports);
 *  - xoshiro256** (Blackman & Vigna, xoshiro256starstar.c) from the state
 *    {1, 2, 3, 4}: the ten outputs the Rust crate rand_xoshiro tests against;
 *  - a straightforward transcription of both published algorithms below,
 *    itself checked against those vectors first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* ---- independent transcription of the published algorithms ---- */

static uint64_t ref_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256starstar.c, next(), on an explicit state. */
static uint64_t ref_next(uint64_t s[4])
{
	const uint64_t result = ref_rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ref_rotl(s[3], 45);
	return result;
}

static const uint64_t XOSHIRO_1234[10] = {
	11520ULL,
	0ULL,
	1509978240ULL,
	1215971899390074240ULL,
	1216172134540287360ULL,
	607988272756665600ULL,
	16172922978634559625ULL,
	8476171486693032832ULL,
	10595114339597558777ULL,
	2904607092377533576ULL,
};

static const uint64_t SPLITMIX_0[4] = {
	0xe220a8397b1dcdafULL,
	0x6e789e6aa1b965f4ULL,
	0x06c45d188009454fULL,
	0xf88bb8a8724c81ecULL,
};

static const uint64_t SPLITMIX_1234567[4] = {
	6457827717110365317ULL,
	3203168211198807973ULL,
	9817491932198370423ULL,
	4593380528125082431ULL,
};

/* The transcription itself reproduces the published vectors. */
static void test_reference_transcription(void **state)
{
	(void)state;
	uint64_t x = 0;
	for (int i = 0; i < 4; i++)
		assert_int_equal(ref_splitmix64(&x), SPLITMIX_0[i]);
	x = 1234567;
	for (int i = 0; i < 4; i++)
		assert_int_equal(ref_splitmix64(&x), SPLITMIX_1234567[i]);
	uint64_t s[4] = { 1, 2, 3, 4 };
	for (int i = 0; i < 10; i++)
		assert_int_equal(ref_next(s), XOSHIRO_1234[i]);
}

/* rng_seed() fills the state with the first four splitmix64 outputs. */
static void test_seed_is_splitmix(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r.s[i], SPLITMIX_0[i]);
	rng_seed(&r, 1234567);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r.s[i], SPLITMIX_1234567[i]);
}

/* rng_next() is xoshiro256**: the published vector from state {1, 2, 3, 4}. */
static void test_next_published_vector(void **state)
{
	(void)state;
	rng r = { .s = { 1, 2, 3, 4 } };
	for (int i = 0; i < 10; i++)
		assert_int_equal(rng_next(&r), XOSHIRO_1234[i]);
}

/*
 * rng_seed(0) then rng_next(): the first outputs, computed with a Python
 * transcription of splitmix64 + xoshiro256** (which reproduces both published
 * vectors above), and then a long run against the C transcription.
 */
static void test_seed0_stream(void **state)
{
	(void)state;
	static const uint64_t first[4] = {
		0x99ec5f36cb75f2b4ULL,
		0xbf6e1f784956452aULL,
		0x1a5f849d4933e6e0ULL,
		0x6aa594f1262d2d2cULL,
	};
	rng r;
	rng_seed(&r, 0);
	uint64_t s[4];
	memcpy(s, SPLITMIX_0, sizeof s);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rng_next(&r), first[i]);
		assert_int_equal(ref_next(s), first[i]);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t a = rng_next(&r), b = ref_next(s);
		if (a != b)
			fail_msg("seed 0, output %d: %#llx, reference %#llx", i + 4,
				 (unsigned long long)a, (unsigned long long)b);
	}
}

/* Arbitrary seeds: state from the reference splitmix, stream from ref_next. */
static void test_many_seeds_match_reference(void **state)
{
	(void)state;
	static const uint64_t seeds[] = {
		1, 2, 42, 0xdeadbeefULL, 0x8000000000000000ULL, UINT64_MAX
	};
	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		uint64_t x = seeds[k], s[4];
		for (int i = 0; i < 4; i++)
			s[i] = ref_splitmix64(&x);
		rng r;
		rng_seed(&r, seeds[k]);
		assert_memory_equal(r.s, s, sizeof s);
		assert_true(s[0] | s[1] | s[2] | s[3]); /* never the all-zero state */
		for (int i = 0; i < 1000; i++)
			assert_int_equal(rng_next(&r), ref_next(s));
	}
}

/* ---- rng_below ---- */

static void test_below_range(void **state)
{
	(void)state;
	static const uint64_t bounds[] = {
		1, 2, 3, 7, 10, 1000, (1ULL << 32) + 1, (1ULL << 63) + 1, UINT64_MAX - 1, UINT64_MAX
	};
	rng r;
	rng_seed(&r, 7);
	for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++)
		for (int i = 0; i < 20000; i++) {
			uint64_t v = rng_below(&r, bounds[k]);
			if (v >= bounds[k])
				fail_msg("rng_below(%llu) returned %llu",
					 (unsigned long long)bounds[k], (unsigned long long)v);
		}
	/* Bound 2^63 + 1: the upper half [2^62, 2^63] is reached about half the
	 * time (20000 draws: 10000 +- 71 sd). */
	int top = 0;
	for (int i = 0; i < 20000; i++)
		top += rng_below(&r, (1ULL << 63) + 1) >= (1ULL << 62);
	assert_in_range(top, 9500, 10500);
}

/* Pearson chi-square of `n` draws of rng_below(bound) into `bound` cells. */
static double chi_square(uint64_t seed, uint64_t bound, int n)
{
	rng r;
	rng_seed(&r, seed);
	long *cells = calloc(bound, sizeof *cells);
	assert_non_null(cells);
	for (int i = 0; i < n; i++)
		cells[rng_below(&r, bound)]++;
	double expect = (double)n / (double)bound, chi = 0;
	for (uint64_t c = 0; c < bound; c++) {
		double d = (double)cells[c] - expect;
		chi += d * d / expect;
	}
	free(cells);
	return chi;
}

/*
 * Fixed seeds, so the statistics are deterministic and cannot flake. Bounds
 * are generous: the 1e-6 upper quantile of chi-square with k degrees of
 * freedom is about 33.1 (k = 6), 42.3 (k = 9), 1260 (k = 999).
 */
static void test_below_uniform(void **state)
{
	(void)state;
	double chi;
	chi = chi_square(101, 7, 70000);
	if (chi > 33.1)
		fail_msg("bound 7: chi-square %.1f > 33.1", chi);
	chi = chi_square(102, 10, 100000);
	if (chi > 42.3)
		fail_msg("bound 10: chi-square %.1f > 42.3", chi);
	chi = chi_square(103, 1000, 200000);
	if (chi > 1260)
		fail_msg("bound 1000: chi-square %.1f > 1260", chi);
	/* Nor too good to be random (a counter would give about 0): the 1e-6
	 * lower quantile for k = 999 is about 800. */
	assert_true(chi > 700);
}

/*
 * No modulo bias: with bound b = 3 * 2^62, a plain `x % b` would put values
 * below 2^62 twice as often (x in [0, 2^62) and [b, 2^64) both map there):
 * a share of 1/2 instead of 1/3. 30000 draws: 1/3 gives 10000 +- 82 (sd).
 */
static void test_below_no_modulo_bias(void **state)
{
	(void)state;
	const uint64_t b = 3ULL << 62;
	rng r;
	rng_seed(&r, 11);
	int low = 0;
	for (int i = 0; i < 30000; i++) {
		uint64_t v = rng_below(&r, b);
		assert_true(v < b);
		low += v < (1ULL << 62);
	}
	assert_in_range(low, 9500, 10500);
}

/* ---- rng_unit ---- */

static void test_unit_range(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 5);
	double sum = 0;
	int bins[10] = { 0 };
	const int n = 100000;
	for (int i = 0; i < n; i++) {
		double u = rng_unit(&r);
		if (!(u >= 0.0 && u < 1.0))
			fail_msg("rng_unit returned %.17g", u);
		/* 53 random bits: an integer multiple of 2^-53. */
		double scaled = u * 0x1.0p53;
		assert_true(scaled == (double)(uint64_t)scaled);
		sum += u;
		bins[(int)(u * 10)]++;
	}
	/* Mean 0.5, sd of the mean 0.29 / sqrt(1e5) = 0.0009. */
	assert_true(sum / n > 0.49 && sum / n < 0.51);
	double chi = 0;
	for (int k = 0; k < 10; k++)
		chi += (bins[k] - n / 10.0) * (bins[k] - n / 10.0) / (n / 10.0);
	if (chi > 42.3)
		fail_msg("rng_unit deciles: chi-square %.1f > 42.3", chi);
}

/*
 * The extremes, by steering the state. xoshiro256** outputs
 * rotl(s1 * 5, 7) * 9, so s1 = 0 gives an output of 0 (the second output of
 * the published {1, 2, 3, 4} vector), and s1 = rotr(~0 * 9^-1, 7) * 5^-1 =
 * 0x4fc71c71c71c71c7 gives all ones. Whatever 53 of the 64 bits rng_unit
 * keeps, all ones must give 1 - 2^-53 (not 1.0) and zero must give 0.
 */
static void test_unit_extremes(void **state)
{
	(void)state;
	rng r = { .s = { 1, 2, 3, 4 } };
	assert_int_equal(rng_next(&r), 11520);
	assert_true(rng_unit(&r) == 0.0);

	rng ones = { .s = { 1, 0x4fc71c71c71c71c7ULL, 2, 3 } };
	rng probe = ones;
	assert_int_equal(rng_next(&probe), UINT64_MAX);
	double u = rng_unit(&ones);
	assert_true(u < 1.0);
	assert_true(u == 1.0 - 0x1.0p-53);
}

/* ---- rng_split ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_split(void **state)
{
	(void)state;
	rng parent;
	rng_seed(&parent, 2024);
	rng saved = parent;

	/* Deterministic: the same parent and index give the same stream. */
	rng a = rng_split(&parent, 17), b = rng_split(&parent, 17);
	assert_memory_equal(&a, &b, sizeof a);
	for (int i = 0; i < 100; i++)
		assert_int_equal(rng_next(&a), rng_next(&b));

	/* Another parent with the same state gives the same child too. */
	rng twin;
	rng_seed(&twin, 2024);
	rng c = rng_split(&twin, 17), d = rng_split(&parent, 17);
	assert_memory_equal(&c, &d, sizeof c);

	/* The parent is not advanced: its state and its stream are unchanged. */
	assert_memory_equal(&parent, &saved, sizeof parent);
	for (int i = 0; i < 100; i++)
		assert_int_equal(rng_next(&parent), rng_next(&saved));

	/* Different indices give different streams (first two outputs). */
	rng_seed(&parent, 2024);
	enum { N = 4096 };
	static uint64_t firsts[N + 1];
	for (uint64_t i = 0; i < N; i++) {
		rng child = rng_split(&parent, i);
		assert_true(child.s[0] | child.s[1] | child.s[2] | child.s[3]);
		firsts[i] = rng_next(&child) ^ ref_rotl(rng_next(&child), 1);
	}
	/* ... and differ from the parent's own stream. */
	rng p2 = parent;
	firsts[N] = rng_next(&p2) ^ ref_rotl(rng_next(&p2), 1);
	qsort(firsts, N + 1, sizeof firsts[0], cmp_u64);
	for (int i = 0; i < N; i++)
		if (firsts[i] == firsts[i + 1])
			fail_msg("two split streams start alike (%#llx)",
				 (unsigned long long)firsts[i]);

	/* Large indices and index 0 versus UINT64_MAX differ. */
	rng lo = rng_split(&parent, 0), hi = rng_split(&parent, UINT64_MAX);
	assert_memory_not_equal(&lo, &hi, sizeof lo);

	/* The same index from a different parent differs. */
	rng other;
	rng_seed(&other, 2025);
	rng e = rng_split(&parent, 3), f = rng_split(&other, 3);
	assert_memory_not_equal(&e, &f, sizeof e);

	/* After the parent advances, its children change. */
	rng moved = parent;
	rng_next(&moved);
	rng g = rng_split(&moved, 3);
	assert_memory_not_equal(&e, &g, sizeof e);
}

/* Different seeds give different streams; a seed always the same one. */
static void test_seeds_distinct(void **state)
{
	(void)state;
	rng a, b, c;
	rng_seed(&a, 1);
	rng_seed(&b, 2);
	rng_seed(&c, 1);
	int same = 0;
	for (int i = 0; i < 64; i++) {
		uint64_t x = rng_next(&a), y = rng_next(&b);
		same += x == y;
		assert_int_equal(x, rng_next(&c));
	}
	assert_true(same < 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_transcription),
		cmocka_unit_test(test_seed_is_splitmix),
		cmocka_unit_test(test_next_published_vector),
		cmocka_unit_test(test_seed0_stream),
		cmocka_unit_test(test_many_seeds_match_reference),
		cmocka_unit_test(test_below_range),
		cmocka_unit_test(test_below_uniform),
		cmocka_unit_test(test_below_no_modulo_bias),
		cmocka_unit_test(test_unit_range),
		cmocka_unit_test(test_unit_extremes),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_seeds_distinct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
