/*
 * auth.h - bearer tokens: the token file and the check of an Authorization
 * header. Pure functions (no HTTP, no service state), so that the whole
 * check is testable on its own (tests/test_auth.c); server/api/access.c applies
 * it to requests.
 *
 * The token file holds one token per line. Blank lines and lines whose first
 * non-blank character is '#' are ignored; blanks (spaces, tabs, a CR before
 * the newline) around a token are trimmed. A token is AUTH_TOKEN_MIN ..
 * AUTH_TOKEN_MAX characters of printable ASCII other than the space (0x21 ..
 * 0x7E), the token68 alphabet of RFC 6750 and then some. A file with no
 * token at all is an error: an empty file would otherwise look like
 * protection while refusing every client.
 *
 * Comparing a presented token with the configured ones takes the same time
 * whatever the tokens hold: every configured token is compared, over
 * AUTH_TOKEN_MAX bytes each, with no early exit on the first differing byte
 * or on a match, so the answer's timing tells an attacker nothing about how
 * much of a guess was right. (The time does depend on how many tokens are
 * configured, which is no secret worth keeping.)
 *
 * No message this module writes contains a token or any part of one.
 */
#ifndef SF_AUTH_H
#define SF_AUTH_H

#include <stddef.h>

#include "../../core/err.h"

/* 16 characters of a random alphabet are already out of guessing range;
 * 256 bounds the work of a comparison and fits any generated token. */
#define AUTH_TOKEN_MIN 16
#define AUTH_TOKEN_MAX 256
/* Tokens one file may hold: every request compares against all of them. */
#define AUTH_TOKENS_MAX 1024
/* The largest token file read: 1024 tokens of 256 bytes, with room for comments. */
#define AUTH_FILE_MAX (1 << 20)

typedef struct auth_tokens auth_tokens;

/* What auth_check() decides about an Authorization header. */
enum {
	AUTH_OK = 0,
	AUTH_EMISSING = -1, /* no header, or another scheme than Bearer */
	AUTH_EINVALID = -2, /* a Bearer token that is not one of the configured ones */
};

/*
 * Parses the text of a token file, text[0..len-1] (NUL bytes in it are
 * invalid characters). Returns the set, owned by the caller (auth_free), or
 * NULL with `err` set: SF_EINVAL with a message naming the line and what is
 * wrong with it ("line 3: a token is 8 characters (allowed: 16..256)"),
 * never its text; SF_ENOMEM.
 */
auth_tokens *auth_parse(const char *text, size_t len, sf_err *err);

/*
 * Reads and parses the token file at `path`. Returns the set (auth_free) or
 * NULL with `err` set, its message starting with the path: SF_EINVAL for a
 * file that cannot be read, is over AUTH_FILE_MAX bytes or does not parse;
 * SF_ENOMEM.
 */
auth_tokens *auth_load(const char *path, sf_err *err);

/* Frees the set; auth_free(NULL) is a no-op. */
void auth_free(auth_tokens *t);

/* How many tokens the set holds (at least one). */
size_t auth_count(const auth_tokens *t);

/*
 * Checks the value of an Authorization header (NULL when the request has
 * none): AUTH_OK when it is "Bearer <token>" (the scheme in any case, one or
 * more spaces, blanks after the token ignored) with one of the set's
 * tokens; AUTH_EMISSING when it is absent or not a Bearer credential;
 * AUTH_EINVALID otherwise. Constant-time in the sense of the top of this
 * file.
 */
int auth_check(const auth_tokens *t, const char *authorization);

#endif
