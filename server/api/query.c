/*
 * query.c - the closed query of every route that takes one.
 *
 * A query parameter the service does not know is an error, never ignored:
 * a typo (?knd=lattice, ?stat=running) that is dropped silently gives the
 * client a wrong answer that looks right (every job, the paper's stars).
 * So each handler that reads the query first names the parameters it
 * takes, and service_query_check() answers 400 invalid-query for the first
 * argument that is not one of them, naming it and listing the allowed
 * ones. An argument without a name ("?=x", "?&") and a parameter given
 * twice (?kind=a&kind=b, which one would win is arbitrary) are refused the
 * same way. The check runs before any argument is read, so the first
 * problem reported is always about the names; values are each handler's.
 */
#include <stdio.h>
#include <string.h>

#include "service.h"

/* Distinct names one request may give: more than any route takes. */
#define QUERY_MAX_ARGS 64

typedef struct query_scan {
	const char *const *allowed;
	int (*accept)(void *arg, const char *name);
	void *arg;
	const char *seen[QUERY_MAX_ARGS];
	int nseen;
	/* The first problem: 'e' empty name, 'u' unknown, 'r' repeated (or more
	 * distinct names than any route takes, which only repeats can give). */
	char problem;
	const char *name;
} query_scan;

static int query_known(const query_scan *q, const char *name)
{
	for (const char *const *a = q->allowed; a && *a; a++)
		if (!strcmp(*a, name))
			return 1;
	return q->accept && q->accept(q->arg, name);
}

static void query_visit(void *arg, const char *key, const char *value)
{
	(void)value;
	query_scan *q = arg;
	if (q->problem)
		return;
	q->name = key;
	if (!*key) {
		q->problem = 'e';
		return;
	}
	if (!query_known(q, key)) {
		q->problem = 'u';
		return;
	}
	for (int i = 0; i < q->nseen; i++)
		if (!strcmp(q->seen[i], key)) {
			q->problem = 'r';
			return;
		}
	if (q->nseen == QUERY_MAX_ARGS) {
		q->problem = 'r';
		return;
	}
	q->seen[q->nseen++] = key;
}

/*
 * See service.h. The detail quotes at most 64 bytes of the offending name,
 * so that the allowed list always fits in the problem's detail.
 */
int service_query_check(http_req *r, const char *const *allowed,
			int (*accept)(void *arg, const char *name), void *arg,
			const char *allowed_text)
{
	query_scan q = { .allowed = allowed, .accept = accept, .arg = arg };
	http_req_each_query(r, query_visit, &q);
	if (!q.problem)
		return 0;
	char names[256];
	if (!allowed_text) {
		size_t at = 0;
		names[0] = '\0';
		for (const char *const *a = allowed; a && *a && at < sizeof names; a++) {
			int n = snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", *a);
			if (n < 0)
				break;
			at += (size_t)n;
		}
		allowed_text = at ? names : "none: this route takes no query parameters";
	}
	if (q.problem == 'e')
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"a query parameter has no name (allowed: %s)", allowed_text);
	else if (q.problem == 'u')
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"query parameter '%.64s' is unknown (allowed: %s)", q.name,
				allowed_text);
	else
		respond_problem(r, 400, "invalid-query", "Invalid query", NULL,
				"query parameter '%.64s' is given more than once (allowed, each "
				"at most once: %s)",
				q.name, allowed_text);
	return -1;
}
