/*
 * routes.h - the route table: method + path pattern -> handler. 404 and 405
 * (with the Allow list) come from the table itself, so no handler ever
 * decides whether a route exists.
 *
 * A pattern is a sequence of '/'-separated segments; a segment is a literal
 * ("v1", "jobs") or a parameter "{name}" that matches one non-empty segment.
 * A parameter may be followed by a literal suffix within its segment
 * ("{id}.svg" matches "abc.svg" with id = "abc"). Matching is exact on the
 * whole path (no trailing slash tolerance; the query string is not part of
 * the path). Segment values are percent-decoded; a bad escape (or an
 * encoded '/' or NUL) makes the path match nothing.
 */
#ifndef SF_ROUTES_H
#define SF_ROUTES_H

#include <stddef.h>

#define ROUTE_MAX_PARAMS 4
#define ROUTE_MAX_VALUE 256

typedef struct route_match {
	int nparams;
	const char *names[ROUTE_MAX_PARAMS]; /* point into the pattern's storage */
	char values[ROUTE_MAX_PARAMS][ROUTE_MAX_VALUE];
	const void *arg; /* the matched route's arg */
} route_match;

typedef struct route {
	const char *method;  /* "GET", "POST", "DELETE", ... */
	const char *pattern; /* "/v1/jobs/{id}" */
	const char *name;    /* stable label for metrics and logs: "jobs.get" */
	void *handler;       /* opaque to the table: the caller casts it */
	const void *arg;     /* handed to the handler in route_match.arg; may be NULL */
} route;

/*
 * Finds the route for `method` and `path` in table[0..n-1], first match
 * wins. On a match returns it and fills `m`. Otherwise returns NULL and sets
 * *status: 405 when some pattern matches the path under another method (and
 * writes those methods to `allow`, comma-separated in table order without
 * duplicates, e.g. "GET, DELETE"; HEAD is implied by GET and listed after
 * it), else 404. `allow` has `allow_len` bytes and is always NUL-terminated.
 */
const route *route_find(const route *table, size_t n, const char *method, const char *path,
			route_match *m, int *status, char *allow, size_t allow_len);

/* The value of parameter `name` in `m`, or NULL. */
const char *route_param(const route_match *m, const char *name);

#endif
