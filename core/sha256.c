/* sha256.c - SHA-256 as specified in FIPS 180-4, section 6.2; see sha256.h. */
#include "sha256.h"

#include <assert.h>
#include <string.h>

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

/* FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square
 * roots of the first 8 primes. */
static const uint32_t H0[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* n is always in 1..31 here, so neither shift is by 32 (undefined). */
static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24);
	p[1] = (uint8_t)(x >> 16);
	p[2] = (uint8_t)(x >> 8);
	p[3] = (uint8_t)x;
}

/* FIPS 180-4 6.2.2: folds one 64-byte block into the chaining state. */
static void compress(uint32_t state[8], const uint8_t block[64])
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}

	/* The working variables a..h keep their names from the standard. */
	uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
	uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
	for (int t = 0; t < 64; t++) {
		uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = h + sum1 + ch + K[t] + w[t];
		uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = sum0 + maj;
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

void sha256_init(sha256_ctx *c)
{
	memcpy(c->h, H0, sizeof c->h);
	c->bytes = 0;
	memset(c->buf, 0, sizeof c->buf);
	c->used = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	assert(c->used < 64);
	assert(p != NULL || n == 0);
	if (n == 0)
		return;
	c->bytes += (uint64_t)n;

	/* Top up a partial block first; hash whole blocks straight from the
	 * caller's memory; keep the tail for next time. */
	if (c->used > 0) {
		size_t take = 64 - c->used;
		if (take > n)
			take = n;
		memcpy(c->buf + c->used, p, take);
		c->used += take;
		p += take;
		n -= take;
		if (c->used < 64)
			return;
		compress(c->h, c->buf);
		c->used = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		compress(c->h, p);
	if (n > 0) {
		memcpy(c->buf, p, n);
		c->used = n;
	}
}

void sha256_final(sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN])
{
	/* FIPS 180-4 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the
	 * message length in bits as a 64-bit big-endian integer. When fewer than
	 * 9 bytes are left in the block, the padding spills into one more. */
	uint64_t bits = c->bytes << 3;
	assert(c->used < 64);
	c->buf[c->used++] = 0x80;
	if (c->used > 56) {
		memset(c->buf + c->used, 0, 64 - c->used);
		compress(c->h, c->buf);
		c->used = 0;
	}
	memset(c->buf + c->used, 0, 56 - c->used);
	store_be32(c->buf + 56, (uint32_t)(bits >> 32));
	store_be32(c->buf + 60, (uint32_t)bits);
	compress(c->h, c->buf);

	for (int i = 0; i < 8; i++)
		store_be32(out + 4 * i, c->h[i]);
	/* Leave no message bytes behind, and make reuse without init obvious. */
	memset(c, 0, sizeof *c);
}

void sha256(const void *data, size_t n, uint8_t out[SHA256_DIGEST_LEN])
{
	sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, data, n);
	sha256_final(&c, out);
}

void sha256_hex(const uint8_t digest[SHA256_DIGEST_LEN], size_t nbytes, char *out)
{
	static const char digits[] = "0123456789abcdef";
	assert(nbytes >= 1 && nbytes <= SHA256_DIGEST_LEN);
	for (size_t i = 0; i < nbytes; i++) {
		out[2 * i] = digits[digest[i] >> 4];
		out[2 * i + 1] = digits[digest[i] & 0x0f];
	}
	out[2 * nbytes] = '\0';
}
