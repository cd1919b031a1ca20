/*
 * rcache.h - a small in-memory cache of finished response bodies, for
 * answers that never change: a level document (immutable once stored) and a
 * cached evaluation under a given star rule.
 *
 * Direct-mapped: a key hashes to one slot and a newcomer evicts whatever
 * held it, so a lookup is one hash and one compare, with no lists to keep.
 * The store stays the source of truth; a miss just costs the SQLite read
 * and the response assembly this cache saves. A slot also keeps the body's
 * gzip form once a client asked for it (rcache_gzip), so a cached answer
 * is compressed once, not per request. Loop thread only.
 */
#ifndef SF_RCACHE_H
#define SF_RCACHE_H

#include <stddef.h>

typedef struct rcache rcache;

typedef struct rcache_slot rcache_slot;

typedef struct rcache_hit {
	const char *body; /* valid until the next rcache_put */
	size_t len;
	const char *etag;  /* the strong ETag of body, quoted */
	rcache_slot *slot; /* where it is cached; NULL for a body not in a cache */
} rcache_hit;

/* A cache of `slots` entries (rounded up to a power of two), or NULL. */
rcache *rcache_new(size_t slots);

/* Frees `c`; NULL is a no-op. */
void rcache_free(rcache *c);

/* Looks `key` up; returns 1 and fills `hit`, or 0. */
int rcache_get(rcache *c, const char *key, rcache_hit *hit);

/*
 * Stores a copy of body[0..len-1] under `key`, with its ETag computed here
 * (SHA-256), and fills `hit` with the stored copy. Returns 0, or -1 when out
 * of memory (nothing stored, `hit` untouched).
 */
int rcache_put(rcache *c, const char *key, const char *body, size_t len, rcache_hit *hit);

/*
 * The gzip form of a cached body (encoding.h): compressed on the first
 * call and kept in the slot beside the body, so a cached answer is not
 * compressed again. Sets *gz and *gzlen (valid as long as the body is)
 * and returns 0; returns -1 when `hit` is not in a cache (slot NULL) or
 * out of memory.
 */
int rcache_gzip(const rcache_hit *hit, const char **gz, size_t *gzlen);

/* The strong ETag of body[0..len-1]: '"' + 32 hex digits of SHA-256 + '"'. */
void rcache_etag(const char *body, size_t len, char out[40]);

#endif
