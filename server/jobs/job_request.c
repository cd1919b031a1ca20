/*
 * job_request.c - see job_request.h.
 *
 * The checks run in the order the handler always answered them: the JSON
 * itself, an object, no unknown field, kind a string, params an object,
 * seed in range, a registered kind, then the kind's own params. The first
 * failure is the answer, with the same status, type and detail as before
 * this was factored out of jobs_submit().
 */
#include "job_request.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Fills `p` and returns -1: one failure, as the handler answers it. */
static int fail(job_request_problem *p, int status, const char *slug, const char *title,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(job_request_problem *p, int status, const char *slug, const char *title,
		const char *fmt, ...)
{
	p->status = status;
	p->slug = slug;
	p->title = title;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof p->detail, fmt, ap);
	va_end(ap);
	return -1;
}

int jobs_parse_request(const char *body, size_t len, job_request *out, job_request_problem *problem)
{
	char kinds[128]; /* for messages: the kinds there are */
	memset(out, 0, sizeof *out);
	json_error_t jerr;
	json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!req)
		return fail(problem, 400, "invalid-json", "Malformed JSON",
			    "the body is not valid JSON: %s (line %d, column %d)", jerr.text,
			    jerr.line, jerr.column);
	const char *key;
	json_t *v;
	if (!json_is_object(req)) {
		fail(problem, 400, "invalid-request", "Invalid job request",
		     "the body must be a JSON object with kind, params and seed");
		goto fail;
	}
	json_object_foreach(req, key, v)
	{
		if (strcmp(key, "kind") && strcmp(key, "params") && strcmp(key, "seed")) {
			fail(problem, 400, "invalid-request", "Invalid job request",
			     "unknown field '%s' (allowed: kind, params, seed)", key);
			goto fail;
		}
	}
	json_t *kj = json_object_get(req, "kind"), *pj = json_object_get(req, "params");
	json_t *sj = json_object_get(req, "seed");
	if (!json_is_string(kj)) {
		fail(problem, 400, "invalid-request", "Invalid job request",
		     "kind must be a string naming a level kind (allowed: %s)",
		     sf_kind_names(kinds, sizeof kinds));
		goto fail;
	}
	if (pj && !json_is_object(pj)) {
		fail(problem, 400, "invalid-request", "Invalid job request",
		     "params must be a JSON object");
		goto fail;
	}
	if (sj && (!json_is_integer(sj) || json_integer_value(sj) < 0 ||
		   (uint64_t)json_integer_value(sj) > JOB_SEED_MAX)) {
		fail(problem, 400, "invalid-request", "Invalid job request",
		     "seed must be an integer in 0..%llu", (unsigned long long)JOB_SEED_MAX);
		goto fail;
	}
	const sf_kind *kind = sf_kind_find(json_string_value(kj));
	if (!kind) {
		fail(problem, 422, "unknown-kind", "Unknown level kind",
		     "kind '%s' is unknown (allowed: %s)", json_string_value(kj),
		     sf_kind_names(kinds, sizeof kinds));
		goto fail;
	}
	sf_err err = { 0 };
	void *params = kind->params_parse(pj, &err);
	if (!params) {
		fail(problem, 422, "invalid-params", "Invalid parameters", "%s", err.msg);
		goto fail;
	}
	*out = (job_request){
		.doc = req, .kind = kind, .params_js = pj, .seed_js = sj, .params = params
	};
	return 0;
fail:
	json_decref(req);
	return -1;
}

void job_request_clear(job_request *jr)
{
	if (jr->params)
		jr->kind->params_free(jr->params);
	json_decref(jr->doc);
	memset(jr, 0, sizeof *jr);
}
