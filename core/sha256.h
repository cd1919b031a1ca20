/*
 * sha256.h - SHA-256 (FIPS 180-4) for content-hash level ids and strong ETags.
 *
 * A plain, portable implementation: only fixed-width integer arithmetic, and
 * every word is assembled from and written back to bytes explicitly in
 * big-endian order, so the digest does not depend on the host's byte order,
 * alignment rules or compiler. No intrinsics and no type punning; speed is
 * not the point (the inputs are level descriptions and response bodies of a
 * few kilobytes), agreement with every other SHA-256 is.
 *
 * The context is a plain value with no heap memory: it can live on the stack,
 * be copied to hash a common prefix once, and needs no cleanup. One context
 * must not be used from two threads at once; separate contexts are
 * independent.
 */
#ifndef SF_SHA256_H
#define SF_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The length in bytes of a SHA-256 digest. */
#define SHA256_DIGEST_LEN 32

/*
 * A hash in progress. `h` is the chaining state, `bytes` the total message
 * length so far (SHA-256 limits messages to 2^64 - 1 bits; we count bytes and
 * the length field takes the low 64 bits of bytes * 8), `buf` holds the `used`
 * bytes (0..63) of an incomplete block. Treat the fields as private.
 */
typedef struct sha256_ctx {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t buf[64];
	size_t used;
} sha256_ctx;

/* Starts a new hash in `c` (any previous contents are discarded). */
void sha256_init(sha256_ctx *c);

/*
 * Appends `n` bytes at `data` to the message hashed by `c`, which must have
 * been initialised by sha256_init() and not yet finalised. `data` may be NULL
 * only when `n` is 0. Splitting a message over any number of calls, of any
 * sizes, gives the same digest as hashing it in one call.
 */
void sha256_update(sha256_ctx *c, const void *data, size_t n);

/*
 * Pads the message, writes its 32-byte digest to `out` and wipes `c`. The
 * context must be re-initialised with sha256_init() before it is used again.
 */
void sha256_final(sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN]);

/* One-shot: the digest of the `n` bytes at `data` (NULL allowed when n is 0). */
void sha256(const void *data, size_t n, uint8_t out[SHA256_DIGEST_LEN]);

/*
 * Writes the lower-case hexadecimal form of the first `nbytes` bytes of
 * `digest` to `out`, followed by a NUL. `nbytes` must be in 1..32 and `out`
 * must have room for 2 * nbytes + 1 chars (65 for a whole digest). A short
 * prefix serves as a level id; the whole digest as an ETag.
 */
void sha256_hex(const uint8_t digest[SHA256_DIGEST_LEN], size_t nbytes, char *out);

#endif
