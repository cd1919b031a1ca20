/*
 * cors.h - which browser origins may read the API's answers (CORS): the
 * parsed --cors-origin list and the match of a request's Origin header.
 * Pure functions, like auth.h; server/api/access.c puts the headers on
 * responses and answers preflight requests.
 *
 * An origin is written as browsers send it: "scheme://host" or
 * "scheme://host:port", no path, no trailing slash ("https://play.example",
 * "http://127.0.0.1:5173"); or "*", any origin. Scheme and host are compared
 * without regard to case (browsers send them in lower case; the list is
 * kept in lower case). "null", the origin of sandboxed documents and
 * file: pages, is refused: allowing it would let any such page in.
 */
#ifndef SF_CORS_H
#define SF_CORS_H

#include "../../core/err.h"

/* Origins one list may hold, and the longest origin. */
#define CORS_ORIGINS_MAX 64
#define CORS_ORIGIN_MAX 255

typedef struct cors_policy cors_policy;

/*
 * Parses a comma-separated list of origins (blanks around each ignored,
 * empty items skipped). Returns the policy, owned by the caller
 * (cors_free), or NULL with `err` set: SF_EINVAL naming the origin that is
 * not one, or saying the list is empty or too long; SF_ENOMEM.
 */
cors_policy *cors_parse(const char *list, sf_err *err);

/*
 * Adds the origins of another comma-separated list to `p` (a repeated
 * --cors-origin). Returns 0, or a negative code with `err` set as for
 * cors_parse; `p` is unchanged on failure.
 */
int cors_add(cors_policy *p, const char *list, sf_err *err);

/* Frees the policy; cors_free(NULL) is a no-op. */
void cors_free(cors_policy *p);

/* True when the list holds "*": every origin may read, and the answer does not vary by Origin. */
int cors_any(const cors_policy *p);

/*
 * The value for Access-Control-Allow-Origin when a request carries Origin
 * `origin` (NULL: none): "*" when the list holds "*", the listed origin
 * when `origin` is on the list, else NULL. The string belongs to `p`.
 */
const char *cors_allow(const cors_policy *p, const char *origin);

/* Writes the list, comma-separated, to out[0..len-1] (always NUL-terminated; cut short to fit). */
void cors_describe(const cors_policy *p, char *out, size_t len);

#endif
