/*
 * access.c - who may call what: bearer tokens (auth.h) and CORS (cors.h)
 * applied to requests, on the loop thread.
 *
 * Every request passes here twice. Before routing, access_begin() gives it
 * the CORS headers its answer will carry, whichever handler or error path
 * gives that answer (http_req_add_headers), and answers preflights itself:
 * a browser sends those without credentials, and the route table has no
 * OPTIONS routes (openapi.yaml describes the API, not CORS). After routing,
 * access_allowed() asks for a token according to the route's class, which
 * access_build() derived once from the lists beside the route table in
 * service.c: a decision per route, never a match on the path's text.
 *
 * Nothing here logs or echoes a token: the 401's detail names the method
 * and the path only (the request log line has no headers at all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

/* What a browser may send beyond the safelisted headers, and read beyond the safelisted ones. */
static const char allow_headers[] =
	"Authorization, Content-Type, Idempotency-Key, If-None-Match, Last-Event-ID, X-Request-Id";
static const char expose_headers[] = "ETag, Location, Retry-After, WWW-Authenticate, X-Request-Id";
/* Seconds a browser may reuse a preflight's answer (Chromium caps this at 7200). */
static const char max_age[] = "600";

static int listed(const char *const *names, const char *name)
{
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

int access_build(service *svc, sf_err *err)
{
	free(svc->route_access);
	svc->route_access = calloc(svc->nroutes ? svc->nroutes : 1, 1);
	if (!svc->route_access)
		return sf_err_set(err, SF_ENOMEM, "out of memory for the route table");
	for (size_t i = 0; i < svc->nroutes; i++) {
		const route *rt = &svc->routes[i];
		int upload = rt->handler == (void *)resources_upload;
		unsigned char cls = ACCESS_READ;
		if (upload || listed(service_writing_routes, rt->name))
			cls = ACCESS_WRITE;
		else if (listed(service_public_routes, rt->name))
			cls = ACCESS_PUBLIC;
		else if (strcmp(rt->method, "GET") != 0 &&
			 !listed(service_computing_routes, rt->name))
			return sf_err_set(err, SF_EINVAL,
					  "route %s (%s %s) is neither a writing nor a computing "
					  "route (service.c)",
					  rt->name, rt->method, rt->pattern);
		svc->route_access[i] = cls;
	}
	return 0;
}

void access_log(const service *svc)
{
	const service_config *c = &svc->cfg;
	if (c->tokens)
		log_info("serve: access: %zu bearer token%s; writes need one, reads %s",
			 auth_count(c->tokens), auth_count(c->tokens) == 1 ? "" : "s",
			 c->auth_reads ? "too" : "are open");
	if (c->cors) {
		char origins[512];
		cors_describe(c->cors, origins, sizeof origins);
		log_info("serve: CORS: origins %s", origins);
	}
}

int access_begin(service *svc, http_req *r)
{
	const cors_policy *cors = svc->cfg.cors;
	if (!cors)
		return 0;
	const char *allow_origin = cors_allow(cors, http_req_header(r, "Origin"));
	int preflight = !strcmp(http_req_method(r), "OPTIONS");
	/* An answer that depends on Origin says so to caches, also when it
	 * carries no CORS header (another origin, or none). */
	const char *h[8] = { NULL };
	size_t n = 0;
	if (!cors_any(cors)) {
		h[n++] = "Vary";
		h[n++] = "Origin";
	}
	if (allow_origin) {
		h[n++] = "Access-Control-Allow-Origin";
		h[n++] = allow_origin;
		if (!preflight) {
			h[n++] = "Access-Control-Expose-Headers";
			h[n++] = expose_headers;
		}
	}
	http_req_add_headers(r, h); /* fits: at most 3 of HTTP_REQ_EXTRA pairs */
	if (!preflight)
		return 0;

	int status = 0;
	char allow[64];
	route_find(svc->routes, svc->nroutes, "OPTIONS", http_req_path(r), NULL, &status, allow,
		   sizeof allow);
	if (status != 405)
		return 0; /* no such path: routing answers 404, with the headers above */
	http_req_set_user(r, (void *)"preflight");
	if (!allow_origin) {
		const char *plain[] = { "Allow", allow, NULL };
		http_respond(r, 204, NULL, "", 0, plain);
		return 1;
	}
	const char *ph[] = { "Allow",
			     allow,
			     "Access-Control-Allow-Methods",
			     allow,
			     "Access-Control-Allow-Headers",
			     allow_headers,
			     "Access-Control-Max-Age",
			     max_age,
			     NULL };
	http_respond(r, 204, NULL, "", 0, ph);
	return 1;
}

int access_allowed(service *svc, http_req *r, const route *rt)
{
	const auth_tokens *tokens = svc->cfg.tokens;
	if (!tokens || !svc->route_access)
		return 1;
	int cls = svc->route_access[rt - svc->routes];
	if (cls == ACCESS_PUBLIC || (cls == ACCESS_READ && !svc->cfg.auth_reads))
		return 1;
	int rc = auth_check(tokens, http_req_header(r, "Authorization"));
	if (rc == AUTH_OK)
		return 1;
	/* RFC 6750: error="invalid_token" only when a token was presented. */
	const char *h[] = { "WWW-Authenticate",
			    rc == AUTH_EINVALID
				    ? "Bearer realm=\"starforge\", error=\"invalid_token\""
				    : "Bearer realm=\"starforge\"",
			    "Cache-Control", "no-store", NULL };
	if (rc == AUTH_EINVALID)
		respond_problem(r, 401, "unauthorized", "Unauthorized", h,
				"the bearer token is not valid for %s %s", http_req_method(r),
				http_req_path(r));
	else
		respond_problem(r, 401, "unauthorized", "Unauthorized", h,
				"%s %s needs a bearer token (Authorization: Bearer <token>)",
				http_req_method(r), http_req_path(r));
	return 0;
}
