/*
 * auth.c - bearer tokens; see auth.h for the file format and the promises.
 *
 * Each configured token is kept in a buffer of AUTH_TOKEN_MAX bytes,
 * zero-padded, with its length beside it. A presented token is copied into
 * a buffer of the same shape, so that one comparison is always the same
 * AUTH_TOKEN_MAX byte XORs ORed together, plus the XOR of the lengths
 * (tokens hold no NUL, so "abc" and "abc\0" cannot be confused, and the
 * length term tells a token from its prefixes and extensions). The results
 * of all the comparisons are ORed as well: no branch depends on a byte of
 * a configured token, or on which token matched.
 */
#include "auth.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct auth_token {
	unsigned char text[AUTH_TOKEN_MAX]; /* zero-padded */
	unsigned len;
} auth_token;

struct auth_tokens {
	size_t n;
	auth_token tok[];
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Characters a token may hold: printable ASCII but the space. */
static int is_token_char(char c)
{
	return c >= 0x21 && c <= 0x7E;
}

auth_tokens *auth_parse(const char *text, size_t len, sf_err *err)
{
	/* Count the lines first: one allocation, sized to the candidates. */
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	size_t cap = lines < AUTH_TOKENS_MAX ? lines : AUTH_TOKENS_MAX;
	auth_tokens *t = calloc(1, sizeof *t + cap * sizeof t->tok[0]);
	if (!t) {
		sf_err_set(err, SF_ENOMEM, "out of memory for the tokens");
		return NULL;
	}
	size_t line = 0, pos = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, start = pos, line_start = pos;
		pos = end + 1;
		line++;
		while (start < end && is_blank(text[start]))
			start++;
		while (end > start && is_blank(text[end - 1]))
			end--;
		if (start == end || text[start] == '#')
			continue;
		size_t n = end - start;
		if (n < AUTH_TOKEN_MIN || n > AUTH_TOKEN_MAX) {
			sf_err_set(err, SF_EINVAL,
				   "line %zu: a token is %zu characters (allowed: %d..%d)", line, n,
				   AUTH_TOKEN_MIN, AUTH_TOKEN_MAX);
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			if (!is_token_char(text[start + i])) {
				sf_err_set(err, SF_EINVAL,
					   "line %zu, column %zu: a token holds a space or a "
					   "character "
					   "that is not printable ASCII (allowed: 0x21..0x7E)",
					   line, start + i - line_start + 1);
				goto fail;
			}
		}
		if (t->n == AUTH_TOKENS_MAX) {
			sf_err_set(err, SF_EINVAL, "line %zu: more than %d tokens", line,
				   AUTH_TOKENS_MAX);
			goto fail;
		}
		memcpy(t->tok[t->n].text, text + start, n);
		t->tok[t->n].len = (unsigned)n;
		t->n++;
	}
	if (!t->n) {
		sf_err_set(err, SF_EINVAL,
			   "holds no token (one per line; blank lines and # comments are ignored)");
		goto fail;
	}
	return t;
fail:
	auth_free(t);
	return NULL;
}

auth_tokens *auth_load(const char *path, sf_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		sf_err_set(err, SF_EINVAL, "%s: cannot be read (%s)", path, strerror(errno));
		return NULL;
	}
	char *buf = malloc(AUTH_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		sf_err_set(err, SF_ENOMEM, "%s: out of memory reading it", path);
		return NULL;
	}
	size_t len = fread(buf, 1, AUTH_FILE_MAX + 1, f);
	int failed = ferror(f);
	fclose(f);
	auth_tokens *t = NULL;
	if (failed)
		sf_err_set(err, SF_EINVAL, "%s: cannot be read", path);
	else if (len > AUTH_FILE_MAX)
		sf_err_set(err, SF_EINVAL, "%s: is over %d bytes", path, AUTH_FILE_MAX);
	else if (!(t = auth_parse(buf, len, err))) {
		char prefix[256];
		snprintf(prefix, sizeof prefix, "%s: ", path);
		sf_err_prefix(err, prefix);
	}
	/* The buffer held the secrets: leave nothing of them in freed memory. */
	volatile char *wipe = buf;
	for (size_t i = 0; i < len && i <= AUTH_FILE_MAX; i++)
		wipe[i] = 0;
	free(buf);
	return t;
}

void auth_free(auth_tokens *t)
{
	if (!t)
		return;
	volatile unsigned char *wipe = (volatile unsigned char *)t->tok;
	for (size_t i = 0; i < t->n * sizeof t->tok[0]; i++)
		wipe[i] = 0;
	free(t);
}

size_t auth_count(const auth_tokens *t)
{
	return t ? t->n : 0;
}

/*
 * 1 when the padded buffers a and b hold the same token, else 0, after
 * looking at every byte of both. The differences fit in 9 bits, so
 * diff - 1 has its top bit set exactly when diff is 0.
 */
static unsigned equal_padded(const unsigned char *a, unsigned alen, const unsigned char *b,
			     unsigned blen)
{
	unsigned diff = alen ^ blen;
	for (size_t i = 0; i < AUTH_TOKEN_MAX; i++)
		diff |= (unsigned)(a[i] ^ b[i]);
	return (diff - 1u) >> (sizeof diff * CHAR_BIT - 1);
}

int auth_check(const auth_tokens *t, const char *authorization)
{
	const char *p = authorization;
	if (!p || !t)
		return AUTH_EMISSING;
	while (*p == ' ' || *p == '\t')
		p++;
	static const char scheme[] = "bearer";
	for (size_t i = 0; i < sizeof scheme - 1; i++, p++)
		if ((*p | 0x20) != scheme[i])
			return AUTH_EMISSING;
	if (*p != ' ')
		return AUTH_EMISSING; /* "Bearerx", or the scheme alone */
	while (*p == ' ')
		p++;
	size_t n = 0;
	while (p[n] && !is_blank(p[n]))
		n++;
	for (const char *q = p + n; *q; q++)
		if (!is_blank(*q))
			return AUTH_EINVALID; /* a space inside: no token has one */
	if (n == 0 || n > AUTH_TOKEN_MAX)
		return AUTH_EINVALID; /* says nothing about the configured tokens */
	unsigned char presented[AUTH_TOKEN_MAX] = { 0 };
	memcpy(presented, p, n);
	unsigned match = 0;
	for (size_t i = 0; i < t->n; i++)
		match |= equal_padded(t->tok[i].text, t->tok[i].len, presented, (unsigned)n);
	volatile unsigned char *wipe = presented;
	for (size_t i = 0; i < n; i++)
		wipe[i] = 0;
	return match ? AUTH_OK : AUTH_EINVALID;
}
