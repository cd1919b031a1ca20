/*
 * cors.c - the allowed origins; see cors.h. A list of at most
 * CORS_ORIGINS_MAX short strings, searched linearly: it is walked once per
 * request that carries an Origin header, and a handful of entries is the
 * usual size.
 */
#include "cors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cors_policy {
	int any; /* "*" was listed */
	size_t n;
	char origin[CORS_ORIGINS_MAX][CORS_ORIGIN_MAX + 1]; /* lower case */
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int is_alpha(char c)
{
	c = lower(c);
	return c >= 'a' && c <= 'z';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* True when o[0..n-1] is "scheme://host[:port]" (cors.h). */
static int origin_valid(const char *o, size_t n)
{
	size_t i = 0;
	if (!n || !is_alpha(o[0]))
		return 0;
	while (i < n &&
	       (is_alpha(o[i]) || is_digit(o[i]) || o[i] == '+' || o[i] == '-' || o[i] == '.'))
		i++;
	if (n - i < 3 || memcmp(o + i, "://", 3) != 0)
		return 0;
	i += 3;
	size_t host = i;
	if (i < n && o[i] == '[') { /* an IPv6 literal */
		i++;
		while (i < n && (is_digit(o[i]) || (lower(o[i]) >= 'a' && lower(o[i]) <= 'f') ||
				 o[i] == ':' || o[i] == '.'))
			i++;
		if (i == host + 1 || i >= n || o[i] != ']')
			return 0;
		i++;
	} else {
		while (i < n && (is_alpha(o[i]) || is_digit(o[i]) || o[i] == '.' || o[i] == '-' ||
				 o[i] == '_' || o[i] == '~'))
			i++;
		if (i == host)
			return 0;
	}
	if (i < n && o[i] == ':') {
		size_t digits = 0;
		long port = 0;
		for (i++; i < n && is_digit(o[i]) && digits < 6; i++, digits++)
			port = port * 10 + (o[i] - '0');
		if (!digits || port > 65535)
			return 0;
	}
	return i == n;
}

int cors_add(cors_policy *p, const char *list, sf_err *err)
{
	cors_policy next = *p; /* p is unchanged on failure */
	const char *s = list ? list : "";
	while (*s) {
		const char *comma = strchr(s, ',');
		const char *end = comma ? comma : s + strlen(s);
		const char *a = s, *b = end;
		s = comma ? comma + 1 : end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		size_t n = (size_t)(b - a);
		if (!n)
			continue;
		if (n == 1 && *a == '*') {
			next.any = 1;
			continue;
		}
		if (n > CORS_ORIGIN_MAX)
			return sf_err_set(err, SF_EINVAL, "an origin is over %d characters",
					  CORS_ORIGIN_MAX);
		if (n == 4 && !strncmp(a, "null", 4))
			return sf_err_set(err, SF_EINVAL,
					  "origin 'null' is refused: it is the origin of every "
					  "sandboxed page and file: document");
		if (!origin_valid(a, n))
			return sf_err_set(err, SF_EINVAL,
					  "'%.*s' is not an origin (allowed: scheme://host or "
					  "scheme://host:port without a path, or *)",
					  (int)n, a);
		char low[CORS_ORIGIN_MAX + 1];
		for (size_t i = 0; i < n; i++)
			low[i] = lower(a[i]);
		low[n] = '\0';
		int seen = 0;
		for (size_t i = 0; i < next.n && !seen; i++)
			seen = !strcmp(next.origin[i], low);
		if (seen)
			continue;
		if (next.n == CORS_ORIGINS_MAX)
			return sf_err_set(err, SF_EINVAL, "more than %d origins", CORS_ORIGINS_MAX);
		memcpy(next.origin[next.n++], low, n + 1);
	}
	*p = next;
	return 0;
}

cors_policy *cors_parse(const char *list, sf_err *err)
{
	cors_policy *p = calloc(1, sizeof *p);
	if (!p) {
		sf_err_set(err, SF_ENOMEM, "out of memory for the origins");
		return NULL;
	}
	if (cors_add(p, list, err)) {
		free(p);
		return NULL;
	}
	if (!p->any && !p->n) {
		sf_err_set(err, SF_EINVAL, "the list of origins is empty");
		free(p);
		return NULL;
	}
	return p;
}

void cors_free(cors_policy *p)
{
	free(p);
}

int cors_any(const cors_policy *p)
{
	return p && p->any;
}

/* Compares without regard to ASCII case. */
static int same_origin(const char *listed, const char *origin)
{
	size_t i = 0;
	for (; listed[i] && origin[i]; i++)
		if (listed[i] != lower(origin[i]))
			return 0;
	return listed[i] == origin[i];
}

const char *cors_allow(const cors_policy *p, const char *origin)
{
	if (!p)
		return NULL;
	if (p->any)
		return "*";
	if (!origin)
		return NULL;
	for (size_t i = 0; i < p->n; i++)
		if (same_origin(p->origin[i], origin))
			return p->origin[i];
	return NULL;
}

void cors_describe(const cors_policy *p, char *out, size_t len)
{
	if (!len)
		return;
	out[0] = '\0';
	size_t used = 0;
	for (size_t i = 0; p && i < p->n + (size_t)p->any; i++) {
		const char *o = i < p->n ? p->origin[i] : "*";
		int w = snprintf(out + used, len - used, "%s%s", used ? "," : "", o);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}
