/*
 * fuzz_routes.c - HTTP routing of paths and query strings: route_find()
 * (server/http/routes.h) over the service's real route table
 * (service_routes_build) and the query decoding of http_query_decode()
 * (server/http/http.h).
 *
 * The input is a request line without the version: "METHOD URL", or just
 * a URL (then GET). The URL's path is routed as the service routes it;
 * its query string is split into arguments the way libmicrohttpd splits
 * it (at '&', then at the first '=') and each key and value decoded.
 * Checked promises: 200 exactly when a route is returned, 405 only with an
 * Allow list, every parameter of the matched pattern present, shorter than
 * ROUTE_MAX_VALUE and free of '/'; the path rebuilt from the parameters
 * (each byte percent-encoded) routes to a route of the same method, with the
 * same values when it is the same route; a decoded query text is no longer
 * than its raw form and holds no NUL.
 */
#include "../../server/http/http.h"
#include "../../server/http/routes.h"
#include "../../server/api/service.h"
#include "fuzz.h"

/* The service's route table, built on first use and kept (reachable). */
static const service *table(void)
{
	static service svc;
	static int built;
	if (!built) {
		sf_err err = { 0 };
		FUZZ_CHECK(service_routes_build(&svc, &err) == 0);
		built = 1;
	}
	return &svc;
}

/* Decodes one raw query key or value and checks the result. */
static void decode(const char *raw, size_t n)
{
	char *text = malloc(n + 1), *out = malloc(n + 1);
	if (text && out) {
		memcpy(text, raw, n);
		text[n] = '\0';
		size_t len = http_query_decode(text, out);
		FUZZ_CHECK(len <= n && strlen(out) == len);
		if (!strpbrk(text, "%+"))
			FUZZ_CHECK(!strcmp(text, out));
	}
	free(text);
	free(out);
}

/* Splits the query string q (up to its end or a '#') as libmicrohttpd does. */
static void query(const char *q)
{
	size_t end = strcspn(q, "#");
	for (size_t at = 0; at <= end;) {
		size_t n = strcspn(q + at, "&");
		if (at + n > end)
			n = end - at;
		const char *eq = memchr(q + at, '=', n);
		size_t klen = eq ? (size_t)(eq - (q + at)) : n;
		decode(q + at, klen);
		if (eq)
			decode(eq + 1, n - klen - 1);
		at += n + 1;
	}
}

/* Rebuilds the path of route `r` from the values in `m`, every value byte escaped. */
static char *rebuild(const route *r, const route_match *m)
{
	size_t cap = strlen(r->pattern) + 3 * ROUTE_MAX_PARAMS * ROUTE_MAX_VALUE + 1, at = 0;
	char *path = malloc(cap);
	if (!path)
		return NULL;
	int k = 0;
	for (const char *p = r->pattern; *p;) {
		if (*p != '{') {
			path[at++] = *p++;
			continue;
		}
		FUZZ_CHECK(k < m->nparams);
		for (const char *v = m->values[k++]; *v; v++)
			at += (size_t)snprintf(path + at, cap - at, "%%%02X", (unsigned char)*v);
		p = strchr(p, '}') + 1;
	}
	path[at] = '\0';
	return path;
}

static void check_match(const route *tbl, size_t n, const char *method, const route *r,
			const route_match *m)
{
	int want = 0;
	for (const char *p = r->pattern; (p = strchr(p, '{')); p++)
		want++;
	FUZZ_CHECK(m->nparams == want);
	for (int i = 0; i < m->nparams; i++) {
		size_t len = strlen(m->values[i]);
		FUZZ_CHECK(len > 0 && len < ROUTE_MAX_VALUE && !strchr(m->values[i], '/'));
	}
	for (const char *p = r->pattern; (p = strchr(p, '{')); p++) {
		char name[64];
		size_t len = strcspn(p + 1, "}");
		FUZZ_CHECK(len < sizeof name);
		memcpy(name, p + 1, len);
		name[len] = '\0';
		FUZZ_CHECK(route_param(m, name));
	}
	char *path = rebuild(r, m);
	if (!path)
		return;
	route_match again;
	int status = 0;
	const route *r2 = route_find(tbl, n, method, path, &again, &status, NULL, 0);
	FUZZ_CHECK(r2 && status == 200);
	if (r2 == r) {
		FUZZ_CHECK(again.nparams == m->nparams);
		for (int i = 0; i < m->nparams; i++)
			FUZZ_CHECK(!strcmp(again.values[i], m->values[i]));
	}
	free(path);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size);
	if (!line)
		return 0;
	const char *method = "GET", *url = line;
	char *space = strchr(line, ' ');
	if (space) {
		*space = '\0';
		method = line;
		url = space + 1;
	}
	const service *svc = table();
	route_match m;
	int status = 0;
	char allow[128];
	const route *r = route_find(svc->routes, svc->nroutes, method, url, &m, &status, allow,
				    sizeof allow);
	FUZZ_CHECK((r != NULL) == (status == 200));
	FUZZ_CHECK(status == 200 || status == 404 || status == 405);
	FUZZ_CHECK((status == 405) == (allow[0] != '\0'));
	if (r)
		check_match(svc->routes, svc->nroutes, method, r, &m);
	const char *q = strchr(url, '?');
	if (q)
		query(q + 1);
	free(line);
	return 0;
}
