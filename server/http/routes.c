/*
 * routes.c - see routes.h.
 *
 * Design. The table is tiny (a dozen routes) and matching is done once per
 * request, so there is no compiled form: every lookup walks each pattern and
 * the path side by side, segment by segment, and never allocates. The path
 * is checked once up front (it starts with '/', every '%' is followed by two
 * hex digits and decodes to neither '/' nor NUL); after that, path segments
 * are decoded on the fly while they are compared with a pattern's literals
 * or copied into a parameter's value, so a segment of any length costs no
 * buffer, and only a parameter's value is bounded (ROUTE_MAX_VALUE - 1).
 *
 * One pass over the table both finds the first route for (method, path) and
 * collects the Allow list from every route whose pattern matches the path
 * under another method; the list is only reported when nothing matched.
 *
 * A malformed pattern (not starting with '/', an unterminated or empty
 * "{}", a '{' inside a name, more than ROUTE_MAX_PARAMS parameters) matches
 * no path at all, so a typo in the table shows up as a 404 in a test rather
 * than as a half-filled route_match in a handler.
 */
#include "routes.h"

#include <stdbool.h>
#include <string.h>

/* ---- the path: validation and on-the-fly decoding ---- */

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The length of the path proper (up to a '?' or the end), or -1 when the
 * path does not start with '/' or holds an escape that routes.h rejects:
 * '%' not followed by two hex digits, "%2F" (an encoded '/', which would
 * let one segment pose as two) or "%00" (which would cut a C string short).
 */
static long path_check(const char *path)
{
	if (!path || path[0] != '/')
		return -1;
	size_t i = 0;
	for (; path[i] && path[i] != '?'; i++) {
		if (path[i] != '%')
			continue;
		int hi = hex_value(path[i + 1]);
		int lo = hi < 0 ? -1 : hex_value(path[i + 2]);
		if (lo < 0)
			return -1;
		int byte = hi * 16 + lo;
		if (byte == '/' || byte == 0)
			return -1;
		i += 2;
	}
	return (long)i;
}

/* One raw path segment [p, end), known to hold only valid escapes. */
typedef struct seg_reader {
	const char *p, *end;
} seg_reader;

/* The next decoded byte of the segment, or -1 at its end. */
static int seg_next(seg_reader *r)
{
	if (r->p >= r->end)
		return -1;
	if (*r->p != '%')
		return (unsigned char)*r->p++;
	int byte = hex_value(r->p[1]) * 16 + hex_value(r->p[2]);
	r->p += 3;
	return byte;
}

/* The decoded length of raw segment [p, end). */
static size_t seg_decoded_len(const char *p, const char *end)
{
	size_t n = 0;
	while (p < end) {
		p += *p == '%' ? 3 : 1;
		n++;
	}
	return n;
}

/* ---- matching one pattern ---- */

/*
 * Matches `pattern` against the path [path, path_end) and fills `m`. Returns
 * false on a mismatch or when the pattern is malformed (see the top of the
 * file); `m` is then left in an unspecified state.
 */
static bool pattern_match(const char *pattern, const char *path, const char *path_end,
			  route_match *m)
{
	m->nparams = 0;
	if (!pattern || pattern[0] != '/')
		return false;
	const char *pat = pattern + 1, *p = path + 1;
	for (;;) {
		const char *pat_end = strchr(pat, '/');
		if (!pat_end)
			pat_end = pat + strlen(pat);
		const char *seg_end = memchr(p, '/', (size_t)(path_end - p));
		if (!seg_end)
			seg_end = path_end;
		seg_reader r = { p, seg_end };

		if (*pat == '{') {
			const char *name = pat + 1;
			const char *close = memchr(name, '}', (size_t)(pat_end - name));
			if (!close || close == name || memchr(name, '{', (size_t)(close - name)))
				return false;
			if (m->nparams == ROUTE_MAX_PARAMS)
				return false;
			const char *suffix = close + 1;
			size_t suffix_len = (size_t)(pat_end - suffix);
			size_t len = seg_decoded_len(p, seg_end);
			if (len <= suffix_len || len - suffix_len > ROUTE_MAX_VALUE - 1)
				return false;
			char *value = m->values[m->nparams];
			for (size_t i = 0; i < len - suffix_len; i++)
				value[i] = (char)seg_next(&r);
			value[len - suffix_len] = '\0';
			for (size_t i = 0; i < suffix_len; i++)
				if (seg_next(&r) != (unsigned char)suffix[i])
					return false;
			m->names[m->nparams++] = name;
		} else {
			for (const char *q = pat; q < pat_end; q++)
				if (seg_next(&r) != (unsigned char)*q)
					return false;
			if (seg_next(&r) != -1)
				return false;
		}

		bool pat_more = *pat_end == '/', path_more = seg_end < path_end;
		if (pat_more != path_more)
			return false;
		if (!pat_more)
			return true;
		pat = pat_end + 1;
		p = seg_end + 1;
	}
}

/* ---- the Allow list ---- */

typedef struct allow_list {
	char *buf;
	size_t cap;
	size_t len;
	bool full; /* an entry did not fit: nothing more is added */
} allow_list;

static bool allow_has(const allow_list *a, const char *method)
{
	size_t n = strlen(method);
	const char *p = a->buf;
	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && memcmp(p, method, n) == 0)
			return true;
		p = comma ? comma + 2 : p + len;
	}
	return false;
}

static void allow_add(allow_list *a, const char *method)
{
	if (!a->buf || a->full || allow_has(a, method))
		return;
	size_t n = strlen(method), sep = a->len ? 2 : 0;
	if (a->len + sep + n + 1 > a->cap) {
		a->full = true;
		return;
	}
	if (sep)
		memcpy(a->buf + a->len, ", ", 2);
	memcpy(a->buf + a->len + sep, method, n + 1);
	a->len += sep + n;
}

/* ---- the interface ---- */

/*
 * See routes.h. Beyond it: `path` may carry a query string, which is
 * ignored from the first '?'; `m`, `status` and `allow` may each be NULL
 * (allow_len 0). A request for HEAD matches a GET route. On a match *status
 * is 200 and `allow` is ""; on no match m->nparams is 0. A path that does
 * not start with '/' or holds a rejected escape is a 404 whatever the
 * table holds. An Allow entry that does not fit in `allow` is dropped, and
 * so is every one after it (64 bytes hold all the standard methods).
 */
const route *route_find(const route *table, size_t n, const char *method, const char *path,
			route_match *m, int *status, char *allow, size_t allow_len)
{
	route_match scratch;
	allow_list allowed = { allow_len ? allow : NULL, allow_len, 0, false };
	bool other_method = false;
	if (allowed.buf)
		allowed.buf[0] = '\0';
	if (m) {
		m->nparams = 0;
		m->arg = NULL;
	}

	long path_len = method ? path_check(path) : -1;
	for (size_t i = 0; path_len >= 0 && table && i < n; i++) {
		const route *r = &table[i];
		if (!r->method || !pattern_match(r->pattern, path, path + path_len, &scratch))
			continue;
		bool same = strcmp(r->method, method) == 0 ||
			    (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0);
		if (same) {
			if (m) {
				*m = scratch;
				m->arg = r->arg;
			}
			if (status)
				*status = 200;
			if (allowed.buf)
				allowed.buf[0] = '\0';
			return r;
		}
		other_method = true;
		allow_add(&allowed, r->method);
		if (strcmp(r->method, "GET") == 0)
			allow_add(&allowed, "HEAD");
	}
	if (status)
		*status = other_method ? 405 : 404;
	return NULL;
}

/*
 * See routes.h. The names in `m` point into the route's pattern and end at
 * the '}' (they are not NUL-terminated), which is why lookups go through
 * this function.
 */
const char *route_param(const route_match *m, const char *name)
{
	if (!m || !name)
		return NULL;
	size_t n = strlen(name);
	for (int i = 0; i < m->nparams && i < ROUTE_MAX_PARAMS; i++) {
		const char *have = m->names[i];
		if (have && strncmp(have, name, n) == 0 && have[n] == '}')
			return m->values[i];
	}
	return NULL;
}
