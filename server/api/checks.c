/*
 * checks.c - POST /v1/{kind}/check: a player's attempt at a level, rated by
 * the kind's check operation (sf_kind.check, core/kinds.h); and POST
 * /v1/{kind}/hint, advice on a position from the kind's hint operation
 * (sf_kind.hint), which runs the same way.
 *
 * Who runs where. The handler (loop thread) finds the kind in the registry
 * and copies the body (already bounded by the HTTP layer's body limit) into
 * a check_job; the worker pool parses it and runs the kind's check, which
 * may run a solver and so never runs on the loop thread; the after-work
 * callback (loop thread) answers. The worker owns the JSON it parses, so no
 * jansson value is shared between threads. Nothing here knows any kind's
 * name or body format: a kind without a check (or hint) operation gets 404.
 * Checks and hints share the limit on operations in flight.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/kinds.h"
#include "service.h"

typedef struct check_job {
	uv_work_t work;
	service *svc;
	http_req *req;
	const sf_kind *kind;
	bool hint;  /* the hint operation, not the check */
	char *body; /* a copy of the request body, NUL-terminated */
	size_t len;
	json_t *result; /* the check's answer, from the worker */
	int bad_json;   /* the body did not parse: jerr says where */
	json_error_t jerr;
	sf_err err;
} check_job;

static void check_work(uv_work_t *w)
{
	check_job *c = w->data;
	json_t *body =
		json_loadb(c->body, c->len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &c->jerr);
	if (!body) {
		c->bad_json = 1;
		return;
	}
	c->result = c->hint ? c->kind->hint(body, &c->err) : c->kind->check(body, &c->err);
	json_decref(body);
}

static void check_after(uv_work_t *w, int status)
{
	(void)status;
	check_job *c = w->data;
	service *svc = c->svc;
	svc->checks_running--;
	const char *h[] = { "Cache-Control", "no-store", NULL };
	if (c->bad_json)
		respond_problem(c->req, 400, "invalid-json", "Malformed JSON", NULL,
				"the body is not valid JSON: %s (line %d, column %d)", c->jerr.text,
				c->jerr.line, c->jerr.column);
	else if (c->result)
		respond_json(c->req, 200, c->result, h); /* consumes the result */
	else if (c->err.code == SF_EINVAL && c->hint)
		respond_problem(c->req, 422, "invalid-hint", "Invalid hint request", NULL, "%s",
				c->err.msg);
	else if (c->err.code == SF_EINVAL)
		respond_problem(c->req, 422, "invalid-check", "Invalid check request", NULL, "%s",
				c->err.msg);
	else
		respond_problem(c->req, 500, "internal", "Internal error", NULL, "%s", c->err.msg);
	free(c->body);
	free(c);
	if (svc->stopping)
		service_stop(svc); /* it waits for checks in flight */
}

/* The check or the hint (loop thread); see kinds_check and kinds_hint. */
static void start_operation(service *svc, http_req *r, const route_match *m, bool hint)
{
	const char *name = route_param(m, "kind");
	const sf_kind *kind = sf_kind_find(name);
	if (!kind || !(hint ? kind->hint : kind->check)) {
		char kinds[128];
		if (kind)
			respond_problem(r, 404, "not-found", "Not found", NULL,
					"kind '%s' has no %s operation", name,
					hint ? "hint" : "check");
		else
			respond_problem(r, 404, "not-found", "Not found", NULL,
					"no level kind '%s' (kinds: %s)", name,
					sf_kind_names(kinds, sizeof kinds));
		return;
	}
	if (svc->stopping) {
		respond_problem(r, 503, "stopping", "Service stopping", NULL,
				"the service is shutting down; retry against its successor");
		return;
	}
	if (svc->checks_running >= 4 * svc->cfg.workers) {
		const char *h[] = { "Retry-After", "2", NULL };
		respond_problem(r, 429, "busy", "Too many checks", h,
				"%d checks and hints are running, the limit; retry the %s later",
				svc->checks_running, hint ? "hint" : "check");
		return;
	}
	size_t len;
	const char *body = http_req_body(r, &len);
	check_job *c = calloc(1, sizeof *c);
	char *copy = malloc(len + 1);
	if (!c || !copy) {
		free(c);
		free(copy);
		respond_problem(r, 500, "internal", "Internal error", NULL, "out of memory");
		return;
	}
	memcpy(copy, body ? body : "", len);
	copy[len] = '\0';
	*c = (check_job){
		.svc = svc, .req = r, .kind = kind, .hint = hint, .body = copy, .len = len
	};
	c->work.data = c;
	if (uv_queue_work(svc->loop, &c->work, check_work, check_after)) {
		free(copy);
		free(c);
		respond_problem(r, 500, "internal", "Internal error", NULL,
				"the worker pool refused");
		return;
	}
	svc->checks_running++;
	/* Not answered yet: http.c suspends the request until check_after answers. */
}

/*
 * POST /v1/{kind}/check (loop thread): 404 for an unknown kind or one
 * without a check operation, 503 while stopping, 429 past 4 checks and
 * hints per worker; otherwise queues the check on the worker pool and
 * answers from check_after (200, 400 invalid-json, 422 invalid-check or
 * 500).
 */
void kinds_check(service *svc, http_req *r, const route_match *m)
{
	start_operation(svc, r, m, false);
}

/*
 * POST /v1/{kind}/hint (loop thread): as kinds_check, with the kind's hint
 * operation; a refused body answers 422 invalid-hint.
 */
void kinds_hint(service *svc, http_req *r, const route_match *m)
{
	start_operation(svc, r, m, true);
}
