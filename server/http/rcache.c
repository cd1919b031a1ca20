/* rcache.c - see rcache.h. */
#include "rcache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/sha256.h"
#include "encoding.h"

struct rcache_slot {
	char *key;
	char *body;
	size_t len;
	char etag[40];
	char *gz; /* the gzip form of body, once asked for (rcache_gzip) */
	size_t gzlen;
};

struct rcache {
	rcache_slot *slot;
	size_t mask;
};

static uint64_t key_hash(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *k; k++) {
		h ^= (unsigned char)*k;
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

rcache *rcache_new(size_t slots)
{
	size_t n = 1;
	while (n < slots)
		n *= 2;
	rcache *c = calloc(1, sizeof *c);
	if (!c || !(c->slot = calloc(n, sizeof *c->slot))) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	return c;
}

void rcache_free(rcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i <= c->mask; i++) {
		free(c->slot[i].key);
		free(c->slot[i].body);
		free(c->slot[i].gz);
	}
	free(c->slot);
	free(c);
}

int rcache_get(rcache *c, const char *key, rcache_hit *hit)
{
	rcache_slot *s = &c->slot[key_hash(key) & c->mask];
	if (!s->key || strcmp(s->key, key))
		return 0;
	*hit = (rcache_hit){ s->body, s->len, s->etag, s };
	return 1;
}

void rcache_etag(const char *body, size_t len, char out[40])
{
	uint8_t d[SHA256_DIGEST_LEN];
	sha256(body, len, d);
	out[0] = '"';
	sha256_hex(d, 16, out + 1);
	out[33] = '"';
	out[34] = '\0';
}

int rcache_put(rcache *c, const char *key, const char *body, size_t len, rcache_hit *hit)
{
	char *k = strdup(key), *b = malloc(len + 1);
	if (!k || !b) {
		free(k);
		free(b);
		return -1;
	}
	memcpy(b, body, len);
	b[len] = '\0';
	rcache_slot *s = &c->slot[key_hash(key) & c->mask];
	free(s->key);
	free(s->body);
	free(s->gz);
	s->key = k;
	s->body = b;
	s->len = len;
	s->gz = NULL;
	s->gzlen = 0;
	rcache_etag(b, len, s->etag);
	*hit = (rcache_hit){ s->body, s->len, s->etag, s };
	return 0;
}

int rcache_gzip(const rcache_hit *hit, const char **gz, size_t *gzlen)
{
	rcache_slot *s = hit->slot;
	if (!s || s->body != hit->body)
		return -1;
	if (!s->gz && enc_gzip(s->body, s->len, &s->gz, &s->gzlen))
		return -1;
	*gz = s->gz;
	*gzlen = s->gzlen;
	return 0;
}
